#include "tessera/compiler/model_file.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <utility>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "onnx_guard.h"
#include "tessera/compiler/reference_exec.h"
#include "tessera/core/error.h"
#include "tessera/core/json_integer.h"
#include "tessera/core/limits.h"

namespace tessera::compiler {
namespace {

using nlohmann::json;

constexpr char kMagic[8] = {'T', 'E', 'S', 'S', 'M', 'D', 'L', '\x1a'};
// magic, version, flags, json size, weights size, json checksum, weights checksum
constexpr std::size_t kHeaderBytes = 8 + 4 + 4 + 8 + 8 + 8 + 8;

template <typename T>
void put(std::vector<std::byte>& out, T v) {
  std::byte b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.insert(out.end(), b, b + sizeof(T));
}
template <typename T>
T get(std::span<const std::byte> in, std::size_t at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof(T));
  return v;
}

std::uint32_t fbits(float f) {
  return std::bit_cast<std::uint32_t>(f);
}
float from_bits(std::uint32_t b) {
  return std::bit_cast<float>(b);
}

struct Blob {
  std::vector<std::byte> bytes;
  json add(const Tensor& t) {
    json j;
    j["dtype"] = std::string(dtype_name(t.dtype()));
    j["shape"] = std::vector<std::int64_t>(t.shape().fastest_first().begin(),
                                           t.shape().fastest_first().end());
    j["offset"] = bytes.size();
    j["bytes"] = t.bytes();
    j["checksum"] = fmt::format("{:016x}", fnv1a64(t.raw()));
    bytes.insert(bytes.end(), t.raw().begin(), t.raw().end());
    while (bytes.size() % 64) bytes.push_back(std::byte{0});
    return j;
  }
};

json encode_attr(const Attribute& a, Blob& blob) {
  json j;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          j = {{"int", v}};
        } else if constexpr (std::is_same_v<T, float>) {
          j = {{"float", fbits(v)}};
        } else if constexpr (std::is_same_v<T, std::string>) {
          j = {{"string", v}};
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
          j = {{"ints", v}};
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          std::vector<std::uint32_t> bits;
          for (float f : v) bits.push_back(fbits(f));
          j = {{"floats", bits}};
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          j = {{"strings", v}};
        } else {
          j = {{"tensor", blob.add(v)}};
        }
      },
      a);
  return j;
}

[[noreturn]] void corrupt(const std::string& name, const std::string& what) {
  throw_user_error("{}: corrupt Tessera model file ({}); recompile it with `tessera compile`", name,
                   what);
}

// Every integer of a model file is read through this (core/json_integer.h says why).
template <typename T>
T integer(const json& j, const std::string& name, const char* what) {
  if (const std::optional<T> v = json_integer<T>(j)) return *v;
  if (j.is_number_integer()) corrupt(name, fmt::format("{} {} is out of range", what, j.dump()));
  corrupt(name, fmt::format("{} is not an integer: {}", what, j.dump()));
}

template <typename T>
std::vector<T> integers(const json& j, const std::string& name, const char* what) {
  if (!j.is_array()) corrupt(name, fmt::format("{} is not a list", what));
  std::vector<T> out;
  for (const auto& e : j) out.push_back(integer<T>(e, name, what));
  return out;
}

// A node's layout: an object a backend declared (name, perm, weights_name, weights_perm), or
// the name alone, as format-1 files wrote it ("nchw": ONNX's order,
// "nhwc": channels last with HWIO Conv weights).
Layout read_layout(const json& j, const std::string& file) {
  Layout layout;
  if (j.is_string()) {
    const std::string name = j.get<std::string>();
    if (name == "nhwc")
      layout = Layout{"nhwc", {0, 2, 3, 1}, "hwio", kHwioOnnxPerm};
    else if (name != "nchw")
      corrupt(file, fmt::format("unknown layout '{}'", name));
    return layout;
  }
  layout.name = j.at("name").get<std::string>();
  layout.perm = integers<std::int64_t>(j.at("perm"), file, "a layout permutation");
  layout.weights_name = j.at("weights_name").get<std::string>();
  layout.weights_perm =
      integers<std::int64_t>(j.at("weights_perm"), file, "a layout permutation");
  try {
    inverse_permutation(layout.perm);
    if (!layout.weights_perm.empty()) inverse_permutation(layout.weights_perm);
  } catch (const UserError& e) {
    corrupt(file, fmt::format("layout '{}': {}", layout.name, e.what()));
  }
  return layout;
}

