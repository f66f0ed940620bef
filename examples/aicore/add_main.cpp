// The host side of the vector add in Ascend C's CPU-debug form: GmAlloc the inputs, launch on
// 8 blocks with ICPU_RUN_KF, check the result; then Tessera's profile of the run.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tessera/targets/aicore/api/report.h"
#include "tikicpulib.h"

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z);

int32_t main(int32_t argc, char* argv[]) {
  (void)argc;
  (void)argv;
  uint32_t blockDim = 8;
  size_t inputByteSize = 8 * 2048 * sizeof(uint16_t);
  size_t outputByteSize = 8 * 2048 * sizeof(uint16_t);

  uint8_t* x = (uint8_t*)AscendC::GmAlloc(inputByteSize);
  uint8_t* y = (uint8_t*)AscendC::GmAlloc(inputByteSize);
  uint8_t* z = (uint8_t*)AscendC::GmAlloc(outputByteSize);
  const size_t n = inputByteSize / sizeof(uint16_t);
  for (size_t i = 0; i < n; ++i) {
    ((_Float16*)x)[i] = (_Float16)(0.25f * (float)(i % 97));
    ((_Float16*)y)[i] = (_Float16)(1.0f - 0.5f * (float)(i % 13));
  }

  AscendC::SetKernelMode(KernelMode::AIV_MODE);
  ICPU_RUN_KF(add_custom, blockDim, x, y, z);  // use this macro for cpu debug

  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) {
    const float want = (float)(_Float16)((float)((_Float16*)x)[i] + (float)((_Float16*)y)[i]);
    if ((float)((_Float16*)z)[i] != want) ++wrong;
  }
  std::printf("add_custom: %zu of %zu results differ from x + y\n", wrong, n);
  tessera::aicore::print_report(stdout);

  AscendC::GmFree((void*)x);
  AscendC::GmFree((void*)y);
  AscendC::GmFree((void*)z);
  return wrong == 0 ? 0 : 1;
}
