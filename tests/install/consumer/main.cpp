// Runs the built-in relu kernel on the gaudi preset from an installed Tessera.
#include <cstdio>
#include <vector>

#include "tessera/runtime/device.h"
#include "tessera/targets/tpc/kernels.h"

int main() {
  auto device = tessera::runtime::Device::open("gaudi");
  tessera::tpc::register_builtin_kernels();
  tessera::tpc::Runtime rt(*device);
  std::vector<float> in(100, -2.0f);
  in[99] = 3.0f;
  const auto x = tessera::tpc::make_device_tensor(*device, tessera::DType::f32,
                                                  tessera::Shape{100}, in.data());
  const auto y = tessera::tpc::make_device_tensor(*device, tessera::DType::f32, tessera::Shape{100});
  const auto& record = tessera::tpc::ops::relu(rt, x, y);
  std::vector<float> out(100);
  device->copy_to_host(out.data(), y.buffer, out.size() * sizeof(float));
  std::printf("%s: out[0]=%g out[99]=%g in %llu cycles\n", record.name.c_str(), out[0], out[99],
              static_cast<unsigned long long>(record.cycles));
  return out[0] == 0.0f && out[99] == 3.0f && record.cycles > 0 ? 0 : 1;
}