Tensor decode_tensor(const json& j, std::span<const std::byte> blob, const std::string& name) {
  const auto dtype = parse_dtype(j.at("dtype").get<std::string>());
  if (!dtype) corrupt(name, "unknown dtype " + j.at("dtype").get<std::string>());
  const auto dims = integers<std::int64_t>(j.at("shape"), name, "a tensor dim");
  if (dims.size() > static_cast<std::size_t>(kMaxRank)) corrupt(name, "tensor rank too large");
  for (auto d : dims)
    if (d < 0 || d > (std::int64_t{1} << 40)) corrupt(name, "bad tensor dimension");
  if (saturating_element_count(dims.data(), static_cast<int>(dims.size())) >
      (std::uint64_t{1} << 62))
    corrupt(name, "a weight's dims multiply past any tensor size");
  const Shape shape = Shape::from_fastest_first(dims);
  const auto offset = integer<std::uint64_t>(j.at("offset"), name, "a tensor offset");
  const auto bytes = integer<std::uint64_t>(j.at("bytes"), name, "a tensor size");
  if (bytes != static_cast<std::uint64_t>(shape.element_count()) * dtype_size(*dtype))
    corrupt(name, "tensor size does not match its shape");
  if (offset > blob.size() || bytes > blob.size() - offset)
    corrupt(name, "tensor lies outside the weights section");
  const auto data = blob.subspan(offset, bytes);
  if (fmt::format("{:016x}", fnv1a64(data)) != j.at("checksum").get<std::string>())
    corrupt(name, "a weight's checksum does not match");
  return Tensor::from_bytes(*dtype, shape, data);
}

// What the file's graph must satisfy before anything is planned or allocated for it: every
// value produced once, before it is read, by a node or as an input or constant; inputs are not
// constants; the graph has outputs. Op-level rules (arity, attributes) are checked when the
// backends lower each node.
// Inputs every node of an op must have (ONNX's required inputs; the checker enforces them on
// ONNX files, this on model files).
int required_inputs(const std::string& op) {
  static const std::map<std::string, int> table = {{"Add", 2},
                                                   {"Sub", 2},
                                                   {"Mul", 2},
                                                   {"Div", 2},
                                                   {"Pow", 2},
                                                   {"Equal", 2},
                                                   {"Less", 2},
                                                   {"Greater", 2},
                                                   {"Where", 3},
                                                   {"MatMul", 2},
                                                   {"Gemm", 2},
                                                   {"Conv", 2},
                                                   {"ConvTranspose", 2},
                                                   {"BatchNormalization", 5},
                                                   {"InstanceNormalization", 3},
                                                   {"LayerNormalization", 2},
                                                   {"Gather", 2},
                                                   {"Expand", 2},
                                                   {"Reshape", 2},
                                                   {"Slice", 3}};
  auto it = table.find(op);
  return it == table.end() ? 1 : it->second;
}

