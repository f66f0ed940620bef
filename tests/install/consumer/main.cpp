// Runs the built-in relu kernel on the gaudi preset from an installed Tessera, then a TPC-C
// kernel file of its own, built with tessera_add_tpc_kernels and bound by gc_interface.h glue.
#include <cstdio>
#include <vector>

#include "tessera/runtime/device.h"
#include "tessera/targets/tpc/api/tpc.h"
#include "tessera/targets/tpc/kernels.h"

int main() {
  auto device = tessera::runtime::Device::open("gaudi");
  tessera::tpc::register_builtin_kernels();
  tessera::tpc::Runtime rt(*device);
  std::vector<float> in(100, -2.0f);
  in[99] = 3.0f;
  const auto x = tessera::tpc::make_device_tensor(*device, tessera::DType::f32, tessera::Shape{100},
                                                  in.data());
  const auto y =
      tessera::tpc::make_device_tensor(*device, tessera::DType::f32, tessera::Shape{100});
  const auto& record = tessera::tpc::ops::relu(rt, x, y);
  std::vector<float> out(100);
  device->copy_to_host(out.data(), y.buffer, out.size() * sizeof(float));
  std::printf("%s: out[0]=%g out[99]=%g in %llu cycles\n", record.name.c_str(), out[0], out[99],
              static_cast<unsigned long long>(record.cycles));
  if (!(out[0] == 0.0f && out[99] == 3.0f && record.cycles > 0)) return 1;

  tessera::tpc::KernelRegistry registry;
  registry.add_path(CONSUMER_KERNELS);
  tessera::tpc::RuntimeOptions options;
  options.registry = &registry;
  tessera::tpc::Runtime user(*device, options);
  const float factor = 2.5f;
  user.launch("user_scale_f32", {x}, {y}, factor);
  device->copy_to_host(out.data(), y.buffer, out.size() * sizeof(float));
  std::printf("user_scale_f32: out[0]=%g out[99]=%g\n", out[0], out[99]);
  return out[0] == -5.0f && out[99] == 7.5f ? 0 : 1;
}
