// Spec 004's API used as a Quadric SDK user writes it beyond the printed examples: broadcasts
// read into wider registers and through `auto`, operands read left to right, widening qVar_t
// conversions, RAU offsets given as integers or mixed qVar_t types, the iterator template order
// of "Iterator Parameters", and what a neighbour port holds on a fresh device. Each result is
// checked against a host computation.
#include "epu_common.h"

#include <type_traits>

using namespace epu_test;

namespace {

class EpuUsage : public ::testing::Test {
 protected:
  void SetUp() override { use("chimera-q16"); }
};

typedef OcmTensor<char, 1, 1, Epu::coreDim, Epu::coreDim> TileDesc;

// spec 004 "Array-Side Consumption" declares qVar_t<std::int32_t> arr[getNumberOfWeightRegisters<
// std::int8_t>()]: eight int8 broadcasts per POP land in int32 registers, sign-extended.
TEST_F(EpuUsage, Int8BroadcastsWidenIntoInt32Registers) {
  typedef OcmTensor<std::int8_t, 1, 1, Epu::coreDim, Epu::coreDim> Ocm8;
  Ocm8 w;
  long want = 0;
  for (std::size_t i = 0; i < Ocm8::kLinear; ++i) {
    w.data()[i] = static_cast<std::int8_t>(static_cast<int>(i * 37 % 256) - 128);
    want += w.data()[i] * static_cast<long>(i % 8 + 1);
  }
  BroadcastStream::stage<Ocm8, TileDesc>(w);
  qVar_t<std::int32_t> arr[getNumberOfWeightRegisters<std::int8_t>()];
  qVar_t<std::int32_t> out = 0;
  constexpr std::int32_t numBroadcasts8 =
      Ocm8::linearElemCount / getNumberOfWeightRegisters<std::int8_t>();
  for (std::int32_t i = 0; i < numBroadcasts8; i++) {
    arr[0] = qBroadcast<0, std::int8_t, BroadcastAction::POP>;
    arr[1] = qBroadcast<1, std::int8_t>;
    arr[2] = qBroadcast<2, std::int8_t>;
    arr[3] = qBroadcast<3, std::int8_t>;
    arr[4] = qBroadcast<4, std::int8_t>;
    arr[5] = qBroadcast<5, std::int8_t>;
    arr[6] = qBroadcast<6, std::int8_t>;
    arr[7] = qBroadcast<7, std::int8_t>;
    for (std::int32_t k = 0; k < 8; ++k) out += arr[k] * (k + 1);
  }
  EXPECT_EQ(out.at(0, 0), want);
  EXPECT_EQ(out.at(15, 15), want);
  // A narrower register than the element does not compile (compile_fail/broadcast_narrowing.cpp).
}

// qBroadcast "returns a qVar_t<T>": `auto w = qBroadcast<...>` reads once, however often w is used.
TEST_F(EpuUsage, AutoBroadcastReadsOnce) {
  typedef OcmTensor<std::int32_t, 1, 1, 1, 8> W;
  typedef OcmTensor<char, 1, 1, 1, 8> Desc;
  W w;
  iota_fill(w, 10);  // 10..17
  BroadcastStream::stage<W, Desc>(w);
  qVar_t<std::int32_t> acc = 0;
  long want = 0;
  for (int i = 0; i < 4; ++i) {
    auto a = qBroadcast<0, std::int32_t, BroadcastAction::POP>;
    auto b = qBroadcast<1, std::int32_t>;
    acc += a * 100 + b;
    acc += a;  // a again: no second POP
    want += (10 + 2 * i) * 101 + 11 + 2 * i;
  }
  EXPECT_EQ(acc.at(3, 4), want);
  EXPECT_EQ(tessera::epu::array().bus().pops_left(), 0u);  // exactly 4 POPs for 4 x 64 bits
}

// A qBroadcast goes straight to a neighbour port or into Rau::Store, as a qVar_t<T> would.
TEST_F(EpuUsage, BroadcastSentToPortsAndStoredByRau) {
  typedef OcmTensor<std::int32_t, 1, 1, 1, 8> W;
  typedef OcmTensor<char, 1, 1, 1, 8> Desc;
  W w;
  iota_fill(w, 40);  // 40..47
  BroadcastStream::stage<W, Desc>(w);
  qAllNeighbors<> = qBroadcast<0, std::int32_t, BroadcastAction::POP>;  // 40 to every neighbour
  const qVar_t<std::int32_t> west = qWest<>;
  EXPECT_EQ(west.at(5, 6), 40);
  EXPECT_EQ(west.at(5, 0), 0);  // nothing beyond the array's west edge
  qSouth<> = qBroadcast<1, std::int32_t>;  // 41 to each core's southern neighbour
  const qVar_t<std::int32_t> north = qNorth<>;
  EXPECT_EQ(north.at(7, 2), 41);
  EXPECT_EQ(north.at(0, 2), 0);

  OcmTensor<std::int32_t, 1, 1, Epu::coreDim, Epu::coreDim> t;
  Rau::config(t);
  Rau::Store::oneTile(0, 0, qRow<>, qCol<>, qBroadcast<0, std::int32_t, BroadcastAction::POP>, t);
  EXPECT_EQ(t.at(0, 0, 9, 3), 42);
  EXPECT_EQ(tessera::epu::array().bus().pops_left(), 2u);  // two of the four 64-bit POPs taken
}

// In one expression the POP operand is read before the PEEK beside it, whichever side it is on.
TEST_F(EpuUsage, BroadcastOperandsAreReadLeftToRight) {
  typedef OcmTensor<std::int32_t, 1, 1, 1, 4> W;
  typedef OcmTensor<char, 1, 1, 1, 4> Desc;
  W w;
  iota_fill(w, 1);  // 1 2 | 3 4
  BroadcastStream::stage<W, Desc>(w);
  const qVar_t<std::int32_t> d =
      qBroadcast<0, std::int32_t, BroadcastAction::POP> * 10 - qBroadcast<1, std::int32_t>;
  EXPECT_EQ(d.at(0, 0), 1 * 10 - 2);
  const qVar_t<bool> lt =
      qBroadcast<0, std::int32_t, BroadcastAction::POP> < qBroadcast<1, std::int32_t>;
  EXPECT_TRUE(lt.at(1, 1));  // 3 < 4
  EXPECT_EQ((-qBroadcast<1, std::int32_t>).at(0, 0), -4);
}

TEST_F(EpuUsage, WideningConversionsAreImplicitOthersExplicit) {
  const qVar_t<std::int8_t> small = qVar_t<std::int8_t>(qRow<std::int32_t> - 8);
  const qVar_t<std::int32_t> wide = small;  // sign-extends
  EXPECT_EQ(wide.at(0, 3), -8);
  EXPECT_EQ((wide + qVar_t<std::int16_t>(300)).at(15, 0), 307);  // int16 widens to int32
  static_assert(std::is_convertible_v<qVar_t<std::uint8_t>, qVar_t<std::int16_t>>);
  static_assert(!std::is_convertible_v<qVar_t<std::int32_t>, qVar_t<std::int16_t>>);
  static_assert(!std::is_convertible_v<qVar_t<std::uint32_t>, qVar_t<std::int32_t>>);
  static_assert(!std::is_convertible_v<qVar_t<std::int16_t>, qVar_t<std::uint32_t>>);
  static_assert(
      std::is_constructible_v<qVar_t<std::int32_t>, qVar_t<std::uint32_t>>);  // explicitly
}

// spec 004 "RAU": four offsets per core; constant ones as plain integers, any integer qVar_t.
TEST_F(EpuUsage, RauOffsetsAsIntegersOrMixedQVarTypes) {
  typedef OcmTensor<std::int32_t, 1, 2, 32, 40> T;
  T t;
  iota_fill(t);
  Rau::config(t);
  const qVar_t<std::uint32_t> rowOffset = qRow<> * 2;
  const qVar_t<std::int32_t> colOffset = qCol<std::int32_t> + 3;
  const qVar_t<std::int32_t> q = Rau::Load::oneTile(0, 1, rowOffset, colOffset, t);
  for (std::uint32_t r : {0u, 7u, 15u})
    for (std::uint32_t c : {0u, 9u, 15u})
      EXPECT_EQ(q.at(r, c), static_cast<std::int32_t>(1280 + 2 * r * 40 + c + 3));
  Rau::Store::oneTile(0u, std::size_t{1}, rowOffset, colOffset, q * -1, t);
  EXPECT_EQ(t.at(0, 1, 30, 18), -(1280 + 30 * 40 + 18));
  EXPECT_EQ(t.at(0, 1, 31, 18), 1280 + 31 * 40 + 18);  // odd rows untouched
  // A negative offset that leads below the OCM is named as such.
  expect_error([&] { (void)Rau::Load::oneTile(0, 0, qRow<std::int32_t> - 100000, 0, t); },
               {"Rau::Load::oneTile", "core (0, 0)", "row -100000", "outside"});
}

// spec 004 "Iterator Parameters" lists StreamSide, RoiShape, DataShape: that order works too.
TEST_F(EpuUsage, IteratorTemplateParametersInTheListedOrder) {
  typedef OcmTensor<std::int32_t, 1, 1, 32, 48> DataShape;
  typedef OcmTensor<std::int32_t, 1, 1, 16, 32> RoiShape;
  DataShape t, u;
  iota_fill(t);
  qVar_t<std::int32_t> a[RoiShape::NUM_TILES], b[RoiShape::NUM_TILES];
  fetchTilesInRoi<StreamSide::EAST, RoiShape, DataShape, IteratorType::YX_BORDER>(t, a, 0, 0, 8,
                                                                                  16);
  fetchTilesInRoi<DataShape, RoiShape, StreamSide::EAST, IteratorType::YX_BORDER>(t, b, 0, 0, 8,
                                                                                  16);
  for (int k = 0; k < RoiShape::NUM_TILES; ++k)
    for (std::size_t i = 0; i < Epu::numCores; ++i) ASSERT_EQ(a[k][i], b[k][i]);
  EXPECT_EQ(a[1].at(2, 5), t.at(0, 0, 8 + 5, 32 + 2));  // EAST: core (r, c) holds element (c, r)
  writeTilesInRoi<StreamSide::WEST, RoiShape, DataShape, IteratorType::YX_BORDER>(a, u, 0, 0, 8,
                                                                                  16);
  EXPECT_EQ(u.at(0, 0, 20, 40), t.at(0, 0, 20, 40));  // fetch EAST, write WEST: back in place
}

// A port no value has reached on this device holds 0; the type read must be the type sent.
TEST_F(EpuUsage, NeighbourPortsOnAFreshDeviceAndAcrossTypes) {
  qAllNeighbors<> = qVar_t<std::int32_t>(5);
  use("chimera-q16");
  const qVar_t<std::int32_t> n = qNorth<>;
  EXPECT_EQ(n.at(4, 4), 0);
  const qVar_t<std::int16_t> x = qVar_t<std::int16_t>(qCol<std::int32_t>);
  qAllNeighbors<> = x;
  const qVar_t<std::int16_t> e = qEast<std::int16_t>;
  EXPECT_EQ(e.at(3, 4), 5);
}

}  // namespace

