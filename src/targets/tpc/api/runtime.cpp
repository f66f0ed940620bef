// The TPC executor: kernel lookup and glue, the index-space split, program instances on host
// threads, the slot cost model (spec 000 §2.3), check-order mode and the f32 fallback (§2.9).
#include "tessera/targets/tpc/api/runtime.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <numeric>
#include <random>

#include "tessera/core/error.h"
#include "tessera/core/log.h"
#include "tessera/sim/scheduler.h"
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
  std::uint64_t lat_load = 0, lat_spu = 0, lat_vpu = 0, lat_store = 0;
  std::size_t slm_bytes = 0, slm_align = 1;
  std::size_t vlm_bytes = 0, vlm_align = 1, vlm_special_bytes = 0;
  std::string slm_name, vlm_name, global_name;
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
  m.lat_load = static_cast<std::uint64_t>(spec.pipe("load").latency_cycles.as_int());
  m.lat_spu = static_cast<std::uint64_t>(spec.pipe("spu").latency_cycles.as_int());
  m.lat_vpu = static_cast<std::uint64_t>(spec.pipe("vpu").latency_cycles.as_int());
  m.lat_store = static_cast<std::uint64_t>(spec.pipe("store").latency_cycles.as_int());
  const auto& slm = spec.memory("slm");
  const auto& vlm = spec.memory("vlm");
  m.slm_name = slm.name;
  m.vlm_name = vlm.name;
  m.slm_bytes = static_cast<std::size_t>(slm.capacity_bytes.as_int());
  m.slm_align = static_cast<std::size_t>(std::max<std::int64_t>(1, slm.alignment_bytes.as_int()));
  m.vlm_bytes = static_cast<std::size_t>(vlm.capacity_bytes.as_int());
  m.vlm_align = static_cast<std::size_t>(std::max<std::int64_t>(1, vlm.alignment_bytes.as_int()));
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
  return std::max(1, t.shape.rank());
}

std::string shape_text(const DeviceTensor& t) {
  return fmt::format("{} {}", dtype_name(t.dtype), t.shape.to_string());
}

// Per-core results of one execution.
struct CoreResult {
  std::uint64_t cycles = 0;
  detail::Counters counters;
  std::uint64_t members = 0;
  std::uint64_t instances = 0;
  std::size_t slm_high = 0, vlm_high = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals;  // [start, end) per instance
};

std::uint64_t instance_cycles(const Machine& m, const detail::Counters& c) {
  const std::uint64_t slots = std::max({c.load, c.spu, c.vpu, c.store});
  const std::uint64_t memory = c.global_vectors * m.global_cycles_per_vector;
  // The compiler software-pipelines the loop, so the load -> VPU -> store latency chain is
  // exposed once per instance (pipeline fill), not per iteration.
  std::uint64_t fill =
      (c.load ? m.lat_load : 0) + (c.vpu ? m.lat_vpu : 0) + (c.store ? m.lat_store : 0);
  if (fill == 0 && c.spu) fill = m.lat_spu;
  return std::max(slots, memory) + fill;
}

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

  Impl(runtime::Device& d, RuntimeOptions o) : device(d), options(o), m(read_machine(d.spec())) {
    if (env_flag("TESSERA_TPC_CHECK_ORDER")) options.check_order = true;
  }

  const KernelRegistry& registry() const {
    return options.registry ? *options.registry : KernelRegistry::global();
  }

  std::vector<InstanceBox> split(const gcapi::TensorGeometry_t& g, std::uint64_t target) const;
  void execute(const KernelLaunch& launch, const std::vector<InstanceBox>& boxes, bool parallel,
               bool shuffled, std::vector<CoreResult>& cores, std::vector<std::string>* printf_out);
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

}  // namespace

