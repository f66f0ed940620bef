// A text report of the latest Ascend C kernel launch: cycles, modeled time, global memory
// traffic and the utilisation of each pipe per core (busy cycles over the core's cycles).
#pragma once

#include <cstdio>
#include <string>

namespace tessera::aicore {

std::string report();
void print_report(std::FILE* out);

}  // namespace tessera::aicore
