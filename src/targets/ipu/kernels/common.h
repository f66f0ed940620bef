// Shared machinery of Tessera's PopLibs (popops, poplin, popnn, poprand, poputil): codelets
// compiled into the library and registered per graph by each library's addCodelets(graph),
// element conversion for the type-generic codelets, and graph-building helpers. Every PopLibs
// function builds graph (tensors, tile mappings, compute sets of these codelets, programs); the
// values are computed only when the Engine runs those programs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Vertex.hpp>
#include <poputil/exceptions.hpp>

#include "../api/state.h"

namespace tessera::ipu::poplibs {

using poplar::Graph;
using poplar::Tensor;
using poplar::Type;
namespace abi = ::tessera::ipu::abi;

// The element of the type-generic codelets' edges: the codelet reads the tensor's bytes with the
// element type its state names. Having no Poplar type name, it is connected to tensors of any type.
struct Byte {
  unsigned char v;
};

// ---- element conversion (by poplar::Type id) ----
// Loads n elements of type `type` from p into doubles, and back; store rounds as the device type
// does (half: IEEE round to nearest; integers: wrap modulo 2^bits; bool: non-zero).
void load_elements(const void* p, unsigned type, std::size_t n, double* out);
void store_elements(void* p, unsigned type, std::size_t n, const double* in);
double round_to_type(unsigned type, double v);
unsigned type_bytes(unsigned type);
bool type_is_float(unsigned type);
bool type_is_signed(unsigned type);
// Cycles of `n` element operations of `type` on one worker: 64-bit vectors (spec 001 §7.2: 64-bit
// data path), one vector per instruction.
std::uint64_t vector_ops(const Graph& g, unsigned type, std::uint64_t n);

// ---- codelet registration ----
// Registers the codelet `desc` under `name` with its perf estimator (Graph::registerPerfEstimator).
void register_codelet(Graph& graph, const std::string& name, const abi::VertexTypeDesc& desc,
                      poplar::PerfEstimateFunc estimator);
// UserError unless `library`'s addCodelets(graph) was called: names the call to add.
void require_codelets(const Graph& graph, const char* library, const std::string& vertex);
// "popops::Foo<float,half>" from a base and template arguments.
std::string templated(const std::string& base, const std::vector<std::string>& args);
std::string type_arg(Type t);
std::uint64_t option_u64(const poplar::OptionFlags& o, const char* key, std::uint64_t dflt);
double option_double(const poplar::OptionFlags& o, const char* key, double dflt);
std::string option_str(const poplar::OptionFlags& o, const char* key, const std::string& dflt);

// ---- graph helpers ----
// Tile mapping intervals of `t` (flattened), tile by tile, over the graph's tiles.
poplar::TileToTensorMapping mapping_of(const Graph& g, const Tensor& t);
// Sets state vector `field` of v to `values`.
void set_state(Graph& g, poplar::VertexRef v, const char* field,
               const std::vector<unsigned>& values);
// A new variable of `type` and `shape` with the same tile mapping as `like` (same element count).
Tensor clone_like(Graph& g, const Tensor& like, Type type, const poplar::DebugContext& dc);
// Splits `n` into `parts` near-equal ranges; range i is [split_begin(i), split_begin(i + 1)).
inline std::size_t split_begin(std::size_t n, std::size_t parts, std::size_t i) {
  return n * i / parts;
}
std::size_t product(const std::vector<std::size_t>& v);
std::string name_of(const poplar::DebugContext& dc, const std::string& op);
// The graph's state (tile count of virtual graphs, vertex lookup) for the codelets' estimators.
unsigned num_tiles(const Graph& g);
unsigned num_workers(const Graph& g);

// Each source file's codelet descriptors, for finding one by its describe_vertex name (a
// deserialized executable's PopLibs vertices).
std::vector<const abi::VertexTypeDesc*> elementwise_descs();
std::vector<const abi::VertexTypeDesc*> reduce_descs();
std::vector<const abi::VertexTypeDesc*> poplin_descs();
std::vector<const abi::VertexTypeDesc*> popnn_descs();
std::vector<const abi::VertexTypeDesc*> slices_descs();

}  // namespace tessera::ipu::poplibs
