// The high-level converts of tpc-intrinsics.h (convert_<a>_to_<b>, int_convert_* /
// uint_convert_*) and the vector converts added with them, each against a plain loop: the value
// of every element (rounding modes, saturation at the type limits, NaN and infinities), where it
// lands (the lowering's lane order, and SW_LINEAR's element order), how many VPU issues it takes,
// and the options it refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "tessera/core/error.h"
#include "tessera/targets/tpc/api/tpc.h"
#include "tpc_test_util.h"

using namespace tessera;
using namespace tessera::tpc;

namespace {

using tpc_test::round_to_integer;
using tpc_test::user_error_of;

constexpr int kModes[] = {e_round_half_ne, e_round_zero, e_round_up, e_round_down, e_round_half_az};

// To an integer type: NaN gives 0, the rest rounds and saturates (infinities too).
template <typename T>
T int_ref(double x, int rm) {
  if (std::isnan(x)) return 0;
  const double r = round_to_integer(x, rm);
  if (r <= static_cast<double>(std::numeric_limits<T>::lowest()))
    return std::numeric_limits<T>::lowest();
  if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}
// To a float of `bits` significant bits (24: f32, 8: bf16), x finite and well inside range.
double float_ref(double x, int bits, int rm) {
  if (x == 0) return x;
  int e = 0;
  (void)std::frexp(x, &e);
  const double step = std::ldexp(1.0, e - bits);
  return round_to_integer(x / step, rm) * step;
}

// Counts the VPU issues of what runs inside it, as a program instance would.
struct Issues {
  std::unique_ptr<detail::InstanceContext> context = std::make_unique<detail::InstanceContext>();
  Issues() { detail::current_instance = context.get(); }
  ~Issues() { detail::current_instance = nullptr; }
  Issues(const Issues&) = delete;
  Issues& operator=(const Issues&) = delete;
  std::uint64_t vpu() const { return context->clock.issues(detail::kVpu); }
};

// Lane l of a quad / pair / single register value, in register order.
const float64& reg(const float256& x, int j) {
  return j == 0 ? x.v1 : j == 1 ? x.v2 : j == 2 ? x.v3 : x.v4;
}
const int64& reg(const int256& x, int j) {
  return j == 0 ? x.v1 : j == 1 ? x.v2 : j == 2 ? x.v3 : x.v4;
}

float256 ramp256(float start, float step) {
  float256 x;
  for (int i = 0; i < 256; ++i) {
    float64& r = i < 64 ? x.v1 : i < 128 ? x.v2 : i < 192 ? x.v3 : x.v4;
    r.v[i % 64] = start + step * static_cast<float>(i);
  }
  return x;
}

}  // namespace

TEST(TpcConvert, SameWidthRoundsSaturatesAndMapsNanToZero) {
  float64 f;
  const float probes[] = {2.5f,
                          -2.5f,
                          1.5f,
                          -0.5f,
                          3.7f,
                          -3.7f,
                          1e10f,
                          -1e10f,
                          2147483520.0f,
                          std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()};
  for (int i = 0; i < 64; ++i) f.v[i] = probes[i % 12] + static_cast<float>(i / 12);
  for (int rm : kModes) {
    const int64 r = convert_float64_to_int64(f, rm << 16);
    const uint64 u = convert_float64_to_uint64(f, rm << 16);
    for (int i = 0; i < 64; ++i) {
      EXPECT_EQ(r.v[i], int_ref<std::int32_t>(f.v[i], rm)) << i << " mode " << rm;
      EXPECT_EQ(u.v[i], int_ref<std::uint32_t>(f.v[i], rm)) << i << " mode " << rm;
    }
  }
  int64 n;
  for (int i = 0; i < 64; ++i) n.v[i] = (i % 2 ? -1 : 1) * ((1 << 24) + 1 + 2 * i);
  n.v[0] = std::numeric_limits<std::int32_t>::min();
  for (int rm : kModes) {
    const float64 g = convert_int64_to_float64(n, rm << 16);
    const uint64 nu = convert_int64_to_uint64(n, rm << 16);
    for (int i = 0; i < 64; ++i) {
      EXPECT_EQ(g.v[i], float_ref(n.v[i], 24, rm)) << i << " mode " << rm;
      EXPECT_EQ(nu.v[i], n.v[i] < 0 ? 0u : static_cast<std::uint32_t>(n.v[i])) << i;
    }
  }
  uint64 big(0xfffffff0u);
  EXPECT_EQ(convert_uint64_to_int64(big, 0).v[5], std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(convert_uint64_to_float64(big, SW_RD).v[5], 4294967040.0f);  // 2^32 - 256
  // Register for register in pairs and quads.
  char256 c;
  uchar256 uc;
  for (int i = 0; i < 256; ++i) {
    c.v[i] = static_cast<std::int8_t>(i - 128);
    uc.v[i] = static_cast<std::uint8_t>(i);
  }
  const uchar256 cu = convert_char256_to_uchar256(c, 0);
  const char256 uci = convert_uchar256_to_char256(uc, 0);
  for (int i = 0; i < 256; ++i) {
    EXPECT_EQ(cu.v[i], i < 128 ? 0 : i - 128);
    EXPECT_EQ(uci.v[i], i > 127 ? 127 : i);
  }
  const float256 x = ramp256(-100.25f, 0.75f);
  const int256 xi = convert_float256_to_int256(x, SW_RU);
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 64; ++i) EXPECT_EQ(reg(xi, j).v[i], std::ceil(reg(x, j).v[i])) << j << i;
}

