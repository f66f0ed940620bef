// TPC-C intrinsics (spec 000 §2.6) on their own: arithmetic, predication, compare/select,
// moves, logic and shifts, conversions with rounding modes, reductions, lane ids, special
// functions (ulps against libm in double).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tessera/targets/tpc/api/tpc.h"

using namespace tessera;
using namespace tessera::tpc;

namespace {

template <typename V>
V iota(double scale = 1, double offset = 0) {
  V r;
  for (int i = 0; i < V::lanes; ++i)
    r[i] = static_cast<typename V::lane_type>(
        static_cast<lane_math_t<typename V::lane_type>>(offset + scale * i));
  return r;
}

}  // namespace

TEST(TpcIntrinsics, ArithmeticForEveryDtype) {
  const float64 a = iota<float64>(0.5, -4), b = iota<float64>(-1, 3);
  const float64 s = v_f32_add_v_v(a, b), d = v_f32_sub_v_s(a, 1.5f), m = v_f32_mul_v_v(a, b);
  const float64 mac = v_f32_mac_v_v(a, b, float64(1.0f));
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(s[i], a[i] + b[i]);
    EXPECT_EQ(d[i], a[i] - 1.5f);
    EXPECT_EQ(m[i], a[i] * b[i]);
    EXPECT_EQ(mac[i], 1.0f + a[i] * b[i]);
    EXPECT_EQ(v_f32_min_v_v(a, b)[i], std::min(a[i], b[i]));
    EXPECT_EQ(v_f32_max_v_v(a, b)[i], std::max(a[i], b[i]));
    EXPECT_EQ(v_f32_abs_v(a)[i], std::fabs(a[i]));
    EXPECT_EQ(v_f32_neg_v(a)[i], -a[i]);
    EXPECT_EQ((a + b)[i], s[i]);
  }
  const bfloat128 h = iota<bfloat128>(0.25, -8);
  const bfloat128 hs = v_bf16_add_v_s(h, 1.0f);
  for (int i = 0; i < 128; ++i)
    EXPECT_EQ(static_cast<float>(hs[i]), static_cast<float>(h[i]) + 1.0f);
  const int64 x = iota<int64>(1000, -30000);
  const int64 xm = v_i32_mul_v_s(x, 3);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(xm[i], x[i] * 3);
  // Integer arithmetic wraps.
  const char256 c = v_i8_add_v_s(char256(static_cast<std::int8_t>(120)), 10);
  EXPECT_EQ(c[0], static_cast<std::int8_t>(-126));
  const uchar256 u = v_u8_sub_v_s(uchar256(static_cast<std::uint8_t>(3)), 5);
  EXPECT_EQ(u[255], 254);
  const short128 sh = v_i16_max_v_s(iota<short128>(1, -64), 0);
  EXPECT_EQ(sh[0], 0);
  EXPECT_EQ(sh[127], 63);
  EXPECT_EQ(v_u16_min_v_s(iota<ushort128>(), 7)[100], 7);
  EXPECT_EQ(v_u32_add_v_v(iota<uint64>(), iota<uint64>())[63], 126u);
  EXPECT_EQ(v_i16_abs_v(short128(static_cast<std::int16_t>(-5)))[3], 5);
  EXPECT_EQ(v_i8_neg_v(char256(static_cast<std::int8_t>(5)))[3], -5);
}

TEST(TpcIntrinsics, ScalarAndVectorPredicationWithPolarity) {
  const float64 a(2.0f), b(3.0f), income(-1.0f);
  // predicate != polarity: the operation runs.
  EXPECT_EQ(v_f32_mul_v_v_b(a, b, income, true, false)[0], 6.0f);
  EXPECT_EQ(v_f32_mul_v_v_b(a, b, income, true, true)[0], -1.0f);
  EXPECT_EQ(v_f32_mul_v_v_b(a, b, income, false, true)[0], 6.0f);
  EXPECT_EQ(v_f32_mul_v_v_b(a, b, false, false)[0], 0.0f);  // no income: zero
  const uint64 lane = read_lane_id_4b_b();
  const bool256 mask = bv_u32_cmp_eq_v_s(lane, 5u);
  const float64 moved = v_f32_mov_s_vb(9.0f, income, mask, 0);
  const float64 inverted = v_f32_mov_s_vb(9.0f, income, mask, 1);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(moved[i], i == 5 ? 9.0f : -1.0f);
    EXPECT_EQ(inverted[i], i == 5 ? -1.0f : 9.0f);
  }
  // A mask of one width drives another: byte lanes 20..23 are f32 lane 5.
  for (int bit = 0; bit < 256; ++bit) EXPECT_EQ(mask[bit], bit >= 20 && bit < 24) << bit;
  const float64 added = v_f32_add_v_v_vb(a, b, income, mask, false);
  EXPECT_EQ(added[5], 5.0f);
  EXPECT_EQ(added[4], -1.0f);
  EXPECT_EQ(v_f32_mov_v_b(a, income, false, false)[0], -1.0f);
}

