// Graph construction (spec 001 §2.1-§2.6): variables and their tile mapping, vertices and their
// connections, vertex state, host handles and streams, virtual graphs over a tile range.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

#include "state.h"

namespace poplar {

namespace detail {

unsigned GraphState::tile_of(std::uint32_t var, std::uint64_t offset) const {
  const auto& m = variables.at(var).mapping;
  auto it = m.upper_bound(offset);
  if (it == m.begin()) return ~0u;
  --it;
  return offset < it->second.first ? it->second.second : ~0u;
}

bool GraphState::replicated(const Tensor& t) const {
  for (const auto& r : t.regions())
    if (variables.at(r.var).logical) return true;
  return false;
}

Tensor GraphState::replica_view(const Tensor& t, unsigned r) const {
  if (!replicated(t)) return t;
  std::vector<Tensor::Region> regions = t.regions();
  for (auto& reg : regions) {
    const auto& v = variables.at(reg.var);
    if (v.logical) reg.var = v.base + 1 + r;
  }
  return Tensor(t.elementType(), t.shape(), std::move(regions));
}

std::vector<Tensor> GraphState::replica_views(const Tensor& t) const {
  if (!replicated(t)) return {t};
  std::vector<Tensor> out;
  for (unsigned r = 0; r < replication_factor; ++r) out.push_back(replica_view(t, r));
  return out;
}

int VertexType::field_index(std::string_view n) const {
  for (std::size_t i = 0; i < fields.size(); ++i)
    if (n == fields[i].name) return static_cast<int>(i);
  return -1;
}

std::string normalise_type_name(std::string_view name) {
  // Collapse whitespace; drop it next to '<', '>' and ','.
  std::string out;
  bool pending_space = false;
  auto sep = [](char c) { return c == '<' || c == '>' || c == ','; };
  for (char c : name) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      pending_space = true;
      continue;
    }
    if (pending_space && !out.empty() && !sep(out.back()) && !sep(c)) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

namespace {

void set_mapping(Variable& v, std::uint64_t b, std::uint64_t e, unsigned tile) {
  if (b >= e) return;
  auto& m = v.mapping;
  // Split runs that straddle b or e, then replace everything inside [b, e).
  auto split = [&](std::uint64_t at) {
    auto it = m.upper_bound(at);
    if (it == m.begin()) return;
    --it;
    if (it->first < at && at < it->second.first) {
      auto [end, t] = it->second;
      it->second.first = at;
      m[at] = {end, t};
    }
  };
  split(b);
  split(e);
  m.erase(m.lower_bound(b), m.lower_bound(e));
  m[b] = {e, tile};
}

}  // namespace
}  // namespace detail

using detail::GraphState;

namespace {
// One replica's share of `target`: numIPUs / n IPUs and their tiles (spec 001 §2.5).
Target replica_target(const Target& target, unsigned n) {
  unsigned ipus = target.getNumIPUs();
  if (n == 0 || ipus % n != 0)
    throw invalid_machine_model(fmt::format(
        "replication factor {} for a target of {} IPU(s): each replica is a whole number of IPUs, "
        "so the factor must divide the number of IPUs; create the device with a multiple of {} "
        "IPUs (IPUModel::numIPUs, DeviceManager::getDevices(TargetType::IPU, n))",
        n, ipus, n));
  auto ts = std::make_shared<detail::TargetState>(*target.tesseraState());
  ts->num_ipus = ipus / n;
  ts->num_tiles = target.getNumTiles() / n;
  return Target(std::move(ts));
}
}  // namespace

Graph::Graph(const Target& target, replication_factor r) : target_(target) {
  if (!target.tesseraState())
    throw invalid_machine_model("Graph of a default-constructed Target; get one from a Device");
  state_ = std::make_shared<GraphState>();
  state_->target = target;
  state_->replica_tiles = target.getNumTiles();
  if (r.value != 1) {
    target_ = replica_target(target, r.value);
    state_->replication_factor = r.value;
    state_->replica_tiles = target_.getNumTiles();
    state_->replicated_top_level = true;
    replication_ = r.value;
  }
}

Graph::Graph(const Device& device, replication_factor r) : Graph(device.getTarget(), r) {}

Graph::Graph(std::shared_ptr<GraphState> state, Target target, std::vector<unsigned> tiles,
             unsigned replication)
    : state_(std::move(state)),
      target_(std::move(target)),
      tiles_(std::move(tiles)),
      replication_(replication) {}

Graph Graph::createReplicatedGraph(unsigned replicationFactor) {
  if (replication_ != 1 || !tiles_.empty())
    throw invalid_machine_model(
        "createReplicatedGraph on a replicated or virtual graph; call it on the top-level graph");
  if (state_->replication_factor != 1 && state_->replication_factor != replicationFactor)
    throw invalid_machine_model(
        fmt::format("this graph is already split into {} replicas; it cannot also have {}",
                    state_->replication_factor, replicationFactor));
  Target rt = replica_target(target_, replicationFactor);
  state_->replication_factor = replicationFactor;
  state_->replica_tiles = rt.getNumTiles();
  return Graph(state_, std::move(rt), {}, replicationFactor);
}

Tensor Graph::getNonReplicatedTensor(const Tensor& t) const {
  if (state_->replicated_top_level)
    throw tensor_creation_error(
        "getNonReplicatedTensor on a graph created with a replication factor: it has no parent "
        "(spec 001 §2.5.2); create the replicas with Graph::createReplicatedGraph instead");
  if (!state_->replicated(t))
    throw tensor_creation_error(
        "getNonReplicatedTensor of a tensor that is not replicated; pass a tensor of the graph "
        "returned by createReplicatedGraph");
  std::vector<Tensor::Region> regions;
  for (const auto& v : state_->replica_views(t))
    regions.insert(regions.end(), v.regions().begin(), v.regions().end());
  auto shape = t.shape();
  shape.insert(shape.begin(), state_->replication_factor);
  return Tensor(t.elementType(), std::move(shape), std::move(regions));
}

Graph& Graph::getTopLevelGraph() {
  if (state_->replicated_top_level)
    throw invalid_machine_model(
        "getTopLevelGraph on a graph created with a replication factor: it has no parent (spec "
        "001 §2.5.2); create the replicas with Graph::createReplicatedGraph to keep a top-level "
        "graph");
  if (replication_ == 1 && tiles_.empty()) return *this;
  if (!topLevel_)
    topLevel_.reset(new Graph(state_, state_->target, {}, 1));
  return *topLevel_;
}

Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

unsigned Graph::physicalTile(unsigned tile) const {
  unsigned n = target_.getNumTiles();
  if (tile >= n)
    throw invalid_tile_mapping(fmt::format(
        "tile {} is outside this graph's {} tiles (0 to {}); map to a tile of the graph", tile, n,
        n - 1));
  return tiles_.empty() ? tile : tiles_[tile];
}

Graph Graph::createVirtualGraph(unsigned lowerTile, unsigned upperTile) {
  if (lowerTile >= upperTile || upperTile > target_.getNumTiles())
    throw invalid_tile_mapping(
        fmt::format("virtual graph over tiles [{}, {}) of a graph of {} tiles", lowerTile,
                    upperTile, target_.getNumTiles()));
  std::vector<unsigned> tiles(upperTile - lowerTile);
  std::iota(tiles.begin(), tiles.end(), lowerTile);
  return createVirtualGraph(tiles);
}

Graph Graph::createVirtualGraph(const std::vector<unsigned>& tiles) {
  if (tiles.empty()) throw invalid_tile_mapping("virtual graph over no tiles");
  std::vector<unsigned> phys;
  for (unsigned t : tiles) phys.push_back(physicalTile(t));
  auto ts = std::make_shared<detail::TargetState>(*target_.tesseraState());
  ts->num_tiles = static_cast<unsigned>(phys.size());
  ts->num_ipus = std::max(1u, static_cast<unsigned>(phys.size()) / std::max(1u, ts->tiles_per_ipu));
  return Graph(state_, Target(std::move(ts)), std::move(phys), replication_);
}

Tensor Graph::addVariable(const Type& type, ArrayRef<std::size_t> shape,
                          const DebugContext& debugContext) {
  if (type == Type()) throw type_error("addVariable with no element type");
  detail::Variable v;
  v.name = debugContext.getPathName().empty() ? "<anon>" : debugContext.getPathName();
  v.type = type;
  v.shape = shape.vec();
  // A wrapped count would make a tensor of that shape with no bytes behind it.
  std::size_t n = 1;
  bool overflow = false;
  for (auto d : v.shape) overflow |= __builtin_mul_overflow(n, d, &n);
  overflow |= __builtin_mul_overflow(n, std::size_t{type.tesseraSize()}, &v.bytes);
  if (overflow)
    throw tensor_creation_error(fmt::format(
        "addVariable '{}': shape {{{}}} of {} holds more bytes than 64 bits count; check its "
        "dimensions",
        v.name, fmt::join(v.shape, ", "), type.toString()));
  auto id = static_cast<std::uint32_t>(state_->variables.size());
  v.base = id;
  v.replicas = replication_;
  v.logical = replication_ > 1;
  state_->variables.push_back(v);
  v.logical = false;
  for (unsigned r = 0; r < replication_ && replication_ > 1; ++r) {
    v.replica = r;
    state_->variables.push_back(v);
  }
  std::vector<Tensor::Region> regions;
  if (n > 0) regions.push_back({id, 0, n * type.tesseraSize()});
  Tensor t(type, shape.vec(), std::move(regions));
  // A CPU target has one tile per IPU: what is added lives there without a setTileMapping.
  if (n > 0 && target_.getTargetType() == TargetType::CPU) setTileMapping(t, 0);
  return t;
}

Tensor Graph::addVariable(const Type& type, ArrayRef<std::size_t> shape,
                          VariableMappingMethod method, const DebugContext& debugContext) {
  Tensor t = addVariable(type, shape, debugContext);
  if (method == VariableMappingMethod::LINEAR) {
    // Spread elements evenly over the graph's tiles, in whole grains of the atomic store size.
    std::size_t n = t.numElements(), tiles = target_.getNumTiles();
    std::size_t grain = std::max<std::size_t>(
        1, getTarget().getAtomicStoreGranularity() / std::max(1u, type.tesseraSize()));
    std::size_t per = ((n + tiles - 1) / tiles + grain - 1) / grain * grain;
    TileToTensorMapping m(tiles);
    for (std::size_t i = 0, tile = 0; i < n; i += per, ++tile)
      m[tile].push_back({i, std::min(n, i + per)});
    setTileMapping(t, m);
  }
  return t;
}

void Graph::tesseraMarkConstant(const Tensor& t) {
  for (const auto& view : state_->replica_views(t))
    for (const auto& r : view.regions()) state_->variables.at(r.var).constant = true;
}

Tensor Graph::clone(const Tensor& t, const DebugContext& debugContext, TensorCloneMethod method) {
  return clone(t.elementType(), t, debugContext, method);
}

Tensor Graph::clone(const Type& type, const Tensor& t, const DebugContext& debugContext,
                    TensorCloneMethod) {
  // Every clone method gives the new tensor its own elements in t's order and t's mapping
  // (an aliased element of t gets its own element in the clone).
  Tensor c = addVariable(type, t.shape(), debugContext);
  auto mapping = getTileMapping(t, false);
  setTileMapping(c, mapping);
  return c;
}

void Graph::tesseraSetInitialValue(const Tensor& t, const void* values, std::size_t n,
                                   Type hostType, std::size_t hostSize, bool fill) {
  const std::size_t elements = t.numElements();
  if (fill ? n != 1 : n != elements)
    throw tensor_creation_error(
        fmt::format("setInitialValue with {} values for a tensor of {} "
                    "elements",
                    n, elements));
  if (hostType == Type())
    throw type_error("setInitialValue with values of a host type that has no Poplar type");
  (void)hostSize;
  // Initial values live with the variables, on the tiles: what the target's memory cannot hold
  // (its tiles x bytes per tile, spec 001 §7.2) is refused before the host holds a copy.
  const std::uint64_t memory = std::uint64_t{target_.getNumTiles()} * target_.getBytesPerTile();
  std::size_t es = t.elementSize();
  for (const auto& r : t.regions())
    if (std::max<std::uint64_t>(elements * es, state_->variables.at(r.var).bytes) > memory)
      throw graph_memory_allocation_error(
          "graph",
          fmt::format("setInitialValue of tensor '{}' ({} elements of {}, variable of {} B): the "
                      "target's {} tiles hold {} B in all, so no initial value this large can be "
                      "stored; use a smaller tensor or a target with more tiles",
                      state_->var(r.var).name, elements, t.elementType().toString(),
                      state_->variables.at(r.var).bytes, target_.getNumTiles(), memory));
  std::vector<std::byte> converted(elements * es);
  if (fill) {
    detail::convert_elements(values, hostType, converted.data(), t.elementType(), 1);
    for (std::size_t i = 1; i < elements; ++i)
      std::memcpy(converted.data() + i * es, converted.data(), es);
  } else {
    detail::convert_elements(values, hostType, converted.data(), t.elementType(), n);
  }
  for (const auto& view : state_->replica_views(t)) {
    std::size_t pos = 0;
    for (const auto& r : view.regions()) {
      auto& v = state_->variables.at(r.var);
      if (v.initial.empty()) {
        v.initial.assign(v.bytes, std::byte{0});
        v.initial_set.assign(v.bytes / std::max(1u, v.type.tesseraSize()), 0);
      }
      std::memcpy(v.initial.data() + r.begin, converted.data() + pos, r.end - r.begin);
      const auto [first, last] = detail::element_range(v, r.begin, r.end);
      std::fill(v.initial_set.begin() + first, v.initial_set.begin() + last, 1);
      pos += r.end - r.begin;
    }
  }
}

namespace {
// Maps bytes [b, e) of a variable to `tile`; a logical variable of a replicated graph also
// maps each replica's variable to the same tile of that replica.
void map_bytes(GraphState& g, std::uint32_t var, std::uint64_t b, std::uint64_t e, unsigned tile) {
  auto& v = g.variables.at(var);
  detail::set_mapping(v, b, e, tile);
  if (v.logical)
    for (unsigned r = 0; r < v.replicas; ++r)
      detail::set_mapping(g.variables.at(var + 1 + r), b, e, tile + r * g.replica_tiles);
}
}  // namespace

void Graph::setTileMapping(const Tensor& t, unsigned tileNum) {
  if (!t.valid())
    throw invalid_tile_mapping("setTileMapping of an invalid Tensor (default-constructed, never "
                               "made by the graph)");
  unsigned tile = physicalTile(tileNum);
  for (const auto& r : t.regions()) map_bytes(*state_, r.var, r.begin, r.end, tile);
}

void Graph::setTileMapping(const Tensor& t, const TileToTensorMapping& mapping) {
  if (!t.valid())
    throw invalid_tile_mapping("setTileMapping of an invalid Tensor (default-constructed, never "
                               "made by the graph)");
  std::size_t es = t.elementSize();
  const auto& regions = t.regions();
  for (std::size_t tile = 0; tile < mapping.size(); ++tile) {
    for (const auto& iv : mapping[tile]) {
      if (iv.end() > t.numElements())
        throw invalid_tile_mapping(
            fmt::format("mapping interval [{}, {}) for tile {} is past the "
                        "tensor's {} elements",
                        iv.begin(), iv.end(), tile, t.numElements()));
      unsigned phys = physicalTile(static_cast<unsigned>(tile));
      std::uint64_t lo = iv.begin() * es, hi = iv.end() * es, pos = 0;
      for (std::size_t ri = 0; ri < regions.size(); ++ri) {
        const auto& r = regions[ri];
        std::uint64_t len = r.end - r.begin;
        std::uint64_t a = std::max(lo, pos), b = std::min(hi, pos + len);
        if (a < b) map_bytes(*state_, r.var, r.begin + a - pos, r.begin + b - pos, phys);
        pos += len;
      }
    }
  }
}

TileToTensorMapping Graph::getTileMapping(const Tensor& t, bool requireComplete) const {
  TileToTensorMapping out(target_.getNumTiles());
  std::map<unsigned, unsigned> virt;  // physical -> this graph's tile
  for (unsigned i = 0; i < tiles_.size(); ++i) virt[tiles_[i]] = i;
  std::size_t es = t.elementSize(), pos = 0;
  for (const auto& r : t.regions()) {
    for (std::uint64_t b = r.begin; b < r.end;) {
      unsigned tile = state_->tile_of(r.var, b);
      const auto& m = state_->var(r.var).mapping;
      std::uint64_t e = r.end;
      if (tile != ~0u) {
        auto it = std::prev(m.upper_bound(b));
        e = std::min(e, it->second.first);
      } else {
        auto it = m.upper_bound(b);
        if (it != m.end()) e = std::min(e, it->first);
        if (requireComplete)
          throw invalid_tile_mapping(fmt::format(
              "element {} of tensor '{}' has no tile mapping; call setTileMapping for it",
              (pos + b - r.begin) / es, state_->var(r.var).name));
      }
      if (tile != ~0u) {
        unsigned vt = tile;
        if (!tiles_.empty()) {
          auto f = virt.find(tile);
          vt = f == virt.end() ? ~0u : f->second;
        }
        if (vt != ~0u) {
          std::size_t first = (pos + b - r.begin) / es, last = (pos + e - r.begin) / es;
          auto& list = out[vt];
          if (!list.empty() && list.back().end() == first)
            list.back() = Interval(list.back().begin(), last);
          else
            list.emplace_back(first, last);
        }
      }
      b = e;
    }
    pos += r.end - r.begin;
  }
  return out;
}

ComputeSet Graph::addComputeSet(const DebugContext& debugContext) {
  unsigned id = static_cast<unsigned>(state_->compute_sets.size());
  state_->compute_sets.push_back(
      {debugContext.getPathName().empty() ? fmt::format("cs{}", id) : debugContext.getPathName(),
       {}});
  return ComputeSet(id);
}

VertexRef Graph::addVertex(ComputeSet cs, StringRef vertexType) {
  if (cs.getId() >= state_->compute_sets.size())
    throw graph_connection_error("addVertex to a compute set of another graph or none");
  std::string name = detail::normalise_type_name(vertexType);
  auto it = state_->type_index.find(name);
  if (it == state_->type_index.end())
    throw unknown_vertex_type(
        fmt::format("vertex type '{}' is not known; add the codelet that defines it with "
                    "Graph::addCodelets (template vertices need an explicit instantiation, "
                    "'template class {};')",
                    name, name));
  detail::VertexInstance v;
  v.type = it->second;
  v.compute_set = cs.getId();
  v.fields.resize(state_->types[it->second].fields.size());
  v.replicated = replication_ > 1;
  if (target_.getTargetType() == TargetType::CPU) v.tile = physicalTile(0);
  unsigned id = static_cast<unsigned>(state_->vertices.size());
  state_->vertices.push_back(std::move(v));
  state_->compute_sets[cs.getId()].vertices.push_back(id);
  return VertexRef(state_.get(), id);
}

VertexRef Graph::addVertex(ComputeSet cs, StringRef vertexType,
                           ArrayRef<ConnectionDesc> connections) {
  VertexRef v = addVertex(cs, vertexType);
  for (const auto& c : connections) {
    if (c.single)
      connect(v[c.field], c.tensors[0]);
    else
      connect(v[c.field], ArrayRef<Tensor>(c.tensors));
  }
  return v;
}

namespace {
struct FieldLookup {
  detail::VertexInstance* vertex;
  const detail::VertexType* type;
  const detail::abi::FieldDesc* desc;
  detail::Connection* conn;
};

FieldLookup lookup(GraphState& g, const FieldRef& f) {
  if (f.getVertex().tesseraGraph() != &g)
    throw graph_connection_error(
        fmt::format("field '{}' belongs to a vertex of another graph", f.getName()));
  auto& v = g.vertices.at(f.getVertex().getId());
  const auto& type = g.types[v.type];
  int fi = type.field_index(f.getName());
  if (fi < 0) {
    std::vector<std::string> names;
    for (const auto& d : type.fields) names.emplace_back(d.name);
    throw unknown_field(fmt::format("vertex type '{}' has no field '{}'; its fields are: {}",
                                    type.name, f.getName(), fmt::join(names, ", ")));
  }
  return {&v, &type, &type.fields[fi], &v.fields[fi]};
}

void check_element_type(const FieldLookup& l, const Tensor& t, const FieldRef& f) {
  const char* want = l.desc->element_type;
  if (want != nullptr && t.elementType().toString() != want)
    throw graph_connection_error(fmt::format(
        "vertex {} ({}) field '{}' holds {} but is connected to a tensor of {}; connect a "
        "tensor of {} or reinterpret it",
        f.getVertex().getId(), l.type->name, f.getName(), want, t.elementType().toString(), want));
}
}  // namespace

void Graph::connect(FieldRef field, const Tensor& tensor) {
  using detail::abi::FieldKind;
  auto l = lookup(*state_, field);
  check_element_type(l, tensor, field);
  switch (l.desc->kind) {
    case FieldKind::edge:
      if (tensor.numElements() != 1)
        throw graph_connection_error(fmt::format(
            "vertex {} ({}) field '{}' is a single element but the tensor has {} elements; "
            "connect one element (t[i]) or make the field a Vector",
            field.getVertex().getId(), l.type->name, field.getName(), tensor.numElements()));
      l.conn->tensors = {tensor};
      l.conn->connected = true;
      break;
    case FieldKind::edge_vector:
      if (field.getIndex() >= 0)
        throw graph_connection_error(
            fmt::format("field '{}' is one vector; it takes no index", field.getName()));
      l.conn->tensors = {tensor.flatten()};
      l.conn->connected = true;
      break;
    case FieldKind::edge_2d:
    case FieldKind::edge_scalars: {
      if (field.getIndex() < 0) {
        // A 2-D tensor connects one row per entry.
        std::vector<Tensor> rows;
        if (tensor.rank() < 2 && l.desc->kind == FieldKind::edge_2d)
          throw graph_connection_error(fmt::format(
              "field '{}' is a list of vectors; connect a list of tensors or a 2-D tensor",
              field.getName()));
        Tensor t2 = l.desc->kind == FieldKind::edge_scalars
                        ? tensor.flatten().reshape({tensor.numElements(), 1})
                        : tensor;
        for (std::size_t i = 0; i < t2.dim(0); ++i) rows.push_back(t2[i].flatten());
        connect(field, ArrayRef<Tensor>(rows));
        return;
      }
      auto idx = static_cast<std::size_t>(field.getIndex());
      if (l.conn->declared_rows == 0 && l.conn->tensors.size() <= idx)
        l.conn->tensors.resize(idx + 1);
      if (idx >= l.conn->tensors.size())
        throw index_error(
            fmt::format("field '{}' has {} entries (setFieldSize); index {} is past "
                        "them",
                        field.getName(), l.conn->tensors.size(), idx));
      if (l.desc->kind == FieldKind::edge_scalars && tensor.numElements() != 1)
        throw graph_connection_error(
            fmt::format("entry {} of field '{}' is a single element; "
                        "the tensor has {}",
                        idx, field.getName(), tensor.numElements()));
      l.conn->tensors[idx] = tensor.flatten();
      l.conn->connected = std::all_of(l.conn->tensors.begin(), l.conn->tensors.end(),
                                      [](const Tensor& t) { return t.valid(); });
      break;
    }
    case FieldKind::state:
    case FieldKind::state_vector:
      throw graph_connection_error(
          fmt::format("field '{}' of {} is vertex state, not an edge; set it with setInitialValue",
                      field.getName(), l.type->name));
  }
}

void Graph::connect(FieldRef field, ArrayRef<Tensor> tensors) {
  using detail::abi::FieldKind;
  auto l = lookup(*state_, field);
  if (l.desc->kind != FieldKind::edge_2d && l.desc->kind != FieldKind::edge_scalars) {
    if (tensors.size() == 1) return connect(field, tensors[0]);
    throw graph_connection_error(fmt::format("field '{}' of {} takes one tensor, not {}",
                                             field.getName(), l.type->name, tensors.size()));
  }
  l.conn->tensors.clear();
  l.conn->declared_rows = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    check_element_type(l, tensors[i], field);
    if (l.desc->kind == FieldKind::edge_scalars && tensors[i].numElements() != 1)
      throw graph_connection_error(
          fmt::format("entry {} of field '{}' is a single element; the "
                      "tensor has {}",
                      i, field.getName(), tensors[i].numElements()));
    l.conn->tensors.push_back(tensors[i].flatten());
  }
  l.conn->connected = true;
}

