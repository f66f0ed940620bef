// The aicore target: Ascend C kernels computed on the simulated AI Core against host results,
// cycles that follow the preset (sim::CostModel), pipes that overlap as queues and flags allow,
// the Cube in its fractal layouts, the preset's published peaks, and determinism over 1, 2 and
// 8 host threads.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <thread>

#include "aicore_common.h"
#include "register/op_def_registry.h"
#include "tessera/compiler/driver.h"
#include "tessera/ops/gemm.h"
#include "tessera/ops/reference.h"
#include "tessera/sim/cost_model.h"
#include "tessera/targets/aicore/api/report.h"
#include "tessera/targets/aicore/backend/backend.h"
#include "tessera/targets/aicore/kernels/ops.h"
#include "tiling/context/context_builder.h"

using namespace aicore_test;
using namespace AscendC;

namespace {

constexpr int32_t kTile = 1024;  // halves per tile

// The double-buffered vector add of Ascend C's samples: queues carry every synchronisation.
template <int32_t Blocks, int32_t Tiles>
struct QueueAdd {
  TPipe pipe;
  TQue<QuePosition::VECIN, 2> qx, qy;
  TQue<QuePosition::VECOUT, 2> qz;
  GlobalTensor<half> x, y, z;
  void run(GM_ADDR px, GM_ADDR py, GM_ADDR pz) {
    const int64_t block = kTile * Tiles;
    x.SetGlobalBuffer((__gm__ half*)px + block * GetBlockIdx(), block);
    y.SetGlobalBuffer((__gm__ half*)py + block * GetBlockIdx(), block);
    z.SetGlobalBuffer((__gm__ half*)pz + block * GetBlockIdx(), block);
    pipe.InitBuffer(qx, 2, kTile * sizeof(half));
    pipe.InitBuffer(qy, 2, kTile * sizeof(half));
    pipe.InitBuffer(qz, 2, kTile * sizeof(half));
    for (int32_t i = 0; i < Tiles; ++i) {
      LocalTensor<half> a = qx.AllocTensor<half>(), b = qy.AllocTensor<half>();
      DataCopy(a, x[i * kTile], kTile);
      DataCopy(b, y[i * kTile], kTile);
      qx.EnQue(a);
      qy.EnQue(b);
      LocalTensor<half> ia = qx.DeQue<half>(), ib = qy.DeQue<half>();
      LocalTensor<half> c = qz.AllocTensor<half>();
      Add(c, ia, ib, kTile);
      qz.EnQue(c);
      qx.FreeTensor(ia);
      qy.FreeTensor(ib);
      LocalTensor<half> oc = qz.DeQue<half>();
      DataCopy(z[i * kTile], oc, kTile);
      qz.FreeTensor(oc);
    }
  }
};

void queue_add_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
  QueueAdd<8, 16> k;
  k.run(x, y, z);
}

TEST(AicoreAscendC, QueuedVectorAddMatchesTheHostAndOverlapsPipes) {
  const std::size_t n = 8 * 16 * kTile;
  Gm<half> x(n), y(n), z(n);
  fill(x, 1);
  fill(y, 2);
  const auto rec = ICPU_RUN_KF(queue_add_kernel, 8, x.addr(), y.addr(), z.addr());
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(
        static_cast<float>(z[i]),
        static_cast<float>(static_cast<half>(static_cast<float>(x[i]) + static_cast<float>(y[i]))))
        << i;
  ASSERT_EQ(rec.cycles_per_core.size(), 8u);
  // Double buffering overlaps MTE2, V and MTE3: a core ends before the sum of its pipes' work.
  const double busy = rec.metrics.at("busy.aicore0.MTE2") + rec.metrics.at("busy.aicore0.V") +
                      rec.metrics.at("busy.aicore0.MTE3");
  EXPECT_LT(static_cast<double>(rec.cycles_per_core[0]), busy);
  EXPECT_GT(rec.metrics.at("busy.aicore0.V"), 0.0);
  EXPECT_DOUBLE_EQ(rec.metrics.at("gm_bytes"), static_cast<double>(3 * n * sizeof(half)));
  EXPECT_NE(tessera::aicore::report().find("MTE2"), std::string::npos);
}

TEST(AicoreAscendC, ResultsAndCyclesDoNotDependOnHostThreads) {
  const std::size_t n = 8 * 16 * kTile;
  Gm<half> x(n), y(n);
  fill(x, 3);
  fill(y, 4);
  std::vector<std::vector<uint64_t>> cycles;
  std::vector<std::vector<uint16_t>> results;
  for (unsigned threads : {1u, 2u, 8u}) {
    tessera::aicore::set_threads(threads);
    Gm<half> z(n);
    const auto rec = ICPU_RUN_KF(queue_add_kernel, 8, x.addr(), y.addr(), z.addr());
    cycles.push_back(rec.cycles_per_core);
    std::vector<uint16_t> bits(n);
    std::memcpy(bits.data(), z.p, n * 2);
    results.push_back(bits);
  }
  tessera::aicore::set_threads(0);
  EXPECT_EQ(cycles[0], cycles[1]);
  EXPECT_EQ(cycles[0], cycles[2]);
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

// A single transfer and a single Cube instruction cost what the preset says.
void one_copy_kernel(GM_ADDR x) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> buf;
  pipe.InitBuffer(buf, 4096);
  GlobalTensor<half> g;
  g.SetGlobalBuffer((__gm__ half*)x, 2048);
  DataCopy(buf.Get<half>(), g, 2048);
}

TEST(AicoreCycles, TransfersCostBytesOverBandwidthPlusLatency) {
  Gm<half> x(2048);
  const auto rec = ICPU_RUN_KF(one_copy_kernel, 1, x.addr());
  const auto& cost = tessera::aicore::device().cost_model();
  const uint64_t want = cost.transfer_cycles("GM", "UB", 4096) +
                        static_cast<uint64_t>(cost.param("aicore.mte_setup_cycles", 0));
  EXPECT_EQ(rec.metrics.at("busy.aicore0.MTE2"), static_cast<double>(want));
  EXPECT_GE(rec.cycles_per_core[0], want);
}

// C (m x n) = A (m x k) x B (k x n) on the Cube: ND in GM, fractals built on the host side of
// the test (zZ for A, nZ for B), LoadData into L0A/L0B, Mmad twice (accumulate), CO1 -> CO2 as
// half, and the nZ result read back.
constexpr uint16_t M = 32, K = 64, N = 48;

void cube_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
  TPipe pipe;
  TQue<QuePosition::A1, 1> qa1;
  TQue<QuePosition::B1, 1> qb1;
  TQue<QuePosition::A2, 1> qa2;
  TQue<QuePosition::B2, 1> qb2;
  TQue<QuePosition::CO1, 1> qc1;
  TQue<QuePosition::CO2, 1> qc2;
  pipe.InitBuffer(qa1, 1, M * K * 2);
  pipe.InitBuffer(qb1, 1, K * N * 2);
  pipe.InitBuffer(qa2, 1, M * K * 2);
  pipe.InitBuffer(qb2, 1, K * N * 2);
  pipe.InitBuffer(qc1, 1, M * N * 4);
  pipe.InitBuffer(qc2, 1, M * N * 2);
  GlobalTensor<half> ga, gb, gc;
  ga.SetGlobalBuffer((__gm__ half*)a, M * K);
  gb.SetGlobalBuffer((__gm__ half*)b, K * N);
  gc.SetGlobalBuffer((__gm__ half*)c, M * N);
  LocalTensor<half> a1 = qa1.AllocTensor<half>(), b1 = qb1.AllocTensor<half>();
  DataCopy(a1, ga, M * K);
  DataCopy(b1, gb, K * N);
  qa1.EnQue(a1);
  qb1.EnQue(b1);
  a1 = qa1.DeQue<half>();
  b1 = qb1.DeQue<half>();
  LocalTensor<half> a2 = qa2.AllocTensor<half>(), b2 = qb2.AllocTensor<half>();
  LoadData(a2, a1, LoadData2dParams{0, static_cast<uint8_t>(M * K / 256), 1, 0, 0, false, 0});
  LoadData(b2, b1, LoadData2dParams{0, static_cast<uint8_t>(K * N / 256), 1, 0, 0, false, 0});
  qa2.EnQue(a2);
  qb2.EnQue(b2);
  qa1.FreeTensor(a1);
  qb1.FreeTensor(b1);
  a2 = qa2.DeQue<half>();
  b2 = qb2.DeQue<half>();
  LocalTensor<float> c1 = qc1.AllocTensor<float>();
  // One Mmad over the whole K (accumulation has its own test below).
  Mmad(c1, a2, b2, MmadParams{M, N, K, false, 0, false, false, false, 0, false, false, true});
  qc1.EnQue(c1);
  qa2.FreeTensor(a2);
  qb2.FreeTensor(b2);
  c1 = qc1.DeQue<float>();
  LocalTensor<half> c2 = qc2.AllocTensor<half>();
  DataCopy(c2, c1, DataCopyParams{1, static_cast<uint16_t>(M * N / 256), 0, 0},
           DataCopyEnhancedParams{BlockMode::BLOCK_MODE_MATRIX});
  qc2.EnQue(c2);
  qc1.FreeTensor(c1);
  c2 = qc2.DeQue<half>();
  DataCopy(gc, c2, M * N);
  qc2.FreeTensor(c2);
}

TEST(AicoreCube, MmadInFractalLayoutsMatchesAGemm) {
  std::vector<float> A(M * K), B(K * N), C(M * N);
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& v : A) v = static_cast<float>(static_cast<half>(d(gen)));
  for (auto& v : B) v = static_cast<float>(static_cast<half>(d(gen)));
  tessera::ops::sgemm(false, false, M, N, K, 1.0f, A.data(), K, B.data(), N, 0.0f, C.data(), N);
  Gm<half> a(M * K), b(K * N), c(M * N);
  const int k1 = K / 16, n1 = N / 16, m1 = M / 16;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < K; ++j)
      a[((i / 16) * k1 + j / 16) * 256 + (i % 16) * 16 + j % 16] = static_cast<half>(A[i * K + j]);
  for (int i = 0; i < K; ++i)
    for (int j = 0; j < N; ++j)
      b[((i / 16) * n1 + j / 16) * 256 + (j % 16) * 16 + i % 16] = static_cast<half>(B[i * N + j]);
  const auto rec = ICPU_RUN_KF(cube_kernel, 1, a.addr(), b.addr(), c.addr());
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      const float got =
          static_cast<float>(c[((j / 16) * m1 + i / 16) * 256 + (i % 16) * 16 + j % 16]);
      ASSERT_NEAR(got, C[i * N + j], 2e-3f + 1e-3f * std::fabs(C[i * N + j])) << i << "," << j;
    }
  const auto& cost = tessera::aicore::device().cost_model();
  const uint64_t steps = (M / 16) * (K / 16) * (N / 16);
  EXPECT_EQ(rec.metrics.at("busy.aicore0.M"), static_cast<double>(cost.pipe_latency("M") + steps));
}

// Accumulation: C = A x B, then C += A x B gives twice the product.
void accumulate_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
  TPipe pipe;
  TBuf<QuePosition::A2> ba;
  TBuf<QuePosition::B2> bb;
  TBuf<QuePosition::CO1> bc;
  TBuf<QuePosition::VECCALC> bu;
  pipe.InitBuffer(ba, 512);
  pipe.InitBuffer(bb, 512);
  pipe.InitBuffer(bc, 1024);
  pipe.InitBuffer(bu, 1024);
  GlobalTensor<half> ga, gb;
  GlobalTensor<float> gc;
  ga.SetGlobalBuffer((__gm__ half*)a, 256);
  gb.SetGlobalBuffer((__gm__ half*)b, 256);
  gc.SetGlobalBuffer((__gm__ float*)c, 256);
  LoadData(ba.Get<half>(), ga, LoadData2dParams{0, 1, 1, 0, 0, false, 0});
  LoadData(bb.Get<half>(), gb, LoadData2dParams{0, 1, 1, 0, 0, false, 0});
  SetFlag<HardEvent::MTE2_M>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_M>(EVENT_ID0);
  MmadParams p{16, 16, 16};
  Mmad(bc.Get<float>(), ba.Get<half>(), bb.Get<half>(), p);
  p.cmatrixInitVal = false;
  Mmad(bc.Get<float>(), ba.Get<half>(), bb.Get<half>(), p);
  SetFlag<HardEvent::M_V>(EVENT_ID0);
  WaitFlag<HardEvent::M_V>(EVENT_ID0);
  DataCopy(bu.Get<float>(), bc.Get<float>(), DataCopyParams{1, 1, 0, 0},
           DataCopyEnhancedParams{BlockMode::BLOCK_MODE_MATRIX});
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(gc, bu.Get<float>(), 256);
}

TEST(AicoreCube, MmadAccumulatesIntoL0C) {
  Gm<half> a(256), b(256);
  Gm<float> c(256);
  for (int i = 0; i < 256; ++i) {
    a[i] = static_cast<half>(i % 16 == i / 16 ? 1.0f : 0.0f);  // identity (zZ = row-major)
    b[i] = static_cast<half>(0.5f * static_cast<float>(i % 7));
  }
  ICPU_RUN_KF(accumulate_kernel, 1, a.addr(), b.addr(), c.addr());
  // B in nZ holds B^T row-major per fractal: C[i][j] = B[i][j] = b[j * 16 + i]; doubled.
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j)
      EXPECT_FLOAT_EQ(c[i * 16 + j], 2.0f * static_cast<float>(b[j * 16 + i])) << i << "," << j;
}

