// The JSON document behind a poplar::ProfileValue, and the profile reader/printer entry points
// shared by the Engine and the poplar_profile_summary tool.
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/ProfileValue.hpp>

namespace poplar::detail {

struct ProfileTree {
  nlohmann::json json;
};

// Parses a saved profile; parse_error naming `name` when it is not JSON.
ProfileValue read_profile(std::istream& in, const std::string& name);
// The §8.2.3 report from a graph profile and/or an execution profile (either may be null).
void print_profile_summary(const nlohmann::json* graph, const nlohmann::json* exec,
                           std::ostream& out, const OptionFlags& opts);

}  // namespace poplar::detail
