// What a pva::Report reads: an Engine's graph profile and execution profile (summary.cpp), as
// profile.pop holds them.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>
#include <pva/pva.hpp>

namespace pva::detail {

inline constexpr const char* kReportFormat = "tessera.pva.report/1";

struct ReportData {
  nlohmann::json graph;
  nlohmann::json execution;  // null for a report of compilation only
  std::string poplar_version;
  std::string format_version;
};

// The report of a parsed profile.pop; parse_error naming `where` when it is not one.
std::shared_ptr<const ReportData> report_from_json(const nlohmann::json& j,
                                                   const std::string& where);
// The profile.pop document of an Engine's two profiles.
nlohmann::json report_json(const nlohmann::json& graph, const nlohmann::json& execution);

}  // namespace pva::detail
