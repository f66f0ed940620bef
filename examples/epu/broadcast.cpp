// Broadcast with POP and PEEK (spec 004 "Broadcast to Array"): a 16x16 int32 tensor staged and
// consumed two elements per 64-bit POP; each core scales the sum by its own row. Then int16
// elements, four per POP, read into the same int32 registers (spec 004 "OPTION 1").
#include "example_common.h"

int main() {
  return example::run([] {
    typedef OcmTensor<std::int32_t, 1, 1, Epu::coreDim, Epu::coreDim> OcmInOutShape;
    typedef OcmTensor<char, 1, 1, Epu::coreDim, Epu::coreDim> RoiShapeDesc;
    OcmInOutShape ocmInp;
    for (std::size_t i = 0; i < OcmInOutShape::kLinear; ++i) ocmInp.data()[i] = static_cast<std::int32_t>(i);
    BroadcastStream::stage<OcmInOutShape, RoiShapeDesc>(ocmInp);
    constexpr std::int32_t numBroadcasts32 = OcmInOutShape::linearElemCount / getNumberOfWeightRegisters<std::int32_t>();
    // As spec 004 declares it: room for the 8 int8 elements of a POP, in int32 registers.
    qVar_t<std::int32_t> arr[getNumberOfWeightRegisters<std::int8_t>()];
    qVar_t<std::int32_t> out = 0;
    for (std::int32_t i = 0; i < numBroadcasts32; i++) {
      arr[0] = qBroadcast<0, std::int32_t, BroadcastAction::POP>;  // the next 64 bits
      arr[1] = qBroadcast<1, std::int32_t>;                        // PEEK: same register
      out += (arr[0] + arr[1]) * (qRow<std::int32_t> + 1);
    }
    const long total = static_cast<long>(OcmInOutShape::kLinear) * (OcmInOutShape::kLinear - 1) / 2;
    for (std::uint32_t r = 0; r < Epu::coreDim; ++r) example::check(out.at(r, 3), total * (r + 1), "row sum");
    std::printf("%d POPs; core (2,3) holds %d\n", numBroadcasts32, out.at(2, 3));
    // OPTION 1 with int16 elements, 4 per POP, widened into the same int32 registers.
    typedef OcmTensor<std::int16_t, 1, 1, Epu::coreDim, Epu::coreDim> Ocm16;
    Ocm16 ocm16;
    long total16 = 0;
    for (std::size_t i = 0; i < Ocm16::kLinear; ++i) {
      ocm16.data()[i] = static_cast<std::int16_t>(static_cast<long>(i) * 200 - 25000);
      total16 += ocm16.data()[i];
    }
    BroadcastStream::stage<Ocm16, RoiShapeDesc>(ocm16);
    constexpr std::int32_t numBroadcasts16 = Ocm16::linearElemCount / getNumberOfWeightRegisters<std::int16_t>();
    qVar_t<std::int32_t> sum16 = 0;
    for (std::int32_t i = 0; i < numBroadcasts16; i++) {
      arr[0] = qBroadcast<0, std::int16_t, BroadcastAction::POP>;
      arr[1] = qBroadcast<1, std::int16_t>;
      arr[2] = qBroadcast<2, std::int16_t>;
      arr[3] = qBroadcast<3, std::int16_t>;
      sum16 += arr[0] + arr[1] + arr[2] + arr[3];
    }
    example::check(sum16.at(5, 5), total16, "int16 sum in int32 registers");
    std::printf("%d int16 POPs; sum %d\n", numBroadcasts16, sum16.at(5, 5));
    example::summary("broadcast");
  });
}
