// BMKernel computations against references written here from spec 002's definitions: inputs
// widened, the result signed unless every input is unsigned, right shifts that round half up
// (written as floor(x / 2^s + 1/2)), saturation to the output's format. Exhaustive over the
// 8-bit value range of one operand and a spread of the other.
#include <algorithm>
#include <cmath>
#include <random>

#include "bm_util.h"

namespace {

using namespace bmtest;
using ll = long long;

ll val(std::uint8_t raw, fmt_t f) { return f == FMT_I8 ? ll{static_cast<std::int8_t>(raw)} : raw; }
ll val16(std::uint8_t hi, std::uint8_t lo, bool sg) {
  const unsigned u = (unsigned{hi} << 8) | lo;
  return sg ? (u >= 32768 ? ll(u) - 65536 : ll(u)) : ll(u);
}
ll round_shift(ll v, int s) {
  return s == 0 ? v : static_cast<ll>(std::floor(static_cast<double>(v) / std::ldexp(1.0, s) + 0.5));
}
ll clamp_to(ll v, bool sg, int bits) {
  const ll lo = sg ? -(1LL << (bits - 1)) : 0, hi = sg ? (1LL << (bits - 1)) - 1 : (1LL << bits) - 1;
  return std::min(std::max(v, lo), hi);
}
fmt_t fmt_of(bool sg) { return sg ? FMT_I8 : FMT_U8; }

const shape_t kShape = shape_t4(1, 64, 16, 16);  // 16,384 data over 64 channels (2 per lane)
constexpr int kCount = 64 * 16 * 16;
// The second operand: 64 values including both ends of each range.
std::uint8_t second(int i) {
  static const int v[64] = {0,   1,   2,   3,   5,   7,   8,   15,  16,  31,  32,  63,  64,
                            100, 126, 127, 128, 129, 130, 150, 190, 200, 250, 251, 252, 253,
                            254, 255, 9,   10,  11,  12,  13,  17,  19,  23,  29,  37,  41,
                            43,  47,  53,  59,  61,  67,  71,  73,  79,  83,  89,  97,  101,
                            103, 107, 109, 113, 180, 170, 160, 140, 220, 230, 240, 245};
  return static_cast<std::uint8_t>(v[i / 256]);
}
std::vector<std::uint8_t> firsts() {
  std::vector<std::uint8_t> a(kCount);
  for (int i = 0; i < kCount; ++i) a[i] = static_cast<std::uint8_t>(i % 256);
  return a;
}
std::vector<std::uint8_t> seconds() {
  std::vector<std::uint8_t> b(kCount);
  for (int i = 0; i < kCount; ++i) b[i] = second(i);
  return b;
}

TEST(BmOps, MulWidensRoundsAndSaturates) {
  for (fmt_t fa : {FMT_I8, FMT_U8})
    for (fmt_t fb : {FMT_I8, FMT_U8})
      for (int rs : {0, 1, 3, 7})
        for (bool wide : {false, true}) {
          SCOPED_TRACE(testing::Message() << "fa " << fa << " fb " << fb << " rs " << rs
                                          << " wide " << wide);
          Bm bm;
          const bool sg = fa == FMT_I8 || fb == FMT_I8;
          auto A = firsts(), B = seconds();
          tensor_lmem* a = bm.load(kShape, fa, A);
          tensor_lmem* b = bm.load(kShape, fb, B);
          tensor_lmem* lo = bmk1880_tl_alloc(bm.bk, kShape, fmt_of(sg), CTRL_AL);
          tensor_lmem* hi = wide ? bmk1880_tl_alloc(bm.bk, kShape, fmt_of(sg), CTRL_AL) : nullptr;
          bmk1880_mul_param_t p{hi, lo, a, b, rs};
          ASSERT_NE(bmk1880_tpu_mul(bm.bk, &p), nullptr) << tessera_bm_last_error();
          auto plo = bm.store(lo, kCount);
          auto phi = wide ? bm.store(hi, kCount) : plo;
          bm.submit();
          auto L = bm.read(plo), H = bm.read(phi);
          for (int i = 0; i < kCount; ++i) {
            const ll want = clamp_to(round_shift(val(A[i], fa) * val(B[i], fb), rs), sg, wide ? 16 : 8);
            const ll got = wide ? val16(H[i], L[i], sg) : val(L[i], fmt_of(sg));
            ASSERT_EQ(got, want) << "a " << val(A[i], fa) << " b " << val(B[i], fb);
          }
        }
}

TEST(BmOps, MulConstAndMacConst) {
  for (bool b_signed : {true, false})
    for (int rs : {0, 2}) {
      Bm bm;
      auto A = firsts();
      const s8 bconst = -3;
      const ll bv = b_signed ? -3 : 253;
      tensor_lmem* a = bm.load(kShape, FMT_I8, A);
      tensor_lmem* lo = bmk1880_tl_alloc(bm.bk, kShape, FMT_I8, CTRL_AL);
      bmk1880_mul_const_param_t p{nullptr, lo, a, bconst, b_signed, rs};
      ASSERT_NE(bmk1880_tpu_mul_const(bm.bk, &p), nullptr) << tessera_bm_last_error();
      auto plo = bm.store(lo, kCount);
      // mac_const into a 16-bit accumulator preset to 1000, 8-bit result.
      std::vector<std::uint8_t> acc_hi(kCount, b8(1000 >> 8)), acc_lo(kCount, b8(1000));
      tensor_lmem* rh = bm.load(kShape, FMT_I8, acc_hi);
      tensor_lmem* rl = bm.load(kShape, FMT_I8, acc_lo);
      bmk1880_mac_const_param_t m{rh, rl, true, a, bconst, b_signed, 1, rs};
      ASSERT_NE(bmk1880_tpu_mac_const(bm.bk, &m), nullptr) << tessera_bm_last_error();
      auto pm = bm.store(rl, kCount);
      bm.submit();
      auto L = bm.read(plo), M = bm.read(pm);
      for (int i = 0; i < kCount; ++i) {
        const ll a_v = val(A[i], FMT_I8);
        ASSERT_EQ(val(L[i], FMT_I8), clamp_to(round_shift(a_v * bv, rs), true, 8));
        ASSERT_EQ(val(M[i], FMT_I8), clamp_to(round_shift(a_v * bv + 2000, rs), true, 8));
      }
    }
}

TEST(BmOps, MacAccumulatesSixteenBits) {
  for (bool int8 : {false, true})
    for (int ls : {0, 2})
      for (int rs : {0, 4}) {
        Bm bm;
        auto A = firsts(), B = seconds();
        std::vector<std::uint8_t> RH(kCount), RL(kCount);
        const int acc[4] = {-30000, -1, 0, 12345};
        for (int i = 0; i < kCount; ++i) {
          const int v = acc[(i / 64) % 4];
          RH[i] = b8(v >> 8);
          RL[i] = b8(v);
        }
        tensor_lmem* a = bm.load(kShape, FMT_I8, A);
        tensor_lmem* b = bm.load(kShape, FMT_U8, B);
        tensor_lmem* rh = bm.load(kShape, FMT_I8, RH);
        tensor_lmem* rl = bm.load(kShape, FMT_I8, RL);
        bmk1880_mac_param_t p{rh, rl, int8, a, b, ls, rs};
        ASSERT_NE(bmk1880_tpu_mac(bm.bk, &p), nullptr) << tessera_bm_last_error();
        auto ph = bm.store(rh, kCount), pl = bm.store(rl, kCount);
        bm.submit();
        auto H = bm.read(ph), L = bm.read(pl);
        for (int i = 0; i < kCount; ++i) {
          const ll in = val16(RH[i], RL[i], true);
          const ll v = round_shift(val(A[i], FMT_I8) * val(B[i], FMT_U8) + in * (1LL << ls), rs);
          if (int8)
            ASSERT_EQ(val(L[i], FMT_I8), clamp_to(v, true, 8));
          else
            ASSERT_EQ(val16(H[i], L[i], true), clamp_to(v, true, 16));
        }
      }
}

// 16-bit a over every low byte with four high bytes, b over 16 values.
void sixteen_bit(std::vector<std::uint8_t>& ah, std::vector<std::uint8_t>& al,
                 std::vector<std::uint8_t>& bh, std::vector<std::uint8_t>& bl) {
  const int highs[4] = {0x00, 0x7f, 0x80, 0xff};
  const int bs[16] = {0, 1, -1, 255, 256, -256, 32767, -32768, 1000, -1000, 127, -128, 40000 - 65536,
                      12, 65535 - 65536, 300};
  ah.resize(kCount), al.resize(kCount), bh.resize(kCount), bl.resize(kCount);
  for (int i = 0; i < kCount; ++i) {
    al[i] = b8(i % 256);
    ah[i] = b8(highs[(i / 256) % 4]);
    const int b = bs[i / 1024];
    bh[i] = b8(b >> 8);
    bl[i] = b8(b);
  }
}

// A NULL tensor b is the caller's error in mul, mac, max and min; only their *_const forms take
// a constant b.
TEST(BmOps, NullTensorOperandIsAUserError) {
  Bm bm;
  tensor_lmem* a = bm.load(kShape, FMT_I8, firsts());
  tensor_lmem* hi = bmk1880_tl_alloc(bm.bk, kShape, FMT_I8, CTRL_AL);
  tensor_lmem* lo = bmk1880_tl_alloc(bm.bk, kShape, FMT_I8, CTRL_AL);
  bmk1880_mul_param_t mul{nullptr, lo, a, nullptr, 0};
  EXPECT_EQ(bmk1880_tpu_mul(bm.bk, &mul), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "bmk1880_tpu_mul: b is NULL");
  bmk1880_mac_param_t mac{hi, lo, true, a, nullptr, 0, 0};
  EXPECT_EQ(bmk1880_tpu_mac(bm.bk, &mac), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "bmk1880_tpu_mac: b is NULL");
  bmk1880_max_param_t max{lo, a, nullptr};
  EXPECT_EQ(bmk1880_tpu_max(bm.bk, &max), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "bmk1880_tpu_max: b is NULL");
  bmk1880_min_param_t min{lo, a, nullptr};
  EXPECT_EQ(bmk1880_tpu_min(bm.bk, &min), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "bmk1880_tpu_min: b is NULL");
}

TEST(BmOps, AddAndSubOnSixteenBitOperands) {
  for (bool sg : {true, false})
    for (bool sub : {false, true})
      for (bool wide : {false, true}) {
        if (sub && !sg) continue;  // a subtraction's result is signed
        Bm bm;
        std::vector<std::uint8_t> AH, AL, BH, BL;
        sixteen_bit(AH, AL, BH, BL);
        const fmt_t f = fmt_of(sg);
        tensor_lmem* ah = bm.load(kShape, f, AH);
        tensor_lmem* al = bm.load(kShape, FMT_U8, AL);
        tensor_lmem* bh = bm.load(kShape, f, BH);
        tensor_lmem* bl = bm.load(kShape, FMT_U8, BL);
        tensor_lmem* lo = bmk1880_tl_alloc(bm.bk, kShape, f, CTRL_AL);
        tensor_lmem* hi = wide ? bmk1880_tl_alloc(bm.bk, kShape, f, CTRL_AL) : nullptr;
        if (sub) {
          bmk1880_sub_param_t p{hi, lo, ah, al, bh, bl};
          ASSERT_NE(bmk1880_tpu_sub(bm.bk, &p), nullptr) << tessera_bm_last_error();
        } else {
          bmk1880_add_param_t p{hi, lo, ah, al, bh, bl};
          ASSERT_NE(bmk1880_tpu_add(bm.bk, &p), nullptr) << tessera_bm_last_error();
        }
        auto pl = bm.store(lo, kCount);
        auto ph = wide ? bm.store(hi, kCount) : pl;
        bm.submit();
        auto L = bm.read(pl), H = bm.read(ph);
        for (int i = 0; i < kCount; ++i) {
          const ll a = val16(AH[i], AL[i], sg), b = val16(BH[i], BL[i], sg);
          const ll want = clamp_to(sub ? a - b : a + b, sg, wide ? 16 : 8);
          const ll got = wide ? val16(H[i], L[i], sg) : val(L[i], f);
          ASSERT_EQ(got, want) << a << (sub ? " - " : " + ") << b;
        }
      }
}

TEST(BmOps, AddConst) {
  for (bool b_signed : {true, false}) {
    Bm bm;
    std::vector<std::uint8_t> AH, AL, BH, BL;
    sixteen_bit(AH, AL, BH, BL);
    tensor_lmem* ah = bm.load(kShape, FMT_I8, AH);
    tensor_lmem* al = bm.load(kShape, FMT_U8, AL);
    tensor_lmem* lo = bmk1880_tl_alloc(bm.bk, kShape, FMT_I8, CTRL_AL);
    tensor_lmem* hi = bmk1880_tl_alloc(bm.bk, kShape, FMT_I8, CTRL_AL);
    bmk1880_add_const_param_t p{hi, lo, ah, al, static_cast<s16>(-20000), b_signed};
    ASSERT_NE(bmk1880_tpu_add_const(bm.bk, &p), nullptr) << tessera_bm_last_error();
    auto pl = bm.store(lo, kCount), ph = bm.store(hi, kCount);
    bm.submit();
    auto L = bm.read(pl), H = bm.read(ph);
    const ll b = b_signed ? -20000 : 65536 - 20000;
    for (int i = 0; i < kCount; ++i)
      ASSERT_EQ(val16(H[i], L[i], true), clamp_to(val16(AH[i], AL[i], true) + b, true, 16));
  }
}

TEST(BmOps, MaxMinReluAndTheirConstForms) {
  for (fmt_t f : {FMT_I8, FMT_U8}) {
    Bm bm;
    auto A = firsts(), B = seconds();
    tensor_lmem* a = bm.load(kShape, f, A);
    tensor_lmem* b = bm.load(kShape, f, B);
    tensor_lmem* mx = bmk1880_tl_alloc(bm.bk, kShape, f, CTRL_AL);
    tensor_lmem* mn = bmk1880_tl_alloc(bm.bk, kShape, f, CTRL_AL);
    tensor_lmem* mc = bmk1880_tl_alloc(bm.bk, kShape, f, CTRL_AL);
    tensor_lmem* nc = bmk1880_tl_alloc(bm.bk, kShape, f, CTRL_AL);
    tensor_lmem* rl = bmk1880_tl_alloc(bm.bk, kShape, f, CTRL_AL);
    const bool sg = f == FMT_I8;
    bmk1880_max_param_t p1{mx, a, b};
    bmk1880_min_param_t p2{mn, a, b};
    bmk1880_max_const_param_t p3{mc, a, static_cast<s8>(-5), sg};
    bmk1880_min_const_param_t p4{nc, a, static_cast<s8>(-5), sg};
    bmk1880_relu_param_t p5{rl, a};
    ASSERT_NE(bmk1880_tpu_max(bm.bk, &p1), nullptr) << tessera_bm_last_error();
    ASSERT_NE(bmk1880_tpu_min(bm.bk, &p2), nullptr);
    ASSERT_NE(bmk1880_tpu_max_const(bm.bk, &p3), nullptr) << tessera_bm_last_error();
    ASSERT_NE(bmk1880_tpu_min_const(bm.bk, &p4), nullptr);
    ASSERT_NE(bmk1880_tpu_relu(bm.bk, &p5), nullptr);
    auto s1 = bm.store(mx, kCount), s2 = bm.store(mn, kCount), s3 = bm.store(mc, kCount),
         s4 = bm.store(nc, kCount), s5 = bm.store(rl, kCount);
    bm.submit();
    auto X = bm.read(s1), N = bm.read(s2), XC = bm.read(s3), NC = bm.read(s4), R = bm.read(s5);
    const ll c = sg ? -5 : 251;
    for (int i = 0; i < kCount; ++i) {
      const ll av = val(A[i], f), bv = val(B[i], f);
      ASSERT_EQ(val(X[i], f), av > bv ? av : bv);
      ASSERT_EQ(val(N[i], f), av < bv ? av : bv);
      ASSERT_EQ(val(XC[i], f), av > c ? av : c);
      ASSERT_EQ(val(NC[i], f), av < c ? av : c);
      ASSERT_EQ(val(R[i], f), av > 0 ? av : 0);
    }
  }
}

TEST(BmOps, ArithShiftAndLogicalOps) {
  Bm bm;
  std::vector<std::uint8_t> AH, AL, BH, BL, bits(kCount);
  sixteen_bit(AH, AL, BH, BL);
  for (int i = 0; i < kCount; ++i) bits[i] = b8((i / 64) % 33 - 16);  // every shift in [-16, 16]
  tensor_lmem* ah = bm.load(kShape, FMT_I8, AH);
  tensor_lmem* al = bm.load(kShape, FMT_I8, AL);
  tensor_lmem* bt = bm.load(kShape, FMT_I8, bits);
  tensor_lmem* rh = bmk1880_tl_alloc(bm.bk, kShape, FMT_I8, CTRL_AL);
  tensor_lmem* rl = bmk1880_tl_alloc(bm.bk, kShape, FMT_I8, CTRL_AL);
  bmk1880_arith_shift_param_t p{rh, rl, ah, al, bt};
  ASSERT_NE(bmk1880_tpu_arith_shift(bm.bk, &p), nullptr) << tessera_bm_last_error();
  auto sh = bm.store(rh, kCount), sl = bm.store(rl, kCount);
  tensor_lmem* bh = bm.load(kShape, FMT_I8, BH);
  tensor_lmem* bl = bm.load(kShape, FMT_I8, BL);
  tensor_lmem* x8 = bmk1880_tl_alloc(bm.bk, kShape, FMT_I8, CTRL_AL);
  tensor_lmem* o16h = bmk1880_tl_alloc(bm.bk, kShape, FMT_I8, CTRL_AL);
  tensor_lmem* o16l = bmk1880_tl_alloc(bm.bk, kShape, FMT_I8, CTRL_AL);
  tensor_lmem* a8 = bmk1880_tl_alloc(bm.bk, kShape, FMT_I8, CTRL_AL);
  bmk1880_xor_int8_param_t px{x8, al, bl};
  bmk1880_or_int16_param_t po{o16h, o16l, ah, al, bh, bl};
  bmk1880_and_int8_param_t pa{a8, ah, bl};
  ASSERT_NE(bmk1880_tpu_xor_int8(bm.bk, &px), nullptr);
  ASSERT_NE(bmk1880_tpu_or_int16(bm.bk, &po), nullptr);
  ASSERT_NE(bmk1880_tpu_and_int8(bm.bk, &pa), nullptr);
  auto sx = bm.store(x8, kCount), soh = bm.store(o16h, kCount), sol = bm.store(o16l, kCount),
       sa = bm.store(a8, kCount);
  bm.submit();
  auto H = bm.read(sh), L = bm.read(sl), X = bm.read(sx), OH = bm.read(soh), OL = bm.read(sol),
       AN = bm.read(sa);
  for (int i = 0; i < kCount; ++i) {
    const ll a = val16(AH[i], AL[i], true);
    const int s = static_cast<std::int8_t>(bits[i]);
    const ll want = clamp_to(s >= 0 ? static_cast<ll>(std::floor(a / std::ldexp(1.0, s)))
                                    : a * (1LL << -s),
                             true, 16);
    ASSERT_EQ(val16(H[i], L[i], true), want) << a << " >> " << s;
    ASSERT_EQ(X[i], AL[i] ^ BL[i]);
    ASSERT_EQ(OH[i], AH[i] | BH[i]);
    ASSERT_EQ(OL[i], AL[i] | BL[i]);
    ASSERT_EQ(AN[i], AH[i] & BL[i]);
  }
}

TEST(BmOps, LutLooksUpTheTableOfTheDatumsLane) {
  Bm bm;
  const bmk1880_chip_info_t info = bmk1880_chip_info();
  std::vector<std::uint8_t> table(std::size_t{info.npu_num} * 256);
  for (u32 lane = 0; lane < info.npu_num; ++lane)
    for (int e = 0; e < 256; ++e) table[lane * 256 + e] = b8(e * 3 + static_cast<int>(lane));
  tensor_lmem* t = bm.load(shape_t4(1, static_cast<int>(info.npu_num), 16, 16), FMT_U8, table);
  auto A = firsts();
  tensor_lmem* in = bm.load(kShape, FMT_I8, A);
  tensor_lmem* out = bmk1880_tl_alloc(bm.bk, kShape, FMT_U8, CTRL_AL);
  bmk1880_lut_param_t p{out, in, t};
  ASSERT_NE(bmk1880_tpu_lut(bm.bk, &p), nullptr) << tessera_bm_last_error();
  auto so = bm.store(out, kCount);
  bm.submit();
  auto O = bm.read(so);
  for (int i = 0; i < kCount; ++i) {
    const int channel = i / 256, lane = channel % static_cast<int>(info.npu_num);
    ASSERT_EQ(O[i], b8(A[i] * 3 + lane)) << i;
  }
}

TEST(BmOps, MdsumSumsEachChannel) {
  Bm bm;
  const shape_t s = shape_t4(2, 40, 3, 5);
  const int n = 2 * 40 * 15;
  std::vector<std::uint8_t> A(n);
  for (int i = 0; i < n; ++i) A[i] = b8(i * 37 + 11);
  tensor_lmem* a = bm.load(s, FMT_I8, A);
  tensor_lmem* hi = bmk1880_tl_alloc(bm.bk, shape_t4(1, 40, 1, 1), FMT_I8, CTRL_NULL);
  tensor_lmem* lo = bmk1880_tl_alloc(bm.bk, shape_t4(1, 40, 1, 1), FMT_I8, CTRL_NULL);
  bmk1880_mdsum_param_t p{hi, lo, a};
  ASSERT_NE(bmk1880_tpu_mdsum(bm.bk, &p), nullptr) << tessera_bm_last_error();
  auto sh = bm.store(hi, 40), sl = bm.store(lo, 40);
  bm.submit();
  auto H = bm.read(sh), L = bm.read(sl);
  for (int c = 0; c < 40; ++c) {
    ll sum = 0;
    for (int nn = 0; nn < 2; ++nn)
      for (int k = 0; k < 15; ++k) sum += val(A[(nn * 40 + c) * 15 + k], FMT_I8);
    EXPECT_EQ(val16(H[c], L[c], true), clamp_to(sum, true, 16));
  }
}

// ---- GDMA layouts ----

TEST(BmGdma, TransposedLoadStridedStoreAndGmemCopy) {
  Bm bm;
  const int N = 3, C = 5, H = 2, W = 4;
  std::vector<std::uint8_t> g(N * C * H * W);
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = b8(static_cast<int>(i));
  // gmem holds (C, N, H, W); CTRL_TP loads it as the lmem tensor (N, C, H, W).
  bmmem_device_t src = bm.devmem(g.size());
  ASSERT_EQ(bm_memcpy_s2d(bm.ctx, src, g.data()), BM_SUCCESS);
  tensor_lmem* t = bmk1880_tl_alloc(bm.bk, shape_t4(N, C, H, W), FMT_I8, CTRL_NULL);
  ASSERT_NE(bmk1880_gdma_load(bm.bk, t, bmmem_device_addr(bm.ctx, src), CTRL_TP), nullptr);
  // Store with a gmem stride that leaves a gap of 3 bytes after every row.
  const int rs = W + 3;
  bmmem_device_t dst = bm.devmem(static_cast<std::size_t>(N * C * H * rs));
  ASSERT_NE(bmk1880_gdma_store_stride(bm.bk, t, bmmem_device_addr(bm.ctx, dst),
                                      stride_t4(C * H * rs, H * rs, rs, 1), CTRL_NULL),
            nullptr)
      << tessera_bm_last_error();
  // And copy gmem -> gmem with N/C transposition back to (C, N, H, W).
  bmmem_device_t back = bm.devmem(g.size());
  tensor_gmem gs{bmmem_device_addr(bm.ctx, src), shape_t4(C, N, H, W), stride_t4(N * H * W, H * W, W, 1)};
  tensor_gmem gd{bmmem_device_addr(bm.ctx, back), shape_t4(N, C, H, W), stride_t4(C * H * W, H * W, W, 1)};
  ASSERT_NE(bmk1880_gdma_copy_gmem(bm.bk, &gd, &gs, CTRL_TP), nullptr) << tessera_bm_last_error();
  bm.submit();
  std::vector<std::uint8_t> out(static_cast<std::size_t>(N * C * H * rs)), cp(g.size());
  ASSERT_EQ(bm_memcpy_d2s(bm.ctx, out.data(), dst), BM_SUCCESS);
  ASSERT_EQ(bm_memcpy_d2s(bm.ctx, cp.data(), back), BM_SUCCESS);
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c)
      for (int h = 0; h < H; ++h)
        for (int w = 0; w < W; ++w) {
          const std::uint8_t want = g[((c * N + n) * H + h) * W + w];
          EXPECT_EQ(out[((n * C + c) * H + h) * rs + w], want);
          EXPECT_EQ(cp[((n * C + c) * H + h) * W + w], want);
        }
}

