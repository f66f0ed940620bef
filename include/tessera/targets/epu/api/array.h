// The EPU target's machine: the lock-step core array of a Quadric Chimera preset, its OCM and
// DDR, and the timeline every SDK call books its cycles on (spec 004). The SDK front end
// (api/epu.h, the templates users write against) computes results itself, a tile at a time
// vectorised over the cores, and reports here: OCM placement, the DMA of memCpy, flows, RAU,
// broadcast and array instructions, each on its pipe of one sim::Timeline with costs from the
// preset. Array work (compute, flows, RAU, broadcast) issues in program order, as the array runs
// one instruction stream; memCpy runs on the DMA pipe and overlaps it, waiting only for the
// tensors it touches. One EPU program runs on one host thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "tessera/profile/profile.h"
#include "tessera/runtime/device.h"
#include "tessera/sim/dma.h"
#include "tessera/sim/lockstep.h"
#include "tessera/sim/timeline.h"

namespace tessera::sim {
class Memory;
class FirstFitAllocator;
class WorkScheduler;
}  // namespace tessera::sim

namespace tessera::epu {

// The book-keeping of a tensor in OCM (OcmTensor's non-template part).
struct OcmPlacement {
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  bool placed = false;
  std::uint64_t generation = 0;  // of the Array that placed it
  sim::Event dma_done;           // the last memCpy that touched it
  std::uint64_t dma_kernel = 0;  // Array kernel serial dma_done belongs to
  sim::Event array_done;         // the last flow / RAU / broadcast that touched it
  std::uint64_t array_kernel = 0;
};

// A tensor's description for messages: "OcmTensor<int32, 1x2x12x15>".
std::string tensor_name(std::string_view kind, std::string_view elem, std::int64_t b,
                        std::int64_t c, std::int64_t h, std::int64_t w);

class Array {
 public:
  // UserError unless the preset is of the "epu" family with the pipes (array, dma, flow, rau,
  // broadcast), the memories localmem, ocm and ddr, and the epu.* params this target reads.
  explicit Array(runtime::Device& device);
  ~Array();
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;

  runtime::Device& device() { return device_; }
  const std::string& name() const { return name_; }  // "chimera-q16 array"
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int cores() const { return rows_ * cols_; }
  std::uint64_t core_memory_bytes() const { return core_memory_; }  // localmem per core
  std::uint64_t register_bytes() const { return register_bytes_; }
  std::uint64_t max_flow_bytes() const { return max_flow_bytes_; }
  std::uint64_t generation() const { return generation_; }
  // UserError unless the array has `dim` x `dim` cores (Epu::coreDim, fixed at compile time).
  void check_core_dim(std::uint32_t dim) const;

  // ---- OCM ----
  // Places a tensor of `bytes` in OCM (MemAllocator::allocate, or the first use of a tensor
  // never allocated). DeviceFault naming the tensor, its size and what OCM has free.
  void place(OcmPlacement& p, std::uint64_t bytes, const std::string& tensor);
  void release(OcmPlacement& p);
  std::byte* ocm_data(OcmPlacement& p, std::uint64_t bytes, const std::string& tensor);
  // `bytes` of the OCM at a byte address inside it, whatever tensor holds them (the RAU's
  // address of offsets past its tensor's dimensions); a warning, once per `api` and `tensor`,
  // says that core `core`'s offsets left its tensor.
  std::byte* ocm_outside_tensor(std::string_view api, const std::string& tensor, std::uint64_t address,
                                std::uint64_t bytes, std::size_t core);
  std::uint64_t ocm_capacity() const;
  std::uint64_t ocm_free() const;

