// Source compatibility with Habana's TPC toolchain: gcapi as gc_interface.h declares it, both
// generations of intrinsic names on one implementation, switch encodings, auxiliary tensors, and
// address generation that never faults while the access through it does.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <sstream>
#include <string>

#include "gc_interface.h"
#include "tessera/sim/scheduler.h"
#include "tpc_test_util.h"

using namespace tpc_test;

namespace {

// The vendor header's values (Habana's public gc_interface.h).
static_assert(gcapi::DATA_F32 == 0 && gcapi::DATA_F16 == 1 && gcapi::DATA_I32 == 2 &&
              gcapi::DATA_BF16 == 6 && gcapi::DATA_U32 == 8);
static_assert(gcapi::GLUE_INSUFICIENT_ELF_BUFFER == 18 && gcapi::GLUE_FAILED == 400 &&
              gcapi::GLUE_INSUFICIENT_AUX_BUFFER_SIZE == 9);
static_assert(gcapi::MAX_NODE_NAME == 64 && gcapi::MAX_TENSOR_NR == 16 &&
              gcapi::MAX_TENSORS_PARAMS_NR == 32);
static_assert(SW_RD == (3 << 16) && SW_NEG == (1 << 1) && SW_WR_UPPER_GROUP == (1 << 13));

struct CompatFixture : KernelFixture {
  CompatFixture() : KernelFixture("compat-kernels") {}
};

TEST(TpcCompat, Int5AndVectorsStartAtZero) {
  alignas(int5) unsigned char raw[sizeof(int5)];
  std::memset(raw, 0xff, sizeof raw);
  const int5* a = new (raw) int5;  // default-initialised, as `int5 a;` in a kernel
  for (int d = 0; d < 5; ++d) EXPECT_EQ((*a)[d], 0);
  const float64 v;
  EXPECT_EQ(v[63], 0.0f);
}

TEST(TpcCompat, LegacyAndCurrentNamesAgree) {
  float64 a, b, c(1.0f), d(2.0f);
  for (int i = 0; i < 64; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 31.5f;
  }
  const float64 cur = v_f32_sel_less_f32_b(a, b, c, d);
  const float64 old = v_f32_f32_sel_less_v_v_v_v(a, b, c, d);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(cur[i], i < 31.5f ? 1.0f : 2.0f);
    EXPECT_EQ(old[i], cur[i]);
  }
  // MAC: the negation switch of the current API and the negation argument of the legacy one.
  const float64 acc(10.0f);
  EXPECT_EQ(v_f32_mac_b(float64(2.0f), float64(3.0f), acc, SW_NEG)[0], 4.0f);
  EXPECT_EQ(v_f32_mac_v_v(float64(2.0f), float64(3.0f), acc, true)[0], 4.0f);
  EXPECT_EQ(v_f32_mac_b(float64(2.0f), float64(3.0f), acc)[0], 16.0f);
  // Predicates: to_bool64 / from_bool64 and the legacy bool logic.
  const bool64 gt = v_f32_cmp_grt_b(a, float64(10.0f));
  const bool256 both = bv_b_and_bv_bv(from_bool64(gt), from_bool64(v_f32_cmp_less_b(a, 20.0f)));
  const float64 picked = v_f32_mov_vb(float64(1.0f), 0, float64(0.0f), to_bool64(both));
  for (int i = 0; i < 64; ++i) EXPECT_EQ(picked[i], (i > 10 && i < 20) ? 1.0f : 0.0f) << i;
}

TEST(TpcCompat, RoundingModesUseTheirEncodingsAndUnknownOnesAreUserErrors) {
  const float64 x(-2.5f);
  EXPECT_EQ(v_convert_f32_to_i32_b(x, SW_RD)[0], -3);
  EXPECT_EQ(v_convert_f32_to_i32_b(x, e_round_zero << 16)[0], -2);
  EXPECT_EQ(v_convert_f32_to_i32_b(x, SW_RHNE)[0], -2);
  EXPECT_EQ(v_convert_f32_to_i32_b(x, SW_RHAZ)[0], -3);
  try {
    (void)v_convert_f32_to_i32_b(x, SW_SR);
    FAIL() << "stochastic rounding must be a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("v_convert_f32_to_i32"), std::string::npos) << e.what();
  }
  try {
    (void)v_f32_add_b(x, x, SW_NEG);  // ADD takes SW_SAT only
    FAIL() << "an unknown switch must be a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("v_f32_add_b"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0x2"), std::string::npos) << e.what();
  }
}

TEST(TpcCompat, BfloatConvertsAllLanesEvenOdd) {
  bfloat128 in;
  for (int i = 0; i < 128; ++i) in[i] = tessera::bf16(static_cast<float>(i));
  const float128 f = v_convert_bf16_to_f32_all_b(in);
  EXPECT_EQ(f.v1[5], 10.0f);
  EXPECT_EQ(f.v2[5], 11.0f);
  const bfloat128 back = v_convert_f32_to_bf16_all_b(f);
  for (int i = 0; i < 128; ++i) EXPECT_EQ(static_cast<float>(back[i]), static_cast<float>(i));
}

void address_past_the_end(tensor in, tensor out) {
  int5 past = {8, 0, 0, 0, 0};
  global_address a = gen_addr(past, in);  // address arithmetic: no access, no fault
  (void)a;
  int5 first = {0};
  s_i32_st_g(gen_addr(first, out), 5);
}

// TPC-C takes an int where a tensor is expected (Habana's bitonic sort names its outputs so).
void int_tensor_handles(tensor in, tensor out) {
  (void)in;
  int out_index = 1;
  int5 first = {0};
  s_i32_st_g(gen_addr(first, out_index), static_cast<int>(get_dim_size(out_index, 0)));
  (void)out;
}

void read_past_the_end(tensor in, tensor out) {
  int5 past = {8, 1, 0, 0, 0};
  s_i32_st_g(gen_addr(int5{}, out), s_i32_ld_g(gen_addr(past, in)));
}

TEST_F(CompatFixture, AddressGenerationNeverFaultsTheAccessDoes) {
  add_one_member("gen_f32", tpc_kernel<&address_past_the_end>());
  add_one_member("read_f32", tpc_kernel<&read_past_the_end>());
  Runtime rt(*dev, options());
  auto in = make_device_tensor(*dev, DType::i32, Shape{8, 2});
  auto out = make_device_tensor(*dev, DType::i32, Shape{8, 2});
  rt.launch("gen_f32", {in}, {out});
  EXPECT_EQ(download<std::int32_t>(*dev, out)[0], 5);
  try {
    rt.launch("read_f32", {in}, {out});
    FAIL() << "reading outside the tensor must fault";
  } catch (const DeviceFault& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("read_f32"), std::string::npos) << m;
    EXPECT_NE(m.find("tensor 0"), std::string::npos) << m;
    EXPECT_NE(m.find("(8, 1, 0, 0, 0)"), std::string::npos) << m;
  }
}

// out = in + aux, where aux is a table the glue fills (an auxiliary tensor, gcapi-style); it
// comes after the outputs, as in Habana's avg_pool_2d_fwd_f32(ifm, ofm, reciprocal_tab, ...).
void add_aux(tensor in, tensor out, tensor aux) {
  int5 c = {0};
  v_f32_st_tnsr(c, out, v_f32_ld_tnsr_b(c, in) + v_f32_ld_tnsr_b(c, aux));
}

TEST_F(CompatFixture, AuxiliaryTensorsComeFromTheGluesRequest) {
  lib->add("aux_f32", [](gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* inst) {
    inst->indexSpaceGeometry.dims = 1;
    inst->indexSpaceGeometry.sizes[0] = 1;
    gcapi::AuxTensor_t& aux = inst->auxiliaryTensors[0];
    inst->auxiliaryTensorCount = 1;
    aux.geometry.dims = 1;
    aux.geometry.sizes[0] = 64;
    aux.dataType = gcapi::DATA_F32;
    if (aux.pData == nullptr || aux.bufferSize < 64 * sizeof(float)) {
      aux.bufferSize = 64 * sizeof(float);
      return gcapi::GLUE_INSUFICIENT_AUX_BUFFER_SIZE;
    }
    float* table = static_cast<float*>(aux.pData);
    for (int i = 0; i < 64; ++i) table[i] = 100.0f * static_cast<float>(i);
    return gcapi::set_kernel(inst, tpc_kernel<&add_aux>());
  });
  Runtime rt(*dev, options());
  std::vector<float> x(64, 1.0f);
  auto in = upload(*dev, DType::f32, Shape{64}, x);
  auto out = make_device_tensor(*dev, DType::f32, Shape{64});
  rt.launch("aux_f32", {in}, {out});
  const auto got = download<float>(*dev, out);
  EXPECT_EQ(got[0], 1.0f);
  EXPECT_EQ(got[63], 6301.0f);
}

