#include "tessera/targets/ipu/backend/backend.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplin/Convolution.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popnn/NonLinearity.hpp>
#include <popnn/Pooling.hpp>
#include <popnn/codelets.hpp>
#include <popops/ElementWise.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>
#include <poputil/exceptions.hpp>

#include "tessera/core/error.h"
#include "tessera/core/log.h"

namespace tessera::ipu {
namespace {

using compiler::Activation;
using compiler::ExecContext;
using compiler::Graph;
using compiler::kNoValue;
using compiler::Node;
using compiler::NodeStep;
using compiler::Plan;
using compiler::Step;
using compiler::ValueId;
namespace pe = popops::expr;

// A Poplar shape (outermost first) of a Tessera shape (fastest first).
std::vector<std::size_t> poplar_shape(const Shape& s) {
  std::vector<std::size_t> out;
  for (int d = s.rank() - 1; d >= 0; --d) out.push_back(static_cast<std::size_t>(s[d]));
  return out;
}

bool has_input(const Node& n, std::size_t i) {
  return n.inputs.size() > i && n.inputs[i] != kNoValue;
}

// ONNX ops that only rename their input's elements: a view of the input's tensor.
bool is_view(const Node& n) {
  return n.op == "Reshape" || n.op == "Flatten" || n.op == "Squeeze" || n.op == "Unsqueeze" ||
         n.op == "Identity" || n.op == "Dropout";
}

std::optional<pe::UnaryOpType> unary_of(const std::string& op) {
  static const std::pair<const char*, pe::UnaryOpType> table[] = {
      {"Relu", pe::UnaryOpType::RELU},         {"Sigmoid", pe::UnaryOpType::SIGMOID},
      {"Tanh", pe::UnaryOpType::TANH},         {"Exp", pe::UnaryOpType::EXPONENT},
      {"Log", pe::UnaryOpType::LOGARITHM},     {"Sqrt", pe::UnaryOpType::SQRT},
      {"Abs", pe::UnaryOpType::ABSOLUTE},      {"Neg", pe::UnaryOpType::NEGATE},
      {"Floor", pe::UnaryOpType::FLOOR},       {"Ceil", pe::UnaryOpType::CEIL},
      {"Reciprocal", pe::UnaryOpType::INVERSE}, {"Erf", pe::UnaryOpType::ERF},
      {"Sin", pe::UnaryOpType::SIN},           {"Cos", pe::UnaryOpType::COS}};
  for (const auto& [name, t] : table)
    if (op == name) return t;
  return std::nullopt;
}

std::optional<pe::BinaryOpType> binary_of(const std::string& op) {
  static const std::pair<const char*, pe::BinaryOpType> table[] = {
      {"Add", pe::BinaryOpType::ADD},     {"Sub", pe::BinaryOpType::SUBTRACT},
      {"Mul", pe::BinaryOpType::MULTIPLY}, {"Div", pe::BinaryOpType::DIVIDE},
      {"Pow", pe::BinaryOpType::POWER},   {"Max", pe::BinaryOpType::MAXIMUM},
      {"Min", pe::BinaryOpType::MINIMUM}};
  for (const auto& [name, t] : table)
    if (op == name) return t;
  return std::nullopt;
}

// A scalar operand given as a constant input (Clip's min/max); nullopt when absent.
std::optional<float> constant_scalar(const Graph& g, const Node& n, std::size_t i) {
  if (!has_input(n, i)) return std::nullopt;
  const auto& v = g.value(n.inputs[i]);
  if (!v.constant || v.shape.element_count() != 1) return std::nullopt;
  return static_cast<float>(v.constant->to_doubles()[0]);
}

// Clip's bounds: attributes (opset < 11) or constant inputs; each defaults to no bound.
std::pair<float, float> clip_bounds(const Graph& g, const Node& n) {
  float lo = n.attr_float("min", -INFINITY), hi = n.attr_float("max", INFINITY);
  if (auto v = constant_scalar(g, n, 1)) lo = *v;
  if (auto v = constant_scalar(g, n, 2)) hi = *v;
  return {lo, hi};
}

// Spatial attributes of a Conv or pool over `dims` field dimensions (ONNX order).
struct Window {
  std::vector<std::size_t> kernel;
  std::vector<unsigned> strides, dilations;
  std::vector<int> pad_lower, pad_upper;
};

Window window_of(const Node& n, std::size_t dims, const std::vector<std::int64_t>& kernel) {
  Window w;
  const auto strides = n.attr_ints("strides"), dil = n.attr_ints("dilations"),
             pads = n.attr_ints("pads");
  for (std::size_t d = 0; d < dims; ++d) {
    w.kernel.push_back(static_cast<std::size_t>(kernel[d]));
    w.strides.push_back(static_cast<unsigned>(d < strides.size() ? strides[d] : 1));
    w.dilations.push_back(static_cast<unsigned>(d < dil.size() ? dil[d] : 1));
    w.pad_lower.push_back(static_cast<int>(pads.size() == 2 * dims ? pads[d] : 0));
    w.pad_upper.push_back(static_cast<int>(pads.size() == 2 * dims ? pads[dims + d] : 0));
  }
  return w;
}

// The Conv of node `n` as poplin::ConvParams (float), or why it cannot be one.
std::optional<std::string> conv_params(const Graph& g, const Node& n, poplin::ConvParams* out) {
  const Shape& x = g.value(n.inputs[0]).shape;  // fastest first: (W, H, C, N)
  const Shape& w = g.value(n.inputs[1]).shape;  // (KW, KH, C/g, M)
  const int rank = x.rank();
  if (rank != 3 && rank != 4) return std::string("a Conv over other than 1 or 2 field dimensions");
  if (w.rank() != rank) return std::string("weights whose rank differs from the input's");
  const std::string pad = n.attr_string("auto_pad", "NOTSET");
  if (pad != "NOTSET" && pad != "VALID") return fmt::format("auto_pad {}", pad);
  const auto dims = static_cast<std::size_t>(rank - 2);
  std::vector<std::int64_t> kernel;
  for (std::size_t d = 0; d < dims; ++d) kernel.push_back(w[static_cast<int>(dims - 1 - d)]);
  const Window win = window_of(n, dims, kernel);
  if (std::any_of(win.pad_lower.begin(), win.pad_lower.end(), [](int p) { return p < 0; }) ||
      std::any_of(win.pad_upper.begin(), win.pad_upper.end(), [](int p) { return p < 0; }))
    return std::string("negative pads");
  const std::int64_t group = n.attr_int("group", 1);
  const std::int64_t c = x[rank - 2], m = w[rank - 1];
  if (group < 1 || c % group != 0 || m % group != 0 || w[rank - 2] != c / group)
    return std::string("a group count that does not divide the channels");
  std::vector<std::size_t> field;
  for (std::size_t d = 0; d < dims; ++d) field.push_back(static_cast<std::size_t>(x[static_cast<int>(dims - 1 - d)]));
  poplin::ConvParams p(poplar::FLOAT, static_cast<std::size_t>(x[rank - 1]), field, win.kernel,
                       static_cast<std::size_t>(c / group), static_cast<std::size_t>(m / group),
                       static_cast<std::size_t>(group));
  for (std::size_t d = 0; d < dims; ++d) {
    p.inputTransform.paddingLower[d] = static_cast<unsigned>(win.pad_lower[d]);
    p.inputTransform.paddingUpper[d] = static_cast<unsigned>(win.pad_upper[d]);
    p.outputTransform.stride[d] = win.strides[d];
    p.kernelTransform.dilation[d] = win.dilations[d];
  }
  const auto y = poplar_shape(g.value(n.outputs[0]).shape);
  const auto of = p.getOutputFieldShape();
  if (!std::equal(of.begin(), of.end(), y.begin() + 2, y.end()))
    return std::string("an output field other than the floor of the window count");
  if (out) *out = p;
  return std::nullopt;
}

// The pooling of node `n` as popnn::pooling::PoolParams, or why it cannot be one.
std::optional<std::string> pool_params(const Graph& g, const Node& n,
                                       popnn::pooling::PoolParams* out) {
  const Shape& x = g.value(n.inputs[0]).shape;
  if (x.rank() != 3 && x.rank() != 4)
    return std::string("pooling over other than 1 or 2 field dimensions");
  const auto dims = static_cast<std::size_t>(x.rank() - 2);
  const auto xs = poplar_shape(x);
  std::vector<std::int64_t> kernel;
  const bool global = n.op == "GlobalAveragePool" || n.op == "GlobalMaxPool";
  if (global) {
    for (std::size_t d = 0; d < dims; ++d) kernel.push_back(static_cast<std::int64_t>(xs[2 + d]));
  } else {
    kernel = n.attr_ints("kernel_shape");
    if (kernel.size() != dims) return std::string("a kernel_shape of another rank than the field");
    if (n.attr_string("auto_pad", "NOTSET") != "NOTSET" &&
        n.attr_string("auto_pad", "NOTSET") != "VALID")
      return fmt::format("auto_pad {}", n.attr_string("auto_pad", ""));
    if (n.op == "AveragePool" && n.attr_int("count_include_pad", 0) != 0)
      return std::string("count_include_pad (popnn's AVG excludes padding)");
    if (n.outputs.size() > 1 && n.outputs[1] != kNoValue) return std::string("MaxPool's Indices");
  }
  Window win = global ? Window{} : window_of(n, dims, kernel);
  if (global)
    for (std::size_t d = 0; d < dims; ++d) {
      win.kernel.push_back(static_cast<std::size_t>(kernel[d]));
      win.strides.push_back(1);
      win.dilations.push_back(1);
      win.pad_lower.push_back(0);
      win.pad_upper.push_back(0);
    }
  if (std::any_of(win.dilations.begin(), win.dilations.end(), [](unsigned d) { return d != 1; }))
    return std::string("dilations");
  const auto y = poplar_shape(g.value(n.outputs[0]).shape);
  // ceil_mode's last, partial window: more upper padding, which popnn's windows skip as ONNX's do.
  for (std::size_t d = 0; d < dims; ++d) {
    const auto span = static_cast<std::int64_t>((y[2 + d] - 1) * win.strides[d] + win.kernel[d]);
    const auto have = static_cast<std::int64_t>(xs[2 + d]) + win.pad_lower[d] + win.pad_upper[d];
    if (span > have) win.pad_upper[d] += static_cast<int>(span - have);
  }
  for (std::size_t d = 0; d < dims; ++d)
    if (win.pad_lower[d] < 0 || win.pad_upper[d] < 0 ||
        win.pad_lower[d] >= static_cast<int>(win.kernel[d]) ||
        win.pad_upper[d] >= static_cast<int>(win.kernel[d]))
      return std::string("pads outside 0..kernel-1");
  const auto type = n.op == "MaxPool" || n.op == "GlobalMaxPool" ? popnn::PoolingType::MAX
                                                                  : popnn::PoolingType::AVG;
  popnn::pooling::PoolParams p(type, {xs.begin() + 2, xs.end()}, win.kernel, win.strides,
                               win.pad_lower, win.pad_upper, xs[1], xs[0], poplar::FLOAT);
  const auto of = p.getOutputFieldShape();
  if (!std::equal(of.begin(), of.end(), y.begin() + 2, y.end()))
    return std::string("an output field other than the floor of the window count");
  if (out) *out = p;
  return std::nullopt;
}

// The whole network as one Poplar graph with one program per node, and the Engine running it.
// Built on the first run of a plan (the plan's preset decides the target); values that steps
// outside this graph produce or read cross the host link as streams of the node's program.
class Session {
 public:
  Session(const Plan& plan, std::vector<int> device_nodes)
      : plan_(plan),
        graph_(poplar::Target::createIPUTarget(1, plan.device)),
        device_nodes_(std::move(device_nodes)) {
    popops::addCodelets(graph_);
    poplin::addCodelets(graph_);
    popnn::addCodelets(graph_);
    build();
  }

