// Ops added for ONNX coverage: trigonometric/hyperbolic, Softsign, Celu, ThresholdedRelu,
// Shrink, IsInf, IsNaN, BitShift, Mean, ReduceL1/L2/LogSum/LogSumExp/SumSquare, Hardmax,
// GatherElements, ScatterElements, GatherND, ScatterND, OneHot, EyeLike, Trilu, Compress,
// ReverseSequence, LRN, Einsum, Det, the window functions and MaxUnpool. Expected values are
// worked out by hand (ONNX matrices [[a, b, c], [d, e, f]] are Tessera Shape{3, 2} holding
// a..f in that order).
#include <cmath>
#include <limits>

#include "helpers.h"
#include "tessera/ops/reference.h"

namespace tessera {
namespace {

using test::Close;
using test::F;
using test::I;
using test::ThrowsUserError;
using V = std::vector<std::int64_t>;

TEST(More, TrigonometricAndHyperbolic) {
  const Tensor x = F(Shape{3}, {0.0f, 0.5f, -1.0f});
  EXPECT_TRUE(Close(ops::sin(x), F(Shape{3}, {0.0f, 0.47942554f, -0.84147098f})));
  EXPECT_TRUE(Close(ops::cos(x), F(Shape{3}, {1.0f, 0.87758256f, 0.54030231f})));
  EXPECT_TRUE(Close(ops::tan(x), F(Shape{3}, {0.0f, 0.54630249f, -1.55740772f})));
  EXPECT_TRUE(Close(ops::asin(x), F(Shape{3}, {0.0f, 0.52359878f, -1.57079633f})));
  EXPECT_TRUE(Close(ops::acos(x), F(Shape{3}, {1.57079633f, 1.04719755f, 3.14159265f})));
  EXPECT_TRUE(Close(ops::atan(x), F(Shape{3}, {0.0f, 0.46364761f, -0.78539816f})));
  EXPECT_TRUE(Close(ops::sinh(x), F(Shape{3}, {0.0f, 0.52109531f, -1.17520119f})));
  EXPECT_TRUE(Close(ops::cosh(x), F(Shape{3}, {1.0f, 1.12762597f, 1.54308063f})));
  EXPECT_TRUE(Close(ops::asinh(x), F(Shape{3}, {0.0f, 0.48121183f, -0.88137359f})));
  EXPECT_TRUE(Close(ops::acosh(F(Shape{2}, {1.0f, 2.0f})), F(Shape{2}, {0.0f, 1.3169579f})));
  EXPECT_TRUE(Close(ops::atanh(x.reshape(Shape{3})),
                    F(Shape{3}, {0.0f, 0.54930614f, -std::numeric_limits<float>::infinity()})));
  EXPECT_TRUE(ThrowsUserError([] { ops::sin(I(DType::i32, Shape{1}, {1})); }, {"Sin"}));
}

TEST(More, Activations) {
  const Tensor x = F(Shape{5}, {-2.0f, -0.5f, 0.0f, 0.5f, 3.0f});
  EXPECT_TRUE(Close(ops::softsign(x), F(Shape{5}, {-2.0f / 3, -1.0f / 3, 0, 1.0f / 3, 0.75f})));
  // Celu alpha 2: x < 0 -> 2 * (exp(x / 2) - 1).
  EXPECT_TRUE(Close(ops::celu(x, 2.0f),
                    F(Shape{5}, {2 * (0.36787944f - 1), 2 * (0.77880078f - 1), 0, 0.5f, 3})));
  EXPECT_TRUE(Close(ops::thresholded_relu(x, 0.5f), F(Shape{5}, {0, 0, 0, 0, 3})));
  EXPECT_TRUE(Close(ops::shrink(x, 0.5f, 0.25f), F(Shape{5}, {-1.75f, 0, 0, 0, 2.75f})));
  EXPECT_EQ(ops::shrink(I(DType::i32, Shape{3}, {-3, 1, 4}), 1.5f, 1.0f).to_ints(), (V{-2, 0, 3}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::celu(x, 0.0f); }, {"Celu", "alpha"}));
}

TEST(More, IsInfIsNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = F(Shape{4}, {inf, -inf, std::nanf(""), 1.0f});
  EXPECT_EQ(ops::is_inf(x).to_ints(), (V{1, 1, 0, 0}));
  EXPECT_EQ(ops::is_inf(x, false, true).to_ints(), (V{1, 0, 0, 0}));
  EXPECT_EQ(ops::is_inf(x, true, false).to_ints(), (V{0, 1, 0, 0}));
  EXPECT_EQ(ops::is_nan(x).to_ints(), (V{0, 0, 1, 0}));
  EXPECT_EQ(ops::is_nan(x).dtype(), DType::boolean);
}

TEST(More, BitShift) {
  const Tensor x = I(DType::u8, Shape{3}, {16, 4, 1});
  EXPECT_EQ(ops::bit_shift(x, I(DType::u8, Shape{3}, {1, 2, 3}), false).to_ints(), (V{8, 1, 0}));
  EXPECT_EQ(ops::bit_shift(x, I(DType::u8, Shape{1}, {4}), true).to_ints(), (V{0, 64, 16}));
  EXPECT_EQ(
      ops::bit_shift(I(DType::u32, Shape{1}, {1}), I(DType::u32, Shape{1}, {40}), true).to_ints(),
      (V{0}));
  EXPECT_TRUE(ThrowsUserError(
      [] { ops::bit_shift(I(DType::i32, Shape{1}, {1}), I(DType::i32, Shape{1}, {1}), true); },
      {"BitShift", "unsigned"}));
}

TEST(More, Mean) {
  EXPECT_TRUE(Close(ops::mean({F(Shape{2}, {1, 2}), F(Shape{2}, {3, 6}), F(Shape{1}, {2})}),
                    F(Shape{2}, {2, 10.0f / 3})));
}

TEST(More, Reductions) {
  // ONNX [[1, -2], [3, -4]].
  const Tensor x = F(Shape{2, 2}, {1, -2, 3, -4});
  ops::ReduceParams rows{{0}, false, false};  // Tessera dim 0 = ONNX axis 1
  EXPECT_TRUE(Close(ops::reduce_l1(x, rows), F(Shape{2}, {3, 7})));
  EXPECT_TRUE(Close(ops::reduce_l2(x, rows), F(Shape{2}, {std::sqrt(5.0f), 5})));
  EXPECT_TRUE(Close(ops::reduce_sum_square(x, rows), F(Shape{2}, {5, 25})));
  EXPECT_TRUE(Close(ops::reduce_sum_square(x), F(Shape{1, 1}, {30})));
  const Tensor y = F(Shape{2}, {1, 2});
  EXPECT_TRUE(Close(ops::reduce_log_sum(y), F(Shape{1}, {std::log(3.0f)})));
  EXPECT_TRUE(Close(ops::reduce_log_sum_exp(y), F(Shape{1}, {2.31326169f})));
  EXPECT_EQ(ops::reduce_l1(I(DType::i32, Shape{3}, {-1, 2, -3})).to_ints(), (V{6}));
  EXPECT_EQ(ops::reduce_sum_square(I(DType::i32, Shape{2}, {-3, 2})).to_ints(), (V{13}));
  EXPECT_TRUE(ThrowsUserError([] { ops::reduce_l2(I(DType::i32, Shape{1}, {1})); }, {"ReduceL2"}));
}

TEST(More, Hardmax) {
  // ONNX [[1, 3, 3], [4, 2, 0]] along the last axis: first maximum wins.
  const Tensor x = F(Shape{3, 2}, {1, 3, 3, 4, 2, 0});
  EXPECT_TRUE(Close(ops::hardmax(x, 0), F(Shape{3, 2}, {0, 1, 0, 1, 0, 0})));
  EXPECT_TRUE(Close(ops::hardmax(x, 1), F(Shape{3, 2}, {0, 1, 1, 1, 0, 0})));
}

TEST(More, GatherAndScatterElements) {
  // ONNX data [[1, 2], [3, 4]], indices [[0, 0], [1, 0]], axis 1 -> [[1, 1], [4, 3]].
  const Tensor data = F(Shape{2, 2}, {1, 2, 3, 4});
  const Tensor idx = I(DType::i32, Shape{2, 2}, {0, 0, 1, 0});
  EXPECT_TRUE(Close(ops::gather_elements(data, idx, 0), F(Shape{2, 2}, {1, 1, 4, 3})));
  // Axis 0 (Tessera 1) with a negative index: [[data[0][0], data[-2 -> 0][1]], ...].
  EXPECT_TRUE(Close(ops::gather_elements(data, I(DType::i32, Shape{2, 1}, {1, -2}), 1),
                    F(Shape{2, 1}, {3, 2})));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::gather_elements(data, I(DType::i32, Shape{2, 2}, {0, 2, 0, 0}), 0);
      },
      {"GatherElements", "index 2", "out of range"}));
  // ONNX example: data [[1, 2, 3, 4, 5]], indices [[1, 3]], updates [[1.1, 2.1]], axis 1.
  const Tensor d5 = F(Shape{5, 1}, {1, 2, 3, 4, 5});
  const Tensor i2 = I(DType::i32, Shape{2, 1}, {1, 3});
  const Tensor u2 = F(Shape{2, 1}, {1.1f, 2.1f});
  EXPECT_TRUE(Close(ops::scatter_elements(d5, i2, u2, 0), F(Shape{5, 1}, {1, 1.1f, 3, 2.1f, 5})));
  // Duplicate indices with add accumulate.
  EXPECT_TRUE(Close(ops::scatter_elements(d5, I(DType::i32, Shape{2, 1}, {1, 1}), u2, 0,
                                          ops::ScatterReduction::add),
                    F(Shape{5, 1}, {1, 5.2f, 3, 4, 5})));
  EXPECT_TRUE(Close(ops::scatter_elements(d5, i2, u2, 0, ops::ScatterReduction::max),
                    F(Shape{5, 1}, {1, 2, 3, 4, 5})));
  EXPECT_EQ(ops::parse_scatter_reduction("mul"), ops::ScatterReduction::mul);
  EXPECT_TRUE(ThrowsUserError([] { ops::parse_scatter_reduction("avg"); }, {"avg"}));
}

