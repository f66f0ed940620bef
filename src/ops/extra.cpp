// Further ONNX ops beyond the core list: Tile-13, Range-11, TopK-11, CumSum-14,
// DepthToSpace-13, SpaceToDepth-13.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <type_traits>

#include "common.h"
#include "tessera/ops/reference.h"

namespace tessera::ops {

Tensor tile(const Tensor& x, const std::vector<std::int64_t>& repeats) {
  const int r = x.rank();
  if (static_cast<int>(repeats.size()) != r)
    throw_user_error(
        "Tile: repeats {} has {} entries but input {} has rank {} (one per dim, "
        "Tessera order)",
        detail::list_to_string(repeats), repeats.size(), x.shape().to_string(), r);
  std::vector<std::int64_t> dims;
  for (int d = 0; d < r; ++d) {
    if (repeats[static_cast<std::size_t>(d)] < 0)
      throw_user_error("Tile: repeats {} has a negative entry", detail::list_to_string(repeats));
    dims.push_back(x.dim(d) * repeats[static_cast<std::size_t>(d)]);
  }
  const Shape out_shape = Shape::from_fastest_first(dims);
  Tensor out(x.dtype(), out_shape);
  if (out.element_count() == 0) return out;
  const std::size_t es = dtype_size(x.dtype());
  const auto* src = static_cast<const std::byte*>(x.raw_data());
  auto* dst = static_cast<std::byte*>(out.raw_data());
  // Each output row along dim 0 is the input row repeated; outer dims wrap modulo the input.
  const std::int64_t n0 = r > 0 ? x.dim(0) : 1,
                     rows = out.element_count() / (r > 0 ? out_shape[0] : 1);
  const std::int64_t rep0 = r > 0 ? repeats[0] : 1;
  std::array<std::int64_t, kMaxRank> idx{};
  for (std::int64_t row = 0; row < rows; ++row) {
    std::int64_t in_row = 0, stride = 1;
    for (int d = 1; d < r; ++d) {
      in_row += (idx[static_cast<std::size_t>(d)] % x.dim(d)) * stride;
      stride *= x.dim(d);
    }
    const std::byte* s = src + static_cast<std::size_t>(in_row * n0) * es;
    for (std::int64_t k = 0; k < rep0; ++k) {
      std::memcpy(dst, s, static_cast<std::size_t>(n0) * es);
      dst += static_cast<std::size_t>(n0) * es;
    }
    for (int d = 1; d < r; ++d) {
      if (++idx[static_cast<std::size_t>(d)] < out_shape[d]) break;
      idx[static_cast<std::size_t>(d)] = 0;
    }
  }
  return out;
}

namespace {

// Integer Range counted and stepped in 64-bit unsigned arithmetic, which is exact for every
// start, limit and delta of T (int64_t or uint64_t): a trip through double rounds beyond 2^53.
template <typename T>
std::vector<T> integer_range(const Scalar& start, const Scalar& limit, const Scalar& delta) {
  const T s = start.as<T>(), l = limit.as<T>();
  const bool down = delta.negative();
  // |delta| without overflow, also for INT64_MIN.
  const std::uint64_t step =
      down ? std::uint64_t{0} - static_cast<std::uint64_t>(delta.as<std::int64_t>())
           : delta.as<std::uint64_t>();
  if (step == 0) throw_user_error("Range: delta is 0; it must be nonzero");
  std::uint64_t span = 0;
  if (!down && l > s) span = static_cast<std::uint64_t>(l) - static_cast<std::uint64_t>(s);
  if (down && l < s) span = static_cast<std::uint64_t>(s) - static_cast<std::uint64_t>(l);
  const std::uint64_t count = span / step + (span % step != 0 ? 1 : 0);
  if (count >= std::uint64_t{1000000000})
    throw_user_error("Range: start {}, limit {}, delta {} would give {} elements",
                     start.to_string(), limit.to_string(), delta.to_string(), count);
  std::vector<T> values(static_cast<std::size_t>(count));
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t moved = i * step;  // < span: no wrap
    values[static_cast<std::size_t>(i)] = static_cast<T>(
        down ? static_cast<std::uint64_t>(s) - moved : static_cast<std::uint64_t>(s) + moved);
  }
  return values;
}

}  // namespace

