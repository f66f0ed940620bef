// The compiler backend of the Gaudi target ("gaudi"): lowers IR nodes to the TPC built-in kernel
// library and the MME through tpc::Runtime, exactly as a user's program would (tpc::ops).
// Convolution, pooling, batch norm and the elementwise ops between them run NHWC, the layout
// the TPC prefers (spec 000 §2.4.6); nodes without a TPC kernel fall back to reference.
#pragma once

#include <memory>

#include "tessera/compiler/backend.h"

namespace tessera::tpc {

std::unique_ptr<compiler::Backend> make_gaudi_backend();
// Registers "gaudi" in the compiler's backend registry (registering again replaces it).
void register_tpc_backend();

}  // namespace tessera::tpc

namespace tessera::targets {
// The registration call the generated target list (cmake/targets.cmake) makes for this folder.
inline void register_tpc_backend() {
  tpc::register_tpc_backend();
}
}  // namespace tessera::targets
