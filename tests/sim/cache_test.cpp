// The shared cache in front of global memory: hits and misses by line, least-recently-used
// eviction, write-through, invalidation, and an outcome that depends only on the cycles of the
// accesses, never on the order the host threads logged them in.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/sim/cache.h"

namespace tessera::sim {
namespace {

TEST(SharedCache, RejectsLinesThatAreNotPowersOfTwoAndPartialLines) {
  EXPECT_THROW(SharedCache("l2", 1024, 96), UserError);
  EXPECT_THROW(SharedCache("l2", 1000, 64), UserError);
  EXPECT_THROW(SharedCache("l2", 0, 64), UserError);
}

TEST(SharedCache, ASecondReadHitsAndMissesFetchWholeLines) {
  SharedCache c("l2", 4096, 64);
  const GlobalAccess first{0, 0, 1000, 100, false};  // lines 15, 16, 17
  auto t = c.serve(std::vector<GlobalAccess>{first}, 1);
  EXPECT_EQ(t[0].miss_bytes, 100u);
  EXPECT_EQ(t[0].hit_bytes, 0u);
  EXPECT_EQ(t[0].global_bytes, 3u * 64);  // three lines fetched
  EXPECT_TRUE(c.holds(960, 192));
  // Another core reads part of the same lines later: hits, nothing from global memory.
  t = c.serve(std::vector<GlobalAccess>{{5, 1, 1024, 64, false}}, 2);
  EXPECT_EQ(t[1].hit_bytes, 64u);
  EXPECT_EQ(t[1].global_bytes, 0u);
}

TEST(SharedCache, EvictsTheLeastRecentlyUsedLine) {
  SharedCache c("l2", 4 * 64, 64);  // four lines
  std::vector<GlobalAccess> a;
  for (std::uint64_t line = 0; line < 4; ++line) a.push_back({line, 0, line * 64, 64, false});
  a.push_back({10, 0, 0, 64, false});       // line 0 becomes the most recent
  a.push_back({11, 0, 4 * 64, 64, false});  // line 4 evicts line 1, the least recent
  const auto t = c.serve(a, 1);
  EXPECT_EQ(t[0].hit_bytes, 64u);
  EXPECT_TRUE(c.holds(0, 64));
  EXPECT_FALSE(c.holds(64, 64));
  EXPECT_TRUE(c.holds(128, 3 * 64));
  EXPECT_EQ(c.resident_lines(), 4u);
}

TEST(SharedCache, WritesGoThroughAndInstallTheirLines) {
  SharedCache c("l2", 4096, 64);
  auto t = c.serve(std::vector<GlobalAccess>{{0, 0, 0, 128, true}, {9, 0, 0, 128, false}}, 1);
  EXPECT_EQ(t[0].write_bytes, 128u);
  EXPECT_EQ(t[0].hit_bytes, 128u);     // the read finds what the write installed
  EXPECT_EQ(t[0].global_bytes, 128u);  // only the write reached global memory
}

TEST(SharedCache, InvalidateDropsStaleLines) {
  SharedCache c("l2", 4096, 64);
  c.serve(std::vector<GlobalAccess>{{0, 0, 0, 1024, false}}, 1);
  c.invalidate(256, 256);
  EXPECT_TRUE(c.holds(0, 256));
  EXPECT_FALSE(c.holds(256, 64));
  EXPECT_FALSE(c.holds(448, 64));
  EXPECT_TRUE(c.holds(512, 512));
  c.invalidate(0, 1 << 20);  // a range larger than the cache: a scan
  EXPECT_EQ(c.resident_lines(), 0u);
}

TEST(SharedCache, ServesByCycleNotByTheOrderTheAccessesWereLogged) {
  // Two cores stream the same 2 KiB through a cache of 1 KiB; which core hits depends on who
  // reads first in modeled time. Log order (a host-thread artefact) must not matter.
  std::vector<GlobalAccess> log;
  for (std::uint64_t i = 0; i < 32; ++i) {
    log.push_back({i * 10, 0, i * 64, 64, false});
    log.push_back({i * 10 + 3, 1, i * 64, 64, false});
  }
  SharedCache a("l2", 1024, 64), b("l2", 1024, 64);
  const auto ta = a.serve(log, 2);
  std::reverse(log.begin(), log.end());
  const auto tb = b.serve(log, 2);
  for (int core = 0; core < 2; ++core) {
    EXPECT_EQ(ta[core].hit_bytes, tb[core].hit_bytes);
    EXPECT_EQ(ta[core].miss_bytes, tb[core].miss_bytes);
  }
  EXPECT_EQ(ta[0].miss_bytes, 2048u);  // core 0 is always first
  EXPECT_EQ(ta[1].hit_bytes, 2048u);   // core 1 reads each line 3 cycles later
  EXPECT_THROW(a.serve(std::vector<GlobalAccess>{{0, 2, 0, 64, false}}, 2), UserError);
}

}  // namespace
}  // namespace tessera::sim
