// The bit, shift, move and index-register intrinsics of intrinsics_bits.h (ASH, BREV, MUL with
// DOUBLE_AND_ROUND32 and ACC_F32, float SHL/SHR, the scalar and vector-predicated FP helpers,
// SHUFFLE and MOV_DUAL_GROUP with ALL, the v_i1 moves and logic, MOV_IRF_DIM / PRMT_INDX /
// SET_INDX, the cache instructions), each against a plain loop; their issue slots; their
// UserErrors.
#include <gtest/gtest.h>

#include <bit>
#include <bitset>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "tessera/core/error.h"
#include "tessera/targets/tpc/api/tpc.h"
#include "tpc_test_util.h"

using namespace tessera;
using namespace tessera::tpc;

namespace {

using tpc_test::user_error_of;

using tessera::tpc::bf16;  // TPC-C's scalar bf16, not the core dtype

// a * 2^count saturated to [lo, hi]; a right shift floors, or rounds half up with `rhu`. In
// long double, exact for |a| < 2^32 and |count| <= 24.
long long ash_reference(long long a, int count, bool rhu, long long lo, long long hi) {
  long double x = std::ldexp(static_cast<long double>(a), count);
  if (count < 0) x = rhu ? std::floor(x + 0.5L) : std::floor(x);
  if (x < static_cast<long double>(lo)) return lo;
  if (x > static_cast<long double>(hi)) return hi;
  return static_cast<long long>(x);
}

template <typename T, typename V, typename Scalar, typename Vector>
void check_ash(Scalar scalar_ash, Vector vector_ash) {
  constexpr long long lo = std::numeric_limits<T>::lowest();
  constexpr long long hi = std::numeric_limits<T>::max();
  constexpr int bytes = static_cast<int>(sizeof(T));
  std::mt19937 gen(7);
  std::uniform_int_distribution<long long> value(lo, hi);
  std::uniform_int_distribution<int> count(-24, 24);
  for (int rhu = 0; rhu < 2; ++rhu) {
    const int sw = SW_SAT | (rhu ? SW_RHU : 0);
    V a;
    char256 b;
    for (int i = 0; i < V::lanes; ++i) {
      a.v[i] = static_cast<T>(value(gen));
      const int n = count(gen);
      for (int k = 0; k < bytes; ++k) b.v[i * bytes + k] = static_cast<std::int8_t>(n);
    }
    const V r = vector_ash(a, b, sw);
    for (int i = 0; i < V::lanes; ++i) {
      const int n = b.v[i * bytes];
      const long long want = ash_reference(a.v[i], n, rhu != 0, lo, hi);
      ASSERT_EQ(static_cast<long long>(r.v[i]), want) << a.v[i] << " ash " << n << " rhu " << rhu;
      ASSERT_EQ(static_cast<long long>(scalar_ash(a.v[i], static_cast<std::int8_t>(n), sw)), want);
    }
  }
  // Counts beyond the width: a left shift saturates by sign, a right one leaves the sign.
  EXPECT_EQ(static_cast<long long>(scalar_ash(static_cast<T>(1), 127, SW_SAT)), hi);
  EXPECT_EQ(static_cast<long long>(scalar_ash(static_cast<T>(0), 127, SW_SAT)), 0);
  EXPECT_EQ(static_cast<long long>(scalar_ash(static_cast<T>(hi), -128, SW_SAT)), 0);
  if (lo < 0) {
    EXPECT_EQ(static_cast<long long>(scalar_ash(static_cast<T>(-1), 127, SW_SAT)), lo);
    EXPECT_EQ(static_cast<long long>(scalar_ash(static_cast<T>(lo), -128, SW_SAT)), -1);
    // -3 / 2 = -1.5: floor gives -2, half up gives -1.
    EXPECT_EQ(static_cast<long long>(scalar_ash(static_cast<T>(-3), -1, 0)), -2);
    EXPECT_EQ(static_cast<long long>(scalar_ash(static_cast<T>(-3), -1, SW_RHU)), -1);
  }
}

TEST(TpcBits, AshShiftsBothWaysSaturatingAndRounding) {
  check_ash<std::int32_t, int64>(
      [](std::int32_t a, std::int8_t n, int sw) { return s_i32_ash(a, n, sw); },
      [](const int64& a, const char256& b, int sw) { return v_i32_ash_b(a, b, sw); });
  check_ash<std::uint32_t, uint64>(
      [](std::uint32_t a, std::int8_t n, int sw) { return s_u32_ash(a, n, sw); },
      [](const uint64& a, const char256& b, int sw) { return v_u32_ash_b(a, b, sw); });
  check_ash<std::int16_t, short128>(
      [](std::int16_t a, std::int8_t n, int sw) { return s_i16_ash(a, n, sw); },
      [](const short128& a, const char256& b, int sw) { return v_i16_ash_b(a, b, sw); });
  check_ash<std::uint16_t, ushort128>(
      [](std::uint16_t a, std::int8_t n, int sw) { return s_u16_ash(a, n, sw); },
      [](const ushort128& a, const char256& b, int sw) { return v_u16_ash_b(a, b, sw); });
  check_ash<std::int8_t, char256>(
      [](std::int8_t a, std::int8_t n, int sw) { return s_i8_ash(a, n, sw); },
      [](const char256& a, const char256& b, int sw) { return v_i8_ash_b(a, b, sw); });
  check_ash<std::uint8_t, uchar256>(
      [](std::uint8_t a, std::int8_t n, int sw) { return s_u8_ash(a, n, sw); },
      [](const uchar256& a, const char256& b, int sw) { return v_u8_ash_b(a, b, sw); });
}

TEST(TpcBits, AshPredicatesKeepIncome) {
  const int64 a(100);
  const int64 income(-7);
  EXPECT_EQ(v_i32_ash_b(a, char256(std::int8_t{2}), 0, income, false).v[0], -7);
  EXPECT_EQ(v_i32_ash_b(a, char256(std::int8_t{2}), 0, income, false, true).v[5], 400);
  EXPECT_EQ(s_u16_ash(3, 4, 0, 9, false), 9);
  bool64 p;
  for (int i = 0; i < 64; ++i) p.set(i * 4, i % 3 == 0);
  const int64 r = v_i32_ash_vb(a, char256(std::int8_t{-2}), SW_RHU, income, p);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(r.v[i], i % 3 == 0 ? 25 : -7) << i;
}

// Bits reversed through their text.
template <typename U>
U reversed(U x) {
  std::string s = std::bitset<8 * sizeof(U)>(x).to_string();
  return static_cast<U>(std::bitset<8 * sizeof(U)>(std::string(s.rbegin(), s.rend())).to_ulong());
}

TEST(TpcBits, BrevReversesEachElement) {
  std::mt19937 gen(3);
  uint64 u;
  float64 f;
  ushort128 h;
  bfloat128 bh;
  char256 c;
  for (int i = 0; i < 64; ++i) {
    u.v[i] = gen();
    f.v[i] = std::ldexp(static_cast<float>(gen() % 1000) - 500.0f, static_cast<int>(gen() % 20));
  }
  for (int i = 0; i < 128; ++i) {
    h.v[i] = static_cast<std::uint16_t>(gen());
    bh.v[i] = tessera::bf16::from_bits(static_cast<std::uint16_t>(gen()));
  }
  for (int i = 0; i < 256; ++i) c.v[i] = static_cast<std::int8_t>(gen());
  const uint64 ru = v_u32_brev_b(u);
  const uint64 rf = v_f32_brev_b(f);
  const ushort128 rh = v_u16_brev_b(h);
  const ushort128 rbh = v_bf16_brev_b(bh);
  const char256 rc = v_i8_brev_b(c);
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(ru.v[i], reversed(u.v[i]));
    ASSERT_EQ(rf.v[i], reversed(std::bit_cast<std::uint32_t>(f.v[i])));
    ASSERT_EQ(s_f32_brev(f.v[i]), reversed(std::bit_cast<std::uint32_t>(f.v[i])));
  }
  for (int i = 0; i < 128; ++i) {
    ASSERT_EQ(rh.v[i], reversed(h.v[i]));
    ASSERT_EQ(rbh.v[i], reversed(bh.v[i].bits));
  }
  for (int i = 0; i < 256; ++i)
    ASSERT_EQ(static_cast<std::uint8_t>(rc.v[i]), reversed(static_cast<std::uint8_t>(c.v[i])));
  EXPECT_EQ(s_i32_brev(1), std::numeric_limits<std::int32_t>::lowest());
  EXPECT_EQ(s_u32_brev(0x12345678u), 0x1e6a2c48u);
  EXPECT_EQ(s_bf16_brev(bf16(1.0f)), reversed(std::uint16_t{0x3f80}));
  EXPECT_EQ(s_u8_brev(0x01), 0x80);
}

