#include "tessera/sim/bsp.h"

#include <vector>

#include <gtest/gtest.h>

#include "tessera/core/error.h"

namespace tessera::sim {
namespace {

TEST(Bsp, SuperstepIsSlowestComputePlusLargestExchangePlusSync) {
  BspSchedule bsp(BspCosts{4.0, 10, 50});
  std::vector<std::uint64_t> compute = {100, 300, 200};
  std::vector<std::uint64_t> exchange = {64, 400, 0};
  const Superstep& s = bsp.add("step0", compute, exchange);
  EXPECT_EQ(s.compute, 300u);
  EXPECT_EQ(s.exchange, 10u + 100);
  EXPECT_EQ(s.sync, 50u);
  EXPECT_EQ(s.end(), 460u);
  const Superstep& t = bsp.add("compute only", compute, {});
  EXPECT_EQ(t.start, 460u);
  EXPECT_EQ(t.exchange, 0u);
  EXPECT_EQ(bsp.total_cycles(), 460u + 350);
  EXPECT_EQ(bsp.compute_cycles(), 600u);
  EXPECT_EQ(bsp.exchange_cycles(), 110u);
  EXPECT_EQ(bsp.sync_cycles(), 100u);
  EXPECT_EQ(bsp.steps().size(), 2u);
}

TEST(Bsp, NeedsAnExchangeBandwidth) {
  EXPECT_THROW(BspSchedule(BspCosts{0, 0, 0}), UserError);
}

}  // namespace
}  // namespace tessera::sim
