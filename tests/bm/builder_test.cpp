// The BMNet builder classes of spec 002: a customised layer (CustomizedCaffeLayer +
// CustomizedTensorFixedInst emitting BMKernel instructions) registered with the ONNX builder
// runs inside the compiled network, saved as a bmodel and run through the bmnet runtime; its
// result is checked element by element against the same int8 arithmetic on the host.
#include <gtest/gtest.h>

#include <libbmruntime/bmruntime.h>
#include <libbmruntime/bmruntime_bmnet.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bmnet/builder/Builder.hpp"
#include "bmnet/frontend/caffe/CustomizedCaffeLayer.hpp"
#include "bmnet/targets/plat-bm188x/CustomizedTensorFixedInst.hpp"
#include "model_builder.h"
#include "tessera/core/error.h"
#include "tessera/targets/bm/api/bmodel.h"

namespace {

namespace fs = std::filesystem;
using tessera::Shape;
using tessera::Tensor;

// ONNX Mul by a constant scalar as a BMNet customised layer.
class ScaleLayer : public bmnet::CustomizedCaffeLayer {
 public:
  std::string layer_name() override { return "Mul"; }
  void dump() override {}
  void codegen(bmnet::TensorOp* op) override {
    ++codegens;
    bottoms = layer_.bottom_size();
    op->add_output_shape()->CopyFrom(op->input_shape(0));
    op->mutable_tg_customized_param()->add_f32_param(layer_.blobs(0).data(0));
    add_output_offset(0);
  }
  int codegens = 0, bottoms = 0;
};

// y = x * a in int8: yq = xq * (threshold_x / threshold_y * a), a multiplier m and a right shift
// on the TPU (bmk1880_tpu_mul_const), with GDMA in and out.
class ScaleInst : public bmnet::CustomizedTensorFixedInst {
 public:
  std::string inst_name() override { return "Mul"; }
  void dump() override {}
  void encode() override {
    ++encodes;
    const double a = op_.tg_customized_param().f32_param(0);
    const double ratio = static_cast<double>(m_inputCalibrationParameter.at(0).threshold_y()) /
                         static_cast<double>(m_calibrationParameter.threshold_y()) * a;
    shift = 0;
    while (ratio * std::ldexp(1.0, shift + 1) <= 127.0 && shift < 15) ++shift;
    m = static_cast<int>(std::lround(ratio * std::ldexp(1.0, shift)));
    const bmnet::TensorShape& s = op_.input_shape(0);
    const shape_t shape = shape_t4(s.dim(0), s.dim(1), s.dim(2), s.dim(3));
    void* k = _ctx->handle();
    tensor_lmem* x = bmk1880_tl_alloc(k, shape, FMT_I8, CTRL_AL);
    tensor_lmem* y = bmk1880_tl_alloc(k, shape, FMT_I8, CTRL_AL);
    bmk1880_gdma_load(k, x, get_global_neuron_base() + op_.global_input(0), CTRL_NEURON);
    bmk1880_mul_const_param_t p{nullptr, y, x, static_cast<s8>(m), true, shift};
    bmk1880_tpu_mul_const(k, &p);
    bmk1880_gdma_store(k, y, get_global_neuron_base() + op_.global_output(0), CTRL_NEURON);
    bmk1880_tl_free(k, y);
    bmk1880_tl_free(k, x);
  }
  int encodes = 0, m = 0, shift = 0;
};

// x (1, 8, 8, 8) -> MaxPool 2x2 -> Mul 0.5 -> MaxPool 2x2 -> y (1, 8, 2, 2).
std::string write_model(const fs::path& dir) {
  using tessera::testing::OnnxNode;
  const auto bytes = tessera::testing::make_model(
      {{"x", {"1", "8", "8", "8"}}}, {{"half", Tensor::from_vector(Shape{}, {0.5f})}},
      {{"MaxPool", {"x"}, {"m"}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}},
       {"Mul", {"m", "half"}, {"s"}},
       {"MaxPool", {"s"}, {"y"}, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}}},
      {{"y", {"1", "8", "2", "2"}}});
  const std::string path = (dir / "scale.onnx").string();
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  return path;
}

std::vector<std::int8_t> maxpool2x2(const std::vector<std::int8_t>& x, int c, int h, int w) {
  std::vector<std::int8_t> y(static_cast<std::size_t>(c * (h / 2) * (w / 2)));
  for (int ch = 0; ch < c; ++ch)
    for (int i = 0; i < h / 2; ++i)
      for (int j = 0; j < w / 2; ++j) {
        int v = -128;
        for (int di = 0; di < 2; ++di)
          for (int dj = 0; dj < 2; ++dj)
            v = std::max<int>(v,
                              x[static_cast<std::size_t>((ch * h + 2 * i + di) * w + 2 * j + dj)]);
        y[static_cast<std::size_t>((ch * (h / 2) + i) * (w / 2) + j)] = static_cast<std::int8_t>(v);
      }
  return y;
}

