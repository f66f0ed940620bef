// Special functions of spec 000 §2.6.2 (Table 2) on f32 vectors. Each costs
// tpc.special_function_vpu_cycles VPU issues and needs specialFunctionsUsed in the glue code
// (which shrinks the usable vector local memory, spec 000 §2.5.3); calling one without it is a
// DeviceFault naming the kernel. Accuracy: within 1 ulp of the exact result (pow: 2 ulp).
#pragma once

#include "tessera/targets/tpc/api/types.h"

namespace tessera::tpc {

float64 v_reciprocal_f32(const float64& x);
float64 v_sqrt_f32(const float64& x);
float64 v_exp_f32(const float64& x);
float64 v_exp_cephes_f32(const float64& x);
float64 v_log_f32(const float64& x);
float64 v_log2_f32(const float64& x);
float64 v_tanh_f32(const float64& x);
float64 v_pow_f32(const float64& x, const float64& y);
float64 v_pow2_f32(const float64& x);
float64 v_rsqrt_f32(const float64& x);
float64 v_div_f32(const float64& x, const float64& y);
float64 v_sin_f32(const float64& x);
float64 v_cos_f32(const float64& x);
float64 v_tan_f32(const float64& x);
float64 v_sigmoid_f32(const float64& x);
float64 v_asin_cephes_f32(const float64& x);
float64 v_acos_cephes_f32(const float64& x);
float64 v_atan_cephes_f32(const float64& x);
float64 v_asinh_f32(const float64& x);
float64 v_acosh_f32(const float64& x);
float64 v_atanh_f32(const float64& x);
float64 v_sinh_cephes_f32(const float64& x);
float64 v_cosh_cephes_f32(const float64& x);
// Table 2 lists v_mod_f32 with one input: the fractional part, x - trunc(x) (sign of x).
float64 v_mod_f32(const float64& x);
// Two-input form: fmod(x, y).
float64 v_mod_f32(const float64& x, const float64& y);
float64 v_expm1_f32(const float64& x);

// INT8/INT16 special functions (spec 000 §2.6.2). Lanes are fixed point: i8 in Q4.3 in and
// Q0.7 out for tanh/sigmoid, i16 in Q4.11 in and Q0.15 out; exp takes x <= 0 in the input
// format and returns Q0.7 / Q0.15. Results round to nearest and saturate.
char256 v_i8_tanh(const char256& x);
short128 v_i16_tanh(const short128& x);
char256 v_i8_sigmoid(const char256& x);
short128 v_i16_sigmoid(const short128& x);
char256 v_i8_exp(const char256& x);
short128 v_i16_exp(const short128& x);
// 1/x for x in [0.5, 1) in Q0.15 (u16), result in Q1.15 saturated to the u16 range.
ushort128 v_u16_reciprocal(const ushort128& x);

}  // namespace tessera::tpc
