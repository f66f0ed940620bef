// poputil::graphfn: a body built once over cloned parameters, applied by copies in and out.
#include <poputil/GraphFunction.hpp>
#include <poputil/exceptions.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace poputil::graphfn {

using poplar::Graph;
using poplar::Tensor;
using poplar::program::Copy;
using poplar::program::Sequence;

VoidFunction::VoidFunction(Graph& graph, Signature sig,
                           std::function<void(std::vector<Tensor>&, Sequence&)> f, bool inlined,
                           const poplar::DebugContext& dc)
    : graph_(graph), sig_(std::move(sig)), inlined_(inlined), prog_(dc) {
  for (std::size_t i = 0; i < sig_.size(); ++i) {
    const auto& s = sig_[i];
    if (s.type == CreatedArg) {
      params_.emplace_back();
      continue;
    }
    if (!s.similarTensor.valid())
      throw poplibs_error(fmt::format(
          "graphfn: argument {} of the signature has no tensor to make its parameter like; give "
          "input/output/inout a tensor of the argument's shape and type, or use created()",
          i));
    params_.push_back(graph_.clone(s.similarTensor, {dc, s.debugName}));
  }
  f(params_, prog_);
  for (std::size_t i = 0; i < sig_.size(); ++i)
    if (sig_[i].type == CreatedArg && !params_[i].valid())
      throw poplibs_error(fmt::format(
          "graphfn: the body left created argument {} without a tensor; assign the tensor it "
          "makes to that entry of the vector",
          i));
  if (!inlined_) func_ = graph_.addFunction(prog_);
}

void VoidFunction::operator()(std::vector<Tensor>& args, Sequence& seq,
                              const poplar::DebugContext& dc) {
  if (args.size() != sig_.size())
    throw poplibs_error(fmt::format(
        "graphfn: called with {} arguments; its signature has {}", args.size(), sig_.size()));
  for (std::size_t i = 0; i < sig_.size(); ++i) {
    if (sig_[i].type == CreatedArg) continue;
    const Tensor& p = params_[i];
    if (!args[i].valid() || args[i].shape() != p.shape() ||
        args[i].elementType() != p.elementType())
      throw poplibs_error(fmt::format(
          "graphfn: argument {} must be a {} tensor of shape {{{}}} like its parameter", i,
          p.elementType().toString(), fmt::join(p.shape(), ",")));
  }
  for (std::size_t i = 0; i < sig_.size(); ++i)
    if (sig_[i].type == InputArg || sig_[i].type == InOutArg)
      seq.add(Copy(args[i], params_[i], false, dc));
  if (inlined_)
    seq.add(prog_);
  else
    seq.add(poplar::program::Call(func_, dc));
  for (std::size_t i = 0; i < sig_.size(); ++i) {
    if (sig_[i].type == CreatedArg) args[i] = graph_.clone(params_[i], {dc, sig_[i].debugName});
    if (sig_[i].type != InputArg) seq.add(Copy(params_[i], args[i], false, dc));
  }
}

ProgramFunction::ProgramFunction(Graph& graph, Signature sig,
                                 std::function<poplar::program::Program(std::vector<Tensor>&)> f,
                                 bool inlined, const poplar::DebugContext& dc)
    : voidFunc_(
          graph, std::move(sig),
          [&f](std::vector<Tensor>& args, Sequence& seq) { seq.add(f(args)); }, inlined, dc) {}

poplar::program::Program ProgramFunction::operator()(std::vector<Tensor>& args,
                                                     const poplar::DebugContext& dc) {
  Sequence seq(dc);
  voidFunc_(args, seq, dc);
  return seq;
}

namespace {
Signature with_result(Signature s) {
  s.push_back(created());
  return s;
}
}  // namespace

TensorFunction::TensorFunction(Graph& graph, Signature sig,
                               std::function<Tensor(std::vector<Tensor>&, Sequence&)> f,
                               bool inlined, const poplar::DebugContext& dc)
    : voidFunc_(
          graph, with_result(std::move(sig)),
          [&f](std::vector<Tensor>& args, Sequence& seq) { args.back() = f(args, seq); },
          inlined, dc) {}

Tensor TensorFunction::operator()(std::vector<Tensor>& args, Sequence& prog,
                                  const poplar::DebugContext& dc) {
  args.emplace_back();
  voidFunc_(args, prog, dc);
  Tensor out = args.back();
  args.pop_back();
  return out;
}

}  // namespace poputil::graphfn