Tensor range(const Scalar& start_in, const Scalar& limit_in, const Scalar& delta_in, DType dtype) {
  if (dtype == DType::boolean)
    throw_user_error("Range: dtype bool is not accepted; use a numeric dtype");
  if (dtype == DType::u64) {
    const std::vector<std::uint64_t> v = integer_range<std::uint64_t>(start_in, limit_in, delta_in);
    Tensor out(dtype, Shape{static_cast<std::int64_t>(v.size())});
    std::copy(v.begin(), v.end(), out.data<std::uint64_t>());
    return out;
  }
  if (!is_floating(dtype)) {
    const std::vector<std::int64_t> v = integer_range<std::int64_t>(start_in, limit_in, delta_in);
    return Tensor::from_ints(dtype, Shape{static_cast<std::int64_t>(v.size())}, v);
  }
  const double start = start_in.as<double>(), limit = limit_in.as<double>(),
               delta = delta_in.as<double>();
  if (delta == 0.0) throw_user_error("Range: delta is 0; it must be nonzero");
  const double n = std::ceil((limit - start) / delta);
  if (!(n < 1e9))
    throw_user_error("Range: start {}, limit {}, delta {} would give {} elements", start, limit,
                     delta, n);
  const auto count = static_cast<std::int64_t>(std::max(n, 0.0));
  // ONNX's function body accumulates delta in the output type.
  if (dtype == DType::f64) {
    std::vector<double> values(static_cast<std::size_t>(count));
    double v = start;
    for (double& x : values) {
      x = v;
      v += delta;
    }
    return Tensor::from_doubles(dtype, Shape{count}, values);
  }
  std::vector<float> f(static_cast<std::size_t>(count));
  float v = static_cast<float>(start);
  for (std::size_t i = 0; i < f.size(); ++i, v += static_cast<float>(delta)) f[i] = v;
  return Tensor::from_vector(Shape{count}, f, dtype);
}

TopKResult top_k(const Tensor& x, std::int64_t k, int axis_in, bool largest, bool sorted) {
  (void)sorted;  // results are always sorted, which ONNX allows for sorted=0 too
  if (x.dtype() == DType::boolean)
    throw_user_error("TopK: bool input (shape {}) is not accepted", x.shape().to_string());
  const int r = x.rank();
  if (r == 0) throw_user_error("TopK: input must have rank >= 1 (got a scalar)");
  const int axis = detail::normalize_axis("TopK", axis_in, r, x.shape());
  const std::int64_t n = x.dim(axis);
  if (k < 0 || k > n)
    throw_user_error("TopK: k = {} must be in [0, {}] (the size of axis {} of input {})", k, n,
                     axis, x.shape().to_string());
  const std::int64_t inner = detail::dims_product(x.shape(), 0, axis);
  const std::int64_t outer = detail::dims_product(x.shape(), axis + 1, r);
  Shape out_shape = x.shape();
  out_shape[axis] = k;
  TopKResult res{Tensor(x.dtype(), out_shape), Tensor(DType::i64, out_shape)};
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::int64_t* pi = res.indices.data<std::int64_t>();
  const auto select = [&](const auto* v) {
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i = 0; i < inner; ++i) {
        const auto* base = v + o * n * inner + i;
        std::iota(order.begin(), order.end(), 0);
        // Ties keep the lower index first (ONNX); NaN counts as the largest value.
        auto before = [&](std::int64_t a, std::int64_t b) {
          const auto x1 = base[a * inner], x2 = base[b * inner];
          bool n1 = false, n2 = false;
          if constexpr (std::is_floating_point_v<decltype(x1)>) {
            n1 = std::isnan(x1);
            n2 = std::isnan(x2);
          }
          if (n1 || n2) return largest ? (n1 && !n2) : (!n1 && n2);
          return largest ? x1 > x2 : x1 < x2;
        };
        std::stable_sort(order.begin(), order.end(), before);
        for (std::int64_t j = 0; j < k; ++j) {
          const std::int64_t dst = (o * k + j) * inner + i;
          const std::int64_t src = order[static_cast<std::size_t>(j)];
          pi[dst] = src;
          std::memcpy(static_cast<std::byte*>(res.values.raw_data()) +
                          dst * static_cast<std::int64_t>(dtype_size(x.dtype())),
                      static_cast<const std::byte*>(x.raw_data()) +
                          (o * n * inner + src * inner + i) *
                              static_cast<std::int64_t>(dtype_size(x.dtype())),
                      dtype_size(x.dtype()));
        }
      }
  };
  detail::with_ordered_values(x, select);
  return res;
}