TEST(More, GatherND) {
  // ONNX data [[0, 1], [2, 3]], indices [[0, 0], [1, 1]] -> [0, 3].
  const Tensor data = I(DType::i32, Shape{2, 2}, {0, 1, 2, 3});
  EXPECT_EQ(ops::gather_nd(data, I(DType::i32, Shape{2, 2}, {0, 0, 1, 1})).to_ints(), (V{0, 3}));
  // indices [[1], [0]] -> rows [[2, 3], [0, 1]].
  EXPECT_EQ(ops::gather_nd(data, I(DType::i32, Shape{1, 2}, {1, 0})).to_ints(), (V{2, 3, 0, 1}));
  EXPECT_EQ(ops::gather_nd(data, I(DType::i32, Shape{1, 2}, {1, 0})).shape(), (Shape{2, 2}));
  // batch_dims 1: data [[[0, 1], [2, 3]], [[4, 5], [6, 7]]], indices [[1], [0]] -> [[2, 3], [4,
  // 5]].
  const Tensor d3 = I(DType::i32, Shape{2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(ops::gather_nd(d3, I(DType::i32, Shape{1, 2}, {1, 0}), 1).to_ints(), (V{2, 3, 4, 5}));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::gather_nd(data, I(DType::i32, Shape{3, 1}, {0, 0, 0}));
      },
      {"GatherND", "last dim"}));
}

