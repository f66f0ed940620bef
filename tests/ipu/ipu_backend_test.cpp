// The ipu compiler backend: whole networks built as one Poplar graph through PopLibs run with no
// fallback and match the reference backend within the f32 conformance tolerance; unsupported
// nodes fall back with a reason and their values cross the host link both ways; a network too
// large for the tiles is a UserError naming the tile and the op; the profile summary is there
// after a run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <sstream>

#include "../compiler/model_builder.h"
#include "tessera/compiler/backend.h"
#include "tessera/compiler/driver.h"
#include "tessera/compiler/onnx_import.h"
#include "tessera/core/error.h"
#include "tessera/runtime/device.h"
#include "tessera/targets/ipu/backend/backend.h"

namespace tessera::compiler {
namespace {

RunResult run(const Plan& plan, std::uint64_t seed) {
  auto device = runtime::Device::open(plan.device);
  PlanRunner runner(plan, *device);
  return runner.run(random_inputs(plan.graph, seed));
}

// Every output within the f32 conformance tolerance of the reference backend's.
void expect_matches_reference(const Plan& plan, const Plan& ref, std::uint64_t seed) {
  const RunResult a = run(plan, seed), b = run(ref, seed);
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  for (const auto& c : compare_outputs(a.outputs, b.outputs, DType::f32))
    EXPECT_TRUE(c.ok) << c.describe();
  std::uint64_t device_cycles = 0;
  for (const auto& s : a.steps)
    if (!s.fallback) device_cycles += s.cycles;
  EXPECT_GT(device_cycles, 0u) << "the ipu steps recorded no supersteps";
}

Tensor random_tensor(const Shape& shape, float scale, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(static_cast<std::size_t>(shape.element_count()));
  for (auto& x : v) x = d(gen);
  return Tensor::from_vector(shape, v);
}

class IpuBackend : public ::testing::Test {
 protected:
  void SetUp() override {
    register_builtin_backends("ipu-mk2");
    targets::register_ipu_backend();
  }
  static Plan load(const std::string& model, const std::string& target,
                   const std::string& device = {}) {
    LoadOptions options;
    options.target = target;
    options.device = device;
    return load_plan(std::string(TESSERA_MODELS_DIR) + "/" + model, options);
  }
};

TEST_F(IpuBackend, BundledNetworksRunWithoutFallbacksAndMatchReference) {
  for (const char* model : {"resnet_small.onnx", "mobilenet_small.onnx", "separable_small.onnx"}) {
    SCOPED_TRACE(model);
    const Plan plan = load(model, "ipu");
    EXPECT_EQ(plan.fallback_count(), 0);
    const Plan ref = load(model, "reference", "ipu-mk2");
    expect_matches_reference(plan, ref, 1);
  }
}

TEST_F(IpuBackend, RunsOnMk1Too) {
  const Plan plan = load("resnet_small.onnx", "ipu", "ipu-mk1");
  EXPECT_EQ(plan.fallback_count(), 0);
  expect_matches_reference(plan, load("resnet_small.onnx", "reference", "ipu-mk1"), 2);
}

// A network with every op of the backend's list: conv (grouped, strided, padded, with bias and
// fused clip), pooling, batch norm, add with broadcast, concat, gemm and softmax; and an
// Softmax over the first axis, which popnn does not do: it falls back, so its input leaves the
// IPU and its output comes back for the Add after it.
TEST_F(IpuBackend, MixedNetworkWithAFallbackInTheMiddle) {
  using testing::OnnxNode;
  std::vector<std::pair<std::string, Tensor>> init = {
      {"w0", random_tensor(Shape::nchw(8, 4, 3, 3), 0.4f, 1)},
      {"b0", random_tensor(Shape{8}, 0.1f, 2)},
      {"dw", random_tensor(Shape::nchw(8, 1, 3, 3), 0.4f, 3)},
      {"s", random_tensor(Shape{8}, 1.0f, 4)},
      {"bb", random_tensor(Shape{8}, 0.5f, 5)},
      {"mu", random_tensor(Shape{8}, 0.5f, 6)},
      {"var", Tensor::from_vector(Shape{8}, std::vector<float>(8, 0.7f))},
      {"fc", random_tensor(Shape{6, 16}, 0.3f, 7)},  // [16][6] outermost first
      {"fcb", random_tensor(Shape{6}, 0.1f, 8)},
  };
  std::vector<OnnxNode> nodes = {
      {"Conv", {"x", "w0", "b0"}, {"c0"}, {{"pads", {1, 1, 1, 1}}}},
      {"Relu", {"c0"}, {"r0"}},
      {"Conv", {"r0", "dw"}, {"d1"}, {{"group", {8}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}},
      {"BatchNormalization", {"d1", "s", "bb", "mu", "var"}, {"n1"}},
      {"MaxPool", {"r0"}, {"p0"}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}},
      {"Add", {"n1", "p0"}, {"a1"}},
      {"Concat", {"a1", "p0"}, {"cat"}, {{"axis", {1}}}},
      {"GlobalAveragePool", {"cat"}, {"g"}},
      {"Flatten", {"g"}, {"f"}},
      {"Gemm", {"f", "fc", "fcb"}, {"y0"}, {{"transB", {0}}}},
      {"Softmax", {"y0"}, {"sm0"}, {{"axis", {0}}}},
      {"Add", {"sm0", "y0"}, {"y1"}},
      {"Softmax", {"y1"}, {"y"}, {{"axis", {1}}}},
  };
  for (int i : {2, 6, 9, 10, 12}) nodes[static_cast<std::size_t>(i)].scalar_attrs = true;
  const auto bytes =
      testing::make_model({{"x", {"2", "4", "8", "8"}}}, init, nodes, {{"y", {"2", "6"}}});
  const Plan plan = compile(import_onnx_bytes(bytes, "mixed.onnx"), *create_backend("ipu"));
  ASSERT_EQ(plan.fallback_count(), 1);
  for (std::size_t s = 0; s < plan.info.size(); ++s)
    if (plan.info[s].fallback) {
      EXPECT_EQ(plan.graph.nodes[static_cast<std::size_t>(plan.info[s].node)].op, "Softmax");
      EXPECT_NE(plan.info[s].reason.find("innermost"), std::string::npos) << plan.info[s].reason;
    }
  const Plan ref =
      compile(import_onnx_bytes(bytes, "mixed.onnx"), *create_backend("reference"), {"ipu-mk2"});
  expect_matches_reference(plan, ref, 3);
  expect_matches_reference(plan, ref, 4);  // the same Engine, run again
}

TEST_F(IpuBackend, ProfileSummaryAfterARun) {
  const Plan plan = load("resnet_small.onnx", "ipu");
  const auto backend = create_backend("ipu");
  EXPECT_FALSE(backend->profile_summary(plan).has_value()) << "no run yet, no summary";
  run(plan, 1);
  const auto summary = backend->profile_summary(plan);
  ASSERT_TRUE(summary.has_value());
  for (const char* section : {"Target", "Graph", "Memory Usage", "Execution"})
    EXPECT_NE(summary->find(section), std::string::npos) << section << " missing:\n" << *summary;
  EXPECT_NE(summary->find("1,472"), std::string::npos) << "the mk2's tiles";
  EXPECT_FALSE(create_backend("reference")->profile_summary(plan).has_value());
}

// Results and modeled cycles do not depend on the host threads the Engine spreads tiles over.
TEST_F(IpuBackend, SameResultsAndCyclesOnOneTwoAndEightThreads) {
  std::vector<std::vector<double>> outputs;
  std::vector<std::uint64_t> cycles;
  for (int threads : {1, 2, 8}) {
    setenv("TESSERA_THREADS", std::to_string(threads).c_str(), 1);
    const Plan plan = load("mobilenet_small.onnx", "ipu");  // a fresh Engine for each count
    const RunResult r = run(plan, 5);
    outputs.push_back(r.outputs.begin()->second.to_doubles());
    cycles.push_back(r.profile.total_cycles);
  }
  unsetenv("TESSERA_THREADS");
  for (std::size_t i = 1; i < outputs.size(); ++i) {
    EXPECT_EQ(outputs[i], outputs[0]) << "thread count #" << i;
    EXPECT_EQ(cycles[i], cycles[0]) << "thread count #" << i;
  }
  EXPECT_GT(cycles[0], 0u);
}

// Pools over 512 x 512 planes (1 MiB each, more than a tile's 624 KiB): a global pool reduces
// partials on the tiles that hold the plane, a windowed pool gives each tile a band of output
// rows, so nothing stages a whole plane on one tile (each vertex did, and the Engine refused
// the exchange buffers).
TEST_F(IpuBackend, PoolsOfPlanesLargerThanATileMapOverTheTiles) {
  using testing::OnnxNode;
  std::vector<OnnxNode> nodes = {
      {"GlobalAveragePool", {"x"}, {"gap"}},
      {"GlobalMaxPool", {"x"}, {"gmp"}},
      {"MaxPool",
       {"x"},
       {"mp"},
       {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}},
      {"AveragePool", {"x"}, {"ap"}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}},
  };
  const auto bytes = testing::make_model(
      {{"x", {"1", "2", "512", "512"}}}, {}, nodes,
      {{"gap", {"1", "2", "1", "1"}}, {"gmp", {"1", "2", "1", "1"}},
       {"mp", {"1", "2", "256", "256"}}, {"ap", {"1", "2", "256", "256"}}});
  const Plan plan = compile(import_onnx_bytes(bytes, "pools.onnx"), *create_backend("ipu"));
  EXPECT_EQ(plan.fallback_count(), 0);
  const Plan ref =
      compile(import_onnx_bytes(bytes, "pools.onnx"), *create_backend("reference"), {"ipu-mk2"});
  expect_matches_reference(plan, ref, 6);
}

// A window whose single output row reads more than a tile holds cannot be split further: the
// error gives the bytes and the tile's memory.
TEST_F(IpuBackend, PoolWhoseOneRowDoesNotFitATileIsRefusedWithTheFigures) {
  using testing::OnnxNode;
  std::vector<OnnxNode> nodes = {
      {"MaxPool", {"x"}, {"mp"}, {{"kernel_shape", {3, 3}}, {"strides", {1, 1}}}}};
  const auto bytes = testing::make_model({{"x", {"1", "1", "3", "60000"}}}, {}, nodes,
                                         {{"mp", {"1", "1", "1", "59998"}}});
  const Plan plan = compile(import_onnx_bytes(bytes, "wide.onnx"), *create_backend("ipu"));
  try {
    run(plan, 1);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("MaxPool"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(720000 bytes), more than a tile's 638976 bytes"), std::string::npos)
        << msg;
  }
}

// A 2-tile IPU cannot hold 1 MiB activations: the error names the tile and the op.
TEST_F(IpuBackend, NetworkThatDoesNotFitIsAUserErrorNamingTileAndOp) {
  std::ifstream in(std::string(TESSERA_ARCH_DIR) + "/ipu-mk2.json");
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  const std::string tiles = "\"core_count\": {\"value\": 1472";
  ASSERT_NE(json.find(tiles), std::string::npos);
  json.replace(json.find(tiles), tiles.size(), "\"core_count\": {\"value\": 2");
  json.replace(json.find("\"ipu-mk2\""), 9, "\"ipu-two-tiles\"");
  const auto path = std::filesystem::temp_directory_path() / "tessera_ipu_two_tiles.json";
  std::ofstream(path) << json;
  using testing::OnnxNode;
  std::vector<std::pair<std::string, Tensor>> init = {
      {"w", random_tensor(Shape::nchw(16, 16, 3, 3), 0.2f, 1)}};
  std::vector<OnnxNode> nodes = {{"Conv", {"x", "w"}, {"big_conv"}, {{"pads", {1, 1, 1, 1}}}}};
  const auto bytes = testing::make_model({{"x", {"1", "16", "128", "128"}}}, init, nodes,
                                         {{"big_conv", {"1", "16", "128", "128"}}});
  const Plan plan = compile(import_onnx_bytes(bytes, "big.onnx"), *create_backend("ipu"),
                            {path.string()});
  try {
    run(plan, 1);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("tile "), std::string::npos) << msg;
    EXPECT_NE(msg.find("is node 'Conv_0' (Conv)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("does not fit"), std::string::npos) << msg;
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tessera::compiler
