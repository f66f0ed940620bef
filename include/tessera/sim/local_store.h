// A core's local memory as bytes (a scratchpad, TPC scalar / vector local memory): every byte
// addressable from the memory's base, each access checked as the hardware faults on it (past the
// usable size, not a multiple of the access granularity), fresh bytes holding a poison pattern.
// Objects the target keeps on the host (arrays whose host layout differs from the modeled one,
// such as vectors that carry a ready cycle) can be attached as views: while attached, their
// bytes are the memory's bytes at their addresses, so an access by address and the object see
// the same data. Not thread-safe: one core's memory belongs to the host thread running that core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tessera/arch/machine_spec.h"
#include "tessera/sim/memory.h"

namespace tessera::sim {

class LocalStore {
 public:
  // `owner` names the core (and what runs on it) for fault messages. `limit` is how many bytes
  // from the base may be used (0: the whole capacity; more than the capacity is a UserError);
  // `limit_reason` says why it is less ("special functions use the rest"). Fresh bytes read as
  // `poison` repeated (little-endian); host storage grows as far as accesses reach.
  LocalStore(const arch::MemorySpec& spec, std::string owner, std::uint64_t limit = 0,
             std::string limit_reason = {}, std::uint32_t poison = 0xDEADBEEFu);

  const Memory& memory() const { return memory_; }
  std::uint64_t limit() const { return limit_; }

  // DeviceFault unless [address, address + bytes) lies below the limit and `address` (relative to
  // the base) is a multiple of `granularity`; `op` names the operation for the message.
  void check(std::uint64_t address, std::uint64_t bytes, std::uint64_t granularity,
             std::string_view op) const;
  // Checked copies out of / into the memory (through attached views where they cover it).
  void read(std::uint64_t address, void* out, std::uint64_t bytes, std::uint64_t granularity,
            std::string_view op);
  void write(std::uint64_t address, const void* in, std::uint64_t bytes, std::uint64_t granularity,
             std::string_view op);

  // Attaches `count` host elements at `host`, `host_stride` bytes apart, each holding
  // `element_bytes` modeled bytes at its start, as the memory's bytes from `address` on.
  // `take_memory`: the elements start with what the memory holds there (a new variable on the
  // hardware sees the old bytes); otherwise the memory takes the elements' values. A view past
  // the limit is a DeviceFault; one overlapping another is a UserError. An empty view is not
  // kept (nothing to detach).
  void attach(std::uint64_t address, std::byte* host, std::uint64_t count,
              std::uint64_t element_bytes, std::uint64_t host_stride, bool take_memory,
              std::string_view op);
  // Detaches the view at `address`; the memory keeps its last values. UserError if none.
  void detach(std::uint64_t address);
  std::size_t views() const { return views_.size(); }

  // Traffic so far, and the end of the highest byte any access reached (0: none).
  std::uint64_t reads() const { return reads_; }
  std::uint64_t writes() const { return writes_; }
  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  std::uint64_t high_water() const { return high_water_; }

 private:
  struct View {
    std::uint64_t address;  // relative to the base
    std::uint64_t bytes;    // modeled bytes: count * element_bytes
    std::byte* host;
    std::uint64_t element_bytes;
    std::uint64_t host_stride;
  };
  template <bool Into>
  using Buffer = std::conditional_t<Into, const std::byte*, std::byte*>;
  void ensure_storage(std::uint64_t end);
  // Copies [offset, offset + bytes) between `buffer` and the memory (into the memory: Into).
  template <bool Into>
  void transfer(std::uint64_t offset, Buffer<Into> buffer, std::uint64_t bytes);

  Memory memory_;
  std::uint64_t limit_;
  std::string limit_reason_;
  std::uint32_t poison_;
  std::vector<std::byte> bytes_;  // from the base, as far as accesses reached
  std::vector<View> views_;       // ascending address, never overlapping
  std::uint64_t reads_ = 0, writes_ = 0, bytes_read_ = 0, bytes_written_ = 0, high_water_ = 0;
};

}  // namespace tessera::sim
