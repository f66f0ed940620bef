// The TPC executor: index-space split, pad/cull, glue validation, the f32 fallback, printf,
// local memory, LFSR, coherency warnings, check-order, cost-model properties (latency, pipelining,
// shared HBM) and determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <sstream>

#include "tessera/sim/scheduler.h"
#include "tpc_test_util.h"

using namespace tpc_test;

namespace {

struct Fixture : ::testing::Test {
  std::unique_ptr<runtime::Device> dev = open_gaudi();
  std::shared_ptr<KernelSet> lib = std::make_shared<KernelSet>("test-kernels");
  KernelRegistry registry;
  std::ostringstream printed;
  RuntimeOptions options() {
    RuntimeOptions o;
    o.registry = &registry;
    o.printf_stream = &printed;
    return o;
  }
  void SetUp() override { registry.add_builtin_library(lib); }
};

std::vector<float> ramp(std::size_t n, float scale = 1.0f, float offset = 0.0f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>(i);
  return v;
}

}  // namespace

TEST_F(Fixture, AbsOver128ElementsUsesTwoMembers) {
  lib->add("abs_f32", glue_for(tpc_kernel<&abs_f32>()));
  Runtime rt(*dev, options());
  auto in = upload(*dev, DType::f32, Shape{128}, ramp(128, -1.0f, 20.0f));
  auto out = make_device_tensor(*dev, DType::f32, Shape{128});
  const auto& rec = rt.launch("abs_f32", {in}, {out});
  const auto got = download<float>(*dev, out);
  for (int i = 0; i < 128; ++i) EXPECT_EQ(got[i], std::fabs(20.0f - static_cast<float>(i)));
  EXPECT_EQ(rec.metrics.at("members"), 2);
  EXPECT_EQ(rec.metrics.at("slot.load.issues"), 2);
  EXPECT_EQ(rec.metrics.at("slot.store.issues"), 2);
  EXPECT_EQ(rec.bytes_read, 512u);
  EXPECT_EQ(rec.bytes_written, 512u);
  EXPECT_EQ(rec.cycles_per_core.size(), 8u);
  EXPECT_GT(rec.cycles, 0u);
}

TEST_F(Fixture, AddOverThreeByThreeIndexSpace) {
  lib->add("add_f32", glue_for(tpc_kernel<&add_f32>(), {.inputs = 2}));
  Runtime rt(*dev, options());
  auto a = upload(*dev, DType::f32, Shape{192, 3}, ramp(576));
  auto b = upload(*dev, DType::f32, Shape{192, 3}, ramp(576, 2.0f, 1.0f));
  auto c = make_device_tensor(*dev, DType::f32, Shape{192, 3});
  const auto& rec = rt.launch("add_f32", {a, b}, {c});
  const auto got = download<float>(*dev, c);
  for (int i = 0; i < 576; ++i) EXPECT_EQ(got[i], 3.0f * i + 1.0f);
  EXPECT_EQ(rec.metrics.at("members"), 9);
}

TEST_F(Fixture, SplitCoversEveryMemberOnceAndDependsOnlyOnThePreset) {
  Runtime rt(*dev, options());
  gcapi::TensorGeometry_t g{};
  g.dims = 3;
  g.sizes[0] = 5;
  g.sizes[1] = 7;
  g.sizes[2] = 3;
  const auto boxes = rt.split(g);
  EXPECT_LE(boxes.size(), 8u);
  std::vector<int> hits(5 * 7 * 3, 0);
  for (const auto& b : boxes)
    for (int z = b.offset[2]; z < b.offset[2] + b.size[2]; ++z)
      for (int y = b.offset[1]; y < b.offset[1] + b.size[1]; ++y)
        for (int x = b.offset[0]; x < b.offset[0] + b.size[0]; ++x) ++hits[(z * 7 + y) * 5 + x];
  for (int h : hits) EXPECT_EQ(h, 1);
}

void shifted_copy(tensor in, tensor out, int shift) {
  const int5 s = get_index_space_offset();
  const int5 e = s + get_index_space_size();
  for (int i = s[0]; i < e[0]; ++i) {
    int5 c = {i * 64, 0, 0, 0, 0};
    int5 src = c;
    src[0] -= shift;
    f32_st_tnsr_i_v(c, out, v_f32_ld_tnsr_i(src, in));
  }
}

