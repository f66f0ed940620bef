// TPC device faults, each a DeviceFault naming the kernel and the limit involved, and the
// UserErrors a kernel meets at run time for what Tessera does not simulate.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "../tpc/tpc_test_util.h"

using namespace tessera;
using namespace tessera::tpc;

namespace {

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

struct TpcFaults : tpc_test::KernelFixture {
  TpcFaults() : KernelFixture("fault-kernels") {}
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
  add_one_member("big_vlm_f32", tpc_kernel<&big_vlm>());
  add_one_member("small_vlm_f32", tpc_kernel<&small_vlm>(), {.special = true});
  add_one_member("big_slm_f32", tpc_kernel<&big_slm>());
  Runtime rt(*dev, options());
  auto t = tensor64();
  expect_fault([&] { rt.launch("big_vlm_f32", {t}, {t}); },
               {"big_vlm_f32", "vlm", "82176", "81920"});
  expect_fault([&] { rt.launch("small_vlm_f32", {t}, {t}); },
               {"small_vlm_f32", "16640", "16384", "specialFunctionsUsed"});
  expect_fault([&] { rt.launch("big_slm_f32", {t}, {t}); }, {"big_slm_f32", "slm", "1028", "1024"});
  // Glue that does not declare special functions (as Habana's never does): the program's call
  // decides, and its vector local memory is then too large.
  add_one_member("undeclared_vlm_f32", tpc_kernel<&small_vlm>());
  expect_fault([&] { rt.launch("undeclared_vlm_f32", {t}, {t}); },
               {"undeclared_vlm_f32", "special functions", "16 KiB", "16,640 B"});
}

TEST_F(TpcFaults, MoreTensorsThanTheProgramCanAddress) {
  add_one_member("many_f32", tpc_kernel<&Many<0>::kernel>());
  Runtime rt(*dev, options());
  auto t = tensor64();
  std::vector<DeviceTensor> ins(9, t), outs(8, t);
  expect_fault([&] { rt.launch("many_f32", ins, outs); }, {"many_f32", "17 tensors", "16"});
  // With printf, one slot fewer: 16 tensors is too many.
  KernelFunction many_printf = tpc_kernel<&Many<1>::kernel>();
  many_printf.tensor_params = 16;
  add_one_member("many_printf_f32", many_printf, {.printf_used = true});
  std::vector<DeviceTensor> ins8(8, t), outs8(8, t);
  expect_fault([&] { rt.launch("many_printf_f32", ins8, outs8); },
               {"many_printf_f32", "16 tensors", "at most 15", "printf"});
}

TEST_F(TpcFaults, KernelNameLongerThanTheLimit) {
  const std::string name(65, 'k');
  add_one_member(name, tpc_kernel<&big_slm>());
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
  lib->add("doubles_f32", tpc_test::glue_for(tpc_kernel<&doubles_its_input>()));
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
  lib->add("prefix_f32", tpc_test::glue_for(tpc_kernel<&prefix_sum>()));
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
    add_one_member(name, k, {.special = special});
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

namespace {
// sin(x) / x on [0, pi/4] as Habana's sin_f32 evaluates it (C0 + (C1 + C2 t) t on
// e_fp32_sin_cos), with the entries of the form SHIFT / VARIANT and, for bf16, log2 on the
// e_bf16_log2_linear_interleaved_m5 table.
template <int SHIFT, int VARIANT>
void sin_over_x_lut(tensor in, tensor out) {
  const int5 c = {0, 0, 0, 0, 0};
  const float64 x = v_f32_ld_tnsr_b(c, in);
  const uint64_float64 e = v_f32_get_lut_entry_and_interval_start_b(x, SHIFT, VARIANT);
  const float64 t = v_f32_sub_b(x, e.v2);
  const float64 c0 = v_f32_lookup_1c(e.v1, e_fp32_sin_cos, SW_BV32, float64(0.0f));
  const float64_pair_t c12 = v_f32_lookup_2c(e.v1, e_fp32_sin_cos, SW_BV32, float64_pair_t{});
  f32_st_tnsr_i_v(c, out, v_f32_mac_b(v_f32_mac_b(c12.v2, t, c12.v1), t, c0));
}
template <int SHIFT>
void log_bf16_lut(tensor in, tensor out) {
  const int5 c = {0, 0, 0, 0, 0};
  const bfloat128 x = v_bf16_ld_tnsr_b(c, in);
  const ushort128_bfloat128 e = v_bf16_get_lut_entry_and_interval_start_b(x, SHIFT, SW_LUT_LOG);
  const bfloat128_pair_t k =
      v_bf16_lookup_2c(e.v1, e_bf16_log2_linear_interleaved_m5, SW_BV16, bfloat128_pair_t{});
  v_bf16_st_tnsr(c, out, v_bf16_mac_b(k.v2, v_bf16_sub_b(x, e.v2), k.v1));
}
}  // namespace

// Tessera's tables are fitted for one entry form each; entries of another form would index
// other intervals and give wrong values without any fault, so the lookup refuses them.
TEST_F(TpcFaults, LookupWithEntriesOfAnotherFormThanItsTableIsAUserError) {
  add_one_member("sin_shift17", tpc_kernel<&sin_over_x_lut<17, SW_LUT_SIN_COS>>());
  add_one_member("sin_shift18", tpc_kernel<&sin_over_x_lut<18, SW_LUT_SIN_COS>>());
  add_one_member("sin_default", tpc_kernel<&sin_over_x_lut<17, 0>>());
  add_one_member("log_shift1", tpc_kernel<&log_bf16_lut<1>>());
  Runtime rt(*dev, options());
  std::vector<float> xs(64);
  for (int i = 0; i < 64; ++i) xs[i] = 0.78f * static_cast<float>(i) / 64;
  auto in = make_device_tensor(*dev, DType::f32, Shape{64}, xs.data());
  auto out = make_device_tensor(*dev, DType::f32, Shape{64});
  // The form the table was fitted for computes sin(x) / x.
  rt.launch("sin_shift17", {in}, {out});
  std::vector<float> got(64);
  dev->copy_to_host(got.data(), out.buffer, sizeof(float) * 64);
  for (int i = 1; i < 64; ++i) EXPECT_NEAR(got[i], std::sin(xs[i]) / xs[i], 2e-7) << xs[i];

  auto message = [&](const char* name, const DeviceTensor& i, const DeviceTensor& o) {
    return tpc_test::user_error_of([&] { rt.launch(name, {i}, {o}); });
  };
  // Shift 18 keeps every entry inside the table (32 intervals of 128): only the form says so.
  for (const char* part :
       {"tpc0 kernel sin_shift18", "v_f32_lookup_1c", "e_fp32_sin_cos (130)",
        "fitted for f32 entries from SW_LUT_SIN_COS with shift 17",
        "only for f32 entries from SW_LUT_SIN_COS with shift 18", "Special-function lookups"})
    EXPECT_NE(message("sin_shift18", in, out).find(part), std::string::npos) << part;
  EXPECT_NE(message("sin_default", in, out).find("only for f32 entries from the default variant (0) "
                                                 "with shift 17"),
            std::string::npos);
  auto in16 = make_device_tensor(*dev, DType::bf16, Shape{128});
  auto out16 = make_device_tensor(*dev, DType::bf16, Shape{128});
  const std::string log = message("log_shift1", in16, out16);
  for (const char* part : {"v_bf16_lookup_2c", "e_bf16_log2_linear_interleaved_m5 (136)",
                           "fitted for bf16 entries from SW_LUT_LOG with shift 0",
                           "only for bf16 entries from SW_LUT_LOG with shift 1"})
    EXPECT_NE(log.find(part), std::string::npos) << part << "\n" << log;
}

namespace {
// LD_TNSR's unpacking, as Gaudi2 kernels write it (tpc-defs.h's switches).
void unpacking_load(tensor in, tensor out) {
  const int5 c = {0, 0, 0, 0, 0};
  const uint64 bits = v_u32_ld_tnsr_b(c, in, SW_UNPACK | SW_UNPCK_16_TO_32);
  v_u32_st_tnsr(c, out, bits);
}
void unpack_type_only(tensor in, tensor out) {
  const int5 c = {0, 0, 0, 0, 0};
  v_i16_st_tnsr(c, out, v_i16_ld_tnsr_partial_b(c, in, 63, 0, SW_UNPCK_8_TO_16));
}
}  // namespace

// tpc-intrinsics.h gives LD_TNSR's SW_UNPACK to Greco and later only, and tpc_llvm's gaudi
// processor lacks FeatureTnsrUnpack: on Gaudi it is a UserError saying so and what to use.
TEST_F(TpcFaults, TensorLoadWithUnpackIsAUserErrorOnGaudi) {
  add_one_member("unpacking_load", tpc_kernel<&unpacking_load>());
  add_one_member("unpack_type_only", tpc_kernel<&unpack_type_only>());
  Runtime rt(*dev, options());
  auto t = tensor64();
  const std::string unpack = tpc_test::user_error_of([&] { rt.launch("unpacking_load", {t}, {t}); });
  for (const char* part : {"v_u32_ld_tnsr_b", "SW_UNPACK", "0x10", "__greco_plus__",
                           "FeatureTnsrUnpack", "v_<t>_unpack_b", "SW_LINEAR"})
    EXPECT_NE(unpack.find(part), std::string::npos) << part << "\n" << unpack;
  const std::string type_only =
      tpc_test::user_error_of([&] { rt.launch("unpack_type_only", {t}, {t}); });
  EXPECT_NE(type_only.find("v_i16_ld_tnsr_partial_b: SW_UNPACK / SW_UNPCK_* (switches 0x2)"),
            std::string::npos)
      << type_only;
}
