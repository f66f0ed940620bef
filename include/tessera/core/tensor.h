// A host tensor: a dtype, a shape (dimension 0 fastest, as core/shape.h) and dense contiguous
// storage owned by value (copies are deep). It is what the reference ops compute on, what tests
// compare against, and what the runtime copies to and from device buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/core/dtype.h"
#include "tessera/core/error.h"
#include "tessera/core/shape.h"

namespace tessera {

class Tensor {
 public:
  Tensor();                                 // an f32 scalar holding 0
  Tensor(DType dtype, const Shape& shape);  // zero-filled

  static Tensor zeros(DType dtype, const Shape& shape) { return Tensor(dtype, shape); }
  // Every element set to `value`, converted as store_from_double does (saturating, RNE).
  static Tensor full(DType dtype, const Shape& shape, double value);
  // Values listed in storage order (dimension 0 fastest), converted to `dtype` with RNE and
  // saturation. UserError when the count differs from the shape's element count.
  static Tensor from_vector(const Shape& shape, const std::vector<float>& values,
                            DType dtype = DType::f32);
  static Tensor from_doubles(DType dtype, const Shape& shape, const std::vector<double>& values);
  static Tensor from_ints(DType dtype, const Shape& shape, const std::vector<std::int64_t>& values);
  // Raw little-endian bytes in storage order; UserError when the size is not exactly
  // element_count * dtype_size.
  static Tensor from_bytes(DType dtype, const Shape& shape, std::span<const std::byte> bytes);
  static Tensor scalar(DType dtype, double value) { return full(dtype, Shape{}, value); }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  std::int64_t dim(int d) const { return shape_[d]; }
  std::int64_t element_count() const { return shape_.element_count(); }
  std::size_t bytes() const { return storage_.size(); }
  std::span<const std::byte> raw() const { return storage_; }
  std::span<std::byte> raw() { return storage_; }
  void* raw_data() { return storage_.data(); }
  const void* raw_data() const { return storage_.data(); }

  // Typed pointer to the storage; T must be the storage type of dtype() (float for f32, f16 for
  // f16, bool for boolean, ...), otherwise UserError.
  template <typename T>
  T* data() {
    check_storage_type<T>("data");
    return reinterpret_cast<T*>(storage_.data());
  }
  template <typename T>
  const T* data() const {
    check_storage_type<T>("data");
    return reinterpret_cast<const T*>(storage_.data());
  }
  template <typename T>
  std::span<T> span() {
    return {data<T>(), static_cast<std::size_t>(element_count())};
  }
  template <typename T>
  std::span<const T> span() const {
    return {data<T>(), static_cast<std::size_t>(element_count())};
  }

  // Element `flat` (storage order) read as T whatever the dtype, converted as astype does
  // (so 64-bit integers read as std::int64_t stay exact); UserError when out of range.
  template <typename T = float>
  T at(std::int64_t flat) const {
    const std::size_t i = checked_index(flat);
    T out{};
    dispatch_dtype(dtype_, [&](auto tag) {
      using S = decltype(tag);
      S v;
      std::memcpy(&v, storage_.data() + i * sizeof(S), sizeof(S));
      out = convert_value<T>(v);
    });
    return out;
  }
  // Element at a multi-index listed fastest dimension first (one entry per dimension).
  template <typename T = float>
  T at(std::initializer_list<std::int64_t> index) const {
    return at<T>(flat_index(index));
  }
  // Writes element `flat`, converting as store_from_double does.
  void set(std::int64_t flat, double value);
  void set(std::initializer_list<std::int64_t> index, double value) {
    set(flat_index(index), value);
  }
  std::int64_t flat_index(std::initializer_list<std::int64_t> index) const;

  // All elements converted to f32 / f64 / i64, in storage order.
  std::vector<float> to_floats() const;
  std::vector<double> to_doubles() const;
  std::vector<std::int64_t> to_ints() const;

  // Same data, new shape with the same element count (UserError otherwise).
  Tensor reshape(const Shape& shape) const;
  void reshape_in_place(const Shape& shape);
  // Converting copy: floats narrow with round-to-nearest-even, float to integer rounds to
  // nearest even and saturates (NaN -> 0), integers saturate, anything nonzero -> true.
  Tensor astype(DType dtype) const;

  std::string to_string(std::int64_t max_elements = 16) const;  // "f32(3, 2)[1, 2, ...]"
  // Element `flat` as text: integers exactly (also beyond 2^53), floats as their f64 value.
  std::string format_element(std::int64_t flat) const;

 private:
  template <typename T>
  void check_storage_type(const char* what) const {
    bool ok = false;
    dispatch_dtype(dtype_,
                   [&](auto tag) { ok = std::is_same_v<std::remove_cv_t<T>, decltype(tag)>; });
    if (!ok) throw_storage_type_error(what);
  }
  [[noreturn]] void throw_storage_type_error(const char* what) const;
  std::size_t checked_index(std::int64_t flat) const;

  DType dtype_ = DType::f32;
  Shape shape_;
  std::vector<std::byte> storage_;
};

// Exactly the same dtype, shape and bytes (NaNs compare by bit pattern).
bool equal(const Tensor& a, const Tensor& b);

// The outcome of comparing a result against an expected tensor, element by element in f64.
struct CompareResult {
  bool ok = true;               // same shape and every element within tolerance
  std::string message;          // empty when ok; otherwise the first mismatch and its values
  std::int64_t mismatches = 0;  // elements out of tolerance
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;
};
// |a - b| <= atol + rtol * |b| per element; NaN matches NaN, inf matches the same inf.
// Dtypes may differ (both are read as f64); shapes must be equal.
CompareResult compare(const Tensor& actual, const Tensor& expected, double rtol = 1e-5,
                      double atol = 1e-6);
bool allclose(const Tensor& actual, const Tensor& expected, double rtol = 1e-5, double atol = 1e-6);

// NumPy .npy files (format versions 1.0-3.0). Reading accepts little-endian or byte-order-free
// f8 f4 f2 i8 u8 i4 u4 i2 u2 i1 u1 b1 (each its own dtype), C or Fortran order, rank 0..8. Writing
// uses C order; bf16 has no NumPy dtype and is written as exact f32. Malformed files raise
// UserError naming the file.
Tensor load_npy(const std::string& path);
void save_npy(const Tensor& tensor, const std::string& path);
Tensor decode_npy(std::span<const std::byte> bytes, const std::string& name = "<memory>");
std::vector<std::byte> encode_npy(const Tensor& tensor);

}  // namespace tessera
