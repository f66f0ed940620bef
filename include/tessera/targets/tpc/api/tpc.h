// Everything a TPC kernel writer and launcher needs: `#include "tessera/targets/tpc/api/tpc.h"`
// and `using namespace tessera::tpc;`. See docs/targets/tpc.md.
#pragma once

#include "tessera/targets/tpc/api/context.h"
#include "tessera/targets/tpc/api/glue.h"
#include "tessera/targets/tpc/api/intrinsics.h"
#include "tessera/targets/tpc/api/intrinsics_gaudi.h"
#include "tessera/targets/tpc/api/library.h"
#include "tessera/targets/tpc/api/local_memory.h"
#include "tessera/targets/tpc/api/printf.h"
#include "tessera/targets/tpc/api/runtime.h"
#include "tessera/targets/tpc/api/special_functions.h"
#include "tessera/targets/tpc/api/types.h"