TEST_F(CompatFixture, GlueWithoutAKernelBinaryIsAUserError) {
  lib->add("nobinary_f32",
           [](gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* inst) {
             inst->indexSpaceGeometry.dims = 1;
             inst->indexSpaceGeometry.sizes[0] = 1;
             return gcapi::GLUE_SUCCESS;
           });
  Runtime rt(*dev, options());
  auto t = make_device_tensor(*dev, DType::f32, Shape{64});
  EXPECT_THROW(rt.launch("nobinary_f32", {t}, {t}), UserError);
}

}  // namespace

// ---- issue 8 leftovers: mixed-type selects, scalar saturation, single-lane converts,
// NEARBYINT, partial loads ----

TEST(TpcCompat, MixedTypeSelectsCompareOneTypeAndReturnAnother) {
  int64 a;
  for (int i = 0; i < 64; ++i) a[i] = i - 32;
  const float64 c(1.5f), d(-1.5f);
  // tpc-intrinsics.h: v_f32_sel_less_i32_b compares i32 lanes and returns f32 ones.
  const float64 cur = v_f32_sel_less_i32_b(a, int64(0), c, d);
  // tpc-defs.h's legacy spelling names the compared type first.
  const float64 old = v_i32_f32_sel_less_v_v_v_v(a, 0, c, d);
  const float64 old_b = v_i32_f32_sel_less_v_s_v_v_b(a, 0, c, d, float64(7.0f), false, false);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(cur[i], i < 32 ? 1.5f : -1.5f) << i;
    EXPECT_EQ(old[i], cur[i]) << i;
    EXPECT_EQ(old_b[i], 7.0f) << i;  // predicate false == polarity: income
  }
  const int64 bits = v_i32_sel_geq_f32_b(float64(2.0f), float64(1.0f), int64(4), int64(5));
  EXPECT_EQ(bits[0], 4);
  short128 s;
  for (int i = 0; i < 128; ++i) s[i] = static_cast<std::int16_t>(i % 3);
  const bfloat128 h = v_bf16_sel_eq_i16_b(s, short128(1), bfloat128(2.0f), bfloat128(0.0f));
  for (int i = 0; i < 128; ++i) EXPECT_EQ(static_cast<float>(h[i]), i % 3 == 1 ? 2.0f : 0.0f);
  const uchar256 u = v_u8_sel_grt_i8_b(char256(-1), char256(0), uchar256(9), uchar256(3));
  EXPECT_EQ(u[255], 3);
}

// SEL2 (tpc-intrinsics.h §12): one compare, both selections; v1 is c or d, v2 is a or b.
TEST(TpcCompat, Sel2ReturnsTheSelectedAndTheComparedLanes) {
  float64 a, b;
  int64 c, d;
  for (int i = 0; i < 64; ++i) {
    a[i] = static_cast<float>((i * 37) % 64) - 20.0f;
    b[i] = static_cast<float>((i * 11) % 64) - 20.0f;
    c[i] = i;
    d[i] = 1000 + i;
  }
  const int64_float64 lt = v_i32_sel2_less_f32_b(a, b, c, d);
  const int64_float64 ge = v_i32_sel2_geq_f32_b(a, b, c, d);
  // tpc-defs.h's legacy spelling names the compared type first.
  const int64_float64 legacy = v_f32_i32_sel2_grt_v_v_v_v(a, b, c, d);
  for (int i = 0; i < 64; ++i) {
    const bool less = a[i] < b[i];
    EXPECT_EQ(lt.v1[i], less ? c[i] : d[i]) << i;
    EXPECT_EQ(lt.v2[i], less ? a[i] : b[i]) << i;
    EXPECT_EQ(ge.v1[i], !less ? c[i] : d[i]) << i;
    EXPECT_EQ(ge.v2[i], !less ? a[i] : b[i]) << i;
    EXPECT_EQ(legacy.v1[i], a[i] > b[i] ? c[i] : d[i]) << i;
  }
  // Equal lanes: LEQ takes the first pair, LESS the second.
  const int128 eq_leq = v_i32_sel2_leq_i32_b(int64(5), int64(5), int64(1), int64(2));
  const int128 eq_less = v_i32_sel2_less_i32_b(int64(5), int64(5), int64(1), int64(2));
  EXPECT_EQ(eq_leq.v1[0], 1);
  EXPECT_EQ(eq_less.v1[0], 2);
  // A vector predicate keeps the income in its false lanes, in both halves.
  const bool64 low = v_i32_cmp_less_b(c, int64(20));
  int64_float64 income{int64(-1), float64(-2.0f)};
  const int64_float64 p = v_i32_sel2_less_f32_vb(a, b, c, d, 0, income, low);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(p.v1[i], i < 20 ? lt.v1[i] : -1) << i;
    EXPECT_EQ(p.v2[i], i < 20 ? lt.v2[i] : -2.0f) << i;
  }
  // A false scalar predicate returns the income; bf16 compared, i16 selected.
  const short128_bfloat128 off =
      v_i16_sel2_grt_bf16_b(bfloat128(1.0f), bfloat128(0.0f), short128(7), short128(8), 0,
                            short128_bfloat128{short128(3), bfloat128(4.0f)}, false);
  EXPECT_EQ(off.v1[0], 3);
  EXPECT_EQ(static_cast<float>(off.v2[0]), 4.0f);
}

// The 8-bit SEL2 forms (tpc-intrinsics.h: char512 v_i8_sel2_<cmp>_i8_b, char256_uchar256
// v_i8_sel2_<cmp>_u8_b, uchar256_char256 v_u8_sel2_<cmp>_i8_b, uchar512 v_u8_sel2_<cmp>_u8_b) and
// their tpc-defs.h spellings v_<compared>_<selected>_sel2_<cmp>_v_v_v_v, against a plain loop.
TEST(TpcCompat, Sel2EightBitFormsMatchAPlainLoop) {
  char256 a, b, c, d;
  uchar256 ua, ub, uc, ud;
  for (int i = 0; i < 256; ++i) {
    a[i] = static_cast<std::int8_t>((i * 37) % 256 - 128);
    b[i] = static_cast<std::int8_t>((i * 11 + 5) % 256 - 128);
    c[i] = static_cast<std::int8_t>(i % 100);
    d[i] = static_cast<std::int8_t>(-(i % 100));
    ua[i] = static_cast<std::uint8_t>((i * 37) % 256);
    ub[i] = static_cast<std::uint8_t>((i * 11 + 5) % 256);
    uc[i] = static_cast<std::uint8_t>(i);
    ud[i] = static_cast<std::uint8_t>(255 - i);
  }
  b[7] = a[7];  // one equal lane: LEQ/GEQ take (c, a), LESS/GRT (d, b)
  ub[9] = ua[9];
  const char512 ii_less = v_i8_sel2_less_i8_b(a, b, c, d);
  const char512 ii_geq = v_i8_sel2_geq_i8_b(a, b, c, d);
  const char256_uchar256 iu_leq = v_i8_sel2_leq_u8_b(ua, ub, c, d);
  const uchar256_char256 ui_grt = v_u8_sel2_grt_i8_b(a, b, uc, ud);
  const uchar512 uu_less = v_u8_sel2_less_u8_b(ua, ub, uc, ud);
  const char512 legacy_ii = v_i8_i8_sel2_grt_v_v_v_v(a, b, c, d);
  const uchar256_char256 legacy_iu = v_i8_u8_sel2_leq_v_v_v_v(a, b, uc, ud);
  for (int i = 0; i < 256; ++i) {
    const bool lt = a[i] < b[i], ult = ua[i] < ub[i];
    EXPECT_EQ(ii_less.v1[i], lt ? c[i] : d[i]) << i;
    EXPECT_EQ(ii_less.v2[i], lt ? a[i] : b[i]) << i;
    EXPECT_EQ(ii_geq.v1[i], !lt ? c[i] : d[i]) << i;
    EXPECT_EQ(ii_geq.v2[i], !lt ? a[i] : b[i]) << i;
    EXPECT_EQ(iu_leq.v1[i], ua[i] <= ub[i] ? c[i] : d[i]) << i;
    EXPECT_EQ(iu_leq.v2[i], ua[i] <= ub[i] ? ua[i] : ub[i]) << i;
    EXPECT_EQ(ui_grt.v1[i], a[i] > b[i] ? uc[i] : ud[i]) << i;
    EXPECT_EQ(ui_grt.v2[i], a[i] > b[i] ? a[i] : b[i]) << i;
    EXPECT_EQ(uu_less.v1[i], ult ? uc[i] : ud[i]) << i;
    EXPECT_EQ(uu_less.v2[i], ult ? ua[i] : ub[i]) << i;
    EXPECT_EQ(legacy_ii.v1[i], a[i] > b[i] ? c[i] : d[i]) << i;
    EXPECT_EQ(legacy_iu.v1[i], a[i] <= b[i] ? uc[i] : ud[i]) << i;
  }
  // Vector predicate: lanes whose bit is clear keep the income pair.
  bool256 low;
  for (int i = 0; i < 256; ++i) low.set(i, i < 100);
  const uchar512 income{uchar256(static_cast<std::uint8_t>(1)), uchar256(static_cast<std::uint8_t>(2))};
  const uchar512 p = v_u8_sel2_less_u8_vb(ua, ub, uc, ud, 0, income, low);
  for (int i = 0; i < 256; ++i) {
    EXPECT_EQ(p.v1[i], i < 100 ? uu_less.v1[i] : 1) << i;
    EXPECT_EQ(p.v2[i], i < 100 ? uu_less.v2[i] : 2) << i;
  }
  EXPECT_THROW((void)v_i8_sel2_less_i8_b(a, b, c, d, SW_SAT), UserError);
}

