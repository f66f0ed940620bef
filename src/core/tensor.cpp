#include "tessera/core/tensor.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <new>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tessera {

namespace {

// Element count of a shape, with a UserError (not an overflow or a bad_alloc later) when the
// storage could never be allocated.
std::size_t checked_count(const Shape& shape, DType dtype) {
  std::int64_t count = 1;
  for (int d = 0; d < shape.rank(); ++d)
    if (__builtin_mul_overflow(count, shape[d], &count) || count > (std::int64_t{1} << 46))
      throw_user_error("a {} tensor of shape {} is too large to hold in host memory",
                       dtype_name(dtype), shape.to_string());
  return static_cast<std::size_t>(count);
}

std::vector<std::byte> allocate(const Shape& shape, DType dtype) {
  const std::size_t bytes = checked_count(shape, dtype) * dtype_size(dtype);
  try {
    return std::vector<std::byte>(bytes);
  } catch (const std::bad_alloc&) {
    throw_user_error("cannot allocate {} bytes for a {} tensor of shape {} on the host", bytes,
                     dtype_name(dtype), shape.to_string());
  }
}

template <typename To, typename From>
void convert_elements(const From* in, To* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = convert_value<To>(in[i]);
}

// An integer element as (negative, its value as 64 two's-complement bits): two integers of any
// dtypes are equal exactly when these are, where doubles would merge values beyond 2^53.
std::pair<bool, std::uint64_t> exact_integer(const void* data, DType type, std::size_t index) {
  return dispatch_dtype(type, [&](auto tag) -> std::pair<bool, std::uint64_t> {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, static_cast<const char*>(data) + index * sizeof(T), sizeof(T));
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
      return {v < 0, static_cast<std::uint64_t>(static_cast<std::int64_t>(v))};
    else if constexpr (std::is_integral_v<T>)
      return {false, static_cast<std::uint64_t>(v)};
    else
      throw_internal_error("exact_integer: {} is not an integer dtype", dtype_name(type));
  });
}

}  // namespace

Tensor::Tensor() : storage_(sizeof(float)) {}

Tensor::Tensor(DType dtype, const Shape& shape)
    : dtype_(dtype), shape_(shape), storage_(allocate(shape, dtype)) {}

Tensor Tensor::full(DType dtype, const Shape& shape, double value) {
  Tensor t(dtype, shape);
  if (t.element_count() == 0) return t;
  t.set(0, value);
  const std::size_t es = dtype_size(dtype);
  for (std::size_t i = 1; i < static_cast<std::size_t>(t.element_count()); ++i)
    std::memcpy(t.storage_.data() + i * es, t.storage_.data(), es);
  return t;
}

Tensor Tensor::from_vector(const Shape& shape, const std::vector<float>& values, DType dtype) {
  if (static_cast<std::int64_t>(values.size()) != shape.element_count())
    throw_user_error("Tensor::from_vector: {} values given for shape {} which holds {} elements",
                     values.size(), shape.to_string(), shape.element_count());
  Tensor t(dtype, shape);
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    convert_elements(values.data(), reinterpret_cast<T*>(t.storage_.data()), values.size());
  });
  return t;
}

Tensor Tensor::from_doubles(DType dtype, const Shape& shape, const std::vector<double>& values) {
  if (static_cast<std::int64_t>(values.size()) != shape.element_count())
    throw_user_error("Tensor::from_doubles: {} values given for shape {} which holds {} elements",
                     values.size(), shape.to_string(), shape.element_count());
  Tensor t(dtype, shape);
  for (std::size_t i = 0; i < values.size(); ++i)
    store_from_double(t.storage_.data(), dtype, i, values[i]);
  return t;
}

Tensor Tensor::from_ints(DType dtype, const Shape& shape, const std::vector<std::int64_t>& values) {
  if (static_cast<std::int64_t>(values.size()) != shape.element_count())
    throw_user_error("Tensor::from_ints: {} values given for shape {} which holds {} elements",
                     values.size(), shape.to_string(), shape.element_count());
  Tensor t(dtype, shape);
  dispatch_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    convert_elements(values.data(), reinterpret_cast<T*>(t.storage_.data()), values.size());
  });
  return t;
}

