// The profile summary in the layout and with the section names of spec 001 §8.2.3, filled from
// the Engine's graph, tile memory and runs. Colour follows the `colours` option, overridden by
// CLICOLOR and CLICOLOR_FORCE as §8.2.3 says.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <ostream>

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

void print_profile_summary(const EngineState& e, std::ostream& out, const OptionFlags& opts) {
  bool colour = use_colour(opts, out);
  auto head = [&](const std::string& s) { return colour ? "\033[1;34m" + s + "\033[0m" : s; };
  auto row = [&](const std::string& k, const std::string& v, int indent = 2) {
    out << fmt::format("{:{}}{:<{}}{}\n", "", indent, k + ":", 50 - indent, v);
  };
  const auto& t = *e.target;
  const auto& g = *e.graph;
  double total_mem = double(t.bytes_per_tile) * t.num_tiles;

  out << head("Target:") << "\n";
  row("Number of IPUs", num(t.num_ipus));
  row("Tiles per IPU", num(std::min(t.tiles_per_ipu, t.num_tiles)));
  row("Total Tiles", num(t.num_tiles));
  row("Memory Per-Tile", mem(t.bytes_per_tile));
  row("Total Memory", mem(total_mem));
  row("Clock Speed (approx)",
      fmt::format("{}.{} MHz", num(static_cast<std::uint64_t>(t.clock_hz / 1e6)),
                  static_cast<int>(std::fmod(t.clock_hz / 1e5, 10.0))));
  unsigned replicas = std::max(1u, g.replication_factor);
  row("Number of Replicas", num(replicas));
  row("IPUs per Replica", num(t.num_ipus / replicas));
  row("Tiles per Replica", num(t.num_tiles / replicas));
  row("Memory per Replica", mem(total_mem / replicas));
  out << "\n" << head("Graph:") << "\n";
  std::uint64_t edges = 0;
  for (const auto& v : g.vertices)
    for (const auto& f : v.fields) edges += f.tensors.size();
  row("Number of vertices", num(g.vertices.size()));
  row("Number of edges", num(edges));
  // A replicated graph's variable counts once (its per-replica copies are storage).
  row("Number of variables",
      num(std::count_if(g.variables.begin(), g.variables.end(),
                        [](const Variable& v) { return v.logical || v.replicas == 1; })));
  row("Number of compute sets", num(g.compute_sets.size()));

  // ---- memory ----
  std::map<std::string, std::uint64_t> by_cat;
  std::uint64_t incl = 0, excl = 0, r0 = 0, r1 = 0, overflow = 0;
  for (const auto& [tile, m] : e.memory) {
    for (const auto& [k, b] : m.by_category) by_cat[k] += b;
    incl += m.highest;
    excl += m.total;
    r0 += m.region0;
    r1 += m.region1;
    if (m.total > t.bytes_per_tile) overflow += m.total - t.bytes_per_tile;
  }
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
  std::map<std::string, std::uint64_t> type_instances;
  for (const auto& v : g.vertices) ++type_instances[g.types[v.type].name];
  for (const auto& [type, n] : type_instances) row(type, num(n) + " instances", 6);
  // Histogram of bytes per tile, 1 KB bins, with the largest tiles.
  out << "\n  By Tile (Excluding Gaps):\n";
  out << fmt::format("    {:<14}{:<30}{}\n", "Range (KB)", "Histogram (Excluding Gaps)",
                     "Count (tiles)");
  std::map<std::uint64_t, std::uint64_t> bins;
  std::uint64_t idle = t.num_tiles - std::min<std::uint64_t>(t.num_tiles, e.memory.size());
  if (idle) bins[0] += idle;
  std::uint64_t max_incl = 0, max_excl = 0;
  unsigned max_incl_tile = 0, max_excl_tile = 0;
  for (const auto& [tile, m] : e.memory) {
    bins[m.total / 1024] += 1;
    if (m.highest > max_incl) max_incl = m.highest, max_incl_tile = tile;
    if (m.total > max_excl) max_excl = m.total, max_excl_tile = tile;
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
  out << fmt::format("  {} tile(s) out of memory\n", e.out_of_memory.size());
  if (!e.out_of_memory.empty() || opts.contains("showPerTileMemory")) {
    std::vector<std::pair<std::uint64_t, unsigned>> largest;
    for (const auto& [tile, m] : e.memory) largest.emplace_back(m.total, tile);
    std::sort(largest.rbegin(), largest.rend());
    out << "  Largest tiles:\n";
    for (std::size_t i = 0; i < std::min<std::size_t>(5, largest.size()); ++i) {
      const auto& m = e.memory.at(largest[i].second);
      std::vector<std::string> parts;
      for (const auto& [k, b] : m.by_category) parts.push_back(fmt::format("{} {}", k, num(b)));
      out << fmt::format("    tile {}: {} B ({})\n", largest[i].second, num(largest[i].first),
                         fmt::join(parts, ", "));
    }
  }

  // ---- execution ----
  std::uint64_t total = e.bsp->total_cycles() + e.control_cycles;
  out << "\n" << head("Execution:") << "\n\n";
  out << fmt::format("  Total cycles: {} (approx {:.1f} microseconds)\n", num(total),
                     t.clock_hz > 0 ? total / t.clock_hz * 1e6 : 0.0);
  double busy = 0, cap = 0, tb_sum = 0;
  std::uint64_t tb_n = 0;
  for (const auto& s : e.steps) {
    if (s.kind != "OnTileExecute" || s.executions == 0) continue;
    busy += s.thread_balance * double(s.total_cycles);
    cap += double(s.total_cycles);
    tb_sum += s.tile_balance;
    ++tb_n;
  }
  std::uint64_t compute_incl = e.compute_cycles * t.num_tiles;
  row("Total compute cycles (including idle threads)", num(compute_incl));
  row("Total compute cycles (excluding idle threads)",
      num(static_cast<std::uint64_t>(compute_incl * (cap > 0 ? busy / cap : 1.0))));
  row("Total IPU exchange cycles", num(e.exchange_cycles));
  row("Total global exchange cycles", "0");
  row("Total host exchange cycles", num(e.host_cycles));
  row("Total shared structure copy cycles", "0");
  row("Total sync cycles", num(e.sync_cycles + e.control_cycles));
  row("Total tile balance", pct(tb_n ? tb_sum / tb_n : 0));
  row("Total thread balance", pct(cap > 0 ? busy / cap : 0));
  out << "\n  Cycles by vertex type:\n";
  std::vector<std::pair<std::uint64_t, std::string>> types;
  for (const auto& [k, v] : e.type_totals) types.emplace_back(v.second, k);
  std::sort(types.rbegin(), types.rend());
  for (const auto& [c, k] : types)
    out << fmt::format("    {:<50} ({} instances): {}\n", k, num(e.type_totals.at(k).first),
                       num(c));
  bool steps = opts.contains("showExecutionSteps") && opts.at("showExecutionSteps") == "true";
  if (steps) {
    out << "\n  Steps\n";
    std::vector<const StepStats*> order;
    for (const auto& s : e.steps)
      if (s.executions) order.push_back(&s);
    std::sort(order.begin(), order.end(),
              [](auto* a, auto* b) { return a->first_start < b->first_start; });
    for (const auto* s : order) {
      out << fmt::format("  {} (cycles {} - {}): {}\n", s->kind, num(s->first_start),
                         num(s->first_start + s->cycles), s->name);
      row("Cycles",
          fmt::format("{} ({} executions, {} in all)", num(s->cycles), num(s->executions),
                      num(s->total_cycles)),
          4);
      row("Active Tiles", fmt::format("{} / {}", num(s->active_tiles), num(t.num_tiles)), 4);
      if (s->kind == "OnTileExecute") row("Thread Balance", pct(s->thread_balance), 4);
      row("Tile Balance", pct(s->tile_balance), 4);
      row("Active Tile Balance", pct(s->active_tile_balance), 4);
      if (s->kind != "OnTileExecute") {
        row("Total Data", num(s->data_bytes), 4);
        row("Data Balance (mean / max data per tile)", pct(s->data_balance), 4);
      } else {
        out << "    By vertex type:\n";
        for (const auto& [type, ic] : s->by_type)
          out << fmt::format("      {:<44} ({} instances): {}\n", type, num(ic.first),
                             num(ic.second));
      }
    }
  }
}

}  // namespace poplar::detail