TEST_F(Fixture, ReadsOutsideTheTensorReturnThePadValue) {
  lib->add("shift_f32", glue_for(tpc_kernel<&shifted_copy>(), {.pad = 7.5f}));
  Runtime rt(*dev, options());
  auto in = upload(*dev, DType::f32, Shape{100}, ramp(100, 1.0f, 1.0f));
  auto out = make_device_tensor(*dev, DType::f32, Shape{100});
  const int shift = 10;
  rt.launch("shift_f32", {in}, {out}, shift);
  const auto got = download<float>(*dev, out);
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(got[i], i < shift ? 7.5f : static_cast<float>(i - shift + 1));
}

void store_at(tensor in, tensor out, int x0, int x1) {
  (void)in;
  f32_st_tnsr_i_v({x0, x1, 0, 0, 0}, out, float64(5.0f));
}

TEST_F(Fixture, WritesOutsideTheTensorAreCulledLaneByLane) {
  // One member; the glue's index space is 1, the kernel writes at chosen coordinates.
  lib->add("store_at",
           [](const gcapi::HabanaKernelParams_t* p, gcapi::HabanaKernelInstantiation_t* inst) {
             inst->indexSpaceGeometry.dims = 1;
             inst->indexSpaceGeometry.sizes[0] = 1;
             gcapi::set_kernel(inst, tpc_kernel<&store_at>());
             gcapi::set_scalar_params(inst->kernel, static_cast<const int*>(p->NodeParams)[0],
                                      static_cast<const int*>(p->NodeParams)[1]);
             inst->inputTensorAccessPattern[0].allRequired = 1;
             inst->outputTensorAccessPattern[0].allRequired = 1;
             return gcapi::GLUE_SUCCESS;
           });
  Runtime rt(*dev, options());
  auto in = make_device_tensor(*dev, DType::f32, Shape{1});
  // A 100x2 output inside a larger buffer: the guard after it must stay untouched.
  DeviceTensor out;
  out.dtype = DType::f32;
  out.shape = Shape{100, 2};
  out.buffer = dev->allocate(4 * 300);
  std::vector<float> zeros(300, 0.0f);
  dev->copy_to_device(out.buffer, zeros.data(), zeros.size() * 4);
  struct {
    int x0, x1;
  } p1{70, 1}, p2{-10, 0}, p3{0, 2};
  rt.launch("store_at", {in}, {out}, p1);  // lanes 70..99 of row 1 written, 100..133 culled
  rt.launch("store_at", {in}, {out}, p2);  // lanes 0..53 of row 0 written, -10..-1 culled
  rt.launch("store_at", {in}, {out}, p3);  // row 2 is outside: fully culled
  std::vector<float> got(300);
  dev->copy_to_host(got.data(), out.buffer, 1200);
  for (int i = 0; i < 300; ++i) {
    const bool row0 = i < 54;
    const bool row1 = i >= 170 && i < 200;
    EXPECT_EQ(got[i], row0 || row1 ? 5.0f : 0.0f) << "element " << i;
  }
}

void leakyrelu_f32(tensor in, tensor out, float alpha) {
  const int5 s = get_index_space_offset();
  const int5 e = s + get_index_space_size();
  for (int i = s[0]; i < e[0]; ++i) {
    int5 c = {i * 64, 0, 0, 0, 0};
    float64 x = v_f32_ld_tnsr_i(c, in);
    bool256 neg = bv_f32_cmp_less_v_s(x, 0.0f);
    float64 y = v_f32_mul_v_s_vb(x, alpha, x, neg, false);
    f32_st_tnsr_i_v(c, out, y);
  }
}

TEST_F(Fixture, ScalarParametersReachTheKernel) {
  lib->add("leakyrelu_f32", glue_for(tpc_kernel<&leakyrelu_f32>()));
  Runtime rt(*dev, options());
  auto in = upload(*dev, DType::f32, Shape{130}, ramp(130, 1.0f, -65.0f));
  auto out = make_device_tensor(*dev, DType::f32, Shape{130});
  rt.launch("leakyrelu_f32", {in}, {out}, 0.25f);
  const auto got = download<float>(*dev, out);
  for (int i = 0; i < 130; ++i) {
    const float x = -65.0f + static_cast<float>(i);
    EXPECT_EQ(got[i], x < 0 ? 0.25f * x : x);
  }
}

