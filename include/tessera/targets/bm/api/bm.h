// C++ access to what the bm target's C API runs on, for tools, tests and benchmarks: the
// runtime::Device behind a BM context (its Profile, trace and cost model). Programs written
// for the BMNNSDK use only <libbmruntime/...> and <bmkernel/...>.
#pragma once

#include <libbmruntime/bmruntime.h>

#include "tessera/runtime/device.h"

namespace tessera::bm {

// The device a BM context is bound to; UserError when it is not bound.
runtime::Device& device_of(bmctx_t ctx);

}  // namespace tessera::bm
