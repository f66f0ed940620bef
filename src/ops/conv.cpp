// Conv (oneDNN through host_conv, as the MME; depthwise directly), ConvTranspose (sgemm +
// col2im), MaxPool, AveragePool and the global pools, for 1 to 3 spatial dims. Semantics: ONNX
// Conv-11, ConvTranspose-11, MaxPool-12, AveragePool-19, GlobalAveragePool-1,
// GlobalMaxPool-1. Every spatial rank is handled as 3-D with leading size-1 dims, so one loop
// nest serves all.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "blas.h"
#include "common.h"
#include "tessera/ops/host_conv.h"
#include "tessera/ops/reference.h"

namespace tessera::ops {

namespace {

using Triple = std::array<std::int64_t, 3>;  // canonical D, H, W (ONNX order)

struct Geometry {
  int spatial = 0;  // 1..3
  std::int64_t batch = 0, channels = 0;
  Triple in{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, dilation{1, 1, 1};
  Triple pad_begin{0, 0, 0}, pad_end{0, 0, 0}, out{1, 1, 1};
  std::int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  std::int64_t out_plane() const { return out[0] * out[1] * out[2]; }
  std::int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
  std::int64_t extent(int j) const {
    return (kernel[static_cast<std::size_t>(j)] - 1) * dilation[static_cast<std::size_t>(j)] + 1;
  }
};

// Reads the activation shape {spatial..., C, N} into g.in / g.channels / g.batch.
void read_activation(std::string_view op, const Tensor& x, Geometry& g) {
  const int r = x.rank();
  if (r < 3 || r > 5)
    throw_user_error(
        "{}: input {} must have rank 3 to 5 (1 to 3 spatial dims, then C and N; "
        "NCHW is Tessera {{W, H, C, N}})",
        op, x.shape().to_string());
  g.spatial = r - 2;
  g.channels = x.dim(r - 2);
  g.batch = x.dim(r - 1);
  for (int i = 0; i < g.spatial; ++i)  // ONNX spatial i is Tessera dim S-1-i
    g.in[static_cast<std::size_t>(3 - g.spatial + i)] = x.dim(g.spatial - 1 - i);
}

// Copies an ONNX-ordered per-spatial-dim attribute into canonical slots; empty keeps defaults.
void read_list(std::string_view op, std::string_view what, const std::vector<std::int64_t>& v,
               int spatial, Triple& dst, std::int64_t min_value) {
  if (v.empty()) return;
  if (static_cast<int>(v.size()) != spatial)
    throw_user_error(
        "{}: {} {} has {} entries but the input has {} spatial dims (one entry per "
        "spatial dim, ONNX order)",
        op, what, detail::list_to_string(v), v.size(), spatial);
  for (int i = 0; i < spatial; ++i) {
    if (v[static_cast<std::size_t>(i)] < min_value)
      throw_user_error("{}: {} {} has entry {} < {}", op, what, detail::list_to_string(v),
                       v[static_cast<std::size_t>(i)], min_value);
    dst[static_cast<std::size_t>(3 - spatial + i)] = v[static_cast<std::size_t>(i)];
  }
}

void read_pads(std::string_view op, const std::vector<std::int64_t>& pads, Geometry& g) {
  if (pads.empty()) return;
  if (static_cast<int>(pads.size()) != 2 * g.spatial)
    throw_user_error(
        "{}: pads {} has {} entries but needs {} (begins then ends for each of the {} "
        "spatial dims, ONNX order)",
        op, detail::list_to_string(pads), pads.size(), 2 * g.spatial, g.spatial);
  for (int i = 0; i < g.spatial; ++i) {
    const auto b = pads[static_cast<std::size_t>(i)],
               e = pads[static_cast<std::size_t>(g.spatial + i)];
    if (b < 0 || e < 0)
      throw_user_error("{}: pads {} has a negative entry; pads must be >= 0", op,
                       detail::list_to_string(pads));
    g.pad_begin[static_cast<std::size_t>(3 - g.spatial + i)] = b;
    g.pad_end[static_cast<std::size_t>(3 - g.spatial + i)] = e;
  }
}

// Kernel size from the weights (checked against kernel_shape when given), then strides,
// dilations and pads: the window attributes Conv and ConvTranspose share.
template <typename Params>
void read_window(std::string_view op, const Params& params, const Tensor& w, int s, Geometry& g) {
  for (int i = 0; i < s; ++i) g.kernel[static_cast<std::size_t>(3 - s + i)] = w.dim(s - 1 - i);
  if (!params.kernel_shape.empty()) {
    Triple ks{1, 1, 1};
    read_list(op, "kernel_shape", params.kernel_shape, s, ks, 1);
    if (ks != g.kernel)
      throw_user_error("{}: kernel_shape {} does not match the weights {}", op,
                       detail::list_to_string(params.kernel_shape), w.shape().to_string());
  }
  read_list(op, "strides", params.strides, s, g.stride, 1);
  read_list(op, "dilations", params.dilations, s, g.dilation, 1);
  read_pads(op, params.pads, g);
}

Shape output_shape(const Geometry& g, std::int64_t channels) {
  std::vector<std::int64_t> dims;
  for (int i = g.spatial - 1; i >= 0; --i)
    dims.push_back(g.out[static_cast<std::size_t>(3 - g.spatial + i)]);
  dims.push_back(channels);
  dims.push_back(g.batch);
  return Shape::from_fastest_first(dims);
}

void sliding_output(std::string_view op, const Tensor& x, Geometry& g, bool ceil_mode) {
  for (int j = 0; j < 3; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    const std::int64_t span = g.in[ju] + g.pad_begin[ju] + g.pad_end[ju] - g.extent(j);
    if (span < 0)
      throw_user_error(
          "{}: input {} is smaller than the (dilated) kernel along spatial dim {}: "
          "{} + pads {} < extent {}; pad more or use a smaller kernel",
          op, x.shape().to_string(), j - (3 - g.spatial), g.in[ju], g.pad_begin[ju] + g.pad_end[ju],
          g.extent(j));
    std::int64_t out =
        ceil_mode ? (span + g.stride[ju] - 1) / g.stride[ju] + 1 : span / g.stride[ju] + 1;
    // A last window starting inside the end padding is dropped (ONNX MaxPool, as PyTorch).
    if (ceil_mode && (out - 1) * g.stride[ju] >= g.in[ju] + g.pad_begin[ju]) --out;
    g.out[ju] = out;
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// Whether this host runs the AVX2 + FMA clones of the hot loops below.
bool host_has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2");
  return has;
}
#endif

// One channel plane of a depthwise convolution (one input and one output channel per group):
// for each output, acc starts at +0 and takes fma(x, w, acc) over (kd, kh, kw) in column order,
// padding reading 0, then + 0: the operations, in order, of the one-row im2col GEMM it replaces
// (OpenBLAS's sgemm kernel accumulates a dot product with one FMA per k, then adds C, zeroed
// for beta 0). The bias is added afterwards by add_bias, as for every convolution.
[[gnu::always_inline]] inline void depthwise_plane_body(const float* x, const float* w,
                                                        const Geometry& g, float* out) {
  const std::int64_t ow_n = g.out[2];
  float* row = out;
  for (std::int64_t od = 0; od < g.out[0]; ++od)
    for (std::int64_t oh = 0; oh < g.out[1]; ++oh, row += ow_n) {
      for (std::int64_t ow = 0; ow < ow_n; ++ow) row[ow] = 0.0f;
      const float* wk = w;
      for (std::int64_t kd = 0; kd < g.kernel[0]; ++kd) {
        const std::int64_t id = od * g.stride[0] - g.pad_begin[0] + kd * g.dilation[0];
        for (std::int64_t kh = 0; kh < g.kernel[1]; ++kh) {
          const std::int64_t ih = oh * g.stride[1] - g.pad_begin[1] + kh * g.dilation[1];
          const bool inside = id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1];
          const float* src = inside ? x + (id * g.in[1] + ih) * g.in[2] : nullptr;
          for (std::int64_t kw = 0; kw < g.kernel[2]; ++kw, ++wk) {
            const float wv = *wk;
            if (!inside) {
              for (std::int64_t ow = 0; ow < ow_n; ++ow) row[ow] = std::fma(0.0f, wv, row[ow]);
              continue;
            }
            // Output columns whose input column is inside the row: [lo, hi).
            const std::int64_t off = kw * g.dilation[2] - g.pad_begin[2];
            std::int64_t lo = off >= 0 ? 0 : (-off + g.stride[2] - 1) / g.stride[2];
            std::int64_t hi =
                g.in[2] - off > 0 ? (g.in[2] - off + g.stride[2] - 1) / g.stride[2] : 0;
            lo = std::min(lo, ow_n);
            hi = std::clamp(hi, lo, ow_n);
            for (std::int64_t ow = 0; ow < lo; ++ow) row[ow] = std::fma(0.0f, wv, row[ow]);
            if (g.stride[2] == 1) {
              // Pointer arithmetic stays inside the row: lo + off >= 0 whenever lo < hi.
              const float* s1 = lo < hi ? src + (lo + off) : nullptr;
              for (std::int64_t ow = lo; ow < hi; ++ow)
                row[ow] = std::fma(s1[ow - lo], wv, row[ow]);
            } else {
              for (std::int64_t ow = lo; ow < hi; ++ow)
                row[ow] = std::fma(src[ow * g.stride[2] + off], wv, row[ow]);
            }
            for (std::int64_t ow = hi; ow < ow_n; ++ow) row[ow] = std::fma(0.0f, wv, row[ow]);
          }
        }
      }
      for (std::int64_t ow = 0; ow < ow_n; ++ow) row[ow] = row[ow] + 0.0f;
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// std::fma is exact everywhere; with the FMA instructions it is also fast (and vectorises).
[[gnu::target("avx2,fma")]] void depthwise_plane_fma(const float* x, const float* w,
                                                     const Geometry& g, float* out) {
  depthwise_plane_body(x, w, g, out);
}
#endif

void depthwise_plane(const float* x, const float* w, const Geometry& g, float* out) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (host_has_avx2_fma()) {
    depthwise_plane_fma(x, w, g, out);
    return;
  }
#endif
  depthwise_plane_body(x, w, g, out);
}

template <typename T>
void add_bias(const Tensor* bias, std::int64_t out_channels, std::int64_t plane, std::int64_t batch,
              T* out) {
  if (bias == nullptr) return;
  Tensor scratch;
  const Tensor& b = detail::compute_ref<T>(*bias, scratch);
  const T* pb = b.data<T>();
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t m = 0; m < out_channels; ++m) {
      T* p = out + (n * out_channels + m) * plane;
      const T v = pb[m];
      for (std::int64_t i = 0; i < plane; ++i) p[i] += v;
    }
}

void check_bias(std::string_view op, const Tensor* bias, const Tensor& x, std::int64_t m) {
  if (bias == nullptr) return;
  detail::require_same_dtype(op, x, *bias);
  if (bias->rank() != 1 || bias->dim(0) != m)
    throw_user_error("{}: bias {} must be 1-D with {} elements (one per output channel)", op,
                     bias->shape().to_string(), m);
}

void gemm_rowmajor(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                   std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc) {
  detail::sgemm(trans_a, false, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}
void gemm_rowmajor(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k, const double* a,
                   std::int64_t lda, const double* b, std::int64_t ldb, double* c,
                   std::int64_t ldc) {
  detail::dgemm(trans_a, false, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
}

// f64 convolution (oneDNN has none) as im2col + dgemm per (image, group): col holds, for each
// tap (c, kd, kh, kw), the input it meets at every output position (0 in the padding).
Tensor conv_f64(const Tensor& x, const Tensor& w, const Tensor* bias, const Geometry& g,
                std::int64_t m, std::int64_t group) {
  Tensor out(DType::f64, output_shape(g, m));
  const std::int64_t mg = m / group, cg = g.channels / group, kdim = cg * g.kernel_size();
  const std::int64_t p_in = g.in_plane(), p_out = g.out_plane();
  const double* px = x.data<double>();
  const double* pw = w.data<double>();
  double* po = out.data<double>();
  detail::parallel_for(static_cast<std::size_t>(g.batch * group), [&](std::size_t unit) {
    const auto n = static_cast<std::int64_t>(unit) / group;
    const auto gi = static_cast<std::int64_t>(unit) % group;
    std::vector<double> col(static_cast<std::size_t>(kdim * p_out));
    double* dst = col.data();
    for (std::int64_t c = 0; c < cg; ++c) {
      const double* xc = px + (n * g.channels + gi * cg + c) * p_in;
      for (std::int64_t kd = 0; kd < g.kernel[0]; ++kd)
        for (std::int64_t kh = 0; kh < g.kernel[1]; ++kh)
          for (std::int64_t kw = 0; kw < g.kernel[2]; ++kw)
            for (std::int64_t od = 0; od < g.out[0]; ++od) {
              const std::int64_t id = od * g.stride[0] - g.pad_begin[0] + kd * g.dilation[0];
              for (std::int64_t oh = 0; oh < g.out[1]; ++oh) {
                const std::int64_t ih = oh * g.stride[1] - g.pad_begin[1] + kh * g.dilation[1];
                const bool row_inside = id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1];
                for (std::int64_t ow = 0; ow < g.out[2]; ++ow, ++dst) {
                  const std::int64_t iw = ow * g.stride[2] - g.pad_begin[2] + kw * g.dilation[2];
                  *dst = row_inside && iw >= 0 && iw < g.in[2]
                             ? xc[(id * g.in[1] + ih) * g.in[2] + iw]
                             : 0.0;
                }
              }
            }
    }
    // out_g (M/g x P_out) = W_g (M/g x C/g*k) * col (C/g*k x P_out)
    detail::dgemm(false, false, mg, p_out, kdim, 1.0, pw + gi * mg * kdim, kdim, col.data(), p_out,
                  0.0, po + (n * m + gi * mg) * p_out, p_out);
  });
  add_bias(bias, m, p_out, g.batch, po);
  return out;
}

}  // namespace

Tensor conv(const Tensor& x_in, const Tensor& w_in, const Tensor* bias, const ConvParams& params) {
  detail::require_float("Conv", x_in, "X");
  detail::require_same_dtype("Conv", x_in, w_in);
  Geometry g;
  read_activation("Conv", x_in, g);
  if (w_in.rank() != x_in.rank())
    throw_user_error("Conv: weights {} must have the input's rank {} ({{k..., C/group, M}})",
                     w_in.shape().to_string(), x_in.rank());
  const int s = g.spatial;
  const std::int64_t group = params.group;
  const std::int64_t m = w_in.dim(s + 1), cg = w_in.dim(s);
  if (group < 1 || g.channels % group != 0 || m % group != 0)
    throw_user_error(
        "Conv: group {} must be >= 1 and divide both the input channels {} and the "
        "output channels {}",
        group, g.channels, m);
  if (cg * group != g.channels)
    throw_user_error(
        "Conv: weights {} have {} input channels per group but X {} has {} channels "
        "in {} group(s) (expected {} per group)",
        w_in.shape().to_string(), cg, x_in.shape().to_string(), g.channels, group,
        g.channels / group);
  read_window("Conv", params, w_in, s, g);
  check_bias("Conv", bias, x_in, m);
  sliding_output("Conv", x_in, g, false);
  if (x_in.dtype() == DType::f64) return conv_f64(x_in, w_in, bias, g, m, group);

  Tensor x_scratch, w_scratch;
  const Tensor& x = detail::f32_ref(x_in, x_scratch);
  const Tensor& w = detail::f32_ref(w_in, w_scratch);
  Tensor out(DType::f32, output_shape(g, m));
  const std::int64_t mg = m / group, kdim = cg * g.kernel_size();
  const std::int64_t p_in = g.in_plane(), p_out = g.out_plane();
  const float* px = x.data<float>();
  const float* pw = w.data<float>();
  float* po = out.data<float>();
  if (g.batch == 0 || m == 0 || p_out == 0) return detail::restore(std::move(out), x_in.dtype());
  if (kdim == 0) {  // no input channels: the output is the bias
    std::fill(po, po + out.element_count(), 0.0f);
    add_bias(bias, m, p_out, g.batch, po);
    return detail::restore(std::move(out), x_in.dtype());
  }
  const bool pointwise = g.kernel_size() == 1 && g.stride == Triple{1, 1, 1} &&
                         g.pad_begin == Triple{0, 0, 0} && g.pad_end == Triple{0, 0, 0};
  if (cg == 1 && mg == 1 && !pointwise) {
    // Depthwise: one unit per (image, channel), each writing only its own plane.
    detail::parallel_for(static_cast<std::size_t>(g.batch * group), [&](std::size_t unit) {
      const auto n = static_cast<std::int64_t>(unit) / group;
      const auto gi = static_cast<std::int64_t>(unit) % group;
      depthwise_plane(px + (n * g.channels + gi) * p_in, pw + gi * kdim, g,
                      po + (n * m + gi) * p_out);
    });
  } else {
    HostConv hc;
    hc.batch = g.batch;
    hc.in_channels = g.channels;
    hc.out_channels = m;
    hc.group = group;
    hc.in = g.in;
    hc.out = g.out;
    hc.kernel = g.kernel;
    hc.stride = g.stride;
    hc.dilation = g.dilation;
    hc.pad_begin = g.pad_begin;
    hc.pad_end = g.pad_end;
    Tensor b_scratch;
    const float* pb = bias ? detail::f32_ref(*bias, b_scratch).data<float>() : nullptr;
    host_conv(hc, px, pw, pb, po, params.kept_weights);
    return detail::restore(std::move(out), x_in.dtype());
  }
  add_bias(bias, m, p_out, g.batch, po);
  return detail::restore(std::move(out), x_in.dtype());
}

Tensor conv_transpose(const Tensor& x_in, const Tensor& w_in, const Tensor* bias,
                      const ConvTransposeParams& params) {
  detail::require_float("ConvTranspose", x_in, "X");
  detail::require_same_dtype("ConvTranspose", x_in, w_in);
  Geometry g;
  read_activation("ConvTranspose", x_in, g);
  if (w_in.rank() != x_in.rank())
    throw_user_error(
        "ConvTranspose: weights {} must have the input's rank {} ({{k..., M/group, C}})",
        w_in.shape().to_string(), x_in.rank());
  const int s = g.spatial;
  const std::int64_t group = params.group;
  if (w_in.dim(s + 1) != g.channels)
    throw_user_error(
        "ConvTranspose: weights {} have {} input channels (outermost dim) but X {} "
        "has {}",
        w_in.shape().to_string(), w_in.dim(s + 1), x_in.shape().to_string(), g.channels);
  if (group < 1 || g.channels % group != 0)
    throw_user_error("ConvTranspose: group {} must be >= 1 and divide the input channels {}", group,
                     g.channels);
  const std::int64_t mg = w_in.dim(s), m = mg * group, cg = g.channels / group;
  read_window("ConvTranspose", params, w_in, s, g);
  Triple out_pad{0, 0, 0};
  read_list("ConvTranspose", "output_padding", params.output_padding, s, out_pad, 0);
  check_bias("ConvTranspose", bias, x_in, m);
  for (int j = 0; j < 3; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    if (out_pad[ju] >= std::max(g.stride[ju], g.dilation[ju]))
      throw_user_error(
          "ConvTranspose: output_padding {} must be smaller than the stride or the "
          "dilation of its dim",
          detail::list_to_string(params.output_padding));
    g.out[ju] =
        g.stride[ju] * (g.in[ju] - 1) + out_pad[ju] + g.extent(j) - g.pad_begin[ju] - g.pad_end[ju];
    if (g.out[ju] < 1)
      throw_user_error("ConvTranspose: pads {} leave no output along a spatial dim (size {})",
                       detail::list_to_string(params.pads), g.out[ju]);
  }

  return detail::with_compute_type(x_in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Tensor x_scratch, w_scratch;
    const Tensor& x = detail::compute_ref<T>(x_in, x_scratch);
    const Tensor& w = detail::compute_ref<T>(w_in, w_scratch);
    Tensor out(detail::compute_dtype<T>(), output_shape(g, m));
    const std::int64_t ks = g.kernel_size(), rows = mg * ks;
    const std::int64_t p_in = g.in_plane(), p_out = g.out_plane();
    const T* px = x.data<T>();
    const T* pw = w.data<T>();
    T* po = out.data<T>();
    // One unit per (image, group): each scatters only into its own output channels.
    detail::parallel_for(static_cast<std::size_t>(g.batch * group), [&](std::size_t unit) {
      const auto n = static_cast<std::int64_t>(unit) / group;
      const auto gi = static_cast<std::int64_t>(unit) % group;
      std::vector<T> col(static_cast<std::size_t>(rows * p_in));
      {
        // col (M/g*k x P_in) = W_g^T (M/g*k x C/g) * X_g (C/g x P_in)
        gemm_rowmajor(true, rows, p_in, cg, pw + gi * cg * rows, rows,
                      px + (n * g.channels + gi * cg) * p_in, p_in, col.data(), p_in);
        T* og = po + (n * m + gi * mg) * p_out;
        const T* src = col.data();
        for (std::int64_t mm = 0; mm < mg; ++mm)
          for (std::int64_t kd = 0; kd < g.kernel[0]; ++kd)
            for (std::int64_t kh = 0; kh < g.kernel[1]; ++kh)
              for (std::int64_t kw = 0; kw < g.kernel[2]; ++kw, src += p_in) {
                T* om = og + mm * p_out;
                for (std::int64_t id = 0; id < g.in[0]; ++id) {
                  const std::int64_t od = id * g.stride[0] - g.pad_begin[0] + kd * g.dilation[0];
                  if (od < 0 || od >= g.out[0]) continue;
                  for (std::int64_t ih = 0; ih < g.in[1]; ++ih) {
                    const std::int64_t oh = ih * g.stride[1] - g.pad_begin[1] + kh * g.dilation[1];
                    if (oh < 0 || oh >= g.out[1]) continue;
                    const T* srow = src + (id * g.in[1] + ih) * g.in[2];
                    T* orow = om + (od * g.out[1] + oh) * g.out[2];
                    for (std::int64_t iw = 0; iw < g.in[2]; ++iw) {
                      const std::int64_t ow =
                          iw * g.stride[2] - g.pad_begin[2] + kw * g.dilation[2];
                      if (ow >= 0 && ow < g.out[2]) orow[ow] += srow[iw];
                    }
                  }
                }
              }
      }
    });
    add_bias(bias, m, p_out, g.batch, po);
    return detail::restore(std::move(out), x_in.dtype());
  });
}

namespace {

enum class PoolKind { max, average };

// One window tap over outputs [lo, hi) of a row, output ow reading src[ow * stride + off]: MaxPool
// keeps a NaN once met, else takes a larger value (so of equals, -0 and +0, the first stays);
// AveragePool adds. A stride known at compile time lets the loop vectorise.
template <PoolKind kind, int kStride, typename T>
[[gnu::always_inline]] inline void pool_tap_body(T* row, const T* src, std::int64_t off,
                                                 std::int64_t lo, std::int64_t hi,
                                                 std::int64_t stride) {
  const std::int64_t s = kStride > 0 ? kStride : stride;
  for (std::int64_t ow = lo; ow < hi; ++ow) {
    const T v = src[ow * s + off], acc = row[ow];
    if constexpr (kind == PoolKind::max)
      row[ow] = acc == acc && (v > acc || v != v) ? v : acc;
    else
      row[ow] = acc + v;
  }
}

template <PoolKind kind, typename T>
[[gnu::always_inline]] inline void pool_tap_any(T* row, const T* src, std::int64_t off,
                                                std::int64_t lo, std::int64_t hi,
                                                std::int64_t stride) {
  if (stride == 1)
    pool_tap_body<kind, 1>(row, src, off, lo, hi, stride);
  else if (stride == 2)
    pool_tap_body<kind, 2>(row, src, off, lo, hi, stride);
  else
    pool_tap_body<kind, 0>(row, src, off, lo, hi, stride);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
[[gnu::target("avx2")]] void pool_tap_avx2(PoolKind kind, float* row, const float* src,
                                           std::int64_t off, std::int64_t lo, std::int64_t hi,
                                           std::int64_t stride) {
  if (kind == PoolKind::max)
    pool_tap_any<PoolKind::max>(row, src, off, lo, hi, stride);
  else
    pool_tap_any<PoolKind::average>(row, src, off, lo, hi, stride);
}
#endif

void pool_tap(PoolKind kind, float* row, const float* src, std::int64_t off, std::int64_t lo,
              std::int64_t hi, std::int64_t stride) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (host_has_avx2_fma()) {
    pool_tap_avx2(kind, row, src, off, lo, hi, stride);
    return;
  }
#endif
  if (kind == PoolKind::max)
    pool_tap_any<PoolKind::max>(row, src, off, lo, hi, stride);
  else
    pool_tap_any<PoolKind::average>(row, src, off, lo, hi, stride);
}

// f64 pools are rare: the plain loop, no AVX2 clone.
void pool_tap(PoolKind kind, double* row, const double* src, std::int64_t off, std::int64_t lo,
              std::int64_t hi, std::int64_t stride) {
  if (kind == PoolKind::max)
    pool_tap_any<PoolKind::max>(row, src, off, lo, hi, stride);
  else
    pool_tap_any<PoolKind::average>(row, src, off, lo, hi, stride);
}

// `indices` (MaxPool only, may be null) receives the flat NCHW index of each selected element,
// row-major or, with column_major, with the spatial dims reversed (ONNX storage_order 1).
// T is the compute type: double for f64, float for the other accepted dtypes (exact for each).
template <typename T>
Tensor pool(std::string_view op, const Tensor& x_in, const PoolParams& params, PoolKind kind,
            Tensor* indices, bool column_major) {
  const bool int8 = x_in.dtype() == DType::i8 || x_in.dtype() == DType::u8;
  if (!(is_floating(x_in.dtype()) || (kind == PoolKind::max && int8)))
    throw_user_error("{}: input has dtype {} but this op takes f32, f16 or bf16{}", op,
                     dtype_name(x_in.dtype()), kind == PoolKind::max ? ", i8 or u8" : "");
  Geometry g;
  read_activation(op, x_in, g);
  if (params.kernel_shape.empty())
    throw_user_error("{}: kernel_shape is required ({} entries, ONNX order)", op, g.spatial);
  read_list(op, "kernel_shape", params.kernel_shape, g.spatial, g.kernel, 1);
  read_list(op, "strides", params.strides, g.spatial, g.stride, 1);
  read_list(op, "dilations", params.dilations, g.spatial, g.dilation, 1);
  read_pads(op, params.pads, g);
  sliding_output(op, x_in, g, params.ceil_mode);
  Tensor x_scratch;
  const Tensor& x = detail::compute_ref<T>(x_in, x_scratch);
  Tensor out(detail::compute_dtype<T>(), output_shape(g, g.channels));
  const T* px = x.data<T>();
  T* po = out.data<T>();
  const std::int64_t planes = g.batch * g.channels;
  std::int64_t* pi = nullptr;
  if (indices != nullptr) {
    *indices = Tensor(DType::i64, out.shape());  // ONNX: MaxPool's Indices are int64
    pi = indices->data<std::int64_t>();
  }
  // Strides of the canonical (d, h, w) position in the reported index.
  const Triple index_stride =
      column_major ? Triple{1, g.in[0], g.in[0] * g.in[1]} : Triple{g.in[1] * g.in[2], g.in[2], 1};
  // Each dim's windows, once per call: first tap's position, taps [lo, hi) inside the input,
  // and the taps inside input + padding (count_include_pad divides by their product).
  struct Window {
    std::int64_t start, lo, hi, padded;
  };
  std::array<std::vector<Window>, 3> windows;
  for (int j = 0; j < 3; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    const std::int64_t d = g.dilation[ju];
    for (std::int64_t o = 0; o < g.out[ju]; ++o) {
      Window w{};
      w.start = o * g.stride[ju] - g.pad_begin[ju];
      // Taps t with 0 <= start + t*d < in.
      w.lo = w.start >= 0 ? 0 : (-w.start + d - 1) / d;
      const std::int64_t lim = g.in[ju] - w.start;
      w.hi = std::max(w.lo, lim > 0 ? std::min(g.kernel[ju], (lim + d - 1) / d) : 0);
      const std::int64_t plim = g.in[ju] + g.pad_end[ju] - w.start;
      w.padded = plim > 0 ? std::min(g.kernel[ju], (plim + d - 1) / d) : 0;
      windows[ju].push_back(w);
    }
  }
  // Each tap c along a row: its offset in the input row and the outputs [lo, hi) it lies inside.
  struct RowTap {
    std::int64_t off, lo, hi;
  };
  std::vector<RowTap> row_taps;
  for (std::int64_t c = 0; c < g.kernel[2]; ++c) {
    const std::int64_t off = c * g.dilation[2] - g.pad_begin[2], s = g.stride[2];
    const std::int64_t lo = std::min(off >= 0 ? 0 : (-off + s - 1) / s, g.out[2]);
    row_taps.push_back(
        {off, lo, std::clamp(g.in[2] - off > 0 ? (g.in[2] - off + s - 1) / s : 0, lo, g.out[2])});
  }
  // Row by row: every tap (a, b, c) of the window in turn, applied to the whole output row, so
  // each output still meets its taps in the order (a, b, c) and the results keep their bits.
  detail::parallel_for(static_cast<std::size_t>(planes), [&](std::size_t plane) {
    const auto p = static_cast<std::int64_t>(plane);
    const T* xp = px + p * g.in_plane();
    T* op_out = po + p * g.out_plane();
    const std::int64_t ow_n = g.out[2];
    std::vector<std::int64_t> best(pi != nullptr ? static_cast<std::size_t>(ow_n) : 0);
    for (std::int64_t od = 0; od < g.out[0]; ++od)
      for (std::int64_t oh = 0; oh < g.out[1]; ++oh) {
        const Window& wd = windows[0][static_cast<std::size_t>(od)];
        const Window& wh = windows[1][static_cast<std::size_t>(oh)];
        const std::int64_t row_at = (od * g.out[1] + oh) * ow_n;
        T* row = op_out + row_at;
        std::fill(row, row + ow_n,
                  kind == PoolKind::max ? -std::numeric_limits<T>::infinity() : T(0));
        std::fill(best.begin(), best.end(), -1);
        for (std::int64_t a = wd.lo; a < wd.hi; ++a)
          for (std::int64_t b = wh.lo; b < wh.hi; ++b) {
            const std::int64_t id = wd.start + a * g.dilation[0];
            const std::int64_t ih = wh.start + b * g.dilation[1];
            const T* src = xp + (id * g.in[1] + ih) * g.in[2];
            for (const RowTap& t : row_taps) {
              const std::int64_t off = t.off, lo = t.lo, hi = t.hi, s = g.stride[2];
              if (pi == nullptr) {
                pool_tap(kind, row, src, off, lo, hi, s);
              } else {  // pool_tap's MaxPool rule, also taking the first tap (even -inf)
                for (std::int64_t ow = lo; ow < hi; ++ow) {
                  const T v = src[ow * s + off], acc = row[ow];
                  if ((v > acc || v != v || best[static_cast<std::size_t>(ow)] < 0) && acc == acc) {
                    row[ow] = v;
                    best[static_cast<std::size_t>(ow)] =
                        id * index_stride[0] + ih * index_stride[1] + (ow * s + off) * index_stride[2];
                  }
                }
              }
            }
          }
        if (kind == PoolKind::average)
          for (std::int64_t ow = 0; ow < ow_n; ++ow) {
            const Window& ww = windows[2][static_cast<std::size_t>(ow)];
            const std::int64_t divisor =
                params.count_include_pad
                    ? wd.padded * wh.padded * ww.padded
                    : (wd.hi - wd.lo) * (wh.hi - wh.lo) * (ww.hi - ww.lo);
            row[ow] = divisor > 0 ? row[ow] / static_cast<T>(divisor)
                                  : std::numeric_limits<T>::quiet_NaN();
          }
        if (pi != nullptr)
          for (std::int64_t ow = 0; ow < ow_n; ++ow) {
            const std::int64_t at = best[static_cast<std::size_t>(ow)];
            pi[p * g.out_plane() + row_at + ow] =
                at < 0 ? -1 : p * g.in_plane() + at;
          }
      }
  });
  return int8 ? out.astype(x_in.dtype()) : detail::restore(std::move(out), x_in.dtype());
}

Tensor pool(std::string_view op, const Tensor& x_in, const PoolParams& params, PoolKind kind,
            Tensor* indices = nullptr, bool column_major = false) {
  if (x_in.dtype() == DType::f64)
    return pool<double>(op, x_in, params, kind, indices, column_major);
  return pool<float>(op, x_in, params, kind, indices, column_major);
}

Tensor global_pool(std::string_view op, const Tensor& x_in, PoolKind kind) {
  detail::require_float(op, x_in);
  Geometry g;
  read_activation(op, x_in, g);
  for (auto& v : g.out) v = 1;
  return detail::with_compute_type(x_in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Tensor x_scratch;
    const Tensor& x = detail::compute_ref<T>(x_in, x_scratch);
    Tensor out(detail::compute_dtype<T>(), output_shape(g, g.channels));
    const T* px = x.data<T>();
    T* po = out.data<T>();
    const std::int64_t plane = g.in_plane();
    for (std::int64_t p = 0; p < g.batch * g.channels; ++p) {
      const T* xp = px + p * plane;
      if (kind == PoolKind::max) {
        T acc = -std::numeric_limits<T>::infinity();
        for (std::int64_t i = 0; i < plane; ++i)
          if (xp[i] > acc || std::isnan(xp[i])) acc = std::isnan(acc) ? acc : xp[i];
        po[p] = acc;
      } else {
        double acc = 0.0;  // double keeps large planes accurate
        for (std::int64_t i = 0; i < plane; ++i) acc += xp[i];
        po[p] = static_cast<T>(acc / static_cast<double>(plane));
      }
    }
    return detail::restore(std::move(out), x_in.dtype());
  });
}

}  // namespace

Tensor max_pool(const Tensor& x, const PoolParams& params) {
  return pool("MaxPool", x, params, PoolKind::max);
}
MaxPoolResult max_pool_with_indices(const Tensor& x, const PoolParams& params, bool column_major) {
  MaxPoolResult r;
  r.values = pool("MaxPool", x, params, PoolKind::max, &r.indices, column_major);
  return r;
}
Tensor average_pool(const Tensor& x, const PoolParams& params) {
  return pool("AveragePool", x, params, PoolKind::average);
}
Tensor global_average_pool(const Tensor& x) {
  return global_pool("GlobalAveragePool", x, PoolKind::average);
}
Tensor global_max_pool(const Tensor& x) {
  return global_pool("GlobalMaxPool", x, PoolKind::max);
}

}  // namespace tessera::ops

