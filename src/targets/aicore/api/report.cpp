#include "tessera/targets/aicore/api/report.h"

#include <fmt/format.h>

#include "tessera/targets/aicore/api/core.h"

namespace tessera::aicore {

std::string report() {
  const profile::KernelRecord& k = last_kernel();
  runtime::Device& dev = device();
  const double clock = dev.spec().clock_hz.value;
  std::string s = fmt::format(
      "kernel {} on {}: {} blocks, {} cycles ({:.3f} us at {:.4g} GHz), {} B through {}\n", k.name,
      dev.spec().name, k.metrics.count("block_dim") ? k.metrics.at("block_dim") : 0.0, k.cycles,
      static_cast<double>(k.cycles) / clock * 1e6, clock / 1e9,
      k.metrics.count("gm_bytes") ? k.metrics.at("gm_bytes") : 0.0, dev.spec().global_memory);
  s += "pipe utilisation per core (busy / core cycles):\n  core      ";
  for (int p = 0; p < kPipeCount; ++p) s += fmt::format("{:>7}", pipe_name(static_cast<Pipe>(p)));
  s += "\n";
  for (std::size_t c = 0; c < k.cycles_per_core.size(); ++c) {
    const std::string core = fmt::format("{}{}", dev.spec().core_name, c);
    s += fmt::format("  {:<9} ", core);
    for (int p = 0; p < kPipeCount; ++p) {
      const auto it =
          k.metrics.find(fmt::format("busy.{}.{}", core, pipe_name(static_cast<Pipe>(p))));
      const double busy = it == k.metrics.end() ? 0.0 : it->second;
      const double total = static_cast<double>(k.cycles_per_core[c]);
      s += fmt::format("{:>6.1f}%", total > 0 ? 100.0 * busy / total : 0.0);
    }
    s += "\n";
  }
  return s;
}

void print_report(std::FILE* out) {
  fmt::print(out, "{}", report());
}

}  // namespace tessera::aicore
