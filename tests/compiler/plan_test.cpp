// Plans: backend registry, fallbacks, the liveness memory plan, and running on a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "model_builder.h"
#include "tessera/compiler/backend.h"
#include "tessera/compiler/driver.h"
#include "tessera/compiler/onnx_import.h"
#include "tessera/core/error.h"
#include "tessera/ops/reference.h"

namespace tessera::compiler {
namespace {

const std::string kSmall = std::string(TESSERA_MODELS_DIR) + "/resnet_small.onnx";

TEST(Registry, ReferenceIsRegisteredAndUnknownNamesAreListed) {
  register_builtin_backends("gaudi");
  const auto all = registered_backends();
  ASSERT_TRUE(std::any_of(all.begin(), all.end(),
                          [](const BackendInfo& b) { return b.name == "reference"; }));
  for (const auto& b : all) EXPECT_FALSE(b.description.empty());
  try {
    create_backend("no-such-target");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("reference"), std::string::npos) << e.what();
  }
}

// The compiler names no preset: without a default device from registration, the reference
// backend needs one named.
TEST(Registry, ReferenceWithoutADefaultDeviceAsksForOne) {
  const auto reference = make_reference_backend();
  EXPECT_EQ(reference->default_device(), "");
  try {
    lower_graph(import_onnx_file(kSmall), *reference, "");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("--device"), std::string::npos) << e.what();
  }
  register_builtin_backends("gaudi");
}

TEST(MemoryPlan, LiveValuesNeverOverlapAndReuseShrinksThePeak) {
  register_builtin_backends("gaudi");
  LoadOptions options;
  const Plan plan = load_plan(kSmall, options);
  const Graph& g = plan.graph;
  const auto& mp = plan.memory;
  EXPECT_GT(mp.arena_bytes, 0u);
  EXPECT_LT(mp.arena_bytes, mp.unplanned_bytes);
  // Lifetimes in steps; views share their input's storage so compare only distinct offsets.
  const int end = static_cast<int>(g.nodes.size());
  std::vector<int> first(g.values.size(), end + 1), last(g.values.size(), -2);
  for (ValueId v : g.inputs) first[static_cast<std::size_t>(v)] = -1;
  for (int s = 0; s < end; ++s) {
    for (ValueId v : g.nodes[static_cast<std::size_t>(s)].outputs)
      first[static_cast<std::size_t>(v)] = std::min(first[static_cast<std::size_t>(v)], s);
    for (ValueId v : g.nodes[static_cast<std::size_t>(s)].inputs)
      if (v != kNoValue)
        last[static_cast<std::size_t>(v)] = std::max(last[static_cast<std::size_t>(v)], s);
  }
  for (ValueId v : g.outputs) last[static_cast<std::size_t>(v)] = end;
  for (std::size_t a = 0; a < g.values.size(); ++a) {
    if (mp.offsets[a] < 0) continue;
    EXPECT_EQ(mp.offsets[a] % static_cast<std::int64_t>(plan.alignment), 0);
    EXPECT_LE(static_cast<std::uint64_t>(mp.offsets[a]) + g.values[a].bytes(), mp.arena_bytes);
    for (std::size_t b = a + 1; b < g.values.size(); ++b) {
      if (mp.offsets[b] < 0 || mp.offsets[a] == mp.offsets[b]) continue;
      const bool live_together = first[a] <= last[b] && first[b] <= last[a];
      const auto a0 = mp.offsets[a], a1 = a0 + static_cast<std::int64_t>(g.values[a].bytes());
      const auto b0 = mp.offsets[b], b1 = b0 + static_cast<std::int64_t>(g.values[b].bytes());
      if (live_together) {
        EXPECT_TRUE(a1 <= b0 || b1 <= a0) << g.values[a].name << " overlaps " << g.values[b].name;
      }
    }
  }
}

