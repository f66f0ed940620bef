#include "tessera/sim/scheduler.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tessera/core/error.h"

namespace tessera::sim {
namespace {

// True on a thread while it runs a unit, so nested parallel_for calls run inline.
thread_local bool t_inside_unit = false;

unsigned parse_threads() {
  const char* text = std::getenv("TESSERA_THREADS");
  unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  if (text == nullptr || *text == '\0') return hardware;
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 1 || value > 1024)
    throw_user_error(
        "TESSERA_THREADS='{}' is not a thread count; set it to a number from 1 to 1024 "
        "or unset it to use the {} hardware threads",
        text, hardware);
  return static_cast<unsigned>(value);
}

}  // namespace

struct WorkScheduler::Impl {
  unsigned threads = 1;
  std::vector<std::thread> workers;

  std::mutex submit_mutex;  // one parallel_for at a time on the pool
  std::mutex mutex;
  std::condition_variable wake;
  std::condition_variable done;
  bool stopping = false;
  std::uint64_t generation = 0;

  // The job in flight.
  const std::function<void(std::size_t)>* fn = nullptr;
  std::size_t count = 0;
  std::size_t chunk = 1;
  std::atomic<std::size_t> next{0};
  unsigned active = 0;  // workers still inside the current job
  std::atomic<std::size_t> lowest_failure{std::numeric_limits<std::size_t>::max()};
  std::exception_ptr failure;
  std::mutex failure_mutex;

  void run_units() {
    t_inside_unit = true;
    for (;;) {
      std::size_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
      if (begin >= count) break;
      std::size_t end = std::min(count, begin + chunk);
      for (std::size_t i = begin; i < end; ++i) {
        // Units above a known failure cannot change which exception is rethrown.
        if (i > lowest_failure.load(std::memory_order_relaxed)) break;
        try {
          (*fn)(i);
        } catch (...) {
          std::lock_guard<std::mutex> lock(failure_mutex);
          if (i < lowest_failure.load(std::memory_order_relaxed)) {
            lowest_failure.store(i, std::memory_order_relaxed);
            failure = std::current_exception();
          }
          break;
        }
      }
    }
    t_inside_unit = false;
  }

  void worker_loop() {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stopping || generation != seen; });
        if (stopping) return;
        seen = generation;
      }
      run_units();
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (--active == 0) done.notify_all();
      }
    }
  }
};

WorkScheduler::WorkScheduler(unsigned threads) : impl_(std::make_unique<Impl>()) {
  if (threads == 0) throw_user_error("a WorkScheduler needs at least one thread (asked for 0)");
  impl_->threads = threads;
  // The calling thread works too, so the pool holds threads - 1 workers.
  for (unsigned i = 1; i < threads; ++i)
    impl_->workers.emplace_back([impl = impl_.get()] { impl->worker_loop(); });
}

WorkScheduler::~WorkScheduler() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  for (auto& worker : impl_->workers) worker.join();
}

WorkScheduler& WorkScheduler::shared() {
  static WorkScheduler instance(threads_from_environment());
  return instance;
}

unsigned WorkScheduler::threads_from_environment() {
  return parse_threads();
}

unsigned WorkScheduler::thread_count() const {
  return impl_->threads;
}

void WorkScheduler::parallel_for(std::size_t count, const std::function<void(std::size_t)>& fn) {
  if (count == 0) return;
  if (t_inside_unit || impl_->workers.empty() || count == 1) {
    // Inline: the first failing unit is the lowest-numbered one by construction.
    for (std::size_t i = 0; i < count; ++i) fn(i);
    return;
  }
  Impl& s = *impl_;
  std::lock_guard<std::mutex> submit(s.submit_mutex);
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.fn = &fn;
    s.count = count;
    // Chunks only group units for fewer atomic operations; they never change what a unit computes.
    s.chunk = std::max<std::size_t>(1, count / (static_cast<std::size_t>(s.threads) * 8));
    s.next.store(0);
    s.lowest_failure.store(std::numeric_limits<std::size_t>::max());
    s.failure = nullptr;
    s.active = static_cast<unsigned>(s.workers.size());
    ++s.generation;
  }
  s.wake.notify_all();
  s.run_units();
  std::exception_ptr failure;
  {
    std::unique_lock<std::mutex> lock(s.mutex);
    s.done.wait(lock, [&] { return s.active == 0; });
    s.fn = nullptr;
    failure = s.failure;
    s.failure = nullptr;
  }
  if (failure) std::rethrow_exception(failure);
}

std::vector<WorkScheduler::Range> WorkScheduler::split(std::size_t count, unsigned parts) {
  if (parts == 0) throw_user_error("cannot split {} work units into 0 ranges", count);
  const std::size_t n = std::min<std::size_t>(count, parts);
  std::vector<Range> ranges;
  ranges.reserve(n);
  std::size_t begin = 0;
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t size = count / n + (r < count % n ? 1 : 0);
    ranges.push_back(Range{begin, begin + size});
    begin += size;
  }
  return ranges;
}

void WorkScheduler::parallel_ranges(
    std::size_t count, const std::function<void(std::size_t, std::size_t, std::size_t)>& fn) {
  const std::vector<Range> ranges = split(count, impl_->threads);
  parallel_for(ranges.size(), [&](std::size_t r) { fn(r, ranges[r].begin, ranges[r].end); });
}

}  // namespace tessera::sim
