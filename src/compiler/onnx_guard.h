// Checks an ONNX model from a stranger before libonnx's checker and shape inference see it.
// libonnx 1.12's shape inference indexes arrays by attribute values and divides by strides
// without checking them (docs/compiler.md, "Hostile input"), and Tessera allocates what tensors
// declare; so every tensor size, every op and every attribute those paths index by is validated
// here first, with a UserError naming the node, the attribute and the allowed range.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include <onnx/onnx_pb.h>

#include "tessera/compiler/ir.h"

namespace tessera::compiler::detail {

// Declared sizes: every initializer, Constant value and graph input (after --dim) must fit the
// host memory limit, and initializers must hold exactly the data their dims declare.
// Runs before the checker, which reads tensors too.
void guard_tensor_sizes(const onnx::ModelProto& model, const std::string& file);

// Ops and domains Tessera supports, then ranks propagated from the inputs and constants through
// the graph with every rank-indexed attribute (kernel_shape, pads, strides, dilations, perm,
// axes/axis, output_padding, output_shape, group vs channels, split sizes, Reshape shapes, ...)
// checked against ONNX's rules. An op libonnx's inference is unsafe on whose input rank cannot
// be known before inference is refused. Clears value_info (libonnx re-infers it) and checks the
// declared graph outputs against the propagated ranks.
void guard_graph(onnx::ModelProto& model, const std::string& file);

// Re-derives the element type and shape of every node output of a compiled graph (as a model
// file stores it: after the passes, in the backend's layouts, with Int8* nodes and narrowed
// values) from its inputs and attributes, with guard_graph and ONNX shape inference as import
// runs them. A stored output that differs from what its node computes is a UserError naming
// `file`, the node, the value, and the stored and the derived type and shape.
void check_derived_types(const Graph& graph, const std::string& file);

// The UserError for an op outside `supported`, at `where`: ops that draw random numbers say so,
// others list what is supported.
[[noreturn]] void unsupported_op_error(const std::string& where, const std::string& op,
                                       const std::set<std::string>& supported);

}  // namespace tessera::compiler::detail
