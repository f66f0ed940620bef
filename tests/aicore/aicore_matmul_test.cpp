// Ascend C's high-level Matmul (lib/matmul_intf.h), its host tiling (tiling/tiling_api.h) and
// PlatformAscendC: products against a double-precision product of the same half inputs
// computed here, the tiling within the preset's buffers, the misuse errors, and cycles that
// come from the pipes and do not depend on host threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "aicore_common.h"
#include "lib/matmul_intf.h"
#include "tiling/context/context_builder.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"

using aicore_test::Gm;

namespace {

using AType = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using CFloat = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;
using CHalf = AscendC::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;

// C[m][n] = sum_k A[m][k] B[k][n] (+ bias[n]) in double, A and B stored as the flags say.
std::vector<double> reference(const Gm<half>& a, const Gm<half>& b, const float* bias, int M, int N,
                              int K, bool ta, bool tb) {
  std::vector<double> c(static_cast<std::size_t>(M) * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double s = bias ? bias[n] : 0.0;
      for (int k = 0; k < K; ++k) {
        const double x = static_cast<double>(a.p[ta ? k * M + m : m * K + k]);
        const double y = static_cast<double>(b.p[tb ? n * K + k : k * N + n]);
        s += x * y;
      }
      c[static_cast<std::size_t>(m) * N + n] = s;
    }
  return c;
}

// The host side of CANN's samples: a multi-core tiling over `dim` cores.
TCubeTiling make_tiling(int M, int N, int K, int dim, int baseM, int baseN, int baseK,
                        bool bias = false, bool ta = false, bool tb = false,
                        matmul_tiling::DataType c = matmul_tiling::DataType::DT_FLOAT) {
  using namespace matmul_tiling;
  auto* platform = platform_ascendc::PlatformAscendCManager::GetInstance("Ascend910");
  MultiCoreMatmulTiling api(*platform);
  api.SetDim(dim);
  api.SetAType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT16, ta);
  api.SetBType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT16, tb);
  api.SetCType(TPosition::GM, CubeFormat::ND, c);
  api.SetBiasType(TPosition::GM, CubeFormat::ND, c);
  api.SetOrgShape(M, N, K);
  api.SetShape(M, N, K);
  api.SetFixSplit(baseM, baseN, baseK);
  api.SetBias(bias);
  api.SetBufferSpace(-1, -1, -1);
  optiling::TCubeTiling t;
  EXPECT_EQ(api.GetTiling(t), 0);
  return t;
}

// The kernel of CANN's MatmulCustom sample in shape: each block takes its singleCoreM x
// singleCoreN piece of C, the last ones their tails.
template <class C_TYPE>
void matmul_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR tilingGm, bool ta,
                   bool tb) {
  using CT = typename C_TYPE::T;
  AscendC::TPipe pipe;
  TCubeTiling tiling;
  std::memcpy(&tiling, tilingGm, sizeof(tiling));
  const int mBlocks = (tiling.M + tiling.singleCoreM - 1) / tiling.singleCoreM;
  const int mi = static_cast<int>(AscendC::GetBlockIdx()) % mBlocks;
  const int ni = static_cast<int>(AscendC::GetBlockIdx()) / mBlocks;
  AscendC::GlobalTensor<half> ga, gb;
  AscendC::GlobalTensor<CT> gc, gbias;
  ga.SetGlobalBuffer(reinterpret_cast<half*>(a));
  gb.SetGlobalBuffer(reinterpret_cast<half*>(b));
  gc.SetGlobalBuffer(reinterpret_cast<CT*>(c));
  gbias.SetGlobalBuffer(reinterpret_cast<CT*>(bias));
  const int offA = ta ? mi * tiling.singleCoreM : mi * tiling.singleCoreM * tiling.Ka;
  const int offB = tb ? ni * tiling.singleCoreN * tiling.Kb : ni * tiling.singleCoreN;
  const int offC = mi * tiling.singleCoreM * tiling.N + ni * tiling.singleCoreN;
  AscendC::Matmul<AType, AType, C_TYPE, C_TYPE> mm;
  REGIST_MATMUL_OBJ(&pipe, AscendC::GetSysWorkSpacePtr(), mm, &tiling);
  mm.SetTensorA(ga[offA], ta);
  mm.SetTensorB(gb[offB], tb);
  if (tiling.isBias) mm.SetBias(gbias[ni * tiling.singleCoreN]);
  mm.SetTail(std::min(tiling.singleCoreM, tiling.M - mi * tiling.singleCoreM),
             std::min(tiling.singleCoreN, tiling.N - ni * tiling.singleCoreN));
  mm.IterateAll(gc[offC]);
  mm.End();
}

