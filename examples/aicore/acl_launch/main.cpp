// One host program in the two forms Ascend C projects keep side by side: the CPU-debug form
// (GmAlloc, ICPU_RUN_KF), and the kernel-launch form on the AscendCL runtime (aclrtMalloc,
// aclrtMemcpy, ACLRT_LAUNCH_KERNEL and the kernel file's <<<>>> wrapper, aclrtSynchronizeStream),
// which is what builds when ASCENDC_CPU_DEBUG is not defined (linking ascendcl rather than
// tessera_aicore).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifndef ASCENDC_CPU_DEBUG
#include "acl/acl.h"
#include "aclrtlaunch_scale_add_custom.h"
// The <<<>>> wrapper in the kernel file.
void scale_add_custom_do(uint32_t blockDim, void* l2ctrl, void* stream, uint8_t* x, uint8_t* y,
                         uint8_t* z, uint32_t perBlock, float alpha);
#define CHECK_ACL(call)                                                         \
  do {                                                                          \
    const aclError status = (call);                                             \
    if (status != ACL_SUCCESS) {                                                \
      std::printf("%s failed: %d (%s)\n", #call, status, aclGetRecentErrMsg()); \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)
#else
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void scale_add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z,
                                                       uint32_t perBlock, float alpha);
#endif

namespace {
constexpr uint32_t kBlocks = 8;
constexpr uint32_t kPerBlock = 4096;
constexpr uint32_t kCount = kBlocks * kPerBlock;
constexpr float kAlpha = 0.5f;

_Float16 x_at(uint32_t i) {
  return static_cast<_Float16>(0.125f * static_cast<float>(i % 29));
}
_Float16 y_at(uint32_t i) {
  return static_cast<_Float16>(1.0f - 0.25f * static_cast<float>(i % 11));
}
// The count of results that differ from alpha * x + y computed as the kernel rounds (to half
// after the product, then after the sum).
size_t wrong_results(const _Float16* z) {
  size_t wrong = 0;
  for (uint32_t i = 0; i < kCount; ++i) {
    const auto ax = static_cast<_Float16>(static_cast<float>(x_at(i)) * kAlpha);
    const auto want = static_cast<_Float16>(static_cast<float>(ax) + static_cast<float>(y_at(i)));
    if (z[i] != want) ++wrong;
  }
  return wrong;
}
}  // namespace

int main() {
  const size_t bytes = kCount * sizeof(_Float16);
  std::vector<_Float16> x(kCount), y(kCount), z(kCount);
  for (uint32_t i = 0; i < kCount; ++i) {
    x[i] = x_at(i);
    y[i] = y_at(i);
  }
#ifdef ASCENDC_CPU_DEBUG
  auto* xGm = static_cast<uint8_t*>(AscendC::GmAlloc(bytes));
  auto* yGm = static_cast<uint8_t*>(AscendC::GmAlloc(bytes));
  auto* zGm = static_cast<uint8_t*>(AscendC::GmAlloc(bytes));
  std::memcpy(xGm, x.data(), bytes);
  std::memcpy(yGm, y.data(), bytes);
  ICPU_RUN_KF(scale_add_custom, kBlocks, xGm, yGm, zGm, kPerBlock, kAlpha);
  std::memcpy(z.data(), zGm, bytes);
  AscendC::GmFree(xGm);
  AscendC::GmFree(yGm);
  AscendC::GmFree(zGm);
#else
  CHECK_ACL(aclInit(nullptr));
  CHECK_ACL(aclrtSetDevice(0));
  aclrtStream stream = nullptr;
  CHECK_ACL(aclrtCreateStream(&stream));
  void *xDev = nullptr, *yDev = nullptr, *zDev = nullptr;
  CHECK_ACL(aclrtMalloc(&xDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&yDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMalloc(&zDev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK_ACL(aclrtMemcpy(xDev, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  CHECK_ACL(aclrtMemcpy(yDev, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
  const uint32_t launched =
      ACLRT_LAUNCH_KERNEL(scale_add_custom)(kBlocks, stream, xDev, yDev, zDev, kPerBlock, kAlpha);
  if (launched != 0) {
    std::printf("launch failed: %u (%s)\n", launched, aclGetRecentErrMsg());
    return 1;
  }
  CHECK_ACL(aclrtSynchronizeStream(stream));
  CHECK_ACL(aclrtMemcpy(z.data(), bytes, zDev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  if (wrong_results(z.data()) != 0) {
    std::printf("ACLRT_LAUNCH_KERNEL: wrong results\n");
    return 1;
  }
  // Again through the <<<>>> wrapper, into cleared memory.
  CHECK_ACL(aclrtMemset(zDev, bytes, 0, bytes));
  scale_add_custom_do(kBlocks, nullptr, stream, static_cast<uint8_t*>(xDev),
                      static_cast<uint8_t*>(yDev), static_cast<uint8_t*>(zDev), kPerBlock, kAlpha);
  CHECK_ACL(aclrtSynchronizeStream(stream));
  CHECK_ACL(aclrtMemcpy(z.data(), bytes, zDev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
  CHECK_ACL(aclrtFree(xDev));
  CHECK_ACL(aclrtFree(yDev));
  CHECK_ACL(aclrtFree(zDev));
  CHECK_ACL(aclrtDestroyStream(stream));
  CHECK_ACL(aclrtResetDevice(0));
  CHECK_ACL(aclFinalize());
#endif
  const size_t wrong = wrong_results(z.data());
  std::printf("scale_add_custom: %zu of %u results differ from alpha * x + y\n", wrong, kCount);
  return wrong == 0 ? 0 : 1;
}
