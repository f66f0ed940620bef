// BMKernel system API (spec 002, "BMKernel Library" / "System API"): contexts, command buffers,
// lmem tensor allocation, the serial / parallel / stream ordering of commands, and submit,
// which runs the recorded commands on the simulated chip: results computed natively, each
// command timed on the TPU or GDMA pipe of a sim::Timeline with costs from the preset, and the
// buffer recorded on the device's Profile as one kernel.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "guard.h"
#include "state.h"
#include "tessera/core/error.h"
#include "tessera/sim/cost_model.h"
#include "tessera/sim/race.h"
#include "tessera/sim/timeline.h"

namespace tessera::bm {
namespace {

std::mutex registry_mutex;
std::map<std::uint64_t, bmk1880_context*>& registry() {
  static std::map<std::uint64_t, bmk1880_context*> r;
  return r;
}
std::uint64_t next_id = 1;

// Every command handle a context gave out, to recognise handles from earlier buffers.
std::unordered_set<const Command*>& handles() {
  static std::unordered_set<const Command*> h;
  return h;
}


std::uint32_t align_up(std::uint32_t v, std::uint32_t a) { return (v + a - 1) / a * a; }
std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return a / b + (a % b != 0); }

shape_t storage_shape(const ChipParams& p, shape_t s) {
  if (s.dim != 2) return s;
  // A matrix (row, col) is held as the tensor (row, ceil(col / eu_num), 1, eu_num), as
  // Bitmain's bmk1880v2_matrix_lmem_default_shape lays it out (cvikernel, bm1880v2).
  shape_t t = shape_t4(static_cast<int>(s.row), static_cast<int>(ceil_div(s.col, p.eu_num)), 1,
                       static_cast<int>(p.eu_num));
  return t;
}

void check_shape(shape_t s, const char* op) {
  if (s.dim != 2 && s.dim != 4)
    throw_user_error("{}: shape dim {} is neither 4 (a tensor, shape_t4) nor 2 (a matrix, "
                     "shape_t2); make the shape with shape_t4 or shape_t2",
                     op, s.dim);
  const bool zero = s.dim == 2 ? (s.row == 0 || s.col == 0)
                               : (s.n == 0 || s.c == 0 || s.h == 0 || s.w == 0);
  if (zero)
    throw_user_error("{}: shape ({}, {}, {}, {}) has a zero dimension", op, s.n, s.c, s.h, s.w);
  const u32 largest = s.dim == 2 ? std::max(s.row, s.col) : std::max({s.n, s.c, s.h, s.w});
  if (largest > static_cast<u32>(std::numeric_limits<int>::max()))
    throw_user_error("{}: shape ({}, {}, {}, {}) has a dimension above 2^31 - 1 (a negative int "
                     "given to shape_t4 or shape_t2?); dimensions are positive",
                     op, s.n, s.c, s.h, s.w);
}

void check_fmt(fmt_t fmt, const char* op) {
  if (fmt != FMT_I8 && fmt != FMT_U8)
    throw_user_error("{}: fmt {} is not 8-bit; BM1880 lmem tensors hold FMT_I8 or FMT_U8 "
                     "(a 16-bit tensor is a high and a low 8-bit tensor)",
                     op, fmt);
}

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<std::uint64_t>::max() : r;
}

// The default channel and batch strides in 64 bits: in 32 bits the strides of a shape far too
// large for lmem wrap around to ones that fit.
struct WideStrides {
  std::uint64_t c = 0, n = 0;
};
WideStrides default_stride_wide(const ChipParams& p, shape_t s, bool aligned) {
  const shape_t t = storage_shape(p, s);
  const std::uint64_t hw = std::uint64_t{t.h} * t.w;  // < 2^64: both are 32-bit
  WideStrides st;
  st.c = aligned ? (hw + p.eu_num - 1) / p.eu_num * p.eu_num : hw;
  st.n = saturating_mul(st.c, ceil_div(t.c, p.npu_num));
  return st;
}

std::uint64_t lane_bytes(const ChipParams& p, shape_t s, bool aligned) {
  return saturating_mul(default_stride_wide(p, s, aligned).n, s.dim == 2 ? s.row : s.n);
}

tensor_lmem* make_tensor(bmk1880_context* k, laddr_t la, shape_t s, fmt_t fmt, bool aligned,
                         tl_type type) {
  auto* t = new tensor_lmem{};
  t->type = type;
  t->operand.laddr = la;
  t->shape = s;
  t->stride = nullptr;
  t->aligned = aligned;
  t->fmt = fmt;
  t->bank_id = la / k->params.lmem_bank_size;
  k->tensors.insert(t);
  return t;
}

