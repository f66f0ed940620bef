// The TPC-C built-ins for a kernel file compiled as C++ (tessera_add_tpc_kernels includes this
// before the file): the types, intrinsics (current tpc-intrinsics.h names and the legacy ones of
// spec 000 / tpc-defs.h), switches, address-space qualifiers and printf, in the global namespace
// as tpc-clang predeclares them.
#ifndef TESSERA_TPC_C_H
#define TESSERA_TPC_C_H

#include "tessera/targets/tpc/api/tpc.h"

using namespace tessera::tpc;  // NOLINT(google-global-names-in-headers): TPC-C's predeclared names

// Address spaces (spec 000 §2.5.2-2.5.3). `__global__ T*` is what gen_addr converts to; the
// access through it is checked (global_address). A program-scope `__local__` object is the
// core's local memory: in a file built by tessera_add_tpc_kernels (which names the section in
// TESSERA_TPC_LOCAL_SECTION), each core has its own copy, starting from the file's initial
// values at every launch and kept from one of the core's program instances to the next (spec
// 000 §2.6.4), and it takes its bytes of the core's scalar or vector local memory. A file that
// includes this header by itself has no such section: its `__local__` objects are per host
// thread, outside any limit.
#define __global__
#define __global
#ifdef TESSERA_TPC_LOCAL_SECTION
#define __local__ __attribute__((section(TESSERA_TPC_LOCAL_SECTION)))
#else
#define __local__ thread_local
#endif
#define __local __local__
// tessera_add_tpc_kernels follows each program-scope `__local__ T name[...];` it recognises with
// this record of the object (section TESSERA_TPC_LOCAL_SIZE_SECTION): its host and modeled sizes
// and where its bytes are, so it takes its modeled size in the core's local memory and lives in
// that memory's bytes at its address.
#ifdef TESSERA_TPC_LOCAL_SIZE_SECTION
#define TESSERA_TPC_MODELED_LOCAL(type, name)                                 \
  __attribute__((section(TESSERA_TPC_LOCAL_SIZE_SECTION), used)) static const \
      ::tessera::tpc::FileLocalSize tessera_tpc_local_size_##name =            \
          ::tessera::tpc::file_local_record<decltype(name)>(&name, __COUNTER__);
#else
#define TESSERA_TPC_MODELED_LOCAL(type, name)
#endif

// printf is TPC-C's (spec 000 §2.7.3; `#pragma tpc_printf(enable)` needs nothing else here), as
// tpc-special.h makes it a macro over the built-in.
#define printf ::tessera::tpc::printf

#endif  // TESSERA_TPC_C_H
