// Reshape, Flatten, Transpose, Concat, Split, Slice, Squeeze, Unsqueeze, Gather, Pad, Expand,
// Shape.
#include <limits>

#include "helpers.h"
#include "tessera/ops/reference.h"

namespace tessera {
namespace {

using test::Close;
using test::F;
using test::I;
using test::ThrowsUserError;

Tensor iota(const Shape& s, DType dt = DType::f32) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(s.element_count()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int64_t>(i);
  return Tensor::from_ints(dt, s, v);
}

TEST(Reshape, ExactAndOnnxTargets) {
  const Tensor x = iota(Shape{4, 3, 2});
  EXPECT_EQ(ops::reshape(x, Shape{6, 4}).shape(), (Shape{6, 4}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::reshape(x, Shape{5}); }, {"Reshape", "24 elements"}));
  // ONNX dims (2, 3, 4) outer first; 0 copies, -1 infers.
  EXPECT_EQ(ops::resolve_reshape(x.shape(), {0, -1}), (Shape{12, 2}));
  EXPECT_EQ(ops::resolve_reshape(x.shape(), {-1}), (Shape{24}));
  EXPECT_EQ(ops::resolve_reshape(x.shape(), {4, 0, 2}), (Shape{2, 3, 4}));
  EXPECT_EQ(ops::resolve_reshape(Shape{0, 3}, {0, 3}, true), (Shape{3, 0}));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::resolve_reshape(x.shape(), {-1, -1});
      },
      {"Reshape", "more than one -1"}));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::resolve_reshape(x.shape(), {5, -1});
      },
      {"Reshape", "cannot infer"}));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::resolve_reshape(x.shape(), {0, 0, 0, 0});
      },
      {"Reshape", "only 3 dims"}));
}

TEST(Flatten, Boundaries) {
  const Tensor x = iota(Shape{4, 3, 2});
  EXPECT_EQ(ops::flatten(x, 0).shape(), (Shape{1, 24}));
  EXPECT_EQ(ops::flatten(x, 1).shape(), (Shape{4, 6}));   // ONNX axis 2
  EXPECT_EQ(ops::flatten(x, 3).shape(), (Shape{24, 1}));  // ONNX axis 0
  EXPECT_EQ(ops::flatten(x, -1).shape(), (Shape{12, 2}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::flatten(x, 4); }, {"Flatten", "axis 4"}));
}

TEST(Transpose, MatrixAndPermutations) {
  // (2x3) [[0,1,2],[3,4,5]] transposed is (3x2) [[0,3],[1,4],[2,5]].
  const Tensor m = iota(Shape{3, 2});
  EXPECT_TRUE(Close(ops::transpose(m), F(Shape{2, 3}, {0, 3, 1, 4, 2, 5})));
  EXPECT_TRUE(Close(ops::transpose(m, {1, 0}), ops::transpose(m)));
  const Tensor x = iota(Shape{3, 4, 5, 2, 3}, DType::i16);
  const std::vector<int> perm{2, 0, 4, 1, 3};
  const Tensor y = ops::transpose(x, perm);
  ASSERT_EQ(y.shape(), (Shape{5, 3, 3, 4, 2}));
  for (std::int64_t a = 0; a < 5; ++a)
    for (std::int64_t b = 0; b < 3; ++b)
      for (std::int64_t c = 0; c < 3; ++c)
        for (std::int64_t d = 0; d < 4; ++d)
          for (std::int64_t e = 0; e < 2; ++e)
            ASSERT_EQ(y.at<int>({a, b, c, d, e}), x.at<int>({b, d, a, e, c}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::transpose(m, {0, 0}); }, {"Transpose", "perm [0, 0]"}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::transpose(m, {0}); }, {"Transpose", "0..1"}));
}

TEST(Concat, InnerAndOuterAxes) {
  const Tensor a = F(Shape{2, 2}, {1, 2, 3, 4}), b = F(Shape{1, 2}, {9, 8});
  EXPECT_TRUE(Close(ops::concat({a, b}, 0), F(Shape{3, 2}, {1, 2, 9, 3, 4, 8})));
  const Tensor c = F(Shape{2, 1}, {7, 6});
  EXPECT_TRUE(Close(ops::concat({a, c}, 1), F(Shape{2, 3}, {1, 2, 3, 4, 7, 6})));
  EXPECT_TRUE(Close(ops::concat({a, c}, -1), ops::concat({a, c}, 1)));
  EXPECT_TRUE(Close(ops::concat({a, Tensor(DType::f32, Shape{0, 2})}, 0), a));
  EXPECT_TRUE(ThrowsUserError([&] { ops::concat({a, b}, 1); }, {"Concat", "input 1", "(1, 2)"}));
  EXPECT_TRUE(
      ThrowsUserError([] { ops::concat(std::vector<Tensor>{}, 0); }, {"Concat", "at least one"}));
  EXPECT_TRUE(ThrowsUserError([] { ops::concat(std::vector<const Tensor*>{}, 0); },
                              {"Concat", "at least one"}));
  // Tensors held elsewhere concatenate the same.
  EXPECT_TRUE(Close(ops::concat(std::vector<const Tensor*>{&a, &c}, 1), ops::concat({a, c}, 1)));
}

