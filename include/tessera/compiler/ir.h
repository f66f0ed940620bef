// The compiler's intermediate representation: a graph of nodes over typed, statically shaped
// values. Ops and attributes keep ONNX names and meaning (axes in ONNX numbering); shapes are
// Tessera shapes (dimension 0 fastest). Constant values (initializers, folded results) carry
// their data as host Tensors.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tessera/core/shape.h"
#include "tessera/core/tensor.h"

namespace tessera::compiler {

using ValueId = int;
inline constexpr ValueId kNoValue = -1;  // an omitted optional input

struct Value {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  std::optional<Tensor> constant;  // set for initializers and folded values
  int producer = -1;               // index of the producing node; -1 for inputs and constants
  // Set when a device backend holds a 64-bit value in 32 bits (compiler/narrow.h): the type
  // ONNX gives it, which reference fallbacks compute in and graph outputs are returned in.
  std::optional<DType> narrowed_from;
  bool is_constant() const { return constant.has_value(); }
  std::size_t bytes() const {
    return static_cast<std::size_t>(shape.element_count()) * dtype_size(dtype);
  }
};

using Attribute = std::variant<std::int64_t, float, std::string, std::vector<std::int64_t>,
                               std::vector<float>, std::vector<std::string>, Tensor>;

// An activation applied to output 0 of a node by fusion (conv/gemm + activation).
struct Activation {
  enum class Kind : std::uint8_t { none, relu, leaky_relu, clip, sigmoid, tanh };
  Kind kind = Kind::none;
  float alpha = 0.0f;  // leaky_relu slope
  float min = 0.0f;    // clip bounds
  float max = 0.0f;
  bool operator==(const Activation&) const = default;
};
std::string activation_name(const Activation& activation);

// The layout of a node's activations, declared by a backend (Backend::preferred_layout) and
// applied by the layout pass: `perm` is the ONNX Transpose permutation from ONNX's own dimension
// order to the layout's, for activations of rank perm.size(). A Conv laid out this way reads its
// weights through `weights_perm` (ONNX perm of the weights; empty: ONNX's order). The default
// Layout (empty perm) is ONNX's order. Names are for messages and model files.
struct Layout {
  std::string name;
  std::vector<std::int64_t> perm;
  std::string weights_name;
  std::vector<std::int64_t> weights_perm;
  bool is_default() const { return perm.empty(); }
  bool operator==(const Layout&) const = default;
};
// The permutation undoing `perm`; UserError if `perm` is not a permutation of 0..n-1.
std::vector<std::int64_t> inverse_permutation(const std::vector<std::int64_t>& perm);
// An ONNX perm (outermost dimension first) as the fastest-first permutation ops::transpose takes.
std::vector<int> ops_permutation(const std::vector<std::int64_t>& onnx_perm);

struct Node {
  std::string name;  // ONNX node name, or "<op>_<index>" when the model gives none
  std::string op;    // ONNX op type
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::map<std::string, Attribute> attrs;
  Activation activation;
  Layout layout;  // default: ONNX's order

  bool has_attr(const std::string& key) const { return attrs.count(key) != 0; }
  std::int64_t attr_int(const std::string& key, std::int64_t fallback) const;
  float attr_float(const std::string& key, float fallback) const;
  std::string attr_string(const std::string& key, const std::string& fallback) const;
  std::vector<std::int64_t> attr_ints(const std::string& key) const;  // empty when absent
  std::vector<float> attr_floats(const std::string& key) const;
  const Tensor* attr_tensor(const std::string& key) const;
  // "Conv 'conv1'" for messages.
  std::string describe() const;
};

class Graph {
 public:
  std::string name;
  std::string source;                           // the file it came from, for messages
  std::int64_t opset = 0;                       // default-domain opset the model imports
  std::map<std::string, std::string> metadata;  // producer, model metadata_props, ...

  std::vector<Value> values;
  std::vector<Node> nodes;  // topologically ordered
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;

  ValueId add_value(Value value);
  ValueId add_constant(const std::string& value_name, Tensor tensor);
  // Appends a node and records it as the producer of its outputs.
  int add_node(Node node);
  Value& value(ValueId id) { return values.at(static_cast<std::size_t>(id)); }
  const Value& value(ValueId id) const { return values.at(static_cast<std::size_t>(id)); }
  std::optional<ValueId> find_value(const std::string& value_name) const;

  // Number of node inputs (and graph outputs) reading each value.
  std::vector<int> use_counts() const;
  // Recomputes Value::producer after nodes were edited and checks the graph is well formed:
  // every input defined before use, every value produced once. InternalError otherwise.
  void reindex();
  // One line per node: "conv1: Conv(x, w, b) -> y f32(56, 56, 64, 1) [relu]".
  std::string dump() const;
};

}  // namespace tessera::compiler
