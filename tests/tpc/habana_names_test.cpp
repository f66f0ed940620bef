// The intrinsics the sweep over Habana's public TPC kernels added (POPCNT, CONVERT_INT32 /
// CONVERT_INT16 with shift, the legacy MOV_GROUP and CONVERT spellings of tpc-defs.h, vector
// casts), each checked against a plain loop, and their unknown switches as UserErrors.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "tessera/core/error.h"
#include "tessera/targets/tpc/api/tpc.h"
#include "tpc_test_util.h"

using namespace tessera;
using namespace tessera::tpc;

namespace {

using tpc_test::user_error_of;

// Bits set in the low `width` bits of x, counted one by one.
int ones_of(std::uint32_t x, int width) {
  int n = 0;
  for (int b = 0; b < width; ++b) n += static_cast<int>((x >> b) & 1u);
  return n;
}

// x / 2^shift rounded in mode rm (a left shift when negative), saturated to [lo, hi].
long long shifted_reference(long long x, int shift, int rm, long long lo, long long hi) {
  const double q = std::ldexp(static_cast<double>(x), -shift);
  double r = 0;
  switch (rm) {
    case e_round_down:
      r = std::floor(q);
      break;
    case e_round_up:
      r = std::ceil(q);
      break;
    case e_round_zero:
      r = std::trunc(q);
      break;
    default:
      r = std::nearbyint(q);  // the default FP mode: ties to even
  }
  if (r < static_cast<double>(lo)) return lo;
  if (r > static_cast<double>(hi)) return hi;
  return static_cast<long long>(r);
}

}  // namespace

TEST(TpcHabanaNames, PopcntCountsOnesOrZerosPerElement) {
  int64 a;
  for (int i = 0; i < 64; ++i) a[i] = static_cast<std::int32_t>(0x9e3779b9u * static_cast<unsigned>(i + 1));
  const uchar256 ones = v_i32_popcnt_b(a, SW_COUNT_ONES);
  const uchar256 zeros = v_i32_popcnt_b(a);  // SW_COUNT_ZEROS is 0
  for (int i = 0; i < 64; ++i) {
    const int n = ones_of(static_cast<std::uint32_t>(a[i]), 32);
    EXPECT_EQ(ones[4 * i], n) << i;
    EXPECT_EQ(zeros[4 * i], 32 - n) << i;
    for (int k = 1; k < 4; ++k) EXPECT_EQ(ones[4 * i + k], 0) << i;
  }
  char256 b;
  for (int i = 0; i < 256; ++i) b[i] = static_cast<std::int8_t>(i * 37);
  const uchar256 b_ones = v_i8_popcnt_b(b, SW_COUNT_ONES);
  for (int i = 0; i < 256; ++i)
    EXPECT_EQ(b_ones[i], ones_of(static_cast<std::uint8_t>(b[i]), 8)) << i;
  bfloat128 h;
  for (int i = 0; i < 128; ++i) h[i] = tessera::bf16(static_cast<float>(i) - 60.5f);
  const uchar256 h_ones = v_bf16_popcnt_b(h, SW_COUNT_ONES);
  for (int i = 0; i < 128; ++i) {
    EXPECT_EQ(h_ones[2 * i], ones_of(h[i].bits, 16)) << i;
    EXPECT_EQ(h_ones[2 * i + 1], 0) << i;
  }
  EXPECT_EQ(s_u16_popcnt(0xf0f1, SW_COUNT_ONES), 9);
  EXPECT_EQ(s_f32_popcnt(1.0f, SW_COUNT_ZEROS), 32 - ones_of(0x3f800000u, 32));
}

TEST(TpcHabanaNames, PopcntPredicationKeepsIncome) {
  uchar256 income(static_cast<unsigned char>(0xab));
  const uchar256 off = v_u8_popcnt_b(uchar256(7), SW_COUNT_ONES, income, false, false);
  EXPECT_EQ(off[0], 0xab);
  // Lanes of a vector predicate: only even i32 lanes count.
  int64 a(0xff);
  int64 parity;
  for (int i = 0; i < 64; ++i) parity[i] = i % 2;
  const bool64 even = v_i32_cmp_eq_b(parity, int64(0));
  const uchar256 r = v_i32_popcnt_vb(a, SW_COUNT_ONES, income, even);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(r[4 * i], i % 2 == 0 ? 8 : 0xab) << i;
}

