// Ascend C's CPU-debug launch for Tessera: GmAlloc/GmFree for global memory, SetKernelMode, and
// ICPU_RUN_KF(kernel, blockDim, args...), which runs the kernel on blockDim blocks of the
// simulated AI Cores (tessera::aicore::launch) and records it in the device's profile.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tessera/targets/aicore/api/core.h"

#ifndef ASCENDC_CPU_DEBUG
#define ASCENDC_CPU_DEBUG 1
#endif
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __global__
#define __global__
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef GM_ADDR
#define GM_ADDR uint8_t*
#endif

// The unit mix a kernel uses; every mode runs on the whole simulated AI Core.
enum class KernelMode : std::uint8_t { MIX_MODE = 0, AIC_MODE, AIV_MODE, MIX_AIC_1_1 };

namespace AscendC {
inline void* GmAlloc(std::size_t size) {
  return tessera::aicore::gm_alloc(size);
}
inline void GmFree(void* ptr) {
  tessera::aicore::gm_free(ptr);
}
inline KernelMode& kernel_mode() {
  static KernelMode mode = KernelMode::MIX_MODE;
  return mode;
}
inline void SetKernelMode(KernelMode mode) {
  kernel_mode() = mode;
}
}  // namespace AscendC

// securec's memcpy_s, which CANN's CPU-debug hosts call (the samples' main.cpp copies the tiling
// with it): 0 on success; EINVAL for a null pointer, ERANGE (dest zeroed) when count > destMax.
inline int memcpy_s(void* dest, std::size_t destMax, const void* src, std::size_t count) {
  if (dest == nullptr || src == nullptr) return EINVAL;
  if (count > destMax) {
    std::memset(dest, 0, destMax);
    return ERANGE;
  }
  std::memmove(dest, src, count);
  return 0;
}

#define TESSERA_ASCENDC_STR_(x) #x
#define TESSERA_ASCENDC_STR(x) TESSERA_ASCENDC_STR_(x)
#define ICPU_RUN_KF(func, blockdim, ...)                                                     \
  ::tessera::aicore::launch(TESSERA_ASCENDC_STR(func), static_cast<std::uint32_t>(blockdim), \
                            [&] { func(__VA_ARGS__); })

// The tiling key the next launches of this host thread see in TILING_KEY_IS (Ascend C's
// CPU-debug ICPU_SET_TILING_KEY).
#define ICPU_SET_TILING_KEY(key) ::tessera::aicore::set_tiling_key(static_cast<std::uint64_t>(key))
