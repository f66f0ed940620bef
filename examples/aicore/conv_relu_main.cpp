// Host side of the fused conv + ReLU: a batch of 2 images in 5HD, weights laid out in
// fractal-Z, one block per image; checked against a direct convolution on the host.
#include <cmath>
#include <cstdio>
#include <random>

#include "tessera/targets/aicore/api/report.h"
#include "tikicpulib.h"

extern "C" __global__ __aicore__ void conv_relu_custom(GM_ADDR x, GM_ADDR w, GM_ADDR y);

int32_t main()
{
    constexpr int BATCH = 2, C0 = 16, CIN = 16, H = 8, W = 8, COUT = 32, KH = 3, KW = 3;
    constexpr int K1 = (CIN / C0) * KH * KW, N1 = COUT / C0;
    auto* x = (_Float16*)AscendC::GmAlloc(BATCH * CIN * H * W * 2);
    auto* w = (_Float16*)AscendC::GmAlloc(COUT * CIN * KH * KW * 2);
    auto* y = (_Float16*)AscendC::GmAlloc(BATCH * COUT * H * W * 2);
    std::mt19937 gen(11);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    // x in 5HD: (n, c1, h, w, c0); weights W[cout][cin][kh][kw] kept in float for the check.
    static float wf[COUT][CIN][KH][KW];
    for (int i = 0; i < BATCH * CIN * H * W; ++i) x[i] = (_Float16)d(gen);
    for (auto& a : wf) for (auto& b : a) for (auto& c : b) for (auto& v : c) v = (float)(_Float16)(0.3f * d(gen));
    // Fractal-Z: fractal (k1 = (c1, kh, kw), n1) holds [n0][k0].
    for (int c1 = 0; c1 < CIN / C0; ++c1)
        for (int kh = 0; kh < KH; ++kh)
            for (int kw = 0; kw < KW; ++kw)
                for (int n1 = 0; n1 < N1; ++n1)
                    for (int n0 = 0; n0 < C0; ++n0)
                        for (int k0 = 0; k0 < C0; ++k0) {
                            const int k1 = (c1 * KH + kh) * KW + kw;
                            w[((k1 * N1 + n1) * C0 + n0) * C0 + k0] = (_Float16)wf[n1 * C0 + n0][c1 * C0 + k0][kh][kw];
                        }
    (void)K1;
    AscendC::SetKernelMode(KernelMode::MIX_MODE);
    ICPU_RUN_KF(conv_relu_custom, BATCH, (uint8_t*)x, (uint8_t*)w, (uint8_t*)y);
    double worst = 0;
    for (int n = 0; n < BATCH; ++n)
        for (int co = 0; co < COUT; ++co)
            for (int oh = 0; oh < H; ++oh)
                for (int ow = 0; ow < W; ++ow) {
                    float acc = 0;
                    for (int ci = 0; ci < CIN; ++ci)
                        for (int kh = 0; kh < KH; ++kh)
                            for (int kw = 0; kw < KW; ++kw) {
                                const int ih = oh - 1 + kh, iw = ow - 1 + kw;
                                if (ih < 0 || iw < 0 || ih >= H || iw >= W) continue;
                                acc += (float)x[(((n * (CIN / C0) + ci / C0) * H + ih) * W + iw) * C0 + ci % C0] * wf[co][ci][kh][kw];
                            }
                    const float want = acc > 0 ? acc : 0;
                    const float got = (float)y[(((n * N1 + co / C0) * H + oh) * W + ow) * C0 + co % C0];
                    worst = std::max(worst, (double)std::fabs(got - want) / (1.0 + std::fabs(want)));
                }
    std::printf("conv_relu_custom: worst error %.3g (relative to 1 + |y|)\n", worst);
    tessera::aicore::print_report(stdout);
    AscendC::GmFree(x);
    AscendC::GmFree(w);
    AscendC::GmFree(y);
    return worst < 1e-2 ? 0 : 1;
}
