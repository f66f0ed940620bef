#include "tessera/compiler/narrow.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "tessera/core/error.h"

namespace tessera::compiler {
namespace {

using I64 = std::int64_t;
constexpr I64 kI64Min = std::numeric_limits<I64>::min();
constexpr I64 kI64Max = std::numeric_limits<I64>::max();

// What is known of a value's elements: an integer range [lo, hi] (exact, when `known`), and for
// floats whether every element is exact in f32.
struct Facts {
  bool known = false;
  I64 lo = 0, hi = 0;
  bool f32_exact = false;
  std::string why;  // for a 64-bit value that does not fit: what makes its range unknown or wide
};

Facts range(I64 lo, I64 hi) {
  Facts f;
  f.known = true;
  f.lo = lo;
  f.hi = hi;
  return f;
}
Facts unknown(std::string why) {
  Facts f;
  f.why = std::move(why);
  return f;
}

Facts hull(const Facts& a, const Facts& b) {
  Facts f;
  f.known = a.known && b.known;
  if (f.known) {
    f.lo = std::min(a.lo, b.lo);
    f.hi = std::max(a.hi, b.hi);
  }
  f.f32_exact = a.f32_exact && b.f32_exact;
  f.why = !a.why.empty() ? a.why : b.why;
  return f;
}

// The range of a dtype's values; unknown for floats (an integer cast of them may hold anything).
Facts dtype_range(DType t) {
  switch (t) {
    case DType::boolean:
      return range(0, 1);
    case DType::i8:
      return range(-128, 127);
    case DType::u8:
      return range(0, 255);
    case DType::i16:
      return range(-32768, 32767);
    case DType::u16:
      return range(0, 65535);
    case DType::i32:
      return range(std::numeric_limits<std::int32_t>::min(),
                   std::numeric_limits<std::int32_t>::max());
    case DType::u32:
      return range(0, std::numeric_limits<std::uint32_t>::max());
    default:
      return unknown("");
  }
}

bool exact_in_f32(double v) {
  return std::isnan(v) || static_cast<double>(static_cast<float>(v)) == v;
}

Facts constant_facts(const Tensor& t) {
  if (is_floating(t.dtype())) {
    Facts f;
    f.f32_exact = true;
    // f32, f16 and bf16 values are all exact in f32: only f64 constants need the scan.
    if (t.dtype() == DType::f64)
      for (std::int64_t i = 0; i < t.element_count() && f.f32_exact; ++i)
        f.f32_exact = exact_in_f32(t.data<double>()[i]);
    return f;
  }
  if (t.element_count() == 0) return range(0, 0);
  if (t.dtype() == DType::u64) {
    std::uint64_t hi = 0;
    for (std::int64_t i = 0; i < t.element_count(); ++i)
      hi = std::max(hi, t.data<std::uint64_t>()[i]);
    if (hi > static_cast<std::uint64_t>(kI64Max))
      return unknown(fmt::format("it is a constant holding {}", hi));
    return range(0, static_cast<I64>(hi));
  }
  const std::vector<I64> v = t.to_ints();
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return range(*lo, *hi);
}

I64 max_dim(const Shape& s) {
  I64 m = 0;
  for (int d = 0; d < s.rank(); ++d) m = std::max(m, s[d]);
  return m;
}

// a op b over ranges with overflow checks; unknown when a bound overflows int64.
template <typename Op>
Facts combine(const Facts& a, const Facts& b, Op op, const std::string& why) {
  if (!a.known || !b.known) return unknown(!a.why.empty() ? a.why : b.why.empty() ? why : b.why);
  I64 corners[4];
  const I64 xs[2] = {a.lo, a.hi}, ys[2] = {b.lo, b.hi};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      if (op(xs[i], ys[j], &corners[i * 2 + j])) return unknown(why + " (a bound overflows int64)");
  return range(*std::min_element(corners, corners + 4), *std::max_element(corners, corners + 4));
}

// Operands that ops check against a dimension (indices) or clamp to one (Slice's starts and ends):
// for a dimension below 2^31, saturating them to int32 keeps every valid value and every error.
bool bounded_operand(const Node& n, std::size_t input) {
  static const std::set<std::pair<std::string, std::size_t>> kBounded = {
      {"Gather", 1},          {"GatherElements", 1}, {"GatherND", 1},
      {"ScatterElements", 1}, {"Scatter", 1},        {"ScatterND", 1},
      {"Slice", 1},           {"Slice", 2},          {"TopK", 1}};
  return kBounded.count({n.op, input}) != 0;
}

const std::set<std::string>& pass_through_ops() {
  // Outputs hold (a selection of) the elements of input 0.
  static const std::set<std::string> kOps = {
      "Identity",     "Reshape",      "Flatten",   "Squeeze",   "Unsqueeze",      "Transpose",
      "Expand",       "Tile",         "Slice",     "Gather",    "GatherElements", "GatherND",
      "DepthToSpace", "SpaceToDepth", "ReduceMax", "ReduceMin", "Compress",       "ReverseSequence",
      "Dropout",      "Split",        "Trilu"};
  return kOps;
}

std::string type_words(DType t) {
  switch (t) {
    case DType::i64:
      return "int64";
    case DType::u64:
      return "uint64";
    case DType::f64:
      return "double";
    default:
      return std::string(dtype_name(t));
  }
}
std::string narrow_words(DType t) {
  switch (t) {
    case DType::i64:
      return "within int32";
    case DType::u64:
      return "within uint32";
    case DType::f64:
      return "exact in float";
    default:
      return "";
  }
}

// Facts of output `o` of node `n`, from its inputs' facts.
Facts node_facts(const Graph& g, const Node& n, std::size_t o, const std::vector<Facts>& facts) {
  const auto has = [&](std::size_t i) { return i < n.inputs.size() && n.inputs[i] != kNoValue; };
  const auto in = [&](std::size_t i) -> Facts {
    return has(i) ? facts[static_cast<std::size_t>(n.inputs[i])] : unknown("");
  };
  const auto in_shape = [&](std::size_t i) { return g.value(n.inputs[i]).shape; };
  const std::string by = fmt::format("it is computed by {}", n.describe());
  const std::string& op = n.op;
  if (pass_through_ops().count(op)) return in(0);
  if (op == "Concat" || op == "Max" || op == "Min") {
    Facts f = in(0);
    for (std::size_t i = 1; i < n.inputs.size(); ++i) f = hull(f, in(i));
    return f;
  }
  if (op == "Where") return hull(in(1), in(2));
  if (op == "Pad") return has(2) ? hull(in(0), in(2)) : hull(in(0), range(0, 0));
  if (op == "ScatterElements" || op == "Scatter" || op == "ScatterND") return hull(in(0), in(2));
  if (op == "OneHot") return in(2);
  if (op == "Shape") return range(0, max_dim(in_shape(0)));
  if (op == "Size") return range(in_shape(0).element_count(), in_shape(0).element_count());
  if (op == "ArgMax" || op == "ArgMin") return range(0, std::max<I64>(max_dim(in_shape(0)) - 1, 0));
  if ((op == "TopK" && o == 1) || op == "NonZero") return range(0, max_dim(in_shape(0)));
  if (op == "Unique" && o > 0) return range(0, in_shape(0).element_count());
  if (op == "MaxPool" && o == 1) return range(-1, in_shape(0).element_count());
  if (op == "NonMaxSuppression") {
    I64 m = 0;
    for (std::size_t i = 0; i < 2 && has(i); ++i) m = std::max(m, max_dim(in_shape(i)));
    return range(0, m);
  }
  if ((op == "TopK" && o == 0) || (op == "Unique" && o == 0) || (op == "MaxPool" && o == 0))
    return in(0);
  if (op == "ConstantOfShape") {
    const Tensor* v = n.attr_tensor("value");
    return v ? constant_facts(*v) : range(0, 0);
  }
  if (op == "Cast" || op == "CastLike") {
    const DType from = g.value(n.inputs[0]).dtype;
    const DType to = g.value(n.outputs[o]).dtype;
    Facts f = in(0);
    if (is_floating(to)) {
      // An integer below 2^24 in magnitude, and every f32/f16/bf16, is exact in f32.
      f.f32_exact = is_floating(from)
                        ? (from != DType::f64 || f.f32_exact)
                        : f.known && f.lo >= -(I64{1} << 24) && f.hi <= (I64{1} << 24);
      return f;
    }
    if (is_floating(from)) return unknown(by + " from floats");
    return f;
  }
  if (op == "Neg")
    return combine(
        range(0, 0), in(0), [](I64 a, I64 b, I64* r) { return __builtin_sub_overflow(a, b, r); },
        by);
  if (op == "Abs") {
    Facts a = in(0);
    if (!a.known) return a;
    if (a.lo == kI64Min) return unknown(by);
    const I64 m = std::max(std::abs(a.lo), std::abs(a.hi));
    return range(a.lo >= 0 ? a.lo : (a.hi <= 0 ? -a.hi : 0), m);
  }
  if (op == "Add" || op == "Sum")
    return combine(
        in(0), in(1), [](I64 a, I64 b, I64* r) { return __builtin_add_overflow(a, b, r); }, by);
  if (op == "Sub")
    return combine(
        in(0), in(1), [](I64 a, I64 b, I64* r) { return __builtin_sub_overflow(a, b, r); }, by);
  if (op == "Mul")
    return combine(
        in(0), in(1), [](I64 a, I64 b, I64* r) { return __builtin_mul_overflow(a, b, r); }, by);
  if (op == "Div" && !is_floating(g.value(n.outputs[o]).dtype)) {
    // |a / b| <= |a| for integer division by a nonzero b.
    const Facts a = in(0);
    if (!a.known || a.lo == kI64Min) return unknown(by);
    const I64 m = std::max(std::abs(a.lo), std::abs(a.hi));
    return range(-m, m);
  }
  if (op == "Mod" && !is_floating(g.value(n.outputs[o]).dtype)) {
    const Facts b = in(1);
    if (!b.known || b.lo == kI64Min) return unknown(by);
    const I64 m = std::max(std::abs(b.lo), std::abs(b.hi));
    return range(-m, m);
  }
  if (op == "Range") return hull(in(0), in(1));
  if (op == "ReduceSum" || op == "CumSum") {
    // At most element_count terms, each within the input's range.
    const I64 terms = in_shape(0).element_count();
    return combine(
        in(0), range(0, terms),
        [](I64 a, I64 b, I64* r) { return __builtin_mul_overflow(a, b, r); }, by);
  }
  return unknown(by + ", whose result range Tessera does not bound");
}

}  // namespace

Narrowing analyse_64bit(const Graph& g) {
  const std::size_t count = g.values.size();
  std::vector<Facts> facts(count);
  for (std::size_t v = 0; v < count; ++v) {
    const Value& value = g.values[v];
    if (value.constant)
      facts[v] = constant_facts(*value.constant);
    else if (value.narrowed_from)  // narrowed before (a loaded model file): its 32-bit type
      facts[v] = dtype_range(value.dtype);
    else if (!is_64bit(value.dtype))
      facts[v] = value.dtype == DType::f32 || value.dtype == DType::f16 ||
                         value.dtype == DType::bf16
                     ? [] { Facts f; f.f32_exact = true; return f; }()
                     : dtype_range(value.dtype);
    else
      facts[v] = unknown("it is a graph input, whose values are known only at run time");
  }
  for (const Node& n : g.nodes)
    for (std::size_t o = 0; o < n.outputs.size(); ++o) {
      const ValueId out = n.outputs[o];
      if (out == kNoValue || g.value(out).constant) continue;
      if (!is_64bit(g.value(out).dtype)) continue;
      facts[static_cast<std::size_t>(out)] = node_facts(g, n, o, facts);
    }

  // Graph inputs and constants read only as bounded operands (and not returned) fit by
  // saturation. A computed one does not: a device computing it in 32 bits could wrap an
  // out-of-range result into a valid index.
  std::vector<bool> only_bounded(count, true);
  for (ValueId v : g.outputs) only_bounded[static_cast<std::size_t>(v)] = false;
  for (const Node& n : g.nodes)
    for (ValueId v : n.outputs)
      if (v != kNoValue && !g.value(v).constant) only_bounded[static_cast<std::size_t>(v)] = false;
  for (const Node& n : g.nodes)
    for (std::size_t i = 0; i < n.inputs.size(); ++i)
      if (n.inputs[i] != kNoValue && !bounded_operand(n, i))
        only_bounded[static_cast<std::size_t>(n.inputs[i])] = false;

  Narrowing result;
  result.fits.assign(count, false);
  result.reason.assign(count, std::string());
  for (std::size_t v = 0; v < count; ++v) {
    const Value& value = g.values[v];
    if (!is_64bit(value.dtype)) continue;
    const Facts& f = facts[v];
    bool fits;
    if (value.dtype == DType::f64) {
      fits = f.f32_exact;
    } else {
      const Facts limit = dtype_range(narrowed_dtype(value.dtype));
      fits = f.known && f.lo >= limit.lo && f.hi <= limit.hi;
      fits = fits || only_bounded[v];
    }
    result.fits[v] = fits;
    if (fits) continue;
    std::string why = f.why;
    if (why.empty() && f.known) why = fmt::format("its values may reach [{}, {}]", f.lo, f.hi);
    if (why.empty()) why = "its values are not known to be exact in float";
    result.reason[v] = fmt::format("{} value '{}' is not provably {}: {}", type_words(value.dtype),
                                   value.name, narrow_words(value.dtype), why);
  }
  return result;
}

int narrow_64bit_values(Graph& g) {
  const Narrowing n = analyse_64bit(g);
  int narrowed = 0;
  for (std::size_t v = 0; v < g.values.size(); ++v) {
    Value& value = g.values[v];
    if (!is_64bit(value.dtype) || !n.fits[v]) continue;
    value.narrowed_from = value.dtype;
    value.dtype = narrowed_dtype(value.dtype);
    if (value.constant) value.constant = value.constant->astype(value.dtype);  // saturates
    ++narrowed;
  }
  return narrowed;
}

std::optional<std::string> wide_value_reason(const Graph& g, const Node& node,
                                             const Narrowing& narrowing) {
  for (const auto& list : {node.inputs, node.outputs})
    for (ValueId v : list) {
      if (v == kNoValue || !is_64bit(g.value(v).dtype)) continue;
      const std::string& why = narrowing.reason.at(static_cast<std::size_t>(v));
      return why.empty() ? fmt::format("{} value '{}' has no 32-bit form on the target",
                                       type_words(g.value(v).dtype), g.value(v).name)
                         : why;
    }
  return std::nullopt;
}

}  // namespace tessera::compiler
