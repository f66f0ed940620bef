// Reductions, argmax/argmin, softmax and the normalisations of the built-in library against
// ops/reference, over axis sets that include and exclude dimension 0 (the vector dimension).
// Sums are accumulated in a different order than the reference, so f32 allows 1e-5 relative.
#include <fmt/ranges.h>

#include "kernels_util.h"

namespace kernels_test {
namespace {

struct ReduceShape {
  Shape shape;
  std::vector<std::vector<int>> axes;
};
const std::vector<ReduceShape> kReduceShapes = {
    {Shape{1000}, {{0}, {}}},
    {Shape{100, 3, 5}, {{0}, {1}, {0, 2}, {1, 2}, {}}},
    {Shape{70, 2, 3, 2, 2}, {{0, 3}, {4}, {1, 2, 3}, {0, 1, 2, 3, 4}}},
};

using ReduceRef = Tensor (*)(const Tensor&, const ops::ReduceParams&);
struct ReduceCase {
  const char* op;
  ReduceRef reference;
  double lo, hi;
};
const ReduceCase kReduce[] = {{"sum", ops::reduce_sum, -1, 1},
                              {"mean", ops::reduce_mean, -1, 1},
                              {"max", ops::reduce_max, -5, 5},
                              {"min", ops::reduce_min, -5, 5},
                              {"prod", ops::reduce_prod, 0.97, 1.03}};

class Reduce : public KernelTest, public ::testing::WithParamInterface<DType> {};

TEST_P(Reduce, EveryOpOverAxisSets) {
  const DType dt = GetParam();
  std::uint32_t seed = 1;
  for (const ReduceCase& c : kReduce)
    for (const ReduceShape& s : kReduceShapes)
      for (const auto& axes : s.axes) {
        const Tensor x = random_tensor(dt, s.shape, c.lo, c.hi, seed++);
        ops::ReduceParams rp;
        rp.axes = axes;
        const Tensor expected = c.reference(x, rp);
        // The output may drop the reduced dims; the kernel sees them kept.
        const DeviceTensor out = alloc(dt, top::reduce_output_shape(s.shape, axes, false));
        top::reduce(rt(), c.op, upload(x), out, axes);
        const Tensor got = download(out).reshape(expected.shape());
        expect_close(got, expected, rtol_for(dt, 1e-5), atol_for(dt, 1e-5),
                     fmt::format("reduce_{} {} {} axes {}", c.op, dtype_name(dt),
                                 s.shape.to_string(), fmt::join(axes, ",")));
      }
}

TEST_P(Reduce, ArgmaxArgminAlongEachAxis) {
  const DType dt = GetParam();
  std::uint32_t seed = 40;
  for (const Shape& shape : {Shape{1000}, Shape{130, 3, 4}, Shape{5, 3, 2, 2, 3}})
    for (int axis = 0; axis < shape.rank(); ++axis) {
      const Tensor x = random_tensor(dt, shape, -10, 10, seed++);
      const DeviceTensor dx = upload(x);
      const Tensor emax = ops::argmax(x, axis, true);
      const DeviceTensor out = alloc(DType::i32, emax.shape());
      top::argmax(rt(), dx, out, axis);
      expect_close(download(out), emax, 0, 0,
                   fmt::format("argmax {} {} axis {}", dtype_name(dt), shape.to_string(), axis));
      top::argmin(rt(), dx, out, axis);
      expect_close(download(out), ops::argmin(x, axis, true), 0, 0,
                   fmt::format("argmin {} {} axis {}", dtype_name(dt), shape.to_string(), axis));
    }
}

TEST_P(Reduce, SoftmaxAndLogSoftmax) {
  const DType dt = GetParam();
  std::uint32_t seed = 70;
  for (const Shape& shape : {Shape{1000, 4}, Shape{33, 17, 3}, Shape{5, 3, 2, 2, 3}})
    for (int axis = 0; axis < shape.rank(); ++axis) {
      const Tensor x = random_tensor(dt, shape, -6, 6, seed++);
      const DeviceTensor dx = upload(x);
      const DeviceTensor out = alloc(dt, shape);
      top::softmax(rt(), dx, out, axis);
      expect_close(download(out), ops::softmax(x, axis), rtol_for(dt, 1e-5), atol_for(dt, 1e-7),
                   fmt::format("softmax {} {} axis {}", dtype_name(dt), shape.to_string(), axis));
      top::log_softmax(rt(), dx, out, axis);
      expect_close(
          download(out), ops::log_softmax(x, axis), rtol_for(dt, 1e-5), atol_for(dt, 1e-5),
          fmt::format("logsoftmax {} {} axis {}", dtype_name(dt), shape.to_string(), axis));
    }
}

TEST_P(Reduce, LayerNormWithAndWithoutBias) {
  const DType dt = GetParam();
  struct Case {
    Shape x, scale;
    int axis;
  };
  const Case cases[] = {{Shape{70, 3, 4}, Shape{70}, 0},
                        {Shape{70, 3, 4}, Shape{70, 3}, 1},
                        {Shape{70, 3, 4}, Shape{70}, 1},
                        {Shape{200}, Shape{200}, 0},
                        {Shape{9, 2, 3, 2, 2}, Shape{9, 2, 3}, 2}};
  std::uint32_t seed = 90;
  for (const Case& c : cases) {
    const Tensor x = random_tensor(dt, c.x, -3, 5, seed++);
    const Tensor scale = random_tensor(dt, c.scale, 0.5, 1.5, seed++);
    const Tensor bias = random_tensor(dt, c.scale, -1, 1, seed++);
    const DeviceTensor out = alloc(dt, c.x);
    top::layer_norm(rt(), upload(x), upload(scale), nullptr, out, c.axis, 1e-5f);
    expect_close(download(out), ops::layer_normalization(x, scale, nullptr, c.axis, 1e-5f),
                 rtol_for(dt, 1e-4), atol_for(dt, 1e-5),
                 fmt::format("layernorm {} {} axis {}", dtype_name(dt), c.x.to_string(), c.axis));
    const DeviceTensor dbias = upload(bias);
    top::layer_norm(rt(), upload(x), upload(scale), &dbias, out, c.axis, 1e-5f);
    expect_close(
        download(out), ops::layer_normalization(x, scale, &bias, c.axis, 1e-5f), rtol_for(dt, 1e-4),
        atol_for(dt, 1e-5),
        fmt::format("layernorm+bias {} {} axis {}", dtype_name(dt), c.x.to_string(), c.axis));
  }
}

TEST_P(Reduce, BatchNormOnNhwcChannels) {
  const DType dt = GetParam();
  const Shape x_shape = Shape::nhwc(2, 4, 5, 70);  // {70, 5, 4, 2}
  const Tensor x = random_tensor(dt, x_shape, -3, 3, 5);
  const Tensor scale = random_tensor(dt, Shape{70}, 0.5, 1.5, 6);
  const Tensor bias = random_tensor(dt, Shape{70}, -1, 1, 7);
  const Tensor mean = random_tensor(dt, Shape{70}, -1, 1, 8);
  const Tensor var = random_tensor(dt, Shape{70}, 0.2, 2, 9);
  const DeviceTensor out = alloc(dt, x_shape);
  top::batch_norm(rt(), upload(x), upload(scale), upload(bias), upload(mean), upload(var), out,
                  1e-3f);
  const Tensor expected =
      nchw_to_nhwc(ops::batch_normalization(nhwc_to_nchw(x), scale, bias, mean, var, 1e-3f));
  expect_close(download(out), expected, rtol_for(dt, 1e-5), atol_for(dt, 1e-5),
               fmt::format("batchnorm {}", dtype_name(dt)));
}

TEST_P(Reduce, InstanceNormOnNhwcChannels) {
  const DType dt = GetParam();
  for (const Shape& shape : {Shape::nhwc(2, 4, 5, 70), Shape::nhwc(3, 7, 3, 130)}) {
    const Tensor x = random_tensor(dt, shape, -3, 3, 15);
    const Tensor scale = random_tensor(dt, Shape{shape[0]}, 0.5, 1.5, 16);
    const Tensor bias = random_tensor(dt, Shape{shape[0]}, -1, 1, 17);
    const DeviceTensor out = alloc(dt, shape);
    top::instance_norm(rt(), upload(x), upload(scale), upload(bias), out, 1e-4f);
    const Tensor expected =
        nchw_to_nhwc(ops::instance_normalization(nhwc_to_nchw(x), scale, bias, 1e-4f));
    expect_close(download(out), expected, rtol_for(dt, 1e-4), atol_for(dt, 1e-5),
                 fmt::format("instancenorm {} {}", dtype_name(dt), shape.to_string()));
  }
}

INSTANTIATE_TEST_SUITE_P(Floats, Reduce, ::testing::Values(DType::f32, DType::bf16),
                         [](const auto& p) { return std::string(dtype_name(p.param)); });

}  // namespace
}  // namespace kernels_test