TEST(TpcHabanaNames, PopcntUnknownSwitchIsAUserError) {
  const std::string msg = user_error_of([] { (void)v_i32_popcnt_b(int64(1), 0x2); });
  EXPECT_NE(msg.find("v_i32_popcnt_b"), std::string::npos) << msg;
  EXPECT_NE(msg.find("0x2"), std::string::npos) << msg;
}

TEST(TpcHabanaNames, ConvertInt32ShiftsRoundsAndSaturates) {
  int64 x;
  for (int i = 0; i < 64; ++i) x[i] = (i % 2 ? -1 : 1) * (i * i * 523 + i * 7 + (i % 5) * 4);
  x[0] = 12;   // 12 / 8 = 1.5: ties go to even (2)
  x[1] = -20;  // -20 / 8 = -2.5
  x[2] = 0x7fffffff;
  for (const int rm : {e_round_half_ne, e_round_zero, e_round_up, e_round_down}) {
    for (const int shift : {0, 3, -2}) {
      const char256 income(static_cast<signed char>(-7));
      for (int lane = 0; lane < 4; ++lane) {
        const char256 r = v_convert_int32_to_i8_b(x, shift, lane, rm << 16, income);
        for (int i = 0; i < 256; ++i) {
          const long long expected =
              i % 4 == lane ? shifted_reference(x[i / 4], shift, rm, -128, 127) : -7;
          ASSERT_EQ(r[i], expected) << "rm " << rm << " shift " << shift << " lane " << lane
                                    << " i " << i;
        }
      }
      const short128 s = v_convert_int32_to_i16_b(x, shift, 1, rm << 16, short128());
      for (int i = 0; i < 64; ++i) {
        ASSERT_EQ(s[2 * i + 1], shifted_reference(x[i], shift, rm, -32768, 32767)) << i;
        ASSERT_EQ(s[2 * i], 0) << i;
      }
      ASSERT_EQ(s_convert_int32_to_i16(x[5], shift, rm << 16),
                shifted_reference(x[5], shift, rm, -32768, 32767));
    }
  }
}

TEST(TpcHabanaNames, ConvertShiftPerLaneAndUnsignedAndInt16) {
  int64 x;
  char256 shift;
  for (int i = 0; i < 64; ++i) {
    x[i] = 1000 + 37 * i;
    shift[4 * i] = static_cast<std::int8_t>(i % 9);  // element i's shift is its own low byte
  }
  const short128 r = v_convert_int32_to_i16_b(x, shift, 0, SW_RD, short128());
  for (int i = 0; i < 64; ++i) EXPECT_EQ(r[2 * i], (1000 + 37 * i) >> (i % 9)) << i;

  uint64 u;
  for (int i = 0; i < 64; ++i) u[i] = 0xfffffff0u - static_cast<std::uint32_t>(i) * 0x01000000u;
  const uchar256 ub = v_convert_uint32_to_u8_b(u, 24, 3, SW_RZ, uchar256());
  for (int i = 0; i < 64; ++i) EXPECT_EQ(ub[4 * i + 3], (u[i] >> 24)) << i;

  short128 h;
  for (int i = 0; i < 128; ++i) h[i] = static_cast<std::int16_t>((i - 64) * 97);
  const char256 c = v_convert_int16_to_i8_b(h, 2, 1, SW_RHNE, char256());
  for (int i = 0; i < 128; ++i)
    EXPECT_EQ(c[2 * i + 1], shifted_reference(h[i], 2, e_round_half_ne, -128, 127)) << i;
  EXPECT_EQ(s_convert_uint16_to_u8(0x1234, 4, SW_RU), 0xff);  // 0x123.4 saturates
  EXPECT_EQ(s_convert_int16_to_i8(-300, 2, SW_RU, 0, true, false), -75);
}

