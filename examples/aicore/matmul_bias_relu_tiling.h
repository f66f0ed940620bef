// The tiling class of the matmul_bias_relu example: the Matmul's TCubeTiling nested in the
// operator's own tiling data, with the slope of the leaky ReLU (docs/targets/aicore.md,
// "High-level APIs").
#pragma once

#include "register/tilingdata_base.h"
#include "tiling/tiling_api.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(MatmulBiasReluTiling)
TILING_DATA_FIELD_DEF(float, slope);
TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cube);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(MatmulBiasRelu, MatmulBiasReluTiling)
}  // namespace optiling
