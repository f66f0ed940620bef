// The tiles' hardware random-number seeds (Poplar SDK: poplar/RandomSeed.hpp). Each worker
// context of each tile has a seed of four UNSIGNED_INT words; PopLibs' random functions without
// a seed tensor draw from it, and poprand::setSeed sets it. Tessera's reading: the seeds are a
// variable of [tiles][workers][4] (one row on each tile), zero until set, shared by every
// program of the graph; draws do not advance it.
#pragma once

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

namespace poplar {

// A copy of every tile's seeds, [numTiles][numWorkerContexts][4] UNSIGNED_INT, made by `prog`.
Tensor getHwSeeds(Graph& graph, program::Sequence& prog, const DebugContext& debugContext = {});

// Sets every tile's seeds from `hwSeeds` (what getHwSeeds returned, or a tensor of its shape and
// type); anything else is a tensor_creation_error.
void setHwSeeds(Graph& graph, const Tensor& hwSeeds, program::Sequence& prog,
                const DebugContext& debugContext = {});

}  // namespace poplar