TEST(BmnetBuilder, ACustomizedLayerRunsInTheCompiledNetworkThroughBmnet) {
  const fs::path dir = fs::temp_directory_path() / "tessera_bmnet_builder_test";
  fs::create_directories(dir);
  const std::string model = write_model(dir);
  const std::string table = (dir / "scale.ctable").string();
  const std::string bmodel = (dir / "scale.bmodel").string();
  const std::string proto = (dir / "scale.prototxt").string();

  ScaleLayer layer;
  ScaleInst inst;
  bmnet::OnnxBuilder builder(BM_CHIP_BM1880, model.c_str(), nullptr, table.c_str());
  builder.addCustomizedLayer(&layer);
  builder.addCustomizedTensorInst(&inst);
  builder.build(1, 8, 8, 8, BM_OPT_LAYER_GROUP_WITH_WEIGHT);
  builder.store_prototxt(proto.c_str());
  builder.store_model("scale", bmodel.c_str());
  EXPECT_EQ(layer.codegens, 1);
  EXPECT_EQ(layer.bottoms, 1);
  EXPECT_GE(inst.encodes, 1);
  EXPECT_GT(inst.m, 0);
  EXPECT_TRUE(fs::exists(table));
  std::stringstream text;
  text << std::ifstream(proto).rdbuf();
  EXPECT_NE(text.str().find("BMNetCustomized"), std::string::npos) << text.str();

  // The application: quantise the input, run the bmodel, compare with host int8 arithmetic.
  const tessera::bm::BModel saved = tessera::bm::load_bmodel(bmodel);
  std::vector<std::int8_t> xq(8 * 8 * 8);
  std::vector<float> xf(xq.size());
  for (std::size_t i = 0; i < xq.size(); ++i) {
    xf[i] = std::sin(static_cast<float>(i) * 0.37f) * 0.9f;
    xq[i] = static_cast<std::int8_t>(std::clamp(
        std::nearbyint(static_cast<double>(xf[i]) * 128.0 / saved.input_threshold), -128.0, 127.0));
  }
  bmctx_t ctx = nullptr;
  ASSERT_EQ(bm_init(0, &ctx), BM_SUCCESS);
  bmnet_t net = nullptr;
  ASSERT_EQ(bmnet_register_bmodel(ctx, bmodel.c_str(), &net), BM_SUCCESS)
      << tessera_bm_last_error();
  std::vector<std::int8_t> out(8 * 2 * 2);
  ASSERT_EQ(bmnet_inference(net, reinterpret_cast<uint8_t*>(xq.data()),
                            reinterpret_cast<uint8_t*>(out.data())),
            BM_SUCCESS)
      << tessera_bm_last_error();
  bmnet_cleanup(net);
  bm_exit(ctx);

  std::vector<std::int8_t> s = maxpool2x2(xq, 8, 8, 8);
  for (auto& v : s) {
    std::int64_t p = std::int64_t{v} * inst.m;
    if (inst.shift > 0) p = (p + (std::int64_t{1} << (inst.shift - 1))) >> inst.shift;
    v = static_cast<std::int8_t>(std::clamp<std::int64_t>(p, -128, 127));
  }
  const std::vector<std::int8_t> want = maxpool2x2(s, 8, 4, 4);
  EXPECT_EQ(out, want);
  // And the network computes what the f32 one does (cosine of the dequantised outputs).
  double dot = 0, na = 0, nb = 0;
  std::vector<float> f(xf);
  for (float& v : f) v *= 0.5f;  // Mul commutes with max for a positive scale
  std::vector<double> ref;
  for (int ch = 0; ch < 8; ++ch)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        float v = -1e30f;
        for (int di = 0; di < 4; ++di)
          for (int dj = 0; dj < 4; ++dj)
            v = std::max(v, f[static_cast<std::size_t>((ch * 8 + 4 * i + di) * 8 + 4 * j + dj)]);
        ref.push_back(v);
      }
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double a = out[i] * static_cast<double>(saved.output_threshold) / 128.0;
    dot += a * ref[i];
    na += a * a;
    nb += ref[i] * ref[i];
  }
  EXPECT_GE(dot / std::sqrt(na * nb), 0.99);
  fs::remove_all(dir);
}

TEST(BmnetBuilder, MisuseIsAUserErrorSayingWhatToDo) {
  const fs::path dir = fs::temp_directory_path() / "tessera_bmnet_builder_misuse";
  fs::create_directories(dir);
  const std::string model = write_model(dir);
  ScaleLayer layer;
  {
    bmnet::OnnxBuilder b(BM_CHIP_BM1880, model.c_str());
    b.addCustomizedLayer(&layer);  // no TensorInst for it
    try {
      b.build(1, 8, 8, 8);
      ADD_FAILURE() << "no error";
    } catch (const tessera::UserError& e) {
      EXPECT_NE(std::string(e.what()).find("addCustomizedTensorInst"), std::string::npos);
    }
  }
  {
    bmnet::OnnxBuilder b(BM_CHIP_BM1880, model.c_str());
    EXPECT_THROW(b.build(1, 8, 8, 8, 7), tessera::UserError);
    EXPECT_THROW(b.build(1, 8, 16, 16), tessera::UserError);  // not the model's shape
    EXPECT_THROW(b.store_model("x", (dir / "x.bmodel").string().c_str()), tessera::UserError);
  }
  fs::remove_all(dir);
}

}  // namespace
