// The Quadric EPU SDK's names, as spec 004's examples use them (unqualified: qVar_t, memCpy,
// fetchAllTiles, Rau, BroadcastStream, NN::convTileBlockFx16, ...). Include this from EPU
// programs; the implementation lives in tessera/targets/epu/api/epu.h and kernels/nn.h.
// Compile with -DTESSERA_EPU_CORE_DIM=8 for a q8 array (default 16, q16).
#pragma once

#include "tessera/targets/epu/api/epu.h"
#include "tessera/targets/epu/kernels/nn.h"

using namespace tessera::epu::sdk;  // NOLINT: the SDK's API is global, as in its examples
