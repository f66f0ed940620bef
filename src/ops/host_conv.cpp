// Host convolution through oneDNN (Debian's libdnnl, the library PyTorch's CPU convolutions use).
// Determinism: oneDNN runs with one OpenMP thread in every calling thread, and a convolution is
// cut into pieces (image, band of output rows, block of output channels) chosen from the shape
// alone; the pieces go over the work scheduler. A piece's bits therefore never depend on how
// many host threads run them. Primitives are made once per piece shape and kept; weights are
// reordered into oneDNN's layouts on every call, or once where the caller keeps them
// (HostConvWeights).
#include "tessera/ops/host_conv.h"

#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "blas.h"
#include "tessera/core/error.h"
#include "tessera/core/log.h"

namespace tessera::ops {

namespace {

using dnnl::memory;
using Dims = memory::dims;

// A piece holds about this many multiply-adds; fewer pieces cost less in weight reads and
// per-call overhead, more balance two or more host threads.
constexpr std::int64_t kPieceMacs = std::int64_t{1} << 24;
constexpr std::int64_t kMaxPieces = 8;
// From this many multiply-adds (about 0.1 ms on one core) a convolution gets at least two
// pieces, so that a second host thread has a share of it.
constexpr std::int64_t kTwoPieceMacs = std::int64_t{1} << 21;
// Pieces keep at least this many output pixels and output channels: below, oneDNN's kernels run
// short rows and lose more than the split gains.
constexpr std::int64_t kMinPiecePixels = 16;
constexpr std::int64_t kMinPieceChannels = 64;
// Weight reorders go in blocks of a multiple of this many output channels (every oneDNN blocking
// of output channels divides it), at most kMaxWeightBlocks per reorder.
constexpr std::int64_t kWeightBlockChannels = 64;
constexpr std::int64_t kMaxWeightBlocks = 4;
// Kept primitives; past this many shapes (the conformance suite) the cache starts over.
constexpr std::size_t kMaxKept = 512;

// 64-byte aligned floats or bytes a thread keeps between calls: a fresh large buffer costs a page
// fault per 4 KiB.
class KeptBuffer {
 public:
  void* get(std::size_t bytes) {
    if (bytes > capacity_) {
      const std::size_t rounded = (bytes + 63) / 64 * 64;
      data_.reset(std::aligned_alloc(64, rounded));
      if (!data_) throw_user_error("host convolution: cannot allocate {} bytes", rounded);
      capacity_ = rounded;
    }
    return data_.get();
  }
  void* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> data_;
  std::size_t capacity_ = 0;
};

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// oneDNN reads the calling thread's OpenMP thread count when it makes and runs a primitive.
void one_openmp_thread() {
  thread_local bool set = false;
  if (!set) {
    omp_set_num_threads(1);
    set = true;
  }
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

void* scratchpad(std::size_t bytes) {
  thread_local KeptBuffer buffer;
  return bytes ? buffer.get(bytes) : nullptr;
}

// One piece's convolution: input rows [in_lo, in_hi) and output rows [out_lo, out_hi) along the
// outer spatial dim, output channels [oc_lo, oc_hi).
struct Piece {
  std::int64_t image, in_lo, in_hi, out_lo, out_hi, pad_lo, pad_hi, oc_lo, oc_hi;
};

struct Prepared {
  dnnl::convolution_forward conv;
  memory::desc src, weights, bias, dst, user_weights;
  std::size_t scratch_bytes = 0;
};

int outer_dim(const HostConv& c) {
  return c.in[0] > 1 || c.kernel[0] > 1 || c.out[0] > 1 ? 0 : 1;
}

// Spatial dims in oneDNN order (outer first), from `first`: 2-D drops D.
Dims spatial(const HostConv& c, const std::array<std::int64_t, 3>& v, std::int64_t outer_value,
             std::int64_t delta = 0) {
  const int first = outer_dim(c);
  Dims d;
  for (int j = first; j < 3; ++j)
    d.push_back((j == first ? outer_value : v[static_cast<std::size_t>(j)]) + delta);
  return d;
}

// Activations of one image, `rows` outer rows, channels fastest.
memory::desc activations(const HostConv& c, std::int64_t channels, std::int64_t rows,
                         const std::array<std::int64_t, 3>& extent) {
  Dims d{1, channels};
  for (auto v : spatial(c, extent, rows)) d.push_back(v);
  return memory::desc(d, memory::data_type::f32,
                      d.size() == 4 ? memory::format_tag::nhwc : memory::format_tag::ndhwc);
}

// The weights of output channels [oc_lo, oc_hi) as they lie in the caller's layout.
memory::desc user_weights(const HostConv& c, std::int64_t oc_count) {
  const std::int64_t m = c.out_channels, g = c.group, mg = oc_count / g,
                     cg = c.in_channels / c.group;
  Dims kernel = spatial(c, c.kernel, c.kernel[static_cast<std::size_t>(outer_dim(c))]);
  Dims dims, strides;
  if (g > 1) dims.push_back(g);
  dims.push_back(mg);
  dims.push_back(cg);
  for (auto k : kernel) dims.push_back(k);
  if (!c.weights_hwio) {
    // (M, C/g, k...) row-major; a block of output channels is a contiguous range.
    const auto tag =
        g > 1 ? (kernel.size() == 2 ? memory::format_tag::goihw : memory::format_tag::goidhw)
              : (kernel.size() == 2 ? memory::format_tag::oihw : memory::format_tag::oidhw);
    return memory::desc(dims, memory::data_type::f32, tag);
  }
  // (k..., C/g, M) with M fastest; a block of output channels keeps the full tensor's strides.
  std::vector<std::int64_t> tail;  // strides of the kernel dims, innermost last
  std::int64_t s = cg * m;
  for (auto it = kernel.rbegin(); it != kernel.rend(); ++it) {
    tail.insert(tail.begin(), s);
    s *= *it;
  }
  if (g > 1) strides.push_back(mg);
  strides.push_back(1);
  strides.push_back(m);
  for (auto t : tail) strides.push_back(t);
  return memory::desc(dims, memory::data_type::f32, strides);
}

std::shared_ptr<const Prepared> prepare(const HostConv& c, const Piece& p, bool with_bias) {
  const int outer = outer_dim(c);
  const auto ou = static_cast<std::size_t>(outer);
  const std::int64_t oc = p.oc_hi - p.oc_lo;
  std::vector<std::int64_t> key{c.in_channels,  c.out_channels,    c.group,
                                outer,          p.in_hi - p.in_lo, p.out_hi - p.out_lo,
                                p.pad_lo,       p.pad_hi,          oc,
                                c.weights_hwio, with_bias};
  for (const auto* v : {&c.in, &c.out, &c.kernel, &c.stride, &c.dilation, &c.pad_begin, &c.pad_end})
    key.insert(key.end(), v->begin(), v->end());
  static std::mutex mutex;
  static std::map<std::vector<std::int64_t>, std::shared_ptr<const Prepared>> kept;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = kept.find(key); it != kept.end()) return it->second;

  auto prepared = std::make_shared<Prepared>();
  Prepared& pr = *prepared;
  pr.src = activations(c, c.in_channels, p.in_hi - p.in_lo, c.in);
  pr.dst = activations(c, oc, p.out_hi - p.out_lo, c.out);
  pr.user_weights = user_weights(c, oc);
  const memory::desc any_weights(pr.user_weights.dims(), memory::data_type::f32,
                                 memory::format_tag::any);
  if (with_bias) pr.bias = memory::desc({oc}, memory::data_type::f32, memory::format_tag::a);
  const Dims strides = spatial(c, c.stride, c.stride[ou]);
  const Dims dilations = spatial(c, c.dilation, c.dilation[ou], -1);  // oneDNN counts gaps
  const Dims pad_l = spatial(c, c.pad_begin, p.pad_lo);
  const Dims pad_r = spatial(c, c.pad_end, p.pad_hi);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  try {
    const auto desc =
        with_bias ? dnnl::convolution_forward::desc(
                        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                        pr.src, any_weights, pr.bias, pr.dst, strides, dilations, pad_l, pad_r)
                  : dnnl::convolution_forward::desc(
                        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                        pr.src, any_weights, pr.dst, strides, dilations, pad_l, pad_r);
    const dnnl::convolution_forward::primitive_desc pd(desc, attr, cpu_engine());
    pr.weights = pd.weights_desc();
    pr.scratch_bytes = pd.scratchpad_desc().get_size();
    pr.conv = dnnl::convolution_forward(pd);
    log(LogLevel::debug, "ops", "host convolution piece: oneDNN {}", pd.impl_info_str());
  } catch (const dnnl::error& e) {
    throw_internal_error("host convolution: oneDNN refused a convolution piece ({}): {}", e.status,
                         e.what());
  }
  if (kept.size() >= kMaxKept) kept.clear();
  kept.emplace(std::move(key), prepared);
  return prepared;
}

// Splits `count` into `parts` near-equal ranges; returns range i.
std::pair<std::int64_t, std::int64_t> band(std::int64_t count, std::int64_t parts, std::int64_t i) {
  return {count * i / parts, count * (i + 1) / parts};
}

std::vector<Piece> plan_pieces(const HostConv& c) {
  const int outer = outer_dim(c);
  const auto ou = static_cast<std::size_t>(outer);
  const std::int64_t pixels = c.out[0] * c.out[1] * c.out[2];
  const std::int64_t rows = c.out[ou];
  const std::int64_t macs =
      c.out_channels * pixels * (c.in_channels / c.group) * c.kernel[0] * c.kernel[1] * c.kernel[2];
  std::int64_t wanted =
      std::clamp((macs + kPieceMacs - 1) / kPieceMacs,
                 macs >= kTwoPieceMacs ? std::int64_t{2} : std::int64_t{1}, kMaxPieces);
  wanted += wanted % 2 * (wanted > 1);  // an even count keeps two host threads equally busy
  const std::int64_t most_row_bands =
      std::max<std::int64_t>(1, std::min(rows, pixels / kMinPiecePixels));
  const std::int64_t most_oc_blocks =
      c.group == 1 ? std::max<std::int64_t>(1, c.out_channels / kMinPieceChannels) : 1;
  // Every row band reads all of its channel block's weights, and every channel block reads all
  // of its band's input: where the weights outweigh the input (deep layers, few pixels), split
  // output channels first, so each weight is read once; elsewhere split rows first.
  const std::int64_t weight_floats =
      c.out_channels * (c.in_channels / c.group) * c.kernel[0] * c.kernel[1] * c.kernel[2];
  const std::int64_t input_floats = c.in_channels * c.in[0] * c.in[1] * c.in[2];
  std::int64_t row_bands = 1, oc_blocks = 1;
  if (weight_floats > input_floats) {
    oc_blocks = std::min(wanted, most_oc_blocks);
    row_bands = std::min(std::max<std::int64_t>(1, wanted / oc_blocks), most_row_bands);
  } else {
    row_bands = std::min(wanted, most_row_bands);
    oc_blocks = std::min(std::max<std::int64_t>(1, wanted / row_bands), most_oc_blocks);
  }
  auto piece = [&](std::int64_t image, std::int64_t out_lo, std::int64_t out_hi, std::int64_t oc_lo,
                   std::int64_t oc_hi) {
    Piece p{};
    p.image = image;
    p.out_lo = out_lo;
    p.out_hi = out_hi;
    p.oc_lo = oc_lo;
    p.oc_hi = oc_hi;
    // Input rows the piece's windows cover; what lies outside the input is padding.
    const std::int64_t first = p.out_lo * c.stride[ou] - c.pad_begin[ou];
    const std::int64_t end =
        (p.out_hi - 1) * c.stride[ou] - c.pad_begin[ou] + (c.kernel[ou] - 1) * c.dilation[ou] + 1;
    p.in_lo = std::clamp<std::int64_t>(first, 0, c.in[ou]);
    p.in_hi = std::clamp<std::int64_t>(end, p.in_lo, c.in[ou]);
    p.pad_lo = p.in_lo - first;
    p.pad_hi = end - p.in_hi;
    return p;
  };
  std::vector<Piece> pieces;
  for (std::int64_t n = 0; n < c.batch; ++n)
    for (std::int64_t r = 0; r < row_bands; ++r)
      for (std::int64_t q = 0; q < oc_blocks; ++q) {
        const auto [out_lo, out_hi] = band(rows, row_bands, r);
        const auto [oc_lo, oc_hi] = band(c.out_channels, oc_blocks, q);
        pieces.push_back(piece(n, out_lo, out_hi, oc_lo, oc_hi));
      }
  // The pieces taken last decide how long one host thread waits for the other at the end. The
  // first thread to run out of its own share takes the others' from the back (WorkScheduler), so
  // with two threads the list's last pieces often end the job: where rows were split first, the
  // last two go in halves of their rows (each half keeping kMinPiecePixels), which halves that
  // wait. (Where channels were, a half would read its block's weights again.) Still a function
  // of the shape.
  const std::int64_t row_pixels = pixels / rows;
  if (weight_floats <= input_floats && pieces.size() >= 4)
    for (std::size_t i = pieces.size() - 2; i < pieces.size(); i += 2) {
      const Piece p = pieces[i];
      const std::int64_t half = (p.out_hi - p.out_lo) / 2;
      if (half < 1 || half * row_pixels < kMinPiecePixels) continue;
      pieces[i] = piece(p.image, p.out_lo, p.out_lo + half, p.oc_lo, p.oc_hi);
      pieces.insert(pieces.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                    piece(p.image, p.out_lo + half, p.out_hi, p.oc_lo, p.oc_hi));
    }
  return pieces;
}

// One piece layout's weights: its first output channel, oneDNN layout and offset in floats into
// the weight buffer.
struct Reordered {
  std::int64_t oc_lo;
  memory::desc desc;
  std::size_t offset;
};

// A convolution's pieces, their primitives and where each piece's weights lie in the reordered
// weight buffer: made from the shape alone, so a caller that keeps its weights keeps this too.
struct ConvPlan {
  std::vector<Piece> pieces;
  std::vector<std::shared_ptr<const Prepared>> prepared;  // null: every window in padding
  std::vector<Reordered> reordered;      // one per distinct (channel block, layout)
  std::vector<std::size_t> weight_of;    // piece -> its entry of `reordered`
  std::vector<std::size_t> first_piece;  // entry of `reordered` -> the first piece using it
  std::size_t weight_floats = 0;
};

ConvPlan make_plan(const HostConv& c, bool with_bias);
void run_pieces(const HostConv& c, const float* x, const float* bias, float* y,
                const ConvPlan& plan, const float* weights);

// NC(D)HW <-> N(D)HWC copies: oneDNN reorders (vectorised) of bands of pixels, over the work
// scheduler. A band holds about kBandFloats values.
constexpr std::int64_t kBandFloats = std::int64_t{1} << 18;

struct KeptReorder {
  memory::desc from, to;
  dnnl::reorder reorder;
};

std::shared_ptr<const KeptReorder> kept_reorder(std::int64_t channels, std::int64_t pixels,
                                                std::int64_t band, bool to_channels_last) {
  static std::mutex mutex;
  static std::map<std::vector<std::int64_t>, std::shared_ptr<const KeptReorder>> kept;
  std::lock_guard<std::mutex> lock(mutex);
  if (kept.size() >= kMaxKept) kept.clear();
  auto& slot = kept[{channels, pixels, band, to_channels_last}];
  if (!slot) {
    // One image's band: C x band values, the rest of the image around it.
    const memory::desc planar({1, channels, band}, memory::data_type::f32,
                              memory::dims{channels * pixels, pixels, 1});
    const memory::desc last({1, channels, band}, memory::data_type::f32,
                            memory::dims{channels * pixels, 1, channels});
    const auto& from = to_channels_last ? planar : last;
    const auto& to = to_channels_last ? last : planar;
    slot = std::make_shared<const KeptReorder>(KeptReorder{
        from, to,
        dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), from, cpu_engine(), to))});
  }
  return slot;
}