TEST(More, ScatterND) {
  // ONNX example: data [1..8], indices [[4], [3], [1], [7]], updates [9, 10, 11, 12].
  const Tensor data = F(Shape{8}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor idx = I(DType::i32, Shape{1, 4}, {4, 3, 1, 7});
  EXPECT_TRUE(Close(ops::scatter_nd(data, idx, F(Shape{4}, {9, 10, 11, 12})),
                    F(Shape{8}, {1, 11, 3, 10, 9, 6, 7, 12})));
  EXPECT_TRUE(
      Close(ops::scatter_nd(data, idx, F(Shape{4}, {9, 10, 11, 12}), ops::ScatterReduction::mul),
            F(Shape{8}, {1, 22, 3, 40, 45, 6, 7, 96})));
  // Row updates: data [[1, 2], [3, 4]], indices [[1]], updates [[7, 8]].
  EXPECT_TRUE(Close(ops::scatter_nd(F(Shape{2, 2}, {1, 2, 3, 4}), I(DType::i32, Shape{1, 1}, {1}),
                                    F(Shape{2, 1}, {7, 8})),
                    F(Shape{2, 2}, {1, 2, 7, 8})));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::scatter_nd(data, idx, F(Shape{3}, {1, 2, 3}));
      },
      {"ScatterND", "updates"}));
}

TEST(More, OneHot) {
  // indices [0, 2, -1], depth 3, values [0, 5], ONNX axis -1 -> [[5,0,0],[0,0,5],[0,0,5]].
  const Tensor idx = I(DType::i32, Shape{3}, {0, 2, -1});
  const Tensor vals = F(Shape{2}, {0, 5});
  EXPECT_TRUE(Close(ops::one_hot(idx, 3, vals, 0), F(Shape{3, 3}, {5, 0, 0, 0, 0, 5, 0, 0, 5})));
  // ONNX axis 0 (Tessera position 1): the transpose.
  EXPECT_TRUE(Close(ops::one_hot(idx, 3, vals, 1), F(Shape{3, 3}, {5, 0, 0, 0, 0, 0, 0, 5, 5})));
  // Out of range gives an all-off row.
  EXPECT_TRUE(
      Close(ops::one_hot(I(DType::i32, Shape{1}, {7}), 2, vals, 0), F(Shape{2, 1}, {0, 0})));
}

