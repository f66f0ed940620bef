// Tile constants visible to codelets (spec 001 §7.1.1). The codelet compiler defines
// TESSERA_IPU_WORKER_CONTEXTS from the target's preset; 6 is the Mk1/Mk2 figure of §7.1.1.
#pragma once

#ifndef TESSERA_IPU_WORKER_CONTEXTS
#define TESSERA_IPU_WORKER_CONTEXTS 6
#endif
#define CTXT_WORKERS TESSERA_IPU_WORKER_CONTEXTS
