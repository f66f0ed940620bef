// The core's registers (tpc-intrinsics.h get/set_semaphore_value, get/set_csr_value,
// get/set_convert_csr_value): ASO updates the semaphore, CONVERT and NEARBYINT under SW_CSR
// follow the convert rounding CSR, and a core hands them from one program instance to the next
// from reset at each launch, whatever the host threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tessera/sim/scheduler.h"
#include "tpc_test_util.h"

namespace {

using namespace tpc_test;

// Writes, for each member, the semaphore its instance found (lane 0) and left (other lanes)
// after setting it 10 higher and three ASOs: +1, -1 (SW_DEC), +1.
void semaphore_count(tensor out) {
  const int5 s = get_index_space_offset();
  const int5 e = s + get_index_space_size();
  const std::int32_t seen = get_semaphore_value();
  set_semaphore_value(seen + 10);
  aso();
  aso(SW_DEC | SW_VPU);
  aso(SW_INC);
  int64 v(get_semaphore_value());
  v.v[0] = seen;
  int5 c = {0};
  for (int m = s[0]; m < e[0]; ++m) {
    c[0] = m * 64;
    v_i32_st_tnsr(c, out, v);
  }
}

// op 0: set the convert CSR to `mode`, then round through CONVERT f32 -> i32 under SW_CSR;
// op 1: the same with NEARBYINT; op 2: SW_CSR without setting the CSR; op 3: set the CSR but
// convert with SW_RZ; op 4: the scalar CONVERT under SW_CSR (its legacy bare mode 5).
void csr_round(tensor in, tensor out, int mode, int op) {
  const int5 s = get_index_space_offset();
  const int5 e = s + get_index_space_size();
  if (op != 2) set_convert_csr_value(mode);
  int5 c = {0};
  for (int m = s[0]; m < e[0]; ++m) {
    c[0] = m * 64;
    const float64 x = v_f32_ld_tnsr_b(c, in);
    float64 y;
    if (op == 1) {
      y = v_f32_nearbyint_b(x, SW_CSR);
    } else if (op == 4) {
      for (int i = 0; i < 64; ++i) y.v[i] = static_cast<float>(s_convert_f32_to_i32_s(x.v[i], 5));
    } else {
      y = v_convert_i32_to_f32_b(v_convert_f32_to_i32_b(x, op == 3 ? SW_RZ : SW_CSR));
    }
    v_f32_st_tnsr(c, out, y);
  }
}

struct CoreRegisters : KernelFixture {
  CoreRegisters() : KernelFixture("core-registers") {
    lib->add("semaphore_count",
             glue_for(tpc_kernel<&semaphore_count>(), {.inputs = 0, .type = gcapi::DATA_I32}));
    lib->add("csr_round", glue_for(tpc_kernel<&csr_round>()));
  }
};

TEST_F(CoreRegisters, SemaphoreStartsFromResetOnEachCoreWhateverTheHostThreads) {
  // One instance per core: each finds the semaphore at 0 and leaves 11, at every launch and for
  // every thread count. A semaphore shared by host threads, or kept between launches, would
  // show another start value.
  const int members = 500;
  for (unsigned threads : {1u, 2u, 8u}) {
    sim::WorkScheduler pool(threads);
    Runtime rt(*dev, options(&pool));
    for (int launch = 0; launch < 2; ++launch) {
      auto out = make_device_tensor(*dev, DType::i32, Shape{64 * members});
      rt.launch("semaphore_count", {}, {out});
      const auto got = download<std::int32_t>(*dev, out);
      for (int m = 0; m < members; ++m) {
        ASSERT_EQ(got[static_cast<std::size_t>(m) * 64], 0) << "member " << m << ", " << threads;
        ASSERT_EQ(got[static_cast<std::size_t>(m) * 64 + 1], 11) << "member " << m;
      }
    }
  }
}

TEST_F(CoreRegisters, SemaphoreCarriedBetweenInstancesFailsCheckOrder) {
  // Check-order mode runs several instances per core: the second finds what the first left.
  RuntimeOptions o = options();
  o.check_order = true;
  Runtime rt(*dev, o);
  auto out = make_device_tensor(*dev, DType::i32, Shape{64 * 500});
  try {
    rt.launch("semaphore_count", {}, {out});
    FAIL() << "no DeviceFault";
  } catch (const DeviceFault& e) {
    EXPECT_NE(std::string(e.what()).find("check-order mode"), std::string::npos) << e.what();
  }
}

TEST_F(CoreRegisters, ConvertsUnderSwCsrFollowTheConvertRoundingCsr) {
  Runtime rt(*dev, options());
  std::vector<float> x(64 * 4);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = -8.25f + 0.25f * static_cast<float>(i % 66);
  auto in = upload(*dev, DType::f32, Shape{static_cast<std::int64_t>(x.size())}, x);
  struct Params {
    int mode;
    int op;
  };
  for (int op : {0, 1, 2, 3, 4}) {
    for (int mode : {e_round_half_ne, e_round_zero, e_round_up, e_round_down, e_round_half_az}) {
      auto out = make_device_tensor(*dev, DType::f32, Shape{static_cast<std::int64_t>(x.size())});
      rt.launch("csr_round", {in}, {out}, Params{mode, op});
      const auto got = download<float>(*dev, out);
      // op 2 never set the CSR: it is at reset (RHNE) at every launch; op 3 asked for SW_RZ.
      const int want_mode = op == 2 ? e_round_half_ne : op == 3 ? e_round_zero : mode;
      for (std::size_t i = 0; i < x.size(); ++i)
        ASSERT_EQ(got[i], static_cast<float>(round_to_integer(x[i], want_mode)))
            << "x " << x[i] << ", mode " << mode << ", op " << op;
    }
  }
}

TEST(CoreRegisterValues, AreReadBackAndCheckedInAnInstance) {
  detail::InstanceContext c;
  detail::current_instance = &c;
  EXPECT_EQ(get_semaphore_value(), 0);
  set_semaphore_value(5);
  aso();
  EXPECT_EQ(get_semaphore_value(), 6);
  aso(SW_DEC, false);  // predicate off: no update
  EXPECT_EQ(get_semaphore_value(), 6);
  set_semaphore_value(std::numeric_limits<std::int32_t>::max());
  aso();  // the register wraps
  EXPECT_EQ(get_semaphore_value(), std::numeric_limits<std::int32_t>::lowest());
  EXPECT_EQ(get_csr_value(), 0);
  set_csr_value(e_round_half_ne);
  EXPECT_EQ(get_csr_value(), 0);
  set_convert_csr_value(e_round_up);
  EXPECT_EQ(get_convert_csr_value(), e_round_up);
  EXPECT_EQ(s_f32_nearbyint(1.25f, SW_CSR), 2.0f);
  auto user_error = [](auto f) -> std::string {
    try {
      f();
    } catch (const UserError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(user_error([] {
              set_convert_csr_value(e_round_stochastic);
            }).find("set_convert_csr_value(4)"),
            std::string::npos);
  EXPECT_NE(user_error([] { set_csr_value(e_round_zero); }).find("set_csr_value(1)"),
            std::string::npos);
  EXPECT_NE(user_error([] { aso(0x1 << 3); }).find("aso"), std::string::npos);
  EXPECT_EQ(get_convert_csr_value(), e_round_up);  // refused values leave the register
  detail::current_instance = nullptr;
  // Outside a kernel there is no core to hold them.
  EXPECT_THROW((void)get_semaphore_value(), UserError);
  EXPECT_THROW((void)s_f32_nearbyint(1.5f, SW_CSR), UserError);
}

}  // namespace