void Graph::setFieldSize(FieldRef field, std::size_t size) {
  auto l = lookup(*state_, field);
  if (l.desc->kind == detail::abi::FieldKind::edge_2d ||
      l.desc->kind == detail::abi::FieldKind::edge_scalars) {
    l.conn->tensors.assign(size, Tensor());
    l.conn->declared_rows = size;
    l.conn->connected = size == 0;
  } else if (l.desc->kind == detail::abi::FieldKind::state_vector) {
    l.conn->state.assign(size * l.desc->element_bytes, std::byte{0});
    l.conn->state_count = size;
    l.conn->connected = true;
  } else {
    throw graph_connection_error(
        fmt::format("setFieldSize on field '{}', which has a fixed size", field.getName()));
  }
}

std::size_t Graph::getFieldSize(FieldRef field) const {
  auto l = lookup(*state_, field);
  return l.desc->kind == detail::abi::FieldKind::state_vector ? l.conn->state_count
                                                              : l.conn->tensors.size();
}

void Graph::tesseraSetFieldValue(const FieldRef& f, const void* values, std::size_t n,
                                 std::size_t elemSize, Type hostType) {
  using detail::abi::FieldKind;
  auto l = lookup(*state_, f);
  if (l.desc->kind == FieldKind::state) {
    if (n != 1)
      throw graph_connection_error(
          fmt::format("field '{}' holds one value, not {}", f.getName(), n));
    Type want;
    for (std::uint8_t id = 1; id <= 12; ++id)
      if (l.desc->element_type && Type(id).toString() == l.desc->element_type) want = Type(id);
    l.conn->state.assign(l.desc->host_bytes, std::byte{0});
    if (want != Type() && hostType != Type())
      detail::convert_elements(values, hostType, l.conn->state.data(), want, 1);
    else if (elemSize == l.desc->host_bytes)
      std::memcpy(l.conn->state.data(), values, elemSize);
    else
      throw graph_connection_error(fmt::format("field '{}' of {} is {} B; the value given is {} B",
                                               f.getName(), l.type->name, l.desc->host_bytes,
                                               elemSize));
    l.conn->connected = true;
  } else if (l.desc->kind == FieldKind::state_vector) {
    Type want;
    for (std::uint8_t id = 1; id <= 12; ++id)
      if (l.desc->element_type && Type(id).toString() == l.desc->element_type) want = Type(id);
    l.conn->state.assign(n * l.desc->element_bytes, std::byte{0});
    if (want != Type() && hostType != Type())
      detail::convert_elements(values, hostType, l.conn->state.data(), want, n);
    else if (elemSize == l.desc->element_bytes)
      std::memcpy(l.conn->state.data(), values, n * elemSize);
    else
      throw graph_connection_error(fmt::format("field '{}' elements are {} B; the values are {} B",
                                               f.getName(), l.desc->element_bytes, elemSize));
    l.conn->state_count = n;
    l.conn->connected = true;
  } else {
    throw graph_connection_error(fmt::format(
        "setInitialValue on field '{}' of {}, which is an edge; connect a tensor instead",
        f.getName(), l.type->name));
  }
}

