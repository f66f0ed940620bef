// Data movement: Reshape, Flatten, Transpose, Concat, Split, Slice, Squeeze, Unsqueeze, Gather,
// Pad, Expand, Shape. Semantics: ONNX Reshape-14, Flatten-13, Transpose-13, Concat-13,
// Split-18, Slice-13, Squeeze-13, Unsqueeze-13, Gather-13, Pad-18, Expand-13, Shape-15.
#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include "common.h"
#include "tessera/ops/reference.h"

namespace tessera::ops {

namespace {

using Dims5 = std::array<std::int64_t, kMaxRank>;

template <typename E>
void strided_copy_impl(const E* in, E* out, const Shape& out_shape, std::int64_t base,
                       const Dims5& strides) {
  const std::int64_t total = out_shape.element_count();
  if (total == 0) return;
  const int r = out_shape.rank();
  if (r == 0) {
    out[0] = in[base];
    return;
  }
  const std::int64_t n0 = out_shape[0], s0 = strides[0];
  Dims5 idx{};
  std::int64_t off = base;
  for (std::int64_t o = 0; o < total; o += n0) {
    const E* src = in + off;
    E* dst = out + o;
    if (s0 == 1) {
      std::memcpy(dst, src, static_cast<std::size_t>(n0) * sizeof(E));
    } else {
      for (std::int64_t i = 0; i < n0; ++i) dst[i] = src[i * s0];
    }
    for (int d = 1; d < r; ++d) {
      const auto du = static_cast<std::size_t>(d);
      off += strides[du];
      if (++idx[du] < out_shape[d]) break;
      off -= strides[du] * out_shape[d];
      idx[du] = 0;
    }
  }
}

// out[i] = in[base + sum(idx_d * strides[d])] for every multi-index of out_shape.
Tensor strided_copy(const Tensor& in, const Shape& out_shape, std::int64_t base,
                    const Dims5& strides) {
  Tensor out(in.dtype(), out_shape);
  switch (dtype_size(in.dtype())) {
    case 1:
      strided_copy_impl(static_cast<const std::uint8_t*>(in.raw_data()),
                        static_cast<std::uint8_t*>(out.raw_data()), out_shape, base, strides);
      break;
    case 2:
      strided_copy_impl(static_cast<const std::uint16_t*>(in.raw_data()),
                        static_cast<std::uint16_t*>(out.raw_data()), out_shape, base, strides);
      break;
    case 4:
      strided_copy_impl(static_cast<const std::uint32_t*>(in.raw_data()),
                        static_cast<std::uint32_t*>(out.raw_data()), out_shape, base, strides);
      break;
    case 8:
      strided_copy_impl(static_cast<const std::uint64_t*>(in.raw_data()),
                        static_cast<std::uint64_t*>(out.raw_data()), out_shape, base, strides);
      break;
    default:
      throw_internal_error("strided_copy: element size {} is not handled", dtype_size(in.dtype()));
  }
  return out;
}

Dims5 dense_strides(const Shape& s) {
  Dims5 st{};
  std::int64_t v = 1;
  for (int d = 0; d < s.rank(); ++d) {
    st[static_cast<std::size_t>(d)] = v;
    v *= s[d];
  }
  return st;
}

}  // namespace

Tensor reshape(const Tensor& x, const Shape& shape) {
  if (shape.element_count() != x.element_count())
    throw_user_error("Reshape: input {} has {} elements but the target shape {} has {}",
                     x.shape().to_string(), x.element_count(), shape.to_string(),
                     shape.element_count());
  return x.reshape(shape);
}

Shape resolve_reshape(const Shape& input, const std::vector<std::int64_t>& dims_outer_first,
                      bool allowzero) {
  const std::vector<std::int64_t> in_dims = input.outer_first();
  std::vector<std::int64_t> dims = dims_outer_first;
  int infer = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (infer >= 0)
        throw_user_error("Reshape: target {} has more than one -1",
                         detail::list_to_string(dims_outer_first));
      infer = static_cast<int>(i);
      continue;
    }
    if (dims[i] < -1)
      throw_user_error("Reshape: target {} has the invalid entry {}",
                       detail::list_to_string(dims_outer_first), dims[i]);
    if (dims[i] == 0 && !allowzero) {
      if (i >= in_dims.size())
        throw_user_error(
            "Reshape: target {} has 0 at position {} (copy the input dim) but the "
            "input {} has only {} dims",
            detail::list_to_string(dims_outer_first), i, input.to_string(), in_dims.size());
      dims[i] = in_dims[i];
    }
    if (__builtin_mul_overflow(known, dims[i], &known))
      throw_user_error("Reshape: target {} overflows 64-bit element counts",
                       detail::list_to_string(dims_outer_first));
  }
  if (infer >= 0) {
    if (known == 0 || input.element_count() % known != 0)
      throw_user_error("Reshape: cannot infer the -1 in {} for input {} ({} elements)",
                       detail::list_to_string(dims_outer_first), input.to_string(),
                       input.element_count());
    dims[static_cast<std::size_t>(infer)] = input.element_count() / known;
  }
  const Shape out = Shape::from_outer_first(dims);
  if (out.element_count() != input.element_count())
    throw_user_error("Reshape: input {} has {} elements but the target {} (ONNX order) holds {}",
                     input.to_string(), input.element_count(),
                     detail::list_to_string(dims_outer_first), out.element_count());
  return out;
}