Tensor cum_sum(const Tensor& x, int axis_in, bool exclusive, bool reverse) {
  if (x.dtype() == DType::boolean)
    throw_user_error("CumSum: bool input (shape {}) is not accepted", x.shape().to_string());
  const int r = x.rank();
  if (r == 0) throw_user_error("CumSum: input must have rank >= 1 (got a scalar)");
  const int axis = detail::normalize_axis("CumSum", axis_in, r, x.shape());
  const std::int64_t n = x.dim(axis);
  const std::int64_t inner = detail::dims_product(x.shape(), 0, axis);
  const std::int64_t outer = detail::dims_product(x.shape(), axis + 1, r);
  const auto position = [&](std::int64_t o, std::int64_t i, std::int64_t s) {
    const std::int64_t j = reverse ? n - 1 - s : s;
    return static_cast<std::size_t>(o * n * inner + j * inner + i);
  };
  if (!is_floating(x.dtype())) {
    // Integers accumulate in their own type, wrapping (exact for 64-bit values beyond 2^53).
    Tensor y(x.dtype(), x.shape());
    dispatch_dtype(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        const T* in = x.data<T>();
        T* out = y.data<T>();
        for (std::int64_t o = 0; o < outer; ++o)
          for (std::int64_t i = 0; i < inner; ++i) {
            std::uint64_t acc = 0;
            for (std::int64_t s = 0; s < n; ++s) {
              const std::size_t at = position(o, i, s);
              const T value = in[at];
              if (exclusive) out[at] = static_cast<T>(acc);
              acc += static_cast<std::uint64_t>(value);
              if (!exclusive) out[at] = static_cast<T>(acc);
            }
          }
      }
    });
    return y;
  }
  // Floats accumulate in f32 as ONNX's reference does (f64 in f64).
  const bool in_f64 = x.dtype() == DType::f64;
  const std::vector<double> v = x.to_doubles();
  std::vector<double> out(v.size());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      double acc = 0.0;
      float facc = 0.0f;
      for (std::int64_t s = 0; s < n; ++s) {
        const std::size_t at = position(o, i, s);
        if (exclusive) out[at] = in_f64 ? acc : facc;
        if (in_f64)
          acc += v[at];
        else
          facc += static_cast<float>(v[at]);
        if (!exclusive) out[at] = in_f64 ? acc : facc;
      }
    }
  return Tensor::from_doubles(x.dtype(), x.shape(), out);
}

