#include "tessera/sim/cache.h"

#include <algorithm>
#include <numeric>

#include "tessera/core/error.h"

namespace tessera::sim {

SharedCache::SharedCache(std::string name, std::uint64_t capacity_bytes, std::uint64_t line_bytes)
    : name_(std::move(name)), line_(line_bytes), lines_cap_(0) {
  if (line_bytes == 0 || (line_bytes & (line_bytes - 1)) != 0)
    throw_user_error(
        "cache '{}': line of {} B is not a power of two; give its line size as a "
        "power of two (the memory's alignment_bytes)",
        name_, line_bytes);
  if (capacity_bytes < line_bytes || capacity_bytes % line_bytes != 0)
    throw_user_error(
        "cache '{}': capacity of {} B is not a positive multiple of its {}-byte "
        "line; give a capacity in whole lines",
        name_, capacity_bytes, line_bytes);
  lines_cap_ = capacity_bytes / line_bytes;
  where_.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(lines_cap_, 1 << 20)));
}

bool SharedCache::touch(std::uint64_t line) {
  auto it = where_.find(line);
  if (it != where_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return true;
  }
  if (where_.size() == lines_cap_) {
    where_.erase(lru_.back());
    lru_.pop_back();
  }
  lru_.push_front(line);
  where_.emplace(line, lru_.begin());
  return false;
}

std::vector<CacheTraffic> SharedCache::serve(std::span<const GlobalAccess> accesses,
                                             std::size_t agents) {
  std::vector<std::size_t> order(accesses.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const GlobalAccess &x = accesses[a], &y = accesses[b];
    return x.cycle != y.cycle ? x.cycle < y.cycle : x.agent < y.agent;
  });
  std::vector<CacheTraffic> out(agents);
  for (std::size_t i : order) {
    const GlobalAccess& a = accesses[i];
    if (a.agent >= agents)
      throw_user_error("cache '{}': an access names agent {} of {}", name_, a.agent, agents);
    if (a.bytes == 0) continue;
    CacheTraffic& t = out[a.agent];
    const std::uint64_t first = a.address / line_, last = (a.address + a.bytes - 1) / line_;
    for (std::uint64_t line = first; line <= last; ++line) {
      const std::uint64_t lo = std::max(a.address, line * line_);
      const std::uint64_t hi = std::min(a.address + a.bytes, (line + 1) * line_);
      const bool hit = touch(line);
      if (a.write) {
        t.write_bytes += hi - lo;
        t.global_bytes += hi - lo;
      } else if (hit) {
        t.hit_bytes += hi - lo;
      } else {
        t.miss_bytes += hi - lo;
        t.global_bytes += line_;
      }
    }
  }
  return out;
}

bool SharedCache::holds(std::uint64_t address, std::uint64_t bytes) const {
  if (bytes == 0) return true;
  for (std::uint64_t line = address / line_; line <= (address + bytes - 1) / line_; ++line)
    if (!where_.count(line)) return false;
  return true;
}

void SharedCache::invalidate(std::uint64_t address, std::uint64_t bytes) {
  if (bytes == 0 || where_.empty()) return;
  const std::uint64_t first = address / line_, last = (address + bytes - 1) / line_;
  if (last - first < where_.size()) {
    for (std::uint64_t line = first; line <= last; ++line)
      if (auto it = where_.find(line); it != where_.end()) {
        lru_.erase(it->second);
        where_.erase(it);
      }
    return;
  }
  for (auto it = lru_.begin(); it != lru_.end();)
    if (*it >= first && *it <= last) {
      where_.erase(*it);
      it = lru_.erase(it);
    } else {
      ++it;
    }
}

void SharedCache::clear() {
  lru_.clear();
  where_.clear();
}

}  // namespace tessera::sim