Tensor flatten(const Tensor& x, int axis) {
  const int r = x.rank();
  if (axis < -r || axis > r)
    throw_user_error("Flatten: axis {} is out of range [{}, {}] for input {}", axis, -r, r,
                     x.shape().to_string());
  const int k = axis < 0 ? axis + r : axis;
  return x.reshape(
      Shape{detail::dims_product(x.shape(), 0, k), detail::dims_product(x.shape(), k, r)});
}

Tensor transpose(const Tensor& x, const std::vector<int>& perm_in) {
  const int r = x.rank();
  std::vector<int> perm = perm_in;
  if (perm.empty()) {
    for (int d = r - 1; d >= 0; --d) perm.push_back(d);
  }
  std::vector<int> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool valid = static_cast<int>(perm.size()) == r;
  for (int d = 0; valid && d < r; ++d) valid = sorted[static_cast<std::size_t>(d)] == d;
  if (!valid)
    throw_user_error("Transpose: perm {} is not a permutation of 0..{} for input {}",
                     detail::list_to_string(perm_in), r - 1, x.shape().to_string());
  const Dims5 in_st = dense_strides(x.shape());
  Dims5 st{};
  std::vector<std::int64_t> dims;
  for (int j = 0; j < r; ++j) {
    st[static_cast<std::size_t>(j)] =
        in_st[static_cast<std::size_t>(perm[static_cast<std::size_t>(j)])];
    dims.push_back(x.dim(perm[static_cast<std::size_t>(j)]));
  }
  return strided_copy(x, Shape::from_fastest_first(dims), 0, st);
}

Tensor concat(const std::vector<Tensor>& inputs, int axis) {
  std::vector<const Tensor*> pointers;
  for (const Tensor& t : inputs) pointers.push_back(&t);
  return concat(pointers, axis);
}

