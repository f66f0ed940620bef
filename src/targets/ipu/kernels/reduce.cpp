// popops reductions: the input viewed as [outputs, partials]; the Reduce codelet combines each
// output's partial rows on the output's tile. Long reductions to few outputs take two stages:
// first on the tiles holding the partials (one partial result per chunk), then on the output's.
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <bit>
#include <set>
#include <type_traits>

#include <popops/ElementWise.hpp>
#include <popops/Cast.hpp>
#include <popops/Fill.hpp>
#include <popops/Reduce.hpp>
#include <poputil/TileMapping.hpp>

#include "elementwise.h"

namespace tessera::ipu::poplibs {

using popops::Operation;

namespace {

double identity(Operation op) {
  switch (op) {
    case Operation::MUL:
    case Operation::LOGICAL_AND: return 1;
    case Operation::MIN: return std::numeric_limits<double>::infinity();
    case Operation::MAX:
    case Operation::LOG_ADD: return -std::numeric_limits<double>::infinity();
    default: return 0;
  }
}

double combine(Operation op, double acc, double x) {
  switch (op) {
    case Operation::ADD: return acc + x;
    case Operation::SQUARE_ADD: return acc + x * x;
    case Operation::MUL: return acc * x;
    case Operation::MIN: return std::min(acc, x);
    case Operation::MAX: return std::max(acc, x);
    case Operation::LOGICAL_AND: return (acc != 0 && x != 0) ? 1 : 0;
    case Operation::LOGICAL_OR: return (acc != 0 || x != 0) ? 1 : 0;
    case Operation::LOG_ADD: {
      double m = std::max(acc, x);
      if (std::isinf(m) && m < 0) return m;
      return m + std::log(std::exp(acc - m) + std::exp(x - m));
    }
  }
  return acc;
}

}  // namespace

// params: op, in type, out type, partial rows per output, update, scale (float bits). The
// output is read (InOut) only by the updating form.
template <bool Update>
class ReduceVertex : public poplar::MultiVertex {
 public:
  poplar::Input<poplar::VectorList<Byte>> partials;
  std::conditional_t<Update, poplar::InOut<poplar::VectorList<Byte>>,
                     poplar::Output<poplar::VectorList<Byte>>>
      out;
  poplar::Vector<unsigned> params;

  bool compute(unsigned w) {
    auto op = static_cast<Operation>(params[0]);
    unsigned in_type = params[1], out_type = params[2], per = params[3];
    bool update = params[4] != 0;
    float scale = std::bit_cast<float>(params[5]);
    std::size_t j = 0;
    std::vector<double> buf;
    for (std::size_t r = 0; r < out.size(); ++r) {
      auto* o = reinterpret_cast<unsigned char*>(out[r].data());
      for (std::size_t i = 0; i < out[r].size(); ++i, ++j) {
        if (j % numWorkers() != w) continue;
        double acc = identity(op);
        for (unsigned p = 0; p < per; ++p) {
          const auto& row = partials[j * per + p];
          buf.resize(row.size());
          load_elements(row.data(), in_type, row.size(), buf.data());
          for (double x : buf) acc = combine(op, acc, x);
        }
        acc *= scale;
        unsigned char* dst = o + i * type_bytes(out_type);
        if (Update && update) {
          double old;
          load_elements(dst, out_type, 1, &old);
          acc = combine(op == Operation::SQUARE_ADD ? Operation::ADD : op, old, acc);
        }
        store_elements(dst, out_type, 1, &acc);
      }
    }
    return true;
  }
};

// A running sum along each row.
class CumSumVertex : public poplar::Vertex {
 public:
  poplar::InOut<poplar::VectorList<Byte>> rows;
  poplar::Vector<unsigned> params;  // type

  bool compute() {
    unsigned type = params[0];
    std::vector<double> buf;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      buf.resize(rows[r].size());
      load_elements(rows[r].data(), type, buf.size(), buf.data());
      double acc = 0;
      for (double& x : buf) x = round_to_type(type, acc += x);
      store_elements(rows[r].data(), type, buf.size(), buf.data());
    }
    return true;
  }
};

