// The compiler backend of the aicore target ("aicore"): lowers f32 element-wise nodes of
// equal-shaped operands to the Ascend C op library on its default device, ascend910, computing
// in fp16 on the Vector unit as Ascend's compiler does by default; every other node falls back
// to reference with its reason.
#pragma once

#include <memory>

#include "tessera/compiler/backend.h"

namespace tessera::aicore {
std::unique_ptr<compiler::Backend> make_aicore_backend();
}  // namespace tessera::aicore

namespace tessera::targets {
// Registers "aicore" (the generated target list calls it; registering again replaces it).
void register_aicore_backend();
}  // namespace tessera::targets
