#include "tessera/targets/tpc/backend/backend.h"

#include <algorithm>
#include <any>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "tessera/compiler/reference_exec.h"
#include "tessera/compiler/slice.h"
#include "tessera/core/error.h"
#include "tessera/ops/host_conv.h"
#include "tessera/targets/tpc/kernels.h"

namespace tessera::tpc {
namespace {

using compiler::Activation;
using compiler::ExecContext;
using compiler::Graph;
using compiler::ints_operand;
using compiler::kNoValue;
using compiler::Layout;
using compiler::Node;
using compiler::slice_starts;
using compiler::Step;
using compiler::ValueId;

// Channels last (spec 000 §2.4.6: the TPC prefers NHWC), with convolution weights HWIO, the
// order the MME reads them in.
const Layout& nhwc() {
  static const Layout layout{"nhwc", {0, 2, 3, 1}, "hwio", {2, 3, 1, 0}};
  return layout;
}

const std::set<std::string> kUnary = {
    "Relu", "LeakyRelu", "Elu",  "Selu",  "Sigmoid", "Tanh", "Softplus", "Exp",   "Log",
    "Sqrt", "Reciprocal", "Abs", "Neg",   "Clip",    "Erf",  "Floor",    "Ceil",  "Round",
    "Sin",  "Cos",        "Tan", "Asin",  "Acos",    "Atan", "Sinh",     "Cosh",  "Asinh",
    "Acosh", "Atanh"};
// Unary ops whose TPC kernel is named after the op in lower case (floor_f32, sin_bf16).
const std::set<std::string> kNamedUnary = {"Floor", "Ceil", "Round", "Sin",   "Cos",
                                           "Tan",   "Asin", "Acos",  "Atan",  "Sinh",
                                           "Cosh",  "Asinh", "Acosh", "Atanh"};
// ONNX compares and the compare kernels they run.
const std::map<std::string, std::string> kCompare = {{"Equal", "equal"},
                                                     {"Less", "less"},
                                                     {"Greater", "greater"},
                                                     {"LessOrEqual", "less_equal"},
                                                     {"GreaterOrEqual", "greater_equal"}};
const std::set<std::string> kLogic = {"And", "Or", "Xor"};
const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div", "Pow"};
const std::set<std::string> kReduce = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"};

bool compute_dtype(DType t) {
  return t == DType::f32 || t == DType::bf16;
}
bool movable_dtype(DType t) {
  return dtype_size(t) <= 4 && t != DType::boolean;
}
// Booleans are u8 tensors of 0/1 on the TPC.
DType tpc_dtype(DType t) {
  return t == DType::boolean ? DType::u8 : t;
}
std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}
bool cast_dtype(DType t) {
  return t == DType::f32 || t == DType::bf16 || t == DType::i32 || t == DType::i16 ||
         t == DType::i8 || t == DType::u8;
}

const Tensor* constant(const Graph& g, const Node& n, std::size_t i) {
  if (i >= n.inputs.size() || n.inputs[i] == kNoValue) return nullptr;
  const auto& v = g.value(n.inputs[i]);
  return v.constant ? &*v.constant : nullptr;
}
bool has_input(const Node& n, std::size_t i) {
  return i < n.inputs.size() && n.inputs[i] != kNoValue;
}

// Clip bounds: attributes before opset 11, constant scalar inputs after.
std::optional<std::pair<std::optional<float>, std::optional<float>>> clip_bounds(const Graph& g,
                                                                                 const Node& n) {
  std::optional<float> lo, hi;
  if (g.opset < 11) {
    if (n.has_attr("min")) lo = n.attr_float("min", 0.0f);
    if (n.has_attr("max")) hi = n.attr_float("max", 0.0f);
    return std::make_pair(lo, hi);
  }
  for (std::size_t i = 1; i < 3; ++i) {
    if (!has_input(n, i)) continue;
    const Tensor* t = constant(g, n, i);
    if (!t || t->element_count() != 1) return std::nullopt;
    (i == 1 ? lo : hi) = t->at<float>(0);
  }
  return std::make_pair(lo, hi);
}

std::optional<std::vector<int>> reduce_axes(const Graph& g, const Node& n, int rank) {
  std::vector<std::int64_t> onnx_axes;
  if (has_input(n, 1)) {
    const Tensor* t = constant(g, n, 1);
    if (!t) return std::nullopt;
    onnx_axes = t->to_ints();
  } else {
    onnx_axes = n.attr_ints("axes");
  }
  std::vector<int> axes;
  for (auto a : onnx_axes) axes.push_back(compiler::tessera_axis(a, rank, n.describe()));
  return axes;
}

class GaudiBackend final : public compiler::Backend {
 public:
  std::string name() const override { return "gaudi"; }
  std::string description() const override {
    return "Habana Gaudi: TPC built-in kernels and the MME through tpc::Runtime (spec 000); "
           "NHWC conv/pool/norm";
  }
  std::string default_device() const override { return "gaudi"; }
  std::vector<std::string> device_targets() const override { return {"tpc"}; }

