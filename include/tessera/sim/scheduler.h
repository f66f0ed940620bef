// Deterministic work scheduling over a host thread pool (TESSERA_THREADS).
// parallel_for runs caller-cut units; parallel_ranges cuts the work itself into one contiguous
// range per host thread, as a real scheduler's static split does, so the split changes with the
// thread count. Either way each unit or range must write only its own results, and what they
// compute must not depend on where a range starts; then results and cycle counts are the same for
// any number of host threads (ARCHITECTURE rule 2), and a test with 1, 2 and 8 threads exercises
// three different splits.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace tessera::sim {

class WorkScheduler {
 public:
  explicit WorkScheduler(unsigned threads);
  ~WorkScheduler();
  WorkScheduler(const WorkScheduler&) = delete;
  WorkScheduler& operator=(const WorkScheduler&) = delete;

  // The process-wide pool, sized by TESSERA_THREADS (default: the host's hardware threads).
  static WorkScheduler& shared();
  // The thread count TESSERA_THREADS asks for now (UserError when it is not a number from 1 to
  // 1024), or the host's hardware threads when it is unset.
  static unsigned threads_from_environment();

  // The threads that take part in jobs: the pool's size, or less under set_thread_limit.
  unsigned thread_count() const;

  // Lets only `threads` of the pool's threads (the caller and threads - 1 workers) take part in
  // the jobs that start from now on; thread_count() of the pool lifts the limit. A benchmark uses
  // it to alternate thread counts in one process, so both see the same host. UserError outside
  // 1..pool size, or when called from inside a unit.
  void set_thread_limit(unsigned threads);

  // Runs fn(i) for every i in [0, count) and returns when all have finished. If units throw,
  // the exception of the lowest-numbered failing unit is rethrown, whatever the thread count.
  // Nested calls from inside a unit run inline on the calling thread.
  void parallel_for(std::size_t count, const std::function<void(std::size_t)>& fn);

  // Runs fn(begin, end) for [0, count) cut into pieces of `piece` units (the last one shorter),
  // in parallel; one call fn(0, count) when count is at most `piece`. For work whose results do
  // not depend on the cut, such as element-by-element loops. Exceptions as parallel_for.
  void parallel_pieces(std::size_t count, std::size_t piece,
                       const std::function<void(std::size_t, std::size_t)>& fn);
  // A piece for element-by-element loops on the host: 128 KiB of f32, long enough that a
  // piece costs far more than handing it to a thread, short enough to balance two threads.
  static constexpr std::size_t kElementPiece = std::size_t{1} << 15;

  struct Range {
    std::size_t begin = 0;
    std::size_t end = 0;
    bool operator==(const Range&) const = default;
  };
  // [0, count) in `parts` contiguous ranges of sizes differing by at most one, larger ones first
  // (fewer ranges when count < parts; none when count is 0). Static OpenMP's split.
  static std::vector<Range> split(std::size_t count, unsigned parts);

  // Runs fn(range_index, begin, end) for every range of split(count, thread_count()), in
  // parallel; exceptions as parallel_for (the lowest-numbered failing range wins).
  void parallel_ranges(std::size_t count,
                       const std::function<void(std::size_t, std::size_t, std::size_t)>& fn);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::sim
