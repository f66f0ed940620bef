// Conv, ConvTranspose and pools: hand-computed cases and a direct-loop oracle over strides,
// pads, dilations, groups and 1-3 spatial dims.
#include <array>
#include <cmath>
#include <cstring>
#include <utility>

#include "helpers.h"
#include "tessera/ops/host_conv.h"
#include "tessera/ops/reference.h"

namespace tessera {
namespace {

using test::Close;
using test::F;
using test::ThrowsUserError;

TEST(Conv, HandComputed2D) {
  // X (1,1,3,3) = 1..9, W (1,1,2,2) = [[1,0],[0,-1]]: y[i][j] = x[i][j] - x[i+1][j+1] = -4.
  const Tensor x = F(Shape::nchw(1, 1, 3, 3), {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Tensor w = F(Shape{2, 2, 1, 1}, {1, 0, 0, -1});
  EXPECT_TRUE(Close(ops::conv(x, w, nullptr), F(Shape::nchw(1, 1, 2, 2), {-4, -4, -4, -4})));
  // Pads 1 on every side, stride 2: positions (-1,-1), (-1,1), (1,-1), (1,1).
  ops::ConvParams p;
  p.pads = {1, 1, 1, 1};
  p.strides = {2, 2};
  const Tensor bias = F(Shape{1}, {100});
  EXPECT_TRUE(Close(ops::conv(x, w, &bias, p), F(Shape::nchw(1, 1, 2, 2), {99, 97, 93, 96})));
}

// Direct convolution oracle over canonical 3-D geometry; x {W,H,D,C,N} style, any spatial rank.
Tensor naive_conv(const Tensor& x, const Tensor& w, const Tensor* bias, const ops::ConvParams& p) {
  const int s = x.rank() - 2;
  const std::int64_t n = x.dim(s + 1), c = x.dim(s), m = w.dim(s + 1), cg = w.dim(s);
  const std::int64_t group = p.group;
  std::array<std::int64_t, 3> in{1, 1, 1}, k{1, 1, 1}, st{1, 1, 1}, dl{1, 1, 1}, pb{0, 0, 0},
      pe{0, 0, 0}, out{1, 1, 1};
  for (int i = 0; i < s; ++i) {
    const auto j = static_cast<std::size_t>(3 - s + i);
    in[j] = x.dim(s - 1 - i);
    k[j] = w.dim(s - 1 - i);
    if (!p.strides.empty()) st[j] = p.strides[static_cast<std::size_t>(i)];
    if (!p.dilations.empty()) dl[j] = p.dilations[static_cast<std::size_t>(i)];
    if (!p.pads.empty()) {
      pb[j] = p.pads[static_cast<std::size_t>(i)];
      pe[j] = p.pads[static_cast<std::size_t>(s + i)];
    }
  }
  std::vector<std::int64_t> odims;
  for (int j = 2; j >= 3 - s; --j) {
    const auto ju = static_cast<std::size_t>(j);
    out[ju] = (in[ju] + pb[ju] + pe[ju] - (k[ju] - 1) * dl[ju] - 1) / st[ju] + 1;
    odims.push_back(out[ju]);
  }
  odims.push_back(m);
  odims.push_back(n);
  Tensor y(DType::f32, Shape::from_fastest_first(odims));
  const std::int64_t pin = in[0] * in[1] * in[2], pout = out[0] * out[1] * out[2];
  const std::int64_t ks = k[0] * k[1] * k[2];
  for (std::int64_t b = 0; b < n; ++b)
    for (std::int64_t oc = 0; oc < m; ++oc) {
      const std::int64_t g = oc / (m / group);
      for (std::int64_t od = 0; od < out[0]; ++od)
        for (std::int64_t oh = 0; oh < out[1]; ++oh)
          for (std::int64_t ow = 0; ow < out[2]; ++ow) {
            double acc = bias ? bias->at(oc) : 0.0;
            for (std::int64_t ic = 0; ic < cg; ++ic)
              for (std::int64_t kd = 0; kd < k[0]; ++kd)
                for (std::int64_t kh = 0; kh < k[1]; ++kh)
                  for (std::int64_t kw = 0; kw < k[2]; ++kw) {
                    const std::int64_t id = od * st[0] - pb[0] + kd * dl[0];
                    const std::int64_t ih = oh * st[1] - pb[1] + kh * dl[1];
                    const std::int64_t iw = ow * st[2] - pb[2] + kw * dl[2];
                    if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2])
                      continue;
                    const float xv =
                        x.at((b * c + g * cg + ic) * pin + (id * in[1] + ih) * in[2] + iw);
                    const float wv = w.at((oc * cg + ic) * ks + (kd * k[1] + kh) * k[2] + kw);
                    acc += static_cast<double>(xv) * wv;
                  }
            y.set((b * m + oc) * pout + (od * out[1] + oh) * out[2] + ow, acc);
          }
    }
  return y;
}

TEST(Conv, AgainstDirectLoops) {
  struct Case {
    Shape x, w;
    ops::ConvParams p;
    double atol = 1e-5;  // sums over thousands of products of O(1) values round further
  };
  const std::vector<Case> cases = {
      {Shape::nchw(2, 3, 7, 5), Shape{3, 3, 3, 4}, {}},
      {Shape::nchw(1, 4, 9, 11), Shape{3, 3, 2, 6}, {{}, {2, 1}, {1, 0, 2, 1}, {1, 2}, 2}},
      {Shape::nchw(1, 6, 8, 8),
       Shape{3, 3, 1, 6},
       {{3, 3}, {1, 1}, {1, 1, 1, 1}, {}, 6}},           // depthwise
      {Shape::nchw(2, 5, 6, 7), Shape{1, 1, 5, 3}, {}},  // 1x1 direct
      {Shape::nchw(1, 3, 13, 9), Shape{7, 7, 3, 2}, {{}, {2, 2}, {3, 3, 3, 3}, {}, 1}},
      {Shape::nchw(1, 2, 5, 5), Shape{2, 2, 2, 3}, {{}, {3, 3}, {0, 0, 1, 1}, {2, 2}, 1}},
      {Shape{17, 3, 2}, Shape{4, 3, 5}, {{}, {3}, {2, 1}, {2}, 1}},  // 1-D
      {Shape{5, 4, 3, 2, 1},
       Shape{2, 3, 2, 2, 4},
       {{}, {1, 2, 1}, {1, 0, 1, 0, 1, 1}, {}, 1}},  // 3-D
      // Depthwise (computed without im2col): strided and dilated with pads wider than the
      // dilated kernel reaches (rows of padding only), 1-D, 3-D, and two images.
      {Shape::nchw(2, 5, 9, 10), Shape{3, 3, 1, 5}, {{}, {2, 3}, {3, 1, 2, 4}, {2, 1}, 5}},
      {Shape{23, 4, 1}, Shape{5, 1, 4}, {{}, {2}, {2, 3}, {3}, 4}},
      {Shape{5, 4, 3, 3, 1}, Shape{2, 3, 2, 1, 3}, {{}, {1, 1, 2}, {1, 0, 1, 0, 1, 1}, {}, 3}},
      // Large enough for the host to cut into pieces: bands of rows (with the pads falling in
      // the first and last), blocks of output channels (weights outweighing the input), and
      // both at once.
      {Shape::nchw(1, 16, 64, 61), Shape{3, 3, 16, 64}, {{}, {}, {2, 1, 1, 0}, {}, 1}},
      {Shape::nchw(1, 256, 4, 4), Shape{3, 3, 256, 512}, {{}, {}, {1, 1, 1, 1}, {}, 1}, 5e-4},
      {Shape::nchw(1, 256, 14, 14), Shape{3, 3, 256, 128}, {{}, {}, {1, 1, 1, 1}, {}, 1}, 5e-4},
  };
  std::uint32_t seed = 10;
  for (const auto& c : cases) {
    const Tensor x = test::random_tensor(c.x, seed++), w = test::random_tensor(c.w, seed++);
    const Tensor bias = test::random_tensor(Shape{c.w[c.w.rank() - 1]}, seed++);
    const Tensor y = ops::conv(x, w, &bias, c.p);
    EXPECT_TRUE(Close(y, naive_conv(x, w, &bias, c.p), 1e-4, c.atol)) << c.x.to_string();
  }
}

// A caller that keeps oneDNN's reordered weights (a plan step) gets the same bits; the kept
// weights serve only the weights they were made from, and are not made again on later calls.
TEST(Conv, KeptWeightsServeTheirOwnWeightsOnly) {
  const Tensor x = test::random_tensor(Shape::nchw(1, 8, 12, 12), 1);
  Tensor w = test::random_tensor(Shape{3, 3, 8, 16}, 2);
  const Tensor other = test::random_tensor(Shape{3, 3, 8, 16}, 3);
  ops::ConvParams p;
  p.pads = {1, 1, 1, 1};
  const Tensor want = ops::conv(x, w, nullptr, p);
  ops::HostConvWeights kept;
  ops::ConvParams keeping = p;
  keeping.kept_weights = &kept;
  EXPECT_TRUE(equal(ops::conv(x, w, nullptr, keeping), want));  // reorders into `kept`
  EXPECT_TRUE(equal(ops::conv(x, w, nullptr, keeping), want));  // reuses it
  EXPECT_TRUE(equal(ops::conv(x, other, nullptr, keeping), ops::conv(x, other, nullptr, p)));
  // The kept plan is for a convolution without bias: one with bias plans its own.
  const Tensor bias = test::random_tensor(Shape{16}, 4);
  EXPECT_TRUE(equal(ops::conv(x, w, &bias, keeping), ops::conv(x, w, &bias, p)));
  // Weights changed in place break the caller's promise: the kept reorder still stands, which
  // shows it is not made again.
  w.data<float>()[0] += 1.0f;
  EXPECT_FALSE(equal(ops::conv(x, w, nullptr, p), want));
  EXPECT_TRUE(equal(ops::conv(x, w, nullptr, keeping), want));
}

TEST(Conv, HalfPrecision) {
  const Tensor x = test::random_tensor(Shape::nchw(1, 2, 4, 4), 1);
  const Tensor w = test::random_tensor(Shape{3, 3, 2, 2}, 2);
  const Tensor y = ops::conv(x.astype(DType::f16), w.astype(DType::f16), nullptr);
  EXPECT_EQ(y.dtype(), DType::f16);
  EXPECT_TRUE(Close(y.astype(DType::f32),
                    naive_conv(x.astype(DType::f16).astype(DType::f32),
                               w.astype(DType::f16).astype(DType::f32), nullptr, {}),
                    2e-3, 2e-3));
}

TEST(Conv, Errors) {
  const Tensor x(DType::f32, Shape::nchw(1, 4, 5, 5));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::conv(x, Tensor(DType::f32, Shape{3, 3, 3, 2}), nullptr);
      },
      {"Conv", "3 input channels per group", "4 channels"}));
  ops::ConvParams g3;
  g3.group = 3;
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::conv(x, Tensor(DType::f32, Shape{3, 3, 1, 3}), nullptr, g3);
      },
      {"Conv", "group 3"}));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::conv(x, Tensor(DType::f32, Shape{7, 7, 4, 1}), nullptr);
      },
      {"Conv", "smaller than the (dilated) kernel"}));
  ops::ConvParams bad_pads;
  bad_pads.pads = {1, 1};
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::conv(x, Tensor(DType::f32, Shape{3, 3, 4, 1}), nullptr, bad_pads);
      },
      {"Conv", "pads [1, 1]", "needs 4"}));
  const Tensor bad_bias(DType::f32, Shape{2});
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::conv(x, Tensor(DType::f32, Shape{3, 3, 4, 1}), &bad_bias);
      },
      {"Conv", "bias"}));
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::conv(Tensor(DType::f32, Shape{5, 5}), Tensor(DType::f32, Shape{3, 3}), nullptr);
      },
      {"Conv", "rank 3 to 5"}));
  ops::ConvParams ks;
  ks.kernel_shape = {2, 2};
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::conv(x, Tensor(DType::f32, Shape{3, 3, 4, 1}), nullptr, ks);
      },
      {"Conv", "kernel_shape [2, 2]"}));
}

