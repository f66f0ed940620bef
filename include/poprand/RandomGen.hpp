// Random numbers (PopLibs API: poprand/RandomGen.hpp). Each element's value is a function of the
// seed tensor's two words, the seedModifier and the element's index, so the same seed and graph
// give the same values on any tile split and host thread count. `reference` gives the output's
// shape and tile mapping. Without a seed, a graph-wide default seed and a per-call count are used.
#pragma once

#include <cstdint>

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace poprand {

poplar::Tensor uniform(poplar::Graph& graph, const poplar::Tensor* seed, std::uint32_t seedModifier,
                       const poplar::Tensor& reference, const poplar::Type& outType,
                       double minVal, double maxVal, poplar::program::Sequence& prog,
                       const poplar::DebugContext& debugContext = {});
poplar::Tensor normal(poplar::Graph& graph, const poplar::Tensor* seed, std::uint32_t seedModifier,
                      const poplar::Tensor& reference, const poplar::Type& outType, double mean,
                      double stdDev, poplar::program::Sequence& prog,
                      const poplar::DebugContext& debugContext = {});
// Normal values resampled until within alpha standard deviations of the mean.
poplar::Tensor truncatedNormal(poplar::Graph& graph, const poplar::Tensor* seed,
                               std::uint32_t seedModifier, const poplar::Tensor& reference,
                               const poplar::Type& outType, double mean, double stdDev,
                               double alpha, poplar::program::Sequence& prog,
                               const poplar::DebugContext& debugContext = {});
poplar::Tensor bernoulli(poplar::Graph& graph, const poplar::Tensor* seed,
                         std::uint32_t seedModifier, const poplar::Tensor& reference,
                         const poplar::Type& outType, double prob,
                         poplar::program::Sequence& prog,
                         const poplar::DebugContext& debugContext = {});
// in x scale where a Bernoulli(keepProbability) draw is 1, else 0.
poplar::Tensor dropout(poplar::Graph& graph, const poplar::Tensor* seed,
                       std::uint32_t seedModifier, const poplar::Tensor& input,
                       const poplar::Tensor& reference, double keepProbability, double scale,
                       poplar::program::Sequence& prog,
                       const poplar::DebugContext& debugContext = {});

}  // namespace poprand
