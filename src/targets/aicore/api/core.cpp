#include "tessera/targets/aicore/api/core.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <list>
#include <map>
#include <mutex>
#include <thread>
#include <type_traits>

#include <fmt/format.h>

#include "tessera/core/error.h"
#include "tessera/ops/gemm.h"
#include "tessera/sim/cost_model.h"
#include "tessera/sim/rendezvous.h"
#include "tessera/sim/scheduler.h"

namespace tessera::aicore {

const char* pipe_name(Pipe pipe) {
  static constexpr const char* names[] = {"S", "V", "M", "MTE1", "MTE2", "MTE3"};
  return names[static_cast<int>(pipe)];
}

const char* buf_name(Buf buf) {
  static constexpr const char* names[] = {"GM", "L1", "L0A", "L0B", "L0C", "UB"};
  return names[static_cast<int>(buf)];
}

namespace {

constexpr std::uint64_t kFractalBytes = 512;  // 16 x 16 fp16 (or 16 x 32 int8)

// GmAlloc'd allocations: host address -> bytes, and the device buffer behind each.
struct GmBlock {
  runtime::Buffer buffer;
  std::uint64_t bytes = 0;
  // Where the block lies in the device's address space, for the shared cache: the buffer's
  // device address, or for memory lent by gm_register an address past the global memory given
  // in registration order (so that cycles never depend on host pointer values).
  std::uint64_t device_base = 0;
};
struct GlobalMemory {
  std::mutex mutex;
  std::map<std::uintptr_t, GmBlock> live;
  std::uint64_t next_lent = std::uint64_t{1} << 52;
};
GlobalMemory& global_memory() {
  static GlobalMemory g;
  return g;
}

std::unique_ptr<runtime::Device>& device_slot() {
  static std::unique_ptr<runtime::Device> d;
  return d;
}
std::mutex& device_mutex() {
  static std::mutex m;
  return m;
}

thread_local Core* tls_core = nullptr;
thread_local std::uint64_t tls_tiling_key = 0;  // the launching thread's, copied to its cores

std::unique_ptr<sim::WorkScheduler>& own_scheduler() {
  static std::unique_ptr<sim::WorkScheduler> s;
  return s;
}

// The calling thread's latest launch (launches of two threads never see each other's record).
profile::KernelRecord& last_record() {
  thread_local profile::KernelRecord r;
  return r;
}

// A core's L1, L0A, L0B, L0C and UB outlive the launch that used them: building them for every
// launch (zero-filled host storage, first-touch page faults) was most of the host time of small
// networks. Their contents carry over as on the hardware, where Ascend C does not clear a
// buffer: Huawei's CANN API reference ("AllocTensor", Ascend C API, CANN 8.0) says an allocated
// tensor's contents need not be zero. Only the allocators, flags and queue slots start afresh.
// The buffers belong to their device and stream, the host thread that launches (its launches
// run in order, as on one ACL stream): what a kernel finds in a buffer it did not write is what
// the same core left at the previous launch of the same thread on the same device, whatever
// other devices run and whatever other threads launch on this device at the same time.
struct StreamBuffers {
  std::weak_ptr<const int> stream;  // expires when its thread ends
  std::vector<CoreBuffers> cores;   // index: core
  bool in_use = false;
};
struct KeptCoreMemories {
  std::mutex mutex;
  std::list<StreamBuffers> streams;  // a list: a lease's iterator survives other threads' edits
};

// The calling host thread's stream: a token that lives as long as the thread.
const std::shared_ptr<const int>& this_stream() {
  thread_local const std::shared_ptr<const int> token = std::make_shared<const int>(0);
  return token;
}

// The buffers of the calling thread's stream on a device for one launch: taken out of the
// device's keeping at the start, given back at the end, so that a launch of another thread at
// the same time gets a set of its own. Sets of threads that have ended are dropped here.
class BufferLease {
 public:
  BufferLease(runtime::Device& device, std::size_t cores)
      : kept_(device.target_state<KeptCoreMemories>()) {
    const std::shared_ptr<const int>& me = this_stream();
    std::lock_guard lock(kept_.mutex);
    kept_.streams.remove_if([](const StreamBuffers& s) { return !s.in_use && s.stream.expired(); });
    entry_ = std::find_if(kept_.streams.begin(), kept_.streams.end(), [&](const StreamBuffers& s) {
      return !s.in_use && s.stream.lock() == me;
    });
    // A launch nested in a kernel of the same thread finds its stream's set in use: a new one.
    if (entry_ == kept_.streams.end())
      entry_ = kept_.streams.insert(entry_, StreamBuffers{me, {}, false});
    entry_->in_use = true;
    cores_ = std::move(entry_->cores);
    if (cores_.size() < cores) cores_.resize(cores);
  }
  ~BufferLease() {
    std::lock_guard lock(kept_.mutex);
    entry_->cores = std::move(cores_);
    entry_->in_use = false;
  }
  BufferLease(const BufferLease&) = delete;
  BufferLease& operator=(const BufferLease&) = delete;

  CoreBuffers& core(std::size_t c) { return cores_[c]; }

 private:
  KeptCoreMemories& kept_;
  std::list<StreamBuffers>::iterator entry_;
  std::vector<CoreBuffers> cores_;
};

// Every f16 bit pattern as f32: the Cube's operands convert through it.
const std::vector<float>& f16_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (std::uint32_t h = 0; h < t.size(); ++h)
      t[h] = f16_bits_to_f32(static_cast<std::uint16_t>(h));
    return t;
  }();
  return table;
}

}  // namespace

struct Core::Slot {
  std::string owner;
  std::uint32_t generation = 1;
  bool live = true;
  Pipe producer = Pipe::MTE2;  // where a flag is set when nothing touched the tensor yet
  Pipe last = Pipe::MTE2;
  bool touched = false;
  bool pending = false;  // a flag set at hand-over that the next toucher waits for
  sim::FlagId flag{};
  std::string why;
};

