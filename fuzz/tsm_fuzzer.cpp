// libFuzzer target: a Tessera model file (.tsm) from a stranger, decoded, lowered for the target
// it names and run, as `tessera run FILE.tsm` does. The checksums in the header would stop almost
// every mutation at the first check, so the harness recomputes them: the fuzzer then reaches the
// JSON graph and the weights behind them (the checksum checks have their own unit tests).
#include <cstring>
#include <span>
#include <vector>

#include "fuzz_common.h"
#include "tessera/compiler/backend.h"
#include "tessera/compiler/model_file.h"

namespace {

constexpr std::size_t kHeaderBytes = 48;

void fix_checksums(std::vector<std::byte>& file) {
  if (file.size() < kHeaderBytes) return;
  std::uint64_t json_bytes = 0, blob_bytes = 0;
  std::memcpy(&json_bytes, file.data() + 16, 8);
  std::memcpy(&blob_bytes, file.data() + 24, 8);
  const std::uint64_t body = file.size() - kHeaderBytes;
  if (json_bytes > body || blob_bytes != body - json_bytes) return;
  const std::span<const std::byte> all(file);
  const std::uint64_t json_sum = tessera::compiler::fnv1a64(all.subspan(kHeaderBytes, json_bytes));
  const std::uint64_t blob_sum =
      tessera::compiler::fnv1a64(all.subspan(kHeaderBytes + json_bytes, blob_bytes));
  std::memcpy(file.data() + 32, &json_sum, 8);
  std::memcpy(file.data() + 40, &blob_sum, 8);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessera;
  fuzz::initialize();
  std::vector<std::byte> file(reinterpret_cast<const std::byte*>(data),
                              reinterpret_cast<const std::byte*>(data) + size);
  fix_checksums(file);
  fuzz::expect_clean([&] {
    compiler::ModelFile model = compiler::decode_model(file, "fuzz.tsm");
    const auto backend = compiler::create_backend(model.target);
    compiler::Plan plan = compiler::lower_graph(std::move(model.graph), *backend, model.device);
    plan.model_file = "fuzz.tsm";
    fuzz::run_if_small(plan);
  });
  return 0;
}
