// Shared helpers of the `tessera` command groups (cli_util.h).
#include "cli_util.h"

#include <fmt/format.h>

#include "tessera/compiler/onnx_import.h"
#include "tessera/core/error.h"

namespace tessera::tools {

using compiler::load_tensor_file;

std::pair<std::string, std::string> split_assignment(const std::string& text, const char* option) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw_user_error("{} '{}': expected NAME=VALUE", option, text);
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::map<std::string, std::int64_t> parse_dims(const std::vector<std::string>& dims) {
  std::map<std::string, std::int64_t> out;
  for (const auto& d : dims) {
    auto [name, value] = split_assignment(d, "--dim");
    try {
      std::size_t used = 0;
      const long long v = std::stoll(value, &used);
      if (used != value.size() || v <= 0) throw std::invalid_argument("not positive");
      out[name] = v;
    } catch (const std::exception&) {
      throw_user_error("--dim {}: '{}' is not a positive integer", name, value);
    }
  }
  return out;
}

std::map<std::string, Tensor> parse_inputs(const std::vector<std::string>& inputs) {
  std::map<std::string, Tensor> out;
  for (const auto& i : inputs) {
    auto [name, file] = split_assignment(i, "--input");
    out[name] = load_tensor_file(file);
  }
  return out;
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} {}", bytes, units[u])
                : fmt::format("{:.2f} {}", bytes, units[u]);
}

std::string human_seconds(double s) {
  if (s >= 1.0) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} us", s * 1e6);
}

}  // namespace tessera::tools
