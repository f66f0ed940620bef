// Non-linearity kinds (PopLibs API: popnn/NonLinearityDef.hpp).
#pragma once

namespace popnn {

enum class NonLinearityType {
  SIGMOID,
  HARD_SIGMOID,
  RELU,
  TANH,
  GELU,
  SWISH,
  SOFTMAX,
  SOFTMAX_STABLE,
  SOFTMAX_SCALED
};

}  // namespace popnn
