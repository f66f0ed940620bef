// The checks of a deserialized executable (executable_check.h): after them every index the
// Engine follows is in range and every buffer it sizes from the file matches what it holds.
#include "executable_check.h"

#include <algorithm>
#include <set>

#include <fmt/ranges.h>

#include "tessera/core/limits.h"

namespace poplar::detail {

namespace {

using abi::FieldKind;

// A tensor's runs name variables of `g`, lie inside them on whole elements, and hold exactly
// the elements its shape counts. `logical`: whether it may name a replicated graph's logical
// variables (which only replica views resolve to storage).
void check_tensor(const GraphState& g, const Tensor& t, const std::string& where, bool logical) {
  if (!t.valid()) return;
  const std::uint64_t es = t.elementSize();
  std::uint64_t elements = 1, want = 0, bytes = 0;
  bool overflow = false;
  for (std::size_t d : t.shape()) overflow |= __builtin_mul_overflow(elements, d, &elements);
  overflow |= __builtin_mul_overflow(elements, es, &want);
  if (overflow)
    executable_damaged("{} has shape {{{}}}, more elements than 64 bits count", where,
                       fmt::join(t.shape(), ","));
  const auto& regions = t.regions();
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const auto& r = regions[i];
    if (r.var >= g.variables.size())
      executable_damaged("{} run {} names variable {} of {}", where, i, r.var, g.variables.size());
    const auto& v = g.variables[r.var];
    if (r.begin >= r.end || r.end > v.bytes)
      executable_damaged("{} run {} covers bytes [{}, {}) of variable {} '{}', which has {} B",
                         where, i, r.begin, r.end, r.var, v.name, v.bytes);
    if (r.begin % es != 0 || r.end % es != 0)
      executable_damaged(
          "{} run {} (bytes [{}, {}) of variable {}) is not whole {}-byte "
          "elements",
          where, i, r.begin, r.end, r.var, es);
    if (v.logical && !logical)
      executable_damaged(
          "{} names variable {} '{}' of the replicated graph, which only "
          "replicated vertices and programs may",
          where, r.var, v.name);
    if (__builtin_add_overflow(bytes, r.end - r.begin, &bytes))
      executable_damaged("{} runs hold more bytes than 64 bits count", where);
  }
  if (bytes != want)
    executable_damaged("{} has shape {{{}}} of {} ({} B) but its runs hold {} B", where,
                       fmt::join(t.shape(), ","), t.elementType().toString(), want, bytes);
}

void check_variables(const GraphState& g) {
  const unsigned tiles = g.target.getNumTiles();
  std::uint64_t stored = 0;
  for (std::size_t id = 0; id < g.variables.size(); ++id) {
    const Variable& v = g.variables[id];
    const std::uint64_t es = v.type.tesseraSize();
    std::uint64_t bytes = es;
    bool overflow = false;
    for (std::size_t d : v.shape) overflow |= __builtin_mul_overflow(bytes, d, &bytes);
    if (overflow || bytes != v.bytes)
      executable_damaged("variable {} '{}' of shape {{{}}} and type {} says it has {} B", id,
                         v.name, fmt::join(v.shape, ","), v.type.toString(), v.bytes);
    if (!v.initial.empty() && v.initial.size() != v.bytes)
      executable_damaged("variable {} '{}' has {} B but an initial value of {} B", id, v.name,
                         v.bytes, v.initial.size());
    if (!v.initial_set.empty() && v.initial_set.size() != v.bytes / es)
      executable_damaged("variable {} '{}' has {} elements but {} initial-value flags", id, v.name,
                         v.bytes / es, v.initial_set.size());
    // Replicated graphs: a logical variable, then one variable per replica (state.h).
    const unsigned factor = g.replication_factor;
    if (v.logical) {
      if (factor < 2 || v.base != id || v.replicas != factor || id + factor >= g.variables.size())
        executable_damaged(
            "variable {} '{}' is a replicated graph's variable but is not "
            "followed by its {} replicas' variables",
            id, v.name, factor);
      for (unsigned r = 0; r < factor; ++r) {
        const Variable& p = g.variables[id + 1 + r];
        if (p.logical || p.base != id || p.replica != r || p.bytes != v.bytes || p.type != v.type)
          executable_damaged("variable {} is not replica {} of variable {} '{}'", id + 1 + r, r, id,
                             v.name);
      }
    } else if (v.base != id) {
      if (v.base >= id || !g.variables[v.base].logical || v.base + 1 + v.replica != id)
        executable_damaged("variable {} '{}' names variable {} as its replicated variable", id,
                           v.name, v.base);
    } else if (v.replicas != 1 || v.replica != 0) {
      executable_damaged(
          "variable {} '{}' says it is replica {} of {} but names no replicated "
          "variable",
          id, v.name, v.replica, v.replicas);
    }
    // The mapping: runs of whole elements, in order, not overlapping, on tiles of the target.
    const unsigned mapped_tiles = v.logical ? g.replica_tiles : tiles;
    std::uint64_t end = 0;
    for (const auto& [b, run] : v.mapping) {
      if (b < end || b >= run.first || run.first > v.bytes || b % es != 0 || run.first % es != 0)
        executable_damaged(
            "variable {} '{}' ({} B) maps bytes [{}, {}), which are not whole "
            "elements after byte {}",
            id, v.name, v.bytes, b, run.first, end);
      if (run.second >= mapped_tiles)
        executable_damaged("variable {} '{}' maps bytes [{}, {}) to tile {} of {}", id, v.name, b,
                           run.first, run.second, mapped_tiles);
      end = run.first;
    }
    if (!v.logical) stored += v.bytes;
  }
  // The Engine holds every stored variable on the host, before it checks tile memory.
  tessera::check_host_memory(stored, "the executable's variables");
}

void check_vertices(const GraphState& g) {
  const unsigned tiles = g.target.getNumTiles();
  for (std::size_t vid = 0; vid < g.vertices.size(); ++vid) {
    const VertexInstance& v = g.vertices[vid];
    if (v.type >= g.types.size())
      executable_damaged("vertex {} names vertex type {} of {}", vid, v.type, g.types.size());
    if (v.compute_set >= g.compute_sets.size())
      executable_damaged("vertex {} names compute set {} of {}", vid, v.compute_set,
                         g.compute_sets.size());
    // A replicated vertex runs once per replica, on its tile of each replica's tiles.
    const unsigned own_tiles = v.replicated ? g.replica_tiles : tiles;
    if (v.tile != ~0u && v.tile >= own_tiles)
      executable_damaged("vertex {} is on tile {} of {}", vid, v.tile, own_tiles);
    const VertexType& type = g.types[v.type];
    if (v.fields.size() != type.fields.size())
      executable_damaged("vertex {} ({}) has {} fields; its type has {}", vid, type.name,
                         v.fields.size(), type.fields.size());
    for (std::size_t fi = 0; fi < type.fields.size(); ++fi) {
      const abi::FieldDesc& fd = type.fields[fi];
      const Connection& c = v.fields[fi];
      const std::string where = fmt::format("vertex {} ({}) field '{}'", vid, type.name, fd.name);
      for (std::size_t k = 0; k < c.tensors.size(); ++k) {
        const Tensor& t = c.tensors[k];
        check_tensor(g, t, fmt::format("{} tensor {}", where, k), v.replicated);
        if (t.valid() && fd.element_type != nullptr &&
            t.elementType().toString() != fd.element_type)
          executable_damaged("{} holds {} but tensor {} is {}", where, fd.element_type, k,
                             t.elementType().toString());
      }
      if (!c.connected) continue;  // the Engine refuses it by name
      const bool all_valid = std::all_of(c.tensors.begin(), c.tensors.end(),
                                         [](const Tensor& t) { return t.valid(); });
      switch (fd.kind) {
        case FieldKind::state:
          if (c.state.size() != fd.host_bytes)
            executable_damaged("{} is {} B of state; the file gives {} B", where, fd.host_bytes,
                               c.state.size());
          break;
        case FieldKind::state_vector: {
          std::uint64_t want = 0;
          if (__builtin_mul_overflow(std::uint64_t{c.state_count}, fd.element_bytes, &want) ||
              c.state.size() != want)
            executable_damaged("{} has {} elements of {} B; the file gives {} B", where,
                               c.state_count, fd.element_bytes, c.state.size());
          break;
        }
        case FieldKind::edge:
        case FieldKind::edge_vector:
          if (c.tensors.size() != 1 || !all_valid ||
              (fd.kind == FieldKind::edge && c.tensors[0].numElements() != 1))
            executable_damaged("{} is connected to {} tensor(s); it takes one{}", where,
                               c.tensors.size(),
                               fd.kind == FieldKind::edge ? " of one element" : "");
          break;
        case FieldKind::edge_2d:
        case FieldKind::edge_scalars:
          if (!all_valid || (c.declared_rows != 0 && c.declared_rows != c.tensors.size()))
            executable_damaged("{} has {} rows of {} declared, not all connected", where,
                               c.tensors.size(), c.declared_rows);
          if (fd.kind == FieldKind::edge_scalars)
            for (const Tensor& t : c.tensors)
              if (t.numElements() != 1)
                executable_damaged("{} takes tensors of one element; one has {}", where,
                                   t.numElements());
          break;
      }
    }
  }
  // Each vertex is listed once, by the compute set it names.
  std::vector<bool> listed(g.vertices.size(), false);
  for (std::size_t cs = 0; cs < g.compute_sets.size(); ++cs)
    for (unsigned vid : g.compute_sets[cs].vertices) {
      if (vid >= g.vertices.size())
        executable_damaged("compute set {} '{}' lists vertex {} of {}", cs, g.compute_sets[cs].name,
                           vid, g.vertices.size());
      if (listed[vid] || g.vertices[vid].compute_set != cs)
        executable_damaged("compute set {} '{}' lists vertex {}, which names compute set {}{}", cs,
                           g.compute_sets[cs].name, vid, g.vertices[vid].compute_set,
                           listed[vid] ? " and is listed twice" : "");
      listed[vid] = true;
    }
  for (std::size_t vid = 0; vid < g.vertices.size(); ++vid)
    if (!listed[vid])
      executable_damaged("vertex {} names compute set {}, which does not list it", vid,
                         g.vertices[vid].compute_set);
}

void check_scalar(const Tensor& t, const std::string& where) {
  if (!t.valid() || t.numElements() != 1)
    executable_damaged("{} needs a tensor of one element", where);
}

void check_same(const Tensor& a, const Tensor& b, const std::string& where) {
  if (!a.valid() || !b.valid() || a.elementType() != b.elementType() ||
      a.numElements() != b.numElements())
    executable_damaged("{} needs a source and a destination of one type and size", where);
}

// The 64-bit counter CycleCount writes: two UNSIGNED_INT words in one run.
void check_stamp(const Tensor& t, const std::string& where) {
  if (!t.valid() || t.elementType() != UNSIGNED_INT || t.numElements() != 2 ||
      t.regions().size() != 1)
    executable_damaged("{} needs a contiguous tensor of two unsigned ints", where);
}

}  // namespace