TEST(BmGdma, LrnShiftMovesChannels) {
  for (bool right : {true, false}) {
    Bm bm;
    const shape_t s = shape_t4(2, 40, 2, 3);
    std::vector<std::uint8_t> A(2 * 40 * 6);
    for (std::size_t i = 0; i < A.size(); ++i) A[i] = b8(static_cast<int>(i) + 1);
    tensor_lmem* a = bm.load(s, FMT_I8, A, CTRL_NULL);
    tensor_lmem* d = bmk1880_tl_alloc(bm.bk, s, FMT_I8, CTRL_NULL);
    ASSERT_NE(bmk1880_gdma_lrn_shift(bm.bk, d, a, right, 3), nullptr) << tessera_bm_last_error();
    auto sd = bm.store(d, A.size());
    bm.submit();
    auto D = bm.read(sd);
    for (int n = 0; n < 2; ++n)
      for (int c = 0; c < 40; ++c)
        for (int k = 0; k < 6; ++k) {
          const int from = right ? c - 3 : c + 3;
          const std::uint8_t want = (from < 0 || from >= 40) ? 0 : A[(n * 40 + from) * 6 + k];
          EXPECT_EQ(D[(n * 40 + c) * 6 + k], want);
        }
  }
}

TEST(BmGdma, CopiesWithinLmemAndWithStride) {
  Bm bm;
  std::vector<std::uint8_t> A(4 * 8 * 6);
  for (std::size_t i = 0; i < A.size(); ++i) A[i] = b8(static_cast<int>(i) * 5);
  tensor_lmem* a = bm.load(shape_t4(1, 4, 8, 6), FMT_I8, A, CTRL_NULL);
  // Same data, reshaped (1, 4, 8, 6) -> (1, 4, 6, 8) by the GDMA (logical order kept).
  tensor_lmem* b = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 6, 8), FMT_I8, CTRL_NULL);
  ASSERT_NE(bmk1880_gdma_copy_lmem(bm.bk, b, a), nullptr) << tessera_bm_last_error();
  // The TPU copies every other column of a into a (1, 4, 8, 3) tensor.
  tensor_lmem* c = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 8, 3), FMT_I8, CTRL_NULL);
  tensor_lmem view = *a;
  view.shape = shape_t4(1, 4, 8, 3);
  bmk1880_copy_with_stride_param_t p{c, stride_t4(24, 24, 3, 1), &view, stride_t4(48, 48, 6, 2)};
  ASSERT_NE(bmk1880_tpu_copy_with_stride(bm.bk, &p), nullptr) << tessera_bm_last_error();
  auto sb = bm.store(b, A.size()), sc = bm.store(c, A.size() / 2);
  bm.submit();
  EXPECT_EQ(bm.read(sb), A);
  auto Cv = bm.read(sc);
  for (int i = 0; i < 4 * 8 * 3; ++i) EXPECT_EQ(Cv[i], A[i * 2]);
}

