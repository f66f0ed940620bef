// Loader and validator of machine descriptions (docs/arch.md). Validation walks the whole
// document and collects every problem, so a preset author fixes them in one pass.
#include "tessera/arch/machine_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tessera/core/error.h"

namespace tessera::arch {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::string_view kSchemaId = "tessera.machine/1";
// Preset families: the five of the spec (shared/spec/), then the targets of this build
// (cmake/targets.cmake) that are not among them.
const std::vector<std::string>& known_targets() {
  static const std::vector<std::string> targets = [] {
    std::vector<std::string> t{"tpc", "ipu", "bm", "aicore", "epu"};
    const std::string built = TESSERA_BUILT_TARGETS;
    for (std::size_t start = 0; start < built.size();) {
      const std::size_t end = std::min(built.find(',', start), built.size());
      const std::string name = built.substr(start, end - start);
      if (!name.empty() && std::find(t.begin(), t.end(), name) == t.end()) t.push_back(name);
      start = end + 1;
    }
    return t;
  }();
  return targets;
}
constexpr std::string_view kScopes[] = {"core", "device"};

std::string kind_of(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::string:
      return "a string";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "a number";
    default:
      return "an unsupported value";
  }
}

enum class Range { positive, non_negative };

// Besides its sign and kind, every figure has a sane range (data/schema/machine.schema.json):
// a preset outside it is a typo or an attack, and would make the engine hang (a million cores),
// divide by zero or produce cycle counts beyond 64 bits.
struct FigureRule {
  Range range = Range::positive;
  bool integer = false;
  bool power_of_two = false;
  double min = 0;
  double max = 0x1p53;
};

FigureRule within(FigureRule rule, double min, double max) {
  rule.min = min;
  rule.max = max;
  return rule;
}

// Walks one document, collecting problems with their JSON paths.
class Validator {
 public:
  std::vector<std::string> problems;

  void add(const std::string& path, const std::string& what) {
    problems.push_back(fmt::format("{}: {}", path, what));
  }