// Each vector API against its host definition, on 256 halves (or floats) in UB.
enum class V {
  sub,
  mul,
  div,
  max,
  min,
  adds,
  muls,
  exp,
  ln,
  abs,
  sqrt,
  relu,
  dup,
  cast,
  rsum,
  rmax,
  cmpsel,
  masked,
  strided
};

template <V Which>
void vec_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> bx, by, bz, bw, bm;
  pipe.InitBuffer(bx, 512);
  pipe.InitBuffer(by, 512);
  pipe.InitBuffer(bz, 1024);
  pipe.InitBuffer(bw, 1024);
  pipe.InitBuffer(bm, 256);
  GlobalTensor<half> gx, gy, gz;
  gx.SetGlobalBuffer((__gm__ half*)x, 256);
  gy.SetGlobalBuffer((__gm__ half*)y, 256);
  gz.SetGlobalBuffer((__gm__ half*)z, 512);
  LocalTensor<half> lx = bx.Get<half>(), ly = by.Get<half>(), lz = bz.Get<half>();
  DataCopy(lx, gx, 256);
  DataCopy(ly, gy, 256);
  Duplicate(lz, static_cast<half>(0), 512);
  PipeBarrier<PIPE_ALL>();
  if constexpr (Which == V::sub) Sub(lz, lx, ly, 256);
  if constexpr (Which == V::mul) Mul(lz, lx, ly, 256);
  if constexpr (Which == V::div) Div(lz, lx, ly, 256);
  if constexpr (Which == V::max) Max(lz, lx, ly, 256);
  if constexpr (Which == V::min) Min(lz, lx, ly, 256);
  if constexpr (Which == V::adds) Adds(lz, lx, 1.5f, 256);  // a float scalar converts to half
  if constexpr (Which == V::muls) Muls(lz, lx, static_cast<half>(-2.0f), 256);
  if constexpr (Which == V::exp) Exp(lz, lx, 256);
  if constexpr (Which == V::ln) Ln(lz, ly, 256);
  if constexpr (Which == V::abs) Abs(lz, lx, 256);
  if constexpr (Which == V::sqrt) Sqrt(lz, ly, 256);
  if constexpr (Which == V::relu) Relu(lz, lx, 256);
  if constexpr (Which == V::dup) Duplicate(lz, static_cast<half>(3.25f), 256);
  if constexpr (Which == V::cast) {
    LocalTensor<float> f = bw.Get<float>();
    Cast(f, lx, RoundMode::CAST_NONE, 256);
    Muls(f, f, 3.0f, 256);
    Cast(lz, f, RoundMode::CAST_NONE, 256);
  }
  if constexpr (Which == V::rsum) ReduceSum(lz, lx, bw.Get<half>(), 256);
  if constexpr (Which == V::rmax) ReduceMax(lz, lx, bw.Get<half>(), 256, true);
  if constexpr (Which == V::cmpsel) {
    LocalTensor<uint8_t> m = bm.Get<uint8_t>();
    Compare(m, lx, ly, CMPMODE::GT, 256);
    Select(lz, m, lx, ly, SELMODE::VSEL_TENSOR_TENSOR_MODE, 256);
  }
  if constexpr (Which == V::masked) {
    // 2 repeats of the first 100 lanes of 128.
    Add(lz, lx, ly, 100, 2, BinaryRepeatParams{1, 1, 1, 8, 8, 8});
  }
  if constexpr (Which == V::strided) {
    // dst blocks 2 apart: block b of x goes to block 2b of z (one repeat, 128 lanes).
    Add(lz, lx, ly, 128, 1, BinaryRepeatParams{2, 1, 1, 16, 8, 8});
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(gz, lz, 512);
}

template <V Which, typename F>
void check_vec(F expect, unsigned seed, float tol = 0.0f) {
  Gm<half> x(256), y(256), z(512);
  fill(x, seed);
  fill(y, seed + 100, 0.25f, 3.0f);
  ICPU_RUN_KF(vec_kernel<Which>, 1, x.addr(), y.addr(), z.addr());
  for (int i = 0; i < 512; ++i) {
    const float want = expect(i, x.p, y.p);
    const float got = static_cast<float>(z[i]);
    if (std::isnan(want)) continue;
    ASSERT_NEAR(got, want, tol + tol * std::fabs(want)) << "element " << i;
  }
}

float f(const half* p, int i) {
  return static_cast<float>(p[i]);
}
float h(float v) {
  return static_cast<float>(static_cast<half>(v));
}

TEST(AicoreVector, EveryApiMatchesItsDefinition) {
  auto in = [](int i) { return i < 256; };
  check_vec<V::sub>([&](int i, half* x, half* y) { return in(i) ? h(f(x, i) - f(y, i)) : 0.0f; },
                    1);
  check_vec<V::mul>([&](int i, half* x, half* y) { return in(i) ? h(f(x, i) * f(y, i)) : 0.0f; },
                    2);
  check_vec<V::div>([&](int i, half* x, half* y) { return in(i) ? h(f(x, i) / f(y, i)) : 0.0f; },
                    3);
  check_vec<V::max>(
      [&](int i, half* x, half* y) { return in(i) ? std::max(f(x, i), f(y, i)) : 0.0f; }, 4);
  check_vec<V::min>(
      [&](int i, half* x, half* y) { return in(i) ? std::min(f(x, i), f(y, i)) : 0.0f; }, 5);
  check_vec<V::adds>([&](int i, half* x, half*) { return in(i) ? h(f(x, i) + 1.5f) : 0.0f; }, 6);
  check_vec<V::muls>([&](int i, half* x, half*) { return in(i) ? h(f(x, i) * -2.0f) : 0.0f; }, 7);
  check_vec<V::exp>([&](int i, half* x, half*) { return in(i) ? std::exp(f(x, i)) : 0.0f; }, 8,
                    1e-3f);
  check_vec<V::ln>([&](int i, half*, half* y) { return in(i) ? std::log(f(y, i)) : 0.0f; }, 9,
                   1e-3f);
  check_vec<V::abs>([&](int i, half* x, half*) { return in(i) ? std::fabs(f(x, i)) : 0.0f; }, 10);
  check_vec<V::sqrt>([&](int i, half*, half* y) { return in(i) ? std::sqrt(f(y, i)) : 0.0f; }, 11,
                     1e-3f);
  check_vec<V::relu>([&](int i, half* x, half*) { return in(i) ? std::max(f(x, i), 0.0f) : 0.0f; },
                     12);
  check_vec<V::dup>([&](int i, half*, half*) { return in(i) ? 3.25f : 0.0f; }, 13);
  check_vec<V::cast>([&](int i, half* x, half*) { return in(i) ? h(f(x, i) * 3.0f) : 0.0f; }, 14);
  check_vec<V::cmpsel>(
      [&](int i, half* x, half* y) { return in(i) ? std::max(f(x, i), f(y, i)) : 0.0f; }, 15);
  check_vec<V::masked>(
      [&](int i, half* x, half* y) {
        return i < 256 && i % 128 < 100 ? h(f(x, i) + f(y, i)) : 0.0f;
      },
      16);
  check_vec<V::strided>(
      [&](int i, half* x, half* y) {
        const int block = i / 16, lane = i % 16;
        if (block % 2 || block >= 16) return 0.0f;
        const int s = (block / 2) * 16 + lane;
        return h(f(x, s) + f(y, s));
      },
      17);
}

TEST(AicoreVector, Reductions) {
  Gm<half> x(256), y(256), z(512);
  fill(x, 21);
  fill(y, 22);
  ICPU_RUN_KF(vec_kernel<V::rsum>, 1, x.addr(), y.addr(), z.addr());
  float sum = 0;
  for (int i = 0; i < 256; ++i) sum += f(x.p, i);
  EXPECT_NEAR(static_cast<float>(z[0]), sum, 0.05f);
  ICPU_RUN_KF(vec_kernel<V::rmax>, 1, x.addr(), y.addr(), z.addr());
  int at = 0;
  for (int i = 1; i < 256; ++i)
    if (f(x.p, i) > f(x.p, at)) at = i;
  EXPECT_EQ(static_cast<float>(z[0]), f(x.p, at));
  uint16_t index;
  std::memcpy(&index, &z.p[1], 2);
  EXPECT_EQ(index, at);
}

TEST(AicorePreset, ModeledPeaksEqualHuaweisPublishedFigures) {
  const auto& spec = tessera::aicore::device().spec();
  const double clock = spec.clock_hz.value;
  const double macs = spec.param("aicore.cube_m").value * spec.param("aicore.cube_k").value *
                      spec.param("aicore.cube_n").value;
  // 256 TFLOPS fp16 (Ascend 910) and 1.2 TB/s HBM (Hot Chips 31).
  EXPECT_NEAR(2.0 * macs * static_cast<double>(spec.core_count.as_int()) * clock /
                  spec.param("aicore.cube_cycles_per_step").value,
              256e12, 1e9);
  EXPECT_NEAR(spec.global().bandwidth_bytes_per_cycle.value * clock, 1.2e12, 1e9);
}

}  // namespace

namespace {

// The op library's Cube GEMM: fractal layouts in, fractal layout out, f32 accumulation.
TEST(AicoreKernels, MatmulF16MatchesAGemmOverSeveralTilesAndChunks) {
  constexpr int m = 512, k = 256, n = 256;
  std::vector<float> A(m * k), B(k * n), C(m * n);
  std::mt19937 gen(9);
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& v : A) v = static_cast<float>(static_cast<half>(d(gen)));
  for (auto& v : B) v = static_cast<float>(static_cast<half>(d(gen)));
  tessera::ops::sgemm(false, false, m, n, k, 1.0f, A.data(), k, B.data(), n, 0.0f, C.data(), n);
  const int k1 = k / 16, n1 = n / 16, m1 = m / 16;
  std::vector<uint16_t> a(m * k), b(k * n), c(m * n);
  auto bits = [](float v) { return tessera::f32_to_f16_bits(v); };
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < k; ++j)
      a[((i / 16) * k1 + j / 16) * 256 + (i % 16) * 16 + j % 16] = bits(A[i * k + j]);
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < n; ++j)
      b[((i / 16) * n1 + j / 16) * 256 + (j % 16) * 16 + i % 16] = bits(B[i * n + j]);
  const auto rec = tessera::aicore::kernels::matmul_f16(tessera::aicore::device(), a.data(),
                                                        b.data(), c.data(), m, k, n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      const float got =
          tessera::f16_bits_to_f32(c[((j / 16) * m1 + i / 16) * 256 + (i % 16) * 16 + j % 16]);
      ASSERT_NEAR(got, C[i * n + j], 4e-3f + 1e-3f * std::fabs(C[i * n + j])) << i << "," << j;
    }
  EXPECT_EQ(rec.cycles_per_core.size(), 2u);  // 2 x 1 tiles of 256 x 256
  EXPECT_GT(rec.metrics.at("busy.aicore0.M"), 0.0);
}

}  // namespace

namespace {

// The device profile: each core's pipes as "<core>/<pipe>" busy time, and with tracing on one
// track per pipe holding the instructions.
TEST(AicoreProfile, PipeBusyTimeAndOneTraceTrackPerPipe) {
  auto& dev = tessera::aicore::device();
  dev.reset_profile();
  dev.set_trace_enabled(true);
  const std::size_t n = 8 * 16 * kTile;
  Gm<half> x(n), y(n), z(n);
  ICPU_RUN_KF(queue_add_kernel, 8, x.addr(), y.addr(), z.addr());
  dev.synchronize();
  dev.set_trace_enabled(false);
  const auto& prof = dev.profile();
  EXPECT_GT(prof.pipe_busy_cycles.at("aicore0/MTE2"), 0u);
  EXPECT_GT(prof.pipe_busy_cycles.at("aicore7/V"), 0u);
  std::set<std::string> tracks;
  bool add_on_v = false;
  for (const auto& i : prof.trace) {
    tracks.insert(i.track);
    if (i.track.find("aicore3") != std::string::npos && i.track.find("V") != std::string::npos &&
        i.name == "Add")
      add_on_v = true;
  }
  EXPECT_TRUE(add_on_v);
  for (const char* p : {"MTE2", "V", "MTE3"})
    EXPECT_TRUE(std::any_of(tracks.begin(), tracks.end(), [&](const std::string& t) {
      return t.find("aicore0") != std::string::npos && t.size() >= std::strlen(p) &&
             t.compare(t.size() - std::strlen(p), std::strlen(p), p) == 0;
    })) << p;
}

}  // namespace

