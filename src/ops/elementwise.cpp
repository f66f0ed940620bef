// Elementwise ops: binary arithmetic with NumPy broadcasting, unary math, compares, Where,
// variadic Sum/Max/Min, Clip and Cast. Semantics: ONNX Operators.md (Add-14, Div-14, Pow-15,
// Relu-14, Gelu-20, Clip-13, Cast-13, Where-16, Equal/Less/Greater-13, Sum/Max/Min-13).
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "common.h"
#include "tessera/ops/reference.h"
#include "tessera/sim/scheduler.h"

namespace tessera::ops {

using detail::as_f32;
using detail::f32_ref;
using detail::broadcast_rows;
using detail::restore;

namespace {

template <typename T>
constexpr bool is_small_float = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;

// out[i] = op(a[i], b[i]) over a broadcast of a and b; all of type T, result of type R.
template <typename T, typename R, typename Op>
void binary_loop(const Tensor& a, const Tensor& b, Tensor& out, Op op) {
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  R* po = out.data<R>();
  if (a.shape() == out.shape() && b.shape() == out.shape()) {
    // No broadcast: element by element, over the host threads (the cut changes no bit).
    sim::WorkScheduler::shared().parallel_pieces(
        static_cast<std::size_t>(out.element_count()), sim::WorkScheduler::kElementPiece,
        [&](std::size_t begin, std::size_t end) {
          for (std::size_t i = begin; i < end; ++i) po[i] = op(pa[i], pb[i]);
        });
    return;
  }
  broadcast_rows<2>(out.shape(), {&a.shape(), &b.shape()},
                    [&](std::int64_t o, const std::array<std::int64_t, 2>& in,
                        const std::array<std::int64_t, 2>& st, std::int64_t n) {
                      const T* x = pa + in[0];
                      const T* y = pb + in[1];
                      R* z = po + o;
                      if (st[0] == 1 && st[1] == 1) {
                        for (std::int64_t i = 0; i < n; ++i) z[i] = op(x[i], y[i]);
                      } else if (st[0] == 1) {
                        const T yv = y[0];
                        for (std::int64_t i = 0; i < n; ++i) z[i] = op(x[i], yv);
                      } else if (st[1] == 1) {
                        const T xv = x[0];
                        for (std::int64_t i = 0; i < n; ++i) z[i] = op(xv, y[i]);
                      } else {
                        const R v = op(x[0], y[0]);
                        for (std::int64_t i = 0; i < n; ++i) z[i] = v;
                      }
                    });
}

// Arithmetic in T's natural domain: f32 for floats (f64 for f64), wrap-around for integers,
// computed in u64 where signed overflow would be undefined (C++20 defines the conversion back
// to T as modular, matching NumPy's integer overflow).
template <typename T>
std::uint64_t wrap(T v) {
  return static_cast<std::uint64_t>(v);
}
struct AddOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(wrap(a) + wrap(b));
    else
      return a + b;
  }
};
struct SubOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(wrap(a) - wrap(b));
    else
      return a - b;
  }
};
struct MulOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(wrap(a) * wrap(b));
    else
      return a * b;
  }
};
struct DivOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      if (b == T(-1)) return static_cast<T>(std::uint64_t{0} - wrap(a));  // MIN / -1 wraps to MIN
      return static_cast<T>(a / b);  // truncates toward zero, as C and ONNX Runtime do
    } else {
      return static_cast<T>(a / b);
    }
  }
};
struct MaxOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    }
    return a < b ? b : a;
  }
};
struct MinOp {
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    }
    return b < a ? b : a;
  }
};

