// ReduceSum/Mean/Max/Min/Prod (ONNX *-18: axes, keepdims, noop_with_empty_axes) and
// ArgMax/ArgMin (ONNX *-13: keepdims, select_last_index). Floats accumulate in f64 and round once.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "common.h"
#include "tessera/ops/reference.h"

namespace tessera::ops {

namespace {

enum class ReduceKind { sum, mean, max, min, prod };

template <typename T, typename Acc>
void reduce_loop(const T* x, const Shape& x_shape, const Shape& keep_shape, Acc* acc,
                 ReduceKind kind) {
  detail::broadcast_rows<1>(x_shape, {&keep_shape},
                            [&](std::int64_t xo, const std::array<std::int64_t, 1>& ko,
                                const std::array<std::int64_t, 1>& st, std::int64_t n) {
                              const T* src = x + xo;
                              Acc* a = acc + ko[0];
                              const std::int64_t s = st[0];
                              for (std::int64_t i = 0; i < n; ++i) {
                                const Acc v = static_cast<Acc>(src[i]);
                                Acc& dst = a[i * s];
                                switch (kind) {
                                  case ReduceKind::sum:
                                  case ReduceKind::mean:
                                    dst += v;
                                    break;
                                  case ReduceKind::prod:
                                    dst *= v;
                                    break;
                                  case ReduceKind::max:
                                    if constexpr (std::is_floating_point_v<Acc>) {
                                      if (std::isnan(v) || std::isnan(dst)) {
                                        dst = std::isnan(dst) ? dst : v;
                                        break;
                                      }
                                    }
                                    if (v > dst) dst = v;
                                    break;
                                  case ReduceKind::min:
                                    if constexpr (std::is_floating_point_v<Acc>) {
                                      if (std::isnan(v) || std::isnan(dst)) {
                                        dst = std::isnan(dst) ? dst : v;
                                        break;
                                      }
                                    }
                                    if (v < dst) dst = v;
                                    break;
                                }
                              }
                            });
}

Tensor reduce(std::string_view op, const Tensor& x, const ReduceParams& params, ReduceKind kind) {
  if (x.dtype() == DType::boolean)
    throw_user_error("{}: bool input (shape {}) is not accepted; Cast it to a numeric dtype", op,
                     x.shape().to_string());
  if (params.axes.empty() && params.noop_with_empty_axes) return x;
  const int r = x.rank();
  std::vector<int> axes = detail::normalize_axes(op, params.axes, r, x.shape());
  if (axes.empty())
    for (int d = 0; d < r; ++d) axes.push_back(d);
  Shape keep = x.shape();
  std::int64_t reduced = 1;
  for (int a : axes) {
    reduced *= x.dim(a);
    keep[a] = 1;
  }
  std::vector<std::int64_t> final_dims;
  for (int d = 0; d < r; ++d) {
    const bool is_reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!is_reduced || params.keepdims) final_dims.push_back(keep[d]);
  }
  const Shape final_shape = Shape::from_fastest_first(final_dims);
  const auto n = static_cast<std::size_t>(keep.element_count());