void relayout(const float* src, std::int64_t batch, std::int64_t channels, std::int64_t pixels,
              bool to_channels_last, float* dst) {
  const std::int64_t bands = std::clamp<std::int64_t>(channels * pixels / kBandFloats, 1,
                                                      std::min<std::int64_t>(8, pixels));
  detail::parallel_for(static_cast<std::size_t>(batch * bands), [&](std::size_t unit) {
    one_openmp_thread();
    const auto n = static_cast<std::int64_t>(unit) / bands;
    const auto [p0, p1] = band(pixels, bands, static_cast<std::int64_t>(unit) % bands);
    const auto kept_ptr = kept_reorder(channels, pixels, p1 - p0, to_channels_last);
    const KeptReorder& kept = *kept_ptr;
    const std::int64_t image = n * channels * pixels;
    const std::int64_t planar_at = image + p0, last_at = image + p0 * channels;
    memory from(kept.from, cpu_engine(),
                const_cast<float*>(src + (to_channels_last ? planar_at : last_at)));
    memory to(kept.to, cpu_engine(), dst + (to_channels_last ? last_at : planar_at));
    kept.reorder.execute(thread_stream(), from, to);
  });
}

}  // namespace

struct HostConvWeights::Kept {
  std::mutex mutex;
  bool filled = false;
  HostConv conv;                // the convolution they were reordered for
  const float* from = nullptr;  // and the weights
  bool with_bias = false;
  ConvPlan plan;
  KeptBuffer buffer;
};