struct Problem {
  int M, N, K;
  Gm<half> a, b;
  Gm<float> bias, c;
  Gm<std::uint8_t> tiling;
  Problem(int m, int n, int k)
      : M(m), N(n), K(k), a(m * k), b(k * n), bias(n), c(m * n), tiling(sizeof(TCubeTiling)) {
    aicore_test::fill(a, 11);
    aicore_test::fill(b, 12);
    for (int i = 0; i < n; ++i) bias[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  }
  void expect_close(const std::vector<double>& want) {
    for (int i = 0; i < M * N; ++i)
      ASSERT_NEAR(c[i], want[i], 1e-3 * (1.0 + std::fabs(want[i]))) << "element " << i;
  }
};

}  // namespace

TEST(AicoreMatmul, IterateAllOverCoresWithTailsMatchesTheProduct) {
  // M, N and K each leave a tail block: 200 = 3 x 64 + 8 rows, 96 = 2 x 48, 80 = 2 x 32 + 16.
  Problem p(200, 96, 80);
  const TCubeTiling t = make_tiling(p.M, p.N, p.K, 2, 64, 48, 32);
  EXPECT_EQ(t.usedCoreNum, 2);
  std::memcpy(p.tiling.p, &t, sizeof(t));
  ICPU_RUN_KF(matmul_kernel<CFloat>, t.usedCoreNum, p.a.addr(), p.b.addr(), p.bias.addr(),
              p.c.addr(), p.tiling.addr(), false, false);
  p.expect_close(reference(p.a, p.b, nullptr, p.M, p.N, p.K, false, false));
  // The work ran on the Cube path of both cores.
  const auto& k = tessera::aicore::last_kernel();
  for (const char* pipe : {"M", "MTE1", "MTE2", "MTE3", "V"}) {
    EXPECT_GT(k.metrics.at(std::string("busy.aicore0.") + pipe), 0.0) << pipe;
    EXPECT_GT(k.metrics.at(std::string("busy.aicore1.") + pipe), 0.0) << pipe;
  }
}

TEST(AicoreMatmul, KInSeveralL1ChunksMatchesTheProduct) {
  // stepKa = stepKb = 2: K = 80 comes into L1 as 64 + 16, in base slices of 32, 32 and 16.
  for (const bool trans : {false, true}) {
    Problem p(48, 64, 80);
    TCubeTiling t = make_tiling(p.M, p.N, p.K, 1, 48, 32, 32, false, trans, trans);
    ASSERT_EQ(t.stepKa, 3);  // the tiling's own choice: all of K in L1
    t.stepKa = t.stepKb = 2;
    t.depthA1 = t.depthB1 = 4;
    std::memcpy(p.tiling.p, &t, sizeof(t));
    ICPU_RUN_KF(matmul_kernel<CFloat>, 1, p.a.addr(), p.b.addr(), p.bias.addr(), p.c.addr(),
                p.tiling.addr(), trans, trans);
    p.expect_close(reference(p.a, p.b, nullptr, p.M, p.N, p.K, trans, trans));
  }
}

TEST(AicoreMatmul, TransposedOperandsAndBiasMatchTheProduct) {
  Problem p(64, 64, 96);
  const TCubeTiling t = make_tiling(p.M, p.N, p.K, 1, 32, 32, 32, true, true, true);
  EXPECT_EQ(t.isBias, 1);
  std::memcpy(p.tiling.p, &t, sizeof(t));
  ICPU_RUN_KF(matmul_kernel<CFloat>, 1, p.a.addr(), p.b.addr(), p.bias.addr(), p.c.addr(),
              p.tiling.addr(), true, true);
  p.expect_close(reference(p.a, p.b, p.bias.p, p.M, p.N, p.K, true, true));
}

TEST(AicoreMatmul, HalfOutputIsTheProductRoundedToHalf) {
  const int M = 48, N = 32, K = 64;
  Gm<half> a(M * K), b(K * N), c(M * N), bias(N);
  Gm<std::uint8_t> tg(sizeof(TCubeTiling));
  aicore_test::fill(a, 3, -1.0f, 1.0f);
  aicore_test::fill(b, 4, -1.0f, 1.0f);
  const TCubeTiling t =
      make_tiling(M, N, K, 1, 16, 16, 32, false, false, false, matmul_tiling::DataType::DT_FLOAT16);
  std::memcpy(tg.p, &t, sizeof(t));
  ICPU_RUN_KF(matmul_kernel<CHalf>, 1, a.addr(), b.addr(), bias.addr(), c.addr(), tg.addr(), false,
              false);
  const std::vector<double> want = reference(a, b, nullptr, M, N, K, false, false);
  for (int i = 0; i < M * N; ++i)
    ASSERT_NEAR(static_cast<double>(c[i]), want[i], 2e-3 * (1.0 + std::fabs(want[i]))) << i;
}

