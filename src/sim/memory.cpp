#include "tessera/sim/memory.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "tessera/core/error.h"

namespace tessera::sim {
namespace {

// Host mirrors are for core-scope memories (KiB to MiB); bigger memories keep bytes per buffer.
constexpr std::uint64_t kMaxHostBacking = std::uint64_t{1} << 30;

const char* verb(AccessKind kind) {
  return kind == AccessKind::read ? "reads" : "writes";
}

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

std::uint64_t figure_u64(const arch::Figure& f) {
  return f.value > 0 ? static_cast<std::uint64_t>(f.value) : 0;
}

void check_allocator_args(const std::string& memory, std::uint64_t capacity,
                          std::uint64_t alignment) {
  if (capacity == 0) throw_user_error("allocator for memory '{}': capacity is 0 bytes", memory);
  if (alignment == 0 || !std::has_single_bit(alignment))
    throw_user_error("allocator for memory '{}': alignment {} is not a power of two", memory,
                     alignment);
}

std::uint64_t pick_alignment(std::uint64_t asked, std::uint64_t fallback,
                             const std::string& memory) {
  std::uint64_t a = asked == 0 ? fallback : std::max(asked, fallback);
  if (!std::has_single_bit(a))
    throw_user_error("allocation in '{}': alignment {} is not a power of two", memory, asked);
  return a;
}

// Per bank: the distinct start addresses of a group's accesses that touch it, and which
// accesses do (ascending). Kept per host thread and reused: a vector instruction asks for every
// repeat, and building fresh containers each time was a large share of host time.
struct BankUse {
  std::vector<std::uint64_t> addresses;
  std::vector<std::size_t> accesses;
};
struct BankUsers {
  std::vector<BankUse> banks;          // index: bank
  std::vector<std::uint32_t> touched;  // banks with users, ascending
};

const BankUsers& bank_users(const Memory& memory, std::span<const Access> group) {
  thread_local BankUsers users;
  for (std::uint32_t bank : users.touched) {
    users.banks[bank].addresses.clear();
    users.banks[bank].accesses.clear();
  }
  users.touched.clear();
  const std::uint64_t banks = memory.banks();
  if (users.banks.size() < banks) users.banks.resize(banks);
  for (std::size_t i = 0; i < group.size(); ++i) {
    memory.check_bounds(group[i].address, group[i].bytes, "banked access");
    std::uint64_t offset = group[i].address - memory.base();
    std::uint64_t first = offset / memory.bank_width();
    std::uint64_t last =
        (offset + std::max<std::uint64_t>(group[i].bytes, 1) - 1) / memory.bank_width();
    // An access wider than all banks touches every bank once.
    if (last - first + 1 > banks) last = first + banks - 1;
    for (std::uint64_t granule = first; granule <= last; ++granule) {
      const auto bank = static_cast<std::uint32_t>(granule % banks);
      auto& [addresses, accesses] = users.banks[bank];
      if (accesses.empty()) users.touched.push_back(bank);
      if (std::find(addresses.begin(), addresses.end(), group[i].address) == addresses.end())
        addresses.push_back(group[i].address);
      if (accesses.empty() || accesses.back() != i) accesses.push_back(i);
    }
  }
  std::sort(users.touched.begin(), users.touched.end());
  return users;
}

}  // namespace

std::string format_bytes(std::uint64_t bytes) {
  std::string digits = std::to_string(bytes);
  std::string grouped;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  if (bytes >= (std::uint64_t{1} << 30) && bytes % (std::uint64_t{1} << 30) == 0)
    return fmt::format("{} B ({} GiB)", grouped, bytes >> 30);
  if (bytes >= (std::uint64_t{1} << 20) && bytes % (std::uint64_t{1} << 20) == 0)
    return fmt::format("{} B ({} MiB)", grouped, bytes >> 20);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} B ({} KiB)", grouped, bytes >> 10);
  return grouped + " B";
}

// ---------------------------------------------------------------------------------------------
// Memory