  static std::string join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
  }

  void check_keys(const json& object, const std::string& path,
                  std::initializer_list<std::string_view> allowed) {
    for (const auto& [key, value] : object.items()) {
      (void)value;
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string list;
        for (std::string_view a : allowed) list += fmt::format("{}{}", list.empty() ? "" : ", ", a);
        add(join(path, key), fmt::format("unknown field; the allowed fields here are: {}", list));
      }
    }
  }

  // A required or optional string field.
  std::string text(const json& object, const std::string& path, std::string_view key, bool required,
                   bool non_empty = true) {
    const std::string here = join(path, key);
    auto it = object.find(std::string(key));
    if (it == object.end()) {
      if (required) add(here, "missing; expected a string");
      return {};
    }
    if (!it->is_string()) {
      add(here, fmt::format("expected a string, got {}", kind_of(*it)));
      return {};
    }
    std::string value = it->get<std::string>();
    if (non_empty && value.empty()) add(here, "must not be empty");
    return value;
  }

  // A figure {"value": number, "source": "..."}; `fallback` makes it optional.
  Figure figure(const json& object, const std::string& path, std::string_view key, FigureRule rule,
                std::optional<double> fallback = std::nullopt) {
    const std::string here = join(path, key);
    auto it = object.find(std::string(key));
    if (it == object.end()) {
      if (fallback) return Figure{*fallback, "default"};
      add(here,
          R"(missing; expected a figure {"value": <number>, "source": "<where it comes from>"})");
      return {};
    }
    return figure_value(*it, here, rule);
  }

  Figure figure_value(const json& j, const std::string& here, FigureRule rule) {
    Figure out;
    if (!j.is_object()) {
      add(here, fmt::format(R"(expected a figure object {{"value": <number>, "source": "..."}}, )"
                            "got {} ({}); every figure needs a source",
                            kind_of(j), j.dump()));
      return out;
    }
    check_keys(j, here, {"value", "source"});
    auto value = j.find("value");
    if (value == j.end()) {
      add(here + ".value", "missing; expected a number");
    } else if (!value->is_number()) {
      add(here + ".value", fmt::format("expected a number, got {}", kind_of(*value)));
    } else {
      out.value = value->get<double>();
      check_range(here + ".value", out.value, rule);
    }
    auto source = j.find("source");
    if (source == j.end()) {
      add(here + ".source",
          "missing; every figure needs a source (a spec section such as "
          "\"spec 000 §2.3.3\", a public figure with where it was published, "
          "or \"estimate\")");
    } else if (!source->is_string()) {
      add(here + ".source", fmt::format("expected a string, got {}", kind_of(*source)));
    } else {
      out.source = source->get<std::string>();
      if (out.source.empty())
        add(here + ".source", "must not be empty; every figure needs a source");
    }
    return out;
  }

  void check_range(const std::string& here, double v, FigureRule rule) {
    if (!std::isfinite(v)) {
      add(here, "must be a finite number");
      return;
    }
    // Whole-number figures must convert to int64 exactly; every figure must fit Figure::as_int.
    const double limit = rule.integer ? 0x1p53 : 0x1p63;
    if (std::fabs(v) >= limit) {
      add(here, fmt::format("{} is too large; the allowed range is {} to {}", v, rule.min,
                            std::min(rule.max, limit)));
      return;
    }
    if (rule.range == Range::positive && v <= 0) {
      add(here, fmt::format("must be positive, got {}", v));
      return;
    }
    if (rule.range == Range::non_negative && v < 0) {
      add(here, fmt::format("must not be negative, got {}", v));
      return;
    }
    if (rule.integer && v != std::floor(v))
      add(here, fmt::format("must be a whole number, got {}", v));
    if (rule.power_of_two && v > 0 && v == std::floor(v) && v < 0x1p63) {
      const auto u = static_cast<std::uint64_t>(v);
      if ((u & (u - 1)) != 0) add(here, fmt::format("must be a power of two, got {}", v));
    }
    if (v < rule.min || v > rule.max)
      add(here,
          fmt::format("{} is out of range; the allowed range is {} to {}", v, rule.min, rule.max));
  }

  // An array field; returns nullptr (after noting the problem) when absent or not an array.
  const json* array(const json& object, const std::string& path, std::string_view key) {
    auto it = object.find(std::string(key));
    if (it == object.end()) {
      add(join(path, key), "missing; expected an array");
      return nullptr;
    }
    if (!it->is_array()) {
      add(join(path, key), fmt::format("expected an array, got {}", kind_of(*it)));
      return nullptr;
    }
    if (it->empty()) add(join(path, key), "must list at least one entry");
    return &*it;
  }

  const json* object(const json& parent, const std::string& path, std::string_view key) {
    auto it = parent.find(std::string(key));
    if (it == parent.end()) {
      add(join(path, key), "missing; expected an object");
      return nullptr;
    }
    if (!it->is_object()) {
      add(join(path, key), fmt::format("expected an object, got {}", kind_of(*it)));
      return nullptr;
    }
    return &*it;
  }
};

constexpr FigureRule kPositive{Range::positive, false, false};
constexpr FigureRule kPositiveInt{Range::positive, true, false};
constexpr FigureRule kNonNegative{Range::non_negative, false, false};
constexpr FigureRule kNonNegativeInt{Range::non_negative, true, false};
constexpr FigureRule kPowerOfTwo{Range::positive, true, true};

