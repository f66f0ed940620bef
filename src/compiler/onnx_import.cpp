#include "tessera/compiler/onnx_import.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <variant>

#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include "onnx_guard.h"
#include "tessera/compiler/passes.h"
#include "tessera/compiler/quantize.h"
#include "tessera/compiler/reference_exec.h"
#include "tessera/core/error.h"
#include "tessera/core/limits.h"
#include "tessera/core/log.h"
#include "tessera/ops/reference.h"

namespace tessera::compiler {
namespace {

std::vector<std::byte> read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_user_error("cannot open {} '{}': check the path and permissions", what, path);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  if (!chars.empty()) std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

// ONNX element types map onto Tessera's one to one (INT64, UINT64 and DOUBLE keep 64 bits).
std::optional<DType> map_elem_type(int elem_type) {
  using TP = onnx::TensorProto;
  switch (elem_type) {
    case TP::FLOAT:
      return DType::f32;
    case TP::FLOAT16:
      return DType::f16;
    case TP::BFLOAT16:
      return DType::bf16;
    case TP::INT32:
      return DType::i32;
    case TP::UINT32:
      return DType::u32;
    case TP::INT16:
      return DType::i16;
    case TP::UINT16:
      return DType::u16;
    case TP::INT8:
      return DType::i8;
    case TP::UINT8:
      return DType::u8;
    case TP::BOOL:
      return DType::boolean;
    case TP::INT64:
      return DType::i64;
    case TP::UINT64:
      return DType::u64;
    case TP::DOUBLE:
      return DType::f64;
    default:
      return std::nullopt;
  }
}

// The ONNX element type for a Tessera dtype.
int onnx_elem_type(DType dtype) {
  using TP = onnx::TensorProto;
  switch (dtype) {
    case DType::f32:
      return TP::FLOAT;
    case DType::f16:
      return TP::FLOAT16;
    case DType::bf16:
      return TP::BFLOAT16;
    case DType::i32:
      return TP::INT32;
    case DType::u32:
      return TP::UINT32;
    case DType::i16:
      return TP::INT16;
    case DType::u16:
      return TP::UINT16;
    case DType::i8:
      return TP::INT8;
    case DType::u8:
      return TP::UINT8;
    case DType::boolean:
      return TP::BOOL;
    case DType::i64:
      return TP::INT64;
    case DType::u64:
      return TP::UINT64;
    case DType::f64:
      return TP::DOUBLE;
  }
  return TP::UNDEFINED;
}

std::string elem_type_name(int elem_type) {
  if (onnx::TensorProto_DataType_IsValid(elem_type))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type));
  return fmt::format("type {}", elem_type);
}

DType require_dtype(int elem_type, const std::string& where) {
  auto dtype = map_elem_type(elem_type);
  if (!dtype)
    throw_user_error(
        "{}: element type {} is not supported (Tessera supports double, float, float16, "
        "bfloat16, int8-64, uint8-64, bool)",
        where, elem_type_name(elem_type));
  return *dtype;
}

Shape make_shape(const std::vector<std::int64_t>& dims_outer_first, const std::string& where) {
  if (dims_outer_first.size() > static_cast<std::size_t>(kMaxRank))
    throw_user_error("{}: rank {} exceeds Tessera's maximum rank of {}", where,
                     dims_outer_first.size(), kMaxRank);
  for (auto d : dims_outer_first)
    if (d < 0) throw_user_error("{}: negative dimension {}", where, d);
  return Shape::from_outer_first(dims_outer_first);
}

Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& where) {
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    throw_user_error(
        "{}: tensor '{}' stores its data in an external file, which Tessera does not "
        "read; save the model with the weights inside (onnx.save(..., "
        "save_as_external_data=False))",
        where, proto.name());
  if (proto.has_segment())
    throw_user_error("{}: segmented tensor '{}' is not supported", where, proto.name());
  const int et = proto.data_type();
  const DType dtype = require_dtype(et, fmt::format("{}: tensor '{}'", where, proto.name()));
  std::vector<std::int64_t> dims(proto.dims().begin(), proto.dims().end());
  const Shape shape = make_shape(dims, fmt::format("{}: tensor '{}'", where, proto.name()));
  const std::int64_t n = shape.element_count();
  using TP = onnx::TensorProto;
  auto bad_size = [&](std::size_t have) {
    throw_user_error(
        "{}: tensor '{}' of shape {} holds {} values where {} are needed (the file "
        "is corrupt)",
        where, proto.name(), shape.to_string(), have, n);
  };
  const std::size_t src_size = dtype_size(dtype);
  // The data must be there before anything is allocated for it: a file declaring 2^40
  // elements with 4 bytes of data is refused here, not after allocating terabytes.
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != static_cast<std::uint64_t>(n) * src_size)
      bad_size(proto.raw_data().size() / src_size);
  } else {
    std::uint64_t have = 0;
    switch (et) {
      case TP::FLOAT:
        have = static_cast<std::uint64_t>(proto.float_data_size());
        break;
      case TP::DOUBLE:
        have = static_cast<std::uint64_t>(proto.double_data_size());
        break;
      case TP::INT64:
        have = static_cast<std::uint64_t>(proto.int64_data_size());
        break;
      case TP::UINT64:
      case TP::UINT32:
        have = static_cast<std::uint64_t>(proto.uint64_data_size());
        break;
      default:
        have = static_cast<std::uint64_t>(proto.int32_data_size());
    }
    if (have != static_cast<std::uint64_t>(n)) bad_size(have);
  }
  check_host_memory(
      static_cast<std::uint64_t>(n) * dtype_size(dtype),
      fmt::format("{}: tensor '{}' of shape {}", where, proto.name(), shape.to_string()));
  Tensor t(dtype, shape);
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (n > 0) {
      std::memcpy(t.raw_data(), raw.data(), raw.size());
    }
    return t;
  }
  switch (et) {
    case TP::FLOAT:
      if (proto.float_data_size() != n) bad_size(static_cast<std::size_t>(proto.float_data_size()));
      std::copy(proto.float_data().begin(), proto.float_data().end(), t.data<float>());
      break;
    case TP::DOUBLE:
      if (proto.double_data_size() != n)
        bad_size(static_cast<std::size_t>(proto.double_data_size()));
      std::copy(proto.double_data().begin(), proto.double_data().end(), t.data<double>());
      break;
    case TP::INT64:
      if (proto.int64_data_size() != n) bad_size(static_cast<std::size_t>(proto.int64_data_size()));
      std::copy(proto.int64_data().begin(), proto.int64_data().end(), t.data<std::int64_t>());
      break;
    case TP::UINT64:
      if (proto.uint64_data_size() != n)
        bad_size(static_cast<std::size_t>(proto.uint64_data_size()));
      std::copy(proto.uint64_data().begin(), proto.uint64_data().end(), t.data<std::uint64_t>());
      break;
    case TP::UINT32:
      // ONNX stores UINT32 in uint64_data; the checker holds each value to 32 bits.
      if (proto.uint64_data_size() != n)
        bad_size(static_cast<std::size_t>(proto.uint64_data_size()));
      for (std::int64_t i = 0; i < n; ++i)
        t.data<std::uint32_t>()[i] =
            saturate_cast<std::uint32_t>(proto.uint64_data(static_cast<int>(i)));
      break;
    case TP::FLOAT16:
    case TP::BFLOAT16:
    case TP::INT16:
    case TP::UINT16:
    case TP::INT32:
    case TP::INT8:
    case TP::UINT8:
    case TP::BOOL: {
      if (proto.int32_data_size() != n) bad_size(static_cast<std::size_t>(proto.int32_data_size()));
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int32_t v = proto.int32_data(static_cast<int>(i));
        void* base = t.raw_data();
        switch (dtype) {
          case DType::f16:
          case DType::bf16:
          case DType::u16: {
            const auto bits = static_cast<std::uint16_t>(v);
            std::memcpy(static_cast<std::byte*>(base) + i * 2, &bits, 2);
            break;
          }
          default:
            store_from_double(base, dtype, static_cast<std::size_t>(i), v);
        }
      }
      break;
    }
    default:
      throw_user_error("{}: tensor '{}' has unsupported element type {}", where, proto.name(),
                       elem_type_name(et));
  }
  return t;
}

void tensor_to_proto(const Tensor& t, int elem_type, onnx::TensorProto* proto) {
  proto->clear_dims();
  for (auto d : t.shape().outer_first()) proto->add_dims(d);
  proto->set_data_type(elem_type);
  const auto want = require_dtype(elem_type, "bound input");
  const Tensor converted = t.dtype() == want ? t : t.astype(want);
  proto->set_raw_data(
      std::string(reinterpret_cast<const char*>(converted.raw_data()), converted.bytes()));
}

// Known dims of a value's type, or nullopt when the shape (or a dim) is unknown.
std::optional<std::vector<std::int64_t>> known_dims(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return std::nullopt;
  std::vector<std::int64_t> dims;
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return dims;
}

Attribute convert_attribute(const onnx::AttributeProto& a, const std::string& where) {
  using AP = onnx::AttributeProto;
  switch (a.type()) {
    case AP::INT:
      return static_cast<std::int64_t>(a.i());
    case AP::FLOAT:
      return a.f();
    case AP::STRING:
      return a.s();
    case AP::INTS:
      return std::vector<std::int64_t>(a.ints().begin(), a.ints().end());
    case AP::FLOATS:
      return std::vector<float>(a.floats().begin(), a.floats().end());
    case AP::STRINGS:
      return std::vector<std::string>(a.strings().begin(), a.strings().end());
    case AP::TENSOR:
      return tensor_from_proto(a.t(), where + " attribute '" + a.name() + "'");
    default:
      throw_user_error("{}: attribute '{}' has a kind ({}) Tessera does not support", where,
                       a.name(), static_cast<int>(a.type()));
  }
}

// The inverse of convert_attribute.
void attribute_to_proto(const std::string& name, const Attribute& attribute,
                        onnx::AttributeProto* a) {
  using AP = onnx::AttributeProto;
  a->set_name(name);
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          a->set_type(AP::INT);
          a->set_i(v);
        } else if constexpr (std::is_same_v<T, float>) {
          a->set_type(AP::FLOAT);
          a->set_f(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          a->set_type(AP::STRING);
          a->set_s(v);
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
          a->set_type(AP::INTS);
          for (auto e : v) a->add_ints(e);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          a->set_type(AP::FLOATS);
          for (auto e : v) a->add_floats(e);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          a->set_type(AP::STRINGS);
          for (const auto& e : v) a->add_strings(e);
        } else {
          a->set_type(AP::TENSOR);
          tensor_to_proto(v, onnx_elem_type(v.dtype()), a->mutable_t());
        }
      },
      attribute);
}

Tensor constant_node_value(const onnx::NodeProto& node, const std::string& where) {
  for (const auto& a : node.attribute()) {
    const std::string& n = a.name();
    if (n == "value") return tensor_from_proto(a.t(), where);
    if (n == "value_float") return Tensor::scalar(DType::f32, a.f());
    if (n == "value_int") return Tensor::from_ints(DType::i64, Shape{}, {a.i()});
    if (n == "value_floats") {
      std::vector<float> v(a.floats().begin(), a.floats().end());
      return Tensor::from_vector(Shape{static_cast<std::int64_t>(v.size())}, v);
    }
    if (n == "value_ints") {
      std::vector<std::int64_t> v(a.ints().begin(), a.ints().end());
      return Tensor::from_ints(DType::i64, Shape{static_cast<std::int64_t>(v.size())}, v);
    }
  }
  throw_user_error(
      "{}: Constant node has no supported value attribute (value, value_float, "
      "value_int, value_floats, value_ints)",
      where);
}

std::int64_t default_opset(const onnx::ModelProto& model) {
  for (const auto& op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") return op.version();
  return 0;
}

onnx::ModelProto parse_model(std::span<const std::byte> bytes, const std::string& name) {
  onnx::ModelProto model;
  if (bytes.empty()) throw_user_error("{}: the file is empty; expected an ONNX model", name);
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw_user_error("{}: the file is larger than 2 GiB, the limit of a protobuf message", name);
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw_user_error(
        "{}: not a valid ONNX model (the protobuf does not parse: the file is "
        "truncated, corrupt or not an .onnx file)",
        name);
  if (!model.has_graph() || (model.graph().node_size() == 0 && model.graph().output_size() == 0))
    throw_user_error("{}: not an ONNX model (no graph with nodes or outputs found)", name);
  return model;
}

}  // namespace

