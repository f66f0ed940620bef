/* BMKernel common definitions (spec 002, "BMKernel Library"): the integer types, error codes,
 * data formats, shapes, strides, control flags and the lmem/gmem tensor descriptors shared by
 * the BM runtime and the BM1880 kernel API. Tessera implements them on its simulation engine;
 * a program written for Bitmain's BMNNSDK compiles against this header unchanged.
 * Values the spec does not print (error code numbers, FMT_* beyond I8/U8, CTRL_* bits, the
 * tensor_lmem fields after `aligned`) follow Bitmain's public BMNNSDK header bmkernel/bm_kernel.h
 * (github.com/BM1880-BIRD/bm1880-bmnnsdk-usb, bmnet_sdk/include). Usable from C11 and C++. */
#ifndef __BM_KERNEL_H__
#define __BM_KERNEL_H__
/* The vendor layout uses GCC extensions the SDK relies on (u8 bit-fields, a zero-length
 * trailing array); keep pedantic warnings about them out of user builds. */
#pragma GCC system_header

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

typedef u32 laddr_t; /* address in one NPU's local memory (lmem) */
typedef u64 gaddr_t; /* address in device memory (gmem) */

#ifdef __cplusplus
extern "C" {
#endif

#define LADDR_INVALID (0xFFFFFFFF)
#define GADDR_INVALID (0x000000FFFFFFFFFFULL)

typedef u32 bmerr_t;
#define BM_SUCCESS 0              /* the operation was successful */
#define BM_ERR_AGAIN 1            /* not ready yet */
#define BM_ERR_FAILURE 2          /* general failure (Tessera: a device fault) */
#define BM_ERR_TIMEOUT 3          /* timeout */
#define BM_ERR_UNINITIALIZED 4    /* uninitialised */
#define BM_ERR_INVALID_ARGUMENT 5 /* arguments invalid */
#define BM_ERR_NOMEM 6            /* not enough memory */
#define BM_ERR_DATA 7             /* data error */
#define BM_ERR_BUSY 8             /* busy */
#define BM_ERR_NOT_SUPPORTED 9    /* not supported */

/* spec 002 "fmt t": the basic data of a tensor or matrix. */
typedef u32 fmt_t;
#define FMT_F32 0
#define FMT_F16 1
#define FMT_I32 2
#define FMT_I16 3
#define FMT_I8 4
#define FMT_I4 5
#define FMT_I2 6
#define FMT_I1 7
#define FMT_U16 8
#define FMT_U8 9
#define FMT_INVALID 10

/* Engines a command runs on (cmd_hdr_t.engine_id). */
#define ENGINE_BD 0   /* broadcast engine: the TPU (NPU lanes) */
#define ENGINE_CPU 1  /* reserved */
#define ENGINE_GDMA 2 /* global DMA */
#define ENGINE_CDMA 3 /* reserved */
#define ENGINE_END 4

#define BM_CMB_HDR_MAGIC (0xA5)

/* spec 002 "bmk1880 acquire cmdbuf": one command of a command buffer. */
typedef struct __cmd_hdr_s {
  u8 magic;         /* BM_CMB_HDR_MAGIC */
  u8 len;           /* bytes of cmd[] */
  u8 engine_id : 4; /* ENGINE_BD or ENGINE_GDMA */
  u8 __deprecated : 4;
  u8 flags;
  u32 mask;
  u8 cmd[0];
} __attribute__((packed)) cmd_hdr_t;

/* spec 002 "bmk1880 chip info". */
typedef struct {
  u32 version;
  u32 npu_num;
  u32 eu_num;
  u32 lmem_size;
  u32 lmem_banks;
  u32 lmem_bank_size;
} bmk_chip_info_t;

/* spec 002 "bmk1880 register" (field order as the spec prints it). */
typedef struct {
  u32 chip_version;
  u8 *cmdbuf;
  u32 cmdbuf_size;
} bmk_info_t;

/* spec 002 "shape t". dim is 4 for a tensor (n, c, h, w), 2 for a matrix (row, col). */
typedef struct {
  u32 dim;
  u32 n;
  u32 c;
  union {
    u32 h;
    u32 row;
  };
  union {
    u32 w;
    u32 col;
  };
} shape_t;

shape_t shape_t4(int n, int c, int h, int w);
shape_t shape_t2(int row, int col);
bool shape_equal(shape_t s1, shape_t s2);

/* spec 002 "stride t", in bytes. */
typedef struct {
  u32 n;
  u32 c;
  union {
    u32 h;
    u32 row;
  };
  union {
    u32 w;
    u32 col;
  };
} stride_t;

stride_t stride_t4(int n, int c, int h, int w);
stride_t stride_t2(int row, int col);

typedef u32 ctrl_t;
#define CTRL_NULL 0
#define CTRL_AL (1 << 0)     /* aligned lmem tensor (EU-aligned channel stride) */
#define CTRL_RA (1 << 2)     /* matrix MAC: add the shifted previous result */
#define CTRL_BN (1 << 3)
#define CTRL_TP (1 << 5)     /* GDMA: N/C (tensor) or row/column (matrix) transposition */
#define CTRL_ADDR_ALIGN (1 << 7)
#define CTRL_RELU (1 << 8)   /* matrix MAC: ReLU before the right shift */
#define CTRL_KFLIP (1 << 9)
#define CTRL_WEIGHT (1 << 10) /* GDMA: the gmem address is in the weight area */
#define CTRL_NEURON (1 << 11) /* GDMA: the gmem address is in the neuron area */
#define CTRL_WINOGRAD (1 << 12)

typedef u32 tl_type;
#define TL_TYPE_TENSOR 0
#define TL_TYPE_TENSOR_PREALLOC 1
#define TL_TYPE_CONSTANT 2
#define TL_TYPE_SLICE 3
#define TL_TYPE_CLONE 4

typedef union {
  u32 reg_val;
  float fp32_val;
} const_fp32_t;

typedef union {
  laddr_t laddr;
  const_fp32_t const_fp32;
} opd_t;

/* spec 002 "tensor lmem": a tensor or matrix in lmem. With stride NULL, `aligned` selects the
 * default aligned or unaligned strides. */
typedef struct {
  tl_type type;
  opd_t operand;
  shape_t shape;
  stride_t *stride;
  bool aligned;
  fmt_t fmt;
  u32 bank_id;
  int reserved_size;
} tensor_lmem;

static inline laddr_t tl_address(tensor_lmem *tlp) {
  return tlp->type == TL_TYPE_CONSTANT ? LADDR_INVALID : tlp->operand.laddr;
}

/* spec 002 "tensor gmem": a tensor or matrix in gmem. */
typedef struct {
  u64 addr;
  shape_t shape;
  stride_t stride;
} tensor_gmem;

#ifdef __cplusplus
}
#endif

#endif /* __BM_KERNEL_H__ */
