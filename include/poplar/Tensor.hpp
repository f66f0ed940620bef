// A tensor: a typed, shaped view of elements of graph variables (spec 001 §2.1). Every view
// operation (slice, reshape, dimShuffle, broadcast, ...) returns a new view of the same
// elements and never copies data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <vector>

#include <poplar/ArrayRef.hpp>
#include <poplar/Interval.hpp>
#include <poplar/Type.hpp>

namespace poplar {

enum class UpsampleMethod { REPEAT };

class Tensor {
 public:
  // A run of consecutive elements of one variable, as byte offsets into the variable.
  struct Region {
    std::uint32_t var = 0;
    std::uint64_t begin = 0;  // bytes
    std::uint64_t end = 0;
    bool operator==(const Region&) const = default;
  };

  Tensor() = default;
  Tensor(Type type, std::vector<std::size_t> shape, std::vector<Region> regions);

  bool valid() const { return type_ != Type(); }
  const Type& elementType() const { return type_; }
  std::vector<std::size_t> shape() const { return shape_; }
  unsigned rank() const { return static_cast<unsigned>(shape_.size()); }
  std::size_t dim(unsigned i) const;
  std::size_t numElements() const;

  Tensor slice(std::size_t begin, std::size_t end, unsigned dimension = 0) const;
  Tensor slice(const Interval& region, unsigned dimension = 0) const {
    return slice(region.begin(), region.end(), dimension);
  }
  Tensor slice(ArrayRef<std::size_t> begin, ArrayRef<std::size_t> end) const;
  std::vector<Tensor> slices(ArrayRef<Interval> intervals, unsigned dimension = 0) const;
  Tensor index(ArrayRef<std::size_t> indices) const;
  Tensor operator[](std::size_t i) const;
  Tensor reshape(ArrayRef<std::size_t> shape) const;
  // Dimensions [beginIndex, endIndex) replaced by newDims (same number of elements).
  Tensor reshapePartial(unsigned beginIndex, unsigned endIndex,
                        ArrayRef<std::size_t> newDims) const;
  Tensor dimShuffle(ArrayRef<unsigned> permutation) const;
  Tensor dimRoll(unsigned dimIdx, unsigned newIdx = 0) const;
  Tensor transpose() const;
  Tensor flatten() const;
  Tensor flatten(unsigned dimBegin, unsigned dimEnd) const;
  Tensor broadcast(unsigned N, unsigned dim) const;
  Tensor expand(ArrayRef<std::size_t> indices) const;
  Tensor squeeze(ArrayRef<std::size_t> indices) const;
  Tensor reverse(unsigned dimension) const;
  Tensor subSample(unsigned stride, unsigned dimension) const;
  Tensor upsample(unsigned scale, unsigned dimension,
                  UpsampleMethod method = UpsampleMethod::REPEAT) const;
  Tensor reinterpret(const Type& type) const;

  // True when the two tensors view the same elements in the same order.
  bool intersectsWith(const Tensor& other) const;
  bool isContiguous() const { return regions().size() <= 1; }
  bool containsAliases() const;
  // Intervals of the flattened tensor, one list per run of consecutive memory, in order.
  std::vector<std::vector<Interval>> getContiguousRegions() const;

  const std::vector<Region>& regions() const;
  std::size_t elementSize() const;

 private:
  // One entry per element: (variable, byte offset), for the views that reorder elements.
  std::vector<std::pair<std::uint32_t, std::uint64_t>> elements() const;
  Tensor fromElements(std::vector<std::size_t> shape,
                      const std::vector<std::pair<std::uint32_t, std::uint64_t>>& elems) const;

  Type type_;
  std::vector<std::size_t> shape_;
  std::shared_ptr<const std::vector<Region>> regions_;
};

Tensor concat(const Tensor& first, const Tensor& second, unsigned dimension = 0);
Tensor concat(ArrayRef<Tensor> tensors, unsigned dimension = 0);

std::ostream& operator<<(std::ostream& os, const Type& type);

}  // namespace poplar
