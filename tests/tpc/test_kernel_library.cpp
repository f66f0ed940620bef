// A kernel library built as a plug-in (spec 000 §2.7.2): exports GetKernelNames and HabanaKernel.
// Variant A exports scale_f32 (x * 2) and only_a_f32; variant B exports scale_f32 (x * 3).
#include <cstring>

#include "tessera/targets/tpc/api/tpc.h"

using namespace tessera::tpc;

namespace {

template <int Factor>
void scale(tensor in, tensor out) {
  const int5 s = get_index_space_offset();
  const int5 e = s + get_index_space_size();
  int5 c = {0};
  for (int i = s[0]; i < e[0]; ++i) {
    c[0] = i * 64;
    f32_st_tnsr_i_v(c, out, v_f32_mul_v_s(v_f32_ld_tnsr_i(c, in), static_cast<float>(Factor)));
  }
}

#if defined(TPC_TEST_LIBRARY_A)
const char* const kNames[] = {"scale_f32", "only_a_f32"};
constexpr int kFactor = 2;
#else
const char* const kNames[] = {"scale_f32"};
constexpr int kFactor = 3;
#endif
constexpr unsigned kCount = sizeof(kNames) / sizeof(kNames[0]);

}  // namespace

extern "C" gcapi::GlueCodeReturn_t GetKernelNames(char** names, unsigned* kernelCount,
                                                  gcapi::DeviceId_t deviceId) {
  if (deviceId != gcapi::DEVICE_ID_GAUDI) {
    *kernelCount = 0;
    return gcapi::GLUE_SUCCESS;
  }
  if (names != nullptr && *kernelCount >= kCount)
    for (unsigned i = 0; i < kCount; ++i) std::strcpy(names[i], kNames[i]);
  *kernelCount = kCount;
  return gcapi::GLUE_SUCCESS;
}

extern "C" gcapi::GlueCodeReturn_t HabanaKernel(gcapi::HabanaKernelParams_t* params,
                                                gcapi::HabanaKernelInstantiation_t* instance) {
  const bool known = std::strcmp(params->nodeName, "scale_f32") == 0 ||
                     (kCount > 1 && std::strcmp(params->nodeName, kNames[kCount - 1]) == 0);
  if (!known) return gcapi::GLUE_NODE_NOT_FOUND;
  return gcapi::elementwise_glue(params, instance, 1, 1, gcapi::DATA_F32, 64,
                                 tpc_kernel<&scale<kFactor>>());
}