  // Runs node `node`'s program and mirrors its supersteps into the run's device profile.
  void run(ExecContext& ctx, int node) {
    const auto p = static_cast<unsigned>(program_of_.at(static_cast<std::size_t>(node)));
    for (const Io& io : io_[p]) engine_->connectStream(io.handle, ctx.data(io.value));
    const std::size_t k0 = engine_->tesseraProfile().kernels.size();
    engine_->run(p, plan_.graph.nodes[static_cast<std::size_t>(node)].name);
    const auto& prof = engine_->tesseraProfile();
    for (std::size_t k = k0; k < prof.kernels.size(); ++k) {
      profile::KernelRecord rec = prof.kernels[k];
      rec.engine = "ipu";
      ctx.device().record_kernel(std::move(rec));
    }
    for (const auto& [level, bytes] : prof.bytes_moved) {
      auto& seen = bytes_seen_[level];
      if (bytes > seen) ctx.device().add_bytes_moved(level, bytes - seen);
      seen = bytes;
    }
    for (const Io& io : io_[p])
      if (!io.to_device) ctx.invalidate(io.value);
    // Tile memory as the Engine laid it out (the run's profile starts afresh each run).
    for (const auto& [cat, b] : tile_memory_sum_)
      ctx.device().note_memory_high_water("ipu tiles", cat, b);
    ctx.device().note_memory_high_water("ipu fullest tile", "bytes", fullest_tile_);
  }