TEST(TpcIntrinsics, CompareSelectAndBoolLogic) {
  const float64 a = iota<float64>(), b(31.5f);
  const bool256 less = bv_f32_cmp_less_v_v(a, b);
  const bool256 geq = bv_f32_cmp_geq_v_s(a, 31.5f);
  EXPECT_EQ(less, ~geq);
  EXPECT_EQ(bv_and_bv_bv(less, geq), bool256(static_cast<unsigned char>(0)));
  EXPECT_EQ(bv_or_bv_bv(less, geq), bool256(static_cast<unsigned char>(0xff)));
  EXPECT_EQ(bv_xor_bv_bv(less, less), bool256());
  const float64 sel = v_f32_sel_less_v_s_v_v(a, 31.5f, float64(1.0f), float64(2.0f));
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(sel[i], i < 32 ? 1.0f : 2.0f);
    EXPECT_EQ(bv_f32_cmp_eq_v_s(a, 7.0f).lane<64>(i), i == 7);
    EXPECT_EQ(bv_f32_cmp_neq_v_s(a, 7.0f).lane<64>(i), i != 7);
    EXPECT_EQ(bv_f32_cmp_leq_v_s(a, 7.0f).lane<64>(i), i <= 7);
    EXPECT_EQ(bv_f32_cmp_grt_v_s(a, 7.0f).lane<64>(i), i > 7);
  }
  // Disabled predicated compare: all false (or the income).
  EXPECT_EQ(bv_u16_cmp_leq_v_v_b(iota<ushort128>(), iota<ushort128>(), false, false), bool256());
  EXPECT_EQ(bv_f32_cmp_leq_v_s_vb(a, 3.0f, bool256(), false), bool256());
  // {0xff} sets every bit (spec 000 §2.6.4); other patterns repeat per byte.
  const bool256 all = {0xff};
  const bool256 alternate(static_cast<unsigned char>(0x55));
  for (int i = 0; i < 256; ++i) {
    EXPECT_TRUE(all[i]);
    EXPECT_EQ(alternate[i], i % 2 == 0);
  }
  const char256 ca = iota<char256>(1, -128);
  EXPECT_EQ(v_i8_sel_grt_v_s_v_v(ca, 0, ca, char256(static_cast<std::int8_t>(0)))[200], 72);
}

TEST(TpcIntrinsics, LogicAndShifts) {
  const int64 a = iota<int64>(1, -32);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(v_i32_and_v_s(a, 0xF)[i], a[i] & 0xF);
    EXPECT_EQ(v_i32_or_v_s(a, 0x100)[i], a[i] | 0x100);
    EXPECT_EQ(v_i32_xor_v_v(a, a)[i], 0);
    EXPECT_EQ(v_i32_not_v(a)[i], ~a[i]);
    // SHR is logical on signed lanes too (Habana's tpc-special.h log_f32 relies on it)
    EXPECT_EQ(v_i32_shr_v_s(a, 2)[i],
              static_cast<std::int32_t>(static_cast<std::uint32_t>(a[i]) >> 2));
    EXPECT_EQ(v_i32_shr_b(a, 31)[i], a[i] < 0 ? 1 : 0);
    EXPECT_EQ((a >> 31)[i], a[i] < 0 ? -1 : 0);  // the C operator is arithmetic
    EXPECT_EQ(v_i32_shl_v_s(a, 3)[i],
              static_cast<std::int32_t>(static_cast<std::uint32_t>(a[i]) << 3));
  }
  EXPECT_EQ(v_u32_shr_v_s(uint64(0x80000000u), 31)[0], 1u);
  EXPECT_EQ(v_u8_shl_v_s(uchar256(static_cast<std::uint8_t>(0x81)), 1)[9], 0x02);
  EXPECT_EQ(v_i16_shr_v_s(short128(static_cast<std::int16_t>(-256)), 4)[0], 0x0FF0);
  EXPECT_EQ(v_u16_xor_v_s(ushort128(static_cast<std::uint16_t>(0xF0F0)), 0xFFFF)[0], 0x0F0F);
  EXPECT_EQ(v_i8_not_v(char256(static_cast<std::int8_t>(0)))[0], -1);
  EXPECT_EQ(v_u8_and_v_v(uchar256(static_cast<std::uint8_t>(0x3C)),
                         uchar256(static_cast<std::uint8_t>(0x0F)))[1],
            0x0C);
}

