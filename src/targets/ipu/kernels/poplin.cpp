// poplin: matrix products and convolutions split over tiles by a planner that estimates each
// candidate split's compute (AMP rate of the preset), exchange (bytes in over the exchange
// bandwidth) and syncs, as the BSP engine will charge them, and keeps the cheapest that fits in
// tile memory. The AMP-style codelets compute with ops::sgemm on the host.
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include <poplin/Convolution.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popops/Cast.hpp>
#include <popops/ElementWise.hpp>
#include <poputil/TileMapping.hpp>

#include "elementwise.h"
#include "tessera/core/log.h"
#include "tessera/ops/gemm.h"

namespace tessera::ipu::poplibs {

namespace {

// Loads n elements as floats (into `tmp` unless they already are floats).
const float* as_floats(const void* p, unsigned type, std::size_t n, std::vector<float>& tmp) {
  if (type == poplar::FLOAT.tesseraId()) return static_cast<const float*>(p);
  tmp.resize(n);
  if (type == poplar::HALF.tesseraId()) {
    const auto* h = static_cast<const _Float16*>(p);
    for (std::size_t i = 0; i < n; ++i) tmp[i] = static_cast<float>(h[i]);
  } else {
    std::vector<double> d(n);
    load_elements(p, type, n, d.data());
    for (std::size_t i = 0; i < n; ++i) tmp[i] = static_cast<float>(d[i]);
  }
  return tmp.data();
}

void store_floats(void* p, unsigned type, const float* src, std::size_t n) {
  if (type == poplar::FLOAT.tesseraId()) {
    std::memcpy(p, src, n * sizeof(float));
  } else if (type == poplar::HALF.tesseraId()) {
    auto* h = static_cast<_Float16*>(p);
    for (std::size_t i = 0; i < n; ++i) h[i] = static_cast<_Float16>(src[i]);
  } else {
    std::vector<double> d(src, src + n);
    store_elements(p, type, n, d.data());
  }
}

}  // namespace

// out[m][n] = in[m][k] x weights[k][n] on one tile. params: m, n, k, in type, out type. The host
// computes the whole block in worker 0's call (one sgemm); the estimate charges each worker its
// share of the rows, as PopLibs' AMP vertex splits the output over the workers.
class ConvPartial1x1Out : public poplar::MultiVertex {
 public:
  poplar::Input<poplar::Vector<Byte>> in;
  poplar::Input<poplar::Vector<Byte>> weights;
  poplar::Output<poplar::Vector<Byte>> out;
  poplar::Vector<unsigned> params;

  bool compute(unsigned w) {
    if (w != 0) return true;
    std::size_t m = params[0], n = params[1], k = params[2];
    unsigned it = params[3], ot = params[4];
    thread_local std::vector<float> ta, tb, tc;
    const float* a = as_floats(in.data(), it, m * k, ta);
    const float* b = as_floats(weights.data(), it, k * n, tb);
    tc.resize(m * n);
    ops::sgemm(false, false, std::int64_t(m), std::int64_t(n), std::int64_t(k), 1.0f, a,
               std::int64_t(k), b, std::int64_t(n), 0.0f, tc.data(), std::int64_t(n));
    store_floats(out.data(), ot, tc.data(), m * n);
    return true;
  }
};

// A convolution of one batch entry and group over a range of output channels and rows: the input
// rows it needs [ic][ihRows][W], weights [ocb][ic][KH][KW], out [ocb][ohRows][OW].
// params: ic, ih0, ihRows, W, ocb, oh0, ohRows, OW, KH, KW, sH, sW, dH, dW, padT, padL, in type,
// out type (pads as unsigned bit patterns of int).
class ConvPartialnx1 : public poplar::MultiVertex {
 public:
  poplar::Input<poplar::Vector<Byte>> in;
  poplar::Input<poplar::Vector<Byte>> weights;
  poplar::Output<poplar::Vector<Byte>> out;
  poplar::Vector<unsigned> params;

  bool compute(unsigned w) {
    if (w != 0) return true;
    const unsigned* p = params.data();
    std::size_t ic = p[0], ih0 = p[1], ihr = p[2], W = p[3], ocb = p[4], oh0 = p[5], ohr = p[6],
                OW = p[7], KH = p[8], KW = p[9], sH = p[10], sW = p[11], dH = p[12], dW = p[13];
    long padT = static_cast<int>(p[14]), padL = static_cast<int>(p[15]);
    unsigned it = p[16], ot = p[17];
    thread_local std::vector<float> ti, tw, cols, res;
    const float* x = as_floats(in.data(), it, ic * ihr * W, ti);
    const float* wt = as_floats(weights.data(), it, ocb * ic * KH * KW, tw);
    std::size_t P = ohr * OW, K = ic * KH * KW;
    cols.assign(P * K, 0.0f);
    for (std::size_t oh = 0; oh < ohr; ++oh)
      for (std::size_t ow = 0; ow < OW; ++ow) {
        float* row = cols.data() + (oh * OW + ow) * K;
        for (std::size_t c = 0; c < ic; ++c)
          for (std::size_t kh = 0; kh < KH; ++kh) {
            long ih = long((oh0 + oh) * sH + kh * dH) - padT - long(ih0);
            if (ih < 0 || ih >= long(ihr)) continue;
            const float* src = x + (c * ihr + std::size_t(ih)) * W;
            for (std::size_t kw = 0; kw < KW; ++kw) {
              long iw = long(ow * sW + kw * dW) - padL;
              if (iw >= 0 && iw < long(W)) row[(c * KH + kh) * KW + kw] = src[iw];
            }
          }
      }
    res.resize(ocb * P);
    ops::sgemm(false, true, std::int64_t(ocb), std::int64_t(P), std::int64_t(K), 1.0f, wt,
               std::int64_t(K), cols.data(), std::int64_t(K), 0.0f, res.data(), std::int64_t(P));
    store_floats(out.data(), ot, res.data(), ocb * P);
    return true;
  }
};

// acts[i] += addend[channel of i - c0] over a tile's runs of [N][C][inner...] activations, the
// channel of flat element i being (i / inner) % C. params: inner, C, c0, type, then each run's
// first flat element. Each worker takes its share of every run.
class AddToChannel : public poplar::MultiVertex {
 public:
  poplar::InOut<poplar::VectorList<Byte>> acts;
  poplar::Input<poplar::Vector<Byte>> addend;
  poplar::Vector<unsigned> params;

