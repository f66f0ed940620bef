// Pooling kinds (PopLibs API: popnn/PoolingDef.hpp).
#pragma once

namespace popnn {
enum class PoolingType { MAX, AVG, SUM };
}