// The sane ranges, mirrored in data/schema/machine.schema.json.
const FigureRule kClock = within(kPositive, 1e6, 1e11);  // 1 MHz - 100 GHz
const FigureRule kCores = within(kPositiveInt, 1, 65536);
const FigureRule kLatencyCycles = within(kNonNegative, 0, 1e6);
const FigureRule kCoreCapacity = within(kPositiveInt, 1, 0x1p30);    // 1 GiB per core
const FigureRule kDeviceCapacity = within(kPositiveInt, 1, 0x1p48);  // 256 TiB
const FigureRule kBaseAddress = within(kNonNegativeInt, 0, 0x1p48);
const FigureRule kAlignment = within(kPowerOfTwo, 1, 65536);
const FigureRule kBanks = within(kPositiveInt, 1, 1024);
const FigureRule kBankWidth = within(kNonNegativeInt, 0, 65536);
const FigureRule kBytesPerCycle = within(kPositive, 1.0 / 1024, 0x1p20);
const FigureRule kLinkBandwidth = within(kPositive, 1e3, 1e13);  // 1 kB/s - 10 TB/s
const FigureRule kLinkLatency = within(kNonNegative, 0, 1);      // seconds
const FigureRule kParam = within(kNonNegative, 0, 0x1p40);
// A rate ("..._per_cycle") divides work: it may not be 0 or vanishingly small.
const FigureRule kParamRate = within(kPositive, 1.0 / 1024, 0x1p40);

bool valid_param_name(std::string_view name) {
  // Lower-case identifiers joined by dots, at least two parts: "tpc.vector_bytes".
  bool dotted = false;
  bool part_start = true;
  for (char c : name) {
    if (c == '.') {
      if (part_start) return false;
      dotted = true;
      part_start = true;
      continue;
    }
    const bool lower = (c >= 'a' && c <= 'z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!lower && !(digit && !part_start)) return false;
    part_start = false;
  }
  return dotted && !part_start;
}

bool valid_machine_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
      return false;
  return true;
}

// Finds keys repeated inside one JSON object (the parser would silently keep the last one).
class DuplicateKeyFinder {
 public:
  std::vector<std::string> duplicates;

  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        push(false);
        break;
      case json::parse_event_t::array_start:
        push(true);
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!frames_.empty()) frames_.pop_back();
        break;
      case json::parse_event_t::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second)
          duplicates.push_back(
              fmt::format("{}: duplicate key; each key may appear once in an "
                          "object",
                          path_to(f.key)));
        break;
      }
      case json::parse_event_t::value:
        if (!frames_.empty() && frames_.back().is_array) ++frames_.back().count;
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool is_array = false;
    std::string label;
    std::size_t count = 0;
    std::string key;
    std::set<std::string> keys;
  };
  std::vector<Frame> frames_;

  void push(bool is_array) {
    std::string label;
    if (!frames_.empty()) {
      Frame& parent = frames_.back();
      if (parent.is_array)
        label = fmt::format("[{}]", parent.count++);
      else
        label = parent.key;
    }
    frames_.push_back(Frame{is_array, label, 0, {}, {}});
  }

  std::string path_to(const std::string& key) const {
    std::string out;
    for (const Frame& f : frames_) {
      if (f.label.empty()) continue;
      if (f.label.front() == '[' || out.empty())
        out += f.label;
      else
        out += "." + f.label;
    }
    return out.empty() ? key : out + "." + key;
  }
};

std::pair<std::size_t, std::size_t> line_and_column(std::string_view text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

std::string read_file(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw_user_error(
        "machine file '{}' does not exist; pass the path of a machine JSON file or "
        "a preset name (see `tessera arch list`)",
        path.string());
  if (fs::is_directory(path, ec))
    throw_user_error("machine file '{}' is a directory; pass the path of a machine JSON file",
                     path.string());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_user_error("cannot open machine file '{}' for reading", path.string());
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string list_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "(none)" : out;
}

}  // namespace

const Figure& MachineSpec::param(std::string_view key) const {
  auto it = params.find(std::string(key));
  if (it == params.end()) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : params) keys.push_back(k);
    throw_user_error(
        "machine '{}' ({}) has no parameter '{}'; add it to \"params\" in the "
        "machine file (it has: {})",
        name, origin, key, list_names(keys));
  }
  return it->second;
}

double MachineSpec::param_or(std::string_view key, double fallback) const {
  auto it = params.find(std::string(key));
  return it == params.end() ? fallback : it->second.value;
}

