// Element expressions for popops::map (PopLibs API: popops/Expr.hpp): placeholders _1.._20 name
// the map's input tensors, Const holds a value, Cast converts, and UnaryOp / BinaryOp /
// TernaryOp (with their named forms Add, Mul, Select, ... and C++ operators) combine them.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include <poplar/HalfFloat.hpp>
#include <poplar/Tensor.hpp>
#include <poplar/Type.hpp>
#include <popops/ExprOp.hpp>

namespace popops::expr {

class Expr {
 protected:
  using ExprClassID = void (*)();
  explicit Expr(ExprClassID id) : classId(id) {}
  ExprClassID classId;

 public:
  virtual ~Expr() = default;
  template <class T>
  bool isA() const {
    return classId == T::getClassId();
  }
  template <class T>
  const T* getAs() const {
    return isA<T>() ? static_cast<const T*>(this) : nullptr;
  }
  template <class T>
  T* getAs() {
    return isA<T>() ? static_cast<T*>(this) : nullptr;
  }
  virtual std::unique_ptr<Expr> clone() const = 0;
  virtual void print(std::ostream& os, unsigned indent = 0, bool prettyPrint = true) const = 0;
};

std::ostream& operator<<(std::ostream& os, const Expr& expr);

template <class T>
class ExprType : public Expr {
 public:
  static void loc() {}
  static ExprClassID getClassId() { return &loc; }
  ExprType() : Expr(getClassId()) {}
};

// Holds any expression (to build trees whose outer type changes at run time).
class Any {
 public:
  Any(const Expr& e) : expr(e.clone()) {}
  operator Expr&() { return *expr; }
  operator const Expr&() const { return *expr; }

 private:
  std::unique_ptr<Expr> expr;
};

class Const : public ExprType<Const> {
 public:
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
  Const(T x) : value(static_cast<double>(x)), type(poplar::equivalent_device_type<T>::value) {}
  Const(double x, poplar::Type t) : value(x), type(t) {}
  double getDataAsDouble() const { return value; }
  const poplar::Type& getType() const { return type; }
  std::unique_ptr<Expr> clone() const override { return std::make_unique<Const>(value, type); }
  void print(std::ostream& os, unsigned indent = 0, bool prettyPrint = true) const override;

 private:
  double value;
  poplar::Type type;
};

// A half constant: `ConstHalf(0.5f)`.
class ConstHalf : public Const {
 public:
  explicit ConstHalf(float x) : Const(static_cast<double>(static_cast<half>(x)), poplar::HALF) {}
};

class Cast : public ExprType<Cast> {
 public:
  Cast(const Expr& a, const poplar::Type& t) : a_(a.clone()), bType(t) {}
  const Expr& getLHS() const { return *a_; }
  const poplar::Type& getRHSType() const { return bType; }
  std::unique_ptr<Expr> clone() const override { return std::make_unique<Cast>(*a_, bType); }
  void print(std::ostream& os, unsigned indent = 0, bool prettyPrint = true) const override;

 private:
  std::unique_ptr<Expr> a_;
  poplar::Type bType;
};

class PlaceHolder : public ExprType<PlaceHolder> {
 public:
  explicit PlaceHolder(unsigned i) : index(i) {}
  unsigned getIndex() const { return index; }
  std::unique_ptr<Expr> clone() const override { return std::make_unique<PlaceHolder>(index); }
  void print(std::ostream& os, unsigned indent = 0, bool prettyPrint = true) const override;

 private:
  unsigned index;
};

inline const PlaceHolder _1(1), _2(2), _3(3), _4(4), _5(5), _6(6), _7(7), _8(8), _9(9),
    _10(10), _11(11), _12(12), _13(13), _14(14), _15(15), _16(16), _17(17), _18(18), _19(19),
    _20(20);

class UnaryOp : public ExprType<UnaryOp> {
 public:
  UnaryOp(UnaryOpType t, const Expr& a) : type(t), a_(a.clone()) {}
  UnaryOpType getOpType() const { return type; }
  const Expr& getArg() const { return *a_; }
  std::unique_ptr<Expr> clone() const override { return std::make_unique<UnaryOp>(type, *a_); }
  void print(std::ostream& os, unsigned indent = 0, bool prettyPrint = true) const override;

