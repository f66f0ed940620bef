// The Engine: compiles a graph for its tiles (storage, tile memory per spec 001 §7.2.2/§7.2.3,
// vertex state, exchange plans) and runs control programs as BSP supersteps on Tessera's engine
// (spec 001 §2.2.2, §7.1.1): exchange, compute over the tile's worker contexts, sync.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <regex>
#include <set>
#include <tuple>

#include <poplar/Engine.hpp>
#include <poplar/TileConstants.hpp>
#include <poplar/VectorLayout.hpp>

#include "builtin_vertices.h"
#include "codelets.h"
#include "engine_state.h"
#include "pva_report.h"
#include "tessera/core/limits.h"
#include "tessera/core/log.h"
#include "tessera/profile/profile.h"
#include "tessera/sim/cost_model.h"
#include "tessera/sim/scheduler.h"

namespace poplar {

using detail::Chunk;
using detail::EngineState;
namespace abi = tessera::ipu::abi;
namespace sim = tessera::sim;

namespace {

bool option_true(const OptionFlags& o, const char* key) {
  if (!o.contains(key)) return false;
  const auto& v = o.at(key);
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  throw invalid_option(fmt::format("option '{}' is '{}'; use \"true\" or \"false\"", key, v));
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return b == 0 ? 0 : (a + b - 1) / b;
}

// Poplar's logging variables map onto Tessera's when Tessera's own are not set (spec 001 §9.1).
void honour_poplar_logging() {
  static const bool done = [] {
    const char* level = std::getenv("POPLAR_LOG_LEVEL");
    const char* dest = std::getenv("POPLAR_LOG_DEST");
    bool changed = false;
    if (level && !std::getenv("TESSERA_LOG_LEVEL")) {
      setenv("TESSERA_LOG_LEVEL", level, 0);
      changed = true;
    }
    if (dest && !std::getenv("TESSERA_LOG_DEST")) {
      setenv("TESSERA_LOG_DEST", dest, 0);
      changed = true;
    }
    if (changed) tessera::configure_logging_from_env();
    return true;
  }();
  (void)done;
}

// Splits a tensor's runs at tile-mapping boundaries: the chunks of `t` in row-major order.
std::vector<Chunk> chunks_of(const detail::GraphState& g, const Tensor& t) {
  if (t.numElements() * t.elementSize() >= (std::uint64_t{1} << 32))
    throw graph_memory_allocation_error(
        "exchange", fmt::format("a tensor of {} B is moved or read as one; the IPU's tensors are "
                                "under 4 GiB; split it into slices",
                                t.numElements() * t.elementSize()));
  std::vector<Chunk> out;
  std::uint64_t pos = 0;
  for (const auto& r : t.regions()) {
    const auto& m = g.var(r.var).mapping;
    for (std::uint64_t b = r.begin; b < r.end;) {
      auto it = m.upper_bound(b);
      TESSERA_CHECK(it != m.begin(), "unmapped bytes of variable {}", r.var);
      --it;
      std::uint64_t e = std::min(r.end, it->second.first);
      out.push_back({r.var, b, pos + (b - r.begin), e - b, it->second.second});
      b = e;
    }
    pos += r.end - r.begin;
  }
  return out;
}

// Pairs two chunk lists over the same byte stream, cutting at both sides' boundaries.
void pair_chunks(const std::vector<Chunk>& a, const std::vector<Chunk>& b, std::vector<Chunk>& oa,
                 std::vector<Chunk>& ob) {
  std::size_t i = 0, j = 0;
  std::uint64_t ia = 0, jb = 0;  // bytes consumed of a[i], b[j]
  while (i < a.size() && j < b.size()) {
    std::uint64_t n = std::min(a[i].bytes - ia, b[j].bytes - jb);
    oa.push_back({a[i].var, a[i].var_offset + ia, a[i].buf_offset + ia, n, a[i].tile});
    ob.push_back({b[j].var, b[j].var_offset + jb, b[j].buf_offset + jb, n, b[j].tile});
    ia += n;
    jb += n;
    if (ia == a[i].bytes) ++i, ia = 0;
    if (jb == b[j].bytes) ++j, jb = 0;
  }
}

}  // namespace

namespace detail {
namespace {

class Compiler {
 public:
  Compiler(EngineState& e) : e_(e), g_(*e.graph), spec_(*e.target->spec) {}

  // Storage and compute sets; the memory layout follows once the programs' copies are compiled
  // (add_builtin_vertices), since their built-in vertices take tile memory too.
  void run() {
    check_mapping();
    allocate_storage();
    for (unsigned cs = 0; cs < g_.compute_sets.size(); ++cs) compile_compute_set(cs);
    place_exchange_buffers();
  }

  // The built-in copy vertices' code (once per type and tile) and state (a source pointer,
  // a destination pointer and a count per run), then the layout of every tile.
  void add_builtin_vertices_and_layout() {
    const std::uint64_t edge = param("ipu.vertex_state_edge_bytes");
    for (const auto& [node, copy] : e_.copies)
      for (const auto& [tile, type_runs] : copy.builtin) {
        builtin_types_[tile].insert(type_runs.first);
        state_bytes_[tile] += 3 * edge * type_runs.second;
      }
    layout_memory();
  }

  // Each tile's scratch holds its largest compute set's exchange buffers; every set's staged
  // fields point into it.
  void place_exchange_buffers() {
    for (const auto& [tile, bytes] : staging_) e_.scratch[tile].assign(bytes, std::byte{0});
    for (auto& cs : e_.compute_sets)
      for (auto& cv : cs->vertices)
        for (auto& sf : cv.staged) {
          sf.data = e_.scratch[cv.tile].data() + sf.offset;
          sf.span->data = sf.data;
        }
  }

 private:
  void check_mapping() {
    for (std::uint32_t id = 0; id < g_.variables.size(); ++id) {
      const auto& v = g_.variables[id];
      if (v.logical) continue;  // stored as its replicas' variables
      std::uint64_t expect = 0;
      for (const auto& [b, run] : v.mapping) {
        if (b != expect) break;
        expect = run.first;
      }
      if (expect < v.bytes) {
        std::size_t es = std::max(1u, v.type.tesseraSize());
        throw invalid_tile_mapping(fmt::format(
            "tensor '{}' (shape {{{}}}, {}): element {} has no tile mapping at Engine creation; "
            "call Graph::setTileMapping for all {} elements",
            v.name, fmt::join(v.shape, ","), v.type.toString(), expect / es, v.bytes / es));
      }
    }
  }

  void allocate_storage() {
    e_.data.resize(g_.variables.size());
    if (e_.debug_undefined) e_.written.resize(g_.variables.size());
    for (std::size_t i = 0; i < g_.variables.size(); ++i) {
      const auto& v = g_.variables[i];
      if (v.logical) continue;  // never stored: its replicas' variables are
      if (!v.initial.empty())
        e_.data[i] = v.initial;
      else
        e_.data[i].assign(v.bytes, std::byte{0});
      if (e_.debug_undefined) {
        std::size_t n = v.bytes / std::max(1u, v.type.tesseraSize());
        e_.written[i] = v.initial_set.empty() ? std::vector<std::uint8_t>(n, 0) : v.initial_set;
      }
    }
  }

  const std::string* field_name(const std::string& s) {
    e_.field_names.push_back(std::make_unique<std::string>(s));
    return e_.field_names.back().get();
  }

  // Points a span at a tensor's bytes: directly when they are one run on the vertex's tile,
  // else at a staging buffer the exchange fills (inputs) and drains (outputs).
  void bind(CompiledVertex& cv, CompiledComputeSet& cs, const Tensor& t, abi::FieldAccess access,
            abi::EdgeSpan& span, bool interleaved) {
    span.size = static_cast<std::uint32_t>(t.numElements());
    auto chunks = chunks_of(g_, t);
    if (interleaved)
      for (const auto& c : chunks) interleaved_.insert(c.var);
    if (chunks.size() == 1 && chunks[0].tile == cv.tile) {
      span.data = e_.data[chunks[0].var].data() + chunks[0].var_offset;
      return;
    }
    if (chunks.empty()) {
      span.data = nullptr;
      return;
    }
    StagedField sf;
    std::uint64_t bytes = (t.numElements() * t.elementSize() + 7) / 8 * 8;
    sf.offset = cs_staging_[cv.tile];
    sf.span = &span;
    cs_staging_[cv.tile] += bytes;
    sf.in = access == abi::FieldAccess::in || access == abi::FieldAccess::inout;
    sf.out = access == abi::FieldAccess::out || access == abi::FieldAccess::inout;
    for (const auto& c : chunks) {
      if (c.tile != cv.tile) {
        // Sent by the owner, received here (inputs); sent from here, received there (outputs).
        // An input the owner already sends to another tile of this compute set costs the owner
        // nothing more: a send carries no destination and any number of tiles may listen to
        // the sender's wires (Graphcore patent application US 2019/0121777, "Instruction set").
        std::uint64_t n = c.bytes * ((sf.in ? 1 : 0) + (sf.out ? 1 : 0));
        cs.exchange_per_tile[cv.tile] += n;
        bool multicast = sf.in && !sent_.insert({c.var, c.var_offset, c.bytes}).second;
        cs.exchange_per_tile[c.tile] += multicast ? n - c.bytes : n;
      }
    }
    chunks.shrink_to_fit();  // kept for the Engine's life
    sf.chunks = std::move(chunks);
    cv.staged.push_back(std::move(sf));
  }

  void compile_compute_set(unsigned id) {
    sent_.clear();
    cs_staging_.clear();
    auto cs = std::make_unique<CompiledComputeSet>();
    const auto& info = g_.compute_sets[id];
    cs->name = info.name;
    cs->compute_per_tile.assign(e_.tiles, 0);
    cs->exchange_per_tile.assign(e_.tiles, 0);
    cs->vertices.reserve(info.vertices.size());
    std::uint64_t edge_bytes = param("ipu.vertex_state_edge_bytes");
    for (unsigned vid : info.vertices) {
      // A vertex of a replicated graph runs once per replica, on that replica's tiles and
      // elements (spec 001 §2.5).
      bool replicated = g_.vertices[vid].replicated;
      unsigned reps = replicated ? g_.replication_factor : 1;
      for (unsigned rep = 0; rep < reps; ++rep) {
        const auto& v = replicated ? replica_vertex(g_.vertices[vid], rep) : g_.vertices[vid];
        const auto& type = g_.types[v.type];
        // A MultiVertex splits its work by numWorkers(), fixed when it was compiled: PopLibs'
        // codelets, compiled into Tessera, by CTXT_WORKERS. Run by more workers, the extra ones
        // would work past the fields' ends.
        if (type.desc.multi_vertex && !type.library && e_.target->workers != CTXT_WORKERS)
          throw invalid_machine_model(fmt::format(
              "vertex {} ({}) is a PopLibs MultiVertex, built for {} worker contexts; the target "
              "has {} (IPUModel::numWorkerContexts); use {} with PopLibs",
              vid, type.name, CTXT_WORKERS, e_.target->workers, CTXT_WORKERS));
        if (v.tile == ~0u)
          throw invalid_tile_mapping(fmt::format(
              "vertex {} ({}) in compute set '{}' has no tile; call Graph::setTileMapping(v, tile)",
              vid, type.name, info.name));
        CompiledVertex cv;
        cv.id = vid;
        cv.tile = v.tile;
        cv.type = &type;
        cv.object = arena_alloc(type.desc.size, type.desc.align);
        type.desc.construct(cv.object);
        std::uint64_t touched = 0, state = 0;
        for (std::size_t fi = 0; fi < type.fields.size(); ++fi) {
          const auto& fd = type.fields[fi];
          const auto& conn = v.fields[fi];
          auto* base = static_cast<std::byte*>(cv.object) + fd.offset;
          if (!conn.connected) {
            throw graph_connection_error(fmt::format(
                "vertex {} ({}) on tile {} in compute set '{}': field '{}' is not {}; every field "
                "of a vertex must be {} before the Engine is created",
                vid, type.name, v.tile, info.name, fd.name,
                fd.kind == abi::FieldKind::state || fd.kind == abi::FieldKind::state_vector
                    ? "set"
                    : "connected",
                fd.kind == abi::FieldKind::state || fd.kind == abi::FieldKind::state_vector
                    ? "given a value with Graph::setInitialValue"
                    : "connected with Graph::connect"));
          }
          const std::string* fname = field_name(fd.name);
          switch (fd.kind) {
            case abi::FieldKind::state:
              std::memcpy(base, conn.state.data(), std::min(conn.state.size(), fd.host_bytes));
              state += fd.host_bytes;
              break;
            case abi::FieldKind::state_vector: {
              auto& span = *reinterpret_cast<abi::EdgeSpan*>(base);
              cv.buffers.push_back(conn.state);
              span.data = cv.buffers.back().data();
              span.size = static_cast<std::uint32_t>(conn.state_count);
              span.vertex = vid;
              span.field = fname->c_str();
              state += edge_bytes * 2 + conn.state.size();
              touched += conn.state.size();
              break;
            }
            case abi::FieldKind::edge:
            case abi::FieldKind::edge_vector: {
              auto& span = *reinterpret_cast<abi::EdgeSpan*>(base);
              span.vertex = vid;
              span.field = fname->c_str();
              const Tensor& t = conn.tensors.at(0);
              check_layout(vid, type, fd, t.numElements());
              bind(cv, *cs, t, fd.access, span, fd.interleaved);
              cv.field_tensors.emplace_back(static_cast<unsigned>(fi), &t);
              state += edge_bytes * (fd.has_size && fd.kind == abi::FieldKind::edge_vector ? 2 : 1);
              touched += t.numElements() * t.elementSize();
              break;
            }
            case abi::FieldKind::edge_2d:
            case abi::FieldKind::edge_scalars: {
              auto& span = *reinterpret_cast<abi::EdgeSpan*>(base);
              cv.span_arrays.emplace_back(conn.tensors.size());
              auto& rows = cv.span_arrays.back();
              for (std::size_t r = 0; r < conn.tensors.size(); ++r) {
                rows[r].vertex = vid;
                rows[r].field = fname->c_str();
                bind(cv, *cs, conn.tensors[r], fd.access, rows[r], fd.interleaved);
                cv.field_tensors.emplace_back(static_cast<unsigned>(fi), &conn.tensors[r]);
                touched += conn.tensors[r].numElements() * conn.tensors[r].elementSize();
              }
              span.data = rows.data();
              span.size = static_cast<std::uint32_t>(rows.size());
              span.vertex = vid;
              span.field = fname->c_str();
              state += edge_bytes * 2 + edge_bytes * rows.size();
              break;
            }
          }
        }
        check_constraints(vid, type, v);
        cv.cycles = estimate(vid, v, type, touched);
        state_bytes_[cv.tile] += state;
        tile_types_[cv.tile].insert(v.type);
        cs->vertices.push_back(std::move(cv));
      }
    }
    check_single_writer(*cs);
    schedule_workers(*cs);
    // Exchange buffers live only through their superstep: a tile needs its largest set's.
    for (const auto& [tile, bytes] : cs_staging_) staging_[tile] = std::max(staging_[tile], bytes);
    e_.compute_sets.push_back(std::move(cs));
  }

