// Whole numbers read from JSON files: nlohmann converts a JSON float to an integer with a plain
// cast, undefined beyond the type's range (1e26 as an int64), so every integer a file gives is
// read through this instead.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <utility>

namespace tessera {

// The value of `j` as a T, or nothing when it is not a whole JSON number inside T's range.
template <typename T>
std::optional<T> json_integer(const nlohmann::json& j) {
  if (j.is_number_unsigned()) {
    const auto u = j.get<std::uint64_t>();
    if (std::in_range<T>(u)) return static_cast<T>(u);
  } else if (j.is_number_integer()) {
    const auto v = j.get<std::int64_t>();
    if (std::in_range<T>(v)) return static_cast<T>(v);
  }
  return std::nullopt;
}

}  // namespace tessera