const std::set<std::string>& supported_ops() {
  static const std::set<std::string> ops = {"Abs",
                                            "Acos",
                                            "Acosh",
                                            "Add",
                                            "And",
                                            "ArgMax",
                                            "ArgMin",
                                            "Asin",
                                            "Asinh",
                                            "Atan",
                                            "Atanh",
                                            "AveragePool",
                                            "BatchNormalization",
                                            "BitShift",
                                            "BlackmanWindow",
                                            "Cast",
                                            "CastLike",
                                            "Ceil",
                                            "Celu",
                                            "Clip",
                                            "Compress",
                                            "Concat",
                                            "Constant",
                                            "ConstantOfShape",
                                            "Conv",
                                            "ConvInteger",
                                            "ConvTranspose",
                                            "Cos",
                                            "Cosh",
                                            "CumSum",
                                            "DFT",
                                            "DepthToSpace",
                                            "DequantizeLinear",
                                            "Det",
                                            "Div",
                                            "Dropout",
                                            "DynamicQuantizeLinear",
                                            "Einsum",
                                            "Elu",
                                            "Equal",
                                            "Erf",
                                            "Exp",
                                            "Expand",
                                            "EyeLike",
                                            "Flatten",
                                            "Floor",
                                            "GRU",
                                            "Gather",
                                            "GatherElements",
                                            "GatherND",
                                            "Gemm",
                                            "GlobalAveragePool",
                                            "GlobalMaxPool",
                                            "Greater",
                                            "GreaterOrEqual",
                                            "GridSample",
                                            "HammingWindow",
                                            "HannWindow",
                                            "HardSigmoid",
                                            "HardSwish",
                                            "Hardmax",
                                            "Identity",
                                            "InstanceNormalization",
                                            "IsInf",
                                            "IsNaN",
                                            "LRN",
                                            "LSTM",
                                            "LayerNormalization",
                                            "LeakyRelu",
                                            "Less",
                                            "LessOrEqual",
                                            "Log",
                                            "LogSoftmax",
                                            "MatMul",
                                            "MatMulInteger",
                                            "Max",
                                            "MaxPool",
                                            "MaxUnpool",
                                            "Mean",
                                            "MelWeightMatrix",
                                            "MeanVarianceNormalization",
                                            "Min",
                                            "Mod",
                                            "Mul",
                                            "Neg",
                                            "NegativeLogLikelihoodLoss",
                                            "NonMaxSuppression",
                                            "NonZero",
                                            "Not",
                                            "OneHot",
                                            "Or",
                                            "PRelu",
                                            "Pad",
                                            "Pow",
                                            "QLinearConv",
                                            "QLinearMatMul",
                                            "QuantizeLinear",
                                            "RNN",
                                            "Range",
                                            "Reciprocal",
                                            "ReduceL1",
                                            "ReduceL2",
                                            "ReduceLogSum",
                                            "ReduceLogSumExp",
                                            "ReduceMax",
                                            "ReduceMean",
                                            "ReduceMin",
                                            "ReduceProd",
                                            "ReduceSum",
                                            "ReduceSumSquare",
                                            "Relu",
                                            "Reshape",
                                            "Resize",
                                            "ReverseSequence",
                                            "RoiAlign",
                                            "Round",
                                            "STFT",
                                            "Scatter",
                                            "ScatterElements",
                                            "ScatterND",
                                            "Selu",
                                            "Shape",
                                            "Shrink",
                                            "Sigmoid",
                                            "Sign",
                                            "Sin",
                                            "Sinh",
                                            "Size",
                                            "Slice",
                                            "Softmax",
                                            "SoftmaxCrossEntropyLoss",
                                            "Softplus",
                                            "Softsign",
                                            "SpaceToDepth",
                                            "Split",
                                            "Sqrt",
                                            "Squeeze",
                                            "Sub",
                                            "Sum",
                                            "Tan",
                                            "Tanh",
                                            "TfIdfVectorizer",
                                            "ThresholdedRelu",
                                            "Tile",
                                            "TopK",
                                            "Transpose",
                                            "Trilu",
                                            "Unique",
                                            "Unsqueeze",
                                            "Upsample",
                                            "Where",
                                            "Xor"};
  return ops;
}

std::vector<int> shape_operand_positions(const std::string& op) {
  if (op == "Reshape" || op == "Expand" || op == "Split" || op == "Squeeze" || op == "Unsqueeze" ||
      op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax" || op == "ReduceMin" ||
      op == "ReduceProd" || op == "ReduceL1" || op == "ReduceL2" || op == "ReduceLogSum" ||
      op == "ReduceLogSumExp" || op == "ReduceSumSquare" || op == "Tile" || op == "TopK" ||
      op == "OneHot" || op == "Compress" || op == "Upsample")
    return {1};
  // What decides the structure that control flow and sequences resolve to at import.
  if (op == "If" || op == "SequenceAt" || op == "SequenceErase") return {op == "If" ? 0 : 1};
  if (op == "Loop") return {0, 1};
  if (op == "SequenceInsert") return {2};
  if (op == "SplitToSequence") return {1};
  // Ops whose output shape depends on their data: the plan fixes shapes at compile time.
  if (op == "NonZero" || op == "Unique") return {0};
  if (op == "NonMaxSuppression") return {0, 1, 2, 3, 4};
  if (op == "ConstantOfShape" || op == "HannWindow" || op == "HammingWindow" ||
      op == "BlackmanWindow")
    return {0};
  if (op == "MaxUnpool") return {2};
  if (op == "MelWeightMatrix") return {0, 1, 2, 3, 4};
  if (op == "DFT") return {1};
  if (op == "STFT") return {1, 3};
  if (op == "Range") return {0, 1, 2};
  if (op == "Slice") return {1, 2, 3, 4};
  if (op == "Pad") return {1, 2};
  if (op == "Resize") return {1, 2, 3};
  if (op == "Clip" || op == "Dropout") return {1, 2};
  return {};
}

namespace {

int used_outputs(const Node& node) {
  return static_cast<int>(std::count_if(node.outputs.begin(), node.outputs.end(),
                                        [](ValueId v) { return v != kNoValue; }));
}

// Op features outside Tessera's inference subset are rejected at import, naming the feature.
void validate_node(const Graph& graph, const Node& node, const std::string& file) {
  const std::string where = fmt::format("{}: {}", file, node.describe());
  auto unsupported = [&](const std::string& what) {
    throw_user_error("{}: {} is not supported (Tessera compiles inference graphs)", where, what);
  };
  const std::string& op = node.op;
  if (op == "BatchNormalization" &&
      (node.attr_int("training_mode", 0) != 0 || used_outputs(node) > 1))
    unsupported("training-mode BatchNormalization (running mean/var outputs)");
  if (op == "Dropout" && node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
    const Value& t = graph.value(node.inputs[2]);
    if (!t.constant) unsupported("a training_mode input that is not a constant");
    if (t.constant->element_count() != 1 || t.constant->at<double>(0) != 0.0)
      unsupported("training-mode Dropout");
  }
  if (op == "Resize") {
    try {
      ops::parse_resize_mode(node.attr_string("mode", "nearest"));
      ops::parse_coordinate_transform(
          node.attr_string("coordinate_transformation_mode", "half_pixel"));
      ops::parse_nearest_mode(node.attr_string("nearest_mode", "round_prefer_floor"));
    } catch (const UserError& e) {
      unsupported(fmt::format("this Resize mode ({})", e.what()));
    }
  }
  if (op == "Pad") {
    try {
      ops::parse_pad_mode(node.attr_string("mode", "constant"));
    } catch (const UserError& e) {
      unsupported(fmt::format("this Pad mode ({})", e.what()));
    }
  }
}

// Before opset 7, PRelu's slope is per channel (C entries for an N x C x ... input); from
// opset 7 it broadcasts from the right. The version converter keeps the slope as it is, so a
// constant 1-D slope of C entries becomes (C, 1, ..., 1), which broadcasts as before.
void per_channel_prelu_slopes(onnx::ModelProto& model, const std::string& name) {
  onnx::ModelProto typed = model;
  try {
    onnx::ShapeInferenceOptions lenient(false, 0, true);
    onnx::shape_inference::InferShapes(typed, onnx::OpSchemaRegistry::Instance(), lenient);
  } catch (const std::exception&) {
    return;
  }
  std::map<std::string, const onnx::TypeProto*> types;
  for (const auto& vi : typed.graph().value_info()) types[vi.name()] = &vi.type();
  for (const auto& vi : typed.graph().input()) types[vi.name()] = &vi.type();
  onnx::GraphProto* g = model.mutable_graph();
  for (const auto& node : g->node()) {
    if (node.op_type() != "PRelu" || node.input_size() < 2) continue;
    auto t = types.find(node.input(0));
    if (t == types.end() || !t->second->tensor_type().has_shape()) continue;
    const auto& xs = t->second->tensor_type().shape();
    if (xs.dim_size() < 3 || !xs.dim(1).has_dim_value()) continue;
    for (auto& init : *g->mutable_initializer()) {
      if (init.name() != node.input(1) || init.dims_size() != 1 ||
          init.dims(0) != xs.dim(1).dim_value())
        continue;
      for (int d = 2; d < xs.dim_size(); ++d) init.add_dims(1);
      for (auto& in : *g->mutable_input())
        if (in.name() == init.name()) {
          auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
          for (int d = 2; d < xs.dim_size(); ++d) shape->add_dim()->set_dim_value(1);
        }
      log(LogLevel::info, "compiler",
          "{}: PRelu '{}': the per-channel slope '{}' of opsets before 7 is reshaped to broadcast "
          "over "
          "(N, C, ...)",
          name, node.name(), init.name());
    }
  }
}

// Converts a model outside [kMinOpset, kMaxOpset] with libonnx's version converter. What the
// converter cannot do is a UserError naming the ops whose schemas change between the opsets.
onnx::ModelProto convert_opset(const onnx::ModelProto& model, std::int64_t from, std::int64_t to,
                               const std::string& name) {
  const auto latest = static_cast<std::int64_t>(
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second);
  if (from > latest)
    throw_user_error(
        "{}: opset {} is newer than the newest this ONNX library knows ({}); Tessera imports "
        "opsets {}-{} and converts others with the ONNX version converter",
        name, from, latest, kMinOpset, kMaxOpset);
  try {
    // The adapters of broadcasting ops need the shapes of every input, intermediate ones too.
    onnx::ModelProto inferred = model;
    try {
      onnx::ShapeInferenceOptions lenient(false, 0, true);
      onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(), lenient);
    } catch (const std::exception&) {
      inferred = model;  // the converter reports what it then lacks
    }
    onnx::ModelProto converted =
        onnx::version_conversion::ConvertVersion(inferred, static_cast<int>(to));
    log(LogLevel::info, "compiler",
        "{}: converted from opset {} to opset {} with the ONNX version converter", name, from, to);
    if (from < 7 && to >= 7) per_channel_prelu_slopes(converted, name);
    return converted;
  } catch (const std::exception& e) {
    // Name the ops whose definition differs between the two opsets: the converter's adapters
    // for one of them are what is missing.
    std::set<std::string> changed;
    const auto lo = static_cast<int>(std::min(from, to)), hi = static_cast<int>(std::max(from, to));
    for (const auto& node : model.graph().node()) {
      if (!(node.domain().empty() || node.domain() == "ai.onnx")) continue;
      const auto* a = onnx::OpSchemaRegistry::Schema(node.op_type(), lo, node.domain());
      const auto* b = onnx::OpSchemaRegistry::Schema(node.op_type(), hi, node.domain());
      if (a == nullptr || b == nullptr || a->SinceVersion() != b->SinceVersion())
        changed.insert(node.op_type());
    }
    std::string ops;
    for (const auto& op : changed) ops += (ops.empty() ? "" : ", ") + op;
    throw_user_error(
        "{}: opset {} is outside the range Tessera imports ({}-{}) and the ONNX version converter "
        "cannot convert it to opset {}{}{}: {}",
        name, from, kMinOpset, kMaxOpset, to, ops.empty() ? "" : "; ops that change: ", ops,
        e.what());
  }
}

