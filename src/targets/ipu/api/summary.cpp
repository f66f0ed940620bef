// The profile summary in the layout and with the section names of spec 001 §8.2.3. The Engine's
// graph, tile memory and runs are first written as a graph profile and an execution profile
// (JSON documents, what autoReport saves and poplar_profile_summary reads, §8.2.2); the report
// is printed from those, so a saved profile prints the same report. Colour follows the
// `colours` option, overridden by CLICOLOR and CLICOLOR_FORCE as §8.2.3 says.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <ostream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "engine_state.h"

namespace poplar::detail {

namespace {

std::string num(std::uint64_t v) {
  std::string d = std::to_string(v), out;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return out;
}
std::string pct(double v) {
  return fmt::format("{:.1f}%", v * 100.0);
}
std::string mem(double bytes) {
  // Binary units, as the spec's sample (256 KiB tiles print as "256.0 kB", §8.2.3).
  if (bytes >= 1024.0 * 1024.0) return fmt::format("{:.1f} MB", bytes / (1024.0 * 1024.0));
  return fmt::format("{:.1f} kB", bytes / 1024.0);
}

bool use_colour(const OptionFlags& opts, const std::ostream& out) {
  bool colour = (&out == &std::cout && isatty(1)) || (&out == &std::cerr && isatty(2));
  if (opts.contains("colours")) colour = opts.at("colours") == "true";
  if (const char* c = std::getenv("CLICOLOR"); c && std::string(c) == "0") colour = false;
  if (const char* f = std::getenv("CLICOLOR_FORCE"); f && std::string(f) == "1") colour = true;
  return colour;
}

}  // namespace

using json = nlohmann::json;

json graph_profile(const EngineState& e) {
  const auto& t = *e.target;
  const auto& g = *e.graph;
  json j;
  j["format"] = "tessera.poplar.graph_profile/1";
  j["target"] = {{"numIPUs", t.num_ipus},
                 {"tilesPerIPU", std::min(t.tiles_per_ipu, t.num_tiles)},
                 {"numTiles", t.num_tiles},
                 {"bytesPerTile", t.bytes_per_tile},
                 {"clockHz", t.clock_hz},
                 {"arch", t.arch},
                 {"replicas", std::max(1u, g.replication_factor)}};
  std::uint64_t edges = 0;
  for (const auto& v : g.vertices)
    for (const auto& f : v.fields) edges += f.tensors.size();
  std::map<std::string, std::uint64_t> type_instances;
  for (const auto& v : g.vertices) ++type_instances[g.types[v.type].name];
  // A replicated graph's variable counts once (its per-replica copies are storage).
  auto variables = std::count_if(g.variables.begin(), g.variables.end(),
                                 [](const Variable& v) { return v.logical || v.replicas == 1; });
  j["graph"] = {{"vertices", g.vertices.size()},
                {"edges", edges},
                {"variables", variables},
                {"computeSets", g.compute_sets.size()},
                {"vertexTypes", type_instances}};
  json tiles = json::array();
  for (const auto& [tile, m] : e.memory)
    tiles.push_back({{"tile", tile},
                     {"byCategory", m.by_category},
                     {"total", m.total},
                     {"includingGaps", m.highest},
                     {"region0", m.region0},
                     {"region1", m.region1}});
  j["memory"] = {{"tiles", tiles}, {"outOfMemory", e.out_of_memory}};
  return j;
}

json execution_profile(const EngineState& e) {
  const auto& t = *e.target;
  json j;
  j["format"] = "tessera.poplar.execution_profile/1";
  j["numTiles"] = t.num_tiles;
  j["clockHz"] = t.clock_hz;
  j["runs"] = e.runs;
  j["totalCycles"] = e.bsp->total_cycles() + e.control_cycles;
  j["computeCycles"] = e.compute_cycles;
  j["exchangeCycles"] = e.exchange_cycles;
  j["hostExchangeCycles"] = e.host_cycles;
  j["remoteBufferCycles"] = e.remote_cycles;
  j["ipuLinkCycles"] = e.link_cycles;
  j["ipuLinkBytes"] = e.link_bytes;
  j["syncCycles"] = e.sync_cycles + e.control_cycles;
  json types = json::object();
  for (const auto& [k, v] : e.type_totals)
    types[k] = {{"instances", v.first}, {"cycles", v.second}};
  j["vertexTypes"] = types;
  json steps = json::array();
  for (const auto& s : e.steps) {
    if (s.executions == 0) continue;
    json by_type = json::object();
    for (const auto& [k, v] : s.by_type)
      by_type[k] = {{"instances", v.first}, {"cycles", v.second}};
    steps.push_back({{"kind", s.kind},
                     {"name", s.name},
                     {"executions", s.executions},
                     {"firstStart", s.first_start},
                     {"cycles", s.cycles},
                     {"totalCycles", s.total_cycles},
                     {"activeTiles", s.active_tiles},
                     {"tileBalance", s.tile_balance},
                     {"activeTileBalance", s.active_tile_balance},
                     {"threadBalance", s.thread_balance},
                     {"dataBytes", s.data_bytes},
                     {"dataBalance", s.data_balance},
                     {"ipuLinkBytes", s.link_bytes},
                     {"ipuLinkCycles", s.link_cycles},
                     {"byType", by_type}});
  }
  j["steps"] = steps;
  if (!e.blocks.empty()) {  // the lightweight profiler's records, per tile in cycle order
    static constexpr const char* kKinds[] = {"common", "overflow", "flush", "streamCopy"};
    json blocks = json::array();
    for (const auto& [tile, records] : e.blocks) {
      std::vector<const BlockRecord*> sorted;
      for (const auto& r : records) sorted.push_back(&r);
      // An outer block starts no later than those inside it and ends no earlier.
      std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
        return a->from != b->from ? a->from < b->from : a->to > b->to;
      });
      json list = json::array();
      for (const auto* r : sorted)
        list.push_back({{"program", r->program},
                        {"type", r->type},
                        {"kind", kKinds[static_cast<int>(r->kind)]},
                        {"from", r->from},
                        {"to", r->to}});
      blocks.push_back({{"tile", tile}, {"records", list}});
    }
    j["blocks"] = blocks;
  }
  return j;
}

