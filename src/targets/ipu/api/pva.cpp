// libpva's report over the graph and execution profiles of a Tessera Engine (pva/pva.hpp).
#include <pva/pva.hpp>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <poplar/exceptions.hpp>

#include "pva_report.h"

namespace pva {

using nlohmann::json;

namespace {
const json& part(const detail::ReportData& d, const char* doc, const char* section) {
  const json& j = std::string(doc) == "graph" ? d.graph : d.execution;
  if (!j.is_object() || !j.contains(section) || !j.at(section).is_object())
    throw poplar::parse_error(fmt::format(
        "the report's {} profile has no '{}' section; the file is damaged", doc, section));
  return j.at(section);
}
template <typename T>
T field(const json& j, const char* key) {
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& x) {
    throw poplar::parse_error(
        fmt::format("the report's '{}' is missing or malformed ({}); the file is damaged", key,
                    x.what()));
  }
}
Version parse_version(const std::string& text) {
  unsigned v[3] = {0, 0, 0};
  std::size_t pos = 0;
  for (unsigned i = 0; i < 3 && pos < text.size(); ++i) {
    std::size_t end = pos;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    if (end == pos) break;
    v[i] = static_cast<unsigned>(std::stoul(text.substr(pos, end - pos)));
    pos = end + 1;
  }
  return Version(v[0], v[1], v[2], text);
}
}  // namespace

unsigned Target::numIPUs() const {
  return field<unsigned>(part(*d_, "graph", "target"), "numIPUs");
}
unsigned Target::numTiles() const {
  return field<unsigned>(part(*d_, "graph", "target"), "numTiles");
}
unsigned Target::tilesPerIpu() const {
  return field<unsigned>(part(*d_, "graph", "target"), "tilesPerIPU");
}
unsigned Target::numReplicas() const {
  return field<unsigned>(part(*d_, "graph", "target"), "replicas");
}
std::uint64_t Target::bytesPerTile() const {
  return field<std::uint64_t>(part(*d_, "graph", "target"), "bytesPerTile");
}
double Target::clockFrequency() const {
  return field<double>(part(*d_, "graph", "target"), "clockHz");
}
std::string Target::architecture() const {
  return field<std::string>(part(*d_, "graph", "target"), "arch");
}

std::uint64_t Graph::numVertices() const {
  return field<std::uint64_t>(part(*d_, "graph", "graph"), "vertices");
}
std::uint64_t Graph::numEdges() const {
  return field<std::uint64_t>(part(*d_, "graph", "graph"), "edges");
}
std::uint64_t Graph::numVariables() const {
  return field<std::uint64_t>(part(*d_, "graph", "graph"), "variables");
}
std::uint64_t Graph::numComputeSets() const {
  return field<std::uint64_t>(part(*d_, "graph", "graph"), "computeSets");
}

std::vector<Tile> Compilation::tiles() const {
  const json& m = part(*d_, "graph", "memory");
  std::vector<Tile> out;
  if (!m.contains("tiles") || !m.at("tiles").is_array())
    throw poplar::parse_error("the report's memory has no list of tiles; the file is damaged");
  for (const auto& t : m.at("tiles"))
    out.push_back(Tile(field<unsigned>(t, "tile"),
                       TileMemory(field<std::uint64_t>(t, "total"),
                                  field<std::uint64_t>(t, "includingGaps"))));
  return out;
}

std::vector<Run> Execution::runs() const {
  if (!d_->execution.is_object()) return {};  // a report of compilation only
  auto n = field<unsigned>(d_->execution, "runs");
  std::vector<Run> out;
  for (unsigned i = 0; i < n; ++i) out.push_back(Run(i));
  return out;
}

