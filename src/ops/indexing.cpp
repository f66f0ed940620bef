// Indexing ops: GatherElements-13, ScatterElements-18, GatherND-13, ScatterND-18, OneHot-11,
// EyeLike-9, Trilu-14, Compress-11, ReverseSequence-10. Storage order (dimension 0 fastest) is
// ONNX's row-major order, so flat offsets are shared with ONNX; axes are Tessera axes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "common.h"
#include "tessera/ops/reference.h"

namespace tessera::ops {

namespace {

// Strides of a Tessera shape in elements (dim 0 fastest).
std::array<std::int64_t, kMaxRank> strides_of(const Shape& s) {
  std::array<std::int64_t, kMaxRank> st{};
  std::int64_t run = 1;
  for (int d = 0; d < s.rank(); ++d) {
    st[static_cast<std::size_t>(d)] = run;
    run *= s[d];
  }
  return st;
}

// Advances a multi-index (dim 0 fastest) over `s`.
void next_index(std::array<std::int64_t, kMaxRank>& idx, const Shape& s) {
  for (int d = 0; d < s.rank(); ++d) {
    if (++idx[static_cast<std::size_t>(d)] < s[d]) return;
    idx[static_cast<std::size_t>(d)] = 0;
  }
}

void require_integer_indices(std::string_view op, const Tensor& indices) {
  if (is_floating(indices.dtype()) || indices.dtype() == DType::boolean)
    throw_user_error("{}: indices must be an integer tensor, got {} (shape {})", op,
                     dtype_name(indices.dtype()), indices.shape().to_string());
}

std::int64_t checked_index(std::string_view op, std::int64_t i, std::int64_t dim,
                           std::int64_t element, const Shape& data_shape) {
  const std::int64_t v = i < 0 ? i + dim : i;
  if (v < 0 || v >= dim)
    throw_user_error(
        "{}: index {} (indices element {}) is out of range for a dim of size {} of data {} "
        "(valid: {} to {})",
        op, i, element, dim, data_shape.to_string(), -dim, dim - 1);
  return v;
}

template <typename V>
V apply_reduction(ScatterReduction r, V old, V update) {
  switch (r) {
    case ScatterReduction::none:
      return update;
    case ScatterReduction::add:
      if constexpr (std::is_integral_v<V>)  // wraps, as NumPy's int64 sums do
        return static_cast<V>(static_cast<std::uint64_t>(old) + static_cast<std::uint64_t>(update));
      else
        return old + update;
    case ScatterReduction::mul:
      if constexpr (std::is_integral_v<V>)
        return static_cast<V>(static_cast<std::uint64_t>(old) * static_cast<std::uint64_t>(update));
      else
        return old * update;
    case ScatterReduction::max:
      return std::max(old, update);
    case ScatterReduction::min:
      return std::min(old, update);
  }
  return update;
}

// Data elements as f64 (exact for every Tessera dtype) and back, for the scatter reductions.
Tensor from_doubles_like(const Tensor& like, const std::vector<double>& v) {
  return Tensor::from_doubles(like.dtype(), like.shape(), v);
}

// Calls fn(out, updates) with data's and updates' elements as vectors of one value type and
// returns `out` as a tensor like data: f64 holds every dtype's values exactly except 64-bit
// integers beyond 2^53, which keep their own type.
template <typename Fn>
Tensor scatter_values(const Tensor& data, const Tensor& updates, Fn&& fn) {
  const auto native = [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> out(data.span<T>().begin(), data.span<T>().end());
    const std::vector<T> upd(updates.span<T>().begin(), updates.span<T>().end());
    fn(out, upd);
    Tensor t(data.dtype(), data.shape());
    std::copy(out.begin(), out.end(), t.data<T>());
    return t;
  };
  if (data.dtype() == DType::i64) return native(std::int64_t{});
  if (data.dtype() == DType::u64) return native(std::uint64_t{});
  std::vector<double> out = data.to_doubles();
  fn(out, updates.to_doubles());
  return from_doubles_like(data, out);
}

std::vector<std::int64_t> onnx_dims(const Shape& s) {
  std::vector<std::int64_t> d;
  for (int i = s.rank() - 1; i >= 0; --i) d.push_back(s[i]);
  return d;
}

std::int64_t product(const std::vector<std::int64_t>& d, std::size_t begin, std::size_t end) {
  std::int64_t p = 1;
  for (std::size_t i = begin; i < end; ++i) p *= d[i];
  return p;
}

}  // namespace

ScatterReduction parse_scatter_reduction(std::string_view name) {
  if (name == "none") return ScatterReduction::none;
  if (name == "add") return ScatterReduction::add;
  if (name == "mul") return ScatterReduction::mul;
  if (name == "max") return ScatterReduction::max;
  if (name == "min") return ScatterReduction::min;
  throw_user_error("reduction '{}' is not one of none, add, mul, max, min", name);
}

Tensor gather_elements(const Tensor& data, const Tensor& indices, int axis_in) {
  require_integer_indices("GatherElements", indices);
  const int r = data.rank();
  if (indices.rank() != r)
    throw_user_error("GatherElements: indices {} must have the rank of data {}",
                     indices.shape().to_string(), data.shape().to_string());
  const int axis = detail::normalize_axis("GatherElements", axis_in, r, data.shape());
  Tensor out(data.dtype(), indices.shape());
  const auto st = strides_of(data.shape());
  const std::vector<std::int64_t> idx = indices.to_ints();
  const std::size_t es = dtype_size(data.dtype());
  const auto* src = static_cast<const std::byte*>(data.raw_data());
  auto* dst = static_cast<std::byte*>(out.raw_data());
  std::array<std::int64_t, kMaxRank> at{};
  for (std::int64_t i = 0; i < out.element_count(); ++i, next_index(at, indices.shape())) {
    std::int64_t off = 0;
    for (int d = 0; d < r; ++d) {
      const auto du = static_cast<std::size_t>(d);
      std::int64_t c = at[du];
      if (d == axis)
        c = checked_index("GatherElements", idx[static_cast<std::size_t>(i)], data.dim(d), i,
                          data.shape());
      else if (c >= data.dim(d))
        throw_user_error("GatherElements: indices {} exceed data {} in dim {} (not the axis)",
                         indices.shape().to_string(), data.shape().to_string(), d);
      off += c * st[du];
    }
    std::memcpy(dst + static_cast<std::size_t>(i) * es, src + static_cast<std::size_t>(off) * es,
                es);
  }
  return out;
}

Tensor scatter_elements(const Tensor& data, const Tensor& indices, const Tensor& updates,
                        int axis_in, ScatterReduction reduction) {
  require_integer_indices("ScatterElements", indices);
  detail::require_same_dtype("ScatterElements", data, updates);
  const int r = data.rank();
  if (indices.rank() != r || !(indices.shape() == updates.shape()))
    throw_user_error(
        "ScatterElements: indices {} and updates {} must have one shape and the rank of data {}",
        indices.shape().to_string(), updates.shape().to_string(), data.shape().to_string());
  const int axis = detail::normalize_axis("ScatterElements", axis_in, r, data.shape());
  const std::vector<std::int64_t> idx = indices.to_ints();
  return scatter_values(data, updates, [&](auto& out, const auto& upd) {
    const auto st = strides_of(data.shape());
    std::array<std::int64_t, kMaxRank> at{};
    for (std::int64_t i = 0; i < indices.element_count(); ++i, next_index(at, indices.shape())) {
      std::int64_t off = 0;
      for (int d = 0; d < r; ++d) {
        const auto du = static_cast<std::size_t>(d);
        std::int64_t c = at[du];
        if (d == axis)
          c = checked_index("ScatterElements", idx[static_cast<std::size_t>(i)], data.dim(d), i,
                            data.shape());
        else if (c >= data.dim(d))
          throw_user_error("ScatterElements: indices {} exceed data {} in dim {} (not the axis)",
                           indices.shape().to_string(), data.shape().to_string(), d);
        off += c * st[du];
      }
      auto& o = out[static_cast<std::size_t>(off)];
      o = apply_reduction(reduction, o, upd[static_cast<std::size_t>(i)]);
    }
  });
}

Tensor gather_nd(const Tensor& data, const Tensor& indices, std::int64_t batch_dims) {
  require_integer_indices("GatherND", indices);
  const auto D = onnx_dims(data.shape()), I = onnx_dims(indices.shape());
  const auto r = static_cast<std::int64_t>(D.size()), q = static_cast<std::int64_t>(I.size());
  if (r < 1 || q < 1)
    throw_user_error("GatherND: data {} and indices {} must have rank >= 1",
                     data.shape().to_string(), indices.shape().to_string());
  const auto b = static_cast<std::size_t>(batch_dims);
  if (batch_dims < 0 || batch_dims >= std::min(r, q))
    throw_user_error(
        "GatherND: batch_dims {} must be in [0, min(rank(data), rank(indices))) = "
        "[0, {})",
        batch_dims, std::min(r, q));
  for (std::size_t i = 0; i < b; ++i)
    if (D[i] != I[i])
      throw_user_error("GatherND: the {} batch dims of data {} and indices {} differ", batch_dims,
                       data.shape().to_string(), indices.shape().to_string());
  const std::int64_t m = I.back();
  if (m < 1 || m > r - batch_dims)
    throw_user_error(
        "GatherND: the last dim of indices {} is {}; it must be in [1, rank(data) - batch_dims "
        "= {}]",
        indices.shape().to_string(), m, r - batch_dims);
  std::vector<std::int64_t> out_dims(I.begin(), I.end() - 1);
  for (auto i = b + static_cast<std::size_t>(m); i < D.size(); ++i) out_dims.push_back(D[i]);
  if (out_dims.size() > static_cast<std::size_t>(kMaxRank))
    throw_user_error("GatherND: the result would have rank {} (Tessera's maximum is {})",
                     out_dims.size(), kMaxRank);
  Tensor out(data.dtype(), Shape::from_outer_first(out_dims));
  const std::int64_t batches = product(D, 0, b);
  const std::int64_t tuples = product(I, b, I.size() - 1);
  const std::int64_t slice = product(D, b + static_cast<std::size_t>(m), D.size());
  const std::int64_t batch_stride = product(D, b, D.size());
  const std::vector<std::int64_t> idx = indices.to_ints();
  const std::size_t es = dtype_size(data.dtype());
  const auto* src = static_cast<const std::byte*>(data.raw_data());
  auto* dst = static_cast<std::byte*>(out.raw_data());
  for (std::int64_t bi = 0; bi < batches; ++bi)
    for (std::int64_t t = 0; t < tuples; ++t) {
      const std::int64_t e = (bi * tuples + t) * m;
      std::int64_t off = bi * batch_stride;
      for (std::int64_t k = 0; k < m; ++k) {
        const std::size_t dk = b + static_cast<std::size_t>(k);
        off += checked_index("GatherND", idx[static_cast<std::size_t>(e + k)], D[dk], e + k,
                             data.shape()) *
               product(D, dk + 1, D.size());
      }
      std::memcpy(dst + static_cast<std::size_t>((bi * tuples + t) * slice) * es,
                  src + static_cast<std::size_t>(off) * es, static_cast<std::size_t>(slice) * es);
    }
  return out;
}

Tensor scatter_nd(const Tensor& data, const Tensor& indices, const Tensor& updates,
                  ScatterReduction reduction) {
  require_integer_indices("ScatterND", indices);
  detail::require_same_dtype("ScatterND", data, updates);
  const auto D = onnx_dims(data.shape()), I = onnx_dims(indices.shape());
  if (D.empty() || I.empty())
    throw_user_error("ScatterND: data {} and indices {} must have rank >= 1",
                     data.shape().to_string(), indices.shape().to_string());
  const std::int64_t m = I.back();
  if (m < 1 || m > static_cast<std::int64_t>(D.size()))
    throw_user_error(
        "ScatterND: the last dim of indices {} is {}; it must be in [1, rank(data) "
        "= {}]",
        indices.shape().to_string(), m, D.size());
  std::vector<std::int64_t> upd_dims(I.begin(), I.end() - 1);
  for (auto i = static_cast<std::size_t>(m); i < D.size(); ++i) upd_dims.push_back(D[i]);
  if (onnx_dims(updates.shape()) != upd_dims)
    throw_user_error(
        "ScatterND: updates {} must have shape indices.shape[:-1] + data.shape[m:] = {} "
        "(Tessera order)",
        updates.shape().to_string(), Shape::from_outer_first(upd_dims).to_string());
  const std::vector<std::int64_t> idx = indices.to_ints();
  return scatter_values(data, updates, [&](auto& out, const auto& upd) {
    const std::int64_t tuples = product(I, 0, I.size() - 1);
    const std::int64_t slice = product(D, static_cast<std::size_t>(m), D.size());
    for (std::int64_t t = 0; t < tuples; ++t) {
      std::int64_t off = 0;
      for (std::int64_t k = 0; k < m; ++k) {
        const auto dk = static_cast<std::size_t>(k);
        off += checked_index("ScatterND", idx[static_cast<std::size_t>(t * m + k)], D[dk],
                             t * m + k, data.shape()) *
               product(D, dk + 1, D.size());
      }
      for (std::int64_t s = 0; s < slice; ++s) {
        auto& o = out[static_cast<std::size_t>(off + s)];
        o = apply_reduction(reduction, o, upd[static_cast<std::size_t>(t * slice + s)]);
      }
    }
  });
}

Tensor one_hot(const Tensor& indices, std::int64_t depth, const Tensor& values, int axis) {
  if (values.element_count() != 2)
    throw_user_error("OneHot: values must hold 2 elements (off, on), got shape {}",
                     values.shape().to_string());
  if (depth < 1) throw_user_error("OneHot: depth is {}; it must be >= 1", depth);
  const int r = indices.rank();
  if (r + 1 > kMaxRank)
    throw_user_error("OneHot: the result would have rank {} (Tessera's maximum is {})", r + 1,
                     kMaxRank);
  if (axis < 0 || axis > r)
    throw_user_error("OneHot: axis {} (Tessera position in the output) must be in [0, {}]", axis,
                     r);
  std::vector<std::int64_t> dims;
  for (int d = 0; d < r; ++d) {
    if (d == axis) dims.push_back(depth);
    dims.push_back(indices.dim(d));
  }
  if (axis == r) dims.push_back(depth);
  const Tensor vals = values.reshape(Shape{2});
  const double off = vals.at<double>(0), on = vals.at<double>(1);
  const std::int64_t inner = detail::dims_product(indices.shape(), 0, axis);
  const std::int64_t outer = indices.element_count() / std::max<std::int64_t>(inner, 1);
  std::vector<double> out(static_cast<std::size_t>(indices.element_count() * depth), off);
  const std::vector<double> idx = indices.to_doubles();
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      auto k = static_cast<std::int64_t>(std::trunc(idx[static_cast<std::size_t>(o * inner + i)]));
      if (k < 0) k += depth;
      if (k < 0 || k >= depth) continue;
      out[static_cast<std::size_t>((o * depth + k) * inner + i)] = on;
    }
  return Tensor::from_doubles(values.dtype(), Shape::from_fastest_first(dims), out);
}

