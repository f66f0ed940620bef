// Happens-before on a Timeline and the race detector built on it: both directions, for every
// kind of ordering the engine offers (pipe order, dependencies, flags, semaphores, barriers).
#include <string>

#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/sim/race.h"
#include "tessera/sim/timeline.h"

namespace tessera::sim {
namespace {

using K = RaceDetector::Kind;

struct Core {
  Timeline tl{"aicore0", {"MTE2", "V", "MTE3"}};
  PipeId mte2 = 0, v = 1, mte3 = 2;
  RaceDetector races;
  Core() { tl.set_track_order(true); }
};

TEST(HappensBefore, FollowsPipeOrderDependenciesFlagsSemaphoresAndBarriers) {
  Core c;
  const Event a = c.tl.issue(c.mte2, "copy in", 10);
  const Event b = c.tl.issue(c.mte2, "copy in 2", 10);
  const Event x = c.tl.issue(c.v, "add", 5);
  EXPECT_TRUE(c.tl.happens_before(a, b));   // same pipe
  EXPECT_FALSE(c.tl.happens_before(a, x));  // independent pipes
  EXPECT_FALSE(c.tl.happens_before(x, a));
  const Event y = c.tl.issue(c.v, "mul", 5, {b});
  EXPECT_TRUE(c.tl.happens_before(a, y));  // through a dependency, transitively
  const FlagId f = c.tl.flag("V->MTE3 #0");
  c.tl.set_flag(c.v, f);
  const Event w = c.tl.wait_flag(c.mte3, f);
  const Event out = c.tl.issue(c.mte3, "copy out", 10);
  EXPECT_TRUE(c.tl.happens_before(y, out));  // set after mul, wait before copy out
  EXPECT_TRUE(c.tl.happens_before(y, w));
  EXPECT_FALSE(c.tl.happens_before(out, y));
  const SemaphoreId s = c.tl.semaphore("buffers", 0);
  const Event r0 = c.tl.issue(c.mte3, "free", 1);
  c.tl.release(c.mte3, s);
  c.tl.acquire(c.mte2, s);
  const Event again = c.tl.issue(c.mte2, "refill", 1);
  EXPECT_TRUE(c.tl.happens_before(r0, again));
  const Event before = c.tl.issue(c.v, "last vector op", 1);
  c.tl.barrier();
  const Event after = c.tl.issue(c.mte3, "after barrier", 1);
  EXPECT_TRUE(c.tl.happens_before(before, after));
}

TEST(HappensBefore, NeedsTrackingFromTheStart) {
  Timeline tl("core", {"a", "b"});
  const Event e = tl.issue(0, "x", 1);
  EXPECT_THROW(tl.happens_before(e, e), UserError);
  EXPECT_THROW(tl.set_track_order(true), UserError);
}

TEST(RaceDetector, UnorderedWriteAndReadOfTheSameBytesIsARace) {
  Core c;
  const Event in = c.tl.issue(c.mte2, "DataCopy GM->UB", 10);
  c.races.record(in, "UB", 0, 256, K::write, "DataCopy GM->UB");
  const Event add = c.tl.issue(c.v, "Add", 5);  // no flag: may read before the copy lands
  c.races.record(add, "UB", 128, 384, K::read, "Add");
  c.tl.finish();
  try {
    c.races.check(c.tl);
    FAIL() << "expected a race";
  } catch (const DeviceFault& e) {
    const std::string what = e.what();
    for (const char* part : {"aicore0", "UB", "0x80", "0x100", "MTE2", "DataCopy GM->UB", "Add"})
      EXPECT_NE(what.find(part), std::string::npos) << part << " in " << what;
  }
}

// Buffers are told apart by name: the same bytes of two buffers never race, and a race names
// its own buffer, also after earlier checks.
TEST(RaceDetector, SameBytesOfDifferentBuffersAreNotARace) {
  Core c;
  const Event in = c.tl.issue(c.mte2, "DataCopy GM->L1", 10);
  c.races.record(in, "L1", 0, 256, K::write, "DataCopy GM->L1");
  const Event add = c.tl.issue(c.v, "Add", 5);
  c.races.record(add, std::string("UB"), 0, 256, K::read, "Add");
  c.tl.finish();
  EXPECT_NO_THROW(c.races.check(c.tl));
  const Event out = c.tl.issue(c.mte3, "DataCopy UB->GM", 5);
  c.races.record(out, "UB", 64, 128, K::write, "DataCopy UB->GM");
  c.tl.finish();
  try {
    c.races.check(c.tl);
    FAIL() << "expected a race";
  } catch (const DeviceFault& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("race on UB bytes [0x40, 0x80)"), std::string::npos) << what;
  }
}

TEST(RaceDetector, TheRemedyIsTheTargets) {
  Core c;
  c.races.set_remedy("add a dependency between them");
  const Event in = c.tl.issue(c.mte2, "load", 10);
  c.races.record(in, "lmem", 0, 16, K::write, "load");
  const Event use = c.tl.issue(c.v, "use", 5);
  c.races.record(use, "lmem", 0, 16, K::read, "use");
  c.tl.finish();
  try {
    c.races.check(c.tl);
    FAIL() << "expected a race";
  } catch (const DeviceFault& e) {
    EXPECT_NE(std::string(e.what()).find("add a dependency between them"), std::string::npos);
    EXPECT_EQ(std::string(e.what()).find("set_flag"), std::string::npos) << e.what();
  }
}

TEST(RaceDetector, OrderedAccessesAndDisjointBytesAreNot) {
  Core c;
  const FlagId f = c.tl.flag("MTE2->V #0");
  const Event in = c.tl.issue(c.mte2, "DataCopy GM->UB", 10);
  c.races.record(in, "UB", 0, 256, K::write, "DataCopy GM->UB");
  c.tl.set_flag(c.mte2, f);
  c.tl.wait_flag(c.v, f);
  const Event add = c.tl.issue(c.v, "Add", 5);
  c.races.record(add, "UB", 0, 256, K::read, "Add");
  c.races.record(add, "UB", 256, 512, K::write, "Add");
  const Event other = c.tl.issue(c.mte2, "DataCopy GM->UB", 10);  // other bytes: no race
  c.races.record(other, "UB", 512, 768, K::write, "DataCopy GM->UB");
  // MTE3 is ordered after V, which is ordered after MTE2's write: transitively ordered.
  const FlagId g = c.tl.flag("V->MTE3 #0");
  c.tl.set_flag(c.v, g);
  c.tl.wait_flag(c.mte3, g);
  const Event out = c.tl.issue(c.mte3, "DataCopy UB->GM", 10);
  c.races.record(out, "UB", 0, 512, K::read, "DataCopy UB->GM");
  // Two reads of bytes nobody writes never race.
  const Event r1 = c.tl.issue(c.v, "Muls", 5);
  const Event r2 = c.tl.issue(c.mte3, "DataCopy UB->GM", 5);
  c.races.record(r1, "UB", 1024, 2048, K::read, "Muls");
  c.races.record(r2, "UB", 1024, 2048, K::read, "DataCopy UB->GM");
  c.tl.finish();
  EXPECT_NO_THROW(c.races.check(c.tl));
}

TEST(RaceDetector, AWriteAfterAnUnfinishedReadIsARace) {
  Core c;
  const Event out = c.tl.issue(c.mte3, "DataCopy UB->GM", 10);
  c.races.record(out, "UB", 0, 256, K::read, "DataCopy UB->GM");
  const Event refill = c.tl.issue(c.mte2, "DataCopy GM->UB", 10);  // overwrites too early
  c.races.record(refill, "UB", 0, 256, K::write, "DataCopy GM->UB");
  c.tl.finish();
  EXPECT_THROW(c.races.check(c.tl), DeviceFault);
}

}  // namespace
}  // namespace tessera::sim