TEST(Split, SizesAndEqualParts) {
  const Tensor x = iota(Shape{5, 2});
  const auto parts = ops::split(x, 0, {2, 3});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_TRUE(Close(parts[0], F(Shape{2, 2}, {0, 1, 5, 6})));
  EXPECT_TRUE(Close(parts[1], F(Shape{3, 2}, {2, 3, 4, 7, 8, 9})));
  const auto rows = ops::split(x, 1, {1, 1});
  EXPECT_TRUE(Close(rows[1], F(Shape{5, 1}, {5, 6, 7, 8, 9})));
  EXPECT_EQ(ops::split_sizes(7, 3), (std::vector<std::int64_t>{3, 3, 1}));
  EXPECT_EQ(ops::split_sizes(6, 3), (std::vector<std::int64_t>{2, 2, 2}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::split(x, 0, {2, 2}); }, {"Split", "sum to the size 5"}));
}

TEST(Slice, StartsEndsStepsAndClamping) {
  const Tensor x = iota(Shape{10});
  auto sl = [&](std::int64_t s, std::int64_t e, std::int64_t st) {
    ops::SliceParams p;
    p.starts = {s};
    p.ends = {e};
    p.steps = {st};
    return ops::slice(x, p).to_ints();
  };
  using V = std::vector<std::int64_t>;
  EXPECT_EQ(sl(2, 5, 1), (V{2, 3, 4}));
  EXPECT_EQ(sl(1, 9, 3), (V{1, 4, 7}));
  EXPECT_EQ(sl(-3, 100, 1), (V{7, 8, 9}));
  EXPECT_EQ(sl(9, 2, -3), (V{9, 6, 3}));
  EXPECT_EQ(sl(-1, std::numeric_limits<std::int64_t>::min(), -1),
            (V{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(sl(100, -100, -4), (V{9, 5, 1}));
  EXPECT_EQ(sl(0, std::numeric_limits<std::int64_t>::max(), 4), (V{0, 4, 8}));
  EXPECT_EQ(sl(5, 2, 1), V{});
  // Two axes of a matrix: (4x3) rows 1..2 reversed columns.
  const Tensor m = iota(Shape{3, 4});
  ops::SliceParams p;
  p.starts = {1, -1};
  p.ends = {3, -100};
  p.axes = {1, 0};
  p.steps = {1, -2};
  EXPECT_TRUE(Close(ops::slice(m, p), F(Shape{2, 2}, {5, 3, 8, 6})));
  p.steps = {1, 0};
  EXPECT_TRUE(ThrowsUserError([&] { ops::slice(m, p); }, {"Slice", "step", "0"}));
  p.steps = {1};
  EXPECT_TRUE(ThrowsUserError([&] { ops::slice(m, p); }, {"Slice", "same length"}));
}

TEST(SqueezeUnsqueeze, Axes) {
  const Tensor x = iota(Shape{1, 3, 1, 2});
  EXPECT_EQ(ops::squeeze(x).shape(), (Shape{3, 2}));
  EXPECT_EQ(ops::squeeze(x, {2}).shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(ops::squeeze(x, {-4}).shape(), (Shape{3, 1, 2}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::squeeze(x, {1}); }, {"Squeeze", "axis 1", "size 3"}));
  const Tensor y = iota(Shape{3, 2});
  EXPECT_EQ(ops::unsqueeze(y, {0}).shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(ops::unsqueeze(y, {1, 3}).shape(), (Shape{3, 1, 2, 1}));
  EXPECT_EQ(ops::unsqueeze(y, {-1}).shape(), (Shape{3, 2, 1}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::unsqueeze(y, {0, 1, 2, 3, 4, 5, 6}); }, {"Unsqueeze", "rank 9"}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::unsqueeze(y, {1, 1}); }, {"Unsqueeze", "twice"}));
}

TEST(Gather, AxesAndNegativeIndices) {
  // Data (3x2) rows [0,1], [2,3], [4,5] is Tessera {2, 3}; ONNX axis 0 (rows) is Tessera axis 1.
  const Tensor data = iota(Shape{2, 3});
  const Tensor idx = I(DType::i32, Shape{2, 2}, {0, 2, -1, 1});
  const Tensor rows = ops::gather(data, idx, 1);
  ASSERT_EQ(rows.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(rows.to_ints(), (std::vector<std::int64_t>{0, 1, 4, 5, 4, 5, 2, 3}));
  const Tensor cols = ops::gather(data, I(DType::i8, Shape{}, {1}), 0);
  EXPECT_EQ(cols.shape(), (Shape{3}));
  EXPECT_EQ(cols.to_ints(), (std::vector<std::int64_t>{1, 3, 5}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::gather(data, I(DType::i32, Shape{1}, {3}), 1); },
                              {"Gather", "index 3", "size 3"}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::gather(data, F(Shape{1}, {0}), 1); }, {"Gather", "f32"}));
}

TEST(Pad, Modes) {
  const Tensor x = F(Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  ops::PadParams p;
  p.pads = {1, 0, 2, 1};  // dim0: begin 1, end 2; dim1: begin 0, end 1
  p.value = 9;
  EXPECT_TRUE(Close(ops::pad(x, p), F(Shape{6, 3}, {9, 1, 2, 3, 9, 9, 9, 4, 5, 6, 9, 9,  //
                                                    9, 9, 9, 9, 9, 9})));
  p.mode = ops::PadMode::edge;
  EXPECT_TRUE(Close(ops::pad(x, p), F(Shape{6, 3}, {1, 1, 2, 3, 3, 3, 4, 4, 5, 6, 6, 6,  //
                                                    4, 4, 5, 6, 6, 6})));
  p.mode = ops::PadMode::reflect;
  EXPECT_TRUE(Close(ops::pad(x, p), F(Shape{6, 3}, {2, 1, 2, 3, 2, 1, 5, 4, 5, 6, 5, 4,  //
                                                    2, 1, 2, 3, 2, 1})));
  ops::PadParams crop;
  crop.pads = {-1, 0, 0, -1};
  EXPECT_TRUE(Close(ops::pad(x, crop), F(Shape{2, 1}, {2, 3})));
  ops::PadParams wide;
  wide.pads = {4, 0};
  wide.mode = ops::PadMode::reflect;
  EXPECT_TRUE(Close(ops::pad(F(Shape{3}, {1, 2, 3}), wide), F(Shape{7}, {1, 2, 3, 2, 1, 2, 3})));
  EXPECT_EQ(ops::parse_pad_mode("edge"), ops::PadMode::edge);
  EXPECT_TRUE(ThrowsUserError([] { ops::parse_pad_mode("wrap"); }, {"Pad", "wrap"}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::pad(x, ops::PadParams{{1, 1}}); }, {"Pad", "needs 4"}));
  const Tensor xi = I(DType::u8, Shape{2}, {5, 6});
  ops::PadParams pi;
  pi.pads = {1, 1};
  pi.value = 300;  // saturates to the dtype
  EXPECT_EQ(ops::pad(xi, pi).to_ints(), (std::vector<std::int64_t>{255, 5, 6, 255}));
}

TEST(Expand, Broadcast) {
  const Tensor x = F(Shape{1, 2}, {1, 2});
  EXPECT_TRUE(Close(ops::expand(x, Shape{3, 1}), F(Shape{3, 2}, {1, 1, 1, 2, 2, 2})));
  EXPECT_TRUE(Close(ops::expand(x, Shape{1, 1, 2}), F(Shape{1, 2, 2}, {1, 2, 1, 2})));
  EXPECT_TRUE(ThrowsUserError([&] { ops::expand(x, Shape{1, 3}); }, {"Expand", "(1, 3)"}));
}

TEST(ShapeOp, OuterFirstWithStartEnd) {
  const Tensor x(DType::f32, Shape{4, 3, 2});  // ONNX (2, 3, 4)
  const Tensor s = ops::shape(x);
  EXPECT_EQ(s.dtype(), DType::i64);
  EXPECT_EQ(s.to_ints(), (std::vector<std::int64_t>{2, 3, 4}));
  EXPECT_EQ(ops::shape(x, 1).to_ints(), (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(ops::shape(x, -1).to_ints(), (std::vector<std::int64_t>{4}));
  EXPECT_EQ(ops::shape(x, 0, -1).to_ints(), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(ops::shape(x, 2, 1).element_count(), 0);
  EXPECT_EQ(ops::shape(Tensor()).element_count(), 0);
}

}  // namespace
}  // namespace tessera