namespace {

enum class SpaceDirection { to_space, to_depth };

Tensor rearrange(std::string_view op, const Tensor& x, std::int64_t b, bool crd,
                 SpaceDirection dir) {
  if (x.rank() != 4)
    throw_user_error("{}: input {} must be 4-D NCHW (Tessera {{W, H, C, N}})", op,
                     x.shape().to_string());
  if (b < 1) throw_user_error("{}: blocksize {} must be >= 1", op, b);
  const std::int64_t w = x.dim(0), h = x.dim(1), c = x.dim(2), n = x.dim(3);
  const std::size_t es = dtype_size(x.dtype());
  const auto* src = static_cast<const std::byte*>(x.raw_data());
  if (dir == SpaceDirection::to_space) {
    if (c % (b * b) != 0)
      throw_user_error("{}: channels {} of input {} are not a multiple of blocksize^2 = {}", op, c,
                       x.shape().to_string(), b * b);
    const std::int64_t co = c / (b * b);
    Tensor out(x.dtype(), Shape::nchw(n, co, h * b, w * b));
    auto* dst = static_cast<std::byte*>(out.raw_data());
    std::size_t o = 0;
    for (std::int64_t in = 0; in < n; ++in)
      for (std::int64_t oc = 0; oc < co; ++oc)
        for (std::int64_t oy = 0; oy < h * b; ++oy)
          for (std::int64_t ox = 0; ox < w * b; ++ox, o += es) {
            const std::int64_t i = oy % b, j = ox % b;
            const std::int64_t ic = crd ? (oc * b + i) * b + j : (i * b + j) * co + oc;
            const std::int64_t s = ((in * c + ic) * h + oy / b) * w + ox / b;
            std::memcpy(dst + o, src + static_cast<std::size_t>(s) * es, es);
          }
    return out;
  }
  if (h % b != 0 || w % b != 0)
    throw_user_error("{}: height {} and width {} of input {} must be multiples of blocksize {}", op,
                     h, w, x.shape().to_string(), b);
  const std::int64_t ho = h / b, wo = w / b, co = c * b * b;
  Tensor out(x.dtype(), Shape::nchw(n, co, ho, wo));
  auto* dst = static_cast<std::byte*>(out.raw_data());
  std::size_t o = 0;
  for (std::int64_t in = 0; in < n; ++in)
    for (std::int64_t oc = 0; oc < co; ++oc)
      for (std::int64_t oy = 0; oy < ho; ++oy)
        for (std::int64_t ox = 0; ox < wo; ++ox, o += es) {
          const std::int64_t ic = oc % c, blk = oc / c, i = blk / b, j = blk % b;
          const std::int64_t s = ((in * c + ic) * h + oy * b + i) * w + ox * b + j;
          std::memcpy(dst + o, src + static_cast<std::size_t>(s) * es, es);
        }
  return out;
}

}  // namespace

Tensor depth_to_space(const Tensor& x, std::int64_t blocksize, bool crd_mode) {
  return rearrange("DepthToSpace", x, blocksize, crd_mode, SpaceDirection::to_space);
}

Tensor space_to_depth(const Tensor& x, std::int64_t blocksize) {
  return rearrange("SpaceToDepth", x, blocksize, false, SpaceDirection::to_depth);
}

}  // namespace tessera::ops

namespace tessera::ops {

// ---- HannWindow, HammingWindow, BlackmanWindow-17 ----

Tensor window(WindowKind kind, std::int64_t size, bool periodic, DType dtype) {
  if (size < 0) throw_user_error("window: size is {}; it must be >= 0", size);
  const double n = periodic ? static_cast<double>(size) : static_cast<double>(size - 1);
  const double pi = 3.14159265358979323846;
  std::vector<double> w(static_cast<std::size_t>(size));
  for (std::int64_t i = 0; i < size; ++i) {
    const double x = n > 0 ? 2.0 * pi * static_cast<double>(i) / n : 0.0;
    double v = 0.0;
    switch (kind) {
      case WindowKind::hann:
        v = 0.5 - 0.5 * std::cos(x);
        break;
      case WindowKind::hamming:
        v = 25.0 / 46.0 - (1.0 - 25.0 / 46.0) * std::cos(x);
        break;
      case WindowKind::blackman:
        v = 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2.0 * x);
        break;
    }
    w[static_cast<std::size_t>(i)] = v;
  }
  return Tensor::from_doubles(dtype, Shape{size}, w);
}

