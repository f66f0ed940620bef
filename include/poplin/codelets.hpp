// Adds poplin's codelets (the AMP partial products) to a graph.
#pragma once

#include <poplar/Graph.hpp>

namespace poplin {
void addCodelets(poplar::Graph& graph);
}
