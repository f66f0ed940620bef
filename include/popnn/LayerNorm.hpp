// Layer normalisation (PopLibs API: popnn/LayerNorm.hpp): group normalisation with one group, so
// statistics per batch entry over all of [C][...].
#pragma once

#include <utility>

#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

namespace popnn::ln {

std::pair<poplar::Tensor, poplar::Tensor> layerNormStatistics(
    poplar::Graph& graph, const poplar::Tensor acts, float eps, poplar::program::Sequence& prog,
    bool unbiasedVarEstimate, bool stableAlgo = false,
    const poplar::Type& partialsType = poplar::FLOAT,
    const poplar::DebugContext& debugContext = {}, const poplar::OptionFlags& options = {});
std::pair<poplar::Tensor, poplar::Tensor> layerNormalise(
    poplar::Graph& graph, const poplar::Tensor& acts, const poplar::Tensor& gamma,
    const poplar::Tensor& beta, const poplar::Tensor& mean, const poplar::Tensor& invStdDev,
    poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {},
    const poplar::OptionFlags& options = {});

}  // namespace popnn::ln
