// f64 and i64 computed exactly: each family of ops runs on data whose f32 rounding is visible
// (doubles with full 53-bit mantissas, int64 values beyond 2^53), against an oracle written here
// in long double or integer arithmetic. Each float test also runs the same op on the input
// rounded to f32 and checks that it misses the oracle, so the data can tell the two paths apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "helpers.h"
#include "tessera/ops/reference.h"

namespace tessera {
namespace {

using test::Close;
using LD = long double;
using Ints = std::vector<std::int64_t>;

constexpr double kTol = 1e-12;                        // f64 error bound, far below f32's 2^-24
constexpr std::int64_t kBig = std::int64_t{1} << 53;  // kBig + 1 is not a double

// Deterministic values in [lo, hi) with every mantissa bit used (a 64-bit LCG, top 53 bits).
Tensor random_f64(const Shape& shape, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::vector<double> v(static_cast<std::size_t>(shape.element_count()));
  std::uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (double& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = lo + (hi - lo) * (static_cast<double>(s >> 11) * 0x1p-53);
  }
  return Tensor::from_doubles(DType::f64, shape, v);
}

std::vector<LD> values(const Tensor& t) {
  std::vector<LD> out;
  for (double d : t.to_doubles()) out.push_back(d);
  return out;
}

Tensor from_ld(const Shape& shape, const std::vector<LD>& v) {
  std::vector<double> d(v.begin(), v.end());
  return Tensor::from_doubles(DType::f64, shape, d);
}

// run(dtype) computes the op with its float inputs in `dtype`, returning the result as f64.
// In f64 it matches the oracle to kTol; in f32 it does not.
::testing::AssertionResult MatchesOnlyInF64(const std::function<Tensor(DType)>& run,
                                            const Tensor& expected, double tol = kTol) {
  const Tensor wide = run(DType::f64);
  if (wide.dtype() != DType::f64)
    return ::testing::AssertionFailure() << "f64 input gave dtype " << dtype_name(wide.dtype());
  ::testing::AssertionResult r = Close(wide, expected, tol, tol);
  if (!r) return r;
  if (Close(run(DType::f32).astype(DType::f64), expected, tol, tol))
    return ::testing::AssertionFailure() << "the f32 path also matches: the data has no teeth";
  return ::testing::AssertionSuccess();
}

// ---- Conv and ConvTranspose ----

TEST(F64, ConvComputesInDouble) {
  // X (N=2, C=4, H=5, W=6), W (M=6, C/g=2, kH=3, kW=2), group 2, strides (2, 1), dilations
  // (1, 2), pads (H 1/0, W 1/2).
  const std::int64_t n = 2, c = 4, h = 5, w = 6, m = 6, g = 2, cg = c / g, mg = m / g;
  const std::int64_t kh = 3, kw = 2, sh = 2, sw = 1, dh = 1, dw = 2, ph = 1, pw = 1, eh = 0, ew = 2;
  const Tensor x = random_f64(Shape::nchw(n, c, h, w), 1);
  const Tensor wt = random_f64(Shape{kw, kh, cg, m}, 2);
  const Tensor b = random_f64(Shape{m}, 3);
  ops::ConvParams p;
  p.strides = {sh, sw};
  p.dilations = {dh, dw};
  p.pads = {ph, pw, eh, ew};
  p.group = g;
  const std::int64_t oh = (h + ph + eh - ((kh - 1) * dh + 1)) / sh + 1;
  const std::int64_t ow = (w + pw + ew - ((kw - 1) * dw + 1)) / sw + 1;
  const auto X = values(x), Wv = values(wt), B = values(b);
  std::vector<LD> y(static_cast<std::size_t>(n * m * oh * ow));
  for (std::int64_t in = 0; in < n; ++in)
    for (std::int64_t om = 0; om < m; ++om)
      for (std::int64_t i = 0; i < oh; ++i)
        for (std::int64_t j = 0; j < ow; ++j) {
          LD acc = B[static_cast<std::size_t>(om)];
          for (std::int64_t ic = 0; ic < cg; ++ic)
            for (std::int64_t a = 0; a < kh; ++a)
              for (std::int64_t e = 0; e < kw; ++e) {
                const std::int64_t yy = i * sh - ph + a * dh, xx = j * sw - pw + e * dw;
                if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
                const std::int64_t ch = (om / mg) * cg + ic;
                acc += X[static_cast<std::size_t>(((in * c + ch) * h + yy) * w + xx)] *
                       Wv[static_cast<std::size_t>(((om * cg + ic) * kh + a) * kw + e)];
              }
          y[static_cast<std::size_t>(((in * m + om) * oh + i) * ow + j)] = acc;
        }
  const Tensor expected = from_ld(Shape::nchw(n, m, oh, ow), y);
  EXPECT_TRUE(MatchesOnlyInF64(
      [&](DType t) {
        const Tensor bt = b.astype(t);
        return ops::conv(x.astype(t), wt.astype(t), &bt, p).astype(DType::f64);
      },
      expected));
  // Depthwise (one channel per group) takes its own path in f32.
  const Tensor wd = random_f64(Shape{kw, kh, 1, c}, 4);
  ops::ConvParams pd = p;
  pd.group = c;
  const auto Wd = values(wd);
  std::vector<LD> yd(static_cast<std::size_t>(n * c * oh * ow));
  for (std::int64_t in = 0; in < n; ++in)
    for (std::int64_t ch = 0; ch < c; ++ch)
      for (std::int64_t i = 0; i < oh; ++i)
        for (std::int64_t j = 0; j < ow; ++j) {
          LD acc = 0;
          for (std::int64_t a = 0; a < kh; ++a)
            for (std::int64_t e = 0; e < kw; ++e) {
              const std::int64_t yy = i * sh - ph + a * dh, xx = j * sw - pw + e * dw;
              if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
              acc += X[static_cast<std::size_t>(((in * c + ch) * h + yy) * w + xx)] *
                     Wd[static_cast<std::size_t>((ch * kh + a) * kw + e)];
            }
          yd[static_cast<std::size_t>(((in * c + ch) * oh + i) * ow + j)] = acc;
        }
  EXPECT_TRUE(MatchesOnlyInF64(
      [&](DType t) { return ops::conv(x.astype(t), wd.astype(t), nullptr, pd).astype(DType::f64); },
      from_ld(Shape::nchw(n, c, oh, ow), yd)));
}

TEST(F64, ConvTransposeComputesInDouble) {
  // X (N=2, C=2, H=4, W=3), W (C=2, M=3, kH=3, kW=2), strides (2, 1), pads (H 1/0, W 0/1),
  // output_padding (1, 0).
  const std::int64_t n = 2, c = 2, h = 4, w = 3, m = 3, kh = 3, kw = 2, sh = 2, sw = 1;
  const std::int64_t ph = 1, pw = 0, eh = 0, ew = 1, oph = 1;
  const Tensor x = random_f64(Shape::nchw(n, c, h, w), 5);
  const Tensor wt = random_f64(Shape{kw, kh, m, c}, 6);
  const Tensor b = random_f64(Shape{m}, 7);
  ops::ConvTransposeParams p;
  p.strides = {sh, sw};
  p.pads = {ph, pw, eh, ew};
  p.output_padding = {oph, 0};
  const std::int64_t oh = sh * (h - 1) + oph + kh - ph - eh, ow = sw * (w - 1) + kw - pw - ew;
  const auto X = values(x), Wv = values(wt), B = values(b);
  std::vector<LD> y(static_cast<std::size_t>(n * m * oh * ow));
  for (std::int64_t in = 0; in < n; ++in)
    for (std::int64_t om = 0; om < m; ++om)
      for (std::int64_t i = 0; i < oh * ow; ++i)
        y[static_cast<std::size_t>((in * m + om) * oh * ow + i)] = B[static_cast<std::size_t>(om)];
  for (std::int64_t in = 0; in < n; ++in)
    for (std::int64_t ic = 0; ic < c; ++ic)
      for (std::int64_t i = 0; i < h; ++i)
        for (std::int64_t j = 0; j < w; ++j)
          for (std::int64_t om = 0; om < m; ++om)
            for (std::int64_t a = 0; a < kh; ++a)
              for (std::int64_t e = 0; e < kw; ++e) {
                const std::int64_t yy = i * sh - ph + a, xx = j * sw - pw + e;
                if (yy < 0 || yy >= oh || xx < 0 || xx >= ow) continue;
                y[static_cast<std::size_t>(((in * m + om) * oh + yy) * ow + xx)] +=
                    X[static_cast<std::size_t>(((in * c + ic) * h + i) * w + j)] *
                    Wv[static_cast<std::size_t>(((ic * m + om) * kh + a) * kw + e)];
              }
  EXPECT_TRUE(MatchesOnlyInF64(
      [&](DType t) {
        const Tensor bt = b.astype(t);
        return ops::conv_transpose(x.astype(t), wt.astype(t), &bt, p).astype(DType::f64);
      },
      from_ld(Shape::nchw(n, m, oh, ow), y)));
}

// ---- Gemm and MatMul ----

TEST(F64, GemmAndMatMulComputeInDouble) {
  // Gemm: A (M=5, K=7), B transposed (N=4, K=7), C (N) broadcast, alpha 0.75, beta 1.5.
  const std::int64_t m = 5, k = 7, n = 4;
  const Tensor a = random_f64(Shape{k, m}, 8), b = random_f64(Shape{k, n}, 9),
               c = random_f64(Shape{n}, 10);
  const auto A = values(a), B = values(b), C = values(c);
  std::vector<LD> y(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      LD acc = 0;
      for (std::int64_t q = 0; q < k; ++q)
        acc += A[static_cast<std::size_t>(i * k + q)] * B[static_cast<std::size_t>(j * k + q)];
      y[static_cast<std::size_t>(i * n + j)] = 0.75L * acc + 1.5L * C[static_cast<std::size_t>(j)];
    }
  ops::GemmParams gp;
  gp.alpha = 0.75f;
  gp.beta = 1.5f;
  gp.trans_b = true;
  EXPECT_TRUE(MatchesOnlyInF64(
      [&](DType t) {
        const Tensor ct = c.astype(t);
        return ops::gemm(a.astype(t), b.astype(t), &ct, gp).astype(DType::f64);
      },
      from_ld(Shape{n, m}, y)));

  // MatMul: A (2, M=3, K=6) times B (K=6, N=4), B broadcast over the batch.
  const std::int64_t bm = 3, bk = 6, bn = 4, batch = 2;
  const Tensor ma = random_f64(Shape{bk, bm, batch}, 11), mb = random_f64(Shape{bn, bk}, 12);
  const auto MA = values(ma), MB = values(mb);
  std::vector<LD> z(static_cast<std::size_t>(batch * bm * bn));
  for (std::int64_t s = 0; s < batch; ++s)
    for (std::int64_t i = 0; i < bm; ++i)
      for (std::int64_t j = 0; j < bn; ++j) {
        LD acc = 0;
        for (std::int64_t q = 0; q < bk; ++q)
          acc += MA[static_cast<std::size_t>((s * bm + i) * bk + q)] *
                 MB[static_cast<std::size_t>(q * bn + j)];
        z[static_cast<std::size_t>((s * bm + i) * bn + j)] = acc;
      }
  EXPECT_TRUE(MatchesOnlyInF64(
      [&](DType t) { return ops::matmul(ma.astype(t), mb.astype(t)).astype(DType::f64); },
      from_ld(Shape{bn, bm, batch}, z)));
}

// ---- Pools ----

TEST(F64, PoolsComputeInDouble) {
  // X (N=1, C=2, H=5, W=6); kernel (2, 3), strides (2, 1), pads (H 1/0, W 1/1).
  const std::int64_t c = 2, h = 5, w = 6, kh = 2, kw = 3, sh = 2, sw = 1, ph = 1, pw = 1, eh = 0,
                     ew = 1;
  const Tensor x = random_f64(Shape::nchw(1, c, h, w), 13);
  const auto X = values(x);
  ops::PoolParams p;
  p.kernel_shape = {kh, kw};
  p.strides = {sh, sw};
  p.pads = {ph, pw, eh, ew};
  const std::int64_t oh = (h + ph + eh - kh) / sh + 1, ow = (w + pw + ew - kw) / sw + 1;
  std::vector<LD> mx, avg, avg_pad;
  for (std::int64_t ch = 0; ch < c; ++ch)
    for (std::int64_t i = 0; i < oh; ++i)
      for (std::int64_t j = 0; j < ow; ++j) {
        LD best = -std::numeric_limits<LD>::infinity(), sum = 0;
        int inside = 0, padded = 0;
        for (std::int64_t a = 0; a < kh; ++a)
          for (std::int64_t e = 0; e < kw; ++e) {
            const std::int64_t yy = i * sh - ph + a, xx = j * sw - pw + e;
            if (yy < h + eh && xx < w + ew) ++padded;
            if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
            const LD v = X[static_cast<std::size_t>((ch * h + yy) * w + xx)];
            best = std::max(best, v);
            sum += v;
            ++inside;
          }
        mx.push_back(best);
        avg.push_back(sum / inside);
        avg_pad.push_back(sum / padded);
      }
  const Shape out = Shape::nchw(1, c, oh, ow);
  EXPECT_TRUE(
      MatchesOnlyInF64([&](DType t) { return ops::max_pool(x.astype(t), p).astype(DType::f64); },
                       from_ld(out, mx), 0.0));
  EXPECT_TRUE(MatchesOnlyInF64(
      [&](DType t) { return ops::average_pool(x.astype(t), p).astype(DType::f64); },
      from_ld(out, avg)));
  ops::PoolParams pp = p;
  pp.count_include_pad = true;
  EXPECT_TRUE(MatchesOnlyInF64(
      [&](DType t) { return ops::average_pool(x.astype(t), pp).astype(DType::f64); },
      from_ld(out, avg_pad)));
  const ops::MaxPoolResult with_indices = ops::max_pool_with_indices(x, p);
  EXPECT_TRUE(Close(with_indices.values, from_ld(out, mx), 0.0, 0.0));

  std::vector<LD> gmax, gavg;
  for (std::int64_t ch = 0; ch < c; ++ch) {
    LD best = -std::numeric_limits<LD>::infinity(), sum = 0;
    for (std::int64_t i = 0; i < h * w; ++i) {
      best = std::max(best, X[static_cast<std::size_t>(ch * h * w + i)]);
      sum += X[static_cast<std::size_t>(ch * h * w + i)];
    }
    gmax.push_back(best);
    gavg.push_back(sum / static_cast<LD>(h * w));
  }
  EXPECT_TRUE(MatchesOnlyInF64(
      [&](DType t) { return ops::global_max_pool(x.astype(t)).astype(DType::f64); },
      from_ld(Shape::nchw(1, c, 1, 1), gmax), 0.0));
  EXPECT_TRUE(MatchesOnlyInF64(
      [&](DType t) { return ops::global_average_pool(x.astype(t)).astype(DType::f64); },
      from_ld(Shape::nchw(1, c, 1, 1), gavg)));
}

// ---- Normalisations ----

// Each run of `len` values of X as (x - mean) / sqrt(variance + eps), in long double.
std::vector<LD> standardised(const std::vector<LD>& X, std::size_t len, LD eps) {
  std::vector<LD> y(X.size());
  for (std::size_t base = 0; base < X.size(); base += len) {
    LD mu = 0, var = 0;
    for (std::size_t i = 0; i < len; ++i) mu += X[base + i];
    mu /= static_cast<LD>(len);
    for (std::size_t i = 0; i < len; ++i) var += (X[base + i] - mu) * (X[base + i] - mu);
    var /= static_cast<LD>(len);
    for (std::size_t i = 0; i < len; ++i) y[base + i] = (X[base + i] - mu) / std::sqrt(var + eps);
  }
  return y;
}

TEST(F64, NormalisationsComputeInDouble) {
  const LD eps = static_cast<LD>(1e-5f);
  // BatchNormalization: X (N=2, C=3, W=6).
  {
    const Tensor x = random_f64(Shape{6, 3, 2}, 14);
    const Tensor s = random_f64(Shape{3}, 15), b = random_f64(Shape{3}, 16),
                 mean = random_f64(Shape{3}, 17), var = random_f64(Shape{3}, 18, 0.5, 2.0);
    const auto X = values(x), S = values(s), B = values(b), M = values(mean), V = values(var);
    std::vector<LD> y(X.size());
    for (std::size_t i = 0; i < X.size(); ++i) {
      const std::size_t ch = (i / 6) % 3;
      y[i] = (X[i] - M[ch]) / std::sqrt(V[ch] + eps) * S[ch] + B[ch];
    }
    EXPECT_TRUE(MatchesOnlyInF64(
        [&](DType t) {
          return ops::batch_normalization(x.astype(t), s.astype(t), b.astype(t), mean.astype(t),
                                          var.astype(t))
              .astype(DType::f64);
        },
        from_ld(x.shape(), y)));
  }
  // InstanceNormalization: X (N=2, C=2, H=3, W=4); statistics per (n, c) plane of 12.
  {
    const Tensor x = random_f64(Shape::nchw(2, 2, 3, 4), 19);
    const Tensor s = random_f64(Shape{2}, 20), b = random_f64(Shape{2}, 21);
    const auto S = values(s), B = values(b);
    std::vector<LD> y = standardised(values(x), 12, eps);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = y[i] * S[(i / 12) % 2] + B[(i / 12) % 2];
    EXPECT_TRUE(MatchesOnlyInF64(
        [&](DType t) {
          return ops::instance_normalization(x.astype(t), s.astype(t), b.astype(t))
              .astype(DType::f64);
        },
        from_ld(x.shape(), y)));
  }
  // LayerNormalization over the last ONNX axis (Tessera dim 0) of a (3, 7) tensor.
  {
    const Tensor x = random_f64(Shape{7, 3}, 22);
    const Tensor s = random_f64(Shape{7}, 23), b = random_f64(Shape{7}, 24);
    const auto S = values(s), B = values(b);
    std::vector<LD> y = standardised(values(x), 7, eps);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = y[i] * S[i % 7] + B[i % 7];
    EXPECT_TRUE(MatchesOnlyInF64(
        [&](DType t) {
          const Tensor bt = b.astype(t);
          return ops::layer_normalization(x.astype(t), s.astype(t), &bt, 0).astype(DType::f64);
        },
        from_ld(x.shape(), y)));
  }
  // LRN: size 3, alpha 0.5, beta 0.75, bias 1 over C=5 of X (N=1, C=5, W=4).
  {
    const Tensor x = random_f64(Shape{4, 5, 1}, 25);
    const auto X = values(x);
    std::vector<LD> y(X.size());
    for (std::int64_t ch = 0; ch < 5; ++ch)
      for (std::int64_t i = 0; i < 4; ++i) {
        LD sq = 0;
        for (std::int64_t k = std::max<std::int64_t>(0, ch - 1);
             k <= std::min<std::int64_t>(4, ch + 1); ++k)
          sq += X[static_cast<std::size_t>(k * 4 + i)] * X[static_cast<std::size_t>(k * 4 + i)];
        y[static_cast<std::size_t>(ch * 4 + i)] =
            X[static_cast<std::size_t>(ch * 4 + i)] / std::pow(1.0L + 0.5L / 3 * sq, 0.75L);
      }
    EXPECT_TRUE(MatchesOnlyInF64(
        [&](DType t) { return ops::lrn(x.astype(t), 3, 0.5f, 0.75f, 1.0f).astype(DType::f64); },
        from_ld(x.shape(), y)));
  }
  // MeanVarianceNormalization over N, H, W (ONNX's default axes) of X (N=2, C=2, H=2, W=3).
  {
    const Tensor x = random_f64(Shape::nchw(2, 2, 2, 3), 26);
    const auto X = values(x);
    std::vector<LD> y(X.size());
    for (std::size_t ch = 0; ch < 2; ++ch) {
      LD mu = 0, sq = 0;
      for (std::size_t in = 0; in < 2; ++in)
        for (std::size_t i = 0; i < 6; ++i) {
          const LD v = X[(in * 2 + ch) * 6 + i];
          mu += v;
          sq += v * v;
        }
      mu /= 12;
      sq /= 12;
      for (std::size_t in = 0; in < 2; ++in)
        for (std::size_t i = 0; i < 6; ++i)
          y[(in * 2 + ch) * 6 + i] =
              (X[(in * 2 + ch) * 6 + i] - mu) / (std::sqrt(sq - mu * mu) + 1e-9L);
    }
    EXPECT_TRUE(MatchesOnlyInF64(
        [&](DType t) {
          return ops::mean_variance_normalization(x.astype(t), {3, 1, 0}).astype(DType::f64);
        },
        from_ld(x.shape(), y)));
  }
}

// ---- Softmax, LogSoftmax, Hardmax ----

TEST(F64, SoftmaxFamilyComputesInDouble) {
  const Tensor x = random_f64(Shape{5, 3}, 27, -4.0, 4.0);
  const auto X = values(x);
  std::vector<LD> sm(X.size()), lsm(X.size());
  for (std::size_t row = 0; row < 3; ++row) {
    LD mx = -std::numeric_limits<LD>::infinity(), sum = 0;
    for (std::size_t i = 0; i < 5; ++i) mx = std::max(mx, X[row * 5 + i]);
    for (std::size_t i = 0; i < 5; ++i) sum += std::exp(X[row * 5 + i] - mx);
    for (std::size_t i = 0; i < 5; ++i) {
      sm[row * 5 + i] = std::exp(X[row * 5 + i] - mx) / sum;
      lsm[row * 5 + i] = X[row * 5 + i] - mx - std::log(sum);
    }
  }
  EXPECT_TRUE(
      MatchesOnlyInF64([&](DType t) { return ops::softmax(x.astype(t), 0).astype(DType::f64); },
                       from_ld(x.shape(), sm)));
  EXPECT_TRUE(
      MatchesOnlyInF64([&](DType t) { return ops::log_softmax(x.astype(t), 0).astype(DType::f64); },
                       from_ld(x.shape(), lsm)));
  // The maximum differs from its neighbours by 2^-40: in f32 all three are 1 and the first wins.
  const Tensor near_one =
      Tensor::from_doubles(DType::f64, Shape{3}, {1.0, 1.0 + 0x1p-40, 1.0 - 0x1p-40});
  EXPECT_TRUE(MatchesOnlyInF64(
      [&](DType t) { return ops::hardmax(near_one.astype(t), 0).astype(DType::f64); },
      Tensor::from_doubles(DType::f64, Shape{3}, {0, 1, 0}), 0.0));
}

// ---- Resize (linear and cubic), GridSample, RoiAlign ----

TEST(F64, ResizeAndSamplingComputeInDouble) {
  // 1-D resize of 5 values to 8 (scale 1.6), half_pixel, edge-clamped taps.
  const Tensor x = random_f64(Shape{5, 2}, 28);
  const auto X = values(x);
  const auto tap = [&](std::int64_t i, std::size_t row) {
    return X[row * 5 + static_cast<std::size_t>(std::clamp<std::int64_t>(i, 0, 4))];
  };
  std::vector<LD> lin, cub;
  const LD A = -0.75L;
  const auto cubic = [&](LD d) {  // Keys' kernel at distance |d|
    d = std::fabs(d);
    if (d <= 1) return ((A + 2) * d - (A + 3)) * d * d + 1;
    if (d < 2) return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A;
    return 0.0L;
  };
  for (std::size_t row = 0; row < 2; ++row)
    for (std::int64_t o = 0; o < 8; ++o) {
      const LD pos = (o + 0.5L) * 5 / 8 - 0.5L, f = std::floor(pos), frac = pos - f;
      const auto i0 = static_cast<std::int64_t>(f);
      lin.push_back((1 - frac) * tap(i0, row) + frac * tap(i0 + 1, row));
      LD acc = 0;
      for (std::int64_t k = -1; k <= 2; ++k) acc += cubic(frac - k) * tap(i0 + k, row);
      cub.push_back(acc);
    }
  ops::ResizeParams p;
  p.sizes = {8, 2};
  p.mode = ops::ResizeMode::linear;
  EXPECT_TRUE(
      MatchesOnlyInF64([&](DType t) { return ops::resize(x.astype(t), p).astype(DType::f64); },
                       from_ld(Shape{8, 2}, lin)));
  p.mode = ops::ResizeMode::cubic;
  EXPECT_TRUE(
      MatchesOnlyInF64([&](DType t) { return ops::resize(x.astype(t), p).astype(DType::f64); },
                       from_ld(Shape{8, 2}, cub)));

  // GridSample, nearest with align_corners: the grid picks pixels in reverse order, so the
  // output is X's values exactly.
  const Tensor img = random_f64(Shape::nchw(1, 1, 2, 3), 29);
  std::vector<double> grid, picked;
  const auto I = img.to_doubles();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      grid.push_back(1.0 - j);        // x: 1, 0, -1 -> columns 2, 1, 0
      grid.push_back(1.0 - 2.0 * i);  // y: 1, -1 -> rows 1, 0
      picked.push_back(I[static_cast<std::size_t>((1 - i) * 3 + (2 - j))]);
    }
  const Tensor g = Tensor::from_doubles(DType::f64, Shape{2, 3, 2, 1}, grid);
  EXPECT_TRUE(MatchesOnlyInF64(
      [&](DType t) {
        return ops::grid_sample(img.astype(t), g.astype(t), ops::GridSampleMode::nearest,
                                ops::GridSamplePadding::zeros, true)
            .astype(DType::f64);
      },
      Tensor::from_doubles(DType::f64, Shape::nchw(1, 1, 2, 3), picked), 0.0));