// As the ONNX reference implementation computes it (onnx/reference/ops/op_mel_weight_matrix.py):
// the band edges are mel-spaced points mapped back to hertz and floored to DFT bins.
Tensor mel_weight_matrix(std::int64_t num_mel_bins, std::int64_t dft_length,
                         std::int64_t sample_rate, double lower_edge_hertz, double upper_edge_hertz,
                         DType dtype) {
  if (num_mel_bins < 1 || dft_length < 1 || sample_rate < 1)
    throw_user_error(
        "MelWeightMatrix: num_mel_bins ({}), dft_length ({}) and sample_rate ({}) must be "
        "positive",
        num_mel_bins, dft_length, sample_rate);
  const std::int64_t spectrogram_bins = dft_length / 2 + 1;
  const auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double low = mel(lower_edge_hertz);
  const double step = (mel(upper_edge_hertz) - low) / static_cast<double>(num_mel_bins + 2);
  std::vector<std::int64_t> edge(static_cast<std::size_t>(num_mel_bins + 2));
  for (std::size_t i = 0; i < edge.size(); ++i) {
    const double hz =
        700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low) / 2595.0) - 1.0);
    edge[i] = static_cast<std::int64_t>(
        std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
  }
  // ONNX (spectrogram_bins, num_mel_bins) is Tessera {num_mel_bins, spectrogram_bins}.
  std::vector<double> out(static_cast<std::size_t>(spectrogram_bins * num_mel_bins), 0.0);
  const auto set = [&](std::int64_t bin, std::int64_t band, double v) {
    if (bin < 0 || bin >= spectrogram_bins)
      throw_user_error(
          "MelWeightMatrix: band {} reaches DFT bin {}, outside the {} bins of dft_length {}; "
          "lower upper_edge_hertz or raise sample_rate",
          band, bin, spectrogram_bins, dft_length);
    out[static_cast<std::size_t>(bin * num_mel_bins + band)] = v;
  };
  for (std::int64_t i = 0; i < num_mel_bins; ++i) {
    const auto lo = edge[static_cast<std::size_t>(i)], mid = edge[static_cast<std::size_t>(i + 1)],
               hi = edge[static_cast<std::size_t>(i + 2)];
    if (mid == lo)
      set(mid, i, 1.0);
    else
      for (std::int64_t j = lo; j <= mid; ++j)
        set(j, i, static_cast<double>(j - lo) / static_cast<double>(mid - lo));
    for (std::int64_t j = mid; j < hi; ++j)
      set(j, i, static_cast<double>(hi - j) / static_cast<double>(hi - mid));
  }
  return Tensor::from_doubles(dtype, Shape{num_mel_bins, spectrogram_bins}, out);
}

}  // namespace tessera::ops

namespace tessera::ops {

// ---- DFT-17 and STFT-17 (direct O(n^2) sums in f64; the last dim holds 1 real or 2
// (real, imaginary) components, as in ONNX) ----

Tensor dft(const Tensor& x, int axis_in, std::optional<std::int64_t> dft_length, bool inverse,
           bool onesided) {
  detail::require_float("DFT", x);
  const int r = x.rank();
  if (r < 2 || (x.dim(0) != 1 && x.dim(0) != 2))
    throw_user_error(
        "DFT: input must have rank >= 2 with a last ONNX dim (Tessera dim 0) of 1 (real) or 2 "
        "(complex), got {}",
        x.shape().to_string());
  const int axis = detail::normalize_axis("DFT", axis_in, r, x.shape());
  if (axis == 0) throw_user_error("DFT: the axis is the (real, imaginary) dim");
  if (onesided && inverse) throw_user_error("DFT: onesided and inverse cannot both be set");
  const std::int64_t n_in = x.dim(axis), n = dft_length ? *dft_length : n_in;
  if (n < 1) throw_user_error("DFT: dft_length is {}; it must be >= 1", n);
  const std::int64_t n_out = onesided ? n / 2 + 1 : n;
  const std::int64_t comps = x.dim(0);
  const std::int64_t inner = detail::dims_product(x.shape(), 1, axis);  // between comps and axis
  const std::int64_t outer = detail::dims_product(x.shape(), axis + 1, r);
  Shape out_shape = x.shape();
  out_shape[0] = 2;
  out_shape[axis] = n_out;
  const std::vector<double> v = x.to_doubles();
  std::vector<double> out(static_cast<std::size_t>(out_shape.element_count()), 0.0);
  const double sign = inverse ? 1.0 : -1.0, pi = 3.14159265358979323846;
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i)
      for (std::int64_t k = 0; k < n_out; ++k) {
        double re = 0.0, im = 0.0;
        for (std::int64_t t = 0; t < std::min(n, n_in); ++t) {
          const std::size_t at = static_cast<std::size_t>(((o * n_in + t) * inner + i) * comps);
          const double xr = v[at], xi = comps == 2 ? v[at + 1] : 0.0;
          // The angle's product is reduced mod n first, keeping it exact for long signals.
          const double ang =
              sign * 2.0 * pi * static_cast<double>((k * t) % n) / static_cast<double>(n);
          re += xr * std::cos(ang) - xi * std::sin(ang);
          im += xr * std::sin(ang) + xi * std::cos(ang);
        }
        if (inverse) {
          re /= static_cast<double>(n);
          im /= static_cast<double>(n);
        }
        const std::size_t at = static_cast<std::size_t>(((o * n_out + k) * inner + i) * 2);
        out[at] = re;
        out[at + 1] = im;
      }
  return Tensor::from_doubles(x.dtype(), out_shape, out);
}

