// Helpers of the kernel-library and MME tests: a gaudi device with a TPC runtime, host <->
// device copies of Tensors, deterministic random data, and layout changes between the NHWC the
// kernels use and the NCHW of ops/reference.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/tensor.h"
#include "tessera/ops/reference.h"
#include "tessera/runtime/device.h"
#include "tessera/targets/tpc/kernels.h"

namespace kernels_test {

using namespace tessera;
using tpc::DeviceTensor;
using tpc::make_device_tensor;
using tpc::Runtime;
namespace top = tessera::tpc::ops;  // the device ops under test; `ops` is the reference
namespace kernels = tessera::tpc::kernels;
using tpc::mme_conv2d_output_shape;
using tpc::mme_cost;
using tpc::MmeConvParams;
using tpc::MmeCost;
using tpc::MmeGemmParams;

// bf16 results are compared with the reference computed on the same bf16 inputs and rounded to
// bf16: one rounding of the output may differ by an ulp (2^-8 relative), special functions by
// two more.
inline constexpr double kBf16Rtol = 1.6e-2;
inline constexpr double kBf16Atol = 1e-2;

// Values in [lo, hi) from a splitmix64 hash of (seed, index), rounded to `dtype`.
inline Tensor random_tensor(DType dtype, const Shape& shape, double lo, double hi,
                            std::uint32_t seed) {
  Tensor t(dtype, shape);
  for (std::int64_t i = 0; i < t.element_count(); ++i) {
    std::uint64_t z = (static_cast<std::uint64_t>(seed) << 32) + static_cast<std::uint64_t>(i) +
                      0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const double u = static_cast<double>(z >> 11) / static_cast<double>(1ull << 53);
    t.set(i, lo + (hi - lo) * u);
  }
  return t;
}

class KernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = runtime::Device::open("gaudi");
    rt_ = std::make_unique<Runtime>(*device_);
  }

  DeviceTensor upload(const Tensor& t) {
    return make_device_tensor(*device_, t.dtype(), t.shape(), t.raw_data());
  }
  DeviceTensor alloc(DType dtype, const Shape& shape) {
    return make_device_tensor(*device_, dtype, shape);
  }
  Tensor download(const DeviceTensor& t) {
    Tensor h(t.dtype, t.shape);
    if (h.bytes() > 0) device_->copy_to_host(h.raw_data(), t.buffer, h.bytes());
    return h;
  }

  static void expect_close(const Tensor& actual, const Tensor& expected, double rtol, double atol,
                           const std::string& what) {
    const CompareResult r = compare(actual, expected, rtol, atol);
    EXPECT_TRUE(r.ok) << what << ": " << r.message << " (" << r.mismatches
                      << " mismatches, max abs error " << r.max_abs_error << ")";
  }
  static double rtol_for(DType t, double f32_rtol = 2e-6) {
    return t == DType::bf16 ? kBf16Rtol : f32_rtol;
  }
  static double atol_for(DType t, double f32_atol = 1e-6) {
    return t == DType::bf16 ? kBf16Atol : f32_atol;
  }

  runtime::Device& device() { return *device_; }
  Runtime& rt() { return *rt_; }

  std::unique_ptr<runtime::Device> device_;
  std::unique_ptr<Runtime> rt_;
};

// NHWC {C, W, H, N} <-> NCHW {W, H, C, N} (ops/reference's activation layout).
inline Tensor nhwc_to_nchw(const Tensor& x) {
  return ops::transpose(x, {1, 2, 0, 3});
}
inline Tensor nchw_to_nhwc(const Tensor& x) {
  return ops::transpose(x, {2, 0, 1, 3});
}

}  // namespace kernels_test