void Runtime::Impl::execute(const KernelLaunch& launch, const std::vector<InstanceBox>& boxes,
                            bool parallel, bool shuffled, std::vector<CoreResult>& cores,
                            std::vector<std::string>* printf_out) {
  // The tensor table every instance starts from.
  std::vector<detail::TensorSlot> table;
  auto add_slot = [&](const DeviceTensor& t, bool output, const gcapi::PadValue* pad) {
    detail::TensorSlot s;
    s.base = device.data(t.buffer) + t.byte_offset;
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

  // Units of host work: one per core normally (instances of a core run in order); in the
  // shuffled check run, every instance in a fixed random order on this thread.
  std::vector<std::vector<std::size_t>> per_unit;
  if (shuffled) {
    std::vector<std::size_t> order(boxes.size());
    std::iota(order.begin(), order.end(), 0);
    std::mt19937 rng(0x7e55e7a);
    std::shuffle(order.begin(), order.end(), rng);
    per_unit.push_back(order);
  } else {
    per_unit.resize(m.cores);
    for (std::size_t i = 0; i < boxes.size(); ++i) per_unit[boxes[i].core].push_back(i);
  }
  cores.assign(m.cores, CoreResult{});
  if (printf_out) printf_out->assign(boxes.size(), std::string());

  const std::size_t vlm_capacity = launch.special_functions ? m.vlm_special_bytes : m.vlm_bytes;
  auto run_unit = [&](std::size_t unit) {
    std::vector<std::byte> slm(m.slm_bytes), vlm(m.vlm_bytes);
    auto ctx = std::make_unique<detail::InstanceContext>();
    for (std::size_t index : per_unit[unit]) {
      const InstanceBox& box = boxes[index];
      CoreResult& core = cores[shuffled ? index % m.cores : box.core];
      detail::InstanceContext& c = *ctx;
      for (std::size_t i = 0; i < table.size(); ++i) {
        c.tensors[i] = table[i];
        c.tensors[i].stored = false;
        c.tensors[i].stored_ranges.clear();
      }
      c.tensor_count = static_cast<int>(table.size());
      c.offset = box.offset;
      c.size = box.size;
      c.counters = detail::Counters{};
      c.special_function_issues = m.special_issues;
      c.reduction_issues = m.reduction_issues;
      c.special_functions_allowed = launch.special_functions;
      c.printf_allowed = launch.printf_used;
      c.kernel_name = launch.name.c_str();
      c.core = shuffled ? static_cast<unsigned>(index % m.cores) : box.core;
      c.slm = detail::LocalArena{m.slm_name.c_str(), slm.data(), m.slm_bytes, m.slm_align, 0, 0};
      c.vlm = detail::LocalArena{m.vlm_name.c_str(), vlm.data(), vlm_capacity, m.vlm_align, 0, 0};
      // Each instance's random stream starts from its place in the index space.
      std::uint32_t seed = 0x9e3779b9u;
      for (int d = 0; d < 5; ++d) seed = mix(seed ^ static_cast<std::uint32_t>(box.offset.v[d]));
      for (int i = 0; i < 64; ++i) c.lfsr[i] = mix(seed + static_cast<std::uint32_t>(i)) | 1u;
      c.s_lfsr = mix(seed ^ 0x5bd1e995u) | 1u;
      c.printf_out = printf_out ? &(*printf_out)[index] : nullptr;
      c.coherency_check = options.coherency_check && !shuffled;  // warned in the first run
      {
        CurrentInstance guard(&c);
        launch.kernel.invoke(args);
      }
      std::uint64_t members = 1;
      for (int d = 0; d < 5; ++d) members *= static_cast<std::uint64_t>(box.size.v[d]);
      c.counters.spu += members;  // loop bookkeeping: one branch per member
      const std::uint64_t cycles = instance_cycles(m, c.counters);
      core.intervals.emplace_back(core.cycles, core.cycles + cycles);
      core.cycles += cycles;
      core.members += members;
      core.instances += 1;
      core.counters.load += c.counters.load;
      core.counters.spu += c.counters.spu;
      core.counters.vpu += c.counters.vpu;
      core.counters.store += c.counters.store;
      core.counters.global_vectors += c.counters.global_vectors;
      core.counters.bytes_read += c.counters.bytes_read;
      core.counters.bytes_written += c.counters.bytes_written;
      core.counters.coherency_warnings += c.counters.coherency_warnings;
      core.counters.special_function_calls += c.counters.special_function_calls;
      core.slm_high = std::max(core.slm_high, c.slm.high_water);
      core.vlm_high = std::max(core.vlm_high, c.vlm.high_water);
    }
  };
  if (parallel && !shuffled) {
    sim::WorkScheduler& pool = options.scheduler ? *options.scheduler : device.scheduler();
    pool.parallel_for(per_unit.size(), run_unit);
  } else {
    for (std::size_t u = 0; u < per_unit.size(); ++u) run_unit(u);
  }
}

const profile::KernelRecord& Runtime::Impl::run(const KernelLaunch& launch) {
  const std::string where = fmt::format("tpc kernel {}", launch.name);
  if (!launch.kernel)
    throw_user_error(
        "kernel {}: no kernel entry; set instance->kernel.kernel = "
        "tpc_kernel<your_function>() in the glue code",
        launch.name);
  const int tensors = static_cast<int>(launch.inputs.size() + launch.outputs.size());
  const int limit = launch.printf_used ? m.max_tensors_printf : m.max_tensors;
  if (tensors > limit)
    throw DeviceFault(where, fmt::format("the program uses {} tensors ({} inputs, {} outputs) but "
                                         "a TPC program can address at most {}{} (spec 000 "
                                         "§2.4.2, tpc.max_tensors{}); split the kernel",
                                         tensors, launch.inputs.size(), launch.outputs.size(),
                                         limit, launch.printf_used ? " when it uses printf" : "",
                                         launch.printf_used ? "_with_printf" : ""));
  if (launch.kernel.tensor_params != static_cast<unsigned>(tensors))
    throw_user_error(
        "kernel {} takes {} tensor parameters but the launch gives {} ({} inputs, "
        "{} outputs); pass one tensor per kernel tensor parameter",
        launch.name, launch.kernel.tensor_params, tensors, launch.inputs.size(),
        launch.outputs.size());
  if (launch.scalar_params.size() > m.max_scalar_dwords)
    throw DeviceFault(where, fmt::format("the glue passes {} scalar parameter dwords but a TPC "
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
  auto check_tensor = [&](const DeviceTensor& t, const char* role, std::size_t i) {
    if (!t.buffer)
      throw_user_error("kernel {}: {} tensor {} has no device buffer", launch.name, role, i);
    if (t.dtype == DType::boolean)
      throw_user_error("kernel {}: {} tensor {} is bool; TPC tensors hold numbers (use u8)",
                       launch.name, role, i);
    const Strides strides = t.strides.rank() == 0 ? Strides(t.shape) : t.strides;
    std::int64_t last = 0;
    for (int d = 0; d < t.shape.rank(); ++d) {
      if (t.shape[d] == 0) return;
      last += (t.shape[d] - 1) * (d < strides.rank() ? strides[d] : 0);
    }
    const std::uint64_t need =
        t.byte_offset + static_cast<std::uint64_t>(last + 1) * dtype_size(t.dtype);
    if (need > t.buffer.bytes)
      throw_user_error(
          "kernel {}: {} tensor {} ({}) needs {} bytes from offset 0 but its buffer "
          "has {}; allocate a larger buffer",
          launch.name, role, i, shape_text(t), need, t.buffer.bytes);
  };
  for (std::size_t i = 0; i < launch.inputs.size(); ++i) check_tensor(launch.inputs[i], "input", i);
  for (std::size_t i = 0; i < launch.outputs.size(); ++i)
    check_tensor(launch.outputs[i], "output", i);

  const std::vector<InstanceBox> boxes = split(launch.index_space, m.cores);

  // Check-order mode needs the outputs as they were before the run.
  std::vector<std::pair<runtime::Buffer, std::vector<std::byte>>> before;
  if (options.check_order) {
    for (const auto& t : launch.outputs) {
      bool seen = false;
      for (const auto& b : before) seen = seen || b.first.id == t.buffer.id;
      if (seen) continue;
      const std::byte* p = device.data(t.buffer);
      before.emplace_back(t.buffer, std::vector<std::byte>(p, p + t.buffer.bytes));
    }
  }

  std::vector<CoreResult> cores;
  std::vector<std::string> printf_parts;
  execute(launch, boxes, true, false, cores, &printf_parts);

  if (options.check_order) {
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
    std::vector<CoreResult> scratch;
    execute(launch, other, false, true, scratch, nullptr);
    for (std::size_t i = 0; i < before.size(); ++i) {
      std::byte* p = device.data(before[i].first);
      const auto diff = std::mismatch(result[i].begin(), result[i].end(), p);
      const bool same = diff.first == result[i].end();
      const std::size_t at = static_cast<std::size_t>(diff.first - result[i].begin());
      std::memcpy(p, result[i].data(), result[i].size());  // keep the normal run's results
      if (!same)
        throw DeviceFault(
            where,
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

  profile::KernelRecord rec;
  rec.name = launch.name;
  detail::Counters total;
  std::uint64_t members = 0, instances = 0, busy = 0;
  std::size_t slm_high = 0, vlm_high = 0;
  for (const auto& c : cores) {
    rec.cycles_per_core.push_back(c.cycles);
    rec.cycles = std::max(rec.cycles, c.cycles);
    busy += c.cycles;
    total.load += c.counters.load;
    total.spu += c.counters.spu;
    total.vpu += c.counters.vpu;
    total.store += c.counters.store;
    total.global_vectors += c.counters.global_vectors;
    total.bytes_read += c.counters.bytes_read;
    total.bytes_written += c.counters.bytes_written;
    total.coherency_warnings += c.counters.coherency_warnings;
    total.special_function_calls += c.counters.special_function_calls;
    members += c.members;
    instances += c.instances;
    slm_high = std::max(slm_high, c.slm_high);
    vlm_high = std::max(vlm_high, c.vlm_high);
  }
  rec.bytes_read = total.bytes_read;
  rec.bytes_written = total.bytes_written;
  auto util = [&](std::uint64_t issues) {
    return busy > 0 ? static_cast<double>(issues) / static_cast<double>(busy) : 0.0;
  };
  rec.metrics["members"] = static_cast<double>(members);
  rec.metrics["instances"] = static_cast<double>(instances);
  rec.metrics["slot.load.issues"] = static_cast<double>(total.load);
  rec.metrics["slot.spu.issues"] = static_cast<double>(total.spu);
  rec.metrics["slot.vpu.issues"] = static_cast<double>(total.vpu);
  rec.metrics["slot.store.issues"] = static_cast<double>(total.store);
  rec.metrics["slot.load.utilisation"] = util(total.load);
  rec.metrics["slot.spu.utilisation"] = util(total.spu);
  rec.metrics["slot.vpu.utilisation"] = util(total.vpu);
  rec.metrics["slot.store.utilisation"] = util(total.store);
  rec.metrics["global.vector_accesses"] = static_cast<double>(total.global_vectors);
  rec.metrics["coherency_warnings"] = static_cast<double>(total.coherency_warnings);
  rec.metrics["special_function_calls"] = static_cast<double>(total.special_function_calls);
  rec.metrics["local.slm.high_water_bytes"] = static_cast<double>(slm_high);
  rec.metrics["local.vlm.high_water_bytes"] = static_cast<double>(vlm_high);
  last_coherency = total.coherency_warnings;
  if (total.coherency_warnings > 0)
    log(LogLevel::warn, "tpc",
        "kernel {}: {} vector loads may have read stale data (no aso() "
        "after a vector store to the same address, spec 000 §2.8)",
        launch.name, total.coherency_warnings);

  const profile::KernelRecord& stored = device.record_kernel(std::move(rec));
  const std::uint64_t start = stored.start_cycle;
  const bool trace = device.trace_enabled();
  for (unsigned c = 0; c < cores.size(); ++c) {
    const std::string core = fmt::format("tpc{}", c);
    const auto& r = cores[c];
    if (r.instances == 0) continue;
    device.add_pipe_busy(core + "/load", r.counters.load);
    device.add_pipe_busy(core + "/spu", r.counters.spu);
    device.add_pipe_busy(core + "/vpu", r.counters.vpu);
    device.add_pipe_busy(core + "/store", r.counters.store);
    device.note_memory_high_water(core, "scalar-local", r.slm_high);
    device.note_memory_high_water(core, "vector-local", r.vlm_high);
    if (trace)
      for (const auto& iv : r.intervals)
        device.record_interval({core, launch.name, start + iv.first, start + iv.second});
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
  gcapi::Tensor_t g;
  g.dataType = gcapi::data_type_of(t.dtype);
  g.geometry.dims = static_cast<unsigned>(tensor_rank(t));
  for (int d = 0; d < gcapi::MAX_TENSOR_DIM; ++d)
    g.geometry.sizes[d] = static_cast<unsigned>(t.shape.dim_or_one(d));
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
  const std::string where = fmt::format("tpc kernel {}", kernel);
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
    fallback = true;
    run_name = f32;
    log(LogLevel::info, "tpc",
        "kernel {} not found; running {} with casts to and from f32 "
        "(spec 000 §2.9)",
        kernel, f32);
  }
  const int tensors = static_cast<int>(inputs.size() + outputs.size());
  if (tensors > m.max_tensors || inputs.size() > gcapi::MAX_TENSOR_NR ||
      outputs.size() > gcapi::MAX_TENSOR_NR)
    throw DeviceFault(where, fmt::format("the launch passes {} tensors ({} inputs, {} outputs) but "
                                         "a TPC program can address at most {} (tpc.max_tensors, "
                                         "spec 000 §2.4.2); split the operation",
                                         tensors, inputs.size(), outputs.size(), m.max_tensors));
  if (params_size > 0 && params == nullptr)
    throw_user_error("kernel {}: params_size is {} but params is null", kernel, params_size);

  // f32 fallback: cast inputs to f32 buffers and run into f32 outputs.
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
  std::uint64_t cast_elements = 0;
  auto to_f32 = [&](const DeviceTensor& t, bool copy) {
    DeviceTensor f;
    f.dtype = DType::f32;
    f.shape = t.shape;
    const auto n = static_cast<std::size_t>(t.shape.element_count());
    f.buffer = im.device.allocate(std::max<std::size_t>(n, 1) * 4, "tpc-f32-fallback");
    temps.push_back(f.buffer);
    if (copy) {
      const std::byte* src = im.device.data(t.buffer) + t.byte_offset;
      std::byte* dst = im.device.data(f.buffer);
      for (std::size_t i = 0; i < n; ++i)
        store_from_double(dst, DType::f32, i, load_as_double(src, t.dtype, i));
      cast_elements += n;
    }
    return f;
  };
  if (fallback) {
    for (auto& t : ins)
      if (t.dtype != DType::f32) {
        if (t.strides.rank() != 0 && !(t.strides == Strides(t.shape)))
          throw_user_error("kernel {}: the f32 fallback needs dense tensors", kernel);
        t = to_f32(t, true);
      }
    for (auto& t : outs)
      if (t.dtype != DType::f32) t = to_f32(t, false);
  }

  gcapi::HabanaKernelParams_t p;
  std::snprintf(p.nodeName, sizeof p.nodeName, "%s", run_name.c_str());
  p.NodeParams = params;
  p.NodeParamsSize = static_cast<unsigned>(params_size);
  p.deviceId = device_id;
  p.maxAvailableTpc = m.cores;
  p.inputTensorNr = static_cast<unsigned>(ins.size());
  p.outputTensorNr = static_cast<unsigned>(outs.size());
  for (std::size_t i = 0; i < ins.size(); ++i) p.inputTensors[i] = gc_tensor(ins[i]);
  for (std::size_t i = 0; i < outs.size(); ++i) p.outputTensors[i] = gc_tensor(outs[i]);
  gcapi::HabanaKernelInstantiation_t inst;
  const gcapi::GlueCodeReturn_t rc = lib->HabanaKernel(&p, &inst);
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
    for (const auto& map : a.mapping)
      given = given || map.dim != 0 || map.start_a != 0 || map.end_a != 0 || map.start_b != 0 ||
              map.end_b != 0;
    if (!given) return;
    for (int d = 0; d < tensor_rank(t); ++d) {
      const auto& map = a.mapping[d];
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

  KernelLaunch l;
  l.name = run_name;
  l.kernel = inst.kernel.kernel;
  l.inputs = ins;
  l.outputs = outs;
  l.index_space = inst.indexSpaceGeometry;
  l.input_pads.assign(inst.inputPadValues, inst.inputPadValues + ins.size());
  const unsigned dwords = std::min<unsigned>(inst.kernel.paramsNr, gcapi::MAX_SCALAR_PARAMS_DWORDS);
  if (inst.kernel.paramsNr > gcapi::MAX_SCALAR_PARAMS_DWORDS || dwords > m.max_scalar_dwords)
    throw DeviceFault(where, fmt::format("the glue passes {} scalar parameter dwords but a TPC "
                                         "program takes at most {} (tpc.max_scalar_param_dwords, "
                                         "spec 000 §2.7.1); pass fewer scalars",
                                         inst.kernel.paramsNr, m.max_scalar_dwords));
  l.scalar_params.assign(inst.kernel.scalarParams, inst.kernel.scalarParams + dwords);
  l.special_functions = inst.flags.specialFunctionsUsed != 0;
  l.printf_used = inst.flags.printfUsed != 0;

  if (!fallback) return im.run(l);

  // Casts around the f32 kernel, charged as memory-bound passes over the cores.
  auto cast_record = [&](const std::string& name, std::uint64_t elements, std::size_t in_bytes,
                         std::size_t out_bytes) {
    profile::KernelRecord r;
    r.name = name;
    const std::uint64_t vectors = (elements + 63) / 64;
    const std::uint64_t per_core =
        (vectors + m.cores - 1) / m.cores * 2 * m.global_cycles_per_vector;
    r.cycles_per_core.assign(m.cores, per_core);
    r.cycles = per_core;
    r.bytes_read = elements * in_bytes;
    r.bytes_written = elements * out_bytes;
    r.metrics["fallback_for"] = 1;
    im.device.record_kernel(std::move(r));
  };
  const std::string from = std::string(kernel.substr(kernel.rfind('_') + 1));
  const std::size_t narrow = dtype_size(parse_dtype(from).value_or(DType::f32));
  if (cast_elements > 0) cast_record(fmt::format("cast_{}_to_f32", from), cast_elements, narrow, 4);
  im.run(l);
  const std::size_t kernel_index = im.device.profile().kernels.size() - 1;
  std::uint64_t out_elements = 0;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].dtype == DType::f32) continue;
    const auto n = static_cast<std::size_t>(outputs[i].shape.element_count());
    const std::byte* src = im.device.data(outs[i].buffer);
    std::byte* dst = im.device.data(outputs[i].buffer) + outputs[i].byte_offset;
    for (std::size_t k = 0; k < n; ++k)
      store_from_double(dst, outputs[i].dtype, k, load_as_double(src, DType::f32, k));
    out_elements += n;
  }
  if (out_elements > 0) cast_record(fmt::format("cast_f32_to_{}", from), out_elements, 4, narrow);
  return im.device.profile().kernels[kernel_index];
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
