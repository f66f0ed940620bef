// Resize (ONNX Resize-19 without antialias, axes or keep_aspect_ratio_policy, which the importer
// resolves into per-dim scales/sizes). Nearest, linear and cubic are separable, so the op runs
// one pass per resized dim; N-linear equals successive 1-D linear passes.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "common.h"
#include "tessera/ops/reference.h"

namespace tessera::ops {

ResizeMode parse_resize_mode(std::string_view name) {
  if (name == "nearest") return ResizeMode::nearest;
  if (name == "linear" || name == "bilinear" || name == "trilinear") return ResizeMode::linear;
  if (name == "cubic" || name == "bicubic") return ResizeMode::cubic;
  throw_user_error("Resize: mode '{}' is not supported; use nearest, linear or cubic", name);
}

CoordinateTransform parse_coordinate_transform(std::string_view name) {
  if (name == "half_pixel") return CoordinateTransform::half_pixel;
  if (name == "half_pixel_symmetric") return CoordinateTransform::half_pixel_symmetric;
  if (name == "pytorch_half_pixel") return CoordinateTransform::pytorch_half_pixel;
  if (name == "align_corners") return CoordinateTransform::align_corners;
  if (name == "asymmetric") return CoordinateTransform::asymmetric;
  if (name == "tf_crop_and_resize") return CoordinateTransform::tf_crop_and_resize;
  if (name == "tf_half_pixel_for_nn") return CoordinateTransform::tf_half_pixel_for_nn;
  throw_user_error(
      "Resize: coordinate_transformation_mode '{}' is not supported; use half_pixel, "
      "half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric, "
      "tf_crop_and_resize or tf_half_pixel_for_nn",
      name);
}

NearestMode parse_nearest_mode(std::string_view name) {
  if (name == "round_prefer_floor") return NearestMode::round_prefer_floor;
  if (name == "round_prefer_ceil") return NearestMode::round_prefer_ceil;
  if (name == "floor") return NearestMode::floor;
  if (name == "ceil") return NearestMode::ceil;
  throw_user_error(
      "Resize: nearest_mode '{}' is not supported; use round_prefer_floor, "
      "round_prefer_ceil, floor or ceil",
      name);
}

namespace {

struct Taps {
  std::vector<std::int64_t> index;  // taps_per_out entries per output position
  std::vector<double> weight;       // the f32 pass rounds each to float
  std::vector<bool> extrapolate;  // per output position (tf_crop_and_resize only)
  int per_out = 1;
};

// Input coordinate of output position `x` along one dim (ONNX Resize coordinate modes). As in
// the ONNX reference, the resized length in these formulas is scale * in_len before flooring
// (it differs from out_len only when scales, not sizes, were given).
double original_coordinate(const ResizeParams& p, double x, std::int64_t in_len, double scale,
                           double roi_start, double roi_end) {
  const double in = static_cast<double>(in_len);
  const double resized = scale * in;
  switch (p.coordinate_transformation_mode) {
    case CoordinateTransform::half_pixel:
      return (x + 0.5) / scale - 0.5;
    case CoordinateTransform::half_pixel_symmetric: {
      const double adjustment = std::floor(resized) / resized;
      const double center = in / 2.0;
      return center * (1.0 - adjustment) + (x + 0.5) / scale - 0.5;
    }
    case CoordinateTransform::pytorch_half_pixel:
      return resized > 1.0 ? (x + 0.5) / scale - 0.5 : 0.0;
    case CoordinateTransform::align_corners:
      return resized == 1.0 ? 0.0 : x * (in - 1.0) / (resized - 1.0);
    case CoordinateTransform::asymmetric:
      return x / scale;
    case CoordinateTransform::tf_half_pixel_for_nn:  // Resize-11/12
      return (x + 0.5) / scale;
    case CoordinateTransform::tf_crop_and_resize:
      return resized > 1.0
                 ? roi_start * (in - 1.0) + x * (roi_end - roi_start) * (in - 1.0) / (resized - 1.0)
                 : 0.5 * (roi_start + roi_end) * (in - 1.0);
  }
  return x;
}

std::int64_t nearest_index(NearestMode mode, double x) {
  const double f = std::floor(x);
  switch (mode) {
    case NearestMode::round_prefer_floor:
      return static_cast<std::int64_t>(x - f == 0.5 ? f : std::round(x));
    case NearestMode::round_prefer_ceil:
      return static_cast<std::int64_t>(x - f == 0.5 ? f + 1 : std::round(x));
    case NearestMode::floor:
      return static_cast<std::int64_t>(f);
    case NearestMode::ceil:
      return static_cast<std::int64_t>(std::ceil(x));
  }
  return static_cast<std::int64_t>(f);
}

std::array<double, 4> cubic_coefficients(double s, double a) {
  const double s1 = s + 1.0, s2 = 1.0 - s, s3 = 2.0 - s;
  return {((a * s1 - 5.0 * a) * s1 + 8.0 * a) * s1 - 4.0 * a,
          ((a + 2.0) * s - (a + 3.0)) * s * s + 1.0, ((a + 2.0) * s2 - (a + 3.0)) * s2 * s2 + 1.0,
          ((a * s3 - 5.0 * a) * s3 + 8.0 * a) * s3 - 4.0 * a};
}

Taps make_taps(const ResizeParams& p, std::int64_t in_len, std::int64_t out_len, double scale,
               double roi_start, double roi_end) {
  Taps t;
  t.per_out = p.mode == ResizeMode::nearest ? 1 : p.mode == ResizeMode::linear ? 2 : 4;
  t.index.resize(static_cast<std::size_t>(out_len * t.per_out));
  t.weight.resize(t.index.size());
  t.extrapolate.assign(static_cast<std::size_t>(out_len), false);
  const auto clamp = [in_len](std::int64_t i) {
    return std::clamp<std::int64_t>(i, 0, in_len - 1);
  };
  for (std::int64_t o = 0; o < out_len; ++o) {
    const double x =
        original_coordinate(p, static_cast<double>(o), in_len, scale, roi_start, roi_end);
    const auto base = static_cast<std::size_t>(o * t.per_out);
    if (p.coordinate_transformation_mode == CoordinateTransform::tf_crop_and_resize &&
        (x < 0.0 || x > static_cast<double>(in_len - 1))) {
      t.extrapolate[static_cast<std::size_t>(o)] = true;
      for (int k = 0; k < t.per_out; ++k) t.index[base + static_cast<std::size_t>(k)] = 0;
      continue;
    }
    if (p.mode == ResizeMode::nearest) {
      t.index[base] = clamp(nearest_index(p.nearest_mode, x));
      t.weight[base] = 1.0;
    } else if (p.mode == ResizeMode::linear) {
      const double f = std::floor(x), frac = x - f;
      const auto i0 = static_cast<std::int64_t>(f);
      t.index[base] = clamp(i0);
      t.index[base + 1] = clamp(i0 + 1);
      t.weight[base] = 1.0 - frac;
      t.weight[base + 1] = frac;
    } else {
      const double f = std::floor(x), frac = x - f;
      const auto i0 = static_cast<std::int64_t>(f);
      std::array<double, 4> c = cubic_coefficients(frac, p.cubic_coeff_a);
      if (p.exclude_outside) {
        double total = 0.0;
        for (int k = 0; k < 4; ++k) {
          const std::int64_t i = i0 - 1 + k;
          if (i < 0 || i >= in_len) c[static_cast<std::size_t>(k)] = 0.0;
          total += c[static_cast<std::size_t>(k)];
        }
        if (total != 0.0)
          for (double& v : c) v /= total;
      }
      for (int k = 0; k < 4; ++k) {
        t.index[base + static_cast<std::size_t>(k)] = clamp(i0 - 1 + k);
        t.weight[base + static_cast<std::size_t>(k)] = c[static_cast<std::size_t>(k)];
      }
    }
  }
  return t;
}

// Nearest pass on raw elements (exact for every dtype).
Tensor nearest_pass(const Tensor& x, int d, std::int64_t out_len, const Taps& t,
                    const Tensor& fill) {
  Shape shape = x.shape();
  shape[d] = out_len;
  Tensor y(x.dtype(), shape);
  const std::size_t es = dtype_size(x.dtype());
  const auto inner = static_cast<std::size_t>(detail::dims_product(x.shape(), 0, d)) * es;
  const std::int64_t in_len = x.dim(d);
  const std::int64_t outer = detail::dims_product(x.shape(), d + 1, x.rank());
  const auto* src = static_cast<const std::byte*>(x.raw_data());
  auto* dst = static_cast<std::byte*>(y.raw_data());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t j = 0; j < out_len; ++j) {
      std::byte* out = dst + static_cast<std::size_t>(o * out_len + j) * inner;
      if (t.extrapolate[static_cast<std::size_t>(j)]) {
        for (std::size_t b = 0; b < inner; b += es) std::memcpy(out + b, fill.raw_data(), es);
      } else {
        std::memcpy(
            out,
            src +
                static_cast<std::size_t>(o * in_len + t.index[static_cast<std::size_t>(j)]) * inner,
            inner);
      }
    }
  return y;
}

// Weighted pass on T (float or double) data.
template <typename T>
Tensor weighted_pass(const Tensor& x, int d, std::int64_t out_len, const Taps& t, float fill) {
  Shape shape = x.shape();
  shape[d] = out_len;
  Tensor y(x.dtype(), shape);
  const std::int64_t inner = detail::dims_product(x.shape(), 0, d);
  const std::int64_t in_len = x.dim(d);
  const std::int64_t outer = detail::dims_product(x.shape(), d + 1, x.rank());
  const T* src = x.data<T>();
  T* dst = y.data<T>();
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t j = 0; j < out_len; ++j) {
      T* out = dst + (o * out_len + j) * inner;
      if (t.extrapolate[static_cast<std::size_t>(j)]) {
        std::fill(out, out + inner, static_cast<T>(fill));
        continue;
      }
      std::fill(out, out + inner, T(0));
      for (int k = 0; k < t.per_out; ++k) {
        const auto tap = static_cast<std::size_t>(j * t.per_out + k);
        const T w = static_cast<T>(t.weight[tap]);
        const T* in = src + (o * in_len + t.index[tap]) * inner;
        for (std::int64_t i = 0; i < inner; ++i) out[i] += w * in[i];
      }
    }
  return y;
}

}  // namespace