  std::string summary() const {
    std::ostringstream os;
    engine_->printProfileSummary(os, {{"showExecutionSteps", "false"}});
    return os.str();
  }

 private:
  struct Io {
    std::string handle;
    ValueId value;
    bool to_device;
  };

  const Graph& g() const { return plan_.graph; }

  // The device tensor of value `v`, made on first use: a constant, or a variable filled from
  // the host (a graph input or another step's result) by the program being built.
  poplar::Tensor tensor(ValueId v, poplar::program::Sequence& prog, std::vector<Io>& io) {
    auto it = tensors_.find(v);
    if (it != tensors_.end()) return it->second;
    const auto& value = g().value(v);
    const auto shape = poplar_shape(value.shape);
    poplar::Tensor t;
    if (value.constant) {
      const std::vector<float> data = constant_floats(v);
      t = graph_.addConstant<float>(poplar::FLOAT, shape, poplar::ArrayRef<float>(data),
                                    value.name);
      poputil::mapTensorLinearly(graph_, t);
    } else {
      t = graph_.addVariable(poplar::FLOAT, shape, value.name);
      poputil::mapTensorLinearly(graph_, t);
      const std::string handle = fmt::format("in{}:{}", v, value.name);
      auto stream = graph_.addHostToDeviceFIFO(handle, poplar::FLOAT, t.numElements());
      prog.add(poplar::program::Copy(stream, t));
      io.push_back({handle, v, true});
    }
    tensors_[v] = t;
    owned_.emplace_back(current_node_, t);
    return t;
  }

