#include "tessera/compiler/plan.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <set>

#include <fmt/format.h>

#include "tessera/arch/machine_spec.h"
#include "tessera/compiler/backend.h"
#include "tessera/compiler/narrow.h"
#include "tessera/core/error.h"
#include "tessera/core/limits.h"
#include "tessera/core/log.h"

namespace tessera::compiler {
namespace {

bool is_view_op(const Node& node) {
  const std::string& op = node.op;
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
      op == "Identity")
    return node.activation.kind == Activation::Kind::none;
  if (op == "Dropout") return node.outputs.size() == 1 || node.outputs[1] == kNoValue;
  return false;
}

// Output shares the input's bytes; nothing to run.
class ViewStep final : public Step {
 public:
  void run(ExecContext&) override {}
  bool is_view() const override { return true; }
};

// Per value, the value whose bytes it shares through view steps (itself when none).
std::vector<ValueId> view_roots(const Plan& plan) {
  std::vector<ValueId> root(plan.graph.values.size());
  std::iota(root.begin(), root.end(), 0);
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    if (!plan.steps[s]->is_view()) continue;
    const Node& n = plan.graph.nodes[static_cast<std::size_t>(plan.info[s].node)];
    root[static_cast<std::size_t>(n.outputs[0])] = root[static_cast<std::size_t>(n.inputs[0])];
  }
  return root;
}

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) {
  return a <= 1 ? v : (v + a - 1) / a * a;
}

// Places activations by liveness: greedy by size, each block at the lowest offset free over
// its lifetime (deterministic: ties break by value id).
MemoryPlan plan_memory(const Plan& plan) {
  const Graph& g = plan.graph;
  const std::size_t nv = g.values.size();
  const int end = static_cast<int>(g.nodes.size());
  MemoryPlan mp;
  mp.offsets.assign(nv, -1);
  mp.weight_offsets.assign(nv, -1);

  const std::vector<ValueId> root = view_roots(plan);
  std::vector<int> first(nv, end + 1), last(nv, -2);
  std::vector<bool> used(nv, false);
  auto touch = [&](ValueId v, int step) {
    const auto r = static_cast<std::size_t>(root[static_cast<std::size_t>(v)]);
    used[r] = true;
    first[r] = std::min(first[r], step);
    last[r] = std::max(last[r], step);
  };
  for (ValueId in : g.inputs) touch(in, -1);
  for (int s = 0; s < end; ++s) {
    const Node& n = g.nodes[static_cast<std::size_t>(s)];
    for (ValueId v : n.inputs)
      if (v != kNoValue && !g.value(v).is_constant()) touch(v, s);
    for (ValueId v : n.outputs)
      if (v != kNoValue) touch(v, s);
  }
  for (ValueId out : g.outputs)
    if (!g.value(out).is_constant()) touch(out, end);

  // Weights: every constant a node reads, packed in order.
  std::uint64_t woff = 0;
  std::vector<bool> wused(nv, false);
  for (const Node& n : g.nodes)
    for (ValueId v : n.inputs)
      if (v != kNoValue && g.value(v).is_constant()) wused[static_cast<std::size_t>(v)] = true;
  for (std::size_t v = 0; v < nv; ++v) {
    if (!wused[v]) continue;
    mp.weight_offsets[v] = static_cast<std::int64_t>(woff);
    woff = align_up(woff + g.values[v].bytes(), plan.alignment);
  }
  mp.weights_bytes = woff;

  struct Block {
    ValueId v;
    std::uint64_t size;
    int first, last;
    std::uint64_t offset = 0;
  };
  std::vector<Block> blocks;
  for (std::size_t v = 0; v < nv; ++v) {
    if (!used[v] || root[v] != static_cast<ValueId>(v) || g.values[v].is_constant()) continue;
    std::uint64_t size = 0;
    for (std::size_t a = 0; a < nv; ++a)
      if (root[a] == static_cast<ValueId>(v))
        size = std::max<std::uint64_t>(size, g.values[a].bytes());
    size = align_up(std::max<std::uint64_t>(size, 1), plan.alignment);
    blocks.push_back({static_cast<ValueId>(v), size, first[v], last[v]});
    mp.unplanned_bytes += size;
  }
  std::vector<std::size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return blocks[a].size != blocks[b].size ? blocks[a].size > blocks[b].size
                                            : blocks[a].v < blocks[b].v;
  });
  std::vector<std::size_t> placed;
  for (std::size_t i : order) {
    Block& b = blocks[i];
    std::vector<std::pair<std::uint64_t, std::uint64_t>> busy;
    for (std::size_t j : placed) {
      const Block& o = blocks[j];
      if (o.first <= b.last && b.first <= o.last) busy.push_back({o.offset, o.offset + o.size});
    }
    std::sort(busy.begin(), busy.end());
    std::uint64_t offset = 0;
    for (const auto& [lo, hi] : busy) {
      if (offset + b.size <= lo) break;
      offset = std::max(offset, hi);
    }
    b.offset = offset;
    mp.arena_bytes = std::max(mp.arena_bytes, offset + b.size);
    placed.push_back(i);
  }
  for (const Block& b : blocks)
    mp.offsets[static_cast<std::size_t>(b.v)] = static_cast<std::int64_t>(b.offset);
  for (std::size_t v = 0; v < nv; ++v)
    if (used[root[v]] && root[v] != static_cast<ValueId>(v) && !g.values[v].is_constant())
      mp.offsets[v] = mp.offsets[static_cast<std::size_t>(root[v])];
  return mp;
}

}  // namespace

