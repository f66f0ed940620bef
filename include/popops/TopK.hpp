// The k largest or smallest elements of the innermost dimension (PopLibs API: popops/TopK.hpp,
// Poplar SDK 2.x/3.x): one popops::TopK codelet per row, on the tile that holds the row's first
// element. Of equal elements the one earlier in the row is taken first; SortOrder::NONE leaves
// the chosen elements in their order in the row.
#pragma once

#include <iosfwd>
#include <utility>
#include <vector>

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>
#include <popops/SortOrder.hpp>

namespace popops {

struct TopKParams {
  unsigned k;           // at most the innermost dimension's size
  bool largest;         // the k largest, else the k smallest
  SortOrder sortOrder;  // of the result

  TopKParams(unsigned k, bool largest, SortOrder sortOrder) noexcept;
};

std::ostream& operator<<(std::ostream& os, const TopKParams& p);

// A tensor of `shape` laid out for topK: whole rows of the innermost dimension on each tile.
poplar::Tensor createTopKInput(poplar::Graph& graph, const poplar::Type& type,
                               const std::vector<std::size_t>& shape, const TopKParams& params,
                               const poplar::DebugContext& debugContext = {});

// The top k values of each row of `t`'s innermost dimension: shape [..., k].
poplar::Tensor topK(poplar::Graph& graph, poplar::program::Sequence& prog, const poplar::Tensor& t,
                    const TopKParams& params, const poplar::DebugContext& debugContext = {});

// The top k keys and the elements of `values` (the same shape as `keys`) at the same places.
std::pair<poplar::Tensor, poplar::Tensor> topKKeyValue(
    poplar::Graph& graph, poplar::program::Sequence& prog, const poplar::Tensor& keys,
    const poplar::Tensor& values, const TopKParams& params,
    const poplar::DebugContext& debugContext = {});

// The top k values and their indices in the innermost dimension (UNSIGNED_INT).
std::pair<poplar::Tensor, poplar::Tensor> topKWithPermutation(
    poplar::Graph& graph, poplar::program::Sequence& prog, const poplar::Tensor& t,
    const TopKParams& params, const poplar::DebugContext& debugContext = {});

}  // namespace popops