Core::Core(runtime::Device& device, int index, CoreBuffers& kept)
    : device_(device),
      index_(index),
      name_(fmt::format("{}{}", device.spec().core_name, index)),
      timeline_(name_, device.spec(), &device.cost_model()),
      kept_(kept) {
  const arch::MachineSpec& spec = device.spec();
  if (spec.target != "aicore")
    throw_user_error(
        "the aicore target runs on presets of the aicore family; '{}' is a {} machine (use "
        "ascend910)",
        spec.name, spec.target);
  for (int p = 0; p < kPipeCount; ++p) pipes_[p] = timeline_.pipe(pipe_name(static_cast<Pipe>(p)));
  for (int b = 1; b < kBufCount; ++b) {
    const char* n = buf_name(static_cast<Buf>(b));
    if (!spec.find_memory(n))
      throw_user_error("preset '{}' has no core buffer '{}', which an AI Core needs (spec 003)",
                       spec.name, n);
  }
  memories_ = std::move(kept_);
  for (int b = 1; b < kBufCount; ++b) {
    if (!memories_[b])
      memories_[b] = std::make_unique<sim::Memory>(spec.memory(buf_name(static_cast<Buf>(b))),
                                                   name_, sim::Memory::Backing::host);
    allocators_[b] = std::make_unique<sim::FirstFitAllocator>(*memories_[b]);
  }
  const sim::CostModel& cost = device.cost_model();
  flag_ids_ = static_cast<std::uint32_t>(cost.param("aicore.flag_ids", 8));
  vector_bytes_per_cycle_ = cost.param("aicore.vector_bytes_per_cycle", 256);
  cube_m_ = static_cast<std::uint64_t>(cost.param("aicore.cube_m", 16));
  cube_k_ = static_cast<std::uint64_t>(cost.param("aicore.cube_k", 16));
  cube_n_ = static_cast<std::uint64_t>(cost.param("aicore.cube_n", 16));
  cube_k_int8_ = static_cast<std::uint64_t>(cost.param("aicore.cube_k_int8", 32));
  cube_cycles_per_step_ = cost.param("aicore.cube_cycles_per_step", 1);
  scalar_cycles_ = static_cast<std::uint64_t>(cost.param("aicore.scalar_op_cycles", 1));
  dispatch_cycles_ = static_cast<std::uint64_t>(cost.param("aicore.scalar_dispatch_cycles", 0));
  mte_setup_ = static_cast<std::uint64_t>(cost.param("aicore.mte_setup_cycles", 0));
  barrier_cycles_ = static_cast<std::uint64_t>(cost.param("aicore.barrier_cycles", 0));
  if (vector_bytes_per_cycle_ <= 0 || cube_cycles_per_step_ <= 0 || cube_m_ == 0 || cube_k_ == 0 ||
      cube_n_ == 0)
    throw_user_error("preset '{}': the aicore.* rates must be positive", spec.name);
  user_flags_.assign(static_cast<std::size_t>(kPipeCount * kPipeCount) * flag_ids_, std::nullopt);
  flag_balance_.assign(user_flags_.size(), 0);
  timeline_.set_track_order(true);
  timeline_.set_trace(device.trace_enabled());
  slots_.emplace_back();  // slot 0: tensors outside any queue (TBuf, user addresses)
}

Core::~Core() {
  kept_ = std::move(memories_);
}

sim::FlagId Core::user_flag(Pipe src, Pipe dst, std::uint32_t event_id) {
  // Created on first use: most kernels touch a few of the pipe pairs' event ids.
  std::optional<sim::FlagId>& f =
      user_flags_[(static_cast<std::size_t>(src) * kPipeCount + static_cast<std::size_t>(dst)) *
                      flag_ids_ +
                  event_id];
  if (!f)
    f = timeline_.flag(fmt::format("{}->{} event {}", pipe_name(src), pipe_name(dst), event_id));
  return *f;
}

const sim::Memory& Core::memory(Buf buf) const {
  if (buf == Buf::GM) throw_user_error("{}: GM is the device's memory, not a core buffer", name_);
  return *memories_[static_cast<int>(buf)];
}

void Core::fault(Pipe pipe, std::string_view what, const std::string& message) const {
  throw DeviceFault(fmt::format("{} block {} pipe {}", name_, block_idx, pipe_name(pipe)),
                    fmt::format("{}: {}", what, message));
}

void Core::fault_at(std::string_view what, const std::string& message) const {
  throw DeviceFault(fmt::format("{} block {}", name_, block_idx),
                    fmt::format("{}: {}", what, message));
}

std::byte* Core::data(Buf buf, std::uint64_t addr, std::uint64_t bytes, std::string_view what) {
  if (buf != Buf::GM)
    return memories_[static_cast<int>(buf)]
        ->bytes(memories_[static_cast<int>(buf)]->base() + addr, bytes, what)
        .data();
  GlobalMemory& gm = global_memory();
  std::lock_guard lock(gm.mutex);
  auto it = gm.live.upper_bound(static_cast<std::uintptr_t>(addr));
  if (it != gm.live.begin()) {
    --it;
    const std::uint64_t begin = it->first, end = begin + it->second.bytes;
    if (addr >= begin && addr + bytes <= end) return reinterpret_cast<std::byte*>(addr);
    if (addr < end)
      throw DeviceFault(
          fmt::format("{} block {}", name_, block_idx),
          fmt::format("{}: GM bytes [{:#x}, {:#x}) run {} B past the end of their {}-byte "
                      "GmAlloc allocation at {:#x}; shorten the transfer or allocate more",
                      what, addr, addr + bytes, addr + bytes - end, it->second.bytes, begin));
  }
  throw DeviceFault(fmt::format("{} block {}", name_, block_idx),
                    fmt::format("{}: GM address {:#x} ({} B) is in no GmAlloc allocation; pass "
                                "kernels memory from GmAlloc",
                                what, addr, bytes));
}

void Core::note_global(sim::Event e, std::uint64_t addr, std::uint64_t bytes, bool write) {
  global_bytes_ += bytes;
  timeline_.add_bytes_moved(device_.spec().global_memory, bytes);
  std::uint64_t device_addr = addr;
  {
    GlobalMemory& gm = global_memory();
    std::lock_guard lock(gm.mutex);
    auto it = gm.live.upper_bound(static_cast<std::uintptr_t>(addr));
    if (it != gm.live.begin()) {
      --it;
      device_addr = it->second.device_base + (addr - it->first);
    }
  }
  // The cycle is read once the program has ended: the instruction may wait on a flag set later.
  accesses_.push_back(
      {e, sim::GlobalAccess{0, static_cast<std::uint32_t>(index_), device_addr, bytes, write}});
}

std::vector<sim::GlobalAccess> Core::global_accesses() const {
  timeline_.finish();
  std::vector<sim::GlobalAccess> out;
  out.reserve(accesses_.size());
  for (const auto& [e, a] : accesses_) {
    out.push_back(a);
    out.back().cycle = timeline_.start_of(e);
  }
  return out;
}

sim::Event Core::issue(Pipe pipe, std::string_view what, std::uint64_t cycles) {
  // Spec 003 "Control Units": the Scalar PSQ computes each Cube, Vector and MTE instruction's
  // addresses and parameters before Instruction Dispatch sends it to its pipe, in program
  // order; the instruction cannot start before that.
  // The dispatch is a floor on the start, not an order: a scalar store to UB still needs its
  // S -> V flag before a vector read, as on the hardware, or the race detector reports it. Only
  // when S itself waits on a flag is the start not known yet; then it is a dependency.
  if (pipe != Pipe::S && dispatch_cycles_ > 0) {
    const sim::Event d = timeline_.issue(pid(Pipe::S), "dispatch", dispatch_cycles_);
    if (timeline_.resolved(d))
      return timeline_.issue_at(pid(pipe), what, timeline_.end_of(d), cycles);
    return timeline_.issue(pid(pipe), what, cycles, {d});
  }
  return timeline_.issue(pid(pipe), what, cycles);
}

void Core::record(sim::Event e, const Ref& ref, std::uint64_t begin, std::uint64_t end, bool write,
                  std::string_view what) {
  races_.record(e, buf_name(ref.buf), begin, end,
                write ? sim::RaceDetector::Kind::write : sim::RaceDetector::Kind::read,
                std::string(what));
}

void Core::check_live(const Ref& ref, std::string_view what) const {
  if (ref.slot == 0) return;
  const Slot& s = slots_.at(ref.slot);
  if (s.generation != ref.generation)
    throw DeviceFault(
        fmt::format("{} block {}", name_, block_idx),
        fmt::format("{}: uses a LocalTensor of {} ({} at {:#x}) after its FreeTensor; "
                    "AllocTensor or DeQue a live tensor instead",
                    what, s.owner, buf_name(ref.buf), ref.addr));
}

