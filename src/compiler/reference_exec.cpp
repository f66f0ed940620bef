#include "tessera/compiler/reference_exec.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "tessera/compiler/quantize.h"
#include "tessera/core/error.h"
#include "tessera/ops/reference.h"
#include "tessera/sim/scheduler.h"

namespace tessera::compiler {

int tessera_axis(std::int64_t onnx_axis, int rank, const std::string& where) {
  const std::int64_t a = onnx_axis < 0 ? onnx_axis + rank : onnx_axis;
  if (a < 0 || a >= std::max(rank, 1))
    throw_user_error("{}: axis {} is out of range for rank {} (valid: {} to {})", where, onnx_axis,
                     rank, -rank, rank - 1);
  return rank == 0 ? 0 : rank - 1 - static_cast<int>(a);
}

namespace {

// f32 outputs take the cheap activations in place; other dtypes go through the ops.
template <typename Fn>
bool map_f32_in_place(Tensor& t, Fn fn) {
  if (t.dtype() != DType::f32) return false;
  float* p = t.data<float>();
  sim::WorkScheduler::shared().parallel_pieces(
      static_cast<std::size_t>(t.element_count()), sim::WorkScheduler::kElementPiece,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) p[i] = fn(p[i]);
      });
  return true;
}

}  // namespace

void apply_activation(Tensor& t, const Activation& act) {
  switch (act.kind) {
    case Activation::Kind::relu:
      if (!map_f32_in_place(t, [](float v) { return v > 0.0f ? v : 0.0f; })) t = ops::relu(t);
      break;
    case Activation::Kind::leaky_relu:
      if (!map_f32_in_place(t, [a = act.alpha](float v) { return v >= 0.0f ? v : v * a; }))
        t = ops::leaky_relu(t, act.alpha);
      break;
    case Activation::Kind::clip:
      if (!map_f32_in_place(t, [&](float v) { return std::min(std::max(v, act.min), act.max); }))
        t = ops::clip(t, act.min, act.max);
      break;
    case Activation::Kind::sigmoid:
      t = ops::sigmoid(t);
      break;
    case Activation::Kind::tanh:
      t = ops::tanh(t);
      break;
    case Activation::Kind::none:
      break;
  }
}

namespace {

struct Ctx {
  const Node& node;
  const std::vector<const Tensor*>& in;
  std::int64_t opset;
  std::string where;
  ops::HostConvWeights* conv_weights = nullptr;  // see run_reference

