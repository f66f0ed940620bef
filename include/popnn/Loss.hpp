// Losses (PopLibs API: popnn/Loss.hpp): the per-sample loss and its gradient for model outputs
// [batch][classes] (probabilities) and expected labels [batch] (integer class indices).
#pragma once

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace popnn {

enum LossType { SUM_SQUARED_LOSS, CROSS_ENTROPY_LOSS };

// loss [batch]: cross entropy -log p[label], or sum-squared 0.5 sum (p - onehot)^2;
// deltas [batch][classes] = p - onehot(label).
void calcLoss(poplar::Graph& graph, const poplar::Tensor& modelOutputs,
              const poplar::Tensor& expected, const poplar::Tensor& loss,
              const poplar::Tensor& deltas, LossType lossType, poplar::program::Sequence& prog,
              const poplar::DebugContext& debugContext = {});
poplar::program::Program calcLoss(poplar::Graph& graph, const poplar::Tensor& modelOutputs,
                                  const poplar::Tensor& expected, const poplar::Tensor& loss,
                                  const poplar::Tensor& deltas, LossType lossType,
                                  const poplar::DebugContext& debugContext = {});

}  // namespace popnn