Tensor concat(const std::vector<const Tensor*>& inputs, int axis_in) {
  if (inputs.empty()) throw_user_error("Concat: needs at least one input, got none");
  const Tensor& first = *inputs[0];
  const int r = first.rank();
  if (r == 0) throw_user_error("Concat: inputs must have rank >= 1 (input 0 is a scalar)");
  const int axis = detail::normalize_axis("Concat", axis_in, r, first.shape());
  std::int64_t total = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = *inputs[i];
    detail::require_same_dtype("Concat", first, t);
    bool ok = t.rank() == r;
    for (int d = 0; ok && d < r; ++d) ok = d == axis || t.dim(d) == first.dim(d);
    if (!ok)
      throw_user_error(
          "Concat: input {} has shape {} but must match input 0 {} in every dim "
          "except axis {}",
          i, t.shape().to_string(), first.shape().to_string(), axis);
    total += t.dim(axis);
  }
  Shape out_shape = first.shape();
  out_shape[axis] = total;
  Tensor out(first.dtype(), out_shape);
  const std::size_t es = dtype_size(first.dtype());
  const std::int64_t inner = detail::dims_product(first.shape(), 0, axis);
  const std::int64_t outer = detail::dims_product(first.shape(), axis + 1, r);
  auto* dst = static_cast<std::byte*>(out.raw_data());
  for (std::int64_t o = 0; o < outer; ++o)
    for (const Tensor* input : inputs) {
      const Tensor& t = *input;
      const auto block = static_cast<std::size_t>(inner * t.dim(axis)) * es;
      if (block == 0) continue;
      std::memcpy(dst,
                  static_cast<const std::byte*>(t.raw_data()) + static_cast<std::size_t>(o) * block,
                  block);
      dst += block;
    }
  return out;
}

std::vector<std::int64_t> split_sizes(std::int64_t dim, std::int64_t parts) {
  if (parts < 1 || parts > std::max<std::int64_t>(dim, 1))
    throw_user_error("Split: cannot split a dim of size {} into {} parts", dim, parts);
  const std::int64_t each = (dim + parts - 1) / parts;
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(parts), each);
  sizes.back() = dim - each * (parts - 1);
  if (sizes.back() < 0)
    throw_user_error(
        "Split: a dim of size {} cannot be split into {} parts of {} (the last part "
        "would be negative)",
        dim, parts, each);
  return sizes;
}

std::vector<Tensor> split(const Tensor& x, int axis_in, const std::vector<std::int64_t>& sizes) {
  const int r = x.rank();
  const int axis = detail::normalize_axis("Split", axis_in, r, x.shape());
  std::int64_t sum = 0;
  for (std::int64_t s : sizes) {
    if (s < 0)
      throw_user_error("Split: sizes {} has a negative entry", detail::list_to_string(sizes));
    sum += s;
  }
  if (sizes.empty() || sum != x.dim(axis))
    throw_user_error("Split: sizes {} must sum to the size {} of axis {} of input {}",
                     detail::list_to_string(sizes), x.dim(axis), axis, x.shape().to_string());
  std::vector<Tensor> out;
  const Dims5 st = dense_strides(x.shape());
  std::int64_t start = 0;
  for (std::int64_t s : sizes) {
    Shape shape = x.shape();
    shape[axis] = s;
    out.push_back(strided_copy(x, shape, start * st[static_cast<std::size_t>(axis)], st));
    start += s;
  }
  return out;
}

