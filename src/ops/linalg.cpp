// MatMul (NumPy matmul semantics, ONNX MatMul-13) and Gemm (ONNX Gemm-13) through OpenBLAS
// (sgemm, dgemm for f64). A Tessera {K, M} tensor is a row-major M x K matrix, so the GEMMs run
// in CblasRowMajor.
#include <cstring>
#include <map>
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

void dgemm(const double* a, const double* b, double* c, std::int64_t m, std::int64_t n,
           std::int64_t k) {
  detail::dgemm(false, false, m, n, k, 1.0, a, k, b, n, 0.0, c, n);
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

  const bool floating = is_floating(a.dtype()), wide = a.dtype() == DType::f64;
  // f64 computes in f64, the other floats in f32.
  const Tensor a32 = floating && !wide ? detail::as_f32(a) : a;
  const Tensor b32 = floating && !wide ? detail::as_f32(b) : b;
  Tensor out(floating ? a32.dtype() : a.dtype(), out_shape);
  const std::int64_t a_mat = m * k, b_mat = k * n, c_mat = m * n;

  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* pa = a32.data<T>();
    const T* pb = b32.data<T>();
    T* pc = out.data<T>();
    auto mm = [&](const T* x, const T* y, T* z, std::int64_t rows) {
      if constexpr (std::is_same_v<T, float>)
        sgemm(x, y, z, rows, n, k);
      else if constexpr (std::is_same_v<T, double>)
        dgemm(x, y, z, rows, n, k);
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
  if (wide) {
    run(double{});
  } else if (floating) {
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
  }
  return detail::with_compute_type(a_in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Tensor a_scratch, b_scratch;
    const Tensor& a = detail::compute_ref<T>(a_in, a_scratch);
    const Tensor& b = detail::compute_ref<T>(b_in, b_scratch);
    Tensor out(detail::compute_dtype<T>(), out_shape);
    T beta = 0;
    if (c_in != nullptr && params.beta != 0.0f) {
      out = expand(detail::as_compute<T>(*c_in), out_shape);
      beta = static_cast<T>(params.beta);
    }
    if (m > 0 && n > 0) {
      if (ka == 0) {
        T* p = out.data<T>();
        for (std::int64_t i = 0; i < m * n; ++i) p[i] *= beta;
      } else if constexpr (std::is_same_v<T, double>) {
        detail::dgemm(params.trans_a, params.trans_b, m, n, ka, params.alpha, a.data<T>(), a.dim(0),
                      b.data<T>(), b.dim(0), beta, out.data<T>(), n);
      } else {
        detail::sgemm(params.trans_a, params.trans_b, m, n, ka, params.alpha, a.data<T>(), a.dim(0),
                      b.data<T>(), b.dim(0), beta, out.data<T>(), n);
      }
    }
    return detail::restore(std::move(out), a_in.dtype());
  });
}

}  // namespace tessera::ops

// ---- Einsum-12 and Det-11 ----