  bool compute(unsigned w) {
    std::size_t inner = params[0], C = params[1], c0 = params[2];
    unsigned type = params[3];
    thread_local std::vector<float> bias, run;
    const float* b = as_floats(addend.data(), type, addend.size(), bias);
    for (std::size_t r = 0; r < acts.size(); ++r) {
      std::size_t len = acts[r].size(), lo = len * w / numWorkers(), hi = len * (w + 1) / numWorkers();
      if (lo == hi) continue;
      unsigned char* base = reinterpret_cast<unsigned char*>(acts[r].data());
      std::size_t es = type_bytes(type), first = params[4 + r] + lo;
      float* x = const_cast<float*>(as_floats(base + lo * es, type, hi - lo, run));
      for (std::size_t i = 0; i < hi - lo; ++i) x[i] += b[(first + i) / inner % C - c0];
      if (type != poplar::FLOAT.tesseraId()) store_floats(base + lo * es, type, x, hi - lo);
    }
    return true;
  }
};

namespace {

const abi::FieldDesc kAmpFields[] = {
    TESSERA_IPU_FIELD(ConvPartial1x1Out, in), TESSERA_IPU_FIELD(ConvPartial1x1Out, weights),
    TESSERA_IPU_FIELD(ConvPartial1x1Out, out), TESSERA_IPU_FIELD(ConvPartial1x1Out, params)};
const abi::FieldDesc kConvFields[] = {
    TESSERA_IPU_FIELD(ConvPartialnx1, in), TESSERA_IPU_FIELD(ConvPartialnx1, weights),
    TESSERA_IPU_FIELD(ConvPartialnx1, out), TESSERA_IPU_FIELD(ConvPartialnx1, params)};
const abi::FieldDesc kChannelFields[] = {TESSERA_IPU_FIELD(AddToChannel, acts),
                                         TESSERA_IPU_FIELD(AddToChannel, addend),
                                         TESSERA_IPU_FIELD(AddToChannel, params)};
const char* const kNone[] = {nullptr};

// PopLibs' per-channel add (popops::AddToChannel): per worker, each 64-bit vector of output a
// load of activations and addend and a store (as the element-wise codelets charge it), plus
// ~20 cycles of entry and work split (estimate).
const abi::VertexTypeDesc& channel_desc() {
  static const abi::VertexTypeDesc desc = poplar::detail::describe_vertex<AddToChannel>(
      "popops::AddToChannel", kChannelFields, 3, kNone);
  return desc;
}
const abi::VertexTypeDesc& amp_desc(bool conv) {
  static const abi::VertexTypeDesc amp = poplar::detail::describe_vertex<ConvPartial1x1Out>(
      "poplin::ConvPartial1x1Out", kAmpFields, 4, kNone);
  static const abi::VertexTypeDesc cv = poplar::detail::describe_vertex<ConvPartialnx1>(
      "poplin::ConvPartialnx1", kConvFields, 4, kNone);
  return conv ? cv : amp;
}

std::string add_to_channel_vertex(Graph& graph, Type t) {
  std::string name = templated("popops::AddToChannel", {type_arg(t)});
  register_codelet(graph, name, channel_desc(), [t](const poplar::VertexIntrospector& v, const poplar::Target& target) {
    unsigned workers = target.getNumWorkerContexts();
    std::uint64_t width = std::max(1u, target.getVectorWidth(t));
    std::uint64_t per = (v.getFieldInfo("acts").totalElements() + workers - 1) / workers;
    return poplar::VertexPerfEstimate(20 + (per + width - 1) / width * 2);
  });
  return name;
}

// The preset's AMP rate: MACs per cycle per tile for half inputs; a quarter of it for float
// (Graphcore publishes 250 TFLOPS fp16 and 62.5 TFLOPS fp32 for the GC200).
double amp_rate(const poplar::Target& t, Type in) {
  double r = double(poplar::detail::param_u64(t.tesseraSpec(), "ipu.amp_macs_per_cycle"));
  return in == poplar::HALF ? r : r / 4;
}

// Tile cycles of an AMP product of `macs` MACs, shaped as PopLibs' public estimate of its
// ConvPartial1x1Out supervisor vertex (lib/poplin/PerformanceEstimation.hpp): a supervisor
// overhead of about 50 cycles, each worker's fixed cost (about 16 for its work list plus 44 per
// partition) charged x numWorkerContexts, and the core loop, which runs at the AMP rate.
std::uint64_t amp_cycles(const poplar::Target& t, Type in, std::uint64_t macs, std::uint64_t) {
  unsigned workers = t.getNumWorkerContexts();
  return 50 + 60 * workers + std::uint64_t(std::ceil(double(macs) / amp_rate(t, in)));
}

// Registers the per-worker estimate (the engine charges a tile `workers` x its busiest worker).
// Matrix products: in [m][k], weights [k][n], out [m][n], so k^2 = |in| |weights| / |out|.
// Convolutions carry K = ic x KH x KW in the name (one codelet per window volume, as PopLibs
// instantiates its convolution vertices per kernel geometry): MACs = |out| x K.
std::string amp_vertex(Graph& graph, bool conv, Type in, Type out, std::size_t window = 0) {
  std::string name = conv ? templated("poplin::ConvPartialnx1",
                                      {type_arg(in), type_arg(out), std::to_string(window)})
                          : templated("poplin::ConvPartial1x1Out", {type_arg(in), type_arg(out)});
  register_codelet(graph, name, amp_desc(conv),
                   [in, conv, window](const poplar::VertexIntrospector& v, const poplar::Target& t) {
                     double outs = double(v.getFieldInfo("out").totalElements());
                     double ws = double(v.getFieldInfo("weights").totalElements());
                     double ins = double(v.getFieldInfo("in").totalElements());
                     double k = conv ? double(window) : std::sqrt(ins * ws / std::max(1.0, outs));
                     double rows = conv ? outs / std::max(1.0, ws / std::max(1.0, k))
                                        : ins / std::max(1.0, k);
                     auto macs = std::uint64_t(std::llround(outs * k));
                     unsigned workers = t.getNumWorkerContexts();
                     return poplar::VertexPerfEstimate(
                         (amp_cycles(t, in, macs, std::uint64_t(rows)) + workers - 1) / workers,
                         2 * macs);
                   });
  return name;
}

}  // namespace
std::vector<const abi::VertexTypeDesc*> poplin_descs() {
  return {&channel_desc(), &amp_desc(false), &amp_desc(true)};
}

}  // namespace tessera::ipu::poplibs