void Core::touch(Pipe pipe, std::span<const Ref* const> refs, std::string_view what) {
  for (const Ref* r : refs) check_live(*r, what);
  for (const Ref* r : refs) {
    if (r->slot == 0) continue;
    Slot& s = slots_[r->slot];
    if (s.pending) {
      timeline_.wait_flag(pid(pipe), s.flag);
      s.pending = false;
    }
    s.last = pipe;
    s.touched = true;
  }
}

std::uint32_t Core::new_slot(Pipe producer, std::string owner) {
  Slot s;
  s.owner = std::move(owner);
  s.producer = producer;
  s.last = producer;
  s.flag = timeline_.flag(fmt::format("{} buffer {}", s.owner, slots_.size()));
  slots_.push_back(std::move(s));
  return static_cast<std::uint32_t>(slots_.size() - 1);
}

void Core::hand_over(std::uint32_t slot, std::string_view why) {
  Slot& s = slots_.at(slot);
  // A hand-over nobody consumed yet: the consumer never touched the tensor, so its wait is
  // taken on the pipe that set it (no order is lost).
  if (s.pending) timeline_.wait_flag(pid(s.last), s.flag);
  timeline_.set_flag(pid(s.touched ? s.last : s.producer), s.flag);
  s.pending = true;
  s.why = std::string(why);
}

std::uint32_t Core::generation(std::uint32_t slot) const {
  return slots_.at(slot).generation;
}

void Core::retire(std::uint32_t slot) {
  Slot& s = slots_.at(slot);
  ++s.generation;
}

std::uint64_t Core::allocate(Buf buf, std::uint64_t bytes, std::string_view owner) {
  sim::FirstFitAllocator& a = *allocators_[static_cast<int>(buf)];
  if (bytes > a.largest_free_block())
    throw DeviceFault(
        fmt::format("{} block {}", name_, block_idx),
        fmt::format("{}: InitBuffer of {} does not fit in {}: {} in use of {}, {} free; use "
                    "smaller tiles or fewer buffers",
                    owner, sim::format_bytes(bytes), buf_name(buf),
                    sim::format_bytes(a.stats().used), sim::format_bytes(a.stats().capacity),
                    sim::format_bytes(a.free_bytes())));
  const std::uint64_t at = a.allocate(bytes) - memories_[static_cast<int>(buf)]->base();
  device_.note_memory_high_water(name_, buf_name(buf), a.stats().high_water);
  return at;
}

void Core::release_all() {
  for (int b = 1; b < kBufCount; ++b)
    allocators_[b] = std::make_unique<sim::FirstFitAllocator>(*memories_[b]);
}

void Core::free_buffer(Buf buf, std::uint64_t addr) {
  allocators_[static_cast<int>(buf)]->free(addr + memories_[static_cast<int>(buf)]->base());
}

std::uint64_t Core::mte_cycles(Buf src, Buf dst, std::uint64_t bytes) const {
  const std::string gm = device_.spec().global_memory;
  const std::string s = src == Buf::GM ? gm : buf_name(src);
  const std::string d = dst == Buf::GM ? gm : buf_name(dst);
  return device_.cost_model().transfer_cycles(s, d, bytes) + mte_setup_;
}

namespace {

bool path_pipe(Buf src, Buf dst, Pipe& pipe) {
  if (src == Buf::GM && (dst == Buf::L1 || dst == Buf::L0A || dst == Buf::L0B || dst == Buf::UB))
    pipe = Pipe::MTE2;
  else if (src == Buf::L1 && (dst == Buf::L0A || dst == Buf::L0B || dst == Buf::UB))
    pipe = Pipe::MTE1;
  else if (src == Buf::UB && (dst == Buf::GM || dst == Buf::L1))
    pipe = Pipe::MTE3;
  else if ((src == Buf::UB || src == Buf::L0C) && dst == Buf::UB)
    pipe = Pipe::V;
  else
    return false;
  return true;
}

}  // namespace

void Core::copy(const Ref& dst, const Ref& src, const Burst& burst, std::string_view what,
                std::uint64_t dst_bytes_per_burst, BurstConvert convert) {
  Pipe pipe = Pipe::MTE2;
  if (!path_pipe(src.buf, dst.buf, pipe))
    throw DeviceFault(
        fmt::format("{} block {}", name_, block_idx),
        fmt::format("{}: no MTE moves data {} -> {} (spec 003 'Pipes': GM -> L1/L0A/L0B/UB on "
                    "MTE2, L1 -> L0A/L0B/UB on MTE1, UB -> GM/L1 on MTE3, L0C -> UB on V); "
                    "stage the data through a buffer that has such a path",
                    what, buf_name(src.buf), buf_name(dst.buf)));
  const std::uint64_t out_bytes = dst_bytes_per_burst ? dst_bytes_per_burst : burst.bytes;
  if (burst.count == 0 || burst.bytes == 0) fault(pipe, what, "moves 0 bytes (blockLen 0)");
  auto check_align = [&](const Ref& r) {
    if (r.buf == Buf::GM) return;
    const std::uint64_t align = memories_[static_cast<int>(r.buf)]->alignment();
    if (r.addr % align != 0)
      fault(pipe, what,
            fmt::format("{} address {:#x} is not {}-byte aligned (spec 003); align the tensor",
                        buf_name(r.buf), r.addr, align));
  };
  check_align(dst);
  check_align(src);
  const Ref* refs[] = {&dst, &src};
  touch(pipe, refs, what);
  const std::uint64_t src_span = burst.count * burst.bytes + (burst.count - 1) * burst.src_gap;
  const std::uint64_t dst_span = burst.count * out_bytes + (burst.count - 1) * burst.dst_gap;
  std::byte* d = data(dst.buf, dst.addr, dst_span, what);
  const std::byte* s = data(src.buf, src.addr, src_span, what);
  for (std::uint64_t i = 0; i < burst.count; ++i) {
    std::byte* di = d + i * (out_bytes + burst.dst_gap);
    const std::byte* si = s + i * (burst.bytes + burst.src_gap);
    if (dst.buf == Buf::GM && atomic_add)
      pending_adds_.push_back({di, std::vector<std::byte>(si, si + burst.bytes), *atomic_add});
    else if (convert)
      convert(di, si, burst.bytes);
    else
      std::memmove(di, si, burst.bytes);
  }
  const std::uint64_t moved = burst.count * std::max(burst.bytes, out_bytes);
  const std::uint64_t cycles =
      pipe == Pipe::V
          ? device_.cost_model().op_cycles("V", static_cast<double>(moved), vector_bytes_per_cycle_)
          : mte_cycles(src.buf, dst.buf, moved);
  const sim::Event e = issue(pipe, what, cycles);
  record(e, src, src.addr, src.addr + src_span, false, what);
  record(e, dst, dst.addr, dst.addr + dst_span, true, what);
  if (src.buf == Buf::GM || dst.buf == Buf::GM) {
    const bool write = dst.buf == Buf::GM;
    const Ref& g = write ? dst : src;
    const std::uint64_t gap = write ? burst.dst_gap : burst.src_gap;
    const std::uint64_t per = write ? out_bytes : burst.bytes;
    if (gap == 0)
      note_global(e, g.addr, burst.count * per, write);
    else
      for (std::uint64_t i = 0; i < burst.count; ++i)
        note_global(e, g.addr + i * (per + gap), per, write);
  }
}

