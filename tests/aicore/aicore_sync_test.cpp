// SyncAll (all cores of a launch meet, the wait on each core's timeline) and InitGlobalMemory:
// data written before the meeting by any core is read after it by every core, results and
// cycles do not depend on host threads (fewer threads than cores included), and a launch that
// cannot meet is a DeviceFault instead of a hang.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "aicore_common.h"

using aicore_test::Gm;

namespace {

constexpr int kSlot = 8;  // floats per block's slot: one 32-byte block

// Block b fills its slot with b + 1 (InitGlobalMemory), block `slow` first does extra vector
// work, block `skip` ends there; after SyncAll every block reads all slots and writes their sum
// to out[b].
void gather_kernel(GM_ADDR slots, GM_ADDR out, std::int32_t slow, std::int32_t skip) {
  AscendC::TPipe pipe;
  AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
  const auto n = static_cast<std::int32_t>(AscendC::GetBlockNum());
  const auto b = static_cast<std::int32_t>(AscendC::GetBlockIdx());
  pipe.InitBuffer(buf, static_cast<std::uint32_t>(n * kSlot * 4 + 4096));
  AscendC::LocalTensor<float> ub = buf.Get<float>();
  AscendC::GlobalTensor<float> gs, go;
  gs.SetGlobalBuffer(reinterpret_cast<float*>(slots), n * kSlot);
  go.SetGlobalBuffer(reinterpret_cast<float*>(out), n * kSlot);
  AscendC::InitGlobalMemory(gs[b * kSlot], kSlot, static_cast<float>(b + 1));
  if (b == slow)
    for (int i = 0; i < 50; ++i) AscendC::Adds(ub[n * kSlot], ub[n * kSlot], 1.0f, 1024);
  if (b == skip) return;  // ends without meeting the others
  AscendC::SyncAll();
  AscendC::DataCopy(ub, gs, static_cast<std::uint32_t>(n * kSlot));
  AscendC::SetFlag<AscendC::HardEvent::MTE2_S>(0);
  AscendC::WaitFlag<AscendC::HardEvent::MTE2_S>(0);
  float sum = 0;
  for (std::int32_t i = 0; i < n; ++i) sum += ub.GetValue(static_cast<std::uint32_t>(i * kSlot));
  go.SetValue(static_cast<std::uint64_t>(b) * kSlot, sum);
}

}  // namespace

TEST(AicoreSyncAll, EveryCoreReadsWhatAllWroteBeforeTheMeeting) {
  const int n = 8;
  std::vector<std::uint64_t> cycles, core_end;
  for (unsigned threads : {1u, 3u, 8u}) {
    tessera::aicore::set_threads(threads);
    Gm<float> slots(n * kSlot), out(n * kSlot);
    for (int i = 0; i < n * kSlot; ++i) slots[i] = -1.0f;
    ICPU_RUN_KF(gather_kernel, n, slots.addr(), out.addr(), 5, -1);
    for (int b = 0; b < n; ++b) EXPECT_EQ(out[b * kSlot], n * (n + 1) / 2.0f) << b;
    const auto& k = tessera::aicore::last_kernel();
    cycles.push_back(k.cycles);
    core_end.push_back(k.cycles_per_core.at(0));
  }
  tessera::aicore::set_threads(0);
  EXPECT_EQ(cycles[0], cycles[1]);
  EXPECT_EQ(cycles[0], cycles[2]);
  EXPECT_EQ(core_end[0], core_end[2]);
}

TEST(AicoreSyncAll, TheWaitIsOnEveryCoresTimeline) {
  // Core 0 has little work of its own; with a slow core 5 its program ends later than without.
  const int n = 8;
  Gm<float> slots(n * kSlot), out(n * kSlot);
  ICPU_RUN_KF(gather_kernel, n, slots.addr(), out.addr(), -1, -1);
  const std::uint64_t fast = tessera::aicore::last_kernel().cycles;
  ICPU_RUN_KF(gather_kernel, n, slots.addr(), out.addr(), 5, -1);
  const auto& k = tessera::aicore::last_kernel();
  EXPECT_GT(k.cycles, fast);
  // Core 0 did not do core 5's extra vector work, yet it waited for it: its V pipe stayed as
  // busy as in the fast run while its end moved with core 5's.
  EXPECT_EQ(k.metrics.at("busy.aicore0.V"), 0.0);
  EXPECT_GT(k.metrics.at("busy.aicore5.V"), 0.0);
}

TEST(AicoreSyncAll, ALaunchThatCannotMeetIsADeviceFault) {
  const int n = 4;
  Gm<float> slots(64 * kSlot), out(64 * kSlot);
  aicore_test::expect_fault([&] { ICPU_RUN_KF(gather_kernel, n, slots.addr(), out.addr(), -1, 2); },
                            {"SyncAll #1", "aicore2", "ended without reaching it"});
  const int cores = static_cast<int>(tessera::aicore::device().spec().core_count.as_int());
  aicore_test::expect_fault(
      [&] { ICPU_RUN_KF(gather_kernel, cores + 1, slots.addr(), out.addr(), -1, -1); },
      {"SyncAll", "exceeds the", "launch at most"});
}
