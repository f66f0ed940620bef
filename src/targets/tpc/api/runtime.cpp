// The TPC executor: kernel lookup and glue, the index-space split, program instances on host
// threads, the slot cost model (spec 000 §2.3), check-order mode and the f32 fallback (§2.9).
#include "tessera/targets/tpc/api/runtime.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>

#include <fmt/ranges.h>

#include "local_memory_impl.h"
#include "tessera/core/error.h"
#include "tessera/core/log.h"
#include "tessera/sim/memory.h"
#include "tessera/sim/scheduler.h"
#include "tessera/sim/timeline.h"
#include "tessera/targets/tpc/api/context.h"

namespace tessera::tpc {

namespace {

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

// Figures of the preset the executor needs, read once.
struct Machine {
  unsigned cores = 1;
  std::size_t name_limit = 0;
  int max_tensors = 0;
  int max_tensors_printf = 0;
  unsigned max_scalar_dwords = 0;
  std::uint64_t global_cycles_per_vector = 1;
  std::uint64_t special_issues = 1;
  std::uint64_t reduction_issues = 1;
  std::uint64_t global_latency = 0;
  // per detail::Slot; the global port's are the load slot's, the local port's is 0 (a load's
  // latency is its slot's)
  std::array<std::uint64_t, detail::CoreClock::slot_count> latencies{};
  std::array<std::string, 4> slot_pipes{"load", "spu", "vpu", "store"};
  const arch::MemorySpec* slm = nullptr;
  const arch::MemorySpec* vlm = nullptr;
  std::size_t vlm_special_bytes = 0;
  std::string global_name;
};

std::uint64_t positive(const arch::MachineSpec& spec, const char* key) {
  const auto v = spec.param(key).as_int();
  if (v <= 0)
    throw_user_error("preset {}: {} must be positive (it is {}); fix the machine description",
                     spec.name, key, v);
  return static_cast<std::uint64_t>(v);
}

Machine read_machine(const arch::MachineSpec& spec) {
  if (spec.target != "tpc")
    throw_user_error(
        "tpc::Runtime needs a TPC preset, but device '{}' is a '{}' machine; open "
        "the device with a TPC preset such as 'gaudi'",
        spec.name, spec.target);
  if (spec.param("tpc.vector_bytes").as_int() != 256)
    throw_user_error(
        "preset {}: tpc.vector_bytes is {}, but the TPC-C vector types (float64, bfloat128, ...) "
        "are 2048-bit; this API models 256-byte vectors only",
        spec.name, spec.param("tpc.vector_bytes").as_int());
  Machine m;
  m.cores = static_cast<unsigned>(std::max<std::int64_t>(1, spec.core_count.as_int()));
  m.name_limit = positive(spec, "tpc.kernel_name_max_bytes");
  m.max_tensors = static_cast<int>(positive(spec, "tpc.max_tensors"));
  m.max_tensors_printf = static_cast<int>(positive(spec, "tpc.max_tensors_with_printf"));
  m.max_scalar_dwords = static_cast<unsigned>(positive(spec, "tpc.max_scalar_param_dwords"));
  m.global_cycles_per_vector = positive(spec, "tpc.global_access_cycles_per_vector");
  m.special_issues = positive(spec, "tpc.special_function_vpu_cycles");
  m.reduction_issues = positive(spec, "tpc.reduction_vpu_cycles");
  for (int s = 0; s < 4; ++s) {
    const std::int64_t lat =
        spec.pipe(m.slot_pipes[static_cast<std::size_t>(s)]).latency_cycles.as_int();
    if (lat < 0 || lat > 1'000'000)
      throw_user_error("preset {}: pipe {} latency_cycles is {}; it must be 0 to 1,000,000",
                       spec.name, m.slot_pipes[static_cast<std::size_t>(s)], lat);
    m.latencies[static_cast<std::size_t>(s)] = static_cast<std::uint64_t>(lat);
  }
  m.latencies[detail::kGlobalRead] = m.latencies[detail::kLoad];
  m.latencies[detail::kGlobalWrite] = 0;
  const std::int64_t global_latency = spec.global().latency_cycles.as_int();
  if (global_latency < 0 || global_latency > 1'000'000)
    throw_user_error("preset {}: {} latency_cycles is {}; it must be 0 to 1,000,000", spec.name,
                     spec.global_memory, global_latency);
  m.global_latency = static_cast<std::uint64_t>(global_latency);
  m.slm = &spec.memory("slm");
  m.vlm = &spec.memory("vlm");
  m.vlm_special_bytes = positive(spec, "tpc.vlm_bytes_with_special_functions");
  m.global_name = spec.global_memory;
  if (m.max_tensors > detail::kMaxTensorSlots || m.max_tensors_printf > m.max_tensors)
    throw_user_error(
        "preset {}: tpc.max_tensors {} / tpc.max_tensors_with_printf {} exceed the "
        "{} tensor slots this API models",
        spec.name, m.max_tensors, m.max_tensors_printf, detail::kMaxTensorSlots);
  return m;
}

int tensor_rank(const DeviceTensor& t) {
  if (t.shape.rank() > 5)  // Shape holds more dims than a TPC tensor descriptor
    throw_user_error(
        "TPC tensor {} has {} dimensions; the TPC supports tensors of 1-5 dimensions (spec 000 "
        "§2.4.1): reshape it to 5 or fewer",
        t.shape.to_string(), t.shape.rank());
  return std::max(1, t.shape.rank());
}

std::string shape_text(const DeviceTensor& t) {
  return fmt::format("{} {}", dtype_name(t.dtype), t.shape.to_string());
}

// What one program instance did: its instruction stream's timing (cycle 0 = the instance's
// start) and its traffic. Instances are composed onto their cores' timelines afterwards, in
// index-space order, so the host thread that ran them never matters.
struct InstanceResult {
  std::uint64_t makespan = 0;
  std::array<std::uint64_t, detail::CoreClock::slot_count> issues{};
  std::array<std::uint64_t, detail::CoreClock::slot_count> last_free{};  // after its last issue
  detail::Counters counters;
  std::uint64_t slm_high = 0, vlm_high = 0;
  std::uint64_t slm_accesses = 0, vlm_accesses = 0;  // by address (LD_L*, ST_L*)
  bool special_functions = false;
  bool printf_used = false;
  std::vector<detail::RmwVector> rmw_updates;  // its ST_TNSR RMW updates, in program order
};

std::uint32_t mix(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

}  // namespace

struct Runtime::Impl {
  runtime::Device& device;
  RuntimeOptions options;
  Machine m;
  std::string last_printf;
  std::uint64_t last_coherency = 0;
  // The glue's buffers, kept from one launch to the next: a fresh 4 KiB kernelElf per launch is
  // an allocation large enough to make malloc consolidate its free lists every time.
  GlueInstance glue;
  bool glue_in_use = false;
  // Names every launch records, made once.
  std::vector<std::string> core_names;  // "tpc0", ...
  std::array<std::string, 4> slot_issue_metrics, slot_utilisation_metrics;