TEST(TpcBits, MulRoundIsTheRoundedDoubledHighProduct) {
  std::mt19937 gen(11);
  int64 a, b;
  uint64 ua, ub;
  for (int i = 0; i < 64; ++i) {
    a.v[i] = static_cast<std::int32_t>(gen());
    b.v[i] = static_cast<std::int32_t>(gen());
    ua.v[i] = gen() >> 1;  // below 2^31: the long double reference stays exact
    ub.v[i] = gen() >> 1;
  }
  const int64 r = v_i32_mul_round_b(a, b);
  const uint64 ur = v_u32_mul_round_b(ua, ub);
  for (int i = 0; i < 64; ++i) {
    const long double want = std::floor((2.0L * a.v[i] * b.v[i] + 2147483648.0L) / 4294967296.0L);
    ASSERT_EQ(static_cast<long double>(r.v[i]), want) << a.v[i] << " * " << b.v[i];
    const long double uwant =
        std::floor((2.0L * ua.v[i] * ub.v[i] + 2147483648.0L) / 4294967296.0L);
    ASSERT_EQ(static_cast<long double>(ur.v[i]), uwant);
  }
  // Q31: 0.5 * 0.5 = 0.25; -1 * -1 = 1 does not fit and saturates.
  const int64 half(1 << 30);
  EXPECT_EQ(v_i32_mul_round_b(half, half).v[0], 1 << 29);
  const int64 minus_one(std::numeric_limits<std::int32_t>::lowest());
  EXPECT_EQ(v_i32_mul_round_b(minus_one, minus_one).v[3], std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(v_u32_mul_round_b(uint64(0xffffffffu), uint64(0xffffffffu)).v[0], 0xffffffffu);
  bool64 p;
  p.set(0, true);
  const int64 masked = v_i32_mul_round_vb(half, half, 0, int64(5), p);
  EXPECT_EQ(masked.v[0], 1 << 29);
  EXPECT_EQ(masked.v[1], 5);
}

TEST(TpcBits, MulAcc32GivesExactProductsInPairLayout) {
  bfloat128 a, b;
  for (int i = 0; i < 128; ++i) {
    a.v[i] = tessera::bf16(1.0f + static_cast<float>(i) / 128.0f);
    b.v[i] = tessera::bf16(-3.0f + static_cast<float>(i % 7) * 0.5f);
  }
  const float128 r = v_bf16_mul_acc32_b(a, b);
  for (int i = 0; i < 128; ++i) {
    const double want = static_cast<double>(static_cast<float>(a.v[i])) *
                        static_cast<double>(static_cast<float>(b.v[i]));
    ASSERT_EQ(static_cast<double>((i % 2 ? r.v2 : r.v1).v[i / 2]), want) << i;
  }
  bool128 p;
  for (int i = 0; i < 128; ++i) p.set(i * 2, i < 10);
  const float128 income{float64(-1.0f), float64(-2.0f)};
  const float128 m = v_bf16_mul_acc32_vb(a, b, 0, income, p);
  EXPECT_EQ(m.v1.v[4], static_cast<float>(a.v[8]) * static_cast<float>(b.v[8]));
  EXPECT_EQ(m.v2.v[4], static_cast<float>(a.v[9]) * static_cast<float>(b.v[9]));
  EXPECT_EQ(m.v1.v[5], -1.0f);  // lane 10
  EXPECT_EQ(m.v2.v[5], -2.0f);  // lane 11
  EXPECT_EQ(s_bf16_mul_acc32(bf16(1.5f), bf16(-2.25f)), -3.375f);
  EXPECT_EQ(s_bf16_mul_acc32(bf16(1.5f), bf16(-2.25f), 0, 4.0f, false), 4.0f);
}

TEST(TpcBits, FloatShiftsMoveTheEncoding) {
  auto bits = [](float x) { return std::bit_cast<std::uint32_t>(x); };
  EXPECT_EQ(bits(s_f32_shl(1.0f, 1)), 0x3f800000u << 1);
  EXPECT_EQ(bits(s_f32_shr(-1.0f, 31)), 1u);
  EXPECT_EQ(s_bf16_shr(bf16(-2.0f), 8).bits, 0xc000u >> 8);
  EXPECT_EQ(s_bf16_shl(bf16(1.0f), 1).bits, static_cast<std::uint16_t>(0x3f80u << 1));
  float64 a;
  int64 n;
  for (int i = 0; i < 64; ++i) {
    a.v[i] = static_cast<float>(i) * 1.25f - 20.0f;
    n.v[i] = i % 32;
  }
  const float64 l = v_f32_shl_b(a, n);
  const float64 r = v_f32_shr_b(a, n);
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(bits(l.v[i]), bits(a.v[i]) << (i % 32)) << i;
    ASSERT_EQ(bits(r.v[i]), bits(a.v[i]) >> (i % 32)) << i;
  }
  bfloat128 h;
  short128 hn;
  for (int i = 0; i < 128; ++i) {
    h.v[i] = tessera::bf16::from_bits(static_cast<std::uint16_t>(0x1234 + 97 * i));
    hn.v[i] = static_cast<std::int16_t>(i % 16);
  }
  bool128 p;
  for (int i = 0; i < 128; ++i) p.set(2 * i, i % 2 == 0);
  const bfloat128 hr = v_bf16_shr_vb(h, hn, 0, bfloat128(), p);
  for (int i = 0; i < 128; ++i)
    ASSERT_EQ(hr.v[i].bits, i % 2 == 0 ? static_cast<std::uint16_t>(h.v[i].bits >> (i % 16)) : 0)
        << i;
}

