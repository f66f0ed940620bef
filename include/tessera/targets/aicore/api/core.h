// One Ascend AI Core at the level of spec 003: the Cube, Vector and Scalar units, the
// L1/L0A/L0B/L0C/Unified buffers (sim::Memory each) and the six pipes S, V, M, MTE1, MTE2, MTE3
// of a sim::Timeline. Every instruction is executed at once on host data (execution-driven)
// and issued to its pipe with a cost from the preset; its buffer accesses go to a
// sim::RaceDetector so that two pipes touching the same bytes without a flag, barrier or queue
// between them are reported at finish(). Units may only touch their own buffers (spec 003
// "Compute Units", "Pipes"): anything else is a DeviceFault naming core, pipe, instruction,
// buffer and bytes. The Ascend C layer (kernel_operator.h) is written on top of this class.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/dtype.h"
#include "tessera/runtime/device.h"
#include "tessera/sim/cache.h"
#include "tessera/sim/memory.h"
#include "tessera/sim/race.h"
#include "tessera/sim/timeline.h"

namespace tessera::aicore {

// The pipes of spec 003 "Pipes", in the preset's order.
enum class Pipe : std::uint8_t { S, V, M, MTE1, MTE2, MTE3 };
inline constexpr int kPipeCount = 6;
// The buffers a core's instructions name; GM is the device's global memory (host addresses of
// GmAlloc'd memory in CPU-debug mode).
enum class Buf : std::uint8_t { GM, L1, L0A, L0B, L0C, UB };
inline constexpr int kBufCount = 6;

const char* pipe_name(Pipe pipe);
const char* buf_name(Buf buf);

// An operand: an address in a buffer, and the queue slot it was allocated from (0: none), so
// that an access after FreeTensor is caught and a DeQue's wait lands on the consuming pipe.
struct Ref {
  Buf buf = Buf::UB;
  std::uint64_t addr = 0;
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
};

// A strided transfer: `count` bursts of `bytes`, with gaps between bursts on each side
// (DataCopyParams in bytes).
struct Burst {
  std::uint64_t count = 1;
  std::uint64_t bytes = 0;
  std::uint64_t src_gap = 0;
  std::uint64_t dst_gap = 0;
};

// One operand of a vector instruction: 32-byte blocks `block_stride` blocks apart inside a
// repeat, repeats `repeat_stride` blocks apart.
struct VecOperand {
  Ref ref;
  unsigned elem_bytes = 2;
  std::uint32_t block_stride = 1;
  std::uint32_t repeat_stride = 8;
  bool write = false;
  // When non-zero: the bytes from ref.addr the operand may touch, whatever the shape (the
  // source of a Gather, read at offsets only known from data).
  std::uint64_t span_bytes = 0;
  // The start's alignment: 32 bytes (spec 003), 16 for the CMPMASK moves (SetCmpMask).
  std::uint64_t align = 32;
};

// The shape of a vector instruction: either `count` contiguous elements (count > 0), or
// `repeat` repeats of up to 256 bytes with a per-lane mask (bit i of mask[0..1] enables lane i).
struct VecShape {
  std::uint64_t count = 0;
  std::uint32_t repeat = 1;
  std::array<std::uint64_t, 2> mask = {~std::uint64_t{0}, ~std::uint64_t{0}};
};

inline constexpr std::uint64_t kBlockBytes = 32;    // spec 003: vector operands, 32 B aligned
inline constexpr std::uint64_t kRepeatBytes = 256;  // 8 blocks per vector repeat

// Address of lane `lane` of repeat `r` of an operand (lanes per block = 32 / elem_bytes).
inline std::uint64_t lane_address(const VecOperand& o, std::uint64_t r, std::uint64_t lane) {
  const std::uint64_t per_block = kBlockBytes / o.elem_bytes;
  return o.ref.addr + r * o.repeat_stride * kBlockBytes +
         (lane / per_block) * o.block_stride * kBlockBytes + (lane % per_block) * o.elem_bytes;
}

// A core's L1, L0A, L0B, L0C and UB (index: Buf; GM's slot unused), kept between launches.
using CoreBuffers = std::array<std::unique_ptr<sim::Memory>, kBufCount>;

class Core {
 public:
  // Core `index` of `device` (an aicore preset). UserError when the preset lacks the pipes,
  // buffers or params this target reads. Its buffers are `kept` (made when empty), contents as
  // the launch that last used them left them (Ascend C does not clear them); they go back into
  // `kept` when the core is destroyed. Timeline, allocators, flags and slots are new.
  Core(runtime::Device& device, int index, CoreBuffers& kept);
  ~Core();
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  int index() const { return index_; }
  const std::string& name() const { return name_; }
  runtime::Device& device() { return device_; }
  sim::Timeline& timeline() { return timeline_; }
  const sim::Memory& memory(Buf buf) const;
  std::uint64_t global_bytes() const { return global_bytes_; }
  // The core's global-memory accesses (device addresses, cycles of its timeline) once its
  // program has ended, for the device's shared cache (runtime::Device::record_kernel).
  std::vector<sim::GlobalAccess> global_accesses() const;