TEST(ConvTranspose, HandComputed1D) {
  const Tensor x = F(Shape{2, 1, 1}, {1, 2});
  const Tensor w = F(Shape{3, 1, 1}, {1, 1, 1});
  EXPECT_TRUE(Close(ops::conv_transpose(x, w, nullptr), F(Shape{4, 1, 1}, {1, 3, 3, 2})));
  ops::ConvTransposeParams p;
  p.strides = {2};
  EXPECT_TRUE(Close(ops::conv_transpose(x, w, nullptr, p), F(Shape{5, 1, 1}, {1, 1, 3, 2, 2})));
  p.output_padding = {1};
  EXPECT_TRUE(Close(ops::conv_transpose(x, w, nullptr, p), F(Shape{6, 1, 1}, {1, 1, 3, 2, 2, 0})));
  p.pads = {1, 1};
  p.output_padding = {};
  const Tensor bias = F(Shape{1}, {10});
  EXPECT_TRUE(Close(ops::conv_transpose(x, w, &bias, p), F(Shape{3, 1, 1}, {11, 13, 12})));
}

// ConvTranspose is the adjoint of Conv with the same weights: <conv(x), y> == <x, convT(y)>.
TEST(ConvTranspose, IsTheAdjointOfConv) {
  struct Case {
    Shape x, w;
    std::vector<std::int64_t> strides, pads, dilations;
    std::int64_t group;
  };
  const std::vector<Case> cases = {
      {Shape::nchw(1, 3, 7, 6), Shape{3, 3, 3, 4}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
      {Shape::nchw(2, 4, 9, 8), Shape{3, 2, 2, 6}, {2, 2}, {1, 0, 1, 0}, {1, 2}, 2},
      {Shape{11, 2, 1}, Shape{4, 2, 3}, {3}, {2, 1}, {2}, 1},
  };
  std::uint32_t seed = 50;
  for (const auto& c : cases) {
    ops::ConvParams cp;
    cp.strides = c.strides;
    cp.pads = c.pads;
    cp.dilations = c.dilations;
    cp.group = c.group;
    const Tensor x = test::random_tensor(c.x, seed++), w = test::random_tensor(c.w, seed++);
    const Tensor y_shape_probe = ops::conv(x, w, nullptr, cp);
    const Tensor y = test::random_tensor(y_shape_probe.shape(), seed++);
    ops::ConvTransposeParams tp;
    tp.strides = c.strides;
    tp.pads = c.pads;
    tp.dilations = c.dilations;
    tp.group = c.group;
    // Output padding restores the input size lost to the stride's floor.
    const int s = c.x.rank() - 2;
    Tensor xt = ops::conv_transpose(y, w, nullptr, tp);
    for (int i = 0; i < s; ++i) {
      const std::int64_t missing = c.x[s - 1 - i] - xt.dim(s - 1 - i);
      ASSERT_GE(missing, 0);
      tp.output_padding.push_back(missing);
    }
    xt = ops::conv_transpose(y, w, nullptr, tp);
    ASSERT_EQ(xt.shape(), x.shape());
    double lhs = 0, rhs = 0;
    for (std::int64_t i = 0; i < y.element_count(); ++i)
      lhs += static_cast<double>(y_shape_probe.at(i)) * y.at(i);
    for (std::int64_t i = 0; i < x.element_count(); ++i)
      rhs += static_cast<double>(x.at(i)) * xt.at(i);
    EXPECT_NEAR(lhs, rhs, 1e-3 * (1 + std::fabs(lhs)));
  }
}

TEST(ConvTranspose, Errors) {
  const Tensor x(DType::f32, Shape{4, 2, 1});
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::conv_transpose(x, Tensor(DType::f32, Shape{3, 1, 3}), nullptr);
      },
      {"ConvTranspose", "3 input channels", "has 2"}));
  ops::ConvTransposeParams p;
  p.output_padding = {1};
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::conv_transpose(x, Tensor(DType::f32, Shape{3, 1, 2}), nullptr, p);
      },
      {"ConvTranspose", "output_padding"}));
}