int Plan::fallback_count() const {
  return static_cast<int>(
      std::count_if(info.begin(), info.end(), [](const StepInfo& s) { return s.fallback; }));
}

Plan lower_graph(Graph graph, const Backend& backend, const std::string& device) {
  Plan plan;
  plan.backend = backend.name();
  plan.device = device.empty() ? backend.default_device() : device;
  if (plan.device.empty())
    throw_user_error(
        "target '{}' has no default device; name a machine preset with --device (`tessera arch "
        "list` lists them)",
        backend.name());
  const arch::MachineSpec spec = arch::load_machine(plan.device);
  const auto targets = backend.device_targets();
  if (!targets.empty() && std::find(targets.begin(), targets.end(), spec.target) == targets.end())
    throw_user_error("target '{}' cannot run on device '{}' (a {} machine); pick a {} preset",
                     backend.name(), plan.device, spec.target, fmt::join(targets, " or "));
  plan.alignment =
      static_cast<std::uint64_t>(std::max<std::int64_t>(1, spec.global().alignment_bytes.as_int()));
  plan.graph = std::move(graph);
  const Graph& g = plan.graph;
  const Narrowing narrowing = backend.has_64bit_types() ? Narrowing{} : analyse_64bit(g);
  for (std::size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    StepInfo info;
    info.node = static_cast<int>(n);
    const bool input_constant =
        !node.inputs.empty() && node.inputs[0] != kNoValue && g.value(node.inputs[0]).is_constant();
    // A constant with no elements gets no device buffer for a kernel to read (a conv with no
    // output channels has empty weights); reference computes such a node.
    const auto empty_constant = [&](ValueId v) {
      return v != kNoValue && g.value(v).is_constant() && g.value(v).shape.element_count() == 0;
    };
    std::optional<std::string> reason;
    if (!backend.has_64bit_types()) reason = wide_value_reason(g, node, narrowing);
    if (!reason && std::any_of(node.inputs.begin(), node.inputs.end(), empty_constant))
      reason = "a constant input of the node has no elements, so it has no device buffer";
    for (const auto& list : {node.inputs, node.outputs})
      for (ValueId v : list)
        if (!reason && v != kNoValue && g.value(v).shape.rank() > backend.max_rank())
          reason = fmt::format("value '{}' has rank {}, above the {} the target's kernels take",
                               g.value(v).name, g.value(v).shape.rank(), backend.max_rank());
    if (is_view_op(node) && !input_constant) {
      plan.steps.push_back(std::make_unique<ViewStep>());
      info.kernel = "view";
    } else if (reason || (reason = backend.unsupported_reason(node, g))) {
      plan.steps.push_back(make_reference_step(static_cast<int>(n)));
      info.kernel = "reference:" + node.op;
      info.fallback = backend.name() != "reference";
      info.reason = *reason;
      if (info.fallback)
        log(LogLevel::info, "compiler", "{}: {} falls back to the reference backend: {}",
            backend.name(), node.describe(), *reason);
    } else {
      plan.steps.push_back(backend.lower(g, static_cast<int>(n)));
      info.kernel =
          backend.name() == "reference" ? "reference:" + node.op : backend.name() + ":" + node.op;
    }
    plan.info.push_back(std::move(info));
  }
  plan.memory = plan_memory(plan);
  // Refused here, before any allocation, rather than failing (or swapping) part-way through.
  const std::uint64_t global = static_cast<std::uint64_t>(spec.global().capacity_bytes.value);
  const std::uint64_t planned = plan.memory.arena_bytes + plan.memory.weights_bytes;
  if (planned > global)
    throw_user_error(
        "{} needs {} B of device memory (activations {} B + weights {} B), more than the {} B of "
        "'{}' on device '{}'; use a smaller model or input, or a preset with more memory",
        g.source.empty() ? "the model" : g.source, planned, plan.memory.arena_bytes,
        plan.memory.weights_bytes, global, spec.global().name, plan.device);
  log(LogLevel::info, "compiler",
      "plan for {} on {}: {} steps, {} fallbacks, arena {} B (unplanned {} B), weights {} B",
      plan.backend, plan.device, plan.steps.size(), plan.fallback_count(), plan.memory.arena_bytes,
      plan.memory.unplanned_bytes, plan.memory.weights_bytes);
  return plan;
}

