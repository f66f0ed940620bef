// popops element-wise operations: expressions compiled to register programs run by the
// MapExpr / MapExprInPlace codelets, one MultiVertex per tile over the output elements the tile
// holds (its workers take equal shares of every region).
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
#include "elementwise.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>

#include <popops/Cast.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Fill.hpp>
#include <popops/ScaledAdd.hpp>
#include <popops/Zero.hpp>
#include <poputil/Broadcast.hpp>
#include <poputil/TileMapping.hpp>

namespace tessera::ipu::poplibs {

using namespace popops::expr;

namespace {

enum Opcode : unsigned { kLoad = 0, kConst = 1, kCast = 2, kUnary = 100, kBinary = 200, kTernary = 300 };
constexpr unsigned kHeader = 3;  // numRegs, numInputs, outType; then the input types
constexpr unsigned kInstr = 6;   // op, type, dst, a, b, c
constexpr std::size_t kChunk = 256;

const char* const kUnaryNames[] = {
    "ABSOLUTE", "ASIN", "BITWISE_NOT", "CBRT", "CEIL", "COS", "COUNT_LEADING_ZEROS", "ERF",
    "EXPONENT", "EXPONENT_MINUS_ONE", "FLOOR", "GELU_ERF", "INVERSE", "IS_FINITE", "IS_INF",
    "IS_NAN", "LOGARITHM", "LOGARITHM_ONE_PLUS", "LOGICAL_NOT", "NEGATE", "POPCOUNT", "RELU",
    "SIGNUM", "SIN", "TAN", "TANH", "ROUND", "SQRT", "SQUARE", "SIGMOID", "RSQRT"};
const char* const kBinaryNames[] = {"ADD",
                                    "ATAN2",
                                    "BITWISE_AND",
                                    "BITWISE_OR",
                                    "BITWISE_XOR",
                                    "BITWISE_XNOR",
                                    "DIVIDE",
                                    "EQUAL",
                                    "GREATER_THAN_EQUAL",
                                    "GREATER_THAN",
                                    "INV_STD_DEV_TO_VARIANCE",
                                    "LESS_THAN_EQUAL",
                                    "LOGICAL_AND",
                                    "LOGICAL_OR",
                                    "LESS_THAN",
                                    "MAXIMUM",
                                    "MINIMUM",
                                    "MULTIPLY",
                                    "NOT_EQUAL",
                                    "POWER",
                                    "REMAINDER",
                                    "SHIFT_LEFT",
                                    "SHIFT_RIGHT",
                                    "SHIFT_RIGHT_SIGN_EXTEND",
                                    "SUBTRACT",
                                    "VARIANCE_TO_INV_STD_DEV"};

bool unary_is_transcendental(UnaryOpType op) {
  switch (op) {
    case UnaryOpType::ASIN:
    case UnaryOpType::CBRT:
    case UnaryOpType::COS:
    case UnaryOpType::ERF:
    case UnaryOpType::EXPONENT:
    case UnaryOpType::EXPONENT_MINUS_ONE:
    case UnaryOpType::GELU_ERF:
    case UnaryOpType::LOGARITHM:
    case UnaryOpType::LOGARITHM_ONE_PLUS:
    case UnaryOpType::SIN:
    case UnaryOpType::TAN:
    case UnaryOpType::TANH:
    case UnaryOpType::SIGMOID:
    case UnaryOpType::POPCOUNT:
    case UnaryOpType::COUNT_LEADING_ZEROS:
      return true;
    default:
      return false;
  }
}

bool binary_is_bool(BinaryOpType op) {
  switch (op) {
    case BinaryOpType::EQUAL:
    case BinaryOpType::NOT_EQUAL:
    case BinaryOpType::GREATER_THAN:
    case BinaryOpType::GREATER_THAN_EQUAL:
    case BinaryOpType::LESS_THAN:
    case BinaryOpType::LESS_THAN_EQUAL:
    case BinaryOpType::LOGICAL_AND:
    case BinaryOpType::LOGICAL_OR:
      return true;
    default:
      return false;
  }
}

std::int64_t as_int(double v) {
  if (std::isnan(v)) return 0;
  return static_cast<std::int64_t>(std::clamp(v, -9.2e18, 9.2e18));
}

double unary(UnaryOpType op, double x, unsigned type) {
  bool fp = type_is_float(type);
  unsigned bits = type_bytes(type) * 8;
  switch (op) {
    case UnaryOpType::ABSOLUTE: return std::fabs(x);
    case UnaryOpType::ASIN: return std::asin(x);
    case UnaryOpType::BITWISE_NOT: return static_cast<double>(~as_int(x));
    case UnaryOpType::CBRT: return std::cbrt(x);
    case UnaryOpType::CEIL: return std::ceil(x);
    case UnaryOpType::COS: return std::cos(x);
    case UnaryOpType::COUNT_LEADING_ZEROS: {
      std::uint64_t u = static_cast<std::uint64_t>(as_int(x)) & ((bits >= 64) ? ~0ull : ((1ull << bits) - 1));
      return u == 0 ? bits : std::countl_zero(u) - (64 - int(bits));
    }
    case UnaryOpType::ERF: return std::erf(x);
    case UnaryOpType::EXPONENT: return std::exp(x);
    case UnaryOpType::EXPONENT_MINUS_ONE: return std::expm1(x);
    case UnaryOpType::FLOOR: return std::floor(x);
    case UnaryOpType::GELU_ERF: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case UnaryOpType::INVERSE: return fp ? 1.0 / x : (x == 0 ? 0 : std::trunc(1.0 / x));
    case UnaryOpType::IS_FINITE: return std::isfinite(x) ? 1 : 0;
    case UnaryOpType::IS_INF: return std::isinf(x) ? 1 : 0;
    case UnaryOpType::IS_NAN: return std::isnan(x) ? 1 : 0;
    case UnaryOpType::LOGARITHM: return std::log(x);
    case UnaryOpType::LOGARITHM_ONE_PLUS: return std::log1p(x);
    case UnaryOpType::LOGICAL_NOT: return x == 0 ? 1 : 0;
    case UnaryOpType::NEGATE: return -x;
    case UnaryOpType::POPCOUNT: {
      std::uint64_t u = static_cast<std::uint64_t>(as_int(x)) & ((bits >= 64) ? ~0ull : ((1ull << bits) - 1));
      return std::popcount(u);
    }
    case UnaryOpType::RELU: return x > 0 ? x : 0;
    case UnaryOpType::SIGNUM: return x > 0 ? 1 : (x < 0 ? -1 : 0);
    case UnaryOpType::SIN: return std::sin(x);
    case UnaryOpType::TAN: return std::tan(x);
    case UnaryOpType::TANH: return std::tanh(x);
    case UnaryOpType::ROUND: return std::round(x);
    case UnaryOpType::SQRT: return std::sqrt(x);
    case UnaryOpType::SQUARE: return x * x;
    case UnaryOpType::SIGMOID: return 1.0 / (1.0 + std::exp(-x));
    case UnaryOpType::RSQRT: return 1.0 / std::sqrt(x);
  }
  return x;
}

double binary(BinaryOpType op, double a, double b, unsigned type) {
  bool fp = type_is_float(type);
  unsigned bits = type_bytes(type) * 8;
  std::uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
  switch (op) {
    case BinaryOpType::ADD: return a + b;
    case BinaryOpType::ATAN2: return std::atan2(a, b);
    case BinaryOpType::BITWISE_AND: return double(as_int(a) & as_int(b));
    case BinaryOpType::BITWISE_OR: return double(as_int(a) | as_int(b));
    case BinaryOpType::BITWISE_XOR: return double(as_int(a) ^ as_int(b));
    case BinaryOpType::BITWISE_XNOR: return double(~(as_int(a) ^ as_int(b)));
    case BinaryOpType::DIVIDE:
      if (fp) return a / b;
      return b == 0 ? 0 : std::trunc(a / b);
    case BinaryOpType::EQUAL: return a == b;
    case BinaryOpType::GREATER_THAN_EQUAL: return a >= b;
    case BinaryOpType::GREATER_THAN: return a > b;
    case BinaryOpType::INV_STD_DEV_TO_VARIANCE: return 1.0 / (a * a) - b;
    case BinaryOpType::LESS_THAN_EQUAL: return a <= b;
    case BinaryOpType::LOGICAL_AND: return a != 0 && b != 0;
    case BinaryOpType::LOGICAL_OR: return a != 0 || b != 0;
    case BinaryOpType::LESS_THAN: return a < b;
    case BinaryOpType::MAXIMUM: return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
    case BinaryOpType::MINIMUM: return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
    case BinaryOpType::MULTIPLY: return a * b;
    case BinaryOpType::NOT_EQUAL: return a != b;
    case BinaryOpType::POWER: return std::pow(a, b);
    case BinaryOpType::REMAINDER:
      if (!fp && b == 0) return 0;
      return std::fmod(a, b);
    case BinaryOpType::SHIFT_LEFT: return double((static_cast<std::uint64_t>(as_int(a)) << (as_int(b) & 63)) & mask);
    case BinaryOpType::SHIFT_RIGHT: return double((static_cast<std::uint64_t>(as_int(a)) & mask) >> (as_int(b) & 63));
    case BinaryOpType::SHIFT_RIGHT_SIGN_EXTEND: return double(as_int(a) >> (as_int(b) & 63));
    case BinaryOpType::SUBTRACT: return a - b;
    case BinaryOpType::VARIANCE_TO_INV_STD_DEV: return 1.0 / std::sqrt(a + b);
  }
  return a;
}

// Runs the register program over elements [b, e) of row r.
void run_program(const unsigned* code, std::size_t code_size, const unsigned char* const* inputs,
                 unsigned char* out, std::size_t b, std::size_t e) {
  unsigned regs = code[0], num_inputs = code[1], out_type = code[2];
  const unsigned* types = code + kHeader;
  thread_local std::vector<double> buf;
  buf.resize(std::size_t(regs) * kChunk);
  for (std::size_t c0 = b; c0 < e; c0 += kChunk) {
    std::size_t n = std::min(kChunk, e - c0);
    unsigned last = 0;
    for (std::size_t pc = kHeader + num_inputs; pc + kInstr <= code_size; pc += kInstr) {
      const unsigned* ins = code + pc;
      unsigned op = ins[0], type = ins[1];
      double* d = buf.data() + std::size_t(ins[2]) * kChunk;
      last = ins[2];
      if (op == kLoad) {
        unsigned k = ins[3];
        load_elements(inputs[k] + c0 * type_bytes(types[k]), types[k], n, d);
      } else if (op == kConst) {
        std::uint64_t bits = (std::uint64_t(ins[4]) << 32) | ins[3];
        double v = std::bit_cast<double>(bits);
        std::fill(d, d + n, v);
      } else if (op == kCast) {
        const double* a = buf.data() + std::size_t(ins[3]) * kChunk;
        for (std::size_t i = 0; i < n; ++i) d[i] = round_to_type(type, a[i]);
      } else if (op >= kTernary) {
        const double* a = buf.data() + std::size_t(ins[3]) * kChunk;
        const double* x = buf.data() + std::size_t(ins[4]) * kChunk;
        const double* y = buf.data() + std::size_t(ins[5]) * kChunk;
        if (static_cast<TernaryOpType>(op - kTernary) == TernaryOpType::SELECT)
          for (std::size_t i = 0; i < n; ++i) d[i] = y[i] != 0 ? a[i] : x[i];
        else
          for (std::size_t i = 0; i < n; ++i) d[i] = std::min(std::max(a[i], x[i]), y[i]);
      } else if (op >= kBinary) {
        const double* a = buf.data() + std::size_t(ins[3]) * kChunk;
        const double* x = buf.data() + std::size_t(ins[4]) * kChunk;
        auto bop = static_cast<BinaryOpType>(op - kBinary);
        unsigned operand_type = ins[5];
        for (std::size_t i = 0; i < n; ++i)
          d[i] = round_to_type(type, binary(bop, a[i], x[i], operand_type));
      } else {
        const double* a = buf.data() + std::size_t(ins[3]) * kChunk;
        auto uop = static_cast<UnaryOpType>(op - kUnary);
        unsigned operand_type = ins[5];
        for (std::size_t i = 0; i < n; ++i)
          d[i] = round_to_type(type, unary(uop, a[i], operand_type));
      }
    }
    store_elements(out + c0 * type_bytes(out_type), out_type, n,
                   buf.data() + std::size_t(last) * kChunk);
  }
}

// Runs the program `code` over worker w's share of every row of `out`; input k of row r is
// input(k, r).
template <typename Rows, typename Input>
void run_rows(Rows& out, const poplar::Vector<unsigned>& code, unsigned w, unsigned workers,
              Input&& input) {
  std::size_t rows = out.size(), inputs = code[1];
  std::vector<const unsigned char*> ptrs(inputs);
  for (std::size_t r = 0; r < rows; ++r) {
    std::size_t len = out[r].size();
    for (std::size_t k = 0; k < inputs; ++k)
      ptrs[k] = static_cast<const unsigned char*>(input(k, r));
    std::size_t b = len * w / workers, e = len * (w + 1) / workers;
    run_program(code.data(), code.size(), ptrs.data(),
                reinterpret_cast<unsigned char*>(out[r].data()), b, e);
  }
}

}  // namespace

// The codelets (compiled into Tessera). Row r of `out` pairs with rows r, R + r, 2R + r, ... of
// `in` (one per input); worker w takes the w-th sixth of every row.
class MapExpr : public poplar::MultiVertex {
 public:
  poplar::Input<poplar::VectorList<Byte>> in;
  poplar::Output<poplar::VectorList<Byte>> out;
  poplar::Vector<unsigned> code;