Tensor stft(const Tensor& signal, std::int64_t frame_step, const Tensor* window,
            std::optional<std::int64_t> frame_length, bool onesided) {
  detail::require_float("STFT", signal);
  if (signal.rank() != 3 || (signal.dim(0) != 1 && signal.dim(0) != 2))
    throw_user_error("STFT: signal must be (batch, length, 1 or 2), got {} (Tessera order)",
                     signal.shape().to_string());
  const std::int64_t comps = signal.dim(0), length = signal.dim(1), batch = signal.dim(2);
  std::int64_t fl = frame_length ? *frame_length : (window ? window->element_count() : 0);
  if (fl < 1 || fl > length)
    throw_user_error("STFT: frame_length {} must be in [1, signal length {}]", fl, length);
  if (window && window->element_count() != fl)
    throw_user_error("STFT: window has {} entries; frame_length is {}", window->element_count(),
                     fl);
  if (frame_step < 1) throw_user_error("STFT: frame_step is {}; it must be >= 1", frame_step);
  const std::int64_t frames = (length - fl) / frame_step + 1;
  const std::vector<double> v = signal.to_doubles();
  const std::vector<double> w = window ? window->to_doubles() : std::vector<double>();
  std::vector<double> framed(static_cast<std::size_t>(batch * frames * fl * comps));
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t f = 0; f < frames; ++f)
      for (std::int64_t k = 0; k < fl; ++k)
        for (std::int64_t c = 0; c < comps; ++c)
          framed[static_cast<std::size_t>(((b * frames + f) * fl + k) * comps + c)] =
              v[static_cast<std::size_t>((b * length + f * frame_step + k) * comps + c)] *
              (window ? w[static_cast<std::size_t>(k)] : 1.0);
  // (batch, frames, frame_length, comps) is Tessera {comps, frame_length, frames, batch}. The
  // frames round to f32 except for an f64 signal.
  const DType frame_dtype = signal.dtype() == DType::f64 ? DType::f64 : DType::f32;
  const Tensor t = Tensor::from_doubles(frame_dtype, Shape{comps, fl, frames, batch}, framed);
  return dft(t, 1, std::nullopt, false, onesided).astype(signal.dtype());
}

}  // namespace tessera::ops

