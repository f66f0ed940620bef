// The host of the row sum in CPU-debug form: for three row lengths, write the tiling data,
// pick the strategy with ICPU_SET_TILING_KEY, launch one block per row, check against double
// sums of the rows.
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "row_sum_tiling.h"
#include "tikicpulib.h"

extern "C" __global__ __aicore__ void row_sum_custom(GM_ADDR rows, GM_ADDR sums, GM_ADDR workspace,
                                                     GM_ADDR tiling);

namespace {
int check(uint32_t rowLength, uint32_t key) {
  constexpr uint32_t kRows = 4;
  optiling::RowSumTiling tiling;
  tiling.set_rowLength(rowLength);
  auto* tilingGm = static_cast<uint8_t*>(AscendC::GmAlloc(tiling.GetDataSize()));
  tiling.SaveToBuffer(tilingGm, tiling.GetDataSize());
  auto* rows = static_cast<float*>(AscendC::GmAlloc(kRows * rowLength * sizeof(float)));
  auto* sums = static_cast<float*>(AscendC::GmAlloc(kRows * 8 * sizeof(float)));
  for (uint32_t i = 0; i < kRows * rowLength; ++i)
    rows[i] = 0.01f * static_cast<float>(static_cast<int32_t>((i * 37) % 201) - 100);
  ICPU_SET_TILING_KEY(key);
  ICPU_RUN_KF(row_sum_custom, kRows, reinterpret_cast<uint8_t*>(rows),
              reinterpret_cast<uint8_t*>(sums), nullptr, tilingGm);
  int wrong = 0;
  for (uint32_t r = 0; r < kRows; ++r) {
    double want = 0;
    for (uint32_t i = 0; i < rowLength; ++i) want += rows[r * rowLength + i];
    if (std::fabs(sums[r * 8] - want) > 1e-4 * rowLength) ++wrong;
  }
  std::printf("row_sum_custom: rows of %u (key %u): %d of %u sums wrong\n", rowLength, key, wrong,
              kRows);
  AscendC::GmFree(rows);
  AscendC::GmFree(sums);
  AscendC::GmFree(tilingGm);
  return wrong;
}
}  // namespace

int main() {
  int wrong = check(48, kRowSumOneRepeat);
  wrong += check(456, kRowSumBlocks);
  wrong += check(4000, kRowSumTwoPasses);
  return wrong == 0 ? 0 : 1;
}