  std::vector<float> constant_floats(ValueId v) const {
    const auto d = g().value(v).constant->to_doubles();
    return std::vector<float>(d.begin(), d.end());
  }

  // A weights tensor laid out by `make` (a poplin create* call, so each block lies on the tile
  // that uses it) holding constant `v`'s values from load on, as PopART's weights do; a
  // non-constant `v` comes from the host as any other value.
  template <typename Make>
  poplar::Tensor weights(ValueId v, poplar::program::Sequence& prog, std::vector<Io>& io,
                         const std::vector<float>& data, Make make) {
    if (!g().value(v).constant) return tensor(v, prog, io);
    poplar::Tensor t = make();
    graph_.setInitialValue<float>(t, poplar::ArrayRef<float>(data));
    owned_.emplace_back(current_node_, t);
    return t;
  }

  void apply_activation(const Activation& a, const poplar::Tensor& t,
                        poplar::program::Sequence& prog, const std::string& name) {
    switch (a.kind) {
      case Activation::Kind::none:
        return;
      case Activation::Kind::relu:
        popnn::nonLinearityInPlace(graph_, popnn::NonLinearityType::RELU, t, prog, name);
        return;
      case Activation::Kind::sigmoid:
        popnn::nonLinearityInPlace(graph_, popnn::NonLinearityType::SIGMOID, t, prog, name);
        return;
      case Activation::Kind::tanh:
        popnn::nonLinearityInPlace(graph_, popnn::NonLinearityType::TANH, t, prog, name);
        return;
      case Activation::Kind::clip:
        popops::mapInPlace(graph_,
                           pe::Clamp(pe::_1, pe::Const(a.min, poplar::FLOAT),
                                     pe::Const(a.max, poplar::FLOAT)),
                           {t}, prog, name);
        return;
      case Activation::Kind::leaky_relu:
        popops::mapInPlace(graph_,
                           pe::Select(pe::_1, pe::Mul(pe::_1, pe::Const(a.alpha, poplar::FLOAT)),
                                      pe::Gt(pe::_1, pe::Const(0.0, poplar::FLOAT))),
                           {t}, prog, name);
        return;
    }
  }

