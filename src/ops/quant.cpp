// Quantized ops: QuantizeLinear-13, DequantizeLinear-13, DynamicQuantizeLinear-11,
// MatMulInteger-10, QLinearMatMul-10, ConvInteger-10, QLinearConv-10. Integer products
// accumulate exactly in 64 bits; requantisation rounds half to even and saturates.
#include <algorithm>
#include <cmath>

#include "common.h"
#include "tessera/ops/reference.h"

namespace tessera::ops {

namespace {

std::vector<std::int64_t> dims_outer(const Tensor& t) {
  const auto o = t.shape().outer_first();
  return {o.begin(), o.end()};
}

void require_8bit(std::string_view op, const Tensor& t, const char* what) {
  if (t.dtype() != DType::u8 && t.dtype() != DType::i8)
    throw_user_error("{}: {} must be int8 or uint8, got {}", op, what, dtype_name(t.dtype()));
}

double saturate_to(DType dt, double v) {
  const double lo = dt == DType::u8 ? 0.0 : dt == DType::i8 ? -128.0 : -2147483648.0;
  const double hi = dt == DType::u8 ? 255.0 : dt == DType::i8 ? 127.0 : 2147483647.0;
  return std::min(hi, std::max(lo, v));
}

// Values of a scalar or 1-D per-slice parameter (scale, zero point), broadcast to `n` entries.
std::vector<double> per_slice(std::string_view op, const Tensor* t, const char* what,
                              std::int64_t n, double fallback) {
  if (!t) return std::vector<double>(static_cast<std::size_t>(n), fallback);
  const std::vector<double> v = t->to_doubles();
  if (v.size() == 1) return std::vector<double>(static_cast<std::size_t>(n), v[0]);
  if (static_cast<std::int64_t>(v.size()) != n || t->rank() != 1)
    throw_user_error("{}: {} has shape {}; expected a scalar or {} values", op, what,
                     t->shape().to_string(), n);
  return v;
}

// (A - a_zp) @ (B - b_zp) for A (..., M, K), B (..., K, N) in ONNX order; a_zp is per row of A
// (M), b_zp per column of B (N). Batch dims must match or one side is 2-D.
std::vector<std::int64_t> int_matmul(std::string_view op, const Tensor& a, const Tensor& b,
                                     const Tensor* a_zp, const Tensor* b_zp,
                                     std::vector<std::int64_t>& out_dims) {
  const auto ad = dims_outer(a), bd = dims_outer(b);
  if (ad.size() < 2 || bd.size() < 2)
    throw_user_error("{}: A {} and B {} must have rank >= 2", op, a.shape().to_string(),
                     b.shape().to_string());
  const std::int64_t m = ad[ad.size() - 2], k = ad.back(), n = bd.back();
  if (bd[bd.size() - 2] != k)
    throw_user_error("{}: inner dimensions differ: A {} has K={} but B {} has K={}", op,
                     a.shape().to_string(), k, b.shape().to_string(), bd[bd.size() - 2]);
  const std::vector<std::int64_t> abatch(ad.begin(), ad.end() - 2),
      bbatch(bd.begin(), bd.end() - 2);
  if (!abatch.empty() && !bbatch.empty() && abatch != bbatch)
    throw_user_error("{}: batch dims of A {} and B {} differ", op, a.shape().to_string(),
                     b.shape().to_string());
  out_dims = abatch.empty() ? bbatch : abatch;
  std::int64_t batches = 1;
  for (auto d : out_dims) batches *= d;
  out_dims.push_back(m);
  out_dims.push_back(n);
  const auto azp = per_slice(op, a_zp, "a_zero_point", m, 0.0);
  const auto bzp = per_slice(op, b_zp, "b_zero_point", n, 0.0);
  const std::vector<std::int64_t> av = a.to_ints(), bv = b.to_ints();
  std::vector<std::int64_t> out(static_cast<std::size_t>(batches * m * n), 0);
  for (std::int64_t bi = 0; bi < batches; ++bi) {
    const std::int64_t ao = abatch.empty() ? 0 : bi * m * k, bo = bbatch.empty() ? 0 : bi * k * n;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        std::int64_t acc = 0;
        for (std::int64_t q = 0; q < k; ++q)
          acc += (av[static_cast<std::size_t>(ao + i * k + q)] -
                  static_cast<std::int64_t>(azp[static_cast<std::size_t>(i)])) *
                 (bv[static_cast<std::size_t>(bo + q * n + j)] -
                  static_cast<std::int64_t>(bzp[static_cast<std::size_t>(j)]));
        out[static_cast<std::size_t>((bi * m + i) * n + j)] = acc;
      }
  }
  return out;
}

// Integer convolution of (x - x_zp) with (w - w_zp[m]) in ONNX order, 1-3 spatial dims.
std::vector<std::int64_t> int_conv(std::string_view op, const Tensor& x, const Tensor& w,
                                   const Tensor* x_zp, const Tensor* w_zp, const ConvParams& params,
                                   std::vector<std::int64_t>& out_dims) {
  const auto xd = dims_outer(x), wd = dims_outer(w);
  if (xd.size() < 3 || xd.size() > 5 || wd.size() != xd.size())
    throw_user_error("{}: X {} and W {} must have the same rank, 3 to 5", op, x.shape().to_string(),
                     w.shape().to_string());
  const std::size_t s = xd.size() - 2;
  const std::int64_t batch = xd[0], c = xd[1], m = wd[0], group = params.group;
  if (group < 1 || c % group != 0 || m % group != 0 || wd[1] != c / group)
    throw_user_error("{}: X has {} channels and W {} has {} per group; group {} does not fit", op,
                     c, w.shape().to_string(), wd[1], group);
  const auto fill = [&](std::vector<std::int64_t> v, std::size_t n, std::int64_t d) {
    if (v.empty()) v.assign(n, d);
    if (v.size() != n)
      throw_user_error("{}: a spatial attribute lists {} values; expected {}", op, v.size(), n);
    return v;
  };
  const auto strides = fill(params.strides, s, 1), dil = fill(params.dilations, s, 1),
             pads = fill(params.pads, 2 * s, 0);
  std::vector<std::int64_t> in_sp(xd.begin() + 2, xd.end()), k_sp(wd.begin() + 2, wd.end()),
      out_sp(s);
  std::int64_t out_count = 1, k_count = 1, in_count = 1;
  for (std::size_t i = 0; i < s; ++i) {
    out_sp[i] = (in_sp[i] + pads[i] + pads[s + i] - ((k_sp[i] - 1) * dil[i] + 1)) / strides[i] + 1;
    if (out_sp[i] < 1)
      throw_user_error("{}: the kernel does not fit spatial dim {} of X {}", op, i,
                       x.shape().to_string());
    out_count *= out_sp[i];
    k_count *= k_sp[i];
    in_count *= in_sp[i];
  }
  out_dims = {batch, m};
  out_dims.insert(out_dims.end(), out_sp.begin(), out_sp.end());
  const double xz = x_zp ? per_slice(op, x_zp, "x_zero_point", 1, 0.0)[0] : 0.0;
  const auto wz = per_slice(op, w_zp, "w_zero_point", m, 0.0);
  const std::vector<std::int64_t> xv = x.to_ints(), wv = w.to_ints();
  std::vector<std::int64_t> out(static_cast<std::size_t>(batch * m * out_count), 0);
  const std::int64_t cg = c / group, mg = m / group;
  std::vector<std::int64_t> op_idx(s), k_idx(s);
  for (std::int64_t nb = 0; nb < batch; ++nb)
    for (std::int64_t oc = 0; oc < m; ++oc) {
      const std::int64_t g = oc / mg;
      for (std::int64_t o = 0; o < out_count; ++o) {
        for (std::int64_t rest = o, i = static_cast<std::int64_t>(s) - 1; i >= 0; --i) {
          op_idx[static_cast<std::size_t>(i)] = rest % out_sp[static_cast<std::size_t>(i)];
          rest /= out_sp[static_cast<std::size_t>(i)];
        }
        std::int64_t acc = 0;
        for (std::int64_t kk = 0; kk < k_count; ++kk) {
          for (std::int64_t rest = kk, i = static_cast<std::int64_t>(s) - 1; i >= 0; --i) {
            k_idx[static_cast<std::size_t>(i)] = rest % k_sp[static_cast<std::size_t>(i)];
            rest /= k_sp[static_cast<std::size_t>(i)];
          }
          std::int64_t in_off = 0;
          bool inside = true;
          for (std::size_t i = 0; i < s && inside; ++i) {
            const std::int64_t p = op_idx[i] * strides[i] - pads[i] + k_idx[i] * dil[i];
            inside = p >= 0 && p < in_sp[i];
            in_off = in_off * in_sp[i] + p;
          }
          if (!inside) continue;  // padding holds the zero point: (x_zp - x_zp) = 0
          for (std::int64_t ic = 0; ic < cg; ++ic) {
            const std::int64_t xv_ =
                xv[static_cast<std::size_t>((nb * c + g * cg + ic) * in_count + in_off)];
            const std::int64_t wv_ = wv[static_cast<std::size_t>((oc * cg + ic) * k_count + kk)];
            acc += (xv_ - static_cast<std::int64_t>(xz)) *
                   (wv_ - static_cast<std::int64_t>(wz[static_cast<std::size_t>(oc)]));
          }
        }
        out[static_cast<std::size_t>((nb * m + oc) * out_count + o)] = acc;
      }
    }
  return out;
}

Tensor requantize(const std::vector<std::int64_t>& acc, const std::vector<std::int64_t>& dims,
                  const std::vector<double>& multiplier, std::int64_t inner,
                  const Tensor& y_zero_point) {
  const DType dt = y_zero_point.dtype();
  const double zp = y_zero_point.at<double>(0);
  std::vector<double> out(acc.size());
  for (std::size_t i = 0; i < acc.size(); ++i) {
    const double mul = multiplier[(i / static_cast<std::size_t>(inner)) % multiplier.size()];
    out[i] = saturate_to(dt, std::nearbyint(static_cast<double>(acc[i]) * mul) + zp);
  }
  return Tensor::from_doubles(dt, Shape::from_outer_first(dims), out);
}

}  // namespace