Memory::Memory(const arch::MemorySpec& spec, std::string owner, Backing backing)
    : name_(spec.name),
      owner_(std::move(owner)),
      base_(figure_u64(spec.base_address)),
      capacity_(figure_u64(spec.capacity_bytes)),
      alignment_(std::max<std::uint64_t>(1, figure_u64(spec.alignment_bytes))),
      banks_(static_cast<std::uint32_t>(std::max<std::uint64_t>(1, figure_u64(spec.banks)))),
      bank_width_(figure_u64(spec.bank_width_bytes)) {
  if (capacity_ == 0)
    throw_user_error("memory '{}' of {}: capacity_bytes must be positive", name_, owner_);
  if (!std::has_single_bit(alignment_))
    throw_user_error("memory '{}' of {}: alignment_bytes {} is not a power of two", name_, owner_,
                     alignment_);
  if (banks_ > 1 && bank_width_ == 0)
    throw_user_error("memory '{}' of {}: {} banks need a positive bank_width_bytes", name_, owner_,
                     banks_);
  if (backing == Backing::host) {
    if (capacity_ > kMaxHostBacking)
      throw_user_error(
          "memory '{}' of {} holds {}; host storage is only mirrored for memories up "
          "to {} (keep device memory per buffer, as runtime::Device does)",
          name_, owner_, format_bytes(capacity_), format_bytes(kMaxHostBacking));
    storage_ = ZeroedBytes(static_cast<std::size_t>(capacity_));
  }
}

Memory::ZeroedBytes::ZeroedBytes(std::size_t size)
    : data_(static_cast<std::byte*>(std::calloc(size, 1))), size_(size) {
  if (!data_) throw_user_error("host storage of {}: out of host memory", format_bytes(size));
}

Memory::ZeroedBytes::ZeroedBytes(const ZeroedBytes& other) : ZeroedBytes() {
  *this = other;
}

Memory::ZeroedBytes& Memory::ZeroedBytes::operator=(const ZeroedBytes& other) {
  if (this == &other) return *this;
  ZeroedBytes copy;
  if (other.size_ != 0) {
    copy = ZeroedBytes(other.size_);
    std::memcpy(copy.data(), other.data(), other.size_);
  }
  return *this = std::move(copy);
}

void Memory::ZeroedBytes::Free::operator()(std::byte* p) const { std::free(p); }

void Memory::check_bounds(std::uint64_t address, std::uint64_t bytes, std::string_view op,
                          AccessKind kind) const {
  bool below = address < base_;
  bool above = !below && (address - base_ > capacity_ || bytes > capacity_ - (address - base_));
  if (!below && !above) return;
  std::string detail;
  if (below) {
    detail = fmt::format("{} {} {} at 0x{:x}, below the start of {} (0x{:x})", op, verb(kind),
                         format_bytes(bytes), address, name_, base_);
  } else {
    std::uint64_t past = address + bytes - end();
    if (address + bytes < address) past = std::numeric_limits<std::uint64_t>::max() - end();
    detail = fmt::format("{} {} {} at 0x{:x}, {} past the end of {}", op, verb(kind),
                         format_bytes(bytes), address, format_bytes(past), name_);
  }
  throw DeviceFault(owner_,
                    fmt::format("{} ({}, addresses 0x{:x} to 0x{:x}); keep the access inside "
                                "the memory: use smaller tiles or fix the offset",
                                detail, format_bytes(capacity_), base_, end() - 1));
}

void Memory::check_alignment(std::uint64_t address, std::string_view op,
                             std::uint64_t alignment) const {
  std::uint64_t a = alignment == 0 ? alignment_ : alignment;
  if (a <= 1 || (address - base_) % a == 0) return;
  throw DeviceFault(
      owner_, fmt::format("{} at address 0x{:x} in {} is misaligned: {} needs {}-byte "
                          "alignment (0x{:x} is {} bytes past a boundary); align the "
                          "address down to 0x{:x} or up to 0x{:x}",
                          op, address, name_, name_, a, address, (address - base_) % a,
                          address - (address - base_) % a, address - (address - base_) % a + a));
}

void Memory::check_access(std::uint64_t address, std::uint64_t bytes, std::string_view op,
                          AccessKind kind, std::uint64_t alignment) const {
  check_bounds(address, bytes, op, kind);
  check_alignment(address, op, alignment);
}

void Memory::set_track_initialisation(bool enabled) {
  if (enabled)
    written_.assign(capacity_, 0);
  else
    std::vector<std::uint8_t>().swap(written_);
}

void Memory::clear_initialised() { std::fill(written_.begin(), written_.end(), 0); }

void Memory::mark_initialised(std::uint64_t address, std::uint64_t bytes) {
  if (written_.empty()) return;
  check_bounds(address, bytes, "write", AccessKind::write);
  std::fill_n(written_.begin() + static_cast<std::ptrdiff_t>(address - base_), bytes, 1);
}

std::uint64_t Memory::first_uninitialised(std::uint64_t address, std::uint64_t bytes) const {
  if (written_.empty()) return address + bytes;
  check_bounds(address, bytes, "read");
  for (std::uint64_t a = address; a < address + bytes; ++a)
    if (written_[a - base_] == 0) return a;
  return address + bytes;
}