// tpc-intrinsics.h's unsigned SHL / SHR take a signed count vector (int64, short128, char256);
// the unsigned view and a scalar count give the same shifts.
TEST(TpcBits, UnsignedShiftsTakeASignedCountVector) {
  uint64 a;
  int64 n;
  for (int i = 0; i < 64; ++i) {
    a.v[i] = 0x80000001u + 977u * static_cast<std::uint32_t>(i);
    n.v[i] = i % 32;
  }
  const uint64 l = v_u32_shl_b(a, n);
  const uint64 r = v_u32_shr_vb(a, n, 0, uint64(7u), to_bool64(bool256(0x0f)), false);
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(l.v[i], static_cast<std::uint32_t>(a.v[i] << (i % 32))) << i;
    // bool256 {0x0f}: bits 0-3 of each byte, so lanes (4 bits each) alternate on and off.
    ASSERT_EQ(r.v[i], i % 2 == 0 ? a.v[i] >> (i % 32) : 7u) << i;
  }
  EXPECT_EQ(v_u32_shl_b(a, static_cast<uint64>(n)).v[5], l.v[5]);
  EXPECT_EQ(v_u32_shr_b(a, 3).v[9], a.v[9] >> 3);
  ushort128 h;
  short128 hn;
  uchar256 c;
  char256 cn;
  for (int i = 0; i < 128; ++i) {
    h.v[i] = static_cast<std::uint16_t>(0x8421u + 31 * i);
    hn.v[i] = static_cast<std::int16_t>(i % 16);
  }
  for (int i = 0; i < 256; ++i) {
    c.v[i] = static_cast<std::uint8_t>(0x81 + i);
    cn.v[i] = static_cast<std::int8_t>(i % 8);
  }
  const ushort128 hl = v_u16_shl_b(h, hn);
  const ushort128 hr = v_u16_shr_b(h, hn, 0, ushort128(), true, false);
  for (int i = 0; i < 128; ++i) {
    ASSERT_EQ(hl.v[i], static_cast<std::uint16_t>(h.v[i] << (i % 16))) << i;
    ASSERT_EQ(hr.v[i], static_cast<std::uint16_t>(h.v[i] >> (i % 16))) << i;
  }
  const uchar256 cl = v_u8_shl_vb(c, cn, 0, uchar256(), bool256(0xff));
  const uchar256 cr = v_u8_shr_b(c, cn);
  for (int i = 0; i < 256; ++i) {
    ASSERT_EQ(cl.v[i], static_cast<std::uint8_t>(c.v[i] << (i % 8))) << i;
    ASSERT_EQ(cr.v[i], static_cast<std::uint8_t>(c.v[i] >> (i % 8))) << i;
  }
  EXPECT_EQ(v_u8_shl_b(c, 1).v[0], 0x02);
  EXPECT_EQ(v_u16_shl_vb(h, 4, 0, h, bool128(bool256(0x00))).v[3], h.v[3]);  // predicate off
}

