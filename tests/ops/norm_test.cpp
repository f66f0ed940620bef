// BatchNormalization, LayerNormalization, InstanceNormalization, Softmax, LogSoftmax.
#include <cmath>

#include "helpers.h"
#include "tessera/ops/reference.h"

namespace tessera {
namespace {

using test::Close;
using test::F;
using test::ThrowsUserError;

TEST(BatchNorm, PerChannel) {
  // N=1, C=2, H=1, W=2.
  const Tensor x = F(Shape::nchw(1, 2, 1, 2), {1, 3, 10, 20});
  const Tensor scale = F(Shape{2}, {2, 1}), bias = F(Shape{2}, {0, 1});
  const Tensor mean = F(Shape{2}, {2, 10}), var = F(Shape{2}, {4, 100});
  const Tensor y = ops::batch_normalization(x, scale, bias, mean, var, 0.0f);
  EXPECT_TRUE(Close(y, F(Shape::nchw(1, 2, 1, 2), {-1, 1, 1, 2})));
  // Rank 2 (N, C): C is dim 0.
  const Tensor x2 = F(Shape{2, 2}, {2, 10, 4, 30});
  EXPECT_TRUE(Close(ops::batch_normalization(x2, scale, bias, mean, var, 0.0f),
                    F(Shape{2, 2}, {0, 1, 2, 3})));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::batch_normalization(x, F(Shape{3}, {1, 1, 1}), bias, mean, var);
      },
      {"BatchNormalization", "scale", "2 elements"}));
}

TEST(LayerNorm, LastAxisAndTwoAxes) {
  // Rows [1,2,3] and [2,4,6] normalised over dim 0 (ONNX axis -1).
  const Tensor x = F(Shape{3, 2}, {1, 2, 3, 2, 4, 6});
  const Tensor scale = F(Shape{3}, {1, 1, 2}), bias = F(Shape{3}, {0, 1, 0});
  const float k = 1.0f / std::sqrt(2.0f / 3.0f);
  const Tensor y = ops::layer_normalization(x, scale, &bias, 0, 0.0f);
  EXPECT_TRUE(Close(y, F(Shape{3, 2}, {-k, 1, 2 * k, -k, 1, 2 * k}), 1e-5, 1e-5));
  // Over both dims (ONNX axis 0 of a rank-2 tensor): mean 3, variance 8/3 of {1,2,3,2,4,6}.
  const Tensor s6 = Tensor::full(DType::f32, Shape{3, 2}, 1.0);
  const Tensor y2 = ops::layer_normalization(x, s6, nullptr, 1, 0.0f);
  const float inv = 1.0f / std::sqrt(8.0f / 3.0f);
  EXPECT_TRUE(Close(y2, F(Shape{3, 2}, {-2 * inv, -inv, 0, -inv, inv, 3 * inv}), 1e-5, 1e-5));
  // A scalar scale broadcasts.
  EXPECT_TRUE(Close(ops::layer_normalization(x, Tensor::scalar(DType::f32, 1), nullptr, 0, 0.0f),
                    F(Shape{3, 2}, {-k, 0, k, -k, 0, k}), 1e-5, 1e-5));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::layer_normalization(x, F(Shape{2}, {1, 1}), nullptr, 0);
      },
      {"LayerNormalization", "Scale (2)", "(3)"}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::layer_normalization(x, scale, nullptr, 2); },
                              {"LayerNormalization", "axis 2"}));
}

TEST(LayerNorm, MeanAndInvStdDevOutputs) {
  // Rows [1,2,3] and [2,4,6]: means 2 and 4, variances 2/3 and 8/3 (epsilon 0).
  const Tensor x = F(Shape{3, 2}, {1, 2, 3, 2, 4, 6});
  ops::LayerNormStats stats;
  ops::layer_normalization(x, Tensor::scalar(DType::f32, 1), nullptr, 0, 0.0f, &stats);
  EXPECT_EQ(stats.mean.shape(), (Shape{1, 2}));
  EXPECT_TRUE(Close(stats.mean, F(Shape{1, 2}, {2, 4}), 1e-6, 1e-6));
  EXPECT_TRUE(Close(stats.inv_std_dev,
                    F(Shape{1, 2}, {1.0f / std::sqrt(2.0f / 3.0f), 1.0f / std::sqrt(8.0f / 3.0f)}),
                    1e-6, 1e-6));
}

TEST(InstanceNorm, PerInstanceAndChannel) {
  const Tensor x = F(Shape::nchw(1, 2, 1, 4), {1, 2, 3, 4, 5, 5, 5, 5});
  const Tensor scale = F(Shape{2}, {1, 3}), bias = F(Shape{2}, {0, 7});
  const float inv = 1.0f / std::sqrt(1.25f);
  const Tensor y =
      ops::instance_normalization(x, scale, bias);  // eps keeps the flat channel finite
  EXPECT_TRUE(Close(
      y, F(Shape::nchw(1, 2, 1, 4), {-1.5f * inv, -0.5f * inv, 0.5f * inv, 1.5f * inv, 7, 7, 7, 7}),
      1e-5, 1e-5));
}

TEST(Softmax, AlongInnerAndOuterAxes) {
  const Tensor x = F(Shape{3, 2}, {1, 2, 3, 0, 0, 0});
  const float e1 = std::exp(1.0f), e2 = std::exp(2.0f), e3 = std::exp(3.0f), s = e1 + e2 + e3;
  EXPECT_TRUE(Close(ops::softmax(x, 0),
                    F(Shape{3, 2}, {e1 / s, e2 / s, e3 / s, 1.0f / 3, 1.0f / 3, 1.0f / 3})));
  // Axis 1 (ONNX axis 0 here): columns [1,0], [2,0], [3,0].
  auto col = [](float a) { return std::exp(a) / (std::exp(a) + 1.0f); };
  EXPECT_TRUE(Close(ops::softmax(x, 1),
                    F(Shape{3, 2}, {col(1), col(2), col(3), 1 - col(1), 1 - col(2), 1 - col(3)})));
  EXPECT_TRUE(Close(ops::softmax(x, -1), ops::softmax(x, 1)));
  EXPECT_TRUE(Close(ops::log_softmax(x, 0), ops::log(ops::softmax(x, 0)), 1e-5, 1e-5));
  // Large inputs must not overflow.
  const Tensor big = F(Shape{2}, {1000, 1000});
  EXPECT_TRUE(Close(ops::softmax(big, 0), F(Shape{2}, {0.5f, 0.5f})));
  EXPECT_TRUE(Close(ops::log_softmax(big, 0), F(Shape{2}, {-std::log(2.0f), -std::log(2.0f)})));
  EXPECT_TRUE(ThrowsUserError([&] { ops::softmax(x, 2); }, {"Softmax", "axis 2", "[-2, 1]"}));
}

TEST(Softmax, MiddleAxisOfRank4) {
  const Tensor x = test::random_tensor(Shape{5, 3, 4, 2}, 9);
  const Tensor y = ops::softmax(x, 2);
  // Every (i, j, l) line along dim 2 sums to 1.
  for (std::int64_t l = 0; l < 2; ++l)
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t i = 0; i < 5; ++i) {
        double sum = 0;
        for (std::int64_t k = 0; k < 4; ++k) sum += y.at({i, j, k, l});
        EXPECT_NEAR(sum, 1.0, 1e-6);
      }
  EXPECT_NEAR(y.at({1, 2, 3, 1}) / y.at({1, 2, 0, 1}),
              std::exp(x.at({1, 2, 3, 1}) - x.at({1, 2, 0, 1})), 1e-5);
}

}  // namespace
}  // namespace tessera
