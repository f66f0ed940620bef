// ONNX Gather in Ascend C: rows of the data picked by indices the scalar unit reads and checks,
// moved by the MTEs (DataCopyPad with an address from the index), or for short rows gathered
// from a slab of the data in UB by the Vector unit's Gather.
#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "gm_scope.h"
#include "kernel_operator.h"
#include "tessera/targets/aicore/kernels/ops.h"

namespace tessera::aicore::kernels {
namespace {

using namespace AscendC;

constexpr int32_t kChunk = 2048;          // elements per transfer or Gather
constexpr int32_t kIndexChunk = 2048;     // indices staged in UB at a time
constexpr int64_t kSlabBytes = 64 << 10;  // an outer slice of the data gathered from in UB

struct GatherShape {
  int64_t outer = 1, axis = 1, inner = 1, k = 1;
};

// Whether rows are short enough that a slab in UB and the Vector unit's Gather beat one MTE
// transfer per row (a row under one 32-byte block).
bool slab_path(const GatherShape& s) {
  return s.inner * 4 < 32 && s.axis * s.inner * 4 <= kSlabBytes;
}

// Output rows [r0, r1) of this block: row r = (a, j) takes data[a][indices[j]][0..inner).
template <typename Index>
void gather_rows(GM_ADDR data, GM_ADDR indices, GM_ADDR out, const GatherShape& s) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 2> qin;
  TQue<QuePosition::VECOUT, 2> qout;
  TBuf<QuePosition::VECCALC> ibuf, slab, offsets;
  GlobalTensor<float> gdata, gout;
  GlobalTensor<Index> gidx;
  gdata.SetGlobalBuffer((__gm__ float*)data, static_cast<uint64_t>(s.outer * s.axis * s.inner));
  gout.SetGlobalBuffer((__gm__ float*)out, static_cast<uint64_t>(s.outer * s.k * s.inner));
  gidx.SetGlobalBuffer((__gm__ Index*)indices, static_cast<uint64_t>(s.k));
  const int32_t ichunk = static_cast<int32_t>(std::min<int64_t>(s.k, kIndexChunk));
  pipe.InitBuffer(ibuf, static_cast<uint32_t>(ichunk * sizeof(Index)) + 32);
  LocalTensor<Index> idx = ibuf.Get<Index>();

  // The index of output row j (in range, negatives from the end), read by the scalar unit from
  // the chunk of indices staged in UB; a new chunk waits for the scalar reads of the last.
  int64_t staged = -1;
  const auto index = [&](int64_t j) -> int64_t {
    const int64_t first = j / ichunk * ichunk;
    if (first != staged) {
      if (staged >= 0) {
        SetFlag<HardEvent::S_MTE2>(EVENT_ID1);
        WaitFlag<HardEvent::S_MTE2>(EVENT_ID1);
      }
      const auto n = static_cast<uint32_t>(std::min<int64_t>(ichunk, s.k - first));
      DataCopyPad(idx, gidx[static_cast<uint64_t>(first)],
                  DataCopyExtParams{1, n * static_cast<uint32_t>(sizeof(Index)), 0, 0, 0},
                  DataCopyPadExtParams<Index>{});
      SetFlag<HardEvent::MTE2_S>(EVENT_ID1);
      WaitFlag<HardEvent::MTE2_S>(EVENT_ID1);
      staged = first;
    }
    const auto v = static_cast<int64_t>(idx.GetValue(static_cast<uint32_t>(j - first)));
    if (v < -s.axis || v >= s.axis)
      current_core().fault_at(
          "Gather", fmt::format("index {} (indices element {}) is outside [{}, {}] for an axis of "
                                "{} (ONNX Gather); give indices inside the axis",
                                v, j, -s.axis, s.axis - 1, s.axis));
    return v < 0 ? v + s.axis : v;
  };