  bool compute(unsigned w) {
    std::size_t rows = out.size();
    run_rows(out, code, w, numWorkers(),
             [&](std::size_t k, std::size_t r) -> const void* { return in[k * rows + r].data(); });
    return true;
  }
};

// In place: input 0 is `out` itself; `in` holds the other inputs.
class MapExprInPlace : public poplar::MultiVertex {
 public:
  poplar::Input<poplar::VectorList<Byte>> in;
  poplar::InOut<poplar::VectorList<Byte>> out;
  poplar::Vector<unsigned> code;

  bool compute(unsigned w) {
    std::size_t rows = out.size();
    run_rows(out, code, w, numWorkers(), [&](std::size_t k, std::size_t r) -> const void* {
      return k == 0 ? out[r].data() : in[(k - 1) * rows + r].data();
    });
    return true;
  }
};

namespace {

const abi::FieldDesc kMapFields[] = {TESSERA_IPU_FIELD(MapExpr, in), TESSERA_IPU_FIELD(MapExpr, out),
                                     TESSERA_IPU_FIELD(MapExpr, code)};
const abi::FieldDesc kMapInPlaceFields[] = {TESSERA_IPU_FIELD(MapExprInPlace, in),
                                            TESSERA_IPU_FIELD(MapExprInPlace, out),
                                            TESSERA_IPU_FIELD(MapExprInPlace, code)};
const char* const kNoConstraints[] = {nullptr};

const abi::VertexTypeDesc& map_desc(bool in_place) {
  static const abi::VertexTypeDesc d = poplar::detail::describe_vertex<MapExpr>(
      "popops::MapExpr", kMapFields, 3, kNoConstraints);
  static const abi::VertexTypeDesc di = poplar::detail::describe_vertex<MapExprInPlace>(
      "popops::MapExprInPlace", kMapInPlaceFields, 3, kNoConstraints);
  return in_place ? di : d;
}

// ---- compiling expressions ----
struct Compiler {
  const std::vector<Type>& types;
  std::vector<unsigned> instrs;
  unsigned regs = 0;
  unsigned vector_ops = 0, scalar_ops = 0;
  std::map<unsigned, unsigned> loaded;  // input -> register

