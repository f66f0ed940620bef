// A 3x3 Gaussian blur over a 2048x4096 image of 16-bit pixels (16 MiB in DDR, twice the OCM):
// streamed through OCM in 18-row bands with memCpy's height offset, each band flowed into the
// array in two 16x2048 regions of interest with YX_BORDER (so tiles see their neighbours),
// blurred with the weights staged for broadcast, and written back (spec 004's data flow:
// DDR -> OCM -> array -> OCM -> DDR). Checked against a host loop.
#include <memory>

#include "example_common.h"

int main() {
  return example::run([] {
    using Fx = FixedPoint16<4>;  // pixels 0..255 with 4 fractional bits; 1/16, 2/16, 4/16 exact
    constexpr std::size_t H = 2048, W = 4096, Band = 16;
    typedef DdrTensor<Fx, 1, 1, H + 2, W> DdrPadded;  // a zero row above and below
    typedef DdrTensor<Fx, 1, 1, H, W> DdrImage;
    typedef OcmTensor<Fx, 1, 1, Band + 2, W> OcmBand;
    typedef OcmTensor<Fx, 1, 1, Band, W> OcmOut;
    typedef OcmTensor<Fx, 1, 1, Band, W / 2> Roi;  // 128 tiles: 64 KiB per flow
    typedef OcmTensor<Fx, 1, 1, 1, 12> Kernel;     // 9 taps padded to 3 POPs
    typedef OcmTensor<char, 1, 1, 1, 12> KernelDesc;

    auto in = std::make_unique<DdrPadded>();
    auto out = std::make_unique<DdrImage>();
    for (std::size_t r = 0; r < H; ++r)
      for (std::size_t c = 0; c < W; ++c) in->at(0, 0, r + 1, c) = Fx(static_cast<int>((r * 7 + c * 13 + (r * c) % 31) % 256));
    MemAllocator ocmMem;
    OcmBand band;
    OcmOut outBand;
    Kernel weights;
    ocmMem.allocate(band);
    ocmMem.allocate(outBand);
    ocmMem.allocate(weights);
    const int taps[9] = {1, 2, 1, 2, 4, 2, 1, 2, 1};
    for (int k = 0; k < 9; ++k) weights.data()[k] = Fx::fromRaw(taps[k]);  // taps / 16

    auto regs = std::make_unique<std::array<qVar_t<Fx>, Roi::NUM_TILES>>();
    qVar_t<Fx>(&x)[Roi::NUM_TILES] = *reinterpret_cast<qVar_t<Fx>(*)[Roi::NUM_TILES]>(regs->data());
    for (std::size_t r = 0; r < H; r += Band) {
      memCpy(*in, band, 0, 0, r, 0);  // padded rows r .. r + 17: image rows r - 1 .. r + 16
      for (std::size_t w = 0; w < W; w += W / 2) {
        fetchTilesInRoi<Roi, IteratorType::YX_BORDER>(band, x, 0, 0, 1, w);
        for (auto& tile : x) {
          BroadcastStream::stage<Kernel, KernelDesc>(weights);
          qVar_t<Fx> input[1];
          input[0] = tile;
          tile = NN::convTileBlockFx16<Fx, 3>(input, 1);
        }
        writeTilesInRoi<Roi>(x, outBand, 0, 0, 0, w);
      }
      memCpy(outBand, *out, 0, 0, r, 0);
    }

    for (std::size_t r = 0; r < H; r += 61)
      for (std::size_t c = 0; c < W; ++c) {
        std::int32_t acc = 0;
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx) {
            const long cc = static_cast<long>(c) + kx - 1;
            if (cc >= 0 && cc < static_cast<long>(W)) acc += taps[ky * 3 + kx] * in->at(0, 0, r + static_cast<std::size_t>(ky), static_cast<std::size_t>(cc)).raw;
          }
        example::check(out->at(0, 0, r, c).raw, Fx::fromRaw((acc + 8) >> 4).raw, "blur");
      }
    example::summary("gaussian_blur");
  });
}
