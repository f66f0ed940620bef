// Elementwise kernels of the built-in library against ops/reference: every unary op, binary ops
// with broadcasting, integer variants and casts, on shapes of rank 1-5 whose dim 0 is not a
// multiple of the vector width. f32 within 1e-5 relative (special functions are within 1 ulp);
// bf16 within kBf16Rtol / kBf16Atol.
#include <functional>

#include "kernels_util.h"

namespace kernels_test {
namespace {

const std::vector<Shape> kShapes = {Shape{1000}, Shape{130, 3}, Shape{65, 2, 3},
                                    Shape{200, 1, 2, 1}, Shape{5, 3, 2, 2, 3}};

struct UnaryCase {
  const char* name;
  double lo, hi;
  std::function<Tensor(const Tensor&)> reference;
  std::function<const profile::KernelRecord&(Runtime&, const DeviceTensor&, const DeviceTensor&)>
      run;
  double atol = 1e-6;
};

std::vector<UnaryCase> unary_cases() {
  using DT = const DeviceTensor&;
  return {
      {"abs", -3, 3, [](const Tensor& x) { return ops::abs(x); }, top::abs},
      {"neg", -3, 3, [](const Tensor& x) { return ops::neg(x); }, top::neg},
      {"exp", -5, 5, [](const Tensor& x) { return ops::exp(x); }, top::exp},
      {"log", 0.01, 10, [](const Tensor& x) { return ops::log(x); }, top::log},
      {"sqrt", 0, 10, [](const Tensor& x) { return ops::sqrt(x); }, top::sqrt},
      {"reciprocal", 0.1, 5, [](const Tensor& x) { return ops::reciprocal(x); }, top::reciprocal},
      {"relu", -3, 3, [](const Tensor& x) { return ops::relu(x); }, top::relu},
      {"leakyrelu", -3, 3, [](const Tensor& x) { return ops::leaky_relu(x, 0.1f); },
       [](Runtime& rt, DT x, DT o) -> const profile::KernelRecord& {
         return top::leaky_relu(rt, x, o, 0.1f);
       }},
      {"elu", -3, 3, [](const Tensor& x) { return ops::elu(x, 0.7f); },
       [](Runtime& rt, DT x, DT o) -> const profile::KernelRecord& {
         return top::elu(rt, x, o, 0.7f);
       }},
      {"selu", -3, 3, [](const Tensor& x) { return ops::selu(x); },
       [](Runtime& rt, DT x, DT o) -> const profile::KernelRecord& { return top::selu(rt, x, o); }},
      {"gelu", -4, 4, [](const Tensor& x) { return ops::gelu(x); },
       [](Runtime& rt, DT x, DT o) -> const profile::KernelRecord& { return top::gelu(rt, x, o); },
       2e-6},
      {"gelu_tanh", -4, 4,
       [](const Tensor& x) { return ops::gelu(x, ops::GeluApproximation::tanh); },
       [](Runtime& rt, DT x, DT o) -> const profile::KernelRecord& {
         return top::gelu(rt, x, o, true);
       },
       2e-6},
      {"erf", -3, 3, [](const Tensor& x) { return ops::erf(x); }, top::erf, 2e-7},
      {"sigmoid", -8, 8, [](const Tensor& x) { return ops::sigmoid(x); }, top::sigmoid},
      {"tanh", -4, 4, [](const Tensor& x) { return ops::tanh(x); }, top::tanh},
      {"softplus", -10, 10, [](const Tensor& x) { return ops::softplus(x); }, top::softplus},
      {"clip", -2, 2, [](const Tensor& x) { return ops::clip(x, -0.5, 0.8); },
       [](Runtime& rt, DT x, DT o) -> const profile::KernelRecord& {
         return top::clip(rt, x, o, -0.5f, 0.8f);
       }},
  };
}

class Elementwise : public KernelTest, public ::testing::WithParamInterface<DType> {};

TEST_P(Elementwise, UnaryOpsMatchReference) {
  const DType dt = GetParam();
  std::uint32_t seed = 1;
  for (const UnaryCase& c : unary_cases())
    for (const Shape& shape : kShapes) {
      const Tensor x = random_tensor(dt, shape, c.lo, c.hi, seed++);
      const DeviceTensor dx = upload(x);
      const DeviceTensor dout = alloc(dt, shape);
      const profile::KernelRecord& rec = c.run(rt(), dx, dout);
      EXPECT_GT(rec.cycles, 0u);
      expect_close(download(dout), c.reference(x), rtol_for(dt, 1e-5), atol_for(dt, c.atol),
                   fmt::format("{} {} {}", c.name, dtype_name(dt), shape.to_string()));
    }
}

struct BinaryShapes {
  Shape a, b;
};
const std::vector<BinaryShapes> kBroadcasts = {
    {Shape{130, 3}, Shape{130, 3}},
    {Shape{130, 3}, Shape{1, 3}},
    {Shape{130, 3}, Shape{130}},
    {Shape{1, 4, 2}, Shape{70, 1, 2}},
    {Shape{5, 3, 2, 2, 3}, Shape{5, 1, 2, 1, 3}},
    {Shape{67, 2}, Shape{}},
    {Shape{1}, Shape{129, 2, 2}},
};

using BinaryRef = Tensor (*)(const Tensor&, const Tensor&);
using BinaryRun = const profile::KernelRecord& (*)(Runtime&, const DeviceTensor&,
                                                   const DeviceTensor&, const DeviceTensor&);
struct BinaryCase {
  const char* name;
  BinaryRef reference;
  BinaryRun run;
  double alo, ahi, blo, bhi;
};
const BinaryCase kBinary[] = {
    {"add", ops::add, top::add, -3, 3, -3, 3},  {"sub", ops::sub, top::sub, -3, 3, -3, 3},
    {"mul", ops::mul, top::mul, -3, 3, -3, 3},  {"div", ops::div, top::div, -3, 3, 0.5, 2},
    {"pow", ops::pow, top::pow, 0.1, 3, -2, 2}, {"min", nullptr, top::min, -3, 3, -3, 3},
    {"max", nullptr, top::max, -3, 3, -3, 3},
};

Tensor reference_binary(const BinaryCase& c, const Tensor& a, const Tensor& b) {
  if (c.reference) return c.reference(a, b);
  return std::string(c.name) == "min" ? ops::min({a, b}) : ops::max({a, b});
}

TEST_P(Elementwise, BinaryOpsBroadcast) {
  const DType dt = GetParam();
  std::uint32_t seed = 100;
  for (const BinaryCase& c : kBinary)
    for (const BinaryShapes& s : kBroadcasts) {
      const Tensor a = random_tensor(dt, s.a, c.alo, c.ahi, seed++);
      const Tensor b = random_tensor(dt, s.b, c.blo, c.bhi, seed++);
      const Tensor expected = reference_binary(c, a, b);
      const DeviceTensor out = alloc(dt, expected.shape());
      c.run(rt(), upload(a), upload(b), out);
      expect_close(download(out), expected, rtol_for(dt, 1e-5), atol_for(dt, 1e-6),
                   fmt::format("{} {} {} with {}", c.name, dtype_name(dt), s.a.to_string(),
                               s.b.to_string()));
    }
}

INSTANTIATE_TEST_SUITE_P(Floats, Elementwise, ::testing::Values(DType::f32, DType::bf16),
                         [](const auto& p) { return std::string(dtype_name(p.param)); });

class IntegerElementwise : public KernelTest, public ::testing::WithParamInterface<DType> {};

TEST_P(IntegerElementwise, ArithmeticWrapsAndBroadcasts) {
  const DType dt = GetParam();
  std::uint32_t seed = 500;
  for (const BinaryCase& c : kBinary) {
    const std::string name = c.name;
    if (name == "div" || name == "pow") continue;
    for (const BinaryShapes& s : kBroadcasts) {
      const Tensor a = random_tensor(dt, s.a, -100, 100, seed++);
      const Tensor b = random_tensor(dt, s.b, -100, 100, seed++);
      const Tensor expected = reference_binary(c, a, b);
      const DeviceTensor out = alloc(dt, expected.shape());
      c.run(rt(), upload(a), upload(b), out);
      expect_close(download(out), expected, 0, 0,
                   fmt::format("{} {} {}", name, dtype_name(dt), s.a.to_string()));
    }
  }
}

TEST_P(IntegerElementwise, AbsNegRelu) {
  const DType dt = GetParam();
  const Tensor x = random_tensor(dt, Shape{300, 3, 2}, -120, 120, 7);
  const DeviceTensor dx = upload(x);
  const DeviceTensor out = alloc(dt, x.shape());
  top::abs(rt(), dx, out);
  expect_close(download(out), ops::abs(x), 0, 0, "abs");
  top::neg(rt(), dx, out);
  expect_close(download(out), ops::neg(x), 0, 0, "neg");
  top::relu(rt(), dx, out);
  expect_close(download(out), ops::relu(x), 0, 0, "relu");
}

INSTANTIATE_TEST_SUITE_P(Integers, IntegerElementwise,
                         ::testing::Values(DType::i32, DType::i16, DType::i8),
                         [](const auto& p) { return std::string(dtype_name(p.param)); });

TEST_F(KernelTest, CastsBetweenEveryPairMatchReference) {
  const DType types[] = {DType::f32, DType::bf16, DType::i32, DType::i16, DType::i8, DType::u8};
  const Tensor base = random_tensor(DType::f32, Shape{300, 3}, -300.0, 300.0, 11);
  for (DType from : types) {
    const Tensor x = ops::cast(base, from);
    for (DType to : types) {
      const DeviceTensor out = alloc(to, x.shape());
      top::cast(rt(), upload(x), out);
      expect_close(download(out), ops::cast(x, to), 0, 0,
                   fmt::format("cast {} to {}", dtype_name(from), dtype_name(to)));
    }
  }
}

TEST_F(KernelTest, LaunchGoesThroughTheRuntimeAndCostModel) {
  const Tensor x = random_tensor(DType::f32, Shape{1000, 3}, -1, 1, 3);
  const DeviceTensor out = alloc(DType::f32, x.shape());
  const profile::KernelRecord& rec = top::relu(rt(), upload(x), out);
  EXPECT_EQ(rec.name, "relu_f32");
  EXPECT_EQ(rec.metrics.at("members"), 16.0 * 3);  // ceil(1000 / 64) x 3
  EXPECT_GT(rec.metrics.at("slot.vpu.issues"), 0.0);
  EXPECT_GT(rec.cycles, 0u);
  EXPECT_EQ(rec.bytes_written, 1000u * 3 * 4);
  const profile::KernelRecord& e = top::exp(rt(), upload(x), out);
  EXPECT_GT(e.metrics.at("special_function_calls"), 0.0);
}

// A kernel with no variant for a dtype runs its f32 variant between the library's TPC cast
// kernels, each a real launch with its own cycles (spec 000 §2.9), never a host cast.
TEST_F(KernelTest, MissingDtypeVariantRunsBetweenTpcCasts) {
  tpc::register_builtin_kernels();
  std::vector<std::int32_t> host;
  for (int i = 0; i < 200; ++i) host.push_back(i % 5 - 2);
  auto in = tpc::make_device_tensor(device(), DType::i32, Shape{200}, host.data());
  auto out = tpc::make_device_tensor(device(), DType::i32, Shape{200});
  const auto before = device().profile().kernels.size();
  // erf has no integer variant in the built-in library.
  const auto& rec = rt().launch("erf_i32", {in}, {out});
  EXPECT_EQ(rec.name, "erf_f32");
  std::vector<std::int32_t> got(200);
  device().copy_to_host(got.data(), out.buffer, 800);
  for (int i = 0; i < 200; ++i)
    EXPECT_EQ(got[i], static_cast<std::int32_t>(std::erf(host[i]))) << i;  // ONNX Cast truncates
  const auto& ks = device().profile().kernels;
  ASSERT_EQ(ks.size(), before + 3);
  EXPECT_EQ(ks[before].name, "cast_i32_to_f32");
  EXPECT_EQ(ks[before + 2].name, "cast_f32_to_i32");
  for (std::size_t k = before; k < before + 3; ++k) {
    EXPECT_GT(ks[k].cycles, 0u);
    EXPECT_GT(ks[k].metrics.at("slot.vpu.issues"), 0.0);  // ran on the TPCs
  }
}

}  // namespace
}  // namespace kernels_test