TEST(TpcConvert, WideningInterleavesLanesOrKeepsThemLinear) {
  short128 s;
  for (int i = 0; i < 128; ++i) s.v[i] = static_cast<std::int16_t>(i % 3 ? -300 * i : 32767 - i);
  const int128 w = convert_short128_to_int128(s, 0);
  const int128 lin = convert_short128_to_int128(s, SW_LINEAR);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(w.v1.v[i], s.v[2 * i]);
    EXPECT_EQ(w.v2.v[i], s.v[2 * i + 1]);
    EXPECT_EQ(lin.v1.v[i], s.v[i]);
    EXPECT_EQ(lin.v2.v[i], s.v[64 + i]);
  }
  // 8 -> 32 bits: register k holds the bytes 4i + k (or 64k + i with SW_LINEAR).
  char256 c;
  for (int i = 0; i < 256; ++i) c.v[i] = static_cast<std::int8_t>(i % 5 == 0 ? -128 : i - 120);
  const float256 f = convert_char256_to_float256(c, 0);
  const float256 fl = convert_char256_to_float256(c, SW_LINEAR);
  const uint256 u = convert_char256_to_uint256(c, 0);
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 64; ++i) {
      EXPECT_EQ(reg(f, k).v[i], static_cast<float>(c.v[4 * i + k])) << k << " " << i;
      EXPECT_EQ(reg(fl, k).v[i], static_cast<float>(c.v[64 * k + i])) << k << " " << i;
      const std::int8_t e = c.v[4 * i + k];
      const std::uint32_t got = k == 0   ? u.v1.v[i]
                                : k == 1 ? u.v2.v[i]
                                : k == 2 ? u.v3.v[i]
                                         : u.v4.v[i];
      EXPECT_EQ(got, e < 0 ? 0u : static_cast<std::uint32_t>(e));
    }
  // 8 -> 16 bits and a pair into a quad (two chunks of one register into two).
  uchar256 b;
  for (int i = 0; i < 256; ++i) b.v[i] = static_cast<std::uint8_t>(255 - i);
  const short256 bs = convert_uchar256_to_short256(b, 0);
  for (int i = 0; i < 128; ++i) {
    EXPECT_EQ(bs.v1.v[i], b.v[2 * i]);
    EXPECT_EQ(bs.v2.v[i], b.v[2 * i + 1]);
  }
  const int256 si = convert_short256_to_int256(bs, 0);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(si.v1.v[i], bs.v1.v[2 * i]);
    EXPECT_EQ(si.v2.v[i], bs.v1.v[2 * i + 1]);
    EXPECT_EQ(si.v3.v[i], bs.v2.v[2 * i]);
    EXPECT_EQ(si.v4.v[i], bs.v2.v[2 * i + 1]);
  }
  bfloat128 h;
  for (int i = 0; i < 128; ++i) h.v[i] = tessera::bf16(0.5f * static_cast<float>(i) - 17.0f);
  const float128 hf = convert_bfloat128_to_float128(h, 0);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(hf.v1.v[i], static_cast<float>(h.v[2 * i]));
    EXPECT_EQ(hf.v2.v[i], static_cast<float>(h.v[2 * i + 1]));
  }
}