namespace tessera::ops {

// ---- TfIdfVectorizer-9 (integer pools) ----

TfIdfMode parse_tf_idf_mode(std::string_view name) {
  if (name == "TF") return TfIdfMode::tf;
  if (name == "IDF") return TfIdfMode::idf;
  if (name == "TFIDF") return TfIdfMode::tfidf;
  throw_user_error("mode '{}' is not one of TF, IDF, TFIDF", name);
}

Tensor tf_idf_vectorizer(const Tensor& x, const TfIdfParams& p) {
  const std::string_view op = "TfIdfVectorizer";
  if (is_floating(x.dtype()) || x.dtype() == DType::boolean)
    throw_user_error("{}: input must be integers, got {}", op, dtype_name(x.dtype()));
  if (x.rank() != 1 && x.rank() != 2)
    throw_user_error("{}: input must be 1-D [C] or 2-D [N, C], got {}", op, x.shape().to_string());
  if (p.min_gram_length < 1 || p.max_gram_length < p.min_gram_length || p.max_skip_count < 0)
    throw_user_error(
        "{}: min_gram_length {}, max_gram_length {}, max_skip_count {} must satisfy "
        "1 <= min <= max and skip >= 0",
        op, p.min_gram_length, p.max_gram_length, p.max_skip_count);
  if (static_cast<std::int64_t>(p.ngram_counts.size()) < p.max_gram_length)
    throw_user_error("{}: ngram_counts has {} entries; max_gram_length is {}", op,
                     p.ngram_counts.size(), p.max_gram_length);
  // n-gram (n items) -> its output index, from the pool.
  std::map<std::vector<std::int64_t>, std::int64_t> index;
  std::int64_t gram = 0, width = 0;
  const auto pool_size = static_cast<std::int64_t>(p.pool.size());
  for (std::size_t i = 0; i < p.ngram_counts.size(); ++i) {
    const std::int64_t n = static_cast<std::int64_t>(i) + 1;
    const std::int64_t begin = p.ngram_counts[i];
    const std::int64_t end = i + 1 < p.ngram_counts.size() ? p.ngram_counts[i + 1] : pool_size;
    if (begin < 0 || end > pool_size || end < begin || (end - begin) % n != 0)
      throw_user_error("{}: ngram_counts {} does not split the pool of {} into {}-grams", op,
                       detail::list_to_string(p.ngram_counts), pool_size, n);
    for (std::int64_t s = begin; s < end; s += n, ++gram) {
      if (gram >= static_cast<std::int64_t>(p.ngram_indexes.size()))
        throw_user_error("{}: ngram_indexes has {} entries; the pool holds more n-grams", op,
                         p.ngram_indexes.size());
      const std::int64_t out_index = p.ngram_indexes[static_cast<std::size_t>(gram)];
      if (out_index < 0) throw_user_error("{}: ngram_indexes has a negative entry", op);
      index[std::vector<std::int64_t>(p.pool.begin() + s, p.pool.begin() + s + n)] = out_index;
      width = std::max(width, out_index + 1);
    }
  }
  if (!p.weights.empty() && static_cast<std::int64_t>(p.weights.size()) < width)
    throw_user_error("{}: weights has {} entries; the output has {}", op, p.weights.size(), width);
  const std::int64_t c = x.dim(0), rows = x.rank() == 2 ? x.dim(1) : 1;
  const std::vector<std::int64_t> v = x.to_ints();
  std::vector<double> out(static_cast<std::size_t>(rows * width), 0.0);
  std::vector<std::int64_t> key;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t* row = v.data() + r * c;
    double* counts = out.data() + r * width;
    for (std::int64_t n = p.min_gram_length; n <= p.max_gram_length; ++n)
      // Unigrams have no gaps: they are counted once, not once per skip distance.
      for (std::int64_t skip = 0; skip <= (n == 1 ? 0 : p.max_skip_count); ++skip)
        for (std::int64_t start = 0; start + (n - 1) * (skip + 1) < c; ++start) {
          key.clear();
          for (std::int64_t k = 0; k < n; ++k) key.push_back(row[start + k * (skip + 1)]);
          auto it = index.find(key);
          if (it != index.end()) counts[it->second] += 1.0;
        }
    for (std::int64_t j = 0; j < width; ++j) {
      const double w = p.weights.empty() ? 1.0 : p.weights[static_cast<std::size_t>(j)];
      double& o = counts[j];
      if (p.mode == TfIdfMode::idf)
        o = o > 0.0 ? w : 0.0;
      else if (p.mode == TfIdfMode::tfidf)
        o *= w;
    }
  }
  return Tensor::from_doubles(DType::f32, x.rank() == 2 ? Shape{width, rows} : Shape{width}, out);
}

}  // namespace tessera::ops
