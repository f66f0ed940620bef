// Every IteratorType and every StreamSide (spec 004 "Iterators"): the order in which tiles of a
// 1x2x32x32 tensor arrive, and the orientation each side gives a tile.
#include "example_common.h"

namespace {

typedef OcmTensor<std::int32_t, 1, 2, 32, 32> Shape;

// Element (ch, r, c) holds ch*100 + (r/16)*10 + c/16: its tile's coordinates.
template <IteratorType It>
void show(Shape& t, const char* name, std::initializer_list<int> want) {
  qVar_t<std::int32_t> q[Shape::NUM_TILES];
  fetchAllTiles<It>(t, q);
  std::printf("%-13s", name);
  int k = 0;
  for (int w : want) {
    std::printf(" %3d", q[k][0]);
    example::check(q[k++][0], w, name);
  }
  std::printf("\n");
  writeAllTiles<It>(q, t);  // written back in the same order: unchanged
}

}  // namespace

int main() {
  return example::run([] {
    Shape t;
    for (std::size_t ch = 0; ch < 2; ++ch)
      for (std::size_t r = 0; r < 32; ++r)
        for (std::size_t c = 0; c < 32; ++c) t.at(0, ch, r, c) = static_cast<std::int32_t>(ch * 100 + (r / 16) * 10 + c / 16);
    std::printf("tile order (channel*100 + tile row*10 + tile column):\n");
    show<IteratorType::XY_NO_BORDER>(t, "XY_NO_BORDER", {0, 1, 10, 11, 100, 101, 110, 111});
    show<IteratorType::YX_NO_BORDER>(t, "YX_NO_BORDER", {0, 10, 1, 11, 100, 110, 101, 111});
    show<IteratorType::YX_BORDER>(t, "YX_BORDER", {0, 10, 1, 11, 100, 110, 101, 111});
    show<IteratorType::ZY_BORDER>(t, "ZY_BORDER", {0, 100, 10, 110, 1, 101, 11, 111});
    show<IteratorType::ZY_NO_BORDER>(t, "ZY_NO_BORDER", {0, 100, 10, 110, 1, 101, 11, 111});
    show<IteratorType::ROW>(t, "ROW", {0, 1, 100, 101, 10, 11, 110, 111});
    show<IteratorType::ROW_ZY>(t, "ROW_ZY", {0, 100, 1, 101, 10, 110, 11, 111});
    show<IteratorType::LINE>(t, "LINE", {0, 0, 10, 10, 100, 100, 110, 110});  // 256 elements (8 rows) a tile

    // StreamSide: the core at row 1, column 2 of a tile holding 16*r + c.
    OcmTensor<std::int32_t, 1, 1, 16, 16> tile;
    for (std::size_t i = 0; i < 256; ++i) tile.data()[i] = static_cast<std::int32_t>(i);
    qVar_t<std::int32_t> q[1];
    fetchAllTiles<StreamSide::SOUTH>(tile, q);
    std::printf("SOUTH: core (1,2) holds %d (as stored)\n", q[0].at(1, 2));
    example::check(q[0].at(1, 2), 18, "SOUTH");
    fetchAllTiles<StreamSide::NORTH>(tile, q);
    std::printf("NORTH: core (1,2) holds %d (flipped vertically)\n", q[0].at(1, 2));
    example::check(q[0].at(1, 2), 14 * 16 + 2, "NORTH");
    fetchAllTiles<StreamSide::EAST>(tile, q);
    std::printf("EAST:  core (1,2) holds %d (rows become columns)\n", q[0].at(1, 2));
    example::check(q[0].at(1, 2), 2 * 16 + 1, "EAST");
    fetchAllTiles<StreamSide::WEST>(tile, q);
    std::printf("WEST:  core (1,2) holds %d (EAST mirrored)\n", q[0].at(1, 2));
    example::check(q[0].at(1, 2), 13 * 16 + 1, "WEST");
    writeAllTiles<StreamSide::EAST>(q, tile);  // the inverse of a WEST fetch
    example::check(tile.data()[37], 37, "WEST then EAST");
    example::summary("iterators");
  });
}