// The attributes backends index by, against the ranks the file declares: an ONNX import
// checked them before shape inference (onnx_guard.cpp), a model file must pass the same rules.
void validate_attributes(const Graph& g, const Node& n, const std::string& name) {
  auto bad = [&](const std::string& what) {
    corrupt(name, fmt::format("{}: {}", n.describe(), what));
  };
  auto rank_of = [&](std::size_t i) {
    return i < n.inputs.size() && n.inputs[i] != kNoValue ? g.value(n.inputs[i]).shape.rank() : -1;
  };
  const int r = rank_of(0);
  auto ints = [&](const char* key) -> std::vector<std::int64_t> {
    if (!n.has_attr(key)) return {};
    if (!std::holds_alternative<std::vector<std::int64_t>>(n.attrs.at(key)))
      bad(fmt::format("attribute '{}' is not a list of integers", key));
    return std::get<std::vector<std::int64_t>>(n.attrs.at(key));
  };
  auto one = [&](const char* key) -> std::optional<std::int64_t> {
    if (!n.has_attr(key)) return std::nullopt;
    if (!std::holds_alternative<std::int64_t>(n.attrs.at(key)))
      bad(fmt::format("attribute '{}' is not an integer", key));
    return std::get<std::int64_t>(n.attrs.at(key));
  };
  auto in_range = [&](std::int64_t v, std::int64_t lo, std::int64_t hi, const char* key) {
    if (v < lo || v > hi)
      bad(fmt::format("attribute '{}' holds {}, outside {} to {} for an input of rank {}", key, v,
                      lo, hi, r));
  };
  if (auto perm = ints("perm"); n.op == "Transpose" && !perm.empty()) {
    std::vector<bool> seen(static_cast<std::size_t>(std::max(r, 0)), false);
    if (static_cast<int>(perm.size()) != r)
      bad(fmt::format("'perm' has {} entries for rank {}", perm.size(), r));
    for (auto p : perm) {
      in_range(p, 0, r - 1, "perm");
      if (seen[static_cast<std::size_t>(p)]) bad("'perm' repeats an axis");
      seen[static_cast<std::size_t>(p)] = true;
    }
  }
  const bool window =
      n.op == "Conv" || n.op == "ConvTranspose" || n.op == "MaxPool" || n.op == "AveragePool";
  if (window) {
    if (r < 3) bad(fmt::format("input rank {}; {} needs rank 3 or more", r, n.op));
    const std::size_t spatial = static_cast<std::size_t>(r - 2);
    for (const char* key : {"kernel_shape", "strides", "dilations", "pads", "output_padding"}) {
      const auto v = ints(key);
      const std::size_t want = std::string_view(key) == "pads" ? 2 * spatial : spatial;
      if (!v.empty() && v.size() != want)
        bad(fmt::format("'{}' has {} values; rank {} needs {}", key, v.size(), r, want));
      const std::int64_t min =
          std::string_view(key) == "pads" || std::string_view(key) == "output_padding" ? 0 : 1;
      for (auto e : v) in_range(e, min, std::int64_t{1} << 31, key);
    }
    if ((n.op == "MaxPool" || n.op == "AveragePool") && ints("kernel_shape").empty())
      bad("'kernel_shape' is missing");
    if (n.op != "MaxPool" && n.op != "AveragePool") {
      if (rank_of(1) != r)
        bad(fmt::format("weights of rank {} for an input of rank {}", rank_of(1), r));
      if (auto group = one("group")) in_range(*group, 1, std::int64_t{1} << 31, "group");
    }
  }
  if (auto axis = one("axis"); axis && r >= 0) {
    const bool inclusive = n.op == "Flatten";
    in_range(*axis, -std::max(r, 1), inclusive ? r : std::max(r, 1) - 1, "axis");
  }
  if (r >= 0 && n.op != "Unsqueeze")
    for (auto a : ints("axes")) in_range(a, -std::max(r, 1), std::max(r, 1) - 1, "axes");
  for (const char* flag : {"keepdims", "transA", "transB", "ceil_mode", "count_include_pad"})
    if (auto v = one(flag)) in_range(*v, 0, 1, flag);
}

void validate_graph(const Graph& g, const std::string& name) {
  if (g.outputs.empty()) corrupt(name, "the graph has no outputs");
  std::vector<int> defined(g.values.size(), 0);
  for (std::size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].constant) defined[v] = 1;
  for (ValueId v : g.inputs) {
    if (g.values[static_cast<std::size_t>(v)].constant)
      corrupt(name, fmt::format("graph input '{}' is a constant",
                                g.values[static_cast<std::size_t>(v)].name));
    if (defined[static_cast<std::size_t>(v)]++)
      corrupt(name, fmt::format("graph input '{}' is listed twice",
                                g.values[static_cast<std::size_t>(v)].name));
  }
  for (const Node& n : g.nodes) {
    if (n.outputs.empty() ||
        std::all_of(n.outputs.begin(), n.outputs.end(), [](ValueId v) { return v == kNoValue; }))
      corrupt(name, fmt::format("{} has no outputs", n.describe()));
    const int need = n.op == "Slice" && g.opset < 10 ? 1 : required_inputs(n.op);
    for (int i = 0; i < need; ++i)
      if (i >= static_cast<int>(n.inputs.size()) ||
          n.inputs[static_cast<std::size_t>(i)] == kNoValue)
        corrupt(name, fmt::format("{} lacks its input {}; {} needs {} inputs", n.describe(), i,
                                  n.op, need));
    validate_attributes(g, n, name);
    for (ValueId v : n.inputs)
      if (v != kNoValue && !defined[static_cast<std::size_t>(v)])
        corrupt(name, fmt::format("{} reads value '{}' before anything produces it", n.describe(),
                                  g.values[static_cast<std::size_t>(v)].name));
    for (ValueId v : n.outputs) {
      if (v == kNoValue) continue;
      if (defined[static_cast<std::size_t>(v)]++)
        corrupt(name, fmt::format("{} writes value '{}', which is already an input, a constant "
                                  "or another node's output",
                                  n.describe(), g.values[static_cast<std::size_t>(v)].name));
    }
  }
  for (ValueId v : g.outputs)
    if (!defined[static_cast<std::size_t>(v)])
      corrupt(name, fmt::format("graph output '{}' is never produced",
                                g.values[static_cast<std::size_t>(v)].name));
}