TEST_F(Fixture, GlueRejectionBecomesAUserErrorNamingKernelAndCode) {
  lib->add("abs_f32", glue_for(tpc_kernel<&abs_f32>()));
  Runtime rt(*dev, options());
  auto a = make_device_tensor(*dev, DType::f32, Shape{64});
  auto i = make_device_tensor(*dev, DType::i32, Shape{64});
  try {
    rt.launch("abs_f32", {a, a}, {a});
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("abs_f32"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("GLUE_INCOMPATIBLE_INPUT_COUNT"), std::string::npos);
  }
  try {
    rt.launch("abs_f32", {i}, {a});
    FAIL() << "expected UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("GLUE_INCOMPATIBLE_DATA_TYPE"), std::string::npos);
  }
  EXPECT_THROW(rt.launch("no_such_kernel_f32", {a}, {a}), UserError);
}

TEST_F(Fixture, MissingDtypeVariantWithoutCastKernelsIsAUserError) {
  lib->add("abs_f32", glue_for(tpc_kernel<&abs_f32>()));
  Runtime rt(*dev, options());
  auto in = make_device_tensor(*dev, DType::bf16, Shape{70});
  auto out = make_device_tensor(*dev, DType::bf16, Shape{70});
  try {
    rt.launch("abs_bf16", {in}, {out});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("cast_bf16_to_f32"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("abs_f32"), std::string::npos) << e.what();
  }
}

TEST_F(Fixture, FirstLibraryWithANameWins) {
  auto first = std::make_shared<KernelSet>("first");
  first->add("abs_f32", glue_for(tpc_kernel<&shifted_copy>()));  // a different kernel, same name
  KernelRegistry reg;
  reg.add_builtin_library(lib);
  reg.add_path_library(first);  // path libraries come before built-in ones
  lib->add("abs_f32", glue_for(tpc_kernel<&abs_f32>()));
  EXPECT_EQ(reg.find("abs_f32", 64, gcapi::DEVICE_ID_GAUDI), first.get());
  EXPECT_EQ(reg.libraries().front().get(), first.get());
}

void print_test() {
  char char_val = static_cast<char>(0xff);
  unsigned char uchar_val = 0xff;
  short short_val = static_cast<short>(0xb221);
  unsigned short ushort_val = 0xb221;
  int int_val = static_cast<int>(0x8455CDD1u);
  unsigned int uint_val = 0x8455CDD1u;
  tpc::bf16 bf16_val = 46.25;  // tessera::bf16 is also visible here
  float float_val = 15.23423f;
  uint64 vec_lane_id = V_LANE_ID_32;
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
}

void printf_kernel(tensor in, tensor out) {
  (void)in;
  (void)out;
  print_test();
}

TEST_F(Fixture, PrintfProducesTheSpecExampleOutput) {
  auto glue = [](const gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* inst) {
    inst->indexSpaceGeometry.dims = 1;
    inst->indexSpaceGeometry.sizes[0] = 1;
    gcapi::set_kernel(inst, tpc_kernel<&printf_kernel>());
    inst->flags.printfUsed = 1;
    return gcapi::GLUE_SUCCESS;
  };
  lib->add("print_test", glue);
  Runtime rt(*dev, options());
  auto t = make_device_tensor(*dev, DType::f32, Shape{1});
  rt.launch("print_test", {t}, {t});
  std::string lanes;
  for (int i = 0; i < 64; ++i) lanes += std::to_string(i) + ", ";
  const std::string expected =
      "Test string!\n"
      "char value is -1\n"
      "unsigend char value is 255\n"
      "short value is -19935\n"
      "unsigend short value is 45601\n"
      "int value is -2074751535\n"
      "unsigend int value is 2220215761\n"
      "bfloat value is 46.250000\n"
      "float value is 15.234230\n"
      "Vector Print:\n" +
      lanes;
  EXPECT_EQ(printed.str(), expected);
  EXPECT_EQ(rt.last_printf_output(), expected);
}

TEST_F(Fixture, PrintfNeedsNoGlueFlag) {
  // The hardware's loader sees printf in the binary; Habana's glue never sets printfUsed.
  lib->add("print_test", glue_for(tpc_kernel<&printf_kernel>()));
  Runtime rt(*dev, options());
  auto t = make_device_tensor(*dev, DType::f32, Shape{64});
  rt.launch("print_test", {t}, {t});
  EXPECT_NE(rt.last_printf_output().find("Test string!"), std::string::npos);
}