void Memory::check_initialised(std::uint64_t address, std::uint64_t bytes,
                               std::string_view op) const {
  const std::uint64_t first = first_uninitialised(address, bytes);
  if (first == address + bytes) return;
  throw DeviceFault(owner_, fmt::format("{} reads {} at 0x{:x}, but byte 0x{:x} of {} was never "
                                        "written; write it (a DMA or a computation) before reading",
                                        op, format_bytes(bytes), address, first, name_));
}

std::uint32_t Memory::bank_of(std::uint64_t address) const {
  if (banks_ <= 1) return 0;
  return static_cast<std::uint32_t>(((address - base_) / bank_width_) % banks_);
}

std::vector<BankConflict> Memory::bank_conflicts(std::span<const Access> group) const {
  if (banks_ <= 1) return {};
  const BankUsers& users = bank_users(*this, group);
  std::vector<BankConflict> conflicts;
  for (std::uint32_t bank : users.touched)
    if (users.banks[bank].addresses.size() >= 2)
      conflicts.push_back(BankConflict{bank, users.banks[bank].accesses});
  return conflicts;
}

std::uint64_t Memory::bank_conflict_cycles(std::span<const Access> group) const {
  if (banks_ <= 1) return 0;
  const BankUsers& users = bank_users(*this, group);
  std::size_t worst = 1;
  for (std::uint32_t bank : users.touched)
    worst = std::max(worst, users.banks[bank].addresses.size());
  return worst - 1;
}

void Memory::check_no_bank_conflicts(std::span<const Access> group, std::string_view op) const {
  auto conflicts = bank_conflicts(group);
  if (conflicts.empty()) return;
  const auto& c = conflicts.front();
  std::string addresses;
  for (std::size_t i : c.accesses)
    addresses += fmt::format("{}0x{:x}", addresses.empty() ? "" : ", ", group[i].address);
  throw DeviceFault(owner_,
                    fmt::format("{} has a bank conflict in {}: accesses {} hit bank {} of {} "
                                "(bank width {} B) at different addresses; place the "
                                "operands in different banks",
                                op, name_, addresses, c.bank, banks_, bank_width_));
}

std::span<std::byte> Memory::bytes(std::uint64_t address, std::uint64_t size, std::string_view op,
                                   AccessKind kind) {
  if (!has_storage())
    throw_user_error("memory '{}' of {} has no host storage; construct it with Backing::host",
                     name_, owner_);
  check_bounds(address, size, op, kind);
  return {storage_.data() + (address - base_), static_cast<std::size_t>(size)};
}

std::span<const std::byte> Memory::bytes(std::uint64_t address, std::uint64_t size,
                                         std::string_view op) const {
  if (!has_storage())
    throw_user_error("memory '{}' of {} has no host storage; construct it with Backing::host",
                     name_, owner_);
  check_bounds(address, size, op, AccessKind::read);
  return {storage_.data() + (address - base_), static_cast<std::size_t>(size)};
}

// ---------------------------------------------------------------------------------------------
// FirstFitAllocator

FirstFitAllocator::FirstFitAllocator(std::string where, std::string memory, std::uint64_t base,
                                     std::uint64_t capacity, std::uint64_t alignment)
    : where_(std::move(where)), memory_(std::move(memory)), base_(base), alignment_(alignment) {
  check_allocator_args(memory_, capacity, alignment);
  stats_.capacity = capacity;
  free_[base_] = capacity;
}

FirstFitAllocator::FirstFitAllocator(const Memory& memory)
    : FirstFitAllocator(memory.owner(), memory.name(), memory.base(), memory.capacity(),
                        memory.alignment()) {}

std::uint64_t FirstFitAllocator::allocate(std::uint64_t bytes, std::uint64_t alignment) {
  std::uint64_t a = pick_alignment(alignment, alignment_, memory_);
  std::uint64_t size = align_up(std::max<std::uint64_t>(bytes, 1), alignment_);
  if (size < bytes) size = std::numeric_limits<std::uint64_t>::max();  // overflow: cannot fit
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    std::uint64_t block = it->first;
    std::uint64_t block_size = it->second;
    std::uint64_t start = align_up(block, a);
    std::uint64_t pad = start - block;
    if (pad > block_size || block_size - pad < size) continue;
    free_.erase(it);
    if (pad > 0) free_[block] = pad;
    if (block_size - pad > size) free_[start + size] = block_size - pad - size;
    live_[start] = size;
    stats_.used += size;
    stats_.high_water = std::max(stats_.high_water, stats_.used);
    ++stats_.live_allocations;
    return start;
  }
  throw DeviceFault(where_,
                    fmt::format("allocating {} in {} failed: {} of {} free, largest free "
                                "block {}, {} live allocations; free buffers earlier, use "
                                "smaller tensors or tiles, or pick a preset with more {}",
                                format_bytes(bytes), memory_, format_bytes(free_bytes()),
                                format_bytes(stats_.capacity), format_bytes(largest_free_block()),
                                stats_.live_allocations, memory_));
}

