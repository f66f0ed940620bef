// Hostile models: what libonnx's shape inference or Tessera would index, divide or allocate by
// is checked first, and refused with a UserError naming the node, the attribute and the range.
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "model_builder.h"
#include "tessera/arch/machine_spec.h"
#include "tessera/compiler/backend.h"
#include "tessera/compiler/driver.h"
#include "tessera/compiler/onnx_import.h"
#include "tessera/core/error.h"
#include "tessera/core/limits.h"

namespace tessera::compiler {
namespace {

using testing::make_model;
using testing::OnnxNode;

template <typename Fn>
std::string user_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no UserError)";
}

void expect_refused(const std::vector<std::byte>& bytes, std::initializer_list<const char*> parts) {
  const std::string msg = user_error_of([&] { import_onnx_bytes(bytes, "h.onnx"); });
  for (const char* p : parts)
    EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' in " << msg;
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_.empty())
      unsetenv(name_);
    else
      setenv(name_, old_.c_str(), 1);
  }

 private:
  const char* name_;
  std::string old_;
};

TEST(Hostile, ConvStridesOfZeroAreRefusedBeforeShapeInference) {
  OnnxNode conv{"Conv", {"x", "w"}, {"y"}, {{"strides", {0, 0}}, {"kernel_shape", {3, 3}}}};
  expect_refused(make_model({{"x", {"1", "1", "7", "5"}}},
                            {{"w", Tensor(DType::f32, Shape::nchw(1, 1, 3, 3))}}, {conv},
                            {{"y", {"1", "1", "5", "3"}}}),
                 {"h.onnx", "Conv_0", "'strides'", ">= 1"});
}

TEST(Hostile, ConvTransposeOfRankTwoIsRefused) {
  expect_refused(make_model({{"x", {"1", "3"}}, {"w", {"1", "2"}}}, {},
                            {{"ConvTranspose", {"x", "w"}, {"y"}}}, {{"y", {"1", "2"}}}, 11),
                 {"ConvTranspose_0", "rank 2", "rank 3 or more"});
}

TEST(Hostile, ConvWeightsMustHaveTheInputRankAndMatchTheGroup) {
  expect_refused(
      make_model({{"x", {"1", "4", "5", "5"}}}, {{"w", Tensor(DType::f32, Shape{3, 3, 3, 6})}},
                 {{"Conv", {"x", "w"}, {"y"}, {{"group", {2}}}, true}},
                 {{"y", {"1", "6", "3", "3"}}}),
      {"Conv_0", "3 channels per group", "group 2", "4 channels"});
}

TEST(Hostile, LayerNormalizationAxisOutOfRange) {
  expect_refused(make_model({{"x", {"2", "3"}}, {"s", {"3"}}}, {},
                            {{"LayerNormalization", {"x", "s"}, {"y"}, {{"axis", {-9}}}, true}},
                            {{"y", {"2", "3"}}}, 17),
                 {"LayerNormalization_0", "'axis' is -9", "-2 to 1"});
}

TEST(Hostile, TransposePermMustBeAPermutationOfTheRank) {
  expect_refused(make_model({{"x", {"2", "3", "4"}}}, {},
                            {{"Transpose", {"x"}, {"y"}, {{"perm", {4, 1}}}}}, {{"y", {"3", "2"}}}),
                 {"Transpose_0", "'perm' (4, 1)", "rank 3"});
}

TEST(Hostile, FlattenAndUnsqueezeAxesAreChecked) {
  expect_refused(
      make_model({{"x", {"2", "3"}}}, {}, {{"Flatten", {"x"}, {"y"}, {{"axis", {99}}}, true}},
                 {{"y", {"2", "3"}}}),
      {"Flatten_0", "'axis' is 99", "-2 to 2"});
  expect_refused(
      make_model({{"x", {"2", "3"}}}, {{"a", Tensor::from_ints(DType::i32, Shape{1}, {99})}},
                 {{"Unsqueeze", {"x", "a"}, {"y"}}}, {{"y", {"1", "2", "3"}}}),
      {"Unsqueeze_0", "axis 99", "-3 to 2"});
}

