// A Plan: a compiled graph as an ordered list of steps (one per node, lowered by a backend or
// falling back to the reference backend), with a memory plan that places every activation in
// one arena of the device's global memory by liveness. PlanRunner loads a Plan onto a
// runtime::Device (weights uploaded once) and runs inferences on it.
#pragma once

#include <any>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/compiler/ir.h"
#include "tessera/compiler/passes.h"
#include "tessera/runtime/device.h"

namespace tessera::compiler {

class ExecContext;

// One unit of work of a plan: usually one IR node.
class Step {
 public:
  virtual ~Step() = default;
  virtual void run(ExecContext& context) = 0;
  // A step that only renames its input's bytes (Reshape, Flatten, ...): its output shares the
  // input's memory and run() does nothing.
  virtual bool is_view() const { return false; }
};

// A step that runs one node of the plan's graph, as most steps do.
class NodeStep : public Step {
 public:
  explicit NodeStep(int index) : node_(index) {}
  int node_index() const { return node_; }
  const Node& node(const Graph& graph) const {
    return graph.nodes[static_cast<std::size_t>(node_)];
  }

 private:
  int node_;
};

struct StepInfo {
  int node = -1;          // index in Plan::graph.nodes
  std::string kernel;     // what runs it: "reference:Conv", "tpc:conv_f32", ...
  bool fallback = false;  // ran on reference because the backend does not support it
  std::string reason;     // why, for fallbacks
};

// Placement of activations in the arena. offsets[v] is -1 for values not in the arena
// (constants, which live in the weights buffer, and unused values).
struct MemoryPlan {
  std::vector<std::int64_t> offsets;
  std::vector<std::int64_t> weight_offsets;  // per value; -1 for non-constants
  std::uint64_t arena_bytes = 0;             // peak: the arena's size
  std::uint64_t unplanned_bytes = 0;         // sum of all activations, without reuse
  std::uint64_t weights_bytes = 0;
};

struct Plan {
  Graph graph;          // after the passes
  std::string backend;  // backend name
  std::string device;   // preset the plan was made for
  std::uint64_t alignment = 1;
  std::vector<std::unique_ptr<Step>> steps;
  std::vector<StepInfo> info;
  MemoryPlan memory;
  PassReport passes;
  // The .tsm file the plan was loaded from (empty for a freshly compiled one): a step whose
  // result disagrees with the plan is then the file's fault, not Tessera's.
  std::string model_file;
  int fallback_count() const;
};

class Backend;

struct CompileOptions {
  std::string device;  // preset; empty: the backend's default
  PassOptions passes;
};

// Runs the passes for `backend`, lowers every node (fallbacks logged) and plans memory.
Plan compile(Graph graph, const Backend& backend, const CompileOptions& options = {});
// Lowers an already optimised graph (a model file's) without running the passes again.
Plan lower_graph(Graph graph, const Backend& backend, const std::string& device);

// What steps see while running.
class ExecContext {
 public:
  ExecContext(runtime::Device& device, const Plan& plan, runtime::Buffer arena,
              runtime::Buffer weights);
  runtime::Device& device() { return device_; }
  const Plan& plan() const { return plan_; }
  const Graph& graph() const { return plan_.graph; }
  // Device bytes of a value: activations in the arena, constants in the weights buffer. These
  // three first store a host result not yet there (see write).
  std::byte* data(ValueId value);
  std::uint64_t device_address(ValueId value) const;
  // The buffer holding a value and the value's byte offset in it.
  struct Placement {
    runtime::Buffer buffer;
    std::size_t offset = 0;
  };
  Placement placement(ValueId value) const;
  // A device kernel wrote the value: drop any host copy.
  void invalidate(ValueId value);
  // Per-run state a backend's steps share (e.g. its target runtime), created on first use.
  std::any& backend_state() { return backend_state_; }
  // The value as a host tensor: a constant, a cached host result, or a copy of device memory.
  const Tensor& host(ValueId value);
  // Keeps a host-computed result as the value; its device memory receives the bytes when
  // anything reads them there (data, placement, device_address, a view of it, the run's outputs).
  void write(ValueId value, Tensor tensor);
  // The value's cached host result, handed over to the step at `step_index` to compute into,
  // when nothing reads it after that step (not another input of it, a view, a graph output);
  // otherwise nullopt.
  std::optional<Tensor> take(ValueId value, int step_index);
  // Called by the runner after each step: drops host copies of values past their last use.
  void release_after(int step_index);
  // The arena itself; values' bytes through data() or placement(), which keep them current.
  const runtime::Buffer& arena() const { return arena_; }

 private:
  // Copies a host result not yet in device memory there (the value's, or the one it views).
  void store(ValueId value) const;

  runtime::Device& device_;
  const Plan& plan_;
  runtime::Buffer arena_;
  runtime::Buffer weights_;
  std::vector<ValueId> root_;  // per value, the value whose bytes it views (itself if none)
  std::vector<std::optional<Tensor>> cache_;
  mutable std::vector<bool> unwritten_;  // cached result newer than its device bytes
  std::vector<bool> shared_;             // bytes that views of the value also name
  std::vector<int> last_use_;
  std::any backend_state_;
};

struct RunOptions {
  bool trace = false;
};

struct StepTiming {
  std::string name;  // node name
  std::string op;
  std::string kernel;
  bool fallback = false;
  std::uint64_t cycles = 0;   // modeled device cycles of the step's work
  double host_seconds = 0.0;  // host wall time of the step
};

struct RunResult {
  std::map<std::string, Tensor> outputs;  // by graph output name
  profile::Profile profile;               // the device's profile of this inference
  std::vector<StepTiming> steps;
  double host_seconds = 0.0;
};

// Loads a plan onto a device: allocates the arena and weights, uploads the weights once.
class PlanRunner {
 public:
  PlanRunner(const Plan& plan, runtime::Device& device);
  ~PlanRunner();
  PlanRunner(const PlanRunner&) = delete;
  PlanRunner& operator=(const PlanRunner&) = delete;
  // Inputs by graph input name; a missing or mis-shaped input is a UserError naming it and
  // the expected dtype and shape. `progress(done, total)` is called after each step if given.
  RunResult run(const std::map<std::string, Tensor>& inputs, const RunOptions& options = {},
                const std::function<void(std::size_t, std::size_t)>& progress = {});

 private:
  const Plan& plan_;
  runtime::Device& device_;
  runtime::Buffer arena_;
  runtime::Buffer weights_;
  // By node: the earlier nodes it waits for on the device (found once: they depend on the plan).
  std::vector<std::vector<std::size_t>> waits_;
};

// Seeded random inputs for every graph input: floats uniform in [-1, 1), integers in [0, 8),
// bools alternating; the same seed gives the same tensors.
std::map<std::string, Tensor> random_inputs(const Graph& graph, std::uint64_t seed = 0);

}  // namespace tessera::compiler
