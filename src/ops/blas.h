// Deterministic SGEMM and DGEMM for the reference ops. OpenBLAS's own threading changes the
// rounding of results with the thread count, so OpenBLAS runs single-threaded and the product is
// cut into blocks that depend only on the shape, spread over Tessera's work scheduler
// (TESSERA_THREADS).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace tessera::ops::detail {

// C (m x n, leading dim ldc) = alpha * op(A) * op(B) + beta * C, all row-major.
void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc);
// The same in f64 (cblas_dgemm, cut into the same blocks).
void dgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
           const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta,
           double* c, std::int64_t ldc);

// fn(i) for i in [0, count) on the shared scheduler; units must write disjoint outputs.
void parallel_for(std::size_t count, const std::function<void(std::size_t)>& fn);

}  // namespace tessera::ops::detail
