// BatchNormalization (inference, ONNX -15), LayerNormalization (-17), InstanceNormalization
// (-6), Softmax and LogSoftmax (-13, one axis). Statistics accumulate in f64; f64 inputs
// compute in f64, the other floats in f32.
#include <cmath>
#include <limits>
#include <vector>

#include "common.h"
#include "tessera/ops/reference.h"

namespace tessera::ops {

namespace {

// A per-channel parameter: float, 1-D, `c` elements; returned as T (float or double).
template <typename T>
std::vector<T> channel_param(std::string_view op, std::string_view name, const Tensor& p,
                             const Tensor& x, std::int64_t c) {
  detail::require_float(op, p, name);
  if (p.rank() != 1 || p.dim(0) != c)
    throw_user_error(
        "{}: {} has shape {} but must be 1-D with {} elements (the channels of "
        "input {})",
        op, name, p.shape().to_string(), c, x.shape().to_string());
  const Tensor t = detail::as_compute<T>(p);
  return std::vector<T>(t.data<T>(), t.data<T>() + c);
}

}  // namespace

Tensor batch_normalization(const Tensor& x_in, const Tensor& scale, const Tensor& bias,
                           const Tensor& mean, const Tensor& var, float epsilon) {
  detail::require_float("BatchNormalization", x_in, "X");
  const int r = x_in.rank();
  if (r < 2)
    throw_user_error(
        "BatchNormalization: X {} must have rank >= 2 (C at Tessera dim r-2, N at "
        "r-1)",
        x_in.shape().to_string());
  const std::int64_t c = x_in.dim(r - 2), batch = x_in.dim(r - 1);
  const std::int64_t plane = detail::dims_product(x_in.shape(), 0, r - 2);
  return detail::with_compute_type(x_in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const auto s = channel_param<T>("BatchNormalization", "scale", scale, x_in, c);
    const auto b = channel_param<T>("BatchNormalization", "B", bias, x_in, c);
    const auto m = channel_param<T>("BatchNormalization", "input_mean", mean, x_in, c);
    const auto v = channel_param<T>("BatchNormalization", "input_var", var, x_in, c);
    Tensor y = detail::as_compute<T>(x_in);
    T* p = y.data<T>();
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t ch = 0; ch < c; ++ch) {
        const auto cu = static_cast<std::size_t>(ch);
        const T k = s[cu] / std::sqrt(v[cu] + T(epsilon)), mu = m[cu], beta = b[cu];
        T* q = p + (n * c + ch) * plane;
        for (std::int64_t i = 0; i < plane; ++i) q[i] = (q[i] - mu) * k + beta;
      }
    return detail::restore(std::move(y), x_in.dtype());
  });
}

