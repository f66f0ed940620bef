// Awkward inputs: empty tensors, zero-length inner dims, extreme attribute values, huge shapes.
#include <limits>

#include "helpers.h"
#include "tessera/ops/reference.h"

namespace tessera {
namespace {

using test::Close;
using test::F;
using test::ThrowsUserError;

TEST(Edge, EmptyBatchesAndDims) {
  const Tensor x0(DType::f32, Shape::nchw(0, 3, 5, 5));
  const Tensor w(DType::f32, Shape{3, 3, 3, 2});
  EXPECT_EQ(ops::conv(x0, w, nullptr).shape(), Shape::nchw(0, 2, 3, 3));
  ops::PoolParams p;
  p.kernel_shape = {2, 2};
  EXPECT_EQ(ops::max_pool(x0, p).shape(), Shape::nchw(0, 3, 4, 4));
  EXPECT_EQ(ops::global_average_pool(x0).shape(), Shape::nchw(0, 3, 1, 1));
  EXPECT_EQ(ops::softmax(Tensor(DType::f32, Shape{0, 4}), 0).shape(), (Shape{0, 4}));
  EXPECT_EQ(ops::transpose(Tensor(DType::f32, Shape{0, 4})).shape(), (Shape{4, 0}));
  EXPECT_EQ(ops::add(Tensor(DType::f32, Shape{0, 3}), F(Shape{1}, {1})).shape(), (Shape{0, 3}));
  EXPECT_EQ(ops::gather(F(Shape{3}, {1, 2, 3}), Tensor(DType::i32, Shape{0}), 0).shape(),
            (Shape{0}));
  ops::ResizeParams r;
  r.sizes = {0, 2};
  EXPECT_EQ(ops::resize(F(Shape{2, 2}, {1, 2, 3, 4}), r).shape(), (Shape{0, 2}));
}

TEST(Edge, MatMulWithEmptyInnerDimIsZero) {
  const Tensor a(DType::f32, Shape{0, 3}), b(DType::f32, Shape{2, 0});
  EXPECT_TRUE(Close(ops::matmul(a, b), Tensor(DType::f32, Shape{2, 3})));
  const Tensor c = F(Shape{2}, {1, 2});
  ops::GemmParams p;
  p.beta = 2;
  EXPECT_TRUE(Close(ops::gemm(a, b, &c, p), F(Shape{2, 3}, {2, 4, 2, 4, 2, 4})));
}

TEST(Edge, ExtremeSliceSteps) {
  const Tensor x = F(Shape{4}, {1, 2, 3, 4});
  ops::SliceParams p;
  p.starts = {-1};
  p.ends = {std::numeric_limits<std::int64_t>::min()};
  p.steps = {std::numeric_limits<std::int64_t>::min()};
  EXPECT_TRUE(Close(ops::slice(x, p), F(Shape{1}, {4})));
  p.starts = {0};
  p.ends = {std::numeric_limits<std::int64_t>::max()};
  p.steps = {std::numeric_limits<std::int64_t>::max()};
  EXPECT_TRUE(Close(ops::slice(x, p), F(Shape{1}, {1})));
}

TEST(Edge, HugeShapesAreUserErrors) {
  const std::int64_t big = std::int64_t{1} << 30;
  EXPECT_TRUE(ThrowsUserError([&] { Tensor(DType::f32, Shape{big, big}); }, {"too large", "f32"}));
  // Dims whose product overflows int64 are refused by the shape itself.
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        Tensor(DType::f32, Shape{big, big, big});
      },
      {"too large", "2^62"}));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::resolve_reshape(Shape{1}, {big * big, big * big, 1});
      },
      {"Reshape", "overflows"}));
}

TEST(Edge, UnsqueezeNamesTheOutputRank) {
  EXPECT_TRUE(ThrowsUserError(
      [] {
        ops::unsqueeze(F(Shape{2}, {1, 2}), {3});
      },
      {"Unsqueeze", "axis 3", "output rank 2", "(2)"}));
}

}  // namespace
}  // namespace tessera
