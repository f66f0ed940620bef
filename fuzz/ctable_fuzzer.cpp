// libFuzzer target: an int8 calibration table from a stranger, parsed, used to quantise a small
// network (conv with bias and relu, average pooling, a residual add, concat, gemm, softmax) and,
// when it parses, run on the reference backend's integer executor, as `tessera run MODEL --int8
// TABLE` does.
#include <string>
#include <string_view>

#include "fuzz_common.h"
#include "tessera/compiler/backend.h"
#include "tessera/compiler/ir.h"
#include "tessera/compiler/quantize.h"

namespace {

using namespace tessera;
using namespace tessera::compiler;

ValueId activation(Graph& g, const std::string& name, const Shape& shape) {
  Value v;
  v.name = name;
  v.shape = shape;
  return g.add_value(v);
}

Tensor ramp(const Shape& shape, float scale) {
  Tensor t(DType::f32, shape);
  for (std::int64_t i = 0; i < t.element_count(); ++i)
    t.data<float>()[i] = scale * static_cast<float>(i % 11 - 5);
  return t;
}

void add(Graph& g, const std::string& op, std::vector<ValueId> in, ValueId out,
         std::map<std::string, Attribute> attrs = {}) {
  Node n;
  n.op = op;
  n.name = g.value(out).name;
  n.inputs = std::move(in);
  n.outputs = {out};
  n.attrs = std::move(attrs);
  g.add_node(std::move(n));
}

// Tensors the table may name: x, c, p, s, k, f, y, z.
Graph small_network() {
  Graph g;
  g.name = "ctable_fuzz";
  g.opset = 13;
  const ValueId x = activation(g, "x", Shape::nchw(1, 2, 4, 4));
  g.inputs.push_back(x);
  const ValueId c = activation(g, "c", Shape::nchw(1, 2, 4, 4));
  add(g, "Conv",
      {x, g.add_constant("w", ramp(Shape::nchw(2, 2, 3, 3), 0.05f)),
       g.add_constant("b", ramp(Shape{2}, 0.1f))},
      c, {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}});
  g.nodes.back().activation.kind = Activation::Kind::relu;
  const ValueId p = activation(g, "p", Shape::nchw(1, 2, 2, 2));
  add(g, "AveragePool", {c}, p,
      {{"kernel_shape", std::vector<std::int64_t>{2, 2}},
       {"strides", std::vector<std::int64_t>{2, 2}}});
  const ValueId s = activation(g, "s", Shape::nchw(1, 2, 2, 2));
  add(g, "Add", {p, p}, s);
  const ValueId k = activation(g, "k", Shape::nchw(1, 4, 2, 2));
  add(g, "Concat", {s, p}, k, {{"axis", std::int64_t{1}}});
  const ValueId f = activation(g, "f", Shape{16, 1});
  add(g, "Flatten", {k}, f, {{"axis", std::int64_t{1}}});
  const ValueId y = activation(g, "y", Shape{3, 1});
  add(g, "Gemm", {f, g.add_constant("fc", ramp(Shape{3, 16}, 0.02f))}, y);
  const ValueId z = activation(g, "z", Shape{3, 1});
  add(g, "Softmax", {y}, z, {{"axis", std::int64_t{1}}});
  g.outputs.push_back(z);
  g.reindex();
  return g;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::initialize();
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_clean([&] {
    CompileOptions options;
    options.passes.int8_table =
        std::make_shared<const CalibrationTable>(parse_calibration_table(text, "fuzz.table"));
    const auto backend = create_backend("reference");
    const Plan plan = compile(small_network(), *backend, options);
    fuzz::run_if_small(plan);
  });
  return 0;
}