// Import-time folding evaluates what the file says; a hostile file could ask for a huge
// tensor (ConstantOfShape of [1e9, 1e9]). Folding is for shape computations, so it takes only
// small inputs and ops whose result size, bounded from their inputs, stays small; the rest is
// left to run as a graph node.
bool small_enough_to_fold(const std::string& op, const std::vector<const Tensor*>& ins) {
  constexpr double kMaxElements = 1 << 20;
  double in_elements = 0.0;
  for (const Tensor* t : ins)
    if (t) in_elements += static_cast<double>(t->element_count());
  if (in_elements > kMaxElements) return false;
  const auto values = [&](std::size_t i) {
    return i < ins.size() && ins[i] ? ins[i]->to_doubles() : std::vector<double>();
  };
  double out = in_elements;  // most ops produce about as much as they read
  if (op == "ConstantOfShape") {
    out = 1.0;
    for (double d : values(0)) out *= std::max(d, 0.0);
  } else if (op == "Expand") {
    out = static_cast<double>(ins[0]->element_count());
    for (double d : values(1)) out *= std::max(d, 1.0);
  } else if (op == "Tile") {
    out = static_cast<double>(ins[0]->element_count());
    for (double d : values(1)) out *= std::max(d, 0.0);
  } else if (op == "Range") {
    const auto s = values(0), l = values(1), d = values(2);
    if (s.size() != 1 || l.size() != 1 || d.size() != 1 || d[0] == 0.0) return false;
    out = std::ceil((l[0] - s[0]) / d[0]);
  } else if (op == "OneHot") {
    const auto depth = values(1);
    if (depth.size() != 1) return false;
    out = static_cast<double>(ins[0]->element_count()) * std::max(depth[0], 1.0);
  } else if (op == "Resize" || op == "Upsample" || op == "Pad" || op == "EyeLike" ||
             op == "HannWindow" || op == "HammingWindow" || op == "BlackmanWindow" ||
             op == "MaxUnpool" || op == "ConvTranspose") {
    return false;  // sizes from scales, pads or attributes: not a shape computation
  }
  return std::isfinite(out) && out <= kMaxElements;
}

// When some node output has no static shape after ONNX shape inference, evaluates the nodes
// whose inputs are all constants (or that read only the static shape of their input: Shape,
// Size) on the reference ops and turns their outputs into initializers, so that inference
// sees the data. Graph outputs of a known shape are left to the graph. Returns whether anything
// was folded.
bool fold_static_nodes(onnx::ModelProto& model, std::int64_t opset, const std::string& name) {
  onnx::GraphProto* g = model.mutable_graph();
  std::map<std::string, const onnx::TypeProto*> types;
  for (const auto& vi : g->value_info()) types[vi.name()] = &vi.type();
  for (const auto& vi : g->output()) types[vi.name()] = &vi.type();
  for (const auto& vi : g->input()) types[vi.name()] = &vi.type();
  bool unknown = false;
  for (const auto& np : g->node())
    for (const auto& out : np.output()) {
      auto t = types.find(out);
      if (!out.empty() && (t == types.end() || !known_dims(*t->second))) unknown = true;
    }
  if (!unknown) return false;
  std::set<std::string> graph_outputs;
  for (const auto& o : g->output()) graph_outputs.insert(o.name());
  std::map<std::string, Tensor> known;
  for (const auto& init : g->initializer()) known[init.name()] = tensor_from_proto(init, name);
  const auto& supported = supported_ops();
  std::vector<int> folded;
  std::vector<onnx::TensorProto> new_inits;
  for (int i = 0; i < g->node_size(); ++i) {
    const auto& np = g->node(i);
    if (!(np.domain().empty() || np.domain() == "ai.onnx") || !supported.count(np.op_type()))
      continue;
    const std::string where = fmt::format("{}: node '{}' ({})", name, np.name(), np.op_type());
    if (np.op_type() == "Constant") {
      if (np.output_size() == 1) known[np.output(0)] = constant_node_value(np, where);
      continue;
    }
    // A graph output is folded only when its shape is unknown (it depends on the data).
    bool outputs_free = true, shape_unknown = false;
    for (const auto& out : np.output()) {
      outputs_free = outputs_free && !graph_outputs.count(out);
      auto t = types.find(out);
      shape_unknown =
          shape_unknown || (!out.empty() && (t == types.end() || !known_dims(*t->second)));
    }
    if ((!outputs_free && !shape_unknown) || np.output_size() == 0) continue;
    std::vector<Tensor> results;
    if ((np.op_type() == "Shape" || np.op_type() == "Size") && np.input_size() == 1) {
      auto t = types.find(np.input(0));
      if (t == types.end()) continue;
      const auto dims = known_dims(*t->second);
      if (!dims) continue;
      if (np.op_type() == "Size") {
        std::int64_t n = 1;
        for (auto d : *dims) n *= d;
        results.push_back(Tensor::from_ints(DType::i64, Shape{}, {n}));
      } else {
        const auto r = static_cast<std::int64_t>(dims->size());
        std::int64_t start = 0, end = r;
        for (const auto& a : np.attribute()) {
          if (a.name() == "start") start = a.i();
          if (a.name() == "end") end = a.i();
        }
        start = std::clamp(start < 0 ? start + r : start, std::int64_t{0}, r);
        end = std::clamp(end < 0 ? end + r : end, std::int64_t{0}, r);
        std::vector<std::int64_t> v(dims->begin() + start, dims->begin() + std::max(start, end));
        results.push_back(
            Tensor::from_ints(DType::i64, Shape{static_cast<std::int64_t>(v.size())}, v));
      }
    } else {
      std::vector<const Tensor*> ins;
      bool all_known = true;
      for (const auto& in : np.input()) {
        if (in.empty()) {
          ins.push_back(nullptr);
          continue;
        }
        auto k = known.find(in);
        if (k == known.end()) {
          all_known = false;
          break;
        }
        ins.push_back(&k->second);
      }
      if (!all_known || ins.empty() || !small_enough_to_fold(np.op_type(), ins)) continue;
      Node node;
      node.op = np.op_type();
      node.name = np.name().empty() ? fmt::format("{}_{}", np.op_type(), i) : np.name();
      for (const auto& a : np.attribute()) node.attrs[a.name()] = convert_attribute(a, where);
      for (int o = 0; o < np.output_size(); ++o)
        node.outputs.push_back(np.output(o).empty() ? kNoValue : static_cast<ValueId>(o));
      results = run_reference(node, ins, opset);
    }
    for (int o = 0; o < np.output_size() && o < static_cast<int>(results.size()); ++o) {
      const std::string& out = np.output(o);
      if (out.empty()) continue;
      auto t = types.find(out);
      const int et = t != types.end() && t->second->tensor_type().elem_type() != 0
                         ? t->second->tensor_type().elem_type()
                         : onnx_elem_type(results[static_cast<std::size_t>(o)].dtype());
      onnx::TensorProto init;
      init.set_name(out);
      tensor_to_proto(results[static_cast<std::size_t>(o)], et, &init);
      new_inits.push_back(init);
      known[out] = results[static_cast<std::size_t>(o)];
    }
    folded.push_back(i);
  }
  if (folded.empty()) return false;
  for (auto it = folded.rbegin(); it != folded.rend(); ++it)
    g->mutable_node()->DeleteSubrange(*it, 1);
  // An inferred type of a folded value (a rank with unknown dims) would shadow its initializer's
  // dims in the next inference.
  std::set<std::string> folded_values;
  for (const auto& init : new_inits) folded_values.insert(init.name());
  auto* infos = g->mutable_value_info();
  for (int i = infos->size() - 1; i >= 0; --i)
    if (folded_values.count(infos->Get(i).name())) infos->DeleteSubrange(i, 1);
  for (auto& init : new_inits) {
    if (model.ir_version() < 4) {  // initializers are graph inputs before IR 4
      auto* in = g->add_input();
      in->set_name(init.name());
      auto* tt = in->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(init.data_type());
      auto* shape = tt->mutable_shape();
      for (auto d : init.dims()) shape->add_dim()->set_dim_value(d);
    }
    *g->add_initializer() = std::move(init);
  }
  log(LogLevel::debug, "compiler", "{}: folded {} static nodes to find static shapes", name,
      folded.size());
  return true;
}

// ---- Control flow and sequences, resolved at import ----
// Tessera compiles static graphs. An If whose condition is known at compile time is its branch;
// a Loop whose trip count and condition are known is its body, unrolled; a Scan over static
// shapes is its body once per step; a sequence of known length is the list of its tensors, so
// SequenceAt/Insert/Erase/Length/Construct/Empty, SplitToSequence, ConcatFromSequence and
// SequenceMap become plain tensor nodes; an optional is its value or nothing. What decides the
// structure (a condition, a trip count, a position) must be a constant or computed from
// constants; otherwise the import is a UserError naming the node and the operand. Semantics from
// the ONNX operator documentation (onnx/onnx docs/Operators.md, opsets 8-17).

// At most this many body copies, and nodes in the flat graph, per import, so a hostile trip
// count or body size cannot blow up the graph.
constexpr std::int64_t kMaxUnrolledBodies = 65536;
constexpr std::size_t kMaxFlatNodes = std::size_t{1} << 18;

bool is_structural_op(const std::string& op) {
  static const std::set<std::string> ops = {"If",
                                            "Loop",
                                            "Scan",
                                            "SequenceConstruct",
                                            "SequenceEmpty",
                                            "SequenceInsert",
                                            "SequenceAt",
                                            "SequenceErase",
                                            "SequenceLength",
                                            "SplitToSequence",
                                            "ConcatFromSequence",
                                            "SequenceMap",
                                            "Optional",
                                            "OptionalHasElement",
                                            "OptionalGetElement"};
  return ops.count(op) > 0;
}

// What an ONNX name stands for while the structure is resolved.
struct Binding {
  enum class Kind { tensor, sequence, none } kind = Kind::tensor;
  std::string tensor;                 // kind tensor: the value's name in the flat graph
  std::vector<std::string> elements;  // kind sequence: its tensors, in order
};

struct Scope {
  const Scope* parent = nullptr;
  std::map<std::string, Binding> names;
  const Binding* find(const std::string& n) const {
    for (const Scope* s = this; s; s = s->parent) {
      auto it = s->names.find(n);
      if (it != s->names.end()) return &it->second;
    }
    return nullptr;
  }
};

class StructureLowering {
 public:
  StructureLowering(onnx::ModelProto& model, std::int64_t opset, const std::string& name)
      : model_(model), opset_(opset), file_(name) {}

  void run(const std::map<std::string, StructuredValue>& structured_inputs) {
    onnx::GraphProto* g = model_.mutable_graph();
    for (const auto& init : g->initializer()) {
      used_.insert(init.name());
      initializer_.emplace(init.name(), &init);
    }
    for (const auto& in : g->input()) {
      used_.insert(in.name());
      if (in.type().has_tensor_type()) declared_[in.name()] = &in.type();
    }
    collect_names(*g);
    Scope top;
    std::vector<onnx::ValueInfoProto> inputs;
    for (const auto& in : g->input()) {
      if (in.type().has_tensor_type() || initializer_.count(in.name())) {
        top.names[in.name()] = tensor_binding(in.name());
        inputs.push_back(in);
        continue;
      }
      auto bound = structured_inputs.find(in.name());
      if (bound == structured_inputs.end())
        throw_user_error(
            "{}: input '{}' is a sequence or an optional; Tessera compiles static graphs, so its "
            "length and element shapes must be known: bind it at compile time (as `tessera "
            "conformance` does from a test's SequenceProto or OptionalProto)",
            file_, in.name());
      Binding b;
      b.kind = bound->second.kind == StructuredValue::Kind::tensor     ? Binding::Kind::tensor
               : bound->second.kind == StructuredValue::Kind::sequence ? Binding::Kind::sequence
                                                                       : Binding::Kind::none;
      for (std::size_t i = 0; i < bound->second.tensors.size(); ++i) {
        const std::string el = b.kind == Binding::Kind::tensor
                                   ? fresh(in.name() + "/value")
                                   : fresh(fmt::format("{}[{}]", in.name(), i));
        const Tensor& t = bound->second.tensors[i];
        onnx::TensorProto init;
        init.set_name(el);
        // The declared element type (a bound tensor of another dtype converts to it).
        const int declared = element_type(in.type());
        tensor_to_proto(t, map_elem_type(declared) ? declared : onnx_elem_type(t.dtype()), &init);
        new_initializers_.push_back(init);
        known_[el] = t;
        b.elements.push_back(el);
      }
      if (b.kind == Binding::Kind::tensor) {
        if (b.elements.size() != 1)
          throw_user_error("{}: input '{}' is bound to {} tensors, expected one", file_, in.name(),
                           b.elements.size());
        b.tensor = b.elements[0];
        b.elements.clear();
      }
      top.names[in.name()] = b;
    }
    for (const auto& init : g->initializer())
      if (!top.names.count(init.name())) top.names[init.name()] = tensor_binding(init.name());
    for (const auto& np : g->node()) emit_node(np, top, "");

    std::vector<onnx::ValueInfoProto> outputs;
    for (const auto& out : g->output()) {
      const Binding* b = top.find(out.name());
      if (!b) throw_user_error("{}: graph output '{}' is never produced", file_, out.name());
      if (b->kind == Binding::Kind::tensor) {
        onnx::ValueInfoProto o = out;
        if (b->tensor != out.name()) identity(b->tensor, out.name(), "output");
        if (!o.type().has_tensor_type()) {
          o.clear_type();
          o.mutable_type()->mutable_tensor_type()->set_elem_type(output_element_type(out.type()));
        }
        outputs.push_back(o);
        continue;
      }
      // A sequence output is its elements, in order ("name[0]", "name[1]", ...); an empty
      // optional is no output at all.
      for (std::size_t i = 0; i < b->elements.size(); ++i) {
        onnx::ValueInfoProto o;
        o.set_name(fresh(fmt::format("{}[{}]", out.name(), i)));
        o.mutable_type()->mutable_tensor_type()->set_elem_type(output_element_type(out.type()));
        identity(b->elements[i], o.name(), "output");
        outputs.push_back(o);
      }
    }
    g->clear_node();
    for (auto& n : nodes_) *g->add_node() = std::move(n);
    g->clear_input();
    for (auto& in : inputs) *g->add_input() = std::move(in);
    g->clear_output();
    for (auto& o : outputs) *g->add_output() = std::move(o);
    g->clear_value_info();
    for (auto& init : new_initializers_) *g->add_initializer() = std::move(init);
    log(LogLevel::info, "compiler",
        "{}: control flow and sequences resolved at import: {} nodes in the flat graph", file_,
        g->node_size());
  }

