// The neighbour-sum stencil of spec 004's XY and YX examples: every element plus its four
// neighbours, with YX_BORDER so that tiles see the tensor beyond their edges (0 past the
// tensor's edge), checked against a host loop.
#include "example_common.h"

int main() {
  return example::run([] {
    typedef OcmTensor<std::int32_t, 1, 1, 48, 64> inOutShape;
    inOutShape inp, out;
    for (std::size_t i = 0; i < inOutShape::kLinear; ++i) inp.data()[i] = static_cast<std::int32_t>((i * 37) % 101);
    qVar_t<std::int32_t> x[inOutShape::NUM_TILES];
    fetchAllTiles<inOutShape, StreamSide::SOUTH, IteratorType::YX_BORDER>(inp, x);
    for (std::int32_t tileNum = 0; tileNum < inOutShape::NUM_TILES; tileNum++) {
      qAllNeighbors<> = x[tileNum];
      x[tileNum] += (qEast<> + qSouth<> + qWest<> + qNorth<>);
    }
    writeAllTiles<inOutShape, StreamSide::NORTH>(x, out);
    auto v = [&](long r, long c) { return (r < 0 || r >= 48 || c < 0 || c >= 64) ? 0 : inp.at(0, 0, static_cast<std::size_t>(r), static_cast<std::size_t>(c)); };
    for (long r = 0; r < 48; ++r)
      for (long c = 0; c < 64; ++c)
        example::check(out.at(0, 0, static_cast<std::size_t>(r), static_cast<std::size_t>(c)),
                       v(r, c) + v(r - 1, c) + v(r + 1, c) + v(r, c - 1) + v(r, c + 1), "stencil");
    example::summary("neighbor_sum");
  });
}