Tensor Tensor::from_bytes(DType dtype, const Shape& shape, std::span<const std::byte> bytes) {
  const std::size_t expected = checked_count(shape, dtype) * dtype_size(dtype);
  if (bytes.size() != expected)
    throw_user_error(
        "Tensor::from_bytes: {} bytes given for a {} tensor of shape {}, which needs "
        "{} bytes",
        bytes.size(), dtype_name(dtype), shape.to_string(), expected);
  Tensor t(dtype, shape);
  if (!bytes.empty()) std::memcpy(t.storage_.data(), bytes.data(), bytes.size());
  if (dtype == DType::boolean)  // any nonzero byte is true; keep bools canonical
    for (auto& b : t.storage_) b = b != std::byte{0} ? std::byte{1} : std::byte{0};
  return t;
}

void Tensor::throw_storage_type_error(const char* what) const {
  throw_user_error(
      "Tensor::{}<T>: the tensor holds {} but T is not its storage type (use the "
      "storage type of {}, or at<T>() / astype() to convert)",
      what, dtype_name(dtype_), dtype_name(dtype_));
}

std::size_t Tensor::checked_index(std::int64_t flat) const {
  if (flat < 0 || flat >= element_count())
    throw_user_error("Tensor element index {} is out of range for shape {} ({} elements)", flat,
                     shape_.to_string(), element_count());
  return static_cast<std::size_t>(flat);
}

std::int64_t Tensor::flat_index(std::initializer_list<std::int64_t> index) const {
  if (static_cast<int>(index.size()) != rank())
    throw_user_error("Tensor index has {} entries but the tensor has rank {} (shape {})",
                     index.size(), rank(), shape_.to_string());
  std::int64_t flat = 0, stride = 1;
  int d = 0;
  for (std::int64_t i : index) {
    if (i < 0 || i >= shape_[d])
      throw_user_error("Tensor index {} of dimension {} is out of range for shape {}", i, d,
                       shape_.to_string());
    flat += i * stride;
    stride *= shape_[d];
    ++d;
  }
  return flat;
}

void Tensor::set(std::int64_t flat, double value) {
  store_from_double(storage_.data(), dtype_, checked_index(flat), value);
}

std::vector<float> Tensor::to_floats() const {
  std::vector<float> out(static_cast<std::size_t>(element_count()));
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    convert_elements(reinterpret_cast<const T*>(storage_.data()), out.data(), out.size());
  });
  return out;
}

std::vector<double> Tensor::to_doubles() const {
  std::vector<double> out(static_cast<std::size_t>(element_count()));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = load_as_double(storage_.data(), dtype_, i);
  return out;
}

std::vector<std::int64_t> Tensor::to_ints() const {
  std::vector<std::int64_t> out(static_cast<std::size_t>(element_count()));
  dispatch_dtype(dtype_, [&](auto tag) {
    using T = decltype(tag);
    convert_elements(reinterpret_cast<const T*>(storage_.data()), out.data(), out.size());
  });
  return out;
}

Tensor Tensor::reshape(const Shape& shape) const {
  Tensor t = *this;
  t.reshape_in_place(shape);
  return t;
}

void Tensor::reshape_in_place(const Shape& shape) {
  if (shape.element_count() != element_count())
    throw_user_error(
        "reshape: cannot view a tensor of shape {} ({} elements) as shape {} ({} "
        "elements); the element counts must match",
        shape_.to_string(), element_count(), shape.to_string(), shape.element_count());
  shape_ = shape;
}

Tensor Tensor::astype(DType dtype) const {
  if (dtype == dtype_) return *this;
  Tensor out(dtype, shape_);
  const auto n = static_cast<std::size_t>(element_count());
  dispatch_dtype(dtype_, [&](auto in_tag) {
    using In = decltype(in_tag);
    dispatch_dtype(dtype, [&](auto out_tag) {
      using Out = decltype(out_tag);
      convert_elements(reinterpret_cast<const In*>(storage_.data()),
                       reinterpret_cast<Out*>(out.storage_.data()), n);
    });
  });
  return out;
}

std::string Tensor::to_string(std::int64_t max_elements) const {
  std::string s = fmt::format("{}{}[", dtype_name(dtype_), shape_.to_string());
  const std::int64_t n = std::min(element_count(), max_elements);
  for (std::int64_t i = 0; i < n; ++i) {
    if (i) s += ", ";
    s += format_element(i);
  }
  if (n < element_count()) s += ", ...";
  return s + "]";
}

