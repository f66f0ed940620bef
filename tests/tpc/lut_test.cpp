// Special-function lookups on Tessera's own tables (intrinsics_lut.h, lut.cpp): the interval
// decomposition against plain loops of its documented definition; each fitted table evaluated
// as its kernel form does (C0 + (C1 + C2 t) t in f32 / bf16 arithmetic) against the math
// library over a dense sweep of its interval range; sin in the style of Habana's sin_f32 and log
// in the style of Habana's log_bf16 as port-free kernels against std::sin / std::log; the cost
// model and the reduced vector local memory; each misuse as a UserError. The error bounds
// asserted here are the tolerances docs/targets/tpc.md states (measured by these sweeps).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tpc_test_util.h"

namespace {

using namespace tpc_test;

std::uint32_t bits_of(float x) {
  return std::bit_cast<std::uint32_t>(x);
}
float float_of(std::uint32_t b) {
  return std::bit_cast<float>(b);
}
// Distance in units in the last place of `exact` rounded to f32.
double ulps_f32(double got, double exact) {
  const float e = static_cast<float>(exact);
  const double ulp = std::nextafter(std::fabs(e), INFINITY) - std::fabs(e);
  return std::fabs(got - exact) / ulp;
}
// The same for bf16 (8 significant bits).
double ulps_bf16(double got, double exact) {
  int exp = 0;
  std::frexp(exact, &exp);
  return std::fabs(got - exact) / std::ldexp(1.0, exp - 8);
}
bfloat128 bf16_from_bits(const std::uint16_t (&b)[128]) {
  bfloat128 v;
  for (int i = 0; i < 128; ++i) v.v[i] = tessera::bf16::from_bits(b[i]);
  return v;
}

// ---- the interval decomposition, against plain loops of its definition ----

TEST(TpcLut, DefaultVariantTakesTheMantissaAboveTheShiftAndTruncatesTheStart) {
  std::uint32_t seed = 12345;
  for (int shift : {0, 5, 16, 17, 23}) {
    for (int round = 0; round < 64; ++round) {
      float64 x;
      for (int i = 0; i < 64; ++i) {
        seed = seed * 1664525u + 1013904223u;
        x.v[i] = float_of((seed >> 1) & 0x7fffffffu) * ((seed & 1) ? -1.0f : 1.0f);
      }
      const uint64_float64 r = v_f32_get_lut_entry_and_interval_start_b(
          x, static_cast<std::int8_t>(shift), e_func_variant_default << 13);
      for (int i = 0; i < 64; ++i) {
        const std::uint32_t b = bits_of(x.v[i]);
        ASSERT_EQ(r.v1.v[i], (b & 0x7fffffu) >> shift) << shift << " " << x.v[i];
        ASSERT_EQ(bits_of(r.v2.v[i]), b & ~((1u << shift) - 1u)) << shift << " " << x.v[i];
      }
    }
  }
}

TEST(TpcLut, SqrtVariantPutsTheExponentsLowBitAboveTheMantissa) {
  float64 x;
  for (int i = 0; i < 64; ++i) x.v[i] = 1.0f + 3.0f * static_cast<float>(i) / 64.0f;  // [1, 4)
  const uint64_float64 r = v_f32_get_lut_entry_and_interval_start_b(x, 17, SW_LUT_SQRT_RSQRT);
  for (int i = 0; i < 64; ++i) {
    const std::uint32_t b = bits_of(x.v[i]);
    const std::uint32_t odd = ((b >> 23) - 127u) & 1u;
    EXPECT_EQ(r.v1.v[i], (odd << 6) | ((b & 0x7fffffu) >> 17)) << x.v[i];
    EXPECT_EQ(bits_of(r.v2.v[i]), b & ~0x1ffffu);
  }
}

TEST(TpcLut, SinCosAndTanhNumberFixedPointIntervalsBelowOne) {
  for (int variant : {e_func_variant_sin_cos, e_func_variant_tanh}) {
    for (int k = 0; k < 4096; k += 64) {
      float64 x;
      for (int i = 0; i < 64; ++i) x.v[i] = static_cast<float>(k + i) / 4096.0f * -1.0f;
      const uint64_float64 r = v_f32_get_lut_entry_and_interval_start_b(x, 17, variant << 13);
      for (int i = 0; i < 64; ++i) {
        const auto q = static_cast<std::uint32_t>(std::floor(std::fabs(x.v[i]) * 64.0));
        ASSERT_EQ(r.v1.v[i], q) << x.v[i];
        ASSERT_EQ(r.v2.v[i], -static_cast<float>(q) / 64.0f) << x.v[i];
      }
    }
  }
  // At and above 1, SIN_COS keeps to its last interval; TANH numbers the binades up to 8.
  float64 x;
  for (int i = 0; i < 64; ++i) x.v[i] = 1.0f + 0.125f * static_cast<float>(i);  // [1, 9)
  const uint64_float64 s = v_f32_get_lut_entry_and_interval_start_b(x, 17, SW_LUT_SIN_COS);
  const uint64_float64 t = v_f32_get_lut_entry_and_interval_start_b(x, 17, SW_LUT_TANH);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(s.v1.v[i], 63u);
    const float v = x.v[i];
    if (v >= 8.0f) {
      EXPECT_EQ(t.v1.v[i], 255u) << v;
      EXPECT_EQ(t.v2.v[i], 8.0f - 4.0f / 64.0f);
    } else {
      const int e = static_cast<int>(std::floor(std::log2(v)));
      EXPECT_EQ(t.v1.v[i], 64u * (1u + e) + ((bits_of(v) & 0x7fffffu) >> 17)) << v;
      EXPECT_EQ(bits_of(t.v2.v[i]), bits_of(v) & ~0x1ffffu);
    }
  }
}