void Graph::setTileMapping(VertexRef v, unsigned tileNum) {
  state_->vertices.at(v.getId()).tile = physicalTile(tileNum);
}

unsigned Graph::getTileMapping(VertexRef v) const {
  return state_->vertices.at(v.getId()).tile;
}

void Graph::setPerfEstimate(const VertexRef& v, std::uint64_t cycles, std::uint64_t flops) {
  state_->vertices.at(v.getId()).estimate = VertexPerfEstimate(cycles, flops);
}

void Graph::registerPerfEstimator(StringRef vertexTypeName, PerfEstimateFunc f) {
  state_->estimators[detail::normalise_type_name(vertexTypeName)] = std::move(f);
}

bool Graph::addCodelets(StringRef src, CodeletFileType type, StringRef compileFlags, StringRef) {
  detail::add_codelets(*state_, std::string(src), type, std::string(compileFlags));
  return true;
}

void Graph::addCodelets(ArrayRef<std::string> srcs, StringRef compileFlags) {
  for (const auto& s : srcs) addCodelets(s, CodeletFileType::Auto, compileFlags);
}

bool Graph::hasCodelet(StringRef vertexTypeName) const {
  return state_->type_index.count(detail::normalise_type_name(vertexTypeName)) != 0;
}

DataStream Graph::addHostToDeviceFIFO(StringRef handle, const Type& elementType,
                                      std::size_t numElements, ReplicatedStreamMode mode,
                                      const OptionFlags&) {
  std::string h(handle);
  if (state_->stream_index.count(h))
    throw stream_connection_error(fmt::format("a stream named '{}' already exists", h));
  unsigned id = static_cast<unsigned>(state_->streams.size());
  state_->streams.emplace_back(id, h, elementType, numElements, true);
  state_->stream_index[h] = id;
  state_->stream_replication.emplace_back(replication_ > 1, mode);
  return state_->streams.back();
}

