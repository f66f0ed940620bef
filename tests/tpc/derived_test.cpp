// The intrinsics whose semantics come from Habana's compiler (intrinsics_derived.h): PACK through
// the compiler's own truncation sequences, ST_TNSR's SW_PACK against plain loops and a TPC-C file
// written like Habana's cast_f32_to_bf16, UDIV_4STEP through the compiler's division loop, and
// READ_LFSR / WRITE_LFSR against the LFSR / LFSR_NO_CHANGE variables they define.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

#include "tpc_test_util.h"

extern "C" const tessera::tpc::KernelImage tessera_tpc_image_cast_f32_to_bf16_packed;

using namespace tpc_test;

namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "no UserError";
}

// 64 distinct 32-bit lanes whose low 16 bits are what a truncation keeps.
int64 ramp64(int base) {
  int64 x;
  for (int i = 0; i < 64; ++i) x.v[i] = base + 977 * i - 30000;
  return x;
}

// ---- PACK: the sequences TPCISelLowering.cpp emits for vector truncation must truncate ----

TEST(TpcPack, Truncate32To16LikeTheCompilerPutsElementsInOrder) {
  // truncate_32_to_16_goya: PACK group 0 and group 1 of each source, then MOV_DUAL_GROUP the
  // packed groups next to each other. CONVERT to 16 bits leaves each value in the low half of
  // its 32-bit lane, which is what the cast to short128 gives.
  const int64 x0 = ramp64(0), x1 = ramp64(12345);
  const short128 s0 = static_cast<short128>(x0), s1 = static_cast<short128>(x1);
  short128 y = v_i16_pack_b(s0, SW_GROUP_0 | SW_STRIDE_2, short128());
  y = v_i16_pack_b(s0, SW_GROUP_1 | SW_STRIDE_2, y);
  y = v_i16_mov_dual_group_b(y, 0xFFFFFFFF, 1, 0, SW_WR_UPPER_GROUP, y);
  y = v_i16_mov_dual_group_b(y, 0xFFFFFFFF, 2, 1, SW_WR_LOWER_GROUP, y);
  y = v_i16_mov_dual_group_b(y, 0xFFFFFFFF, 3, 1, SW_WR_UPPER_GROUP, y);
  short128 t = v_i16_pack_b(s1, SW_GROUP_0, short128());
  t = v_i16_pack_b(s1, SW_GROUP_1, t);
  y = v_i16_mov_dual_group_b(t, 0xFFFFFFFF, 0, 2, SW_WR_LOWER_GROUP, y);
  y = v_i16_mov_dual_group_b(t, 0xFFFFFFFF, 1, 2, SW_WR_UPPER_GROUP, y);
  y = v_i16_mov_dual_group_b(t, 0xFFFFFFFF, 2, 3, SW_WR_LOWER_GROUP, y);
  y = v_i16_mov_dual_group_b(t, 0xFFFFFFFF, 3, 3, SW_WR_UPPER_GROUP, y);
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(y.v[i], static_cast<std::int16_t>(x0.v[i])) << "lane " << i;
    ASSERT_EQ(y.v[64 + i], static_cast<std::int16_t>(x1.v[i])) << "lane " << 64 + i;
  }
}

TEST(TpcPack, Truncate32To8LikeTheCompilerWithByteMasks) {
  // truncate_32_to_8: PACK every fourth byte of both groups of source j, then move each dual
  // group's 16 packed bytes into dual group j under the byte masks 0x0000FFFF / 0xFFFF0000.
  const int64 x[4] = {ramp64(3), ramp64(50), ramp64(777), ramp64(-4000)};
  char256 y;
  for (int j = 0; j < 4; ++j) {
    const char256 s = static_cast<char256>(x[j]);
    char256 t = v_i8_pack_b(s, SW_GROUP_0 | SW_STRIDE_4, char256());
    t = v_i8_pack_b(s, SW_GROUP_1 | SW_STRIDE_4, t);
    for (int dg = 0; dg < 4; ++dg)
      y = v_i8_mov_dual_group_b(t, dg % 2 == 0 ? 0x0000FFFFu : 0xFFFF0000u, dg, j,
                                dg < 2 ? SW_WR_LOWER_GROUP : SW_WR_UPPER_GROUP, y);
  }
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 64; ++i)
      ASSERT_EQ(y.v[64 * j + i], static_cast<std::int8_t>(x[j].v[i])) << "lane " << 64 * j + i;
}

