// A simulated IPU device (or several): what an Engine loads onto. Attaching always succeeds,
// there is no hardware to share.
#pragma once

#include <poplar/Target.hpp>

namespace poplar {

class Device {
 public:
  Device() = default;
  explicit Device(Target target, unsigned id = 0) : target_(std::move(target)), id_(id) {}
  // A device of Target::createCPUTarget() (Poplar's older tutorials run on it).
  static Device createCPUDevice(unsigned numIPUs = 1) {
    return Device(Target::createCPUTarget(false, numIPUs));
  }
  const Target& getTarget() const { return target_; }
  unsigned getId() const { return id_; }
  bool attach() {
    attached_ = true;
    return true;
  }
  void detach() { attached_ = false; }
  bool isAttached() const { return attached_; }
  explicit operator bool() const { return target_.tesseraState() != nullptr; }

 private:
  Target target_;
  unsigned id_ = 0;
  bool attached_ = true;
};

}  // namespace poplar
