#include "tessera/sim/bandwidth.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "tessera/core/error.h"

namespace tessera::sim {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Rates below this share of the channel count as nothing left (rounding of earlier work).
constexpr double kNegligible = 1e-9;
// No cycle count may exceed this: cost models saturate rather than overflow.
constexpr double kMaxCycle = 9.0e18;
}  // namespace

BandwidthChannel::BandwidthChannel(std::string name, double bytes_per_cycle)
    : name_(std::move(name)), bandwidth_(bytes_per_cycle) {
  if (!(bandwidth_ > 0) || !std::isfinite(bandwidth_))
    throw_user_error(
        "memory channel '{}': bandwidth {} bytes per cycle must be positive and finite", name_,
        bandwidth_);
  used_[0] = 0;
}

void BandwidthChannel::clear() {
  used_.clear();
  used_[0] = 0;
  bytes_placed_ = 0;
}

double BandwidthChannel::used_at(std::uint64_t cycle) const {
  auto it = used_.upper_bound(static_cast<double>(cycle));
  return std::prev(it)->second;
}

void BandwidthChannel::add_usage(double from, double to, double rate) {
  if (!(to > from) || rate <= 0) return;
  // Split the breakpoints at both ends, then raise every segment in between.
  for (double at : {from, to}) {
    if (!std::isfinite(at)) continue;
    auto it = used_.upper_bound(at);
    const double before = std::prev(it)->second;
    used_.emplace(at, before);
  }
  for (auto it = used_.find(from); it != used_.end() && it->first < to; ++it) it->second += rate;
}

std::vector<std::uint64_t> BandwidthChannel::reserve(std::uint64_t start,
                                                     std::span<const ChannelDemand> group) {
  const std::size_t n = group.size();
  std::vector<std::uint64_t> ends(n, start);
  std::vector<double> remaining(n), cap(n);
  std::vector<std::size_t> active;
  for (std::size_t i = 0; i < n; ++i) {
    const ChannelDemand& d = group[i];
    ends[i] = start + d.natural_cycles;
    if (d.bytes == 0) continue;
    remaining[i] = static_cast<double>(d.bytes);
    cap[i] =
        d.natural_cycles > 0 ? remaining[i] / static_cast<double>(d.natural_cycles) : kInfinity;
    active.push_back(i);
    bytes_placed_ += remaining[i];
  }
  double t = static_cast<double>(start);
  std::vector<double> rate(n, 0);
  while (!active.empty()) {
    if (t > kMaxCycle)
      throw_user_error(
          "memory channel '{}': work would end past cycle {:.3g}; the preset's bandwidth ({} bytes "
          "per cycle) is too small for the bytes moved",
          name_, kMaxCycle, bandwidth_);
    auto seg = used_.upper_bound(t);
    const double segment_end = seg == used_.end() ? kInfinity : seg->first;
    const double free = std::max(0.0, bandwidth_ - std::prev(seg)->second);
    if (free <= bandwidth_ * kNegligible) {  // nothing left here: wait for the next breakpoint
      t = segment_end;
      continue;
    }
    // Max-min fair share of `free` under each agent's cap: fill the smallest caps first.
    std::vector<std::size_t> order = active;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return cap[a] != cap[b] ? cap[a] < cap[b] : a < b;
    });
    double left = free;
    for (std::size_t k = 0; k < order.size(); ++k) {
      const double share = left / static_cast<double>(order.size() - k);
      rate[order[k]] = std::min(cap[order[k]], share);
      left -= rate[order[k]];
    }
    // Advance to the first agent's completion or the segment's end.
    double step = segment_end - t;
    for (std::size_t i : active) step = std::min(step, remaining[i] / rate[i]);
    double total_rate = 0;
    for (std::size_t i : active) total_rate += rate[i];
    add_usage(t, t + step, total_rate);
    std::vector<std::size_t> still;
    for (std::size_t i : active) {
      const double finish = remaining[i] / rate[i];
      if (finish <= step * (1 + 1e-12)) {
        if (t + finish > kMaxCycle)
          throw_user_error(
              "memory channel '{}': {} bytes at {} bytes per cycle would end past cycle {:.3g}; "
              "the preset's bandwidth is too small for the work",
              name_, group[i].bytes, bandwidth_, kMaxCycle);
        const double end = std::ceil(t + finish - 1e-9);
        ends[i] = std::max(ends[i], static_cast<std::uint64_t>(end));
      } else {
        remaining[i] -= rate[i] * step;
        still.push_back(i);
      }
    }
    active.swap(still);
    t += step;
  }
  return ends;
}

std::uint64_t BandwidthChannel::reserve(std::uint64_t start, ChannelDemand demand) {
  return reserve(start, std::span<const ChannelDemand>(&demand, 1)).front();
}

}  // namespace tessera::sim
