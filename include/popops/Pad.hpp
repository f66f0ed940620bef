// Padding a tensor (PopLibs API: popops/Pad.hpp). Every result is a view: constant padding adds
// a constant tensor (mapped as the MappingMethod says) or views of a one-element tensor, and
// EDGE / REFLECT padding are views of the tensor's own elements, as numpy.pad's "edge" and
// "reflect" modes. Negative padding truncates. Dimensions are padded one after another, so
// corners come from the dimensions padded before, as in numpy.
#pragma once

#include <cstddef>
#include <vector>

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

namespace popops {

namespace padding {

enum class Type {
  EDGE,    // each new element takes the value of the nearest element of the unpadded tensor
  REFLECT  // the tensor mirrored about its edge element (which is not repeated)
};

enum class MappingMethod {
  NONE,  // constant padding is left unmapped
  ZERO,  // on tile 0
  EDGE   // on the tile of the nearest edge element (the tensor must be completely mapped)
};

}  // namespace padding

poplar::Tensor pad(poplar::Graph& graph, const poplar::Tensor& t,
                   const std::vector<std::ptrdiff_t>& paddingLower,
                   const std::vector<std::ptrdiff_t>& paddingUpper, float val = 0.0f,
                   padding::MappingMethod mappingMethod = padding::MappingMethod::ZERO);
poplar::Tensor pad(poplar::Graph& graph, const poplar::Tensor& t,
                   const std::vector<std::ptrdiff_t>& paddingLower,
                   const std::vector<std::ptrdiff_t>& paddingUpper, int val,
                   padding::MappingMethod mappingMethod = padding::MappingMethod::ZERO);
// `val` is a one-element tensor of t's type; the padding is views of it (nothing is mapped).
poplar::Tensor pad(poplar::Graph& graph, const poplar::Tensor& t,
                   const std::vector<std::ptrdiff_t>& paddingLower,
                   const std::vector<std::ptrdiff_t>& paddingUpper, const poplar::Tensor& val,
                   padding::MappingMethod mappingMethod = padding::MappingMethod::ZERO);

poplar::Tensor pad(poplar::Graph& graph, const poplar::Tensor& t, std::ptrdiff_t paddingLower,
                   std::ptrdiff_t paddingUpper, unsigned dim, float val = 0.0f,
                   padding::MappingMethod mappingMethod = padding::MappingMethod::ZERO);
poplar::Tensor pad(poplar::Graph& graph, const poplar::Tensor& t, std::ptrdiff_t paddingLower,
                   std::ptrdiff_t paddingUpper, unsigned dim, int val,
                   padding::MappingMethod mappingMethod = padding::MappingMethod::ZERO);
poplar::Tensor pad(poplar::Graph& graph, const poplar::Tensor& t, std::ptrdiff_t paddingLower,
                   std::ptrdiff_t paddingUpper, unsigned dim, const poplar::Tensor& val,
                   padding::MappingMethod mappingMethod = padding::MappingMethod::ZERO);

poplar::Tensor pad(const poplar::Tensor& t, const std::vector<std::ptrdiff_t>& paddingLower,
                   const std::vector<std::ptrdiff_t>& paddingUpper, padding::Type type);
poplar::Tensor pad(const poplar::Tensor& t, std::ptrdiff_t paddingLower,
                   std::ptrdiff_t paddingUpper, unsigned dim, padding::Type type);

}  // namespace popops
