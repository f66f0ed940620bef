// DDR -> OCM with regions of interest (spec 004 "Data movement DDR <-> OCM"): a 25-row DDR
// tensor copied to OCM in 12-row regions at height offsets, then back to a second DDR tensor.
#include "example_common.h"

int main() {
  return example::run([] {
    MemAllocator ocmMem;
    DdrTensor<std::int32_t, 1, 2, 24, 63> ddrIn, ddrOut;
    OcmTensor<std::int32_t, 1, 2, 12, 63> ocm;
    ocmMem.allocate(ocm);
    for (std::size_t i = 0; i < 2 * 24 * 63; ++i) ddrIn[i] = static_cast<std::int32_t>(i * 7);
    for (std::size_t h = 0; h < 24; h += 12) {
      memCpy(ddrIn, ocm, 0, 0, h, 0);  // batch, channel, height, width offsets into DDR
      memCpy(ocm, ddrOut, 0, 0, h, 0);
    }
    for (std::size_t i = 0; i < 2 * 24 * 63; ++i) example::check(ddrOut[i], ddrIn[i], "round trip");
    example::check(ocm.at(0, 1, 0, 5), ddrIn.at(0, 1, 12, 5), "last region in OCM");
    example::summary("memcpy_roi");
  });
}