namespace {

// f32 matmul through the device: TransData to fp16 fractals, the Cube with f32 accumulation,
// ND f32 rows back; shapes that are not multiples of the tiles are padded and cropped.
TEST(AicoreKernels, MatmulOfF32RowsComputesInFp16WithF32Accumulation) {
  constexpr int m = 37, k = 150, n = 300;
  std::vector<float> A(m * k), B(k * n), C(m * n, -7.0f), want(m * n);
  std::mt19937 gen(13);
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& v : A) v = d(gen);
  for (auto& v : B) v = d(gen);
  std::vector<float> A16(A), B16(B);
  for (auto& v : A16) v = static_cast<float>(static_cast<half>(v));
  for (auto& v : B16) v = static_cast<float>(static_cast<half>(v));
  tessera::ops::sgemm(false, false, m, n, k, 1.0f, A16.data(), k, B16.data(), n, 0.0f, want.data(),
                      n);
  tessera::aicore::kernels::matmul(tessera::aicore::device(), A.data(), B.data(), C.data(), m, k,
                                   n);
  for (int i = 0; i < m * n; ++i)
    ASSERT_NEAR(C[i], want[i], 1e-4f + 1e-5f * std::fabs(want[i])) << i;
}

}  // namespace

namespace {

// Gemm's pieces: B given transposed, and C added with broadcasting (row vector, column vector,
// full matrix) and beta.
TEST(AicoreKernels, MatmulWithTransposedBAndBias) {
  constexpr int m = 20, k = 70, n = 40;
  std::vector<float> A(m * k), BT(n * k), C(m * n), want(m * n);
  std::mt19937 gen(17);
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& v : A) v = static_cast<float>(static_cast<half>(d(gen)));
  for (auto& v : BT) v = static_cast<float>(static_cast<half>(d(gen)));
  tessera::ops::sgemm(false, true, m, n, k, 1.0f, A.data(), k, BT.data(), k, 0.0f, want.data(), n);
  auto& dev = tessera::aicore::device();
  tessera::aicore::kernels::matmul(dev, A.data(), BT.data(), C.data(), m, k, n, true);
  for (int i = 0; i < m * n; ++i) ASSERT_NEAR(C[i], want[i], 1e-4f) << i;
  std::vector<float> row(n), col(m), full(m * n);
  for (auto& v : row) v = d(gen);
  for (auto& v : col) v = d(gen);
  for (auto& v : full) v = d(gen);
  tessera::aicore::kernels::add_bias(dev, C.data(), m, n, row.data(), 1, n, 2.0f);
  tessera::aicore::kernels::add_bias(dev, C.data(), m, n, col.data(), m, 1, 1.0f);
  tessera::aicore::kernels::add_bias(dev, C.data(), m, n, full.data(), m, n, -0.5f);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      ASSERT_NEAR(C[i * n + j], want[i * n + j] + 2.0f * row[j] + col[i] - 0.5f * full[i * n + j],
                  1e-4f)
          << i << "," << j;
}

}  // namespace

namespace {

// The backend declares fp16 compute; conformance and --check then hold its float outputs to
// the f16 tolerance, and integer outputs stay exact.
TEST(AicoreBackend, DeclaresFp16ComputeAndItsTolerance) {
  const auto backend = tessera::aicore::make_aicore_backend();
  EXPECT_EQ(backend->compute_precision(), tessera::DType::f16);
  const auto f32 = tessera::compiler::conformance_tolerance(tessera::DType::f32);
  const auto f16 = tessera::compiler::conformance_tolerance(tessera::DType::f16);
  const auto held =
      tessera::compiler::conformance_tolerance(tessera::DType::f32, backend->compute_precision());
  EXPECT_EQ(held.rtol, f16.rtol);
  EXPECT_EQ(held.atol, f16.atol);
  EXPECT_GT(held.rtol, f32.rtol);
  EXPECT_EQ(tessera::compiler::conformance_tolerance(tessera::DType::i32, tessera::DType::f16).atol,
            0.0);
  EXPECT_EQ(tessera::compiler::conformance_tolerance(tessera::DType::f32, tessera::DType::f32).rtol,
            f32.rtol);
}

}  // namespace

namespace {

// Img2Col windows: a window of rows and columns equals that part of the whole patch matrix.
void img2col_kernel(GM_ADDR fm, GM_ADDR full, GM_ADDR part) {
  TPipe pipe;
  TBuf<QuePosition::A1> l1;
  TBuf<QuePosition::VECCALC> u0, u1;
  pipe.InitBuffer(l1, 6 * 6 * 32);
  pipe.InitBuffer(u0, 3 * 9 * 512);
  pipe.InitBuffer(u1, 1 * 4 * 512);
  GlobalTensor<half> g, gf, gp;
  g.SetGlobalBuffer((__gm__ half*)fm, 6 * 6 * 16);
  gf.SetGlobalBuffer((__gm__ half*)full, 3 * 9 * 256);
  gp.SetGlobalBuffer((__gm__ half*)part, 4 * 256);
  DataCopy(l1.Get<half>(), g, 6 * 6 * 16);
  PipeBarrier<PIPE_ALL>();
  LoadData3DParamsV2<half> p;
  p.padList[0] = p.padList[1] = p.padList[2] = p.padList[3] = 1;
  p.l1H = 6;
  p.l1W = 6;
  p.channelSize = 16;
  p.filterH = 3;
  p.filterW = 3;
  LoadData(u0.Get<half>(), l1.Get<half>(), p);
  p.mStartPt = 16;
  p.mExtension = 16;
  p.kStartPt = 48;
  p.kExtension = 64;
  LoadData(u1.Get<half>(), l1.Get<half>(), p);
  PipeBarrier<PIPE_ALL>();
  DataCopy(gf, u0.Get<half>(), 3 * 9 * 256);
  DataCopy(gp, u1.Get<half>(), 4 * 256);
}

TEST(AicoreCube, Img2ColWindowsArePartsOfThePatchMatrix) {
  Gm<half> fm(6 * 6 * 16), full(3 * 9 * 256), part(4 * 256);
  fill(fm, 31);
  ICPU_RUN_KF(img2col_kernel, 1, fm.addr(), full.addr(), part.addr());
  // Whole matrix: row (pixel) 7 = (1, 1), column block (kh 0, kw 0) reads input (0, 0).
  EXPECT_EQ(static_cast<float>(full[(0 * 9 + 0) * 256 + 7 * 16 + 5]), static_cast<float>(fm[5]));
  for (int j = 0; j < 4; ++j)
    for (int e = 0; e < 256; ++e)
      ASSERT_EQ(static_cast<float>(part[j * 256 + e]),
                static_cast<float>(full[(1 * 9 + 3 + j) * 256 + e]))
          << j << "," << e;
}

}  // namespace

namespace {

// Convolution through 5HD, fractal-Z weights, Img2Col windows and the Cube, against a direct
// convolution of the fp16-rounded operands in f32; channel padding, several pixel and channel
// tiles, several K chunks, stride, padding, bias, ReLU and Clip.
void check_conv(tessera::aicore::kernels::ConvShape s, bool bias) {
  std::mt19937 gen(19);
  std::uniform_real_distribution<float> d(-1, 1);
  auto r16 = [](float v) { return static_cast<float>(static_cast<half>(v)); };
  std::vector<float> x(static_cast<std::size_t>(s.n) * s.c * s.h * s.w),
      w(static_cast<std::size_t>(s.cout) * s.c * s.kh * s.kw), b(s.cout),
      y(static_cast<std::size_t>(s.n) * s.cout * s.ho * s.wo, -9.0f);
  for (auto& v : x) v = r16(d(gen));
  for (auto& v : w) v = r16(d(gen));
  for (auto& v : b) v = d(gen);
  tessera::aicore::kernels::conv2d(tessera::aicore::device(), x.data(), w.data(),
                                   bias ? b.data() : nullptr, y.data(), s);
  for (int n = 0; n < s.n; ++n)
    for (int o = 0; o < s.cout; ++o)
      for (int i = 0; i < s.ho; ++i)
        for (int j = 0; j < s.wo; ++j) {
          float acc = bias ? b[o] : 0.0f;
          for (int c = 0; c < s.c; ++c)
            for (int p = 0; p < s.kh; ++p)
              for (int q = 0; q < s.kw; ++q) {
                const int ih = i * s.stride_h - s.pad_top + p * s.dilation_h;
                const int iw = j * s.stride_w - s.pad_left + q * s.dilation_w;
                if (ih < 0 || iw < 0 || ih >= s.h || iw >= s.w) continue;
                acc += x[((n * s.c + c) * s.h + ih) * s.w + iw] *
                       w[((o * s.c + c) * s.kh + p) * s.kw + q];
              }
          if (s.relu) acc = std::max(acc, 0.0f);
          acc = std::clamp(acc, s.clip_min, s.clip_max);
          const float got = y[((n * s.cout + o) * s.ho + i) * s.wo + j];
          ASSERT_NEAR(got, acc, 1e-4f + 1e-4f * std::fabs(acc))
              << n << "," << o << "," << i << "," << j;
        }
}

TEST(AicoreKernels, Conv2dThroughImg2ColAndTheCube) {
  tessera::aicore::kernels::ConvShape s;
  s.n = 2, s.c = 20, s.h = 9, s.w = 11, s.cout = 24, s.kh = 3, s.kw = 3, s.stride_h = 2,
  s.stride_w = 2, s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1, s.ho = 5, s.wo = 6;
  check_conv(s, true);
  tessera::aicore::kernels::ConvShape t;
  t.n = 1, t.c = 20, t.h = 14, t.w = 14, t.cout = 136, t.kh = 3, t.kw = 3, t.ho = 14, t.wo = 14;
  t.pad_top = t.pad_left = t.pad_bottom = t.pad_right = 1;
  t.relu = true;
  check_conv(t, true);
  tessera::aicore::kernels::ConvShape u;
  u.n = 1, u.c = 3, u.h = 8, u.w = 8, u.cout = 5, u.kh = 1, u.kw = 1, u.ho = 8, u.wo = 8;
  check_conv(u, false);
  u.clip_min = -0.25f, u.clip_max = 0.3f;  // a fused Clip (ReLU6's form) after the Cube
  check_conv(u, false);
}

// Feature maps beyond L1 (1 MiB on ascend910) go in bands of output rows, each tile bringing in
// its input rows: two C1 planes of 131 x 127 (1,064,768 bytes) with a dilated kernel take bands
// of 63 and 2 output rows; 127-pixel output rows put tiles' starts off the rows' starts; and
// ResNet's stem (3 x 224 x 224, 7 x 7, stride 2, 1,605,632 bytes).
TEST(AicoreKernels, Conv2dBeyondL1GoesInBandsOfOutputRows) {
  const auto& spec = tessera::aicore::device().spec();
  tessera::aicore::kernels::ConvShape s;
  s.n = 2, s.c = 20, s.h = 131, s.w = 127, s.cout = 24, s.kh = 3, s.kw = 3, s.stride_h = 2,
  s.dilation_h = 2, s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
  s.ho = (131 + 2 - 5) / 2 + 1, s.wo = 127;
  ASSERT_GT(2 * 131 * 127 * 32, static_cast<int>(spec.memory("L1").capacity_bytes.value));
  EXPECT_FALSE(tessera::aicore::kernels::conv_unsupported(s, spec).has_value());
  check_conv(s, true);
  tessera::aicore::kernels::ConvShape stem;
  stem.c = 3, stem.h = stem.w = 224, stem.cout = 64, stem.kh = stem.kw = 7;
  stem.stride_h = stem.stride_w = 2, stem.pad_top = stem.pad_left = 3;
  stem.pad_bottom = stem.pad_right = 3, stem.ho = stem.wo = 112, stem.relu = true;
  check_conv(stem, true);
}

// A conv whose one output row already reads more than L1 is refused with the figures.
TEST(AicoreKernels, Conv2dWhoseOneOutputRowExceedsL1IsRefused) {
  tessera::aicore::kernels::ConvShape s;
  s.c = 1024, s.h = 8, s.w = 200, s.cout = 16, s.kh = s.kw = 3, s.ho = 6, s.wo = 198;
  const auto why = tessera::aicore::kernels::conv_unsupported(s, tessera::aicore::device().spec());
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why,
            "one output row reads 3 input rows of 200 pixels, a 1228800-byte 5HD band (L1 holds "
            "1048576)");
  std::vector<float> x(static_cast<std::size_t>(s.c) * s.h * s.w), w(s.cout * s.c * 9),
      y(static_cast<std::size_t>(s.cout) * s.ho * s.wo);
  EXPECT_THROW(tessera::aicore::kernels::conv2d(tessera::aicore::device(), x.data(), w.data(),
                                                nullptr, y.data(), s),
               tessera::UserError);
}

}  // namespace

namespace {

TEST(AicoreKernels, GlobalAveragePoolReducesEachPlaneInF32) {
  constexpr int planes = 40, size = 49;
  std::vector<float> x(planes * size), y(planes, -1.0f);
  std::mt19937 gen(23);
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& v : x) v = d(gen);
  tessera::aicore::kernels::global_average_pool(tessera::aicore::device(), x.data(), y.data(),
                                                planes, size);
  for (int p = 0; p < planes; ++p) {
    double sum = 0;
    for (int i = 0; i < size; ++i) sum += x[p * size + i];
    EXPECT_NEAR(y[p], sum / size, 1e-6) << p;
  }
}

}  // namespace