namespace {
// CANN's MatmulLeakyRelu sample in shape: each block's result into a VECIN tensor, LeakyRelu on
// the Vector unit, then the rows to GM through the queue.
void leaky_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR tilingGm) {
  AscendC::TPipe pipe;
  TCubeTiling tiling;
  std::memcpy(&tiling, tilingGm, sizeof(tiling));
  AscendC::GlobalTensor<half> ga, gb;
  AscendC::GlobalTensor<float> gc;
  ga.SetGlobalBuffer(reinterpret_cast<half*>(a));
  gb.SetGlobalBuffer(reinterpret_cast<half*>(b));
  gc.SetGlobalBuffer(reinterpret_cast<float*>(c));
  AscendC::TQue<AscendC::TPosition::VECIN, 2> out;
  pipe.InitBuffer(out, 2, tiling.baseM * tiling.baseN * sizeof(float));
  matmul::Matmul<AType, AType, CFloat, CFloat> mm;
  REGIST_MATMUL_OBJ(&pipe, AscendC::GetSysWorkSpacePtr(), mm);
  mm.Init(&tiling);
  mm.SetTensorA(ga);
  mm.SetTensorB(gb);
  std::uint32_t round = 0;
  const std::uint32_t roundM = tiling.singleCoreM / tiling.baseM;
  while (mm.template Iterate<true>()) {
    AscendC::LocalTensor<float> r = out.AllocTensor<float>();
    mm.template GetTensorC<true>(r, false, true);
    AscendC::LeakyRelu(r, r, 0.125f, tiling.baseM * tiling.baseN);
    out.EnQue(r);
    r = out.DeQue<float>();
    const std::uint32_t at =
        round % roundM * tiling.baseM * tiling.N + round / roundM * tiling.baseN;
    AscendC::DataCopy(
        gc[at], r,
        AscendC::DataCopyParams{
            static_cast<std::uint16_t>(tiling.baseM),
            static_cast<std::uint16_t>(tiling.baseN * 4 / AscendC::DEFAULT_C0_SIZE), 0,
            static_cast<std::uint16_t>((tiling.N - tiling.baseN) * 4 / AscendC::DEFAULT_C0_SIZE)});
    out.FreeTensor(r);
    ++round;
  }
  mm.End();
}
}  // namespace

TEST(AicoreMatmul, GetTensorCIntoUbFeedsVectorWorkAsTheLeakyReluSampleDoes) {
  Problem p(64, 96, 48);
  const TCubeTiling t = make_tiling(p.M, p.N, p.K, 1, 32, 32, 16);
  std::memcpy(p.tiling.p, &t, sizeof(t));
  ICPU_RUN_KF(leaky_kernel, 1, p.a.addr(), p.b.addr(), p.c.addr(), p.tiling.addr());
  std::vector<double> want = reference(p.a, p.b, nullptr, p.M, p.N, p.K, false, false);
  for (double& v : want) v = v < 0 ? v * 0.125 : v;
  p.expect_close(want);
}

TEST(AicoreMatmul, CyclesComeFromThePipesAndDoNotDependOnHostThreads) {
  Problem p(128, 128, 64);
  const TCubeTiling t = make_tiling(p.M, p.N, p.K, 4, 32, 64, 32);
  std::memcpy(p.tiling.p, &t, sizeof(t));
  std::vector<std::uint64_t> cycles;
  for (unsigned threads : {1u, 4u}) {
    tessera::aicore::set_threads(threads);
    ICPU_RUN_KF(matmul_kernel<CFloat>, t.usedCoreNum, p.a.addr(), p.b.addr(), p.bias.addr(),
                p.c.addr(), p.tiling.addr(), false, false);
    cycles.push_back(tessera::aicore::last_kernel().cycles);
  }
  tessera::aicore::set_threads(0);
  EXPECT_GT(cycles[0], 0u);
  EXPECT_EQ(cycles[0], cycles[1]);
  // Twice the K is twice the Cube work on the M pipe of a core.
  const double m1 = tessera::aicore::last_kernel().metrics.at("busy.aicore0.M");
  Problem q(128, 128, 128);
  const TCubeTiling t2 = make_tiling(q.M, q.N, q.K, 4, 32, 64, 32);
  std::memcpy(q.tiling.p, &t2, sizeof(t2));
  ICPU_RUN_KF(matmul_kernel<CFloat>, t2.usedCoreNum, q.a.addr(), q.b.addr(), q.bias.addr(),
              q.c.addr(), q.tiling.addr(), false, false);
  EXPECT_EQ(tessera::aicore::last_kernel().metrics.at("busy.aicore0.M"), 2 * m1);
}