TEST(Hostile, ReshapeSplitAndKeepdimsFollowOnnxRules) {
  expect_refused(make_model({{"x", {"2", "3", "4"}}},
                            {{"s", Tensor::from_ints(DType::i32, Shape{2}, {-1, -1})}},
                            {{"Reshape", {"x", "s"}, {"y"}}}, {{"y", {"6", "4"}}}),
                 {"Reshape_0", "-1 2 times"});
  expect_refused(
      make_model({{"x", {"6"}}}, {{"s", Tensor::from_ints(DType::i32, Shape{2}, {2, 5})}},
                 {{"Split", {"x", "s"}, {"a", "b"}}}, {{"a", {"2"}}, {"b", {"5"}}}),
      {"Split_0", "sum to 7", "size 6"});
  expect_refused(
      make_model({{"x", {"3", "4"}}}, {}, {{"ReduceMax", {"x"}, {"y"}, {{"keepdims", {11}}}, true}},
                 {{"y", {"1", "4"}}}),
      {"ReduceMax_0", "'keepdims' is 11", "0 or 1"});
}

TEST(Hostile, DeclaredSizesAreCheckedBeforeAllocation) {
  // 2^40 elements declared with no data: refused on the declaration, not by allocating it.
  expect_refused(make_model({{"x", {"1048576", "1048576"}}}, {}, {{"Relu", {"x"}, {"y"}}},
                            {{"y", {"1048576", "1048576"}}}),
                 {"input 'x'", "TESSERA_HOST_MEMORY_LIMIT"});
  ScopedEnv limit("TESSERA_HOST_MEMORY_LIMIT", "1M");
  expect_refused(make_model({{"x", {"1024", "1024"}}}, {}, {{"Relu", {"x"}, {"y"}}},
                            {{"y", {"1024", "1024"}}}),
                 {"input 'x'", "4.0 MiB", "1.0 MiB"});
}

TEST(Hostile, HostMemoryLimitIsParsedStrictly) {
  {
    ScopedEnv limit("TESSERA_HOST_MEMORY_LIMIT", "8G");
    EXPECT_EQ(host_memory_limit(), std::uint64_t{8} << 30);
  }
  for (const char* bad : {"lots", "0", "8X", "-1", "99999999999999999999"}) {
    ScopedEnv limit("TESSERA_HOST_MEMORY_LIMIT", bad);
    const std::string msg = user_error_of([] { host_memory_limit(); });
    EXPECT_NE(msg.find("TESSERA_HOST_MEMORY_LIMIT"), std::string::npos) << bad << ": " << msg;
  }
  EXPECT_GT(host_memory_limit(), 0u);
}

TEST(Hostile, RunTimeShapeOperandIsUnsupported) {
  expect_refused(make_model({{"x", {"2", "3"}}, {"p", {"4"}, 7}}, {}, {{"Pad", {"x", "p"}, {"y"}}},
                            {{"y", {"4", "5"}}}),
                 {"Pad_0", "not supported", "--input p=FILE"});
}

TEST(Hostile, PlanBeyondTheDeviceMemoryIsRefusedBeforeAllocation) {
  register_builtin_backends();
  std::ifstream in(arch::preset_directory() + "/gaudi.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "\"capacity_bytes\": {\"value\": 34359738368";
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "\"capacity_bytes\": {\"value\": 65536");
  const std::string path = ::testing::TempDir() + "small-hbm.json";
  std::ofstream(path) << text;
  LoadOptions options;
  options.target = "reference";
  options.device = path;
  const std::string msg = user_error_of(
      [&] { load_plan(std::string(TESSERA_MODELS_DIR) + "/resnet_small.onnx", options); });
  EXPECT_NE(msg.find("of device memory"), std::string::npos) << msg;
  EXPECT_NE(msg.find("65536 B of 'hbm'"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tessera::compiler
