// Model files whose node output types do not fit their op. Kernels size their copies by the
// stored shapes (a MatMul's once overflowed aicore's Core::copy, a MaxPool's ipu's
// Runner::transfer), so the loader re-derives every output with the importer's shape inference
// and refuses a mismatch, naming the node, the value, the stored and the derived type, on every
// backend. Valid files of every backend (the fuzz corpus) still load.
#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model_builder.h"
#include "tessera/compiler/backend.h"
#include "tessera/compiler/model_file.h"
#include "tessera/compiler/onnx_import.h"
#include "tessera/compiler/plan.h"
#include "tessera/core/error.h"
#include "tessera/targets/registry.h"

namespace tessera::compiler {
namespace {

using testing::OnnxNode;

class TamperedTsm : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { targets::register_all_backends(); }
};

// x (1, 2, 8, 8) -> Conv 3x3 (4 channels) -> Relu -> MaxPool 2x2 -> Flatten -> MatMul (64, 8):
// gaudi lays the Conv, Relu and MaxPool out in NHWC, bm and epu quantise to Int8* nodes.
Plan compiled_for(const std::string& target) {
  const auto model = testing::make_model(
      {{"x", {"1", "2", "8", "8"}}},
      {{"w", testing::random_tensor(Shape::from_outer_first(std::vector<std::int64_t>{4, 2, 3, 3}),
                                    1.0f, 1)},
       {"m", testing::random_tensor(Shape::from_outer_first(std::vector<std::int64_t>{64, 8}), 1.0f,
                                    2)}},
      {OnnxNode{"Conv", {"x", "w"}, {"c"}, {{"pads", {1, 1, 1, 1}}}},
       OnnxNode{"Relu", {"c"}, {"r"}},
       OnnxNode{"MaxPool", {"r"}, {"p"}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}},
       OnnxNode{"Flatten", {"p"}, {"f"}}, OnnxNode{"MatMul", {"f", "m"}, {"y"}}},
      {{"y", {"1", "8"}}});
  const auto backend = create_backend(target);
  return compile(import_onnx_bytes(model, "tamper.onnx"), *backend);
}

// The first node whose op is one of `ops`.
Node& node_of(Graph& g, const std::vector<std::string>& ops) {
  for (Node& n : g.nodes)
    if (std::find(ops.begin(), ops.end(), n.op) != ops.end()) return n;
  throw std::runtime_error("no node of these ops in the compiled graph");
}

std::string decode_error(const Plan& plan) {
  return testing::user_error_of([&] { decode_model(encode_model(plan), "tampered.tsm"); });
}

std::vector<std::string> device_targets() {
  std::vector<std::string> names;
  for (const auto& b : registered_backends()) names.push_back(b.name);
  return names;
}

TEST_F(TamperedTsm, UntamperedFilesLoadOnEveryBackend) {
  for (const auto& target : device_targets()) {
    const Plan plan = compiled_for(target);
    EXPECT_EQ(decode_error(plan), "") << target;
  }
}

TEST_F(TamperedTsm, OutputShapesThatDoNotFitTheOpAreRefusedOnEveryBackend) {
  for (const auto& target : device_targets()) {
    for (const std::vector<std::string>& ops :
         {std::vector<std::string>{"MatMul", "Gemm", "Int8Gemm"},
          std::vector<std::string>{"MaxPool", "Int8MaxPool"}}) {
      Plan plan = compiled_for(target);
      const Node& n = node_of(plan.graph, ops);
      Value& out = plan.graph.value(n.outputs[0]);
      const Shape derived = out.shape;
      std::vector<std::int64_t> dims(derived.fastest_first().begin(),
                                     derived.fastest_first().end());
      dims[0] *= 4;  // a larger buffer than the kernel fills: what overflowed the copies
      out.shape = Shape::from_fastest_first(dims);
      const std::string msg = decode_error(plan);
      SCOPED_TRACE(target + ": " + n.describe() + ": " + msg);
      EXPECT_NE(msg.find("tampered.tsm"), std::string::npos);
      EXPECT_NE(msg.find(n.describe()), std::string::npos);
      EXPECT_NE(msg.find("'" + out.name + "'"), std::string::npos);
      EXPECT_NE(
          msg.find("stored as " + std::string(dtype_name(out.dtype)) + " " + out.shape.to_string()),
          std::string::npos);
      EXPECT_NE(msg.find("give " + std::string(dtype_name(out.dtype)) + " " + derived.to_string()),
                std::string::npos);
    }
  }
}

TEST_F(TamperedTsm, OutputDtypesThatDoNotFitTheOpAreRefused) {
  for (const auto& target : device_targets()) {
    Plan plan = compiled_for(target);
    const Node& n = node_of(plan.graph, {"MaxPool", "Int8MaxPool"});
    Value& out = plan.graph.value(n.outputs[0]);
    const DType derived = out.dtype;
    out.dtype = derived == DType::f32 ? DType::f16 : DType::f32;
    const std::string msg = decode_error(plan);
    SCOPED_TRACE(target + ": " + msg);
    EXPECT_NE(msg.find(n.describe()), std::string::npos);
    EXPECT_NE(msg.find("stored as " + std::string(dtype_name(out.dtype))), std::string::npos);
    EXPECT_NE(msg.find("give " + std::string(dtype_name(derived))), std::string::npos);
  }
}

TEST_F(TamperedTsm, ALayoutThatDoesNotFitTheShapesIsRefused) {
  // gaudi's Conv reads NHWC; the same node claiming NCHW-in-NHWC order derives other shapes.
  Plan plan = compiled_for("gaudi");
  Node& conv = node_of(plan.graph, {"Conv"});
  ASSERT_FALSE(conv.layout.is_default());
  conv.layout.perm = {0, 3, 1, 2};
  const std::string msg = decode_error(plan);
  EXPECT_NE(msg.find("node '" + conv.name + "'"), std::string::npos) << msg;
}

TEST_F(TamperedTsm, EveryCorpusModelFileOfEveryBackendStillLoads) {
  // fuzz/corpus/tsm: the ONNX node tests compiled for every backend by this Tessera.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TESSERA_TSM_CORPUS)) {
    ++files;
    const std::string path = entry.path().string();
    EXPECT_EQ(testing::user_error_of([&] { load_model(path); }), "") << path;
  }
  EXPECT_GT(files, 300);
}

}  // namespace
}  // namespace tessera::compiler