tensor_lmem* stack_alloc(bmk1880_context* k, std::uint32_t bank_lo, std::uint32_t bank_hi,
                         const char* op, shape_t s, fmt_t fmt, u32 ctrls, int bank) {
  check_shape(s, op);
  check_fmt(fmt, op);
  if (ctrls & ~static_cast<u32>(CTRL_AL))
    throw_user_error("{}: ctrls 0x{:x}: only CTRL_NULL or CTRL_AL apply to an lmem allocation", op,
                     ctrls);
  const bool aligned = (ctrls & CTRL_AL) != 0;
  const std::uint64_t bytes = lane_bytes(k->params, s, aligned);
  // Every allocation starts on an EU boundary (the BM1880 backend of Bitmain's BMNet places
  // the next tensor at ALIGN(la + size, eu_num), BM1880BackendContext::get_high_8bit_addr).
  const std::uint32_t la = std::max(align_up(k->top, k->params.eu_num), bank_lo);
  if (la >= bank_hi || bytes > bank_hi - la) {
    const std::string where = bank >= 0 ? fmt::format("bank {} [0x{:x}, 0x{:x})", bank, bank_lo,
                                                      bank_hi)
                                        : fmt::format("lmem ({})", sim::format_bytes(bank_hi));
    throw DeviceFault(
        fmt::format("npu0..npu{} lmem", k->params.npu_num - 1),
        fmt::format("{}: lmem overflow: a tensor of shape ({}, {}, {}, {}) needs {} per lane at "
                    "0x{:x}, past the end of {} (stack top 0x{:x}); free tensors, split the work "
                    "into smaller tiles or use unaligned strides",
                    op, s.n, s.c, s.h, s.w, sim::format_bytes(bytes), la, where, k->top));
  }
  tensor_lmem* t = make_tensor(k, la, s, fmt, aligned, TL_TYPE_TENSOR);
  k->frames.push_back({t, k->top});
  k->top = la + static_cast<std::uint32_t>(bytes);
  k->high_water = std::max(k->high_water, k->top);
  return t;
}

// bmk1880_tl_prealloc(_align): a tensor the caller places at `la`, checked against lmem now.
tensor_lmem* prealloc(void* ctx, laddr_t la, shape_t s, fmt_t fmt, bool aligned, const char* op) {
  return guard(op, static_cast<tensor_lmem*>(nullptr), [&] {
    bmk1880_context* k = kernel_of(ctx);
    check_shape(s, op);
    check_fmt(fmt, op);
    tensor_lmem* t = make_tensor(k, la, s, fmt, aligned, TL_TYPE_TENSOR_PREALLOC);
    try {
      capture(k, t, "tensor", op);
    } catch (...) {
      k->tensors.erase(t);
      delete t;
      throw;
    }
    return t;
  });
}

// Whether `target` is among the commands `from` waits for, directly or not (iterative: a serial
// buffer is one long chain).
bool reaches(const Command* from, const Command* target) {
  std::unordered_set<const Command*> seen;
  std::vector<const Command*> todo{from};
  while (!todo.empty()) {
    const Command* c = todo.back();
    todo.pop_back();
    if (c == target) return true;
    if (!seen.insert(c).second) continue;
    for (const Command* d : c->deps) todo.push_back(d);
  }
  return false;
}

std::string label(const Command* c) { return fmt::format("{} #{}", c->name, c->serial); }

void retire(bmk1880_context* k) {
  for (std::size_t i = k->first_current; i < k->commands.size(); ++i) {
    Command& c = k->commands[i];
    c.run = nullptr;
    c.deps.clear();
    c.payload.clear();
    c.touches.clear();
  }
  ++k->generation;
  k->first_current = k->commands.size();
  // Keep the shells of the last few thousand retired commands, so that a handle from a recent
  // buffer is still recognised as such; older ones go (a long-running program does not grow).
  constexpr std::size_t kKeepRetired = 4096;
  if (k->first_current > kKeepRetired) {
    std::lock_guard<std::mutex> lock(registry_mutex);
    while (k->first_current > kKeepRetired) {
      handles().erase(&k->commands.front());
      k->commands.pop_front();
      ++k->base_serial;
      --k->first_current;
    }
  }
  k->outstanding.clear();
  k->barrier.clear();
  k->last_of_engine.clear();
  k->stream_tail.clear();
  k->stream_count = 0;
  k->mode = bmk1880_context::Mode::serial;
  k->poisoned.clear();
}

}  // namespace

void destroy_kernel(bmk1880_context* k) {
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    registry().erase(k->id);
    for (const Command& c : k->commands) handles().erase(&c);
  }
  for (tensor_lmem* t : k->tensors) delete t;
  for (tensor_lmem* t : k->freed_order) delete t;
  if (k->runtime) k->runtime->kernel = nullptr;
  delete k;
}

bmk1880_context* new_kernel(const arch::MachineSpec& spec) {
  auto k = std::make_unique<bmk1880_context>();
  k->params = ChipParams::from(spec);
  k->spec = spec;
  std::lock_guard<std::mutex> lock(registry_mutex);
  k->id = next_id++;
  registry()[k->id] = k.get();
  return k.release();
}

bmk1880_context* kernel_of(void* ctx) {
  if (!ctx) throw_user_error("the BMKernel context is NULL; create it with bmk1880_register or "
                             "bmruntime_bmkernel_create");
  auto* k = static_cast<bmk1880_context*>(ctx);
  std::lock_guard<std::mutex> lock(registry_mutex);
  // Found by address, never by reading the context: a cleaned-up one is freed memory.
  const bool live = std::any_of(registry().begin(), registry().end(),
                                [&](const auto& entry) { return entry.second == k; });
  if (!live)
    throw_user_error("the BMKernel context is not live (cleaned up, or not a BMKernel context)");
  return k;
}

