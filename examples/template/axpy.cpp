// y = a*x + y on the template target: two element-wise kernels through the op library, their
// results checked on the host and their modeled cycles and pipe busy time printed.
#include <cmath>
#include <cstdio>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/targets/template/kernels/ops.h"

int main() {
  using namespace tessera;
  try {
    auto device = runtime::Device::open("template");
    tmpl::Machine machine(*device);
    const std::int64_t n = 100000;
    std::vector<float> a(n, 0.5f), x(n), y(n);
    for (std::int64_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>(i % 100);
      y[i] = 1.0f;
    }
    auto upload = [&](const std::vector<float>& v) {
      const runtime::Buffer b = device->allocate(v.size() * 4);
      device->copy_to_device(b, v.data(), v.size() * 4);
      return tmpl::DeviceSpan{b, 0, n};
    };
    const tmpl::DeviceSpan da = upload(a), dx = upload(x), dy = upload(y);
    const tmpl::DeviceSpan ax{device->allocate(n * 4), 0, n};
    const auto k1 = tmpl::ops::mul(machine, da, dx, ax);
    const auto k2 = tmpl::ops::add(machine, ax, dy, dy);
    device->synchronize();
    std::vector<float> out(n);
    device->copy_to_host(out.data(), dy.buffer, n * 4);
    for (std::int64_t i = 0; i < n; ++i)
      if (std::fabs(out[i] - (0.5f * x[i] + 1.0f)) > 0) {
        std::printf("element %lld is %g, expected %g\n", static_cast<long long>(i), out[i],
                    0.5f * x[i] + 1.0f);
        return 1;
      }
    const auto& prof = device->profile();
    std::printf(
        "axpy of %lld floats: %s %llu cycles, %s %llu cycles; %llu cycles in all (%.3f us)\n",
        static_cast<long long>(n), k1.name.c_str(), static_cast<unsigned long long>(k1.cycles),
        k2.name.c_str(), static_cast<unsigned long long>(k2.cycles),
        static_cast<unsigned long long>(prof.total_cycles), prof.modeled_seconds() * 1e6);
    for (const auto& [pipe, busy] : prof.pipe_busy_cycles)
      std::printf("  %-12s busy %llu cycles\n", pipe.c_str(),
                  static_cast<unsigned long long>(busy));
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
