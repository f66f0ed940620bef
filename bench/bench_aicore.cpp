// The aicore target at the sizes of issue 11: a 16M-element fp16 Ascend C vector add over 32
// cores against a plain C++ loop over the same halves on the host (host speed of the
// simulator), and the Cube GEMM of the op library (fp16, f32 accumulation, double-buffered
// queues) at 1024^3 to 4096^3 with its fraction of the modeled Cube peak (cube_peak_frac:
// 2 m n k flops over cycles x cores x 2 x 16^3), modeled time and the share of the cores' reads
// the L2 served.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernel_operator.h"
#include "tessera/targets/aicore/kernels/ops.h"
#include "tikicpulib.h"

namespace {

using namespace AscendC;
using namespace tessera;

constexpr int32_t kTile = 16384;  // halves per tile: 3 queues x 2 buffers x 32 KiB in UB

void vector_add_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z, int64_t n) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 2> qx, qy;
  TQue<QuePosition::VECOUT, 2> qz;
  const int64_t per = n / GetBlockNum();
  GlobalTensor<half> gx, gy, gz;
  gx.SetGlobalBuffer((__gm__ half*)x + per * GetBlockIdx(), per);
  gy.SetGlobalBuffer((__gm__ half*)y + per * GetBlockIdx(), per);
  gz.SetGlobalBuffer((__gm__ half*)z + per * GetBlockIdx(), per);
  pipe.InitBuffer(qx, 2, kTile * sizeof(half));
  pipe.InitBuffer(qy, 2, kTile * sizeof(half));
  pipe.InitBuffer(qz, 2, kTile * sizeof(half));
  for (int64_t at = 0; at < per; at += kTile) {
    LocalTensor<half> a = qx.AllocTensor<half>(), b = qy.AllocTensor<half>();
    DataCopy(a, gx[at], kTile);
    DataCopy(b, gy[at], kTile);
    qx.EnQue(a);
    qy.EnQue(b);
    a = qx.DeQue<half>();
    b = qy.DeQue<half>();
    LocalTensor<half> c = qz.AllocTensor<half>();
    Add(c, a, b, kTile);
    qz.EnQue(c);
    qx.FreeTensor(a);
    qy.FreeTensor(b);
    c = qz.DeQue<half>();
    DataCopy(gz[at], c, kTile);
    qz.FreeTensor(c);
  }
}

constexpr int64_t kElements = 16 * 1024 * 1024;

struct Halves {
  half* p;
  explicit Halves(int64_t n) : p(static_cast<half*>(GmAlloc(n * sizeof(half)))) {
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<half>(static_cast<float>(i % 1000) * 0.01f);
  }
  ~Halves() { GmFree(p); }
};

void BM_AscendCVectorAdd16M(benchmark::State& state) {
  Halves x(kElements), y(kElements), z(kElements);
  profile::KernelRecord rec;
  for (auto _ : state) {
    rec = ICPU_RUN_KF(vector_add_kernel, 32, (GM_ADDR)x.p, (GM_ADDR)y.p, (GM_ADDR)z.p, kElements);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kElements);
  state.counters["modeled_us"] =
      static_cast<double>(rec.cycles) / tessera::aicore::device().spec().clock_hz.value * 1e6;
}
BENCHMARK(BM_AscendCVectorAdd16M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_HostLoopVectorAdd16M(benchmark::State& state) {
  std::vector<half> x(kElements), y(kElements), z(kElements);
  for (int64_t i = 0; i < kElements; ++i)
    x[i] = y[i] = static_cast<half>(static_cast<float>(i % 1000) * 0.01f);
  for (auto _ : state) {
    for (int64_t i = 0; i < kElements; ++i) z[i] = x[i] + y[i];
    benchmark::DoNotOptimize(z.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kElements);
}
BENCHMARK(BM_HostLoopVectorAdd16M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CubeGemmF16(benchmark::State& state) {
  const auto s = static_cast<int32_t>(state.range(0));
  const auto count = static_cast<std::size_t>(s) * s;
  std::vector<std::uint16_t> a(count), b(count), c(count);
  for (std::size_t i = 0; i < count; ++i)
    a[i] = b[i] = tessera::f32_to_f16_bits(static_cast<float>(i % 7) * 0.125f - 0.375f);
  runtime::Device& dev = tessera::aicore::device();
  profile::KernelRecord rec;
  for (auto _ : state) {
    rec = tessera::aicore::kernels::matmul_f16(dev, a.data(), b.data(), c.data(), s, s, s);
    benchmark::ClobberMemory();
  }
  const auto& spec = dev.spec();
  const double peak_flops_per_cycle =
      2.0 * spec.param("aicore.cube_m").value * spec.param("aicore.cube_k").value *
      spec.param("aicore.cube_n").value * static_cast<double>(spec.core_count.as_int());
  const double flops = 2.0 * s * static_cast<double>(s) * s;
  state.counters["cube_peak_frac"] =
      flops / (static_cast<double>(rec.cycles) * peak_flops_per_cycle);
  state.counters["modeled_us"] = static_cast<double>(rec.cycles) / spec.clock_hz.value * 1e6;
  state.counters["modeled_tflops"] =
      flops / (static_cast<double>(rec.cycles) / spec.clock_hz.value) / 1e12;
  if (!spec.global_cache.empty()) {  // how much of what the cores read the L2 served
    const double hit = rec.metrics.at(spec.global_cache + ".hit_bytes");
    const double miss = rec.metrics.at(spec.global_cache + ".miss_bytes");
    state.counters["l2_hit_frac"] = hit / (hit + miss);
  }
}
BENCHMARK(BM_CubeGemmF16)
    ->Arg(1024)
    ->Arg(2048)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
