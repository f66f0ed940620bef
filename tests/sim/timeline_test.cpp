#include "tessera/sim/timeline.h"

#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/sim/cost_model.h"
#include "test_machine.h"

namespace tessera::sim {
namespace {

Timeline three_pipes() {
  return Timeline("core0", {"a", "b", "c"});
}

TEST(Timeline, PipesAreInOrderAndRunInParallel) {
  Timeline tl = three_pipes();
  PipeId a = tl.pipe("a"), b = tl.pipe("b");
  Event x = tl.issue(a, "x", 10);
  Event y = tl.issue(a, "y", 5);
  Event z = tl.issue(b, "z", 7);
  EXPECT_EQ(tl.start_of(x), 0u);
  EXPECT_EQ(tl.end_of(x), 10u);
  EXPECT_EQ(tl.start_of(y), 10u);  // same pipe: after x
  EXPECT_EQ(tl.end_of(y), 15u);
  EXPECT_EQ(tl.start_of(z), 0u);  // another pipe: in parallel
  EXPECT_EQ(tl.end_cycle(), 15u);
  EXPECT_EQ(tl.busy_cycles(a), 15u);
  EXPECT_EQ(tl.busy_cycles(b), 7u);
}

TEST(Timeline, DependenciesDelayTheStart) {
  Timeline tl = three_pipes();
  PipeId a = tl.pipe("a"), b = tl.pipe("b"), c = tl.pipe("c");
  Event x = tl.issue(a, "x", 10);
  Event y = tl.issue(b, "y", 3, {x});
  Event w = tl.issue(c, "w", 2);
  Event z = tl.issue(c, "z", 4, {x, y});
  EXPECT_EQ(tl.start_of(y), 10u);
  EXPECT_EQ(tl.start_of(w), 0u);
  EXPECT_EQ(tl.start_of(z), 13u);
  EXPECT_EQ(tl.end_cycle(), 17u);
  EXPECT_EQ(tl.busy_cycles(c), 6u);
}

TEST(Timeline, SetFlagWaitFlagOrdersPipes) {
  Timeline tl = three_pipes();
  PipeId a = tl.pipe("a"), b = tl.pipe("b");
  FlagId f = tl.flag("a->b");
  tl.issue(a, "produce", 20);
  tl.set_flag(a, f);
  tl.issue(b, "early", 5);
  tl.wait_flag(b, f);
  Event consume = tl.issue(b, "consume", 4);
  EXPECT_EQ(tl.start_of(consume), 20u);
  EXPECT_EQ(tl.busy_cycles(b), 9u);  // stalled on the flag from 5 to 20: not busy
  tl.finish();
}

TEST(Timeline, WaitIssuedBeforeItsSetBlocksOnlyItsPipe) {
  Timeline tl = three_pipes();
  PipeId a = tl.pipe("a"), b = tl.pipe("b"), c = tl.pipe("c");
  FlagId f = tl.flag("a->b");
  tl.wait_flag(b, f);  // the set comes later in program order
  Event blocked = tl.issue(b, "consume", 4);
  Event other = tl.issue(c, "independent", 3);
  EXPECT_FALSE(tl.resolved(blocked));
  EXPECT_TRUE(tl.resolved(other));
  EXPECT_THROW(tl.end_of(blocked), UserError);
  tl.issue(a, "produce", 30);
  tl.set_flag(a, f);
  EXPECT_TRUE(tl.resolved(blocked));
  EXPECT_EQ(tl.start_of(blocked), 30u);
  tl.finish();
}

TEST(Timeline, FlagsPairSetsAndWaitsInOrder) {
  Timeline tl = three_pipes();
  PipeId a = tl.pipe("a"), b = tl.pipe("b");
  FlagId f = tl.flag("ping");
  FlagId g = tl.flag("pong");
  tl.set_flag(b, g);  // the consumer's buffer starts free
  std::vector<Event> consumed;
  for (int i = 0; i < 3; ++i) {
    tl.wait_flag(a, g);
    tl.issue(a, "produce", 10);
    tl.set_flag(a, f);
    tl.wait_flag(b, f);
    consumed.push_back(tl.issue(b, "consume", 15));
    tl.set_flag(b, g);
  }
  tl.wait_flag(a, g);
  tl.finish();
  EXPECT_EQ(tl.start_of(consumed[0]), 10u);
  EXPECT_EQ(tl.start_of(consumed[1]), 35u);  // produce #2 waits for consume #1 to free the buffer
  EXPECT_EQ(tl.start_of(consumed[2]), 60u);
}

TEST(Timeline, SyncLatencyComesFromTheCostModel) {
  auto spec = testing::test_machine();  // sync.latency_cycles = 1
  PresetCostModel cost(spec);
  Timeline tl("core0", spec, &cost);
  PipeId ld = tl.pipe("ld"), vec = tl.pipe("vec");
  FlagId f = tl.flag("ld->vec");
  tl.issue(ld, "load", 10);
  tl.set_flag(ld, f);    // 10..11
  tl.wait_flag(vec, f);  // done at 12
  Event v = tl.issue(vec, "compute", 5);
  EXPECT_EQ(tl.start_of(v), 12u);
}

TEST(Timeline, SemaphoresCountReleases) {
  Timeline tl = three_pipes();
  PipeId a = tl.pipe("a"), b = tl.pipe("b");
  SemaphoreId slots = tl.semaphore("slots", 2);
  std::vector<Event> produced;
  for (int i = 0; i < 4; ++i) {
    tl.acquire(a, slots);
    produced.push_back(tl.issue(a, "produce", 5));
  }
  EXPECT_TRUE(tl.resolved(produced[1]));
  EXPECT_FALSE(tl.resolved(produced[2]));  // needs a release
  tl.issue(b, "consume", 40);
  tl.release(b, slots);
  tl.release(b, slots);
  tl.finish();
  EXPECT_EQ(tl.start_of(produced[2]), 40u);
  EXPECT_EQ(tl.start_of(produced[3]), 45u);
}

TEST(Timeline, BarrierJoinsAllPipes) {
  Timeline tl = three_pipes();
  PipeId a = tl.pipe("a"), b = tl.pipe("b"), c = tl.pipe("c");
  tl.issue(a, "long", 50);
  tl.issue(b, "short", 5);
  tl.barrier();
  Event after_b = tl.issue(b, "after", 1);
  Event after_c = tl.issue(c, "after", 1);
  EXPECT_EQ(tl.start_of(after_b), 50u);
  EXPECT_EQ(tl.start_of(after_c), 50u);
  EXPECT_EQ(tl.busy_cycles(c), 1u);  // waiting at a barrier is not busy time
}

TEST(Timeline, BarrierWaitsForPipesUnblockedByEarlierFlags) {
  Timeline tl = three_pipes();
  PipeId a = tl.pipe("a"), b = tl.pipe("b");
  FlagId f = tl.flag("a->b");
  tl.wait_flag(b, f);
  tl.issue(b, "consume", 10);
  tl.issue(a, "produce", 20);
  tl.set_flag(a, f);
  tl.barrier();
  Event after = tl.issue(a, "after", 1);
  EXPECT_EQ(tl.start_of(after), 30u);
}

TEST(Timeline, TraceRecordsBusyIntervals) {
  Timeline tl = three_pipes();
  tl.set_trace(true);
  tl.issue(tl.pipe("a"), "x", 10);
  tl.issue(tl.pipe("b"), "y", 5);
  tl.issue(tl.pipe("b"), "nothing", 0);
  ASSERT_EQ(tl.intervals().size(), 2u);
  EXPECT_EQ(tl.intervals()[0].name, "x");
  EXPECT_EQ(tl.intervals()[1].pipe, tl.pipe("b"));
  EXPECT_EQ(tl.intervals()[1].end, 5u);
  // Ops that were blocked keep their names for the trace.
  FlagId f = tl.flag("a->c");
  tl.wait_flag(tl.pipe("c"), f);
  tl.issue(tl.pipe("c"), "blocked for a while", 3);
  tl.set_flag(tl.pipe("a"), f);
  ASSERT_EQ(tl.intervals().size(), 3u);
  EXPECT_EQ(tl.intervals()[2].name, "blocked for a while");
  EXPECT_EQ(tl.intervals()[2].start, 10u);
  Timeline quiet = three_pipes();
  quiet.issue(quiet.pipe("a"), "x", 10);
  EXPECT_TRUE(quiet.intervals().empty());
}

TEST(Timeline, PipesComeFromThePreset) {
  auto spec = testing::test_machine();
  Timeline tl("core2", spec);
  EXPECT_EQ(tl.pipe_count(), spec.pipes.size());
  EXPECT_EQ(tl.pipe_name(tl.pipe("dma")), "dma");
  EXPECT_THROW(tl.pipe("mme"), UserError);
}

TEST(Timeline, MisuseIsAUserError) {
  Timeline tl = three_pipes();
  Timeline other = three_pipes();
  Event foreign = other.issue(0, "x", 1);
  EXPECT_THROW(tl.issue(0, "y", 1, {foreign}), UserError);
  EXPECT_THROW(tl.issue(7, "y", 1), UserError);
  EXPECT_THROW(tl.set_flag(0, FlagId{3}), UserError);
  EXPECT_THROW(Timeline("c", std::vector<std::string>{"a", "a"}), UserError);
  EXPECT_THROW(Timeline("c", std::vector<std::string>{}), UserError);
}

TEST(Timeline, BytesMovedAccumulate) {
  Timeline tl = three_pipes();
  tl.add_bytes_moved("dram->local", 100);
  tl.add_bytes_moved("dram->local", 28);
  EXPECT_EQ(tl.bytes_moved().at("dram->local"), 128u);
}

}  // namespace
}  // namespace tessera::sim

