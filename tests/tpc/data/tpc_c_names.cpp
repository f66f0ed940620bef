// What a TPC-C file sees: the names the intrinsic-names test looks for.
#include "tessera/targets/tpc/compat/tpc-c.h"
