// compileGraph and Executable (spec 001 §2.2.2). An Executable is a compiled Engine state over a
// snapshot of the graph. serialize writes that snapshot (target figures, variables with their
// mapping and initial values, vertices and connections, compute sets, streams, remote buffers,
// programs, options, and the codelets' shared objects) as CBOR; deserialize rebuilds the graph,
// reloads the codelets and compiles it again, so the restored Engine is the one compiled.
// Perf estimators are host functions: their estimates are evaluated at compileGraph and saved.
#include <unistd.h>

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

Tensor tensor_from_json(const json& j) {
  if (j.is_null()) return Tensor();
  std::vector<Tensor::Region> regions;
  for (const auto& r : j.at("regions"))
    regions.push_back(
        {r.at(0).get<std::uint32_t>(), r.at(1).get<std::uint64_t>(), r.at(2).get<std::uint64_t>()});
  return Tensor(Type(j.at("type").get<std::uint8_t>()),
                j.at("shape").get<std::vector<std::size_t>>(), std::move(regions));
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

class NodeReader {
 public:
  NodeReader(const json& nodes, const GraphState& g) : nodes_(nodes), g_(g), built_(nodes.size()) {}
  std::shared_ptr<program::Node> get(int id) {
    if (id < 0) return nullptr;
    auto& slot = built_.at(static_cast<std::size_t>(id));
    if (slot) return slot;
    const json& j = nodes_.at(static_cast<std::size_t>(id));
    slot = std::make_shared<program::Node>();
    auto& n = *slot;
    n.kind = static_cast<program::NodeKind>(j.at("kind").get<int>());
    n.name = j.at("name").get<std::string>();
    for (const auto& c : j.at("children")) n.children.push_back(node_program(get(c.get<int>())));
    n.compute_set = j.at("computeSet").get<unsigned>();
    n.count = j.at("count").get<unsigned>();
    n.while_true = j.at("whileTrue").get<bool>();
    n.a = tensor_from_json(j.at("a"));
    n.b = tensor_from_json(j.at("b"));
    if (!j.at("stream").is_null()) n.stream = g_.streams.at(j.at("stream").get<unsigned>());
    for (const auto& c : j.at("cases"))
      n.cases.emplace_back(c.at(0).get<std::int32_t>(), node_program(get(c.at(1).get<int>())));
    n.default_case = get(j.at("default").get<int>());
    n.function = j.at("function").get<unsigned>();
    n.stamp_base_node = j.at("stampBase").get<std::uint64_t>();
    n.stamp_start = tensor_from_json(j.at("stampStart"));
    if (!j.at("remote").is_null()) {
      unsigned id_r = j.at("remote").get<unsigned>();
      const auto& rb = g_.remote_buffers.at(id_r);
      n.remote = RemoteBuffer(id_r, rb.handle, rb.type, rb.elements, rb.repeats);
    }
    n.offset = tensor_from_json(j.at("offset"));
    if (j.contains("cross")) {
      const json& x = j.at("cross");
      n.cross.kind = static_cast<program::CrossReplicaOp::Kind>(x.at("kind").get<int>());
      n.cross.op = x.at("op").get<unsigned>();
      n.cross.group_type = x.at("groupType").get<unsigned>();
      n.cross.group_size = x.at("groupSize").get<unsigned>();
      for (const auto& m : x.at("replicaMap"))
        n.cross.replica_map.emplace(m.at(0).get<unsigned>(), m.at(1).get<unsigned>());
    }
    return slot;
  }

 private:
  const json& nodes_;
  const GraphState& g_;
  std::vector<std::shared_ptr<program::Node>> built_;
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
  NodeReader reader(w.nodes, *snapshot);
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

std::shared_ptr<detail::TargetState> target_from_json(const json& t) {
  auto s =
      detail::make_target_state(t.at("preset").get<std::string>(), t.at("numIPUs").get<unsigned>());
  // The figures an IPUModel may have changed, as IPUModel::createTarget applies them.
  auto spec = std::make_shared<tessera::arch::MachineSpec>(*s->spec);
  s->tiles_per_ipu = t.at("tilesPerIPU").get<unsigned>();
  s->num_tiles = s->tiles_per_ipu * s->num_ipus;
  s->bytes_per_tile = t.at("bytesPerTile").get<unsigned>();
  s->workers = t.at("workers").get<unsigned>();
  s->exchange_bytes_per_cycle = t.at("exchangeBytesPerCycle").get<unsigned>();
  s->sync_cycles = t.at("syncCycles").get<unsigned>();
  s->host_sync_cycles = t.at("hostSyncCycles").get<unsigned>();
  s->clock_hz = t.at("clockHz").get<double>();
  int type = t.value("type", static_cast<int>(TargetType::IPU_MODEL));
  if (type < static_cast<int>(TargetType::IPU) || type > static_cast<int>(TargetType::CPU))
    throw parse_error(fmt::format("executable: target type {} is none of IPU (0), IPU_MODEL (1), "
                                  "CPU (2); the file is damaged",
                                  type));
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
void load_codelets(GraphState& g, const json& lib) {
  const auto& b = lib.get_binary();
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
    const auto& rep = j.at("replication");
    g->replication_factor = rep.at("factor").get<unsigned>();
    g->replica_tiles = rep.at("replicaTiles").get<unsigned>();
    g->replicated_top_level = rep.at("topLevel").get<bool>();
    for (const auto& v : j.at("variables")) {
      detail::Variable var;
      var.name = v.at("name").get<std::string>();
      var.type = Type(v.at("type").get<std::uint8_t>());
      var.shape = v.at("shape").get<std::vector<std::size_t>>();
      var.bytes = v.at("bytes").get<std::uint64_t>();
      var.constant = v.at("constant").get<bool>();
      var.initial = from_binary<std::byte>(v.at("initial"));
      var.initial_set = from_binary<std::uint8_t>(v.at("initialSet"));
      for (const auto& m : v.at("mapping"))
        var.mapping[m.at(0).get<std::uint64_t>()] = {m.at(1).get<std::uint64_t>(),
                                                     m.at(2).get<unsigned>()};
      var.base = v.at("base").get<std::uint32_t>();
      var.replica = v.at("replica").get<unsigned>();
      var.replicas = v.at("replicas").get<unsigned>();
      var.logical = v.at("logical").get<bool>();
      g->variables.push_back(std::move(var));
    }
    for (const auto& lib : j.at("codelets")) load_codelets(*g, lib);
    restore_types(*g, j.at("types"), j.value("builtinTypes", json::array()));
    for (const auto& v : j.at("vertices")) {
      detail::VertexInstance vi;
      vi.type = v.at("type").get<unsigned>();
      vi.compute_set = v.at("computeSet").get<unsigned>();
      vi.tile = v.at("tile").get<unsigned>();
      vi.replicated = v.at("replicated").get<bool>();
      if (!v.at("estimate").is_null())
        vi.estimate = VertexPerfEstimate(v.at("estimate").at(0).get<std::uint64_t>(),
                                         v.at("estimate").at(1).get<std::uint64_t>());
      for (const auto& f : v.at("fields")) {
        detail::Connection c;
        c.connected = f.at("connected").get<bool>();
        for (const auto& t : f.at("tensors")) c.tensors.push_back(tensor_from_json(t));
        c.state = from_binary<std::byte>(f.at("state"));
        c.state_count = f.at("stateCount").get<std::size_t>();
        c.declared_rows = f.at("declaredRows").get<std::size_t>();
        vi.fields.push_back(std::move(c));
      }
      g->vertices.push_back(std::move(vi));
    }
    for (const auto& cs : j.at("computeSets"))
      g->compute_sets.push_back(
          {cs.at("name").get<std::string>(), cs.at("vertices").get<std::vector<unsigned>>()});
    for (const auto& s : j.at("streams")) {
      unsigned id = static_cast<unsigned>(g->streams.size());
      auto handle = s.at("handle").get<std::string>();
      g->streams.emplace_back(id, handle, Type(s.at("type").get<std::uint8_t>()),
                              s.at("elements").get<std::size_t>(), s.at("toDevice").get<bool>());
      g->stream_index[handle] = id;
      g->stream_replication.emplace_back(s.at("replicated").get<bool>(),
                                         s.at("broadcast").get<bool>()
                                             ? ReplicatedStreamMode::BROADCAST
                                             : ReplicatedStreamMode::REPLICATE);
    }
    for (const auto& [k, h] : j.at("hostHandles").items())
      g->host_handles[k] = {tensor_from_json(h.at("tensor")), h.at("write").get<bool>()};
    for (const auto& rb : j.at("remoteBuffers")) {
      auto handle = rb.at("handle").get<std::string>();
      g->remote_index[handle] = static_cast<unsigned>(g->remote_buffers.size());
      g->remote_buffers.push_back(
          {handle, Type(rb.at("type").get<std::uint8_t>()), rb.at("elements").get<std::size_t>(),
           rb.at("repeats").get<std::size_t>(), rb.at("replicated").get<bool>()});
    }
    NodeReader reader(j.at("nodes"), *g);
    for (const auto& f : j.at("functions")) g->functions.push_back(node_program(reader.get(f)));
    std::vector<program::Program> programs;
    for (const auto& p : j.at("programs")) programs.push_back(node_program(reader.get(p)));
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