  const VertexInstance& replica_vertex(const VertexInstance& v, unsigned rep) {
    VertexInstance c = v;
    if (c.tile != ~0u) c.tile += rep * g_.replica_tiles;
    for (auto& f : c.fields)
      for (auto& t : f.tensors)
        if (t.valid()) t = g_.replica_view(t, rep);
    e_.replica_vertices.push_back(std::move(c));
    return e_.replica_vertices.back();
  }

  void check_layout(unsigned vid, const VertexType& type, const abi::FieldDesc& fd, std::size_t n) {
    if (fd.kind == abi::FieldKind::edge_vector &&
        fd.layout == static_cast<unsigned>(VectorLayout::SHORT_SPAN)) {
      std::uint64_t limit = param("ipu.short_span_max_elements");
      if (n > limit)
        throw graph_connection_error(fmt::format(
            "vertex {} ({}) field '{}' is a SHORT_SPAN vector of at most {} elements (spec 001 "
            "§4.1.2) but is connected to {}; use SPAN or split the vertex",
            vid, type.name, fd.name, limit, n));
    }
  }

  // poplar::constraint (spec 001 §3.2.2): two fields in different memory elements or regions.
  void check_constraints(unsigned vid, const VertexType& type, const VertexInstance& v) {
    static const std::regex re(R"((elem|region)\(\*(\w+)\)\s*!=\s*(elem|region)\(\*(\w+)\))");
    for (const auto& c : type.constraints) {
      std::smatch m;
      if (!std::regex_search(c, m, re) || m[1] != m[3])
        throw memory_elem_constraints_error(fmt::format(
            "vertex type {}: constraint \"{}\" is not of the form elem(*a)!=elem(*b) or "
            "region(*a)!=region(*b)",
            type.name, c));
      int a = type.field_index(m[2].str()), b = type.field_index(m[4].str());
      if (a < 0 || b < 0)
        throw memory_elem_constraints_error(
            fmt::format("vertex type {}: constraint \"{}\" names a field the vertex does not have",
                        type.name, c));
      for (const auto& ta : v.fields[a].tensors)
        for (const auto& tb : v.fields[b].tensors)
          if (ta.valid() && tb.valid() && ta.intersectsWith(tb))
            throw memory_elem_constraints_error(fmt::format(
                "vertex {} ({}) on tile {}: constraint \"{}\" cannot be met: fields '{}' and '{}' "
                "are connected to the same elements of tensor '{}', which cannot lie in two "
                "memory {}s; connect different tensors or remove the constraint",
                vid, type.name, v.tile, c, m[2].str(), m[4].str(), g_.var(ta.regions()[0].var).name,
                m[1].str() == "elem" ? "element" : "region"));
      for (int f : {a, b})
        for (const auto& t : v.fields[f].tensors)
          for (const auto& r : t.regions()) {
            if (m[1] == "elem")
              elem_aligned_.insert(r.var);
            else if (f == b)
              region1_.insert(r.var);
          }
    }
  }

  std::uint64_t estimate(unsigned vid, const VertexInstance& v, const VertexType& type,
                         std::uint64_t touched) {
    if (v.estimate) return v.estimate->cycles;
    auto est = g_.estimators.find(type.name);
    if (est != g_.estimators.end())
      return est->second(VertexIntrospector(&g_, vid), g_.target).cycles;
    // No estimator: the bytes the fields touch at the preset's per-worker rate.
    std::uint64_t overhead = param("ipu.vertex_overhead_cycles");
    std::uint64_t bpc = param("ipu.vertex_bytes_per_cycle");
    // A MultiVertex's workers share the work; a supervisor issues every cycle, so its estimate
    // at one worker's rate is already tile cycles.
    std::uint64_t share = type.desc.multi_vertex ? e_.target->workers : 1;
    return overhead + ceil_div(touched, bpc * share);
  }

  // Two vertices of one compute set must not write the same element (spec 001 §3.3.1).
  void check_single_writer(const CompiledComputeSet& cs) {
    struct W {
      std::uint32_t var;
      std::uint64_t b, e;
      unsigned vertex;
      const char* field;
    };
    std::vector<W> writes;
    for (const auto& cv : cs.vertices)
      for (const auto& [fi, t] : cv.field_tensors) {
        const auto& fd = cv.type->fields[fi];
        if (fd.access != abi::FieldAccess::out && fd.access != abi::FieldAccess::inout) continue;
        for (const auto& r : t->regions())
          writes.push_back({r.var, r.begin, r.end, cv.id, fd.name});
      }
    std::sort(writes.begin(), writes.end(),
              [](const W& a, const W& b) { return std::tie(a.var, a.b) < std::tie(b.var, b.b); });
    for (std::size_t i = 1; i < writes.size(); ++i) {
      const W& p = writes[i - 1];
      const W& q = writes[i];
      if (p.var == q.var && q.b < p.e && p.vertex != q.vertex) {
        const auto& var = g_.var(q.var);
        std::size_t es = std::max(1u, var.type.tesseraSize());
        throw graph_connection_error(fmt::format(
            "compute set '{}': vertices {} ({}, field '{}') and {} ({}, field '{}') both write "
            "element {} of tensor '{}'; a compute set's vertices must write disjoint elements, "
            "so split the writes or put the vertices in separate compute sets",
            cs.name, p.vertex, g_.types[g_.vertices[p.vertex].type].name, p.field, q.vertex,
            g_.types[g_.vertices[q.vertex].type].name, q.field, q.b / es, var.name));
      }
    }
  }

  // Vertices to worker contexts (spec 001 §7.1.1): a Vertex takes the least-loaded worker; a
  // MultiVertex runs on every worker. A worker issues every `workers`-th cycle, so the tile's
  // compute is workers x the busiest worker's cycles. A SupervisorVertex holds every slot while
  // it runs, so its estimate is tile cycles: a 1/workers share of it on each slot.
  void schedule_workers(CompiledComputeSet& cs) {
    unsigned workers = e_.target->workers;
    std::map<unsigned, std::vector<std::size_t>> by_tile;
    for (std::size_t i = 0; i < cs.vertices.size(); ++i) by_tile[cs.vertices[i].tile].push_back(i);
    double busy = 0, capacity = 0;
    for (auto& [tile, list] : by_tile) {
      std::vector<std::uint64_t> load(workers, 0);
      for (std::size_t i : list) {
        const auto& cv = cs.vertices[i];
        if (cv.type->desc.multi_vertex || cv.type->desc.supervisor) {
          std::uint64_t start = *std::max_element(load.begin(), load.end());
          std::uint64_t slot = cv.type->desc.supervisor ? ceil_div(cv.cycles, workers) : cv.cycles;
          std::fill(load.begin(), load.end(), start + slot);
        } else {
          *std::min_element(load.begin(), load.end()) += cv.cycles;
        }
        cs.cycles_by_type[cv.type->name] += cv.cycles * (cv.type->desc.multi_vertex ? workers : 1);
        cs.instances_by_type[cv.type->name] += 1;
      }
      std::uint64_t peak = *std::max_element(load.begin(), load.end());
      cs.compute_per_tile[tile] = peak * workers;
      busy += std::accumulate(load.begin(), load.end(), 0.0);
      capacity += double(peak) * workers;
      cs.tiles.push_back(tile);
      cs.by_tile.push_back(list);
    }
    cs.thread_balance = capacity > 0 ? busy / capacity : 1.0;
  }

  // Tile memory (spec 001 §7.2.2/§7.2.3): code and vertex state in region 0 (instructions are
  // fetched only from there), data first-fit over both regions, interleaved data in region 1.
  void layout_memory() {
    const auto& tile_spec = spec_.memory("tile");
    std::uint64_t r0 = param("ipu.region0_bytes"), r1 = param("ipu.region1_bytes");
    std::uint64_t capacity = e_.target->bytes_per_tile;
    if (r0 + r1 != capacity) {
      // A model with a changed memoryBytesPerTile keeps region 0 and gives region 1 the rest.
      r1 = capacity > r0 ? capacity - r0 : 0;
      r0 = std::min(r0, capacity);
    }
    std::uint64_t base = static_cast<std::uint64_t>(tile_spec.base_address.value);
    std::uint64_t code = param("ipu.vertex_code_bytes");
    std::uint64_t stack = param("ipu.worker_stack_bytes") * e_.target->workers;
    std::uint64_t e0 = param("ipu.region0_element_bytes"), e1 = param("ipu.region1_element_bytes");
    bool allow_oom = option_true(e_.options, "debug.allowOutOfMemory");
    // Per tile: the variable blocks it holds.
    std::map<unsigned, std::vector<std::pair<std::uint32_t, std::uint64_t>>> blocks;
    for (std::uint32_t id = 0; id < g_.variables.size(); ++id) {
      if (g_.variables[id].logical) continue;
      std::map<unsigned, std::uint64_t> per_tile;
      for (const auto& [b, run] : g_.variables[id].mapping) per_tile[run.second] += run.first - b;
      for (const auto& [tile, bytes] : per_tile) blocks[tile].emplace_back(id, bytes);
    }
    std::set<unsigned> tiles;
    for (const auto& [t, _] : blocks) tiles.insert(t);
    for (const auto& [t, _] : state_bytes_) tiles.insert(t);
    for (unsigned tile : tiles) {
      TileMemory tm;
      auto& cat = tm.by_category;
      for (const auto& [var, bytes] : blocks[tile])
        cat[g_.var(var).constant ? "Constants" : "Variables"] += (bytes + 7) / 8 * 8;
      if (tile_types_.count(tile) || builtin_types_.count(tile)) {
        cat["Vertex Code"] = code * (tile_types_[tile].size() + builtin_types_[tile].size());
        cat["Vertex Instances"] = (state_bytes_[tile] + 7) / 8 * 8;
        cat["Stack"] = stack;
      }
      if (staging_[tile]) cat["Internal Exchange Message Buffers"] = (staging_[tile] + 7) / 8 * 8;
      for (const auto& [_, b] : cat) tm.total += b;
      if (tm.total > capacity) {
        std::vector<std::string> parts;
        for (const auto& [k, b] : cat)
          parts.push_back(fmt::format("{} {}", k, sim::format_bytes(b)));
        std::string largest;
        std::uint64_t lb = 0;
        for (const auto& [var, bytes] : blocks[tile])
          if (bytes > lb) lb = bytes, largest = g_.var(var).name;
        std::string msg = fmt::format(
            "tile {} needs {} of {}: {}; the largest tensor here is '{}' ({}); map fewer "
            "elements to this tile or spread the tensors over more tiles",
            tile, sim::format_bytes(tm.total), sim::format_bytes(capacity), fmt::join(parts, ", "),
            largest, sim::format_bytes(lb));
        if (!allow_oom) throw graph_memory_allocation_error(fmt::format("tile {}", tile), msg);
        e_.out_of_memory.push_back(msg);
        tm.highest = tm.total;
        tm.region0 = std::min(tm.total, r0);
        tm.region1 = tm.total - tm.region0;
        e_.memory[tile] = std::move(tm);
        continue;
      }
      // Place the blocks; every address is checked against the tile's sim::Memory.
      sim::Memory mem(tile_spec, fmt::format("tile {}", tile));
      sim::FirstFitAllocator reg0(fmt::format("tile {}", tile), "region 0", base, r0, 8);
      sim::FirstFitAllocator reg1(fmt::format("tile {}", tile), "region 1", base + r0, r1, 8);
      auto place = [&](std::uint64_t bytes, int region, std::uint64_t align,
                       const std::string& what) {
        if (bytes == 0) return;
        std::uint64_t a = 0;
        bool ok = false;
        for (int r : {0, 1}) {
          if (region >= 0 && r != region) continue;
          auto& alloc = r == 0 ? reg0 : reg1;
          std::uint64_t al = align ? align : 8;
          if (alloc.largest_free_block() >= bytes + al) {
            a = alloc.allocate(bytes, al);
            ok = true;
            (r == 0 ? tm.region0 : tm.region1) += bytes;
            break;
          }
        }
        if (!ok)
          throw graph_memory_allocation_error(
              fmt::format("tile {}", tile),
              fmt::format(
                  "{} ({}) does not fit in {} of the tile's memory ({} region 0, {} "
                  "region 1 free); map fewer elements to this tile",
                  what, sim::format_bytes(bytes), region == 1 ? "region 1" : "either region",
                  sim::format_bytes(reg0.free_bytes()), sim::format_bytes(reg1.free_bytes())));
        mem.check_access(a, bytes, what, sim::AccessKind::write, 8);
        tm.highest = std::max(tm.highest, a + bytes - base);
      };
      place(cat.count("Vertex Code") ? cat["Vertex Code"] : 0, 0, 0, "vertex code");
      place(cat.count("Vertex Instances") ? cat["Vertex Instances"] : 0, 0, 0, "vertex state");
      place(cat.count("Stack") ? cat["Stack"] : 0, 0, 0, "worker stacks");
      for (const auto& [var, bytes] : blocks[tile]) {
        bool interleaved = region1_.count(var) != 0 || interleaved_.count(var) != 0;
        std::uint64_t align = elem_aligned_.count(var) ? (interleaved ? e1 : e0) : 0;
        place((bytes + 7) / 8 * 8, interleaved ? 1 : -1, align,
              fmt::format("tensor '{}'", g_.var(var).name));
      }
      if (staging_[tile])
        place(cat["Internal Exchange Message Buffers"], -1, 0, "exchange buffers");
      e_.memory[tile] = std::move(tm);
    }
    for (const auto& [tile, tm] : e_.memory)
      for (const auto& [k, b] : tm.by_category)
        e_.device->note_memory_high_water(fmt::format("tile {}", tile), k, b);
  }

