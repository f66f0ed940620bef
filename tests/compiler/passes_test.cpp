// Passes rewrite the graph as documented and keep its results.
#include <gtest/gtest.h>

#include "model_builder.h"
#include "tessera/compiler/backend.h"
#include "tessera/compiler/onnx_import.h"
#include "tessera/compiler/passes.h"
#include "tessera/compiler/plan.h"

namespace tessera::compiler {
namespace {

const std::string kSmall = std::string(TESSERA_MODELS_DIR) + "/resnet_small.onnx";

std::map<std::string, Tensor> run_graph(Graph g, const Backend& backend,
                                        const PassOptions& passes) {
  CompileOptions options;
  options.passes = passes;
  Plan plan = compile(std::move(g), backend, options);
  auto device = runtime::Device::open(plan.device);
  PlanRunner runner(plan, *device);
  return runner.run(random_inputs(plan.graph, 7)).outputs;
}

int count_op(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op == op;
  return n;
}

PassOptions no_passes() {
  PassOptions p;
  p.fold_constants = p.fold_batchnorm = p.fuse = p.eliminate_dead_code = p.choose_layouts = false;
  return p;
}

TEST(Passes, BatchNormFoldingAndFusionKeepResults) {
  Graph g = import_onnx_file(kSmall);
  auto reference = make_reference_backend("gaudi");
  Graph optimised = g;
  const PassReport report = run_passes(optimised, *reference);
  EXPECT_EQ(report.folded_batchnorms, 9);
  EXPECT_EQ(count_op(optimised, "BatchNormalization"), 0);
  EXPECT_GE(report.fused_activations, 4);
  int relu_convs = 0;
  for (const Node& n : optimised.nodes)
    relu_convs += n.op == "Conv" && n.activation.kind == Activation::Kind::relu;
  EXPECT_EQ(relu_convs, report.fused_activations);
  const auto a = run_graph(g, *reference, no_passes());
  const auto b = run_graph(g, *reference, {});
  ASSERT_EQ(a.size(), 1u);
  EXPECT_TRUE(allclose(b.at("logits"), a.at("logits"), 1e-4, 1e-5))
      << compare(b.at("logits"), a.at("logits"), 1e-4, 1e-5).message;
}

TEST(Passes, ConstantsFoldAndDeadCodeGoes) {
  const Tensor c = Tensor::full(DType::f32, Shape{3}, 2.0);
  const auto bytes = testing::make_model(
      {{"x", {"2", "3"}}}, {{"c1", c}, {"c2", c}},
      {{"Add", {"c1", "c2"}, {"c3"}}, {"Mul", {"x", "c3"}, {"y"}}, {"Exp", {"x"}, {"unused"}}},
      {{"y", {"2", "3"}}});
  Graph g = import_onnx_bytes(bytes, "fold.onnx");
  EXPECT_EQ(g.nodes.size(), 3u);
  PassReport report;
  EXPECT_EQ(fold_constants(g, &report), 1);
  EXPECT_EQ(eliminate_dead_code(g, &report), 1);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, "Mul");
  const Value& folded = g.value(g.nodes[0].inputs[1]);
  ASSERT_TRUE(folded.is_constant());
  EXPECT_FLOAT_EQ(folded.constant->at<float>(0), 4.0f);
}

TEST(Passes, MatMulPlusBiasBecomesGemmWithActivation) {
  const auto bytes = testing::make_model(
      {{"x", {"2", "4"}}},
      {{"w", Tensor::full(DType::f32, Shape{3, 4}, 0.25)},
       {"b", Tensor::full(DType::f32, Shape{3}, -1.0)}},
      {{"MatMul", {"x", "w"}, {"m"}}, {"Add", {"m", "b"}, {"a"}}, {"Relu", {"a"}, {"y"}}},
      {{"y", {"2", "3"}}});
  Graph g = import_onnx_bytes(bytes, "mm.onnx");
  Graph original = g;
  auto reference = make_reference_backend("gaudi");
  const PassReport report = run_passes(g, *reference);
  EXPECT_EQ(report.fused_biases, 1);
  EXPECT_EQ(report.fused_activations, 1);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, "Gemm");
  EXPECT_EQ(g.nodes[0].activation.kind, Activation::Kind::relu);
  const auto a = run_graph(original, *reference, no_passes());
  const auto b = run_graph(original, *reference, {});
  EXPECT_TRUE(allclose(b.at("y"), a.at("y"), 1e-5, 1e-6));
}

