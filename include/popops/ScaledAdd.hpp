// A += scaleB * B and its relatives (PopLibs API: popops/ScaledAdd.hpp), in place on A.
#pragma once

#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

namespace popops {

void scaledAddTo(poplar::Graph& graph, poplar::Tensor A, poplar::Tensor B, float scaleB,
                 poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {},
                 const poplar::OptionFlags& options = {});
void scaledAddTo(poplar::Graph& graph, poplar::Tensor A, poplar::Tensor B, poplar::Tensor scaleB,
                 poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {},
                 const poplar::OptionFlags& options = {});
// A = scaleA * A + scaleB * B.
void scaledAddTo(poplar::Graph& graph, poplar::Tensor A, float scaleA, poplar::Tensor B,
                 float scaleB, poplar::program::Sequence& prog,
                 const poplar::DebugContext& debugContext = {},
                 const poplar::OptionFlags& options = {});
void scaledSubtractFrom(poplar::Graph& graph, poplar::Tensor A, poplar::Tensor B, float scaleB,
                        poplar::program::Sequence& prog,
                        const poplar::DebugContext& debugContext = {},
                        const poplar::OptionFlags& options = {});

// A = scaleA * A + scaleB * B with single-element scale tensors.
void scaledAddTo(poplar::Graph& graph, poplar::Tensor A, poplar::Tensor scaleA, poplar::Tensor B,
                 poplar::Tensor scaleB, poplar::program::Sequence& prog,
                 const poplar::DebugContext& debugContext = {},
                 const poplar::OptionFlags& options = {});
// A -= scaleB * B with a single-element scale tensor; A = scaleA * A - scaleB * B.
void scaledSubtractFrom(poplar::Graph& graph, poplar::Tensor A, poplar::Tensor B,
                        poplar::Tensor scaleB, poplar::program::Sequence& prog,
                        const poplar::DebugContext& debugContext = {},
                        const poplar::OptionFlags& options = {});
void scaledSubtractFrom(poplar::Graph& graph, poplar::Tensor A, float scaleA, poplar::Tensor B,
                        float scaleB, poplar::program::Sequence& prog,
                        const poplar::DebugContext& debugContext = {},
                        const poplar::OptionFlags& options = {});

}  // namespace popops
