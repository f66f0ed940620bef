// Gathering slices along one axis by index (PopLibs API: popops/Gather.hpp, the axis form):
// out shape = input.shape[:axis] + indices.shape + input.shape[axis+1:].
#pragma once

#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

namespace popops {

struct GatherParams {
  GatherParams() = default;
};

poplar::Tensor gather(poplar::Graph& graph, const poplar::Tensor& input,
                      const poplar::Tensor& indices, unsigned axis,
                      poplar::program::Sequence& prog, const GatherParams& params = {},
                      const poplar::DebugContext& debugContext = {});

}  // namespace popops
