// Built-in TPC kernels and the MME at realistic sizes, each through tpc::ops (glue, executor,
// cost model). Counters: simulated elements per host second (sim_elem_per_s), the modeled
// utilisation of each VLIW slot (slot_*), of global-memory bandwidth (mem_bw) and of the MME
// (mme_util), and the modeled kernel time (modeled_us). A plain C++ loop over the add's data
// gives the host-speed yardstick for the elementwise path.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/runtime/device.h"
#include "tessera/targets/tpc/kernels.h"

namespace {

using namespace tessera;
using tpc::DeviceTensor;

struct Bench {
  std::unique_ptr<runtime::Device> device = runtime::Device::open("gaudi");
  tpc::Runtime rt{*device};

  DeviceTensor tensor(DType dtype, const Shape& shape, float scale = 1.0f) {
    const auto n = static_cast<std::size_t>(shape.element_count());
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
      v[i] = scale * (static_cast<float>((i * 2654435761u) % 2001) / 1000.0f - 1.0f);
    DeviceTensor f = tpc::make_device_tensor(*device, DType::f32, shape, v.data());
    if (dtype == DType::f32) return f;
    DeviceTensor t = tpc::make_device_tensor(*device, dtype, shape);
    tpc::ops::cast(rt, f, t);
    return t;
  }

