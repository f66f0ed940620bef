#include "tessera/targets/epu/api/array.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "tessera/core/error.h"
#include "tessera/core/log.h"
#include "tessera/sim/cost_model.h"
#include "tessera/sim/memory.h"
#include "tessera/sim/scheduler.h"

namespace tessera::epu {
namespace {

std::uint64_t ceil_div(double a, double b) {
  return static_cast<std::uint64_t>(std::ceil(a / b));
}

std::uint64_t positive_param(const arch::MachineSpec& spec, std::string_view key) {
  const double v = spec.param(key).value;
  if (!(v >= 1))
    throw_user_error("preset '{}': param {} is {}; the epu target needs at least 1", spec.name, key,
                     v);
  return static_cast<std::uint64_t>(v);
}

std::uint64_t g_generation = 0;

}  // namespace

std::string tensor_name(std::string_view kind, std::string_view elem, std::int64_t b,
                        std::int64_t c, std::int64_t h, std::int64_t w) {
  return fmt::format("{}<{}, {}x{}x{}x{}>", kind, elem, b, c, h, w);
}

Array::Array(runtime::Device& device)
    : device_(device), bus_("epu array", 8) {
  const arch::MachineSpec& spec = device.spec();
  if (spec.target != "epu")
    throw_user_error(
        "the epu target runs on presets of the epu family (chimera-q16, chimera-q8); '{}' is a "
        "{} machine (set TESSERA_EPU_DEVICE or call tessera::epu::set_device)",
        spec.name, spec.target);
  for (const char* m : {"localmem", "ocm", "ddr"})
    if (!spec.find_memory(m))
      throw_user_error("preset '{}' has no memory '{}', which the epu target models", spec.name, m);
  name_ = spec.name + " array";
  rows_ = static_cast<int>(positive_param(spec, "epu.array_rows"));
  cols_ = static_cast<int>(positive_param(spec, "epu.array_cols"));
  if (static_cast<std::int64_t>(rows_) * cols_ != spec.core_count.as_int())
    throw_user_error("preset '{}': epu.array_rows x epu.array_cols ({} x {}) differs from "
                     "core_count {}",
                     spec.name, rows_, cols_, spec.core_count.as_int());
  core_memory_ = static_cast<std::uint64_t>(spec.memory("localmem").capacity_bytes.value);
  register_bytes_ = positive_param(spec, "epu.register_bytes");
  max_flow_bytes_ = positive_param(spec, "epu.max_flow_transfer_bytes");
  alu_cycles_ = positive_param(spec, "epu.alu_op_cycles");
  exchange_cycles_ = positive_param(spec, "epu.neighbor_exchange_cycles");
  pop_cycles_ = positive_param(spec, "epu.broadcast_pop_cycles");
  int8_macs_ = spec.param("epu.int8_macs_per_cycle_per_core").value;
  int16_macs_ = spec.param("epu.int16_macs_per_cycle_per_core").value;
  flow_tiles_per_cycle_ = spec.param("epu.flow_tiles_per_cycle").value;
  rau_per_cycle_ = spec.param("epu.rau_accesses_per_cycle").value;
  dma_setup_ = static_cast<std::uint64_t>(spec.param_or("epu.dma_setup_cycles", 0));
  if (int8_macs_ <= 0 || int16_macs_ <= 0 || flow_tiles_per_cycle_ <= 0 || rau_per_cycle_ <= 0)
    throw_user_error("preset '{}': the epu MAC, flow and RAU rates must be positive", spec.name);
  bus_ = sim::BroadcastBus(name_, positive_param(spec, "epu.broadcast_register_bytes"));
  ocm_ = std::make_unique<sim::Memory>(spec.memory("ocm"), "epu", sim::Memory::Backing::host);
  ocm_alloc_ = std::make_unique<sim::FirstFitAllocator>(*ocm_);
  timeline_ = std::make_unique<sim::Timeline>("epu", spec, &device.cost_model());
  timeline_->set_trace(device.trace_enabled());
  for (const char* p : {"array", "dma", "flow", "rau", "broadcast"}) (void)timeline_->pipe(p);
  p_array_ = timeline_->pipe("array");
  p_dma_ = timeline_->pipe("dma");
  p_flow_ = timeline_->pipe("flow");
  p_rau_ = timeline_->pipe("rau");
  p_broadcast_ = timeline_->pipe("broadcast");
  stage_cycles_ = device.cost_model().pipe_latency("broadcast");
  flow_latency_ = device.cost_model().pipe_latency("flow");
  rau_latency_ = device.cost_model().pipe_latency("rau");
  generation_ = ++g_generation;
}

Array::~Array() = default;

void Array::check_core_dim(std::uint32_t dim) const {
  if (static_cast<int>(dim) != rows_ || static_cast<int>(dim) != cols_)
    throw_user_error(
        "this program was compiled for a {0}x{0} array (Epu::coreDim = {0}) but the device "
        "'{1}' has {2}x{3} cores; build it with -DTESSERA_EPU_CORE_DIM={2} or run it on a "
        "preset with a {0}x{0} array",
        dim, device_.spec().name, rows_, cols_);
}

void Array::place(OcmPlacement& p, std::uint64_t bytes, const std::string& tensor) {
  if (p.placed && p.generation == generation_) return;
  const std::uint64_t aligned = bytes == 0 ? ocm_->alignment()
                                           : (bytes + ocm_->alignment() - 1) / ocm_->alignment() *
                                                 ocm_->alignment();
  if (aligned > ocm_alloc_->largest_free_block())
    throw DeviceFault(
        name_,
        fmt::format("MemAllocator::allocate: {} needs {} of OCM but OCM ({} in all) has {} free "
                    "(largest block {}); free OCM tensors, or copy a smaller region of interest "
                    "from DDR with memCpy's offsets",
                    tensor, sim::format_bytes(bytes), sim::format_bytes(ocm_->capacity()),
                    sim::format_bytes(ocm_alloc_->free_bytes()),
                    sim::format_bytes(ocm_alloc_->largest_free_block())));
  p.address = ocm_alloc_->allocate(bytes);
  p.bytes = bytes;
  p.placed = true;
  p.generation = generation_;
  p.dma_done = {};
  p.array_done = {};
  device_.note_memory_high_water("epu", "ocm", ocm_alloc_->stats().high_water);
}

void Array::release(OcmPlacement& p) {
  if (p.placed && p.generation == generation_) ocm_alloc_->free(p.address);
  p.placed = false;
}

std::byte* Array::ocm_data(OcmPlacement& p, std::uint64_t bytes, const std::string& tensor) {
  place(p, bytes, tensor);
  return ocm_->bytes(p.address, bytes, tensor).data();
}

std::byte* Array::ocm_outside_tensor(std::string_view api, const std::string& tensor, std::uint64_t address,
                                     std::uint64_t bytes, std::size_t core) {
  if (warned_outside_.insert(std::string(api) + " " + tensor).second)
    log(LogLevel::warn, "epu",
        "{}: core ({}, {}) has offsets past the dimensions of {}; the RAU reads and writes the OCM bytes "
        "its address reaches (byte {}), which may belong to another tensor (said once per tensor)",
        api, core / cols_, core % cols_, tensor, address);
  return ocm_->bytes(address, bytes, api).data();
}

std::uint64_t Array::ocm_capacity() const { return ocm_->capacity(); }
std::uint64_t Array::ocm_free() const { return ocm_alloc_->free_bytes(); }

void Array::macs(std::uint64_t per_core, bool int8) {
  pending_compute_ += ceil_div(static_cast<double>(per_core), int8 ? int8_macs_ : int16_macs_);
  mac_ops_ += per_core;
}

void Array::flush() {
  timeline_->set_trace(device_.trace_enabled());
  if (pending_compute_ > 0) {
    last_array_ = last_array_ ? timeline_->issue(p_array_, "compute", pending_compute_, {last_array_})
                              : timeline_->issue(p_array_, "compute", pending_compute_);
    pending_compute_ = 0;
    any_ = true;
  }
  if (pending_broadcast_ > 0) {
    last_array_ = last_array_
                      ? timeline_->issue(p_broadcast_, "broadcast", pending_broadcast_, {last_array_})
                      : timeline_->issue(p_broadcast_, "broadcast", pending_broadcast_);
    pending_broadcast_ = 0;
    any_ = true;
  }
}

// The dependencies of an array-side operation on `tensor`: the array's previous instruction
// and, when it reads OCM, the last memCpy into the tensor.
sim::Event Array::after_array(OcmPlacement* tensor, bool needs_dma) {
  flush();
  (void)needs_dma;
  return tensor && tensor->dma_done && tensor->dma_kernel == kernel_serial_ ? tensor->dma_done
                                                                            : sim::Event{};
}

void Array::flow(std::string_view api, std::uint64_t tiles, std::uint64_t bytes,
                 OcmPlacement& tensor, bool write) {
  const sim::Event dma = after_array(&tensor, true);
  sim::Event deps[2];
  std::size_t n = 0;
  if (last_array_) deps[n++] = last_array_;
  if (dma) deps[n++] = dma;
  const std::uint64_t cycles = flow_latency_ +
                               ceil_div(static_cast<double>(tiles), flow_tiles_per_cycle_);
  last_array_ = timeline_->issue(p_flow_, api, cycles, std::span<const sim::Event>(deps, n));
  tensor.array_done = last_array_;
  tensor.array_kernel = kernel_serial_;
  timeline_->add_bytes_moved(write ? "array->ocm" : "ocm->array", bytes);
  // The registers a flow fills on every core (one 32-bit register per tile).
  device_.note_memory_high_water("epu core", "flow registers", tiles * register_bytes_);
  ++flows_;
  flow_tiles_ += tiles;
  any_ = true;
}

void Array::rau(std::string_view api, OcmPlacement& tensor, bool write) {
  const sim::Event dma = after_array(&tensor, true);
  sim::Event deps[2];
  std::size_t n = 0;
  if (last_array_) deps[n++] = last_array_;
  if (dma) deps[n++] = dma;
  const std::uint64_t cycles = rau_latency_ +
                               ceil_div(static_cast<double>(cores()), rau_per_cycle_);
  last_array_ = timeline_->issue(p_rau_, api, cycles, std::span<const sim::Event>(deps, n));
  tensor.array_done = last_array_;
  tensor.array_kernel = kernel_serial_;
  timeline_->add_bytes_moved(write ? "array->ocm" : "ocm->array",
                             static_cast<std::uint64_t>(cores()) * register_bytes_);
  ++rau_;
  any_ = true;
}

void Array::stage(OcmPlacement& tensor, std::span<const std::byte> source, std::string name) {
  bus_.stage(source, std::move(name));
  ++stages_;
  any_ = true;
  if (tensor.dma_done && tensor.dma_kernel == kernel_serial_) {
    // The staged tensor was copied in by memCpy in this kernel: the staging waits for it.
    const sim::Event dma = after_array(&tensor, true);
    last_array_ = last_array_ ? timeline_->issue(p_broadcast_, "BroadcastStream::stage", stage_cycles_,
                                                 {last_array_, dma})
                              : timeline_->issue(p_broadcast_, "BroadcastStream::stage", stage_cycles_, {dma});
    tensor.array_done = last_array_;
    tensor.array_kernel = kernel_serial_;
    return;
  }
  // Otherwise it joins the array's batch of instructions, as POPs do.
  pending_broadcast_ += stage_cycles_;
}

void Array::pop(std::string_view api) {
  bus_.pop(api);
  pending_broadcast_ += pop_cycles_;
  ++pops_;
  timeline_->add_bytes_moved("ocm->broadcast", bus_.width());
}

void Array::mem_cpy(const sim::DmaDescriptor& d, OcmPlacement& tensor, bool to_ocm) {
  std::vector<sim::Event> deps;
  // A copy into OCM waits for the array to be done with the tensor; a copy out waits for the
  // array's writes to it. Either way, the array's earlier flows on that tensor.
  flush();
  if (tensor.array_done && tensor.array_kernel == kernel_serial_) deps.push_back(tensor.array_done);
  sim::DmaEngine dma(*timeline_, p_dma_, device_.cost_model());
  sim::Event done = dma.copy(d, deps, to_ocm ? "memCpy DDR->OCM" : "memCpy OCM->DDR");
  if (dma_setup_ > 0) done = timeline_->issue(p_dma_, "memCpy setup", dma_setup_, {done});
  tensor.dma_done = done;
  tensor.dma_kernel = kernel_serial_;
  ddr_bytes_ += d.bytes();
  ++mem_cpys_;
  any_ = true;
}

void Array::fault(std::string_view api, const std::string& message, int core) const {
  const std::string where =
      core < 0 ? name_ : fmt::format("{} core ({}, {})", name_, core / cols_, core % cols_);
  throw DeviceFault(where, fmt::format("{}: {}", api, message));
}

void Array::set_threads(unsigned threads) {
  own_scheduler_ = threads == 0 ? nullptr : std::make_unique<sim::WorkScheduler>(threads);
}

sim::WorkScheduler& Array::scheduler() {
  return own_scheduler_ ? *own_scheduler_ : device_.scheduler();
}

bool Array::pending() const { return any_ || pending_compute_ > 0 || pending_broadcast_ > 0; }

std::uint64_t Array::cycles_so_far() {
  flush();
  return timeline_->end_cycle();
}

profile::KernelRecord Array::finish(std::string_view name) {
  flush();
  if (!any_) return {};
  profile::KernelRecord record;
  record.name = std::string(name);
  record.engine = "epu";
  record.bytes_read = ddr_bytes_;  // DDR traffic of memCpy, both ways
  record.metrics["array_instructions"] = static_cast<double>(ops_);
  record.metrics["neighbor_exchanges"] = static_cast<double>(exchanges_);
  record.metrics["macs_per_core"] = static_cast<double>(mac_ops_);
  record.metrics["flows"] = static_cast<double>(flows_);
  record.metrics["flow_tiles"] = static_cast<double>(flow_tiles_);
  record.metrics["rau_accesses"] = static_cast<double>(rau_);
  record.metrics["broadcast_stages"] = static_cast<double>(stages_);
  record.metrics["broadcast_pops"] = static_cast<double>(pops_);
  record.metrics["memcpys"] = static_cast<double>(mem_cpys_);
  const std::uint64_t ddr[1] = {ddr_bytes_};
  std::span<sim::Timeline> tls(timeline_.get(), 1);
  profile::KernelRecord out = device_.record_kernel(std::move(record), tls, ddr);
  // A fresh timeline for what follows; tensors' events of this kernel no longer apply.
  const bool trace = device_.trace_enabled();
  timeline_ = std::make_unique<sim::Timeline>("epu", device_.spec(), &device_.cost_model());
  timeline_->set_trace(trace);
  last_array_ = {};
  ++kernel_serial_;
  ddr_bytes_ = ops_ = exchanges_ = mac_ops_ = flows_ = flow_tiles_ = rau_ = pops_ = stages_ =
      mem_cpys_ = 0;
  any_ = false;
  return out;
}

// ---- the process's EPU ----
namespace detail {
Array* g_array = nullptr;
}  // namespace detail

namespace {
struct Process {
  std::unique_ptr<runtime::Device> device;
  std::unique_ptr<Array> array;
  unsigned threads = 0;
};
Process& process() {
  static Process p;
  return p;
}
}  // namespace

Array& array() {
  Process& p = process();
  if (!p.array) {
    if (!p.device) {
      const char* env = std::getenv("TESSERA_EPU_DEVICE");
      p.device = runtime::Device::open(env && *env ? env : "chimera-q16");
    }
    p.array = std::make_unique<Array>(*p.device);
    p.array->set_threads(p.threads);
    detail::g_array = p.array.get();
  }
  return *p.array;
}

void set_device(std::unique_ptr<runtime::Device> device) {
  Process& p = process();
  if (p.array && p.array->pending()) p.array->finish("epu:program");
  detail::g_array = nullptr;
  p.array.reset();
  p.device = std::move(device);
}

runtime::Device& device() { return array().device(); }

profile::KernelRecord synchronize(std::string_view name) {
  Array& a = array();
  profile::KernelRecord r = a.finish(name);
  a.device().synchronize();
  return r;
}

void set_threads(unsigned threads) {
  process().threads = threads;
  if (process().array) process().array->set_threads(threads);
}

}  // namespace tessera::epu
