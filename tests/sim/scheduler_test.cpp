#include "tessera/sim/scheduler.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/sim/cost_model.h"
#include "tessera/sim/dma.h"
#include "tessera/sim/memory.h"
#include "tessera/sim/timeline.h"
#include "test_machine.h"

namespace tessera::sim {
namespace {

struct CoreResult {
  std::uint64_t cycles = 0;
  std::uint64_t vec_busy = 0;
};

// A real workload: each core streams its slice of a vector through local memory in tiles
// (DMA in, compute on the vector pipe, DMA out), double-buffered with flags, like a TPC or
// AI Core kernel. Returns the output and each core's cycles.
// With `static_split`, cores are handed out as one contiguous range per host thread
// (parallel_ranges), so 1, 2 and 8 threads split them three different ways.
std::pair<std::vector<float>, std::vector<CoreResult>> run_workload(WorkScheduler& pool,
                                                                    bool static_split = false) {
  const arch::MachineSpec spec = testing::test_machine();
  const PresetCostModel cost(spec);
  const int cores = 16, tiles_per_core = 6, tile_elems = 128;
  std::vector<float> input(static_cast<std::size_t>(cores * tiles_per_core * tile_elems));
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(i % 97) * 0.5f;
  std::vector<float> output(input.size(), 0.0f);
  std::vector<CoreResult> results(cores);

  auto run_core = [&](std::size_t c) {
    Memory local(spec.memories[0], "core" + std::to_string(c), Memory::Backing::host);
    Timeline tl("core" + std::to_string(c), spec, &cost);
    DmaEngine dma_in(tl, tl.pipe("ld"), cost), dma_out(tl, tl.pipe("st"), cost);
    FlagId loaded[2] = {tl.flag("ld->vec 0"), tl.flag("ld->vec 1")};
    FlagId computed[2] = {tl.flag("vec->st 0"), tl.flag("vec->st 1")};
    FlagId freed[2] = {tl.flag("st->ld 0"), tl.flag("st->ld 1")};
    DmaEndpoint in{reinterpret_cast<std::byte*>(input.data()), input.size() * 4, "dram", 0,
                   "input"};
    DmaEndpoint out{reinterpret_cast<std::byte*>(output.data()), output.size() * 4, "dram", 0,
                    "output"};
    // Both buffers start free.
    tl.set_flag(tl.pipe("st"), freed[0]);
    tl.set_flag(tl.pipe("st"), freed[1]);
    for (int t = 0; t < tiles_per_core; ++t) {
      int b = t % 2;
      std::uint64_t buf = static_cast<std::uint64_t>(b) * tile_elems * 4;
      std::int64_t elem = (static_cast<std::int64_t>(c) * tiles_per_core + t) * tile_elems;
      tl.wait_flag(tl.pipe("ld"), freed[b]);
      DmaDescriptor load{in,
                         DmaWindow::roi(Shape{static_cast<std::int64_t>(input.size())}, {elem}),
                         DmaEndpoint::of(local, buf, tile_elems * 4),
                         DmaWindow::dense(Shape{tile_elems}),
                         Shape{tile_elems},
                         4};
      dma_in.copy(load);
      tl.set_flag(tl.pipe("ld"), loaded[b]);
      tl.wait_flag(tl.pipe("vec"), loaded[b]);
      auto bytes = local.bytes(buf, tile_elems * 4, "vector op", AccessKind::write);
      float* v = reinterpret_cast<float*>(bytes.data());
      for (int i = 0; i < tile_elems; ++i) v[i] = v[i] * 2.0f + 1.0f;
      tl.issue(tl.pipe("vec"), "scale", cost.op_cycles("vec", tile_elems, 64));
      tl.set_flag(tl.pipe("vec"), computed[b]);
      tl.wait_flag(tl.pipe("st"), computed[b]);
      DmaDescriptor store{DmaEndpoint::of(local, buf, tile_elems * 4),
                          DmaWindow::dense(Shape{tile_elems}),
                          out,
                          DmaWindow::roi(Shape{static_cast<std::int64_t>(output.size())}, {elem}),
                          Shape{tile_elems},
                          4};
      dma_out.copy(store);
      tl.set_flag(tl.pipe("st"), freed[b]);
    }
    tl.wait_flag(tl.pipe("ld"), freed[0]);
    tl.wait_flag(tl.pipe("ld"), freed[1]);
    tl.finish();
    results[c] = CoreResult{tl.end_cycle(), tl.busy_cycles(tl.pipe("vec"))};
  };
  if (static_split)
    pool.parallel_ranges(cores, [&](std::size_t, std::size_t begin, std::size_t end) {
      for (std::size_t c = begin; c < end; ++c) run_core(c);
    });
  else
    pool.parallel_for(cores, run_core);
  return {output, results};
}

TEST(Scheduler, ResultsAndCyclesDoNotDependOnThreadCount) {
  WorkScheduler one(1), two(2), eight(8);
  auto [out1, cyc1] = run_workload(one);
  auto [out2, cyc2] = run_workload(two);
  auto [out8, cyc8] = run_workload(eight);
  ASSERT_EQ(out1.size(), out2.size());
  EXPECT_EQ(std::memcmp(out1.data(), out2.data(), out1.size() * 4), 0);
  EXPECT_EQ(std::memcmp(out1.data(), out8.data(), out1.size() * 4), 0);
  for (std::size_t c = 0; c < cyc1.size(); ++c) {
    EXPECT_EQ(cyc1[c].cycles, cyc2[c].cycles);
    EXPECT_EQ(cyc1[c].cycles, cyc8[c].cycles);
    EXPECT_EQ(cyc1[c].vec_busy, cyc8[c].vec_busy);
    EXPECT_GT(cyc1[c].cycles, 0u);
  }
  // And the results are right.
  for (std::size_t i = 0; i < out1.size(); ++i)
    ASSERT_EQ(out1[i], static_cast<float>(i % 97) * 0.5f * 2.0f + 1.0f) << i;
}

TEST(Scheduler, SplitIsStaticAndFollowsThePartCount) {
  using R = WorkScheduler::Range;
  EXPECT_EQ(WorkScheduler::split(10, 3), (std::vector<R>{{0, 4}, {4, 7}, {7, 10}}));
  EXPECT_EQ(WorkScheduler::split(16, 1), (std::vector<R>{{0, 16}}));
  EXPECT_EQ(WorkScheduler::split(2, 8), (std::vector<R>{{0, 1}, {1, 2}}));
  EXPECT_TRUE(WorkScheduler::split(0, 4).empty());
  EXPECT_THROW(WorkScheduler::split(5, 0), UserError);
}

TEST(Scheduler, RangesFollowTheThreadCountAndCoverEveryUnitOnce) {
  for (unsigned threads : {1u, 2u, 8u}) {
    WorkScheduler pool(threads);
    std::vector<std::atomic<int>> hits(100);
    std::vector<WorkScheduler::Range> seen(threads);
    pool.parallel_ranges(hits.size(), [&](std::size_t r, std::size_t begin, std::size_t end) {
      seen[r] = {begin, end};
      for (std::size_t i = begin; i < end; ++i) hits[i]++;
    });
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
    EXPECT_EQ(seen, WorkScheduler::split(hits.size(), threads)) << threads << " threads";
  }
}

TEST(Scheduler, ThreadDependentSplitStillGivesIdenticalResultsAndCycles) {
  // The split really differs between these pools, so this comparison could catch a unit whose
  // result depends on its range (see the next test), unlike a split fixed by the core count.
  ASSERT_NE(WorkScheduler::split(16, 2), WorkScheduler::split(16, 8));
  WorkScheduler one(1), two(2), eight(8);
  auto [out1, cyc1] = run_workload(one, true);
  auto [out2, cyc2] = run_workload(two, true);
  auto [out8, cyc8] = run_workload(eight, true);
  EXPECT_EQ(std::memcmp(out1.data(), out2.data(), out1.size() * 4), 0);
  EXPECT_EQ(std::memcmp(out1.data(), out8.data(), out1.size() * 4), 0);
  for (std::size_t c = 0; c < cyc1.size(); ++c) {
    EXPECT_EQ(cyc1[c].cycles, cyc2[c].cycles);
    EXPECT_EQ(cyc1[c].cycles, cyc8[c].cycles);
    EXPECT_EQ(cyc1[c].vec_busy, cyc8[c].vec_busy);
  }
}

TEST(Scheduler, ARangeDependentReductionIsCaughtByTheThreadCountComparison) {
  // The negative control: float partial sums per range, then summed, change with the split.
  const std::vector<float> v = {1e8f, 1.0f, -1e8f, 1.0f};
  auto reduce = [&](unsigned threads) {
    WorkScheduler pool(threads);
    std::vector<float> partial(threads, 0.0f);
    pool.parallel_ranges(v.size(), [&](std::size_t r, std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) partial[r] += v[i];
    });
    float total = 0.0f;
    for (float p : partial) total += p;
    return total;
  };
  EXPECT_NE(reduce(1), reduce(2));
}

TEST(Scheduler, RunsEveryUnitOnce) {
  for (unsigned threads : {1u, 2u, 8u}) {
    WorkScheduler pool(threads);
    EXPECT_EQ(pool.thread_count(), threads);
    std::vector<std::atomic<int>> hits(1000);
    pool.parallel_for(hits.size(), [&](std::size_t i) { hits[i]++; });
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
    pool.parallel_for(0, [&](std::size_t) { FAIL() << "no units"; });
  }
}

TEST(Scheduler, PiecesCoverEveryUnitOnceInPiecesOfTheGivenSize) {
  for (unsigned threads : {1u, 2u, 8u}) {
    WorkScheduler pool(threads);
    for (std::size_t count : {0u, 1u, 999u, 1000u, 1001u, 4096u}) {
      std::vector<std::atomic<int>> hits(count);
      std::atomic<std::size_t> calls{0};
      pool.parallel_pieces(count, 1000, [&](std::size_t begin, std::size_t end) {
        EXPECT_EQ(begin % 1000, 0u);
        EXPECT_LE(end - begin, 1000u);
        EXPECT_TRUE(end == count || end - begin == 1000u) << begin << ".." << end;
        for (std::size_t i = begin; i < end; ++i) hits[i]++;
        ++calls;
      });
      for (auto& h : hits) EXPECT_EQ(h.load(), 1);
      EXPECT_EQ(calls.load(), (count + 999) / 1000);
    }
  }
  WorkScheduler pool(2);
  EXPECT_THROW(pool.parallel_pieces(10, 0, [](std::size_t, std::size_t) {}), UserError);
}

// A limit caps the threads that run a job's units (counted by distinct thread ids, with units
// slow enough that every worker allowed in would join), splits ranges by the limit, and lifts.
TEST(Scheduler, ThreadLimitCapsTheThreadsThatTakePart) {
  WorkScheduler pool(4);
  auto threads_used = [&] {
    std::mutex m;
    std::set<std::thread::id> ids;
    pool.parallel_for(64, [&](std::size_t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      std::lock_guard<std::mutex> lock(m);
      ids.insert(std::this_thread::get_id());
    });
    return ids.size();
  };
  for (unsigned limit : {1u, 2u, 1u}) {
    pool.set_thread_limit(limit);
    EXPECT_EQ(pool.thread_count(), limit);
    EXPECT_LE(threads_used(), limit);
    std::atomic<std::size_t> ranges{0};
    pool.parallel_ranges(100, [&](std::size_t, std::size_t, std::size_t) { ++ranges; });
    EXPECT_EQ(ranges.load(), limit);
  }
  pool.set_thread_limit(4);
  EXPECT_GT(threads_used(), 1u);  // lifted: workers join again
  EXPECT_THROW(pool.set_thread_limit(0), UserError);
  EXPECT_THROW(pool.set_thread_limit(5), UserError);
  pool.parallel_for(2, [&](std::size_t) { EXPECT_THROW(pool.set_thread_limit(1), UserError); });
}

// Each thread starts at the front of its own contiguous share of the units (neighbouring units
// stay on one thread from job to job): the caller at unit 0, a worker at the first unit of its
// share, whenever it joins. A shared counter would hand a worker whatever unit comes next.
TEST(Scheduler, EachThreadStartsAtTheFrontOfItsOwnShare) {
  for (unsigned threads : {2u, 4u}) {
    WorkScheduler pool(threads);
    const std::size_t units = 64;  // chunks of 64 / (threads * 8) units
    const std::size_t chunk = units / (threads * 8);
    std::set<std::size_t> share_fronts;
    for (unsigned r = 1; r < threads; ++r) share_fronts.insert(units / chunk * r / threads * chunk);
    const auto caller = std::this_thread::get_id();
    std::mutex m;
    std::map<std::thread::id, std::size_t> first_unit;
    pool.parallel_for(units, [&](std::size_t i) {
      // Long enough that a worker joins before the others have emptied its share.
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
      std::lock_guard<std::mutex> lock(m);
      first_unit.emplace(std::this_thread::get_id(), i);
    });
    ASSERT_EQ(first_unit.at(caller), 0u);
    for (const auto& [id, unit] : first_unit) {
      if (id == caller) continue;
      EXPECT_TRUE(share_fronts.erase(unit)) << "a worker began at unit " << unit << ", "
                                            << threads << " threads";
    }
  }
}

// Jobs back to back, as kernel launches come: a worker that wakes after the caller has finished a
// job alone must stay out of it (its function and units are gone), and one that joined must be
// waited for. Each job's units run exactly once, and only while their job is in flight.
TEST(Scheduler, BackToBackJobsRunTheirOwnUnitsOnce) {
  for (unsigned threads : {2u, 3u, 8u}) {
    WorkScheduler pool(threads);
    for (int job = 0; job < 3000; ++job) {
      const std::size_t units = 1 + static_cast<std::size_t>(job % 4);
      std::vector<std::atomic<int>> hits(units);
      std::atomic<bool> in_flight{true};
      std::atomic<int> late{0};
      pool.parallel_for(units, [&](std::size_t i) {
        if (!in_flight.load()) late++;
        hits[i]++;
      });
      in_flight = false;
      for (std::size_t i = 0; i < units; ++i)
        ASSERT_EQ(hits[i].load(), 1)
            << "job " << job << " unit " << i << ", " << threads << " threads";
      ASSERT_EQ(late.load(), 0) << "job " << job << ", " << threads << " threads";
    }
  }
}

TEST(Scheduler, RethrowsTheLowestFailingUnit) {
  for (unsigned threads : {1u, 2u, 8u}) {
    WorkScheduler pool(threads);
    for (int round = 0; round < 20; ++round) {
      try {
        pool.parallel_for(500, [](std::size_t i) {
          if (i == 77 || i == 78 || i == 300 || i == 499)
            throw std::runtime_error("unit " + std::to_string(i));
        });
        FAIL() << "expected an exception";
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "unit 77") << threads << " threads";
      }
    }
    // The pool is still usable after a failure.
    std::atomic<int> sum{0};
    pool.parallel_for(10, [&](std::size_t i) { sum += static_cast<int>(i); });
    EXPECT_EQ(sum.load(), 45);
  }
}

