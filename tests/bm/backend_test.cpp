// The bm compiler backend: every layer kind it lowers onto BMKernel command buffers against the
// integer reference executor (the same int8 graph on the reference backend, bit for bit), the
// two example networks (bit for bit, and cosine >= 0.99 against f32), layer groups saving GDMA
// traffic (counts), tiling of a layer too large for lmem, fallbacks, CPU layers, and the bmodel
// export run through the bmnet runtime.
#include <gtest/gtest.h>

#include <libbmruntime/bmruntime.h>
#include <libbmruntime/bmruntime_bmnet.h>

#include <cmath>
#include <filesystem>

#include "model_builder.h"
#include "tessera/compiler/backend.h"
#include "tessera/compiler/driver.h"
#include "tessera/compiler/onnx_import.h"
#include "tessera/compiler/quantize.h"
#include "tessera/core/error.h"
#include "tessera/runtime/device.h"
#include "tessera/targets/bm/backend/backend.h"

namespace tessera::bm {
namespace {

using compiler::Graph;
using compiler::Plan;
using testing::OnnxNode;

const std::string kModels = TESSERA_MODELS_DIR;

Tensor seeded(Shape shape, unsigned seed, float scale = 0.5f) {
  std::vector<float> v(static_cast<std::size_t>(shape.element_count()));
  std::uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = scale * (static_cast<float>(s >> 8) / static_cast<float>(1 << 24) * 2.0f - 1.0f);
  }
  return Tensor::from_vector(shape, v);
}

Plan compile_bm(const std::vector<std::byte>& bytes, const std::string& name,
                OptLevel opt = OptLevel::layer_group_with_weight) {
  Graph g = compiler::import_onnx_bytes(bytes, name);
  return compiler::compile(std::move(g), *make_bm_backend(opt));
}

struct Outcome {
  std::map<std::string, Tensor> outputs;
  profile::Profile profile;
};

Outcome run(const Plan& plan, const std::map<std::string, Tensor>& inputs) {
  auto device = runtime::Device::open(plan.device);
  compiler::PlanRunner runner(plan, *device);
  auto r = runner.run(inputs);
  return {r.outputs, r.profile};
}

// The bm plan's int8 graph on the reference backend: the integer executor (compiler::run_int8).
std::map<std::string, Tensor> run_integer_reference(const Plan& plan,
                                                    const std::map<std::string, Tensor>& inputs) {
  const Plan ref =
      compiler::lower_graph(plan.graph, *compiler::make_reference_backend("bm1880"), "bm1880");
  return run(ref, inputs).outputs;
}

void expect_bit_exact(const std::map<std::string, Tensor>& a,
                      const std::map<std::string, Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) {
    ASSERT_TRUE(b.count(name)) << name;
    EXPECT_EQ(t.to_doubles(), b.at(name).to_doubles()) << "output " << name;
  }
}

std::uint64_t gdma_bytes(const profile::Profile& p) {
  std::uint64_t b = 0;
  for (const auto& k : p.kernels)
    if (k.name == "bm:cmdbuf") b += k.bytes_read + k.bytes_written;
  return b;
}

double metric_sum(const profile::Profile& p, const std::string& metric) {
  double s = 0;
  for (const auto& k : p.kernels) {
    auto it = k.metrics.find(metric);
    if (it != k.metrics.end()) s += it->second;
  }
  return s;
}

int tpu_layers(const Plan& plan) {
  int n = 0;
  for (const auto& info : plan.info)
    if (!info.fallback &&
        compiler::is_int8_op(plan.graph.nodes[static_cast<std::size_t>(info.node)].op))
      ++n;
  return n;
}

struct LayerCase {
  std::string name;
  std::vector<std::pair<std::string, Tensor>> inits;
  std::vector<OnnxNode> nodes;
  std::vector<std::string> out_dims;
  std::vector<std::string> in_dims = {"1", "8", "12", "12"};
};

