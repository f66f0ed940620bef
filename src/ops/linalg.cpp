// MatMul (NumPy matmul semantics, ONNX MatMul-13) and Gemm (ONNX Gemm-13) through OpenBLAS.
// A Tessera {K, M} tensor is a row-major M x K matrix, so sgemm runs in CblasRowMajor.
#include <cstring>
#include <type_traits>

#include "blas.h"
#include "common.h"
#include "tessera/ops/reference.h"

namespace tessera::ops {

using detail::broadcast_rows;

namespace {

// Integer matrices have no BLAS; accumulate in 64 bits and wrap to T as NumPy does.
template <typename T>
void int_gemm(const T* a, const T* b, T* c, std::int64_t m, std::int64_t n, std::int64_t k) {
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      std::int64_t acc = 0;
      for (std::int64_t p = 0; p < k; ++p)
        acc += static_cast<std::int64_t>(a[i * k + p]) * static_cast<std::int64_t>(b[p * n + j]);
      c[i * n + j] = static_cast<T>(acc);
    }
}

void sgemm(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n,
           std::int64_t k) {
  detail::sgemm(false, false, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
}

Shape batch_shape(const Shape& s) {
  std::vector<std::int64_t> dims;
  for (int d = 2; d < s.rank(); ++d) dims.push_back(s[d]);
  return Shape::from_fastest_first(dims);
}

}  // namespace

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  detail::require_same_dtype("MatMul", a_in, b_in);
  if (a_in.dtype() == DType::boolean)
    throw_user_error("MatMul: bool inputs are not accepted; Cast them to a numeric dtype");
  if (a_in.rank() == 0 || b_in.rank() == 0)
    throw_user_error(
        "MatMul: inputs must have rank >= 1, got shapes {} and {} (use Mul for scalars)",
        a_in.shape().to_string(), b_in.shape().to_string());
  // Promote 1-D operands: a {K} -> {K, 1} (one row), b {K} -> {1, K} (one column).
  const bool a_vec = a_in.rank() == 1, b_vec = b_in.rank() == 1;
  const Tensor a = a_vec ? a_in.reshape(Shape{a_in.dim(0), 1}) : a_in;
  const Tensor b = b_vec ? b_in.reshape(Shape{1, b_in.dim(0)}) : b_in;
  const std::int64_t k = a.dim(0), m = a.dim(1), n = b.dim(0);
  if (b.dim(1) != k)
    throw_user_error(
        "MatMul: inner dimensions differ: A {} has K={} (its dim 0) but B {} has K={} "
        "(its dim 1); shapes are listed fastest first, so an (M, K) matrix is (K, M)",
        a_in.shape().to_string(), k, b_in.shape().to_string(), b.dim(1));
  const Shape a_batch = batch_shape(a.shape()), b_batch = batch_shape(b.shape());
  Shape out_batch;
  try {
    out_batch = broadcast_shapes(a_batch, b_batch);
  } catch (const UserError&) {
    throw_user_error("MatMul: batch dimensions of A {} and B {} do not broadcast",
                     a_in.shape().to_string(), b_in.shape().to_string());
  }
  std::vector<std::int64_t> out_dims{n, m};
  for (int d = 0; d < out_batch.rank(); ++d) out_dims.push_back(out_batch[d]);
  if (out_dims.size() > static_cast<std::size_t>(kMaxRank))
    throw_user_error("MatMul: result of A {} x B {} would have rank {} (> {})",
                     a_in.shape().to_string(), b_in.shape().to_string(), out_dims.size(), kMaxRank);
  Shape out_shape = Shape::from_fastest_first(out_dims);