DataStream Graph::addDeviceToHostFIFO(StringRef handle, const Type& elementType,
                                      std::size_t numElements, const OptionFlags&) {
  std::string h(handle);
  if (state_->stream_index.count(h))
    throw stream_connection_error(fmt::format("a stream named '{}' already exists", h));
  unsigned id = static_cast<unsigned>(state_->streams.size());
  state_->streams.emplace_back(id, h, elementType, numElements, false);
  state_->stream_index[h] = id;
  state_->stream_replication.emplace_back(replication_ > 1, ReplicatedStreamMode::REPLICATE);
  return state_->streams.back();
}

namespace {
// A second handle of one name would silently replace the first.
void add_host_handle(detail::GraphState& g, const std::string& key, StringRef handle,
                     const Tensor& t, bool write) {
  if (!t.valid())
    throw tensor_io_state_error(fmt::format("host {} handle '{}' of an invalid Tensor",
                                            write ? "write" : "read", handle));
  if (!g.host_handles.emplace(key, detail::HostHandle{t, write}).second)
    throw tensor_io_state_error(fmt::format("a host {} handle named '{}' already exists; give "
                                            "each handle its own name",
                                            write ? "write" : "read", handle));
}
}  // namespace

void Graph::createHostWrite(StringRef handle, const Tensor& t, bool) {
  add_host_handle(*state_, std::string(handle), handle, t, true);
}

