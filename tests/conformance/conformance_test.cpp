// Every registered backend must keep passing the ONNX node-test cases of its expectations file
// (expected_<backend>.txt), and a case marked "device" must still run every node on the
// target's device: a regression, or a case that now needs a reference fallback, fails ctest
// naming the case and why.
#include <gtest/gtest.h>

#include <filesystem>

#include "tessera/compiler/backend.h"
#include "tessera/compiler/driver.h"
#include "tessera/targets/registry.h"

namespace tessera::compiler {
namespace {

namespace fs = std::filesystem;

// The expectations file of `backend` in the first directory that has one; empty if none does.
std::string expectations_file(const std::string& backend) {
  const std::string dirs = TESSERA_EXPECTATIONS_DIRS;
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t end = std::min(dirs.find('|', start), dirs.size());
    const fs::path file =
        fs::path(dirs.substr(start, end - start)) / ("expected_" + backend + ".txt");
    if (fs::exists(file)) return file.string();
    start = end + 1;
  }
  return {};
}

class Conformance : public ::testing::TestWithParam<std::string> {};

TEST_P(Conformance, ExpectedNodeTestsPass) {
  const std::string backend = GetParam();
  const std::string file = expectations_file(backend);
  ASSERT_FALSE(file.empty()) << "no expected_" << backend << ".txt in " << TESSERA_EXPECTATIONS_DIRS
                             << "; record one with `tessera conformance " << TESSERA_ONNX_NODE_DIR
                             << " --target " << backend << " --record tests/<t>/expected_"
                             << backend << ".txt`";
  const auto cases = read_expectations(file);
  ASSERT_FALSE(cases.empty()) << file << " lists no cases";
  ConformanceOptions options;
  options.target = backend;
  int met = 0;
  for (const auto& expected : cases) {
    const std::string dir = std::string(TESSERA_ONNX_NODE_DIR) + "/" + expected.name;
    if (!fs::exists(dir)) {
      ADD_FAILURE() << expected.name << ": test data not found in " << TESSERA_ONNX_NODE_DIR;
      continue;
    }
    const CaseResult r = run_case(dir, options);
    if (auto why = expectation_shortfall(expected, r))
      ADD_FAILURE() << expected.name << " on " << backend << ": " << *why;
    else
      ++met;
  }
  EXPECT_EQ(met, static_cast<int>(cases.size()));
}

// Evaluated when gtest registers the tests, after main starts: registration stays explicit.
std::vector<std::string> registered_backend_names() {
  targets::register_all_backends();
  std::vector<std::string> names;
  for (const auto& info : registered_backends()) names.push_back(info.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Backends, Conformance, ::testing::ValuesIn(registered_backend_names()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace tessera::compiler