  // ---- timing: each call books one SDK operation ----
  // Array instructions: `ops` lock-step instructions (one per cycle per core at
  // epu.alu_op_cycles), neighbour exchanges and MACs. Accumulated and issued in batches.
  void compute(std::uint64_t ops) { pending_compute_ += ops * alu_cycles_; ops_ += ops; }
  void exchange(std::uint64_t count) { pending_compute_ += count * exchange_cycles_; exchanges_ += count; }
  // MACs per core at the int8 or int16 rate of the preset.
  void macs(std::uint64_t per_core, bool int8);
  // A fetch/write flow of `tiles` tiles, `bytes` in all, on `tensor`.
  void flow(std::string_view api, std::uint64_t tiles, std::uint64_t bytes, OcmPlacement& tensor,
            bool write);
  // One RAU access per core.
  void rau(std::string_view api, OcmPlacement& tensor, bool write);
  // Staging (BroadcastStream::stage) and POPs. Both join the batch of array instructions
  // (issued together at the next flow, RAU, memCpy or finish, compute first, then broadcast:
  // the same total, as the array runs them one after another), unless the staged tensor waits
  // for a memCpy.
  void stage(OcmPlacement& tensor, std::span<const std::byte> source, std::string name);
  void pop(std::string_view api);
  sim::BroadcastBus& bus() { return bus_; }
  // memCpy of `bytes` between DDR and the OCM tensor, copying `d` on the DMA pipe.
  void mem_cpy(const sim::DmaDescriptor& d, OcmPlacement& tensor, bool to_ocm);

  // Faults of the SDK's rules, at the array (`core` >= 0: that core, named "core (r, c)").
  [[noreturn]] void fault(std::string_view api, const std::string& message, int core = -1) const;

  // Host threads for flows (tests of determinism); 0: the device's scheduler.
  void set_threads(unsigned threads);
  sim::WorkScheduler& scheduler();

  // Ends the program so far as a kernel named `name` in the device's profile: flushes pending
  // instructions, records the timeline (pipe busy time per unit, bytes, trace) and starts a new
  // one. Returns the record. Nothing pending: an empty record, not recorded.
  profile::KernelRecord finish(std::string_view name);
  bool pending() const;
  // Cycles of the program so far (not yet finished).
  std::uint64_t cycles_so_far();

 private:
  void flush();
  sim::Event after_array(OcmPlacement* tensor, bool needs_dma);

  runtime::Device& device_;
  std::string name_;
  int rows_ = 0, cols_ = 0;
  std::uint64_t core_memory_ = 0, register_bytes_ = 4, max_flow_bytes_ = 0;
  std::uint64_t alu_cycles_ = 1, exchange_cycles_ = 1, pop_cycles_ = 1, stage_cycles_ = 1;
  double int8_macs_ = 1, int16_macs_ = 1, flow_tiles_per_cycle_ = 1, rau_per_cycle_ = 1;
  std::uint64_t dma_setup_ = 0;
  std::unique_ptr<sim::Memory> ocm_;
  std::set<std::string> warned_outside_;  // "api tensor" pairs told of RAU offsets past the tensor
  std::unique_ptr<sim::FirstFitAllocator> ocm_alloc_;
  std::unique_ptr<sim::WorkScheduler> own_scheduler_;
  sim::BroadcastBus bus_;
  std::unique_ptr<sim::Timeline> timeline_;
  sim::PipeId p_array_ = 0, p_dma_ = 0, p_flow_ = 0, p_rau_ = 0, p_broadcast_ = 0;
  sim::Event last_array_;
  std::uint64_t pending_compute_ = 0, pending_broadcast_ = 0;
  std::uint64_t flow_latency_ = 0, rau_latency_ = 0;
  std::uint64_t kernel_serial_ = 1;
  std::uint64_t generation_ = 0;
  std::uint64_t ddr_bytes_ = 0;
  std::uint64_t ops_ = 0, exchanges_ = 0, mac_ops_ = 0, flows_ = 0, flow_tiles_ = 0, rau_ = 0,
                pops_ = 0, stages_ = 0, mem_cpys_ = 0;
  bool any_ = false;
};

// ---- the process's EPU (the SDK's calls take no device) ----
// Opened on first use from $TESSERA_EPU_DEVICE, else "chimera-q16".
Array& array();
// Replaces the device (tests, tools); nullptr: back to the default on next use. Pending work of
// the old array is finished first.
void set_device(std::unique_ptr<runtime::Device> device);
runtime::Device& device();
// Records the program so far as one kernel (Array::finish) and returns its record.
profile::KernelRecord synchronize(std::string_view name = "epu:program");
// Host threads for the array's flows; 0: the device's scheduler (TESSERA_THREADS).
void set_threads(unsigned threads);

namespace detail {
// The array now in use; null until first use. Kept here so that qVar_t operators charge their
// cycles without a call.
extern Array* g_array;
inline Array& current() { return g_array ? *g_array : array(); }
}  // namespace detail

}  // namespace tessera::epu
