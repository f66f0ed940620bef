// How Graph::clone lays out the new tensor's elements relative to the one it copies.
#pragma once

namespace poplar {

enum class TensorCloneMethod {
  PRESERVE_ORDER_AND_ALIASES,
  CREATE_NEW_ORDER,
  PRESERVE_ORDER_UNLESS_ALIASES,
  GATHER_AND_PRESERVE_TILE_ORDER_AND_ALIASES
};

}  // namespace poplar