const MemorySpec* MachineSpec::find_memory(std::string_view memory_name) const {
  for (const auto& m : memories)
    if (m.name == memory_name) return &m;
  return nullptr;
}

const MemorySpec& MachineSpec::memory(std::string_view memory_name) const {
  if (const MemorySpec* m = find_memory(memory_name)) return *m;
  std::vector<std::string> names;
  for (const auto& m : memories) names.push_back(m.name);
  throw_user_error("machine '{}' ({}) has no memory '{}'; its memories are: {}", name, origin,
                   memory_name, list_names(names));
}

const PipeSpec& MachineSpec::pipe(std::string_view pipe_name) const {
  for (const auto& p : pipes)
    if (p.name == pipe_name) return p;
  std::vector<std::string> names;
  for (const auto& p : pipes) names.push_back(p.name);
  throw_user_error("machine '{}' ({}) has no pipe '{}'; its pipes are: {}", name, origin, pipe_name,
                   list_names(names));
}

MachineSpec parse_machine_spec(std::string_view json_text, std::string_view origin) {
  DuplicateKeyFinder duplicates;
  json doc;
  try {
    doc = json::parse(json_text.begin(), json_text.end(), std::ref(duplicates));
  } catch (const json::parse_error& e) {
    const auto [line, column] = line_and_column(json_text, e.byte);
    std::string what = e.what();
    // nlohmann prefixes "[json.exception.parse_error.101] parse error at line L, column C: ".
    if (auto colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);
    throw_user_error("{}:{}:{}: malformed JSON: {}", origin, line, column, what);
  } catch (const json::exception& e) {
    // A number beyond double's range (1e916) arrives as out_of_range: still the file's fault.
    std::string what = e.what();
    if (auto bracket = what.find("] "); bracket != std::string::npos)
      what = what.substr(bracket + 2);
    throw_user_error("{}: malformed JSON: {}; numbers must be finite doubles", origin, what);
  }

  Validator v;
  for (const auto& d : duplicates.duplicates) v.problems.push_back(d);
  MachineSpec spec;
  spec.origin = std::string(origin);

  if (!doc.is_object()) {
    v.add("(top level)", fmt::format("expected an object, got {}", kind_of(doc)));
  } else {
    v.check_keys(doc, "",
                 {"schema", "name", "description", "target", "clock_hz", "core_count", "core_name",
                  "pipes", "memories", "global_memory", "global_cache", "host_link", "params"});

    const std::string schema = v.text(doc, "", "schema", true);
    if (doc.contains("schema") && doc["schema"].is_string() && schema != kSchemaId)
      v.add("schema", fmt::format("is \"{}\"; this Tessera reads \"{}\"", schema, kSchemaId));

    spec.name = v.text(doc, "", "name", true);
    if (!spec.name.empty() && !valid_machine_name(spec.name))
      v.add("name", fmt::format("\"{}\" may hold only lower-case letters, digits, '-', '_' and '.'",
                                spec.name));
    spec.description = v.text(doc, "", "description", true);
    spec.target = v.text(doc, "", "target", true);
    if (!spec.target.empty() && std::find(known_targets().begin(), known_targets().end(),
                                          spec.target) == known_targets().end())
      v.add("target", fmt::format("unknown target \"{}\"; expected one of {}", spec.target,
                                  fmt::join(known_targets(), ", ")));
    spec.clock_hz = v.figure(doc, "", "clock_hz", kClock);
    spec.core_count = v.figure(doc, "", "core_count", kCores);
    spec.core_name = v.text(doc, "", "core_name", true);

    if (const json* pipes = v.array(doc, "", "pipes")) {
      std::set<std::string> seen;
      for (std::size_t i = 0; i < pipes->size(); ++i) {
        const json& p = (*pipes)[i];
        const std::string path = fmt::format("pipes[{}]", i);
        if (!p.is_object()) {
          v.add(path, fmt::format("expected an object, got {}", kind_of(p)));
          continue;
        }
        v.check_keys(p, path, {"name", "description", "latency_cycles"});
        PipeSpec pipe;
        pipe.name = v.text(p, path, "name", true);
        pipe.description = v.text(p, path, "description", false, false);
        pipe.latency_cycles = v.figure(p, path, "latency_cycles", kLatencyCycles);
        if (!pipe.name.empty() && !seen.insert(pipe.name).second)
          v.add(path + ".name", fmt::format("duplicate pipe name \"{}\"", pipe.name));
        spec.pipes.push_back(std::move(pipe));
      }
    }

    if (const json* memories = v.array(doc, "", "memories")) {
      std::set<std::string> seen;
      for (std::size_t i = 0; i < memories->size(); ++i) {
        const json& m = (*memories)[i];
        const std::string path = fmt::format("memories[{}]", i);
        if (!m.is_object()) {
          v.add(path, fmt::format("expected an object, got {}", kind_of(m)));
          continue;
        }
        v.check_keys(
            m, path,
            {"name", "scope", "description", "capacity_bytes", "base_address", "alignment_bytes",
             "banks", "bank_width_bytes", "bandwidth_bytes_per_cycle", "latency_cycles"});
        MemorySpec mem;
        mem.name = v.text(m, path, "name", true);
        mem.scope = v.text(m, path, "scope", true);
        if (!mem.scope.empty() &&
            std::find(std::begin(kScopes), std::end(kScopes), mem.scope) == std::end(kScopes))
          v.add(path + ".scope",
                fmt::format("unknown scope \"{}\"; expected \"core\" (one per core) or \"device\" "
                            "(one shared)",
                            mem.scope));
        mem.description = v.text(m, path, "description", false, false);
        mem.capacity_bytes = v.figure(m, path, "capacity_bytes",
                                      mem.scope == "core" ? kCoreCapacity : kDeviceCapacity);
        mem.base_address = v.figure(m, path, "base_address", kBaseAddress, 0.0);
        mem.alignment_bytes = v.figure(m, path, "alignment_bytes", kAlignment, 1.0);
        mem.banks = v.figure(m, path, "banks", kBanks, 1.0);
        mem.bank_width_bytes = v.figure(m, path, "bank_width_bytes", kBankWidth, 0.0);
        mem.bandwidth_bytes_per_cycle =
            v.figure(m, path, "bandwidth_bytes_per_cycle", kBytesPerCycle);
        mem.latency_cycles = v.figure(m, path, "latency_cycles", kLatencyCycles, 1.0);
        if (mem.banks.value > 1 && mem.bank_width_bytes.value <= 0)
          v.add(path + ".bank_width_bytes",
                fmt::format("must be positive when the memory has {} banks", mem.banks.value));
        if (!mem.name.empty() && !seen.insert(mem.name).second)
          v.add(path + ".name", fmt::format("duplicate memory name \"{}\"", mem.name));
        spec.memories.push_back(std::move(mem));
      }
    }

    spec.global_memory = v.text(doc, "", "global_memory", true);
    if (!spec.global_memory.empty() && doc.contains("memories") && doc["memories"].is_array()) {
      const MemorySpec* g = spec.find_memory(spec.global_memory);
      std::vector<std::string> device_names;
      for (const auto& m : spec.memories)
        if (m.scope == "device") device_names.push_back(m.name);
      if (g == nullptr)
        v.add("global_memory", fmt::format("names \"{}\", which is not in \"memories\"; name one "
                                           "of the device memories: {}",
                                           spec.global_memory, list_names(device_names)));
      else if (g->scope != "device")
        v.add("global_memory",
              fmt::format("names \"{}\", whose scope is \"{}\"; it must name a device memory: {}",
                          spec.global_memory, g->scope, list_names(device_names)));
    }

    if (doc.contains("global_cache")) {
      spec.global_cache = v.text(doc, "", "global_cache", true);
      const MemorySpec* c = spec.find_memory(spec.global_cache);
      if (!spec.global_cache.empty() && doc.contains("memories") && doc["memories"].is_array()) {
        if (c == nullptr)
          v.add("global_cache", fmt::format("names \"{}\", which is not in \"memories\"; name "
                                            "the device memory that caches \"{}\"",
                                            spec.global_cache, spec.global_memory));
        else if (c->scope != "device" || spec.global_cache == spec.global_memory)
          v.add("global_cache",
                fmt::format("names \"{}\"; it must name a device memory other than the global "
                            "memory \"{}\"",
                            spec.global_cache, spec.global_memory));
      }
    }

    if (const json* link = v.object(doc, "", "host_link")) {
      v.check_keys(*link, "host_link", {"bandwidth_bytes_per_second", "latency_seconds"});
      spec.host_link.bandwidth_bytes_per_second =
          v.figure(*link, "host_link", "bandwidth_bytes_per_second", kLinkBandwidth);
      spec.host_link.latency_seconds =
          v.figure(*link, "host_link", "latency_seconds", kLinkLatency);
    }

    // params is optional: a machine may need no target-specific figures.
    if (auto it = doc.find("params"); it != doc.end()) {
      if (!it->is_object()) {
        v.add("params",
              fmt::format("expected an object of \"dotted.name\": figure, got {}", kind_of(*it)));
      } else {
        for (const auto& [key, value] : it->items()) {
          const std::string path = "params." + key;
          if (!valid_param_name(key))
            v.add(path,
                  "parameter names are lower-case identifiers joined by dots, with the "
                  "target first (\"tpc.vector_bytes\")");
          spec.params[key] = v.figure_value(
              value, path, key.find("_per_cycle") != std::string::npos ? kParamRate : kParam);
        }
      }
    }
  }

  if (!v.problems.empty()) {
    std::string message = fmt::format("{}: invalid machine description ({} problem{}):", origin,
                                      v.problems.size(), v.problems.size() == 1 ? "" : "s");
    for (const auto& p : v.problems) message += "\n  " + p;
    message += "\nThe format is described in docs/arch.md.";
    throw UserError(message);
  }
  return spec;
}

