#include "tessera/targets/template/backend/backend.h"

#include <fmt/format.h>

#include "tessera/core/error.h"
#include "tessera/targets/template/kernels/ops.h"

namespace tessera::tmpl {
namespace {

using compiler::ExecContext;
using compiler::Graph;
using compiler::kNoValue;
using compiler::Node;
using compiler::NodeStep;
using compiler::Step;
using compiler::ValueId;

DeviceSpan span_of(ExecContext& ctx, ValueId v) {
  const auto place = ctx.placement(v);
  return {place.buffer, place.offset, ctx.graph().value(v).shape.element_count()};
}

class TemplateStep final : public NodeStep {
 public:
  TemplateStep(int node, Op op) : NodeStep(node), op_(op) {}
  void run(ExecContext& ctx) override {
    const Node& n = node(ctx.graph());
    Machine machine(ctx.device());
    const DeviceSpan a = span_of(ctx, n.inputs[0]);
    const DeviceSpan out = span_of(ctx, n.outputs[0]);
    if (is_binary(op_)) {
      const DeviceSpan b = span_of(ctx, n.inputs[1]);
      machine.elementwise(op_, a, &b, out);
    } else {
      machine.elementwise(op_, a, nullptr, out);
    }
    ctx.invalidate(n.outputs[0]);
  }

 private:
  Op op_;
};

class TemplateBackend final : public compiler::Backend {
 public:
  std::string name() const override { return "template"; }
  std::string description() const override {
    return "template target: f32 element-wise ops tiled over the cores of a small vector "
           "machine (an example to copy; docs/targets/template.md)";
  }
  std::string default_device() const override { return "template"; }
  std::vector<std::string> device_targets() const override { return {"template"}; }

  std::optional<std::string> unsupported_reason(const Node& n, const Graph& g) const override {
    const auto op = ops::op_by_onnx_name(n.op);
    if (!op) return fmt::format("the template op library has no {}", n.op);
    const std::size_t arity = is_binary(*op) ? 2 : 1;
    if (n.inputs.size() != arity)
      return fmt::format("{} with {} inputs (the library's takes {})", n.op, n.inputs.size(),
                         arity);
    if (n.activation.kind != compiler::Activation::Kind::none)
      return std::string("a fused activation");
    const auto& out = g.value(n.outputs[0]);
    if (out.dtype != DType::f32)
      return fmt::format("the template alu computes f32, not {}", dtype_name(out.dtype));
    for (ValueId v : n.inputs) {
      if (v == kNoValue) return std::string("an omitted input");
      if (g.value(v).dtype != DType::f32) return std::string("inputs of mixed dtypes");
      if (!(g.value(v).shape == out.shape))
        return std::string("broadcasting (the template alu takes operands of equal shape)");
    }
    return std::nullopt;
  }

  std::unique_ptr<Step> lower(const Graph& g, int node_index) const override {
    const Node& n = g.nodes[static_cast<std::size_t>(node_index)];
    const auto op = ops::op_by_onnx_name(n.op);
    if (!op) throw_internal_error("template backend asked to lower {}", n.describe());
    return std::make_unique<TemplateStep>(node_index, *op);
  }
};

}  // namespace

std::unique_ptr<compiler::Backend> make_template_backend() {
  return std::make_unique<TemplateBackend>();
}

}  // namespace tessera::tmpl

namespace tessera::targets {

void register_template_backend() {
  compiler::register_backend(tmpl::make_template_backend);
}

}  // namespace tessera::targets