  if (is_floating(x.dtype())) {
    const double init = kind == ReduceKind::prod  ? 1.0
                        : kind == ReduceKind::max ? -std::numeric_limits<double>::infinity()
                        : kind == ReduceKind::min ? std::numeric_limits<double>::infinity()
                                                  : 0.0;
    std::vector<double> acc(n, init);
    if (x.dtype() == DType::f64) {
      reduce_loop<double, double>(x.data<double>(), x.shape(), keep, acc.data(), kind);
    } else {
      const Tensor x32 = detail::as_f32(x);
      reduce_loop<float, double>(x32.data<float>(), x.shape(), keep, acc.data(), kind);
    }
    if (kind == ReduceKind::mean)
      for (double& v : acc) v = reduced > 0 ? v / static_cast<double>(reduced) : std::nan("");
    if (x.dtype() == DType::f64) return Tensor::from_doubles(DType::f64, final_shape, acc);
    Tensor out(DType::f32, final_shape);
    float* po = out.data<float>();
    for (std::size_t i = 0; i < n; ++i) po[i] = static_cast<float>(acc[i]);
    return detail::restore(std::move(out), x.dtype());
  }
  Tensor out(x.dtype(), final_shape);
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // u64 accumulates unsigned: its values above 2^63 would order wrongly as int64.
      using Acc = std::conditional_t<std::is_same_v<T, std::uint64_t>, std::uint64_t, std::int64_t>;
      const Acc init = kind == ReduceKind::prod ? Acc{1}
                       : kind == ReduceKind::max
                           ? static_cast<Acc>(std::numeric_limits<T>::lowest())
                       : kind == ReduceKind::min ? static_cast<Acc>(std::numeric_limits<T>::max())
                                                 : Acc{0};
      std::vector<Acc> acc(n, init);
      reduce_loop<T, Acc>(x.data<T>(), x.shape(), keep, acc.data(), kind);
      T* po = out.data<T>();
      for (std::size_t i = 0; i < n; ++i) {
        Acc v = acc[i];
        if (kind == ReduceKind::mean && reduced > 0)
          v /= static_cast<Acc>(reduced);  // truncates as integer division
        po[i] = static_cast<T>(v);         // wraps like NumPy's integer sum
      }
    }
  });
  return out;
}

Tensor arg_reduce(std::string_view op, const Tensor& x, int axis_in, bool keepdims,
                  bool select_last_index, bool is_max) {
  if (x.dtype() == DType::boolean)
    throw_user_error("{}: bool input (shape {}) is not accepted; Cast it to a numeric dtype", op,
                     x.shape().to_string());
  const int r = x.rank();
  if (r == 0) throw_user_error("{}: input must have rank >= 1 (got a scalar)", op);
  const int axis = detail::normalize_axis(op, axis_in, r, x.shape());
  const std::int64_t n = x.dim(axis);
  if (n == 0)
    throw_user_error("{}: axis {} of input {} is empty; there is no element to pick", op, axis,
                     x.shape().to_string());
  const std::int64_t inner = detail::dims_product(x.shape(), 0, axis);
  const std::int64_t outer = detail::dims_product(x.shape(), axis + 1, r);
  std::vector<std::int64_t> dims;
  for (int d = 0; d < r; ++d)
    if (d != axis)
      dims.push_back(x.dim(d));
    else if (keepdims)
      dims.push_back(1);
  Tensor out(DType::i64, Shape::from_fastest_first(dims));  // ONNX: ArgMax/ArgMin give int64
  std::int64_t* po = out.data<std::int64_t>();
  const auto pick = [&](const auto* v) {
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i = 0; i < inner; ++i) {
        const auto* base = v + o * n * inner + i;
        std::int64_t best = 0;
        for (std::int64_t j = 1; j < n; ++j) {
          const auto c = base[j * inner], b = base[best * inner];
          const bool better =
              is_max ? (select_last_index ? c >= b : c > b) : (select_last_index ? c <= b : c < b);
          if (better) best = j;
        }
        po[o * inner + i] = best;
      }
  };
  detail::with_ordered_values(x, pick);
  return out;
}

}  // namespace

Tensor reduce_sum(const Tensor& x, const ReduceParams& p) {
  return reduce("ReduceSum", x, p, ReduceKind::sum);
}
Tensor reduce_mean(const Tensor& x, const ReduceParams& p) {
  return reduce("ReduceMean", x, p, ReduceKind::mean);
}
Tensor reduce_max(const Tensor& x, const ReduceParams& p) {
  return reduce("ReduceMax", x, p, ReduceKind::max);
}
Tensor reduce_min(const Tensor& x, const ReduceParams& p) {
  return reduce("ReduceMin", x, p, ReduceKind::min);
}
Tensor reduce_prod(const Tensor& x, const ReduceParams& p) {
  return reduce("ReduceProd", x, p, ReduceKind::prod);
}

Tensor argmax(const Tensor& x, int axis, bool keepdims, bool select_last_index) {
  return arg_reduce("ArgMax", x, axis, keepdims, select_last_index, true);
}
Tensor argmin(const Tensor& x, int axis, bool keepdims, bool select_last_index) {
  return arg_reduce("ArgMin", x, axis, keepdims, select_last_index, false);
}

}  // namespace tessera::ops