TEST(PlanRunner, RunsAreDeterministicAndInputsAreChecked) {
  register_builtin_backends("gaudi");
  const Plan plan = load_plan(kSmall, {});
  auto device = runtime::Device::open(plan.device);
  PlanRunner runner(plan, *device);
  const auto inputs = random_inputs(plan.graph, 3);
  const auto a = runner.run(inputs);
  const auto b = runner.run(inputs);
  EXPECT_TRUE(equal(a.outputs.at("logits"), b.outputs.at("logits")));
  EXPECT_EQ(a.profile.total_cycles, b.profile.total_cycles);
  // A wrong shape and a missing input are user errors naming the input.
  auto bad = inputs;
  bad["input"] = Tensor(DType::f32, Shape::nchw(1, 3, 16, 16));
  try {
    runner.run(bad);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'input'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(runner.run({}), UserError);
}

// The reference executor keeps a host step's result on the host until device memory needs it
// (a view, an output), computes into inputs that die (Add, Relu) and keeps the Conv's
// reordered weights: none of it may change a bit, in any run or from a second runner.
TEST(PlanRunner, HostStepsGiveTheOpsBitsRunAfterRun) {
  register_builtin_backends("gaudi");
  const Tensor w = testing::random_tensor(Shape{3, 3, 3, 4}, 0.5f, 1);
  const auto bytes = testing::make_model(
      {{"x", {"1", "3", "6", "6"}}, {"y", {"1", "4", "6", "6"}}}, {{"w", w}},
      {{"Conv", {"x", "w"}, {"c"}, {{"pads", {1, 1, 1, 1}}}},
       {"Add", {"c", "y"}, {"a"}},
       {"Relu", {"a"}, {"r"}},
       {"Flatten", {"r"}, {"f"}},
       {"Mul", {"r", "r"}, {"m"}}},
      {{"f", {"1", "144"}}, {"m", {"1", "4", "6", "6"}}});
  const auto reference = make_reference_backend("gaudi");
  const Plan plan = compile(import_onnx_bytes(bytes, "host.onnx"), *reference);
  auto device = runtime::Device::open(plan.device);
  PlanRunner runner(plan, *device), second(plan, *device);
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const auto inputs = random_inputs(plan.graph, seed);
    ops::ConvParams p;
    p.pads = {1, 1, 1, 1};
    const Tensor r =
        ops::relu(ops::add(ops::conv(inputs.at("x"), w, nullptr, p), inputs.at("y")));
    for (PlanRunner* run : {&runner, &second}) {
      const RunResult got = run->run(inputs);
      EXPECT_TRUE(equal(got.outputs.at("f"), r.reshape(Shape{144, 1}))) << "seed " << seed;
      EXPECT_TRUE(equal(got.outputs.at("m"), ops::mul(r, r))) << "seed " << seed;
    }
  }
}

