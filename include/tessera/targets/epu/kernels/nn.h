// The EPU's neural-network tile kernels (the SDK's NN namespace), written against api/epu.h.
// convTileBlockFx16 is spec 004's "OPTION 2": a KxK convolution of one output tile that reads
// its weights from the staged broadcast (BroadcastStream::stage) and its neighbourhood through
// neighbour exchange, every core computing its own output element in lock step.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "tessera/targets/epu/api/epu.h"

namespace tessera::epu::sdk::NN {

// out(r, c) = sum over input tiles i < numInputs, ky, kx < K of
//   w[i][ky][kx] * input[i](r + ky - K/2, c + kx - K/2)
// with the weights taken from the staged broadcast in that order (4 FixedPoint16 per 64-bit
// POP; the first value of each POP is popped, the rest peeked), accumulated in 32 bits and
// rounded back to FixedPoint16<n> with saturation. Values from beyond the array's edge come from
// the tile's border (a BORDER iterator) for the one-element ring, 0 otherwise. Each input tile
// costs K*K-1 neighbour exchanges and K*K MACs per core at the preset's int16 rate.
// numInputs outside 1..N is a UserError; too few staged weights a DeviceFault (POP past the end).
template <typename FX, int K, std::size_t N>
qVar_t<FX> convTileBlockFx16(const qVar_t<FX> (&input)[N], std::int32_t numInputs) {
  static_assert(detail::is_fixed<FX>::value, "NN::convTileBlockFx16<FixedPoint16<n>, K>: the type must be FixedPoint16");
  static_assert(K >= 1 && K % 2 == 1, "NN::convTileBlockFx16<FX, K>: K must be odd (1, 3, 5, ...)");
  if (numInputs < 1 || static_cast<std::size_t>(numInputs) > N)
    throw_user_error("NN::convTileBlockFx16: numInputs is {} but the input array holds {} tiles; pass 1..{}",
                     numInputs, N, N);
  constexpr int D = static_cast<int>(Epu::coreDim);
  constexpr int P = K / 2;
  constexpr int PD = D + 2 * P;
  Array& a = detail::arr();
  std::array<std::int32_t, Epu::numCores> acc{};
  std::array<std::int16_t, static_cast<std::size_t>(PD * PD)> pad{};
  std::uint32_t value = 0;
  for (std::int32_t i = 0; i < numInputs; ++i) {
    const qVar_t<FX>& in = input[i];
    pad.fill(0);
    for (int r = 0; r < D; ++r)
      for (int c = 0; c < D; ++c)
        pad[static_cast<std::size_t>((r + P) * PD + c + P)] = in[static_cast<std::size_t>(r * D + c)].raw;
    if (P >= 1 && in.hasBorder()) {
      auto& ring = const_cast<TileBorder<FX>&>(in.border());
      for (int r = -1; r <= D; ++r)
        for (int c = -1; c <= D; ++c)
          if (r < 0 || r >= D || c < 0 || c >= D)
            pad[static_cast<std::size_t>((r + P) * PD + c + P)] = ring.at(r, c).raw;
    }
    for (int ky = 0; ky < K; ++ky)
      for (int kx = 0; kx < K; ++kx, ++value) {
        if (value % 4 == 0) a.pop("NN::convTileBlockFx16");
        std::int16_t w;
        std::memcpy(&w, a.bus().peek((value % 4) * 2, 2, "NN::convTileBlockFx16").data(), 2);
        const std::int32_t wv = w;
        for (int r = 0; r < D; ++r) {
          const std::int16_t* src = pad.data() + (r + ky) * PD + kx;
          std::int32_t* dst = acc.data() + r * D;
          for (int c = 0; c < D; ++c) dst[c] += wv * src[c];
        }
      }
    a.exchange(static_cast<std::uint64_t>(K * K - 1));
    a.macs(static_cast<std::uint64_t>(K * K), false);
  }
  qVar_t<FX> out;
  constexpr int F = FX::fracBits;
  for (std::size_t k = 0; k < Epu::numCores; ++k)
    out[k] = FX::fromRaw(F == 0 ? acc[k] : (acc[k] + (1 << (F > 0 ? F - 1 : 0))) >> F);
  a.compute(1);  // the rounding shift back to 16 bits
  return out;
}

}  // namespace tessera::epu::sdk::NN