void Core::fill_global(const Ref& dst, std::uint64_t bytes, const void* pattern,
                       unsigned elem_bytes, std::string_view what) {
  if (dst.buf != Buf::GM) fault(Pipe::MTE3, what, "the destination is not GM");
  if (bytes == 0) return;
  const Ref* refs[] = {&dst};
  touch(Pipe::MTE3, refs, what);
  std::byte* d = data(Buf::GM, dst.addr, bytes, what);
  for (std::uint64_t i = 0; i < bytes; i += elem_bytes) std::memcpy(d + i, pattern, elem_bytes);
  const sim::Event e = issue(Pipe::MTE3, what, mte_cycles(Buf::UB, Buf::GM, bytes));
  record(e, dst, dst.addr, dst.addr + bytes, true, what);
  note_global(e, dst.addr, bytes, true);
}

void Core::load2d(const Ref& dst, const Ref& src, std::uint32_t start, std::uint32_t repeat,
                  std::uint32_t src_stride, std::uint32_t dst_gap, bool transpose) {
  const std::string_view what = "LoadData 2D";
  if (dst.buf != Buf::L0A && dst.buf != Buf::L0B)
    throw DeviceFault(fmt::format("{} block {}", name_, block_idx),
                      fmt::format("{}: destination {} is not L0A or L0B; Load2D fills the Cube's "
                                  "input buffers",
                                  what, buf_name(dst.buf)));
  if (src.buf != Buf::L1 && src.buf != Buf::GM)
    throw DeviceFault(fmt::format("{} block {}", name_, block_idx),
                      fmt::format("{}: source {} is not L1 or GM", what, buf_name(src.buf)));
  const Pipe pipe = src.buf == Buf::L1 ? Pipe::MTE1 : Pipe::MTE2;
  if (repeat == 0) fault(pipe, what, "repeatTimes is 0");
  if (dst.addr % kFractalBytes != 0 || (src.buf == Buf::L1 && src.addr % kBlockBytes != 0))
    fault(pipe, what,
          fmt::format("{} address {:#x} / {} address {:#x} break the fractal alignment ({} B "
                      "in L0, 32 B in L1); align the tensors",
                      buf_name(dst.buf), dst.addr, buf_name(src.buf), src.addr, kFractalBytes));
  const Ref* refs[] = {&dst, &src};
  touch(pipe, refs, what);
  const std::uint64_t src_span = (static_cast<std::uint64_t>(start) +
                                  static_cast<std::uint64_t>(repeat - 1) * src_stride + 1) *
                                 kFractalBytes;
  const std::uint64_t dst_span =
      (static_cast<std::uint64_t>(repeat - 1) * (1 + dst_gap) + 1) * kFractalBytes;
  std::byte* d = data(dst.buf, dst.addr, dst_span, what);
  const std::byte* s = data(src.buf, src.addr, src_span, what);
  for (std::uint32_t r = 0; r < repeat; ++r) {
    const std::byte* sf = s + (start + static_cast<std::uint64_t>(r) * src_stride) * kFractalBytes;
    std::byte* df = d + static_cast<std::uint64_t>(r) * (1 + dst_gap) * kFractalBytes;
    if (!transpose) {
      std::memcpy(df, sf, kFractalBytes);
    } else {
      for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j) std::memcpy(df + (j * 16 + i) * 2, sf + (i * 16 + j) * 2, 2);
    }
  }
  const sim::Event e = issue(pipe, what, mte_cycles(src.buf, dst.buf, repeat * kFractalBytes));
  record(e, src, src.addr + start * kFractalBytes, src.addr + src_span, false, what);
  record(e, dst, dst.addr, dst.addr + dst_span, true, what);
  if (src.buf == Buf::GM) {
    if (src_stride == 1)
      note_global(e, src.addr + start * kFractalBytes, repeat * kFractalBytes, false);
    else
      for (std::uint32_t r = 0; r < repeat; ++r)
        note_global(e,
                    src.addr + (start + static_cast<std::uint64_t>(r) * src_stride) * kFractalBytes,
                    kFractalBytes, false);
  }
}

void Core::img2col(const Ref& dst, const Ref& src, const Img2Col& p) {
  const std::string_view what = "LoadData Img2Col";
  if (src.buf != Buf::L1 || (dst.buf != Buf::L0A && dst.buf != Buf::L0B && dst.buf != Buf::UB))
    throw DeviceFault(fmt::format("{} block {}", name_, block_idx),
                      fmt::format("{}: {} -> {}; Img2Col reads L1 (spec 003 'Storage Units') "
                                  "and writes L0A, L0B or UB",
                                  what, buf_name(src.buf), buf_name(dst.buf)));
  const Pipe pipe = Pipe::MTE1;
  const std::uint64_t eb = p.elem_bytes;
  const std::uint64_t c0 = kBlockBytes / eb;
  if (p.kh == 0 || p.kw == 0 || p.stride_h == 0 || p.stride_w == 0 || p.dilation_h == 0 ||
      p.dilation_w == 0)
    fault(pipe, what, "kernel, stride and dilation must be at least 1");
  const std::int64_t ekh = static_cast<std::int64_t>(p.dilation_h) * (p.kh - 1) + 1;
  const std::int64_t ekw = static_cast<std::int64_t>(p.dilation_w) * (p.kw - 1) + 1;
  const std::int64_t ho =
      (static_cast<std::int64_t>(p.h) + p.pad_top + p.pad_bottom - ekh) / p.stride_h + 1;
  const std::int64_t wo =
      (static_cast<std::int64_t>(p.w) + p.pad_left + p.pad_right - ekw) / p.stride_w + 1;
  if (ho <= 0 || wo <= 0) fault(pipe, what, "the kernel is larger than the padded feature map");
  const std::uint64_t all_rows = static_cast<std::uint64_t>(ho * wo);
  const std::uint64_t all_k1 = static_cast<std::uint64_t>(p.c1) * p.kh * p.kw;
  // The window of the patch matrix to load: rows [m_start, m_start + m_count), fractal columns
  // [k_start, k_start + k_count) / C0 (0 counts: everything).
  const std::uint64_t m_count = p.m_count ? p.m_count : (all_rows + 15) / 16 * 16;
  const std::uint64_t k_count = p.k_count ? p.k_count : all_k1 * c0;
  if (p.m_start % 16 || m_count % 16 || p.k_start % c0 || k_count % c0)
    fault(pipe, what,
          fmt::format("window rows [{}, +{}) and columns [{}, +{}) must be whole fractals (16 "
                      "rows, {} columns)",
                      p.m_start, m_count, p.k_start, k_count, c0));
  if ((p.k_start + k_count) / c0 > all_k1)
    fault(pipe, what,
          fmt::format("columns [{}, {}) run past the {} columns of the patch matrix", p.k_start,
                      p.k_start + k_count, all_k1 * c0));
  const std::uint64_t m1 = m_count / 16;
  const std::uint64_t k1 = k_count / c0;
  const std::uint64_t first_col = p.k_start / c0;
  if (dst.buf != Buf::UB && dst.addr % kFractalBytes != 0)
    fault(pipe, what,
          fmt::format("{} address {:#x} is not {}-byte (fractal) aligned", buf_name(dst.buf),
                      dst.addr, kFractalBytes));
  const Ref* refs[] = {&dst, &src};
  touch(pipe, refs, what);
  const std::uint64_t src_bytes = static_cast<std::uint64_t>(p.c1) * p.h * p.w * kBlockBytes;
  const std::uint64_t dst_bytes = m1 * k1 * kFractalBytes;
  const std::byte* s = data(src.buf, src.addr, src_bytes, what);
  std::byte* d = data(dst.buf, dst.addr, dst_bytes, what);
  if (p.pad_bits == 0 || eb != 2) {
    std::memset(d, 0, dst_bytes);
  } else {
    for (std::uint64_t i = 0; i < dst_bytes; i += 2) std::memcpy(d + i, &p.pad_bits, 2);
  }
  // zZ: fractal (row block, column block) row-major (L0A, UB); inside, 16 rows of C0 elements.
  for (std::uint64_t r = 0; r < m_count && p.m_start + r < all_rows; ++r) {
    const auto pixel = static_cast<std::int64_t>(p.m_start + r);
    const std::int64_t oh = pixel / wo, ow = pixel % wo;
    for (std::uint64_t c = 0; c < p.c1; ++c)
      for (std::uint64_t i = 0; i < p.kh; ++i)
        for (std::uint64_t j = 0; j < p.kw; ++j) {
          const std::int64_t ih =
              oh * p.stride_h - p.pad_top + static_cast<std::int64_t>(i) * p.dilation_h;
          const std::int64_t iw =
              ow * p.stride_w - p.pad_left + static_cast<std::int64_t>(j) * p.dilation_w;
          if (ih < 0 || iw < 0 || ih >= p.h || iw >= p.w) continue;
          const std::uint64_t full_block = (c * p.kh + i) * p.kw + j;
          if (full_block < first_col || full_block >= first_col + k1) continue;
          const std::uint64_t col_block = full_block - first_col;
          // Into L0B the patch matrix is the Cube's right operand B (k x pixels): fractals in
          // (column block, row block) order, the nZ order mmad reads B in.
          const std::uint64_t fractal =
              dst.buf == Buf::L0B ? col_block * m1 + r / 16 : (r / 16) * k1 + col_block;
          std::byte* out = d + fractal * kFractalBytes + (r % 16) * c0 * eb;
          std::memcpy(out,
                      s + ((c * p.h + static_cast<std::uint64_t>(ih)) * p.w +
                           static_cast<std::uint64_t>(iw)) *
                              kBlockBytes,
                      kBlockBytes);
        }
  }
  const sim::Event e = issue(pipe, what, mte_cycles(src.buf, dst.buf, dst_bytes));
  record(e, src, src.addr, src.addr + src_bytes, false, what);
  record(e, dst, dst.addr, dst.addr + dst_bytes, true, what);
}