Plan compile(Graph graph, const Backend& backend, const CompileOptions& options) {
  PassReport report = run_passes(graph, backend, options.passes);
  if (!backend.has_64bit_types()) narrow_64bit_values(graph);
  backend.prepare(graph);
  graph.reindex();
  Plan plan = lower_graph(std::move(graph), backend, options.device);
  plan.passes = std::move(report);
  return plan;
}

// ---- ExecContext ----

ExecContext::ExecContext(runtime::Device& device, const Plan& plan, runtime::Buffer arena,
                         runtime::Buffer weights)
    : device_(device), plan_(plan), arena_(arena), weights_(weights), root_(view_roots(plan)) {
  const Graph& g = plan.graph;
  cache_.resize(g.values.size());
  unwritten_.assign(g.values.size(), false);
  shared_.assign(g.values.size(), false);
  for (std::size_t v = 0; v < root_.size(); ++v)
    if (root_[v] != static_cast<ValueId>(v)) shared_[static_cast<std::size_t>(root_[v])] = true;
  last_use_.assign(g.values.size(), -1);
  for (std::size_t s = 0; s < g.nodes.size(); ++s)
    for (ValueId v : g.nodes[s].inputs)
      if (v != kNoValue) last_use_[static_cast<std::size_t>(v)] = static_cast<int>(s);
  for (ValueId v : g.outputs)
    last_use_[static_cast<std::size_t>(v)] = static_cast<int>(g.nodes.size());
}

void ExecContext::store(ValueId v) const {
  const auto r = static_cast<std::size_t>(root_.at(static_cast<std::size_t>(v)));
  if (!unwritten_[r]) return;
  unwritten_[r] = false;
  const Tensor& t = *cache_[r];
  if (t.bytes() > 0)
    std::memcpy(device_.data(arena_) + plan_.memory.offsets[r], t.raw_data(), t.bytes());
}

std::byte* ExecContext::data(ValueId v) {
  store(v);
  const auto i = static_cast<std::size_t>(v);
  if (plan_.memory.weight_offsets.at(i) >= 0)
    return device_.data(weights_) + plan_.memory.weight_offsets[i];
  const std::int64_t off = plan_.memory.offsets.at(i);
  TESSERA_CHECK(off >= 0, "value '{}' has no device memory", graph().value(v).name);
  return device_.data(arena_) + off;
}

ExecContext::Placement ExecContext::placement(ValueId v) const {
  store(v);
  const auto i = static_cast<std::size_t>(v);
  if (plan_.memory.weight_offsets.at(i) >= 0)
    return {weights_, static_cast<std::size_t>(plan_.memory.weight_offsets[i])};
  const std::int64_t off = plan_.memory.offsets.at(i);
  TESSERA_CHECK(off >= 0, "value '{}' has no device memory", graph().value(v).name);
  return {arena_, static_cast<std::size_t>(off)};
}

void ExecContext::invalidate(ValueId v) {
  cache_[static_cast<std::size_t>(v)].reset();
  unwritten_[static_cast<std::size_t>(v)] = false;
}

