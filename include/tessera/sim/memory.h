// Memories of the modeled machine and their allocators. A Memory is built from a preset's
// MemorySpec and checks every access the way the hardware would fault on it: out of bounds,
// misaligned, bank conflicts (ARCHITECTURE rule 4). Core-scope memories may carry host storage;
// device memories (HBM, DDR) only check, their bytes live per buffer in runtime::Device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/arch/machine_spec.h"

namespace tessera::sim {

enum class AccessKind { read, write };

// One access of a group issued together (the lanes of a vector gather, one cycle's requests).
struct Access {
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
};

// Accesses of a group that touch one bank at different addresses and so serialise (accesses at
// the same address are served together, as a broadcast read).
struct BankConflict {
  std::uint32_t bank = 0;
  std::vector<std::size_t> accesses;  // indices into the group, ascending
};

class Memory {
 public:
  enum class Backing { none, host };

  // `owner` names the core/tile that owns it ("tpc3", "tile 37") or "device". Throws UserError
  // when the spec is inconsistent (zero capacity, alignment not a power of two, banks without a
  // bank width), or when host backing is asked for a memory too large to mirror on the host.
  Memory(const arch::MemorySpec& spec, std::string owner, Backing backing = Backing::none);

  const std::string& name() const { return name_; }
  const std::string& owner() const { return owner_; }
  std::uint64_t base() const { return base_; }
  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t end() const { return base_ + capacity_; }
  std::uint64_t alignment() const { return alignment_; }
  std::uint32_t banks() const { return banks_; }
  std::uint64_t bank_width() const { return bank_width_; }
  bool has_storage() const { return storage_.size() != 0; }

  // DeviceFault unless [address, address + bytes) lies inside the memory. `op` names the
  // operation ("vector load", "dma read") for the message.
  void check_bounds(std::uint64_t address, std::uint64_t bytes, std::string_view op,
                    AccessKind kind = AccessKind::read) const;
  // DeviceFault unless address is a multiple of `alignment` (0: the memory's alignment).
  void check_alignment(std::uint64_t address, std::string_view op,
                       std::uint64_t alignment = 0) const;
  // Both checks.
  void check_access(std::uint64_t address, std::uint64_t bytes, std::string_view op,
                    AccessKind kind = AccessKind::read, std::uint64_t alignment = 0) const;

  // Bank of an address: ((address - base) / bank_width) % banks; 0 when not banked.
  std::uint32_t bank_of(std::uint64_t address) const;
  // Which accesses of a group hit the same bank at different addresses. Empty when not banked
  // or conflict-free.
  std::vector<BankConflict> bank_conflicts(std::span<const Access> group) const;
  // Extra cycles the group costs because of conflicts: the most distinct addresses any bank
  // serves, less 1.
  std::uint64_t bank_conflict_cycles(std::span<const Access> group) const;
  // DeviceFault naming the first conflicting bank and addresses, for machines where a bank
  // clash is an error rather than a stall.
  void check_no_bank_conflicts(std::span<const Access> group, std::string_view op) const;

  // Checked view of host storage (Backing::host only; UserError otherwise).
  std::span<std::byte> bytes(std::uint64_t address, std::uint64_t size, std::string_view op,
                             AccessKind kind = AccessKind::read);
  std::span<const std::byte> bytes(std::uint64_t address, std::uint64_t size,
                                   std::string_view op) const;

  // Initialisation tracking (off by default): which bytes something has written, so that a
  // read of bytes nothing wrote is reported rather than returning stale data (BM lmem, spec 002).
  // Turning it on (or clear_initialised) marks every byte unwritten.
  void set_track_initialisation(bool enabled);
  bool tracks_initialisation() const { return !written_.empty(); }
  void clear_initialised();
  // Marks [address, address + bytes) written; bounds-checked. No effect when not tracking.
  void mark_initialised(std::uint64_t address, std::uint64_t bytes);
  // True when tracking is off or the byte has been written.
  bool initialised(std::uint64_t address) const {
    return written_.empty() || (address >= base_ && address - base_ < capacity_ &&
                                written_[address - base_] != 0);
  }
  // The first byte of [address, address + bytes) never written, or address + bytes if none.
  std::uint64_t first_uninitialised(std::uint64_t address, std::uint64_t bytes) const;
  // DeviceFault naming the owner, the memory, `op` and the first unwritten byte.
  void check_initialised(std::uint64_t address, std::uint64_t bytes, std::string_view op) const;

  template <typename T>
  T load(std::uint64_t address, std::string_view op) const {
    check_alignment(address, op, alignof(T) < alignment_ ? alignof(T) : alignment_);
    T value;
    std::memcpy(&value, bytes(address, sizeof(T), op).data(), sizeof(T));
    return value;
  }
  template <typename T>
  void store(std::uint64_t address, const T& value, std::string_view op) {
    check_alignment(address, op, alignof(T) < alignment_ ? alignof(T) : alignment_);
    std::memcpy(bytes(address, sizeof(T), op, AccessKind::write).data(), &value, sizeof(T));
  }