  bool has(std::size_t i) const { return i < in.size() && in[i] != nullptr; }
  const Tensor& x(std::size_t i) const {
    if (!has(i)) throw_user_error("{}: input {} is required", where, i);
    return *in[i];
  }
  int axis(std::int64_t onnx_axis, int rank) const { return tessera_axis(onnx_axis, rank, where); }
  std::vector<int> axes(const std::vector<std::int64_t>& onnx_axes, int rank) const {
    std::vector<int> out;
    for (auto a : onnx_axes) out.push_back(axis(a, rank));
    return out;
  }
  // An operand given as attribute (older opsets) or as input tensor (newer ones).
  std::vector<std::int64_t> ints_operand(const char* attr, std::size_t input, bool* present) const {
    if (has(input)) {
      *present = true;
      return x(input).to_ints();
    }
    *present = node.has_attr(attr);
    return node.attr_ints(attr);
  }
};

// ONNX spatial index i (outermost first) of an N-C-spatial tensor -> Tessera dim.
std::int64_t spatial_dim(const Shape& s, std::size_t i, std::size_t spatial) {
  return s[static_cast<int>(spatial - 1 - i)];
}

std::vector<std::int64_t> filled(std::vector<std::int64_t> v, std::size_t n, std::int64_t value) {
  if (v.empty()) v.assign(n, value);
  return v;
}

// Explicit pads (ONNX order). The importer resolves auto_pad (and ConvTranspose's
// output_shape) into pads, so a node still carrying them was built some other way.
std::vector<std::int64_t> explicit_pads(const Ctx& c, std::size_t spatial) {
  const std::string auto_pad = c.node.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" || c.node.has_attr("output_shape"))
    throw_user_error(
        "{}: auto_pad {} or output_shape is not resolved into explicit pads (the ONNX importer "
        "resolves them with compiler::resolve_auto_pad)",
        c.where, auto_pad);
  return filled(c.node.attr_ints("pads"), 2 * spatial, 0);
}

std::size_t spatial_rank(const Ctx& c, const Tensor& x) {
  if (x.rank() < 3)
    throw_user_error("{}: input must have rank >= 3 (N, C, spatial...), got {}", c.where,
                     x.shape().to_string());
  return static_cast<std::size_t>(x.rank() - 2);
}

Tensor run_conv(const Ctx& c) {
  const Tensor& x = c.x(0);
  const Tensor& w = c.x(1);
  const std::size_t s = spatial_rank(c, x);
  if (w.rank() != x.rank())
    throw_user_error("{}: weights {} and input {} differ in rank", c.where, w.shape().to_string(),
                     x.shape().to_string());
  ops::ConvParams p;
  for (std::size_t i = 0; i < s; ++i) p.kernel_shape.push_back(spatial_dim(w.shape(), i, s));
  p.strides = filled(c.node.attr_ints("strides"), s, 1);
  p.dilations = filled(c.node.attr_ints("dilations"), s, 1);
  p.pads = explicit_pads(c, s);
  p.group = c.node.attr_int("group", 1);
  p.kept_weights = c.conv_weights;
  return ops::conv(x, w, c.has(2) ? c.in[2] : nullptr, p);
}

Tensor run_conv_transpose(const Ctx& c) {
  const Tensor& x = c.x(0);
  const Tensor& w = c.x(1);
  const std::size_t s = spatial_rank(c, x);
  ops::ConvTransposeParams p;
  for (std::size_t i = 0; i < s; ++i) p.kernel_shape.push_back(spatial_dim(w.shape(), i, s));
  p.strides = filled(c.node.attr_ints("strides"), s, 1);
  p.dilations = filled(c.node.attr_ints("dilations"), s, 1);
  p.output_padding = filled(c.node.attr_ints("output_padding"), s, 0);
  p.group = c.node.attr_int("group", 1);
  p.pads = explicit_pads(c, s);
  return ops::conv_transpose(x, w, c.has(2) ? c.in[2] : nullptr, p);
}

ops::PoolParams pool_params(const Ctx& c) {
  const std::size_t s = spatial_rank(c, c.x(0));
  ops::PoolParams p;
  p.kernel_shape = c.node.attr_ints("kernel_shape");
  if (p.kernel_shape.size() != s)
    throw_user_error("{}: kernel_shape must list {} sizes, got {}", c.where, s,
                     p.kernel_shape.size());
  p.strides = filled(c.node.attr_ints("strides"), s, 1);
  p.dilations = filled(c.node.attr_ints("dilations"), s, 1);
  p.pads = explicit_pads(c, s);
  p.ceil_mode = c.node.attr_int("ceil_mode", 0) != 0;
  p.count_include_pad = c.node.attr_int("count_include_pad", 0) != 0;
  return p;
}

ops::ReduceParams reduce_params(const Ctx& c, int rank) {
  ops::ReduceParams p;
  bool present = false;
  const auto onnx_axes = c.ints_operand("axes", 1, &present);
  p.axes = c.axes(onnx_axes, rank);
  p.keepdims = c.node.attr_int("keepdims", 1) != 0;
  p.noop_with_empty_axes = c.node.attr_int("noop_with_empty_axes", 0) != 0;
  return p;
}

Tensor run_softmax(const Ctx& c, bool log_softmax) {
  const Tensor& x = c.x(0);
  const int r = x.rank();
  if (c.opset >= 13) {
    const int ax = c.axis(c.node.attr_int("axis", -1), r);
    return log_softmax ? ops::log_softmax(x, ax) : ops::softmax(x, ax);
  }
  // Before opset 13 the input is coerced to 2-D at `axis` and normalised over the inner part.
  const std::int64_t a = c.node.attr_int("axis", 1);
  const int boundary = r - (a < 0 ? static_cast<int>(a) + r : static_cast<int>(a));
  if (boundary < 0 || boundary > r)
    throw_user_error("{}: axis {} out of range for rank {}", c.where, a, r);
  std::int64_t inner = 1;
  for (int d = 0; d < boundary; ++d) inner *= x.dim(d);
  const Tensor flat = x.reshape(Shape{inner, x.element_count() / std::max<std::int64_t>(inner, 1)});
  Tensor y = log_softmax ? ops::log_softmax(flat, 0) : ops::softmax(flat, 0);
  y.reshape_in_place(x.shape());
  return y;
}

Tensor run_slice(const Ctx& c) {
  const Tensor& x = c.x(0);
  ops::SliceParams p;
  bool present = false;
  p.starts = c.ints_operand("starts", 1, &present);
  p.ends = c.ints_operand("ends", 2, &present);
  const auto onnx_axes = c.ints_operand("axes", 3, &present);
  if (onnx_axes.empty()) {
    for (std::size_t i = 0; i < p.starts.size(); ++i)
      p.axes.push_back(c.axis(static_cast<std::int64_t>(i), x.rank()));
  } else {
    p.axes = c.axes(onnx_axes, x.rank());
  }
  if (c.has(4)) p.steps = c.x(4).to_ints();
  // int64 bounds narrowed to int32 saturate; restore "to the end" for the saturated extremes.
  for (auto* v : {&p.starts, &p.ends})
    for (auto& e : *v) {
      if (e >= std::numeric_limits<std::int32_t>::max())
        e = std::numeric_limits<std::int64_t>::max();
      if (e <= std::numeric_limits<std::int32_t>::min())
        e = std::numeric_limits<std::int64_t>::min();
    }
  return ops::slice(x, p);
}

Tensor run_pad(const Ctx& c) {
  const Tensor& x = c.x(0);
  const int r = x.rank();
  ops::PadParams p;
  bool present = false;
  auto onnx_pads = c.ints_operand("pads", 1, &present);
  if (onnx_pads.size() != static_cast<std::size_t>(2 * r))
    throw_user_error("{}: pads must list 2 x rank = {} values, got {}", c.where, 2 * r,
                     onnx_pads.size());
  p.pads.assign(onnx_pads.size(), 0);
  for (int d = 0; d < r; ++d) {
    p.pads[static_cast<std::size_t>(d)] = onnx_pads[static_cast<std::size_t>(r - 1 - d)];
    p.pads[static_cast<std::size_t>(r + d)] = onnx_pads[static_cast<std::size_t>(2 * r - 1 - d)];
  }
  p.mode = ops::parse_pad_mode(c.node.attr_string("mode", "constant"));
  if (c.has(2) && c.x(2).element_count() > 0)
    p.value = ops::Scalar::of(c.x(2));
  else
    p.value = c.node.attr_float("value", 0.0f);
  return ops::pad(x, p);
}

Tensor run_resize(const Ctx& c) {
  const Tensor& x = c.x(0);
  const int r = x.rank();
  ops::ResizeParams p;
  p.mode = ops::parse_resize_mode(c.node.attr_string("mode", "nearest"));
  std::size_t scales_at = 2, sizes_at = 3;
  if (c.opset < 11) {
    scales_at = 1;
    sizes_at = 99;
    p.coordinate_transformation_mode = ops::CoordinateTransform::asymmetric;
    p.nearest_mode = ops::NearestMode::floor;
  } else {
    p.coordinate_transformation_mode = ops::parse_coordinate_transform(
        c.node.attr_string("coordinate_transformation_mode", "half_pixel"));
    p.nearest_mode =
        ops::parse_nearest_mode(c.node.attr_string("nearest_mode", "round_prefer_floor"));
  }
  p.cubic_coeff_a = c.node.attr_float("cubic_coeff_a", -0.75f);
  p.exclude_outside = c.node.attr_int("exclude_outside", 0) != 0;
  p.extrapolation_value = c.node.attr_float("extrapolation_value", 0.0f);
  if (c.has(sizes_at) && c.x(sizes_at).element_count() > 0) {
    auto sizes = c.x(sizes_at).to_ints();
    if (sizes.size() != static_cast<std::size_t>(r))
      throw_user_error("{}: sizes must list {} values", c.where, r);
    std::reverse(sizes.begin(), sizes.end());
    p.sizes = sizes;
  } else if (c.has(scales_at) && c.x(scales_at).element_count() > 0) {
    auto scales = c.x(scales_at).to_floats();
    if (scales.size() != static_cast<std::size_t>(r))
      throw_user_error("{}: scales must list {} values", c.where, r);
    std::reverse(scales.begin(), scales.end());
    p.scales = scales;
  } else {
    throw_user_error("{}: one of scales or sizes must be given", c.where);
  }
  if (c.opset >= 11 && c.has(1) && c.x(1).element_count() == 2 * r) {
    const auto roi = c.x(1).to_floats();
    p.roi.assign(roi.size(), 0.0f);
    for (int d = 0; d < r; ++d) {
      p.roi[static_cast<std::size_t>(d)] = roi[static_cast<std::size_t>(r - 1 - d)];
      p.roi[static_cast<std::size_t>(r + d)] = roi[static_cast<std::size_t>(2 * r - 1 - d)];
    }
  }
  return ops::resize(x, p);
}

std::vector<Tensor> run_split(const Ctx& c) {
  const Tensor& x = c.x(0);
  const int ax = c.axis(c.node.attr_int("axis", 0), x.rank());
  bool present = false;
  auto sizes = c.ints_operand("split", 1, &present);
  if (sizes.empty())
    sizes = ops::split_sizes(x.dim(ax), static_cast<std::int64_t>(c.node.outputs.size()));
  return ops::split(x, ax, sizes);
}

// Range: scalar start, limit and delta of one dtype; the output takes that dtype.
Tensor run_range(const Ctx& c) {
  for (std::size_t i = 0; i < 3; ++i)
    if (c.x(i).element_count() != 1)
      throw_user_error("{}: input {} must be a scalar, got shape {}", c.where, i,
                       c.x(i).shape().to_string());
  return ops::range(ops::Scalar::of(c.x(0)), ops::Scalar::of(c.x(1)), ops::Scalar::of(c.x(2)),
                    c.x(0).dtype());
}

std::string ops_list(const std::vector<std::int64_t>& v) {
  std::string out = "(";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + ")";
}

// An ONNX TensorProto data type as a Tessera dtype.
DType onnx_dtype(const Ctx& c, int to, const char* attr) {
  switch (to) {
    case 1:
      return DType::f32;
    case 11:
      return DType::f64;
    case 10:
      return DType::f16;
    case 16:
      return DType::bf16;
    case 6:
      return DType::i32;
    case 7:
      return DType::i64;
    case 12:
      return DType::u32;
    case 13:
      return DType::u64;
    case 5:
      return DType::i16;
    case 4:
      return DType::u16;
    case 3:
      return DType::i8;
    case 2:
      return DType::u8;
    case 9:
      return DType::boolean;
    default:
      throw_user_error(
          "{}: attribute {} = {}: ONNX type {} has no Tessera dtype (expected 1, 2, 3, 4, 5, 6, 7, "
          "9, 10, 11, 12, 13 or 16)",
          c.where, attr, to, to);
  }
}

// An op that ONNX before opset 13 applies to the input coerced to 2-D at `axis` (default 1)
// and from opset 13 along the single axis (default -1), as Softmax and Hardmax.
template <typename Fn>
Tensor run_axis_op(const Ctx& c, Fn fn) {
  const Tensor& x = c.x(0);
  const int r = x.rank();
  if (c.opset >= 13) return fn(x, c.axis(c.node.attr_int("axis", -1), r));
  const std::int64_t a = c.node.attr_int("axis", 1);
  const int boundary = r - (a < 0 ? static_cast<int>(a) + r : static_cast<int>(a));
  if (boundary < 0 || boundary > r)
    throw_user_error("{}: attribute axis = {} is out of range for rank {} (valid: {} to {})",
                     c.where, a, r, -r, r);
  std::int64_t inner = 1;
  for (int d = 0; d < boundary; ++d) inner *= x.dim(d);
  const Tensor flat = x.reshape(Shape{inner, x.element_count() / std::max<std::int64_t>(inner, 1)});
  Tensor y = fn(flat, 0);
  y.reshape_in_place(x.shape());
  return y;
}

std::int64_t scalar_int(const Ctx& c, std::size_t input, const char* name) {
  if (c.x(input).element_count() != 1)
    throw_user_error("{}: input {} ({}) must hold one value, got shape {}", c.where, input, name,
                     c.x(input).shape().to_string());
  return c.x(input).to_ints()[0];
}

// MaxUnpool-11: the indices address the output shape inferred from kernel, strides and pads;
// an explicit output_shape pads that result with zeros at the end of each spatial dim.
Tensor run_max_unpool(const Ctx& c) {
  const Tensor& x = c.x(0);
  const std::size_t s = spatial_rank(c, x);
  const auto kernel = c.node.attr_ints("kernel_shape");
  if (kernel.size() != s)
    throw_user_error("{}: attribute kernel_shape lists {} sizes; expected {}", c.where,
                     kernel.size(), s);
  const auto strides = filled(c.node.attr_ints("strides"), s, 1);
  const auto pads = filled(c.node.attr_ints("pads"), 2 * s, 0);
  std::vector<std::int64_t> inferred = {x.dim(x.rank() - 1), x.dim(x.rank() - 2)};
  for (std::size_t i = 0; i < s; ++i)
    inferred.push_back((spatial_dim(x.shape(), i, s) - 1) * strides[i] + kernel[i] - pads[i] -
                       pads[s + i]);
  Tensor y = ops::max_unpool(x, c.x(1), Shape::from_outer_first(inferred));
  if (!c.has(2)) return y;
  const std::vector<std::int64_t> wanted = c.x(2).to_ints();
  if (wanted.size() != inferred.size())
    throw_user_error("{}: output_shape lists {} dims; the input has rank {}", c.where,
                     wanted.size(), x.rank());
  ops::PadParams p;
  const int r = x.rank();
  p.pads.assign(static_cast<std::size_t>(2 * r), 0);
  for (int d = 0; d < r; ++d) {
    const std::int64_t extra =
        wanted[static_cast<std::size_t>(r - 1 - d)] - inferred[static_cast<std::size_t>(r - 1 - d)];
    if (extra < 0 || (d >= r - 2 && extra != 0))
      throw_user_error(
          "{}: output_shape {} is smaller than the shape {} the pooling parameters give, or "
          "changes N or C",
          c.where, ops_list(wanted), ops_list(inferred));
    p.pads[static_cast<std::size_t>(r + d)] = extra;
  }
  return ops::pad(y, p);
}

// Upsample-7/9: nearest or linear with asymmetric coordinates (Resize-10's semantics); scales
// are an attribute at opset 7 and an input from opset 9.
Tensor run_upsample(const Ctx& c) {
  const Tensor& x = c.x(0);
  ops::ResizeParams p;
  const std::string mode = c.node.attr_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "bilinear")
    throw_user_error("{}: attribute mode is '{}'; expected nearest, linear or bilinear", c.where,
                     mode);
  p.mode = mode == "nearest" ? ops::ResizeMode::nearest : ops::ResizeMode::linear;
  p.coordinate_transformation_mode = ops::CoordinateTransform::asymmetric;
  p.nearest_mode = ops::NearestMode::floor;
  std::vector<float> scales = c.has(1) ? c.x(1).to_floats() : c.node.attr_floats("scales");
  if (scales.size() != static_cast<std::size_t>(x.rank()))
    throw_user_error("{}: scales lists {} values; the input has rank {}", c.where, scales.size(),
                     x.rank());
  std::reverse(scales.begin(), scales.end());
  p.scales = scales;
  return ops::resize(x, p);
}