  Layout preferred_layout(const Node& n, const Graph& g) const override {
    const DType t = g.value(n.outputs[0]).dtype;
    if (!compute_dtype(t)) return Layout{};
    // Weights that are not constants go HWIO through a TPC transpose before the MME conv.
    if (n.op == "Conv") return has_input(n, 1) ? nhwc() : Layout{};
    if (n.op == "MaxPool" || n.op == "AveragePool" || n.op == "GlobalAveragePool" ||
        n.op == "GlobalMaxPool" || n.op == "BatchNormalization" || n.op == "InstanceNormalization")
      return nhwc();
    // Elementwise ops stay NHWC between NHWC producers, so no transposes run between them.
    if (kUnary.count(n.op) || kBinary.count(n.op)) {
      const Shape& out = g.value(n.outputs[0]).shape;
      bool nhwc_producer = false;
      for (ValueId v : n.inputs) {
        if (v == kNoValue) continue;
        const auto& value = g.value(v);
        if (value.constant) {
          if (value.shape.element_count() != 1) return Layout{};
          continue;
        }
        if (!(value.shape == out)) return Layout{};
        if (value.producer >= 0 &&
            preferred_layout(g.nodes[static_cast<std::size_t>(value.producer)], g) == nhwc())
          nhwc_producer = true;
      }
      return nhwc_producer ? nhwc() : Layout{};
    }
    // Concat joins NHWC producers' outputs where they lie (fire modules' expand branches), so
    // no transposes run around it; the layout pass moves every input, so none may be constant.
    if (n.op == "Concat" && movable_dtype(t)) {
      bool nhwc_producer = false;
      for (ValueId v : n.inputs) {
        if (v == kNoValue || g.value(v).constant) return Layout{};
        const int p = g.value(v).producer;
        if (p >= 0 && preferred_layout(g.nodes[static_cast<std::size_t>(p)], g) == nhwc())
          nhwc_producer = true;
      }
      return nhwc_producer ? nhwc() : Layout{};
    }
    return Layout{};
  }

