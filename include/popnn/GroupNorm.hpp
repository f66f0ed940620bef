// Group normalisation (PopLibs API: popnn/GroupNorm.hpp): channels of [N][C][...] in numGroups
// groups; statistics per batch entry and group ([N x G]).
#pragma once

#include <utility>

#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

namespace popnn::gn {

std::pair<poplar::Tensor, poplar::Tensor> groupNormStatistics(
    poplar::Graph& graph, const poplar::Tensor acts, float eps, poplar::program::Sequence& prog,
    unsigned numGroups, bool unbiasedVarEstimate, bool stableAlgo = false,
    const poplar::Type& partialsType = poplar::FLOAT,
    const poplar::DebugContext& debugContext = {}, const poplar::OptionFlags& options = {});
std::pair<poplar::Tensor, poplar::Tensor> groupNormalise(
    poplar::Graph& graph, const poplar::Tensor& acts, const poplar::Tensor& gamma,
    const poplar::Tensor& beta, const poplar::Tensor& mean, const poplar::Tensor& invStdDev,
    poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {},
    const poplar::OptionFlags& options = {});

}  // namespace popnn::gn