TEST(TpcBits, ScalarAndVectorPredicatedFloatHelpers) {
  // FCLASS bits: -inf 0, -normal 1, -denormal 2, -0 3, +0 4, +denormal 5, +normal 6, +inf 7,
  // sNaN 8, qNaN 9 (tpc-intrinsics.h).
  const float values[] = {-INFINITY,
                          -2.0f,
                          -1e-40f,
                          -0.0f,
                          0.0f,
                          1e-40f,
                          3.0f,
                          INFINITY,
                          std::bit_cast<float>(0x7f800001u),
                          std::numeric_limits<float>::quiet_NaN()};
  for (int k = 0; k < 10; ++k) {
    EXPECT_EQ(s_f32_fclass(values[k]), std::ldexp(1.0f, k)) << k;
    if (k != 2 && k != 5 && k != 8) {  // bf16 of 1e-40 or of a signalling NaN differs in class
      EXPECT_EQ(static_cast<float>(s_bf16_fclass(bf16(values[k]))), std::ldexp(1.0f, k)) << k;
    }
  }
  EXPECT_EQ(s_f32_fclass(2.0f, 0, 9.0f, false), 9.0f);
  // CALC_FP_SPECIAL on classes: 1/+0 = +inf, sqrt(-normal) = NaN, log(+normal) is not special.
  EXPECT_EQ(s_f32_calc_fp_special(s_f32_fclass(0.0f), 0.0f, SW_RECIP, 5.0f), INFINITY);
  EXPECT_TRUE(std::isnan(s_f32_calc_fp_special(s_f32_fclass(-2.0f), 0.0f, SW_SQRT, 5.0f)));
  EXPECT_EQ(s_f32_calc_fp_special(s_f32_fclass(2.0f), 0.0f, SW_LOG, 5.0f), 5.0f);
  EXPECT_EQ(static_cast<float>(s_bf16_calc_fp_special(s_bf16_fclass(bf16(-0.0f)), bf16(0.0f),
                                                      SW_RECIP, bf16(1.0f))),
            -INFINITY);
  // The vector-predicated forms: computed where the predicate is on, income elsewhere.
  float64 cls;
  for (int i = 0; i < 64; ++i) cls.v[i] = s_f32_fclass(i % 2 ? 0.0f : 7.0f);
  bool64 p;
  for (int i = 0; i < 64; ++i) p.set(4 * i, i < 32);
  const float64 sp = v_f32_calc_fp_special_vb(cls, cls, SW_RECIP, float64(-5.0f), p);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(sp.v[i], i < 32 && i % 2 ? INFINITY : -5.0f) << i;
  bfloat128 hv;
  for (int i = 0; i < 128; ++i) hv.v[i] = tessera::bf16(values[i % 10]);
  bool128 hp;
  for (int i = 0; i < 128; ++i) hp.set(2 * i, i % 3 != 0);
  const bfloat128 hc = v_bf16_fclass_vb(hv, 0, bfloat128(-1.0f), hp);
  for (int i = 0; i < 128; ++i)
    if (i % 10 != 2 && i % 10 != 5 && i % 10 != 8) {
      ASSERT_EQ(static_cast<float>(hc.v[i]), i % 3 ? std::ldexp(1.0f, i % 10) : -1.0f) << i;
    }
  // NEARBYINT on the SPU in each mode.
  for (float x : {2.5f, -2.5f, 3.7f, -0.2f}) {
    EXPECT_EQ(s_f32_nearbyint(x), std::nearbyint(x));
    EXPECT_EQ(s_f32_nearbyint(x, SW_RD), std::floor(x));
    EXPECT_EQ(s_f32_nearbyint(x, SW_RU), std::ceil(x));
    EXPECT_EQ(s_f32_nearbyint(x, SW_RZ), std::trunc(x));
    EXPECT_EQ(s_f32_nearbyint(x, SW_RHAZ), std::round(x));
    EXPECT_EQ(static_cast<float>(s_bf16_nearbyint(bf16(x), SW_RD)), std::floor(x));
  }
}

