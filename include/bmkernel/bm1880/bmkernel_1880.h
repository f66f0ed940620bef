/* BMKernel for the BM1880 (spec 002, "BMKernel Library"): a context records TPU and GDMA
 * commands into a command buffer; bmruntime_bmkernel_submit (or bm_send_cmdbuf) runs them on
 * the simulated chip. Every computation returns a handle of its command (for
 * bmk1880_add_dependency) or NULL on error; the error is logged and kept for
 * tessera_bm_last_error() (libbmruntime/bmruntime.h). Declarations follow spec 002, which
 * prints `void *` for the context and the command handle: parameters take `void *`, and the
 * register, GDMA and TPU calls return the bmk1880_context_t * / bmk1880_op_t * of Bitmain's
 * public header bmkernel_1880.h, so C and C++ code of either style builds (a typed pointer
 * converts to `void *`; the reverse needs a cast in C++). bmk1880_tpu_max_const,
 * bmk1880_tl_shape_to_size, bmk1880_tl_shape_to_nchw, bmk1880_tl_size and
 * bmk1880_tg_shape_to_size come from that header. */
#ifndef __BMKERNEL_1880_H__
#define __BMKERNEL_1880_H__
#pragma GCC system_header

#include <bmkernel/bm_kernel.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bmk1880_context bmk1880_context_t;
typedef struct ec_desc bmk1880_op_t;
typedef bmk_chip_info_t bmk1880_chip_info_t;
typedef bmk_info_t bmk1880_info_t;

/* ---- system API ---- */
bmk1880_context_t *bmk1880_register(bmk1880_info_t *info);
void bmk1880_cleanup(void *ctx);
u8 *bmk1880_acquire_cmdbuf(void *ctx, u32 *size);
void bmk1880_reset(void *ctx);
void bmk1880_parallel_enable(void *ctx);
void bmk1880_parallel_disable(void *ctx);
void bmk1880_create_streams(void *ctx, int nr_streams);
void bmk1880_destroy_streams(void *ctx);
void bmk1880_set_stream(void *ctx, int i);
void bmk1880_add_dependency(void *ctx, void *before, void *after);

bmk1880_chip_info_t bmk1880_chip_info(void);

/* ---- lmem tensors ---- */
tensor_lmem *bmk1880_tl_prealloc(void *ctx, laddr_t la, shape_t s, fmt_t fmt);
tensor_lmem *bmk1880_tl_prealloc_align(void *ctx, laddr_t la, shape_t s, fmt_t fmt);
tensor_lmem *bmk1880_tl_alloc(void *ctx, shape_t s, fmt_t fmt, u32 ctrls);
tensor_lmem *bmk1880_tl_alloc_bank(void *ctx, u32 bank_id, shape_t s, fmt_t fmt, u32 ctrls);
void bmk1880_tl_free(void *ctx, tensor_lmem *tlp);
/* Bytes per NPU lane a tensor of shape s takes with the default strides. */
int bmk1880_tl_shape_to_size(void *ctx, shape_t s, bool aligned, fmt_t fmt);
/* The (n, c, h, w) an lmem tensor of shape s is stored as: a tensor's own; a matrix (row, col)
 * as (row, ceil(col / eu_num), 1, eu_num). */
void bmk1880_tl_shape_to_nchw(const void *ctx, shape_t s, int *n, int *c, int *h, int *w);
/* Bytes per NPU lane the tensor takes: its strides' n times its n (the default strides when it
 * has none). */
int bmk1880_tl_size(const void *ctx, tensor_lmem *tlp);
/* Bytes of a packed gmem tensor or matrix of shape s and format fmt (8-, 16- or 32-bit). */
size_t bmk1880_tg_shape_to_size(shape_t s, fmt_t fmt);

