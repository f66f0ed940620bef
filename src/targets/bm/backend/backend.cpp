#include "tessera/targets/bm/backend/backend.h"

#include <bmkernel/bm1880/bmkernel_1880.h>
#include <libbmruntime/bmruntime.h>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

#include "../api/state.h"
#include "bmnet/targets/plat-bm188x/CustomizedTensorFixedInst.hpp"
#include "bmnet_access.h"
#include "tessera/arch/machine_spec.h"
#include "tessera/compiler/quantize.h"
#include "tessera/compiler/reference_exec.h"
#include "tessera/core/error.h"
#include "tessera/core/log.h"
#include "tessera/sim/cost_model.h"

namespace tessera::bm {
namespace {

using compiler::ExecContext;
using compiler::Graph;
using compiler::Int8Params;
using compiler::kNoValue;
using compiler::Node;
using compiler::NodeStep;
using compiler::Step;
using compiler::Value;
using compiler::ValueId;

// Layer-group annotations written by prepare() (kept in model files): every member carries
// kGroupAttr = {position, size}; the last member runs the whole group and lists, after its own
// inputs, the activations the earlier members read from gmem (kGroupReads of them), so that
// the memory plan keeps them alive until the group has run.
constexpr const char* kGroupAttr = "bm.layer_group";
constexpr const char* kGroupReads = "bm.layer_group_reads";
// Host CPU layers of a BMNet network (the f32 nodes the quantisation pass leaves).
bool is_cpu_layer(const std::string& op) {
  return op == "Softmax" || op == "QuantizeLinear" || op == "DequantizeLinear";
}

// A tensor as the four dimensions (n, c, h, w) it takes in gmem and lmem: ONNX's N and C, the
// spatial dimensions folded into h and w (NCHW keeps its own); element (n, c, h, w) lies at
// ((n * C + c) * H + h) * W + w, ONNX's row-major order.
struct Dims {
  std::uint32_t n = 1, c = 1, h = 1, w = 1;
  std::uint64_t count() const { return std::uint64_t{n} * c * h * w; }
};

// The shape as the TPU's (n, c, h, w), or nothing where a dimension is outside 1 to 16M.
std::optional<Dims> tpu_dims(const Shape& shape) {
  const auto d = shape.outer_first();
  std::vector<std::int64_t> v(d.begin(), d.end());
  std::int64_t n = 1, c = 1, h = 1, w = 1;
  if (v.size() == 1) c = v[0];
  if (v.size() >= 2) {
    n = v[0];
    c = v[1];
  }
  if (v.size() == 3) h = v[2];
  if (v.size() >= 4) {
    w = v.back();
    for (std::size_t i = 2; i + 1 < v.size(); ++i) h *= v[i];
  }
  for (std::int64_t x : {n, c, h, w})
    if (x < 1 || x > 0xffffff) return std::nullopt;
  Dims r;
  r.n = static_cast<std::uint32_t>(n);
  r.c = static_cast<std::uint32_t>(c);
  r.h = static_cast<std::uint32_t>(h);
  r.w = static_cast<std::uint32_t>(w);
  return r;
}

Dims dims_of(const Shape& shape, const std::string& what) {
  const auto r = tpu_dims(shape);
  if (!r)
    throw_user_error("bm: {} has shape {}; the BM1880 tensors take 1 to 16M per dimension", what,
                     shape.to_string());
  return *r;
}

enum class Kind { conv, depthwise, gemm, max_pool, avg_pool, add, clamp };

// One TPU layer: a quantised node in the terms of the bmk1880_tpu_* call that computes it.
// Windows slide over h (rows) and w; element-wise layers have a 1x1 window.
struct Layer {
  int node = -1;
  std::string what;  // "Int8Conv 'conv1'"
  Kind kind = Kind::clamp;
  Dims in, out;
  std::uint32_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  std::uint32_t pt = 0, pb = 0, pl = 0, pr = 0;
  Int8Params q;
  ValueId x = kNoValue, other = kNoValue, w = kNoValue, b = kNoValue, y = kNoValue;
  bool has_weights() const {
    return kind == Kind::conv || kind == Kind::depthwise || kind == Kind::gemm;
  }
  // Input channels a chunk of output channels [c0, c0 + cc) reads.
  bool reads_all_channels() const { return kind == Kind::conv || kind == Kind::gemm; }
};

std::size_t own_inputs(const Node& n) {
  const std::int64_t reads = n.attr_int(kGroupReads, 0);
  if (reads < 0 || static_cast<std::size_t>(reads) > n.inputs.size())
    throw_user_error("{}: attribute {} = {} does not fit its {} inputs; recompile the model",
                     n.describe(), kGroupReads, reads, n.inputs.size());
  return n.inputs.size() - static_cast<std::size_t>(reads);
}

bool u8_fits(std::int64_t v) {
  return v >= 0 && v <= 255;
}

// Whether an int8 value is never negative: max pooling pads with zeros on the BM1880 (spec 002
// "bmk1880 tpu max pooling"), ONNX with -inf, which agree only then.
bool non_negative(const Graph& g, ValueId v) {
  const int p = g.value(v).producer;
  if (p < 0) return false;
  const Node& n = g.nodes[static_cast<std::size_t>(p)];
  if (n.op == "Int8MaxPool") return non_negative(g, n.inputs[0]);
  if (!compiler::is_int8_op(n.op)) return false;
  const Int8Params q = compiler::int8_params(n);
  return q.act_min >= 0 || (q.relu && n.op != "Int8Concat");
}

// The layer a node runs as, or why it cannot run on the TPU (`why` set, nullopt returned).
std::optional<Layer> describe_layer(const Node& n, const Graph& g, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<Layer> {
    *why = std::move(reason);
    return std::nullopt;
  };
  if (!compiler::is_int8_op(n.op) || n.op == "Int8Concat")
    return fail(fmt::format("{} is not a TPU layer", n.op));
  const std::size_t inputs = own_inputs(n);
  if (n.outputs.size() != 1 && !(n.outputs.size() == 2 && n.outputs[1] == kNoValue))
    return fail(fmt::format("{} with {} outputs (the TPU computes one)", n.op, n.outputs.size()));
  Layer L;
  L.node = -1;
  L.what = n.describe();
  L.q = compiler::int8_params(n);
  L.x = n.inputs[0];
  L.y = n.outputs[0];
  if (L.x == kNoValue) return fail("an omitted input");
  const Shape& xs = g.value(L.x).shape;
  const Shape& ys = g.value(L.y).shape;
  auto spatial2d = [&]() { return xs.rank() == 4 && ys.rank() == 4; };
  auto window = [&](const std::vector<std::int64_t>& k, const std::vector<std::int64_t>& s,
                    const std::vector<std::int64_t>& p,
                    const std::vector<std::int64_t>& d) -> std::optional<std::string> {
    if (k.size() != 2) return std::string("a window that is not 2-D");
    if (!s.empty() && s.size() != 2) return std::string("strides that are not 2-D");
    if (!p.empty() && p.size() != 4) return std::string("pads that are not 2-D");
    if (!d.empty() && d.size() != 2) return std::string("dilations that are not 2-D");
    const std::int64_t sh = s.empty() ? 1 : s[0], sw = s.empty() ? 1 : s[1];
    const std::int64_t dh = d.empty() ? 1 : d[0], dw = d.empty() ? 1 : d[1];
    for (std::int64_t v : {k[0], k[1], sh, sw, dh, dw})
      if (v < 1 || v > 255) return fmt::format("a window, stride or dilation of {} (u8 fields)", v);
    for (std::int64_t v : p)
      if (!u8_fits(v)) return fmt::format("a padding of {} (u8 fields)", v);
    L.kh = static_cast<std::uint32_t>(k[0]);
    L.kw = static_cast<std::uint32_t>(k[1]);
    L.sh = static_cast<std::uint32_t>(sh);
    L.sw = static_cast<std::uint32_t>(sw);
    L.dh = static_cast<std::uint32_t>(dh);
    L.dw = static_cast<std::uint32_t>(dw);
    if (!p.empty()) {
      L.pt = static_cast<std::uint32_t>(p[0]);
      L.pl = static_cast<std::uint32_t>(p[1]);
      L.pb = static_cast<std::uint32_t>(p[2]);
      L.pr = static_cast<std::uint32_t>(p[3]);
    }
    return std::nullopt;
  };
  if (n.op == "Int8Conv") {
    if (!spatial2d()) return fail("a convolution that is not 2-D (the TPU convolves NCHW)");
    if (inputs < 2 || n.inputs[1] == kNoValue || !g.value(n.inputs[1]).is_constant())
      return fail("weights that are not constant");
    L.w = n.inputs[1];
    if (inputs > 2 && n.inputs[2] != kNoValue) {
      if (!g.value(n.inputs[2]).is_constant()) return fail("a bias that is not constant");
      L.b = n.inputs[2];
    }
    const auto wd = g.value(L.w).shape.outer_first();  // M, C/g, kH, kW
    const std::int64_t group = n.attr_int("group", 1);
    const auto xd = xs.outer_first();
    if (group == 1) {
      L.kind = Kind::conv;
    } else if (group == xd[1] && wd[0] == xd[1] && wd[1] == 1) {
      L.kind = Kind::depthwise;
    } else {
      return fail(fmt::format("a grouped convolution ({} groups) that is not depthwise", group));
    }
    if (auto bad = window({wd[2], wd[3]}, n.attr_ints("strides"), n.attr_ints("pads"),
                          n.attr_ints("dilations")))
      return fail(*bad);
    if (L.kind == Kind::depthwise && (L.dh != 1 || L.dw != 1))
      return fail("a dilated depthwise convolution (bmk1880_tpu_depthwise has no dilation)");
  } else if (n.op == "Int8Gemm") {
    if (xs.rank() != 2) return fail("a matrix product whose input is not 2-D");
    if (inputs < 2 || !g.value(n.inputs[1]).is_constant())
      return fail("weights that are not constant");
    L.kind = Kind::gemm;
    L.w = n.inputs[1];
    if (inputs > 2 && n.inputs[2] != kNoValue) {
      if (!g.value(n.inputs[2]).is_constant()) return fail("a bias that is not constant");
      L.b = n.inputs[2];
    }
  } else if (n.op == "Int8MaxPool" || n.op == "Int8AveragePool") {
    if (!spatial2d()) return fail("pooling that is not 2-D");
    if (n.attr_int("ceil_mode", 0) != 0) return fail("ceil_mode");
    if (auto bad = window(n.attr_ints("kernel_shape"), n.attr_ints("strides"), n.attr_ints("pads"),
                          n.attr_ints("dilations")))
      return fail(*bad);
    if (L.dh != 1 || L.dw != 1) return fail("dilated pooling");
    L.kind = n.op == "Int8MaxPool" ? Kind::max_pool : Kind::avg_pool;
    if (L.kind == Kind::max_pool && (L.pt || L.pb || L.pl || L.pr) && !non_negative(g, L.x))
      return fail(
          "max pooling with padding over values that may be negative (the BM1880 pads "
          "with zeros, ONNX with -inf)");
  } else if (n.op == "Int8GlobalAveragePool") {
    if (!spatial2d()) return fail("global pooling that is not 2-D");
    const auto xd = xs.outer_first();
    if (auto bad = window({xd[2], xd[3]}, {}, {}, {})) return fail(*bad);
    L.kind = Kind::avg_pool;
  } else if (n.op == "Int8Add") {
    if (inputs != 2 || n.inputs[1] == kNoValue) return fail("Add without two inputs");
    L.other = n.inputs[1];
    if (!(g.value(L.other).shape == ys) || !(xs == ys))
      return fail("broadcasting (the TPU adds tensors of one shape)");
    L.kind = Kind::add;
  } else if (n.op == "Int8Relu" || n.op == "Int8Clip") {
    if (!(xs == ys)) return fail("an output shape unlike the input's");
    L.kind = Kind::clamp;
  } else {
    return fail(fmt::format("{} is not a TPU layer", n.op));
  }
  for (ValueId v : {L.x, L.other, L.y})
    if (v != kNoValue && g.value(v).dtype != DType::i8)
      return fail(
          fmt::format("a {} activation (the TPU layers move int8)", dtype_name(g.value(v).dtype)));
  const auto in = tpu_dims(xs), out = tpu_dims(ys);
  if (!in || !out)
    return fail(fmt::format("{} shape {} (the BM1880 tensors take 1 to 16M per dimension)",
                            in ? "an output" : "an input", (in ? ys : xs).to_string()));
  L.in = *in;
  L.out = *out;
  if (L.kind == Kind::gemm) {  // (M, K) x (K, N) as a 1x1 convolution of (M, K, 1, 1)
    const auto wd = g.value(L.w).shape.outer_first();
    if (wd.size() != 2 || wd[0] != L.in.c)
      return fail("weights that are not (K, N) for an input (M, K)");
  }
  if (L.kind == Kind::avg_pool && n.op == "Int8GlobalAveragePool") {
    L.kh = L.in.h;
    L.kw = L.in.w;
  }
  return L;
}

// ---- Tiling: lmem holds a group's weights and, for one tile, each layer's input and output ----

std::uint32_t lane_bytes(const ChipParams& p, Dims d, bool aligned) {
  const shape_t s = shape_t4(static_cast<int>(d.n), static_cast<int>(d.c), static_cast<int>(d.h),
                             static_cast<int>(d.w));
  const std::uint64_t b = std::uint64_t{default_stride(p, s, aligned).n} * d.n;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(b, 0xffffffffu));
}

std::uint32_t round_up(std::uint32_t v, std::uint32_t a) {
  return (v + a - 1) / a * a;
}

// Rows of one layer in one tile: it reads input rows [in_lo, in_hi) (padded by pad_top and
// pad_bottom virtual rows at the map's borders) and writes output rows [out_lo, out_hi).
struct Rows {
  std::uint32_t in_lo = 0, in_hi = 0, out_lo = 0, out_hi = 0, pad_top = 0, pad_bottom = 0;
};

// Each member's rows for the final output rows [a, b), found backwards through the group.
std::optional<std::vector<Rows>> rows_for(const std::vector<Layer>& m, std::uint32_t a,
                                          std::uint32_t b) {
  std::vector<Rows> r(m.size());
  std::int64_t lo = a, hi = b;
  for (std::size_t i = m.size(); i-- > 0;) {
    const Layer& L = m[i];
    r[i].out_lo = static_cast<std::uint32_t>(lo);
    r[i].out_hi = static_cast<std::uint32_t>(hi);
    const std::int64_t extent = (std::int64_t{L.kh} - 1) * L.dh + 1;
    const std::int64_t vlo = lo * L.sh - L.pt, vhi = (hi - 1) * L.sh - L.pt + extent;
    const std::int64_t clo = std::max<std::int64_t>(0, vlo);
    const std::int64_t chi = std::min<std::int64_t>(L.in.h, vhi);
    if (chi <= clo || clo - vlo > 255 || vhi - chi > 255) return std::nullopt;
    r[i].pad_top = static_cast<std::uint32_t>(clo - vlo);
    r[i].pad_bottom = static_cast<std::uint32_t>(vhi - chi);
    lo = clo;
    hi = chi;
    r[i].in_lo = static_cast<std::uint32_t>(lo);
    r[i].in_hi = static_cast<std::uint32_t>(hi);
  }
  return r;
}

struct TilePlan {
  std::uint32_t nn = 1;      // samples per tile
  std::uint32_t cc = 1;      // output channels per tile (all but for a lone layer)
  std::uint32_t rows = 1;    // final output rows per tile
  std::uint32_t region = 0;  // lane bytes of one activation region
  std::uint32_t regions = 2;
  std::uint32_t weights = 0;  // lane bytes of the weights held at once
  std::uint32_t buffers = 1;  // 2: tiles alternate between two streams and scratch sets
  std::uint64_t tiles = 1;
};

// A tile's output channels of member L: only a lone layer is split by output channels.
std::uint32_t channels(const std::vector<Layer>& m, const Layer& L, std::uint32_t cc) {
  return m.size() == 1 ? cc : L.out.c;
}
std::uint32_t first_channel(const std::vector<Layer>& m, std::uint32_t c0) {
  return m.size() == 1 ? c0 : 0;
}

std::uint32_t weight_bytes(const ChipParams& p, const Layer& L, std::uint32_t cc) {
  if (!L.has_weights()) return 0;
  const std::uint32_t eu = p.eu_num;
  std::uint32_t b = 0;
  if (L.kind == Kind::depthwise)
    b = round_up(lane_bytes(p, {1, cc, L.kh, L.kw}, false), eu);
  else
    b = round_up(lane_bytes(p, {1, cc, L.kh * L.kw, L.in.c}, false), eu);
  if (L.b != kNoValue) b += round_up(lane_bytes(p, {2, cc, 1, 1}, false), eu);
  return b;
}

std::optional<TilePlan> try_plan(const std::vector<Layer>& m, const ChipParams& p, std::uint32_t nn,
                                 std::uint32_t cc, std::uint32_t rows, std::uint32_t buffers) {
  TilePlan t;
  t.buffers = buffers;
  t.nn = nn;
  t.cc = cc;
  t.rows = rows;
  const Layer& last = m.back();
  for (const Layer& L : m) {
    t.weights += weight_bytes(p, L, channels(m, L, cc));
    if (L.kind == Kind::add) t.regions = 4;
  }
  std::uint32_t region = 0;
  for (std::uint32_t a = 0; a < last.out.h; a += rows) {
    const auto r = rows_for(m, a, std::min(a + rows, last.out.h));
    if (!r) return std::nullopt;
    for (std::size_t i = 0; i < m.size(); ++i) {
      const Layer& L = m[i];
      const std::uint32_t co = channels(m, L, cc);
      const std::uint32_t cin = L.reads_all_channels() ? L.in.c : co;
      region =
          std::max(region, lane_bytes(p, {nn, cin, (*r)[i].in_hi - (*r)[i].in_lo, L.in.w}, true));
      region =
          std::max(region, lane_bytes(p, {nn, co, (*r)[i].out_hi - (*r)[i].out_lo, L.out.w}, true));
    }
  }
  t.region = round_up(region, p.eu_num);
  if (std::uint64_t{t.weights} + std::uint64_t{t.region} * t.regions * t.buffers > p.lmem_size)
    return std::nullopt;
  t.tiles = std::uint64_t{(last.out.n + nn - 1) / nn} * ((last.out.c + cc - 1) / cc) *
            ((last.out.h + rows - 1) / rows);
  return t;
}

// The largest tiles that fit lmem: whole maps if they fit, else fewer rows, then fewer samples,
// then (for a lone layer) fewer output channels, in multiples of the NPU lanes. With 2 buffers,
// each tile's activations are held twice (for two tiles in flight).
std::optional<TilePlan> plan_tiles(const std::vector<Layer>& m, const ChipParams& p,
                                   std::uint32_t buffers = 1) {
  const Layer& last = m.back();
  std::vector<std::uint32_t> cs{last.out.c};
  if (m.size() == 1)
    for (std::uint32_t q = (last.out.c + p.npu_num - 1) / p.npu_num; q-- > 1;)
      if (q * p.npu_num < last.out.c) cs.push_back(q * p.npu_num);
  std::vector<std::uint32_t> ns;
  for (std::uint32_t n = last.out.n; n >= 1; n /= 2) ns.push_back(n);
  if (ns.back() != 1) ns.push_back(1);
  for (std::uint32_t cc : cs)
    for (std::uint32_t nn : ns)
      for (std::uint32_t rows = last.out.h; rows >= 1; --rows) {
        if (rows < last.out.h && (last.out.h + rows - 1) / rows == (last.out.h + rows) / (rows + 1))
          continue;  // same tile count as rows + 1, which was tried
        if (auto t = try_plan(m, p, nn, cc, rows, buffers)) return t;
      }
  return std::nullopt;
}

const ChipParams& compile_params() {
  static const ChipParams params = ChipParams::from(default_spec());
  return params;
}

// ---- Recording BMKernel commands ----

// Where a value lies for the GDMA: an absolute gmem address (a plan run) or an offset into
// BMNet's neuron or weight memory with the CTRL_NEURON / CTRL_WEIGHT mark (a bmodel).
struct Place {
  std::uint64_t address = 0;
  ctrl_t ctrl = CTRL_NULL;
};
using Locate = std::function<Place(ValueId)>;

// What a call's NULL means: the thread's last error of the bm target, rethrown. A device fault
// is the chip's; anything else is a lowering the backend got wrong.
template <typename T>
T* check(T* result, const char* call) {
  if (result) return result;
  const std::string message = tessera_bm_last_error();
  if (tessera_bm_last_error_kind() == TESSERA_BM_DEVICE_FAULT) throw DeviceFault("bm", message);
  throw_internal_error("bm backend: {} failed: {}", call, message);
}

class Emitter {
 public:
  Emitter(void* k, const ChipParams& p, Locate locate, OptLevel opt)
      : k_(k), p_(p), locate_(std::move(locate)), opt_(opt) {}

