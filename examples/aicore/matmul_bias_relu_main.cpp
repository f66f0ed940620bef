// Host side of matmul_bias_relu: the tiling from PlatformAscendC and MultiCoreMatmulTiling, a
// launch over the cores it uses, and the result against a double-precision product here.
#include <cmath>
#include <cstdio>
#include <random>

#include "matmul_bias_relu_tiling.h"
#include "tessera/targets/aicore/api/report.h"
#include "tikicpulib.h"

extern "C" __global__ __aicore__ void matmul_bias_relu_custom(GM_ADDR x, GM_ADDR w, GM_ADDR b,
                                                               GM_ADDR y, GM_ADDR workspace,
                                                               GM_ADDR tiling);

int32_t main()
{
    constexpr int M = 300, K = 256, N = 192;  // M leaves a tail on the last block
    using namespace matmul_tiling;
    auto* platform = platform_ascendc::PlatformAscendCManager::GetInstance("Ascend910");
    MultiCoreMatmulTiling api(*platform);
    api.SetDim(8);
    api.SetAType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT16);
    api.SetBType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT16);
    api.SetCType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT);
    api.SetBiasType(TPosition::GM, CubeFormat::ND, DataType::DT_FLOAT);
    api.SetShape(M, N, K);
    api.SetOrgShape(M, N, K);
    api.SetBias(true);
    optiling::MatmulBiasReluTiling tiling;
    if (api.GetTiling(tiling.cube) == -1) {
        std::printf("no tiling fits\n");
        return 1;
    }
    tiling.set_slope(0.1f);

    auto* x = (_Float16*)AscendC::GmAlloc(M * K * 2);
    auto* w = (_Float16*)AscendC::GmAlloc(K * N * 2);
    auto* b = (float*)AscendC::GmAlloc(N * sizeof(float));
    auto* y = (float*)AscendC::GmAlloc(M * N * sizeof(float));
    auto* workspace = (uint8_t*)AscendC::GmAlloc(platform->GetLibApiWorkSpaceSize());
    auto* tilingGm = (uint8_t*)AscendC::GmAlloc(tiling.GetDataSize());
    tiling.SaveToBuffer(tilingGm, tiling.GetDataSize());
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (int i = 0; i < M * K; ++i) x[i] = (_Float16)d(gen);
    for (int i = 0; i < K * N; ++i) w[i] = (_Float16)d(gen);
    for (int i = 0; i < N; ++i) b[i] = d(gen);

    ICPU_RUN_KF(matmul_bias_relu_custom, tiling.cube.usedCoreNum, (uint8_t*)x, (uint8_t*)w,
                (uint8_t*)b, (uint8_t*)y, workspace, tilingGm);

    double worst = 0;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double s = b[j];
            for (int k = 0; k < K; ++k) s += (double)x[i * K + k] * (double)w[k * N + j];
            const double want = s < 0 ? 0.1 * s : s;
            worst = std::max(worst, std::fabs(y[i * N + j] - want) / (1.0 + std::fabs(want)));
        }
    std::printf("matmul_bias_relu %dx%dx%d on %d blocks (singleCore %dx%d, base %dx%dx%d): worst "
                "error %.3g\n",
                M, K, N, tiling.cube.usedCoreNum, tiling.cube.singleCoreM, tiling.cube.singleCoreN,
                tiling.cube.baseM, tiling.cube.baseN, tiling.cube.baseK, worst);
    tessera::aicore::print_report(stdout);
    for (void* p : {(void*)x, (void*)w, (void*)b, (void*)y, (void*)workspace, (void*)tilingGm})
        AscendC::GmFree(p);
    return worst < 1e-3 ? 0 : 1;
}