// A backend that wants its convolutions in a layout it declares: the layout pass wraps them in
// transposes and cancels back-to-back inverse pairs; results stay the same.
class LayoutBackend final : public Backend {
 public:
  explicit LayoutBackend(Layout layout) : layout_(std::move(layout)) {}
  std::string name() const override { return "layout-test"; }
  std::string description() const override { return "test"; }
  std::string default_device() const override { return "gaudi"; }
  std::optional<std::string> unsupported_reason(const Node&, const Graph&) const override {
    return std::nullopt;
  }
  Layout preferred_layout(const Node& node, const Graph&) const override {
    return node.op == "Conv" ? layout_ : Layout{};
  }
  std::unique_ptr<Step> lower(const Graph&, int node) const override {
    return make_reference_step(node);
  }

 private:
  Layout layout_;
};

class LayoutChoice : public ::testing::TestWithParam<Layout> {};

TEST_P(LayoutChoice, InsertsAndCancelsTransposes) {
  const auto bytes = testing::make_model(
      {{"x", {"1", "2", "5", "5"}}},
      {{"w1", Tensor::full(DType::f32, Shape{3, 3, 2, 2}, 0.1)},
       {"w2", Tensor::full(DType::f32, Shape{1, 1, 2, 2}, 0.3)}},
      {{"Conv", {"x", "w1"}, {"a"}, {{"pads", {1, 1, 1, 1}}}}, {"Conv", {"a", "w2"}, {"y"}}},
      {{"y", {"1", "2", "5", "5"}}});
  Graph g = import_onnx_bytes(bytes, "nhwc.onnx");
  LayoutBackend backend(GetParam());
  Graph laid_out = g;
  PassReport report;
  choose_layouts(laid_out, backend, &report);
  EXPECT_EQ(count_op(laid_out, "Transpose"), 2);  // 4 inserted, the middle pair cancelled
  EXPECT_EQ(report.layout_transposes, 2);
  for (const Node& n : laid_out.nodes)
    if (n.op == "Conv") {
      EXPECT_EQ(n.layout, GetParam());
      EXPECT_EQ(n.attr_ints("tessera.weights_perm"), GetParam().weights_perm);
    }
  auto reference = make_reference_backend("gaudi");
  const auto a = run_graph(g, *reference, no_passes());
  const auto b = run_graph(g, backend, {});
  EXPECT_TRUE(allclose(b.at("y"), a.at("y"), 1e-5, 1e-6));
}

// Channels last with HWIO weights (what gaudi declares), and an arbitrary other order, which no
// backend uses: layouts are data a backend declares, not a closed list.
INSTANTIATE_TEST_SUITE_P(Layouts, LayoutChoice,
                         ::testing::Values(Layout{"nhwc", {0, 2, 3, 1}, "hwio", {2, 3, 1, 0}},
                                           Layout{"nwhc", {0, 3, 2, 1}, "wh_io", {3, 2, 1, 0}}),
                         [](const ::testing::TestParamInfo<Layout>& p) { return p.param.name; });

TEST(Passes, ALayoutThatIsNotAPermutationIsAUserError) {
  EXPECT_THROW(inverse_permutation({0, 2, 2, 1}), UserError);
  EXPECT_EQ(inverse_permutation({0, 2, 3, 1}), (std::vector<std::int64_t>{0, 3, 1, 2}));
}

}  // namespace
}  // namespace tessera::compiler