  const bool floating = is_floating(a.dtype());
  const Tensor a32 = floating ? detail::as_f32(a) : a;
  const Tensor b32 = floating ? detail::as_f32(b) : b;
  Tensor out(floating ? DType::f32 : a.dtype(), out_shape);
  const std::int64_t a_mat = m * k, b_mat = k * n, c_mat = m * n;

  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* pa = a32.data<T>();
    const T* pb = b32.data<T>();
    T* pc = out.data<T>();
    auto mm = [&](const T* x, const T* y, T* z, std::int64_t rows) {
      if constexpr (std::is_same_v<T, float>)
        sgemm(x, y, z, rows, n, k);
      else
        int_gemm(x, y, z, rows, n, k);
    };
    if (b_batch.element_count() == 1) {
      // Shared B (weights): every batch of A stacks into one tall matrix, one BLAS call.
      if (a_batch == out_batch) {
        mm(pa, pb, pc, m * out_batch.element_count());
        return;
      }
    }
    // One unit per output matrix; each writes only its own matrix.
    std::vector<std::array<std::int64_t, 3>> units;
    broadcast_rows<2>(out_batch, {&a_batch, &b_batch},
                      [&](std::int64_t o, const std::array<std::int64_t, 2>& in,
                          const std::array<std::int64_t, 2>& st, std::int64_t count) {
                        for (std::int64_t i = 0; i < count; ++i)
                          units.push_back({in[0] + i * st[0], in[1] + i * st[1], o + i});
                      });
    detail::parallel_for(units.size(), [&](std::size_t u) {
      mm(pa + units[u][0] * a_mat, pb + units[u][1] * b_mat, pc + units[u][2] * c_mat, m);
    });
  };
  if (floating) {
    run(float{});
  } else {
    dispatch_dtype(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) run(T{});
    });
  }
  // Drop the dims added for 1-D operands.
  std::vector<std::int64_t> final_dims;
  for (int d = 0; d < out_shape.rank(); ++d) {
    if (d == 0 && b_vec) continue;
    if (d == 1 && a_vec) continue;
    final_dims.push_back(out_shape[d]);
  }
  out.reshape_in_place(Shape::from_fastest_first(final_dims));
  return floating ? detail::restore(std::move(out), a_in.dtype()) : out;
}

Tensor gemm(const Tensor& a_in, const Tensor& b_in, const Tensor* c_in, const GemmParams& params) {
  detail::require_float("Gemm", a_in, "A");
  detail::require_same_dtype("Gemm", a_in, b_in);
  if (a_in.rank() != 2 || b_in.rank() != 2)
    throw_user_error("Gemm: A {} and B {} must both be 2-D", a_in.shape().to_string(),
                     b_in.shape().to_string());
  // Row-major (rows, cols) is Tessera {cols, rows}.
  const std::int64_t m = params.trans_a ? a_in.dim(0) : a_in.dim(1);
  const std::int64_t ka = params.trans_a ? a_in.dim(1) : a_in.dim(0);
  const std::int64_t kb = params.trans_b ? b_in.dim(0) : b_in.dim(1);
  const std::int64_t n = params.trans_b ? b_in.dim(1) : b_in.dim(0);
  if (ka != kb)
    throw_user_error(
        "Gemm: inner dimensions differ: A {} (trans_a={}) gives K={}, B {} "
        "(trans_b={}) gives K={}; shapes are listed fastest first",
        a_in.shape().to_string(), params.trans_a, ka, b_in.shape().to_string(), params.trans_b, kb);
  const Shape out_shape{n, m};
  const Tensor a = detail::as_f32(a_in), b = detail::as_f32(b_in);
  Tensor out(DType::f32, out_shape);
  float beta = 0.0f;
  if (c_in != nullptr && params.beta != 0.0f) {
    detail::require_same_dtype("Gemm", a_in, *c_in);
    Shape bshape;
    try {
      bshape = broadcast_shapes(c_in->shape(), out_shape);
    } catch (const UserError&) {
      bshape = Shape{};
    }
    if (!(bshape == out_shape))
      throw_user_error("Gemm: C {} does not broadcast to the result shape {} (N={}, M={})",
                       c_in->shape().to_string(), out_shape.to_string(), n, m);
    out = expand(detail::as_f32(*c_in), out_shape);
    beta = params.beta;
  }
  if (m > 0 && n > 0) {
    if (ka == 0) {
      float* p = out.data<float>();
      for (std::int64_t i = 0; i < m * n; ++i) p[i] *= beta;
    } else {
      detail::sgemm(params.trans_a, params.trans_b, m, n, ka, params.alpha, a.data<float>(),
                    a.dim(0), b.data<float>(), b.dim(0), beta, out.data<float>(), n);
    }
  }
  return detail::restore(std::move(out), a_in.dtype());
}

}  // namespace tessera::ops
