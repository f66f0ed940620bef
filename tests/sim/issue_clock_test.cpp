// sim::IssueClock: in-order slots with result latencies, and sim::BandwidthChannel: a shared
// memory channel. The figures are exact consequences of the rules, worked out by hand.
#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/sim/bandwidth.h"
#include "tessera/sim/issue_clock.h"

namespace tessera::sim {
namespace {

TEST(IssueClock, DependentChainsCostTheirLatency) {
  IssueClock<2> clock({4, 4});
  std::uint64_t ready = 0;
  for (int i = 0; i < 100; ++i) ready = clock.issue(0, ready);
  EXPECT_EQ(ready, 400u);  // each waits 4 cycles for the previous result
  EXPECT_EQ(clock.makespan(), 400u);
  EXPECT_EQ(clock.issues(0), 100u);
}

TEST(IssueClock, IndependentWorkIssuesEveryCycle) {
  IssueClock<2> clock({4, 4});
  std::uint64_t last = 0;
  for (int i = 0; i < 100; ++i) last = clock.issue(0, 0);
  EXPECT_EQ(last, 99u + 4u);  // the last issues at cycle 99, its result 4 cycles later
  EXPECT_EQ(clock.free_cycle(0), 100u);
}

TEST(IssueClock, SlotsOverlapAndOccupancyHoldsTheSlot) {
  IssueClock<2> clock({4, 2});
  EXPECT_EQ(clock.issue(0, 0, 8), 7u + 4u);            // busy 0..7, result after the last cycle
  EXPECT_EQ(clock.issue(1, 0), 2u);                    // the other slot is free at once
  EXPECT_EQ(clock.issue(0, 0), 8u + 4u);               // waits for the slot
  EXPECT_EQ(clock.issue(1, 0, 1, 10), 1u + 2u + 10u);  // extra latency behind the slot
}

TEST(IssueClock, StallHoldsEverySlot) {
  IssueClock<2> clock({1, 1});
  clock.issue(0, 0);
  clock.stall_until(50);
  EXPECT_EQ(clock.issue(1, 0), 51u);
  clock.note_done(80);
  EXPECT_EQ(clock.makespan(), 80u);
}

TEST(BandwidthChannel, OneAgentBelowTheBandwidthKeepsItsOwnTime) {
  BandwidthChannel hbm("hbm", 100.0);
  EXPECT_EQ(hbm.reserve(10, {5000, 100}), 110u);  // 50 B/cycle of 100
  EXPECT_DOUBLE_EQ(hbm.used_at(50), 50.0);
  EXPECT_DOUBLE_EQ(hbm.used_at(110), 0.0);
}

TEST(BandwidthChannel, AgentsThatTogetherExceedItShareFairly) {
  BandwidthChannel hbm("hbm", 100.0);
  // Four agents each wanting 50 B/cycle for 100 cycles: 200 B/cycle asked, 100 there.
  std::vector<ChannelDemand> group(4, ChannelDemand{5000, 100});
  const auto ends = hbm.reserve(0, group);
  for (auto e : ends) EXPECT_EQ(e, 200u);  // 20,000 B at 100 B/cycle
  // One agent alone takes its natural time: per byte, four are slower.
  BandwidthChannel alone("hbm", 100.0);
  EXPECT_EQ(alone.reserve(0, {5000, 100}), 100u);
}

TEST(BandwidthChannel, SlowAgentsLeaveTheirShareToFastOnes) {
  BandwidthChannel hbm("hbm", 100.0);
  // A needs 10 B/cycle, B could take 200: B gets the 90 left while A runs.
  std::vector<ChannelDemand> group{{1000, 100}, {9000, 45}};
  const auto ends = hbm.reserve(0, group);
  EXPECT_EQ(ends[0], 100u);
  EXPECT_EQ(ends[1], 100u);  // 9000 B at 90 B/cycle
}

TEST(BandwidthChannel, LaterWorkSeesWhatEarlierWorkTook) {
  BandwidthChannel hbm("hbm", 100.0);
  EXPECT_EQ(hbm.reserve(0, {8000, 100}), 100u);  // 80 B/cycle during 0..100
  // 4000 B wanting 100 B/cycle from cycle 50: 20 B/cycle until 100 (1000 B), then 100.
  EXPECT_EQ(hbm.reserve(50, {4000, 40}), 130u);
  EXPECT_EQ(hbm.reserve(200, {0, 7}), 207u);  // no bytes: its own time
}

TEST(BandwidthChannel, RejectsBandwidthsThatCannotWork) {
  EXPECT_THROW(BandwidthChannel("hbm", 0.0), UserError);
  EXPECT_THROW(BandwidthChannel("hbm", -1.0), UserError);
  BandwidthChannel tiny("hbm", 1e-12);
  EXPECT_THROW(tiny.reserve(0, {std::uint64_t{1} << 60, 1}), UserError);  // never an overflow
}

}  // namespace
}  // namespace tessera::sim