namespace poplin {

using namespace tessera::ipu::poplibs;
using poplar::Tensor;
using poplar::Type;

PlanningCache::PlanningCache() = default;
PlanningCache::~PlanningCache() = default;

namespace {

struct Costs {
  unsigned tiles, workers;
  double bytes_per_cycle, setup, sync, memory;
};

Costs costs_of(const poplar::Graph& g, const poplar::OptionFlags& options) {
  const auto& spec = g.getTarget().tesseraSpec();
  Costs c;
  c.tiles = g.getTarget().getNumTiles();
  c.workers = g.getTarget().getNumWorkerContexts();
  c.bytes_per_cycle = g.getTarget().getExchangeBytesPerCycle();
  c.setup = double(poplar::detail::param_u64(spec, "ipu.exchange_setup_cycles"));
  c.sync = double(poplar::detail::param_u64(spec, "ipu.sync_cycles"));
  // PopLibs' "availableMemoryProportion" (default 0.6): the share of tile memory a plan may use.
  c.memory = option_double(options, "availableMemoryProportion", 0.6) * g.getTarget().getBytesPerTile();
  return c;
}

Type partials_of(const poplar::OptionFlags& options, Type in) {
  std::string p = option_str(options, "partialsType", in == poplar::HALF ? "float" : in.toString());
  if (p == "half") return poplar::HALF;
  if (p == "float") return poplar::FLOAT;
  throw poputil::poplibs_error(
      fmt::format("poplin: option partialsType is '{}'; use \"half\" or \"float\"", p));
}

std::uint64_t cdiv(std::uint64_t a, std::uint64_t b) {
  return b == 0 ? 0 : (a + b - 1) / b;
}

// A candidate split's estimate: the cycles the engine will charge and the tile memory it needs.
struct SplitCost {
  double cycles = 0, bytes = 0;
};
using Splits = std::vector<std::size_t>;

// The planners' search: every split of `dims` (a count per dimension from `counts(size, limit)`,
// their product within `tiles`), in order, keeping the cheapest whose memory fits `c.memory`;
// when none fits, the one needing the least memory (the Engine then says which tile is over).
Splits best_split(const std::vector<std::size_t>& dims, const Costs& c,
                  const std::function<std::vector<std::size_t>(std::size_t, std::size_t)>& counts,
                  const std::function<SplitCost(const Splits&)>& estimate, double* cycles) {
  Splits cur(dims.size(), 1), best, least;
  double best_cycles = std::numeric_limits<double>::infinity(), least_cycles = 0;
  double least_bytes = std::numeric_limits<double>::infinity();
  std::function<void(std::size_t, std::size_t)> search = [&](std::size_t d, std::size_t left) {
    if (d == dims.size()) {
      SplitCost e = estimate(cur);
      if (e.bytes > c.memory) {
        if (e.bytes < least_bytes) least_bytes = e.bytes, least = cur, least_cycles = e.cycles;
      } else if (e.cycles < best_cycles) {
        best_cycles = e.cycles, best = cur;
      }
      return;
    }
    for (std::size_t n : counts(dims[d], left)) {
      cur[d] = n;
      search(d + 1, left / n);
    }
  };
  search(0, std::max<std::size_t>(1, c.tiles));
  if (best.empty()) {
    *cycles = least_cycles;
    return least;
  }
  *cycles = best_cycles;
  return best;
}

// Every count from 1 to min(size, limit): the matrix planner tries them all.
std::vector<std::size_t> every_count(std::size_t size, std::size_t limit) {
  std::vector<std::size_t> out;
  for (std::size_t i = 1; i <= std::min(size, limit); ++i) out.push_back(i);
  return out;
}

detail::MatMulPlan plan_matmul(const poplar::Graph& g, std::size_t G, std::size_t M,
                               std::size_t K, std::size_t N, Type in, Type out,
                               const poplar::OptionFlags& options, PlanningCache* cache) {
  Type pt = partials_of(options, in);
  std::string key = fmt::format("{}x{}x{}x{} {} {} {} {} tiles {}", G, M, K, N, in.toString(),
                                out.toString(), pt.toString(),
                                option_double(options, "availableMemoryProportion", 0.6),
                                g.getTarget().getNumTiles());
  if (cache) {
    auto it = cache->plans.find(key);
    if (it != cache->plans.end()) return it->second;
  }
  Costs c = costs_of(g, options);
  const auto& target = g.getTarget();
  double ib = in.tesseraSize(), pb = pt.tesseraSize(), ob = out.tesseraSize();
  unsigned T = std::max<unsigned>(1, unsigned(c.tiles / std::max<std::size_t>(1, G)));
  Costs group = c;
  group.tiles = T;
  auto estimate = [&](const Splits& s) {
    double m = double(s[0]), n = double(s[1]), k = double(s[2]);
    double mb = double(cdiv(M, s[0])), nb = double(cdiv(N, s[1])), kb = double(cdiv(K, s[2]));
    double compute = double(amp_cycles(target, in, std::uint64_t(mb * nb * kb), std::uint64_t(mb)));
    // Receive both blocks (less the share held here); send the held shares once.
    double recv = (mb * kb * (1 - 1.0 / n) + kb * nb * (1 - 1.0 / m)) * ib;
    double send = (mb * kb / n + kb * nb / m) * ib;
    SplitCost e;
    e.cycles = compute + c.setup + (recv + send) / c.bytes_per_cycle + c.sync;
    e.bytes = (mb * kb + kb * nb) * ib + mb * nb * (s[2] > 1 ? pb : ob) + mb * nb * ob / k;
    if (s[2] > 1) {
      double outs = mb * nb / k;
      double moved = 2 * outs * (k - 1) * pb;
      double width = std::max(1.0, 8.0 / pb);
      // The partials' sum as the element-wise codelet's estimate charges it.
      double per_vector = std::max(double((s[2] + 1) / 2 + 1), k - 1 + (pt != out ? 1 : 0));
      e.cycles += c.setup + moved / c.bytes_per_cycle + c.sync +
                  c.workers * (20 + std::ceil(outs / c.workers / width) * per_vector);
    }
    return e;
  };
  double cycles = 0;
  Splits s = best_split({M, N, K}, group, every_count, estimate, &cycles);
  detail::MatMulPlan best{T, unsigned(s[0]), unsigned(s[1]), unsigned(s[2]), std::size_t(cycles)};
  if (cache) cache->plans[key] = best;
  return best;
}

struct Blocks {
  detail::MatMulPlan plan;
  std::size_t G, M, K, N;
  unsigned tile(std::size_t g, std::size_t i, std::size_t j, std::size_t kk, unsigned tiles) const {
    if (G > tiles) return unsigned(g % tiles);
    std::size_t idx = (i * plan.nSplit + j) * plan.kSplit + kk;
    return unsigned(g * plan.groupTiles + idx);
  }
  std::size_t mb(std::size_t i) const { return split_begin(M, plan.mSplit, i); }
  std::size_t nb(std::size_t j) const { return split_begin(N, plan.nSplit, j); }
  std::size_t kb(std::size_t k) const { return split_begin(K, plan.kSplit, k); }
};

// Each block of an operand is shared by the vertices of the third split dimension: its rows
// [r0, r1) are cut `parts` ways, part p on tile_of(p), so every reader holds a piece.
template <typename TileOf>
void map_block_rows(poplar::Graph& g, const Tensor& t, std::size_t r0, std::size_t r1,
                    std::size_t c0, std::size_t c1, std::size_t parts, TileOf tile_of) {
  for (std::size_t p = 0; p < parts; ++p) {
    const std::size_t a = split_begin(r1 - r0, parts, p), e = split_begin(r1 - r0, parts, p + 1);
    if (a != e) g.setTileMapping(t.slice({r0 + a, c0}, {r0 + e, c1}), tile_of(p));
  }
}

void map_lhs(poplar::Graph& g, const Tensor& A3, const Blocks& b) {
  unsigned T = g.getTarget().getNumTiles();
  for (std::size_t gr = 0; gr < b.G; ++gr)
    for (std::size_t i = 0; i < b.plan.mSplit; ++i)
      for (std::size_t kk = 0; kk < b.plan.kSplit; ++kk)
        map_block_rows(g, A3[gr], b.mb(i), b.mb(i + 1), b.kb(kk), b.kb(kk + 1), b.plan.nSplit,
                       [&](std::size_t j) { return b.tile(gr, i, j, kk, T); });
}

void map_rhs(poplar::Graph& g, const Tensor& B3, const Blocks& b) {
  unsigned T = g.getTarget().getNumTiles();
  for (std::size_t gr = 0; gr < b.G; ++gr)
    for (std::size_t kk = 0; kk < b.plan.kSplit; ++kk)
      for (std::size_t j = 0; j < b.plan.nSplit; ++j)
        map_block_rows(g, B3[gr], b.kb(kk), b.kb(kk + 1), b.nb(j), b.nb(j + 1), b.plan.mSplit,
                       [&](std::size_t i) { return b.tile(gr, i, j, kk, T); });
}

void map_out(poplar::Graph& g, const Tensor& C3, const Blocks& b) {
  unsigned T = g.getTarget().getNumTiles();
  for (std::size_t gr = 0; gr < b.G; ++gr)
    for (std::size_t i = 0; i < b.plan.mSplit; ++i)
      for (std::size_t j = 0; j < b.plan.nSplit; ++j)
        map_block_rows(g, C3[gr], b.mb(i), b.mb(i + 1), b.nb(j), b.nb(j + 1), b.plan.kSplit,
                       [&](std::size_t kk) { return b.tile(gr, i, j, kk, T); });
}

void check_operands(const Tensor& A, const Tensor& B, unsigned rank, const char* fn) {
  if (A.rank() != rank || B.rank() != rank)
    throw poputil::poplibs_error(fmt::format("poplin::{}: operands must have {} dimensions; A is "
                                             "{{{}}}, B {{{}}}",
                                             fn, rank, fmt::join(A.shape(), ","), fmt::join(B.shape(), ",")));
  if (A.dim(rank - 1) != B.dim(rank - 2) || (rank == 3 && A.dim(0) != B.dim(0)))
    throw poputil::poplibs_error(fmt::format(
        "poplin::{}: A {{{}}} and B {{{}}} do not multiply (A's columns must equal B's rows{})", fn,
        fmt::join(A.shape(), ","), fmt::join(B.shape(), ","), rank == 3 ? " and groups match" : ""));
  if (A.elementType() != B.elementType())
    throw poputil::poplibs_error(fmt::format("poplin::{}: A holds {} and B {}; cast one of them", fn,
                                             A.elementType().toString(), B.elementType().toString()));
}

Tensor matmul_impl(poplar::Graph& graph, const Tensor& A3, const Tensor& B3,
                   poplar::program::Sequence& prog, Type outType, const poplar::DebugContext& dc,
                   const poplar::OptionFlags& options, PlanningCache* cache) {
  require_codelets(graph, "poplin", "poplin::ConvPartial1x1Out");
  require_codelets(graph, "popops", "popops::MapExpr");
  std::size_t G = A3.dim(0), M = A3.dim(1), K = A3.dim(2), N = B3.dim(2);
  Type in = A3.elementType();
  Blocks b{plan_matmul(graph, G, M, K, N, in, outType, options, cache), G, M, K, N};
  unsigned T = graph.getTarget().getNumTiles();
  Type pt = b.plan.kSplit > 1 ? partials_of(options, in) : outType;
  std::string plan = fmt::format("plan {}x{}x{} over {} tiles, ~{} cycles", b.plan.mSplit,
                                 b.plan.nSplit, b.plan.kSplit, b.plan.groupTiles, b.plan.estimatedCycles);
  tessera::log(tessera::LogLevel::info, "poplin", "matMul {} [{}x{}]x[{}x{}] x{}: {}",
               dc.getPathName(), M, K, K, N, G, plan);
  Tensor C = graph.addVariable(outType, {G, M, N}, {dc, "matmul"});
  map_out(graph, C, b);
  Tensor P = C.expand({0});
  if (b.plan.kSplit > 1) {
    P = graph.addVariable(pt, {b.plan.kSplit, G, M, N}, {dc, "partials"});
    for (std::size_t kk = 0; kk < b.plan.kSplit; ++kk)
      for (std::size_t gr = 0; gr < G; ++gr)
        for (std::size_t i = 0; i < b.plan.mSplit; ++i)
          for (std::size_t j = 0; j < b.plan.nSplit; ++j)
            graph.setTileMapping(P[kk][gr].slice({b.mb(i), b.nb(j)}, {b.mb(i + 1), b.nb(j + 1)}),
                                 b.tile(gr, i, j, kk, T));
  }
  std::string vertex = amp_vertex(graph, false, in, pt);
  auto cs = graph.addComputeSet(name_of(dc, "matMul/" + plan));
  for (std::size_t gr = 0; gr < G; ++gr)
    for (std::size_t i = 0; i < b.plan.mSplit; ++i)
      for (std::size_t j = 0; j < b.plan.nSplit; ++j)
        for (std::size_t kk = 0; kk < b.plan.kSplit; ++kk) {
          std::size_t r0 = b.mb(i), r1 = b.mb(i + 1), c0 = b.nb(j), c1 = b.nb(j + 1),
                      k0 = b.kb(kk), k1 = b.kb(kk + 1);
          if (r0 == r1 || c0 == c1 || k0 == k1) continue;
          auto v = graph.addVertex(cs, vertex);
          graph.connect(v["in"], A3[gr].slice({r0, k0}, {r1, k1}));
          graph.connect(v["weights"], B3[gr].slice({k0, c0}, {k1, c1}));
          graph.connect(v["out"], P[b.plan.kSplit > 1 ? kk : 0][gr].slice({r0, c0}, {r1, c1}));
          set_state(graph, v, "params",
                    {unsigned(r1 - r0), unsigned(c1 - c0), unsigned(k1 - k0), in.tesseraId(),
                     pt.tesseraId()});
          graph.setTileMapping(v, b.tile(gr, i, j, kk, T));
        }
  prog.add(poplar::program::Execute(cs, dc));
  if (b.plan.kSplit > 1) {
    // The k partials of each output summed where the output lies.
    using namespace popops::expr;
    std::vector<Tensor> parts;
    for (std::size_t kk = 0; kk < b.plan.kSplit; ++kk) parts.push_back(P[kk]);
    std::unique_ptr<Expr> sum = _1.clone();
    for (unsigned kk = 1; kk < b.plan.kSplit; ++kk) sum = Add(*sum, PlaceHolder(kk + 1)).clone();
    if (pt != outType) sum = Cast(*sum, outType).clone();
    ElementProgram p = compile_expr(*sum, std::vector<Type>(parts.size(), pt));
    auto rcs = graph.addComputeSet(name_of(dc, "matMul/reducePartials"));
    add_elementwise_vertices(graph, rcs, p, parts, C, false,
                             templated("poplin::ReducePartials", {type_arg(pt), type_arg(outType),
                                                                  std::to_string(b.plan.kSplit)}));
    prog.add(poplar::program::Execute(rcs, dc));
  }
  return C;
}

}  // namespace

Tensor matMul(poplar::Graph& graph, const Tensor& A, const Tensor& B,
              poplar::program::Sequence& prog, const poplar::Type& outputType,
              const poplar::DebugContext& dc, const poplar::OptionFlags& options,
              PlanningCache* cache) {
  check_operands(A, B, 2, "matMul");
  return matmul_impl(graph, A.expand({0}), B.expand({0}), prog, outputType, dc, options, cache)[0];
}

Tensor matMul(poplar::Graph& graph, const Tensor& A, const Tensor& B,
              poplar::program::Sequence& prog, const poplar::DebugContext& dc,
              const poplar::OptionFlags& options, PlanningCache* cache) {
  return matMul(graph, A, B, prog, A.elementType(), dc, options, cache);
}

void matMulAcc(poplar::Graph& graph, const Tensor& C, float k, const Tensor& A, const Tensor& B,
               poplar::program::Sequence& prog, const poplar::DebugContext& dc,
               const poplar::OptionFlags& options, PlanningCache* cache) {
  Tensor t = matMul(graph, A, B, prog, C.elementType(), dc, options, cache);
  if (t.shape() != C.shape())
    throw poputil::poplibs_error(fmt::format("poplin::matMulAcc: C is {{{}}} but A x B is {{{}}}",
                                             fmt::join(C.shape(), ","), fmt::join(t.shape(), ",")));
  using namespace popops::expr;
  popops::mapInPlace(graph, Add(_1, Mul(_2, Const(double(k), C.elementType()))), {C, t}, prog,
                     {dc, "accumulate"});
}

Tensor matMulGrouped(poplar::Graph& graph, const Tensor& A, const Tensor& B,
                     poplar::program::Sequence& prog, const poplar::Type& outputType,
                     const poplar::DebugContext& dc, const poplar::OptionFlags& options,
                     PlanningCache* cache) {
  check_operands(A, B, 3, "matMulGrouped");
  return matmul_impl(graph, A, B, prog, outputType, dc, options, cache);
}

namespace {
Tensor create_operand(poplar::Graph& graph, Type inType, Type outType,
                      const std::vector<std::size_t>& a, const std::vector<std::size_t>& bs,
                      bool lhs, const poplar::DebugContext& dc, const poplar::OptionFlags& options,
                      PlanningCache* cache) {
  bool grouped = a.size() == 3;
  if ((a.size() != 2 && a.size() != 3) || bs.size() != a.size() ||
      a[a.size() - 1] != bs[bs.size() - 2])
    throw poputil::poplibs_error(fmt::format(
        "poplin::createMatMulInput{}: shapes {{{}}} and {{{}}} do not multiply", lhs ? "LHS" : "RHS",
        fmt::join(a, ","), fmt::join(bs, ",")));
  std::size_t G = grouped ? a[0] : 1, M = a[a.size() - 2], K = a[a.size() - 1], N = bs[bs.size() - 1];
  Blocks b{plan_matmul(graph, G, M, K, N, inType, outType, options, cache), G, M, K, N};
  Tensor t = graph.addVariable(inType, lhs ? std::vector<std::size_t>{G, M, K} : std::vector<std::size_t>{G, K, N}, dc);
  if (lhs)
    map_lhs(graph, t, b);
  else
    map_rhs(graph, t, b);
  return grouped ? t : t[0];
}
}  // namespace

Tensor createMatMulInputLHS(poplar::Graph& graph, const poplar::Type& inputType,
                            const poplar::Type& outputType, const std::vector<std::size_t>& aShape,
                            const std::vector<std::size_t>& bShape, const poplar::DebugContext& dc,
                            const poplar::OptionFlags& options, PlanningCache* cache) {
  return create_operand(graph, inputType, outputType, aShape, bShape, true, dc, options, cache);
}
Tensor createMatMulInputLHS(poplar::Graph& graph, const poplar::Type& dataType,
                            const std::vector<std::size_t>& aShape,
                            const std::vector<std::size_t>& bShape, const poplar::DebugContext& dc,
                            const poplar::OptionFlags& options, PlanningCache* cache) {
  return create_operand(graph, dataType, dataType, aShape, bShape, true, dc, options, cache);
}
Tensor createMatMulInputRHS(poplar::Graph& graph, const poplar::Type& inputType,
                            const poplar::Type& outputType, const std::vector<std::size_t>& aShape,
                            const std::vector<std::size_t>& bShape, const poplar::DebugContext& dc,
                            const poplar::OptionFlags& options, PlanningCache* cache) {
  return create_operand(graph, inputType, outputType, aShape, bShape, false, dc, options, cache);
}
Tensor createMatMulInputRHS(poplar::Graph& graph, const poplar::Type& dataType,
                            const std::vector<std::size_t>& aShape,
                            const std::vector<std::size_t>& bShape, const poplar::DebugContext& dc,
                            const poplar::OptionFlags& options, PlanningCache* cache) {
  return create_operand(graph, dataType, dataType, aShape, bShape, false, dc, options, cache);
}

std::string reportPlan(const poplar::Graph& graph, const poplar::Type& inputType,
                       const poplar::Type& outputType, const std::vector<std::size_t>& aShape,
                       const std::vector<std::size_t>& bShape, const poplar::OptionFlags& options,
                       PlanningCache* cache) {
  std::size_t G = aShape.size() == 3 ? aShape[0] : 1;
  auto p = plan_matmul(graph, G, aShape[aShape.size() - 2], aShape.back(), bShape.back(),
                       inputType, outputType, options, cache);
  return fmt::format("matMul plan: {} x {} x {} (m x n x k) over {} tiles per group, estimated {} "
                     "cycles",
                     p.mSplit, p.nSplit, p.kSplit, p.groupTiles, p.estimatedCycles);
}

void addCodelets(poplar::Graph& graph) {
  amp_vertex(graph, false, poplar::HALF, poplar::FLOAT);
  // The generic codelet names that poplin's functions check for.
  auto none = [](const poplar::VertexIntrospector&, const poplar::Target&) {
    return poplar::VertexPerfEstimate(100);
  };
  register_codelet(graph, "poplin::ConvPartial1x1Out", amp_desc(false), none);
  register_codelet(graph, "poplin::ConvPartialnx1", amp_desc(true), none);
}

}  // namespace poplin