Attribute decode_attr(const json& j, std::span<const std::byte> blob, const std::string& name) {
  if (j.contains("int")) return integer<std::int64_t>(j.at("int"), name, "an int attribute");
  if (j.contains("float"))
    return from_bits(integer<std::uint32_t>(j.at("float"), name, "a float attribute"));
  if (j.contains("string")) return j.at("string").get<std::string>();
  if (j.contains("ints")) return integers<std::int64_t>(j.at("ints"), name, "an ints attribute");
  if (j.contains("floats")) {
    std::vector<float> v;
    for (auto b : integers<std::uint32_t>(j.at("floats"), name, "a floats attribute"))
      v.push_back(from_bits(b));
    return v;
  }
  if (j.contains("strings")) return j.at("strings").get<std::vector<std::string>>();
  if (j.contains("tensor")) return decode_tensor(j.at("tensor"), blob, name);
  corrupt(name, "unknown attribute kind");
}

}  // namespace

std::uint64_t fnv1a64(std::span<const std::byte> bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::byte b : bytes) {
    h ^= static_cast<std::uint64_t>(b);
    h *= 0x100000001b3ull;
  }
  return h;
}

std::vector<std::byte> encode_model(const Plan& plan,
                                    const std::map<std::string, std::string>& metadata) {
  const Graph& g = plan.graph;
  Blob blob;
  json j;
  j["format"] = "tessera.model";
  j["target"] = plan.backend;
  j["device"] = plan.device;
  j["name"] = g.name;
  j["source"] = g.source;
  j["opset"] = g.opset;
  json meta = json::object();
  for (const auto& [k, v] : g.metadata) meta[k] = v;
  for (const auto& [k, v] : metadata) meta[k] = v;
  j["metadata"] = meta;
  // Only values the graph references are stored.
  std::vector<bool> referenced(g.values.size(), false);
  for (const Node& n : g.nodes) {
    for (ValueId v : n.inputs)
      if (v != kNoValue) referenced[static_cast<std::size_t>(v)] = true;
    for (ValueId v : n.outputs)
      if (v != kNoValue) referenced[static_cast<std::size_t>(v)] = true;
  }
  for (ValueId v : g.inputs) referenced[static_cast<std::size_t>(v)] = true;
  for (ValueId v : g.outputs) referenced[static_cast<std::size_t>(v)] = true;
  std::vector<int> remap(g.values.size(), -1);
  json values = json::array();
  for (std::size_t v = 0; v < g.values.size(); ++v) {
    if (!referenced[v]) continue;
    remap[v] = static_cast<int>(values.size());
    const Value& value = g.values[v];
    json jv;
    jv["name"] = value.name;
    jv["dtype"] = std::string(dtype_name(value.dtype));
    if (value.narrowed_from) jv["narrowed_from"] = std::string(dtype_name(*value.narrowed_from));
    jv["shape"] = std::vector<std::int64_t>(value.shape.fastest_first().begin(),
                                            value.shape.fastest_first().end());
    if (value.constant) jv["constant"] = blob.add(*value.constant);
    values.push_back(jv);
  }
  auto ids = [&](const std::vector<ValueId>& list) {
    std::vector<int> out;
    for (ValueId v : list) out.push_back(v == kNoValue ? -1 : remap[static_cast<std::size_t>(v)]);
    return out;
  };
  json nodes = json::array();
  for (const Node& n : g.nodes) {
    json jn;
    jn["name"] = n.name;
    jn["op"] = n.op;
    jn["inputs"] = ids(n.inputs);
    jn["outputs"] = ids(n.outputs);
    json attrs = json::object();
    for (const auto& [k, a] : n.attrs) attrs[k] = encode_attr(a, blob);
    jn["attrs"] = attrs;
    jn["activation"] = {static_cast<int>(n.activation.kind), fbits(n.activation.alpha),
                        fbits(n.activation.min), fbits(n.activation.max)};
    if (!n.layout.is_default())
      jn["layout"] = {{"name", n.layout.name},
                      {"perm", n.layout.perm},
                      {"weights_name", n.layout.weights_name},
                      {"weights_perm", n.layout.weights_perm}};
    nodes.push_back(jn);
  }
  j["values"] = values;
  j["nodes"] = nodes;
  j["inputs"] = ids(g.inputs);
  j["outputs"] = ids(g.outputs);
  const std::string text = j.dump();
  std::vector<std::byte> out;
  out.reserve(kHeaderBytes + text.size() + blob.bytes.size());
  for (char c : kMagic) out.push_back(static_cast<std::byte>(c));
  put<std::uint32_t>(out, kModelFormatVersion);
  put<std::uint32_t>(out, 0);
  put<std::uint64_t>(out, text.size());
  put<std::uint64_t>(out, blob.bytes.size());
  const auto* tb = reinterpret_cast<const std::byte*>(text.data());
  put<std::uint64_t>(out, fnv1a64({tb, text.size()}));
  put<std::uint64_t>(out, fnv1a64(blob.bytes));
  out.insert(out.end(), tb, tb + text.size());
  out.insert(out.end(), blob.bytes.begin(), blob.bytes.end());
  return out;
}