std::string Tensor::format_element(std::int64_t flat) const {
  const std::size_t i = checked_index(flat);
  return dispatch_dtype(dtype_, [&](auto tag) -> std::string {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, storage_.data() + i * sizeof(T), sizeof(T));
    if constexpr (std::is_same_v<T, bool>)
      return v ? "1" : "0";
    else if constexpr (std::is_integral_v<T>)
      return fmt::format("{}", v);  // exact, also beyond 2^53
    else
      return fmt::format("{}", static_cast<double>(convert_value<double>(v)));
  });
}

bool equal(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::equal(a.raw().begin(), a.raw().end(), b.raw().begin(), b.raw().end());
}

CompareResult compare(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  CompareResult r;
  if (!(actual.shape() == expected.shape())) {
    r.ok = false;
    r.mismatches = std::max(actual.element_count(), expected.element_count());
    r.message = fmt::format("shape {} differs from the expected shape {}",
                            actual.shape().to_string(), expected.shape().to_string());
    return r;
  }
  const auto n = static_cast<std::size_t>(actual.element_count());
  // Integers against integers compare exactly (64-bit values beyond 2^53 would merge in f64).
  const bool integers = !is_floating(actual.dtype()) && !is_floating(expected.dtype());
  for (std::size_t i = 0; i < n; ++i) {
    const double x = load_as_double(actual.raw_data(), actual.dtype(), i);
    const double y = load_as_double(expected.raw_data(), expected.dtype(), i);
    bool good;
    if (integers) {
      good = exact_integer(actual.raw_data(), actual.dtype(), i) ==
             exact_integer(expected.raw_data(), expected.dtype(), i);
      if (!good) {
        r.max_abs_error = std::max(r.max_abs_error, std::fabs(x - y));
        if (y != 0.0) r.max_rel_error = std::max(r.max_rel_error, std::fabs(x - y) / std::fabs(y));
      }
    } else if (std::isnan(x) || std::isnan(y)) {
      good = std::isnan(x) && std::isnan(y);
    } else if (std::isinf(x) || std::isinf(y)) {
      good = x == y;
    } else {
      const double err = std::fabs(x - y);
      r.max_abs_error = std::max(r.max_abs_error, err);
      if (y != 0.0) r.max_rel_error = std::max(r.max_rel_error, err / std::fabs(y));
      good = err <= atol + rtol * std::fabs(y);
    }
    if (!good) {
      if (r.mismatches == 0)
        r.message = fmt::format("element {} is {} but {} was expected (rtol {}, atol {})", i,
                                actual.format_element(static_cast<std::int64_t>(i)),
                                expected.format_element(static_cast<std::int64_t>(i)), rtol, atol);
      ++r.mismatches;
    }
  }
  r.ok = r.mismatches == 0;
  if (!r.ok)
    r.message += fmt::format("; {} of {} elements differ, max abs error {}", r.mismatches, n,
                             r.max_abs_error);
  return r;
}

bool allclose(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  return compare(actual, expected, rtol, atol).ok;
}

// ---------------------------------------------------------------------------------------------
// NumPy .npy: magic "\x93NUMPY", version, header length (2 bytes in 1.0, 4 in 2.0/3.0), then a
// Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)} padded to 64 bytes.