Tensor slice(const Tensor& x, const SliceParams& params) {
  const int r = x.rank();
  const std::size_t n = params.starts.size();
  if (params.ends.size() != n || (!params.axes.empty() && params.axes.size() != n) ||
      (!params.steps.empty() && params.steps.size() != n))
    throw_user_error(
        "Slice: starts {}, ends {}, axes {} and steps {} must have the same length "
        "(axes and steps may be empty)",
        detail::list_to_string(params.starts), detail::list_to_string(params.ends),
        detail::list_to_string(params.axes), detail::list_to_string(params.steps));
  std::vector<int> axes = params.axes;
  if (axes.empty())
    for (std::size_t i = 0; i < n; ++i) axes.push_back(static_cast<int>(i));
  axes = detail::normalize_axes("Slice", axes, r, x.shape());
  const Dims5 in_st = dense_strides(x.shape());
  Dims5 st = in_st;
  Shape out_shape = x.shape();
  std::int64_t base = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int a = axes[i];
    const std::int64_t dim = x.dim(a);
    std::int64_t step = params.steps.empty() ? 1 : params.steps[i];
    if (step == 0) throw_user_error("Slice: step for axis {} is 0; steps must be nonzero", a);
    // A step longer than the dim selects at most one element; clamping keeps the arithmetic
    // below from overflowing (INT64_MIN steps included).
    const std::int64_t longest = dim + 1;
    step = std::clamp<std::int64_t>(step, -longest, longest);
    std::int64_t start = params.starts[i], end = params.ends[i];
    if (start < 0) start += dim;  // cannot overflow: dim >= 0
    if (end < 0) end += dim;
    std::int64_t count;
    if (step > 0) {
      start = std::clamp<std::int64_t>(start, 0, dim);
      end = std::clamp<std::int64_t>(end, 0, dim);
      count = end > start ? (end - start + step - 1) / step : 0;
    } else {
      start = std::clamp<std::int64_t>(start, 0, dim - 1);
      end = std::clamp<std::int64_t>(end, -1, dim - 1);
      count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
    }
    out_shape[a] = count;
    if (count > 0) base += start * in_st[static_cast<std::size_t>(a)];
    st[static_cast<std::size_t>(a)] = step * in_st[static_cast<std::size_t>(a)];
  }
  if (out_shape.element_count() == 0) return Tensor(x.dtype(), out_shape);
  return strided_copy(x, out_shape, base, st);
}

Tensor squeeze(const Tensor& x, const std::vector<int>& axes_in) {
  const int r = x.rank();
  std::vector<int> axes = detail::normalize_axes("Squeeze", axes_in, r, x.shape());
  for (int a : axes)
    if (x.dim(a) != 1)
      throw_user_error("Squeeze: axis {} of input {} has size {}, not 1", a, x.shape().to_string(),
                       x.dim(a));
  std::vector<std::int64_t> dims;
  for (int d = 0; d < r; ++d) {
    const bool drop =
        axes.empty() ? x.dim(d) == 1 : std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!drop) dims.push_back(x.dim(d));
  }
  return x.reshape(Shape::from_fastest_first(dims));
}

Tensor unsqueeze(const Tensor& x, const std::vector<int>& axes_in) {
  const int out_rank = x.rank() + static_cast<int>(axes_in.size());
  if (out_rank > kMaxRank)
    throw_user_error("Unsqueeze: input {} with {} new axes would have rank {} (> {})",
                     x.shape().to_string(), axes_in.size(), out_rank, kMaxRank);
  for (int a : axes_in)
    if (a < -out_rank || a >= out_rank)
      throw_user_error(
          "Unsqueeze: axis {} is out of range for the output rank {} (input {} plus "
          "{} new dims); expected an axis in [{}, {}]",
          a, out_rank, x.shape().to_string(), axes_in.size(), -out_rank, out_rank - 1);
  const Shape probe =
      Shape::from_fastest_first(std::vector<std::int64_t>(static_cast<std::size_t>(out_rank), 1));
  const std::vector<int> axes = detail::normalize_axes("Unsqueeze", axes_in, out_rank, probe);
  std::vector<std::int64_t> dims;
  int next = 0;
  for (int d = 0; d < out_rank; ++d) {
    if (std::find(axes.begin(), axes.end(), d) != axes.end())
      dims.push_back(1);
    else
      dims.push_back(x.dim(next++));
  }
  return x.reshape(Shape::from_fastest_first(dims));
}

