// Habana-style glue for scale_f32.c, against gc_interface.h only.
#include <cstring>

#include "gc_interface.h"

extern unsigned char _binary___scale_f32_o_start;
extern unsigned char _binary___scale_f32_o_end;

extern "C" gcapi::GlueCodeReturn_t GetKernelNames(char** names, unsigned* kernelCount,
                                                  gcapi::DeviceId_t) {
  if (names != nullptr && *kernelCount >= 1) std::strcpy(names[0], "user_scale_f32");
  *kernelCount = 1;
  return gcapi::GLUE_SUCCESS;
}

extern "C" gcapi::GlueCodeReturn_t HabanaKernel(gcapi::HabanaKernelParams_t* in,
                                                gcapi::HabanaKernelInstantiation_t* out) {
  if (std::strcmp(in->nodeName, "user_scale_f32") != 0) return gcapi::GLUE_NODE_NOT_FOUND;
  if (in->inputTensorNr != 1 || in->outputTensorNr != 1 || in->NodeParamsSize != sizeof(float))
    return gcapi::GLUE_INCOMPATIBLE_INPUT_COUNT;
  out->indexSpaceGeometry.dims = 1;
  out->indexSpaceGeometry.sizes[0] = (in->inputTensors[0].geometry.sizes[0] + 63) / 64;
  out->kernel.paramsNr = 1;
  std::memcpy(&out->kernel.scalarParams[0], in->NodeParams, sizeof(float));
  const unsigned size =
      static_cast<unsigned>(&_binary___scale_f32_o_end - &_binary___scale_f32_o_start);
  const unsigned given = out->elfSize;
  out->elfSize = size;
  if (given < size) return gcapi::GLUE_INSUFICIENT_ELF_BUFFER;
  std::memcpy(out->kernelElf, &_binary___scale_f32_o_start, size);
  return gcapi::GLUE_SUCCESS;
}