TEST(MaxPool, StridesCeilModeAndDilations) {
  const Tensor x =
      F(Shape::nchw(1, 1, 4, 4), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  ops::PoolParams p;
  p.kernel_shape = {2, 2};
  p.strides = {2, 2};
  EXPECT_TRUE(Close(ops::max_pool(x, p), F(Shape::nchw(1, 1, 2, 2), {6, 8, 14, 16})));
  p.kernel_shape = {3, 3};
  EXPECT_TRUE(Close(ops::max_pool(x, p), F(Shape::nchw(1, 1, 1, 1), {11})));
  p.ceil_mode = true;  // windows at 0 and 2, the second one clipped by the edge
  EXPECT_TRUE(Close(ops::max_pool(x, p), F(Shape::nchw(1, 1, 2, 2), {11, 12, 15, 16})));
  ops::PoolParams d;
  d.kernel_shape = {2, 2};
  d.dilations = {2, 2};
  EXPECT_TRUE(Close(ops::max_pool(x, d), F(Shape::nchw(1, 1, 2, 2), {11, 12, 15, 16})));
  ops::PoolParams pad;
  pad.kernel_shape = {3, 3};
  pad.strides = {2, 2};
  pad.pads = {1, 1, 1, 1};
  EXPECT_TRUE(Close(ops::max_pool(x, pad), F(Shape::nchw(1, 1, 2, 2), {6, 8, 14, 16})));
}

TEST(MaxPool, CeilModeDropsWindowsStartingInPadding) {
  // Width 5, kernel 2, stride 2, no pads: floor gives 2 windows, ceil gives 3 (the last one [4]).
  const Tensor x = F(Shape{5, 1, 1, 1}, {1, 5, 2, 4, 3});
  ops::PoolParams p;
  p.kernel_shape = {1, 2};
  p.strides = {1, 2};
  EXPECT_TRUE(Close(ops::max_pool(x, p), F(Shape{2, 1, 1, 1}, {5, 4})));
  p.ceil_mode = true;
  EXPECT_TRUE(Close(ops::max_pool(x, p), F(Shape{3, 1, 1, 1}, {5, 4, 3})));
  // Width 4 with end pad 1, kernel 2, stride 2: ceil would give 3 windows but the third starts
  // in the end padding (at 4), so it is dropped.
  const Tensor x4 = F(Shape{4, 1, 1, 1}, {1, 5, 2, 4});
  p.pads = {0, 0, 0, 1};
  EXPECT_TRUE(Close(ops::max_pool(x4, p), F(Shape{2, 1, 1, 1}, {5, 4})));
}

TEST(MaxPool, Int8AndNaN) {
  const Tensor x = Tensor::from_ints(DType::i8, Shape{4, 1, 1}, {-5, 3, -128, 127});
  ops::PoolParams p;
  p.kernel_shape = {2};
  p.strides = {2};
  const Tensor y = ops::max_pool(x, p);
  EXPECT_EQ(y.dtype(), DType::i8);
  EXPECT_EQ(y.to_ints(), (std::vector<std::int64_t>{3, 127}));
  const Tensor n = ops::max_pool(F(Shape{2, 1, 1}, {1, std::nanf("")}), p);
  EXPECT_TRUE(std::isnan(n.at(0)));
}

TEST(MaxPool, IndicesRowAndColumnMajor) {
  std::vector<float> v(25);
  for (int i = 0; i < 25; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
  const Tensor x = F(Shape::nchw(1, 1, 5, 5), v);
  ops::PoolParams p;
  p.kernel_shape = {2, 2};
  p.strides = {2, 2};
  const ops::MaxPoolResult r = ops::max_pool_with_indices(x, p);
  EXPECT_TRUE(Close(r.values, F(Shape::nchw(1, 1, 2, 2), {7, 9, 17, 19})));
  EXPECT_EQ(r.indices.dtype(), DType::i64);
  EXPECT_EQ(r.indices.to_ints(), (std::vector<std::int64_t>{6, 8, 16, 18}));
  // Column-major (ONNX storage_order 1): h + w * H.
  EXPECT_EQ(ops::max_pool_with_indices(x, p, true).indices.to_ints(),
            (std::vector<std::int64_t>{6, 16, 8, 18}));
}

TEST(MaxPool, IndicesCountEarlierPlanesAndSkipPadding) {
  // N=2, C=1, H=1, W=3; pad one column at the start: windows [pad, x0] and [x1, x2].
  const Tensor x = F(Shape::nchw(2, 1, 1, 3), {-5, 2, 1, 4, -1, 3});
  ops::PoolParams p;
  p.kernel_shape = {1, 2};
  p.strides = {1, 2};
  p.pads = {0, 1, 0, 0};
  const ops::MaxPoolResult r = ops::max_pool_with_indices(x, p);
  EXPECT_TRUE(Close(r.values, F(Shape::nchw(2, 1, 1, 2), {-5, 2, 4, 3})));
  EXPECT_EQ(r.indices.to_ints(), (std::vector<std::int64_t>{0, 1, 3, 5}));
}

// One pooled value straight from ONNX's definition, window by window: taps in (d, h, w) order;
// MaxPool keeps the first NaN, else the first of the largest (so -0 before +0 stays -0), and
// its index; AveragePool sums in tap order and divides by the taps inside (or inside + pads).
struct PoolOracle {
  std::array<std::int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, d{1, 1, 1},
      pb{0, 0, 0}, pe{0, 0, 0};
  bool max = true, include_pad = false;
  std::pair<float, std::int64_t> at(const float* plane, std::int64_t od, std::int64_t oh,
                                    std::int64_t ow) const {
    float acc = max ? -INFINITY : 0.0f;
    std::int64_t best = -1, count = 0;
    const std::array<std::int64_t, 3> o{od, oh, ow};
    std::array<std::int64_t, 3> padded{0, 0, 0};
    for (int j = 0; j < 3; ++j)
      for (std::int64_t t = 0; t < k[j]; ++t) {
        const std::int64_t i = o[j] * s[j] - pb[j] + t * d[j];
        padded[j] += i < in[j] + pe[j];
      }
    for (std::int64_t a = 0; a < k[0]; ++a)
      for (std::int64_t b = 0; b < k[1]; ++b)
        for (std::int64_t c = 0; c < k[2]; ++c) {
          const std::int64_t id = od * s[0] - pb[0] + a * d[0], ih = oh * s[1] - pb[1] + b * d[1],
                             iw = ow * s[2] - pb[2] + c * d[2];
          if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2]) continue;
          const std::int64_t flat = (id * in[1] + ih) * in[2] + iw;
          const float v = plane[flat];
          if (!max) {
            acc += v;
          } else if (!std::isnan(acc) && (count == 0 || std::isnan(v) || v > acc)) {
            acc = v;
            best = flat;
          }
          ++count;
        }
    if (!max) {
      const std::int64_t divisor = include_pad ? padded[0] * padded[1] * padded[2] : count;
      acc = divisor > 0 ? acc / static_cast<float>(divisor) : NAN;
    }
    return {acc, best};
  }
};

