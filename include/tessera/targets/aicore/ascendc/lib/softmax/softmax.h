// Ascend C's SoftMax and SimpleSoftMax (CANN lib/softmax/softmax.h, simplesoftmax.h) for
// Tessera: row softmax of an [m, k] ND tensor in UB, with each row's max and sum broadcast to one
// 32-byte block of maxTensor / sumTensor (the CANN API reference, "SoftMax", "SimpleSoftMax").
// Every step is a Vector or Scalar instruction on the simulated core: per row, ReduceMax, the
// max to the scalar unit (V -> S flag) and back (S -> V), Duplicate into maxTensor, Adds of
// -max, Exp, ReduceSum the same way, and Muls by 1 / sum. What differs from CANN's vectorised
// implementation: docs/targets/aicore.md, "SoftMax".
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernel_operator.h"
#include "kernel_tiling/kernel_tiling.h"

namespace AscendC {

struct SoftMaxShapeInfo {
  std::uint32_t srcM = 0;     // rows (the product of the non-last axes)
  std::uint32_t srcK = 0;     // row length in UB, 32-byte aligned
  std::uint32_t oriSrcM = 0;  // rows before padding
  std::uint32_t oriSrcK = 0;  // elements of a row before padding: what the softmax covers
};

enum class SoftmaxMode { SOFTMAX_NORMAL = 0, SOFTMAX_OUTPUT_WITHOUT_BRC = 1 };
struct SoftmaxConfig {
  bool isCheckTiling = true;
  std::uint32_t oriSrcM = 0;
  std::uint32_t oriSrcK = 0;
  SoftmaxMode mode = SoftmaxMode::SOFTMAX_NORMAL;
};
inline constexpr SoftmaxConfig SOFTMAX_DEFAULT_CFG = {true, 0, 0, SoftmaxMode::SOFTMAX_NORMAL};

namespace detail {

// Bytes of temporary UB the row softmax uses: a reduction's result and its work block.
inline constexpr std::uint32_t kSoftmaxTmpBytes = 64;

// The rows of `src` through softmax into `dst`. With `given`, max and sum come from maxT/sumT
// (SimpleSoftMax); otherwise they are computed and, when maxT/sumT are set, written there.
template <typename T>
void softmax_rows(const char* what, const LocalTensor<T>& dst, const LocalTensor<T>* sumT,
                  const LocalTensor<T>* maxT, const LocalTensor<T>& src,
                  const LocalTensor<std::uint8_t>* shared, const SoftMaxTiling& tiling,
                  const SoftMaxShapeInfo& info, bool given) {
  static_assert(std::is_same_v<T, half> || std::is_same_v<T, float>,
                "SoftMax takes half or float tensors");
  Core& c = core();
  const std::uint32_t m = info.srcM ? info.srcM : tiling.srcM;
  const std::uint32_t k = info.srcK ? info.srcK : tiling.srcK;
  const std::uint32_t k0 = info.oriSrcK ? info.oriSrcK : k;
  constexpr std::uint32_t blk = 32 / sizeof(T);
  if (m == 0 || k == 0)
    tessera::throw_user_error(
        "{}: the shape is {} x {}; pass SoftMaxShapeInfo{{srcM, srcK, oriSrcM, "
        "oriSrcK}} or a tiling from SoftMaxTilingFunc",
        what, m, k);
  if (k % blk != 0 || k0 > k || k0 == 0)
    tessera::throw_user_error(
        "{}: srcK {} must be a multiple of {} elements (32-byte rows) and "
        "oriSrcK {} within 1..srcK; pad the rows",
        what, k, blk, k0);
  const std::uint64_t need = std::uint64_t(m) * k;
  if (src.GetSize() < need || dst.GetSize() < need ||
      (sumT && sumT->GetSize() < std::uint64_t(m) * blk) ||
      (maxT && maxT->GetSize() < std::uint64_t(m) * blk))
    tessera::throw_user_error(
        "{}: {} x {} rows need {} elements of src and dst and {} of sum and "
        "max (one 32-byte block a row); the tensors hold {}, {}, {}, {}",
        what, m, k, need, std::uint64_t(m) * blk, src.GetSize(), dst.GetSize(),
        sumT ? sumT->GetSize() : 0, maxT ? maxT->GetSize() : 0);
  TPipe* pipe = GetTPipePtr();
  if (pipe == nullptr)
    tessera::throw_user_error("{}: no TPipe in this kernel; the API takes its event ids from it",
                              what);
  // The temporary: the caller's, or UB taken for this call and given back at its end.
  LocalTensor<T> tmp;
  std::uint64_t own = ~std::uint64_t{0};
  if (shared) {
    if (std::uint64_t(shared->GetSize()) < kSoftmaxTmpBytes)
      tessera::throw_user_error(
          "{}: sharedTmpBuffer holds {} B; it needs {} B "
          "(GetSoftMaxMinTmpSize)",
          what, shared->GetSize(), kSoftmaxTmpBytes);
    tmp = shared->template ReinterpretCast<T>();
  } else {
    own = c.allocate(Buf::UB, kSoftmaxTmpBytes, what);
    tmp.ref_ = {Buf::UB, own, 0, 0};
    tmp.size_ = kSoftmaxTmpBytes / sizeof(T);
  }
  const LocalTensor<T> res = tmp, work = tmp[blk];
  const std::int32_t vs = pipe->AllocEventID(HardEvent::V_S);
  const std::int32_t sv = pipe->AllocEventID(HardEvent::S_V);
  // A value the Vector unit left in UB, read by the scalar unit.
  const auto to_scalar = [&](const LocalTensor<T>& t, std::uint32_t at) {
    SetFlag<HardEvent::V_S>(vs);
    WaitFlag<HardEvent::V_S>(vs);
    const T v = t.GetValue(at);
    SetFlag<HardEvent::S_V>(sv);
    WaitFlag<HardEvent::S_V>(sv);
    return v;
  };
  const auto n = static_cast<std::int32_t>(k0);
  for (std::uint32_t r = 0; r < m; ++r) {
    const LocalTensor<T> in = src[r * k], out = dst[r * k];
    T mx, sum;
    if (given) {
      mx = to_scalar(*maxT, r * blk);
      sum = to_scalar(*sumT, r * blk);
    } else {
      ReduceMax(res, in, work, n);
      mx = to_scalar(res, 0);
      if (maxT) Duplicate((*maxT)[r * blk], mx, static_cast<std::int32_t>(blk));
    }
    Adds(out, in, static_cast<T>(-static_cast<float>(mx)), n);
    Exp(out, out, n);
    if (!given) {
      ReduceSum(res, out, work, n);
      sum = to_scalar(res, 0);
      if (sumT) Duplicate((*sumT)[r * blk], sum, static_cast<std::int32_t>(blk));
    }
    Muls(out, out, static_cast<T>(1.0f / static_cast<float>(sum)), n);
  }
  pipe->ReleaseEventID(HardEvent::V_S, vs);
  pipe->ReleaseEventID(HardEvent::S_V, sv);
  if (own != ~std::uint64_t{0}) {
    c.barrier_all();  // the temporary is free again only once its last reader is done
    c.free_buffer(Buf::UB, own);
  }
}

}  // namespace detail

// SoftMax: dst = exp(src - rowmax) / rowsum, with rowmax and rowsum broadcast into one 32-byte
// block a row of maxTensor and sumTensor.
template <typename T, bool isReuseSource = false, bool isBasicBlock = false,
          bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor,
             const LocalTensor<T>& maxTensor, const LocalTensor<T>& srcTensor,
             const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
  static_assert(!isDataFormatNZ, "SoftMax: NZ-format input is not provided; pass ND rows");
  detail::softmax_rows("SoftMax", dstTensor, &sumTensor, &maxTensor, srcTensor, nullptr, tiling,
                       softmaxShapeInfo, false);
}
template <typename T, bool isReuseSource = false, bool isBasicBlock = false,
          bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor,
             const LocalTensor<T>& maxTensor, const LocalTensor<T>& srcTensor,
             const LocalTensor<std::uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
             const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
  static_assert(!isDataFormatNZ, "SoftMax: NZ-format input is not provided; pass ND rows");
  detail::softmax_rows("SoftMax", dstTensor, &sumTensor, &maxTensor, srcTensor, &sharedTmpBuffer,
                       tiling, softmaxShapeInfo, false);
}
// Without sumTensor and maxTensor.
template <typename T, bool isReuseSource = false, bool isBasicBlock = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
             const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
  detail::softmax_rows<T>("SoftMax", dstTensor, nullptr, nullptr, srcTensor, nullptr, tiling,
                          softmaxShapeInfo, false);
}
template <typename T, bool isReuseSource = false, bool isBasicBlock = false,
          const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor,
             const LocalTensor<std::uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
             const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
  detail::softmax_rows<T>("SoftMax", dstTensor, nullptr, nullptr, srcTensor, &sharedTmpBuffer,
                          tiling, softmaxShapeInfo, false);
}

