// A 3x3 convolution with staged weights (spec 004 "OPTION 2 Use convolution"): four input
// channels fetched depth-first (ZY_BORDER), their 36 weights staged for broadcast before each
// output tile, and NN::convTileBlockFx16 consuming them; checked against a host loop doing the
// same fixed-point arithmetic.
#include "example_common.h"

int main() {
  return example::run([] {
    constexpr int numFracBits = 8;
    using Fx = FixedPoint16<numFracBits>;
    typedef OcmTensor<Fx, 1, 4, 32, 32> InShape;
    typedef OcmTensor<Fx, 1, 1, 32, 32> OutShape;
    typedef OcmTensor<Fx, 1, 1, 1, 36> WeightTensorShape;
    typedef OcmTensor<char, 1, 1, 1, 36> RoiShapeDesc;
    InShape in;
    OutShape out;
    WeightTensorShape Weights;
    for (std::size_t i = 0; i < InShape::kLinear; ++i) in.data()[i] = Fx::fromRaw(static_cast<std::int32_t>((i * 53) % 97) - 48);
    for (std::size_t k = 0; k < 36; ++k) Weights.data()[k] = Fx::fromRaw(static_cast<std::int32_t>((k * 29) % 61) - 30);

    qVar_t<Fx> x[InShape::NUM_TILES];
    fetchAllTiles<IteratorType::ZY_BORDER>(in, x);  // the 4 channels of a position are adjacent
    qVar_t<Fx> y[OutShape::NUM_TILES];
    for (std::int32_t pos = 0; pos < OutShape::NUM_TILES; pos++) {
      BroadcastStream::stage<WeightTensorShape, RoiShapeDesc>(Weights);
      qVar_t<Fx> input[4];
      for (int c = 0; c < 4; ++c) input[c] = x[pos * 4 + c];
      y[pos] = NN::convTileBlockFx16<Fx, 3>(input, 4);
    }
    writeAllTiles<IteratorType::ZY_NO_BORDER>(y, out);  // the same positions, one channel

    auto at = [&](std::size_t c, long r, long col) -> std::int32_t {
      return (r < 0 || r >= 32 || col < 0 || col >= 32) ? 0 : in.at(0, c, static_cast<std::size_t>(r), static_cast<std::size_t>(col)).raw;
    };
    for (long r = 0; r < 32; ++r)
      for (long c = 0; c < 32; ++c) {
        std::int32_t acc = 0;
        for (std::size_t ch = 0; ch < 4; ++ch)
          for (long ky = 0; ky < 3; ++ky)
            for (long kx = 0; kx < 3; ++kx) acc += Weights.data()[ch * 9 + static_cast<std::size_t>(ky * 3 + kx)].raw * at(ch, r + ky - 1, c + kx - 1);
        example::check(out.at(0, 0, static_cast<std::size_t>(r), static_cast<std::size_t>(c)).raw, Fx::fromRaw((acc + 128) >> 8).raw, "conv");
      }
    example::summary("conv3x3");
  });
}
