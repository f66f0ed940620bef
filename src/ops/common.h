// Private helpers shared by the reference ops: axis checks, dtype checks and the broadcast loop.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/core/tensor.h"

namespace tessera::ops::detail {

// Tessera axis in [-rank, rank) to [0, rank); UserError naming the op otherwise.
int normalize_axis(std::string_view op, int axis, int rank, const Shape& shape);
// Every entry normalised, duplicates rejected.
std::vector<int> normalize_axes(std::string_view op, const std::vector<int>& axes, int rank,
                                const Shape& shape);

void require_float(std::string_view op, const Tensor& x, std::string_view input = "input");
void require_same_dtype(std::string_view op, const Tensor& a, const Tensor& b);
// Float ops compute in T = double for f64 and T = float for f32, f16 and bf16 (widened, and
// the result rounded back once by restore).
template <typename Fn>
decltype(auto) with_compute_type(DType dtype, Fn&& fn) {
  if (dtype == DType::f64) return fn(double{});
  return fn(float{});
}
template <typename T>
constexpr DType compute_dtype() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  return std::is_same_v<T, double> ? DType::f64 : DType::f32;
}
// x converted to T's dtype (a copy: Tensors own their bytes).
template <typename T>
Tensor as_compute(const Tensor& x) {
  return x.dtype() == compute_dtype<T>() ? x : x.astype(compute_dtype<T>());
}
// The T values of x without a copy when x already has T's dtype: x itself, else a converted
// copy made in `scratch`.
template <typename T>
const Tensor& compute_ref(const Tensor& x, Tensor& scratch) {
  if (x.dtype() == compute_dtype<T>()) return x;
  scratch = x.astype(compute_dtype<T>());
  return scratch;
}
// Widen f16/bf16 to f32 (f32 is returned unchanged); the result dtype is restored by the caller.
inline Tensor as_f32(const Tensor& x) {
  return as_compute<float>(x);
}
inline const Tensor& f32_ref(const Tensor& x, Tensor& scratch) {
  return compute_ref<float>(x, scratch);
}
// y (computed in f32 or f64) as `dtype`: rounded once, or moved when it already is.
inline Tensor restore(Tensor&& y, DType dtype) {
  return y.dtype() == dtype ? std::move(y) : y.astype(dtype);
}
// Calls fn(values) with x's elements as a pointer that orders them exactly: i64 and u64 natively
// (as doubles, values beyond 2^53 would merge), every other dtype as f64 (exact for each).
template <typename Fn>
void with_ordered_values(const Tensor& x, Fn&& fn) {
  if (x.dtype() == DType::i64)
    fn(x.data<std::int64_t>());
  else if (x.dtype() == DType::u64)
    fn(x.data<std::uint64_t>());
  else
    fn(x.to_doubles().data());
}

std::string list_to_string(const std::vector<std::int64_t>& values);
std::string list_to_string(const std::vector<int>& values);

// Iterates an output shape in maximal contiguous rows over N broadcast inputs. fn(out_offset,
// in_offsets, in_row_strides, row_length) is called once per row; in_row_strides[i] is 1 or 0
// (broadcast along the row). Dimensions where every operand has the same real/broadcast
// pattern are merged, so equal shapes give a single row.
template <std::size_t N, typename Fn>
void broadcast_rows(const Shape& out, const std::array<const Shape*, N>& ins, Fn&& fn) {
  const std::int64_t total = out.element_count();
  if (total == 0) return;
  // Collapse into at most kMaxRank merged dims.
  std::array<std::int64_t, kMaxRank> dims{};
  std::array<std::array<std::int64_t, kMaxRank>, N> strides{};
  std::array<std::int64_t, N> running{};
  running.fill(1);
  std::array<bool, N> last_real{};
  int m = 0;
  for (int d = 0; d < out.rank(); ++d) {
    const std::int64_t size = out[d];
    if (size == 1) {
      for (std::size_t i = 0; i < N; ++i) running[i] *= ins[i]->dim_or_one(d);
      continue;
    }
    std::array<bool, N> real{};
    for (std::size_t i = 0; i < N; ++i) real[i] = ins[i]->dim_or_one(d) != 1;
    const bool mergeable = m > 0 && real == last_real;
    if (mergeable) {
      dims[static_cast<std::size_t>(m - 1)] *= size;
    } else {
      for (std::size_t i = 0; i < N; ++i)
        strides[i][static_cast<std::size_t>(m)] = real[i] ? running[i] : 0;
      dims[static_cast<std::size_t>(m)] = size;
      ++m;
    }
    for (std::size_t i = 0; i < N; ++i) running[i] *= ins[i]->dim_or_one(d);
    last_real = real;
  }
  if (m == 0) {  // every dim is 1: one element
    std::array<std::int64_t, N> off{}, st{};
    fn(std::int64_t{0}, off, st, std::int64_t{1});
    return;
  }
  std::array<std::int64_t, N> row_stride{};
  for (std::size_t i = 0; i < N; ++i) row_stride[i] = strides[i][0];
  const std::int64_t row = dims[0];
  std::array<std::int64_t, kMaxRank> idx{};
  std::array<std::int64_t, N> off{};
  for (std::int64_t out_off = 0; out_off < total; out_off += row) {
    fn(out_off, off, row_stride, row);
    for (int d = 1; d < m; ++d) {
      const auto du = static_cast<std::size_t>(d);
      ++idx[du];
      for (std::size_t i = 0; i < N; ++i) off[i] += strides[i][du];
      if (idx[du] < dims[du]) break;
      for (std::size_t i = 0; i < N; ++i) off[i] -= strides[i][du] * dims[du];
      idx[du] = 0;
    }
  }
}

// Product of dims [begin, end) of a shape.
inline std::int64_t dims_product(const Shape& s, int begin, int end) {
  std::int64_t p = 1;
  for (int d = begin; d < end; ++d) p *= s[d];
  return p;
}

}  // namespace tessera::ops::detail
