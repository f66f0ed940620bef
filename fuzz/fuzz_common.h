// Shared by Tessera's libFuzzer targets (fuzz/README.md). A target may end a run with a UserError
// (bad input) or a DeviceFault (the simulated hardware faulting); anything else, an
// InternalError, another exception, a crash, a sanitizer report or a hang, is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>

#include "tessera/compiler/plan.h"
#include "tessera/core/error.h"

namespace tessera::fuzz {

// Process-wide set-up: backends registered, small host memory and thread limits so one input
// cannot take the machine (run before the first input).
void initialize();

// Runs `body`; UserError and DeviceFault are expected outcomes, everything else aborts so that
// libFuzzer (or the replay driver) reports it with the input.
void expect_clean(const std::function<void()>& body);

// Plans and runs `plan` once on a fresh device with seeded random inputs, when it is small
// enough to run in a few milliseconds; bigger plans are only planned.
void run_if_small(const compiler::Plan& plan);

}  // namespace tessera::fuzz
