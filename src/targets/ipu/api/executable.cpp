// compileGraph and Executable (spec 001 §2.2.2). An Executable is a compiled Engine state over a
// snapshot of the graph. serialize writes that snapshot (target figures, variables with their
// mapping and initial values, vertices and connections, compute sets, streams, remote buffers,
// programs, options, and the codelets' shared objects) as CBOR; deserialize rebuilds the graph,
// reloads the codelets and compiles it again, so the restored Engine is the one compiled.
// Perf estimators are host functions: their estimates are evaluated at compileGraph and saved.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <istream>
#include <iterator>
#include <ostream>

#include <nlohmann/json.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Executable.hpp>

#include "codelets.h"
#include "engine_state.h"
#include "executable_check.h"
#include "tessera/core/json_integer.h"

namespace poplar {

using json = nlohmann::json;
using detail::EngineState;
using detail::GraphState;
using detail::node_program;

Executable::Executable() = default;
Executable::~Executable() = default;
Executable::Executable(Executable&&) noexcept = default;
Executable& Executable::operator=(Executable&&) noexcept = default;
Executable::Executable(std::unique_ptr<EngineState> state) : state_(std::move(state)) {}
std::unique_ptr<EngineState> Executable::tesseraRelease() {
  return std::move(state_);
}

namespace {

constexpr const char* kFormat = "tessera.poplar.executable/1";

json bytes(const void* p, std::size_t n) {
  const auto* b = static_cast<const std::uint8_t*>(p);
  return json::binary(std::vector<std::uint8_t>(b, b + n));
}

json tensor_to_json(const Tensor& t) {
  if (!t.valid()) return nullptr;
  json regions = json::array();
  for (const auto& r : t.regions()) regions.push_back({r.var, r.begin, r.end});
  return {{"type", t.elementType().tesseraId()}, {"shape", t.shape()}, {"regions", regions}};
}

// Every integer of the file is read through this (core/json_integer.h says why): a value out
// of T's range would wrap, and a wrapped index or size passes the checks it was meant to fail.
template <typename T>
T whole(const json& j, std::string_view what, T lowest = std::numeric_limits<T>::min(),
        T highest = std::numeric_limits<T>::max()) {
  if (const std::optional<T> v = tessera::json_integer<T>(j); v && *v >= lowest && *v <= highest)
    return *v;
  detail::executable_damaged("{} is {}, not a whole number from {} to {}", what,
                             j.is_number() ? j.dump() : std::string(j.type_name()), lowest,
                             highest);
}

// An index into `count` items: "program node 4 names stream 7 of 2".
unsigned index(const json& j, std::string_view who, std::string_view kind, std::size_t count) {
  const auto v = whole<std::uint64_t>(j, fmt::format("{}'s {} id", who, kind));
  if (v >= count) detail::executable_damaged("{} names {} {} of {}", who, kind, v, count);
  return static_cast<unsigned>(v);
}

// An element type: one of type_info's, never "no type".
Type type_from_json(const json& j, std::string_view what) {
  return Type(whole<std::uint8_t>(j, what, FLOAT.tesseraId(), UNSIGNED_LONGLONG.tesseraId()));
}

Tensor tensor_from_json(const json& j, std::string_view what) {
  if (j.is_null()) return Tensor();
  std::vector<Tensor::Region> regions;
  for (const auto& r : j.at("regions"))
    regions.push_back({whole<std::uint32_t>(r.at(0), fmt::format("{}'s variable", what)),
                       whole<std::uint64_t>(r.at(1), fmt::format("{}'s first byte", what)),
                       whole<std::uint64_t>(r.at(2), fmt::format("{}'s end byte", what))});
  std::vector<std::size_t> shape;
  for (const auto& d : j.at("shape"))
    shape.push_back(whole<std::size_t>(d, fmt::format("{}'s dimension", what)));
  return Tensor(type_from_json(j.at("type"), fmt::format("{}'s type", what)), std::move(shape),
                std::move(regions));
}

// Program trees keep their sharing (one node reached twice stays one node: its step counts).
class NodeWriter {
 public:
  int add(const std::shared_ptr<program::Node>& n) {
    if (!n) return -1;
    auto it = ids_.find(n.get());
    if (it != ids_.end()) return it->second;
    int id = static_cast<int>(nodes.size());
    ids_[n.get()] = id;
    nodes.push_back(nullptr);
    json j;
    j["kind"] = static_cast<int>(n->kind);
    j["name"] = n->name;
    json children = json::array();
    for (const auto& c : n->children) children.push_back(add(c.tesseraNode()));
    j["children"] = children;
    j["computeSet"] = n->compute_set;
    j["count"] = n->count;
    j["whileTrue"] = n->while_true;
    j["a"] = tensor_to_json(n->a);
    j["b"] = tensor_to_json(n->b);
    j["stream"] = n->stream.handle().empty() ? json(nullptr) : json(n->stream.getId());
    json cases = json::array();
    for (const auto& [v, p] : n->cases) cases.push_back({v, add(p.tesseraNode())});
    j["cases"] = cases;
    j["default"] = add(n->default_case);
    j["function"] = n->function;
    j["stampBase"] = n->stamp_base_node;
    j["stampStart"] = tensor_to_json(n->stamp_start);
    j["remote"] = n->remote.handle().empty() ? json(nullptr) : json(n->remote.getId());
    j["offset"] = tensor_to_json(n->offset);
    if (n->kind == program::NodeKind::cross_replica) {
      const auto& x = n->cross;
      json map = json::array();
      for (auto [from, to] : x.replica_map) map.push_back({from, to});
      j["cross"] = {{"kind", static_cast<int>(x.kind)}, {"op", x.op},
                    {"groupType", x.group_type}, {"groupSize", x.group_size},
                    {"replicaMap", map}};
    }
    nodes[id] = std::move(j);
    return id;
  }
  json nodes = json::array();

