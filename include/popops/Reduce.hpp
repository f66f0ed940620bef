// Reductions (PopLibs API: popops/Reduce.hpp): reduce the dimensions `dims` of a tensor with an
// Operation. Partials are reduced on the tiles that hold them first, then the per-tile results on
// the output's tiles: one or two compute sets. `update` accumulates into the output; a scale
// multiplies the result (both as ReduceParams says).
#pragma once

#include <string>
#include <vector>

#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <popops/Operation.hpp>

namespace popops {

struct ReduceParams {
  ReduceParams() = default;
  ReduceParams(Operation op_, bool update_ = false) : op(op_), update(update_) {}
  ReduceParams(Operation op_, bool update_, poplar::Tensor scale)
      : op(op_), update(update_), useScale(true), scaleImpl(std::move(scale)) {}
  ReduceParams(Operation op_, float scale, bool update_ = false)
      : op(op_), update(update_), useScale(true), constantScale(scale) {}
  Operation op = Operation::ADD;
  bool update = false;
  bool useScale = false;
  poplar::Tensor scaleImpl;  // invalid: constantScale
  float constantScale = 1.0f;
};

struct SingleReduceOp {
  SingleReduceOp(poplar::Tensor in_, std::vector<std::size_t> dims_, ReduceParams params_,
                 poplar::Type outType_, std::string debugName_ = "")
      : in(std::move(in_)), dims(std::move(dims_)), params(std::move(params_)), useOutType(true),
        outType(outType_), debugName(std::move(debugName_)) {}
  SingleReduceOp(poplar::Tensor in_, std::vector<std::size_t> dims_, ReduceParams params_,
                 std::string debugName_ = "")
      : in(std::move(in_)), dims(std::move(dims_)), params(std::move(params_)),
        debugName(std::move(debugName_)) {}
  poplar::Tensor in;
  std::vector<std::size_t> dims;
  ReduceParams params;
  bool useOutType = false;
  poplar::Type outType;
  std::string debugName;
};

poplar::Tensor reduce(poplar::Graph& graph, const poplar::Tensor& in, const poplar::Type& outType,
                      const std::vector<std::size_t>& dims, ReduceParams params,
                      poplar::program::Sequence& prog,
                      const poplar::DebugContext& debugContext = {},
                      const poplar::OptionFlags& options = {});
poplar::Tensor reduce(poplar::Graph& graph, const poplar::Tensor& in,
                      const std::vector<std::size_t>& dims, ReduceParams params,
                      poplar::program::Sequence& prog,
                      const poplar::DebugContext& debugContext = {},
                      const poplar::OptionFlags& options = {});
void reduceWithOutput(poplar::Graph& graph, const poplar::Tensor& in, const poplar::Tensor& out,
                      const std::vector<std::size_t>& dims, ReduceParams params,
                      poplar::program::Sequence& prog,
                      const poplar::DebugContext& debugContext = {},
                      const poplar::OptionFlags& options = {});
// The same reductions as compute sets appended to `computeSets` (PopLibs' older form), for a
// caller that executes them itself; a reduction that also needs a copy or cast is refused.
poplar::Tensor reduce(poplar::Graph& graph, const poplar::Tensor& in, const poplar::Type& outType,
                      const std::vector<std::size_t>& dims, ReduceParams params,
                      std::vector<poplar::ComputeSet>& computeSets,
                      const poplar::DebugContext& debugContext = {},
                      const poplar::OptionFlags& options = {});
poplar::Tensor reduce(poplar::Graph& graph, const poplar::Tensor& in,
                      const std::vector<std::size_t>& dims, ReduceParams params,
                      std::vector<poplar::ComputeSet>& computeSets,
                      const poplar::DebugContext& debugContext = {},
                      const poplar::OptionFlags& options = {});
void reduceWithOutput(poplar::Graph& graph, const poplar::Tensor& in, const poplar::Tensor& out,
                      const std::vector<std::size_t>& dims, ReduceParams params,
                      std::vector<poplar::ComputeSet>& computeSets,
                      const poplar::DebugContext& debugContext = {},
                      const poplar::OptionFlags& options = {});
// Several reductions whose compute sets run together (outputs created when `outputs` is empty).
void reduceMany(poplar::Graph& graph, const std::vector<SingleReduceOp>& reductions,
                std::vector<poplar::Tensor>& outputs, poplar::program::Sequence& prog,
                const poplar::DebugContext& debugContext = {},
                const poplar::OptionFlags& options = {});

// Running sum along the last dimension (a Tessera addition beside PopLibs' reductions).
poplar::Tensor cumulativeSum(poplar::Graph& graph, const poplar::Tensor& in,
                             poplar::program::Sequence& prog,
                             const poplar::DebugContext& debugContext = {},
                             const poplar::OptionFlags& options = {});

}  // namespace popops