Graph import(const std::string& model) {
  return compiler::import_onnx_file(kModels + "/" + model);
}

std::vector<LayerCase> layer_cases() {
  const Tensor w = seeded(Shape::nchw(8, 8, 3, 3), 1, 0.3f);
  const Tensor w2 = seeded(Shape::nchw(8, 8, 3, 3), 2, 0.3f);
  const Tensor b = seeded(Shape{8}, 3, 0.2f);
  const Tensor dw = seeded(Shape::nchw(8, 1, 3, 3), 4, 0.6f);
  const Tensor lo = Tensor::from_vector(Shape{}, {0.0f});
  const Tensor hi = Tensor::from_vector(Shape{}, {0.4f});
  const Tensor fc = seeded(Shape::from_outer_first(std::vector<std::int64_t>{10, 8}), 5, 0.5f);
  const Tensor fb = seeded(Shape{10}, 6, 0.2f);
  const std::vector<std::pair<std::string, std::vector<std::int64_t>>> pad1 = {
      {"pads", {1, 1, 1, 1}}};
  std::vector<LayerCase> cases;
  cases.push_back({"conv_bias_relu",
                   {{"w", w}, {"b", b}},
                   {{"Conv", {"x", "w", "b"}, {"c"}, pad1}, {"Relu", {"c"}, {"y"}}},
                   {"1", "8", "12", "12"}});
  cases.push_back({"conv_stride_dilation_no_bias",
                   {{"w", w}},
                   {{"Conv",
                     {"x", "w"},
                     {"y"},
                     {{"pads", {2, 1, 2, 1}}, {"strides", {2, 2}}, {"dilations", {2, 2}}}}},
                   {"1", "8", "6", "5"}});
  cases.push_back({"depthwise_clip",
                   {{"dw", dw}, {"b", b}, {"lo", lo}, {"hi", hi}},
                   {{"Conv",
                     {"x", "dw", "b"},
                     {"c"},
                     {{"group", {8}}, {"pads", {1, 1, 1, 1}}, {"strides", {2, 2}}},
                     true},
                    {"Clip", {"c", "lo", "hi"}, {"y"}}},
                   {"1", "8", "6", "6"}});
  cases.push_back({"maxpool_padded_after_relu",
                   {{"w", w}, {"b", b}},
                   {{"Conv", {"x", "w", "b"}, {"c"}, pad1},
                    {"Relu", {"c"}, {"r"}},
                    {"MaxPool",
                     {"r"},
                     {"y"},
                     {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}}},
                   {"1", "8", "6", "6"}});
  cases.push_back({"maxpool_signed_avgpool_gap",
                   {{"w", w}, {"b", b}},
                   {{"Conv", {"x", "w", "b"}, {"c"}, pad1},
                    {"MaxPool", {"c"}, {"m"}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}},
                    {"AveragePool",
                     {"m"},
                     {"a"},
                     {{"kernel_shape", {3, 3}},
                      {"strides", {1, 1}},
                      {"pads", {1, 1, 1, 1}},
                      {"count_include_pad", {1}}},
                     true},
                    {"GlobalAveragePool", {"a"}, {"y"}}},
                   {"1", "8", "1", "1"}});
  cases.push_back({"add_relu",
                   {{"w", w}, {"w2", w2}, {"b", b}},
                   {{"Conv", {"x", "w", "b"}, {"c1"}, pad1},
                    {"Conv", {"c1", "w2"}, {"c2"}, pad1},
                    {"Add", {"c1", "c2"}, {"s"}},
                    {"Relu", {"s"}, {"y"}}},
                   {"1", "8", "12", "12"}});
  cases.push_back({"concat_relu",
                   {{"w", w}, {"w2", w2}, {"b", b}},
                   {{"Conv", {"x", "w", "b"}, {"c1"}, pad1},
                    {"Conv", {"x", "w2"}, {"c2"}, pad1},
                    {"Concat", {"c1", "c2"}, {"k"}, {{"axis", {1}}}, true},
                    {"Relu", {"k"}, {"y"}}},
                   {"1", "16", "12", "12"}});
  cases.push_back({"gemm_softmax",
                   {{"w", w}, {"b", b}, {"fc", fc}, {"fb", fb}},
                   {{"Conv", {"x", "w", "b"}, {"c"}, pad1},
                    {"GlobalAveragePool", {"c"}, {"g"}},
                    {"Flatten", {"g"}, {"f"}},
                    {"Gemm", {"f", "fc", "fb"}, {"l"}, {{"transB", {1}}}, true},
                    {"Softmax", {"l"}, {"y"}, {{"axis", {1}}}, true}},
                   {"1", "10"}});
  return cases;
}

