// A core-local memory of a running TPC program instance (spec 000 §2.3.3, §2.5.3): the preset's
// sim::Memory checks alignment and bounds, a sim::StackAllocator carves the kernel's __local__
// arrays (they live on the kernel's stack, so they are freed in LIFO order) and raises the
// capacity DeviceFault. Host bytes of the arrays are kept apart, because a host vector value is
// larger than its 2048 bits (it carries its ready cycle). Internal to the TPC target.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/sim/memory.h"

namespace tessera::tpc::detail {

struct LocalMemory {
  LocalMemory(const arch::MemorySpec& spec, const std::string& core, std::uint64_t limit)
      : memory(spec, core),
        stack(core, spec.name, memory.base(), std::min(limit, memory.capacity()),
              memory.alignment()) {}
  sim::Memory memory;
  sim::StackAllocator stack;
};

}  // namespace tessera::tpc::detail
