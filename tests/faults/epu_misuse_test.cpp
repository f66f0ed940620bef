// The Quadric EPU SDK (spec 004) misused the way a program does by mistake: region offsets
// computed as `n - 1` of an empty extent (so, as size_t, just below 2^64), which must be refused
// as past the tensor rather than wrap around to a small offset and touch memory outside it.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include <epu.hpp>

#include "misuse.h"
#include "tessera/runtime/device.h"

using misuse::message_of;
using tessera::DeviceFault;

namespace {

constexpr std::size_t kMinusOne = std::numeric_limits<std::size_t>::max();

class EpuMisuse : public ::testing::Test {
 protected:
  void SetUp() override { tessera::epu::set_device(tessera::runtime::Device::open("chimera-q16")); }
};

TEST_F(EpuMisuse, MemCpyOffsetThatWrapsAround) {
  DdrTensor<std::int32_t, 1, 2, 16, 16> ddr;
  OcmTensor<std::int32_t, 1, 1, 16, 16> ocm;
  EXPECT_MENTIONS(message_of<DeviceFault>([&] { memCpy(ddr, ocm, 0, kMinusOne); }),
                  "reaches channel");
  EXPECT_MENTIONS(message_of<DeviceFault>([&] { memCpy(ocm, ddr, kMinusOne); }), "reaches batch");
}

TEST_F(EpuMisuse, FetchOffsetThatWrapsAround) {
  OcmTensor<std::int32_t, 1, 1, 32, 16> t;
  typedef OcmTensor<std::int32_t, 1, 1, 16, 16> Roi;
  qVar_t<std::int32_t> q[Roi::NUM_TILES];
  EXPECT_MENTIONS(message_of<DeviceFault>([&] { fetchTilesInRoi<Roi>(t, q, 0, 0, kMinusOne, 0); }),
                  "reaches height");
  EXPECT_MENTIONS(
      message_of<DeviceFault>([&] { writeTilesInRoi<Roi>(q, t, 0, 0, kMinusOne - 15, 0); }),
      "reaches height");
}

}  // namespace
