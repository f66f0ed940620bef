#include "tessera/sim/bsp.h"

#include <vector>

#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "tessera/sim/cost_model.h"
#include "test_machine.h"

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

TEST(Bsp, CostsFromThePresetParams) {
  auto spec = testing::test_machine();
  spec.params["ipu.exchange_bytes_per_cycle"] = testing::fig(8);
  spec.params["ipu.exchange_setup_cycles"] = testing::fig(30);
  spec.params["ipu.sync_cycles"] = testing::fig(150);
  PresetCostModel cost(spec);
  BspCosts c = BspCosts::from_params(cost, "ipu");
  EXPECT_EQ(c.exchange_bytes_per_cycle, 8.0);
  EXPECT_EQ(c.exchange_latency_cycles, 30u);
  EXPECT_EQ(c.sync_cycles, 150u);
  EXPECT_THROW(BspCosts::from_params(cost, "epu"), UserError);
}

TEST(Bsp, NeedsAnExchangeBandwidth) {
  EXPECT_THROW(BspSchedule(BspCosts{0, 0, 0}), UserError);
}

}  // namespace
}  // namespace tessera::sim
