// C = A x B on the Cube, in Ascend C. A (M x K) and B (K x N) are fp16 in GM, row-major (ND).
// Each block takes 32 rows of A: MTE2 moves them to L1 as 16 x 16 fractals (zZ), MTE1 moves
// them to L0A; B goes to L1 the same way and to L0B transposed per fractal (nZ); Mmad
// accumulates over two halves of K in L0C (f32); CO1 -> CO2 converts to fp16 in UB; MTE3
// writes the rows of each fractal back as ND. Queues order every hand-over.
#include "kernel_operator.h"

using namespace AscendC;

constexpr int32_t M = 128, K = 128, N = 64;
constexpr int32_t BLOCKS = 4, BM = M / BLOCKS;
constexpr int32_t F = 16;  // fractal side

class KernelMatmul {
public:
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c)
    {
        aGm.SetGlobalBuffer((__gm__ half*)a + BM * K * GetBlockIdx(), BM * K);
        bGm.SetGlobalBuffer((__gm__ half*)b, K * N);
        cGm.SetGlobalBuffer((__gm__ half*)c + BM * N * GetBlockIdx(), BM * N);
        pipe.InitBuffer(inQueueA1, 1, BM * K * sizeof(half));
        pipe.InitBuffer(inQueueB1, 1, K * N * sizeof(half));
        pipe.InitBuffer(inQueueA2, 2, BM * K / 2 * sizeof(half));
        pipe.InitBuffer(inQueueB2, 2, K / 2 * N * sizeof(half));
        pipe.InitBuffer(outQueueCO1, 1, BM * N * sizeof(float));
        pipe.InitBuffer(outQueueCO2, 1, BM * N * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        CopyND2NZ();
        LocalTensor<float> c1 = outQueueCO1.AllocTensor<float>();
        for (int32_t half_k = 0; half_k < 2; ++half_k) {
            SplitA(half_k);
            SplitB(half_k);
            Compute(c1, half_k);
        }
        outQueueCO1.EnQue(c1);
        inQueueA1.FreeTensor(a1Local);
        inQueueB1.FreeTensor(b1Local);
        CopyOut();
    }

private:
    // ND rows -> 16 x 16 fractals in L1, fractal (row block, column block) row-major.
    __aicore__ inline void CopyND2NZ()
    {
        a1Local = inQueueA1.AllocTensor<half>();
        b1Local = inQueueB1.AllocTensor<half>();
        for (int32_t r = 0; r < BM / F; ++r)
            for (int32_t k = 0; k < K / F; ++k)
                DataCopy(a1Local[(r * (K / F) + k) * F * F], aGm[r * F * K + k * F],
                         DataCopyParams{F, 1, K / F - 1, 0});
        for (int32_t k = 0; k < K / F; ++k)
            for (int32_t n = 0; n < N / F; ++n)
                DataCopy(b1Local[(k * (N / F) + n) * F * F], bGm[k * F * N + n * F],
                         DataCopyParams{F, 1, N / F - 1, 0});
        inQueueA1.EnQue(a1Local);
        inQueueB1.EnQue(b1Local);
        a1Local = inQueueA1.DeQue<half>();
        b1Local = inQueueB1.DeQue<half>();
    }
    // Half of K of A: for each row block, K/2/16 consecutive fractals.
    __aicore__ inline void SplitA(int32_t half_k)
    {
        LocalTensor<half> a2 = inQueueA2.AllocTensor<half>();
        const int32_t kf = K / F, kh = kf / 2;
        for (int32_t r = 0; r < BM / F; ++r)
            LoadData(a2[r * kh * F * F], a1Local,
                     LoadData2dParams{static_cast<uint16_t>(r * kf + half_k * kh), static_cast<uint8_t>(kh), 1, 0, 0, false, 0});
        inQueueA2.EnQue(a2);
    }
    // Half of K of B, each fractal transposed (nZ).
    __aicore__ inline void SplitB(int32_t half_k)
    {
        LocalTensor<half> b2 = inQueueB2.AllocTensor<half>();
        const int32_t rows = K / F / 2;
        LoadData(b2, b1Local,
                 LoadData2dParams{static_cast<uint16_t>(half_k * rows * (N / F)), static_cast<uint8_t>(rows * (N / F)), 1, 0, 0, true, 0});
        inQueueB2.EnQue(b2);
    }
    __aicore__ inline void Compute(LocalTensor<float>& c1, int32_t half_k)
    {
        LocalTensor<half> a2 = inQueueA2.DeQue<half>();
        LocalTensor<half> b2 = inQueueB2.DeQue<half>();
        MmadParams p;
        p.m = BM;
        p.n = N;
        p.k = K / 2;
        p.cmatrixInitVal = half_k == 0;
        Mmad(c1, a2, b2, p);
        inQueueA2.FreeTensor(a2);
        inQueueB2.FreeTensor(b2);
    }
    __aicore__ inline void CopyOut()
    {
        LocalTensor<float> c1 = outQueueCO1.DeQue<float>();
        LocalTensor<half> c2 = outQueueCO2.AllocTensor<half>();
        DataCopy(c2, c1, DataCopyParams{1, BM * N / (F * F), 0, 0},
                 DataCopyEnhancedParams{BlockMode::BLOCK_MODE_MATRIX});
        outQueueCO2.EnQue(c2);
        outQueueCO1.FreeTensor(c1);
        c2 = outQueueCO2.DeQue<half>();
        // L0C order is nZ: fractal (column block n, row block r); its 16 rows go to ND rows.
        for (int32_t n = 0; n < N / F; ++n)
            for (int32_t r = 0; r < BM / F; ++r)
                DataCopy(cGm[r * F * N + n * F], c2[(n * (BM / F) + r) * F * F],
                         DataCopyParams{F, 1, 0, N / F - 1});
        outQueueCO2.FreeTensor(c2);
    }

    TPipe pipe;
    TQue<QuePosition::A1, 1> inQueueA1;
    TQue<QuePosition::B1, 1> inQueueB1;
    TQue<QuePosition::A2, 2> inQueueA2;
    TQue<QuePosition::B2, 2> inQueueB2;
    TQue<QuePosition::CO1, 1> outQueueCO1;
    TQue<QuePosition::CO2, 1> outQueueCO2;
    GlobalTensor<half> aGm, bGm, cGm;
    LocalTensor<half> a1Local, b1Local;
};

extern "C" __global__ __aicore__ void matmul_custom(GM_ADDR a, GM_ADDR b, GM_ADDR c)
{
    KernelMatmul op;
    op.Init(a, b, c);
    op.Process();
}