// ---- convolution, pooling, matrices ----

struct ConvCase {
  int n, cin, h, w, cout, kh, kw;
  int ins_h, ins_last_h, ins_w, ins_last_w, pt, pb, pl, pr, sh, sw, dh, dw;
  bool relu, bias;
  int rs;
};

// Reference: build the inserted and padded input explicitly, then a direct convolution.
std::vector<ll> conv_ref(const ConvCase& k, const std::vector<std::uint8_t>& x,
                         const std::vector<std::uint8_t>& wt, const std::vector<int>& bias,
                         bool depthwise, int& ho, int& wo) {
  const int H1 = (k.h - 1) * (k.ins_h + 1) + 1 + k.ins_last_h + k.pt + k.pb;
  const int W1 = (k.w - 1) * (k.ins_w + 1) + 1 + k.ins_last_w + k.pl + k.pr;
  std::vector<ll> xp(static_cast<std::size_t>(k.n * k.cin * H1 * W1), 0);
  for (int n = 0; n < k.n; ++n)
    for (int c = 0; c < k.cin; ++c)
      for (int y = 0; y < k.h; ++y)
        for (int xx = 0; xx < k.w; ++xx)
          xp[((n * k.cin + c) * H1 + k.pt + y * (k.ins_h + 1)) * W1 + k.pl + xx * (k.ins_w + 1)] =
              val(x[((n * k.cin + c) * k.h + y) * k.w + xx], FMT_I8);
  ho = (H1 - ((k.kh - 1) * k.dh + 1)) / k.sh + 1;
  wo = (W1 - ((k.kw - 1) * k.dw + 1)) / k.sw + 1;
  const int cout = depthwise ? k.cin : k.cout;
  std::vector<ll> out(static_cast<std::size_t>(k.n * cout * ho * wo));
  for (int n = 0; n < k.n; ++n)
    for (int co = 0; co < cout; ++co)
      for (int oy = 0; oy < ho; ++oy)
        for (int ox = 0; ox < wo; ++ox) {
          ll acc = k.bias ? bias[co] : 0;
          for (int ci = 0; ci < k.cin; ++ci) {
            if (depthwise && ci != co) continue;
            for (int ky = 0; ky < k.kh; ++ky)
              for (int kx = 0; kx < k.kw; ++kx) {
                // weight given as (cout, cin, kh, kw) here ((c, kh, kw) for depthwise)
                const ll wv = depthwise ? val(wt[(co * k.kh + ky) * k.kw + kx], FMT_I8)
                                        : val(wt[((co * k.cin + ci) * k.kh + ky) * k.kw + kx], FMT_I8);
                acc += xp[((n * k.cin + ci) * H1 + oy * k.sh + ky * k.dh) * W1 + ox * k.sw + kx * k.dw] * wv;
              }
          }
          if (k.relu && acc < 0) acc = 0;
          out[((n * cout + co) * ho + oy) * wo + ox] = clamp_to(round_shift(acc, k.rs), true, 8);
        }
  return out;
}