  // Host view of [addr, addr + bytes) of a buffer, bounds-checked (GM: inside one GmAlloc
  // allocation). `what` names the instruction for the fault message.
  std::byte* data(Buf buf, std::uint64_t addr, std::uint64_t bytes, std::string_view what);

  // ---- instructions ----
  // A data move. The path picks the pipe (spec 003 "Pipes"): GM -> L1/L0A/L0B/UB on MTE2,
  // L1 -> L0A/L0B/UB on MTE1, UB -> GM/L1 on MTE3, UB -> UB and L0C -> UB on V. Any other path
  // is a DeviceFault. UB and L1 ends must be 32-byte aligned, L0 ends fractal-aligned.
  // `convert` (optional) rewrites each burst instead of a byte copy: f32 L0C -> f16 UB, say.
  using BurstConvert = void (*)(std::byte* dst, const std::byte* src, std::uint64_t src_bytes);
  void copy(const Ref& dst, const Ref& src, const Burst& burst, std::string_view what,
            std::uint64_t dst_bytes_per_burst = 0, BurstConvert convert = nullptr);
  // MTE1 Load2D: `repeat` 512-byte fractals from src (L1 or GM) fractal `start`, `src_stride`
  // fractals apart, to dst (L0A/L0B) fractals `1 + dst_gap` apart; `transpose` transposes
  // each 16x16 fractal of 2-byte elements.
  void load2d(const Ref& dst, const Ref& src, std::uint32_t start, std::uint32_t repeat,
              std::uint32_t src_stride, std::uint32_t dst_gap, bool transpose);
  // MTE1 Img2Col of an L1 feature map in 5HD layout (C1, H, W, C0 = 32 B of elements) into
  // L0A/L0B as fractals: rows are output pixels (16 per fractal), columns the (c1, kh, kw, c0)
  // patch elements. Padding reads as zero.
  struct Img2Col {
    std::uint32_t c1 = 1, h = 1, w = 1, kh = 1, kw = 1;
    std::uint32_t stride_h = 1, stride_w = 1, pad_top = 0, pad_bottom = 0, pad_left = 0,
                  pad_right = 0, dilation_h = 1, dilation_w = 1;
    unsigned elem_bytes = 2;
    // Window of the patch matrix (whole fractals): output pixels [m_start, m_start + m_count)
    // and patch columns [k_start, k_start + k_count); counts of 0 take everything.
    std::uint32_t m_start = 0, m_count = 0, k_start = 0, k_count = 0;
    // What padded positions read (the bits of a 2-byte element; 0: zero).
    std::uint16_t pad_bits = 0;
  };
  void img2col(const Ref& dst, const Ref& src, const Img2Col& p);
  // Vector instruction: checks ownership (UB only), alignment, bounds and slots, records the
  // accesses, issues it on V with its cost. The caller computes the lanes.
  void vector(std::string_view what, std::span<const VecOperand> operands, const VecShape& shape);
  // Cube instruction: C (L0C, f32 or i32) = [C +] A (L0A) x B (L0B), m x k by k x n, fractal
  // layouts (docs/targets/aicore.md): A zZ, B nZ, C nZ. `in` is f16 or i8.
  void mmad(const Ref& c, const Ref& a, const Ref& b, std::uint32_t m, std::uint32_t k,
            std::uint32_t n, DType in, bool accumulate);
  // MTE3 writes `bytes` of GM from `dst` with copies of the `elem_bytes` pattern (Ascend C
  // InitGlobalMemory: a value duplicated in UB and copied out, timed as the UB -> GM move).
  void fill_global(const Ref& dst, std::uint64_t bytes, const void* pattern, unsigned elem_bytes,
                   std::string_view what);
  // A scalar access to a buffer (GetValue / SetValue) on S.
  void scalar(const Ref& ref, std::uint64_t bytes, bool write, std::string_view what);