TEST(TpcIntrinsics, ConversionsRoundBySwitchAndSaturate) {
  float64 f;
  const float values[] = {2.5f, -2.5f, 1.2f, -1.7f, 3e9f, -3e9f, std::nanf("")};
  for (int i = 0; i < 7; ++i) f[i] = values[i];
  const int64 rne = v_convert_f32_to_i32_v(f, SW_RHNE);
  const int64 rz = v_convert_f32_to_i32_v(f, SW_RZ);
  const int64 ru = v_convert_f32_to_i32_v(f, SW_RU);
  const int64 rd = v_convert_f32_to_i32_v(f, SW_RD);
  const int expect_rne[] = {2, -2, 1, -2, 2147483647, -2147483647 - 1, 0};
  const int expect_rz[] = {2, -2, 1, -1, 2147483647, -2147483647 - 1, 0};
  const int expect_ru[] = {3, -2, 2, -1, 2147483647, -2147483647 - 1, 0};
  const int expect_rd[] = {2, -3, 1, -2, 2147483647, -2147483647 - 1, 0};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(rne[i], expect_rne[i]) << i;
    EXPECT_EQ(rz[i], expect_rz[i]) << i;
    EXPECT_EQ(ru[i], expect_ru[i]) << i;
    EXPECT_EQ(rd[i], expect_rd[i]) << i;
  }
  // Narrowing integer conversions saturate.
  const char256 c = v_convert_i32_to_i8_v(int64(300));
  EXPECT_EQ(c[0], 127);
  EXPECT_EQ(c[252], 127);  // lane 0 of a 4:1 narrowing writes every 4th lane
  EXPECT_EQ(c[1], 0);      // the others keep the income (zero)
  EXPECT_EQ(v_convert_i32_to_u8_v(int64(-5))[0], 0);
  EXPECT_EQ(v_convert_u32_to_i32_v(uint64(0xFFFFFFFFu))[0], 2147483647);
  // f32 -> bf16: nearest even, toward zero, up, down; lane groups of the wider vector.
  const float64 g(1.00390625f);  // 1 + 2^-8: halfway between two bf16 values
  EXPECT_EQ(static_cast<float>(v_convert_f32_to_bf16_v(g, SW_RHNE)[0]), 1.0f);
  EXPECT_EQ(static_cast<float>(v_convert_f32_to_bf16_v(g, SW_RU)[0]), 1.0078125f);
  EXPECT_EQ(static_cast<float>(v_convert_f32_to_bf16_v(float64(-1.00390625f), SW_RD)[0]),
            -1.0078125f);
  EXPECT_EQ(static_cast<float>(v_convert_f32_to_bf16_v(float64(1.0078f), SW_RZ)[0]), 1.0f);
  // Subnormal bf16 results keep bf16's step of 2^-133 in every rounding mode.
  const float tiny = 0x1.03p-130f;  // 2^-130 + 3 * 2^-138: between 2^-130 and 2^-130 + 2^-133
  EXPECT_EQ(static_cast<float>(v_convert_f32_to_bf16_v(float64(tiny), SW_RZ)[0]), 0x1p-130f);
  EXPECT_EQ(static_cast<float>(v_convert_f32_to_bf16_v(float64(tiny), SW_RU)[0]),
            0x1p-130f + 0x1p-133f);
  EXPECT_EQ(static_cast<float>(v_convert_f32_to_bf16_v(float64(-tiny), SW_RD)[0]),
            -(0x1p-130f + 0x1p-133f));
  const bfloat128 hi = v_convert_f32_to_bf16_v(float64(2.0f), SW_RHNE, 1, bfloat128(5.0f));
  EXPECT_EQ(static_cast<float>(hi[0]), 5.0f);  // lane 1: the odd lanes
  EXPECT_EQ(static_cast<float>(hi[1]), 2.0f);
  EXPECT_EQ(static_cast<float>(hi[127]), 2.0f);
  const float64 widened = v_convert_bf16_to_f32_v(hi, SW_RHNE, 1);
  EXPECT_EQ(widened[0], 2.0f);
  // i32 -> f32 with a rounding mode: 2^24 + 1 is not representable.
  const int64 big(16777217);
  EXPECT_EQ(v_convert_i32_to_f32_v(big, SW_RHNE)[0], 16777216.0f);
  EXPECT_EQ(v_convert_i32_to_f32_v(big, SW_RU)[0], 16777218.0f);
  EXPECT_EQ(v_convert_i16_to_f32_v(iota<short128>(1, -1), SW_RHNE, 1)[0], 0.0f);     // lane 1
  EXPECT_EQ(v_convert_i16_to_f32_v(iota<short128>(1, -1), SW_RHNE, 1)[63], 126.0f);  // lane 127
  EXPECT_EQ(v_convert_f32_to_u8_v(float64(300.0f))[0], 255);
  EXPECT_EQ(v_convert_f32_to_i16_v(float64(-40000.0f))[0], -32768);
}