TEST(TpcLut, LogVariantInterleavesTheNearOneClassesOfEveryBf16) {
  // Every positive normal bf16: entry 4 * (top 5 mantissa bits) + class, start without the
  // low 2 mantissa bits.
  for (std::uint32_t first = 0x0080; first < 0x7f80; first += 128) {
    std::uint16_t b[128];
    for (int i = 0; i < 128; ++i) b[i] = static_cast<std::uint16_t>(first + i);
    const ushort128_bfloat128 r =
        v_bf16_get_lut_entry_and_interval_start_b(bf16_from_bits(b), 0, SW_LUT_LOG);
    for (int i = 0; i < 128; ++i) {
      const int e = (b[i] >> 7) - 127;
      const unsigned cls = e == 0 ? 1u : (e == -1 ? 2u : 0u);
      ASSERT_EQ(r.v1.v[i], 4u * ((b[i] & 0x7fu) >> 2) + cls) << b[i];
      ASSERT_EQ(r.v2.v[i].bits, b[i] & 0xfffcu) << b[i];
    }
  }
}

TEST(TpcLut, TheVectorPredicateKeepsTheIncomeOfDisabledLanes) {
  float64 x(1.75f);
  uint64_float64 income;
  income.v1 = uint64(7u);
  income.v2 = float64(-3.0f);
  bool256 odd;
  for (int i = 0; i < 256; ++i) odd.b[i] = ((i / 4) % 2) ? 1 : 0;  // 32-bit lanes: 4 bytes each
  const uint64_float64 r =
      v_f32_get_lut_entry_and_interval_start_vb(x, 16, 0, income, to_bool64(odd), false);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(r.v1.v[i], (i % 2) ? 96u : 7u);  // 1.75: mantissa 0x600000 >> 16
    EXPECT_EQ(r.v2.v[i], (i % 2) ? 1.75f : -3.0f);
  }
}

// ---- the tables, evaluated as their kernel forms do ----

// One f32 lookup and evaluation: GET_LUT_ENTRY_AND_INTERVAL_START, the entry offset the form
// adds, LOOKUP_1C / LOOKUP_2C and the two MACs of tpc-special.h's LOOKUP_AND_MAC.
float64 poly_f32(const float64& x, int shift, int variant, int fid, unsigned offset) {
  const uint64_float64 e =
      v_f32_get_lut_entry_and_interval_start_b(x, static_cast<std::int8_t>(shift), variant << 13);
  const uint64 entry = v_u32_add_b(e.v1, offset);
  const float64 t = v_f32_sub_b(x, e.v2);
  const float64 c0 = v_f32_lookup_1c(entry, fid, SW_BV32, float64(0.0f));
  const float64_pair_t c12 = v_f32_lookup_2c(entry, fid, SW_BV32, float64_pair_t{});
  const float64 inner = v_f32_mac_b(c12.v2, t, c12.v1);
  return v_f32_mac_b(inner, t, c0);
}

struct F32Case {
  const char* name;
  int fid, shift, variant;
  unsigned offset;
  double lo, hi;
  double (*f)(double);    // what the evaluated polynomial approximates
  double max_ulps;        // the measured bound, rounded up; or, when `absolute`, the bound on
  bool absolute = false;  // |error| (for log2 near 1, whose form adds an exponent of at least 1)
};