void check_executable_graph(const GraphState& g, std::size_t nodes) {
  const unsigned tiles = g.target.getNumTiles();
  check_variables(g);
  check_vertices(g);
  for (std::size_t i = 0; i < g.remote_buffers.size(); ++i) {
    const auto& rb = g.remote_buffers[i];
    std::uint64_t bytes = 0;
    if (rb.elements == 0 || rb.repeats == 0 ||
        __builtin_mul_overflow(std::uint64_t{rb.elements}, std::uint64_t{rb.repeats}, &bytes) ||
        __builtin_mul_overflow(bytes, std::uint64_t{rb.type.tesseraSize()}, &bytes))
      executable_damaged("remote buffer {} '{}' has {} rows of {} elements", i, rb.handle,
                         rb.repeats, rb.elements);
  }
  if (g.remote_index.size() != g.remote_buffers.size())
    executable_damaged("two remote buffers have one handle");
  for (std::size_t i = 0; i < g.streams.size(); ++i) {
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(std::uint64_t{g.streams[i].numElements()},
                               std::uint64_t{g.streams[i].elementType().tesseraSize()}, &bytes))
      executable_damaged("stream {} '{}' has {} elements", i, g.streams[i].handle(),
                         g.streams[i].numElements());
  }
  if (g.stream_index.size() != g.streams.size()) executable_damaged("two streams have one handle");
  for (const auto& [key, h] : g.host_handles) {
    const bool read = key.ends_with("\x01read");
    if (!h.tensor.valid() || h.write == read)
      executable_damaged("host handle '{}' is not a {} handle of a tensor",
                         read ? key.substr(0, key.size() - 5) : key, read ? "read" : "write");
    check_tensor(g, h.tensor, fmt::format("host handle '{}'", key), true);
  }
  // The Engine keeps compute and exchange cycles per tile for every compute set and program
  // step, and a copy of each replicated vertex per replica.
  std::uint64_t replicated = 0;
  for (const auto& v : g.vertices) replicated += v.replicated;
  const double per_tile =
      2.0 * sizeof(std::uint64_t) * tiles * (double(g.compute_sets.size()) + double(nodes) + 1.0);
  const double replicas = double(replicated) * g.replication_factor * 256.0;
  const double need = per_tile + replicas;
  tessera::check_host_memory(need >= 1.8e19 ? ~std::uint64_t{0} : std::uint64_t(need),
                             "the executable's per-tile statistics and replicated vertices");
}

