// Handles of things a Graph holds: compute sets, vertices and their fields, streams, functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <poplar/ArrayRef.hpp>
#include <poplar/Tensor.hpp>
#include <poplar/Type.hpp>

namespace poplar {

namespace detail {
struct GraphState;
}

class ComputeSet {
 public:
  ComputeSet() = default;
  explicit ComputeSet(unsigned id) : id_(id) {}
  unsigned getId() const { return id_; }
  bool operator==(const ComputeSet&) const = default;

 private:
  unsigned id_ = ~0u;
};

class FieldRef;

class VertexRef {
 public:
  VertexRef() = default;
  VertexRef(detail::GraphState* graph, unsigned id) : graph_(graph), id_(id) {}
  unsigned getId() const { return id_; }
  FieldRef operator[](StringRef fieldName) const;
  detail::GraphState* tesseraGraph() const { return graph_; }

 private:
  detail::GraphState* graph_ = nullptr;
  unsigned id_ = 0;
};

class FieldRef {
 public:
  FieldRef(VertexRef vertex, std::string name, long index = -1)
      : vertex_(vertex), name_(std::move(name)), index_(index) {}
  // One entry of a Vector/VectorList field: v["in"][i].
  FieldRef operator[](std::size_t i) const { return FieldRef(vertex_, name_, long(i)); }
  const VertexRef& getVertex() const { return vertex_; }
  const std::string& getName() const { return name_; }
  long getIndex() const { return index_; }

 private:
  VertexRef vertex_;
  std::string name_;
  long index_;
};

inline FieldRef VertexRef::operator[](StringRef fieldName) const {
  return FieldRef(*this, std::string(fieldName));
}

class DataStream {
 public:
  DataStream() = default;
  DataStream(unsigned id, std::string handle, Type type, std::size_t numElements, bool toDevice)
      : id_(id), handle_(std::move(handle)), type_(type), n_(numElements), toDevice_(toDevice) {}
  const std::string& handle() const { return handle_; }
  Type elementType() const { return type_; }
  std::size_t numElements() const { return n_; }
  bool isHostToDevice() const { return toDevice_; }
  unsigned getId() const { return id_; }

 private:
  unsigned id_ = 0;
  std::string handle_;
  Type type_;
  std::size_t n_ = 0;
  bool toDevice_ = true;
};

// Off-chip memory for the IPU program's own storage (spec 001 §2.6.2): `repeats` rows of
// `numElements` elements each, per replica, reached with program::Copy.
class RemoteBuffer {
 public:
  RemoteBuffer() = default;
  RemoteBuffer(unsigned id, std::string handle, Type type, std::size_t numElements,
               std::size_t repeats)
      : id_(id), handle_(std::move(handle)), type_(type), n_(numElements), repeats_(repeats) {}
  const std::string& handle() const { return handle_; }
  Type elementType() const { return type_; }
  std::size_t numElements() const { return n_; }
  std::size_t getRepeats() const { return repeats_; }
  unsigned getId() const { return id_; }
  bool operator==(const RemoteBuffer& o) const { return id_ == o.id_ && handle_ == o.handle_; }

 private:
  unsigned id_ = ~0u;
  std::string handle_;
  Type type_;
  std::size_t n_ = 0, repeats_ = 0;
};

class Function {
 public:
  Function() = default;
  explicit Function(unsigned id) : id_(id) {}
  unsigned getId() const { return id_; }

 private:
  unsigned id_ = ~0u;
};

// A field and what it connects to, for Graph::addVertex(cs, type, {{"in", t}, ...}).
struct ConnectionDesc {
  ConnectionDesc(StringRef name, const Tensor& t) : field(name), tensors{t} {}
  ConnectionDesc(StringRef name, ArrayRef<Tensor> ts)
      : field(name), tensors(ts.vec()), single(false) {}
  std::string field;
  std::vector<Tensor> tensors;
  bool single = true;
};

struct VertexPerfEstimate {
  VertexPerfEstimate() = default;
  VertexPerfEstimate(std::uint64_t c, std::uint64_t f = 0) : cycles(c), flops(f) {}
  std::uint64_t cycles = 0;
  std::uint64_t flops = 0;
};

// What a perf estimator may ask about the vertex it estimates.
class FieldData {
 public:
  explicit FieldData(std::vector<std::size_t> sizes) : sizes_(std::move(sizes)) {}
  std::size_t size() const { return sizes_.size() == 1 ? sizes_[0] : sizes_.size(); }
  std::size_t operator[](std::size_t i) const { return sizes_.at(i); }
  std::size_t getSizeAtIndex(std::size_t i) const { return sizes_.at(i); }
  std::size_t totalElements() const;

 private:
  std::vector<std::size_t> sizes_;  // elements of each connected tensor
};

class VertexIntrospector {
 public:
  VertexIntrospector(const detail::GraphState* graph, unsigned vertex)
      : graph_(graph), vertex_(vertex) {}
  FieldData getFieldInfo(StringRef name) const;
  const std::string& getVertexType() const;
  unsigned getTile() const;

 private:
  const detail::GraphState* graph_;
  unsigned vertex_;
};

class Target;
using PerfEstimateFunc =
    std::function<VertexPerfEstimate(const VertexIntrospector&, const Target&)>;

}  // namespace poplar