Tensor eye_like(const Shape& shape, DType dtype, std::int64_t k) {
  if (shape.rank() != 2)
    throw_user_error("EyeLike: input must be 2-D, got shape {}", shape.to_string());
  Tensor out(dtype, shape);
  const std::int64_t cols = shape[0], rows = shape[1];
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t j = i + k;
    if (j >= 0 && j < cols) out.set(i * cols + j, 1.0);
  }
  return out;
}

Tensor trilu(const Tensor& x, std::int64_t k, bool upper) {
  if (x.rank() < 2)
    throw_user_error("Trilu: input must have rank >= 2, got shape {}", x.shape().to_string());
  Tensor out = x;
  const std::int64_t cols = x.dim(0), rows = x.dim(1);
  const std::int64_t mats = x.element_count() / std::max<std::int64_t>(rows * cols, 1);
  const std::size_t es = dtype_size(x.dtype());
  auto* p = static_cast<std::byte*>(out.raw_data());
  for (std::int64_t mi = 0; mi < mats; ++mi)
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) {
        const bool keep = upper ? j - i >= k : j - i <= k;
        if (!keep)
          std::memset(p + static_cast<std::size_t>((mi * rows + i) * cols + j) * es, 0, es);
      }
  return out;
}

Tensor compress(const Tensor& x, const Tensor& condition, std::optional<int> axis_in) {
  if (condition.rank() != 1)
    throw_user_error("Compress: condition must be 1-D, got shape {}",
                     condition.shape().to_string());
  const std::vector<std::int64_t> cond = condition.to_ints();
  const Tensor src = axis_in ? x : x.reshape(Shape{x.element_count()});
  const int axis =
      axis_in ? detail::normalize_axis("Compress", *axis_in, src.rank(), src.shape()) : 0;
  const std::int64_t n = src.dim(axis);
  if (static_cast<std::int64_t>(cond.size()) > n)
    throw_user_error("Compress: condition has {} entries but the axis has only {} elements",
                     cond.size(), n);
  std::vector<std::int64_t> keep;
  for (std::size_t i = 0; i < cond.size(); ++i)
    if (cond[i] != 0) keep.push_back(static_cast<std::int64_t>(i));
  Shape out_shape = src.shape();
  out_shape[axis] = static_cast<std::int64_t>(keep.size());
  Tensor out(x.dtype(), out_shape);
  const std::int64_t inner = detail::dims_product(src.shape(), 0, axis);
  const std::int64_t outer = detail::dims_product(src.shape(), axis + 1, src.rank());
  const std::size_t es = dtype_size(x.dtype());
  const auto* s = static_cast<const std::byte*>(src.raw_data());
  auto* d = static_cast<std::byte*>(out.raw_data());
  const auto kept = static_cast<std::int64_t>(keep.size());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t j = 0; j < kept; ++j)
      std::memcpy(
          d + static_cast<std::size_t>((o * kept + j) * inner) * es,
          s + static_cast<std::size_t>((o * n + keep[static_cast<std::size_t>(j)]) * inner) * es,
          static_cast<std::size_t>(inner) * es);
  return out;
}