  Impl(runtime::Device& d, RuntimeOptions o) : device(d), options(o), m(read_machine(d.spec())) {
    if (env_flag("TESSERA_TPC_CHECK_ORDER")) options.check_order = true;
    for (unsigned k = 0; k < m.cores; ++k) core_names.push_back(fmt::format("tpc{}", k));
    for (std::size_t sl = 0; sl < 4; ++sl) {
      slot_issue_metrics[sl] = fmt::format("slot.{}.issues", m.slot_pipes[sl]);
      slot_utilisation_metrics[sl] = fmt::format("slot.{}.utilisation", m.slot_pipes[sl]);
    }
  }

  const KernelRegistry& registry() const {
    return options.registry ? *options.registry : KernelRegistry::global();
  }

  std::vector<InstanceBox> split(const gcapi::TensorGeometry_t& g, std::uint64_t target) const;
  // Runs the launch's instances; then `after_core(k)` once per core, when all of core k's
  // instances have run (in the core's own unit of host work where cores run in parallel).
  void execute(const KernelLaunch& launch, const std::vector<InstanceBox>& boxes, bool parallel,
               bool shuffled, std::vector<InstanceResult>& results,
               std::vector<std::string>* printf_out,
               const std::function<void(std::size_t)>& after_core = nullptr);
  const profile::KernelRecord& run(const KernelLaunch& launch);
};

std::vector<InstanceBox> Runtime::Impl::split(const gcapi::TensorGeometry_t& g,
                                              std::uint64_t target) const {
  std::int64_t size[5];
  std::uint64_t members = 1;
  for (int d = 0; d < 5; ++d) {
    size[d] = d < static_cast<int>(g.dims) ? static_cast<std::int64_t>(g.sizes[d]) : 1;
    members *= static_cast<std::uint64_t>(size[d]);
  }
  if (members == 0) return {};
  // Greedy: keep cutting the dimension with the largest pieces while the box count stays
  // within target, so boxes are contiguous and as even as possible.
  std::int64_t parts[5] = {1, 1, 1, 1, 1};
  std::uint64_t count = 1;
  for (;;) {
    int best = -1;
    std::int64_t best_piece = 0;
    for (int d = 4; d >= 0; --d) {
      if (parts[d] >= size[d]) continue;
      if (count / static_cast<std::uint64_t>(parts[d]) * static_cast<std::uint64_t>(parts[d] + 1) >
          target)
        continue;
      const std::int64_t piece = (size[d] + parts[d] - 1) / parts[d];
      if (piece > best_piece) {
        best_piece = piece;
        best = d;
      }
    }
    if (best < 0) break;
    count = count / static_cast<std::uint64_t>(parts[best]) *
            static_cast<std::uint64_t>(parts[best] + 1);
    ++parts[best];
  }
  std::vector<InstanceBox> boxes;
  boxes.reserve(count);
  std::int64_t k[5] = {0, 0, 0, 0, 0};
  for (std::uint64_t i = 0; i < count; ++i) {
    InstanceBox b;
    for (int d = 0; d < 5; ++d) {
      const std::int64_t lo = k[d] * size[d] / parts[d];
      const std::int64_t hi = (k[d] + 1) * size[d] / parts[d];
      b.offset.v[d] = static_cast<int>(lo);
      b.size.v[d] = static_cast<int>(hi - lo);
    }
    b.core = static_cast<unsigned>(i % m.cores);
    boxes.push_back(b);
    for (int d = 0; d < 5; ++d) {  // dimension 0 fastest
      if (++k[d] < parts[d]) break;
      k[d] = 0;
    }
  }
  return boxes;
}

namespace {

// Makes the instance context current for one program instance, and clears it on exit.
struct CurrentInstance {
  explicit CurrentInstance(detail::InstanceContext* c) { detail::current_instance = c; }
  ~CurrentInstance() { detail::current_instance = nullptr; }
  CurrentInstance(const CurrentInstance&) = delete;
  CurrentInstance& operator=(const CurrentInstance&) = delete;
};

// The program-scope __local__ section of a kernel file during one launch (see execute). The
// section is process-wide, so launches of kernels that have one take a lock; the file's initial
// values are kept the first time a launch sees it, before any instance has written it.
class FileLocals {
 public:
  FileLocals(const KernelFunction& kernel, unsigned cores)
      : begin_(reinterpret_cast<std::byte*>(kernel.file_locals_begin)),
        bytes_(kernel.file_locals_begin == nullptr
                   ? 0
                   : static_cast<std::size_t>(kernel.file_locals_end - kernel.file_locals_begin)) {
    if (bytes_ == 0) return;
    lock_ = std::unique_lock<std::mutex>(mutex());
    auto [it, fresh] = initial_values().try_emplace(begin_);
    if (fresh) it->second.assign(begin_, begin_ + bytes_);
    cores_.assign(cores, it->second);
  }
  ~FileLocals() {
    if (bytes_ != 0) std::memcpy(begin_, initial_values()[begin_].data(), bytes_);
  }
  FileLocals(const FileLocals&) = delete;
  FileLocals& operator=(const FileLocals&) = delete;
  std::size_t bytes() const { return bytes_; }

  // Core `core`'s copy is in the section while this lives.
  class OnCore {
   public:
    OnCore(FileLocals& l, unsigned core) : l_(l), core_(core) {
      if (l_.bytes_ != 0) std::memcpy(l_.begin_, l_.cores_[core_].data(), l_.bytes_);
    }
    ~OnCore() {
      if (l_.bytes_ != 0) std::memcpy(l_.cores_[core_].data(), l_.begin_, l_.bytes_);
    }
    OnCore(const OnCore&) = delete;
    OnCore& operator=(const OnCore&) = delete;

   private:
    FileLocals& l_;
    unsigned core_;
  };

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::map<const std::byte*, std::vector<std::byte>>& initial_values() {
    static std::map<const std::byte*, std::vector<std::byte>> v;
    return v;
  }
  std::byte* begin_;
  std::size_t bytes_;
  std::unique_lock<std::mutex> lock_;
  std::vector<std::vector<std::byte>> cores_;
};

// The file's recorded `__local__` objects as the bytes of a core's local memories at their
// addresses while this lives (sim::LocalStore views): `take_memory`, they start with what the
// memories hold (what the core's last instance left); otherwise the memories take their values
// (the file's initial values, at the start of a launch).
class FileLocalViews {
 public:
  FileLocalViews(const FileLocalsLayout& placed, detail::LocalMemory& slm, detail::LocalMemory& vlm,
                 bool take_memory)
      : placed_(placed), slm_(slm), vlm_(vlm) {
    for (const FileLocalPlacement& o : placed_.objects) {
      const FileLocalSize& r = *o.record;
      if (!r.shared || r.element_count == 0) continue;
      sim::LocalStore& store = (r.vector ? vlm_ : slm_).store;
      store.attach(store.memory().base() + o.address, static_cast<std::byte*>(r.object),
                   r.element_count, r.element_bytes, r.host_stride, take_memory,
                   "program-scope __local__ object");
    }
  }
  // Detached, the memories keep the objects' last values.
  ~FileLocalViews() {
    for (auto it = placed_.objects.rbegin(); it != placed_.objects.rend(); ++it) {
      const FileLocalSize& r = *it->record;
      if (!r.shared || r.element_count == 0) continue;
      sim::LocalStore& store = (r.vector ? vlm_ : slm_).store;
      store.detach(store.memory().base() + it->address);
    }
  }
  FileLocalViews(const FileLocalViews&) = delete;
  FileLocalViews& operator=(const FileLocalViews&) = delete;

