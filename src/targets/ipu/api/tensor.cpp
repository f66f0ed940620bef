// Tensor views (spec 001 §2.1): a tensor is a list of runs of variable bytes in row-major
// element order. Views that keep runs (slice of the outer dimension, reshape, flatten) work on
// the runs; views that reorder elements expand to one entry per element and merge runs back.
#include <algorithm>
#include <numeric>

#include <poplar/Tensor.hpp>
#include <poplar/exceptions.hpp>

#include "state.h"
#include "tessera/core/limits.h"

namespace poplar {

namespace {
std::string shape_str(const std::vector<std::size_t>& s) {
  return fmt::format("{{{}}}", fmt::join(s, ","));
}
// A wrapped count could equal a real tensor's and let reshape accept a shape of 2^64+ elements.
std::size_t product(const std::vector<std::size_t>& s) {
  std::size_t n = 1;
  for (std::size_t d : s)
    if (__builtin_mul_overflow(n, d, &n))
      throw tensor_creation_error(
          fmt::format("the shape {} has more elements than 64 bits count; check its dimensions",
                      shape_str(s)));
  return n;
}
using Elems = std::vector<std::pair<std::uint32_t, std::uint64_t>>;
}  // namespace

Tensor::Tensor(Type type, std::vector<std::size_t> shape, std::vector<Region> regions)
    : type_(type),
      shape_(std::move(shape)),
      regions_(std::make_shared<const std::vector<Region>>(std::move(regions))) {}

const std::vector<Tensor::Region>& Tensor::regions() const {
  static const std::vector<Region> none;
  return regions_ ? *regions_ : none;
}
std::size_t Tensor::elementSize() const {
  return type_.tesseraSize();
}
std::size_t Tensor::numElements() const {
  return product(shape_);
}
std::size_t Tensor::dim(unsigned i) const {
  if (i >= shape_.size())
    throw index_error(fmt::format("dimension {} of a rank-{} tensor", i, shape_.size()));
  return shape_[i];
}

Elems Tensor::elements() const {
  Elems out;
  out.reserve(numElements());
  std::size_t es = elementSize();
  for (const auto& r : regions())
    for (std::uint64_t b = r.begin; b < r.end; b += es) out.emplace_back(r.var, b);
  return out;
}

Tensor Tensor::fromElements(std::vector<std::size_t> shape, const Elems& elems) const {
  std::vector<Region> regions;
  std::size_t es = elementSize();
  for (const auto& [var, off] : elems) {
    if (!regions.empty() && regions.back().var == var && regions.back().end == off)
      regions.back().end += es;
    else
      regions.push_back({var, off, off + es});
  }
  return Tensor(type_, std::move(shape), std::move(regions));
}

namespace {
// The runs covering flattened elements [first, last) of a run list.
std::vector<Tensor::Region> cut(const std::vector<Tensor::Region>& regions, std::size_t es,
                                std::uint64_t first, std::uint64_t last) {
  std::vector<Tensor::Region> out;
  std::uint64_t pos = 0;  // bytes of the tensor before this run
  std::uint64_t lo = first * es, hi = last * es;
  for (const auto& r : regions) {
    std::uint64_t len = r.end - r.begin;
    std::uint64_t a = std::max(lo, pos), b = std::min(hi, pos + len);
    if (a < b) out.push_back({r.var, r.begin + (a - pos), r.begin + (b - pos)});
    pos += len;
    if (pos >= hi) break;
  }
  return out;
}
}  // namespace

Tensor Tensor::slice(std::size_t begin, std::size_t end, unsigned dimension) const {
  if (dimension >= rank())
    throw index_error(
        fmt::format("slice of dimension {} of a tensor of shape {}", dimension, shape_str(shape_)));
  if (begin > end || end > shape_[dimension])
    throw index_error(
        fmt::format("slice [{}, {}) of dimension {} (size {}) of a tensor of shape {}", begin, end,
                    dimension, shape_[dimension], shape_str(shape_)));
  auto shape = shape_;
  shape[dimension] = end - begin;
  if (dimension == 0) {
    std::size_t inner = shape_.empty() ? 1 : numElements() / std::max<std::size_t>(shape_[0], 1);
    return Tensor(type_, shape, cut(regions(), elementSize(), begin * inner, end * inner));
  }
  std::size_t outer = 1, inner = 1;
  for (unsigned d = 0; d < dimension; ++d) outer *= shape_[d];
  for (unsigned d = dimension + 1; d < rank(); ++d) inner *= shape_[d];
  std::vector<Region> out;
  std::size_t es = elementSize();
  for (std::size_t o = 0; o < outer; ++o) {
    std::size_t base = o * shape_[dimension] * inner;
    for (const auto& r : cut(regions(), es, base + begin * inner, base + end * inner)) {
      if (!out.empty() && out.back().var == r.var && out.back().end == r.begin)
        out.back().end = r.end;
      else
        out.push_back(r);
    }
  }
  return Tensor(type_, shape, std::move(out));
}

Tensor Tensor::slice(ArrayRef<std::size_t> begin, ArrayRef<std::size_t> end) const {
  if (begin.size() != rank() || end.size() != rank())
    throw index_error(fmt::format("slice bounds of rank {} and {} for a tensor of rank {}",
                                  begin.size(), end.size(), rank()));
  Tensor t = *this;
  for (unsigned d = 0; d < rank(); ++d) t = t.slice(begin[d], end[d], d);
  return t;
}

std::vector<Tensor> Tensor::slices(ArrayRef<Interval> intervals, unsigned dimension) const {
  std::vector<Tensor> out;
  for (const auto& i : intervals) out.push_back(slice(i.begin(), i.end(), dimension));
  return out;
}

Tensor Tensor::operator[](std::size_t i) const {
  if (rank() == 0) throw index_error("indexing a scalar tensor");
  auto shape = shape_;
  Tensor t = slice(i, i + 1, 0);
  shape.erase(shape.begin());
  t.shape_ = shape;
  return t;
}

Tensor Tensor::index(ArrayRef<std::size_t> indices) const {
  Tensor t = *this;
  for (auto i : indices) t = t[i];
  return t;
}

Tensor Tensor::reshape(ArrayRef<std::size_t> shape) const {
  std::vector<std::size_t> s = shape.vec();
  if (product(s) != numElements())
    throw tensor_creation_error(
        fmt::format("reshape of a tensor of shape {} ({} elements) to {} "
                    "({} elements)",
                    shape_str(shape_), numElements(), shape_str(s), product(s)));
  Tensor t = *this;
  t.shape_ = std::move(s);
  return t;
}

Tensor Tensor::flatten() const {
  return reshape({numElements()});
}

Tensor Tensor::flatten(unsigned dimBegin, unsigned dimEnd) const {
  if (dimBegin >= dimEnd || dimEnd > rank())
    throw index_error(fmt::format("flatten of dimensions [{}, {}) of a rank-{} tensor", dimBegin,
                                  dimEnd, rank()));
  std::vector<std::size_t> s(shape_.begin(), shape_.begin() + dimBegin);
  std::size_t n = 1;
  for (unsigned d = dimBegin; d < dimEnd; ++d) n *= shape_[d];
  s.push_back(n);
  s.insert(s.end(), shape_.begin() + dimEnd, shape_.end());
  return reshape(s);
}

Tensor Tensor::reshapePartial(unsigned beginIndex, unsigned endIndex,
                              ArrayRef<std::size_t> newDims) const {
  if (beginIndex > endIndex || endIndex > rank())
    throw index_error(fmt::format("reshapePartial of dimensions [{}, {}) of a rank-{} tensor",
                                  beginIndex, endIndex, rank()));
  std::vector<std::size_t> s(shape_.begin(), shape_.begin() + beginIndex);
  s.insert(s.end(), newDims.begin(), newDims.end());
  s.insert(s.end(), shape_.begin() + endIndex, shape_.end());
  return reshape(s);
}

std::vector<std::vector<Interval>> Tensor::getContiguousRegions() const {
  // Each region is a run of consecutive bytes of one variable, in the tensor's element order.
  std::vector<std::vector<Interval>> out;
  std::size_t es = elementSize(), at = 0;
  for (const auto& r : regions()) {
    std::size_t n = (r.end - r.begin) / es;
    out.push_back({Interval(at, at + n)});
    at += n;
  }
  return out;
}

Tensor Tensor::dimShuffle(ArrayRef<unsigned> permutation) const {
  if (permutation.size() != rank())
    throw index_error(fmt::format("dimShuffle with {} dimensions of a rank-{} tensor",
                                  permutation.size(), rank()));
  std::vector<bool> seen(rank());
  for (auto p : permutation) {
    if (p >= rank() || seen[p])
      throw index_error(
          fmt::format("dimShuffle permutation is not a permutation of 0..{}", rank() - 1));
    seen[p] = true;
  }
  std::vector<std::size_t> shape(rank()), in_strides(rank(), 1);
  for (int d = int(rank()) - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * shape_[d + 1];
  for (unsigned d = 0; d < rank(); ++d) shape[d] = shape_[permutation[d]];
  Elems src = elements(), out(src.size());
  std::vector<std::size_t> idx(rank(), 0);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::size_t off = 0;
    for (unsigned d = 0; d < rank(); ++d) off += idx[d] * in_strides[permutation[d]];
    out[i] = src[off];
    for (int d = int(rank()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return fromElements(shape, out);
}

Tensor Tensor::dimRoll(unsigned dimIdx, unsigned newIdx) const {
  if (dimIdx >= rank() || newIdx >= rank())
    throw index_error(fmt::format("dimRoll of dimension {} to position {} of a rank-{} tensor; "
                                  "both must be below the rank",
                                  dimIdx, newIdx, rank()));
  std::vector<unsigned> p(rank());
  std::iota(p.begin(), p.end(), 0u);
  p.erase(p.begin() + dimIdx);
  p.insert(p.begin() + newIdx, dimIdx);
  return dimShuffle(p);
}

Tensor Tensor::transpose() const {
  if (rank() != 2)
    throw index_error(fmt::format("transpose of a rank-{} tensor; it needs rank 2", rank()));
  return dimShuffle({1, 0});
}

Tensor Tensor::broadcast(unsigned N, unsigned dim) const {
  if (dim >= rank())
    throw index_error(fmt::format("broadcast along dimension {} of rank {}", dim, rank()));
  auto shape = shape_;
  if (__builtin_mul_overflow(shape[dim], std::size_t{N}, &shape[dim]))
    throw tensor_creation_error(fmt::format("broadcast of dimension {} of {} {} times has more "
                                            "elements than 64 bits count",
                                            dim, shape_str(shape_), N));
  if (product(shape) == 0) return Tensor(type_, std::move(shape), {});
  // The view repeats each block's runs N times: sized before it is built, since N copies of
  // one element are N runs of the view.
  std::size_t outer = 1;
  for (unsigned d = 0; d < dim; ++d) outer *= shape_[d];
  const double runs = (double(regions().size()) + double(outer)) * double(N);
  const double bytes = runs * double(sizeof(Region));
  tessera::check_host_memory(
      bytes >= 1.8e19 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(bytes),
      fmt::format("broadcast of a tensor of shape {} {} times along dimension {}",
                  shape_str(shape_), N, dim));
  std::vector<Region> out;
  auto push = [&](const Region& r) {
    if (!out.empty() && out.back().var == r.var && out.back().end == r.begin)
      out.back().end = r.end;
    else
      out.push_back(r);
  };
  const std::size_t es = elementSize(), chunk = numElements() / std::max<std::size_t>(outer, 1);
  for (std::size_t o = 0; o < outer; ++o) {
    const auto block = cut(regions(), es, o * chunk, (o + 1) * chunk);
    for (unsigned k = 0; k < N; ++k)
      for (const auto& r : block) push(r);
  }
  return Tensor(type_, std::move(shape), std::move(out));
}

Tensor Tensor::expand(ArrayRef<std::size_t> indices) const {
  auto s = shape_;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    if (indices[k] > s.size())
      throw index_error(fmt::format("expand at {} of a rank-{} shape", indices[k], s.size()));
    s.insert(s.begin() + indices[k], 1);
  }
  return reshape(s);
}

Tensor Tensor::squeeze(ArrayRef<std::size_t> indices) const {
  for (std::size_t i : indices)
    if (i >= rank())
      throw index_error(fmt::format("squeeze of dimension {} of a rank-{} tensor", i, rank()));
  std::vector<std::size_t> s;
  for (std::size_t d = 0; d < rank(); ++d) {
    bool drop = std::find(indices.begin(), indices.end(), d) != indices.end();
    if (drop && shape_[d] != 1)
      throw index_error(fmt::format("squeeze of dimension {} of size {}", d, shape_[d]));
    if (!drop) s.push_back(shape_[d]);
  }
  return reshape(s);
}

Tensor Tensor::reverse(unsigned dimension) const {
  if (dimension >= rank())
    throw index_error(fmt::format("reverse of dimension {} of rank {}", dimension, rank()));
  std::vector<Tensor> parts;
  for (std::size_t i = shape_[dimension]; i-- > 0;) parts.push_back(slice(i, i + 1, dimension));
  if (parts.empty()) return *this;
  return concat(parts, dimension);
}

Tensor Tensor::subSample(unsigned stride, unsigned dimension) const {
  if (stride == 0 || dimension >= rank())
    throw index_error(
        fmt::format("subSample stride {} of dimension {} (rank {})", stride, dimension, rank()));
  std::vector<Tensor> parts;
  for (std::size_t i = 0; i < shape_[dimension]; i += stride)
    parts.push_back(slice(i, i + 1, dimension));
  if (parts.empty()) return slice(0, 0, dimension);
  return concat(parts, dimension);
}

Tensor Tensor::upsample(unsigned scale, unsigned dimension, UpsampleMethod) const {
  if (dimension >= rank())
    throw index_error(fmt::format("upsample of dimension {} of rank {}", dimension, rank()));
  if (scale == 0) return slice(0, 0, dimension);
  std::vector<Tensor> parts;
  for (std::size_t i = 0; i < shape_[dimension]; ++i)
    for (unsigned k = 0; k < scale; ++k) parts.push_back(slice(i, i + 1, dimension));
  if (parts.empty()) return *this;
  return concat(parts, dimension);
}

Tensor Tensor::reinterpret(const Type& type) const {
  std::size_t from = elementSize(), to = type.tesseraSize();
  auto s = shape_;
  if (s.empty()) s.push_back(1);
  std::size_t bytes = s.back() * from;
  if (bytes % to != 0)
    throw type_error(
        fmt::format("reinterpret of {} x {} ({} B) as {}: not a whole number of "
                    "elements",
                    s.back(), type_.toString(), bytes, type.toString()));
  for (const auto& r : regions())
    if (r.begin % to != 0 || (r.end - r.begin) % to != 0)
      throw type_error(fmt::format("reinterpret as {}: a run of the tensor is not aligned to {} B",
                                   type.toString(), to));
  s.back() = bytes / to;
  Tensor t = *this;
  t.type_ = type;
  t.shape_ = s;
  return t;
}

bool Tensor::intersectsWith(const Tensor& other) const {
  for (const auto& a : regions())
    for (const auto& b : other.regions())
      if (a.var == b.var && a.begin < b.end && b.begin < a.end) return true;
  return false;
}

bool Tensor::containsAliases() const {
  auto e = elements();
  std::sort(e.begin(), e.end());
  return std::adjacent_find(e.begin(), e.end()) != e.end();
}

Tensor concat(const Tensor& first, const Tensor& second, unsigned dimension) {
  return concat(ArrayRef<Tensor>({first, second}), dimension);
}

Tensor concat(ArrayRef<Tensor> tensors, unsigned dimension) {
  if (tensors.empty()) throw tensor_creation_error("concat of no tensors");
  const Tensor& t0 = tensors[0];
  auto shape = t0.shape();
  if (dimension >= shape.size())
    throw index_error(
        fmt::format("concat along dimension {} of rank-{} tensors", dimension, shape.size()));
  std::size_t total = 0;
  for (const auto& t : tensors) {
    auto s = t.shape();
    if (t.elementType() != t0.elementType() || s.size() != shape.size())
      throw tensor_creation_error("concat of tensors of different types or ranks");
    for (std::size_t d = 0; d < s.size(); ++d)
      if (d != dimension && s[d] != shape[d])
        throw tensor_creation_error(
            fmt::format("concat along {}: shapes {} and {} differ elsewhere", dimension,
                        shape_str(shape), shape_str(s)));
    total += s[dimension];
  }
  std::size_t outer = 1;
  for (unsigned d = 0; d < dimension; ++d) outer *= shape[d];
  std::vector<Tensor::Region> out;
  auto push = [&](const Tensor::Region& r) {
    if (!out.empty() && out.back().var == r.var && out.back().end == r.begin)
      out.back().end = r.end;
    else
      out.push_back(r);
  };
  std::size_t es = t0.elementSize();
  for (std::size_t o = 0; o < outer; ++o)
    for (const auto& t : tensors) {
      std::size_t chunk = t.numElements() / std::max<std::size_t>(outer, 1);
      for (const auto& r : cut(t.regions(), es, o * chunk, (o + 1) * chunk)) push(r);
    }
  shape[dimension] = total;
  return Tensor(t0.elementType(), shape, std::move(out));
}

}  // namespace poplar
