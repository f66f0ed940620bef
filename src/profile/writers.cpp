#include "tessera/profile/writers.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tessera/core/error.h"

namespace tessera::profile {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "tessera.profile/1";

std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string human_seconds(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  if (s >= 1e-6) return fmt::format("{:.3f} us", s * 1e6);
  return fmt::format("{:.1f} ns", s * 1e9);
}

std::string human_bytes(std::uint64_t b) {
  if (b >= (std::uint64_t{1} << 30))
    return fmt::format("{:.2f} GiB", static_cast<double>(b) / (1 << 30));
  if (b >= (std::uint64_t{1} << 20))
    return fmt::format("{:.2f} MiB", static_cast<double>(b) / (1 << 20));
  if (b >= 1024) return fmt::format("{:.2f} KiB", static_cast<double>(b) / 1024);
  return fmt::format("{} B", b);
}

std::string human_hz(double hz) {
  if (hz >= 1e9) return fmt::format("{:g} GHz", hz / 1e9);
  if (hz >= 1e6) return fmt::format("{:g} MHz", hz / 1e6);
  return fmt::format("{:g} Hz", hz);
}

// Typed field access that names the field on error.
template <typename T>
T field(const json& j, const char* key, const std::string& path) {
  if (!j.is_object() || !j.contains(key))
    throw_user_error("profile JSON: missing field '{}{}'", path, key);
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& e) {
    throw_user_error("profile JSON: field '{}{}' has the wrong type ({})", path, key, e.what());
  }
}

template <typename T>
T optional_field(const json& j, const char* key, const std::string& path, T fallback) {
  if (!j.contains(key)) return fallback;
  return field<T>(j, key, path);
}

}  // namespace

std::string to_json(const Profile& p, int indent) {
  json j;
  j["format"] = kFormat;
  j["device"] = p.device;
  j["target"] = p.target;
  j["clock_hz"] = p.clock_hz;
  j["total_cycles"] = p.total_cycles;
  j["modeled_seconds"] = p.modeled_seconds();
  j["pipe_busy_cycles"] = p.pipe_busy_cycles;
  json kernels = json::array();
  for (const auto& k : p.kernels) {
    kernels.push_back({{"name", k.name},
                       {"start_cycle", k.start_cycle},
                       {"cycles", k.cycles},
                       {"cycles_per_core", k.cycles_per_core},
                       {"metrics", k.metrics},
                       {"bytes_read", k.bytes_read},
                       {"bytes_written", k.bytes_written},
                       {"engine", k.engine}});
  }
  j["kernels"] = std::move(kernels);
  j["memory_high_water"] = p.memory_high_water;
  j["bytes_moved"] = p.bytes_moved;
  json trace = json::array();
  for (const auto& t : p.trace)
    trace.push_back({{"track", t.track},
                     {"name", t.name},
                     {"start_cycle", t.start_cycle},
                     {"end_cycle", t.end_cycle}});
  j["trace"] = std::move(trace);
  return j.dump(indent);
}

Profile from_json(std::string_view text) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    throw_user_error("profile JSON does not parse: {}", e.what());
  }
  if (!j.is_object()) throw_user_error("profile JSON: the top level must be an object");
  std::string format = field<std::string>(j, "format", "");
  if (format != kFormat)
    throw_user_error("profile JSON: format is '{}', this reader knows '{}'", format, kFormat);
  Profile p;
  p.device = field<std::string>(j, "device", "");
  p.target = field<std::string>(j, "target", "");
  p.clock_hz = field<double>(j, "clock_hz", "");
  p.total_cycles = field<std::uint64_t>(j, "total_cycles", "");
  p.pipe_busy_cycles =
      optional_field<std::map<std::string, std::uint64_t>>(j, "pipe_busy_cycles", "", {});
  if (j.contains("kernels")) {
    if (!j["kernels"].is_array())
      throw_user_error("profile JSON: field 'kernels' must be an array");
    std::size_t i = 0;
    for (const auto& k : j["kernels"]) {
      std::string path = fmt::format("kernels[{}].", i++);
      KernelRecord r;
      r.name = field<std::string>(k, "name", path);
      r.start_cycle = field<std::uint64_t>(k, "start_cycle", path);
      r.cycles = field<std::uint64_t>(k, "cycles", path);
      r.cycles_per_core =
          optional_field<std::vector<std::uint64_t>>(k, "cycles_per_core", path, {});
      r.metrics = optional_field<std::map<std::string, double>>(k, "metrics", path, {});
      r.bytes_read = optional_field<std::uint64_t>(k, "bytes_read", path, 0);
      r.bytes_written = optional_field<std::uint64_t>(k, "bytes_written", path, 0);
      r.engine = optional_field<std::string>(k, "engine", path, "");
      p.kernels.push_back(std::move(r));
    }
  }
  p.memory_high_water = optional_field<std::map<std::string, std::map<std::string, std::uint64_t>>>(
      j, "memory_high_water", "", {});
  p.bytes_moved = optional_field<std::map<std::string, std::uint64_t>>(j, "bytes_moved", "", {});
  if (j.contains("trace")) {
    if (!j["trace"].is_array()) throw_user_error("profile JSON: field 'trace' must be an array");
    std::size_t i = 0;
    for (const auto& t : j["trace"]) {
      std::string path = fmt::format("trace[{}].", i++);
      Interval iv;
      iv.track = field<std::string>(t, "track", path);
      iv.name = field<std::string>(t, "name", path);
      iv.start_cycle = field<std::uint64_t>(t, "start_cycle", path);
      iv.end_cycle = field<std::uint64_t>(t, "end_cycle", path);
      if (iv.end_cycle < iv.start_cycle)
        throw_user_error("profile JSON: {}end_cycle {} is before start_cycle {}", path,
                         iv.end_cycle, iv.start_cycle);
      p.trace.push_back(std::move(iv));
    }
  }
  return p;
}