namespace {

using ReduceOut = ReduceVertex<false>;
using ReduceUpdate = ReduceVertex<true>;
const abi::FieldDesc kReduceFields[] = {TESSERA_IPU_FIELD(ReduceOut, partials),
                                        TESSERA_IPU_FIELD(ReduceOut, out),
                                        TESSERA_IPU_FIELD(ReduceOut, params)};
const abi::FieldDesc kReduceUpdateFields[] = {TESSERA_IPU_FIELD(ReduceUpdate, partials),
                                              TESSERA_IPU_FIELD(ReduceUpdate, out),
                                              TESSERA_IPU_FIELD(ReduceUpdate, params)};
const abi::FieldDesc kCumSumFields[] = {TESSERA_IPU_FIELD(CumSumVertex, rows),
                                        TESSERA_IPU_FIELD(CumSumVertex, params)};
const char* const kNone[] = {nullptr};

const char* op_name(Operation op) {
  static const char* names[] = {"ReduceAdd", "ReduceMul", "ReduceMin", "ReduceMax",
                                "ReduceAnd", "ReduceOr", "ReduceSquareAdd", "ReduceLogAdd"};
  return names[unsigned(op)];
}

const abi::VertexTypeDesc& reduce_desc(bool update) {
  static const abi::VertexTypeDesc plain =
      poplar::detail::describe_vertex<ReduceOut>("popops::Reduce", kReduceFields, 3, kNone);
  static const abi::VertexTypeDesc updating = poplar::detail::describe_vertex<ReduceUpdate>(
      "popops::ReduceUpdate", kReduceUpdateFields, 3, kNone);
  return update ? updating : plain;
}

std::string reduce_vertex(Graph& graph, Operation op, Type in, Type out, bool update = false) {
  std::string name = templated(update ? "popops::ReduceUpdate" : "popops::Reduce",
                               {std::string("popops::") + op_name(op), type_arg(in), type_arg(out)});
  const abi::VertexTypeDesc& desc = reduce_desc(update);
  unsigned in_type = in.tesseraId();
  bool costly = op == Operation::LOG_ADD;
  // Per worker: its share of the outputs, each a loop over its partials in 64-bit vectors
  // (PopLibs' reduction estimates likewise charge per output plus per partial vector); LOG_ADD
  // costs an exponential per element. Overheads are estimates.
  register_codelet(graph, name, desc,
                   [in_type, costly](const poplar::VertexIntrospector& v, const poplar::Target& t) {
                     unsigned workers = t.getNumWorkerContexts();
                     std::uint64_t outs = v.getFieldInfo("out").totalElements();
                     std::uint64_t parts = v.getFieldInfo("partials").totalElements();
                     std::uint64_t width =
                         std::max(1u, t.getVectorWidth(Type(static_cast<std::uint8_t>(in_type))));
                     std::uint64_t per_w = (parts + workers - 1) / workers;
                     std::uint64_t cycles = 30 + (outs + workers - 1) / workers * 6 +
                                            (per_w + width - 1) / width;
                     if (costly) cycles += per_w * 20;
                     return poplar::VertexPerfEstimate(cycles);
                   });
  return name;
}

Type partials_type(Type in) {
  return in == poplar::HALF ? poplar::FLOAT : in;
}

// One stage: out[o] = op over rows[o] (each a 1-D tensor of partials), on out's tiles.
void reduce_stage(Graph& graph, poplar::ComputeSet cs, const Tensor& rows2d, const Tensor& out,
                  Operation op, bool update, float scale) {
  std::string vertex = reduce_vertex(graph, op, rows2d.elementType(), out.elementType(), update);
  Tensor flat = out.flatten();
  auto mapping = graph.getTileMapping(flat);
  for (unsigned tile = 0; tile < mapping.size(); ++tile) {
    if (mapping[tile].empty()) continue;
    std::vector<Tensor> outs, parts;
    for (const auto& iv : mapping[tile]) {
      outs.push_back(flat.slice(iv.begin(), iv.end()));
      for (std::size_t o = iv.begin(); o < iv.end(); ++o) parts.push_back(rows2d[o]);
    }
    auto v = graph.addVertex(cs, vertex);
    graph.connect(v["out"], poplar::ArrayRef<Tensor>(outs));
    graph.connect(v["partials"], poplar::ArrayRef<Tensor>(parts));
    set_state(graph, v, "params",
              {unsigned(op), rows2d.elementType().tesseraId(), out.elementType().tesseraId(), 1u,
               update ? 1u : 0u, std::bit_cast<unsigned>(scale)});
    graph.setTileMapping(v, tile);
  }
}

// The tile holding element `i` of flattened tensor t.
unsigned tile_of(const Graph& graph, const Tensor& t) {
  auto m = graph.getTileMapping(t, false);
  for (unsigned tile = 0; tile < m.size(); ++tile)
    if (!m[tile].empty()) return tile;
  return 0;
}

struct Prepared {
  Tensor rows;  // [outputs, partials]
  std::vector<std::size_t> out_shape;
};

Prepared prepare(const Tensor& in, const std::vector<std::size_t>& dims) {
  std::set<std::size_t> rd(dims.begin(), dims.end());
  for (auto d : dims)
    if (d >= in.rank())
      throw poputil::poplibs_error(fmt::format(
          "popops::reduce: dimension {} is not one of the input's {} dimensions ({{{}}})", d,
          in.rank(), fmt::join(in.shape(), ",")));
  std::vector<unsigned> perm;
  Prepared p;
  std::size_t outs = 1, parts = 1;
  for (unsigned d = 0; d < in.rank(); ++d)
    if (!rd.count(d)) perm.push_back(d), p.out_shape.push_back(in.dim(d)), outs *= in.dim(d);
  for (unsigned d = 0; d < in.rank(); ++d)
    if (rd.count(d)) perm.push_back(d), parts *= in.dim(d);
  p.rows = in.dimShuffle(perm).reshape({outs, parts});
  return p;
}

void reduce_into(Graph& graph, const Tensor& in, const Tensor& out,
                 const std::vector<std::size_t>& dims, popops::ReduceParams params,
                 poplar::program::Sequence& prog, const poplar::DebugContext& dc) {
  require_codelets(graph, "popops", "popops::MapExpr");
  Prepared p = prepare(in, dims);
  if (out.numElements() != p.rows.dim(0))
    throw poputil::poplibs_error(fmt::format(
        "popops::reduceWithOutput: reducing {{{}}} over dimensions {{{}}} gives {} elements but "
        "the output has {}",
        fmt::join(in.shape(), ","), fmt::join(dims, ","), p.rows.dim(0), out.numElements()));
  Operation op = params.op;
  bool scale_tensor = params.useScale && params.scaleImpl.valid();
  float scale = params.useScale && !scale_tensor ? params.constantScale : 1.0f;
  Tensor target = out;
  bool update = params.update;
  if (scale_tensor) {
    target = graph.addVariable(out.elementType(), out.shape(), {dc, "unscaled"});
    graph.setTileMapping(target, graph.getTileMapping(out));
    update = false;
  }
  std::size_t outputs = p.rows.dim(0), parts = p.rows.dim(1);
  std::size_t tiles = num_tiles(graph);
  if (parts == 0) {
    popops::fill(graph, target, identity(op) * scale, prog, dc);
  } else if (parts > 1024 && outputs < tiles / 2) {
    // Two stages: chunks of the partials reduced where they lie, then the chunk results.
    std::size_t chunks = std::min<std::size_t>((parts + 511) / 512, std::max<std::size_t>(1, tiles / outputs));
    Type pt = partials_type(in.elementType());
    Tensor mid = graph.addVariable(pt, {outputs, chunks}, {dc, "partials"});
    auto cs1 = graph.addComputeSet(name_of(dc, "reduce/stage1"));
    std::string vertex = reduce_vertex(graph, op, in.elementType(), pt);
    for (std::size_t o = 0; o < outputs; ++o)
      for (std::size_t c = 0; c < chunks; ++c) {
        Tensor chunk = p.rows[o].slice(split_begin(parts, chunks, c), split_begin(parts, chunks, c + 1));
        unsigned tile = tile_of(graph, chunk.slice(0, 1));
        Tensor cell = mid[o].slice(c, c + 1);
        graph.setTileMapping(cell, tile);
        auto v = graph.addVertex(cs1, vertex);
        graph.connect(v["out"], poplar::ArrayRef<Tensor>({cell}));
        graph.connect(v["partials"], poplar::ArrayRef<Tensor>({chunk}));
        set_state(graph, v, "params",
                  {unsigned(op), in.elementType().tesseraId(), pt.tesseraId(), 1u, 0u,
                   std::bit_cast<unsigned>(1.0f)});
        graph.setTileMapping(v, tile);
      }
    prog.add(poplar::program::Execute(cs1, dc));
    auto cs2 = graph.addComputeSet(name_of(dc, "reduce/stage2"));
    reduce_stage(graph, cs2, mid, target, op == Operation::SQUARE_ADD ? Operation::ADD : op,
                 update, scale);
    prog.add(poplar::program::Execute(cs2, dc));
  } else {
    auto cs = graph.addComputeSet(name_of(dc, "reduce"));
    reduce_stage(graph, cs, p.rows, target, op, update, scale);
    prog.add(poplar::program::Execute(cs, dc));
  }
  if (scale_tensor) {
    using namespace popops::expr;
    Tensor s = params.scaleImpl.reshape({});
    if (s.elementType() != out.elementType()) s = popops::cast(graph, s, out.elementType(), prog, dc);
    if (params.update)
      popops::mapInPlace(graph, Add(_1, Mul(_2, _3)), {out, target, s}, prog, dc);
    else
      popops::mapWithOutput(graph, Mul(_1, _2), {target, s}, out, prog, dc);
  }
}

}  // namespace

