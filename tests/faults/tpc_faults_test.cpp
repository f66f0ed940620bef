// TPC device faults: each must be a DeviceFault naming the kernel and the limit involved.
#include <gtest/gtest.h>

#include <string>

#include "tessera/core/error.h"
#include "tessera/runtime/device.h"
#include "tessera/targets/tpc/api/tpc.h"

using namespace tessera;
using namespace tessera::tpc;

namespace {

void one_member(gcapi::HabanaKernelInstantiation_t* inst, KernelFunction k) {
  inst->indexSpaceGeometry.dims = 1;
  inst->indexSpaceGeometry.sizes[0] = 1;
  gcapi::set_kernel(inst, k);
}

void big_vlm(tensor in, tensor out) {
  (void)in;
  (void)out;
  local_array<float64, 321> table;  // 321 * 256 B = 82,176 B > 80 KiB
  table[0] = float64(1.0f);
}

void small_vlm(tensor in, tensor out) {
  (void)in;
  (void)out;
  local_array<float64, 65> table;  // 16,640 B > 16 KiB once special functions are used
  table[0] = v_exp_f32(float64(1.0f));
}

void big_slm(tensor in, tensor out) {
  (void)in;
  (void)out;
  local_array<int, 257> table;  // 1,028 B > 1 KiB
  table[0] = 1;
}

template <int N>
struct Many {
  static void kernel(tensor, tensor, tensor, tensor, tensor, tensor, tensor, tensor, tensor, tensor,
                     tensor, tensor, tensor, tensor, tensor, tensor, tensor) {}
};

// Each member adds the running value left by the member before it: order-dependent.
void prefix_sum(tensor in, tensor out) {
  const int5 s = get_index_space_offset();
  const int5 e = s + get_index_space_size();
  for (int i = s[0]; i < e[0]; ++i) {
    int5 c = {i * 64, 0, 0, 0, 0};
    int5 prev = {(i - 1) * 64, 0, 0, 0, 0};
    float64 x = v_f32_ld_tnsr_i(c, in);
    float64 p = v_f32_ld_tnsr_i(prev, out);  // pad (0) for the first member
    f32_st_tnsr_i_v(c, out, v_f32_add_v_v(x, p));
    aso();
  }
}

struct TpcFaults : ::testing::Test {
  std::unique_ptr<runtime::Device> dev = runtime::Device::open("gaudi");
  std::shared_ptr<KernelSet> lib = std::make_shared<KernelSet>("fault-kernels");
  KernelRegistry registry;
  RuntimeOptions options() {
    RuntimeOptions o;
    o.registry = &registry;
    return o;
  }
  void SetUp() override { registry.add_builtin_library(lib); }
  DeviceTensor tensor64() { return make_device_tensor(*dev, DType::f32, Shape{64 * 16}); }
};

void expect_fault(const std::function<void()>& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "expected a DeviceFault";
  } catch (const DeviceFault& e) {
    const std::string what = e.what();
    for (const auto& p : parts)
      EXPECT_NE(what.find(p), std::string::npos) << what << "\nmissing: " << p;
  }
}

}  // namespace

TEST_F(TpcFaults, VectorLocalMemoryOverflow) {
  lib->add("big_vlm_f32",
           [](const gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* inst) {
             one_member(inst, tpc_kernel<&big_vlm>());
             return gcapi::GLUE_SUCCESS;
           });
  lib->add("small_vlm_f32",
           [](const gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* inst) {
             one_member(inst, tpc_kernel<&small_vlm>());
             inst->flags.specialFunctionsUsed = 1;
             return gcapi::GLUE_SUCCESS;
           });
  lib->add("big_slm_f32",
           [](const gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* inst) {
             one_member(inst, tpc_kernel<&big_slm>());
             return gcapi::GLUE_SUCCESS;
           });
  Runtime rt(*dev, options());
  auto t = tensor64();
  expect_fault([&] { rt.launch("big_vlm_f32", {t}, {t}); },
               {"big_vlm_f32", "vlm", "82176", "81920"});
  expect_fault([&] { rt.launch("small_vlm_f32", {t}, {t}); },
               {"small_vlm_f32", "16640", "16384", "specialFunctionsUsed"});
  expect_fault([&] { rt.launch("big_slm_f32", {t}, {t}); }, {"big_slm_f32", "slm", "1028", "1024"});
  // Glue that does not declare special functions (as Habana's never does): the program's call
  // decides, and its vector local memory is then too large.
  lib->add("undeclared_vlm_f32",
           [](const gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* inst) {
             one_member(inst, tpc_kernel<&small_vlm>());
             return gcapi::GLUE_SUCCESS;
           });
  expect_fault([&] { rt.launch("undeclared_vlm_f32", {t}, {t}); },
               {"undeclared_vlm_f32", "special functions", "16 KiB", "16,640 B"});
}