TEST(TpcPack, Truncate16To8LikeTheCompiler) {
  // truncate_16_to_8 is the 32 -> 16 sequence on bytes: PACK every second byte.
  short128 a, b;
  for (int i = 0; i < 128; ++i) {
    a.v[i] = static_cast<std::int16_t>(301 * i - 17000);
    b.v[i] = static_cast<std::int16_t>(-257 * i + 9000);
  }
  const char256 s0 = static_cast<char256>(a), s1 = static_cast<char256>(b);
  char256 y = v_i8_pack_b(s0, SW_GROUP_0, char256());
  y = v_i8_pack_b(s0, SW_GROUP_1, y);
  y = v_i8_mov_dual_group_b(y, 0xFFFFFFFF, 1, 0, SW_WR_UPPER_GROUP, y);
  y = v_i8_mov_dual_group_b(y, 0xFFFFFFFF, 2, 1, SW_WR_LOWER_GROUP, y);
  y = v_i8_mov_dual_group_b(y, 0xFFFFFFFF, 3, 1, SW_WR_UPPER_GROUP, y);
  char256 t = v_i8_pack_b(s1, SW_GROUP_0, char256());
  t = v_i8_pack_b(s1, SW_GROUP_1, t);
  for (int dg = 0; dg < 4; ++dg)
    y = v_i8_mov_dual_group_b(t, 0xFFFFFFFF, dg, 2 + dg / 2,
                              dg % 2 == 0 ? SW_WR_LOWER_GROUP : SW_WR_UPPER_GROUP, y);
  for (int i = 0; i < 128; ++i) {
    ASSERT_EQ(y.v[i], static_cast<std::int8_t>(a.v[i])) << "lane " << i;
    ASSERT_EQ(y.v[128 + i], static_cast<std::int8_t>(b.v[i])) << "lane " << 128 + i;
  }
}

TEST(TpcPack, WritesOnlyItsOwnElementsAndFollowsThePredicate) {
  bfloat128 a, income(7.0f);
  for (int i = 0; i < 128; ++i) a.v[i] = tessera::bf16(static_cast<float>(i));
  const bfloat128 r = v_bf16_pack_b(a, SW_GROUP_1, income);
  // Group 1 of dual group d: its even elements 16..30 go to elements 16 * (d % 2) + 8 .. + 15.
  int kept = 0;
  for (int dg = 0; dg < 4; ++dg)
    for (int e = 0; e < 32; ++e) {
      const float got = static_cast<float>(r.v[32 * dg + e]);
      const int written_from = e - 16 * (dg % 2) - 8;
      if (written_from >= 0 && written_from < 8)
        ASSERT_EQ(got, static_cast<float>(32 * dg + 16 + 2 * written_from)) << dg << "," << e;
      else
        kept += got == 7.0f;
    }
  EXPECT_EQ(kept, 128 - 32);
  const bfloat128 off = v_bf16_pack_b(a, SW_GROUP_1, income, false);
  for (int i = 0; i < 128; ++i) ASSERT_EQ(static_cast<float>(off.v[i]), 7.0f);
  bool128 p;
  for (int i = 0; i < 128; ++i) p.set(2 * i, i < 64);  // the low 64 lanes only
  const bfloat128 half = v_bf16_pack_vb(a, SW_GROUP_1, income, p);
  for (int i = 0; i < 128; ++i)
    ASSERT_EQ(static_cast<float>(half.v[i]), i < 64 ? static_cast<float>(r.v[i]) : 7.0f) << i;
}

TEST(TpcPack, RefusesWhatNoSourceGivesAndUnknownSwitches) {
  const std::string stride = message_of([] { v_u16_pack_b(ushort128(), SW_STRIDE_4, {}); });
  EXPECT_NE(stride.find("v_u16_pack_b"), std::string::npos) << stride;
  EXPECT_NE(stride.find("SW_STRIDE_4"), std::string::npos) << stride;
  const std::string sw = message_of([] { v_u8_pack_b(uchar256(), SW_GROUP_HALF_1, {}); });
  EXPECT_NE(sw.find("v_u8_pack_b"), std::string::npos) << sw;
  // 8-bit lanes do take SW_STRIDE_4.
  EXPECT_NO_THROW(v_u8_pack_b(uchar256(), SW_STRIDE_4 | SW_GROUP_1, {}));
}

// ---- UDIV_4STEP: the compiler's loop (MakeScalarDividePriorGen4) divides ----

