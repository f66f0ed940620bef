// popops::pad: views only (see include/popops/Pad.hpp).
#include <popops/Pad.hpp>

#include <functional>

#include <fmt/format.h>
#include <poputil/exceptions.hpp>

namespace popops {

using poplar::Tensor;

namespace {

std::string shape_text(const Tensor& t) {
  return fmt::format("{{{}}}", fmt::join(t.shape(), ","));
}

// Applies negative padding (truncation) along `dim`; what is left of lower/upper is >= 0.
Tensor truncate(const Tensor& t, std::ptrdiff_t& lower, std::ptrdiff_t& upper, unsigned dim) {
  if (dim >= t.rank())
    throw poputil::poplibs_error(
        fmt::format("popops::pad: dimension {} of a tensor of shape {}", dim, shape_text(t)));
  const auto n = static_cast<std::ptrdiff_t>(t.dim(dim));
  const std::ptrdiff_t cut_lower = lower < 0 ? -lower : 0, cut_upper = upper < 0 ? -upper : 0;
  if (cut_lower + cut_upper > n)
    throw poputil::poplibs_error(fmt::format(
        "popops::pad: negative padding {} and {} truncate dimension {} of size {} by more than "
        "its size",
        lower, upper, dim, n));
  lower = std::max<std::ptrdiff_t>(lower, 0);
  upper = std::max<std::ptrdiff_t>(upper, 0);
  if (cut_lower == 0 && cut_upper == 0) return t;
  return t.slice(static_cast<std::size_t>(cut_lower), static_cast<std::size_t>(n - cut_upper), dim);
}

// t with `lower` and `upper` elements of make(shape, side) around it along `dim`.
using MakePad = std::function<Tensor(const std::vector<std::size_t>& shape, bool upper_side,
                                     const Tensor& truncated)>;
Tensor pad_dim(const Tensor& t, std::ptrdiff_t lower, std::ptrdiff_t upper, unsigned dim,
               const MakePad& make) {
  const Tensor kept = truncate(t, lower, upper, dim);
  auto side = [&](std::ptrdiff_t count, bool upper_side) {
    std::vector<std::size_t> shape = kept.shape();
    shape[dim] = static_cast<std::size_t>(count);
    return make(shape, upper_side, kept);
  };
  std::vector<Tensor> parts;
  if (lower > 0) parts.push_back(side(lower, false));
  parts.push_back(kept);
  if (upper > 0) parts.push_back(side(upper, true));
  return parts.size() == 1 ? parts[0] : poplar::concat(parts, dim);
}

void check_sizes(const Tensor& t, const std::vector<std::ptrdiff_t>& lower,
                 const std::vector<std::ptrdiff_t>& upper) {
  if (lower.size() != t.rank() || upper.size() != t.rank())
    throw poputil::poplibs_error(fmt::format(
        "popops::pad: {} lower and {} upper paddings for a tensor of rank {} (shape {}); give "
        "one of each per dimension",
        lower.size(), upper.size(), t.rank(), shape_text(t)));
}

// Maps a new constant pad region as `method` says; `edge` is the slice of the unpadded tensor
// that the region touches (one element thick along `dim`).
void map_pad(poplar::Graph& graph, const Tensor& p, const Tensor& edge, unsigned dim,
             padding::MappingMethod method) {
  if (method == padding::MappingMethod::NONE || p.numElements() == 0) return;
  if (method == padding::MappingMethod::ZERO) {
    graph.setTileMapping(p, 0);
    return;
  }
  // Each pad element goes where its edge element (the same index, 0 along `dim`) is.
  const poplar::Graph::TileToTensorMapping edge_map = graph.getTileMapping(edge, true);
  std::vector<unsigned> tile_of(edge.numElements());
  for (std::size_t tile = 0; tile < edge_map.size(); ++tile)
    for (const poplar::Interval& iv : edge_map[tile])
      for (std::size_t e = iv.begin(); e < iv.end(); ++e) tile_of[e] = static_cast<unsigned>(tile);
  std::size_t inner = 1;  // elements of the dimensions after `dim`
  for (unsigned d = dim + 1; d < p.rank(); ++d) inner *= p.dim(d);
  const std::size_t count = p.dim(dim);
  poplar::Graph::TileToTensorMapping mapping(edge_map.size());
  for (std::size_t i = 0; i < p.numElements(); ++i) {
    const std::size_t outer = i / (inner * count), in = i % inner;
    const unsigned tile = tile_of[outer * inner + in];
    auto& runs = mapping[tile];
    if (!runs.empty() && runs.back().end() == i)
      runs.back() = poplar::Interval(runs.back().begin(), i + 1);
    else
      runs.emplace_back(i, i + 1);
  }
  graph.setTileMapping(p, mapping);
}

Tensor edge_slice(const Tensor& kept, bool upper_side, unsigned dim) {
  const std::size_t n = kept.dim(dim);
  return upper_side ? kept.slice(n - 1, n, dim) : kept.slice(0, 1, dim);
}

template <typename T>
Tensor constant_pad(poplar::Graph& graph, const Tensor& t, std::ptrdiff_t lower,
                    std::ptrdiff_t upper, unsigned dim, T val, padding::MappingMethod method) {
  return pad_dim(
      t, lower, upper, dim,
      [&](const std::vector<std::size_t>& shape, bool upper_side, const Tensor& kept) {
        // Checked before the constant joins the graph, so a refused call leaves nothing behind.
        std::size_t elements = 1;
        for (std::size_t d : shape) elements *= d;
        if (method == padding::MappingMethod::EDGE && kept.dim(dim) == 0 && elements > 0)
          throw poputil::poplibs_error(fmt::format(
              "popops::pad: MappingMethod::EDGE on dimension {} of a tensor of shape {} has no "
              "edge element to take the mapping from; use MappingMethod::ZERO",
              dim, shape_text(kept)));
        Tensor p = graph.addConstant<T>(t.elementType(), shape, val, {"pad"});
        map_pad(graph, p, kept.dim(dim) ? edge_slice(kept, upper_side, dim) : kept, dim, method);
        return p;
      });
}

Tensor tensor_pad(const Tensor& t, std::ptrdiff_t lower, std::ptrdiff_t upper, unsigned dim,
                  const Tensor& val) {
  if (val.numElements() != 1 || val.elementType() != t.elementType())
    throw poputil::poplibs_error(fmt::format(
        "popops::pad: the padding value must be one element of the tensor's type {}; it has {} "
        "elements of type {}",
        t.elementType().toString(), val.numElements(), val.elementType().toString()));
  return pad_dim(t, lower, upper, dim,
                 [&](const std::vector<std::size_t>& shape, bool, const Tensor&) {
                   Tensor p = val.flatten().reshape(std::vector<std::size_t>(shape.size(), 1));
                   for (unsigned d = 0; d < shape.size(); ++d)
                     if (shape[d] != 1) p = p.broadcast(static_cast<unsigned>(shape[d]), d);
                   return p;
                 });
}

Tensor numpy_pad(const Tensor& t, std::ptrdiff_t lower, std::ptrdiff_t upper, unsigned dim,
                 padding::Type type) {
  return pad_dim(
      t, lower, upper, dim,
      [&](const std::vector<std::size_t>& shape, bool upper_side, const Tensor& kept) {
        const std::size_t n = kept.dim(dim), count = shape[dim];
        if (type == padding::Type::EDGE) {
          if (n == 0)
            throw poputil::poplibs_error(fmt::format(
                "popops::pad: EDGE padding of dimension {}, which is empty, has no edge to repeat",
                dim));
          return edge_slice(kept, upper_side, dim).broadcast(static_cast<unsigned>(count), dim);
        }
        if (count >= n)
          throw poputil::poplibs_error(
              fmt::format("popops::pad: REFLECT padding of {} on dimension {} of size {}: "
                          "reflection reaches at "
                          "most size - 1 elements",
                          count, dim, n));
        return (upper_side ? kept.slice(n - 1 - count, n - 1, dim) : kept.slice(1, count + 1, dim))
            .reverse(dim);
      });
}

template <typename F>
Tensor every_dim(const Tensor& t, const std::vector<std::ptrdiff_t>& lower,
                 const std::vector<std::ptrdiff_t>& upper, F&& one) {
  check_sizes(t, lower, upper);
  Tensor r = t;
  for (unsigned d = 0; d < t.rank(); ++d) r = one(r, lower[d], upper[d], d);
  return r;
}

}  // namespace

Tensor pad(poplar::Graph& graph, const Tensor& t, const std::vector<std::ptrdiff_t>& paddingLower,
           const std::vector<std::ptrdiff_t>& paddingUpper, float val,
           padding::MappingMethod mappingMethod) {
  return every_dim(t, paddingLower, paddingUpper,
                   [&](const Tensor& r, auto lo, auto hi, unsigned d) {
                     return constant_pad<float>(graph, r, lo, hi, d, val, mappingMethod);
                   });
}

Tensor pad(poplar::Graph& graph, const Tensor& t, const std::vector<std::ptrdiff_t>& paddingLower,
           const std::vector<std::ptrdiff_t>& paddingUpper, int val,
           padding::MappingMethod mappingMethod) {
  return every_dim(t, paddingLower, paddingUpper,
                   [&](const Tensor& r, auto lo, auto hi, unsigned d) {
                     return constant_pad<int>(graph, r, lo, hi, d, val, mappingMethod);
                   });
}

Tensor pad(poplar::Graph&, const Tensor& t, const std::vector<std::ptrdiff_t>& paddingLower,
           const std::vector<std::ptrdiff_t>& paddingUpper, const Tensor& val,
           padding::MappingMethod) {
  return every_dim(
      t, paddingLower, paddingUpper,
      [&](const Tensor& r, auto lo, auto hi, unsigned d) { return tensor_pad(r, lo, hi, d, val); });
}

Tensor pad(poplar::Graph& graph, const Tensor& t, std::ptrdiff_t paddingLower,
           std::ptrdiff_t paddingUpper, unsigned dim, float val,
           padding::MappingMethod mappingMethod) {
  return constant_pad<float>(graph, t, paddingLower, paddingUpper, dim, val, mappingMethod);
}

Tensor pad(poplar::Graph& graph, const Tensor& t, std::ptrdiff_t paddingLower,
           std::ptrdiff_t paddingUpper, unsigned dim, int val,
           padding::MappingMethod mappingMethod) {
  return constant_pad<int>(graph, t, paddingLower, paddingUpper, dim, val, mappingMethod);
}

Tensor pad(poplar::Graph&, const Tensor& t, std::ptrdiff_t paddingLower,
           std::ptrdiff_t paddingUpper, unsigned dim, const Tensor& val, padding::MappingMethod) {
  return tensor_pad(t, paddingLower, paddingUpper, dim, val);
}

Tensor pad(const Tensor& t, const std::vector<std::ptrdiff_t>& paddingLower,
           const std::vector<std::ptrdiff_t>& paddingUpper, padding::Type type) {
  return every_dim(
      t, paddingLower, paddingUpper,
      [&](const Tensor& r, auto lo, auto hi, unsigned d) { return numpy_pad(r, lo, hi, d, type); });
}

Tensor pad(const Tensor& t, std::ptrdiff_t paddingLower, std::ptrdiff_t paddingUpper, unsigned dim,
           padding::Type type) {
  return numpy_pad(t, paddingLower, paddingUpper, dim, type);
}

}  // namespace popops
