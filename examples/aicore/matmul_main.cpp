// Host side of the Cube matmul: random fp16 A and B, 4 blocks, checked against a float GEMM
// on the host within fp16 rounding of the result.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "tessera/targets/aicore/api/report.h"
#include "tikicpulib.h"

extern "C" __global__ __aicore__ void matmul_custom(GM_ADDR a, GM_ADDR b, GM_ADDR c);

int32_t main()
{
    constexpr int M = 128, K = 128, N = 64;
    auto* a = (_Float16*)AscendC::GmAlloc(M * K * 2);
    auto* b = (_Float16*)AscendC::GmAlloc(K * N * 2);
    auto* c = (_Float16*)AscendC::GmAlloc(M * N * 2);
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (int i = 0; i < M * K; ++i) a[i] = (_Float16)d(gen);
    for (int i = 0; i < K * N; ++i) b[i] = (_Float16)d(gen);
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(matmul_custom, 4, (uint8_t*)a, (uint8_t*)b, (uint8_t*)c);
    double worst = 0;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float want = 0;
            for (int k = 0; k < K; ++k) want += (float)a[i * K + k] * (float)b[k * N + j];
            worst = std::max(worst, (double)std::fabs((float)c[i * N + j] - want) / (1.0 + std::fabs(want)));
        }
    std::printf("matmul_custom %dx%dx%d: worst error %.3g (relative to 1 + |C|)\n", M, K, N, worst);
    tessera::aicore::print_report(stdout);
    AscendC::GmFree(a);
    AscendC::GmFree(b);
    AscendC::GmFree(c);
    return worst < 1e-2 ? 0 : 1;
}
