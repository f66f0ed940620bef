// Unit-aware printing of figures, driven by the field-name suffixes of docs/arch.md.
#include <cmath>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "tessera/arch/machine_spec.h"

namespace tessera::arch {
namespace {

// Up to three decimals, trailing zeros dropped: 1.600 -> "1.6", 32.000 -> "32".
std::string trimmed(double v) {
  std::string s = fmt::format("{:.3f}", v);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

// Whole numbers get thousands separators ("16,384"); others keep a short decimal form.
std::string plain(double v) {
  if (v != std::floor(v) || std::fabs(v) >= 1e18) return trimmed(v);
  const auto n = static_cast<std::int64_t>(v);
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string scaled(double v, const char* const* units, int count, double step, const char* suffix) {
  int i = 0;
  while (i + 1 < count && std::fabs(v) >= step) {
    v /= step;
    ++i;
  }
  return fmt::format("{} {}{}", trimmed(v), units[i], suffix);
}

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

}  // namespace

std::string format_figure(std::string_view field, double value) {
  static const char* const kBinary[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  static const char* const kDecimalBytes[] = {"B", "kB", "MB", "GB", "TB"};
  static const char* const kHertz[] = {"Hz", "kHz", "MHz", "GHz", "THz"};
  if (field.ends_with("base_address"))
    return value >= 0 && value == std::floor(value) && value < 0x1p63
               ? fmt::format("{:#x}", static_cast<std::uint64_t>(value))
               : trimmed(value);
  if (contains(field, "bytes_per_second")) return scaled(value, kDecimalBytes, 5, 1000, "/s");
  if (contains(field, "bytes_per_cycle")) return plain(value) + " B/cycle";
  if (contains(field, "bytes")) return scaled(value, kBinary, 5, 1024, "");
  if (field.ends_with("hz")) return scaled(value, kHertz, 5, 1000, "");
  if (field.ends_with("seconds")) {
    const double a = std::fabs(value);
    if (a == 0) return "0 s";
    if (a < 1e-6) return trimmed(value * 1e9) + " ns";
    if (a < 1e-3) return trimmed(value * 1e6) + " us";
    if (a < 1) return trimmed(value * 1e3) + " ms";
    return trimmed(value) + " s";
  }
  if (field.ends_with("cycles")) return plain(value) + (value == 1 ? " cycle" : " cycles");
  return plain(value);
}

}  // namespace tessera::arch
