// The aicore op library: kernels written in Ascend C (kernel_operator.h) that the backend runs
// on f32 tensors of the compiler's device. They compute as Ascend's stack does by default on its
// training parts (allow_fp32_to_fp16): Cube ops (conv, matmul, and the fp16 5HD input of pooling
// and depthwise conv) in fp16 with f32 accumulation, vector ops in f32.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessera/arch/machine_spec.h"

#include "tessera/profile/profile.h"
#include "tessera/runtime/device.h"

namespace tessera::aicore::kernels {

enum class Eltwise { add, sub, mul, div, max, min, relu, abs, exp, log, sqrt, neg };
const char* eltwise_name(Eltwise op);
bool is_binary(Eltwise op);

// out[i] = op(a[i] (, b[i])) for i < n, on the cores of `device` (an aicore preset): each block
// takes a contiguous share, in tiles double-buffered through VECIN/VECOUT queues. `a`, `b`,
// `out` are host views of device buffers. Returns the kernel's record.
profile::KernelRecord eltwise(runtime::Device& device, Eltwise op, const float* a, const float* b,
                              float* out, std::int64_t n);
// out[r][c] = op(a[r][c], b[c]) for a binary op: b broadcast over `rows` rows of `cols` (a bias
// over the last axes), in f32 on the Vector unit like eltwise.
profile::KernelRecord eltwise_rows(runtime::Device& device, Eltwise op, const float* a,
                                   const float* b, float* out, std::int64_t rows,
                                   std::int32_t cols);

// C = A x B on the Cube, fp16 operands with f32 accumulation, in the fractal layouts Ascend's
// stack gives them (docs/targets/aicore.md): A (m x k) zZ, B (k x n) nZ, C (m x n) nZ in fp16.
// m and n are multiples of 256, k of 128. Blocks take 256 x 256 tiles of C; K streams through
// L1 and L0A/L0B in double-buffered queues. Pointers are host views of device memory (bits of
// fp16 values).
profile::KernelRecord matmul_f16(runtime::Device& device, const std::uint16_t* a,
                                 const std::uint16_t* b, std::uint16_t* c, std::int32_t m,
                                 std::int32_t k, std::int32_t n);

// C (m x n) = A (m x k) x B (k x n), f32 row-major tensors of `device`, computed as Ascend's
// compiler does: A and B cast to fp16 and cut into fractals on the device (TransData kernels),
// multiplied on the Cube with f32 accumulation (matmul_f16's tiling, padded to its tiles), and
// the f32 product written back as rows. trans_b: `b` holds B's transpose (n x k rows), as Gemm's
// transB. Returns the GEMM kernel's record.
profile::KernelRecord matmul(runtime::Device& device, const float* a, const float* b, float* c,
                             std::int32_t m, std::int32_t k, std::int32_t n, bool trans_b = false);
// c (m x n, f32 rows) += beta * bias broadcast from bias_rows x bias_cols (1 or m, 1 or n), on
// the Vector unit in f32 (Gemm's C input).
profile::KernelRecord add_bias(runtime::Device& device, float* c, std::int32_t m, std::int32_t n,
                               const float* bias, std::int32_t bias_rows, std::int32_t bias_cols,
                               float beta);

// A 2-D convolution (NCHW f32 tensors, one group).
struct ConvShape {
  std::int32_t n = 1, c = 1, h = 1, w = 1, cout = 1, kh = 1, kw = 1, ho = 1, wo = 1;
  std::int32_t stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0,
               dilation_h = 1, dilation_w = 1;
  bool relu = false;  // a fused ReLU after the bias
  // A fused Clip after the bias (ReLU6: 0, 6); infinite bounds clip nothing.
  float clip_min = -INFINITY, clip_max = INFINITY;
  bool clips() const { return clip_min > -INFINITY || clip_max < INFINITY; }
};
// Why conv2d cannot run a shape on a preset (the input rows of one output row must fit L1, ...).
std::optional<std::string> conv_unsupported(const ConvShape& shape, const arch::MachineSpec& spec);
// y = conv(x, w) + bias (optional) [then ReLU], as Ascend's stack computes it: the input turned
// into 5HD fp16 on the device (TransData: Cast and TransDataTo5HD), the weights into fractal-Z
// fp16 with K in Img2Col's (c1, kh, kw, c0) order, then per output tile of 128 pixels x 128
// channels the patch matrix through Img2Col windows into L0B, the Cube with f32 accumulation,
// bias, ReLU and clip in f32 on the Vector unit, NCHW f32 rows out. Returns the conv kernel's
// record.
profile::KernelRecord conv2d(runtime::Device& device, const float* x, const float* w,
                             const float* bias, float* y, const ConvShape& shape);

// y[p] = the mean of x[p * size .. (p + 1) * size) for each of `planes` planes (GlobalAveragePool
// over NCHW: planes = N x C, size = H x W), reduced in f32 on the Vector unit.
profile::KernelRecord global_average_pool(runtime::Device& device, const float* x, float* y,
                                          std::int32_t planes, std::int32_t size);

// MaxPool over NCHW f32 (the ConvShape's c, h, w, kernel, strides, pads, dilations; cout = c):
// 5HD fp16 on the device, Img2Col windows with -inf padding into UB, Max on the Vector unit,
// back to NCHW f32 rows. pool_unsupported says why a shape cannot run on a preset.
std::optional<std::string> pool_unsupported(const ConvShape& shape, const arch::MachineSpec& spec);
profile::KernelRecord max_pool2d(runtime::Device& device, const float* x, float* y,
                                 const ConvShape& shape);
// AveragePool the same way: the window summed with Add in f32 (padding reads 0), then scaled
// by 1 / window, or, with padding and count_include_pad false, by each output pixel's own
// count of real elements (factors computed on the host, as Ascend's AvgPool assist matrix).
profile::KernelRecord average_pool2d(runtime::Device& device, const float* x, float* y,
                                     const ConvShape& shape, bool count_include_pad);

// Depthwise convolution (one filter of kh x kw per channel, cout = c) over NCHW f32: 5HD fp16
// input, Img2Col windows into UB, multiply-accumulate in f32 on the Vector unit with the bias,
// then ReLU (shape.relu) and the clip bounds, NCHW f32 out through fp16. pool_unsupported
// gives the limits.
profile::KernelRecord depthwise_conv2d(runtime::Device& device, const float* x, const float* w,
                                       const float* bias, float* y, const ConvShape& shape);

// Softmax over each of `rows` rows of `cols` floats, in f32 on the Vector unit.
profile::KernelRecord softmax(runtime::Device& device, const float* x, float* y, std::int32_t rows,
                              std::int32_t cols);

// Inference BatchNormalization of NCHW f32 (n x c planes of `size`), in f32 on the Vector unit.
profile::KernelRecord batch_norm(runtime::Device& device, const float* x, float* y,
                                 const float* gamma, const float* beta, const float* mean,
                                 const float* var, std::int32_t n, std::int32_t c,
                                 std::int32_t size, float eps);
// LayerNormalization over the last axis of `rows` rows of `cols` floats, with scale and an
// optional bias of `cols`, in f32 on the Vector unit.
profile::KernelRecord layer_norm(runtime::Device& device, const float* x, float* y,
                                 const float* gamma, const float* beta, std::int32_t rows,
                                 std::int32_t cols, float eps);

// The axes strided_copy takes, after it drops size-1 axes and merges neighbours that are
// contiguous on both sides.
inline constexpr int kStridedCopyMaxAxes = 8;
// out[sum_d i_d * out_strides[d]] = in[sum_d i_d * in_strides[d]] over `dims` (fastest axis
// first; a stride of 0 on the input repeats an element: the expansion of a broadcast operand),
// 4-byte elements of tensors of `device`; `in` and `out` hold in_count and out_count elements
// from the pointers given (which may point inside a tensor: a slice, or a Concat's part). Rows
// of the fastest axis are dealt to the blocks: contiguous rows through MTE2/MTE3, broadcast rows
// by the scalar unit and Duplicate, strided rows by DataCopyPad (one element per 32-byte block)
// and Gather. The bits move unchanged, so any 4-byte type copies exactly.
profile::KernelRecord strided_copy(runtime::Device& device, const float* in, std::int64_t in_count,
                                   float* out, std::int64_t out_count,
                                   std::span<const std::int64_t> dims,
                                   std::span<const std::int64_t> in_strides,
                                   std::span<const std::int64_t> out_strides);
// The same into a contiguous output of out_dims.
profile::KernelRecord strided_copy(runtime::Device& device, const float* in, std::int64_t in_count,
                                   float* out, std::span<const std::int64_t> out_dims,
                                   std::span<const std::int64_t> in_strides);
// out[0..count) = the 4-byte `bits` (Pad's constant): the value goes to the device like a
// weight and strided_copy broadcasts it (the scalar unit reads it, Duplicate fills the rows).
profile::KernelRecord fill(runtime::Device& device, float* out, std::int64_t count,
                           std::uint32_t bits);
// ONNX Gather of 4-byte elements: data viewed as [outer][axis][inner] (outer slowest), `k`
// int32 or int64 indices (index_bytes 4 or 8; negative ones count from the end of the axis),
// out[outer][k][inner]. The scalar unit reads and checks each index (one outside
// [-axis, axis - 1] is a DeviceFault naming it); rows of a 32-byte block or more move by
// DataCopyPad from the row the index names, shorter rows are gathered from the outer slice in
// UB by the Vector unit's Gather with byte offsets the scalar unit computes.
profile::KernelRecord gather(runtime::Device& device, const float* data, std::int64_t outer,
                             std::int64_t axis, std::int64_t inner, const void* indices,
                             unsigned index_bytes, std::int64_t k, float* out);
// ONNX GatherElements of 4-byte elements where the indices have the data's shape but along the
// axis (k there): data [outer][axis][inner], indices and out [outer][k][inner],
// out[a][j][b] = data[a][indices[a][j][b]][b]. Each outer slice of the data is gathered from in
// UB by the Vector unit, with byte offsets the scalar unit computes from the checked indices.
// gather_elements_unsupported says why a shape cannot run (a slice too large for the slab).
std::optional<std::string> gather_elements_unsupported(std::int64_t axis, std::int64_t inner);
profile::KernelRecord gather_elements(runtime::Device& device, const float* data,
                                      std::int64_t outer, std::int64_t axis, std::int64_t inner,
                                      const void* indices, unsigned index_bytes, std::int64_t k,
                                      float* out);
// ONNX GatherND of 4-byte elements with batch_dims folded into `outer`: data viewed as
// [outer][the indexed axes, extents `dims`][inner], indices [outer][k][dims.size()] (int32 or
// int64), out[a][j][inner] = the row of data[a] that tuple indices[a][j] names. The scalar unit
// reads and checks every component against its axis (DeviceFault naming the one outside it);
// rows move as Gather's do.
profile::KernelRecord gather_nd(runtime::Device& device, const float* data, std::int64_t outer,
                                std::span<const std::int64_t> dims, std::int64_t inner,
                                const void* indices, unsigned index_bytes, std::int64_t k,
                                float* out);
// How many axes strided_copy would run after merging (at most kStridedCopyMaxAxes run).
int strided_copy_axes(std::span<const std::int64_t> dims, std::span<const std::int64_t> in_strides,
                      std::span<const std::int64_t> out_strides);
// ONNX Transpose of a 4-byte tensor of `dims` (outer axis first, up to kStridedCopyMaxAxes):
// out axis j is in axis perm[j]. transpose_axes gives the strided_copy that does it (UserError
// for a bad permutation).
struct TransposeAxes {
  std::vector<std::int64_t> out_dims, in_strides;  // fastest first
  std::int64_t count = 1;
};
TransposeAxes transpose_axes(std::span<const std::int64_t> dims,
                             std::span<const std::int64_t> perm);
profile::KernelRecord transpose(runtime::Device& device, const float* in, float* out,
                                std::span<const std::int64_t> dims,
                                std::span<const std::int64_t> perm);

}  // namespace tessera::aicore::kernels
