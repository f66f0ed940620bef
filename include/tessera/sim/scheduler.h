// Deterministic work scheduling over a host thread pool (TESSERA_THREADS).
// The caller cuts work into units whose split never depends on the thread count and where each
// unit writes only its own results; then results and cycle counts are the same for any number
// of host threads (ARCHITECTURE rule 2).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

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

  unsigned thread_count() const;

  // Runs fn(i) for every i in [0, count) and returns when all have finished. If units throw,
  // the exception of the lowest-numbered failing unit is rethrown, whatever the thread count.
  // Nested calls from inside a unit run inline on the calling thread.
  void parallel_for(std::size_t count, const std::function<void(std::size_t)>& fn);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::sim