Tensor quantize_linear(const Tensor& x, const Tensor& scale, const Tensor* zero_point, int axis) {
  const std::string_view op = "QuantizeLinear";
  if (!is_floating(x.dtype()) && x.dtype() != DType::i32)
    throw_user_error("{}: x must be float or int32, got {}", op, dtype_name(x.dtype()));
  if (zero_point) require_8bit(op, *zero_point, "y_zero_point");
  const DType dt = zero_point ? zero_point->dtype() : DType::u8;
  const int r = x.rank();
  const int ax = r == 0 ? 0 : detail::normalize_axis(op, axis, r, x.shape());
  const std::int64_t n = r == 0 ? 1 : x.dim(ax);
  const std::int64_t inner = r == 0 ? 1 : detail::dims_product(x.shape(), 0, ax);
  const bool per_axis = scale.element_count() != 1;
  const auto sc = per_slice(op, &scale, "y_scale", per_axis ? n : 1, 1.0);
  const auto zp = per_slice(op, zero_point, "y_zero_point", per_axis ? n : 1, 0.0);
  const std::vector<double> xv = x.to_doubles();
  std::vector<double> out(xv.size());
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const std::size_t k =
        per_axis ? (i / static_cast<std::size_t>(inner)) % static_cast<std::size_t>(n) : 0;
    // ONNX divides in the input's precision (f32), then rounds half to even.
    const float q = static_cast<float>(xv[i]) / static_cast<float>(sc[k]);
    out[i] = saturate_to(dt, std::nearbyint(static_cast<double>(q)) + zp[k]);
  }
  return Tensor::from_doubles(dt, x.shape(), out);
}

