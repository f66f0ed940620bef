// An AscendCL host program against the installed runtime: aclrtMalloc, aclrtMemcpy, the kernel
// through ACLRT_LAUNCH_KERNEL and through the kernel file's <<<>>> wrapper.
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclrtlaunch_acl_double.h"

void acl_double_do(uint32_t blockDim, void* stream, uint8_t* x, uint8_t* y);

int main() {
  const size_t count = 4 * 256, bytes = count * sizeof(float);
  std::vector<float> x(count), y(count);
  for (size_t i = 0; i < count; ++i) x[i] = 0.5f * static_cast<float>(i % 23);
  aclrtStream stream = nullptr;
  void *xd = nullptr, *yd = nullptr;
  if (aclInit(nullptr) || aclrtSetDevice(0) || aclrtCreateStream(&stream) ||
      aclrtMalloc(&xd, bytes, ACL_MEM_MALLOC_HUGE_FIRST) ||
      aclrtMalloc(&yd, bytes, ACL_MEM_MALLOC_HUGE_FIRST) ||
      aclrtMemcpy(xd, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE))
    return 2;
  int wrong = 0;
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 0 && ACLRT_LAUNCH_KERNEL(acl_double)(4, stream, xd, yd) != 0) return 3;
    if (pass == 1) acl_double_do(4, stream, static_cast<uint8_t*>(xd), static_cast<uint8_t*>(yd));
    if (aclrtSynchronizeStream(stream) ||
        aclrtMemcpy(y.data(), bytes, yd, bytes, ACL_MEMCPY_DEVICE_TO_HOST) ||
        aclrtMemset(yd, bytes, 0, bytes))
      return 4;
    for (size_t i = 0; i < count; ++i) wrong += y[i] != 2.0f * x[i];
  }
  std::printf("acl_double: %d wrong\n", wrong);
  aclrtFree(xd);
  aclrtFree(yd);
  aclrtDestroyStream(stream);
  aclrtResetDevice(0);
  aclFinalize();
  return wrong == 0 ? 0 : 1;
}