 private:
  void collect_names(const onnx::GraphProto& g) {
    for (const auto& n : g.node()) {
      for (const auto& o : n.output()) used_.insert(o);
      for (const auto& a : n.attribute())
        if (a.has_g()) collect_names(a.g());
    }
  }

  static Binding tensor_binding(const std::string& name) {
    Binding b;
    b.tensor = name;
    return b;
  }

  std::string fresh(const std::string& base) {
    std::string n = base;
    for (int i = 1; used_.count(n); ++i) n = fmt::format("{}_{}", base, i);
    used_.insert(n);
    return n;
  }

  // The element type a value's type proto names (of the tensor, sequence element or optional).
  static int element_type(const onnx::TypeProto& t) {
    if (t.has_tensor_type()) return t.tensor_type().elem_type();
    if (t.has_sequence_type()) return element_type(t.sequence_type().elem_type());
    if (t.has_optional_type()) return element_type(t.optional_type().elem_type());
    return onnx::TensorProto::UNDEFINED;
  }
  static int output_element_type(const onnx::TypeProto& t) {
    const int e = element_type(t);
    return e == onnx::TensorProto::UNDEFINED ? onnx::TensorProto::FLOAT : e;
  }

  onnx::NodeProto& add(const std::string& op, std::vector<std::string> inputs,
                       std::vector<std::string> outputs, const std::string& node_name) {
    onnx::NodeProto n;
    n.set_op_type(op);
    n.set_name(fresh(node_name));
    for (auto& i : inputs) n.add_input(i);
    for (auto& o : outputs) {
      producer_[o] = nodes_.size();
      n.add_output(o);
    }
    nodes_.push_back(std::move(n));
    return nodes_.back();
  }

  void identity(const std::string& from, const std::string& to, const std::string& why) {
    add("Identity", {from}, {to}, to + "/" + why);
  }

  // A new constant value (an int64 or bool scalar, or an int64 list), known at once.
  std::string constant(const Tensor& t, int elem_type, const std::string& base) {
    const std::string name = fresh(base);
    onnx::NodeProto& n = add("Constant", {}, {name}, name);
    auto* a = n.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    tensor_to_proto(t, elem_type, a->mutable_t());
    known_[name] = t;
    return name;
  }
  std::string int_constant(std::int64_t v, const std::string& base) {
    return constant(Tensor::from_ints(DType::i64, Shape{}, {v}), onnx::TensorProto::INT64, base);
  }
  std::string ints_constant(const std::vector<std::int64_t>& v, const std::string& base) {
    return constant(Tensor::from_ints(DType::i64, Shape{static_cast<std::int64_t>(v.size())}, v),
                    onnx::TensorProto::INT64, base);
  }

  // The value of a flat-graph tensor when it is known at compile time: an initializer, a
  // Constant, or a node of known inputs evaluated on the reference ops (small ones only).
  const Tensor* value_of(const std::string& name, int depth = 0) {
    if (auto k = known_.find(name); k != known_.end()) return &k->second;
    if (auto i = initializer_.find(name); i != initializer_.end())
      return &(known_[name] = tensor_from_proto(*i->second, file_));
    auto p = producer_.find(name);
    if (p == producer_.end() || depth > 512) return nullptr;
    const onnx::NodeProto np = nodes_[p->second];
    if (!supported_ops().count(np.op_type())) return nullptr;
    const std::string where = fmt::format("{}: node '{}' ({})", file_, np.name(), np.op_type());
    if (np.op_type() == "Constant") return &(known_[name] = constant_node_value(np, where));
    std::vector<const Tensor*> ins;
    for (const auto& in : np.input()) {
      if (in.empty()) {
        ins.push_back(nullptr);
        continue;
      }
      const Tensor* t = value_of(in, depth + 1);
      if (!t) return nullptr;
      ins.push_back(t);
    }
    if (!small_enough_to_fold(np.op_type(), ins)) return nullptr;
    Node node;
    node.op = np.op_type();
    node.name = np.name();
    for (const auto& a : np.attribute()) node.attrs[a.name()] = convert_attribute(a, where);
    for (int o = 0; o < np.output_size(); ++o)
      node.outputs.push_back(np.output(o).empty() ? kNoValue : static_cast<ValueId>(o));
    std::vector<Tensor> results = run_reference(node, ins, opset_);
    for (int o = 0; o < np.output_size() && o < static_cast<int>(results.size()); ++o)
      if (!np.output(o).empty()) known_[np.output(o)] = results[static_cast<std::size_t>(o)];
    auto k = known_.find(name);
    return k == known_.end() ? nullptr : &k->second;
  }

  // An operand that decides the graph's structure: it must be known at compile time.
  const Tensor& structural(const std::string& name, const onnx::NodeProto& np,
                           const std::string& what) {
    const Tensor* t = value_of(name);
    if (!t)
      throw_user_error(
          "{}: node '{}' ({}): its {} ('{}') is computed at run time; Tessera compiles static "
          "graphs, so it must be a constant or computed from constants (bind such a graph input "
          "with --input NAME=FILE)",
          file_, np.name(), np.op_type(), what, name);
    return *t;
  }
  std::int64_t structural_int(const std::string& name, const onnx::NodeProto& np,
                              const std::string& what) {
    const Tensor& t = structural(name, np, what);
    if (t.element_count() != 1)
      throw_user_error("{}: node '{}' ({}): its {} must hold one value, got shape {}", file_,
                       np.name(), np.op_type(), what, t.shape().to_string());
    return t.to_ints()[0];
  }

  // The static dims (outermost first) of a flat-graph tensor, from its value or declaration.
  std::optional<std::vector<std::int64_t>> dims_of(const std::string& name) {
    if (auto d = declared_.find(name); d != declared_.end()) return known_dims(*d->second);
    if (auto i = initializer_.find(name); i != initializer_.end())
      return std::vector<std::int64_t>(i->second->dims().begin(), i->second->dims().end());
    if (const Tensor* t = value_of(name)) return t->shape().outer_first();
    return std::nullopt;
  }

  const Binding& lookup(const Scope& scope, const std::string& name, const onnx::NodeProto& np) {
    const Binding* b = scope.find(name);
    if (!b)
      throw_user_error("{}: node '{}' ({}): input '{}' is not defined before the node", file_,
                       np.name(), np.op_type(), name);
    return *b;
  }
  const std::string& tensor_input(const Scope& scope, const onnx::NodeProto& np, int i) {
    const Binding& b = lookup(scope, np.input(i), np);
    if (b.kind != Binding::Kind::tensor)
      throw_user_error("{}: node '{}' ({}): input {} ('{}') must be a tensor, not a {}", file_,
                       np.name(), np.op_type(), i, np.input(i),
                       b.kind == Binding::Kind::sequence ? "sequence" : "empty optional");
    return b.tensor;
  }
  const std::vector<std::string>& sequence_input(const Scope& scope, const onnx::NodeProto& np,
                                                 int i) {
    const Binding& b = lookup(scope, np.input(i), np);
    if (b.kind != Binding::Kind::sequence)
      throw_user_error("{}: node '{}' ({}): input {} ('{}') must be a sequence", file_, np.name(),
                       np.op_type(), i, np.input(i));
    return b.elements;
  }
  bool has_input(const onnx::NodeProto& np, int i) {
    return i < np.input_size() && !np.input(i).empty();
  }
  static std::int64_t attr_int(const onnx::NodeProto& np, const std::string& n, std::int64_t dflt) {
    for (const auto& a : np.attribute())
      if (a.name() == n) return a.i();
    return dflt;
  }
  static std::vector<std::int64_t> attr_ints(const onnx::NodeProto& np, const std::string& n) {
    for (const auto& a : np.attribute())
      if (a.name() == n) return {a.ints().begin(), a.ints().end()};
    return {};
  }
  static const onnx::GraphProto* attr_graph(const onnx::NodeProto& np, const std::string& n) {
    for (const auto& a : np.attribute())
      if (a.name() == n && a.has_g()) return &a.g();
    return nullptr;
  }

  // The flat name of a node output: top-level names stay, names in inlined bodies get the
  // prefix of their copy.
  std::string out_name(const std::string& prefix, const std::string& out) {
    return prefix.empty() ? (used_.insert(out), out) : fresh(prefix + out);
  }

  void bind_output(Scope& scope, const onnx::NodeProto& np, int i, Binding b,
                   const std::string& prefix) {
    if (i >= np.output_size() || np.output(i).empty()) return;
    if (b.kind == Binding::Kind::tensor) {
      // Top-level outputs keep their names, so the flat graph reads like the file.
      const std::string name = out_name(prefix, np.output(i));
      if (name != b.tensor) identity(b.tensor, name, np.name());
      b.tensor = name;
    }
    scope.names[np.output(i)] = std::move(b);
  }

  void emit_unsqueeze(const std::string& in, const std::string& out, std::int64_t axis,
                      const std::string& base) {
    if (opset_ >= 13) {
      add("Unsqueeze", {in, ints_constant({axis}, base + "/axes")}, {out}, base);
    } else {
      auto& n = add("Unsqueeze", {in}, {out}, base);
      auto* a = n.add_attribute();
      a->set_name("axes");
      a->set_type(onnx::AttributeProto::INTS);
      a->add_ints(axis);
    }
  }

  // Stacks tensors of one shape along a new axis (as a Scan or Loop output collects them).
  void stack(const std::vector<std::string>& parts, const std::string& out, std::int64_t axis,
             const std::string& base, const onnx::NodeProto& np) {
    if (parts.empty())
      throw_user_error(
          "{}: node '{}' ({}): it runs zero iterations, so its scan output '{}' has no element "
          "to take a shape from; Tessera needs at least one",
          file_, np.name(), np.op_type(), out);
    std::vector<std::string> unsqueezed;
    for (const auto& p : parts) {
      unsqueezed.push_back(fresh(p + "/unsqueezed"));
      emit_unsqueeze(p, unsqueezed.back(), axis, base + "/unsqueeze");
    }
    auto& concat = add("Concat", unsqueezed, {out}, base + "/concat");
    auto* a = concat.add_attribute();
    a->set_name("axis");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(axis);
  }

  // Emits a copy of `body` in a scope whose inputs are `inputs`; returns its output bindings.
  std::vector<Binding> inline_body(const onnx::GraphProto& body, const Scope& outer,
                                   const std::vector<Binding>& inputs, const std::string& prefix,
                                   const onnx::NodeProto& np) {
    if (++bodies_ > kMaxUnrolledBodies)
      throw_user_error(
          "{}: node '{}' ({}): more than {} body copies; Tessera unrolls control flow at "
          "compile time, and this model's loops are too long for that",
          file_, np.name(), np.op_type(), kMaxUnrolledBodies);
    if (body.input_size() != static_cast<int>(inputs.size()))
      throw_user_error("{}: node '{}' ({}): its body takes {} inputs, the node gives {}", file_,
                       np.name(), np.op_type(), body.input_size(), inputs.size());
    Scope scope;
    scope.parent = &outer;
    for (int i = 0; i < body.input_size(); ++i)
      scope.names[body.input(i).name()] = inputs[static_cast<std::size_t>(i)];
    for (const auto& init : body.initializer()) {
      onnx::TensorProto copy = init;
      copy.set_name(fresh(prefix + init.name()));
      known_[copy.name()] = tensor_from_proto(copy, file_);
      scope.names[init.name()] = tensor_binding(copy.name());
      new_initializers_.push_back(std::move(copy));
    }
    for (const auto& n : body.node()) emit_node(n, scope, prefix);
    if (nodes_.size() > kMaxFlatNodes)
      throw_user_error(
          "{}: node '{}' ({}): unrolling its body makes more than {} nodes; Tessera unrolls "
          "control flow at compile time, and this model's loops are too large for that",
          file_, np.name(), np.op_type(), kMaxFlatNodes);
    std::vector<Binding> outs;
    for (const auto& o : body.output()) outs.push_back(lookup(scope, o.name(), np));
    return outs;
  }