Tensor dequantize_linear(const Tensor& x, const Tensor& scale, const Tensor* zero_point, int axis) {
  const std::string_view op = "DequantizeLinear";
  if (x.dtype() != DType::u8 && x.dtype() != DType::i8 && x.dtype() != DType::i32)
    throw_user_error("{}: x must be int8, uint8 or int32, got {}", op, dtype_name(x.dtype()));
  const int r = x.rank();
  const int ax = r == 0 ? 0 : detail::normalize_axis(op, axis, r, x.shape());
  const std::int64_t n = r == 0 ? 1 : x.dim(ax);
  const std::int64_t inner = r == 0 ? 1 : detail::dims_product(x.shape(), 0, ax);
  const bool per_axis = scale.element_count() != 1;
  const auto sc = per_slice(op, &scale, "x_scale", per_axis ? n : 1, 1.0);
  const auto zp = per_slice(op, zero_point, "x_zero_point", per_axis ? n : 1, 0.0);
  const std::vector<double> xv = x.to_doubles();
  std::vector<float> out(xv.size());
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const std::size_t k =
        per_axis ? (i / static_cast<std::size_t>(inner)) % static_cast<std::size_t>(n) : 0;
    out[i] = static_cast<float>(xv[i] - zp[k]) * static_cast<float>(sc[k]);
  }
  return Tensor::from_vector(x.shape(), out, scale.dtype());
}