TEST(TpcHabanaNames, ConvertShiftLegacySpellingsAreTheSameInstruction) {
  int64 x;
  for (int i = 0; i < 64; ++i) x[i] = 3 * i - 90;
  // tpc-defs.h: (value, shift, income, e_round_* mode, lane); _v_s and _v_v differ only in the
  // shift operand.
  const short128 legacy = v_convert_int32_to_i16_v_s(x, 1, short128(), e_round_down, 1);
  const short128 current = v_convert_int32_to_i16_b(x, 1, 1, SW_RD, short128());
  EXPECT_TRUE(std::memcmp(legacy.v, current.v, sizeof legacy.v) == 0);
  const char256 legacy8 = v_convert_int32_to_i8_v_s_b(x, -1, 0, 0, 2, true, false);
  const char256 current8 = v_convert_int32_to_i8_b(x, -1, 2, SW_RHNE, char256());
  EXPECT_TRUE(std::memcmp(legacy8.v, current8.v, sizeof legacy8.v) == 0);
  const char256 skipped = v_convert_int32_to_i8_v_v_b(x, char256(), char256(5), 0, 0, false, false);
  EXPECT_EQ(skipped[0], 5);
}

TEST(TpcHabanaNames, ConvertShiftRejectsWhatTheInstructionDoesNotTake) {
  const int64 x(1);
  std::string msg = user_error_of([&] { (void)v_convert_int32_to_i8_b(x, 0, 0, SW_RHAZ, char256()); });
  EXPECT_NE(msg.find("v_convert_int32_to_i8_b"), std::string::npos) << msg;
  msg = user_error_of([&] { (void)v_convert_int32_to_i16_b(x, 0, 0, SW_SR, short128()); });
  EXPECT_NE(msg.find("stochastic"), std::string::npos) << msg;
  msg = user_error_of([&] { (void)v_convert_int32_to_i16_b(x, 0, 2, SW_RHNE, short128()); });
  EXPECT_NE(msg.find("lane 2"), std::string::npos) << msg;
  msg = user_error_of([&] { (void)v_convert_int32_to_i16_b(x, 0, 0, SW_CLIP_FP, short128()); });
  EXPECT_NE(msg.find("0x100000"), std::string::npos) << msg;
  msg = user_error_of([&] { (void)v_convert_int16_to_i8_v_s(short128(1), 0, char256(), 9, 0); });
  EXPECT_NE(msg.find("e_round_"), std::string::npos) << msg;
}

TEST(TpcHabanaNames, LegacyMovGroupIsMovGroupWithPackedSwitches) {
  float64 a;
  for (int i = 0; i < 64; ++i) a[i] = static_cast<float>(i);
  const float64 income(-1.0f);
  // tpc-defs.h: v_f32_mov_group_v(a, b, income, groups, dual_groups) packs (d << 2) | g.
  const float64 legacy = v_f32_mov_group_v(a, 0xffffffff, income, 0b01, 0b0101);
  for (int i = 0; i < 64; ++i) {
    const int dg = i / 16, j = i % 16;
    const bool written = (dg == 0 || dg == 2) && j < 8;  // group 0 of dual groups 0 and 2
    EXPECT_EQ(legacy[i], written ? static_cast<float>(dg * 16 + j + 8) : -1.0f) << i;
  }
  const short128 h(3);
  const short128 off = v_i16_mov_group_v_b(h, 0xffffffff, short128(9), 3, 15, false, false);
  EXPECT_EQ(off[0], 9);
  EXPECT_THROW((void)v_f32_mov_group_v(a, 0xffffffff, income, 0, 16), UserError);  // 16 << 2: no such switch
}

TEST(TpcHabanaNames, LegacyDownConvertTakesIncomeModeAndLane) {
  float64 x;
  for (int i = 0; i < 64; ++i) x[i] = static_cast<float>(i) * 1.5f - 40.25f;
  const short128 income(static_cast<std::int16_t>(77));
  const short128 legacy = v_convert_f32_to_i16_v(x, income, e_round_down, 1);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(legacy[2 * i + 1], static_cast<std::int16_t>(std::floor(x[i]))) << i;
    EXPECT_EQ(legacy[2 * i], 77) << i;
  }
}