  // Type of a node: the input's, the cast's, bool for predicates, else its operands'. An untyped
  // constant (0) takes the type of the operand beside it.
  Type type_of(const Expr& e) {
    if (auto* p = e.getAs<PlaceHolder>()) return input_type(p->getIndex());
    if (e.isA<Const>()) return Type();
    if (auto* c = e.getAs<Cast>()) return c->getRHSType();
    if (auto* u = e.getAs<UnaryOp>()) {
      auto op = u->getOpType();
      if (op == UnaryOpType::IS_FINITE || op == UnaryOpType::IS_INF || op == UnaryOpType::IS_NAN ||
          op == UnaryOpType::LOGICAL_NOT)
        return poplar::BOOL;
      return type_of(u->getArg());
    }
    if (auto* b = e.getAs<BinaryOp>()) {
      if (binary_is_bool(b->getOpType())) return poplar::BOOL;
      Type l = type_of(b->getLHS()), r = type_of(b->getRHS());
      return l != Type() ? l : r;
    }
    if (auto* t = e.getAs<TernaryOp>()) {
      Type a = type_of(t->getArg0());
      return a != Type() ? a : type_of(t->getArg1());
    }
    return Type();
  }

  Type input_type(unsigned index) {
    if (index == 0 || index > types.size())
      throw poputil::poplibs_error(fmt::format(
          "popops::map: the expression uses placeholder _{} but {} tensor(s) are given; pass one "
          "tensor per placeholder",
          index, types.size()));
    return types[index - 1];
  }