  // Lowers node `n` into `prog`; returns its output tensor.
  poplar::Tensor lower(const Node& n, poplar::program::Sequence& prog, std::vector<Io>& io) {
    auto in = [&](std::size_t i) { return tensor(n.inputs[i], prog, io); };
    const auto out_shape = poplar_shape(g().value(n.outputs[0]).shape);
    const std::string& name = n.name;
    if (is_view(n)) return in(0).reshape(out_shape);
    if (n.op == "Transpose") {
      auto perm = n.attr_ints("perm");
      const auto rank = static_cast<std::int64_t>(out_shape.size());
      if (perm.empty())
        for (std::int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
      return in(0).dimShuffle(std::vector<unsigned>(perm.begin(), perm.end()));
    }
    if (n.op == "Concat") {
      std::vector<poplar::Tensor> parts;
      for (std::size_t i = 0; i < n.inputs.size(); ++i) parts.push_back(in(i));
      auto axis = n.attr_int("axis", 0);
      if (axis < 0) axis += static_cast<std::int64_t>(out_shape.size());
      // A concatenation is a view of its parts, as in Poplar; the next reader exchanges them.
      return poplar::concat(parts, static_cast<unsigned>(axis));
    }
    if (n.op == "Conv") return lower_conv(n, prog, io);
    if (n.op == "Gemm" || n.op == "MatMul") return lower_gemm(n, prog, io);
    if (n.op == "MaxPool" || n.op == "AveragePool" || n.op == "GlobalAveragePool" ||
        n.op == "GlobalMaxPool") {
      popnn::pooling::PoolParams p(popnn::PoolingType::MAX, {}, {}, {}, {}, {}, 0, 0,
                                   poplar::FLOAT);
      (void)pool_params(g(), n, &p);
      return popnn::pooling::pool(graph_, p, in(0), prog, name);
    }
    if (n.op == "Softmax")
      return popnn::nonLinearity(graph_, popnn::NonLinearityType::SOFTMAX_STABLE, in(0), prog,
                                 name);
    if (n.op == "BatchNormalization") return lower_batch_norm(n, prog, io);
    if (n.op == "Clip") {
      const auto [lo, hi] = clip_bounds(g(), n);
      return popops::map(graph_,
                         pe::Clamp(pe::_1, pe::Const(lo, poplar::FLOAT),
                                   pe::Const(hi, poplar::FLOAT)),
                         {in(0)}, prog, name);
    }
    if (n.op == "LeakyRelu") {
      const double alpha = n.attr_float("alpha", 0.01f);
      return popops::map(graph_,
                         pe::Select(pe::_1, pe::Mul(pe::_1, pe::Const(alpha, poplar::FLOAT)),
                                    pe::Gt(pe::_1, pe::Const(0.0, poplar::FLOAT))),
                         {in(0)}, prog, name);
    }
    poplar::Tensor y;
    if (auto u = unary_of(n.op)) {
      y = popops::map(graph_, pe::UnaryOp(*u, pe::_1), {in(0)}, prog, name);
    } else if (auto b = binary_of(n.op)) {
      // Variadic Max/Min/Sum fold left; operands broadcast as NumPy's do.
      std::unique_ptr<pe::Expr> e = pe::_1.clone();
      std::vector<poplar::Tensor> ops;
      for (std::size_t i = 0; i < n.inputs.size(); ++i) {
        ops.push_back(in(i));
        if (i > 0) e = pe::BinaryOp(*b, *e, pe::PlaceHolder(static_cast<unsigned>(i + 1))).clone();
      }
      y = popops::map(graph_, *e, ops, prog, name);
    } else {
      throw_internal_error("ipu backend asked to lower {}", n.describe());
    }
    apply_activation(n.activation, y, prog, name + "/activation");
    return y;
  }

  poplar::Tensor lower_conv(const Node& n, poplar::program::Sequence& prog, std::vector<Io>& io) {
    poplin::ConvParams p;
    if (auto why = conv_params(g(), n, &p)) throw_internal_error("ipu Conv lowered: {}", *why);
    std::vector<std::size_t> wshape = {p.numConvGroups, p.outputChannelsPerConvGroup,
                                       p.inputChannelsPerConvGroup};
    wshape.insert(wshape.end(), p.kernelShape.begin(), p.kernelShape.end());
    const ValueId wv = n.inputs[1];
    poplar::Tensor w;
    if (g().value(wv).constant)
      // ONNX's (M, C/g, kernel...) is poplin's [G][OC][IC][kernel...] in the same order.
      w = weights(wv, prog, io, constant_floats(wv), [&] {
        return poplin::createWeights(graph_, p, n.name + "/weights", {}, &cache_);
      });
    else
      w = tensor(wv, prog, io).reshape(wshape);
    poplar::Tensor y =
        poplin::convolution(graph_, tensor(n.inputs[0], prog, io), w, p, false, prog, n.name, {},
                            &cache_);
    if (has_input(n, 2)) {
      const ValueId bv = n.inputs[2];
      poplar::Tensor b = g().value(bv).constant
                             ? weights(bv, prog, io, constant_floats(bv),
                                       [&] { return poplin::createBiases(graph_, y, n.name + "/bias"); })
                             : tensor(bv, prog, io);
      poplin::addBias(graph_, y, b, prog, n.name + "/bias");
    }
    apply_activation(n.activation, y, prog, n.name + "/activation");
    return y;
  }

  // Gemm (alpha, beta, transposes, C broadcast) and 2-D MatMul.
  poplar::Tensor lower_gemm(const Node& n, poplar::program::Sequence& prog, std::vector<Io>& io) {
    const bool ta = n.attr_int("transA", 0) != 0, tb = n.attr_int("transB", 0) != 0;
    poplar::Tensor a = tensor(n.inputs[0], prog, io);
    if (ta) a = a.transpose();
    const ValueId bv = n.inputs[1];
    const auto bs = poplar_shape(g().value(bv).shape);
    const std::size_t m = a.dim(0), k = a.dim(1), cols = tb ? bs[0] : bs[1];
    poplar::Tensor b;
    if (g().value(bv).constant) {
      // The weights laid out where the planner puts B's blocks, in [K][N] order.
      std::vector<float> data = constant_floats(bv);
      if (tb) {
        std::vector<float> t(data.size());
        for (std::size_t r = 0; r < cols; ++r)
          for (std::size_t c = 0; c < k; ++c) t[c * cols + r] = data[r * k + c];
        data.swap(t);
      }
      b = weights(bv, prog, io, data, [&] {
        return poplin::createMatMulInputRHS(graph_, poplar::FLOAT, {m, k}, {k, cols},
                                            n.name + "/weights", {}, &cache_);
      });
    } else {
      b = tensor(bv, prog, io);
      if (tb) b = b.transpose();
    }
    poplar::Tensor y = poplin::matMul(graph_, a, b, prog, poplar::FLOAT, n.name, {}, &cache_);
    const double alpha = n.attr_float("alpha", 1.0f), beta = n.attr_float("beta", 1.0f);
    if (alpha != 1.0)
      popops::mapInPlace(graph_, pe::Mul(pe::_1, pe::Const(alpha, poplar::FLOAT)), {y}, prog,
                         n.name + "/alpha");
    if (n.op == "Gemm" && has_input(n, 2) && beta != 0.0) {
      poplar::Tensor c = tensor(n.inputs[2], prog, io);
      if (beta == 1.0)
        popops::addInPlace(graph_, y, c, prog, n.name + "/bias");
      else
        popops::mapInPlace(graph_, pe::Add(pe::_1, pe::Mul(pe::_2, pe::Const(beta, poplar::FLOAT))),
                           {y, c}, prog, n.name + "/bias");
    }
    apply_activation(n.activation, y, prog, n.name + "/activation");
    return y;
  }

  // Inference BatchNormalization that the passes did not fold: y = x * a + b per channel, with
  // a = scale / sqrt(var + eps) and b = bias - mean * a computed once from the constants.
  poplar::Tensor lower_batch_norm(const Node& n, poplar::program::Sequence& prog,
                                  std::vector<Io>& io) {
    const auto scale = constant_floats(n.inputs[1]), bias = constant_floats(n.inputs[2]),
               mean = constant_floats(n.inputs[3]), var = constant_floats(n.inputs[4]);
    const float eps = n.attr_float("epsilon", 1e-5f);
    std::vector<float> a(scale.size()), b(scale.size());
    for (std::size_t c = 0; c < a.size(); ++c) {
      a[c] = scale[c] / std::sqrt(var[c] + eps);
      b[c] = bias[c] - mean[c] * a[c];
    }
    poplar::Tensor x = tensor(n.inputs[0], prog, io);
    std::vector<std::size_t> cshape(x.rank(), 1);
    cshape[1] = a.size();
    auto ta = graph_.addConstant<float>(poplar::FLOAT, cshape, poplar::ArrayRef<float>(a),
                                        n.name + "/scale");
    auto tb = graph_.addConstant<float>(poplar::FLOAT, cshape, poplar::ArrayRef<float>(b),
                                        n.name + "/shift");
    poputil::mapTensorLinearly(graph_, ta);
    poputil::mapTensorLinearly(graph_, tb);
    return popops::map(graph_, pe::Add(pe::Mul(pe::_1, pe::_2), pe::_3), {x, ta, tb}, prog,
                       n.name);
  }

  void build() {
    const Graph& graph = g();
    std::vector<bool> on_device(graph.nodes.size(), false), view(graph.nodes.size(), false);
    for (int node : device_nodes_) on_device[static_cast<std::size_t>(node)] = true;
    for (std::size_t s = 0; s < plan_.steps.size(); ++s)
      if (plan_.steps[s]->is_view()) view[static_cast<std::size_t>(plan_.info[s].node)] = true;
    // Values whose bytes the host side must hold: graph outputs and what other steps read,
    // through the compiler's views (which share their input's bytes).
    std::vector<bool> to_host(graph.values.size(), false);
    for (ValueId v : graph.outputs) to_host[static_cast<std::size_t>(v)] = true;
    for (auto i = graph.nodes.size(); i-- > 0;) {
      const Node& n = graph.nodes[i];
      const bool passes_on = view[i] && !n.outputs.empty() && to_host[static_cast<std::size_t>(n.outputs[0])];
      if (on_device[i] && !passes_on) continue;
      for (ValueId v : n.inputs)
        if (v != kNoValue && (!view[i] || passes_on)) to_host[static_cast<std::size_t>(v)] = true;
    }
    program_of_.assign(graph.nodes.size(), -1);
    std::vector<poplar::program::Program> programs;
    for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
      const Node& n = graph.nodes[i];
      if (view[i]) {
        // The compiler's view of a value held here is a view of its tensor.
        auto it = tensors_.find(n.inputs[0]);
        if (it != tensors_.end())
          tensors_[n.outputs[0]] = it->second.reshape(poplar_shape(graph.value(n.outputs[0]).shape));
        continue;
      }
      if (!on_device[i]) continue;
      poplar::program::Sequence prog;
      std::vector<Io> io;
      current_node_ = static_cast<int>(i);
      poplar::Tensor y;
      try {
        y = lower(n, prog, io);
      } catch (const poputil::poplibs_error& e) {  // PopLibs refused the op: say which node
        throw_user_error("ipu: {}: {}", n.describe(), e.what());
      }
      if (!is_view(n) && n.op != "Transpose" && n.op != "Concat") owned_.emplace_back(current_node_, y);
      const ValueId out = n.outputs[0];
      tensors_[out] = y;
      if (to_host[static_cast<std::size_t>(out)]) {
        const std::string handle = fmt::format("out{}:{}", out, graph.value(out).name);
        auto stream = graph_.addDeviceToHostFIFO(handle, poplar::FLOAT, y.numElements());
        prog.add(poplar::program::Copy(y, stream));
        io.push_back({handle, out, false});
      }
      program_of_[i] = static_cast<int>(programs.size());
      programs.push_back(prog);
      io_.push_back(std::move(io));
    }
    try {
      engine_.emplace(graph_, programs);
    } catch (const poplar::graph_memory_allocation_error& e) {
      throw_user_error("ipu: the network does not fit in the tile memory of '{}': {}{}; use a "
                       "preset with more tiles or memory, or a smaller input",
                       plan_.device, e.detail(), op_on_tile(e.where()));
    }
    engine_->load(poplar::Device(graph_.getTarget()));
    for (const auto& [where, cats] : engine_->tesseraProfile().memory_high_water) {
      if (where.rfind("tile ", 0) != 0) continue;
      std::uint64_t total = 0;
      for (const auto& [cat, b] : cats) tile_memory_sum_[cat] += b, total += b;
      fullest_tile_ = std::max(fullest_tile_, total);
    }
  }