TEST(TpcHabanaNames, VectorCastsReinterpretBits) {
  int64 e;
  for (int i = 0; i < 64; ++i) e[i] = 0x01020300 + i;
  const char256 c = (char256)e;
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(c[4 * i], static_cast<std::int8_t>(i));
    EXPECT_EQ(c[4 * i + 3], 1);
  }
  const int64 ids = (int64)read_lane_id_4b_b();
  EXPECT_EQ(ids[63], 63);
  const float64 f = (float64)int64(0x3f800000);
  EXPECT_EQ(f[10], 1.0f);
}

TEST(TpcHabanaNames, CalcFpSpecialTakesTheOperandsFclass) {
  float64 x;
  const float in[8] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 2.0f, -3.0f, 1e-40f};
  for (int i = 0; i < 64; ++i) x[i] = in[i % 8];
  const float64 cls = v_f32_fclass_b(x);
  const float64 income(7.0f);
  // Habana's reciprocal: v_f32_calc_fp_special_b(fclass, fclass, e_fp_recip, result).
  const float64 recip = v_f32_calc_fp_special_b(cls, cls, e_fp_recip, income);
  const float64 rsqrt = v_f32_calc_fp_special_b(cls, cls, e_fp_rsqrt, income);
  for (int i = 0; i < 64; ++i) {
    const float v = in[i % 8];
    const bool special = v == 0.0f || std::isinf(v) || std::isnan(v);
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(recip[i])) << i;
    } else if (special) {
      EXPECT_EQ(std::bit_cast<std::uint32_t>(recip[i]), std::bit_cast<std::uint32_t>(1.0f / v))
          << i;  // +-0 -> +-inf, +-inf -> +-0
    } else {
      EXPECT_EQ(recip[i], 7.0f) << i;
    }
    const bool undefined = std::isnan(v) || (v < 0 && v != 0.0f);  // NaN or negative
    if (undefined)
      EXPECT_TRUE(std::isnan(rsqrt[i])) << i;
    else if (special)
      EXPECT_EQ(rsqrt[i], 1.0f / std::sqrt(v)) << i;
    else
      EXPECT_EQ(rsqrt[i], 7.0f) << i;
  }
  EXPECT_EQ(e_fp_pow, SW_POW);
}

TEST(TpcHabanaNames, ScalarComparesAndScalarIndexOperands) {
  EXPECT_TRUE(s_i32_cmp_less(1, 2));
  EXPECT_FALSE(s_f32_cmp_geq(1.0f, 2.0f));
  EXPECT_TRUE(s_u8_cmp_eq(3, 3, 0, false, true, false));
  EXPECT_TRUE(s_i16_cmp_neq(1, 2, 0, true, false, false));  // predicate off: income
  EXPECT_THROW((void)s_i32_cmp_grt(1, 2, SW_SAT), UserError);
  // Habana's matrix_mul: bCoords = i_i32_add(1, bCoords, 1 << 1, 0, bCoords, pred).
  const int5 c = {5, 6, 7, 8, 9};
  const int5 r = i_i32_add(1, c, 1 << 1, 0, c, true);
  EXPECT_TRUE((r == int5{{5, 7, 7, 8, 9}}));
  EXPECT_TRUE((i_i32_add(1, c, 1 << 1, 0, c, false) == c));
  EXPECT_TRUE((i_i32_max(c, 7, 0x1f, 0, c) == int5{{7, 7, 7, 8, 9}}));
}

TEST(TpcHabanaNames, FormFpNumTakesExponentSignAndMantissaInSourceOrder) {
  // tpc-intrinsics.h: SRC1 exponent, SRC2 sign, SRC3 mantissa.
  char256 e;
  float64 sign, mant;
  for (int i = 0; i < 64; ++i) {
    e[4 * i] = static_cast<std::int8_t>(120 + i % 10);  // biased exponent as a number
    sign[i] = i % 2 ? -1.0f : 1.0f;
    mant[i] = 1.0f + static_cast<float>(i) / 64.0f;
  }
  const float64 r = v_f32_form_fp_num_ie_b(e, sign, mant, SW_EXP_IS_NUM);
  for (int i = 0; i < 64; ++i) {
    const std::uint32_t bits = (i % 2 ? 0x80000000u : 0u) |
                               (static_cast<std::uint32_t>(120 + i % 10) << 23) |
                               (std::bit_cast<std::uint32_t>(mant[i]) & 0x007fffffu);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(r[i]), bits) << i;
  }
  EXPECT_GT(v_f32_form_fp_num_ie_b(e, sign, mant, SW_FORCE_SIGN0)[1], 0.0f);
}

