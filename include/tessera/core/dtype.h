// Element types shared by every target, and conversions between them.
// Float narrowing rounds to nearest even; integer conversions from wider types either wrap
// (the C rule) or saturate (`saturate_cast`), as each target's spec says. The 64-bit types
// (ONNX's INT64, UINT64, DOUBLE) exist on the host and the reference backend; device backends
// narrow them only where the values provably fit (compiler/narrow.h).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>

namespace tessera {

// New types go at the end: the numbering is stable (model files store names, but tools and
// tests may keep the numbers).
enum class DType : std::uint8_t { f32, f16, bf16, i32, u32, i16, u16, i8, u8, boolean, i64, u64, f64 };

inline constexpr DType kAllDTypes[] = {DType::f32, DType::f16, DType::bf16, DType::i32,
                                       DType::u32, DType::i16, DType::u16,  DType::i8,
                                       DType::u8,  DType::boolean, DType::i64, DType::u64,
                                       DType::f64};

std::size_t dtype_size(DType type);
std::string_view dtype_name(DType type);  // "f32", "bf16", "bool", ...
std::optional<DType> parse_dtype(std::string_view name);
bool is_floating(DType type);
bool is_signed(DType type);
// i64, u64 and f64: the types device backends lack (compiler/narrow.h decides where they narrow).
inline bool is_64bit(DType type) {
  return type == DType::i64 || type == DType::u64 || type == DType::f64;
}
// The 32-bit type a 64-bit type narrows to on a device (i64 -> i32, u64 -> u32, f64 -> f32);
// other types are returned unchanged.
inline DType narrowed_dtype(DType type) {
  switch (type) {
    case DType::i64: return DType::i32;
    case DType::u64: return DType::u32;
    case DType::f64: return DType::f32;
    default: return type;
  }
}

// ---- f16 and bf16 bit conversions (round to nearest even, NaN stays NaN) ----

inline std::uint16_t f32_to_f16_bits(float value) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u)  // inf or NaN; NaN keeps its top payload bits and stays quiet
    return static_cast<std::uint16_t>(sign | 0x7c00u |
                                      (x > 0x7f800000u ? 0x200u | ((x >> 13) & 0x3ffu) : 0u));
  if (x >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  if (x < 0x38800000u) {
    // Below 2^-14 the result is subnormal: adding 0.5 aligns the f16 ulp (2^-24) with the
    // f32 ulp at 0.5, so the FPU's round-to-nearest-even does the rounding.
    const float shifted = std::bit_cast<float>(x) + 0.5f;
    return static_cast<std::uint16_t>(sign | (std::bit_cast<std::uint32_t>(shifted) - 0x3f000000u));
  }
  const std::uint32_t odd = (x >> 13) & 1u;
  x += 0xc8000fffu + odd;  // rebias the exponent by -112 and round half to even
  return static_cast<std::uint16_t>(sign | (x >> 13));
}

inline float f16_bits_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;  // exact
    return std::bit_cast<float>(sign | std::bit_cast<std::uint32_t>(magnitude));
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

