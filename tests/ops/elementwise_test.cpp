// Elementwise ops: arithmetic with broadcasting, unary math, compares, Where, variadic, Clip, Cast.
#include <cmath>

#include "helpers.h"
#include "tessera/ops/reference.h"

namespace tessera {
namespace {

using test::Close;
using test::F;
using test::I;
using test::ThrowsUserError;

TEST(Binary, SameShape) {
  const Tensor a = F(Shape{3}, {1, 2, 3}), b = F(Shape{3}, {10, 20, 30});
  EXPECT_TRUE(Close(ops::add(a, b), F(Shape{3}, {11, 22, 33})));
  EXPECT_TRUE(Close(ops::sub(a, b), F(Shape{3}, {-9, -18, -27})));
  EXPECT_TRUE(Close(ops::mul(a, b), F(Shape{3}, {10, 40, 90})));
  EXPECT_TRUE(Close(ops::div(b, a), F(Shape{3}, {10, 10, 10})));
  EXPECT_TRUE(Close(ops::pow(a, F(Shape{3}, {2, 3, 0.5f})), F(Shape{3}, {1, 8, std::sqrt(3.0f)})));
}

TEST(Binary, BroadcastRowAgainstColumn) {
  // a is {3} (a row of 3), b is {1, 2} (a column of 2): the result is {3, 2}.
  const Tensor a = F(Shape{3}, {1, 2, 3}), b = F(Shape{1, 2}, {10, 20});
  EXPECT_TRUE(Close(ops::add(a, b), F(Shape{3, 2}, {11, 12, 13, 21, 22, 23})));
  EXPECT_TRUE(Close(ops::sub(b, a), F(Shape{3, 2}, {9, 8, 7, 19, 18, 17})));
}

TEST(Binary, ScalarBroadcast) {
  const Tensor a = F(Shape{2, 2}, {1, 2, 3, 4});
  const Tensor s = Tensor::scalar(DType::f32, 2);
  EXPECT_TRUE(Close(ops::mul(a, s), F(Shape{2, 2}, {2, 4, 6, 8})));
  EXPECT_TRUE(Close(ops::div(s, a), F(Shape{2, 2}, {2, 1, 2.0f / 3, 0.5f})));
  EXPECT_TRUE(Close(ops::add(s, s), Tensor::scalar(DType::f32, 4)));
}

// Every broadcast pattern over ranks 1..5 with awkward sizes, against index arithmetic.
TEST(Binary, BroadcastAllRanksAgainstNaive) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {Shape{67}, Shape{1}},
      {Shape{65, 3}, Shape{65, 1}},
      {Shape{1, 3}, Shape{7, 1}},
      {Shape{5, 1, 3}, Shape{1, 4, 1}},
      {Shape{3, 4, 5, 2}, Shape{3, 1, 5}},
      {Shape{2, 3, 1, 5, 2}, Shape{1, 3, 4, 1, 2}},
      {Shape{129}, Shape{129, 3}},
      {Shape{2, 1, 1, 1, 3}, Shape{2}},
  };
  for (const auto& [sa, sb] : cases) {
    const Tensor a = test::random_tensor(sa, 1), b = test::random_tensor(sb, 2);
    const Tensor c = ops::sub(a, b);
    const Shape out = broadcast_shapes(sa, sb);
    ASSERT_EQ(c.shape(), out);
    std::array<std::int64_t, 5> idx{};
    for (std::int64_t flat = 0; flat < out.element_count(); ++flat) {
      std::int64_t rem = flat, ia = 0, ib = 0, sta = 1, stb = 1;
      for (int d = 0; d < out.rank(); ++d) {
        idx[static_cast<std::size_t>(d)] = rem % out[d];
        rem /= out[d];
        if (d < sa.rank()) {
          ia += (sa[d] == 1 ? 0 : idx[static_cast<std::size_t>(d)]) * sta;
          sta *= sa[d];
        }
        if (d < sb.rank()) {
          ib += (sb[d] == 1 ? 0 : idx[static_cast<std::size_t>(d)]) * stb;
          stb *= sb[d];
        }
      }
      ASSERT_EQ(c.at(flat), a.at(ia) - b.at(ib)) << sa.to_string() << " - " << sb.to_string();
    }
  }
}

