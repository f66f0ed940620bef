// A meeting of the cores of one launch (Ascend C SyncAll; any target's all-core barrier): each
// core, on its own host thread, arrives with the cycle its timeline reached and blocks until
// every core has arrived at the same meeting; all then go on at one cycle, the latest arrival
// plus the meeting's cost, so each core's timeline can wait for it. The meeting is resolved on
// the host by blocking threads, so the launcher must keep every core running (on_block starts
// what may be waiting for a thread). Results and cycles do not depend on which thread arrives
// when. A core that ends, or fails, releases the others with the outcome instead of a hang.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace tessera::sim {

class Rendezvous {
 public:
  // `parties` cores meet; they go on `cost` cycles after the last one arrives.
  Rendezvous(std::size_t parties, std::uint64_t cost);

  enum class Outcome {
    met,       // every party arrived: go on at `cycle`
    orphaned,  // `missing` ended without arriving at this meeting: it can never be met
    aborted,   // another party failed (abort()): stop
  };
  struct Result {
    Outcome outcome = Outcome::met;
    std::uint64_t cycle = 0;
    std::size_t meeting = 0;  // 0 for the first meeting of the launch
    std::size_t missing = 0;
  };

  // Party `party` arrives at its next meeting at `cycle`. Before it blocks, `on_block` runs
  // (without the lock); the last to arrive runs `on_met` (with the others still waiting) and
  // wakes them.
  Result arrive(std::size_t party, std::uint64_t cycle, const std::function<void()>& on_block,
                const std::function<void()>& on_met);
  // Party `party` has ended: meetings it has not reached are orphaned.
  void leave(std::size_t party);
  // A party failed: every waiter, now and later, gets `aborted`.
  void abort();
  // How many meetings have been met.
  std::size_t meetings() const;

 private:
  std::size_t parties_;
  std::uint64_t cost_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::size_t> reached_;  // meetings each party has arrived at (or left: SIZE_MAX)
  std::size_t meeting_ = 0;           // the meeting being gathered
  std::size_t arrived_ = 0;
  std::uint64_t latest_ = 0;
  std::vector<std::uint64_t> release_;  // release cycle of each met meeting
  bool aborted_ = false;
  std::size_t orphaned_by_ = 0;
  bool orphaned_ = false;
};

}  // namespace tessera::sim
