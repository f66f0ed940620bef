// A network compiled by hand with BMKernel, saved as a bmodel file, registered with
// bmnet_register_bmodel and run (spec 002, "BMNet"): conv 3x3 (8 -> 16 channels, pad 1, bias,
// ReLU, >> 5) then 2x2 max pooling, on a (1, 8, 16, 16) int8 input. The command buffer's GDMA
// addresses are offsets into the neuron memory (CTRL_NEURON) and the weight memory
// (CTRL_WEIGHT); registering the model relocates them. The run is checked against the same two
// layers executed one by one in a plain BMKernel program.
#include <bmkernel/bm1880/bmkernel_1880.h>
#include <libbmruntime/bmruntime.h>
#include <libbmruntime/bmruntime_bmkernel.h>
#include <libbmruntime/bmruntime_bmnet.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/targets/bm/api/bmodel.h"

namespace {

constexpr int CI = 8, CO = 16, H = 16, W = 16, K = 3;
constexpr std::uint64_t kWeightBytes = CO * K * K * CI, kBiasOffset = kWeightBytes;
constexpr std::uint64_t kInput = CI * H * W, kOutputOffset = 2048, kOutput = CO * (H / 2) * (W / 2);

// Records the network into context bk; gdma addresses are relative when `relative`, else added
// to the given bases (a plain BMKernel run of the same layers).
void record(void* bk, std::uint64_t neuron, std::uint64_t weight, ctrl_t nflag, ctrl_t wflag) {
  tensor_lmem* in = bmk1880_tl_alloc(bk, shape_t4(1, CI, H, W), FMT_I8, CTRL_AL);
  tensor_lmem* w = bmk1880_tl_alloc(bk, shape_t4(1, CO, K * K, CI), FMT_I8, CTRL_NULL);
  tensor_lmem* b = bmk1880_tl_alloc(bk, shape_t4(2, CO, 1, 1), FMT_I8, CTRL_NULL);
  tensor_lmem* conv = bmk1880_tl_alloc(bk, shape_t4(1, CO, H, W), FMT_I8, CTRL_AL);
  tensor_lmem* pool = bmk1880_tl_alloc(bk, shape_t4(1, CO, H / 2, W / 2), FMT_I8, CTRL_AL);
  bmk1880_gdma_load(bk, in, neuron, nflag);
  bmk1880_gdma_load(bk, w, weight, wflag);
  bmk1880_gdma_load(bk, b, weight + kBiasOffset, wflag);
  tensor_lmem wl = *w;
  wl.shape = shape_t4(CI, CO, K, K);
  bmk1880_conv_param_t c{conv, in, &wl, b, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, true, 5};
  bmk1880_tpu_conv(bk, &c);
  bmk1880_max_pooling_param_t p{pool, conv, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2};
  bmk1880_tpu_max_pooling(bk, &p);
  bmk1880_gdma_store(bk, pool, neuron + kOutputOffset, nflag);
  for (tensor_lmem* t : {pool, conv, b, w, in}) bmk1880_tl_free(bk, t);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "bm_example.bmodel";
  std::vector<std::uint8_t> weight(kWeightBytes + 2 * CO), x(kInput), y(kOutput), want(kOutput);
  for (std::uint64_t i = 0; i < kWeightBytes; ++i) weight[i] = static_cast<std::uint8_t>(i * 5 % 7 - 3);
  for (int co = 0; co < CO; ++co) {
    const int bias = co * 16 - 100;
    weight[kBiasOffset + co] = static_cast<std::uint8_t>(bias & 0xff);
    weight[kBiasOffset + CO + co] = static_cast<std::uint8_t>((bias >> 8) & 0xff);
  }
  for (std::uint64_t i = 0; i < kInput; ++i) x[i] = static_cast<std::uint8_t>(i * 11 % 31 - 15);

  // Compile: record with relative addresses into a standalone context's cmdbuf.
  std::vector<u8> buf(1 << 16);
  bmk1880_info_t info{1880, buf.data(), static_cast<u32>(buf.size())};
  void* bk = bmk1880_register(&info);
  record(bk, 0, 0, CTRL_NEURON, CTRL_WEIGHT);
  u32 size = 0;
  u8* cmdbuf = bmk1880_acquire_cmdbuf(bk, &size);
  if (!cmdbuf) {
    std::fprintf(stderr, "%s\n", tessera_bm_last_error());
    return 1;
  }
  tessera::bm::BModel model;
  model.name = "conv_pool";
  model.weight = weight;
  tessera::bm::BModelStage stage;
  stage.input_shape = shape_t4(1, CI, H, W);
  stage.output_shape = shape_t4(1, CO, H / 2, W / 2);
  stage.input_size = kInput;
  stage.output_offset = kOutputOffset;
  stage.output_size = kOutput;
  stage.neuron_size = kOutputOffset + kOutput;
  stage.cmdbuf.assign(cmdbuf, cmdbuf + size);
  model.stages.push_back(stage);
  tessera::bm::save_bmodel(model, path);
  bmk1880_cleanup(bk);
  std::printf("saved %s: %u bytes of commands, %zu bytes of weights\n", path.c_str(), size,
              weight.size());

  // Run: register the file and infer.
  bmctx_t ctx;
  bm_init(0, &ctx);
  bmnet_t net;
  std::vector<char> name(path.begin(), path.end());
  name.push_back('\0');
  if (bmnet_register_bmodel(ctx, name.data(), &net) != BM_SUCCESS ||
      bmnet_set_input_shape(net, shape_t4(1, CI, H, W)) != BM_SUCCESS ||
      bmnet_inference(net, x.data(), y.data()) != BM_SUCCESS) {
    std::fprintf(stderr, "%s\n", tessera_bm_last_error());
    return 1;
  }
  bmnet_output_info_t out;
  bmnet_get_output_info(net, &out);
  std::printf("output %s: (%u, %u, %u, %u), %zu bytes\n", out.name_array[0], out.shape_array[0].n,
              out.shape_array[0].c, out.shape_array[0].h, out.shape_array[0].w, out.output_size);
  bmnet_cleanup(net);

  // The same layers as a plain BMKernel program on absolute addresses.
  void* direct;
  bmruntime_bmkernel_create(ctx, &direct);
  bmmem_device_t neuron = bmmem_device_alloc_raw(ctx, kOutputOffset + kOutput);
  bmmem_device_t wmem = bmmem_device_alloc_raw(ctx, weight.size());
  bmmem_device_t in_view = bmmem_device_prealloc_raw(ctx, neuron, 0, kInput);
  bmmem_device_t out_view = bmmem_device_prealloc_raw(ctx, neuron, kOutputOffset, kOutput);
  bm_memcpy_s2d(ctx, wmem, weight.data());
  bm_memcpy_s2d(ctx, in_view, x.data());
  record(direct, bmmem_device_addr(ctx, neuron), bmmem_device_addr(ctx, wmem), CTRL_NULL, CTRL_NULL);
  bmruntime_bmkernel_submit(ctx);
  bm_memcpy_d2s(ctx, want.data(), out_view);
  const bool same = y == want;
  std::printf("bmnet inference %s the layer-by-layer BMKernel run\n", same ? "matches" : "DIFFERS FROM");
  bmruntime_bmkernel_destroy(ctx);
  bmmem_device_free(ctx, wmem);
  bmmem_device_free(ctx, neuron);
  bm_exit(ctx);
  std::remove(path.c_str());
  return same ? 0 : 1;
}