inline std::uint16_t f32_to_bf16_bits(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float bf16_bits_to_f32(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

// Storage types for the two 16-bit floats; arithmetic happens in f32.
struct f16 {
  std::uint16_t bits = 0;
  f16() = default;
  explicit f16(float v) : bits(f32_to_f16_bits(v)) {}
  static f16 from_bits(std::uint16_t b) { f16 h; h.bits = b; return h; }
  operator float() const { return f16_bits_to_f32(bits); }
};

struct bf16 {
  std::uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float v) : bits(f32_to_bf16_bits(v)) {}
  static bf16 from_bits(std::uint16_t b) { bf16 h; h.bits = b; return h; }
  operator float() const { return bf16_bits_to_f32(bits); }
};

// Float to integer: round to nearest even, clamp to the range, NaN becomes 0.
// Integer to narrower integer: clamp to the range.
template <typename To, typename From>
To saturate_cast(From value) {
  static_assert(std::is_integral_v<To>);
  constexpr auto lo = std::numeric_limits<To>::lowest();
  constexpr auto hi = std::numeric_limits<To>::max();
  if constexpr (std::is_floating_point_v<From> || std::is_same_v<From, f16> ||
                std::is_same_v<From, bf16>) {
    double v;
    if constexpr (std::is_same_v<From, double>) v = value;
    else v = static_cast<double>(static_cast<float>(value));
    if (std::isnan(v)) return 0;
    const double r = std::nearbyint(v);  // default rounding mode: nearest even
    if (r <= static_cast<double>(lo)) return lo;
    // For 64-bit To, double(hi) rounds up to 2^64 or 2^63: everything below converts exactly.
    if (r >= static_cast<double>(hi)) return hi;
    return static_cast<To>(r);
  } else {
    if constexpr (std::is_signed_v<From>) {
      if (static_cast<std::int64_t>(value) < static_cast<std::int64_t>(lo)) return lo;
      if (value > 0 && static_cast<std::uint64_t>(value) > static_cast<std::uint64_t>(hi)) return hi;
    } else {
      if (static_cast<std::uint64_t>(value) > static_cast<std::uint64_t>(hi)) return hi;
    }
    return static_cast<To>(value);
  }
}

// One element converted between storage types, as Tensor::astype does: floats narrow with
// round-to-nearest-even, float to integer rounds to nearest even and saturates (NaN -> 0),
// integers saturate, anything nonzero -> true.
template <typename To, typename From>
To convert_value(From in) {
  constexpr bool from_small_float = std::is_same_v<From, f16> || std::is_same_v<From, bf16>;
  if constexpr (std::is_same_v<To, From>) {
    return in;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (from_small_float) return static_cast<float>(in) != 0.0f;
    else return in != From{};
  } else if constexpr (std::is_same_v<To, float>) {
    return static_cast<float>(in);
  } else if constexpr (std::is_same_v<To, double>) {
    if constexpr (from_small_float) return static_cast<double>(static_cast<float>(in));
    else return static_cast<double>(in);
  } else if constexpr (std::is_same_v<To, f16> || std::is_same_v<To, bf16>) {
    // Through f32: a double or a 64-bit integer rounds twice only where f16/bf16 have long
    // lost those bits.
    return To(static_cast<float>(in));
  } else if constexpr (std::is_same_v<From, bool>) {
    return static_cast<To>(in ? 1 : 0);
  } else {
    return saturate_cast<To>(in);
  }
}

// The C++ storage type of each DType.
template <DType T> struct dtype_storage;
template <> struct dtype_storage<DType::f32> { using type = float; };
template <> struct dtype_storage<DType::f16> { using type = f16; };
template <> struct dtype_storage<DType::bf16> { using type = bf16; };
template <> struct dtype_storage<DType::i32> { using type = std::int32_t; };
template <> struct dtype_storage<DType::u32> { using type = std::uint32_t; };
template <> struct dtype_storage<DType::i16> { using type = std::int16_t; };
template <> struct dtype_storage<DType::u16> { using type = std::uint16_t; };
template <> struct dtype_storage<DType::i8> { using type = std::int8_t; };
template <> struct dtype_storage<DType::u8> { using type = std::uint8_t; };
template <> struct dtype_storage<DType::boolean> { using type = bool; };
template <> struct dtype_storage<DType::i64> { using type = std::int64_t; };
template <> struct dtype_storage<DType::u64> { using type = std::uint64_t; };
template <> struct dtype_storage<DType::f64> { using type = double; };
template <DType T> using dtype_storage_t = typename dtype_storage<T>::type;

// Reads element `index` of a buffer of `type` as double / writes it from double, converting
// with saturation and round-to-nearest-even. Used by generic (non-hot) paths; i64/u64 beyond
// 2^53 round here; exact paths use Tensor::at<std::int64_t>, to_ints or astype.
double load_as_double(const void* data, DType type, std::size_t index);
void store_from_double(void* data, DType type, std::size_t index, double value);

// Calls fn(tag) with tag a dtype_storage_t<T>{} value for the runtime type.
template <typename Fn>
decltype(auto) dispatch_dtype(DType type, Fn&& fn) {
  switch (type) {
    case DType::f32: return fn(float{});
    case DType::f16: return fn(f16{});
    case DType::bf16: return fn(bf16{});
    case DType::i32: return fn(std::int32_t{});
    case DType::u32: return fn(std::uint32_t{});
    case DType::i16: return fn(std::int16_t{});
    case DType::u16: return fn(std::uint16_t{});
    case DType::i8: return fn(std::int8_t{});
    case DType::u8: return fn(std::uint8_t{});
    case DType::boolean: return fn(bool{});
    case DType::i64: return fn(std::int64_t{});
    case DType::u64: return fn(std::uint64_t{});
    case DType::f64: return fn(double{});
  }
  return fn(float{});
}

}  // namespace tessera