// A value's bits; every NaN reads the same (which NaN a sum of two NaNs gives depends on the
// order the compiler puts the operands in).
std::uint32_t Bits(float v) {
  if (std::isnan(v)) return 0x7fc00000u;
  std::uint32_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

TEST(Pool, MatchBitForBitADirectLoopWithNaNsZerosAndInfinities) {
  // Values drawn from a small set so that ties (including -0 against +0), NaNs and -inf meet in
  // most windows.
  const float pool_values[] = {1.0f, -1.0f, 0.0f, -0.0f, 2.5f, -INFINITY, INFINITY, NAN, 0.5f};
  std::uint64_t seed = 1;
  auto next = [&] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::int64_t>(seed >> 33);
  };
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int spatial = 1 + trial % 3;
    PoolOracle o;
    o.max = trial % 2 == 0;
    o.include_pad = trial % 4 == 1;
    ops::PoolParams p;
    p.ceil_mode = next() % 2 == 0;
    p.count_include_pad = o.include_pad;
    std::vector<std::int64_t> dims;  // ONNX order: N, C, spatial...
    dims.push_back(1 + next() % 2);
    dims.push_back(1 + next() % 3);
    std::vector<std::int64_t> begins, ends;
    for (int i = 0; i < spatial; ++i) {
      const auto j = static_cast<std::size_t>(3 - spatial + i);
      o.k[j] = 1 + next() % 3;
      o.s[j] = 1 + next() % 3;
      o.d[j] = 1 + next() % 2;
      o.pb[j] = next() % o.k[j];
      o.pe[j] = next() % o.k[j];
      o.in[j] = (o.k[j] - 1) * o.d[j] + 1 + next() % 7;
      dims.push_back(o.in[j]);
      p.kernel_shape.push_back(o.k[j]);
      p.strides.push_back(o.s[j]);
      p.dilations.push_back(o.d[j]);
      begins.push_back(o.pb[j]);
      ends.push_back(o.pe[j]);
    }
    p.pads = begins;
    p.pads.insert(p.pads.end(), ends.begin(), ends.end());
    const Shape shape = Shape::from_outer_first(dims);
    std::vector<float> values(static_cast<std::size_t>(shape.element_count()));
    for (auto& v : values) v = pool_values[next() % 9];
    const Tensor x = F(shape, values);
    Tensor y, indices;
    if (o.max) {
      ops::MaxPoolResult r = ops::max_pool_with_indices(x, p);
      y = std::move(r.values);
      indices = std::move(r.indices);
      // The values alone take another path; they must agree with it too.
      const Tensor alone = ops::max_pool(x, p);
      for (std::int64_t i = 0; i < y.element_count(); ++i)
        ASSERT_EQ(Bits(alone.at(i)), Bits(y.at(i))) << "trial " << trial << " element " << i;
    } else {
      y = ops::average_pool(x, p);
    }
    for (int j = 0; j < 3; ++j)
      if (j >= 3 - spatial) o.out[j] = y.dim(spatial - 1 - (j - (3 - spatial)));
    const std::int64_t planes = dims[0] * dims[1];
    const std::int64_t in_plane = o.in[0] * o.in[1] * o.in[2];
    std::int64_t flat = 0;
    for (std::int64_t pl = 0; pl < planes; ++pl)
      for (std::int64_t od = 0; od < o.out[0]; ++od)
        for (std::int64_t oh = 0; oh < o.out[1]; ++oh)
          for (std::int64_t ow = 0; ow < o.out[2]; ++ow, ++flat) {
            const auto [want, best] = o.at(values.data() + pl * in_plane, od, oh, ow);
            ASSERT_EQ(Bits(y.at(flat)), Bits(want)) << "trial " << trial << " element " << flat;
            if (o.max) {
              ASSERT_EQ(indices.at<std::int64_t>(flat), best < 0 ? -1 : pl * in_plane + best)
                  << "trial " << trial << " element " << flat;
            }
            ++checked;
          }
  }
  EXPECT_GT(checked, 3000);
}

