// Internal state behind the Poplar handles: the target's figures, the graph's variables,
// vertices and codelets, and program nodes. Shared by the api/ sources only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Target.hpp>

#include "tessera/arch/machine_spec.h"
#include "tessera/targets/ipu/api/codelet_abi.h"

namespace poplar::detail {

namespace abi = ::tessera::ipu::abi;

struct TargetState {
  std::shared_ptr<const tessera::arch::MachineSpec> spec;
  std::string arch;    // "ipu1", "ipu2" (or the preset name)
  std::string preset;  // the preset name or JSON path it was loaded from
  TargetType type = TargetType::IPU_MODEL;
  unsigned num_ipus = 1;
  unsigned tiles_per_ipu = 0;
  unsigned num_tiles = 0;  // all IPUs, or a virtual graph's tiles
  unsigned bytes_per_tile = 0;
  unsigned workers = 0;
  unsigned exchange_bytes_per_cycle = 0;
  unsigned sync_cycles = 0;
  unsigned host_sync_cycles = 0;
  double clock_hz = 0;
};

// The most worker contexts per tile a target may have: the Engine does work per worker for
// every vertex, and an IPU has six (spec 001 §7.1.1); an IPU Model or an executable asking for
// more is refused rather than costing the host without bound.
inline constexpr unsigned kMaxWorkerContexts = 64;

// A preset figure as a positive integer; UserError naming the preset and key otherwise.
std::uint64_t param_u64(const tessera::arch::MachineSpec& spec, const char* key);
std::shared_ptr<TargetState> make_target_state(std::string_view preset, unsigned num_ipus);
// "ipu1"/"ipu2" -> preset names; anything else unchanged.
std::string preset_for(std::string_view system_type);

// Element type table (spec 001 §2.3).
struct TypeInfo {
  std::string name;
  unsigned size;
  bool floating;
  bool is_signed;
};
const TypeInfo& type_info(Type t);
// Converts n values between element types (value-preserving casts; half via _Float16).
void convert_elements(const void* src, Type src_type, void* dst, Type dst_type, std::size_t n);
double element_as_double(const void* p, Type t);
// Stores v as one element of type t (a value-preserving cast, as convert_elements does).
void store_element(void* p, double v, Type t);
// Calls f(T{}) with T the C++ type of elements of type id `id` (Type::tesseraId, the order of
// type_info's table); false for an id of no type. The one map from ids to C++ types, for the
// API's conversions and the PopLibs codelets.
template <typename F>
bool with_element_type(unsigned id, F&& f) {
  switch (id) {
    case 1:
      return f(float{}), true;
    case 2:
      return f(_Float16{}), true;
    case 3:
      return f(std::int32_t{}), true;
    case 4:
      return f(std::uint32_t{}), true;
    case 5:
      return f(std::int16_t{}), true;
    case 6:
      return f(std::uint16_t{}), true;
    case 7:
    case 8:
      return f(std::int8_t{}), true;
    case 9:
      return f(std::uint8_t{}), true;
    case 10:
      return f(bool{}), true;
    case 11:
      return f(std::int64_t{}), true;
    case 12:
      return f(std::uint64_t{}), true;
    default:
      return false;
  }
}

struct Variable {
  std::string name;
  Type type;
  std::vector<std::size_t> shape;
  std::uint64_t bytes = 0;
  bool constant = false;
  std::vector<std::byte> initial;         // empty: no initial value
  std::vector<std::uint8_t> initial_set;  // per element, when initial is partial
  std::map<std::uint64_t, std::pair<std::uint64_t, unsigned>> mapping;  // begin -> (end, tile)
  // A variable of a replicated graph is a logical variable (the one the replicated graph's
  // tensors name, mapped to replica-local tiles, never stored) followed by `replicas` physical
  // variables, one per replica, mapped to that replica's tiles: replica r is base + 1 + r.
  std::uint32_t base = 0;
  unsigned replica = 0;
  unsigned replicas = 1;
  bool logical = false;
};

// The elements of `v` (of its own type) that its bytes [begin, end) touch: the range of its
// per-element flags, whatever type a reinterpreted tensor reads those bytes as.
inline std::pair<std::uint64_t, std::uint64_t> element_range(const Variable& v,
                                                             std::uint64_t begin,
                                                             std::uint64_t end) {
  const std::uint64_t es = std::max(1u, v.type.tesseraSize());
  return {begin / es, (end + es - 1) / es};
}

class CodeletLibrary;

struct VertexType {
  std::string name;
  abi::VertexTypeDesc desc;
  std::vector<abi::FieldDesc> fields;
  std::vector<std::string> constraints;
  std::shared_ptr<CodeletLibrary> library;
  std::string builtin_base;  // a PopLibs codelet: its describe_vertex name
  int field_index(std::string_view name) const;
};

struct Connection {
  bool connected = false;
  std::vector<Tensor> tensors;    // one for edge/edge_vector; one per row for 2-D fields
  std::vector<std::byte> state;   // state fields: raw value(s)
  std::size_t state_count = 0;    // state_vector: elements
  std::size_t declared_rows = 0;  // setFieldSize
};

struct VertexInstance {
  unsigned type = 0;
  unsigned compute_set = 0;
  unsigned tile = ~0u;
  std::vector<Connection> fields;  // by the type's field index
  std::optional<VertexPerfEstimate> estimate;
  bool replicated = false;  // added to a replicated graph: one instance per replica
};

struct ComputeSetInfo {
  std::string name;
  std::vector<unsigned> vertices;
};

struct HostHandle {
  Tensor tensor;
  bool write = true;
};

struct RemoteBufferInfo {
  std::string handle;
  Type type;
  std::size_t elements = 0;
  std::size_t repeats = 0;
  bool replicated = false;  // one buffer per replica
};

struct GraphState {
  Target target;  // the whole device, all replicas
  // Replicated graphs (spec 001 §2.5): replica r's tile t is physical tile t + r * replica_tiles.
  unsigned replication_factor = 1;
  unsigned replica_tiles = 0;
  bool replicated_top_level = false;  // Graph(target, replication_factor(n)): no parent
  std::vector<std::pair<bool, ReplicatedStreamMode>> stream_replication;  // by stream id
  std::vector<RemoteBufferInfo> remote_buffers;
  std::map<std::string, unsigned> remote_index;
  std::vector<Variable> variables;
  std::vector<VertexType> types;
  std::map<std::string, unsigned> type_index;
  std::vector<VertexInstance> vertices;
  std::vector<ComputeSetInfo> compute_sets;
  std::vector<DataStream> streams;
  std::map<std::string, unsigned> stream_index;
  std::map<std::string, HostHandle> host_handles;
  std::vector<program::Program> functions;
  std::map<std::string, PerfEstimateFunc> estimators;
  std::vector<std::shared_ptr<CodeletLibrary>> libraries;
  // The hardware random seeds of each graph view (Graph::tesseraHwSeeds), by (first tile, tiles).
  std::map<std::pair<unsigned, unsigned>, Tensor> hw_seeds;