TEST(TpcIntrinsics, ReductionsBroadcastTheirResult) {
  const float64 a = iota<float64>(1, 1);  // 1..64
  EXPECT_EQ(v_f32_reduce_add(a)[17], 2080.0f);
  EXPECT_EQ(v_f32_reduce_max(a)[0], 64.0f);
  EXPECT_EQ(v_f32_reduce_min(a)[63], 1.0f);
  EXPECT_EQ(v_f32_reduce_mul(float64(2.0f))[0], std::ldexp(1.0f, 64));
  float64 b = a;
  b[37] = -5.0f;
  const auto amin = v_f32_reduce_argmin(b);
  EXPECT_EQ(amin.v1[0], 37u);
  EXPECT_EQ(amin.v2[9], -5.0f);
  const auto amax = v_f32_reduce_argmax(b);
  EXPECT_EQ(amax.v1[3], 63u);
  EXPECT_EQ(amax.v2[3], 64.0f);
  int64 c = iota<int64>(-1);
  EXPECT_EQ(v_i32_reduce_add(c)[0], -2016);
  EXPECT_EQ(v_i32_reduce_max(c)[0], 0);
  EXPECT_EQ(v_i32_reduce_argmin(c).v1[0], 63u);
  EXPECT_EQ(v_i32_reduce_argmax(c).v1[0], 0u);
  EXPECT_EQ(static_cast<float>(v_bf16_reduce_add(bfloat128(0.5f))[0]), 64.0f);
  EXPECT_EQ(static_cast<float>(v_bf16_reduce_min(iota<bfloat128>(1, -3))[0]), -3.0f);
  EXPECT_EQ(static_cast<float>(v_fb16_reduce_max(iota<bfloat128>(1, -3))[0]), 124.0f);
  EXPECT_EQ(v_i16_reduce_min(iota<short128>(-1))[0], -127);
  EXPECT_EQ(v_i16_reduce_max(iota<short128>(-1))[0], 0);
  EXPECT_EQ(v_i8_reduce_min(iota<char256>(1, -128))[0], -128);
  EXPECT_EQ(v_i8_reduce_max(iota<char256>(1, -128))[0], 127);
  EXPECT_EQ(v_u8_reduce_min(iota<uchar256>())[0], 0);
  EXPECT_EQ(v_u8_reduce_max(iota<uchar256>())[0], 255);
}

TEST(TpcIntrinsics, LaneIds) {
  const uint64 l4 = read_lane_id_4b_b();
  const ushort128 l2 = read_lane_id_2b_b();
  const uchar256 l1 = read_lane_id_1b_b();
  for (int i = 0; i < 64; ++i) EXPECT_EQ(l4[i], static_cast<unsigned>(i));
  for (int i = 0; i < 128; ++i) EXPECT_EQ(l2[i], i);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(l1[i], i);
  const uint64 macro = V_LANE_ID_32;
  EXPECT_EQ(macro[63], 63u);
}

namespace {

double ulps(float got, double exact) {
  if (std::isnan(exact)) return std::isnan(got) ? 0 : 1e9;
  if (std::isinf(exact)) return got == static_cast<float>(exact) ? 0 : 1e9;
  const float near = static_cast<float>(exact);
  const float up = std::nextafter(near, std::numeric_limits<float>::infinity());
  const double ulp = std::fabs(static_cast<double>(up) - static_cast<double>(near));
  return std::fabs(static_cast<double>(got) - exact) / ulp;
}

template <typename F, typename R>
double max_ulps(F f, R ref, double lo, double hi) {
  double worst = 0;
  for (int block = 0; block < 64; ++block) {
    float64 x;
    for (int i = 0; i < 64; ++i)
      x[i] = static_cast<float>(lo + (hi - lo) * (block * 64 + i) / 4095.0);
    const float64 y = f(x);
    for (int i = 0; i < 64; ++i)
      worst = std::max(worst, ulps(y[i], ref(static_cast<double>(x[i]))));
  }
  return worst;
}

}  // namespace

