// Target-independent graph passes: constant folding, BatchNorm folding into Conv, fusion of
// conv/gemm with bias and activation, dead-code elimination, and per-backend layout choice.
// Each pass keeps results equal to the unoptimised graph within float rounding.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/compiler/ir.h"

namespace tessera::compiler {

class Backend;
struct CalibrationTable;

struct PassOptions {
  bool fold_constants = true;
  bool fold_batchnorm = true;
  bool fuse = true;
  bool eliminate_dead_code = true;
  bool choose_layouts = true;
  // When set, the int8 quantisation pass (compiler/quantize.h) runs with this table after
  // dead-code elimination and before layout choice; quantised nodes keep the default layout.
  std::shared_ptr<const CalibrationTable> int8_table;
};

// What the passes did, for the compile report.
struct PassReport {
  int folded_nodes = 0;
  int folded_batchnorms = 0;
  int fused_biases = 0;          // Add of a constant bias merged into Conv/Gemm, MatMul+Add -> Gemm
  int fused_activations = 0;     // Relu/LeakyRelu/Clip/Sigmoid/Tanh merged into their producer
  int removed_nodes = 0;         // dead code
  int layout_transposes = 0;     // Transposes inserted (net, after cancelling) by layout choice
  int int8_nodes = 0;            // nodes quantised to Int8* ops (PassOptions::int8_table)
  int int8_host_float = 0;       // nodes left in f32 on the host in an int8 graph
  std::vector<std::string> log;  // one line per rewrite
};

// Turns auto_pad (SAME_UPPER, SAME_LOWER, VALID) of Conv, ConvTranspose, MaxPool and AveragePool,
// and ConvTranspose's output_shape, into explicit `pads` (and `output_padding`), removing those
// attributes, so every backend sees explicit pads. Needs the static input (and weight) shapes in
// ONNX layout: the importer runs it on every graph. Returns the nodes rewritten.
int resolve_auto_pad(Graph& graph, PassReport* report = nullptr);
// Evaluates every node whose inputs are all constant (and Shape of statically shaped values)
// with ops/reference; the node's outputs become constants.
int fold_constants(Graph& graph, PassReport* report = nullptr);
// Conv (constant weights) followed by an inference BatchNormalization with constant parameters:
// the normalisation is folded into the weights and bias.
int fold_batchnorm(Graph& graph, PassReport* report = nullptr);
// Conv + Add(constant per-channel bias), MatMul(2-D, constant weights) + Add -> Gemm, then
// Conv/Gemm/MatMul + activation.
int fuse_bias_and_activation(Graph& graph, PassReport* report = nullptr);
// Removes nodes none of whose outputs is used.
int eliminate_dead_code(Graph& graph, PassReport* report = nullptr);
// Asks the backend which activation layout each 4-D node prefers; NHWC nodes get Transposes
// around them, and back-to-back inverse Transposes cancel.
int choose_layouts(Graph& graph, const Backend& backend, PassReport* report = nullptr);

// The pipeline, in the order above (with quantisation before layout choice when asked).
PassReport run_passes(Graph& graph, const Backend& backend, const PassOptions& options = {});

}  // namespace tessera::compiler
