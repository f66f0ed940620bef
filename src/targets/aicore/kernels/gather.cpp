// ONNX Gather and GatherElements in Ascend C: rows of the data picked by indices the scalar unit
// reads and checks, moved by the MTEs (DataCopyPad with an address from the index), or for
// short rows and single elements gathered from a slab of the data in UB by the Vector unit's
// Gather.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

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

// Gather: out[a][j][b] = data[a][indices[j]][b]. GatherElements (elements): indices hold one
// index per output element, out[a][j][b] = data[a][indices[a][j][b]][b]. GatherND (tuple: the
// extents of the indexed axes, whose product is `axis`): indices hold a tuple per output row,
// out[a][j][b] = data[a][the row the tuple indices[a][j] names][b].
struct GatherShape {
  int64_t outer = 1, axis = 1, inner = 1, k = 1;
  bool elements = false;
  std::vector<int64_t> tuple;
  int64_t index_count() const {
    return elements ? outer * k * inner
                    : !tuple.empty() ? outer * k * static_cast<int64_t>(tuple.size()) : k;
  }
  const char* op() const {
    return elements ? "GatherElements" : tuple.empty() ? "Gather" : "GatherND";
  }
};

bool slab_fits(const GatherShape& s) {
  return s.axis * s.inner * 4 <= kSlabBytes;
}

// Whether to gather from a slab in UB with the Vector unit (every GatherElements; Gather rows
// under one 32-byte block, where one MTE transfer per row would cost more).
bool slab_path(const GatherShape& s) {
  return slab_fits(s) && (s.elements || s.inner * 4 < 32);
}

// Output rows [r0, r1) of this block, row r = (a, j).
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
  gidx.SetGlobalBuffer((__gm__ Index*)indices, static_cast<uint64_t>(s.index_count()));
  const int32_t ichunk = static_cast<int32_t>(std::min<int64_t>(s.index_count(), kIndexChunk));
  pipe.InitBuffer(ibuf, static_cast<uint32_t>(ichunk * sizeof(Index)) + 32);
  LocalTensor<Index> idx = ibuf.Get<Index>();

  // Indices element j, read by the scalar unit from the chunk of indices staged in UB, checked
  // against an axis of `extent` (negatives count from its end); a new chunk waits for the scalar
  // reads of the last.
  int64_t staged = -1;
  const auto checked = [&](int64_t j, int64_t extent) -> int64_t {
    const int64_t first = j / ichunk * ichunk;
    if (first != staged) {
      if (staged >= 0) {
        SetFlag<HardEvent::S_MTE2>(EVENT_ID1);
        WaitFlag<HardEvent::S_MTE2>(EVENT_ID1);
      }
      const auto n = static_cast<uint32_t>(std::min<int64_t>(ichunk, s.index_count() - first));
      DataCopyPad(idx, gidx[static_cast<uint64_t>(first)],
                  DataCopyExtParams{1, n * static_cast<uint32_t>(sizeof(Index)), 0, 0, 0},
                  DataCopyPadExtParams<Index>{});
      SetFlag<HardEvent::MTE2_S>(EVENT_ID1);
      WaitFlag<HardEvent::MTE2_S>(EVENT_ID1);
      staged = first;
    }
    const auto v = static_cast<int64_t>(idx.GetValue(static_cast<uint32_t>(j - first)));
    if (v < -extent || v >= extent)
      current_core().fault_at(
          s.op(), fmt::format("index {} (indices element {}) is outside [{}, {}] for an axis of "
                              "{} (ONNX {}); give indices inside the axis",
                              v, j, -extent, extent - 1, extent, s.op()));
    return v < 0 ? v + extent : v;
  };
  // The data row along the axis that output row r (= a * k + j) reads; for GatherElements the
  // row of output element r.
  const auto index = [&](int64_t r) -> int64_t {
    if (s.tuple.empty()) return checked(s.elements ? r : r % s.k, s.axis);
    const auto m = static_cast<int64_t>(s.tuple.size());
    int64_t row = 0;
    for (int64_t d = 0; d < m; ++d) {
      const int64_t extent = s.tuple[static_cast<std::size_t>(d)];
      row = row * extent + checked(r * m + d, extent);
    }
    return row;
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
      const int64_t a = r / s.k, src_row = a * s.axis + index(r);
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
  // From a slab: the outer slice data[a] in UB, the byte offsets of a chunk of output
  // elements written by the scalar unit, one Gather on the Vector unit per chunk.
  const auto slab_bytes = static_cast<uint32_t>(s.axis * s.inner * 4);
  pipe.InitBuffer(slab, slab_bytes);
  pipe.InitBuffer(offsets, static_cast<uint32_t>(kChunk) * 4);
  pipe.InitBuffer(qout, 2, static_cast<uint32_t>(kChunk) * 4 + 32);
  LocalTensor<float> src = slab.Get<float>();
  LocalTensor<uint32_t> off = offsets.Get<uint32_t>();
  const int64_t slice = s.k * s.inner;  // output elements per outer index
  int64_t loaded = -1;
  bool gathered = false;  // a Gather read the slab and offsets since the last wait
  for (int64_t e = r0 * s.inner; e < r1 * s.inner;) {
    const int64_t a = e / slice;
    const int64_t n = std::min({int64_t{kChunk}, r1 * s.inner - e, (a + 1) * slice - e});
    if (gathered) {  // the last Gather has read the offsets before they change
      SetFlag<HardEvent::V_S>(EVENT_ID2);
      WaitFlag<HardEvent::V_S>(EVENT_ID2);
    }
    if (a != loaded) {
      if (gathered) {  // and the slab
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
      const int64_t el = e + i, b = el % s.inner;
      const int64_t row = index(s.elements ? el : el / s.inner);
      off.SetValue(static_cast<uint32_t>(i), static_cast<uint32_t>((row * s.inner + b) * 4));
    }
    SetFlag<HardEvent::S_V>(EVENT_ID2);
    WaitFlag<HardEvent::S_V>(EVENT_ID2);
    const auto count = static_cast<uint32_t>(n);
    LocalTensor<float> o = qout.AllocTensor<float>();
    Gather(o, src, off, 0, count);
    gathered = true;
    qout.EnQue(o);
    o = qout.DeQue<float>();
    DataCopyPad(gout[static_cast<uint64_t>(e)], o, DataCopyExtParams{1, count * 4, 0, 0, 0});
    qout.FreeTensor(o);
    e += n;
  }
}

profile::KernelRecord run_gather(runtime::Device& device, const float* data, const void* indices,
                                 unsigned index_bytes, float* out, const GatherShape& s,
                                 const char* name) {
  if (s.outer <= 0 || s.axis <= 0 || s.inner <= 0 || s.k <= 0 ||
      std::any_of(s.tuple.begin(), s.tuple.end(), [](int64_t d) { return d <= 0; }))
    throw_user_error(
        "aicore {}: data of {} x {} x {} elements and {} indices along the axis; every extent "
        "must be positive (an empty gather moves nothing)",
        name, s.outer, s.axis, s.inner, s.k);
  if (index_bytes != 4 && index_bytes != 8)
    throw_user_error("aicore {}: indices of {} bytes; give int32 or int64 indices", name,
                     index_bytes);
  GmScope gm(device);
  GM_ADDR d = gm.lend(data, static_cast<std::size_t>(s.outer * s.axis * s.inner) * 4);
  GM_ADDR i = gm.lend(indices, static_cast<std::size_t>(s.index_count()) * index_bytes);
  GM_ADDR o = gm.lend(out, static_cast<std::size_t>(s.outer * s.k * s.inner) * 4);
  return launch(device, fmt::format("aicore:{}_b32", name), gm.blocks(s.outer * s.k), [&] {
    if (index_bytes == 4)
      gather_rows<int32_t>(d, i, o, s);
    else
      gather_rows<int64_t>(d, i, o, s);
  });
}

}  // namespace