namespace {

// MaxPool through 5HD and Img2Col with -inf padding: negative inputs next to the padding must
// win over it, channels beyond a block of 16 and more than one pixel tile.
TEST(AicoreKernels, MaxPoolPadsWithMinusInfinity) {
  tessera::aicore::kernels::ConvShape s;
  s.n = 2, s.c = 18, s.cout = 18, s.h = 17, s.w = 15, s.kh = 3, s.kw = 3, s.stride_h = 1,
  s.stride_w = 2, s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
  s.ho = (17 + 2 - 3) / 1 + 1, s.wo = (15 + 2 - 3) / 2 + 1;
  std::vector<float> x(static_cast<std::size_t>(s.n) * s.c * s.h * s.w),
      y(static_cast<std::size_t>(s.n) * s.c * s.ho * s.wo, 5.0f);
  std::mt19937 gen(29);
  std::uniform_real_distribution<float> d(-3, -0.5f);  // all negative: zero padding would show
  for (auto& v : x) v = static_cast<float>(static_cast<half>(d(gen)));
  tessera::aicore::kernels::max_pool2d(tessera::aicore::device(), x.data(), y.data(), s);
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int i = 0; i < s.ho; ++i)
        for (int j = 0; j < s.wo; ++j) {
          float m = -INFINITY;
          for (int p = 0; p < s.kh; ++p)
            for (int q = 0; q < s.kw; ++q) {
              const int ih = i * s.stride_h - 1 + p, iw = j * s.stride_w - 1 + q;
              if (ih >= 0 && iw >= 0 && ih < s.h && iw < s.w)
                m = std::max(m, x[((n * s.c + c) * s.h + ih) * s.w + iw]);
            }
          ASSERT_EQ(y[((n * s.c + c) * s.ho + i) * s.wo + j], m)
              << n << "," << c << "," << i << "," << j;
        }
}

}  // namespace

namespace {

TEST(AicoreKernels, DepthwiseConvAccumulatesInF32OnTheVectorUnit) {
  tessera::aicore::kernels::ConvShape s;
  s.n = 2, s.c = s.cout = 20, s.h = 13, s.w = 12, s.kh = 3, s.kw = 3, s.stride_h = 2,
  s.stride_w = 1, s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
  s.ho = (13 + 2 - 3) / 2 + 1, s.wo = 12;
  std::mt19937 gen(37);
  std::uniform_real_distribution<float> d(-1, 1);
  auto r16 = [](float v) { return static_cast<float>(static_cast<half>(v)); };
  std::vector<float> x(static_cast<std::size_t>(s.n) * s.c * s.h * s.w), w(s.c * 9), b(s.c),
      y(static_cast<std::size_t>(s.n) * s.c * s.ho * s.wo);
  for (auto& v : x) v = r16(d(gen));
  for (auto& v : w) v = d(gen);
  for (auto& v : b) v = d(gen);
  s.clip_min = 0.0f, s.clip_max = 1.5f;  // ReLU6-like
  tessera::aicore::kernels::depthwise_conv2d(tessera::aicore::device(), x.data(), w.data(),
                                             b.data(), y.data(), s);
  for (int n = 0; n < s.n; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int i = 0; i < s.ho; ++i)
        for (int j = 0; j < s.wo; ++j) {
          float acc = b[c];
          for (int p = 0; p < 3; ++p)
            for (int q = 0; q < 3; ++q) {
              const int ih = i * 2 - 1 + p, iw = j - 1 + q;
              if (ih >= 0 && iw >= 0 && ih < s.h && iw < s.w)
                acc += x[((n * s.c + c) * s.h + ih) * s.w + iw] * w[c * 9 + p * 3 + q];
            }
          acc = std::min(std::max(acc, 0.0f), 1.5f);
          ASSERT_NEAR(y[((n * s.c + c) * s.ho + i) * s.wo + j], acc, 2e-3f * (1 + std::fabs(acc)))
              << n << "," << c << "," << i << "," << j;
        }
}

}  // namespace

namespace {

TEST(AicoreKernels, SoftmaxRowsInF32) {
  constexpr int rows = 37, cols = 100;
  std::vector<float> x(rows * cols), y(rows * cols);
  std::mt19937 gen(41);
  std::uniform_real_distribution<float> d(-20, 20);
  for (auto& v : x) v = d(gen);
  tessera::aicore::kernels::softmax(tessera::aicore::device(), x.data(), y.data(), rows, cols);
  for (int r = 0; r < rows; ++r) {
    double m = -1e30, s = 0;
    for (int c = 0; c < cols; ++c) m = std::max(m, static_cast<double>(x[r * cols + c]));
    for (int c = 0; c < cols; ++c) s += std::exp(x[r * cols + c] - m);
    for (int c = 0; c < cols; ++c)
      ASSERT_NEAR(y[r * cols + c], std::exp(x[r * cols + c] - m) / s, 1e-6) << r << "," << c;
  }
}

}  // namespace

namespace {

TEST(AicoreKernels, LayerNormAndBatchNormInF32) {
  constexpr int rows = 9, cols = 70;
  std::mt19937 gen(43);
  std::uniform_real_distribution<float> d(-2, 2);
  std::vector<float> x(rows * cols), y(rows * cols), g(cols), b(cols);
  for (auto& v : x) v = d(gen);
  for (auto& v : g) v = d(gen);
  for (auto& v : b) v = d(gen);
  auto& dev = tessera::aicore::device();
  tessera::aicore::kernels::layer_norm(dev, x.data(), y.data(), g.data(), b.data(), rows, cols,
                                       1e-5f);
  for (int r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (int c = 0; c < cols; ++c) m += x[r * cols + c];
    m /= cols;
    for (int c = 0; c < cols; ++c) v += (x[r * cols + c] - m) * (x[r * cols + c] - m);
    v /= cols;
    for (int c = 0; c < cols; ++c)
      ASSERT_NEAR(y[r * cols + c], (x[r * cols + c] - m) / std::sqrt(v + 1e-5) * g[c] + b[c], 1e-4)
          << r << "," << c;
  }
  // BatchNormalization: 3 channels of 70 elements for 3 images.
  std::vector<float> mean = {0.5f, -1.0f, 0.0f}, var = {1.0f, 4.0f, 0.25f};
  tessera::aicore::kernels::batch_norm(dev, x.data(), y.data(), g.data(), b.data(), mean.data(),
                                       var.data(), 3, 3, cols, 1e-3f);
  for (int p = 0; p < 9; ++p)
    for (int i = 0; i < cols; ++i) {
      const int c = p % 3;
      const float want = (x[p * cols + i] - mean[c]) / std::sqrt(var[c] + 1e-3f) * g[c] + b[c];
      ASSERT_NEAR(y[p * cols + i], want, 1e-4f) << p << "," << i;
    }
}

}  // namespace

namespace {

// The ascend310 preset: its modeled peaks are Huawei's 8 TFLOPS fp16 and 16 TOPS int8, and kernels
// run on its two cores (blocks beyond them run one after another on their core).
TEST(AicorePreset, Ascend310PeakAndKernelsOnItsTwoCores) {
  auto dev = tessera::runtime::Device::open("ascend310");
  const auto& spec = dev->spec();
  EXPECT_EQ(spec.core_count.as_int(), 2);
  // 8 TFLOPS fp16 (16 x 16 x 16 per cycle) and 16 TOPS int8 (16 x 32 x 16 per cycle).
  const double cube = spec.param("aicore.cube_m").value * spec.param("aicore.cube_n").value;
  EXPECT_NEAR(2.0 * cube * spec.param("aicore.cube_k").value * 2.0 * spec.clock_hz.value, 8e12,
              1e8);
  EXPECT_NEAR(2.0 * cube * spec.param("aicore.cube_k_int8").value * 2.0 * spec.clock_hz.value,
              16e12, 1e8);
  tessera::aicore::set_device(std::move(dev));
  {  // GM of the ascend310 device, freed before the default device comes back
    const std::size_t n = 8 * 16 * kTile;
    Gm<half> x(n), y(n), z(n);
    fill(x, 51);
    fill(y, 52);
    const auto rec = ICPU_RUN_KF(queue_add_kernel, 8, x.addr(), y.addr(), z.addr());
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(static_cast<float>(z[i]),
                static_cast<float>(
                    static_cast<half>(static_cast<float>(x[i]) + static_cast<float>(y[i]))));
    EXPECT_EQ(rec.cycles_per_core.size(), 2u);
  }
  tessera::aicore::set_device(nullptr);
}

}  // namespace

namespace {

// The Vector unit computes element-wise ops in f32 (Ascend's allow_fp32_to_fp16 default keeps
// vector ops in f32): a difference of large, close values keeps every bit, where fp16 (spacing
// 8 at 10,000) would round it away.
TEST(AicoreKernels, EltwiseRowsBroadcastsTheSecondOperandInF32) {
  constexpr int rows = 12, cols = 45;
  std::vector<float> a(rows * cols), b(cols), y(rows * cols);
  std::mt19937 gen(47);
  std::uniform_real_distribution<float> d(10000, 10010);
  for (auto& v : a) v = d(gen);
  for (auto& v : b) v = d(gen);
  using tessera::aicore::kernels::Eltwise;
  tessera::aicore::kernels::eltwise_rows(tessera::aicore::device(), Eltwise::sub, a.data(),
                                         b.data(), y.data(), rows, cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      ASSERT_EQ(y[r * cols + c], a[r * cols + c] - b[c]) << r << "," << c;
  std::vector<float> z(rows * cols);
  tessera::aicore::kernels::eltwise(tessera::aicore::device(), Eltwise::exp, b.data(), nullptr,
                                    z.data(), 1);
  tessera::aicore::kernels::eltwise(tessera::aicore::device(), Eltwise::div, a.data(), a.data(),
                                    z.data(), rows * cols);
  for (float v : z) ASSERT_EQ(v, 1.0f);
}

}  // namespace

namespace {

// Every block reads the same 64 KiB of GM (a broadcast operand). The L2 in front of HBM
// (ascend910's global_cache) serves all but the first reader in modeled time.
void shared_read_kernel(GM_ADDR x) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> buf;
  pipe.InitBuffer(buf, 65536);
  GlobalTensor<half> g;
  g.SetGlobalBuffer((__gm__ half*)x, 32768);
  DataCopy(buf.Get<half>(), g, 32768);
}

TEST(AicoreL2, CoresReadingTheSameBytesHitTheL2AndOnlyOneCopyComesFromHbm) {
  const auto& spec = tessera::aicore::device().spec();
  ASSERT_EQ(spec.global_cache, "L2");
  Gm<half> x(32768);
  fill(x, 5);
  const auto rec = ICPU_RUN_KF(shared_read_kernel, 8, x.addr());
  EXPECT_DOUBLE_EQ(rec.metrics.at("L2.miss_bytes"), 65536.0);
  EXPECT_DOUBLE_EQ(rec.metrics.at("L2.hit_bytes"), 7.0 * 65536);
  EXPECT_DOUBLE_EQ(rec.metrics.at("L2.global_bytes"), 65536.0);
  EXPECT_DOUBLE_EQ(rec.metrics.at("gm_bytes"), 8.0 * 65536);
}

// The Cube GEMM over 16 blocks shares A and B strips through the L2; its cycles and what the
// L2 served are the same for 1, 2 and 8 host threads.
TEST(AicoreL2, GemmCyclesAndL2TrafficDoNotDependOnHostThreads) {
  constexpr int m = 1024, k = 256, n = 1024;
  std::vector<uint16_t> a(m * k, tessera::f32_to_f16_bits(0.5f)),
      b(k * n, tessera::f32_to_f16_bits(0.25f)), c(m * n);
  std::vector<std::vector<double>> seen;
  for (unsigned threads : {1u, 2u, 8u}) {
    tessera::aicore::set_threads(threads);
    tessera::aicore::device().reset_profile();
    const auto rec = tessera::aicore::kernels::matmul_f16(tessera::aicore::device(), a.data(),
                                                          b.data(), c.data(), m, k, n);
    std::vector<double> v(rec.cycles_per_core.begin(), rec.cycles_per_core.end());
    v.push_back(rec.metrics.at("L2.hit_bytes"));
    v.push_back(rec.metrics.at("L2.miss_bytes"));
    seen.push_back(v);
    EXPECT_GT(rec.metrics.at("L2.hit_bytes"), rec.metrics.at("L2.miss_bytes"));
  }
  tessera::aicore::set_threads(0);
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(seen[0], seen[2]);
  EXPECT_EQ(tessera::f16_bits_to_f32(c[0]), 0.5f * 0.25f * k);
}

}  // namespace