TEST(TpcBits, FormFpNumIeBuildsFromExponentSignAndMantissa) {
  char256 e;
  bfloat128 sign, mant;
  for (int i = 0; i < 128; ++i) {
    e.v[2 * i] = static_cast<std::int8_t>(i % 9 - 4);
    e.v[2 * i + 1] = 0;
    sign.v[i] = tessera::bf16(i % 2 ? -1.0f : 1.0f);
    mant.v[i] = tessera::bf16(1.0f + static_cast<float>(i % 8) / 8.0f);
  }
  const bfloat128 r = v_bf16_form_fp_num_ie_b(e, sign, mant, SW_ADD_BIAS);
  for (int i = 0; i < 128; ++i) {
    const float want =
        (i % 2 ? -1.0f : 1.0f) * std::ldexp(1.0f + static_cast<float>(i % 8) / 8.0f, i % 9 - 4);
    ASSERT_EQ(static_cast<float>(r.v[i]), want) << i;
  }
  bool64 p;
  for (int i = 0; i < 64; ++i) p.set(4 * i, i == 3);
  char256 fe(std::int8_t{2});
  const float64 f =
      v_f32_form_fp_num_ie_vb(fe, float64(-1.0f), float64(1.5f), SW_ADD_BIAS, float64(9.0f), p);
  EXPECT_EQ(f.v[3], -6.0f);
  EXPECT_EQ(f.v[4], 9.0f);
  const float64 g =
      v_f32_form_fp_num_vb(float64(8.0f), float64(1.0f), float64(1.25f), 0, float64(0.0f), p);
  EXPECT_EQ(g.v[3], 10.0f);  // exponent of 8, significand of 1.25
  EXPECT_EQ(g.v[2], 0.0f);
}

