// Element-wise operations (PopLibs API: popops/ElementWise.hpp). map() applies an expression of
// popops::expr to its input tensors (broadcast to a common shape, spec 001 §6) in one compute set:
// the expression runs fused in one codelet per tile, over the elements the output maps there. The
// named functions (add, exp, select, ...) are maps of one operator; the *InPlace forms write
// their first operand, the *WithOutput forms a tensor the caller gives.
#pragma once

#include <type_traits>
#include <vector>

#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <popops/Expr.hpp>

namespace popops {

poplar::Tensor map(poplar::Graph& graph, const expr::Expr& expr,
                   const std::vector<poplar::Tensor>& ts, poplar::program::Sequence& prog,
                   const poplar::DebugContext& debugContext = {},
                   const poplar::OptionFlags& options = {});
void mapInPlace(poplar::Graph& graph, const expr::Expr& expr,
                const std::vector<poplar::Tensor>& ts, poplar::program::Sequence& prog,
                const poplar::DebugContext& debugContext = {},
                const poplar::OptionFlags& options = {});
void mapWithOutput(poplar::Graph& graph, const expr::Expr& expr,
                   const std::vector<poplar::Tensor>& ts, const poplar::Tensor& out,
                   poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {},
                   const poplar::OptionFlags& options = {});

inline poplar::Tensor map(poplar::Graph& graph, expr::UnaryOpType op, const poplar::Tensor& a,
                          poplar::program::Sequence& prog,
                          const poplar::DebugContext& debugContext = {},
                          const poplar::OptionFlags& options = {}) {
  return map(graph, expr::UnaryOp(op, expr::_1), {a}, prog, debugContext, options);
}
inline poplar::Tensor map(poplar::Graph& graph, expr::BinaryOpType op, const poplar::Tensor& a,
                          const poplar::Tensor& b, poplar::program::Sequence& prog,
                          const poplar::DebugContext& debugContext = {},
                          const poplar::OptionFlags& options = {}) {
  return map(graph, expr::BinaryOp(op, expr::_1, expr::_2), {a, b}, prog, debugContext, options);
}
inline poplar::Tensor map(poplar::Graph& graph, expr::TernaryOpType op, const poplar::Tensor& a,
                          const poplar::Tensor& b, const poplar::Tensor& c,
                          poplar::program::Sequence& prog,
                          const poplar::DebugContext& debugContext = {},
                          const poplar::OptionFlags& options = {}) {
  return map(graph, expr::TernaryOp(op, expr::_1, expr::_2, expr::_3), {a, b, c}, prog,
             debugContext, options);
}
inline void mapInPlace(poplar::Graph& graph, expr::UnaryOpType op, const poplar::Tensor& a,
                       poplar::program::Sequence& prog,
                       const poplar::DebugContext& debugContext = {},
                       const poplar::OptionFlags& options = {}) {
  mapInPlace(graph, expr::UnaryOp(op, expr::_1), {a}, prog, debugContext, options);
}
inline void mapInPlace(poplar::Graph& graph, expr::BinaryOpType op, const poplar::Tensor& a,
                       const poplar::Tensor& b, poplar::program::Sequence& prog,
                       const poplar::DebugContext& debugContext = {},
                       const poplar::OptionFlags& options = {}) {
  mapInPlace(graph, expr::BinaryOp(op, expr::_1, expr::_2), {a, b}, prog, debugContext, options);
}
inline void mapInPlace(poplar::Graph& graph, expr::TernaryOpType op, const poplar::Tensor& a,
                       const poplar::Tensor& b, const poplar::Tensor& c,
                       poplar::program::Sequence& prog,
                       const poplar::DebugContext& debugContext = {},
                       const poplar::OptionFlags& options = {}) {
  mapInPlace(graph, expr::TernaryOp(op, expr::_1, expr::_2, expr::_3), {a, b, c}, prog,
             debugContext, options);
}

#define TESSERA_POPOPS_UNARY_FN(name, Op)                                                        \
  inline poplar::Tensor name(poplar::Graph& graph, const poplar::Tensor& A,                      \
                             poplar::program::Sequence& prog,                                    \
                             const poplar::DebugContext& debugContext = {},                      \
                             const poplar::OptionFlags& options = {}) {                          \
    return map(graph, expr::UnaryOpType::Op, A, prog, debugContext, options);                    \
  }                                                                                              \
  inline void name##InPlace(poplar::Graph& graph, const poplar::Tensor& A,                       \
                            poplar::program::Sequence& prog,                                     \
                            const poplar::DebugContext& debugContext = {},                       \
                            const poplar::OptionFlags& options = {}) {                           \
    mapInPlace(graph, expr::UnaryOpType::Op, A, prog, debugContext, options);                    \
  }                                                                                              \
  inline void name##WithOutput(poplar::Graph& graph, const poplar::Tensor& A,                    \
                               const poplar::Tensor& out, poplar::program::Sequence& prog,       \
                               const poplar::DebugContext& debugContext = {},                    \
                               const poplar::OptionFlags& options = {}) {                        \
    mapWithOutput(graph, expr::UnaryOp(expr::UnaryOpType::Op, expr::_1), {A}, out, prog,         \
                  debugContext, options);                                                        \
  }
