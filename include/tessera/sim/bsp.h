// Bulk-synchronous supersteps for targets whose tiles compute, exchange and synchronise in
// lock step (the IPU, spec 001 §2.1 and its worker/supervisor contexts). A superstep costs the
// slowest tile's compute, then the largest per-tile exchange over the exchange bandwidth, then
// the sync. The target fills BspCosts from its preset's params.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::sim {

class CostModel;

struct BspCosts {
  double exchange_bytes_per_cycle = 0;  // per tile
  std::uint64_t exchange_latency_cycles = 0;
  std::uint64_t sync_cycles = 0;

  // From the preset's params "<prefix>.exchange_bytes_per_cycle" (required),
  // "<prefix>.exchange_setup_cycles" and "<prefix>.sync_cycles" (0 when absent), e.g. prefix
  // "ipu". UserError naming the missing param.
  static BspCosts from_params(const CostModel& cost, std::string_view prefix);
};

struct Superstep {
  std::string name;
  std::uint64_t start = 0;
  std::uint64_t compute = 0;   // max over tiles
  std::uint64_t exchange = 0;  // 0 when no tile sends or receives
  std::uint64_t sync = 0;
  std::uint64_t end() const { return start + compute + exchange + sync; }
};

class BspSchedule {
 public:
  explicit BspSchedule(BspCosts costs);  // UserError unless exchange_bytes_per_cycle > 0

  // Appends a superstep. Both spans are per tile (either may be empty); exchange bytes are what
  // each tile sends or receives, whichever is larger.
  const Superstep& add(std::string name, std::span<const std::uint64_t> compute_cycles_per_tile,
                       std::span<const std::uint64_t> exchange_bytes_per_tile);

  std::uint64_t total_cycles() const { return steps_.empty() ? 0 : steps_.back().end(); }
  std::uint64_t compute_cycles() const;
  std::uint64_t exchange_cycles() const;
  std::uint64_t sync_cycles() const;
  const std::vector<Superstep>& steps() const { return steps_; }

 private:
  BspCosts costs_;
  std::vector<Superstep> steps_;
};

}  // namespace tessera::sim
