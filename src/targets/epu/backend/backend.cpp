#include "tessera/targets/epu/backend/backend.h"

#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "tessera/arch/machine_spec.h"
#include "tessera/compiler/quantize.h"
#include "tessera/core/error.h"
#include "tessera/targets/epu/api/array.h"
#include "tessera/targets/epu/kernels/int8.h"

namespace tessera::epu {
namespace {

using compiler::ExecContext;
using compiler::Graph;
using compiler::kNoValue;
using compiler::Node;
using compiler::NodeStep;
using compiler::Step;
using compiler::ValueId;
using kernels::DdrOperand;
using kernels::Window;

// The array of the run's device, shared by the plan's steps (ExecContext::backend_state).
Array& array_of(ExecContext& ctx) {
  auto& state = ctx.backend_state();
  if (!state.has_value()) state = std::make_shared<Array>(ctx.device());
  return *std::any_cast<std::shared_ptr<Array>&>(state);
}

DdrOperand operand(ExecContext& ctx, ValueId v) {
  const auto& value = ctx.graph().value(v);
  return {ctx.data(v), value.bytes(), ctx.device_address(v), value.name};
}

// N-C-spatial geometry of a conv or pool node from its shapes and ONNX attributes (1-D and 2-D
// spatial; Tessera shapes are fastest first: W, H, C, N).
std::optional<Window> window_of(const Node& n, const Graph& g, std::string& why) {
  const Shape& x = g.value(n.inputs[0]).shape;
  const Shape& y = g.value(n.outputs[0]).shape;
  const int r = x.rank();
  if (r != 3 && r != 4) {
    why = fmt::format("{}-D input (the array kernels take N-C-H-W or N-C-W)", r);
    return std::nullopt;
  }
  if (y.rank() != r) {
    why = "an output of another rank";
    return std::nullopt;
  }
  const std::size_t s = static_cast<std::size_t>(r - 2);
  auto ints = [&](const char* key, std::size_t count, std::int64_t fallback) {
    std::vector<std::int64_t> v = n.attr_ints(key);
    if (v.empty()) v.assign(count, fallback);
    return v;
  };
  Window w;
  w.n = x[r - 1], w.c = x[r - 2], w.oc = y[r - 2];
  w.w = x[0], w.ow = y[0];
  w.h = r == 4 ? x[1] : 1;
  w.oh = r == 4 ? y[1] : 1;
  std::vector<std::int64_t> kernel = n.attr_ints("kernel_shape");
  if (n.op == "Int8Conv") {
    const Shape& ws = g.value(n.inputs[1]).shape;
    kernel.clear();
    for (int d = ws.rank() - 3; d >= 0; --d) kernel.push_back(ws[d]);
    w.group = n.attr_int("group", 1);
  } else if (n.op == "Int8GlobalAveragePool") {
    kernel = r == 4 ? std::vector<std::int64_t>{x[1], x[0]} : std::vector<std::int64_t>{x[0]};
  }
  const auto strides =
      n.op == "Int8GlobalAveragePool" ? std::vector<std::int64_t>(s, 1) : ints("strides", s, 1);
  const auto dilations =
      n.op == "Int8GlobalAveragePool" ? std::vector<std::int64_t>(s, 1) : ints("dilations", s, 1);
  const auto pads = n.op == "Int8GlobalAveragePool" ? std::vector<std::int64_t>(2 * s, 0)
                                                    : ints("pads", 2 * s, 0);
  if (kernel.size() != s || strides.size() != s || dilations.size() != s || pads.size() != 2 * s) {
    why = "kernel, strides, dilations or pads of another rank than the input's spatial axes";
    return std::nullopt;
  }
  if (n.attr_string("auto_pad", "NOTSET") != "NOTSET") {
    why = "auto_pad (the passes resolve it into pads before lowering on other paths)";
    return std::nullopt;
  }
  if (n.attr_int("ceil_mode", 0) != 0 && n.op != "Int8MaxPool") {
    why = "ceil_mode";
    return std::nullopt;
  }
  w.kw = kernel[s - 1], w.sw = strides[s - 1], w.dw = dilations[s - 1], w.pl = pads[s - 1];
  if (r == 4) w.kh = kernel[0], w.sh = strides[0], w.dh = dilations[0], w.pt = pads[0];
  if (w.group < 1 || w.c % w.group != 0 || w.oc % w.group != 0) {
    why = "a group that does not divide the channels";
    return std::nullopt;
  }
  if (n.op != "Int8Conv" && w.oc != w.c) {
    why = "a pool whose output channels differ from its input's";
    return std::nullopt;
  }
  return w;
}

class EpuStep final : public NodeStep {
 public:
  using NodeStep::NodeStep;
  void run(ExecContext& ctx) override {
    const Node& n = node(ctx.graph());
    Array& a = array_of(ctx);
    const compiler::Int8Params p = compiler::int8_params(n);
    const DdrOperand y = operand(ctx, n.outputs[0]);
    const std::string& op = n.op;
    std::string why;
    if (op == "Int8Conv") {
      const auto g = window_of(n, ctx.graph(), why);
      if (!g) throw_internal_error("epu backend: {} lowered but {}", n.describe(), why);
      const bool bias = n.inputs.size() > 2 && n.inputs[2] != kNoValue;
      const DdrOperand b = bias ? operand(ctx, n.inputs[2]) : DdrOperand{};
      kernels::conv_int8(a, operand(ctx, n.inputs[0]), operand(ctx, n.inputs[1]),
                         bias ? &b : nullptr, y, *g, compiler::rshift_params(p));
    } else if (op == "Int8MaxPool" || op == "Int8AveragePool" || op == "Int8GlobalAveragePool") {
      const auto g = window_of(n, ctx.graph(), why);
      if (!g) throw_internal_error("epu backend: {} lowered but {}", n.describe(), why);
      const bool max = op == "Int8MaxPool";
      kernels::pool_int8(a, operand(ctx, n.inputs[0]), y, *g,
                         max ? kernels::Pool::max : kernels::Pool::sum,
                         compiler::rshift_params(p, max ? 1 : p.multipliers.at(0)));
    } else if (op == "Int8Gemm") {
      const Shape& xs = ctx.graph().value(n.inputs[0]).shape;
      const Shape& ys = ctx.graph().value(n.outputs[0]).shape;
      const bool bias = n.inputs.size() > 2 && n.inputs[2] != kNoValue;
      const DdrOperand b = bias ? operand(ctx, n.inputs[2]) : DdrOperand{};
      kernels::gemm_int8(a, operand(ctx, n.inputs[0]), operand(ctx, n.inputs[1]),
                         bias ? &b : nullptr, y, xs[1], xs[0], ys[0], compiler::rshift_params(p));
    } else if (op == "Int8Add" || op == "Int8Relu" || op == "Int8Clip") {
      std::vector<DdrOperand> xs;
      for (ValueId v : n.inputs) xs.push_back(operand(ctx, v));
      const std::vector<std::int64_t> m =
          op == "Int8Add" ? p.multipliers : std::vector<std::int64_t>{1};
      kernels::eltwise_int8(
          a, xs, m, y,
          static_cast<std::uint64_t>(ctx.graph().value(n.outputs[0]).shape.element_count()),
          compiler::rshift_params(p));
    } else if (op == "Int8Concat") {
      const Shape& out = ctx.graph().value(n.outputs[0]).shape;
      const int r = out.rank();
      std::int64_t axis = n.attr_int("axis", 0);
      if (axis < 0) axis += r;
      const int t = r - 1 - static_cast<int>(axis);  // the Tessera dimension of the axis
      std::uint64_t outer = 1;
      for (int d = t + 1; d < r; ++d) outer *= static_cast<std::uint64_t>(out[d]);
      std::vector<DdrOperand> xs;
      std::vector<std::uint64_t> sizes;
      for (ValueId v : n.inputs) {
        xs.push_back(operand(ctx, v));
        const Shape& s = ctx.graph().value(v).shape;
        std::uint64_t block = 1;
        for (int d = 0; d <= t; ++d) block *= static_cast<std::uint64_t>(s[d]);
        sizes.push_back(block);
      }
      kernels::concat_int8(a, xs, p.multipliers, sizes, outer, y, compiler::rshift_params(p));
    } else {
      throw_internal_error("epu backend asked to run {}", n.describe());
    }
    a.finish(n.name);
    ctx.invalidate(n.outputs[0]);
  }
};

// The f32 <-> int8 conversions at the int8 graph's edges, on the array (kernels/int8.h).
class ConvertStep final : public NodeStep {
 public:
  using NodeStep::NodeStep;
  void run(ExecContext& ctx) override {
    const Node& n = node(ctx.graph());
    Array& a = array_of(ctx);
    const Tensor& scale = *ctx.graph().value(n.inputs[1]).constant;
    const Tensor* zero = n.inputs.size() > 2 && n.inputs[2] != kNoValue
                             ? &*ctx.graph().value(n.inputs[2]).constant
                             : nullptr;
    const auto count =
        static_cast<std::uint64_t>(ctx.graph().value(n.outputs[0]).shape.element_count());
    if (n.op == "QuantizeLinear")
      kernels::quantize_f32(a, operand(ctx, n.inputs[0]), operand(ctx, n.outputs[0]), count, scale,
                            zero);
    else
      kernels::dequantize_i8(a, operand(ctx, n.inputs[0]), operand(ctx, n.outputs[0]), count, scale,
                             zero);
    a.finish(n.name);
    ctx.invalidate(n.outputs[0]);
  }
};

// The length of the rows Softmax normalises (contiguous: ONNX's last axis, or before opset 13
// the inner part of the 2-D coercion at `axis`); nullopt with `why` for another axis.
std::optional<std::uint64_t> softmax_row(const Node& n, const Graph& g, std::string& why) {
  const Shape& x = g.value(n.inputs[0]).shape;
  const int r = x.rank();
  std::int64_t axis = n.attr_int("axis", g.opset >= 13 ? -1 : 1);
  if (axis < 0) axis += r;
  if (r == 0 || axis < 0 || axis >= r) {
    why = fmt::format("axis {} of a rank-{} input", n.attr_int("axis", 0), r);
    return std::nullopt;
  }
  if (g.opset >= 13 && axis != r - 1) {
    why = fmt::format(
        "Softmax over axis {} of {} (the array kernel normalises the last axis, whose values "
        "are contiguous)",
        axis, r);
    return std::nullopt;
  }
  std::uint64_t length = 1;
  for (int d = 0; d < r - static_cast<int>(axis); ++d) length *= static_cast<std::uint64_t>(x[d]);
  return length;
}

// Softmax of f32 rows on the array in fixed point (kernels::softmax_f32).
class SoftmaxStep final : public NodeStep {
 public:
  using NodeStep::NodeStep;
  void run(ExecContext& ctx) override {
    const Node& n = node(ctx.graph());
    std::string why;
    const auto length = softmax_row(n, ctx.graph(), why);
    if (!length) throw_internal_error("epu backend: {} lowered but {}", n.describe(), why);
    const auto count =
        static_cast<std::uint64_t>(ctx.graph().value(n.outputs[0]).shape.element_count());
    Array& a = array_of(ctx);
    kernels::softmax_f32(a, operand(ctx, n.inputs[0]), operand(ctx, n.outputs[0]),
                         *length ? count / *length : 0, *length);
    a.finish(n.name);
    ctx.invalidate(n.outputs[0]);
  }
};

bool is_convert(const std::string& op) {
  return op == "QuantizeLinear" || op == "DequantizeLinear";
}

class EpuBackend final : public compiler::Backend {
 public:
  std::string name() const override { return "epu"; }
  std::string description() const override {
    return "Quadric Chimera EPU: int8 networks (--int8 TABLE, or self-calibrated) on the "
           "lock-step core array, weights broadcast, windows through neighbour exchange or RAU, "
           "Softmax in fixed point (docs/targets/epu.md)";
  }
  std::string default_device() const override { return "chimera-q16"; }
  std::vector<std::string> device_targets() const override { return {"epu"}; }

