#include "tessera/sim/memory.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "tessera/core/error.h"
#include "test_machine.h"

namespace tessera::sim {
namespace {

using testing::memory_spec;

TEST(Memory, TakesItsFiguresFromTheSpec) {
  auto spec = testing::test_machine();
  Memory local(spec.memories[0], "core0");
  EXPECT_EQ(local.name(), "local");
  EXPECT_EQ(local.owner(), "core0");
  EXPECT_EQ(local.capacity(), 4096u);
  EXPECT_EQ(local.alignment(), 64u);
  EXPECT_EQ(local.banks(), 4u);
  EXPECT_FALSE(local.has_storage());
  Memory dram(spec.memories[1], "device");
  EXPECT_EQ(dram.base(), 0x10000000u);
  EXPECT_EQ(dram.end(), 0x10000000u + (1u << 20));
}

TEST(Memory, AcceptsAccessesInsideAndAligned) {
  auto spec = testing::test_machine();
  Memory dram(spec.memories[1], "device");
  EXPECT_NO_THROW(dram.check_access(0x10000000, 256, "load"));
  EXPECT_NO_THROW(dram.check_access(0x10000000 + (1 << 20) - 256, 256, "load"));
  EXPECT_NO_THROW(dram.check_bounds(0x10000000 + (1 << 20), 0, "empty"));
  EXPECT_THROW(dram.check_bounds(0x10000000 + (1 << 20) - 255, 256, "load"), DeviceFault);
  EXPECT_THROW(dram.check_bounds(0x0fffffff, 1, "load"), DeviceFault);
  EXPECT_THROW(dram.check_alignment(0x10000004, "load"), DeviceFault);
  EXPECT_NO_THROW(dram.check_alignment(0x10000004, "scalar load", 4));
}

TEST(Memory, HostStorageIsReadAndWrittenThroughChecks) {
  auto spec = testing::test_machine();
  Memory local(spec.memories[0], "core0", Memory::Backing::host);
  ASSERT_TRUE(local.has_storage());
  local.store<float>(64, 3.5f, "store");
  EXPECT_EQ(local.load<float>(64, "load"), 3.5f);
  EXPECT_EQ(local.load<float>(128, "load"), 0.0f);  // zero-filled
  EXPECT_THROW(local.load<float>(4094, "load"), DeviceFault);
  Memory no_storage(spec.memories[0], "core1");
  EXPECT_THROW(no_storage.bytes(0, 4, "load"), UserError);
}

TEST(Memory, RefusesToMirrorHugeMemories) {
  auto big = memory_spec("hbm", "device", 32.0 * (1ull << 30), 0, 256, 1, 0, 100, 100);
  EXPECT_THROW(Memory(big, "device", Memory::Backing::host), UserError);
  EXPECT_NO_THROW(Memory(big, "device"));  // checking only: no host bytes
}

TEST(Memory, RejectsInconsistentSpecs) {
  EXPECT_THROW(Memory(memory_spec("m", "core", 0, 0, 4, 1, 0, 1, 1), "c"), UserError);
  EXPECT_THROW(Memory(memory_spec("m", "core", 64, 0, 3, 1, 0, 1, 1), "c"), UserError);
  EXPECT_THROW(Memory(memory_spec("m", "core", 64, 0, 4, 4, 0, 1, 1), "c"), UserError);
}

TEST(Memory, BankOfInterleavedAddresses) {
  auto spec = testing::test_machine();
  Memory local(spec.memories[0], "core0");  // 4 banks x 64 B
  EXPECT_EQ(local.bank_of(0), 0u);
  EXPECT_EQ(local.bank_of(63), 0u);
  EXPECT_EQ(local.bank_of(64), 1u);
  EXPECT_EQ(local.bank_of(192), 3u);
  EXPECT_EQ(local.bank_of(256), 0u);
}

TEST(Memory, BankConflictQueryNamesTheClashingAccesses) {
  auto spec = testing::test_machine();
  Memory local(spec.memories[0], "core0");
  // Banks 0, 1, 0 (next row), 2, and a second read of address 0 (merged, no conflict).
  std::vector<Access> group = {{0, 16}, {64, 16}, {256, 16}, {128, 16}, {0, 16}};
  auto conflicts = local.bank_conflicts(group);
  ASSERT_EQ(conflicts.size(), 1u);
  EXPECT_EQ(conflicts[0].bank, 0u);
  EXPECT_EQ(conflicts[0].accesses, (std::vector<std::size_t>{0, 2, 4}));
  EXPECT_EQ(local.bank_conflict_cycles(group), 1u);

  std::vector<Access> clean = {{0, 64}, {64, 64}, {128, 64}, {192, 64}};
  EXPECT_TRUE(local.bank_conflicts(clean).empty());
  EXPECT_EQ(local.bank_conflict_cycles(clean), 0u);
  EXPECT_NO_THROW(local.check_no_bank_conflicts(clean, "gather"));

  // A 128-byte access spans banks 0 and 1.
  std::vector<Access> wide = {{0, 128}, {320, 4}};
  auto wide_conflicts = local.bank_conflicts(wide);
  ASSERT_EQ(wide_conflicts.size(), 1u);
  EXPECT_EQ(wide_conflicts[0].bank, 1u);
}

TEST(Memory, ContiguousBanksConflictOnAnyTwoAddresses) {
  // IPU-like: 4 banks of 1 KiB each laid end to end.
  Memory tile(memory_spec("tile", "core", 4096, 0x1000, 8, 4, 1024, 16, 6), "tile 3");
  EXPECT_EQ(tile.bank_of(0x1000 + 1500), 1u);
  std::vector<Access> group = {{0x1000 + 8, 8}, {0x1000 + 512, 8}, {0x1000 + 1024, 8}};
  auto conflicts = tile.bank_conflicts(group);
  ASSERT_EQ(conflicts.size(), 1u);
  EXPECT_EQ(conflicts[0].bank, 0u);
  EXPECT_EQ(conflicts[0].accesses, (std::vector<std::size_t>{0, 1}));
}

// Bank queries reuse per-thread scratch: a group that faults half way, or a larger earlier
// group, leaves nothing behind for the next query.
TEST(Memory, BankQueriesStartAfreshAfterAFaultingGroup) {
  auto spec = testing::test_machine();
  Memory local(spec.memories[0], "core0");  // 4 banks x 64 B, 4 KiB
  std::vector<Access> faulting = {{0, 16}, {256, 16}, {4090, 16}};
  EXPECT_THROW(local.bank_conflict_cycles(faulting), DeviceFault);
  std::vector<Access> clean = {{0, 16}, {64, 16}};
  EXPECT_TRUE(local.bank_conflicts(clean).empty());
  EXPECT_EQ(local.bank_conflict_cycles(clean), 0u);
  std::vector<Access> three = {{0, 4}, {256, 4}, {512, 4}, {64, 4}, {320, 4}};
  EXPECT_EQ(local.bank_conflict_cycles(three), 2u);
  auto conflicts = local.bank_conflicts(three);
  ASSERT_EQ(conflicts.size(), 2u);
  EXPECT_EQ(conflicts[0].bank, 0u);
  EXPECT_EQ(conflicts[0].accesses, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(conflicts[1].bank, 1u);
  EXPECT_EQ(conflicts[1].accesses, (std::vector<std::size_t>{3, 4}));
  EXPECT_EQ(local.bank_conflict_cycles(clean), 0u);
}

// Host storage reads as zero until written and costs the host only the pages written: a
// 256 MiB memory adds far less than that to the process's resident set. A copy has its own bytes.
TEST(Memory, HostStorageIsZeroAndUntouchedUntilWritten) {
  auto resident_bytes = [] {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  };
  const std::uint64_t capacity = std::uint64_t{256} << 20;
  const std::uint64_t before = resident_bytes();
  Memory big(memory_spec("ub", "core", static_cast<double>(capacity), 0, 32, 1, 0, 1, 1), "core0",
             Memory::Backing::host);
  for (std::uint64_t a = 0; a < capacity; a += capacity / 64)
    ASSERT_EQ(big.load<std::uint32_t>(a, "load"), 0u) << a;
  big.store<std::uint32_t>(capacity - 4, 0xdeadbeef, "store");
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
  // (Sanitizers' allocators commit what calloc returns: the resident set says nothing there.)
  EXPECT_LT(resident_bytes() - std::min(before, resident_bytes()), capacity / 8);
#else
  (void)before;
#endif
  EXPECT_EQ(big.load<std::uint32_t>(capacity - 4, "load"), 0xdeadbeefu);

  Memory local(testing::test_machine().memories[0], "core0", Memory::Backing::host);
  local.store<std::uint32_t>(4092, 0xdeadbeef, "store");
  Memory copy = local;
  EXPECT_EQ(copy.load<std::uint32_t>(4092, "load"), 0xdeadbeefu);
  EXPECT_EQ(copy.load<std::uint32_t>(64, "load"), 0u);
  copy.store<std::uint32_t>(0, 7, "store");
  EXPECT_EQ(local.load<std::uint32_t>(0, "load"), 0u);  // the copy has its own bytes
}

TEST(Memory, UnbankedMemoryNeverConflicts) {
  auto spec = testing::test_machine();
  Memory dram(spec.memories[1], "device");
  std::vector<Access> group = {{0x10000000, 4}, {0x10000100, 4}};
  EXPECT_TRUE(dram.bank_conflicts(group).empty());
}

TEST(FirstFitAllocator, AllocatesAlignedFirstFit) {
  FirstFitAllocator a("core0", "local", 0x100, 1024, 64);
  auto x = a.allocate(10);
  auto y = a.allocate(100);
  auto z = a.allocate(64);
  EXPECT_EQ(x, 0x100u);
  EXPECT_EQ(y, 0x140u);
  EXPECT_EQ(z, 0x1c0u);
  EXPECT_EQ(a.stats().used, 64u + 128 + 64);
  EXPECT_EQ(a.stats().live_allocations, 3u);
  // Free the middle block: the next small allocation reuses it (first fit).
  a.free(y);
  EXPECT_EQ(a.allocate(64), 0x140u);
  // Larger explicit alignment.
  auto w = a.allocate(8, 256);
  EXPECT_EQ(w % 256, 0u);
}

TEST(FirstFitAllocator, CoalescesFreeBlocks) {
  FirstFitAllocator a("device", "dram", 0, 4096, 256);
  auto p = a.allocate(1024), q = a.allocate(1024), r = a.allocate(1024), s = a.allocate(1024);
  EXPECT_EQ(a.free_bytes(), 0u);
  a.free(p);
  a.free(r);
  EXPECT_EQ(a.free_block_count(), 2u);
  EXPECT_EQ(a.largest_free_block(), 1024u);
  a.free(q);  // joins p and r
  EXPECT_EQ(a.free_block_count(), 1u);
  EXPECT_EQ(a.largest_free_block(), 3072u);
  EXPECT_EQ(a.allocate(3072), 0u);
  a.free(s);
  a.free(0);
  EXPECT_EQ(a.free_block_count(), 1u);
  EXPECT_EQ(a.largest_free_block(), 4096u);
}

TEST(FirstFitAllocator, TracksTheHighWaterMark) {
  FirstFitAllocator a("device", "dram", 0, 4096, 256);
  auto p = a.allocate(1000);
  auto q = a.allocate(2000);
  a.free(p);
  a.free(q);
  EXPECT_EQ(a.stats().used, 0u);
  EXPECT_EQ(a.stats().high_water, 1024u + 2048);
  a.reset_high_water();
  EXPECT_EQ(a.stats().high_water, 0u);
}

TEST(FirstFitAllocator, ZeroBytesTakeOneGranule) {
  FirstFitAllocator a("device", "dram", 0, 1024, 256);
  auto p = a.allocate(0), q = a.allocate(0);
  EXPECT_NE(p, q);
  EXPECT_EQ(a.size_of(p), 256u);
}

TEST(FirstFitAllocator, DoubleFreeIsAUserError) {
  FirstFitAllocator a("device", "dram", 0, 1024, 256);
  auto p = a.allocate(10);
  a.free(p);
  EXPECT_THROW(a.free(p), UserError);
  EXPECT_THROW(a.free(12345), UserError);
}

TEST(StackAllocator, AllocatesAndFreesInLifoOrder) {
  StackAllocator s("core0", "local", 0x1000, 1024, 16);
  auto a = s.allocate(10);
  auto b = s.allocate(32);
  auto c = s.allocate(1, 64);
  EXPECT_EQ(a, 0x1000u);
  EXPECT_EQ(b, 0x1010u);
  EXPECT_EQ(c, 0x1040u);
  EXPECT_EQ(s.top(), 0x1050u);
  s.free(c);
  EXPECT_EQ(s.top(), 0x1030u);
  s.free(b);
  s.free(a);
  EXPECT_EQ(s.top(), 0x1000u);
  EXPECT_EQ(s.stats().high_water, 0x50u);
  EXPECT_EQ(s.free_bytes(), 1024u);
}

TEST(StackAllocator, ResetFreesEverything) {
  StackAllocator s("core0", "local", 0, 256, 16);
  s.allocate(100);
  s.allocate(100);
  s.reset();
  EXPECT_EQ(s.top(), 0u);
  EXPECT_EQ(s.stats().live_allocations, 0u);
  EXPECT_EQ(s.stats().high_water, 224u);
}

TEST(FormatBytes, GroupsDigitsAndNamesUnits) {
  EXPECT_EQ(format_bytes(12), "12 B");
  EXPECT_EQ(format_bytes(12288), "12,288 B (12 KiB)");
  EXPECT_EQ(format_bytes(1 << 20), "1,048,576 B (1 MiB)");
  EXPECT_EQ(format_bytes(1000), "1,000 B");
}

TEST(Memory, TracksWhichBytesWereWritten) {
  auto spec = testing::test_machine();
  Memory local(spec.memories[0], "core0", Memory::Backing::host);
  // Off by default: everything reads as initialised.
  EXPECT_TRUE(local.initialised(local.base() + 8));
  local.set_track_initialisation(true);
  EXPECT_FALSE(local.initialised(local.base() + 8));
  local.mark_initialised(local.base() + 4, 8);
  EXPECT_TRUE(local.initialised(local.base() + 4));
  EXPECT_TRUE(local.initialised(local.base() + 11));
  EXPECT_FALSE(local.initialised(local.base() + 12));
  EXPECT_EQ(local.first_uninitialised(local.base() + 4, 8), local.base() + 12);
  EXPECT_EQ(local.first_uninitialised(local.base() + 4, 10), local.base() + 12);
  EXPECT_NO_THROW(local.check_initialised(local.base() + 4, 8, "load"));
  try {
    local.check_initialised(local.base() + 2, 4, "vector load");
    FAIL() << "reading unwritten bytes must fault";
  } catch (const DeviceFault& f) {
    EXPECT_EQ(f.where(), "core0");
    EXPECT_NE(std::string(f.what()).find("never written"), std::string::npos) << f.what();
    EXPECT_NE(std::string(f.what()).find("vector load"), std::string::npos) << f.what();
  }
  EXPECT_THROW(local.mark_initialised(local.end() - 2, 4), DeviceFault);
  local.clear_initialised();
  EXPECT_FALSE(local.initialised(local.base() + 4));
}

}  // namespace
}  // namespace tessera::sim