double sin_over_x(double x) {
  return x == 0 ? 1.0 : std::sin(x) / x;
}
double tanh_over_x(double x) {
  return x == 0 ? 1.0 : std::tanh(x) / x;
}
double log2_over_xm1(double x) {
  return x == 1 ? 1.0 / std::log(2.0) : std::log2(x) / (x - 1.0);
}

TEST(TpcLut, EveryF32TableMatchesItsFunctionOverItsRange) {
  const double pi4 = std::atan(1.0);
  const F32Case cases[] = {
      {"sin(x)/x", e_fp32_sin_cos, 17, e_func_variant_sin_cos, 0, 0, pi4, sin_over_x, 1.25},
      {"cos", e_fp32_sin_cos, 17, e_func_variant_sin_cos, 64, 0, pi4,
       [](double x) { return std::cos(x); }, 1.4},
      {"rcp", e_fp32_rcp, 16, e_func_variant_default, 0, 1, 2, [](double x) { return 1 / x; }, 1.4},
      {"sqrt", e_fp32_sqrt, 17, e_func_variant_sqrt_rsqrt, 0, 1, 4,
       [](double x) { return std::sqrt(x); }, 1.3},
      {"rsqrt", e_fp32_rsqrt, 16, e_func_variant_sqrt_rsqrt, 0, 1, 4,
       [](double x) { return 1 / std::sqrt(x); }, 1.3},
      {"2^(y-1)", e_fp32_pow2, 17, e_func_variant_default, 0, 1, 2,
       [](double y) { return std::exp2(y - 1); }, 1.3},
      {"log2", e_fp32_log2, 16, e_func_variant_default, 128, 1, 2,
       [](double x) { return std::log2(x); }, 7.5e-8, true},
      {"log2(x)/(x-1)", e_fp32_log2, 16, e_func_variant_default, 0, 1, 2, log2_over_xm1, 1.3},
      {"tanh(x)/x", e_fp32_tanh, 17, e_func_variant_tanh, 0, 0, 1, tanh_over_x, 1.5},
      {"tanh", e_fp32_tanh, 17, e_func_variant_tanh, 0, 1, 8, [](double x) { return std::tanh(x); },
       1.75},
  };
  for (const F32Case& c : cases) {
    constexpr int kSamples = 1 << 16;
    double worst = 0;
    for (int k = 0; k < kSamples; k += 64) {
      float64 x;
      for (int i = 0; i < 64; ++i)
        x.v[i] = static_cast<float>(c.lo + (c.hi - c.lo) * (k + i) / kSamples);
      const float64 y = poly_f32(x, c.shift, c.variant, c.fid, c.offset);
      for (int i = 0; i < 64; ++i) {
        const double exact = c.f(x.v[i]);
        worst = std::max(worst, c.absolute ? std::fabs(y.v[i] - exact) : ulps_f32(y.v[i], exact));
      }
    }
    EXPECT_LE(worst, c.max_ulps) << c.name;
  }
}

// ---- sin in the style of Habana's sin_f32 (a port-free kernel of the same contract) ----

// |x| reduced by the nearest even multiple k of pi/4 (three-part pi/4, as Cody and Waite);
// octant pairs choose sin or cos of the remainder r (|r| <= pi/4), whose table is entries
// 0..63 (sin(r)/r, times |r|) or 64..127 (cos r).
float64 sin_by_lut(const float64& input) {
  const float64 ax = v_f32_abs_b(input);
  int64 k = v_convert_f32_to_i32_b(v_f32_mul_b(ax, 1.27323949f), SW_RD);
  k = v_i32_add_b(k, v_i32_and_b(k, 1));
  const float64 kf = v_convert_i32_to_f32_b(k, SW_RHNE);
  float64 r = v_f32_mac_b(kf, 7.85156250e-01f, ax, SW_NEG);
  r = v_f32_mac_b(kf, 2.41875648498e-4f, r, SW_NEG);
  r = v_f32_mac_b(kf, 3.7748949774e-8f, r, SW_NEG);
  const float64 ar = v_f32_abs_b(r);
  const int64 quadrant = v_i32_and_b(v_i32_shr_b(k, 1), 3);  // k / 2 mod 4
  const bool256 use_sin = from_bool64(v_i32_cmp_eq_b(v_i32_and_b(quadrant, 1), 0));
  const uint64_float64 e = v_f32_get_lut_entry_and_interval_start_b(ar, 17, SW_LUT_SIN_COS);
  const uint64 entry = v_u32_add_vb(e.v1, 64u, 0, e.v1, to_bool64(use_sin), true);
  const float64 t = v_f32_sub_b(ar, e.v2);
  const float64 c0 = v_f32_lookup_1c(entry, e_fp32_sin_cos, SW_BV32, float64(0.0f));
  const float64_pair_t c12 = v_f32_lookup_2c(entry, e_fp32_sin_cos, SW_BV32, float64_pair_t{});
  float64 y = v_f32_mac_b(v_f32_mac_b(c12.v2, t, c12.v1), t, c0);
  y = v_f32_mul_vb(y, ar, 0, y, to_bool64(use_sin), false);
  // Sign: the input's, flipped in quadrants 2 and 3, and by r's sign where sin(r) was taken.
  float64 sign = v_f32_sel_less_f32_b(input, 0.0f, -1.0f, 1.0f);
  sign = v_f32_sel_geq_i32_b(quadrant, 2, -sign, sign);
  sign = v_f32_sel_less_f32_vb(r, 0.0f, -sign, sign, 0, sign, to_bool64(use_sin), false);
  return v_f32_mul_b(y, sign);
}

