// One-hot encoding (PopLibs API: popops/Encoding.hpp): encoded[i][indices[i]] = 1, else 0.
#pragma once

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace popops {

void encodeOneHot(poplar::Graph& graph, const poplar::Tensor& indices,
                  const poplar::Tensor& encoded, poplar::program::Sequence& prog,
                  const poplar::DebugContext& debugContext = {});

}  // namespace popops