 private:
  std::map<const program::Node*, int> ids_;
};

// Deeper nesting is refused in a file: building and running a program recurse once per level
// (a Call counts as one), and a thread's stack holds about this many levels with room to spare.
constexpr std::size_t kMaxProgramDepth = 1000;

// Rebuilds program nodes, keeping their sharing. The node graph is checked first, without
// recursion: ids in range, no node that reaches itself through its children, cases, default or
// a Call (a cycle would make the Engine recurse without end) and, in a file, nesting within
// kMaxProgramDepth. `functions`: the node of each of the graph's functions.
class NodeReader {
 public:
  NodeReader(const json& nodes, const GraphState& g, const std::vector<int>& functions,
             bool from_file)
      : nodes_(nodes), g_(g), functions_(functions), from_file_(from_file),
        built_(nodes.size()), kinds_(nodes.size()), edges_(nodes.size()) {
    if (!nodes.is_array()) detail::executable_damaged("'nodes' is not an array");
    const std::size_t n = nodes.size();
    constexpr int kLastKind = static_cast<int>(program::NodeKind::block);
    for (std::size_t id = 0; id < n; ++id) {
      const json& j = nodes[id];
      const std::string who = fmt::format("program node {}", id);
      kinds_[id] = static_cast<program::NodeKind>(
          whole<int>(j.at("kind"), fmt::format("{}'s kind", who), 0, kLastKind));
      auto& e = edges_[id];
      for (const auto& c : j.at("children")) e.push_back(int(index(c, who, "child node", n)));
      for (const auto& c : j.at("cases")) e.push_back(int(index(c.at(1), who, "case node", n)));
      if (int d = whole<int>(j.at("default"), fmt::format("{}'s default", who), -1); d >= 0)
        e.push_back(int(index(j.at("default"), who, "default node", n)));
      if (kinds_[id] == program::NodeKind::call)
        e.push_back(functions_[index(j.at("function"), who, "function", functions_.size())]);
    }
    check_acyclic();
  }