 private:
  const FileLocalsLayout& placed_;
  detail::LocalMemory& slm_;
  detail::LocalMemory& vlm_;
};

}  // namespace

void Runtime::Impl::execute(const KernelLaunch& launch, const std::vector<InstanceBox>& boxes,
                            bool parallel, bool shuffled, std::vector<InstanceResult>& results,
                            std::vector<std::string>* printf_out,
                            const std::function<void(std::size_t)>& after_core) {
  // The tensor table every instance starts from.
  std::vector<detail::TensorSlot> table;
  auto add_slot = [&](const DeviceTensor& t, bool output, const gcapi::PadValue* pad) {
    detail::TensorSlot s;
    s.base = device.data(t.buffer) + t.byte_offset;
    s.buffer_bytes = static_cast<std::int64_t>(t.buffer.bytes - t.byte_offset);
    s.elem_bytes = static_cast<std::uint32_t>(dtype_size(t.dtype));
    s.dtype = t.dtype;
    s.rank = tensor_rank(t);
    const Strides strides = t.strides.rank() == 0 ? Strides(t.shape) : t.strides;
    for (int d = 0; d < 5; ++d) {
      s.size[d] = t.shape.dim_or_one(d);
      s.stride[d] =
          d < strides.rank() ? strides[d] : (d == 0 ? 1 : s.stride[d - 1] * s.size[d - 1]);
    }
    s.output = output;
    if (pad != nullptr) std::memcpy(&s.pad_bits, pad, s.elem_bytes);
    table.push_back(std::move(s));
  };
  for (std::size_t i = 0; i < launch.inputs.size(); ++i)
    add_slot(launch.inputs[i], false,
             i < launch.input_pads.size() ? &launch.input_pads[i] : nullptr);
  for (const auto& t : launch.outputs) add_slot(t, true, nullptr);

  KernelArgs args;
  args.tensor_count = static_cast<int>(table.size());
  args.scalars = launch.scalar_params.data();
  args.scalar_dwords = static_cast<unsigned>(launch.scalar_params.size());

  // One unit of host work per program instance. The host threads share the instances as the
  // scheduler decides (it depends on the thread count); each instance starts from the same
  // state and writes only its own result, so results and cycles never depend on that split.
  // The shuffled check run goes through them in a fixed random order on this thread.
  std::vector<std::size_t> order(boxes.size());
  std::iota(order.begin(), order.end(), 0);
  if (shuffled) std::shuffle(order.begin(), order.end(), std::mt19937(0x7e55e7a));
  results.assign(boxes.size(), InstanceResult{});
  if (printf_out) printf_out->assign(boxes.size(), std::string());

  const std::uint64_t vlm_limit = launch.special_functions
                                      ? m.vlm_special_bytes
                                      : static_cast<std::uint64_t>(m.vlm->capacity_bytes.as_int());
  // The kernel file's program-scope __local__ objects: each core has its own copy, starting
  // from the file's initial values, swapped into the file's section around each of the core's
  // instances. The instances then run on this thread in index order, so what a core's instance
  // leaves for the next does not depend on the host threads.
  FileLocals locals(launch.kernel, m.cores);
  // They take their modeled size in the core's memories (a vector is 256 bytes there), and
  // those memories hold them at their addresses (FileLocalViews).
  const FileLocalsLayout placed = place_file_locals(launch.kernel);
  const auto slm_bytes = static_cast<std::uint64_t>(m.slm->capacity_bytes.as_int());
  if (placed.vlm_bytes > vlm_limit || placed.slm_bytes > slm_bytes) {
    const bool vector = placed.vlm_bytes > vlm_limit;
    throw DeviceFault(
        fmt::format("tpc kernel {}", launch.name),
        fmt::format(
            "the kernel file's program-scope __local__ objects take {} bytes but a core's "
            "{} local memory holds {}{} (spec 000 §2.3.3); declare less __local__ "
            "data or keep it in tensors",
            vector ? placed.vlm_bytes : placed.slm_bytes, vector ? "vector" : "scalar",
            vector ? vlm_limit : slm_bytes,
            vector && launch.special_functions ? " when the program calls special functions" : ""));
  }
  // Each core's local memories for the launch: fresh (poison) at its start and kept from one of
  // the core's instances to the next (spec 000 §2.6.4). The file's objects come first, with
  // the file's initial values.
  struct CoreLocal {
    detail::LocalMemory slm, vlm;
  };
  std::vector<std::unique_ptr<CoreLocal>> core_local(m.cores);
  const std::string vlm_reason =
      launch.special_functions
          ? "the program uses special functions, whose tables take the rest (spec 000 §2.3.3)"
          : "";
  // Made when the core's first instance runs, by the host thread that runs the core's instances.
  auto local_of = [&](unsigned k) -> CoreLocal& {
    if (core_local[k]) return *core_local[k];
    const std::string core_name = fmt::format("tpc{} kernel {}", k, launch.name);
    core_local[k].reset(
        new CoreLocal{detail::LocalMemory(*m.slm, core_name, 0),
                      detail::LocalMemory(*m.vlm, core_name, vlm_limit, vlm_reason)});
    CoreLocal& l = *core_local[k];
    if (placed.slm_bytes > 0) (void)l.slm.stack.allocate(placed.slm_bytes);
    if (placed.vlm_bytes > 0) (void)l.vlm.stack.allocate(placed.vlm_bytes);
    const FileLocalViews initial(placed, l.slm, l.vlm, false);
    return l;
  };
  // Each core's registers (semaphore, rounding CSRs) start from reset at every launch and go
  // from one of the core's instances to the next, as its local memories do.
  std::vector<detail::CoreRegisters> registers(m.cores);
  detail::RmwLaunch rmw;
  // A file with program-scope __local__ objects has them in every core's memories from the start,
  // read from the file's section while it still holds the initial values.
  if (locals.bytes() != 0)
    for (unsigned k = 0; k < m.cores; ++k) (void)local_of(k);
  auto run_instance = [&](std::size_t unit) {
    const std::size_t index = order[unit];
    const InstanceBox& box = boxes[index];
    const unsigned core = shuffled ? static_cast<unsigned>(index % m.cores) : box.core;
    CoreLocal& local = local_of(core);
    detail::LocalMemory& slm = local.slm;
    detail::LocalMemory& vlm = local.vlm;
    const std::uint64_t slm_before = slm.store.reads() + slm.store.writes();
    const std::uint64_t vlm_before = vlm.store.reads() + vlm.store.writes();
    auto ctx = std::make_unique<detail::InstanceContext>();
    detail::InstanceContext& c = *ctx;
    for (std::size_t i = 0; i < table.size(); ++i) c.tensors[i] = table[i];
    c.tensor_count = static_cast<int>(table.size());
    c.offset = box.offset;
    c.size = box.size;
    c.clock = detail::CoreClock(m.latencies);
    c.global_port_cycles = m.global_cycles_per_vector;
    c.global_latency = m.global_latency;
    c.special_function_issues = m.special_issues;
    c.reduction_issues = m.reduction_issues;
    c.special_functions_allowed = launch.special_functions;
    c.kernel_name = launch.name.c_str();
    c.core = core;
    c.slm = &slm;
    c.vlm = &vlm;
    // Each instance's random stream starts from its place in the index space.
    std::uint32_t seed = 0x9e3779b9u;
    for (int d = 0; d < 5; ++d) seed = mix(seed ^ static_cast<std::uint32_t>(box.offset.v[d]));
    for (int i = 0; i < 64; ++i) c.lfsr[i] = mix(seed + static_cast<std::uint32_t>(i)) | 1u;
    c.s_lfsr = mix(seed ^ 0x5bd1e995u) | 1u;
    c.printf_out = printf_out ? &(*printf_out)[index] : nullptr;
    c.coherency_check = options.coherency_check && !shuffled;  // warned in the first run
    c.rmw = boxes.size() > 1 ? &rmw : nullptr;  // one instance applies its updates in order
    c.registers = registers[core];
    {
      CurrentInstance guard(&c);
      const FileLocals::OnCore on_core(locals, core);
      const FileLocalViews views(placed, slm, vlm, true);
      launch.kernel.invoke(args);
    }
    registers[core] = c.registers;
    c.clock.note_done(c.stores_done);  // the program ends when its stores have landed
    // Reads and writes share the port's cycles.
    c.clock.note_done(c.clock.issues(detail::kGlobalRead) + c.clock.issues(detail::kGlobalWrite));
    InstanceResult& r = results[index];
    r.makespan = c.clock.makespan();
    for (int s = 0; s < detail::CoreClock::slot_count; ++s) {
      r.issues[static_cast<std::size_t>(s)] = c.clock.issues(s);
      r.last_free[static_cast<std::size_t>(s)] = c.clock.free_cycle(s);
    }
    r.counters = c.counters;
    // What the memories held at most: the arrays carved from them and the bytes reached by
    // address.
    r.slm_high = std::max(slm.stack.stats().high_water, slm.store.high_water());
    r.vlm_high = std::max(vlm.stack.stats().high_water, vlm.store.high_water());
    r.slm_accesses = slm.store.reads() + slm.store.writes() - slm_before;
    r.vlm_accesses = vlm.store.reads() + vlm.store.writes() - vlm_before;
    r.special_functions = c.special_functions_called;
    r.printf_used = c.printf_called;
    r.rmw_updates = std::move(c.rmw_updates);
  };
  if (parallel && !shuffled && locals.bytes() == 0) {
    // A core's instances share its local memories: each core's run on one host thread, in
    // index order, so what one leaves for the next never depends on the thread count.
    std::vector<std::vector<std::size_t>> units_of_core(m.cores);
    for (std::size_t u = 0; u < order.size(); ++u) units_of_core[boxes[order[u]].core].push_back(u);
    sim::WorkScheduler& pool = options.scheduler ? *options.scheduler : device.scheduler();
    pool.parallel_for(m.cores, [&](std::size_t k) {
      for (std::size_t u : units_of_core[k]) run_instance(u);
      if (after_core) after_core(k);
    });
  } else {
    for (std::size_t u = 0; u < order.size(); ++u) run_instance(u);
    if (after_core) {
      sim::WorkScheduler& pool = options.scheduler ? *options.scheduler : device.scheduler();
      pool.parallel_for(m.cores, after_core);
    }
  }
  // RMW updates met in whatever order the host threads ran them: put back what the elements
  // held and replay them in index-space order (see detail::RmwLaunch).
  for (const detail::RmwLaunch::Tensor& t : rmw.tensors)
    for (std::size_t e = 0; e < t.updated.size(); ++e)
      if (t.updated[e]) std::memcpy(t.base + e * t.bytes, t.before.data() + e * t.bytes, t.bytes);
  if (!rmw.tensors.empty())
    for (const InstanceResult& r : results)
      for (const detail::RmwVector& u : r.rmw_updates)
        for (int i = 0; i < u.count; ++i) u.apply(u.first + i * u.step, u.lanes + i * u.bytes);
}

const profile::KernelRecord& Runtime::Impl::run(const KernelLaunch& launch) {
  // Named only when a fault is reported: a launch costs no formatting otherwise.
  auto where = [&] { return fmt::format("tpc kernel {}", launch.name); };
  if (!launch.kernel)
    throw_user_error(
        "kernel {}: no kernel entry; call gcapi::set_kernel(instance, "
        "tpc_kernel<your_function>()) in the glue code",
        launch.name);
  const int tensors = static_cast<int>(launch.inputs.size() + launch.outputs.size());
  const int limit = launch.printf_used ? m.max_tensors_printf : m.max_tensors;
  if (tensors > limit)
    throw DeviceFault(where(),
                      fmt::format("the program uses {} tensors ({} inputs, {} outputs) but "
                                  "a TPC program can address at most {}{} (spec 000 "
                                  "§2.4.2, tpc.max_tensors{}); split the kernel",
                                  tensors, launch.inputs.size(), launch.outputs.size(), limit,
                                  launch.printf_used ? " when it uses printf" : "",
                                  launch.printf_used ? "_with_printf" : ""));
  if (launch.kernel.tensor_params != static_cast<unsigned>(tensors))
    throw_user_error(
        "kernel {} takes {} tensor parameters but the launch gives {} ({} inputs, "
        "{} outputs); pass one tensor per kernel tensor parameter",
        launch.name, launch.kernel.tensor_params, tensors, launch.inputs.size(),
        launch.outputs.size());
  if (launch.scalar_params.size() > m.max_scalar_dwords)
    throw DeviceFault(where(), fmt::format("the glue passes {} scalar parameter dwords but a TPC "
                                           "program takes at most {} (tpc.max_scalar_param_dwords, "
                                           "spec 000 §2.7.1); pass fewer scalars",
                                           launch.scalar_params.size(), m.max_scalar_dwords));
  if (launch.kernel.scalar_dwords > launch.scalar_params.size())
    throw_user_error(
        "kernel {} takes {} scalar parameters but the glue set paramsNr = {}; set "
        "them with gcapi::set_scalar_params in HabanaKernel",
        launch.name, launch.kernel.scalar_dwords, launch.scalar_params.size());
  if (launch.index_space.dims < 1 || launch.index_space.dims > 5)
    throw_user_error("kernel {}: the glue's index space has {} dimensions; it must have 1 to 5",
                     launch.name, launch.index_space.dims);
  // A member count that wraps 64 bits would split into no instances and run nothing.
  std::uint64_t space = 1;
  for (unsigned d = 0; d < launch.index_space.dims; ++d)
    if (__builtin_mul_overflow(space, std::uint64_t{launch.index_space.sizes[d]}, &space))
      throw_user_error(
          "kernel {}: the glue's index space ({}) has more than 2^64 members; give "
          "each member more of the tensor so that the index space is smaller",
          launch.name,
          fmt::join(launch.index_space.sizes, launch.index_space.sizes + launch.index_space.dims,
                    " x "));
  auto check_tensor = [&](const DeviceTensor& t, const char* role, std::size_t i) {
    if (!t.buffer)
      throw_user_error("kernel {}: {} tensor {} has no device buffer", launch.name, role, i);
    if (t.dtype == DType::boolean)
      throw_user_error("kernel {}: {} tensor {} is bool; TPC tensors hold numbers (use u8)",
                       launch.name, role, i);
    const Strides strides = t.strides.rank() == 0 ? Strides(t.shape) : t.strides;
    // The lowest and highest element the strides reach (negative strides reach below the
    // offset), in checked arithmetic: a wrapped sum would pass for a tensor far outside.
    std::int64_t lo = 0, hi = 0;
    bool overflow = false;
    for (int d = 0; d < t.shape.rank(); ++d) {
      if (t.shape[d] == 0) return;
      std::int64_t span = 0;
      overflow |=
          __builtin_mul_overflow(t.shape[d] - 1, d < strides.rank() ? strides[d] : 0, &span);
      overflow |= __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi);
    }
    const auto elem = static_cast<std::int64_t>(dtype_size(t.dtype));
    std::int64_t first = 0, end = 0;
    overflow |= t.byte_offset > t.buffer.bytes;
    overflow |= __builtin_mul_overflow(lo, elem, &first) ||
                __builtin_add_overflow(first, static_cast<std::int64_t>(t.byte_offset), &first);
    overflow |= __builtin_add_overflow(hi, std::int64_t{1}, &end) ||
                __builtin_mul_overflow(end, elem, &end) ||
                __builtin_add_overflow(end, static_cast<std::int64_t>(t.byte_offset), &end);
    if (overflow || first < 0 || static_cast<std::uint64_t>(end) > t.buffer.bytes)
      throw_user_error(
          "kernel {}: {} tensor {} ({}) at byte offset {} reaches {} of its buffer, which "
          "has {} bytes; allocate a larger buffer or fix the tensor's offset and strides",
          launch.name, role, i, shape_text(t), t.byte_offset,
          overflow ? std::string("past any 64-bit address")
                   : fmt::format("bytes [{}, {})", first, end),
          t.buffer.bytes);
  };
  for (std::size_t i = 0; i < launch.inputs.size(); ++i) check_tensor(launch.inputs[i], "input", i);
  for (std::size_t i = 0; i < launch.outputs.size(); ++i)
    check_tensor(launch.outputs[i], "output", i);

