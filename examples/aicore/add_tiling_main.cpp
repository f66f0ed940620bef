// The host side of the tiled vector add: fill the tiling class, SaveToBuffer into GM, launch
// with ICPU_RUN_KF on 8 blocks, check the result.
#include <cstdint>
#include <cstdio>

#include "add_custom_tiling.h"
#include "tessera/targets/aicore/api/report.h"
#include "tikicpulib.h"

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace,
                                                 GM_ADDR tiling);

int32_t main() {
  const uint32_t blockDim = 8, totalLength = 8 * 4096;
  optiling::TilingData tiling;
  tiling.set_totalLength(totalLength);
  tiling.set_tileNum(4);
  uint8_t* tilingGm = (uint8_t*)AscendC::GmAlloc(tiling.GetDataSize());
  tiling.SaveToBuffer(tilingGm, tiling.GetDataSize());

  const size_t bytes = totalLength * sizeof(uint16_t);
  uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* y = (uint8_t*)AscendC::GmAlloc(bytes);
  uint8_t* z = (uint8_t*)AscendC::GmAlloc(bytes);
  for (uint32_t i = 0; i < totalLength; ++i) {
    ((_Float16*)x)[i] = (_Float16)(0.5f * (float)(i % 31));
    ((_Float16*)y)[i] = (_Float16)(2.0f - 0.25f * (float)(i % 7));
  }
  ICPU_RUN_KF(add_custom, blockDim, x, y, z, nullptr, tilingGm);

  size_t wrong = 0;
  for (uint32_t i = 0; i < totalLength; ++i) {
    const float want = (float)(_Float16)((float)((_Float16*)x)[i] + (float)((_Float16*)y)[i]);
    if ((float)((_Float16*)z)[i] != want) ++wrong;
  }
  std::printf("add_custom (tiling %u elements, %u tiles): %zu of %u results differ\n", totalLength,
              tiling.get_tileNum(), wrong, totalLength);
  tessera::aicore::print_report(stdout);
  AscendC::GmFree(x);
  AscendC::GmFree(y);
  AscendC::GmFree(z);
  AscendC::GmFree(tilingGm);
  return wrong == 0 ? 0 : 1;
}