Tensor layer_normalization(const Tensor& x_in, const Tensor& scale, const Tensor* bias, int axis_in,
                           float epsilon, LayerNormStats* stats) {
  detail::require_float("LayerNormalization", x_in, "X");
  detail::require_float("LayerNormalization", scale, "Scale");
  const int r = x_in.rank();
  if (r == 0) throw_user_error("LayerNormalization: X must have rank >= 1 (got a scalar)");
  const int axis = detail::normalize_axis("LayerNormalization", axis_in, r, x_in.shape());
  std::vector<std::int64_t> inner_dims;
  for (int d = 0; d <= axis; ++d) inner_dims.push_back(x_in.dim(d));
  const Shape inner_shape = Shape::from_fastest_first(inner_dims);
  const std::int64_t inner = inner_shape.element_count();
  const std::int64_t outer = detail::dims_product(x_in.shape(), axis + 1, r);
  return detail::with_compute_type(x_in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    auto param = [&](const Tensor& t, std::string_view name) {
      if (t.rank() > inner_shape.rank())
        throw_user_error(
            "LayerNormalization: {} {} has more dims than the normalised dims {} of X {}", name,
            t.shape().to_string(), inner_shape.to_string(), x_in.shape().to_string());
      Tensor e;
      try {
        e = expand(detail::as_compute<T>(t), inner_shape);
      } catch (const UserError&) {
        throw_user_error(
            "LayerNormalization: {} {} does not broadcast to the normalised dims {} of "
            "X {} (axis {})",
            name, t.shape().to_string(), inner_shape.to_string(), x_in.shape().to_string(), axis);
      }
      if (!(e.shape() == inner_shape))
        throw_user_error(
            "LayerNormalization: {} {} does not broadcast to the normalised dims {} of "
            "X {} (axis {})",
            name, t.shape().to_string(), inner_shape.to_string(), x_in.shape().to_string(), axis);
      return e;
    };
    const Tensor s = param(scale, "Scale");
    Tensor b;
    if (bias != nullptr) b = param(*bias, "B");
    const T* ps = s.data<T>();
    const T* pb = bias != nullptr ? b.data<T>() : nullptr;
    Tensor y = detail::as_compute<T>(x_in);
    T* p = y.data<T>();
    // The statistics are f32 (ONNX's default stash_type) whatever X's dtype.
    float* mean_out = nullptr;
    float* inv_out = nullptr;
    if (stats != nullptr) {
      Shape stat_shape = x_in.shape();
      for (int d = 0; d <= axis; ++d) stat_shape[d] = 1;
      stats->mean = Tensor::zeros(DType::f32, stat_shape);
      stats->inv_std_dev = Tensor::zeros(DType::f32, stat_shape);
      mean_out = stats->mean.data<float>();
      inv_out = stats->inv_std_dev.data<float>();
    }
    for (std::int64_t o = 0; o < outer; ++o) {
      T* q = p + o * inner;
      double sum = 0.0;
      for (std::int64_t i = 0; i < inner; ++i) sum += q[i];
      const double mu = sum / static_cast<double>(inner);
      double sq = 0.0;
      for (std::int64_t i = 0; i < inner; ++i) sq += (q[i] - mu) * (q[i] - mu);
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(inner) + epsilon);
      if (stats != nullptr) {
        mean_out[o] = static_cast<float>(mu);
        inv_out[o] = static_cast<float>(inv);
      }
      for (std::int64_t i = 0; i < inner; ++i) {
        const T norm = static_cast<T>((q[i] - mu) * inv);
        q[i] = norm * ps[i] + (pb != nullptr ? pb[i] : T(0));
      }
    }
    return detail::restore(std::move(y), x_in.dtype());
  });
}

Tensor instance_normalization(const Tensor& x_in, const Tensor& scale, const Tensor& bias,
                              float epsilon) {
  detail::require_float("InstanceNormalization", x_in, "X");
  const int r = x_in.rank();
  if (r < 3)
    throw_user_error("InstanceNormalization: X {} must have rank >= 3 (spatial dims, then C, N)",
                     x_in.shape().to_string());
  const std::int64_t c = x_in.dim(r - 2), batch = x_in.dim(r - 1);
  const std::int64_t plane = detail::dims_product(x_in.shape(), 0, r - 2);
  return detail::with_compute_type(x_in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const auto s = channel_param<T>("InstanceNormalization", "scale", scale, x_in, c);
    const auto b = channel_param<T>("InstanceNormalization", "B", bias, x_in, c);
    Tensor y = detail::as_compute<T>(x_in);
    T* p = y.data<T>();
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t ch = 0; ch < c; ++ch) {
        T* q = p + (n * c + ch) * plane;
        double sum = 0.0;
        for (std::int64_t i = 0; i < plane; ++i) sum += q[i];
        const double mu = sum / static_cast<double>(plane);
        double sq = 0.0;
        for (std::int64_t i = 0; i < plane; ++i) sq += (q[i] - mu) * (q[i] - mu);
        const double inv = 1.0 / std::sqrt(sq / static_cast<double>(plane) + epsilon);
        const auto cu = static_cast<std::size_t>(ch);
        for (std::int64_t i = 0; i < plane; ++i)
          q[i] = static_cast<T>((q[i] - mu) * inv) * s[cu] + b[cu];
      }
    return detail::restore(std::move(y), x_in.dtype());
  });
}