TEST(AveragePool, CountIncludePad) {
  const Tensor x = F(Shape::nchw(1, 1, 2, 2), {1, 2, 3, 4});
  ops::PoolParams p;
  p.kernel_shape = {2, 2};
  p.pads = {1, 1, 1, 1};
  p.strides = {2, 2};
  // Windows each cover one real element: excluded pads average that element alone.
  EXPECT_TRUE(Close(ops::average_pool(x, p), F(Shape::nchw(1, 1, 2, 2), {1, 2, 3, 4})));
  p.count_include_pad = true;
  EXPECT_TRUE(Close(ops::average_pool(x, p), F(Shape::nchw(1, 1, 2, 2), {0.25f, 0.5f, 0.75f, 1})));
  ops::PoolParams q;
  q.kernel_shape = {2, 2};
  EXPECT_TRUE(Close(ops::average_pool(x, q), F(Shape::nchw(1, 1, 1, 1), {2.5f})));
}

TEST(AveragePool, CeilModeClippedWindow) {
  const Tensor x = F(Shape{5, 1, 1}, {1, 2, 3, 4, 6});
  ops::PoolParams p;
  p.kernel_shape = {2};
  p.strides = {2};
  p.ceil_mode = true;
  EXPECT_TRUE(Close(ops::average_pool(x, p), F(Shape{3, 1, 1}, {1.5f, 3.5f, 6})));
}