std::vector<Block> Execution::blocks(unsigned tile) const {
  if (!d_->execution.is_object() || !d_->execution.contains("blocks")) return {};
  static const std::pair<const char*, Program::Type> kTypes[] = {
      {"Unknown", Program::Type::Unknown},
      {"Block", Program::Type::Block},
      {"Sequence", Program::Type::Sequence},
      {"Repeat", Program::Type::Repeat},
      {"RepeatWhile", Program::Type::RepeatWhile},
      {"If", Program::Type::If},
      {"Switch", Program::Type::Switch},
      {"Call", Program::Type::Call},
      {"Sync", Program::Type::Sync},
      {"OnTileExecute", Program::Type::OnTileExecute},
      {"DoExchange", Program::Type::DoExchange},
      {"GlobalExchange", Program::Type::GlobalExchange},
      {"StreamCopy", Program::Type::StreamCopy},
      {"StreamCopyBegin", Program::Type::StreamCopyBegin},
      {"StreamCopyMid", Program::Type::StreamCopyMid},
      {"StreamCopyEnd", Program::Type::StreamCopyEnd}};
  static const std::pair<const char*, Block::Kind> kKinds[] = {
      {"common", Block::Kind::common},
      {"overflow", Block::Kind::overflow},
      {"flush", Block::Kind::flush},
      {"streamCopy", Block::Kind::streamCopy}};
  auto lookup = [](const auto& table, const std::string& name, const char* what) {
    for (const auto& [n, v] : table)
      if (name == n) return v;
    throw poplar::parse_error(
        fmt::format("the report's block {} '{}' is not one Tessera writes; the file is damaged",
                    what, name));
  };
  const json& all = d_->execution.at("blocks");
  if (!all.is_array()) throw poplar::parse_error("the report's blocks are not a list; the file is damaged");
  std::vector<Block> out;
  for (const auto& t : all) {
    if (field<unsigned>(t, "tile") != tile) continue;
    if (!t.contains("records") || !t.at("records").is_array())
      throw poplar::parse_error("the report's blocks of a tile are not a list; the file is damaged");
    for (const auto& r : t.at("records")) {
      auto program = std::make_shared<Program>(
          field<std::string>(r, "program"),
          lookup(kTypes, field<std::string>(r, "type"), "program type"));
      out.push_back(Block(std::move(program), field<std::uint64_t>(r, "from"),
                          field<std::uint64_t>(r, "to"), tile,
                          lookup(kKinds, field<std::string>(r, "kind"), "kind")));
    }
  }
  return out;
}

Version Report::version() const {
  return parse_version(d_->format_version);
}
Version Report::poplarVersion() const {
  return parse_version(d_->poplar_version);
}

Report openReport(const std::string& filename, const std::string&) {
  std::filesystem::path path(filename);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) path /= "profile.pop";
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw poplar::file_load_error(fmt::format(
        "pva::openReport: cannot open {}; run the Engine with the option autoReport.all (and "
        "autoReport.directory) to write it",
        path.string()));
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception&) {
    throw poplar::parse_error(fmt::format(
        "pva::openReport: {} is not a report a Tessera Engine wrote (Poplar's own profile.pop "
        "files are another format); write it with the Engine option autoReport.all",
        path.string()));
  }
  return Report(detail::report_from_json(j, path.string()));
}

namespace detail {

std::shared_ptr<const ReportData> report_from_json(const json& j, const std::string& where) {
  if (!j.is_object() || j.value("format", std::string()) != kReportFormat)
    throw poplar::parse_error(fmt::format(
        "pva::openReport: {} is not a report a Tessera Engine wrote (its \"format\" should be "
        "\"{}\")",
        where, kReportFormat));
  auto d = std::make_shared<ReportData>();
  d->graph = j.value("graph", json());
  d->execution = j.value("execution", json());
  d->poplar_version = j.value("poplarVersion", std::string());
  d->format_version = "1.0.0";
  if (!d->graph.is_object())
    throw poplar::parse_error(
        fmt::format("pva::openReport: {} has no graph profile; the file is damaged", where));
  return d;
}

json report_json(const json& graph, const json& execution) {
  return {{"format", kReportFormat},
          {"poplarVersion", TESSERA_POPLAR_VERSION " (Tessera)"},
          {"graph", graph},
          {"execution", execution}};
}

}  // namespace detail
}  // namespace pva
