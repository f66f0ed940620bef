// Zeroing a tensor (PopLibs API: popops/Zero.hpp).
#pragma once

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace popops {

void zero(poplar::Graph& graph, const poplar::Tensor& t, poplar::program::Sequence& prog,
          const poplar::DebugContext& debugContext = {});

}  // namespace popops
