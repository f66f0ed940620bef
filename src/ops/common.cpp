#include "common.h"

#include <algorithm>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tessera/ops/reference.h"

namespace tessera::ops::detail {

int normalize_axis(std::string_view op, int axis, int rank, const Shape& shape) {
  if (axis < -rank || axis >= rank)
    throw_user_error(
        "{}: axis {} is out of range for an input of rank {} (shape {}, dimension 0 "
        "fastest); expected an axis in [{}, {}]",
        op, axis, rank, shape.to_string(), -rank, rank - 1);
  return axis < 0 ? axis + rank : axis;
}

std::vector<int> normalize_axes(std::string_view op, const std::vector<int>& axes, int rank,
                                const Shape& shape) {
  std::vector<int> out;
  out.reserve(axes.size());
  for (int a : axes) {
    const int n = normalize_axis(op, a, rank, shape);
    if (std::find(out.begin(), out.end(), n) != out.end())
      throw_user_error("{}: axis {} is listed twice in axes {} (shape {})", op, n,
                       list_to_string(axes), shape.to_string());
    out.push_back(n);
  }
  return out;
}

void require_float(std::string_view op, const Tensor& x, std::string_view input) {
  if (!is_floating(x.dtype()))
    throw_user_error("{}: {} has dtype {} but this op takes f32, f16 or bf16; Cast it first", op,
                     input, dtype_name(x.dtype()));
}

void require_same_dtype(std::string_view op, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype())
    throw_user_error(
        "{}: inputs have different dtypes {} (shape {}) and {} (shape {}); Cast one "
        "of them so both match",
        op, dtype_name(a.dtype()), a.shape().to_string(), dtype_name(b.dtype()),
        b.shape().to_string());
}

std::string list_to_string(const std::vector<std::int64_t>& values) {
  return fmt::format("[{}]", fmt::join(values, ", "));
}

std::string list_to_string(const std::vector<int>& values) {
  return fmt::format("[{}]", fmt::join(values, ", "));
}

}  // namespace tessera::ops::detail

namespace tessera::ops {

Scalar Scalar::of(const Tensor& t, std::int64_t index) {
  if (index < 0 || index >= t.element_count())
    throw_user_error("scalar operand: element {} is outside the tensor {} ({} elements)", index,
                     t.shape().to_string(), t.element_count());
  return dispatch_dtype(t.dtype(), [&](auto tag) -> Scalar {
    using T = decltype(tag);
    const T v = t.data<T>()[index];
    if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>)
      return Scalar(static_cast<double>(static_cast<float>(v)));
    else
      return Scalar(v);
  });
}

Tensor Scalar::to_tensor(DType dtype) const {
  Tensor out(dtype, Shape{});
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    out.data<T>()[0] = as<T>();
  });
  return out;
}

std::string Scalar::to_string() const {
  switch (kind_) {
    case Kind::signed_int:
      return fmt::format("{}", i_);
    case Kind::unsigned_int:
      return fmt::format("{}", u_);
    case Kind::floating:
      break;
  }
  return fmt::format("{}", f_);
}

}  // namespace tessera::ops