  void group(const std::vector<Layer>& m, const TilePlan& t) {
    const Layer& last = m.back();
    const bool resident = opt_ != OptLevel::layer_group;
    for (std::uint32_t c0 = 0; c0 < last.out.c; c0 += t.cc) {
      const std::uint32_t cc = std::min(t.cc, last.out.c - c0);
      std::vector<Weights> weights;
      tensor_lmem* scratch = nullptr;
      if (resident) {
        weights = load_weights(m, c0, cc);
        scratch = alloc_scratch(t);
      }
      const bool streams = resident && t.buffers == 2;
      if (streams) bmk1880_create_streams(k_, 2);
      std::uint32_t j = 0;  // tile index: its stream and scratch set
      for (std::uint32_t n0 = 0; n0 < last.out.n; n0 += t.nn) {
        const std::uint32_t nn = std::min(t.nn, last.out.n - n0);
        for (std::uint32_t a = 0; a < last.out.h; a += t.rows, ++j) {
          if (!resident) {
            weights = load_weights(m, c0, cc);
            scratch = alloc_scratch(t);
          }
          if (streams) bmk1880_set_stream(k_, static_cast<int>(j % 2));
          const laddr_t base =
              scratch->operand.laddr + (streams ? (j % 2) * t.region * t.regions : 0);
          tile(m, t, weights, base, n0, nn, c0, cc, a, std::min(a + t.rows, last.out.h));
          if (!resident) free_weights(weights, scratch);
        }
      }
      if (streams) bmk1880_destroy_streams(k_);
      if (resident) free_weights(weights, scratch);
    }
  }