TEST(TpcBits, ShuffleAndDualGroupMovesWithAll) {
  int64 a;
  for (int i = 0; i < 64; ++i) a.v[i] = 100 + i;
  // Reverse each group of 8 i32 elements; control of element i in byte 4 * i.
  uchar256 ctl;
  for (int i = 0; i < 64; ++i)
    for (int k = 0; k < 4; ++k)
      ctl.v[4 * i + k] = static_cast<std::uint8_t>(0x80 | (((i / 8) % 2) << 5) | (7 - i % 8));
  bool64 p;
  for (int i = 0; i < 64; ++i) p.set(4 * i, i % 2 == 0);
  const int64 s = v_i32_shuffle_vb(a, ctl, 0, int64(-1), p);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(s.v[i], i % 2 ? -1 : 100 + (i / 8) * 8 + 7 - i % 8) << i;
  // Dual group d of the result takes source dual group 3 - d; a dual group is 16 i32 elements,
  // its lower group the first 8.
  const int64 all =
      v_i32_mov_dual_group_all_b(a, 0xffffffffu, 3, 2, 1, 0, MkWrA(3, 3, 3, 3), int64(-1));
  for (int i = 0; i < 64; ++i) ASSERT_EQ(all.v[i], 100 + (3 - i / 16) * 16 + i % 16) << i;
  // Only the lower groups of dual groups 0 and 2 written.
  const int64 lower = v_i32_mov_dual_group_all_b(
      a, 0xffffffffu, 1, 1, 1, 1, SW_WR_LOWER_GROUP0 | SW_WR_LOWER_GROUP2, int64(-1));
  for (int i = 0; i < 64; ++i) {
    const bool written = (i / 16 == 0 || i / 16 == 2) && i % 16 < 8;
    ASSERT_EQ(lower.v[i], written ? 100 + 16 + i % 16 : -1) << i;
  }
  const int64 vb =
      v_i32_mov_dual_group_all_vb(a, 0xffffffffu, 0, 0, 0, 0, MkWrA(3, 3, 3, 3), int64(-1), p);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(vb.v[i], i % 2 ? -1 : 100 + i % 16) << i;
}