namespace {

// Transpose: every permutation of a 2 x 3 x 5 x 7 tensor, element by element against the index
// arithmetic of the permutation (strided rows go through DataCopyPad and Gather).
TEST(AicoreKernels, TransposeMovesEveryElementWhereThePermutationSays) {
  const std::vector<std::int64_t> dims = {2, 3, 5, 7};
  std::vector<float> x(2 * 3 * 5 * 7), y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  std::vector<std::int64_t> perm = {0, 1, 2, 3};
  int checked = 0;
  do {
    std::fill(y.begin(), y.end(), -1.0f);
    tessera::aicore::kernels::transpose(tessera::aicore::device(), x.data(), y.data(), dims, perm);
    std::int64_t od[4];
    for (int j = 0; j < 4; ++j) od[j] = dims[static_cast<std::size_t>(perm[j])];
    std::int64_t o = 0;
    for (std::int64_t a = 0; a < od[0]; ++a)
      for (std::int64_t b = 0; b < od[1]; ++b)
        for (std::int64_t c = 0; c < od[2]; ++c)
          for (std::int64_t d = 0; d < od[3]; ++d, ++o) {
            std::int64_t idx[4];
            const std::int64_t out_idx[4] = {a, b, c, d};
            for (int j = 0; j < 4; ++j) idx[perm[j]] = out_idx[j];
            const float want =
                static_cast<float>(((idx[0] * 3 + idx[1]) * 5 + idx[2]) * 7 + idx[3]);
            ASSERT_EQ(y[static_cast<std::size_t>(o)], want)
                << "perm " << perm[0] << perm[1] << perm[2] << perm[3] << " at " << o;
          }
    ++checked;
  } while (std::next_permutation(perm.begin(), perm.end()));
  EXPECT_EQ(checked, 24);
  EXPECT_THROW(tessera::aicore::kernels::transpose(tessera::aicore::device(), x.data(), y.data(),
                                                   dims, std::vector<std::int64_t>{0, 1, 1, 3}),
               tessera::UserError);
}

// A strided copy with zero strides expands a (3, 1, 5) operand to (3, 4, 5) (outer first).
TEST(AicoreKernels, StridedCopyExpandsABroadcastOperand) {
  std::vector<float> x(15), y(60, -1.0f);
  for (int i = 0; i < 15; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i) * 0.5f;
  const std::vector<std::int64_t> out_dims = {5, 4, 3}, strides = {1, 0, 5};  // fastest first
  tessera::aicore::kernels::strided_copy(tessera::aicore::device(), x.data(), 15, y.data(),
                                         out_dims, strides);
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 4; ++b)
      for (int c = 0; c < 5; ++c)
        ASSERT_EQ(y[static_cast<std::size_t>((a * 4 + b) * 5 + c)],
                  x[static_cast<std::size_t>(a * 5 + c)]);
  // The last axis broadcast (stride 0 on the fastest axis): the scalar unit and Duplicate.
  const std::vector<std::int64_t> d2 = {4, 15}, s2 = {0, 1};
  std::vector<float> z(60);
  tessera::aicore::kernels::strided_copy(tessera::aicore::device(), x.data(), 15, z.data(), d2, s2);
  for (int i = 0; i < 60; ++i)
    ASSERT_EQ(z[static_cast<std::size_t>(i)], x[static_cast<std::size_t>(i / 4)]);
  EXPECT_THROW(
      tessera::aicore::kernels::strided_copy(tessera::aicore::device(), x.data(), 15, z.data(), d2,
                                             std::vector<std::int64_t>{0, 2}),
      tessera::UserError);
}

// A strided copy into a strided output: two parts concatenated along the middle axis of a
// (2, 5, 3) tensor (outer first), each written at its offset with the whole tensor's strides;
// and a Tile of a 2 x 3 x 2 x 2 tensor by 2 x 1 x 3 x 2 (8 axes, 6 after merging), the same on
// 1, 2 and 8 host threads.
TEST(AicoreKernels, StridedCopyWritesPartsOfAStridedOutput) {
  std::vector<float> a(2 * 2 * 3), b(2 * 3 * 3), y(2 * 5 * 3, -1.0f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = 100.0f + static_cast<float>(i);
  const std::vector<std::int64_t> whole = {1, 3, 15};  // fastest first
  auto& dev = tessera::aicore::device();
  tessera::aicore::kernels::strided_copy(dev, a.data(), 12, y.data(), 30,
                                         std::vector<std::int64_t>{3, 2, 2},
                                         std::vector<std::int64_t>{1, 3, 6}, whole);
  tessera::aicore::kernels::strided_copy(dev, b.data(), 18, y.data() + 6, 24,
                                         std::vector<std::int64_t>{3, 3, 2},
                                         std::vector<std::int64_t>{1, 3, 9}, whole);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j)
      for (int k = 0; k < 3; ++k)
        ASSERT_EQ(y[static_cast<std::size_t>((i * 5 + j) * 3 + k)],
                  j < 2 ? a[static_cast<std::size_t>((i * 2 + j) * 3 + k)]
                        : b[static_cast<std::size_t>((i * 3 + j - 2) * 3 + k)])
            << i << "," << j << "," << k;
  // Tile: per input axis (fastest first) the axis itself, then its repeats (input stride 0).
  const std::int64_t in_dims[4] = {2, 2, 3, 2}, reps[4] = {2, 3, 1, 2};  // fastest first
  std::vector<std::int64_t> dims, in_strides, out_strides;
  std::int64_t is = 1, os = 1;
  for (int d = 0; d < 4; ++d) {
    dims.insert(dims.end(), {in_dims[d], reps[d]});
    in_strides.insert(in_strides.end(), {is, 0});
    out_strides.insert(out_strides.end(), {os, os * in_dims[d]});
    is *= in_dims[d];
    os *= in_dims[d] * reps[d];
  }
  EXPECT_EQ(tessera::aicore::kernels::strided_copy_axes(dims, in_strides, out_strides), 6);
  std::vector<float> x(24), t(static_cast<std::size_t>(os));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  // The same results and cycles on 1, 2 and 8 host threads.
  std::vector<std::vector<float>> results;
  std::vector<std::vector<std::uint64_t>> cycles;
  for (unsigned threads : {1u, 2u, 8u}) {
    tessera::aicore::set_threads(threads);
    std::fill(t.begin(), t.end(), -1.0f);
    const auto rec = tessera::aicore::kernels::strided_copy(dev, x.data(), 24, t.data(), os, dims,
                                                            in_strides, out_strides);
    results.push_back(t);
    cycles.emplace_back(rec.cycles_per_core.begin(), rec.cycles_per_core.end());
  }
  tessera::aicore::set_threads(0);
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
  EXPECT_EQ(cycles[0], cycles[1]);
  EXPECT_EQ(cycles[0], cycles[2]);
  for (std::int64_t o = 0; o < os; ++o) {
    std::int64_t rest = o, src = 0, stride = 1;
    for (int d = 0; d < 4; ++d) {
      const std::int64_t od = in_dims[d] * reps[d];
      src += (rest % od) % in_dims[d] * stride;
      rest /= od;
      stride *= in_dims[d];
    }
    ASSERT_EQ(t[static_cast<std::size_t>(o)], x[static_cast<std::size_t>(src)]) << o;
  }
  EXPECT_THROW(tessera::aicore::kernels::strided_copy(dev, x.data(), 24, t.data(), 10, dims,
                                                      in_strides, out_strides),
               tessera::UserError);
}

// ONNX Gather on the device against the reference op: each axis of a (4, 6, 5) tensor (short
// rows through the Vector unit's Gather from a slab in UB, whole rows by DataCopyPad), negative
// indices, int64 indices, rows longer than a transfer, more indices than one staging chunk,
// the same results and cycles on 1, 2 and 8 host threads; an index outside the axis is a
// DeviceFault naming it.
TEST(AicoreKernels, GatherPicksWhatTheReferenceOpPicks) {
  auto& dev = tessera::aicore::device();
  const auto check = [&](std::vector<std::int64_t> dims, int axis, std::vector<std::int64_t> idx,
                         std::vector<std::int64_t> idx_dims) {
    std::int64_t count = 1;
    for (std::int64_t d : dims) count *= d;
    std::vector<float> x(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.25f - 7.0f;
    const tessera::Tensor data =
        tessera::Tensor::from_vector(tessera::Shape::from_outer_first(dims), x);
    const tessera::Tensor indices = tessera::Tensor::from_ints(
        tessera::DType::i32, tessera::Shape::from_outer_first(idx_dims), idx);
    // The reference numbers axes fastest first.
    const tessera::Tensor want =
        tessera::ops::gather(data, indices, static_cast<int>(dims.size()) - 1 - axis);
    std::int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= dims[static_cast<std::size_t>(d)];
    for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < dims.size(); ++d) inner *= dims[d];
    const std::int64_t axis_len = dims[static_cast<std::size_t>(axis)];
    const auto k = static_cast<std::int64_t>(idx.size());
    std::vector<std::int32_t> i32(idx.begin(), idx.end());
    std::vector<std::vector<float>> results;
    std::vector<std::vector<std::uint64_t>> cycles;
    for (unsigned threads : {1u, 2u, 8u}) {
      tessera::aicore::set_threads(threads);
      std::vector<float> y(static_cast<std::size_t>(outer * k * inner), -1.0f);
      const auto rec = tessera::aicore::kernels::gather(dev, x.data(), outer, axis_len, inner,
                                                        i32.data(), 4, k, y.data());
      results.push_back(y);
      cycles.emplace_back(rec.cycles_per_core.begin(), rec.cycles_per_core.end());
      EXPECT_GT(rec.cycles, 0u);
    }
    tessera::aicore::set_threads(0);
    ASSERT_EQ(results[0].size(), static_cast<std::size_t>(want.element_count()));
    for (std::size_t i = 0; i < results[0].size(); ++i)
      ASSERT_EQ(results[0][i], want.data<float>()[i]) << "axis " << axis << " element " << i;
    EXPECT_EQ(results[0], results[1]);
    EXPECT_EQ(results[0], results[2]);
    EXPECT_EQ(cycles[0], cycles[1]);
    EXPECT_EQ(cycles[0], cycles[2]);
    // int64 indices pick the same.
    std::vector<float> y64(results[0].size(), -1.0f);
    tessera::aicore::kernels::gather(dev, x.data(), outer, axis_len, inner, idx.data(), 8, k,
                                     y64.data());
    EXPECT_EQ(y64, results[0]) << "int64 indices, axis " << axis;
  };
  check({4, 6, 5}, 0, {3, 0, -1, 1, 3}, {5});
  check({4, 6, 5}, 1, {5, -6, 2, 2}, {2, 2});
  check({4, 6, 5}, 2, {4, 0, -2}, {3});
  check({3, 2500}, 0, {2, -3, 1}, {3});  // rows of two transfers
  std::vector<std::int64_t> many(3000);  // two staging chunks of indices, slab path
  for (std::size_t i = 0; i < many.size(); ++i)
    many[i] = static_cast<std::int64_t>((i * 7919) % 61) - 30;
  check({2, 61}, 1, many, {3000});

  // Whole rows (8 floats, DataCopyPad) and short ones (the slab and Gather).
  std::vector<float> x(24), y(16);
  const std::int32_t bad[2] = {1, 3};
  expect_fault(
      [&] { tessera::aicore::kernels::gather(dev, x.data(), 1, 3, 8, bad, 4, 2, y.data()); },
      {"Gather", "index 3", "indices element 1", "[-3, 2]"});
  const std::int32_t below[2] = {-7, 0};
  expect_fault(
      [&] { tessera::aicore::kernels::gather(dev, x.data(), 4, 6, 1, below, 4, 2, y.data()); },
      {"Gather", "index -7", "indices element 0", "[-6, 5]"});
  EXPECT_THROW(tessera::aicore::kernels::gather(dev, x.data(), 1, 3, 8, bad, 2, 2, y.data()),
               tessera::UserError);
}

