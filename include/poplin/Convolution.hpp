// Convolutions (PopLibs API: poplin/Convolution.hpp). Activations are [N][G*C][field...], weights
// [G][OC][IC][kernel...], outputs [N][G*OC][outField...]. A tile-level planner splits batch,
// groups, output channels and output rows over the tiles; each tile's ConvPartialnx1 codelet
// gathers its input windows and multiplies them by its weights (host math: ops::sgemm).
#pragma once

#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplin/ConvParams.hpp>
#include <poplin/MatMul.hpp>

namespace poplin {

poplar::Tensor createWeights(poplar::Graph& graph, const ConvParams& params,
                             const poplar::DebugContext& debugContext,
                             const poplar::OptionFlags& options = {},
                             PlanningCache* cache = nullptr);
poplar::Tensor createInput(poplar::Graph& graph, const ConvParams& params,
                           const poplar::DebugContext& debugContext,
                           const poplar::OptionFlags& options = {},
                           PlanningCache* cache = nullptr);
poplar::Tensor convolution(poplar::Graph& graph, const poplar::Tensor& in,
                           const poplar::Tensor& weights, const ConvParams& params,
                           bool transposeAndFlipWeights, poplar::program::Sequence& prog,
                           const poplar::DebugContext& debugContext = {},
                           const poplar::OptionFlags& options = {},
                           PlanningCache* cache = nullptr);
poplar::Tensor createBiases(poplar::Graph& graph, const poplar::Tensor& activations,
                            const poplar::DebugContext& debugContext = {"biases"});
void addBias(poplar::Graph& graph, const poplar::Tensor& activations,
             const poplar::Tensor& biases, poplar::program::Sequence& prog,
             const poplar::DebugContext& debugContext = {});
// The plan convolution would use, for reports.
std::string reportPlan(const poplar::Graph& graph, const ConvParams& params,
                       const poplar::OptionFlags& options = {}, PlanningCache* cache = nullptr);

}  // namespace poplin
