// Slice's bounds as backends lower it: per Tessera axis the first element read and the step,
// from ONNX Slice's starts, axes and steps (attributes before opset 10, constant inputs from
// 10), with ONNX's clamping of starts. The output's extent per axis comes from the graph's
// shapes, so ends are not needed here. Also the integer operands such ops take either way
// (Slice's bounds, Pad's pads).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "tessera/compiler/ir.h"

namespace tessera::compiler {

// (first, step), each of the input's rank in Tessera axis order; nullopt when starts, ends, axes
// or steps are inputs that are not constants.
std::optional<std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>> slice_starts(
    const Graph& g, const Node& n);

// Node n's integer operand given as attribute `attr` (older opsets) or as constant input
// `input` (newer ones); empty when neither is given, nullopt when the input is not a constant.
std::optional<std::vector<std::int64_t>> ints_operand(const Graph& g, const Node& n,
                                                      const char* attr, std::size_t input);

}  // namespace tessera::compiler
