// Every target the build has (cmake/targets.cmake), registered by explicit calls generated from
// that list: what the tessera tool, the conformance suite and the benchmarks use to find
// backends. Nothing here names a target or a preset.
#pragma once

#include <string>
#include <vector>

namespace tessera::targets {

// The targets of this build (folder names under src/targets/), in the list's order.
std::vector<std::string> built_targets();

// Registers every built target's backends, then `reference`, whose default device is the
// default device of the first backend the first target registers. Registering again replaces
// the entries.
void register_all_backends();

}  // namespace tessera::targets
