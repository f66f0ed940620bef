// The same SDK built for a q8 (8x8) array, run on the chimera-q8 preset: tiles of 64
// elements, the flow alignment of 8 columns, and spec 004's broadcast example.
#include "epu_common.h"

#include "tessera/sim/cost_model.h"

using namespace epu_test;

namespace {

class EpuQ8 : public ::testing::Test {
 protected:
  void SetUp() override { use("chimera-q8"); }
};

TEST_F(EpuQ8, TilesAreEightByEight) {
  static_assert(Epu::coreDim == 8);
  typedef OcmTensor<std::int32_t, 1, 1, 16, 24> T;
  static_assert(T::NUM_TILES == 6);
  T t;
  iota_fill(t);
  qVar_t<std::int32_t> q[T::NUM_TILES];
  fetchAllTiles<IteratorType::XY_NO_BORDER>(t, q);
  EXPECT_EQ(q[4].at(7, 7), 15 * 24 + 15);
  qAllNeighbors<> = q[0];
  EXPECT_EQ(static_cast<const qVar_t<std::int32_t>&>(qEast<>).at(0, 6), 7);
  EXPECT_EQ(static_cast<const qVar_t<std::int32_t>&>(qEast<>).at(0, 7), 0);
  typedef OcmTensor<std::int32_t, 1, 1, 8, 8> Roi;
  fetchTilesInRoi<Roi>(t, q, 0, 0, 0, 8);  // 8 is aligned on a q8
  EXPECT_THROW(fetchTilesInRoi<Roi>(t, q, 0, 0, 0, 4), tessera::DeviceFault);
  tessera::epu::synchronize();
  EXPECT_EQ(tessera::epu::device().profile().pipe_busy_cycles.at("epu/flow"),
            2 * tessera::epu::device().cost_model().pipe_latency("flow") + 6 + 1);
}

TEST_F(EpuQ8, BroadcastExampleOnAQ8) {
  typedef DdrTensor<std::int32_t, 1, 1, Epu::coreDim, Epu::coreDim> DdrInOutShape;
  typedef OcmTensor<std::int32_t, 1, 1, Epu::coreDim, Epu::coreDim> OcmInOutShape;
  using RoiShape = DdrInOutShape;
  typedef OcmTensor<char, RoiShape::NUM_BCH, RoiShape::NUM_CHN, RoiShape::NUM_ROWS, RoiShape::NUM_COLS> RoiShapeDesc;
  OcmInOutShape ocmInp;
  iota_fill(ocmInp);
  BroadcastStream::stage<OcmInOutShape, RoiShapeDesc>(ocmInp);
  constexpr std::int32_t numBroadcasts32 = DdrInOutShape::linearElemCount / getNumberOfWeightRegisters<std::int32_t>();
  qVar_t<std::int32_t> arr[getNumberOfWeightRegisters<std::int8_t>()];
  qVar_t<std::int32_t> out[1];
  out[0] = 0;
  for(std::int32_t i = 0; i < numBroadcasts32; i++) {
    arr[0] = qBroadcast<0, std::int32_t, BroadcastAction::POP>;
    arr[1] = qBroadcast<1, std::int32_t>;
    out[0] += (arr[0] + arr[1]);
  }
  EXPECT_EQ(out[0].at(7, 7), 63 * 64 / 2);
  const auto& s = tessera::epu::device().spec();
  EXPECT_NEAR(s.core_count.value * s.param("epu.int8_macs_per_cycle_per_core").value * 2 * s.clock_hz.value, 1e12,
              0.05e12);
}

TEST_F(EpuQ8, AQ8ProgramRefusesAQ16Device) {
  use("chimera-q16");
  expect_error<tessera::UserError>([] { (void)(qVar_t<std::int32_t>(1) + 1); }, {"compiled for a 8x8 array", "16x16"});
}

}  // namespace