// Runs a same-dtype arithmetic op: floats in f32 (f16/bf16 widened and rounded back), integers
// natively. Bool is rejected unless allow_bool.
template <typename Op>
Tensor arithmetic(std::string_view name, const Tensor& a, const Tensor& b, Op op,
                  bool allow_bool = false) {
  detail::require_same_dtype(name, a, b);
  if (a.dtype() == DType::boolean && !allow_bool)
    throw_user_error(
        "{}: bool inputs (shapes {} and {}) are not accepted; Cast them to a numeric "
        "dtype",
        name, a.shape().to_string(), b.shape().to_string());
  const Shape out_shape = broadcast_shapes(a.shape(), b.shape());
  if (a.dtype() == DType::f64) {
    Tensor out(DType::f64, out_shape);
    binary_loop<double, double>(a, b, out, op);
    return out;
  }
  if (is_floating(a.dtype())) {
    Tensor a_scratch, b_scratch;
    const Tensor& a32 = f32_ref(a, a_scratch);
    const Tensor& b32 = f32_ref(b, b_scratch);
    Tensor out(DType::f32, out_shape);
    binary_loop<float, float>(a32, b32, out, op);
    return restore(std::move(out), a.dtype());
  }
  Tensor out(a.dtype(), out_shape);
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) binary_loop<T, T>(a, b, out, op);
  });
  return out;
}

template <typename Op>
Tensor compare_op(std::string_view name, const Tensor& a, const Tensor& b, Op op, bool allow_bool) {
  detail::require_same_dtype(name, a, b);
  if (a.dtype() == DType::boolean && !allow_bool)
    throw_user_error(
        "{}: bool inputs (shapes {} and {}) cannot be ordered; Cast them to a numeric "
        "dtype",
        name, a.shape().to_string(), b.shape().to_string());
  Tensor out(DType::boolean, broadcast_shapes(a.shape(), b.shape()));
  if (a.dtype() == DType::f64) {
    binary_loop<double, bool>(a, b, out, op);
    return out;
  }
  if (is_floating(a.dtype())) {
    Tensor a_scratch, b_scratch;  // widening is exact, so compares are exact
    const Tensor& a32 = f32_ref(a, a_scratch);
    const Tensor& b32 = f32_ref(b, b_scratch);
    binary_loop<float, bool>(a32, b32, out, op);
    return out;
  }
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) binary_loop<T, bool>(a, b, out, op);
  });
  return out;
}

// Unary float op over contiguous data: f64 in f64, the other floats in f32. op takes `auto`,
// so no op can quietly compute an f64 input in f32.
template <typename Op>
Tensor unary_float(std::string_view name, const Tensor& x, Op op) {
  static_assert(std::is_same_v<std::invoke_result_t<Op&, double>, double>,
                "unary_float ops take auto: f64 must compute in f64");
  detail::require_float(name, x);
  return detail::with_compute_type(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Tensor y = detail::as_compute<T>(x);
    T* p = y.data<T>();
    const std::int64_t n = y.element_count();
    for (std::int64_t i = 0; i < n; ++i) p[i] = op(p[i]);
    return restore(std::move(y), x.dtype());
  });
}

// Unary op accepting floats (in f32) and signed/unsigned integers (natively); bool rejected.
template <typename Op>
Tensor unary_numeric(std::string_view name, const Tensor& x, Op op) {
  if (x.dtype() == DType::boolean)
    throw_user_error("{}: bool input (shape {}) is not accepted; Cast it to a numeric dtype", name,
                     x.shape().to_string());
  if (is_floating(x.dtype())) return unary_float(name, x, [&](auto v) { return op(v); });
  Tensor y = x;
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      T* p = y.data<T>();
      const std::int64_t n = y.element_count();
      for (std::int64_t i = 0; i < n; ++i) p[i] = op(p[i]);
    }
  });
  return y;
}

}  // namespace

// ---- Binary ----

Tensor add(const Tensor& a, const Tensor& b) {
  return arithmetic("Add", a, b, AddOp{});
}
Tensor sub(const Tensor& a, const Tensor& b) {
  return arithmetic("Sub", a, b, SubOp{});
}
Tensor mul(const Tensor& a, const Tensor& b) {
  return arithmetic("Mul", a, b, MulOp{});
}

Tensor div(const Tensor& a, const Tensor& b) {
  if (!is_floating(b.dtype()) && b.dtype() != DType::boolean) {
    const std::vector<std::int64_t> values = b.to_ints();
    for (std::size_t i = 0; i < values.size(); ++i)
      if (values[i] == 0)
        throw_user_error(
            "Div: integer divisor (shape {}) is zero at element {}; integer division "
            "by zero is undefined",
            b.shape().to_string(), i);
  }
  return arithmetic("Div", a, b, DivOp{});
}

