// The MME: GEMM (transposes, alpha/beta, bias), batched GEMM with broadcast batch dims and
// convolution as implicit GEMM (strides, asymmetric pads, dilation, groups, 1x1) against
// ops/reference; its cost model against the formula of the preset; shape/dtype errors.
#include <cmath>
#include <cstring>

#include "kernels_util.h"

namespace kernels_test {
namespace {

class Mme : public KernelTest, public ::testing::WithParamInterface<DType> {};

TEST_P(Mme, GemmWithTransposesAlphaBetaAndBias) {
  const DType dt = GetParam();
  const std::int64_t m = 33, k = 70, n = 65;
  std::uint32_t seed = 1;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const Tensor a = random_tensor(dt, ta ? Shape{m, k} : Shape{k, m}, -1, 1, seed++);
      const Tensor b = random_tensor(dt, tb ? Shape{k, n} : Shape{n, k}, -1, 1, seed++);
      const Tensor c0 = random_tensor(dt, Shape{n, m}, -1, 1, seed++);
      const Tensor bias = random_tensor(dt, Shape{n}, -1, 1, seed++);
      MmeGemmParams p;
      p.trans_a = ta;
      p.trans_b = tb;
      p.alpha = 0.5f;
      ops::GemmParams rp;
      rp.trans_a = ta;
      rp.trans_b = tb;
      rp.alpha = 0.5f;

      DeviceTensor out = alloc(dt, Shape{n, m});
      const profile::KernelRecord& rec = top::gemm(rt(), upload(a), upload(b), out, p);
      EXPECT_EQ(rec.name, top::kernel_name("gemm", dt));
      rp.beta = 0.0f;
      expect_close(download(out), ops::gemm(a, b, nullptr, rp), rtol_for(dt, 1e-5),
                   atol_for(dt, 1e-5), fmt::format("gemm ta {} tb {}", ta, tb));

      const DeviceTensor dbias = upload(bias);
      top::gemm(rt(), upload(a), upload(b), out, p, &dbias);
      rp.beta = 1.0f;
      expect_close(download(out), ops::gemm(a, b, &bias, rp), rtol_for(dt, 1e-5),
                   atol_for(dt, 1e-5), fmt::format("gemm+bias ta {} tb {}", ta, tb));

      out = upload(c0);
      p.beta = 0.25f;
      top::gemm(rt(), upload(a), upload(b), out, p);
      rp.beta = 0.25f;
      expect_close(download(out), ops::gemm(a, b, &c0, rp), rtol_for(dt, 1e-5), atol_for(dt, 1e-5),
                   fmt::format("gemm beta ta {} tb {}", ta, tb));
    }
}

TEST_P(Mme, BatchedGemmBroadcastsBatchDims) {
  const DType dt = GetParam();
  const Tensor a = random_tensor(dt, Shape{70, 33, 3, 2}, -1, 1, 10);
  const Tensor b = random_tensor(dt, Shape{65, 70, 1, 2}, -1, 1, 11);
  const Tensor expected = ops::matmul(a, b);
  const DeviceTensor out = alloc(dt, expected.shape());
  const profile::KernelRecord& rec = top::batch_gemm(rt(), upload(a), upload(b), out);
  EXPECT_EQ(rec.metrics.at("mme.gemms"), 6.0);
  expect_close(download(out), expected, rtol_for(dt, 1e-5), atol_for(dt, 1e-5), "batch gemm");
}

struct ConvCase {
  std::int64_t n, c, h, w, m, kh, kw, group;
  std::int64_t strides[2], pads[4], dilations[2];
  bool bias;
};
const ConvCase kConvs[] = {
    {2, 5, 8, 9, 7, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}, true},
    {1, 4, 11, 10, 3, 3, 2, 1, {2, 1}, {0, 1, 2, 0}, {2, 1}, false},
    {2, 6, 7, 7, 4, 3, 3, 2, {1, 2}, {1, 1, 1, 1}, {1, 1}, true},
    {2, 70, 5, 6, 65, 1, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, true},
    {1, 8, 6, 6, 8, 3, 3, 8, {1, 1}, {1, 1, 1, 1}, {1, 1}, false},
    // Depthwise (MobileNet's): strided with a bias, dilated with wide pads, a rectangular kernel.
    {1, 19, 9, 7, 19, 3, 3, 19, {2, 2}, {1, 1, 1, 1}, {1, 1}, true},
    {2, 12, 8, 8, 12, 3, 3, 12, {1, 1}, {2, 2, 2, 2}, {2, 2}, true},
    {1, 7, 5, 9, 7, 1, 5, 7, {1, 2}, {0, 2, 0, 1}, {1, 1}, false},
};

