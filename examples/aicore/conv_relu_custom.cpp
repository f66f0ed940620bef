// A fused 3x3 convolution + ReLU in Ascend C, as Ascend's stack lays it out: the feature map in
// 5HD (N, C1, H, W, C0) and the weights in fractal-Z. MTE2 brings both into L1; MTE1 turns the
// feature map into a patch matrix with Img2Col (LoadData 3D, padding included) in L0A and moves
// the weight fractals into L0B; the Cube multiplies into L0C; CO1 -> CO2 converts to fp16 in UB,
// where the Vector unit applies the ReLU; MTE3 writes the result, already 5HD, to GM.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t C0 = 16, CIN = 16, H = 8, W = 8, COUT = 32, KH = 3, KW = 3;
constexpr int32_t HO = H, WO = W;  // stride 1, padding 1
constexpr int32_t M = HO * WO, K = (CIN / C0) * KH * KW * C0, N = COUT;

class KernelConvRelu {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR y)
    {
        xGm.SetGlobalBuffer((__gm__ half*)x + GetBlockIdx() * CIN * H * W, CIN * H * W);
        wGm.SetGlobalBuffer((__gm__ half*)w, K * N);
        yGm.SetGlobalBuffer((__gm__ half*)y + GetBlockIdx() * COUT * M, COUT * M);
        pipe.InitBuffer(qA1, 1, CIN * H * W * sizeof(half));
        pipe.InitBuffer(qB1, 1, K * N * sizeof(half));
        pipe.InitBuffer(qA2, 1, M * K * sizeof(half));
        pipe.InitBuffer(qB2, 1, K * N * sizeof(half));
        pipe.InitBuffer(qCO1, 1, M * N * sizeof(float));
        pipe.InitBuffer(qCO2, 1, M * N * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        LocalTensor<half> a1 = qA1.AllocTensor<half>(), b1 = qB1.AllocTensor<half>();
        DataCopy(a1, xGm, CIN * H * W);
        DataCopy(b1, wGm, K * N);
        qA1.EnQue(a1);
        qB1.EnQue(b1);

        a1 = qA1.DeQue<half>();
        b1 = qB1.DeQue<half>();
        LocalTensor<half> a2 = qA2.AllocTensor<half>(), b2 = qB2.AllocTensor<half>();
        LoadData3DParamsV2<half> im;
        im.padList[0] = im.padList[1] = im.padList[2] = im.padList[3] = 1;
        im.l1H = H;
        im.l1W = W;
        im.channelSize = CIN;
        im.kExtension = K;
        im.mExtension = M;
        im.filterH = KH;
        im.filterW = KW;
        LoadData(a2, a1, im);
        LoadData(b2, b1, LoadData2dParams{0, K * N / (C0 * C0), 1, 0, 0, false, 0});
        qA2.EnQue(a2);
        qB2.EnQue(b2);
        qA1.FreeTensor(a1);
        qB1.FreeTensor(b1);

        a2 = qA2.DeQue<half>();
        b2 = qB2.DeQue<half>();
        LocalTensor<float> c1 = qCO1.AllocTensor<float>();
        MmadParams p;
        p.m = M;
        p.n = N;
        p.k = K;
        Mmad(c1, a2, b2, p);
        qCO1.EnQue(c1);
        qA2.FreeTensor(a2);
        qB2.FreeTensor(b2);

        c1 = qCO1.DeQue<float>();
        LocalTensor<half> c2 = qCO2.AllocTensor<half>();
        DataCopy(c2, c1, DataCopyParams{1, M * N / (C0 * C0), 0, 0},
                 DataCopyEnhancedParams{BlockMode::BLOCK_MODE_MATRIX});
        Relu(c2, c2, M * N);
        qCO2.EnQue(c2);
        qCO1.FreeTensor(c1);

        c2 = qCO2.DeQue<half>();
        DataCopy(yGm, c2, M * N);
        qCO2.FreeTensor(c2);
    }

private:
    TPipe pipe;
    TQue<QuePosition::A1, 1> qA1;
    TQue<QuePosition::B1, 1> qB1;
    TQue<QuePosition::A2, 1> qA2;
    TQue<QuePosition::B2, 1> qB2;
    TQue<QuePosition::CO1, 1> qCO1;
    TQue<QuePosition::CO2, 1> qCO2;
    GlobalTensor<half> xGm, wGm, yGm;
};

extern "C" __global__ __aicore__ void conv_relu_custom(GM_ADDR x, GM_ADDR w, GM_ADDR y)
{
    KernelConvRelu op;
    op.Init(x, w, y);
    op.Process();
}