TEST(TpcIntrinsics, SpecialFunctionsWithinOneUlpOfLibm) {
  struct Case {
    const char* name;
    float64 (*f)(const float64&);
    double (*ref)(double);
    double lo, hi;
  };
  const Case cases[] = {
      {"reciprocal", v_reciprocal_f32, [](double x) { return 1 / x; }, 0.01, 100},
      {"sqrt", v_sqrt_f32, [](double x) { return std::sqrt(x); }, 0, 1e6},
      {"exp", v_exp_f32, [](double x) { return std::exp(x); }, -80, 80},
      {"exp_cephes", v_exp_cephes_f32, [](double x) { return std::exp(x); }, -20, 20},
      {"log", v_log_f32, [](double x) { return std::log(x); }, 1e-6, 1e6},
      {"log2", v_log2_f32, [](double x) { return std::log2(x); }, 1e-6, 1e6},
      {"tanh", v_tanh_f32, [](double x) { return std::tanh(x); }, -10, 10},
      {"pow2", v_pow2_f32, [](double x) { return std::exp2(x); }, -100, 100},
      {"rsqrt", v_rsqrt_f32, [](double x) { return 1 / std::sqrt(x); }, 1e-4, 1e4},
      {"sin", v_sin_f32, [](double x) { return std::sin(x); }, -10, 10},
      {"cos", v_cos_f32, [](double x) { return std::cos(x); }, -10, 10},
      {"tan", v_tan_f32, [](double x) { return std::tan(x); }, -1.5, 1.5},
      {"sigmoid", v_sigmoid_f32, [](double x) { return 1 / (1 + std::exp(-x)); }, -20, 20},
      {"asin", v_asin_cephes_f32, [](double x) { return std::asin(x); }, -1, 1},
      {"acos", v_acos_cephes_f32, [](double x) { return std::acos(x); }, -1, 1},
      {"atan", v_atan_cephes_f32, [](double x) { return std::atan(x); }, -50, 50},
      {"asinh", v_asinh_f32, [](double x) { return std::asinh(x); }, -50, 50},
      {"acosh", v_acosh_f32, [](double x) { return std::acosh(x); }, 1, 50},
      {"atanh", v_atanh_f32, [](double x) { return std::atanh(x); }, -0.99, 0.99},
      {"sinh", v_sinh_cephes_f32, [](double x) { return std::sinh(x); }, -20, 20},
      {"cosh", v_cosh_cephes_f32, [](double x) { return std::cosh(x); }, -20, 20},
      {"expm1", v_expm1_f32, [](double x) { return std::expm1(x); }, -5, 5},
      {"mod", v_mod_f32, [](double x) { return x - std::trunc(x); }, -10, 10},
  };
  for (const auto& c : cases) EXPECT_LE(max_ulps(c.f, c.ref, c.lo, c.hi), 1.0) << c.name;
  const double pow_err =
      max_ulps([](const float64& x) { return v_pow_f32(x, float64(1.7f)); },
               [](double x) { return std::pow(x, static_cast<double>(1.7f)); }, 0.01, 50);
  EXPECT_LE(pow_err, 1.0);
  const double div_err = max_ulps([](const float64& x) { return v_div_f32(float64(3.0f), x); },
                                  [](double x) { return 3.0 / x; }, 0.5, 50);
  EXPECT_LE(div_err, 1.0);
}

TEST(TpcIntrinsics, FixedPointSpecialFunctions) {
  // i8 in Q4.3: 8 is 1.0; tanh(1) = 0.7616 in Q0.7 is 97.
  EXPECT_EQ(v_i8_tanh(char256(static_cast<std::int8_t>(8)))[0], 97);
  EXPECT_EQ(v_i8_sigmoid(char256(static_cast<std::int8_t>(0)))[0], 64);
  EXPECT_EQ(v_i16_exp(short128(static_cast<std::int16_t>(0)))[0], 32767);  // 1.0 saturates
  EXPECT_EQ(v_i16_tanh(short128(static_cast<std::int16_t>(-2048)))[0],
            static_cast<std::int16_t>(std::nearbyint(std::tanh(-1.0) * 32768)));
  EXPECT_EQ(v_u16_reciprocal(ushort128(static_cast<std::uint16_t>(0x6000)))[0],
            static_cast<std::uint16_t>(std::nearbyint(32768 / 0.75)));
}