TEST(Binary, IntegersWrapAndDivideTowardZero) {
  const Tensor a = I(DType::i8, Shape{3}, {127, -128, -7});
  const Tensor b = I(DType::i8, Shape{3}, {1, -1, 2});
  EXPECT_EQ(ops::add(a, b).to_ints(), (std::vector<std::int64_t>{-128, 127, -5}));
  EXPECT_EQ(ops::div(a, b).to_ints(), (std::vector<std::int64_t>{127, -128, -3}));
  EXPECT_EQ(ops::mul(I(DType::u8, Shape{1}, {16}), I(DType::u8, Shape{1}, {17})).to_ints(),
            (std::vector<std::int64_t>{16}));  // 272 mod 256
  EXPECT_TRUE(ThrowsUserError(
      [&] {
        ops::div(a, I(DType::i8, Shape{3}, {1, 0, 1}));
      },
      {"Div", "zero", "element 1"}));
  EXPECT_EQ(ops::pow(I(DType::i32, Shape{2}, {2, 3}), I(DType::i32, Shape{2}, {10, 3})).to_ints(),
            (std::vector<std::int64_t>{1024, 27}));
}

TEST(Binary, HalfPrecisionComputesInF32AndRounds) {
  const Tensor a = Tensor::from_vector(Shape{2}, {1.0f, 1000.0f}, DType::f16);
  const Tensor b = Tensor::from_vector(Shape{2}, {0x1p-11f, 0.3f}, DType::f16);
  const Tensor c = ops::add(a, b);
  EXPECT_EQ(c.dtype(), DType::f16);
  EXPECT_EQ(c.at(0), 1.0f);     // tie rounds to even
  EXPECT_EQ(c.at(1), 1000.5f);  // 1000.2999 rounds to the f16 grid (spacing 0.5 there)
  const Tensor bf = ops::mul(Tensor::from_vector(Shape{1}, {3.0f}, DType::bf16),
                             Tensor::from_vector(Shape{1}, {1.0f / 3}, DType::bf16));
  EXPECT_EQ(bf.dtype(), DType::bf16);
  EXPECT_NEAR(bf.at(0), 1.0f, 1.0f / 128);
}

TEST(Binary, PowWithIntegerExponent) {
  const Tensor r = ops::pow(F(Shape{3}, {2, -3, 4}), I(DType::i32, Shape{1}, {2}));
  EXPECT_TRUE(Close(r, F(Shape{3}, {4, 9, 16})));
}

TEST(Binary, Errors) {
  EXPECT_TRUE(ThrowsUserError(
      [] {
        ops::add(F(Shape{3}, {1, 2, 3}), F(Shape{2}, {1, 2}));
      },
      {"(3)", "(2)", "broadcast"}));
  EXPECT_TRUE(ThrowsUserError([] { ops::mul(F(Shape{1}, {1}), I(DType::i32, Shape{1}, {1})); },
                              {"Mul", "f32", "i32"}));
  EXPECT_TRUE(ThrowsUserError(
      [] { ops::add(Tensor(DType::boolean, Shape{1}), Tensor(DType::boolean, Shape{1})); },
      {"Add", "bool"}));
}

