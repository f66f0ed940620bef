// Y = leaky_relu(X W + b) with the high-level Matmul: each block takes the singleCoreM x
// singleCoreN piece of Y the host's multi-core tiling gives it; every baseM x baseN block of it
// comes out of the Cube into a UB queue tensor, the Vector unit applies the leaky ReLU, and MTE3
// writes its rows to Y. X and W are half, b and Y float.
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "matmul_bias_relu_tiling.h"

using namespace AscendC;

using HalfGm = MatmulType<TPosition::GM, CubeFormat::ND, half>;
using FloatGm = MatmulType<TPosition::GM, CubeFormat::ND, float>;

class MatmulBiasRelu {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR b, GM_ADDR y,
                                const optiling::MatmulBiasReluTiling& t)
    {
        tiling = t.cube;
        slope = t.slope;
        const int32_t mBlocks = (tiling.M + tiling.singleCoreM - 1) / tiling.singleCoreM;
        mIndex = GetBlockIdx() % mBlocks;
        nIndex = GetBlockIdx() / mBlocks;
        rows = std::min(tiling.singleCoreM, tiling.M - mIndex * tiling.singleCoreM);
        cols = std::min(tiling.singleCoreN, tiling.N - nIndex * tiling.singleCoreN);
        xGm.SetGlobalBuffer((__gm__ half*)x + mIndex * tiling.singleCoreM * tiling.Ka);
        wGm.SetGlobalBuffer((__gm__ half*)w + nIndex * tiling.singleCoreN);
        bGm.SetGlobalBuffer((__gm__ float*)b + nIndex * tiling.singleCoreN);
        yGm.SetGlobalBuffer((__gm__ float*)y + mIndex * tiling.singleCoreM * tiling.N +
                            nIndex * tiling.singleCoreN);
        pipe.InitBuffer(outQueue, 2, tiling.baseM * tiling.baseN * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
        mm.SetTensorA(xGm);
        mm.SetTensorB(wGm);
        mm.SetBias(bGm);
        mm.SetTail(rows, cols);
        // iterateOrder 0: blocks walk down M first, then across N.
        const int32_t mIter = (rows + tiling.baseM - 1) / tiling.baseM;
        for (int32_t i = 0; mm.Iterate(); ++i) {
            LocalTensor<float> block = outQueue.AllocTensor<float>();
            mm.GetTensorC(block, 0, true);
            const int32_t m0 = i % mIter * tiling.baseM, n0 = i / mIter * tiling.baseN;
            const int32_t r = std::min(tiling.baseM, rows - m0), c = std::min(tiling.baseN, cols - n0);
            LeakyRelu(block, block, slope, r * tiling.baseN);
            outQueue.EnQue(block);
            block = outQueue.DeQue<float>();
            // r rows of c floats; the block's rows are baseN apart, Y's N apart.
            DataCopy(yGm[m0 * tiling.N + n0], block,
                     DataCopyParams{static_cast<uint16_t>(r), static_cast<uint16_t>(c * 4 / 32),
                                    static_cast<uint16_t>((tiling.baseN - c) * 4 / 32),
                                    static_cast<uint16_t>((tiling.N - c) * 4 / 32)});
            outQueue.FreeTensor(block);
        }
        mm.End();
    }

private:
    TPipe pipe;
    TQue<TPosition::VECIN, 2> outQueue;
    Matmul<HalfGm, HalfGm, FloatGm, FloatGm> mm;
    TCubeTiling tiling;
    GlobalTensor<half> xGm, wGm;
    GlobalTensor<float> bGm, yGm;
    float slope = 0;
    int32_t mIndex = 0, nIndex = 0, rows = 0, cols = 0;
};

extern "C" __global__ __aicore__ void matmul_bias_relu_custom(GM_ADDR x, GM_ADDR w, GM_ADDR b,
                                                               GM_ADDR y, GM_ADDR workspace,
                                                               GM_ADDR tiling)
{
    SetSysWorkspace(workspace);
    GET_TILING_DATA(tilingData, tiling);
    MatmulBiasRelu op;
    op.Init(x, w, b, y, tilingData);
    op.Process();
}