void Core::vector(std::string_view what, std::span<const VecOperand> operands,
                  const VecShape& shape) {
  const Pipe pipe = Pipe::V;
  unsigned widest = 1;
  for (const VecOperand& o : operands) widest = std::max(widest, o.elem_bytes);
  for (const VecOperand& o : operands) {
    if (o.ref.buf != Buf::UB)
      throw DeviceFault(
          fmt::format("{} block {} pipe V", name_, block_idx),
          fmt::format("{}: the Vector unit {} {} at {:#x}, but it reads and writes only the "
                      "Unified Buffer (spec 003 'Compute Units'); copy the data to UB first",
                      what, o.write ? "writes" : "reads", buf_name(o.ref.buf), o.ref.addr));
    if (o.ref.addr % o.align != 0)
      fault(pipe, what,
            fmt::format("UB operand at {:#x} is not {}-byte aligned (spec 003 'Compute Units': "
                        "vector operands are 32-byte aligned); start the tensor on a {}-byte "
                        "boundary",
                        o.ref.addr, o.align, o.align));
  }
  if (shape.count == 0 && shape.repeat == 0) fault(pipe, what, "repeatTimes is 0");
  if (shape.count == 0 && shape.repeat > 255)
    fault(pipe, what,
          fmt::format("repeatTimes {} exceeds 255; split the instruction", shape.repeat));
  std::vector<const Ref*> refs;
  for (const VecOperand& o : operands) refs.push_back(&o.ref);
  touch(pipe, refs, what);
  // The span of each operand: contiguous for the count form, the last lane's block otherwise.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
  for (const VecOperand& o : operands) {
    std::uint64_t end = 0;
    if (o.span_bytes) {
      end = o.ref.addr + o.span_bytes;
    } else if (shape.count) {
      end = o.ref.addr + shape.count * o.elem_bytes;
    } else {
      const std::uint64_t lanes = kRepeatBytes / widest;
      std::uint64_t last = 0;
      for (std::uint64_t l = 0; l < lanes; ++l)
        if ((shape.mask[l / 64] >> (l % 64)) & 1) last = l;
      end = std::max(lane_address(o, shape.repeat - 1, last), lane_address(o, 0, last)) +
            o.elem_bytes;
      end = std::max(end, lane_address(o, shape.repeat - 1, 0) + o.elem_bytes);
    }
    (void)data(o.ref.buf, o.ref.addr, end - o.ref.addr, what);
    spans.emplace_back(o.ref.addr, end);
  }
  const std::uint64_t repeats =
      shape.count ? (shape.count * widest + kRepeatBytes - 1) / kRepeatBytes : shape.repeat;
  const sim::Event e =
      issue(pipe, what,
            device_.cost_model().op_cycles("V", static_cast<double>(repeats * kRepeatBytes),
                                           vector_bytes_per_cycle_) +
                bank_conflict_cycles(operands, shape, repeats, widest));
  for (std::size_t i = 0; i < operands.size(); ++i)
    record(e, operands[i].ref, spans[i].first, spans[i].second, operands[i].write, what);
}

std::uint64_t Core::bank_conflict_cycles(std::span<const VecOperand> operands,
                                         const VecShape& shape, std::uint64_t repeats,
                                         unsigned widest) const {
  const sim::Memory& ub = *memories_[static_cast<int>(Buf::UB)];
  if (ub.banks() <= 1) return 0;
  // Each repeat reads its operands' 32-byte blocks and writes its destination's; a bank group
  // serves one row a cycle for reads and one for writes (sim::Memory's banks are the groups).
  // The group pattern of repeat r depends on r only modulo the number of groups, so the first
  // `banks` repeats price all of them.
  const std::uint64_t period = std::min<std::uint64_t>(repeats, ub.banks());
  std::vector<std::uint64_t> per(period, 0);
  std::vector<sim::Access> reads, writes;
  for (std::uint64_t r = 0; r < period; ++r) {
    reads.clear();
    writes.clear();
    for (const VecOperand& o : operands) {
      if (o.span_bytes) continue;  // a gather's reads follow its data, not a block pattern
      const std::uint64_t blocks = kRepeatBytes / kBlockBytes * o.elem_bytes / widest;
      for (std::uint64_t b = 0; b < blocks; ++b) {
        const std::uint64_t at =
            shape.count ? o.ref.addr + r * blocks * kBlockBytes + b * kBlockBytes
                        : o.ref.addr + (r * o.repeat_stride + b * o.block_stride) * kBlockBytes;
        (o.write ? writes : reads).push_back({ub.base() + at, kBlockBytes});
      }
    }
    per[r] = std::max(ub.bank_conflict_cycles(reads), ub.bank_conflict_cycles(writes));
  }
  std::uint64_t total = 0;
  for (std::uint64_t r = 0; r < period; ++r)
    total += per[r] * (repeats / period + (r < repeats % period ? 1 : 0));
  return total;
}

