// Broadcast with POP and PEEK (spec 004 "Broadcast to Array"): a 16x16 int32 tensor staged and
// consumed two elements per 64-bit POP; each core scales the sum by its own row.
#include "example_common.h"

int main() {
  return example::run([] {
    typedef OcmTensor<std::int32_t, 1, 1, Epu::coreDim, Epu::coreDim> OcmInOutShape;
    typedef OcmTensor<char, 1, 1, Epu::coreDim, Epu::coreDim> RoiShapeDesc;
    OcmInOutShape ocmInp;
    for (std::size_t i = 0; i < OcmInOutShape::kLinear; ++i) ocmInp.data()[i] = static_cast<std::int32_t>(i);
    BroadcastStream::stage<OcmInOutShape, RoiShapeDesc>(ocmInp);
    constexpr std::int32_t numBroadcasts32 = OcmInOutShape::linearElemCount / getNumberOfWeightRegisters<std::int32_t>();
    qVar_t<std::int32_t> arr[getNumberOfWeightRegisters<std::int32_t>()];
    qVar_t<std::int32_t> out = 0;
    for (std::int32_t i = 0; i < numBroadcasts32; i++) {
      arr[0] = qBroadcast<0, std::int32_t, BroadcastAction::POP>;  // the next 64 bits
      arr[1] = qBroadcast<1, std::int32_t>;                        // PEEK: same register
      out += (arr[0] + arr[1]) * (qRow<std::int32_t> + 1);
    }
    const long total = static_cast<long>(OcmInOutShape::kLinear) * (OcmInOutShape::kLinear - 1) / 2;
    for (std::uint32_t r = 0; r < Epu::coreDim; ++r) example::check(out.at(r, 3), total * (r + 1), "row sum");
    std::printf("%d POPs; core (2,3) holds %d\n", numBroadcasts32, out.at(2, 3));
    example::summary("broadcast");
  });
}