TESSERA_POPOPS_UNARY_FN(abs, ABSOLUTE)
TESSERA_POPOPS_UNARY_FN(asin, ASIN)
TESSERA_POPOPS_UNARY_FN(bitwiseNot, BITWISE_NOT)
TESSERA_POPOPS_UNARY_FN(cbrt, CBRT)
TESSERA_POPOPS_UNARY_FN(ceil, CEIL)
TESSERA_POPOPS_UNARY_FN(cos, COS)
TESSERA_POPOPS_UNARY_FN(countLeadingZeros, COUNT_LEADING_ZEROS)
TESSERA_POPOPS_UNARY_FN(erf, ERF)
TESSERA_POPOPS_UNARY_FN(exp, EXPONENT)
TESSERA_POPOPS_UNARY_FN(expm1, EXPONENT_MINUS_ONE)
TESSERA_POPOPS_UNARY_FN(floor, FLOOR)
TESSERA_POPOPS_UNARY_FN(inv, INVERSE)
TESSERA_POPOPS_UNARY_FN(isFinite, IS_FINITE)
TESSERA_POPOPS_UNARY_FN(log, LOGARITHM)
TESSERA_POPOPS_UNARY_FN(log1p, LOGARITHM_ONE_PLUS)
TESSERA_POPOPS_UNARY_FN(logicalNot, LOGICAL_NOT)
TESSERA_POPOPS_UNARY_FN(neg, NEGATE)
TESSERA_POPOPS_UNARY_FN(popcount, POPCOUNT)
TESSERA_POPOPS_UNARY_FN(signum, SIGNUM)
TESSERA_POPOPS_UNARY_FN(sin, SIN)
TESSERA_POPOPS_UNARY_FN(tan, TAN)
TESSERA_POPOPS_UNARY_FN(tanh, TANH)
TESSERA_POPOPS_UNARY_FN(round, ROUND)
TESSERA_POPOPS_UNARY_FN(sqrt, SQRT)
TESSERA_POPOPS_UNARY_FN(square, SQUARE)
TESSERA_POPOPS_UNARY_FN(sigmoid, SIGMOID)
TESSERA_POPOPS_UNARY_FN(rsqrt, RSQRT)
#undef TESSERA_POPOPS_UNARY_FN

#define TESSERA_POPOPS_BINARY_FN(name, Op)                                                       \
  inline poplar::Tensor name(poplar::Graph& graph, const poplar::Tensor& A,                      \
                             const poplar::Tensor& B, poplar::program::Sequence& prog,           \
                             const poplar::DebugContext& debugContext = {},                      \
                             const poplar::OptionFlags& options = {}) {                          \
    return map(graph, expr::BinaryOpType::Op, A, B, prog, debugContext, options);                \
  }                                                                                              \
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>                    \
  inline poplar::Tensor name(poplar::Graph& graph, const poplar::Tensor& A, const T& B,          \
                             poplar::program::Sequence& prog,                                    \
                             const poplar::DebugContext& debugContext = {},                      \
                             const poplar::OptionFlags& options = {}) {                          \
    return map(graph, expr::BinaryOp(expr::BinaryOpType::Op, expr::_1, expr::Const(B)), {A},    \
               prog, debugContext, options);                                                     \
  }                                                                                              \
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>                    \
  inline poplar::Tensor name(poplar::Graph& graph, const T& A, const poplar::Tensor& B,          \
                             poplar::program::Sequence& prog,                                    \
                             const poplar::DebugContext& debugContext = {},                      \
                             const poplar::OptionFlags& options = {}) {                          \
    return map(graph, expr::BinaryOp(expr::BinaryOpType::Op, expr::Const(A), expr::_1), {B},    \
               prog, debugContext, options);                                                     \
  }                                                                                              \
  inline void name##InPlace(poplar::Graph& graph, const poplar::Tensor& A,                       \
                            const poplar::Tensor& B, poplar::program::Sequence& prog,            \
                            const poplar::DebugContext& debugContext = {},                       \
                            const poplar::OptionFlags& options = {}) {                           \
    mapInPlace(graph, expr::BinaryOpType::Op, A, B, prog, debugContext, options);                \
  }                                                                                              \
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>                    \
  inline void name##InPlace(poplar::Graph& graph, const poplar::Tensor& A, const T& B,           \
                            poplar::program::Sequence& prog,                                     \
                            const poplar::DebugContext& debugContext = {},                       \
                            const poplar::OptionFlags& options = {}) {                           \
    mapInPlace(graph, expr::BinaryOp(expr::BinaryOpType::Op, expr::_1, expr::Const(B)), {A},     \
               prog, debugContext, options);                                                     \
  }                                                                                              \
  inline void name##WithOutput(poplar::Graph& graph, const poplar::Tensor& A,                    \
                               const poplar::Tensor& B, const poplar::Tensor& out,               \
                               poplar::program::Sequence& prog,                                  \
                               const poplar::DebugContext& debugContext = {},                    \
                               const poplar::OptionFlags& options = {}) {                        \
    mapWithOutput(graph, expr::BinaryOp(expr::BinaryOpType::Op, expr::_1, expr::_2), {A, B},    \
                  out, prog, debugContext, options);                                             \
  }