  // Vertex objects live in the Engine's arenas (one allocation per MiB, not per vertex).
  void* arena_alloc(std::size_t size, std::size_t align) {
    align = std::max<std::size_t>(align, alignof(std::max_align_t));
    if (arena_ == nullptr || arena_used_ + size + align > arena_size_) {
      arena_size_ = std::max<std::size_t>(1 << 20, size + align);
      e_.arenas.push_back(std::make_unique<std::byte[]>(arena_size_));
      arena_ = e_.arenas.back().get();
      arena_used_ = 0;
    }
    auto p = reinterpret_cast<std::uintptr_t>(arena_ + arena_used_);
    p = (p + align - 1) / align * align;
    arena_used_ = p + size - reinterpret_cast<std::uintptr_t>(arena_);
    return reinterpret_cast<void*>(p);
  }

  std::uint64_t param(const char* key) { return param_u64(spec_, key); }

  EngineState& e_;
  GraphState& g_;
  const tessera::arch::MachineSpec& spec_;
  std::map<unsigned, std::uint64_t> staging_, state_bytes_;
  std::map<unsigned, std::uint64_t> cs_staging_;  // exchange buffers of the compute set compiled now
  std::set<std::tuple<std::uint32_t, std::uint64_t, std::uint64_t>> sent_;  // this compute set
  std::map<unsigned, std::set<unsigned>> tile_types_;
  std::map<unsigned, std::set<std::string>> builtin_types_;
  std::set<std::uint32_t> elem_aligned_, region1_, interleaved_;
  std::byte* arena_ = nullptr;
  std::size_t arena_size_ = 0, arena_used_ = 0;
};

}  // namespace
}  // namespace detail
}  // namespace poplar

namespace poplar {
namespace detail {
namespace {

std::string tensor_name(const GraphState& g, const Tensor& t) {
  return t.regions().empty() ? std::string("<empty>") : g.var(t.regions()[0].var).name;
}

class Runner {
 public:
  explicit Runner(EngineState& e) : e_(e), g_(*e.graph) {}

  void run(const program::Program& p) { exec(*p.tesseraNode()); }

  // Compiles copies and registers program steps, checking what can be checked before running.
  // Each node once: a node shared by many parents (or reached through many calls) would
  // otherwise be walked once per path, exponentially many for nested sharing.
  void prepare(const program::Node& n) {
    using program::NodeKind;
    if (prepared_.count(&n)) return;
    if (!on_path_.insert(&n).second)
      throw control_program_error(fmt::format(
          "program '{}' contains itself (a Sequence added to its own body, or a function that "
          "calls itself); build a loop with Repeat or RepeatWhileTrue instead",
          n.name));
    switch (n.kind) {
      case NodeKind::execute:
        if (n.compute_set >= e_.compute_sets.size())
          throw control_program_error(fmt::format(
              "Execute of compute set {}, which is not in this Engine's graph", n.compute_set));
        step(&n, "OnTileExecute", e_.compute_sets[n.compute_set]->name);
        break;
      case NodeKind::copy:
        compile_copy(n);
        break;
      case NodeKind::stream_to_tensor:
      case NodeKind::tensor_to_stream: {
        std::uint64_t bytes = n.stream.numElements() * n.stream.elementType().tesseraSize();
        std::uint64_t limit = param_u64(*e_.target->spec, "ipu.max_stream_copy_bytes");
        if (bytes > limit)
          throw control_program_error(fmt::format(
              "stream '{}' copies {} at once; a stream copy moves at most {} (spec 001 §2.6.3); "
              "split it into several copies",
              n.stream.handle(), sim::format_bytes(bytes), sim::format_bytes(limit)));
        step(&n, "StreamCopy", n.stream.handle());
        break;
      }
      case NodeKind::remote_to_tensor:
      case NodeKind::tensor_to_remote: {
        const auto& rb = n.remote;
        if (rb.getId() >= g_.remote_buffers.size() ||
            g_.remote_buffers[rb.getId()].handle != rb.handle())
          throw control_program_error(fmt::format(
              "Copy with remote buffer '{}', which is not in this Engine's graph", rb.handle()));
        step(&n, "RemoteBufferCopy", rb.handle());
        break;
      }
      case NodeKind::cross_replica:
        prepare_cross_replica(n);
        break;
      case NodeKind::call:
        if (n.function >= g_.functions.size())
          throw control_program_error(
              fmt::format("Call of function {}, which is not in this "
                          "graph",
                          n.function));
        prepare(*g_.functions[n.function].tesseraNode());
        break;
      default:
        break;
    }
    for (const auto& c : n.children) prepare(*c.tesseraNode());
    for (const auto& c : n.cases) prepare(*c.second.tesseraNode());
    if (n.default_case) prepare(*n.default_case);
    on_path_.erase(&n);
    prepared_.insert(&n);
  }

 private:
  void step(const program::Node* n, const char* kind, const std::string& name) {
    if (e_.step_index.count(n)) return;
    e_.step_index[n] = e_.steps.size();
    StepStats s;
    s.kind = kind;
    s.name = n->name.empty() ? name : n->name;
    e_.steps.push_back(std::move(s));
  }

  void compile_copy(const program::Node& n) {
    CompiledCopy c;
    // On a replicated graph each replica copies its own elements, in the same superstep.
    auto srcs = g_.replica_views(n.a), dsts = g_.replica_views(n.b);
    if (srcs.size() > dsts.size())
      throw control_program_error(fmt::format(
          "Copy '{}' from a replicated tensor to a tensor of the parent graph: every replica "
          "would write the same elements; copy to a replicated tensor, or use "
          "Graph::getNonReplicatedTensor to name one replica's elements",
          n.name));
    std::uint64_t one = n.a.numElements() * n.a.elementSize();
    for (std::size_t r = 0; r < dsts.size(); ++r) {
      const Tensor& src_t = srcs[std::min(r, srcs.size() - 1)];
      std::size_t first = c.src.size();
      pair_chunks(chunks_of(g_, src_t), chunks_of(g_, dsts[r]), c.src, c.dst);
      for (std::size_t i = first; i < c.src.size(); ++i) {
        c.src[i].buf_offset += r * one;
        c.dst[i].buf_offset += r * one;
      }
      c.overlap = c.overlap || src_t.intersectsWith(dsts[r]);
    }
    c.bytes = one * dsts.size();
    c.compute_per_tile.assign(e_.tiles, 0);
    c.exchange_per_tile.assign(e_.tiles, 0);
    std::map<unsigned, OnTileCopy> on_tile;
    for (std::size_t i = 0; i < c.src.size(); ++i) {
      if (c.src[i].tile == c.dst[i].tile) {
        auto& shape = on_tile[c.src[i].tile];
        const std::uint64_t bytes = c.src[i].bytes;
        ++shape.runs;
        shape.bytes += bytes;
        for (std::uint64_t v : {bytes, c.src[i].var_offset, c.dst[i].var_offset}) {
          shape.aligned64 = shape.aligned64 && v % 8 == 0;
          shape.aligned32 = shape.aligned32 && v % 4 == 0;
        }
      } else {
        c.exchange_per_tile[c.src[i].tile] += c.src[i].bytes;
        c.exchange_per_tile[c.dst[i].tile] += c.src[i].bytes;
      }
    }
    const CopyCosts costs{param_u64(*e_.target->spec, "ipu.vertex_overhead_cycles"),
                          param_u64(*e_.target->spec, "ipu.copy_bytes_per_cycle"),
                          e_.target->workers};
    for (const auto& [tile, shape] : on_tile) {
      const BuiltinVertex& v = builtin_copy_vertex(shape);
      const std::uint64_t cycles = v.estimate(shape, costs);
      c.compute_per_tile[tile] += cycles;
      c.cycles_by_type[v.name] += cycles;
      c.instances_by_type[v.name] += 1;
      c.builtin[tile] = {v.name, shape.runs};
    }
    c.thread_balance = 0;  // reported for compute sets only
    bool exchange = std::any_of(c.exchange_per_tile.begin(), c.exchange_per_tile.end(),
                                [](auto b) { return b != 0; });
    step(&n, exchange ? "DoExchange" : "OnTileCopy", "Copy");
    e_.copies[&n] = std::move(c);
  }

  // One superstep on the BSP schedule, mirrored into the device's Profile.
  // Cross-replica programs add traffic between IPUs: `link_cycles` after the exchange, moving
  // `link_bytes` over all the IPU-Links.
  void superstep(const program::Node* n, std::span<const std::uint64_t> compute,
                 std::span<const std::uint64_t> exchange, const TypeStats* cs = nullptr,
                 std::uint64_t link_cycles = 0, std::uint64_t link_bytes = 0) {
    const auto& ss =
        e_.bsp->add(e_.steps[e_.step_index.at(n)].name, compute, exchange, link_cycles);
    account(n, ss.end() - ss.start, ss.start, compute, exchange, cs);
    e_.compute_cycles += ss.compute;
    e_.exchange_cycles += ss.exchange;
    e_.sync_cycles += ss.sync;
    tessera::profile::KernelRecord rec;
    rec.name = ss.name;
    rec.engine = "ipu";
    rec.cycles = ss.end() - ss.start;
    rec.metrics["compute_cycles"] = double(ss.compute);
    rec.metrics["exchange_cycles"] = double(ss.exchange);
    rec.metrics["sync_cycles"] = double(ss.sync);
    if (ss.link) {
      auto& step = e_.steps[e_.step_index.at(n)];
      step.link_cycles = ss.link;
      step.link_bytes = link_bytes;
      e_.link_cycles += ss.link;
      e_.link_bytes += step.link_bytes;
      rec.metrics["ipu_link_cycles"] = double(ss.link);
      rec.metrics["ipu_link_bytes"] = double(step.link_bytes);
      e_.device->add_bytes_moved("ipu-link", step.link_bytes);
    }
    e_.device->record_kernel(std::move(rec));
    // Per tile group busy time and, when tracing, one track per superstep phase.
    constexpr unsigned kGroup = 64;
    for (unsigned t0 = 0; t0 < compute.size(); t0 += kGroup) {
      std::uint64_t peak = 0;
      for (unsigned t = t0; t < std::min<std::size_t>(compute.size(), t0 + kGroup); ++t)
        peak = std::max(peak, compute[t]);
      if (peak)
        e_.device->add_pipe_busy(
            fmt::format("tiles {}-{}/compute", t0,
                        std::min<std::size_t>(compute.size(), t0 + kGroup) - 1),
            peak);
    }
    if (e_.device->trace_enabled()) {
      std::uint64_t s = ss.start;
      if (ss.compute) e_.device->record_interval({"bsp/compute", ss.name, s, s + ss.compute});
      s += ss.compute;
      if (ss.exchange) e_.device->record_interval({"bsp/exchange", ss.name, s, s + ss.exchange});
      s += ss.exchange;
      if (ss.link) e_.device->record_interval({"bsp/ipu-link", ss.name, s, s + ss.link});
      s += ss.link;
      if (ss.sync) e_.device->record_interval({"bsp/sync", ss.name, s, s + ss.sync});
    }
    e_.device->add_bytes_moved(
        "exchange", std::accumulate(exchange.begin(), exchange.end(), std::uint64_t{0}) / 2);
  }