std::vector<Tensor> run_recurrent(const Ctx& c) {
  const Node& n = c.node;
  ops::RnnParams p;
  p.cell = n.op == "RNN"   ? ops::RnnCell::rnn
           : n.op == "GRU" ? ops::RnnCell::gru
                           : ops::RnnCell::lstm;
  if (!n.has_attr("hidden_size"))
    throw_user_error("{}: attribute hidden_size is required", c.where);
  p.hidden_size = n.attr_int("hidden_size", 0);
  const std::string dir = n.attr_string("direction", "forward");
  if (dir == "forward")
    p.direction = ops::RnnDirection::forward;
  else if (dir == "reverse")
    p.direction = ops::RnnDirection::reverse;
  else if (dir == "bidirectional")
    p.direction = ops::RnnDirection::bidirectional;
  else
    throw_user_error("{}: attribute direction is '{}'; expected forward, reverse or bidirectional",
                     c.where, dir);
  if (n.has_attr("activations")) {
    const auto& a = n.attrs.at("activations");
    if (const auto* v = std::get_if<std::vector<std::string>>(&a)) p.activations = *v;
  }
  p.activation_alpha = n.attr_floats("activation_alpha");
  p.activation_beta = n.attr_floats("activation_beta");
  if (n.has_attr("clip")) p.clip = n.attr_float("clip", 0.0f);
  const std::int64_t layout = n.attr_int("layout", 0);
  if (layout != 0 && layout != 1)
    throw_user_error("{}: attribute layout is {}; expected 0 or 1", c.where, layout);
  p.batch_first = layout == 1;
  p.input_forget = n.attr_int("input_forget", 0) != 0;
  p.linear_before_reset = n.attr_int("linear_before_reset", 0) != 0;
  const auto opt = [&](std::size_t i) { return c.has(i) ? c.in[i] : nullptr; };
  const bool lstm = p.cell == ops::RnnCell::lstm;
  ops::RnnResult r = ops::recurrent(c.x(0), c.x(1), c.x(2), opt(3), opt(4), opt(5),
                                    lstm ? opt(6) : nullptr, lstm ? opt(7) : nullptr, p);
  std::vector<Tensor> out{std::move(r.y), std::move(r.y_h)};
  if (lstm) out.push_back(std::move(r.y_c));
  return out;
}