TEST(TpcConvert, NarrowingRoundsSaturatesAndInterleaves) {
  // 4 -> 1: register j goes to lanes 4i + j, every rounding mode, saturation, NaN, infinities.
  float256 x = ramp256(-160.5f, 1.25f);
  x.v1.v[3] = std::numeric_limits<float>::quiet_NaN();
  x.v2.v[4] = std::numeric_limits<float>::infinity();
  x.v3.v[5] = -std::numeric_limits<float>::infinity();
  x.v4.v[6] = 2.5f;
  x.v4.v[7] = -2.5f;
  for (int rm : kModes) {
    const char256 c = convert_float256_to_char256(x, rm << 16);
    const uchar256 u = convert_float256_to_uchar256(x, rm << 16);
    const char256 lin = convert_float256_to_char256(x, (rm << 16) | SW_LINEAR);
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 64; ++i) {
        const double e = reg(x, j).v[i];
        EXPECT_EQ(c.v[4 * i + j], int_ref<std::int8_t>(e, rm)) << j << " " << i << " " << rm;
        EXPECT_EQ(u.v[4 * i + j], int_ref<std::uint8_t>(e, rm)) << j << " " << i << " " << rm;
        EXPECT_EQ(lin.v[64 * j + i], int_ref<std::int8_t>(e, rm)) << j << " " << i << " " << rm;
      }
  }
  // 2 -> 1 integers saturate at the narrower type's limits.
  int128 w;
  for (int i = 0; i < 64; ++i) {
    w.v1.v[i] = (i % 2 ? 1 : -1) * 1000 * i;
    w.v2.v[i] = i == 0 ? std::numeric_limits<std::int32_t>::max() : -w.v1.v[i] + 7;
  }
  const short128 s = convert_int128_to_short128(w, 0);
  const ushort128 us = convert_int128_to_ushort128(w, 0);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(s.v[2 * i], int_ref<std::int16_t>(w.v1.v[i], 0));
    EXPECT_EQ(s.v[2 * i + 1], int_ref<std::int16_t>(w.v2.v[i], 0));
    EXPECT_EQ(us.v[2 * i], int_ref<std::uint16_t>(w.v1.v[i], 0));
    EXPECT_EQ(us.v[2 * i + 1], int_ref<std::uint16_t>(w.v2.v[i], 0));
  }
  // f32 -> bf16 in each mode, and a quad into a pair (two chunks).
  float128 f;
  for (int i = 0; i < 64; ++i) {
    f.v1.v[i] = 1.0f + static_cast<float>(i) * 0.00390625f + 0.001f;  // between bf16 steps
    f.v2.v[i] = -f.v1.v[i] * 3.0f;
  }
  for (int rm : kModes) {
    const bfloat128 b = convert_float128_to_bfloat128(f, rm << 16);
    const bfloat128 bl = convert_float128_to_bfloat128(f, (rm << 16) | SW_LINEAR);
    for (int i = 0; i < 64; ++i) {
      EXPECT_EQ(static_cast<float>(b.v[2 * i]), float_ref(f.v1.v[i], 8, rm)) << i << " " << rm;
      EXPECT_EQ(static_cast<float>(b.v[2 * i + 1]), float_ref(f.v2.v[i], 8, rm)) << i;
      EXPECT_EQ(static_cast<float>(bl.v[i]), float_ref(f.v1.v[i], 8, rm)) << i;
      EXPECT_EQ(static_cast<float>(bl.v[64 + i]), float_ref(f.v2.v[i], 8, rm)) << i;
    }
  }
  int256 q;
  for (int i = 0; i < 64; ++i) {
    q.v1.v[i] = 40000 + i;
    q.v2.v[i] = -i;
    q.v3.v[i] = -40000 - i;
    q.v4.v[i] = 3 * i;
  }
  const short256 qs = convert_int256_to_short256(q, 0);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(qs.v1.v[2 * i], 32767);
    EXPECT_EQ(qs.v1.v[2 * i + 1], -i);
    EXPECT_EQ(qs.v2.v[2 * i], -32768);
    EXPECT_EQ(qs.v2.v[2 * i + 1], 3 * i);
  }
  // 16 -> 8 bits from a pair.
  short256 p;
  for (int i = 0; i < 128; ++i) {
    p.v1.v[i] = static_cast<std::int16_t>(i * 3 - 200);
    p.v2.v[i] = static_cast<std::int16_t>(-i * 5 + 100);
  }
  const char256 pc = convert_short256_to_char256(p, 0);
  for (int i = 0; i < 128; ++i) {
    EXPECT_EQ(pc.v[2 * i], int_ref<std::int8_t>(p.v1.v[i], 0));
    EXPECT_EQ(pc.v[2 * i + 1], int_ref<std::int8_t>(p.v2.v[i], 0));
  }
}

