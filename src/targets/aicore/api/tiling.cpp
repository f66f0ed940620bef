// PlatformAscendC from the aicore device's preset and the host Matmul tiling
// (tiling/platform/platform_ascendc.h, tiling/tiling_api.h).
#include <algorithm>
#include <string>
#include <tuple>

#include "lib/softmax/softmax.h"
#include "tessera/arch/machine_spec.h"
#include "tessera/core/error.h"
#include "tessera/core/log.h"
#include "tessera/targets/aicore/api/core.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"

namespace platform_ascendc {

namespace {
const char* const kMemoryNames[] = {"L0A", "L0B", "L0C", "L1", "L2", "UB", nullptr};
}  // namespace

PlatformAscendC::PlatformAscendC() : PlatformAscendC(static_cast<const void*>(nullptr)) {}

PlatformAscendC::PlatformAscendC(const void*) {
  const tessera::arch::MachineSpec& spec = tessera::aicore::device().spec();
  cores_ = static_cast<std::uint32_t>(spec.core_count.as_int());
  for (int i = 0; i < 7; ++i) {
    const tessera::arch::MemorySpec& m =
        kMemoryNames[i] ? spec.memory(kMemoryNames[i]) : spec.global();
    mem_[i] = static_cast<std::uint64_t>(m.capacity_bytes.as_int());
    bw_[i] = static_cast<std::uint64_t>(m.bandwidth_bytes_per_cycle.value);
  }
  soc_ = spec.name == "ascend910"   ? SocVersion::ASCEND910
         : spec.name == "ascend310" ? SocVersion::ASCEND310
                                    : SocVersion::RESERVED_VERSION;
  workspace_ = static_cast<std::uint32_t>(spec.global().alignment_bytes.as_int());
}

namespace {
int mem_index(CoreMemType t, const char* what) {
  const int i = static_cast<int>(t);
  if (i < 0 || i > static_cast<int>(CoreMemType::HBM))
    tessera::throw_user_error(
        "PlatformAscendC::{}: memory type {} is not one of L0_A, L0_B, "
        "L0_C, L1, L2, UB, HBM",
        what, i);
  return i;
}
}  // namespace

void PlatformAscendC::GetCoreMemSize(const CoreMemType& memType, std::uint64_t& size) const {
  size = mem_[mem_index(memType, "GetCoreMemSize")];
}

void PlatformAscendC::GetCoreMemBw(const CoreMemType& memType, std::uint64_t& bwSize) const {
  bwSize = bw_[mem_index(memType, "GetCoreMemBw")];
}

std::uint32_t PlatformAscendC::CalcTschBlockDim(std::uint32_t sliceNum, std::uint32_t,
                                                std::uint32_t) const {
  return std::clamp<std::uint32_t>(sliceNum, 1, cores_);
}

PlatformAscendC* PlatformAscendCManager::GetInstance() {
  return GetInstance(nullptr);
}

PlatformAscendC* PlatformAscendCManager::GetInstance(const char* customSocVersion) {
  thread_local PlatformAscendC platform;
  tessera::log(tessera::LogLevel::debug, "aicore",
               "PlatformAscendCManager::GetInstance({}): the figures of preset {}",
               customSocVersion ? customSocVersion : "", tessera::aicore::device().spec().name);
  platform = PlatformAscendC();
  return &platform;
}

}  // namespace platform_ascendc

