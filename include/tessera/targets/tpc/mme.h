// The Gaudi Matrix Multiply Engine (MME): GEMM, batched GEMM and convolution as implicit GEMM
// beside the TPCs (spec 000 §2.1, Figure 2.2). Values go through OpenBLAS sgemm (bf16 inputs
// widen to f32, accumulate in f32, round the output); time is modeled from the preset as
// mme.setup_cycles + max(MACs / mme.macs_per_cycle_<dtype>, bytes / global-memory bandwidth).
#pragma once

#include <cstdint>
#include <string>

#include "tessera/arch/machine_spec.h"
#include "tessera/profile/profile.h"
#include "tessera/runtime/device.h"
#include "tessera/targets/tpc/api/runtime.h"

namespace tessera::ops {
class HostConvWeights;  // tessera/ops/host_conv.h
}

namespace tessera::tpc {

// out = alpha * op(A) * op(B) + beta * out_in (+ bias). Matrices use Tessera dims (dimension 0
// fastest): a row-major (M, K) matrix is {K, M}. trans_a: A is given as {M, K} (i.e. K x M).
struct MmeGemmParams {
  float alpha = 1.0f;
  float beta = 0.0f;  // 0: the output's previous contents are not read
  bool trans_a = false;
  bool trans_b = false;
};

// 2-D convolution on NHWC activations: x {C, W, H, N}, weights HWIO {M, C/group, kW, kH},
// bias {M}, out {M, W_out, H_out, N}. Spatial lists are {H, W} (ONNX order); pads are
// {H_begin, W_begin, H_end, W_end}.
struct MmeConvParams {
  std::int64_t strides[2] = {1, 1};
  std::int64_t pads[4] = {0, 0, 0, 0};
  std::int64_t dilations[2] = {1, 1};
  std::int64_t group = 1;
  // Host-side only: where a caller whose f32 weights never change (a compiled plan) keeps them
  // reordered for the host computation between calls; null reorders on every call.
  ::tessera::ops::HostConvWeights* kept_weights = nullptr;
};

// The modeled cost of one MME operation.
struct MmeCost {
  std::uint64_t macs = 0;
  std::uint64_t bytes = 0;  // global memory read + written
  std::uint64_t compute_cycles = 0;
  std::uint64_t memory_cycles = 0;
  std::uint64_t cycles = 0;  // setup + max(compute, memory)
};
// Cost of `macs` multiply-accumulates in `dtype` (f32 or bf16) moving `bytes` of global memory.
MmeCost mme_cost(const arch::MachineSpec& spec, DType dtype, std::uint64_t macs,
                 std::uint64_t bytes);

// Output shape of mme conv2d for an input {C, W, H, N} and HWIO weights; UserError when the
// shapes or parameters do not fit.
Shape mme_conv2d_output_shape(const Shape& x, const Shape& w, const MmeConvParams& params);

class Mme {
 public:
  explicit Mme(runtime::Device& device);

  // 2-D GEMM: A {K, M} (or {M, K} with trans_a), B {N, K} (or {K, N} with trans_b), out {N, M};
  // bias (optional) {N} broadcast over rows. All tensors one dtype (f32 or bf16), dense.
  const profile::KernelRecord& gemm(const DeviceTensor& a, const DeviceTensor& b,
                                    const DeviceTensor& out, const MmeGemmParams& params = {},
                                    const DeviceTensor* bias = nullptr);
  // Batched GEMM (NumPy matmul): dims 2.. are batch dims broadcast between A and B; rank 2..5.
  const profile::KernelRecord& batch_gemm(const DeviceTensor& a, const DeviceTensor& b,
                                          const DeviceTensor& out,
                                          const MmeGemmParams& params = {});
  // Convolution as implicit GEMM over im2col blocks (see MmeConvParams for layouts).
  const profile::KernelRecord& conv2d(const DeviceTensor& x, const DeviceTensor& w,
                                      const DeviceTensor* bias, const DeviceTensor& out,
                                      const MmeConvParams& params = {});

 private:
  const profile::KernelRecord& record(const std::string& name, DType dtype, std::uint64_t macs,
                                      std::uint64_t bytes_read, std::uint64_t bytes_written,
                                      std::uint64_t gemms);
  runtime::Device& device_;
};

}  // namespace tessera::tpc
