#include "tessera/sim/scheduler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <limits>
#include <memory>
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

// How long a thread polls before it sleeps; beyond it the thread leaves the core to others (a
// shared host). A worker polls for the next job: between a network's steps the caller does
// serial work (recording a launch, planning the next) for up to a few hundred microseconds, and
// a worker that slept arrives a futex wake-up late (50-100 us on a VM), after the caller has
// taken most of a short kernel's units. The caller polls for the workers still inside its job:
// it has nothing else to do, and sleeping would put a wake-up on the critical path.
// (ResNet-18 on gaudi, 2 threads: 300 us / 2 ms ran 3-6% faster than 50 us / 50 us.)
constexpr auto kWorkerPollTime = std::chrono::microseconds(300);
constexpr auto kCallerPollTime = std::chrono::microseconds(2000);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Polls `ready` for up to `span`; true when it held.
template <typename F>
bool poll(std::chrono::microseconds span, F&& ready) {
  const auto until = std::chrono::steady_clock::now() + span;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= until) return ready();
  }
}

}  // namespace

struct WorkScheduler::Impl {
  unsigned threads = 1;             // the pool: the caller and threads - 1 workers
  std::atomic<unsigned> active{1};  // how many of them take part in a job (set_thread_limit)
  std::vector<std::thread> workers;

  std::mutex submit_mutex;  // one parallel_for at a time on the pool
  std::mutex mutex;
  std::condition_variable wake;
  std::condition_variable done;
  bool stopping = false;
  std::atomic<std::uint64_t> generation{0};

  // The job in flight. A worker takes part only if it arrives while the job is open; the caller
  // closes it once it has run out of units and then waits only for the workers that joined, so
  // a worker that wakes late (its core busy with other processes) never holds the caller up.
  const std::function<void(std::size_t)>* fn = nullptr;
  std::size_t count = 0;
  std::size_t chunk = 1;
  bool open = false;
  std::atomic<unsigned> joined{0};  // workers inside the current job
  bool caller_sleeping = false;
  std::atomic<std::size_t> lowest_failure{std::numeric_limits<std::size_t>::max()};
  std::exception_ptr failure;
  std::mutex failure_mutex;

  // Each taking thread has a home: one of `home_count` contiguous ranges of the job's chunks.
  // It takes its own range from the front and, once that is empty, the others' from the back.
  // Units next to each other in memory (rows of an image, a core's slice) then stay on one thread
  // from one job to the next, in its own L2, while a slow or late thread still has its work taken.
  // (ResNet-18 on gaudi, 2 threads: 1.77x over one thread against 1.69x with one shared counter,
  // median of 8 in-process runs; elementwise kernels gained most.) Bounds pack into one word:
  // front in the low half, end in the high half; a job has at most threads * 8 + 1 chunks.
  struct alignas(64) HomeRange {
    std::atomic<std::uint64_t> bounds{0};
  };
  std::unique_ptr<HomeRange[]> homes;
  unsigned home_count = 1;

  void set_homes() {
    const std::uint64_t chunks = (count + chunk - 1) / chunk;
    home_count = static_cast<unsigned>(std::min<std::uint64_t>(active.load(), chunks));
    for (unsigned r = 0; r < home_count; ++r) {
      const std::uint64_t begin = chunks * r / home_count, end = chunks * (r + 1) / home_count;
      homes[r].bounds.store((end << 32) | begin, std::memory_order_relaxed);
    }
  }

  // Takes the front (or back) chunk of `home`; false when it is empty.
  static bool take(HomeRange& home, bool front, std::size_t& chunk_index) {
    std::uint64_t bounds = home.bounds.load(std::memory_order_relaxed);
    for (;;) {
      const std::uint64_t begin = bounds & 0xffffffffu, end = bounds >> 32;
      if (begin >= end) return false;
      const std::uint64_t taken = front ? (end << 32) | (begin + 1) : ((end - 1) << 32) | begin;
      if (home.bounds.compare_exchange_weak(bounds, taken, std::memory_order_relaxed)) {
        chunk_index = static_cast<std::size_t>(front ? begin : end - 1);
        return true;
      }
    }
  }