TEST(TpcLut, SinInTheStyleOfHabanasSinF32MatchesStdSin) {
  // Dense sweep of [-1024, 1024] (2^22 points), absolute error: the three-part pi/4 keeps the
  // remainder exact enough that the table's fit and the f32 roundings decide it.
  double worst_small = 0, worst = 0;
  constexpr int kSamples = 1 << 22;
  for (int k = 0; k < kSamples; k += 64) {
    float64 x;
    for (int i = 0; i < 64; ++i) x.v[i] = static_cast<float>(-1024.0 + 2048.0 * (k + i) / kSamples);
    const float64 y = sin_by_lut(x);
    for (int i = 0; i < 64; ++i) {
      const double err = std::fabs(y.v[i] - std::sin(static_cast<double>(x.v[i])));
      double& w = std::fabs(x.v[i]) <= 8 ? worst_small : worst;
      w = std::max(w, err);
    }
  }
  EXPECT_LE(worst_small, 1.2e-7);  // |x| <= 8: within 1.2e-7 of sin x (one f32 ulp of 1.0)
  EXPECT_LE(worst, 1.2e-7);        // and up to |x| = 1024
}

// ---- log in the style of Habana's log_bf16 (kl_div_fwd_bf16) ----

// log x = ln2 * (e + log2 m) with m = 1.mantissa; near 1 (classes 1 and 2: 1 <= x < 2 and
// 0.5 <= x < 1) the linear table gives log2(x) / (x - 1), which is multiplied by (x - 1).
bfloat128 log_by_lut(const bfloat128& input) {
  const short128 exponent = v_bf16_extract_exp_b(input, 0);
  const bfloat128 masked = bfloat128(v_u16_and_b(ushort128(input), ushort128(0xfffcu)));
  const ushort128_bfloat128 e = v_bf16_get_lut_entry_and_interval_start_b(masked, 0, SW_LUT_LOG);
  const ushort128 cls = v_u16_and_b(e.v1, ushort128(3u));
  // The interval start and the input's mantissa at exponent 0, or (class 2) at the start's own.
  const bfloat128 start_at_one = v_bf16_form_fp_num_b(bfloat128(1.0f), e.v2, e.v2);
  const bfloat128 start = v_bf16_sel_eq_u16_b(cls, ushort128(2u), e.v2, start_at_one);
  const bfloat128 reduced = v_bf16_form_fp_num_b(start, input, input);
  const bfloat128 t = v_bf16_sub_b(reduced, start);
  const bfloat128_pair_t c01 =
      v_bf16_lookup_2c(e.v1, e_bf16_log2_linear_interleaved_m5, SW_BV16, bfloat128_pair_t{});
  bfloat128 y = v_bf16_mac_b(c01.v2, t, c01.v1);
  const bool256 general = from_bool128(v_u16_cmp_eq_b(cls, ushort128(0u)));
  const bfloat128 xm1 = v_bf16_sub_b(reduced, bfloat128(1.0f));
  y = v_bf16_mul_vb(y, xm1, 0, y, to_bool128(general), true);
  y = v_bf16_add_vb(y, v_convert_i16_to_bf16_b(exponent, SW_RHNE), 0, y, to_bool128(general),
                    false);
  return v_bf16_mul_b(y, bfloat128(0.69314718f));
}