void Core::mmad(const Ref& c, const Ref& a, const Ref& b, std::uint32_t m, std::uint32_t k,
                std::uint32_t n, DType in, bool accumulate) {
  const std::string_view what = "Mmad";
  const Pipe pipe = Pipe::M;
  if (a.buf != Buf::L0A || b.buf != Buf::L0B || c.buf != Buf::L0C)
    throw DeviceFault(
        fmt::format("{} block {} pipe M", name_, block_idx),
        fmt::format("{}: the Cube reads L0A and L0B and writes L0C (spec 003 'Compute Units'), "
                    "but A is in {}, B in {}, C in {}; LoadData the operands into L0A/L0B",
                    what, buf_name(a.buf), buf_name(b.buf), buf_name(c.buf)));
  if (in != DType::f16 && in != DType::i8)
    fault(pipe, what, fmt::format("the Cube multiplies f16 or int8, not {}", dtype_name(in)));
  if (m == 0 || k == 0 || n == 0) fault(pipe, what, "m, k and n must be positive");
  const std::uint64_t k0 = in == DType::f16 ? cube_k_ : cube_k_int8_;
  const std::uint64_t fa = memories_[static_cast<int>(Buf::L0A)]->alignment();
  const std::uint64_t fb = memories_[static_cast<int>(Buf::L0B)]->alignment();
  const std::uint64_t fc = memories_[static_cast<int>(Buf::L0C)]->alignment();
  if (a.addr % fa || b.addr % fb || c.addr % fc)
    fault(pipe, what,
          fmt::format("operands outside fractal alignment: A at L0A {:#x} (needs {} B), B at "
                      "L0B {:#x} (needs {} B), C at L0C {:#x} (needs {} B); align them",
                      a.addr, fa, b.addr, fb, c.addr, fc));
  const Ref* refs[] = {&c, &a, &b};
  touch(pipe, refs, what);
  const std::uint64_t m1 = (m + cube_m_ - 1) / cube_m_, k1 = (k + k0 - 1) / k0,
                      n1 = (n + cube_n_ - 1) / cube_n_;
  const std::uint64_t eb = in == DType::f16 ? 2 : 1;
  const std::uint64_t a_bytes = m1 * k1 * cube_m_ * k0 * eb;
  const std::uint64_t b_bytes = k1 * n1 * k0 * cube_n_ * eb;
  const std::uint64_t c_bytes = m1 * n1 * cube_m_ * cube_n_ * 4;
  const std::byte* pa = data(Buf::L0A, a.addr, a_bytes, what);
  const std::byte* pb = data(Buf::L0B, b.addr, b_bytes, what);
  std::byte* pc = data(Buf::L0C, c.addr, c_bytes, what);
  const std::uint64_t M = m1 * cube_m_, K = k1 * k0, N = n1 * cube_n_;
  // The fractals are unpacked a run of k0 or n0 elements at a time (per element, with the index
  // arithmetic, this was most of a GEMM's host time).
  std::vector<float> A(M * K), B(K * N), C(M * N, 0.0f);
  const std::vector<float>& f16 = f16_table();
  const auto elem = [&](const std::byte* p, std::uint64_t i) -> float {
    if (in == DType::f16) {
      std::uint16_t h;
      std::memcpy(&h, p + i * 2, 2);
      return f16[h];
    }
    return static_cast<float>(static_cast<std::int8_t>(p[i]));
  };
  // A: zZ (fractals (m1, k1) row-major, each m0 x k0 row-major).
  for (std::uint64_t mi = 0; mi < m1; ++mi)
    for (std::uint64_t ki = 0; ki < k1; ++ki) {
      const std::byte* f = pa + (mi * k1 + ki) * cube_m_ * k0 * eb;
      for (std::uint64_t r = 0; r < cube_m_; ++r) {
        float* row = &A[(mi * cube_m_ + r) * K + ki * k0];
        for (std::uint64_t col = 0; col < k0; ++col) row[col] = elem(f, r * k0 + col);
      }
    }
  // B: nZ (fractals (k1, n1) row-major, each n0 x k0: a column of B per row).
  for (std::uint64_t ki = 0; ki < k1; ++ki)
    for (std::uint64_t ni = 0; ni < n1; ++ni) {
      const std::byte* f = pb + (ki * n1 + ni) * cube_n_ * k0 * eb;
      for (std::uint64_t col = 0; col < k0; ++col) {
        float* row = &B[(ki * k0 + col) * N + ni * cube_n_];
        for (std::uint64_t r = 0; r < cube_n_; ++r) row[r] = elem(f, r * k0 + col);
      }
    }
  // int8 products are exact in f32 for partial sums of up to 512 terms; accumulate those in i32.
  const std::uint64_t chunk = in == DType::f16 ? K : 512;
  std::vector<std::int32_t> Ci(in == DType::i8 ? M * N : 0, 0);
  for (std::uint64_t k_at = 0; k_at < K; k_at += chunk) {
    const std::uint64_t kk = std::min(chunk, K - k_at);
    std::fill(C.begin(), C.end(), 0.0f);
    ops::sgemm(false, false, static_cast<std::int64_t>(M), static_cast<std::int64_t>(N),
               static_cast<std::int64_t>(kk), 1.0f, A.data() + k_at, static_cast<std::int64_t>(K),
               B.data() + k_at * N, static_cast<std::int64_t>(N), 0.0f, C.data(),
               static_cast<std::int64_t>(N));
    if (in == DType::i8)
      for (std::uint64_t i = 0; i < M * N; ++i) Ci[i] += static_cast<std::int32_t>(C[i]);
  }
  // C: nZ (fractals (n1, m1) row-major, each m0 x n0 row-major), f32 or i32: a fractal's row
  // is a run of n0 elements of a row of C.
  const auto store = [&](std::byte* slot, const auto* src) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(src)>>;
    for (std::uint64_t j = 0; j < cube_n_; ++j) {
      T v = src[j];
      if (accumulate) {
        T old;
        std::memcpy(&old, slot + j * 4, 4);
        v += old;
      }
      std::memcpy(slot + j * 4, &v, 4);
    }
  };
  for (std::uint64_t ni = 0; ni < n1; ++ni)
    for (std::uint64_t mi = 0; mi < m1; ++mi) {
      std::byte* f = pc + (ni * m1 + mi) * cube_m_ * cube_n_ * 4;
      for (std::uint64_t r = 0; r < cube_m_; ++r) {
        const std::uint64_t at = (mi * cube_m_ + r) * N + ni * cube_n_;
        if (in == DType::f16)
          store(f + r * cube_n_ * 4, &C[at]);
        else
          store(f + r * cube_n_ * 4, &Ci[at]);
      }
    }
  const std::uint64_t steps = m1 * k1 * n1;
  const auto cycles =
      device_.cost_model().op_cycles("M", static_cast<double>(steps), 1.0 / cube_cycles_per_step_);
  const sim::Event e = issue(pipe, what, cycles);
  record(e, a, a.addr, a.addr + a_bytes, false, what);
  record(e, b, b.addr, b.addr + b_bytes, false, what);
  record(e, c, c.addr, c.addr + c_bytes, true, what);
  if (accumulate) record(e, c, c.addr, c.addr + c_bytes, false, what);
}

void Core::scalar(const Ref& ref, std::uint64_t bytes, bool write, std::string_view what) {
  const Ref* refs[] = {&ref};
  touch(Pipe::S, refs, what);
  (void)data(ref.buf, ref.addr, bytes, what);
  const sim::Event e = issue(Pipe::S, what, scalar_cycles_);
  record(e, ref, ref.addr, ref.addr + bytes, write, what);
  if (ref.buf == Buf::GM) note_global(e, ref.addr, bytes, write);
}

