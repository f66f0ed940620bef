// A cache shared by every core of a device in front of its global memory (the L2 of an Ascend
// 910, say): which of the global accesses a kernel made hit, and which go on to global memory.
// Fully associative, least-recently-used lines, write-allocate and write-through (a write
// installs its lines and still goes to global memory). Accesses from all cores are served in
// the order of the cycle they were issued at (ties: core, then program order), so the outcome
// never depends on the host threads that ran the cores. Cost is per line touched, not per byte.
#pragma once

#include <cstdint>
#include <list>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace tessera::sim {

// One global-memory access of a kernel: `bytes` from `address` by `agent` (a core) at `cycle`
// of its own timeline.
struct GlobalAccess {
  std::uint64_t cycle = 0;
  std::uint32_t agent = 0;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  bool write = false;
};

// What a cache did for one agent: bytes read that hit, bytes read that missed (fetched from
// global memory by whole lines) and bytes written (passed through to global memory).
struct CacheTraffic {
  std::uint64_t hit_bytes = 0;
  std::uint64_t miss_bytes = 0;
  std::uint64_t write_bytes = 0;
  // Bytes the agent draws from global memory: the lines its misses fetch, plus its writes.
  std::uint64_t global_bytes = 0;
};

class SharedCache {
 public:
  // `name` for messages; capacity and line in bytes: line a power of two, capacity a positive
  // multiple of it (UserError otherwise).
  SharedCache(std::string name, std::uint64_t capacity_bytes, std::uint64_t line_bytes);

  const std::string& name() const { return name_; }
  std::uint64_t capacity() const { return lines_cap_ * line_; }
  std::uint64_t line_bytes() const { return line_; }
  std::size_t resident_lines() const { return where_.size(); }

  // Serves the accesses in (cycle, agent, given order) order; returns the traffic of agents
  // 0 .. agents-1 (an access naming an agent beyond that is a UserError). The cache keeps its
  // lines for later calls.
  std::vector<CacheTraffic> serve(std::span<const GlobalAccess> accesses, std::size_t agents);
  // True when every line of [address, address + bytes) is resident (tests, reports).
  bool holds(std::uint64_t address, std::uint64_t bytes) const;
  // Drops the lines of [address, address + bytes): the memory was freed or rewritten from the
  // host, so what the cache held there is stale.
  void invalidate(std::uint64_t address, std::uint64_t bytes);
  void clear();

 private:
  // Touches one line: true on a hit. A miss installs it, evicting the least recently used.
  bool touch(std::uint64_t line);

  std::string name_;
  std::uint64_t line_;
  std::uint64_t lines_cap_;
  std::list<std::uint64_t> lru_;  // most recent first
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where_;
};

}  // namespace tessera::sim
