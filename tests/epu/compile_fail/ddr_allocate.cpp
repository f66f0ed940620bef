// Must not compile: MemAllocator places OCM tensors only.
#include <epu.hpp>

void place_ddr() {
  MemAllocator mem;
  DdrTensor<std::int32_t, 1, 1, 16, 16> t;
  mem.allocate(t);
}
