// Internal state of the bm target: the simulated BM1880 chip (lmem of every NPU lane, device
// memory), the BM runtime's contexts and memories, and BMKernel contexts with the commands they
// record. The C API (runtime.cpp, kernel.cpp, ops.cpp) is a thin layer over these; errors are
// C++ exceptions inside and bmerr_t / NULL plus the thread's last error outside (error.cpp).
#pragma once

#include <bmkernel/bm1880/bmkernel_1880.h>
#include <libbmruntime/bmruntime.h>
#include <libbmruntime/bmruntime_bmkernel.h>

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "tessera/arch/machine_spec.h"
#include "tessera/runtime/device.h"
#include "tessera/sim/memory.h"

namespace tessera::bm {

// The chip's design parameters (bmk1880_chip_info_t), read from a preset of the bm family.
struct ChipParams {
  std::uint32_t npu_num = 0;
  std::uint32_t eu_num = 0;
  std::uint32_t lmem_size = 0;
  std::uint32_t lmem_banks = 0;
  std::uint32_t lmem_bank_size = 0;
  static ChipParams from(const arch::MachineSpec& spec);  // UserError if not a bm preset
  bmk_chip_info_t info() const;                           // as bmk1880_chip_info reports it
};

// The preset bm_init / bm_device_open / bmk1880_register use: $TESSERA_BM_PRESET or the
// family's preset "bm1880".
std::string default_preset();

// The handles of one kind (BM contexts, devices, BMNet networks) the C API gave out and has not
// released, found by address and never by reading the handle: a released one is freed memory,
// so a second bm_exit or a use after it is a UserError rather than a crash.
class LiveHandles {
 public:
  // name: what a handle is ("BM context"); make: how to get one; released_by: what releases it.
  LiveHandles(const char* name, const char* make, const char* released_by)
      : name_(name), make_(make), released_by_(released_by) {}
  void add(const void* handle);
  bool remove(const void* handle);  // false when it was not live
  bool contains(const void* handle) const;
  // A UserError naming `what` unless handle is live (NULL, released, or never made).
  void require(const void* handle, const char* what) const;

 private:
  const char *name_, *make_, *released_by_;
  mutable std::mutex mutex_;
  std::set<const void*> live_;
};
LiveHandles& live_contexts();
LiveHandles& live_devices();
LiveHandles& live_nets();
// ctx when it is a live BM context; a UserError naming `what` otherwise (NULL or released).
bm_context* live_context(bmctx_t ctx, const char* what);
const arch::MachineSpec& default_spec();

// An lmem tensor or matrix as a command captured it (the caller may free its tensor_lmem
// before submitting). Strides are in bytes (one byte per 8-bit datum).
struct Tl {
  std::string role;  // "a", "ofmap", ... for messages
  std::uint32_t la = 0;
  std::uint32_t n = 0, c = 0, h = 0, w = 0;  // a matrix is held as (row, ceil(col/eu), 1, eu)
  std::uint32_t sn = 0, sc = 0, sh = 0, sw = 0;
  bool matrix = false;
  std::uint32_t rows = 0, cols = 0;  // matrices only
  fmt_t fmt = FMT_I8;
  bool aligned = false;
  bool is_signed() const { return fmt == FMT_I8; }
  std::uint64_t count() const {
    return matrix ? std::uint64_t{rows} * cols : std::uint64_t{n} * c * h * w;
  }
  std::string describe() const;
};

// One simulated chip: lmem of every lane (host-backed, initialisation tracked) and the device
// (global memory, host link, profile) shared with the runtime.
class Chip {
 public:
  explicit Chip(std::unique_ptr<runtime::Device> device);
  // A chip on a device owned elsewhere: the compiler backend runs on the plan runner's device.
  explicit Chip(runtime::Device& device);
  runtime::Device& device() { return *device_; }
  const ChipParams& params() const { return params_; }
  sim::Memory& lane(std::uint32_t i) { return lanes_[i]; }