namespace {

template <typename T>
T get(const json& j, const char* key, const char* doc) {
  if (!j.is_object() || !j.contains(key))
    throw parse_error(
        fmt::format("the {} has no '{}'; is it a profile an Engine wrote?", doc, key));
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& x) {
    throw parse_error(fmt::format("the {}'s '{}' is malformed: {}", doc, key, x.what()));
  }
}

const json& sub(const json& j, const char* key, const char* doc) {
  if (!j.is_object() || !j.contains(key))
    throw parse_error(
        fmt::format("the {} has no '{}'; is it a profile an Engine wrote?", doc, key));
  return j.at(key);
}

void check_format(const json& j, const char* want, const char* doc) {
  if (!j.is_object() || j.value("format", std::string()) != want)
    throw parse_error(fmt::format(
        "the {} is not one (its \"format\" should be \"{}\"); pass the graph profile with "
        "--graph-profile and the execution profile with --execution-profile",
        doc, want));
}

}  // namespace

void print_profile_summary(const json* graph, const json* exec, std::ostream& out,
                           const OptionFlags& opts) {
  static const char* kGraph = "graph profile";
  static const char* kExec = "execution profile";
  if (graph) check_format(*graph, "tessera.poplar.graph_profile/1", kGraph);
  if (exec) check_format(*exec, "tessera.poplar.execution_profile/1", kExec);
  bool colour = use_colour(opts, out);
  auto head = [&](const std::string& s) { return colour ? "\033[1;34m" + s + "\033[0m" : s; };
  auto row = [&](const std::string& k, const std::string& v, int indent = 2) {
    out << fmt::format("{:{}}{:<{}}{}\n", "", indent, k + ":", 50 - indent, v);
  };
  if (graph) {
    const json& tj = sub(*graph, "target", kGraph);
    auto num_ipus = get<std::uint64_t>(tj, "numIPUs", kGraph);
    auto num_tiles = get<std::uint64_t>(tj, "numTiles", kGraph);
    auto bytes_per_tile = get<std::uint64_t>(tj, "bytesPerTile", kGraph);
    auto clock_hz = get<double>(tj, "clockHz", kGraph);
    auto replicas = std::max<std::uint64_t>(1, get<std::uint64_t>(tj, "replicas", kGraph));
    double total_mem = double(bytes_per_tile) * double(num_tiles);
    out << head("Target:") << "\n";
    row("Number of IPUs", num(num_ipus));
    row("Tiles per IPU", num(get<std::uint64_t>(tj, "tilesPerIPU", kGraph)));
    row("Total Tiles", num(num_tiles));
    row("Memory Per-Tile", mem(double(bytes_per_tile)));
    row("Total Memory", mem(total_mem));
    row("Clock Speed (approx)",
        fmt::format("{}.{} MHz", num(static_cast<std::uint64_t>(clock_hz / 1e6)),
                    static_cast<int>(std::fmod(clock_hz / 1e5, 10.0))));
    row("Number of Replicas", num(replicas));
    row("IPUs per Replica", num(num_ipus / replicas));
    row("Tiles per Replica", num(num_tiles / replicas));
    row("Memory per Replica", mem(total_mem / double(replicas)));

    const json& gj = sub(*graph, "graph", kGraph);
    out << "\n" << head("Graph:") << "\n";
    row("Number of vertices", num(get<std::uint64_t>(gj, "vertices", kGraph)));
    row("Number of edges", num(get<std::uint64_t>(gj, "edges", kGraph)));
    row("Number of variables", num(get<std::uint64_t>(gj, "variables", kGraph)));
    row("Number of compute sets", num(get<std::uint64_t>(gj, "computeSets", kGraph)));

    // ---- memory ----
    const json& mj = sub(*graph, "memory", kGraph);
    std::map<std::string, std::uint64_t> by_cat;
    std::uint64_t incl = 0, excl = 0, r0 = 0, r1 = 0, overflow = 0;
    struct TileRow {
      unsigned tile;
      std::uint64_t total, highest;
      std::map<std::string, std::uint64_t> cats;
    };
    std::vector<TileRow> tiles;
    for (const auto& m : sub(mj, "tiles", kGraph)) {
      TileRow tr{get<unsigned>(m, "tile", kGraph), get<std::uint64_t>(m, "total", kGraph),
                 get<std::uint64_t>(m, "includingGaps", kGraph),
                 get<std::map<std::string, std::uint64_t>>(m, "byCategory", kGraph)};
      for (const auto& [k, b] : tr.cats) by_cat[k] += b;
      incl += tr.highest;
      excl += tr.total;
      r0 += get<std::uint64_t>(m, "region0", kGraph);
      r1 += get<std::uint64_t>(m, "region1", kGraph);
      if (tr.total > bytes_per_tile) overflow += tr.total - bytes_per_tile;
      tiles.push_back(std::move(tr));
    }
    auto oom = get<std::vector<std::string>>(mj, "outOfMemory", kGraph);
    out << "\n" << head("Memory Usage:") << "\n";
    out << "  Total:\n";
    row("Including Gaps", num(incl) + " B", 4);
    row("Excluding Gaps", "", 4);
    out << "    By Memory Region:\n";
    row("Non-interleaved", num(r0) + " B", 6);
    row("Interleaved", num(r1) + " B", 6);
    row("Overflowed", num(overflow) + " B", 6);
    row("Total", num(excl) + " B", 6);
    out << "    By Data Type:\n";
    out << "      Not Overlapped\n";
    for (const auto& [k, b] : by_cat) row(k, num(b) + " B", 8);
    row("Total", num(excl) + " B", 8);
    out << fmt::format("\n  Vertex Data ({}B):\n",
                       num(by_cat.count("Vertex Instances") ? by_cat["Vertex Instances"] : 0));
    out << "    By Type:\n";
    for (const auto& [type, n] :
         get<std::map<std::string, std::uint64_t>>(gj, "vertexTypes", kGraph))
      row(type, num(n) + " instances", 6);
    // Histogram of bytes per tile, 1 KB bins, with the largest tiles.
    out << "\n  By Tile (Excluding Gaps):\n";
    out << fmt::format("    {:<14}{:<30}{}\n", "Range (KB)", "Histogram (Excluding Gaps)",
                       "Count (tiles)");
    std::map<std::uint64_t, std::uint64_t> bins;
    std::uint64_t idle = num_tiles - std::min<std::uint64_t>(num_tiles, tiles.size());
    if (idle) bins[0] += idle;
    std::uint64_t max_incl = 0, max_excl = 0;
    unsigned max_incl_tile = 0, max_excl_tile = 0;
    for (const auto& tr : tiles) {
      bins[tr.total / 1024] += 1;
      if (tr.highest > max_incl) max_incl = tr.highest, max_incl_tile = tr.tile;
      if (tr.total > max_excl) max_excl = tr.total, max_excl_tile = tr.tile;
    }
    std::uint64_t most = 0;
    for (const auto& [_, c] : bins) most = std::max(most, c);
    if (!bins.empty())
      for (std::uint64_t k = bins.begin()->first; k <= bins.rbegin()->first; ++k) {
        std::uint64_t c = bins.count(k) ? bins[k] : 0;
        std::size_t stars =
            c == 0 ? 0 : std::max<std::size_t>(1, c * 20 / std::max<std::uint64_t>(most, 1));
        out << fmt::format("    {:<14}{:<30}{}\n", fmt::format("{} - {}", k, k + 1),
                           std::string(stars, '*'), num(c));
      }
    out << fmt::format("\n  Maximum (Including Gaps): {} ({:.1f} K) on tile {}\n", num(max_incl),
                       max_incl / 1024.0, max_incl_tile);
    out << fmt::format("  Maximum (Excluding Gaps): {} ({:.1f} K) on tile {}\n", num(max_excl),
                       max_excl / 1024.0, max_excl_tile);
    out << fmt::format("  {} tile(s) out of memory\n", oom.size());
    if (!oom.empty() || opts.contains("showPerTileMemory")) {
      std::vector<const TileRow*> largest;
      for (const auto& tr : tiles) largest.push_back(&tr);
      std::sort(largest.begin(), largest.end(), [](auto* a, auto* b) {
        return std::tie(a->total, a->tile) > std::tie(b->total, b->tile);
      });
      out << "  Largest tiles:\n";
      for (std::size_t i = 0; i < std::min<std::size_t>(5, largest.size()); ++i) {
        std::vector<std::string> parts;
        for (const auto& [k, b] : largest[i]->cats)
          parts.push_back(fmt::format("{} {}", k, num(b)));
        out << fmt::format("    tile {}: {} B ({})\n", largest[i]->tile, num(largest[i]->total),
                           fmt::join(parts, ", "));
      }
    }
  }
  if (!exec) return;

  // ---- execution ----
  auto num_tiles = get<std::uint64_t>(*exec, "numTiles", kExec);
  auto clock_hz = get<double>(*exec, "clockHz", kExec);
  auto total = get<std::uint64_t>(*exec, "totalCycles", kExec);
  out << (graph ? "\n" : "") << head("Execution:") << "\n\n";
  out << fmt::format("  Total cycles: {} (approx {:.1f} microseconds)\n", num(total),
                     clock_hz > 0 ? total / clock_hz * 1e6 : 0.0);
  const json& steps = sub(*exec, "steps", kExec);
  double busy = 0, cap = 0, tb_sum = 0;
  std::uint64_t tb_n = 0;
  for (const auto& s : steps) {
    if (get<std::string>(s, "kind", kExec) != "OnTileExecute") continue;
    double c = double(get<std::uint64_t>(s, "totalCycles", kExec));
    busy += get<double>(s, "threadBalance", kExec) * c;
    cap += c;
    tb_sum += get<double>(s, "tileBalance", kExec);
    ++tb_n;
  }
  std::uint64_t compute_incl = get<std::uint64_t>(*exec, "computeCycles", kExec) * num_tiles;
  row("Total compute cycles (including idle threads)", num(compute_incl));
  row("Total compute cycles (excluding idle threads)",
      num(static_cast<std::uint64_t>(double(compute_incl) * (cap > 0 ? busy / cap : 1.0))));
  row("Total IPU exchange cycles", num(get<std::uint64_t>(*exec, "exchangeCycles", kExec)));
  row("Total global exchange cycles", num(get<std::uint64_t>(*exec, "remoteBufferCycles", kExec)));
  // Traffic between IPUs (cross-replica programs); reports without any keep §8.2.3's rows.
  if (auto link = exec->value("ipuLinkCycles", std::uint64_t{0}); link > 0) {
    row("Total IPU-Link cycles", num(link));
    row("Total IPU-Link data", num(exec->value("ipuLinkBytes", std::uint64_t{0})));
  }
  row("Total host exchange cycles", num(get<std::uint64_t>(*exec, "hostExchangeCycles", kExec)));
  row("Total shared structure copy cycles", "0");
  row("Total sync cycles", num(get<std::uint64_t>(*exec, "syncCycles", kExec)));
  row("Total tile balance", pct(tb_n ? tb_sum / double(tb_n) : 0));
  row("Total thread balance", pct(cap > 0 ? busy / cap : 0));
  out << "\n  Cycles by vertex type:\n";
  const json& vt = sub(*exec, "vertexTypes", kExec);
  std::vector<std::tuple<std::uint64_t, std::string, std::uint64_t>> types;
  for (const auto& [k, v] : vt.items())
    types.emplace_back(get<std::uint64_t>(v, "cycles", kExec), k,
                       get<std::uint64_t>(v, "instances", kExec));
  std::sort(types.rbegin(), types.rend());
  for (const auto& [c, k, n] : types)
    out << fmt::format("    {:<50} ({} instances): {}\n", k, num(n), num(c));
  bool show_steps = opts.contains("showExecutionSteps") && opts.at("showExecutionSteps") == "true";
  if (!show_steps) return;
  out << "\n  Steps\n";
  std::vector<const json*> order;
  for (const auto& s : steps) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) {
    return a->at("firstStart").template get<std::uint64_t>() <
           b->at("firstStart").template get<std::uint64_t>();
  });
  for (const json* sp : order) {
    const json& s = *sp;
    auto kind = get<std::string>(s, "kind", kExec);
    auto first = get<std::uint64_t>(s, "firstStart", kExec);
    auto cycles = get<std::uint64_t>(s, "cycles", kExec);
    out << fmt::format("  {} (cycles {} - {}): {}\n", kind, num(first), num(first + cycles),
                       get<std::string>(s, "name", kExec));
    row("Cycles",
        fmt::format("{} ({} executions, {} in all)", num(cycles),
                    num(get<std::uint64_t>(s, "executions", kExec)),
                    num(get<std::uint64_t>(s, "totalCycles", kExec))),
        4);
    row("Active Tiles",
        fmt::format("{} / {}", num(get<std::uint64_t>(s, "activeTiles", kExec)), num(num_tiles)),
        4);
    if (kind == "OnTileExecute")
      row("Thread Balance", pct(get<double>(s, "threadBalance", kExec)), 4);
    row("Tile Balance", pct(get<double>(s, "tileBalance", kExec)), 4);
    row("Active Tile Balance", pct(get<double>(s, "activeTileBalance", kExec)), 4);
    if (kind != "OnTileExecute") {
      row("Total Data", num(get<std::uint64_t>(s, "dataBytes", kExec)), 4);
      row("Data Balance (mean / max data per tile)", pct(get<double>(s, "dataBalance", kExec)), 4);
      if (auto link = s.value("ipuLinkCycles", std::uint64_t{0}); link > 0) {
        row("IPU-Link Cycles", num(link), 4);
        row("IPU-Link Data", num(s.value("ipuLinkBytes", std::uint64_t{0})), 4);
      }
    } else {
      out << "    By vertex type:\n";
      for (const auto& [type, v] : sub(s, "byType", kExec).items())
        out << fmt::format("      {:<44} ({} instances): {}\n", type,
                           num(get<std::uint64_t>(v, "instances", kExec)),
                           num(get<std::uint64_t>(v, "cycles", kExec)));
    }
  }
}

void print_profile_summary(const EngineState& e, std::ostream& out, const OptionFlags& opts) {
  json g = graph_profile(e), x = execution_profile(e);
  print_profile_summary(&g, &x, out, opts);
}

}  // namespace poplar::detail