stride_t default_stride(const ChipParams& p, shape_t s, bool aligned) {
  // The default strides of the BMKernel 1880 Guide, section 2.4, as Bitmain's
  // bmk1880v2_tensor_lmem_default_stride computes them (cvikernel): w 1, h W, c H*W (rounded up
  // to eu_num when aligned), n c * ceil(C / npu_num).
  const shape_t t = storage_shape(p, s);
  const WideStrides wide = default_stride_wide(p, s, aligned);
  stride_t st{};
  st.w = 1;
  st.h = t.w;
  // Strides beyond 32 bits belong to shapes capture() refuses by their per-lane size.
  st.c = static_cast<std::uint32_t>(std::min<std::uint64_t>(wide.c, UINT32_MAX));
  st.n = static_cast<std::uint32_t>(std::min<std::uint64_t>(wide.n, UINT32_MAX));
  return st;
}

Tl capture(bmk1880_context* k, const tensor_lmem* t, const char* role, const char* op) {
  if (!t) throw_user_error("{}: {} is NULL", op, role);
  if (k->freed.count(t))
    throw_user_error("{}: {} was freed with bmk1880_tl_free; allocate it again before using it",
                     op, role);
  if (t->type == TL_TYPE_CONSTANT)
    throw_user_error("{}: {} is a constant, not a tensor in lmem", op, role);
  check_fmt(t->fmt, op);
  check_shape(t->shape, op);
  const ChipParams& p = k->params;
  Tl tl;
  tl.role = role;
  tl.la = t->operand.laddr;
  tl.fmt = t->fmt;
  tl.aligned = t->aligned;
  tl.matrix = t->shape.dim == 2;
  const shape_t s = storage_shape(p, t->shape);
  tl.n = s.n;
  tl.c = s.c;
  tl.h = s.h;
  tl.w = s.w;
  if (tl.matrix) {
    tl.rows = t->shape.row;
    tl.cols = t->shape.col;
  }
  const stride_t st = t->stride ? *t->stride : default_stride(p, t->shape, t->aligned);
  tl.sn = st.n;
  tl.sc = st.c;
  tl.sh = st.h;
  tl.sw = st.w;
  const std::uint32_t bank = tl.la / p.lmem_bank_size;
  // Each lane holds at most lmem_size data of a tensor; larger shapes (or strides that would
  // overflow the address arithmetic) cannot be in lmem.
  const std::uint64_t per_lane =
      std::uint64_t{tl.n} * ceil_div(tl.c, p.npu_num) * std::uint64_t{tl.h} * tl.w;
  const std::uint64_t limit = p.lmem_size;
  if (tl.n > limit || tl.h > limit || tl.w > limit || per_lane > limit || tl.sn > limit ||
      tl.sc > limit || tl.sh > limit || tl.sw > limit)
    throw DeviceFault(fmt::format("npu0 lmem bank {}", bank),
                      fmt::format("{}: lmem overflow: {} puts {} data on each lane (strides up to "
                                  "{}), more than the {} a lane holds; split it into tiles",
                                  op, tl.describe(), per_lane,
                                  std::max({tl.sn, tl.sc, tl.sh, tl.sw}),
                                  sim::format_bytes(p.lmem_size)));
  if (tl.aligned && tl.la % p.eu_num != 0)
    throw DeviceFault(fmt::format("npu0 lmem bank {}", bank),
                      fmt::format("{}: {} is aligned but starts at la 0x{:x}, not a multiple of "
                                  "eu_num {}; allocate it with bmk1880_tl_alloc(..., CTRL_AL) or "
                                  "place it on an EU boundary",
                                  op, tl.describe(), tl.la, p.eu_num));
  const std::uint64_t last = std::uint64_t{tl.la} + std::uint64_t{tl.n - 1} * tl.sn +
                             std::uint64_t{ceil_div(tl.c, p.npu_num) - 1} * tl.sc +
                             std::uint64_t{tl.h - 1} * tl.sh + std::uint64_t{tl.w - 1} * tl.sw;
  if (last >= p.lmem_size)
    throw DeviceFault(fmt::format("npu0 lmem bank {}", last / p.lmem_bank_size),
                      fmt::format("{}: lmem overflow: {} reaches lmem address 0x{:x}, past the "
                                  "{} of each NPU's lmem; place it lower or make it smaller",
                                  op, tl.describe(), last, sim::format_bytes(p.lmem_size)));
  // Outputs by their role; a GDMA load marks its tensor written itself (ops.cpp).
  static const std::set<std::string> outputs = {"res", "res_high", "res_low", "ofmap",
                                                "max", "min", "dst"};
  Touch touch;
  touch.lo = tl.la;
  touch.hi = static_cast<std::uint32_t>(last + 1);
  touch.lanes = std::min(tl.c, p.npu_num);
  touch.write = outputs.count(tl.role) != 0;
  touch.what = tl.describe();
  k->touches.push_back(std::move(touch));
  return tl;
}

