/* A BMKernel convolution with GDMA in and out (spec 002, "BMKernel Library"): ifmap, weight and
 * bias go from device memory into lmem, the TPU convolves (3x3, pad 1, bias, ReLU, right shift
 * 6), and the ofmap goes back; checked against a plain C convolution. Built as C11. */
#include <bmkernel/bm1880/bmkernel_1880.h>
#include <libbmruntime/bmruntime.h>
#include <libbmruntime/bmruntime_bmkernel.h>

#include <stdio.h>
#include <string.h>

enum { N = 1, CI = 16, CO = 32, H = 16, W = 16, K = 3 };

static int8_t ifmap[N * CI * H * W], weight[CO * CI * K * K], ofmap[N * CO * H * W];
static int16_t bias[CO];

static int8_t reference(int co, int y, int x) {
  int acc = bias[co];
  for (int ci = 0; ci < CI; ++ci)
    for (int ky = 0; ky < K; ++ky)
      for (int kx = 0; kx < K; ++kx) {
        const int iy = y + ky - 1, ix = x + kx - 1;
        if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
        acc += ifmap[(ci * H + iy) * W + ix] * weight[((co * CI + ci) * K + ky) * K + kx];
      }
  if (acc < 0) acc = 0;                 /* ReLU after the bias, before the shift */
  acc = (acc + (1 << 5)) >> 6;          /* right shift 6, rounding half up */
  return (int8_t)(acc > 127 ? 127 : acc);
}

static bmmem_device_t upload(bmctx_t ctx, const void* data, size_t bytes) {
  bmmem_device_t m = bmmem_device_alloc_raw(ctx, bytes);
  if (m) bm_memcpy_s2d(ctx, m, (uint8_t*)data);
  return m;
}

int main(void) {
  for (int i = 0; i < N * CI * H * W; ++i) ifmap[i] = (int8_t)((i * 7) % 23 - 11);
  for (int i = 0; i < CO * CI * K * K; ++i) weight[i] = (int8_t)((i * 5) % 9 - 4);
  for (int i = 0; i < CO; ++i) bias[i] = (int16_t)(i * 40 - 600);

  /* The weight in gmem as (1, CO, K*K, CI) and the bias as low bytes then high bytes
   * (spec 002 "bmk1880 tpu conv"). */
  static int8_t wt_gmem[CO * K * K * CI];
  static uint8_t bias_gmem[2 * CO];
  for (int co = 0; co < CO; ++co)
    for (int ci = 0; ci < CI; ++ci)
      for (int t = 0; t < K * K; ++t) wt_gmem[(co * K * K + t) * CI + ci] = weight[(co * CI + ci) * K * K + t];
  for (int co = 0; co < CO; ++co) {
    bias_gmem[co] = (uint8_t)(bias[co] & 0xff);
    bias_gmem[CO + co] = (uint8_t)((bias[co] >> 8) & 0xff);
  }

  bmctx_t ctx;
  void* bk;
  if (bm_init(0, &ctx) != BM_SUCCESS || bmruntime_bmkernel_create(ctx, &bk) != BM_SUCCESS) {
    fprintf(stderr, "init failed: %s\n", tessera_bm_last_error());
    return 1;
  }
  bmmem_device_t g_in = upload(ctx, ifmap, sizeof ifmap);
  bmmem_device_t g_w = upload(ctx, wt_gmem, sizeof wt_gmem);
  bmmem_device_t g_b = upload(ctx, bias_gmem, sizeof bias_gmem);
  bmmem_device_t g_out = bmmem_device_alloc_raw(ctx, sizeof ofmap);

  tensor_lmem* tl_in = bmk1880_tl_alloc(bk, shape_t4(N, CI, H, W), FMT_I8, CTRL_AL);
  tensor_lmem* tl_w = bmk1880_tl_alloc(bk, shape_t4(1, CO, K * K, CI), FMT_I8, CTRL_NULL);
  tensor_lmem* tl_b = bmk1880_tl_alloc(bk, shape_t4(2, CO, 1, 1), FMT_I8, CTRL_NULL);
  tensor_lmem* tl_out = bmk1880_tl_alloc(bk, shape_t4(N, CO, H, W), FMT_I8, CTRL_AL);
  bmk1880_gdma_load(bk, tl_in, bmmem_device_addr(ctx, g_in), CTRL_NULL);
  bmk1880_gdma_load(bk, tl_w, bmmem_device_addr(ctx, g_w), CTRL_NULL);
  bmk1880_gdma_load(bk, tl_b, bmmem_device_addr(ctx, g_b), CTRL_NULL);
  tensor_lmem w = *tl_w;
  w.shape = shape_t4(CI, CO, K, K); /* the logical shape conv takes */

  bmk1880_conv_param_t p;
  memset(&p, 0, sizeof p);
  p.ofmap = tl_out;
  p.ifmap = tl_in;
  p.weight = &w;
  p.bias = tl_b;
  p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
  p.stride_h = p.stride_w = 1;
  p.dilation_h = p.dilation_w = 1;
  p.relu_enable = true;
  p.rshift_width = 6;
  if (!bmk1880_tpu_conv(bk, &p)) {
    fprintf(stderr, "conv: %s\n", tessera_bm_last_error());
    return 1;
  }
  bmk1880_gdma_store(bk, tl_out, bmmem_device_addr(ctx, g_out), CTRL_NULL);
  bmk1880_tl_free(bk, tl_out);
  bmk1880_tl_free(bk, tl_b);
  bmk1880_tl_free(bk, tl_w);
  bmk1880_tl_free(bk, tl_in);
  bmruntime_bmkernel_submit(ctx);
  if (tessera_bm_last_error_kind() != TESSERA_BM_OK) {
    fprintf(stderr, "submit: %s\n", tessera_bm_last_error());
    return 1;
  }
  bm_memcpy_d2s(ctx, (uint8_t*)ofmap, g_out);

  int wrong = 0;
  for (int co = 0; co < CO; ++co)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) wrong += ofmap[(co * H + y) * W + x] != reference(co, y, x);
  printf("conv %dx%dx%d -> %dx%dx%d (3x3, pad 1, bias, relu, >>6): %d of %d outputs differ\n", CI,
         H, W, CO, H, W, wrong, CO * H * W);
  bmmem_device_free(ctx, g_in);
  bmmem_device_free(ctx, g_w);
  bmmem_device_free(ctx, g_b);
  bmmem_device_free(ctx, g_out);
  bmruntime_bmkernel_destroy(ctx);
  bm_exit(ctx);
  return wrong == 0 ? 0 : 1;
}
