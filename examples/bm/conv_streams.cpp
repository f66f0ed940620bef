// The conv of conv.c over 8 tiles of a larger feature map, twice: in serial mode, then with two
// streams (spec 002, "bmk1880 create streams"), one per set of lmem buffers, so that the GDMA
// loads the next tile while the TPU convolves this one. Prints the cycles and each engine's
// utilisation from the profile; `conv_streams trace.json` also writes the Chrome trace of the
// streamed run, where the overlap shows. The program is BMNNSDK code; only the profile read-out
// uses Tessera's C++ API.
#include <bmkernel/bm1880/bmkernel_1880.h>
#include <libbmruntime/bmruntime.h>
#include <libbmruntime/bmruntime_bmkernel.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "tessera/profile/writers.h"
#include "tessera/targets/bm/api/bm.h"

namespace {

constexpr int kTiles = 8, C = 32, H = 16, W = 16, K = 3;

struct Result {
  std::vector<std::uint8_t> out;
  tessera::profile::KernelRecord record;
  std::string trace;
};

Result run(bool streams) {
  bmctx_t ctx;
  void* bk;
  bm_init(0, &ctx);
  bmruntime_bmkernel_create(ctx, &bk);
  tessera::runtime::Device& dev = tessera::bm::device_of(ctx);
  dev.set_trace_enabled(true);

  std::vector<std::uint8_t> x(kTiles * C * H * W), w(C * K * K * C);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::uint8_t>((i * 7) % 23 - 11);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::uint8_t>((i * 5) % 9 - 4);
  bmmem_device_t gx = bmmem_device_alloc_raw(ctx, x.size());
  bmmem_device_t gy = bmmem_device_alloc_raw(ctx, x.size());
  bmmem_device_t gw = bmmem_device_alloc_raw(ctx, w.size());
  bm_memcpy_s2d(ctx, gx, x.data());
  bm_memcpy_s2d(ctx, gw, w.data());

  tensor_lmem* tl_w = bmk1880_tl_alloc(bk, shape_t4(1, C, K * K, C), FMT_I8, CTRL_NULL);
  bmk1880_gdma_load(bk, tl_w, bmmem_device_addr(ctx, gw), CTRL_NULL);
  tensor_lmem weight = *tl_w;
  weight.shape = shape_t4(C, C, K, K);
  tensor_lmem *in[2], *out[2];
  for (int s = 0; s < 2; ++s) {
    in[s] = bmk1880_tl_alloc(bk, shape_t4(1, C, H, W), FMT_I8, CTRL_AL);
    out[s] = bmk1880_tl_alloc(bk, shape_t4(1, C, H, W), FMT_I8, CTRL_AL);
  }
  if (streams) bmk1880_create_streams(bk, 2);
  const std::uint64_t tile = C * H * W;
  for (int t = 0; t < kTiles; ++t) {
    const int s = t % 2;
    if (streams) bmk1880_set_stream(bk, s);
    bmk1880_gdma_load(bk, in[s], bmmem_device_addr(ctx, gx) + t * tile, CTRL_NULL);
    bmk1880_conv_param_t p;
    std::memset(&p, 0, sizeof p);
    p.ofmap = out[s];
    p.ifmap = in[s];
    p.weight = &weight;
    p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
    p.stride_h = p.stride_w = p.dilation_h = p.dilation_w = 1;
    p.relu_enable = true;
    p.rshift_width = 5;
    bmk1880_tpu_conv(bk, &p);
    bmk1880_gdma_store(bk, out[s], bmmem_device_addr(ctx, gy) + t * tile, CTRL_NULL);
  }
  if (streams) bmk1880_destroy_streams(bk);
  for (int s = 1; s >= 0; --s) {
    bmk1880_tl_free(bk, out[s]);
    bmk1880_tl_free(bk, in[s]);
  }
  bmk1880_tl_free(bk, tl_w);
  bmruntime_bmkernel_submit(ctx);
  Result r;
  r.out.resize(x.size());
  bm_memcpy_d2s(ctx, r.out.data(), gy);
  r.record = dev.profile().kernels.back();
  r.trace = tessera::profile::chrome_trace(dev.profile());
  bmruntime_bmkernel_destroy(ctx);
  bm_exit(ctx);
  return r;
}

void report(const char* what, const tessera::profile::KernelRecord& r) {
  std::printf("%-8s %9llu cycles  tpu %5.1f%%  gdma %5.1f%%  MACs %5.1f%% of peak\n", what,
              static_cast<unsigned long long>(r.cycles), 100 * r.metrics.at("tpu.utilisation"),
              100 * r.metrics.at("gdma.utilisation"), 100 * r.metrics.at("mac.utilisation"));
}

}  // namespace

int main(int argc, char** argv) {
  const Result serial = run(false), streamed = run(true);
  if (tessera_bm_last_error_kind() != TESSERA_BM_OK) {
    std::fprintf(stderr, "%s\n", tessera_bm_last_error());
    return 1;
  }
  report("serial", serial.record);
  report("streams", streamed.record);
  const bool same = serial.out == streamed.out;
  std::printf("results %s; streams take %.2fx the serial cycles\n", same ? "identical" : "DIFFER",
              static_cast<double>(streamed.record.cycles) / static_cast<double>(serial.record.cycles));
  if (argc > 1) tessera::profile::write_text_file(argv[1], streamed.trace);
  return same && streamed.record.cycles < serial.record.cycles ? 0 : 1;
}