namespace {
template <typename F>
void expect_user_error(F&& body, const std::string& part) {
  try {
    body();
    ADD_FAILURE() << "expected a UserError naming: " << part;
  } catch (const tessera::UserError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}
enum class Misuse { NoTensorA, KMismatch, BeyondTiling, NoIterate };
void misuse_kernel(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR tilingGm, Misuse what) {
  AscendC::TPipe pipe;
  TCubeTiling tiling;
  std::memcpy(&tiling, tilingGm, sizeof(tiling));
  AscendC::GlobalTensor<half> ga, gb;
  AscendC::GlobalTensor<float> gc;
  ga.SetGlobalBuffer(reinterpret_cast<half*>(a));
  gb.SetGlobalBuffer(reinterpret_cast<half*>(b));
  gc.SetGlobalBuffer(reinterpret_cast<float*>(c));
  AscendC::Matmul<AType, AType, CFloat> mm;
  REGIST_MATMUL_OBJ(&pipe, AscendC::GetSysWorkSpacePtr(), mm, &tiling);
  if (what != Misuse::NoTensorA) mm.SetTensorA(ga);
  mm.SetTensorB(gb);
  if (what == Misuse::KMismatch) mm.SetOrgShape(tiling.M, tiling.N, tiling.Ka, tiling.Ka / 2);
  if (what == Misuse::BeyondTiling)
    mm.SetSingleShape(tiling.singleCoreM * 2, tiling.singleCoreN, tiling.singleCoreK);
  if (what == Misuse::NoIterate) {
    mm.GetTensorC(gc);
    return;
  }
  mm.IterateAll(gc);
}
}  // namespace

TEST(AicoreMatmul, MisuseIsAUserErrorSayingWhatToFix) {
  Problem p(32, 32, 32);
  const TCubeTiling t = make_tiling(p.M, p.N, p.K, 1, 16, 16, 16);
  std::memcpy(p.tiling.p, &t, sizeof(t));
  const auto run = [&](Misuse m) {
    ICPU_RUN_KF(misuse_kernel, 1, p.a.addr(), p.b.addr(), p.c.addr(), p.tiling.addr(), m);
  };
  expect_user_error([&] { run(Misuse::NoTensorA); }, "call SetTensorA and SetTensorB");
  expect_user_error([&] { run(Misuse::KMismatch); }, "must fit both");
  expect_user_error([&] { run(Misuse::BeyondTiling); }, "exceeds the tiling's singleCoreM/N/K");
  expect_user_error([&] { run(Misuse::NoIterate); }, "call Iterate first");
}

TEST(AicoreMatmulTiling, FitsThePresetsBuffersAndRefusesWhatCannotFit) {
  using namespace matmul_tiling;
  platform_ascendc::PlatformAscendC platform;
  std::uint64_t l0a = 0, l0b = 0, l0c = 0, l1 = 0, ub = 0;
  platform.GetCoreMemSize(platform_ascendc::CoreMemType::L0_A, l0a);
  platform.GetCoreMemSize(platform_ascendc::CoreMemType::L0_B, l0b);
  platform.GetCoreMemSize(platform_ascendc::CoreMemType::L0_C, l0c);
  platform.GetCoreMemSize(platform_ascendc::CoreMemType::L1, l1);
  platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
  const auto& spec = tessera::aicore::device().spec();
  EXPECT_EQ(l0a, static_cast<std::uint64_t>(spec.memory("L0A").capacity_bytes.as_int()));
  EXPECT_EQ(ub, static_cast<std::uint64_t>(spec.memory("UB").capacity_bytes.as_int()));
  EXPECT_EQ(platform.GetCoreNumAic(), static_cast<std::uint32_t>(spec.core_count.as_int()));
  EXPECT_EQ(platform.GetCoreNumAiv(), platform.GetCoreNumAic());
  EXPECT_EQ(platform.GetSocVersion(), platform_ascendc::SocVersion::ASCEND910);

  // Huawei's sample shape: 512 x 1024 x 512 over 2 cores with base blocks 128 x 256.
  MultiCoreMatmulTiling api(platform);
  api.SetDim(2);
  api.SetAType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT16);
  api.SetBType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT16);
  api.SetCType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT);
  api.SetOrgShape(512, 1024, 512);
  api.SetShape(512, 1024, 512);
  api.SetFixSplit(128, 256, -1);
  optiling::TCubeTiling t;
  ASSERT_EQ(api.GetTiling(t), 0);
  EXPECT_EQ(t.get_usedCoreNum(), 2);
  EXPECT_EQ(t.baseM, 128);
  EXPECT_EQ(t.baseN, 256);
  // The plane split in two along N (less A and B a core reads than along M).
  EXPECT_EQ(t.singleCoreM, 512);
  EXPECT_EQ(t.singleCoreN, 512);
  EXPECT_EQ(t.singleCoreK, 512);
  // baseK 128 would fit L0B once; 64 fits it twice, so the loads overlap the Cube.
  EXPECT_EQ(t.baseK, 64);
  EXPECT_EQ(t.dbL0B, 2);
  const std::uint64_t a2 = 2ull * t.baseM * t.baseK, b2 = 2ull * t.baseK * t.baseN;
  EXPECT_LE(a2 * t.dbL0A, l0a);
  EXPECT_LE(b2 * t.dbL0B, l0b);
  EXPECT_LE(4ull * t.baseM * t.baseN, l0c);
  EXPECT_LE((a2 + b2) * t.depthA1, l1);
  EXPECT_EQ(t.GetDataSize(), sizeof(TCubeTiling));

  // A base block beyond L0C, and K that is not whole fractals, fit nothing.
  api.SetFixSplit(512, 512, -1);
  EXPECT_EQ(api.GetTiling(t), -1);
  api.SetFixSplit(-1, -1, -1);
  api.SetShape(512, 1024, 500);
  api.SetOrgShape(512, 1024, 500);
  EXPECT_EQ(api.GetTiling(t), -1);
  // A buffer space too small for the smallest block.
  MatmulApiTiling one(platform);
  one.SetAType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT16);
  one.SetBType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT16);
  one.SetCType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT);
  one.SetShape(64, 64, 64);
  one.SetBufferSpace(-1, 512, -1);
  EXPECT_EQ(one.GetTiling(t), -1);
  one.SetBufferSpace(-1, -1, -1);
  EXPECT_EQ(one.GetTiling(t), 0);
  EXPECT_EQ(t.usedCoreNum, 1);
}