TEST(TpcConvert, IntegersToFloatsRoundInTheMode) {
  int128 w;
  for (int i = 0; i < 64; ++i) {
    w.v1.v[i] = 257 + 2 * i;  // odd: between two bf16 values from 256 on
    w.v2.v[i] = -(259 + 4 * i);
  }
  ushort256 h;
  for (int i = 0; i < 128; ++i) {
    h.v1.v[i] = static_cast<std::uint16_t>(65535 - 3 * i);
    h.v2.v[i] = static_cast<std::uint16_t>(513 + 2 * i);
  }
  int256 q;
  for (int i = 0; i < 64; ++i) {
    q.v1.v[i] = (1 << 24) + 1 + 2 * i;  // odd: between two f32 values
    q.v2.v[i] = -q.v1.v[i];
    q.v3.v[i] = std::numeric_limits<std::int32_t>::max() - i;
    q.v4.v[i] = i;
  }
  for (int rm : kModes) {
    const bfloat128 b = convert_int128_to_bfloat128(w, rm << 16);
    for (int i = 0; i < 64; ++i) {
      EXPECT_EQ(static_cast<float>(b.v[2 * i]), float_ref(w.v1.v[i], 8, rm)) << i << " " << rm;
      EXPECT_EQ(static_cast<float>(b.v[2 * i + 1]), float_ref(w.v2.v[i], 8, rm)) << i;
    }
    const bfloat256 hb = convert_ushort256_to_bfloat256(h, (rm << 16) | SW_LINEAR);
    for (int i = 0; i < 128; ++i) {
      EXPECT_EQ(static_cast<float>(hb.v1.v[i]), float_ref(h.v1.v[i], 8, rm)) << i << " " << rm;
      EXPECT_EQ(static_cast<float>(hb.v2.v[i]), float_ref(h.v2.v[i], 8, rm)) << i << " " << rm;
    }
    const float256 qf = convert_int256_to_float256(q, rm << 16);
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 64; ++i)
        EXPECT_EQ(reg(qf, j).v[i], float_ref(reg(q, j).v[i], 24, rm)) << j << " " << i;
  }
}

TEST(TpcConvert, RoundTripsThroughEveryWidthKeepTheElementOrder) {
  uchar256 b;
  for (int i = 0; i < 256; ++i) b.v[i] = static_cast<std::uint8_t>((i * 37) & 0xff);
  for (int linear : {0, static_cast<int>(SW_LINEAR)}) {
    const uchar256 via32 =
        convert_float256_to_uchar256(convert_uchar256_to_float256(b, linear), linear);
    const uchar256 via16 =
        convert_ushort256_to_uchar256(convert_uchar256_to_ushort256(b, linear), linear);
    const uchar256 viabf =
        convert_bfloat256_to_uchar256(convert_uchar256_to_bfloat256(b, linear), linear);
    for (int i = 0; i < 256; ++i) {
      EXPECT_EQ(via32.v[i], b.v[i]) << i;
      EXPECT_EQ(via16.v[i], b.v[i]) << i;
      EXPECT_EQ(viabf.v[i], b.v[i]) << i;
    }
  }
}