  void emit_node(const onnx::NodeProto& np, Scope& scope, const std::string& prefix) {
    const std::string& op = np.op_type();
    const bool onnx_domain = np.domain().empty() || np.domain() == "ai.onnx";
    const std::string base = prefix + (np.name().empty() ? op : np.name());
    bool takes_non_tensor = false;
    for (const auto& in : np.input())
      if (!in.empty())
        if (const Binding* b = scope.find(in); b && b->kind != Binding::Kind::tensor)
          takes_non_tensor = true;
    if (!onnx_domain || (!is_structural_op(op) && !(op == "Identity" && takes_non_tensor))) {
      onnx::NodeProto copy = np;
      copy.set_name(prefix.empty() && !np.name().empty() ? np.name() : fresh(base));
      for (int i = 0; i < copy.input_size(); ++i)
        if (!copy.input(i).empty()) copy.set_input(i, tensor_input(scope, np, i));
      for (int i = 0; i < copy.output_size(); ++i) {
        if (copy.output(i).empty()) continue;
        const std::string name = out_name(prefix, np.output(i));
        copy.set_output(i, name);
        scope.names[np.output(i)] = tensor_binding(name);
        producer_[name] = nodes_.size();
      }
      nodes_.push_back(std::move(copy));
      return;
    }
    Binding seq;
    seq.kind = Binding::Kind::sequence;
    if (op == "Identity" || op == "OptionalGetElement") {
      const Binding& in = lookup(scope, np.input(0), np);
      if (in.kind == Binding::Kind::none)
        throw_user_error("{}: node '{}' ({}): input '{}' is an empty optional", file_, np.name(),
                         op, np.input(0));
      bind_output(scope, np, 0, in, prefix);
    } else if (op == "Optional") {
      Binding none;
      none.kind = Binding::Kind::none;
      bind_output(scope, np, 0, has_input(np, 0) ? lookup(scope, np.input(0), np) : none, prefix);
    } else if (op == "OptionalHasElement") {
      const bool has =
          has_input(np, 0) && lookup(scope, np.input(0), np).kind != Binding::Kind::none;
      const std::string c = constant(Tensor::from_ints(DType::boolean, Shape{}, {has ? 1 : 0}),
                                     onnx::TensorProto::BOOL, base);
      bind_output(scope, np, 0, tensor_binding(c), prefix);
    } else if (op == "SequenceEmpty") {
      bind_output(scope, np, 0, seq, prefix);
    } else if (op == "SequenceConstruct") {
      for (int i = 0; i < np.input_size(); ++i) seq.elements.push_back(tensor_input(scope, np, i));
      bind_output(scope, np, 0, seq, prefix);
    } else if (op == "SequenceLength") {
      const auto n = static_cast<std::int64_t>(sequence_input(scope, np, 0).size());
      bind_output(scope, np, 0, tensor_binding(int_constant(n, base)), prefix);
    } else if (op == "SequenceAt" || op == "SequenceInsert" || op == "SequenceErase") {
      seq.elements = sequence_input(scope, np, 0);
      const auto n = static_cast<std::int64_t>(seq.elements.size());
      const int pos_input = op == "SequenceInsert" ? 2 : 1;
      const std::int64_t hi = op == "SequenceInsert" ? n : n - 1;
      std::int64_t pos = has_input(np, pos_input)
                             ? structural_int(tensor_input(scope, np, pos_input), np, "position")
                             : (op == "SequenceInsert" ? n : -1);
      if (pos < -n || pos > hi)
        throw_user_error("{}: node '{}' ({}): position {} is outside [{}, {}] for a sequence of {}",
                         file_, np.name(), op, pos, -n, hi, n);
      if (pos < 0) pos += n;
      const auto at = seq.elements.begin() + pos;
      if (op == "SequenceAt") {
        bind_output(scope, np, 0, tensor_binding(*at), prefix);
        return;
      }
      if (op == "SequenceInsert")
        seq.elements.insert(at, tensor_input(scope, np, 1));
      else
        seq.elements.erase(at);
      bind_output(scope, np, 0, seq, prefix);
    } else if (op == "SplitToSequence") {
      emit_split_to_sequence(np, scope, prefix, base);
    } else if (op == "ConcatFromSequence") {
      const auto& parts = sequence_input(scope, np, 0);
      const std::int64_t axis = attr_int(np, "axis", 0);
      const std::string out = out_name(prefix, np.output(0));
      if (attr_int(np, "new_axis", 0) != 0) {
        stack(parts, out, axis, base, np);
      } else {
        if (parts.empty())
          throw_user_error("{}: node '{}' (ConcatFromSequence): the sequence is empty", file_,
                           np.name());
        auto& c = add("Concat", parts, {out}, base);
        auto* a = c.add_attribute();
        a->set_name("axis");
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(axis);
      }
      scope.names[np.output(0)] = tensor_binding(out);
    } else if (op == "If") {
      const bool then = structural_int(tensor_input(scope, np, 0), np, "condition") != 0;
      const onnx::GraphProto* branch = attr_graph(np, then ? "then_branch" : "else_branch");
      if (!branch)
        throw_user_error("{}: node '{}' (If) has no {}", file_, np.name(),
                         then ? "then_branch" : "else_branch");
      const auto outs = inline_body(*branch, scope, {}, base + (then ? "/then/" : "/else/"), np);
      for (std::size_t i = 0; i < outs.size(); ++i)
        bind_output(scope, np, static_cast<int>(i), outs[i], prefix);
    } else if (op == "Loop") {
      emit_loop(np, scope, prefix, base);
    } else if (op == "Scan") {
      emit_scan(np, scope, prefix, base);
    } else if (op == "SequenceMap") {
      const onnx::GraphProto* body = attr_graph(np, "body");
      if (!body) throw_user_error("{}: node '{}' (SequenceMap) has no body", file_, np.name());
      const auto n = sequence_input(scope, np, 0).size();
      std::vector<Binding> results(static_cast<std::size_t>(np.output_size()), seq);
      for (std::size_t i = 0; i < n; ++i) {
        std::vector<Binding> ins;
        for (int k = 0; k < np.input_size(); ++k) {
          const Binding& b = lookup(scope, np.input(k), np);
          if (b.kind == Binding::Kind::sequence) {
            if (b.elements.size() != n)
              throw_user_error(
                  "{}: node '{}' (SequenceMap): input {} has {} elements, input 0 has {}; the "
                  "sequences must have one length",
                  file_, np.name(), k, b.elements.size(), n);
            ins.push_back(tensor_binding(b.elements[i]));
          } else {
            ins.push_back(b);
          }
        }
        const auto outs = inline_body(*body, scope, ins, fmt::format("{}/{}/", base, i), np);
        for (std::size_t o = 0; o < outs.size() && o < results.size(); ++o) {
          if (outs[o].kind != Binding::Kind::tensor)
            throw_user_error("{}: node '{}' (SequenceMap): body output {} must be a tensor", file_,
                             np.name(), o);
          results[o].elements.push_back(outs[o].tensor);
        }
      }
      for (std::size_t o = 0; o < results.size(); ++o)
        bind_output(scope, np, static_cast<int>(o), results[o], prefix);
    }
  }

