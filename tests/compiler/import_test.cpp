// ONNX import: the IR it builds, and a UserError naming the file (and node) for every bad input.
#include <gtest/gtest.h>

#include <random>

#include "model_builder.h"
#include "tessera/compiler/onnx_import.h"
#include "tessera/core/error.h"

namespace tessera::compiler {
namespace {

using testing::make_model;
using testing::OnnxNode;

const std::string kSmall = std::string(TESSERA_MODELS_DIR) + "/resnet_small.onnx";

template <typename Fn>
std::string user_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(Import, ResnetSmallBuildsTypedShapedGraph) {
  const Graph g = import_onnx_file(kSmall);
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.value(g.inputs[0]).shape, Shape::nchw(1, 3, 32, 32));
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.value(g.outputs[0]).shape, (Shape{10, 1}));
  EXPECT_EQ(g.opset, 13);
  int convs = 0, bns = 0;
  for (const Node& n : g.nodes) {
    convs += n.op == "Conv";
    bns += n.op == "BatchNormalization";
    for (ValueId v : n.outputs) EXPECT_GT(g.value(v).shape.element_count(), 0) << n.name;
  }
  EXPECT_EQ(convs, 9);
  EXPECT_EQ(bns, 9);
  // Weights arrive as constants with ONNX dims reversed: conv1 is (16, 3, 3, 3).
  const Node& first = g.nodes.front();
  EXPECT_EQ(g.value(first.inputs[1]).shape, (Shape{3, 3, 3, 16}));
  EXPECT_TRUE(g.value(first.inputs[1]).is_constant());
}

TEST(Import, MissingFileNamesThePath) {
  EXPECT_NE(user_error_of([] {
              import_onnx_file("/nonexistent/model.onnx");
            }).find("/nonexistent/model.onnx"),
            std::string::npos);
}

TEST(Import, EmptyGarbageAndTruncatedFilesAreUserErrors) {
  EXPECT_NE(user_error_of([] { import_onnx_bytes({}, "empty.onnx"); }).find("empty.onnx"),
            std::string::npos);
  std::vector<std::byte> garbage(300);
  for (std::size_t i = 0; i < garbage.size(); ++i)
    garbage[i] = static_cast<std::byte>((i * 7919) & 0xff);
  EXPECT_NE(user_error_of([&] { import_onnx_bytes(garbage, "garbage.onnx"); }).find("garbage.onnx"),
            std::string::npos);
  const auto bytes = testing::read_bytes(kSmall);
  for (std::size_t cut :
       {std::size_t{1}, std::size_t{10}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 7}) {
    const std::span<const std::byte> part(bytes.data(), cut);
    const std::string msg = user_error_of([&] { import_onnx_bytes(part, "cut.onnx"); });
    EXPECT_NE(msg.find("cut.onnx"), std::string::npos) << "cut at " << cut << ": " << msg;
  }
}

// Random corruption never crashes: each attempt imports or raises a UserError.
TEST(Import, FuzzedModelsImportOrRaiseUserErrors) {
  const auto model = make_model(
      {{"x", {"1", "2", "4", "4"}}}, {{"w", Tensor::full(DType::f32, Shape{3, 3, 2, 2}, 0.5)}},
      {{"Conv", {"x", "w"}, {"y"}, {{"pads", {1, 1, 1, 1}}}}, {"Relu", {"y"}, {"z"}}},
      {{"z", {"1", "2", "4", "4"}}});
  std::mt19937 rng(1234);
  int imported = 0, rejected = 0;
  for (int trial = 0; trial < 300; ++trial) {
    auto bytes = model;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f)
      bytes[rng() % bytes.size()] = static_cast<std::byte>(rng() & 0xff);
    if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
    try {
      import_onnx_bytes(bytes, "fuzz.onnx");
      ++imported;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("fuzz.onnx"), std::string::npos) << e.what();
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_EQ(imported + rejected, 300);
}

TEST(Import, UnsupportedOpNamesFileNodeAndOp) {
  const auto bytes =
      make_model({{"x", {"2", "3"}}}, {}, {{"Hardmax", {"x"}, {"y"}}}, {{"y", {"2", "3"}}});
  const std::string msg = user_error_of([&] { import_onnx_bytes(bytes, "m.onnx"); });
  EXPECT_NE(msg.find("m.onnx"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Hardmax_0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Hardmax is not supported"), std::string::npos) << msg;
}

TEST(Import, SymbolicDimNeedsAValue) {
  const auto bytes =
      make_model({{"x", {"batch", "8"}}}, {}, {{"Relu", {"x"}, {"y"}}}, {{"y", {"batch", "8"}}});
  const std::string msg = user_error_of([&] { import_onnx_bytes(bytes, "dyn.onnx"); });
  EXPECT_NE(msg.find("--dim batch=VALUE"), std::string::npos) << msg;
  ImportOptions options;
  options.dims["batch"] = 4;
  const Graph g = import_onnx_bytes(bytes, "dyn.onnx", options);
  EXPECT_EQ(g.value(g.outputs[0]).shape, (Shape{8, 4}));
}

TEST(Import, OpsetOutsideTheRangeIsRejected) {
  const auto bytes = make_model({{"x", {"2"}}}, {}, {{"Relu", {"x"}, {"y"}}}, {{"y", {"2"}}}, 18);
  const std::string msg = user_error_of([&] { import_onnx_bytes(bytes, "new.onnx"); });
  EXPECT_NE(msg.find("opset 18"), std::string::npos) << msg;
}

TEST(Import, ShapeOperandInputCanBeBound) {
  const auto bytes = make_model({{"x", {"2", "6"}}, {"s", {"2"}, 7}}, {},
                                {{"Reshape", {"x", "s"}, {"y"}}}, {{"y", {"a", "b"}}});
  // The shape input is dynamic: the output shape cannot be known.
  EXPECT_NE(
      user_error_of([&] { import_onnx_bytes(bytes, "r.onnx"); }).find("could not be inferred"),
      std::string::npos);
  ImportOptions options;
  options.constant_inputs["s"] = Tensor::from_ints(DType::i32, Shape{2}, {3, 4});
  const Graph g = import_onnx_bytes(bytes, "r.onnx", options);
  EXPECT_EQ(g.value(g.outputs[0]).shape, (Shape{4, 3}));
  EXPECT_EQ(g.inputs.size(), 1u);
}

TEST(Import, TensorPbRoundTripAndGarbage) {
  EXPECT_NE(user_error_of([] { load_tensor_file("x.txt"); }).find("x.txt"), std::string::npos);
  std::vector<std::byte> junk(5, std::byte{0xff});
  EXPECT_FALSE(user_error_of([&] { decode_tensor_pb(junk, "junk.pb"); }).empty());
}

}  // namespace
}  // namespace tessera::compiler
