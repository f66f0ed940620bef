// Slices at offsets held in device tensors (PopLibs API: popops/DynamicSlice.hpp). Offsets are
// read when the program runs; an offset that would take a slice past the tensor gives zeros
// (slices) or is skipped (updates).
#pragma once

#include <cstddef>
#include <vector>

#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

namespace popops {

// What embedding::plan was asked for. Tessera slices every way the same (rows of the sliced
// dimension, columns over the tiles), so the plan only records the request.
class SlicePlan {
 public:
  SlicePlan() = default;
  poplar::Type dataType;
  std::size_t numEntries = 0;
  std::size_t outputSize = 0;
  std::vector<std::size_t> numLookups;
};

namespace embedding {
SlicePlan plan(const poplar::Graph& graph, const poplar::Type& dataType, std::size_t numEntries,
               std::size_t outputSize, const std::vector<std::size_t>& numLookups,
               const poplar::OptionFlags& options = {});
}  // namespace embedding

// A tensor to slice along `dims`: those dimensions whole on a tile, the others spread over the
// tiles in grains of at least minGrainSize elements, so a slice reads only local elements.
poplar::Tensor createSliceableTensor(poplar::Graph& graph, const poplar::Type& type,
                                     const std::vector<std::size_t>& shape,
                                     const std::vector<std::size_t>& dims,
                                     const std::vector<std::size_t>& sizes,
                                     std::size_t minGrainSize = 0,
                                     const poplar::DebugContext& debugContext = {});
// numIndices slices of `t` (or of a tensor of `shape`), shape {numIndices, t's shape with
// sizes[i] at dims[i]}, laid out as multiSlice writes them.
poplar::Tensor createSliceTensor(poplar::Graph& graph, const poplar::Tensor& t,
                                 const std::vector<std::size_t>& dims,
                                 const std::vector<std::size_t>& sizes, std::size_t numIndices,
                                 const poplar::DebugContext& debugContext = {});
poplar::Tensor createSliceTensor(poplar::Graph& graph, const poplar::Type& type,
                                 const std::vector<std::size_t>& shape,
                                 const std::vector<std::size_t>& dims,
                                 const std::vector<std::size_t>& sizes, std::size_t numIndices,
                                 const poplar::DebugContext& debugContext = {});
// UNSIGNED_INT offsets {numIndices, dims.size()} for multiSlice / multiUpdate(Add).
poplar::Tensor createIndicesTensor(poplar::Graph& graph, const std::vector<std::size_t>& dims,
                                   std::size_t numIndices, const SlicePlan& plan = {},
                                   const poplar::OptionFlags& options = {},
                                   const poplar::DebugContext& debugContext = {});

poplar::Tensor dynamicSlice(poplar::Graph& graph, const poplar::Tensor& t,
                            const poplar::Tensor& offset, const std::vector<std::size_t>& dims,
                            const std::vector<std::size_t>& sizes, poplar::program::Sequence& prog,
                            const poplar::DebugContext& debugContext = {},
                            const poplar::OptionFlags& options = {});
// dynamicSlice into an existing tensor of the slice's shape and type.
void dynamicSliceWithOutput(poplar::Graph& graph, const poplar::Tensor& output,
                            const poplar::Tensor& t, const poplar::Tensor& offset,
                            const std::vector<std::size_t>& dims,
                            const std::vector<std::size_t>& sizes,
                            poplar::program::Sequence& prog,
                            const poplar::DebugContext& debugContext = {},
                            const poplar::OptionFlags& options = {});
void dynamicUpdate(poplar::Graph& graph, const poplar::Tensor& t, const poplar::Tensor& s,
                   const poplar::Tensor& offset, const std::vector<std::size_t>& dims,
                   const std::vector<std::size_t>& sizes, poplar::program::Sequence& prog,
                   const poplar::DebugContext& debugContext = {},
                   const poplar::OptionFlags& options = {});
// offsets [N][dims.size()]: out [N][sizes...][rest of t].
poplar::Tensor multiSlice(poplar::Graph& graph, const poplar::Tensor& t,
                          const poplar::Tensor& offsets, const std::vector<std::size_t>& dims,
                          const std::vector<std::size_t>& sizes, poplar::program::Sequence& prog,
                          const SlicePlan& plan = {}, const poplar::OptionFlags& options = {},
                          const poplar::DebugContext& debugContext = {});
void multiUpdate(poplar::Graph& graph, const poplar::Tensor& t, const poplar::Tensor& s,
                 const poplar::Tensor& offsets, const std::vector<std::size_t>& dims,
                 const std::vector<std::size_t>& sizes, poplar::program::Sequence& prog,
                 const SlicePlan& plan = {}, const poplar::OptionFlags& options = {},
                 const poplar::DebugContext& debugContext = {});

// t[offsets[i] + j] += scale * s[i][j] along dims[0], slice by slice in order, so a repeated
// offset accumulates (an embedding's gradient); offsets past the end are skipped. `scale` is one
// element of t's type.
void multiUpdateAdd(poplar::Graph& graph, const poplar::Tensor& t, const poplar::Tensor& s,
                    const poplar::Tensor& offsets, const poplar::Tensor& scale,
                    const std::vector<std::size_t>& dims, const std::vector<std::size_t>& sizes,
                    poplar::program::Sequence& prog, const SlicePlan& plan = {},
                    const poplar::OptionFlags& options = {},
                    const poplar::DebugContext& debugContext = {});

}  // namespace popops
