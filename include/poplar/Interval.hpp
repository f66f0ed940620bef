// A half-open range [begin, end) of flattened element indices.
#pragma once

#include <cstddef>

namespace poplar {

class Interval {
 public:
  Interval() = default;
  Interval(std::size_t begin, std::size_t end) : begin_(begin), end_(end) {}
  std::size_t begin() const { return begin_; }
  std::size_t end() const { return end_; }
  std::size_t size() const { return end_ - begin_; }
  bool operator==(const Interval&) const = default;

 private:
  std::size_t begin_ = 0, end_ = 0;
};

}  // namespace poplar
