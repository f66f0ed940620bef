// Runs the Habana-style kernel library (kernels/*.c + glue.cpp, built with
// tessera_add_tpc_kernels) on the gaudi preset and checks every kernel against a plain C++
// reference. Usage: tpc_habana_run <path of the kernel library>. Exit code 0 when all match.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/runtime/device.h"
#include "tessera/targets/tpc/api/tpc.h"

using namespace tessera;
using namespace tessera::tpc;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

template <typename T>
std::vector<T> download(runtime::Device& d, const DeviceTensor& t) {
  std::vector<T> v(static_cast<std::size_t>(t.shape.element_count()));
  d.copy_to_host(v.data(), t.buffer, v.size() * sizeof(T));
  return v;
}

bool close(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  if (got.size() != want.size()) return false;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tol * std::max(1.0f, std::fabs(want[i])))) {
      std::printf("  element %zu: got %g, want %g\n", i, got[i], want[i]);
      return false;
    }
  return true;
}

std::vector<float> random_floats(std::size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <kernel library .so>\n", argv[0]);
    return 2;
  }
  try {
    auto device = runtime::Device::open("gaudi");
    KernelRegistry registry;
    registry.add_path(argv[1]);
    std::ostringstream printed;
    RuntimeOptions options;
    options.registry = &registry;
    options.printf_stream = &printed;
    Runtime rt(*device, options);
    auto& d = *device;

    {  // leaky ReLU, NHWC (C=100, W=5, H=3, N=2)
      const Shape s{100, 5, 3, 2};
      const auto x = random_floats(static_cast<std::size_t>(s.element_count()), -4, 4, 1);
      const auto in = make_device_tensor(d, DType::f32, s, x.data());
      const auto out = make_device_tensor(d, DType::f32, s);
      const struct { float alpha; } param{0.125f};
      rt.launch("custom_leakyrelu_f32", {in}, {out}, param);
      std::vector<float> want(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) want[i] = x[i] > 0 ? x[i] : 0.125f * x[i];
      check(close(download<float>(d, out), want, 0), "leakyrelu_f32_gaudi");
    }
    {  // ReLU6
      const Shape s{70, 3, 2};
      const auto x = random_floats(static_cast<std::size_t>(s.element_count()), -3, 9, 2);
      const auto in = make_device_tensor(d, DType::f32, s, x.data());
      const auto out = make_device_tensor(d, DType::f32, s);
      rt.launch("custom_relu6_fwd_f32", {in}, {out});
      std::vector<float> want(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) want[i] = std::min(std::max(x[i], 0.0f), 6.0f);
      check(close(download<float>(d, out), want, 0), "relu6_fwd_f32");
    }
    {  // add, 1-D with a partial last vector
      const Shape s{1000};
      const auto a = random_floats(1000, -1, 1, 3), b = random_floats(1000, -1, 1, 4);
      const auto ta = make_device_tensor(d, DType::f32, s, a.data());
      const auto tb = make_device_tensor(d, DType::f32, s, b.data());
      const auto out = make_device_tensor(d, DType::f32, s);
      rt.launch("custom_add_f32", {ta, tb}, {out});
      std::vector<float> want(1000);
      for (int i = 0; i < 1000; ++i) want[i] = a[i] + b[i];
      check(close(download<float>(d, out), want, 0), "add_f32");
    }
    {  // cast bf16 -> f32: exact, and in order
      const Shape s{256, 3};
      std::vector<tessera::bf16> x(768);
      std::vector<float> want(768);
      for (int i = 0; i < 768; ++i) {
        x[i] = tessera::bf16(static_cast<float>(i) * 0.5f - 100.0f);
        want[i] = static_cast<float>(x[i]);
      }
      const auto in = make_device_tensor(d, DType::bf16, s, x.data());
      const auto out = make_device_tensor(d, DType::f32, s);
      rt.launch("custom_cast_bf16_to_f32", {in}, {out});
      check(close(download<float>(d, out), want, 0), "cast_bf16_to_f32");
    }
    {  // softmax along dim 0 (rows of 150)
      const Shape s{150, 4};
      const auto x = random_floats(600, -5, 5, 5);
      const auto in = make_device_tensor(d, DType::f32, s, x.data());
      const auto out = make_device_tensor(d, DType::f32, s);
      rt.launch("custom_softmax_fcd_f32", {in}, {out});
      std::vector<float> want(600);
      for (int r = 0; r < 4; ++r) {
        double m = -INFINITY, sum = 0;
        for (int i = 0; i < 150; ++i) m = std::max<double>(m, x[r * 150 + i]);
        for (int i = 0; i < 150; ++i) sum += std::exp(x[r * 150 + i] - m);
        for (int i = 0; i < 150; ++i)
          want[r * 150 + i] = static_cast<float>(std::exp(x[r * 150 + i] - m) / sum);
      }
      check(close(download<float>(d, out), want, 1e-5f), "softmax_fcd_f32");
    }
    {  // searchsorted (left)
      std::vector<float> sorted = random_floats(40, -10, 10, 6);
      std::sort(sorted.begin(), sorted.end());
      const auto values = random_floats(130, -12, 12, 7);
      const auto ts = make_device_tensor(d, DType::f32, Shape{40}, sorted.data());
      const auto tv = make_device_tensor(d, DType::f32, Shape{130}, values.data());
      const auto out = make_device_tensor(d, DType::i32, Shape{130});
      rt.launch("custom_searchsorted_fwd_f32", {ts, tv}, {out});
      const auto got = download<std::int32_t>(d, out);
      bool ok = true;
      for (int i = 0; i < 130; ++i)
        ok = ok &&
             got[i] == std::lower_bound(sorted.begin(), sorted.end(), values[i]) - sorted.begin();
      check(ok, "searchsorted_fwd_f32");
    }
    {  // KL divergence terms
      const Shape s{64, 5};
      const auto x = random_floats(320, -3, 0, 8);
      auto t = random_floats(320, -0.2f, 1, 9);
      const auto tx = make_device_tensor(d, DType::f32, s, x.data());
      const auto tt = make_device_tensor(d, DType::f32, s, t.data());
      const auto out = make_device_tensor(d, DType::f32, s);
      rt.launch("custom_kl_div_fwd_f32", {tx, tt}, {out});
      std::vector<float> want(320);
      for (int i = 0; i < 320; ++i) want[i] = t[i] > 0 ? t[i] * (std::log(t[i]) - x[i]) : 0.0f;
      check(close(download<float>(d, out), want, 1e-5f), "kl_div_fwd_f32");
    }
    {  // printf
      std::vector<float> x(128);
      for (int i = 0; i < 128; ++i) x[i] = static_cast<float>(i) + 0.5f;
      const auto in = make_device_tensor(d, DType::f32, Shape{128}, x.data());
      const auto out = make_device_tensor(d, DType::f32, Shape{128});
      rt.launch("custom_printf_test_f32", {in}, {out});
      const std::string text = rt.last_printf_output();
      check(text.find("member 1\nfirst value is 64.500000\n") != std::string::npos &&
                close(download<float>(d, out), x, 0),
            "printf_test (printed: " + std::to_string(text.size()) + " bytes)");
    }
    {  // matrix multiply: A (K=37, M=9), B (N=100, K=37)
      const auto a = random_floats(37 * 9, -1, 1, 10), b = random_floats(100 * 37, -1, 1, 11);
      const auto ta = make_device_tensor(d, DType::f32, Shape{37, 9}, a.data());
      const auto tb = make_device_tensor(d, DType::f32, Shape{100, 37}, b.data());
      const auto out = make_device_tensor(d, DType::f32, Shape{100, 9});
      rt.launch("custom_matrix_mul_fwd_f32", {ta, tb}, {out});
      std::vector<float> want(900);
      for (int m = 0; m < 9; ++m)
        for (int n = 0; n < 100; ++n) {
          double acc = 0;
          for (int k = 0; k < 37; ++k) acc += double(a[m * 37 + k]) * b[k * 100 + n];
          want[m * 100 + n] = static_cast<float>(acc);
        }
      check(close(download<float>(d, out), want, 1e-5f), "matrix_mul_fwd_f32");
    }
    {  // gather along dim 1
      std::vector<std::int32_t> data(70 * 6), idx = {5, 0, 3, 3};
      for (int i = 0; i < 420; ++i) data[i] = i * 7 - 100;
      const auto td = make_device_tensor(d, DType::i32, Shape{70, 6}, data.data());
      const auto ti = make_device_tensor(d, DType::i32, Shape{4}, idx.data());
      const auto out = make_device_tensor(d, DType::i32, Shape{70, 4});
      rt.launch("custom_gather_fwd_dim1_i32", {td, ti}, {out});
      const auto got = download<std::int32_t>(d, out);
      bool ok = true;
      for (int i = 0; i < 4; ++i)
        for (int c = 0; c < 70; ++c) ok = ok && got[i * 70 + c] == data[idx[i] * 70 + c];
      check(ok, "gather_fwd_dim1_i32");
    }
    {  // average pooling 3x2 window, stride 2x2, NHWC (C=80, W=9, H=7, N=2)
      const Shape si{80, 9, 7, 2}, so{80, 4, 3, 2};
      const auto x = random_floats(static_cast<std::size_t>(si.element_count()), -2, 2, 12);
      const auto in = make_device_tensor(d, DType::f32, si, x.data());
      const auto out = make_device_tensor(d, DType::f32, so);
      const struct { int kw, kh, sw, sh; } param{3, 2, 2, 2};
      rt.launch("custom_avg_pool_2d_fwd_f32", {in}, {out}, param);
      std::vector<float> want(static_cast<std::size_t>(so.element_count()));
      for (int n = 0; n < 2; ++n)
        for (int h = 0; h < 3; ++h)
          for (int w = 0; w < 4; ++w)
            for (int c = 0; c < 80; ++c) {
              double acc = 0;
              for (int kh = 0; kh < 2; ++kh)
                for (int kw = 0; kw < 3; ++kw)
                  acc += x[((n * 7 + h * 2 + kh) * 9 + w * 2 + kw) * 80 + c];
              want[((n * 3 + h) * 4 + w) * 80 + c] = static_cast<float>(acc / 6);
            }
      check(close(download<float>(d, out), want, 1e-5f), "avg_pool_2d_fwd_f32");
    }
    {  // batch norm (inference), C=100 over W=3, H=2
      const Shape s{100, 3, 2}, sc{100};
      const auto x = random_floats(600, -3, 3, 13), mean = random_floats(100, -1, 1, 14);
      const auto var = random_floats(100, 0.1f, 2, 15), gamma = random_floats(100, 0.5f, 2, 16);
      const auto beta = random_floats(100, -1, 1, 17);
      const auto tx = make_device_tensor(d, DType::f32, s, x.data());
      const auto tm = make_device_tensor(d, DType::f32, sc, mean.data());
      const auto tv = make_device_tensor(d, DType::f32, sc, var.data());
      const auto tg = make_device_tensor(d, DType::f32, sc, gamma.data());
      const auto tb = make_device_tensor(d, DType::f32, sc, beta.data());
      const auto out = make_device_tensor(d, DType::f32, s);
      const float eps = 1e-5f;
      rt.launch("custom_batch_norm_fwd_f32", {tx, tm, tv, tg, tb}, {out}, eps);
      std::vector<float> want(600);
      for (int i = 0; i < 600; ++i) {
        const int c = i % 100;
        want[i] = static_cast<float>((x[i] - mean[c]) / std::sqrt(double(var[c]) + eps) * gamma[c] +
                                     beta[c]);
      }
      check(close(download<float>(d, out), want, 1e-5f), "batch_norm_fwd_f32");
    }
    {  // 2-D filter (depthwise 3x3), C=70, W=9, H=7, N=2, pad 1, stride 2 x 1, dilation 1 x 2
      const int C = 70, W = 9, H = 7, N = 2, KW = 3, KH = 3;
      const struct {
        int pad_w, pad_h, kernel_w, kernel_h, stride_w, stride_h, dilation_w, dilation_h;
      } p{1, 1, KW, KH, 2, 1, 1, 2};
      const int OW = (W + 2 * p.pad_w - p.dilation_w * (KW - 1) - 1) / p.stride_w + 1;
      const int OH = (H + 2 * p.pad_h - p.dilation_h * (KH - 1) - 1) / p.stride_h + 1;
      const auto x = random_floats(static_cast<std::size_t>(C * W * H * N), -2, 2, 18);
      const auto k = random_floats(static_cast<std::size_t>(C * KW * KH), -1, 1, 19);
      const auto in = make_device_tensor(d, DType::f32, Shape{C, W, H, N}, x.data());
      const auto filter = make_device_tensor(d, DType::f32, Shape{C, KW, KH}, k.data());
      const auto out = make_device_tensor(d, DType::f32, Shape{C, OW, OH, N});
      rt.launch("custom_filter_fwd_2d_f32", {in, filter}, {out}, p);
      std::vector<float> want(static_cast<std::size_t>(C * OW * OH * N));
      for (int n = 0; n < N; ++n)
        for (int oh = 0; oh < OH; ++oh)
          for (int ow = 0; ow < OW; ++ow)
            for (int c = 0; c < C; ++c) {
              double acc = 0;
              for (int kh = 0; kh < KH; ++kh)
                for (int kw = 0; kw < KW; ++kw) {
                  const int ih = oh * p.stride_h - p.pad_h + kh * p.dilation_h;
                  const int iw = ow * p.stride_w - p.pad_w + kw * p.dilation_w;
                  if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                  acc += double(x[((n * H + ih) * W + iw) * C + c]) * k[(kh * KW + kw) * C + c];
                }
              want[((n * OH + oh) * OW + ow) * C + c] = static_cast<float>(acc);
            }
      check(close(download<float>(d, out), want, 1e-5f), "filter_fwd_2d_f32");
    }
    // Bitonic sort of every row, both directions, rows of several lengths (powers of two and
    // not), against std::sort; the indices must point each output at its input element.
    for (const int n : {64, 100, 1000, 4096, 8192})
      for (const int descending : {0, 1}) {
        const int rows = 3;
        const Shape s{n, rows};
        auto x = random_floats(static_cast<std::size_t>(n * rows), -50, 50, static_cast<unsigned>(20 + n));
        for (std::size_t i = 0; i < x.size(); i += 7) x[i] = std::round(x[i]);  // some equal keys
        const auto in = make_device_tensor(d, DType::f32, s, x.data());
        const auto data = make_device_tensor(d, DType::f32, s);
        const auto idx = make_device_tensor(d, DType::i32, s);
        const struct { int descending; } param{descending};
        rt.launch("custom_bitonic_sort_f32", {in}, {data, idx}, param);
        const auto got = download<float>(d, data);
        const auto pos = download<std::int32_t>(d, idx);
        bool ok = true;
        for (int r = 0; r < rows && ok; ++r) {
          std::vector<float> want(x.begin() + r * n, x.begin() + (r + 1) * n);
          if (descending)
            std::sort(want.begin(), want.end(), std::greater<float>());
          else
            std::sort(want.begin(), want.end());
          std::vector<bool> seen(static_cast<std::size_t>(n), false);
          for (int i = 0; i < n && ok; ++i) {
            const int k = pos[static_cast<std::size_t>(r * n + i)];
            ok = got[static_cast<std::size_t>(r * n + i)] == want[static_cast<std::size_t>(i)] &&
                 k >= 0 && k < n && !seen[static_cast<std::size_t>(k)] &&
                 x[static_cast<std::size_t>(r * n + k)] == want[static_cast<std::size_t>(i)];
            if (ok) seen[static_cast<std::size_t>(k)] = true;
            if (!ok) std::printf("  row %d element %d: got %g (from %d), want %g\n", r, i,
                                 got[static_cast<std::size_t>(r * n + i)], k,
                                 want[static_cast<std::size_t>(i)]);
          }
        }
        check(ok, "bitonic_sort_f32 rows of " + std::to_string(n) +
                      (descending ? " descending" : " ascending"));
      }
    {  // embedding bags: scaled table rows summed per bag, members sharing bags
      const int width = 150, rows = 40, count = 300, bag_count = 7;
      std::vector<float> table =
          random_floats(static_cast<std::size_t>((width + 2) * rows), -1, 1, 11);
      for (int r = 0; r < rows; ++r) {
        table[static_cast<std::size_t>(r * (width + 2) + width)] =
            0.5f + 0.125f * (r % 5);                                                     // scale
        table[static_cast<std::size_t>(r * (width + 2) + width + 1)] = 0.25f * (r % 3);  // bias
      }
      std::vector<std::int32_t> indices(count), bag(count);
      for (int k = 0; k < count; ++k) {
        indices[static_cast<std::size_t>(k)] = (k * 13 + 5) % rows;
        bag[static_cast<std::size_t>(k)] = (k * 3) % bag_count;
      }
      const auto tt = make_device_tensor(d, DType::f32, Shape{width + 2, rows}, table.data());
      const auto ti = make_device_tensor(d, DType::i32, Shape{count}, indices.data());
      const auto tb = make_device_tensor(d, DType::i32, Shape{count}, bag.data());
      const std::vector<float> zeros(static_cast<std::size_t>(width * bag_count), 0.0f);
      const auto out = make_device_tensor(d, DType::f32, Shape{width, bag_count}, zeros.data());
      rt.launch("custom_embedding_bag_sum_f32", {tt, ti, tb}, {out});
      std::vector<float> want(zeros);
      for (int k = 0; k < count; ++k) {
        const float* row =
            &table[static_cast<std::size_t>(indices[static_cast<std::size_t>(k)] * (width + 2))];
        for (int c = 0; c < width; ++c)
          want[static_cast<std::size_t>(bag[static_cast<std::size_t>(k)] * width + c)] +=
              row[c] * row[width] + row[width + 1];
      }
      check(close(download<float>(d, out), want, 1e-5f), "embedding_bag_sum_f32");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
