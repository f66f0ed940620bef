// Tensor utilities (PopLibs API: poputil/Util.hpp): copies of tensors with the same tile mapping.
#pragma once

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace poputil {

// A new tensor with t's shape, type and tile mapping, plus a Copy of t into it added to prog.
poplar::Tensor duplicate(poplar::Graph& graph, const poplar::Tensor& t,
                         poplar::program::Sequence& prog,
                         const poplar::DebugContext& debugContext = {});
// N new tensors like t (uninitialised), stacked in a new outer dimension.
poplar::Tensor cloneN(poplar::Graph& graph, const poplar::Tensor& t, unsigned N,
                      const poplar::DebugContext& debugContext = {});

}  // namespace poputil
