/* A sigmoid through the TPU's lookup table (spec 002, "bmk1880 tpu lut"): int8 inputs x stand
 * for x / 16; the table maps each of the 256 values to round(255 * sigmoid(x / 16)) as u8, and
 * is copied to every NPU lane. Built as C11. */
#include <bmkernel/bm1880/bmkernel_1880.h>
#include <libbmruntime/bmruntime.h>
#include <libbmruntime/bmruntime_bmkernel.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  bmctx_t ctx;
  void* bk;
  if (bm_init(0, &ctx) != BM_SUCCESS || bmruntime_bmkernel_create(ctx, &bk) != BM_SUCCESS) {
    fprintf(stderr, "init failed: %s\n", tessera_bm_last_error());
    return 1;
  }
  const bmk1880_chip_info_t info = bmk1880_chip_info();
  const int npu = (int)info.npu_num;
  /* Table entry e answers the index byte e, i.e. the int8 value (int8_t)e. */
  uint8_t entries[256];
  for (int e = 0; e < 256; ++e) {
    const double x = (double)(int8_t)e / 16.0;
    entries[e] = (uint8_t)lround(255.0 / (1.0 + exp(-x)));
  }
  uint8_t* table = malloc((size_t)npu * 256);
  for (int lane = 0; lane < npu; ++lane)
    for (int e = 0; e < 256; ++e) table[lane * 256 + e] = entries[e];

  enum { C = 64, H = 8, W = 8, COUNT = C * H * W };
  int8_t in[COUNT];
  uint8_t out[COUNT];
  for (int i = 0; i < COUNT; ++i) in[i] = (int8_t)(i % 256 - 128);

  bmmem_device_t g_table = bmmem_device_alloc_raw(ctx, (size_t)npu * 256);
  bmmem_device_t g_in = bmmem_device_alloc_raw(ctx, COUNT);
  bmmem_device_t g_out = bmmem_device_alloc_raw(ctx, COUNT);
  bm_memcpy_s2d(ctx, g_table, table);
  bm_memcpy_s2d(ctx, g_in, (uint8_t*)in);

  tensor_lmem* tl_table = bmk1880_tl_alloc(bk, shape_t4(1, npu, 16, 16), FMT_U8, CTRL_AL);
  tensor_lmem* tl_in = bmk1880_tl_alloc(bk, shape_t4(1, C, H, W), FMT_I8, CTRL_AL);
  tensor_lmem* tl_out = bmk1880_tl_alloc(bk, shape_t4(1, C, H, W), FMT_U8, CTRL_AL);
  bmk1880_gdma_load(bk, tl_table, bmmem_device_addr(ctx, g_table), CTRL_NULL);
  bmk1880_gdma_load(bk, tl_in, bmmem_device_addr(ctx, g_in), CTRL_NULL);
  bmk1880_lut_param_t p = {tl_out, tl_in, tl_table};
  if (!bmk1880_tpu_lut(bk, &p)) {
    fprintf(stderr, "lut: %s\n", tessera_bm_last_error());
    return 1;
  }
  bmk1880_gdma_store(bk, tl_out, bmmem_device_addr(ctx, g_out), CTRL_NULL);
  bmk1880_tl_free(bk, tl_out);
  bmk1880_tl_free(bk, tl_in);
  bmk1880_tl_free(bk, tl_table);
  bmruntime_bmkernel_submit(ctx);
  bm_memcpy_d2s(ctx, out, g_out);

  int wrong = 0;
  double worst = 0;
  for (int i = 0; i < COUNT; ++i) {
    wrong += out[i] != entries[(uint8_t)in[i]];
    const double exact = 1.0 / (1.0 + exp(-in[i] / 16.0));
    const double err = fabs(out[i] / 255.0 - exact);
    if (err > worst) worst = err;
  }
  printf("sigmoid of %d int8 values by LUT: %d differ from the table, worst error %.4f\n", COUNT,
         wrong, worst);
  printf("sigmoid(-2) = %.3f, sigmoid(0) = %.3f, sigmoid(2) = %.3f\n",
         entries[(uint8_t)(int8_t)-32] / 255.0, entries[0] / 255.0, entries[32] / 255.0);
  free(table);
  bmmem_device_free(ctx, g_table);
  bmmem_device_free(ctx, g_in);
  bmmem_device_free(ctx, g_out);
  bmruntime_bmkernel_destroy(ctx);
  bm_exit(ctx);
  return wrong == 0 && worst < 0.01 ? 0 : 1;
}
