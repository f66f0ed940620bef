// Executes one IR node on the host with ops/reference: the `reference` backend's kernels, the
// constant folder's evaluator and every backend's fallback for nodes it does not support.
// Translates ONNX axes and attribute conventions into ops/reference's Tessera numbering.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/compiler/ir.h"

namespace tessera::compiler {

// An NHWC Conv (layout pass) reads HWIO weights {M, C/g, kW, kH} and carries the attribute
// `tessera.weights_layout=hwio`; run_reference reads them back as ONNX's {kW, kH, C/g, M}.
// kHwioPerm is the ops::transpose permutation from ONNX's weights to HWIO.
inline const std::vector<int> kHwioPerm = {3, 2, 0, 1};

// inputs[i] is nullptr for an omitted optional input. Returns one tensor per node output
// (omitted outputs get an empty f32 scalar). The fused activation, if any, is applied to
// output 0. `opset` selects attribute forms that changed across opsets (Softmax axis, Split,
// Squeeze, Slice, Pad, Clip, Resize).
std::vector<Tensor> run_reference(const Node& node, const std::vector<const Tensor*>& inputs,
                                  std::int64_t opset);

// Applies a fused activation in place (float tensors).
void apply_activation(Tensor& tensor, const Activation& activation);

// ONNX axis (negative counts from the end) of a rank-`rank` tensor -> Tessera axis.
// UserError naming `where` when out of range.
int tessera_axis(std::int64_t onnx_axis, int rank, const std::string& where);

}  // namespace tessera::compiler