void local_dump(tensor in, tensor out, tensor out2) {
  (void)in;
  local_array<float64, 2> vectors;
  local_array<int, 4> scalars;
  float64 raw = vectors[1];
  f32_st_tnsr_i_v({0, 0, 0, 0, 0}, out, raw);
  int64 s(scalars[2]);
  i32_st_tnsr_i_v({0, 0, 0, 0, 0}, out2, s);
}

TEST_F(Fixture, LocalMemoryIsNotZeroed) {
  lib->add("local_dump",
           [](const gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* inst) {
             inst->indexSpaceGeometry.dims = 1;
             inst->indexSpaceGeometry.sizes[0] = 1;
             gcapi::set_kernel(inst, tpc_kernel<&local_dump>());
             return gcapi::GLUE_SUCCESS;
           });
  Runtime rt(*dev, options());
  auto in = make_device_tensor(*dev, DType::f32, Shape{64});
  auto out = make_device_tensor(*dev, DType::f32, Shape{64});
  auto out2 = make_device_tensor(*dev, DType::i32, Shape{64});
  const auto& rec = rt.launch("local_dump", {in}, {out, out2});
  const auto got = download<std::uint32_t>(*dev, out);
  for (auto v : got) EXPECT_EQ(v, 0xDEADBEEFu);
  const auto got2 = download<std::uint32_t>(*dev, out2);
  for (auto v : got2) EXPECT_EQ(v, 0xDEADBEEFu);
  EXPECT_EQ(rec.metrics.at("local.vlm.high_water_bytes"), 512);
  EXPECT_EQ(rec.metrics.at("local.slm.high_water_bytes"), 16);
}

void lfsr_kernel(tensor in, tensor out) {
  (void)in;
  uint64 peek = LFSR_NO_CHANGE;
  uint64 a = LFSR;
  uint64 b = LFSR;
  uint64 seed(12345u);
  LFSR = seed;
  uint64 c = LFSR;
  LFSR = seed;
  uint64 d = LFSR;
  u32_st_tnsr_i_v({0, 0, 0, 0, 0}, out, peek);
  u32_st_tnsr_i_v({64, 0, 0, 0, 0}, out, a);
  u32_st_tnsr_i_v({128, 0, 0, 0, 0}, out, b);
  u32_st_tnsr_i_v({192, 0, 0, 0, 0}, out, c);
  u32_st_tnsr_i_v({256, 0, 0, 0, 0}, out, d);
  const unsigned s_peek = S_LFSR_NO_CHANGE;
  const unsigned s1 = S_LFSR;
  const unsigned s2 = S_LFSR;
  uint64 scal = v_u32_mov_s(s_peek);
  scal = v_u32_mov_s_b(s1, scal, true, false);
  scal[1] = s2;
  scal[2] = s_peek;
  u32_st_tnsr_i_v({320, 0, 0, 0, 0}, out, scal);
}

TEST_F(Fixture, LfsrReadsAreDestructiveAndSeedable) {
  lib->add("lfsr",
           [](const gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* inst) {
             inst->indexSpaceGeometry.dims = 1;
             inst->indexSpaceGeometry.sizes[0] = 1;
             gcapi::set_kernel(inst, tpc_kernel<&lfsr_kernel>());
             return gcapi::GLUE_SUCCESS;
           });
  Runtime rt(*dev, options());
  auto in = make_device_tensor(*dev, DType::u32, Shape{1});
  auto out = make_device_tensor(*dev, DType::u32, Shape{384});
  rt.launch("lfsr", {in}, {out});
  const auto v = download<std::uint32_t>(*dev, out);
  int differ_ab = 0, lanes_differ = 0;
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(v[i], v[64 + i]);            // NO_CHANGE returns what the next read returns
    differ_ab += v[64 + i] != v[128 + i];  // each read advances
    EXPECT_EQ(v[192 + i], v[256 + i]);     // the same seed gives the same numbers
    if (i > 0) lanes_differ += v[64 + i] != v[64];
  }
  EXPECT_EQ(differ_ab, 64);
  EXPECT_GT(lanes_differ, 60);
  EXPECT_EQ(v[320], v[322]);  // scalar peek == first scalar read
  EXPECT_NE(v[320], v[321]);
  // Same launch again: same numbers (deterministic seeding).
  rt.launch("lfsr", {in}, {out});
  EXPECT_EQ(download<std::uint32_t>(*dev, out), v);
}

