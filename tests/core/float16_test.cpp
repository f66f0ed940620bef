// Exhaustive checks of the f16 / bf16 conversions against references that share no code with
// them: GCC's _Float16 (libgcc's soft-float conversions) and an ldexp-based exact decode.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "tessera/core/dtype.h"

namespace tessera {
namespace {

__extension__ typedef _Float16 gcc_half;

float gcc_half_to_float(std::uint16_t bits) {
  gcc_half h;
  std::memcpy(&h, &bits, sizeof h);
  return static_cast<float>(h);
}

std::uint16_t gcc_float_to_half(float f) {
  const gcc_half h = static_cast<gcc_half>(f);
  std::uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}

// Decodes sign / exponent / mantissa fields with ldexp: exact for both 16-bit formats.
double ldexp_decode(std::uint16_t bits, int exponent_bits, int mantissa_bits) {
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const bool negative = (bits >> 15) & 1;
  const int exponent = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1);
  const int mantissa = bits & ((1 << mantissa_bits) - 1);
  double magnitude;
  if (exponent == (1 << exponent_bits) - 1)
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  else if (exponent == 0)
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - bias - mantissa_bits);
  else
    magnitude = std::ldexp(static_cast<double>(mantissa + (1 << mantissa_bits)),
                           exponent - bias - mantissa_bits);
  return negative ? -magnitude : magnitude;
}

std::uint32_t float_bits(float f) {
  return std::bit_cast<std::uint32_t>(f);
}

bool is_f16_nan(std::uint16_t h) {
  return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
}
bool is_bf16_nan(std::uint16_t b) {
  return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0;
}

TEST(F16, DecodesEveryBitPatternExactly) {
  for (std::uint32_t i = 0; i < 0x10000u; ++i) {
    const auto h = static_cast<std::uint16_t>(i);
    const float got = f16_bits_to_f32(h);
    const double exact = ldexp_decode(h, 5, 10);
    if (std::isnan(exact)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << i;
      ASSERT_EQ(std::signbit(got), std::signbit(gcc_half_to_float(h))) << std::hex << i;
      continue;
    }
    ASSERT_EQ(static_cast<double>(got), exact) << std::hex << i;
    ASSERT_EQ(std::signbit(got), (h & 0x8000u) != 0) << std::hex << i;  // -0 stays -0
    ASSERT_EQ(float_bits(got), float_bits(gcc_half_to_float(h))) << std::hex << i;
  }
}

TEST(F16, EveryFiniteValueRoundTrips) {
  for (std::uint32_t i = 0; i < 0x10000u; ++i) {
    const auto h = static_cast<std::uint16_t>(i);
    if (is_f16_nan(h)) continue;
    ASSERT_EQ(f32_to_f16_bits(f16_bits_to_f32(h)), h) << std::hex << i;
  }
}

// At each midpoint between adjacent f16 values the result is the even neighbour; one f32 ulp
// above goes up, one below goes down. Covers subnormals, the normal range and both signs.
TEST(F16, RoundsToNearestEvenAtEveryMidpoint) {
  for (std::uint32_t sign : {0u, 0x8000u}) {
    for (std::uint32_t lo = 0; lo < 0x7bffu; ++lo) {
      const auto a = static_cast<std::uint16_t>(sign | lo);
      const auto b = static_cast<std::uint16_t>(sign | (lo + 1));
      const double da = ldexp_decode(a, 5, 10), db = ldexp_decode(b, 5, 10);
      const auto mid = static_cast<float>((da + db) / 2);  // exact: needs 12 significant bits
      ASSERT_EQ(static_cast<double>(mid), (da + db) / 2);
      const std::uint16_t even = (lo & 1u) == 0 ? a : b;
      ASSERT_EQ(f32_to_f16_bits(mid), even) << std::hex << lo;
      const float toward_b = std::nextafter(mid, sign ? -INFINITY : INFINITY);
      const float toward_a = std::nextafter(mid, sign ? INFINITY : -INFINITY);
      ASSERT_EQ(f32_to_f16_bits(toward_b), b) << std::hex << lo;
      ASSERT_EQ(f32_to_f16_bits(toward_a), a) << std::hex << lo;
      ASSERT_EQ(gcc_float_to_half(mid), even) << "reference disagrees at " << std::hex << lo;
    }
  }
}

TEST(F16, OverflowsToInfinityAtTheRoundingBoundary) {
  EXPECT_EQ(f32_to_f16_bits(65504.0f), 0x7bffu);                        // largest finite
  EXPECT_EQ(f32_to_f16_bits(std::nextafter(65520.0f, 0.0f)), 0x7bffu);  // just below midpoint
  EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7c00u);                        // tie goes to even: inf
  EXPECT_EQ(f32_to_f16_bits(-65520.0f), 0xfc00u);
  EXPECT_EQ(f32_to_f16_bits(1e10f), 0x7c00u);
  EXPECT_EQ(f32_to_f16_bits(std::numeric_limits<float>::max()), 0x7c00u);
  EXPECT_EQ(f32_to_f16_bits(INFINITY), 0x7c00u);
  EXPECT_EQ(f32_to_f16_bits(-INFINITY), 0xfc00u);
}