TEST_P(Mme, ConvolutionAsImplicitGemm) {
  const DType dt = GetParam();
  std::uint32_t seed = 20;
  for (const ConvCase& c : kConvs) {
    const Tensor x = random_tensor(dt, Shape::nhwc(c.n, c.h, c.w, c.c), -1, 1, seed++);
    const Tensor w_onnx = random_tensor(dt, Shape{c.kw, c.kh, c.c / c.group, c.m}, -1, 1, seed++);
    const Tensor bias = random_tensor(dt, Shape{c.m}, -1, 1, seed++);
    ops::ConvParams rp;
    rp.strides = {c.strides[0], c.strides[1]};
    rp.pads = {c.pads[0], c.pads[1], c.pads[2], c.pads[3]};
    rp.dilations = {c.dilations[0], c.dilations[1]};
    rp.group = c.group;
    const Tensor expected =
        nchw_to_nhwc(ops::conv(nhwc_to_nchw(x), w_onnx, c.bias ? &bias : nullptr, rp));
    MmeConvParams p;
    for (int j = 0; j < 2; ++j) {
      p.strides[j] = c.strides[j];
      p.dilations[j] = c.dilations[j];
    }
    for (int j = 0; j < 4; ++j) p.pads[j] = c.pads[j];
    p.group = c.group;
    const Tensor w_hwio = ops::transpose(w_onnx, {3, 2, 0, 1});  // {M, C/g, kW, kH}
    ASSERT_EQ(mme_conv2d_output_shape(x.shape(), w_hwio.shape(), p), expected.shape());
    const DeviceTensor out = alloc(dt, expected.shape());
    const DeviceTensor dbias = upload(bias);
    top::conv2d(rt(), upload(x), upload(w_hwio), c.bias ? &dbias : nullptr, out, p);
    expect_close(
        download(out), expected, rtol_for(dt, 1e-4), atol_for(dt, 1e-5),
        fmt::format("conv {}x{} group {} on {}", c.kh, c.kw, c.group, x.shape().to_string()));
  }
}

// The MME writes f32 results straight into the output; an output over its own input must still
// see the input as it was (here a depthwise and a grouped 3x3 convolution with out == x).
TEST_P(Mme, ConvolutionIntoItsOwnInputReadsTheInputAsItWas) {
  const DType dt = GetParam();
  for (const std::int64_t group : {16, 4}) {
    const Tensor x = random_tensor(dt, Shape::nhwc(1, 6, 5, 16), -1, 1, 40);
    const Tensor w = random_tensor(dt, Shape{16, 16 / group, 3, 3}, -1, 1, 41);  // HWIO
    MmeConvParams p;
    for (int j = 0; j < 4; ++j) p.pads[j] = 1;
    p.group = group;
    const DeviceTensor separate = alloc(dt, x.shape());
    top::conv2d(rt(), upload(x), upload(w), nullptr, separate, p);
    const DeviceTensor same = upload(x);
    top::conv2d(rt(), same, upload(w), nullptr, same, p);
    const Tensor expected = download(separate), actual = download(same);
    EXPECT_EQ(std::memcmp(actual.raw_data(), expected.raw_data(), expected.bytes()), 0)
        << "group " << group;
  }
}

INSTANTIATE_TEST_SUITE_P(Floats, Mme, ::testing::Values(DType::f32, DType::bf16),
                         [](const auto& p) { return std::string(dtype_name(p.param)); });

TEST_F(KernelTest, MmeCyclesFollowThePresetFormula) {
  const arch::MachineSpec& spec = device().spec();
  const double setup = spec.param("mme.setup_cycles").value;
  const double bw = spec.global().bandwidth_bytes_per_cycle.value;
  for (DType dt : {DType::f32, DType::bf16}) {
    const double rate =
        spec.param(dt == DType::f32 ? "mme.macs_per_cycle_f32" : "mme.macs_per_cycle_bf16").value;
    for (std::int64_t size : {16, 256}) {  // a memory-bound and a compute-bound GEMM
      const DeviceTensor a = alloc(dt, Shape{size, size});
      const DeviceTensor out = alloc(dt, Shape{size, size});
      const profile::KernelRecord& rec = top::gemm(rt(), a, a, out);
      const double macs = static_cast<double>(size * size * size);
      const double bytes = 3.0 * static_cast<double>(size * size * dtype_size(dt));
      const auto expected = static_cast<std::uint64_t>(
          setup + std::max(std::ceil(macs / rate), std::ceil(bytes / bw)));
      EXPECT_EQ(rec.cycles, expected) << dtype_name(dt) << " " << size;
      EXPECT_EQ(rec.bytes_read + rec.bytes_written, static_cast<std::uint64_t>(bytes));
      EXPECT_EQ(rec.metrics.at("mme.macs"), macs);
    }
  }
  const MmeCost big = mme_cost(spec, DType::bf16, 1ull << 30, 1024);
  EXPECT_GT(big.compute_cycles, big.memory_cycles);
  const MmeCost wide = mme_cost(spec, DType::f32, 1024, 1ull << 30);
  EXPECT_GT(wide.memory_cycles, wide.compute_cycles);
  EXPECT_GT(device().profile().pipe_busy_cycles.at("mme"), 0u);
}

TEST_F(KernelTest, MmeShapeAndTypeErrorsAreUserErrors) {
  const DeviceTensor a = alloc(DType::f32, Shape{70, 33});
  const DeviceTensor b = alloc(DType::f32, Shape{65, 71});
  const DeviceTensor b16 = alloc(DType::bf16, Shape{65, 70});
  const DeviceTensor i32 = alloc(DType::i32, Shape{65, 70});
  const DeviceTensor out = alloc(DType::f32, Shape{65, 33});
  EXPECT_THROW(top::gemm(rt(), a, b, out), UserError);    // K differs
  EXPECT_THROW(top::gemm(rt(), a, b16, out), UserError);  // mixed dtypes
  EXPECT_THROW(top::gemm(rt(), i32, i32, out), UserError);
  EXPECT_THROW(top::gemm(rt(), a, a, out), UserError);  // output shape
  const DeviceTensor x = alloc(DType::f32, Shape{6, 5, 5, 1});
  const DeviceTensor w = alloc(DType::f32, Shape{4, 4, 3, 3});  // expects 6 input channels
  const DeviceTensor y = alloc(DType::f32, Shape{4, 3, 3, 1});
  EXPECT_THROW(top::conv2d(rt(), x, w, nullptr, y), UserError);
  try {
    top::gemm(rt(), a, b, out);
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("inner dimensions"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kernels_test
