// The host-side device API shared by every target: open a device from a preset, allocate
// buffers in its global memory, copy to and from it with modeled host-link time, record the
// work targets launch, synchronise, and read the run's Profile.
// Targets execute work themselves (on sim/) and report it here; the Device keeps the clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "tessera/arch/machine_spec.h"
#include "tessera/profile/profile.h"
#include "tessera/sim/timeline.h"

namespace tessera::sim {
class WorkScheduler;
class CostModel;
class BandwidthChannel;
class SharedCache;
struct DmaEndpoint;
struct GlobalAccess;
}  // namespace tessera::sim

namespace tessera::runtime {

// A region of the device's global memory. Plain value; the Device owns the storage.
struct Buffer {
  std::uint64_t device_address = 0;  // address in the global memory's address space
  std::size_t bytes = 0;
  std::uint64_t id = 0;  // 0: not allocated
  explicit operator bool() const { return id != 0; }
};

class Device {
 public:
  // Opens a device from a preset name ("gaudi") or the path of a MachineSpec JSON file.
  static std::unique_ptr<Device> open(std::string_view preset_or_path);
  explicit Device(arch::MachineSpec spec);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const arch::MachineSpec& spec() const;

  // Allocates in global memory with the preset's alignment. Exhausting it is a DeviceFault
  // naming the memory, the size asked for and what is free.
  Buffer allocate(std::size_t bytes, std::string_view tag = "tensor");
  void free(const Buffer& buffer);  // freeing twice or freeing a foreign buffer: UserError

  // Host <-> device copies; each takes latency + bytes / bandwidth of the preset's host link.
  // Copies outside the buffer are a UserError naming buffer size, offset and length.
  void copy_to_device(const Buffer& dst, const void* src, std::size_t bytes,
                      std::size_t dst_offset = 0);
  void copy_to_host(void* dst, const Buffer& src, std::size_t bytes, std::size_t src_offset = 0);

  // Direct access to a buffer's bytes for the simulators of targets (not for users). Host
  // storage is created on first access, zero-filled, so a large global memory costs only what
  // its buffers hold.
  std::byte* data(const Buffer& buffer);
  const std::byte* data(const Buffer& buffer) const;
  // The buffer as one side of a sim::DmaDescriptor (memory level = the global memory).
  sim::DmaEndpoint dma_endpoint(const Buffer& buffer);
  // The tag given at allocation; UserError for a buffer that is not live.
  const std::string& tag(const Buffer& buffer) const;
  std::size_t live_buffer_count() const;
  std::uint64_t global_bytes_in_use() const;
  std::uint64_t global_bytes_free() const;

  // ---- recording work ----
  // Work runs on an engine: a device-level queue of the device's timeline ("tpc" for a cluster
  // of vector cores, "mme" for a GEMM engine; an empty engine name is the default queue),
  // created on first use. Outside a dependency scope, work starts after all earlier work: one
  // in-order stream. Inside one (begin_scope), it waits only for the scope's `after` events,
  // its engine's earlier work and the scope's own earlier work, so independent graph nodes on
  // different engines overlap. Every engine draws on the global memory's bandwidth
  // (global_channel), so overlapping work shares it.