void run_conv(const ConvCase& k, bool depthwise, bool winograd) {
  Bm bm;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> d(-20, 20);
  std::vector<std::uint8_t> x(static_cast<std::size_t>(k.n * k.cin * k.h * k.w));
  for (auto& v : x) v = b8(d(rng));
  const int cout = depthwise ? k.cin : k.cout;
  std::vector<std::uint8_t> w(static_cast<std::size_t>(cout * (depthwise ? 1 : k.cin) * k.kh * k.kw));
  for (auto& v : w) v = b8(d(rng) / 4);
  std::vector<int> bias(static_cast<std::size_t>(cout));
  for (auto& v : bias) v = d(rng) * 37;
  int ho = 0, wo = 0;
  const std::vector<ll> want = conv_ref(k, x, w, bias, depthwise, ho, wo);

  tensor_lmem* in = bm.load(shape_t4(k.n, k.cin, k.h, k.w), FMT_I8, x);
  tensor_lmem* wt;
  if (depthwise) {
    wt = bm.load(shape_t4(1, cout, k.kh, k.kw), FMT_I8, w, CTRL_NULL);
  } else {
    // gmem holds the weight as (1, cout, kh*kw, cin) (spec 002 "bmk1880 tpu conv").
    std::vector<std::uint8_t> g(w.size());
    for (int co = 0; co < cout; ++co)
      for (int ci = 0; ci < k.cin; ++ci)
        for (int t = 0; t < k.kh * k.kw; ++t)
          g[(co * k.kh * k.kw + t) * k.cin + ci] = w[(co * k.cin + ci) * k.kh * k.kw + t];
    wt = bm.load(shape_t4(1, cout, k.kh * k.kw, k.cin), FMT_I8, g, CTRL_NULL);
    wt->shape = shape_t4(k.cin, cout, k.kh, k.kw);  // the logical shape conv takes
  }
  tensor_lmem* bt = nullptr;
  if (k.bias) {
    std::vector<std::uint8_t> b(static_cast<std::size_t>(2 * cout));
    for (int c = 0; c < cout; ++c) {
      b[c] = b8(bias[c]);
      b[cout + c] = b8(bias[c] >> 8);
    }
    bt = bm.load(shape_t4(2, cout, 1, 1), FMT_I8, b, CTRL_NULL);
  }
  tensor_lmem* out = bmk1880_tl_alloc(bm.bk, shape_t4(k.n, cout, ho, wo), FMT_I8, CTRL_AL);
  void* op;
  const u8 ih = b8(k.ins_h), ilh = b8(k.ins_last_h), iw = b8(k.ins_w), ilw = b8(k.ins_last_w);
  const u8 pt = b8(k.pt), pb = b8(k.pb), pl = b8(k.pl), pr = b8(k.pr);
  if (depthwise) {
    bmk1880_depthwise_param_t p{out, in, wt, bt, ih, ilh, iw, ilw, pt, pb, pl, pr,
                                b8(k.sh), b8(k.sw), k.rs};
    op = bmk1880_tpu_depthwise(bm.bk, &p);
  } else if (winograd) {
    bmk1880_winograd_param_t p{out, in, wt, bt, ih, ilh, iw, ilw, pt, pb, pl, pr, k.relu, k.rs};
    op = bmk1880_tpu_winograd(bm.bk, &p);
  } else {
    bmk1880_conv_param_t p{out, in, wt, bt, ih, ilh, iw, ilw, pt, pb, pl, pr,
                           b8(k.sh), b8(k.sw), b8(k.dh), b8(k.dw), k.relu, k.rs};
    op = bmk1880_tpu_conv(bm.bk, &p);
  }
  ASSERT_NE(op, nullptr) << tessera_bm_last_error();
  auto so = bm.store(out, want.size());
  bm.submit();
  auto got = bm.read(so);
  for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(val(got[i], FMT_I8), want[i]) << i;
}

