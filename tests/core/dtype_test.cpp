// DType names and sizes, saturate_cast (ranges, round half to even, NaN -> 0) and the generic
// load/store helpers built on them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "tessera/core/dtype.h"

namespace tessera {
namespace {

TEST(DType, NamesSizesAndKinds) {
  struct Expect {
    DType type;
    const char* name;
    std::size_t size;
    bool floating;
    bool is_signed;
  };
  const Expect table[] = {
      {DType::f32, "f32", 4, true, true},   {DType::f16, "f16", 2, true, true},
      {DType::bf16, "bf16", 2, true, true}, {DType::i32, "i32", 4, false, true},
      {DType::u32, "u32", 4, false, false}, {DType::i16, "i16", 2, false, true},
      {DType::u16, "u16", 2, false, false}, {DType::i8, "i8", 1, false, true},
      {DType::u8, "u8", 1, false, false},   {DType::boolean, "bool", 1, false, false},
      {DType::i64, "i64", 8, false, true},  {DType::u64, "u64", 8, false, false},
      {DType::f64, "f64", 8, true, true},
  };
  ASSERT_EQ(std::size(table), std::size(kAllDTypes));
  for (const Expect& e : table) {
    SCOPED_TRACE(e.name);
    EXPECT_EQ(dtype_name(e.type), e.name);
    EXPECT_EQ(dtype_size(e.type), e.size);
    EXPECT_EQ(is_floating(e.type), e.floating);
    EXPECT_EQ(is_signed(e.type), e.is_signed);
    ASSERT_TRUE(parse_dtype(e.name).has_value());
    EXPECT_EQ(*parse_dtype(e.name), e.type);
  }
}

TEST(DType, ParseRejectsUnknownNames) {
  EXPECT_FALSE(parse_dtype("float32").has_value());
  EXPECT_FALSE(parse_dtype("F32").has_value());
  EXPECT_FALSE(parse_dtype("").has_value());
  EXPECT_FALSE(parse_dtype("boolean").has_value());
}

TEST(SaturateCast, FloatToIntRoundsHalfToEven) {
  EXPECT_EQ(saturate_cast<std::int32_t>(0.5f), 0);
  EXPECT_EQ(saturate_cast<std::int32_t>(1.5f), 2);
  EXPECT_EQ(saturate_cast<std::int32_t>(2.5f), 2);
  EXPECT_EQ(saturate_cast<std::int32_t>(3.5f), 4);
  EXPECT_EQ(saturate_cast<std::int32_t>(-0.5f), 0);
  EXPECT_EQ(saturate_cast<std::int32_t>(-1.5f), -2);
  EXPECT_EQ(saturate_cast<std::int32_t>(-2.5f), -2);
  EXPECT_EQ(saturate_cast<std::int32_t>(2.4999998f), 2);
  EXPECT_EQ(saturate_cast<std::int32_t>(2.5000002f), 3);
  EXPECT_EQ(saturate_cast<std::int8_t>(126.5), 126);
  EXPECT_EQ(saturate_cast<std::uint8_t>(254.5), 254);
  EXPECT_EQ(saturate_cast<std::uint8_t>(253.5), 254);
}

TEST(SaturateCast, FloatToIntClampsToTheRange) {
  EXPECT_EQ(saturate_cast<std::int8_t>(127.4f), 127);
  EXPECT_EQ(saturate_cast<std::int8_t>(127.5f), 127);  // rounds to 128, clamps
  EXPECT_EQ(saturate_cast<std::int8_t>(1000.0f), 127);
  EXPECT_EQ(saturate_cast<std::int8_t>(-128.5f), -128);
  EXPECT_EQ(saturate_cast<std::int8_t>(-1e30f), -128);
  EXPECT_EQ(saturate_cast<std::uint8_t>(-0.7f), 0);
  EXPECT_EQ(saturate_cast<std::uint8_t>(-3.0f), 0);
  EXPECT_EQ(saturate_cast<std::uint8_t>(255.49f), 255);
  EXPECT_EQ(saturate_cast<std::uint8_t>(300.0f), 255);
  EXPECT_EQ(saturate_cast<std::int16_t>(40000.0), 32767);
  EXPECT_EQ(saturate_cast<std::int16_t>(-40000.0), -32768);
  EXPECT_EQ(saturate_cast<std::uint16_t>(70000.0f), 65535);
  EXPECT_EQ(saturate_cast<std::int32_t>(3e9f), std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(saturate_cast<std::int32_t>(2147483648.0f), std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(saturate_cast<std::int32_t>(-2147483648.0f), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(saturate_cast<std::int32_t>(-3e9), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(saturate_cast<std::int32_t>(2147483647.0), 2147483647);
  EXPECT_EQ(saturate_cast<std::uint32_t>(4294967296.0f), 4294967295u);
  EXPECT_EQ(saturate_cast<std::uint32_t>(4294967295.0), 4294967295u);
  EXPECT_EQ(saturate_cast<std::int64_t>(1e19), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(saturate_cast<std::int64_t>(-1e19), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(saturate_cast<std::uint64_t>(1e20), std::numeric_limits<std::uint64_t>::max());
}

TEST(SaturateCast, InfinitiesClampAndNanBecomesZero) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(saturate_cast<std::int8_t>(inf), 127);
  EXPECT_EQ(saturate_cast<std::int8_t>(-inf), -128);
  EXPECT_EQ(saturate_cast<std::uint32_t>(-inf), 0u);
  EXPECT_EQ(saturate_cast<std::int8_t>(nan), 0);
  EXPECT_EQ(saturate_cast<std::uint16_t>(nan), 0);
  EXPECT_EQ(saturate_cast<std::int32_t>(-nan), 0);
  EXPECT_EQ(saturate_cast<std::int32_t>(std::numeric_limits<double>::quiet_NaN()), 0);
}

TEST(SaturateCast, HalfInputs) {
  EXPECT_EQ(saturate_cast<std::int8_t>(f16(2.5f)), 2);
  EXPECT_EQ(saturate_cast<std::int8_t>(f16(65504.0f)), 127);
  EXPECT_EQ(saturate_cast<std::int8_t>(f16::from_bits(0x7e00u)), 0);     // NaN
  EXPECT_EQ(saturate_cast<std::int8_t>(f16::from_bits(0xfc00u)), -128);  // -inf
  EXPECT_EQ(saturate_cast<std::uint8_t>(bf16(-5.0f)), 0);
  EXPECT_EQ(saturate_cast<std::int16_t>(bf16(3.5f)), 4);
  EXPECT_EQ(saturate_cast<std::int32_t>(bf16::from_bits(0x7fc0u)), 0);  // NaN
}

TEST(SaturateCast, IntegerNarrowingClamps) {
  EXPECT_EQ(saturate_cast<std::int8_t>(300), 127);
  EXPECT_EQ(saturate_cast<std::int8_t>(-300), -128);
  EXPECT_EQ(saturate_cast<std::int8_t>(-128), -128);
  EXPECT_EQ(saturate_cast<std::int8_t>(127), 127);
  EXPECT_EQ(saturate_cast<std::uint8_t>(-1), 0);
  EXPECT_EQ(saturate_cast<std::uint8_t>(256), 255);
  EXPECT_EQ(saturate_cast<std::uint8_t>(std::uint32_t{4000000000u}), 255);
  EXPECT_EQ(saturate_cast<std::int32_t>(std::uint32_t{4000000000u}),
            std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(saturate_cast<std::uint32_t>(std::int32_t{-5}), 0u);
  EXPECT_EQ(saturate_cast<std::int16_t>(std::int64_t{-70000}), -32768);
  EXPECT_EQ(saturate_cast<std::uint64_t>(std::int64_t{-1}), 0u);
  EXPECT_EQ(saturate_cast<std::int64_t>(std::numeric_limits<std::uint64_t>::max()),
            std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(saturate_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()),
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(saturate_cast<std::int16_t>(std::uint8_t{200}), 200);
}

// Every i8/u8/i16/u16 target against a wide sweep of int32 inputs.
TEST(SaturateCast, MatchesClampOverAWideIntegerSweep) {
  for (std::int64_t v = -100000; v <= 100000; v += 7) {
    const auto i32 = static_cast<std::int32_t>(v);
    ASSERT_EQ(saturate_cast<std::int8_t>(i32), std::clamp<std::int64_t>(v, -128, 127));
    ASSERT_EQ(saturate_cast<std::uint8_t>(i32), std::clamp<std::int64_t>(v, 0, 255));
    ASSERT_EQ(saturate_cast<std::int16_t>(i32), std::clamp<std::int64_t>(v, -32768, 32767));
    ASSERT_EQ(saturate_cast<std::uint16_t>(i32), std::clamp<std::int64_t>(v, 0, 65535));
  }
}

TEST(LoadStore, ConvertsThroughDoubleWithSaturation) {
  std::uint8_t u8[2] = {};
  store_from_double(u8, DType::u8, 1, 300.0);
  EXPECT_EQ(u8[1], 255);
  store_from_double(u8, DType::u8, 0, -4.0);
  EXPECT_EQ(u8[0], 0);
  EXPECT_EQ(load_as_double(u8, DType::u8, 1), 255.0);

  std::int32_t i32[1] = {};
  store_from_double(i32, DType::i32, 0, 2.5);
  EXPECT_EQ(i32[0], 2);
  store_from_double(i32, DType::i32, 0, std::nan(""));
  EXPECT_EQ(i32[0], 0);

  std::uint16_t half[2] = {};
  store_from_double(half, DType::f16, 0, 1e6);
  EXPECT_EQ(half[0], 0x7c00u);  // overflow to inf
  store_from_double(half, DType::bf16, 1, 1.0);
  EXPECT_EQ(half[1], 0x3f80u);
  EXPECT_TRUE(std::isinf(load_as_double(half, DType::f16, 0)));
  EXPECT_EQ(load_as_double(half, DType::bf16, 1), 1.0);

  bool flags[2] = {};
  store_from_double(flags, DType::boolean, 1, 0.25);
  EXPECT_TRUE(flags[1]);
  EXPECT_EQ(load_as_double(flags, DType::boolean, 0), 0.0);

  float f[1] = {};
  store_from_double(f, DType::f32, 0, 0.1);
  EXPECT_EQ(f[0], 0.1f);
  EXPECT_EQ(load_as_double(f, DType::f32, 0), static_cast<double>(0.1f));
}

// The 64-bit types keep the numbering of the older ones (appended), saturate at their own
// limits and convert from double exactly where the double is an integer below 2^63 / 2^64.
TEST(DType, SixtyFourBitTypes) {
  EXPECT_EQ(static_cast<int>(DType::boolean), 9);
  EXPECT_EQ(static_cast<int>(DType::i64), 10);
  EXPECT_EQ(static_cast<int>(DType::f64), 12);
  EXPECT_TRUE(is_64bit(DType::u64));
  EXPECT_FALSE(is_64bit(DType::i32));
  EXPECT_EQ(narrowed_dtype(DType::i64), DType::i32);
  EXPECT_EQ(narrowed_dtype(DType::u64), DType::u32);
  EXPECT_EQ(narrowed_dtype(DType::f64), DType::f32);
  EXPECT_EQ(saturate_cast<std::int64_t>(0x1p62), std::int64_t{1} << 62);
  EXPECT_EQ(saturate_cast<std::int64_t>(0x1p63), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(saturate_cast<std::int64_t>(-0x1p70), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(saturate_cast<std::uint64_t>(0x1p63), std::uint64_t{1} << 63);
  EXPECT_EQ(saturate_cast<std::uint64_t>(0x1p64), std::numeric_limits<std::uint64_t>::max());
  // A double source is not rounded through f32 first: 2^40 + 1 survives.
  EXPECT_EQ(saturate_cast<std::int64_t>(0x1p40 + 1.0), (std::int64_t{1} << 40) + 1);
  EXPECT_EQ(saturate_cast<std::int32_t>(std::int64_t{1} << 40), 2147483647);
  EXPECT_EQ(saturate_cast<std::uint32_t>(std::numeric_limits<std::uint64_t>::max()), 0xffffffffu);
  EXPECT_EQ(saturate_cast<std::int64_t>(std::numeric_limits<std::uint64_t>::max()),
            std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ((convert_value<bool, double>(1e-300)), true);  // not flushed through f32
  EXPECT_EQ((convert_value<double, std::int64_t>(std::int64_t{1} << 53)), 0x1p53);
}

}  // namespace
}  // namespace tessera