std::uint64_t ExecContext::device_address(ValueId v) const {
  store(v);
  const auto i = static_cast<std::size_t>(v);
  if (plan_.memory.weight_offsets.at(i) >= 0)
    return weights_.device_address + static_cast<std::uint64_t>(plan_.memory.weight_offsets[i]);
  const std::int64_t off = plan_.memory.offsets.at(i);
  TESSERA_CHECK(off >= 0, "value '{}' has no device memory", graph().value(v).name);
  return arena_.device_address + static_cast<std::uint64_t>(off);
}

const Tensor& ExecContext::host(ValueId v) {
  const Value& value = graph().value(v);
  if (value.constant) return *value.constant;
  auto& slot = cache_[static_cast<std::size_t>(v)];
  if (!slot) {
    const std::byte* p = data(v);
    slot =
        Tensor::from_bytes(value.dtype, value.shape, std::span<const std::byte>(p, value.bytes()));
  }
  return *slot;
}

void ExecContext::write(ValueId v, Tensor tensor) {
  const Value& value = graph().value(v);
  if (tensor.dtype() != value.dtype) tensor = tensor.astype(value.dtype);
  if (!(tensor.shape() == value.shape)) {
    if (!plan_.model_file.empty())
      throw_user_error(
          "{}: value '{}' computes to shape {}, but the model file declares {}; the file is "
          "corrupt or was edited, recompile it with `tessera compile`",
          plan_.model_file, value.name, tensor.shape().to_string(), value.shape.to_string());
    // Ops whose output shape follows input data (Range, ConstantOfShape, Tile, TopK, OneHot,
    // Compress...) were planned with the shapes the model declares or the bound inputs give;
    // data that disagrees is the caller's.
    throw_user_error(
        "value '{}': the step computing it produced shape {} where the plan has {}; an input "
        "that sets a shape (a size, count, repeats or range operand) holds data other than the "
        "model was compiled for: bind it with --input NAME=FILE",
        value.name, tensor.shape().to_string(), value.shape.to_string());
  }
  const auto i = static_cast<std::size_t>(v);
  TESSERA_CHECK(root_[i] == v && plan_.memory.offsets.at(i) >= 0,
                "value '{}' is written by a step but has no device memory of its own", value.name);
  cache_[i] = std::move(tensor);
  // Device memory gets the bytes only when something reads them there (store()): a host result
  // that only host steps read never leaves the host.
  unwritten_[i] = true;
}

std::optional<Tensor> ExecContext::take(ValueId v, int step) {
  const auto i = static_cast<std::size_t>(v);
  if (v == kNoValue || last_use_[i] != step || !cache_[i] || shared_[i] || root_[i] != v ||
      graph().value(v).is_constant())
    return std::nullopt;
  const Node& n = graph().nodes[static_cast<std::size_t>(step)];
  if (std::count(n.inputs.begin(), n.inputs.end(), v) != 1) return std::nullopt;
  std::optional<Tensor> t = std::move(cache_[i]);
  cache_[i].reset();
  unwritten_[i] = false;
  return t;
}

void ExecContext::release_after(int step) {
  const Node& n = graph().nodes[static_cast<std::size_t>(step)];
  for (ValueId v : n.inputs)
    if (v != kNoValue && last_use_[static_cast<std::size_t>(v)] == step) {
      // Views of the value read its bytes from device memory after this.
      if (shared_[static_cast<std::size_t>(v)]) store(v);
      cache_[static_cast<std::size_t>(v)].reset();
      unwritten_[static_cast<std::size_t>(v)] = false;
    }
  // A view step's output shares memory the cache does not know about: drop stale copies.
  for (ValueId v : n.outputs)
    if (v != kNoValue && last_use_[static_cast<std::size_t>(v)] < 0)
      cache_[static_cast<std::size_t>(v)].reset();
}

// ---- PlanRunner ----