namespace optiling {
BEGIN_TILING_DATA_DEF(MatmulOpTiling)
TILING_DATA_FIELD_DEF(int32_t, alpha);
TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cubeTilingData);
END_TILING_DATA_DEF;
}  // namespace optiling

TEST(AicoreMatmulTiling, TilingContextGivesThePlatformAndTheTilingNestsInAClass) {
  context_ascendc::ContextBuilder builder;
  auto holder = builder.NodeIoNum(0, 0).AddPlatformInfo("Ascend910").BuildTilingContext();
  gert::TilingContext* context = holder->GetContext<gert::TilingContext>();
  platform_ascendc::PlatformAscendC platform(context->GetPlatformInfo());
  EXPECT_EQ(platform.GetCoreNum(),
            static_cast<std::uint32_t>(tessera::aicore::device().spec().core_count.as_int()));
  matmul_tiling::MultiCoreMatmulTiling api(platform);
  using namespace matmul_tiling;
  api.SetAType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT16);
  api.SetBType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT16);
  api.SetCType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT);
  api.SetShape(256, 256, 64);
  optiling::MatmulOpTiling tiling;
  ASSERT_EQ(api.GetTiling(tiling.cubeTilingData), 0);
  // With every core free, the plane goes to more than one core and at most all of them.
  EXPECT_LE(tiling.cubeTilingData.usedCoreNum, static_cast<std::int32_t>(platform.GetCoreNum()));
  EXPECT_GT(tiling.cubeTilingData.usedCoreNum, 1);
  std::vector<std::uint8_t> bytes(tiling.GetDataSize());
  tiling.SaveToBuffer(bytes.data(), bytes.size());
  TCubeTiling kernelSide;
  std::memcpy(&kernelSide, bytes.data() + offsetof(optiling::MatmulOpTiling, cubeTilingData),
              sizeof(kernelSide));
  EXPECT_EQ(kernelSide.singleCoreM, tiling.cubeTilingData.singleCoreM);
  EXPECT_EQ(kernelSide.baseK, tiling.cubeTilingData.baseK);
}