TEST(TpcConvert, CostsOneVpuIssuePerConvertOfTheLowering) {
  {
    Issues n;
    (void)convert_int64_to_float64(int64(3), 0);
    EXPECT_EQ(n.vpu(), 1u);
  }
  {
    Issues n;
    (void)convert_int128_to_short128(int128{}, 0);  // two CONVERTs, lane 0 and lane 1
    EXPECT_EQ(n.vpu(), 2u);
  }
  {
    Issues n;
    (void)convert_float256_to_char256(float256{}, SW_RZ);  // four CONVERTs
    EXPECT_EQ(n.vpu(), 4u);
  }
  {
    Issues n;
    (void)convert_char256_to_float256(char256(1), 0);  // four CONVERTs and three SHRs
    EXPECT_EQ(n.vpu(), 7u);
  }
  {
    Issues n;
    (void)convert_short256_to_int256(short256{}, 0);  // two chunks of two
    EXPECT_EQ(n.vpu(), 4u);
  }
  {
    Issues n;  // f32 <-> bf16 over a pair: one CONVERT with a pair operand
    (void)convert_float128_to_bfloat128(float128{}, 0);
    (void)convert_bfloat128_to_float128(bfloat128(), 0);
    EXPECT_EQ(n.vpu(), 2u);
  }
  std::uint64_t swizzled = 0;
  {
    Issues n;
    (void)convert_float256_to_bfloat256(float256{}, 0);
    swizzled = n.vpu();
  }
  Issues n;
  (void)convert_float256_to_bfloat256(float256{}, SW_LINEAR);
  EXPECT_GT(n.vpu(), swizzled);  // the lane moves of the linear order cost extra
}

TEST(TpcConvert, OptionsOtherThanARoundingModeAndLinearAreUserErrors) {
  const float128 f{};
  std::string msg = user_error_of([&] { (void)convert_float128_to_int128(f, SW_SR); });
  EXPECT_NE(msg.find("convert_float128_to_int128"), std::string::npos) << msg;
  EXPECT_NE(msg.find("SW_SR"), std::string::npos) << msg;
  msg = user_error_of([&] { (void)convert_float128_to_int128(f, SW_SR_RNE); });
  EXPECT_NE(msg.find("convert_float128_to_int128"), std::string::npos) << msg;
  msg = user_error_of([&] { (void)convert_float256_to_char256(float256{}, SW_CLIP_FP); });
  EXPECT_NE(msg.find("convert_float256_to_char256"), std::string::npos) << msg;
  msg = user_error_of([&] { (void)convert_char256_to_int256(char256(), 1 << 3); });
  EXPECT_NE(msg.find("convert_char256_to_int256"), std::string::npos) << msg;
  msg = user_error_of([&] { (void)int_convert_int128_to_short128(int128{}, short128(), SW_RHAZ); });
  EXPECT_NE(msg.find("int_convert_int128_to_short128"), std::string::npos) << msg;
  msg =
      user_error_of([&] { (void)uint_convert_uint256_to_uchar256(uint256{}, uchar256(), SW_SR); });
  EXPECT_NE(msg.find("uint_convert_uint256_to_uchar256"), std::string::npos) << msg;
}

TEST(TpcConvert, CsrRoundingTakesTheConvertCsrsMode) {
  Issues in_a_kernel;  // the convert CSR is a register of the running core
  float256 x = ramp256(-8.5f, 0.5f);
  int128 w;
  for (int i = 0; i < 64; ++i) {
    w.v1.v[i] = 4 * i + 2;  // halves after a shift by 2
    w.v2.v[i] = -(4 * i + 2);
  }
  for (int rm : {e_round_half_ne, e_round_zero, e_round_up, e_round_down}) {
    set_convert_csr_value(rm);
    const char256 c = convert_float256_to_char256(x, SW_CSR);
    const char256 direct = convert_float256_to_char256(x, rm << 16);
    const short128 s = int_convert_int128_to_short128(w, short128(2), SW_CSR);
    const short128 sd = int_convert_int128_to_short128(w, short128(2), rm << 16);
    for (int i = 0; i < 256; ++i) EXPECT_EQ(c.v[i], direct.v[i]) << i << " " << rm;
    for (int i = 0; i < 128; ++i) EXPECT_EQ(s.v[i], sd.v[i]) << i << " " << rm;
  }
  set_convert_csr_value(e_round_up);  // lane 8 is x.v1's element 2, -7.5
  EXPECT_EQ(convert_float256_to_char256(x, SW_CSR).v[8], -7);
  set_convert_csr_value(e_round_down);
  EXPECT_EQ(convert_float256_to_char256(x, SW_CSR).v[8], -8);
}

