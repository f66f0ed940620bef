// The cost model: how many device cycles an operation takes, from the figures of the preset
// (pipe latencies, memory latencies and bandwidths, host link, params). Pipes, DMA and targets
// ask it instead of holding numbers of their own (ARCHITECTURE rule 3); a target with a finer
// model derives from CostModel and overrides what it knows better.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tessera/arch/machine_spec.h"

namespace tessera::sim {

// The most cycles one operation can cost: larger figures saturate here (2^40 cycles is over ten
// minutes at 1.6 GHz), so that sums over millions of operations never overflow 64 bits.
inline constexpr std::uint64_t kMaxOperationCycles = std::uint64_t{1} << 40;

class CostModel {
 public:
  virtual ~CostModel() = default;

  virtual double clock_hz() const = 0;
  // Result latency of one operation on a pipe of a core (PipeSpec::latency_cycles).
  virtual std::uint64_t pipe_latency(std::string_view pipe) const = 0;
  // An operation of `work` units on a pipe that retires `work_per_cycle` of them each cycle:
  // the pipe's latency plus ceil(work / work_per_cycle).
  virtual std::uint64_t op_cycles(std::string_view pipe, double work, double work_per_cycle) const;
  // Moving `bytes` from one memory to another: the larger of the two latencies plus the bytes
  // over the smaller of the two bandwidths, rounded up.
  virtual std::uint64_t transfer_cycles(std::string_view src_memory, std::string_view dst_memory,
                                        std::uint64_t bytes) const = 0;
  // Host <-> device copy of `bytes` over the host link, in device cycles.
  virtual std::uint64_t host_link_cycles(std::uint64_t bytes) const = 0;
  // Cost of a set_flag / wait_flag / semaphore / barrier hand-over ("sync.latency_cycles",
  // 0 when the preset gives none).
  virtual std::uint64_t sync_cycles() const = 0;
  // A target-specific figure of the preset, or `fallback` when it has none.
  virtual double param(std::string_view key, double fallback) const = 0;
};

// The cost model every target starts from: figures read from one MachineSpec.
class PresetCostModel : public CostModel {
 public:
  // Checks the figures the model needs (clock, bandwidths) and throws UserError naming the
  // preset and the field when one is missing or not positive.
  explicit PresetCostModel(arch::MachineSpec spec);

  const arch::MachineSpec& spec() const { return spec_; }
  double clock_hz() const override;
  std::uint64_t pipe_latency(std::string_view pipe) const override;
  std::uint64_t transfer_cycles(std::string_view src_memory, std::string_view dst_memory,
                                std::uint64_t bytes) const override;
  std::uint64_t host_link_cycles(std::uint64_t bytes) const override;
  std::uint64_t sync_cycles() const override;
  double param(std::string_view key, double fallback) const override;

 private:
  const arch::MemorySpec& memory(std::string_view name) const;
  arch::MachineSpec spec_;
  std::uint64_t sync_cycles_ = 0;  // read once: every Timeline asks for it
};

}  // namespace tessera::sim