  void emit(unsigned op, Type t, unsigned dst, unsigned a = 0, unsigned b = 0, unsigned c = 0) {
    instrs.insert(instrs.end(), {op, t.tesseraId(), dst, a, b, c});
  }

  // Emits `e` as type `want` (the context's type for untyped constants); returns its register.
  unsigned gen(const Expr& e, Type want) {
    if (auto* p = e.getAs<PlaceHolder>()) {
      unsigned k = p->getIndex();
      input_type(k);
      auto it = loaded.find(k);
      if (it != loaded.end()) return it->second;
      unsigned r = regs++;
      emit(kLoad, types[k - 1], r, k - 1);
      return loaded[k] = r;
    }
    if (auto* c = e.getAs<Const>()) {
      Type t = want != Type() ? want : c->getType();
      double v = round_to_type(t.tesseraId(), c->getDataAsDouble());
      std::uint64_t bits = std::bit_cast<std::uint64_t>(v);
      unsigned r = regs++;
      emit(kConst, t, r, unsigned(bits & 0xffffffffu), unsigned(bits >> 32));
      return r;
    }
    if (auto* c = e.getAs<Cast>()) {
      unsigned a = gen(c->getLHS(), Type());
      unsigned r = regs++;
      emit(kCast, c->getRHSType(), r, a);
      ++vector_ops;
      return r;
    }
    if (auto* u = e.getAs<UnaryOp>()) {
      Type t = type_of(u->getArg());
      if (t == Type()) t = want;
      unsigned a = gen(u->getArg(), t);
      Type rt = type_of(e);
      if (rt == Type()) rt = t;
      unsigned r = regs++;
      emit(kUnary + unsigned(u->getOpType()), rt, r, a, 0, t.tesseraId());
      (unary_is_transcendental(u->getOpType()) ? scalar_ops : vector_ops) += 1;
      return r;
    }
    if (auto* b = e.getAs<BinaryOp>()) {
      Type l = type_of(b->getLHS()), rr = type_of(b->getRHS());
      auto op = b->getOpType();
      bool shift = op == BinaryOpType::SHIFT_LEFT || op == BinaryOpType::SHIFT_RIGHT ||
                   op == BinaryOpType::SHIFT_RIGHT_SIGN_EXTEND;
      if (l != Type() && rr != Type() && l != rr && !shift)
        throw poputil::poplibs_error(fmt::format(
            "popops::map: operator {} has operands of {} and {}; cast one of them (popops::cast "
            "or expr::Cast) so both are the same type",
            kBinaryNames[unsigned(op)], l.toString(), rr.toString()));
      Type t = l != Type() ? l : (rr != Type() ? rr : want);
      if (t == Type()) t = poplar::FLOAT;
      unsigned a = gen(b->getLHS(), t), c = gen(b->getRHS(), t);
      Type rt = binary_is_bool(op) ? poplar::BOOL : t;
      unsigned r = regs++;
      emit(kBinary + unsigned(op), rt, r, a, c, t.tesseraId());
      (op == BinaryOpType::POWER || op == BinaryOpType::ATAN2 || op == BinaryOpType::REMAINDER ||
               (op == BinaryOpType::DIVIDE && !t.isFloatingPoint())
           ? scalar_ops
           : vector_ops) += 1;
      return r;
    }
    if (auto* t3 = e.getAs<TernaryOp>()) {
      Type t = type_of(e);
      if (t == Type()) t = want;
      if (t == Type()) t = poplar::FLOAT;
      unsigned a = gen(t3->getArg0(), t), b = gen(t3->getArg1(), t);
      Type ct = t3->getOpType() == TernaryOpType::SELECT ? poplar::BOOL : t;
      if (t3->getOpType() == TernaryOpType::SELECT) {
        Type pt = type_of(t3->getArg2());
        if (pt != Type() && pt != poplar::BOOL)
          throw poputil::poplibs_error(fmt::format(
              "popops select: the predicate (third operand) is {}; it must be bool", pt.toString()));
      }
      unsigned c = gen(t3->getArg2(), ct);
      unsigned r = regs++;
      emit(kTernary + unsigned(t3->getOpType()), t, r, a, b, c);
      vector_ops += 2;
      return r;
    }
    throw poputil::poplibs_error("popops::map: unknown expression node");
  }
};

}  // namespace

ElementProgram compile_expr(const Expr& expr, const std::vector<Type>& types) {
  Compiler c{types};
  Type t = c.type_of(expr);
  if (t == Type()) t = types.empty() ? poplar::FLOAT : types[0];
  c.gen(expr, t);
  ElementProgram p;
  p.out_type = t;
  p.code = {c.regs, unsigned(types.size()), t.tesseraId()};
  for (auto ty : types) p.code.push_back(ty.tesseraId());
  p.code.insert(p.code.end(), c.instrs.begin(), c.instrs.end());
  p.vector_ops = c.vector_ops;
  p.scalar_ops = c.scalar_ops;
  return p;
}

std::vector<Tensor> broadcast_all(const std::vector<Tensor>& ts, const std::string& op) {
  std::vector<std::size_t> shape;
  for (const auto& t : ts) {
    auto s = t.shape();
    if (s.size() > shape.size()) shape.insert(shape.begin(), s.size() - shape.size(), 1);
    for (std::size_t i = 0; i < s.size(); ++i) {
      std::size_t& d = shape[shape.size() - s.size() + i];
      std::size_t v = s[i];
      if (d == v || v == 1) continue;
      if (d == 1) {
        d = v;
        continue;
      }
      std::vector<std::string> shapes;
      for (const auto& u : ts) shapes.push_back(fmt::format("{{{}}}", fmt::join(u.shape(), ",")));
      throw poputil::poplibs_error(fmt::format(
          "{}: operand shapes {} do not broadcast (dimension sizes must match or be 1)", op,
          fmt::join(shapes, ", ")));
    }
  }
  std::vector<Tensor> out;
  for (Tensor t : ts) {
    poputil::broadcastToMatch(t, shape);
    out.push_back(t);
  }
  return out;
}

Tensor create_output(Graph& graph, const std::vector<Tensor>& inputs, Type type,
                     const poplar::DebugContext& dc) {
  for (const auto& t : inputs)
    if (!t.containsAliases()) {
      Tensor out = graph.addVariable(type, t.shape(), dc);
      graph.setTileMapping(out, graph.getTileMapping(t));
      return out;
    }
  Tensor out = graph.addVariable(type, inputs.at(0).shape(), dc);
  poputil::mapTensorLinearly(graph, out);
  return out;
}

void add_elementwise_vertices(Graph& graph, poplar::ComputeSet cs, const ElementProgram& program,
                              const std::vector<Tensor>& inputs, const Tensor& out, bool in_place,
                              const std::string& vertex) {
  // The codelet under this name, with its estimate: per worker, every 64-bit vector of output
  // costs its loads and store on the main pipeline and its arithmetic on the aux pipeline,
  // dual-issued (spec 001 §7.1); a 128-bit load fetches two inputs' vectors (spec 001 §7.2.4).
  // Operations with no vector form (transcendentals) cost per element.
  unsigned loads = unsigned(inputs.size() + 1) / 2 + 1;
  unsigned vops = std::max(loads, program.vector_ops), sops = program.scalar_ops;
  unsigned out_type = program.out_type.tesseraId();
  register_codelet(graph, vertex, map_desc(in_place),
                   [vops, sops, out_type](const poplar::VertexIntrospector& v,
                                          const poplar::Target& target) {
                     auto rows = v.getFieldInfo("out");
                     unsigned workers = target.getNumWorkerContexts();
                     std::uint64_t width = std::max(
                         1u, target.getVectorWidth(Type(static_cast<std::uint8_t>(out_type))));
                     // Entry and worker split: 20 cycles (estimate).
                     std::uint64_t per = (rows.totalElements() + workers - 1) / workers;
                     return poplar::VertexPerfEstimate(20 + (per + width - 1) / width * vops +
                                                       per * sops * 10);
                   });
  Tensor flat_out = out.flatten();
  std::vector<Tensor> flat_in;
  for (const auto& t : inputs) flat_in.push_back(t.flatten());
  auto mapping = graph.getTileMapping(flat_out);
  for (unsigned tile = 0; tile < mapping.size(); ++tile) {
    if (mapping[tile].empty()) continue;
    auto v = graph.addVertex(cs, vertex);
    std::vector<Tensor> outs, ins;
    for (const auto& iv : mapping[tile]) outs.push_back(flat_out.slice(iv.begin(), iv.end()));
    for (std::size_t k = in_place ? 1 : 0; k < flat_in.size(); ++k)
      for (const auto& iv : mapping[tile]) ins.push_back(flat_in[k].slice(iv.begin(), iv.end()));
    graph.connect(v["out"], poplar::ArrayRef<Tensor>(outs));
    graph.connect(v["in"], poplar::ArrayRef<Tensor>(ins));
    set_state(graph, v, "code", program.code);
    graph.setTileMapping(v, tile);
  }
}

Tensor run_expr(Graph& graph, const Expr& expr, const std::vector<Tensor>& inputs_in,
              const Tensor* out_given, bool in_place, poplar::program::Sequence& prog,
              const poplar::DebugContext& dc, const std::string& vertex_override) {
  require_codelets(graph, "popops", "popops::MapExpr");
  if (inputs_in.empty() && !in_place && out_given == nullptr)
    throw poputil::poplibs_error("popops::map needs at least one input tensor");
  std::vector<Tensor> inputs = inputs_in;
  if (out_given && !in_place) inputs.push_back(*out_given);  // broadcast to the output's shape
  inputs = broadcast_all(inputs, "popops::map");
  if (out_given && !in_place) inputs.pop_back();
  std::vector<Type> types;
  for (const auto& t : inputs) types.push_back(t.elementType());
  ElementProgram program = compile_expr(expr, types);
  Tensor out;
  if (in_place) {
    out = inputs.at(0);
    if (out.shape() != inputs_in.at(0).shape())
      throw poputil::poplibs_error(fmt::format(
          "popops::mapInPlace: the first operand {{{}}} is written in place, so the others must "
          "broadcast to its shape, but together they make {{{}}}",
          fmt::join(inputs_in.at(0).shape(), ","), fmt::join(out.shape(), ",")));
    if (program.out_type != out.elementType())
      throw poputil::poplibs_error(fmt::format(
          "popops::mapInPlace: the expression gives {} but the first operand holds {}; cast "
          "inside the expression",
          program.out_type.toString(), out.elementType().toString()));
    // The program stores in the output's type; input 0 is read from the output itself.
  } else if (out_given) {
    out = *out_given;
    if (program.out_type != out.elementType())
      throw poputil::poplibs_error(fmt::format(
          "popops::mapWithOutput: the expression gives {} but the output holds {}",
          program.out_type.toString(), out.elementType().toString()));
    if (!inputs.empty() && inputs[0].numElements() != out.numElements())
      throw poputil::poplibs_error(fmt::format(
          "popops::mapWithOutput: the output has {} elements; the operands broadcast to {}",
          out.numElements(), inputs[0].numElements()));
  } else {
    out = create_output(graph, inputs, program.out_type, poplar::DebugContext(dc, "out"));
  }
  std::string vertex = vertex_override;
  if (vertex.empty()) {
    std::string t = program.out_type.toString();
    // One operator on placeholders in order: PopLibs' named codelets; else a fused codelet named
    // by the expression's program, as PopLibs generates one per expression.
    auto on_inputs = [](std::initializer_list<const Expr*> args) {
      unsigned i = 1;
      for (auto* a : args) {
        auto* p = a->getAs<PlaceHolder>();
        if (!p || p->getIndex() != i++) return false;
      }
      return true;
    };
    std::string suffix = in_place ? "InPlace" : "";
    if (auto* u = expr.getAs<UnaryOp>(); u && on_inputs({&u->getArg()}))
      vertex = templated("popops::UnaryOp2D" + suffix,
                         {std::string("popops::expr::UnaryOpType::") +
                              kUnaryNames[unsigned(u->getOpType())],
                          inputs.at(0).elementType().toString()});
    else if (auto* b = expr.getAs<BinaryOp>(); b && on_inputs({&b->getLHS(), &b->getRHS()}))
      vertex = templated("popops::BinaryOp2D" + suffix,
                         {std::string("popops::expr::BinaryOpType::") +
                              kBinaryNames[unsigned(b->getOpType())],
                          inputs.at(0).elementType().toString()});
    else if (auto* t3 = expr.getAs<TernaryOp>();
             t3 && on_inputs({&t3->getArg0(), &t3->getArg1(), &t3->getArg2()}))
      vertex = templated(t3->getOpType() == TernaryOpType::SELECT ? "popops::Select" + suffix
                                                                    : "popops::Clamp" + suffix,
                         {t});
    else
      vertex = fmt::format("popops::map::Expr{}<{},{:016x}>", suffix, t,
                           std::hash<std::string>()(std::string(
                               reinterpret_cast<const char*>(program.code.data()),
                               program.code.size() * sizeof(unsigned))));
  }
  auto cs = graph.addComputeSet(name_of(dc, vertex_override.empty() ? "map" : vertex_override));
  add_elementwise_vertices(graph, cs, program, inputs, out, in_place, vertex);
  prog.add(poplar::program::Execute(cs, dc));
  return out;
}

void register_popops_codelets(Graph& graph) {
  // The generic element-wise codelets under their own names: what the popops functions check
  // for, and what a user's graph may instantiate directly.
  auto est = [](const poplar::VertexIntrospector& v, const poplar::Target& t) {
    std::uint64_t per = (v.getFieldInfo("out").totalElements() + t.getNumWorkerContexts() - 1) /
                        t.getNumWorkerContexts();
    return poplar::VertexPerfEstimate(20 + per);
  };
  register_codelet(graph, "popops::MapExpr", map_desc(false), est);
  register_codelet(graph, "popops::MapExprInPlace", map_desc(true), est);
}

std::vector<const abi::VertexTypeDesc*> elementwise_descs() {
  return {&map_desc(false), &map_desc(true)};
}

}  // namespace tessera::ipu::poplibs
