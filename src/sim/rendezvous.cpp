#include "tessera/sim/rendezvous.h"

#include <algorithm>
#include <limits>

#include "tessera/core/error.h"

namespace tessera::sim {

namespace {
constexpr std::size_t kLeft = std::numeric_limits<std::size_t>::max();
}

Rendezvous::Rendezvous(std::size_t parties, std::uint64_t cost)
    : parties_(parties), cost_(cost), reached_(parties, 0) {
  if (parties == 0) throw_internal_error("Rendezvous of no parties");
}

Rendezvous::Result Rendezvous::arrive(std::size_t party, std::uint64_t cycle,
                                      const std::function<void()>& on_block,
                                      const std::function<void()>& on_met) {
  std::unique_lock lock(mutex_);
  if (party >= parties_ || reached_[party] == kLeft)
    throw_internal_error("Rendezvous: party {} of {} arrives after it left", party, parties_);
  const std::size_t meeting = reached_[party]++;
  if (meeting != meeting_)
    throw_internal_error("Rendezvous: party {} arrives at meeting {} while {} gathers", party,
                         meeting, meeting_);
  Result r;
  r.meeting = meeting;
  if (aborted_) {
    r.outcome = Outcome::aborted;
    return r;
  }
  if (orphaned_) {
    r.outcome = Outcome::orphaned;
    r.missing = orphaned_by_;
    return r;
  }
  latest_ = std::max(latest_, cycle);
  if (++arrived_ == parties_) {
    on_met();
    release_.push_back(latest_ + cost_);
    arrived_ = 0;
    latest_ = 0;
    ++meeting_;
    wake_.notify_all();
    r.cycle = release_.back();
    return r;
  }
  lock.unlock();
  on_block();
  lock.lock();
  wake_.wait(lock, [&] { return meeting_ > meeting || aborted_ || orphaned_; });
  if (meeting_ > meeting) {
    r.cycle = release_[meeting];
  } else if (aborted_) {
    r.outcome = Outcome::aborted;
  } else {
    r.outcome = Outcome::orphaned;
    r.missing = orphaned_by_;
  }
  return r;
}

void Rendezvous::leave(std::size_t party) {
  std::lock_guard lock(mutex_);
  if (party >= parties_) throw_internal_error("Rendezvous: party {} of {} leaves", party, parties_);
  // Arriving parties wait for one that will never come.
  if (reached_[party] <= meeting_ && !orphaned_) {
    orphaned_ = true;
    orphaned_by_ = party;
    wake_.notify_all();
  }
  reached_[party] = kLeft;
}

void Rendezvous::abort() {
  std::lock_guard lock(mutex_);
  aborted_ = true;
  wake_.notify_all();
}

std::size_t Rendezvous::meetings() const {
  std::lock_guard lock(mutex_);
  return release_.size();
}

}  // namespace tessera::sim
