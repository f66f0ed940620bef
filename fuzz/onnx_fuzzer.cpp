// libFuzzer target: an ONNX file from a stranger, imported, compiled and run on the reference
// and gaudi backends, as `tessera run FILE --target T` does.
#include <span>

#include "fuzz_common.h"
#include "tessera/compiler/backend.h"
#include "tessera/compiler/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessera;
  fuzz::initialize();
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  fuzz::expect_clean([&] {
    const compiler::Graph graph = compiler::import_onnx_bytes(bytes, "fuzz.onnx", {});
    for (const char* target : {"reference", "gaudi"}) {
      fuzz::expect_clean([&] {
        const auto backend = compiler::create_backend(target);
        const compiler::Plan plan = compiler::compile(graph, *backend);
        fuzz::run_if_small(plan);
      });
    }
  });
  return 0;
}
