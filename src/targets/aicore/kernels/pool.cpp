#include "kernel_operator.h"
#include "tessera/targets/aicore/kernels/ops.h"

namespace tessera::aicore::kernels {
namespace {

using namespace AscendC;

// The mean of each of `planes` rows of `size` floats: MTE2 brings a row to UB, the Vector unit
// reduces it in f32 and scales it, MTE3 writes the one value. Rows are dealt to the blocks.
void plane_mean(GM_ADDR x, GM_ADDR y, int32_t planes, int32_t size) {
  const uint32_t bytes = static_cast<uint32_t>(size) * 4;
  TPipe pipe;
  TQue<QuePosition::VECIN, 2> qin;
  TQue<QuePosition::VECOUT, 2> qout;
  TBuf<QuePosition::VECCALC> work;
  pipe.InitBuffer(qin, 2, bytes);
  pipe.InitBuffer(qout, 2, 32);
  pipe.InitBuffer(work, bytes);
  GlobalTensor<float> gx, gy;
  gx.SetGlobalBuffer((__gm__ float*)x, static_cast<uint64_t>(planes) * size);
  gy.SetGlobalBuffer((__gm__ float*)y, static_cast<uint64_t>(planes));
  for (int32_t p = static_cast<int32_t>(GetBlockIdx()); p < planes;
       p += static_cast<int32_t>(GetBlockNum())) {
    LocalTensor<float> in = qin.AllocTensor<float>();
    DataCopyPad(in, gx[static_cast<uint64_t>(p) * size], DataCopyExtParams{1, bytes, 0, 0, 0},
                DataCopyPadExtParams<float>{});
    qin.EnQue(in);
    in = qin.DeQue<float>();
    LocalTensor<float> out = qout.AllocTensor<float>();
    ReduceSum(out, in, work.Get<float>(), size);
    Muls(out, out, 1.0f / static_cast<float>(size), 1);
    qout.EnQue(out);
    qin.FreeTensor(in);
    out = qout.DeQue<float>();
    DataCopyPad(gy[p], out, DataCopyExtParams{1, 4, 0, 0, 0});
    qout.FreeTensor(out);
  }
}

}  // namespace

profile::KernelRecord global_average_pool(runtime::Device& device, const float* x, float* y,
                                          std::int32_t planes, std::int32_t size) {
  if (planes <= 0 || size <= 0)
    throw_user_error("aicore global_average_pool: {} planes of {} elements; pass at least 1",
                     planes, size);
  if (static_cast<std::int64_t>(size) * 4 * 3 > 240 * 1024)
    throw_user_error(
        "aicore global_average_pool: planes of {} floats do not fit the Unified Buffer three "
        "times; pool smaller planes",
        size);
  auto* px = const_cast<float*>(x);
  gm_register(px, static_cast<std::size_t>(planes) * size * 4);
  gm_register(y, static_cast<std::size_t>(planes) * 4);
  struct Unregister {
    void *a, *b;
    ~Unregister() {
      gm_unregister(a);
      gm_unregister(b);
    }
  } unregister{px, y};
  const auto blocks =
      static_cast<std::uint32_t>(std::min<std::int64_t>(planes, device.spec().core_count.as_int()));
  return launch(device, "aicore:global_average_pool_f32", blocks, [&] {
    plane_mean(reinterpret_cast<GM_ADDR>(px), reinterpret_cast<GM_ADDR>(y), planes, size);
  });
}

}  // namespace tessera::aicore::kernels