  // RoiAlign avg, output_half_pixel, one sample at (0.5, 0.5) of the box [0, 1]^2: the mean of
  // the four top-left pixels.
  const Tensor roi = Tensor::from_doubles(DType::f64, Shape{4, 1}, {0, 0, 1, 1});
  const Tensor batch = Tensor::from_ints(DType::i64, Shape{1}, {0});
  ops::RoiAlignParams rp;
  rp.half_pixel = false;
  rp.sampling_ratio = 1;
  const LD mean4 = (static_cast<LD>(I[0]) + I[1] + I[3] + I[4]) / 4;
  EXPECT_TRUE(MatchesOnlyInF64(
      [&](DType t) {
        return ops::roi_align(img.astype(t), roi.astype(t), batch, rp).astype(DType::f64);
      },
      from_ld(Shape::nchw(1, 1, 1, 1), {mean4})));
}

// ---- Activations with a float parameter, and the mapped reductions ----

TEST(F64, ActivationsComputeInDouble) {
  const Tensor x = random_f64(Shape{40}, 30, -3.0, 3.0);
  const auto X = values(x);
  const auto check = [&](const char* name, const std::function<Tensor(const Tensor&)>& op,
                         const std::function<LD(LD)>& ref) {
    std::vector<LD> y;
    for (LD v : X) y.push_back(ref(v));
    EXPECT_TRUE(MatchesOnlyInF64([&](DType t) { return op(x.astype(t)).astype(DType::f64); },
                                 from_ld(x.shape(), y)))
        << name;
  };
  const LD a = static_cast<LD>(0.3f), b = static_cast<LD>(0.6f);
  check(
      "LeakyRelu", [](const Tensor& t) { return ops::leaky_relu(t, 0.3f); },
      [&](LD v) { return v < 0 ? a * v : v; });
  check(
      "Elu", [](const Tensor& t) { return ops::elu(t, 0.3f); },
      [&](LD v) { return v < 0 ? a * std::expm1(v) : v; });
  check(
      "Selu", [](const Tensor& t) { return ops::selu(t, 0.3f, 0.6f); },
      [&](LD v) { return v > 0 ? b * v : b * a * std::expm1(v); });
  check(
      "HardSigmoid", [](const Tensor& t) { return ops::hard_sigmoid(t, 0.3f, 0.6f); },
      [&](LD v) { return std::clamp(a * v + b, 0.0L, 1.0L); });
  check(
      "ThresholdedRelu", [](const Tensor& t) { return ops::thresholded_relu(t, 0.3f); },
      [&](LD v) { return v > a ? v : 0.0L; });
  check(
      "Celu", [](const Tensor& t) { return ops::celu(t, 0.3f); },
      [&](LD v) { return std::max(0.0L, v) + std::min(0.0L, a * std::expm1(v / a)); });
  check(
      "Shrink", [](const Tensor& t) { return ops::shrink(t, 0.3f, 0.6f); },
      [&](LD v) { return v < -a ? v + b : (v > a ? v - b : 0.0L); });
  check(
      "Softplus", [](const Tensor& t) { return ops::softplus(t); },
      [](LD v) { return std::log1p(std::exp(v)); });
  check(
      "HardSwish", [](const Tensor& t) { return ops::hard_swish(t); },
      [](LD v) { return v * std::clamp(v / 6 + 0.5L, 0.0L, 1.0L); });
  check(
      "Gelu", [](const Tensor& t) { return ops::gelu(t); },
      [](LD v) { return 0.5L * v * (1 + std::erf(v / std::sqrt(2.0L))); });
  check(
      "Gelu tanh", [](const Tensor& t) { return ops::gelu(t, ops::GeluApproximation::tanh); },
      [](LD v) {
        const LD k = std::sqrt(2 / 3.141592653589793238462643383279502884L);
        return 0.5L * v * (1 + std::tanh(k * (v + 0.044715L * v * v * v)));
      });
}

TEST(F64, MappedReductionsComputeInDouble) {
  const Tensor x = random_f64(Shape{9, 2}, 31, 0.25, 2.0);
  const auto X = values(x);
  const auto over_rows = [&](const std::function<LD(LD)>& pre, const std::function<LD(LD)>& post) {
    std::vector<LD> y;
    for (std::size_t row = 0; row < 2; ++row) {
      LD sum = 0;
      for (std::size_t i = 0; i < 9; ++i) sum += pre(X[row * 9 + i]);
      y.push_back(post(sum));
    }
    return from_ld(Shape{1, 2}, y);
  };
  ops::ReduceParams p;
  p.axes = {0};
  const auto id = [](LD v) { return v; };
  const auto sq = [](LD v) { return v * v; };
  EXPECT_TRUE(
      MatchesOnlyInF64([&](DType t) { return ops::reduce_l1(x.astype(t), p).astype(DType::f64); },
                       over_rows([](LD v) { return std::fabs(v); }, id)));
  EXPECT_TRUE(
      MatchesOnlyInF64([&](DType t) { return ops::reduce_l2(x.astype(t), p).astype(DType::f64); },
                       over_rows(sq, [](LD v) { return std::sqrt(v); })));
  EXPECT_TRUE(MatchesOnlyInF64(
      [&](DType t) { return ops::reduce_sum_square(x.astype(t), p).astype(DType::f64); },
      over_rows(sq, id)));
  EXPECT_TRUE(MatchesOnlyInF64(
      [&](DType t) { return ops::reduce_log_sum(x.astype(t), p).astype(DType::f64); },
      over_rows(id, [](LD v) { return std::log(v); })));
  EXPECT_TRUE(MatchesOnlyInF64(
      [&](DType t) { return ops::reduce_log_sum_exp(x.astype(t), p).astype(DType::f64); },
      over_rows([](LD v) { return std::exp(v); }, [](LD v) { return std::log(v); })));
}

// ---- 64-bit integer scalars: Range, Pad, Clip; Unique ----

TEST(I64, RangePadClipAndUniqueAreExactBeyondTwoToThe53) {
  // Range: through double, kBig + 1 would start at kBig.
  EXPECT_EQ(ops::range(kBig + 1, kBig + 7, 2, DType::i64).to_ints(),
            (Ints{kBig + 1, kBig + 3, kBig + 5}));
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ(ops::range(kMax, kMax - 5, -2, DType::i64).to_ints(), (Ints{kMax, kMax - 2, kMax - 4}));
  // Across the whole int64 range in steps of 2^63 - 1 (the span itself overflows int64).
  EXPECT_EQ(ops::range(kMin, kMax, kMax, DType::i64).to_ints(), (Ints{kMin, -1, kMax - 1}));
  const Tensor u = ops::range(std::numeric_limits<std::uint64_t>::max() - 2,
                              std::numeric_limits<std::uint64_t>::max(), 1, DType::u64);
  ASSERT_EQ(u.element_count(), 2);
  EXPECT_EQ(u.data<std::uint64_t>()[1], std::numeric_limits<std::uint64_t>::max() - 1);
  EXPECT_TRUE(test::ThrowsUserError([] { ops::range(0, 5, 0, DType::i64); }, {"Range", "delta"}));

  // Pad's constant and Clip's bounds go to the data without a trip through double.
  ops::PadParams pp;
  pp.pads = {1, 1};
  pp.value = kBig + 1;
  EXPECT_EQ(ops::pad(Tensor::from_ints(DType::i64, Shape{1}, {kBig + 3}), pp).to_ints(),
            (Ints{kBig + 1, kBig + 3, kBig + 1}));
  const Tensor data =
      Tensor::from_ints(DType::i64, Shape{4}, {kBig, kBig + 2, kBig + 5, -kBig - 1});
  EXPECT_EQ(ops::clip(data, ops::Scalar(kBig + 1), ops::Scalar(kBig + 3)).to_ints(),
            (Ints{kBig + 1, kBig + 2, kBig + 3, kBig + 1}));
  EXPECT_EQ(ops::clip(data, ops::Scalar::of(Tensor::from_ints(DType::i64, Shape{}, {-kBig - 3})),
                      std::nullopt)
                .to_ints(),
            (Ints{kBig, kBig + 2, kBig + 5, -kBig - 1}));

  // Unique: kBig and kBig + 1 are one double but two int64 values.
  const ops::UniqueResult r = ops::unique(
      Tensor::from_ints(DType::i64, Shape{5}, {kBig + 1, kBig, kBig + 1, kBig + 2, kBig}),
      std::nullopt, true);
  EXPECT_EQ(r.y.to_ints(), (Ints{kBig, kBig + 1, kBig + 2}));
  EXPECT_EQ(r.counts.to_ints(), (Ints{2, 2, 1}));
  EXPECT_EQ(r.inverse_indices.to_ints(), (Ints{1, 0, 1, 2, 0}));
  Tensor big_u(DType::u64, Shape{3});
  big_u.data<std::uint64_t>()[0] = std::numeric_limits<std::uint64_t>::max();
  big_u.data<std::uint64_t>()[1] = std::numeric_limits<std::uint64_t>::max() - 1;
  big_u.data<std::uint64_t>()[2] = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(ops::unique(big_u, std::nullopt, true).counts.to_ints(), (Ints{1, 2}));
}

TEST(I64, PowOfInt64IsExactBeyondTwoToThe53) {
  std::int64_t p35 = 1;
  for (int i = 0; i < 35; ++i) p35 *= 3;  // 3^35 = 50031545098999707, not a double
  const Tensor base = Tensor::from_ints(DType::i64, Shape{3}, {3, -3, 3});
  const Tensor e = Tensor::from_ints(DType::i32, Shape{3}, {35, 35, 40});
  // 3^40 is past int64: saturated, as for the narrower integers.
  EXPECT_EQ(ops::pow(base, e).to_ints(),
            (Ints{p35, -p35, std::numeric_limits<std::int64_t>::max()}));
  std::uint64_t p40 = 1;
  for (int i = 0; i < 40; ++i) p40 *= 3;  // 12157665459056928801 fits u64
  Tensor ub(DType::u64, Shape{1});
  ub.data<std::uint64_t>()[0] = 3;
  EXPECT_EQ(ops::pow(ub, Tensor::from_ints(DType::i64, Shape{1}, {40})).data<std::uint64_t>()[0],
            p40);
}

}  // namespace
}  // namespace tessera
