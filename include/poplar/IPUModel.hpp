// The IPU Model (spec 001 §2): a simulated IPU whose figures start from a Tessera preset
// ("ipu1" -> ipu-mk1, "ipu2" -> ipu-mk2, or a preset name / JSON path) and can be changed
// through the public fields before createDevice().
#pragma once

#include <string>

#include <poplar/Device.hpp>
#include <poplar/OptionFlags.hpp>

namespace poplar {

class IPUModel {
 public:
  explicit IPUModel(const char* ipuVersion = "ipu2");

  std::string IPUVersion;
  unsigned numIPUs = 1;
  unsigned tilesPerIPU = 0;
  unsigned numWorkerContexts = 0;
  unsigned memoryBytesPerTile = 0;
  unsigned exchangeBytesPerCycle = 0;
  unsigned minIPUSyncDelay = 0;   // cycles of the on-chip sync between supersteps
  // Poplar's model can add a sync delay that grows with the distance between tiles (AUTO).
  // Tessera's sync costs minIPUSyncDelay with no distance term, so both settings time the same.
  enum class RelativeSyncDelayType { NO_DELAY, AUTO };
  RelativeSyncDelayType relativeSyncDelay = RelativeSyncDelayType::AUTO;
  unsigned globalSyncCycles = 0;  // cycles of a sync with the host
  double tileClockFrequency = 0;  // Hz
  bool compileIPUCode = false;
  bool accurateHalf = true;  // Tessera's half is always IEEE 16-bit

  Device createDevice(OptionFlags opts = {}, bool accurateHalfArg = true,
                      unsigned deviceManagerId = 0) const;
  Target createTarget() const;
};

}  // namespace poplar
