// Layout transforms in Ascend C: a strided copy of f32 tensors (Transpose, and the expansion of
// a broadcast operand) on the MTEs and the Vector unit.
#include <algorithm>
#include <array>
#include <vector>

#include "kernel_operator.h"
#include "tessera/targets/aicore/kernels/ops.h"

namespace tessera::aicore::kernels {
namespace {

using namespace AscendC;

constexpr int32_t kChunk = 2048;  // output elements per step (one 32-byte block each when strided)

// One output row (the fastest output axis, `len` elements, input stride `step`) at a time, rows
// dealt to the blocks. step 1: MTE2 brings the row, MTE3 writes it from the same buffer. step 0
// (broadcast): the scalar unit reads the element and Duplicate fills the row. Otherwise DataCopyPad
// brings one element per 32-byte block (a burst of 4 bytes every `step` elements) and Gather packs
// them.
void strided_rows(GM_ADDR in, uint64_t in_count, GM_ADDR out, int64_t rows, int32_t len,
                  int64_t step, std::array<int64_t, 4> outer_dims,
                  std::array<int64_t, 4> outer_strides) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 2> qin;
  TQue<QuePosition::VECOUT, 2> qout;
  TBuf<QuePosition::VECCALC> offsets;
  const int32_t chunk = std::min(len, kChunk);
  const bool strided = step != 0 && step != 1;
  pipe.InitBuffer(qin, 2, static_cast<uint32_t>(chunk) * (strided ? 32 : 4) + 32);
  pipe.InitBuffer(qout, 2, static_cast<uint32_t>(chunk) * 4 + 32);
  GlobalTensor<float> gin, gout;
  gin.SetGlobalBuffer((__gm__ float*)in, in_count);
  gout.SetGlobalBuffer((__gm__ float*)out, static_cast<uint64_t>(rows) * len);
  LocalTensor<uint32_t> off;
  if (strided) {  // byte offsets of the blocks' first elements: 0, 32, 64, ...
    pipe.InitBuffer(offsets, static_cast<uint32_t>(chunk) * 4);
    off = offsets.Get<uint32_t>();
    for (int32_t i = 0; i < chunk; ++i) off.SetValue(i, static_cast<uint32_t>(i) * 32);
    SetFlag<HardEvent::S_V>(EVENT_ID0);
    WaitFlag<HardEvent::S_V>(EVENT_ID0);
  }
  for (int64_t r = static_cast<int64_t>(GetBlockIdx()); r < rows;
       r += static_cast<int64_t>(GetBlockNum())) {
    int64_t base = 0, rest = r;
    for (int d = 0; d < 4; ++d) {
      base += (rest % outer_dims[d]) * outer_strides[d];
      rest /= outer_dims[d];
    }
    for (int32_t at = 0; at < len; at += chunk) {
      const int32_t n = std::min(chunk, len - at);
      const uint64_t src = static_cast<uint64_t>(base + at * step);
      const DataCopyExtParams row{1, static_cast<uint32_t>(n) * 4, 0, 0, 0};
      if (step == 1) {  // MTE2 in, MTE3 out of the same buffer: the bits move unchanged
        LocalTensor<float> i = qin.AllocTensor<float>();
        DataCopyPad(i, gin[src], row, DataCopyPadExtParams<float>{});
        qin.EnQue(i);
        i = qin.DeQue<float>();
        DataCopyPad(gout[static_cast<uint64_t>(r) * len + at], i, row);
        qin.FreeTensor(i);
        continue;
      }
      LocalTensor<float> o = qout.AllocTensor<float>();
      if (step == 0) {
        const float v = gin.GetValue(src);
        Duplicate(o, v, n);
      } else {
        LocalTensor<float> i = qin.AllocTensor<float>();
        DataCopyPad(i, gin[src],
                    DataCopyExtParams{static_cast<uint16_t>(n), 4,
                                      static_cast<uint32_t>((step - 1) * 4), 0, 0},
                    DataCopyPadExtParams<float>{});
        qin.EnQue(i);
        i = qin.DeQue<float>();
        Gather(o, i, off, 0, static_cast<uint32_t>(n));
        qin.FreeTensor(i);
      }
      qout.EnQue(o);
      o = qout.DeQue<float>();
      DataCopyPad(gout[static_cast<uint64_t>(r) * len + at], o, row);
      qout.FreeTensor(o);
    }
  }
}

}  // namespace