TEST(TpcLut, LogInTheStyleOfHabanasLogBf16MatchesStdLogOnEveryBf16) {
  // Every positive normal bf16 from 2^-126 to the largest: within 2.25 bf16 ulps of log x. The
  // form's own bf16 roundings make most of it: the coefficients, the MAC, the products with
  // x - 1 and with ln 2 (itself 0.25% off in bf16).
  double worst = 0;
  std::uint16_t worst_bits = 0;
  for (std::uint32_t first = 0x0080; first < 0x7f80; first += 128) {
    std::uint16_t b[128];
    for (int i = 0; i < 128; ++i) b[i] = static_cast<std::uint16_t>(first + i);
    const bfloat128 x = bf16_from_bits(b);
    const bfloat128 y = log_by_lut(x);
    for (int i = 0; i < 128; ++i) {
      const double exact = std::log(static_cast<double>(static_cast<float>(x.v[i])));
      if (exact == 0) {
        EXPECT_EQ(static_cast<float>(y.v[i]), 0.0f);
        continue;
      }
      const double u = ulps_bf16(static_cast<float>(y.v[i]), exact);
      if (u > worst) {
        worst = u;
        worst_bits = b[i];
      }
    }
  }
  EXPECT_LE(worst, 2.25) << "at bf16 0x" << std::hex << worst_bits;
}

// ---- the bf16 poly2 pairs (tpc_llvm EvalSpecialFunctionPass forms) ----

bfloat128 poly_bf16(const bfloat128& x, int shift, int variant, int c2c1, int c0) {
  const ushort128_bfloat128 e =
      v_bf16_get_lut_entry_and_interval_start_b(x, static_cast<std::int8_t>(shift), variant << 13);
  const bfloat128 t = v_bf16_sub_b(x, e.v2);
  const bfloat128 k0 = v_bf16_lookup_1c(e.v1, c0, SW_BV16, bfloat128(0.0f));
  const bfloat128_pair_t k12 = v_bf16_lookup_2c(e.v1, c2c1, SW_BV16, bfloat128_pair_t{});
  return v_bf16_mac_b(v_bf16_mac_b(k12.v2, t, k12.v1), t, k0);
}

TEST(TpcLut, Bf16ReciprocalAndTanhTablesMatchTheirFunctions) {
  double worst_rcp = 0, worst_tanh = 0;
  for (std::uint32_t first = 0x3f80; first < 0x4000; first += 128) {  // every bf16 in [1, 2)
    std::uint16_t b[128];
    for (int i = 0; i < 128; ++i) b[i] = static_cast<std::uint16_t>(first + i);
    const bfloat128 x = bf16_from_bits(b);
    const bfloat128 y =
        poly_bf16(x, 5, e_func_variant_default, e_bf16_rcp_poly_m2_c2c1, e_bf16_rcp_poly_m2_c0);
    for (int i = 0; i < 128; ++i)
      worst_rcp = std::max(worst_rcp,
                           ulps_bf16(static_cast<float>(y.v[i]), 1.0 / static_cast<float>(x.v[i])));
  }
  for (std::uint32_t first = 0x3c00; first < 0x4100; first += 128) {  // [2^-7, 8)
    std::uint16_t b[128];
    for (int i = 0; i < 128; ++i) b[i] = static_cast<std::uint16_t>(first + i);
    const bfloat128 x = bf16_from_bits(b);
    bfloat128 y =
        poly_bf16(x, 4, e_func_variant_tanh, e_bf16_tanh_poly2_m3_c2c1, e_bf16_tanh_poly2_m3_c0);
    const bool256 below_one = from_bool128(v_bf16_cmp_less_b(x, bfloat128(1.0f)));
    y = v_bf16_mul_vb(y, x, 0, y, to_bool128(below_one), false);
    for (int i = 0; i < 128; ++i) {
      const double xv = static_cast<float>(x.v[i]);
      if (xv >= 8) continue;
      worst_tanh = std::max(worst_tanh, ulps_bf16(static_cast<float>(y.v[i]), std::tanh(xv)));
    }
  }
  EXPECT_LE(worst_rcp, 1.0);
  EXPECT_LE(worst_tanh, 1.5);
}

TEST(TpcLut, Bf16RsqrtTableMatchesOnEveryBf16FromOneToFour) {
  double worst = 0;
  for (std::uint32_t first = 0x3f80; first < 0x4080; first += 128) {
    std::uint16_t b[128];
    for (int i = 0; i < 128; ++i) b[i] = static_cast<std::uint16_t>(first + i);
    const bfloat128 x = bf16_from_bits(b);
    const ushort128_bfloat128 e =
        v_bf16_get_lut_entry_and_interval_start_b(x, 4, SW_LUT_SQRT_RSQRT);
    const bfloat128_pair_t c = v_bf16_lookup_2c(e.v1, e_bf16_rsqrt, SW_BV16, bfloat128_pair_t{});
    const bfloat128 y = v_bf16_mac_b(c.v2, v_bf16_sub_b(x, e.v2), c.v1);
    for (int i = 0; i < 128; ++i)
      worst = std::max(worst, ulps_bf16(static_cast<float>(y.v[i]),
                                        1.0 / std::sqrt(static_cast<float>(x.v[i]))));
  }
  EXPECT_LE(worst, 1.25);
}