void Graph::createHostRead(StringRef handle, const Tensor& t, bool) {
  add_host_handle(*state_, std::string(handle) + "\x01read", handle, t, false);
}

RemoteBuffer Graph::addRemoteBuffer(StringRef handle, const Type& elementType,
                                    std::size_t numElements, std::size_t repeats, bool, bool) {
  std::string h(handle);
  if (state_->remote_index.count(h))
    throw graph_connection_error(fmt::format("a remote buffer named '{}' already exists", h));
  if (elementType == Type() || numElements == 0 || repeats == 0)
    throw tensor_creation_error(fmt::format(
        "remote buffer '{}' of {} elements x {} repeats: give an element type and at least one "
        "element and one repeat",
        h, numElements, repeats));
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(numElements, repeats, &bytes) ||
      __builtin_mul_overflow(bytes, std::size_t{elementType.tesseraSize()}, &bytes))
    throw tensor_creation_error(fmt::format(
        "remote buffer '{}' of {} elements x {} repeats of {} holds more bytes than 64 bits "
        "count; use fewer rows or elements",
        h, numElements, repeats, elementType.toString()));
  unsigned id = static_cast<unsigned>(state_->remote_buffers.size());
  state_->remote_buffers.push_back({h, elementType, numElements, repeats, replication_ > 1});
  state_->remote_index[h] = id;
  return RemoteBuffer(id, h, elementType, numElements, repeats);
}

