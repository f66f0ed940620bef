// Adds popops' codelets (element-wise, reductions, slices, sorts) to a graph.
#pragma once

#include <poplar/Graph.hpp>

namespace popops {
void addCodelets(poplar::Graph& graph);
}