  std::optional<std::string> unsupported_reason(const Node& n, const Graph& g) const override {
    // The first output may be optional and unused (GRU/LSTM's Y when only Y_h is read).
    const auto used =
        std::find_if(n.outputs.begin(), n.outputs.end(), [](ValueId v) { return v != kNoValue; });
    if (used == n.outputs.end()) return std::string("no output of the node is used");
    if (used != n.outputs.begin()) return std::string("its first output is not used");
    const auto& out = g.value(*used);
    const DType t = out.dtype;
    auto need_compute = [&]() -> std::optional<std::string> {
      if (!compute_dtype(t))
        return fmt::format("the TPC kernels compute f32 and bf16, not {}", dtype_name(t));
      for (ValueId v : n.inputs)
        if (v != kNoValue && g.value(v).dtype != t) return std::string("inputs of mixed dtypes");
      return std::nullopt;
    };
    if (n.activation.kind != Activation::Kind::none && n.op != "Conv" && n.op != "Gemm" &&
        n.op != "MatMul")
      return std::string("fused activation on an op without a TPC epilogue");
    if (n.op == "Conv") {
      if (auto r = need_compute()) return r;
      if (n.layout != nhwc())
        return std::string("the MME convolves NHWC activations; this Conv is not 2-D NHWC");
      if (has_input(n, 2) && !constant(g, n, 2)) return std::string("a non-constant bias");
      return std::nullopt;
    }
    if (n.op == "Gemm") {
      if (auto r = need_compute()) return r;
      if (has_input(n, 2)) {
        const Tensor* c = constant(g, n, 2);
        const std::int64_t cols = out.shape[0];
        if (!c || c->element_count() != cols || n.attr_float("beta", 1.0f) != 1.0f ||
            (c->rank() == 2 && c->dim(1) != 1) || c->rank() > 2)
          return std::string("C other than a constant row bias with beta 1");
      }
      return std::nullopt;
    }
    if (n.op == "MatMul") {
      if (auto r = need_compute()) return r;
      if (g.value(n.inputs[0]).shape.rank() < 2 || g.value(n.inputs[1]).shape.rank() < 2)
        return std::string("1-D MatMul operands");
      return std::nullopt;
    }
    if (kBinary.count(n.op)) return need_compute();
    if (kUnary.count(n.op)) {
      if (auto r = need_compute()) return r;
      if (n.op == "Clip" && !clip_bounds(g, n))
        return std::string("Clip bounds that are not constants");
      return std::nullopt;
    }
    if (n.op == "MaxPool" || n.op == "AveragePool") {
      if (n.outputs.size() > 1 && n.outputs[1] != kNoValue)
        return std::string("the Indices output of MaxPool");
      if (auto r = need_compute()) return r;
      if (n.layout != nhwc() || n.attr_ints("kernel_shape").size() != 2)
        return std::string("only 2-D NHWC pooling");
      return std::nullopt;
    }
    if (n.op == "GlobalAveragePool" || n.op == "GlobalMaxPool" || n.op == "BatchNormalization") {
      if (auto r = need_compute()) return r;
      if (n.layout != nhwc()) return std::string("only 4-D NHWC");
      for (std::size_t i = 1; i < n.inputs.size(); ++i)
        if (!constant(g, n, i)) return std::string("non-constant normalisation parameters");
      return std::nullopt;
    }
    if (n.op == "InstanceNormalization") {
      if (auto r = need_compute()) return r;
      if (n.layout != nhwc()) return std::string("only 4-D NHWC");
      return std::nullopt;
    }
    if (n.op == "LayerNormalization") {
      if (auto r = need_compute()) return r;
      for (std::size_t i = 1; i < n.outputs.size(); ++i)
        if (n.outputs[i] != kNoValue) return std::string("the Mean and InvStdDev outputs");
      if (n.attr_int("stash_type", 1) != 1) return std::string("stash_type other than float");
      return std::nullopt;
    }
    if (n.op == "Softmax" || n.op == "LogSoftmax") {
      if (auto r = need_compute()) return r;
      const int rank = out.shape.rank();
      const std::int64_t axis = n.attr_int("axis", g.opset >= 13 ? -1 : 1);
      if (g.opset < 13 && axis != rank - 1 && axis != -1)
        return std::string("pre-opset-13 softmax over several axes");
      return std::nullopt;
    }
    if (kReduce.count(n.op)) {
      if (auto r = need_compute()) return r;
      if (!reduce_axes(g, n, g.value(n.inputs[0]).shape.rank()))
        return std::string("non-constant axes");
      if (n.attr_int("noop_with_empty_axes", 0) != 0) return std::string("noop_with_empty_axes");
      return std::nullopt;
    }
    if (n.op == "Transpose" || n.op == "Concat") {
      if (!movable_dtype(t)) return fmt::format("no TPC data movement for {}", dtype_name(t));
      return std::nullopt;
    }
    if (n.op == "Sum" || n.op == "Max" || n.op == "Min") return need_compute();
    if (n.op == "ArgMax") {
      const DType in = g.value(n.inputs[0]).dtype;
      if (!compute_dtype(in))
        return fmt::format("argmax kernels read f32 and bf16, not {}", dtype_name(in));
      return std::nullopt;
    }
    if (n.op == "Expand" || n.op == "Slice" || n.op == "Split" || n.op == "Gather" ||
        n.op == "Pad") {
      if (!movable_dtype(t)) return fmt::format("no TPC data movement for {}", dtype_name(t));
      if (n.op == "Slice" && !slice_starts(g, n)) return std::string("non-constant slice bounds");
      if (n.op == "Split" && has_input(n, 1) && !constant(g, n, 1))
        return std::string("non-constant split sizes");
      if (n.op == "Gather" && g.value(n.inputs[1]).dtype != DType::i32)
        return std::string("indices that are not int32");
      if (n.op == "Pad") {
        if (!ints_operand(g, n, "pads", 1)) return std::string("non-constant pads");
        if (has_input(n, 2) && !constant(g, n, 2)) return std::string("a non-constant pad value");
        if (has_input(n, 3)) return std::string("the axes input");
      }
      return std::nullopt;
    }
    if (n.op == "Cast") {
      if (!cast_dtype(t) || !cast_dtype(g.value(n.inputs[0]).dtype))
        return std::string("a cast between these dtypes");
      return std::nullopt;
    }
    auto input_dtype = [&](std::size_t i) { return g.value(n.inputs[i]).dtype; };
    auto same_inputs = [&](std::size_t count) {
      for (std::size_t i = 1; i < count; ++i)
        if (input_dtype(i) != input_dtype(0)) return false;
      return true;
    };
    if (kCompare.count(n.op)) {
      const DType in = input_dtype(0);
      if (!same_inputs(2)) return std::string("inputs of mixed dtypes");
      if (in != DType::f32 && in != DType::bf16 && in != DType::i32 && in != DType::boolean &&
          in != DType::u8)
        return fmt::format("the compare kernels read f32, bf16, i32 and u8, not {}",
                           dtype_name(in));
      return std::nullopt;
    }
    if (kLogic.count(n.op) || n.op == "Not") {
      for (ValueId v : n.inputs)
        if (g.value(v).dtype != DType::boolean) return std::string("non-boolean operands");
      return std::nullopt;
    }
    if (n.op == "Where") {
      if (input_dtype(0) != DType::boolean) return std::string("a non-boolean condition");
      if (input_dtype(1) != t || input_dtype(2) != t) return std::string("inputs of mixed dtypes");
      const DType v = tpc_dtype(t);
      if (v != DType::f32 && v != DType::bf16 && v != DType::i32 && v != DType::i16 &&
          v != DType::i8 && v != DType::u8)
        return fmt::format("no TPC select for {}", dtype_name(t));
      return std::nullopt;
    }
    if (n.op == "PRelu") return need_compute();
    if (n.op == "Mod") {
      if (!same_inputs(2) || input_dtype(0) != t) return std::string("inputs of mixed dtypes");
      // i16/i8/u8 run mod_f32 between the library's casts, exact for their values.
      if (t == DType::i32 || t == DType::i16 || t == DType::i8 || t == DType::u8)
        return std::nullopt;
      if (compute_dtype(t))
        return n.attr_int("fmod", 0) != 0
                   ? std::nullopt
                   : std::optional<std::string>("a floating-point Mod without fmod = 1");
      return fmt::format("the Mod kernels compute i32, i16, i8, u8, f32 and bf16, not {}",
                         dtype_name(t));
    }
    if (n.op == "ArgMin") {
      const DType in = input_dtype(0);
      if (!compute_dtype(in))
        return fmt::format("argmin kernels read f32 and bf16, not {}", dtype_name(in));
      return std::nullopt;
    }
    if (n.op == "CumSum") {
      if (t != DType::f32 && t != DType::i32)
        return fmt::format("the cumsum kernels sum f32 and i32, not {}", dtype_name(t));
      if (g.value(n.inputs[1]).shape.element_count() != 1)
        return std::string("an axis that is not one value");
      return std::nullopt;
    }
    if (n.op == "TopK") {
      if (input_dtype(0) != DType::f32)
        return fmt::format("the top_k kernel reads f32, not {}", dtype_name(input_dtype(0)));
      if (n.outputs.size() < 2 || n.outputs[1] == kNoValue ||
          g.value(n.outputs[1]).dtype != DType::i32)
        return std::string("indices that are not int32");
      if (g.opset >= 10 && !constant(g, n, 1)) return std::string("a non-constant K");
      return std::nullopt;
    }
    if (n.op == "Tile" || n.op == "DepthToSpace" || n.op == "SpaceToDepth") {
      const DType v = tpc_dtype(t);
      if (!movable_dtype(v)) return fmt::format("no TPC data movement for {}", dtype_name(t));
      if (n.op != "Tile" && out.shape.rank() != 4) return std::string("a rank other than 4");
      return std::nullopt;
    }
    return fmt::format("no TPC kernel for {}", n.op);
  }