void FirstFitAllocator::free(std::uint64_t address) {
  auto it = live_.find(address);
  if (it == live_.end())
    throw_user_error(
        "{}: freeing address 0x{:x} in {} which is not a live allocation (freed twice, "
        "or never allocated here)",
        where_, address, memory_);
  std::uint64_t size = it->second;
  live_.erase(it);
  stats_.used -= size;
  --stats_.live_allocations;
  auto [pos, inserted] = free_.emplace(address, size);
  TESSERA_CHECK(inserted, "free block at 0x{:x} already in the free list", address);
  // Coalesce with the following block, then with the preceding one.
  auto next = std::next(pos);
  if (next != free_.end() && pos->first + pos->second == next->first) {
    pos->second += next->second;
    free_.erase(next);
  }
  if (pos != free_.begin()) {
    auto prev = std::prev(pos);
    if (prev->first + prev->second == pos->first) {
      prev->second += pos->second;
      free_.erase(pos);
    }
  }
}

std::uint64_t FirstFitAllocator::size_of(std::uint64_t address) const {
  auto it = live_.find(address);
  if (it == live_.end())
    throw_user_error("{}: address 0x{:x} is not a live allocation in {}", where_, address, memory_);
  return it->second;
}

std::uint64_t FirstFitAllocator::largest_free_block() const {
  std::uint64_t largest = 0;
  for (const auto& [address, size] : free_) largest = std::max(largest, size);
  return largest;
}

// ---------------------------------------------------------------------------------------------
// StackAllocator

StackAllocator::StackAllocator(std::string where, std::string memory, std::uint64_t base,
                               std::uint64_t capacity, std::uint64_t alignment)
    : where_(std::move(where)),
      memory_(std::move(memory)),
      base_(base),
      alignment_(alignment),
      top_(base) {
  check_allocator_args(memory_, capacity, alignment);
  stats_.capacity = capacity;
}

StackAllocator::StackAllocator(const Memory& memory)
    : StackAllocator(memory.owner(), memory.name(), memory.base(), memory.capacity(),
                     memory.alignment()) {}

std::uint64_t StackAllocator::allocate(std::uint64_t bytes, std::uint64_t alignment) {
  std::uint64_t a = pick_alignment(alignment, alignment_, memory_);
  std::uint64_t start = align_up(top_, a);
  std::uint64_t size = align_up(std::max<std::uint64_t>(bytes, 1), alignment_);
  std::uint64_t end = base_ + stats_.capacity;
  if (size < bytes || start > end || size > end - start)
    throw DeviceFault(where_,
                      fmt::format("stack allocation of {} in {} failed: {} of {} free above "
                                  "the top 0x{:x} (largest free block {}), {} live frames; "
                                  "free frames first or use smaller buffers",
                                  format_bytes(bytes), memory_, format_bytes(free_bytes()),
                                  format_bytes(stats_.capacity), top_,
                                  format_bytes(start > end ? 0 : end - start), frames_.size()));
  frames_.push_back({start, bytes, top_});
  top_ = start + size;
  stats_.used = top_ - base_;
  stats_.high_water = std::max(stats_.high_water, stats_.used);
  stats_.live_allocations = frames_.size();
  return start;
}

std::uint64_t StackAllocator::top_frame() const {
  if (frames_.empty())
    throw_user_error("{} of {}: the stack has no live allocation", memory_, where_);
  return frames_.back().address;
}

void StackAllocator::free(std::uint64_t address) {
  if (frames_.empty())
    throw DeviceFault(where_, fmt::format("freeing 0x{:x} in {} but the stack is empty; free each "
                                          "allocation once, in reverse order",
                                          address, memory_));
  const Frame& frame = frames_.back();
  if (frame.address != address) {
    bool live = std::any_of(frames_.begin(), frames_.end(),
                            [&](const Frame& f) { return f.address == address; });
    throw DeviceFault(
        where_,
        fmt::format("LIFO violation in {}: freeing 0x{:x} ({}) but the top of "
                    "the stack is 0x{:x} ({}); free allocations in reverse "
                    "order of allocation",
                    memory_, address, live ? "a live frame below the top" : "not a live frame",
                    frame.address, format_bytes(frame.bytes)));
  }
  top_ = frame.previous_top;
  frames_.pop_back();
  stats_.used = top_ - base_;
  stats_.live_allocations = frames_.size();
}

void StackAllocator::reset() {
  frames_.clear();
  top_ = base_;
  stats_.used = 0;
  stats_.live_allocations = 0;
}

}  // namespace tessera::sim
