#include "tessera/targets/template/api/machine.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "tessera/core/error.h"
#include "tessera/sim/cost_model.h"
#include "tessera/sim/memory.h"
#include "tessera/sim/timeline.h"

namespace tessera::tmpl {
namespace {

constexpr std::size_t kF32 = 4;

float apply(Op op, float x, float y) {
  switch (op) {
    case Op::add:
      return x + y;
    case Op::sub:
      return x - y;
    case Op::mul:
      return x * y;
    case Op::div:
      return x / y;
    case Op::max:
      return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y);
    case Op::min:
      return std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y);
    case Op::relu:
      return x > 0.0f ? x : (std::isnan(x) ? x : 0.0f);
    case Op::neg:
      return -x;
    case Op::abs:
      return std::fabs(x);
  }
  return x;
}

void check_span(const runtime::Device& device, const DeviceSpan& s, const char* what,
                std::int64_t elements) {
  if (!s.buffer) throw_user_error("template elementwise: {} has no device buffer", what);
  if (s.elements != elements)
    throw_user_error(
        "template elementwise: {} has {} elements, the output {}; pass spans of "
        "equal length (this target does not broadcast)",
        what, s.elements, elements);
  const std::size_t bytes = static_cast<std::size_t>(s.elements) * kF32;
  if (s.offset + bytes > s.buffer.bytes)
    throw_user_error(
        "template elementwise: {} spans bytes [{}, {}) of a {}-byte buffer; keep it "
        "inside the buffer",
        what, s.offset, s.offset + bytes, s.buffer.bytes);
  (void)device;
}

}  // namespace

const char* op_name(Op op) {
  switch (op) {
    case Op::add:
      return "add";
    case Op::sub:
      return "sub";
    case Op::mul:
      return "mul";
    case Op::div:
      return "div";
    case Op::max:
      return "max";
    case Op::min:
      return "min";
    case Op::relu:
      return "relu";
    case Op::neg:
      return "neg";
    case Op::abs:
      return "abs";
  }
  return "?";
}

bool is_binary(Op op) {
  return op == Op::add || op == Op::sub || op == Op::mul || op == Op::div || op == Op::max ||
         op == Op::min;
}

Machine::Machine(runtime::Device& device) : device_(device) {
  const arch::MachineSpec& spec = device.spec();
  if (spec.target != "template")
    throw_user_error(
        "the template target runs on presets of the template family; '{}' is a {} "
        "machine (use --device template)",
        spec.name, spec.target);
  if (!spec.find_memory("lm"))
    throw_user_error("preset '{}' has no core memory 'lm', which the template target tiles into",
                     spec.name);
  const double tile_bytes = spec.param("template.tile_bytes").value;
  alu_lanes_ = spec.param("template.alu_lanes").value;
  if (tile_bytes < static_cast<double>(kF32) || alu_lanes_ < 1)
    throw_user_error(
        "preset '{}': params template.tile_bytes ({}) and template.alu_lanes ({}) "
        "must be at least 4 and 1",
        spec.name, tile_bytes, alu_lanes_);
  tile_elements_ = static_cast<std::int64_t>(tile_bytes) / static_cast<std::int64_t>(kF32);
}