namespace tessera::ops {

namespace {

struct EinsumTerm {
  std::vector<int> labels;  // letters as chars; ellipsis dims as -1, -2, ... (outermost first)
};

// Parses one term; `rank` resolves the ellipsis (-1 for the output term: the broadcast rank).
EinsumTerm parse_einsum_term(std::string_view equation, std::string_view term, int rank,
                             int ellipsis_rank) {
  EinsumTerm t;
  int letters = 0;
  bool ellipsis = false;
  for (std::size_t i = 0; i < term.size(); ++i) {
    const char ch = term[i];
    if (ch == ' ') continue;
    if (ch == '.') {
      if (ellipsis || term.substr(i, 3) != "...")
        throw_user_error("Einsum: equation '{}': malformed ellipsis in term '{}'", equation, term);
      ellipsis = true;
      i += 2;
      t.labels.push_back(0);  // placeholder, expanded below
      continue;
    }
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')))
      throw_user_error("Einsum: equation '{}': '{}' in term '{}' is not a letter", equation, ch,
                       term);
    t.labels.push_back(ch);
    ++letters;
  }
  const int dots = rank >= 0 ? rank - letters : ellipsis_rank;
  if (rank >= 0 && (dots < 0 || (!ellipsis && dots != 0)))
    throw_user_error("Einsum: equation '{}': term '{}' names {} axes but its operand has rank {}",
                     equation, term, letters, rank);
  std::vector<int> expanded;
  for (int l : t.labels) {
    if (l != 0) {
      expanded.push_back(l);
      continue;
    }
    for (int k = 0; k < dots; ++k) expanded.push_back(-(ellipsis_rank - dots + k + 1));
  }
  t.labels = expanded;
  return t;
}

}  // namespace

Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands) {
  if (operands.empty()) throw_user_error("Einsum: needs at least one operand");
  const auto arrow = equation.find("->");
  const std::string_view lhs = equation.substr(0, arrow);
  std::vector<std::string_view> terms;
  for (std::size_t start = 0;;) {
    const auto comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (terms.size() != operands.size())
    throw_user_error("Einsum: equation '{}' has {} input terms but {} operands were given",
                     equation, terms.size(), operands.size());
  // The ellipsis covers the broadcast of the operands' unnamed dims.
  int ellipsis_rank = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    int letters = 0;
    for (char ch : terms[i]) letters += (ch != '.' && ch != ' ') ? 1 : 0;
    ellipsis_rank = std::max(ellipsis_rank, operands[i].rank() - letters);
  }
  std::vector<EinsumTerm> ins;
  std::map<int, std::int64_t> size;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const Tensor& x = operands[i];
    if (x.dtype() == DType::boolean)
      throw_user_error("Einsum: operand {} is bool; Cast it to a numeric dtype", i);
    detail::require_same_dtype("Einsum", operands[0], x);
    ins.push_back(parse_einsum_term(equation, terms[i], x.rank(), ellipsis_rank));
    const auto& labels = ins.back().labels;
    for (std::size_t a = 0; a < labels.size(); ++a) {
      const std::int64_t d = x.dim(x.rank() - 1 - static_cast<int>(a));  // ONNX axis a
      auto [it, fresh] = size.emplace(labels[a], d);
      if (fresh) continue;
      if (labels[a] < 0 && (it->second == 1 || d == 1)) {
        it->second = std::max(it->second, d);
      } else if (it->second != d) {
        throw_user_error(
            "Einsum: equation '{}': label '{}' has size {} in operand {} but {} "
            "elsewhere",
            equation, labels[a] < 0 ? '.' : static_cast<char>(labels[a]), d, i, it->second);
      }
    }
  }
  EinsumTerm out;
  if (arrow != std::string_view::npos) {
    out = parse_einsum_term(equation, equation.substr(arrow + 2), -1, ellipsis_rank);
    for (int l : out.labels)
      if (!size.count(l))
        throw_user_error("Einsum: equation '{}': output label '{}' is in no input term", equation,
                         static_cast<char>(l));
  } else {
    // Implicit output: the ellipsis dims, then the letters used once, alphabetically.
    for (int k = ellipsis_rank; k >= 1; --k) out.labels.push_back(-k);
    std::map<int, int> count;
    for (const auto& t : ins)
      for (int l : t.labels) ++count[l];
    for (const auto& [l, n] : count)
      if (l > 0 && n == 1) out.labels.push_back(l);
  }
  if (out.labels.size() > static_cast<std::size_t>(kMaxRank))
    throw_user_error("Einsum: the result would have rank {} (Tessera's maximum is {})",
                     out.labels.size(), kMaxRank);
  // Every label gets a loop; output labels outermost, the contracted ones innermost.
  std::vector<int> loop = out.labels;
  for (const auto& [l, n] : size)
    if (std::find(loop.begin(), loop.end(), l) == loop.end()) loop.push_back(l);
  std::vector<std::int64_t> extent;
  for (int l : loop) extent.push_back(size[l]);
  // Per operand, the stride of each loop label (0 where absent or broadcast).
  std::vector<std::vector<std::int64_t>> strides(operands.size(),
                                                 std::vector<std::int64_t>(loop.size(), 0));
  std::vector<std::vector<double>> values;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    values.push_back(operands[i].to_doubles());
    const auto& labels = ins[i].labels;
    std::int64_t run = 1;
    for (auto a = static_cast<int>(labels.size()) - 1; a >= 0; --a) {
      const std::int64_t d = operands[i].dim(static_cast<int>(labels.size()) - 1 - a);
      const auto pos = static_cast<std::size_t>(
          std::find(loop.begin(), loop.end(), labels[static_cast<std::size_t>(a)]) - loop.begin());
      if (d != 1) strides[i][pos] += run;
      run *= d;
    }
  }
  std::vector<std::int64_t> out_dims;
  std::int64_t out_count = 1, inner_count = 1;
  for (std::size_t k = 0; k < loop.size(); ++k) {
    if (k < out.labels.size()) {
      out_dims.push_back(extent[k]);
      out_count *= extent[k];
    } else {
      inner_count *= extent[k];
    }
  }
  std::vector<double> result(static_cast<std::size_t>(out_count), 0.0);
  std::vector<std::int64_t> idx(loop.size(), 0);
  std::vector<std::int64_t> off(operands.size(), 0);
  const std::int64_t total = out_count * inner_count;
  for (std::int64_t flat = 0; flat < total; ++flat) {
    double p = 1.0;
    for (std::size_t i = 0; i < operands.size(); ++i)
      p *= values[i][static_cast<std::size_t>(off[i])];
    result[static_cast<std::size_t>(flat / std::max<std::int64_t>(inner_count, 1))] += p;
    for (auto k = static_cast<int>(loop.size()) - 1; k >= 0; --k) {
      const auto ku = static_cast<std::size_t>(k);
      ++idx[ku];
      for (std::size_t i = 0; i < operands.size(); ++i) off[i] += strides[i][ku];
      if (idx[ku] < extent[ku]) break;
      for (std::size_t i = 0; i < operands.size(); ++i) off[i] -= strides[i][ku] * extent[ku];
      idx[ku] = 0;
    }
  }
  return Tensor::from_doubles(operands[0].dtype(), Shape::from_outer_first(out_dims), result);
}