HostConvWeights::HostConvWeights() : kept_(std::make_unique<Kept>()) {}
HostConvWeights::~HostConvWeights() = default;

namespace {

ConvPlan make_plan(const HostConv& c, bool with_bias) {
  ConvPlan plan;
  plan.pieces = plan_pieces(c);
  one_openmp_thread();
  for (const Piece& p : plan.pieces)
    plan.prepared.push_back(p.in_hi > p.in_lo ? prepare(c, p, with_bias) : nullptr);
  // Weights in each piece's own layout, reordered once per distinct (channel block, layout).
  plan.weight_of.resize(plan.pieces.size());
  for (std::size_t i = 0; i < plan.pieces.size(); ++i) {
    if (!plan.prepared[i]) continue;
    const auto same =
        std::find_if(plan.reordered.begin(), plan.reordered.end(), [&](const Reordered& r) {
          return r.oc_lo == plan.pieces[i].oc_lo && r.desc == plan.prepared[i]->weights;
        });
    if (same != plan.reordered.end()) {
      plan.weight_of[i] = static_cast<std::size_t>(same - plan.reordered.begin());
      continue;
    }
    plan.weight_of[i] = plan.reordered.size();
    plan.reordered.push_back({plan.pieces[i].oc_lo, plan.prepared[i]->weights, plan.weight_floats});
    plan.weight_floats += (plan.prepared[i]->weights.get_size() + 63) / 64 * 16;
  }
  plan.first_piece.resize(plan.reordered.size());
  for (std::size_t i = plan.pieces.size(); i-- > 0;)
    if (plan.prepared[i]) plan.first_piece[plan.weight_of[i]] = i;
  return plan;
}

// Reorders the caller's weights into each piece layout's place in `weights`.
void reorder_weights(const HostConv& c, const ConvPlan& plan, const float* w, float* weights) {
  const std::int64_t oc_offset_stride =
      c.weights_hwio ? 1 : (c.in_channels / c.group) * c.kernel[0] * c.kernel[1] * c.kernel[2];
  // Each reorder cut into blocks of output channels (whole blocks of the layout's own blocking),
  // so a large conv's weights do not reorder on one thread while the others wait.
  struct WeightBlock {
    std::size_t reorder;
    std::int64_t lo, count;
  };
  std::vector<WeightBlock> blocks;
  for (std::size_t r = 0; r < plan.reordered.size(); ++r) {
    const Prepared& first = *plan.prepared[plan.first_piece[r]];
    const std::int64_t oc = first.user_weights.dims()[0];
    std::int64_t parts = c.group == 1 && oc % kWeightBlockChannels == 0
                             ? std::min(kMaxWeightBlocks, oc / kWeightBlockChannels)
                             : 1;
    if (parts > 1) {
      try {  // a layout blocking output channels wider than a block: one reorder
        memory::dims dims = first.weights.dims(), offsets(dims.size(), 0);
        dims[0] = kWeightBlockChannels;
        offsets[0] = kWeightBlockChannels;
        (void)first.weights.submemory_desc(dims, offsets);
      } catch (const dnnl::error&) {
        parts = 1;
      }
    }
    // Boundaries on multiples of kWeightBlockChannels (parts > 1 only where oc is one).
    const std::int64_t units = parts > 1 ? oc / kWeightBlockChannels : 1;
    const std::int64_t unit = parts > 1 ? kWeightBlockChannels : oc;
    for (std::int64_t b = 0; b < parts; ++b) {
      const std::int64_t lo = units * b / parts * unit, hi = units * (b + 1) / parts * unit;
      blocks.push_back({r, lo, hi - lo});
    }
  }
  detail::parallel_for(blocks.size(), [&](std::size_t i) {
    one_openmp_thread();
    const WeightBlock& b = blocks[i];
    const Prepared& pr = *plan.prepared[plan.first_piece[b.reorder]];
    const float* from = w + plan.reordered[b.reorder].oc_lo * oc_offset_stride;
    memory::desc user = pr.user_weights, mine = pr.weights;
    if (b.count != user.dims()[0]) {
      memory::dims dims = user.dims(), offsets(dims.size(), 0);
      dims[0] = b.count;
      offsets[0] = b.lo;
      user = user.submemory_desc(dims, offsets);
      mine = mine.submemory_desc(dims, offsets);
    }
    memory src(user, cpu_engine(), const_cast<float*>(from));
    memory dst(mine, cpu_engine(), weights + plan.reordered[b.reorder].offset);
    dnnl::reorder(src, dst).execute(thread_stream(), src, dst);
  });
}

void conv_channels_last(const HostConv& c, const float* x, const float* w, const float* bias,
                        float* y, HostConvWeights::Kept* kept) {
  const bool with_bias = bias != nullptr;
  // Kept weights made for this convolution from these weights are reused with their plan; kept
  // ones made for another stay as they are (another thread may be reading them) and this call
  // plans and reorders its own.
  std::unique_lock<std::mutex> lock;
  if (kept) {
    lock = std::unique_lock<std::mutex>(kept->mutex);
    if (kept->filled) {
      lock.unlock();
      if (kept->conv == c && kept->from == w && kept->with_bias == with_bias) {
        run_pieces(c, x, bias, y, kept->plan, static_cast<const float*>(kept->buffer.data()));
        return;
      }
      kept = nullptr;
    }
  }
  ConvPlan fresh = make_plan(c, with_bias);
  thread_local KeptBuffer weight_buffer;
  auto* weights = static_cast<float*>(
      (kept ? kept->buffer : weight_buffer).get(fresh.weight_floats * sizeof(float)));
  reorder_weights(c, fresh, w, weights);
  if (!kept) {
    run_pieces(c, x, bias, y, fresh, weights);
    return;
  }
  kept->conv = c;
  kept->from = w;
  kept->with_bias = with_bias;
  kept->plan = std::move(fresh);
  kept->filled = true;
  lock.unlock();
  run_pieces(c, x, bias, y, kept->plan, weights);
}

// Runs every piece of the convolution on weights already in each piece's layout.
void run_pieces(const HostConv& c, const float* x, const float* bias, float* y,
                const ConvPlan& plan, const float* weights) {
  const std::vector<Piece>& pieces = plan.pieces;
  const int outer = outer_dim(c);
  const std::int64_t in_row = c.in_channels * (outer == 0 ? c.in[1] * c.in[2] : c.in[2]);
  const std::int64_t out_row = (outer == 0 ? c.out[1] * c.out[2] : c.out[2]);
  const std::int64_t in_image = c.in[0] * c.in[1] * c.in[2] * c.in_channels;
  const std::int64_t out_image = c.out[0] * c.out[1] * c.out[2] * c.out_channels;
  detail::parallel_for(pieces.size(), [&](std::size_t i) {
    one_openmp_thread();
    const Piece& p = pieces[i];
    const std::int64_t oc = p.oc_hi - p.oc_lo, pixels = (p.out_hi - p.out_lo) * out_row;
    float* out = y + p.image * out_image + p.out_lo * out_row * c.out_channels;
    const bool whole_rows = oc == c.out_channels;
    thread_local KeptBuffer block;  // a block of channels, written densely, then put in place
    float* dst_data =
        whole_rows ? out
                   : static_cast<float*>(block.get(static_cast<std::size_t>(pixels * oc) * 4));
    if (p.in_hi == p.in_lo) {  // every window in padding (pads wider than the kernel)
      for (std::int64_t px = 0; px < pixels; ++px)
        for (std::int64_t o = 0; o < oc; ++o)
          dst_data[px * oc + o] = bias ? bias[p.oc_lo + o] : 0.0f;
    } else {
      const Prepared& pr = *plan.prepared[i];
      const float* in = x + p.image * in_image + p.in_lo * in_row;
      memory src(pr.src, cpu_engine(), const_cast<float*>(in));
      memory wei(pr.weights, cpu_engine(),
                 const_cast<float*>(weights + plan.reordered[plan.weight_of[i]].offset));
      memory dst(pr.dst, cpu_engine(), dst_data);
      memory scratch(memory::desc({static_cast<std::int64_t>(pr.scratch_bytes)},
                                  memory::data_type::u8, memory::format_tag::a),
                     cpu_engine(), scratchpad(pr.scratch_bytes));
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                           {DNNL_ARG_WEIGHTS, wei},
                                           {DNNL_ARG_DST, dst},
                                           {DNNL_ARG_SCRATCHPAD, scratch}};
      if (bias) {
        args.emplace(DNNL_ARG_BIAS,
                     memory(pr.bias, cpu_engine(), const_cast<float*>(bias + p.oc_lo)));
      }
      pr.conv.execute(thread_stream(), args);
    }
    if (!whole_rows)
      for (std::int64_t px = 0; px < pixels; ++px)
        std::memcpy(out + px * c.out_channels + p.oc_lo, dst_data + px * oc,
                    static_cast<std::size_t>(oc) * sizeof(float));
  });
}

}  // namespace