void store_then_load(tensor in, tensor out, int use_aso) {
  int5 c = {0};
  float64 x = v_f32_ld_tnsr_i(c, in);
  f32_st_tnsr_i_v(c, out, x);
  if (use_aso) aso();
  float64 y = v_f32_ld_tnsr_i(c, out);
  c[0] = 64;
  f32_st_tnsr_i_v(c, out, y);
}

TEST_F(Fixture, VectorLoadAfterStoreWithoutAsoWarns) {
  lib->add("rw_f32",
           [](const gcapi::HabanaKernelParams_t* p, gcapi::HabanaKernelInstantiation_t* inst) {
             inst->indexSpaceGeometry.dims = 1;
             inst->indexSpaceGeometry.sizes[0] = 1;
             gcapi::set_kernel(inst, tpc_kernel<&store_then_load>());
             gcapi::set_scalar_params(inst->kernel, *static_cast<const int*>(p->NodeParams));
             return gcapi::GLUE_SUCCESS;
           });
  Runtime rt(*dev, options());
  auto in = upload(*dev, DType::f32, Shape{64}, ramp(64));
  auto out = make_device_tensor(*dev, DType::f32, Shape{128});
  const auto& r1 = rt.launch("rw_f32", {in}, {out}, 0);
  EXPECT_EQ(r1.metrics.at("coherency_warnings"), 1);
  EXPECT_EQ(rt.last_coherency_warnings(), 1u);
  const auto& r2 = rt.launch("rw_f32", {in}, {out}, 1);
  EXPECT_EQ(r2.metrics.at("coherency_warnings"), 0);
}

TEST_F(Fixture, CheckOrderPassesForIndependentMembers) {
  lib->add("add_f32", glue_for(tpc_kernel<&add_f32>(), {.inputs = 2}));
  RuntimeOptions o = options();
  o.check_order = true;
  Runtime rt(*dev, o);
  auto a = upload(*dev, DType::f32, Shape{640, 5}, ramp(3200));
  auto c = make_device_tensor(*dev, DType::f32, Shape{640, 5});
  EXPECT_NO_THROW(rt.launch("add_f32", {a, a}, {c}));
  const auto got = download<float>(*dev, c);
  for (int i = 0; i < 3200; ++i) EXPECT_EQ(got[i], 2.0f * i);
}

void vpu_heavy(tensor in, tensor out, int extra) {
  const int5 s = get_index_space_offset();
  const int5 e = s + get_index_space_size();
  for (int i = s[0]; i < e[0]; ++i) {
    int5 c = {i * 64, 0, 0, 0, 0};
    float64 x = v_f32_ld_tnsr_i(c, in);
    for (int k = 0; k < extra; ++k) x = v_f32_mac_v_v(x, x, x);
    f32_st_tnsr_i_v(c, out, x);
  }
}

TEST_F(Fixture, CostModelGrowsWithVpuWorkAndRespectsTheMemoryBound) {
  lib->add("vpu_f32", glue_for(tpc_kernel<&vpu_heavy>()));
  Runtime rt(*dev, options());
  auto in = make_device_tensor(*dev, DType::f32, Shape{64 * 64});
  auto out = make_device_tensor(*dev, DType::f32, Shape{64 * 64});
  std::uint64_t previous = 0;
  for (int extra : {0, 4, 16, 64}) {
    const auto& rec = rt.launch("vpu_f32", {in}, {out}, extra);
    EXPECT_GT(rec.cycles, previous) << extra;
    previous = rec.cycles;
    // 64 members over 8 cores: 8 per core, each one vector load and one store.
    const auto per_vector = dev->spec().param("tpc.global_access_cycles_per_vector").as_int();
    for (auto c : rec.cycles_per_core) EXPECT_GE(c, static_cast<std::uint64_t>(8 * 2 * per_vector));
    EXPECT_EQ(rec.metrics.at("slot.vpu.issues"), 64.0 * extra);
    EXPECT_LE(rec.metrics.at("slot.vpu.utilisation"), 1.0);
  }
}

void tanh_kernel(tensor in, tensor out) {
  int5 c = {0};
  f32_st_tnsr_i_v(c, out, v_tanh_f32(v_f32_ld_tnsr_i(c, in)));
}

