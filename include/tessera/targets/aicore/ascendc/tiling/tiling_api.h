// CANN's host Matmul tiling (tiling/tiling_api.h, namespace matmul_tiling) for Tessera:
// MatmulApiTiling (one core) and MultiCoreMatmulTiling (the M x N plane split over SetDim
// cores) fill a TCubeTiling for lib/matmul_intf.h's Matmul. The values are Tessera's choice,
// made to fit the preset's L1, L0A, L0B, L0C and UB (docs/targets/aicore.md, "Host tiling");
// GetTiling returns -1, with the reason in the log, when no tiling fits.
#pragma once

#include <cstdint>

#include "graph/tensor.h"
#include "graph/types.h"
#include "kernel_tiling/kernel_tiling.h"
#include "register/tilingdata_base.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {

// The host's TCubeTiling: the kernel struct's bytes, with the set_/get_ accessors of a tiling
// class, so that TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, field) nests it.
class TCubeTiling : public ::TCubeTiling, public TilingDef<TCubeTiling> {
 public:
#define TESSERA_TCUBE_TILING_ACCESSORS(name) \
  void set_##name(std::int32_t value) {      \
    this->name = value;                      \
  }                                          \
  std::int32_t get_##name() const {          \
    return this->name;                       \
  }
  TESSERA_TCUBE_TILING_FIELDS(TESSERA_TCUBE_TILING_ACCESSORS)
#undef TESSERA_TCUBE_TILING_ACCESSORS
};
static_assert(sizeof(TCubeTiling) == sizeof(::TCubeTiling));

// The host's SoftMaxTiling, as TCubeTiling.
class SoftMaxTiling : public ::SoftMaxTiling, public TilingDef<SoftMaxTiling> {
 public:
#define TESSERA_SOFTMAX_TILING_ACCESSORS(name) \
  void set_##name(std::uint32_t value) {       \
    this->name = value;                        \
  }                                            \
  std::uint32_t get_##name() const {           \
    return this->name;                         \
  }
  TESSERA_SOFTMAX_TILING_FIELDS(TESSERA_SOFTMAX_TILING_ACCESSORS)
#undef TESSERA_SOFTMAX_TILING_ACCESSORS
};
static_assert(sizeof(SoftMaxTiling) == sizeof(::SoftMaxTiling));

}  // namespace optiling

namespace matmul_tiling {

enum class TPosition : std::int32_t {
  GM,
  A1,
  A2,
  B1,
  B2,
  C1,
  C2,
  CO1,
  CO2,
  VECIN,
  VECOUT,
  VECCALC,
  LCM = VECCALC,
  SPM,
  SHM = SPM,
  TSCM,
  MAX
};
using ::CubeFormat;
// The element types are GE's.
using DataType = ge::DataType;
enum class MatrixTraverse : std::int32_t { NOSET = 0, FIRSTM = 1, FIRSTN = 2 };

class MatmulApiTiling {
 public:
  MatmulApiTiling();
  explicit MatmulApiTiling(const platform_ascendc::PlatformAscendC& ascendcPlatform);
  virtual ~MatmulApiTiling() = default;

  std::int32_t SetAType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false);
  std::int32_t SetBType(TPosition pos, CubeFormat type, DataType dataType, bool isTrans = false);
  std::int32_t SetCType(TPosition pos, CubeFormat type, DataType dataType);
  std::int32_t SetBiasType(TPosition pos, CubeFormat type, DataType dataType);
  // The shape this tiling computes (one core's for MatmulApiTiling, the whole for multi-core).
  std::int32_t SetShape(std::int32_t m, std::int32_t n, std::int32_t k);
  std::int32_t SetOrgShape(std::int32_t orgMIn, std::int32_t orgNIn, std::int32_t orgKIn);
  std::int32_t SetOrgShape(std::int32_t orgMIn, std::int32_t orgNIn, std::int32_t orgKaIn,
                           std::int32_t orgKbIn);
  std::int32_t SetBias(bool isBiasIn = false);
  // Bytes of L1, L0C, UB (and BT) the tiling may use; -1: all of the core's.
  std::int32_t SetBufferSpace(std::int32_t l1Size = -1, std::int32_t l0CSize = -1,
                              std::int32_t ubSize = -1, std::int32_t btSize = -1);
  // baseM, baseN, baseK fixed by the caller; -1 leaves one to GetTiling.
  std::int32_t SetFixSplit(std::int32_t baseMIn = -1, std::int32_t baseNIn = -1,
                           std::int32_t baseKIn = -1);
  std::int32_t SetTraverse(MatrixTraverse traverse);
  // Fills `tiling`; -1 when no tiling fits (the reason is logged at WARN).
  std::int64_t GetTiling(optiling::TCubeTiling& tiling);
  std::int64_t GetTiling(::TCubeTiling& tiling);