std::string text_summary(const Profile& p, std::size_t top_kernels) {
  std::string out;
  auto line = [&out](const std::string& s) { out += s + "\n"; };
  line(fmt::format("Profile of {} (target {})", p.device.empty() ? "?" : p.device,
                   p.target.empty() ? "?" : p.target));
  line(fmt::format("  total cycles    {}", grouped(p.total_cycles)));
  if (p.clock_hz > 0)
    line(fmt::format("  modeled time    {} at {}", human_seconds(p.modeled_seconds()),
                     human_hz(p.clock_hz)));
  else
    line("  modeled time    unknown (no clock)");

  if (!p.kernels.empty()) {
    struct Group {
      std::string name;
      std::uint64_t launches = 0, cycles = 0, bytes = 0;
    };
    std::map<std::string, Group> groups;
    for (const auto& k : p.kernels) {
      Group& g = groups[k.name];
      g.name = k.name;
      ++g.launches;
      g.cycles += k.cycles;
      g.bytes += k.bytes_read + k.bytes_written;
    }
    std::vector<Group> sorted;
    for (auto& [name, g] : groups) sorted.push_back(g);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Group& a, const Group& b) { return a.cycles > b.cycles; });
    std::size_t width = 6;
    for (const auto& g : sorted) width = std::max(width, g.name.size());
    line("");
    line(fmt::format("Top kernels by cycles ({} of {}):", std::min(top_kernels, sorted.size()),
                     sorted.size()));
    line(fmt::format("  {:<{}}  {:>8}  {:>14}  {:>7}  {:>12}", "kernel", width, "launches",
                     "cycles", "%", "bytes"));
    for (std::size_t i = 0; i < sorted.size() && i < top_kernels; ++i) {
      const Group& g = sorted[i];
      double pct = p.total_cycles
                       ? 100.0 * static_cast<double>(g.cycles) / static_cast<double>(p.total_cycles)
                       : 0;
      line(fmt::format("  {:<{}}  {:>8}  {:>14}  {:>6.1f}%  {:>12}", g.name, width, g.launches,
                       grouped(g.cycles), pct, human_bytes(g.bytes)));
    }
  }
  if (!p.pipe_busy_cycles.empty()) {
    std::size_t width = 4;
    for (const auto& [pipe, c] : p.pipe_busy_cycles) width = std::max(width, pipe.size());
    line("");
    line("Pipe busy (share of total cycles):");
    for (const auto& [pipe, c] : p.pipe_busy_cycles) {
      double pct =
          p.total_cycles ? 100.0 * static_cast<double>(c) / static_cast<double>(p.total_cycles) : 0;
      line(fmt::format("  {:<{}}  {:>14} cycles  {:>6.1f}%", pipe, width, grouped(c), pct));
    }
  }
  if (!p.memory_high_water.empty()) {
    line("");
    line("Memory high-water:");
    for (const auto& [where, cats] : p.memory_high_water)
      for (const auto& [cat, bytes] : cats)
        line(fmt::format("  {:<12} {:<16} {:>14} B  ({})", where, cat, grouped(bytes),
                         human_bytes(bytes)));
  }
  if (!p.bytes_moved.empty()) {
    line("");
    line("Bytes moved:");
    for (const auto& [level, bytes] : p.bytes_moved)
      line(fmt::format("  {:<28} {:>16} B  ({})", level, grouped(bytes), human_bytes(bytes)));
  }
  return out;
}

