#include "tessera/core/shape.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tessera/core/error.h"
#include "tessera/core/limits.h"

namespace tessera {

Shape Shape::from_fastest_first(std::span<const std::int64_t> dims) {
  if (dims.size() > static_cast<std::size_t>(kMaxRank))
    throw_user_error("shape has {} dimensions; Tessera tensors have at most {} (spec 000 §2.4.1)",
                     dims.size(), kMaxRank);
  Shape s;
  s.rank_ = static_cast<int>(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) throw_user_error("shape dimension {} has negative size {}", i, dims[i]);
    s.dims_[i] = dims[i];
  }
  // element_count() multiplies in int64: a shape whose product overflows is refused here, once.
  if (saturating_element_count(dims.data(), s.rank_) > (std::uint64_t{1} << 62))
    throw_user_error(
        "shape ({}) is too large: its dimensions multiply to more than 2^62 elements, beyond "
        "what any tensor can hold; check the dimensions",
        fmt::join(dims, ", "));
  return s;
}

Shape::Shape(std::initializer_list<std::int64_t> dims)
    : Shape(from_fastest_first(std::span<const std::int64_t>(dims.begin(), dims.size()))) {}

Shape Shape::from_outer_first(std::span<const std::int64_t> dims) {
  std::vector<std::int64_t> reversed(dims.rbegin(), dims.rend());
  return from_fastest_first(reversed);
}

Shape Shape::nchw(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
  return Shape{w, h, c, n};
}

Shape Shape::nhwc(std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c) {
  return Shape{c, w, h, n};
}

std::int64_t Shape::element_count() const {
  std::int64_t count = 1;
  for (int i = 0; i < rank_; ++i) count *= dims_[static_cast<std::size_t>(i)];
  return count;
}

std::vector<std::int64_t> Shape::outer_first() const {
  auto dims = fastest_first();
  return {dims.rbegin(), dims.rend()};
}

std::string Shape::to_string() const { return fmt::format("({})", fmt::join(fastest_first(), ", ")); }

bool operator==(const Shape& a, const Shape& b) {
  return a.rank_ == b.rank_ && std::equal(a.dims_.begin(), a.dims_.begin() + a.rank_, b.dims_.begin());
}

Strides::Strides(const Shape& dense_for) : rank_(dense_for.rank()) {
  std::int64_t stride = 1;
  for (int i = 0; i < rank_; ++i) {
    strides_[static_cast<std::size_t>(i)] = stride;
    stride *= dense_for[i];
  }
}

Strides::Strides(std::initializer_list<std::int64_t> strides) {
  if (strides.size() > static_cast<std::size_t>(kMaxRank))
    throw_user_error("{} strides given; at most {} dimensions", strides.size(), kMaxRank);
  rank_ = static_cast<int>(strides.size());
  std::copy(strides.begin(), strides.end(), strides_.begin());
}

bool operator==(const Strides& a, const Strides& b) {
  return a.rank_ == b.rank_ && std::equal(a.strides_.begin(), a.strides_.begin() + a.rank_, b.strides_.begin());
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const int rank = std::max(a.rank(), b.rank());
  std::vector<std::int64_t> dims(static_cast<std::size_t>(rank));
  for (int i = 0; i < rank; ++i) {
    const std::int64_t x = a.dim_or_one(i), y = b.dim_or_one(i);
    if (x != y && x != 1 && y != 1)
      throw_user_error("shapes {} and {} do not broadcast: dimension {} is {} against {} "
                       "(dimensions are listed fastest first)", a.to_string(), b.to_string(), i, x, y);
    dims[static_cast<std::size_t>(i)] = x == 1 ? y : x;
  }
  return Shape::from_fastest_first(dims);
}

}  // namespace tessera