TEST(TpcBits, LaneIdsAndPredicateMoves) {
  bool64 p;
  for (int i = 0; i < 64; ++i) p.set(4 * i, i >= 60);
  const uint64 ids = read_lane_id_4b_vb(uint64(7u), p);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(ids.v[i], i >= 60 ? static_cast<std::uint32_t>(i) : 7u);
  EXPECT_EQ(read_lane_id_1b_b(uchar256(std::uint8_t{9}), false).v[200], 9);
  EXPECT_EQ(read_lane_id_2b_b(ushort128(std::uint16_t{9})).v[100], 100);
  // Bit logic under a vector predicate.
  bool256 a, b, m;
  for (int i = 0; i < 256; ++i) {
    a.set(i, i % 2 == 0);
    b.set(i, i % 3 == 0);
    m.set(i, i < 128);
  }
  const bool256 income(static_cast<unsigned char>(0xff));
  const bool256 x = v_i1_xor_vb(a, b, 0, income, m);
  const bool256 n = v_i1_not_vb(a, 0, bool256(), m, true);
  for (int i = 0; i < 256; ++i) {
    ASSERT_EQ(x[i], i < 128 ? ((i % 2 == 0) != (i % 3 == 0)) : true) << i;
    ASSERT_EQ(n[i], i < 128 ? false : i % 2 != 0) << i;
  }
  EXPECT_TRUE(v_i1_and_vb(a, b, 0, bool256(), m)[6]);
  EXPECT_FALSE(v_i1_or_vb(a, b, 0, bool256(), m)[131]);
  EXPECT_EQ(v_i1_mov_vb(a, 0, bool256(), m)[2], true);
  EXPECT_EQ(v_i1_mov_i1_b(true)[255], true);
  EXPECT_EQ(v_i1_mov_i1_vb(true, 0, bool256(), m)[200], false);
  // MOV with FLAVOR: a's bit j to bit 32 * flavor + j.
  const bool256 f = v_i1_mov_flavor_b(static_cast<std::int32_t>(0x80000005u), 2, 0, bool256());
  for (int i = 0; i < 256; ++i) ASSERT_EQ(f[i], i == 64 || i == 66 || i == 95) << i;
  const bool256 every = v_i1_mov_flavor_b(1, 8, 0, bool256());
  for (int i = 0; i < 256; ++i) ASSERT_EQ(every[i], i % 32 == 0) << i;
  const bool256 fm = v_i1_mov_flavor_vb(-1, 8, 0, bool256(), m);
  EXPECT_TRUE(fm[127]);
  EXPECT_FALSE(fm[128]);
}

TEST(TpcBits, IndexRegisterMoves) {
  const int5 ndx = {{10, 11, 12, 13, 14}};
  for (int d = 0; d < 5; ++d) EXPECT_EQ(mov_irf_dim(ndx, static_cast<std::int8_t>(d), 0), 10 + d);
  EXPECT_EQ(mov_irf_dim(ndx, 2, 0, 99, false), 99);
  // Result dimension d takes source dimension (prmt >> 3d) & 7: here the reverse order.
  const int prmt = 4 | (3 << 3) | (2 << 6) | (1 << 9) | (0 << 12);
  const int5 r = prmt_indx(ndx, prmt, 0);
  for (int d = 0; d < 5; ++d) EXPECT_EQ(r.v[d], 14 - d);
  const int5 s = set_indx(-3, ndx, 0b10010, 0);
  EXPECT_TRUE((s == int5{{10, -3, 12, 13, -3}}));
  EXPECT_TRUE((set_indx(-3, ndx, 0b11111, 0, false) == ndx));
}

