// Graph functions (PopLibs API: poputil/GraphFunction.hpp): one piece of graph built once over
// parameter tensors like the given ones, then applied to many argument tensors. Applying it
// copies the inputs into the parameters, runs the body and copies the outputs back, so the
// body's vertices and code exist once however often it is called. Not inlined, the body is a
// Graph::addFunction run by program::Call.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace poputil {
namespace graphfn {

enum ArgType { InputArg, OutputArg, InOutArg, CreatedArg };

struct ArgSig {
  ArgType type;
  poplar::Tensor similarTensor;
  std::string debugName;
  ArgSig(ArgType argType, poplar::Tensor tensor, std::string name)
      : type(argType), similarTensor(std::move(tensor)), debugName(std::move(name)) {}
};

inline ArgSig input(poplar::Tensor similar, std::string debugName = "") {
  return ArgSig(InputArg, std::move(similar), std::move(debugName));
}
inline ArgSig inout(poplar::Tensor similar, std::string debugName = "") {
  return ArgSig(InOutArg, std::move(similar), std::move(debugName));
}
inline ArgSig output(poplar::Tensor similar, std::string debugName = "") {
  return ArgSig(OutputArg, std::move(similar), std::move(debugName));
}
inline ArgSig created(std::string debugName = "") {
  return ArgSig(CreatedArg, poplar::Tensor(), std::move(debugName));
}

using Signature = std::vector<ArgSig>;

class VoidFunction {
 public:
  VoidFunction(poplar::Graph& graph, Signature sig,
               std::function<void(std::vector<poplar::Tensor>&, poplar::program::Sequence&)> f,
               bool inlined = true, const poplar::DebugContext& debugContext = {});
  VoidFunction(VoidFunction&&) = default;
  // `args` holds one tensor per argument of the signature, each shaped and typed as its
  // parameter; a CreatedArg's entry is replaced by a new tensor holding the result.
  void operator()(std::vector<poplar::Tensor>& args, poplar::program::Sequence& seq,
                  const poplar::DebugContext& debugContext = {});

 private:
  poplar::Graph& graph_;
  Signature sig_;
  bool inlined_;
  poplar::program::Sequence prog_;
  poplar::Function func_;
  std::vector<poplar::Tensor> params_;
};

class ProgramFunction {
 public:
  ProgramFunction(poplar::Graph& graph, Signature sig,
                  std::function<poplar::program::Program(std::vector<poplar::Tensor>&)> f,
                  bool inlined = true, const poplar::DebugContext& debugContext = {});
  poplar::program::Program operator()(std::vector<poplar::Tensor>& args,
                                      const poplar::DebugContext& debugContext = {});

 private:
  VoidFunction voidFunc_;
};

class TensorFunction {
 public:
  TensorFunction(poplar::Graph& graph, Signature sig,
                 std::function<poplar::Tensor(std::vector<poplar::Tensor>&,
                                              poplar::program::Sequence&)> f,
                 bool inlined = true, const poplar::DebugContext& debugContext = {});
  poplar::Tensor operator()(std::vector<poplar::Tensor>& args, poplar::program::Sequence& prog,
                            const poplar::DebugContext& debugContext = {});

 private:
  VoidFunction voidFunc_;
};

}  // namespace graphfn
}  // namespace poputil
