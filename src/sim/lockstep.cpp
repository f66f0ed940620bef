#include "tessera/sim/lockstep.h"

#include <algorithm>
#include <cstring>

#include "tessera/core/error.h"
#include "tessera/sim/memory.h"

namespace tessera::sim {

const char* grid_side_name(GridSide side) {
  switch (side) {
    case GridSide::north:
      return "north";
    case GridSide::south:
      return "south";
    case GridSide::east:
      return "east";
    case GridSide::west:
      return "west";
  }
  return "?";
}

BroadcastBus::BroadcastBus(std::string owner, std::size_t width)
    : owner_(std::move(owner)), width_(width), reg_(width) {
  if (width == 0) throw_user_error("{}: a broadcast bus needs a register of at least 1 byte", owner_);
}

void BroadcastBus::stage(std::span<const std::byte> source, std::string name) {
  if (source.empty())
    throw_user_error("{}: staging '{}' for broadcast: the source is empty; stage a tensor with "
                     "at least one element",
                     owner_, name);
  source_.assign(source.begin(), source.end());
  name_ = std::move(name);
  staged_ = true;
  loaded_ = false;
  read_ = 0;
}

std::size_t BroadcastBus::pops_left() const {
  if (!staged_) return 0;
  return (source_.size() - read_ + width_ - 1) / width_;
}

void BroadcastBus::pop(std::string_view api) {
  if (!staged_)
    throw DeviceFault(owner_, fmt::format("{}: broadcast POP with nothing staged; call "
                                          "BroadcastStream::stage<Shape, RoiDesc>(tensor) first",
                                          api));
  if (read_ >= source_.size())
    throw DeviceFault(
        owner_,
        fmt::format("{}: broadcast POP {} past the end of the staged source '{}' ({} holds {} "
                    "POPs of {} bytes); the hardware would hang here. Pop linearElemCount / "
                    "getNumberOfWeightRegisters<T>() times per staging",
                    api, read_ / width_ + 1, name_, format_bytes(source_.size()),
                    (source_.size() + width_ - 1) / width_, width_));
  const std::size_t n = std::min(width_, source_.size() - read_);
  std::fill(reg_.begin(), reg_.end(), std::byte{0});
  std::memcpy(reg_.data(), source_.data() + read_, n);
  read_ += width_;
  loaded_ = true;
  ++pops_;
}

std::span<const std::byte> BroadcastBus::peek(std::size_t offset, std::size_t bytes,
                                              std::string_view api) const {
  if (offset + bytes > width_)
    throw_user_error("{}: {}: bytes [{}, {}) are outside the {}-byte broadcast register", owner_,
                     api, offset, offset + bytes, width_);
  if (!loaded_)
    throw DeviceFault(
        owner_,
        fmt::format("{}: broadcast register read before the first POP{}; the register holds "
                    "nothing yet (staging does not prime it): read with BroadcastAction::POP first",
                    api, staged_ ? fmt::format(" of the staged source '{}'", name_) : ""));
  return {reg_.data() + offset, bytes};
}

}  // namespace tessera::sim