// ONNX GatherElements on the device against the reference op: along each axis of a (3, 4, 5)
// tensor with indices narrower along it, negative ones among them, and an index outside the
// axis as a DeviceFault; a slice too large for the slab is refused.
// GatherND: tuples of indices (negative ones from the end) name rows of the indexed axes, with
// batch dims in front; short rows come from the slab in UB, rows of 32 bytes or more by
// DataCopyPad. A component outside its own axis is a fault naming it.
TEST(AicoreKernels, GatherNdPicksWhatTheReferenceOpPicks) {
  auto& dev = tessera::aicore::device();
  const auto check = [&](std::vector<std::int64_t> dims, std::int64_t batch,
                         std::vector<std::int64_t> idx_dims) {
    std::int64_t count = 1, tuples = 1;
    for (std::int64_t d : dims) count *= d;
    for (std::size_t d = 0; d + 1 < idx_dims.size(); ++d) tuples *= idx_dims[d];
    const std::int64_t m = idx_dims.back();
    std::vector<float> x(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f - 3.0f;
    std::vector<std::int64_t> idx;
    for (std::int64_t t = 0; t < tuples; ++t)
      for (std::int64_t c = 0; c < m; ++c) {
        const std::int64_t extent = dims[static_cast<std::size_t>(batch + c)];
        idx.push_back((t * 7 + c * 3 + 1) % (2 * extent) - extent);
      }
    const tessera::Tensor want = tessera::ops::gather_nd(
        tessera::Tensor::from_vector(tessera::Shape::from_outer_first(dims), x),
        tessera::Tensor::from_ints(tessera::DType::i64, tessera::Shape::from_outer_first(idx_dims),
                                   idx),
        batch);
    std::int64_t outer = 1, inner = 1;
    for (std::int64_t d = 0; d < batch; ++d) outer *= dims[static_cast<std::size_t>(d)];
    for (auto d = static_cast<std::size_t>(batch + m); d < dims.size(); ++d) inner *= dims[d];
    const std::vector<std::int64_t> tuple(dims.begin() + batch, dims.begin() + batch + m);
    const std::int64_t k = tuples / outer;
    std::vector<std::int32_t> i32(idx.begin(), idx.end());
    std::vector<float> y(static_cast<std::size_t>(want.element_count()), -1.0f);
    tessera::aicore::kernels::gather_nd(dev, x.data(), outer, tuple, inner, i32.data(), 4, k,
                                        y.data());
    for (std::size_t i = 0; i < y.size(); ++i)
      ASSERT_EQ(y[i], want.data<float>()[i]) << "batch " << batch << " element " << i;
    std::vector<float> y64(y.size(), -1.0f);
    tessera::aicore::kernels::gather_nd(dev, x.data(), outer, tuple, inner, idx.data(), 8, k,
                                        y64.data());
    EXPECT_EQ(y64, y) << "int64 indices";
  };
  check({4, 5, 3, 2}, 0, {7, 2});      // rows of 6 floats: the slab path
  check({4, 5, 3, 2}, 0, {2, 3, 3});   // 3-tuples: rows of 2 elements
  check({4, 5, 3, 2}, 1, {4, 3, 2});   // a batch dim
  check({3, 4, 16}, 0, {5, 2});        // rows of 64 bytes: DataCopyPad
  check({3, 4, 16}, 0, {2, 2, 1});     // a 1-tuple over the first axis
  std::vector<float> x(24, 1.0f), y(2, 0.0f);
  const std::int32_t bad[] = {1, 2, 0, -5};  // the second tuple's second component
  const std::int64_t axes[] = {3, 4};
  expect_fault(
      [&] { tessera::aicore::kernels::gather_nd(dev, x.data(), 1, axes, 2, bad, 4, 2, y.data()); },
      {"GatherND", "index -5 (indices element 3)", "outside [-4, 3]"});
}

TEST(AicoreKernels, GatherElementsPicksWhatTheReferenceOpPicks) {
  auto& dev = tessera::aicore::device();
  const std::vector<std::int64_t> dims = {3, 4, 5};
  std::vector<float> x(60);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f + 1.0f;
  const tessera::Tensor data =
      tessera::Tensor::from_vector(tessera::Shape::from_outer_first(dims), x);
  for (int axis = 0; axis < 3; ++axis) {
    std::vector<std::int64_t> idims = dims;
    const std::int64_t len = dims[static_cast<std::size_t>(axis)], k = 2;
    idims[static_cast<std::size_t>(axis)] = k;
    std::int64_t count = 1, outer = 1, inner = 1;
    for (std::int64_t d : idims) count *= d;
    for (int d = 0; d < axis; ++d) outer *= dims[static_cast<std::size_t>(d)];
    for (int d = axis + 1; d < 3; ++d) inner *= dims[static_cast<std::size_t>(d)];
    std::vector<std::int64_t> idx(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < idx.size(); ++i)
      idx[i] = static_cast<std::int64_t>((i * 5 + 3) % static_cast<std::size_t>(2 * len)) - len;
    const tessera::Tensor indices = tessera::Tensor::from_ints(
        tessera::DType::i32, tessera::Shape::from_outer_first(idims), idx);
    const tessera::Tensor want = tessera::ops::gather_elements(data, indices, 2 - axis);
    std::vector<std::int32_t> i32(idx.begin(), idx.end());
    std::vector<float> y(static_cast<std::size_t>(count), -1.0f);
    tessera::aicore::kernels::gather_elements(dev, x.data(), outer, len, inner, i32.data(), 4, k,
                                              y.data());
    for (std::size_t i = 0; i < y.size(); ++i)
      ASSERT_EQ(y[i], want.data<float>()[i]) << "axis " << axis << " element " << i;
    std::vector<float> y64(y.size(), -1.0f);
    tessera::aicore::kernels::gather_elements(dev, x.data(), outer, len, inner, idx.data(), 8, k,
                                              y64.data());
    EXPECT_EQ(y64, y) << "int64 indices, axis " << axis;
  }
  std::vector<std::int32_t> bad(8, 0);
  bad[5] = 4;
  std::vector<float> y(8);
  expect_fault(
      [&] {
        tessera::aicore::kernels::gather_elements(dev, x.data(), 1, 4, 4, bad.data(), 4, 2,
                                                  y.data());
      },
      {"GatherElements", "index 4", "indices element 5", "[-4, 3]"});
  EXPECT_TRUE(tessera::aicore::kernels::gather_elements_unsupported(4096, 5).has_value());
  EXPECT_FALSE(tessera::aicore::kernels::gather_elements_unsupported(4, 5).has_value());
}

// A core's UB keeps its contents from one launch to the next, as Ascend C leaves them (a new
// tensor is not cleared): the second kernel copies out what the first left, without writing UB.
void ub_write_kernel(GM_ADDR x) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> buf;
  pipe.InitBuffer(buf, 256);
  GlobalTensor<float> gx;
  gx.SetGlobalBuffer((__gm__ float*)x + 64 * GetBlockIdx(), 64);
  DataCopy(buf.Get<float>(), gx, 64);
}
void ub_read_kernel(GM_ADDR y) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> buf;
  pipe.InitBuffer(buf, 256);
  GlobalTensor<float> gy;
  gy.SetGlobalBuffer((__gm__ float*)y + 64 * GetBlockIdx(), 64);
  DataCopy(gy, buf.Get<float>(), 64);
}

TEST(AicoreAscendC, UnifiedBufferKeepsItsContentsAcrossLaunches) {
  Gm<float> x(128), y(128);
  for (int i = 0; i < 128; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i) + 0.5f;
  ICPU_RUN_KF(ub_write_kernel, 2, x.addr());
  ICPU_RUN_KF(ub_read_kernel, 2, y.addr());
  for (int i = 0; i < 128; ++i)
    ASSERT_EQ(y[static_cast<std::size_t>(i)], x[static_cast<std::size_t>(i)]) << i;
}

// The kept buffers are the device's: a core finds what the same core of the same device left,
// however launches of two devices interleave (sequentially here, then from two host threads).
// A pool shared by the process would hand device A's core the buffers device B's wrote last.
TEST(AicoreAscendC, KeptBuffersBelongToTheirDevice) {
  std::unique_ptr<tessera::runtime::Device> dev[2] = {tessera::runtime::Device::open("ascend910"),
                                                      tessera::runtime::Device::open("ascend910")};
  Gm<float> x0(128), x1(128), y0(128), y1(128);
  Gm<float>* x[2] = {&x0, &x1};
  Gm<float>* y[2] = {&y0, &y1};
  for (int d = 0; d < 2; ++d)
    for (int i = 0; i < 128; ++i)
      (*x[d])[static_cast<std::size_t>(i)] = static_cast<float>(1000 * (d + 1) + i);
  auto write = [&](int d) {
    tessera::aicore::launch(*dev[d], "ub_write", 2, [&] { ub_write_kernel(x[d]->addr()); });
  };
  auto read = [&](int d) {
    tessera::aicore::launch(*dev[d], "ub_read", 2, [&] { ub_read_kernel(y[d]->addr()); });
  };
  auto expect_own = [&](int d) {
    for (int i = 0; i < 128; ++i)
      ASSERT_EQ((*y[d])[static_cast<std::size_t>(i)], (*x[d])[static_cast<std::size_t>(i)])
          << "device " << d << " element " << i;
  };
  write(0);
  write(1);
  read(0);
  read(1);
  expect_own(0);
  expect_own(1);
  for (int round = 0; round < 8; ++round) {
    std::thread other([&] {
      write(1);
      read(1);
    });
    write(0);
    read(0);
    other.join();
    expect_own(0);
    expect_own(1);
  }
}

// Two host threads launching on one device are two streams: each finds in the cores' buffers
// what its own previous launch left, never what the other's launch wrote meanwhile, and each
// gets its own launch's record. With buffers kept per core index, the launch that ended last
// won: the main thread's read below copied out the other thread's data.
TEST(AicoreAscendC, LaunchesOfTwoHostThreadsOnOneDeviceKeepTheirOwnBuffers) {
  auto dev = tessera::runtime::Device::open("ascend910");
  Gm<float> x0(128), x1(128), y0(128), y1(128);
  Gm<float>* x[2] = {&x0, &x1};
  Gm<float>* y[2] = {&y0, &y1};
  for (int t = 0; t < 2; ++t)
    for (int i = 0; i < 128; ++i)
      (*x[t])[static_cast<std::size_t>(i)] = static_cast<float>(1000 * (t + 1) + i);
  auto write = [&](int t) {
    const auto r = tessera::aicore::launch(*dev, t ? "ub_write_b" : "ub_write_a", 2,
                                           [&] { ub_write_kernel(x[t]->addr()); });
    EXPECT_EQ(r.name, t ? "ub_write_b" : "ub_write_a");
    EXPECT_EQ(tessera::aicore::last_kernel().name, r.name);
  };
  auto read = [&](int t) {
    const auto r = tessera::aicore::launch(*dev, t ? "ub_read_b" : "ub_read_a", 2,
                                           [&] { ub_read_kernel(y[t]->addr()); });
    EXPECT_EQ(r.name, t ? "ub_read_b" : "ub_read_a");
  };
  auto expect_own = [&](int t) {
    for (int i = 0; i < 128; ++i)
      ASSERT_EQ((*y[t])[static_cast<std::size_t>(i)], (*x[t])[static_cast<std::size_t>(i)])
          << "thread " << t << " element " << i;
  };
  // In a fixed order: the other thread's launches come between the main thread's two.
  write(0);
  std::thread([&] {
    write(1);
    read(1);
  }).join();
  read(0);
  expect_own(0);
  expect_own(1);
  // At the same time.
  for (int round = 0; round < 8; ++round) {
    std::fill(y0.p, y0.p + y0.n, 0.0f);
    std::fill(y1.p, y1.p + y1.n, 0.0f);
    std::thread other([&] {
      for (int k = 0; k < 4; ++k) {
        write(1);
        read(1);
      }
    });
    for (int k = 0; k < 4; ++k) {
      write(0);
      read(0);
    }
    other.join();
    expect_own(0);
    expect_own(1);
  }
}

// Gather packs the elements at byte offsets of its source; an offset outside it is a fault.
void gather_kernel(GM_ADDR x, GM_ADDR y, uint32_t bad) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> src, dst, off;
  pipe.InitBuffer(src, 256);
  pipe.InitBuffer(dst, 64);
  pipe.InitBuffer(off, 64);
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer((__gm__ float*)x, 64);
  gy.SetGlobalBuffer((__gm__ float*)y, 16);
  LocalTensor<float> s = src.Get<float>(), d = dst.Get<float>();
  LocalTensor<uint32_t> o = off.Get<uint32_t>();
  DataCopy(s, gx, 64);
  for (uint32_t i = 0; i < 16; ++i) o.SetValue(i, (63 - i * 4) * 4 + bad);
  SetFlag<HardEvent::S_V>(EVENT_ID0);
  WaitFlag<HardEvent::S_V>(EVENT_ID0);
  SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
  Gather(d, s, o, 0, 16);
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(gy, d, 16);
}

TEST(AicoreVector, GatherPacksElementsAtByteOffsets) {
  Gm<float> x(64), y(16);
  for (int i = 0; i < 64; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i);
  ICPU_RUN_KF(gather_kernel, 1, x.addr(), y.addr(), 0u);
  for (int i = 0; i < 16; ++i)
    ASSERT_EQ(y[static_cast<std::size_t>(i)], static_cast<float>(63 - i * 4));
  expect_fault([&] { ICPU_RUN_KF(gather_kernel, 1, x.addr(), y.addr(), 2u); },
               {"Gather", "not a whole element"});
  expect_fault([&] { ICPU_RUN_KF(gather_kernel, 1, x.addr(), y.addr(), 16u); },
               {"Gather", "past the end"});
}

// The mask forms of Gather, Exp (bit mask), Adds (bit mask), Cast and ReduceSum/ReduceMax
// (high-dimension): two repeats of 64 float lanes; the masks enable the even lanes of the low
// word and lane 64 + 3 of the high word (bit mask), or the first 10 lanes (continuous).
void mask_forms_kernel(GM_ADDR x, GM_ADDR y) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> src, dst, off, h, red, work;
  pipe.InitBuffer(src, 512);
  pipe.InitBuffer(dst, 2048);
  pipe.InitBuffer(off, 512);
  pipe.InitBuffer(h, 512);
  pipe.InitBuffer(red, 64);
  pipe.InitBuffer(work, 512);
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer((__gm__ float*)x, 128);
  gy.SetGlobalBuffer((__gm__ float*)y, 512);
  LocalTensor<float> s = src.Get<float>(), d = dst.Get<float>(), r = red.Get<float>(),
                     w = work.Get<float>();
  LocalTensor<uint32_t> o = off.Get<uint32_t>();
  DataCopy(s, gx, 128);
  for (uint32_t i = 0; i < 128; ++i) o.SetValue(i, (127 - i) * 4);  // reversed
  SetFlag<HardEvent::S_V>(EVENT_ID0);
  WaitFlag<HardEvent::S_V>(EVENT_ID0);
  SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
  Duplicate(d, -1.0f, 512);
  const uint64_t bits[2] = {0x5555555555555555ull, 0};
  // Gather, continuous mask: 10 lanes a repeat, dst repeats 16 blocks (128 floats) apart.
  Gather(d, s, o, 0, uint64_t{10}, 2, 16);
  // Exp with the bit mask over s into d[256..), repeats 8 blocks apart on both sides.
  Exp(d[256], s, bits, 2, UnaryRepeatParams{});
  // Cast f32 -> f16 of the first 10 lanes of each repeat; the halves land 4 blocks apart.
  LocalTensor<half> hh = h.Get<half>();
  Duplicate(hh, static_cast<half>(0.0f), 256);
  Cast(hh, s, RoundMode::CAST_NONE, uint64_t{10}, 2, UnaryRepeatParams{1, 1, 4, 8});
  // Sums and maxima over the enabled lanes of both repeats.
  ReduceSum(r, s, w, 10, 2, 8);
  ReduceMax(r[8], s, w, bits, 2, 8, true);
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(gy, d, 512);
  SetFlag<HardEvent::V_S>(EVENT_ID0);
  WaitFlag<HardEvent::V_S>(EVENT_ID0);
  const float sum = r.GetValue(0), max = r.GetValue(8);
  const half first = hh.GetValue(64 + 3);
  SetFlag<HardEvent::MTE3_S>(EVENT_ID0);
  WaitFlag<HardEvent::MTE3_S>(EVENT_ID0);
  gy.SetValue(0, sum);
  gy.SetValue(1, max);
  gy.SetValue(2, static_cast<float>(first));
}