Command* record(bmk1880_context* k, int engine, std::string name, Cost cost,
                std::function<void(Chip&)> run) {
  Command& c = k->commands.emplace_back();
  c.serial = k->base_serial + k->commands.size() - 1;
  c.generation = k->generation;
  c.engine = engine;
  c.name = std::move(name);
  c.cost = std::move(cost);
  c.run = std::move(run);
  c.touches = std::move(k->touches);
  k->touches.clear();
  using Mode = bmk1880_context::Mode;
  switch (k->mode) {
    case Mode::serial:
      c.deps = k->outstanding;
      k->outstanding = {&c};
      break;
    case Mode::parallel: {
      // Engines run without synchronising with each other; each engine is in order.
      c.deps = k->barrier;
      auto it = k->last_of_engine.find(engine);
      if (it != k->last_of_engine.end()) c.deps.push_back(it->second);
      k->last_of_engine[engine] = &c;
      break;
    }
    case Mode::streams: {
      Command*& tail = k->stream_tail[k->stream];
      c.deps = tail ? std::vector<Command*>{tail} : k->barrier;
      tail = &c;
      break;
    }
  }
  std::lock_guard<std::mutex> lock(registry_mutex);
  handles().insert(&c);
  return &c;
}

void submit(bmk1880_context* k, Chip& chip) {
  struct Retire {
    bmk1880_context* k;
    ~Retire() { retire(k); }
  } retire_after{k};
  if (!k->poisoned.empty())
    throw_user_error("the command buffer holds a command that failed when it was recorded, so it "
                     "is not run: {}",
                     k->poisoned);
  const ChipParams& cp = chip.params();
  if (cp.npu_num != k->params.npu_num || cp.eu_num != k->params.eu_num ||
      cp.lmem_size != k->params.lmem_size)
    throw_user_error("the command buffer was recorded for {} NPUs x {} EUs with {} of lmem, but "
                     "the device has {} x {} with {}; record it for this device's preset",
                     k->params.npu_num, k->params.eu_num, sim::format_bytes(k->params.lmem_size),
                     cp.npu_num, cp.eu_num, sim::format_bytes(cp.lmem_size));
  runtime::Device& device = chip.device();
  const sim::CostModel& cost = device.cost_model();
  const arch::MachineSpec& spec = device.spec();
  const double tpu_setup = cost.param("bm.tpu_op_setup_cycles", 0);
  const double gdma_setup = cost.param("bm.gdma_setup_cycles", 0);
  const std::size_t first = k->first_current, count = k->commands.size() - first;
  const std::uint64_t first_serial = k->base_serial + first;
  std::vector<std::uint64_t> cycles(count);
  for (std::size_t i = 0; i < count; ++i) {
    const Cost& c = k->commands[first + i].cost;
    cycles[i] = c.gdma ? cost.transfer_cycles(c.src_memory, c.dst_memory, c.bytes) +
                             static_cast<std::uint64_t>(gdma_setup)
                       : cost.op_cycles("tpu", c.lane_steps, 1.0) +
                             static_cast<std::uint64_t>(tpu_setup);
  }
  // The commands go to the engines' in-order queues in an order that respects every dependency
  // and, among the commands that are ready, takes the one that can start first (ties: the one
  // recorded first), so that independent streams interleave on the engines (list scheduling).
  std::vector<std::size_t> indegree(count, 0);
  std::vector<std::vector<std::size_t>> users(count);
  for (std::size_t i = 0; i < count; ++i)
    for (const Command* d : k->commands[first + i].deps) {
      ++indegree[i];
      users[d->serial - first_serial].push_back(i);
    }
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < count; ++i)
    if (indegree[i] == 0) ready.push_back(i);
  std::vector<std::uint64_t> est_end(count, 0);
  std::uint64_t engine_free[2] = {0, 0};
  auto lane = [&](std::size_t i) { return k->commands[first + i].engine == ENGINE_GDMA ? 1 : 0; };
  auto est_start = [&](std::size_t i) {
    std::uint64_t t = engine_free[lane(i)];
    for (const Command* d : k->commands[first + i].deps) t = std::max(t, est_end[d->serial - first_serial]);
    return t;
  };
  std::vector<std::size_t> order;
  order.reserve(count);
  while (!ready.empty()) {
    auto best = ready.begin();
    std::uint64_t best_start = est_start(*best);
    for (auto it = std::next(ready.begin()); it != ready.end(); ++it) {
      const std::uint64_t s = est_start(*it);
      if (s < best_start || (s == best_start && *it < *best)) {
        best = it;
        best_start = s;
      }
    }
    const std::size_t i = *best;
    ready.erase(best);
    est_end[i] = best_start + cycles[i];
    engine_free[lane(i)] = est_end[i];
    order.push_back(i);
    for (std::size_t u : users[i])
      if (--indegree[u] == 0) ready.push_back(u);
  }
  if (order.size() != count) {
    std::string stuck;
    for (std::size_t i = 0; i < count; ++i)
      if (indegree[i] != 0) stuck += (stuck.empty() ? "" : ", ") + label(&k->commands[first + i]);
    throw DeviceFault("bmk1880 cmdbuf", fmt::format("the dependencies form a cycle, so these "
                                                    "commands can never start: {}; remove a "
                                                    "bmk1880_add_dependency",
                                                    stuck));
  }

  sim::Timeline tl(spec.core_name, spec, &cost);
  tl.set_trace(device.trace_enabled());
  tl.set_track_order(true);
  const sim::PipeId tpu = tl.pipe("tpu"), gdma = tl.pipe("gdma");
  // Commands on different engines that touch the same lmem bytes, one writing, without a
  // dependency between them race: the chip would compute either order (parallel mode, streams).
  sim::RaceDetector races;
  races.set_remedy("order them with bmk1880_add_dependency, bmk1880_parallel_disable before the "
                   "reader, or by putting both in one stream");
  // The lanes' buffer names, formatted once per submit rather than per touch and lane.
  std::vector<std::string> lane_names;
  for (std::uint32_t npu = 0; npu < k->params.npu_num; ++npu)
    lane_names.push_back(fmt::format("npu{} lmem", npu));
  std::unordered_map<const Command*, sim::Event> done;
  std::uint64_t global_bytes = 0, bytes_read = 0, bytes_written = 0, gdma_commands = 0;
  double macs = 0;
  for (std::size_t i : order) {
    Command& c = k->commands[first + i];
    c.run(chip);
    std::vector<sim::Event> deps;
    deps.reserve(c.deps.size());
    for (const Command* d : c.deps) deps.push_back(done.at(d));
    if (c.cost.gdma) {
      ++gdma_commands;
      if (c.cost.src_memory == spec.global_memory) bytes_read += c.cost.bytes;
      if (c.cost.dst_memory == spec.global_memory) bytes_written += c.cost.bytes;
    }
    global_bytes += c.cost.gmem_bytes;
    macs += c.cost.macs;
    const sim::Event ev = tl.issue(c.engine == ENGINE_GDMA ? gdma : tpu, c.name, cycles[i], deps);
    done[&c] = ev;
    for (const Touch& t : c.touches) {
      const std::string what =
          fmt::format("{} {} {}", label(&c), t.write ? "writing" : "reading", t.what);
      for (std::uint32_t npu = 0; npu < t.lanes; ++npu)
        races.record(ev, lane_names.at(npu), t.lo, t.hi,
                     t.write ? sim::RaceDetector::Kind::write : sim::RaceDetector::Kind::read,
                     what);
    }
  }
  tl.finish();
  races.check(tl);
  profile::KernelRecord rec;
  rec.name = "bm:cmdbuf";
  rec.bytes_read = bytes_read;
  rec.bytes_written = bytes_written;
  const double end = static_cast<double>(std::max<std::uint64_t>(1, tl.end_cycle()));
  rec.metrics["commands"] = static_cast<double>(count);
  rec.metrics["gdma.commands"] = static_cast<double>(gdma_commands);
  rec.metrics["tpu.utilisation"] = static_cast<double>(tl.busy_cycles(tpu)) / end;
  rec.metrics["gdma.utilisation"] = static_cast<double>(tl.busy_cycles(gdma)) / end;
  rec.metrics["macs"] = macs;
  const double peak = cost.param("bm.int8_macs_per_cycle_per_npu", cp.eu_num) * cp.npu_num;
  rec.metrics["mac.utilisation"] = macs / (end * peak);
  device.note_memory_high_water(spec.core_name, "lmem tensors", k->high_water);
  std::uint64_t gb[1] = {global_bytes};
  device.record_kernel(std::move(rec), std::span<sim::Timeline>(&tl, 1),
                       std::span<const std::uint64_t>(gb, 1));
}

}  // namespace tessera::bm