  // Int8Concat: each input requantised (multiplier, shared shift) into its slice of the output.
  void concat(const Node& n, const Graph& g, const ChipParams& p) {
    const Int8Params q = compiler::int8_params(n);
    const auto od = g.value(n.outputs[0]).shape.outer_first();
    const int rank = static_cast<int>(od.size());
    std::int64_t axis = n.attr_int("axis", 1);
    if (axis < 0) axis += rank;
    std::uint64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i)
      outer *= static_cast<std::uint64_t>(od[static_cast<std::size_t>(i)]);
    for (int i = static_cast<int>(axis) + 1; i < rank; ++i)
      inner *= static_cast<std::uint64_t>(od[static_cast<std::size_t>(i)]);
    const std::uint64_t mid_total = static_cast<std::uint64_t>(od[static_cast<std::size_t>(axis)]);
    const Place y = locate_(n.outputs[0]);
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      const auto id = g.value(n.inputs[i]).shape.outer_first();
      const std::uint64_t mid = static_cast<std::uint64_t>(id[static_cast<std::size_t>(axis)]);
      const Place x = locate_(n.inputs[i]);
      const auto [nn_max, cc_max] = concat_chunks(p, outer, mid, inner);
      for (std::uint64_t n0 = 0; n0 < outer; n0 += nn_max)
        for (std::uint64_t c0 = 0; c0 < mid; c0 += cc_max) {
          const Dims d{static_cast<std::uint32_t>(std::min(nn_max, outer - n0)),
                       static_cast<std::uint32_t>(std::min(cc_max, mid - c0)), 1,
                       static_cast<std::uint32_t>(inner)};
          const std::uint32_t r = round_up(lane_bytes(p, d, true), p.eu_num);
          tensor_lmem* scratch =
              check(bmk1880_tl_alloc(
                        k_, shape_t4(1, static_cast<int>(p.npu_num), 1, static_cast<int>(2 * r)),
                        FMT_I8, CTRL_AL),
                    "bmk1880_tl_alloc");
          const laddr_t base = scratch->operand.laddr;
          tensor_lmem* in = view(base, d);
          gdma(true, in, x, (n0 * mid + c0) * inner,
               stride_t4(static_cast<int>(mid * inner), static_cast<int>(inner),
                         static_cast<int>(inner), 1));
          tensor_lmem* out = view(base + r, d);
          bmk1880_mul_const_param_t mp{};
          mp.res_low = out;
          mp.a = in;
          mp.b = static_cast<s8>(static_cast<u8>(q.multipliers[i]));
          mp.b_is_signed = false;
          mp.rshift_width = q.right_shift_width;
          check(bmk1880_tpu_mul_const(k_, &mp), "bmk1880_tpu_mul_const");
          clamp(out, q, false);
          gdma(false, out, y, (n0 * mid_total + offset + c0) * inner,
               stride_t4(static_cast<int>(mid_total * inner), static_cast<int>(inner),
                         static_cast<int>(inner), 1));
          free_view(out);
          free_view(in);
          bmk1880_tl_free(k_, scratch);
        }
      offset += mid;
    }
  }

  // Samples and channels per chunk of a concat input folded to (outer, mid, 1, inner).
  static std::pair<std::uint64_t, std::uint64_t> concat_chunks(const ChipParams& p,
                                                               std::uint64_t outer,
                                                               std::uint64_t mid,
                                                               std::uint64_t inner) {
    auto fits = [&](std::uint64_t nn, std::uint64_t cc) {
      if (inner > 0xffffff) return false;
      const std::uint64_t r =
          round_up(lane_bytes(p,
                              {static_cast<std::uint32_t>(nn), static_cast<std::uint32_t>(cc), 1,
                               static_cast<std::uint32_t>(inner)},
                              true),
                   p.eu_num);
      return 2 * r <= p.lmem_size;
    };
    std::uint64_t cc = std::min<std::uint64_t>(mid, 0xffffff);
    while (cc > p.npu_num && !fits(1, cc)) cc = (cc - 1) / p.npu_num * p.npu_num;
    if (!fits(1, cc)) return {0, 0};
    std::uint64_t nn = std::min<std::uint64_t>(outer, 0xffff);
    while (nn > 1 && !fits(nn, cc)) nn /= 2;
    return {nn, cc};
  }

 private:
  struct Weights {
    tensor_lmem* w = nullptr;
    tensor_lmem* b = nullptr;
  };

  tensor_lmem* view(laddr_t la, Dims d) {
    return check(bmk1880_tl_prealloc_align(k_, la,
                                           shape_t4(static_cast<int>(d.n), static_cast<int>(d.c),
                                                    static_cast<int>(d.h), static_cast<int>(d.w)),
                                           FMT_I8),
                 "bmk1880_tl_prealloc_align");
  }
  void free_view(tensor_lmem* t) { bmk1880_tl_free(k_, t); }

  // GDMA between lmem tensor `t` and the value at `at` + `offset` with gmem `stride`.
  void gdma(bool load, tensor_lmem* t, const Place& at, std::uint64_t offset, stride_t stride) {
    if (load)
      check(bmk1880_gdma_load_stride(k_, t, at.address + offset, stride, at.ctrl),
            "bmk1880_gdma_load_stride");
    else
      check(bmk1880_gdma_store_stride(k_, t, at.address + offset, stride, at.ctrl),
            "bmk1880_gdma_store_stride");
  }
  // Rows [h0, h0 + t.h) of samples [n0, ...) and channels [c0, ...) of a (N, C, H, W) value.
  void move_rows(bool load, tensor_lmem* t, ValueId v, const Dims& full, std::uint32_t n0,
                 std::uint32_t c0, std::uint32_t h0) {
    const std::uint64_t hw = std::uint64_t{full.h} * full.w;
    gdma(load, t, locate_(v), ((std::uint64_t{n0} * full.c + c0) * full.h + h0) * full.w,
         stride_t4(static_cast<int>(full.c * hw), static_cast<int>(hw), static_cast<int>(full.w),
                   1));
  }

  std::vector<Weights> load_weights(const std::vector<Layer>& m, std::uint32_t tile_c0,
                                    std::uint32_t tile_cc) {
    std::vector<Weights> out(m.size());
    for (std::size_t i = 0; i < m.size(); ++i) {
      const Layer& L = m[i];
      if (!L.has_weights()) continue;
      const std::uint32_t c0 = first_channel(m, tile_c0), cc = channels(m, L, tile_cc);
      const Place w = locate_(L.w);
      if (L.kind == Kind::depthwise) {
        // (C, 1, kh, kw) in gmem is the depthwise weight (1, C, kh, kw), default strided.
        out[i].w = check(bmk1880_tl_alloc(k_,
                                          shape_t4(1, static_cast<int>(cc), static_cast<int>(L.kh),
                                                   static_cast<int>(L.kw)),
                                          FMT_I8, CTRL_NULL),
                         "bmk1880_tl_alloc");
        gdma(true, out[i].w, w, std::uint64_t{c0} * L.kh * L.kw,
             stride_t4(static_cast<int>(L.out.c * L.kh * L.kw), static_cast<int>(L.kh * L.kw),
                       static_cast<int>(L.kw), 1));
      } else {
        // The conv weight (Cin, Cout, kh, kw) is stored as (1, Cout, kh*kw, Cin) (spec 002
        // "bmk1880 tpu conv"): gathered from ONNX's (Cout, Cin, kh, kw), or from Gemm's (K, N).
        const std::uint32_t cin = L.in.c, k2 = L.kh * L.kw;
        out[i].w = check(
            bmk1880_tl_alloc(
                k_, shape_t4(1, static_cast<int>(cc), static_cast<int>(k2), static_cast<int>(cin)),
                FMT_I8, CTRL_NULL),
            "bmk1880_tl_alloc");
        if (L.kind == Kind::gemm)
          gdma(true, out[i].w, w, c0,
               stride_t4(static_cast<int>(cin * L.out.c), 1, 1, static_cast<int>(L.out.c)));
        else
          gdma(true, out[i].w, w, std::uint64_t{c0} * cin * k2,
               stride_t4(static_cast<int>(L.out.c * cin * k2), static_cast<int>(cin * k2), 1,
                         static_cast<int>(k2)));
        out[i].w->shape = shape_t4(static_cast<int>(cin), static_cast<int>(cc),
                                   static_cast<int>(L.kh), static_cast<int>(L.kw));
      }
      if (L.b != kNoValue) {
        // int16 bias as (2, C, 1, 1): low bytes, then high bytes (little-endian in gmem).
        out[i].b =
            check(bmk1880_tl_alloc(k_, shape_t4(2, static_cast<int>(cc), 1, 1), FMT_I8, CTRL_NULL),
                  "bmk1880_tl_alloc");
        gdma(true, out[i].b, locate_(L.b), std::uint64_t{c0} * 2, stride_t4(1, 2, 1, 1));
      }
    }
    return out;
  }

  tensor_lmem* alloc_scratch(const TilePlan& t) {
    return check(bmk1880_tl_alloc(k_,
                                  shape_t4(1, static_cast<int>(p_.npu_num), 1,
                                           static_cast<int>(t.region * t.regions * t.buffers)),
                                  FMT_I8, CTRL_AL),
                 "bmk1880_tl_alloc");
  }

  void free_weights(std::vector<Weights>& weights, tensor_lmem* scratch) {
    bmk1880_tl_free(k_, scratch);
    for (std::size_t i = weights.size(); i-- > 0;) {
      if (weights[i].b) bmk1880_tl_free(k_, weights[i].b);
      if (weights[i].w) bmk1880_tl_free(k_, weights[i].w);
    }
    weights.clear();
  }

  // Saturation bounds beyond the op's own int8 saturation (Clip, a ReLU the op did not apply).
  void clamp(tensor_lmem* t, const Int8Params& q, bool relu_applied) {
    const std::int64_t lo = std::max<std::int64_t>(q.act_min, q.relu ? 0 : -128);
    if (lo > -128 && !(relu_applied && lo == 0)) {
      bmk1880_max_const_param_t p{t, t, static_cast<s8>(lo), true};
      check(bmk1880_tpu_max_const(k_, &p), "bmk1880_tpu_max_const");
    }
    if (q.act_max < 127) {
      bmk1880_min_const_param_t p{t, t, static_cast<s8>(q.act_max), true};
      check(bmk1880_tpu_min_const(k_, &p), "bmk1880_tpu_min_const");
    }
  }

  // The fields every conv and pooling call takes for one tile: operands, padding, stride.
  template <typename P>
  static P window_param(tensor_lmem* out, tensor_lmem* in, const Layer& L, const Rows& r) {
    P p{};
    p.ofmap = out;
    p.ifmap = in;
    p.pad_top = static_cast<u8>(r.pad_top);
    p.pad_bottom = static_cast<u8>(r.pad_bottom);
    p.pad_left = static_cast<u8>(L.pl);
    p.pad_right = static_cast<u8>(L.pr);
    p.stride_h = static_cast<u8>(L.sh);
    p.stride_w = static_cast<u8>(L.sw);
    if constexpr (requires { p.kh; }) {
      p.kh = static_cast<u8>(L.kh);
      p.kw = static_cast<u8>(L.kw);
    }
    return p;
  }

  void tile(const std::vector<Layer>& m, const TilePlan& t, const std::vector<Weights>& weights,
            laddr_t base, std::uint32_t n0, std::uint32_t nn, std::uint32_t c0, std::uint32_t cc,
            std::uint32_t a, std::uint32_t b) {
    const auto rows = rows_for(m, a, b);
    if (!rows) throw_internal_error("bm backend: rows of a planned tile do not exist");
    auto region = [&](std::uint32_t i) { return base + i * t.region; };
    std::uint32_t cur_region = 0;
    const Layer& first = m.front();
    const std::uint32_t in_c0 = first.reads_all_channels() ? 0 : first_channel(m, c0);
    const std::uint32_t in_cc = first.reads_all_channels() ? first.in.c : channels(m, first, cc);
    tensor_lmem* cur =
        view(region(0), {nn, in_cc, (*rows)[0].in_hi - (*rows)[0].in_lo, first.in.w});
    move_rows(true, cur, first.x, first.in, n0, in_c0, (*rows)[0].in_lo);
    for (std::size_t i = 0; i < m.size(); ++i) {
      const Layer& L = m[i];
      const Rows& r = (*rows)[i];
      const std::uint32_t out_region = cur_region == 0 ? 1 : 0;
      const std::uint32_t lc0 = first_channel(m, c0), lcc = channels(m, L, cc);
      tensor_lmem* out = view(region(out_region), {nn, lcc, r.out_hi - r.out_lo, L.out.w});
      bool relu_applied = false;
      switch (L.kind) {
        case Kind::conv:
        case Kind::gemm: {
          auto p = window_param<bmk1880_conv_param_t>(out, cur, L, r);
          p.weight = weights[i].w;
          p.bias = weights[i].b;
          p.dilation_h = static_cast<u8>(L.dh);
          p.dilation_w = static_cast<u8>(L.dw);
          p.relu_enable = L.q.relu;
          p.rshift_width = L.q.right_shift_width;
          check(bmk1880_tpu_conv(k_, &p), "bmk1880_tpu_conv");
          relu_applied = L.q.relu;
          break;
        }
        case Kind::depthwise: {
          auto p = window_param<bmk1880_depthwise_param_t>(out, cur, L, r);
          p.weight = weights[i].w;
          p.bias = weights[i].b;
          p.rshift_width = L.q.right_shift_width;
          check(bmk1880_tpu_depthwise(k_, &p), "bmk1880_tpu_depthwise");
          break;
        }
        case Kind::max_pool: {
          auto p = window_param<bmk1880_max_pooling_param_t>(out, cur, L, r);
          check(bmk1880_tpu_max_pooling(k_, &p), "bmk1880_tpu_max_pooling");
          break;
        }
        case Kind::avg_pool: {
          auto p = window_param<bmk1880_avg_pooling_param_t>(out, cur, L, r);
          p.avg_pooling_const = static_cast<u8>(L.q.multipliers.at(0));
          p.rshift_width = L.q.right_shift_width;
          check(bmk1880_tpu_avg_pooling(k_, &p), "bmk1880_tpu_avg_pooling");
          break;
        }
        case Kind::add: {
          // a * m0 into a 16-bit accumulator, then b * m1 added, shifted and saturated to int8.
          const Dims od{nn, lcc, r.out_hi - r.out_lo, L.out.w};
          tensor_lmem* other = view(region(2), od);
          move_rows(true, other, L.other, L.out, n0, lc0, r.out_lo);
          tensor_lmem* high = view(region(3), od);
          bmk1880_mul_const_param_t mp{};
          mp.res_high = high;
          mp.res_low = out;
          mp.a = cur;
          mp.b = static_cast<s8>(static_cast<u8>(L.q.multipliers.at(0)));
          mp.b_is_signed = false;
          mp.rshift_width = 0;
          check(bmk1880_tpu_mul_const(k_, &mp), "bmk1880_tpu_mul_const");
          bmk1880_mac_const_param_t ap{};
          ap.res_high = high;
          ap.res_low = out;
          ap.res_is_int8 = true;
          ap.a = other;
          ap.b = static_cast<s8>(static_cast<u8>(L.q.multipliers.at(1)));
          ap.b_is_signed = false;
          ap.lshift_width = 0;
          ap.rshift_width = L.q.right_shift_width;
          check(bmk1880_tpu_mac_const(k_, &ap), "bmk1880_tpu_mac_const");
          free_view(high);
          free_view(other);
          break;
        }
        case Kind::clamp: {
          // y = clamp(rshift(x), lo, hi): the shift (when there is one) by a multiply by 1.
          const std::int64_t lo = std::max<std::int64_t>(L.q.act_min, L.q.relu ? 0 : -128);
          tensor_lmem* src = cur;
          if (L.q.right_shift_width > 0) {
            bmk1880_mul_const_param_t mp{};
            mp.res_low = out;
            mp.a = cur;
            mp.b = 1;
            mp.b_is_signed = true;
            mp.rshift_width = L.q.right_shift_width;
            check(bmk1880_tpu_mul_const(k_, &mp), "bmk1880_tpu_mul_const");
            src = out;
          }
          bmk1880_max_const_param_t xp{out, src, static_cast<s8>(lo), true};
          check(bmk1880_tpu_max_const(k_, &xp), "bmk1880_tpu_max_const");
          relu_applied = true;
          Int8Params hi_only = L.q;
          hi_only.act_min = -128;
          hi_only.relu = false;
          clamp(out, hi_only, false);
          break;
        }
      }
      if (L.kind != Kind::clamp) clamp(out, L.q, relu_applied);
      free_view(cur);
      cur = out;
      cur_region = out_region;
    }
    const Rows& r = rows->back();
    move_rows(false, cur, m.back().y, m.back().out, n0, first_channel(m, c0), r.out_lo);
    free_view(cur);
  }

  void* k_;
  const ChipParams& p_;
  Locate locate_;
  OptLevel opt_;
};