bool arithmetic_in_place(std::string_view op, Tensor& a, const Tensor& b) {
  if (a.dtype() != DType::f32 || b.dtype() != DType::f32) return false;
  Shape out;
  try {
    out = broadcast_shapes(a.shape(), b.shape());
  } catch (const UserError&) {
    return false;
  }
  if (!(out == a.shape())) return false;
  // binary_loop reads a[i] before writing out[i] at the same index, so out may be a itself.
  if (op == "Add")
    binary_loop<float, float>(a, b, a, AddOp{});
  else if (op == "Sub")
    binary_loop<float, float>(a, b, a, SubOp{});
  else if (op == "Mul")
    binary_loop<float, float>(a, b, a, MulOp{});
  else if (op == "Div")
    binary_loop<float, float>(a, b, a, DivOp{});
  else
    return false;
  return true;
}

namespace {

// x^e for a 64-bit integer T by squaring; a negative e or a result past T's range goes through
// f64 and saturates, as Pow does for the narrower integers.
template <typename T>
T exact_pow(T x, std::int64_t e) {
  const auto through_f64 = [&] {
    return saturate_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(e)));
  };
  if (e < 0) return through_f64();
  T result = 1, base = x;
  for (std::int64_t left = e; left > 0;) {
    if ((left & 1) != 0 && __builtin_mul_overflow(result, base, &result)) return through_f64();
    left >>= 1;
    if (left > 0 && __builtin_mul_overflow(base, base, &base)) return through_f64();
  }
  return result;
}

}  // namespace

Tensor pow(const Tensor& a, const Tensor& b) {
  if (a.dtype() == DType::boolean || b.dtype() == DType::boolean)
    throw_user_error(
        "Pow: bool inputs (dtypes {} and {}) are not accepted; Cast them to a numeric "
        "dtype",
        dtype_name(a.dtype()), dtype_name(b.dtype()));
  const Shape out_shape = broadcast_shapes(a.shape(), b.shape());
  if (a.dtype() == DType::f64) {
    const Tensor b64 = b.astype(DType::f64);
    Tensor out(DType::f64, out_shape);
    binary_loop<double, double>(a, b64, out, [](double x, double y) { return std::pow(x, y); });
    return out;
  }
  if (is_floating(a.dtype())) {
    const Tensor a32 = as_f32(a), b32 = b.astype(DType::f32);
    Tensor out(DType::f32, out_shape);
    binary_loop<float, float>(a32, b32, out, [](float x, float y) { return std::pow(x, y); });
    return restore(std::move(out), a.dtype());
  }
  if ((a.dtype() == DType::i64 || a.dtype() == DType::u64) && !is_floating(b.dtype())) {
    // 64-bit base, integer exponent: exact (through f64 a result beyond 2^53 would round).
    const std::vector<std::int64_t> ev = b.to_ints();
    Tensor out(a.dtype(), out_shape);
    const auto run = [&](const auto* pa, auto* po) {
      broadcast_rows<2>(out_shape, {&a.shape(), &b.shape()},
                        [&](std::int64_t o, const std::array<std::int64_t, 2>& in,
                            const std::array<std::int64_t, 2>& st, std::int64_t n) {
                          for (std::int64_t i = 0; i < n; ++i)
                            po[o + i] = exact_pow(pa[in[0] + i * st[0]],
                                                  ev[static_cast<std::size_t>(in[1] + i * st[1])]);
                        });
    };
    if (a.dtype() == DType::i64)
      run(a.data<std::int64_t>(), out.data<std::int64_t>());
    else
      run(a.data<std::uint64_t>(), out.data<std::uint64_t>());
    return out;
  }
  // Integer base: computed in f64, then converted to the base's dtype (saturating).
  const std::vector<double> av = a.to_doubles(), bv = b.to_doubles();
  Tensor out(a.dtype(), out_shape);
  broadcast_rows<2>(out_shape, {&a.shape(), &b.shape()},
                    [&](std::int64_t o, const std::array<std::int64_t, 2>& in,
                        const std::array<std::int64_t, 2>& st, std::int64_t n) {
                      for (std::int64_t i = 0; i < n; ++i)
                        out.set(o + i, std::pow(av[static_cast<std::size_t>(in[0] + i * st[0])],
                                                bv[static_cast<std::size_t>(in[1] + i * st[1])]));
                    });
  return out;
}