std::vector<std::byte> model_of(const LayerCase& c) {
  return testing::make_model({{"x", c.in_dims}}, c.inits, c.nodes, {{"y", c.out_dims}});
}

TEST(BmBackend, EveryLayerKindRunsOnTheTpuAndMatchesTheIntegerExecutorBitForBit) {
  for (const LayerCase& c : layer_cases()) {
    SCOPED_TRACE(c.name);
    const Plan plan = compile_bm(model_of(c), c.name + ".onnx");
    EXPECT_EQ(plan.fallback_count(), 0);
    for (std::size_t s = 0; s < plan.info.size(); ++s)
      EXPECT_FALSE(plan.info[s].fallback) << plan.info[s].kernel << ": " << plan.info[s].reason;
    EXPECT_GT(tpu_layers(plan), 0);
    const auto inputs = compiler::random_inputs(plan.graph, 7);
    const Outcome bm = run(plan, inputs);
    expect_bit_exact(bm.outputs, run_integer_reference(plan, inputs));
    EXPECT_GT(metric_sum(bm.profile, "gdma.commands"), 0);
  }
}

TEST(BmBackend, SoftmaxIsACpuLayerCountedAsSuchInTheProfile) {
  const LayerCase c = layer_cases().back();
  const Plan plan = compile_bm(model_of(c), "gemm_softmax.onnx");
  bool softmax_lowered = false;
  for (const auto& info : plan.info)
    if (info.kernel == "bm:Softmax") softmax_lowered = !info.fallback;
  EXPECT_TRUE(softmax_lowered);
  const Outcome r = run(plan, compiler::random_inputs(plan.graph, 1));
  int cpu = 0;
  for (const auto& k : r.profile.kernels)
    if (k.name == "bm:cpu:Softmax") {
      ++cpu;
      EXPECT_EQ(k.engine, "cpu");
      EXPECT_EQ(k.metrics.at("elements"), 10.0);
      EXPECT_GT(k.cycles, 0u);
    }
  EXPECT_EQ(cpu, 1);
}

TEST(BmBackend, WithoutATableItCalibratesOnRandomInputsAndRecordsIt) {
  const Plan plan = compile_bm(model_of(layer_cases()[0]), "conv.onnx");
  EXPECT_TRUE(compiler::is_int8_graph(plan.graph));
  EXPECT_NE(compiler::calibration_note(plan.graph, "bm").find("random"), std::string::npos);
}

TEST(BmBackend, WithATableItUsesItsThresholds) {
  // The table of `tessera calibrate`: thresholds of the optimised graph's tensors.
  Graph g = import("resnet_small.onnx");
  compiler::PassOptions passes;
  passes.choose_layouts = false;
  compiler::run_passes(g, *make_bm_backend(), passes);
  std::vector<std::map<std::string, Tensor>> samples;
  for (std::uint64_t s = 100; s < 104; ++s) samples.push_back(compiler::random_inputs(g, s));
  const compiler::CalibrationTable table = compiler::calibrate(g, samples);
  compiler::CompileOptions options;
  options.passes.int8_table = std::make_shared<const compiler::CalibrationTable>(table);
  const Plan plan = compiler::compile(import("resnet_small.onnx"), *make_bm_backend(), options);
  EXPECT_EQ(compiler::calibration_note(plan.graph, "bm"), "");
  const Graph& q = plan.graph;
  for (const auto& n : q.nodes)
    if (n.op == "Int8Conv") {
      const auto name = q.value(n.outputs[0]).name;
      const std::string base = name.substr(0, name.size() - 3);  // "<tensor>.i8"
      ASSERT_TRUE(table.thresholds.count(base)) << name;
      EXPECT_FLOAT_EQ(compiler::int8_params(n).threshold_y, table.thresholds.at(base)) << name;
    }
  const auto inputs = compiler::random_inputs(plan.graph, 9);
  expect_bit_exact(run(plan, inputs).outputs, run_integer_reference(plan, inputs));
}

