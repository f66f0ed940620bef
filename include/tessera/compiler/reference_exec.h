// Executes one IR node on the host with ops/reference: the `reference` backend's kernels, the
// constant folder's evaluator and every backend's fallback for nodes it does not support.
// Translates ONNX axes and attribute conventions into ops/reference's Tessera numbering.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/compiler/ir.h"

namespace tessera::ops {
class HostConvWeights;  // tessera/ops/host_conv.h
}

namespace tessera::compiler {

// A Conv laid out by a backend whose Layout has weights_perm reads its weights in that order
// and carries `tessera.weights_layout=<name>` and `tessera.weights_perm=<ONNX perm>`;
// run_reference reads them back in ONNX's order. Model files written before the perm was
// recorded carry only `tessera.weights_layout=hwio`, which is this ONNX perm ({M, C/g, kH, kW}
// -> {kH, kW, C/g, M}).
inline const std::vector<std::int64_t> kHwioOnnxPerm = {2, 3, 1, 0};

// inputs[i] is nullptr for an omitted optional input. Returns one tensor per node output
// (omitted outputs get an empty f32 scalar). The fused activation, if any, is applied to
// output 0. `opset` selects attribute forms that changed across opsets (Softmax axis, Split,
// Squeeze, Slice, Pad, Clip, Resize). A Conv whose weights are the same on every call (a plan's
// constant) may keep them reordered for oneDNN in `conv_weights` between calls.
std::vector<Tensor> run_reference(const Node& node, const std::vector<const Tensor*>& inputs,
                                  std::int64_t opset, ops::HostConvWeights* conv_weights = nullptr);

// Runs the node into `x`, its input 0, which the caller gives up and which no other input
// names: f32 Relu, and Add, Sub, Mul and Div whose input 0 keeps its shape, each with the bits
// run_reference gives. Returns false, x untouched, for any other node.
bool run_reference_in_place(const Node& node, Tensor& x, const std::vector<const Tensor*>& inputs);

// Applies a fused activation in place (float tensors).
void apply_activation(Tensor& tensor, const Activation& activation);

// ONNX axis (negative counts from the end) of a rank-`rank` tensor -> Tessera axis.
// UserError naming `where` when out of range.
int tessera_axis(std::int64_t onnx_axis, int rank, const std::string& where);

}  // namespace tessera::compiler