// ---- Plan steps ----

// What the steps of one inference share: the chip over the runner's device and a BMKernel
// context recording each step's commands.
struct RunState {
  std::unique_ptr<Chip> chip;
  bmk1880_context* kernel = nullptr;
  std::set<std::uint64_t> regions;
  RunState() = default;
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;
  ~RunState() {
    if (kernel) destroy_kernel(kernel);
  }
};

RunState& state_of(ExecContext& ctx) {
  auto& any = ctx.backend_state();
  if (!any.has_value() || any.type() != typeid(std::shared_ptr<RunState>)) {
    auto s = std::make_shared<RunState>();
    s->chip = std::make_unique<Chip>(ctx.device());
    s->kernel = new_kernel(ctx.device().spec());
    any = s;
  }
  return *std::any_cast<std::shared_ptr<RunState>&>(any);
}

Locate locate_in(ExecContext& ctx, RunState& state) {
  return [&ctx, &state](ValueId v) {
    const auto place = ctx.placement(v);
    if (state.regions.insert(place.buffer.device_address).second)
      state.chip->add_region(place.buffer.device_address, place.buffer);
    return Place{place.buffer.device_address + place.offset, CTRL_NULL};
  };
}

// A step whose commands the bmodel export can record again with relocatable addresses. Its node
// computes the step's output (for a layer group, the last member).
class TpuStep : public NodeStep {
 public:
  using NodeStep::NodeStep;
  virtual void emit(void* kernel, const Graph& g, const ChipParams& p,
                    const Locate& locate) const = 0;
  ValueId output(const Graph& g) const { return node(g).outputs[0]; }
  void run(ExecContext& ctx) override {
    RunState& s = state_of(ctx);
    emit(s.kernel, ctx.graph(), s.chip->params(), locate_in(ctx, s));
    submit(s.kernel, *s.chip);
    ctx.invalidate(output(ctx.graph()));
  }
};

