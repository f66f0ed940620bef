#include "blas.h"

#include <cblas.h>

#include <algorithm>
#include <mutex>

#include "tessera/core/log.h"
#include "tessera/ops/gemm.h"
#include "tessera/sim/scheduler.h"

namespace tessera::ops::detail {

namespace {

// Below this many multiply-adds a product runs as one call: splitting would cost more than it
// saves.
constexpr std::int64_t kSplitWork = std::int64_t{1} << 22;
constexpr std::int64_t kColumnBlock = 256;
constexpr std::int64_t kRowBlock = 64;

void pin_openblas_to_one_thread() {
  static std::once_flag once;
  std::call_once(once, [] {
    openblas_set_num_threads(1);
    log(LogLevel::debug, "ops",
        "OpenBLAS set to 1 thread: reference GEMMs are split by shape so results do not depend "
        "on the host thread count");
  });
}

void call(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda), b,
              static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

void call(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
          const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta,
          double* c, std::int64_t ldc) {
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), alpha, a, static_cast<blasint>(lda), b,
              static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

// One GEMM cut into shape-fixed blocks (see blas.h), T float or double.
template <typename T>
void blocked_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                  T alpha, const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
                  std::int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {  // BLAS leaves C untouched for k = 0 only when beta = 1; be explicit
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
    return;
  }
  pin_openblas_to_one_thread();
  const std::int64_t col_blocks = (n + kColumnBlock - 1) / kColumnBlock;
  const std::int64_t row_blocks = (m + kRowBlock - 1) / kRowBlock;
  if (m * n * k < kSplitWork || std::max(col_blocks, row_blocks) == 1) {
    call(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  if (col_blocks >= row_blocks) {
    parallel_for(static_cast<std::size_t>(col_blocks), [&](std::size_t blk) {
      const std::int64_t j0 = static_cast<std::int64_t>(blk) * kColumnBlock;
      const std::int64_t nj = std::min(kColumnBlock, n - j0);
      // op(B) columns j0.. start at column j0 of B, or at row j0 of B when B is transposed.
      const T* bj = trans_b ? b + j0 * ldb : b + j0;
      call(trans_a, trans_b, m, nj, k, alpha, a, lda, bj, ldb, beta, c + j0, ldc);
    });
  } else {
    parallel_for(static_cast<std::size_t>(row_blocks), [&](std::size_t blk) {
      const std::int64_t i0 = static_cast<std::int64_t>(blk) * kRowBlock;
      const std::int64_t mi = std::min(kRowBlock, m - i0);
      const T* ai = trans_a ? a + i0 : a + i0 * lda;
      call(trans_a, trans_b, mi, n, k, alpha, ai, lda, b, ldb, beta, c + i0 * ldc, ldc);
    });
  }
}

}  // namespace

void parallel_for(std::size_t count, const std::function<void(std::size_t)>& fn) {
  if (count == 1) {
    fn(0);
    return;
  }
  sim::WorkScheduler::shared().parallel_for(count, fn);
}

void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc) {
  blocked_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void dgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
           const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta,
           double* c, std::int64_t ldc) {
  blocked_gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace tessera::ops::detail

namespace tessera::ops {

void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc) {
  detail::sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace tessera::ops
