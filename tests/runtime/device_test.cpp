#include "tessera/runtime/device.h"

#include <unistd.h>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../sim/test_machine.h"
#include "tessera/core/error.h"
#include "tessera/sim/cache.h"
#include "tessera/sim/cost_model.h"
#include "tessera/sim/dma.h"
#include "tessera/sim/scheduler.h"
#include "tessera/sim/timeline.h"

namespace tessera::runtime {
namespace {

std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

TEST(Device, OpensAPresetByName) {
  auto device = Device::open("gaudi");
  EXPECT_EQ(device->spec().name, "gaudi");
  EXPECT_EQ(device->profile().device, "gaudi");
  EXPECT_EQ(device->profile().target, "tpc");
  EXPECT_EQ(device->profile().clock_hz, device->spec().clock_hz.value);
  EXPECT_EQ(device->now_cycles(), 0u);
  EXPECT_THROW(Device::open("no-such-preset"), UserError);
}

TEST(Device, BuffersLiveInGlobalMemoryWithItsAlignment) {
  Device device(testing::test_machine());
  Buffer a = device.allocate(100);
  Buffer b = device.allocate(1000, "weights");
  EXPECT_TRUE(a);
  EXPECT_EQ(a.device_address, 0x10000000u);  // the preset's base address
  EXPECT_EQ(b.device_address, 0x10000100u);  // 256-byte alignment
  EXPECT_NE(a.id, b.id);
  EXPECT_EQ(device.tag(b), "weights");
  EXPECT_EQ(device.live_buffer_count(), 2u);
  EXPECT_EQ(device.global_bytes_in_use(), 256u + 1024);
  device.free(a);
  EXPECT_EQ(device.live_buffer_count(), 1u);
  Buffer c = device.allocate(50);
  EXPECT_EQ(c.device_address, 0x10000000u);  // reuses the freed block
}

TEST(Device, HostStorageIsAllocatedPerBufferNotForTheWholeMemory) {
  auto device = Device::open("gaudi");  // 32 GiB of HBM
  std::uint64_t before = resident_bytes();
  Buffer big = device->allocate(std::size_t{8} << 30);
  Buffer small = device->allocate(4096);
  std::vector<float> values(1024, 1.5f);
  device->copy_to_device(small, values.data(), 4096);
  std::uint64_t after = resident_bytes();
  EXPECT_LT(after > before ? after - before : 0, std::uint64_t{64} << 20);
  EXPECT_TRUE(big);
}

TEST(Device, CopiesRoundTripAndTakeHostLinkTime) {
  Device device(testing::test_machine());  // host link: 1 us + 1 byte per cycle at 1 GHz
  device.set_trace_enabled(true);
  Buffer buf = device.allocate(5000);
  std::vector<std::uint8_t> in(5000);
  std::iota(in.begin(), in.end(), 0);
  device.copy_to_device(buf, in.data(), in.size());
  EXPECT_EQ(device.now_cycles(), 6000u);
  std::vector<std::uint8_t> out(100);
  device.copy_to_host(out.data(), buf, 100, 200);
  EXPECT_EQ(device.now_cycles(), 6000u + 1100);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(out[static_cast<std::size_t>(i)], static_cast<std::uint8_t>(200 + i));
  const auto& p = device.profile();
  EXPECT_EQ(p.bytes_moved.at("host-link"), 5100u);
  EXPECT_EQ(p.pipe_busy_cycles.at("host-link"), 7100u);
  EXPECT_EQ(p.total_cycles, 7100u);
  ASSERT_EQ(p.trace.size(), 2u);
  EXPECT_EQ(p.trace[1].track, "host-link");
  EXPECT_EQ(p.trace[1].start_cycle, 6000u);
}

TEST(Device, FreshBuffersReadAsZero) {
  Device device(testing::test_machine());
  Buffer buf = device.allocate(64);
  std::vector<std::uint8_t> out(64, 0xff);
  device.copy_to_host(out.data(), buf, 64);
  for (auto v : out) EXPECT_EQ(v, 0);
}

TEST(Device, KernelsRunInOrderOnTheDeviceClock) {
  Device device(testing::test_machine());
  profile::KernelRecord k;
  k.name = "relu";
  k.cycles = 500;
  EXPECT_EQ(device.record_kernel(k).start_cycle, 0u);
  k.name = "add";
  k.cycles = 300;
  EXPECT_EQ(device.record_kernel(k).start_cycle, 500u);
  EXPECT_EQ(device.now_cycles(), 800u);
  device.synchronize();
  EXPECT_EQ(device.profile().total_cycles, 800u);
  EXPECT_EQ(device.profile().kernels.size(), 2u);
  device.reset_profile();
  EXPECT_TRUE(device.profile().kernels.empty());
  EXPECT_EQ(device.now_cycles(), 0u);
  EXPECT_EQ(device.profile().device, "testchip");
}

TEST(Device, TakeProfileHandsOverWhatWasRecordedAndStartsAfresh) {
  Device device(testing::test_machine());
  profile::KernelRecord k;
  k.name = "relu";
  k.cycles = 500;
  device.record_kernel(k);
  device.synchronize();
  const profile::Profile taken = device.take_profile();
  ASSERT_EQ(taken.kernels.size(), 1u);
  EXPECT_EQ(taken.kernels[0].name, "relu");
  EXPECT_EQ(taken.total_cycles, 500u);
  EXPECT_TRUE(device.profile().kernels.empty());
  EXPECT_EQ(device.profile().device, "testchip");
  EXPECT_EQ(device.now_cycles(), 0u);
  k.name = "add";
  EXPECT_EQ(device.record_kernel(k).start_cycle, 0u);  // the clock started again too
}

TEST(Device, RecordsTimelinesBytesAndHighWater) {
  auto spec = testing::test_machine();
  Device device(spec);
  device.set_trace_enabled(true);
  sim::Timeline tl("core0", spec, &device.cost_model());
  tl.set_trace(true);
  tl.issue(tl.pipe("vec"), "compute", 40);
  tl.issue(tl.pipe("ld"), "load", 10);
  tl.add_bytes_moved("dram->local", 640);
  profile::KernelRecord k;
  k.name = "kernel";
  k.cycles = tl.end_cycle();
  device.record_kernel(profile::KernelRecord{"warmup", 0, 100, {}, {}, 0, 0});
  const auto& rec = device.record_kernel(k);
  device.record_timeline(tl, rec.start_cycle);
  device.add_pipe_busy("core0/vec", 5);
  device.add_bytes_moved("dram->local", 360);
  device.note_memory_high_water("core0", "local", 2048);
  device.note_memory_high_water("core0", "local", 1024);  // keeps the peak
  device.record_interval(profile::Interval{"core0/note", "marker", 1, 2});
  Buffer b = device.allocate(3000, "activations");
  device.free(b);
  device.synchronize();
  const auto& p = device.profile();
  EXPECT_EQ(p.pipe_busy_cycles.at("core0/vec"), 45u);
  EXPECT_EQ(p.pipe_busy_cycles.at("core0/ld"), 10u);
  EXPECT_EQ(p.bytes_moved.at("dram->local"), 1000u);
  EXPECT_EQ(p.memory_high_water.at("core0").at("local"), 2048u);
  EXPECT_EQ(p.memory_high_water.at("device").at("activations"), 3072u);
  EXPECT_EQ(p.memory_high_water.at("device").at("dram"), 3072u);
  ASSERT_EQ(p.trace.size(), 3u);
  EXPECT_EQ(p.trace[0].track, "core0/vec");
  EXPECT_EQ(p.trace[0].start_cycle, 100u);  // shifted to the kernel's start
  EXPECT_EQ(p.trace[0].end_cycle, 140u);
}

TEST(Device, RecordsAKernelFromItsCoresTimelines) {
  auto spec = testing::test_machine();
  Device device(spec);
  std::vector<sim::Timeline> cores;
  for (int c = 0; c < 3; ++c) {
    cores.emplace_back("core" + std::to_string(c), spec, &device.cost_model());
    cores.back().issue(cores.back().pipe("vec"), "work", 100u * static_cast<unsigned>(c + 1));
  }
  device.record_kernel(profile::KernelRecord{"first", 0, 50, {}, {}, 0, 0});
  const auto& k = device.record_kernel(
      profile::KernelRecord{"scale", 0, 0, {}, {{"members", 3}}, 64, 32}, cores);
  EXPECT_EQ(k.start_cycle, 50u);
  EXPECT_EQ(k.cycles, 300u);
  EXPECT_EQ(k.cycles_per_core, (std::vector<std::uint64_t>{100, 200, 300}));
  EXPECT_EQ(k.metrics.at("members"), 3.0);
  EXPECT_EQ(device.now_cycles(), 350u);
  EXPECT_EQ(device.profile().pipe_busy_cycles.at("core2/vec"), 300u);
  // A deadlocked core is reported before anything is recorded.
  sim::Timeline stuck("core9", spec);
  stuck.wait_flag(stuck.pipe("ld"), stuck.flag("never"));
  std::vector<sim::Timeline> bad;
  bad.push_back(std::move(stuck));
  EXPECT_THROW(device.record_kernel(profile::KernelRecord{"bad", 0, 0, {}, {}, 0, 0}, bad),
               DeviceFault);
  EXPECT_EQ(device.profile().kernels.size(), 2u);
}

TEST(Device, TraceIsOffByDefault) {
  Device device(testing::test_machine());
  EXPECT_FALSE(device.trace_enabled());
  Buffer b = device.allocate(16);
  std::uint32_t v = 7;
  device.copy_to_device(b, &v, 4);
  device.record_interval(profile::Interval{"x", "y", 0, 1});
  EXPECT_TRUE(device.profile().trace.empty());
}

TEST(Device, BuffersAreDmaEndpoints) {
  auto spec = testing::test_machine();
  Device device(spec);
  Buffer src = device.allocate(64 * 4);
  Buffer dst = device.allocate(64 * 4);
  std::vector<float> in(64);
  std::iota(in.begin(), in.end(), 0.0f);
  device.copy_to_device(src, in.data(), in.size() * 4);
  sim::Timeline tl("core0", spec, &device.cost_model());
  sim::DmaEngine dma(tl, tl.pipe("dma"), device.cost_model());
  // Copy rows in reverse order: row r of 8 elements goes to row 7 - r.
  for (int r = 0; r < 8; ++r) {
    sim::DmaDescriptor d{device.dma_endpoint(src),
                         sim::DmaWindow::roi(Shape{8, 8}, {0, r}),
                         device.dma_endpoint(dst),
                         sim::DmaWindow::roi(Shape{8, 8}, {0, 7 - r}),
                         Shape{8},
                         4};
    dma.copy(d);
  }
  std::vector<float> out(64);
  device.copy_to_host(out.data(), dst, out.size() * 4);
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c)
      EXPECT_EQ(out[static_cast<std::size_t>(r * 8 + c)], static_cast<float>((7 - r) * 8 + c));
  EXPECT_EQ(device.dma_endpoint(src).memory, "dram");
}

TEST(Device, SchedulerIsTheSharedPool) {
  Device device(testing::test_machine());
  EXPECT_EQ(&device.scheduler(), &sim::WorkScheduler::shared());
}

// Four cores read the same 4 KiB. With a shared cache in front of global memory only the first
// reader's misses reach global memory (16 B/cycle); without one, every core's bytes do.
TEST(Device, AGlobalCacheServesSharedReadsAndOnlyMissesReachGlobalMemory) {
  auto spec = testing::test_machine();
  auto run = [&](Device& device) {
    std::vector<sim::Timeline> cores;
    std::vector<sim::GlobalAccess> log;
    for (std::uint32_t c = 0; c < 4; ++c) {
      cores.emplace_back("core" + std::to_string(c), spec, &device.cost_model());
      cores.back().issue(cores.back().pipe("ld"), "load", 100);
      log.push_back({c * 10, c, 0x10000000, 4096, false});
    }
    return device.record_kernel(profile::KernelRecord{"shared", 0, 0, {}, {}, 0, 0}, cores, log);
  };
  Device plain(spec);
  const auto k0 = run(plain);
  EXPECT_EQ(k0.cycles, 4u * 4096 / 16);  // 16 KiB over the 16 B/cycle channel
  EXPECT_EQ(plain.global_cache(), nullptr);

  spec.memories.push_back(testing::memory_spec("l2", "device", 65536, 0, 64, 1, 0, 256, 10));
  spec.global_cache = "l2";
  Device cached(spec);
  const auto k1 = run(cached);
  EXPECT_EQ(k1.metrics.at("l2.miss_bytes"), 4096.0);
  EXPECT_EQ(k1.metrics.at("l2.hit_bytes"), 3.0 * 4096);
  EXPECT_EQ(k1.cycles_per_core, (std::vector<std::uint64_t>{256, 100, 100, 100}));
  EXPECT_EQ(k1.cycles, 256u);
  ASSERT_NE(cached.global_cache(), nullptr);
  EXPECT_TRUE(cached.global_cache()->holds(0x10000000, 4096));
  // Writing the memory from the host makes the cached lines stale: they are dropped.
  Buffer b = cached.allocate(4096);
  std::vector<std::byte> zeros(4096);
  cached.copy_to_device(b, zeros.data(), zeros.size());
  EXPECT_FALSE(cached.global_cache()->holds(b.device_address, 64));
  // A run starts cold.
  cached.reset_profile();
  EXPECT_EQ(cached.global_cache()->resident_lines(), 0u);
  const auto k2 = run(cached);
  EXPECT_EQ(k2.cycles, k1.cycles);
}

}  // namespace
}  // namespace tessera::runtime
