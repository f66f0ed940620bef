// BMNet's compiler (spec 002 "CaffeBuilder"): Builder compiles a network to BM1880 command
// buffers at an optimisation level (BM_OPT_*) and stores it as a bmodel; OnnxBuilder is
// CaffeBuilder's counterpart for ONNX models (Caffe has no Debian package): the same
// constructor arguments with the ONNX file in place of the prototxt and caffemodel. It
// quantises the network with the calibration table (tessera calibrate's format) or, given
// none, with thresholds from random inputs, maps ONNX nodes onto registered customised layers,
// and lowers the rest with the bm backend. docs/targets/bm.md, "BMNet builder".
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bmnet/backend/TensorInst.hpp"
#include "bmnet/frontend/caffe/CaffeLayer.hpp"

typedef enum { BM_CHIP_BM1880 = 1880 } CHIP_VER;

// spec 002 "CaffeBuilder::build", opt. The values, BM_OPT_NONE and the _OPT spelling (which
// spec 002's table prints cut short as BM_OPT_LAYER_GROUP_WITH_WEIG) are those of Bitmain's
// public bmnet/builder/Builder.hpp.
#define OPT_NONE 0
#define BM_OPT_NONE OPT_NONE
#define BM_OPT_LAYER_GROUP 2
#define BM_OPT_LAYER_GROUP_WITH_WEIGHT 5
#define BM_OPT_LAYER_GROUP_WITH_WEIGHT_OPT BM_OPT_LAYER_GROUP_WITH_WEIGHT

namespace bmnet {

using ::CHIP_VER;  // Bitmain's header declares it in bmnet

class Builder {
 public:
  explicit Builder(CHIP_VER ver);
  virtual ~Builder();
  void addCustomizedTensorInst(TensorInst* inst);
  void build(int n, int c, int h, int w, int opt = BM_OPT_LAYER_GROUP_WITH_WEIGHT);
  void store_prototxt(const char* dst);
  void store_model(const char* net_name, const char* dst, const char* plugin_path = nullptr);

 protected:
  struct Compiled;
  // The network, quantised and with its customised layers in place, for build to lower.
  virtual void frontend(int n, int c, int h, int w) = 0;
  std::unique_ptr<Compiled> compiled_;
  std::map<std::string, TensorInst*> insts_;  // by inst_name()
};

class OnnxBuilder : public Builder {
 public:
  // onnx_model: the network; in_ctable: a calibration table (nullptr: calibrate on random
  // inputs); out_ctable: where to write the table used (nullptr: nowhere).
  OnnxBuilder(CHIP_VER ver, const char* onnx_model, const char* in_ctable = nullptr,
              const char* out_ctable = nullptr);
  ~OnnxBuilder() override;
  void addCustomizedLayer(Layer* layer);

 protected:
  void frontend(int n, int c, int h, int w) override;

 private:
  std::string model_, in_ctable_, out_ctable_;
  std::map<std::string, Layer*> layers_;  // by layer_name(): the ONNX op_type they take
};

}  // namespace bmnet
