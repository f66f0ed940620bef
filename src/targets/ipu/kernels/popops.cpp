// popops' element-wise API, casts, fills, scaled adds and counted loops, and poputil's mappings,
// broadcasting and copies. Each builds compute sets of the built-in codelets or programs.
#include <algorithm>
#include <ostream>

#include <popops/Cast.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Fill.hpp>
#include <popops/Loop.hpp>
#include <popops/ScaledAdd.hpp>
#include <popops/Zero.hpp>
#include <popops/codelets.hpp>
#include <poputil/Broadcast.hpp>
#include <poputil/TileMapping.hpp>
#include <poputil/Util.hpp>

#include "elementwise.h"

namespace tessera::ipu::poplibs {
void register_popops_codelets(Graph& graph);  // every popops codelet family (reduce.cpp, ...)
}

namespace popops {

using namespace tessera::ipu::poplibs;
using poplar::Tensor;
using poplar::program::Sequence;

// ---- expressions: printing ----
namespace expr {
std::ostream& operator<<(std::ostream& os, const Expr& e) {
  e.print(os);
  return os;
}
void Const::print(std::ostream& os, unsigned, bool) const {
  os << value;
}
void Cast::print(std::ostream& os, unsigned, bool) const {
  os << "Cast(" << *a_ << ", " << bType.toString() << ")";
}
void PlaceHolder::print(std::ostream& os, unsigned, bool) const {
  os << "_" << index;
}
void UnaryOp::print(std::ostream& os, unsigned, bool) const {
  os << "Unary" << unsigned(type) << "(" << *a_ << ")";
}
void BinaryOp::print(std::ostream& os, unsigned, bool) const {
  os << "Binary" << unsigned(type) << "(" << *a_ << ", " << *b_ << ")";
}
void TernaryOp::print(std::ostream& os, unsigned, bool) const {
  os << (type == TernaryOpType::SELECT ? "Select(" : "Clamp(") << *a_ << ", " << *b_ << ", "
     << *c_ << ")";
}
}  // namespace expr

void addCodelets(poplar::Graph& graph) {
  register_popops_codelets(graph);
}

Tensor map(poplar::Graph& graph, const expr::Expr& e, const std::vector<Tensor>& ts,
           Sequence& prog, const poplar::DebugContext& dc, const poplar::OptionFlags&) {
  return run_expr(graph, e, ts, nullptr, false, prog, dc);
}

void mapInPlace(poplar::Graph& graph, const expr::Expr& e, const std::vector<Tensor>& ts,
                Sequence& prog, const poplar::DebugContext& dc, const poplar::OptionFlags&) {
  if (ts.empty()) throw poputil::poplibs_error("popops::mapInPlace needs the tensor to write");
  run_expr(graph, e, ts, nullptr, true, prog, dc);
}

void mapWithOutput(poplar::Graph& graph, const expr::Expr& e, const std::vector<Tensor>& ts,
                   const Tensor& out, Sequence& prog, const poplar::DebugContext& dc,
                   const poplar::OptionFlags&) {
  run_expr(graph, e, ts, &out, false, prog, dc);
}

// ---- casts, fills, scaled adds ----
Tensor cast(poplar::Graph& graph, const Tensor& src, const poplar::Type& dstType, Sequence& prog,
            const poplar::DebugContext& dc) {
  Tensor out = graph.addVariable(dstType, src.shape(), poplar::DebugContext(dc, "cast"));
  if (src.containsAliases())
    poputil::mapTensorLinearly(graph, out);
  else
    graph.setTileMapping(out, graph.getTileMapping(src));
  prog.add(cast(graph, src, out, dc));
  return out;
}

void cast(poplar::Graph& graph, const Tensor& src, const Tensor& dst, poplar::ComputeSet cs) {
  require_codelets(graph, "popops", "popops::MapExpr");
  if (src.numElements() != dst.numElements())
    throw poputil::poplibs_error(
        fmt::format("popops::cast: source has {} elements, destination {}; they must match",
                    src.numElements(), dst.numElements()));
  ElementProgram p = compile_expr(expr::Cast(expr::_1, dst.elementType()), {src.elementType()});
  add_elementwise_vertices(graph, cs, p, {src}, dst, false,
                           templated("popops::Cast2D", {type_arg(src.elementType()),
                                                        type_arg(dst.elementType())}));
}

poplar::program::Program cast(poplar::Graph& graph, const Tensor& src, const Tensor& dst,
                              const poplar::DebugContext& dc) {
  auto cs = graph.addComputeSet(name_of(dc, "cast"));
  cast(graph, src, dst, cs);
  return poplar::program::Execute(cs, dc);
}

namespace {
// fill and zero: `vertex` writes `value` to every element of t.
void fill_with(poplar::Graph& graph, const Tensor& t, double value, Sequence& prog,
               const poplar::DebugContext& dc, const char* what, const char* vertex) {
  require_codelets(graph, "popops", "popops::MapExpr");
  ElementProgram p = compile_expr(expr::Const(value, t.elementType()), {});
  p.out_type = t.elementType();
  p.code[2] = t.elementType().tesseraId();
  auto cs = graph.addComputeSet(name_of(dc, what));
  add_elementwise_vertices(graph, cs, p, {}, t, false,
                           templated(vertex, {type_arg(t.elementType())}));
  prog.add(poplar::program::Execute(cs, dc));
}
}  // namespace

void fill(poplar::Graph& graph, const Tensor& t, double value, Sequence& prog,
          const poplar::DebugContext& dc) {
  fill_with(graph, t, value, prog, dc, "fill", "popops::Fill2D");
}

void zero(poplar::Graph& graph, const Tensor& t, Sequence& prog, const poplar::DebugContext& dc) {
  fill_with(graph, t, 0.0, prog, dc, "zero", "popops::Zero2D");
}

namespace {
void scaled(poplar::Graph& graph, const Tensor& A, const expr::Expr& e,
            const std::vector<Tensor>& ts, Sequence& prog, const poplar::DebugContext& dc,
            const char* what) {
  if (A.shape() != ts.at(1).shape())
    throw poputil::poplibs_error(fmt::format("popops::{}: A is {{{}}} and B {{{}}}; they must match",
                                             what, fmt::join(A.shape(), ","),
                                             fmt::join(ts.at(1).shape(), ",")));
  std::vector<Tensor> in = ts;
  // B (and a scale tensor) in A's type, as PopLibs' ScaledAdd2D<A's type> reads them.
  for (std::size_t i = 1; i < in.size(); ++i)
    if (in[i].elementType() != A.elementType()) in[i] = cast(graph, in[i], A.elementType(), prog, dc);
  run_expr(graph, e, in, nullptr, true, prog, dc,
           templated(std::string("popops::") + (what[6] == 'S' ? "ScaledSubtract2D" : "ScaledAdd2D"),
                     {type_arg(A.elementType())}));
}
}  // namespace

void scaledAddTo(poplar::Graph& graph, Tensor A, Tensor B, float scaleB, Sequence& prog,
                 const poplar::DebugContext& dc, const poplar::OptionFlags&) {
  using namespace expr;
  scaled(graph, A, Add(_1, Mul(_2, Const(double(scaleB), A.elementType()))), {A, B}, prog, dc,
         "scaledAddTo");
}
void scaledAddTo(poplar::Graph& graph, Tensor A, Tensor B, Tensor scaleB, Sequence& prog,
                 const poplar::DebugContext& dc, const poplar::OptionFlags&) {
  using namespace expr;
  if (scaleB.numElements() != 1)
    throw poputil::poplibs_error("popops::scaledAddTo: scaleB must be a single-element tensor");
  scaled(graph, A, Add(_1, Mul(_2, _3)), {A, B, scaleB.reshape({})}, prog, dc, "scaledAddTo");
}
void scaledAddTo(poplar::Graph& graph, Tensor A, float scaleA, Tensor B, float scaleB,
                 Sequence& prog, const poplar::DebugContext& dc, const poplar::OptionFlags&) {
  using namespace expr;
  scaled(graph, A,
         Add(Mul(_1, Const(double(scaleA), A.elementType())),
             Mul(_2, Const(double(scaleB), A.elementType()))),
         {A, B}, prog, dc, "scaledAddTo");
}
void scaledSubtractFrom(poplar::Graph& graph, Tensor A, Tensor B, float scaleB, Sequence& prog,
                        const poplar::DebugContext& dc, const poplar::OptionFlags&) {
  using namespace expr;
  scaled(graph, A, Sub(_1, Mul(_2, Const(double(scaleB), A.elementType()))), {A, B}, prog, dc,
         "scaledSubtractFrom");
}

namespace {
Tensor single_element(const Tensor& t, const char* fn, const char* name) {
  if (t.numElements() != 1)
    throw poputil::poplibs_error(fmt::format("popops::{}: {} must be a single-element tensor; it "
                                             "is {{{}}}",
                                             fn, name, fmt::join(t.shape(), ",")));
  return t.reshape({});
}
}  // namespace

void scaledAddTo(poplar::Graph& graph, Tensor A, Tensor scaleA, Tensor B, Tensor scaleB,
                 Sequence& prog, const poplar::DebugContext& dc, const poplar::OptionFlags&) {
  using namespace expr;
  scaled(graph, A, Add(Mul(_1, _3), Mul(_2, _4)),
         {A, B, single_element(scaleA, "scaledAddTo", "scaleA"),
          single_element(scaleB, "scaledAddTo", "scaleB")},
         prog, dc, "scaledAddTo");
}
void scaledSubtractFrom(poplar::Graph& graph, Tensor A, Tensor B, Tensor scaleB, Sequence& prog,
                        const poplar::DebugContext& dc, const poplar::OptionFlags&) {
  using namespace expr;
  scaled(graph, A, Sub(_1, Mul(_2, _3)),
         {A, B, single_element(scaleB, "scaledSubtractFrom", "scaleB")}, prog, dc,
         "scaledSubtractFrom");
}
void scaledSubtractFrom(poplar::Graph& graph, Tensor A, float scaleA, Tensor B, float scaleB,
                        Sequence& prog, const poplar::DebugContext& dc,
                        const poplar::OptionFlags&) {
  using namespace expr;
  scaled(graph, A,
         Sub(Mul(_1, Const(double(scaleA), A.elementType())),
             Mul(_2, Const(double(scaleB), A.elementType()))),
         {A, B}, prog, dc, "scaledSubtractFrom");
}

// ---- counted loops ----
namespace {
// A counter of `type` on tile 0 set to `first` (named `first_name`), then `count` times
// body(counter) and counter += step.
template <typename V>
Sequence repeat_counted(poplar::Graph& graph, const poplar::Type& type, V first, V step,
                        unsigned count, const CountedLoopBodyType& body,
                        const poplar::DebugContext& dc, const char* first_name) {
  Sequence seq(dc);
  Tensor i = graph.addVariable(type, {1}, poplar::DebugContext(dc, "counter"));
  graph.setTileMapping(i, 0);
  Tensor init = graph.addConstant(type, {1}, first, poplar::DebugContext(dc, first_name));
  graph.setTileMapping(init, 0);
  seq.add(poplar::program::Copy(init, i));
  Sequence loop;
  loop.add(body(i));
  addInPlace(graph, i, step, loop, poplar::DebugContext(dc, "increment"));
  seq.add(poplar::program::Repeat(count, loop, dc));
  return seq;
}
}  // namespace

Sequence countedLoop(poplar::Graph& graph, std::size_t begin, std::size_t end, std::size_t step,
                     const CountedLoopBodyType& body, const poplar::DebugContext& dc) {
  if (step == 0 || end < begin || (end - begin) % step != 0)
    throw poputil::poplibs_error(
        fmt::format("popops::countedLoop({}, {}, {}): step must be positive and divide end - begin",
                    begin, end, step));
  return repeat_counted(graph, poplar::UNSIGNED_INT, unsigned(begin), unsigned(step),
                        unsigned((end - begin) / step), body, dc, "begin");
}

Sequence countedLoop(poplar::Graph& graph, std::size_t count, const CountedLoopBodyType& body,
                     const poplar::DebugContext& dc) {
  return countedLoop(graph, 0, count, 1, body, dc);
}

Sequence countedForLoop(poplar::Graph& graph, const Tensor& index, int initialCount,
                        const Tensor& countLimit, int countStep,
                        const poplar::program::Program& body, const poplar::DebugContext& dc) {
  if (countStep == 0) throw poputil::poplibs_error("popops::countedForLoop: countStep is 0");
  if (index.numElements() != 1 || countLimit.numElements() != 1)
    throw poputil::poplibs_error(
        "popops::countedForLoop: index and countLimit must be single-element tensors");
  Sequence seq(dc);
  Tensor init = graph.addConstant(index.elementType(), {1}, initialCount,
                                  poplar::DebugContext(dc, "initialCount"));
  graph.setTileMapping(init, 0);
  seq.add(poplar::program::Copy(init, index.reshape({1})));
  Sequence cond;
  Tensor pred =
      countStep > 0
          ? lt(graph, index.reshape({1}), countLimit.reshape({1}), cond, {dc, "condition"})
          : gt(graph, index.reshape({1}), countLimit.reshape({1}), cond, {dc, "condition"});
  Sequence step;
  step.add(body);
  addInPlace(graph, index.reshape({1}), countStep, step, poplar::DebugContext(dc, "increment"));
  seq.add(poplar::program::RepeatWhileTrue(cond, pred, step, dc));
  return seq;
}

Sequence countedForLoop(poplar::Graph& graph, int initialCount, int countLimit, int countStep,
                        const CountedLoopBodyType& body, const poplar::DebugContext& dc) {
  if (countStep == 0 || (countLimit - initialCount) % countStep != 0 ||
      (countLimit - initialCount) / countStep < 0)
    throw poputil::poplibs_error(fmt::format(
        "popops::countedForLoop({}, {}, {}): the step must reach the limit exactly", initialCount,
        countLimit, countStep));
  return repeat_counted(graph, poplar::INT, initialCount, countStep,
                        unsigned((countLimit - initialCount) / countStep), body, dc, "init");
}

}  // namespace popops

