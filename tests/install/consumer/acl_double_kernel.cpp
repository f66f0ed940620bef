// An Ascend C kernel of the kernel-launch path: doubles floats, one 256-float slice per block,
// with the <<<>>> wrapper Ascend C projects keep next to it.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void acl_double(GM_ADDR x, GM_ADDR y) {
  AscendC::TPipe pipe;
  AscendC::TBuf<AscendC::QuePosition::VECCALC> buf;
  pipe.InitBuffer(buf, 1024);
  AscendC::GlobalTensor<float> xGm, yGm;
  xGm.SetGlobalBuffer((__gm__ float*)x + 256 * AscendC::GetBlockIdx(), 256);
  yGm.SetGlobalBuffer((__gm__ float*)y + 256 * AscendC::GetBlockIdx(), 256);
  AscendC::LocalTensor<float> t = buf.Get<float>();
  AscendC::DataCopy(t, xGm, 256);
  AscendC::PipeBarrier<PIPE_ALL>();
  AscendC::Muls(t, t, 2.0f, 256);
  AscendC::PipeBarrier<PIPE_ALL>();
  AscendC::DataCopy(yGm, t, 256);
}

#ifndef ASCENDC_CPU_DEBUG
void acl_double_do(uint32_t blockDim, void* stream, uint8_t* x, uint8_t* y) {
  acl_double<<<blockDim, nullptr, stream>>>(x, y);
}
#endif