profile::KernelRecord strided_copy(runtime::Device& device, const float* in, std::int64_t in_count,
                                   float* out, std::span<const std::int64_t> out_dims,
                                   std::span<const std::int64_t> in_strides) {
  if (out_dims.empty() || out_dims.size() > 5 || out_dims.size() != in_strides.size())
    throw_user_error("aicore strided_copy: {} output dims and {} strides; give 1 to 5 of each",
                     out_dims.size(), in_strides.size());
  std::int64_t count = 1, last = 0;
  for (std::size_t d = 0; d < out_dims.size(); ++d) {
    if (out_dims[d] <= 0 || in_strides[d] < 0)
      throw_user_error(
          "aicore strided_copy: dim {} is {} with stride {}; dims must be positive "
          "and strides not negative",
          d, out_dims[d], in_strides[d]);
    count *= out_dims[d];
    last += (out_dims[d] - 1) * in_strides[d];
  }
  if (last >= in_count)
    throw_user_error(
        "aicore strided_copy: the strides reach element {} of an input of {}; "
        "check the strides",
        last, in_count);
  if (out_dims[0] > 0xffff && in_strides[0] > 1)
    throw_user_error("aicore strided_copy: {} elements on the fastest axis", out_dims[0]);
  std::array<std::int64_t, 4> outer_dims{1, 1, 1, 1}, outer_strides{0, 0, 0, 0};
  for (std::size_t d = 1; d < out_dims.size(); ++d) {
    outer_dims[d - 1] = out_dims[d];
    outer_strides[d - 1] = in_strides[d];
  }
  const std::int64_t len = out_dims[0], rows = count / len;
  auto* pin = const_cast<float*>(in);
  gm_register(pin, static_cast<std::size_t>(in_count) * 4);
  if (out != pin) gm_register(out, static_cast<std::size_t>(count) * 4);
  struct Unregister {
    void *a, *b;
    ~Unregister() {
      gm_unregister(a);
      if (b != a) gm_unregister(b);
    }
  } unregister{pin, out};
  const auto blocks =
      static_cast<std::uint32_t>(std::min<std::int64_t>(rows, device.spec().core_count.as_int()));
  return launch(device, "aicore:strided_copy_f32", blocks, [&] {
    strided_rows(reinterpret_cast<GM_ADDR>(pin), static_cast<uint64_t>(in_count),
                 reinterpret_cast<GM_ADDR>(out), rows, static_cast<int32_t>(len), in_strides[0],
                 outer_dims, outer_strides);
  });
}

profile::KernelRecord transpose(runtime::Device& device, const float* in, float* out,
                                std::span<const std::int64_t> dims,
                                std::span<const std::int64_t> perm) {
  const std::size_t r = dims.size();
  if (r == 0 || r > 5 || perm.size() != r)
    throw_user_error("aicore transpose: rank {} with a permutation of {}; give 1 to 5 axes", r,
                     perm.size());
  std::vector<bool> seen(r, false);
  for (std::int64_t p : perm) {
    if (p < 0 || p >= static_cast<std::int64_t>(r) || seen[static_cast<std::size_t>(p)])
      throw_user_error("aicore transpose: perm is not a permutation of 0..{}", r - 1);
    seen[static_cast<std::size_t>(p)] = true;
  }
  // Axes here are outer first (ONNX order); strided_copy takes them fastest first.
  std::vector<std::int64_t> stride(r, 1);
  for (std::size_t d = r - 1; d > 0; --d) stride[d - 1] = stride[d] * dims[d];
  std::vector<std::int64_t> out_dims(r), in_strides(r);
  std::int64_t count = 1;
  for (std::size_t j = 0; j < r; ++j) {
    out_dims[r - 1 - j] = dims[static_cast<std::size_t>(perm[j])];
    in_strides[r - 1 - j] = stride[static_cast<std::size_t>(perm[j])];
    count *= dims[j];
  }
  return strided_copy(device, in, count, out, out_dims, in_strides);
}

}  // namespace tessera::aicore::kernels