  const std::vector<InstanceBox> boxes = split(launch.index_space, m.cores);

  // Check-order mode needs the outputs as they were before the run, and the inputs that are
  // not outputs, to find a kernel that writes them (it could not be run again).
  std::vector<std::pair<runtime::Buffer, std::vector<std::byte>>> before, inputs_before;
  auto snapshot = [&](const DeviceTensor& t, auto& into) {
    for (const auto& b : before)
      if (b.first.id == t.buffer.id) return;
    for (const auto& b : inputs_before)
      if (b.first.id == t.buffer.id) return;
    const std::byte* p = device.data(t.buffer);
    into.emplace_back(t.buffer, std::vector<std::byte>(p, p + t.buffer.bytes));
  };
  if (options.check_order) {
    for (const auto& t : launch.outputs) snapshot(t, before);
    for (const auto& t : launch.inputs) snapshot(t, inputs_before);
  }

  std::vector<InstanceResult> results;
  std::vector<std::string> printf_parts;
  // Each core is a timeline of the preset's four slots and its global-memory port; its
  // instances run one after another, each slot's issues placed where the instruction stream
  // put them (spec 000 §2.3.1). Cores are independent, so each core's timeline is composed in
  // the unit of host work that ran its instances (execute's after_core).
  const bool trace = device.trace_enabled();
  std::vector<std::vector<std::size_t>> of_core(m.cores);
  for (std::size_t i = 0; i < boxes.size(); ++i) of_core[boxes[i].core].push_back(i);
  // Pipes 0-3 are the slots; pipe 4 is the global port, busy for reads and writes together.
  constexpr sim::PipeId kPortPipe = 4;
  std::vector<std::optional<sim::Timeline>> composed(m.cores);
  std::vector<std::uint64_t> core_start(m.cores, 0), global_bytes(m.cores, 0);
  auto compose = [&](std::size_t k) {
    std::vector<std::string> pipes(m.slot_pipes.begin(), m.slot_pipes.end());
    pipes.push_back("global-port");
    sim::Timeline& tl = composed[k].emplace(core_names[k], std::move(pipes), &device.cost_model());
    tl.set_trace(trace);
    for (std::size_t i : of_core[k]) {
      const InstanceResult& r = results[i];
      const std::uint64_t t0 = core_start[k];
      // Each pipe's issues, packed to end where its last issue ended.
      auto place = [&](sim::PipeId pipe, std::uint64_t n, std::uint64_t last_free) {
        if (n > 0) tl.issue_at(pipe, launch.name, t0 + last_free - std::min(last_free, n), n);
      };
      for (int sl = detail::kLoad; sl <= detail::kStore; ++sl)
        place(static_cast<sim::PipeId>(sl), r.issues[static_cast<std::size_t>(sl)],
              r.last_free[static_cast<std::size_t>(sl)]);
      place(kPortPipe, r.issues[detail::kGlobalRead] + r.issues[detail::kGlobalWrite],
            std::max(r.last_free[detail::kGlobalRead], r.last_free[detail::kGlobalWrite]));
      core_start[k] = t0 + r.makespan;
      tl.extend_to(core_start[k]);
      global_bytes[k] += r.counters.bytes_read + r.counters.bytes_written;
    }
  };
  execute(launch, boxes, true, false, results, &printf_parts, compose);

