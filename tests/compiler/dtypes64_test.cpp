// int64, uint64 and double keep their 64 bits from the ONNX file through the reference backend:
// values past 2^31 (u64 past 2^63, doubles needing more than f32's 24 bits of mantissa) come out
// exact. Each of these cases would fail if the importer or an op narrowed to 32 bits.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "model_builder.h"
#include "tessera/compiler/backend.h"
#include "tessera/compiler/driver.h"
#include "tessera/compiler/onnx_import.h"
#include "tessera/ops/reference.h"
#include "tessera/runtime/device.h"

namespace tessera::compiler {
namespace {

using testing::make_model;
using testing::OnnxInput;

constexpr int kInt64 = 7, kUint64 = 13, kDouble = 11;
constexpr std::int64_t kBig = (std::int64_t{1} << 40) + 1;  // beyond int32 and f32's mantissa

// Runs `bytes` on the reference backend with `inputs`; returns the outputs.
std::map<std::string, Tensor> run_reference(const std::vector<std::byte>& bytes,
                                            const std::map<std::string, Tensor>& inputs) {
  register_builtin_backends("gaudi");
  const Graph g = import_onnx_bytes(bytes, "dtypes64.onnx");
  const Plan plan = compile(g, *create_backend("reference"));
  auto device = runtime::Device::open(plan.device);
  PlanRunner runner(plan, *device);
  return runner.run(inputs).outputs;
}

TEST(Dtypes64, ImportKeepsInt64Uint64AndDoubleInitializers) {
  const Tensor i = Tensor::from_ints(DType::i64, Shape{2}, {kBig, -kBig});
  Tensor u(DType::u64, Shape{1});
  u.data<std::uint64_t>()[0] = std::numeric_limits<std::uint64_t>::max();
  const Tensor d = Tensor::from_doubles(DType::f64, Shape{1}, {1.0 + 0x1p-40});
  const auto bytes = make_model({{"x", {"2"}, kInt64}}, {{"i", i}, {"u", u}, {"d", d}},
                                {{"Add", {"x", "i"}, {"y"}}}, {{"y", {"2"}, kInt64}});
  const Graph g = import_onnx_bytes(bytes, "dtypes64.onnx");
  const auto value = [&](const char* name) -> const Value& { return g.value(*g.find_value(name)); };
  EXPECT_EQ(value("x").dtype, DType::i64);
  EXPECT_EQ(value("y").dtype, DType::i64);
  EXPECT_TRUE(equal(*value("i").constant, i));
}

TEST(Dtypes64, Int64ArithmeticBeyondInt32IsExact) {
  // y = (x + c) * 3 - x, with every value past 2^31.
  const Tensor c = Tensor::from_ints(DType::i64, Shape{3}, {kBig, -(std::int64_t{1} << 35) - 3, 5});
  const Tensor three = Tensor::from_ints(DType::i64, Shape{}, {3});
  const auto bytes = make_model(
      {{"x", {"3"}, kInt64}}, {{"c", c}, {"three", three}},
      {{"Add", {"x", "c"}, {"s"}}, {"Mul", {"s", "three"}, {"m"}}, {"Sub", {"m", "x"}, {"y"}}},
      {{"y", {"3"}, kInt64}});
  const std::vector<std::int64_t> x = {std::int64_t{1} << 41, 7, -(std::int64_t{1} << 33)};
  const auto out =
      run_reference(bytes, {{"x", Tensor::from_ints(DType::i64, Shape{3}, x)}}).at("y");
  ASSERT_EQ(out.dtype(), DType::i64);
  const std::vector<std::int64_t> cv = c.to_ints();
  for (std::size_t k = 0; k < 3; ++k)
    EXPECT_EQ(out.at<std::int64_t>(static_cast<std::int64_t>(k)), (x[k] + cv[k]) * 3 - x[k]) << k;
}

TEST(Dtypes64, Uint64BeyondTwoToThe63IsExact) {
  Tensor c(DType::u64, Shape{2});
  c.data<std::uint64_t>()[0] = (std::uint64_t{1} << 63) + 1;
  c.data<std::uint64_t>()[1] = std::numeric_limits<std::uint64_t>::max();
  const auto bytes = make_model({{"x", {"2"}, kUint64}}, {{"c", c}},
                                {{"Max", {"x", "c"}, {"y"}}, {"Add", {"y", "c"}, {"z"}}},
                                {{"y", {"2"}, kUint64}, {"z", {"2"}, kUint64}});
  Tensor x(DType::u64, Shape{2});
  x.data<std::uint64_t>()[0] = (std::uint64_t{1} << 63) + 5;
  x.data<std::uint64_t>()[1] = 1;
  const auto out = run_reference(bytes, {{"x", x}});
  const Tensor& y = out.at("y");
  ASSERT_EQ(y.dtype(), DType::u64);
  EXPECT_EQ(y.data<std::uint64_t>()[0], (std::uint64_t{1} << 63) + 5);
  EXPECT_EQ(y.data<std::uint64_t>()[1], std::numeric_limits<std::uint64_t>::max());
  // Sums wrap modulo 2^64, as NumPy's and ONNX Runtime's do.
  EXPECT_EQ(out.at("z").data<std::uint64_t>()[0], std::uint64_t{6});
  EXPECT_EQ(out.at("z").data<std::uint64_t>()[1], std::numeric_limits<std::uint64_t>::max() - 1);
}

TEST(Dtypes64, DoubleKeepsItsMantissa) {
  // 1 + 2^-40 + 2^-41 needs 42 bits of mantissa; in f32 both terms vanish.
  const Tensor c = Tensor::from_doubles(DType::f64, Shape{1}, {0x1p-41});
  const auto bytes = make_model({{"x", {"1"}, kDouble}}, {{"c", c}},
                                {{"Add", {"x", "c"}, {"s"}},
                                 {"Sqrt", {"s"}, {"r"}},
                                 {"Mul", {"r", "r"}, {"y"}},
                                 {"ReduceSum", {"y"}, {"t"}}},
                                {{"s", {"1"}, kDouble}, {"t", {"1"}, kDouble}});
  const auto out =
      run_reference(bytes, {{"x", Tensor::from_doubles(DType::f64, Shape{1}, {1.0 + 0x1p-40})}});
  ASSERT_EQ(out.at("s").dtype(), DType::f64);
  EXPECT_EQ(out.at("s").at<double>(0), 1.0 + 0x1p-40 + 0x1p-41);
  // sqrt(s)^2 in f64 is within an ulp or two of s, far closer than f32's 2^-24.
  EXPECT_NEAR(out.at("t").at<double>(0), 1.0 + 0x1p-40 + 0x1p-41, 0x1p-50);
}

TEST(Dtypes64, IndexOutputsAreInt64AsOnnxSays) {
  const auto bytes =
      make_model({{"x", {"2", "3"}}}, {},
                 {{"Shape", {"x"}, {"s"}},
                  {"ArgMax", {"x"}, {"a"}, {{"axis", {1}}}, true},
                  {"Size", {"x"}, {"n"}}},
                 {{"s", {"2"}, kInt64}, {"a", {"2", "1"}, kInt64}, {"n", {}, kInt64}});
  const auto out =
      run_reference(bytes, {{"x", Tensor::from_vector(Shape{3, 2}, {1, 5, 2, 9, 3, 4})}});
  EXPECT_EQ(out.at("s").dtype(), DType::i64);
  EXPECT_EQ(out.at("a").dtype(), DType::i64);
  EXPECT_EQ(out.at("n").dtype(), DType::i64);
  EXPECT_EQ(out.at("a").to_ints(), (std::vector<std::int64_t>{1, 0}));
  EXPECT_EQ(out.at("n").at<std::int64_t>(0), 6);
}

TEST(Dtypes64, CastFromDoubleTruncatesBeyondF32) {
  // 2^40 + 1.75 truncates to 2^40 + 1; through f32 it would be 2^40.
  const auto bytes =
      make_model({{"x", {"1"}, kDouble}}, {}, {{"Cast", {"x"}, {"y"}, {{"to", {kInt64}}}, true}},
                 {{"y", {"1"}, kInt64}});
  const auto out =
      run_reference(bytes, {{"x", Tensor::from_doubles(DType::f64, Shape{1}, {0x1p40 + 1.75})}});
  EXPECT_EQ(out.at("y").at<std::int64_t>(0), kBig);
}

TEST(Dtypes64, NpyFilesOfEightByteTypesLoadExactly) {
  Tensor u(DType::u64, Shape{1});
  u.data<std::uint64_t>()[0] = std::numeric_limits<std::uint64_t>::max();
  for (const Tensor& t : {Tensor::from_ints(DType::i64, Shape{2}, {kBig, -kBig}), u,
                          Tensor::from_doubles(DType::f64, Shape{1}, {1.0 + 0x1p-52})}) {
    const Tensor back = decode_npy(encode_npy(t));
    EXPECT_TRUE(equal(back, t)) << t.to_string();
  }
  // Printing keeps every digit.
  EXPECT_EQ(u.to_string(), "u64(1)[18446744073709551615]");
}

// Integer compares are exact: 2^53 + 1 and 2^53 are the same double, but not the same int64.
TEST(Dtypes64, CompareOfInt64IsExact) {
  const Tensor a = Tensor::from_ints(DType::i64, Shape{1}, {(std::int64_t{1} << 53) + 1});
  const Tensor b = Tensor::from_ints(DType::i64, Shape{1}, {std::int64_t{1} << 53});
  EXPECT_FALSE(allclose(a, b, 0, 0));
  EXPECT_TRUE(allclose(a, a, 0, 0));
}

// 2^53 + 1 and 2^53 + 2 are distinct int64 values that one double cannot tell apart.
TEST(Dtypes64, ScatterAndTopKOfInt64BeyondTwoToThe53AreExact) {
  const std::int64_t b = std::int64_t{1} << 53;
  const Tensor data = Tensor::from_ints(DType::i64, Shape{3}, {b + 1, b + 2, 0});
  const Tensor idx = Tensor::from_ints(DType::i64, Shape{1}, {2});
  const Tensor upd = Tensor::from_ints(DType::i64, Shape{1}, {b + 3});
  const Tensor s = ops::scatter_elements(data, idx, upd, 0, ops::ScatterReduction::add);
  EXPECT_EQ(s.to_ints(), (std::vector<std::int64_t>{b + 1, b + 2, b + 3}));
  const ops::TopKResult top = ops::top_k(data, 1, 0, true, true);
  EXPECT_EQ(top.indices.to_ints(), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(top.values.to_ints(), (std::vector<std::int64_t>{b + 2}));
  EXPECT_EQ(ops::argmax(data, 0, false).to_ints(), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(ops::cum_sum(data, 0, false, false).to_ints(),
            (std::vector<std::int64_t>{b + 1, 2 * b + 3, 2 * b + 3}));
  // f64 accumulates in f64: 2^-30 survives next to 1, where an f32 sum would drop it.
  const Tensor d = Tensor::from_doubles(DType::f64, Shape{2}, {1.0, 0x1p-30});
  EXPECT_EQ(ops::cum_sum(d, 0, false, false).at<double>(1), 1.0 + 0x1p-30);
  EXPECT_EQ(ops::range(0.0, 2.0, 1.0 + 0x1p-40, DType::f64).at<double>(1), 1.0 + 0x1p-40);
}

// Range's inputs, Clip's bounds and Pad's constant reach the ops without a trip through double:
// 2^53 + 1 is not a double, so each output would be off by one if it were. (Range's inputs set
// its shape, so they are constants and Range is folded at compile time.)
TEST(Dtypes64, RangeClipAndPadScalarsOfInt64AreExact) {
  const std::int64_t b = std::int64_t{1} << 53;
  const auto scalar = [](std::int64_t v) { return Tensor::from_ints(DType::i64, Shape{}, {v}); };
  const auto bytes = make_model({{"x", {"3"}, kInt64}},
                                {{"start", scalar(b + 1)},
                                 {"limit", scalar(b + 7)},
                                 {"delta", scalar(2)},
                                 {"lo", scalar(b + 1)},
                                 {"hi", scalar(b + 3)},
                                 {"pads", Tensor::from_ints(DType::i64, Shape{2}, {1, 1})},
                                 {"value", scalar(b + 1)}},
                                {{"Range", {"start", "limit", "delta"}, {"r"}},
                                 {"Clip", {"x", "lo", "hi"}, {"c"}},
                                 {"Pad", {"x", "pads", "value"}, {"p"}}},
                                {{"r", {"3"}, kInt64}, {"c", {"3"}, kInt64}, {"p", {"5"}, kInt64}});
  const auto out =
      run_reference(bytes, {{"x", Tensor::from_ints(DType::i64, Shape{3}, {b, b + 2, b + 5})}});
  EXPECT_EQ(out.at("r").to_ints(), (std::vector<std::int64_t>{b + 1, b + 3, b + 5}));
  EXPECT_EQ(out.at("c").to_ints(), (std::vector<std::int64_t>{b + 1, b + 2, b + 3}));
  EXPECT_EQ(out.at("p").to_ints(), (std::vector<std::int64_t>{b + 1, b, b + 2, b + 5, b + 1}));
}

}  // namespace
}  // namespace tessera::compiler
