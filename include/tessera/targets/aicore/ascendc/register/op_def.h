// CANN's operator prototype registration (register/op_def.h, included by op_def_registry.h):
// `class X : public ops::OpDef` declares inputs, outputs and attributes, its shape and type
// inference and, under AICore(), its tiling function; OP_ADD(X) registers it by type name. An
// op_host file written for CANN's framework builds unchanged. Outside the framework, a host
// program finds the registered operator with tessera::aicore::op_def("X") and runs its tiling
// function on a context from context_ascendc::ContextBuilder (docs/targets/aicore.md).
// The declarations are recorded, not acted on: no framework picks kernels by them here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "exe_graph/runtime/storage_shape.h"
#include "exe_graph/runtime/tiling_context.h"
#include "graph/types.h"
#include "tessera/core/error.h"

namespace gert {

// What an InferShape function reads and writes.
class InferShapeContext {
 public:
  InferShapeContext(std::vector<Shape> inputs, std::size_t outputs, RuntimeAttrs attrs = {})
      : inputs_(std::move(inputs)), outputs_(outputs), attrs_(std::move(attrs)) {}
  const Shape* GetInputShape(std::size_t index) const {
    return index < inputs_.size() ? &inputs_[index] : nullptr;
  }
  Shape* GetOutputShape(std::size_t index) {
    return index < outputs_.size() ? &outputs_[index] : nullptr;
  }
  const RuntimeAttrs* GetAttrs() const { return &attrs_; }
  std::size_t GetComputeNodeInputNum() const { return inputs_.size(); }

 private:
  std::vector<Shape> inputs_, outputs_;
  RuntimeAttrs attrs_;
};

// What an InferDataType function reads and writes.
class InferDataTypeContext {
 public:
  InferDataTypeContext(std::vector<ge::DataType> inputs, std::size_t outputs)
      : inputs_(std::move(inputs)), outputs_(outputs, ge::DT_UNDEFINED) {}
  ge::DataType GetInputDataType(std::size_t index) const {
    return index < inputs_.size() ? inputs_[index] : ge::DT_UNDEFINED;
  }
  ge::graphStatus SetOutputDataType(std::size_t index, ge::DataType type) {
    if (index >= outputs_.size()) return ge::GRAPH_FAILED;
    outputs_[index] = type;
    return ge::GRAPH_SUCCESS;
  }
  ge::DataType GetOutputDataType(std::size_t index) const {
    return index < outputs_.size() ? outputs_[index] : ge::DT_UNDEFINED;
  }

 private:
  std::vector<ge::DataType> inputs_, outputs_;
};

using TilingKernelFunc = ge::graphStatus (*)(TilingContext*);
using InferShapeKernelFunc = ge::graphStatus (*)(InferShapeContext*);
using InferDataTypeKernelFunc = ge::graphStatus (*)(InferDataTypeContext*);

}  // namespace gert

namespace ops {

enum Option { IGNORE = 0, OPTIONAL = 1, REQUIRED = 2, DYNAMIC = 3, VIRTUAL = 4 };

// An input or output: how it is passed, its data types and formats (one per supported
// combination, as CANN pairs them by position).
class OpParamDef {
 public:
  explicit OpParamDef(std::string name) : name_(std::move(name)) {}
  OpParamDef& ParamType(Option type) {
    type_ = type;
    return *this;
  }
  OpParamDef& DataType(std::vector<ge::DataType> types) {
    types_ = std::move(types);
    return *this;
  }
  OpParamDef& DataTypeList(std::vector<ge::DataType> types) { return DataType(std::move(types)); }
  OpParamDef& Format(std::vector<ge::Format> formats) {
    formats_ = std::move(formats);
    return *this;
  }
  OpParamDef& FormatList(std::vector<ge::Format> formats) { return Format(std::move(formats)); }
  OpParamDef& UnknownShapeFormat(std::vector<ge::Format> formats) {
    return Format(std::move(formats));
  }
  OpParamDef& ValueDepend(Option depend) {
    value_depend_ = depend;
    return *this;
  }
  OpParamDef& AutoContiguous() { return *this; }
  OpParamDef& IgnoreContiguous() { return *this; }

  const std::string& GetName() const { return name_; }
  Option GetParamType() const { return type_; }
  const std::vector<ge::DataType>& GetDataTypes() const { return types_; }
  const std::vector<ge::Format>& GetFormats() const { return formats_; }

 private:
  std::string name_;
  Option type_ = REQUIRED;
  Option value_depend_ = IGNORE;
  std::vector<ge::DataType> types_;
  std::vector<ge::Format> formats_;
};

// An attribute: required or optional, with its type and default.
class OpAttrDef {
 public:
  explicit OpAttrDef(std::string name) : name_(std::move(name)) {}
  OpAttrDef& AttrType(Option type) {
    type_ = type;
    return *this;
  }
  OpAttrDef& Bool() { return kind("bool"); }
  OpAttrDef& Bool(bool value) { return kind("bool", value ? "true" : "false"); }
  OpAttrDef& Float() { return kind("float"); }
  OpAttrDef& Float(float value) { return kind("float", std::to_string(value)); }
  OpAttrDef& Int() { return kind("int"); }
  OpAttrDef& Int(std::int64_t value) { return kind("int", std::to_string(value)); }
  OpAttrDef& String() { return kind("string"); }
  OpAttrDef& String(const char* value) { return kind("string", value); }
  OpAttrDef& ListInt() { return kind("list_int"); }
  OpAttrDef& ListInt(std::vector<std::int64_t> value) {
    std::string text;
    for (std::int64_t v : value) text += (text.empty() ? "" : ",") + std::to_string(v);
    return kind("list_int", text);
  }
  OpAttrDef& ListFloat() { return kind("list_float"); }