 private:
  std::string name_;
  std::string owner_;
  std::uint64_t base_ = 0;
  std::uint64_t capacity_ = 0;
  std::uint64_t alignment_ = 1;
  std::uint32_t banks_ = 1;
  std::uint64_t bank_width_ = 0;
  // Host bytes that read as zero until written, taken from calloc: large ones come as untouched
  // zero pages, so a memory costs the host only the pages something writes.
  class ZeroedBytes {
   public:
    ZeroedBytes() = default;
    explicit ZeroedBytes(std::size_t size);
    ZeroedBytes(const ZeroedBytes& other);
    ZeroedBytes& operator=(const ZeroedBytes& other);
    ZeroedBytes(ZeroedBytes&&) noexcept = default;
    ZeroedBytes& operator=(ZeroedBytes&&) noexcept = default;
    std::byte* data() const { return data_.get(); }
    std::size_t size() const { return size_; }

   private:
    struct Free {
      void operator()(std::byte* p) const;
    };
    std::unique_ptr<std::byte, Free> data_;
    std::size_t size_ = 0;
  };
  ZeroedBytes storage_;
  std::vector<std::uint8_t> written_;  // one flag per byte while tracking initialisation
};

// Bookkeeping shared by the allocators: what they report on exhaustion and in the Profile.
struct AllocatorStats {
  std::uint64_t capacity = 0;
  std::uint64_t used = 0;        // bytes held by live allocations (after alignment padding)
  std::uint64_t high_water = 0;  // the most `used` has been
  std::uint64_t live_allocations = 0;
};

// First-fit allocator over an address range with free-list coalescing; for device memories
// (tensors in HBM/DDR) and local memories planned by the compiler.
class FirstFitAllocator {
 public:
  // `where` names the owner ("device", "tpc0"), `memory` the memory for messages.
  FirstFitAllocator(std::string where, std::string memory, std::uint64_t base,
                    std::uint64_t capacity, std::uint64_t alignment);
  explicit FirstFitAllocator(const Memory& memory);

  // Returns the address. Zero bytes take one alignment granule so every allocation has its
  // own address. Exhaustion is a DeviceFault with the size asked, free bytes and largest block.
  std::uint64_t allocate(std::uint64_t bytes, std::uint64_t alignment = 0);
  // UserError when the address is not a live allocation (double free, foreign address).
  void free(std::uint64_t address);
  bool owns(std::uint64_t address) const { return live_.count(address) != 0; }
  std::uint64_t size_of(std::uint64_t address) const;  // UserError if not live

  std::uint64_t free_bytes() const { return stats_.capacity - stats_.used; }
  std::uint64_t largest_free_block() const;
  std::size_t free_block_count() const { return free_.size(); }
  const AllocatorStats& stats() const { return stats_; }
  void reset_high_water() { stats_.high_water = stats_.used; }

 private:
  std::string where_;
  std::string memory_;
  std::uint64_t base_;
  std::uint64_t alignment_;
  std::map<std::uint64_t, std::uint64_t> free_;  // address -> size, never adjacent
  std::map<std::uint64_t, std::uint64_t> live_;  // address -> size held
  AllocatorStats stats_;
};

// LIFO allocator (stack frames, kernel-scoped local buffers): only the most recent live
// allocation may be freed; anything else is a DeviceFault, as the hardware's stack would be
// corrupted.
class StackAllocator {
 public:
  StackAllocator(std::string where, std::string memory, std::uint64_t base, std::uint64_t capacity,
                 std::uint64_t alignment);
  explicit StackAllocator(const Memory& memory);

  std::uint64_t allocate(std::uint64_t bytes, std::uint64_t alignment = 0);
  void free(std::uint64_t address);
  void reset();  // frees everything; keeps the high-water mark

  std::uint64_t top() const { return top_; }  // first free address
  // Address of the most recent live allocation (the only one free() takes); UserError if none.
  std::uint64_t top_frame() const;
  std::uint64_t free_bytes() const { return base_ + stats_.capacity - top_; }
  const AllocatorStats& stats() const { return stats_; }

 private:
  struct Frame {
    std::uint64_t address;  // what allocate returned
    std::uint64_t bytes;    // what was asked
    std::uint64_t previous_top;
  };
  std::string where_;
  std::string memory_;
  std::uint64_t base_;
  std::uint64_t alignment_;
  std::uint64_t top_;
  std::vector<Frame> frames_;
  AllocatorStats stats_;
};

// "12,288 B (12 KiB)"-style sizes for messages.
std::string format_bytes(std::uint64_t bytes);

}  // namespace tessera::sim
