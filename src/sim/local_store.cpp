#include "tessera/sim/local_store.h"

#include <algorithm>
#include <cstring>
#include <iterator>

#include <fmt/format.h>

#include "tessera/core/error.h"

namespace tessera::sim {

LocalStore::LocalStore(const arch::MemorySpec& spec, std::string owner, std::uint64_t limit,
                       std::string limit_reason, std::uint32_t poison)
    : memory_(spec, std::move(owner)),
      limit_(limit == 0 ? memory_.capacity() : limit),
      limit_reason_(std::move(limit_reason)),
      poison_(poison) {
  if (limit_ > memory_.capacity())
    throw_user_error("memory '{}' of {}: a usable size of {} is more than its capacity {}",
                     memory_.name(), memory_.owner(), format_bytes(limit_),
                     format_bytes(memory_.capacity()));
}

void LocalStore::check(std::uint64_t address, std::uint64_t bytes, std::uint64_t granularity,
                       std::string_view op) const {
  const std::uint64_t base = memory_.base();
  const bool below = address < base;
  const std::uint64_t offset = address - base;
  if (below || offset > limit_ || bytes > limit_ - offset) {
    const bool reduced = limit_ < memory_.capacity();
    throw DeviceFault(
        memory_.owner(),
        fmt::format("{} of {} at address 0x{:x} reaches past the {} of {} it may use{}{}; keep "
                    "local memory addresses below 0x{:x}",
                    op, format_bytes(bytes), address, memory_.name(), format_bytes(limit_),
                    reduced ? " (" + limit_reason_ + ")" : std::string(),
                    below ? fmt::format(" (it starts at 0x{:x})", base) : std::string(),
                    base + limit_));
  }
  if (granularity > 1 && offset % granularity != 0)
    throw DeviceFault(memory_.owner(),
                      fmt::format("{} at address 0x{:x} is not aligned: {} is accessed in "
                                  "aligned {}-byte chunks; use an address that is a multiple "
                                  "of {}",
                                  op, address, memory_.name(), granularity, granularity));
}

// Host bytes up to `end` (an offset the checks allowed), grown in pages as accesses reach
// further, so a memory costs the host what its program touches.
void LocalStore::ensure_storage(std::uint64_t end) {
  if (end <= bytes_.size()) return;
  constexpr std::uint64_t kPage = 4096, kMaxHost = std::uint64_t{1} << 30;
  if (end > kMaxHost)
    throw_user_error(
        "memory '{}' of {}: an access at offset {} needs more host storage than the {} Tessera "
        "mirrors for a core's local memory; use less local memory",
        memory_.name(), memory_.owner(), end, format_bytes(kMaxHost));
  const std::size_t old = bytes_.size();
  bytes_.resize(
      static_cast<std::size_t>(std::min(memory_.capacity(), (end + kPage - 1) / kPage * kPage)));
  for (std::size_t i = old; i < bytes_.size(); ++i)
    bytes_[i] = static_cast<std::byte>((poison_ >> (8 * (i % 4))) & 0xffu);
}

template <bool Into>
void LocalStore::transfer(std::uint64_t offset, Buffer<Into> buffer, std::uint64_t bytes) {
  ensure_storage(offset + bytes);
  auto copy_bytes = [](std::byte* memory, Buffer<Into> buf, std::uint64_t n) {
    if constexpr (Into)
      std::memcpy(memory, buf, static_cast<std::size_t>(n));
    else
      std::memcpy(buf, memory, static_cast<std::size_t>(n));
  };
  const std::uint64_t end = offset + bytes;
  if (views_.empty()) {
    copy_bytes(bytes_.data() + offset, buffer, bytes);
    return;
  }
  std::uint64_t at = offset;
  // The first view that ends after `at`; views are few (a kernel's local arrays), so a scan.
  auto view = views_.begin();
  while (at < end) {
    while (view != views_.end() && view->address + view->bytes <= at) ++view;
    if (view == views_.end() || view->address > at) {
      const std::uint64_t stop = view == views_.end() ? end : std::min(end, view->address);
      copy_bytes(bytes_.data() + at, buffer + (at - offset), stop - at);
      at = stop;
      continue;
    }
    const std::uint64_t rel = at - view->address;
    const std::uint64_t within = rel % view->element_bytes;
    const std::uint64_t n = std::min(end - at, view->element_bytes - within);
    copy_bytes(view->host + (rel / view->element_bytes) * view->host_stride + within,
         buffer + (at - offset), n);
    at += n;
  }
}

void LocalStore::read(std::uint64_t address, void* out, std::uint64_t bytes,
                      std::uint64_t granularity, std::string_view op) {
  check(address, bytes, granularity, op);
  transfer<false>(address - memory_.base(), static_cast<std::byte*>(out), bytes);
  ++reads_;
  bytes_read_ += bytes;
  high_water_ = std::max(high_water_, address - memory_.base() + bytes);
}

void LocalStore::write(std::uint64_t address, const void* in, std::uint64_t bytes,
                       std::uint64_t granularity, std::string_view op) {
  check(address, bytes, granularity, op);
  transfer<true>(address - memory_.base(), static_cast<const std::byte*>(in), bytes);
  ++writes_;
  bytes_written_ += bytes;
  high_water_ = std::max(high_water_, address - memory_.base() + bytes);
}

void LocalStore::attach(std::uint64_t address, std::byte* host, std::uint64_t count,
                        std::uint64_t element_bytes, std::uint64_t host_stride, bool take_memory,
                        std::string_view op) {
  if (element_bytes == 0 || host_stride < element_bytes || host == nullptr)
    throw_internal_error("LocalStore::attach: elements of {} bytes {} bytes apart at {}",
                         element_bytes, host_stride, static_cast<void*>(host));
  const std::uint64_t bytes = count * element_bytes;
  check(address, bytes, 1, op);
  const std::uint64_t offset = address - memory_.base();
  auto at = std::lower_bound(views_.begin(), views_.end(), offset,
                             [](const View& v, std::uint64_t a) { return v.address < a; });
  const bool overlaps_next = at != views_.end() && at->address < offset + bytes;
  const bool overlaps_previous =
      at != views_.begin() && std::prev(at)->address + std::prev(at)->bytes > offset;
  if (bytes > 0 && (overlaps_next || overlaps_previous))
    throw_user_error(
        "{}: {} of {} at 0x{:x} overlaps an object already placed there; each local object "
        "needs addresses of its own",
        op, format_bytes(bytes), memory_.name(), address);
  if (bytes == 0) return;
  // Before inserting: the copy goes between the elements and the memory's own bytes.
  ensure_storage(offset + bytes);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::byte* memory = bytes_.data() + offset + i * element_bytes;
    std::byte* element = host + i * host_stride;
    if (take_memory)
      std::memcpy(element, memory, static_cast<std::size_t>(element_bytes));
    else
      std::memcpy(memory, element, static_cast<std::size_t>(element_bytes));
  }
  views_.insert(at, View{offset, bytes, host, element_bytes, host_stride});
  high_water_ = std::max(high_water_, offset + bytes);
}

void LocalStore::detach(std::uint64_t address) {
  const std::uint64_t offset = address - memory_.base();
  auto it = std::find_if(views_.begin(), views_.end(),
                         [offset](const View& v) { return v.address == offset; });
  if (it == views_.end())
    throw_user_error("memory '{}' of {}: no object is attached at 0x{:x}", memory_.name(),
                     memory_.owner(), address);
  const View v = *it;
  views_.erase(it);
  for (std::uint64_t i = 0; i < v.bytes / v.element_bytes; ++i)
    std::memcpy(bytes_.data() + v.address + i * v.element_bytes, v.host + i * v.host_stride,
                static_cast<std::size_t>(v.element_bytes));
}

}  // namespace tessera::sim