// ---- Unary ----

Tensor neg(const Tensor& x) {
  if (x.dtype() == DType::u8 || x.dtype() == DType::u16 || x.dtype() == DType::u32 ||
      x.dtype() == DType::u64)
    throw_user_error(
        "Neg: unsigned input ({}, shape {}) has no negation; Cast it to a signed dtype",
        dtype_name(x.dtype()), x.shape().to_string());
  return unary_numeric("Neg", x, [](auto v) { return static_cast<decltype(v)>(-v); });
}

Tensor abs(const Tensor& x) {
  return unary_numeric("Abs", x, [](auto v) {
    using T = decltype(v);
    if constexpr (std::is_unsigned_v<T>)
      return v;
    else
      return static_cast<T>(v < 0 ? -v : v);
  });
}

Tensor relu(const Tensor& x) {
  return unary_numeric("Relu", x, [](auto v) {
    using T = decltype(v);
    return v > T(0) ? v : T(0);
  });
}

Tensor exp(const Tensor& x) {
  return unary_float("Exp", x, [](auto v) { return std::exp(v); });
}
Tensor log(const Tensor& x) {
  return unary_float("Log", x, [](auto v) { return std::log(v); });
}
Tensor sqrt(const Tensor& x) {
  return unary_float("Sqrt", x, [](auto v) { return std::sqrt(v); });
}
Tensor reciprocal(const Tensor& x) {
  return unary_float("Reciprocal", x, [](auto v) { return decltype(v)(1) / v; });
}
Tensor leaky_relu(const Tensor& x, float alpha) {
  return unary_float("LeakyRelu", x, [alpha](auto v) {
    using T = decltype(v);
    return v < T(0) ? T(alpha) * v : v;
  });
}
Tensor elu(const Tensor& x, float alpha) {
  return unary_float("Elu", x, [alpha](auto v) {
    using T = decltype(v);
    return v < T(0) ? T(alpha) * std::expm1(v) : v;
  });
}
Tensor selu(const Tensor& x, float alpha, float gamma) {
  return unary_float("Selu", x, [alpha, gamma](auto v) {
    using T = decltype(v);
    return v > T(0) ? T(gamma) * v : T(gamma) * T(alpha) * std::expm1(v);
  });
}
Tensor sigmoid(const Tensor& x) {
  // Two branches keep exp() from overflowing for large |v|.
  return unary_float("Sigmoid", x, [](auto v) {
    using T = decltype(v);
    if (v >= T(0)) return T(1) / (T(1) + std::exp(-v));
    const T e = std::exp(v);
    return e / (T(1) + e);
  });
}
Tensor tanh(const Tensor& x) {
  return unary_float("Tanh", x, [](auto v) { return std::tanh(v); });
}
Tensor softplus(const Tensor& x) {
  return unary_float("Softplus", x, [](auto v) {
    return v > decltype(v)(0) ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
  });
}
Tensor erf(const Tensor& x) {
  return unary_float("Erf", x, [](auto v) { return std::erf(v); });
}

Tensor gelu(const Tensor& x, GeluApproximation approximate) {
  if (approximate == GeluApproximation::tanh) {
    return unary_float("Gelu", x, [](auto v) {
      using T = decltype(v);
      // T(0.044715) is 0.044715f for f32: rounding through double lands on the same float.
      const T k = std::sqrt(T(2) / static_cast<T>(M_PI));
      return T(0.5) * v * (T(1) + std::tanh(k * (v + T(0.044715) * v * v * v)));
    });
  }
  return unary_float("Gelu", x, [](auto v) {
    using T = decltype(v);
    return T(0.5) * v * (T(1) + std::erf(v * static_cast<T>(M_SQRT1_2)));
  });
}