Tensor resize(const Tensor& x, const ResizeParams& p) {
  const int r = x.rank();
  const bool has_scales = !p.scales.empty(), has_sizes = !p.sizes.empty();
  if (has_scales == has_sizes)
    throw_user_error(
        "Resize: give exactly one of scales and sizes (got {} scales and {} sizes) "
        "for input {}",
        p.scales.size(), p.sizes.size(), x.shape().to_string());
  const std::size_t n = has_scales ? p.scales.size() : p.sizes.size();
  if (static_cast<int>(n) != r)
    throw_user_error(
        "Resize: {} has {} entries but input {} has rank {} (one per dim, Tessera "
        "order)",
        has_scales ? "scales" : "sizes", n, x.shape().to_string(), r);
  const bool crop = p.coordinate_transformation_mode == CoordinateTransform::tf_crop_and_resize;
  if (crop && p.roi.size() != 2 * static_cast<std::size_t>(r))
    throw_user_error(
        "Resize: tf_crop_and_resize needs roi with {} entries (starts for dims 0..{}, "
        "then ends), got {}",
        2 * r, r - 1, p.roi.size());
  if (p.mode != ResizeMode::nearest && x.dtype() == DType::boolean)
    throw_user_error("Resize: {} interpolation of a bool input is undefined; use nearest",
                     p.mode == ResizeMode::linear ? "linear" : "cubic");
  std::vector<std::int64_t> out_len(n);
  std::vector<double> scale(n);
  for (std::size_t d = 0; d < n; ++d) {
    const std::int64_t in_len = x.dim(static_cast<int>(d));
    const double roi_len = crop ? static_cast<double>(p.roi[n + d]) - p.roi[d] : 1.0;
    if (has_scales) {
      if (!(p.scales[d] > 0.0f))
        throw_user_error(
            "Resize: scales {} has a non-positive entry for dim {}; scales must be > 0",
            p.scales[d], d);
      scale[d] = p.scales[d];
      out_len[d] =
          static_cast<std::int64_t>(std::floor(static_cast<double>(in_len) * roi_len * scale[d]));
    } else {
      if (p.sizes[d] < 0)
        throw_user_error("Resize: sizes entry {} for dim {} is negative", p.sizes[d], d);
      out_len[d] = p.sizes[d];
      scale[d] = in_len > 0 ? static_cast<double>(out_len[d]) / static_cast<double>(in_len) : 1.0;
    }
    if (in_len == 0 && out_len[d] > 0)
      throw_user_error("Resize: dim {} of input {} is empty and cannot be resized to {}", d,
                       x.shape().to_string(), out_len[d]);
  }
  const bool nearest = p.mode == ResizeMode::nearest;
  // Interpolation runs in f64 for f64 and the 64-bit integers, in f32 for the rest.
  const bool wide = is_64bit(x.dtype());
  Tensor cur = nearest ? x : x.astype(wide ? DType::f64 : DType::f32);
  const Tensor fill = Tensor::full(x.dtype(), Shape{}, p.extrapolation_value);
  for (std::size_t d = 0; d < n; ++d) {
    const std::int64_t in_len = cur.dim(static_cast<int>(d));
    const bool identity = !crop && out_len[d] == in_len && scale[d] == 1.0;
    if (identity) continue;
    if (out_len[d] == 0 || in_len == 0) {
      Shape s = cur.shape();
      s[static_cast<int>(d)] = out_len[d];
      cur = Tensor(cur.dtype(), s);
      continue;
    }
    const Taps taps = make_taps(p, in_len, out_len[d], scale[d], crop ? p.roi[d] : 0.0,
                                crop ? p.roi[n + d] : 1.0);
    cur = nearest ? nearest_pass(cur, static_cast<int>(d), out_len[d], taps, fill)
          : wide  ? weighted_pass<double>(cur, static_cast<int>(d), out_len[d], taps,
                                         p.extrapolation_value)
                  : weighted_pass<float>(cur, static_cast<int>(d), out_len[d], taps,
                                        p.extrapolation_value);
  }
  if (nearest) return cur;
  if (is_floating(x.dtype())) return detail::restore(std::move(cur), x.dtype());
  return cur.astype(x.dtype());  // integers: round to nearest even and saturate
}

}  // namespace tessera::ops

