// The compiler's front door for tools, tests and benchmarks: load an .onnx or .tsm file into a
// Plan for a target, compare outputs, and run ONNX backend node-test cases (conformance).
#pragma once

#include <map>
#include <optional>
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

// The tolerance an output of `dtype` is held to, by the conformance suite and by
// `tessera run --check` alike: |actual - expected| <= atol + rtol * |expected| per element.
// Floats get a few units in the last place of their dtype (f32: rtol 1e-3, atol 1e-5; f16:
// 4e-3, 1e-4; bf16: 1e-2, 1e-3); f64 ONNX's backend test defaults (1e-3, 1e-7); integers and
// bool are exact.
struct Tolerance {
  double rtol = 0.0;
  double atol = 0.0;
};
Tolerance conformance_tolerance(DType dtype);
// The tolerance of a `dtype` output of a backend that computes in `compute`
// (Backend::compute_precision): for float outputs, the looser of the two dtypes' tolerances.
Tolerance conformance_tolerance(DType dtype, DType compute);

// The reductions (sums of products or of elements: Conv, MatMul, Gemm, averaging pools,
// ReduceSum-like ops, Softmax, LayerNormalization) that value `v` of `graph` depends on, along
// the chain of them that weighs most (see output_tolerance): how many, the longest, and the
// chain's weight, the sum over its reductions of min(K, kToleranceSigmas^2) for K terms each.
struct ReductionChain {
  int reductions = 0;
  std::int64_t longest = 0;
  double weight = 0.0;
};
ReductionChain reduction_chain(const Graph& graph, ValueId v);

// How far an element may stray in the worst case for a rounding error of independent terms
// (Hoeffding's inequality: a chance below 2 exp(-s^2 / 2), 3e-8 for s = 6, per element).
inline constexpr double kToleranceSigmas = 6.0;

// The tolerance of a float output computed through `chain` by a backend whose compute
// precision is a float type coarser than the output's (f16 or bf16 Cube arithmetic for an f32
// graph): conformance_tolerance(dtype, compute) plus an absolute part for the rounding of the
// reductions' operands. A reduction of K terms t_i whose operands are rounded to `compute`
// (unit roundoff u: 2^-11 for f16, 2^-8 for bf16; each product carries two roundings, so at
// most 2u |t_i|) is off by at most 2u sum |t_i| <= 2u sqrt(K) sqrt(sum t_i^2) (Cauchy-Schwarz),
// and, the roundings being independent, by more than 2u s sqrt(sum t_i^2) only with the chance
// above (s = kToleranceSigmas): so by 2u min(sqrt(K), s) sqrt(sum t_i^2). The terms are not
// seen at the output; sqrt(sum t_i^2) is taken as the RMS of `expected` (a sum of independent
// terms has the sum of their mean squares), and the reductions of the chain, independent, add
// in quadrature: atol += 2u sqrt(chain.weight) rms(expected). An element far off (a wrong
// weight, index or tile) stays out: the allowance is a few thousandths of the output's RMS for
// f16 over one reduction, and grows only as the square root of the chain. Other outputs and
// backends: conformance_tolerance(dtype, compute) unchanged.
Tolerance output_tolerance(DType dtype, DType compute, const ReductionChain& chain,
                           const Tensor& expected);

// The tolerance a float output of an int8 graph is held to against the f32 (ONNX) result:
// kInt8ToleranceSteps quantisation steps of the output (`step`: the scale of the
// DequantizeLinear that makes it, threshold / 128) on top of the f32 tolerance. A step is the
// resolution int8 gives the output; two cover the rounding of the output (half a step), of the
// inputs and weights carried through one layer, and the saturation of the largest element
// (128 * step saturates to 127). On the ONNX node tests one step is too few for average pooling
// and 2 too few only for a chain of 13 nodes (an expanded LayerNormalization). An output scaled
// by 2 misses it by about 128 steps at its largest element.
inline constexpr double kInt8ToleranceSteps = 2.0;
Tolerance int8_tolerance(double step);