  // Records work on `record.engine`: `setup_cycles` that move no data, then `record.cycles`
  // that move `global_bytes` through global memory (longer when the bandwidth is not there:
  // shared with overlapping work, or too small for the bytes). Returns the record as stored,
  // with start_cycle and cycles (setup included) filled in.
  const profile::KernelRecord& record_kernel(profile::KernelRecord record,
                                             std::uint64_t global_bytes = 0,
                                             std::uint64_t setup_cycles = 0);
  // A kernel that ran one Timeline per core (cycle 0 = the kernel's start, as if the global
  // memory were the core's alone) and moved `global_bytes[i]` through global memory from core
  // i (empty: none). The cores share the global channel with each other and with overlapping
  // work; a core that cannot draw its bytes at its own rate ends later (its timeline is
  // extended). cycles = the latest core's end, cycles_per_core = each core's end; then each
  // core's pipe busy time as "<core>/<pipe>", bytes moved and trace intervals are added.
  // `record` supplies the name, engine, metrics and bytes.
  const profile::KernelRecord& record_kernel(profile::KernelRecord record,
                                             std::span<sim::Timeline> cores,
                                             std::span<const std::uint64_t> global_bytes = {});
  // The same for a kernel that logged its global accesses (agent = core index, cycle on that
  // core's timeline, device addresses). When the preset has a global_cache, the cache serves
  // them: every core draws all its bytes through the cache's bandwidth, and only its misses
  // (whole lines) and writes through the global memory's; the kernel's metrics get
  // "<cache>.hit_bytes", "<cache>.miss_bytes" and "<cache>.global_bytes". Without a cache, as
  // above with each core's bytes summed from its accesses.
  const profile::KernelRecord& record_kernel(profile::KernelRecord record,
                                             std::span<sim::Timeline> cores,
                                             std::span<const sim::GlobalAccess> accesses);
  // Dependency scopes (how a graph runtime gives node dependencies): work recorded until
  // end_scope waits only for `after` (plus its engine and the scope's earlier work).
  // end_scope returns the event of the scope's completion. Scopes do not nest.
  void begin_scope(std::span<const sim::Event> after);
  sim::Event end_scope();
  // The cycle at which work recorded now on `engine` would start.
  std::uint64_t next_start(std::string_view engine);
  // Adds a trace interval (kept only while tracing is on; UserError if it ends before it
  // starts) / pipe busy time / bytes moved / a high-water mark (the peak is kept) to the
  // run's profile. Safe to call from several host threads.
  void record_interval(profile::Interval interval);
  void add_pipe_busy(const std::string& pipe, std::uint64_t cycles);
  void add_bytes_moved(const std::string& level, std::uint64_t bytes);
  void note_memory_high_water(const std::string& where, const std::string& category,
                              std::uint64_t bytes);
  // Adds what a core's timeline recorded (pipe busy time as "<core>/<pipe>", bytes moved, and
  // its intervals when tracing is on) with its cycle 0 placed at `start_cycle` on the device.
  // Does not advance the device clock: record the kernel with record_kernel. Runs
  // timeline.finish() first, so a deadlocked timeline raises its DeviceFault here.
  void record_timeline(const sim::Timeline& timeline, std::uint64_t start_cycle);

  // Waits for all issued work: in the model, closes the profile (total cycles, the global
  // memory's high-water mark under "device").
  void synchronize();
  std::uint64_t now_cycles() const;
  const profile::Profile& profile() const;
  void reset_profile();
  // The profile so far, moved out; the device then starts afresh, as after reset_profile().
  profile::Profile take_profile();
  void set_trace_enabled(bool enabled);
  bool trace_enabled() const;

  sim::WorkScheduler& scheduler();
  // The cost model of the preset, shared by everything that runs on this device.
  const sim::CostModel& cost_model() const;
  // The global memory's bandwidth over time, shared by every engine and core (used by
  // record_kernel; exposed for targets that move data outside kernels, e.g. DMA engines).
  sim::BandwidthChannel& global_channel();
  // The cache in front of global memory (the preset's global_cache), or nullptr.
  sim::SharedCache* global_cache();

  // State a target keeps for the device's lifetime (an AI Core's buffers between launches):
  // one T per device, default-constructed on first use, destroyed with the device. Thread-safe.
  template <typename T>
  T& target_state() {
    return *static_cast<T*>(
        target_state(typeid(T), [] { return std::shared_ptr<void>(std::make_shared<T>()); }).get());
  }

 private:
  std::shared_ptr<void> target_state(const std::type_info& type, std::shared_ptr<void> (*make)());
  // The common part of recording a kernel of cores: `ends_of(start, record)` gives each core's
  // end on the device (called with the device locked).
  const profile::KernelRecord& record_cores(
      profile::KernelRecord record, std::span<sim::Timeline> cores,
      const std::function<std::vector<std::uint64_t>(std::uint64_t, profile::KernelRecord&)>&
          ends_of);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::runtime