namespace {

struct NpyType {
  DType dtype;
  int width;  // bytes per element in the file: dtype_size(dtype), every NumPy type maps exactly
  char kind;  // 'f', 'i', 'u', 'b'
};

[[noreturn]] void npy_error(const std::string& name, const std::string& what) {
  throw_user_error("{}: not a valid .npy file that Tessera reads: {}", name, what);
}

std::string dict_value(const std::string& header, const std::string& key, const std::string& name) {
  const std::string quoted1 = "'" + key + "'", quoted2 = "\"" + key + "\"";
  auto pos = header.find(quoted1);
  if (pos == std::string::npos) pos = header.find(quoted2);
  if (pos == std::string::npos) npy_error(name, fmt::format("the header has no '{}' entry", key));
  pos = header.find(':', pos);
  if (pos == std::string::npos) npy_error(name, fmt::format("'{}' has no value", key));
  ++pos;
  while (pos < header.size() && header[pos] == ' ') ++pos;
  if (pos >= header.size()) npy_error(name, fmt::format("'{}' has no value", key));
  std::size_t end;
  if (header[pos] == '(') {
    end = header.find(')', pos);
    if (end == std::string::npos) npy_error(name, "the shape tuple is not closed");
    return header.substr(pos, end - pos + 1);
  }
  if (header[pos] == '\'' || header[pos] == '"') {
    end = header.find(header[pos], pos + 1);
    if (end == std::string::npos) npy_error(name, fmt::format("'{}' string is not closed", key));
    return header.substr(pos + 1, end - pos - 1);
  }
  end = header.find_first_of(",}", pos);
  if (end == std::string::npos) npy_error(name, fmt::format("'{}' value is not terminated", key));
  std::string v = header.substr(pos, end - pos);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

NpyType parse_descr(const std::string& descr, const std::string& name) {
  if (descr.size() < 3) npy_error(name, fmt::format("unknown dtype descr '{}'", descr));
  const char order = descr[0];
  if (order == '>' && descr.substr(2) != "1")
    npy_error(name, fmt::format("dtype '{}' is big-endian; save it little-endian "
                                "(arr.astype(arr.dtype.newbyteorder('<')))",
                                descr));
  if (order != '<' && order != '|' && order != '=' && order != '>')
    npy_error(name, fmt::format("unknown dtype descr '{}'", descr));
  const std::string code = descr.substr(1);
  if (code == "f4") return {DType::f32, 4, 'f'};
  if (code == "f2") return {DType::f16, 2, 'f'};
  if (code == "f8") return {DType::f64, 8, 'f'};
  if (code == "i4") return {DType::i32, 4, 'i'};
  if (code == "u4") return {DType::u32, 4, 'u'};
  if (code == "i2") return {DType::i16, 2, 'i'};
  if (code == "u2") return {DType::u16, 2, 'u'};
  if (code == "i1") return {DType::i8, 1, 'i'};
  if (code == "u1") return {DType::u8, 1, 'u'};
  if (code == "b1") return {DType::boolean, 1, 'b'};
  if (code == "i8") return {DType::i64, 8, 'i'};
  if (code == "u8") return {DType::u64, 8, 'u'};
  npy_error(name, fmt::format("dtype '{}' has no Tessera equivalent (supported: f4 f2 f8 i4 u4 "
                              "i2 u2 i1 u1 b1 i8 u8)",
                              descr));
}

std::vector<std::int64_t> parse_shape_tuple(const std::string& tuple, const std::string& name) {
  std::vector<std::int64_t> dims;
  std::size_t i = 1;
  while (i < tuple.size()) {
    while (i < tuple.size() && (tuple[i] == ' ' || tuple[i] == ',')) ++i;
    if (i >= tuple.size() || tuple[i] == ')') break;
    if (tuple[i] < '0' || tuple[i] > '9')
      npy_error(name, fmt::format("shape '{}' is not a tuple of sizes", tuple));
    std::int64_t v = 0;
    while (i < tuple.size() && tuple[i] >= '0' && tuple[i] <= '9') {
      v = v * 10 + (tuple[i] - '0');
      if (v > (std::int64_t{1} << 40))
        npy_error(name, fmt::format("shape '{}' is too large", tuple));
      ++i;
    }
    dims.push_back(v);
  }
  return dims;
}

std::string npy_descr(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "<f4";
    case DType::bf16:
      return "<f4";  // NumPy has no bfloat16; widened exactly
    case DType::f16:
      return "<f2";
    case DType::i32:
      return "<i4";
    case DType::u32:
      return "<u4";
    case DType::i16:
      return "<i2";
    case DType::u16:
      return "<u2";
    case DType::i8:
      return "|i1";
    case DType::u8:
      return "|u1";
    case DType::boolean:
      return "|b1";
    case DType::i64:
      return "<i8";
    case DType::u64:
      return "<u8";
    case DType::f64:
      return "<f8";
  }
  throw_internal_error("npy_descr: unknown dtype {}", static_cast<int>(dtype));
}

}  // namespace