  // `exchange` counts a byte that crosses tiles on both of them (both_ends) or, for host and
  // Streaming Memory copies, once on the tile that sends or receives it.
  void account(const program::Node* n, std::uint64_t cycles, std::uint64_t start,
               std::span<const std::uint64_t> compute, std::span<const std::uint64_t> exchange,
               const TypeStats* cs, bool both_ends = true) {
    mark_active(compute, exchange);
    auto& s = e_.steps[e_.step_index.at(n)];
    if (s.executions++ == 0) {
      s.first_start = start;
      unsigned active = 0;
      std::uint64_t peak = 0, sum = 0, dpeak = 0, dsum = 0;
      for (std::size_t t = 0; t < e_.tiles; ++t) {
        std::uint64_t c = t < compute.size() ? compute[t] : 0;
        std::uint64_t d = t < exchange.size() ? exchange[t] : 0;
        if (c || d) ++active;
        peak = std::max(peak, c);
        sum += c;
        dpeak = std::max(dpeak, d);
        dsum += d;
      }
      s.active_tiles = active;
      s.tile_balance = peak ? double(sum) / (double(peak) * e_.tiles) : 0;
      s.active_tile_balance = peak && active ? double(sum) / (double(peak) * active) : 0;
      s.data_bytes = both_ends ? dsum / 2 : dsum;
      s.data_balance = dpeak ? double(dsum) / (double(dpeak) * e_.tiles) : 0;
      s.thread_balance = cs ? cs->thread_balance : 0;
    }
    s.cycles = cycles;
    s.total_cycles += cycles;
    if (cs)
      for (const auto& [type, c] : cs->cycles_by_type) {
        auto& bt = s.by_type[type];
        bt.first = cs->instances_by_type.at(type);
        bt.second += c;
        auto& tt = e_.type_totals[type];
        tt.first = std::max(tt.first, bt.first);
        tt.second += c;
      }
  }

  // ---- debug: reads of elements never written (spec 001 §2.8: undefined) ----
  void check_defined(const Tensor& t, const std::string& where, const std::string& what) {
    if (!e_.debug_undefined) return;
    std::size_t es = t.elementSize(), pos = 0;
    for (const auto& r : t.regions()) {
      const auto& w = e_.written[r.var];
      const std::uint64_t ves = std::max(1u, g_.var(r.var).type.tesseraSize());
      for (std::uint64_t b = r.begin; b < r.end; b += es)
        if (!w[b / ves])
          throw runtime_error(
              where, fmt::format("{} reads element {} of tensor '{}' (element {} of the variable), "
                                 "which was never "
                                 "written; its value is undefined. Write it first "
                                 "(setInitialValue, writeTensor, a "
                                 "Copy or a vertex output)",
                                 what, pos + (b - r.begin) / es, g_.var(r.var).name, b / ves));
      pos += (r.end - r.begin) / es;
    }
  }
  void check_all(const Tensor& t, const std::string& where, const std::string& what) {
    if (!e_.debug_undefined) return;
    for (const auto& v : g_.replica_views(t)) check_defined(v, where, what);
  }
  void mark_all(const Tensor& t, std::uint8_t value) {
    if (!e_.debug_undefined) return;
    for (const auto& v : g_.replica_views(t)) mark(v, value);
  }
  void mark(const Tensor& t, std::uint8_t value) {
    if (!e_.debug_undefined) return;
    for (const auto& r : t.regions()) {
      const auto [first, last] = element_range(g_.var(r.var), r.begin, r.end);
      std::fill(e_.written[r.var].begin() + first, e_.written[r.var].begin() + last, value);
    }
  }

  void execute(const program::Node& n) {
    auto& cs = *e_.compute_sets[n.compute_set];
    if (e_.debug_undefined)
      for (const auto& cv : cs.vertices)
        for (const auto& [fi, t] : cv.field_tensors) {
          auto acc = cv.type->fields[fi].access;
          if (acc == abi::FieldAccess::in || acc == abi::FieldAccess::inout)
            check_defined(*t, fmt::format("tile {}", cv.tile),
                          fmt::format("vertex {} ({}) field '{}'", cv.id, cv.type->name,
                                      cv.type->fields[fi].name));
        }
    auto& sched = e_.device->scheduler();
    // Exchange in, compute, exchange out: three phases so every input is read before any
    // vertex of the compute set writes (BSP: exchange completes before compute starts).
    auto for_tiles = [&](auto&& fn) {
      sched.parallel_for(cs.tiles.size(), [&](std::size_t i) {
        for (std::size_t vi : cs.by_tile[i]) fn(cs.vertices[vi]);
      });
    };
    bool staged = std::any_of(cs.vertices.begin(), cs.vertices.end(),
                              [](const CompiledVertex& v) { return !v.staged.empty(); });
    if (staged)
      for_tiles([&](CompiledVertex& v) {
        for (const auto& sf : v.staged)
          if (sf.in)
            for (const auto& c : sf.chunks)
              std::memcpy(sf.data + c.buf_offset,
                          e_.data[c.var].data() + c.var_offset, c.bytes);
      });
    unsigned workers = e_.target->workers;
    for_tiles([&](CompiledVertex& v) {
      try {
        if (v.type->desc.multi_vertex) {
          for (unsigned w = 0; w < workers; ++w) v.type->desc.compute_worker(v.object, w);
        } else {
          v.type->desc.compute(v.object);
        }
      } catch (const runtime_error& f) {
        throw runtime_error(fmt::format("tile {} vertex {} ({}) in compute set '{}'", v.tile, v.id,
                                        v.type->name, cs.name),
                            f.detail());
      }
    });
    if (staged)
      for_tiles([&](CompiledVertex& v) {
        for (const auto& sf : v.staged)
          if (sf.out)
            for (const auto& c : sf.chunks)
              std::memcpy(e_.data[c.var].data() + c.var_offset,
                          sf.data + c.buf_offset, c.bytes);
      });
    if (e_.debug_undefined)
      for (const auto& cv : cs.vertices)
        for (const auto& [fi, t] : cv.field_tensors) {
          auto acc = cv.type->fields[fi].access;
          if (acc == abi::FieldAccess::out || acc == abi::FieldAccess::inout) mark(*t, 1);
        }
    superstep(&n, cs.compute_per_tile, cs.exchange_per_tile, &cs);
  }

  void copy(const program::Node& n) {
    const auto& c = e_.copies.at(&n);
    check_all(n.a, "Copy", fmt::format("Copy '{}'", n.name));
    std::vector<std::byte> tmp;
    if (c.overlap) {
      tmp.resize(c.bytes);
      for (const auto& s : c.src)
        std::memcpy(tmp.data() + s.buf_offset, e_.data[s.var].data() + s.var_offset, s.bytes);
      for (const auto& d : c.dst)
        std::memcpy(e_.data[d.var].data() + d.var_offset, tmp.data() + d.buf_offset, d.bytes);
    } else {
      for (std::size_t i = 0; i < c.src.size(); ++i)
        std::memcpy(e_.data[c.dst[i].var].data() + c.dst[i].var_offset,
                    e_.data[c.src[i].var].data() + c.src[i].var_offset, c.src[i].bytes);
    }
    mark_all(n.b, 1);
    superstep(&n, c.compute_per_tile, c.exchange_per_tile, &c);
  }

  StreamConnection* find_connection(const std::string& key) {
    auto it = e_.streams.find(key);
    if (it == e_.streams.end() || (it->second.begin == nullptr && !it->second.callback))
      return nullptr;
    return &it->second;
  }

  // Moves `n` bytes between the host side of a stream and `p` (callback or circular buffer).
  void transfer(StreamConnection& conn, std::byte* p, std::size_t n, bool to_device,
                const std::string& handle) {
    if (conn.callback) {
      if (to_device) {
        if (conn.callback->prefetch(p) != StreamCallback::Result::Success) conn.callback->fetch(p);
      } else {
        conn.callback->fetch(p);
      }
      conn.callback->complete();
      return;
    }
    if (n == 0) return;  // a stream of 0 elements moves nothing
    std::size_t size = static_cast<std::size_t>(conn.end - conn.begin);
    if (size < n || size % n != 0)
      throw stream_connection_error(fmt::format(
          "stream '{}' buffer is {} B; each transfer moves {} B, so the buffer must hold a "
          "whole number (at least one) of transfers",
          handle, size, n));
    std::byte* q = conn.begin + conn.position;
    if (to_device)
      std::memcpy(p, q, n);
    else
      std::memcpy(q, p, n);
    conn.position = (conn.position + n) % size;
  }

  // A stream copy (spec 001 §2.6.1). On a replicated graph each replica has its own stream:
  // connected per replica (Engine::connectStreamToCallback(handle, replica, f)) or once, with one
  // transfer's data for each replica back to back; a BROADCAST stream sends one transfer's
  // data to every replica.
  void stream_copy(const program::Node& n, bool to_device) {
    const std::string& handle = n.stream.handle();
    const Tensor& t = to_device ? n.b : n.a;
    auto [replicated_stream, mode] = g_.stream_replication.at(n.stream.getId());
    auto views = g_.replica_views(t);
    unsigned reps = replicated_stream ? g_.replication_factor : 1;
    if (views.size() != reps) {
      if (views.size() != 1)
        throw control_program_error(fmt::format(
            "stream '{}' of the parent graph copies a replicated tensor; add the stream to the "
            "replicated graph so that each replica has its own",
            handle));
      views.assign(reps, t);
    }
    bool broadcast = to_device && mode == ReplicatedStreamMode::BROADCAST;
    std::size_t bytes = t.numElements() * t.elementSize();
    std::vector<std::byte> buf(bytes * reps);
    if (!to_device)
      for (unsigned r = 0; r < reps; ++r) {
        check_defined(views[r], "StreamCopy", fmt::format("copy to stream '{}'", handle));
        std::size_t pos = r * bytes;
        for (const auto& reg : views[r].regions()) {
          std::memcpy(buf.data() + pos, e_.data[reg.var].data() + reg.begin, reg.end - reg.begin);
          pos += reg.end - reg.begin;
        }
      }
    std::vector<StreamConnection*> own(reps, nullptr);
    unsigned own_count = 0;
    if (reps > 1)
      for (unsigned r = 0; r < reps; ++r)
        if ((own[r] = find_connection(handle + '\x01' + std::to_string(r)))) ++own_count;
    if (own_count == reps) {
      for (unsigned r = 0; r < reps; ++r)
        transfer(*own[r], buf.data() + r * bytes, bytes, to_device, handle);
    } else {
      StreamConnection* conn = find_connection(handle);
      if (conn == nullptr || own_count != 0)
        throw stream_connection_error(fmt::format(
            "stream '{}' is used by the program but {}; call Engine::connectStream or "
            "connectStreamToCallback before run{}",
            handle,
            own_count ? fmt::format("only {} of its {} replicas are connected", own_count, reps)
                      : std::string("not connected"),
            reps > 1 ? " (once for all replicas, or once per replica)" : ""));
      if (broadcast || reps == 1 || !conn->callback) {
        std::size_t n_bytes = broadcast ? bytes : bytes * reps;
        transfer(*conn, buf.data(), n_bytes, to_device, handle);
        if (broadcast)
          for (unsigned r = 1; r < reps; ++r)
            std::memcpy(buf.data() + r * bytes, buf.data(), bytes);
      } else {
        for (unsigned r = 0; r < reps; ++r)
          transfer(*conn, buf.data() + r * bytes, bytes, to_device, handle);
      }
    }
    if (to_device)
      for (unsigned r = 0; r < reps; ++r) {
        std::size_t pos = r * bytes;
        for (const auto& reg : views[r].regions()) {
          std::memcpy(e_.data[reg.var].data() + reg.begin, buf.data() + pos, reg.end - reg.begin);
          pos += reg.end - reg.begin;
        }
        mark(views[r], 1);
      }
    // Host exchange: each replica's IPU has its own link to the host, so replicas transfer
    // at the same time; the copy takes one transfer's link time plus the sync with the host
    // (spec 001 §2.7.2).
    std::uint64_t cycles =
        e_.device->cost_model().host_link_cycles(bytes) + e_.target->host_sync_cycles;
    std::vector<std::uint64_t> per_tile(e_.tiles, 0);
    for (const auto& v : views)
      for (const auto& c : chunks_of(g_, v)) per_tile[c.tile] += c.bytes;
    e_.host_cycles += cycles;
    const auto& ss =
        e_.bsp->add(e_.steps[e_.step_index.at(&n)].name, std::vector<std::uint64_t>{cycles}, {});
    account(&n, ss.compute + ss.exchange + ss.sync, ss.start, {}, per_tile, nullptr, false);
    e_.sync_cycles += ss.sync;
    if (e_.block_options.enabled() && e_.block_options.external_exchange)
      record_stream_copy(e_.steps[e_.step_index.at(&n)].name, ss, e_.target->host_sync_cycles,
                         per_tile, BlockRecord::Kind::stream_copy);
    tessera::profile::KernelRecord rec;
    rec.name = "StreamCopy " + n.stream.handle();
    rec.engine = "ipu";
    rec.cycles = ss.compute + ss.sync;
    (to_device ? rec.bytes_read : rec.bytes_written) = bytes * reps;
    e_.device->record_kernel(std::move(rec));
    e_.device->add_bytes_moved("host-link", bytes * reps);
  }