namespace matmul_tiling {

namespace {
std::int32_t round16(std::int32_t v) {
  return (v + 15) / 16 * 16;
}
std::int32_t ceil_div(std::int32_t a, std::int32_t b) {
  return (a + b - 1) / b;
}
std::int64_t elem_bytes(DataType t) {
  return t == DataType::DT_FLOAT ? 4 : 2;
}
std::int64_t refuse(const char* why) {
  tessera::log(tessera::LogLevel::warn, "aicore", "matmul_tiling: GetTiling: {}", why);
  return -1;
}
}  // namespace

MatmulApiTiling::MatmulApiTiling() = default;

MatmulApiTiling::MatmulApiTiling(const platform_ascendc::PlatformAscendC& ascendcPlatform)
    : platform_(ascendcPlatform) {}

std::int32_t MatmulApiTiling::SetAType(TPosition pos, CubeFormat type, DataType dataType,
                                       bool isTrans) {
  a_ = {pos, type, dataType, isTrans, true};
  return 0;
}
std::int32_t MatmulApiTiling::SetBType(TPosition pos, CubeFormat type, DataType dataType,
                                       bool isTrans) {
  b_ = {pos, type, dataType, isTrans, true};
  return 0;
}
std::int32_t MatmulApiTiling::SetCType(TPosition pos, CubeFormat type, DataType dataType) {
  c_ = {pos, type, dataType, false, true};
  return 0;
}
std::int32_t MatmulApiTiling::SetBiasType(TPosition pos, CubeFormat type, DataType dataType) {
  bias_ = {pos, type, dataType, false, true};
  return 0;
}
std::int32_t MatmulApiTiling::SetShape(std::int32_t m, std::int32_t n, std::int32_t k) {
  m_ = m;
  n_ = n;
  k_ = k;
  return 0;
}
std::int32_t MatmulApiTiling::SetOrgShape(std::int32_t orgMIn, std::int32_t orgNIn,
                                          std::int32_t orgKIn) {
  return SetOrgShape(orgMIn, orgNIn, orgKIn, orgKIn);
}
std::int32_t MatmulApiTiling::SetOrgShape(std::int32_t orgMIn, std::int32_t orgNIn,
                                          std::int32_t orgKaIn, std::int32_t orgKbIn) {
  orgM_ = orgMIn;
  orgN_ = orgNIn;
  orgKa_ = orgKaIn;
  orgKb_ = orgKbIn;
  return 0;
}
std::int32_t MatmulApiTiling::SetBias(bool isBiasIn) {
  isBias_ = isBiasIn;
  return 0;
}
std::int32_t MatmulApiTiling::SetBufferSpace(std::int32_t l1Size, std::int32_t l0CSize,
                                             std::int32_t ubSize, std::int32_t) {
  l1_ = l1Size;
  l0c_ = l0CSize;
  ub_ = ubSize;
  return 0;
}
std::int32_t MatmulApiTiling::SetFixSplit(std::int32_t baseMIn, std::int32_t baseNIn,
                                          std::int32_t baseKIn) {
  fixM_ = baseMIn;
  fixN_ = baseNIn;
  fixK_ = baseKIn;
  return 0;
}
std::int32_t MatmulApiTiling::SetTraverse(MatrixTraverse traverse) {
  traverse_ = traverse;
  return 0;
}

bool MatmulApiTiling::check_types(const char*& why) const {
  if (!a_.set || !b_.set || !c_.set) {
    why = "SetAType, SetBType and SetCType first";
    return false;
  }
  if (a_.type != DataType::DT_FLOAT16 || b_.type != DataType::DT_FLOAT16) {
    why = "A and B must be DT_FLOAT16 (this core's Cube multiplies fp16)";
    return false;
  }
  if (c_.type != DataType::DT_FLOAT && c_.type != DataType::DT_FLOAT16) {
    why = "C must be DT_FLOAT or DT_FLOAT16";
    return false;
  }
  if (isBias_ && bias_.set && bias_.type != c_.type) {
    why = "the bias must have C's data type here";
    return false;
  }
  if (a_.pos != TPosition::GM || b_.pos != TPosition::GM || a_.format != CubeFormat::ND ||
      b_.format != CubeFormat::ND) {
    why = "A and B must be ND matrices in GM here";
    return false;
  }
  return true;
}

// Largest base blocks (the most C per byte of A and B moved, L0 double-buffered where it can be)
// that fit L0A, L0B, L0C, L1 and UB;
// fixed ones are only checked.
bool MatmulApiTiling::choose_base(::TCubeTiling& t, std::int32_t m, std::int32_t n, std::int32_t k,
                                  const char*& why) const {
  std::uint64_t l0a = 0, l0b = 0, l0c = 0, l1 = 0, ub = 0;
  platform_.GetCoreMemSize(platform_ascendc::CoreMemType::L0_A, l0a);
  platform_.GetCoreMemSize(platform_ascendc::CoreMemType::L0_B, l0b);
  platform_.GetCoreMemSize(platform_ascendc::CoreMemType::L0_C, l0c);
  platform_.GetCoreMemSize(platform_ascendc::CoreMemType::L1, l1);
  platform_.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ub);
  if (l1_ >= 0) l1 = std::min<std::uint64_t>(l1, static_cast<std::uint64_t>(l1_));
  if (l0c_ >= 0) l0c = std::min<std::uint64_t>(l0c, static_cast<std::uint64_t>(l0c_));
  if (ub_ >= 0) ub = std::min<std::uint64_t>(ub, static_cast<std::uint64_t>(ub_));
  const std::uint64_t cb = static_cast<std::uint64_t>(elem_bytes(c_.type));
  const std::int32_t sizes[] = {256, 128, 64, 32, 16};
  bool found = false;
  std::uint64_t best_area = 0;
  std::int32_t best_k = 0;
  bool best_db = false;
  for (std::int32_t bm : sizes) {
    if (fixM_ > 0 ? bm != 256 : bm > round16(m)) continue;
    const std::int32_t bmv = fixM_ > 0 ? fixM_ : bm;
    for (std::int32_t bn : sizes) {
      if (fixN_ > 0 ? bn != 256 : bn > round16(n)) continue;
      const std::int32_t bnv = fixN_ > 0 ? fixN_ : bn;
      for (std::int32_t bk : sizes) {
        if (fixK_ > 0 ? bk != 256 : bk > k) continue;
        const std::int32_t bkv = fixK_ > 0 ? fixK_ : bk;
        if (bmv % 16 || bnv % 16 || bkv % 16) {
          why = "SetFixSplit: baseM, baseN and baseK must be multiples of 16";
          return false;
        }
        const std::uint64_t a2 = std::uint64_t(bmv) * bkv * 2, b2 = std::uint64_t(bkv) * bnv * 2;
        const std::uint64_t c1 = std::uint64_t(bmv) * bnv * 4;
        const std::uint64_t ubNeed = (std::uint64_t(bnv) * cb + 31) / 32 * 32 + 2 * bmv * 16 * cb;
        if (a2 > l0a || b2 > l0b || c1 > l0c || a2 + b2 > l1 || ubNeed > ub) continue;
        // Most C per byte moved, then both L0 inputs double-buffered, then the longest K slice.
        const std::uint64_t area = std::uint64_t(bmv) * bnv;
        const bool db = 2 * a2 <= l0a && 2 * b2 <= l0b;
        if (found && std::make_tuple(area, db, bkv) <= std::make_tuple(best_area, best_db, best_k))
          continue;
        found = true;
        best_area = area;
        best_db = db;
        best_k = bkv;
        t.baseM = bmv;
        t.baseN = bnv;
        t.baseK = bkv;
        t.dbL0A = 2 * a2 <= l0a ? 2 : 1;
        t.dbL0B = 2 * b2 <= l0b ? 2 : 1;
        t.dbL0C = 1;
        // L1 holds as many base slices of K as fit (all of K if they do), twice if that fits.
        std::int32_t step = (k + bkv - 1) / bkv;
        while (step > 1 && (a2 + b2) * step > l1) --step;
        const bool l1db = 2 * (a2 + b2) * step <= l1;
        t.stepKa = t.stepKb = step;
        t.depthA1 = t.depthB1 = step * (l1db ? 2 : 1);
        t.shareL1Size = static_cast<std::int32_t>((a2 + b2) * step * (l1db ? 2 : 1));
        t.shareL0CSize = static_cast<std::int32_t>(c1);
        t.shareUbSize = static_cast<std::int32_t>(ubNeed);
      }
    }
  }
  if (!found) why = "no base block fits the core's L0A, L0B, L0C, L1 and UB (or SetBufferSpace)";
  return found;
}