TEST(TpcConvert, IntConvertShiftsEachResultByItsOwnShift) {
  int128 a;
  short128 shift;
  for (int i = 0; i < 64; ++i) {
    a.v1.v[i] = (i % 2 ? -1 : 1) * (1000 * i + 3);
    a.v2.v[i] = i == 7 ? std::numeric_limits<std::int32_t>::max() : 77 * i - 900;
  }
  for (int n = 0; n < 128; ++n) shift.v[n] = static_cast<std::int16_t>(n % 7 - 2);
  auto ref = [](long long x, int sh, int rm, long long lo, long long hi) {
    const double r = round_to_integer(std::ldexp(static_cast<double>(x), -sh), rm);
    return r < lo ? lo : r > hi ? hi : static_cast<long long>(r);
  };
  for (int rm : {e_round_half_ne, e_round_zero, e_round_up, e_round_down}) {
    const short128 r = int_convert_int128_to_short128(a, shift, rm << 16);
    const short128 l = int_convert_int128_to_short128(a, shift, (rm << 16) | SW_LINEAR);
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 2; ++j) {
        const long long x = j == 0 ? a.v1.v[i] : a.v2.v[i];
        EXPECT_EQ(r.v[2 * i + j], ref(x, shift.v[2 * i + j], rm, -32768, 32767)) << i << j << rm;
        EXPECT_EQ(l.v[64 * j + i], ref(x, shift.v[64 * j + i], rm, -32768, 32767)) << i << j;
      }
  }
  uint256 u;
  uchar256 ushift;
  for (int i = 0; i < 64; ++i) {
    u.v1.v[i] = 1000u * static_cast<std::uint32_t>(i);
    u.v2.v[i] = 255u + static_cast<std::uint32_t>(i);
    u.v3.v[i] = 0xffffffffu;
    u.v4.v[i] = static_cast<std::uint32_t>(i);
  }
  for (int n = 0; n < 256; ++n) ushift.v[n] = static_cast<std::uint8_t>(n % 5);
  const uchar256 ur = uint_convert_uint256_to_uchar256(u, ushift, SW_RD);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 4; ++j) {
      const long long x = j == 0 ? u.v1.v[i] : j == 1 ? u.v2.v[i] : j == 2 ? u.v3.v[i] : u.v4.v[i];
      EXPECT_EQ(ur.v[4 * i + j], ref(x, ushift.v[4 * i + j], e_round_down, 0, 255)) << i << j;
    }
  // int_convert_short256_to_char256 takes an int256 value, as tpc-intrinsics.h declares it.
  int256 q;
  short256 qs;
  for (int i = 0; i < 64; ++i) {
    q.v1.v[i] = 100 * i;
    q.v2.v[i] = -100 * i;
    q.v3.v[i] = i;
    q.v4.v[i] = -i;
  }
  for (int n = 0; n < 128; ++n) {
    qs.v1.v[n] = static_cast<std::int16_t>(n % 4);
    qs.v2.v[n] = static_cast<std::int16_t>(-(n % 3));
  }
  const char256 qc = int_convert_short256_to_char256(q, qs, 0);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 4; ++j) {
      const int n = 4 * i + j;
      const long long x = reg(q, j).v[i];
      const int sh = n < 128 ? qs.v1.v[n] : qs.v2.v[n - 128];
      EXPECT_EQ(qc.v[n], ref(x, sh, e_round_half_ne, -128, 127)) << n;
    }
  Issues issues;
  (void)int_convert_int256_to_char256(q, char256(0), 0);
  EXPECT_EQ(issues.vpu(), 4u);  // one CONVERT_INT32 per source register
}