TEST(More, EyeLikeAndTrilu) {
  // 2 rows, 3 columns, k = 1: ones at (0, 1) and (1, 2).
  EXPECT_TRUE(Close(ops::eye_like(Shape{3, 2}, DType::f32, 1), F(Shape{3, 2}, {0, 1, 0, 0, 0, 1})));
  EXPECT_EQ(ops::eye_like(Shape{2, 2}, DType::i32).to_ints(), (V{1, 0, 0, 1}));
  // ONNX [[1, 2, 3], [4, 5, 6], [7, 8, 9]].
  const Tensor x = F(Shape{3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_TRUE(Close(ops::trilu(x), F(Shape{3, 3}, {1, 2, 3, 0, 5, 6, 0, 0, 9})));
  EXPECT_TRUE(Close(ops::trilu(x, 1), F(Shape{3, 3}, {0, 2, 3, 0, 0, 6, 0, 0, 0})));
  EXPECT_TRUE(Close(ops::trilu(x, 0, false), F(Shape{3, 3}, {1, 0, 0, 4, 5, 0, 7, 8, 9})));
  EXPECT_TRUE(Close(ops::trilu(x, -1, false), F(Shape{3, 3}, {0, 0, 0, 4, 0, 0, 7, 8, 0})));
  EXPECT_TRUE(ThrowsUserError([] { ops::eye_like(Shape{3}, DType::f32); }, {"EyeLike", "2-D"}));
}

TEST(More, CompressAndReverseSequence) {
  // ONNX [[1, 2], [3, 4], [5, 6]], condition [0, 1, 1] on axis 0 -> [[3, 4], [5, 6]].
  const Tensor x = F(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor cond = I(DType::boolean, Shape{3}, {0, 1, 1});
  EXPECT_TRUE(Close(ops::compress(x, cond, 1), F(Shape{2, 2}, {3, 4, 5, 6})));
  // Axis 1 (Tessera 0) with a shorter condition [0, 1].
  EXPECT_TRUE(
      Close(ops::compress(x, I(DType::boolean, Shape{2}, {0, 1}), 0), F(Shape{1, 3}, {2, 4, 6})));
  EXPECT_TRUE(Close(ops::compress(x, cond, std::nullopt), F(Shape{2}, {2, 3})));
  // ONNX x (time 3, batch 2) = [[1, 2], [3, 4], [5, 6]], lengths [3, 1] -> [[5, 2], [3, 4], [1,
  // 6]].
  EXPECT_TRUE(Close(ops::reverse_sequence(x, I(DType::i32, Shape{2}, {3, 1}), 1, 0),
                    F(Shape{2, 3}, {5, 2, 3, 4, 1, 6})));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::reverse_sequence(x, I(DType::i32, Shape{2}, {4, 1}), 1, 0);
      },
      {"ReverseSequence", "sequence_lens[0] = 4"}));
}

TEST(More, Lrn) {
  // N=1, C=3, 1x1: size 3 sums squares over c-1..c+1; bias 1, alpha 3 (alpha/size = 1), beta 1.
  const Tensor x = F(Shape::nchw(1, 3, 1, 1), {1, 2, 3});
  EXPECT_TRUE(Close(ops::lrn(x, 3, 3.0f, 1.0f, 1.0f),
                    F(Shape::nchw(1, 3, 1, 1), {1.0f / 6, 2.0f / 15, 3.0f / 14})));
}

TEST(More, Einsum) {
  // ONNX A (2x3) = [[1, 2, 3], [4, 5, 6]], B (3x2) = [[1, 0], [0, 1], [1, 1]].
  const Tensor a = F(Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor b = F(Shape{2, 3}, {1, 0, 0, 1, 1, 1});
  EXPECT_TRUE(Close(ops::einsum("ij,jk->ik", {a, b}), F(Shape{2, 2}, {4, 5, 10, 11})));
  EXPECT_TRUE(Close(ops::einsum("ij->ji", {a}), F(Shape{2, 3}, {1, 4, 2, 5, 3, 6})));
  EXPECT_TRUE(Close(ops::einsum("ij->", {a}), F(Shape{}, {21})));
  EXPECT_TRUE(Close(ops::einsum("ij", {a}), F(Shape{3, 2}, {1, 2, 3, 4, 5, 6})));
  const Tensor sq = F(Shape{2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(Close(ops::einsum("ii->i", {sq}), F(Shape{2}, {1, 4})));
  EXPECT_TRUE(Close(ops::einsum("...ij->...ji", {sq}), F(Shape{2, 2}, {1, 3, 2, 4})));
  EXPECT_TRUE(ThrowsUserError([&] { ops::einsum("ij,jk->ik", {a, a}); }, {"Einsum", "label 'j'"}));
}

TEST(More, Det) {
  // [[1, 2], [3, 4]] -> -2; a batch with [[2, 0], [0, 3]] -> 6.
  EXPECT_TRUE(Close(ops::det(F(Shape{2, 2}, {1, 2, 3, 4})), F(Shape{}, {-2})));
  EXPECT_TRUE(Close(ops::det(F(Shape{2, 2, 2}, {1, 2, 3, 4, 2, 0, 0, 3})), F(Shape{2}, {-2, 6})));
  // Needs a row swap: [[0, 1, 2], [1, 0, 3], [4, -3, 8]] -> -2.
  EXPECT_TRUE(Close(ops::det(F(Shape{3, 3}, {0, 1, 2, 1, 0, 3, 4, -3, 8})), F(Shape{}, {-2})));
}

TEST(More, Windows) {
  // Periodic Hann of 4: 0.5 - 0.5 cos(2 pi n / 4) = 0, 0.5, 1, 0.5.
  EXPECT_TRUE(Close(ops::window(ops::WindowKind::hann, 4, true, DType::f32),
                    F(Shape{4}, {0, 0.5f, 1, 0.5f})));
  // Symmetric Hamming of 3: 0.54348 - 0.45652 cos(pi n) = 0.08696, 1, 0.08696.
  EXPECT_TRUE(Close(ops::window(ops::WindowKind::hamming, 3, false, DType::f32),
                    F(Shape{3}, {0.08695652f, 1, 0.08695652f})));
  // Periodic Blackman of 2: n = 1: 0.42 + 0.5 + 0.08 = 1.
  EXPECT_TRUE(Close(ops::window(ops::WindowKind::blackman, 2, true, DType::f32),
                    F(Shape{2}, {0, 1}), 1e-5, 1e-6));
}

TEST(More, MaxUnpool) {
  const Tensor x = F(Shape::nchw(1, 1, 1, 2), {5, 6});
  EXPECT_TRUE(Close(
      ops::max_unpool(x, I(DType::i32, Shape::nchw(1, 1, 1, 2), {1, 2}), Shape::nchw(1, 1, 2, 2)),
      F(Shape::nchw(1, 1, 2, 2), {0, 5, 6, 0})));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::max_unpool(x, I(DType::i32, Shape::nchw(1, 1, 1, 2), {1, 4}), Shape::nchw(1, 1, 2, 2));
      },
      {"MaxUnpool", "index 4"}));
}