namespace tessera::sim {
namespace {

// One step of a random program: compute on a pipe, or a hand-over from one pipe to another
// through a fresh flag (set on `pipe`, wait on `other`).
struct Step {
  bool transfer = false;
  PipeId pipe = 0;
  PipeId other = 0;
  std::uint64_t cycles = 0;
};

std::vector<Step> random_program(std::uint32_t seed, int steps, PipeId pipes) {
  std::uint32_t state = seed;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  std::vector<Step> program;
  for (int i = 0; i < steps; ++i) {
    Step s;
    s.pipe = next() % pipes;
    if (next() % 3 == 0) {
      s.transfer = true;
      s.other = (s.pipe + 1 + next() % (pipes - 1)) % pipes;
    } else {
      s.cycles = 1 + next() % 40;
    }
    program.push_back(s);
  }
  return program;
}

// Issues the program either in its own order or pipe by pipe (last pipe first), so that most
// waits are issued long before their sets. Returns (start, end) of every op, by step.
std::vector<std::pair<std::uint64_t, std::uint64_t>> run_program(const std::vector<Step>& program,
                                                                 PipeId pipes, bool pipe_by_pipe) {
  Timeline tl("core0", {"p0", "p1", "p2", "p3"});
  std::vector<FlagId> flags;
  for (std::size_t i = 0; i < program.size(); ++i) flags.push_back(tl.flag(std::to_string(i)));
  std::vector<Event> first(program.size()), second(program.size());
  auto issue_part = [&](std::size_t i, PipeId on) {
    const Step& s = program[i];
    if (!s.transfer) {
      if (s.pipe == on) first[i] = tl.issue(on, "op", s.cycles);
    } else {
      if (s.pipe == on) first[i] = tl.set_flag(on, flags[i]);
      if (s.other == on) second[i] = tl.wait_flag(on, flags[i]);
    }
  };
  if (pipe_by_pipe) {
    for (PipeId p = pipes; p-- > 0;)
      for (std::size_t i = 0; i < program.size(); ++i) issue_part(i, p);
  } else {
    for (std::size_t i = 0; i < program.size(); ++i)
      for (PipeId p = 0; p < pipes; ++p) issue_part(i, p);
  }
  tl.finish();
  std::vector<std::pair<std::uint64_t, std::uint64_t>> times;
  for (std::size_t i = 0; i < program.size(); ++i) {
    times.emplace_back(tl.start_of(first[i]), tl.end_of(first[i]));
    if (program[i].transfer) times.emplace_back(tl.start_of(second[i]), tl.end_of(second[i]));
  }
  return times;
}

TEST(Timeline, TimesDoNotDependOnHowPipesAreInterleavedAtIssue) {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    auto program = random_program(seed, 300, 4);
    auto in_order = run_program(program, 4, false);
    auto by_pipe = run_program(program, 4, true);
    ASSERT_EQ(in_order, by_pipe) << "seed " << seed;
  }
}

}  // namespace
}  // namespace tessera::sim