Tensor gather(const Tensor& data, const Tensor& indices, int axis_in) {
  const int r = data.rank();
  if (r == 0) throw_user_error("Gather: data must have rank >= 1 (got a scalar)");
  const int axis = detail::normalize_axis("Gather", axis_in, r, data.shape());
  if (is_floating(indices.dtype()) || indices.dtype() == DType::boolean)
    throw_user_error("Gather: indices have dtype {} but must be an integer dtype",
                     dtype_name(indices.dtype()));
  const int out_rank = r - 1 + indices.rank();
  if (out_rank > kMaxRank)
    throw_user_error("Gather: data {} with indices {} would give rank {} (> {})",
                     data.shape().to_string(), indices.shape().to_string(), out_rank, kMaxRank);
  std::vector<std::int64_t> dims;
  for (int d = 0; d < axis; ++d) dims.push_back(data.dim(d));
  for (int d = 0; d < indices.rank(); ++d) dims.push_back(indices.dim(d));
  for (int d = axis + 1; d < r; ++d) dims.push_back(data.dim(d));
  Tensor out(data.dtype(), Shape::from_fastest_first(dims));
  std::vector<std::int64_t> idx = indices.to_ints();
  const std::int64_t size = data.dim(axis);
  for (std::size_t j = 0; j < idx.size(); ++j) {
    if (idx[j] < -size || idx[j] >= size)
      throw_user_error(
          "Gather: index {} (element {} of indices {}) is out of range for axis {} "
          "of size {} (data {}); valid indices are [{}, {}]",
          idx[j], j, indices.shape().to_string(), axis, size, data.shape().to_string(), -size,
          size - 1);
    if (idx[j] < 0) idx[j] += size;
  }
  const std::size_t es = dtype_size(data.dtype());
  const auto inner = static_cast<std::size_t>(detail::dims_product(data.shape(), 0, axis)) * es;
  const std::int64_t outer = detail::dims_product(data.shape(), axis + 1, r);
  const auto* src = static_cast<const std::byte*>(data.raw_data());
  auto* dst = static_cast<std::byte*>(out.raw_data());
  if (inner == 0) return out;
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i : idx) {
      std::memcpy(dst, src + (static_cast<std::size_t>(o * size + i)) * inner, inner);
      dst += inner;
    }
  return out;
}

PadMode parse_pad_mode(std::string_view name) {
  if (name == "constant") return PadMode::constant;
  if (name == "reflect") return PadMode::reflect;
  if (name == "edge") return PadMode::edge;
  throw_user_error("Pad: mode '{}' is not supported; use constant, reflect or edge", name);
}

namespace {
template <typename E>
void pad_impl(const E* in, E* out, const Shape& out_shape, const Dims5& in_st,
              const std::vector<std::vector<std::int64_t>>& map, E fill) {
  const int r = out_shape.rank();
  const std::int64_t total = out_shape.element_count();
  if (total == 0) return;
  if (r == 0) {
    out[0] = in[0];
    return;
  }
  const std::int64_t n0 = out_shape[0];
  const std::vector<std::int64_t>& m0 = map[0];
  Dims5 idx{};
  for (std::int64_t o = 0; o < total; o += n0) {
    std::int64_t base = 0;
    bool constant_row = false;
    for (int d = 1; d < r; ++d) {
      const std::int64_t s = map[static_cast<std::size_t>(d)]
                                [static_cast<std::size_t>(idx[static_cast<std::size_t>(d)])];
      if (s < 0)
        constant_row = true;
      else
        base += s * in_st[static_cast<std::size_t>(d)];
    }
    E* dst = out + o;
    if (constant_row) {
      std::fill(dst, dst + n0, fill);
    } else {
      for (std::int64_t i = 0; i < n0; ++i) {
        const std::int64_t s = m0[static_cast<std::size_t>(i)];
        dst[i] = s < 0 ? fill : in[base + s];
      }
    }
    for (int d = 1; d < r; ++d) {
      if (++idx[static_cast<std::size_t>(d)] < out_shape[d]) break;
      idx[static_cast<std::size_t>(d)] = 0;
    }
  }
}
}  // namespace

