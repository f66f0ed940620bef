// Filling a tensor with one value (PopLibs API: popops/Fill.hpp).
#pragma once

#include <type_traits>

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace popops {

void fill(poplar::Graph& graph, const poplar::Tensor& t, double fillValue,
          poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {});
template <typename FillValueType,
          typename = std::enable_if_t<std::is_arithmetic_v<FillValueType> &&
                                      !std::is_same_v<FillValueType, double>>>
void fill(poplar::Graph& graph, const poplar::Tensor& t, FillValueType fillValue,
          poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {}) {
  fill(graph, t, static_cast<double>(fillValue), prog, debugContext);
}

}  // namespace popops