namespace tessera::ops {

// ---- ReduceL1/L2/LogSum/LogSumExp/SumSquare-18: an elementwise map, ReduceSum's f64
// accumulation, then (for L2 and the logs) a map of the sums ----

namespace {

// fn over every element of x, whose storage is T (f32 or f64).
template <typename T, typename Fn>
Tensor map_in_place(Tensor y, Fn fn) {
  T* p = y.data<T>();
  for (std::int64_t i = 0; i < y.element_count(); ++i) p[i] = fn(p[i]);
  return y;
}

// pre and post take any float type: f64 maps in f64, the other floats in f32.
template <typename Pre, typename Post>
Tensor reduce_mapped(std::string_view op, const Tensor& x, const ReduceParams& p, bool need_float,
                     Pre pre, Post post) {
  constexpr bool has_post = !std::is_same_v<Post, std::nullptr_t>;
  if (x.dtype() == DType::f64) {
    Tensor s = reduce(op, map_in_place<double>(x, pre), p, ReduceKind::sum);
    if constexpr (has_post) s = map_in_place<double>(std::move(s), post);
    return s;
  }
  if (need_float || is_floating(x.dtype())) {
    detail::require_float(op, x);
    // The map runs in f32 and is summed in f64 as ReduceSum does, without rounding to f16/bf16
    // in between: only the final result is rounded to the input's dtype.
    const Tensor mapped = map_in_place<float>(detail::as_f32(x), pre);
    Tensor s = reduce(op, mapped, p, ReduceKind::sum);
    if constexpr (has_post) s = map_in_place<float>(std::move(s), post);
    return detail::restore(std::move(s), x.dtype());
  }
  // Integers: |x| or x*x natively (wrapping like NumPy), then ReduceSum.
  if (x.dtype() == DType::boolean)
    throw_user_error("{}: bool input (shape {}) is not accepted; Cast it to a numeric dtype", op,
                     x.shape().to_string());
  const bool square = pre(-2.0f) == 4.0f;
  return reduce(op, square ? mul(x, x) : abs(x), p, ReduceKind::sum);
}

}  // namespace

Tensor reduce_l1(const Tensor& x, const ReduceParams& p) {
  return reduce_mapped(
      "ReduceL1", x, p, false, [](auto v) { return std::fabs(v); }, nullptr);
}
Tensor reduce_l2(const Tensor& x, const ReduceParams& p) {
  return reduce_mapped(
      "ReduceL2", x, p, true, [](auto v) { return v * v; }, [](auto v) { return std::sqrt(v); });
}
Tensor reduce_log_sum(const Tensor& x, const ReduceParams& p) {
  return reduce_mapped(
      "ReduceLogSum", x, p, true, [](auto v) { return v; }, [](auto v) { return std::log(v); });
}
Tensor reduce_log_sum_exp(const Tensor& x, const ReduceParams& p) {
  return reduce_mapped(
      "ReduceLogSumExp", x, p, true, [](auto v) { return std::exp(v); },
      [](auto v) { return std::log(v); });
}
Tensor reduce_sum_square(const Tensor& x, const ReduceParams& p) {
  return reduce_mapped(
      "ReduceSumSquare", x, p, false, [](auto v) { return v * v; }, nullptr);
}

Tensor hardmax(const Tensor& x, int axis_in) {
  detail::require_float("Hardmax", x);
  const int r = x.rank();
  if (r == 0) throw_user_error("Hardmax: input must have rank >= 1 (got a scalar)");
  const int axis = detail::normalize_axis("Hardmax", axis_in, r, x.shape());
  const std::int64_t n = x.dim(axis), inner = detail::dims_product(x.shape(), 0, axis),
                     outer = detail::dims_product(x.shape(), axis + 1, r);
  std::vector<float> out(static_cast<std::size_t>(x.element_count()), 0.0f);
  if (n == 0) return Tensor(x.dtype(), x.shape());
  const Tensor idx = argmax(x, axis, true, false);
  const std::int64_t* pi = idx.data<std::int64_t>();
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i)
      out[static_cast<std::size_t>(o * n * inner + pi[o * inner + i] * inner + i)] = 1.0f;
  return Tensor::from_vector(x.shape(), out, x.dtype());
}

}  // namespace tessera::ops
