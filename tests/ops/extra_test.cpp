// Ops beyond the core list: PRelu, HardSigmoid, HardSwish, Floor/Ceil/Round/Sign, logical ops,
// LessOrEqual/GreaterOrEqual, Mod, Tile, Range, TopK, CumSum, DepthToSpace, SpaceToDepth.
#include <cmath>

#include "helpers.h"
#include "tessera/ops/reference.h"

namespace tessera {
namespace {

using test::Close;
using test::F;
using test::I;
using test::ThrowsUserError;
using V = std::vector<std::int64_t>;

Tensor B(const Shape& s, const std::vector<std::int64_t>& v) {
  return Tensor::from_ints(DType::boolean, s, v);
}

TEST(Extra, PReluPerChannelSlope) {
  const Tensor x = F(Shape{2, 2}, {-1, 2, -3, 4});
  EXPECT_TRUE(
      Close(ops::prelu(x, F(Shape{1, 2}, {0.5f, 0.25f})), F(Shape{2, 2}, {-0.5f, 2, -0.75f, 4})));
  EXPECT_TRUE(Close(ops::prelu(x, F(Shape{1}, {0.1f})), F(Shape{2, 2}, {-0.1f, 2, -0.3f, 4})));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::prelu(x, F(Shape{3}, {1, 1, 1}));
      },
      {"PRelu", "slope (3)"}));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::prelu(x, F(Shape{2, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1}));
      },
      {"PRelu", "unidirectionally"}));
}

TEST(Extra, HardSigmoidAndHardSwish) {
  const Tensor x = F(Shape{4}, {-4, -1, 0, 4});
  EXPECT_TRUE(Close(ops::hard_sigmoid(x), F(Shape{4}, {0, 0.3f, 0.5f, 1})));
  EXPECT_TRUE(Close(ops::hard_sigmoid(x, 0.5f, 0.0f), F(Shape{4}, {0, 0, 0, 1})));
  EXPECT_TRUE(Close(ops::hard_swish(x), F(Shape{4}, {0, -1.0f / 3, 0, 4})));
}

TEST(Extra, Rounding) {
  const Tensor x = F(Shape{6}, {-1.5f, -0.5f, 0.5f, 1.5f, 2.5f, -2.2f});
  EXPECT_TRUE(Close(ops::floor(x), F(Shape{6}, {-2, -1, 0, 1, 2, -3})));
  EXPECT_TRUE(Close(ops::ceil(x), F(Shape{6}, {-1, -0.0f, 1, 2, 3, -2})));
  EXPECT_TRUE(Close(ops::round(x), F(Shape{6}, {-2, -0.0f, 0, 2, 2, -2})));
  EXPECT_TRUE(Close(ops::sign(x), F(Shape{6}, {-1, -1, 1, 1, 1, -1})));
  EXPECT_EQ(ops::sign(I(DType::i8, Shape{3}, {-7, 0, 9})).to_ints(), (V{-1, 0, 1}));
  EXPECT_EQ(ops::floor(I(DType::i32, Shape{1}, {5})).to_ints(), (V{5}));
}

TEST(Extra, Logical) {
  const Tensor a = B(Shape{4}, {0, 0, 1, 1}), b = B(Shape{4}, {0, 1, 0, 1});
  EXPECT_EQ(ops::logical_and(a, b).to_ints(), (V{0, 0, 0, 1}));
  EXPECT_EQ(ops::logical_or(a, b).to_ints(), (V{0, 1, 1, 1}));
  EXPECT_EQ(ops::logical_xor(a, b).to_ints(), (V{0, 1, 1, 0}));
  EXPECT_EQ(ops::logical_not(a).to_ints(), (V{1, 1, 0, 0}));
  EXPECT_EQ(ops::logical_and(a, B(Shape{1, 2}, {1, 0})).shape(), (Shape{4, 2}));
  EXPECT_TRUE(ThrowsUserError([] { ops::logical_not(F(Shape{1}, {1})); }, {"Not", "bool"}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::logical_or(a, F(Shape{1}, {1})); }, {"Or", "f32"}));
  const Tensor x = F(Shape{3}, {1, 2, 3}), y = F(Shape{1}, {2});
  EXPECT_EQ(ops::less_or_equal(x, y).to_ints(), (V{1, 1, 0}));
  EXPECT_EQ(ops::greater_or_equal(x, y).to_ints(), (V{0, 1, 1}));
}

TEST(Extra, ModSigns) {
  const Tensor a = I(DType::i32, Shape{4}, {7, -7, 7, -7}),
               b = I(DType::i32, Shape{4}, {3, 3, -3, -3});
  EXPECT_EQ(ops::mod(a, b).to_ints(), (V{1, 2, -2, -1}));        // Python %
  EXPECT_EQ(ops::mod(a, b, true).to_ints(), (V{1, -1, 1, -1}));  // C fmod
  EXPECT_TRUE(Close(ops::mod(F(Shape{2}, {5.5f, -5.5f}), F(Shape{1}, {2}), true),
                    F(Shape{2}, {1.5f, -1.5f})));
  EXPECT_TRUE(
      ThrowsUserError([] { ops::mod(F(Shape{1}, {1}), F(Shape{1}, {1})); }, {"Mod", "fmod"}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::mod(a, I(DType::i32, Shape{1}, {0})); }, {"Mod", "zero"}));
}

