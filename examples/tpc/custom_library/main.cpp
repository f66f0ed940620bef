// Runs relu through tpc::ops and reports which kernel library served "relu_f32". With the
// custom library (my_kernels.cpp) on TESSERA_KERNEL_PATH its ReLU6 wins over the built-in
// relu (spec 000 §2.9): relu(10) prints 6 instead of 10. Exits 1 when the result does not match
// the library that was found.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/profile/writers.h"
#include "tessera/targets/tpc/kernels.h"

using namespace tessera;

int main() {
  try {
    tpc::register_builtin_kernels();
    auto device = runtime::Device::open("gaudi");
    tpc::Runtime rt(*device);

    const std::vector<float> values = {-3.0f, -0.5f, 0.0f, 2.5f, 6.0f, 10.0f, 100.0f};
    const tpc::DeviceTensor x = tpc::make_device_tensor(
        *device, DType::f32, Shape{static_cast<std::int64_t>(values.size())}, values.data());
    const tpc::DeviceTensor y = tpc::make_device_tensor(*device, DType::f32, x.shape);
    tpc::ops::relu(rt, x, y);
    std::vector<float> out(values.size());
    device->copy_to_host(out.data(), y.buffer, out.size() * sizeof(float));

    const auto limit =
        static_cast<std::size_t>(device->spec().param("tpc.kernel_name_max_bytes").value);
    const tpc::KernelLibrary* lib =
        tpc::KernelRegistry::global().find("relu_f32", limit, tpc::gcapi::DEVICE_ID_GAUDI);
    const bool custom = lib != tpc::builtin_kernel_library().get();
    std::cout << "relu_f32 comes from " << (lib ? lib->origin() : "nowhere") << "\n";
    for (std::size_t i = 0; i < values.size(); ++i)
      std::printf("relu(%g) = %g\n", static_cast<double>(values[i]), static_cast<double>(out[i]));
    const float expected_top = custom ? 6.0f : 100.0f;
    std::cout << (custom ? "the custom ReLU6 overrides the built-in relu_f32\n"
                         : "the built-in relu_f32 ran (set TESSERA_KERNEL_PATH to override it)\n");
    std::cout << profile::text_summary(device->profile());
    return out.back() == expected_top ? 0 : 1;
  } catch (const Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