 private:
  UnaryOpType type;
  std::unique_ptr<Expr> a_;
};

class BinaryOp : public ExprType<BinaryOp> {
 public:
  BinaryOp(BinaryOpType t, const Expr& a, const Expr& b)
      : type(t), a_(a.clone()), b_(b.clone()) {}
  BinaryOpType getOpType() const { return type; }
  const Expr& getLHS() const { return *a_; }
  const Expr& getRHS() const { return *b_; }
  std::unique_ptr<Expr> clone() const override {
    return std::make_unique<BinaryOp>(type, *a_, *b_);
  }
  void print(std::ostream& os, unsigned indent = 0, bool prettyPrint = true) const override;

 private:
  BinaryOpType type;
  std::unique_ptr<Expr> a_, b_;
};

class TernaryOp : public ExprType<TernaryOp> {
 public:
  TernaryOp(TernaryOpType t, const Expr& a, const Expr& b, const Expr& c)
      : type(t), a_(a.clone()), b_(b.clone()), c_(c.clone()) {}
  TernaryOpType getOpType() const { return type; }
  const Expr& getArg0() const { return *a_; }
  const Expr& getArg1() const { return *b_; }
  const Expr& getArg2() const { return *c_; }
  std::unique_ptr<Expr> clone() const override {
    return std::make_unique<TernaryOp>(type, *a_, *b_, *c_);
  }
  void print(std::ostream& os, unsigned indent = 0, bool prettyPrint = true) const override;

