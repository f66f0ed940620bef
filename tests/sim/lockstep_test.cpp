// The lock-step array's engine parts: neighbour exchange over a grid with its edge rule, and the
// broadcast bus (staged source, read pointer, faults before the first POP and past the end).
#include "tessera/sim/lockstep.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "tessera/core/error.h"

namespace tessera::sim {
namespace {

// 3 rows x 4 cols holding 10*row + col.
std::vector<int> grid() {
  std::vector<int> g(12);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) g[static_cast<std::size_t>(r * 4 + c)] = 10 * r + c;
  return g;
}

TEST(NeighborExchange, EachSideDeliversTheNeighboursValue) {
  const std::vector<int> in = grid();
  std::vector<int> out(12);
  neighbor_exchange<int>(in, out, 3, 4, GridSide::north, {}, -1);
  EXPECT_EQ(out[0], -1);           // row 0 has no northern neighbour
  EXPECT_EQ(out[1 * 4 + 2], 2);    // (1,2) gets (0,2)
  EXPECT_EQ(out[2 * 4 + 3], 13);   // (2,3) gets (1,3)
  neighbor_exchange<int>(in, out, 3, 4, GridSide::south, {}, -1);
  EXPECT_EQ(out[0], 10);
  EXPECT_EQ(out[2 * 4 + 1], -1);   // last row: nothing south
  neighbor_exchange<int>(in, out, 3, 4, GridSide::west, {}, -1);
  EXPECT_EQ(out[1 * 4 + 0], -1);
  EXPECT_EQ(out[1 * 4 + 3], 12);
  neighbor_exchange<int>(in, out, 3, 4, GridSide::east, {}, -1);
  EXPECT_EQ(out[1 * 4 + 3], -1);
  EXPECT_EQ(out[2 * 4 + 0], 21);
}

TEST(NeighborExchange, EdgeValuesFeedTheBorderCores) {
  const std::vector<int> in = grid();
  std::vector<int> out(12);
  const std::vector<int> cols_edge = {100, 101, 102, 103}, rows_edge = {200, 201, 202};
  neighbor_exchange<int>(in, out, 3, 4, GridSide::north, cols_edge);
  EXPECT_EQ(out[2], 102);
  neighbor_exchange<int>(in, out, 3, 4, GridSide::south, cols_edge);
  EXPECT_EQ(out[2 * 4 + 3], 103);
  neighbor_exchange<int>(in, out, 3, 4, GridSide::west, rows_edge);
  EXPECT_EQ(out[2 * 4 + 0], 202);
  neighbor_exchange<int>(in, out, 3, 4, GridSide::east, rows_edge);
  EXPECT_EQ(out[1 * 4 + 3], 201);
  EXPECT_EQ(out[1 * 4 + 2], 13);
}

std::vector<std::byte> bytes_of(const std::vector<std::int32_t>& v) {
  std::vector<std::byte> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::int32_t peek32(const BroadcastBus& bus, std::size_t index) {
  std::int32_t x;
  std::memcpy(&x, bus.peek(index * 4, 4, "test").data(), 4);
  return x;
}

TEST(BroadcastBus, PopsWalkTheStagedSourceAndPeekReadsTheRegister) {
  BroadcastBus bus("array", 8);
  const auto src = bytes_of({1, 2, 3, 4, 5});
  bus.stage(src, "w");
  EXPECT_EQ(bus.pops_left(), 3u);
  bus.pop("test");
  EXPECT_EQ(peek32(bus, 0), 1);
  EXPECT_EQ(peek32(bus, 1), 2);
  EXPECT_EQ(peek32(bus, 1), 2);  // a peek does not advance
  bus.pop("test");
  EXPECT_EQ(peek32(bus, 0), 3);
  EXPECT_EQ(bus.read_pointer(), 16u);
  bus.pop("test");
  EXPECT_EQ(peek32(bus, 0), 5);
  EXPECT_EQ(peek32(bus, 1), 0);  // the tail is padded with zeros
  EXPECT_EQ(bus.pops_left(), 0u);
  EXPECT_EQ(bus.pops(), 3u);
}

TEST(BroadcastBus, StagingAgainRestartsFromTheNewSource) {
  BroadcastBus bus("array", 8);
  bus.stage(bytes_of({1, 2, 3, 4}), "a");
  bus.pop("test");
  bus.stage(bytes_of({7, 8}), "b");
  bus.pop("test");
  EXPECT_EQ(peek32(bus, 0), 7);
}

TEST(BroadcastBus, ReadBeforeTheFirstPopIsAFault) {
  BroadcastBus bus("epu array", 8);
  bus.stage(bytes_of({1, 2}), "weights");
  try {
    (void)bus.peek(0, 4, "qBroadcast<0, int32_t, PEEK>");
    FAIL() << "expected a DeviceFault";
  } catch (const DeviceFault& e) {
    EXPECT_EQ(e.where(), "epu array");
    EXPECT_NE(std::string(e.what()).find("before the first POP"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("weights"), std::string::npos) << e.what();
  }
  bus.pop("test");
  bus.stage(bytes_of({3, 4}), "again");  // a new staging needs its own first POP
  EXPECT_THROW((void)bus.peek(0, 4, "peek"), DeviceFault);
}

TEST(BroadcastBus, PopPastTheEndOrWithNothingStagedIsAFault) {
  BroadcastBus bus("epu array", 8);
  EXPECT_THROW(bus.pop("pop"), DeviceFault);
  bus.stage(bytes_of({1, 2, 3, 4}), "weights");
  bus.pop("pop");
  bus.pop("pop");
  try {
    bus.pop("qBroadcast<0, int32_t, POP>");
    FAIL() << "expected a DeviceFault";
  } catch (const DeviceFault& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("past the end"), std::string::npos) << m;
    EXPECT_NE(m.find("holds 2 POPs"), std::string::npos) << m;
  }
  EXPECT_THROW((void)bus.peek(4, 8, "peek"), UserError);  // outside the register
}

}  // namespace
}  // namespace tessera::sim