void Core::set_flag(Pipe src, Pipe dst, std::uint32_t event_id) {
  if (event_id >= flag_ids_)
    fault(src, "set_flag",
          fmt::format("event id {} is beyond the {} event ids of pipe pair {}->{} (preset "
                      "aicore.flag_ids); use ids 0..{}",
                      event_id, flag_ids_, pipe_name(src), pipe_name(dst), flag_ids_ - 1));
  // Flags are single bits (spec 003 "Pipes"): a second set issued before the wait that consumes
  // the first loses a signal, whatever the timing.
  int& pending =
      flag_balance_[(static_cast<std::size_t>(src) * kPipeCount + static_cast<std::size_t>(dst)) *
                        flag_ids_ +
                    event_id];
  if (pending > 0)
    fault(src, "set_flag",
          fmt::format("flag {}->{} event {} is set twice before its wait_flag; the second signal "
                      "is lost: wait_flag({}, {}, {}) before setting it again, or use another "
                      "event id",
                      pipe_name(src), pipe_name(dst), event_id, pipe_name(src), pipe_name(dst),
                      event_id));
  ++pending;
  timeline_.set_flag(pid(src), user_flag(src, dst, event_id));
}

void Core::wait_flag(Pipe src, Pipe dst, std::uint32_t event_id) {
  if (event_id >= flag_ids_)
    fault(dst, "wait_flag",
          fmt::format("event id {} is beyond the {} event ids of pipe pair {}->{} (preset "
                      "aicore.flag_ids); use ids 0..{}",
                      event_id, flag_ids_, pipe_name(src), pipe_name(dst), flag_ids_ - 1));
  --flag_balance_[(static_cast<std::size_t>(src) * kPipeCount + static_cast<std::size_t>(dst)) *
                      flag_ids_ +
                  event_id];
  timeline_.wait_flag(pid(dst), user_flag(src, dst, event_id));
}

void Core::pipe_barrier(Pipe pipe) {
  issue(pipe, "pipe_barrier", barrier_cycles_);
}

void Core::barrier_all() {
  timeline_.barrier();
}

// The cores of one launch: taken by host threads one at a time (next), kept running while
// others wait in SyncAll (helpers start the cores no thread has taken yet).
struct Core::LaunchGroup {
  LaunchGroup(std::uint32_t count, std::uint64_t sync_cost)
      : cores(count), meet(count, sync_cost) {}
  std::uint32_t cores;
  sim::Rendezvous meet;
  std::atomic<std::uint32_t> next{0};
  std::vector<std::unique_ptr<Core>>* core = nullptr;
  std::function<void()> run;  // takes cores until none is left
  std::mutex helpers_mutex;
  std::vector<std::thread> helpers;
  void start_helper() {
    if (next.load() >= cores) return;
    std::lock_guard lock(helpers_mutex);
    helpers.emplace_back(run);
  }
};

namespace {
// A core's SyncAll ends because another core failed; the launch reports that failure instead.
struct SyncAborted : std::exception {
  const char* what() const noexcept override { return "SyncAll aborted: another core failed"; }
};
}  // namespace

void Core::sync_all() {
  const std::string_view what = "SyncAll";
  if (!group) fault(Pipe::S, what, "called outside a kernel launch");
  if (block_num > group->cores)
    fault(Pipe::S, what,
          fmt::format("blockDim {} exceeds the {} cores: blocks beyond them start only when a "
                      "core is free, so SyncAll would wait for blocks that cannot start; launch "
                      "at most {} blocks",
                      block_num, group->cores, group->cores));
  barrier_all();
  LaunchGroup& g = *group;
  const sim::Rendezvous::Result r = g.meet.arrive(
      static_cast<std::size_t>(index_), timeline_.end_cycle(), [&g] { g.start_helper(); },
      [&g] {
        for (auto& k : *g.core) k->apply_atomics();  // core by core, as at the kernel's end
      });
  if (r.outcome == sim::Rendezvous::Outcome::aborted) throw SyncAborted();
  if (r.outcome == sim::Rendezvous::Outcome::orphaned)
    fault(Pipe::S, what,
          fmt::format("SyncAll #{} waits for aicore{}, which ended without reaching it; every "
                      "block must call SyncAll the same number of times",
                      r.meeting + 1, r.missing));
  timeline_.issue_at(pid(Pipe::S), what, r.cycle, 0);
  barrier_all();
}

namespace {

template <typename T>
void add_into(std::byte* dst, const std::vector<std::byte>& values) {
  for (std::size_t i = 0; i + sizeof(T) <= values.size(); i += sizeof(T)) {
    T a, b;
    std::memcpy(&a, dst + i, sizeof(T));
    std::memcpy(&b, values.data() + i, sizeof(T));
    a = static_cast<T>(a + b);
    std::memcpy(dst + i, &a, sizeof(T));
  }
}

}  // namespace

void Core::apply_atomics() {
  for (const PendingAdd& p : pending_adds_) {
    switch (p.type) {
      case DType::f32:
        add_into<float>(p.dst, p.values);
        break;
      case DType::f16:
        add_into<_Float16>(p.dst, p.values);
        break;
      case DType::i32:
        add_into<std::int32_t>(p.dst, p.values);
        break;
      case DType::i16:
        add_into<std::int16_t>(p.dst, p.values);
        break;
      case DType::i8:
        add_into<std::int8_t>(p.dst, p.values);
        break;
      default:
        throw_internal_error("aicore: atomic add of {} elements", dtype_name(p.type));
    }
  }
  pending_adds_.clear();
}

void Core::finish() {
  timeline_.finish();
  races_.check(timeline_);
}

// ---- launch ----

runtime::Device& device() {
  std::lock_guard lock(device_mutex());
  auto& d = device_slot();
  if (!d) {
    const char* env = std::getenv("TESSERA_AICORE_DEVICE");
    d = runtime::Device::open(env && *env ? env : "ascend910");
    if (d->spec().target != "aicore")
      throw_user_error("TESSERA_AICORE_DEVICE names '{}', a {} machine; name an aicore preset",
                       d->spec().name, d->spec().target);
  }
  return *d;
}

void set_device(std::unique_ptr<runtime::Device> d) {
  std::lock_guard lock(device_mutex());
  device_slot() = std::move(d);
}

Core& current_core() {
  if (!tls_core)
    throw_user_error(
        "an Ascend C kernel API was called outside a kernel launch; launch the kernel with "
        "ICPU_RUN_KF(kernel, blockDim, args...)");
  return *tls_core;
}

bool in_kernel() {
  return tls_core != nullptr;
}

void set_tiling_key(std::uint64_t key) {
  tls_tiling_key = key;
}

profile::KernelRecord launch(std::string_view name, std::uint32_t block_dim,
                             const std::function<void()>& body) {
  return launch(device(), name, block_dim, body);
}