  // What the hardware's loader decides from the kernel binary: a program that calls special
  // functions has less vector local memory, one that prints has one tensor less (spec 000
  // §2.3.3, §2.4.2).
  for (std::size_t i = 0; i < results.size(); ++i) {
    const InstanceResult& r = results[i];
    if (r.special_functions && r.vlm_high > m.vlm_special_bytes)
      throw DeviceFault(
          fmt::format("tpc{} kernel {}", boxes[i].core, launch.name),
          fmt::format("the program calls special functions, whose tables leave {} of vector "
                      "local memory (tpc.vlm_bytes_with_special_functions, spec 000 §2.3.3), but "
                      "its __local__ vector arrays and accesses by address reach {}; use less "
                      "vector local memory",
                      sim::format_bytes(m.vlm_special_bytes), sim::format_bytes(r.vlm_high)));
    if (r.printf_used && tensors > m.max_tensors_printf)
      throw DeviceFault(where(), fmt::format("the program prints, which takes a tensor slot, and "
                                             "uses {} tensors; a printing TPC program can address "
                                             "at most {} (spec 000 §2.4.2, "
                                             "tpc.max_tensors_with_printf); split the kernel",
                                             tensors, m.max_tensors_printf));
  }

  if (options.check_order) {
    for (std::size_t i = 0; i < inputs_before.size(); ++i) {
      const auto& [buffer, bytes] = inputs_before[i];
      const std::byte* p = device.data(buffer);
      const auto diff = std::mismatch(bytes.begin(), bytes.end(), p);
      if (diff.first == bytes.end()) continue;
      std::size_t input = 0;
      while (launch.inputs[input].buffer.id != buffer.id) ++input;
      throw DeviceFault(
          where(),
          fmt::format("check-order mode: the kernel wrote its input tensor {} (buffer #{}, "
                      "first changed byte {}), so it cannot be run again to check its "
                      "order; index-space members must not write what others read "
                      "(spec 000 §2.4.3): write the result to an output tensor",
                      input, buffer.id, static_cast<std::size_t>(diff.first - bytes.begin())));
    }
    std::vector<std::vector<std::byte>> result;
    for (auto& b : before) {
      std::byte* p = device.data(b.first);
      result.emplace_back(p, p + b.first.bytes);
      std::memcpy(p, b.second.data(), b.second.size());
    }
    std::uint64_t members = 1;
    for (unsigned d = 0; d < launch.index_space.dims; ++d) members *= launch.index_space.sizes[d];
    const std::uint64_t fine =
        std::min<std::uint64_t>(members, std::max<std::uint64_t>(4096, 4 * m.cores));
    std::vector<InstanceBox> other = split(launch.index_space, fine);
    if (other.size() == boxes.size() && other.size() > 1)
      other = split(launch.index_space, boxes.size() - 1);
    std::vector<InstanceResult> scratch;
    execute(launch, other, false, true, scratch, nullptr);
    for (std::size_t i = 0; i < before.size(); ++i) {
      std::byte* p = device.data(before[i].first);
      const auto diff = std::mismatch(result[i].begin(), result[i].end(), p);
      const bool same = diff.first == result[i].end();
      const std::size_t at = static_cast<std::size_t>(diff.first - result[i].begin());
      std::memcpy(p, result[i].data(), result[i].size());  // keep the normal run's results
      if (!same)
        throw DeviceFault(
            where(),
            fmt::format("check-order mode: the outputs differ when the {} index-space members run "
                        "as {} instances in shuffled order instead of {} (buffer #{} first "
                        "differs at byte {}); the kernel depends on the execution order of "
                        "members or shares data between them, which spec 000 §2.4.3 forbids",
                        members, other.size(), boxes.size(), before[i].first.id, at));
    }
  }