void check_executable_node(const GraphState& g, const program::Node& n, std::size_t id,
                           std::size_t functions) {
  using program::NodeKind;
  const std::string where = fmt::format("program node {}", id);
  for (const Tensor* t : {&n.a, &n.b, &n.stamp_start, &n.offset}) check_tensor(g, *t, where, true);
  const std::size_t children = n.children.size();
  auto need_children = [&](std::size_t count) {
    if (children != count)
      executable_damaged("{} has {} child programs; its kind has {}", where, children, count);
  };
  switch (n.kind) {
    case NodeKind::sequence:
      break;
    case NodeKind::execute:
      if (n.compute_set >= g.compute_sets.size())
        executable_damaged("{} executes compute set {} of {}", where, n.compute_set,
                           g.compute_sets.size());
      break;
    case NodeKind::repeat:
    case NodeKind::block:
      need_children(1);
      break;
    case NodeKind::repeat_while:
    case NodeKind::if_else:
      need_children(2);
      check_scalar(n.a, where + "'s predicate");
      break;
    case NodeKind::switch_case: {
      check_scalar(n.a, where + "'s control");
      std::set<std::int32_t> values;
      for (const auto& c : n.cases)
        if (!values.insert(c.first).second)
          executable_damaged("{} has case {} twice", where, c.first);
      break;
    }
    case NodeKind::copy:
      check_same(n.a, n.b, where + " (a Copy)");
      break;
    case NodeKind::stream_to_tensor:
    case NodeKind::tensor_to_stream: {
      const bool to_device = n.kind == NodeKind::stream_to_tensor;
      const Tensor& t = to_device ? n.b : n.a;
      if (n.stream.handle().empty() || n.stream.isHostToDevice() != to_device || !t.valid() ||
          t.elementType() != n.stream.elementType() || t.numElements() != n.stream.numElements())
        executable_damaged(
            "{} copies {} stream '{}' with a tensor of another type, size or "
            "direction",
            where, to_device ? "from" : "to", n.stream.handle());
      break;
    }
    case NodeKind::remote_to_tensor:
    case NodeKind::tensor_to_remote: {
      const Tensor& t = n.kind == NodeKind::remote_to_tensor ? n.b : n.a;
      if (n.remote.handle().empty())
        executable_damaged("{} copies a remote buffer but names none", where);
      const std::size_t rows = n.offset.valid() ? n.offset.numElements() : 1;
      std::uint64_t elements = 0;
      if (n.offset.valid() &&
          (rows == 0 || (n.offset.elementType() != UNSIGNED_INT && n.offset.elementType() != INT)))
        executable_damaged("{}'s row offsets are not ints", where);
      if (!t.valid() || t.elementType() != n.remote.elementType() ||
          __builtin_mul_overflow(std::uint64_t{rows}, std::uint64_t{n.remote.numElements()},
                                 &elements) ||
          t.numElements() != elements)
        executable_damaged(
            "{} copies {} row(s) of remote buffer '{}' with a tensor of another "
            "type or size",
            where, rows, n.remote.handle());
      break;
    }
    case NodeKind::print:
    case NodeKind::assume_equal:
      if (!n.a.valid()) executable_damaged("{} names no tensor", where);
      break;
    case NodeKind::call:
      if (n.function >= functions)
        executable_damaged("{} calls function {} of {}", where, n.function, functions);
      break;
    case NodeKind::cycle_stamp:
      check_stamp(n.a, where);
      if (n.stamp_base_node != 0) check_stamp(n.stamp_start, where + "'s start");
      break;
    case NodeKind::cross_replica: {
      using Kind = program::CrossReplicaOp::Kind;
      const auto& x = n.cross;
      if (!n.a.valid() || !n.b.valid() || n.a.elementType() != n.b.elementType() ||
          n.a.numElements() == 0)
        executable_damaged("{} combines no data or two types", where);
      const unsigned replicas = g.replication_factor;
      std::uint64_t want = n.a.numElements();
      if (x.kind == Kind::copy) {
        std::set<unsigned> to;
        for (auto [from, dst] : x.replica_map)
          if (from >= replicas || dst >= replicas || !to.insert(dst).second)
            executable_damaged("{} copies replica {} to replica {} of {}", where, from, dst,
                               replicas);
      } else {
        const auto size = comm_groups(replicas, x.group_type, x.group_size).front().size();
        if (x.kind == Kind::reduce_scatter) want = (want + size - 1) / size;
        if (x.kind == Kind::all_gather) want *= size;
      }
      if (n.b.numElements() != want)
        executable_damaged("{} writes {} elements where its collective makes {}", where,
                           n.b.numElements(), want);
      break;
    }
    case NodeKind::write_undef:
    case NodeKind::sync:
      break;
  }
}

}  // namespace poplar::detail
