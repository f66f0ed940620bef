// The fine-grained timing of one core's instruction stream: in-order issue slots with result
// latencies (a VLIW bundle's slots, a vector unit's issue ports, a memory port). An instruction
// issues on its slot at max(slot free, operands ready), holds the slot for `occupancy` cycles
// and its result is ready `latency` cycles after its last issue cycle. Values carry their ready
// cycle, so dependency chains cost their latency and independent work overlaps. It is cheap by
// design (a few compares per instruction): targets call it once per executed intrinsic and
// book the totals into a sim::Timeline per core afterwards.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace tessera::sim {

template <int Slots>
class IssueClock {
 public:
  static constexpr int slot_count = Slots;

  IssueClock() = default;
  explicit IssueClock(const std::array<std::uint64_t, Slots>& latencies) : latency_(latencies) {}

  // Issues one instruction; returns the cycle its result is ready. `extra_latency` adds to the
  // slot's latency (e.g. a memory's access latency behind the port).
  std::uint64_t issue(int slot, std::uint64_t operands_ready, std::uint64_t occupancy = 1,
                      std::uint64_t extra_latency = 0) {
    const std::uint64_t at = std::max({free_[slot], operands_ready, floor_});
    const std::uint64_t done = at + (occupancy ? occupancy : 1);
    free_[slot] = done;
    issues_[slot] += occupancy;
    const std::uint64_t ready = done - 1 + latency_[slot] + extra_latency;
    last_ready_ = std::max(last_ready_, ready);
    return ready;
  }
  // The first cycle `slot` can take a new instruction.
  std::uint64_t free_cycle(int slot) const { return free_[slot]; }
  // A stall of the whole core (a fence, an in-order pipeline waiting on memory): no slot issues
  // before `cycle` from now on.
  void stall_until(std::uint64_t cycle) { floor_ = std::max(floor_, cycle); }
  // Completion of work with no result value (a store reaching memory) that still ends the
  // program later than any slot.
  void note_done(std::uint64_t cycle) { last_ready_ = std::max(last_ready_, cycle); }

  std::uint64_t issues(int slot) const { return issues_[slot]; }
  std::uint64_t latency(int slot) const { return latency_[slot]; }
  // The cycle at which every issued instruction has finished and every result is ready.
  std::uint64_t makespan() const {
    std::uint64_t end = std::max(last_ready_, floor_);
    for (std::uint64_t f : free_) end = std::max(end, f);
    return end;
  }
  void reset() {
    free_.fill(0);
    issues_.fill(0);
    last_ready_ = 0;
    floor_ = 0;
  }

 private:
  std::array<std::uint64_t, Slots> latency_{};
  std::array<std::uint64_t, Slots> free_{};
  std::array<std::uint64_t, Slots> issues_{};
  std::uint64_t last_ready_ = 0;
  std::uint64_t floor_ = 0;
};

}  // namespace tessera::sim