Tensor clip(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  if (x.dtype() == DType::boolean)
    throw_user_error("Clip: bool input (shape {}) is not accepted; Cast it to a numeric dtype",
                     x.shape().to_string());
  if (is_floating(x.dtype())) {
    const double lo = min ? min->as<double>() : -std::numeric_limits<double>::infinity();
    const double hi = max ? max->as<double>() : std::numeric_limits<double>::infinity();
    // ONNX: min > max leaves every value at max, which min(max(v, lo), hi) gives.
    return unary_float("Clip", x, [lo, hi](auto v) {
      using T = decltype(v);
      if (std::isnan(v)) return v;
      return std::min(std::max(v, static_cast<T>(lo)), static_cast<T>(hi));
    });
  }
  Tensor y = x;
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // Bounds convert straight to T: an int64 bound beyond 2^53 stays exact.
      const T lo = min ? min->as<T>() : std::numeric_limits<T>::lowest();
      const T hi = max ? max->as<T>() : std::numeric_limits<T>::max();
      T* p = y.data<T>();
      for (std::int64_t i = 0; i < y.element_count(); ++i) p[i] = std::min(std::max(p[i], lo), hi);
    }
  });
  return y;
}

// ---- Compare and select ----

Tensor equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() == DType::boolean && b.dtype() == DType::boolean) {
    Tensor out(DType::boolean, broadcast_shapes(a.shape(), b.shape()));
    binary_loop<bool, bool>(a, b, out, [](bool x, bool y) { return x == y; });
    return out;
  }
  return compare_op(
      "Equal", a, b, [](auto x, auto y) { return x == y; }, true);
}
Tensor less(const Tensor& a, const Tensor& b) {
  return compare_op(
      "Less", a, b, [](auto x, auto y) { return x < y; }, false);
}
Tensor greater(const Tensor& a, const Tensor& b) {
  return compare_op(
      "Greater", a, b, [](auto x, auto y) { return x > y; }, false);
}

Tensor where(const Tensor& condition, const Tensor& x, const Tensor& y) {
  if (condition.dtype() != DType::boolean)
    throw_user_error(
        "Where: condition has dtype {} (shape {}) but must be bool; use Cast(to=bool) "
        "or a compare op",
        dtype_name(condition.dtype()), condition.shape().to_string());
  detail::require_same_dtype("Where", x, y);
  const Shape out_shape =
      broadcast_shapes(broadcast_shapes(condition.shape(), x.shape()), y.shape());
  Tensor out(x.dtype(), out_shape);
  const std::size_t es = dtype_size(x.dtype());
  const bool* c = condition.data<bool>();
  const auto* px = static_cast<const std::byte*>(x.raw_data());
  const auto* py = static_cast<const std::byte*>(y.raw_data());
  auto* po = static_cast<std::byte*>(out.raw_data());
  broadcast_rows<3>(out_shape, {&condition.shape(), &x.shape(), &y.shape()},
                    [&](std::int64_t o, const std::array<std::int64_t, 3>& in,
                        const std::array<std::int64_t, 3>& st, std::int64_t n) {
                      for (std::int64_t i = 0; i < n; ++i) {
                        const bool take_x = c[in[0] + i * st[0]];
                        const std::byte* src =
                            take_x ? px + (in[1] + i * st[1]) * static_cast<std::int64_t>(es)
                                   : py + (in[2] + i * st[2]) * static_cast<std::int64_t>(es);
                        std::memcpy(po + (o + i) * static_cast<std::int64_t>(es), src, es);
                      }
                    });
  return out;
}

// ---- Variadic ----

namespace {
template <typename Op>
Tensor variadic(std::string_view name, const std::vector<Tensor>& inputs, Op op) {
  if (inputs.empty()) throw_user_error("{}: needs at least one input, got none", name);
  Tensor acc = inputs[0];
  if (acc.dtype() == DType::boolean)
    throw_user_error("{}: bool input 0 (shape {}) is not accepted; Cast it to a numeric dtype",
                     name, acc.shape().to_string());
  for (std::size_t i = 1; i < inputs.size(); ++i) acc = arithmetic(name, acc, inputs[i], op);
  return acc;
}
}  // namespace

