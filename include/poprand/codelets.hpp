// Adds poprand's codelets to a graph.
#pragma once

#include <poplar/Graph.hpp>

namespace poprand {
void addCodelets(poplar::Graph& graph);
}