std::int64_t MatmulApiTiling::GetTiling(optiling::TCubeTiling& tiling) {
  return GetTiling(static_cast<::TCubeTiling&>(tiling));
}

std::int64_t MatmulApiTiling::GetTiling(::TCubeTiling& tiling) {
  const char* why = "";
  if (!check_types(why)) return refuse(why);
  const std::int32_t orgM = orgM_ > 0 ? orgM_ : m_, orgN = orgN_ > 0 ? orgN_ : n_;
  const std::int32_t orgKa = orgKa_ > 0 ? orgKa_ : k_, orgKb = orgKb_ > 0 ? orgKb_ : k_;
  if (m_ <= 0 || n_ <= 0 || k_ <= 0) return refuse("SetShape(M, N, K) with positive shapes first");
  if (m_ > orgM || n_ > orgN || k_ > orgKa || k_ > orgKb)
    return refuse("the shape exceeds the original shape (SetOrgShape)");
  if (k_ % 16 || n_ % 16 || orgN % 16 || orgKa % 16 || orgKb % 16)
    return refuse("K, N and the row lengths must be multiples of 16 (rows move in 32-byte blocks)");
  ::TCubeTiling t{};
  if (!choose_base(t, m_, n_, k_, why)) return refuse(why);
  t.usedCoreNum = 1;
  t.M = orgM;
  t.N = orgN;
  t.Ka = orgKa;
  t.Kb = orgKb;
  t.singleCoreM = m_;
  t.singleCoreN = n_;
  t.singleCoreK = k_;
  t.stepM = t.stepN = 1;
  t.isBias = isBias_ ? 1 : 0;
  t.iterateOrder = traverse_ == MatrixTraverse::FIRSTN ? 1 : 0;
  t.BatchNum = 1;
  tiling = t;
  return 0;
}