Tensor sum(const std::vector<Tensor>& inputs) {
  return variadic("Sum", inputs, AddOp{});
}
Tensor max(const std::vector<Tensor>& inputs) {
  return variadic("Max", inputs, MaxOp{});
}
Tensor min(const std::vector<Tensor>& inputs) {
  return variadic("Min", inputs, MinOp{});
}

// ---- Cast ----

Tensor cast(const Tensor& x, DType to) {
  if (x.dtype() == DType::f64 && !is_floating(to) && to != DType::boolean) {
    Tensor t = x;  // truncated in f64: a double beyond 2^24 keeps its integer part exactly
    double* p = t.data<double>();
    for (std::int64_t i = 0; i < t.element_count(); ++i)
      if (std::isfinite(p[i])) p[i] = std::trunc(p[i]);
    return t.astype(to);
  }
  if (is_floating(x.dtype()) && !is_floating(to) && to != DType::boolean) {
    // ONNX Cast truncates toward zero (as NumPy's astype); astype alone would round to nearest.
    Tensor t = as_f32(x);
    float* p = t.data<float>();
    for (std::int64_t i = 0; i < t.element_count(); ++i)
      if (std::isfinite(p[i])) p[i] = std::trunc(p[i]);
    return t.astype(to);
  }
  return x.astype(to);
}

Tensor identity(const Tensor& x) {
  return x;
}

// ---- Further ONNX elementwise ops (PRelu-16, HardSigmoid-6, HardSwish-14, Floor/Ceil-13,
// Round-11, Sign-13, Not/And/Or/Xor-7, LessOrEqual/GreaterOrEqual-16, Mod-13) ----

Tensor prelu(const Tensor& x, const Tensor& slope) {
  detail::require_float("PRelu", x, "X");
  detail::require_same_dtype("PRelu", x, slope);
  Shape out;
  try {
    out = broadcast_shapes(x.shape(), slope.shape());
  } catch (const UserError&) {
    out = Shape{};
  }
  if (!(out == x.shape()))
    throw_user_error("PRelu: slope {} must broadcast to X {} (unidirectionally)",
                     slope.shape().to_string(), x.shape().to_string());
  return arithmetic("PRelu", x, slope,
                    [](auto v, auto a) { return v < decltype(v)(0) ? a * v : v; });
}

Tensor hard_sigmoid(const Tensor& x, float alpha, float beta) {
  return unary_float("HardSigmoid", x, [alpha, beta](auto v) {
    using T = decltype(v);
    return std::max(T(0), std::min(T(1), T(alpha) * v + T(beta)));
  });
}

Tensor hard_swish(const Tensor& x) {
  return unary_float("HardSwish", x, [](auto v) {
    using T = decltype(v);
    return v * std::max(T(0), std::min(T(1), v / T(6) + T(0.5)));
  });
}

Tensor floor(const Tensor& x) {
  if (!is_floating(x.dtype())) return unary_numeric("Floor", x, [](auto v) { return v; });
  return unary_float("Floor", x, [](auto v) { return std::floor(v); });
}

Tensor ceil(const Tensor& x) {
  if (!is_floating(x.dtype())) return unary_numeric("Ceil", x, [](auto v) { return v; });
  return unary_float("Ceil", x, [](auto v) { return std::ceil(v); });
}

Tensor round(const Tensor& x) {
  if (!is_floating(x.dtype())) return unary_numeric("Round", x, [](auto v) { return v; });
  return unary_float("Round", x, [](auto v) { return std::nearbyint(v); });  // halves to even
}

Tensor sign(const Tensor& x) {
  return unary_numeric("Sign", x, [](auto v) {
    using T = decltype(v);
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(v)) return v;
    }
    return static_cast<T>(v > T(0) ? 1 : (v < T(0) ? -1 : 0));
  });
}

