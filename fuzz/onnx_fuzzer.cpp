// libFuzzer target: an ONNX file from a stranger, imported, compiled and run on every registered
// backend, as `tessera run FILE --target T` does.
#include <span>

#include "fuzz_common.h"
#include "tessera/compiler/backend.h"
#include "tessera/compiler/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessera;
  fuzz::initialize();
  static const std::vector<compiler::BackendInfo> backends = compiler::registered_backends();
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  fuzz::expect_clean([&] {
    const compiler::Graph graph = compiler::import_onnx_bytes(bytes, "fuzz.onnx", {});
    for (const auto& info : backends) {
      fuzz::expect_clean([&] {
        const auto backend = info.create();
        const compiler::Plan plan = compiler::compile(graph, *backend);
        fuzz::run_if_small(plan);
      });
    }
  });
  return 0;
}