TEST(Extra, Tile) {
  const Tensor x = F(Shape{2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(Close(ops::tile(x, {2, 1}), F(Shape{4, 2}, {1, 2, 1, 2, 3, 4, 3, 4})));
  EXPECT_TRUE(Close(ops::tile(x, {1, 2}), F(Shape{2, 4}, {1, 2, 3, 4, 1, 2, 3, 4})));
  EXPECT_EQ(ops::tile(x, {0, 3}).shape(), (Shape{0, 6}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::tile(x, {2}); }, {"Tile", "rank 2"}));
}

TEST(Extra, Range) {
  EXPECT_EQ(ops::range(10, 4, -3, DType::i32).to_ints(), (V{10, 7}));
  EXPECT_TRUE(Close(ops::range(1, 2, 0.25, DType::f32), F(Shape{4}, {1, 1.25f, 1.5f, 1.75f})));
  EXPECT_EQ(ops::range(3, 1, 1, DType::i16).element_count(), 0);
  EXPECT_TRUE(ThrowsUserError([] { ops::range(0, 1, 0, DType::f32); }, {"Range", "delta"}));
}

TEST(Extra, TopK) {
  // Rows (ONNX axis -1) of (3x4) [[0,1,2,3],[4,5,6,7],[11,10,9,8]].
  const Tensor x = F(Shape{4, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 11, 10, 9, 8});
  const ops::TopKResult r = ops::top_k(x, 3, 0);
  EXPECT_TRUE(Close(r.values, F(Shape{3, 3}, {3, 2, 1, 7, 6, 5, 11, 10, 9})));
  EXPECT_EQ(r.indices.to_ints(), (V{3, 2, 1, 3, 2, 1, 0, 1, 2}));
  const ops::TopKResult s = ops::top_k(F(Shape{4}, {2, 1, 2, 1}), 3, 0, false);
  EXPECT_TRUE(Close(s.values, F(Shape{3}, {1, 1, 2})));
  EXPECT_EQ(s.indices.to_ints(), (V{1, 3, 0}));   // ties: lower index first
  const ops::TopKResult c = ops::top_k(x, 1, 1);  // along columns
  EXPECT_EQ(c.indices.to_ints(), (V{2, 2, 2, 2}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::top_k(x, 5, 0); }, {"TopK", "k = 5"}));
}

TEST(Extra, CumSum) {
  const Tensor x = F(Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(Close(ops::cum_sum(x, 0), F(Shape{3, 2}, {1, 3, 6, 4, 9, 15})));
  EXPECT_TRUE(Close(ops::cum_sum(x, 0, true), F(Shape{3, 2}, {0, 1, 3, 0, 4, 9})));
  EXPECT_TRUE(Close(ops::cum_sum(x, 0, false, true), F(Shape{3, 2}, {6, 5, 3, 15, 11, 6})));
  EXPECT_TRUE(Close(ops::cum_sum(x, 0, true, true), F(Shape{3, 2}, {5, 3, 0, 11, 6, 0})));
  EXPECT_TRUE(Close(ops::cum_sum(x, 1), F(Shape{3, 2}, {1, 2, 3, 5, 7, 9})));
  EXPECT_EQ(ops::cum_sum(I(DType::i32, Shape{3}, {1, 2, 3}), 0).to_ints(), (V{1, 3, 6}));
}

TEST(Extra, DepthToSpaceAndBack) {
  // N=1, C=4, H=1, W=2; channel c holds 10c + w.
  const Tensor x = F(Shape::nchw(1, 4, 1, 2), {0, 1, 10, 11, 20, 21, 30, 31});
  // DCR: output (y, x) = (i, j) block pixel takes channel i*2 + j.
  const Tensor dcr = ops::depth_to_space(x, 2);
  EXPECT_TRUE(Close(dcr, F(Shape::nchw(1, 1, 2, 4), {0, 10, 1, 11, 20, 30, 21, 31})));
  EXPECT_TRUE(Close(ops::space_to_depth(dcr, 2), x));
  // CRD with one output channel is the same channel order here.
  EXPECT_TRUE(Close(ops::depth_to_space(x, 2, true), dcr));
  const Tensor x8 = test::random_tensor(Shape::nchw(2, 8, 3, 2), 4);
  const Tensor crd = ops::depth_to_space(x8, 2, true);
  // CRD: output channel c, block (i, j) reads input channel c*4 + i*2 + j.
  EXPECT_EQ(crd.at({1, 3, 1, 1}), x8.at({0, 1, 1 * 4 + 1 * 2 + 1, 1}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::depth_to_space(x, 3); }, {"DepthToSpace", "multiple"}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::space_to_depth(x, 2); }, {"SpaceToDepth", "multiples"}));
}

}  // namespace
}  // namespace tessera
