// Modeled cycle counts read by the program itself (spec 001 §8): cycleCount wraps a program
// and writes the cycles it took, as two 32-bit words (low, high), to a tensor on `tile`.
#pragma once

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace poplar {

Tensor cycleCount(Graph& graph, program::Sequence& prog, unsigned tile,
                  SyncType syncType = SyncType::INTERNAL, const DebugContext& debugContext = {});
// The device's cycle counter at this point of `prog`, as (low, high) words on `tile`.
Tensor cycleStamp(Graph& graph, program::Sequence& prog, unsigned tile,
                  SyncType syncType = SyncType::INTERNAL, const DebugContext& debugContext = {});

}  // namespace poplar