// SHUFFLE after tpc-intrinsics.h's table: bits 0-4 the source element, bit 5 the source group,
// bit 7 the write enable, within the destination's dual group; the f32 control of element i is
// byte 4i (Habana's bitonic sort repeats it over the element's four bytes).
TEST(TpcCompat, ShuffleReadsEachElementsControlByte) {
  float64 a;
  for (int i = 0; i < 64; ++i) a[i] = static_cast<float>(i);
  uchar256 swap_pairs;  // element n of each dual group takes n ^ 1 (the bitonic sort's table)
  for (int i = 0; i < 64; ++i) {
    const int n = (i % 16) ^ 1;
    for (int k = 0; k < 4; ++k)
      swap_pairs[4 * i + k] = static_cast<std::uint8_t>(n | ((n > 7) << 5) | 0x80);
  }
  const float64 r = v_f32_shuffle_b(a, swap_pairs, 0, float64(-1.0f));
  for (int i = 0; i < 64; ++i) EXPECT_EQ(r[i], static_cast<float>(i ^ 1)) << i;
  // 8-bit: element 3 of group 1 into every lane of group 0 of dual group 2; bit 7 clear keeps
  // the income.
  uchar256 bytes;
  for (int i = 0; i < 256; ++i) bytes[i] = static_cast<std::uint8_t>(i);
  uchar256 ctl;
  for (int i = 0; i < 256; ++i) ctl[i] = (i / 32 == 4) ? static_cast<std::uint8_t>(0x80 | 0x20 | 3) : 0;
  const uchar256 s = v_u8_shuffle_b(bytes, ctl, 0, uchar256(static_cast<std::uint8_t>(7)));
  for (int i = 0; i < 256; ++i) EXPECT_EQ(s[i], i / 32 == 4 ? 128 + 32 + 3 : 7) << i;
}

// The legacy convert aliases exactly as tpc-defs.h spells them (argument order included).
TEST(TpcCompat, LegacyConvertAliasesTakeTpcDefsArguments) {
  float64 x;
  for (int i = 0; i < 64; ++i) x[i] = -2.5f + 0.25f * static_cast<float>(i);
  const int64 income(7);
  // v_convert_f32_to_i32_v_b(a, i, rm, p, o): a false predicate keeps the income.
  const int64 rd = v_convert_f32_to_i32_v_b(x, income, e_round_down, true, false);
  const int64 off = v_convert_f32_to_i32_v_b(x, income, e_round_down, false, false);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(rd[i], static_cast<int>(std::floor(x[i]))) << i;
    EXPECT_EQ(off[i], 7) << i;
  }
  EXPECT_THROW((void)v_convert_f32_to_i32_v_b(x, income, SW_RD, true, false), UserError);
  // Widening ones take no mode: v_convert_i8_to_f32_v_b(a, i, p, o).
  char256 c;
  for (int i = 0; i < 256; ++i) c[i] = static_cast<std::int8_t>(i - 128);
  const float64 f = v_convert_i8_to_f32_v_b(c, float64(0.0f), true, false);
  EXPECT_EQ(f[0], static_cast<float>(v_convert_i8_to_f32_v(c)[0]));
  // v_convert_i16_to_u8_v(a, i, l): no mode; lane 1 writes the odd lanes.
  short128 h;
  for (int i = 0; i < 128; ++i) h[i] = static_cast<std::int16_t>(i * 3 - 50);
  const uchar256 u = v_convert_i16_to_u8_v(h, uchar256(static_cast<std::uint8_t>(9)), 1);
  for (int i = 0; i < 128; ++i) {
    EXPECT_EQ(u[2 * i + 1], std::clamp(i * 3 - 50, 0, 255)) << i;
    EXPECT_EQ(u[2 * i], 9) << i;
  }
  // v_convert_f32_to_i16_v_b(a, i, rm, l, p, o).
  const short128 s = v_convert_f32_to_i16_v_b(x, short128(5), e_round_up, 0, true, false);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(s[2 * i], static_cast<int>(std::ceil(x[i]))) << i;
  // The all-lanes pair with a vector predicate: lanes whose predicate is clear keep the income.
  float128 xx{x, x};
  bool256 none;
  const bfloat128 kept = v_convert_f32_to_bf16_av_vb(xx, bfloat128(3.0f), e_round_half_ne, none, false);
  EXPECT_EQ(static_cast<float>(kept[5]), 3.0f);
  const float128 wide = av_convert_bf16_to_f32_v_vb(v_convert_f32_to_bf16_av(xx, 0), float128{},
                                                    bool256(0xff), false);
  EXPECT_EQ(wide.v1[4], x[4]);
  EXPECT_EQ(wide.v2[4], x[4]);
}

