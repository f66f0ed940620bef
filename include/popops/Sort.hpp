// Sorting along a dimension, ascending and stable (PopLibs API: popops/Sort.hpp): one codelet per
// row on the tile that holds the row's first element.
#pragma once

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace popops {

poplar::Tensor sort(poplar::Graph& graph, const poplar::Tensor& t, unsigned dim,
                    poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {});
void sortInPlace(poplar::Graph& graph, const poplar::Tensor& t, unsigned dim,
                 poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {});
// The values reordered as sorting the keys would reorder them (the keys are not changed).
poplar::Tensor sortKeyValue(poplar::Graph& graph, const poplar::Tensor& k, const poplar::Tensor& v,
                            unsigned dim, poplar::program::Sequence& prog,
                            const poplar::DebugContext& debugContext = {});
// Sorts the keys and reorders the values with them, in place.
void sortKeyValueInPlace(poplar::Graph& graph, const poplar::Tensor& k, const poplar::Tensor& v,
                         unsigned dim, poplar::program::Sequence& prog,
                         const poplar::DebugContext& debugContext = {});

}  // namespace popops