Tensor reverse_sequence(const Tensor& x, const Tensor& lengths, int time_axis_in,
                        int batch_axis_in) {
  const int r = x.rank();
  if (r < 2)
    throw_user_error("ReverseSequence: input must have rank >= 2, got shape {}",
                     x.shape().to_string());
  const int ta = detail::normalize_axis("ReverseSequence", time_axis_in, r, x.shape());
  const int ba = detail::normalize_axis("ReverseSequence", batch_axis_in, r, x.shape());
  if (ta == ba)
    throw_user_error("ReverseSequence: time_axis and batch_axis are both Tessera dim {}", ta);
  const std::vector<std::int64_t> len = lengths.to_ints();
  if (static_cast<std::int64_t>(len.size()) != x.dim(ba))
    throw_user_error("ReverseSequence: sequence_lens has {} entries; the batch dim has {}",
                     len.size(), x.dim(ba));
  for (std::size_t b = 0; b < len.size(); ++b)
    if (len[b] < 0 || len[b] > x.dim(ta))
      throw_user_error("ReverseSequence: sequence_lens[{}] = {} is outside [0, {}]", b, len[b],
                       x.dim(ta));
  Tensor out(x.dtype(), x.shape());
  const auto st = strides_of(x.shape());
  const std::size_t es = dtype_size(x.dtype());
  const auto* s = static_cast<const std::byte*>(x.raw_data());
  auto* d = static_cast<std::byte*>(out.raw_data());
  std::array<std::int64_t, kMaxRank> at{};
  for (std::int64_t i = 0; i < x.element_count(); ++i, next_index(at, x.shape())) {
    const std::int64_t t = at[static_cast<std::size_t>(ta)];
    const std::int64_t l = len[static_cast<std::size_t>(at[static_cast<std::size_t>(ba)])];
    const std::int64_t from = t < l ? l - 1 - t : t;
    const std::int64_t off = i + (from - t) * st[static_cast<std::size_t>(ta)];
    std::memcpy(d + static_cast<std::size_t>(i) * es, s + static_cast<std::size_t>(off) * es, es);
  }
  return out;
}

}  // namespace tessera::ops