  // Byte of element (n, c, h, w) of `t`; reads check initialisation (DeviceFault naming the
  // lane, the bank, the tensor and the address), writes mark it.
  // Inline: the simulator calls them once per element.
  std::uint8_t read(const Tl& t, std::uint32_t n, std::uint32_t c, std::uint32_t h,
                    std::uint32_t w, const char* op) {
    const std::uint32_t lane = c % params_.npu_num;
    const std::uint64_t off = offset(t, n, c, h, w);
    if (!lanes_[lane].initialised(off)) unwritten_read(t, n, c, h, w, op);
    return lane_bytes_[lane][off];
  }
  void write(const Tl& t, std::uint32_t n, std::uint32_t c, std::uint32_t h, std::uint32_t w,
             std::uint8_t v) {
    const std::uint32_t lane = c % params_.npu_num;
    const std::uint64_t off = offset(t, n, c, h, w);
    lane_bytes_[lane][off] = v;
    lanes_[lane].mark_initialised(off, 1);
  }
  // Row (n, c, h) of `t`, t.w bytes, with one initialisation check and one mark per row where
  // the row is contiguous; a fault names the row's first unwritten element, as read() would.
  void read_row(const Tl& t, std::uint32_t n, std::uint32_t c, std::uint32_t h,
                std::uint8_t* out, const char* op);
  void write_row(const Tl& t, std::uint32_t n, std::uint32_t c, std::uint32_t h,
                 const std::uint8_t* v);
  // Element (r, k) of a matrix.
  std::uint8_t read_m(const Tl& t, std::uint32_t r, std::uint32_t k, const char* op) {
    return read(t, r, k / params_.eu_num, 0, k % params_.eu_num, op);
  }
  void write_m(const Tl& t, std::uint32_t r, std::uint32_t k, std::uint8_t v) {
    write(t, r, k / params_.eu_num, 0, k % params_.eu_num, v);
  }

  // Device memory: the allocations the runtime made, by address; gmem(addr, bytes) is the host
  // view of [addr, addr + bytes) inside one of them, or a DeviceFault.
  void add_region(std::uint64_t address, const runtime::Buffer& buffer);
  void remove_region(std::uint64_t address);
  std::uint8_t* gmem(std::uint64_t address, std::uint64_t bytes, const char* op);

 private:
  std::uint64_t offset(const Tl& t, std::uint32_t n, std::uint32_t c, std::uint32_t h,
                       std::uint32_t w) const {
    return std::uint64_t{t.la} + std::uint64_t{n} * t.sn +
           std::uint64_t{c / params_.npu_num} * t.sc + std::uint64_t{h} * t.sh +
           std::uint64_t{w} * t.sw;
  }
  // The DeviceFault of a read of an element no GDMA load or computation wrote.
  [[noreturn]] void unwritten_read(const Tl& t, std::uint32_t n, std::uint32_t c,
                                   std::uint32_t h, std::uint32_t w, const char* op) const;
  void make_lanes();
  std::unique_ptr<runtime::Device> owned_;
  runtime::Device* device_ = nullptr;
  ChipParams params_;
  std::vector<sim::Memory> lanes_;
  std::vector<std::uint8_t*> lane_bytes_;
  std::map<std::uint64_t, runtime::Buffer> regions_;
};

// The cost of a command, turned into cycles with the device's cost model at submit.
struct Cost {
  bool gdma = false;
  std::string src_memory, dst_memory;  // gdma
  std::uint64_t bytes = 0;             // gdma: bytes moved
  std::uint64_t gmem_bytes = 0;        // bytes through global memory
  double lane_steps = 0;               // tpu: cycles of one lane's EUs
  double macs = 0;                     // tpu: multiply-accumulates (for utilisation)
};

// The lmem bytes a command reads or writes: [lo, hi) on lanes 0 .. lanes-1.
struct Touch {
  std::uint32_t lo = 0, hi = 0, lanes = 0;
  bool write = false;
  std::string what;  // "a (tensor ...)"
};

struct Command {
  std::vector<Touch> touches;  // for race detection at submit
  std::uint64_t serial = 0;
  std::uint64_t generation = 0;  // command buffer it belongs to
  int engine = ENGINE_BD;
  std::string name;
  std::vector<Command*> deps;
  std::function<void(Chip&)> run;
  Cost cost;
  // The call that recorded it, serialised (bmk1880_acquire_cmdbuf writes it; codec in ops.cpp).
  std::uint16_t op = 0;
  std::vector<std::uint8_t> payload;
};

}  // namespace tessera::bm

// The BM runtime's handles.
struct bm_device {
  int index = 0;
  std::unique_ptr<tessera::bm::Chip> chip;
  std::set<bm_memory*> memories;  // live device memories
};

struct bm_memory {
  bm_device* device = nullptr;
  tessera::runtime::Buffer root;  // the allocation it lies in
  std::uint64_t offset = 0;       // from the root's start
  std::size_t size = 0;
  bool is_root = false;
  std::uint64_t address() const { return root.device_address + offset; }
};