profile::KernelRecord gather(runtime::Device& device, const float* data, std::int64_t outer,
                             std::int64_t axis, std::int64_t inner, const void* indices,
                             unsigned index_bytes, std::int64_t k, float* out) {
  return run_gather(device, data, indices, index_bytes, out, {outer, axis, inner, k, false},
                    "gather");
}

profile::KernelRecord gather_nd(runtime::Device& device, const float* data, std::int64_t outer,
                                std::span<const std::int64_t> dims, std::int64_t inner,
                                const void* indices, unsigned index_bytes, std::int64_t k,
                                float* out) {
  if (dims.empty())
    throw_user_error("aicore gather_nd: no indexed axes; give indices whose last dim is 1 or more");
  GatherShape s{outer, 1, inner, k, false, {dims.begin(), dims.end()}};
  for (const std::int64_t d : dims) s.axis *= d;
  return run_gather(device, data, indices, index_bytes, out, s, "gather_nd");
}

std::optional<std::string> gather_elements_unsupported(std::int64_t axis, std::int64_t inner) {
  if (slab_fits({1, axis, inner, 1, true})) return std::nullopt;
  return fmt::format("an outer slice of {} B (the kernel gathers from one of up to {} KiB in UB)",
                     axis * inner * 4, kSlabBytes >> 10);
}

profile::KernelRecord gather_elements(runtime::Device& device, const float* data,
                                      std::int64_t outer, std::int64_t axis, std::int64_t inner,
                                      const void* indices, unsigned index_bytes, std::int64_t k,
                                      float* out) {
  const GatherShape s{outer, axis, inner, k, true};
  if (const auto why = gather_elements_unsupported(axis, inner))
    throw_user_error("aicore gather_elements: {}; run it on the reference backend", *why);
  return run_gather(device, data, indices, index_bytes, out, s, "gather_elements");
}

}  // namespace tessera::aicore::kernels
