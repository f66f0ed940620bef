/* BM runtime (spec 002, "BM Runtime Library"): devices, contexts, device memory and copies
 * between system and device memory, timed over the preset's host link. Every error comes back
 * as a bmerr_t (or NULL / 0 where the function returns a handle or a value), never as an
 * exception; its message is logged and kept per thread for tessera_bm_last_error().
 * Names and types follow spec 002; bmshape_t, bmfmt_t and the BM_TENSOR_* initialisers, which
 * the spec uses without printing, and bm_send_cmdbuf follow Bitmain's public BMNNSDK header
 * libbmruntime/bmruntime.h (github.com/BM1880-BIRD/bm1880-bmnnsdk-usb, bmnet_sdk/include). */
#ifndef _BM_RUNTIME_H_
#define _BM_RUNTIME_H_
#pragma GCC system_header

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bmkernel/bm_kernel.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bm_context;
typedef struct bm_context *bmctx_t;
struct bm_device;
typedef struct bm_device *bmdev_t;
typedef bmk_chip_info_t bm_devinfo_t;

#define BM_DEVICE_MAX_NUM (8)

bmerr_t bm_init(int index, bmctx_t *ctx);
void bm_exit(bmctx_t ctx);

void bm_enum_devices(int *count, bm_devinfo_t devinfo[]);
bmerr_t bm_device_open(int index, bmdev_t *dev);
void bm_device_close(bmdev_t dev);
bmerr_t bm_device_query(bmdev_t dev, int id, void *buf);
bmerr_t bm_device_config(bmdev_t dev, int id, void *buf);
bm_devinfo_t bm_device_get_info(bmdev_t dev);
/* From Bitmain's public bmruntime.h: the chip version (1880) and the global memory's bytes. */
int bm_device_get_chip_ver(bmdev_t dev);
u64 bm_device_get_gmem_size(bmdev_t dev);

bmerr_t bm_context_create(bmctx_t *ctx);
void bm_context_destroy(bmctx_t ctx);
bmerr_t bm_bind_device(bmctx_t ctx, bmdev_t dev);
void bm_unbind_device(bmctx_t ctx);
bmdev_t bm_get_device(bmctx_t ctx);

struct bm_memory;
typedef struct bm_memory *bmmem_t;
typedef bmmem_t bmmem_device_t;
typedef bmmem_t bmmem_host_t;

typedef enum bmfmt_e {
  BM_FMT_FP32 = 0,
  BM_FMT_FP16 = 1,
  BM_FMT_INT16 = 2,
  BM_FMT_INT8 = 3,
  BM_FMT_MAX = 4
} bmfmt_t;

#define BM_SHAPE_MAX_DIM (4)
typedef struct bmshape_s {
  bmfmt_t fmt;
  int dim_size;
  int dim[BM_SHAPE_MAX_DIM];
} bmshape_t;
#define BM_TENSOR_INT8(n, c, h, w) {BM_FMT_INT8, 4, {n, c, h, w}}
#define BM_TENSOR_INT16(n, c, h, w) {BM_FMT_INT16, 4, {n, c, h, w}}
#define BM_TENSOR_FP32(n, c, h, w) {BM_FMT_FP32, 4, {n, c, h, w}}
#define BM_TENSOR_WITH_FMT(n, c, h, w, data_fmt) {data_fmt, 4, {n, c, h, w}}
#define BM_MATRIX_INT8(l, r) {BM_FMT_INT8, 2, {l, r}}
#define BM_MATRIX_INT16(l, r) {BM_FMT_INT16, 2, {l, r}}
#define BM_MATRIX_FP32(l, r) {BM_FMT_FP32, 2, {l, r}}

bmmem_device_t bmmem_device_alloc_raw(bmctx_t ctx, size_t size);
bmmem_device_t bmmem_device_prealloc_raw(bmctx_t ctx, bmmem_device_t mem, uint64_t offset,
                                         size_t size);
bmmem_device_t bmmem_device_alloc(bmctx_t ctx, bmshape_t *shape);
bmmem_device_t bmmem_device_prealloc(bmctx_t ctx, bmmem_device_t mem, uint64_t offset,
                                     bmshape_t *shape);
void bmmem_device_free(bmctx_t ctx, bmmem_device_t mem);
/* Host memory is not supported (spec 002): these return NULL / 0 with BM_ERR_NOT_SUPPORTED
 * as the last error. */
bmmem_host_t bmmem_host_alloc(bmctx_t ctx, bmshape_t *shape);
void bmmem_host_free(bmctx_t ctx, bmmem_host_t mem);
size_t bmmem_device_size(bmctx_t ctx, bmmem_device_t mem);
uint64_t bmmem_device_addr(bmctx_t ctx, bmmem_device_t mem);
void *bmmem_host_v_addr(bmctx_t ctx, bmmem_host_t mem);
uint64_t bmmem_host_p_addr(bmctx_t ctx, bmmem_host_t mem);

bmerr_t bm_memcpy_s2d(bmctx_t ctx, bmmem_device_t dst, uint8_t *src);
bmerr_t bm_memcpy_d2s(bmctx_t ctx, uint8_t *dst, bmmem_device_t src);
/* From Bitmain's public bmruntime.h: [offset, offset + size) of the device memory only. */
bmerr_t bm_memcpy_s2d_ex(bmctx_t ctx, bmmem_device_t dst, uint8_t *src, uint64_t offset,
                         size_t size);
bmerr_t bm_memcpy_d2s_ex(bmctx_t ctx, uint8_t *dst, bmmem_device_t src, uint64_t offset,
                         size_t size);

/* Runs a command buffer acquired with bmk1880_acquire_cmdbuf from a context made by
 * bmk1880_register (the commands are those of that context). */
bmerr_t bm_send_cmdbuf(bmctx_t ctx, uint8_t *cmdbuf, size_t sz, uint16_t *seq_no);

/* ---- Tessera extension: the last error of the calling thread ---- */
typedef enum {
  TESSERA_BM_OK = 0,
  TESSERA_BM_USER_ERROR = 1,   /* bad input or API misuse */
  TESSERA_BM_DEVICE_FAULT = 2, /* what the BM1880 would fault on */
  TESSERA_BM_INTERNAL_ERROR = 3
} tessera_bm_error_kind_t;
/* The message of the last failed call on this thread ("" when none). */
const char *tessera_bm_last_error(void);
tessera_bm_error_kind_t tessera_bm_last_error_kind(void);
void tessera_bm_clear_error(void);

#ifdef __cplusplus
}
#endif

#endif /* _BM_RUNTIME_H_ */