template <typename P, typename S, typename F>
P divide(F step4, std::uint32_t n, S d, int bits) {
  P r{n, 0};
  for (int step = bits - 1; step >= 0; step -= 4) r = step4(d, static_cast<std::uint32_t>(step), 0, r);
  return r;
}

TEST(TpcUdiv4Step, TheCompilersLoopGivesQuotientAndRemainder) {
  const std::uint32_t ns[] = {0u, 1u, 7u, 100u, 255u, 4096u, 65535u, 123456789u, 0xFFFFFFFFu};
  const std::uint32_t ds[] = {1u, 2u, 3u, 7u, 10u, 255u, 256u, 1000u, 65535u, 0x80000001u};
  for (std::uint32_t n : ns)
    for (std::uint32_t d : ds) {
      const auto r = divide<uint32_t_pair_t>(
          [](std::uint32_t a, std::uint32_t s, int sw, uint32_t_pair_t in) {
            return u32_udiv_4step(a, s, sw, in);
          },
          n, d, 32);
      EXPECT_EQ(r.v2, n / d) << n << " / " << d;
      EXPECT_EQ(r.v1, n % d) << n << " % " << d;
      const std::uint32_t n16 = n & 0xFFFF, d16 = (d & 0xFFFF) ? (d & 0xFFFF) : 1;
      const auto r16 = divide<uint16_t_pair_t>(
          [](std::uint16_t a, std::uint32_t s, int sw, uint16_t_pair_t in) {
            return u16_udiv_4step(a, s, sw, in);
          },
          n16, static_cast<std::uint16_t>(d16), 16);
      EXPECT_EQ(r16.v2, n16 / d16) << n16 << " / " << d16;
      EXPECT_EQ(r16.v1, n16 % d16) << n16 << " % " << d16;
      const std::uint32_t n8 = n & 0xFF, d8 = (d & 0xFF) ? (d & 0xFF) : 1;
      const auto r8 = divide<uint8_t_pair_t>(
          [](std::uint8_t a, std::uint32_t s, int sw, uint8_t_pair_t in) {
            return u8_udiv_4step(a, s, sw, in);
          },
          n8, static_cast<std::uint8_t>(d8), 8);
      EXPECT_EQ(r8.v2, n8 / d8) << n8 << " / " << d8;
      EXPECT_EQ(r8.v1, n8 % d8) << n8 << " % " << d8;
    }
}

TEST(TpcUdiv4Step, EachCallDoesFourStepsOfRestoringDivision) {
  // After steps 31..28: the quotient's top four bits in place, the rest still to divide.
  const std::uint32_t n = 0xDEADBEEF, d = 3;
  const uint32_t_pair_t r = u32_udiv_4step(d, 31, 0, {n, 0});
  const std::uint32_t top = (n / d) & 0xF0000000u;
  EXPECT_EQ(r.v2, top);
  EXPECT_EQ(r.v1, n - top * d);
  // Steps below 3 stop at bit 0.
  const uint8_t_pair_t low = u8_udiv_4step(1, 1, 0, {3, 0});
  EXPECT_EQ(low.v2, 3u);
  EXPECT_EQ(low.v1, 0u);
}

TEST(TpcUdiv4Step, PredicateAndErrors) {
  const uint32_t_pair_t income{5, 6};
  const uint32_t_pair_t off = u32_udiv_4step(0, 31, 0, income, false);  // off: no division
  EXPECT_EQ(off.v1, 5u);
  EXPECT_EQ(off.v2, 6u);
  const std::string zero = message_of([] { u32_udiv_4step(0, 31, 0, {9, 0}); });
  EXPECT_NE(zero.find("denominator is 0"), std::string::npos) << zero;
  const std::string step = message_of([] { u16_udiv_4step(3, 16, 0, {9, 0}); });
  EXPECT_NE(step.find("step 16"), std::string::npos) << step;
  const std::string x2 = message_of([] { u8_udiv_4step(3, 7, SW_X2_UDIV_4STEP, {9, 0}); });
  EXPECT_NE(x2.find("SW_X2_UDIV_4STEP"), std::string::npos) << x2;
  const std::string wide = message_of([] { u16_udiv_4step(3, 15, 0, {0x10000, 0}); });
  EXPECT_NE(wide.find("income.v1"), std::string::npos) << wide;
}

// ---- kernels: ST_TNSR SW_PACK and the LFSR ----

using Derived = KernelFixture;