TEST(TpcBits, BadSwitchesAndOperandsAreUserErrors) {
  EXPECT_NE(user_error_of([] { (void)s_i32_ash(1, 1, SW_NEG << 4); }).find("s_i32_ash"),
            std::string::npos);
  EXPECT_NE(user_error_of([] { (void)v_u8_brev_b(uchar256(), 1); }).find("v_u8_brev_b"),
            std::string::npos);
  EXPECT_NE(user_error_of([] { (void)v_i1_mov_flavor_b(1, 9, 0, bool256()); }).find("flavor 9"),
            std::string::npos);
  EXPECT_NE(user_error_of([] { (void)prmt_indx(int5{}, 5 << 6, 0); }).find("dimension 2"),
            std::string::npos);
  EXPECT_NE(user_error_of([] { (void)mov_irf_dim(int5{}, 5, 0); }).find("dimension 5"),
            std::string::npos);
  EXPECT_NE(user_error_of([] {
              (void)v_f32_mov_dual_group_all_b(float64(), 0xffffffffu, 0, 4, 0, 0, 0, float64());
            }).find("sdg1 is 4"),
            std::string::npos);
  EXPECT_NE(user_error_of([] { cache_invalidate(1 << 1); }).find("cache_invalidate"),
            std::string::npos);
  EXPECT_NE(user_error_of([] {
              (void)v_f32_calc_fp_special_vb(float64(), float64(), 8, float64(), bool64());
            }).find("v_f32_calc_fp_special_vb"),
            std::string::npos);
}

// Each intrinsic takes one issue of its slot, and a vector result is ready the slot's latency
// after it (spec 000 §2.3.1): run them in a bare instance context and read its clock.
TEST(TpcBits, EachIntrinsicTakesOneIssueOfItsSlot) {
  detail::InstanceContext c;
  c.clock = detail::CoreClock({4, 4, 4, 4, 1, 1});
  detail::current_instance = &c;
  auto issues = [&](int slot) { return c.clock.issues(slot); };
  const int64 a(3);
  const int64 r1 = v_i32_ash_b(a, char256(std::int8_t{1}));
  EXPECT_EQ(issues(detail::kVpu), 1u);
  EXPECT_EQ(r1.ready, 4u);
  const int64 r2 = v_i32_mul_round_b(r1, r1);  // depends on r1: issues when it is ready
  EXPECT_EQ(r2.ready, 8u);
  (void)v_u32_brev_vb(uint64(), 0, uint64(), bool64());
  (void)v_f32_shl_b(float64(), int64());
  (void)v_bf16_mul_acc32_b(bfloat128(), bfloat128());
  (void)v_f32_mov_dual_group_all_b(float64(), 0, 0, 1, 2, 3, 0, float64());
  (void)v_i1_mov_flavor_b(1, 0, 0, bool256());
  (void)read_lane_id_4b_vb(uint64(), bool64());
  EXPECT_EQ(issues(detail::kVpu), 8u);
  (void)s_i32_ash(1, 1);
  (void)s_f32_brev(1.0f);
  (void)s_f32_fclass(1.0f);
  (void)mov_irf_dim(int5{}, 0, 0);
  (void)prmt_indx(int5{}, 0, 0);
  (void)set_indx(0, int5{}, 1, 0);
  EXPECT_EQ(issues(detail::kSpu), 6u);
  cache_flush();
  cache_invalidate();
  EXPECT_EQ(issues(detail::kLoad), 2u);
  EXPECT_EQ(issues(detail::kVpu), 8u);
  detail::current_instance = nullptr;
}

}  // namespace