  const int64_t rows = s.outer * s.k;
  const int64_t per = (rows + GetBlockNum() - 1) / GetBlockNum();
  const int64_t r0 = std::min<int64_t>(rows, per * GetBlockIdx());
  const int64_t r1 = std::min<int64_t>(rows, r0 + per);
  if (!slab_path(s)) {
    // One row at a time: MTE2 brings data[a][index] to UB, MTE3 writes it out.
    const int32_t chunk = static_cast<int32_t>(std::min<int64_t>(s.inner, kChunk));
    pipe.InitBuffer(qin, 2, static_cast<uint32_t>(chunk) * 4 + 32);
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t a = r / s.k, src_row = a * s.axis + index(r % s.k);
      for (int64_t at = 0; at < s.inner; at += chunk) {
        const auto n = static_cast<uint32_t>(std::min<int64_t>(chunk, s.inner - at));
        const DataCopyExtParams row{1, n * 4, 0, 0, 0};
        LocalTensor<float> t = qin.AllocTensor<float>();
        DataCopyPad(t, gdata[static_cast<uint64_t>(src_row * s.inner + at)], row,
                    DataCopyPadExtParams<float>{});
        qin.EnQue(t);
        t = qin.DeQue<float>();
        DataCopyPad(gout[static_cast<uint64_t>(r * s.inner + at)], t, row);
        qin.FreeTensor(t);
      }
    }
    return;
  }
  // Short rows: the outer slice data[a] in UB, the byte offsets of the chunk's elements written
  // by the scalar unit, one Gather on the Vector unit per chunk.
  const int64_t rows_per_chunk = std::max<int64_t>(1, kChunk / s.inner);
  const auto slab_bytes = static_cast<uint32_t>(s.axis * s.inner * 4);
  pipe.InitBuffer(slab, slab_bytes);
  pipe.InitBuffer(offsets, static_cast<uint32_t>(rows_per_chunk * s.inner * 4));
  pipe.InitBuffer(qout, 2, static_cast<uint32_t>(rows_per_chunk * s.inner * 4) + 32);
  LocalTensor<float> src = slab.Get<float>();
  LocalTensor<uint32_t> off = offsets.Get<uint32_t>();
  int64_t loaded = -1;
  bool gathered = false;  // a Gather read the slab and offsets since the last wait
  for (int64_t r = r0; r < r1;) {
    const int64_t a = r / s.k;
    const int64_t n = std::min({rows_per_chunk, r1 - r, (a + 1) * s.k - r});
    if (gathered) {  // the last Gather has read the offsets (and the slab) before they change
      SetFlag<HardEvent::V_S>(EVENT_ID2);
      WaitFlag<HardEvent::V_S>(EVENT_ID2);
    }
    if (a != loaded) {
      if (gathered) {
        SetFlag<HardEvent::V_MTE2>(EVENT_ID2);
        WaitFlag<HardEvent::V_MTE2>(EVENT_ID2);
      }
      DataCopyPad(src, gdata[static_cast<uint64_t>(a * s.axis * s.inner)],
                  DataCopyExtParams{1, slab_bytes, 0, 0, 0}, DataCopyPadExtParams<float>{});
      SetFlag<HardEvent::MTE2_V>(EVENT_ID2);
      WaitFlag<HardEvent::MTE2_V>(EVENT_ID2);
      loaded = a;
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t row = index((r + i) % s.k);
      for (int64_t b = 0; b < s.inner; ++b)
        off.SetValue(static_cast<uint32_t>(i * s.inner + b),
                     static_cast<uint32_t>((row * s.inner + b) * 4));
    }
    SetFlag<HardEvent::S_V>(EVENT_ID2);
    WaitFlag<HardEvent::S_V>(EVENT_ID2);
    const auto count = static_cast<uint32_t>(n * s.inner);
    LocalTensor<float> o = qout.AllocTensor<float>();
    Gather(o, src, off, 0, count);
    gathered = true;
    qout.EnQue(o);
    o = qout.DeQue<float>();
    DataCopyPad(gout[static_cast<uint64_t>(r * s.inner)], o,
                DataCopyExtParams{1, count * 4, 0, 0, 0});
    qout.FreeTensor(o);
    r += n;
  }
}

}  // namespace

profile::KernelRecord gather(runtime::Device& device, const float* data, std::int64_t outer,
                             std::int64_t axis, std::int64_t inner, const void* indices,
                             unsigned index_bytes, std::int64_t k, float* out) {
  if (outer <= 0 || axis <= 0 || inner <= 0 || k <= 0)
    throw_user_error(
        "aicore gather: data of {} x {} x {} elements and {} indices; every extent must be "
        "positive (an empty Gather moves nothing)",
        outer, axis, inner, k);
  if (index_bytes != 4 && index_bytes != 8)
    throw_user_error("aicore gather: indices of {} bytes; give int32 or int64 indices",
                     index_bytes);
  const GatherShape s{outer, axis, inner, k};
  GmScope gm(device);
  GM_ADDR d = gm.lend(data, static_cast<std::size_t>(outer * axis * inner) * 4);
  GM_ADDR i = gm.lend(indices, static_cast<std::size_t>(k) * index_bytes);
  GM_ADDR o = gm.lend(out, static_cast<std::size_t>(outer * k * inner) * 4);
  return launch(device, "aicore:gather_b32", gm.blocks(outer * k), [&] {
    if (index_bytes == 4)
      gather_rows<int32_t>(d, i, o, s);
    else
      gather_rows<int64_t>(d, i, o, s);
  });
}

}  // namespace tessera::aicore::kernels