namespace {
template <typename Op>
Tensor logical(std::string_view name, const Tensor& a, const Tensor& b, Op op) {
  if (a.dtype() != DType::boolean || b.dtype() != DType::boolean)
    throw_user_error("{}: inputs must be bool, got {} (shape {}) and {} (shape {})", name,
                     dtype_name(a.dtype()), a.shape().to_string(), dtype_name(b.dtype()),
                     b.shape().to_string());
  Tensor out(DType::boolean, broadcast_shapes(a.shape(), b.shape()));
  binary_loop<bool, bool>(a, b, out, op);
  return out;
}
}  // namespace

Tensor logical_not(const Tensor& x) {
  if (x.dtype() != DType::boolean)
    throw_user_error("Not: input must be bool, got {} (shape {})", dtype_name(x.dtype()),
                     x.shape().to_string());
  Tensor y = x;
  bool* p = y.data<bool>();
  for (std::int64_t i = 0; i < y.element_count(); ++i) p[i] = !p[i];
  return y;
}
Tensor logical_and(const Tensor& a, const Tensor& b) {
  return logical("And", a, b, [](bool x, bool y) { return x && y; });
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  return logical("Or", a, b, [](bool x, bool y) { return x || y; });
}
Tensor logical_xor(const Tensor& a, const Tensor& b) {
  return logical("Xor", a, b, [](bool x, bool y) { return x != y; });
}
Tensor less_or_equal(const Tensor& a, const Tensor& b) {
  return compare_op(
      "LessOrEqual", a, b, [](auto x, auto y) { return x <= y; }, false);
}
Tensor greater_or_equal(const Tensor& a, const Tensor& b) {
  return compare_op(
      "GreaterOrEqual", a, b, [](auto x, auto y) { return x >= y; }, false);
}

Tensor mod(const Tensor& a, const Tensor& b, bool fmod) {
  if (is_floating(a.dtype())) {
    if (!fmod)
      throw_user_error("Mod: float inputs ({}) need fmod=1 (C fmod semantics), as ONNX requires",
                       dtype_name(a.dtype()));
    return arithmetic("Mod", a, b, [](auto x, auto y) { return std::fmod(x, y); });
  }
  if (b.dtype() != DType::boolean) {
    const std::vector<std::int64_t> values = b.to_ints();
    for (std::size_t i = 0; i < values.size(); ++i)
      if (values[i] == 0)
        throw_user_error("Mod: integer divisor (shape {}) is zero at element {}",
                         b.shape().to_string(), i);
  }
  return arithmetic("Mod", a, b, [fmod](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) {
      return std::fmod(x, y);
    } else if constexpr (std::is_unsigned_v<T>) {
      return static_cast<T>(x % y);  // both signs are positive: fmod and Python % agree
    } else {
      const auto yv = static_cast<std::int64_t>(y);
      if (yv == -1) return T(0);  // also for MIN % -1, which C++ leaves undefined
      std::int64_t r = static_cast<std::int64_t>(x) % yv;
      // fmod=0 takes the divisor's sign (Python %), fmod=1 the dividend's (C %).
      if (!fmod && r != 0 && ((r < 0) != (yv < 0))) r += yv;
      return static_cast<T>(r);
    }
  });
}

}  // namespace tessera::ops