TEST(TpcCompat, AddAndSubSaturateOnlyWithSwSat) {
  const std::int32_t big = std::numeric_limits<std::int32_t>::max();
  EXPECT_EQ(s_i32_add(big, 1, SW_SAT), big);
  EXPECT_EQ(s_i32_add(big, 1), std::numeric_limits<std::int32_t>::min());  // wraps without it
  EXPECT_EQ(s_i8_sub(-128, 1, SW_SAT), -128);
  EXPECT_EQ(s_u16_add(65535, 1, SW_SAT), 65535);
  EXPECT_EQ(s_u32_sub(0u, 1u, SW_SAT), 0u);
  EXPECT_EQ(s_f32_add(1.0f, 2.0f, SW_SAT), 3.0f);
  EXPECT_THROW((void)s_i32_add(1, 2, SW_NEG), UserError);
  // The vector forms too: wrap without the switch, saturate with it.
  EXPECT_EQ(v_i32_add_b(int64(big), int64(1))[0], std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(v_i32_add_b(int64(big), int64(1), SW_SAT)[0], big);
  EXPECT_EQ(v_i8_sub_b(char256(-128), char256(1), SW_SAT)[7], -128);
}

// MAC of 16-bit integers into 32-bit pair accumulators against a plain loop: lane i of the
// sources lands in v1[i / 2] (even i) or v2[i / 2] (odd i); SW_SAT clamps, no switch wraps.
TEST(TpcCompat, SixteenBitMacsAccumulateIntoWidePairs) {
  short128 a, b;
  ushort128 ua, ub;
  int128 acc;
  uint128 uacc;
  bool128 odd_lanes;
  for (int i = 0; i < 128; ++i) {
    a.v[i] = static_cast<std::int16_t>(i * 257 - 16000);
    b.v[i] = static_cast<std::int16_t>(i % 2 ? 32767 : -3 * i);
    ua.v[i] = static_cast<std::uint16_t>(i * 511);
    ub.v[i] = static_cast<std::uint16_t>(65535 - i);
    odd_lanes.set(2 * i, i % 2 == 1);  // a bool128 lane is two of the 256 bits
    odd_lanes.set(2 * i + 1, i % 2 == 1);
  }
  for (int j = 0; j < 64; ++j) {
    acc.v1.v[j] = j % 5 ? j * 1000 : std::numeric_limits<std::int32_t>::max() - 7;
    acc.v2.v[j] = -j * 999;
    uacc.v1.v[j] = static_cast<std::uint32_t>(j) * 70000u;
    uacc.v2.v[j] = j % 3 ? 5u : 0xfffffff0u;
  }
  const auto lane = [](auto& pair, int i) -> auto& {
    return (i % 2 ? pair.v2 : pair.v1).v[i / 2];
  };
  const int128 wrapped = v_i16_mac_b(a, b, acc);
  const int128 saturated = v_i16_mac_b(a, b, acc, SW_SAT);
  const int128 odd_only = v_i16_mac_vb(a, b, acc, 0, odd_lanes);
  const int128 even_only = v_i16_mac_vb(a, b, acc, 0, odd_lanes, true);
  const int128 off = v_i16_mac_b(a, b, acc, 0, false);
  const uint128 uwrapped = v_u16_mac_b(ua, ub, uacc);
  const uint128 usaturated = v_u16_mac_b(ua, ub, uacc, SW_SAT);
  for (int i = 0; i < 128; ++i) {
    const long long sum =
        static_cast<long long>(lane(acc, i)) + static_cast<long long>(a.v[i]) * b.v[i];
    const auto wrap = static_cast<std::int32_t>(static_cast<std::uint32_t>(sum));
    const auto sat = static_cast<std::int32_t>(std::clamp<long long>(
        sum, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
    EXPECT_EQ(lane(wrapped, i), wrap) << i;
    EXPECT_EQ(lane(saturated, i), sat) << i;
    EXPECT_EQ(lane(odd_only, i), i % 2 ? wrap : lane(acc, i)) << i;
    EXPECT_EQ(lane(even_only, i), i % 2 ? lane(acc, i) : wrap) << i;
    EXPECT_EQ(lane(off, i), lane(acc, i)) << i;
    const unsigned long long usum = static_cast<unsigned long long>(lane(uacc, i)) +
                                    static_cast<unsigned long long>(ua.v[i]) * ub.v[i];
    EXPECT_EQ(lane(uwrapped, i), static_cast<std::uint32_t>(usum)) << i;
    EXPECT_EQ(lane(usaturated, i),
              static_cast<std::uint32_t>(std::min<unsigned long long>(usum, 0xffffffffull)))
        << i;
  }
  EXPECT_EQ(s_i16_mac(-300, 200, 7), 7 - 60000);
  EXPECT_EQ(s_u16_mac(65535, 65535, 0x10000000u, SW_SAT), 0xffffffffu);
  EXPECT_EQ(s_u16_mac(2, 3, 10u, 0, false), 10u);
  // Gaudi takes SW_NEG on float MACs only.
  EXPECT_THROW((void)v_i16_mac_b(a, b, acc, SW_NEG), UserError);
  EXPECT_THROW((void)s_u16_mac(1, 1, 1u, SW_NEG), UserError);
  EXPECT_EQ(s_f32_mac(2.0f, 3.0f, 1.0f), 7.0f);
  EXPECT_EQ(s_f32_mac(2.0f, 3.0f, 1.0f, SW_NEG), -5.0f);
  EXPECT_EQ(s_bf16_mac_acc32(tpc::bf16(1.5f), tpc::bf16(2.0f), 0.25f), 3.25f);
  EXPECT_EQ(static_cast<float>(s_bf16_mac(tpc::bf16(256.0f), tpc::bf16(1.0f), tpc::bf16(1.0f))),
            256.0f);
}

// Bitwise operations on float encodings, scalar bitwise/shift/abs on the SPU and the int5 forms,
// against plain loops over the bits.
TEST(TpcCompat, BitwiseShiftAndAbsFormsMatchPlainLoops) {
  float64 a, b;
  int64 ia;
  bool64 even;
  for (int i = 0; i < 64; ++i) {
    a.v[i] = static_cast<float>(i) * -1.25f + 3.0f;
    b.v[i] = static_cast<float>(i * i) * 0.5f - 7.0f;
    ia.v[i] = i * 0x01010101 - 5;
    even.set(4 * i, i % 2 == 0);  // a bool64 lane is four of the 256 bits
    even.set(4 * i + 1, i % 2 == 0);
    even.set(4 * i + 2, i % 2 == 0);
    even.set(4 * i + 3, i % 2 == 0);
  }
  const auto bits = [](float x) { return std::bit_cast<std::uint32_t>(x); };
  const float64 f_and = v_f32_and_b(a, b), f_xor = v_f32_xor_vb(a, b, 0, a, even);
  const float64 f_not = v_f32_not_b(a);
  const int64 i_not = v_i32_not_vb(ia, 0, ia, even, true);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(bits(f_and.v[i]), bits(a.v[i]) & bits(b.v[i])) << i;
    EXPECT_EQ(bits(f_xor.v[i]), i % 2 == 0 ? (bits(a.v[i]) ^ bits(b.v[i])) : bits(a.v[i])) << i;
    EXPECT_EQ(bits(f_not.v[i]), ~bits(a.v[i])) << i;
    EXPECT_EQ(i_not.v[i], i % 2 == 0 ? ia.v[i] : ~ia.v[i]) << i;
  }
  EXPECT_EQ(bits(s_f32_or(-2.0f, 0.5f)), bits(-2.0f) | bits(0.5f));
  EXPECT_EQ(s_bf16_xor(tpc::bf16(1.0f), tpc::bf16(-1.0f)).bits, 0x8000);
  EXPECT_EQ(s_i32_shl(-3, 4), -48);
  EXPECT_EQ(s_i32_shr(-1, 28), 15);  // logical, as the vector SHR
  EXPECT_EQ(s_u8_shl(0x81, 1), 0x02);
  EXPECT_EQ(s_u16_not(0x00ffu), 0xff00u);
  EXPECT_EQ(s_i16_and(0x0f0f, 0x00ff, 0, 7, false), 7);  // predicate off: the income
  EXPECT_EQ(s_i32_abs(std::numeric_limits<std::int32_t>::min()),
            std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(s_i8_abs(-5), 5);
  EXPECT_EQ(s_f32_abs(-0.0f), 0.0f);
  EXPECT_EQ(static_cast<float>(s_bf16_abs(tpc::bf16(-3.5f))), 3.5f);
  EXPECT_THROW((void)s_i32_shl(1, 1, SW_SAT), UserError);
  const int5 x = {{1, -2, 3, 0x70000000, -8}};
  const int5 shl = i_i32_shl(x, int5{{1, 1, 1, 1, 1}}, 0b11111, 0, x);
  const int5 nots = i_i32_not(x, 0b00101, 0, x);
  const int5 absd = i_i32_abs(x, 0b11111, 0, x);
  const int5 ands = i_i32_and(x, int5{{3, 3, 3, 3, 3}}, 0b11111, 0, x);
  for (int d = 0; d < 5; ++d) {
    EXPECT_EQ(shl.v[d], static_cast<int>(static_cast<unsigned>(x.v[d]) << 1)) << d;
    EXPECT_EQ(nots.v[d], (0b00101 >> d) & 1 ? ~x.v[d] : x.v[d]) << d;
    EXPECT_EQ(absd.v[d], x.v[d] < 0 ? -x.v[d] : x.v[d]) << d;
    EXPECT_EQ(ands.v[d], x.v[d] & 3) << d;
  }
}

TEST(TpcCompat, SingleLaneConvertsFillEvenLanesWithLegacyRoundingModes) {
  float64 a;
  for (int i = 0; i < 64; ++i) a[i] = 1.0f + static_cast<float>(i) * 0x1p-10f;  // not bf16-exact
  const bfloat128 income(5.0f);
  const bfloat128 down = v_convert_f32_to_bf16_single_b(a, SW_RD, income);
  const bfloat128 up = v_convert_f32_to_bf16_single_b(a, SW_RU, income);
  for (int i = 0; i < 64; ++i) {
    EXPECT_LE(static_cast<float>(down[2 * i]), a[i]);
    EXPECT_GE(static_cast<float>(up[2 * i]), a[i]);
    EXPECT_EQ(static_cast<float>(down[2 * i + 1]), 5.0f);  // odd lanes keep income
  }
  EXPECT_EQ(static_cast<float>(down[2 * 9]), 1.0078125f);  // 1 + 9/1024, bf16 steps of 1/128
  EXPECT_EQ(static_cast<float>(up[2 * 9]), 1.015625f);
  // tpc-defs.h's legacy alias takes the mode and shifts it: e_round_down is SW_RD.
  const bfloat128 legacy = v_convert_f32_to_bf16_single_lane_v(a, e_round_down);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(legacy[2 * i].bits, down[2 * i].bits);
  try {
    (void)v_convert_f32_to_bf16_single_lane_v(a, SW_RD);  // the switch where the mode belongs
    FAIL() << "a switch value given as the legacy mode must be a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("e_round_"), std::string::npos) << e.what();
  }
  // The legacy `_v` converts take the mode too; Tessera's switch spelling still works.
  const float64 x(-2.5f);
  EXPECT_EQ(v_convert_f32_to_i32_v(x, e_round_down)[0], -3);
  EXPECT_EQ(v_convert_f32_to_i32_v(x, SW_RD)[0], -3);
  EXPECT_EQ(v_convert_f32_to_i32_v(x, e_round_up)[0], -2);
  EXPECT_THROW((void)v_convert_f32_to_i32_v(x, SW_RD | 0x100), UserError);
  EXPECT_THROW((void)v_convert_f32_to_i32_v(x, e_round_stochastic), UserError);
}

// tpc-intrinsics.h down-converts: `lane` 0 writes the even lanes, 1 the odd ones (0..3 for a
// 4:1 ratio); two converts interleave, as Habana's f32 -> i16 casts pair them.
TEST(TpcCompat, DownConvertsWriteTheLanesTheLaneArgumentSelects) {
  float64 a, b;
  for (int i = 0; i < 64; ++i) {
    a.v[i] = static_cast<float>(i) + 0.75f;
    b.v[i] = -static_cast<float>(i) - 40000.0f;  // saturates to -32768
  }
  short128 r = v_convert_f32_to_i16_b(a, 0, SW_RZ, short128(7));
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(r[2 * i], i) << i;
    EXPECT_EQ(r[2 * i + 1], 7) << i;  // income
  }
  r = v_convert_f32_to_i16_b(b, 1, SW_RHNE, r);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(r[2 * i], i) << i;
    EXPECT_EQ(r[2 * i + 1], -32768) << i;
  }
  // 4:1: lane 3 writes lanes 3, 7, ..., 255.
  const char256 c = v_convert_f32_to_i8_b(a, 3, SW_RD, char256(-1));
  for (int i = 0; i < 256; ++i) EXPECT_EQ(c[i], i % 4 == 3 ? std::min(i / 4, 127) : -1) << i;
  int64 w;
  for (int i = 0; i < 64; ++i)
    w.v[i] = 8 * i - 200;  // -200..304: saturates in u8 and i8, exact in bf16
  const short128 s16 = v_convert_i32_to_i16_b(w, 1, 0, short128());
  const uchar256 u8 = v_convert_i16_to_u8_b(s16, 1, 0, uchar256());
  const char256 i8 = v_convert_i16_to_i8_b(s16, 0, 0, char256(3));
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(s16[2 * i + 1], 8 * i - 200) << i;
    EXPECT_EQ(s16[2 * i], 0) << i;
    // u8 lane 2j + 1 takes i16 lane j: the odd i16 lanes land at 4i + 3
    EXPECT_EQ(u8[4 * i + 3], std::clamp(8 * i - 200, 0, 255)) << i;
    EXPECT_EQ(u8[4 * i + 2], 0) << i;
    EXPECT_EQ(i8[4 * i + 2], std::clamp(8 * i - 200, -128, 127)) << i;
    EXPECT_EQ(i8[4 * i + 1], 3) << i;
  }
  const bfloat128 h = v_convert_i32_to_bf16_b(w, 0, 0, bfloat128(1.0f));
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(static_cast<float>(h[2 * i]), static_cast<float>(8 * i - 200)) << i;
    EXPECT_EQ(static_cast<float>(h[2 * i + 1]), 1.0f) << i;
  }
  // Predicates: false keeps income, a vector predicate picks lanes of the result.
  EXPECT_EQ(v_convert_f32_to_i16_b(a, 0, 0, short128(9), false)[0], 9);
  bool128 p;
  for (int i = 0; i < 128; ++i) p.set(2 * i, i % 4 == 0);  // bool128 lane i is bit 2i
  const short128 pv = v_convert_f32_to_i16_vb(a, 0, SW_RZ, short128(9), p);
  EXPECT_EQ(pv[0], 0);
  EXPECT_EQ(pv[2], 9);  // written lane, predicate off
  EXPECT_EQ(pv[4], 2);
  // tpc-defs.h's legacy form (a, income, mode, lane) is the same convert.
  const short128 legacy = v_convert_f32_to_i16_v(a, short128(7), e_round_zero, 0);
  for (int i = 0; i < 128; ++i)
    EXPECT_EQ(legacy[i], v_convert_f32_to_i16_b(a, 0, SW_RZ, short128(7))[i]) << i;
  try {
    (void)v_convert_f32_to_i16_b(a, 2, 0, short128());
    FAIL() << "lane 2 of a 2:1 down-convert must be a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("lane 2"), std::string::npos) << e.what();
  }
}

