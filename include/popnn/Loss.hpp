// Losses (PopLibs API: popnn/Loss.hpp): the per-sample loss and its gradient for model outputs
// [batch][classes] (probabilities) and expected labels [batch] (integer class indices).
#pragma once

#include <utility>

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <popops/EncodingConstants.hpp>

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
// With CROSS_ENTROPY_LOSS, modelOutputs are probabilities scaled by modelOutputScaling (as
// SOFTMAX_SCALED makes them): deltas = (p - onehot x modelOutputScaling) x deltasScale /
// modelOutputScaling and loss = -(log p - log modelOutputScaling). Both scales are one float or
// half element; SUM_SQUARED_LOSS ignores them.
poplar::program::Program calcLoss(poplar::Graph& graph, const poplar::Tensor& modelOutputs,
                                  const poplar::Tensor& expected, const poplar::Tensor& loss,
                                  const poplar::Tensor& deltas, const poplar::Tensor& deltasScale,
                                  const poplar::Tensor& modelOutputScaling, LossType lossType,
                                  const poplar::DebugContext& debugContext = {});

// calcLoss and calcAccuracy together: numCorrect also counts the rows whose largest output is
// at their label.
poplar::program::Program calcLoss(poplar::Graph& graph, const poplar::Tensor& modelOutputs,
                                  const poplar::Tensor& expected, const poplar::Tensor& loss,
                                  const poplar::Tensor& deltas, const poplar::Tensor& numCorrect,
                                  LossType lossType,
                                  const poplar::DebugContext& debugContext = {});
poplar::program::Program calcLoss(poplar::Graph& graph, const poplar::Tensor& modelOutputs,
                                  const poplar::Tensor& expected, const poplar::Tensor& loss,
                                  const poplar::Tensor& deltas, const poplar::Tensor& deltasScale,
                                  const poplar::Tensor& modelOutputScaling,
                                  const poplar::Tensor& numCorrect, LossType lossType,
                                  const poplar::DebugContext& debugContext = {});

// Adds to numCorrect (one UNSIGNED_INT) the rows whose largest output is at their label; a
// label of MASKED_LABEL_CODE never counts.
poplar::program::Program calcAccuracy(poplar::Graph& graph, const poplar::Tensor& modelOutputs,
                                      const poplar::Tensor& expected,
                                      const poplar::Tensor& numCorrect,
                                      const poplar::DebugContext& debugContext = {});

// Per row of a [rows][columns] input: the column of the largest (smallest) value, the first on
// a tie, as UNSIGNED_INT; the maxAndArgMax / minAndArgMin forms also give the value.
poplar::Tensor argMax(poplar::Graph& graph, const poplar::Tensor& input,
                      poplar::program::Sequence& prog,
                      const poplar::DebugContext& debugContext = {});
poplar::Tensor argMin(poplar::Graph& graph, const poplar::Tensor& input,
                      poplar::program::Sequence& prog,
                      const poplar::DebugContext& debugContext = {});
std::pair<poplar::Tensor, poplar::Tensor> maxAndArgMax(
    poplar::Graph& graph, const poplar::Tensor& input, poplar::program::Sequence& prog,
    const poplar::DebugContext& debugContext = {});
std::pair<poplar::Tensor, poplar::Tensor> minAndArgMin(
    poplar::Graph& graph, const poplar::Tensor& input, poplar::program::Sequence& prog,
    const poplar::DebugContext& debugContext = {});

// The K largest values of each row of a [batch][values] input, [batch][K]; `indices` is set to
// their columns (UNSIGNED_INT, [batch][K]). With `sort` they are largest first, otherwise in
// the order of their columns.
poplar::Tensor topK(poplar::Graph& graph, const poplar::Tensor& input, poplar::Tensor& indices,
                    unsigned K, bool sort, poplar::program::Sequence& prog,
                    const poplar::DebugContext& debugContext = {});

}  // namespace popnn