  const std::string& GetName() const { return name_; }
  Option GetAttrType() const { return type_; }
  const std::string& GetType() const { return kind_; }
  const std::string& GetDefault() const { return default_; }

 private:
  OpAttrDef& kind(std::string k, std::string value = {}) {
    kind_ = std::move(k);
    default_ = std::move(value);
    return *this;
  }
  std::string name_, kind_, default_;
  Option type_ = REQUIRED;
};

// Per-SoC overrides of the prototype (AddConfig's second argument).
class OpAICoreConfig {
 public:
  OpParamDef& Input(const char* name) { return inputs_.emplace_back(name); }
  OpParamDef& Output(const char* name) { return outputs_.emplace_back(name); }
  OpAICoreConfig& DynamicCompileStaticFlag(bool) { return *this; }
  OpAICoreConfig& DynamicFormatFlag(bool) { return *this; }
  OpAICoreConfig& DynamicRankSupportFlag(bool) { return *this; }
  OpAICoreConfig& DynamicShapeSupportFlag(bool) { return *this; }
  OpAICoreConfig& NeedCheckSupportFlag(bool) { return *this; }
  OpAICoreConfig& PrecisionReduceFlag(bool) { return *this; }
  OpAICoreConfig& ExtendCfgInfo(const char*, const char*) { return *this; }

 private:
  std::vector<OpParamDef> inputs_, outputs_;
};

class OpAICoreDef {
 public:
  OpAICoreDef& SetTiling(gert::TilingKernelFunc func) {
    tiling_ = func;
    return *this;
  }
  OpAICoreDef& AddConfig(const char* soc) {
    socs_.emplace_back(soc);
    return *this;
  }
  OpAICoreDef& AddConfig(const char* soc, OpAICoreConfig& config) {
    socs_.emplace_back(soc);
    configs_.push_back(config);
    return *this;
  }
  gert::TilingKernelFunc& GetTiling() { return tiling_; }
  const std::vector<std::string>& GetSocs() const { return socs_; }

 private:
  gert::TilingKernelFunc tiling_ = nullptr;
  std::vector<std::string> socs_;
  std::vector<OpAICoreConfig> configs_;
};

class OpDef {
 public:
  explicit OpDef(const char* type) : type_(type) {}
  virtual ~OpDef() = default;
  OpDef(const OpDef&) = delete;
  OpDef& operator=(const OpDef&) = delete;

  OpParamDef& Input(const char* name) { return inputs_.emplace_back(name); }
  OpParamDef& Output(const char* name) { return outputs_.emplace_back(name); }
  OpAttrDef& Attr(const char* name) { return attrs_.emplace_back(name); }
  OpDef& SetInferShape(gert::InferShapeKernelFunc func) {
    infer_shape_ = func;
    return *this;
  }
  OpDef& SetInferDataType(gert::InferDataTypeKernelFunc func) {
    infer_data_type_ = func;
    return *this;
  }
  OpAICoreDef& AICore() { return aicore_; }

  const std::string& GetOpType() const { return type_; }
  const std::vector<OpParamDef>& GetInputs() const { return inputs_; }
  const std::vector<OpParamDef>& GetOutputs() const { return outputs_; }
  const std::vector<OpAttrDef>& GetAttrs() const { return attrs_; }
  gert::InferShapeKernelFunc GetInferShape() const { return infer_shape_; }
  gert::InferDataTypeKernelFunc GetInferDataType() const { return infer_data_type_; }

 private:
  std::string type_;
  std::vector<OpParamDef> inputs_, outputs_;
  std::vector<OpAttrDef> attrs_;
  gert::InferShapeKernelFunc infer_shape_ = nullptr;
  gert::InferDataTypeKernelFunc infer_data_type_ = nullptr;
  OpAICoreDef aicore_;
};

namespace detail {
inline std::map<std::string, std::unique_ptr<OpDef>, std::less<>>& registry() {
  static std::map<std::string, std::unique_ptr<OpDef>, std::less<>> ops;
  return ops;
}
template <typename T>
int add_op(const char* type) {
  registry()[type] = std::make_unique<T>(type);
  return 0;
}
}  // namespace detail

}  // namespace ops

// Registers the operator class `opType` (written inside namespace ops, as CANN's samples do).
#define OP_ADD(opType, ...)                                      \
  [[maybe_unused]] static const int g_tessera_##opType##_added = \
      ::ops::detail::add_op<opType>(#opType)

namespace tessera::aicore {

// The operator OP_ADD registered under `type`; UserError naming the registered ones otherwise.
inline ::ops::OpDef& op_def(std::string_view type) {
  auto& registered = ::ops::detail::registry();
  auto it = registered.find(type);
  if (it == registered.end()) {
    std::string known;
    for (const auto& [name, def] : registered) known += (known.empty() ? "" : ", ") + name;
    tessera::throw_user_error(
        "no operator '{}' is registered with OP_ADD (registered: {}); link "
        "the op_host file that defines it",
        type, known.empty() ? "none" : known);
  }
  return *it->second;
}

}  // namespace tessera::aicore
