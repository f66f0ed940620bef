// One test per fault class of the engine and runtime: each checks the exception type and that
// the message names the place (core/memory/pipe) and the limit or address involved.
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../sim/test_machine.h"
#include "tessera/core/error.h"
#include "tessera/runtime/device.h"
#include "tessera/sim/cost_model.h"
#include "tessera/sim/dma.h"
#include "tessera/sim/memory.h"
#include "tessera/sim/timeline.h"

namespace tessera::sim {
namespace {

// Runs fn, expects a DeviceFault, and returns it for message checks.
template <typename Fn>
DeviceFault expect_fault(Fn&& fn) {
  try {
    fn();
  } catch (const DeviceFault& f) {
    return f;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a DeviceFault, got: " << e.what();
    return DeviceFault("?", "?");
  }
  ADD_FAILURE() << "expected a DeviceFault, nothing was thrown";
  return DeviceFault("?", "?");
}

template <typename Fn>
std::string expect_user_error(Fn&& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a UserError, got: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected a UserError, nothing was thrown";
  return {};
}

#define EXPECT_MENTIONS(text, part)                          \
  EXPECT_NE(std::string(text).find(part), std::string::npos) \
      << "missing '" << (part) << "' in: " << (text)

TEST(EngineFaults, OutOfBoundsAccess) {
  auto spec = testing::test_machine();
  Memory local(spec.memories[0], "core3", Memory::Backing::host);
  auto f = expect_fault([&] { local.check_bounds(4000, 128, "vector load"); });
  EXPECT_EQ(f.where(), "core3");
  EXPECT_MENTIONS(f.what(), "vector load");
  EXPECT_MENTIONS(f.what(), "local");
  EXPECT_MENTIONS(f.what(), "0xfa0");  // the address
  EXPECT_MENTIONS(f.what(), "32 B past the end");
  EXPECT_MENTIONS(f.what(), "4,096 B (4 KiB)");  // the limit
  auto g = expect_fault([&] { local.store<std::uint32_t>(4096, 1, "scalar store"); });
  EXPECT_MENTIONS(g.what(), "writes");
}

TEST(EngineFaults, AccessBelowTheBaseAddress) {
  auto spec = testing::test_machine();
  Memory dram(spec.memories[1], "device");
  auto f = expect_fault([&] { dram.check_bounds(0x100, 4, "tensor load"); });
  EXPECT_MENTIONS(f.what(), "below the start of dram (0x10000000)");
}

TEST(EngineFaults, MisalignedAccess) {
  auto spec = testing::test_machine();
  Memory local(spec.memories[0], "core1");
  auto f = expect_fault([&] { local.check_access(96, 64, "vector store", AccessKind::write); });
  EXPECT_EQ(f.where(), "core1");
  EXPECT_MENTIONS(f.what(), "vector store");
  EXPECT_MENTIONS(f.what(), "0x60");
  EXPECT_MENTIONS(f.what(), "64-byte alignment");
  EXPECT_MENTIONS(f.what(), "0x40 or up to 0x80");
}

TEST(EngineFaults, BankConflict) {
  auto spec = testing::test_machine();
  Memory local(spec.memories[0], "core2");
  std::vector<Access> group = {{0, 8}, {256, 8}};  // both in bank 0
  auto f = expect_fault([&] { local.check_no_bank_conflicts(group, "paired load"); });
  EXPECT_EQ(f.where(), "core2");
  EXPECT_MENTIONS(f.what(), "paired load");
  EXPECT_MENTIONS(f.what(), "bank 0 of 4");
  EXPECT_MENTIONS(f.what(), "0x0, 0x100");
}

TEST(EngineFaults, FirstFitExhaustion) {
  FirstFitAllocator a("tpc0", "vlm", 0, 8192, 128);
  a.allocate(3000);
  auto hole = a.allocate(1000);
  a.allocate(3000);
  a.free(hole);
  auto f = expect_fault([&] { a.allocate(2000); });
  EXPECT_EQ(f.where(), "tpc0");
  EXPECT_MENTIONS(f.what(), "allocating 2,000 B in vlm");
  EXPECT_MENTIONS(f.what(), "2,048 B (2 KiB) of 8,192 B (8 KiB) free");
  EXPECT_MENTIONS(f.what(), "largest free block 1,024 B (1 KiB)");
}

TEST(EngineFaults, StackExhaustion) {
  StackAllocator s("core0", "local", 0, 1024, 16);
  s.allocate(1000);
  auto f = expect_fault([&] { s.allocate(100); });
  EXPECT_MENTIONS(f.what(), "100 B in local");
  EXPECT_MENTIONS(f.what(), "16 B of 1,024 B (1 KiB) free");
}

TEST(EngineFaults, LifoViolation) {
  StackAllocator s("tile 37", "tile", 0x1000, 4096, 8);
  auto a = s.allocate(64);
  s.allocate(128);
  auto f = expect_fault([&] { s.free(a); });
  EXPECT_EQ(f.where(), "tile 37");
  EXPECT_MENTIONS(f.what(), "LIFO violation in tile");
  EXPECT_MENTIONS(f.what(), "freeing 0x1000");
  EXPECT_MENTIONS(f.what(), "top of the stack is 0x1040 (128 B)");
  StackAllocator empty("tile 1", "tile", 0, 64, 8);
  auto g = expect_fault([&] { empty.free(0); });
  EXPECT_MENTIONS(g.what(), "stack is empty");
}

TEST(EngineFaults, DeadlockIsReportedAtOnce) {
  auto start = std::chrono::steady_clock::now();
  Timeline tl("core5", {"MTE2", "V", "MTE3"});
  FlagId ready = tl.flag("MTE2->V #0");
  tl.issue(tl.pipe("MTE2"), "copy in", 100);
  tl.wait_flag(tl.pipe("V"), ready);  // nobody ever sets it
  tl.issue(tl.pipe("V"), "vadd", 10);
  auto f = expect_fault([&] { tl.finish(); });
  EXPECT_EQ(f.where(), "core5");
  EXPECT_MENTIONS(f.what(), "deadlock");
  EXPECT_MENTIONS(f.what(), "pipe V waits on flag 'MTE2->V #0'");
  EXPECT_MENTIONS(f.what(), "only 0 set_flag(s)");
  EXPECT_MENTIONS(f.what(), "at the end of the program");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(EngineFaults, CircularWaitDeadlocksAtABarrier) {
  auto start = std::chrono::steady_clock::now();
  Timeline tl("core0", {"a", "b"});
  FlagId ab = tl.flag("a->b"), ba = tl.flag("b->a");
  tl.wait_flag(tl.pipe("a"), ba);
  tl.set_flag(tl.pipe("a"), ab);
  tl.wait_flag(tl.pipe("b"), ab);
  tl.set_flag(tl.pipe("b"), ba);
  auto f = expect_fault([&] { tl.barrier(); });
  EXPECT_MENTIONS(f.what(), "at a barrier");
  EXPECT_MENTIONS(f.what(), "pipe a waits on flag 'b->a'");
  EXPECT_MENTIONS(f.what(), "pipe b waits on flag 'a->b'");
  EXPECT_MENTIONS(f.what(), "stuck on blocked pipe");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(EngineFaults, DeadlockNamesPipesBlockedBehindDependencies) {
  Timeline tl("core7", {"a", "b"});
  FlagId never = tl.flag("never");
  Event stuck = tl.wait_flag(tl.pipe("a"), never);
  tl.issue(tl.pipe("b"), "needs a", 4, {stuck});
  auto f = expect_fault([&] { tl.finish(); });
  EXPECT_MENTIONS(f.what(), "pipe a waits on flag 'never'");
  EXPECT_MENTIONS(f.what(), "pipe b holds 'needs a', which depends on blocked work");
}

TEST(EngineFaults, SemaphoreDeadlock) {
  Timeline tl("core0", {"a", "b"});
  SemaphoreId s = tl.semaphore("slots", 1);
  tl.acquire(tl.pipe("a"), s);
  tl.acquire(tl.pipe("a"), s);
  auto f = expect_fault([&] { tl.finish(); });
  EXPECT_MENTIONS(f.what(), "pipe a acquires semaphore 'slots' (acquire #2)");
  EXPECT_MENTIONS(f.what(), "starts at 1");
}

TEST(EngineFaults, FlagSetWhileStillSet) {
  Timeline tl("core6", {"a", "b"});
  FlagId f = tl.flag("a->b #2");
  tl.set_flag(tl.pipe("a"), f);
  tl.issue(tl.pipe("a"), "work", 5);
  tl.set_flag(tl.pipe("a"), f);  // at cycle 5, while set #1 is not yet consumed
  tl.issue(tl.pipe("b"), "busy", 50);
  // The wait consumes set #1 only at cycle 50: set #2 was lost.
  auto fault = expect_fault([&] { tl.wait_flag(tl.pipe("b"), f); });
  EXPECT_EQ(fault.where(), "core6");
  EXPECT_MENTIONS(fault.what(), "flag 'a->b #2' is set again by pipe a at cycle 5");
  EXPECT_MENTIONS(fault.what(), "consumed only at cycle 50");
}

TEST(EngineFaults, FlagSetTwiceWithoutAnyWait) {
  Timeline tl("core4", {"a", "b"});
  FlagId f = tl.flag("a->b");
  tl.set_flag(tl.pipe("a"), f);
  tl.set_flag(tl.pipe("a"), f);
  auto fault = expect_fault([&] { tl.finish(); });
  EXPECT_EQ(fault.where(), "core4");
  EXPECT_MENTIONS(fault.what(), "flag 'a->b' is set twice");
}

TEST(EngineFaults, DmaSourceOutOfBounds) {
  auto spec = testing::test_machine();
  PresetCostModel cost(spec);
  Memory local(spec.memories[0], "core0", Memory::Backing::host);
  Timeline tl("core0", spec, &cost);
  DmaEngine dma(tl, tl.pipe("dma"), cost);
  std::vector<float> host(100);
  DmaEndpoint src{reinterpret_cast<std::byte*>(host.data()), 400, "dram", 0x10000000,
                  "buffer #1 (input)"};
  DmaDescriptor d{src,
                  DmaWindow::dense(Shape{16, 8}),
                  DmaEndpoint::of(local, 0, 512),
                  DmaWindow::dense(Shape{16, 8}),
                  Shape{16, 8},
                  4};
  auto f = expect_fault([&] { dma.copy(d, {}, "load tile"); });
  EXPECT_MENTIONS(f.where(), "core0/dma load tile");
  EXPECT_MENTIONS(f.what(), "source reads 112 B past the end of 'buffer #1 (input)'");
  EXPECT_MENTIONS(f.what(), "400 B of dram at 0x10000000");
  EXPECT_EQ(tl.operation_count(), 0u);  // nothing was booked, nothing copied
}

TEST(EngineFaults, DmaDestinationOutOfBounds) {
  std::vector<int> a(64), b(32);
  DmaEndpoint src{reinterpret_cast<std::byte*>(a.data()), 256, "ocm", 0, ""};
  DmaEndpoint dst{reinterpret_cast<std::byte*>(b.data()), 128, "localmem", 0x40, ""};
  DmaWindow strided;
  strided.strides = Strides{2};
  auto f = expect_fault([&] { dma_copy({src, {}, dst, strided, Shape{20}, 4}, "pe 3 memCpy"); });
  EXPECT_EQ(f.where(), "pe 3 memCpy");
  EXPECT_MENTIONS(f.what(), "destination writes 28 B past the end of 'localmem'");
  EXPECT_MENTIONS(f.what(), "strides (2)");
}

TEST(EngineFaults, DmaStridesBeyondAnyAddress) {
  std::vector<int> a(64), b(64);
  DmaEndpoint src{reinterpret_cast<std::byte*>(a.data()), 256, "ddr", 0, "ddr tensor"};
  DmaEndpoint dst{reinterpret_cast<std::byte*>(b.data()), 256, "ocm", 0, "ocm tensor"};
  DmaWindow huge;
  huge.strides = Strides{1, std::int64_t{1} << 62};
  auto f = expect_fault([&] { dma_copy({src, huge, dst, {}, Shape{2, 4}, 4}, "gdma"); });
  EXPECT_EQ(f.where(), "gdma");
  EXPECT_MENTIONS(f.what(), "source window of 'ddr tensor' reaches beyond any address");
}

TEST(EngineFaults, DmaRegionOfInterestLeavesItsTensor) {
  std::vector<int> a(64), b(64);
  DmaEndpoint src{reinterpret_cast<std::byte*>(a.data()), 256, "ddr", 0, "ddr tensor"};
  DmaEndpoint dst{reinterpret_cast<std::byte*>(b.data()), 256, "ocm", 0, "ocm tensor"};
  // An 8 x 8 tensor; a 4-wide ROI starting at column 6 would wrap into the next row.
  auto f = expect_fault([&] {
    dma_copy({src, DmaWindow::roi(Shape{8, 8}, {6, 1}), dst, {}, Shape{4, 2}, 4}, "memCpy");
  });
  EXPECT_MENTIONS(f.what(), "dimension 0 covers elements 6 to 9 but the tensor has 8");
}

TEST(EngineFaults, DeviceGlobalMemoryExhaustion) {
  runtime::Device device(testing::test_machine());  // 1 MiB of dram
  device.allocate(600 * 1024);
  auto f = expect_fault([&] { device.allocate(600 * 1024, "activations"); });
  EXPECT_EQ(f.where(), "device");
  EXPECT_MENTIONS(f.what(), "allocating 614,400 B (600 KiB) in dram");
  EXPECT_MENTIONS(f.what(), "424 KiB");  // free
}

TEST(RuntimeUserErrors, DoubleFreeAndForeignBuffers) {
  runtime::Device device(testing::test_machine());
  runtime::Device other(testing::test_machine());
  runtime::Buffer b = device.allocate(64);
  device.free(b);
  EXPECT_MENTIONS(expect_user_error([&] { device.free(b); }),
                  "not a live buffer of device 'testchip'");
  runtime::Buffer foreign = other.allocate(64);
  foreign.id = 999;
  EXPECT_MENTIONS(expect_user_error([&] { device.data(foreign); }), "buffer #999");
  EXPECT_MENTIONS(expect_user_error([&] { device.free(runtime::Buffer{}); }), "not a live buffer");
}

TEST(RuntimeUserErrors, CopiesOutsideTheBuffer) {
  runtime::Device device(testing::test_machine());
  runtime::Buffer b = device.allocate(100);
  std::vector<char> host(200);
  auto m = expect_user_error([&] { device.copy_to_device(b, host.data(), 60, 50); });
  EXPECT_MENTIONS(m, "60 B at offset 50");
  EXPECT_MENTIONS(m, "100 B");
  EXPECT_MENTIONS(m, "at most 50 B");
  auto n = expect_user_error([&] { device.copy_to_host(host.data(), b, 101); });
  EXPECT_MENTIONS(n, "reads past buffer");
  EXPECT_EQ(device.now_cycles(), 0u);  // a refused copy takes no time
}

TEST(RuntimeUserErrors, PresetWithoutItsGlobalMemory) {
  auto spec = testing::test_machine();
  spec.global_memory = "hbm";
  auto m = expect_user_error([&] { runtime::Device device(spec); });
  EXPECT_MENTIONS(m, "global_memory 'hbm'");
}

}  // namespace
}  // namespace tessera::sim