// MOV_GROUP (tpc-intrinsics.h): an enabled group of an enabled dual group takes the other
// group's elements; Habana's kernels fold halves with max(v, v_f32_mov_group_b(v, -1, 63, 0)).
TEST(TpcCompat, MovGroupSwapsTheGroupsOfEachDualGroup) {
  float64 a;
  for (int i = 0; i < 64; ++i) a.v[i] = static_cast<float>(i);
  const float64 all = v_f32_mov_group_b(a, 0xffffffff, 63, float64());
  const float64 upper = v_f32_mov_group_b(
      a, 0xffffffff, SW_GROUP1_EN | SW_DUAL_GROUP0_EN | SW_DUAL_GROUP2_EN, float64(-1.0f));
  for (int i = 0; i < 64; ++i) {
    const int dg = i / 16, j = i % 16;
    const float other = static_cast<float>(dg * 16 + (j < 8 ? j + 8 : j - 8));
    EXPECT_EQ(all[i], other) << i;
    const bool written = j >= 8 && (dg == 0 || dg == 2);
    EXPECT_EQ(upper[i], written ? other : -1.0f) << i;
  }
  // The mask enables 2-byte units of the dual group: 0x0000000f is its first four i16 lanes.
  short128 h;
  for (int i = 0; i < 128; ++i) h.v[i] = static_cast<short>(i);
  const short128 m = v_i16_mov_group_b(h, 0x0000000f, SW_GROUP0_EN | SW_DUAL_GROUP1_EN, short128());
  for (int i = 0; i < 128; ++i) EXPECT_EQ(m[i], (i >= 32 && i < 36) ? i + 16 : 0) << i;
  EXPECT_EQ(v_f32_mov_group_b(a, 0xffffffff, 63, float64(7.0f), false)[0], 7.0f);
  EXPECT_THROW((void)v_f32_mov_group_b(a, 0xffffffff, 64, float64()), UserError);
}

TEST(TpcCompat, NearbyintRoundsInTheSwitchesMode) {
  const float64 x(-2.5f);
  EXPECT_EQ(v_f32_nearbyint_b(x, SW_RD)[0], -3.0f);
  EXPECT_EQ(v_f32_nearbyint_b(x, SW_RU)[0], -2.0f);
  EXPECT_EQ(v_f32_nearbyint_b(x, SW_RZ)[0], -2.0f);
  EXPECT_EQ(v_f32_nearbyint_b(x, SW_RHNE)[0], -2.0f);
  EXPECT_EQ(v_f32_nearbyint_b(x, SW_RHAZ)[0], -3.0f);
  EXPECT_EQ(static_cast<float>(v_bf16_nearbyint_b(bfloat128(1.5f), SW_RHNE)[0]), 2.0f);
  EXPECT_THROW((void)v_f32_nearbyint_b(x, SW_NEG), UserError);
}

