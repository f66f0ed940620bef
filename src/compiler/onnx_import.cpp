#include "tessera/compiler/onnx_import.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>

#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include "onnx_guard.h"
#include "tessera/compiler/passes.h"
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

// ONNX element types map onto Tessera's; int64 and double have no Tessera dtype and narrow.
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
      return DType::i32;
    case TP::UINT64:
      return DType::u32;
    case TP::DOUBLE:
      return DType::f32;
    default:
      return std::nullopt;
  }
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
        "{}: element type {} is not supported (Tessera supports float, float16, "
        "bfloat16, int8-32, uint8-32, bool; int64/double narrow to int32/float)",
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

template <typename T>
T narrow_int(std::int64_t v) {
  return saturate_cast<T>(v);
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
  std::size_t src_size = dtype_size(dtype);
  if (et == TP::INT64 || et == TP::UINT64 || et == TP::DOUBLE) src_size = 8;
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
    if (et == TP::INT64) {
      auto* out = t.data<std::int32_t>();
      for (std::int64_t i = 0; i < n; ++i) {
        std::int64_t v;
        std::memcpy(&v, raw.data() + i * 8, 8);
        out[i] = narrow_int<std::int32_t>(v);
      }
    } else if (et == TP::UINT64) {
      auto* out = t.data<std::uint32_t>();
      for (std::int64_t i = 0; i < n; ++i) {
        std::uint64_t v;
        std::memcpy(&v, raw.data() + i * 8, 8);
        out[i] = static_cast<std::uint32_t>(std::min<std::uint64_t>(v, 0xffffffffu));
      }
    } else if (et == TP::DOUBLE) {
      auto* out = t.data<float>();
      for (std::int64_t i = 0; i < n; ++i) {
        double v;
        std::memcpy(&v, raw.data() + i * 8, 8);
        out[i] = static_cast<float>(v);
      }
    } else if (n > 0) {
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
      for (std::int64_t i = 0; i < n; ++i)
        t.data<float>()[i] = static_cast<float>(proto.double_data(static_cast<int>(i)));
      break;
    case TP::INT64:
      if (proto.int64_data_size() != n) bad_size(static_cast<std::size_t>(proto.int64_data_size()));
      for (std::int64_t i = 0; i < n; ++i)
        t.data<std::int32_t>()[i] = narrow_int<std::int32_t>(proto.int64_data(static_cast<int>(i)));
      break;
    case TP::UINT64:
    case TP::UINT32:
      if (proto.uint64_data_size() != n)
        bad_size(static_cast<std::size_t>(proto.uint64_data_size()));
      for (std::int64_t i = 0; i < n; ++i)
        t.data<std::uint32_t>()[i] = static_cast<std::uint32_t>(
            std::min<std::uint64_t>(proto.uint64_data(static_cast<int>(i)), 0xffffffffu));
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
  using TP = onnx::TensorProto;
  if (elem_type == TP::INT64) {
    for (auto v : t.to_ints()) proto->add_int64_data(v);
  } else if (elem_type == TP::DOUBLE) {
    for (auto v : t.to_doubles()) proto->add_double_data(v);
  } else {
    const auto want = require_dtype(elem_type, "bound input");
    const Tensor converted = t.dtype() == want ? t : t.astype(want);
    proto->set_raw_data(
        std::string(reinterpret_cast<const char*>(converted.raw_data()), converted.bytes()));
  }
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

Tensor constant_node_value(const onnx::NodeProto& node, const std::string& where) {
  for (const auto& a : node.attribute()) {
    const std::string& n = a.name();
    if (n == "value") return tensor_from_proto(a.t(), where);
    if (n == "value_float") return Tensor::scalar(DType::f32, a.f());
    if (n == "value_int") return Tensor::from_ints(DType::i32, Shape{}, {a.i()});
    if (n == "value_floats") {
      std::vector<float> v(a.floats().begin(), a.floats().end());
      return Tensor::from_vector(Shape{static_cast<std::int64_t>(v.size())}, v);
    }
    if (n == "value_ints") {
      std::vector<std::int64_t> v(a.ints().begin(), a.ints().end());
      std::vector<std::int64_t> clamped;
      for (auto x : v) clamped.push_back(narrow_int<std::int32_t>(x));
      return Tensor::from_ints(DType::i32, Shape{static_cast<std::int64_t>(v.size())}, clamped);
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
                                            "MeanVarianceNormalization",
                                            "Min",
                                            "Mod",
                                            "Mul",
                                            "Neg",
                                            "NegativeLogLikelihoodLoss",
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
  if (op == "ConstantOfShape" || op == "HannWindow" || op == "HammingWindow" ||
      op == "BlackmanWindow")
    return {0};
  if (op == "MaxUnpool") return {2};
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
  }
  return TP::UNDEFINED;
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
// sees the data. Graph outputs are left to the graph. Returns whether anything was folded.
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
    bool outputs_free = true;
    for (const auto& out : np.output()) outputs_free = outputs_free && !graph_outputs.count(out);
    if (!outputs_free || np.output_size() == 0) continue;
    std::vector<Tensor> results;
    if ((np.op_type() == "Shape" || np.op_type() == "Size") && np.input_size() == 1) {
      auto t = types.find(np.input(0));
      if (t == types.end()) continue;
      const auto dims = known_dims(*t->second);
      if (!dims) continue;
      if (np.op_type() == "Size") {
        std::int64_t n = 1;
        for (auto d : *dims) n *= d;
        results.push_back(Tensor::from_ints(DType::i32, Shape{}, {n}));
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
            Tensor::from_ints(DType::i32, Shape{static_cast<std::int64_t>(v.size())}, v));
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

Graph build_graph(onnx::ModelProto& model, const std::string& name, const ImportOptions& options) {
  std::int64_t opset = default_opset(model);
  if (opset == 0) throw_user_error("{}: the model imports no default-domain (ai.onnx) opset", name);
  if (opset < kMinOpset || opset > kMaxOpset) {
    const std::int64_t target = std::clamp(opset, kMinOpset, kMaxOpset);
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
  detail::guard_tensor_sizes(model, name);
  detail::guard_graph(model, name);
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw_user_error("{}: invalid ONNX model: {}", name, e.what());
  }
  std::string inference_error;
  const auto infer = [&] {
    try {
      onnx::ShapeInferenceOptions strict(false, 1, true);
      onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), strict);
    } catch (const std::exception& e) {
      inference_error = e.what();
      try {
        onnx::ShapeInferenceOptions lenient(false, 0, true);
        onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), lenient);
      } catch (const std::exception& e2) {
        throw_user_error("{}: ONNX shape inference failed: {}", name, e2.what());
      }
    }
  };
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

Tensor load_tensor_pb(const std::string& path) {
  return decode_tensor_pb(read_file(path, "tensor file"), path);
}

Tensor load_tensor_file(const std::string& path) {
  if (path.size() >= 3 && path.compare(path.size() - 3, 3, ".pb") == 0) return load_tensor_pb(path);
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0) return load_npy(path);
  throw_user_error(
      "input file '{}': unknown format; use a .npy (NumPy) or .pb (onnx.TensorProto) file", path);
}

}  // namespace tessera::compiler
