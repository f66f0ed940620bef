// ReduceSum/Mean/Max/Min/Prod and ArgMax/ArgMin.
#include <cmath>

#include "helpers.h"
#include "tessera/ops/reference.h"

namespace tessera {
namespace {

using test::Close;
using test::F;
using test::I;
using test::ThrowsUserError;

// (2x3) [[1,2,3],[4,5,6]] is Tessera {3, 2}.
const Tensor kX = F(Shape{3, 2}, {1, 2, 3, 4, 5, 6});

TEST(Reduce, AxesAndKeepdims) {
  ops::ReduceParams rows;
  rows.axes = {0};  // along each row (ONNX axis 1)
  EXPECT_TRUE(Close(ops::reduce_sum(kX, rows), F(Shape{1, 2}, {6, 15})));
  rows.keepdims = false;
  EXPECT_TRUE(Close(ops::reduce_sum(kX, rows), F(Shape{2}, {6, 15})));
  ops::ReduceParams cols;
  cols.axes = {-1};
  EXPECT_TRUE(Close(ops::reduce_mean(kX, cols), F(Shape{3, 1}, {2.5f, 3.5f, 4.5f})));
  EXPECT_TRUE(Close(ops::reduce_max(kX, cols), F(Shape{3, 1}, {4, 5, 6})));
  EXPECT_TRUE(Close(ops::reduce_min(kX, cols), F(Shape{3, 1}, {1, 2, 3})));
  EXPECT_TRUE(Close(ops::reduce_prod(kX, cols), F(Shape{3, 1}, {4, 10, 18})));
  ops::ReduceParams all;
  EXPECT_TRUE(Close(ops::reduce_sum(kX, all), F(Shape{1, 1}, {21})));
  all.keepdims = false;
  const Tensor s = ops::reduce_prod(kX, all);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.at(0), 720.0f);
  ops::ReduceParams noop;
  noop.noop_with_empty_axes = true;
  EXPECT_TRUE(equal(ops::reduce_sum(kX, noop), kX));
}

TEST(Reduce, MiddleAxesOfRank5AgainstLoop) {
  const Tensor x = test::random_tensor(Shape{3, 4, 5, 2, 3}, 7);
  ops::ReduceParams p;
  p.axes = {1, 3};
  const Tensor y = ops::reduce_sum(x, p);
  ASSERT_EQ(y.shape(), (Shape{3, 1, 5, 1, 3}));
  for (std::int64_t a = 0; a < 3; ++a)
    for (std::int64_t c = 0; c < 5; ++c)
      for (std::int64_t e = 0; e < 3; ++e) {
        double sum = 0;
        for (std::int64_t b = 0; b < 4; ++b)
          for (std::int64_t d = 0; d < 2; ++d) sum += x.at({a, b, c, d, e});
        EXPECT_NEAR(y.at({a, 0, c, 0, e}), sum, 1e-5);
      }
}

TEST(Reduce, IntegersEmptyAndNaN) {
  const Tensor xi = I(DType::i32, Shape{3}, {7, -2, 4});
  EXPECT_EQ(ops::reduce_sum(xi).to_ints(), (std::vector<std::int64_t>{9}));
  EXPECT_EQ(ops::reduce_max(xi).to_ints(), (std::vector<std::int64_t>{7}));
  EXPECT_EQ(ops::reduce_mean(xi).to_ints(), (std::vector<std::int64_t>{3}));
  const Tensor empty(DType::f32, Shape{0, 2});
  ops::ReduceParams p;
  p.axes = {0};
  EXPECT_TRUE(Close(ops::reduce_sum(empty, p), F(Shape{1, 2}, {0, 0})));
  EXPECT_TRUE(Close(ops::reduce_prod(empty, p), F(Shape{1, 2}, {1, 1})));
  EXPECT_TRUE(std::isinf(ops::reduce_max(empty, p).at(0)));
  EXPECT_TRUE(std::isnan(ops::reduce_max(F(Shape{2}, {std::nanf(""), 1})).at(0)));
  EXPECT_TRUE(std::isnan(ops::reduce_min(F(Shape{2}, {1, std::nanf("")})).at(0)));
  const Tensor h = ops::reduce_mean(Tensor::from_vector(Shape{2}, {1, 2}, DType::f16));
  EXPECT_EQ(h.dtype(), DType::f16);
  EXPECT_EQ(h.at(0), 1.5f);
}

TEST(Reduce, Errors) {
  ops::ReduceParams p;
  p.axes = {2};
  EXPECT_TRUE(ThrowsUserError([&] { ops::reduce_sum(kX, p); }, {"ReduceSum", "axis 2", "rank 2"}));
  p.axes = {0, -2};
  EXPECT_TRUE(ThrowsUserError([&] { ops::reduce_max(kX, p); }, {"ReduceMax", "twice"}));
  EXPECT_TRUE(ThrowsUserError([] { ops::reduce_sum(Tensor(DType::boolean, Shape{2})); },
                              {"ReduceSum", "bool"}));
}

TEST(ArgMax, KeepdimsAndTies) {
  const Tensor x = F(Shape{3, 2}, {1, 5, 5, 7, 0, 7});
  EXPECT_EQ(ops::argmax(x, 0).shape(), (Shape{1, 2}));
  EXPECT_EQ(ops::argmax(x, 0).to_ints(), (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(ops::argmax(x, 0, true, true).to_ints(), (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(ops::argmax(x, 1, false).to_ints(), (std::vector<std::int64_t>{1, 0, 1}));
  EXPECT_EQ(ops::argmin(x, 0, false).to_ints(), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(ops::argmin(x, 1, false, true).to_ints(), (std::vector<std::int64_t>{0, 1, 0}));
  EXPECT_EQ(ops::argmax(x, 0).dtype(), DType::i64);
  EXPECT_EQ(ops::argmax(I(DType::u8, Shape{3}, {2, 9, 9}), 0, false).to_ints(),
            (std::vector<std::int64_t>{1}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::argmax(x, 3); }, {"ArgMax", "axis 3"}));
  EXPECT_TRUE(
      ThrowsUserError([] { ops::argmin(Tensor(DType::f32, Shape{0}), 0); }, {"ArgMin", "empty"}));
}

}  // namespace
}  // namespace tessera