TESSERA_POPOPS_BINARY_FN(add, ADD)
TESSERA_POPOPS_BINARY_FN(atan2, ATAN2)
TESSERA_POPOPS_BINARY_FN(bitwiseAnd, BITWISE_AND)
TESSERA_POPOPS_BINARY_FN(bitwiseOr, BITWISE_OR)
TESSERA_POPOPS_BINARY_FN(bitwiseXor, BITWISE_XOR)
TESSERA_POPOPS_BINARY_FN(bitwiseXnor, BITWISE_XNOR)
TESSERA_POPOPS_BINARY_FN(div, DIVIDE)
TESSERA_POPOPS_BINARY_FN(eq, EQUAL)
TESSERA_POPOPS_BINARY_FN(gteq, GREATER_THAN_EQUAL)
TESSERA_POPOPS_BINARY_FN(gt, GREATER_THAN)
TESSERA_POPOPS_BINARY_FN(invStdDevToVariance, INV_STD_DEV_TO_VARIANCE)
TESSERA_POPOPS_BINARY_FN(lteq, LESS_THAN_EQUAL)
TESSERA_POPOPS_BINARY_FN(logicalAnd, LOGICAL_AND)
TESSERA_POPOPS_BINARY_FN(logicalOr, LOGICAL_OR)
TESSERA_POPOPS_BINARY_FN(lt, LESS_THAN)
TESSERA_POPOPS_BINARY_FN(max, MAXIMUM)
TESSERA_POPOPS_BINARY_FN(min, MINIMUM)
TESSERA_POPOPS_BINARY_FN(mul, MULTIPLY)
TESSERA_POPOPS_BINARY_FN(neq, NOT_EQUAL)
TESSERA_POPOPS_BINARY_FN(pow, POWER)
TESSERA_POPOPS_BINARY_FN(rem, REMAINDER)
TESSERA_POPOPS_BINARY_FN(shiftLeft, SHIFT_LEFT)
TESSERA_POPOPS_BINARY_FN(shiftRight, SHIFT_RIGHT)
TESSERA_POPOPS_BINARY_FN(shiftRightSignExtend, SHIFT_RIGHT_SIGN_EXTEND)
TESSERA_POPOPS_BINARY_FN(sub, SUBTRACT)
TESSERA_POPOPS_BINARY_FN(varianceToInvStdDev, VARIANCE_TO_INV_STD_DEV)
#undef TESSERA_POPOPS_BINARY_FN

// select: A where C is true, else B. clamp: A limited to [B, C].
inline poplar::Tensor select(poplar::Graph& graph, const poplar::Tensor& A,
                             const poplar::Tensor& B, const poplar::Tensor& C,
                             poplar::program::Sequence& prog,
                             const poplar::DebugContext& debugContext = {},
                             const poplar::OptionFlags& options = {}) {
  return map(graph, expr::TernaryOpType::SELECT, A, B, C, prog, debugContext, options);
}
inline void selectInPlace(poplar::Graph& graph, const poplar::Tensor& A, const poplar::Tensor& B,
                          const poplar::Tensor& C, poplar::program::Sequence& prog,
                          const poplar::DebugContext& debugContext = {},
                          const poplar::OptionFlags& options = {}) {
  mapInPlace(graph, expr::TernaryOpType::SELECT, A, B, C, prog, debugContext, options);
}
inline poplar::Tensor clamp(poplar::Graph& graph, const poplar::Tensor& A, const poplar::Tensor& B,
                            const poplar::Tensor& C, poplar::program::Sequence& prog,
                            const poplar::DebugContext& debugContext = {},
                            const poplar::OptionFlags& options = {}) {
  return map(graph, expr::TernaryOpType::CLAMP, A, B, C, prog, debugContext, options);
}
inline void clampInPlace(poplar::Graph& graph, const poplar::Tensor& A, const poplar::Tensor& B,
                         const poplar::Tensor& C, poplar::program::Sequence& prog,
                         const poplar::DebugContext& debugContext = {},
                         const poplar::OptionFlags& options = {}) {
  mapInPlace(graph, expr::TernaryOpType::CLAMP, A, B, C, prog, debugContext, options);
}

}  // namespace popops