  // Printf output in index-space order, whatever the thread count.
  last_printf.clear();
  for (const auto& s : printf_parts) last_printf += s;
  if (!last_printf.empty()) {
    std::ostream& out = options.printf_stream ? *options.printf_stream : std::cout;
    out << last_printf;
    out.flush();
  }

  std::vector<sim::Timeline> timelines;
  timelines.reserve(m.cores);
  for (auto& tl : composed) timelines.push_back(std::move(*tl));

  std::array<std::uint64_t, detail::CoreClock::slot_count> issues{};
  detail::Counters total;
  std::uint64_t members = 0;
  std::uint64_t slm_high = 0, vlm_high = 0, slm_accesses = 0, vlm_accesses = 0;
  std::vector<std::uint64_t> slm_core(m.cores, 0), vlm_core(m.cores, 0);
  for (std::size_t i = 0; i < results.size(); ++i) {
    const InstanceResult& r = results[i];
    const unsigned k = boxes[i].core;
    for (std::size_t u = 0; u < r.issues.size(); ++u) issues[u] += r.issues[u];
    total.global_transactions += r.counters.global_transactions;
    total.bytes_read += r.counters.bytes_read;
    total.bytes_written += r.counters.bytes_written;
    total.coherency_warnings += r.counters.coherency_warnings;
    total.special_function_calls += r.counters.special_function_calls;
    std::uint64_t n = 1;
    for (int d = 0; d < 5; ++d) n *= static_cast<std::uint64_t>(boxes[i].size.v[d]);
    members += n;
    slm_core[k] = std::max(slm_core[k], r.slm_high);
    vlm_core[k] = std::max(vlm_core[k], r.vlm_high);
    slm_high = std::max(slm_high, r.slm_high);
    vlm_high = std::max(vlm_high, r.vlm_high);
    slm_accesses += r.slm_accesses;
    vlm_accesses += r.vlm_accesses;
  }

  profile::KernelRecord rec;
  rec.name = launch.name;
  rec.engine = "tpc";
  rec.bytes_read = total.bytes_read;
  rec.bytes_written = total.bytes_written;
  rec.metrics["members"] = static_cast<double>(members);
  rec.metrics["instances"] = static_cast<double>(results.size());
  for (std::size_t sl = 0; sl < 4; ++sl)
    rec.metrics[slot_issue_metrics[sl]] = static_cast<double>(issues[sl]);
  rec.metrics["global.transactions"] = static_cast<double>(total.global_transactions);
  rec.metrics["global.port_cycles"] =
      static_cast<double>(issues[detail::kGlobalRead] + issues[detail::kGlobalWrite]);
  rec.metrics["coherency_warnings"] = static_cast<double>(total.coherency_warnings);
  rec.metrics["special_function_calls"] = static_cast<double>(total.special_function_calls);
  rec.metrics["local.slm.high_water_bytes"] = static_cast<double>(slm_high);
  rec.metrics["local.vlm.high_water_bytes"] = static_cast<double>(vlm_high);
  rec.metrics["local.slm.accesses"] = static_cast<double>(slm_accesses);
  rec.metrics["local.vlm.accesses"] = static_cast<double>(vlm_accesses);
  last_coherency = total.coherency_warnings;
  if (total.coherency_warnings > 0)
    log(LogLevel::warn, "tpc",
        "kernel {}: {} vector loads may have read stale data (no aso() "
        "after a vector store to the same address, spec 000 §2.8)",
        launch.name, total.coherency_warnings);