void host_conv(const HostConv& c, const float* x, const float* w, const float* bias, float* y,
               HostConvWeights* kept) {
  HostConvWeights::Kept* const keep = kept ? kept->kept_.get() : nullptr;
  if (c.channels_last) {
    conv_channels_last(c, x, w, bias, y, keep);
    return;
  }
  // NC(D)HW: through channels-last copies, image by image (oneDNN's own kernels want channels
  // innermost; PyTorch's NCHW convolutions reorder the same way).
  const std::int64_t in_pixels = c.in[0] * c.in[1] * c.in[2];
  const std::int64_t out_pixels = c.out[0] * c.out[1] * c.out[2];
  thread_local KeptBuffer x_last, y_last;
  auto* xl = static_cast<float*>(
      x_last.get(static_cast<std::size_t>(c.batch * in_pixels * c.in_channels) * sizeof(float)));
  auto* yl = static_cast<float*>(
      y_last.get(static_cast<std::size_t>(c.batch * out_pixels * c.out_channels) * sizeof(float)));
  relayout(x, c.batch, c.in_channels, in_pixels, true, xl);
  HostConv last = c;
  last.channels_last = true;
  conv_channels_last(last, xl, w, bias, yl, keep);
  relayout(yl, c.batch, c.out_channels, out_pixels, false, y);
}

}  // namespace tessera::ops
