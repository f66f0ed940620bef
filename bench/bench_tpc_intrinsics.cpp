// TPC simulator speed: intrinsic throughput, and an elementwise add over 16M f32 elements run
// through the TPC executor against a plain C++ loop over the same data. The goal is the
// simulator at no less than a quarter of the plain loop's speed. Also the latency model's
// effect (spec 000 §2.3.1), as modeled cycles per instruction in the counters: a chain of
// dependent adds, the same number of independent ones, and a load-compute-store loop.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "tessera/runtime/device.h"
#include "tessera/targets/tpc/api/tpc.h"

using namespace tessera;
using namespace tessera::tpc;

namespace {

constexpr std::int64_t kRows = 4096, kCols = 4096;  // 16M elements
constexpr std::int64_t kElements = kRows * kCols;

void add_f32(tensor a, tensor b, tensor out) {
  const int5 s = get_index_space_offset();
  const int5 e = s + get_index_space_size();
  int5 c = {0};
  for (int j = s[1]; j < e[1]; ++j) {
    c[1] = j;
    for (int i = s[0]; i < e[0]; ++i) {
      c[0] = i * 64;
      f32_st_tnsr_i_v(c, out, v_f32_add_v_v(v_f32_ld_tnsr_i(c, a), v_f32_ld_tnsr_i(c, b)));
    }
  }
}

struct AddSetup {
  std::unique_ptr<runtime::Device> device = runtime::Device::open("gaudi");
  std::shared_ptr<KernelSet> lib = std::make_shared<KernelSet>("bench");
  KernelRegistry registry;
  std::unique_ptr<Runtime> rt;
  DeviceTensor a, b, c;
  AddSetup() {
    lib->add("add_f32", [](const gcapi::HabanaKernelParams_t* p,
                           gcapi::HabanaKernelInstantiation_t* inst) {
      return gcapi::elementwise_glue(p, inst, 2, 1, gcapi::DATA_F32, 64, tpc_kernel<&add_f32>());
    });
    registry.add_builtin_library(lib);
    RuntimeOptions o;
    o.registry = &registry;
    rt = std::make_unique<Runtime>(*device, o);
    std::vector<float> x(kElements), y(kElements);
    for (std::int64_t i = 0; i < kElements; ++i) {
      x[i] = static_cast<float>(i % 1000);
      y[i] = 0.5f;
    }
    const Shape shape{kCols, kRows};
    a = make_device_tensor(*device, DType::f32, shape, x.data());
    b = make_device_tensor(*device, DType::f32, shape, y.data());
    c = make_device_tensor(*device, DType::f32, shape);
  }
  void run() {
    rt->launch("add_f32", {a, b}, {c});
    device->reset_profile();
  }
};

AddSetup& setup() {
  static AddSetup s;
  return s;
}

struct PlainSetup {
  std::vector<float> a, b, c;
  PlainSetup() : a(kElements), b(kElements, 0.5f), c(kElements) {
    for (std::int64_t i = 0; i < kElements; ++i) a[i] = static_cast<float>(i % 1000);
  }
  void run() {
    const float* pa = a.data();
    const float* pb = b.data();
    float* pc = c.data();
    for (std::int64_t i = 0; i < kElements; ++i) pc[i] = pa[i] + pb[i];
    benchmark::DoNotOptimize(pc);
    benchmark::ClobberMemory();
  }
};

PlainSetup& plain() {
  static PlainSetup s;
  return s;
}

void BM_TpcElementwiseAdd16M(benchmark::State& state) {
  auto& s = setup();
  for (auto _ : state) s.run();
  state.SetItemsProcessed(state.iterations() * kElements);
}
BENCHMARK(BM_TpcElementwiseAdd16M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PlainLoopAdd16M(benchmark::State& state) {
  auto& s = plain();
  for (auto _ : state) s.run();
  state.SetItemsProcessed(state.iterations() * kElements);
}
BENCHMARK(BM_PlainLoopAdd16M)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- the latency model: modeled cycles per instruction (counters), one member on one core ----
constexpr int kAdds = 100000;

void dependent_adds(tensor in, tensor out) {
  const int5 c = {0};
  float64 x = v_f32_ld_tnsr_i(c, in);
  for (int i = 0; i < kAdds; ++i) x = v_f32_add_v_v(x, x);
  f32_st_tnsr_i_v(c, out, x);
}

void independent_adds(tensor in, tensor out) {
  const int5 c = {0};
  const float64 x = v_f32_ld_tnsr_i(c, in);
  float64 last;
  for (int i = 0; i < kAdds; ++i) last = v_f32_add_v_v(x, x);
  f32_st_tnsr_i_v(c, out, last);
}

void stream_loop(tensor in, tensor out) {
  const int5 s = get_index_space_offset();
  const int5 e = s + get_index_space_size();
  for (int m = s[0]; m < e[0]; ++m) {
    const int5 c = {m * 64, 0, 0, 0, 0};
    f32_st_tnsr_i_v(c, out, v_f32_add_v_s(v_f32_ld_tnsr_i(c, in), 1.0f));
  }
}

void BM_LatencyModel(benchmark::State& state, KernelFunction kernel, std::int64_t n,
                     double instructions) {
  auto device = runtime::Device::open("gaudi");
  auto lib = std::make_shared<KernelSet>("bench-latency");
  lib->add("k_f32", [kernel](const gcapi::HabanaKernelParams_t* p,
                             gcapi::HabanaKernelInstantiation_t* inst) {
    return gcapi::elementwise_glue(p, inst, 1, 1, gcapi::DATA_F32, 64, kernel);
  });
  KernelRegistry registry;
  registry.add_builtin_library(lib);
  RuntimeOptions o;
  o.registry = &registry;
  Runtime rt(*device, o);
  auto in = make_device_tensor(*device, DType::f32, Shape{n});
  auto out = make_device_tensor(*device, DType::f32, Shape{n});
  std::uint64_t cycles = 0;
  for (auto _ : state) {
    cycles = rt.launch("k_f32", {in}, {out}).cycles_per_core.front();
    device->reset_profile();
  }
  state.counters["modeled_cycles"] = static_cast<double>(cycles);
  state.counters["cycles_per_instruction"] = static_cast<double>(cycles) / instructions;
}
BENCHMARK_CAPTURE(BM_LatencyModel, dependent_adds, tpc_kernel<&dependent_adds>(), 64, kAdds)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LatencyModel, independent_adds, tpc_kernel<&independent_adds>(), 64, kAdds)
    ->Unit(benchmark::kMillisecond);
// 8 cores x 4096 iterations of load, add, store: per iteration (the "instruction" here) the
// port's 2 x 4 cycles, the latency paid once.
BENCHMARK_CAPTURE(BM_LatencyModel, load_add_store_loop, tpc_kernel<&stream_loop>(), 64 * 8 * 4096,
                  4096)
    ->Unit(benchmark::kMillisecond);

// Intrinsic throughput outside a kernel: lanes per second of common VPU intrinsics.
void BM_Intrinsic_v_f32_add_v_v(benchmark::State& state) {
  float64 a(1.0f), b(2.0f);
  for (auto _ : state) {
    a = v_f32_add_v_v(a, b);
    benchmark::DoNotOptimize(a);
  }
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_Intrinsic_v_f32_add_v_v);

void BM_Intrinsic_v_f32_mac_v_v(benchmark::State& state) {
  float64 a(1.0f), b(0.5f), acc(0.0f);
  for (auto _ : state) {
    acc = v_f32_mac_v_v(a, b, acc);
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_Intrinsic_v_f32_mac_v_v);

void BM_Intrinsic_bv_f32_cmp_less_and_sel(benchmark::State& state) {
  float64 a = read_lane_id_4b_b()[0] * 1.0f, b(31.0f);
  for (auto _ : state) {
    bool256 m = bv_f32_cmp_less_v_v(a, b);
    a = v_f32_mov_v_vb(b, a, m, false);
    benchmark::DoNotOptimize(a);
  }
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_Intrinsic_bv_f32_cmp_less_and_sel);

void BM_Intrinsic_v_i8_add_v_v(benchmark::State& state) {
  char256 a(static_cast<std::int8_t>(1)), b(static_cast<std::int8_t>(3));
  for (auto _ : state) {
    a = v_i8_add_v_v(a, b);
    benchmark::DoNotOptimize(a);
  }
  state.SetItemsProcessed(state.iterations() * 256);
}
BENCHMARK(BM_Intrinsic_v_i8_add_v_v);

void BM_Intrinsic_v_convert_f32_to_bf16(benchmark::State& state) {
  float64 a(1.37f);
  for (auto _ : state) {
    bfloat128 h = v_convert_f32_to_bf16_v(a);
    benchmark::DoNotOptimize(h);
  }
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_Intrinsic_v_convert_f32_to_bf16);

void BM_Intrinsic_v_tanh_f32(benchmark::State& state) {
  float64 a(0.3f);
  for (auto _ : state) {
    float64 r = v_tanh_f32(a);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_Intrinsic_v_tanh_f32);

template <typename Fn>
double best_seconds(Fn fn, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  // The ratio the goal is stated in, best of five runs each.
  const double sim = best_seconds([] { setup().run(); }, 5);
  const double loop = best_seconds([] { plain().run(); }, 5);
  std::printf(
      "\nelementwise add, %lld f32 elements:\n"
      "  TPC simulator: %.1f ms, %.3g simulated elements per host second\n"
      "  plain loop:    %.1f ms, %.3g elements per second\n"
      "  simulator / plain loop speed: %.2f (goal: >= 0.25)\n",
      static_cast<long long>(kElements), sim * 1e3, kElements / sim, loop * 1e3, kElements / loop,
      loop / sim);
  return 0;
}