  std::optional<std::string> unsupported_reason(const Node& n, const Graph& g) const override {
    const std::string& op = n.op;
    if (is_convert(op)) {
      const bool quantize = op == "QuantizeLinear";
      const auto constant_scalar = [&](std::size_t i) {
        return i < n.inputs.size() && n.inputs[i] != kNoValue &&
               g.value(n.inputs[i]).is_constant() &&
               g.value(n.inputs[i]).shape.element_count() == 1;
      };
      if (!constant_scalar(1) ||
          (n.inputs.size() > 2 && n.inputs[2] != kNoValue && !constant_scalar(2)))
        return std::string(
            "a conversion without one constant scale and zero point (the int8 pass makes "
            "per-tensor ones)");
      const ValueId f = quantize ? n.inputs[0] : n.outputs[0];
      const ValueId q = quantize ? n.outputs[0] : n.inputs[0];
      if (g.value(q).dtype != DType::i8 || g.value(f).dtype != DType::f32)
        return std::string("a conversion between other types than f32 and int8");
      if (g.value(q).bytes() + g.value(f).bytes() > ocm_capacity(g))
        return fmt::format("its operands need {} B of OCM, more than the {} B the preset has",
                           g.value(q).bytes() + g.value(f).bytes(), ocm_capacity(g));
      return std::nullopt;
    }
    if (op == "Softmax") {
      if (g.value(n.inputs[0]).dtype != DType::f32 || g.value(n.outputs[0]).dtype != DType::f32)
        return std::string("a Softmax of another type than f32");
      std::string why;
      const auto length = softmax_row(n, g, why);
      if (!length) return why;
      if (*length == 0 || *length > kernels::kSoftmaxMaxLength)
        return fmt::format("rows of {} values (the Q15 sum takes 1 to {})", *length,
                           kernels::kSoftmaxMaxLength);
      const auto count = static_cast<std::uint64_t>(g.value(n.inputs[0]).shape.element_count());
      const std::uint64_t need = kernels::softmax_ocm_bytes(count / *length, *length);
      if (need > ocm_capacity(g))
        return fmt::format("its operands need {} B of OCM, more than the {} B the preset has", need,
                           ocm_capacity(g));
      return std::nullopt;
    }
    if (!compiler::is_int8_op(op))
      return fmt::format(
          "the EPU array computes the int8 graph (self-calibrated, or --int8 TABLE) and "
          "Softmax; {} is not one of its ops",
          op);
    for (ValueId v : n.inputs)
      if (v == kNoValue) return std::string("an omitted input");
    if (g.value(n.outputs[0]).dtype != DType::i8) return std::string("an output that is not int8");
    try {
      (void)compiler::int8_params(n);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    const std::uint64_t ocm = ocm_capacity(g);
    std::uint64_t need = 0;
    std::string why;
    if (op == "Int8Conv" || op == "Int8MaxPool" || op == "Int8AveragePool" ||
        op == "Int8GlobalAveragePool") {
      const auto w = window_of(n, g, why);
      if (!w) return why;
      if (op == "Int8MaxPool" && n.outputs.size() > 1 && n.outputs[1] != kNoValue)
        return std::string("MaxPool's Indices output");
      need = op == "Int8Conv" ? kernels::conv_ocm_bytes(*w, n.inputs.size() > 2)
                              : kernels::pool_ocm_bytes(*w);
    } else if (op == "Int8Gemm") {
      const Shape& x = g.value(n.inputs[0]).shape;
      const Shape& w = g.value(n.inputs[1]).shape;
      if (x.rank() != 2 || w.rank() != 2 || x[0] != w[1])
        return fmt::format("a gemm of {} by {} (the array kernel takes M x K by K x N)",
                           x.to_string(), w.to_string());
    } else if (op == "Int8Add") {
      if (n.inputs.size() != 2 || !(g.value(n.inputs[0]).shape == g.value(n.inputs[1]).shape))
        return std::string("broadcasting (the array adds operands of equal shape)");
    }
    if (need == 0)
      for (ValueId v : n.inputs) need += g.value(v).bytes();
    if (op != "Int8Conv" && op.find("Pool") == std::string::npos)
      need += g.value(n.outputs[0]).bytes();
    if (need > ocm)
      return fmt::format(
          "its operands need {} B of OCM, more than the {} B the preset has (tiling "
          "through DDR in bands is not implemented in the backend)",
          need, ocm);
    return std::nullopt;
  }

  // The array computes in int8: conformance calibrates each case on its own inputs for it.
  DType compute_precision() const override { return DType::i8; }

  // Without --int8 TABLE the graph arrives in f32: calibrate it on seeded inputs so that the
  // network still runs on the array (the warning says how to pass a real table).
  void prepare(Graph& graph) const override { compiler::self_calibrate(graph, name()); }

  std::unique_ptr<Step> lower(const Graph& g, int node_index) const override {
    const Node& n = g.nodes[static_cast<std::size_t>(node_index)];
    if (is_convert(n.op)) return std::make_unique<ConvertStep>(node_index);
    if (n.op == "Softmax") return std::make_unique<SoftmaxStep>(node_index);
    if (!compiler::is_int8_op(n.op))
      throw_internal_error("epu backend asked to lower {}", n.describe());
    return std::make_unique<EpuStep>(node_index);
  }

 private:
  // OCM of the default preset; a run on another preset faults in the kernel if it has less.
  static std::uint64_t ocm_capacity(const Graph&) {
    static const std::uint64_t bytes = [] {
      return static_cast<std::uint64_t>(
          arch::load_machine("chimera-q16").memory("ocm").capacity_bytes.value);
    }();
    return bytes;
  }
};

}  // namespace

std::unique_ptr<compiler::Backend> make_epu_backend() {
  return std::make_unique<EpuBackend>();
}

}  // namespace tessera::epu

namespace tessera::targets {

void register_epu_backend() {
  compiler::register_backend(epu::make_epu_backend);
}

}  // namespace tessera::targets