/* ---- GDMA ---- */
bmk1880_op_t *bmk1880_gdma_copy_gmem(void *ctx, tensor_gmem *dst, tensor_gmem *src, ctrl_t ctrls);
bmk1880_op_t *bmk1880_gdma_copy_lmem(void *ctx, tensor_lmem *dst, tensor_lmem *src);
bmk1880_op_t *bmk1880_gdma_load(void *ctx, tensor_lmem *t, u64 gaddr, ctrl_t ctrls);
bmk1880_op_t *bmk1880_gdma_store(void *ctx, tensor_lmem *t, u64 gaddr, ctrl_t ctrls);
bmk1880_op_t *bmk1880_gdma_load_stride(void *ctx, tensor_lmem *t, u64 gaddr, stride_t stride,
                               ctrl_t ctrls);
bmk1880_op_t *bmk1880_gdma_store_stride(void *ctx, tensor_lmem *t, u64 gaddr, stride_t stride,
                                ctrl_t ctrls);
bmk1880_op_t *bmk1880_gdma_lrn_shift(void *ctx, tensor_lmem *dst, tensor_lmem *src, bool right_shift,
                             int lrn_step);

/* ---- TPU computations ---- */
typedef struct {
  tensor_lmem *res_high;
  tensor_lmem *res_low;
  tensor_lmem *a;
  tensor_lmem *b;
  int rshift_width;
} bmk1880_mul_param_t;
bmk1880_op_t *bmk1880_tpu_mul(void *ctx, const bmk1880_mul_param_t *p);

typedef struct {
  tensor_lmem *res_high;
  tensor_lmem *res_low;
  tensor_lmem *a;
  s8 b;
  bool b_is_signed;
  int rshift_width;
} bmk1880_mul_const_param_t;
bmk1880_op_t *bmk1880_tpu_mul_const(void *ctx, const bmk1880_mul_const_param_t *p);

typedef struct {
  tensor_lmem *res_high;
  tensor_lmem *res_low;
  bool res_is_int8;
  tensor_lmem *a;
  tensor_lmem *b;
  int lshift_width;
  int rshift_width;
} bmk1880_mac_param_t;
bmk1880_op_t *bmk1880_tpu_mac(void *ctx, const bmk1880_mac_param_t *p);

typedef struct {
  tensor_lmem *res_high;
  tensor_lmem *res_low;
  bool res_is_int8;
  tensor_lmem *a;
  s8 b;
  bool b_is_signed;
  int lshift_width;
  int rshift_width;
} bmk1880_mac_const_param_t;
bmk1880_op_t *bmk1880_tpu_mac_const(void *ctx, const bmk1880_mac_const_param_t *p);

typedef struct {
  tensor_lmem *res_high;
  tensor_lmem *res_low;
  tensor_lmem *a_high;
  tensor_lmem *a_low;
  tensor_lmem *b_high;
  tensor_lmem *b_low;
} bmk1880_add_param_t;
bmk1880_op_t *bmk1880_tpu_add(void *ctx, const bmk1880_add_param_t *p);

typedef struct {
  tensor_lmem *res_high;
  tensor_lmem *res_low;
  tensor_lmem *a_high;
  tensor_lmem *a_low;
  s16 b;
  bool b_is_signed;
} bmk1880_add_const_param_t;
bmk1880_op_t *bmk1880_tpu_add_const(void *ctx, const bmk1880_add_const_param_t *p);

typedef struct {
  tensor_lmem *res_high;
  tensor_lmem *res_low;
  tensor_lmem *a_high;
  tensor_lmem *a_low;
  tensor_lmem *b_high;
  tensor_lmem *b_low;
} bmk1880_sub_param_t;
bmk1880_op_t *bmk1880_tpu_sub(void *ctx, const bmk1880_sub_param_t *p);

typedef struct {
  tensor_lmem *max;
  tensor_lmem *a;
  tensor_lmem *b;
} bmk1880_max_param_t;
bmk1880_op_t *bmk1880_tpu_max(void *ctx, const bmk1880_max_param_t *p);

typedef struct {
  tensor_lmem *max;
  tensor_lmem *a;
  s8 b;
  bool b_is_signed;
} bmk1880_max_const_param_t;
bmk1880_op_t *bmk1880_tpu_max_const(void *ctx, const bmk1880_max_const_param_t *p);

