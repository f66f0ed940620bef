// Counted loops of programs (PopLibs API: popops/Loop.hpp). The counter is an unsigned tensor on
// the device, so the body may index with it (dynamicSlice, ...).
#pragma once

#include <cstddef>
#include <functional>

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace popops {

using CountedLoopBodyType = std::function<poplar::program::Program(const poplar::Tensor&)>;

// for (i = begin; i != end; i += step) body(i). UserError unless step > 0 and step divides
// (end - begin).
poplar::program::Sequence countedLoop(poplar::Graph& graph, std::size_t begin, std::size_t end,
                                      std::size_t step, const CountedLoopBodyType& body,
                                      const poplar::DebugContext& debugContext = {});
// for (i = 0; i != count; ++i) body(i).
poplar::program::Sequence countedLoop(poplar::Graph& graph, std::size_t count,
                                      const CountedLoopBodyType& body,
                                      const poplar::DebugContext& debugContext = {});
// for (index = initialCount; index < countLimit; index += countStep) body: the counter and the
// limit are device tensors (unsigned scalars), so the trip count may change at run time.
poplar::program::Sequence countedForLoop(poplar::Graph& graph, const poplar::Tensor& index,
                                         int initialCount, const poplar::Tensor& countLimit,
                                         int countStep, const poplar::program::Program& body,
                                         const poplar::DebugContext& debugContext = {});
poplar::program::Sequence countedForLoop(poplar::Graph& graph, int initialCount, int countLimit,
                                         int countStep, const CountedLoopBodyType& body,
                                         const poplar::DebugContext& debugContext = {});

}  // namespace popops