  // ---- synchronisation (spec 003 "Pipes") ----
  void set_flag(Pipe src, Pipe dst, std::uint32_t event_id);
  void wait_flag(Pipe src, Pipe dst, std::uint32_t event_id);
  void pipe_barrier(Pipe pipe);
  void barrier_all();
  // Ascend C SyncAll: every pipe of this core drains, then the core waits until every core of
  // the launch has arrived (their atomic adds land then, core by core); all go on at the latest
  // arrival plus two GM latencies (a flag written and read in GM). DeviceFault when the launch
  // has more blocks than cores (blocks beyond them start only when a core is free) or when a
  // core ends without reaching the same SyncAll.
  void sync_all();

  // ---- buffers and queue slots, for TPipe / TQue / TBuf ----
  std::uint64_t allocate(Buf buf, std::uint64_t bytes, std::string_view owner);
  void release_all();  // a TPipe ends: its buffers are free again
  void free_buffer(Buf buf, std::uint64_t addr);  // one allocate()'d buffer is free again
  std::uint32_t new_slot(Pipe producer, std::string owner);
  // The slot's tensor is handed to its consumer: set a flag on the pipe that last touched it;
  // the next instruction on any pipe that touches the slot waits for it.
  void hand_over(std::uint32_t slot, std::string_view why);
  std::uint32_t generation(std::uint32_t slot) const;
  void retire(std::uint32_t slot);  // FreeTensor: handles of this generation die
  // DeviceFault when `ref` names a freed generation of its slot.
  void check_live(const Ref& ref, std::string_view what) const;

  // DeviceFault at this core and block for an API rule (queue misuse, bad parameters).
  [[noreturn]] void fault_at(std::string_view what, const std::string& message) const;

  // SetAtomicAdd<T>: UB -> GM copies add T elements into GM instead of overwriting (unset:
  // plain writes). The adds of all cores land when the kernel ends, core by core in program
  // order (apply_atomics), so sums do not depend on host threads; a kernel does not read its
  // own atomic sums back.
  std::optional<DType> atomic_add;
  void apply_atomics();

  // The Vector unit's CMPMASK special register (Ascend C SetCmpMask/GetCmpMask, Select's
  // VSEL_CMPMASK_SPR), 128 bits; cleared when a block starts.
  std::array<std::uint64_t, 2> cmp_mask{};
  // The Vector unit's mask register (Ascend C SetVectorMask, SetMaskNorm/SetMaskCount), which
  // instructions called with isSetMask = false use: in normal mode bit l enables lane l of every
  // repeat; in counter mode vector_mask[0] is the number of elements the instruction processes,
  // whatever its repeatTimes. Reset (normal mode, every lane) when a block starts.
  std::array<std::uint64_t, 2> vector_mask{~std::uint64_t{0}, ~std::uint64_t{0}};
  bool mask_counter = false;
  // The tiling key the host set before the launch (ICPU_SET_TILING_KEY; TILING_KEY_IS).
  std::uint64_t tiling_key = 0;

  // The system workspace of the running block (Ascend C SetSysWorkspace / GetSysWorkSpacePtr);
  // null when a block starts.
  std::uint8_t* sys_workspace = nullptr;

  // Block index/count of the kernel now running on this core (GetBlockIdx / GetBlockNum).
  std::uint32_t block_idx = 0;
  std::uint32_t block_num = 1;

  // Ends the core's program: deadlocks and double-set flags, then races, as DeviceFaults.
  void finish();

 private:
  struct Slot;
  sim::PipeId pid(Pipe p) const { return pipes_[static_cast<int>(p)]; }
  // Issues the pending waits of the slots `refs` use, on `pipe`, and notes the pipe.
  void touch(Pipe pipe, std::span<const Ref* const> refs, std::string_view what);
  sim::Event issue(Pipe pipe, std::string_view what, std::uint64_t cycles);
  void record(sim::Event e, const Ref& ref, std::uint64_t begin, std::uint64_t end, bool write,
              std::string_view what);
  [[noreturn]] void fault(Pipe pipe, std::string_view what, const std::string& message) const;
  std::uint64_t mte_cycles(Buf src, Buf dst, std::uint64_t bytes) const;
  // Extra cycles a vector instruction's repeats spend on UB bank-group conflicts.
  std::uint64_t bank_conflict_cycles(std::span<const VecOperand> operands, const VecShape& shape,
                                     std::uint64_t repeats, unsigned widest) const;
  // Counts and logs a GM access of the instruction `e` (host address in CPU-debug mode).
  void note_global(sim::Event e, std::uint64_t addr, std::uint64_t bytes, bool write);

