// What a graph is compiled for: the number of IPUs and tiles and every figure of the tile,
// read from a Tessera machine preset (ipu-mk1, ipu-mk2 or a JSON file), never hard-coded.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <poplar/OptionFlags.hpp>
#include <poplar/TargetType.hpp>
#include <poplar/Type.hpp>

namespace tessera::arch {
struct MachineSpec;
}

namespace poplar {

namespace detail {
struct TargetState;
}

class Target {
 public:
  Target() = default;
  // A target of `numIPUs` IPUs of a preset: "ipu1"/"ipu-mk1", "ipu2"/"ipu-mk2", another preset
  // name or a JSON preset path.
  static Target createIPUTarget(unsigned numIPUs, StringRef systemType,
                                const OptionFlags& opts = {});
  // Poplar's CPU target: the graph runs on the host as one tile per IPU, so a tensor or vertex
  // is on tile 0 without a setTileMapping. Its tile figures are the ipu-mk2 preset's
  // (TESSERA_IPU_PRESET overrides), so cycles are still modeled and reported.
  static Target createCPUTarget(bool accurateHalf = false, unsigned numIPUs = 1);

  TargetType getTargetType() const;
  std::string getTargetArchString() const;  // "ipu1", "ipu2"
  unsigned getNumIPUs() const;
  unsigned getTilesPerIPU() const;
  unsigned getNumTiles() const;
  unsigned getBytesPerTile() const;
  unsigned getNumWorkerContexts() const;
  unsigned getExchangeBytesPerCycle() const;
  unsigned getTypeSize(const Type& type) const;
  unsigned getVectorWidth(const Type& type) const;
  unsigned getDataPathWidth() const;  // bits
  unsigned getAtomicStoreGranularity() const;
  double getTileClockFrequency() const;
  std::vector<unsigned> getMemoryElementOffsets() const;
  unsigned getInterleavedMemoryElementIndex() const;
  std::size_t getMemoryBytes() const { return std::size_t(getBytesPerTile()) * getNumTiles(); }
  unsigned getIpuLinkBandwidth() const { return 0; }

  const tessera::arch::MachineSpec& tesseraSpec() const;
  const std::shared_ptr<const detail::TargetState>& tesseraState() const { return state_; }
  explicit Target(std::shared_ptr<const detail::TargetState> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<const detail::TargetState> state_;
};

// Converts between host floats and the device's 16-bit halves (spec 001 §2.3.2).
void copyFloatToDeviceHalf(const Target& target, const float* src, void* dst, std::size_t n);
void copyDeviceHalfToFloat(const Target& target, const void* src, float* dst, std::size_t n);

}  // namespace poplar