TEST(GlobalPool, AverageAndMax) {
  const Tensor x = F(Shape::nchw(2, 2, 1, 3), {1, 2, 3, 4, 5, 9, -1, -2, -3, 0, 0, 6});
  EXPECT_TRUE(Close(ops::global_average_pool(x), F(Shape::nchw(2, 2, 1, 1), {2, 6, -2, 2})));
  EXPECT_TRUE(Close(ops::global_max_pool(x), F(Shape::nchw(2, 2, 1, 1), {3, 9, -1, 6})));
  EXPECT_TRUE(ThrowsUserError(
      [] {
        ops::global_average_pool(Tensor(DType::f32, Shape{3, 2}));
      },
      {"GlobalAveragePool", "rank 3 to 5"}));
}

TEST(Pool, Errors) {
  const Tensor x(DType::f32, Shape::nchw(1, 1, 4, 4));
  EXPECT_TRUE(ThrowsUserError([&] { ops::max_pool(x, {}); }, {"MaxPool", "kernel_shape"}));
  ops::PoolParams p;
  p.kernel_shape = {2};
  EXPECT_TRUE(
      ThrowsUserError([&] { ops::average_pool(x, p); }, {"AveragePool", "kernel_shape [2]"}));
  p.kernel_shape = {2, 2};
  EXPECT_TRUE(
      ThrowsUserError([&] { ops::average_pool(x.astype(DType::i8), p); }, {"AveragePool", "i8"}));
}

}  // namespace
}  // namespace tessera