  // "; most of it is Conv 'x' (...)": the node whose tensors take the most of tile `where`
  // ("tile N"), for a network that does not fit.
  std::string op_on_tile(const std::string& where) const {
    unsigned tile = 0;
    if (std::sscanf(where.c_str(), "tile %u", &tile) != 1) return {};
    std::map<int, std::size_t> bytes;
    for (const auto& [node, t] : owned_) {
      const auto mapping = graph_.getTileMapping(t, false);
      if (tile >= mapping.size()) continue;
      for (const auto& iv : mapping[tile]) bytes[node] += iv.size() * sizeof(float);
    }
    const auto top = std::max_element(bytes.begin(), bytes.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
    if (top == bytes.end() || top->second == 0) return {};
    return fmt::format("; the op with the most data on {} is {} ({} B of its tensors)", where,
                       g().nodes[static_cast<std::size_t>(top->first)].describe(), top->second);
  }

  const Plan& plan_;
  poplar::Graph graph_;
  std::vector<int> device_nodes_;
  poplin::PlanningCache cache_;
  std::map<ValueId, poplar::Tensor> tensors_;
  int current_node_ = -1;                              // the node being lowered
  std::vector<std::pair<int, poplar::Tensor>> owned_;  // tensors each node created
  std::vector<int> program_of_;
  std::vector<std::vector<Io>> io_;
  std::optional<poplar::Engine> engine_;
  std::map<std::string, std::uint64_t> bytes_seen_;
  std::map<std::string, std::uint64_t> tile_memory_sum_;  // by category, over all tiles
  std::uint64_t fullest_tile_ = 0;
};

// A node of the network on the IPU. The plan's first such step owns the Session of the plan
// (built when a step first runs); the others find it there.
class IpuStep final : public NodeStep {
 public:
  using NodeStep::NodeStep;
  void run(ExecContext& ctx) override { session(ctx.plan()).run(ctx, node_index()); }

