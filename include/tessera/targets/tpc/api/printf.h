// printf for TPC kernels (spec 000 §2.7.3): a format string and at most one value. The glue code
// must set printf in its program flags (the pragma tpc_printf(enable) of TPC-C); the program
// then has one tensor fewer (tpc.max_tensors_with_printf). Output is collected per program
// instance and written, in index-space order, when the launch finishes.
// Formats: %d %i %u %x %X %o %c %s %f %e %g %a (with flags/width/precision), the length
// modifiers hh and h (%hhd %hhu %hd %hu), %bf for bf16 and %% for a percent sign.
// In a file that also sees C's ::printf, call it as tpc::printf.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tessera/targets/tpc/api/types.h"

namespace tessera::tpc {

namespace detail {
enum class PrintfKind { none, i64, u64, f64, bf16, str };
struct PrintfArg {
  PrintfKind kind = PrintfKind::none;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double f = 0;
  const char* s = nullptr;
};
void printf_impl(const char* format, const PrintfArg& arg);
}  // namespace detail

inline void printf(const char* format) {
  detail::printf_impl(format, {});
}

template <typename T>
inline void printf(const char* format, T value) {
  detail::PrintfArg a;
  if constexpr (std::is_same_v<T, bf16> || std::is_same_v<T, tessera::bf16>) {
    a.kind = detail::PrintfKind::bf16;
    a.f = static_cast<float>(value);
  } else if constexpr (std::is_floating_point_v<T>) {
    a.kind = detail::PrintfKind::f64;
    a.f = static_cast<double>(value);
  } else if constexpr (std::is_same_v<T, bool>) {
    a.kind = detail::PrintfKind::u64;
    a.u = value ? 1 : 0;
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    a.kind = detail::PrintfKind::i64;
    a.i = value;
    a.u = static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<T>>(value));
  } else if constexpr (std::is_integral_v<T>) {
    a.kind = detail::PrintfKind::u64;
    a.u = value;
    a.i = static_cast<std::int64_t>(value);
  } else if constexpr (std::is_convertible_v<T, const char*>) {
    a.kind = detail::PrintfKind::str;
    a.s = value;
  } else {
    static_assert(std::is_arithmetic_v<T>, "tpc::printf prints one scalar value");
  }
  detail::printf_impl(format, a);
}

}  // namespace tessera::tpc