  // Runs units until every range is empty; `self` is 0 for the caller, 1.. for the workers.
  void run_units(unsigned self) {
    t_inside_unit = true;
    const unsigned home = self % home_count;
    for (;;) {
      std::size_t taken = 0;
      bool got = take(homes[home], true, taken);
      for (unsigned k = 1; !got && k < home_count; ++k)
        got = take(homes[(home + k) % home_count], false, taken);
      if (!got) break;
      const std::size_t begin = taken * chunk;
      const std::size_t end = std::min(count, begin + chunk);
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

  // Worker `index` (0-based) takes part while index + 1 < active.
  void worker_loop(unsigned index) {
    std::uint64_t seen = 0;
    for (;;) {
      poll(kWorkerPollTime, [&] { return generation.load(std::memory_order_acquire) != seen; });
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stopping || generation.load() != seen; });
        if (stopping) return;
        seen = generation.load();
        if (!open || index + 1 >= active) continue;  // finished alone, or left out by the limit
        joined.fetch_add(1);
      }
      run_units(index + 1);
      std::lock_guard<std::mutex> lock(mutex);
      if (joined.fetch_sub(1) == 1 && caller_sleeping) done.notify_one();
    }
  }
};

WorkScheduler::WorkScheduler(unsigned threads) : impl_(std::make_unique<Impl>()) {
  if (threads == 0) throw_user_error("a WorkScheduler needs at least one thread (asked for 0)");
  impl_->threads = threads;
  impl_->homes = std::make_unique<Impl::HomeRange[]>(threads);
  impl_->active = threads;
  // The calling thread works too, so the pool holds threads - 1 workers.
  for (unsigned i = 1; i < threads; ++i)
    impl_->workers.emplace_back([impl = impl_.get(), i] { impl->worker_loop(i - 1); });
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
  return impl_->active;
}

void WorkScheduler::set_thread_limit(unsigned threads) {
  if (threads < 1 || threads > impl_->threads)
    throw_user_error("set_thread_limit({}): the pool has {} threads; ask for 1 to {}", threads,
                     impl_->threads, impl_->threads);
  if (t_inside_unit)
    throw_user_error("set_thread_limit({}) inside a unit of work: change the limit between jobs",
                     threads);
  // Under submit_mutex no job is in flight, so every job runs under one limit.
  std::lock_guard<std::mutex> submit(impl_->submit_mutex);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->active = threads;
}

void WorkScheduler::parallel_for(std::size_t count, const std::function<void(std::size_t)>& fn) {
  if (count == 0) return;
  if (t_inside_unit || impl_->active == 1 || count == 1) {
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
    s.chunk = std::max<std::size_t>(1, count / (static_cast<std::size_t>(s.active) * 8));
    s.set_homes();
    s.lowest_failure.store(std::numeric_limits<std::size_t>::max());
    s.failure = nullptr;
    s.open = true;
    s.generation.fetch_add(1, std::memory_order_release);
  }
  s.wake.notify_all();
  s.run_units(0);
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.open = false;  // every unit is taken: workers arriving from now on stay out
  }
  if (!poll(kCallerPollTime, [&] { return s.joined.load(std::memory_order_acquire) == 0; })) {
    std::unique_lock<std::mutex> lock(s.mutex);
    s.caller_sleeping = true;
    s.done.wait(lock, [&] { return s.joined.load() == 0; });
    s.caller_sleeping = false;
  }
  std::exception_ptr failure;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.fn = nullptr;
    failure = s.failure;
    s.failure = nullptr;
  }
  if (failure) std::rethrow_exception(failure);
}

void WorkScheduler::parallel_pieces(std::size_t count, std::size_t piece,
                                    const std::function<void(std::size_t, std::size_t)>& fn) {
  if (piece == 0) throw_user_error("parallel_pieces: pieces of 0 units cannot cover {}", count);
  if (count == 0) return;
  if (count <= piece) {
    fn(0, count);
    return;
  }
  parallel_for((count - 1) / piece + 1, [&](std::size_t i) {
    const std::size_t begin = i * piece;
    fn(begin, begin + std::min(piece, count - begin));
  });
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
  const std::vector<Range> ranges = split(count, thread_count());
  parallel_for(ranges.size(), [&](std::size_t r) { fn(r, ranges[r].begin, ranges[r].end); });
}

}  // namespace tessera::sim
