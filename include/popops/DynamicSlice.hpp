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

// A multiSlice plan (Tessera plans when the slice is built; kept for source compatibility).
class SlicePlan {
 public:
  SlicePlan() = default;
};

poplar::Tensor dynamicSlice(poplar::Graph& graph, const poplar::Tensor& t,
                            const poplar::Tensor& offset, const std::vector<std::size_t>& dims,
                            const std::vector<std::size_t>& sizes, poplar::program::Sequence& prog,
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

}  // namespace popops
