// Element conversion, codelet registration and graph helpers shared by the PopLibs libraries.
#include "common.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <mutex>

#include <poplar/exceptions.hpp>

#include "tessera/core/error.h"

// Built-in codelets index their fields through <poplar/Vertex.hpp>, which reports an index past a
// field's end here (codelet libraries compiled at run time define their own copy).
extern "C" [[noreturn]] __attribute__((visibility("hidden"))) void tessera_ipu_vector_index_fault(
    const tessera::ipu::abi::EdgeSpan* span, std::size_t index) {
  throw poplar::runtime_error(
      fmt::format("vertex {}", span->vertex),
      fmt::format("field '{}' is read or written at index {}, past its end ({} elements)",
                  span->field != nullptr ? span->field : "?", index, span->size));
}

namespace tessera::ipu::poplibs {

using poplar::detail::with_element_type;

namespace {
enum : unsigned {
  kFloat = 1,
  kHalf,
  kInt,
  kUint,
  kShort,
  kUshort,
  kChar,
  kSchar,
  kUchar,
  kBool,
  kLonglong,
  kUlonglong
};

template <typename T>
void load_as(const void* p, std::size_t n, double* out) {
  const T* s = static_cast<const T*>(p);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<double>(s[i]);
}

template <typename T>
T wrap(double v) {
  if (std::isnan(v)) return T(0);
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else {
    // Out of the 64-bit range saturates; inside it wraps modulo 2^bits as the IPU's integers do.
    if (v >= 9.2e18) return static_cast<T>(INT64_MAX);
    if (v <= -9.2e18) return static_cast<T>(INT64_MIN);
    return static_cast<T>(static_cast<std::int64_t>(v));
  }
}

template <typename T>
void store_as(void* p, std::size_t n, const double* in) {
  T* d = static_cast<T*>(p);
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, _Float16>)
      d[i] = static_cast<T>(in[i]);
    else
      d[i] = wrap<T>(in[i]);
  }
}

// The type id is vertex state: PopLibs writes a valid one, so another comes from a damaged
// executable, and the vertex faults as the IPU would on state it cannot use (the Engine adds
// the tile and vertex).
[[noreturn]] void throw_unknown_type(unsigned type) {
  throw poplar::runtime_error(
      "PopLibs codelet",
      fmt::format("its state names element type id {}, which is no Poplar type; the vertex's "
                  "state is damaged (a damaged executable?)",
                  type));
}

}  // namespace

void load_elements(const void* p, unsigned type, std::size_t n, double* out) {
  const bool known = with_element_type(type, [&](auto t) { load_as<decltype(t)>(p, n, out); });
  if (!known) throw_unknown_type(type);
}

void store_elements(void* p, unsigned type, std::size_t n, const double* in) {
  const bool known = with_element_type(type, [&](auto t) { store_as<decltype(t)>(p, n, in); });
  if (!known) throw_unknown_type(type);
}

double round_to_type(unsigned type, double v) {
  double r = v;  // an unknown id leaves v as it is
  with_element_type(type, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, bool>)
      r = v != 0 ? 1.0 : 0.0;  // NaN too, unlike a store
    else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, _Float16>)
      r = static_cast<double>(static_cast<T>(v));
    else
      r = static_cast<double>(wrap<T>(v));
  });
  return r;
}

unsigned type_bytes(unsigned type) {
  return Type(static_cast<std::uint8_t>(type)).tesseraSize();
}
bool type_is_float(unsigned type) {
  return type == kFloat || type == kHalf;
}
bool type_is_signed(unsigned type) {
  return type == kFloat || type == kHalf || type == kInt || type == kShort || type == kChar ||
         type == kSchar || type == kLonglong;
}

std::uint64_t vector_ops(const Graph& g, unsigned type, std::uint64_t n) {
  std::uint64_t width = g.getTarget().getVectorWidth(Type(static_cast<std::uint8_t>(type)));
  width = std::max<std::uint64_t>(1, width);
  return (n + width - 1) / width;
}

void register_codelet(Graph& graph, const std::string& name, const abi::VertexTypeDesc& desc,
                      poplar::PerfEstimateFunc estimator) {
  // The name a vertex type descriptor points at must outlive every graph.
  abi::VertexTypeDesc d = desc;
  d.name = poplar::detail::intern_name(name);
  if (poplar::detail::add_builtin_vertex_type(*graph.tesseraState(), name, d, desc.name))
    graph.registerPerfEstimator(name, std::move(estimator));
}

void require_codelets(const Graph& graph, const char* library, const std::string& vertex) {
  if (!graph.hasCodelet(vertex))
    throw poputil::poplibs_error(fmt::format(
        "{} needs its codelets in the graph (vertex type {} is unknown); call {}::addCodelets"
        "(graph) once after creating the graph",
        library, vertex, library));
}

std::string templated(const std::string& base, const std::vector<std::string>& args) {
  std::string s = base + "<";
  for (std::size_t i = 0; i < args.size(); ++i) s += (i ? "," : "") + args[i];
  return s + ">";
}

std::string type_arg(Type t) {
  return t.toString();
}

std::uint64_t option_u64(const poplar::OptionFlags& o, const char* key, std::uint64_t dflt) {
  if (!o.contains(key)) return dflt;
  try {
    return std::stoull(o.at(key));
  } catch (const std::exception&) {
    throw poputil::poplibs_error(
        fmt::format("option '{}' is '{}'; give a non-negative integer", key, o.at(key)));
  }
}

double option_double(const poplar::OptionFlags& o, const char* key, double dflt) {
  if (!o.contains(key)) return dflt;
  try {
    return std::stod(o.at(key));
  } catch (const std::exception&) {
    throw poputil::poplibs_error(
        fmt::format("option '{}' is '{}'; give a number", key, o.at(key)));
  }
}

std::string option_str(const poplar::OptionFlags& o, const char* key, const std::string& dflt) {
  return o.contains(key) ? o.at(key) : dflt;
}

poplar::TileToTensorMapping mapping_of(const Graph& g, const Tensor& t) {
  return g.getTileMapping(t);
}

void set_state(Graph& g, poplar::VertexRef v, const char* field,
               const std::vector<unsigned>& values) {
  g.setInitialValue(v[field], poplar::ArrayRef<unsigned>(values.data(), values.size()));
}

Tensor clone_like(Graph& g, const Tensor& like, Type type, const poplar::DebugContext& dc) {
  Tensor t = g.addVariable(type, like.shape(), dc);
  g.setTileMapping(t, g.getTileMapping(like));
  return t;
}

std::size_t product(const std::vector<std::size_t>& v) {
  std::size_t p = 1;
  for (auto d : v) p *= d;
  return p;
}

std::string name_of(const poplar::DebugContext& dc, const std::string& op) {
  return dc.getPathName().empty() ? op : dc.getPathName() + "/" + op;
}

unsigned num_tiles(const Graph& g) {
  return g.getTarget().getNumTiles();
}
unsigned num_workers(const Graph& g) {
  return g.getTarget().getNumWorkerContexts();
}

namespace {
const abi::VertexTypeDesc* find_builtin(std::string_view base) {
  for (auto list : {elementwise_descs, reduce_descs, poplin_descs, popnn_descs, slices_descs})
    for (const auto* d : list())
      if (base == d->name) return d;
  return nullptr;
}
// Installed when this library is loaded, so Executable::deserialize finds PopLibs' codelets in a
// process that built no graph with them.
[[maybe_unused]] const bool kLookupInstalled =
    (poplar::detail::set_builtin_desc_lookup(&find_builtin), true);
}  // namespace

}  // namespace tessera::ipu::poplibs
