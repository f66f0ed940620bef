// Devices as a Poplar program finds them. Every device is a simulated IPU of the preset named by
// TESSERA_IPU_PRESET (a preset name or a JSON path; default ipu-mk2).
#pragma once

#include <vector>

#include <poplar/Device.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/TargetType.hpp>

namespace poplar {

class DeviceManager {
 public:
  static DeviceManager createDeviceManager() { return DeviceManager(); }
  std::size_t getNumDevices() const { return 1; }
  std::vector<Device> getDevices(TargetType type, unsigned requiredNumIPUs,
                                 const OptionFlags& opts = {}) const;
  std::vector<Device> getDevices() const;
  Device getDevice(unsigned deviceManagerId, const OptionFlags& opts = {}) const;
};

}  // namespace poplar