  // The plan's Session, kept by its first ipu step (built anew for a plan it was not built for).
  static Session& session(const Plan& plan) {
    IpuStep* owner = nullptr;
    std::vector<int> nodes;
    for (const auto& step : plan.steps)
      if (auto* s = dynamic_cast<IpuStep*>(step.get())) {
        if (!owner) owner = s;
        nodes.push_back(s->node_index());
      }
    if (!owner->session_ || owner->session_plan_ != &plan) {
      owner->session_.reset();
      owner->session_ = std::make_unique<Session>(plan, std::move(nodes));
      owner->session_plan_ = &plan;
    }
    return *owner->session_;
  }
  const Session* built_session() const { return session_.get(); }

 private:
  std::unique_ptr<Session> session_;
  const Plan* session_plan_ = nullptr;
};

// Why the node's operands and results are not all non-empty float tensors, or nullopt.
std::optional<std::string> float_operands(const Node& n, const Graph& g) {
  for (const auto* values : {&n.inputs, &n.outputs}) {
    const char* what = values == &n.inputs ? "operand" : "result";
    for (ValueId v : *values) {
      if (v == kNoValue) continue;
      if (g.value(v).dtype != DType::f32)
        return fmt::format("a {} {} (the ipu backend computes in float)",
                           dtype_name(g.value(v).dtype), what);
      if (g.value(v).shape.element_count() == 0) return fmt::format("an empty {}", what);
    }
  }
  return std::nullopt;
}

bool broadcasts_to(const Shape& in, const Shape& out) {
  if (in.rank() > out.rank()) return false;
  for (int d = 0; d < in.rank(); ++d)
    if (in[d] != 1 && in[d] != out[d]) return false;
  return true;
}

class IpuBackend final : public compiler::Backend {
 public:
  std::string name() const override { return "ipu"; }
  std::string description() const override {
    return "Graphcore IPU: the network as one Poplar graph built with PopLibs (poplin conv and "
           "matMul planned over the tiles, popnn pooling and softmax, popops element-wise), run "
           "on the Engine as BSP supersteps, in float (docs/targets/ipu.md)";
  }
  std::string default_device() const override { return "ipu-mk2"; }
  std::vector<std::string> device_targets() const override { return {"ipu"}; }

