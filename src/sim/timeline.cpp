#include "tessera/sim/timeline.h"

#include <algorithm>
#include <atomic>
#include <limits>

#include <fmt/format.h>

#include "tessera/core/error.h"
#include "tessera/sim/cost_model.h"

namespace tessera::sim {
namespace {

constexpr std::uint64_t kUnresolved = std::numeric_limits<std::uint64_t>::max();

std::uint64_t next_serial() {
  static std::atomic<std::uint64_t> serial{0};
  return ++serial;
}

std::vector<std::string> pipe_names_of(const arch::MachineSpec& spec) {
  std::vector<std::string> names;
  for (const auto& p : spec.pipes) names.push_back(p.name);
  return names;
}

}  // namespace

Timeline::Timeline(std::string core, std::vector<std::string> pipe_names, const CostModel* cost)
    : serial_(next_serial()), core_(std::move(core)), cost_(cost) {
  if (pipe_names.empty()) throw_user_error("timeline of {}: a core needs at least one pipe", core_);
  for (auto& name : pipe_names) {
    for (const auto& p : pipes_)
      if (p.name == name)
        throw_user_error("timeline of {}: pipe '{}' is listed twice", core_, name);
    std::string track = core_ + "/" + name;
    pipes_.push_back(Pipe{std::move(name), std::move(track), 0, 0, {}});
  }
  if (cost_ != nullptr) sync_cycles_ = cost_->sync_cycles();
}

Timeline::Timeline(std::string core, const arch::MachineSpec& spec, const CostModel* cost)
    : Timeline(std::move(core), pipe_names_of(spec), cost) {}

Timeline::Timeline(Timeline&&) noexcept = default;
Timeline& Timeline::operator=(Timeline&&) noexcept = default;
Timeline::~Timeline() = default;

PipeId Timeline::pipe(std::string_view name) const {
  for (std::size_t i = 0; i < pipes_.size(); ++i)
    if (pipes_[i].name == name) return static_cast<PipeId>(i);
  std::string names;
  for (const auto& p : pipes_) names += (names.empty() ? "" : ", ") + p.name;
  throw_user_error("{} has no pipe '{}'; its pipes are: {}", core_, name, names);
}

const std::string& Timeline::pipe_name(PipeId pipe) const {
  check_pipe(pipe, "pipe_name");
  return pipes_[pipe].name;
}

const std::string& Timeline::pipe_track(PipeId pipe) const {
  check_pipe(pipe, "pipe_track");
  return pipes_[pipe].track;
}

void Timeline::check_pipe(PipeId pipe, std::string_view what) const {
  if (pipe >= pipes_.size())
    throw_user_error("{}: {} on pipe #{}, but the core has {} pipes", core_, what, pipe,
                     pipes_.size());
}

const Timeline::Op& Timeline::op_of(Event event, std::string_view what) const {
  if (event.timeline != serial_ || event.index >= ops_.size())
    throw_user_error("{}: {} got an event that was not issued on this core's timeline", core_,
                     what);
  return ops_[event.index];
}

Event Timeline::issue(PipeId pipe, std::string_view name, std::uint64_t cycles,
                      std::initializer_list<Event> deps) {
  return issue(pipe, name, cycles, std::span<const Event>(deps.begin(), deps.size()));
}

Event Timeline::issue(PipeId pipe, std::string_view name, std::uint64_t cycles,
                      std::span<const Event> deps) {
  return issue_at(pipe, name, 0, cycles, deps);
}

Event Timeline::issue_at(PipeId pipe, std::string_view name, std::uint64_t not_before,
                         std::uint64_t cycles, std::span<const Event> deps) {
  check_pipe(pipe, "issue_at");
  Op op;
  op.kind = Kind::compute;
  op.pipe = pipe;
  op.cycles = cycles;
  op.start = not_before;
  std::vector<std::uint64_t> pending;
  for (const Event& d : deps) {
    const Op& dep = op_of(d, "issue");
    // Resolved dependencies are folded into a ready time; only pending ones are remembered
    // (all of them when order is tracked: they are edges of happens-before).
    if (dep.resolved) op.start = std::max(op.start, dep.end);
    if (!dep.resolved || track_order_) pending.push_back(d.index);
  }
  return push(op, name, std::move(pending));
}

std::uint64_t Timeline::ready_cycle(PipeId pipe, std::span<const Event> deps) const {
  check_pipe(pipe, "ready_cycle");
  const Pipe& p = pipes_[pipe];
  if (!p.pending.empty())
    throw_user_error("{}: pipe '{}' is blocked, so the start of new work on it is not known yet",
                     core_, p.name);
  std::uint64_t ready = p.free;
  for (const Event& d : deps) {
    const Op& dep = op_of(d, "ready_cycle");
    if (!dep.resolved)
      throw_user_error("{}: a dependency of new work on '{}' is still blocked", core_, p.name);
    ready = std::max(ready, dep.end);
  }
  return ready;
}

PipeId Timeline::add_pipe(std::string name) {
  if (track_order_)
    throw_user_error("timeline of {}: add pipes before turning on order tracking", core_);
  for (const auto& p : pipes_)
    if (p.name == name) throw_user_error("timeline of {}: pipe '{}' exists already", core_, name);
  std::string track = core_ + "/" + name;
  pipes_.push_back(Pipe{std::move(name), std::move(track), 0, 0, {}});
  return static_cast<PipeId>(pipes_.size() - 1);
}

FlagId Timeline::flag(std::string name) {
  flags_.push_back(Flag{std::move(name), {}, {}, {}});
  return FlagId{static_cast<std::uint32_t>(flags_.size() - 1)};
}

Event Timeline::set_flag(PipeId pipe, FlagId flag) {
  check_pipe(pipe, "set_flag");
  if (flag.index >= flags_.size())
    throw_user_error("{}: set_flag on an unknown flag #{}", core_, flag.index);
  Flag& f = flags_[flag.index];
  Op op;
  op.kind = Kind::set_flag;
  op.pipe = pipe;
  op.target = flag.index;
  op.sequence = f.set_times.size();
  f.set_times.push_back(kUnresolved);
  f.set_pipes.push_back(pipe);
  f.set_ops.push_back(ops_.size());
  return push(op);
}

Event Timeline::wait_flag(PipeId pipe, FlagId flag) {
  check_pipe(pipe, "wait_flag");
  if (flag.index >= flags_.size())
    throw_user_error("{}: wait_flag on an unknown flag #{}", core_, flag.index);
  Flag& f = flags_[flag.index];
  Op op;
  op.kind = Kind::wait_flag;
  op.pipe = pipe;
  op.target = flag.index;
  op.sequence = f.wait_times.size();
  f.wait_times.push_back(kUnresolved);
  return push(op);
}

SemaphoreId Timeline::semaphore(std::string name, std::uint32_t initial_count) {
  semaphores_.push_back(Semaphore{std::move(name), initial_count, 0, {}});
  return SemaphoreId{static_cast<std::uint32_t>(semaphores_.size() - 1)};
}

Event Timeline::release(PipeId pipe, SemaphoreId semaphore) {
  check_pipe(pipe, "release");
  if (semaphore.index >= semaphores_.size())
    throw_user_error("{}: release of an unknown semaphore #{}", core_, semaphore.index);
  Semaphore& s = semaphores_[semaphore.index];
  Op op;
  op.kind = Kind::release;
  op.pipe = pipe;
  op.target = semaphore.index;
  op.sequence = s.release_times.size();
  s.release_times.push_back(kUnresolved);
  s.release_ops.push_back(ops_.size());
  return push(op);
}

Event Timeline::acquire(PipeId pipe, SemaphoreId semaphore) {
  check_pipe(pipe, "acquire");
  if (semaphore.index >= semaphores_.size())
    throw_user_error("{}: acquire of an unknown semaphore #{}", core_, semaphore.index);
  Semaphore& s = semaphores_[semaphore.index];
  Op op;
  op.kind = Kind::acquire;
  op.pipe = pipe;
  op.target = semaphore.index;
  op.sequence = s.acquires_issued++;
  return push(op);
}

void Timeline::barrier() {
  barriers_.push_back(Barrier{});
  auto index = static_cast<std::uint32_t>(barriers_.size() - 1);
  for (PipeId p = 0; p < pipes_.size(); ++p) {
    Op op;
    op.kind = Kind::barrier;
    op.pipe = p;
    op.target = index;
    push(op);
  }
  // Everything issued later sits behind the barrier, so a pipe still blocked now never wakes.
  if (barriers_[index].arrived != pipes_.size()) report_deadlock("at a barrier");
}

void Timeline::finish() const {
  if (blocked_pipes_ > 0) report_deadlock("at the end of the program");
  for (const Flag& f : flags_) {
    // A set with no wait consuming the one before it: the flag was set while still set.
    for (std::uint64_t k = 1; k < f.set_times.size(); ++k)
      if (k - 1 >= f.wait_times.size())
        throw DeviceFault(core_, fmt::format("flag '{}' is set twice without a wait_flag between "
                                             "(set #{} by pipe {}, set #{} by pipe {}); the second "
                                             "signal is lost: add the matching wait_flag or use "
                                             "another flag",
                                             f.name, k, pipes_[f.set_pipes[k - 1]].name, k + 1,
                                             pipes_[f.set_pipes[k]].name));
  }
}

Event Timeline::push(Op op, std::string_view name, std::vector<std::uint64_t> deps) {
  PipeId p = op.pipe;
  ops_.push_back(op);
  std::uint64_t index = ops_.size() - 1;
  Pipe& pipe = pipes_[p];
  bool was_blocked = !pipe.pending.empty();
  pipe.pending.push_back(index);
  if (!was_blocked) {
    issuing_ = index;
    issuing_name_ = name;
    issuing_deps_ = &deps;
    bool done = try_resolve_front(p);
    issuing_ = ~std::uint64_t{0};
    issuing_deps_ = nullptr;
    if (done) {
      // The common case: nothing else is blocked, so nothing else can move.
      if (blocked_pipes_ > 0) advance();
      return Event{serial_, index};
    }
    ++blocked_pipes_;
  }
  if (op.kind == Kind::compute)
    blocked_.emplace(index, Blocked{std::string(name), std::move(deps)});
  advance();
  return Event{serial_, index};
}

void Timeline::advance() {
  bool progress = true;
  while (progress && blocked_pipes_ > 0) {
    progress = false;
    for (PipeId p = 0; p < pipes_.size(); ++p) {
      Pipe& pipe = pipes_[p];
      if (pipe.pending.empty()) continue;
      while (!pipe.pending.empty() && try_resolve_front(p)) progress = true;
      if (pipe.pending.empty()) --blocked_pipes_;
    }
  }
}

void Timeline::resolve(std::uint64_t index, std::uint64_t start, std::uint64_t end) {
  Op& op = ops_[index];
  Pipe& pipe = pipes_[op.pipe];
  op.start = start;
  op.end = end;
  op.resolved = true;
  pipe.free = std::max(pipe.free, end);
  if (op.kind != Kind::barrier) pipe.busy += end - start;
  if (trace_ && end > start) intervals_.push_back(PipeInterval{op.pipe, label(index), start, end});
  if (op.kind == Kind::compute && index != issuing_) blocked_.erase(index);
}

// Resolves the first pending op of a pipe if it can run; pops it and returns true if it did.
bool Timeline::try_resolve_front(PipeId p) {
  Pipe& pipe = pipes_[p];
  std::uint64_t index = pipe.pending.front();
  Op& op = ops_[index];
  switch (op.kind) {
    case Kind::compute: {
      std::uint64_t ready = std::max(pipe.free, op.start);
      const std::vector<std::uint64_t>* deps = nullptr;
      if (index == issuing_) {
        deps = issuing_deps_;
      } else if (auto it = blocked_.find(index); it != blocked_.end()) {
        deps = &it->second.deps;
      }
      if (deps != nullptr) {
        for (std::uint64_t d : *deps) {
          if (!ops_[d].resolved) return false;
          ready = std::max(ready, ops_[d].end);
        }
      }
      if (track_order_)
        order(index,
              deps ? std::span<const std::uint64_t>(*deps) : std::span<const std::uint64_t>());
      resolve(index, ready, ready + op.cycles);
      break;
    }
    case Kind::set_flag: {
      Flag& f = flags_[op.target];
      std::uint64_t start = pipe.free;
      if (track_order_) order(index, {});
      resolve(index, start, start + sync_cycles_);
      f.set_times[op.sequence] = op.end;
      if (op.sequence > 0) check_double_set(f, op.sequence);
      break;
    }
    case Kind::wait_flag: {
      Flag& f = flags_[op.target];
      if (op.sequence >= f.set_times.size() || f.set_times[op.sequence] == kUnresolved)
        return false;
      std::uint64_t start = pipe.free;
      // Stalled cycles before the flag arrives are not busy time; only the hand-over is.
      std::uint64_t arrive = std::max(start, f.set_times[op.sequence]);
      if (track_order_) {
        const std::uint64_t set_op = f.set_ops[op.sequence];
        order(index, std::span<const std::uint64_t>(&set_op, 1));
      }
      resolve(index, arrive, arrive + sync_cycles_);
      f.wait_times[op.sequence] = op.end;
      if (op.sequence + 1 < f.set_times.size() && f.set_times[op.sequence + 1] != kUnresolved)
        check_double_set(f, op.sequence + 1);
      break;
    }
    case Kind::release: {
      Semaphore& s = semaphores_[op.target];
      std::uint64_t start = pipe.free;
      if (track_order_) order(index, {});
      resolve(index, start, start + sync_cycles_);
      s.release_times[op.sequence] = op.end;
      break;
    }
    case Kind::acquire: {
      Semaphore& s = semaphores_[op.target];
      std::uint64_t start = pipe.free;
      std::uint64_t ready = start;
      std::uint64_t served_by = kUnresolved;
      if (op.sequence >= s.initial) {
        std::uint64_t k = op.sequence - s.initial;
        if (k >= s.release_times.size() || s.release_times[k] == kUnresolved) return false;
        ready = std::max(ready, s.release_times[k]);
        served_by = s.release_ops[k];
      }
      if (track_order_)
        order(index, served_by == kUnresolved ? std::span<const std::uint64_t>()
                                              : std::span<const std::uint64_t>(&served_by, 1));
      resolve(index, ready, ready + sync_cycles_);
      break;
    }
    case Kind::barrier: {
      Barrier& b = barriers_[op.target];
      if (!op.arrived) {
        op.arrived = true;
        ++b.arrived;
      }
      if (b.arrived < pipes_.size()) return false;
      // Everyone is here: all pipes leave together once the slowest is free.
      std::uint64_t t = 0;
      for (const Pipe& other : pipes_) t = std::max(t, other.free);
      std::uint64_t leave = t + sync_cycles_;
      if (track_order_) {
        // Every pipe's barrier op knows everything before the barrier on every pipe.
        std::vector<std::uint32_t> joined(pipes_.size(), 0);
        for (PipeId q = 0; q < pipes_.size(); ++q)
          for (std::size_t k = 0; k < pipes_.size(); ++k)
            joined[k] = std::max(joined[k], pipe_clocks_[q * pipes_.size() + k]);
        for (PipeId q = 0; q < pipes_.size(); ++q)
          std::copy(joined.begin(), joined.end(), pipe_clocks_.begin() + q * pipes_.size());
        for (PipeId q = 0; q < pipes_.size(); ++q) {
          if (q == p) continue;
          order(pipes_[q].pending.front(), {});
        }
        order(index, {});
      }
      for (PipeId q = 0; q < pipes_.size(); ++q) {
        if (q == p) continue;
        Pipe& other = pipes_[q];
        resolve(other.pending.front(), t, leave);
        other.pending.pop_front();
        // Pipes already visited in this sweep are still counted as blocked; fix the count here.
        if (other.pending.empty()) --blocked_pipes_;
      }
      resolve(index, t, leave);
      break;
    }
  }
  pipe.pending.pop_front();
  return true;
}

// Sync operations carry no name of their own (building one per op would dominate the cost of
// issuing); it is derived when a trace or a report needs it.
std::string Timeline::label(std::uint64_t index) const {
  const Op& op = ops_[index];
  switch (op.kind) {
    case Kind::compute: {
      if (index == issuing_) return std::string(issuing_name_);
      auto it = blocked_.find(index);
      return it == blocked_.end() ? std::string() : it->second.name;
    }
    case Kind::set_flag:
      return "set_flag " + flags_[op.target].name;
    case Kind::wait_flag:
      return "wait_flag " + flags_[op.target].name;
    case Kind::release:
      return "release " + semaphores_[op.target].name;
    case Kind::acquire:
      return "acquire " + semaphores_[op.target].name;
    case Kind::barrier:
      return "barrier";
  }
  return {};
}

void Timeline::check_double_set(const Flag& f, std::uint64_t set_index) const {
  // Set k is lost if it happens while set k-1 is still waiting to be consumed by wait k-1.
  std::uint64_t previous_wait =
      set_index - 1 < f.wait_times.size() ? f.wait_times[set_index - 1] : kUnresolved;
  if (previous_wait == kUnresolved) return;  // decided when that wait resolves, or at finish()
  if (f.set_times[set_index] < previous_wait)
    throw DeviceFault(
        core_, fmt::format("flag '{}' is set again by pipe {} at cycle {} while still "
                           "set (set #{} by pipe {} is consumed only at cycle {}); "
                           "the signal would be lost: wait for the flag before "
                           "setting it again, or use another flag",
                           f.name, pipes_[f.set_pipes[set_index]].name, f.set_times[set_index],
                           set_index, pipes_[f.set_pipes[set_index - 1]].name, previous_wait));
}

std::string Timeline::blocked_reason(PipeId p) const {
  const Pipe& pipe = pipes_[p];
  const Op& op = ops_[pipe.pending.front()];
  switch (op.kind) {
    case Kind::wait_flag: {
      const Flag& f = flags_[op.target];
      std::string why =
          op.sequence < f.set_times.size()
              ? fmt::format("its set_flag #{} is stuck on blocked pipe {}", op.sequence + 1,
                            pipes_[f.set_pipes[op.sequence]].name)
              : fmt::format("only {} set_flag(s) of it were issued", f.set_times.size());
      return fmt::format("pipe {} waits on flag '{}' (wait #{}) but {}", pipe.name, f.name,
                         op.sequence + 1, why);
    }
    case Kind::acquire: {
      const Semaphore& s = semaphores_[op.target];
      return fmt::format(
          "pipe {} acquires semaphore '{}' (acquire #{}) but its count starts at {} and "
          "only {} release(s) were issued or can still run",
          pipe.name, s.name, op.sequence + 1, s.initial, s.release_times.size());
    }
    case Kind::barrier:
      return fmt::format("pipe {} waits at a barrier", pipe.name);
    case Kind::compute:
      return fmt::format("pipe {} holds '{}', which depends on blocked work", pipe.name,
                         label(pipe.pending.front()));
    case Kind::set_flag:
    case Kind::release:
      break;
  }
  return fmt::format("pipe {} is blocked at '{}'", pipe.name, label(pipe.pending.front()));
}

void Timeline::report_deadlock(std::string_view when) const {
  // Waits on flags and semaphores are the cause; the other blocked pipes only follow them.
  std::string causes, others;
  for (PipeId p = 0; p < pipes_.size(); ++p) {
    if (pipes_[p].pending.empty()) continue;
    Kind k = ops_[pipes_[p].pending.front()].kind;
    std::string& list = (k == Kind::wait_flag || k == Kind::acquire) ? causes : others;
    list += (list.empty() ? "" : "; ") + blocked_reason(p);
  }
  throw DeviceFault(core_, fmt::format("deadlock detected {}: {}{}{}; every other pipe is finished "
                                       "or blocked. Issue the matching set_flag / release before "
                                       "the barrier or the end of the program, or remove the wait",
                                       when, causes.empty() ? others : causes,
                                       causes.empty() || others.empty() ? "" : "; also ",
                                       causes.empty() ? "" : others));
}

bool Timeline::resolved(Event event) const {
  return op_of(event, "resolved()").resolved;
}

std::uint64_t Timeline::start_of(Event event) const {
  const Op& op = op_of(event, "start_of()");
  if (!op.resolved)
    throw_user_error("{}: the operation is still blocked (pipe {}); call finish() first", core_,
                     pipes_[op.pipe].name);
  return op.start;
}

std::uint64_t Timeline::end_of(Event event) const {
  const Op& op = op_of(event, "end_of()");
  if (!op.resolved)
    throw_user_error("{}: the operation is still blocked (pipe {}); call finish() first", core_,
                     pipes_[op.pipe].name);
  return op.end;
}

void Timeline::set_track_order(bool enabled) {
  if (!ops_.empty())
    throw_user_error("{}: order tracking must be turned on before the first operation", core_);
  track_order_ = enabled;
  pipe_clocks_.assign(enabled ? pipes_.size() * pipes_.size() : 0, 0);
}

void Timeline::order(std::uint64_t index, std::span<const std::uint64_t> causes) {
  const std::size_t n = pipes_.size();
  const PipeId p = ops_[index].pipe;
  std::uint32_t* mine = pipe_clocks_.data() + p * n;
  for (std::uint64_t c : causes) {
    const std::uint32_t* theirs = clock_of(c);
    for (std::size_t k = 0; k < n; ++k) mine[k] = std::max(mine[k], theirs[k]);
  }
  mine[p] += 1;
  if (op_clocks_.size() < (index + 1) * n) op_clocks_.resize((index + 1) * n, 0);
  std::copy(mine, mine + n, op_clocks_.begin() + static_cast<std::ptrdiff_t>(index * n));
}

bool Timeline::happens_before(Event a, Event b) const {
  if (!track_order_)
    throw_user_error("{}: happens_before needs set_track_order(true) before the first operation",
                     core_);
  const Op& x = op_of(a, "happens_before");
  const Op& y = op_of(b, "happens_before");
  if (!x.resolved || !y.resolved)
    throw_user_error("{}: happens_before of an operation that is still blocked", core_);
  if (a.index == b.index) return false;
  // a precedes b iff b's clock has seen a's own tick on a's pipe.
  return clock_of(a.index)[x.pipe] <= clock_of(b.index)[x.pipe];
}

PipeId Timeline::pipe_of(Event event) const {
  return op_of(event, "pipe_of").pipe;
}

std::uint64_t Timeline::end_cycle() const {
  std::uint64_t end = extent_;
  for (const Pipe& p : pipes_) end = std::max(end, p.free);
  return end;
}

std::uint64_t Timeline::busy_cycles(PipeId pipe) const {
  check_pipe(pipe, "busy_cycles");
  return pipes_[pipe].busy;
}

std::uint64_t Timeline::pipe_free_cycle(PipeId pipe) const {
  check_pipe(pipe, "pipe_free_cycle");
  return pipes_[pipe].free;
}

}  // namespace tessera::sim