TEST(BmBackend, UnsupportedNodesFallBackWithTheirReason) {
  // A dilated depthwise convolution (bmk1880_tpu_depthwise has no dilation), then a Sigmoid
  // (not fused into an Add) that the quantisation pass leaves in f32.
  const Tensor dw = seeded(Shape::nchw(8, 1, 3, 3), 9, 0.3f);
  const auto bytes =
      testing::make_model({{"x", {"1", "8", "12", "12"}}}, {{"dw", dw}},
                          {{"Conv",
                            {"x", "dw"},
                            {"c"},
                            {{"group", {8}}, {"pads", {2, 2, 2, 2}}, {"dilations", {2, 2}}},
                            true},
                           {"Add", {"c", "c"}, {"s"}},
                           {"Sigmoid", {"s"}, {"y"}}},
                          {{"y", {"1", "8", "12", "12"}}});
  const Plan plan = compile_bm(bytes, "grouped.onnx");
  std::vector<std::string> reasons;
  for (const auto& info : plan.info)
    if (info.fallback) reasons.push_back(info.reason);
  ASSERT_FALSE(reasons.empty());
  bool dilated = false, f32 = false;
  for (const auto& r : reasons) {
    dilated |= r.find("dilated depthwise") != std::string::npos;
    f32 |= r.find("Sigmoid stays f32") != std::string::npos;
  }
  EXPECT_TRUE(dilated) << ::testing::PrintToString(reasons);
  EXPECT_TRUE(f32) << ::testing::PrintToString(reasons);
  // The fallbacks run and the result still equals the int8 graph on the reference.
  const auto inputs = compiler::random_inputs(plan.graph, 3);
  expect_bit_exact(run(plan, inputs).outputs, run_integer_reference(plan, inputs));
}

TEST(BmBackend, ALayerGroupTooLargeForLmemIsTiledWithHalosAndStaysExact) {
  // 4 channels of 200x200: 40,000 B per NPU per map, so input and output of one layer (80 KB)
  // do not fit the 64 KiB of lmem and the group runs in row tiles with overlapping halos.
  const Tensor w1 = seeded(Shape::nchw(4, 4, 3, 3), 11, 0.4f);
  const Tensor w2 = seeded(Shape::nchw(4, 4, 3, 3), 12, 0.4f);
  const auto bytes = testing::make_model(
      {{"x", {"1", "4", "200", "200"}}}, {{"w1", w1}, {"w2", w2}},
      {{"Conv", {"x", "w1"}, {"c1"}, {{"pads", {1, 1, 1, 1}}}},
       {"Relu", {"c1"}, {"r1"}},
       {"Conv", {"r1", "w2"}, {"c2"}, {{"pads", {1, 1, 1, 1}}, {"strides", {2, 2}}}},
       {"Relu", {"c2"}, {"r2"}},
       {"MaxPool",
        {"r2"},
        {"y"},
        {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}}},
      {{"y", {"1", "4", "50", "50"}}});
  const Plan plan = compile_bm(bytes, "big.onnx");
  EXPECT_EQ(plan.fallback_count(), 0);
  const auto inputs = compiler::random_inputs(plan.graph, 5);
  const Outcome r = run(plan, inputs);
  expect_bit_exact(r.outputs, run_integer_reference(plan, inputs));
  // Whole maps would take 2 weight loads, 1 input load and 1 store; tiles take more.
  EXPECT_GT(metric_sum(r.profile, "gdma.commands"), 6.0);
  // The same with weights reloaded per tile and no streams: the same result.
  const Plan serial = compile_bm(bytes, "big.onnx", OptLevel::layer_group);
  const Outcome r2 = run(serial, inputs);
  expect_bit_exact(r.outputs, r2.outputs);
  std::cout << "tiled group: modeled cycles " << r2.profile.total_cycles
            << " (layer_group, serial tiles) vs " << r.profile.total_cycles
            << " (layer_group_with_weight, tiles on two streams)\n";
}