// ------------------------------------------------------------------------------- convolution
namespace poplin {

ConvParams::ConvParams(poplar::Type dataType, std::size_t batch, std::vector<std::size_t> field,
                       std::vector<std::size_t> kernel, std::size_t ic, std::size_t oc,
                       std::size_t groups)
    : ConvParams(dataType, dataType, batch, std::move(field), std::move(kernel), ic, oc, groups) {}

ConvParams::ConvParams(poplar::Type in, poplar::Type out, std::size_t batch,
                       std::vector<std::size_t> field, std::vector<std::size_t> kernel,
                       std::size_t ic, std::size_t oc, std::size_t groups)
    : inputType(in), outputType(out), batchSize(batch), inputFieldShape(std::move(field)),
      kernelShape(std::move(kernel)), inputChannelsPerConvGroup(ic),
      outputChannelsPerConvGroup(oc), numConvGroups(groups) {
  std::size_t d = inputFieldShape.size();
  inputTransform = {std::vector<unsigned>(d, 0), std::vector<unsigned>(d, 0),
                    std::vector<unsigned>(d, 1), std::vector<unsigned>(d, 0),
                    std::vector<unsigned>(d, 0), std::vector<bool>(d, false)};
  kernelTransform = inputTransform;
  outputTransform = {std::vector<unsigned>(d, 0), std::vector<unsigned>(d, 0),
                     std::vector<unsigned>(d, 1), std::vector<unsigned>(d, 0),
                     std::vector<unsigned>(d, 0)};
}

namespace {
unsigned at_or(const std::vector<unsigned>& v, std::size_t i, unsigned dflt) {
  return i < v.size() ? v[i] : dflt;
}
}  // namespace

std::size_t ConvParams::getOutputSize(unsigned d) const {
  long in = long(inputFieldShape.at(d)) + at_or(inputTransform.paddingLower, d, 0) +
            at_or(inputTransform.paddingUpper, d, 0);
  long k = long(at_or(kernelTransform.dilation, d, 1)) * (long(kernelShape.at(d)) - 1) + 1;
  if (in < k) return 0;
  return std::size_t((in - k) / at_or(outputTransform.stride, d, 1) + 1);
}

std::vector<std::size_t> ConvParams::getOutputFieldShape() const {
  std::vector<std::size_t> o;
  for (unsigned d = 0; d < inputFieldShape.size(); ++d) o.push_back(getOutputSize(d));
  return o;
}

std::ostream& operator<<(std::ostream& os, const ConvParams& p) {
  return os << "conv N=" << p.batchSize << " field={" << fmt::format("{}", fmt::join(p.inputFieldShape, ","))
            << "} kernel={" << fmt::format("{}", fmt::join(p.kernelShape, ",")) << "} ic="
            << p.inputChannelsPerConvGroup << " oc=" << p.outputChannelsPerConvGroup
            << " groups=" << p.numConvGroups;
}

namespace {

struct Geo {  // a 2-D view of the convolution (1-D fields have H = 1)
  std::size_t N, G, IC, OC, H, W, KH, KW, OH, OW, sH, sW, dH, dW;
  long padT, padL;
};

// Why Tessera's poplin cannot convolve `p`, or nullopt.
std::optional<std::string> geometry_problem(const ConvParams& p) {
  std::size_t d = p.inputFieldShape.size();
  if (d < 1 || d > 2 || p.kernelShape.size() != d)
    return fmt::format(
        "poplin::convolution: {} field dimensions with {} kernel dimensions; Tessera's poplin "
        "convolves 1-D and 2-D fields (one kernel size per field dimension)",
        d, p.kernelShape.size());
  auto nonzero = [](const std::vector<unsigned>& v) {
    return std::any_of(v.begin(), v.end(), [](unsigned x) { return x != 0; });
  };
  auto not_one = [](const std::vector<unsigned>& v) {
    return std::any_of(v.begin(), v.end(), [](unsigned x) { return x != 1; });
  };
  bool flips = std::any_of(p.inputTransform.flip.begin(), p.inputTransform.flip.end(), [](bool b) { return b; }) ||
               std::any_of(p.kernelTransform.flip.begin(), p.kernelTransform.flip.end(), [](bool b) { return b; });
  if (nonzero(p.inputTransform.truncationLower) || nonzero(p.inputTransform.truncationUpper) ||
      not_one(p.inputTransform.dilation) || nonzero(p.kernelTransform.truncationLower) ||
      nonzero(p.kernelTransform.truncationUpper) || nonzero(p.kernelTransform.paddingLower) ||
      nonzero(p.kernelTransform.paddingUpper) || nonzero(p.outputTransform.truncationLower) ||
      nonzero(p.outputTransform.truncationUpper) || nonzero(p.outputTransform.paddingLower) ||
      nonzero(p.outputTransform.paddingUpper) || flips)
    return std::string(
        "poplin::convolution: Tessera supports input padding, output stride and kernel dilation; "
        "truncation, input dilation, kernel padding, output padding and flips are not modeled "
        "(transform the tensors with views and popops instead)");
  return std::nullopt;
}

Geo geometry(const ConvParams& p) {
  if (auto problem = geometry_problem(p)) throw poputil::poplibs_error(*problem);
  std::size_t d = p.inputFieldShape.size();
  Geo g;
  g.N = p.batchSize;
  g.G = p.numConvGroups;
  g.IC = p.inputChannelsPerConvGroup;
  g.OC = p.outputChannelsPerConvGroup;
  bool two = d == 2;
  g.H = two ? p.inputFieldShape[0] : 1;
  g.W = p.inputFieldShape.back();
  g.KH = two ? p.kernelShape[0] : 1;
  g.KW = p.kernelShape.back();
  g.OH = two ? p.getOutputSize(0) : 1;
  g.OW = p.getOutputSize(unsigned(d - 1));
  g.sH = two ? at_or(p.outputTransform.stride, 0, 1) : 1;
  g.sW = at_or(p.outputTransform.stride, d - 1, 1);
  g.dH = two ? at_or(p.kernelTransform.dilation, 0, 1) : 1;
  g.dW = at_or(p.kernelTransform.dilation, d - 1, 1);
  g.padT = two ? long(at_or(p.inputTransform.paddingLower, 0, 0)) : 0;
  g.padL = long(at_or(p.inputTransform.paddingLower, d - 1, 0));
  if (g.N == 0 || g.G == 0 || g.IC == 0 || g.OC == 0 || g.OH == 0 || g.OW == 0)
    throw poputil::poplibs_error(fmt::format("poplin::convolution: empty convolution ({})",
                                             fmt::format("N={} G={} IC={} OC={} out={}x{}", g.N, g.G, g.IC, g.OC, g.OH, g.OW)));
  return g;
}

struct ConvPlan {
  std::size_t sN = 1, sG = 1, sOC = 1, sOH = 1;
  std::uint64_t cycles = 0;
};

// The tile of the u-th of `units` work units of a convolution plan, spread evenly over T tiles.
unsigned conv_unit_tile(std::size_t u, unsigned T, std::size_t units) {
  return unsigned(u * T / units);
}

std::vector<std::size_t> candidates(std::size_t d, std::size_t limit) {
  std::set<std::size_t> c;
  for (std::size_t i = 1; i <= std::min<std::size_t>(d, 16); ++i) c.insert(i);
  for (std::size_t v = d; v >= 1; v /= 2) c.insert(v);
  for (std::size_t i = 1; i <= 64; ++i) c.insert(cdiv(d, i));
  std::vector<std::size_t> out;
  for (auto v : c)
    if (v >= 1 && v <= std::min(d, limit)) out.push_back(v);
  return out;
}

ConvPlan plan_conv(const poplar::Graph& graph, const ConvParams& p, const poplar::OptionFlags& options,
                   PlanningCache* cache) {
  Geo g = geometry(p);
  std::ostringstream key;
  key << "conv " << p << " in=" << p.inputType.toString() << " s=" << g.sH << g.sW << " p=" << g.padT
      << g.padL << " d=" << g.dH << g.dW << " tiles=" << graph.getTarget().getNumTiles();
  if (cache) {
    auto it = cache->plans.find(key.str());
    if (it != cache->plans.end()) {
      const auto& m = it->second;  // stored as (mSplit, nSplit, kSplit, groupTiles) = (sN, sG, sOC, sOH)
      ConvPlan c;
      c.sN = m.mSplit, c.sG = m.nSplit, c.sOC = m.kSplit, c.sOH = m.groupTiles;
      c.cycles = m.estimatedCycles;
      return c;
    }
  }
  Costs c = costs_of(graph, options);
  const auto& target = graph.getTarget();
  double ib = p.inputType.tesseraSize(), ob = p.outputType.tesseraSize();
  auto estimate = [&](const Splits& s) {
    double nb = double(cdiv(g.N, s[0])), gb = double(cdiv(g.G, s[1])),
           ocb = double(cdiv(g.OC, s[2])), ohb = double(cdiv(g.OH, s[3]));
    double ihr = std::min<double>(double(g.H), (ohb - 1) * double(g.sH) + double((g.KH - 1) * g.dH + 1));
    double macs = nb * gb * ocb * ohb * double(g.OW) * double(g.IC * g.KH * g.KW);
    double in_bytes = nb * gb * double(g.IC) * ihr * double(g.W) * ib;
    double w_bytes = gb * ocb * double(g.IC * g.KH * g.KW) * ib;
    double out_bytes = nb * gb * ocb * ohb * double(g.OW) * ob;
    double units = nb * gb;  // vertices per tile
    SplitCost e;
    e.cycles = units * double(amp_cycles(target, p.inputType, std::uint64_t(macs / units),
                                         std::uint64_t(ocb))) +
               c.setup + (in_bytes + w_bytes) / c.bytes_per_cycle + c.sync;
    e.bytes = in_bytes + w_bytes + 2 * out_bytes +
              units * ohb * double(g.OW) * double(g.IC * g.KH * g.KW) * 4 / 64;
    return e;
  };
  double cycles = 0;
  Splits s = best_split({g.N, g.G, g.OC, g.OH}, c, candidates, estimate, &cycles);
  ConvPlan best{s[0], s[1], s[2], s[3], std::uint64_t(cycles)};
  if (cache)
    cache->plans[key.str()] = {unsigned(best.sOH), unsigned(best.sN), unsigned(best.sG),
                               unsigned(best.sOC), std::size_t(best.cycles)};
  return best;
}

}  // namespace

// Weights laid out by the plan: each block of groups and output channels spread evenly over the
// tiles of the vertices that read it (every batch and row block), so no tile holds more than its
// share and each reader already has part of its block.
Tensor createWeights(poplar::Graph& graph, const ConvParams& p, const poplar::DebugContext& dc,
                     const poplar::OptionFlags& options, PlanningCache* cache) {
  std::vector<std::size_t> s = {p.numConvGroups, p.outputChannelsPerConvGroup,
                                p.inputChannelsPerConvGroup};
  s.insert(s.end(), p.kernelShape.begin(), p.kernelShape.end());
  Tensor w = graph.addVariable(p.inputType, s, dc);
  if (geometry_problem(p)) {  // convolution will say why; the weights still need a home
    poputil::mapTensorLinearly(graph, w);
    return w;
  }
  Geo g = geometry(p);
  ConvPlan plan = plan_conv(graph, p, options, cache);
  Tensor w3 = w.reshape({g.G, g.OC, g.IC * g.KH * g.KW});
  unsigned T = graph.getTarget().getNumTiles();
  std::size_t units = plan.sN * plan.sG * plan.sOC * plan.sOH;
  std::size_t readers = plan.sN * plan.sOH;
  for (std::size_t b = 0; b < plan.sG; ++b)
    for (std::size_t c = 0; c < plan.sOC; ++c) {
      std::size_t oc0 = split_begin(g.OC, plan.sOC, c), oc1 = split_begin(g.OC, plan.sOC, c + 1);
      if (oc0 == oc1) continue;
      for (std::size_t gr = split_begin(g.G, plan.sG, b); gr < split_begin(g.G, plan.sG, b + 1); ++gr) {
        Tensor block = w3[gr].slice(oc0, oc1).flatten();
        for (std::size_t r = 0; r < readers; ++r) {
          std::size_t e0 = split_begin(block.numElements(), readers, r),
                      e1 = split_begin(block.numElements(), readers, r + 1);
          if (e0 == e1) continue;
          std::size_t a = r / plan.sOH, d = r % plan.sOH;
          std::size_t u = ((a * plan.sG + b) * plan.sOC + c) * plan.sOH + d;
          graph.setTileMapping(block.slice(e0, e1), conv_unit_tile(u, T, units));
        }
      }
    }
  return w;
}

Tensor createInput(poplar::Graph& graph, const ConvParams& p, const poplar::DebugContext& dc,
                   const poplar::OptionFlags&, PlanningCache*) {
  std::vector<std::size_t> s = {p.batchSize, p.getNumInputChans()};
  s.insert(s.end(), p.inputFieldShape.begin(), p.inputFieldShape.end());
  Tensor t = graph.addVariable(p.inputType, s, dc);
  poputil::mapTensorLinearly(graph, t);
  return t;
}

Tensor convolution(poplar::Graph& graph, const Tensor& in, const Tensor& weights,
                   const ConvParams& p, bool transposeAndFlipWeights,
                   poplar::program::Sequence& prog, const poplar::DebugContext& dc,
                   const poplar::OptionFlags& options, PlanningCache* cache) {
  require_codelets(graph, "poplin", "poplin::ConvPartialnx1");
  if (transposeAndFlipWeights)
    throw poputil::poplibs_error(
        "poplin::convolution: transposeAndFlipWeights (the backward pass) is not modeled; give "
        "weights in [G][OC][IC][kernel] order");
  Geo g = geometry(p);
  std::vector<std::size_t> ishape = {g.N, g.G * g.IC}, wshape = {g.G, g.OC, g.IC};
  ishape.insert(ishape.end(), p.inputFieldShape.begin(), p.inputFieldShape.end());
  wshape.insert(wshape.end(), p.kernelShape.begin(), p.kernelShape.end());
  if (in.shape() != ishape || weights.shape() != wshape)
    throw poputil::poplibs_error(fmt::format(
        "poplin::convolution: input {{{}}} and weights {{{}}} do not match the params (input "
        "{{{}}}, weights {{{}}})",
        fmt::join(in.shape(), ","), fmt::join(weights.shape(), ","), fmt::join(ishape, ","),
        fmt::join(wshape, ",")));
  if (in.elementType() != p.inputType || weights.elementType() != p.inputType)
    throw poputil::poplibs_error(fmt::format(
        "poplin::convolution: input and weights must hold {} (the params' input type)",
        p.inputType.toString()));
  ConvPlan plan = plan_conv(graph, p, options, cache);
  std::string planstr = fmt::format("plan N{} G{} OC{} OH{}, ~{} cycles", plan.sN, plan.sG,
                                    plan.sOC, plan.sOH, plan.cycles);
  std::ostringstream desc;
  desc << p;
  tessera::log(tessera::LogLevel::info, "poplin", "convolution {} {}: {}", dc.getPathName(),
               desc.str(), planstr);
  Tensor in4 = in.reshape({g.N, g.G, g.IC, g.H * g.W}).reshape({g.N, g.G, g.IC, g.H, g.W});
  Tensor w4 = weights.reshape({g.G, g.OC, g.IC, g.KH * g.KW});
  std::vector<std::size_t> oshape = {g.N, g.G * g.OC};
  auto of = p.getOutputFieldShape();
  oshape.insert(oshape.end(), of.begin(), of.end());
  Tensor out = graph.addVariable(p.outputType, oshape, {dc, "conv"});
  Tensor out5 = out.reshape({g.N, g.G, g.OC, g.OH, g.OW});
  std::size_t K = g.IC * g.KH * g.KW;
  std::string vertex = amp_vertex(graph, true, p.inputType, p.outputType, K);
  auto cs = graph.addComputeSet(name_of(dc, "convolution/" + planstr));
  unsigned T = graph.getTarget().getNumTiles();
  std::size_t units = plan.sN * plan.sG * plan.sOC * plan.sOH, u = 0;
  for (std::size_t a = 0; a < plan.sN; ++a)
    for (std::size_t b = 0; b < plan.sG; ++b)
      for (std::size_t c = 0; c < plan.sOC; ++c)
        for (std::size_t d = 0; d < plan.sOH; ++d, ++u) {
          unsigned tile = conv_unit_tile(u, T, units);
          std::size_t oc0 = split_begin(g.OC, plan.sOC, c), oc1 = split_begin(g.OC, plan.sOC, c + 1);
          std::size_t oh0 = split_begin(g.OH, plan.sOH, d), oh1 = split_begin(g.OH, plan.sOH, d + 1);
          if (oc0 == oc1 || oh0 == oh1) continue;
          long lo = long(oh0 * g.sH) - g.padT, hi = long((oh1 - 1) * g.sH + (g.KH - 1) * g.dH) - g.padT + 1;
          std::size_t ih0 = std::size_t(std::max(0L, lo)), ih1 = std::size_t(std::clamp(hi, 0L, long(g.H)));
          if (ih1 <= ih0) ih1 = std::min(g.H, ih0 + 1);
          for (std::size_t n = split_begin(g.N, plan.sN, a); n < split_begin(g.N, plan.sN, a + 1); ++n)
            for (std::size_t gr = split_begin(g.G, plan.sG, b); gr < split_begin(g.G, plan.sG, b + 1); ++gr) {
              Tensor o = out5[n][gr].slice(oc0, oc1).slice(oh0, oh1, 1);
              graph.setTileMapping(o, tile);
              auto v = graph.addVertex(cs, vertex);
              graph.connect(v["in"], in4[n][gr].slice(ih0, ih1, 1));
              graph.connect(v["weights"], w4[gr].slice(oc0, oc1));
              graph.connect(v["out"], o);
              set_state(graph, v, "params",
                        {unsigned(g.IC), unsigned(ih0), unsigned(ih1 - ih0), unsigned(g.W),
                         unsigned(oc1 - oc0), unsigned(oh0), unsigned(oh1 - oh0), unsigned(g.OW),
                         unsigned(g.KH), unsigned(g.KW), unsigned(g.sH), unsigned(g.sW),
                         unsigned(g.dH), unsigned(g.dW), unsigned(int(g.padT)),
                         unsigned(int(g.padL)), p.inputType.tesseraId(), p.outputType.tesseraId()});
              graph.setTileMapping(v, tile);
            }
        }
  prog.add(poplar::program::Execute(cs, dc));
  return out;
}

Tensor createBiases(poplar::Graph& graph, const Tensor& acts, const poplar::DebugContext& dc) {
  if (acts.rank() < 2)
    throw poputil::poplibs_error("poplin::createBiases: activations must be [N][C][...]");
  Tensor b = graph.addVariable(acts.elementType(), {acts.dim(1)}, dc);
  poputil::mapTensorLinearly(graph, b);
  return b;
}

// One AddToChannel vertex per tile over the activations mapped there, reading the biases of the
// channels those elements span: no broadcast view of the biases is ever made.
void addBias(poplar::Graph& graph, const Tensor& acts, const Tensor& biases,
             poplar::program::Sequence& prog, const poplar::DebugContext& dc) {
  if (acts.rank() < 2 || biases.numElements() != acts.dim(1))
    throw poputil::poplibs_error(fmt::format(
        "poplin::addBias: {} biases for activations {{{}}}; give one per channel (dimension 1)",
        biases.numElements(), fmt::join(acts.shape(), ",")));
  Type t = acts.elementType();
  if (t != poplar::FLOAT && t != poplar::HALF)
    throw poputil::poplibs_error(fmt::format(
        "poplin::addBias: activations hold {}; biases are added to float or half", t.toString()));
  Tensor b = (biases.elementType() == t ? biases : popops::cast(graph, biases, t, prog, dc)).flatten();
  std::size_t C = acts.dim(1), inner = acts.numElements() / std::max<std::size_t>(1, acts.dim(0) * C);
  std::string vertex = add_to_channel_vertex(graph, t);
  Tensor flat = acts.flatten();
  auto mapping = graph.getTileMapping(flat);
  auto cs = graph.addComputeSet(name_of(dc, "addBias"));
  for (unsigned tile = 0; tile < mapping.size(); ++tile) {
    if (mapping[tile].empty()) continue;
    // The channels the tile's runs span, as one range (all of them when a run wraps around).
    std::size_t lo = C, hi = 0;
    std::vector<Tensor> runs;
    std::vector<unsigned> params = {unsigned(inner), unsigned(C), 0, t.tesseraId()};
    for (const auto& iv : mapping[tile]) {
      std::size_t first = iv.begin() / inner, last = (iv.end() - 1) / inner;
      if (last - first + 1 >= C || first % C > last % C) {
        lo = 0, hi = C;
      } else {
        lo = std::min(lo, first % C), hi = std::max(hi, last % C + 1);
      }
      runs.push_back(flat.slice(iv.begin(), iv.end()));
      params.push_back(unsigned(iv.begin()));
    }
    params[2] = unsigned(lo);
    auto v = graph.addVertex(cs, vertex);
    graph.connect(v["acts"], poplar::ArrayRef<Tensor>(runs));
    graph.connect(v["addend"], b.slice(lo, hi));
    set_state(graph, v, "params", params);
    graph.setTileMapping(v, tile);
  }
  prog.add(poplar::program::Execute(cs, dc));
}

std::string reportPlan(const poplar::Graph& graph, const ConvParams& params,
                       const poplar::OptionFlags& options, PlanningCache* cache) {
  auto p = plan_conv(graph, params, options, cache);
  return fmt::format("convolution plan: batch {} x groups {} x out channels {} x out rows {}, "
                     "estimated {} cycles",
                     p.sN, p.sG, p.sOC, p.sOH, p.cycles);
}

}  // namespace poplin
