// The graph: variables and constants with their tile mapping, compute sets of vertices and
// their connections, codelets, streams (spec 001 §2.1-§2.6, §2.8). Virtual graphs are views of
// a tile range of their parent and share its contents (§2.4).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <poplar/ArrayRef.hpp>
#include <poplar/DebugContext.hpp>
#include <poplar/Device.hpp>
#include <poplar/GraphElements.hpp>
#include <poplar/Interval.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/ReplicatedStreamMode.hpp>
#include <poplar/Target.hpp>
#include <poplar/Tensor.hpp>
#include <poplar/TensorCloneMethod.hpp>
#include <poplar/Type.hpp>
#include <poplar/exceptions.hpp>

namespace poplar {

namespace program {
class Program;
}

enum class CodeletFileType {
  PreprocessedAsmSource,
  AsmSource,
  CSource,
  CppSource,
  IrSource,
  Object,
  Auto
};
enum class VariableMappingMethod { NONE, LINEAR };

class replication_factor {
 public:
  explicit replication_factor(unsigned n) : value(n) {}
  unsigned value;
};

using TileToTensorMapping = std::vector<std::vector<Interval>>;

class Graph {
 public:
  using TileToTensorMapping = poplar::TileToTensorMapping;  // Poplar spells it Graph::...
  explicit Graph(const Target& target, replication_factor r = replication_factor(1));
  explicit Graph(const Device& device, replication_factor r = replication_factor(1));
  ~Graph();
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;

  // A graph made with a replication factor (or by createReplicatedGraph) is the graph of one
  // replica: its target is one replica's IPUs and tiles, and everything added to it exists on
  // every replica (spec 001 §2.5).
  const Target& getTarget() const { return target_; }
  unsigned getReplicationFactor() const { return replication_; }

  // ---- data ----
  Tensor addVariable(const Type& type, ArrayRef<std::size_t> shape,
                     const DebugContext& debugContext = {});
  Tensor addVariable(const Type& type, ArrayRef<std::size_t> shape, VariableMappingMethod method,
                     const DebugContext& debugContext = {});
  template <typename T>
  Tensor addConstant(const Type& type, ArrayRef<std::size_t> shape, ArrayRef<T> values,
                     const DebugContext& debugContext = {}) {
    Tensor t = addVariable(type, shape, debugContext);
    tesseraMarkConstant(t);
    setInitialValue<T>(t, values);
    return t;
  }
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
  Tensor addConstant(const Type& type, ArrayRef<std::size_t> shape, T value,
                     const DebugContext& debugContext = {}) {
    Tensor t = addVariable(type, shape, debugContext);
    tesseraMarkConstant(t);
    setInitialValue<T>(t, value);
    return t;
  }
  template <typename T>
  Tensor addConstant(const Type& type, ArrayRef<std::size_t> shape, const T* values,
                     const DebugContext& debugContext = {}) {
    std::size_t n = 1;
    for (auto d : shape) n *= d;
    return addConstant<T>(type, shape, ArrayRef<T>(values, n), debugContext);
  }

  template <typename T>
  void setInitialValue(const Tensor& t, ArrayRef<T> values) {
    tesseraSetInitialValue(t, values.data(), values.size(), hostType<T>(), sizeof(T));
  }
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
  void setInitialValue(const Tensor& t, T value) {
    tesseraSetInitialValue(t, &value, 1, hostType<T>(), sizeof(T), true);
  }
  // Vertex state (plain members and Vector<T> members).
  template <typename T, typename = std::enable_if_t<std::is_trivially_copyable_v<T>>>
  void setInitialValue(const FieldRef& field, T value) {
    tesseraSetFieldValue(field, &value, 1, sizeof(T), hostType<T>());
  }
  template <typename T>
  void setInitialValue(const FieldRef& field, ArrayRef<T> values) {
    tesseraSetFieldValue(field, values.data(), values.size(), sizeof(T), hostType<T>());
  }

  // A new variable of the shape (and element type, or `type`) of `t`, with its tile mapping.
  Tensor clone(const Tensor& t, const DebugContext& debugContext = {},
               TensorCloneMethod method = TensorCloneMethod::PRESERVE_ORDER_UNLESS_ALIASES);
  Tensor clone(const Type& type, const Tensor& t, const DebugContext& debugContext = {},
               TensorCloneMethod method = TensorCloneMethod::PRESERVE_ORDER_UNLESS_ALIASES);

  void setTileMapping(const Tensor& t, unsigned tileNum);
  void setTileMapping(VertexRef v, unsigned tileNum);
  void setTileMapping(const Tensor& t, const TileToTensorMapping& mapping);
  TileToTensorMapping getTileMapping(const Tensor& t, bool requireComplete = true) const;
  unsigned getTileMapping(VertexRef v) const;