TEST(TpcLut, Bf16SinCosTableMatchesSinAndCosOfTheReducedArgument) {
  // Every bf16 in (0, pi/4]: sin r = r * (entry), cos r = (entry + 16), linear in t = r - start.
  double worst_sin = 0, worst_cos = 0;
  for (std::uint32_t first = 0x3c00; first < 0x3f50; first += 128) {
    std::uint16_t b[128];
    for (int i = 0; i < 128; ++i) b[i] = static_cast<std::uint16_t>(first + i);
    const bfloat128 r = bf16_from_bits(b);
    const ushort128_bfloat128 e = v_bf16_get_lut_entry_and_interval_start_b(r, 3, SW_LUT_SIN_COS);
    const bfloat128 t = v_bf16_sub_b(r, e.v2);
    for (unsigned offset : {0u, 16u}) {
      const bfloat128_pair_t c =
          v_bf16_lookup_2c(v_u16_add_b(e.v1, ushort128(offset)), e_bf16_sin_cos_linear_m4, SW_BV16,
                           bfloat128_pair_t{});
      bfloat128 y = v_bf16_mac_b(c.v2, t, c.v1);
      if (offset == 0) y = v_bf16_mul_b(y, r);
      for (int i = 0; i < 128; ++i) {
        const double rv = static_cast<float>(r.v[i]);
        if (rv > std::atan(1.0)) continue;
        const double exact = offset == 0 ? std::sin(rv) : std::cos(rv);
        double& w = offset == 0 ? worst_sin : worst_cos;
        w = std::max(w, ulps_bf16(static_cast<float>(y.v[i]), exact));
      }
    }
  }
  EXPECT_LE(worst_sin, 1.25);
  EXPECT_LE(worst_cos, 1.25);
}

// ---- the cost model and vector local memory ----

void lut_kernel(tensor in, tensor out) {
  const int5 s = get_index_space_offset();
  const int5 end = s + get_index_space_size();
  for (int i = s[0]; i < end[0]; ++i) {
    const int5 c = {i * 64, 0, 0, 0, 0};
    f32_st_tnsr_i_v(c, out, sin_by_lut(v_f32_ld_tnsr_b(c, in)));
  }
}

void lut_with_big_vlm(tensor in, tensor out) {
  local_array<float64, 65> vectors;  // 16,640 bytes: more than the 16 KB special functions leave
  vectors[0] = v_f32_ld_tnsr_b({0, 0, 0, 0, 0}, in);
  const uint64_float64 e = v_f32_get_lut_entry_and_interval_start_b(vectors[0], 16, 0);
  f32_st_tnsr_i_v({0, 0, 0, 0, 0}, out, v_f32_lookup_1c(e.v1, e_fp32_rcp, SW_BV32, 0.0f));
}

void big_vlm_only(tensor in, tensor out) {
  local_array<float64, 65> vectors;
  vectors[0] = v_f32_ld_tnsr_b({0, 0, 0, 0, 0}, in);
  f32_st_tnsr_i_v({0, 0, 0, 0, 0}, out, vectors[0]);
}

struct Fixture : tpc_test::KernelFixture {
  Fixture() : KernelFixture("lut-kernels") {}
};