namespace tessera::ops {

// ---- MaxUnpool-11 ----

Tensor max_unpool(const Tensor& x, const Tensor& indices, const Shape& output_shape) {
  if (!(x.shape() == indices.shape()))
    throw_user_error("MaxUnpool: indices {} must have the shape of X {}",
                     indices.shape().to_string(), x.shape().to_string());
  if (is_floating(indices.dtype()) || indices.dtype() == DType::boolean)
    throw_user_error("MaxUnpool: indices must be integers, got {}", dtype_name(indices.dtype()));
  if (output_shape.rank() != x.rank() || output_shape[x.rank() - 1] != x.dim(x.rank() - 1) ||
      output_shape[x.rank() - 2] != x.dim(x.rank() - 2))
    throw_user_error("MaxUnpool: output shape {} must keep the rank, N and C of X {}",
                     output_shape.to_string(), x.shape().to_string());
  Tensor out(x.dtype(), output_shape);
  const std::vector<std::int64_t> idx = indices.to_ints();
  const std::size_t es = dtype_size(x.dtype());
  const auto* src = static_cast<const std::byte*>(x.raw_data());
  auto* dst = static_cast<std::byte*>(out.raw_data());
  for (std::size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || idx[i] >= out.element_count())
      throw_user_error("MaxUnpool: index {} (element {}) is outside the output {} ({} elements)",
                       idx[i], i, output_shape.to_string(), out.element_count());
    std::memcpy(dst + static_cast<std::size_t>(idx[i]) * es, src + i * es, es);
  }
  return out;
}

}  // namespace tessera::ops