DynamicQuantizeResult dynamic_quantize_linear(const Tensor& x) {
  detail::require_float("DynamicQuantizeLinear", x);
  const std::vector<float> v = x.to_floats();
  float lo = 0.0f, hi = 0.0f;
  for (float f : v) {
    lo = std::min(lo, f);
    hi = std::max(hi, f);
  }
  const float scale = (hi - lo) / 255.0f;
  const double zp = scale == 0.0f ? 0.0 : saturate_to(DType::u8, std::nearbyint(-lo / scale));
  std::vector<double> q(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    q[i] = scale == 0.0f ? zp : saturate_to(DType::u8, std::nearbyint(v[i] / scale) + zp);
  DynamicQuantizeResult r;
  r.y = Tensor::from_doubles(DType::u8, x.shape(), q);
  r.y_scale = Tensor::from_vector(Shape{}, {scale});
  r.y_zero_point = Tensor::from_doubles(DType::u8, Shape{}, {zp});
  return r;
}

Tensor matmul_integer(const Tensor& a, const Tensor& b, const Tensor* a_zero_point,
                      const Tensor* b_zero_point) {
  require_8bit("MatMulInteger", a, "A");
  require_8bit("MatMulInteger", b, "B");
  std::vector<std::int64_t> dims;
  const auto acc = int_matmul("MatMulInteger", a, b, a_zero_point, b_zero_point, dims);
  return Tensor::from_ints(DType::i32, Shape::from_outer_first(dims), acc);
}

Tensor qlinear_matmul(const Tensor& a, const Tensor& a_scale, const Tensor& a_zero_point,
                      const Tensor& b, const Tensor& b_scale, const Tensor& b_zero_point,
                      const Tensor& y_scale, const Tensor& y_zero_point) {
  const std::string_view op = "QLinearMatMul";
  require_8bit(op, a, "a");
  require_8bit(op, b, "b");
  require_8bit(op, y_zero_point, "y_zero_point");
  std::vector<std::int64_t> dims;
  const auto acc = int_matmul(op, a, b, &a_zero_point, &b_zero_point, dims);
  const std::int64_t n = dims.back();
  if (a_scale.element_count() != 1)
    throw_user_error("{}: a_scale must be a scalar, got shape {}", op, a_scale.shape().to_string());
  const auto bs = per_slice(op, &b_scale, "b_scale", n, 1.0);
  std::vector<double> mul(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j)
    mul[static_cast<std::size_t>(j)] = static_cast<double>(
        a_scale.at<float>(0) * static_cast<float>(bs[static_cast<std::size_t>(j)]) /
        y_scale.at<float>(0));
  // Per-column multipliers: the column is the fastest index.
  std::vector<double> out(acc.size());
  for (std::size_t i = 0; i < acc.size(); ++i)
    out[i] = saturate_to(
        y_zero_point.dtype(),
        std::nearbyint(static_cast<double>(acc[i]) * mul[i % static_cast<std::size_t>(n)]) +
            y_zero_point.at<double>(0));
  return Tensor::from_doubles(y_zero_point.dtype(), Shape::from_outer_first(dims), out);
}

Tensor conv_integer(const Tensor& x, const Tensor& w, const Tensor* x_zero_point,
                    const Tensor* w_zero_point, const ConvParams& params) {
  require_8bit("ConvInteger", x, "x");
  require_8bit("ConvInteger", w, "w");
  std::vector<std::int64_t> dims;
  const auto acc = int_conv("ConvInteger", x, w, x_zero_point, w_zero_point, params, dims);
  return Tensor::from_ints(DType::i32, Shape::from_outer_first(dims), acc);
}

Tensor qlinear_conv(const Tensor& x, const Tensor& x_scale, const Tensor& x_zero_point,
                    const Tensor& w, const Tensor& w_scale, const Tensor& w_zero_point,
                    const Tensor& y_scale, const Tensor& y_zero_point, const Tensor* bias,
                    const ConvParams& params) {
  const std::string_view op = "QLinearConv";
  require_8bit(op, x, "x");
  require_8bit(op, w, "w");
  require_8bit(op, y_zero_point, "y_zero_point");
  std::vector<std::int64_t> dims;
  auto acc = int_conv(op, x, w, &x_zero_point, &w_zero_point, params, dims);
  const std::int64_t m = dims[1];
  std::int64_t spatial = 1;
  for (std::size_t i = 2; i < dims.size(); ++i) spatial *= dims[i];
  if (bias) {
    const auto bv = per_slice(op, bias, "B", m, 0.0);
    for (std::size_t i = 0; i < acc.size(); ++i)
      acc[i] += static_cast<std::int64_t>(
          bv[(i / static_cast<std::size_t>(spatial)) % static_cast<std::size_t>(m)]);
  }
  const auto ws = per_slice(op, &w_scale, "w_scale", m, 1.0);
  std::vector<double> mul(static_cast<std::size_t>(m));
  for (std::int64_t j = 0; j < m; ++j)
    mul[static_cast<std::size_t>(j)] = static_cast<double>(
        x_scale.at<float>(0) * static_cast<float>(ws[static_cast<std::size_t>(j)]) /
        y_scale.at<float>(0));
  return requantize(acc, dims, mul, spatial, y_zero_point);
}

}  // namespace tessera::ops