TEST(F16, SubnormalsAndZeros) {
  EXPECT_EQ(f32_to_f16_bits(0.0f), 0x0000u);
  EXPECT_EQ(f32_to_f16_bits(-0.0f), 0x8000u);
  EXPECT_EQ(f32_to_f16_bits(0x1p-24f), 0x0001u);  // smallest subnormal
  EXPECT_EQ(f32_to_f16_bits(0x1p-25f), 0x0000u);  // tie with 0: even
  EXPECT_EQ(f32_to_f16_bits(std::nextafter(0x1p-25f, 1.0f)), 0x0001u);
  EXPECT_EQ(f32_to_f16_bits(-0x1p-25f), 0x8000u);
  EXPECT_EQ(f32_to_f16_bits(0x1p-30f), 0x0000u);  // underflow to 0
  EXPECT_EQ(f32_to_f16_bits(std::numeric_limits<float>::denorm_min()), 0x0000u);
  EXPECT_EQ(f32_to_f16_bits(0x1p-14f), 0x0400u);    // smallest normal
  EXPECT_EQ(f32_to_f16_bits(0x3ffp-24f), 0x03ffu);  // largest subnormal
  EXPECT_EQ(f32_to_f16_bits(0x7ffp-25f), 0x0400u);  // midpoint largest subnormal/min normal
}

TEST(F16, NanStaysNan) {
  for (std::uint32_t payload : {0x1u, 0x2000u, 0x400000u, 0x7fffffu, 0x1000u, 0x3fffffu}) {
    for (std::uint32_t sign : {0u, 0x80000000u}) {
      const float nan = std::bit_cast<float>(sign | 0x7f800000u | payload);
      ASSERT_TRUE(std::isnan(nan));
      const std::uint16_t h = f32_to_f16_bits(nan);
      EXPECT_TRUE(is_f16_nan(h)) << std::hex << payload << " -> " << h;
      EXPECT_EQ((h & 0x8000u) != 0, sign != 0);
      EXPECT_TRUE(std::isnan(f16_bits_to_f32(h)));
    }
  }
}

// A sweep over about a million f32 bit patterns of every exponent, compared with libgcc.
TEST(F16, AgreesWithGccOnASweepOfFloats) {
  for (std::uint64_t x = 0; x <= 0xffffffffu; x += 4093) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(x));
    const std::uint16_t got = f32_to_f16_bits(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(is_f16_nan(got)) << std::hex << x;
      continue;
    }
    ASSERT_EQ(got, gcc_float_to_half(f)) << std::hex << x;
  }
}

TEST(Bf16, DecodesEveryBitPatternExactly) {
  for (std::uint32_t i = 0; i < 0x10000u; ++i) {
    const auto b = static_cast<std::uint16_t>(i);
    const float got = bf16_bits_to_f32(b);
    const double exact = ldexp_decode(b, 8, 7);
    if (std::isnan(exact)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << i;
      continue;
    }
    ASSERT_EQ(static_cast<double>(got), exact) << std::hex << i;
    ASSERT_EQ(std::signbit(got), (b & 0x8000u) != 0) << std::hex << i;
  }
}

TEST(Bf16, EveryFiniteValueRoundTrips) {
  for (std::uint32_t i = 0; i < 0x10000u; ++i) {
    const auto b = static_cast<std::uint16_t>(i);
    if (is_bf16_nan(b)) continue;
    ASSERT_EQ(f32_to_bf16_bits(bf16_bits_to_f32(b)), b) << std::hex << i;
  }
}

TEST(Bf16, RoundsToNearestEvenAtEveryMidpoint) {
  for (std::uint32_t sign : {0u, 0x8000u}) {
    for (std::uint32_t lo = 0; lo < 0x7f7fu; ++lo) {
      const auto a = static_cast<std::uint16_t>(sign | lo);
      const auto b = static_cast<std::uint16_t>(sign | (lo + 1));
      const double da = ldexp_decode(a, 8, 7), db = ldexp_decode(b, 8, 7);
      const auto mid = static_cast<float>((da + db) / 2);  // exact: needs 9 significant bits
      ASSERT_EQ(static_cast<double>(mid), (da + db) / 2);
      const std::uint16_t even = (lo & 1u) == 0 ? a : b;
      ASSERT_EQ(f32_to_bf16_bits(mid), even) << std::hex << lo;
      const float toward_b = std::nextafter(mid, sign ? -INFINITY : INFINITY);
      const float toward_a = std::nextafter(mid, sign ? INFINITY : -INFINITY);
      ASSERT_EQ(f32_to_bf16_bits(toward_b), b) << std::hex << lo;
      ASSERT_EQ(f32_to_bf16_bits(toward_a), a) << std::hex << lo;
    }
  }
}