  std::unique_ptr<Step> lower(const Graph&, int node_index) const override;
};

// Runs one node through tpc::ops on the plan's device buffers.
class GaudiStep final : public Step {
 public:
  explicit GaudiStep(int node) : node_(node) {}

  void run(ExecContext& ctx) override {
    const Graph& g = ctx.graph();
    const Node& n = g.nodes[static_cast<std::size_t>(node_)];
    Runtime& rt = runtime(ctx);
    auto dt = [&](ValueId v) {
      const auto place = ctx.placement(v);
      DeviceTensor t;
      t.buffer = place.buffer;
      t.byte_offset = place.offset;
      t.dtype = tpc_dtype(g.value(v).dtype);
      t.shape = g.value(v).shape;
      return t;
    };
    const DeviceTensor out = dt(n.outputs[0]);
    const std::string& op = n.op;
    if (op == "Conv") {
      MmeConvParams p;
      const auto strides = n.attr_ints("strides"), dil = n.attr_ints("dilations"),
                 pads = n.attr_ints("pads");
      for (int j = 0; j < 2; ++j) {
        if (strides.size() == 2) p.strides[j] = strides[static_cast<std::size_t>(j)];
        if (dil.size() == 2) p.dilations[j] = dil[static_cast<std::size_t>(j)];
      }
      if (pads.size() == 4)
        for (int j = 0; j < 4; ++j) p.pads[j] = pads[static_cast<std::size_t>(j)];
      p.group = n.attr_int("group", 1);
      // The plan's constant weights stay put from run to run: their host reorder is kept.
      if (g.value(n.inputs[1]).is_constant()) p.kept_weights = &conv_weights_;
      DeviceTensor bias;
      if (has_input(n, 2)) bias = dt(n.inputs[2]);
      ops::conv2d(rt, dt(n.inputs[0]), dt(n.inputs[1]), has_input(n, 2) ? &bias : nullptr, out, p);
    } else if (op == "Gemm") {
      MmeGemmParams p;
      p.alpha = n.attr_float("alpha", 1.0f);
      p.trans_a = n.attr_int("transA", 0) != 0;
      p.trans_b = n.attr_int("transB", 0) != 0;
      DeviceTensor bias;
      if (has_input(n, 2)) {
        bias = dt(n.inputs[2]);
        bias.shape = Shape{out.shape[0]};
      }
      ops::gemm(rt, dt(n.inputs[0]), dt(n.inputs[1]), out, p, has_input(n, 2) ? &bias : nullptr);
    } else if (op == "MatMul") {
      const DeviceTensor a = dt(n.inputs[0]), b = dt(n.inputs[1]);
      if (a.shape.rank() == 2 && b.shape.rank() == 2)
        ops::gemm(rt, a, b, out);
      else
        ops::batch_gemm(rt, a, b, out);
    } else if (kBinary.count(op)) {
      const DeviceTensor a = dt(n.inputs[0]), b = dt(n.inputs[1]);
      if (op == "Add")
        ops::add(rt, a, b, out);
      else if (op == "Sub")
        ops::sub(rt, a, b, out);
      else if (op == "Mul")
        ops::mul(rt, a, b, out);
      else if (op == "Div")
        ops::div(rt, a, b, out);
      else
        ops::pow(rt, a, b, out);
    } else if (kUnary.count(op)) {
      run_unary(rt, g, n, dt(n.inputs[0]), out);
    } else if (op == "MaxPool" || op == "AveragePool") {
      kernels::Pool2dParams p;
      const auto k = n.attr_ints("kernel_shape"), s = n.attr_ints("strides"),
                 d = n.attr_ints("dilations"), pads = n.attr_ints("pads");
      for (int j = 0; j < 2; ++j) {
        p.kernel[j] = static_cast<std::int32_t>(k[static_cast<std::size_t>(j)]);
        if (s.size() == 2) p.strides[j] = static_cast<std::int32_t>(s[static_cast<std::size_t>(j)]);
        if (d.size() == 2)
          p.dilations[j] = static_cast<std::int32_t>(d[static_cast<std::size_t>(j)]);
      }
      if (pads.size() == 4)
        for (int j = 0; j < 4; ++j)
          p.pads[j] = static_cast<std::int32_t>(pads[static_cast<std::size_t>(j)]);
      p.ceil_mode = static_cast<std::int32_t>(n.attr_int("ceil_mode", 0));
      p.count_include_pad = static_cast<std::int32_t>(n.attr_int("count_include_pad", 0));
      if (op == "MaxPool")
        ops::max_pool_2d(rt, dt(n.inputs[0]), out, p);
      else
        ops::avg_pool_2d(rt, dt(n.inputs[0]), out, p);
    } else if (op == "GlobalAveragePool") {
      ops::global_avg_pool_2d(rt, dt(n.inputs[0]), out);
    } else if (op == "GlobalMaxPool") {
      ops::global_max_pool_2d(rt, dt(n.inputs[0]), out);
    } else if (op == "BatchNormalization") {
      ops::batch_norm(rt, dt(n.inputs[0]), dt(n.inputs[1]), dt(n.inputs[2]), dt(n.inputs[3]),
                      dt(n.inputs[4]), out, n.attr_float("epsilon", 1e-5f));
    } else if (op == "InstanceNormalization") {
      ops::instance_norm(rt, dt(n.inputs[0]), dt(n.inputs[1]), dt(n.inputs[2]), out,
                         n.attr_float("epsilon", 1e-5f));
    } else if (op == "LayerNormalization") {
      const int axis =
          compiler::tessera_axis(n.attr_int("axis", -1), out.shape.rank(), n.describe());
      const bool has_bias = has_input(n, 2);
      const DeviceTensor bias = has_bias ? dt(n.inputs[2]) : DeviceTensor{};
      ops::layer_norm(rt, dt(n.inputs[0]), dt(n.inputs[1]), has_bias ? &bias : nullptr, out, axis,
                      n.attr_float("epsilon", 1e-5f));
    } else if (op == "Softmax" || op == "LogSoftmax") {
      const int rank = out.shape.rank();
      const int axis =
          compiler::tessera_axis(n.attr_int("axis", g.opset >= 13 ? -1 : 1), rank, n.describe());
      if (op == "Softmax")
        ops::softmax(rt, dt(n.inputs[0]), out, axis);
      else
        ops::log_softmax(rt, dt(n.inputs[0]), out, axis);
    } else if (kReduce.count(op)) {
      const DeviceTensor x = dt(n.inputs[0]);
      const auto axes = *reduce_axes(g, n, x.shape.rank());
      if (op == "ReduceSum")
        ops::reduce_sum(rt, x, out, axes);
      else if (op == "ReduceMean")
        ops::reduce_mean(rt, x, out, axes);
      else if (op == "ReduceMax")
        ops::reduce_max(rt, x, out, axes);
      else
        ops::reduce_min(rt, x, out, axes);
    } else if (op == "Transpose") {
      const int r = out.shape.rank();
      const auto p = n.attr_ints("perm");
      std::vector<int> perm;
      for (int j = 0; j < r; ++j)
        perm.push_back(p.empty()
                           ? r - 1 - j
                           : r - 1 - static_cast<int>(p[static_cast<std::size_t>(r - 1 - j)]));
      ops::transpose(rt, dt(n.inputs[0]), out, perm);
    } else if (op == "Concat") {
      std::vector<DeviceTensor> ins;
      for (ValueId v : n.inputs) ins.push_back(dt(v));
      const int rank = out.shape.rank();
      std::int64_t axis = n.attr_int("axis", 0);
      if (!n.layout.is_default()) {
        // The attribute names an ONNX axis; in the node's layout it sits where perm points to it.
        if (axis < 0) axis += rank;
        const auto& perm = n.layout.perm;
        axis = std::find(perm.begin(), perm.end(), axis) - perm.begin();
      }
      ops::concat(rt, ins, out, compiler::tessera_axis(axis, rank, n.describe()));
    } else if (op == "Cast") {
      ops::cast(rt, dt(n.inputs[0]), out);
    } else if (op == "Sum" || op == "Max" || op == "Min") {
      // Variadic: the first pair into the output, then each further input folded in place.
      auto binary = [&](const DeviceTensor& a, const DeviceTensor& b) {
        if (op == "Sum")
          ops::add(rt, a, b, out);
        else if (op == "Max")
          ops::max(rt, a, b, out);
        else
          ops::min(rt, a, b, out);
      };
      if (n.inputs.size() == 1) {
        ops::expand(rt, dt(n.inputs[0]), out);
      } else {
        binary(dt(n.inputs[0]), dt(n.inputs[1]));
        for (std::size_t i = 2; i < n.inputs.size(); ++i) binary(out, dt(n.inputs[i]));
      }
    } else if (kCompare.count(op)) {
      ops::compare(rt, kCompare.at(op), dt(n.inputs[0]), dt(n.inputs[1]), out);
    } else if (kLogic.count(op)) {
      ops::logical(rt, lower(op), dt(n.inputs[0]), dt(n.inputs[1]), out);
    } else if (op == "Not") {
      ops::logical_not(rt, dt(n.inputs[0]), out);
    } else if (op == "Where") {
      ops::where(rt, dt(n.inputs[0]), dt(n.inputs[1]), dt(n.inputs[2]), out);
    } else if (op == "PRelu") {
      ops::prelu(rt, dt(n.inputs[0]), dt(n.inputs[1]), out);
    } else if (op == "Mod") {
      ops::mod(rt, dt(n.inputs[0]), dt(n.inputs[1]), out, n.attr_int("fmod", 0) != 0);
    } else if (op == "ArgMin") {
      const DeviceTensor x = dt(n.inputs[0]);
      ops::argmin(rt, x, out,
                  compiler::tessera_axis(n.attr_int("axis", 0), x.shape.rank(), n.describe()),
                  n.attr_int("select_last_index", 0) != 0);
    } else if (op == "CumSum") {
      const DeviceTensor x = dt(n.inputs[0]);
      // The axis picks the index space, which the glue lays out on the host: a computed axis
      // is read back from the device, as the runtime reads shape tensors.
      std::int64_t axis = 0;
      if (const Tensor* c = constant(g, n, 1)) {
        axis = c->to_ints().at(0);
      } else {
        const DeviceTensor a = dt(n.inputs[1]);
        std::int32_t v = 0;
        ctx.device().copy_to_host(&v, a.buffer, sizeof v, a.byte_offset);
        axis = v;
      }
      ops::cumsum(rt, x, out, compiler::tessera_axis(axis, x.shape.rank(), n.describe()),
                  n.attr_int("exclusive", 0) != 0, n.attr_int("reverse", 0) != 0);
    } else if (op == "TopK") {
      const DeviceTensor x = dt(n.inputs[0]);
      std::int64_t k = n.attr_int("k", 0);
      if (g.opset >= 10) {
        const auto ks = constant(g, n, 1)->to_ints();
        if (ks.size() != 1)
          throw_user_error("{}: K must hold one value, got {}", n.describe(), ks.size());
        k = ks[0];
      }
      const int axis =
          compiler::tessera_axis(n.attr_int("axis", -1), x.shape.rank(), n.describe());
      if (k < 1 || k > x.shape[axis])
        throw_user_error("{}: K = {} must be in 1..{}, the size of the axis", n.describe(), k,
                         x.shape[axis]);
      ops::top_k(rt, x, out, dt(n.outputs[1]), axis, static_cast<int>(k),
                 n.attr_int("largest", 1) != 0);
    } else if (op == "Tile") {
      ops::tile(rt, dt(n.inputs[0]), out);
    } else if (op == "DepthToSpace") {
      ops::depth_to_space(rt, dt(n.inputs[0]), out,
                          static_cast<int>(n.attr_int("blocksize", 1)),
                          n.attr_string("mode", "DCR") == "CRD");
    } else if (op == "SpaceToDepth") {
      ops::space_to_depth(rt, dt(n.inputs[0]), out, static_cast<int>(n.attr_int("blocksize", 1)));
    } else if (op == "ArgMax") {
      const DeviceTensor x = dt(n.inputs[0]);
      ops::argmax(rt, x, out,
                  compiler::tessera_axis(n.attr_int("axis", 0), x.shape.rank(), n.describe()),
                  n.attr_int("select_last_index", 0) != 0);
    } else if (op == "Expand") {
      ops::expand(rt, dt(n.inputs[0]), out);
    } else if (op == "Slice") {
      const auto [first, step] = *slice_starts(g, n);
      ops::slice(rt, dt(n.inputs[0]), out, first, step);
    } else if (op == "Split") {
      // Each output is a slice along the axis, starting where the previous one ended.
      const DeviceTensor x = dt(n.inputs[0]);
      const int axis = compiler::tessera_axis(n.attr_int("axis", 0), x.shape.rank(), n.describe());
      std::vector<std::int64_t> first(static_cast<std::size_t>(x.shape.rank()), 0);
      for (ValueId v : n.outputs) {
        if (v == kNoValue) continue;
        const DeviceTensor piece = dt(v);
        ops::slice(rt, x, piece, first);
        first[static_cast<std::size_t>(axis)] += piece.shape[axis];
      }
    } else if (op == "Gather") {
      const DeviceTensor data = dt(n.inputs[0]);
      ops::gather(rt, data, dt(n.inputs[1]), out,
                  compiler::tessera_axis(n.attr_int("axis", 0), data.shape.rank(), n.describe()));
    } else if (op == "Pad") {
      const DeviceTensor x = dt(n.inputs[0]);
      const int r = x.shape.rank();
      const auto onnx_pads = *ints_operand(g, n, "pads", 1);
      if (onnx_pads.size() != static_cast<std::size_t>(2 * r))
        throw_user_error("{}: pads must list {} values, got {}", n.describe(), 2 * r,
                         onnx_pads.size());
      std::vector<std::int64_t> pads(onnx_pads.size());
      for (int d = 0; d < r; ++d) {
        pads[static_cast<std::size_t>(d)] = onnx_pads[static_cast<std::size_t>(r - 1 - d)];
        pads[static_cast<std::size_t>(r + d)] = onnx_pads[static_cast<std::size_t>(2 * r - 1 - d)];
      }
      double value = n.attr_float("value", 0.0f);
      if (has_input(n, 2) && constant(g, n, 2)->element_count() > 0)
        value = constant(g, n, 2)->at<double>(0);
      const std::string mode = n.attr_string("mode", "constant");
      const auto m = mode == "reflect" ? kernels::PadMode::reflect
                     : mode == "edge"  ? kernels::PadMode::edge
                                       : kernels::PadMode::constant;
      ops::pad(rt, x, out, pads, value, m);
    } else {
      throw_internal_error("gaudi backend: {} was lowered but has no launch", n.describe());
    }
    apply_activation(rt, n.activation, out);
    for (ValueId v : n.outputs)
      if (v != kNoValue) ctx.invalidate(v);
  }