  // Utilisation of each slot over the cores' own time (before waiting on shared memory).
  std::uint64_t busy = 0;
  for (std::uint64_t c : core_start) busy += c;
  for (std::size_t sl = 0; sl < 4; ++sl)
    rec.metrics[slot_utilisation_metrics[sl]] =
        busy > 0 ? static_cast<double>(issues[sl]) / static_cast<double>(busy) : 0.0;
  const profile::KernelRecord& stored =
      device.record_kernel(std::move(rec), timelines, global_bytes);
  for (unsigned k = 0; k < m.cores; ++k) {
    if (core_start[k] == 0) continue;
    device.note_memory_high_water(core_names[k], "scalar-local", slm_core[k]);
    device.note_memory_high_water(core_names[k], "vector-local", vlm_core[k]);
  }
  device.add_bytes_moved(m.global_name, total.bytes_read + total.bytes_written);
  return stored;
}

Runtime::Runtime(runtime::Device& device, RuntimeOptions options)
    : impl_(std::make_unique<Impl>(device, options)) {}
Runtime::~Runtime() = default;

runtime::Device& Runtime::device() {
  return impl_->device;
}
void Runtime::set_check_order(bool enabled) {
  impl_->options.check_order = enabled;
}
bool Runtime::check_order() const {
  return impl_->options.check_order;
}
const std::string& Runtime::last_printf_output() const {
  return impl_->last_printf;
}
std::uint64_t Runtime::last_coherency_warnings() const {
  return impl_->last_coherency;
}

std::vector<InstanceBox> Runtime::split(const gcapi::TensorGeometry_t& index_space) const {
  return impl_->split(index_space, impl_->m.cores);
}

const profile::KernelRecord& Runtime::run(const KernelLaunch& launch) {
  return impl_->run(launch);
}

namespace {

std::string describe_tensors(std::span<const DeviceTensor> ts) {
  std::string s;
  for (std::size_t i = 0; i < ts.size(); ++i)
    s += fmt::format("{}{}", i ? ", " : "", shape_text(ts[i]));
  return s.empty() ? "none" : s;
}

gcapi::Tensor_t gc_tensor(const DeviceTensor& t) {
  gcapi::Tensor_t g{};
  g.dataType = gcapi::data_type_of(t.dtype);
  g.geometry.dims = static_cast<unsigned>(tensor_rank(t));
  for (unsigned d = 0; d < gcapi::MAX_TENSOR_DIM; ++d)
    g.geometry.sizes[d] = static_cast<unsigned>(t.shape.dim_or_one(static_cast<int>(d)));
  for (unsigned d = 0; d < gcapi::MAX_TENSOR_DIM; ++d) g.geometry.permutation[d] = d;
  return g;
}

// The f32 variant of a typed kernel name: "relu_bf16" -> "relu_f32".
std::string f32_variant(std::string_view name) {
  const auto cut = name.rfind('_');
  if (cut == std::string_view::npos) return {};
  const auto type = parse_dtype(name.substr(cut + 1));
  if (!type || *type == DType::f32 || *type == DType::boolean) return {};
  return std::string(name.substr(0, cut)) + "_f32";
}

}  // namespace

const profile::KernelRecord& Runtime::launch(std::string_view kernel,
                                             std::span<const DeviceTensor> inputs,
                                             std::span<const DeviceTensor> outputs,
                                             const void* params, std::size_t params_size) {
  Impl& im = *impl_;
  const Machine& m = im.m;
  auto where = [&] { return fmt::format("tpc kernel {}", kernel); };
  const auto device_id = gcapi::DEVICE_ID_GAUDI;
  const KernelLibrary* lib = im.registry().find(kernel, m.name_limit, device_id);
  std::string run_name(kernel);
  bool fallback = false;
  if (lib == nullptr) {
    const std::string f32 = f32_variant(kernel);
    if (!f32.empty()) lib = im.registry().find(f32, m.name_limit, device_id);
    if (lib == nullptr) {
      std::string searched;
      for (const auto& l : im.registry().libraries())
        searched += fmt::format("{}{}", searched.empty() ? "" : ", ", l->origin());
      throw_user_error(
          "no TPC kernel library exports '{}'{}; searched: {} (add libraries with "
          "TESSERA_KERNEL_PATH or register the built-in kernels)",
          kernel, f32.empty() ? "" : fmt::format(" or its f32 variant '{}'", f32),
          searched.empty() ? "no libraries" : searched);
    }
    // The f32 variant runs between TPC cast kernels, with their real cycles (spec 000 §2.9).
    const std::string narrow(kernel.substr(kernel.rfind('_') + 1));
    for (const std::string& cast :
         {fmt::format("cast_{}_to_f32", narrow), fmt::format("cast_f32_to_{}", narrow)})
      if (im.registry().find(cast, m.name_limit, device_id) == nullptr)
        throw_user_error(
            "no TPC kernel library exports '{}'; its f32 variant '{}' exists, but running it "
            "needs the cast kernel '{}', which no library exports either; add a '{}' variant or "
            "the cast kernels (TESSERA_KERNEL_PATH)",
            kernel, f32, cast, kernel);
    fallback = true;
    run_name = f32;
    log(LogLevel::info, "tpc",
        "kernel {} not found; running {} between TPC casts to and from f32 (spec 000 §2.9)", kernel,
        f32);
  }
  const int tensors = static_cast<int>(inputs.size() + outputs.size());
  if (tensors > m.max_tensors || inputs.size() > gcapi::MAX_TENSOR_NR ||
      outputs.size() > gcapi::MAX_TENSOR_NR)
    throw DeviceFault(where(),
                      fmt::format("the launch passes {} tensors ({} inputs, {} outputs) but "
                                  "a TPC program can address at most {} (tpc.max_tensors, "
                                  "spec 000 §2.4.2); split the operation",
                                  tensors, inputs.size(), outputs.size(), m.max_tensors));
  if (params_size > 0 && params == nullptr)
    throw_user_error("kernel {}: params_size is {} but params is null", kernel, params_size);

  if (fallback) {
    // Cast on the device into f32 scratch tensors, run the f32 kernel, cast the outputs back.
    std::vector<DeviceTensor> ins(inputs.begin(), inputs.end());
    std::vector<DeviceTensor> outs(outputs.begin(), outputs.end());
    std::vector<runtime::Buffer> temps;
    struct Cleanup {
      runtime::Device& d;
      std::vector<runtime::Buffer>& b;
      ~Cleanup() {
        for (const auto& x : b) d.free(x);
      }
    } cleanup{im.device, temps};
    auto scratch = [&](const DeviceTensor& t) {
      DeviceTensor f = make_device_tensor(im.device, DType::f32, t.shape);
      temps.push_back(f.buffer);
      return f;
    };
    auto cast_name = [](DType from, DType to) {
      return fmt::format("cast_{}_to_{}", dtype_name(from), dtype_name(to));
    };
    for (auto& t : ins)
      if (t.dtype != DType::f32) {
        const DeviceTensor f = scratch(t);
        launch(cast_name(t.dtype, DType::f32), std::span<const DeviceTensor>(&t, 1),
               std::span<const DeviceTensor>(&f, 1));
        t = f;
      }
    for (auto& t : outs)
      if (t.dtype != DType::f32) t = scratch(t);
    launch(run_name, ins, outs, params, params_size);
    const std::size_t kernel_index = im.device.profile().kernels.size() - 1;
    for (std::size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i].dtype != DType::f32)
        launch(cast_name(DType::f32, outputs[i].dtype), std::span<const DeviceTensor>(&outs[i], 1),
               std::span<const DeviceTensor>(&outputs[i], 1));
    return im.device.profile().kernels[kernel_index];
  }
  std::vector<DeviceTensor> ins(inputs.begin(), inputs.end());
  std::vector<DeviceTensor> outs(outputs.begin(), outputs.end());

  gcapi::HabanaKernelParams_t p{};
  p.apiVersion = 1;
  std::snprintf(p.nodeName, sizeof p.nodeName, "%s", run_name.c_str());
  p.NodeParams = const_cast<void*>(params);  // gcapi's UserParams_t; glue only reads it
  p.NodeParamsSize = static_cast<unsigned>(params_size);
  p.deviceId = device_id;
  p.maxAvailableTpc = m.cores;
  p.inputTensorNr = static_cast<unsigned>(ins.size());
  p.outputTensorNr = static_cast<unsigned>(outs.size());
  for (std::size_t i = 0; i < ins.size(); ++i) p.inputTensors[i] = gc_tensor(ins[i]);
  for (std::size_t i = 0; i < outs.size(); ++i) p.outputTensors[i] = gc_tensor(outs[i]);
  std::optional<GlueInstance> own;  // for a launch made while another is being set up
  GlueInstance& glue = im.glue_in_use ? own.emplace() : im.glue;
  struct Release {
    bool* in_use;
    ~Release() {
      if (in_use) *in_use = false;
    }
  } release{im.glue_in_use ? nullptr : &im.glue_in_use};
  im.glue_in_use = true;
  const gcapi::GlueCodeReturn_t rc = instantiate_kernel(*lib, p, glue);
  const gcapi::HabanaKernelInstantiation_t& inst = glue.inst;
  if (rc != gcapi::GLUE_SUCCESS)
    throw_user_error(
        "kernel {} (library {}) rejected the launch with {}: the launch has {} "
        "inputs [{}] and {} outputs [{}]{}; pass tensors of the counts, ranks, "
        "sizes and data types the kernel supports",
        run_name, lib->origin(), gcapi::glue_return_name(rc), ins.size(), describe_tensors(ins),
        outs.size(), describe_tensors(outs),
        params_size ? fmt::format(" and {} parameter bytes", params_size) : "");

