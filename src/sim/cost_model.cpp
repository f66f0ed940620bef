#include "tessera/sim/cost_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "tessera/core/error.h"

namespace tessera::sim {
namespace {

std::uint64_t ceil_cycles(double cycles) {
  if (!(cycles >= 0))
    throw_user_error(
        "the cost model got {} cycles from the preset's figures; check its latencies, bandwidths "
        "and clock (`tessera arch show` validates them)",
        cycles);
  // Saturates instead of overflowing: sums of many such costs still fit 64 bits.
  if (cycles >= static_cast<double>(kMaxOperationCycles)) return kMaxOperationCycles;
  // Drops float noise such as 1e-6 s * 1.6e9 Hz = 1600.0000000000002 before rounding up.
  return static_cast<std::uint64_t>(std::ceil(cycles * (1.0 - 1e-12)));
}

}  // namespace

std::uint64_t CostModel::op_cycles(std::string_view pipe, double work,
                                   double work_per_cycle) const {
  if (!(work_per_cycle > 0))
    throw_user_error("op on pipe '{}': work_per_cycle must be positive, got {}", pipe,
                     work_per_cycle);
  if (!(work >= 0)) throw_user_error("op on pipe '{}': work must be >= 0, got {}", pipe, work);
  return pipe_latency(pipe) + ceil_cycles(work / work_per_cycle);
}

PresetCostModel::PresetCostModel(arch::MachineSpec spec) : spec_(std::move(spec)) {
  std::vector<std::string> problems;
  if (!(spec_.clock_hz.value > 0)) problems.push_back("clock_hz must be positive");
  for (const auto& m : spec_.memories)
    if (!(m.bandwidth_bytes_per_cycle.value > 0))
      problems.push_back(
          fmt::format("memories '{}'.bandwidth_bytes_per_cycle must be positive", m.name));
  if (!(spec_.host_link.bandwidth_bytes_per_second.value > 0))
    problems.push_back("host_link.bandwidth_bytes_per_second must be positive");
  if (!problems.empty()) {
    std::string list;
    for (const auto& p : problems) list += "\n  " + p;
    throw_user_error("machine '{}' ({}) cannot feed the cost model:{}", spec_.name, spec_.origin,
                     list);
  }
  sync_cycles_ = ceil_cycles(param("sync.latency_cycles", 0));
}

double PresetCostModel::clock_hz() const {
  return spec_.clock_hz.value;
}

std::uint64_t PresetCostModel::pipe_latency(std::string_view pipe) const {
  for (const auto& p : spec_.pipes)
    if (p.name == pipe) return ceil_cycles(p.latency_cycles.value);
  std::string names;
  for (const auto& p : spec_.pipes) names += (names.empty() ? "" : ", ") + p.name;
  throw_user_error("machine '{}' has no pipe '{}'; its pipes are: {}", spec_.name, pipe, names);
}

const arch::MemorySpec& PresetCostModel::memory(std::string_view name) const {
  for (const auto& m : spec_.memories)
    if (m.name == name) return m;
  std::string names;
  for (const auto& m : spec_.memories) names += (names.empty() ? "" : ", ") + m.name;
  throw_user_error("machine '{}' has no memory '{}'; its memories are: {}", spec_.name, name,
                   names);
}

std::uint64_t PresetCostModel::transfer_cycles(std::string_view src_memory,
                                               std::string_view dst_memory,
                                               std::uint64_t bytes) const {
  const auto& src = memory(src_memory);
  const auto& dst = memory(dst_memory);
  double latency = std::max(src.latency_cycles.value, dst.latency_cycles.value);
  double bandwidth =
      std::min(src.bandwidth_bytes_per_cycle.value, dst.bandwidth_bytes_per_cycle.value);
  return ceil_cycles(latency) + ceil_cycles(static_cast<double>(bytes) / bandwidth);
}

std::uint64_t PresetCostModel::host_link_cycles(std::uint64_t bytes) const {
  double seconds = spec_.host_link.latency_seconds.value +
                   static_cast<double>(bytes) / spec_.host_link.bandwidth_bytes_per_second.value;
  return ceil_cycles(seconds * spec_.clock_hz.value);
}

std::uint64_t PresetCostModel::sync_cycles() const {
  return sync_cycles_;
}

double PresetCostModel::param(std::string_view key, double fallback) const {
  auto it = spec_.params.find(std::string(key));
  return it == spec_.params.end() ? fallback : it->second.value;
}

}  // namespace tessera::sim