Tensor pad(const Tensor& x, const PadParams& params) {
  const int r = x.rank();
  if (static_cast<int>(params.pads.size()) != 2 * r)
    throw_user_error(
        "Pad: pads {} has {} entries but input {} needs {} (begins for dims 0..{}, "
        "then ends; Tessera dim order)",
        detail::list_to_string(params.pads), params.pads.size(), x.shape().to_string(), 2 * r,
        r - 1);
  std::vector<std::int64_t> dims;
  std::vector<std::vector<std::int64_t>> map(static_cast<std::size_t>(r));
  for (int d = 0; d < r; ++d) {
    const std::int64_t b = params.pads[static_cast<std::size_t>(d)];
    const std::int64_t e = params.pads[static_cast<std::size_t>(r + d)];
    const std::int64_t n = x.dim(d);
    const std::int64_t out_n = n + b + e;
    if (out_n < 0)
      throw_user_error("Pad: pads {} crop dim {} (size {}) below zero",
                       detail::list_to_string(params.pads), d, n);
    if (params.mode != PadMode::constant && n == 0 && out_n > 0)
      throw_user_error("Pad: {} padding of the empty dim {} of input {} has nothing to copy",
                       params.mode == PadMode::edge ? "edge" : "reflect", d, x.shape().to_string());
    dims.push_back(out_n);
    auto& m = map[static_cast<std::size_t>(d)];
    m.resize(static_cast<std::size_t>(out_n));
    for (std::int64_t o = 0; o < out_n; ++o) {
      std::int64_t s = o - b;
      if (s < 0 || s >= n) {
        switch (params.mode) {
          case PadMode::constant:
            s = -1;
            break;
          case PadMode::edge:
            s = std::clamp<std::int64_t>(s, 0, n - 1);
            break;
          case PadMode::reflect:
            // Pads wider than the dim reflect again, as NumPy's 'reflect' does.
            if (n == 1) s = 0;
            while (s < 0 || s >= n) s = s < 0 ? -s : 2 * (n - 1) - s;
            break;
        }
      }
      m[static_cast<std::size_t>(o)] = s;
    }
  }
  const Shape out_shape = Shape::from_fastest_first(dims);
  Tensor out(x.dtype(), out_shape);
  const Tensor fill = params.value.to_tensor(x.dtype());
  const Dims5 in_st = dense_strides(x.shape());
  auto run = [&](auto e) {
    using E = decltype(e);
    E f;
    std::memcpy(&f, fill.raw_data(), sizeof(E));
    pad_impl(static_cast<const E*>(x.raw_data()), static_cast<E*>(out.raw_data()), out_shape, in_st,
             map, f);
  };
  switch (dtype_size(x.dtype())) {
    case 1:
      run(std::uint8_t{});
      break;
    case 2:
      run(std::uint16_t{});
      break;
    case 4:
      run(std::uint32_t{});
      break;
    case 8:
      run(std::uint64_t{});
      break;
    default:
      throw_internal_error("Pad: element size {} is not handled", dtype_size(x.dtype()));
  }
  return out;
}

Tensor expand(const Tensor& x, const Shape& shape) {
  Shape out_shape;
  try {
    out_shape = broadcast_shapes(x.shape(), shape);
  } catch (const UserError&) {
    throw_user_error("Expand: input {} does not broadcast with shape {} (dims fastest first)",
                     x.shape().to_string(), shape.to_string());
  }
  const Dims5 in_st = dense_strides(x.shape());
  Dims5 st{};
  for (int d = 0; d < out_shape.rank(); ++d)
    st[static_cast<std::size_t>(d)] =
        x.shape().dim_or_one(d) == 1 ? 0 : in_st[static_cast<std::size_t>(d)];
  return strided_copy(x, out_shape, 0, st);
}

Tensor shape(const Tensor& x, std::int64_t start, std::optional<std::int64_t> end) {
  const std::int64_t r = x.rank();
  auto fix = [r](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + r : v, 0, r); };
  const std::int64_t s = fix(start), e = fix(end.value_or(r));
  const std::vector<std::int64_t> dims = x.shape().outer_first();
  std::vector<std::int64_t> values;
  for (std::int64_t i = s; i < e; ++i) values.push_back(dims[static_cast<std::size_t>(i)]);
  return Tensor::from_ints(DType::i64, Shape{static_cast<std::int64_t>(values.size())}, values);
}

}  // namespace tessera::ops