TEST(TpcHabanaNames, PredicateLogicOnScalarsAndBool256) {
  // Habana's avg_pool: s_i1_and(w_ind_in_ifm, h_ind_in_ifm), s_i1_or(pixel_in_ifm, include_pads).
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      EXPECT_EQ(s_i1_and(a, b), a && b);
      EXPECT_EQ(s_i1_or(a, b), a || b);
      EXPECT_EQ(s_i1_xor(a, b), a != b);
    }
  EXPECT_TRUE(s_i1_not(false));
  EXPECT_TRUE(s_i1_mov(false, 0, true, false, false));  // predicate off: income
  bool256 x, y;
  for (int i = 0; i < 256; ++i) {
    x.set(i, i % 3 == 0);
    y.set(i, i % 2 == 0);
  }
  const bool256 a = v_i1_and_b(x, y), o = v_i1_or_b(x, y), n = v_i1_not_b(x);
  for (int i = 0; i < 256; ++i) {
    EXPECT_EQ(a[i], i % 6 == 0) << i;
    EXPECT_EQ(o[i], i % 3 == 0 || i % 2 == 0) << i;
    EXPECT_EQ(n[i], i % 3 != 0) << i;
  }
  // bitonic_sort's v_i1_not_b(p, 0, p, curDir): p itself when curDir is 0.
  EXPECT_TRUE(v_i1_not_b(x, 0, x, false) == x);
  EXPECT_THROW((void)v_i1_xor_b(x, y, SW_SAT), UserError);
}

TEST(TpcHabanaNames, Bf16MacAcc32SumsEvenAndOddLanesInF32) {
  bfloat128 a, b;
  for (int i = 0; i < 128; ++i) {
    a[i] = tessera::bf16(static_cast<float>(i % 13) * 0.75f - 4);
    b[i] = tessera::bf16(static_cast<float>(i % 7) + 0.5f);
  }
  float128 acc;
  for (int i = 0; i < 64; ++i) {
    acc.v1[i] = static_cast<float>(i);
    acc.v2[i] = -static_cast<float>(i);
  }
  const float128 r = v_bf16_mac_acc32_b(a, b, acc, (e_no_negation) << 1);
  const float128 n = v_bf16_mac_acc32_b(a, b, acc, SW_NEG);
  for (int i = 0; i < 64; ++i) {
    const float p0 = static_cast<float>(a[2 * i]) * static_cast<float>(b[2 * i]);
    const float p1 = static_cast<float>(a[2 * i + 1]) * static_cast<float>(b[2 * i + 1]);
    EXPECT_EQ(r.v1[i], acc.v1[i] + p0) << i;
    EXPECT_EQ(r.v2[i], acc.v2[i] + p1) << i;
    EXPECT_EQ(n.v1[i], acc.v1[i] - p0) << i;
  }
  // Habana's filter_fwd_2d_bf16 converts the accumulator back: lanes come out in order.
  const bfloat128 back = v_convert_f32_to_bf16_all_b(r);
  EXPECT_EQ(static_cast<float>(back[3]), static_cast<float>(tessera::bf16(r.v2[1])));
  EXPECT_EQ(v_bf16_mac_acc32_b(a, b, acc, 0, false).v1[5], acc.v1[5]);
  EXPECT_THROW((void)v_bf16_mac_acc32_b(a, b, acc, SW_SAT), UserError);
}