  std::shared_ptr<program::Node> get(int id) {
    if (id < 0) return nullptr;
    auto& slot = built_.at(static_cast<std::size_t>(id));
    if (slot) return slot;
    const json& j = nodes_[static_cast<std::size_t>(id)];
    const std::string who = fmt::format("program node {}", id);
    auto node = std::make_shared<program::Node>();
    auto& n = *node;
    n.kind = kinds_[id];
    n.name = j.at("name").get<std::string>();
    for (const auto& c : j.at("children")) n.children.push_back(node_program(get(c.get<int>())));
    n.compute_set = whole<unsigned>(j.at("computeSet"), who + "'s compute set");
    n.count = whole<unsigned>(j.at("count"), who + "'s count");
    n.while_true = j.at("whileTrue").get<bool>();
    n.a = tensor_from_json(j.at("a"), who + "'s tensor a");
    n.b = tensor_from_json(j.at("b"), who + "'s tensor b");
    if (!j.at("stream").is_null())
      n.stream = g_.streams[index(j.at("stream"), who, "stream", g_.streams.size())];
    for (const auto& c : j.at("cases"))
      n.cases.emplace_back(whole<std::int32_t>(c.at(0), who + "'s case value"),
                           node_program(get(c.at(1).get<int>())));
    n.default_case = get(j.at("default").get<int>());
    n.function = whole<unsigned>(j.at("function"), who + "'s function");
    n.stamp_base_node = whole<std::uint64_t>(j.at("stampBase"), who + "'s stamp base");
    n.stamp_start = tensor_from_json(j.at("stampStart"), who + "'s stamp start");
    if (!j.at("remote").is_null()) {
      unsigned r = index(j.at("remote"), who, "remote buffer", g_.remote_buffers.size());
      const auto& rb = g_.remote_buffers[r];
      n.remote = RemoteBuffer(r, rb.handle, rb.type, rb.elements, rb.repeats);
    }
    n.offset = tensor_from_json(j.at("offset"), who + "'s offset");
    if (j.contains("cross")) {
      using Kind = program::CrossReplicaOp::Kind;
      const json& x = j.at("cross");
      n.cross.kind = static_cast<Kind>(whole<int>(x.at("kind"), who + "'s collective", 0,
                                                  static_cast<int>(Kind::all_to_all)));
      // gcl::CollectiveOperator (ADD to LOCAL) and gcl::CommGroupType (ALL to ORTHOGONAL).
      n.cross.op = whole<unsigned>(x.at("op"), who + "'s collective operator", 0, 8);
      n.cross.group_type = whole<unsigned>(x.at("groupType"), who + "'s group type", 0, 2);
      n.cross.group_size = whole<unsigned>(x.at("groupSize"), who + "'s group size");
      for (const auto& m : x.at("replicaMap"))
        n.cross.replica_map.emplace(whole<unsigned>(m.at(0), who + "'s source replica"),
                                    whole<unsigned>(m.at(1), who + "'s destination replica"));
    }
    if (from_file_) detail::check_executable_node(g_, n, id, functions_.size());
    slot = std::move(node);
    return slot;
  }

 private:
  // Depth-first with an explicit stack: a file may nest deeper than the host's stack.
  void check_acyclic() {
    const std::size_t n = edges_.size();
    enum : std::uint8_t { unseen, on_path, done };
    std::vector<std::uint8_t> state(n, unseen);
    std::vector<std::size_t> height(n, 0);
    std::vector<std::pair<int, std::size_t>> path;  // node, next edge
    for (std::size_t root = 0; root < n; ++root) {
      if (state[root] != unseen) continue;
      state[root] = on_path;
      path.emplace_back(int(root), 0);
      while (!path.empty()) {
        const int v = path.back().first;
        const std::size_t next = path.back().second++;
        if (next < edges_[v].size()) {
          const int c = edges_[v][next];
          if (state[c] == on_path) fail(fmt::format("program node {} contains itself (through "
                                                    "node {})", c, v));
          if (state[c] == unseen) {
            state[c] = on_path;
            path.emplace_back(c, 0);
          }
          continue;
        }
        for (int c : edges_[v]) height[v] = std::max(height[v], height[c] + 1);
        if (from_file_ && height[v] > kMaxProgramDepth)
          fail(fmt::format("program node {} nests {} levels deep, more than {}", v, height[v],
                           kMaxProgramDepth));
        state[v] = done;
        path.pop_back();
      }
    }
  }

  [[noreturn]] void fail(const std::string& what) {
    if (from_file_) detail::executable_damaged("{}", what);
    throw control_program_error(fmt::format(
        "{}; a program cannot contain itself (build a loop with Repeat or RepeatWhileTrue)",
        what));
  }

