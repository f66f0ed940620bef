// What an operator's host code includes in CANN (register/op_def_registry.h): the tiling
// context a TilingFunc receives, the tiling-data definitions and the OpDef prototype
// registration (register/op_def.h).
#pragma once

#include "exe_graph/runtime/tiling_context.h"
#include "register/op_def.h"
#include "register/tilingdata_base.h"