TEST(Scheduler, NestedCallsRunInline) {
  WorkScheduler pool(4);
  std::vector<std::atomic<int>> hits(8 * 16);
  pool.parallel_for(8, [&](std::size_t outer) {
    pool.parallel_for(16, [&](std::size_t inner) { hits[outer * 16 + inner]++; });
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(Scheduler, ZeroThreadsIsAUserError) {
  EXPECT_THROW(WorkScheduler(0), UserError);
}

TEST(Scheduler, ThreadCountFromTheEnvironment) {
  const char* saved = std::getenv("TESSERA_THREADS");
  std::string restore = saved ? saved : "";
  setenv("TESSERA_THREADS", "3", 1);
  EXPECT_EQ(WorkScheduler::threads_from_environment(), 3u);
  for (const char* bad : {"0", "many", "2x", "-4", "5000"}) {
    setenv("TESSERA_THREADS", bad, 1);
    try {
      WorkScheduler::threads_from_environment();
      ADD_FAILURE() << "accepted TESSERA_THREADS=" << bad;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  unsetenv("TESSERA_THREADS");
  EXPECT_GE(WorkScheduler::threads_from_environment(), 1u);
  if (saved) setenv("TESSERA_THREADS", restore.c_str(), 1);
}

TEST(Scheduler, SharedPoolExists) {
  EXPECT_GE(WorkScheduler::shared().thread_count(), 1u);
}

}  // namespace
}  // namespace tessera::sim
