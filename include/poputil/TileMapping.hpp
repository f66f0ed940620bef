// Tile mappings (PopLibs API: poputil/TileMapping.hpp): spreading a tensor's elements evenly over
// the graph's tiles in whole grains.
#pragma once

#include <cstddef>
#include <vector>

#include <poplar/Graph.hpp>

namespace poputil {

// Tiles are used from `offset` upwards (ascendingOrder) or from numTiles - 1 - offset
// downwards, wrapping round.
std::vector<std::vector<poplar::Interval>> calcLinearTileMapping(const poplar::Graph& graph,
                                                                 std::vector<std::size_t> shape,
                                                                 unsigned minElementsPerTile,
                                                                 unsigned grainSize,
                                                                 unsigned offset = 0,
                                                                 bool ascendingOrder = true);
std::vector<std::vector<poplar::Interval>> calcLinearTileMapping(const poplar::Graph& graph,
                                                                 const poplar::Tensor& t,
                                                                 unsigned offset = 0,
                                                                 bool ascendingOrder = true);
void mapTensorLinearly(poplar::Graph& graph, const poplar::Tensor& t, unsigned minElementsPerTile,
                       unsigned grainSize);
void mapTensorLinearly(poplar::Graph& graph, const poplar::Tensor& t);
void mapTensorLinearlyWithOffset(poplar::Graph& graph, const poplar::Tensor& t,
                                 unsigned minElementsPerTile, unsigned grainSize, unsigned offset,
                                 bool ascendingOrder = true);
void mapTensorLinearlyWithOffset(poplar::Graph& graph, const poplar::Tensor& t,
                                 unsigned offset = 0, bool ascendingOrder = true);

// How many more elements than a balanced mapping (whole grains, at least minElementsPerTile
// per tile) the fullest tile holds; 0 when none holds more.
unsigned getTileImbalance(const poplar::Graph::TileToTensorMapping& mapping,
                          unsigned minElementsPerTile = 0, unsigned grainSize = 1);
unsigned getTileImbalance(const poplar::Graph& graph, const poplar::Tensor& t,
                          unsigned minElementsPerTile = 0, unsigned grainSize = 1);

// Whether elements that differ only in `dimension` lie on more than one tile.
bool dimIsSplitOverTiles(const poplar::Graph& graph, const poplar::Tensor& t, unsigned dimension);

// The k-th tile of a mapping order (offset, direction) and back: invTransformTileIndex(k, ...)
// is the tile used k-th; transformTileIndex(tile, ...) is its position in that order.
unsigned transformTileIndex(unsigned tile, unsigned numTiles, unsigned offset, bool ascending);
unsigned invTransformTileIndex(unsigned tile, unsigned numTiles, unsigned offset, bool ascending);

}  // namespace poputil
