// The compiler's Backend interface and the registry backends are found in by name.
// A backend lowers IR nodes to its target's kernels; nodes it does not support fall back to the
// reference backend with a logged reason. Backends are registered explicitly (IREE-style), with
// a one-line description that `tessera targets` prints.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/compiler/ir.h"
#include "tessera/compiler/plan.h"

namespace tessera::compiler {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  // The machine preset the backend runs on when the user names none ("gaudi").
  virtual std::string default_device() const = 0;
  // Device preset targets ("tpc", ...) this backend can run on; empty means any.
  virtual std::vector<std::string> device_targets() const { return {}; }
  // Why this backend cannot run `node`; nullopt when it can.
  virtual std::optional<std::string> unsupported_reason(const Node& node,
                                                        const Graph& graph) const = 0;
  // The layout the backend wants for a node's activations (default: ONNX's order). The backend
  // declares it (name, permutation, Conv weights order); the layout pass applies it to nodes
  // whose first input and output have the permutation's rank.
  virtual Layout preferred_layout(const Node& node, const Graph& graph) const;
  // Rewrites the graph for this backend after the passes and before lowering, e.g. weights
  // into the layout its kernels read (recorded in node attributes so every backend, and the
  // reference fallback, reads them right). Runs once per compile, never on a loaded model.
  virtual void prepare(Graph& graph) const;
  // The type the backend computes f32 tensors in (f32 unless it says otherwise; Ascend's
  // compiler computes in f16 with f32 accumulation). Conformance and `run --check` hold its
  // float outputs to the looser of that type's tolerance and the output dtype's. i8 says the
  // backend runs int8 graphs of the quantisation pass (compiler/quantize.h; bm, epu): the
  // conformance suite then calibrates and quantises each case (ConformanceOptions).
  virtual DType compute_precision() const { return DType::f32; }
  // Whether the backend's kernels take i64, u64 and f64 (reference only). Without them, compile
  // narrows 64-bit values to 32 bits where they provably fit (compiler/narrow.h) and the nodes
  // reading or writing any other fall back to reference with the reason.
  virtual bool has_64bit_types() const { return false; }
  // The highest rank of a value the backend's kernels take; nodes with a value of a higher rank
  // fall back to reference with that reason, before unsupported_reason is asked.
  virtual int max_rank() const { return kDeviceMaxRank; }
  // Lowers one supported node to a step of the plan.
  virtual std::unique_ptr<Step> lower(const Graph& graph, int node_index) const = 0;
  // The target's own profile report of the plan's latest run in this process (for ipu, the
  // Poplar profile summary of spec 001 §8.2.3); nullopt when the target has none.
  virtual std::optional<std::string> profile_summary(const Plan& plan) const;
};

struct BackendInfo {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Backend>()> create;
};

// The process-wide registry. Registering a name twice replaces the entry.
void register_backend(BackendInfo info);
// Registers the backend `create` makes under the name and description it gives (what a target's
// register_<t>_backend calls).
void register_backend(std::function<std::unique_ptr<Backend>()> create);
std::vector<BackendInfo> registered_backends();  // sorted by name
// UserError listing the registered names when `name` is not one of them.
std::unique_ptr<Backend> create_backend(const std::string& name);
// Registers the backends of the compiler library itself (`reference`). The compiler names no
// preset: `reference_device` is the reference backend's default device (targets::
// register_all_backends passes the first target's); empty: a device must be named.
void register_builtin_backends(const std::string& reference_device = {});

// The reference backend: every node on the host through ops/reference, on `default_device`
// (any preset works: it uses only the device's global memory and host link).
std::unique_ptr<Backend> make_reference_backend(const std::string& default_device = {});
// A step running one node on the host through ops/reference: what fallbacks lower to.
std::unique_ptr<Step> make_reference_step(int node_index);

}  // namespace tessera::compiler