 private:
  static Runtime& runtime(ExecContext& ctx) {
    auto& state = ctx.backend_state();
    if (!state.has_value()) state = std::make_shared<Runtime>(ctx.device());
    return *std::any_cast<std::shared_ptr<Runtime>&>(state);
  }

  static void run_unary(Runtime& rt, const Graph& g, const Node& n, const DeviceTensor& x,
                        const DeviceTensor& out) {
    const std::string& op = n.op;
    if (op == "Relu")
      ops::relu(rt, x, out);
    else if (op == "LeakyRelu")
      ops::leaky_relu(rt, x, out, n.attr_float("alpha", 0.01f));
    else if (op == "Elu")
      ops::elu(rt, x, out, n.attr_float("alpha", 1.0f));
    else if (op == "Selu")
      ops::selu(rt, x, out, n.attr_float("alpha", 1.67326319217681884765625f),
                n.attr_float("gamma", 1.05070102214813232421875f));
    else if (op == "Sigmoid")
      ops::sigmoid(rt, x, out);
    else if (op == "Tanh")
      ops::tanh(rt, x, out);
    else if (op == "Softplus")
      ops::softplus(rt, x, out);
    else if (op == "Exp")
      ops::exp(rt, x, out);
    else if (op == "Log")
      ops::log(rt, x, out);
    else if (op == "Sqrt")
      ops::sqrt(rt, x, out);
    else if (op == "Reciprocal")
      ops::reciprocal(rt, x, out);
    else if (op == "Abs")
      ops::abs(rt, x, out);
    else if (op == "Neg")
      ops::neg(rt, x, out);
    else if (op == "Erf")
      ops::erf(rt, x, out);
    else if (kNamedUnary.count(op))
      ops::unary(rt, lower(op), x, out);
    else {
      const auto bounds = *clip_bounds(g, n);
      ops::clip(rt, x, out, bounds.first, bounds.second);
    }
  }