std::vector<Layer> members_of(const Graph& g, const std::vector<int>& nodes) {
  std::vector<Layer> m;
  for (int i : nodes) {
    std::string why;
    auto L = describe_layer(g.nodes[static_cast<std::size_t>(i)], g, &why);
    if (!L)
      throw_user_error(
          "bm: {} cannot run on the TPU ({}); the model was compiled for another "
          "preset or edited: recompile it",
          g.nodes[static_cast<std::size_t>(i)].describe(), why);
    L->node = i;
    m.push_back(std::move(*L));
  }
  return m;
}

class GroupStep final : public TpuStep {
 public:
  GroupStep(std::vector<int> nodes, OptLevel opt)
      : TpuStep(nodes.back()), nodes_(std::move(nodes)), opt_(opt) {}
  void emit(void* kernel, const Graph& g, const ChipParams& p,
            const Locate& locate) const override {
    const std::vector<Layer> m = members_of(g, nodes_);
    auto plan = plan_tiles(m, p);
    // Tiles with weights that stay in lmem alternate between two streams, so that the GDMA of
    // one tile overlaps the TPU work of the other (when two tiles' activations fit).
    if (plan && plan->tiles > 1 && opt_ == OptLevel::layer_group_with_weight)
      if (auto two = plan_tiles(m, p, 2)) plan = two;
    if (!plan)
      throw_user_error(
          "bm: {} does not fit the {} B of lmem per NPU of this device even in "
          "one-row tiles; compile the model for this preset",
          m.back().what, p.lmem_size);
    Emitter(kernel, p, locate, opt_).group(m, *plan);
  }