profile::KernelRecord launch(runtime::Device& dev, std::string_view name, std::uint32_t block_dim,
                             const std::function<void()>& body) {
  if (block_dim == 0) throw_user_error("ICPU_RUN_KF({}): blockDim is 0; launch at least 1", name);
  // A nested launch would wait on the scheduler its own block occupies and unbind the block.
  if (in_kernel())
    throw_user_error("ICPU_RUN_KF({}): called from inside a kernel (block {} of {}); kernels are "
                     "launched from host code, one after another",
                     name, current_core().block_idx, current_core().block_num);
  const auto cores = std::min<std::uint32_t>(
      block_dim, static_cast<std::uint32_t>(dev.spec().core_count.as_int()));
  BufferLease buffers(dev, cores);  // outlives the cores, which hand their buffers back to it
  const std::uint64_t tiling_key = tls_tiling_key;
  std::vector<std::unique_ptr<Core>> core(cores);
  sim::WorkScheduler& scheduler = own_scheduler() ? *own_scheduler() : dev.scheduler();
  const std::uint64_t sync_cost =
      2 * static_cast<std::uint64_t>(dev.spec().global().latency_cycles.as_int());
  Core::LaunchGroup group(cores, sync_cost);
  group.core = &core;
  std::vector<std::exception_ptr> errors(cores);
  const auto run_core = [&](std::uint32_t c) {
    try {
      core[c] = std::make_unique<Core>(dev, static_cast<int>(c), buffers.core(c));
      Core& k = *core[c];
      k.group = &group;
      struct Bind {
        explicit Bind(Core* p) { tls_core = p; }
        ~Bind() { tls_core = nullptr; }
      } bind(&k);
      for (std::uint32_t b = c; b < block_dim; b += cores) {
        if (b != c) k.barrier_all();  // the next block starts on a drained core
        k.block_idx = b;
        k.block_num = block_dim;
        k.atomic_add.reset();
        k.cmp_mask = {};
        k.vector_mask = {~std::uint64_t{0}, ~std::uint64_t{0}};
        k.mask_counter = false;
        k.tiling_key = tiling_key;
        k.sys_workspace = nullptr;
        body();
        k.release_all();
      }
      k.finish();
    } catch (...) {
      errors[c] = std::current_exception();
      group.meet.abort();
    }
    group.meet.leave(c);
  };
  group.run = [&] {
    for (std::uint32_t c = group.next++; c < cores; c = group.next++) run_core(c);
  };
  scheduler.parallel_for(std::min<std::size_t>(cores, scheduler.thread_count()),
                         [&](std::size_t) { group.run(); });
  // A helper's core may start another helper until every core is taken: join until none is left.
  for (;;) {
    std::vector<std::thread> helpers;
    {
      std::lock_guard lock(group.helpers_mutex);
      helpers.swap(group.helpers);
    }
    if (helpers.empty()) break;
    for (std::thread& t : helpers) t.join();
  }
  // The lowest core's own failure, whatever the thread count (SyncAll's aborts follow it).
  for (const std::exception_ptr& e : errors) {
    if (!e) continue;
    try {
      std::rethrow_exception(e);
    } catch (const SyncAborted&) {
      continue;
    }
  }
  for (auto& k : core) k->apply_atomics();  // core by core: sums independent of host threads
  std::vector<sim::Timeline> timelines;
  std::vector<sim::GlobalAccess> accesses;
  timelines.reserve(cores);
  profile::KernelRecord record;
  std::uint64_t total = 0;
  for (auto& k : core) {
    for (int p = 0; p < kPipeCount; ++p)
      record.metrics[fmt::format("busy.{}.{}", k->name(), pipe_name(static_cast<Pipe>(p)))] =
          static_cast<double>(
              k->timeline().busy_cycles(k->timeline().pipe(pipe_name(static_cast<Pipe>(p)))));
    total += k->global_bytes();
    const auto log = k->global_accesses();
    accesses.insert(accesses.end(), log.begin(), log.end());
    timelines.push_back(std::move(k->timeline()));
  }
  record.name = std::string(name);
  record.engine = dev.spec().core_name;
  record.metrics["block_dim"] = block_dim;
  record.metrics["gm_bytes"] = static_cast<double>(total);
  last_record() = dev.record_kernel(std::move(record), timelines, accesses);
  return last_record();
}

const profile::KernelRecord& last_kernel() {
  return last_record();
}

void set_threads(unsigned threads) {
  own_scheduler() = threads ? std::make_unique<sim::WorkScheduler>(threads) : nullptr;
}

void* gm_alloc(std::size_t bytes) {
  runtime::Device& dev = device();
  const runtime::Buffer b = dev.allocate(std::max<std::size_t>(bytes, 1), "GmAlloc");
  void* p = dev.data(b);
  GlobalMemory& gm = global_memory();
  std::lock_guard lock(gm.mutex);
  gm.live[reinterpret_cast<std::uintptr_t>(p)] = GmBlock{b, bytes, b.device_address};
  return p;
}

void gm_free(void* ptr) {
  GlobalMemory& gm = global_memory();
  runtime::Buffer b;
  {
    std::lock_guard lock(gm.mutex);
    auto it = gm.live.find(reinterpret_cast<std::uintptr_t>(ptr));
    if (it == gm.live.end())
      throw_user_error("GmFree({}): not an address GmAlloc returned, or freed already", ptr);
    b = it->second.buffer;
    gm.live.erase(it);
  }
  device().free(b);
}

void gm_register(void* ptr, std::size_t bytes) {
  GlobalMemory& gm = global_memory();
  std::lock_guard lock(gm.mutex);
  gm.live[reinterpret_cast<std::uintptr_t>(ptr)] = GmBlock{runtime::Buffer{}, bytes, gm.next_lent};
  gm.next_lent += (bytes + (std::uint64_t{1} << 20)) >> 20 << 20;
}

namespace {
// The block holding [ptr, ptr + bytes), or nullptr; with its host start in `base`.
const GmBlock* find_block(const GlobalMemory& gm, const void* ptr, std::size_t bytes,
                          std::uintptr_t& base) {
  const auto at = reinterpret_cast<std::uintptr_t>(ptr);
  auto it = gm.live.upper_bound(at);
  if (it == gm.live.begin()) return nullptr;
  --it;
  if (at + bytes > it->first + std::max<std::uint64_t>(it->second.bytes, 1)) return nullptr;
  base = it->first;
  return &it->second;
}
// The device buffer and offset of a gm_alloc'd range, for a host copy `what`.
std::pair<runtime::Buffer, std::size_t> device_range(const void* ptr, std::size_t bytes,
                                                     const char* what) {
  GlobalMemory& gm = global_memory();
  std::lock_guard lock(gm.mutex);
  std::uintptr_t base = 0;
  const GmBlock* b = find_block(gm, ptr, bytes, base);
  if (!b || !b->buffer)
    throw_user_error(
        "{}: [{}, +{} B) is not inside one device allocation (aclrtMalloc or "
        "GmAlloc); copy within the bytes an allocation returned",
        what, ptr, bytes);
  return {b->buffer, reinterpret_cast<std::uintptr_t>(ptr) - base};
}
}  // namespace

bool gm_contains(const void* ptr, std::size_t bytes) {
  GlobalMemory& gm = global_memory();
  std::lock_guard lock(gm.mutex);
  std::uintptr_t base = 0;
  return find_block(gm, ptr, bytes, base) != nullptr;
}

void gm_copy_to_device(void* dst, const void* src, std::size_t bytes) {
  const auto [buffer, offset] = device_range(dst, bytes, "copy to the device");
  device().copy_to_device(buffer, src, bytes, offset);
}

void gm_copy_to_host(void* dst, const void* src, std::size_t bytes) {
  const auto [buffer, offset] = device_range(src, bytes, "copy to the host");
  device().copy_to_host(dst, buffer, bytes, offset);
}

void gm_unregister(void* ptr) {
  GlobalMemory& gm = global_memory();
  std::lock_guard lock(gm.mutex);
  gm.live.erase(reinterpret_cast<std::uintptr_t>(ptr));
}

}  // namespace tessera::aicore
