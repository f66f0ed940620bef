#include "tessera/compiler/backend.h"

#include <algorithm>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "tessera/compiler/onnx_import.h"
#include "tessera/compiler/quantize.h"
#include "tessera/compiler/reference_exec.h"
#include "tessera/core/error.h"
#include "tessera/ops/host_conv.h"

namespace tessera::compiler {
namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<BackendInfo>& registry() {
  static std::vector<BackendInfo> r;
  return r;
}

// Runs one node on the host through ops/reference.
class ReferenceStep final : public NodeStep {
 public:
  using NodeStep::NodeStep;
  void run(ExecContext& context) override {
    const Node& n = node(context.graph());
    std::vector<const Tensor*> ins;
    ins.reserve(n.inputs.size());
    // A value a device holds narrowed is computed on in its ONNX type (an i64 sum of two
    // narrowed values may leave int32).
    std::vector<Tensor> widened;
    widened.reserve(n.inputs.size());
    for (ValueId v : n.inputs) {
      if (v == kNoValue) {
        ins.push_back(nullptr);
      } else if (const auto& wide = context.graph().value(v).narrowed_from) {
        widened.push_back(context.host(v).astype(*wide));
        ins.push_back(&widened.back());
      } else {
        ins.push_back(&context.host(v));
      }
    }
    // An input that dies here is computed into where the op allows (no new tensor, no copy).
    std::optional<Tensor> own;
    if (!n.inputs.empty() && !n.outputs.empty() && n.outputs[0] != kNoValue &&
        n.inputs[0] != kNoValue && !context.graph().value(n.inputs[0]).narrowed_from &&
        (own = context.take(n.inputs[0], node_index()))) {
      ins[0] = &*own;
      if (run_reference_in_place(n, *own, ins)) {
        context.write(n.outputs[0], std::move(*own));
        return;
      }
    }
    // A plan's constant weights stay the same from run to run: oneDNN's reorder of them is kept.
    const bool constant_weights = n.op == "Conv" && n.inputs.size() > 1 &&
                                  n.inputs[1] != kNoValue &&
                                  context.graph().value(n.inputs[1]).is_constant();
    auto outs = run_reference(n, ins, context.graph().opset,
                              constant_weights ? &conv_weights_ : nullptr);
    for (std::size_t o = 0; o < n.outputs.size(); ++o)
      if (n.outputs[o] != kNoValue) context.write(n.outputs[o], std::move(outs[o]));
  }

 private:
  ops::HostConvWeights conv_weights_;
};

class ReferenceBackend final : public Backend {
 public:
  explicit ReferenceBackend(std::string default_device)
      : default_device_(std::move(default_device)) {}
  std::string name() const override { return "reference"; }
  std::string description() const override {
    return "every op on the host through ops/reference (OpenBLAS); the oracle for --check; "
           "tensors live in the global memory of the --device preset, no device timing";
  }
  std::string default_device() const override { return default_device_; }
  int max_rank() const override { return kMaxRank; }
  bool has_64bit_types() const override { return true; }
  std::optional<std::string> unsupported_reason(const Node& node, const Graph&) const override {
    if (!supported_ops().count(node.op) && !is_int8_op(node.op))
      return fmt::format("op {} is outside the supported op list", node.op);
    return std::nullopt;
  }
  std::unique_ptr<Step> lower(const Graph&, int node_index) const override {
    return make_reference_step(node_index);
  }

 private:
  std::string default_device_;
};

}  // namespace

std::unique_ptr<Step> make_reference_step(int node_index) {
  return std::make_unique<ReferenceStep>(node_index);
}

Layout Backend::preferred_layout(const Node&, const Graph&) const {
  return Layout{};
}
void Backend::prepare(Graph&) const {}

std::optional<std::string> Backend::profile_summary(const Plan&) const {
  return std::nullopt;
}

void register_backend(BackendInfo info) {
  std::lock_guard lock(registry_mutex());
  auto& r = registry();
  auto it =
      std::find_if(r.begin(), r.end(), [&](const BackendInfo& b) { return b.name == info.name; });
  if (it != r.end())
    *it = std::move(info);
  else
    r.push_back(std::move(info));
  std::sort(r.begin(), r.end(),
            [](const BackendInfo& a, const BackendInfo& b) { return a.name < b.name; });
}

void register_backend(std::function<std::unique_ptr<Backend>()> create) {
  const auto backend = create();
  register_backend({backend->name(), backend->description(), std::move(create)});
}

std::vector<BackendInfo> registered_backends() {
  std::lock_guard lock(registry_mutex());
  return registry();
}

std::unique_ptr<Backend> create_backend(const std::string& name) {
  for (const auto& info : registered_backends())
    if (info.name == name) return info.create();
  std::string names;
  for (const auto& info : registered_backends()) names += (names.empty() ? "" : ", ") + info.name;
  throw_user_error("unknown target '{}'; registered targets: {} (`tessera targets` lists them)",
                   name, names.empty() ? "none" : names);
}

std::unique_ptr<Backend> make_reference_backend(const std::string& default_device) {
  return std::make_unique<ReferenceBackend>(default_device);
}

void register_builtin_backends(const std::string& reference_device) {
  const auto ref = make_reference_backend(reference_device);
  register_backend({ref->name(), ref->description(),
                    [reference_device] { return make_reference_backend(reference_device); }});
}

}  // namespace tessera::compiler