  double element(const Tensor& t) {
    const auto& r = t.regions().at(0);
    return element_as_double(e_.data[r.var].data() + r.begin, t.elementType());
  }

  std::int64_t scalar(const Tensor& t, const char* what) {
    check_all(t, what, what);
    double v = element(g_.replica_view(t, 0));
    // Replicas run one control program in step, synchronising with each other: a predicate
    // that differs between replicas would leave them waiting at different syncs (a hang on
    // the hardware), so it is a fault here.
    auto views = g_.replica_views(t);
    for (unsigned r = 1; r < views.size(); ++r)
      if (double w = element(views[r]); w != v)
        throw runtime_error(
            fmt::format("replica {}", r),
            fmt::format("the {} (tensor '{}') is {} on replica 0 and {} on replica {}; replicas "
                        "must take the same control path. Make the value equal on every replica "
                        "(compute it from replicated inputs or reduce it across replicas)",
                        what, tensor_name(g_, t), v, w, r));
    // Reading the predicate costs a sync (the control program waits for it).
    e_.control_cycles += e_.target->sync_cycles;
    return static_cast<std::int64_t>(v);
  }

  void exec(const program::Node& n) {
    if (!e_.block_options.enabled()) return exec_program(n);
    const bool timed = is_timed(n);
    if (timed) frames_.push_back({now(), std::vector<bool>(e_.target->num_ipus, false)});
    exec_program(n);
    if (timed) {
      Frame f = std::move(frames_.back());
      frames_.pop_back();
      for (auto& outer : frames_)  // the outer blocks ran where this one did
        for (std::size_t i = 0; i < f.ipus.size(); ++i) outer.ipus[i] = outer.ipus[i] || f.ipus[i];
      record_block(n, f);
    }
  }

  void exec_program(const program::Node& n) {
    using program::NodeKind;
    switch (n.kind) {
      case NodeKind::sequence:
        for (const auto& c : n.children) exec(*c.tesseraNode());
        break;
      case NodeKind::execute:
        execute(n);
        break;
      case NodeKind::repeat: {
        const bool flush = flushes_after_each_iteration(n);
        for (unsigned i = 0; i < n.count; ++i) {
          exec(*n.children[0].tesseraNode());
          if (flush) flush_blocks();
        }
        flushing_loop_ -= flush;
        break;
      }
      case NodeKind::repeat_while: {
        const bool flush = flushes_after_each_iteration(n);
        for (;;) {
          exec(*n.children[0].tesseraNode());
          bool p = scalar(n.a, "RepeatWhile predicate") != 0;
          if (p != n.while_true) break;
          exec(*n.children[1].tesseraNode());
          if (flush) flush_blocks();
        }
        flushing_loop_ -= flush;
        break;
      }
      case NodeKind::block:
        exec(*n.children[0].tesseraNode());
        break;
      case NodeKind::if_else:
        exec(*n.children[scalar(n.a, "If predicate") != 0 ? 0 : 1].tesseraNode());
        break;
      case NodeKind::switch_case: {
        std::int64_t v = scalar(n.a, "Switch control");
        const program::Node* body = n.default_case.get();
        for (const auto& [value, p] : n.cases)
          if (value == v) body = p.tesseraNode().get();
        if (body) exec(*body);
        break;
      }
      case NodeKind::copy:
        copy(n);
        break;
      case NodeKind::stream_to_tensor:
        stream_copy(n, true);
        break;
      case NodeKind::tensor_to_stream:
        stream_copy(n, false);
        break;
      case NodeKind::write_undef:
        mark_all(n.a, 0);
        break;
      case NodeKind::sync:
        e_.sync_cycles += e_.target->sync_cycles;
        break;
      case NodeKind::print:
        print(n);
        break;
      case NodeKind::assume_equal:
        assume_equal(n);
        break;
      case NodeKind::remote_to_tensor:
        remote_copy(n, true);
        break;
      case NodeKind::tensor_to_remote:
        remote_copy(n, false);
        break;
      case NodeKind::call:
        exec(*g_.functions.at(n.function).tesseraNode());
        break;
      case NodeKind::cycle_stamp:
        stamp(n);
        break;
      case NodeKind::cross_replica:
        cross_replica(n);
        break;
    }
  }

  // The elements of t as text; `seven_decimals` prints floating ones as PrintTensor does.
  std::vector<std::string> values_of(const Tensor& t, bool seven_decimals = false) {
    std::vector<std::string> values;
    std::size_t es = t.elementSize();
    bool fixed = seven_decimals && t.elementType().isFloatingPoint();
    for (const auto& r : t.regions())
      for (std::uint64_t b = r.begin; b < r.end; b += es) {
        double v = element_as_double(e_.data[r.var].data() + b, t.elementType());
        values.push_back(fixed ? fmt::format("{:.7f}", v) : fmt::format("{}", v));
      }
    return values;
  }

  // Poplar's PrintTensor layout (Graphcore's tutorials show it): "name: [1.0000000 2.5000000]",
  // floating values with seven decimals, a rank-n tensor as n levels of brackets, the inner
  // ones on their own lines.
  void print(const program::Node& n) {
    auto views = g_.replica_views(n.a);
    for (unsigned r = 0; r < views.size(); ++r) {
      std::string text;
      std::size_t next = 0;
      print_level(views[r].shape(), 0, values_of(views[r], true), next, text);
      std::cout << (n.name.empty() ? tensor_name(g_, n.a) : n.name)
                << (views.size() > 1 ? fmt::format(" [replica {}]", r) : std::string()) << ": "
                << text << "\n";
    }
  }
  static void print_level(const std::vector<std::size_t>& shape, std::size_t dim,
                          const std::vector<std::string>& values, std::size_t& next,
                          std::string& out) {
    if (dim == shape.size()) {
      out += values.at(next++);
      return;
    }
    bool inner = dim + 1 == shape.size();
    std::string indent(dim + 1, ' ');
    out += "[";
    for (std::size_t i = 0; i < shape[dim]; ++i) {
      if (inner)
        out += i ? " " : "";
      else
        out += "\n" + indent;
      print_level(shape, dim + 1, values, next, out);
    }
    if (!inner) out += "\n" + std::string(dim, ' ');
    out += "]";
  }

  // The program asserts that a tensor is equal on every replica; Tessera checks it.
  void assume_equal(const program::Node& n) {
    auto views = g_.replica_views(n.a);
    if (views.size() < 2) return;
    auto first = values_of(views[0]);
    for (unsigned r = 1; r < views.size(); ++r) {
      auto other = values_of(views[r]);
      for (std::size_t i = 0; i < first.size(); ++i)
        if (first[i] != other[i])
          throw runtime_error(
              fmt::format("replica {}", r),
              fmt::format("AssumeEqualAcrossReplicas: element {} of tensor '{}' is {} on replica "
                          "0 and {} on replica {}; the assumption is false, so remove it or make "
                          "the tensor equal across replicas",
                          i, tensor_name(g_, n.a), first[i], other[i], r));
    }
  }

  // A copy between a remote buffer in Streaming Memory and tile memory (spec 001 §2.6.2):
  // the rows named by the offset tensor (row 0 without one), on every replica, timed as a
  // transfer from the preset's global memory plus an external sync.
  void remote_copy(const program::Node& n, bool to_tensor) {
    const auto& info = g_.remote_buffers.at(n.remote.getId());
    const Tensor& t = to_tensor ? n.b : n.a;
    auto views = g_.replica_views(t);
    unsigned reps = info.replicated ? g_.replication_factor : 1;
    if (views.size() != reps) views.assign(reps, views.at(0));
    auto offsets = n.offset.valid() ? g_.replica_views(n.offset) : std::vector<Tensor>{};
    std::size_t row_bytes = info.elements * info.type.tesseraSize();
    std::size_t rows = n.offset.valid() ? n.offset.numElements() : 1;
    const auto& buffer = e_.remote.at(n.remote.getId());
    std::byte* base = e_.device->data(buffer);
    std::vector<std::uint64_t> per_tile(e_.tiles, 0);
    for (unsigned r = 0; r < reps; ++r) {
      const Tensor& v = views[r];
      if (!to_tensor)
        check_defined(v, "remote buffer copy",
                      fmt::format("copy to remote buffer '{}'", info.handle));
      std::vector<std::int64_t> row_index(rows, 0);
      if (!offsets.empty()) {
        const Tensor& off = offsets[std::min<std::size_t>(r, offsets.size() - 1)];
        check_defined(off, "remote buffer copy", "remote buffer offset");
        std::size_t i = 0, es = off.elementSize();
        for (const auto& reg : off.regions())
          for (std::uint64_t b = reg.begin; b < reg.end; b += es)
            row_index[i++] = static_cast<std::int64_t>(
                element_as_double(e_.data[reg.var].data() + b, off.elementType()));
      }
      // The tensor's bytes in order, gathered (or scattered) row by row.
      std::vector<std::byte> staged = to_tensor ? std::vector<std::byte>(rows * row_bytes)
                                                : read_bytes(v);
      for (std::size_t k = 0; k < rows; ++k) {
        std::int64_t row = row_index[k];
        if (row < 0 || static_cast<std::size_t>(row) >= info.repeats)
          throw runtime_error(
              fmt::format("replica {}", r),
              fmt::format("Copy {} remote buffer '{}' names row {} (offset element {}); the buffer "
                          "has {} rows (0 to {}). Keep the offsets below the buffer's repeats",
                          to_tensor ? "from" : "to", info.handle, row, k, info.repeats,
                          info.repeats - 1));
        std::byte* p = base + (std::size_t(r) * info.repeats + std::size_t(row)) * row_bytes;
        if (to_tensor)
          std::memcpy(staged.data() + k * row_bytes, p, row_bytes);
        else
          std::memcpy(p, staged.data() + k * row_bytes, row_bytes);
      }
      if (to_tensor) write_bytes(v, staged.data());
      for (const auto& c : chunks_of(g_, v)) per_tile[c.tile] += c.bytes;
    }
    // Each replica's IPU reaches its own Streaming Memory, so replicas copy at the same time.
    std::uint64_t bytes = rows * row_bytes;
    std::uint64_t cycles =
        e_.device->cost_model().transfer_cycles(e_.target->spec->global_memory, "tile", bytes) +
        e_.target->host_sync_cycles;
    e_.remote_cycles += cycles;
    const auto& ss =
        e_.bsp->add(e_.steps[e_.step_index.at(&n)].name, std::vector<std::uint64_t>{cycles}, {});
    account(&n, ss.compute + ss.exchange + ss.sync, ss.start, {}, per_tile, nullptr, false);
    e_.sync_cycles += ss.sync;
    if (e_.block_options.enabled() && e_.block_options.external_exchange)
      record_stream_copy(e_.steps[e_.step_index.at(&n)].name, ss, e_.target->host_sync_cycles,
                         per_tile, BlockRecord::Kind::stream_copy);
    tessera::profile::KernelRecord rec;
    rec.name = fmt::format("RemoteBufferCopy {}", info.handle);
    rec.engine = "ipu";
    rec.cycles = ss.compute + ss.sync;
    (to_tensor ? rec.bytes_read : rec.bytes_written) = bytes * reps;
    e_.device->record_kernel(std::move(rec));
    e_.device->add_bytes_moved(e_.target->spec->global_memory, bytes * reps);
  }

  // A tensor's bytes in element order, and back.
  std::vector<std::byte> read_bytes(const Tensor& t) const {
    std::vector<std::byte> out(t.numElements() * t.elementSize());
    std::size_t pos = 0;
    for (const auto& reg : t.regions()) {
      std::memcpy(out.data() + pos, e_.data[reg.var].data() + reg.begin, reg.end - reg.begin);
      pos += reg.end - reg.begin;
    }
    return out;
  }
  void write_bytes(const Tensor& t, const std::byte* p) {
    std::size_t pos = 0;
    for (const auto& reg : t.regions()) {
      std::memcpy(e_.data[reg.var].data() + reg.begin, p + pos, reg.end - reg.begin);
      pos += reg.end - reg.begin;
    }
    mark(t, 1);
  }

