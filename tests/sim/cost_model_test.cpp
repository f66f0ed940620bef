#include "tessera/sim/cost_model.h"

#include <gtest/gtest.h>

#include <limits>

#include "tessera/core/error.h"
#include "test_machine.h"

namespace tessera::sim {
namespace {

TEST(CostModel, ReadsEveryFigureFromThePreset) {
  auto spec = testing::test_machine();
  PresetCostModel cost(spec);
  EXPECT_EQ(cost.clock_hz(), 1e9);
  EXPECT_EQ(cost.pipe_latency("vec"), 2u);
  EXPECT_EQ(cost.op_cycles("vec", 130, 64), 2u + 3);  // latency + ceil(130 / 64)
  EXPECT_EQ(cost.transfer_cycles("dram", "local", 160), 100u + 10);
  EXPECT_EQ(cost.transfer_cycles("local", "local", 64), 2u + 1);
  EXPECT_EQ(cost.host_link_cycles(0), 1000u);     // 1 us latency at 1 GHz
  EXPECT_EQ(cost.host_link_cycles(5000), 6000u);  // + 1 byte per cycle
  EXPECT_EQ(cost.sync_cycles(), 1u);
  EXPECT_EQ(cost.param("sync.latency_cycles", 7), 1.0);
  EXPECT_EQ(cost.param("missing.key", 7), 7.0);
}

TEST(CostModel, ChangingThePresetChangesTheCost) {
  auto spec = testing::test_machine();
  spec.memories[1].bandwidth_bytes_per_cycle.value = 32;
  spec.pipes[1].latency_cycles.value = 9;
  PresetCostModel cost(spec);
  EXPECT_EQ(cost.transfer_cycles("dram", "local", 160), 100u + 5);
  EXPECT_EQ(cost.pipe_latency("vec"), 9u);
}

TEST(CostModel, UnknownNamesAndBadFiguresAreUserErrors) {
  auto spec = testing::test_machine();
  PresetCostModel cost(spec);
  EXPECT_THROW(cost.pipe_latency("mme"), UserError);
  EXPECT_THROW(cost.transfer_cycles("hbm", "local", 1), UserError);
  EXPECT_THROW(cost.op_cycles("vec", 1, 0), UserError);
  auto broken = spec;
  broken.clock_hz.value = 0;
  broken.memories[0].bandwidth_bytes_per_cycle.value = 0;
  try {
    PresetCostModel bad(broken);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("clock_hz"), std::string::npos) << m;
    EXPECT_NE(m.find("'local'"), std::string::npos) << m;
  }
}

TEST(CostModel, HugeCostsSaturateInsteadOfOverflowing) {
  auto spec = testing::test_machine();
  spec.memories[1].bandwidth_bytes_per_cycle.value = 1e-300;  // what the loader now refuses
  spec.host_link.bandwidth_bytes_per_second.value = 1e-300;
  PresetCostModel cost(spec);
  EXPECT_EQ(cost.op_cycles("vec", 1e300, 1e-300), cost.pipe_latency("vec") + kMaxOperationCycles);
  EXPECT_LE(cost.transfer_cycles("dram", "local", std::uint64_t{1} << 40), 2 * kMaxOperationCycles);
  EXPECT_EQ(cost.host_link_cycles(1), kMaxOperationCycles);
  // Sums over a million saturated operations still fit 64 bits.
  EXPECT_LT(kMaxOperationCycles, std::numeric_limits<std::uint64_t>::max() / (1u << 20) / 2);
}

}  // namespace
}  // namespace tessera::sim
