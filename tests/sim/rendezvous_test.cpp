// sim::Rendezvous: parties on their own threads meet at the latest arrival plus the cost, meeting
// after meeting; the last to arrive runs on_met while the others wait; a party that leaves
// orphans the meeting it did not reach, and abort releases every waiter.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tessera/sim/rendezvous.h"

using tessera::sim::Rendezvous;

TEST(Rendezvous, PartiesGoOnAtTheLatestArrivalPlusTheCostEveryMeeting) {
  Rendezvous meet(4, 10);
  std::atomic<int> met_calls{0}, waiting_at_met{0};
  std::atomic<int> arrived{0};
  std::vector<std::vector<std::uint64_t>> got(4);
  std::vector<std::thread> threads;
  for (std::size_t p = 0; p < 4; ++p)
    threads.emplace_back([&, p] {
      for (std::uint64_t m = 0; m < 3; ++m) {
        ++arrived;
        const auto r = meet.arrive(
            p, 100 * m + 7 * p, [] {},
            [&] {
              ++met_calls;
              waiting_at_met += arrived.load();
            });
        EXPECT_EQ(r.outcome, Rendezvous::Outcome::met);
        EXPECT_EQ(r.meeting, m);
        got[p].push_back(r.cycle);
      }
      meet.leave(p);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(met_calls.load(), 3);
  EXPECT_EQ(meet.meetings(), 3u);
  for (std::size_t p = 0; p < 4; ++p)
    EXPECT_EQ(got[p], (std::vector<std::uint64_t>{31, 131, 231})) << p;  // 100 m + 21 + 10
}

TEST(Rendezvous, APartyThatLeavesOrphansTheMeetingAndAbortReleasesWaiters) {
  Rendezvous meet(3, 0);
  std::atomic<int> blocked{0};
  std::vector<Rendezvous::Result> results(2);
  std::vector<std::thread> threads;
  for (std::size_t p = 0; p < 2; ++p)
    threads.emplace_back([&, p] {
      results[p] = meet.arrive(
          p, 5, [&] { ++blocked; }, [] {});
    });
  while (blocked.load() < 2) std::this_thread::yield();
  meet.leave(2);
  for (auto& t : threads) t.join();
  for (const auto& r : results) {
    EXPECT_EQ(r.outcome, Rendezvous::Outcome::orphaned);
    EXPECT_EQ(r.missing, 2u);
  }

  Rendezvous other(2, 0);
  std::thread waiter([&] {
    EXPECT_EQ(other
                  .arrive(
                      0, 1, [] {}, [] {})
                  .outcome,
              Rendezvous::Outcome::aborted);
  });
  other.abort();
  waiter.join();
}
