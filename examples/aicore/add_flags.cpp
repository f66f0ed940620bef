// The vector add written with explicit synchronisation instead of queues: ping-pong buffers
// from a TBuf, and SetFlag/WaitFlag between MTE2, V and MTE3 for every hand-over, as spec 003
// "Pipes" describes set_flag/wait_flag. add_missing_flag drops the MTE2 -> V hand-over, so the
// Vector unit may read x and y before MTE2 has written them: the simulator reports the race.
#include "kernel_operator.h"

using namespace AscendC;

namespace {

constexpr int32_t TOTAL_LENGTH = 8 * 2048;
constexpr int32_t USE_CORE_NUM = 8;
constexpr int32_t BLOCK_LENGTH = TOTAL_LENGTH / USE_CORE_NUM;
constexpr int32_t TILE_LENGTH = 128;
constexpr int32_t TILE_NUM = BLOCK_LENGTH / TILE_LENGTH;

// TILE_NUM tiles per block; add_missing_flag runs only the first two, the ones that show the
// race (with more, V runs so far ahead that it also sets its flags back to MTE2 twice before
// MTE2 waits, which the simulator reports as a lost signal first).
template <bool MTE2ToV, int32_t Tiles>
void add_with_flags(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    TPipe pipe;
    TBuf<QuePosition::VECCALC> buf;
    // Two sets (ping, pong) of x, y and z tiles.
    pipe.InitBuffer(buf, 2 * 3 * TILE_LENGTH * sizeof(half));
    LocalTensor<half> all = buf.Get<half>();
    GlobalTensor<half> xGm, yGm, zGm;
    xGm.SetGlobalBuffer((__gm__ half*)x + BLOCK_LENGTH * GetBlockIdx(), BLOCK_LENGTH);
    yGm.SetGlobalBuffer((__gm__ half*)y + BLOCK_LENGTH * GetBlockIdx(), BLOCK_LENGTH);
    zGm.SetGlobalBuffer((__gm__ half*)z + BLOCK_LENGTH * GetBlockIdx(), BLOCK_LENGTH);
    for (int32_t i = 0; i < Tiles; ++i) {
        const int32_t ping = i % 2;
        LocalTensor<half> xLocal = all[(ping * 3 + 0) * TILE_LENGTH];
        LocalTensor<half> yLocal = all[(ping * 3 + 1) * TILE_LENGTH];
        LocalTensor<half> zLocal = all[(ping * 3 + 2) * TILE_LENGTH];
        if (i >= 2) WaitFlag<HardEvent::V_MTE2>(ping);  // V is done reading this set's x, y
        DataCopy(xLocal, xGm[i * TILE_LENGTH], TILE_LENGTH);
        DataCopy(yLocal, yGm[i * TILE_LENGTH], TILE_LENGTH);
        if (MTE2ToV) SetFlag<HardEvent::MTE2_V>(ping);
        if (MTE2ToV) WaitFlag<HardEvent::MTE2_V>(ping);
        if (i >= 2) WaitFlag<HardEvent::MTE3_V>(ping);  // MTE3 is done reading this set's z
        Add(zLocal, xLocal, yLocal, TILE_LENGTH);
        SetFlag<HardEvent::V_MTE2>(ping);
        SetFlag<HardEvent::V_MTE3>(ping);
        WaitFlag<HardEvent::V_MTE3>(ping);
        DataCopy(zGm[i * TILE_LENGTH], zLocal, TILE_LENGTH);
        SetFlag<HardEvent::MTE3_V>(ping);
    }
    // Consume the hand-overs of the last two tiles.
    for (int32_t ping = 0; ping < 2; ++ping) {
        WaitFlag<HardEvent::V_MTE2>(ping);
        WaitFlag<HardEvent::MTE3_V>(ping);
    }
}

}  // namespace

extern "C" __global__ __aicore__ void add_flags(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    add_with_flags<true, TILE_NUM>(x, y, z);
}

extern "C" __global__ __aicore__ void add_missing_flag(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    add_with_flags<false, 2>(x, y, z);
}