namespace poputil {

using poplar::Tensor;

std::vector<std::vector<poplar::Interval>> calcLinearTileMapping(const poplar::Graph& graph,
                                                                 std::vector<std::size_t> shape,
                                                                 unsigned minElementsPerTile,
                                                                 unsigned grainSize,
                                                                 unsigned offset,
                                                                 bool ascendingOrder) {
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  std::size_t tiles = graph.getTarget().getNumTiles();
  std::size_t grain = std::max(1u, grainSize);
  std::size_t grains = (n + grain - 1) / grain;
  std::size_t min_grains = (std::max<std::size_t>(1, minElementsPerTile) + grain - 1) / grain;
  std::size_t per = std::max((grains + tiles - 1) / tiles, min_grains);
  std::vector<std::vector<poplar::Interval>> m(tiles);
  for (std::size_t g = 0, k = 0; g < grains; g += per, ++k)
    m[invTransformTileIndex(unsigned(k), unsigned(tiles), offset, ascendingOrder)].push_back(
        {g * grain, std::min(n, (g + per) * grain)});
  return m;
}

namespace {
// Grains of the atomic store size, so no two tiles write one 32-bit word.
unsigned linear_grain(const poplar::Graph& graph, const Tensor& t) {
  return std::max(1u, graph.getTarget().getAtomicStoreGranularity() /
                          std::max(1u, t.elementType().tesseraSize()));
}
}  // namespace

std::vector<std::vector<poplar::Interval>> calcLinearTileMapping(const poplar::Graph& graph,
                                                                 const Tensor& t, unsigned offset,
                                                                 bool ascendingOrder) {
  return calcLinearTileMapping(graph, t.shape(), 128, linear_grain(graph, t), offset,
                               ascendingOrder);
}

void mapTensorLinearly(poplar::Graph& graph, const Tensor& t, unsigned minElementsPerTile,
                       unsigned grainSize) {
  graph.setTileMapping(t, calcLinearTileMapping(graph, t.shape(), minElementsPerTile, grainSize));
}

void mapTensorLinearly(poplar::Graph& graph, const Tensor& t) {
  graph.setTileMapping(t, calcLinearTileMapping(graph, t));
}

void mapTensorLinearlyWithOffset(poplar::Graph& graph, const Tensor& t,
                                 unsigned minElementsPerTile, unsigned grainSize, unsigned offset,
                                 bool ascendingOrder) {
  graph.setTileMapping(t, calcLinearTileMapping(graph, t.shape(), minElementsPerTile, grainSize,
                                                offset, ascendingOrder));
}

void mapTensorLinearlyWithOffset(poplar::Graph& graph, const Tensor& t, unsigned offset,
                                 bool ascendingOrder) {
  graph.setTileMapping(t, calcLinearTileMapping(graph, t, offset, ascendingOrder));
}

namespace {
// The tile a mapping order (offset, direction) uses first; `index` checked against the tiles.
unsigned first_tile(const char* fn, unsigned index, unsigned numTiles, unsigned offset,
                    bool ascending) {
  if (numTiles == 0 || index >= numTiles)
    throw poplibs_error(
        fmt::format("{}: tile or index {} of a target with {} tiles", fn, index, numTiles));
  offset %= numTiles;
  return ascending ? offset : numTiles - 1 - offset;
}
}  // namespace

unsigned transformTileIndex(unsigned tile, unsigned numTiles, unsigned offset, bool ascending) {
  unsigned first = first_tile("transformTileIndex", tile, numTiles, offset, ascending);
  return ascending ? (tile + numTiles - first) % numTiles : (first + numTiles - tile) % numTiles;
}

unsigned invTransformTileIndex(unsigned tile, unsigned numTiles, unsigned offset, bool ascending) {
  unsigned first = first_tile("invTransformTileIndex", tile, numTiles, offset, ascending);
  return ascending ? (first + tile) % numTiles : (first + numTiles - tile) % numTiles;
}

unsigned getTileImbalance(const poplar::Graph::TileToTensorMapping& mapping,
                          unsigned minElementsPerTile, unsigned grainSize) {
  std::size_t most = 0, total = 0;
  for (const auto& regions : mapping) {
    std::size_t n = 0;
    for (const auto& iv : regions) n += iv.size();
    most = std::max(most, n);
    total += n;
  }
  if (mapping.empty()) return 0;
  // What a balanced mapping would put on each tile: whole grains, at least the minimum.
  std::size_t grain = std::max(1u, grainSize);
  std::size_t balanced = (total + mapping.size() - 1) / mapping.size();
  balanced = (balanced + grain - 1) / grain * grain;
  balanced = std::max<std::size_t>(balanced, minElementsPerTile);
  return most > balanced ? static_cast<unsigned>(most - balanced) : 0u;
}

unsigned getTileImbalance(const poplar::Graph& graph, const Tensor& t,
                          unsigned minElementsPerTile, unsigned grainSize) {
  return getTileImbalance(graph.getTileMapping(t), minElementsPerTile, grainSize);
}

bool dimIsSplitOverTiles(const poplar::Graph& graph, const Tensor& t, unsigned dimension) {
  if (dimension >= t.rank())
    throw poplibs_error(fmt::format("dimIsSplitOverTiles: dimension {} of a rank-{} tensor",
                                    dimension, t.rank()));
  // Split when two elements that differ only in `dimension` sit on different tiles.
  Tensor moved = t.dimRoll(dimension, t.rank() - 1);
  std::size_t len = t.dim(dimension);
  if (len < 2) return false;
  Tensor rows = moved.reshape({t.numElements() / len, len});
  for (std::size_t r = 0; r < rows.dim(0); ++r) {
    auto m = graph.getTileMapping(rows[r]);
    unsigned used = 0;
    for (const auto& regions : m) used += regions.empty() ? 0 : 1;
    if (used > 1) return true;
  }
  return false;
}

void broadcastToMatch(Tensor& a, const std::vector<std::size_t>& shape) {
  auto s = a.shape();
  if (s.size() > shape.size())
    throw poplibs_error(fmt::format("broadcastToMatch: tensor {{{}}} has more dimensions than {{{}}}",
                                    fmt::join(s, ","), fmt::join(shape, ",")));
  if (s.size() < shape.size()) {
    std::vector<std::size_t> idx(shape.size() - s.size(), 0);
    a = a.expand(idx);
  }
  for (unsigned d = 0; d < shape.size(); ++d) {
    if (a.dim(d) == shape[d]) continue;
    if (a.dim(d) != 1)
      throw poplibs_error(fmt::format(
          "broadcastToMatch: dimension {} of {{{}}} is {}, which cannot broadcast to {}", d,
          fmt::join(s, ","), a.dim(d), shape[d]));
    a = a.broadcast(unsigned(shape[d]), d);
  }
}

void broadcastToMatch(Tensor& a, Tensor& b) {
  auto sa = a.shape(), sb = b.shape();
  std::size_t r = std::max(sa.size(), sb.size());
  sa.insert(sa.begin(), r - sa.size(), 1);
  sb.insert(sb.begin(), r - sb.size(), 1);
  std::vector<std::size_t> s(r);
  for (std::size_t i = 0; i < r; ++i) s[i] = std::max(sa[i], sb[i]);
  broadcastToMatch(a, s);
  broadcastToMatch(b, s);
}

void broadcastToMatch(Tensor& a, Tensor& b, Tensor& c) {
  broadcastToMatch(a, b);
  broadcastToMatch(a, c);
  broadcastToMatch(b, c);
}

Tensor duplicate(poplar::Graph& graph, const Tensor& t, poplar::program::Sequence& prog,
                 const poplar::DebugContext& dc) {
  Tensor out = graph.addVariable(t.elementType(), t.shape(), dc);
  graph.setTileMapping(out, graph.getTileMapping(t));
  prog.add(poplar::program::Copy(t, out, false, dc));
  return out;
}

Tensor cloneN(poplar::Graph& graph, const Tensor& t, unsigned N, const poplar::DebugContext& dc) {
  std::vector<Tensor> parts;
  auto mapping = graph.getTileMapping(t);
  for (unsigned i = 0; i < N; ++i) {
    Tensor c = graph.addVariable(t.elementType(), t.shape(), poplar::DebugContext(dc, std::to_string(i)));
    graph.setTileMapping(c, mapping);
    parts.push_back(c.expand({0}));
  }
  return poplar::concat(parts, 0);
}

}  // namespace poputil