// Register lane j holds j; each packing store writes its permutation.
void packing_stores(tensor bytes, tensor shorts, int which) {
  uchar256 u;
  for (int j = 0; j < 256; ++j) u.v[j] = static_cast<std::uint8_t>(j);
  short128 s;
  for (int j = 0; j < 128; ++j) s.v[j] = static_cast<std::int16_t>(j);
  const int5 first = {0};
  const int5 second = {256, 0, 0, 0, 0};
  switch (which) {
    case 0:
      v_u8_st_tnsr(first, bytes, u, SW_PACK | SW_PCK_32_TO_8);
      v_u8_st_tnsr(second, bytes, u, SW_PACK | SW_PCK_16_TO_8);
      v_i16_st_tnsr(first, shorts, s, SW_PACK);  // SW_PCK_32_TO_16 is 0
      v_i16_st_tnsr({128, 0, 0, 0, 0}, shorts, s, SW_PACK, false);  // predicate off: no write
      break;
    case 1:
      v_f32_st_tnsr(first, bytes, float64(), SW_PACK);
      break;
    case 2:
      v_bf16_st_tnsr(first, shorts, bfloat128(), SW_PACK | SW_PCK_32_TO_8);
      break;
    case 3:
      v_i16_st_tnsr_partial(first, shorts, s, 63, 0, SW_PACK);
      break;
    default:
      v_u8_st_tnsr(first, bytes, u, SW_PCK_16_TO_8);  // the field without SW_PACK
  }
}

TEST_F(Derived, PackingStoreWritesTheCompilersOrder) {
  add_one_member("packing_stores", tpc_kernel<&packing_stores>());
  Runtime rt(*dev, options());
  auto bytes = make_device_tensor(*dev, DType::u8, Shape{512});
  auto shorts = make_device_tensor(*dev, DType::i16, Shape{256});
  std::vector<std::int16_t> sentinel(256, -1);
  dev->copy_to_device(shorts.buffer, sentinel.data(), sentinel.size() * sizeof(std::int16_t));
  const int all = 0;
  rt.launch("packing_stores", {}, {bytes, shorts}, all);
  const auto b = download<std::uint8_t>(*dev, bytes);
  const auto s = download<std::int16_t>(*dev, shorts);
  for (int m = 0; m < 256; ++m) {
    ASSERT_EQ(b[m], 4 * (m % 64) + m / 64) << "32 -> 8, element " << m;
    ASSERT_EQ(b[256 + m], 2 * (m % 128) + m / 128) << "16 -> 8, element " << m;
  }
  for (int m = 0; m < 128; ++m) {
    ASSERT_EQ(s[m], 2 * (m % 64) + m / 64) << "32 -> 16, element " << m;
    ASSERT_EQ(s[128 + m], -1) << "a store whose predicate is off writes nothing";
  }
}

TEST_F(Derived, PackingStoreRefusesWhatItCannotPack) {
  add_one_member("packing_stores", tpc_kernel<&packing_stores>());
  Runtime rt(*dev, options());
  auto bytes = make_device_tensor(*dev, DType::f32, Shape{512});
  auto shorts = make_device_tensor(*dev, DType::bf16, Shape{256});
  auto shorts16 = make_device_tensor(*dev, DType::i16, Shape{256});
  auto u8s = make_device_tensor(*dev, DType::u8, Shape{512});
  const struct {
    int which;
    DeviceTensor a, b;
    const char* expect;
  } cases[] = {
      {1, bytes, shorts, "32-bit elements"},
      {2, bytes, shorts, "SW_PCK_32_TO_8"},
      {3, u8s, shorts16, "whole-register stores"},
      {4, u8s, shorts16, "v_u8_st_tnsr"},
  };
  for (const auto& c : cases) {
    const std::string m = message_of(
        [&] { rt.launch("packing_stores", {}, {c.a, c.b}, c.which); });
    EXPECT_NE(m.find(c.expect), std::string::npos) << "case " << c.which << ": " << m;
  }
}

