// Ascend C kernels and their CPU-debug host calls (spec 003) misused the way a program does by
// mistake: launches of no blocks, global memory freed twice or never allocated, tensors read
// past their ends or before their buffers exist. Each raises a UserError or a DeviceFault
// naming what is wrong, never a crash or data read from outside the simulated core.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernel_operator.h"
#include "misuse.h"
#include "tikicpulib.h"

using namespace AscendC;
using misuse::message_of;
using tessera::DeviceFault;
using tessera::UserError;

namespace {

void empty_kernel() {}

TEST(AicoreMisuse, LaunchOfZeroBlocks) {
  EXPECT_MENTIONS(message_of<UserError>([] { ICPU_RUN_KF(empty_kernel, 0); }), "0");
}

TEST(AicoreMisuse, LaunchInsideAKernel) {
  auto nested = [] { ICPU_RUN_KF(empty_kernel, 1); };
  auto outer = [&] { nested(); };
  EXPECT_FALSE(message_of<UserError>([&] { ICPU_RUN_KF(outer, 1); }).empty());
}

TEST(AicoreMisuse, GmFreeTwiceAndOfMemoryGmAllocDidNotGive) {
  void* p = GmAlloc(64);
  ASSERT_NE(p, nullptr);
  GmFree(p);
  EXPECT_FALSE(message_of<UserError>([&] { GmFree(p); }).empty());
  std::vector<std::uint8_t> host(64);
  EXPECT_FALSE(message_of<UserError>([&] { GmFree(host.data()); }).empty());
}

TEST(AicoreMisuse, GmAllocOfAbsurdlyManyBytes) {
  EXPECT_FALSE(message_of<DeviceFault>([] { GmAlloc(std::size_t{1} << 50); }).empty());
}

template <int Case>
void gm_kernel(GM_ADDR x) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> b;
  pipe.InitBuffer(b, 256);
  GlobalTensor<half> g;
  if constexpr (Case == 0) g.SetGlobalBuffer(nullptr, 128);
  if constexpr (Case == 1) g.SetGlobalBuffer((__gm__ half*)x, 128);
  if constexpr (Case == 2) {
    g.SetGlobalBuffer((__gm__ half*)x, 128);
    (void)g.GetValue(1000);
    return;
  }
  DataCopy(b.Get<half>(), g, 128);
}

TEST(AicoreMisuse, GlobalTensorOnANullPointer) {
  EXPECT_FALSE(message_of<DeviceFault>([] { ICPU_RUN_KF(gm_kernel<0>, 1, nullptr); }).empty());
}

TEST(AicoreMisuse, GlobalTensorOnHostMemoryGmAllocDidNotGive) {
  std::vector<half> host(128);
  EXPECT_FALSE(message_of<DeviceFault>([&] {
                 ICPU_RUN_KF(gm_kernel<1>, 1, reinterpret_cast<GM_ADDR>(host.data()));
               }).empty());
}

TEST(AicoreMisuse, GlobalTensorScalarReadPastItsAllocation) {
  void* p = GmAlloc(256);
  EXPECT_FALSE(
      message_of<DeviceFault>([&] { ICPU_RUN_KF(gm_kernel<2>, 1, static_cast<GM_ADDR>(p)); })
          .empty());
  GmFree(p);
}

TEST(AicoreMisuse, GlobalTensorOnFreedMemory) {
  void* p = GmAlloc(256);
  GmFree(p);
  EXPECT_FALSE(
      message_of<DeviceFault>([&] { ICPU_RUN_KF(gm_kernel<1>, 1, static_cast<GM_ADDR>(p)); })
          .empty());
}

template <int Case>
void local_kernel() {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> b;
  pipe.InitBuffer(b, 256);
  LocalTensor<float> t = b.Get<float>();
  Duplicate(t, 1.0f, 64);
  PipeBarrier<PIPE_ALL>();
  if constexpr (Case == 4) (void)b.Get<float>(65);
  if constexpr (Case == 5) Adds(t, t, 1.0f, -8);
}

TEST(AicoreMisuse, TBufGetMoreThanItHolds) {
  EXPECT_FALSE(message_of<DeviceFault>([] { ICPU_RUN_KF(local_kernel<4>, 1); }).empty());
}

TEST(AicoreMisuse, NegativeCount) {
  EXPECT_FALSE(message_of<DeviceFault>([] { ICPU_RUN_KF(local_kernel<5>, 1); }).empty());
}

template <int Case>
void queue_kernel() {
  TPipe pipe;
  TQue<QuePosition::VECIN, 2> q;
  if constexpr (Case == 0) pipe.InitBuffer(q, 2, 0);
  if constexpr (Case == 1) {
    pipe.InitBuffer(q, 2, 256);
    pipe.InitBuffer(q, 2, 256);
  }
  if constexpr (Case == 2) pipe.InitBuffer(q, 255, 1u << 20);
}

TEST(AicoreMisuse, QueueOfZeroBytesInitialisedTwiceOrBeyondUb) {
  EXPECT_FALSE(message_of<DeviceFault>([] { ICPU_RUN_KF(queue_kernel<0>, 1); }).empty());
  EXPECT_FALSE(message_of<DeviceFault>([] { ICPU_RUN_KF(queue_kernel<1>, 1); }).empty());
  EXPECT_FALSE(message_of<DeviceFault>([] { ICPU_RUN_KF(queue_kernel<2>, 1); }).empty());
}

void throwing_kernel() {
  if (GetBlockIdx() == 3) throw std::runtime_error("user code failed in block 3");
}

TEST(AicoreMisuse, KernelCodeThatThrowsReachesTheCaller) {
  try {
    ICPU_RUN_KF(throwing_kernel, 8);
    ADD_FAILURE() << "nothing was thrown";
  } catch (const std::exception& e) {
    EXPECT_MENTIONS(e.what(), "block 3");
  }
}

}  // namespace
