#pragma once

namespace poplar {

enum class TargetType { IPU, IPU_MODEL, CPU };

}  // namespace poplar
