// The timeline of one core: its in-order pipes and the synchronisation between them.
// Work is issued in program order; an operation starts at max(its pipe is free, its
// dependencies are done) and lasts the cycles given (usually from the CostModel). Order across
// pipes comes only from events (dependencies), flags (set_flag / wait_flag, spec 003 "Pipes"),
// semaphores and barriers. A wait that can never be satisfied is reported as a deadlock
// DeviceFault as soon as that is certain (at a barrier or at finish()), never as a hang.
// A Timeline is used by one host thread at a time; run one per core to simulate cores in
// parallel.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tessera/arch/machine_spec.h"

namespace tessera::sim {

class CostModel;

using PipeId = std::uint32_t;

// Completion of an issued operation; pass it as a dependency of later operations.
struct Event {
  std::uint64_t timeline = 0;  // serial of the timeline that issued it; 0: none
  std::uint64_t index = 0;
  explicit operator bool() const { return timeline != 0; }
};

struct FlagId {
  std::uint32_t index = 0;
};
struct SemaphoreId {
  std::uint32_t index = 0;
};

// One busy interval of a pipe, for the trace.
struct PipeInterval {
  PipeId pipe = 0;
  std::string name;
  std::uint64_t start = 0;
  std::uint64_t end = 0;
};

class Timeline {
 public:
  // `core` names the core in messages and tracks ("tpc0"); pipe names must be unique.
  Timeline(std::string core, std::vector<std::string> pipe_names, const CostModel* cost = nullptr);
  Timeline(std::string core, std::initializer_list<std::string> pipe_names,
           const CostModel* cost = nullptr)
      : Timeline(std::move(core), std::vector<std::string>(pipe_names), cost) {}
  // The pipes of the preset's cores (MachineSpec::pipes), in preset order.
  Timeline(std::string core, const arch::MachineSpec& spec, const CostModel* cost = nullptr);
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;
  Timeline(Timeline&&) noexcept;
  Timeline& operator=(Timeline&&) noexcept;
  ~Timeline();

  const std::string& core() const { return core_; }
  std::size_t pipe_count() const { return pipes_.size(); }
  PipeId pipe(std::string_view name) const;  // UserError listing the pipes when unknown
  const std::string& pipe_name(PipeId pipe) const;
  // "core/pipe": the pipe's track in profiles and traces, made once with the pipe.
  const std::string& pipe_track(PipeId pipe) const;

  // Issues an operation of `cycles` on `pipe` after `deps`. Returns its completion event.
  Event issue(PipeId pipe, std::string_view name, std::uint64_t cycles,
              std::span<const Event> deps = {});
  Event issue(PipeId pipe, std::string_view name, std::uint64_t cycles,
              std::initializer_list<Event> deps);

  // As issue, but not starting before cycle `not_before` (work that becomes available then:
  // an instruction stream placed after the fact, a transfer that arrives).
  Event issue_at(PipeId pipe, std::string_view name, std::uint64_t not_before, std::uint64_t cycles,
                 std::span<const Event> deps = {});
  // The cycle an operation issued now on `pipe` after `deps` would start. UserError when the
  // pipe or a dependency is still blocked (the start is not known yet).
  std::uint64_t ready_cycle(PipeId pipe, std::span<const Event> deps = {}) const;
  // Adds a pipe (device-level queues appear as engines are first used). UserError if the name
  // is taken.
  PipeId add_pipe(std::string name);
  // The core's work extends to `cycle` even though no pipe is busy then (results still in
  // flight, a pipeline draining): end_cycle() is at least `cycle`.
  void extend_to(std::uint64_t cycle) { extent_ = std::max(extent_, cycle); }

  // Flags: binary, as the hardware's flag bits. set_flag on the producing pipe sets it once all
  // earlier work of that pipe is done; wait_flag on the consuming pipe blocks that pipe until the
  // flag is set, then clears it. Setting a flag that is still set is a DeviceFault (the signal
  // would be lost).
  FlagId flag(std::string name);
  Event set_flag(PipeId pipe, FlagId flag);
  Event wait_flag(PipeId pipe, FlagId flag);

  // Counting semaphores: acquire blocks the pipe until the count is positive, then decrements.
  SemaphoreId semaphore(std::string name, std::uint32_t initial_count);
  Event release(PipeId pipe, SemaphoreId semaphore);
  Event acquire(PipeId pipe, SemaphoreId semaphore);

  // Every pipe of the core waits until all work issued before the barrier on every pipe is done.
  // A pipe that is still blocked on a flag or semaphore at this point can never be released:
  // DeviceFault (deadlock) naming the pipe and what it waits on.
  void barrier();

  // Ends the program: any wait still blocked is a deadlock DeviceFault; a flag set twice without
  // a wait between is reported too. After finish() every event is resolved. It only checks, so
  // it may be called again (runtime::Device::record_timeline does).
  void finish() const;

  bool resolved(Event event) const;
  // Start / end cycle of an operation; UserError if it is still blocked.
  std::uint64_t start_of(Event event) const;
  std::uint64_t end_of(Event event) const;

  // The cycle at which every resolved operation is done (the core's makespan so far).
  std::uint64_t end_cycle() const;
  std::uint64_t busy_cycles(PipeId pipe) const;
  std::uint64_t pipe_free_cycle(PipeId pipe) const;
  std::uint64_t operation_count() const { return static_cast<std::uint64_t>(ops_.size()); }