namespace {

// Which earlier steps each step must wait for on the device: the writers of what it reads
// (RAW), and the readers and writers of arena bytes it overwrites (WAR, WAW), found by byte
// range so that views and liveness reuse are both covered. Indexed by node.
class DeviceHazards {
 public:
  DeviceHazards(const Graph& g, const MemoryPlan& memory) : before_(g.nodes.size()) {
    struct Range {
      std::int64_t begin, end;
    };
    auto range = [&](ValueId v) -> std::optional<Range> {
      const auto i = static_cast<std::size_t>(v);
      if (v == kNoValue || i >= memory.offsets.size() || memory.offsets[i] < 0) return {};
      const auto bytes = static_cast<std::int64_t>(g.values[i].bytes());
      return Range{memory.offsets[i], memory.offsets[i] + std::max<std::int64_t>(bytes, 1)};
    };
    auto overlap = [](const Range& a, const Range& b) {
      return a.begin < b.end && b.begin < a.end;
    };
    // Accesses so far, one per (step, range).
    struct Access {
      std::size_t step;
      Range range;
      bool write;
    };
    std::vector<Access> accesses;
    for (std::size_t s = 0; s < g.nodes.size(); ++s) {
      std::set<std::size_t> deps;
      const Node& n = g.nodes[s];
      for (ValueId v : n.inputs)
        if (auto r = range(v))
          for (const Access& a : accesses)
            if (a.write && overlap(a.range, *r)) deps.insert(a.step);
      for (ValueId v : n.outputs)
        if (auto r = range(v))
          for (const Access& a : accesses)
            if (overlap(a.range, *r)) deps.insert(a.step);
      before_[s].assign(deps.begin(), deps.end());
      for (ValueId v : n.inputs)
        if (auto r = range(v)) accesses.push_back({s, *r, false});
      for (ValueId v : n.outputs)
        if (auto r = range(v)) accesses.push_back({s, *r, true});
    }
  }
  std::vector<std::vector<std::size_t>> release() && { return std::move(before_); }

 private:
  std::vector<std::vector<std::size_t>> before_;
};

}  // namespace

PlanRunner::PlanRunner(const Plan& plan, runtime::Device& device)
    : plan_(plan), device_(device), waits_(DeviceHazards(plan.graph, plan.memory).release()) {
  if (device.spec().name != plan.device)
    log(LogLevel::info, "compiler", "plan made for '{}' runs on device '{}'", plan.device,
        device.spec().name);
  // Device memory is backed by host memory as it is touched, and the host keeps a second copy:
  // the graph's constants beside the weights buffer, cached host tensors beside the arena.
  // The host limit holds for both before anything allocates.
  check_host_memory(2 * (plan.memory.arena_bytes + plan.memory.weights_bytes),
                    fmt::format("the plan for '{}' (activations and weights)",
                                plan.graph.source.empty() ? plan.graph.name : plan.graph.source));
  if (plan.memory.arena_bytes > 0) arena_ = device.allocate(plan.memory.arena_bytes, "activations");
  if (plan.memory.weights_bytes > 0) {
    weights_ = device.allocate(plan.memory.weights_bytes, "weights");
    const Graph& g = plan.graph;
    for (std::size_t v = 0; v < g.values.size(); ++v) {
      const std::int64_t off = plan.memory.weight_offsets[v];
      if (off < 0 || g.values[v].bytes() == 0) continue;
      device.copy_to_device(weights_, g.values[v].constant->raw_data(), g.values[v].bytes(),
                            static_cast<std::size_t>(off));
    }
  }
}

PlanRunner::~PlanRunner() {
  try {
    if (arena_) device_.free(arena_);
    if (weights_) device_.free(weights_);
  } catch (...) {
    // Freeing at teardown must not throw out of a destructor.
  }
}

