// Sums of rows of floats, one row per block: the reductions within repeats (WholeReduceSum,
// BlockReduceSum), the mask register in counter mode (SetMaskCount, SetVectorMask, isSetMask =
// false with MASK_PLACEHOLDER) and TILING_KEY_IS choosing the strategy the host's key names.
#include "kernel_operator.h"
#include "row_sum_tiling.h"

namespace {
constexpr uint32_t kFloatsPerRepeat = 64;
constexpr uint32_t kFloatsPerBlock = 8;
}  // namespace

class RowSum {
 public:
  __aicore__ inline void Init(GM_ADDR rows, GM_ADDR sums, uint32_t rowLength) {
    n_ = rowLength;
    rowGm_.SetGlobalBuffer((__gm__ float*)rows + static_cast<int64_t>(n_) * AscendC::GetBlockIdx(),
                           n_);
    sumGm_.SetGlobalBuffer((__gm__ float*)sums + 8 * AscendC::GetBlockIdx(), 8);
    pipe_.InitBuffer(in_, 1, n_ * sizeof(float));
    pipe_.InitBuffer(out_, 1, 8 * sizeof(float));
    pipe_.InitBuffer(partial_, n_ * sizeof(float));
  }
  template <uint32_t Key>
  __aicore__ inline void Process() {
    AscendC::LocalTensor<float> row = in_.AllocTensor<float>();
    AscendC::DataCopy(row, rowGm_, n_);
    in_.EnQue(row);
    row = in_.DeQue<float>();
    AscendC::LocalTensor<float> sum = out_.AllocTensor<float>();
    AscendC::Duplicate(sum, 0.0f, 8);
    AscendC::LocalTensor<float> partial = partial_.Get<float>();
    if constexpr (Key == kRowSumOneRepeat) {
      AscendC::WholeReduceSum<float>(sum, row, static_cast<int32_t>(n_), 1, 1, 1, 8);
    } else {
      // Counter mode: each instruction takes the register's count of elements.
      AscendC::SetMaskCount();
      AscendC::SetVectorMask<float>(0, n_);
      uint32_t partials = 0;
      if constexpr (Key == kRowSumBlocks) {
        AscendC::BlockReduceSum<float, false>(partial, row, 1, AscendC::MASK_PLACEHOLDER, 1, 1, 8);
        partials = (n_ + kFloatsPerBlock - 1) / kFloatsPerBlock;
      } else {
        AscendC::WholeReduceSum<float, false>(partial, row, AscendC::MASK_PLACEHOLDER, 1, 1, 1, 8);
        partials = (n_ + kFloatsPerRepeat - 1) / kFloatsPerRepeat;
      }
      AscendC::PipeBarrier<PIPE_V>();
      AscendC::SetVectorMask<float>(0, partials);
      AscendC::WholeReduceSum<float, false>(sum, partial, AscendC::MASK_PLACEHOLDER, 1, 1, 1, 8);
      AscendC::SetMaskNorm();
      AscendC::ResetMask();
    }
    out_.EnQue(sum);
    in_.FreeTensor(row);
    sum = out_.DeQue<float>();
    AscendC::DataCopy(sumGm_, sum, 8);
    out_.FreeTensor(sum);
  }

 private:
  AscendC::TPipe pipe_;
  AscendC::TQue<AscendC::QuePosition::VECIN, 1> in_;
  AscendC::TQue<AscendC::QuePosition::VECOUT, 1> out_;
  AscendC::TBuf<AscendC::QuePosition::VECCALC> partial_;
  AscendC::GlobalTensor<float> rowGm_, sumGm_;
  uint32_t n_ = 0;
};

extern "C" __global__ __aicore__ void row_sum_custom(GM_ADDR rows, GM_ADDR sums, GM_ADDR workspace,
                                                     GM_ADDR tiling) {
  GET_TILING_DATA(tilingData, tiling);
  RowSum op;
  op.Init(rows, sums, tilingData.rowLength);
  if (TILING_KEY_IS(kRowSumOneRepeat)) {
    op.Process<kRowSumOneRepeat>();
  } else if (TILING_KEY_IS(kRowSumBlocks)) {
    op.Process<kRowSumBlocks>();
  } else if (TILING_KEY_IS(kRowSumTwoPasses)) {
    op.Process<kRowSumTwoPasses>();
  }
}