  // Bytes moved per memory level / link, accumulated by the DMA and by targets.
  void add_bytes_moved(const std::string& level, std::uint64_t bytes) {
    bytes_moved_[level] += bytes;
  }
  const std::map<std::string, std::uint64_t>& bytes_moved() const { return bytes_moved_; }

  // Happens-before between operations: program order on a pipe, dependencies, a wait after the
  // set it consumes, an acquire after the release that serves it, and barriers. Kept (one
  // vector clock per operation) only when turned on before the first operation is issued; the
  // base of race detection (sim/race.h). UserError when off, or for an unresolved operation.
  void set_track_order(bool enabled);
  bool track_order() const { return track_order_; }
  bool happens_before(Event a, Event b) const;
  PipeId pipe_of(Event event) const;

  // Busy intervals of the pipes are kept only while tracing is on (off by default).
  void set_trace(bool enabled) { trace_ = enabled; }
  bool trace() const { return trace_; }
  const std::vector<PipeInterval>& intervals() const { return intervals_; }

 private:
  enum class Kind : std::uint8_t { compute, set_flag, wait_flag, release, acquire, barrier };
  struct Op {
    Kind kind = Kind::compute;
    bool resolved = false;
    bool arrived = false;  // barrier: this pipe has reached it
    PipeId pipe = 0;
    std::uint32_t target = 0;  // flag / semaphore / barrier index
    std::uint64_t cycles = 0;
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::uint64_t sequence = 0;  // k-th set/wait/release/acquire of its flag or semaphore
  };
  // What only a blocked compute op needs: its name (for reports and the trace) and the
  // dependencies not yet resolved. Kept aside so that the per-op record stays small.
  struct Blocked {
    std::string name;
    std::vector<std::uint64_t> deps;
  };
  // A FIFO on a vector: unlike std::deque it allocates nothing until used, and most pipes never
  // block (a TPC launch builds one timeline per core and pipe).
  struct PendingOps {
    std::vector<std::uint64_t> items;
    std::size_t head = 0;
    bool empty() const { return head == items.size(); }
    std::uint64_t front() const { return items[head]; }
    void push_back(std::uint64_t index) { items.push_back(index); }
    void pop_front() {
      if (++head == items.size()) {
        items.clear();
        head = 0;
      }
    }
  };
  struct Pipe {
    std::string name;
    std::string track;  // core_ + "/" + name
    std::uint64_t free = 0;
    std::uint64_t busy = 0;
    PendingOps pending;  // op indices not yet resolved, in issue order
  };
  // The k-th wait of a flag consumes its k-th set; times are kUnresolved until known.
  struct Flag {
    std::string name;
    std::vector<std::uint64_t> set_ops;  // op index of each set
    std::vector<std::uint64_t> set_times;
    std::vector<std::uint64_t> wait_times;
    std::vector<PipeId> set_pipes;
  };
  // The k-th acquire is served by the initial count (k < initial) or by release k - initial.
  struct Semaphore {
    std::string name;
    std::uint32_t initial = 0;
    std::uint64_t acquires_issued = 0;
    std::vector<std::uint64_t> release_ops;  // op index of each release
    std::vector<std::uint64_t> release_times;
  };
  struct Barrier {
    std::size_t arrived = 0;
  };

  void check_pipe(PipeId pipe, std::string_view what) const;
  const Op& op_of(Event event, std::string_view what) const;
  Event push(Op op, std::string_view name = {}, std::vector<std::uint64_t> deps = {});
  void advance();
  bool try_resolve_front(PipeId pipe);
  void resolve(std::uint64_t index, std::uint64_t start, std::uint64_t end);
  void check_double_set(const Flag& flag, std::uint64_t set_index) const;
  [[noreturn]] void report_deadlock(std::string_view when) const;
  std::string blocked_reason(PipeId pipe) const;
  std::string label(std::uint64_t index) const;

  std::uint64_t serial_;
  std::string core_;
  const CostModel* cost_ = nullptr;
  std::uint64_t sync_cycles_ = 0;
  std::vector<Pipe> pipes_;
  std::vector<Op> ops_;
  std::unordered_map<std::uint64_t, Blocked> blocked_;  // by op index
  // The op being issued, while push() tries to resolve it at once.
  std::uint64_t issuing_ = ~std::uint64_t{0};
  std::string_view issuing_name_;
  const std::vector<std::uint64_t>* issuing_deps_ = nullptr;
  std::vector<Flag> flags_;
  std::vector<Semaphore> semaphores_;
  std::vector<Barrier> barriers_;
  std::size_t blocked_pipes_ = 0;  // pipes with pending ops
  std::map<std::string, std::uint64_t> bytes_moved_;
  bool trace_ = false;
  std::vector<PipeInterval> intervals_;
  std::uint64_t extent_ = 0;
  // Vector clocks (track_order_): per op, pipe_count() entries; per pipe, its last op's clock.
  void order(std::uint64_t index, std::span<const std::uint64_t> causes);
  const std::uint32_t* clock_of(std::uint64_t index) const {
    return op_clocks_.data() + index * pipes_.size();
  }
  bool track_order_ = false;
  std::vector<std::uint32_t> op_clocks_;
  std::vector<std::uint32_t> pipe_clocks_;
};

}  // namespace tessera::sim
