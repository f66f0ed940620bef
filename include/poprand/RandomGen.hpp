// Random numbers (PopLibs API: poprand/RandomGen.hpp). Each element's value is a function of the
// seed tensor's two words, the seedModifier and the element's index, so the same seed and graph
// give the same values on any tile split and host thread count. `reference` gives the output's
// shape and tile mapping. Without a seed tensor, each tile draws from its hardware seed
// (poplar/RandomSeed.hpp: zero until set), with the seedModifier.
#pragma once

#include <cstdint>

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace poprand {

// Sets every tile's hardware seeds from `masterSeed` (2 UNSIGNED_INT) and seedModifier, for
// the random functions called without a seed. On the IPU Model it does nothing, as spec 001
// says of the IPU Model (one hard-coded seed on every tile); on an IPU target (DeviceManager's
// devices) each tile and worker gets its own seed, the same ones for the same masterSeed.
void setSeed(poplar::Graph& graph, const poplar::Tensor& masterSeed, std::uint32_t seedModifier,
             poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {});

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