  // ---- compute ----
  ComputeSet addComputeSet(const DebugContext& debugContext = {});
  VertexRef addVertex(ComputeSet cs, StringRef vertexType);
  VertexRef addVertex(ComputeSet cs, StringRef vertexType, ArrayRef<ConnectionDesc> connections);
  void connect(FieldRef field, const Tensor& tensor);
  void connect(FieldRef field, ArrayRef<Tensor> tensors);
  void setFieldSize(FieldRef field, std::size_t size);
  std::size_t getFieldSize(FieldRef field) const;
  void setPerfEstimate(const VertexRef& v, std::uint64_t cycles, std::uint64_t flops = 0);
  // Poplar's earlier name for setPerfEstimate (graphcore/examples' tut7 still calls it).
  void setCycleEstimate(const VertexRef& v, std::uint64_t cycles) { setPerfEstimate(v, cycles); }
  void registerPerfEstimator(StringRef vertexTypeName, PerfEstimateFunc f);

  // Compiles a codelet source with the host C++ compiler (or loads a popc .gp file) when the
  // program runs (spec 001 §2.8). A compile error is a graph_program_compilation_error holding
  // the compiler's message.
  bool addCodelets(StringRef src, CodeletFileType type = CodeletFileType::Auto,
                   StringRef compileFlags = "", StringRef targetName = "");
  void addCodelets(ArrayRef<std::string> srcs, StringRef compileFlags = "");
  bool hasCodelet(StringRef vertexTypeName) const;

  // ---- host transfers ----
  DataStream addHostToDeviceFIFO(StringRef handle, const Type& elementType, std::size_t numElements,
                                 ReplicatedStreamMode mode = ReplicatedStreamMode::REPLICATE,
                                 const OptionFlags& options = {});
  DataStream addDeviceToHostFIFO(StringRef handle, const Type& elementType, std::size_t numElements,
                                 const OptionFlags& options = {});
  void createHostWrite(StringRef handle, const Tensor& t, bool rearrangeOnHost = false);
  void createHostRead(StringRef handle, const Tensor& t, bool rearrangeOnHost = false);

  // Off-chip storage of `repeats` rows of `numElements` elements (per replica), reached with
  // program::Copy and Engine::copyToRemoteBuffer / copyFromRemoteBuffer (spec 001 §2.6.2).
  RemoteBuffer addRemoteBuffer(StringRef handle, const Type& elementType, std::size_t numElements,
                               std::size_t repeats = 1, bool rearrangeOnHost = false,
                               bool optimiseMemory = false);

  Function addFunction(const program::Program& program);

  // A graph over tiles [lowerTile, upperTile) of this one; what is added to it is added here.
  Graph createVirtualGraph(unsigned lowerTile, unsigned upperTile);
  Graph createVirtualGraph(const std::vector<unsigned>& tiles);

  // Splits this graph into `replicationFactor` replicas of numIPUs / replicationFactor IPUs
  // each (spec 001 §2.5.1); the result is the graph of one replica. This graph stays the
  // parent: what is added to it exists once, on the tiles it is mapped to.
  Graph createReplicatedGraph(unsigned replicationFactor);
  // A replicated tensor as one tensor of the parent, with a leading dimension over replicas.
  Tensor getNonReplicatedTensor(const Tensor& t) const;
  // The graph that virtual and replicated graphs were made from (this graph when it is one).
  // A graph made with a replication factor has none (spec 001 §2.5.2): invalid_machine_model.
  Graph& getTopLevelGraph();

  std::size_t getNumVertices() const;
  std::size_t getNumComputeSets() const;
  unsigned getTileOffset() const { return tileBase_; }

  // For Tessera's Engine.
  const std::shared_ptr<detail::GraphState>& tesseraState() const { return state_; }
  // The variable holding this graph's tiles' hardware random seeds ([tiles][workers][4]
  // UNSIGNED_INT, row t on tile t, zero until set; poplar/RandomSeed.hpp), made on first use.
  Tensor tesseraHwSeeds();

 private:
  Graph(std::shared_ptr<detail::GraphState> state, Target target, std::vector<unsigned> tiles,
        unsigned replication);
  template <typename T>
  static Type hostType() {
    if constexpr (requires { equivalent_device_type<T>::value; })
      return equivalent_device_type<T>::value;
    else
      return Type();
  }
  // fill: `values` is one value for every element (no host array of them is made first).
  void tesseraSetInitialValue(const Tensor& t, const void* values, std::size_t n, Type hostType,
                              std::size_t hostSize, bool fill = false);
  void tesseraSetFieldValue(const FieldRef& f, const void* values, std::size_t n,
                            std::size_t elemSize, Type hostType);
  void tesseraMarkConstant(const Tensor& t);
  unsigned physicalTile(unsigned tile) const;

  std::shared_ptr<detail::GraphState> state_;
  Target target_;
  unsigned tileBase_ = 0;
  std::vector<unsigned> tiles_;  // virtual graph: its tiles in the parent; empty: all
  unsigned replication_ = 1;     // > 1: the graph of one replica
  std::unique_ptr<Graph> topLevel_;  // made by getTopLevelGraph on a virtual or replica graph
};

}  // namespace poplar