namespace tessera::ops {

std::int64_t rshift_round(std::int64_t v, int rshift) {
  if (rshift < 0 || rshift > 31)
    throw_user_error("right shift {} is outside 0..31 (the BM1880 rshift_width range)", rshift);
  if (rshift == 0) return v;
  return (v + (std::int64_t{1} << (rshift - 1))) >> rshift;  // >> of a negative is arithmetic
}

Tensor requantize_rshift(const Tensor& acc, const Tensor* bias, int bias_axis,
                         const RshiftParams& params) {
  if (is_floating(acc.dtype()) || acc.dtype() == DType::boolean)
    throw_user_error("requantize: the accumulator must be an integer tensor, got {}",
                     dtype_name(acc.dtype()));
  if (params.lo > params.hi || params.lo < -128 || params.hi > 127)
    throw_user_error("requantize: saturation bounds [{}, {}] are not inside the int8 range",
                     params.lo, params.hi);
  rshift_round(0, params.rshift);  // range check
  const std::vector<std::int64_t> a = acc.to_ints();
  std::vector<std::int64_t> b;
  std::int64_t inner = 1, channels = 1;
  if (bias) {
    const int ax = detail::normalize_axis("requantize", bias_axis, acc.rank(), acc.shape());
    channels = acc.dim(ax);
    inner = detail::dims_product(acc.shape(), 0, ax);
    b = bias->to_ints();
    if (static_cast<std::int64_t>(b.size()) != channels)
      throw_user_error("requantize: bias has {} values; the accumulator {} has {} channels",
                       b.size(), acc.shape().to_string(), channels);
  }
  std::vector<std::int64_t> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::int64_t v = a[i];
    if (bias) v += b[static_cast<std::size_t>((static_cast<std::int64_t>(i) / inner) % channels)];
    if (params.relu && v < 0) v = 0;
    v = rshift_round(v * params.multiplier, params.rshift);
    out[i] = std::clamp(v, params.lo, params.hi);
  }
  return Tensor::from_ints(DType::i8, acc.shape(), out);
}

Tensor weighted_sum_integer(const std::vector<const Tensor*>& inputs,
                            const std::vector<std::int64_t>& multipliers) {
  if (inputs.empty() || inputs.size() != multipliers.size())
    throw_user_error("weighted sum: {} inputs and {} multipliers; give one multiplier per input",
                     inputs.size(), multipliers.size());
  const Shape& shape = inputs[0]->shape();
  std::vector<std::int64_t> acc(static_cast<std::size_t>(shape.element_count()), 0);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = *inputs[i];
    if (is_floating(t.dtype()) || t.dtype() == DType::boolean)
      throw_user_error("weighted sum: input {} is {}, not an integer tensor", i,
                       dtype_name(t.dtype()));
    if (!(t.shape() == shape))
      throw_user_error("weighted sum: input {} has shape {}; input 0 has {}", i,
                       t.shape().to_string(), shape.to_string());
    const std::vector<std::int64_t> v = t.to_ints();
    for (std::size_t k = 0; k < acc.size(); ++k) acc[k] += v[k] * multipliers[i];
  }
  return Tensor::from_ints(DType::i32, shape, acc);
}

Tensor sum_pool_integer(const Tensor& x, const PoolParams& params) {
  require_8bit("sum pool", x, "x");
  if (params.ceil_mode)
    throw_user_error("sum pool: ceil_mode is not supported by the integer pool; use floor mode");
  if (x.rank() < 3)
    throw_user_error("sum pool: input {} must have rank >= 3 (N, C, spatial...)",
                     x.shape().to_string());
  // A depthwise integer convolution with all-one kernels: exact, and padding is zero.
  const std::int64_t channels = x.dim(x.rank() - 2);
  std::vector<std::int64_t> wdims = {channels, 1};
  wdims.insert(wdims.end(), params.kernel_shape.begin(), params.kernel_shape.end());
  const Tensor ones = Tensor::full(DType::i8, Shape::from_outer_first(wdims), 1.0);
  ConvParams cp;
  cp.kernel_shape = params.kernel_shape;
  cp.strides = params.strides;
  cp.pads = params.pads;
  cp.dilations = params.dilations;
  cp.group = channels;
  return conv_integer(x, ones, nullptr, nullptr, cp);
}

}  // namespace tessera::ops