TEST(BmConv, PaddingStrideDilationInsertionBiasReluShift) {
  run_conv({1, 3, 7, 6, 40, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, false, true, 4}, false, false);
  run_conv({2, 5, 9, 8, 6, 3, 2, 0, 0, 0, 0, 2, 0, 1, 2, 2, 1, 1, 2, true, true, 3}, false, false);
  run_conv({1, 4, 4, 5, 3, 2, 3, 1, 1, 2, 0, 0, 1, 1, 0, 1, 2, 1, 1, false, false, 0}, false, false);
}

TEST(BmConv, WinogradAndDepthwise) {
  run_conv({1, 6, 6, 7, 8, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, true, true, 5}, false, true);
  run_conv({2, 35, 7, 7, 0, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 1, 1, false, true, 2}, true, false);
}

TEST(BmPool, MaxAndAverage) {
  for (bool is_max : {true, false}) {
    Bm bm;
    const int N = 1, C = 34, H = 7, W = 6;
    std::vector<std::uint8_t> x(N * C * H * W);
    std::mt19937 rng(3);
    for (auto& v : x) v = b8(static_cast<int>(rng() % 256));
    const int kh = 3, kw = 2, sh = 2, sw = 2, pt = 1, pb = 1, pl = 0, pr = 1;
    const int H1 = H + pt + pb, W1 = W + pl + pr, ho = (H1 - kh) / sh + 1, wo = (W1 - kw) / sw + 1;
    tensor_lmem* in = bm.load(shape_t4(N, C, H, W), FMT_I8, x);
    tensor_lmem* out = bmk1880_tl_alloc(bm.bk, shape_t4(N, C, ho, wo), FMT_I8, CTRL_AL);
    void* op;
    if (is_max) {
      bmk1880_max_pooling_param_t p{out, in, kh, kw, 0, 0, 0, 0, pt, pb, pl, pr, sh, sw};
      op = bmk1880_tpu_max_pooling(bm.bk, &p);
    } else {
      bmk1880_avg_pooling_param_t p{out, in, kh, kw, 0, 0, 0, 0, pt, pb, pl, pr, sh, sw, 43, 8};
      op = bmk1880_tpu_avg_pooling(bm.bk, &p);
    }
    ASSERT_NE(op, nullptr) << tessera_bm_last_error();
    auto so = bm.store(out, static_cast<std::size_t>(N * C * ho * wo));
    bm.submit();
    auto got = bm.read(so);
    for (int c = 0; c < C; ++c)
      for (int oy = 0; oy < ho; ++oy)
        for (int ox = 0; ox < wo; ++ox) {
          ll best = -1000, sum = 0;
          for (int ky = 0; ky < kh; ++ky)
            for (int kx = 0; kx < kw; ++kx) {
              const int y = oy * sh + ky - pt, xx = ox * sw + kx - pl;
              const ll v = (y < 0 || y >= H || xx < 0 || xx >= W) ? 0 : val(x[(c * H + y) * W + xx], FMT_I8);
              best = std::max(best, v);
              sum += v;
            }
          const ll want = is_max ? best : clamp_to(round_shift(sum * 43, 8), true, 8);
          ASSERT_EQ(val(got[(c * ho + oy) * wo + ox], FMT_I8), want);
        }
  }
}