TEST_F(TpcFaults, MoreTensorsThanTheProgramCanAddress) {
  lib->add("many_f32",
           [](const gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* inst) {
             one_member(inst, tpc_kernel<&Many<0>::kernel>());
             return gcapi::GLUE_SUCCESS;
           });
  Runtime rt(*dev, options());
  auto t = tensor64();
  std::vector<DeviceTensor> ins(9, t), outs(8, t);
  expect_fault([&] { rt.launch("many_f32", ins, outs); }, {"many_f32", "17 tensors", "16"});
  // With printf, one slot fewer: 16 tensors is too many.
  lib->add("many_printf_f32",
           [](const gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* inst) {
             KernelFunction k = tpc_kernel<&Many<1>::kernel>();
             k.tensor_params = 16;
             one_member(inst, k);
             inst->flags.printfUsed = 1;
             return gcapi::GLUE_SUCCESS;
           });
  std::vector<DeviceTensor> ins8(8, t), outs8(8, t);
  expect_fault([&] { rt.launch("many_printf_f32", ins8, outs8); },
               {"many_printf_f32", "16 tensors", "at most 15", "printf"});
}

TEST_F(TpcFaults, KernelNameLongerThanTheLimit) {
  const std::string name(65, 'k');
  lib->add(name, [](const gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* inst) {
    one_member(inst, tpc_kernel<&big_slm>());
    return gcapi::GLUE_SUCCESS;
  });
  Runtime rt(*dev, options());
  auto t = tensor64();
  expect_fault([&] { rt.launch("anything_f32", {t}, {t}); },
               {name, "65 bytes", "64", "fault-kernels"});
}

// Doubles its input in place through scalar addresses, then copies it to the output.
void doubles_its_input(tensor in, tensor out) {
  const int5 s = get_index_space_offset();
  const int5 e = s + get_index_space_size();
  for (int m = s[0]; m < e[0]; ++m) {
    int5 c = {m * 64, 0, 0, 0, 0};
    float* p = a_gen_addr_i(c, in);
    *p = *p * 2.0f;
    f32_st_tnsr_i_v(c, out, v_f32_ld_tnsr_i(c, in));
  }
}

TEST_F(TpcFaults, CheckOrderReportsAKernelThatWritesItsInput) {
  lib->add("doubles_f32",
           [](const gcapi::HabanaKernelParams_t* p, gcapi::HabanaKernelInstantiation_t* inst) {
             return gcapi::elementwise_glue(p, inst, 1, 1, gcapi::DATA_F32, 64,
                                            tpc_kernel<&doubles_its_input>());
           });
  RuntimeOptions o = options();
  o.check_order = true;
  Runtime rt(*dev, o);
  std::vector<float> ones(64 * 4, 1.0f);
  auto in = make_device_tensor(*dev, DType::f32, Shape{64 * 4}, ones.data());
  auto out = make_device_tensor(*dev, DType::f32, Shape{64 * 4});
  expect_fault([&] { rt.launch("doubles_f32", {in}, {out}); },
               {"doubles_f32", "check-order", "input tensor 0", "byte 2"});
}