std::string chrome_trace(const Profile& p) {
  if (!(p.clock_hz > 0))
    throw_user_error(
        "Chrome trace of '{}': the profile has no clock (clock_hz = {}), so cycles cannot "
        "be converted to time",
        p.device, p.clock_hz);
  double us_per_cycle = 1e6 / p.clock_hz;
  // Tracks are numbered deterministically: "kernels" first, then the trace's tracks by name.
  std::map<std::string, int> tids;
  for (const auto& iv : p.trace) tids.emplace(iv.track, 0);
  int next = 2;
  for (auto& [track, tid] : tids) tid = next++;

  json events = json::array();
  events.push_back({{"ph", "M"},
                    {"pid", 1},
                    {"tid", 0},
                    {"name", "process_name"},
                    {"args", {{"name", fmt::format("{} ({})", p.device, p.target)}}}});
  events.push_back({{"ph", "M"},
                    {"pid", 1},
                    {"tid", 1},
                    {"name", "thread_name"},
                    {"args", {{"name", "kernels"}}}});
  events.push_back({{"ph", "M"},
                    {"pid", 1},
                    {"tid", 1},
                    {"name", "thread_sort_index"},
                    {"args", {{"sort_index", 0}}}});
  for (const auto& [track, tid] : tids) {
    events.push_back({{"ph", "M"},
                      {"pid", 1},
                      {"tid", tid},
                      {"name", "thread_name"},
                      {"args", {{"name", track}}}});
    events.push_back({{"ph", "M"},
                      {"pid", 1},
                      {"tid", tid},
                      {"name", "thread_sort_index"},
                      {"args", {{"sort_index", tid}}}});
  }
  for (const auto& k : p.kernels) {
    json args = {{"cycles", k.cycles},
                 {"start_cycle", k.start_cycle},
                 {"bytes_read", k.bytes_read},
                 {"bytes_written", k.bytes_written}};
    for (const auto& [metric, value] : k.metrics) args[metric] = value;
    events.push_back({{"ph", "X"},
                      {"pid", 1},
                      {"tid", 1},
                      {"cat", "kernel"},
                      {"name", k.name},
                      {"ts", static_cast<double>(k.start_cycle) * us_per_cycle},
                      {"dur", static_cast<double>(k.cycles) * us_per_cycle},
                      {"args", args}});
  }
  for (const auto& iv : p.trace) {
    events.push_back({{"ph", "X"},
                      {"pid", 1},
                      {"tid", tids[iv.track]},
                      {"cat", "pipe"},
                      {"name", iv.name},
                      {"ts", static_cast<double>(iv.start_cycle) * us_per_cycle},
                      {"dur", static_cast<double>(iv.end_cycle - iv.start_cycle) * us_per_cycle},
                      {"args", {{"start_cycle", iv.start_cycle}, {"end_cycle", iv.end_cycle}}}});
  }
  json doc = {{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ns"},
              {"otherData",
               {{"device", p.device},
                {"target", p.target},
                {"clock_hz", p.clock_hz},
                {"total_cycles", p.total_cycles}}}};
  return doc.dump();
}

std::string escape_html(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

double percent(std::uint64_t part, std::uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

std::string html_report(const Profile& p, std::size_t top_kernels) {
  std::string h;
  auto add = [&h](const std::string& s) {
    h += s;
    h += '\n';
  };
  std::string title = fmt::format("Tessera profile: {} ({})", p.device, p.target);
  add("<!DOCTYPE html>");
  add("<html><head><meta charset=\"utf-8\"><title>" + escape_html(title) + "</title>");
  add("<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:"
      "1.5em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child,th:first-"
      "child{text-align:left}.bar{background:#4a7ebb;height:12px}</style></head><body>");
  add("<h1>" + escape_html(title) + "</h1>");
  add("<table><tr><th>total cycles</th><td>" + grouped(p.total_cycles) + "</td></tr>");
  add("<tr><th>modeled time</th><td>" +
      (p.clock_hz > 0 ? human_seconds(p.modeled_seconds()) + " at " + human_hz(p.clock_hz)
                      : std::string("unknown (no clock)")) +
      "</td></tr></table>");

  if (!p.kernels.empty()) {
    std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> groups;  // launches, cycles
    for (const auto& k : p.kernels) {
      ++groups[k.name].first;
      groups[k.name].second += k.cycles;
    }
    std::vector<std::pair<std::string, std::pair<std::uint64_t, std::uint64_t>>> sorted(
        groups.begin(), groups.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return a.second.second > b.second.second;
    });
    add("<h2>Top kernels by cycles</h2><table><tr><th>kernel</th><th>launches</th><th>cycles</th>"
        "<th>% of total</th></tr>");
    for (std::size_t i = 0; i < sorted.size() && i < top_kernels; ++i)
      add(fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}%</td></tr>",
                      escape_html(sorted[i].first), sorted[i].second.first,
                      grouped(sorted[i].second.second),
                      percent(sorted[i].second.second, p.total_cycles)));
    add("</table>");
  }
  if (!p.pipe_busy_cycles.empty()) {
    add("<h2>Pipe busy</h2><table><tr><th>pipe</th><th>busy cycles</th><th>%</th><th></th></tr>");
    for (const auto& [pipe, cycles] : p.pipe_busy_cycles) {
      double pct = percent(cycles, p.total_cycles);
      add(
          fmt::format("<tr><td>{}</td><td>{}</td><td>{:.1f}%</td><td style=\"width:200px\"><div "
                      "class=\"bar\" style=\"width:{:.0f}px\"></div></td></tr>",
                      escape_html(pipe), grouped(cycles), pct, std::min(pct, 100.0) * 2));
    }
    add("</table>");
  }
  if (!p.memory_high_water.empty()) {
    add("<h2>Memory high-water</h2><table><tr><th>where</th><th>category</th><th>bytes</th></tr>");
    for (const auto& [where, cats] : p.memory_high_water)
      for (const auto& [cat, bytes] : cats)
        add(fmt::format("<tr><td>{}</td><td>{}</td><td>{} ({})</td></tr>", escape_html(where),
                        escape_html(cat), grouped(bytes), human_bytes(bytes)));
    add("</table>");
  }
  if (!p.bytes_moved.empty()) {
    add("<h2>Bytes moved</h2><table><tr><th>level</th><th>bytes</th></tr>");
    for (const auto& [level, bytes] : p.bytes_moved)
      add(fmt::format("<tr><td>{}</td><td>{} ({})</td></tr>", escape_html(level), grouped(bytes),
                      human_bytes(bytes)));
    add("</table>");
  }
  if (!p.trace.empty()) {
    // One row per track, intervals scaled to 1000 px over the run.
    std::map<std::string, int> rows;
    std::uint64_t end = p.total_cycles;
    for (const auto& iv : p.trace) {
      rows.emplace(iv.track, 0);
      end = std::max(end, iv.end_cycle);
    }
    int row = 0;
    for (auto& [track, r] : rows) r = row++;
    const double width = 1000, label = 160;
    double scale = end ? width / static_cast<double>(end) : 0;
    add("<h2>Timeline</h2>");
    add(
        fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
                    "font-size=\"11\">",
                    label + width + 10, row * 18 + 10));
    for (const auto& [track, r] : rows)
      add(fmt::format("<text x=\"0\" y=\"{}\">{}</text>", r * 18 + 14, escape_html(track)));
    for (const auto& iv : p.trace)
      add(
          fmt::format("<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"14\" "
                      "fill=\"#4a7ebb\"><title>{} [{}, {})</title></rect>",
                      label + static_cast<double>(iv.start_cycle) * scale, rows[iv.track] * 18 + 3,
                      std::max(0.5, static_cast<double>(iv.end_cycle - iv.start_cycle) * scale),
                      escape_html(iv.name), iv.start_cycle, iv.end_cycle));
    add("</svg>");
  }
  add("</body></html>");
  return h;
}

Format format_from_name(std::string_view name) {
  if (name == "json") return Format::json;
  if (name == "text" || name == "summary") return Format::text;
  if (name == "chrome" || name == "trace") return Format::chrome;
  if (name == "html") return Format::html;
  throw_user_error("unknown profile format '{}'; use json, text, chrome or html", name);
}

std::string render(const Profile& profile, Format format) {
  switch (format) {
    case Format::json:
      return to_json(profile);
    case Format::text:
      return text_summary(profile);
    case Format::chrome:
      return chrome_trace(profile);
    case Format::html:
      return html_report(profile);
  }
  throw_internal_error("unhandled profile format {}", static_cast<int>(format));
}

void write_text_file(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  if (!out)
    throw_user_error("cannot open '{}' for writing; check the directory exists and is writable",
                     path);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw_user_error("writing '{}' failed (disk full?)", path);
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_user_error("cannot open '{}' for reading; check the path", path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace tessera::profile
