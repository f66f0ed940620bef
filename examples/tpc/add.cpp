// Elementwise add of two (3, 192) f32 tensors over a (3, 3) index space (spec 000 §2.4.3):
// each of the nine members adds 64 elements.
#include <cstdio>
#include <iostream>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/profile/writers.h"
#include "tessera/runtime/device.h"
#include "tessera/targets/tpc/api/tpc.h"

using namespace tessera::tpc;

// Index-space dim 0 walks 64-element chunks of a row, dim 1 walks rows.
void add_f32(tensor inputA, tensor inputB, tensor outputC) {
  const int5 start = get_index_space_offset();
  const int5 end = start + get_index_space_size();
  int5 target = {0};
  for (int i = start[0]; i < end[0]; i++) {
    target[0] = i * 64;
    for (int j = start[1]; j < end[1]; j++) {
      target[1] = j;
      float64 a = v_f32_ld_tnsr_i(target, inputA);
      float64 b = v_f32_ld_tnsr_i(target, inputB);
      float64 c = a + b;
      f32_st_tnsr_i_v(target, outputC, c);
    }
  }
}

int main() {
  try {
    auto device = tessera::runtime::Device::open("gaudi");
    auto library = std::make_shared<KernelSet>("add-example");
    // The elementwise glue helper checks counts, sizes and types and sets index space (3, 3).
    library->add("add_f32", [](const gcapi::HabanaKernelParams_t* p,
                               gcapi::HabanaKernelInstantiation_t* inst) {
      return gcapi::elementwise_glue(p, inst, 2, 1, gcapi::DATA_F32, 64, tpc_kernel<&add_f32>());
    });
    KernelRegistry registry;
    registry.add_builtin_library(library);
    RuntimeOptions options;
    options.registry = &registry;
    Runtime rt(*device, options);

    const auto shape = tessera::Shape::from_outer_first(std::vector<std::int64_t>{3, 192});
    std::vector<float> a(576), b(576);
    for (int i = 0; i < 576; ++i) {
      a[i] = static_cast<float>(i);
      b[i] = 1000.0f;
    }
    auto ta = make_device_tensor(*device, tessera::DType::f32, shape, a.data());
    auto tb = make_device_tensor(*device, tessera::DType::f32, shape, b.data());
    auto tc = make_device_tensor(*device, tessera::DType::f32, shape);
    const auto& record = rt.launch("add_f32", {ta, tb}, {tc});
    std::vector<float> c(576);
    device->copy_to_host(c.data(), tc.buffer, c.size() * sizeof(float));

    int wrong = 0;
    for (int i = 0; i < 576; ++i) wrong += c[i] != a[i] + b[i];
    std::printf("add_f32 of two (3, 192) tensors, %g members in %g instances: %s\n",
                record.metrics.at("members"), record.metrics.at("instances"),
                wrong == 0 ? "all correct" : "WRONG");
    std::printf("c[0] = %g, c[191] = %g, c[575] = %g\n", c[0], c[191], c[575]);
    gcapi::TensorGeometry_t space{};
    space.dims = 2;
    space.sizes[0] = 3;
    space.sizes[1] = 3;
    for (const auto& box : rt.split(space))
      std::printf("instance on tpc%u: offset (%d, %d) size (%d, %d)\n", box.core, box.offset[0],
                  box.offset[1], box.size[0], box.size[1]);
    std::cout << tessera::profile::text_summary(device->profile());
    return wrong == 0 ? 0 : 1;
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
