// A custom TPC kernel library (spec 000 §2.7): its own "relu_f32", a ReLU6 that also clamps at
// 6, so a program can tell it from the built-in relu_f32. Put the built .so on
// TESSERA_KERNEL_PATH and it is found before the built-in library (spec 000 §2.9).
#include <cstring>

#include "tessera/targets/tpc/api/tpc.h"

using namespace tessera::tpc;

namespace {

// One 64-lane vector per index-space member along dim 0; dims 1..4 one element each.
void relu6_f32(tensor input, tensor output) {
  const int5 start = get_index_space_offset();
  const int5 end = start + get_index_space_size();
  int5 c = {0, 0, 0, 0, 0};
  for (c[4] = start[4]; c[4] < end[4]; ++c[4])
    for (c[3] = start[3]; c[3] < end[3]; ++c[3])
      for (c[2] = start[2]; c[2] < end[2]; ++c[2])
        for (c[1] = start[1]; c[1] < end[1]; ++c[1])
          for (int x = start[0]; x < end[0]; ++x) {
            c[0] = x * 64;
            const float64 v = v_f32_ld_tnsr_i(c, input);
            f32_st_tnsr_i_v(c, output, v_f32_min_v_s(v_f32_max_v_s(v, 0.0f), 6.0f));
          }
}

const char* const kNames[] = {"relu_f32"};

}  // namespace

extern "C" gcapi::GlueCodeReturn_t GetKernelNames(char** names, unsigned* kernelCount,
                                                  gcapi::DeviceId_t) {
  const unsigned count = sizeof kNames / sizeof kNames[0];
  if (names == nullptr || *kernelCount < count) {
    *kernelCount = count;
    return gcapi::GLUE_SUCCESS;
  }
  for (unsigned i = 0; i < count; ++i) std::strcpy(names[i], kNames[i]);
  *kernelCount = count;
  return gcapi::GLUE_SUCCESS;
}

extern "C" gcapi::GlueCodeReturn_t HabanaKernel(gcapi::HabanaKernelParams_t* params,
                                                gcapi::HabanaKernelInstantiation_t* instance) {
  if (std::strcmp(params->nodeName, "relu_f32") != 0) return gcapi::GLUE_NODE_NOT_FOUND;
  // The built-in relu takes (alpha, beta) node parameters; this one has no use for them.
  return gcapi::elementwise_glue(params, instance, 1, 1, gcapi::DATA_F32, 64,
                                 tpc_kernel<&relu6_f32>());
}
