// The tiling of the row sum: the row length; the host picks the kernel's strategy by tiling key.
#pragma once
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(RowSumTiling)
TILING_DATA_FIELD_DEF(uint32_t, rowLength);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(RowSumCustom, RowSumTiling)
}  // namespace optiling

// Strategies, by row length in floats: one masked WholeReduceSum (up to one repeat, 64),
// BlockReduceSum then WholeReduceSum (up to 8 repeats, 512), two WholeReduceSums (up to 4,096).
enum RowSumKey : uint32_t { kRowSumOneRepeat = 1, kRowSumBlocks = 2, kRowSumTwoPasses = 3 };
