/* A BMNNSDK program in C against the installed <libbmruntime/...> and <bmkernel/...> headers:
 * a ReLU on the BM1880's TPU with GDMA in and out. */
#include <bmkernel/bm1880/bmkernel_1880.h>
#include <libbmruntime/bmruntime.h>
#include <libbmruntime/bmruntime_bmkernel.h>

#include <stdio.h>

int main(void) {
  bmctx_t ctx;
  void* bk;
  if (bm_init(0, &ctx) != BM_SUCCESS || bmruntime_bmkernel_create(ctx, &bk) != BM_SUCCESS) {
    fprintf(stderr, "%s\n", tessera_bm_last_error());
    return 1;
  }
  int8_t x[64];
  uint8_t y[64];
  for (int i = 0; i < 64; ++i) x[i] = (int8_t)(i - 32);
  bmmem_device_t gx = bmmem_device_alloc_raw(ctx, 64), gy = bmmem_device_alloc_raw(ctx, 64);
  bm_memcpy_s2d(ctx, gx, (uint8_t*)x);
  tensor_lmem* a = bmk1880_tl_alloc(bk, shape_t4(1, 4, 4, 4), FMT_I8, CTRL_AL);
  tensor_lmem* r = bmk1880_tl_alloc(bk, shape_t4(1, 4, 4, 4), FMT_I8, CTRL_AL);
  bmk1880_gdma_load(bk, a, bmmem_device_addr(ctx, gx), CTRL_NULL);
  bmk1880_relu_param_t p = {r, a};
  bmk1880_tpu_relu(bk, &p);
  bmk1880_gdma_store(bk, r, bmmem_device_addr(ctx, gy), CTRL_NULL);
  bmk1880_tl_free(bk, r);
  bmk1880_tl_free(bk, a);
  bmruntime_bmkernel_submit(ctx);
  bm_memcpy_d2s(ctx, y, gy);
  int wrong = 0;
  for (int i = 0; i < 64; ++i) wrong += (int8_t)y[i] != (i < 32 ? 0 : i - 32);
  bmruntime_bmkernel_destroy(ctx);
  bm_exit(ctx);
  printf("bm consumer: %d wrong\n", wrong);
  return wrong;
}