namespace {

// global_operator_overloading.hpp's operators include the compound and increment forms.
TEST_F(EpuUsage, CompoundShiftRemainderAndIncrement) {
  qVar_t<std::int32_t> x = qCol<std::int32_t> * 3 - 7;  // -7 at column 0, 38 at column 15
  qVar_t<std::int32_t> y = x;
  y %= 5;
  EXPECT_EQ(y.at(0, 0), -7 % 5);
  EXPECT_EQ(y.at(0, 15), 38 % 5);
  y = x;
  y <<= 2;
  EXPECT_EQ(y.at(0, 15), 38 * 4);
  y >>= 3;
  EXPECT_EQ(y.at(0, 0), (-7 * 4) >> 3);
  qVar_t<std::int32_t> z = x++;
  EXPECT_EQ(z.at(0, 1), -4);
  EXPECT_EQ(x.at(0, 1), -3);
  --x;
  EXPECT_EQ(x.at(0, 1), -4);
  qVar_t<FixedPoint16<8>> f = 0.5;
  ++f;
  EXPECT_DOUBLE_EQ(f.at(2, 2).toDouble(), 1.5);
  expect_error([&] { y %= qVar_t<std::int32_t>(qRow<std::int32_t>); },
               {"core (0, 0)", "division by zero"});
}

}  // namespace

