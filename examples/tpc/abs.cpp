// abs over a 128-element f32 tensor with a 1-D index space of 2 (spec 000 §2.4.4): the kernel,
// its glue code with the access pattern of the spec's example, a launch, the results and the
// profile summary.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/profile/writers.h"
#include "tessera/runtime/device.h"
#include "tessera/targets/tpc/api/tpc.h"

using namespace tessera::tpc;

// The TPC-C kernel of spec 000 §2.7.1, in C++.
void abs_f32(tensor inputA, tensor outputB) {
  const int5 idx_s = get_index_space_offset();
  const int5 idx_e = get_index_space_size() + idx_s;
  int5 coords = {0, 0, 0, 0, 0};
  for (int idx0 = idx_s[0] * 64; idx0 < idx_e[0] * 64; idx0 += 64) {
    coords[0] = idx0;
    float64 in = v_f32_ld_tnsr_i(coords, inputA);
    f32_st_tnsr_i_v(coords, outputB, v_f32_abs_v(in));
  }
}

// Glue code: one 1-D f32 input and output of equal size; member x handles elements
// 64x .. 64x + 63 (start_a = end_a = 64, start_b = 0, end_b = 63).
gcapi::GlueCodeReturn_t abs_glue(gcapi::HabanaKernelParams_t* params,
                                 gcapi::HabanaKernelInstantiation_t* instance) {
  if (params->inputTensorNr != 1) return gcapi::GLUE_INCOMPATIBLE_INPUT_COUNT;
  if (params->outputTensorNr != 1) return gcapi::GLUE_INCOMPATIBLE_OUTPUT_COUNT;
  const auto& in = params->inputTensors[0];
  const auto& out = params->outputTensors[0];
  if (in.geometry.dims != 1 || out.geometry.dims != 1) return gcapi::GLUE_INCOMPATIBLE_INPUT_SIZE;
  if (in.dataType != gcapi::DATA_F32 || out.dataType != gcapi::DATA_F32)
    return gcapi::GLUE_INCOMPATIBLE_DATA_TYPE;
  if (in.geometry.sizes[0] != out.geometry.sizes[0]) return gcapi::GLUE_INCOMPATIBLE_OUTPUT_SIZE;
  instance->indexSpaceGeometry.dims = 1;
  instance->indexSpaceGeometry.sizes[0] = (in.geometry.sizes[0] + 63) / 64;
  const gcapi::DimTransform_t dim0{{0}, 64, 0, 64, 63};
  instance->inputTensorAccessPattern[0].dim[0] = dim0;
  instance->outputTensorAccessPattern[0].dim[0] = dim0;
  gcapi::set_kernel(instance, tpc_kernel<&abs_f32>());
  return gcapi::GLUE_SUCCESS;
}

int main() {
  try {
    auto device = tessera::runtime::Device::open("gaudi");
    auto library = std::make_shared<KernelSet>("abs-example");
    library->add("abs_f32", abs_glue);
    KernelRegistry registry;
    registry.add_builtin_library(library);
    RuntimeOptions options;
    options.registry = &registry;
    Runtime rt(*device, options);

    std::vector<float> host(128);
    for (int i = 0; i < 128; ++i) host[i] = static_cast<float>(i % 2 ? i : -i) * 0.5f;
    auto in = make_device_tensor(*device, tessera::DType::f32, tessera::Shape{128}, host.data());
    auto out = make_device_tensor(*device, tessera::DType::f32, tessera::Shape{128});
    const auto& record = rt.launch("abs_f32", {in}, {out});
    std::vector<float> result(128);
    device->copy_to_host(result.data(), out.buffer, result.size() * sizeof(float));

    int wrong = 0;
    for (int i = 0; i < 128; ++i) wrong += result[i] != std::fabs(host[i]);
    std::printf("abs_f32 over 128 elements, index space of %g members: %s\n",
                record.metrics.at("members"), wrong == 0 ? "all correct" : "WRONG");
    std::printf("in[0..5]  = %g %g %g %g %g %g\n", host[0], host[1], host[2], host[3], host[4],
                host[5]);
    std::printf("out[0..5] = %g %g %g %g %g %g\n", result[0], result[1], result[2], result[3],
                result[4], result[5]);
    std::cout << tessera::profile::text_summary(device->profile());
    return wrong == 0 ? 0 : 1;
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