TEST(TpcConvert, VectorConvertsOfTheGaudiSetAgainstPlainLoops) {
  short128 s;
  char256 c;
  ushort128 us;
  int64 w;
  for (int i = 0; i < 128; ++i) {
    s.v[i] = static_cast<std::int16_t>(i % 2 ? -257 * i : 255 * i);
    us.v[i] = static_cast<std::uint16_t>(i * 511 + 1);
  }
  for (int i = 0; i < 256; ++i) c.v[i] = static_cast<std::int8_t>(i % 3 ? i - 128 : 127 - i / 2);
  for (int i = 0; i < 64; ++i) w.v[i] = i % 2 ? -i * 1000 : i * 1000;
  const float64 sf = v_convert_i16_to_f32_b(s);
  const uint64 su = v_convert_i16_to_u32_b(s);
  const float64 cf = v_convert_i8_to_f32_b(c);
  const uint64 cu32 = v_convert_i8_to_u32_b(c);
  const uint64 wu = v_convert_i32_to_u32_b(w);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(sf.v[i], static_cast<float>(s.v[2 * i]));  // an up-convert reads lane 0
    EXPECT_EQ(su.v[i], s.v[2 * i] < 0 ? 0u : static_cast<std::uint32_t>(s.v[2 * i]));
    EXPECT_EQ(cf.v[i], static_cast<float>(c.v[4 * i]));
    EXPECT_EQ(cu32.v[i], c.v[4 * i] < 0 ? 0u : static_cast<std::uint32_t>(c.v[4 * i]));
    EXPECT_EQ(wu.v[i], w.v[i] < 0 ? 0u : static_cast<std::uint32_t>(w.v[i]));
  }
  const short128 ci = v_convert_i8_to_i16_b(c);
  const ushort128 cu16 = v_convert_i8_to_u16_b(c);
  const ushort128 su16 = v_convert_i16_to_u16_b(s);
  for (int i = 0; i < 128; ++i) {
    EXPECT_EQ(ci.v[i], c.v[2 * i]);
    EXPECT_EQ(cu16.v[i], c.v[2 * i] < 0 ? 0 : c.v[2 * i]);
    EXPECT_EQ(su16.v[i], s.v[i] < 0 ? 0 : s.v[i]);
  }
  const uchar256 cu8 = v_convert_i8_to_u8_b(c);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(cu8.v[i], c.v[i] < 0 ? 0 : c.v[i]);
  for (int rm : kModes) {
    const bfloat128 b = v_convert_u16_to_bf16_b(us, rm << 16);
    for (int i = 0; i < 128; ++i)
      EXPECT_EQ(static_cast<float>(b.v[i]), float_ref(us.v[i], 8, rm)) << i << " " << rm;
  }
  // _vb: lanes whose predicate is off keep income.
  bool256 p;
  for (int i = 0; i < 256; ++i) p.b[i] = static_cast<unsigned char>(i % 3 == 0 ? 0xff : 0);
  const float64 income(-7.0f);
  const float64 sv = v_convert_i16_to_f32_vb(s, 0, income, to_bool64(p));
  const ushort128 uincome(9);
  const ushort128 uv = v_convert_i16_to_u16_vb(s, 0, uincome, to_bool128(p));
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(sv.v[i], to_bool64(p).lane<64>(i) ? static_cast<float>(s.v[2 * i]) : -7.0f) << i;
  for (int i = 0; i < 128; ++i)
    EXPECT_EQ(uv.v[i], to_bool128(p).lane<128>(i) ? (s.v[i] < 0 ? 0 : s.v[i]) : 9) << i;
  std::string msg = user_error_of([&] { (void)v_convert_i8_to_u8_b(c, SW_SR); });
  EXPECT_NE(msg.find("v_convert_i8_to_u8"), std::string::npos) << msg;
  // Gaudi's CONVERT takes no SW_CLIP_FP (Gaudi2) and no SW_LINEAR (a high-level option).
  msg = user_error_of([&] { (void)v_convert_i16_to_f32_b(s, SW_CLIP_FP); });
  EXPECT_NE(msg.find("v_convert_i16_to_f32_b"), std::string::npos) << msg;
  msg = user_error_of([&] { (void)v_convert_f32_to_bf16_all_b(float128{}, SW_LINEAR); });
  EXPECT_NE(msg.find("v_convert_f32_to_bf16_all_b"), std::string::npos) << msg;
}
