// MatMul and Gemm: hand-computed cases, 1-D promotion, batch broadcasting against a naive loop.
#include "helpers.h"
#include "tessera/ops/gemm.h"
#include "tessera/ops/reference.h"

namespace tessera {
namespace {

using test::Close;
using test::F;
using test::I;
using test::ThrowsUserError;

// A (2x3) = [[1,2,3],[4,5,6]], B (3x2) = [[7,8],[9,10],[11,12]]: A*B = [[58,64],[139,154]].
// Row-major (rows, cols) is Tessera {cols, rows}.
const Tensor kA = F(Shape{3, 2}, {1, 2, 3, 4, 5, 6});
const Tensor kB = F(Shape{2, 3}, {7, 8, 9, 10, 11, 12});

TEST(MatMul, TwoByThree) {
  EXPECT_TRUE(Close(ops::matmul(kA, kB), F(Shape{2, 2}, {58, 64, 139, 154})));
}

TEST(MatMul, OneDimensionalOperands) {
  const Tensor v = F(Shape{3}, {1, 0, -1});
  EXPECT_TRUE(Close(ops::matmul(kA, v), F(Shape{2}, {-2, -2})));  // (2x3)(3) -> (2)
  const Tensor w = F(Shape{2}, {1, 1});
  EXPECT_TRUE(Close(ops::matmul(w, kA), F(Shape{3}, {5, 7, 9})));  // (2)(2x3) -> (3)
  const Tensor dot = ops::matmul(v, F(Shape{3}, {4, 5, 6}));
  EXPECT_EQ(dot.rank(), 0);
  EXPECT_EQ(dot.at(0), -2.0f);
}

Tensor naive_matmul(const Tensor& a, const Tensor& b, const Shape& out) {
  // Batch dims broadcast; everything here is rank 3..5 with matrices in dims 0, 1.
  Tensor r(DType::f32, out);
  const std::int64_t k = a.dim(0), m = out[1], n = out[0];
  const std::int64_t batches = out.element_count() / (m * n);
  for (std::int64_t bi = 0; bi < batches; ++bi) {
    std::int64_t rem = bi, ao = 0, bo = 0, ast = 1, bst = 1;
    for (int d = 2; d < out.rank(); ++d) {
      const std::int64_t i = rem % out[d];
      rem /= out[d];
      const std::int64_t ad = a.shape().dim_or_one(d), bd = b.shape().dim_or_one(d);
      ao += (ad == 1 ? 0 : i) * ast;
      bo += (bd == 1 ? 0 : i) * bst;
      ast *= ad;
      bst *= bd;
    }
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (std::int64_t p = 0; p < k; ++p)
          acc += static_cast<double>(a.at(ao * m * k + i * k + p)) * b.at(bo * k * n + p * n + j);
        r.set(bi * m * n + i * n + j, acc);
      }
  }
  return r;
}

TEST(MatMul, BatchBroadcastAgainstNaive) {
  struct Case {
    Shape a, b, out;
  };
  const std::vector<Case> cases = {
      {Shape{5, 3, 4}, Shape{7, 5}, Shape{7, 3, 4}},           // shared weights
      {Shape{5, 3, 4}, Shape{7, 5, 4}, Shape{7, 3, 4}},        // same batch
      {Shape{5, 3, 1, 2}, Shape{7, 5, 3}, Shape{7, 3, 3, 2}},  // batch broadcast both ways
      {Shape{65, 67}, Shape{66, 65, 2}, Shape{66, 67, 2}},     // sizes not multiples of 64
      {Shape{2, 3, 1, 2, 2}, Shape{4, 2, 3, 1}, Shape{4, 3, 3, 2, 2}},
  };
  for (const auto& c : cases) {
    const Tensor a = test::random_tensor(c.a, 3), b = test::random_tensor(c.b, 4);
    const Tensor r = ops::matmul(a, b);
    ASSERT_EQ(r.shape(), c.out) << c.a.to_string() << " x " << c.b.to_string();
    EXPECT_TRUE(Close(r, naive_matmul(a, b, c.out), 1e-4, 1e-5));
  }
}

TEST(MatMul, IntegersAndHalf) {
  const Tensor a = I(DType::i32, Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor b = I(DType::i32, Shape{2, 3}, {7, 8, 9, 10, 11, 12});
  EXPECT_EQ(ops::matmul(a, b).to_ints(), (std::vector<std::int64_t>{58, 64, 139, 154}));
  const Tensor h = ops::matmul(kA.astype(DType::f16), kB.astype(DType::f16));
  EXPECT_EQ(h.dtype(), DType::f16);
  EXPECT_TRUE(Close(h.astype(DType::f32), F(Shape{2, 2}, {58, 64, 139, 154})));
}

TEST(MatMul, Errors) {
  EXPECT_TRUE(ThrowsUserError([] { ops::matmul(kA, kA); }, {"MatMul", "inner", "(3, 2)"}));
  EXPECT_TRUE(ThrowsUserError(
      [] {
        ops::matmul(Tensor(DType::f32, Shape{2, 2, 3}), Tensor(DType::f32, Shape{2, 2, 4}));
      },
      {"MatMul", "batch", "broadcast"}));
  EXPECT_TRUE(ThrowsUserError([] { ops::matmul(Tensor::scalar(DType::f32, 1), kA); },
                              {"MatMul", "rank >= 1"}));
}

TEST(Gemm, AlphaBetaTransposesAndBroadcastC) {
  // A^T where A is stored as (3x2) [[1,4],[2,5],[3,6]] -> same product as kA * kB.
  const Tensor at = F(Shape{2, 3}, {1, 4, 2, 5, 3, 6});
  const Tensor bt = F(Shape{3, 2}, {7, 9, 11, 8, 10, 12});  // B^T stored (2x3)
  const Tensor c_row = F(Shape{2}, {1, 2});                 // broadcast over rows
  ops::GemmParams p;
  p.alpha = 2.0f;
  p.beta = 0.5f;
  p.trans_a = true;
  p.trans_b = true;
  EXPECT_TRUE(Close(ops::gemm(at, bt, &c_row, p), F(Shape{2, 2}, {116.5f, 129, 278.5f, 309})));
  const Tensor c_scalar = Tensor::scalar(DType::f32, 10);
  EXPECT_TRUE(Close(ops::gemm(kA, kB, &c_scalar), F(Shape{2, 2}, {68, 74, 149, 164})));
  const Tensor c_col = F(Shape{1, 2}, {100, 200});
  EXPECT_TRUE(Close(ops::gemm(kA, kB, &c_col), F(Shape{2, 2}, {158, 164, 339, 354})));
  EXPECT_TRUE(Close(ops::gemm(kA, kB, nullptr), F(Shape{2, 2}, {58, 64, 139, 154})));
}

TEST(Gemm, Errors) {
  EXPECT_TRUE(ThrowsUserError([] { ops::gemm(kA, kA, nullptr); }, {"Gemm", "inner"}));
  const Tensor bad_c = F(Shape{3}, {1, 2, 3});
  EXPECT_TRUE(ThrowsUserError([&] { ops::gemm(kA, kB, &bad_c); }, {"Gemm", "C (3)", "(2, 2)"}));
  EXPECT_TRUE(ThrowsUserError(
      [] {
        ops::gemm(F(Shape{3}, {1, 2, 3}), kB, nullptr);
      },
      {"Gemm", "2-D"}));
  EXPECT_TRUE(
      ThrowsUserError([] { ops::gemm(kA.astype(DType::i32), kB, nullptr); }, {"Gemm", "i32"}));
}

// The public deterministic GEMM, over shapes large enough to be split by columns and by rows,
// with every transpose combination and beta accumulation, against a double-precision loop.
TEST(Sgemm, SplitsAndTransposesAgainstNaive) {
  struct Case {
    std::int64_t m, n, k;
  };
  for (const Case c : {Case{70, 600, 100}, Case{300, 100, 200}, Case{5, 7, 3}}) {
    for (int t = 0; t < 4; ++t) {
      const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
      const Tensor a = test::random_tensor(Shape{c.m * c.k}, 21),
                   b = test::random_tensor(Shape{c.k * c.n}, 22);
      Tensor cm = test::random_tensor(Shape{c.n, c.m}, 23);
      const Tensor c0 = cm;
      const float* pa = a.data<float>();
      const float* pb = b.data<float>();
      ops::sgemm(ta, tb, c.m, c.n, c.k, 0.5f, pa, ta ? c.m : c.k, pb, tb ? c.k : c.n, 2.0f,
                 cm.data<float>(), c.n);
      Tensor expect(DType::f32, Shape{c.n, c.m});
      for (std::int64_t i = 0; i < c.m; ++i)
        for (std::int64_t j = 0; j < c.n; ++j) {
          double acc = 0;
          for (std::int64_t p = 0; p < c.k; ++p)
            acc += static_cast<double>(ta ? pa[p * c.m + i] : pa[i * c.k + p]) *
                   (tb ? pb[j * c.k + p] : pb[p * c.n + j]);
          expect.set(i * c.n + j, 0.5 * acc + 2.0 * c0.at(i * c.n + j));
        }
      EXPECT_TRUE(Close(cm, expect, 1e-4, 1e-5)) << c.m << "x" << c.n << "x" << c.k << " t" << t;
    }
  }
}

}  // namespace
}  // namespace tessera
