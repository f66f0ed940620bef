// A kernel whose body lives in a header, as Habana's gather_fwd_dim0_i32.c includes
// gather_fwd_i32.h: tessera_add_tpc_kernels rewrites the header's `__global__ int*` too.
#define OFFSET 1
#include "header_pointer_body.h"
