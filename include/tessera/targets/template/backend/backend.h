// The compiler backend of the template target ("template"): lowers f32 element-wise nodes of
// equal-shaped operands to the template op library on its default device, the "template"
// preset; every other node falls back to reference with its reason.
#pragma once

#include <memory>

#include "tessera/compiler/backend.h"

namespace tessera::tmpl {
std::unique_ptr<compiler::Backend> make_template_backend();
}  // namespace tessera::tmpl

namespace tessera::targets {
// Registers "template" (the generated target list calls it; registering again replaces it).
void register_template_backend();
}  // namespace tessera::targets