TEST(AicoreVector, MaskFormsComputeTheEnabledLanesOfEachRepeat) {
  Gm<float> x(128), y(512);
  for (int i = 0; i < 128; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i) / 64.0f;
  ICPU_RUN_KF(mask_forms_kernel, 1, x.addr(), y.addr());
  for (int r = 0; r < 2; ++r)
    for (int l = 3; l < 64; ++l)  // (lanes 0..2 of repeat 0 hold the scalar results)
      ASSERT_EQ(y[static_cast<std::size_t>(r * 128 + l)],
                l < 10 ? x[static_cast<std::size_t>(127 - (r * 64 + l))] : -1.0f)
          << r << "," << l;
  for (int i = 0; i < 128; ++i)
    ASSERT_EQ(y[static_cast<std::size_t>(256 + i)],
              i % 64 % 2 == 0 ? std::exp(x[static_cast<std::size_t>(i)]) : -1.0f)
        << i;
  float sum = 0.0f, max = 0.0f;
  for (int i = 0; i < 128; ++i) {
    if (i % 64 < 10) sum += x[static_cast<std::size_t>(i)];
    if (i % 64 % 2 == 0) max = std::max(max, x[static_cast<std::size_t>(i)]);
  }
  EXPECT_FLOAT_EQ(y[0], sum);
  EXPECT_EQ(y[1], max);
  // Repeat 1 of the Cast starts 4 blocks (64 halves) into hh: lane 3 is x[64 + 3].
  EXPECT_EQ(y[2], static_cast<float>(static_cast<half>(x[67])));
}

// Compare and Select in their mask and CMPMASK forms (see kernel_operator.h): f32 x, y of 2
// repeats of 64 lanes, half hx, hy of 2 repeats of 128 lanes, 64 bytes of select bits. `bits`
// and `out` come in prefilled, so lanes a mask leaves out can be seen to keep their values.
constexpr uint64_t kEvenLanes[2] = {0x5555555555555555ull, 0};
constexpr uint64_t kNibbles[2] = {0x0F0F0F0F0F0F0F0Full, 0};

void cmpsel_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR hx, GM_ADDR hy, GM_ADDR sel, GM_ADDR bits,
                   GM_ADDR out, GM_ADDR hout) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> bx, by, bhx, bhy, bsel, bbits, bout, bhout, bspr;
  pipe.InitBuffer(bx, 512);
  pipe.InitBuffer(by, 512);
  pipe.InitBuffer(bhx, 512);
  pipe.InitBuffer(bhy, 512);
  pipe.InitBuffer(bsel, 64);
  pipe.InitBuffer(bbits, 128);
  pipe.InitBuffer(bout, 640 * 4);
  pipe.InitBuffer(bhout, 512);
  pipe.InitBuffer(bspr, 32);
  GlobalTensor<float> gx, gy, gout;
  GlobalTensor<half> ghx, ghy, ghout;
  GlobalTensor<uint8_t> gsel, gbits;
  gx.SetGlobalBuffer((__gm__ float*)x, 128);
  gy.SetGlobalBuffer((__gm__ float*)y, 128);
  gout.SetGlobalBuffer((__gm__ float*)out, 640);
  ghx.SetGlobalBuffer((__gm__ half*)hx, 256);
  ghy.SetGlobalBuffer((__gm__ half*)hy, 256);
  ghout.SetGlobalBuffer((__gm__ half*)hout, 256);
  gsel.SetGlobalBuffer((__gm__ uint8_t*)sel, 64);
  gbits.SetGlobalBuffer((__gm__ uint8_t*)bits, 128);
  LocalTensor<float> lx = bx.Get<float>(), ly = by.Get<float>(), lo = bout.Get<float>();
  LocalTensor<half> lhx = bhx.Get<half>(), lhy = bhy.Get<half>(), lho = bhout.Get<half>();
  LocalTensor<uint8_t> ls = bsel.Get<uint8_t>(), lb = bbits.Get<uint8_t>();
  LocalTensor<int32_t> spr = bspr.Get<int32_t>();
  DataCopy(lx, gx, 128);
  DataCopy(ly, gy, 128);
  DataCopy(lhx, ghx, 256);
  DataCopy(lhy, ghy, 256);
  DataCopy(ls, gsel, 64);
  DataCopy(lb, gbits, 128);
  DataCopy(lo, gout, 640);
  DataCopy(lho, ghout, 256);
  // CMPMASK sources written by the scalar unit: sel's UB address (as Huawei's SetCmpMask example
  // writes it) at byte 0, and the scalar -3.5f at byte 16.
  spr.ReinterpretCast<int64_t>().SetValue(
      0, reinterpret_cast<int64_t>(reinterpret_cast<__ubuf__ int64_t*>(ls.GetPhyAddr())));
  spr.ReinterpretCast<float>().SetValue(4, -3.5f);
  SetFlag<HardEvent::S_V>(EVENT_ID0);
  WaitFlag<HardEvent::S_V>(EVENT_ID0);
  SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
  Compare(lb, lx, ly, CMPMODE::GT, kEvenLanes, 2, BinaryRepeatParams{});           // bytes 0..15
  Compare(lb[32], lhx, lhy, CMPMODE::LE, uint64_t{100}, 2, BinaryRepeatParams{});  // 32..63
  Select(lo, ls, lx, ly, SELMODE::VSEL_CMPMASK_SPR, uint64_t{40}, 2, BinaryRepeatParams{});
  Select(lo[128], ls, lx, ly, SELMODE::VSEL_TENSOR_TENSOR_MODE, kNibbles, 2, BinaryRepeatParams{});
  Select(lho, ls, lhx, 7.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, uint64_t{128}, 2,
         BinaryRepeatParams{});
  Compare(lx, ly, CMPMODE::LT, uint64_t{64}, BinaryRepeatParams{});  // into CMPMASK
  GetCmpMask(lb[64]);                                                // bytes 64..79
  Select<float, SELMODE::VSEL_CMPMASK_SPR>(lo[256], lx, ly, 2, BinaryRepeatParams{});
  SetCmpMask(spr);
  Select<float, SELMODE::VSEL_TENSOR_TENSOR_MODE>(lo[384], lx, ly, 2, BinaryRepeatParams{});
  SetCmpMask(spr.ReinterpretCast<float>()[4]);  // 16-byte aligned
  Select(lo[512], ls, lx, 2, BinaryRepeatParams{});
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(gbits, lb, 128);
  DataCopy(gout, lo, 640);
  DataCopy(ghout, lho, 256);
}

TEST(AicoreVector, CompareAndSelectMaskFormsFollowTheirElementLoops) {
  Gm<float> x(128), y(128), out(640);
  Gm<half> hx(256), hy(256), hout(256);
  Gm<uint8_t> sel(64), bits(128);
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  for (std::size_t i = 0; i < 128; ++i) x[i] = d(gen), y[i] = i % 7 == 0 ? x[i] : d(gen);
  fill(hx, 12);
  fill(hy, 13);
  for (std::size_t i = 0; i < 256; i += 5) hy[i] = hx[i];  // equal pairs for LE
  for (std::size_t i = 0; i < 64; ++i) sel[i] = static_cast<uint8_t>(gen());
  for (std::size_t i = 0; i < 128; ++i) bits[i] = 0xA5;
  for (std::size_t i = 0; i < 640; ++i) out[i] = -1.0f;
  for (std::size_t i = 0; i < 256; ++i) hout[i] = static_cast<half>(-1.0f);
  ICPU_RUN_KF(cmpsel_kernel, 1, x.addr(), y.addr(), hx.addr(), hy.addr(), sel.addr(), bits.addr(),
              out.addr(), hout.addr());

  const auto bit = [](const uint8_t* p, std::size_t b) { return (p[b / 8] >> (b % 8)) & 1; };
  uint8_t prefill = 0xA5;
  for (std::size_t r = 0; r < 2; ++r)
    for (std::size_t l = 0; l < 64; ++l) {
      const std::size_t i = r * 64 + l;
      const int want = l % 2 == 0 ? x[i] > y[i] : bit(&prefill, i % 8);
      ASSERT_EQ(bit(bits.p, i), want) << "f32 GT, lane " << i;
    }
  for (std::size_t i = 0; i < 256; ++i) {
    const int want = i % 128 < 100 ? static_cast<float>(hx[i]) <= static_cast<float>(hy[i])
                                   : bit(&prefill, i % 8);
    ASSERT_EQ(bit(bits.p + 32, i), want) << "half LE, lane " << i;
  }
  for (std::size_t i = 16; i < 32; ++i) ASSERT_EQ(bits[i], 0xA5) << i;  // between the repeats' bits
  for (std::size_t l = 0; l < 128; ++l)
    ASSERT_EQ(bit(bits.p + 64, l), l < 64 ? x[l] < y[l] : 0) << "CMPMASK bit " << l;

  for (std::size_t r = 0; r < 2; ++r)
    for (std::size_t l = 0; l < 64; ++l) {
      const std::size_t i = r * 64 + l;
      // mode 0: the same first 64 bits every repeat, lanes 0..39
      ASSERT_EQ(out[i], l < 40 ? (bit(sel.p, l) ? x[i] : y[i]) : -1.0f) << i;
      // mode 2: the repeats' bits packed, lanes of the low nibble of each byte
      ASSERT_EQ(out[128 + i], (l / 4) % 2 == 0 ? (bit(sel.p, i) ? x[i] : y[i]) : -1.0f) << i;
      ASSERT_EQ(out[256 + i], x[l] < y[l] ? x[i] : y[i]) << i;     // mode 0 on CMPMASK
      ASSERT_EQ(out[384 + i], bit(sel.p, i) ? x[i] : y[i]) << i;   // mode 2 on CMPMASK
      ASSERT_EQ(out[512 + i], bit(sel.p, i) ? x[i] : -3.5f) << i;  // mode 1 on CMPMASK
    }
  for (std::size_t i = 0; i < 256; ++i)
    ASSERT_EQ(static_cast<float>(hout[i]), bit(sel.p, i) ? static_cast<float>(hx[i]) : 7.0f) << i;
}

void cmpsel_fault_kernel(uint32_t which) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> buf;
  pipe.InitBuffer(buf, 1024);
  LocalTensor<float> t = buf.Get<float>();
  LocalTensor<uint8_t> m = buf.Get<uint8_t>()[768];
  if (which == 0) Select(t, m, t, 1.0f, SELMODE::VSEL_TENSOR_TENSOR_MODE, uint64_t{64}, 1, {});
  if (which == 1) Select(t, m, t, t, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64u);
  if (which == 2) SetCmpMask(t[2]);  // 8 bytes in
  if (which == 3) Compare(m, t, t, CMPMODE::EQ, uint64_t{65}, 1, BinaryRepeatParams{});
}

TEST(AicoreVector, CompareAndSelectRejectWhatTheirModesDoNotTake) {
  expect_fault([] { ICPU_RUN_KF(cmpsel_fault_kernel, 1, 0u); },
               {"Select", "VSEL_TENSOR_SCALAR_MODE"});
  expect_fault([] { ICPU_RUN_KF(cmpsel_fault_kernel, 1, 1u); }, {"Select", "scalar"});
  expect_fault([] { ICPU_RUN_KF(cmpsel_fault_kernel, 1, 2u); }, {"SetCmpMask", "16-byte aligned"});
  expect_fault([] { ICPU_RUN_KF(cmpsel_fault_kernel, 1, 3u); }, {"Compare", "mask 65"});
}

}  // namespace

