// Race detection across the pipes of one core: every access an operation makes to a buffer
// is recorded with the operation's event; two accesses to overlapping bytes, from different
// pipes, at least one a write, race unless one happens before the other on the Timeline
// (program order on a pipe, dependencies, flags, semaphores, barriers). A race is what the
// hardware would compute wrongly some of the time; the simulator reports it as a DeviceFault
// naming the core, both pipes and operations, the buffer and the bytes (ARCHITECTURE rule 4).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/sim/timeline.h"

namespace tessera::sim {

class RaceDetector {
 public:
  enum class Kind : std::uint8_t { read, write };

  // Records that `event`'s operation (`what`, e.g. "DataCopy UB->GM") reads or writes
  // [begin, end) of `buffer` ("UB", "L0C").
  void record(Event event, std::string_view buffer, std::uint64_t begin, std::uint64_t end,
              Kind kind, std::string what);
  // Checks every recorded access against the earlier ones; DeviceFault at the first race.
  // The timeline must track order (Timeline::set_track_order) and be finished. Accesses are
  // consumed: a later check starts from the accesses still live.
  void check(const Timeline& timeline);
  std::size_t pending() const { return pending_.size(); }
  // What the race message tells the programmer to do, in the target's terms (default: the
  // AI Core's flags, queues and barriers).
  void set_remedy(std::string remedy) { remedy_ = std::move(remedy); }

 private:
  struct Access {
    Event event;
    std::uint64_t begin = 0, end = 0;
    Kind kind = Kind::read;
    std::string what;
  };
  struct Pending {
    std::uint32_t buffer = 0;  // index into buffers_
    Access access;
  };
  // Buffer names by index: a core has a handful, so a scan beats a map and copies no string.
  std::vector<std::string> buffers_;
  std::vector<Pending> pending_;             // in record order
  std::vector<std::vector<Access>> live_;    // per buffer index, not yet superseded
  std::string remedy_ = "order them with set_flag/wait_flag (or EnQue/DeQue), or a pipe_barrier";
};

}  // namespace tessera::sim
