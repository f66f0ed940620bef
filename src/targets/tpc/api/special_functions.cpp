// Special functions (spec 000 §2.6.2, Table 2). Each lane is computed in double with libm and
// rounded once to f32, which keeps every function within 1 ulp of the exact result.
#include "tessera/targets/tpc/api/special_functions.h"

#include <cmath>

#include "tessera/core/error.h"
#include "tessera/targets/tpc/api/context.h"
#include "tessera/targets/tpc/api/intrinsics.h"

namespace tessera::tpc {
namespace {

// A special function is a sequence of tpc.special_function_vpu_cycles VPU issues. Calling one
// marks the program as using special functions: their tables take vector local memory (spec
// 000 §2.5.3), which the executor checks after the instance, as the hardware's loader decides
// it from the kernel binary.
std::uint64_t charge(std::uint64_t operands_ready) {
  detail::InstanceContext* c = detail::current_instance;
  if (c == nullptr) return 0;
  c->special_functions_called = true;
  c->counters.special_function_calls += 1;
  return c->clock.issue(detail::kVpu, operands_ready, c->special_function_issues);
}

template <typename F>
float64 map(const float64& x, const char* name, F f) {
  (void)name;
  float64 r(detail::no_init_t{});
  r.ready = charge(x.ready);
  for (int i = 0; i < 64; ++i) r.v[i] = static_cast<float>(f(static_cast<double>(x.v[i])));
  return r;
}

template <typename F>
float64 map2(const float64& x, const float64& y, const char* name, F f) {
  (void)name;
  const std::uint64_t ready = charge(std::max(x.ready, y.ready));
  float64 r(detail::no_init_t{});
  for (int i = 0; i < 64; ++i)
    r.v[i] = static_cast<float>(f(static_cast<double>(x.v[i]), static_cast<double>(y.v[i])));
  r.ready = ready;
  return r;
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

// Fixed-point lanes: `in_frac` fractional bits in, `out_frac` out, round to nearest, saturate.
template <typename V, typename F>
V fixed_map(const V& x, int in_frac, int out_frac, const char* name, F f) {
  (void)name;
  using T = typename V::lane_type;
  V r(detail::no_init_t{});
  r.ready = charge(x.ready);
  for (int i = 0; i < V::lanes; ++i) {
    const double in = std::ldexp(static_cast<double>(x.v[i]), -in_frac);
    r.v[i] = detail::convert_lane<T>(std::ldexp(f(in), out_frac), e_round_half_ne);
  }
  return r;
}

}  // namespace

float64 v_reciprocal_f32(const float64& x) {
  return map(x, "v_reciprocal_f32", [](double v) { return 1.0 / v; });
}
float64 v_sqrt_f32(const float64& x) {
  return map(x, "v_sqrt_f32", [](double v) { return std::sqrt(v); });
}
float64 v_exp_f32(const float64& x) {
  return map(x, "v_exp_f32", [](double v) { return std::exp(v); });
}
float64 v_exp_cephes_f32(const float64& x) {
  return map(x, "v_exp_cephes_f32", [](double v) { return std::exp(v); });
}
float64 v_log_f32(const float64& x) {
  return map(x, "v_log_f32", [](double v) { return std::log(v); });
}
float64 v_log2_f32(const float64& x) {
  return map(x, "v_log2_f32", [](double v) { return std::log2(v); });
}
float64 v_tanh_f32(const float64& x) {
  return map(x, "v_tanh_f32", [](double v) { return std::tanh(v); });
}
float64 v_pow_f32(const float64& x, const float64& y) {
  return map2(x, y, "v_pow_f32", [](double a, double b) { return std::pow(a, b); });
}
float64 v_pow2_f32(const float64& x) {
  return map(x, "v_pow2_f32", [](double v) { return std::exp2(v); });
}
float64 v_rsqrt_f32(const float64& x) {
  return map(x, "v_rsqrt_f32", [](double v) { return 1.0 / std::sqrt(v); });
}
float64 v_div_f32(const float64& x, const float64& y) {
  return map2(x, y, "v_div_f32", [](double a, double b) { return a / b; });
}
float64 v_sin_f32(const float64& x) {
  return map(x, "v_sin_f32", [](double v) { return std::sin(v); });
}
float64 v_cos_f32(const float64& x) {
  return map(x, "v_cos_f32", [](double v) { return std::cos(v); });
}
float64 v_tan_f32(const float64& x) {
  return map(x, "v_tan_f32", [](double v) { return std::tan(v); });
}
float64 v_sigmoid_f32(const float64& x) {
  return map(x, "v_sigmoid_f32", sigmoid);
}
float64 v_asin_cephes_f32(const float64& x) {
  return map(x, "v_asin_cephes_f32", [](double v) { return std::asin(v); });
}
float64 v_acos_cephes_f32(const float64& x) {
  return map(x, "v_acos_cephes_f32", [](double v) { return std::acos(v); });
}
float64 v_atan_cephes_f32(const float64& x) {
  return map(x, "v_atan_cephes_f32", [](double v) { return std::atan(v); });
}
float64 v_asinh_f32(const float64& x) {
  return map(x, "v_asinh_f32", [](double v) { return std::asinh(v); });
}
float64 v_acosh_f32(const float64& x) {
  return map(x, "v_acosh_f32", [](double v) { return std::acosh(v); });
}
float64 v_atanh_f32(const float64& x) {
  return map(x, "v_atanh_f32", [](double v) { return std::atanh(v); });
}
float64 v_sinh_cephes_f32(const float64& x) {
  return map(x, "v_sinh_cephes_f32", [](double v) { return std::sinh(v); });
}
float64 v_cosh_cephes_f32(const float64& x) {
  return map(x, "v_cosh_cephes_f32", [](double v) { return std::cosh(v); });
}
float64 v_mod_f32(const float64& x) {
  return map(x, "v_mod_f32", [](double v) { return v - std::trunc(v); });
}
float64 v_mod_f32(const float64& x, const float64& y) {
  return map2(x, y, "v_mod_f32", [](double a, double b) { return std::fmod(a, b); });
}
float64 v_expm1_f32(const float64& x) {
  return map(x, "v_expm1_f32", [](double v) { return std::expm1(v); });
}

char256 v_i8_tanh(const char256& x) {
  return fixed_map(x, 3, 7, "v_i8_tanh", [](double v) { return std::tanh(v); });
}
short128 v_i16_tanh(const short128& x) {
  return fixed_map(x, 11, 15, "v_i16_tanh", [](double v) { return std::tanh(v); });
}
char256 v_i8_sigmoid(const char256& x) {
  return fixed_map(x, 3, 7, "v_i8_sigmoid", sigmoid);
}
short128 v_i16_sigmoid(const short128& x) {
  return fixed_map(x, 11, 15, "v_i16_sigmoid", sigmoid);
}
char256 v_i8_exp(const char256& x) {
  return fixed_map(x, 3, 7, "v_i8_exp", [](double v) { return std::exp(std::min(v, 0.0)); });
}
short128 v_i16_exp(const short128& x) {
  return fixed_map(x, 11, 15, "v_i16_exp", [](double v) { return std::exp(std::min(v, 0.0)); });
}
ushort128 v_u16_reciprocal(const ushort128& x) {
  return fixed_map(x, 15, 15, "v_u16_reciprocal", [](double v) {
    return v >= 0.5 ? 1.0 / v : 2.0;  // outside [0.5, 1) the result saturates
  });
}

}  // namespace tessera::tpc
