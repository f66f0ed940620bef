// Activation functions (PopLibs API: popnn/NonLinearity.hpp). Point-wise ones are one compute set
// of element-wise codelets; the softmaxes reduce over the innermost dimension (max, then sum of
// exponentials) and normalise.
#pragma once

#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <popnn/NonLinearityDef.hpp>

namespace popnn {

poplar::Tensor nonLinearity(poplar::Graph& graph, NonLinearityType nonLinearityType,
                            poplar::Tensor t, poplar::program::Sequence& prog,
                            const poplar::DebugContext& debugContext = {},
                            const poplar::OptionFlags& options = {});
void nonLinearityInPlace(poplar::Graph& graph, NonLinearityType nonLinearityType,
                         poplar::Tensor t, poplar::program::Sequence& prog,
                         const poplar::DebugContext& debugContext = {},
                         const poplar::OptionFlags& options = {});
// log(softmax(t)) over the innermost dimension.
poplar::Tensor logSoftmax(poplar::Graph& graph, poplar::Tensor t, poplar::program::Sequence& prog,
                          const poplar::DebugContext& debugContext = {});

}  // namespace popnn
