// The TPC-C built-ins for a kernel file compiled as C++ (tessera_add_tpc_kernels includes this
// before the file): the types, intrinsics (current tpc-intrinsics.h names and the legacy ones of
// spec 000 / tpc-defs.h), switches, address-space qualifiers and printf, in the global namespace
// as tpc-clang predeclares them.
#ifndef TESSERA_TPC_C_H
#define TESSERA_TPC_C_H

#include "tessera/targets/tpc/api/tpc.h"

using namespace tessera::tpc;  // NOLINT(google-global-names-in-headers): TPC-C's predeclared names

// Address spaces (spec 000 §2.5.2-2.5.3). `__global__ T*` is what gen_addr converts to; the
// access through it is checked (global_address). A file-scope `__local__` object is per core:
// each host thread running program instances has its own, and, as on the hardware, it is not
// reinitialised between instances (spec 000 §2.6.4).
#define __global__
#define __global
#define __local__ thread_local
#define __local thread_local

// printf is TPC-C's (spec 000 §2.7.3; `#pragma tpc_printf(enable)` needs nothing else here), as
// tpc-special.h makes it a macro over the built-in.
#define printf ::tessera::tpc::printf

#endif  // TESSERA_TPC_C_H