TEST(TpcHabanaNames, FormFpNumTakesSignExponentAndMantissaFields) {
  float64 a, b, c;
  for (int i = 0; i < 64; ++i) {
    a[i] = std::ldexp(1.0f, i % 20 - 10);          // exponent field from a
    b[i] = (i % 2) ? -3.0f : 5.0f;                 // sign from b
    c[i] = 1.0f + static_cast<float>(i) / 128.0f;  // mantissa from c
  }
  const float64 r = v_f32_form_fp_num_b(a, b, c);
  const float64 forced = v_f32_form_fp_num_b(a, b, c, SW_FORCE_SIGN0);
  bfloat128 ah, bh, ch;
  for (int i = 0; i < 128; ++i) {
    ah[i] = tessera::bf16(std::ldexp(1.0f, i % 16 - 8));
    bh[i] = tessera::bf16((i % 3) ? 1.0f : -1.0f);
    ch[i] = tessera::bf16(1.0f + static_cast<float>(i % 64) / 64.0f);
  }
  const bfloat128 h = v_bf16_form_fp_num_b(ah, bh, ch);
  for (int i = 0; i < 64; ++i) {
    const float want = std::copysign(std::ldexp(c[i], i % 20 - 10), b[i]);  // c in [1, 2)
    EXPECT_EQ(r[i], want) << i;
    EXPECT_EQ(forced[i], std::fabs(want)) << i;
  }
  for (int i = 0; i < 128; ++i)
    EXPECT_EQ(
        static_cast<float>(h[i]),
        std::copysign(std::ldexp(static_cast<float>(ch[i]), i % 16 - 8), static_cast<float>(bh[i])))
        << i;
  EXPECT_THROW((void)v_f32_form_fp_num_b(a, b, c, SW_ADD_BIAS), UserError);
}

TEST(TpcHabanaNames, Bf16FclassAndCalcFpSpecialFollowTheF32Rules) {
  bfloat128 x;
  const float values[8] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 2.0f, -2.0f, 1e-40f};
  for (int i = 0; i < 128; ++i) x[i] = tessera::bf16(values[i % 8]);
  const bfloat128 cls = v_bf16_fclass_b(x);
  const bfloat128 logs = v_bf16_calc_fp_special_b(cls, cls, e_fp_log, bfloat128(7.0f));
  for (int i = 0; i < 128; ++i) {
    const float v = static_cast<float>(x[i]);
    EXPECT_EQ(static_cast<float>(cls[i]), v_f32_fclass_b(float64(v))[0]) << i;
    const float want = (std::isnan(v) || std::isinf(v) || v <= 0) ? std::log(v) : 7.0f;
    const float got = static_cast<float>(logs[i]);
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(got)) << i;
    else
      EXPECT_EQ(got, want) << i;
  }
  // The vector-predicated FCLASS keeps income where the predicate is off.
  float64 y(2.0f);
  bool64 low;  // a compare of 64-lane vectors sets the 4 bits of each lane
  for (int bit = 0; bit < 256; ++bit) low.set(bit, bit / 4 < 10);
  const float64 f = v_f32_fclass_vb(y, 0, float64(-1.0f), low);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(f[i], i < 10 ? 64.0f : -1.0f) << i;
}

TEST(TpcHabanaNames, UnpackVbKeepsIncomeWherePredicateIsOff) {
  bfloat128 a;
  for (int i = 0; i < 128; ++i) a[i] = tessera::bf16(static_cast<float>(i));
  bool128 even;
  for (int bit = 0; bit < 256; ++bit) even.set(bit, (bit / 2) % 2 == 0);
  const bfloat128 all = v_bf16_unpack_b(a, 0, bfloat128());
  const bfloat128 some = v_bf16_unpack_vb(a, 0, bfloat128(-1.0f), even);
  for (int i = 0; i < 128; ++i)
    EXPECT_EQ(static_cast<float>(some[i]), i % 2 == 0 ? static_cast<float>(all[i]) : -1.0f) << i;
}

TEST(TpcHabanaNames, Bf16ScalarBroadcastsWhereAVectorIsTaken) {
  // Habana's relu6_fwd.h with BFLOAT16: `SCALAR threshold` passed as a bfloat128 operand.
  const tessera::tpc::bf16 threshold = 0.5f, six = 6.0f;
  bfloat128 x;
  for (int i = 0; i < 128; ++i) x[i] = tessera::bf16(static_cast<float>(i % 9) - 1.0f);
  const bfloat128 r = v_bf16_sel_leq_bf16_b(x, threshold, six, x);
  for (int i = 0; i < 128; ++i) {
    const float xi = static_cast<float>(x[i]);
    EXPECT_EQ(static_cast<float>(r[i]), xi <= 0.5f ? 6.0f : xi) << i;
  }
}