// Every input, each required, without copying them.
std::vector<const Tensor*> input_list(const Ctx& c) {
  std::vector<const Tensor*> v;
  for (std::size_t i = 0; i < c.in.size(); ++i) v.push_back(&c.x(i));
  return v;
}

std::vector<Tensor> copy_inputs(const Ctx& c) {
  std::vector<Tensor> v;
  for (std::size_t i = 0; i < c.in.size(); ++i) v.push_back(c.x(i));
  return v;
}

std::optional<ops::Scalar> scalar_operand(const Ctx& c, std::size_t input, const char* attr,
                                          bool old_form) {
  if (old_form) {
    if (!c.node.has_attr(attr)) return std::nullopt;
    return c.node.attr_float(attr, 0.0f);
  }
  if (!c.has(input)) return std::nullopt;
  if (c.x(input).element_count() != 1) throw_user_error("{}: {} must be a scalar", c.where, attr);
  return ops::Scalar::of(c.x(input));
}

// An op's results, moved in: `return {a, b}` into a std::vector would copy every tensor (an
// initializer list holds const elements).
struct Results : std::vector<Tensor> {
  Results(std::vector<Tensor> v) : std::vector<Tensor>(std::move(v)) {}
  template <typename... T>
    requires(std::is_same_v<std::remove_cvref_t<T>, Tensor> && ...)
  Results(T&&... t) {
    reserve(sizeof...(T));
    (emplace_back(std::forward<T>(t)), ...);
  }
};

