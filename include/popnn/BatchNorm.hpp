// Batch normalisation (PopLibs API: popnn/BatchNorm.hpp): statistics over every dimension but the
// channels (dimension 1) of [N][C][...] activations, and the normalisation with them.
#pragma once

#include <utility>

#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

namespace popnn::bn {

// (mean, inverse standard deviation), each [C].
std::pair<poplar::Tensor, poplar::Tensor> batchNormStatistics(
    poplar::Graph& graph, const poplar::Tensor acts, float eps, poplar::program::Sequence& prog,
    bool unbiasedVarEstimate, bool stableAlgo = false,
    const poplar::Type& partialsType = poplar::FLOAT,
    const poplar::DebugContext& debugContext = {}, const poplar::OptionFlags& options = {});
// (gamma x whitened + beta, whitened) where whitened = (acts - mean) x invStdDev.
std::pair<poplar::Tensor, poplar::Tensor> batchNormalise(
    poplar::Graph& graph, const poplar::Tensor& acts, const poplar::Tensor& gamma,
    const poplar::Tensor& beta, const poplar::Tensor& mean, const poplar::Tensor& invStdDev,
    poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {},
    const poplar::OptionFlags& options = {});
// acts x combinedMultiplicand + addend (per channel): inference with folded statistics.
poplar::Tensor batchNormalise(poplar::Graph& graph, const poplar::Tensor& acts,
                              const poplar::Tensor& combinedMultiplicand,
                              const poplar::Tensor& addend, poplar::program::Sequence& prog,
                              const poplar::DebugContext& debugContext = {},
                              const poplar::OptionFlags& options = {});

}  // namespace popnn::bn