TEST(Unary, Values) {
  const Tensor x = F(Shape{4}, {-2, -0.5f, 0, 1.5f});
  EXPECT_TRUE(Close(ops::neg(x), F(Shape{4}, {2, 0.5f, 0, -1.5f})));
  EXPECT_TRUE(Close(ops::abs(x), F(Shape{4}, {2, 0.5f, 0, 1.5f})));
  EXPECT_TRUE(Close(ops::relu(x), F(Shape{4}, {0, 0, 0, 1.5f})));
  EXPECT_TRUE(Close(ops::leaky_relu(x, 0.1f), F(Shape{4}, {-0.2f, -0.05f, 0, 1.5f})));
  EXPECT_TRUE(Close(ops::elu(x, 2.0f),
                    F(Shape{4}, {2 * (std::exp(-2.0f) - 1), 2 * (std::exp(-0.5f) - 1), 0, 1.5f})));
  const float a = 1.67326319217681884765625f, g = 1.05070102214813232421875f;
  EXPECT_TRUE(Close(ops::selu(x), F(Shape{4}, {g * a * (std::exp(-2.0f) - 1),
                                               g * a * (std::exp(-0.5f) - 1), 0, g * 1.5f})));
  EXPECT_TRUE(Close(ops::sigmoid(F(Shape{3}, {0, 100, -100})), F(Shape{3}, {0.5f, 1, 0})));
  EXPECT_TRUE(Close(ops::tanh(F(Shape{2}, {0, 0.5f})), F(Shape{2}, {0, std::tanh(0.5f)})));
  EXPECT_TRUE(Close(ops::softplus(F(Shape{3}, {0, 100, -100})),
                    F(Shape{3}, {std::log(2.0f), 100, std::exp(-100.0f)})));
  EXPECT_TRUE(Close(ops::exp(F(Shape{2}, {0, 1})), F(Shape{2}, {1, std::exp(1.0f)})));
  EXPECT_TRUE(Close(ops::log(F(Shape{2}, {1, std::exp(2.0f)})), F(Shape{2}, {0, 2})));
  EXPECT_TRUE(Close(ops::sqrt(F(Shape{2}, {4, 2})), F(Shape{2}, {2, std::sqrt(2.0f)})));
  EXPECT_TRUE(Close(ops::reciprocal(F(Shape{2}, {4, -0.5f})), F(Shape{2}, {0.25f, -2})));
  EXPECT_TRUE(Close(ops::erf(F(Shape{2}, {0, 0.5f})), F(Shape{2}, {0, 0.5204998778f})));
  EXPECT_TRUE(Close(ops::gelu(F(Shape{2}, {0, 1})), F(Shape{2}, {0, 0.8413447461f})));
  EXPECT_TRUE(Close(ops::gelu(F(Shape{2}, {0, 1}), ops::GeluApproximation::tanh),
                    F(Shape{2}, {0, 0.8411919906f})));
  EXPECT_TRUE(std::isnan(ops::sqrt(F(Shape{1}, {-1})).at(0)));
}

TEST(Unary, IntegersAndDtypes) {
  EXPECT_EQ(ops::neg(I(DType::i32, Shape{2}, {5, -7})).to_ints(),
            (std::vector<std::int64_t>{-5, 7}));
  EXPECT_EQ(ops::abs(I(DType::i8, Shape{2}, {-5, 7})).to_ints(), (std::vector<std::int64_t>{5, 7}));
  EXPECT_EQ(ops::relu(I(DType::i16, Shape{2}, {-5, 7})).to_ints(),
            (std::vector<std::int64_t>{0, 7}));
  EXPECT_EQ(ops::relu(F(Shape{1}, {-1})).dtype(), DType::f32);
  const Tensor h = ops::exp(Tensor::from_vector(Shape{1}, {1.0f}, DType::bf16));
  EXPECT_EQ(h.dtype(), DType::bf16);
  EXPECT_EQ(h.at(0), bf16(std::exp(1.0f)));
  EXPECT_TRUE(
      ThrowsUserError([] { ops::exp(I(DType::i32, Shape{1}, {1})); }, {"Exp", "i32", "Cast"}));
  EXPECT_TRUE(ThrowsUserError([] { ops::neg(I(DType::u8, Shape{1}, {1})); }, {"Neg", "unsigned"}));
}

TEST(Clip, BoundsAndDtypes) {
  const Tensor x = F(Shape{5}, {-3, -1, 0, 2, 5});
  EXPECT_TRUE(Close(ops::clip(x, -1.0, 2.0), F(Shape{5}, {-1, -1, 0, 2, 2})));
  EXPECT_TRUE(Close(ops::clip(x, std::nullopt, 1.0), F(Shape{5}, {-3, -1, 0, 1, 1})));
  EXPECT_TRUE(Close(ops::clip(x, 0.0, std::nullopt), F(Shape{5}, {0, 0, 0, 2, 5})));
  EXPECT_TRUE(Close(ops::clip(x, 3.0, 1.0), F(Shape{5}, {1, 1, 1, 1, 1})));  // min > max
  EXPECT_EQ(ops::clip(I(DType::i32, Shape{3}, {-9, 4, 9}), -5.0, 5.0).to_ints(),
            (std::vector<std::int64_t>{-5, 4, 5}));
}

