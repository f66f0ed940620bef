// Matrix products (PopLibs API: poplin/MatMul.hpp). A tile-level planner splits [M,K] x [K,N]
// into mSplit x nSplit x kSplit blocks, one per tile; each tile's AMP codelet
// (poplin::ConvPartial1x1Out) multiplies its blocks, and a second compute set adds the k partials
// when K is split. createMatMulInputLHS/RHS lay operands out so each block starts on the tiles
// that use it. Options: "partialsType" ("float" or "half"), "availableMemoryProportion".
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

namespace poplin {

namespace detail {
struct MatMulPlan {
  unsigned groupTiles = 0;  // tiles per group
  unsigned mSplit = 1, nSplit = 1, kSplit = 1;
  std::size_t estimatedCycles = 0;  // compute + exchange + sync of the whole product
};
}  // namespace detail

// Remembers plans by shape, types and options, so repeated products of one shape plan once.
class PlanningCache {
 public:
  PlanningCache();
  ~PlanningCache();
  std::size_t size() const { return plans.size(); }
  std::map<std::string, detail::MatMulPlan> plans;
};

namespace matmul {
using PlanningCache = poplin::PlanningCache;
}

poplar::Tensor matMul(poplar::Graph& graph, const poplar::Tensor& A, const poplar::Tensor& B,
                      poplar::program::Sequence& prog, const poplar::Type& outputType,
                      const poplar::DebugContext& debugContext = {},
                      const poplar::OptionFlags& options = {}, PlanningCache* cache = nullptr);
poplar::Tensor matMul(poplar::Graph& graph, const poplar::Tensor& A, const poplar::Tensor& B,
                      poplar::program::Sequence& prog,
                      const poplar::DebugContext& debugContext = {},
                      const poplar::OptionFlags& options = {}, PlanningCache* cache = nullptr);
// C += k * A x B.
void matMulAcc(poplar::Graph& graph, const poplar::Tensor& C, float k, const poplar::Tensor& A,
               const poplar::Tensor& B, poplar::program::Sequence& prog,
               const poplar::DebugContext& debugContext = {},
               const poplar::OptionFlags& options = {}, PlanningCache* cache = nullptr);
// [G,M,K] x [G,K,N] -> [G,M,N].
poplar::Tensor matMulGrouped(poplar::Graph& graph, const poplar::Tensor& A,
                             const poplar::Tensor& B, poplar::program::Sequence& prog,
                             const poplar::Type& outputType,
                             const poplar::DebugContext& debugContext = {},
                             const poplar::OptionFlags& options = {},
                             PlanningCache* cache = nullptr);

poplar::Tensor createMatMulInputLHS(poplar::Graph& graph, const poplar::Type& inputType,
                                    const poplar::Type& outputType,
                                    const std::vector<std::size_t>& aShape,
                                    const std::vector<std::size_t>& bShape,
                                    const poplar::DebugContext& debugContext,
                                    const poplar::OptionFlags& options = {},
                                    PlanningCache* cache = nullptr);
poplar::Tensor createMatMulInputLHS(poplar::Graph& graph, const poplar::Type& dataType,
                                    const std::vector<std::size_t>& aShape,
                                    const std::vector<std::size_t>& bShape,
                                    const poplar::DebugContext& debugContext,
                                    const poplar::OptionFlags& options = {},
                                    PlanningCache* cache = nullptr);
poplar::Tensor createMatMulInputRHS(poplar::Graph& graph, const poplar::Type& inputType,
                                    const poplar::Type& outputType,
                                    const std::vector<std::size_t>& aShape,
                                    const std::vector<std::size_t>& bShape,
                                    const poplar::DebugContext& debugContext,
                                    const poplar::OptionFlags& options = {},
                                    PlanningCache* cache = nullptr);
poplar::Tensor createMatMulInputRHS(poplar::Graph& graph, const poplar::Type& dataType,
                                    const std::vector<std::size_t>& aShape,
                                    const std::vector<std::size_t>& bShape,
                                    const poplar::DebugContext& debugContext,
                                    const poplar::OptionFlags& options = {},
                                    PlanningCache* cache = nullptr);

// The plan matMul would use, for reports: "mSplit x nSplit x kSplit over T tiles, ~C cycles".
std::string reportPlan(const poplar::Graph& graph, const poplar::Type& inputType,
                       const poplar::Type& outputType, const std::vector<std::size_t>& aShape,
                       const std::vector<std::size_t>& bShape,
                       const poplar::OptionFlags& options = {}, PlanningCache* cache = nullptr);

}  // namespace poplin