namespace tessera::ops {

// ---- Trigonometric and hyperbolic ops (Sin..Atanh-7/9), Softsign-1, Celu-12,
// ThresholdedRelu-10, Shrink-9, IsInf-10, IsNaN-13, BitShift-11, Mean-13 ----

Tensor sin(const Tensor& x) {
  return unary_float("Sin", x, [](auto v) { return std::sin(v); });
}
Tensor cos(const Tensor& x) {
  return unary_float("Cos", x, [](auto v) { return std::cos(v); });
}
Tensor tan(const Tensor& x) {
  return unary_float("Tan", x, [](auto v) { return std::tan(v); });
}
Tensor asin(const Tensor& x) {
  return unary_float("Asin", x, [](auto v) { return std::asin(v); });
}
Tensor acos(const Tensor& x) {
  return unary_float("Acos", x, [](auto v) { return std::acos(v); });
}
Tensor atan(const Tensor& x) {
  return unary_float("Atan", x, [](auto v) { return std::atan(v); });
}
Tensor sinh(const Tensor& x) {
  return unary_float("Sinh", x, [](auto v) { return std::sinh(v); });
}
Tensor cosh(const Tensor& x) {
  return unary_float("Cosh", x, [](auto v) { return std::cosh(v); });
}
Tensor asinh(const Tensor& x) {
  return unary_float("Asinh", x, [](auto v) { return std::asinh(v); });
}
Tensor acosh(const Tensor& x) {
  return unary_float("Acosh", x, [](auto v) { return std::acosh(v); });
}
Tensor atanh(const Tensor& x) {
  return unary_float("Atanh", x, [](auto v) { return std::atanh(v); });
}

Tensor softsign(const Tensor& x) {
  return unary_float("Softsign", x, [](auto v) { return v / (decltype(v)(1) + std::fabs(v)); });
}

Tensor celu(const Tensor& x, float alpha) {
  if (alpha == 0.0f) throw_user_error("Celu: alpha is 0; it must be nonzero");
  return unary_float("Celu", x, [alpha](auto v) {
    using T = decltype(v);
    const T a = T(alpha);
    return std::max(T(0), v) + std::min(T(0), a * (std::exp(v / a) - T(1)));
  });
}

Tensor thresholded_relu(const Tensor& x, float alpha) {
  return unary_float("ThresholdedRelu", x, [alpha](auto v) {
    using T = decltype(v);
    return v > T(alpha) ? v : T(0);
  });
}

Tensor shrink(const Tensor& x, float lambd, float bias) {
  return unary_numeric("Shrink", x, [lambd, bias](auto v) {
    using T = decltype(v);
    const double d = static_cast<double>(v);
    const double r = d < -lambd ? d + bias : (d > lambd ? d - bias : 0.0);
    return static_cast<T>(r);
  });
}

Tensor is_inf(const Tensor& x, bool detect_negative, bool detect_positive) {
  detail::require_float("IsInf", x);
  const std::vector<double> p = x.to_doubles();  // exact for every float dtype
  Tensor out(DType::boolean, x.shape());
  bool* o = out.data<bool>();
  for (std::int64_t i = 0; i < x.element_count(); ++i)
    o[i] = std::isinf(p[i]) && (p[i] > 0 ? detect_positive : detect_negative);
  return out;
}

Tensor is_nan(const Tensor& x) {
  detail::require_float("IsNaN", x);
  const std::vector<double> p = x.to_doubles();  // exact for every float dtype
  Tensor out(DType::boolean, x.shape());
  bool* o = out.data<bool>();
  for (std::int64_t i = 0; i < x.element_count(); ++i) o[i] = std::isnan(p[i]);
  return out;
}

Tensor bit_shift(const Tensor& x, const Tensor& y, bool left) {
  detail::require_same_dtype("BitShift", x, y);
  if (x.dtype() != DType::u8 && x.dtype() != DType::u16 && x.dtype() != DType::u32 &&
      x.dtype() != DType::u64)
    throw_user_error("BitShift: inputs must be unsigned integers (u8, u16, u32, u64), got {}",
                     dtype_name(x.dtype()));
  Tensor out(x.dtype(), broadcast_shapes(x.shape(), y.shape()));
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T> && !std::is_same_v<T, bool>) {
      binary_loop<T, T>(x, y, out, [left](T a, T b) {
        // Shifting by the bit width or more gives 0, as NumPy's shifts of unsigned values do.
        if (b >= sizeof(T) * 8) return T(0);
        return static_cast<T>(left ? static_cast<std::uint64_t>(a) << b : a >> b);
      });
    }
  });
  return out;
}

Tensor mean(const std::vector<Tensor>& inputs) {
  if (inputs.empty()) throw_user_error("Mean: needs at least one input, got none");
  detail::require_float("Mean", inputs[0], "input 0");
  const Tensor total = variadic("Mean", inputs, AddOp{});
  const auto n = static_cast<double>(inputs.size());
  return unary_float("Mean", total, [n](auto v) { return v / static_cast<decltype(v)>(n); });
}

}  // namespace tessera::ops
