// Every C++ example of spec 004, as printed, inside a function body where it is a fragment
// (the set-up a fragment assumes, such as its tensors' typedefs, is declared before it and
// marked). Each runs on chimera-q16 and the test checks what the example computes.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>

#include <epu.hpp>

#include "tessera/runtime/device.h"

namespace {

template <typename Tensor>
void iota_fill(Tensor& t, std::int32_t start = 0) {
  for (std::size_t i = 0; i < Tensor::linearElemCount; ++i)
    t.data()[i] = static_cast<typename Tensor::elemType>(start + static_cast<std::int32_t>(i));
}

class SpecExamples : public ::testing::Test {
 protected:
  void SetUp() override { tessera::epu::set_device(tessera::runtime::Device::open("chimera-q16")); }
  void TearDown() override { tessera::epu::synchronize(); }
};

// spec 004 "Copy DDR to OCM" and "Copy OCM to DDR".
TEST_F(SpecExamples, CopyDdrToOcmAndBack) {
  // ---- as printed ----
  MemAllocator                          ocmMem;
  DdrTensor<std::int32_t, 1, 2, 12, 15> ddrTensor1;
  OcmTensor<std::int32_t, 1, 2, 12, 15> ocmTensor1;
  ocmMem.allocate(ocmTensor1);  // Allocate space for the OCM tensor.

  // ---- set-up for the check ----
  iota_fill(ddrTensor1, 7);
  // ---- as printed ----
  // copy data from DDR Tensor to OCM
  memCpy(ddrTensor1,   // Source:      DDR tensor
         ocmTensor1);  // Destination: OCM tensor
  // ---- check ----
  EXPECT_EQ(ocmTensor1.at(0, 1, 11, 14), 7 + 359);
  for (std::size_t i = 0; i < 360; ++i) ddrTensor1.data()[i] = 0;
  // ---- as printed ----
  memCpy(ocmTensor1,   // Source:      OCM tensor
         ddrTensor1);  // Destination: DDR tensor
  EXPECT_EQ(ddrTensor1.at(0, 0, 3, 4), 7 + 3 * 15 + 4);
}

// spec 004 "Handling tensors larger than OCM capacity".
TEST_F(SpecExamples, MemCpyWithRoiOffsets) {
  MemAllocator                          ocmMem2;
  DdrTensor<std::int32_t, 1, 2, 25, 63> ddrTensor2;
  OcmTensor<std::int32_t, 1, 2, 12, 63> ocmTensor2;
  ocmMem2.allocate(ocmTensor2);  // Allocate space for the OCM tensor.

  iota_fill(ddrTensor2);
  // copy data from DDR (starting at an offset) to OCM
  memCpy(ddrTensor2,  // Source:      DDR tensor
         ocmTensor2,  // Destination: OCM tensor
         0,           // DDR batch offset
         0,           // DDR channel offset
         4,           // DDR height offset
         0);          // DDR width offset.
  EXPECT_EQ(ocmTensor2.at(0, 0, 0, 0), 4 * 63);
  EXPECT_EQ(ocmTensor2.at(0, 1, 11, 62), (25 + 15) * 63 + 62);
}

// spec 004 "Fetch API".
TEST_F(SpecExamples, FetchAllTiles) {
  constexpr std::uint32_t WIDTH  = 8;
  constexpr std::uint32_t HEIGHT = 8;
  constexpr std::uint32_t DEPTH  = 3;

  // Defining the Tensor shape as a typedef avoids being verbose when the shape information is required later in the
  // code.
  typedef OcmTensor<std::int32_t, 1, DEPTH, HEIGHT, WIDTH> OcmTensorShape3;
  MemAllocator                                             ocmMem3;
  OcmTensorShape3                                          ocmTensor3;

  // allocate local memory on array. The tensor typedef provides helper enums to access
  qVar_t<std::int32_t> qData[OcmTensorShape3::NUM_TILES];

  iota_fill(ocmTensor3);
  // Fetch all the data from OCM into the Array
  fetchAllTiles(ocmTensor3, qData);
  EXPECT_EQ(OcmTensorShape3::NUM_TILES, 3u);
  EXPECT_EQ(qData[2].at(7, 7), 2 * 64 + 63);
  EXPECT_EQ(qData[1].at(0, 8), 0);  // beyond the 8x8 channel: zero

  // flows in data in a YX pattern as shown in the diagram above
  fetchAllTiles<IteratorType::YX_NO_BORDER>(ocmTensor3, qData);
  EXPECT_EQ(qData[1].at(3, 2), 64 + 3 * 8 + 2);
  (void)ocmMem3;
}

TEST_F(SpecExamples, IteratorTypeEnumAsSpecified) {
  static_assert(static_cast<int>(IteratorType::XY_NO_BORDER) == 0);
  static_assert(static_cast<int>(IteratorType::YX_NO_BORDER) == 1);
  static_assert(static_cast<int>(IteratorType::YX_BORDER) == 2);
  static_assert(static_cast<int>(IteratorType::ZY_BORDER) == 3);
  static_assert(static_cast<int>(IteratorType::ZY_NO_BORDER) == 4);
  static_assert(static_cast<int>(IteratorType::ROW) == 5);
  static_assert(static_cast<int>(IteratorType::ROW_ZY) == 6);
  static_assert(static_cast<int>(IteratorType::LINE) == 7);
}

// spec 004 "Fetch API" (ROI) and "Write API".
TEST_F(SpecExamples, FetchAndWriteTilesInRoi) {
  typedef OcmTensor<std::int32_t, 1, 2, 25, 63>                       OcmTensorShape4;
  typedef OcmTensor<typename OcmTensorShape4::elemType, 1, 2, 12, 23> RoiShape;
  OcmTensorShape4                                                     ocmTensor4;
  // the local memory is allocated to the size of RoiShape instead of ocmTensor4
  qVar_t<std::int32_t> qRoiData[RoiShape::NUM_TILES];

  iota_fill(ocmTensor4);
  // Flow in data from ocmTensor4 starting at row offset 5 and column offset 16
  fetchTilesInRoi<RoiShape, IteratorType::XY_NO_BORDER>(ocmTensor4, qRoiData, 0, 0, 5, 16);
  EXPECT_EQ(qRoiData[0].at(0, 0), 5 * 63 + 16);
  EXPECT_EQ(qRoiData[1].at(2, 3), 7 * 63 + 16 + 16 + 3);
  EXPECT_EQ(qRoiData[1].at(2, 8), 0);  // column 24 of a 23-wide ROI
  for (auto& q : qRoiData) q += 1000;
  writeTilesInRoi<RoiShape, IteratorType::XY_NO_BORDER>(qRoiData, ocmTensor4, 0, 0, 5, 16);
  EXPECT_EQ(ocmTensor4.at(0, 1, 16, 38), 25 * 63 + 16 * 63 + 38 + 1000);
  EXPECT_EQ(ocmTensor4.at(0, 1, 16, 39), 25 * 63 + 16 * 63 + 39);  // outside the ROI: untouched
  EXPECT_EQ(ocmTensor4.at(0, 0, 4, 20), 4 * 63 + 20);
}

// spec 004 "Iterators": a typical iterator call.
TEST_F(SpecExamples, TypicalIteratorCall) {
  // ---- set-up the fragment assumes ----
  typedef OcmTensor<std::int32_t, 1, 1, 16, 64> DataRoiShapeDesc;
  OcmTensor<std::int32_t, 1, 1, 16, 64> ocmIn;
  qVar_t<std::int32_t> qData[DataRoiShapeDesc::NUM_TILES];
  const std::size_t widthOffset = 0;
  iota_fill(ocmIn);
  // ---- as printed ----
  fetchTilesInRoi<StreamSide::SOUTH, DataRoiShapeDesc, IteratorType::YX_BORDER>(ocmIn, qData, 0, 0, 0, widthOffset); // copy tiles from RoI in OCM to core registers
  EXPECT_EQ(qData[1].at(0, 0), 16);
  EXPECT_TRUE(qData[1].hasBorder());
  EXPECT_EQ(qData[1].border().ring[0], 0);  // north-west corner: above the tensor, masked
}

// spec 004 "XY Example".
void xy_example(OcmTensor<std::int32_t, 1, 1, 32, 32>& inp, OcmTensor<std::int32_t, 1, 1, 32, 32>& out) {
  typedef OcmTensor<std::int32_t, 1, 1, 32, 32> inOutShape;
  // ---- as printed ----
  qVar_t<int32_t> x[inOutShape::NUM_TILES];

  // Flow in data with the fetchAllTiles iterator
  fetchAllTiles<inOutShape, StreamSide::SOUTH, IteratorType::XY_NO_BORDER>(inp, x);
  // process tile by tile, at every cell: compute tile(r,c) += tile(r-1,c) + tile(r+1,c) + tile(r, c-1) + tile(r, c+1)
  for(std::int32_t tileNum = 0; tileNum < inOutShape::NUM_TILES; tileNum++) {
    qAllNeighbors<> = x[tileNum];
    x[tileNum] += (qEast<> + qSouth<> + qWest<> + qNorth<>);
  }
// Flow data out to OCM with the writeAllTiles iterator
  writeAllTiles<inOutShape, StreamSide::NORTH, IteratorType::XY_NO_BORDER>(x, out);
}

TEST_F(SpecExamples, XyExampleSumsEachTileWithItsNeighbours) {
  OcmTensor<std::int32_t, 1, 1, 32, 32> inp, out;
  iota_fill(inp);
  xy_example(inp, out);
  auto v = [](int r, int c) { return r * 32 + c; };
  EXPECT_EQ(out.at(0, 0, 5, 5), v(5, 5) + v(4, 5) + v(6, 5) + v(5, 4) + v(5, 6));
  // NO_BORDER: a tile's edge cores get 0 from beyond the array, even inside the image.
  EXPECT_EQ(out.at(0, 0, 15, 5), v(15, 5) + v(14, 5) + v(15, 4) + v(15, 6));
}

// spec 004 "YX Example" (the function as printed, with the shapes it assumes).
namespace yx_example {
typedef OcmTensor<std::int32_t, 1, 1, 32, 32> inOutShape;
typedef inOutShape RoiShape;
typedef OcmTensor<char, 1, 1, 32, 32> RoiShapeDesc;

/**
   Flows tiles in plane col-major order with borders enabled.
   Left-most column tiles will see their left borders masked - these values are used in the compute. */
std::int32_t south_north_flow_d2_d1(inOutShape& inp, inOutShape& out) noexcept {
  qVar_t<std::int32_t> x[inOutShape::NUM_TILES];

  fetchTilesInRoi<inOutShape, RoiShape, StreamSide::SOUTH, IteratorType::YX_BORDER>(
    inp, x, RoiShapeDesc::d4beg, RoiShapeDesc::d3beg, RoiShapeDesc::d2beg, RoiShapeDesc::d1beg);

  // process tile by tile, at every cell: compute tile(r,c) += tile(r-1,c) + tile(r+1,c) + tile(r, c-1) + tile(r, c+1)
  for(std::int32_t tileNum = 0; tileNum < inOutShape::NUM_TILES; tileNum++) {
    qAllNeighbors<> = x[tileNum];
    x[tileNum] += (qEast<> + qSouth<> + qWest<> + qNorth<>);
  }

  writeTilesInRoi<inOutShape, RoiShape>(
    x, out, RoiShapeDesc::d4beg, RoiShapeDesc::d3beg, RoiShapeDesc::d2beg, RoiShapeDesc::d1beg);
  return 0;
}
}  // namespace yx_example

TEST_F(SpecExamples, YxExampleWithBordersIsTheFullStencil) {
  using namespace yx_example;
  inOutShape inp, out;
  iota_fill(inp);
  EXPECT_EQ(south_north_flow_d2_d1(inp, out), 0);
  auto v = [](int r, int c) { return (r < 0 || r >= 32 || c < 0 || c >= 32) ? 0 : r * 32 + c; };
  for (int r : {0, 5, 15, 16, 31})
    for (int c : {0, 7, 15, 16, 31})
      EXPECT_EQ(out.at(0, 0, static_cast<std::size_t>(r), static_cast<std::size_t>(c)),
                v(r, c) + v(r - 1, c) + v(r + 1, c) + v(r, c - 1) + v(r, c + 1))
          << r << "," << c;
}

// spec 004 "ZY Example" (the fragment ends the function it is in, as printed).
typedef DdrTensor<std::int32_t, 1, 2, 64, 16> ZyDdrInOutShape;
typedef OcmTensor<std::int32_t, 1, 2, 16, 16> BorderedOcmRoiShape;
typedef OcmTensor<std::int32_t, 1, 2, 16, 16> OcmRoiOutputShape;

void zy_example(ZyDdrInOutShape& ddrInp, ZyDdrInOutShape& ddrOut) {
  using DdrInOutShape = ZyDdrInOutShape;
  BorderedOcmRoiShape ocmInp1;
  OcmRoiOutputShape ocmOut2;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
  // ---- as printed ----
  qVar_t<std::int32_t> x[OcmRoiOutputShape::NUM_TILES];

  constexpr std::size_t roiHeight = BorderedOcmRoiShape::NUM_ROWS;
  constexpr std::size_t numRois   = DdrInOutShape::NUM_ROWS / roiHeight;

  for(std::size_t i = 0; i < numRois; i++) {
    memCpy(ddrInp, ocmInp1, 0, 0, i * roiHeight);
    fetchTilesInRoi<BorderedOcmRoiShape, true, IteratorType::ZY_BORDER>(ocmInp1, x, 0, 0, 0, 0);
    for(std::size_t i = 0; i < BorderedOcmRoiShape::NUM_TILES; i++) {
      qAllNeighbors<> = x[i];
      x[i] += (qEast<> + qSouth<> + qWest<> + qNorth<>);
    }
    writeTilesInRoi<OcmRoiOutputShape>(x, ocmOut2, 0, 0, 0, 0);
    memCpy(ocmOut2, ddrOut, 0, 0, i * roiHeight);
    // Zero out x
    for(std::size_t i = 0; i < OcmRoiOutputShape::NUM_TILES; i++) {
      x[i] = 0;
    }
  }
}
#pragma GCC diagnostic pop

TEST_F(SpecExamples, ZyExampleStreamsRoisThroughOcm) {
  ZyDdrInOutShape in, out;
  iota_fill(in);
  zy_example(in, out);
  // Inside a 16-row ROI the stencil is complete; the ROI's top and bottom rows see 0 beyond.
  auto v = [](int ch, int r, int c) { return (c < 0 || c >= 16) ? 0 : ch * 1024 + r * 16 + c; };
  EXPECT_EQ(out.at(0, 1, 20, 3), v(1, 20, 3) + v(1, 19, 3) + v(1, 21, 3) + v(1, 20, 2) + v(1, 20, 4));
  EXPECT_EQ(out.at(0, 0, 16, 15), v(0, 16, 15) + v(0, 17, 15) + v(0, 16, 14));
}

// spec 004 "RAU (Random Access)".
TEST_F(SpecExamples, RauLoadAndStore) {
  MemAllocator                                  ocmMem;
  typedef OcmTensor<std::int32_t, 1, 2, 12, 15> ocmTensorShape;
  ocmTensorShape                                ocmTensor;
  ocmMem.allocate(ocmTensor);  // Allocate space for the OCM tensor.

  iota_fill(ocmTensor);
  const qVar_t<std::uint32_t> batchOffset = 0;
  const qVar_t<std::uint32_t> chOffset    = 0;
  const qVar_t<std::uint32_t> rowOffset   = qRow<> * 2;  // Each array core can access its own row position value via
                                                         // qRow<>. Each core accesses every other row
  const qVar_t<std::uint32_t> colOffset = qCol<> * 2;    // Each array core can access its own column position value via
                                                         // qCol<> Each core accesses every other column
  // ---- the printed offsets reach row 30 of 12 on a 16x16 array: those cores read the OCM
  // bytes past the tensor, as the RAU's address does (tests/epu/epu_faults_test.cpp) ----
  const qVar_t<std::uint32_t> rowFit = qSelect(rowOffset < 12u, rowOffset, qVar_t<std::uint32_t>(0u));
  const qVar_t<std::uint32_t> colFit = qSelect(colOffset < 15u, colOffset, qVar_t<std::uint32_t>(0u));
  // Configure the system to perform a Random access
  Rau::config(ocmTensor);

  // Fetch a tile worth of data. Each core has a unique offset.
  const qVar_t<std::int32_t> qPrinted = Rau::Load::oneTile(batchOffset, chOffset, rowOffset, colOffset, ocmTensor);
  EXPECT_EQ(qPrinted.at(3, 5), 6 * 15 + 10);
  EXPECT_EQ(qPrinted.at(5, 7), 10 * 15 + 14);
  EXPECT_EQ(qPrinted.at(6, 0), 12 * 15);  // row 12 of channel 0 is row 0 of channel 1
  // ---- the same with the offsets that fit ----
  const qVar_t<std::int32_t> qData = Rau::Load::oneTile(batchOffset, chOffset, rowFit, colFit, ocmTensor);
  EXPECT_EQ(qData.at(3, 5), 6 * 15 + 10);
  EXPECT_EQ(qData.at(7, 9), 0);  // clamped to (0, 0)

  Rau::Store::oneTile(batchOffset, chOffset, rowFit, colFit, qData + 1, ocmTensor);
  EXPECT_EQ(ocmTensor.at(0, 0, 6, 10), 6 * 15 + 10 + 1);
  EXPECT_EQ(ocmTensor.at(0, 0, 6, 11), 6 * 15 + 11);  // odd column: not a target
  (void)rowOffset;
  (void)colOffset;
}

// spec 004 "Broadcast to Array": OCM set-up (typedefs as printed, at namespace scope).
namespace broadcast_setup {
typedef DdrTensor<std::int32_t, 1, 1, Epu::coreDim, Epu::coreDim> DdrInOutShape;
typedef OcmTensor<std::int32_t, 1, 1, Epu::coreDim, Epu::coreDim> OcmInOutShape;

using BroadcastRoiShape = DdrInOutShape;

typedef OcmTensor<char, BroadcastRoiShape::NUM_BCH, BroadcastRoiShape::NUM_CHN, BroadcastRoiShape::NUM_ROWS, BroadcastRoiShape::NUM_COLS> BroadcastRoiShapeDesc;
}  // namespace broadcast_setup

TEST_F(SpecExamples, BroadcastPopAndPeek) {
  using namespace broadcast_setup;
  using RoiShapeDesc = BroadcastRoiShapeDesc;
  // ---- as printed ----
  OcmInOutShape ocmInp;
  // ---- set-up: the values 0..255 ----
  iota_fill(ocmInp);
  // ---- as printed ----
  // Broadcast data.
  BroadcastStream::stage<OcmInOutShape, RoiShapeDesc>(ocmInp);

  constexpr std::int32_t numBroadcasts32 = DdrInOutShape::linearElemCount / getNumberOfWeightRegisters<std::int32_t>();

  // Array to hold all the weights
  qVar_t<std::int32_t> arr[getNumberOfWeightRegisters<std::int8_t>()];
  // Our output data
  qVar_t<std::int32_t> out[1];
  // Initialize output to zero
  out[0] = 0;

  for(std::int32_t i = 0; i < numBroadcasts32; i++) {
    arr[0] = qBroadcast<0, std::int32_t, BroadcastAction::POP>;
    arr[1] = qBroadcast<1, std::int32_t>;

    out[0] += (arr[0] + arr[1]);
  }
  // ---- check: every core holds the sum of the staged values ----
  EXPECT_EQ(out[0].at(0, 0), 255 * 256 / 2);
  EXPECT_EQ(out[0].at(15, 9), 255 * 256 / 2);
}

TEST_F(SpecExamples, BroadcastOption1Int16AndIterationCounts) {
  using broadcast_setup::DdrInOutShape;
  typedef OcmTensor<std::int16_t, 1, 1, Epu::coreDim, Epu::coreDim> OcmInOut16;
  typedef OcmTensor<char, 1, 1, Epu::coreDim, Epu::coreDim> RoiShapeDesc;
  OcmInOut16 ocmInp;
  iota_fill(ocmInp);
  BroadcastStream::stage<OcmInOut16, RoiShapeDesc>(ocmInp);
  // ---- as printed ("Array-Side Consumption"): OPTION 1 reads into this array ----
  // Array to hold all the weights
  qVar_t<std::int32_t> arr[getNumberOfWeightRegisters<std::int8_t>()];
  qVar_t<std::int32_t> sum = 0;
  // ---- as printed ("Broadcast Notes and Cautions", 6) ----
  constexpr std::int32_t numBroadcasts8  = DdrInOutShape::linearElemCount / getNumberOfWeightRegisters<std::int8_t>();

  constexpr std::int32_t numBroadcasts16 = DdrInOutShape::linearElemCount / getNumberOfWeightRegisters<std::int16_t>();
  static_assert(numBroadcasts8 == 32 && numBroadcasts16 == 64);
  // ---- as printed ("OPTION 1"; the loop's closing brace and body end are the test's) ----
for(std::int32_t i = 0; i < numBroadcasts16; i++) {
    arr[0] = qBroadcast<0, std::int16_t, BroadcastAction::POP>;
    arr[1] = qBroadcast<1, std::int16_t>;
    arr[2] = qBroadcast<2, std::int16_t>;
    arr[3] = qBroadcast<3, std::int16_t>;
    for (int k = 0; k < 4; ++k) sum += arr[k];
}
  EXPECT_EQ(sum.at(4, 4), 255 * 256 / 2);
}

// spec 004 "OPTION 2 Use convolution", the expanded example.
TEST_F(SpecExamples, ConvolutionConsumesTheStagedWeights) {
  constexpr int numFracBits = 8;
  typedef OcmTensor<FixedPoint16<numFracBits>, 1, 1, 16, 32> OcmRoiShape;
  typedef OcmTensor<FixedPoint16<numFracBits>, 1, 1, 1, 12> WeightTensorShape;  // 9 taps, padded to 3 POPs
  typedef OcmTensor<char, 1, 1, 1, 12> RoiShapeDesc;
  OcmRoiShape image;
  WeightTensorShape Weights;
  for (std::size_t i = 0; i < 16 * 32; ++i) image.data()[i] = FixedPoint16<numFracBits>(static_cast<double>(i % 7));
  for (std::size_t k = 0; k < 12; ++k) Weights.data()[k] = FixedPoint16<numFracBits>(k == 4 ? 1.0 : (k < 9 ? 0.5 : 0.0));
  qVar_t<FixedPoint16<numFracBits>> qData[OcmRoiShape::NUM_TILES];
  fetchAllTiles<IteratorType::YX_BORDER>(image, qData);
  // ---- as printed (the loop's closing brace is the test's) ----
for(std::int32_t tileNum = 0; tileNum < OcmRoiShape::NUM_TILES; tileNum++) {
  BroadcastStream::stage<WeightTensorShape, RoiShapeDesc>(Weights);
  qVar_t<FixedPoint16<numFracBits>> input[4];
  input[0]       = qData[tileNum];
  qData[tileNum] = NN::convTileBlockFx16<FixedPoint16<numFracBits>, 3>(input, 1);
}
  // out = x + 0.5 * (sum of the 8 neighbours), borders from the image, 0 past its edge.
  auto x = [](int r, int c) { return (r < 0 || r >= 16 || c < 0 || c >= 32) ? 0.0 : static_cast<double>((r * 32 + c) % 7); };
  for (int r : {0, 7, 15})
    for (int c : {0, 15, 16, 31}) {
      double want = x(r, c);
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          if (dy || dx) want += 0.5 * x(r + dy, c + dx);
      const std::size_t tile = static_cast<std::size_t>(c / 16);
      EXPECT_DOUBLE_EQ(qData[tile].at(static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(c % 16)).toDouble(), want)
          << r << "," << c;
    }
}

}  // namespace