namespace {

// 200 tiny vector instructions: each passes the scalar unit (address and parameter set-up,
// spec 003 "Control Units") before its pipe, so the stream is bound by the S pipe's dispatch.
void tiny_vector_kernel() {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> buf;
  pipe.InitBuffer(buf, 256);
  LocalTensor<half> t = buf.Get<half>();
  for (int i = 0; i < 200; ++i) Adds(t, t, static_cast<half>(1.0f), 16);
}

TEST(AicoreCycles, EveryInstructionIsDispatchedByTheScalarUnit) {
  const auto rec = ICPU_RUN_KF(tiny_vector_kernel, 1);
  const auto& cost = tessera::aicore::device().cost_model();
  const double dispatch = cost.param("aicore.scalar_dispatch_cycles", 0);
  ASSERT_GT(dispatch, 0.0);
  EXPECT_DOUBLE_EQ(rec.metrics.at("busy.aicore0.S"), 200 * dispatch);
  // The V pipe waits on each dispatch: the core takes at least the dispatches and the V work.
  EXPECT_GE(static_cast<double>(rec.cycles_per_core[0]),
            std::max(200 * dispatch, rec.metrics.at("busy.aicore0.V")));
  EXPECT_GT(rec.metrics.at("busy.aicore0.V"), 0.0);
}

}  // namespace

namespace {

// UB bank groups (ascend910: 16 groups of 32-byte rows): a repeat whose 8 destination blocks
// all fall in one group (block stride 16 = 512 bytes) takes 8 cycles instead of 1; two sources
// in the same groups take 2; sources 256 bytes apart, in different groups, take 1.
template <int Case>
void bank_kernel() {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> buf;
  pipe.InitBuffer(buf, 8192);
  LocalTensor<float> t = buf.Get<float>();
  if (Case == 0) Adds(t, t[2048], 1.0f, 64, 1, UnaryRepeatParams{1, 1, 8, 8});
  if (Case == 1) Adds(t, t[2048], 1.0f, 64, 1, UnaryRepeatParams{16, 1, 8, 8});
  if (Case == 2) Add(t, t[1024], t[1024 + 128], 64);  // sources 512 bytes apart
  if (Case == 3) Add(t, t[1024], t[1024 + 64], 64);   // sources 256 bytes apart
}

TEST(AicoreCycles, VectorRepeatsPayForUbBankGroupConflicts) {
  auto v = [](auto kernel) { return ICPU_RUN_KF(kernel, 1).metrics.at("busy.aicore0.V"); };
  const double plain = v(bank_kernel<0>), strided = v(bank_kernel<1>);
  EXPECT_EQ(strided - plain, 7.0);  // eight rows of one group, written one a cycle
  const double same = v(bank_kernel<2>), apart = v(bank_kernel<3>);
  EXPECT_EQ(same - apart, 1.0);  // the two sources' rows share their groups
  EXPECT_EQ(apart, plain);
}

}  // namespace

#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(ScaleTilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);
TILING_DATA_FIELD_DEF(float, scale);
TILING_DATA_FIELD_DEF_ARR(uint16_t, 3, tiles);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(ScaleCustom, ScaleTilingData)
}  // namespace optiling

namespace {

// The CANN tiling flow: the host fills the tiling class and saves it into GM; the kernel reads
// it with GET_TILING_DATA and uses its fields by name.
void scale_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling) {
  (void)workspace;
  GET_TILING_DATA(t, tiling);
  TPipe pipe;
  TBuf<QuePosition::VECCALC> buf;
  pipe.InitBuffer(buf, t.totalLength * 4);
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer((__gm__ float*)x, t.totalLength);
  gy.SetGlobalBuffer((__gm__ float*)y, t.totalLength);
  LocalTensor<float> b = buf.Get<float>();
  DataCopy(b, gx, t.totalLength);
  PipeBarrier<PIPE_ALL>();
  Muls(b, b, t.scale + static_cast<float>(t.tiles[2]), static_cast<int32_t>(t.totalLength));
  PipeBarrier<PIPE_ALL>();
  DataCopy(gy, b, t.totalLength);
}

TEST(AicoreAscendC, TilingDataGoesFromTheHostToTheKernel) {
  optiling::ScaleTilingData tiling;
  tiling.set_totalLength(64);
  tiling.set_scale(1.5f);
  const uint16_t tiles[3] = {1, 2, 3};
  tiling.set_tiles(tiles);
  EXPECT_EQ(tiling.get_totalLength(), 64u);
  EXPECT_EQ(tiling.GetDataSize(), sizeof(optiling::ScaleTilingData));
  Gm<uint8_t> raw(tiling.GetDataSize());
  tiling.SaveToBuffer(raw.p, raw.n);
  EXPECT_THROW(tiling.SaveToBuffer(raw.p, 4), tessera::UserError);
  Gm<float> x(64), y(64);
  for (int i = 0; i < 64; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i);
  ICPU_RUN_KF(scale_kernel, 1, x.addr(), y.addr(), nullptr, raw.addr());
  for (int i = 0; i < 64; ++i)
    ASSERT_EQ(y[static_cast<std::size_t>(i)], 4.5f * static_cast<float>(i));
  // A tiling argument shorter than the class is a fault, not a read past the allocation.
  Gm<uint8_t> small(4);
  expect_fault([&] { ICPU_RUN_KF(scale_kernel, 1, x.addr(), y.addr(), nullptr, small.addr()); },
               {"GET_TILING_DATA", "past the end"});
}

// TBufPool: two stages carve their buffers from one pool; Reset hands it back. A request
// beyond the pool is a fault.
void pool_kernel(GM_ADDR x, GM_ADDR y, uint32_t second) {
  TPipe pipe;
  TBufPool<TPosition::VECCALC> pool;
  pipe.InitBufPool(pool, 4096);
  TBuf<TPosition::VECCALC> a, b;
  pool.InitBuffer(a, 2048);
  pool.InitBuffer(b, 2048);
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer((__gm__ float*)x, 512);
  gy.SetGlobalBuffer((__gm__ float*)y, 512);
  DataCopy(a.Get<float>(), gx, 512);
  PipeBarrier<PIPE_ALL>();
  Adds(b.Get<float>(), a.Get<float>(), 1.0f, 512);
  PipeBarrier<PIPE_ALL>();
  DataCopy(gy, b.Get<float>(), 512);
  pool.Reset();
  TQue<QuePosition::VECCALC, 1> q;
  pool.InitBuffer(q, 1, second);  // the second stage reuses the pool's bytes
  LocalTensor<float> t = q.AllocTensor<float>();
  Duplicate(t, 0.0f, 8);
  q.FreeTensor(t);
}

TEST(AicoreAscendC, TBufPoolStagesReuseItsMemory) {
  Gm<float> x(512), y(512);
  for (int i = 0; i < 512; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i);
  ICPU_RUN_KF(pool_kernel, 1, x.addr(), y.addr(), 4096u);
  for (int i = 0; i < 512; ++i)
    ASSERT_EQ(y[static_cast<std::size_t>(i)], static_cast<float>(i + 1));
  expect_fault([&] { ICPU_RUN_KF(pool_kernel, 1, x.addr(), y.addr(), 8192u); },
               {"TBufPool", "do not fit"});
}

// SetAtomicAdd: 16 blocks add their rows into one GM row; the sum is the same for 1, 2 and 8
// host threads, and a later plain copy (SetAtomicNone) overwrites again.
void atomic_kernel(GM_ADDR x, GM_ADDR y) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> q;
  pipe.InitBuffer(q, 1, 256);
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer((__gm__ float*)x + 64 * GetBlockIdx(), 64);
  gy.SetGlobalBuffer((__gm__ float*)y, 64);
  LocalTensor<float> t = q.AllocTensor<float>();
  DataCopy(t, gx, 64);
  q.EnQue(t);
  t = q.DeQue<float>();
  SetAtomicAdd<float>();
  DataCopy(gy, t, 64);
  SetAtomicNone();
  q.FreeTensor(t);
}

TEST(AicoreAscendC, SetAtomicAddAccumulatesEveryBlockIntoGm) {
  Gm<float> x(16 * 64);
  for (std::size_t i = 0; i < x.n; ++i) x[i] = 0.1f * static_cast<float>(i % 97) - 2.0f;
  std::vector<std::vector<float>> seen;
  for (unsigned threads : {1u, 2u, 8u}) {
    tessera::aicore::set_threads(threads);
    Gm<float> y(64);
    for (int i = 0; i < 64; ++i) y[static_cast<std::size_t>(i)] = 1.0f;
    ICPU_RUN_KF(atomic_kernel, 16, x.addr(), y.addr());
    seen.emplace_back(y.p, y.p + 64);
  }
  tessera::aicore::set_threads(0);
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(seen[0], seen[2]);
  for (int i = 0; i < 64; ++i) {
    float want = 1.0f;
    for (int b = 0; b < 16; ++b) want += x[static_cast<std::size_t>(b * 64 + i)];
    ASSERT_NEAR(seen[0][static_cast<std::size_t>(i)], want, 1e-4f) << i;
  }
}

}  // namespace

namespace {

// A tiling function in CANN's form reads shapes, data types and attributes from its context and
// writes block dim, tiling key, tiling data and workspace sizes back; the builder refuses
// descriptions it cannot place, and getters past the operator return nullptr.
ge::graphStatus scale_tiling(gert::TilingContext* context) {
  const gert::StorageShape* x = context->GetInputShape(0);
  const int64_t* tile = context->GetAttrs()->GetInt(0);
  const float* alpha = context->GetAttrs()->GetAttrPointer<float>(1);
  if (!x || !tile || !alpha || context->GetInputDesc(0)->GetDataType() != ge::DT_FLOAT16)
    return ge::GRAPH_FAILED;
  const int64_t n = x->GetStorageShape().GetShapeSize();
  context->SetBlockDim(static_cast<uint32_t>((n + *tile - 1) / *tile));
  context->SetTilingKey(*alpha == 1.0f ? 1 : 2);
  const int64_t fields[2] = {n, *tile};
  gert::TilingData* raw = context->GetRawTilingData();
  std::memcpy(raw->GetData(), fields, sizeof(fields));
  raw->SetDataSize(sizeof(fields));
  size_t* ws = context->GetWorkspaceSizes(1);
  if (!ws) return ge::GRAPH_FAILED;
  ws[0] = static_cast<size_t>(n) * 2;
  return ge::GRAPH_SUCCESS;
}

TEST(AscendCTiling, TilingContextCarriesShapesAttrsAndTheTilingFunctionsResults) {
  auto tiling = gert::TilingData::CreateCap(64);
  auto ws = gert::ContinuousVector::Create<size_t>(2);
  gert::StorageShape shape = {{3, 1000}, {3, 1000}};
  auto holder = context_ascendc::ContextBuilder()
                    .NodeIoNum(1, 1)
                    .IrInstanceNum({1})
                    .SetOpNameType("scale", "Scale")
                    .AddInputTd(0, ge::DT_FLOAT16, ge::FORMAT_ND, ge::FORMAT_ND, shape)
                    .AddOutputTd(0, ge::DT_FLOAT16, ge::FORMAT_ND, ge::FORMAT_ND, shape)
                    .AddAttr("tile", int64_t{256})
                    .AddAttr("alpha", 0.5f)
                    .TilingData(tiling.get())
                    .Workspace(reinterpret_cast<gert::ContinuousVector*>(ws.get()))
                    .BuildTilingContext();
  gert::TilingContext* c = holder->GetContext<gert::TilingContext>();
  ASSERT_EQ(scale_tiling(c), ge::GRAPH_SUCCESS);
  EXPECT_EQ(c->GetBlockDim(), 12u);  // ceil(3000 / 256)
  EXPECT_EQ(c->GetTilingKey(), 2u);
  EXPECT_EQ(c->GetRawTilingData()->GetDataSize(), 16u);
  int64_t fields[2];
  std::memcpy(fields, c->GetRawTilingData()->GetData(), sizeof(fields));
  EXPECT_EQ(fields[0], 3000);
  EXPECT_EQ(fields[1], 256);
  EXPECT_EQ(c->GetWorkspaceNum(), 1u);
  EXPECT_EQ(c->GetWorkspaceSizes(1)[0], 6000u);
  EXPECT_STREQ(c->GetNodeType(), "Scale");
  // Past the operator: nullptr, as CANN's getters give.
  EXPECT_EQ(c->GetInputShape(1), nullptr);
  EXPECT_EQ(c->GetAttrs()->GetInt(1), nullptr);  // attribute 1 is a float
  EXPECT_EQ(c->GetWorkspaceSizes(3), nullptr);
  EXPECT_THROW(c->GetRawTilingData()->SetDataSize(65), tessera::UserError);
  // The builder refuses what it cannot place.
  EXPECT_THROW(context_ascendc::ContextBuilder().NodeIoNum(1, 1).AddInputTd(
                   1, ge::DT_FLOAT, ge::FORMAT_ND, ge::FORMAT_ND, shape),
               tessera::UserError);
  EXPECT_THROW(context_ascendc::ContextBuilder().NodeIoNum(2, 1).IrInstanceNum({1}),
               tessera::UserError);
  EXPECT_THROW(context_ascendc::ContextBuilder()
                   .NodeIoNum(1, 1)
                   .AddInputTd(0, ge::DT_FLOAT, ge::FORMAT_ND, ge::FORMAT_ND, shape)
                   .BuildTilingContext(),
               tessera::UserError);  // output 0 undescribed
  // Without a TilingData buffer the holder provides one.
  auto own = context_ascendc::ContextBuilder().NodeIoNum(0, 0).BuildTilingContext();
  EXPECT_EQ(own->GetContext<gert::TilingContext>()->GetRawTilingData()->GetCapacity(),
            context_ascendc::ContextBuilder::kDefaultTilingCapacity);
}

}  // namespace