TEST_F(Fixture, AKernelOfLookupsRunsWithoutTheGlueFlagAndCostsOneSlotIssueEach) {
  lib->add("sin_lut_f32", glue_for(tpc_kernel<&lut_kernel>()));
  Runtime rt(*dev, options());
  std::vector<float> xs(64 * 32);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = -20.0f + 0.02f * static_cast<float>(i);
  auto in = upload(*dev, DType::f32, Shape{static_cast<std::int64_t>(xs.size())}, xs);
  auto out = make_device_tensor(*dev, DType::f32, Shape{static_cast<std::int64_t>(xs.size())});
  const auto& rec = rt.launch("sin_lut_f32", {in}, {out});
  const auto got = download<float>(*dev, out);
  for (std::size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(got[i], std::sin(xs[i]), 3e-7) << xs[i];
  // Per member: one tensor load and two lookups on the load slot (LOOKUP_1C / _2C are load-slot
  // instructions in tpc_llvm's encoding), GET_LUT_ENTRY_AND_INTERVAL_START on the VPU.
  EXPECT_EQ(rec.metrics.at("slot.load.issues"), 32.0 * 3);
  EXPECT_EQ(rec.metrics.at("special_function_calls"), 0.0);  // no Table 2 function called
}

TEST_F(Fixture, LookupsLeaveTheVectorLocalMemoryOfSpecialFunctions) {
  auto one = [](KernelFunction fn) {
    return [fn](const gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* inst) {
      inst->indexSpaceGeometry.dims = 1;
      inst->indexSpaceGeometry.sizes[0] = 1;
      gcapi::set_kernel(inst, fn);
      return gcapi::GLUE_SUCCESS;
    };
  };
  lib->add("lut_big_vlm", one(tpc_kernel<&lut_with_big_vlm>()));
  lib->add("big_vlm", one(tpc_kernel<&big_vlm_only>()));
  Runtime rt(*dev, options());
  auto in = upload(*dev, DType::f32, Shape{64}, std::vector<float>(64, 1.5f));
  auto out = make_device_tensor(*dev, DType::f32, Shape{64});
  EXPECT_NO_THROW(rt.launch("big_vlm", {in}, {out}));
  try {
    rt.launch("lut_big_vlm", {in}, {out});
    FAIL() << "expected a DeviceFault";
  } catch (const DeviceFault& f) {
    EXPECT_NE(std::string(f.what()).find("special functions"), std::string::npos) << f.what();
  }
}

// ---- the entry form a lookup checks (InstanceContext::lut_forms) ----

// log in the style of Habana's log_bf16, 128 bf16 lanes per member.
void log_lut_kernel(tensor in, tensor out) {
  const int5 s = get_index_space_offset();
  const int5 end = s + get_index_space_size();
  for (int i = s[0]; i < end[0]; ++i) {
    const int5 c = {i * 128, 0, 0, 0, 0};
    v_bf16_st_tnsr(c, out, log_by_lut(v_bf16_ld_tnsr_b(c, in)));
  }
}

// Two functions of two forms in one program: sin (SW_LUT_SIN_COS, shift 17) and 1/x on [1, 2)
// (the default variant, shift 16); each lookup finds its own form among those the kernel used.
void sin_and_rcp_kernel(tensor in, tensor out) {
  const int5 s = get_index_space_offset();
  const int5 end = s + get_index_space_size();
  for (int i = s[0]; i < end[0]; ++i) {
    const int5 c = {i * 64, 0, 0, 0, 0};
    const float64 x = v_f32_ld_tnsr_b(c, in);
    const float64 m = v_f32_add_b(v_f32_abs_b(v_f32_mul_b(x, 0.125f)), 1.0f);  // in [1, 2)
    const float64 r = poly_f32(m, 16, e_func_variant_default, e_fp32_rcp, 0);
    f32_st_tnsr_i_v(c, out, v_f32_add_b(sin_by_lut(x), r));
  }
}

// Entries made by hand, no GET_LUT_ENTRY_AND_INTERVAL_START: checked by range only.
void hand_made_entries(tensor in, tensor out) {
  const int5 c = {0, 0, 0, 0, 0};
  const uint64 entry = v_u32_and_b(read_lane_id_4b_b(), 127u);
  const float64 c0 = v_f32_lookup_1c(entry, e_fp32_rcp, SW_BV32, float64(0.0f));
  f32_st_tnsr_i_v(c, out, v_f32_add_b(v_f32_ld_tnsr_b(c, in), c0));
}

TEST_F(Fixture, LookupsOfTheFormTheirTableWasFittedForRunInsideKernels) {
  lib->add("log_lut_bf16", glue_for(tpc_kernel<&log_lut_kernel>(),
                                    {.type = gcapi::DATA_BF16, .lanes = 128}));
  lib->add("sin_rcp_f32", glue_for(tpc_kernel<&sin_and_rcp_kernel>()));
  add_one_member("hand_made", tpc_kernel<&hand_made_entries>());
  Runtime rt(*dev, options());

  std::vector<tessera::bf16> xs(128 * 8);
  for (std::size_t i = 0; i < xs.size(); ++i)
    xs[i] = tessera::bf16(0.01f + 0.37f * static_cast<float>(i));
  const Shape bf16_shape{static_cast<std::int64_t>(xs.size())};
  auto in16 = upload(*dev, DType::bf16, bf16_shape, xs);
  auto out16 = make_device_tensor(*dev, DType::bf16, bf16_shape);
  rt.launch("log_lut_bf16", {in16}, {out16});
  const auto logs = download<tessera::bf16>(*dev, out16);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double exact = std::log(static_cast<double>(static_cast<float>(xs[i])));
    if (exact != 0) {
      EXPECT_LE(ulps_bf16(static_cast<float>(logs[i]), exact), 2.25) << static_cast<float>(xs[i]);
    }
  }

  std::vector<float> fs(64 * 4);
  for (std::size_t i = 0; i < fs.size(); ++i) fs[i] = -6.0f + 0.05f * static_cast<float>(i);
  const Shape f32_shape{static_cast<std::int64_t>(fs.size())};
  auto in = upload(*dev, DType::f32, f32_shape, fs);
  auto out = make_device_tensor(*dev, DType::f32, f32_shape);
  rt.launch("sin_rcp_f32", {in}, {out});
  const auto got = download<float>(*dev, out);
  for (std::size_t i = 0; i < fs.size(); ++i) {
    const double m = 1.0 + std::fabs(fs[i] * 0.125);
    EXPECT_NEAR(got[i], std::sin(fs[i]) + 1.0 / m, 4e-7) << fs[i];
  }

  // Lane i reads entry i of e_fp32_rcp: C0 of 1/x on [1 + i/128, 1 + (i + 1)/128).
  rt.launch("hand_made", {in}, {out});
  const auto hand = download<float>(*dev, out);
  for (int i = 0; i < 64; ++i)
    EXPECT_NEAR(hand[i] - fs[i], 1.0 / (1.0 + i / 128.0), 1e-6) << i;
}