RunResult PlanRunner::run(const std::map<std::string, Tensor>& inputs, const RunOptions& options,
                          const std::function<void(std::size_t, std::size_t)>& progress) {
  const Graph& g = plan_.graph;
  for (const auto& entry : inputs) {
    const std::string& name = entry.first;  // a plain reference: clang 14 cannot capture bindings
    if (!std::any_of(g.inputs.begin(), g.inputs.end(),
                     [&](ValueId v) { return g.value(v).name == name; }))
      throw_user_error("model input '{}' does not exist; the model's inputs are: {}", name,
                       fmt::join(
                           [&] {
                             std::vector<std::string> names;
                             for (ValueId v : g.inputs) names.push_back(g.value(v).name);
                             return names;
                           }(),
                           ", "));
  }
  device_.reset_profile();
  device_.set_trace_enabled(options.trace);
  ExecContext context(device_, plan_, arena_, weights_);
  const auto start = std::chrono::steady_clock::now();
  for (ValueId v : g.inputs) {
    const Value& value = g.value(v);
    auto it = inputs.find(value.name);
    if (it == inputs.end())
      throw_user_error("model input '{}' ({} {}) was not given; pass --input {}=FILE.npy",
                       value.name, dtype_name(value.dtype), value.shape.to_string(), value.name);
    const Tensor& given = it->second;
    if (!(given.shape() == value.shape))
      throw_user_error(
          "model input '{}' has shape {} (Tessera order, fastest first) but the model "
          "expects {}; check the file's dimensions",
          value.name, given.shape().to_string(), value.shape.to_string());
    Tensor converted;
    if (given.dtype() != value.dtype) converted = given.astype(value.dtype);
    const Tensor& t = given.dtype() == value.dtype ? given : converted;
    if (t.bytes() > 0)
      device_.copy_to_device(
          arena_, t.raw_data(), t.bytes(),
          static_cast<std::size_t>(plan_.memory.offsets[static_cast<std::size_t>(v)]));
  }
  RunResult result;
  result.steps.reserve(plan_.steps.size());
  // Steps run on the device in dependency order, not one after another: each waits for the
  // steps that wrote its inputs and, because the arena reuses memory by liveness, for every
  // earlier reader and writer of the bytes it overwrites. Independent steps on different
  // engines (TPC and MME) overlap.
  std::vector<sim::Event> done(g.nodes.size());  // by node
  for (std::size_t s = 0; s < plan_.steps.size(); ++s) {
    const auto node_index = static_cast<std::size_t>(plan_.info[s].node);
    const Node& node = g.nodes[node_index];
    std::vector<sim::Event> after;
    for (std::size_t d : waits_[node_index])
      if (done[d]) after.push_back(done[d]);
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t k0 = device_.profile().kernels.size();
    device_.begin_scope(after);
    try {
      plan_.steps[s]->run(context);
    } catch (...) {
      (void)device_.end_scope();
      throw;
    }
    done[node_index] = device_.end_scope();
    std::uint64_t cycles = 0;
    const auto& kernels = device_.profile().kernels;
    for (std::size_t k = k0; k < kernels.size(); ++k) cycles += kernels[k].cycles;
    const auto t1 = std::chrono::steady_clock::now();
    context.release_after(static_cast<int>(s));
    if (plan_.steps[s]->is_view()) continue;
    result.steps.push_back({node.name, node.op, plan_.info[s].kernel, plan_.info[s].fallback,
                            cycles, std::chrono::duration<double>(t1 - t0).count()});
    if (progress) progress(s + 1, plan_.steps.size());
  }
  for (ValueId v : g.outputs) {
    const Value& value = g.value(v);
    // A narrowed output is returned in its ONNX type (exact: it provably fits).
    const DType returned = value.narrowed_from.value_or(value.dtype);
    if (value.constant) {
      result.outputs[value.name] = value.constant->astype(returned);
      continue;
    }
    Tensor t(value.dtype, value.shape);
    const ExecContext::Placement place = context.placement(v);
    if (t.bytes() > 0) device_.copy_to_host(t.raw_data(), place.buffer, t.bytes(), place.offset);
    result.outputs[value.name] = returned == t.dtype() ? std::move(t) : t.astype(returned);
  }
  device_.synchronize();
  device_.note_memory_high_water("device", "activations", plan_.memory.arena_bytes);
  device_.note_memory_high_water("device", "weights", plan_.memory.weights_bytes);
  result.host_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.profile = device_.take_profile();  // moved: a copy costs an allocation per metric
  return result;
}

std::map<std::string, Tensor> random_inputs(const Graph& graph, std::uint64_t seed) {
  std::map<std::string, Tensor> inputs;
  std::mt19937_64 rng(seed);
  for (ValueId v : graph.inputs) {
    const Value& value = graph.value(v);
    const auto n = static_cast<std::size_t>(value.shape.element_count());
    std::vector<double> data(n);
    if (is_floating(value.dtype)) {
      std::uniform_real_distribution<double> dist(-1.0, 1.0);
      for (auto& x : data) x = dist(rng);
    } else if (value.dtype == DType::boolean) {
      for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<double>(i % 2);
    } else {
      std::uniform_int_distribution<int> dist(0, 7);
      for (auto& x : data) x = dist(rng);
    }
    inputs[value.name] = Tensor::from_doubles(value.dtype, value.shape, data);
  }
  return inputs;
}

}  // namespace tessera::compiler