 private:
  std::vector<int> nodes_;
  OptLevel opt_;
};

class ConcatStep final : public TpuStep {
 public:
  using TpuStep::TpuStep;
  void emit(void* kernel, const Graph& g, const ChipParams& p,
            const Locate& locate) const override {
    Emitter(kernel, p, locate, OptLevel::none).concat(node(g), g, p);
  }
};

// An earlier member of a layer group: the group's last member computes it in lmem.
class MemberStep final : public Step {
 public:
  void run(ExecContext&) override {}
};

// A BMNet CPU layer: computed on the host and recorded on the device's "cpu" engine, at the
// preset's host cycles per element.
class CpuStep final : public NodeStep {
 public:
  using NodeStep::NodeStep;
  void run(ExecContext& ctx) override {
    const Graph& g = ctx.graph();
    const Node& n = node(g);
    std::vector<const Tensor*> inputs;
    for (ValueId v : n.inputs) inputs.push_back(v == kNoValue ? nullptr : &ctx.host(v));
    std::vector<Tensor> out = compiler::run_reference(n, inputs, g.opset);
    std::uint64_t elements = 0;
    for (std::size_t i = 0; i < n.outputs.size() && i < out.size(); ++i) {
      if (n.outputs[i] == kNoValue) continue;
      elements += static_cast<std::uint64_t>(out[i].shape().element_count());
      ctx.write(n.outputs[i], std::move(out[i]));
    }
    profile::KernelRecord rec;
    rec.name = "bm:cpu:" + n.op;
    rec.engine = "cpu";
    rec.metrics["cpu_layer"] = 1;
    rec.metrics["elements"] = static_cast<double>(elements);
    rec.cycles = static_cast<std::uint64_t>(
        static_cast<double>(elements) *
        ctx.device().cost_model().param("bm.cpu_cycles_per_element", 1.0));
    ctx.device().record_kernel(std::move(rec));
  }
};

// A BMNet customised layer: its registered TensorInst records the instructions.
class CustomStep final : public TpuStep {
 public:
  CustomStep(int node, bmnet::TensorInst* inst) : TpuStep(node), inst_(inst) {}
  void emit(void* kernel, const Graph& g, const ChipParams&, const Locate& locate) const override {
    const Node& n = node(g);
    auto* inst = dynamic_cast<bmnet::CustomizedTensorFixedInst*>(inst_);
    if (!inst)
      throw_user_error(
          "bm: the TensorInst '{}' of {} is not a CustomizedTensorFixedInst, so it "
          "has no BMKernel context to encode into; derive it from "
          "bmnet::CustomizedTensorFixedInst",
          inst_->inst_name(), n.describe());
    bmnet::TensorOp op;
    op.set_name(n.name);
    op.set_type("tg_customized");
    auto shape_of = [&](bmnet::TensorShape* s, ValueId v) {
      for (std::int64_t d : g.value(v).shape.outer_first()) s->add_dim(static_cast<int>(d));
    };
    for (ValueId v : n.inputs) {
      shape_of(op.add_input_shape(), v);
      op.add_global_input(locate(v).address);
    }
    for (ValueId v : n.outputs) {
      shape_of(op.add_output_shape(), v);
      op.add_global_output(locate(v).address);
    }
    bmnet::TGCustomizedParameter* param = op.mutable_tg_customized_param();
    param->set_sub_type(n.attr_string("sub_type", ""));
    for (std::int64_t v : n.attr_ints("i32_param")) param->add_i32_param(static_cast<int>(v));
    for (float v : n.attr_floats("f32_param")) param->add_f32_param(v);
    bmnet::InstAccess::prepare(*inst, op, n.attr_floats("threshold_x"),
                               n.attr_float("threshold_y", 0.0f));
    // Addresses are absolute on a plan run, neuron offsets in a bmodel: the bases are 0.
    bmnet::BM188xBackendContext context(kernel, 0, 0);
    inst->set_backend_context(&context);
    try {
      inst->encode();
    } catch (...) {
      inst->set_backend_context(nullptr);
      throw;
    }
    inst->set_backend_context(nullptr);
  }