std::int32_t MultiCoreMatmulTiling::SetDim(std::int32_t dim) {
  dim_ = dim;
  return 0;
}
std::int32_t MultiCoreMatmulTiling::SetSingleShape(std::int32_t singleMIn, std::int32_t singleNIn,
                                                   std::int32_t singleKIn) {
  singleM_ = singleMIn;
  singleN_ = singleNIn;
  singleK_ = singleKIn;
  return 0;
}

std::int64_t MultiCoreMatmulTiling::GetTiling(optiling::TCubeTiling& tiling) {
  return GetTiling(static_cast<::TCubeTiling&>(tiling));
}

// Splits the M x N plane into blocks of whole fractals over at most `dim` cores: the split with
// the least work on one core, then the least A and B a core reads, then the fewest cores.
std::int64_t MultiCoreMatmulTiling::GetTiling(::TCubeTiling& tiling) {
  const std::int32_t cores = static_cast<std::int32_t>(platform_.GetCoreNum());
  const std::int32_t dim = dim_ > 0 ? dim_ : cores;
  if (m_ <= 0 || n_ <= 0 || k_ <= 0) return refuse("SetShape(M, N, K) with positive shapes first");
  std::int32_t sm = singleM_ > 0 ? singleM_ : 0, sn = singleN_ > 0 ? singleN_ : 0;
  if (sm == 0 || sn == 0) {
    std::int64_t best_work = -1, best_read = 0, best_used = 0;
    std::int32_t bm = 0, bn = 0;
    for (std::int32_t md = 1; md <= dim; ++md) {
      const std::int32_t nd = dim / md;
      const std::int32_t cm = singleM_ > 0 ? singleM_ : round16(ceil_div(m_, md));
      const std::int32_t cn = singleN_ > 0 ? singleN_ : round16(ceil_div(n_, nd));
      const std::int64_t used = std::int64_t(ceil_div(m_, cm)) * ceil_div(n_, cn);
      const std::int64_t work = std::int64_t(cm) * cn, read = cm + cn;
      const bool better = best_work < 0 || work < best_work ||
                          (work == best_work && read < best_read) ||
                          (work == best_work && read == best_read && used < best_used);
      if (!better) continue;
      best_work = work;
      best_read = read;
      best_used = used;
      bm = cm;
      bn = cn;
    }
    sm = bm;
    sn = bn;
  }
  sm = std::min(sm, m_);
  sn = std::min(sn, n_);
  const std::int32_t sk = singleK_ > 0 ? singleK_ : k_;
  mDim_ = ceil_div(m_, sm);
  nDim_ = ceil_div(n_, sn);
  if (mDim_ * nDim_ > dim)
    return refuse("SetSingleShape splits the plane over more than SetDim cores");
  const std::int32_t m = m_, n = n_, k = k_;
  m_ = sm;
  n_ = sn;
  k_ = sk;
  const std::int32_t orgM = orgM_, orgN = orgN_, orgKa = orgKa_, orgKb = orgKb_;
  if (orgM_ <= 0) orgM_ = m;
  if (orgN_ <= 0) orgN_ = n;
  if (orgKa_ <= 0) orgKa_ = k;
  if (orgKb_ <= 0) orgKb_ = k;
  const std::int64_t r = MatmulApiTiling::GetTiling(tiling);
  m_ = m;
  n_ = n;
  k_ = k;
  orgM_ = orgM;
  orgN_ = orgN;
  orgKa_ = orgKa;
  orgKb_ = orgKb;
  if (r != 0) return r;
  tiling.usedCoreNum = mDim_ * nDim_;
  return 0;
}