  // The fused activation runs as a TPC kernel in place on the MME's output.
  static void apply_activation(Runtime& rt, const Activation& a, const DeviceTensor& out) {
    switch (a.kind) {
      case Activation::Kind::none:
        return;
      case Activation::Kind::relu:
        ops::relu(rt, out, out);
        return;
      case Activation::Kind::leaky_relu:
        ops::leaky_relu(rt, out, out, a.alpha);
        return;
      case Activation::Kind::clip:
        ops::clip(rt, out, out, a.min, a.max);
        return;
      case Activation::Kind::sigmoid:
        ops::sigmoid(rt, out, out);
        return;
      case Activation::Kind::tanh:
        ops::tanh(rt, out, out);
        return;
    }
  }

  int node_;
  tessera::ops::HostConvWeights conv_weights_;  // a Conv's, kept between runs
};

std::unique_ptr<Step> GaudiBackend::lower(const Graph&, int node_index) const {
  return std::make_unique<GaudiStep>(node_index);
}

}  // namespace

std::unique_ptr<compiler::Backend> make_gaudi_backend() {
  return std::make_unique<GaudiBackend>();
}

void register_tpc_backend() {
  const auto b = make_gaudi_backend();
  compiler::register_backend({b->name(), b->description(), [] { return make_gaudi_backend(); }});
}

}  // namespace tessera::tpc