profile::KernelRecord Machine::elementwise(Op op, const DeviceSpan& a, const DeviceSpan* b,
                                           const DeviceSpan& out) {
  const bool binary = is_binary(op);
  if (binary != (b != nullptr))
    throw_user_error("template elementwise: {} takes {} input(s), {} given", op_name(op),
                     binary ? 2 : 1, b ? 2 : 1);
  const std::int64_t n = out.elements;
  check_span(device_, a, "input a", n);
  if (b) check_span(device_, *b, "input b", n);
  check_span(device_, out, "output", n);

  const arch::MachineSpec& spec = device_.spec();
  const sim::CostModel& cost = device_.cost_model();
  const int cores = static_cast<int>(spec.core_count.as_int());
  const auto* pa = reinterpret_cast<const float*>(device_.data(a.buffer) + a.offset);
  const float* pb =
      b ? reinterpret_cast<const float*>(device_.data(b->buffer) + b->offset) : nullptr;
  auto* po = reinterpret_cast<float*>(device_.data(out.buffer) + out.offset);
  const std::int64_t tiles = (n + tile_elements_ - 1) / tile_elements_;
  const std::size_t inputs = binary ? 2 : 1;
  const std::string global = spec.global_memory;

  std::vector<sim::Timeline> timelines;
  timelines.reserve(static_cast<std::size_t>(cores));
  std::vector<std::uint64_t> global_bytes(static_cast<std::size_t>(cores), 0);
  for (int c = 0; c < cores; ++c) {
    const std::string core = spec.core_name + std::to_string(c);
    sim::Timeline& tl = timelines.emplace_back(core, spec, &cost);
    const sim::PipeId load = tl.pipe("load"), alu = tl.pipe("alu"), store = tl.pipe("store");
    // Two sets of tiles (inputs and output) in local memory, so tile k+1 loads while tile k
    // computes; the allocator faults when they do not fit.
    const sim::Memory lm(spec.memory("lm"), core);
    sim::FirstFitAllocator lm_alloc(lm);
    const auto tile_bytes = static_cast<std::uint64_t>(tile_elements_) * kF32;
    for (int set = 0; set < 2; ++set)
      for (std::size_t i = 0; i <= inputs; ++i) lm_alloc.allocate(tile_bytes);
    device_.note_memory_high_water(core, "tiles", lm_alloc.stats().high_water);
    std::vector<sim::Event> alu_done(2), store_done(2);
    std::uint64_t k = 0;
    for (std::int64_t t = c; t < tiles; t += cores, ++k) {
      const std::int64_t first = t * tile_elements_;
      const std::int64_t count = std::min(tile_elements_, n - first);
      for (std::int64_t i = first; i < first + count; ++i)
        po[i] = apply(op, pa[i], pb ? pb[i] : 0.0f);
      const auto in_bytes = static_cast<std::uint64_t>(count) * kF32 * inputs;
      const auto out_bytes = static_cast<std::uint64_t>(count) * kF32;
      const std::size_t slot = k % 2;
      // The load may reuse a buffer set once the alu has read it (tile k-2).
      const sim::Event loaded =
          alu_done[slot] ? tl.issue(load, "load", cost.transfer_cycles(global, "lm", in_bytes),
                                    {alu_done[slot]})
                         : tl.issue(load, "load", cost.transfer_cycles(global, "lm", in_bytes));
      const std::uint64_t alu_cycles =
          cost.op_cycles("alu", static_cast<double>(count), alu_lanes_);
      alu_done[slot] = store_done[slot]
                           ? tl.issue(alu, op_name(op), alu_cycles, {loaded, store_done[slot]})
                           : tl.issue(alu, op_name(op), alu_cycles, {loaded});
      store_done[slot] =
          tl.issue(store, "store", cost.transfer_cycles("lm", global, out_bytes), {alu_done[slot]});
      tl.add_bytes_moved(global, in_bytes + out_bytes);
      global_bytes[static_cast<std::size_t>(c)] += in_bytes + out_bytes;
    }
  }
  profile::KernelRecord record;
  record.name = fmt::format("template:{}_f32", op_name(op));
  record.bytes_read = static_cast<std::uint64_t>(n) * kF32 * inputs;
  record.bytes_written = static_cast<std::uint64_t>(n) * kF32;
  record.metrics["elements"] = static_cast<double>(n);
  record.metrics["tiles"] = static_cast<double>(tiles);
  record.engine = spec.core_name;
  // Each timeline is timed as if DRAM were its core's alone; the device's global channel then
  // shares the bandwidth between the cores and any overlapping work.
  return device_.record_kernel(std::move(record), timelines, global_bytes);
}

}  // namespace tessera::tmpl