TEST(Compare, BroadcastToBool) {
  const Tensor a = F(Shape{3}, {1, 2, 3}), b = F(Shape{1, 2}, {2, 3});
  const Tensor eq = ops::equal(a, b);
  EXPECT_EQ(eq.dtype(), DType::boolean);
  EXPECT_EQ(eq.shape(), (Shape{3, 2}));
  EXPECT_EQ(eq.to_ints(), (std::vector<std::int64_t>{0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(ops::less(a, b).to_ints(), (std::vector<std::int64_t>{1, 0, 0, 1, 1, 0}));
  EXPECT_EQ(ops::greater(a, b).to_ints(), (std::vector<std::int64_t>{0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(ops::equal(I(DType::i32, Shape{2}, {4, 5}), I(DType::i32, Shape{}, {5})).to_ints(),
            (std::vector<std::int64_t>{0, 1}));
  const Tensor t = Tensor::from_ints(DType::boolean, Shape{2}, {1, 0});
  EXPECT_EQ(ops::equal(t, t).to_ints(), (std::vector<std::int64_t>{1, 1}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::less(t, t); }, {"Less", "bool"}));
  const float nan = std::nanf("");
  EXPECT_EQ(ops::equal(F(Shape{1}, {nan}), F(Shape{1}, {nan})).to_ints(),
            (std::vector<std::int64_t>{0}));
}

TEST(Where, ThreeWayBroadcast) {
  const Tensor c = Tensor::from_ints(DType::boolean, Shape{1, 2}, {1, 0});
  const Tensor x = F(Shape{3}, {1, 2, 3});
  const Tensor y = Tensor::scalar(DType::f32, -1);
  EXPECT_TRUE(Close(ops::where(c, x, y), F(Shape{3, 2}, {1, 2, 3, -1, -1, -1})));
  const Tensor xi = I(DType::i16, Shape{2}, {7, 8}), yi = I(DType::i16, Shape{2}, {70, 80});
  EXPECT_EQ(ops::where(Tensor::from_ints(DType::boolean, Shape{2}, {0, 1}), xi, yi).to_ints(),
            (std::vector<std::int64_t>{70, 8}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::where(x, x, x); }, {"Where", "condition", "bool"}));
  EXPECT_TRUE(ThrowsUserError([&] { ops::where(c, x, xi); }, {"Where", "f32", "i16"}));
}

TEST(Variadic, SumMaxMin) {
  const Tensor a = F(Shape{3}, {1, 5, 3}), b = F(Shape{1}, {2}),
               c = F(Shape{3, 2}, {0, 0, 9, 1, 1, 1});
  EXPECT_TRUE(Close(ops::sum({a}), a));
  EXPECT_TRUE(Close(ops::sum({a, b, c}), F(Shape{3, 2}, {3, 7, 14, 4, 8, 6})));
  EXPECT_TRUE(Close(ops::max({a, b}), F(Shape{3}, {2, 5, 3})));
  EXPECT_TRUE(Close(ops::min({a, b, c}), F(Shape{3, 2}, {0, 0, 2, 1, 1, 1})));
  EXPECT_TRUE(std::isnan(ops::max({F(Shape{1}, {std::nanf("")}), F(Shape{1}, {1})}).at(0)));
  EXPECT_EQ(
      ops::max({I(DType::u8, Shape{2}, {3, 200}), I(DType::u8, Shape{2}, {4, 100})}).to_ints(),
      (std::vector<std::int64_t>{4, 200}));
  EXPECT_TRUE(ThrowsUserError([] { ops::sum({}); }, {"Sum", "at least one"}));
}

TEST(Cast, TruncatesFloatsAndSaturates) {
  const Tensor x = F(Shape{5}, {-1.7f, 2.9f, 1e10f, -1e10f, 0.5f});
  EXPECT_EQ(ops::cast(x, DType::i32).to_ints(),
            (std::vector<std::int64_t>{-1, 2, 2147483647, -2147483648LL, 0}));
  EXPECT_EQ(ops::cast(x, DType::u8).to_ints(), (std::vector<std::int64_t>{0, 2, 255, 0, 0}));
  EXPECT_EQ(ops::cast(x, DType::boolean).to_ints(), (std::vector<std::int64_t>{1, 1, 1, 1, 1}));
  EXPECT_EQ(ops::cast(I(DType::i32, Shape{2}, {300, -5}), DType::u8).to_ints(),
            (std::vector<std::int64_t>{255, 0}));
  EXPECT_TRUE(Close(ops::cast(Tensor::from_ints(DType::boolean, Shape{2}, {1, 0}), DType::f32),
                    F(Shape{2}, {1, 0})));
  EXPECT_EQ(ops::cast(F(Shape{1}, {0.1f}), DType::f16).at(0), f16(0.1f));
  EXPECT_TRUE(equal(ops::identity(x), x));
}

}  // namespace
}  // namespace tessera