 private:
  bmnet::TensorInst* inst_;
};

// ---- The backend ----

std::optional<std::string> tpu_reason(const Node& n, const Graph& g, const ChipParams& p) {
  if (n.op == "Int8Concat") {
    const auto od = g.value(n.outputs[0]).shape.outer_first();
    std::int64_t axis = n.attr_int("axis", 1);
    if (axis < 0) axis += static_cast<std::int64_t>(od.size());
    if (axis < 0 || axis >= static_cast<std::int64_t>(od.size()))
      return fmt::format("Concat axis {} of a rank-{} tensor", n.attr_int("axis", 1), od.size());
    std::uint64_t outer = 1, inner = 1;
    for (std::int64_t i = 0; i < axis; ++i)
      outer *= static_cast<std::uint64_t>(od[static_cast<std::size_t>(i)]);
    for (std::size_t i = static_cast<std::size_t>(axis) + 1; i < od.size(); ++i)
      inner *= static_cast<std::uint64_t>(od[i]);
    for (ValueId v : n.inputs) {
      if (v == kNoValue || g.value(v).dtype != DType::i8) return std::string("a non-int8 input");
      const auto id = g.value(v).shape.outer_first();
      if (Emitter::concat_chunks(
              p, outer, static_cast<std::uint64_t>(id[static_cast<std::size_t>(axis)]), inner)
              .first == 0)
        return fmt::format("concatenated rows of {} elements do not fit lmem", inner);
    }
    return std::nullopt;
  }
  std::string why;
  auto L = describe_layer(n, g, &why);
  if (!L) return why;
  if (!plan_tiles({*L}, p))
    return fmt::format(
        "{} does not fit the {} B of lmem per NPU even in one-row, one-sample "
        "tiles of {} channels",
        n.describe(), p.lmem_size, p.npu_num);
  return std::nullopt;
}

class BmBackend final : public compiler::Backend {
 public:
  BmBackend(OptLevel opt, std::map<std::string, bmnet::TensorInst*> customized)
      : opt_(opt), customized_(std::move(customized)) {}
  std::string name() const override { return "bm"; }
  std::string description() const override {
    return "BM1880 (spec 002): the int8 graph on BMKernel command buffers (TPU + GDMA, layer "
           "groups in lmem), Softmax and int8 entry/exit as BMNet CPU layers";
  }
  std::string default_device() const override { return "bm1880"; }
  std::vector<std::string> device_targets() const override { return {"bm"}; }
  // The TPU computes the quantised graph; conformance calibrates and quantises each case.
  DType compute_precision() const override { return DType::i8; }

  std::optional<std::string> unsupported_reason(const Node& n, const Graph& g) const override {
    if (is_cpu_layer(n.op)) return std::nullopt;
    if (n.op == kCustomizedOp) {
      const std::string sub = n.attr_string("sub_type", "");
      if (!customized_.count(sub))
        return fmt::format(
            "no CustomizedTensorFixedInst is registered for the customised layer "
            "'{}' (Builder::addCustomizedTensorInst)",
            sub);
      return std::nullopt;
    }
    if (!compiler::is_int8_op(n.op))
      return fmt::format(
          "the BM1880 TPU runs int8 layers and BMNet's CPU layers here are "
          "Softmax, QuantizeLinear and DequantizeLinear; {} stays f32",
          n.op);
    return tpu_reason(n, g, compile_params());
  }

  void prepare(Graph& graph) const override {
    compiler::self_calibrate(graph, name());
    if (opt_ != OptLevel::none) form_groups(graph);
  }

  std::unique_ptr<Step> lower(const Graph& g, int index) const override {
    const Node& n = g.nodes[static_cast<std::size_t>(index)];
    if (is_cpu_layer(n.op)) return std::make_unique<CpuStep>(index);
    if (n.op == "Int8Concat") return std::make_unique<ConcatStep>(index);
    if (n.op == kCustomizedOp) {
      const auto it = customized_.find(n.attr_string("sub_type", ""));
      if (it == customized_.end())
        throw_internal_error("bm backend asked to lower {} without its TensorInst", n.describe());
      return std::make_unique<CustomStep>(index, it->second);
    }
    const auto pos = n.attr_ints(kGroupAttr);
    if (pos.empty()) return std::make_unique<GroupStep>(std::vector<int>{index}, opt_);
    if (pos.size() != 2 || pos[1] < 2 || pos[0] < 0 || pos[0] >= pos[1] || index < pos[0])
      throw_user_error(
          "{}: attribute {} is not {{position, size}} of a layer group; recompile "
          "the model",
          n.describe(), kGroupAttr);
    if (pos[0] + 1 < pos[1]) return std::make_unique<MemberStep>();
    std::vector<int> nodes;
    for (int i = index - static_cast<int>(pos[0]); i <= index; ++i) {
      const auto p = g.nodes[static_cast<std::size_t>(i)].attr_ints(kGroupAttr);
      if (p.size() != 2 || p[0] != i - (index - pos[0]) || p[1] != pos[1])
        throw_user_error("{}: the layer group ending at {} is inconsistent; recompile the model",
                         g.nodes[static_cast<std::size_t>(i)].describe(), n.describe());
      nodes.push_back(i);
    }
    return std::make_unique<GroupStep>(std::move(nodes), opt_);
  }

 private:
  // Chains of TPU layers, each reading only the previous one's output (plus, for Add, an
  // activation made before the chain), whose tiles fit lmem together, become layer groups.
  void form_groups(Graph& g) const {
    const ChipParams& p = compile_params();
    const std::vector<int> uses = g.use_counts();
    auto layer = [&](std::size_t i) -> std::optional<Layer> {
      const Node& n = g.nodes[i];
      if (n.has_attr(kGroupAttr) || tpu_reason(n, g, p) || n.op == "Int8Concat")
        return std::nullopt;
      std::string why;
      auto L = describe_layer(n, g, &why);
      if (L) L->node = static_cast<int>(i);
      return L;
    };
    std::size_t i = 0;
    while (i < g.nodes.size()) {
      auto first = layer(i);
      if (!first) {
        ++i;
        continue;
      }
      std::vector<Layer> m{*first};
      for (std::size_t j = i + 1; j < g.nodes.size(); ++j) {
        const ValueId prev = m.back().y;
        if (uses[static_cast<std::size_t>(prev)] != 1) break;
        auto next = layer(j);
        if (!next || next->x != prev) break;
        if (g.value(prev).shape.rank() != 4 || g.value(next->y).shape.rank() != 4) break;
        m.push_back(*next);
        if (!plan_tiles(m, p)) {
          m.pop_back();
          break;
        }
      }
      if (m.size() > 1) {
        std::vector<ValueId> reads{m.front().x};
        for (std::size_t k = 0; k + 1 < m.size(); ++k)
          if (m[k].other != kNoValue) reads.push_back(m[k].other);
        for (std::size_t k = 0; k < m.size(); ++k)
          g.nodes[static_cast<std::size_t>(m[k].node)].attrs[kGroupAttr] =
              std::vector<std::int64_t>{static_cast<std::int64_t>(k),
                                        static_cast<std::int64_t>(m.size())};
        Node& last = g.nodes[static_cast<std::size_t>(m.back().node)];
        // Keep the bias slot so that the reads are not taken for a bias by run_int8.
        if ((last.op == "Int8Conv" || last.op == "Int8Gemm") && last.inputs.size() < 3)
          last.inputs.resize(3, kNoValue);
        for (ValueId v : reads) last.inputs.push_back(v);
        last.attrs[kGroupReads] = static_cast<std::int64_t>(reads.size());
      }
      i += m.size();
    }
    g.reindex();
  }

