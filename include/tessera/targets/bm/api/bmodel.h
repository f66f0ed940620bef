// Tessera's bmodel files: a network compiled to BM1880 command buffers, with its weights, as
// bmnet_register_bmodel reads it (docs/targets/bm.md, "bmodel files"). Layout: the magic
// "TSRBMODL", a little-endian header (format version, JSON size, blob size, FNV-1a 64 checksum
// of JSON and blob), a JSON section (name, thresholds, one stage per supported input shape with
// its neuron layout and where its command buffer lies in the blob) and the blob (weights, then
// each stage's command buffer from bmk1880_acquire_cmdbuf). GDMA addresses in a command buffer
// are offsets marked CTRL_NEURON or CTRL_WEIGHT; registering relocates them.
#pragma once

#include <bmkernel/bm_kernel.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::bm {

inline constexpr std::uint32_t kBModelFormatVersion = 1;

struct BModelStage {
  shape_t input_shape{};   // n, c, h, w of the input this stage was compiled for
  shape_t output_shape{};
  std::uint64_t neuron_size = 0;    // bytes of neuron memory the stage uses
  std::uint64_t input_size = 0;     // input bytes, at neuron offset 0
  std::uint64_t output_offset = 0;  // output's offset in the neuron memory
  std::uint64_t output_size = 0;
  std::vector<std::uint8_t> cmdbuf;
};

struct BModel {
  std::string name;
  std::string output_name = "output";
  float input_threshold = 1.0f;  // int8 scale of the input: real = q * threshold / 127
  float output_threshold = 1.0f;
  std::vector<std::uint8_t> weight;  // at weight offset 0
  std::vector<BModelStage> stages;
};

// UserError when the model is inconsistent (no stage, output outside the neuron memory).
std::vector<std::uint8_t> encode_bmodel(const BModel& model);
void save_bmodel(const BModel& model, const std::string& path);
// UserError naming the file and what is wrong: not a bmodel, truncated, a bad checksum, a newer
// format version.
BModel decode_bmodel(const std::vector<std::uint8_t>& bytes, const std::string& name);
BModel load_bmodel(const std::string& path);

}  // namespace tessera::bm
