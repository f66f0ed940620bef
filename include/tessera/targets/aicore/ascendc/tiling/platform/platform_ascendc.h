// CANN's platform_ascendc::PlatformAscendC for Tessera: what a host tiling function asks of the
// chip (core counts, buffer sizes, SoC version, the library APIs' workspace), answered from the
// preset of the device Ascend C kernels run on (tessera::aicore::device(): ascend910 unless
// TESSERA_AICORE_DEVICE names another aicore preset). The figures are the preset's, with their
// sources there; see docs/targets/aicore.md, "Host tiling".
#pragma once

#include <cstdint>
#include <string>

namespace fe {
class PlatFormInfos;  // CANN's platform description; a TilingContext hands one out
}

namespace platform_ascendc {

enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, RESERVED };

enum class SocVersion {
  ASCEND910 = 0,
  ASCEND910B,
  ASCEND910_93,
  ASCEND310P,
  ASCEND310B,
  ASCEND310,
  RESERVED_VERSION = 99999
};

class PlatformAscendC {
 public:
  PlatformAscendC();
  // CANN builds it from context->GetPlatformInfo(); every context here describes the one device.
  explicit PlatformAscendC(const void* platformInfo);
  explicit PlatformAscendC(fe::PlatFormInfos* platformInfo)
      : PlatformAscendC(static_cast<const void*>(platformInfo)) {}

  // AI Cores of the device; each has a Cube and a Vector unit (spec 003), so AIC = AIV = cores.
  std::uint32_t GetCoreNum() const { return cores_; }
  std::uint32_t GetCoreNumAic() const { return cores_; }
  std::uint32_t GetCoreNumAiv() const { return cores_; }
  // Bytes of one core's buffer (L2 and HBM: the device's); UserError for RESERVED.
  void GetCoreMemSize(const CoreMemType& memType, std::uint64_t& size) const;
  // Bytes per cycle the preset gives the memory.
  void GetCoreMemBw(const CoreMemType& memType, std::uint64_t& bwSize) const;
  SocVersion GetSocVersion() const { return soc_; }
  // GM the library APIs want as system workspace: Tessera's use none, so this is the GM
  // alignment, the least an allocation of it can be.
  std::uint32_t GetLibApiWorkSpaceSize() const { return workspace_; }
  // The block dim of a kernel over `sliceNum` pieces: one block a core, at most every core.
  std::uint32_t CalcTschBlockDim(std::uint32_t sliceNum, std::uint32_t aicCoreNum,
                                 std::uint32_t aivCoreNum) const;

 private:
  std::uint32_t cores_ = 0;
  std::uint64_t mem_[7] = {};
  std::uint64_t bw_[7] = {};
  SocVersion soc_ = SocVersion::RESERVED_VERSION;
  std::uint32_t workspace_ = 0;
};

// The platform of a SoC named as CANN's SOC_VERSION ("Ascend910B1", say): the simulated device,
// whatever the name (the name is kept for the log).
class PlatformAscendCManager {
 public:
  static PlatformAscendC* GetInstance();
  static PlatformAscendC* GetInstance(const char* customSocVersion);
};

}  // namespace platform_ascendc