TEST(More, Losses) {
  // ONNX input (N=2, C=3) [[-1, -2, -3], [-4, -5, -6]], target [2, 0].
  const Tensor x = F(Shape{3, 2}, {-1, -2, -3, -4, -5, -6});
  const Tensor t = I(DType::i32, Shape{2}, {2, 0});
  using R = ops::LossReduction;
  EXPECT_TRUE(
      Close(ops::negative_log_likelihood_loss(x, t, nullptr, R::none), F(Shape{2}, {3, 4})));
  EXPECT_TRUE(Close(ops::negative_log_likelihood_loss(x, t, nullptr, R::sum), F(Shape{}, {7})));
  EXPECT_TRUE(Close(ops::negative_log_likelihood_loss(x, t), F(Shape{}, {3.5f})));
  const Tensor w = F(Shape{3}, {1, 1, 2});
  EXPECT_TRUE(Close(ops::negative_log_likelihood_loss(x, t, &w), F(Shape{}, {10.0f / 3})));
  EXPECT_TRUE(
      Close(ops::negative_log_likelihood_loss(x, t, nullptr, R::none, 0), F(Shape{2}, {3, 0})));
  EXPECT_TRUE(Close(ops::negative_log_likelihood_loss(x, t, nullptr, R::mean, 0), F(Shape{}, {3})));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::negative_log_likelihood_loss(x, I(DType::i32, Shape{2}, {3, 0}));
      },
      {"NegativeLogLikelihoodLoss", "is 3"}));
  // Scores [[0, 0]], label [1]: log_prob [-ln 2, -ln 2], loss ln 2.
  const auto r =
      ops::softmax_cross_entropy_loss(F(Shape{2, 1}, {0, 0}), I(DType::i32, Shape{1}, {1}));
  EXPECT_TRUE(Close(r.loss, F(Shape{}, {0.69314718f})));
  EXPECT_TRUE(Close(r.log_prob, F(Shape{2, 1}, {-0.69314718f, -0.69314718f})));
  EXPECT_TRUE(ThrowsUserError([] { ops::parse_loss_reduction("avg"); }, {"avg"}));
}

TEST(More, Recurrent) {
  // RNN, hidden 1, input 1: W 0.5, R 1, X = [1, 2] (seq 2, batch 1).
  // h0 = tanh(0.5) = 0.462117, h1 = tanh(1 + 0.462117) = 0.898063.
  const Tensor x = F(Shape{1, 1, 2}, {1, 2});
  ops::RnnParams p;
  p.hidden_size = 1;
  const auto r = ops::recurrent(x, F(Shape{1, 1, 1}, {0.5f}), F(Shape{1, 1, 1}, {1}), nullptr,
                                nullptr, nullptr, nullptr, nullptr, p);
  EXPECT_TRUE(Close(r.y, F(Shape{1, 1, 1, 2}, {0.46211716f, 0.89806301f})));
  EXPECT_TRUE(Close(r.y_h, F(Shape{1, 1, 1}, {0.89806301f})));
  // Reverse: t = 1 first (tanh(1) = 0.761594), then t = 0: tanh(0.5 + 0.761594) = 0.851503.
  p.direction = ops::RnnDirection::reverse;
  const auto rr = ops::recurrent(x, F(Shape{1, 1, 1}, {0.5f}), F(Shape{1, 1, 1}, {1}), nullptr,
                                 nullptr, nullptr, nullptr, nullptr, p);
  EXPECT_TRUE(Close(rr.y, F(Shape{1, 1, 1, 2}, {0.85150301f, 0.76159416f})));
  // sequence_lens 1: the second step is zero and Y_h is the first step's state.
  p.direction = ops::RnnDirection::forward;
  const Tensor lens = I(DType::i32, Shape{1}, {1});
  const auto rl = ops::recurrent(x, F(Shape{1, 1, 1}, {0.5f}), F(Shape{1, 1, 1}, {1}), nullptr,
                                 &lens, nullptr, nullptr, nullptr, p);
  EXPECT_TRUE(Close(rl.y, F(Shape{1, 1, 1, 2}, {0.46211716f, 0})));
  EXPECT_TRUE(Close(rl.y_h, F(Shape{1, 1, 1}, {0.46211716f})));

  // LSTM, every W gate 1, R 0, X = [1]: i = o = f = sigmoid(1), c = sigmoid(1) tanh(1) = 0.556770,
  // h = sigmoid(1) tanh(c) = 0.369606.
  ops::RnnParams lp;
  lp.cell = ops::RnnCell::lstm;
  lp.hidden_size = 1;
  const Tensor x1 = F(Shape{1, 1, 1}, {1});
  const auto l =
      ops::recurrent(x1, F(Shape{1, 4, 1}, {1, 1, 1, 1}), F(Shape{1, 4, 1}, {0, 0, 0, 0}), nullptr,
                     nullptr, nullptr, nullptr, nullptr, lp);
  EXPECT_TRUE(Close(l.y_h, F(Shape{1, 1, 1}, {0.36960635f})));
  EXPECT_TRUE(Close(l.y_c, F(Shape{1, 1, 1}, {0.55676994f})));

  // GRU, W and R gates 1, X = [1], h0 = 0: z = sigmoid(1), h~ = tanh(1), h = (1 - z) tanh(1).
  ops::RnnParams gp;
  gp.cell = ops::RnnCell::gru;
  gp.hidden_size = 1;
  const auto g = ops::recurrent(x1, F(Shape{1, 3, 1}, {1, 1, 1}), F(Shape{1, 3, 1}, {1, 1, 1}),
                                nullptr, nullptr, nullptr, nullptr, nullptr, gp);
  EXPECT_TRUE(Close(g.y_h, F(Shape{1, 1, 1}, {0.20482421f})));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::recurrent(x1, F(Shape{1, 2, 1}, {1, 1}), F(Shape{1, 3, 1}, {1, 1, 1}), nullptr,
                       nullptr, nullptr, nullptr, nullptr, gp);
      },
      {"GRU", "W"}));
}