  // ---- data between replicas (CrossReplicaCopy, gcl collectives; spec 001 §2.5, §2.7) ----
  void prepare_cross_replica(const program::Node& n) {
    const auto& x = n.cross;
    const unsigned replicas = g_.replication_factor;
    const char* what = cross_replica_name(x.kind);
    for (const Tensor* t : {&n.a, &n.b})
      if (replicas > 1 && !g_.replicated(*t))
        throw control_program_error(fmt::format(
            "{} of tensor '{}', which is not a tensor of the replicated graph: data moves "
            "between replicas only from and to replicated tensors; use a tensor of the graph "
            "createReplicatedGraph returned",
            what, tensor_name(g_, *t)));
    if (x.kind == program::CrossReplicaOp::Kind::copy) {
      for (auto [from, to] : x.replica_map)
        if (from >= replicas || to >= replicas)
          throw control_program_error(fmt::format(
              "CrossReplicaCopy maps replica {} to replica {}; the graph has {} replica(s) (0 "
              "to {})",
              from, to, replicas, replicas - 1));
    } else {
      comm_groups(replicas, x.group_type, x.group_size);  // checks the group
    }
    step(&n, "GlobalExchange", n.name.empty() ? std::string(what) : n.name);
  }

  void cross_replica(const program::Node& n) {
    using Kind = program::CrossReplicaOp::Kind;
    const auto& x = n.cross;
    const unsigned replicas = g_.replication_factor;
    auto srcs = g_.replica_views(n.a), dsts = g_.replica_views(n.b);
    // Every replica's input is read before any output is written: in-place collectives read
    // and write the same elements.
    std::vector<std::vector<std::byte>> in(srcs.size()), out(dsts.size());
    for (unsigned r = 0; r < srcs.size(); ++r) {
      // A CrossReplicaCopy reads only its source replicas.
      if (x.kind != Kind::copy || x.replica_map.count(r))
        check_defined(srcs[r], fmt::format("replica {}", r), cross_replica_name(x.kind));
      in[r] = read_bytes(srcs[r]);
    }
    const Type type = n.a.elementType();
    const std::size_t es = n.a.elementSize(), bytes = in.at(0).size();
    std::uint64_t link_cycles = 0, link_bytes = 0;
    std::vector<std::uint64_t> compute(e_.tiles, 0), sent(e_.tiles, 0), received(e_.tiles, 0);
    if (x.kind == Kind::copy) {
      unsigned remote = 0;
      for (auto [from, to] : x.replica_map) {
        out.at(to) = in.at(from);
        remote += from != to;
        for (const auto& c : chunks_of(g_, srcs[from])) sent[c.tile] += c.bytes;
        for (const auto& c : chunks_of(g_, dsts[to])) received[c.tile] += c.bytes;
      }
      if (remote) {
        auto t = e_.bsp->link_traffic(sim::LinkPattern::copy, 2, bytes);
        link_cycles = t.cycles;
        link_bytes = t.bytes_per_chip * remote;
      }
    } else {
      const auto pattern = x.kind == Kind::all_reduce       ? sim::LinkPattern::all_reduce
                           : x.kind == Kind::reduce_scatter ? sim::LinkPattern::reduce_scatter
                           : x.kind == Kind::all_gather     ? sim::LinkPattern::all_gather
                                                            : sim::LinkPattern::all_to_all;
      const std::uint64_t bpc = param_u64(*e_.target->spec, "ipu.vertex_bytes_per_cycle");
      for (const auto& members : comm_groups(replicas, x.group_type, x.group_size)) {
        const std::size_t size = members.size();
        std::vector<const std::vector<std::byte>*> inputs;
        for (unsigned m : members) inputs.push_back(&in.at(m));
        switch (x.kind) {
          case Kind::all_reduce: {
            auto reduced = reduce(inputs, type, x.op, bytes / es);
            for (std::size_t k = 0; k < size; ++k)
              out[members[k]] = x.op == kLocal ? *inputs[k] : reduced;
            break;
          }
          case Kind::reduce_scatter: {
            // Padded with zeros to a whole share per member.
            const std::size_t share = dsts.at(members[0]).numElements() * es;
            std::vector<std::vector<std::byte>> padded;
            for (auto* p : inputs) {
              padded.push_back(*p);
              padded.back().resize(share * size);
            }
            std::vector<const std::vector<std::byte>*> ps;
            for (const auto& p : padded) ps.push_back(&p);
            auto reduced = reduce(ps, type, x.op, share * size / es);
            for (std::size_t k = 0; k < size; ++k) {
              const auto& own = x.op == kLocal ? padded[k] : reduced;
              out[members[k]].assign(own.begin() + k * share, own.begin() + (k + 1) * share);
            }
            break;
          }
          case Kind::all_gather:
            for (unsigned m : members) {
              out[m].clear();
              for (auto* p : inputs) out[m].insert(out[m].end(), p->begin(), p->end());
            }
            break;
          case Kind::all_to_all: {
            const std::size_t slice = bytes / size;
            for (std::size_t j = 0; j < size; ++j) {
              auto& o = out[members[j]];
              o.resize(bytes);
              for (std::size_t k = 0; k < size; ++k)
                std::memcpy(o.data() + k * slice, inputs[k]->data() + j * slice, slice);
            }
            break;
          }
          case Kind::copy:
            break;
        }
        const auto t = e_.bsp->link_traffic(pattern, static_cast<unsigned>(size), bytes);
        link_cycles = std::max(link_cycles, t.cycles);
        link_bytes += t.bytes_per_chip * size;
        // Each ring step a tile combines its share of what arrived: (size - 1) / size of its
        // input for a reduction.
        const bool reduces = x.op != kLocal &&
                             (x.kind == Kind::all_reduce || x.kind == Kind::reduce_scatter);
        for (unsigned m : members) {
          for (const auto& c : chunks_of(g_, srcs[m])) {
            sent[c.tile] += c.bytes;
            if (reduces) compute[c.tile] += ceil_div(c.bytes * (size - 1), size * bpc);
          }
          for (const auto& c : chunks_of(g_, dsts[m])) received[c.tile] += c.bytes;
        }
      }
    }
    for (unsigned r = 0; r < dsts.size(); ++r)
      if (!out[r].empty()) write_bytes(dsts[r], out[r].data());
    std::vector<std::uint64_t> exchange(e_.tiles, 0);
    for (unsigned t = 0; t < e_.tiles; ++t) exchange[t] = std::max(sent[t], received[t]);
    superstep(&n, compute, exchange, nullptr, link_cycles, link_bytes);
  }

  static constexpr unsigned kLocal = 8;  // gcl::CollectiveOperator::LOCAL

  static const char* cross_replica_name(program::CrossReplicaOp::Kind k) {
    using Kind = program::CrossReplicaOp::Kind;
    switch (k) {
      case Kind::copy:
        return "CrossReplicaCopy";
      case Kind::all_reduce:
        return "allReduceCrossReplica";
      case Kind::reduce_scatter:
        return "reduceScatterCrossReplica";
      case Kind::all_gather:
        return "allGatherCrossReplica";
      case Kind::all_to_all:
        return "allToAllCrossReplica";
    }
    return "cross-replica";
  }

  // Element-wise reduction of the members' inputs, in member order (deterministic): floating
  // types in double, rounded once; integers in 64 bits, wrapping to the type as the IPU does.
  static std::vector<std::byte> reduce(const std::vector<const std::vector<std::byte>*>& in,
                                       Type type, unsigned op, std::size_t n) {
    enum : unsigned { ADD, MEAN, MUL, MIN, MAX, LAND, LOR, SQUARE_ADD };
    const auto& info = type_info(type);
    const std::size_t es = info.size;
    std::vector<std::byte> out(n * es);
    const double members = static_cast<double>(in.size());
    for (std::size_t i = 0; i < n; ++i) {
      auto value = [&](std::size_t k) { return element_as_double(in[k]->data() + i * es, type); };
      std::byte* o = out.data() + i * es;
      if (op == LAND || op == LOR) {
        bool acc = op == LAND;
        for (std::size_t k = 0; k < in.size(); ++k)
          acc = op == LAND ? (acc && value(k) != 0) : (acc || value(k) != 0);
        store_element(o, acc ? 1.0 : 0.0, type);
      } else if (info.floating) {
        double acc = op == SQUARE_ADD ? value(0) * value(0) : value(0);
        for (std::size_t k = 1; k < in.size(); ++k) {
          double v = value(k);
          acc = op == MUL ? acc * v
                : op == MIN ? std::min(acc, v)
                : op == MAX ? std::max(acc, v)
                : op == SQUARE_ADD ? acc + v * v
                                   : acc + v;
        }
        store_element(o, op == MEAN ? acc / members : acc, type);
      } else if (type == BOOL) {
        double acc = value(0);
        for (std::size_t k = 1; k < in.size(); ++k)
          acc = op == MIN ? std::min(acc, value(k)) : std::max(acc, value(k));
        store_element(o, acc, type);
      } else {
        auto as_int = [&](std::size_t k) { return static_cast<std::int64_t>(value(k)); };
        std::uint64_t acc = static_cast<std::uint64_t>(as_int(0));
        if (op == SQUARE_ADD) acc *= acc;
        for (std::size_t k = 1; k < in.size(); ++k) {
          auto v = static_cast<std::uint64_t>(as_int(k));
          auto signed_acc = static_cast<std::int64_t>(acc), signed_v = as_int(k);
          acc = op == MUL               ? acc * v
                : op == MIN             ? static_cast<std::uint64_t>(
                                  info.is_signed ? std::min(signed_acc, signed_v)
                                                 : std::int64_t(std::min(acc, v)))
                : op == MAX             ? static_cast<std::uint64_t>(
                                  info.is_signed ? std::max(signed_acc, signed_v)
                                                 : std::int64_t(std::max(acc, v)))
                : op == SQUARE_ADD ? acc + v * v
                                   : acc + v;
        }
        if (op == MEAN)
          acc = static_cast<std::uint64_t>(static_cast<std::int64_t>(acc) /
                                           static_cast<std::int64_t>(in.size()));
        std::memcpy(o, &acc, es);  // the low bytes: two's complement wrap (little-endian host)
      }
    }
    return out;
  }

  // ---- the lightweight profiler (Block programs, profiler.blocks.* options) ----
  struct Frame {
    std::uint64_t start = 0;
    std::vector<bool> ipus;  // the IPUs whose tiles did work in it
  };
  // Bytes one record takes in a tile's block buffer: its first and last cycle and the program's
  // id, 64 bits each (Tessera's estimate; Graphcore documents the buffer's size, 1,000 B by
  // default, not its layout).
  static constexpr std::uint64_t kBlockRecordBytes = 24;

  // The Engine's clock: the BSP schedule's cycles plus the control program's predicate reads.
  std::uint64_t now() const { return e_.bsp->total_cycles() + e_.control_cycles; }

  std::string program_name(const program::Node& n) const {
    if (!n.name.empty()) return n.name;
    auto it = e_.step_index.find(&n);
    return it == e_.step_index.end() ? std::string() : e_.steps[it->second].name;
  }

  static const char* program_type(program::NodeKind k) {
    using program::NodeKind;
    switch (k) {
      case NodeKind::block:
        return "Block";
      case NodeKind::execute:
        return "OnTileExecute";
      case NodeKind::copy:
        return "DoExchange";
      case NodeKind::stream_to_tensor:
      case NodeKind::tensor_to_stream:
        return "StreamCopy";
      case NodeKind::remote_to_tensor:
      case NodeKind::tensor_to_remote:
      case NodeKind::cross_replica:
        return "GlobalExchange";
      case NodeKind::repeat:
        return "Repeat";
      case NodeKind::repeat_while:
        return "RepeatWhile";
      case NodeKind::if_else:
        return "If";
      case NodeKind::switch_case:
        return "Switch";
      case NodeKind::call:
        return "Call";
      case NodeKind::sync:
        return "Sync";
      case NodeKind::sequence:
        return "Sequence";
      default:
        return "Unknown";
    }
  }

  // A Block whose name matches profiler.blocks.filter, or any other program whose name matches
  // profiler.programs.filter (the implicit Block Poplar wraps around it).
  bool is_timed(const program::Node& n) {
    auto [it, fresh] = e_.timed.try_emplace(&n, false);
    if (!fresh) return it->second;
    const auto& o = e_.block_options;
    const std::string name = program_name(n);
    if (n.kind == program::NodeKind::block)
      it->second = o.blocks_filter && std::regex_match(name, *o.blocks_filter);
    else
      it->second = o.programs_filter && !name.empty() && std::regex_match(name, *o.programs_filter);
    return it->second;
  }

  bool contains_timed(const program::Node& n, std::set<const program::Node*>& seen) {
    if (!seen.insert(&n).second) return false;
    if (is_timed(n)) return true;
    for (const auto& c : n.children)
      if (contains_timed(*c.tesseraNode(), seen)) return true;
    for (const auto& c : n.cases)
      if (contains_timed(*c.second.tesseraNode(), seen)) return true;
    if (n.default_case && contains_timed(*n.default_case, seen)) return true;
    return n.kind == program::NodeKind::call &&
           contains_timed(*g_.functions.at(n.function).tesseraNode(), seen);
  }