 protected:
  struct Operand {
    TPosition pos = TPosition::GM;
    CubeFormat format = CubeFormat::ND;
    DataType type = DataType::DT_FLOAT16;
    bool trans = false;
    bool set = false;
  };
  // Chooses the base blocks for a single-core shape; false (with `why`) when none fits.
  bool choose_base(::TCubeTiling& t, std::int32_t m, std::int32_t n, std::int32_t k,
                   const char*& why) const;
  bool check_types(const char*& why) const;

  platform_ascendc::PlatformAscendC platform_;
  Operand a_, b_, c_, bias_;
  std::int32_t m_ = -1, n_ = -1, k_ = -1;
  std::int32_t orgM_ = -1, orgN_ = -1, orgKa_ = -1, orgKb_ = -1;
  std::int32_t fixM_ = -1, fixN_ = -1, fixK_ = -1;
  std::int64_t l1_ = -1, l0c_ = -1, ub_ = -1;
  bool isBias_ = false;
  MatrixTraverse traverse_ = MatrixTraverse::NOSET;
};

class MultiCoreMatmulTiling : public MatmulApiTiling {
 public:
  MultiCoreMatmulTiling() = default;
  explicit MultiCoreMatmulTiling(const platform_ascendc::PlatformAscendC& ascendcPlatform)
      : MatmulApiTiling(ascendcPlatform) {}
  // Cores the M x N plane may be split over (default: all of the device's).
  std::int32_t SetDim(std::int32_t dim);
  // This core's block, when the caller splits the plane itself (-1 leaves it to GetTiling).
  std::int32_t SetSingleShape(std::int32_t singleMIn = -1, std::int32_t singleNIn = -1,
                              std::int32_t singleKIn = -1);
  std::int64_t GetTiling(optiling::TCubeTiling& tiling);
  std::int64_t GetTiling(::TCubeTiling& tiling);
  // The cores the tiling uses (usedCoreNum), after GetTiling.
  std::int32_t GetCoreNum(std::int32_t& dim, std::int32_t& mDim, std::int32_t& nDim) const;

 private:
  std::int32_t dim_ = -1, singleM_ = -1, singleN_ = -1, singleK_ = -1;
  std::int32_t mDim_ = 0, nDim_ = 0;
};

}  // namespace matmul_tiling

// SoftMax / SimpleSoftMax host tiling (CANN "SoftMax/SimpleSoftMax Tiling"): the rows of an
// [m..., k] shape (m the product of the leading axes). Tessera's SoftMax goes row by row with a
// fixed 64-byte temporary, so the tiling is one pass over all rows and the temporary sizes do
// not depend on the shape.
namespace AscendC {
void SoftMaxTilingFunc(const ge::Shape& srcShape, const std::uint32_t dataTypeSize,
                       const std::uint32_t localWorkSpaceSize,
                       optiling::SoftMaxTiling& softmaxTiling);
std::uint32_t GetSoftMaxMaxTmpSize(const ge::Shape& srcShape, const std::uint32_t dataTypeSize,
                                   const bool isReuseSource);
std::uint32_t GetSoftMaxMinTmpSize(const ge::Shape& srcShape, const std::uint32_t dataTypeSize,
                                   const bool isReuseSource);
// The API reference's basic-block rule: 256 / size <= k < 2048, k a multiple of 64, m of 8.
bool IsBasicBlockInSoftMax(optiling::SoftMaxTiling& tiling, const std::uint32_t dataTypeSize = 2);
}  // namespace AscendC