TEST_F(Fixture, SpecialFunctionsCostMoreWithOrWithoutTheFlag) {
  lib->add("tanh_f32", glue_for(tpc_kernel<&tanh_kernel>(), {.special = true}));
  lib->add("tanh_noflag_f32", glue_for(tpc_kernel<&tanh_kernel>()));
  Runtime rt(*dev, options());
  auto in = upload(*dev, DType::f32, Shape{64}, ramp(64, 0.1f, -3.0f));
  auto out = make_device_tensor(*dev, DType::f32, Shape{64});
  const auto& rec = rt.launch("tanh_f32", {in}, {out});
  EXPECT_EQ(rec.metrics.at("slot.vpu.issues"),
            dev->spec().param("tpc.special_function_vpu_cycles").value);
  const auto got = download<float>(*dev, out);
  for (int i = 0; i < 64; ++i) EXPECT_NEAR(got[i], std::tanh(-3.0 + 0.1 * i), 1e-6);
  // Without the glue flag the kernel still runs: the use is found from what it calls.
  const auto& again = rt.launch("tanh_noflag_f32", {in}, {out});
  EXPECT_EQ(again.metrics.at("special_function_calls"), 1.0);
}

TEST_F(Fixture, ResultsAndCyclesDoNotDependOnHostThreads) {
  lib->add("add_f32", glue_for(tpc_kernel<&add_f32>(), {.inputs = 2}));
  auto a = upload(*dev, DType::f32, Shape{1000, 37}, ramp(37000, 0.5f));
  auto b = upload(*dev, DType::f32, Shape{1000, 37}, ramp(37000, -0.25f, 3.0f));
  std::vector<std::vector<float>> results;
  std::vector<std::vector<std::uint64_t>> cycles;
  for (unsigned threads : {1u, 2u, 8u}) {
    sim::WorkScheduler pool(threads);
    RuntimeOptions o = options();
    o.scheduler = &pool;
    Runtime rt(*dev, o);
    auto c = make_device_tensor(*dev, DType::f32, Shape{1000, 37});
    const auto& rec = rt.launch("add_f32", {a, b}, {c});
    cycles.push_back(rec.cycles_per_core);
    results.push_back(download<float>(*dev, c));
  }
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
  EXPECT_EQ(cycles[0], cycles[1]);
  EXPECT_EQ(cycles[0], cycles[2]);
}

TEST_F(Fixture, TracingRecordsIntervalsPerCore) {
  lib->add("abs_f32", glue_for(tpc_kernel<&abs_f32>()));
  Runtime rt(*dev, options());
  dev->set_trace_enabled(true);
  auto in = make_device_tensor(*dev, DType::f32, Shape{64 * 16});
  auto out = make_device_tensor(*dev, DType::f32, Shape{64 * 16});
  rt.launch("abs_f32", {in}, {out});
  // One interval per core and slot that issued (load, spu for the index space, vpu, store,
  // the global port), and one for the kernel on the device's "tpc" engine.
  std::set<std::string> tracks;
  int intervals = 0;
  for (const auto& iv : dev->profile().trace)
    if (iv.name == "abs_f32") {
      ++intervals;
      tracks.insert(iv.track);
    }
  EXPECT_EQ(intervals, 8 * 5 + 1);
  EXPECT_TRUE(tracks.count("tpc") && tracks.count("tpc7/vpu") && tracks.count("tpc0/global-port"));
  EXPECT_GT(dev->profile().pipe_busy_cycles.at("tpc0/load"), 0u);
}

TEST(TpcRuntime, IntrinsicsOutsideAKernelAreAUserError) {
  EXPECT_THROW(get_index_space_offset(), UserError);
  EXPECT_THROW(v_f32_ld_tnsr_i({0}, tensor(0)), UserError);
}

void queries(tensor in, tensor out) {
  int5 c = {0};
  // Dimension sizes and strides, the pad value set by the glue, then a new pad from the kernel.
  int64 v(0);
  v[0] = static_cast<int>(get_dim_size(in, 0));
  v[1] = static_cast<int>(get_dim_size(in, 1));
  v[2] = static_cast<int>(get_dim_stride(in, 1));
  v[3] = get_pad_value_int(in);
  set_pad_value_int(in, -9);
  v[4] = v_i32_ld_tnsr_i({-1, 0, 0, 0, 0}, in)[0];  // outside: the new pad
  int* p = a_gen_addr_i_b(in, int5{{2, 1, 0, 0, 0}});
  v[5] = *p;  // scalar global read of element (2, 1)
  *static_cast<int*>(a_gen_addr_i(int5{{0, 0, 0, 0, 0}}, out)) = 77;
  c[0] = 64;
  i32_st_tnsr_i_v(c, out, v);
}