std::int32_t MultiCoreMatmulTiling::GetCoreNum(std::int32_t& dim, std::int32_t& mDim,
                                               std::int32_t& nDim) const {
  dim = mDim_ * nDim_;
  mDim = mDim_;
  nDim = nDim_;
  return 0;
}

}  // namespace matmul_tiling

namespace AscendC {

namespace {
using detail::kSoftmaxTmpBytes;

void check_softmax_shape(const ge::Shape& shape, std::uint32_t size, const char* what) {
  if (shape.GetDimNum() == 0 || shape.GetShapeSize() <= 0)
    tessera::throw_user_error("{}: the shape is empty; give [m..., k] with positive axes", what);
  if (size != 2 && size != 4)
    tessera::throw_user_error("{}: dataTypeSize {}; SoftMax takes half (2) or float (4)", what,
                              size);
}
}  // namespace

void SoftMaxTilingFunc(const ge::Shape& srcShape, const std::uint32_t dataTypeSize,
                       const std::uint32_t localWorkSpaceSize,
                       optiling::SoftMaxTiling& softmaxTiling) {
  check_softmax_shape(srcShape, dataTypeSize, "SoftMaxTilingFunc");
  if (localWorkSpaceSize < kSoftmaxTmpBytes)
    tessera::throw_user_error(
        "SoftMaxTilingFunc: localWorkSpaceSize {} B is below the {} B "
        "GetSoftMaxMinTmpSize gives",
        localWorkSpaceSize, kSoftmaxTmpBytes);
  const auto k = static_cast<std::uint32_t>(srcShape.GetDim(srcShape.GetDimNum() - 1));
  const auto m = static_cast<std::uint32_t>(srcShape.GetShapeSize() / k);
  const std::uint32_t blk = 32 / dataTypeSize;
  ::SoftMaxTiling t;
  t.srcM = m;
  t.srcK = k;
  t.srcSize = m * k;
  t.outMaxM = m;
  t.outMaxK = blk;
  t.outMaxSize = m * blk;
  t.splitM = m;
  t.splitK = k;
  t.splitSize = m * k;
  t.reduceM = m;
  t.reduceK = blk;
  t.reduceSize = m * blk;
  t.rangeM = 1;
  static_cast<::SoftMaxTiling&>(softmaxTiling) = t;
}

std::uint32_t GetSoftMaxMaxTmpSize(const ge::Shape& srcShape, const std::uint32_t dataTypeSize,
                                   const bool) {
  check_softmax_shape(srcShape, dataTypeSize, "GetSoftMaxMaxTmpSize");
  return kSoftmaxTmpBytes;
}

std::uint32_t GetSoftMaxMinTmpSize(const ge::Shape& srcShape, const std::uint32_t dataTypeSize,
                                   const bool) {
  check_softmax_shape(srcShape, dataTypeSize, "GetSoftMaxMinTmpSize");
  return kSoftmaxTmpBytes;
}

bool IsBasicBlockInSoftMax(optiling::SoftMaxTiling& tiling, const std::uint32_t dataTypeSize) {
  const std::uint32_t k = tiling.srcK, m = tiling.srcM;
  return dataTypeSize != 0 && k >= 256 / dataTypeSize && k < 2048 && k % 64 == 0 && m % 8 == 0;
}

}  // namespace AscendC