using namespace tessera;
using namespace tessera::bm;

extern "C" {

bmk1880_chip_info_t bmk1880_chip_info(void) {
  return guard("bmk1880_chip_info", bmk1880_chip_info_t{}, [] {
    return ChipParams::from(default_spec()).info();
  });
}

bmk1880_context_t* bmk1880_register(bmk1880_info_t* info) {
  return guard("bmk1880_register", static_cast<bmk1880_context_t*>(nullptr),
               [&]() -> bmk1880_context_t* {
    if (!info) throw_user_error("bmk1880_register: info is NULL");
    if (info->chip_version != 1880)
      throw_user_error("bmk1880_register: chip_version is {}; this BMKernel is for the BM1880 "
                       "(chip_version 1880)",
                       info->chip_version);
    if (!info->cmdbuf || info->cmdbuf_size == 0)
      throw_user_error("bmk1880_register: cmdbuf is NULL or cmdbuf_size is 0; pass a buffer for "
                       "the generated commands");
    bmk1880_context* k = new_kernel(default_spec());
    k->cmdbuf = info->cmdbuf;
    k->cmdbuf_size = info->cmdbuf_size;
    return k;
  });
}

void bmk1880_cleanup(void* ctx) {
  guard_void("bmk1880_cleanup", [&] {
    bmk1880_context* k = kernel_of(ctx);
    if (k->runtime)
      throw_user_error("bmk1880_cleanup: this context belongs to a BM context; destroy it with "
                       "bmruntime_bmkernel_destroy");
    destroy_kernel(k);
  });
}

u8* bmk1880_acquire_cmdbuf(void* ctx, u32* size) {
  return guard("bmk1880_acquire_cmdbuf", static_cast<u8*>(nullptr), [&]() -> u8* {
    bmk1880_context* k = kernel_of(ctx);
    if (!size) throw_user_error("bmk1880_acquire_cmdbuf: size is NULL");
    if (!k->poisoned.empty())
      throw_user_error("bmk1880_acquire_cmdbuf: the command buffer holds a command that failed "
                       "when it was recorded: {}",
                       k->poisoned);
    const std::vector<std::uint8_t> bytes_v = encode_cmdbuf(k);
    const std::size_t bytes = bytes_v.size();
    std::uint8_t* buf = k->cmdbuf;
    if (buf) {
      if (bytes > k->cmdbuf_size)
        throw_user_error("bmk1880_acquire_cmdbuf: the commands take {} bytes, more than the "
                         "{}-byte cmdbuf given to bmk1880_register; register a larger cmdbuf",
                         bytes, k->cmdbuf_size);
    } else {
      k->own_cmdbuf.assign(std::max<std::size_t>(bytes, 1), 0);
      buf = k->own_cmdbuf.data();
    }
    std::memcpy(buf, bytes_v.data(), bytes);
    *size = static_cast<u32>(bytes);
    return buf;
  });
}

void bmk1880_reset(void* ctx) {
  guard_void("bmk1880_reset", [&] { retire(kernel_of(ctx)); });
}

void bmk1880_parallel_enable(void* ctx) {
  guard_void("bmk1880_parallel_enable", [&] {
    bmk1880_context* k = kernel_of(ctx);
    using Mode = bmk1880_context::Mode;
    if (k->mode == Mode::streams)
      throw_user_error("bmk1880_parallel_enable: streams are on (dependency-oriented style); "
                       "bmk1880_destroy_streams first");
    if (k->mode == Mode::parallel) return;
    k->barrier = k->outstanding;
    k->last_of_engine.clear();
    k->mode = Mode::parallel;
  });
}

void bmk1880_parallel_disable(void* ctx) {
  guard_void("bmk1880_parallel_disable", [&] {
    bmk1880_context* k = kernel_of(ctx);
    if (k->mode != bmk1880_context::Mode::parallel) return;
    std::vector<Command*> after = k->barrier;
    for (auto& [engine, c] : k->last_of_engine) after.push_back(c);
    k->outstanding = after;
    k->mode = bmk1880_context::Mode::serial;
  });
}

void bmk1880_create_streams(void* ctx, int nr_streams) {
  guard_void("bmk1880_create_streams", [&] {
    bmk1880_context* k = kernel_of(ctx);
    using Mode = bmk1880_context::Mode;
    if (nr_streams < 1)
      throw_user_error("bmk1880_create_streams: nr_streams is {}; create at least 1", nr_streams);
    if (k->mode != Mode::serial)
      throw_user_error("bmk1880_create_streams: {} is on; {} first",
                       k->mode == Mode::streams ? "streams are" : "parallel mode",
                       k->mode == Mode::streams ? "bmk1880_destroy_streams"
                                                : "bmk1880_parallel_disable");
    k->barrier = k->outstanding;
    k->stream_tail.clear();
    k->stream_count = nr_streams;
    k->stream = 0;
    k->mode = Mode::streams;
  });
}

void bmk1880_destroy_streams(void* ctx) {
  guard_void("bmk1880_destroy_streams", [&] {
    bmk1880_context* k = kernel_of(ctx);
    if (k->mode != bmk1880_context::Mode::streams)
      throw_user_error("bmk1880_destroy_streams: no streams were created");
    std::vector<Command*> after;
    for (const auto& [index, tail] : k->stream_tail)
      if (tail) after.push_back(tail);
    k->outstanding = after.empty() ? k->barrier : after;
    k->stream_tail.clear();
    k->mode = bmk1880_context::Mode::serial;
  });
}

void bmk1880_set_stream(void* ctx, int i) {
  guard_void("bmk1880_set_stream", [&] {
    bmk1880_context* k = kernel_of(ctx);
    if (k->mode != bmk1880_context::Mode::streams)
      throw_user_error("bmk1880_set_stream: no streams were created; call "
                       "bmk1880_create_streams first");
    if (i < 0 || i >= k->stream_count)
      throw_user_error("bmk1880_set_stream: stream {} does not exist (streams 0..{})", i,
                       k->stream_count - 1);
    k->stream = i;
  });
}

void bmk1880_add_dependency(void* ctx, void* before, void* after) {
  guard_void("bmk1880_add_dependency", [&] {
    bmk1880_context* k = kernel_of(ctx);
    if (!before || !after)
      throw_user_error("bmk1880_add_dependency: {} is NULL; pass handles returned by "
                       "computation or GDMA calls",
                       !before ? "before" : "after");
    auto* b = static_cast<Command*>(before);
    auto* a = static_cast<Command*>(after);
    {
      std::lock_guard<std::mutex> lock(registry_mutex);
      if (!handles().count(b) || !handles().count(a))
        throw_user_error("bmk1880_add_dependency: a handle is not a command of any BMKernel "
                         "context");
    }
    for (Command* c : {b, a}) {
      const bool mine = c->serial >= k->base_serial &&
                        c->serial - k->base_serial < k->commands.size() &&
                        &k->commands[c->serial - k->base_serial] == c;
      if (!mine || c->generation != k->generation) {
        const std::string what = fmt::format(
            "bmk1880_add_dependency: {} ({}) is a command of {}; a dependency can only order "
            "commands of the current command buffer",
            c == b ? "before" : "after", label(c),
            mine ? "an earlier command buffer (already submitted or reset)"
                 : "another BMKernel context");
        if (k->poisoned.empty()) k->poisoned = what;
        throw DeviceFault("bmk1880 cmdbuf", what);
      }
    }
    if (a == b)
      throw DeviceFault("bmk1880 cmdbuf", fmt::format("bmk1880_add_dependency: {} cannot run "
                                                      "before itself (a cycle of one command)",
                                                      label(a)));
    if (reaches(b, a)) {
      const std::string what = fmt::format(
          "bmk1880_add_dependency: {} already waits for {}; making it wait the other way round "
          "would be a cycle, and neither could ever start",
          label(b), label(a));
      if (k->poisoned.empty()) k->poisoned = what;
      throw DeviceFault("bmk1880 cmdbuf", what);
    }
    a->deps.push_back(b);
  });
}

tensor_lmem* bmk1880_tl_prealloc(void* ctx, laddr_t la, shape_t s, fmt_t fmt) {
  return prealloc(ctx, la, s, fmt, false, "bmk1880_tl_prealloc");
}

tensor_lmem* bmk1880_tl_prealloc_align(void* ctx, laddr_t la, shape_t s, fmt_t fmt) {
  return prealloc(ctx, la, s, fmt, true, "bmk1880_tl_prealloc_align");
}

tensor_lmem* bmk1880_tl_alloc(void* ctx, shape_t s, fmt_t fmt, u32 ctrls) {
  return guard("bmk1880_tl_alloc", static_cast<tensor_lmem*>(nullptr), [&] {
    bmk1880_context* k = kernel_of(ctx);
    return stack_alloc(k, 0, k->params.lmem_size, "bmk1880_tl_alloc", s, fmt, ctrls, -1);
  });
}

tensor_lmem* bmk1880_tl_alloc_bank(void* ctx, u32 bank_id, shape_t s, fmt_t fmt, u32 ctrls) {
  return guard("bmk1880_tl_alloc_bank", static_cast<tensor_lmem*>(nullptr), [&] {
    bmk1880_context* k = kernel_of(ctx);
    if (bank_id >= k->params.lmem_banks)
      throw_user_error("bmk1880_tl_alloc_bank: bank {} does not exist (lmem has banks 0..{})",
                       bank_id, k->params.lmem_banks - 1);
    const std::uint32_t lo = bank_id * k->params.lmem_bank_size;
    return stack_alloc(k, lo, lo + k->params.lmem_bank_size, "bmk1880_tl_alloc_bank", s, fmt,
                       ctrls, static_cast<int>(bank_id));
  });
}

void bmk1880_tl_free(void* ctx, tensor_lmem* tlp) {
  guard_void("bmk1880_tl_free", [&] {
    bmk1880_context* k = kernel_of(ctx);
    if (!tlp || !k->tensors.count(tlp))
      throw_user_error("bmk1880_tl_free: the tensor is {}", tlp ? "not one this context allocated "
                                                                  "(or already freed)"
                                                                : "NULL");
    auto it = std::find_if(k->frames.begin(), k->frames.end(),
                           [&](const auto& f) { return f.tensor == tlp; });
    if (it != k->frames.end()) {
      if (std::next(it) != k->frames.end()) {
        const tensor_lmem* last = k->frames.back().tensor;
        throw DeviceFault(
            fmt::format("npu0..npu{} lmem bank {}", k->params.npu_num - 1, tlp->bank_id),
            fmt::format("bmk1880_tl_free: the tensor at la 0x{:x} (shape ({}, {}, {}, {})) is not "
                        "the last one allocated; the one at la 0x{:x} (shape ({}, {}, {}, {})) "
                        "must be freed first (tl_alloc is a stack: last allocated, first freed)",
                        tlp->operand.laddr, tlp->shape.n, tlp->shape.c, tlp->shape.h,
                        tlp->shape.w, last->operand.laddr, last->shape.n, last->shape.c,
                        last->shape.h, last->shape.w));
      }
      k->top = it->previous_top;
      k->frames.pop_back();
    }
    k->tensors.erase(tlp);
    k->freed.insert(tlp);
    k->freed_order.push_back(tlp);
    if (k->freed_order.size() > bmk1880_context::kFreedKept) {
      k->freed.erase(k->freed_order.front());
      delete k->freed_order.front();
      k->freed_order.pop_front();
    }
  });
}

int bmk1880_tl_shape_to_size(void* ctx, shape_t s, bool aligned, fmt_t fmt) {
  return guard("bmk1880_tl_shape_to_size", -1, [&] {
    bmk1880_context* k = kernel_of(ctx);
    check_shape(s, "bmk1880_tl_shape_to_size");
    check_fmt(fmt, "bmk1880_tl_shape_to_size");
    const std::uint64_t bytes = lane_bytes(k->params, s, aligned);
    if (bytes > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
      throw_user_error("bmk1880_tl_shape_to_size: shape ({}, {}, {}, {}) needs {} bytes per lane, "
                       "which does not fit an int (a lane's lmem holds {}); split it into tiles",
                       s.n, s.c, s.h, s.w, bytes, sim::format_bytes(k->params.lmem_size));
    return static_cast<int>(bytes);
  });
}

void bmk1880_tl_shape_to_nchw(const void* ctx, shape_t s, int* n, int* c, int* h, int* w) {
  guard_void("bmk1880_tl_shape_to_nchw", [&] {
    bmk1880_context* k = kernel_of(const_cast<void*>(ctx));
    check_shape(s, "bmk1880_tl_shape_to_nchw");
    if (!n || !c || !h || !w)
      throw_user_error("bmk1880_tl_shape_to_nchw: an output pointer (n, c, h or w) is NULL");
    const shape_t t = storage_shape(k->params, s);
    *n = static_cast<int>(t.n);
    *c = static_cast<int>(t.c);
    *h = static_cast<int>(t.h);
    *w = static_cast<int>(t.w);
  });
}

int bmk1880_tl_size(const void* ctx, tensor_lmem* tlp) {
  return guard("bmk1880_tl_size", -1, [&] {
    bmk1880_context* k = kernel_of(const_cast<void*>(ctx));
    if (!tlp) throw_user_error("bmk1880_tl_size: the tensor is NULL");
    if (!tlp->stride) return static_cast<int>(lane_bytes(k->params, tlp->shape, tlp->aligned));
    return static_cast<int>(tlp->stride->n * storage_shape(k->params, tlp->shape).n);
  });
}

size_t bmk1880_tg_shape_to_size(shape_t s, fmt_t fmt) {
  return guard("bmk1880_tg_shape_to_size", static_cast<size_t>(0), [&] {
    check_shape(s, "bmk1880_tg_shape_to_size");
    std::size_t bytes = 0;
    switch (fmt) {
      case FMT_I8:
      case FMT_U8:
        bytes = 1;
        break;
      case FMT_I16:
      case FMT_U16:
      case FMT_F16:
        bytes = 2;
        break;
      case FMT_I32:
      case FMT_F32:
        bytes = 4;
        break;
      default:
        throw_user_error("bmk1880_tg_shape_to_size: fmt {} is not an 8-, 16- or 32-bit format",
                         fmt);
    }
    const std::size_t elements =
        s.dim == 2 ? std::size_t{s.row} * s.col : std::size_t{s.n} * s.c * s.h * s.w;
    return elements * bytes;
  });
}

bmerr_t bmruntime_bmkernel_create(bmctx_t ctx, bmkernel_handle_t** p_bk_ctx) {
  return guard_status("bmruntime_bmkernel_create", [&] {
    if (!live_context(ctx, "bmruntime_bmkernel_create")->device)
      throw_user_error(
          "bmruntime_bmkernel_create: the BM context is not bound to a device; "
          "call bm_init first");
    if (!p_bk_ctx) throw_user_error("bmruntime_bmkernel_create: p_bk_ctx is NULL");
    if (ctx->kernel)
      throw_user_error("bmruntime_bmkernel_create: this BM context already has a BMKernel; "
                       "bmruntime_bmkernel_destroy it first");
    bmk1880_context* k = new_kernel(ctx->device->chip->device().spec());
    k->runtime = ctx;
    ctx->kernel = k;
    *p_bk_ctx = k;
  });
}

void bmruntime_bmkernel_submit(bmctx_t ctx) {
  guard_void("bmruntime_bmkernel_submit", [&] {
    if (!live_context(ctx, "bmruntime_bmkernel_submit")->kernel)
      throw_user_error("bmruntime_bmkernel_submit: the BM context has no BMKernel; call "
                       "bmruntime_bmkernel_create");
    if (!ctx->device) throw_user_error("bmruntime_bmkernel_submit: the context has no device");
    submit(ctx->kernel, *ctx->device->chip);
  });
}

void bmruntime_bmkernel_destroy(bmctx_t ctx) {
  guard_void("bmruntime_bmkernel_destroy", [&] {
    if (!ctx || !live_context(ctx, "bmruntime_bmkernel_destroy")->kernel) return;
    bmk1880_context* k = ctx->kernel;
    ctx->kernel = nullptr;
    k->runtime = nullptr;
    destroy_kernel(k);
  });
}

bmerr_t bm_send_cmdbuf(bmctx_t ctx, uint8_t* cmdbuf, size_t sz, uint16_t* seq_no) {
  return guard_status("bm_send_cmdbuf", [&] {
    if (!live_context(ctx, "bm_send_cmdbuf")->device)
      throw_user_error("bm_send_cmdbuf: the BM context is not bound to a device");
    if (!cmdbuf && sz) throw_user_error("bm_send_cmdbuf: cmdbuf is NULL");
    run_cmdbuf(*ctx->device->chip, cmdbuf, sz, 0, 0);
    if (seq_no) *seq_no = 0;
  });
}

}  // extern "C"