TEST(More, Quantized) {
  const Tensor zp128 = I(DType::u8, Shape{}, {128});
  // x / 2 rounds half to even (1.5 -> 2), then + 128, saturating to uint8.
  EXPECT_EQ(
      ops::quantize_linear(F(Shape{5}, {0, 2, 3, -1000, 1000}), F(Shape{}, {2}), &zp128).to_ints(),
      (V{128, 129, 130, 0, 255}));
  // Per axis: ONNX [[1, 2], [3, 4]] with scales [1, 2] along ONNX axis 1 (Tessera 0).
  const Tensor q =
      ops::quantize_linear(F(Shape{2, 2}, {1, 2, 3, 4}), F(Shape{2}, {1, 2}), nullptr, 0);
  EXPECT_EQ(q.dtype(), DType::u8);
  EXPECT_EQ(q.to_ints(), (V{1, 1, 3, 2}));
  EXPECT_TRUE(
      Close(ops::dequantize_linear(I(DType::u8, Shape{3}, {0, 3, 128}), F(Shape{}, {2}), &zp128),
            F(Shape{3}, {-256, -250, 0})));
  const auto dq = ops::dynamic_quantize_linear(F(Shape{2}, {0, 2.55f}));
  EXPECT_EQ(dq.y.to_ints(), (V{0, 255}));
  EXPECT_TRUE(Close(dq.y_scale, F(Shape{}, {0.01f})));
  EXPECT_EQ(dq.y_zero_point.to_ints(), (V{0}));
  // (A - 1) = [[0, 1], [2, 3]] times B = [[5, 6], [7, 8]] is [[7, 8], [31, 36]].
  const Tensor a = I(DType::u8, Shape{2, 2}, {1, 2, 3, 4}),
               b = I(DType::u8, Shape{2, 2}, {5, 6, 7, 8});
  const Tensor one = I(DType::u8, Shape{}, {1}), zero = I(DType::u8, Shape{}, {0});
  EXPECT_EQ(ops::matmul_integer(a, b, &one).to_ints(), (V{7, 8, 31, 36}));
  EXPECT_EQ(ops::matmul_integer(a, b, &one).dtype(), DType::i32);
  // Requantised by 1 * 1 / 2: 3.5 -> 4, 4, 15.5 -> 16, 18.
  EXPECT_EQ(
      ops::qlinear_matmul(a, F(Shape{}, {1}), one, b, F(Shape{}, {1}), zero, F(Shape{}, {2}), zero)
          .to_ints(),
      (V{4, 4, 16, 18}));
  // 3x3 input 1..9 with zero point 1 (0..8), 2x2 kernel of ones: window sums 8, 12, 20, 24.
  const Tensor x = I(DType::u8, Shape::nchw(1, 1, 3, 3), {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Tensor w = I(DType::u8, Shape::nchw(1, 1, 2, 2), {1, 1, 1, 1});
  EXPECT_EQ(ops::conv_integer(x, w, &one, nullptr).to_ints(), (V{8, 12, 20, 24}));
  // Bias 4, scale 1 * 1 / 4: (8 + 4) / 4 = 3, 4, 6, 7.
  const Tensor bias = I(DType::i32, Shape{1}, {4});
  EXPECT_EQ(ops::qlinear_conv(x, F(Shape{}, {1}), one, w, F(Shape{}, {1}), zero, F(Shape{}, {4}),
                              zero, &bias)
                .to_ints(),
            (V{3, 4, 6, 7}));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::matmul_integer(F(Shape{1, 1}, {1}), b);
      },
      {"MatMulInteger", "A must be int8 or uint8"}));
}