 private:
  TernaryOpType type;
  std::unique_ptr<Expr> a_, b_, c_;
};

#define TESSERA_POPOPS_UNARY(Name, Op)                         \
  class Name : public UnaryOp {                                \
   public:                                                     \
    explicit Name(const Expr& a) : UnaryOp(UnaryOpType::Op, a) {} \
  };
TESSERA_POPOPS_UNARY(Abs, ABSOLUTE)
TESSERA_POPOPS_UNARY(Asin, ASIN)
TESSERA_POPOPS_UNARY(BitwiseNot, BITWISE_NOT)
TESSERA_POPOPS_UNARY(Cbrt, CBRT)
TESSERA_POPOPS_UNARY(Ceil, CEIL)
TESSERA_POPOPS_UNARY(Cos, COS)
TESSERA_POPOPS_UNARY(Erf, ERF)
TESSERA_POPOPS_UNARY(Exp, EXPONENT)
TESSERA_POPOPS_UNARY(Expm1, EXPONENT_MINUS_ONE)
TESSERA_POPOPS_UNARY(Floor, FLOOR)
TESSERA_POPOPS_UNARY(GeluErf, GELU_ERF)
TESSERA_POPOPS_UNARY(Inv, INVERSE)
TESSERA_POPOPS_UNARY(IsFinite, IS_FINITE)
TESSERA_POPOPS_UNARY(IsInf, IS_INF)
TESSERA_POPOPS_UNARY(IsNaN, IS_NAN)
TESSERA_POPOPS_UNARY(Log, LOGARITHM)
TESSERA_POPOPS_UNARY(Log1p, LOGARITHM_ONE_PLUS)
TESSERA_POPOPS_UNARY(Not, LOGICAL_NOT)
TESSERA_POPOPS_UNARY(Neg, NEGATE)
TESSERA_POPOPS_UNARY(Relu, RELU)
TESSERA_POPOPS_UNARY(Signum, SIGNUM)
TESSERA_POPOPS_UNARY(Sin, SIN)
TESSERA_POPOPS_UNARY(Tan, TAN)
TESSERA_POPOPS_UNARY(Tanh, TANH)
TESSERA_POPOPS_UNARY(Round, ROUND)
TESSERA_POPOPS_UNARY(Sqrt, SQRT)
TESSERA_POPOPS_UNARY(Square, SQUARE)
TESSERA_POPOPS_UNARY(Sigmoid, SIGMOID)
TESSERA_POPOPS_UNARY(Rsqrt, RSQRT)
#undef TESSERA_POPOPS_UNARY

#define TESSERA_POPOPS_BINARY(Name, Op)                                          \
  class Name : public BinaryOp {                                                 \
   public:                                                                       \
    Name(const Expr& a, const Expr& b) : BinaryOp(BinaryOpType::Op, a, b) {}     \
  };
TESSERA_POPOPS_BINARY(Add, ADD)
TESSERA_POPOPS_BINARY(Atan2, ATAN2)
TESSERA_POPOPS_BINARY(BitwiseAnd, BITWISE_AND)
TESSERA_POPOPS_BINARY(BitwiseOr, BITWISE_OR)
TESSERA_POPOPS_BINARY(BitwiseXor, BITWISE_XOR)
TESSERA_POPOPS_BINARY(BitwiseXnor, BITWISE_XNOR)
TESSERA_POPOPS_BINARY(Divide, DIVIDE)
TESSERA_POPOPS_BINARY(Equal, EQUAL)
TESSERA_POPOPS_BINARY(Gte, GREATER_THAN_EQUAL)
TESSERA_POPOPS_BINARY(Gt, GREATER_THAN)
TESSERA_POPOPS_BINARY(Lte, LESS_THAN_EQUAL)
TESSERA_POPOPS_BINARY(And, LOGICAL_AND)
TESSERA_POPOPS_BINARY(Or, LOGICAL_OR)
TESSERA_POPOPS_BINARY(Lt, LESS_THAN)
TESSERA_POPOPS_BINARY(InvStdDevToVariance, INV_STD_DEV_TO_VARIANCE)
TESSERA_POPOPS_BINARY(Max, MAXIMUM)
TESSERA_POPOPS_BINARY(Min, MINIMUM)
TESSERA_POPOPS_BINARY(Mul, MULTIPLY)
TESSERA_POPOPS_BINARY(NotEqual, NOT_EQUAL)
TESSERA_POPOPS_BINARY(Pow, POWER)
TESSERA_POPOPS_BINARY(Rem, REMAINDER)
TESSERA_POPOPS_BINARY(Shl, SHIFT_LEFT)
TESSERA_POPOPS_BINARY(Shr, SHIFT_RIGHT)
TESSERA_POPOPS_BINARY(ShrSE, SHIFT_RIGHT_SIGN_EXTEND)
TESSERA_POPOPS_BINARY(Sub, SUBTRACT)
TESSERA_POPOPS_BINARY(VarianceToInvStdDev, VARIANCE_TO_INV_STD_DEV)
#undef TESSERA_POPOPS_BINARY

class Select : public TernaryOp {
 public:
  // a where c is true, else b.
  Select(const Expr& a, const Expr& b, const Expr& c) : TernaryOp(TernaryOpType::SELECT, a, b, c) {}
};
class Clamp : public TernaryOp {
 public:
  // a clamped to [b, c].
  Clamp(const Expr& a, const Expr& b, const Expr& c) : TernaryOp(TernaryOpType::CLAMP, a, b, c) {}
};

// C++ operators on expressions (and an expression with a number).
namespace detail {
template <typename T>
inline constexpr bool is_number = std::is_arithmetic_v<T> && !std::is_base_of_v<Expr, T>;
}
#define TESSERA_POPOPS_OPERATOR(Name, Sym)                                              \
  inline Name operator Sym(const Expr& a, const Expr& b) { return Name(a, b); }         \
  template <typename T, typename = std::enable_if_t<detail::is_number<T>>>              \
  inline Name operator Sym(const Expr& a, T b) {                                        \
    return Name(a, Const(b));                                                           \
  }                                                                                     \
  template <typename T, typename = std::enable_if_t<detail::is_number<T>>>              \
  inline Name operator Sym(T a, const Expr& b) {                                        \
    return Name(Const(a), b);                                                           \
  }
TESSERA_POPOPS_OPERATOR(Add, +)
TESSERA_POPOPS_OPERATOR(Sub, -)
TESSERA_POPOPS_OPERATOR(Mul, *)
TESSERA_POPOPS_OPERATOR(Divide, /)
TESSERA_POPOPS_OPERATOR(Rem, %)
TESSERA_POPOPS_OPERATOR(BitwiseAnd, &)
TESSERA_POPOPS_OPERATOR(BitwiseOr, |)
TESSERA_POPOPS_OPERATOR(BitwiseXor, ^)
TESSERA_POPOPS_OPERATOR(Equal, ==)
TESSERA_POPOPS_OPERATOR(NotEqual, !=)
TESSERA_POPOPS_OPERATOR(Gt, >)
TESSERA_POPOPS_OPERATOR(Gte, >=)
TESSERA_POPOPS_OPERATOR(Lt, <)
TESSERA_POPOPS_OPERATOR(Lte, <=)
TESSERA_POPOPS_OPERATOR(And, &&)
TESSERA_POPOPS_OPERATOR(Or, ||)
TESSERA_POPOPS_OPERATOR(Shl, <<)
TESSERA_POPOPS_OPERATOR(Shr, >>)
#undef TESSERA_POPOPS_OPERATOR
inline Neg operator-(const Expr& a) {
  return Neg(a);
}
inline Not operator!(const Expr& a) {
  return Not(a);
}
inline BitwiseNot operator~(const Expr& a) {
  return BitwiseNot(a);
}

}  // namespace popops::expr
