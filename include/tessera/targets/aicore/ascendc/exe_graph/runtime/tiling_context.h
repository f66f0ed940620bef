// CANN's TilingContext for host tiling functions (gert::TilingContext; CANN "basic data
// structure" API reference, header exe_graph/runtime/tiling_context.h): a tiling function
// `ge::graphStatus TilingFunc(gert::TilingContext*)` reads the operator's input and output
// shapes, data types and attributes, and writes the tiling data (GetRawTilingData, usually
// through a BEGIN_TILING_DATA_DEF class's SaveToBuffer), the block dim, the tiling key and the
// workspace sizes. Contexts are built by context_ascendc::ContextBuilder
// (tiling/context/context_builder.h). Getters past the operator's inputs, outputs or attributes
// return nullptr, as CANN's do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "exe_graph/runtime/storage_shape.h"
#include "graph/types.h"
#include "tessera/core/error.h"

namespace gert {

// A buffer of `capacity` bytes with a data size, allocated with its header in one block.
class TilingData {
 public:
  static std::unique_ptr<std::uint8_t[]> CreateCap(std::size_t cap_size) {
    auto block = std::make_unique<std::uint8_t[]>(sizeof(TilingData) + cap_size);
    new (block.get()) TilingData(cap_size);
    return block;
  }
  std::size_t GetCapacity() const { return capacity_; }
  std::size_t GetDataSize() const { return size_; }
  void SetDataSize(std::size_t size) {
    if (size > capacity_)
      tessera::throw_user_error(
          "TilingData::SetDataSize: {} bytes in a buffer of {}; create it with a larger "
          "capacity (TilingData::CreateCap)",
          size, capacity_);
    size_ = size;
  }
  void* GetData() { return reinterpret_cast<std::uint8_t*>(this) + sizeof(TilingData); }
  const void* GetData() const {
    return reinterpret_cast<const std::uint8_t*>(this) + sizeof(TilingData);
  }

 private:
  explicit TilingData(std::size_t capacity) : capacity_(capacity) {}
  std::size_t capacity_ = 0, size_ = 0;
};

// `capacity` elements of T with a size, allocated with its header in one block (the workspace
// sizes of a tiling context).
class ContinuousVector {
 public:
  template <typename T>
  static std::unique_ptr<std::uint8_t[]> Create(std::size_t capacity) {
    static_assert(std::is_trivially_copyable_v<T>, "ContinuousVector holds plain data");
    auto block = std::make_unique<std::uint8_t[]>(sizeof(ContinuousVector) + capacity * sizeof(T));
    new (block.get()) ContinuousVector(capacity);
    return block;
  }
  std::size_t GetCapacity() const { return capacity_; }
  std::size_t GetSize() const { return size_; }
  void SetSize(std::size_t size) {
    if (size > capacity_)
      tessera::throw_user_error("ContinuousVector::SetSize: {} elements in a vector of {}", size,
                                capacity_);
    size_ = size;
  }
  const void* GetData() const {
    return reinterpret_cast<const std::uint8_t*>(this) + sizeof(ContinuousVector);
  }
  void* MutableData() { return reinterpret_cast<std::uint8_t*>(this) + sizeof(ContinuousVector); }

 private:
  explicit ContinuousVector(std::size_t capacity) : capacity_(capacity) {}
  std::size_t capacity_ = 0, size_ = 0;
};

class CompileTimeTensorDesc {
 public:
  CompileTimeTensorDesc(ge::DataType dtype, ge::Format origin, ge::Format storage)
      : dtype_(dtype), origin_(origin), storage_(storage) {}
  ge::DataType GetDataType() const { return dtype_; }
  ge::Format GetOriginFormat() const { return origin_; }
  ge::Format GetStorageFormat() const { return storage_; }

 private:
  ge::DataType dtype_;
  ge::Format origin_, storage_;
};

// The operator's attributes by index, in the order the builder added them.
class RuntimeAttrs {
 public:
  using Value = std::variant<bool, std::int64_t, float, std::string, std::vector<std::int64_t>,
                             std::vector<float>>;
  // The attribute at `index` as a T, or nullptr when there is none or it holds another type.
  template <typename T>
  const T* GetAttrPointer(std::size_t index) const {
    if (index >= values_.size()) return nullptr;
    if constexpr (std::is_same_v<T, char>) {
      const auto* s = std::get_if<std::string>(&values_[index]);
      return s ? s->c_str() : nullptr;
    } else {
      return std::get_if<T>(&values_[index]);
    }
  }
  const std::int64_t* GetInt(std::size_t index) const {
    return GetAttrPointer<std::int64_t>(index);
  }
  const float* GetFloat(std::size_t index) const { return GetAttrPointer<float>(index); }
  const bool* GetBool(std::size_t index) const { return GetAttrPointer<bool>(index); }
  const char* GetStr(std::size_t index) const { return GetAttrPointer<char>(index); }
  std::size_t GetAttrNum() const { return values_.size(); }