typedef struct {
  tensor_lmem *min;
  tensor_lmem *a;
  tensor_lmem *b;
} bmk1880_min_param_t;
bmk1880_op_t *bmk1880_tpu_min(void *ctx, const bmk1880_min_param_t *p);

typedef struct {
  tensor_lmem *min;
  tensor_lmem *a;
  s8 b;
  bool b_is_signed;
} bmk1880_min_const_param_t;
bmk1880_op_t *bmk1880_tpu_min_const(void *ctx, const bmk1880_min_const_param_t *p);

typedef struct {
  tensor_lmem *res_high;
  tensor_lmem *res_low;
  tensor_lmem *a_high;
  tensor_lmem *a_low;
  tensor_lmem *bits;
} bmk1880_arith_shift_param_t;
bmk1880_op_t *bmk1880_tpu_arith_shift(void *ctx, const bmk1880_arith_shift_param_t *p);

typedef struct {
  tensor_lmem *res;
  tensor_lmem *a;
  tensor_lmem *b;
} bmk1880_and_int8_param_t;
bmk1880_op_t *bmk1880_tpu_and_int8(void *ctx, const bmk1880_and_int8_param_t *p);

typedef struct {
  tensor_lmem *res_high;
  tensor_lmem *res_low;
  tensor_lmem *a_high;
  tensor_lmem *a_low;
  tensor_lmem *b_high;
  tensor_lmem *b_low;
} bmk1880_and_int16_param_t;
bmk1880_op_t *bmk1880_tpu_and_int16(void *ctx, const bmk1880_and_int16_param_t *p);

typedef struct {
  tensor_lmem *res;
  tensor_lmem *a;
  tensor_lmem *b;
} bmk1880_or_int8_param_t;
bmk1880_op_t *bmk1880_tpu_or_int8(void *ctx, const bmk1880_or_int8_param_t *p);

typedef struct {
  tensor_lmem *res_high;
  tensor_lmem *res_low;
  tensor_lmem *a_high;
  tensor_lmem *a_low;
  tensor_lmem *b_high;
  tensor_lmem *b_low;
} bmk1880_or_int16_param_t;
bmk1880_op_t *bmk1880_tpu_or_int16(void *ctx, const bmk1880_or_int16_param_t *p);

typedef struct {
  tensor_lmem *res;
  tensor_lmem *a;
  tensor_lmem *b;
} bmk1880_xor_int8_param_t;
bmk1880_op_t *bmk1880_tpu_xor_int8(void *ctx, const bmk1880_xor_int8_param_t *p);

typedef struct {
  tensor_lmem *res_high;
  tensor_lmem *res_low;
  tensor_lmem *a_high;
  tensor_lmem *a_low;
  tensor_lmem *b_high;
  tensor_lmem *b_low;
} bmk1880_xor_int16_param_t;
bmk1880_op_t *bmk1880_tpu_xor_int16(void *ctx, const bmk1880_xor_int16_param_t *p);

typedef struct {
  tensor_lmem *dst;
  tensor_lmem *src;
} bmk1880_copy_param_t;
bmk1880_op_t *bmk1880_tpu_copy(void *ctx, const bmk1880_copy_param_t *p);

typedef struct {
  tensor_lmem *dst;
  stride_t dst_stride;
  tensor_lmem *src;
  stride_t src_stride;
} bmk1880_copy_with_stride_param_t;
bmk1880_op_t *bmk1880_tpu_copy_with_stride(void *ctx, const bmk1880_copy_with_stride_param_t *p);

typedef struct {
  tensor_lmem *res_high;
  tensor_lmem *res_low;
  tensor_lmem *a;
} bmk1880_mdsum_param_t;
bmk1880_op_t *bmk1880_tpu_mdsum(void *ctx, const bmk1880_mdsum_param_t *p);