Results dispatch(const Ctx& c) {
  const std::string& op = c.node.op;
  const Node& n = c.node;
  // Binary and unary elementwise.
  if (op == "Add") return {ops::add(c.x(0), c.x(1))};
  if (op == "Sub") return {ops::sub(c.x(0), c.x(1))};
  if (op == "Mul") return {ops::mul(c.x(0), c.x(1))};
  if (op == "Div") return {ops::div(c.x(0), c.x(1))};
  if (op == "Pow") return {ops::pow(c.x(0), c.x(1))};
  if (op == "Equal") return {ops::equal(c.x(0), c.x(1))};
  if (op == "Less") return {ops::less(c.x(0), c.x(1))};
  if (op == "Greater") return {ops::greater(c.x(0), c.x(1))};
  if (op == "Where") return {ops::where(c.x(0), c.x(1), c.x(2))};
  if (op == "Neg") return {ops::neg(c.x(0))};
  if (op == "Abs") return {ops::abs(c.x(0))};
  if (op == "Exp") return {ops::exp(c.x(0))};
  if (op == "Log") return {ops::log(c.x(0))};
  if (op == "Sqrt") return {ops::sqrt(c.x(0))};
  if (op == "Reciprocal") return {ops::reciprocal(c.x(0))};
  if (op == "Relu") return {ops::relu(c.x(0))};
  if (op == "LeakyRelu") return {ops::leaky_relu(c.x(0), n.attr_float("alpha", 0.01f))};
  if (op == "Elu") return {ops::elu(c.x(0), n.attr_float("alpha", 1.0f))};
  if (op == "Selu")
    return {ops::selu(c.x(0), n.attr_float("alpha", 1.67326319217681884765625f),
                      n.attr_float("gamma", 1.05070102214813232421875f))};
  if (op == "Sigmoid") return {ops::sigmoid(c.x(0))};
  if (op == "Tanh") return {ops::tanh(c.x(0))};
  if (op == "Softplus") return {ops::softplus(c.x(0))};
  if (op == "Erf") return {ops::erf(c.x(0))};
  if (op == "Clip") {
    const bool old_form = c.opset < 11;
    return {ops::clip(c.x(0), scalar_operand(c, 1, "min", old_form),
                      scalar_operand(c, 2, "max", old_form))};
  }
  if (op == "Sum" || op == "Max" || op == "Min") {
    if (c.in.size() == 1) return {ops::identity(c.x(0))};
    if (op == "Sum" && c.in.size() == 2) return {ops::add(c.x(0), c.x(1))};
    const auto all = copy_inputs(c);
    return {op == "Sum" ? ops::sum(all) : op == "Max" ? ops::max(all) : ops::min(all)};
  }
  // Linear algebra, convolution, pooling, normalisation.
  if (op == "MatMul") return {ops::matmul(c.x(0), c.x(1))};
  if (op == "Gemm") {
    ops::GemmParams p;
    p.alpha = n.attr_float("alpha", 1.0f);
    p.beta = n.attr_float("beta", 1.0f);
    p.trans_a = n.attr_int("transA", 0) != 0;
    p.trans_b = n.attr_int("transB", 0) != 0;
    return {ops::gemm(c.x(0), c.x(1), c.has(2) ? c.in[2] : nullptr, p)};
  }
  if (op == "Conv") return {run_conv(c)};
  if (op == "ConvTranspose") return {run_conv_transpose(c)};
  if (op == "MaxPool") {
    // storage_order only changes how the Indices output flattens positions.
    if (n.outputs.size() > 1 && n.outputs[1] != kNoValue) {
      ops::MaxPoolResult r =
          ops::max_pool_with_indices(c.x(0), pool_params(c), n.attr_int("storage_order", 0) != 0);
      return {std::move(r.values), std::move(r.indices)};
    }
    return {ops::max_pool(c.x(0), pool_params(c))};
  }
  if (op == "AveragePool") return {ops::average_pool(c.x(0), pool_params(c))};
  if (op == "GlobalAveragePool") return {ops::global_average_pool(c.x(0))};
  if (op == "GlobalMaxPool") return {ops::global_max_pool(c.x(0))};
  if (op == "BatchNormalization") {
    if (n.attr_int("training_mode", 0) != 0 ||
        std::count_if(n.outputs.begin(), n.outputs.end(), [](ValueId v) { return v != kNoValue; }) >
            1)
      throw_user_error("{}: training-mode BatchNormalization is not supported (inference only)",
                       c.where);
    return {ops::batch_normalization(c.x(0), c.x(1), c.x(2), c.x(3), c.x(4),
                                     n.attr_float("epsilon", 1e-5f))};
  }
  if (op == "LayerNormalization") {
    if (n.attr_int("stash_type", 1) != 1)
      throw_user_error("{}: only stash_type=1 (float) is supported", c.where);
    const int ax = c.axis(n.attr_int("axis", -1), c.x(0).rank());
    const bool stats_used = std::any_of(n.outputs.begin() + 1, n.outputs.end(),
                                        [](ValueId v) { return v != kNoValue; });
    ops::LayerNormStats stats;
    Tensor y =
        ops::layer_normalization(c.x(0), c.x(1), c.has(2) ? c.in[2] : nullptr, ax,
                                 n.attr_float("epsilon", 1e-5f), stats_used ? &stats : nullptr);
    if (!stats_used) return {std::move(y)};
    return {std::move(y), std::move(stats.mean), std::move(stats.inv_std_dev)};
  }
  if (op == "InstanceNormalization")
    return {ops::instance_normalization(c.x(0), c.x(1), c.x(2), n.attr_float("epsilon", 1e-5f))};
  if (op == "Softmax") return {run_softmax(c, false)};
  if (op == "Hardmax")
    return {run_axis_op(c, [](const Tensor& x, int axis) { return ops::hardmax(x, axis); })};
  if (op == "LogSoftmax") return {run_softmax(c, true)};
  // Shape manipulation.
  if (op == "Reshape") {
    bool present = false;
    const auto dims = c.ints_operand("shape", 1, &present);
    return {ops::reshape(
        c.x(0), ops::resolve_reshape(c.x(0).shape(), dims, n.attr_int("allowzero", 0) != 0))};
  }
  if (op == "Flatten") {
    const int r = c.x(0).rank();
    std::int64_t a = n.attr_int("axis", 1);
    if (a < 0) a += r;
    if (a < 0 || a > r)
      throw_user_error("{}: axis {} out of range for rank {}", c.where, n.attr_int("axis", 1), r);
    return {ops::flatten(c.x(0), r - static_cast<int>(a))};
  }
  if (op == "Transpose") {
    const int r = c.x(0).rank();
    const auto p = n.attr_ints("perm");
    std::vector<int> perm;
    if (!p.empty()) {
      if (p.size() != static_cast<std::size_t>(r))
        throw_user_error("{}: perm must list {} axes", c.where, r);
      for (int j = 0; j < r; ++j)
        perm.push_back(r - 1 - static_cast<int>(p[static_cast<std::size_t>(r - 1 - j)]));
    }
    return {ops::transpose(c.x(0), perm)};
  }
  if (op == "Concat")
    return {ops::concat(input_list(c), c.axis(n.attr_int("axis", 0), c.x(0).rank()))};
  if (op == "Split") return run_split(c);
  if (op == "Slice") return {run_slice(c)};
  if (op == "Squeeze") {
    bool present = false;
    return {ops::squeeze(c.x(0), c.axes(c.ints_operand("axes", 1, &present), c.x(0).rank()))};
  }
  if (op == "Unsqueeze") {
    bool present = false;
    const auto onnx_axes = c.ints_operand("axes", 1, &present);
    const int out_rank = c.x(0).rank() + static_cast<int>(onnx_axes.size());
    return {ops::unsqueeze(c.x(0), c.axes(onnx_axes, out_rank))};
  }
  if (op == "Gather")
    return {ops::gather(c.x(0), c.x(1), c.axis(n.attr_int("axis", 0), c.x(0).rank()))};
  if (op == "Pad") return {run_pad(c)};
  if (op == "Cast") {
    const auto to = static_cast<int>(n.attr_int("to", 1));
    const DType dt = onnx_dtype(c, to, "to");
    return {ops::cast(c.x(0), dt)};
  }
  if (op == "Identity") return {ops::identity(c.x(0))};
  if (op == "Dropout") {
    if (c.has(2) && c.x(2).element_count() == 1 && c.x(2).at<double>(0) != 0.0)
      throw_user_error("{}: training-mode Dropout is not supported (inference only)", c.where);
    std::vector<Tensor> out{ops::identity(c.x(0))};
    if (n.outputs.size() > 1) out.push_back(Tensor::full(DType::boolean, c.x(0).shape(), 1.0));
    return out;
  }
  if (op == "Expand") return {ops::expand(c.x(0), Shape::from_outer_first(c.x(1).to_ints()))};
  if (op == "Shape") {
    std::optional<std::int64_t> end;
    if (n.has_attr("end")) end = n.attr_int("end", 0);
    return {ops::shape(c.x(0), n.attr_int("start", 0), end)};
  }
  if (op == "ReduceSum") return {ops::reduce_sum(c.x(0), reduce_params(c, c.x(0).rank()))};
  if (op == "ReduceMean") return {ops::reduce_mean(c.x(0), reduce_params(c, c.x(0).rank()))};
  if (op == "ReduceMax") return {ops::reduce_max(c.x(0), reduce_params(c, c.x(0).rank()))};
  if (op == "ReduceMin") return {ops::reduce_min(c.x(0), reduce_params(c, c.x(0).rank()))};
  if (op == "ArgMax")
    return {ops::argmax(c.x(0), c.axis(n.attr_int("axis", 0), c.x(0).rank()),
                        n.attr_int("keepdims", 1) != 0, n.attr_int("select_last_index", 0) != 0)};
  if (op == "ArgMin")
    return {ops::argmin(c.x(0), c.axis(n.attr_int("axis", 0), c.x(0).rank()),
                        n.attr_int("keepdims", 1) != 0, n.attr_int("select_last_index", 0) != 0)};
  if (op == "ReduceProd") return {ops::reduce_prod(c.x(0), reduce_params(c, c.x(0).rank()))};
  if (op == "Mod") return {ops::mod(c.x(0), c.x(1), n.attr_int("fmod", 0) != 0)};
  if (op == "And") return {ops::logical_and(c.x(0), c.x(1))};
  if (op == "Or") return {ops::logical_or(c.x(0), c.x(1))};
  if (op == "Xor") return {ops::logical_xor(c.x(0), c.x(1))};
  if (op == "Not") return {ops::logical_not(c.x(0))};
  if (op == "LessOrEqual") return {ops::less_or_equal(c.x(0), c.x(1))};
  if (op == "GreaterOrEqual") return {ops::greater_or_equal(c.x(0), c.x(1))};
  if (op == "Floor") return {ops::floor(c.x(0))};
  if (op == "Ceil") return {ops::ceil(c.x(0))};
  if (op == "Round") return {ops::round(c.x(0))};
  if (op == "Sign") return {ops::sign(c.x(0))};
  if (op == "PRelu") return {ops::prelu(c.x(0), c.x(1))};
  if (op == "HardSigmoid")
    return {ops::hard_sigmoid(c.x(0), n.attr_float("alpha", 0.2f), n.attr_float("beta", 0.5f))};
  if (op == "HardSwish") return {ops::hard_swish(c.x(0))};
  if (op == "Range") return {run_range(c)};
  if (op == "CumSum") {
    if (c.x(1).element_count() != 1)
      throw_user_error("{}: axis must be a scalar, got shape {}", c.where,
                       c.x(1).shape().to_string());
    return {ops::cum_sum(c.x(0), c.axis(c.x(1).to_ints()[0], c.x(0).rank()),
                         n.attr_int("exclusive", 0) != 0, n.attr_int("reverse", 0) != 0)};
  }
  if (op == "Tile") {
    auto repeats = c.x(1).to_ints();
    if (repeats.size() != static_cast<std::size_t>(c.x(0).rank()))
      throw_user_error("{}: repeats lists {} values but the input has rank {}", c.where,
                       repeats.size(), c.x(0).rank());
    std::reverse(repeats.begin(), repeats.end());
    return {ops::tile(c.x(0), repeats)};
  }
  if (op == "TopK") {
    std::int64_t k = 0;
    if (c.opset < 10) {
      k = n.attr_int("k", 0);
    } else {
      if (c.x(1).element_count() != 1)
        throw_user_error("{}: K must hold one value, got shape {}", c.where,
                         c.x(1).shape().to_string());
      k = c.x(1).to_ints()[0];
    }
    ops::TopKResult r = ops::top_k(c.x(0), k, c.axis(n.attr_int("axis", -1), c.x(0).rank()),
                                   n.attr_int("largest", 1) != 0, n.attr_int("sorted", 1) != 0);
    return {std::move(r.values), std::move(r.indices)};
  }
  if (op == "DepthToSpace") {
    const std::string mode = n.attr_string("mode", "DCR");
    if (mode != "DCR" && mode != "CRD")
      throw_user_error("{}: attribute mode is '{}'; expected DCR or CRD", c.where, mode);
    return {ops::depth_to_space(c.x(0), n.attr_int("blocksize", 0), mode == "CRD")};
  }
  if (op == "SpaceToDepth") return {ops::space_to_depth(c.x(0), n.attr_int("blocksize", 0))};
  if (op == "Size") return {Tensor::from_ints(DType::i64, Shape{}, {c.x(0).element_count()})};
  if (op == "CastLike") return {ops::cast(c.x(0), c.x(1).dtype())};
  if (op == "Sin") return {ops::sin(c.x(0))};
  if (op == "Cos") return {ops::cos(c.x(0))};
  if (op == "Tan") return {ops::tan(c.x(0))};
  if (op == "Asin") return {ops::asin(c.x(0))};
  if (op == "Acos") return {ops::acos(c.x(0))};
  if (op == "Atan") return {ops::atan(c.x(0))};
  if (op == "Sinh") return {ops::sinh(c.x(0))};
  if (op == "Cosh") return {ops::cosh(c.x(0))};
  if (op == "Asinh") return {ops::asinh(c.x(0))};
  if (op == "Acosh") return {ops::acosh(c.x(0))};
  if (op == "Atanh") return {ops::atanh(c.x(0))};
  if (op == "Softsign") return {ops::softsign(c.x(0))};
  if (op == "Celu") return {ops::celu(c.x(0), n.attr_float("alpha", 1.0f))};
  if (op == "ThresholdedRelu") return {ops::thresholded_relu(c.x(0), n.attr_float("alpha", 1.0f))};
  if (op == "Shrink")
    return {ops::shrink(c.x(0), n.attr_float("lambd", 0.5f), n.attr_float("bias", 0.0f))};
  if (op == "IsNaN") return {ops::is_nan(c.x(0))};
  if (op == "IsInf")
    return {ops::is_inf(c.x(0), n.attr_int("detect_negative", 1) != 0,
                        n.attr_int("detect_positive", 1) != 0)};
  if (op == "BitShift") {
    const std::string dir = n.attr_string("direction", "");
    if (dir != "LEFT" && dir != "RIGHT")
      throw_user_error("{}: attribute direction is '{}'; expected LEFT or RIGHT", c.where, dir);
    return {ops::bit_shift(c.x(0), c.x(1), dir == "LEFT")};
  }
  if (op == "Mean") return {ops::mean(copy_inputs(c))};
  if (op == "ReduceL1") return {ops::reduce_l1(c.x(0), reduce_params(c, c.x(0).rank()))};
  if (op == "ReduceL2") return {ops::reduce_l2(c.x(0), reduce_params(c, c.x(0).rank()))};
  if (op == "ReduceLogSum") return {ops::reduce_log_sum(c.x(0), reduce_params(c, c.x(0).rank()))};
  if (op == "ReduceLogSumExp")
    return {ops::reduce_log_sum_exp(c.x(0), reduce_params(c, c.x(0).rank()))};
  if (op == "ReduceSumSquare")
    return {ops::reduce_sum_square(c.x(0), reduce_params(c, c.x(0).rank()))};
  if (op == "GatherElements")
    return {ops::gather_elements(c.x(0), c.x(1), c.axis(n.attr_int("axis", 0), c.x(0).rank()))};
  if (op == "ScatterElements" || op == "Scatter") {
    const std::string red = n.attr_string("reduction", "none");
    ops::ScatterReduction reduction{};
    try {
      reduction = ops::parse_scatter_reduction(red);
    } catch (const UserError& e) {
      throw_user_error("{}: attribute {}", c.where, e.what());
    }
    return {ops::scatter_elements(c.x(0), c.x(1), c.x(2),
                                  c.axis(n.attr_int("axis", 0), c.x(0).rank()), reduction)};
  }
  if (op == "ScatterND") {
    const std::string red = n.attr_string("reduction", "none");
    ops::ScatterReduction reduction{};
    try {
      reduction = ops::parse_scatter_reduction(red);
    } catch (const UserError& e) {
      throw_user_error("{}: attribute {}", c.where, e.what());
    }
    return {ops::scatter_nd(c.x(0), c.x(1), c.x(2), reduction)};
  }
  if (op == "GatherND") return {ops::gather_nd(c.x(0), c.x(1), n.attr_int("batch_dims", 0))};
  if (op == "OneHot") {
    const int out_rank = c.x(0).rank() + 1;
    // depth may have any numeric dtype; a float depth truncates, as ONNX says.
    if (c.x(1).element_count() != 1)
      throw_user_error("{}: input 1 (depth) must hold one value, got shape {}", c.where,
                       c.x(1).shape().to_string());
    const auto depth = static_cast<std::int64_t>(std::trunc(c.x(1).at<double>(0)));
    return {ops::one_hot(c.x(0), depth, c.x(2), c.axis(n.attr_int("axis", -1), out_rank))};
  }
  if (op == "EyeLike") {
    const DType dt = n.has_attr("dtype")
                         ? onnx_dtype(c, static_cast<int>(n.attr_int("dtype", 1)), "dtype")
                         : c.x(0).dtype();
    return {ops::eye_like(c.x(0).shape(), dt, n.attr_int("k", 0))};
  }
  if (op == "Trilu")
    return {ops::trilu(c.x(0), c.has(1) ? scalar_int(c, 1, "k") : 0, n.attr_int("upper", 1) != 0)};
  if (op == "Compress") {
    std::optional<int> axis;
    if (n.has_attr("axis")) axis = c.axis(n.attr_int("axis", 0), c.x(0).rank());
    return {ops::compress(c.x(0), c.x(1), axis)};
  }
  if (op == "NonZero") return {ops::non_zero(c.x(0))};
  if (op == "Unique") {
    std::optional<int> axis;
    if (n.has_attr("axis")) axis = c.axis(n.attr_int("axis", 0), c.x(0).rank());
    ops::UniqueResult u = ops::unique(c.x(0), axis, n.attr_int("sorted", 1) != 0);
    return {std::move(u.y), std::move(u.indices), std::move(u.inverse_indices),
            std::move(u.counts)};
  }
  if (op == "NonMaxSuppression") {
    std::optional<float> score_threshold;
    if (c.has(4)) score_threshold = static_cast<float>(c.x(4).at<double>(0));
    return {ops::non_max_suppression(c.x(0), c.x(1),
                                     c.has(2) ? scalar_int(c, 2, "max_output_boxes_per_class") : 0,
                                     c.has(3) ? static_cast<float>(c.x(3).at<double>(0)) : 0.0f,
                                     score_threshold, n.attr_int("center_point_box", 0) != 0)};
  }
  if (op == "ReverseSequence")
    return {ops::reverse_sequence(c.x(0), c.x(1), c.axis(n.attr_int("time_axis", 0), c.x(0).rank()),
                                  c.axis(n.attr_int("batch_axis", 1), c.x(0).rank()))};
  if (op == "LRN") {
    if (!n.has_attr("size")) throw_user_error("{}: attribute size is required", c.where);
    return {ops::lrn(c.x(0), n.attr_int("size", 1), n.attr_float("alpha", 1e-4f),
                     n.attr_float("beta", 0.75f), n.attr_float("bias", 1.0f))};
  }
  if (op == "Einsum") return {ops::einsum(n.attr_string("equation", ""), copy_inputs(c))};
  if (op == "Det") return {ops::det(c.x(0))};
  if (op == "HannWindow" || op == "HammingWindow" || op == "BlackmanWindow") {
    const ops::WindowKind kind = op == "HannWindow"      ? ops::WindowKind::hann
                                 : op == "HammingWindow" ? ops::WindowKind::hamming
                                                         : ops::WindowKind::blackman;
    return {ops::window(
        kind, scalar_int(c, 0, "size"), n.attr_int("periodic", 1) != 0,
        onnx_dtype(c, static_cast<int>(n.attr_int("output_datatype", 1)), "output_datatype"))};
  }
  if (op == "MelWeightMatrix")
    return {ops::mel_weight_matrix(
        scalar_int(c, 0, "num_mel_bins"), scalar_int(c, 1, "dft_length"),
        scalar_int(c, 2, "sample_rate"), c.x(3).at<double>(0), c.x(4).at<double>(0),
        onnx_dtype(c, static_cast<int>(n.attr_int("output_datatype", 1)), "output_datatype"))};
  if (op == "ConstantOfShape") {
    const Tensor* value = n.attr_tensor("value");
    if (value && value->element_count() != 1)
      throw_user_error("{}: attribute value must hold one element, got shape {}", c.where,
                       value->shape().to_string());
    const Shape shape = Shape::from_outer_first(c.x(0).to_ints());
    // Broadcast, not a trip through double: an int64 value beyond 2^53 stays exact.
    return {value ? ops::expand(value->reshape(Shape{}), shape) : Tensor(DType::f32, shape)};
  }
  if (op == "NegativeLogLikelihoodLoss" || op == "SoftmaxCrossEntropyLoss") {
    ops::LossReduction reduction{};
    try {
      reduction = ops::parse_loss_reduction(n.attr_string("reduction", "mean"));
    } catch (const UserError& e) {
      throw_user_error("{}: attribute {}", c.where, e.what());
    }
    std::optional<std::int64_t> ignore;
    if (n.has_attr("ignore_index")) ignore = n.attr_int("ignore_index", 0);
    const Tensor* w = c.has(2) ? c.in[2] : nullptr;
    if (op == "NegativeLogLikelihoodLoss")
      return {ops::negative_log_likelihood_loss(c.x(0), c.x(1), w, reduction, ignore)};
    ops::SoftmaxCrossEntropyResult r =
        ops::softmax_cross_entropy_loss(c.x(0), c.x(1), w, reduction, ignore);
    return {std::move(r.loss), std::move(r.log_prob)};
  }
  if (op == "RNN" || op == "GRU" || op == "LSTM") return run_recurrent(c);
  if (op == "QuantizeLinear" || op == "DequantizeLinear") {
    const int r = c.x(0).rank();
    // axis matters only for a per-axis (1-D) scale.
    const bool per_axis = c.x(1).element_count() != 1;
    const int ax = r == 0 || !per_axis ? 0 : c.axis(n.attr_int("axis", 1), r);
    const Tensor* zp = c.has(2) ? c.in[2] : nullptr;
    return {op == "QuantizeLinear" ? ops::quantize_linear(c.x(0), c.x(1), zp, ax)
                                   : ops::dequantize_linear(c.x(0), c.x(1), zp, ax)};
  }
  if (op == "DynamicQuantizeLinear") {
    ops::DynamicQuantizeResult r = ops::dynamic_quantize_linear(c.x(0));
    return {std::move(r.y), std::move(r.y_scale), std::move(r.y_zero_point)};
  }
  if (op == "MatMulInteger")
    return {ops::matmul_integer(c.x(0), c.x(1), c.has(2) ? c.in[2] : nullptr,
                                c.has(3) ? c.in[3] : nullptr)};
  if (op == "QLinearMatMul")
    return {ops::qlinear_matmul(c.x(0), c.x(1), c.x(2), c.x(3), c.x(4), c.x(5), c.x(6), c.x(7))};
  if (op == "ConvInteger" || op == "QLinearConv") {
    const bool q = op == "QLinearConv";
    const Tensor& x = c.x(0);
    const Tensor& w = c.x(q ? 3 : 1);
    const std::size_t s = spatial_rank(c, x);
    ops::ConvParams p;
    p.strides = filled(n.attr_ints("strides"), s, 1);
    p.dilations = filled(n.attr_ints("dilations"), s, 1);
    p.pads = explicit_pads(c, s);
    p.group = n.attr_int("group", 1);
    if (!q)
      return {
          ops::conv_integer(x, w, c.has(2) ? c.in[2] : nullptr, c.has(3) ? c.in[3] : nullptr, p)};
    return {ops::qlinear_conv(x, c.x(1), c.x(2), w, c.x(4), c.x(5), c.x(6), c.x(7),
                              c.has(8) ? c.in[8] : nullptr, p)};
  }
  if (op == "GridSample") {
    const std::string mode = n.attr_string("mode", "bilinear");
    const std::string pad = n.attr_string("padding_mode", "zeros");
    if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
      throw_user_error("{}: attribute mode is '{}'; expected bilinear, nearest or bicubic", c.where,
                       mode);
    if (pad != "zeros" && pad != "border" && pad != "reflection")
      throw_user_error("{}: attribute padding_mode is '{}'; expected zeros, border or reflection",
                       c.where, pad);
    return {ops::grid_sample(c.x(0), c.x(1),
                             mode == "bilinear"  ? ops::GridSampleMode::bilinear
                             : mode == "nearest" ? ops::GridSampleMode::nearest
                                                 : ops::GridSampleMode::bicubic,
                             pad == "zeros"    ? ops::GridSamplePadding::zeros
                             : pad == "border" ? ops::GridSamplePadding::border
                                               : ops::GridSamplePadding::reflection,
                             n.attr_int("align_corners", 0) != 0)};
  }
  if (op == "DFT") {
    std::optional<std::int64_t> len;
    if (c.has(1)) len = scalar_int(c, 1, "dft_length");
    return {ops::dft(c.x(0), c.axis(n.attr_int("axis", 1), c.x(0).rank()), len,
                     n.attr_int("inverse", 0) != 0, n.attr_int("onesided", 0) != 0)};
  }
  if (op == "STFT") {
    std::optional<std::int64_t> len;
    if (c.has(3)) len = scalar_int(c, 3, "frame_length");
    return {ops::stft(c.x(0), scalar_int(c, 1, "frame_step"), c.has(2) ? c.in[2] : nullptr, len,
                      n.attr_int("onesided", 1) != 0)};
  }
  if (op == "MeanVarianceNormalization") {
    std::vector<std::int64_t> axes = n.attr_ints("axes");
    if (!n.has_attr("axes")) axes = {0, 2, 3};
    return {ops::mean_variance_normalization(c.x(0), c.axes(axes, c.x(0).rank()))};
  }
  if (op == "TfIdfVectorizer") {
    if (n.has_attr("pool_strings"))
      throw_user_error(
          "{}: attribute pool_strings: string pools are not supported (Tessera has "
          "no string tensors); expected pool_int64s",
          c.where);
    ops::TfIdfParams p;
    p.min_gram_length = n.attr_int("min_gram_length", 1);
    p.max_gram_length = n.attr_int("max_gram_length", 1);
    p.max_skip_count = n.attr_int("max_skip_count", 0);
    try {
      p.mode = ops::parse_tf_idf_mode(n.attr_string("mode", "TF"));
    } catch (const UserError& e) {
      throw_user_error("{}: attribute {}", c.where, e.what());
    }
    p.ngram_counts = n.attr_ints("ngram_counts");
    p.ngram_indexes = n.attr_ints("ngram_indexes");
    p.pool = n.attr_ints("pool_int64s");
    p.weights = n.attr_floats("weights");
    return {ops::tf_idf_vectorizer(c.x(0), p)};
  }
  if (op == "RoiAlign") {
    ops::RoiAlignParams p;
    const std::string ctm = n.attr_string("coordinate_transformation_mode",
                                          c.opset >= 16 ? "half_pixel" : "output_half_pixel");
    const std::string mode = n.attr_string("mode", "avg");
    if (ctm != "half_pixel" && ctm != "output_half_pixel")
      throw_user_error(
          "{}: attribute coordinate_transformation_mode is '{}'; expected half_pixel or "
          "output_half_pixel",
          c.where, ctm);
    if (mode != "avg" && mode != "max")
      throw_user_error("{}: attribute mode is '{}'; expected avg or max", c.where, mode);
    p.half_pixel = ctm == "half_pixel";
    p.max_mode = mode == "max";
    p.output_height = n.attr_int("output_height", 1);
    p.output_width = n.attr_int("output_width", 1);
    p.sampling_ratio = n.attr_int("sampling_ratio", 0);
    p.spatial_scale = n.attr_float("spatial_scale", 1.0f);
    return {ops::roi_align(c.x(0), c.x(1), c.x(2), p)};
  }
  if (op == "Upsample") return {run_upsample(c)};
  if (op == "MaxUnpool") return {run_max_unpool(c)};
  if (op == "Resize") return {run_resize(c)};
  throw_user_error("{}: op {} has no reference implementation", c.where, op);
}

}  // namespace