const abi::VertexTypeDesc& cumsum_desc() {
  static const abi::VertexTypeDesc cum = poplar::detail::describe_vertex<CumSumVertex>(
      "popops::CumulativeSum", kCumSumFields, 2, kNone);
  return cum;
}

std::vector<const abi::VertexTypeDesc*> reduce_descs() {
  return {&reduce_desc(false), &reduce_desc(true), &cumsum_desc()};
}

}  // namespace tessera::ipu::poplibs

namespace popops {

using namespace tessera::ipu::poplibs;
using poplar::Tensor;

std::ostream& operator<<(std::ostream& os, const Operation& op) {
  static const char* names[] = {"ADD",         "MUL",        "MIN",        "MAX",
                                "LOGICAL_AND", "LOGICAL_OR", "SQUARE_ADD", "LOG_ADD"};
  return os << names[unsigned(op)];
}

Tensor reduce(poplar::Graph& graph, const Tensor& in, const poplar::Type& outType,
              const std::vector<std::size_t>& dims, ReduceParams params,
              poplar::program::Sequence& prog, const poplar::DebugContext& dc,
              const poplar::OptionFlags&) {
  if (params.update)
    throw poputil::poplibs_error(
        "popops::reduce: ReduceParams.update needs an existing output; use reduceWithOutput");
  Prepared p = prepare(in, dims);
  Tensor out = graph.addVariable(outType, p.out_shape, {dc, "reduced"});
  poputil::mapTensorLinearly(graph, out);
  reduce_into(graph, in, out, dims, params, prog, dc);
  return out;
}

Tensor reduce(poplar::Graph& graph, const Tensor& in, const std::vector<std::size_t>& dims,
              ReduceParams params, poplar::program::Sequence& prog,
              const poplar::DebugContext& dc, const poplar::OptionFlags& options) {
  return reduce(graph, in, in.elementType(), dims, params, prog, dc, options);
}

void reduceWithOutput(poplar::Graph& graph, const Tensor& in, const Tensor& out,
                      const std::vector<std::size_t>& dims, ReduceParams params,
                      poplar::program::Sequence& prog, const poplar::DebugContext& dc,
                      const poplar::OptionFlags&) {
  reduce_into(graph, in, out, dims, params, prog, dc);
}

namespace {
// The compute sets of a program made only of Sequences and Executes, in run order.
void append_compute_sets(const poplar::program::Program& p, std::vector<poplar::ComputeSet>& out) {
  const auto& n = *p.tesseraNode();
  if (n.kind == poplar::program::NodeKind::sequence) {
    for (const auto& c : n.children) append_compute_sets(c, out);
  } else if (n.kind == poplar::program::NodeKind::execute) {
    out.push_back(poplar::ComputeSet(n.compute_set));
  } else {
    throw poputil::poplibs_error(
        "popops::reduce with a vector of compute sets: this reduction also needs programs other "
        "than compute sets (a copy or a cast of the scale tensor); pass a Sequence instead");
  }
}
}  // namespace

Tensor reduce(poplar::Graph& graph, const Tensor& in, const poplar::Type& outType,
              const std::vector<std::size_t>& dims, ReduceParams params,
              std::vector<poplar::ComputeSet>& css, const poplar::DebugContext& dc,
              const poplar::OptionFlags& options) {
  poplar::program::Sequence seq;
  Tensor out = reduce(graph, in, outType, dims, std::move(params), seq, dc, options);
  append_compute_sets(seq, css);
  return out;
}

Tensor reduce(poplar::Graph& graph, const Tensor& in, const std::vector<std::size_t>& dims,
              ReduceParams params, std::vector<poplar::ComputeSet>& css,
              const poplar::DebugContext& dc, const poplar::OptionFlags& options) {
  return reduce(graph, in, in.elementType(), dims, std::move(params), css, dc, options);
}

void reduceWithOutput(poplar::Graph& graph, const Tensor& in, const Tensor& out,
                      const std::vector<std::size_t>& dims, ReduceParams params,
                      std::vector<poplar::ComputeSet>& css, const poplar::DebugContext& dc,
                      const poplar::OptionFlags& options) {
  poplar::program::Sequence seq;
  reduceWithOutput(graph, in, out, dims, std::move(params), seq, dc, options);
  append_compute_sets(seq, css);
}

void reduceMany(poplar::Graph& graph, const std::vector<SingleReduceOp>& reductions,
                std::vector<Tensor>& outputs, poplar::program::Sequence& prog,
                const poplar::DebugContext& dc, const poplar::OptionFlags& options) {
  bool create = outputs.empty();
  if (!create && outputs.size() != reductions.size())
    throw poputil::poplibs_error(fmt::format(
        "popops::reduceMany: {} reductions but {} outputs; give one output each or none",
        reductions.size(), outputs.size()));
  for (std::size_t i = 0; i < reductions.size(); ++i) {
    const auto& r = reductions[i];
    poplar::DebugContext d(dc, r.debugName.empty() ? std::to_string(i) : r.debugName);
    if (create)
      outputs.push_back(reduce(graph, r.in, r.useOutType ? r.outType : r.in.elementType(), r.dims,
                               r.params, prog, d, options));
    else
      reduceWithOutput(graph, r.in, outputs[i], r.dims, r.params, prog, d, options);
  }
}

Tensor cumulativeSum(poplar::Graph& graph, const Tensor& in, poplar::program::Sequence& prog,
                     const poplar::DebugContext& dc, const poplar::OptionFlags&) {
  require_codelets(graph, "popops", "popops::MapExpr");
  if (in.rank() == 0) throw poputil::poplibs_error("popops::cumulativeSum: the input is a scalar");
  std::string vertex = templated("popops::CumulativeSum", {type_arg(in.elementType())});
  unsigned type = in.elementType().tesseraId();
  register_codelet(graph, vertex, cumsum_desc(),
                   [type](const poplar::VertexIntrospector& v, const poplar::Target&) {
                     // One add and one store per element: serial along the row (estimate).
                     (void)type;
                     return poplar::VertexPerfEstimate(20 + 2 * v.getFieldInfo("rows").totalElements());
                   });
  Tensor out = graph.addVariable(in.elementType(), in.shape(), {dc, "cumsum"});
  graph.setTileMapping(out, graph.getTileMapping(in));
  prog.add(poplar::program::Copy(in, out, false, dc));
  std::size_t n = in.dim(in.rank() - 1);
  Tensor rows = out.reshape({out.numElements() / std::max<std::size_t>(1, n), n});
  auto cs = graph.addComputeSet(name_of(dc, "cumulativeSum"));
  for (std::size_t r = 0; r < rows.dim(0); ++r) {
    auto v = graph.addVertex(cs, vertex);
    graph.connect(v["rows"], poplar::ArrayRef<Tensor>({rows[r]}));
    set_state(graph, v, "params", {type});
    graph.setTileMapping(v, tile_of(graph, rows[r].slice(0, 1)));
  }
  prog.add(poplar::program::Execute(cs, dc));
  return out;
}

}  // namespace popops