// Lanes 2..5 from the tensor, the rest income; then the legacy spelling into row 1.
void partial_loads(tensor in, tensor out) {
  int5 c = {0};
  v_f32_st_tnsr(c, out, v_f32_ld_tnsr_partial_b(c, in, 3, 2, 0, float64(9.0f)));
  int5 row = {0, 1, 0, 0, 0};
  v_f32_st_tnsr(row, out, v_f32_ld_tnsr_partial_i_b(c, in, float64(8.0f), 0, 63, true, false));
}
void partial_out_of_range(tensor in, tensor out) {
  int5 c = {0};
  v_f32_st_tnsr(c, out, v_f32_ld_tnsr_partial_b(c, in, 10, 60));
}

TEST_F(CompatFixture, AnIntNamesATensor) {
  add_one_member("int_handle_i32", tpc_kernel<&int_tensor_handles>());
  Runtime rt(*dev, options());
  auto in = make_device_tensor(*dev, DType::i32, Shape{8, 2});
  auto out = make_device_tensor(*dev, DType::i32, Shape{6, 3});
  rt.launch("int_handle_i32", {in}, {out});
  EXPECT_EQ(download<std::int32_t>(*dev, out)[0], 6);
}

TEST_F(CompatFixture, PartialLoadsReadOnlyTheirLanes) {
  add_one_member("partial_f32", tpc_kernel<&partial_loads>());
  add_one_member("partial_bad_f32", tpc_kernel<&partial_out_of_range>());
  Runtime rt(*dev, options());
  std::vector<float> host(64);
  for (int i = 0; i < 64; ++i) host[static_cast<std::size_t>(i)] = static_cast<float>(100 + i);
  auto in = upload(*dev, DType::f32, Shape{64}, host);
  auto out = make_device_tensor(*dev, DType::f32, Shape{64, 2});
  rt.launch("partial_f32", {in}, {out});
  const auto r = download<float>(*dev, out);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(r[static_cast<std::size_t>(i)], i >= 2 && i <= 5 ? 100.0f + i : 9.0f) << i;
    EXPECT_EQ(r[static_cast<std::size_t>(64 + i)], i == 63 ? 163.0f : 8.0f) << i;
  }
  try {
    rt.launch("partial_bad_f32", {in}, {out});
    FAIL() << "lanes past the vector must be a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("v_f32_ld_tnsr_partial_b"), std::string::npos) << e.what();
  }
}

// ---- the 4-cycle latency model covers the intrinsics the public-kernel sweep added ----
namespace {

template <int N>
void popcnt_chain(tensor in, tensor out) {
  const int5 c = {0};
  int64 x = v_i32_ld_tnsr_b(c, in);
  for (int i = 0; i < N; ++i) x = (int64)v_i32_popcnt_b(x, SW_COUNT_ONES);  // needs x
  v_i32_st_tnsr(c, out, x);
}

template <int N>
void convert_shift_chain(tensor in, tensor out) {
  const int5 c = {0};
  const int64 x = v_i32_ld_tnsr_b(c, in);
  int64 y;
  for (int i = 0; i < N; ++i)  // the income is the previous result
    y = (int64)v_convert_int32_to_i8_b(x, 1, i % 4, SW_RHNE, (char256)y);
  v_i32_st_tnsr(c, out, y);
}

template <int N>
void int_mac_chain(tensor in, tensor out) {
  const int5 c = {0};
  const short128 x = (short128)v_i32_ld_tnsr_b(c, in);
  int128 acc = {};
  for (int i = 0; i < N; ++i) acc = v_i16_mac_b(x, x, acc);  // needs the previous sum
  v_i32_st_tnsr(c, out, acc.v1);
}

template <int N>
void convert_shift_independent(tensor in, tensor out) {
  const int5 c = {0};
  const int64 x = v_i32_ld_tnsr_b(c, in);
  char256 last;
  for (int i = 0; i < N; ++i) last = v_convert_int32_to_i8_b(x, 1, i % 4, SW_RHNE, char256());
  v_i32_st_tnsr(c, out, (int64)last);
}

}  // namespace

TEST_F(CompatFixture, SweepIntrinsicsFollowTheLatencyModel) {
  constexpr int n = 1000;
  add_one_member("popcnt_1", tpc_kernel<&popcnt_chain<n>>());
  add_one_member("popcnt_2", tpc_kernel<&popcnt_chain<2 * n>>());
  add_one_member("chain_1", tpc_kernel<&convert_shift_chain<n>>());
  add_one_member("chain_2", tpc_kernel<&convert_shift_chain<2 * n>>());
  add_one_member("mac_1", tpc_kernel<&int_mac_chain<n>>());
  add_one_member("mac_2", tpc_kernel<&int_mac_chain<2 * n>>());
  add_one_member("indep_1", tpc_kernel<&convert_shift_independent<n>>());
  add_one_member("indep_2", tpc_kernel<&convert_shift_independent<2 * n>>());
  Runtime rt(*dev, options());
  auto in = make_device_tensor(*dev, DType::i32, Shape{64});
  auto out = make_device_tensor(*dev, DType::i32, Shape{64});
  const double latency = dev->spec().pipe("vpu").latency_cycles.value;
  // Cycles per added instruction: the difference of two chain lengths cancels load and store.
  const auto per_issue = [&](const std::string& name) {
    const double one = static_cast<double>(rt.launch(name + "_1", {in}, {out}).cycles);
    const double two = static_cast<double>(rt.launch(name + "_2", {in}, {out}).cycles);
    return (two - one) / n;
  };
  EXPECT_NEAR(per_issue("popcnt"), latency, 0.05);  // dependent: the VPU latency each
  EXPECT_NEAR(per_issue("chain"), latency, 0.05);
  EXPECT_NEAR(per_issue("mac"), latency, 0.05);
  EXPECT_NEAR(per_issue("indep"), 1.0, 0.05);       // independent: one issue each
}

// ---- LD_TNSR_LOW / _HIGH, ST_TNSR_LOW / _HIGH: 128 bytes between the tensor and one half of
// the register, in the tensor's own elements ----
namespace {

// Row 0: the low half of an f32 load from a bf16 tensor at column 4 (the high half keeps the
// income 7); row 1: the high half (the low half keeps 7); row 2: the legacy spellings.
void half_loads(tensor in, tensor out) {
  int5 c = {4, 0, 0, 0, 0};
  int5 o = {0, 0, 0, 0, 0};
  v_f32_st_tnsr(o, out, v_f32_ld_tnsr_low_b(c, in, 0, float64(7.0f)));
  o[1] = 1;
  v_f32_st_tnsr(o, out, v_f32_ld_tnsr_high_b(c, in, 0, float64(7.0f)));
  o[1] = 2;
  const float64 low = v_f32_ld_tnsr_low_i_b(c, in, float64(5.0f), true, false);
  const float64 skipped = v_f32_ld_tnsr_high_i_b(c, in, low, false, false);  // predicate off
  v_f32_st_tnsr(o, out, skipped);
}
// Stores: the low half of a register to row 0 at column 2, the high half to row 1 at column 0,
// and the legacy low store culled past the row's end.
void half_stores(tensor in, tensor out) {
  const int5 c = {0};
  const short128 x = v_i16_ld_tnsr_b(c, in);
  int5 o = {2, 0, 0, 0, 0};
  v_i16_st_tnsr_low(o, out, x);
  o[0] = 0;
  o[1] = 1;
  v_i16_st_tnsr_high(o, out, x);
  o[0] = 100;
  o[1] = 2;
  i16_st_tnsr_low_i_v(o, out, x);
}
// A vector predicate on lanes 16..63: of the high half (lanes 32..63) all load, and lanes
// 0..31 keep the income either way.
void half_load_vb(tensor in, tensor out) {
  const int5 c = {0};
  const int64 lane = (int64)read_lane_id_4b_b();
  const bool64 upper = v_i32_cmp_geq_b(lane, int64(16));
  v_f32_st_tnsr(c, out, v_f32_ld_tnsr_high_vb(c, in, 0, float64(3.0f), upper));
}

}  // namespace

