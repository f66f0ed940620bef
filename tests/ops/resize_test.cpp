// Resize: nearest modes, coordinate transforms, linear, cubic, tf_crop_and_resize. The 2-D
// cases are the ONNX Resize examples (Operators.md) recomputed by hand.
#include "helpers.h"
#include "tessera/ops/reference.h"

namespace tessera {
namespace {

using test::Close;
using test::F;
using test::I;
using test::ThrowsUserError;

const Tensor k2x2 = F(Shape::nchw(1, 1, 2, 2), {1, 2, 3, 4});

TEST(Resize, NearestUpsampleHalfPixel) {
  ops::ResizeParams p;
  p.scales = {3, 2, 1, 1};  // W x3, H x2 (Tessera order)
  EXPECT_TRUE(Close(ops::resize(k2x2, p),
                    F(Shape::nchw(1, 1, 4, 6), {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,  //
                                                3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4})));
}

TEST(Resize, NearestDownsample) {
  const Tensor x = F(Shape::nchw(1, 1, 2, 4), {1, 2, 3, 4, 5, 6, 7, 8});
  ops::ResizeParams p;
  p.scales = {0.6f, 0.6f, 1, 1};
  EXPECT_TRUE(Close(ops::resize(x, p), F(Shape::nchw(1, 1, 1, 2), {1, 3})));
}

TEST(Resize, NearestModes) {
  const Tensor x = F(Shape{3}, {10, 20, 30});
  ops::ResizeParams p;
  p.coordinate_transformation_mode = ops::CoordinateTransform::asymmetric;
  p.sizes = {5};
  p.nearest_mode = ops::NearestMode::floor;
  EXPECT_TRUE(Close(ops::resize(x, p), F(Shape{5}, {10, 10, 20, 20, 30})));
  p.nearest_mode = ops::NearestMode::ceil;
  EXPECT_TRUE(Close(ops::resize(x, p), F(Shape{5}, {10, 20, 30, 30, 30})));
  p.nearest_mode = ops::NearestMode::round_prefer_ceil;
  EXPECT_TRUE(Close(ops::resize(x, p), F(Shape{5}, {10, 20, 20, 30, 30})));
  // Ties at .5: asymmetric x2 maps outputs to 0, 0.5, 1, 1.5.
  const Tensor y = F(Shape{2}, {10, 20});
  ops::ResizeParams t;
  t.coordinate_transformation_mode = ops::CoordinateTransform::asymmetric;
  t.scales = {2};
  EXPECT_TRUE(Close(ops::resize(y, t), F(Shape{4}, {10, 10, 20, 20})));
  t.nearest_mode = ops::NearestMode::round_prefer_ceil;
  EXPECT_TRUE(Close(ops::resize(y, t), F(Shape{4}, {10, 20, 20, 20})));
  // Integer data is copied exactly.
  const Tensor big = I(DType::i32, Shape{2}, {16777217, -5});
  EXPECT_EQ(ops::resize(big, t).to_ints(), (std::vector<std::int64_t>{16777217, -5, -5, -5}));
}

TEST(Resize, LinearHalfPixelAndAlignCorners) {
  ops::ResizeParams p;
  p.mode = ops::ResizeMode::linear;
  p.scales = {2, 2, 1, 1};
  EXPECT_TRUE(Close(ops::resize(k2x2, p),
                    F(Shape::nchw(1, 1, 4, 4), {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f,  //
                                                2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4})));
  p.coordinate_transformation_mode = ops::CoordinateTransform::align_corners;
  const float t = 1.0f / 3;
  EXPECT_TRUE(
      Close(ops::resize(k2x2, p),
            F(Shape::nchw(1, 1, 4, 4), {1, 1 + t, 1 + 2 * t, 2, 1 + 2 * t, 2, 2 + t, 2 + 2 * t,  //
                                        2 + t, 2 + 2 * t, 3, 3 + t, 3, 3 + t, 3 + 2 * t, 4})));
  // f16 input keeps its dtype.
  const Tensor h = ops::resize(k2x2.astype(DType::f16), p);
  EXPECT_EQ(h.dtype(), DType::f16);
}

TEST(Resize, AlignCornersWithScalesUsesUnflooredLength) {
  // ONNX example: 2x4 scaled by 0.6 gives 1x2; the resized width in the formula is 2.4, so the
  // second output samples x = 1 * 3 / 1.4 = 2.142857 (not 3).
  const Tensor x = F(Shape::nchw(1, 1, 2, 4), {1, 2, 3, 4, 5, 6, 7, 8});
  ops::ResizeParams p;
  p.mode = ops::ResizeMode::linear;
  p.coordinate_transformation_mode = ops::CoordinateTransform::align_corners;
  p.scales = {0.6f, 0.6f, 1, 1};
  EXPECT_TRUE(Close(ops::resize(x, p), F(Shape::nchw(1, 1, 1, 2), {1, 3.142857f}), 1e-5, 1e-5));
}

TEST(Resize, PytorchHalfPixelAndSymmetric) {
  const Tensor x = F(Shape{4}, {1, 2, 3, 4});
  ops::ResizeParams p;
  p.mode = ops::ResizeMode::linear;
  p.coordinate_transformation_mode = ops::CoordinateTransform::pytorch_half_pixel;
  p.sizes = {1};
  EXPECT_TRUE(Close(ops::resize(x, p), F(Shape{1}, {1})));  // half_pixel would give 2.5
  p.coordinate_transformation_mode = ops::CoordinateTransform::half_pixel;
  EXPECT_TRUE(Close(ops::resize(x, p), F(Shape{1}, {2.5f})));
  // half_pixel_symmetric with a non-integral output size: scale 0.6 gives 2.4 -> 2 outputs;
  // the 2/2.4 adjustment shifts the sampling grid toward the centre (offset 2*(1-2/2.4)=1/3).
  ops::ResizeParams s;
  s.mode = ops::ResizeMode::linear;
  s.coordinate_transformation_mode = ops::CoordinateTransform::half_pixel_symmetric;
  s.scales = {0.6f};
  const double off = 2.0 * (1.0 - 2.0 / (4.0 * static_cast<double>(0.6f)));
  const double x0 = off + 0.5 / static_cast<double>(0.6f) - 0.5;
  const double x1 = off + 1.5 / static_cast<double>(0.6f) - 0.5;
  EXPECT_TRUE(Close(ops::resize(x, s),
                    F(Shape{2}, {static_cast<float>(1 + x0), static_cast<float>(1 + x1)})));
}

TEST(Resize, TfCropAndResizeExtrapolates) {
  const Tensor x = F(Shape{4}, {1, 2, 3, 4});
  ops::ResizeParams p;
  p.mode = ops::ResizeMode::linear;
  p.coordinate_transformation_mode = ops::CoordinateTransform::tf_crop_and_resize;
  p.sizes = {3};
  p.roi = {0.0f, 1.5f};
  p.extrapolation_value = 7;
  // Sample points 0, 2.25, 4.5; the last lies outside [0, 3].
  EXPECT_TRUE(Close(ops::resize(x, p), F(Shape{3}, {1, 3.25f, 7})));
  p.mode = ops::ResizeMode::nearest;
  EXPECT_TRUE(Close(ops::resize(x, p), F(Shape{3}, {1, 3, 7})));
  p.roi = {0.0f};
  EXPECT_TRUE(ThrowsUserError([&] { ops::resize(x, p); }, {"Resize", "roi"}));
}

TEST(Resize, Cubic) {
  // Impulse [0, 0, 1, 0], asymmetric x2: output j samples x = j/2.
  const Tensor x = F(Shape{4}, {0, 0, 1, 0});
  ops::ResizeParams p;
  p.mode = ops::ResizeMode::cubic;
  p.coordinate_transformation_mode = ops::CoordinateTransform::asymmetric;
  p.scales = {2};
  const Tensor y = ops::resize(x, p);
  ASSERT_EQ(y.shape(), Shape{8});
  // Keys kernel with A = -0.75 at s = 0.5: weights (-0.09375, 0.59375, 0.59375, -0.09375).
  EXPECT_NEAR(y.at(3), 0.59375f, 1e-6);   // x = 1.5
  EXPECT_NEAR(y.at(1), -0.09375f, 1e-6);  // x = 0.5, tap -1 clamps to index 0 (value 0)
  EXPECT_NEAR(y.at(4), 1.0f, 1e-6);       // grid points are reproduced
  p.exclude_outside = true;               // tap -1 gets no weight; the rest renormalise
  EXPECT_NEAR(ops::resize(x, p).at(1), -0.09375f / 1.09375f, 1e-6);
  // A constant stays constant.
  ops::ResizeParams c;
  c.mode = ops::ResizeMode::cubic;
  c.sizes = {7, 5};
  const Tensor k = Tensor::full(DType::f32, Shape{3, 4}, 2.5);
  EXPECT_TRUE(Close(ops::resize(k, c), Tensor::full(DType::f32, Shape{7, 5}, 2.5)));
}

TEST(Resize, ParseAndErrors) {
  EXPECT_EQ(ops::parse_resize_mode("linear"), ops::ResizeMode::linear);
  EXPECT_EQ(ops::parse_coordinate_transform("align_corners"),
            ops::CoordinateTransform::align_corners);
  EXPECT_EQ(ops::parse_nearest_mode("ceil"), ops::NearestMode::ceil);
  EXPECT_TRUE(ThrowsUserError([] { ops::parse_resize_mode("area"); }, {"Resize", "area"}));
  EXPECT_EQ(ops::parse_coordinate_transform("tf_half_pixel_for_nn"),
            ops::CoordinateTransform::tf_half_pixel_for_nn);
  EXPECT_TRUE(ThrowsUserError([] { ops::parse_coordinate_transform("half_pixel_for_tf"); },
                              {"Resize", "half_pixel_for_tf"}));
  EXPECT_TRUE(ThrowsUserError([] { ops::parse_nearest_mode("up"); }, {"Resize", "up"}));
  ops::ResizeParams p;
  EXPECT_TRUE(ThrowsUserError([&] { ops::resize(k2x2, p); }, {"Resize", "exactly one"}));
  p.scales = {2, 2};
  EXPECT_TRUE(ThrowsUserError([&] { ops::resize(k2x2, p); }, {"Resize", "rank 4"}));
  p.scales = {2, 0, 1, 1};
  EXPECT_TRUE(ThrowsUserError([&] { ops::resize(k2x2, p); }, {"Resize", "non-positive"}));
}

}  // namespace
}  // namespace tessera
