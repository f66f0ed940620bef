// popnn (non-linearities, pooling, normalisations, losses) and poprand. Point-wise parts are
// popops expressions; pooling and random generation have their own codelets.
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include <popnn/BatchNorm.hpp>
#include <popnn/GroupNorm.hpp>
#include <popnn/LayerNorm.hpp>
#include <popnn/Loss.hpp>
#include <popnn/NonLinearity.hpp>
#include <popnn/Pooling.hpp>
#include <popnn/codelets.hpp>
#include <popops/Cast.hpp>
#include <popops/ElementWise.hpp>
#include <popops/EncodingConstants.hpp>
#include <popops/Reduce.hpp>
#include <popops/TopK.hpp>
#include <poprand/RandomGen.hpp>
#include <poprand/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include "elementwise.h"

namespace tessera::ipu::poplibs {

// Pools the windows of channel planes [cb][H][W] into [cb][OH][OW].
// params: cb, H, W, OH, OW, KH, KW, sH, sW, padT, padL, type, op (0 max, 1 avg, 2 sum).
class PoolVertex : public poplar::MultiVertex {
 public:
  poplar::Input<poplar::Vector<Byte>> in;
  poplar::Output<poplar::Vector<Byte>> out;
  poplar::Vector<unsigned> params;

  bool compute(unsigned w) {
    const unsigned* p = params.data();
    std::size_t cb = p[0], H = p[1], W = p[2], OH = p[3], OW = p[4], KH = p[5], KW = p[6],
                sH = p[7], sW = p[8];
    long padT = static_cast<int>(p[9]), padL = static_cast<int>(p[10]);
    unsigned type = p[11], op = p[12];
    std::size_t es = type_bytes(type);
    std::vector<double> plane(H * W), res(OH * OW);
    for (std::size_t c = w; c < cb; c += numWorkers()) {
      load_elements(reinterpret_cast<const unsigned char*>(in.data()) + c * H * W * es, type,
                    H * W, plane.data());
      for (std::size_t oh = 0; oh < OH; ++oh)
        for (std::size_t ow = 0; ow < OW; ++ow) {
          double acc = op == 0 ? -std::numeric_limits<double>::infinity() : 0.0;
          std::size_t count = 0;
          for (std::size_t kh = 0; kh < KH; ++kh)
            for (std::size_t kw = 0; kw < KW; ++kw) {
              long ih = long(oh * sH + kh) - padT, iw = long(ow * sW + kw) - padL;
              if (ih < 0 || iw < 0 || ih >= long(H) || iw >= long(W)) continue;
              double x = plane[std::size_t(ih) * W + std::size_t(iw)];
              acc = op == 0 ? std::max(acc, x) : acc + x;
              ++count;
            }
          // AVG divides by the window's elements inside the input (padding excluded).
          res[oh * OW + ow] = op == 1 ? (count ? acc / double(count) : 0) : acc;
        }
      store_elements(reinterpret_cast<unsigned char*>(out.data()) + c * OH * OW * es, type,
                     OH * OW, res.data());
    }
    return true;
  }
};

namespace {
std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
double uniform01(std::uint64_t key, std::uint64_t index, unsigned draw) {
  std::uint64_t h = mix(key ^ mix(index * 4 + draw));
  return (double(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}
}  // namespace

// Random values for rows of the output: element i of the whole tensor draws from
// hash(seed, modifier, i). params: dist (0 uniform, 1 normal, 2 truncated normal, 3 bernoulli,
// 4 dropout), out type, modifier, a, b, c (double bits, two words each), then each row's first
// element index.
class RandomVertex : public poplar::MultiVertex {
 public:
  poplar::Input<poplar::Vector<Byte>> seed;
  poplar::Input<poplar::VectorList<Byte>> in;  // dropout's input rows (else none)
  poplar::Output<poplar::VectorList<Byte>> out;
  poplar::Vector<unsigned> params;

  bool compute(unsigned w) {
    const unsigned* p = params.data();
    unsigned dist = p[0], type = p[1];
    auto word = [&](int i) {
      return std::bit_cast<double>((std::uint64_t(p[4 + 2 * i]) << 32) | p[3 + 2 * i]);
    };
    double a = word(0), b = word(1), c = word(2);
    const auto* s = reinterpret_cast<const std::uint32_t*>(seed.data());
    std::uint64_t key = mix((std::uint64_t(s[1]) << 32 | s[0]) ^ mix(p[2]));
    std::vector<double> vals, ins;
    for (std::size_t r = 0; r < out.size(); ++r) {
      std::size_t len = out[r].size(), b0 = len * w / numWorkers(), e0 = len * (w + 1) / numWorkers();
      if (b0 == e0) continue;
      std::uint64_t base = p[9 + r];
      vals.resize(e0 - b0);
      if (dist == 4) {
        ins.resize(e0 - b0);
        load_elements(reinterpret_cast<const unsigned char*>(in[r].data()) + b0 * type_bytes(type),
                      type, e0 - b0, ins.data());
      }
      for (std::size_t i = b0; i < e0; ++i) {
        std::uint64_t idx = base + i;
        double u = uniform01(key, idx, 0), v;
        switch (dist) {
          case 0: v = a + (b - a) * u; break;
          case 1:
          case 2: {
            double z = 0;
            for (unsigned k = 0; k < 32; k += 2) {
              double u1 = uniform01(key, idx, k), u2 = uniform01(key, idx, k + 1);
              z = std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
              if (dist == 1 || std::fabs(z) <= c) break;
              z = std::clamp(z, -c, c);
            }
            v = a + b * z;
            break;
          }
          case 3: v = u < a ? 1 : 0; break;
          default: v = u < a ? ins[i - b0] * b : 0; break;
        }
        vals[i - b0] = v;
      }
      store_elements(reinterpret_cast<unsigned char*>(out[r].data()) + b0 * type_bytes(type), type,
                     e0 - b0, vals.data());
    }
    return true;
  }
};

namespace {

const abi::FieldDesc kPoolFields[] = {TESSERA_IPU_FIELD(PoolVertex, in),
                                      TESSERA_IPU_FIELD(PoolVertex, out),
                                      TESSERA_IPU_FIELD(PoolVertex, params)};
// poprand::setSeed on one tile: each worker context's four seed words from the master seed,
// the seed modifier, the tile and the word (a hash: the IPU's own derivation is not published).
// params: seed modifier, tile.
class SetSeedVertex : public poplar::Vertex {
 public:
  poplar::Input<poplar::Vector<unsigned>> seed;
  poplar::Output<poplar::Vector<unsigned>> hwSeeds;  // [workers][4] of this tile
  poplar::Vector<unsigned> params;

  bool compute() {
    const std::uint64_t master = std::uint64_t(seed[1]) << 32 | seed[0];
    const std::uint64_t key = mix(master ^ mix(params[0]));
    for (std::size_t i = 0; i < hwSeeds.size(); ++i)
      hwSeeds[i] = unsigned(mix(key ^ mix((std::uint64_t(params[1]) << 16) | i)));
    return true;
  }
};

const abi::FieldDesc kSetSeedFields[] = {TESSERA_IPU_FIELD(SetSeedVertex, seed),
                                         TESSERA_IPU_FIELD(SetSeedVertex, hwSeeds),
                                         TESSERA_IPU_FIELD(SetSeedVertex, params)};
const abi::FieldDesc kRandFields[] = {
    TESSERA_IPU_FIELD(RandomVertex, seed), TESSERA_IPU_FIELD(RandomVertex, in),
    TESSERA_IPU_FIELD(RandomVertex, out), TESSERA_IPU_FIELD(RandomVertex, params)};
const char* const kNone[] = {nullptr};

const abi::VertexTypeDesc& pool_desc() {
  static const abi::VertexTypeDesc d =
      poplar::detail::describe_vertex<PoolVertex>("popnn::Pooling", kPoolFields, 3, kNone);
  return d;
}
const abi::VertexTypeDesc& rand_desc() {
  static const abi::VertexTypeDesc d =
      poplar::detail::describe_vertex<RandomVertex>("poprand::Random", kRandFields, 4, kNone);
  return d;
}

const abi::VertexTypeDesc& set_seed_desc() {
  static const abi::VertexTypeDesc d = poplar::detail::describe_vertex<SetSeedVertex>(
      "poprand::SetSeedSupervisor", kSetSeedFields, 3, kNone);
  return d;
}

std::vector<unsigned> words(double v) {
  auto b = std::bit_cast<std::uint64_t>(v);
  return {unsigned(b & 0xffffffffu), unsigned(b >> 32)};
}

}  // namespace
std::vector<const abi::VertexTypeDesc*> popnn_descs() {
  return {&pool_desc(), &rand_desc(), &set_seed_desc()};
}

}  // namespace tessera::ipu::poplibs

namespace popnn {

using namespace tessera::ipu::poplibs;
using poplar::Tensor;
using poplar::program::Sequence;
namespace pe = popops::expr;

void addCodelets(poplar::Graph& graph) {
  register_codelet(graph, "popnn::Pooling", pool_desc(),
                   [](const poplar::VertexIntrospector& v, const poplar::Target&) {
                     return poplar::VertexPerfEstimate(20 + v.getFieldInfo("in").totalElements());
                   });
}

namespace {

// Softmax over the innermost dimension: exp(x - max) / sum(exp(x - max)); log form on request.
Tensor softmax(poplar::Graph& graph, const Tensor& t, Sequence& prog,
               const poplar::DebugContext& dc, bool log) {
  if (t.rank() == 0) throw poputil::poplibs_error("popnn softmax: the tensor is a scalar");
  std::size_t last = t.rank() - 1;
  auto keep = t.shape();
  keep[last] = 1;
  Tensor mx = popops::reduce(graph, t, t.elementType(), {last}, popops::Operation::MAX, prog,
                             {dc, "max"});
  mx = mx.reshape(keep);
  Tensor e = popops::map(graph, pe::Exp(pe::_1 - pe::_2), {t, mx}, prog, {dc, "exp"});
  Tensor sum = popops::reduce(graph, e, t.elementType(), {last}, popops::Operation::ADD, prog,
                              {dc, "sum"});
  sum = sum.reshape(keep);
  if (log) return popops::map(graph, pe::_1 - pe::_2 - pe::Log(pe::_3), {t, mx, sum}, prog, {dc, "log"});
  return popops::map(graph, pe::_1 / pe::_2, {e, sum}, prog, {dc, "normalise"});
}

std::unique_ptr<pe::Expr> pointwise(NonLinearityType type) {
  using namespace pe;
  switch (type) {
    case NonLinearityType::SIGMOID: return Sigmoid(_1).clone();
    case NonLinearityType::HARD_SIGMOID:
      return Max(Const(0.0f), Min(Const(1.0f), Add(Mul(_1, Const(0.2f)), Const(0.5f)))).clone();
    case NonLinearityType::RELU: return Relu(_1).clone();
    case NonLinearityType::TANH: return Tanh(_1).clone();
    case NonLinearityType::GELU:
      // The tanh approximation PopLibs' GELU uses: 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))).
      return Mul(Mul(Const(0.5f), _1),
                 Add(Const(1.0f), Tanh(Mul(Const(0.7978845608f),
                                           Add(_1, Mul(Const(0.044715f), Mul(_1, Mul(_1, _1))))))))
          .clone();
    case NonLinearityType::SWISH: return Mul(_1, Sigmoid(_1)).clone();
    default: return nullptr;
  }
}

const char* nl_name(NonLinearityType t) {
  static const char* n[] = {"SIGMOID", "HARD_SIGMOID", "RELU", "TANH", "GELU",
                            "SWISH", "SOFTMAX", "SOFTMAX_STABLE", "SOFTMAX_SCALED"};
  return n[unsigned(t)];
}

}  // namespace

Tensor nonLinearity(poplar::Graph& graph, NonLinearityType type, Tensor t, Sequence& prog,
                    const poplar::DebugContext& dc, const poplar::OptionFlags&) {
  if (!t.elementType().isFloatingPoint())
    throw poputil::poplibs_error(fmt::format(
        "popnn::nonLinearity: {} needs float or half, not {}", nl_name(type), t.elementType().toString()));
  auto e = pointwise(type);
  if (!e) return softmax(graph, t, prog, dc, false);
  return run_expr(graph, *e, {t}, nullptr, false, prog, dc,
                  templated("popnn::NonLinearity2D", {type_arg(t.elementType()),
                                                      std::string("popnn::NonLinearityType::") + nl_name(type)}));
}

void nonLinearityInPlace(poplar::Graph& graph, NonLinearityType type, Tensor t, Sequence& prog,
                         const poplar::DebugContext& dc, const poplar::OptionFlags& options) {
  auto e = pointwise(type);
  if (!e) {
    Tensor r = nonLinearity(graph, type, t, prog, dc, options);
    prog.add(poplar::program::Copy(r, t));
    return;
  }
  run_expr(graph, *e, {t}, nullptr, true, prog, dc,
           templated("popnn::NonLinearity2DInPlace", {type_arg(t.elementType()),
                                                      std::string("popnn::NonLinearityType::") + nl_name(type)}));
}

Tensor logSoftmax(poplar::Graph& graph, Tensor t, Sequence& prog, const poplar::DebugContext& dc) {
  return softmax(graph, t, prog, dc, true);
}

// ---- pooling ----
namespace pooling {

std::vector<std::size_t> PoolParams::getOutputFieldShape() const {
  std::vector<std::size_t> o;
  for (std::size_t d = 0; d < inputFieldShape.size(); ++d) {
    long padded = long(inputFieldShape[d]) + inputTruncationOrPaddingLower.at(d) +
                  inputTruncationOrPaddingUpper.at(d);
    o.push_back(padded < long(kernelShape[d]) ? 0 : std::size_t((padded - long(kernelShape[d])) / stride.at(d) + 1));
  }
  return o;
}

Tensor pool(poplar::Graph& graph, const PoolParams& p, const Tensor& in, Sequence& prog,
            const poplar::DebugContext& dc, const poplar::OptionFlags&) {
  require_codelets(graph, "popnn", "popnn::Pooling");
  std::size_t dims = p.inputFieldShape.size();
  if (dims < 1 || dims > 2 || p.kernelShape.size() != dims || p.stride.size() != dims ||
      p.inputTruncationOrPaddingLower.size() != dims || p.inputTruncationOrPaddingUpper.size() != dims)
    throw poputil::poplibs_error(
        "popnn::pooling::pool: give 1 or 2 field dimensions, with one kernel size, stride and "
        "padding per dimension");
  std::vector<std::size_t> want = {p.batchSize, p.numChannels};
  want.insert(want.end(), p.inputFieldShape.begin(), p.inputFieldShape.end());
  if (in.shape() != want)
    throw poputil::poplibs_error(fmt::format("popnn::pooling::pool: input is {{{}}}, params say {{{}}}",
                                             fmt::join(in.shape(), ","), fmt::join(want, ",")));
  auto of = p.getOutputFieldShape();
  std::vector<std::size_t> oshape = {p.batchSize, p.numChannels};
  oshape.insert(oshape.end(), of.begin(), of.end());
  std::size_t planes = p.batchSize * p.numChannels;
  unsigned T = num_tiles(graph);
  // A window over the whole field (a global pool) is a reduction over the field: partials on
  // the tiles that hold the input, then one value per plane, as PopLibs reduces a plane too large
  // for one tile. A vertex per plane would stage the whole plane on one tile.
  bool whole_field = true;
  for (std::size_t d = 0; d < dims; ++d)
    whole_field = whole_field && p.kernelShape[d] == p.inputFieldShape[d] &&
                  p.inputTruncationOrPaddingLower[d] == 0 &&
                  p.inputTruncationOrPaddingUpper[d] == 0;
  if (whole_field) {
    Tensor out = graph.addVariable(in.elementType(), oshape, {dc, "pooled"});
    poputil::mapTensorLinearly(graph, out);
    std::vector<std::size_t> field(dims);
    for (std::size_t d = 0; d < dims; ++d) field[d] = 2 + d;
    std::size_t window = std::accumulate(p.kernelShape.begin(), p.kernelShape.end(),
                                         std::size_t{1}, std::multiplies<>());
    popops::ReduceParams params =
        p.poolingType == PoolingType::MAX ? popops::ReduceParams(popops::Operation::MAX)
        : p.poolingType == PoolingType::AVG
            ? popops::ReduceParams(popops::Operation::ADD, float(1.0 / double(window)))
            : popops::ReduceParams(popops::Operation::ADD);
    popops::reduceWithOutput(graph, in, out, field, params, prog, {dc, "pool"});
    return out;
  }
  std::size_t H = dims == 2 ? p.inputFieldShape[0] : 1, W = p.inputFieldShape.back();
  std::size_t KH = dims == 2 ? p.kernelShape[0] : 1, KW = p.kernelShape.back();
  std::size_t sH = dims == 2 ? p.stride[0] : 1, sW = p.stride.back();
  int padT = dims == 2 ? p.inputTruncationOrPaddingLower[0] : 0,
      padL = p.inputTruncationOrPaddingLower.back();
  std::size_t OH = dims == 2 ? of[0] : 1, OW = of.back();
  Tensor out = graph.addVariable(in.elementType(), oshape, {dc, "pooled"});
  Tensor in3 = in.reshape({planes, H, W}), out3 = out.reshape({planes, OH, OW});
  // Work units: ranges of whole planes when there are planes enough for the tiles; otherwise
  // each plane cut into bands of output rows, a unit per tile, so that a tile stages only the
  // input rows its band's windows read.
  std::size_t bands = planes >= T ? 1 : std::min<std::size_t>(OH, (T + planes - 1) / planes);
  std::size_t plane_units = planes >= T ? T : planes;
  std::size_t units = plane_units * bands;
  // What cannot fit however finely the rows are cut: one output row's windows on one tile.
  std::size_t row_bytes = std::min(H, KH) * W * graph.getTarget().getTypeSize(in.elementType());
  if (row_bytes > graph.getTarget().getBytesPerTile())
    throw poputil::poplibs_error(fmt::format(
        "popnn::pooling::pool: the windows of one output row read {} input rows of {} elements "
        "({} bytes), more than a tile's {} bytes; pool a narrower field or a shorter window",
        std::min(H, KH), W, row_bytes, graph.getTarget().getBytesPerTile()));
  static const char* kinds[] = {"popnn::MaxPooling", "popnn::AvgPooling", "popnn::SumPooling"};
  std::string vertex = templated(kinds[unsigned(p.poolingType)], {type_arg(in.elementType())});
  std::size_t window = KH * KW;
  register_codelet(graph, vertex, pool_desc(),
                   [window](const poplar::VertexIntrospector& v, const poplar::Target& t) {
                     // One compare or add per window element and output, 6 workers (estimate).
                     std::uint64_t outs = v.getFieldInfo("out").totalElements();
                     return poplar::VertexPerfEstimate(
                         30 + (outs * (window + 2) + t.getNumWorkerContexts() - 1) / t.getNumWorkerContexts());
                   });
  auto cs = graph.addComputeSet(name_of(dc, "pool"));
  for (std::size_t u = 0; u < units; ++u) {
    std::size_t pu = u / bands, b = u % bands;
    std::size_t c0 = split_begin(planes, plane_units, pu);
    std::size_t c1 = split_begin(planes, plane_units, pu + 1);
    std::size_t oh0 = split_begin(OH, bands, b), oh1 = split_begin(OH, bands, b + 1);
    if (c0 == c1 || oh0 == oh1) continue;
    unsigned tile = unsigned(u * T / units);
    Tensor src = in3.slice(c0, c1), dst = out3.slice(c0, c1);
    // The input rows the band's windows read, [a0, a1); the rows above a0 become the band's own
    // top padding (negative when the windows start below a0), so every window sees what it
    // would see in the whole plane.
    long r0 = long(oh0 * sH) - padT, r1 = long((oh1 - 1) * sH + KH) - padT;
    long a0 = std::clamp(r0, 0L, long(H) - 1), a1 = std::clamp(r1, a0 + 1, long(H));
    if (bands > 1) {
      src = src.slice(std::size_t(a0), std::size_t(a1), 1);
      dst = dst.slice(oh0, oh1, 1);
    } else {
      a0 = 0, a1 = long(H), r0 = -padT;
    }
    graph.setTileMapping(dst, tile);
    auto v = graph.addVertex(cs, vertex);
    graph.connect(v["in"], src.flatten());
    graph.connect(v["out"], dst.flatten());
    set_state(graph, v, "params",
              {unsigned(c1 - c0), unsigned(a1 - a0), unsigned(W), unsigned(oh1 - oh0), unsigned(OW),
               unsigned(KH), unsigned(KW), unsigned(sH), unsigned(sW), unsigned(int(a0 - r0)),
               unsigned(padL), in.elementType().tesseraId(), unsigned(p.poolingType)});
    graph.setTileMapping(v, tile);
  }
  prog.add(poplar::program::Execute(cs, dc));
  return out;
}

}  // namespace pooling

// ---- normalisations ----
namespace {

// Statistics over `dims` of x: (mean, 1/sqrt(var + eps)) in x's type, shaped as the kept dims.
std::pair<Tensor, Tensor> statistics(poplar::Graph& graph, const Tensor& x,
                                     const std::vector<std::size_t>& dims, float eps,
                                     bool unbiased, Sequence& prog, const poplar::DebugContext& dc) {
  std::size_t n = 1;
  for (auto d : dims) n *= x.dim(unsigned(d));
  if (n == 0) throw poputil::poplibs_error("popnn normalisation: no elements to take statistics of");
  Type t = x.elementType();
  Tensor mean = popops::reduce(graph, x, t, dims, {popops::Operation::ADD, float(1.0 / double(n))},
                               prog, {dc, "mean"});
  Tensor sq = popops::reduce(graph, x, t, dims,
                             {popops::Operation::SQUARE_ADD, float(1.0 / double(n))}, prog,
                             {dc, "meanSquare"});
  double corr = unbiased && n > 1 ? double(n) / double(n - 1) : 1.0;
  Tensor inv = popops::map(
      graph,
      pe::Rsqrt(pe::Add(pe::Mul(pe::Sub(pe::_2, pe::Mul(pe::_1, pe::_1)), pe::Const(corr, t)),
                        pe::Const(double(eps), t))),
      {mean, sq}, prog, {dc, "invStdDev"});
  return {mean, inv};
}

// Per-channel [C] tensor shaped to broadcast over [N][C][...].
Tensor per_channel(const Tensor& v, const Tensor& acts) {
  std::vector<std::size_t> s(acts.rank(), 1);
  s[1] = acts.dim(1);
  return v.reshape(s);
}

void check_acts(const Tensor& acts, const char* fn) {
  if (acts.rank() < 2)
    throw poputil::poplibs_error(fmt::format(
        "popnn::{}: activations must be [N][C][...], at least 2 dimensions; got {{{}}}", fn,
        fmt::join(acts.shape(), ",")));
}

}  // namespace

namespace bn {

std::pair<Tensor, Tensor> batchNormStatistics(poplar::Graph& graph, const Tensor acts, float eps,
                                              Sequence& prog, bool unbiasedVarEstimate, bool,
                                              const poplar::Type&, const poplar::DebugContext& dc,
                                              const poplar::OptionFlags&) {
  check_acts(acts, "bn::batchNormStatistics");
  std::vector<std::size_t> dims = {0};
  for (std::size_t d = 2; d < acts.rank(); ++d) dims.push_back(d);
  return statistics(graph, acts, dims, eps, unbiasedVarEstimate, prog, dc);
}

std::pair<Tensor, Tensor> batchNormalise(poplar::Graph& graph, const Tensor& acts,
                                         const Tensor& gamma, const Tensor& beta,
                                         const Tensor& mean, const Tensor& invStdDev,
                                         Sequence& prog, const poplar::DebugContext& dc,
                                         const poplar::OptionFlags&) {
  check_acts(acts, "bn::batchNormalise");
  Tensor white = popops::map(graph, pe::Mul(pe::Sub(pe::_1, pe::_2), pe::_3),
                             {acts, per_channel(mean, acts), per_channel(invStdDev, acts)}, prog,
                             {dc, "whiten"});
  Tensor out = popops::map(graph, pe::Add(pe::Mul(pe::_1, pe::_2), pe::_3),
                           {white, per_channel(gamma, acts), per_channel(beta, acts)}, prog,
                           {dc, "scaleShift"});
  return {out, white};
}

Tensor batchNormalise(poplar::Graph& graph, const Tensor& acts, const Tensor& combinedMultiplicand,
                      const Tensor& addend, Sequence& prog, const poplar::DebugContext& dc,
                      const poplar::OptionFlags&) {
  check_acts(acts, "bn::batchNormalise");
  return popops::map(graph, pe::Add(pe::Mul(pe::_1, pe::_2), pe::_3),
                     {acts, per_channel(combinedMultiplicand, acts), per_channel(addend, acts)},
                     prog, {dc, "batchNorm"});
}

}  // namespace bn

namespace gn {

std::pair<Tensor, Tensor> groupNormStatistics(poplar::Graph& graph, const Tensor acts, float eps,
                                              Sequence& prog, unsigned numGroups,
                                              bool unbiasedVarEstimate, bool, const poplar::Type&,
                                              const poplar::DebugContext& dc,
                                              const poplar::OptionFlags&) {
  check_acts(acts, "gn::groupNormStatistics");
  std::size_t N = acts.dim(0), C = acts.dim(1);
  if (numGroups == 0 || C % numGroups != 0)
    throw poputil::poplibs_error(fmt::format(
        "popnn::gn: {} channels do not split into {} groups", C, numGroups));
  Tensor g = acts.reshape({N, numGroups, acts.numElements() / (N * numGroups)});
  auto [mean, inv] = statistics(graph, g, {2}, eps, unbiasedVarEstimate, prog, dc);
  return {mean.flatten(), inv.flatten()};
}

std::pair<Tensor, Tensor> groupNormalise(poplar::Graph& graph, const Tensor& acts,
                                         const Tensor& gamma, const Tensor& beta,
                                         const Tensor& mean, const Tensor& invStdDev,
                                         Sequence& prog, const poplar::DebugContext& dc,
                                         const poplar::OptionFlags&) {
  check_acts(acts, "gn::groupNormalise");
  std::size_t N = acts.dim(0), C = acts.dim(1);
  std::size_t G = mean.numElements() / std::max<std::size_t>(1, N);
  if (G == 0 || mean.numElements() != N * G || C % G != 0 || invStdDev.numElements() != N * G)
    throw poputil::poplibs_error(fmt::format(
        "popnn::gn::groupNormalise: mean and invStdDev must hold batch x groups ({} x groups) "
        "values dividing the {} channels; they hold {} and {}",
        N, C, mean.numElements(), invStdDev.numElements()));
  Tensor g = acts.reshape({N, G, acts.numElements() / (N * G)});
  Tensor white = popops::map(graph, pe::Mul(pe::Sub(pe::_1, pe::_2), pe::_3),
                             {g, mean.reshape({N, G, 1}), invStdDev.reshape({N, G, 1})}, prog,
                             {dc, "whiten"})
                     .reshape(acts.shape());
  Tensor out = popops::map(graph, pe::Add(pe::Mul(pe::_1, pe::_2), pe::_3),
                           {white, per_channel(gamma, acts), per_channel(beta, acts)}, prog,
                           {dc, "scaleShift"});
  return {out, white};
}

}  // namespace gn

namespace ln {

std::pair<Tensor, Tensor> layerNormStatistics(poplar::Graph& graph, const Tensor acts, float eps,
                                              Sequence& prog, bool unbiasedVarEstimate,
                                              bool stableAlgo, const poplar::Type& partialsType,
                                              const poplar::DebugContext& dc,
                                              const poplar::OptionFlags& options) {
  return gn::groupNormStatistics(graph, acts, eps, prog, 1, unbiasedVarEstimate, stableAlgo,
                                 partialsType, dc, options);
}

std::pair<Tensor, Tensor> layerNormalise(poplar::Graph& graph, const Tensor& acts,
                                         const Tensor& gamma, const Tensor& beta,
                                         const Tensor& mean, const Tensor& invStdDev,
                                         Sequence& prog, const poplar::DebugContext& dc,
                                         const poplar::OptionFlags& options) {
  return gn::groupNormalise(graph, acts, gamma, beta, mean, invStdDev, prog, dc, options);
}

}  // namespace ln

// ---- losses ----
namespace {
// calcLoss with PopLibs' optional scales (Loss.hpp): for CROSS_ENTROPY_LOSS the outputs are
// probabilities times modelOutputScaling (SOFTMAX_SCALED), the deltas are
// (p - onehot x modelOutputScaling) x deltasScale / modelOutputScaling, and the loss takes
// log(modelOutputScaling) back out; invalid tensors: the scales are 1.
void loss_and_deltas(poplar::Graph& graph, const Tensor& outputs, const Tensor& expected,
                     const Tensor& loss, const Tensor& deltas, const Tensor& deltasScale,
                     const Tensor& modelOutputScaling, LossType lossType, Sequence& prog,
                     const poplar::DebugContext& dc) {
  if (outputs.rank() != 2 || expected.rank() != 1 || expected.dim(0) != outputs.dim(0) ||
      loss.numElements() != outputs.dim(0) || deltas.shape() != outputs.shape())
    throw poputil::poplibs_error(fmt::format(
        "popnn::calcLoss: model outputs must be [batch][classes] ({{{}}}), expected [batch] "
        "({{{}}}), loss [batch] ({} elements) and deltas like the outputs ({{{}}})",
        fmt::join(outputs.shape(), ","), fmt::join(expected.shape(), ","), loss.numElements(),
        fmt::join(deltas.shape(), ",")));
  for (const auto& [scale, name] : {std::pair{&deltasScale, "deltasScale"},
                                     std::pair{&modelOutputScaling, "modelOutputScaling"}})
    if (scale->valid() && (scale->numElements() != 1 || !(scale->elementType() == poplar::FLOAT ||
                                                          scale->elementType() == poplar::HALF)))
      throw poputil::poplibs_error(fmt::format(
          "popnn::calcLoss: {} must be one float or half element; it is {} {{{}}}. Pass a "
          "single-element tensor (or use the overload without scales, which means 1.0)",
          name, scale->elementType().toString(), fmt::join(scale->shape(), ",")));
  const bool scaled =
      lossType == CROSS_ENTROPY_LOSS && (deltasScale.valid() || modelOutputScaling.valid());
  std::size_t B = outputs.dim(0), C = outputs.dim(1);
  Type t = outputs.elementType();
  auto scale_or_one = [&](const Tensor& s, const char* name) {
    if (s.valid())
      return (s.elementType() == t ? s : popops::cast(graph, s, t, prog, {dc, name})).reshape({1, 1});
    Tensor one = graph.addConstant<float>(t, {1, 1}, 1.0f, {dc, name});
    graph.setTileMapping(one, 0);
    return one;
  };
  std::vector<int> classes(C);
  for (std::size_t i = 0; i < C; ++i) classes[i] = int(i);
  Tensor iota = graph.addConstant<int>(poplar::INT, {1, C}, poplar::ArrayRef<int>(classes), {dc, "classes"});
  poputil::mapTensorLinearly(graph, iota);
  Tensor labels = expected.elementType() == poplar::INT
                      ? expected
                      : popops::cast(graph, expected, poplar::INT, prog, {dc, "labels"});
  // one-hot(label) as the outputs' type, then deltas = p - onehot; a row whose label is
  // MASKED_LABEL_CODE (-1 as an int) has no loss and no deltas.
  Tensor onehot = popops::map(graph, pe::Cast(pe::Equal(pe::_1, pe::_2), t),
                              {iota, labels.reshape({B, 1})}, prog, {dc, "onehot"});
  Tensor keep = popops::map(graph, pe::Cast(pe::NotEqual(pe::_1, pe::Const(int(MASKED_LABEL_CODE))), t),
                            {labels}, prog, {dc, "unmasked"});
  Tensor mos;
  if (scaled) {
    mos = scale_or_one(modelOutputScaling, "modelOutputScaling");
    Tensor ds = scale_or_one(deltasScale, "deltasScale");
    popops::mapWithOutput(
        graph, pe::Mul(pe::Mul(pe::Sub(pe::_1, pe::Mul(pe::_2, pe::_4)), pe::Divide(pe::_5, pe::_4)),
                       pe::_3),
        {outputs, onehot, keep.reshape({B, 1}), mos, ds}, deltas, prog, {dc, "deltas"});
  } else {
    popops::mapWithOutput(graph, pe::Mul(pe::Sub(pe::_1, pe::_2), pe::_3),
                          {outputs, onehot, keep.reshape({B, 1})}, deltas, prog, {dc, "deltas"});
  }
  Tensor per;
  if (lossType == CROSS_ENTROPY_LOSS) {
    // -log of the labelled probability (clamped away from 0 as PopLibs' loss codelet does).
    Tensor picked = popops::map(graph, pe::Mul(pe::_1, pe::_2), {outputs, onehot}, prog, {dc, "picked"});
    Tensor p = popops::reduce(graph, picked, t, {1}, popops::Operation::ADD, prog, {dc, "p"});
    if (scaled)
      per = popops::map(graph,
                        pe::Mul(pe::Neg(pe::Sub(pe::Log(pe::Max(pe::_1, pe::Const(1e-7, t))),
                                                pe::Log(pe::_3))),
                                pe::_2),
                        {p, keep, mos.reshape({1})}, prog, {dc, "xent"});
    else
      per = popops::map(graph, pe::Mul(pe::Neg(pe::Log(pe::Max(pe::_1, pe::Const(1e-7, t)))), pe::_2),
                        {p, keep}, prog, {dc, "xent"});
  } else {
    per = popops::reduce(graph, deltas, t, {1}, {popops::Operation::SQUARE_ADD, 0.5f}, prog, {dc, "sumSquared"});
  }
  prog.add(poplar::program::Copy(per.elementType() == loss.elementType()
                                     ? per
                                     : popops::cast(graph, per, loss.elementType(), prog, dc),
                                 loss.flatten().reshape(per.shape())));
}
}  // namespace

void calcLoss(poplar::Graph& graph, const Tensor& outputs, const Tensor& expected,
              const Tensor& loss, const Tensor& deltas, LossType lossType, Sequence& prog,
              const poplar::DebugContext& dc) {
  loss_and_deltas(graph, outputs, expected, loss, deltas, Tensor(), Tensor(), lossType, prog, dc);
}

poplar::program::Program calcLoss(poplar::Graph& graph, const Tensor& outputs,
                                  const Tensor& expected, const Tensor& loss,
                                  const Tensor& deltas, LossType lossType,
                                  const poplar::DebugContext& dc) {
  Sequence prog;
  calcLoss(graph, outputs, expected, loss, deltas, lossType, prog, dc);
  return prog;
}

poplar::program::Program calcLoss(poplar::Graph& graph, const Tensor& outputs,
                                  const Tensor& expected, const Tensor& loss,
                                  const Tensor& deltas, const Tensor& deltasScale,
                                  const Tensor& modelOutputScaling, LossType lossType,
                                  const poplar::DebugContext& dc) {
  Sequence prog;
  loss_and_deltas(graph, outputs, expected, loss, deltas, deltasScale, modelOutputScaling,
                  lossType, prog, dc);
  return prog;
}

namespace {
// Per row of a [rows][cols] tensor: the max (or min) and the first column that holds it, as
// popops maps and reductions (so each part is timed by its codelet).
std::pair<Tensor, Tensor> extreme_and_index(poplar::Graph& graph, const Tensor& input, bool max,
                                            Sequence& prog, const poplar::DebugContext& dc,
                                            const char* fn) {
  if (input.rank() != 2 || input.dim(1) == 0)
    throw poputil::poplibs_error(fmt::format(
        "popnn::{}: the input must be [rows][columns] with at least one column; it is {{{}}}", fn,
        fmt::join(input.shape(), ",")));
  std::size_t R = input.dim(0), C = input.dim(1);
  Tensor best = popops::reduce(graph, input, {1}, max ? popops::Operation::MAX : popops::Operation::MIN,
                               prog, {dc, "value"});
  std::vector<unsigned> cols(C);
  std::iota(cols.begin(), cols.end(), 0u);
  Tensor index = graph.addConstant<unsigned>(poplar::UNSIGNED_INT, {1, C},
                                             poplar::ArrayRef<unsigned>(cols), {dc, "columns"});
  poputil::mapTensorLinearly(graph, index);
  // Columns holding the extreme keep their index, the others C; the least of them is the first.
  Tensor candidates = popops::map(
      graph, pe::Select(pe::_1, pe::Const(unsigned(C)), pe::Equal(pe::_2, pe::_3)),
      {index, input, best.reshape({R, 1})}, prog, {dc, "candidates"});
  Tensor at = popops::reduce(graph, candidates, {1}, popops::Operation::MIN, prog, {dc, "index"});
  return {best, at};
}
}  // namespace

std::pair<Tensor, Tensor> maxAndArgMax(poplar::Graph& graph, const Tensor& input, Sequence& prog,
                                       const poplar::DebugContext& dc) {
  return extreme_and_index(graph, input, true, prog, dc, "maxAndArgMax");
}
std::pair<Tensor, Tensor> minAndArgMin(poplar::Graph& graph, const Tensor& input, Sequence& prog,
                                       const poplar::DebugContext& dc) {
  return extreme_and_index(graph, input, false, prog, dc, "minAndArgMin");
}
Tensor argMax(poplar::Graph& graph, const Tensor& input, Sequence& prog,
              const poplar::DebugContext& dc) {
  return extreme_and_index(graph, input, true, prog, dc, "argMax").second;
}
Tensor argMin(poplar::Graph& graph, const Tensor& input, Sequence& prog,
              const poplar::DebugContext& dc) {
  return extreme_and_index(graph, input, false, prog, dc, "argMin").second;
}

poplar::program::Program calcAccuracy(poplar::Graph& graph, const Tensor& outputs,
                                      const Tensor& expected, const Tensor& numCorrect,
                                      const poplar::DebugContext& dc) {
  if (outputs.rank() != 2 || expected.rank() != 1 || expected.dim(0) != outputs.dim(0))
    throw poputil::poplibs_error(fmt::format(
        "popnn::calcAccuracy: model outputs must be [batch][classes] ({{{}}}) and expected "
        "[batch] ({{{}}})",
        fmt::join(outputs.shape(), ","), fmt::join(expected.shape(), ",")));
  if (numCorrect.numElements() != 1 ||
      (numCorrect.elementType() != poplar::UNSIGNED_INT && numCorrect.elementType() != poplar::INT))
    throw poputil::poplibs_error(fmt::format(
        "popnn::calcAccuracy: numCorrect must be one unsigned int; it is {} {{{}}}",
        numCorrect.elementType().toString(), fmt::join(numCorrect.shape(), ",")));
  Sequence prog;
  Tensor predicted = argMax(graph, outputs, prog, {dc, "argMax"});
  Tensor labels = expected.elementType() == poplar::UNSIGNED_INT
                      ? expected
                      : popops::cast(graph, expected, poplar::UNSIGNED_INT, prog, {dc, "labels"});
  // A masked label (MASKED_LABEL_CODE) never counts.
  Tensor correct = popops::map(
      graph,
      pe::Cast(pe::And(pe::Equal(pe::_1, pe::_2), pe::NotEqual(pe::_2, pe::Const(MASKED_LABEL_CODE))),
               poplar::UNSIGNED_INT),
      {predicted, labels}, prog, {dc, "correct"});
  Tensor count = popops::reduce(graph, correct, numCorrect.elementType(), {0},
                                popops::Operation::ADD, prog, {dc, "count"});
  // numCorrect accumulates, so one variable can count a whole batch of steps.
  popops::mapInPlace(graph, pe::Add(pe::_1, pe::_2), {numCorrect.flatten(), count.reshape({1})},
                     prog, {dc, "numCorrect"});
  return prog;
}

poplar::program::Program calcLoss(poplar::Graph& graph, const Tensor& outputs,
                                  const Tensor& expected, const Tensor& loss,
                                  const Tensor& deltas, const Tensor& numCorrect,
                                  LossType lossType, const poplar::DebugContext& dc) {
  Sequence prog;
  calcLoss(graph, outputs, expected, loss, deltas, lossType, prog, dc);
  prog.add(calcAccuracy(graph, outputs, expected, numCorrect, dc));
  return prog;
}

poplar::program::Program calcLoss(poplar::Graph& graph, const Tensor& outputs,
                                  const Tensor& expected, const Tensor& loss,
                                  const Tensor& deltas, const Tensor& deltasScale,
                                  const Tensor& modelOutputScaling, const Tensor& numCorrect,
                                  LossType lossType, const poplar::DebugContext& dc) {
  Sequence prog;
  loss_and_deltas(graph, outputs, expected, loss, deltas, deltasScale, modelOutputScaling,
                  lossType, prog, dc);
  prog.add(calcAccuracy(graph, outputs, expected, numCorrect, dc));
  return prog;
}

Tensor topK(poplar::Graph& graph, const Tensor& input, Tensor& indices, unsigned K, bool sort,
            Sequence& prog, const poplar::DebugContext& dc) {
  if (input.rank() != 2)
    throw poputil::poplibs_error(fmt::format(
        "popnn::topK: the input must be [batch][values]; its shape is {{{}}}",
        fmt::join(input.shape(), ",")));
  auto [values, at] = popops::topKWithPermutation(
      graph, prog, input,
      popops::TopKParams(K, true, sort ? popops::SortOrder::DESCENDING : popops::SortOrder::NONE),
      dc);
  indices = at;
  return values;
}

}  // namespace popnn

namespace poprand {

using namespace tessera::ipu::poplibs;
using poplar::Tensor;
using poplar::program::Sequence;

void addCodelets(poplar::Graph& graph) {
  register_codelet(graph, "poprand::Random", rand_desc(),
                   [](const poplar::VertexIntrospector& v, const poplar::Target&) {
                     return poplar::VertexPerfEstimate(20 + v.getFieldInfo("out").totalElements());
                   });
}

namespace {

Tensor generate(poplar::Graph& graph, const Tensor* seed, std::uint32_t modifier,
                const Tensor* input, const Tensor& reference, Type outType, unsigned dist,
                double a, double b, double c, Sequence& prog, const poplar::DebugContext& dc,
                const char* kind) {
  require_codelets(graph, "poprand", "poprand::Random");
  Tensor s;
  if (seed) {
    if (seed->numElements() != 2 || seed->elementType() != poplar::UNSIGNED_INT)
      throw poputil::poplibs_error(fmt::format(
          "poprand::{}: the seed must be a tensor of 2 unsigned ints; it is {} of {} elements",
          kind, seed->elementType().toString(), seed->numElements()));
    s = seed->flatten();
  }
  if (dist == 4 && input->shape() != reference.shape())
    throw poputil::poplibs_error("poprand::dropout: input and reference must have the same shape");
  Tensor out = graph.addVariable(outType, reference.shape(), {dc, kind});
  graph.setTileMapping(out, graph.getTileMapping(reference));
  std::string vertex = templated(std::string("poprand::") + kind, {type_arg(outType)});
  bool normal = dist == 1 || dist == 2;
  register_codelet(graph, vertex, rand_desc(),
                   [normal](const poplar::VertexIntrospector& v, const poplar::Target& t) {
                     // A hardware PRNG draw per 64 bits plus scaling; normals cost a transform.
                     std::uint64_t n = v.getFieldInfo("out").totalElements();
                     std::uint64_t per = (n + t.getNumWorkerContexts() - 1) / t.getNumWorkerContexts();
                     return poplar::VertexPerfEstimate(20 + per * (normal ? 12 : 2));
                   });
  Tensor flat = out.flatten();
  Tensor in_flat = input ? input->flatten() : Tensor();
  auto mapping = graph.getTileMapping(flat);
  auto cs = graph.addComputeSet(name_of(dc, kind));
  for (unsigned tile = 0; tile < mapping.size(); ++tile) {
    if (mapping[tile].empty()) continue;
    auto v = graph.addVertex(cs, vertex);
    std::vector<Tensor> outs, ins;
    std::vector<unsigned> params = {dist, outType.tesseraId(), modifier};
    for (double x : {a, b, c})
      for (unsigned w : words(x)) params.push_back(w);
    for (const auto& iv : mapping[tile]) {
      outs.push_back(flat.slice(iv.begin(), iv.end()));
      if (input) ins.push_back(in_flat.slice(iv.begin(), iv.end()));
      params.push_back(unsigned(iv.begin()));
    }
    // Without a seed tensor, each tile draws from its own hardware seed (poplar/RandomSeed.hpp).
    graph.connect(v["seed"], seed ? s : graph.tesseraHwSeeds()[tile].flatten().slice(0, 2));
    graph.connect(v["out"], poplar::ArrayRef<Tensor>(outs));
    graph.connect(v["in"], poplar::ArrayRef<Tensor>(ins));
    set_state(graph, v, "params", params);
    graph.setTileMapping(v, tile);
  }
  prog.add(poplar::program::Execute(cs, dc));
  return out;
}

}  // namespace

void setSeed(poplar::Graph& graph, const Tensor& masterSeed, std::uint32_t seedModifier,
             Sequence& prog, const poplar::DebugContext& dc) {
  if (!masterSeed.valid() || masterSeed.numElements() != 2 ||
      masterSeed.elementType() != poplar::UNSIGNED_INT)
    throw poputil::poplibs_error(fmt::format(
        "poprand::setSeed: the master seed must be a tensor of 2 unsigned ints; it is {} {{{}}}. "
        "Add it with graph.addVariable(UNSIGNED_INT, {{2}})",
        masterSeed.valid() ? masterSeed.elementType().toString() : "invalid",
        fmt::join(masterSeed.valid() ? masterSeed.shape() : std::vector<std::size_t>{}, ",")));
  // On the IPU Model every tile keeps one hard-coded seed: setSeed does nothing (spec 001 §2,
  // "Programming with Poplar"). Only an IPU target's tiles take the seed.
  if (graph.getTarget().getTargetType() != poplar::TargetType::IPU) return;
  require_codelets(graph, "poprand", "poprand::Random");
  register_codelet(graph, "poprand::SetSeedSupervisor", set_seed_desc(),
                   [](const poplar::VertexIntrospector&, const poplar::Target&) {
                     // Spec 001 §8.2.3's sample report: 177,536 cycles over 1,216 instances.
                     return poplar::VertexPerfEstimate(146);
                   });
  Tensor hw = graph.tesseraHwSeeds();
  Tensor s = masterSeed.flatten();
  auto cs = graph.addComputeSet(name_of(dc, "setSeed"));
  for (unsigned tile = 0; tile < graph.getTarget().getNumTiles(); ++tile) {
    auto v = graph.addVertex(cs, "poprand::SetSeedSupervisor");
    graph.connect(v["seed"], s);
    graph.connect(v["hwSeeds"], hw[tile].flatten());
    set_state(graph, v, "params", {seedModifier, tile});
    graph.setTileMapping(v, tile);
  }
  prog.add(poplar::program::Execute(cs, dc));
}

Tensor uniform(poplar::Graph& graph, const Tensor* seed, std::uint32_t seedModifier,
               const Tensor& reference, const poplar::Type& outType, double minVal, double maxVal,
               Sequence& prog, const poplar::DebugContext& dc) {
  if (!(minVal <= maxVal))
    throw poputil::poplibs_error(fmt::format("poprand::uniform: minVal {} > maxVal {}", minVal, maxVal));
  return generate(graph, seed, seedModifier, nullptr, reference, outType, 0, minVal, maxVal, 0,
                  prog, dc, "Uniform");
}

Tensor normal(poplar::Graph& graph, const Tensor* seed, std::uint32_t seedModifier,
              const Tensor& reference, const poplar::Type& outType, double mean, double stdDev,
              Sequence& prog, const poplar::DebugContext& dc) {
  return generate(graph, seed, seedModifier, nullptr, reference, outType, 1, mean, stdDev, 0, prog,
                  dc, "Normal");
}

Tensor truncatedNormal(poplar::Graph& graph, const Tensor* seed, std::uint32_t seedModifier,
                       const Tensor& reference, const poplar::Type& outType, double mean,
                       double stdDev, double alpha, Sequence& prog,
                       const poplar::DebugContext& dc) {
  if (!(alpha > 0))
    throw poputil::poplibs_error(fmt::format("poprand::truncatedNormal: alpha is {}; it must be > 0", alpha));
  return generate(graph, seed, seedModifier, nullptr, reference, outType, 2, mean, stdDev, alpha,
                  prog, dc, "TruncatedNormal");
}

Tensor bernoulli(poplar::Graph& graph, const Tensor* seed, std::uint32_t seedModifier,
                 const Tensor& reference, const poplar::Type& outType, double prob,
                 Sequence& prog, const poplar::DebugContext& dc) {
  if (!(prob >= 0 && prob <= 1))
    throw poputil::poplibs_error(fmt::format("poprand::bernoulli: probability {} is outside [0, 1]", prob));
  return generate(graph, seed, seedModifier, nullptr, reference, outType, 3, prob, 0, 0, prog, dc,
                  "Bernoulli");
}

Tensor dropout(poplar::Graph& graph, const Tensor* seed, std::uint32_t seedModifier,
               const Tensor& input, const Tensor& reference, double keepProbability, double scale,
               Sequence& prog, const poplar::DebugContext& dc) {
  if (!(keepProbability >= 0 && keepProbability <= 1))
    throw poputil::poplibs_error(fmt::format(
        "poprand::dropout: keepProbability {} is outside [0, 1]", keepProbability));
  return generate(graph, seed, seedModifier, &input, reference, input.elementType(), 4,
                  keepProbability, scale, 0, prog, dc, "Dropout");
}

}  // namespace poprand