TEST(BmBackend, WeightsTooLargeForLmemAreSplitByOutputChannels) {
  // 512 -> 512 channels, 3x3: 16 x 9 x 512 = 72 KiB of weights per NPU, more than its lmem.
  const Tensor w = seeded(Shape::nchw(512, 512, 3, 3), 13, 0.05f);
  const auto bytes = testing::make_model({{"x", {"1", "512", "4", "4"}}}, {{"w", w}},
                                         {{"Conv", {"x", "w"}, {"y"}, {{"pads", {1, 1, 1, 1}}}}},
                                         {{"y", {"1", "512", "4", "4"}}});
  const Plan plan = compile_bm(bytes, "wide.onnx");
  EXPECT_EQ(plan.fallback_count(), 0);
  const auto inputs = compiler::random_inputs(plan.graph, 6);
  const Outcome r = run(plan, inputs);
  expect_bit_exact(r.outputs, run_integer_reference(plan, inputs));
  // At least two chunks, each loading its weights and the input and storing its channels.
  EXPECT_GE(metric_sum(r.profile, "gdma.commands"), 6.0);
}

TEST(BmBackend, ResnetAndMobilenetMatchTheIntegerExecutorAndReachCosine099AgainstF32) {
  for (const std::string model : {"resnet_small.onnx", "mobilenet_small.onnx"}) {
    SCOPED_TRACE(model);
    const Plan plan = compiler::compile(import(model), *make_bm_backend());
    EXPECT_EQ(plan.fallback_count(), 0);
    const auto inputs = compiler::random_inputs(plan.graph, 21);
    const Outcome bm = run(plan, inputs);
    expect_bit_exact(bm.outputs, run_integer_reference(plan, inputs));
    const Plan f32 = compiler::compile(import(model), *compiler::make_reference_backend("bm1880"));
    const auto want = run(f32, inputs).outputs;
    for (const auto& [name, t] : bm.outputs) {
      const auto a = compiler::compare_int8(name, t, want.at(name));
      EXPECT_GE(a.cosine_similarity, compiler::kInt8MinCosine) << a.describe();
    }
  }
}

TEST(BmBackend, LayerGroupsKeepActivationsInLmemAndSaveGdmaTraffic) {
  for (const std::string model : {"resnet_small.onnx", "mobilenet_small.onnx"}) {
    SCOPED_TRACE(model);
    const Plan none = compiler::compile(import(model), *make_bm_backend(OptLevel::none));
    const Plan grouped = compiler::compile(import(model), *make_bm_backend(OptLevel::layer_group));
    const Plan with_weight =
        compiler::compile(import(model), *make_bm_backend(OptLevel::layer_group_with_weight));
    int members = 0;
    for (const auto& n : grouped.graph.nodes) members += n.has_attr("bm.layer_group") ? 1 : 0;
    EXPECT_GT(members, 1);
    const auto inputs = compiler::random_inputs(none.graph, 4);
    const Outcome a = run(none, inputs), b = run(grouped, inputs), c = run(with_weight, inputs);
    expect_bit_exact(a.outputs, b.outputs);
    expect_bit_exact(a.outputs, c.outputs);
    EXPECT_LT(gdma_bytes(b.profile), gdma_bytes(a.profile));
    EXPECT_LE(gdma_bytes(c.profile), gdma_bytes(b.profile));
    EXPECT_LT(metric_sum(b.profile, "gdma.commands"), metric_sum(a.profile, "gdma.commands"));
    std::cout << model << ": GDMA bytes none " << gdma_bytes(a.profile) << ", layer groups "
              << gdma_bytes(b.profile) << ", with weights " << gdma_bytes(c.profile)
              << "; GDMA commands " << metric_sum(a.profile, "gdma.commands") << " / "
              << metric_sum(b.profile, "gdma.commands") << " / "
              << metric_sum(c.profile, "gdma.commands") << "\n";
  }
}

