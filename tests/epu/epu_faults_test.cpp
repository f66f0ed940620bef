// Every rule of spec 004 the EPU target enforces, each a DeviceFault (or a UserError for API
// misuse) naming the core or array, the API, the tensor and the limit. The compile-time rule
// (an invalid broadcast index) is checked by the compile_fail/ tests.
#include "epu_common.h"

#include <memory>

using namespace epu_test;

namespace {

class EpuFaults : public ::testing::Test {
 protected:
  void SetUp() override { use("chimera-q16"); }
};

TEST_F(EpuFaults, DdrToArrayWithoutOcmInBetween) {
  DdrTensor<std::int32_t, 1, 1, 16, 16> ddr;
  qVar_t<std::int32_t> q[1];
  expect_error([&] { fetchAllTiles(ddr, q); },
               {"chimera-q16 array", "fetchAllTiles", "DdrTensor<int32, 1x1x16x16>", "is in DDR", "memCpy"});
  expect_error([&] { writeTilesInRoi<OcmTensor<std::int32_t, 1, 1, 16, 16>>(q, ddr, 0, 0, 0, 0); },
               {"writeTilesInRoi", "is in DDR"});
  expect_error([&] { Rau::config(ddr); }, {"Rau::config", "is in DDR"});
  typedef OcmTensor<char, 1, 1, 16, 16> Desc;
  expect_error([&] { BroadcastStream::stage<DdrTensor<std::int32_t, 1, 1, 16, 16>, Desc>(ddr); },
               {"BroadcastStream::stage", "is in DDR"});
}

TEST_F(EpuFaults, OcmAllocationBeyondCapacity) {
  MemAllocator mem;
  OcmTensor<std::int32_t, 1, 1, 2048, 2048> big;  // 16 MiB, OCM holds 8 MiB
  expect_error([&] { mem.allocate(big); },
               {"MemAllocator::allocate", "OcmTensor<int32, 1x1x2048x2048>", "16 MiB", "8 MiB", "free"});
  OcmTensor<std::int32_t, 1, 1, 1024, 1536> a, b;  // 6 MiB each: the second does not fit
  mem.allocate(a);
  expect_error([&] { mem.allocate(b); }, {"MemAllocator::allocate", "6 MiB"});
  // A tensor never allocated is placed at first use, under the same limit.
  expect_error([&] { (void)b.data(); }, {"OCM"});
}

TEST_F(EpuFaults, MemCpyWidthMustEqualDdrWidth) {
  DdrTensor<std::int32_t, 1, 1, 4, 32> ddr;
  OcmTensor<std::int32_t, 1, 1, 4, 16> ocm;
  expect_error([&] { memCpy(ddr, ocm); },
               {"memCpy(DDR -> OCM)", "OcmTensor<int32, 1x1x4x16> is 16 wide", "DdrTensor<int32, 1x1x4x32> is 32 wide"});
  expect_error([&] { memCpy(ocm, ddr); }, {"memCpy(OCM -> DDR)", "16 wide"});
}

TEST_F(EpuFaults, MemCpyRoiBeyondTheDdrTensor) {
  DdrTensor<std::int32_t, 1, 2, 25, 63> ddr;
  OcmTensor<std::int32_t, 1, 2, 12, 63> ocm;
  expect_error([&] { memCpy(ddr, ocm, 0, 0, 14); },
               {"memCpy(DDR -> OCM)", "reaches height 26", "DdrTensor<int32, 1x2x25x63>", "which has 25"});
  expect_error([&] { memCpy(ddr, ocm, 0, 1, 0); }, {"reaches channel 3"});
}

TEST_F(EpuFaults, FlowWidthOffsetMustBeAMultipleOfTheColumns) {
  OcmTensor<std::int32_t, 1, 1, 16, 64> t;
  typedef OcmTensor<std::int32_t, 1, 1, 16, 16> Roi;
  qVar_t<std::int32_t> q[1];
  expect_error([&] { fetchTilesInRoi<Roi>(t, q, 0, 0, 0, 8); },
               {"fetchTilesInRoi", "width offset 8", "OcmTensor<int32, 1x1x16x64>", "multiple of the array's 16 columns", "Rau"});
  expect_error([&] { writeTilesInRoi<Roi>(q, t, 0, 0, 0, 20); }, {"writeTilesInRoi", "width offset 20"});
  fetchTilesInRoi<Roi>(t, q, 0, 0, 0, 48);  // aligned: fine
}

TEST_F(EpuFaults, RoiBeyondItsTensor) {
  OcmTensor<std::int32_t, 1, 2, 25, 63> t;
  typedef OcmTensor<std::int32_t, 1, 2, 12, 23> Roi;
  qVar_t<std::int32_t> q[Roi::NUM_TILES];
  expect_error([&] { fetchTilesInRoi<Roi>(t, q, 0, 0, 14, 16); },
               {"fetchTilesInRoi", "region of interest 1x2x12x23", "reaches height 26", "which has 25"});
  expect_error([&] { fetchTilesInRoi<Roi>(t, q, 0, 0, 0, 48); }, {"reaches width 71", "which has 63"});
}

TEST_F(EpuFaults, RoiBeyondCoreMemory) {
  // 1,040 int8 tiles take 1,040 32-bit registers per core: 4,160 bytes of 4,096.
  typedef OcmTensor<std::int8_t, 1, 1, 16, 16 * 1040> Wide;
  struct Regs {
    qVar_t<std::int8_t> q[1040];
  };
  auto regs = std::make_unique<Regs>();
  Wide t;
  expect_error([&] { fetchAllTiles(t, regs->q); },
               {"fetchAllTiles", "1040 tiles", "4160 bytes of registers", "4096 bytes of core memory"});
}

TEST_F(EpuFaults, IteratorTransferOver64KiB) {
  // 65 int32 tiles: 66,560 bytes in one transfer (260 bytes of registers per core: fine).
  typedef OcmTensor<std::int32_t, 1, 1, 16, 16 * 65> Wide;
  Wide t;
  qVar_t<std::int32_t> q[65];
  expect_error([&] { fetchAllTiles(t, q); }, {"fetchAllTiles", "65 tiles", "66560 bytes", "limit of 65536 bytes"});
  expect_error([&] { writeAllTiles(q, t); }, {"writeAllTiles", "limit of 65536 bytes"});
  typedef OcmTensor<std::int32_t, 1, 1, 16, 16 * 64> Fits;
  fetchTilesInRoi<Fits>(t, q, 0, 0, 0, 0);  // 65,536 bytes: fine
}

TEST_F(EpuFaults, BroadcastReadBeforeTheFirstPop) {
  typedef OcmTensor<std::int32_t, 1, 1, 1, 16> W;
  typedef OcmTensor<char, 1, 1, 1, 16> Desc;
  W w;
  BroadcastStream::stage<W, Desc>(w);
  qVar_t<std::int32_t> x;
  expect_error([&] { x = qBroadcast<0, std::int32_t>; },
               {"chimera-q16 array", "qBroadcast<PEEK>", "before the first POP", "OcmTensor<int32, 1x1x1x16>"});
}

TEST_F(EpuFaults, BroadcastPopPastTheStagedData) {
  typedef OcmTensor<std::int32_t, 1, 1, 1, 4> W;
  typedef OcmTensor<char, 1, 1, 1, 4> Desc;
  W w;
  BroadcastStream::stage<W, Desc>(w);
  qVar_t<std::int32_t> x;
  x = qBroadcast<0, std::int32_t, BroadcastAction::POP>;
  x = qBroadcast<0, std::int32_t, BroadcastAction::POP>;
  expect_error([&] { x = qBroadcast<0, std::int32_t, BroadcastAction::POP>; },
               {"qBroadcast<POP>", "past the end", "OcmTensor<int32, 1x1x1x4>", "holds 2 POPs of 8 bytes"});
}

TEST_F(EpuFaults, ConvolutionWithTooFewStagedWeights) {
  typedef OcmTensor<FixedPoint16<8>, 1, 1, 1, 4> W;  // one POP; a 3x3 needs three
  typedef OcmTensor<char, 1, 1, 1, 4> Desc;
  W w;
  BroadcastStream::stage<W, Desc>(w);
  qVar_t<FixedPoint16<8>> in[1];
  expect_error([&] { (void)NN::convTileBlockFx16<FixedPoint16<8>, 3>(in, 1); },
               {"NN::convTileBlockFx16", "past the end"});
  expect_error<tessera::UserError>([&] { (void)NN::convTileBlockFx16<FixedPoint16<8>, 3>(in, 2); },
                                   {"numInputs is 2", "holds 1"});
}

// Offsets past a dimension reach the OCM byte the RAU's address gives with the tensor's strides
// (spec 004's RAU example itself reads past its tensor on a 16x16 array); only an address
// outside the OCM is a DeviceFault, which names the core.
TEST_F(EpuFaults, RauOffsetsPastTheTensorReachTheOcmAndOutsideItNameTheCore) {
  OcmTensor<std::int32_t, 1, 2, 12, 15> t;
  OcmTensor<std::int32_t, 1, 1, 16, 16> after;
  Rau::config(t);
  for (std::size_t h = 0; h < 16; ++h)
    for (std::size_t w = 0; w < 16; ++w) after.at(0, 0, h, w) = static_cast<std::int32_t>(1000 + h * 16 + w);
  ASSERT_GT(after.address(), t.address());
  ASSERT_EQ((after.address() - t.address()) % 4, 0u);
  const std::size_t gap = (after.address() - t.address()) / 4;  // t's elements up to after's first
  qVar_t<std::uint32_t> row, col;
  for (std::size_t i = 0; i < Epu::numCores; ++i) {  // core i reads after's element i
    row[i] = static_cast<std::uint32_t>((gap + i) / 15);
    col[i] = static_cast<std::uint32_t>((gap + i) % 15);
  }
  const qVar_t<std::uint32_t> zero = 0;
  const qVar_t<std::int32_t> got = Rau::Load::oneTile(zero, zero, row, col, t);
  for (std::size_t i = 0; i < Epu::numCores; ++i) ASSERT_EQ(got[i], static_cast<std::int32_t>(1000 + i)) << i;
  Rau::Store::oneTile(zero, zero, row, col, got * 2, t);
  EXPECT_EQ(after.at(0, 0, 15, 15), 2 * (1000 + 255));

  const qVar_t<std::uint32_t> far = qRow<> * (1u << 20);  // core (1, 0) reaches 60 MiB
  expect_error([&] { (void)Rau::Load::oneTile(zero, zero, far, zero, t); },
               {"core (1, 0)", "Rau::Load::oneTile", "row 1048576", "OcmTensor<int32, 1x2x12x15>", "outside"});
  const qVar_t<std::uint32_t> wide = qCol<> * (1u << 22);
  qVar_t<std::int32_t> v = 1;
  expect_error([&] { Rau::Store::oneTile(zero, zero, zero, wide, v, t); },
               {"core (0, 1)", "Rau::Store::oneTile", "column 4194304", "outside"});
}

TEST_F(EpuFaults, RauNeedsConfig) {
  OcmTensor<std::int32_t, 1, 1, 16, 16> a, b;
  Rau::config(a);
  const qVar_t<std::uint32_t> zero = 0;
  expect_error([&] { (void)Rau::Load::oneTile(zero, zero, zero, zero, b); },
               {"Rau::Load::oneTile", "not configured for OcmTensor<int32, 1x1x16x16>", "Rau::config"});
}

TEST_F(EpuFaults, DivisionByZeroNamesTheCore) {
  const qVar_t<std::int32_t> d = qSelect(qRow<std::int32_t> == 3 && qCol<std::int32_t> == 7, qVar_t<std::int32_t>(0),
                                         qVar_t<std::int32_t>(2));
  expect_error([&] { (void)(qVar_t<std::int32_t>(10) / d); }, {"core (3, 7)", "operator/", "division by zero"});
}

TEST_F(EpuFaults, NeighbourPortReadAsAnotherTypeThanSent) {
  qAllNeighbors<> = qVar_t<std::int16_t>(3);
  expect_error<tessera::UserError>([] { const qVar_t<std::int32_t> e = qEast<>; (void)e; },
                                   {"qEast<int32>", "qVar_t<int16>", "qEast<int16>"});
  qNorth<> = qVar_t<std::int32_t>(4);  // reaches the southern port of the northern neighbours
  expect_error<tessera::UserError>([] { const qVar_t<std::int32_t> n = qNorth<>; (void)n; }, {"qNorth<int32>", "int16"});
  const qVar_t<std::int32_t> s = qSouth<>;
  EXPECT_EQ(s.at(3, 3), 4);
}

TEST_F(EpuFaults, FixedPointDivisionByZero) {
  using Fx = FixedPoint16<8>;
  expect_error<tessera::UserError>([] { (void)(Fx(1.5) / Fx(0)); }, {"FixedPoint16<8>", "division by zero", "1.5 / 0"});
}

TEST(EpuConfig, CoreDimMustMatchTheDevice) {
  use("chimera-q8");  // this test is compiled for 16x16
  expect_error<tessera::UserError>([] { qVar_t<std::int32_t> a = 1; (void)(a + a); },
                                   {"compiled for a 16x16 array", "chimera-q8", "8x8", "-DTESSERA_EPU_CORE_DIM=8"});
  use("chimera-q16");
}

TEST(EpuConfig, OnlyEpuPresets) {
  expect_error<tessera::UserError>([] { use("gaudi"); (void)tessera::epu::array(); }, {"epu family", "gaudi"});
  use("chimera-q16");
}

}  // namespace
