#include "tessera/core/limits.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <limits>
#include <string>

#include "tessera/core/error.h"

namespace tessera {
namespace {

std::uint64_t machine_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::uint64_t{1} << 40;  // unknown: do not limit below 1 TiB
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

std::string format_size(std::uint64_t bytes) {
  if (bytes >= (std::uint64_t{1} << 30))
    return fmt::format("{:.1f} GiB ({} B)", static_cast<double>(bytes) / (1 << 30), bytes);
  if (bytes >= (std::uint64_t{1} << 20))
    return fmt::format("{:.1f} MiB ({} B)", static_cast<double>(bytes) / (1 << 20), bytes);
  return fmt::format("{} B", bytes);
}

}  // namespace

std::uint64_t host_memory_limit() {
  const char* text = std::getenv("TESSERA_HOST_MEMORY_LIMIT");
  if (text == nullptr || *text == '\0') return machine_memory();
  const std::string s(text);
  std::size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  int shift = -1;
  if (digits == s.size()) {
    shift = 0;
  } else if (digits + 1 == s.size()) {
    switch (std::toupper(static_cast<unsigned char>(s[digits]))) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      default:
        break;
    }
  }
  std::uint64_t value = 0;
  bool ok = digits > 0 && digits <= 15 && shift >= 0;
  if (ok) {
    value = std::stoull(s.substr(0, digits));
    ok = value > 0 && value <= (std::numeric_limits<std::uint64_t>::max() >> (shift + 1));
  }
  if (!ok)
    throw_user_error(
        "TESSERA_HOST_MEMORY_LIMIT='{}' is not a memory size; set it to a positive byte count, "
        "optionally with a K, M, G or T suffix (for example 8G), or unset it to use the "
        "machine's memory ({})",
        s, format_size(machine_memory()));
  return value << shift;
}

void check_host_memory(std::uint64_t bytes, std::string_view what) {
  const std::uint64_t limit = host_memory_limit();
  if (bytes > limit)
    throw_user_error(
        "{} needs {} of host memory, more than the limit of {}; use a smaller model or input, "
        "or raise TESSERA_HOST_MEMORY_LIMIT (default: the machine's memory)",
        what, format_size(bytes), format_size(limit));
}

std::uint64_t saturating_element_count(const std::int64_t* dims, int rank) {
  std::int64_t count = 1;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] < 0) return std::numeric_limits<std::uint64_t>::max();
    if (__builtin_mul_overflow(count, dims[i], &count))
      return std::numeric_limits<std::uint64_t>::max();
  }
  return static_cast<std::uint64_t>(count);
}

}  // namespace tessera