  // Access patterns must name index-space dimensions; an output not covered is worth a warning.
  auto check_pattern = [&](const gcapi::TensorAccessPattern_t& a, const DeviceTensor& t,
                           const char* role, std::size_t i) {
    if (a.allRequired) return;
    bool given = false;  // an all-zero pattern is one the glue left unset: nothing to check
    for (const auto& map : a.dim)
      given = given || map.dim != 0 || map.start_a != 0 || map.end_a != 0 || map.start_b != 0 ||
              map.end_b != 0;
    if (!given) return;
    for (int d = 0; d < tensor_rank(t); ++d) {
      const auto& map = a.dim[d];
      if (map.dim >= inst.indexSpaceGeometry.dims)
        throw_user_error(
            "kernel {}: the access pattern of {} tensor {} maps dimension {} to "
            "index-space dimension {}, but the index space has {}; fix the glue",
            run_name, role, i, d, map.dim, inst.indexSpaceGeometry.dims);
      if (std::string_view(role) != "output") continue;
      const double last = static_cast<double>(inst.indexSpaceGeometry.sizes[map.dim]) - 1;
      const double lo = map.start_b, hi = map.end_a * last + map.end_b;
      if (lo > 0 || hi < static_cast<double>(t.shape.dim_or_one(d) - 1))
        log(LogLevel::warn, "tpc",
            "kernel {}: the access pattern of output {} covers elements "
            "{}..{} of dimension {} (size {}); the index space may not cover the whole output",
            run_name, i, lo, hi, d, t.shape.dim_or_one(d));
    }
  };
  for (std::size_t i = 0; i < ins.size(); ++i)
    check_pattern(inst.inputTensorAccessPattern[i], ins[i], "input", i);
  for (std::size_t i = 0; i < outs.size(); ++i)
    check_pattern(inst.outputTensorAccessPattern[i], outs[i], "output", i);

  // An output whose pattern sets memsetBeforeExecution starts as outputMemsetValues[i] in every
  // element, as Habana's graph compiler memsets it before the launch (for RMW accumulation).
  // The value is read at the element's width (fValue/u32Value, u16Value, u8Value). Costed as a
  // host-link write; Habana runs a DMA memset node on the device.
  for (std::size_t i = 0; i < outs.size(); ++i) {
    if (!inst.outputTensorAccessPattern[i].memsetBeforeExecution) continue;
    const gcapi::PadValue& v = inst.outputMemsetValues[i];
    const std::size_t width = dtype_size(outs[i].dtype);
    const void* value = width == 4   ? static_cast<const void*>(&v.u32Value)
                        : width == 2 ? static_cast<const void*>(&v.u16Value)
                                     : static_cast<const void*>(&v.u8Value);
    if (width != 4 && width != 2 && width != 1)
      throw_user_error(
          "kernel {}: output {} asks for memsetBeforeExecution but its type {} is not 1, 2 or 4 "
          "bytes wide, the widths a PadValue holds; clear the flag or use a narrower type",
          run_name, i, dtype_name(outs[i].dtype));
    const std::size_t count = static_cast<std::size_t>(outs[i].shape.element_count());
    std::vector<std::byte> filled(count * width);
    for (std::size_t e = 0; e < count; ++e) std::memcpy(filled.data() + e * width, value, width);
    im.device.copy_to_device(outs[i].buffer, filled.data(), filled.size());
  }

  KernelLaunch l;
  l.name = run_name;
  l.kernel = glue.kernel;
  // Auxiliary tensors the glue asked for follow the outputs, as the graph compiler adds them:
  // Habana's avg_pool_2d_fwd_f32 is main(ifm, ofm, reciprocal_tab, ...), its bitonic sort
  // main(ifmData, ofmData, ofmIdx, auxLutAndPred, ...).
  std::vector<runtime::Buffer> aux_buffers;
  struct FreeAux {
    runtime::Device& d;
    std::vector<runtime::Buffer>& b;
    ~FreeAux() {
      for (const auto& x : b) d.free(x);
    }
  } free_aux{im.device, aux_buffers};
  for (unsigned i = 0; i < inst.auxiliaryTensorCount; ++i) {
    const gcapi::AuxTensor_t& a = inst.auxiliaryTensors[i];
    std::vector<std::int64_t> dims;
    for (unsigned d = 0; d < std::max(1u, std::min(a.geometry.dims, gcapi::MAX_TENSOR_DIM)); ++d)
      dims.push_back(d < a.geometry.dims ? a.geometry.sizes[d] : 1);
    const DType type = gcapi::dtype_of(a.dataType);
    const bool scratch = (inst.auxNotRequiringInit >> i) & 1u;
    const Shape shape = Shape::from_fastest_first(dims);
    if (static_cast<std::uint64_t>(shape.element_count()) * dtype_size(type) > glue.aux[i].size())
      throw_user_error(
          "kernel {}: auxiliary tensor {} is {} {} but its buffer holds {} bytes; "
          "set bufferSize to the tensor's size",
          run_name, i, dtype_name(type), shape.to_string(), glue.aux[i].size());
    DeviceTensor t =
        make_device_tensor(im.device, type, shape, scratch ? nullptr : glue.aux[i].data());
    aux_buffers.push_back(t.buffer);
    outs.push_back(t);
  }
  l.inputs = ins;
  l.outputs = outs;
  l.index_space = inst.indexSpaceGeometry;
  l.input_pads.assign(
      inst.inputPadValues,
      inst.inputPadValues + std::min<std::size_t>(ins.size(), gcapi::MAX_TENSOR_NR));
  const unsigned dwords = std::min<unsigned>(inst.kernel.paramsNr, gcapi::MAX_SCALAR_PARAMS_DWORDS);
  if (inst.kernel.paramsNr > gcapi::MAX_SCALAR_PARAMS_DWORDS || dwords > m.max_scalar_dwords)
    throw DeviceFault(where(), fmt::format("the glue passes {} scalar parameter dwords but a TPC "
                                           "program takes at most {} (tpc.max_scalar_param_dwords, "
                                           "spec 000 §2.7.1); pass fewer scalars",
                                           inst.kernel.paramsNr, m.max_scalar_dwords));
  l.scalar_params.assign(inst.kernel.scalarParams, inst.kernel.scalarParams + dwords);
  l.special_functions = inst.flags.specialFunctionsUsed != 0;
  l.printf_used = inst.flags.printfUsed != 0;

  return im.run(l);
}

DeviceTensor make_device_tensor(runtime::Device& device, DType dtype, const Shape& shape,
                                const void* host_data) {
  DeviceTensor t;
  t.dtype = dtype;
  t.shape = shape;
  const std::size_t bytes =
      static_cast<std::size_t>(std::max<std::int64_t>(1, shape.element_count())) *
      dtype_size(dtype);
  t.buffer = device.allocate(bytes, "tensor");
  if (host_data != nullptr)
    device.copy_to_device(t.buffer, host_data,
                          static_cast<std::size_t>(shape.element_count()) * dtype_size(dtype));
  return t;
}

}  // namespace tessera::tpc