  OptLevel opt_;
  std::map<std::string, bmnet::TensorInst*> customized_;
};

}  // namespace

std::unique_ptr<compiler::Backend> make_bm_backend(OptLevel opt) {
  return std::make_unique<BmBackend>(opt, std::map<std::string, bmnet::TensorInst*>{});
}

std::unique_ptr<compiler::Backend> make_bm_backend(
    OptLevel opt, std::map<std::string, bmnet::TensorInst*> customized) {
  return std::make_unique<BmBackend>(opt, std::move(customized));
}

BModel plan_to_bmodel(const compiler::Plan& plan, const std::string& name) {
  const Graph& g = plan.graph;
  if (plan.backend != "bm")
    throw_user_error("plan_to_bmodel: the plan was compiled for '{}'; compile it for bm",
                     plan.backend);
  const ChipParams& p = compile_params();
  // The int8 entry and exit.
  ValueId input = kNoValue, output = kNoValue;
  float in_threshold = 0, out_threshold = 0;
  std::vector<std::size_t> tpu_steps;
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    const Node& n = g.nodes[static_cast<std::size_t>(plan.info[s].node)];
    if (plan.steps[s]->is_view() || dynamic_cast<const MemberStep*>(plan.steps[s].get())) continue;
    if (dynamic_cast<const TpuStep*>(plan.steps[s].get())) {
      tpu_steps.push_back(s);
      continue;
    }
    const auto scale = [&](ValueId v) {
      const Value& sv = g.value(v);
      if (!sv.is_constant() || sv.constant->shape().element_count() != 1)
        throw_user_error("plan_to_bmodel: {} needs a constant scalar scale", n.describe());
      return static_cast<float>(sv.constant->to_doubles()[0]) * 128.0f;
    };
    if (n.op == "QuantizeLinear" && input == kNoValue && n.inputs.size() >= 2) {
      input = n.outputs[0];
      in_threshold = scale(n.inputs[1]);
    } else if (n.op == "DequantizeLinear" && output == kNoValue && n.inputs.size() >= 2) {
      output = n.inputs[0];
      out_threshold = scale(n.inputs[1]);
    } else if (n.op != "Softmax" || output == kNoValue) {
      throw_user_error(
          "plan_to_bmodel: {} runs {} ({}); a bmodel holds the TPU layers between "
          "one QuantizeLinear and one DequantizeLinear",
          n.describe(), plan.info[s].fallback ? "on the reference backend" : "on the host",
          plan.info[s].fallback ? plan.info[s].reason : plan.info[s].kernel);
    }
  }
  if (input == kNoValue || output == kNoValue || tpu_steps.empty())
    throw_user_error(
        "plan_to_bmodel: the plan has no QuantizeLinear -> TPU layers -> "
        "DequantizeLinear section to save");
  // Neuron memory: the input at offset 0, then the plan's activation arena.
  const std::uint64_t in_bytes = g.value(input).bytes();
  const std::uint64_t arena_base = (in_bytes + 63) / 64 * 64;
  const auto offset_of = [&](ValueId v) {
    const std::int64_t o = plan.memory.offsets.at(static_cast<std::size_t>(v));
    if (o < 0) throw_internal_error("plan_to_bmodel: {} is not in the arena", g.value(v).name);
    return arena_base + static_cast<std::uint64_t>(o);
  };
  const Locate locate = [&](ValueId v) {
    const Value& val = g.value(v);
    if (val.is_constant()) {
      const std::int64_t o = plan.memory.weight_offsets.at(static_cast<std::size_t>(v));
      if (o < 0) throw_internal_error("plan_to_bmodel: {} has no weight offset", val.name);
      return Place{static_cast<std::uint64_t>(o), CTRL_WEIGHT};
    }
    return Place{offset_of(v), CTRL_NEURON};
  };
  BModel model;
  model.name = name;
  model.input_threshold = in_threshold;
  model.output_threshold = out_threshold;
  model.output_name = g.value(output).name;
  // Weights: the constants where the plan's weight buffer has them.
  model.weight.assign(plan.memory.weights_bytes, 0);
  for (std::size_t v = 0; v < g.values.size(); ++v) {
    const Value& val = g.values[v];
    const std::int64_t o =
        plan.memory.weight_offsets.size() > v ? plan.memory.weight_offsets[v] : -1;
    if (!val.is_constant() || o < 0) continue;
    const auto* src = reinterpret_cast<const std::uint8_t*>(val.constant->raw_data());
    std::copy(src, src + val.constant->bytes(), model.weight.begin() + o);
  }
  void* k = check(static_cast<void*>(new_kernel(default_spec())), "new_kernel");
  struct Cleanup {
    void* k;
    ~Cleanup() { destroy_kernel(static_cast<bmk1880_context*>(k)); }
  } cleanup{k};
  // The input, loaded at neuron offset 0, goes to its place in the arena through lmem.
  {
    const Dims d = dims_of(g.value(input).shape, "the input");
    const Place to{offset_of(input), CTRL_NEURON};
    Emitter e(k, p, locate, OptLevel::none);
    const std::uint64_t total = d.count();
    const std::uint32_t per_lane = p.lmem_size / 2;
    const std::uint64_t chunk_w = std::min<std::uint64_t>(total, std::uint64_t{per_lane});
    for (std::uint64_t off = 0; off < total; off += chunk_w) {
      const auto w = static_cast<int>(std::min(chunk_w, total - off));
      tensor_lmem* t =
          check(bmk1880_tl_alloc(k, shape_t4(1, 1, 1, w), FMT_I8, CTRL_NULL), "bmk1880_tl_alloc");
      check(bmk1880_gdma_load(k, t, off, CTRL_NEURON), "bmk1880_gdma_load");
      check(bmk1880_gdma_store(k, t, to.address + off, CTRL_NEURON), "bmk1880_gdma_store");
      bmk1880_tl_free(k, t);
    }
  }
  for (std::size_t s : tpu_steps)
    static_cast<const TpuStep*>(plan.steps[s].get())->emit(k, g, p, locate);
  u32 size = 0;
  const u8* buf = check(bmk1880_acquire_cmdbuf(k, &size), "bmk1880_acquire_cmdbuf");
  BModelStage stage;
  const Dims id = dims_of(g.value(input).shape, "the input");
  const Dims od = dims_of(g.value(output).shape, "the output");
  stage.input_shape = shape_t4(static_cast<int>(id.n), static_cast<int>(id.c),
                               static_cast<int>(id.h), static_cast<int>(id.w));
  stage.output_shape = shape_t4(static_cast<int>(od.n), static_cast<int>(od.c),
                                static_cast<int>(od.h), static_cast<int>(od.w));
  stage.input_size = in_bytes;
  stage.output_offset = offset_of(output);
  stage.output_size = g.value(output).bytes();
  stage.neuron_size = arena_base + plan.memory.arena_bytes;
  stage.cmdbuf.assign(buf, buf + size);
  model.stages.push_back(std::move(stage));
  return model;
}

}  // namespace tessera::bm

namespace tessera::targets {

void register_bm_backend() {
  compiler::register_backend([] { return bm::make_bm_backend(); });
}

}  // namespace tessera::targets