namespace {

Tensor softmax_impl(std::string_view op, const Tensor& x_in, int axis_in, bool log_form) {
  detail::require_float(op, x_in);
  const int r = x_in.rank();
  if (r == 0) throw_user_error("{}: input must have rank >= 1 (got a scalar)", op);
  const int axis = detail::normalize_axis(op, axis_in, r, x_in.shape());
  const std::int64_t inner = detail::dims_product(x_in.shape(), 0, axis);
  const std::int64_t n = x_in.dim(axis);
  const std::int64_t outer = detail::dims_product(x_in.shape(), axis + 1, r);
  return detail::with_compute_type(x_in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Tensor y = detail::as_compute<T>(x_in);
    T* p = y.data<T>();
    // Rows along the axis are strided by `inner`; keeping per-lane max and sum in arrays makes
    // every pass walk memory contiguously.
    std::vector<T> mx(static_cast<std::size_t>(inner));
    std::vector<double> sum(static_cast<std::size_t>(inner));
    for (std::int64_t o = 0; o < outer; ++o) {
      T* q = p + o * n * inner;
      std::fill(mx.begin(), mx.end(), -std::numeric_limits<T>::infinity());
      std::fill(sum.begin(), sum.end(), 0.0);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < inner; ++i)
          mx[static_cast<std::size_t>(i)] =
              std::max(mx[static_cast<std::size_t>(i)], q[j * inner + i]);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < inner; ++i) {
          T& v = q[j * inner + i];
          const T shifted = v - mx[static_cast<std::size_t>(i)];
          const T e = std::exp(shifted);
          sum[static_cast<std::size_t>(i)] += e;
          v = log_form ? shifted : e;
        }
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < inner; ++i) {
          T& v = q[j * inner + i];
          const double s = sum[static_cast<std::size_t>(i)];
          v = log_form ? v - static_cast<T>(std::log(s)) : static_cast<T>(v / s);
        }
    }
    return detail::restore(std::move(y), x_in.dtype());
  });
}

}  // namespace

Tensor softmax(const Tensor& x, int axis) {
  return softmax_impl("Softmax", x, axis, false);
}
Tensor log_softmax(const Tensor& x, int axis) {
  return softmax_impl("LogSoftmax", x, axis, true);
}

}  // namespace tessera::ops

namespace tessera::ops {

// ---- LRN-13 ----

Tensor lrn(const Tensor& x_in, std::int64_t size, float alpha, float beta, float bias) {
  detail::require_float("LRN", x_in);
  if (x_in.rank() < 3)
    throw_user_error("LRN: input must have rank >= 3 (N, C, spatial...), got {}",
                     x_in.shape().to_string());
  if (size < 1) throw_user_error("LRN: size is {}; it must be >= 1", size);
  const int r = x_in.rank();
  const std::int64_t channels = x_in.dim(r - 2),
                     inner = detail::dims_product(x_in.shape(), 0, r - 2),
                     batches = x_in.dim(r - 1);
  const std::int64_t before = (size - 1) / 2, after = size - 1 - before;
  return detail::with_compute_type(x_in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Tensor scratch;
    const Tensor& x = detail::compute_ref<T>(x_in, scratch);
    Tensor y(detail::compute_dtype<T>(), x.shape());
    const T* px = x.data<T>();
    T* py = y.data<T>();
    for (std::int64_t n = 0; n < batches; ++n)
      for (std::int64_t c = 0; c < channels; ++c)
        for (std::int64_t i = 0; i < inner; ++i) {
          double sq = 0.0;
          for (std::int64_t k = std::max<std::int64_t>(0, c - before);
               k <= std::min(channels - 1, c + after); ++k) {
            const double v = px[(n * channels + k) * inner + i];
            sq += v * v;
          }
          const std::int64_t at = (n * channels + c) * inner + i;
          py[at] = static_cast<T>(
              px[at] / std::pow(bias + static_cast<double>(alpha) / static_cast<double>(size) * sq,
                                static_cast<double>(beta)));
        }
    return detail::restore(std::move(y), x_in.dtype());
  });
}

}  // namespace tessera::ops

namespace tessera::ops {

// ---- MeanVarianceNormalization-13, as its ONNX function body: (X - E[X]) /
// (sqrt(E[X^2] - E[X]^2) + 1e-9) over `axes` ----

Tensor mean_variance_normalization(const Tensor& x, const std::vector<int>& axes) {
  detail::require_float("MeanVarianceNormalization", x);
  ReduceParams p;
  p.axes = axes;
  p.keepdims = true;
  const Tensor mean = reduce_mean(x, p);
  const Tensor mean_sq = reduce_mean(mul(x, x), p);
  const Tensor var = sub(mean_sq, mul(mean, mean));
  const Tensor std_eps = add(sqrt(var), Tensor::full(x.dtype(), Shape{}, 1e-9));
  return div(sub(x, mean), std_eps);
}

}  // namespace tessera::ops