TEST_F(CompatFixture, HalfLoadsReadOneHalfOfTheRegisterInTheTensorsElements) {
  add_one_member("half_loads", tpc_kernel<&half_loads>());
  Runtime rt(*dev, options());
  // A bf16 row of 40 elements: element k holds the bits k + 1; the loads start at column 4, so
  // 36 elements are inside and the other 28 of the 64 bf16 elements of a half read the pad.
  std::vector<std::uint16_t> host(40);
  for (int k = 0; k < 40; ++k)
    host[static_cast<std::size_t>(k)] = static_cast<std::uint16_t>(k + 1);
  auto in = upload(*dev, DType::bf16, Shape{40}, host);
  auto out = make_device_tensor(*dev, DType::f32, Shape{64, 3});
  rt.launch("half_loads", {in}, {out});
  const auto r = download<std::uint32_t>(*dev, out);
  // f32 lane i of a half holds bf16 elements 4 + 2i (low bits) and 5 + 2i (high bits), pad 0
  // past the row.
  auto pair_bits = [&](int i) {
    auto elem = [&](int k) -> std::uint32_t {
      return k < 40 ? static_cast<std::uint32_t>(k + 1) : 0u;
    };
    return elem(4 + 2 * i) | (elem(5 + 2 * i) << 16);
  };
  const std::uint32_t seven = std::bit_cast<std::uint32_t>(7.0f);
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(r[static_cast<std::size_t>(i)], i < 32 ? pair_bits(i) : seven) << i;
    EXPECT_EQ(r[static_cast<std::size_t>(64 + i)], i < 32 ? seven : pair_bits(i - 32)) << i;
    EXPECT_EQ(r[static_cast<std::size_t>(128 + i)],
              i < 32 ? pair_bits(i) : std::bit_cast<std::uint32_t>(5.0f))
        << i;
  }
}

TEST_F(CompatFixture, HalfStoresWriteOneHalfOfTheRegister) {
  add_one_member("half_stores", tpc_kernel<&half_stores>());
  add_one_member("half_load_vb", tpc_kernel<&half_load_vb>());
  Runtime rt(*dev, options());
  std::vector<std::int16_t> host(128);
  for (int i = 0; i < 128; ++i)
    host[static_cast<std::size_t>(i)] = static_cast<std::int16_t>(1000 + i);
  auto in = upload(*dev, DType::i16, Shape{128}, host);
  std::vector<std::int16_t> zeros(130 * 3, -1);
  auto out = upload(*dev, DType::i16, Shape{130, 3}, zeros);
  rt.launch("half_stores", {in}, {out});
  const auto r = download<std::int16_t>(*dev, out);
  for (int x = 0; x < 130; ++x) {
    const auto at = [&](int row) { return r[static_cast<std::size_t>(row * 130 + x)]; };
    EXPECT_EQ(at(0), x >= 2 && x < 66 ? 1000 + x - 2 : -1) << x;  // lanes 0..63 from column 2
    EXPECT_EQ(at(1), x < 64 ? 1064 + x : -1) << x;                // lanes 64..127 from column 0
    EXPECT_EQ(at(2), x >= 100 ? 1000 + x - 100 : -1) << x;        // culled past column 129
  }
  std::vector<float> f(64);
  for (int i = 0; i < 64; ++i) f[static_cast<std::size_t>(i)] = static_cast<float>(i);
  auto fin = upload(*dev, DType::f32, Shape{64}, f);
  auto fout = make_device_tensor(*dev, DType::f32, Shape{64});
  rt.launch("half_load_vb", {fin}, {fout});
  const auto v = download<float>(*dev, fout);
  // The high half (lanes 32..63) takes the tensor's elements 0..31.
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(v[static_cast<std::size_t>(i)], i < 32 ? 3.0f : static_cast<float>(i - 32)) << i;
}

// ---- ST_TNSR RMW: atomic updates that members share, in index-space order ----
namespace {

// Each member adds its value (its index + 0.1, as f32) into all of the output's 64 lanes of
// row 0, and takes the max into row 1; a store without RMW_SET is a plain store (row 2).
void rmw_accumulate(tensor in, tensor out) {
  const int5 start = get_index_space_offset();
  const int5 end = start + get_index_space_size();
  for (int m = start[1]; m < end[1]; ++m) {
    const int5 c = {0, m, 0, 0, 0};
    const float64 x = v_f32_ld_tnsr_b(c, in);
    int5 o = {0, 0, 0, 0, 0};
    v_f32_st_tnsr_rmw(o, out, x, MkRMW(e_rmw_fp32, e_rmw_add, e_rmw_atomic, e_tnsr_dt_srf));
    o[1] = 1;
    v_f32_st_tnsr_rmw(o, out, x, MkRMW(e_rmw_fp32, e_rmw_max, e_rmw_atomic, e_tnsr_dt_desc));
    o[1] = 2;
    if (m == 0) v_f32_st_tnsr_rmw(o, out, x, MkRMW(e_rmw_fp32, e_rmw_add, e_rmw_plain, 0));
  }
}
void rmw_wrong_type(tensor in, tensor out) {
  const int5 c = {0};
  v_f32_st_tnsr_rmw(c, out, v_f32_ld_tnsr_b(c, in), MkRMW(e_rmw_int32, e_rmw_add, 1, 0));
}

}  // namespace

TEST_F(CompatFixture, RmwUpdatesAddUpInIndexSpaceOrderOnAnyThreadCount) {
  constexpr int members = 257;
  lib->add("rmw_accumulate",
           [](gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* i) {
             i->indexSpaceGeometry.dims = 2;
             i->indexSpaceGeometry.sizes[0] = 1;
             i->indexSpaceGeometry.sizes[1] = members;
             return gcapi::set_kernel(i, tpc_kernel<&rmw_accumulate>());
           });
  add_one_member("rmw_wrong_type", tpc_kernel<&rmw_wrong_type>());
  // Values whose f32 sum depends on the order they are added in.
  std::vector<float> host(64 * members);
  for (int m = 0; m < members; ++m)
    for (int l = 0; l < 64; ++l)
      host[static_cast<std::size_t>(m * 64 + l)] = (m % 3 == 0 ? 1e7f : 0.37f) * (l + 1) + m;
  std::vector<float> want_sum(64, 1.0f), want_max(64, 1.0f);
  for (int m = 0; m < members; ++m)
    for (int l = 0; l < 64; ++l) {
      want_sum[static_cast<std::size_t>(l)] += host[static_cast<std::size_t>(m * 64 + l)];
      want_max[static_cast<std::size_t>(l)] = std::max(want_max[static_cast<std::size_t>(l)],
                                                       host[static_cast<std::size_t>(m * 64 + l)]);
    }
  for (const unsigned threads : {1u, 2u, 8u}) {
    sim::WorkScheduler pool(threads);
    RuntimeOptions o = options();
    o.scheduler = &pool;
    Runtime rt(*dev, o);
    auto in = upload(*dev, DType::f32, Shape{64, members}, host);
    auto out = upload(*dev, DType::f32, Shape{64, 3}, std::vector<float>(64 * 3, 1.0f));
    rt.launch("rmw_accumulate", {in}, {out});
    const auto r = download<float>(*dev, out);
    for (int l = 0; l < 64; ++l) {
      EXPECT_EQ(r[static_cast<std::size_t>(l)], want_sum[static_cast<std::size_t>(l)])
          << threads << " " << l;
      EXPECT_EQ(r[static_cast<std::size_t>(64 + l)], want_max[static_cast<std::size_t>(l)]) << l;
      EXPECT_EQ(r[static_cast<std::size_t>(128 + l)], host[static_cast<std::size_t>(l)]) << l;
    }
    if (threads == 1) {
      auto small = make_device_tensor(*dev, DType::f32, Shape{64});
      try {
        rt.launch("rmw_wrong_type", {small}, {small});
        FAIL() << "an RMW data type that is not the tensor's must be a UserError";
      } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("v_f32_st_tnsr_rmw"), std::string::npos) << e.what();
      }
    }
  }
}