bool run_reference_in_place(const Node& node, Tensor& x, const std::vector<const Tensor*>& inputs) {
  // Layouts and int8 take run_reference's own paths.
  if (!node.layout.is_default() || is_int8_op(node.op) || x.dtype() != DType::f32) return false;
  if (node.op == "Relu" && inputs.size() == 1) {
    apply_activation(x, Activation{Activation::Kind::relu});  // ops::relu's rule, v > 0 ? v : 0
  } else if (inputs.size() != 2 || !inputs[1] ||
             !ops::arithmetic_in_place(node.op, x, *inputs[1])) {
    return false;
  }
  apply_activation(x, node.activation);
  return true;
}

std::vector<Tensor> run_reference(const Node& node, const std::vector<const Tensor*>& inputs,
                                  std::int64_t opset, ops::HostConvWeights* conv_weights) {
  const std::size_t layout_rank = node.layout.perm.size();
  if (!node.layout.is_default() && !inputs.empty() && inputs[0] &&
      inputs[0]->rank() == static_cast<int>(layout_rank)) {
    // A node a backend laid out in its own layout runs here in ONNX's order between transposes
    // of its activations of the layout's rank (convolution weights keep their own layout).
    const std::vector<int> to_onnx = ops_permutation(inverse_permutation(node.layout.perm));
    const std::vector<int> to_layout = ops_permutation(node.layout.perm);
    std::vector<Tensor> onnx_order;
    onnx_order.reserve(inputs.size());
    std::vector<const Tensor*> ins = inputs;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const bool weights = i == 1 && (node.op == "Conv" || node.op == "ConvTranspose");
      if (!inputs[i] || inputs[i]->rank() != static_cast<int>(layout_rank) || weights) continue;
      onnx_order.push_back(ops::transpose(*inputs[i], to_onnx));
      ins[i] = &onnx_order.back();
    }
    Node plain = node;
    plain.layout = Layout{};
    std::vector<Tensor> out = run_reference(plain, ins, opset, conv_weights);
    if (!out.empty() && out[0].rank() == static_cast<int>(layout_rank))
      out[0] = ops::transpose(out[0], to_layout);
    return out;
  }
  if (inputs.size() > 1 && inputs[1] &&
      (node.has_attr("tessera.weights_perm") ||
       node.attr_string("tessera.weights_layout", "") == "hwio")) {
    // Weights a backend stored in its own order (the layout pass records the ONNX perm it
    // applied; model files from before it was recorded carry only "hwio"): back to ONNX's.
    std::vector<int> to_onnx;
    if (node.has_attr("tessera.weights_perm"))
      to_onnx = ops_permutation(inverse_permutation(node.attr_ints("tessera.weights_perm")));
    else
      to_onnx = ops_permutation(inverse_permutation(kHwioOnnxPerm));
    const Tensor onnx_weights = ops::transpose(*inputs[1], to_onnx);
    std::vector<const Tensor*> ins = inputs;
    ins[1] = &onnx_weights;
    Node plain = node;
    plain.attrs.erase("tessera.weights_layout");
    plain.attrs.erase("tessera.weights_perm");
    return run_reference(plain, ins, opset, conv_weights);
  }
  if (is_int8_op(node.op)) return run_int8(node, inputs);
  Ctx c{node, inputs, opset, node.describe(), conv_weights};
  std::vector<Tensor> out = dispatch(c);
  if (out.size() < node.outputs.size()) out.resize(node.outputs.size());
  if (!out.empty()) apply_activation(out[0], node.activation);
  return out;
}

}  // namespace tessera::compiler