TEST(BmMatrix, MacWithBiasReluAndResultAdd) {
  const int R = 5, K = 37, C = 40;
  for (ctrl_t ctrls : {ctrl_t{CTRL_NULL}, ctrl_t{CTRL_RELU}, ctrl_t{CTRL_RA}})
    for (bool int8 : {true, false}) {
      Bm bm;
      std::mt19937 rng(11);
      std::vector<std::uint8_t> L(R * K), Rt(K * C), B(2 * C), prev(2 * R * C);
      for (auto& v : L) v = b8(static_cast<int>(rng() % 256));
      for (auto& v : Rt) v = b8(static_cast<int>(rng() % 41) - 20);
      std::vector<int> bias(C);
      for (int j = 0; j < C; ++j) {
        bias[j] = static_cast<int>(rng() % 2001) - 1000;
        B[j] = b8(bias[j]);
        B[C + j] = b8(bias[j] >> 8);
      }
      std::vector<int> pv(R * C);
      for (int i = 0; i < R * C; ++i) {
        pv[i] = static_cast<int>(rng() % 601) - 300;
        prev[i] = b8(pv[i]);
        prev[R * C + i] = b8(pv[i] >> 8);
      }
      const bool res16 = (ctrls & CTRL_RA) || !int8;
      tensor_lmem* l = bm.load(shape_t2(R, K), FMT_U8, L);
      tensor_lmem* r = bm.load(shape_t2(K, C), FMT_I8, Rt);
      tensor_lmem* b = bm.load(shape_t2(2, C), FMT_I8, B);
      tensor_lmem* res = (ctrls & CTRL_RA)
                             ? bm.load(shape_t2(2 * R, C), FMT_I8, prev)
                             : bmk1880_tl_alloc(bm.bk, shape_t2(res16 ? 2 * R : R, C), FMT_I8, CTRL_AL);
      bmk1880_matrix_mac_param_t p{res, l, r, b, 2, 6, int8, ctrls};
      ASSERT_NE(bmk1880_tpu_matrix_mac(bm.bk, &p), nullptr) << tessera_bm_last_error();
      auto so = bm.store(res, static_cast<std::size_t>((res16 ? 2 : 1) * R * C));
      bm.submit();
      auto got = bm.read(so);
      for (int i = 0; i < R; ++i)
        for (int j = 0; j < C; ++j) {
          ll acc = bias[j];
          for (int k = 0; k < K; ++k) acc += val(L[i * K + k], FMT_U8) * val(Rt[k * C + j], FMT_I8);
          if (ctrls & CTRL_RA) acc += ll{pv[i * C + j]} * 4;
          if ((ctrls & CTRL_RELU) && acc < 0) acc = 0;
          const ll v = round_shift(acc, 6);
          if (int8)
            ASSERT_EQ(val(got[i * C + j], FMT_I8), clamp_to(v, true, 8));
          else
            ASSERT_EQ(val16(got[R * C + i * C + j], got[i * C + j], true), clamp_to(v, true, 16));
        }
    }
}