void save_model(const Plan& plan, const std::string& path,
                const std::map<std::string, std::string>& metadata) {
  const auto bytes = encode_model(plan, metadata);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw_user_error("cannot write model file '{}': check the directory exists and is writable",
                     path);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw_user_error("writing model file '{}' failed (disk full?)", path);
}

ModelFile decode_model(std::span<const std::byte> bytes, const std::string& name) {
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kMagic, 8) != 0)
    throw_user_error(
        "{}: not a Tessera model file (bad magic); compile an ONNX model with "
        "`tessera compile MODEL.onnx --target T -o MODEL.tsm`",
        name);
  if (bytes.size() < kHeaderBytes) corrupt(name, "truncated header");
  const auto version = get<std::uint32_t>(bytes, 8);
  if (version > kModelFormatVersion)
    throw_user_error(
        "{}: model file format version {} is newer than this Tessera reads ({}); "
        "upgrade Tessera or recompile the model",
        name, version, kModelFormatVersion);
  if (version == 0) corrupt(name, "format version 0");
  const auto json_bytes = get<std::uint64_t>(bytes, 16);
  const auto blob_bytes = get<std::uint64_t>(bytes, 24);
  const auto json_sum = get<std::uint64_t>(bytes, 32);
  const auto blob_sum = get<std::uint64_t>(bytes, 40);
  const std::uint64_t body = bytes.size() - kHeaderBytes;
  if (json_bytes > body || blob_bytes > body - json_bytes)
    corrupt(name, fmt::format("truncated: the header announces {} bytes, the file has {}",
                              kHeaderBytes + json_bytes + blob_bytes, bytes.size()));
  if (json_bytes + blob_bytes != body) corrupt(name, "trailing bytes after the weights section");
  const auto text = bytes.subspan(kHeaderBytes, json_bytes);
  const auto blob = bytes.subspan(kHeaderBytes + json_bytes, blob_bytes);
  if (fnv1a64(text) != json_sum) corrupt(name, "the metadata checksum does not match");
  if (fnv1a64(blob) != blob_sum) corrupt(name, "the weights checksum does not match");
  ModelFile model;
  try {
    const json j =
        json::parse(std::string(reinterpret_cast<const char*>(text.data()), text.size()));
    if (j.at("format").get<std::string>() != "tessera.model") corrupt(name, "unknown format name");
    model.target = j.at("target").get<std::string>();
    model.device = j.at("device").get<std::string>();
    for (const auto& [k, v] : j.at("metadata").items()) model.metadata[k] = v.get<std::string>();
    Graph& g = model.graph;
    g.name = j.at("name").get<std::string>();
    g.source = j.at("source").get<std::string>();
    g.opset = integer<std::int64_t>(j.at("opset"), name, "the opset");
    g.metadata = model.metadata;
    for (const auto& jv : j.at("values")) {
      Value v;
      v.name = jv.at("name").get<std::string>();
      const auto dtype = parse_dtype(jv.at("dtype").get<std::string>());
      if (!dtype) corrupt(name, "unknown dtype");
      v.dtype = *dtype;
      if (jv.contains("narrowed_from")) {
        const auto wide = parse_dtype(jv.at("narrowed_from").get<std::string>());
        if (!wide || !is_64bit(*wide) || narrowed_dtype(*wide) != v.dtype)
          corrupt(name, fmt::format("value '{}' is narrowed from a type that does not narrow to {}",
                                    v.name, dtype_name(v.dtype)));
        v.narrowed_from = wide;
      }
      const auto dims = integers<std::int64_t>(jv.at("shape"), name, "a value dim");
      if (dims.size() > static_cast<std::size_t>(kMaxRank)) corrupt(name, "value rank too large");
      for (auto d : dims)
        if (d < 0 || d > (std::int64_t{1} << 40)) corrupt(name, "bad value dimension");
      if (saturating_element_count(dims.data(), static_cast<int>(dims.size())) >
          (std::uint64_t{1} << 62))
        corrupt(name, fmt::format("value '{}' has dims ({}) whose product overflows", v.name,
                                  fmt::join(dims, ", ")));
      v.shape = Shape::from_fastest_first(dims);
      check_host_memory(
          static_cast<std::uint64_t>(v.shape.element_count()) * dtype_size(v.dtype),
          fmt::format("{}: value '{}' of shape {}", name, v.name, v.shape.to_string()));
      if (jv.contains("constant")) {
        v.constant = decode_tensor(jv.at("constant"), blob, name);
        // Kernels size their copies by the value and read the constant: the two must agree.
        if (v.constant->dtype() != v.dtype || !(v.constant->shape() == v.shape))
          corrupt(name,
                  fmt::format("value '{}' is declared {} {} but its constant is {} {}", v.name,
                              dtype_name(v.dtype), v.shape.to_string(),
                              dtype_name(v.constant->dtype()), v.constant->shape().to_string()));
      }
      g.add_value(std::move(v));
    }
    const auto nv = static_cast<int>(g.values.size());
    auto ids = [&](const json& list, bool allow_none) {
      std::vector<ValueId> out;
      for (const auto& e : list) {
        // Read wide: get<int>() would wrap an index of 2^40 into range.
        const auto v = integer<std::int64_t>(e, name, "a value index");
        if (v < (allow_none ? -1 : 0) || v >= nv)
          corrupt(name,
                  fmt::format("value index {} is out of range; the file has {} values", v, nv));
        out.push_back(static_cast<ValueId>(v));
      }
      return out;
    };
    for (const auto& jn : j.at("nodes")) {
      Node n;
      n.name = jn.at("name").get<std::string>();
      n.op = jn.at("op").get<std::string>();
      n.inputs = ids(jn.at("inputs"), true);
      n.outputs = ids(jn.at("outputs"), true);
      for (const auto& [k, a] : jn.at("attrs").items()) n.attrs[k] = decode_attr(a, blob, name);
      if (n.has_attr("auto_pad") || n.has_attr("output_shape"))
        throw_user_error(
            "{}: {} carries auto_pad or output_shape, which this Tessera resolves into pads at "
            "import; recompile the model",
            name, n.describe());
      const auto act = jn.at("activation");
      const int kind = integer<int>(act.at(0), name, "an activation kind");
      if (kind < 0 || kind > static_cast<int>(Activation::Kind::tanh))
        corrupt(name, "unknown activation");
      n.activation.kind = static_cast<Activation::Kind>(kind);
      n.activation.alpha =
          from_bits(integer<std::uint32_t>(act.at(1), name, "an activation figure"));
      n.activation.min = from_bits(integer<std::uint32_t>(act.at(2), name, "an activation figure"));
      n.activation.max = from_bits(integer<std::uint32_t>(act.at(3), name, "an activation figure"));
      if (jn.contains("layout")) n.layout = read_layout(jn.at("layout"), name);
      g.nodes.push_back(std::move(n));
    }
    g.inputs = ids(j.at("inputs"), false);
    g.outputs = ids(j.at("outputs"), false);
    validate_graph(g, name);
    g.reindex();
    // Kernels size their buffers by the stored shapes: each must be what the node computes.
    detail::check_derived_types(g, name);
  } catch (const json::exception& e) {
    corrupt(name, fmt::format("metadata: {}", e.what()));
  } catch (const InternalError& e) {
    corrupt(name, fmt::format("graph: {}", e.what()));
  }
  return model;
}

ModelFile load_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_user_error("cannot open model file '{}': check the path", path);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  if (!chars.empty()) std::memcpy(bytes.data(), chars.data(), chars.size());
  return decode_model(bytes, path);
}

bool is_model_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  if (!in.read(magic, 8)) return false;
  return std::memcmp(magic, kMagic, 8) == 0;
}

}  // namespace tessera::compiler