TEST(PlanRunner, ShapeSettingDataFedAtRunTimeIsAUserError) {
  // Range's length follows its inputs' data, and Tessera compiles static shapes: a graph input
  // that sets a shape is refused at import, naming the input and the remedy (--input).
  const auto bytes =
      testing::make_model({{"start", {}}, {"limit", {}}, {"delta", {}}}, {},
                          {{"Range", {"start", "limit", "delta"}, {"y"}}}, {{"y", {"2"}}});
  try {
    (void)import_onnx_bytes(bytes, "range.onnx");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("Range"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--input start="), std::string::npos) << e.what();
  }
}

// A backend that runs only Relu itself: everything else falls back with a reason.
class ReluOnly final : public Backend {
 public:
  std::string name() const override { return "relu-only"; }
  std::string description() const override { return "test"; }
  std::string default_device() const override { return "gaudi"; }
  std::optional<std::string> unsupported_reason(const Node& node, const Graph&) const override {
    if (node.op == "Relu") return std::nullopt;
    return "only Relu";
  }
  std::unique_ptr<Step> lower(const Graph&, int node) const override {
    return make_reference_step(node);
  }
};

TEST(Plan, UnsupportedNodesFallBackWithReasons) {
  Graph g = import_onnx_file(kSmall);
  ReluOnly backend;
  const Plan plan = compile(std::move(g), backend);
  EXPECT_GT(plan.fallback_count(), 0);
  for (const auto& info : plan.info) {
    const Node& n = plan.graph.nodes[static_cast<std::size_t>(info.node)];
    if (n.op == "Relu") {
      EXPECT_FALSE(info.fallback);
    }
    if (info.fallback) {
      EXPECT_EQ(info.reason, "only Relu");
    }
  }
}

TEST(Compare, CosineAndErrors) {
  const Tensor a = Tensor::from_vector(Shape{3}, {1, 2, 3});
  const Tensor b = Tensor::from_vector(Shape{3}, {1, 2, 3.5});
  const auto c = compare_outputs({{"y", a}}, {{"y", b}});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NEAR(c[0].max_abs_error, 0.5, 1e-12);
  EXPECT_LT(c[0].cosine_similarity, 1.0);
  EXPECT_GT(c[0].cosine_similarity, 0.99);
  EXPECT_FALSE(c[0].ok);
  EXPECT_EQ(c[0].worst_index, 2);
}

// `tessera run --check` holds outputs to the conformance tolerances: an output scaled by 2 has
// a cosine similarity of exactly 1, and must still fail, naming the errors and the worst element.
TEST(Compare, AnOutputScaledByTwoFailsTheCheck) {
  std::vector<float> v(1000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.01f * static_cast<float>(i) - 3.0f;
  std::vector<float> twice = v;
  for (auto& x : twice) x *= 2.0f;
  const Tensor expected = Tensor::from_vector(Shape{10, 100}, v);
  const Tensor scaled = Tensor::from_vector(Shape{10, 100}, twice);
  const OutputComparison c = compare_output("y", scaled, expected);
  EXPECT_NEAR(c.cosine_similarity, 1.0, 1e-12);
  EXPECT_FALSE(c.ok);
  EXPECT_NEAR(c.max_rel_error, 1.0, 1e-6);
  EXPECT_EQ(c.worst_index, 999);  // the largest |expected| is furthest out of tolerance
  EXPECT_EQ(c.worst_position, "(9, 99)");
  const std::string text = c.describe();
  for (const char* part : {"max abs error 6.99", "max rel error 1", "rtol 0.001", "atol 1e-05",
                           "worst element 999 at (9, 99): 13.9799995 vs 6.98999977", "MISMATCH"})
    EXPECT_NE(text.find(part), std::string::npos) << part << " not in: " << text;
  // The same output within tolerance passes; a 1-ulp-scale difference stays within it.
  std::vector<float> close = v;
  close[5] *= 1.0000005f;
  EXPECT_TRUE(compare_output("y", Tensor::from_vector(Shape{10, 100}, close), expected).ok);
}

TEST(Compare, TolerancesArePerDtype) {
  EXPECT_EQ(conformance_tolerance(DType::f32).rtol, 1e-3);
  EXPECT_GT(conformance_tolerance(DType::bf16).rtol, conformance_tolerance(DType::f16).rtol);
  EXPECT_EQ(conformance_tolerance(DType::i32).atol, 0.0);
  const Tensor a = Tensor::from_ints(DType::i32, Shape{2}, {1, 2});
  const Tensor b = Tensor::from_ints(DType::i32, Shape{2}, {1, 3});
  EXPECT_FALSE(compare_output("i", a, b).ok);  // integers compare exactly
}

TEST(Expectations, ACaseThatNowNeedsAFallbackFallsShort) {
  CaseResult r;
  r.name = "test_relu";
  r.status = CaseStatus::pass;
  r.fallbacks = 1;
  EXPECT_TRUE(expectation_shortfall({"test_relu", true}, r).has_value());
  EXPECT_FALSE(expectation_shortfall({"test_relu", false}, r).has_value());
  r.fallbacks = 0;
  EXPECT_FALSE(expectation_shortfall({"test_relu", true}, r).has_value());
  r.status = CaseStatus::fail;
  EXPECT_TRUE(expectation_shortfall({"test_relu", false}, r).has_value());
  // The recorded file reads back as it was written.
  CaseResult device = r, fallback = r;
  device.status = fallback.status = CaseStatus::pass;
  device.name = "test_a";
  fallback.name = "test_b";
  fallback.fallbacks = 2;
  const std::string path = ::testing::TempDir() + "/expected_x.txt";
  std::ofstream(path) << format_expectations("x", {device, fallback, r});
  const auto read = read_expectations(path);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].name, "test_a");
  EXPECT_TRUE(read[0].on_device);
  EXPECT_FALSE(read[1].on_device);
  std::ofstream(path) << "test_a on_the_moon\n";
  EXPECT_THROW(read_expectations(path), UserError);
}

}  // namespace
}  // namespace tessera::compiler