  void emit_split_to_sequence(const onnx::NodeProto& np, Scope& scope, const std::string& prefix,
                              const std::string& base) {
    const std::string& x = tensor_input(scope, np, 0);
    const auto dims = dims_of(x);
    if (!dims)
      throw_user_error(
          "{}: node '{}' (SplitToSequence): the shape of input '{}' is not known at compile "
          "time, and the sequence's length depends on it",
          file_, np.name(), np.input(0));
    const auto r = static_cast<std::int64_t>(dims->size());
    std::int64_t axis = attr_int(np, "axis", 0);
    if (axis < -r || axis >= r)
      throw_user_error("{}: node '{}' (SplitToSequence): axis {} is out of range for rank {}",
                       file_, np.name(), axis, r);
    if (axis < 0) axis += r;
    const std::int64_t length = (*dims)[static_cast<std::size_t>(axis)];
    std::vector<std::int64_t> sizes;
    bool squeeze = false;
    if (!has_input(np, 1)) {
      sizes.assign(static_cast<std::size_t>(length), 1);
      squeeze = attr_int(np, "keepdims", 1) == 0;
    } else {
      const Tensor& split = structural(tensor_input(scope, np, 1), np, "split");
      if (split.rank() == 0) {
        const std::int64_t s = split.to_ints()[0];
        if (s <= 0)
          throw_user_error("{}: node '{}' (SplitToSequence): split {} must be positive", file_,
                           np.name(), s);
        for (std::int64_t at = 0; at < length; at += s) sizes.push_back(std::min(s, length - at));
      } else {
        sizes = split.to_ints();
        std::int64_t total = 0;
        for (auto s : sizes) total += s;
        if (total != length ||
            std::any_of(sizes.begin(), sizes.end(), [](auto s) { return s < 0; }))
          throw_user_error(
              "{}: node '{}' (SplitToSequence): split sizes sum to {}, the axis has {}", file_,
              np.name(), total, length);
      }
    }
    Binding seq;
    seq.kind = Binding::Kind::sequence;
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < sizes.size(); ++i)
      parts.push_back(fresh(fmt::format("{}[{}]", base, i)));
    if (!parts.empty()) {
      std::vector<std::string> ins = {x};
      if (opset_ >= 13) ins.push_back(ints_constant(sizes, base + "/split"));
      auto& split = add("Split", ins, parts, base);
      auto* a = split.add_attribute();
      a->set_name("axis");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(axis);
      if (opset_ < 13) {
        auto* s = split.add_attribute();
        s->set_name("split");
        s->set_type(onnx::AttributeProto::INTS);
        for (auto v : sizes) s->add_ints(v);
      }
    }
    for (const auto& p : parts) {
      if (!squeeze) {
        seq.elements.push_back(p);
        continue;
      }
      const std::string sq = fresh(p + "/squeezed");
      if (opset_ >= 13) {
        add("Squeeze", {p, ints_constant({axis}, base + "/axes")}, {sq}, base + "/squeeze");
      } else {
        auto& n = add("Squeeze", {p}, {sq}, base + "/squeeze");
        auto* a = n.add_attribute();
        a->set_name("axes");
        a->set_type(onnx::AttributeProto::INTS);
        a->add_ints(axis);
      }
      seq.elements.push_back(sq);
    }
    bind_output(scope, np, 0, seq, prefix);
  }

  void emit_loop(const onnx::NodeProto& np, Scope& scope, const std::string& prefix,
                 const std::string& base) {
    const onnx::GraphProto* body = attr_graph(np, "body");
    if (!body) throw_user_error("{}: node '{}' (Loop) has no body", file_, np.name());
    const std::int64_t trips = has_input(np, 0)
                                   ? structural_int(tensor_input(scope, np, 0), np, "trip count M")
                                   : std::numeric_limits<std::int64_t>::max();
    bool cond =
        !has_input(np, 1) || structural_int(tensor_input(scope, np, 1), np, "condition") != 0;
    const int carried = np.input_size() - 2;
    if (carried < 0 || body->output_size() < 1 + carried)
      throw_user_error("{}: node '{}' (Loop): its body has {} outputs for {} loop-carried values",
                       file_, np.name(), body->output_size(), carried);
    std::vector<Binding> state;
    for (int k = 0; k < carried; ++k) state.push_back(lookup(scope, np.input(2 + k), np));
    const int scans = body->output_size() - 1 - carried;
    std::vector<std::vector<std::string>> scanned(static_cast<std::size_t>(scans));
    for (std::int64_t i = 0; i < trips && cond; ++i) {
      const std::string it = fmt::format("{}/{}/", base, i);
      std::vector<Binding> ins = {
          tensor_binding(int_constant(i, it + "iteration")),
          tensor_binding(constant(Tensor::from_ints(DType::boolean, Shape{}, {1}),
                                  onnx::TensorProto::BOOL, it + "condition"))};
      ins.insert(ins.end(), state.begin(), state.end());
      const auto outs = inline_body(*body, scope, ins, it, np);
      if (outs[0].kind != Binding::Kind::tensor)
        throw_user_error("{}: node '{}' (Loop): the body's condition must be a tensor", file_,
                         np.name());
      cond = structural_int(outs[0].tensor, np, "body's condition output") != 0;
      for (int k = 0; k < carried; ++k)
        state[static_cast<std::size_t>(k)] = outs[static_cast<std::size_t>(1 + k)];
      for (int s = 0; s < scans; ++s) {
        const Binding& b = outs[static_cast<std::size_t>(1 + carried + s)];
        if (b.kind != Binding::Kind::tensor)
          throw_user_error("{}: node '{}' (Loop): scan output {} must be a tensor", file_,
                           np.name(), s);
        scanned[static_cast<std::size_t>(s)].push_back(b.tensor);
      }
    }
    for (int k = 0; k < carried; ++k)
      bind_output(scope, np, k, state[static_cast<std::size_t>(k)], prefix);
    for (int s = 0; s < scans; ++s) {
      if (carried + s >= np.output_size() || np.output(carried + s).empty()) continue;
      const std::string out = out_name(prefix, np.output(carried + s));
      stack(scanned[static_cast<std::size_t>(s)], out, 0, base + fmt::format("/scan{}", s), np);
      scope.names[np.output(carried + s)] = tensor_binding(out);
    }
  }

  // A slice of `x` at `index` along `axis`, dropping the axis (Gather with a scalar index).
  std::string take(const std::string& x, std::int64_t index, std::int64_t axis,
                   const std::string& base) {
    const std::string out = fresh(base);
    auto& g = add("Gather", {x, int_constant(index, base + "/index")}, {out}, base);
    auto* a = g.add_attribute();
    a->set_name("axis");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(axis);
    return out;
  }

  void emit_scan(const onnx::NodeProto& np, Scope& scope, const std::string& prefix,
                 const std::string& base) {
    const onnx::GraphProto* body = attr_graph(np, "body");
    if (!body) throw_user_error("{}: node '{}' (Scan) has no body", file_, np.name());
    const bool batched = opset_ < 9;  // Scan-8: every input and output has a batch axis first
    const int first = batched ? 1 : 0;
    if (batched && has_input(np, 0))
      throw_user_error(
          "{}: node '{}' (Scan-8): sequence_lens is not supported; Tessera compiles static "
          "shapes, so every batch entry runs the full sequence (leave the input empty)",
          file_, np.name());
    const std::int64_t num_scan = attr_int(np, "num_scan_inputs", 0);
    const int states = np.input_size() - first - static_cast<int>(num_scan);
    if (num_scan < 1 || states < 0)
      throw_user_error("{}: node '{}' (Scan): num_scan_inputs {} does not fit its {} inputs", file_,
                       np.name(), num_scan, np.input_size());
    const int scan_outputs = body->output_size() - states;
    if (scan_outputs < 0 || body->input_size() != states + static_cast<int>(num_scan))
      throw_user_error(
          "{}: node '{}' (Scan): its body has {} inputs and {} outputs for {} states and {} scan "
          "inputs",
          file_, np.name(), body->input_size(), body->output_size(), states, num_scan);
    auto per_input = [&](const char* attr, int count) {
      std::vector<std::int64_t> v = attr_ints(np, attr);
      if (v.empty()) v.assign(static_cast<std::size_t>(count), 0);
      if (static_cast<int>(v.size()) != count)
        throw_user_error("{}: node '{}' (Scan): {} has {} entries, expected {}", file_, np.name(),
                         attr, v.size(), count);
      return v;
    };
    const auto in_axes = per_input("scan_input_axes", static_cast<int>(num_scan));
    const auto in_dirs =
        per_input(batched ? "directions" : "scan_input_directions", static_cast<int>(num_scan));
    const auto out_axes = per_input("scan_output_axes", scan_outputs);
    const auto out_dirs = per_input("scan_output_directions", scan_outputs);
    // Each scan input's rank and length along its axis (the axis after the batch one in Scan-8).
    std::int64_t steps = -1, batch = 1;
    std::vector<std::int64_t> axes;
    for (std::int64_t s = 0; s < num_scan; ++s) {
      const int input = first + states + static_cast<int>(s);
      const auto dims = dims_of(tensor_input(scope, np, input));
      if (!dims)
        throw_user_error(
            "{}: node '{}' (Scan): the shape of scan input '{}' is not known at compile time",
            file_, np.name(), np.input(input));
      const auto r = static_cast<std::int64_t>(dims->size()) - (batched ? 1 : 0);
      std::int64_t axis = in_axes[static_cast<std::size_t>(s)];
      if (axis < -r || axis >= r)
        throw_user_error("{}: node '{}' (Scan): scan input axis {} is out of range for rank {}",
                         file_, np.name(), axis, r);
      if (axis < 0) axis += r;
      if (batched) batch = (*dims)[0];
      const std::int64_t len = (*dims)[static_cast<std::size_t>(axis + (batched ? 1 : 0))];
      if (steps >= 0 && len != steps)
        throw_user_error("{}: node '{}' (Scan): scan inputs have lengths {} and {}", file_,
                         np.name(), steps, len);
      steps = len;
      axes.push_back(axis);
    }
    std::vector<Binding> final_states(static_cast<std::size_t>(states));
    std::vector<std::vector<std::string>> batch_states(static_cast<std::size_t>(states)),
        batch_scans(static_cast<std::size_t>(scan_outputs));
    for (std::int64_t b = 0; b < batch; ++b) {
      const std::string bb = batched ? fmt::format("{}/batch{}", base, b) : base;
      std::vector<Binding> state;
      for (int k = 0; k < states; ++k) {
        const std::string& init = tensor_input(scope, np, first + k);
        state.push_back(tensor_binding(batched ? take(init, b, 0, bb + "/state") : init));
      }
      std::vector<std::string> sliced_inputs;
      for (std::int64_t s = 0; s < num_scan; ++s) {
        const std::string& x = tensor_input(scope, np, first + states + static_cast<int>(s));
        sliced_inputs.push_back(batched ? take(x, b, 0, bb + "/input") : x);
      }
      std::vector<std::vector<std::string>> scanned(static_cast<std::size_t>(scan_outputs));
      for (std::int64_t t = 0; t < steps; ++t) {
        const std::string it = fmt::format("{}/{}/", bb, t);
        std::vector<Binding> ins = state;
        for (std::int64_t s = 0; s < num_scan; ++s) {
          const std::int64_t at = in_dirs[static_cast<std::size_t>(s)] != 0 ? steps - 1 - t : t;
          ins.push_back(tensor_binding(take(sliced_inputs[static_cast<std::size_t>(s)], at,
                                            axes[static_cast<std::size_t>(s)], it + "slice")));
        }
        const auto outs = inline_body(*body, scope, ins, it, np);
        for (int k = 0; k < states; ++k)
          state[static_cast<std::size_t>(k)] = outs[static_cast<std::size_t>(k)];
        for (int o = 0; o < scan_outputs; ++o)
          scanned[static_cast<std::size_t>(o)].push_back(
              outs[static_cast<std::size_t>(states + o)].tensor);
      }
      for (int k = 0; k < states; ++k) {
        final_states[static_cast<std::size_t>(k)] = state[static_cast<std::size_t>(k)];
        batch_states[static_cast<std::size_t>(k)].push_back(
            state[static_cast<std::size_t>(k)].tensor);
      }
      for (int o = 0; o < scan_outputs; ++o) {
        auto parts = scanned[static_cast<std::size_t>(o)];
        if (out_dirs[static_cast<std::size_t>(o)] != 0) std::reverse(parts.begin(), parts.end());
        const std::int64_t axis = out_axes[static_cast<std::size_t>(o)];
        if (axis < 0)
          throw_user_error("{}: node '{}' (Scan): negative scan_output_axes ({}) are not supported",
                           file_, np.name(), axis);
        const std::string stacked = fresh(fmt::format("{}/scan{}", bb, o));
        stack(parts, stacked, axis, bb + fmt::format("/scan{}", o), np);
        batch_scans[static_cast<std::size_t>(o)].push_back(stacked);
      }
    }
    for (int k = 0; k < states; ++k) {
      if (!batched) {
        bind_output(scope, np, k, final_states[static_cast<std::size_t>(k)], prefix);
        continue;
      }
      if (k >= np.output_size() || np.output(k).empty()) continue;
      const std::string out = out_name(prefix, np.output(k));
      stack(batch_states[static_cast<std::size_t>(k)], out, 0, base + "/states", np);
      scope.names[np.output(k)] = tensor_binding(out);
    }
    for (int o = 0; o < scan_outputs; ++o) {
      if (states + o >= np.output_size() || np.output(states + o).empty()) continue;
      const auto& parts = batch_scans[static_cast<std::size_t>(o)];
      if (!batched) {
        bind_output(scope, np, states + o, tensor_binding(parts[0]), prefix);
        continue;
      }
      const std::string out = out_name(prefix, np.output(states + o));
      stack(parts, out, 0, base + fmt::format("/scan{}", o), np);
      scope.names[np.output(states + o)] = tensor_binding(out);
    }
  }

  onnx::ModelProto& model_;
  std::int64_t opset_;
  std::string file_;
  std::set<std::string> used_;
  std::map<std::string, const onnx::TensorProto*> initializer_;
  std::map<std::string, const onnx::TypeProto*> declared_;
  std::map<std::string, Tensor> known_;
  std::map<std::string, std::size_t> producer_;
  std::vector<onnx::NodeProto> nodes_;
  std::vector<onnx::TensorProto> new_initializers_;
  std::int64_t bodies_ = 0;
};

bool has_structure(const onnx::GraphProto& g) {
  for (const auto& in : g.input())
    if (in.type().has_sequence_type() || in.type().has_optional_type()) return true;
  for (const auto& out : g.output())
    if (out.type().has_sequence_type() || out.type().has_optional_type()) return true;
  for (const auto& n : g.node())
    if ((n.domain().empty() || n.domain() == "ai.onnx") && is_structural_op(n.op_type()))
      return true;
  return false;
}

// A value computed from constants alone is sized by the model, not by what the user feeds it.
// A few bytes of constants blown up to gigabytes (an Expand or ConstantOfShape to 2^30
// elements) is a malformed or hostile model: refuse it before anything allocates, rather than
// fill the host's memory. Real networks' constant-derived tensors (masks, position tables) stay
// far below both bounds.
constexpr std::uint64_t kConstantDerivedFloorBytes = std::uint64_t{256} << 20;
constexpr std::uint64_t kConstantExpansionRatio = 1024;

void check_constant_expansion(const Graph& graph, const std::string& name) {
  std::uint64_t constant_bytes = 0;
  std::vector<bool> from_constants(graph.values.size(), false);
  for (std::size_t v = 0; v < graph.values.size(); ++v)
    if (graph.values[v].is_constant()) {
      from_constants[v] = true;
      constant_bytes += graph.values[v].bytes();
    }
  const std::uint64_t limit =
      std::max(kConstantDerivedFloorBytes, constant_bytes * kConstantExpansionRatio);
  for (const Node& node : graph.nodes) {
    bool derived = true;
    for (ValueId in : node.inputs)
      if (in != kNoValue && !from_constants[static_cast<std::size_t>(in)]) derived = false;
    if (!derived) continue;
    for (ValueId out : node.outputs) {
      if (out == kNoValue) continue;
      from_constants[static_cast<std::size_t>(out)] = true;
      const Value& v = graph.value(out);
      if (v.bytes() > limit)
        throw_user_error(
            "{}: {}: output '{}' of shape {} ({} B) is computed from the model's {} B of "
            "constants alone, more than {} B (the larger of 256 MiB and {}x the constants); the "
            "model looks malformed. A tensor this large should be a graph input or stored as an "
            "initializer",
            name, node.describe(), v.name, v.shape.to_string(), v.bytes(), constant_bytes, limit,
            kConstantExpansionRatio);
    }
  }
}

// libonnx's shape inference as import runs it: strict, else lenient (what strict said is
// returned, for messages about shapes it then left unknown; empty when strict passed).
std::string infer_shapes(onnx::ModelProto& model, const std::string& name) {
  try {
    onnx::ShapeInferenceOptions strict(false, 1, true);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), strict);
    return {};
  } catch (const std::exception& e) {
    try {
      onnx::ShapeInferenceOptions lenient(false, 0, true);
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), lenient);
    } catch (const std::exception& e2) {
      throw_user_error("{}: ONNX shape inference failed: {}", name, e2.what());
    }
    return e.what();
  }
}

// Tessera's guards, then libonnx's checker: what libonnx's converter and inference need first.
void guard_and_check(onnx::ModelProto& model, const std::string& name) {
  detail::guard_tensor_sizes(model, name);
  detail::guard_graph(model, name);
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw_user_error("{}: invalid ONNX model: {}", name, e.what());
  }
}

