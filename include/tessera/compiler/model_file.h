// Tessera model files (.tsm): a compiled, optimised graph for one target with its weights, so
// that `tessera run MODEL.tsm` needs no ONNX file. Layout: a fixed binary header (magic,
// format version, section sizes and FNV-1a checksums), a JSON section (metadata, values,
// nodes) and a weights section; every tensor also carries its own checksum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "tessera/compiler/ir.h"
#include "tessera/compiler/plan.h"

namespace tessera::compiler {

// Format 2 stores each node's layout as the backend declared it (name and permutations);
// format-1 files (layout "nchw" / "nhwc") are still read.
inline constexpr std::uint32_t kModelFormatVersion = 2;

struct ModelFile {
  Graph graph;                                  // after the passes
  std::string target;                           // backend name
  std::string device;                           // preset name
  std::map<std::string, std::string> metadata;  // source file, producer, pass summary, ...
};

// Serialises a compiled plan (its graph, target and device) to bytes / a file.
std::vector<std::byte> encode_model(const Plan& plan,
                                    const std::map<std::string, std::string>& metadata = {});
void save_model(const Plan& plan, const std::string& path,
                const std::map<std::string, std::string>& metadata = {});
// Loads and verifies a model file. A truncated, corrupted or foreign file, or one from a newer
// format version, is a UserError naming the file and what is wrong.
ModelFile decode_model(std::span<const std::byte> bytes, const std::string& name);
ModelFile load_model(const std::string& path);
// True when the file starts with the model file magic (used to tell .tsm from .onnx).
bool is_model_file(const std::string& path);

// 64-bit FNV-1a, the checksum of model files.
std::uint64_t fnv1a64(std::span<const std::byte> bytes);

}  // namespace tessera::compiler
