/* BM runtime round trip (spec 002, "BM Runtime Library"): system memory -> device memory ->
 * system memory, as a BMNNSDK program writes it. Built as C11. */
#include <libbmruntime/bmruntime.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  bmctx_t ctx;
  if (bm_init(0, &ctx) != BM_SUCCESS) {
    fprintf(stderr, "bm_init failed: %s\n", tessera_bm_last_error());
    return 1;
  }
  enum { SIZE = 1 << 16 };
  static uint8_t in[SIZE], out[SIZE];
  for (int i = 0; i < SIZE; ++i) in[i] = (uint8_t)(i * 31 + 7);

  bmshape_t shape = BM_TENSOR_INT8(1, 16, 64, 64);
  bmmem_device_t mem = bmmem_device_alloc(ctx, &shape);
  if (!mem) {
    fprintf(stderr, "bmmem_device_alloc failed: %s\n", tessera_bm_last_error());
    return 1;
  }
  printf("device memory: %zu bytes at 0x%llx\n", bmmem_device_size(ctx, mem),
         (unsigned long long)bmmem_device_addr(ctx, mem));
  if (bm_memcpy_s2d(ctx, mem, in) != BM_SUCCESS || bm_memcpy_d2s(ctx, out, mem) != BM_SUCCESS) {
    fprintf(stderr, "memcpy failed: %s\n", tessera_bm_last_error());
    return 1;
  }
  const int same = memcmp(in, out, SIZE) == 0;
  printf("round trip of %d bytes: %s\n", SIZE, same ? "identical" : "DIFFERENT");
  bmmem_device_free(ctx, mem);
  bm_exit(ctx);
  return same ? 0 : 1;
}
