#include "tessera/core/dtype.h"

#include <cstring>

#include "tessera/core/error.h"

namespace tessera {

std::size_t dtype_size(DType type) {
  return dispatch_dtype(type, [](auto tag) { return sizeof(tag); });
}

std::string_view dtype_name(DType type) {
  switch (type) {
    case DType::f32:
      return "f32";
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::i32:
      return "i32";
    case DType::u32:
      return "u32";
    case DType::i16:
      return "i16";
    case DType::u16:
      return "u16";
    case DType::i8:
      return "i8";
    case DType::u8:
      return "u8";
    case DType::boolean:
      return "bool";
    case DType::i64:
      return "i64";
    case DType::u64:
      return "u64";
    case DType::f64:
      return "f64";
  }
  throw_internal_error("unknown DType {}", static_cast<int>(type));
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == name) return t;
  return std::nullopt;
}

bool is_floating(DType type) {
  return type == DType::f32 || type == DType::f16 || type == DType::bf16 || type == DType::f64;
}

bool is_signed(DType type) {
  return is_floating(type) || type == DType::i64 || type == DType::i32 || type == DType::i16 ||
         type == DType::i8;
}

double load_as_double(const void* data, DType type, std::size_t index) {
  return dispatch_dtype(type, [&](auto tag) -> double {
    using T = decltype(tag);
    T value;
    std::memcpy(&value, static_cast<const char*>(data) + index * sizeof(T), sizeof(T));
    if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>)
      return static_cast<float>(value);
    else
      return static_cast<double>(value);
  });
}

void store_from_double(void* data, DType type, std::size_t index, double value) {
  dispatch_dtype(type, [&](auto tag) {
    using T = decltype(tag);
    T out;
    if constexpr (std::is_floating_point_v<T>)
      out = static_cast<T>(value);
    else if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>)
      out = T(static_cast<float>(value));
    else if constexpr (std::is_same_v<T, bool>)
      out = value != 0.0;
    else
      out = saturate_cast<T>(value);
    std::memcpy(static_cast<char*>(data) + index * sizeof(T), &out, sizeof(T));
  });
}

}  // namespace tessera
