#include "tessera/compiler/ir.h"

#include <fmt/format.h>

#include "tessera/core/error.h"

namespace tessera::compiler {

std::string activation_name(const Activation& activation) {
  switch (activation.kind) {
    case Activation::Kind::none:
      return "none";
    case Activation::Kind::relu:
      return "relu";
    case Activation::Kind::leaky_relu:
      return fmt::format("leaky_relu({})", activation.alpha);
    case Activation::Kind::clip:
      return fmt::format("clip({}, {})", activation.min, activation.max);
    case Activation::Kind::sigmoid:
      return "sigmoid";
    case Activation::Kind::tanh:
      return "tanh";
  }
  return "none";
}

std::int64_t Node::attr_int(const std::string& key, std::int64_t fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  if (auto* v = std::get_if<std::int64_t>(&it->second)) return *v;
  if (auto* f = std::get_if<float>(&it->second)) return static_cast<std::int64_t>(*f);
  throw_user_error("{}: attribute '{}' must be an integer", describe(), key);
}

float Node::attr_float(const std::string& key, float fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  if (auto* v = std::get_if<float>(&it->second)) return *v;
  if (auto* i = std::get_if<std::int64_t>(&it->second)) return static_cast<float>(*i);
  throw_user_error("{}: attribute '{}' must be a float", describe(), key);
}

std::string Node::attr_string(const std::string& key, const std::string& fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  if (auto* v = std::get_if<std::string>(&it->second)) return *v;
  throw_user_error("{}: attribute '{}' must be a string", describe(), key);
}

std::vector<std::int64_t> Node::attr_ints(const std::string& key) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return {};
  if (auto* v = std::get_if<std::vector<std::int64_t>>(&it->second)) return *v;
  if (auto* i = std::get_if<std::int64_t>(&it->second)) return {*i};
  throw_user_error("{}: attribute '{}' must be a list of integers", describe(), key);
}

std::vector<float> Node::attr_floats(const std::string& key) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return {};
  if (auto* v = std::get_if<std::vector<float>>(&it->second)) return *v;
  if (auto* f = std::get_if<float>(&it->second)) return {*f};
  throw_user_error("{}: attribute '{}' must be a list of floats", describe(), key);
}

const Tensor* Node::attr_tensor(const std::string& key) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return nullptr;
  return std::get_if<Tensor>(&it->second);
}

std::string Node::describe() const {
  return fmt::format("node '{}' ({})", name, op);
}

ValueId Graph::add_value(Value value) {
  values.push_back(std::move(value));
  return static_cast<ValueId>(values.size() - 1);
}

ValueId Graph::add_constant(const std::string& value_name, Tensor tensor) {
  Value v;
  v.name = value_name;
  v.dtype = tensor.dtype();
  v.shape = tensor.shape();
  v.constant = std::move(tensor);
  return add_value(std::move(v));
}

int Graph::add_node(Node node) {
  const int index = static_cast<int>(nodes.size());
  for (ValueId out : node.outputs)
    if (out != kNoValue) value(out).producer = index;
  nodes.push_back(std::move(node));
  return index;
}

std::optional<ValueId> Graph::find_value(const std::string& value_name) const {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i].name == value_name) return static_cast<ValueId>(i);
  return std::nullopt;
}

std::vector<int> Graph::use_counts() const {
  std::vector<int> uses(values.size(), 0);
  for (const Node& node : nodes)
    for (ValueId in : node.inputs)
      if (in != kNoValue) ++uses[static_cast<std::size_t>(in)];
  for (ValueId out : outputs) ++uses[static_cast<std::size_t>(out)];
  return uses;
}

void Graph::reindex() {
  std::vector<bool> defined(values.size(), false);
  for (auto& v : values) v.producer = -1;
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i].is_constant()) defined[i] = true;
  for (ValueId in : inputs) defined[static_cast<std::size_t>(in)] = true;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    for (ValueId in : nodes[n].inputs)
      TESSERA_CHECK(in == kNoValue || defined.at(static_cast<std::size_t>(in)),
                    "{} reads value {} before it is defined", nodes[n].describe(), in);
    for (ValueId out : nodes[n].outputs) {
      if (out == kNoValue) continue;
      TESSERA_CHECK(!defined.at(static_cast<std::size_t>(out)), "{} redefines value '{}'",
                    nodes[n].describe(), value(out).name);
      defined[static_cast<std::size_t>(out)] = true;
      values[static_cast<std::size_t>(out)].producer = static_cast<int>(n);
    }
  }
  for (ValueId out : outputs)
    TESSERA_CHECK(defined.at(static_cast<std::size_t>(out)), "graph output '{}' is never defined",
                  value(out).name);
}

std::string Graph::dump() const {
  std::string text;
  for (const Node& node : nodes) {
    std::string ins, outs;
    for (ValueId in : node.inputs)
      ins += (ins.empty() ? "" : ", ") + (in == kNoValue ? std::string("-") : value(in).name);
    for (ValueId out : node.outputs) {
      if (out == kNoValue) continue;
      const Value& v = value(out);
      outs += fmt::format("{}{} {}{}", outs.empty() ? "" : ", ", v.name, dtype_name(v.dtype),
                          v.shape.to_string());
    }
    text += fmt::format("{}: {}({}) -> {}", node.name, node.op, ins, outs);
    if (node.activation.kind != Activation::Kind::none)
      text += fmt::format(" [{}]", activation_name(node.activation));
    if (!node.layout.is_default()) text += fmt::format(" [{}]", node.layout.name);
    text += "\n";
  }
  return text;
}

std::vector<std::int64_t> inverse_permutation(const std::vector<std::int64_t>& perm) {
  std::vector<std::int64_t> inverse(perm.size(), -1);
  for (std::size_t i = 0; i < perm.size(); ++i) {
    const std::int64_t p = perm[i];
    if (p < 0 || p >= static_cast<std::int64_t>(perm.size()) ||
        inverse[static_cast<std::size_t>(p)] != -1)
      throw_user_error("layout permutation {} is not a permutation of 0..{}", fmt::join(perm, ","),
                       perm.size() - 1);
    inverse[static_cast<std::size_t>(p)] = static_cast<std::int64_t>(i);
  }
  return inverse;
}

std::vector<int> ops_permutation(const std::vector<std::int64_t>& onnx_perm) {
  // Output dimension i (outermost first) is input dimension p[i]; fastest-first that is
  // q[r-1-i] = r-1-p[i].
  const auto r = static_cast<std::int64_t>(onnx_perm.size());
  std::vector<int> q(onnx_perm.size());
  for (std::int64_t i = 0; i < r; ++i)
    q[static_cast<std::size_t>(r - 1 - i)] =
        static_cast<int>(r - 1 - onnx_perm[static_cast<std::size_t>(i)]);
  return q;
}

}  // namespace tessera::compiler