Tensor decode_npy(std::span<const std::byte> bytes, const std::string& name) {
  static constexpr unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    npy_error(name, "it does not start with the \\x93NUMPY magic");
  const auto u8 = [&](std::size_t i) { return static_cast<std::uint32_t>(bytes[i]); };
  const std::uint32_t major = u8(6);
  std::size_t header_len, header_start;
  if (major == 1) {
    header_len = u8(8) | (u8(9) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) npy_error(name, "the file ends inside its preamble");
    header_len = u8(8) | (u8(9) << 8) | (u8(10) << 16) | (u8(11) << 24);
    header_start = 12;
  } else {
    npy_error(name,
              fmt::format("format version {}.{} is unknown (1.0-3.0 are read)", major, u8(7)));
  }
  if (header_start + header_len > bytes.size()) npy_error(name, "the file ends inside its header");
  const std::string header(reinterpret_cast<const char*>(bytes.data()) + header_start, header_len);
  const NpyType type = parse_descr(dict_value(header, "descr", name), name);
  const std::string fortran = dict_value(header, "fortran_order", name);
  if (fortran != "True" && fortran != "False")
    npy_error(name, fmt::format("fortran_order is '{}', expected True or False", fortran));
  const std::vector<std::int64_t> dims = parse_shape_tuple(dict_value(header, "shape", name), name);
  if (dims.size() > static_cast<std::size_t>(kMaxRank))
    npy_error(name, fmt::format("the array has {} dimensions; Tessera tensors have at most {}",
                                dims.size(), kMaxRank));
  // C order lists dims outermost first; Fortran order stores the first NumPy axis fastest.
  const bool is_fortran = fortran == "True";
  const Shape file_shape =
      is_fortran ? Shape::from_fastest_first(dims) : Shape::from_outer_first(dims);
  const auto count = static_cast<std::size_t>(file_shape.element_count());
  const std::size_t data_start = header_start + header_len;
  if (bytes.size() - data_start != count * static_cast<std::size_t>(type.width))
    npy_error(name, fmt::format("the data holds {} bytes but shape {} of {}-byte elements needs {}",
                                bytes.size() - data_start, fmt::join(dims, "x"), type.width,
                                count * static_cast<std::size_t>(type.width)));
  const std::byte* data = bytes.data() + data_start;
  Tensor t(type.dtype, file_shape);
  if (count) std::memcpy(t.raw_data(), data, count * static_cast<std::size_t>(type.width));
  if (type.dtype == DType::boolean)
    for (auto& b : t.raw()) b = b != std::byte{0} ? std::byte{1} : std::byte{0};
  if (!is_fortran) return t;
  // Fortran order: the buffer is fastest-first over the NumPy axes; reverse to Tessera order.
  const Shape shape = Shape::from_outer_first(dims);
  Tensor out(type.dtype, shape);
  const int r = shape.rank();
  const std::size_t es = dtype_size(type.dtype);
  const Strides in_strides(file_shape);
  std::array<std::int64_t, kMaxRank> idx{};
  for (std::size_t flat = 0; flat < count; ++flat) {
    std::int64_t src = 0;
    for (int d = 0; d < r; ++d) src += idx[static_cast<std::size_t>(d)] * in_strides[r - 1 - d];
    std::memcpy(static_cast<std::byte*>(out.raw_data()) + flat * es,
                static_cast<const std::byte*>(t.raw_data()) + static_cast<std::size_t>(src) * es,
                es);
    for (int d = 0; d < r; ++d) {
      if (++idx[static_cast<std::size_t>(d)] < shape[d]) break;
      idx[static_cast<std::size_t>(d)] = 0;
    }
  }
  return out;
}

Tensor load_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_user_error("{}: cannot open the .npy file for reading", path);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return decode_npy(std::as_bytes(std::span<const char>(chars)), path);
}

std::vector<std::byte> encode_npy(const Tensor& tensor) {
  const Tensor& t = tensor.dtype() == DType::bf16 ? tensor.astype(DType::f32) : tensor;
  std::string shape;
  for (std::int64_t d : t.shape().outer_first()) shape += fmt::format("{}, ", d);
  // NumPy writes "(2, 3)", "(3,)" and "()".
  if (t.rank() > 1) shape.resize(shape.size() - 2);
  if (t.rank() == 1) shape.pop_back();
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                                   npy_descr(t.dtype()), shape);
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<std::byte> out;
  out.reserve(10 + header.size() + t.bytes());
  const unsigned char pre[] = {0x93,
                               'N',
                               'U',
                               'M',
                               'P',
                               'Y',
                               1,
                               0,
                               static_cast<unsigned char>(header.size() & 0xff),
                               static_cast<unsigned char>(header.size() >> 8)};
  for (unsigned char c : pre) out.push_back(static_cast<std::byte>(c));
  for (char c : header) out.push_back(static_cast<std::byte>(c));
  out.insert(out.end(), t.raw().begin(), t.raw().end());
  return out;
}

void save_npy(const Tensor& tensor, const std::string& path) {
  const std::vector<std::byte> bytes = encode_npy(tensor);
  std::ofstream out(path, std::ios::binary);
  if (!out) throw_user_error("{}: cannot open the .npy file for writing", path);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out)
    throw_user_error("{}: writing the .npy file failed (disk full or no permission?)", path);
}

}  // namespace tessera