  // Runs `launch` per iteration and reports the counters of the record it returns.
  template <typename F>
  void run(benchmark::State& state, std::int64_t elements, F&& launch) {
    profile::KernelRecord last;
    for (auto _ : state) {
      device->reset_profile();
      last = launch();
      benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * elements);
    state.counters["sim_elem_per_s"] = benchmark::Counter(
        static_cast<double>(elements), benchmark::Counter::kIsIterationInvariantRate);
    const double cycles = static_cast<double>(std::max<std::uint64_t>(last.cycles, 1));
    for (const char* slot : {"load", "spu", "vpu", "store"}) {
      const auto it = last.metrics.find(fmt::format("slot.{}.utilisation", slot));
      if (it != last.metrics.end()) state.counters[fmt::format("slot_{}", slot)] = it->second;
    }
    const double bw = device->spec().global().bandwidth_bytes_per_cycle.value;
    state.counters["mem_bw"] =
        static_cast<double>(last.bytes_read + last.bytes_written) / (cycles * bw);
    const auto mme = last.metrics.find("mme.utilisation");
    if (mme != last.metrics.end()) state.counters["mme_util"] = mme->second;
    state.counters["modeled_us"] = device->spec().seconds_from_cycles(cycles) * 1e6;
  }
};

constexpr std::int64_t k16M = 16 * 1024 * 1024;

void BM_Add_f32_16M(benchmark::State& state) {
  Bench b;
  const Shape shape{4096, 4096};
  const DeviceTensor x = b.tensor(DType::f32, shape);
  const DeviceTensor y = b.tensor(DType::f32, shape);
  const DeviceTensor out = b.tensor(DType::f32, shape);
  b.run(state, k16M, [&] { return tpc::ops::add(b.rt, x, y, out); });
}
BENCHMARK(BM_Add_f32_16M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PlainLoopAdd_f32_16M(benchmark::State& state) {
  std::vector<float> x(k16M, 1.0f), y(k16M, 2.0f), out(k16M);
  for (auto _ : state) {
    for (std::int64_t i = 0; i < k16M; ++i) out[i] = x[i] + y[i];
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * k16M);
}
BENCHMARK(BM_PlainLoopAdd_f32_16M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Add_bf16_broadcast(benchmark::State& state) {
  Bench b;
  const Shape shape{1024, 4096};
  const DeviceTensor x = b.tensor(DType::bf16, shape);
  const DeviceTensor bias = b.tensor(DType::bf16, Shape{1024});
  const DeviceTensor out = b.tensor(DType::bf16, shape);
  b.run(state, shape.element_count(), [&] { return tpc::ops::add(b.rt, x, bias, out); });
}
BENCHMARK(BM_Add_bf16_broadcast)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Relu_f32_16M(benchmark::State& state) {
  Bench b;
  const DeviceTensor x = b.tensor(DType::f32, Shape{k16M});
  const DeviceTensor out = b.tensor(DType::f32, Shape{k16M});
  b.run(state, k16M, [&] { return tpc::ops::relu(b.rt, x, out); });
}
BENCHMARK(BM_Relu_f32_16M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Gelu_f32_4M(benchmark::State& state) {
  Bench b;
  const Shape shape{4 * 1024 * 1024};
  const DeviceTensor x = b.tensor(DType::f32, shape, 3.0f);
  const DeviceTensor out = b.tensor(DType::f32, shape);
  b.run(state, shape.element_count(), [&] { return tpc::ops::gelu(b.rt, x, out); });
}
BENCHMARK(BM_Gelu_f32_4M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Softmax_f32_1024x1000(benchmark::State& state) {
  Bench b;
  const Shape shape{1000, 1024};  // 1024 rows of 1000 classes, softmax over dimension 0
  const DeviceTensor x = b.tensor(DType::f32, shape, 5.0f);
  const DeviceTensor out = b.tensor(DType::f32, shape);
  b.run(state, shape.element_count(), [&] { return tpc::ops::softmax(b.rt, x, out, 0); });
}
BENCHMARK(BM_Softmax_f32_1024x1000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ReduceSum_f32_rows(benchmark::State& state) {
  Bench b;
  const Shape shape{1000, 1024};
  const DeviceTensor x = b.tensor(DType::f32, shape);
  const DeviceTensor out = b.tensor(DType::f32, Shape{1, 1024});
  b.run(state, shape.element_count(), [&] { return tpc::ops::reduce_sum(b.rt, x, out, {0}); });
}
BENCHMARK(BM_ReduceSum_f32_rows)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_MaxPool3x3s2_f32_56x56x64x8(benchmark::State& state) {
  Bench b;
  const Shape in = Shape::nhwc(8, 56, 56, 64);
  tpc::kernels::Pool2dParams p;
  p.kernel[0] = p.kernel[1] = 3;
  p.strides[0] = p.strides[1] = 2;
  for (auto& pad : p.pads) pad = 1;
  const DeviceTensor x = b.tensor(DType::f32, in);
  const DeviceTensor out = b.tensor(DType::f32, tpc::ops::pool2d_output_shape(in, p));
  b.run(state, in.element_count(), [&] { return tpc::ops::max_pool_2d(b.rt, x, out, p); });
}
BENCHMARK(BM_MaxPool3x3s2_f32_56x56x64x8)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_LayerNorm_bf16_512x768(benchmark::State& state) {
  Bench b;
  const Shape shape{768, 512};
  const DeviceTensor x = b.tensor(DType::bf16, shape);
  const DeviceTensor scale = b.tensor(DType::bf16, Shape{768});
  const DeviceTensor bias = b.tensor(DType::bf16, Shape{768});
  const DeviceTensor out = b.tensor(DType::bf16, shape);
  b.run(state, shape.element_count(),
        [&] { return tpc::ops::layer_norm(b.rt, x, scale, &bias, out, 0); });
}
BENCHMARK(BM_LayerNorm_bf16_512x768)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Transpose_NCHW_to_NHWC_f32(benchmark::State& state) {
  Bench b;
  const Shape in = Shape::nchw(8, 64, 56, 56);  // {W, H, C, N}
  const DeviceTensor x = b.tensor(DType::f32, in);
  const DeviceTensor out = b.tensor(DType::f32, Shape::nhwc(8, 56, 56, 64));
  b.run(state, in.element_count(), [&] { return tpc::ops::transpose(b.rt, x, out, {2, 0, 1, 3}); });
}
BENCHMARK(BM_Transpose_NCHW_to_NHWC_f32)->Unit(benchmark::kMillisecond)->UseRealTime();

// A network input: three channels, so each output vector holds three lanes of a pixel.
void BM_Transpose_NCHW_to_NHWC_f32_3ch(benchmark::State& state) {
  Bench b;
  const Shape in = Shape::nchw(1, 3, 224, 224);
  const DeviceTensor x = b.tensor(DType::f32, in);
  const DeviceTensor out = b.tensor(DType::f32, Shape::nhwc(1, 224, 224, 3));
  b.run(state, in.element_count(), [&] { return tpc::ops::transpose(b.rt, x, out, {2, 0, 1, 3}); });
}
BENCHMARK(BM_Transpose_NCHW_to_NHWC_f32_3ch)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Gemm_1024cubed(benchmark::State& state) {
  Bench b;
  const auto dtype = state.range(0) == 0 ? DType::f32 : DType::bf16;
  const Shape square{1024, 1024};
  const DeviceTensor a = b.tensor(dtype, square);
  const DeviceTensor c = b.tensor(dtype, square);
  const DeviceTensor out = b.tensor(dtype, square);
  state.SetLabel(std::string(dtype_name(dtype)));
  b.run(state, 1024 * 1024, [&] { return tpc::ops::gemm(b.rt, a, c, out); });
}
BENCHMARK(BM_Gemm_1024cubed)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Conv3x3_f32_56x56x64x8(benchmark::State& state) {
  Bench b;
  const Shape in = Shape::nhwc(8, 56, 56, 64);
  tpc::MmeConvParams p;
  for (auto& pad : p.pads) pad = 1;
  const Shape w{64, 64, 3, 3};  // HWIO {M, C, kW, kH}
  const DeviceTensor x = b.tensor(DType::f32, in);
  const DeviceTensor wt = b.tensor(DType::f32, w);
  const DeviceTensor out = b.tensor(DType::f32, tpc::mme_conv2d_output_shape(in, w, p));
  b.run(state, in.element_count(), [&] { return tpc::ops::conv2d(b.rt, x, wt, nullptr, out, p); });
}
BENCHMARK(BM_Conv3x3_f32_56x56x64x8)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
