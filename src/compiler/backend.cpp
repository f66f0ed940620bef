#include "tessera/compiler/backend.h"

#include <algorithm>
#include <mutex>

#include <fmt/format.h>

#include "tessera/compiler/onnx_import.h"
#include "tessera/compiler/quantize.h"
#include "tessera/compiler/reference_exec.h"
#include "tessera/core/error.h"

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
    for (ValueId v : n.inputs) ins.push_back(v == kNoValue ? nullptr : &context.host(v));
    auto outs = run_reference(n, ins, context.graph().opset);
    for (std::size_t o = 0; o < n.outputs.size(); ++o)
      if (n.outputs[o] != kNoValue) context.write(n.outputs[o], std::move(outs[o]));
  }
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
