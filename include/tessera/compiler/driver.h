// The compiler's front door for tools, tests and benchmarks: load an .onnx or .tsm file into a
// Plan for a target, compare outputs, and run ONNX backend node-test cases (conformance).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessera/compiler/onnx_import.h"
#include "tessera/compiler/plan.h"

namespace tessera::compiler {

struct LoadOptions {
  std::string target;  // backend name; empty: "reference" for ONNX, the file's for .tsm
  std::string device;  // preset; empty: the backend's default (or the file's)
  ImportOptions import;
  PassOptions passes;
};

// An ONNX file is imported and compiled; a .tsm model file is loaded and lowered. Inputs given
// in `import.constant_inputs` that feed shape operands are bound as constants; others are
// ignored here (they are run-time inputs).
Plan load_plan(const std::string& path, const LoadOptions& options);

// Output-by-output comparison of a run against a reference run.
struct OutputComparison {
  std::string name;
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;  // over elements with |expected| > 1e-6
  double cosine_similarity = 1.0;
  bool shapes_match = true;
};
std::vector<OutputComparison> compare_outputs(const std::map<std::string, Tensor>& actual,
                                              const std::map<std::string, Tensor>& expected);

// ---- Conformance: ONNX backend node tests (model.onnx + test_data_set_N/*.pb) ----
enum class CaseStatus { pass, fail, unsupported };
std::string_view case_status_name(CaseStatus status);

struct CaseResult {
  std::string name;  // the case directory's name ("test_relu")
  CaseStatus status = CaseStatus::unsupported;
  std::string detail;  // why it failed or is unsupported
  int fallbacks = 0;
};

struct ConformanceOptions {
  std::string target = "reference";
  std::string device;  // empty: the backend's default
  double rtol = 1e-3;
  double atol = 1e-7;
};

// Case directories under `paths`: a path holding model.onnx is one case; otherwise its
// subdirectories that hold one are, sorted by name.
std::vector<std::string> find_cases(const std::vector<std::string>& paths);
CaseResult run_case(const std::string& case_dir, const ConformanceOptions& options);

}  // namespace tessera::compiler