namespace tessera::ops {

// ---- GridSample-16 (2-D), with PyTorch's grid_sample semantics, from which ONNX's node tests
// were generated ----

namespace {

double gs_unnormalize(double g, std::int64_t size, bool align_corners) {
  const auto s = static_cast<double>(size);
  return align_corners ? (g + 1.0) / 2.0 * (s - 1.0) : ((g + 1.0) * s - 1.0) / 2.0;
}

double gs_reflect(double x, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0.0;
  const double min = twice_low / 2.0, span = (twice_high - twice_low) / 2.0;
  x = std::fabs(x - min);
  const double extra = std::fmod(x, span);
  const auto flips = static_cast<std::int64_t>(std::floor(x / span));
  return flips % 2 == 0 ? extra + min : span - extra + min;
}

// Border and reflection padding move a coordinate inside [0, size - 1].
double gs_pad_coordinate(double x, std::int64_t size, GridSamplePadding padding,
                         bool align_corners) {
  const double hi = static_cast<double>(size - 1);
  if (padding == GridSamplePadding::border) return std::min(hi, std::max(0.0, x));
  if (padding == GridSamplePadding::reflection) {
    x = align_corners ? gs_reflect(x, 0.0, 2.0 * hi) : gs_reflect(x, -1.0, 2.0 * hi + 1.0);
    return std::min(hi, std::max(0.0, x));
  }
  return x;
}

double gs_cubic(double t, int k) {
  const double a = -0.75;
  switch (k) {
    case 0: {
      const double x = t + 1.0;
      return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
    }
    case 1:
      return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
    case 2: {
      const double x = 1.0 - t;
      return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
    }
    default: {
      const double x = 2.0 - t;
      return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
    }
  }
}

}  // namespace

Tensor grid_sample(const Tensor& x_in, const Tensor& grid_in, GridSampleMode mode,
                   GridSamplePadding padding, bool align_corners) {
  detail::require_float("GridSample", x_in, "X");
  detail::require_float("GridSample", grid_in, "grid");
  if (x_in.rank() != 4 || grid_in.rank() != 4 || grid_in.dim(0) != 2 ||
      grid_in.dim(3) != x_in.dim(3))
    throw_user_error(
        "GridSample: X must be (N, C, H, W) and grid (N, H_out, W_out, 2), i.e. Tessera {{W, H, "
        "C, N}} and {{2, W_out, H_out, N}}; got X {} and grid {}",
        x_in.shape().to_string(), grid_in.shape().to_string());
  // Sampling runs in double; X and grid are read as T (double for f64, else float).
  return detail::with_compute_type(x_in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const Tensor x = detail::as_compute<T>(x_in), grid = detail::as_compute<T>(grid_in);
    const std::int64_t w = x.dim(0), h = x.dim(1), c = x.dim(2), n = x.dim(3);
    const std::int64_t wo = grid.dim(1), ho = grid.dim(2);
    Tensor out(x.dtype(), Shape::nchw(n, c, ho, wo));
    const T* px = x.data<T>();
    const T* pg = grid.data<T>();
    T* po = out.data<T>();
    for (std::int64_t b = 0; b < n; ++b)
      for (std::int64_t i = 0; i < ho; ++i)
        for (std::int64_t j = 0; j < wo; ++j) {
          const T* g = pg + ((b * ho + i) * wo + j) * 2;
          double gx = gs_unnormalize(g[0], w, align_corners);
          double gy = gs_unnormalize(g[1], h, align_corners);
          const auto value = [&](std::int64_t ch, std::int64_t yy, std::int64_t xx) -> double {
            if (xx < 0 || xx >= w || yy < 0 || yy >= h) return 0.0;
            return px[((b * c + ch) * h + yy) * w + xx];
          };
          for (std::int64_t ch = 0; ch < c; ++ch) {
            double v = 0.0;
            if (mode == GridSampleMode::bicubic) {
              // Taps are padded one by one.
              const double fx = std::floor(gx), fy = std::floor(gy);
              const double tx = gx - fx, ty = gy - fy;
              for (int ky = 0; ky < 4; ++ky) {
                double row = 0.0;
                for (int kx = 0; kx < 4; ++kx) {
                  double xx = fx - 1 + kx, yy = fy - 1 + ky;
                  xx = gs_pad_coordinate(xx, w, padding, align_corners);
                  yy = gs_pad_coordinate(yy, h, padding, align_corners);
                  row += gs_cubic(tx, kx) *
                         value(ch, static_cast<std::int64_t>(yy), static_cast<std::int64_t>(xx));
                }
                v += gs_cubic(ty, ky) * row;
              }
            } else {
              const double px_ = gs_pad_coordinate(gx, w, padding, align_corners);
              const double py_ = gs_pad_coordinate(gy, h, padding, align_corners);
              if (mode == GridSampleMode::nearest) {
                v = value(ch, static_cast<std::int64_t>(std::nearbyint(py_)),
                          static_cast<std::int64_t>(std::nearbyint(px_)));
              } else {
                const double x0 = std::floor(px_), y0 = std::floor(py_);
                const double ax = px_ - x0, ay = py_ - y0;
                const auto xi = static_cast<std::int64_t>(x0), yi = static_cast<std::int64_t>(y0);
                v = (1 - ay) * ((1 - ax) * value(ch, yi, xi) + ax * value(ch, yi, xi + 1)) +
                    ay * ((1 - ax) * value(ch, yi + 1, xi) + ax * value(ch, yi + 1, xi + 1));
              }
            }
            po[((b * c + ch) * ho + i) * wo + j] = static_cast<T>(v);
          }
        }
    return detail::restore(std::move(out), x_in.dtype());
  });
}

}  // namespace tessera::ops