TEST_F(Derived, CastF32ToBf16StoredWithPackMatchesAPlainLoop) {
  lib->add("cast_f32_to_bf16_packed",
           [](const gcapi::HabanaKernelParams_t* p, gcapi::HabanaKernelInstantiation_t* i) {
             const auto& g = p->inputTensors[0].geometry;
             i->indexSpaceGeometry.dims = 2;
             i->indexSpaceGeometry.sizes[0] = (g.sizes[0] + 127) / 128;
             i->indexSpaceGeometry.sizes[1] = g.dims > 1 ? g.sizes[1] : 1;
             gcapi::TensorAccessPattern_t pattern{};
             pattern.dim[0] = gcapi::DimTransform_t{{0}, 128.0f, 0.0f, 128.0f, 127.0f};
             pattern.dim[1] = gcapi::DimTransform_t{{1}, 1.0f, 0.0f, 1.0f, 0.0f};
             i->inputTensorAccessPattern[0] = pattern;
             i->outputTensorAccessPattern[0] = pattern;
             return gcapi::set_kernel(i, tessera_tpc_image_cast_f32_to_bf16_packed.function);
           });
  Runtime rt(*dev, options());
  for (const Shape& shape : {Shape{384, 3}, Shape{300, 2}}) {
    const auto n = static_cast<std::size_t>(shape.element_count());
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i) * 1.37f - 211.0f;
    const auto in = upload(*dev, DType::f32, shape, x);
    const auto out = make_device_tensor(*dev, DType::bf16, shape);
    rt.launch("cast_f32_to_bf16_packed", {in}, {out});
    const auto got = download<tessera::bf16>(*dev, out);
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(static_cast<float>(got[i]), static_cast<float>(tessera::bf16(x[i])))
          << "element " << i << " of " << n;
  }
}

void lfsr_intrinsics(tensor out) {
  int5 at = {0};
  auto put = [&](const char256& v) {
    v_i8_st_tnsr(at, out, v);
    at[0] += 256;
  };
  put(read_lfsr_b(SW_READ_ONLY));  // 0: peek
  put(read_lfsr_b());              // 1: equals the peek
  put(read_lfsr_b());              // 2: advanced
  char256 seed;
  for (int i = 0; i < 256; ++i) seed.v[i] = static_cast<std::int8_t>(i * 37 + 11);
  write_lfsr_b(seed);
  put(read_lfsr_b());  // 3
  LFSR = static_cast<uint64>(seed);
  put(static_cast<char256>(static_cast<uint64>(LFSR)));  // 4: the same as 3
  const char256 sevens(7);
  put(read_lfsr_b(0, sevens, false));  // 5: off: income, no advance
  put(read_lfsr_b());                  // 6: the value after 3
  write_lfsr_b(seed);
  read_lfsr_b();
  put(read_lfsr_b());  // 7: the same as 6
  bool256 low;
  for (int i = 0; i < 256; ++i) low.set(i, i < 128);
  char256 other;
  for (int i = 0; i < 256; ++i) other.v[i] = static_cast<std::int8_t>(255 - i);
  write_lfsr_b(seed);
  write_lfsr_vb(other, low);  // bytes 0..127 from `other`, the rest kept
  put(read_lfsr_b());         // 8
  char256 merged = seed;
  for (int i = 0; i < 128; ++i) merged.v[i] = other.v[i];
  write_lfsr_b(merged);
  put(read_lfsr_b(SW_READ_ONLY));             // 9: the same as 8
  put(read_lfsr_vb(0, sevens, low));          // 10: low bytes as 9, the rest 7
}

TEST_F(Derived, LfsrIntrinsicsAreTheLfsrVariables) {
  add_one_member("lfsr_intrinsics", tpc_kernel<&lfsr_intrinsics>());
  Runtime rt(*dev, options());
  auto out = make_device_tensor(*dev, DType::i8, Shape{256 * 11});
  rt.launch("lfsr_intrinsics", {}, {out});
  const auto v = download<std::int8_t>(*dev, out);
  auto row = [&](int r, int i) { return v[static_cast<std::size_t>(256 * r + i)]; };
  int advanced = 0;
  for (int i = 0; i < 256; ++i) {
    ASSERT_EQ(row(0, i), row(1, i)) << i;
    advanced += row(1, i) != row(2, i);
    ASSERT_EQ(row(3, i), row(4, i)) << i;
    ASSERT_EQ(row(5, i), 7) << i;
    ASSERT_EQ(row(6, i), row(7, i)) << i;
    ASSERT_EQ(row(8, i), row(9, i)) << i;
    ASSERT_EQ(row(10, i), i < 128 ? row(9, i) : 7) << i;
  }
  EXPECT_GT(advanced, 200);
  const std::string bad = message_of([] { read_lfsr_b(2); });
  EXPECT_NE(bad.find("read_lfsr_b"), std::string::npos) << bad;
}

}  // namespace
