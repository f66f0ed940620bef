// The one narrowing rule of device backends without 64-bit types (compiler/narrow.h), on gaudi:
// int64 values that provably fit int32 run on the device and come back exact and as int64; the
// nodes of one that does not fall back to reference, which computes it in 64 bits, with a reason
// naming the value.
#include <gtest/gtest.h>

#include <cstdint>

#include "model_builder.h"
#include "tessera/compiler/backend.h"
#include "tessera/compiler/driver.h"
#include "tessera/compiler/narrow.h"
#include "tessera/compiler/onnx_import.h"
#include "tessera/runtime/device.h"
#include "tessera/targets/tpc/backend/backend.h"

namespace tessera::compiler {
namespace {

constexpr int kInt64 = 7;

class Narrow : public ::testing::Test {
 protected:
  void SetUp() override {
    register_builtin_backends("gaudi");
    tpc::register_tpc_backend();
  }
  static std::map<std::string, Tensor> run(const Plan& plan,
                                           const std::map<std::string, Tensor>& inputs) {
    auto device = runtime::Device::open(plan.device);
    PlanRunner runner(plan, *device);
    return runner.run(inputs).outputs;
  }
};

TEST_F(Narrow, IndicesAndFittingConstantsRunOnTheDeviceExactly) {
  // Gather by a run-time int64 index input (valid indices are below the dimension) and by a
  // constant int64 index list whose elements fit int32.
  const Tensor cidx = Tensor::from_ints(DType::i64, Shape{2}, {3, 1});
  const auto bytes =
      testing::make_model({{"data", {"4", "3"}}, {"idx", {"2"}, kInt64}}, {{"cidx", cidx}},
                          {{"Gather", {"data", "idx"}, {"g"}}, {"Gather", {"data", "cidx"}, {"h"}}},
                          {{"g", {"2", "3"}}, {"h", {"2", "3"}}});
  const Graph g = import_onnx_bytes(bytes, "gather.onnx");
  const Plan plan = compile(g, *create_backend("gaudi"));
  EXPECT_EQ(plan.fallback_count(), 0);
  const Value& idx = plan.graph.value(*plan.graph.find_value("idx"));
  EXPECT_EQ(idx.dtype, DType::i32);
  EXPECT_EQ(idx.narrowed_from, DType::i64);
  std::vector<float> d(12);
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = static_cast<float>(i);
  const std::map<std::string, Tensor> inputs = {
      {"data", Tensor::from_vector(Shape{3, 4}, d)},
      {"idx", Tensor::from_ints(DType::i64, Shape{2}, {2, 0})}};
  const auto device_out = run(plan, inputs);
  const auto reference_out = run(compile(g, *create_backend("reference")), inputs);
  for (const char* name : {"g", "h"})
    EXPECT_TRUE(equal(device_out.at(name), reference_out.at(name))) << name;
}

TEST_F(Narrow, ValuesBeyondInt32FallBackWithTheReasonAndStayExact) {
  // x is an int64 graph input read by Add: nothing bounds it, so Add runs on reference in
  // 64 bits. The index arithmetic after ArgMax is bounded by a dimension, so it narrows.
  const std::int64_t big = std::int64_t{1} << 40;
  const auto bytes =
      testing::make_model({{"x", {"2"}, kInt64}, {"f", {"2", "5"}}},
                          {{"c", Tensor::from_ints(DType::i64, Shape{2}, {big, 1})},
                           {"one", Tensor::from_ints(DType::i64, Shape{}, {1})}},
                          {{"Add", {"x", "c"}, {"y"}},
                           {"ArgMax", {"f"}, {"a"}, {{"axis", {1}}, {"keepdims", {0}}}, true},
                           {"Add", {"a", "one"}, {"b"}}},
                          {{"y", {"2"}, kInt64}, {"b", {"2"}, kInt64}});
  const Graph g = import_onnx_bytes(bytes, "add.onnx");
  const Narrowing facts = analyse_64bit(g);
  const auto fits = [&](const char* name) {
    return facts.fits[static_cast<std::size_t>(*g.find_value(name))];
  };
  EXPECT_FALSE(fits("x"));
  EXPECT_FALSE(fits("y"));
  EXPECT_TRUE(fits("a"));   // [0, 4]
  EXPECT_TRUE(fits("b"));   // [1, 5]
  EXPECT_FALSE(fits("c"));  // holds 2^40
  EXPECT_TRUE(fits("one"));

  const Plan plan = compile(g, *create_backend("gaudi"));
  bool add_fell_back = false;
  for (const auto& info : plan.info) {
    const Node& n = plan.graph.nodes[static_cast<std::size_t>(info.node)];
    if (n.outputs[0] != *plan.graph.find_value("y")) continue;
    add_fell_back = info.fallback;
    EXPECT_NE(info.reason.find("int64 value 'x' is not provably within int32"), std::string::npos)
        << info.reason;
    EXPECT_NE(info.reason.find("graph input"), std::string::npos) << info.reason;
  }
  EXPECT_TRUE(add_fell_back);
  std::vector<float> f = {0, 9, 1, 2, 3, 7, 6, 5, 4, 8};
  const auto out = run(plan, {{"x", Tensor::from_ints(DType::i64, Shape{2}, {big, -3})},
                              {"f", Tensor::from_vector(Shape{5, 2}, f)}});
  ASSERT_EQ(out.at("y").dtype(), DType::i64);
  EXPECT_EQ(out.at("y").to_ints(), (std::vector<std::int64_t>{2 * big, -2}));
  ASSERT_EQ(out.at("b").dtype(), DType::i64);  // narrowed on the device, returned as int64
  EXPECT_EQ(out.at("b").to_ints(), (std::vector<std::int64_t>{2, 5}));  // argmax 1 and 4, plus 1
}

TEST_F(Narrow, ARangeThatMayLeaveInt32NamesItsBounds) {
  // An int32 input widened to int64 and shifted by 2^31 may reach past int32.
  const auto bytes = testing::make_model(
      {{"x", {"2"}, 6}}, {{"k", Tensor::from_ints(DType::i64, Shape{}, {std::int64_t{1} << 31})}},
      {{"Cast", {"x"}, {"w"}, {{"to", {kInt64}}}, true}, {"Add", {"w", "k"}, {"y"}}},
      {{"y", {"2"}, kInt64}});
  const Graph g = import_onnx_bytes(bytes, "cast.onnx");
  const Narrowing facts = analyse_64bit(g);
  const auto y = static_cast<std::size_t>(*g.find_value("y"));
  EXPECT_FALSE(facts.fits[y]);
  EXPECT_NE(facts.reason[y].find("may reach [0, 4294967295]"), std::string::npos)
      << facts.reason[y];
  const Plan plan = compile(g, *create_backend("gaudi"));
  const auto out = run(plan, {{"x", Tensor::from_ints(DType::i32, Shape{2}, {2147483647, -5})}});
  EXPECT_EQ(out.at("y").to_ints(), (std::vector<std::int64_t>{4294967295, 2147483643}));
}

}  // namespace
}  // namespace tessera::compiler
