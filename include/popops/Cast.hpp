// Type conversion (PopLibs API: popops/Cast.hpp): a compute set of Cast codelets.
#pragma once

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace popops {

poplar::Tensor cast(poplar::Graph& graph, const poplar::Tensor& src, const poplar::Type& dstType,
                    poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {});
// Adds the casts to compute set `cs` (the caller executes it).
void cast(poplar::Graph& graph, const poplar::Tensor& src, const poplar::Tensor& dst,
          poplar::ComputeSet cs);
poplar::program::Program cast(poplar::Graph& graph, const poplar::Tensor& src,
                              const poplar::Tensor& dst,
                              const poplar::DebugContext& debugContext = {});

}  // namespace popops
