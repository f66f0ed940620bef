// Helpers the `tessera` command groups share: parsing repeated NAME=VALUE options and printing
// byte counts and durations for people.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/tensor.h"

namespace tessera::tools {

// "NAME=VALUE" -> {NAME, VALUE}; UserError naming `option` otherwise.
std::pair<std::string, std::string> split_assignment(const std::string& text, const char* option);
// --dim NAME=VALUE (positive integers).
std::map<std::string, std::int64_t> parse_dims(const std::vector<std::string>& dims);
// --input NAME=FILE.npy|FILE.pb.
std::map<std::string, Tensor> parse_inputs(const std::vector<std::string>& inputs);

std::string human_bytes(double bytes);  // "1.50 MiB"
std::string human_seconds(double s);    // "2.345 ms"

}  // namespace tessera::tools
