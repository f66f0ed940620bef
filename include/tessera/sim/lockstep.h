// What a lock-step array of cores needs from the engine (spec 004 "Data Sharing Between Cores",
// "Broadcast to Array"): neighbour exchange over a rows x cols grid, computed for the whole grid
// at once (a tile at a time, never a call per core), and a broadcast bus that streams a staged
// source to every core through a fixed-width register with a read pointer. Timing is booked by
// the caller on its Timeline with the preset's costs; these only move data and check the rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::sim {

// The side a value comes from: `north` means each core receives the value of the core above it
// (row - 1). Rows grow southwards, columns eastwards.
enum class GridSide : std::uint8_t { north, south, east, west };
const char* grid_side_name(GridSide side);

// Neighbour exchange on a row-major rows x cols grid: out[r][c] = in of the neighbour on `from`.
// A core on the edge facing `from` has no neighbour there: it receives `edge[k]` (k = its column
// for north/south, its row for east/west) when `edge` is not empty, else `fill`. `out` must not
// alias `in`. The loops run over whole rows so that the compiler vectorises them.
template <typename T>
void neighbor_exchange(std::span<const T> in, std::span<T> out, int rows, int cols, GridSide from,
                       std::span<const T> edge = {}, T fill = T{}) {
  const auto R = static_cast<std::size_t>(rows), C = static_cast<std::size_t>(cols);
  const T* src = in.data();
  T* dst = out.data();
  switch (from) {
    case GridSide::north:
      for (std::size_t c = 0; c < C; ++c) dst[c] = edge.empty() ? fill : edge[c];
      for (std::size_t r = 1; r < R; ++r)
        for (std::size_t c = 0; c < C; ++c) dst[r * C + c] = src[(r - 1) * C + c];
      break;
    case GridSide::south:
      for (std::size_t r = 0; r + 1 < R; ++r)
        for (std::size_t c = 0; c < C; ++c) dst[r * C + c] = src[(r + 1) * C + c];
      for (std::size_t c = 0; c < C; ++c) dst[(R - 1) * C + c] = edge.empty() ? fill : edge[c];
      break;
    case GridSide::west:
      for (std::size_t r = 0; r < R; ++r) {
        dst[r * C] = edge.empty() ? fill : edge[r];
        for (std::size_t c = 1; c < C; ++c) dst[r * C + c] = src[r * C + c - 1];
      }
      break;
    case GridSide::east:
      for (std::size_t r = 0; r < R; ++r) {
        for (std::size_t c = 0; c + 1 < C; ++c) dst[r * C + c] = src[r * C + c + 1];
        dst[r * C + C - 1] = edge.empty() ? fill : edge[r];
      }
      break;
  }
}

// A broadcast bus: stage() designates a source (the bytes are copied, as the hardware reads
// the staged OCM object), each pop() moves the next `width` bytes into the broadcast register
// of every core, and peek() reads the register. Staging again restarts from the new source.
// Reading before the first pop of a staging, and popping past the end of the staged data, are
// DeviceFaults naming `owner`, the source and the limit (the hardware would read stale data or
// hang, spec 004 "Broadcast Notes and Cautions").
class BroadcastBus {
 public:
  // `owner` names the array in messages ("epu array"); `width` is the register's bytes.
  BroadcastBus(std::string owner, std::size_t width);

  void stage(std::span<const std::byte> source, std::string name);
  // Loads the next `width` bytes (the last pop of a source not a multiple of width is padded
  // with zeros). `api` names the caller's operation for messages.
  void pop(std::string_view api);
  // The register's bytes [offset, offset + bytes) after at least one pop. UserError when the
  // range is outside the register.
  std::span<const std::byte> peek(std::size_t offset, std::size_t bytes, std::string_view api) const;

  std::size_t width() const { return width_; }
  bool staged() const { return staged_; }
  std::size_t read_pointer() const { return read_; }  // bytes popped from the staged source
  std::size_t source_bytes() const { return source_.size(); }
  std::size_t pops_left() const;
  std::uint64_t pops() const { return pops_; }  // since construction, for the profile
  const std::string& source_name() const { return name_; }

 private:
  std::string owner_;
  std::size_t width_;
  std::vector<std::byte> source_;
  std::vector<std::byte> reg_;
  std::string name_;
  bool staged_ = false;
  bool loaded_ = false;
  std::size_t read_ = 0;
  std::uint64_t pops_ = 0;
};

}  // namespace tessera::sim