TEST_F(Fixture, TensorQueriesPadValuesAndScalarGlobalAccess) {
  lib->add("queries_i32",
           [](const gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* inst) {
             inst->indexSpaceGeometry.dims = 1;
             inst->indexSpaceGeometry.sizes[0] = 1;
             inst->inputPadValues[0].i32Value = 42;
             gcapi::set_kernel(inst, tpc_kernel<&queries>());
             return gcapi::GLUE_SUCCESS;
           });
  Runtime rt(*dev, options());
  std::vector<int> host(10 * 3);
  for (int i = 0; i < 30; ++i) host[i] = i * 10;
  auto in = upload(*dev, DType::i32, Shape{10, 3}, host);
  auto out = make_device_tensor(*dev, DType::i32, Shape{128});
  rt.launch("queries_i32", {in}, {out});
  const auto got = download<int>(*dev, out);
  EXPECT_EQ(got[0], 77);
  EXPECT_EQ(got[64], 10);
  EXPECT_EQ(got[65], 3);
  EXPECT_EQ(got[66], 10);
  EXPECT_EQ(got[67], 42);
  EXPECT_EQ(got[68], -9);
  EXPECT_EQ(got[69], 120);
}

void gen_addr_outside(tensor in, tensor out) {
  (void)out;
  int* p = a_gen_addr_i(int5{{5, 0, 0, 0, 0}}, in);
  *p = 1;
}

TEST_F(Fixture, ScalarAddressOutsideTheTensorIsADeviceFault) {
  lib->add("outside_f32",
           [](const gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* inst) {
             inst->indexSpaceGeometry.dims = 1;
             inst->indexSpaceGeometry.sizes[0] = 1;
             gcapi::set_kernel(inst, tpc_kernel<&gen_addr_outside>());
             return gcapi::GLUE_SUCCESS;
           });
  Runtime rt(*dev, options());
  auto t = make_device_tensor(*dev, DType::i32, Shape{4});
  EXPECT_THROW(rt.launch("outside_f32", {t}, {t}), DeviceFault);
}

TEST_F(Fixture, CheckOrderCanBeEnabledFromTheEnvironment) {
  setenv("TESSERA_TPC_CHECK_ORDER", "1", 1);
  Runtime on(*dev, options());
  unsetenv("TESSERA_TPC_CHECK_ORDER");
  Runtime off(*dev, options());
  EXPECT_TRUE(on.check_order());
  EXPECT_FALSE(off.check_order());
}

// ---- the latency model (spec 000 §2.3.1): values carry their ready cycle ----
namespace {

constexpr int kChain = 4000;

void dependent_adds(tensor in, tensor out) {
  const int5 c = {0};
  float64 x = v_f32_ld_tnsr_i(c, in);
  for (int i = 0; i < kChain; ++i) x = v_f32_add_v_v(x, x);  // each needs the previous result
  f32_st_tnsr_i_v(c, out, x);
}

void independent_adds(tensor in, tensor out) {
  const int5 c = {0};
  const float64 x = v_f32_ld_tnsr_i(c, in);
  float64 last;
  for (int i = 0; i < kChain; ++i) last = v_f32_add_v_v(x, x);  // all need only x
  f32_st_tnsr_i_v(c, out, last);
}

// The usual TPC loop: load, compute, store for every member of the instance's box.
void stream_kernel(tensor in, tensor out) {
  const int5 start = get_index_space_offset();
  const int5 end = start + get_index_space_size();
  for (int m = start[0]; m < end[0]; ++m) {
    const int5 c = {m * 64, 0, 0, 0, 0};
    f32_st_tnsr_i_v(c, out, v_f32_add_v_s(v_f32_ld_tnsr_i(c, in), 1.0f));
  }
}

void store_only(tensor in, tensor out) {
  const int5 c = {0};
  f32_st_tnsr_i_v(c, out, v_f32_ld_tnsr_i(c, in));
}

void store_then_aso(tensor in, tensor out) {
  store_only(in, out);
  aso();
  (void)get_index_space_offset();
}

}  // namespace

TEST_F(Fixture, DependentInstructionsCostTheirLatencyIndependentOnesOverlap) {
  lib->add("dep_f32", glue_for(tpc_kernel<&dependent_adds>()));
  lib->add("indep_f32", glue_for(tpc_kernel<&independent_adds>()));
  Runtime rt(*dev, options());
  auto in = upload(*dev, DType::f32, Shape{64}, ramp(64));
  auto out = make_device_tensor(*dev, DType::f32, Shape{64});
  const double dep = static_cast<double>(rt.launch("dep_f32", {in}, {out}).cycles);
  const double indep = static_cast<double>(rt.launch("indep_f32", {in}, {out}).cycles);
  const double latency = dev->spec().pipe("vpu").latency_cycles.value;
  EXPECT_NEAR(dep / kChain, latency, 0.1);  // about 4N
  EXPECT_NEAR(indep / kChain, 1.0, 0.1);    // about N
}

