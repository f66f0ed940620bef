// libFuzzer target: a bmodel file (docs/targets/bm.md, "bmodel files") from a stranger,
// registered with bmnet_register_bmodel and run once on zero input, as a BMNNSDK program does.
// The harness recomputes the header's checksum, so mutations reach the JSON section and the
// command buffers behind it. The C API reports errors as codes: an error whose kind is neither
// a user error nor a device fault is a finding.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <libbmruntime/bmruntime.h>
#include <libbmruntime/bmruntime_bmnet.h>

#include "fuzz_common.h"
#include "tessera/compiler/model_file.h"

namespace {

// magic[8], version, reserved (u32), json bytes, blob bytes, checksum (u64): 40 bytes.
constexpr std::size_t kHeaderBytes = 40;

void fix_checksum(std::vector<std::uint8_t>& file) {
  if (file.size() < kHeaderBytes) return;
  // FNV-1a of the JSON then the blob is FNV-1a of the bytes after the header.
  const std::uint64_t sum = tessera::compiler::fnv1a64(
      std::as_bytes(std::span(file).subspan(kHeaderBytes)));
  std::memcpy(file.data() + 32, &sum, 8);
}

void check_kind(const char* call) {
  const tessera_bm_error_kind_t kind = tessera_bm_last_error_kind();
  if (kind == TESSERA_BM_OK || kind == TESSERA_BM_USER_ERROR || kind == TESSERA_BM_DEVICE_FAULT)
    return;
  std::fprintf(stderr, "fuzz: %s: unexpected error: %s\n", call, tessera_bm_last_error());
  std::abort();
}

// Inputs and outputs above this are only registered, not run (a run costs their bytes twice).
constexpr std::size_t kRunBytes = std::size_t{16} << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tessera;
  fuzz::initialize();
  std::vector<std::uint8_t> file(data, data + size);
  fix_checksum(file);
  // bmnet_register_bmodel reads a path, as Bitmain's does.
  static const std::string path = fmt::format("/tmp/tessera_bmodel_fuzz_{}.bmodel", getpid());
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(file.data()), static_cast<std::streamsize>(size));
  }
  fuzz::expect_clean([&] {
    tessera_bm_clear_error();
    bmctx_t ctx = nullptr;
    if (bm_init(0, &ctx) != BM_SUCCESS) return check_kind("bm_init");
    bmnet_t net = nullptr;
    if (bmnet_register_bmodel(ctx, path.c_str(), &net) == BM_SUCCESS) {
      bmnet_output_info_t info{};
      if (bmnet_get_output_info(net, &info) == BM_SUCCESS) {
        const bmmem_device_t in = bmnet_input_devmem(net);
        const std::size_t in_bytes = in ? bmmem_device_size(ctx, in) : 0;
        if (in_bytes <= kRunBytes && info.output_size <= kRunBytes) {
          std::vector<std::uint8_t> x(in_bytes), y(info.output_size);
          bmnet_inference(net, x.data(), y.data());
        }
      }
      check_kind("bmnet_inference");
      bmnet_cleanup(net);
    }
    check_kind("bmnet_register_bmodel");
    bm_exit(ctx);
  });
  return 0;
}
