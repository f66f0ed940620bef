// The tiles' hardware random seeds (poplar/RandomSeed.hpp): one variable per graph view,
// read and written by Copy programs, so their cost is the Engine's copy supersteps.
#include <poplar/RandomSeed.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "state.h"

namespace poplar {

namespace {
std::vector<std::size_t> seeds_shape(const Target& t) {
  return {t.getNumTiles(), t.getNumWorkerContexts(), 4};
}
}  // namespace

Tensor Graph::tesseraHwSeeds() {
  const auto key = std::make_pair(getTileOffset(), target_.getNumTiles());
  auto it = state_->hw_seeds.find(key);
  if (it != state_->hw_seeds.end()) return it->second;
  Tensor seeds = addVariable(UNSIGNED_INT, seeds_shape(target_), "hwSeeds");
  for (unsigned tile = 0; tile < target_.getNumTiles(); ++tile) setTileMapping(seeds[tile], tile);
  setInitialValue(seeds, 0u);
  state_->hw_seeds.emplace(key, seeds);
  return seeds;
}

Tensor getHwSeeds(Graph& graph, program::Sequence& prog, const DebugContext& dc) {
  Tensor seeds = graph.tesseraHwSeeds();
  Tensor copy = graph.clone(seeds, {dc, "getHwSeeds"});
  prog.add(program::Copy(seeds, copy, false, {dc, "getHwSeeds"}));
  return copy;
}

void setHwSeeds(Graph& graph, const Tensor& hwSeeds, program::Sequence& prog,
                const DebugContext& dc) {
  const auto want = seeds_shape(graph.getTarget());
  if (!hwSeeds.valid() || hwSeeds.elementType() != UNSIGNED_INT || hwSeeds.shape() != want)
    throw tensor_creation_error(fmt::format(
        "setHwSeeds: the seeds must be UNSIGNED_INT of shape {{{}}} (tiles, worker contexts, 4 "
        "words); this tensor is {} {{{}}}. Pass what getHwSeeds returned",
        fmt::join(want, ","), hwSeeds.valid() ? hwSeeds.elementType().toString() : "invalid",
        fmt::join(hwSeeds.valid() ? hwSeeds.shape() : std::vector<std::size_t>{}, ",")));
  prog.add(program::Copy(hwSeeds, graph.tesseraHwSeeds(), false, {dc, "setHwSeeds"}));
}

}  // namespace poplar
