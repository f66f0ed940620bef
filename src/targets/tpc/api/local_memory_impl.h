// A core-local memory of a TPC core during one launch (spec 000 §2.3.3, §2.5.3): the preset's
// memory as addressable bytes (sim::LocalStore: bounds, access granularity, poison, the host
// objects attached at their addresses) and a sim::StackAllocator that carves the kernel's
// __local__ arrays (they live on the kernel's stack, so they are freed in LIFO order) and raises
// the capacity DeviceFault. It outlives the core's program instances of the launch, so what one
// leaves in it the next finds (§2.6.4). Internal to the TPC target.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "tessera/sim/local_store.h"
#include "tessera/sim/memory.h"

namespace tessera::tpc::detail {

struct LocalMemory {
  // `limit`: usable bytes (0: all of it), less when special functions take the rest.
  LocalMemory(const arch::MemorySpec& spec, const std::string& core, std::uint64_t limit,
              std::string limit_reason = {})
      : store(spec, core, limit, std::move(limit_reason)),
        stack(core, spec.name, store.memory().base(), store.limit(), store.memory().alignment()) {}
  sim::LocalStore store;
  sim::StackAllocator stack;
};

}  // namespace tessera::tpc::detail