// The ONNX model at `onnx_path` imported and optimised as `compile --int8` does before it
// quantises (every pass but layout choice): the graph whose value names a calibration table
// holds and that compiler::calibrate runs.
Graph load_calibration_graph(const std::string& onnx_path, const ImportOptions& import);

// Output-by-output comparison of a run against a reference run, each output within
// conformance_tolerance of its dtype.
struct OutputComparison {
  std::string name;
  bool shapes_match = true;
  bool ok = true;  // shapes match and every element is within tolerance
  Tolerance tolerance;
  std::int64_t mismatches = 0;  // elements out of tolerance
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;  // over elements with |expected| > 1e-6
  // The element furthest out of tolerance (or, when all are within, with the largest error
  // relative to its tolerance): flat index, shape index (Tessera order), values.
  std::int64_t worst_index = -1;
  std::string worst_position;
  double worst_actual = 0.0;
  double worst_expected = 0.0;
  double cosine_similarity = 1.0;
  std::string basis;  // how the tolerance was derived, when not the dtype's own
  std::string describe() const;  // one line: errors, tolerance, worst element, verdict
};
std::vector<OutputComparison> compare_outputs(const std::map<std::string, Tensor>& actual,
                                              const std::map<std::string, Tensor>& expected,
                                              DType compute = DType::f32);
OutputComparison compare_output(const std::string& name, const Tensor& actual,
                                const Tensor& expected, DType compute = DType::f32);
// The same for the outputs of `graph` (what `tessera run --check` compares): each held to
// output_tolerance through its reduction chain.
std::vector<OutputComparison> compare_outputs(const std::map<std::string, Tensor>& actual,
                                              const std::map<std::string, Tensor>& expected,
                                              DType compute, const Graph& graph);
OutputComparison compare_output(const std::string& name, const Tensor& actual,
                                const Tensor& expected, const Tolerance& tolerance);

// ---- Conformance: ONNX backend node tests (model.onnx + test_data_set_N/*.pb) ----
enum class CaseStatus { pass, fail, unsupported };
std::string_view case_status_name(CaseStatus status);

struct CaseResult {
  std::string name;  // the case directory's name ("test_relu")
  CaseStatus status = CaseStatus::unsupported;
  std::string detail;  // why it failed or is unsupported
  int fallbacks = 0;   // nodes that ran on reference instead of the target's device
  bool int8 = false;   // the backend computes in int8 and the case's graph was quantised
  bool on_device() const { return status == CaseStatus::pass && fallbacks == 0; }
};

// Outputs are compared within conformance_tolerance of their dtype. For a backend that computes
// in int8 (Backend::compute_precision() == i8) every test data set is calibrated on its own
// inputs and the graph quantised with that table (compiler/quantize.h); when that quantises
// nodes the case passes when (a) each output equals, bit for bit, the reference backend's run
// of the same quantised graph (the integer executor, run_int8) and (b) each float output lies
// within int8_tolerance of its threshold of the ONNX expected output. Graphs that stay f32 are
// checked as for any backend.
struct ConformanceOptions {
  std::string target = "reference";
  std::string device;  // empty: the backend's default
};

// Expectations of a backend (tests/conformance/expected_<backend>.txt): one passing case a
// line, "<case> device" when every node ran on the target's device, "<case> fallback" when
// some fell back to reference; '#' starts a comment line. UserError naming the file and line
// when malformed or unreadable.
struct Expectation {
  std::string name;
  bool on_device = false;
};
std::vector<Expectation> read_expectations(const std::string& path);
// The file text for the passing cases of `results` (header comment naming `target`).
std::string format_expectations(const std::string& target, const std::vector<CaseResult>& results);
// Why `result` falls short of `expected` (it fails, or it passes only with a fallback where it
// ran on the device); nullopt when it meets it.
std::optional<std::string> expectation_shortfall(const Expectation& expected,
                                                 const CaseResult& result);

// Case directories under `paths`: a path holding model.onnx is one case; otherwise its
// subdirectories that hold one are, sorted by name.
std::vector<std::string> find_cases(const std::vector<std::string>& paths);
CaseResult run_case(const std::string& case_dir, const ConformanceOptions& options);

}  // namespace tessera::compiler