  // With profiler.blocks.implicitFlush, the buffers go to the host after each iteration of the
  // outermost loop that times anything (Tessera's choice of Poplar's "good spot": every tile
  // is in step there). Returns whether this loop flushes; the caller undoes flushing_loop_.
  bool flushes_after_each_iteration(const program::Node& loop) {
    if (!e_.block_options.enabled() || !e_.block_options.implicit_flush || flushing_loop_)
      return false;
    std::set<const program::Node*> seen;
    if (!contains_timed(loop, seen)) return false;
    ++flushing_loop_;
    return true;
  }

  void add_block(unsigned tile, BlockRecord r) {
    auto& buf = e_.block_buffers[tile];
    auto& records = e_.blocks[tile];
    if (buf.used + kBlockRecordBytes <= e_.block_options.buffer_bytes) {
      buf.used += kBlockRecordBytes;
      records.push_back(std::move(r));
    } else if (buf.overflow) {  // the buffer is full: the overflow record spans what is lost
      records[*buf.overflow].to = r.to;
    } else {
      buf.overflow = records.size();
      records.push_back({BlockRecord::Kind::overflow, "Overflow", "Unknown", r.from, r.to});
    }
  }

  void record_block(const program::Node& n, const Frame& f) {
    const auto& t = *e_.target;
    const bool anywhere = std::none_of(f.ipus.begin(), f.ipus.end(), [](bool b) { return b; });
    for (unsigned ipu = 0; ipu < t.num_ipus; ++ipu)
      if (anywhere || f.ipus[ipu])
        add_block(ipu * t.tiles_per_ipu + e_.block_options.tile,
                  {BlockRecord::Kind::common, program_name(n), program_type(n.kind), f.start,
                   now()});
  }

  // The tiles that did work in a step: every open block ran on their IPUs.
  void mark_active(std::span<const std::uint64_t> compute, std::span<const std::uint64_t> exchange) {
    if (frames_.empty()) return;
    const unsigned per_ipu = e_.target->tiles_per_ipu;
    auto& ipus = frames_.back().ipus;
    for (std::size_t t = 0; t < std::max(compute.size(), exchange.size()); ++t)
      if ((t < compute.size() && compute[t]) || (t < exchange.size() && exchange[t]))
        ipus[std::min<std::size_t>(t / per_ipu, ipus.size() - 1)] = true;
  }

  // A stream copy's three phases, as the instrumented hardware reports them: the sync with the
  // host, the transfer, the closing sync.
  void record_stream_copy(const std::string& name, const sim::Superstep& ss,
                          std::uint64_t sync_with_host, std::span<const std::uint64_t> per_tile,
                          BlockRecord::Kind kind) {
    const std::uint64_t begin_end = ss.start + std::min(sync_with_host, ss.compute);
    const std::uint64_t mid_end = ss.start + ss.compute;
    for (unsigned tile = 0; tile < per_tile.size(); ++tile) {
      if (!per_tile[tile]) continue;
      auto& r = e_.blocks[tile];
      r.push_back({kind, name, "StreamCopyBegin", ss.start, begin_end});
      r.push_back({kind, name, "StreamCopyMid", begin_end, mid_end});
      r.push_back({kind, name, "StreamCopyEnd", mid_end, ss.end()});
    }
  }

  // Copies every instrumented tile's records to the host: one stream copy of the fullest
  // buffer's bytes (all tiles send at once), then the buffers are empty again.
  void flush_blocks() {
    std::uint64_t bytes = 0;
    std::vector<std::uint64_t> per_tile(e_.tiles, 0);
    for (auto& [tile, buf] : e_.block_buffers) {
      bytes = std::max(bytes, buf.used);
      if (buf.used && tile < per_tile.size()) per_tile[tile] = buf.used;
      buf = BlockBuffer{};
    }
    if (bytes == 0) return;
    const std::uint64_t cycles =
        e_.device->cost_model().host_link_cycles(bytes) + e_.target->host_sync_cycles;
    e_.host_cycles += cycles;
    const auto& ss = e_.bsp->add("BlockFlush", std::vector<std::uint64_t>{cycles}, {});
    e_.sync_cycles += ss.sync;
    if (e_.block_options.external_exchange)
      record_stream_copy("BlockFlush", ss, e_.target->host_sync_cycles, per_tile,
                         BlockRecord::Kind::flush);
    tessera::profile::KernelRecord rec;
    rec.name = "StreamCopy BlockFlush";
    rec.engine = "ipu";
    rec.cycles = ss.compute + ss.sync;
    rec.bytes_written = bytes;
    e_.device->record_kernel(std::move(rec));
    e_.device->add_bytes_moved("host-link", bytes);
  }

  void stamp(const program::Node& n) {
    std::uint64_t now = e_.bsp->total_cycles();
    if (n.stamp_base_node) {
      const Tensor start = g_.replica_view(n.stamp_start, 0);  // its runs outlive the statement
      const auto& r = start.regions().at(0);
      std::uint32_t lo, hi;
      std::memcpy(&lo, e_.data[r.var].data() + r.begin, 4);
      std::memcpy(&hi, e_.data[r.var].data() + r.begin + 4, 4);
      now -= (std::uint64_t(hi) << 32) | lo;
    }
    std::uint32_t words[2] = {static_cast<std::uint32_t>(now),
                              static_cast<std::uint32_t>(now >> 32)};
    for (const auto& v : g_.replica_views(n.a)) {
      const auto& r = v.regions().at(0);
      std::memcpy(e_.data[r.var].data() + r.begin, words, 8);
      mark(v, 1);
    }
  }

  EngineState& e_;
  GraphState& g_;
  std::set<const program::Node*> prepared_, on_path_;  // prepare's walk
  std::vector<Frame> frames_;                          // the timed programs now running
  unsigned flushing_loop_ = 0;                         // inside a loop that flushes the buffers
};

}  // namespace
}  // namespace detail

namespace {
ProfileValue to_value(nlohmann::json j) {
  auto t = std::make_shared<detail::ProfileTree>();
  t->json = std::move(j);
  return ProfileValue(std::move(t));
}

// autoReport (spec 001 §8.1.1): which profiles the Engine saves, and where.
bool auto_report(const EngineState& e, const char* which) {
  return option_true(e.options, "autoReport.all") || option_true(e.options, which);
}
void save_profile(const EngineState& e, const char* file, const nlohmann::json& j) {
  std::string dir = e.options.contains("autoReport.directory")
                        ? e.options.at("autoReport.directory")
                        : std::string(".");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string path = (std::filesystem::path(dir) / file).string();
  std::ofstream out(path);
  out << j.dump(1);
  if (!out)
    throw invalid_option(fmt::format(
        "autoReport cannot write {}; set autoReport.directory to a writable folder", path));
}
}  // namespace

// ---- Engine ----
Engine::Engine(const Graph& graph, const program::Program& prog, const OptionFlags& options)
    : Engine(graph, ArrayRef<program::Program>(&prog, 1), options) {}

namespace detail {
void read_block_options(EngineState& e) {
  BlockOptions o;
  auto regex = [&](const char* key) -> std::optional<std::regex> {
    if (!e.options.contains(key)) return std::nullopt;
    const std::string& v = e.options.at(key);
    try {
      return std::regex(v, std::regex::ECMAScript);
    } catch (const std::regex_error& x) {
      throw invalid_option(fmt::format(
          "option '{}' is '{}', which is not a regular expression ({}); give an ECMAScript "
          "regular expression that the whole program name must match, e.g. \"stage.*\"",
          key, v, x.what()));
    }
  };
  auto whole_number = [&](const char* key, std::uint64_t low, std::uint64_t high) {
    const std::string& v = e.options.at(key);
    std::uint64_t n = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || p != v.data() + v.size() || n < low || n > high)
      throw invalid_option(fmt::format("option '{}' is '{}'; give a whole number from {} to {}",
                                       key, v, low, high));
    return n;
  };
  o.blocks_filter = regex("profiler.blocks.filter");
  o.programs_filter = regex("profiler.programs.filter");
  if (e.options.contains("profiler.blocks.tile"))
    o.tile = static_cast<unsigned>(
        whole_number("profiler.blocks.tile", 0, e.target->tiles_per_ipu - 1));
  if (e.options.contains("profiler.blocks.bufferSize"))
    o.buffer_bytes = whole_number("profiler.blocks.bufferSize", 0, e.target->bytes_per_tile);
  if (e.options.contains("profiler.blocks.implicitFlush"))
    o.implicit_flush = option_true(e.options, "profiler.blocks.implicitFlush");
  o.external_exchange = option_true(e.options, "debug.instrumentExternalExchange");
  e.block_options = std::move(o);
  e.timed.clear();
}

void build_engine(EngineState& e, std::shared_ptr<GraphState> graph,
                  ArrayRef<program::Program> progs, const OptionFlags& options) {
  honour_poplar_logging();
  e.graph = std::move(graph);
  e.target = e.graph->target.tesseraState();
  e.options = options;
  // POPLAR_ENGINE_OPTIONS overrides what the program set (spec 001 §9.3).
  if (const char* env = std::getenv("POPLAR_ENGINE_OPTIONS"); env != nullptr && *env != '\0') {
    OptionFlags from_env;
    readJSON(env, from_env);
    for (const auto& [k, v] : from_env) e.options.set(k, v);
  }
  static const char* known[] = {"debug.checkUndefinedReads",
                                "debug.allowOutOfMemory",
                                "debug.instrument",
                                "debug.instrumentCompute",
                                "debug.instrumentExternalExchange",
                                "debug.computeInstrumentationLevel",
                                // Tessera always keeps debug names (the summary prints them).
                                "debug.retainDebugInformation",
                                "autoReport.all",
                                "autoReport.directory",
                                "autoReport.outputGraphProfile",
                                "autoReport.outputExecutionProfile",
                                "exchange.enablePrefetch",
                                "exchange.streamBufferOverlap",
                                "opt.enableSwSyncs",
                                "target.syncReplicasIndependently",
                                "profiler.trace",
                                "profiler.blocks.filter",
                                "profiler.programs.filter",
                                "profiler.blocks.tile",
                                "profiler.blocks.bufferSize",
                                "profiler.blocks.implicitFlush"};
  for (const auto& [k, v] : e.options)
    if (std::find_if(std::begin(known), std::end(known), [&](const char* n) { return k == n; }) ==
        std::end(known))
      throw invalid_option(fmt::format("unknown Engine option '{}' (= '{}'); known options: {}", k,
                                       v, fmt::join(known, ", ")));
  e.debug_undefined = option_true(e.options, "debug.checkUndefinedReads");
  e.tiles = e.target->num_tiles;
  read_block_options(e);
  e.programs.assign(progs.begin(), progs.end());
  e.device = std::make_unique<tessera::runtime::Device>(*e.target->spec);
  e.device->set_trace_enabled(option_true(e.options, "profiler.trace"));
  e.bsp = std::make_unique<tessera::sim::BspSchedule>(
      tessera::sim::BspCosts::from_params(e.device->cost_model(), "ipu"));
  detail::Compiler compiler(e);
  compiler.run();
  // Remote buffers live in the preset's global memory (Streaming Memory), one per replica.
  std::uint64_t remote_bytes = 0;  // the device's global memory is host memory here
  for (const auto& rb : e.graph->remote_buffers) {
    std::size_t reps = rb.replicated ? e.graph->replication_factor : 1;
    // addRemoteBuffer checked one replica's bytes; all replicas' may still pass 64 bits.
    std::uint64_t bytes = 0;
    const bool overflow =
        __builtin_mul_overflow(std::uint64_t{rb.repeats} * rb.elements * rb.type.tesseraSize(),
                               std::uint64_t{reps}, &bytes);
    if (overflow || bytes > e.device->global_bytes_free())
      throw graph_memory_allocation_error(
          fmt::format("remote buffer '{}'", rb.handle),
          fmt::format("needs {} ({} replica(s) x {} rows x {} elements of {}); the device's {} "
                      "memory has {} free; use fewer rows or elements",
                      overflow ? std::string("more than 2^64 B") : sim::format_bytes(bytes),
                      reps, rb.repeats, rb.elements, rb.type.toString(),
                      e.target->spec->global_memory,
                      sim::format_bytes(e.device->global_bytes_free())));
    remote_bytes += bytes;  // each under the global memory's size: no overflow
    tessera::check_host_memory(remote_bytes, fmt::format("the remote buffers up to '{}'", rb.handle));
    e.remote.push_back(e.device->allocate(bytes, "remote buffer " + rb.handle));
  }
  detail::Runner runner(e);
  for (const auto& p : e.programs) runner.prepare(*p.tesseraNode());
  compiler.add_builtin_vertices_and_layout();
  if (auto_report(e, "autoReport.outputGraphProfile")) {
    auto profile = detail::graph_profile(e);
    save_profile(e, "graph.json", profile);
    save_profile(e, "profile.pop", pva::detail::report_json(profile, nlohmann::json()));
  }
  tessera::log(tessera::LogLevel::info, "ipu", "Engine: {} vertices in {} compute sets on {} tiles",
               e.graph->vertices.size(), e.compute_sets.size(), e.tiles);
}
}  // namespace detail