TEST(More, GridSample) {
  // X [[1, 2], [3, 4]]; with align_corners (x, y) = (-1, -1) is pixel (0, 0), (1, 1) is (1, 1).
  const Tensor x = F(Shape::nchw(1, 1, 2, 2), {1, 2, 3, 4});
  const Tensor grid = F(Shape{2, 4, 1, 1}, {0, 0, -1, -1, 1, 1, 0.5f, -1});
  using M = ops::GridSampleMode;
  using P = ops::GridSamplePadding;
  EXPECT_TRUE(Close(ops::grid_sample(x, grid, M::bilinear, P::zeros, true),
                    F(Shape::nchw(1, 1, 1, 4), {2.5f, 1, 4, 1.75f})));
  // Nearest: (0.5, -1) is x = 0.75 -> 1, y = 0: 2; the centre 0.5 rounds half to even -> 0: 1.
  EXPECT_TRUE(Close(ops::grid_sample(x, grid, M::nearest, P::zeros, true),
                    F(Shape::nchw(1, 1, 1, 4), {1, 1, 4, 2})));
  // (-3, -1) is x = -1: outside; zeros gives 0, border clamps to pixel (0, 0) = 1.
  const Tensor out = F(Shape{2, 1, 1, 1}, {-3, -1});
  EXPECT_TRUE(Close(ops::grid_sample(x, out, M::bilinear, P::zeros, true),
                    F(Shape::nchw(1, 1, 1, 1), {0})));
  EXPECT_TRUE(Close(ops::grid_sample(x, out, M::bilinear, P::border, true),
                    F(Shape::nchw(1, 1, 1, 1), {1})));
  // Reflection over [0, 1]: x = -1 reflects to 1: pixel (0, 1) = 2.
  EXPECT_TRUE(Close(ops::grid_sample(x, out, M::bilinear, P::reflection, true),
                    F(Shape::nchw(1, 1, 1, 1), {2})));
  // Without align_corners (-1, -1) is the corner of pixel (0, 0): x = y = -0.5, a quarter of it.
  EXPECT_TRUE(Close(ops::grid_sample(x, F(Shape{2, 1, 1, 1}, {-1, -1})),
                    F(Shape::nchw(1, 1, 1, 1), {0.25f})));
}

TEST(More, DftAndStft) {
  // Real signal [1, 2, 3, 4] as ONNX (1, 4, 1): X = [10, -2 + 2i, -2, -2 - 2i].
  const Tensor x = F(Shape{1, 4, 1}, {1, 2, 3, 4});
  const Tensor X = ops::dft(x, 1);
  EXPECT_TRUE(Close(X, F(Shape{2, 4, 1}, {10, 0, -2, 2, -2, 0, -2, -2}), 1e-5, 1e-5));
  EXPECT_TRUE(Close(ops::dft(x, 1, std::nullopt, false, true),
                    F(Shape{2, 3, 1}, {10, 0, -2, 2, -2, 0}), 1e-5, 1e-5));
  EXPECT_TRUE(Close(ops::dft(X, 1, std::nullopt, true), F(Shape{2, 4, 1}, {1, 0, 2, 0, 3, 0, 4, 0}),
                    1e-5, 1e-5));
  // Zero padding to 8 points: bin 4 is 1 - 2 + 3 - 4 = -2 (real part at flat index 8).
  EXPECT_NEAR(ops::dft(x, 1, 8).at<float>(8), -2.0f, 1e-5f);
  // STFT: frames [1, 2] and [3, 4] every 2 samples; 2-point DFTs [3, -1] and [7, -1].
  EXPECT_TRUE(Close(ops::stft(x, 2, nullptr, 2), F(Shape{2, 2, 2, 1}, {3, 0, -1, 0, 7, 0, -1, 0}),
                    1e-5, 1e-5));
  // A window [1, 0] keeps the first sample of each frame: [1, 1] and [3, 3].
  const Tensor w = F(Shape{2}, {1, 0});
  EXPECT_TRUE(
      Close(ops::stft(x, 2, &w), F(Shape{2, 2, 2, 1}, {1, 0, 1, 0, 3, 0, 3, 0}), 1e-5, 1e-5));
  EXPECT_TRUE(ThrowsUserError([&] { ops::dft(x, 0); }, {"DFT", "(real, imaginary)"}));
}