Tensor det(const Tensor& x) {
  detail::require_float("Det", x);
  if (x.rank() < 2 || x.dim(0) != x.dim(1))
    throw_user_error("Det: input must be square matrices in its last two ONNX axes, got shape {}",
                     x.shape().to_string());
  const std::int64_t n = x.dim(0);
  std::vector<std::int64_t> batch_dims;
  for (int d = 2; d < x.rank(); ++d) batch_dims.push_back(x.dim(d));
  const std::int64_t batches = x.element_count() / std::max<std::int64_t>(n * n, 1);
  const std::vector<double> v = x.to_doubles();
  std::vector<double> out(static_cast<std::size_t>(std::max<std::int64_t>(batches, 1)), 1.0);
  std::vector<double> a(static_cast<std::size_t>(n * n));
  for (std::int64_t b = 0; b < batches; ++b) {
    std::copy(v.begin() + b * n * n, v.begin() + (b + 1) * n * n, a.begin());
    double d = 1.0;
    // a[i * n + j] is row i, column j (storage order is ONNX's row-major).
    for (std::int64_t c = 0; c < n; ++c) {
      std::int64_t piv = c;
      for (std::int64_t r = c + 1; r < n; ++r)
        if (std::fabs(a[static_cast<std::size_t>(r * n + c)]) >
            std::fabs(a[static_cast<std::size_t>(piv * n + c)]))
          piv = r;
      if (a[static_cast<std::size_t>(piv * n + c)] == 0.0) {
        d = 0.0;
        break;
      }
      if (piv != c) {
        for (std::int64_t j = 0; j < n; ++j)
          std::swap(a[static_cast<std::size_t>(piv * n + j)],
                    a[static_cast<std::size_t>(c * n + j)]);
        d = -d;
      }
      const double p = a[static_cast<std::size_t>(c * n + c)];
      d *= p;
      for (std::int64_t r = c + 1; r < n; ++r) {
        const double f = a[static_cast<std::size_t>(r * n + c)] / p;
        for (std::int64_t j = c; j < n; ++j)
          a[static_cast<std::size_t>(r * n + j)] -= f * a[static_cast<std::size_t>(c * n + j)];
      }
    }
    out[static_cast<std::size_t>(b)] = d;
  }
  out.resize(static_cast<std::size_t>(batches));
  return Tensor::from_doubles(x.dtype(), Shape::from_fastest_first(batch_dims), out);
}

}  // namespace tessera::ops
