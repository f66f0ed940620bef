// GE's ge::Shape (CANN graph/tensor.h), the shape host tiling functions of the high-level APIs
// take (SoftMaxTilingFunc): dimensions outermost first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ge {

class Shape {
 public:
  Shape() = default;
  explicit Shape(const std::vector<std::int64_t>& dims) : dims_(dims) {}
  std::size_t GetDimNum() const { return dims_.size(); }
  std::int64_t GetDim(std::size_t idx) const { return idx < dims_.size() ? dims_[idx] : 0; }
  std::vector<std::int64_t> GetDims() const { return dims_; }
  std::int64_t GetShapeSize() const {
    if (dims_.empty()) return 0;
    std::int64_t n = 1;
    for (std::int64_t d : dims_) n *= d;
    return n;
  }

 private:
  std::vector<std::int64_t> dims_;
};

}  // namespace ge