struct bm_context {
  bm_device* device = nullptr;
  bool owns_device = false;  // bm_init opened it
  bmk1880_context* kernel = nullptr;
};

// A BMKernel context: records commands until submit.
struct bmk1880_context {
  std::uint64_t id = 0;
  tessera::bm::ChipParams params;
  tessera::arch::MachineSpec spec;
  std::vector<std::uint8_t> own_cmdbuf;  // bmruntime_bmkernel_create's
  std::uint8_t* cmdbuf = nullptr;        // bmk1880_register's (the user's)
  std::uint32_t cmdbuf_size = 0;
  bm_context* runtime = nullptr;  // bound by bmruntime_bmkernel_create

  // lmem stack (bmk1880_tl_alloc / tl_alloc_bank), freed last-in first-out.
  struct Frame {
    tensor_lmem* tensor;
    std::uint32_t previous_top;
  };
  std::uint32_t top = 0;
  std::uint32_t high_water = 0;
  std::vector<Frame> frames;
  std::set<tensor_lmem*> tensors;  // every tensor_lmem this context handed out
  // The most recently freed tensors, kept allocated so that their addresses are not reused and a
  // use after bmk1880_tl_free is refused by address (kFreedKept of them, oldest deleted first).
  static constexpr std::size_t kFreedKept = 4096;
  std::deque<tensor_lmem*> freed_order;
  std::set<const tensor_lmem*> freed;

  // Commands: the current command buffer's, in record order; older ones are kept as retired
  // shells so that a handle from an earlier buffer is recognised.
  std::deque<tessera::bm::Command> commands;  // commands[i] has serial base_serial + i
  std::uint64_t base_serial = 0;              // the oldest shells are dropped (kernel.cpp)
  std::uint64_t generation = 1;
  std::size_t first_current = 0;  // index of the current buffer's first command
  std::string poisoned;           // the first error recorded in the current buffer
  std::vector<tessera::bm::Touch> touches;  // operands captured for the command being recorded

  // Ordering modes (spec 002 "bmk1880 parallel enable", "create streams").
  enum class Mode { serial, parallel, streams } mode = Mode::serial;
  std::vector<tessera::bm::Command*> outstanding;  // what the next serial command waits for
  std::vector<tessera::bm::Command*> barrier;      // what a parallel/stream region starts after
  std::map<int, tessera::bm::Command*> last_of_engine;
  // The last command of each stream that has one (a map: nr_streams may be any int).
  std::map<int, tessera::bm::Command*> stream_tail;
  int stream_count = 0;
  int stream = 0;
};

namespace tessera::bm {

// Records a command in the context's current buffer with the ordering of its mode.
Command* record(bmk1880_context* k, int engine, std::string name, Cost cost,
                std::function<void(Chip&)> run);
// Runs the current buffer's commands on `chip` and empties the buffer.
void submit(bmk1880_context* k, Chip& chip);
bmk1880_context* kernel_of(void* ctx);  // UserError unless a live context
// The captured form of a tensor_lmem: checks format, shape, alignment and that it fits lmem.
Tl capture(bmk1880_context* k, const tensor_lmem* t, const char* role, const char* op);
stride_t default_stride(const ChipParams& p, shape_t s, bool aligned);
// 64-bit FNV-1a, the checksum of command buffers and bmodel files.
inline std::uint64_t fnv1a64(const std::uint8_t* p, std::size_t n,
                             std::uint64_t h = 0xcbf29ce484222325ULL) {
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

bmk1880_context* new_kernel(const arch::MachineSpec& spec);
void destroy_kernel(bmk1880_context* k);

// Command buffers as bytes: one cmd_hdr_t per command (engine_id; `mask` holds the payload's
// length, as `len` has only 8 bits), then the payload: the recording call's op number, the
// indices of the commands it waits for, its operands, and an FNV-1a 64 of all that. Decoding replays the calls into a
// fresh context, adding `neuron_base` / `weight_base` to GDMA addresses marked CTRL_NEURON /
// CTRL_WEIGHT (BMNet relocation), and submits it on `chip`.
std::vector<std::uint8_t> encode_cmdbuf(const bmk1880_context* k);
void run_cmdbuf(Chip& chip, const std::uint8_t* buf, std::size_t size, std::uint64_t neuron_base,
                std::uint64_t weight_base);

}  // namespace tessera::bm
