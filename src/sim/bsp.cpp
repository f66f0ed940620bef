#include "tessera/sim/bsp.h"

#include <algorithm>
#include <cmath>

#include "tessera/core/error.h"
#include "tessera/sim/cost_model.h"

namespace tessera::sim {

BspCosts BspCosts::from_params(const CostModel& cost, std::string_view prefix) {
  std::string p(prefix);
  BspCosts c;
  c.exchange_bytes_per_cycle = cost.param(p + ".exchange_bytes_per_cycle", 0);
  if (!(c.exchange_bytes_per_cycle > 0))
    throw_user_error(
        "the preset has no positive '{}.exchange_bytes_per_cycle' param; BSP exchange "
        "needs the per-tile exchange bandwidth",
        prefix);
  c.exchange_latency_cycles =
      static_cast<std::uint64_t>(std::ceil(cost.param(p + ".exchange_setup_cycles", 0)));
  c.sync_cycles = static_cast<std::uint64_t>(std::ceil(cost.param(p + ".sync_cycles", 0)));
  return c;
}

BspSchedule::BspSchedule(BspCosts costs) : costs_(costs) {
  if (!(costs_.exchange_bytes_per_cycle > 0))
    throw_user_error("BSP exchange bandwidth must be positive, got {} bytes per cycle per tile",
                     costs_.exchange_bytes_per_cycle);
}

const Superstep& BspSchedule::add(std::string name,
                                  std::span<const std::uint64_t> compute_cycles_per_tile,
                                  std::span<const std::uint64_t> exchange_bytes_per_tile) {
  Superstep step;
  step.name = std::move(name);
  step.start = total_cycles();
  for (auto c : compute_cycles_per_tile) step.compute = std::max(step.compute, c);
  std::uint64_t bytes = 0;
  for (auto b : exchange_bytes_per_tile) bytes = std::max(bytes, b);
  if (bytes > 0)
    step.exchange = costs_.exchange_latency_cycles +
                    static_cast<std::uint64_t>(
                        std::ceil(static_cast<double>(bytes) / costs_.exchange_bytes_per_cycle));
  step.sync = costs_.sync_cycles;
  steps_.push_back(std::move(step));
  return steps_.back();
}

std::uint64_t BspSchedule::compute_cycles() const {
  std::uint64_t sum = 0;
  for (const auto& s : steps_) sum += s.compute;
  return sum;
}

std::uint64_t BspSchedule::exchange_cycles() const {
  std::uint64_t sum = 0;
  for (const auto& s : steps_) sum += s.exchange;
  return sum;
}

std::uint64_t BspSchedule::sync_cycles() const {
  std::uint64_t sum = 0;
  for (const auto& s : steps_) sum += s.sync;
  return sum;
}

}  // namespace tessera::sim