Graph build_graph(onnx::ModelProto& model, const std::string& name, const ImportOptions& options) {
  std::int64_t opset = default_opset(model);
  if (opset == 0) throw_user_error("{}: the model imports no default-domain (ai.onnx) opset", name);
  if (opset < kMinOpset || opset > kMaxOpset) {
    const std::int64_t target = std::clamp(opset, kMinOpset, kMaxOpset);
    // libonnx's version converter trusts the graph as the checker does: Tessera checks first.
    guard_and_check(model, name);
    model = convert_opset(model, opset, target, name);
    opset = target;
  }
  onnx::GraphProto* g = model.mutable_graph();

  // Bind constant inputs: they become initializers so shape inference can use their data.
  std::set<std::string> initializer_names;
  for (const auto& init : g->initializer()) initializer_names.insert(init.name());
  for (const auto& [input_name, tensor] : options.constant_inputs) {
    int found = -1;
    for (int i = 0; i < g->input_size(); ++i)
      if (g->input(i).name() == input_name) found = i;
    if (found < 0) continue;
    const int et = g->input(found).type().tensor_type().elem_type();
    onnx::TensorProto* init = nullptr;
    for (auto& existing : *g->mutable_initializer())
      if (existing.name() == input_name) init = &existing;
    if (!init) init = g->add_initializer();
    init->Clear();
    init->set_name(input_name);
    tensor_to_proto(tensor, et, init);
    initializer_names.insert(input_name);
    if (model.ir_version() >= 4) g->mutable_input()->DeleteSubrange(found, 1);
  }

  if (has_structure(*g)) StructureLowering(model, opset, name).run(options.structured_inputs);

  // Symbolic dims of the real inputs take the values given with --dim.
  for (auto& input : *g->mutable_input()) {
    if (initializer_names.count(input.name())) continue;
    if (!input.type().has_tensor_type())
      throw_user_error("{}: input '{}' is not a tensor (sequences and maps are not supported)",
                       name, input.name());
    auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (!input.type().tensor_type().has_shape())
      throw_user_error(
          "{}: input '{}' has no shape; Tessera compiles static shapes, so the "
          "model must declare its input shapes",
          name, input.name());
    for (int d = 0; d < shape->dim_size(); ++d) {
      auto* dim = shape->mutable_dim(d);
      if (dim->has_dim_value()) continue;
      if (dim->has_dim_param()) {
        auto it = options.dims.find(dim->dim_param());
        if (it == options.dims.end())
          throw_user_error(
              "{}: input '{}' dimension {} is symbolic ('{}'); give it a value with "
              "--dim {}=VALUE",
              name, input.name(), d, dim->dim_param(), dim->dim_param());
        if (it->second <= 0)
          throw_user_error("{}: --dim {}={} must be positive", name, it->first, it->second);
        dim->set_dim_value(it->second);
      } else {
        throw_user_error(
            "{}: input '{}' dimension {} has no size; Tessera compiles static "
            "shapes, so fix the dimension in the model",
            name, input.name(), d);
      }
    }
  }

  // libonnx's checker and shape inference trust what they index by; Tessera checks first.
  guard_and_check(model, name);
  std::string inference_error;
  const auto infer = [&] { inference_error = infer_shapes(model, name); };
  infer();
  // Shapes ONNX's data propagation cannot follow (a Reshape fed by arithmetic on Shape, as the
  // expanded function bodies write them) come from evaluating the static part of the graph.
  for (int round = 0; round < g->node_size() && fold_static_nodes(model, opset, name); ++round) {
    inference_error.clear();
    infer();
  }

  Graph graph;
  graph.source = name;
  graph.name = g->name();
  graph.opset = opset;
  if (!model.producer_name().empty()) graph.metadata["producer"] = model.producer_name();
  for (const auto& prop : model.metadata_props()) graph.metadata[prop.key()] = prop.value();

  std::map<std::string, ValueId> ids;
  std::map<std::string, const onnx::TypeProto*> types;
  for (const auto& vi : g->value_info()) types[vi.name()] = &vi.type();
  for (const auto& vi : g->output()) types[vi.name()] = &vi.type();
  for (const auto& vi : g->input()) types[vi.name()] = &vi.type();

  for (const auto& init : g->initializer()) {
    ids[init.name()] = graph.add_constant(init.name(), tensor_from_proto(init, name));
  }
  for (const auto& input : g->input()) {
    if (ids.count(input.name())) continue;  // an initializer with a default (ir_version < 4)
    const std::string where = fmt::format("{}: input '{}'", name, input.name());
    Value v;
    v.name = input.name();
    v.dtype = require_dtype(input.type().tensor_type().elem_type(), where);
    auto dims = known_dims(input.type());
    if (!dims) throw_user_error("{}: shape unknown", where);
    v.shape = make_shape(*dims, where);
    const ValueId id = graph.add_value(std::move(v));
    ids[input.name()] = id;
    graph.inputs.push_back(id);
  }

  const auto& supported = supported_ops();
  int index = 0;
  for (const auto& np : g->node()) {
    Node node;
    node.op = np.op_type();
    node.name = np.name().empty() ? fmt::format("{}_{}", np.op_type(), index) : np.name();
    ++index;
    const std::string where = fmt::format("{}: node '{}' ({})", name, node.name, node.op);
    if (!(np.domain().empty() || np.domain() == "ai.onnx"))
      throw_user_error("{}: op domain '{}' is not supported (only the default ONNX domain is)",
                       where, np.domain());
    if (!supported.count(node.op)) detail::unsupported_op_error(where, node.op, supported);
    if (node.op == "Constant") {
      if (np.output_size() != 1) throw_user_error("{}: Constant must have one output", where);
      ids[np.output(0)] = graph.add_constant(np.output(0), constant_node_value(np, where));
      continue;
    }
    for (const auto& a : np.attribute()) node.attrs[a.name()] = convert_attribute(a, where);
    for (const auto& in : np.input()) {
      if (in.empty()) {
        node.inputs.push_back(kNoValue);
        continue;
      }
      auto it = ids.find(in);
      if (it == ids.end())
        throw_user_error("{}: input '{}' is not defined before the node", where, in);
      node.inputs.push_back(it->second);
    }
    for (const auto& out : np.output()) {
      if (out.empty()) {
        node.outputs.push_back(kNoValue);
        continue;
      }
      Value v;
      v.name = out;
      auto t = types.find(out);
      std::optional<std::vector<std::int64_t>> dims;
      if (t != types.end() && t->second->has_tensor_type()) {
        v.dtype =
            require_dtype(t->second->tensor_type().elem_type(), where + " output '" + out + "'");
        dims = known_dims(*t->second);
      }
      if (!dims)
        throw_user_error(
            "{}: the shape of output '{}' could not be inferred statically{}{}. "
            "Tessera compiles static shapes: give symbolic dims with --dim, and "
            "make shape operands constants (bind such inputs with --input)",
            where, out,
            inference_error.empty() ? "" : "; ONNX shape inference said: ", inference_error);
      v.shape = make_shape(*dims, where + " output '" + out + "'");
      check_host_memory(static_cast<std::uint64_t>(v.shape.element_count()) * dtype_size(v.dtype),
                        fmt::format("{} output '{}' of shape {}", where, out, v.shape.to_string()));
      const ValueId id = graph.add_value(std::move(v));
      ids[out] = id;
      node.outputs.push_back(id);
    }
    graph.add_node(std::move(node));
  }
  for (const Node& node : graph.nodes) validate_node(graph, node, name);
  // A shape operand read at run time would change shapes the plan fixed at compile time.
  for (const Node& node : graph.nodes)
    for (int pos : shape_operand_positions(node.op)) {
      if (node.op == "Clip" || node.op == "Dropout" || (node.op == "Resize" && pos == 1)) continue;
      if (pos >= static_cast<int>(node.inputs.size()) ||
          node.inputs[static_cast<std::size_t>(pos)] == kNoValue)
        continue;
      const ValueId v = node.inputs[static_cast<std::size_t>(pos)];
      if (std::find(graph.inputs.begin(), graph.inputs.end(), v) != graph.inputs.end())
        throw_user_error(
            "{}: {}: shape operands fed at run time are not supported: input {} ('{}') sets "
            "output shapes, and Tessera compiles static shapes. Bind it with --input {}=FILE so it "
            "becomes a constant",
            name, node.describe(), pos, graph.value(v).name, graph.value(v).name);
    }
  // Shapes are static from here on: auto_pad becomes explicit pads once, for every backend.
  resolve_auto_pad(graph);
  for (const auto& out : g->output()) {
    auto it = ids.find(out.name());
    if (it == ids.end())
      throw_user_error("{}: graph output '{}' is never produced", name, out.name());
    graph.outputs.push_back(it->second);
  }
  if (graph.outputs.empty()) throw_user_error("{}: the graph has no outputs", name);
  graph.reindex();
  check_constant_expansion(graph, name);
  log(LogLevel::info, "compiler", "imported {}: {} nodes, {} inputs, {} outputs, opset {}", name,
      graph.nodes.size(), graph.inputs.size(), graph.outputs.size(), opset);
  return graph;
}

}  // namespace

Graph import_onnx_bytes(std::span<const std::byte> bytes, const std::string& name,
                        const ImportOptions& options) {
  onnx::ModelProto model = parse_model(bytes, name);
  try {
    return build_graph(model, name, options);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    // protobuf/ONNX library exceptions on hostile input: still the file's fault.
    throw_user_error("{}: cannot import the model: {}", name, e.what());
  }
}

Graph import_onnx_file(const std::string& path, const ImportOptions& options) {
  const auto bytes = read_file(path, "ONNX model");
  return import_onnx_bytes(bytes, path, options);
}

std::vector<std::string> shape_operand_inputs(const std::string& path) {
  const auto bytes = read_file(path, "ONNX model");
  onnx::ModelProto model = parse_model(bytes, path);
  std::set<std::string> graph_inputs, initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  for (const auto& in : model.graph().input())
    if (!initializers.count(in.name())) graph_inputs.insert(in.name());
  // A shape operand may be computed from graph inputs (Cast, arithmetic...): follow its
  // producers back, except through Shape and Size, which read only their input's shape.
  std::map<std::string, const onnx::NodeProto*> producer;
  for (const auto& node : model.graph().node())
    for (const auto& out : node.output()) producer[out] = &node;
  std::vector<std::string> result;
  std::set<std::string> visited;
  std::vector<std::string> work;
  for (const auto& node : model.graph().node())
    for (int pos : shape_operand_positions(node.op_type()))
      if (pos < node.input_size() && !node.input(pos).empty()) work.push_back(node.input(pos));
  while (!work.empty()) {
    const std::string v = work.back();
    work.pop_back();
    if (!visited.insert(v).second) continue;
    if (graph_inputs.count(v)) {
      result.push_back(v);
      continue;
    }
    auto p = producer.find(v);
    if (p == producer.end() || p->second->op_type() == "Shape" || p->second->op_type() == "Size")
      continue;
    for (const auto& in : p->second->input())
      if (!in.empty()) work.push_back(in);
  }
  // In the order of the graph's inputs.
  std::vector<std::string> ordered;
  for (const auto& in : model.graph().input())
    if (std::find(result.begin(), result.end(), in.name()) != result.end())
      ordered.push_back(in.name());
  return ordered;
}

std::vector<std::string> model_input_names(const std::string& path) {
  const auto bytes = read_file(path, "ONNX model");
  const onnx::ModelProto model = parse_model(bytes, path);
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  std::vector<std::string> names;
  for (const auto& in : model.graph().input())
    if (!initializers.count(in.name())) names.push_back(in.name());
  return names;
}

std::vector<std::vector<std::string>> model_input_dim_params(const std::string& path) {
  const auto bytes = read_file(path, "ONNX model");
  const onnx::ModelProto model = parse_model(bytes, path);
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  std::vector<std::vector<std::string>> params;
  for (const auto& in : model.graph().input()) {
    if (initializers.count(in.name())) continue;
    params.emplace_back();
    for (const auto& d : in.type().tensor_type().shape().dim())
      params.back().push_back(d.has_dim_param() ? d.dim_param() : std::string());
  }
  return params;
}

std::vector<DType> model_input_dtypes(const std::string& path) {
  const auto bytes = read_file(path, "ONNX model");
  const onnx::ModelProto model = parse_model(bytes, path);
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  std::vector<DType> types;
  for (const auto& in : model.graph().input())
    if (!initializers.count(in.name()))
      types.push_back(map_elem_type(in.type().tensor_type().elem_type()).value_or(DType::f32));
  return types;
}

Tensor decode_tensor_pb(std::span<const std::byte> bytes, const std::string& name) {
  onnx::TensorProto proto;
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw_user_error("{}: not a serialized onnx.TensorProto (truncated or corrupt)", name);
  if (!proto.has_data_type()) throw_user_error("{}: TensorProto has no data type", name);
  return tensor_from_proto(proto, name);
}

std::vector<ValueKind> model_value_kinds(const std::string& path, bool outputs) {
  const auto bytes = read_file(path, "ONNX model");
  const onnx::ModelProto model = parse_model(bytes, path);
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  std::vector<ValueKind> kinds;
  for (const auto& v : outputs ? model.graph().output() : model.graph().input())
    if (outputs || !initializers.count(v.name()))
      kinds.push_back(v.type().has_sequence_type()   ? ValueKind::sequence
                      : v.type().has_optional_type() ? ValueKind::optional
                                                     : ValueKind::tensor);
  return kinds;
}

