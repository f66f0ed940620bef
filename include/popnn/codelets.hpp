// Adds popnn's codelets (pooling) to a graph; popnn's other functions use popops' codelets.
#pragma once

#include <poplar/Graph.hpp>

namespace popnn {
void addCodelets(poplar::Graph& graph);
}