typedef struct {
  tensor_lmem *ofmap;
  tensor_lmem *ifmap;
  tensor_lmem *table;
} bmk1880_lut_param_t;
bmk1880_op_t *bmk1880_tpu_lut(void *ctx, const bmk1880_lut_param_t *p);

typedef struct {
  tensor_lmem *ofmap;
  tensor_lmem *ifmap;
} bmk1880_relu_param_t;
bmk1880_op_t *bmk1880_tpu_relu(void *ctx, const bmk1880_relu_param_t *p);

typedef struct {
  tensor_lmem *ofmap;
  tensor_lmem *ifmap;
  tensor_lmem *weight;
  tensor_lmem *bias;
  u8 ins_h, ins_last_h;
  u8 ins_w, ins_last_w;
  u8 pad_top, pad_bottom;
  u8 pad_left, pad_right;
  u8 stride_h, stride_w;
  u8 dilation_h, dilation_w;
  bool relu_enable;
  int rshift_width;
} bmk1880_conv_param_t;
bmk1880_op_t *bmk1880_tpu_conv(void *ctx, const bmk1880_conv_param_t *p);

typedef struct {
  tensor_lmem *ofmap;
  tensor_lmem *ifmap;
  tensor_lmem *weight;
  tensor_lmem *bias;
  u8 ins_h, ins_last_h;
  u8 ins_w, ins_last_w;
  u8 pad_top, pad_bottom;
  u8 pad_left, pad_right;
  bool relu_enable;
  int rshift_width;
} bmk1880_winograd_param_t;
bmk1880_op_t *bmk1880_tpu_winograd(void *ctx, const bmk1880_winograd_param_t *p);

typedef struct {
  tensor_lmem *ofmap;
  tensor_lmem *ifmap;
  tensor_lmem *weight;
  tensor_lmem *bias;
  u8 ins_h, ins_last_h;
  u8 ins_w, ins_last_w;
  u8 pad_top, pad_bottom;
  u8 pad_left, pad_right;
  u8 stride_h, stride_w;
  int rshift_width;
} bmk1880_depthwise_param_t;
bmk1880_op_t *bmk1880_tpu_depthwise(void *ctx, const bmk1880_depthwise_param_t *p);

typedef struct {
  tensor_lmem *ofmap;
  tensor_lmem *ifmap;
  u8 kh, kw;
  u8 ins_h, ins_last_h;
  u8 ins_w, ins_last_w;
  u8 pad_top, pad_bottom;
  u8 pad_left, pad_right;
  u8 stride_h, stride_w;
} bmk1880_max_pooling_param_t;
bmk1880_op_t *bmk1880_tpu_max_pooling(void *ctx, const bmk1880_max_pooling_param_t *p);

typedef struct {
  tensor_lmem *ofmap;
  tensor_lmem *ifmap;
  u8 kh, kw;
  u8 ins_h, ins_last_h;
  u8 ins_w, ins_last_w;
  u8 pad_top, pad_bottom;
  u8 pad_left, pad_right;
  u8 stride_h, stride_w;
  u8 avg_pooling_const;
  int rshift_width;
} bmk1880_avg_pooling_param_t;
bmk1880_op_t *bmk1880_tpu_avg_pooling(void *ctx, const bmk1880_avg_pooling_param_t *p);

typedef struct {
  tensor_lmem *res;
  tensor_lmem *left;
  tensor_lmem *right;
  tensor_lmem *bias;
  int lshift_width;
  int rshift_width;
  bool res_is_int8;
  ctrl_t ctrls;
} bmk1880_matrix_mac_param_t;
bmk1880_op_t *bmk1880_tpu_matrix_mac(void *ctx, const bmk1880_matrix_mac_param_t *p);

typedef struct {
  tensor_lmem *res;
  tensor_lmem *left;
  tensor_lmem *right;
} bmk1880_matrix_mac_2_param_t;
bmk1880_op_t *bmk1880_tpu_matrix_mac_2(void *ctx, const bmk1880_matrix_mac_2_param_t *p);

#ifdef __cplusplus
}
#endif

#endif /* __BMKERNEL_1880_H__ */