// SimpleSoftMax: dst = exp(src - max) / sum with the max and sum a SoftMax (or the caller) left,
// one 32-byte block a row.
template <typename T, bool isReuseSource = false, bool isBasicBlock = false,
          bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SimpleSoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& inSumTensor,
                   const LocalTensor<T>& inMaxTensor, const LocalTensor<T>& srcTensor,
                   const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
  static_assert(!isDataFormatNZ, "SimpleSoftMax: NZ-format input is not provided; pass ND rows");
  detail::softmax_rows("SimpleSoftMax", dstTensor, &inSumTensor, &inMaxTensor, srcTensor, nullptr,
                       tiling, softmaxShapeInfo, true);
}
template <typename T, bool isReuseSource = false, bool isBasicBlock = false,
          bool isDataFormatNZ = false, const SoftmaxConfig& config = SOFTMAX_DEFAULT_CFG>
void SimpleSoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& inSumTensor,
                   const LocalTensor<T>& inMaxTensor, const LocalTensor<T>& srcTensor,
                   const LocalTensor<std::uint8_t>& sharedTmpBuffer, const SoftMaxTiling& tiling,
                   const SoftMaxShapeInfo& softmaxShapeInfo = {}) {
  static_assert(!isDataFormatNZ, "SimpleSoftMax: NZ-format input is not provided; pass ND rows");
  detail::softmax_rows("SimpleSoftMax", dstTensor, &inSumTensor, &inMaxTensor, srcTensor,
                       &sharedTmpBuffer, tiling, softmaxShapeInfo, true);
}

}  // namespace AscendC