TEST(BmMatrix, Mac2MultipliesTwo256Matrices) {
  Bm bm;
  std::vector<std::uint8_t> L(256 * 256), Rt(256 * 256);
  std::mt19937 rng(5);
  for (auto& v : L) v = b8(static_cast<int>(rng() % 5) - 2);
  for (auto& v : Rt) v = b8(static_cast<int>(rng() % 5) - 2);
  // left (0, i, 0, k) = L[i][k]; right (k, j / 16, 0, j % 16) = Rt[k][j]: both dense in gmem.
  tensor_lmem* l = bm.load(shape_t4(1, 256, 1, 256), FMT_I8, L);
  tensor_lmem* r = bm.load(shape_t4(256, 16, 1, 16), FMT_I8, Rt);
  tensor_lmem* res = bmk1880_tl_alloc(bm.bk, shape_t4(1, 256, 1, 256), FMT_I8, CTRL_AL);
  bmk1880_matrix_mac_2_param_t p{res, l, r};
  ASSERT_NE(bmk1880_tpu_matrix_mac_2(bm.bk, &p), nullptr) << tessera_bm_last_error();
  auto so = bm.store(res, 256 * 256);
  bm.submit();
  auto got = bm.read(so);
  for (int i = 0; i < 256; i += 17)
    for (int j = 0; j < 256; ++j) {
      ll acc = 0;
      for (int k = 0; k < 256; ++k) acc += val(L[i * 256 + k], FMT_I8) * val(Rt[k * 256 + j], FMT_I8);
      ASSERT_EQ(val(got[i * 256 + j], FMT_I8), clamp_to(acc, true, 8));
    }
}

}  // namespace

