// The printf test of spec 000 §2.7.3: prints scalars of each type and the lane ids of a vector.
#include <cstdio>
#include <iostream>

#include "tessera/core/error.h"
#include "tessera/profile/writers.h"
#include "tessera/runtime/device.h"
#include "tessera/targets/tpc/api/tpc.h"

using namespace tessera::tpc;
namespace tpc = tessera::tpc;

// <cstdio>'s printf is visible here too, so the TPC one is named tpc::printf.
void printTest(tensor unused_in, tensor unused_out) {
  (void)unused_in;
  (void)unused_out;
  char char_val = static_cast<char>(0xff);
  unsigned char uchar_val = 0xff;
  short short_val = static_cast<short>(0xb221);
  unsigned short ushort_val = 0xb221;  // 45,601
  int int_val = static_cast<int>(0x8455CDD1u);
  unsigned int uint_val = 0x8455CDD1u;  // 2,220,215,761
  bf16 bf16_val = 46.25;
  float float_val = 15.23423f;
  uint64 vec_lane_id = V_LANE_ID_32;  // values 0-63

  tpc::printf("Test string!\n");
  tpc::printf("char value is %hhd\n", char_val);
  tpc::printf("unsigend char value is %hhu\n", uchar_val);
  tpc::printf("short value is %hd\n", short_val);
  tpc::printf("unsigend short value is %hu\n", ushort_val);
  tpc::printf("int value is %d\n", int_val);
  tpc::printf("unsigend int value is %u\n", uint_val);
  tpc::printf("bfloat value is %bf\n", bf16_val);
  tpc::printf("float value is %f\n", float_val);
  tpc::printf("Vector Print:\n");
  for (int i = 0; i < 64; i++) tpc::printf("%u, ", vec_lane_id[i]);
  tpc::printf("\n");
}

int main() {
  try {
    auto device = tessera::runtime::Device::open("gaudi");
    auto library = std::make_shared<KernelSet>("printf-example");
    library->add("print_test",
                 [](const gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* inst) {
                   inst->indexSpaceGeometry.dims = 1;
                   inst->indexSpaceGeometry.sizes[0] = 1;
                   gcapi::set_kernel(inst, tpc_kernel<&printTest>());
                   inst->flags.printfUsed = 1;  // #pragma tpc_printf(enable)
                   return gcapi::GLUE_SUCCESS;
                 });
    KernelRegistry registry;
    registry.add_builtin_library(library);
    RuntimeOptions options;
    options.registry = &registry;
    Runtime rt(*device, options);
    auto t = make_device_tensor(*device, tessera::DType::f32, tessera::Shape{1});
    rt.launch("print_test", {t}, {t});
    std::cout << tessera::profile::text_summary(device->profile());
    return 0;
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
