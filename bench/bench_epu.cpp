// The epu target's speed (issue 13 item 6): a 3x3 convolution over a 1024x1024x16 int16
// (FixedPoint16<4>) image on chimera-q16, each channel with its own staged 3x3 weights, the
// image streamed DDR -> OCM in 16-row bands and flowed into the array 64 tiles at a time,
// against a plain C++ loop doing the same fixed-point arithmetic on the host. The simulated
// run checks its output against the loop's once. Run: build/bench/bench_epu.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include <epu.hpp>

#include "tessera/runtime/device.h"

namespace {

using Fx = FixedPoint16<4>;
constexpr std::size_t C = 16, H = 1024, W = 1024, Band = 16;
typedef DdrTensor<Fx, 1, C, H + 2, W> DdrIn;  // a zero row above and below each channel
typedef DdrTensor<Fx, 1, C, H, W> DdrOut;
typedef OcmTensor<Fx, 1, C, Band + 2, W> OcmBand;
typedef OcmTensor<Fx, 1, C, Band, W> OcmOut;
typedef OcmTensor<Fx, 1, 1, Band, W> Roi;  // 64 tiles, 32 KiB per flow
typedef OcmTensor<Fx, 1, 1, 1, 12> Kernel;
typedef OcmTensor<char, 1, 1, 1, 12> KernelDesc;

std::int16_t pixel(std::size_t c, std::size_t r, std::size_t x) {
  return static_cast<std::int16_t>(((c * 31 + r * 7 + x * 13 + (r * x) % 29) % 256) * 16);
}
std::int16_t tap(std::size_t c, int k) { return static_cast<std::int16_t>(((static_cast<int>(c) * 5 + k * 3) % 9) - 4); }

// The plain loop: zero-padded planes, acc in 32 bits, rounded back to 4 fractional bits.
void host_conv(const std::vector<std::int16_t>& padded, std::vector<std::int16_t>& out) {
  const std::size_t PW = W + 2;
  for (std::size_t c = 0; c < C; ++c) {
    const std::int16_t* p = padded.data() + c * (H + 2) * PW;
    std::int16_t w[9];
    for (int k = 0; k < 9; ++k) w[k] = tap(c, k);
    for (std::size_t r = 0; r < H; ++r) {
      std::int16_t* o = out.data() + (c * H + r) * W;
      for (std::size_t x = 0; x < W; ++x) {
        std::int32_t acc = 0;
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx) acc += w[ky * 3 + kx] * p[(r + static_cast<std::size_t>(ky)) * PW + x + static_cast<std::size_t>(kx)];
        acc = (acc + 8) >> 4;
        o[x] = static_cast<std::int16_t>(acc < -32768 ? -32768 : (acc > 32767 ? 32767 : acc));
      }
    }
  }
}

std::vector<std::int16_t> host_input() {
  std::vector<std::int16_t> p(C * (H + 2) * (W + 2), 0);
  for (std::size_t c = 0; c < C; ++c)
    for (std::size_t r = 0; r < H; ++r)
      for (std::size_t x = 0; x < W; ++x) p[(c * (H + 2) + r + 1) * (W + 2) + x + 1] = pixel(c, r, x);
  return p;
}

struct EpuRun {
  std::unique_ptr<DdrIn> in = std::make_unique<DdrIn>();
  std::unique_ptr<DdrOut> out = std::make_unique<DdrOut>();
  EpuRun() {
    for (std::size_t c = 0; c < C; ++c)
      for (std::size_t r = 0; r < H; ++r)
        for (std::size_t x = 0; x < W; ++x) in->at(0, c, r + 1, x) = Fx::fromRaw(pixel(c, r, x));
  }
  std::uint64_t run() {
    MemAllocator ocm;
    OcmBand band;
    OcmOut outBand;
    Kernel weights[C];
    ocm.allocate(band);
    ocm.allocate(outBand);
    for (std::size_t c = 0; c < C; ++c) {
      ocm.allocate(weights[c]);
      for (int k = 0; k < 9; ++k) weights[c].data()[k] = Fx::fromRaw(tap(c, k));
    }
    qVar_t<Fx> x[Roi::NUM_TILES];
    for (std::size_t r = 0; r < H; r += Band) {
      memCpy(*in, band, 0, 0, r, 0);
      for (std::size_t c = 0; c < C; ++c) {
        fetchTilesInRoi<Roi, IteratorType::YX_BORDER>(band, x, 0, c, 1, 0);
        for (auto& tile : x) {
          BroadcastStream::stage<Kernel, KernelDesc>(weights[c]);
          qVar_t<Fx> input[1];
          input[0] = tile;
          tile = NN::convTileBlockFx16<Fx, 3>(input, 1);
        }
        writeTilesInRoi<Roi>(x, outBand, 0, c, 0, 0);
      }
      memCpy(outBand, *out, 0, 0, r, 0);
    }
    return tessera::epu::synchronize("conv3x3_1024x1024x16").cycles;
  }
};

void BM_HostLoop(benchmark::State& state) {
  const std::vector<std::int16_t> in = host_input();
  std::vector<std::int16_t> out(C * H * W);
  for (auto _ : state) {
    host_conv(in, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["pixels"] = static_cast<double>(C * H * W);
}

void BM_EpuSimulated(benchmark::State& state) {
  tessera::epu::set_device(tessera::runtime::Device::open("chimera-q16"));
  EpuRun epu;
  std::uint64_t cycles = 0;
  for (auto _ : state) cycles = epu.run();
  // Once: the simulated result equals the plain loop's.
  const std::vector<std::int16_t> in = host_input();
  std::vector<std::int16_t> want(C * H * W);
  host_conv(in, want);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) bad += epu.out->data()[i].raw != want[i];
  if (bad) state.SkipWithError("simulated output differs from the host loop");
  state.counters["modeled_cycles"] = static_cast<double>(cycles);
  state.counters["modeled_ms"] = static_cast<double>(cycles) / tessera::epu::device().spec().clock_hz.value * 1e3;
}

BENCHMARK(BM_HostLoop)->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK(BM_EpuSimulated)->Unit(benchmark::kMillisecond)->MinTime(0.5);

}  // namespace

BENCHMARK_MAIN();
