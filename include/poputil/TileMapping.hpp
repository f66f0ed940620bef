// Tile mappings (PopLibs API: poputil/TileMapping.hpp): spreading a tensor's elements evenly over
// the graph's tiles in whole grains.
#pragma once

#include <cstddef>
#include <vector>

#include <poplar/Graph.hpp>

namespace poputil {

std::vector<std::vector<poplar::Interval>> calcLinearTileMapping(const poplar::Graph& graph,
                                                                 std::vector<std::size_t> shape,
                                                                 unsigned minElementsPerTile,
                                                                 unsigned grainSize);
std::vector<std::vector<poplar::Interval>> calcLinearTileMapping(const poplar::Graph& graph,
                                                                 const poplar::Tensor& t);
void mapTensorLinearly(poplar::Graph& graph, const poplar::Tensor& t, unsigned minElementsPerTile,
                       unsigned grainSize);
void mapTensorLinearly(poplar::Graph& graph, const poplar::Tensor& t);
// The tile holding the most elements of t.
unsigned getTileImbalance(const poplar::Graph& graph, const poplar::Tensor& t);

}  // namespace poputil