  std::vector<Value> values_;
  std::vector<std::string> names_;
};

// A tensor of the operator as the tiling function sees it (GetInputTensor / GetOutputTensor):
// its shapes, type, formats and, for a value-dependent input, its data.
class Tensor {
 public:
  const Shape& GetOriginShape() const { return shape.GetOriginShape(); }
  const Shape& GetStorageShape() const { return shape.GetStorageShape(); }
  std::int64_t GetShapeSize() const { return shape.GetStorageShape().GetShapeSize(); }
  ge::DataType GetDataType() const { return desc.GetDataType(); }
  ge::Format GetOriginFormat() const { return desc.GetOriginFormat(); }
  ge::Format GetStorageFormat() const { return desc.GetStorageFormat(); }
  // The data of a value-dependent input, or nullptr.
  template <typename T>
  const T* GetData() const {
    return data.empty() ? nullptr : reinterpret_cast<const T*>(data.data());
  }

  StorageShape shape;
  CompileTimeTensorDesc desc{ge::DT_UNDEFINED, ge::FORMAT_ND, ge::FORMAT_ND};
  std::vector<std::uint8_t> data;
};

class TilingContext {
 public:
  const Tensor* GetInputTensor(std::size_t index) const {
    return index < inputs_.size() ? &inputs_[index] : nullptr;
  }
  const Tensor* GetOutputTensor(std::size_t index) const {
    return index < outputs_.size() ? &outputs_[index] : nullptr;
  }
  const StorageShape* GetInputShape(std::size_t index) const {
    return index < inputs_.size() ? &inputs_[index].shape : nullptr;
  }
  const StorageShape* GetOutputShape(std::size_t index) const {
    return index < outputs_.size() ? &outputs_[index].shape : nullptr;
  }
  const CompileTimeTensorDesc* GetInputDesc(std::size_t index) const {
    return index < inputs_.size() ? &inputs_[index].desc : nullptr;
  }
  const CompileTimeTensorDesc* GetOutputDesc(std::size_t index) const {
    return index < outputs_.size() ? &outputs_[index].desc : nullptr;
  }
  // The constant data of a value-dependent input (ContextBuilder's AddInputTd with data), or
  // nullptr.
  const void* GetInputConstData(std::size_t index) const {
    return index < inputs_.size() && !inputs_[index].data.empty() ? inputs_[index].data.data()
                                                                  : nullptr;
  }
  std::size_t GetComputeNodeInputNum() const { return inputs_.size(); }
  std::size_t GetComputeNodeOutputNum() const { return outputs_.size(); }
  const RuntimeAttrs* GetAttrs() const { return &attrs_; }
  const char* GetNodeName() const { return name_.c_str(); }
  const char* GetNodeType() const { return type_.c_str(); }

  TilingData* GetRawTilingData() { return tiling_; }
  ge::graphStatus SetBlockDim(std::uint32_t block_dim) {
    block_dim_ = block_dim;
    return ge::GRAPH_SUCCESS;
  }
  std::uint32_t GetBlockDim() const { return block_dim_; }
  ge::graphStatus SetTilingKey(std::uint64_t key) {
    tiling_key_ = key;
    return ge::GRAPH_SUCCESS;
  }
  std::uint64_t GetTilingKey() const { return tiling_key_; }
  ge::graphStatus SetScheduleMode(std::uint32_t mode) {
    schedule_mode_ = mode;
    return ge::GRAPH_SUCCESS;
  }
  std::uint32_t GetScheduleMode() const { return schedule_mode_; }
  // The first `num` workspace sizes, to be filled in bytes; nullptr when the context's
  // workspace vector holds fewer.
  std::size_t* GetWorkspaceSizes(std::size_t num) {
    if (!workspace_ || num > workspace_->GetCapacity()) return nullptr;
    workspace_->SetSize(num);
    return static_cast<std::size_t*>(workspace_->MutableData());
  }
  std::size_t GetWorkspaceNum() const { return workspace_ ? workspace_->GetSize() : 0; }
  const void* GetCompileInfo() const { return compile_info_; }
  const void* GetPlatformInfo() const { return platform_info_; }

 private:
  friend class TilingContextAccess;
  std::vector<Tensor> inputs_, outputs_;
  RuntimeAttrs attrs_;
  std::string name_, type_;
  TilingData* tiling_ = nullptr;
  ContinuousVector* workspace_ = nullptr;
  const void* compile_info_ = nullptr;
  const void* platform_info_ = nullptr;
  std::uint32_t block_dim_ = 0, schedule_mode_ = 0;
  std::uint64_t tiling_key_ = 0;
};

}  // namespace gert
