// Deterministic single-precision GEMM shared by the reference ops and any target that needs a
// host GEMM (e.g. an MME model): the same bits for any TESSERA_THREADS and any OpenBLAS build
// thread count, because OpenBLAS runs single-threaded on blocks fixed by the shape.
#pragma once

#include <cstdint>

namespace tessera::ops {

// C (m x n, leading dim ldc) = alpha * op(A) * op(B) + beta * C; all matrices row-major, op(X)
// is X or its transpose. Sets OpenBLAS to one thread (process-wide) on first use.
void sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
           std::int64_t ldc);

}  // namespace tessera::ops