namespace {

// PARTIAL and half RMW: lanes 10..19 added in place; the low half added at column 0; the high
// half subtracted at column 8.
void rmw_parts(tensor in, tensor out) {
  const int5 c = {0};
  const float64 x = v_f32_ld_tnsr_b(c, in);
  const int add = MkRMW(e_rmw_fp32, e_rmw_add, e_rmw_atomic, e_tnsr_dt_srf);
  int5 o = {0, 0, 0, 0, 0};
  v_f32_st_tnsr_partial_rmw(o, out, x, add, 9, 10);
  o[1] = 1;
  v_f32_st_tnsr_low_rmw(o, out, x, add);
  o[0] = 8;
  o[1] = 2;
  v_f32_st_tnsr_high_rmw(o, out, x, MkRMW(e_rmw_fp32, e_rmw_sub, e_rmw_atomic, e_tnsr_dt_srf));
}

}  // namespace

TEST_F(CompatFixture, PartialAndHalfRmwUpdateOnlyTheirLanes) {
  add_one_member("rmw_parts", tpc_kernel<&rmw_parts>());
  Runtime rt(*dev, options());
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i) * 0.5f + 1;
  auto in = upload(*dev, DType::f32, Shape{64}, x);
  auto out = upload(*dev, DType::f32, Shape{64, 3}, std::vector<float>(64 * 3, 100.0f));
  rt.launch("rmw_parts", {in}, {out});
  const auto r = download<float>(*dev, out);
  for (int i = 0; i < 64; ++i) {
    const auto at = [&](int row) { return r[static_cast<std::size_t>(row * 64 + i)]; };
    const auto xi = [&](int k) { return x[static_cast<std::size_t>(k)]; };
    EXPECT_EQ(at(0), i >= 10 && i < 20 ? 100.0f + xi(i) : 100.0f) << i;
    EXPECT_EQ(at(1), i < 32 ? 100.0f + xi(i) : 100.0f) << i;
    EXPECT_EQ(at(2), i >= 8 && i < 40 ? 100.0f - xi(i - 8 + 32) : 100.0f) << i;
  }
}

namespace {

// Each member adds its row into output row 0 with RMW add: the result is the glue's memset value
// plus the sum only when the runtime applies outputMemsetValues before the launch.
void rmw_add_rows(tensor in, tensor out) {
  const int5 start = get_index_space_offset();
  const int5 end = start + get_index_space_size();
  for (int m = start[1]; m < end[1]; ++m) {
    const int5 c = {0, m, 0, 0, 0};
    const int5 o = {0};
    v_f32_st_tnsr_rmw(o, out, v_f32_ld_tnsr_b(c, in),
                      MkRMW(e_rmw_fp32, e_rmw_add, e_rmw_atomic, e_tnsr_dt_srf));
  }
}

void leave_output_alone(tensor, tensor) {}

}  // namespace

TEST_F(CompatFixture, OutputsAreMemsetBeforeTheLaunchWhenTheGlueAsks) {
  constexpr int members = 5;
  for (const bool ask : {true, false})
    lib->add(ask ? "rmw_add_memset" : "rmw_add_no_memset",
             [ask](gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* i) {
               i->indexSpaceGeometry.dims = 2;
               i->indexSpaceGeometry.sizes[0] = 1;
               i->indexSpaceGeometry.sizes[1] = members;
               i->outputTensorAccessPattern[0].allRequired = 1;
               i->outputTensorAccessPattern[0].memsetBeforeExecution = ask ? 1 : 0;
               i->outputMemsetValues[0].fValue = -2.5f;
               return gcapi::set_kernel(i, tpc_kernel<&rmw_add_rows>());
             });
  Runtime rt(*dev, options());
  std::vector<float> host(64 * members);
  for (std::size_t k = 0; k < host.size(); ++k) host[k] = static_cast<float>(k % 64) * 0.25f + 1;
  auto in = upload(*dev, DType::f32, Shape{64, members}, host);
  for (const bool ask : {true, false}) {
    // The output holds stale values a memset must replace.
    auto out = upload(*dev, DType::f32, Shape{64}, std::vector<float>(64, 1000.0f));
    rt.launch(ask ? "rmw_add_memset" : "rmw_add_no_memset", {in}, {out});
    const auto r = download<float>(*dev, out);
    for (int l = 0; l < 64; ++l) {
      float want = ask ? -2.5f : 1000.0f;
      for (int m = 0; m < members; ++m) want += host[static_cast<std::size_t>(m * 64 + l)];
      EXPECT_EQ(r[static_cast<std::size_t>(l)], want) << ask << " " << l;
    }
  }
}

TEST_F(CompatFixture, MemsetValuesFillAtTheOutputsElementWidth) {
  lib->add("memset_i16", [](gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* i) {
    i->indexSpaceGeometry.dims = 1;
    i->indexSpaceGeometry.sizes[0] = 1;
    i->outputTensorAccessPattern[0].allRequired = 1;
    i->outputTensorAccessPattern[0].memsetBeforeExecution = 1;
    i->outputMemsetValues[0].i16Value = -7;
    return gcapi::set_kernel(i, tpc_kernel<&leave_output_alone>());
  });
  Runtime rt(*dev, options());
  auto in = make_device_tensor(*dev, DType::i16, Shape{8});
  auto out = upload(*dev, DType::i16, Shape{8}, std::vector<std::int16_t>(8, 3));
  rt.launch("memset_i16", {in}, {out});
  const auto r = download<std::int16_t>(*dev, out);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(r[static_cast<std::size_t>(k)], -7) << k;
}

namespace {

// Every second row of `in` as four rows (stride 2 rows, size 4); row 4 is then outside the
// tensor and loads the pad value. The new size and stride go to `dims`.
void every_second_row(tensor in, tensor out, tensor dims) {
  set_dim_stride(in, 1, 2 * get_dim_stride(in, 1));
  set_dim_size(in, 1, 4);
  for (int m = 0; m < 5; ++m) {
    const int5 c = {0, m, 0, 0, 0};
    v_f32_st_tnsr(c, out, v_f32_ld_tnsr_b(c, in));
  }
  int5 at = {0};
  s_i32_st_g(gen_addr(at, dims), static_cast<int>(get_dim_size(in, 1)));
  at[0] = 1;
  s_i32_st_g(gen_addr(at, dims), static_cast<int>(get_dim_stride(in, 1)));
}
void size_past_the_buffer(tensor in, tensor out) {
  set_dim_size(in, 1, 100);  // no access yet: no fault
  set_dim_size(in, 1, 8);
  set_dim_size(in, 1, 100);
  const int5 c = {0};
  v_f32_st_tnsr(c, out, v_f32_ld_tnsr_b(c, in));
}

}  // namespace

TEST_F(CompatFixture, SetDimSizeAndStrideRewriteTheDescriptorInsideItsBuffer) {
  add_one_member("every_second_row", tpc_kernel<&every_second_row>());
  add_one_member("size_past_the_buffer", tpc_kernel<&size_past_the_buffer>());
  Runtime rt(*dev, options());
  std::vector<float> host(64 * 8);
  for (std::size_t k = 0; k < host.size(); ++k) host[k] = static_cast<float>(k) * 0.5f;
  auto in = upload(*dev, DType::f32, Shape{64, 8}, host);
  auto out = upload(*dev, DType::f32, Shape{64, 5}, std::vector<float>(64 * 5, -1.0f));
  auto dims = make_device_tensor(*dev, DType::i32, Shape{2});
  rt.launch("every_second_row", {in}, {out, dims});
  const auto r = download<float>(*dev, out);
  for (int m = 0; m < 5; ++m)
    for (int l = 0; l < 64; ++l)
      EXPECT_EQ(r[static_cast<std::size_t>(m * 64 + l)],
                m < 4 ? host[static_cast<std::size_t>(2 * m * 64 + l)] : 0.0f)
          << m << " " << l;
  EXPECT_EQ(download<std::int32_t>(*dev, dims), (std::vector<std::int32_t>{4, 128}));
  try {
    rt.launch("size_past_the_buffer", {in}, {out});
    FAIL() << "a descriptor reaching past the buffer must be a DeviceFault";
  } catch (const DeviceFault& e) {
    EXPECT_NE(std::string(e.what()).find("v_f32_ld_tnsr_b accesses tensor 0"), std::string::npos)
        << e.what();
  }
}