// ---- misuse ----

std::string message_of(auto&& call) {
  try {
    call();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no UserError)";
}

TEST(TpcLut, MisuseIsAUserErrorThatSaysWhatToChange) {
  const float64 x(1.5f);
  const uint64 entry(3u);
  const ushort128 entry16(3u);
  EXPECT_NE(message_of([&] {
              v_f32_get_lut_entry_and_interval_start_b(x, 16, 5 << 13);
            }).find("FUNC_VARIANT 5"),
            std::string::npos);
  EXPECT_NE(
      message_of([&] { v_f32_get_lut_entry_and_interval_start_b(x, 24, 0); }).find("shift 24"),
      std::string::npos);
  EXPECT_NE(
      message_of([&] { v_f32_get_lut_entry_and_interval_start_b(x, 16, 1); }).find("switches"),
      std::string::npos);
  EXPECT_NE(message_of([&] { v_f32_lookup_1c(entry, 999, SW_BV32, x); }).find("function id 999"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              v_f32_lookup_1c(entry, e_i16_tanh, SW_BV32, x);
            }).find("no table for e_i16_tanh"),
            std::string::npos);
  EXPECT_NE(message_of([&] { v_f32_lookup_1c(entry, e_fp32_rcp, SW_BV16, x); }).find("SW_BV16"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              v_f32_lookup_1c(entry, e_fp32_rcp, SW_BV32 | SW_UPPER_HALF, x);
            }).find("SW_UPPER_HALF"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              v_f32_lookup_1c(entry, e_bf16_log2_linear_interleaved_m5, SW_BV32, x);
            }).find("16-bit table"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              v_bf16_lookup_2c(entry16, e_bf16_rcp_poly_m2_c0, SW_BV16, bfloat128_pair_t{});
            }).find("one coefficient"),
            std::string::npos);
  EXPECT_NE(
      message_of([&] { v_f32_lookup_1c(uint64(128u), e_fp32_rcp, SW_BV32, x); }).find("entry 128"),
      std::string::npos);
  // A disabled lookup reads nothing: no entry check, the income comes back.
  const float64 kept = v_f32_lookup_1c(uint64(100000u), e_fp32_rcp, SW_BV32, x, false);
  EXPECT_EQ(kept.v[0], 1.5f);
}

TEST(TpcLut, IntegerViewsReadTheSameWords) {
  const uint64 entry(5u);
  const float64 f = v_f32_lookup_1c(entry, e_fp32_rcp, SW_BV32, float64(0.0f));
  const uint64 u = v_u32_lookup_1c(entry, e_fp32_rcp, SW_BV32, uint64(0u));
  const int64 s = v_i32_lookup_1c(entry, e_fp32_rcp, SW_BV32, int64(0));
  EXPECT_EQ(u.v[0], bits_of(f.v[0]));
  EXPECT_EQ(static_cast<std::uint32_t>(s.v[0]), bits_of(f.v[0]));
  // 1 / x at the interval start 1 + 5/128 is the entry's C0, to the fit's accuracy.
  EXPECT_NEAR(f.v[0], 1.0 / (1.0 + 5.0 / 128), 1e-7);
}

}  // namespace