namespace tessera::ops {

// ---- RoiAlign-16 (as ONNX Runtime computes it) ----

Tensor roi_align(const Tensor& x_in, const Tensor& rois_in, const Tensor& batch_indices,
                 const RoiAlignParams& p) {
  detail::require_float("RoiAlign", x_in, "X");
  detail::require_float("RoiAlign", rois_in, "rois");
  if (x_in.rank() != 4 || rois_in.rank() != 2 || rois_in.dim(0) != 4 || batch_indices.rank() != 1 ||
      batch_indices.dim(0) != rois_in.dim(1))
    throw_user_error(
        "RoiAlign: X must be (N, C, H, W), rois (num_rois, 4) and batch_indices (num_rois); got "
        "{}, {} and {} (Tessera order)",
        x_in.shape().to_string(), rois_in.shape().to_string(), batch_indices.shape().to_string());
  if (p.output_height < 1 || p.output_width < 1 || p.sampling_ratio < 0)
    throw_user_error(
        "RoiAlign: output_height {} and output_width {} must be >= 1, "
        "sampling_ratio {} >= 0",
        p.output_height, p.output_width, p.sampling_ratio);
  // Sampling runs in double; X is read as T (double for f64, else float).
  return detail::with_compute_type(x_in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const Tensor x = detail::as_compute<T>(x_in);
    const std::int64_t w = x.dim(0), h = x.dim(1), c = x.dim(2), n = x.dim(3);
    const std::int64_t rois = rois_in.dim(1), oh = p.output_height, ow = p.output_width;
    const std::vector<double> r = rois_in.to_doubles();
    const std::vector<std::int64_t> bi = batch_indices.to_ints();
    const T* px = x.data<T>();
    Tensor out(x.dtype(), Shape::nchw(rois, c, oh, ow));
    T* po = out.data<T>();
    const double offset = p.half_pixel ? 0.5 : 0.0;
    for (std::int64_t k = 0; k < rois; ++k) {
      const std::int64_t b = bi[static_cast<std::size_t>(k)];
      if (b < 0 || b >= n)
        throw_user_error("RoiAlign: batch_indices[{}] = {} is outside [0, {})", k, b, n);
      const double* roi = r.data() + k * 4;
      const double x1 = roi[0] * p.spatial_scale - offset, y1 = roi[1] * p.spatial_scale - offset;
      double rw = roi[2] * p.spatial_scale - offset - x1,
             rh = roi[3] * p.spatial_scale - offset - y1;
      if (!p.half_pixel) {
        rw = std::max(rw, 1.0);
        rh = std::max(rh, 1.0);
      }
      const double bin_h = rh / static_cast<double>(oh), bin_w = rw / static_cast<double>(ow);
      const std::int64_t gh =
          p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<std::int64_t>(std::ceil(rh / oh));
      const std::int64_t gw =
          p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<std::int64_t>(std::ceil(rw / ow));
      const double count = static_cast<double>(std::max<std::int64_t>(gh * gw, 1));
      for (std::int64_t ch = 0; ch < c; ++ch) {
        const T* plane = px + (b * c + ch) * h * w;
        for (std::int64_t i = 0; i < oh; ++i)
          for (std::int64_t j = 0; j < ow; ++j) {
            double acc = 0.0;
            bool first = true;
            for (std::int64_t iy = 0; iy < gh; ++iy) {
              double yy = y1 + i * bin_h + (iy + 0.5) * bin_h / static_cast<double>(gh);
              for (std::int64_t ix = 0; ix < gw; ++ix) {
                double xx = x1 + j * bin_w + (ix + 0.5) * bin_w / static_cast<double>(gw);
                double v = 0.0;
                if (!(yy < -1.0 || yy > static_cast<double>(h) || xx < -1.0 ||
                      xx > static_cast<double>(w))) {
                  double y = std::max(yy, 0.0), xv = std::max(xx, 0.0);
                  auto y0 = static_cast<std::int64_t>(y), x0 = static_cast<std::int64_t>(xv);
                  std::int64_t y1i = y0 + 1, x1i = x0 + 1;
                  if (y0 >= h - 1) {
                    y0 = y1i = h - 1;
                    y = static_cast<double>(y0);
                  }
                  if (x0 >= w - 1) {
                    x0 = x1i = w - 1;
                    xv = static_cast<double>(x0);
                  }
                  const double ly = y - y0, lx = xv - x0, hy = 1.0 - ly, hx = 1.0 - lx;
                  const double v1 = hy * hx * plane[y0 * w + x0],
                               v2 = hy * lx * plane[y0 * w + x1i],
                               v3 = ly * hx * plane[y1i * w + x0],
                               v4 = ly * lx * plane[y1i * w + x1i];
                  v = p.max_mode ? std::max(std::max(v1, v2), std::max(v3, v4)) : v1 + v2 + v3 + v4;
                }
                if (p.max_mode) {
                  acc = first ? v : std::max(acc, v);
                  first = false;
                } else {
                  acc += v;
                }
              }
            }
            po[((k * c + ch) * oh + i) * ow + j] = static_cast<T>(p.max_mode ? acc : acc / count);
          }
      }
    }
    return detail::restore(std::move(out), x_in.dtype());
  });
}

}  // namespace tessera::ops
