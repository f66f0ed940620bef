#include "fuzz_common.h"

#include <cstdlib>

#include "tessera/runtime/device.h"
#include "tessera/targets/registry.h"

namespace tessera::fuzz {

void initialize() {
  static bool done = false;
  if (done) return;
  done = true;
  // Declared sizes above this are refused before allocation, which is the behaviour under test;
  // it also keeps every input well inside libFuzzer's default 2 GiB RSS limit.
  setenv("TESSERA_HOST_MEMORY_LIMIT", "256M", 0);
  setenv("TESSERA_THREADS", "1", 0);
  setenv("TESSERA_LOG_LEVEL", "OFF", 0);
  targets::register_all_backends();
}

void expect_clean(const std::function<void()>& body) {
  try {
    body();
  } catch (const UserError&) {
  } catch (const DeviceFault&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: unexpected exception: %s\n", e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "fuzz: unexpected non-standard exception\n");
    std::abort();
  }
}

void run_if_small(const compiler::Plan& plan) {
  // A few hundred thousand elements run in milliseconds on reference and the simulator.
  std::uint64_t elements = 0;
  for (const auto& v : plan.graph.values)
    elements += static_cast<std::uint64_t>(v.shape.element_count());
  if (elements > (std::uint64_t{1} << 18)) return;
  auto device = runtime::Device::open(plan.device);
  compiler::PlanRunner runner(plan, *device);
  runner.run(compiler::random_inputs(plan.graph, 1));
}

}  // namespace tessera::fuzz
