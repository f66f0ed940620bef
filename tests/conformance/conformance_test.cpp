// Every backend must keep passing the ONNX node-test cases listed in expected_<backend>.txt;
// a regression fails ctest, naming the case and why.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tessera/compiler/backend.h"
#include "tessera/compiler/driver.h"
#ifdef TESSERA_HAVE_TPC_BACKEND
#include "tessera/targets/tpc/backend/backend.h"
#endif

namespace tessera::compiler {
namespace {

std::vector<std::string> expected_cases(const std::string& backend) {
  std::ifstream in(std::string(TESSERA_EXPECTATIONS_DIR) + "/expected_" + backend + ".txt");
  std::vector<std::string> cases;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') cases.push_back(line);
  return cases;
}

class Conformance : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    register_builtin_backends();
#ifdef TESSERA_HAVE_TPC_BACKEND
    tpc::register_tpc_backend();
#endif
  }
};

TEST_P(Conformance, ExpectedNodeTestsPass) {
  const std::string backend = GetParam();
  const auto cases = expected_cases(backend);
  ASSERT_FALSE(cases.empty()) << "no expectations file for backend " << backend;
  ConformanceOptions options;
  options.target = backend;
  int passed = 0;
  for (const auto& name : cases) {
    const std::string dir = std::string(TESSERA_ONNX_NODE_DIR) + "/" + name;
    if (!std::filesystem::exists(dir)) {
      ADD_FAILURE() << name << ": test data not found in " << TESSERA_ONNX_NODE_DIR;
      continue;
    }
    const CaseResult r = run_case(dir, options);
    if (r.status == CaseStatus::pass)
      ++passed;
    else
      ADD_FAILURE() << name << " on " << backend << ": " << case_status_name(r.status) << ": "
                    << r.detail;
  }
  EXPECT_EQ(passed, static_cast<int>(cases.size()));
}

std::vector<std::string> backends_with_expectations() {
  std::vector<std::string> names{"reference"};
#ifdef TESSERA_HAVE_TPC_BACKEND
  names.push_back("gaudi");
#endif
  return names;
}

INSTANTIATE_TEST_SUITE_P(Backends, Conformance, ::testing::ValuesIn(backends_with_expectations()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace tessera::compiler