TEST_F(TpcFaults, CheckOrderFindsOrderDependentKernels) {
  lib->add("prefix_f32", [](const gcapi::HabanaKernelParams_t* p,
                            gcapi::HabanaKernelInstantiation_t* inst) {
    return gcapi::elementwise_glue(p, inst, 1, 1, gcapi::DATA_F32, 64, tpc_kernel<&prefix_sum>());
  });
  RuntimeOptions o = options();
  o.check_order = true;
  Runtime rt(*dev, o);
  std::vector<float> ones(64 * 16, 1.0f);
  auto in = make_device_tensor(*dev, DType::f32, Shape{64 * 16}, ones.data());
  auto out = make_device_tensor(*dev, DType::f32, Shape{64 * 16});
  expect_fault([&] { rt.launch("prefix_f32", {in}, {out}); },
               {"prefix_f32", "check-order", "order"});
  // Without check-order the same launch runs (and its result depends on the split).
  rt.set_check_order(false);
  EXPECT_NO_THROW(rt.launch("prefix_f32", {in}, {out}));
}

namespace {
// Local memory by address (tpc-intrinsics.h LD_L / ST_L / LD_L_V / ST_L_V, spec 000 §2.3.3).
void vlm_past_end(tensor, tensor) {
  v_f32_st_l_v(80 * 1024, float64(1.0f));
}
void vlm_misaligned(tensor, tensor) {
  v_f32_st_l_v_low(128, float64(1.0f));  // a half takes 128-byte chunks
  (void)v_f32_ld_l_v_b(128);             // a whole register 256-byte ones
}
void slm_past_end(tensor, tensor) {
  (void)s_i32_ld_l(1024);
}
void slm_misaligned(tensor, tensor) {
  s_u8_st_l(2, 1);
}
void past_special_limit(tensor, tensor) {
  v_f32_st_l_v(16 * 1024, v_exp_f32(float64(1.0f)));
}
void local_switch(tensor, tensor) {
  (void)s_f32_ld_l(0, SW_MMIO);
}
}  // namespace

TEST_F(TpcFaults, LocalMemoryAccessPastTheMemoryOrOffItsChunks) {
  auto add = [&](const char* name, KernelFunction k, bool special) {
    lib->add(name, [k, special](const gcapi::HabanaKernelParams_t*,
                                gcapi::HabanaKernelInstantiation_t* inst) {
      one_member(inst, k);
      inst->flags.specialFunctionsUsed = special ? 1 : 0;
      return gcapi::GLUE_SUCCESS;
    });
  };
  add("vlm_past_end", tpc_kernel<&vlm_past_end>(), false);
  add("vlm_misaligned", tpc_kernel<&vlm_misaligned>(), false);
  add("slm_past_end", tpc_kernel<&slm_past_end>(), false);
  add("slm_misaligned", tpc_kernel<&slm_misaligned>(), false);
  add("special_declared", tpc_kernel<&past_special_limit>(), true);
  add("special_undeclared", tpc_kernel<&past_special_limit>(), false);
  add("local_switch", tpc_kernel<&local_switch>(), false);
  Runtime rt(*dev, options());
  auto t = tensor64();
  auto run = [&](const char* name) { return [&rt, &t, name] { rt.launch(name, {t}, {t}); }; };
  expect_fault(run("vlm_past_end"),
               {"tpc0 kernel vlm_past_end", "v_f32_st_l_v", "0x14000", "256 B", "vlm", "80 KiB"});
  expect_fault(run("vlm_misaligned"), {"vlm_misaligned", "v_f32_ld_l_v_b", "0x80", "256-byte"});
  expect_fault(run("slm_past_end"), {"slm_past_end", "s_i32_ld_l", "0x400", "slm", "1 KiB"});
  expect_fault(run("slm_misaligned"), {"slm_misaligned", "s_u8_st_l", "0x2", "4-byte"});
  // Special functions leave 16 KiB: at the access when the glue says so, after the run otherwise
  // (the hardware's loader decides from the binary).
  expect_fault(run("special_declared"),
               {"special_declared", "0x4000", "16 KiB", "special functions"});
  expect_fault(run("special_undeclared"), {"special_undeclared", "special functions", "16 KiB"});
  // A switch Tessera does not simulate is a UserError naming it.
  try {
    rt.launch("local_switch", {t}, {t});
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("SW_MMIO"), std::string::npos) << e.what();
  }
}