namespace {

StructuredValue sequence_value(const onnx::SequenceProto& seq, const std::string& name) {
  if (seq.sequence_values_size() > 0 || seq.map_values_size() > 0 || seq.optional_values_size() > 0)
    throw_user_error("{}: a sequence of sequences, maps or optionals is not supported", name);
  StructuredValue v;
  v.kind = StructuredValue::Kind::sequence;
  for (const auto& t : seq.tensor_values()) v.tensors.push_back(tensor_from_proto(t, name));
  return v;
}

}  // namespace

StructuredValue load_structured_pb(const std::string& path, ValueKind kind) {
  const auto bytes = read_file(path, "value file");
  StructuredValue v;
  if (kind == ValueKind::tensor) {
    v.tensors.push_back(decode_tensor_pb(bytes, path));
    return v;
  }
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw_user_error("{}: larger than 2 GiB, the limit of a protobuf message", path);
  const int size = static_cast<int>(bytes.size());
  if (kind == ValueKind::sequence) {
    onnx::SequenceProto seq;
    if (!seq.ParseFromArray(bytes.data(), size))
      throw_user_error("{}: not a serialized onnx.SequenceProto (truncated or corrupt)", path);
    return sequence_value(seq, path);
  }
  onnx::OptionalProto opt;
  if (!opt.ParseFromArray(bytes.data(), size))
    throw_user_error("{}: not a serialized onnx.OptionalProto (truncated or corrupt)", path);
  v.kind = StructuredValue::Kind::none;
  if (opt.has_tensor_value()) {
    v.kind = StructuredValue::Kind::tensor;
    v.tensors.push_back(tensor_from_proto(opt.tensor_value(), path));
  } else if (opt.has_sequence_value()) {
    v = sequence_value(opt.sequence_value(), path);
  }
  return v;
}

Tensor load_tensor_pb(const std::string& path) {
  return decode_tensor_pb(read_file(path, "tensor file"), path);
}

Tensor load_tensor_file(const std::string& path) {
  if (path.size() >= 3 && path.compare(path.size() - 3, 3, ".pb") == 0) return load_tensor_pb(path);
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0) return load_npy(path);
  throw_user_error(
      "input file '{}': unknown format; use a .npy (NumPy) or .pb (onnx.TensorProto) file", path);
}

namespace {

// Constants up to this many elements reach shape inference with their data (shape operands,
// scales, pads, Compress's condition); larger ones (weights) only with their type, which is all
// inference reads of them.
constexpr std::int64_t kMaxInferenceData = std::int64_t{1} << 16;

// The ONNX op a compiled node derives its output type as: Int8* nodes compute as their float op
// (Int8Gemm's weights are (K, N), a MatMul's) and Int8Relu / Int8Clip keep the input's type.
// The quantize pass's QuantizeLinear / DequantizeLinear in a graph of an opset before 10, where
// ONNX has neither, convert like a Cast.
std::string onnx_op_of(const Node& n, std::int64_t opset) {
  if (is_int8_op(n.op)) {
    const std::string op = n.op.substr(4);
    if (op == "Gemm") return "MatMul";
    if (op == "Relu" || op == "Clip") return "Identity";
    return op;
  }
  if ((n.op == "QuantizeLinear" || n.op == "DequantizeLinear") && opset < 10) return "Cast";
  return n.op;
}

[[noreturn]] void corrupt_model_file(const std::string& file, const std::string& what) {
  throw_user_error("{}: corrupt Tessera model file ({}); recompile it with `tessera compile`", file,
                   what);
}

}  // namespace

void detail::check_derived_types(const Graph& graph, const std::string& file) {
  if (graph.opset < kMinOpset || graph.opset > kMaxOpset)
    corrupt_model_file(
        file, fmt::format("opset {} is outside {}-{}, the opsets Tessera compiles to", graph.opset,
                          kMinOpset, kMaxOpset));
  // Values are named by index: the names a file stores may repeat or be empty.
  const auto id_name = [](ValueId v) { return fmt::format("v{}", v); };
  const auto onnx_dtype = [](const Value& v) { return v.narrowed_from.value_or(v.dtype); };

  onnx::ModelProto model;
  model.set_ir_version(onnx::IR_VERSION);
  auto* opset_import = model.add_opset_import();
  opset_import->set_domain("");
  opset_import->set_version(graph.opset);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name(graph.name);
  const auto declare = [&](ValueId id) {
    const Value& v = graph.value(id);
    auto* vi = g->add_input();
    vi->set_name(id_name(id));
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx_elem_type(onnx_dtype(v)));
    auto* shape = tt->mutable_shape();
    for (auto d : v.shape.outer_first()) shape->add_dim()->set_dim_value(d);
  };
  for (std::size_t i = 0; i < graph.values.size(); ++i) {
    const Value& v = graph.values[i];
    const auto id = static_cast<ValueId>(i);
    if (!v.constant) continue;
    if (v.constant->element_count() > kMaxInferenceData) {
      declare(id);
      continue;
    }
    auto* init = g->add_initializer();
    init->set_name(id_name(id));
    tensor_to_proto(*v.constant, onnx_elem_type(onnx_dtype(v)), init);
  }
  for (ValueId id : graph.inputs) declare(id);
  for (ValueId id : graph.outputs) g->add_output()->set_name(id_name(id));

  onnx::checker::CheckerContext checker;
  checker.set_ir_version(static_cast<int>(model.ir_version()));
  checker.set_opset_imports({{"", static_cast<int>(graph.opset)}});
  const onnx::checker::LexicalScopeContext scope;
  const auto add_node = [&](onnx::NodeProto node) {
    try {
      onnx::checker::check_node(node, checker, scope);
    } catch (const std::exception& e) {
      corrupt_model_file(file,
                         fmt::format("node '{}' ({}): {}", node.name(), node.op_type(), e.what()));
    }
    *g->add_node() = std::move(node);
  };
  const auto transpose = [&](const std::string& from, const std::string& to,
                             const std::vector<std::int64_t>& perm) {
    onnx::NodeProto t;
    t.set_op_type("Transpose");
    t.set_name(to);
    t.add_input(from);
    t.add_output(to);
    attribute_to_proto("perm", perm, t.add_attribute());
    add_node(std::move(t));
  };
  for (const Node& n : graph.nodes) {
    // As reference_exec runs them: a node in a backend's layout reads its activations of the
    // layout's rank permuted by layout.perm and writes output 0 so, and convolution weights a
    // backend reordered carry the ONNX perm it applied (files from before it was recorded only
    // "hwio"). ONNX's op sees all of them transposed back.
    const bool laid_out =
        !n.layout.is_default() && !n.inputs.empty() && n.inputs[0] != kNoValue &&
        graph.value(n.inputs[0]).shape.rank() == static_cast<int>(n.layout.perm.size()) &&
        !n.outputs.empty() && n.outputs[0] != kNoValue;
    std::vector<std::int64_t> to_onnx, weights_to_onnx;
    try {
      if (laid_out) to_onnx = inverse_permutation(n.layout.perm);
      if (n.has_attr("tessera.weights_perm"))
        weights_to_onnx = inverse_permutation(n.attr_ints("tessera.weights_perm"));
      else if (n.attr_string("tessera.weights_layout", "") == "hwio")
        weights_to_onnx = inverse_permutation(kHwioOnnxPerm);
    } catch (const UserError& e) {
      corrupt_model_file(file, fmt::format("{}: {}", n.describe(), e.what()));
    }
    onnx::NodeProto np;
    np.set_name(n.name);
    np.set_op_type(onnx_op_of(n, graph.opset));
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      const ValueId v = n.inputs[i];
      if (v == kNoValue) {
        np.add_input("");
        continue;
      }
      std::string in = id_name(v);
      const Value& value = graph.value(v);
      const bool weights = i == 1 && (n.op == "Conv" || n.op == "ConvTranspose");
      // Named per node and input: one value may feed several laid-out nodes.
      const std::string onnx_order = fmt::format("{}.onnx.{}.{}", in, g->node_size(), i);
      if (!to_onnx.empty() && !weights && value.shape.rank() == static_cast<int>(to_onnx.size())) {
        transpose(in, onnx_order, to_onnx);
        in = onnx_order;
      }
      if (i == 1 && !weights_to_onnx.empty()) {
        transpose(in, onnx_order + ".weights", weights_to_onnx);
        in = onnx_order + ".weights";
      }
      np.add_input(in);
    }
    for (std::size_t o = 0; o < n.outputs.size(); ++o)
      np.add_output(n.outputs[o] == kNoValue     ? std::string()
                    : o == 0 && !to_onnx.empty() ? id_name(n.outputs[o]) + ".onnx"
                                                 : id_name(n.outputs[o]));
    // What the op's schema defines; Tessera's own attributes (int8 parameters, tessera.*) only
    // tune the kernels.
    const auto* schema =
        onnx::OpSchemaRegistry::Schema(np.op_type(), static_cast<int>(graph.opset));
    if (!schema)
      corrupt_model_file(file, fmt::format("{}: op {} does not exist in opset {}", n.describe(),
                                           n.op, graph.opset));
    for (const auto& [key, a] : n.attrs)
      if (schema->attributes().count(key)) attribute_to_proto(key, a, np.add_attribute());
    // An Int8Gemm's 16-bit bias has no place in a MatMul; it does not change the output type.
    if (is_int8_op(n.op) && np.input_size() > schema->max_input())
      np.mutable_input()->DeleteSubrange(schema->max_input(),
                                         np.input_size() - schema->max_input());
    if (np.op_type() == "Cast" && n.op != "Cast") {
      const bool quantize = n.op == "QuantizeLinear";
      const DType to = quantize ? (n.inputs.size() > 2 && n.inputs[2] != kNoValue
                                       ? onnx_dtype(graph.value(n.inputs[2]))
                                       : DType::u8)
                                : DType::f32;
      attribute_to_proto("to", std::int64_t{onnx_elem_type(to)}, np.add_attribute());
      np.mutable_input()->DeleteSubrange(1, np.input_size() - 1);
    }
    add_node(std::move(np));
    if (laid_out) transpose(id_name(n.outputs[0]) + ".onnx", id_name(n.outputs[0]), n.layout.perm);
  }

  // The importer's guards, then its shape inference: strict, else lenient with what strict said.
  detail::guard_graph(model, file);
  const std::string inference_error = infer_shapes(model, file);
  std::map<std::string, const onnx::TypeProto*> types;
  for (const auto& vi : g->value_info()) types[vi.name()] = &vi.type();
  for (const auto& vi : g->output())
    if (vi.has_type()) types[vi.name()] = &vi.type();

  const auto shape_text = [](std::vector<std::int64_t> outer_first) {
    std::reverse(outer_first.begin(), outer_first.end());
    return fmt::format("({})", fmt::join(outer_first, ", "));
  };
  for (const Node& n : graph.nodes)
    for (ValueId v : n.outputs) {
      if (v == kNoValue) continue;
      const Value& value = graph.value(v);
      const auto it = types.find(id_name(v));
      const int elem_type = it == types.end() || !it->second->has_tensor_type()
                                ? onnx::TensorProto::UNDEFINED
                                : it->second->tensor_type().elem_type();
      if (!map_elem_type(elem_type) || !it->second->tensor_type().has_shape())
        corrupt_model_file(
            file, fmt::format("{}: the type of output '{}' cannot be derived from its inputs and "
                              "attributes{}{}",
                              n.describe(), value.name,
                              inference_error.empty() ? "" : "; ONNX shape inference said: ",
                              inference_error));
      // A dim libonnx leaves unknown (Einsum's in 1.12) is the stored one, as import takes the
      // declared output's: the rank and every known dim are checked.
      const auto& derived_shape = it->second->tensor_type().shape();
      std::vector<std::int64_t> dims = value.shape.outer_first();
      bool same = derived_shape.dim_size() == static_cast<int>(dims.size());
      if (!same) dims.assign(static_cast<std::size_t>(derived_shape.dim_size()), -1);
      for (int d = 0; d < derived_shape.dim_size(); ++d)
        if (derived_shape.dim(d).has_dim_value()) {
          same = same && derived_shape.dim(d).dim_value() == dims[static_cast<std::size_t>(d)];
          dims[static_cast<std::size_t>(d)] = derived_shape.dim(d).dim_value();
        }
      const DType stored = onnx_dtype(value);
      // value_or: GCC 12 cannot see the check above and warns of an uninitialised optional.
      const DType derived = map_elem_type(elem_type).value_or(stored);
      if (!same || derived != stored)
        corrupt_model_file(
            file, fmt::format("{}: output '{}' is stored as {} {}, but its inputs and attributes "
                              "give {} {}",
                              n.describe(), value.name, dtype_name(stored), value.shape.to_string(),
                              dtype_name(derived), shape_text(dims)));
    }
}

}  // namespace tessera::compiler