  std::optional<std::string> unsupported_reason(const Node& n, const Graph& g) const override {
    if (n.outputs.size() != 1 && !(n.op == "Dropout" || n.op == "MaxPool"))
      return fmt::format("{} with {} outputs", n.op, n.outputs.size());
    const Shape& out = g.value(n.outputs[0]).shape;
    if (is_view(n)) {
      // Only the data operand: Reshape's shape, Squeeze's axes and Dropout's ratio are not data.
      if (n.inputs.empty() || n.inputs[0] == kNoValue) return std::string("no data input");
      const Node data{n.name, n.op, {n.inputs[0]}, {n.outputs[0]}, {}, {}, {}};
      if (auto why = float_operands(data, g)) return why;
      if (n.activation.kind != Activation::Kind::none) return std::string("a fused activation");
      if (n.op == "Dropout" && n.outputs.size() > 1 && n.outputs[1] != kNoValue)
        return std::string("Dropout's mask output");
      return std::nullopt;
    }
    if (auto why = float_operands(n, g)) return why;
    if (n.op == "Transpose" || n.op == "Concat") return std::nullopt;
    if (n.op == "Conv") {
      if (!has_input(n, 1)) return std::string("a Conv without weights");
      if (auto why = conv_params(g, n, nullptr)) return why;
      if (has_input(n, 2) && g.value(n.inputs[2]).shape.element_count() != out[out.rank() - 2])
        return std::string("a bias that is not one per output channel");
      return std::nullopt;
    }
    if (n.op == "Gemm" || n.op == "MatMul") {
      if (n.inputs.size() < 2) return fmt::format("{} without two operands", n.op);
      for (int i = 0; i < 2; ++i)
        if (g.value(n.inputs[static_cast<std::size_t>(i)]).shape.rank() != 2)
          return std::string("operands that are not matrices (poplin::matMul takes 2-D)");
      if (n.op == "Gemm" && has_input(n, 2) && !broadcasts_to(g.value(n.inputs[2]).shape, out))
        return std::string("a C that does not broadcast to the result");
      return std::nullopt;
    }
    if (n.op == "MaxPool" || n.op == "AveragePool" || n.op == "GlobalAveragePool" ||
        n.op == "GlobalMaxPool")
      return pool_params(g, n, nullptr);
    if (n.op == "Softmax") {
      auto axis = n.attr_int("axis", g.opset >= 13 ? -1 : 1);
      if (axis < 0) axis += out.rank();
      if (axis != out.rank() - 1)
        return std::string("an axis other than the last (popnn's softmax is over the innermost "
                           "dimension)");
      return std::nullopt;
    }
    if (n.op == "BatchNormalization") {
      if (g.value(n.inputs[0]).shape.rank() < 2) return std::string("an input without channels");
      for (std::size_t i = 1; i < 5; ++i)
        if (!has_input(n, i) || !g.value(n.inputs[i]).constant)
          return std::string("statistics or scale that are not constants");
      if (n.attr_int("training_mode", 0) != 0) return std::string("training_mode");
      return std::nullopt;
    }
    if (n.op == "Clip") {
      for (std::size_t i = 1; i < 3; ++i)
        if (has_input(n, i) && !constant_scalar(g, n, i))
          return std::string("bounds that are not constant scalars");
      return std::nullopt;
    }
    if (n.op == "LeakyRelu" || unary_of(n.op)) {
      if (n.inputs.size() != 1) return fmt::format("{} with {} inputs", n.op, n.inputs.size());
      return std::nullopt;
    }
    if (binary_of(n.op)) {
      if (n.inputs.size() < 2 && n.op != "Max" && n.op != "Min")
        return fmt::format("{} with {} inputs", n.op, n.inputs.size());
      for (ValueId v : n.inputs)
        if (v == kNoValue || !broadcasts_to(g.value(v).shape, out))
          return std::string("operands that do not broadcast to the result");
      return std::nullopt;
    }
    return fmt::format("the ipu backend has no lowering of {} through PopLibs", n.op);
  }

  std::unique_ptr<Step> lower(const Graph&, int node_index) const override {
    return std::make_unique<IpuStep>(node_index);
  }

  std::optional<std::string> profile_summary(const Plan& plan) const override {
    for (const auto& step : plan.steps)
      if (auto* s = dynamic_cast<const IpuStep*>(step.get()))
        if (s->built_session()) return s->built_session()->summary();
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<compiler::Backend> make_ipu_backend() {
  return std::make_unique<IpuBackend>();
}

}  // namespace tessera::ipu

namespace tessera::targets {

void register_ipu_backend() {
  compiler::register_backend(ipu::make_ipu_backend);
}

}  // namespace tessera::targets