  const json& nodes_;
  const GraphState& g_;
  const std::vector<int>& functions_;
  const bool from_file_;
  std::vector<std::shared_ptr<program::Node>> built_;
  std::vector<program::NodeKind> kinds_;
  std::vector<std::vector<int>> edges_;  // children, cases, default, called function
};

}  // namespace

Executable compileGraph(const Graph& graph, ArrayRef<program::Program> programs,
                        const OptionFlags& opt, ProgressFunc progressCallBack,
                        const DebugContext&) {
  // A snapshot: the graph may change after this without touching the executable.
  auto snapshot = std::make_shared<GraphState>(*graph.tesseraState());
  // Perf estimators are host functions that cannot be saved; their results can.
  for (unsigned vid = 0; vid < snapshot->vertices.size(); ++vid) {
    auto& v = snapshot->vertices[vid];
    if (v.estimate) continue;
    auto est = snapshot->estimators.find(snapshot->types[v.type].name);
    if (est != snapshot->estimators.end())
      v.estimate = est->second(VertexIntrospector(snapshot.get(), vid), snapshot->target);
  }
  // The program trees too: a Sequence extended after compileGraph does not change what runs.
  NodeWriter w;
  std::vector<int> function_ids, program_ids;
  for (const auto& f : snapshot->functions) function_ids.push_back(w.add(f.tesseraNode()));
  for (const auto& p : programs) program_ids.push_back(w.add(p.tesseraNode()));
  NodeReader reader(w.nodes, *snapshot, function_ids, false);
  for (std::size_t i = 0; i < function_ids.size(); ++i)
    snapshot->functions[i] = node_program(reader.get(function_ids[i]));
  std::vector<program::Program> copies;
  for (int id : program_ids) copies.push_back(node_program(reader.get(id)));
  if (progressCallBack) progressCallBack(0, 1);
  auto state = std::make_unique<EngineState>();
  detail::build_engine(*state, std::move(snapshot), copies, opt);
  if (progressCallBack) progressCallBack(1, 1);
  return Executable(std::move(state));
}

void Executable::serialize(std::ostream& out) const {
  if (!state_)
    throw control_program_error(
        "serialize of an empty Executable (moved into an Engine, or default-constructed)");
  const GraphState& g = *state_->graph;
  const auto& t = *state_->target;
  json j;
  j["format"] = kFormat;
  j["target"] = {{"preset", t.preset},
                 {"numIPUs", t.num_ipus},
                 {"tilesPerIPU", t.tiles_per_ipu},
                 {"bytesPerTile", t.bytes_per_tile},
                 {"workers", t.workers},
                 {"exchangeBytesPerCycle", t.exchange_bytes_per_cycle},
                 {"syncCycles", t.sync_cycles},
                 {"hostSyncCycles", t.host_sync_cycles},
                 {"clockHz", t.clock_hz},
                 {"type", static_cast<int>(t.type)}};
  j["replication"] = {{"factor", g.replication_factor},
                      {"replicaTiles", g.replica_tiles},
                      {"topLevel", g.replicated_top_level}};
  json vars = json::array();
  for (const auto& v : g.variables) {
    json mapping = json::array();
    for (const auto& [b, run] : v.mapping) mapping.push_back({b, run.first, run.second});
    vars.push_back({{"name", v.name},
                    {"type", v.type.tesseraId()},
                    {"shape", v.shape},
                    {"bytes", v.bytes},
                    {"constant", v.constant},
                    {"initial", bytes(v.initial.data(), v.initial.size())},
                    {"initialSet", bytes(v.initial_set.data(), v.initial_set.size())},
                    {"mapping", mapping},
                    {"base", v.base},
                    {"replica", v.replica},
                    {"replicas", v.replicas},
                    {"logical", v.logical}});
  }
  j["variables"] = vars;
  json libs = json::array();
  for (const auto& lib : g.libraries)
    libs.push_back(bytes(lib->object_bytes().data(), lib->object_bytes().size()));
  j["codelets"] = libs;
  json types = json::array(), builtins = json::array();
  for (const auto& vt : g.types) {
    types.push_back(vt.name);
    // A PopLibs codelet is compiled into Tessera, not saved: its describe_vertex name finds it.
    builtins.push_back(vt.library ? json(nullptr) : json(vt.builtin_base));
  }
  j["types"] = types;
  j["builtinTypes"] = builtins;
  json vertices = json::array();
  for (const auto& v : g.vertices) {
    json fields = json::array();
    for (const auto& c : v.fields) {
      json ts = json::array();
      for (const auto& x : c.tensors) ts.push_back(tensor_to_json(x));
      fields.push_back({{"connected", c.connected},
                        {"tensors", ts},
                        {"state", bytes(c.state.data(), c.state.size())},
                        {"stateCount", c.state_count},
                        {"declaredRows", c.declared_rows}});
    }
    vertices.push_back(
        {{"type", v.type},
         {"computeSet", v.compute_set},
         {"tile", v.tile},
         {"replicated", v.replicated},
         {"estimate", v.estimate ? json{v.estimate->cycles, v.estimate->flops} : json(nullptr)},
         {"fields", fields}});
  }
  j["vertices"] = vertices;
  json css = json::array();
  for (const auto& cs : g.compute_sets)
    css.push_back({{"name", cs.name}, {"vertices", cs.vertices}});
  j["computeSets"] = css;
  json streams = json::array();
  for (const auto& s : g.streams)
    streams.push_back({{"handle", s.handle()},
                       {"type", s.elementType().tesseraId()},
                       {"elements", s.numElements()},
                       {"toDevice", s.isHostToDevice()},
                       {"replicated", g.stream_replication.at(s.getId()).first},
                       {"broadcast", g.stream_replication.at(s.getId()).second ==
                                         ReplicatedStreamMode::BROADCAST}});
  j["streams"] = streams;
  json handles = json::object();
  for (const auto& [k, h] : g.host_handles)
    handles[k] = {{"tensor", tensor_to_json(h.tensor)}, {"write", h.write}};
  j["hostHandles"] = handles;
  json remotes = json::array();
  for (const auto& rb : g.remote_buffers)
    remotes.push_back({{"handle", rb.handle},
                       {"type", rb.type.tesseraId()},
                       {"elements", rb.elements},
                       {"repeats", rb.repeats},
                       {"replicated", rb.replicated}});
  j["remoteBuffers"] = remotes;
  NodeWriter w;
  json functions = json::array();
  for (const auto& f : g.functions) functions.push_back(w.add(f.tesseraNode()));
  json programs = json::array();
  for (const auto& p : state_->programs) programs.push_back(w.add(p.tesseraNode()));
  j["nodes"] = w.nodes;
  j["functions"] = functions;
  j["programs"] = programs;
  json options = json::object();
  for (const auto& [k, v] : state_->options) options[k] = v;
  j["options"] = options;
  auto cbor = json::to_cbor(j);
  out.write(reinterpret_cast<const char*>(cbor.data()), static_cast<std::streamsize>(cbor.size()));
  if (!out) throw file_load_error("serialize: writing the executable to the stream failed");
}

namespace {

// The target's figures, within what IPUModel::createTarget accepts.
std::shared_ptr<detail::TargetState> target_from_json(const json& t) {
  const auto preset = t.at("preset").get<std::string>();
  // A preset given by path is read whole: a device or a FIFO would never end.
  std::error_code ec;
  if ((preset.find('/') != std::string::npos || preset.ends_with(".json")) &&
      !std::filesystem::is_regular_file(preset, ec))
    detail::executable_damaged("its target's preset '{}' is neither a preset name nor a machine "
                               "JSON file",
                               preset);
  const unsigned ipus = whole<unsigned>(t.at("numIPUs"), "the target's numIPUs", 1u);
  auto s = detail::make_target_state(preset, ipus);
  // The figures an IPUModel may have changed, as IPUModel::createTarget applies them.
  auto spec = std::make_shared<tessera::arch::MachineSpec>(*s->spec);
  s->tiles_per_ipu =
      whole<unsigned>(t.at("tilesPerIPU"), "the target's tilesPerIPU", 1u, s->tiles_per_ipu);
  const std::uint64_t tiles = std::uint64_t{s->tiles_per_ipu} * ipus;
  if (tiles >= ~0u)  // ~0u is "no tile"
    detail::executable_damaged("its target has {} IPUs of {} tiles, more tiles than 32 bits count",
                               ipus, s->tiles_per_ipu);
  s->num_tiles = static_cast<unsigned>(tiles);
  s->bytes_per_tile = whole<unsigned>(t.at("bytesPerTile"), "the target's bytesPerTile", 1u);
  s->workers = whole<unsigned>(t.at("workers"), "the target's worker contexts", 1u,
                               detail::kMaxWorkerContexts);
  s->exchange_bytes_per_cycle =
      whole<unsigned>(t.at("exchangeBytesPerCycle"), "the target's exchangeBytesPerCycle", 1u);
  s->sync_cycles = whole<unsigned>(t.at("syncCycles"), "the target's syncCycles");
  s->host_sync_cycles = whole<unsigned>(t.at("hostSyncCycles"), "the target's hostSyncCycles");
  const json& clock = t.at("clockHz");
  s->clock_hz = clock.is_number() ? clock.get<double>() : 0.0;
  if (!(s->clock_hz > 0) || !std::isfinite(s->clock_hz))
    detail::executable_damaged("the target's clockHz is {}, not a positive frequency",
                               clock.dump());
  const int type = t.contains("type") ? whole<int>(t.at("type"), "the target's type",
                                                   static_cast<int>(TargetType::IPU),
                                                   static_cast<int>(TargetType::CPU))
                                      : static_cast<int>(TargetType::IPU_MODEL);
  s->type = static_cast<TargetType>(type);
  spec->core_count.value = s->tiles_per_ipu;
  spec->clock_hz.value = s->clock_hz;
  for (auto& m : spec->memories)
    if (m.name == "tile") m.capacity_bytes.value = s->bytes_per_tile;
  spec->params["ipu.worker_contexts"].value = s->workers;
  spec->params["ipu.exchange_bytes_per_cycle"].value = s->exchange_bytes_per_cycle;
  spec->params["ipu.sync_cycles"].value = s->sync_cycles;
  spec->params["ipu.host_sync_cycles"].value = s->host_sync_cycles;
  s->spec = spec;
  return s;
}

template <typename T>
std::vector<T> from_binary(const json& j) {
  const auto& b = j.get_binary();
  std::vector<T> out(b.size());
  if (!b.empty()) std::memcpy(out.data(), b.data(), b.size());
  return out;
}

// The vertex types in their saved order: those of the loaded codelet objects, and PopLibs'
// codelets found by their describe_vertex names.
void restore_types(GraphState& g, const json& types, const json& builtins) {
  std::map<std::string, detail::VertexType> from_libraries;
  for (auto& vt : g.types) from_libraries.emplace(vt.name, std::move(vt));
  g.types.clear();
  g.type_index.clear();
  for (std::size_t i = 0; i < types.size(); ++i) {
    auto name = types[i].get<std::string>();
    if (g.type_index.count(detail::normalise_type_name(name)) || g.type_index.count(name))
      detail::executable_damaged("vertex type {} '{}' is listed twice", i, name);
    auto lib = from_libraries.find(name);
    if (lib != from_libraries.end()) {
      g.type_index[name] = static_cast<unsigned>(g.types.size());
      g.types.push_back(std::move(lib->second));
      from_libraries.erase(lib);
      continue;
    }
    std::string base = i < builtins.size() && builtins[i].is_string()
                           ? builtins[i].get<std::string>()
                           : std::string();
    const auto* desc = base.empty() ? nullptr : detail::builtin_desc(base);
    if (desc == nullptr)
      throw parse_error(fmt::format(
          "deserialize: vertex type '{}' is in no saved codelet object{}; the executable is "
          "damaged, or link the program with tessera::poplibs",
          name, base.empty() ? "" : fmt::format(" and is not a PopLibs codelet ('{}')", base)));
    auto d = *desc;
    d.name = detail::intern_name(name);
    detail::add_builtin_vertex_type(g, name, d, desc->name);
  }
  if (!from_libraries.empty())
    throw parse_error(fmt::format(
        "deserialize: the executable's codelets define vertex type '{}', which it does not list",
        from_libraries.begin()->first));
}

// Loads one saved codelet object: written to a private file, loaded, then unlinked.
// The object is loaded with dlopen: an executable is code, and only one from a trusted source
// should be loaded (docs/targets/ipu.md). What is not an ELF object is refused before that.
void load_codelets(GraphState& g, const json& lib, std::size_t index) {
  const auto& b = lib.get_binary();
  static constexpr std::uint8_t kElf[] = {0x7f, 'E', 'L', 'F'};
  if (b.size() < sizeof kElf || !std::equal(std::begin(kElf), std::end(kElf), b.begin()))
    detail::executable_damaged("codelets entry {} ({} B) is not an ELF shared object", index,
                               b.size());
  std::string tmpl =
      (std::filesystem::temp_directory_path() / "tessera-executable-XXXXXX").string();
  std::vector<char> path(tmpl.begin(), tmpl.end());
  path.push_back('\0');
  int fd = mkstemp(path.data());
  if (fd < 0)
    throw file_load_error(fmt::format(
        "deserialize: cannot create {} for the codelets; set TMPDIR to a writable folder", tmpl));
  bool ok = ::write(fd, b.data(), b.size()) == static_cast<ssize_t>(b.size());
  ::close(fd);
  std::string gp = std::string(path.data()) + ".gp";
  std::filesystem::rename(path.data(), gp);
  if (!ok) {
    std::filesystem::remove(gp);
    throw file_load_error("deserialize: cannot write the codelets to " + gp);
  }
  try {
    detail::add_codelets(g, gp, CodeletFileType::Object, "");
  } catch (...) {
    std::filesystem::remove(gp);
    throw;
  }
  std::filesystem::remove(gp);
}

}  // namespace

Executable Executable::deserialize(std::istream& in) {
  std::vector<std::uint8_t> raw((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  json j;
  try {
    j = json::from_cbor(raw);
  } catch (const json::exception& x) {
    throw parse_error(
        fmt::format("deserialize: the stream holds no Tessera executable ({}); write one with "
                    "Executable::serialize",
                    x.what()));
  }
  if (!j.is_object() || j.value("format", std::string()) != kFormat)
    throw parse_error(fmt::format(
        "deserialize: the stream is not a Tessera Poplar executable of format {}; serialize it "
        "again with this Tessera",
        kFormat));
  try {
    auto g = std::make_shared<GraphState>();
    g->target = Target(target_from_json(j.at("target")));
    const auto& target = *g->target.tesseraState();
    const auto& rep = j.at("replication");
    g->replication_factor =
        whole<unsigned>(rep.at("factor"), "the replication factor", 1u, target.num_ipus);
    if (target.num_ipus % g->replication_factor != 0)
      detail::executable_damaged("its replication factor {} does not divide its {} IPUs",
                                 g->replication_factor, target.num_ipus);
    g->replica_tiles = whole<unsigned>(rep.at("replicaTiles"), "the tiles per replica");
    if (std::uint64_t{g->replica_tiles} * g->replication_factor != target.num_tiles)
      detail::executable_damaged("its {} replicas of {} tiles are not its {} tiles",
                                 g->replication_factor, g->replica_tiles, target.num_tiles);
    g->replicated_top_level = rep.at("topLevel").get<bool>();
    for (const auto& v : j.at("variables")) {
      const std::string who = fmt::format("variable {}", g->variables.size());
      detail::Variable var;
      var.name = v.at("name").get<std::string>();
      var.type = type_from_json(v.at("type"), who + "'s type");
      for (const auto& d : v.at("shape"))
        var.shape.push_back(whole<std::size_t>(d, who + "'s dimension"));
      var.bytes = whole<std::uint64_t>(v.at("bytes"), who + "'s size");
      var.constant = v.at("constant").get<bool>();
      var.initial = from_binary<std::byte>(v.at("initial"));
      var.initial_set = from_binary<std::uint8_t>(v.at("initialSet"));
      for (const auto& m : v.at("mapping"))
        var.mapping[whole<std::uint64_t>(m.at(0), who + "'s mapped byte")] = {
            whole<std::uint64_t>(m.at(1), who + "'s mapped end byte"),
            whole<unsigned>(m.at(2), who + "'s tile")};
      var.base = whole<std::uint32_t>(v.at("base"), who + "'s replicated variable");
      var.replica = whole<unsigned>(v.at("replica"), who + "'s replica");
      var.replicas = whole<unsigned>(v.at("replicas"), who + "'s replicas");
      var.logical = v.at("logical").get<bool>();
      g->variables.push_back(std::move(var));
    }
    std::size_t lib_index = 0;
    for (const auto& lib : j.at("codelets")) load_codelets(*g, lib, lib_index++);
    restore_types(*g, j.at("types"), j.value("builtinTypes", json::array()));
    for (const auto& v : j.at("vertices")) {
      const std::string who = fmt::format("vertex {}", g->vertices.size());
      detail::VertexInstance vi;
      vi.type = whole<unsigned>(v.at("type"), who + "'s type");
      vi.compute_set = whole<unsigned>(v.at("computeSet"), who + "'s compute set");
      vi.tile = whole<unsigned>(v.at("tile"), who + "'s tile");
      vi.replicated = v.at("replicated").get<bool>();
      if (const json& est = v.at("estimate"); !est.is_null())
        vi.estimate = VertexPerfEstimate(whole<std::uint64_t>(est.at(0), who + "'s cycles"),
                                         whole<std::uint64_t>(est.at(1), who + "'s flops"));
      for (const auto& f : v.at("fields")) {
        const std::string field = fmt::format("{} field {}", who, vi.fields.size());
        detail::Connection c;
        c.connected = f.at("connected").get<bool>();
        for (const auto& t : f.at("tensors"))
          c.tensors.push_back(tensor_from_json(t, field + " tensor"));
        c.state = from_binary<std::byte>(f.at("state"));
        c.state_count = whole<std::size_t>(f.at("stateCount"), field + "'s elements");
        c.declared_rows = whole<std::size_t>(f.at("declaredRows"), field + "'s rows");
        vi.fields.push_back(std::move(c));
      }
      g->vertices.push_back(std::move(vi));
    }
    for (const auto& cs : j.at("computeSets")) {
      const std::string who = fmt::format("compute set {}", g->compute_sets.size());
      detail::ComputeSetInfo info{cs.at("name").get<std::string>(), {}};
      for (const auto& v : cs.at("vertices"))
        info.vertices.push_back(whole<unsigned>(v, who + "'s vertex"));
      g->compute_sets.push_back(std::move(info));
    }
    for (const auto& s : j.at("streams")) {
      unsigned id = static_cast<unsigned>(g->streams.size());
      const std::string who = fmt::format("stream {}", id);
      auto handle = s.at("handle").get<std::string>();
      g->streams.emplace_back(id, handle, type_from_json(s.at("type"), who + "'s type"),
                              whole<std::size_t>(s.at("elements"), who + "'s elements"),
                              s.at("toDevice").get<bool>());
      g->stream_index[handle] = id;
      g->stream_replication.emplace_back(s.at("replicated").get<bool>(),
                                         s.at("broadcast").get<bool>()
                                             ? ReplicatedStreamMode::BROADCAST
                                             : ReplicatedStreamMode::REPLICATE);
    }
    for (const auto& [k, h] : j.at("hostHandles").items())
      g->host_handles[k] = {tensor_from_json(h.at("tensor"), "host handle '" + k + "'"),
                            h.at("write").get<bool>()};
    for (const auto& rb : j.at("remoteBuffers")) {
      const std::string who = fmt::format("remote buffer {}", g->remote_buffers.size());
      auto handle = rb.at("handle").get<std::string>();
      g->remote_index[handle] = static_cast<unsigned>(g->remote_buffers.size());
      g->remote_buffers.push_back({handle, type_from_json(rb.at("type"), who + "'s type"),
                                   whole<std::size_t>(rb.at("elements"), who + "'s elements"),
                                   whole<std::size_t>(rb.at("repeats"), who + "'s rows"),
                                   rb.at("replicated").get<bool>()});
    }
    const json& nodes = j.at("nodes");
    detail::check_executable_graph(*g, nodes.size());
    std::vector<int> function_ids, program_ids;
    for (const auto& f : j.at("functions"))
      function_ids.push_back(int(index(f, "a function", "program node", nodes.size())));
    for (const auto& p : j.at("programs"))
      program_ids.push_back(int(index(p, "a program", "program node", nodes.size())));
    NodeReader reader(nodes, *g, function_ids, true);
    for (int f : function_ids) g->functions.push_back(node_program(reader.get(f)));
    std::vector<program::Program> programs;
    for (int p : program_ids) programs.push_back(node_program(reader.get(p)));
    OptionFlags options;
    for (const auto& [k, v] : j.at("options").items()) options.set(k, v.get<std::string>());
    auto state = std::make_unique<EngineState>();
    detail::build_engine(*state, std::move(g), programs, options);
    return Executable(std::move(state));
  } catch (const json::exception& x) {
    throw parse_error(fmt::format("deserialize: the executable is damaged ({})", x.what()));
  }
}

}  // namespace poplar