namespace {

// spec 004 "Broadcast Notes and Cautions" 4.2: staging again before the source is used up; the
// next POP reads the new source's first 64 bits, and it must be popped before it is read.
TEST_F(EpuUsage, StagingAgainRestartsAtTheNewSource) {
  typedef OcmTensor<std::int32_t, 1, 1, 1, 8> W;
  typedef OcmTensor<char, 1, 1, 1, 8> Desc;
  W a, b;
  iota_fill(a, 0);
  iota_fill(b, 100);
  BroadcastStream::stage<W, Desc>(a);
  const qVar_t<std::int32_t> x = qBroadcast<1, std::int32_t, BroadcastAction::POP>;
  const qVar_t<std::int32_t> x2 = qBroadcast<0, std::int32_t, BroadcastAction::POP>;
  BroadcastStream::stage<W, Desc>(b);
  expect_error(
      [] {
        const qVar_t<std::int32_t> p = qBroadcast<0, std::int32_t>;
        (void)p;
      },
      {"before the first POP"});
  const qVar_t<std::int32_t> y = qBroadcast<1, std::int32_t, BroadcastAction::POP>;
  EXPECT_EQ(x.at(0, 0), 1);
  EXPECT_EQ(x2.at(0, 0), 2);
  EXPECT_EQ(y.at(9, 9), 101);  // not 105: b's first 64 bits
}

}  // namespace
