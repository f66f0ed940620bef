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
                       {"bytes_written", k.bytes_written}});
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

Format format_from_name(std::string_view name) {
  if (name == "json") return Format::json;
  if (name == "text" || name == "summary") return Format::text;
  if (name == "chrome" || name == "trace") return Format::chrome;
  throw_user_error("unknown profile format '{}'; use json, text or chrome", name);
}

std::string render(const Profile& profile, Format format) {
  switch (format) {
    case Format::json:
      return to_json(profile);
    case Format::text:
      return text_summary(profile);
    case Format::chrome:
      return chrome_trace(profile);
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
