// The element-wise engine of popops: an expression compiled to a small register program that one
// MultiVertex per tile runs over the output elements mapped to that tile. map, cast, fill, zero,
// scaledAdd and the non-linearities of popnn all build their compute sets through it.
#pragma once

#include <string>
#include <vector>

#include <popops/Expr.hpp>

#include "common.h"

namespace tessera::ipu::poplibs {

// A compiled expression: the codelet's `code` state and what its cycle estimate needs.
struct ElementProgram {
  std::vector<unsigned> code;
  Type out_type;
  unsigned vector_ops = 0;  // instructions per 64-bit vector of output
  unsigned scalar_ops = 0;  // instructions per element (ops with no vector form)
};

// Compiles `expr` over inputs of `types`; poplibs_error on a placeholder past the inputs or
// operands of mismatched types.
ElementProgram compile_expr(const popops::expr::Expr& expr, const std::vector<Type>& types);

// Adds to `cs` the vertices that compute `program` into `out` (flattened, same element count as
// every input after broadcasting). `in_place`: input 0 is `out` itself. `vertex` names the codelet
// (registered here with its estimator on first use).
void add_elementwise_vertices(Graph& graph, poplar::ComputeSet cs, const ElementProgram& program,
                              const std::vector<Tensor>& inputs, const Tensor& out, bool in_place,
                              const std::string& vertex);

// Inputs broadcast to one shape (numpy rules); poplibs_error when they do not broadcast.
std::vector<Tensor> broadcast_all(const std::vector<Tensor>& ts, const std::string& op);
// A new tensor of `shape` and `type` mapped like the largest non-broadcast input, else linearly.
Tensor create_output(Graph& graph, const std::vector<Tensor>& inputs, Type type,
                     const poplar::DebugContext& dc);

// One compute set that applies `expr` to `inputs` into `out` (or into inputs[0] when in_place,
// or into a new tensor when out is null); returns the tensor written.
Tensor run_expr(Graph& graph, const popops::expr::Expr& expr, const std::vector<Tensor>& inputs,
              const Tensor* out, bool in_place, poplar::program::Sequence& prog,
              const poplar::DebugContext& dc, const std::string& vertex_override = "");

}  // namespace tessera::ipu::poplibs
