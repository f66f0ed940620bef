// Pooling kernels on NHWC tensors against ops/reference (which pools NCHW): max pooling in f32,
// bf16, i16 and i8 (exact), average pooling in f32 and bf16 with and without
// count_include_pad, ceil mode, dilation and asymmetric pads, and global pooling.
#include "kernels_util.h"

namespace kernels_test {
namespace {

struct PoolCase {
  Shape x;  // NHWC {C, W, H, N}
  std::vector<std::int64_t> kernel, strides, pads, dilations;
  bool ceil_mode;
};
const std::vector<PoolCase> kPools = {
    {Shape::nhwc(2, 9, 11, 70), {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false},
    {Shape::nhwc(1, 8, 8, 130), {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false},
    {Shape::nhwc(2, 10, 9, 65), {3, 2}, {1, 2}, {0, 1, 1, 0}, {2, 1}, true},
    {Shape::nhwc(1, 7, 7, 3), {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true},
};

ops::PoolParams reference_params(const PoolCase& c, bool include_pad) {
  ops::PoolParams p;
  p.kernel_shape = c.kernel;
  p.strides = c.strides;
  p.pads = c.pads;
  p.dilations = c.dilations;
  p.ceil_mode = c.ceil_mode;
  p.count_include_pad = include_pad;
  return p;
}

kernels::Pool2dParams device_params(const PoolCase& c, bool include_pad) {
  kernels::Pool2dParams p;
  for (int j = 0; j < 2; ++j) {
    p.kernel[j] = static_cast<std::int32_t>(c.kernel[j]);
    p.strides[j] = static_cast<std::int32_t>(c.strides[j]);
    p.dilations[j] = static_cast<std::int32_t>(c.dilations[j]);
  }
  for (int j = 0; j < 4; ++j) p.pads[j] = static_cast<std::int32_t>(c.pads[j]);
  p.ceil_mode = c.ceil_mode ? 1 : 0;
  p.count_include_pad = include_pad ? 1 : 0;
  return p;
}

class MaxPool : public KernelTest, public ::testing::WithParamInterface<DType> {};

TEST_P(MaxPool, MatchesReference) {
  const DType dt = GetParam();
  std::uint32_t seed = 1;
  for (const PoolCase& c : kPools) {
    const Tensor x = random_tensor(dt, c.x, -100, 100, seed++);
    const Tensor expected =
        nchw_to_nhwc(ops::max_pool(nhwc_to_nchw(x).astype(DType::f32), reference_params(c, false)))
            .astype(dt);
    const kernels::Pool2dParams p = device_params(c, false);
    ASSERT_EQ(top::pool2d_output_shape(c.x, p), expected.shape());
    const DeviceTensor out = alloc(dt, expected.shape());
    const profile::KernelRecord& rec = top::max_pool_2d(rt(), upload(x), out, p);
    EXPECT_EQ(rec.name, top::kernel_name("maxpool_2d", dt));
    expect_close(download(out), expected, 0, 0,
                 fmt::format("maxpool {} {}", dtype_name(dt), c.x.to_string()));
  }
}

INSTANTIATE_TEST_SUITE_P(Types, MaxPool,
                         ::testing::Values(DType::f32, DType::bf16, DType::i16, DType::i8),
                         [](const auto& p) { return std::string(dtype_name(p.param)); });

class AvgPool : public KernelTest, public ::testing::WithParamInterface<DType> {};

TEST_P(AvgPool, MatchesReferenceWithAndWithoutPadCounting) {
  const DType dt = GetParam();
  std::uint32_t seed = 20;
  for (const PoolCase& c : kPools)
    for (bool include_pad : {false, true}) {
      const Tensor x = random_tensor(dt, c.x, -2, 2, seed++);
      const Tensor expected =
          nchw_to_nhwc(ops::average_pool(nhwc_to_nchw(x), reference_params(c, include_pad)));
      const DeviceTensor out = alloc(dt, expected.shape());
      top::avg_pool_2d(rt(), upload(x), out, device_params(c, include_pad));
      expect_close(download(out), expected, rtol_for(dt, 1e-5), atol_for(dt, 1e-6),
                   fmt::format("avgpool {} {} include_pad {}", dtype_name(dt), c.x.to_string(),
                               include_pad));
    }
}

TEST_P(AvgPool, GlobalPooling) {
  const DType dt = GetParam();
  const Tensor x = random_tensor(dt, Shape::nhwc(3, 5, 7, 130), -2, 2, 77);
  const DeviceTensor dx = upload(x);
  const DeviceTensor out = alloc(dt, Shape{130, 1, 1, 3});
  top::global_avg_pool_2d(rt(), dx, out);
  expect_close(download(out), nchw_to_nhwc(ops::global_average_pool(nhwc_to_nchw(x))),
               rtol_for(dt, 1e-5), atol_for(dt, 1e-6), "global average pool");
  top::global_max_pool_2d(rt(), dx, out);
  expect_close(download(out), nchw_to_nhwc(ops::global_max_pool(nhwc_to_nchw(x))), 0, 0,
               "global max pool");
}

INSTANTIATE_TEST_SUITE_P(Floats, AvgPool, ::testing::Values(DType::f32, DType::bf16),
                         [](const auto& p) { return std::string(dtype_name(p.param)); });

}  // namespace
}  // namespace kernels_test