namespace {

// Partial sums beyond 2^24 (past float's exact integers) whose exact total is small: the
// result must be the exact integer sum.
TEST(BmMatrix, LongSumsAreExact) {
  Bm bm;
  const int K = 2200, C = 16;
  std::vector<std::uint8_t> L(K), Rt(static_cast<std::size_t>(K * C));
  for (int k = 0; k < K; ++k) {
    L[k] = b8(127);
    for (int j = 0; j < C; ++j) Rt[k * C + j] = b8(k == 0 ? j : (k < 1100 ? 127 : -127));
  }
  tensor_lmem* l = bm.load(shape_t2(1, K), FMT_I8, L);
  tensor_lmem* r = bm.load(shape_t2(K, C), FMT_I8, Rt);
  tensor_lmem* res = bmk1880_tl_alloc(bm.bk, shape_t2(2, C), FMT_I8, CTRL_AL);
  bmk1880_matrix_mac_param_t p{res, l, r, nullptr, 0, 0, false, CTRL_NULL};
  ASSERT_NE(bmk1880_tpu_matrix_mac(bm.bk, &p), nullptr) << tessera_bm_last_error();
  auto so = bm.store(res, 2 * C);
  bm.submit();
  auto got = bm.read(so);
  for (int j = 0; j < C; ++j) {
    // 127 * j + 1099 * 127 * 127 - 1100 * 127 * 127
    const ll want = 127LL * j - 127LL * 127;
    EXPECT_EQ(val16(got[C + j], got[j], true), want) << j;
  }
}

}  // namespace
