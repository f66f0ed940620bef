// DMA: strided and region-of-interest copies between memories, up to 5-D (TPC tensor
// accesses, BM GDMA, AI Core MTE moves, EPU memCpy with ROI, spec 004 "memcpy roi").
// A DmaEngine performs the copy on host memory at once (results are computed when issued)
// and books latency + bytes / bandwidth from the CostModel on its pipe of a Timeline.
// Every element touched is bounds-checked against its region first: a DeviceFault, never a
// partial copy.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "tessera/core/shape.h"
#include "tessera/sim/timeline.h"

namespace tessera::sim {

class CostModel;
class Memory;

// A region of memory that holds host bytes: a buffer, a local memory, a slice of either.
struct DmaEndpoint {
  std::byte* data = nullptr;
  std::uint64_t size_bytes = 0;
  std::string memory;         // memory level for the cost model and the profile ("hbm", "vlm")
  std::uint64_t address = 0;  // device address of data[0], for messages
  std::string what;           // "buffer #3", "tpc0/vlm"; the memory name when empty

  // The whole host storage of a Memory constructed with Backing::host.
  static DmaEndpoint of(Memory& memory);
  // A checked slice [address, address + bytes) of a Memory with host storage.
  static DmaEndpoint of(Memory& memory, std::uint64_t address, std::uint64_t bytes);
};

// How one side of a copy walks its region: an element offset and a stride per dimension, in
// elements, dimension 0 fastest. `tensor`, when given (rank > 0), is the tensor the window is
// cut from: each dimension of the window must stay inside it (an ROI must not wrap into the
// next row).
struct DmaWindow {
  std::int64_t offset = 0;
  Strides strides;  // rank 0: dense for the copy's extent
  Shape tensor;
  std::array<std::int64_t, kMaxRank> start{};  // ROI start per dimension, checked with `tensor`

  // Dense layout of `extent`, from the region's start.
  static DmaWindow dense(const Shape& extent);
  // The region of interest starting at `start` (fastest first) of a dense tensor.
  static DmaWindow roi(const Shape& tensor, std::span<const std::int64_t> start);
  static DmaWindow roi(const Shape& tensor, std::initializer_list<std::int64_t> start);
};

struct DmaDescriptor {
  DmaEndpoint src;
  DmaWindow src_window;
  DmaEndpoint dst;
  DmaWindow dst_window;
  Shape extent;  // elements copied per dimension, fastest first
  std::size_t element_bytes = 1;

  std::uint64_t bytes() const {
    return static_cast<std::uint64_t>(extent.element_count()) * element_bytes;
  }
};

// Checks a descriptor (DeviceFault naming `where`, the side, the region and the limit;
// UserError for a malformed descriptor) and copies on the host. Overlapping regions are copied
// as if through a temporary buffer.
void dma_copy(const DmaDescriptor& d, std::string_view where);
// The checks alone.
void dma_check(const DmaDescriptor& d, std::string_view where);

class DmaEngine {
 public:
  DmaEngine(Timeline& timeline, PipeId pipe, const CostModel& cost);

  // Copies now and books the transfer on the pipe after `deps`; adds the bytes moved to the
  // timeline under "<src memory>-><dst memory>". Returns the transfer's completion event.
  Event copy(const DmaDescriptor& d, std::span<const Event> deps = {},
             std::string_view name = "dma");
  Event copy(const DmaDescriptor& d, std::initializer_list<Event> deps,
             std::string_view name = "dma");
  // The cycles a transfer of the descriptor takes.
  std::uint64_t cycles(const DmaDescriptor& d) const;

  std::uint64_t bytes_transferred() const { return bytes_; }

 private:
  Timeline& timeline_;
  PipeId pipe_;
  const CostModel& cost_;
  std::uint64_t bytes_ = 0;
};

}  // namespace tessera::sim