Engine::Engine(const Graph& graph, ArrayRef<program::Program> progs, const OptionFlags& options)
    : state_(std::make_unique<EngineState>()) {
  detail::build_engine(*state_, graph.tesseraState(), progs, options);
}

Engine::Engine(Executable&& exe, const OptionFlags& options) : state_(exe.tesseraRelease()) {
  if (!state_)
    throw control_program_error(
        "Engine from an empty Executable; get one from poplar::compileGraph or "
        "Executable::deserialize");
  for (const auto& [k, v] : options) {
    if (k.rfind("debug.", 0) != 0 && k.rfind("profiler.", 0) != 0 && k.rfind("autoReport.", 0) != 0)
      throw invalid_option(fmt::format(
          "Engine option '{}' changes how the graph compiles; pass it to compileGraph", k));
    state_->options.set(k, v);
  }
  if (options.contains("profiler.trace"))
    state_->device->set_trace_enabled(option_true(state_->options, "profiler.trace"));
  detail::read_block_options(*state_);
}

Engine::~Engine() = default;
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;

void Engine::load(const Device& device) {
  if (device.getTarget().getNumTiles() < state_->tiles)
    throw invalid_machine_model(fmt::format("the graph needs {} tiles; the device has {}",
                                            state_->tiles, device.getTarget().getNumTiles()));
  state_->loaded = true;
}

void Engine::run(unsigned prog, const std::string&) {
  auto& e = *state_;
  if (!e.loaded)
    throw control_program_error(fmt::format(
        "Engine::run({}) before Engine::load; load the engine onto a device first", prog));
  if (prog >= e.programs.size())
    throw control_program_error(
        fmt::format("run({}) of an Engine with {} programs", prog, e.programs.size()));
  detail::Runner(e).run(e.programs[prog]);
  e.block_buffers.clear();  // the host reads what the buffers hold when the run ends
  ++e.runs;
  e.device->synchronize();
  if (auto_report(e, "autoReport.outputExecutionProfile")) {
    auto exec = detail::execution_profile(e);
    save_profile(e, "execution.json", exec);
    save_profile(e, "profile.pop", pva::detail::report_json(detail::graph_profile(e), exec));
  }
}

namespace {
const detail::HostHandle& handle(const EngineState& e, StringRef h, bool write) {
  std::string key = std::string(h) + (write ? "" : "\x01read");
  auto it = e.graph->host_handles.find(key);
  if (it == e.graph->host_handles.end())
    throw tensor_io_state_error(fmt::format("no host {} handle '{}'; create it with Graph::{}",
                                            write ? "write" : "read", h,
                                            write ? "createHostWrite" : "createHostRead"));
  return it->second;
}
}  // namespace

void Engine::writeTensor(StringRef h, const void* buf, const void* bufEnd) {
  const auto& hh = handle(*state_, h, true);
  std::size_t bytes = hh.tensor.numElements() * hh.tensor.elementSize() *
                      state_->graph->replica_views(hh.tensor).size();
  std::size_t given = static_cast<const std::byte*>(bufEnd) - static_cast<const std::byte*>(buf);
  if (given != bytes)
    throw tensor_io_state_error(
        fmt::format("writeTensor '{}': the buffer is {} B, the tensor is "
                    "{} B",
                    h, given, bytes));
  writeTensor(h, buf);
}
void Engine::writeTensor(StringRef h, const void* buf) {
  auto& e = *state_;
  const auto& hh = handle(e, h, true);
  if (!buf) throw tensor_io_state_error(fmt::format("writeTensor '{}': the buffer is NULL", h));
  std::size_t pos = 0;
  for (const auto& view : e.graph->replica_views(hh.tensor))
    for (const auto& r : view.regions()) {
      std::memcpy(e.data[r.var].data() + r.begin, static_cast<const std::byte*>(buf) + pos,
                  r.end - r.begin);
      if (e.debug_undefined) {
        const auto [first, last] = detail::element_range(e.graph->var(r.var), r.begin, r.end);
        std::fill(e.written[r.var].begin() + first, e.written[r.var].begin() + last, 1);
      }
      pos += r.end - r.begin;
    }
}
void Engine::readTensor(StringRef h, void* buf, void* bufEnd) {
  const auto& hh = handle(*state_, h, false);
  std::size_t bytes = hh.tensor.numElements() * hh.tensor.elementSize() *
                      state_->graph->replica_views(hh.tensor).size();
  std::size_t given = static_cast<std::byte*>(bufEnd) - static_cast<std::byte*>(buf);
  if (given != bytes)
    throw tensor_io_state_error(
        fmt::format("readTensor '{}': the buffer is {} B, the tensor is "
                    "{} B",
                    h, given, bytes));
  readTensor(h, buf);
}
void Engine::readTensor(StringRef h, void* buf) {
  auto& e = *state_;
  const auto& hh = handle(e, h, false);
  if (!buf) throw tensor_io_state_error(fmt::format("readTensor '{}': the buffer is NULL", h));
  std::size_t pos = 0;
  for (const auto& view : e.graph->replica_views(hh.tensor))
    for (const auto& r : view.regions()) {
      std::memcpy(static_cast<std::byte*>(buf) + pos, e.data[r.var].data() + r.begin,
                  r.end - r.begin);
      pos += r.end - r.begin;
    }
}

namespace {
const DataStream& find_stream(const EngineState& e, StringRef h) {
  auto it = e.graph->stream_index.find(std::string(h));
  if (it == e.graph->stream_index.end())
    throw stream_connection_error(
        fmt::format("no stream '{}' in the graph; add it with "
                    "addHostToDeviceFIFO or addDeviceToHostFIFO",
                    h));
  return e.graph->streams[it->second];
}
}  // namespace

void Engine::connectStream(StringRef h, void* p) {
  const auto& s = find_stream(*state_, h);
  auto* b = static_cast<std::byte*>(p);
  // One transfer: on a replicated graph, one per replica unless the stream broadcasts.
  auto [replicated, mode] = state_->graph->stream_replication.at(s.getId());
  std::size_t copies =
      replicated && !(s.isHostToDevice() && mode == ReplicatedStreamMode::BROADCAST)
          ? state_->graph->replication_factor
          : 1;
  const std::size_t bytes = copies * s.numElements() * s.elementType().tesseraSize();
  if (!b && bytes != 0)
    throw stream_connection_error(fmt::format("connectStream '{}': the buffer is NULL", h));
  connectStream(h, b, b + bytes);
}
void Engine::connectStream(StringRef h, void* begin, void* end) {
  find_stream(*state_, h);
  // Transfers copy n bytes at begin + position, modulo end - begin.
  if ((begin == nullptr) != (end == nullptr) || end < begin)
    throw stream_connection_error(fmt::format(
        "connectStream '{}': the buffer [{}, {}) is {}; pass host memory that holds a whole "
        "number of transfers",
        h, begin, end, end < begin ? "reversed" : "half NULL"));
  auto& c = state_->streams[std::string(h)];
  c.begin = static_cast<std::byte*>(begin);
  c.end = static_cast<std::byte*>(end);
  c.position = 0;
  c.callback.reset();
}
void Engine::connectStreamToCallback(StringRef h, StreamCallbackHandle f) {
  find_stream(*state_, h);
  auto& c = state_->streams[std::string(h)];
  c.begin = c.end = nullptr;
  c.callback = std::move(f);
}
namespace {
std::string replica_key(const EngineState& e, StringRef h, unsigned replicaId) {
  const auto& s = find_stream(e, h);
  unsigned reps = e.graph->stream_replication.at(s.getId()).first ? e.graph->replication_factor : 1;
  if (replicaId >= reps)
    throw stream_connection_error(
        fmt::format("stream '{}' connected for replica {}; it has {} replica(s) (0 to {})", h,
                    replicaId, reps, reps - 1));
  if (reps == 1) return std::string(h);
  return std::string(h) + '\x01' + std::to_string(replicaId);
}
}  // namespace

void Engine::connectStreamToCallback(StringRef h, unsigned replicaId, StreamCallbackHandle f) {
  auto& c = state_->streams[replica_key(*state_, h, replicaId)];
  c.begin = c.end = nullptr;
  c.callback = std::move(f);
}
void Engine::connectStreamToCallback(StringRef h, unsigned replicaId,
                                     std::function<void(void*)> f) {
  struct Fn : LegacyStreamCallback {
    explicit Fn(std::function<void(void*)> fn) : fn_(std::move(fn)) {}
    void fetch(void* p) override { fn_(p); }
    std::function<void(void*)> fn_;
  };
  connectStreamToCallback(h, replicaId, std::make_unique<Fn>(std::move(f)));
}

namespace {
std::byte* remote_row(EngineState& e, StringRef h, std::uint64_t row, unsigned replica,
                      std::size_t& bytes) {
  auto it = e.graph->remote_index.find(std::string(h));
  if (it == e.graph->remote_index.end())
    throw index_error(fmt::format("no remote buffer '{}'; add it with Graph::addRemoteBuffer", h));
  const auto& rb = e.graph->remote_buffers[it->second];
  unsigned reps = rb.replicated ? e.graph->replication_factor : 1;
  if (row >= rb.repeats || replica >= reps)
    throw index_error(fmt::format(
        "remote buffer '{}' has {} rows and {} replica(s); row {} of replica {} is outside it", h,
        rb.repeats, reps, row, replica));
  bytes = rb.elements * rb.type.tesseraSize();
  return e.device->data(e.remote.at(it->second)) +
         (std::size_t(replica) * rb.repeats + row) * bytes;
}
}  // namespace

void Engine::copyToRemoteBuffer(void* w, StringRef h, std::uint64_t repeatIndex,
                                unsigned replicationIndex) {
  std::size_t bytes = 0;
  std::byte* p = remote_row(*state_, h, repeatIndex, replicationIndex, bytes);
  std::memcpy(p, w, bytes);
}
void Engine::copyFromRemoteBuffer(StringRef h, void* w, std::uint64_t repeatIndex,
                                  unsigned replicationIndex) {
  std::size_t bytes = 0;
  const std::byte* p = remote_row(*state_, h, repeatIndex, replicationIndex, bytes);
  std::memcpy(w, p, bytes);
}

void Engine::connectStreamToCallback(StringRef h, std::function<void(void*)> f) {
  struct Fn : LegacyStreamCallback {
    explicit Fn(std::function<void(void*)> fn) : fn_(std::move(fn)) {}
    void fetch(void* p) override { fn_(p); }
    std::function<void(void*)> fn_;
  };
  connectStreamToCallback(h, std::make_unique<Fn>(std::move(f)));
}

double Engine::getTileClockFrequency() const {
  return state_->target->clock_hz;
}
unsigned Engine::getNumTiles() const {
  return state_->tiles;
}
std::uint64_t Engine::tesseraTotalCycles() const {
  return state_->bsp->total_cycles() + state_->control_cycles;
}
const tessera::profile::Profile& Engine::tesseraProfile() const {
  return state_->device->profile();
}
std::uint64_t Engine::tesseraTileBytes(unsigned tile) const {
  auto it = state_->memory.find(tile);
  return it == state_->memory.end() ? 0 : it->second.total;
}
void Engine::resetExecutionProfile() {
  auto& e = *state_;
  for (auto& s : e.steps) {
    detail::StepStats fresh;
    fresh.kind = s.kind;
    fresh.name = s.name;
    s = std::move(fresh);
  }
  e.type_totals.clear();
  e.blocks.clear();
  e.block_buffers.clear();
  e.host_cycles = e.copy_cycles = e.exchange_cycles = e.compute_cycles = e.sync_cycles =
      e.control_cycles = e.remote_cycles = e.link_cycles = e.link_bytes = 0;
  e.bsp = std::make_unique<tessera::sim::BspSchedule>(
      tessera::sim::BspCosts::from_params(e.device->cost_model(), "ipu"));
  e.device->reset_profile();
}
void Engine::printProfileSummary(std::ostream& out, const OptionFlags& opts) const {
  detail::print_profile_summary(*state_, out, opts);
}

pva::Report Engine::getReport(bool reportExecution) const {
  auto exec = reportExecution ? detail::execution_profile(*state_) : nlohmann::json();
  return pva::Report(pva::detail::report_from_json(
      pva::detail::report_json(detail::graph_profile(*state_), exec), "the Engine's report"));
}

ProfileValue Engine::getGraphProfile() const {
  return to_value(detail::graph_profile(*state_));
}
ProfileValue Engine::getExecutionProfile() const {
  return to_value(detail::execution_profile(*state_));
}

void printProfileSummary(std::ostream& out, const ProfileValue& graphProfile,
                         const ProfileValue& executionProfile, const OptionFlags& opts) {
  detail::print_profile_summary(&graphProfile.tesseraTree()->json,
                                &executionProfile.tesseraTree()->json, out, opts);
}
void printGraphSummary(std::ostream& out, const ProfileValue& graphProfile,
                       const OptionFlags& opts) {
  detail::print_profile_summary(&graphProfile.tesseraTree()->json, nullptr, out, opts);
}
void printExecutionSummary(std::ostream& out, const ProfileValue& executionProfile,
                           const OptionFlags& opts) {
  detail::print_profile_summary(nullptr, &executionProfile.tesseraTree()->json, out, opts);
}

}  // namespace poplar