Function Graph::addFunction(const program::Program& program) {
  state_->functions.push_back(program);
  return Function(static_cast<unsigned>(state_->functions.size() - 1));
}

std::size_t Graph::getNumVertices() const {
  return state_->vertices.size();
}
std::size_t Graph::getNumComputeSets() const {
  return state_->compute_sets.size();
}

// ---- perf-estimator introspection ----
std::size_t FieldData::totalElements() const {
  return std::accumulate(sizes_.begin(), sizes_.end(), std::size_t{0});
}

FieldData VertexIntrospector::getFieldInfo(StringRef name) const {
  const auto& v = graph_->vertices.at(vertex_);
  const auto& type = graph_->types[v.type];
  int fi = type.field_index(name);
  if (fi < 0)
    throw unknown_field(
        fmt::format("perf estimator of {} asks for field '{}', which it lacks", type.name, name));
  std::vector<std::size_t> sizes;
  const auto& c = v.fields[fi];
  if (type.fields[fi].kind == detail::abi::FieldKind::state_vector) sizes.push_back(c.state_count);
  for (const auto& t : c.tensors) sizes.push_back(t.valid() ? t.numElements() : 0);
  return FieldData(std::move(sizes));
}

const std::string& VertexIntrospector::getVertexType() const {
  return graph_->types[graph_->vertices.at(vertex_).type].name;
}

unsigned VertexIntrospector::getTile() const {
  return graph_->vertices.at(vertex_).tile;
}

}  // namespace poplar