TEST(More, MeanVarianceNormalization) {
  // [1, 3]: mean 2, E[x^2] = 5, std 1 -> [-1, 1] (up to the 1e-9 epsilon).
  EXPECT_TRUE(
      Close(ops::mean_variance_normalization(F(Shape{2}, {1, 3}), {0}), F(Shape{2}, {-1, 1})));
  // Per row of ONNX [[1, 3], [2, 2]]: the constant row has std 0 and gives 0.
  EXPECT_TRUE(Close(ops::mean_variance_normalization(F(Shape{2, 2}, {1, 3, 2, 2}), {0}),
                    F(Shape{2, 2}, {-1, 1, 0, 0})));
}

TEST(More, TfIdfVectorizer) {
  // Pool: unigrams [1], [3] (outputs 0, 1), bigrams [1, 2], [1, 3] (outputs 2, 3).
  ops::TfIdfParams p;
  p.min_gram_length = 1;
  p.max_gram_length = 2;
  p.max_skip_count = 1;
  p.ngram_counts = {0, 2};
  p.ngram_indexes = {0, 1, 2, 3};
  p.pool = {1, 3, 1, 2, 1, 3};
  // [1, 2, 1, 3]: 1 twice, 3 once; (1, 2) and (1, 3) adjacent; skip 1 gives (1, 1), (2, 3).
  EXPECT_TRUE(Close(ops::tf_idf_vectorizer(I(DType::i32, Shape{4}, {1, 2, 1, 3}), p),
                    F(Shape{4}, {2, 1, 1, 1})));
  // [1, 5, 3]: (1, 3) only with one gap; two rows.
  EXPECT_TRUE(Close(ops::tf_idf_vectorizer(I(DType::i32, Shape{3, 2}, {1, 5, 3, 3, 3, 3}), p),
                    F(Shape{4, 2}, {1, 1, 0, 1, 0, 3, 0, 0})));
  p.mode = ops::TfIdfMode::tfidf;
  p.weights = {0.5f, 2, 3, 4};
  EXPECT_TRUE(Close(ops::tf_idf_vectorizer(I(DType::i32, Shape{4}, {1, 2, 1, 3}), p),
                    F(Shape{4}, {1, 2, 3, 4})));
  p.mode = ops::TfIdfMode::idf;
  EXPECT_TRUE(Close(ops::tf_idf_vectorizer(I(DType::i32, Shape{3}, {1, 5, 1}), p),
                    F(Shape{4}, {0.5f, 0, 0, 0})));
  p.ngram_counts = {0, 3};
  EXPECT_TRUE(ThrowsUserError([&] { ops::tf_idf_vectorizer(I(DType::i32, Shape{1}, {1}), p); },
                              {"TfIdfVectorizer", "ngram_counts"}));
}

TEST(More, RoiAlign) {
  // X [[1, 2], [3, 4]]; roi [0, 0, 2, 2] without the half-pixel shift, 2x2 bins of one sample
  // each at (0.5, 0.5), (1.5, 0.5), (0.5, 1.5), (1.5, 1.5); past the last pixel it clamps.
  const Tensor x = F(Shape::nchw(1, 1, 2, 2), {1, 2, 3, 4});
  const Tensor idx = I(DType::i32, Shape{1}, {0});
  ops::RoiAlignParams p;
  p.half_pixel = false;
  p.output_height = p.output_width = 2;
  p.sampling_ratio = 1;
  EXPECT_TRUE(Close(ops::roi_align(x, F(Shape{4, 1}, {0, 0, 2, 2}), idx, p),
                    F(Shape::nchw(1, 1, 2, 2), {2.5f, 3, 3.5f, 4})));
  // Half-pixel: [0.5, 0.5, 1.5, 1.5] is [0, 1] after the shift; one bin sampled at (0.5, 0.5).
  p.half_pixel = true;
  p.output_height = p.output_width = 1;
  EXPECT_TRUE(Close(ops::roi_align(x, F(Shape{4, 1}, {0.5f, 0.5f, 1.5f, 1.5f}), idx, p),
                    F(Shape::nchw(1, 1, 1, 1), {2.5f})));
  // Max mode takes the largest weighted corner: 0.25 * 4.
  p.max_mode = true;
  EXPECT_TRUE(Close(ops::roi_align(x, F(Shape{4, 1}, {0.5f, 0.5f, 1.5f, 1.5f}), idx, p),
                    F(Shape::nchw(1, 1, 1, 1), {1})));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::roi_align(x, F(Shape{4, 1}, {0, 0, 1, 1}), I(DType::i32, Shape{1}, {3}), p);
      },
      {"RoiAlign", "batch_indices[0] = 3"}));
}

TEST(More, ResizeTfHalfPixelForNn) {
  // Scale 0.5 over [1, 2, 3, 4]: output x maps to (x + 0.5) / 0.5 = 1, 3 -> [2, 4]
  // (asymmetric would give 0, 2 -> [1, 3]).
  ops::ResizeParams p;
  p.coordinate_transformation_mode = ops::parse_coordinate_transform("tf_half_pixel_for_nn");
  p.scales = {0.5f};
  EXPECT_TRUE(Close(ops::resize(F(Shape{4}, {1, 2, 3, 4}), p), F(Shape{2}, {2, 4})));
}

}  // namespace
}  // namespace tessera
