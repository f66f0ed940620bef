// The bm target: a 3x3 int8 convolution layer (C in = C out, 16x16 tiles of a 64x64 feature
// map, pad 1, ReLU, GDMA in and out) recorded with BMKernel and run on the bm1880 preset, in
// serial mode and with two streams double-buffering the tiles. Reports the modeled cycles,
// each engine's utilisation and the fraction of the 1 TOPS int8 peak (mac_util), and the host
// time of a submit (the simulator's speed).
#include <benchmark/benchmark.h>

#include <bmkernel/bm1880/bmkernel_1880.h>
#include <libbmruntime/bmruntime.h>
#include <libbmruntime/bmruntime_bmkernel.h>

#include <cstring>
#include <vector>

#include "tessera/targets/bm/api/bm.h"

namespace {

void conv_layer(benchmark::State& state) {
  const int C = static_cast<int>(state.range(0));
  const bool streams = state.range(1) != 0;
  constexpr int T = 16, tiles = 16;  // 16 tiles of 16x16 (a 64x64 map)
  bmctx_t ctx;
  void* bk;
  bm_init(0, &ctx);
  bmruntime_bmkernel_create(ctx, &bk);
  const std::size_t tile = static_cast<std::size_t>(C * T * T);
  std::vector<std::uint8_t> x(tile * tiles, 3), w(static_cast<std::size_t>(C * C * 9), 1);
  bmmem_device_t gx = bmmem_device_alloc_raw(ctx, x.size()), gy = bmmem_device_alloc_raw(ctx, x.size());
  bmmem_device_t gw = bmmem_device_alloc_raw(ctx, w.size());
  bm_memcpy_s2d(ctx, gx, x.data());
  bm_memcpy_s2d(ctx, gw, w.data());
  tessera::runtime::Device& dev = tessera::bm::device_of(ctx);
  tensor_lmem* tw = bmk1880_tl_alloc(bk, shape_t4(1, C, 9, C), FMT_I8, CTRL_NULL);
  tensor_lmem *in[2], *out[2];
  for (int s = 0; s < 2; ++s) {
    in[s] = bmk1880_tl_alloc(bk, shape_t4(1, C, T, T), FMT_I8, CTRL_AL);
    out[s] = bmk1880_tl_alloc(bk, shape_t4(1, C, T, T), FMT_I8, CTRL_AL);
  }
  tensor_lmem wl = *tw;
  wl.shape = shape_t4(C, C, 3, 3);
  tessera::profile::KernelRecord rec;
  for (auto _ : state) {
    bmk1880_gdma_load(bk, tw, bmmem_device_addr(ctx, gw), CTRL_NULL);
    if (streams) bmk1880_create_streams(bk, 2);
    for (int t = 0; t < tiles; ++t) {
      const int s = t % 2;
      if (streams) bmk1880_set_stream(bk, s);
      bmk1880_gdma_load(bk, in[s], bmmem_device_addr(ctx, gx) + t * tile, CTRL_NULL);
      bmk1880_conv_param_t p{out[s], in[s], &wl, nullptr, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, true, 6};
      bmk1880_tpu_conv(bk, &p);
      bmk1880_gdma_store(bk, out[s], bmmem_device_addr(ctx, gy) + t * tile, CTRL_NULL);
    }
    if (streams) bmk1880_destroy_streams(bk);
    bmruntime_bmkernel_submit(ctx);
    rec = dev.profile().kernels.back();
  }
  if (tessera_bm_last_error_kind() != TESSERA_BM_OK) state.SkipWithError(tessera_bm_last_error());
  state.counters["cycles"] = static_cast<double>(rec.cycles);
  state.counters["modeled_us"] = static_cast<double>(rec.cycles) / dev.spec().clock_hz.value * 1e6;
  state.counters["tpu_util"] = rec.metrics["tpu.utilisation"];
  state.counters["gdma_util"] = rec.metrics["gdma.utilisation"];
  state.counters["mac_util"] = rec.metrics["mac.utilisation"];
  bmruntime_bmkernel_destroy(ctx);
  bm_exit(ctx);
}
BENCHMARK(conv_layer)
    ->ArgsProduct({{16, 32, 64}, {0, 1}})
    ->ArgNames({"C", "streams"})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