  runtime::Device& device_;
  int index_;
  std::string name_;
  sim::Timeline timeline_;
  std::array<sim::PipeId, kPipeCount> pipes_{};
  CoreBuffers& kept_;
  CoreBuffers memories_;
  std::array<std::unique_ptr<sim::FirstFitAllocator>, kBufCount> allocators_;
  sim::RaceDetector races_;
  std::vector<Slot> slots_;
  // The timeline's flag of set_flag/wait_flag (src, dst, id), made on first use.
  sim::FlagId user_flag(Pipe src, Pipe dst, std::uint32_t event_id);
  std::vector<std::optional<sim::FlagId>> user_flags_;  // (src, dst, id) -> flag
  std::vector<int> flag_balance_;                       // sets less waits issued so far, per flag
  std::uint32_t flag_ids_ = 8;
  double vector_bytes_per_cycle_ = 256;
  std::uint64_t cube_m_ = 16, cube_k_ = 16, cube_n_ = 16, cube_k_int8_ = 32;
  double cube_cycles_per_step_ = 1;
  std::uint64_t scalar_cycles_ = 1, mte_setup_ = 0, barrier_cycles_ = 0, dispatch_cycles_ = 0;
  std::uint64_t global_bytes_ = 0;
  std::vector<std::pair<sim::Event, sim::GlobalAccess>> accesses_;
  struct PendingAdd {
    std::byte* dst;
    std::vector<std::byte> values;
    DType type;
  };
  std::vector<PendingAdd> pending_adds_;
  std::uint64_t flag_serial_ = 0;

 public:
  // The launch this core belongs to (its meetings for SyncAll); set by launch().
  struct LaunchGroup;
  LaunchGroup* group = nullptr;
};

// ---- CPU-debug launch (what ICPU_RUN_KF does) ----

// The device kernels run on: opened on first use from $TESSERA_AICORE_DEVICE or "ascend910".
runtime::Device& device();
// Replaces it (tests); nullptr goes back to the default on next use.
void set_device(std::unique_ptr<runtime::Device> device);
// The core running the calling host thread's block; UserError outside a kernel launch.
Core& current_core();
bool in_kernel();
// Runs `body` once per block on block_dim blocks spread over the cores (block b on core
// b % cores, one after another there), cores on host threads; checks each core at the end
// and records the kernel in the device's profile. Returns that record. The calling host thread
// is the launch's stream: the cores' buffers are the ones its previous launch on this device
// left, never those of a launch from another thread (which may run at the same time).
profile::KernelRecord launch(std::string_view name, std::uint32_t block_dim,
                             const std::function<void()>& body);
// The same on a given device (the op library and the backend run on the compiler's device).
profile::KernelRecord launch(runtime::Device& device, std::string_view name,
                             std::uint32_t block_dim, const std::function<void()>& body);
// Host threads for the cores of later launches (tests of determinism); 0: the device's
// scheduler (TESSERA_THREADS).
void set_threads(unsigned threads);
// The tiling key of the calling host thread's later launches (Ascend C's ICPU_SET_TILING_KEY;
// kernels read it with TILING_KEY_IS).
void set_tiling_key(std::uint64_t key);
// The record of the calling host thread's latest launch.
const profile::KernelRecord& last_kernel();
// Global memory for kernels: allocates in the device's global memory (DeviceFault when it is
// exhausted) and returns the host address of its bytes.
void* gm_alloc(std::size_t bytes);
void gm_free(void* ptr);
// Lets kernels reach [ptr, ptr + bytes) of a device buffer as GM (the op library passes the
// compiler's tensors this way) until gm_unregister.
void gm_register(void* ptr, std::size_t bytes);
// Whether [ptr, ptr + bytes) lies inside one gm_alloc'd or registered block.
bool gm_contains(const void* ptr, std::size_t bytes);
// Host <-> global memory copies over the device's host link, timed in its profile
// (runtime::Device::copy_to_device / copy_to_host); the device side must lie inside one
// gm_alloc'd block (UserError otherwise, naming the range).
void gm_copy_to_device(void* dst, const void* src, std::size_t bytes);
void gm_copy_to_host(void* dst, const void* src, std::size_t bytes);
void gm_unregister(void* ptr);

}  // namespace tessera::aicore