TEST_F(Fixture, ALoadComputeStoreLoopPipelines) {
  lib->add("stream_f32", glue_for(tpc_kernel<&stream_kernel>()));
  Runtime rt(*dev, options());
  constexpr int members = 8 * 256;  // 256 iterations on each of the 8 cores
  auto in = upload(*dev, DType::f32, Shape{64 * members}, ramp(64 * members));
  auto out = make_device_tensor(*dev, DType::f32, Shape{64 * members});
  const auto& rec = rt.launch("stream_f32", {in}, {out});
  const auto got = download<float>(*dev, out);
  for (int i = 0; i < 64 * members; i += 997) EXPECT_EQ(got[i], static_cast<float>(i) + 1.0f);
  // Two global accesses per iteration hold the core's port for 2 x 4 cycles (spec 000 §2.3.3);
  // the load's latency (port, HBM, slot) is paid once, not per iteration.
  const double port = dev->spec().param("tpc.global_access_cycles_per_vector").value;
  const double latency = dev->spec().global().latency_cycles.value;
  for (auto c : rec.cycles_per_core) {
    EXPECT_GE(static_cast<double>(c), 256 * 2 * port);
    EXPECT_LE(static_cast<double>(c), 256 * 2 * port + 2 * latency);
  }
  EXPECT_GT(rec.metrics.at("slot.vpu.issues"), 0.0);
}

TEST_F(Fixture, AsoWaitsForOutstandingStores) {
  lib->add("store_then_aso_f32", glue_for(tpc_kernel<&store_then_aso>()));
  lib->add("store_only_f32", glue_for(tpc_kernel<&store_only>()));
  Runtime rt(*dev, options());
  auto in = upload(*dev, DType::f32, Shape{64}, ramp(64));
  auto out = make_device_tensor(*dev, DType::f32, Shape{64});
  const auto with = rt.launch("store_then_aso_f32", {in}, {out}).cycles;
  const auto without = rt.launch("store_only_f32", {in}, {out}).cycles;
  // The store reaches HBM after its latency either way; aso holds the SPU until then, so the
  // instruction after it issues later than the store's own end.
  EXPECT_GT(with, without);
}

// All TPCs share the preset's HBM bandwidth: when their streams together ask for more than it
// gives, each core takes longer per byte than a core alone.
TEST_F(Fixture, CoresShareTheGlobalMemoryBandwidth) {
  auto machine = [&](std::int64_t cores, double hbm_bytes_per_cycle) {
    arch::MachineSpec spec = dev->spec();
    spec.core_count.value = static_cast<double>(cores);
    for (auto& m : spec.memories)
      if (m.name == spec.global_memory) m.bandwidth_bytes_per_cycle.value = hbm_bytes_per_cycle;
    return std::make_unique<runtime::Device>(spec);
  };
  lib->add("stream_f32", glue_for(tpc_kernel<&stream_kernel>()));
  auto run = [&](runtime::Device& d, int members) {
    Runtime rt(d, options());
    auto in = make_device_tensor(d, DType::f32, Shape{64 * members});
    auto out = make_device_tensor(d, DType::f32, Shape{64 * members});
    return rt.launch("stream_f32", {in}, {out}).cycles;
  };
  // 128 B/cycle: one core's port (64 B/cycle) fits, eight (512 B/cycle) do not.
  auto one = machine(1, 128);
  auto eight = machine(8, 128);
  const double t1 = static_cast<double>(run(*one, 256));        // 256 iterations on one core
  const double t8 = static_cast<double>(run(*eight, 8 * 256));  // 256 on each of eight
  EXPECT_GT(t8, 3.0 * t1);  // 8x the bytes at 2x one core's rate: about 4x the time
  EXPECT_LT(t8, 5.0 * t1);
  // With the preset's own 625 B/cycle, eight streaming cores still fit.
  auto roomy = machine(8, 625);
  EXPECT_LT(static_cast<double>(run(*roomy, 8 * 256)), 1.1 * t1);
}
