// RAU with strided offsets (spec 004 "RAU (Random Access)"): every core loads every other row
// and column of a 32x32 tensor (a 2x downscale), then stores it transposed into another.
#include "example_common.h"

int main() {
  return example::run([] {
    MemAllocator ocmMem;
    typedef OcmTensor<std::int32_t, 1, 1, 32, 32> Shape;
    Shape src, dst;
    ocmMem.allocate(src);
    ocmMem.allocate(dst);
    for (std::size_t i = 0; i < Shape::kLinear; ++i) src.data()[i] = static_cast<std::int32_t>(i);
    const qVar_t<std::uint32_t> zero = 0;
    const qVar_t<std::uint32_t> rowOffset = qRow<> * 2;
    const qVar_t<std::uint32_t> colOffset = qCol<> * 2;
    Rau::config(src);
    const qVar_t<std::int32_t> half = Rau::Load::oneTile(zero, zero, rowOffset, colOffset, src);
    Rau::config(dst);
    Rau::Store::oneTile(zero, zero, qCol<>, qRow<>, half, dst);  // transposed
    for (std::uint32_t r = 0; r < Epu::coreDim; ++r)
      for (std::uint32_t c = 0; c < Epu::coreDim; ++c) {
        example::check(half.at(r, c), static_cast<std::int32_t>(2 * r * 32 + 2 * c), "strided load");
        example::check(dst.at(0, 0, c, r), half.at(r, c), "transposed store");
      }
    std::printf("core (3,5) loaded element (6,10) = %d\n", half.at(3, 5));
    example::summary("rau_strided");
  });
}