TEST(Bf16, OverflowsToInfinityAtTheRoundingBoundary) {
  const float largest = bf16_bits_to_f32(0x7f7fu);
  EXPECT_EQ(f32_to_bf16_bits(largest), 0x7f7fu);
  const float midpoint = std::bit_cast<float>(0x7f7f8000u);  // halfway to 2^128
  EXPECT_EQ(f32_to_bf16_bits(std::nextafter(midpoint, 0.0f)), 0x7f7fu);
  EXPECT_EQ(f32_to_bf16_bits(midpoint), 0x7f80u);  // 0x7f7f is odd: the tie goes to inf
  EXPECT_EQ(f32_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80u);
  EXPECT_EQ(f32_to_bf16_bits(-std::numeric_limits<float>::max()), 0xff80u);
  EXPECT_EQ(f32_to_bf16_bits(INFINITY), 0x7f80u);
  EXPECT_EQ(f32_to_bf16_bits(-INFINITY), 0xff80u);
}

TEST(Bf16, SubnormalsAndZeros) {
  EXPECT_EQ(f32_to_bf16_bits(0.0f), 0x0000u);
  EXPECT_EQ(f32_to_bf16_bits(-0.0f), 0x8000u);
  EXPECT_EQ(f32_to_bf16_bits(0x1p-133f), 0x0001u);  // smallest bf16 subnormal
  EXPECT_EQ(f32_to_bf16_bits(0x1p-134f), 0x0000u);  // tie with 0: even
  EXPECT_EQ(f32_to_bf16_bits(std::nextafter(0x1p-134f, 1.0f)), 0x0001u);
  EXPECT_EQ(f32_to_bf16_bits(std::numeric_limits<float>::denorm_min()), 0x0000u);
  EXPECT_EQ(f32_to_bf16_bits(std::numeric_limits<float>::min()), 0x0080u);  // smallest normal
}

TEST(Bf16, NanStaysNanIncludingSignallingPayloadsThatTruncateToInf) {
  for (std::uint32_t payload : {0x1u, 0x7fffu, 0x8000u, 0x400000u, 0x7fffffu, 0x10000u}) {
    for (std::uint32_t sign : {0u, 0x80000000u}) {
      const float nan = std::bit_cast<float>(sign | 0x7f800000u | payload);
      const std::uint16_t b = f32_to_bf16_bits(nan);
      EXPECT_TRUE(is_bf16_nan(b)) << std::hex << payload << " -> " << b;
      EXPECT_EQ((b & 0x8000u) != 0, sign != 0);
    }
  }
}

// Reference rounding for bf16 done in double: pick the nearer of the two neighbours, ties even.
std::uint16_t reference_bf16(float f) {
  const std::uint32_t x = float_bits(f);
  const auto down = static_cast<std::uint16_t>(x >> 16);  // truncation toward zero
  const auto up = static_cast<std::uint16_t>(down + 1);
  const double v = std::fabs(static_cast<double>(f));
  const double dv = std::fabs(ldexp_decode(down, 8, 7));
  // Past the largest finite value the next step up is 2^128 (which then rounds to infinity).
  const double uv = (up & 0x7fffu) == 0x7f80u ? 0x1p128 : std::fabs(ldexp_decode(up, 8, 7));
  if (v - dv < uv - v) return down;
  if (uv - v < v - dv) return up;
  return (down & 1u) == 0 ? down : up;
}

TEST(Bf16, AgreesWithAReferenceOnASweepOfFloats) {
  for (std::uint64_t x = 0; x <= 0xffffffffu; x += 4093) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(x));
    if (std::isnan(f) || std::isinf(f)) continue;
    ASSERT_EQ(f32_to_bf16_bits(f), reference_bf16(f)) << std::hex << x;
  }
}

TEST(HalfTypes, StorageWrappersConvertThroughTheBitFunctions) {
  EXPECT_EQ(f16(1.0f).bits, 0x3c00u);
  EXPECT_EQ(static_cast<float>(f16::from_bits(0xc000u)), -2.0f);
  EXPECT_EQ(bf16(1.0f).bits, 0x3f80u);
  EXPECT_EQ(static_cast<float>(bf16::from_bits(0x4040u)), 3.0f);
  EXPECT_EQ(sizeof(f16), 2u);
  EXPECT_EQ(sizeof(bf16), 2u);
}

}  // namespace
}  // namespace tessera