  const Variable& var(std::uint32_t id) const { return variables.at(id); }
  // Tile of the byte at `offset` of variable `var`, or ~0u when unmapped.
  unsigned tile_of(std::uint32_t var, std::uint64_t offset) const;
  // Whether any element of `t` is a replicated variable's.
  bool replicated(const Tensor& t) const;
  // The same elements on replica `r` (t itself where it holds no replicated variable).
  Tensor replica_view(const Tensor& t, unsigned r) const;
  // One view per replica when `t` is replicated, else {t}.
  std::vector<Tensor> replica_views(const Tensor& t) const;
};

// Normalised vertex type name: "Foo<float, half>" -> "Foo<float,half>".
std::string normalise_type_name(std::string_view name);

// Compiles (or loads) codelets and registers their vertex types in `graph`.
void add_codelets(GraphState& graph, const std::string& path, CodeletFileType type,
                  const std::string& flags);
// Registers a vertex type compiled into Tessera itself (the PopLibs codelets) under `name`; the
// first registration of a name wins, as with addCodelets. Returns false when it already existed.
// `base` names the codelet the descriptor came from (its describe_vertex name), so a saved
// executable can find it again (builtin_desc).
bool add_builtin_vertex_type(GraphState& graph, const std::string& name,
                             const abi::VertexTypeDesc& desc, const char* base = nullptr);

// The codelets compiled into Tessera's PopLibs, by their describe_vertex name: PopLibs installs
// the lookup when it is loaded, so an executable deserialized in a fresh process finds them.
using BuiltinDescLookup = const abi::VertexTypeDesc* (*)(std::string_view base);
void set_builtin_desc_lookup(BuiltinDescLookup lookup);
const abi::VertexTypeDesc* builtin_desc(std::string_view base);
// A copy of `name` that lives as long as the process (descriptor names point at it).
const char* intern_name(const std::string& name);

}  // namespace poplar::detail

namespace poplar::program {

enum class NodeKind {
  sequence,
  execute,
  repeat,
  repeat_while,
  if_else,
  switch_case,
  copy,
  stream_to_tensor,
  tensor_to_stream,
  write_undef,
  sync,
  print,
  assume_equal,
  call,
  cycle_stamp,
  remote_to_tensor,
  tensor_to_remote,
  cross_replica,
  block  // children[0]: the scoped program
};

// Data between replicas over the IPU-Links: CrossReplicaCopy and the gcl collectives.
struct CrossReplicaOp {
  enum class Kind { copy, all_reduce, reduce_scatter, all_gather, all_to_all };
  Kind kind = Kind::copy;
  unsigned op = 0;          // gcl::CollectiveOperator, in its declared order
  unsigned group_type = 0;  // gcl::CommGroupType, in its declared order
  unsigned group_size = 0;  // replicas per group; 0: all
  std::map<unsigned, unsigned> replica_map;  // copy: source replica -> destination replica
};

struct Node {
  NodeKind kind = NodeKind::sequence;
  std::string name;
  std::vector<Program> children;  // sequence; repeat/while: body (and cond first for while)
  unsigned compute_set = 0;
  unsigned count = 0;
  bool while_true = true;
  Tensor a, b;  // copy src/dst, predicate, control, printed tensor, stamp target
  DataStream stream;
  std::vector<std::pair<std::int32_t, Program>> cases;
  std::shared_ptr<Node> default_case;  // switch: runs when no case matches
  unsigned function = 0;
  std::uint64_t stamp_base_node = 0;  // cycle_stamp: 0 = absolute; else subtract the stamp
  Tensor stamp_start;                 // of this tensor
  RemoteBuffer remote;                // remote_to_tensor / tensor_to_remote
  Tensor offset;                      // their rows (invalid: row 0)
  CrossReplicaOp cross;               // cross_replica: from a (each replica's) to b
};

}  // namespace poplar::program

namespace poplar::detail {
// A program handle over a node built outside the program classes (cycle stamps, collectives).
program::Program node_program(std::shared_ptr<program::Node> n);
// The replica groups of a gcl::CommGroup (type in gcl::CommGroupType's order; size 0: all) over
// `replicas` replicas, each in rank order. invalid_option when the size does not divide them.
std::vector<std::vector<unsigned>> comm_groups(unsigned replicas, unsigned type, unsigned size);
}  // namespace poplar::detail