TEST(BmBackend, ACorruptedLayerGroupInAModelIsAUserErrorAskingToRecompile) {
  const Plan plan = compiler::compile(import("mobilenet_small.onnx"), *make_bm_backend());
  Graph g = plan.graph;
  bool corrupted = false;
  for (auto& n : g.nodes)
    if (!corrupted && n.has_attr("bm.layer_group")) {
      n.attrs["bm.layer_group"] = std::vector<std::int64_t>{7, 2};
      corrupted = true;
    }
  ASSERT_TRUE(corrupted);
  try {
    compiler::lower_graph(g, *make_bm_backend(), "bm1880");
    ADD_FAILURE() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("recompile"), std::string::npos) << e.what();
  }
}

TEST(BmBackend, APlanSavedAsABmodelRunsThroughTheBmnetRuntimeWithTheSameInt8Output) {
  const Plan plan = compiler::compile(import("resnet_small.onnx"), *make_bm_backend());
  const BModel model = plan_to_bmodel(plan, "resnet_small");
  const auto path =
      (std::filesystem::temp_directory_path() / "tessera_bm_backend_test.bmodel").string();
  save_bmodel(model, path);
  // The int8 input the plan's QuantizeLinear makes, computed on the host.
  const auto inputs = compiler::random_inputs(plan.graph, 8);
  const Tensor& x = inputs.begin()->second;
  std::vector<std::int8_t> q(static_cast<std::size_t>(x.shape().element_count()));
  const auto xv = x.to_doubles();
  for (std::size_t i = 0; i < q.size(); ++i)
    q[i] = static_cast<std::int8_t>(
        std::clamp(std::nearbyint(xv[i] * 128.0 / model.input_threshold), -128.0, 127.0));
  bmctx_t ctx = nullptr;
  ASSERT_EQ(bm_init(0, &ctx), BM_SUCCESS);
  bmnet_t net = nullptr;
  ASSERT_EQ(bmnet_register_bmodel(ctx, path.c_str(), &net), BM_SUCCESS) << tessera_bm_last_error();
  bmnet_output_info_t info{};
  ASSERT_EQ(bmnet_get_output_info(net, &info), BM_SUCCESS);
  std::vector<std::int8_t> out(info.output_size);
  ASSERT_EQ(bmnet_inference(net, reinterpret_cast<uint8_t*>(q.data()),
                            reinterpret_cast<uint8_t*>(out.data())),
            BM_SUCCESS)
      << tessera_bm_last_error();
  bmnet_cleanup(net);
  bm_exit(ctx);
  std::filesystem::remove(path);
  // The plan outputs the dequantised int8 logits (its DequantizeLinear's output): ours must
  // equal them.
  std::string logits;
  for (const auto& n : plan.graph.nodes)
    if (n.op == "DequantizeLinear") logits = plan.graph.value(n.outputs[0]).name;
  const auto outputs = run(plan, inputs).outputs;
  ASSERT_TRUE(outputs.count(logits)) << logits;
  const auto wv = outputs.at(logits).to_doubles();
  ASSERT_EQ(wv.size(), out.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    EXPECT_EQ(out[i], std::nearbyint(wv[i] * 128.0 / static_cast<double>(model.output_threshold)))
        << i;
}

}  // namespace
}  // namespace tessera::bm