std::string preset_directory() {
  if (const char* env = std::getenv("TESSERA_ARCH_PATH"); env != nullptr && *env != '\0')
    return env;
  std::error_code ec;
  if (fs::is_directory(TESSERA_SOURCE_ARCH_DIR, ec)) return TESSERA_SOURCE_ARCH_DIR;
  return TESSERA_INSTALL_ARCH_DIR;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  std::error_code ec;
  const fs::path dir = preset_directory();
  if (!fs::is_directory(dir, ec)) return names;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec) && entry.path().extension() == ".json")
      names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

MachineSpec load_machine(std::string_view name_or_path) {
  if (name_or_path.empty())
    throw_user_error("no machine given; pass a preset name ({}) or the path of a machine JSON file",
                     list_names(preset_names()));
  const bool is_path = name_or_path.find('/') != std::string_view::npos ||
                       (name_or_path.size() >= 5 && name_or_path.ends_with(".json"));
  if (is_path) {
    const fs::path path{std::string(name_or_path)};
    return parse_machine_spec(read_file(path), path.string());
  }
  const fs::path dir = preset_directory();
  const fs::path path = dir / (std::string(name_or_path) + ".json");
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    std::string where = dir.string();
    if (!fs::is_directory(dir, ec)) where += ", which does not exist; set TESSERA_ARCH_PATH";
    throw_user_error(
        "unknown machine preset '{}'; available presets: {} (in {}). Pass one of "
        "these or the path of a machine JSON file",
        name_or_path, list_names(preset_names()), where);
  }
  MachineSpec spec = parse_machine_spec(read_file(path), path.string());
  if (spec.name != name_or_path)
    throw_user_error(
        "{}: preset file is named '{}' but its \"name\" field says '{}'; make them "
        "the same",
        path.string(), name_or_path, spec.name);
  return spec;
}

}  // namespace tessera::arch
