// Local memory by address (tpc-intrinsics.h LD_L / ST_L / LD_L_V / ST_L_V and their halves,
// spec 000 §2.3.3, §2.5.3): every result checked against a plain loop over the same data, the
// `__local__` arrays seen through addresses and the other way round, and the same results and
// cycles for every host thread count. The faults are in tests/faults/tpc_faults_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/sim/scheduler.h"
#include "tpc_test_util.h"

namespace {

using namespace tpc_test;

constexpr int kTile = 8;  // vectors staged per member

struct LocalMemoryTest : KernelFixture {
  LocalMemoryTest() : KernelFixture("local-memory-kernels") {}
  void add(const std::string& name, KernelFunction fn, unsigned members = 1) {
    lib->add(name,
             [fn, members](gcapi::HabanaKernelParams_t*, gcapi::HabanaKernelInstantiation_t* inst) {
               inst->indexSpaceGeometry.dims = 1;
               inst->indexSpaceGeometry.sizes[0] = members;
               return gcapi::set_kernel(inst, fn);
             });
  }
};

std::vector<float> ramp(int n, float scale = 1.0f) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = scale * static_cast<float>(i) - 7;
  return v;
}

// Each member stages its tile of `in` in vector local memory by address and reads it back
// through a local_array (out0 = 2 * tile), then fills the array and reads it by address in
// reverse order (out1 = the tile reversed by vectors).
void stage_tile(tensor in, tensor out0, tensor out1) {
  const int m = get_index_space_offset()[0];
  local_array<float64, kTile> tile;
  for (int i = 0; i < kTile; ++i) {
    const float64 x = v_f32_ld_tnsr_b({(m * kTile + i) * 64, 0, 0, 0, 0}, in);
    v_f32_st_l_v(tile.address() + static_cast<std::uint32_t>(i) * 256, x);
  }
  for (int i = 0; i < kTile; ++i)
    v_f32_st_tnsr({(m * kTile + i) * 64, 0, 0, 0, 0}, out0, v_f32_add_b(tile[i], tile[i]));
  for (int i = 0; i < kTile; ++i) tile[i] = v_f32_ld_tnsr_b({(m * kTile + i) * 64, 0, 0, 0, 0}, in);
  for (int i = 0; i < kTile; ++i) {
    const float64 y =
        v_f32_ld_l_v_b(tile.address() + static_cast<std::uint32_t>(kTile - 1 - i) * 256);
    v_f32_st_tnsr({(m * kTile + i) * 64, 0, 0, 0, 0}, out1, y);
  }
}

TEST_F(LocalMemoryTest, ATileStagedByAddressIsTheLocalArrayAndTheOtherWayRound) {
  const int members = 4, n = members * kTile * 64;
  add("stage_tile", tpc_kernel<&stage_tile>(), members);
  Runtime rt(*dev, options());
  const std::vector<float> x = ramp(n, 0.5f);
  auto in = upload(*dev, DType::f32, Shape{n}, x);
  auto out0 = make_device_tensor(*dev, DType::f32, Shape{n});
  auto out1 = make_device_tensor(*dev, DType::f32, Shape{n});
  const auto& rec = rt.launch("stage_tile", {in}, {out0, out1});
  const auto doubled = download<float>(*dev, out0);
  const auto reversed = download<float>(*dev, out1);
  for (int m = 0; m < members; ++m)
    for (int i = 0; i < kTile; ++i)
      for (int l = 0; l < 64; ++l) {
        const auto at = static_cast<std::size_t>((m * kTile + i) * 64 + l);
        const auto from = static_cast<std::size_t>((m * kTile + kTile - 1 - i) * 64 + l);
        ASSERT_EQ(doubled[at], 2 * x[at]) << "member " << m << " vector " << i << " lane " << l;
        ASSERT_EQ(reversed[at], x[from]) << "member " << m << " vector " << i << " lane " << l;
      }
  // Per member 8 stores and 8 loads by address, each an issue of the load or store slot beside
  // the 16 tensor loads and 16 tensor stores (accesses through the array's elements cost none).
  EXPECT_EQ(rec.metrics.at("local.vlm.accesses"), members * 2 * kTile);
  EXPECT_EQ(rec.metrics.at("slot.load.issues"), members * 3 * kTile);
  EXPECT_EQ(rec.metrics.at("slot.store.issues"), members * 3 * kTile);
  EXPECT_EQ(rec.metrics.at("local.slm.accesses"), 0);
  EXPECT_EQ(rec.metrics.at("local.vlm.high_water_bytes"), kTile * 256);
}

// Every scalar type to the scalar local memory and back; a local_array<int> seen by address.
void slm_round_trips(tensor out) {
  int64 r(0);
  int lane = 0;
  auto put = [&](std::int32_t v) { r[lane++] = v; };
  s_f32_st_l(0, -2.5f);
  put(s_f32_ld_l(0) == -2.5f);
  s_bf16_st_l(4, tessera::tpc::bf16(3.0f));
  put(static_cast<float>(s_bf16_ld_l(4)) == 3.0f);
  s_i32_st_l(8, -123456);
  put(s_i32_ld_l(8));
  s_u32_st_l(12, 0xfedcba98u);
  put(static_cast<std::int32_t>(s_u32_ld_l(12)));
  s_i16_st_l(16, -300);
  put(s_i16_ld_l(16));
  s_u16_st_l(20, 60000);
  put(s_u16_ld_l(20));
  s_i8_st_l(24, -100);
  put(s_i8_ld_l(24));
  s_u8_st_l(28, 200);
  put(s_u8_ld_l(28));
  // A 2-byte store writes its own bytes only: the word reads back as the i32 with its low half
  // replaced.
  s_i32_st_l(32, 0x11223344);
  s_u16_st_l(32, 0xabcd);
  put(s_i32_ld_l(32));
  // Arrays are carved from address 0 up, so this one lies over the words written above by
  // address and starts with what they hold.
  local_array<int, 4> words;
  put(static_cast<std::int32_t>(words.address()));
  put(words[2]);  // what s_i32_st_l(8) left
  words[3] = 77;
  put(s_i32_ld_l(words.address() + 12));
  s_i32_st_l(words.address() + 4, 55);
  put(words[1]);
  // Predicated: a false predicate (or a true one inverted) neither stores nor loads.
  s_i32_st_l(40, 5);
  s_i32_st_l(40, 6, 0, false);
  s_i32_st_l(40, 7, 0, true, true);
  put(s_i32_ld_l(40));
  put(s_i32_ld_l(40, 0, -1, false));
  put(s_i32_ld_l(40, 0, -2, true, false));
  // tpc-defs.h's legacy spellings of the same instructions.
  i32_st_l_s_s_b(44, 9, 0, true, false);
  u16_st_l_s_s(48, 7, 0);
  put(s_i32_ld_l_s_b(44, -1, 0, true, false));
  put(s_u16_ld_l_s(48, 0));
  i32_st_tnsr_i_v({0, 0, 0, 0, 0}, out, r);
}

TEST_F(LocalMemoryTest, ScalarsRoundTripThroughTheScalarLocalMemory) {
  add("slm_round_trips", tpc_kernel<&slm_round_trips>());
  Runtime rt(*dev, options());
  auto out = make_device_tensor(*dev, DType::i32, Shape{64});
  const auto& rec = rt.launch("slm_round_trips", {}, {out});
  const auto got = download<std::int32_t>(*dev, out);
  const std::vector<std::int32_t> want = {
      1,          1,     -123456, static_cast<std::int32_t>(0xfedcba98u),
      -300,       60000, -100,    200,
      0x1122abcd, 0,     -123456, 77,
      55,         5,     -1,      5,
      9,          7};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "lane " << i;
  EXPECT_GT(rec.metrics.at("local.slm.accesses"), 20);
}

// Halves: ST_L_V_LOW / _HIGH write one half of the register, LD_L_V_LOW / _HIGH read into one
// half and keep income in the other.
void halves(tensor in, tensor out) {
  const int64 v = v_i32_ld_tnsr_b({0, 0, 0, 0, 0}, in);
  const int64 income(-1);
  v_i32_st_l_v_low(512, v);
  v_i32_st_l_v_high(640, v);
  i32_st_tnsr_i_v({0, 0, 0, 0, 0}, out, v_i32_ld_l_v_b(512));  // the halves back together
  i32_st_tnsr_i_v({64, 0, 0, 0, 0}, out, v_i32_ld_l_v_low_b(640, 0, income));
  i32_st_tnsr_i_v({128, 0, 0, 0, 0}, out, v_i32_ld_l_v_high_b(512, 0, income));
  // Halves of other types move the same bytes.
  v_u8_st_l_v_high(1024, uchar256(static_cast<std::uint8_t>(9)));
  v_u8_st_l_v_low(1152, uchar256(static_cast<std::uint8_t>(4)));
  i32_st_tnsr_i_v({192, 0, 0, 0, 0}, out, v_i32_ld_l_v_b(1024));
}

TEST_F(LocalMemoryTest, LowAndHighHalvesMoveHalfTheRegister) {
  add("halves", tpc_kernel<&halves>());
  Runtime rt(*dev, options());
  std::vector<std::int32_t> x(64);
  for (int i = 0; i < 64; ++i) x[static_cast<std::size_t>(i)] = 1000 + i;
  auto in = upload(*dev, DType::i32, Shape{64}, x);
  auto out = make_device_tensor(*dev, DType::i32, Shape{256});
  rt.launch("halves", {in}, {out});
  const auto got = download<std::int32_t>(*dev, out);
  for (int i = 0; i < 64; ++i) {
    const auto u = static_cast<std::size_t>(i);
    EXPECT_EQ(got[u], x[u]) << i;
    // memory at 640 holds lanes 32..63: a low load puts them in lanes 0..31
    EXPECT_EQ(got[64 + u], i < 32 ? x[u + 32] : -1) << i;
    // memory at 512 holds lanes 0..31: a high load puts them in lanes 32..63
    EXPECT_EQ(got[128 + u], i < 32 ? -1 : x[u - 32]) << i;
    EXPECT_EQ(got[192 + u], i < 32 ? 0x09090909 : 0x04040404) << i;
  }
}

// Every vector type: a whole store and load, the halves stored apart and loaded whole, and a
// half loaded under an all-true lane predicate, each checked lane by lane against a plain loop;
// one flag per type.
template <typename V>
V pattern() {
  using T = std::remove_cvref_t<decltype(V{}.v[0])>;
  V x(detail::no_init_t{});
  for (int i = 0; i < V::lanes; ++i) {
    if constexpr (std::is_integral_v<T>)
      x.v[i] = static_cast<T>(i % 100 - 20);
    else
      x.v[i] = T(static_cast<float>(i % 100) - 20.5f);
  }
  return x;
}
template <typename V>
bool same_bits(const V& a, const V& b) {
  return std::memcmp(a.v, b.v, sizeof a.v) == 0;
}
#define LOCAL_ROUND_TRIP(D, V, B)                                                        \
  {                                                                                      \
    const V x = pattern<V>();                                                            \
    v_##D##_st_l_v(2048, x);                                                             \
    bool ok = same_bits(v_##D##_ld_l_v_b(2048), x);                                      \
    v_##D##_st_l_v_low(4096, x);                                                         \
    v_##D##_st_l_v_high(4096 + 128, x);                                                  \
    ok = ok && same_bits(v_##D##_ld_l_v_b(4096), x);                                     \
    const V high = v_##D##_ld_l_v_low_vb(4096 + 128, 0, pattern<V>(), B(bool256(0xff))); \
    V want = pattern<V>();                                                               \
    std::memcpy(reinterpret_cast<std::byte*>(want.v),                                    \
                reinterpret_cast<const std::byte*>(x.v) + 128, 128);                     \
    ok = ok && same_bits(high, want);                                                    \
    r[lane++] = ok ? 1 : 0;                                                              \
  }
void every_vector_type(tensor out) {
  int64 r(0);
  int lane = 0;
  LOCAL_ROUND_TRIP(f32, float64, bool64)
  LOCAL_ROUND_TRIP(bf16, bfloat128, bool128)
  LOCAL_ROUND_TRIP(i32, int64, bool64)
  LOCAL_ROUND_TRIP(u32, uint64, bool64)
  LOCAL_ROUND_TRIP(i16, short128, bool128)
  LOCAL_ROUND_TRIP(u16, ushort128, bool128)
  LOCAL_ROUND_TRIP(i8, char256, bool256)
  LOCAL_ROUND_TRIP(u8, uchar256, bool256)
  i32_st_tnsr_i_v({0, 0, 0, 0, 0}, out, r);
}
#undef LOCAL_ROUND_TRIP

TEST_F(LocalMemoryTest, EveryVectorTypeRoundTripsWholeAndByHalves) {
  add("every_vector_type", tpc_kernel<&every_vector_type>());
  Runtime rt(*dev, options());
  auto out = make_device_tensor(*dev, DType::i32, Shape{64});
  rt.launch("every_vector_type", {}, {out});
  const auto got = download<std::int32_t>(*dev, out);
  for (int t = 0; t < 8; ++t) EXPECT_EQ(got[static_cast<std::size_t>(t)], 1) << "type " << t;
}

// Lane predicates on loads, scalar predicates on stores.
void predicated(tensor in, tensor out) {
  const float64 v = v_f32_ld_tnsr_b({0, 0, 0, 0, 0}, in);
  const float64 zero(0.0f);
  v_f32_st_l_v(0, zero);
  v_f32_st_l_v(0, v, 0, false);          // not stored
  v_f32_st_l_v(0, v, 0, true, true);     // inverted: not stored
  v_f32_st_l_v(256, v, 0, false, true);  // inverted false: stored
  f32_st_tnsr_i_v({0, 0, 0, 0, 0}, out, v_f32_ld_l_v_b(0));
  f32_st_tnsr_i_v({64, 0, 0, 0, 0}, out, v_f32_ld_l_v_b(256));
  // Lanes whose predicate is set take memory, the others income.
  bool256 odd;
  for (int i = 0; i < 64; ++i) odd.set(i * 4, i % 2 == 1);  // lane i of a 64-lane vector
  const float64 income(-5.0f);
  f32_st_tnsr_i_v({128, 0, 0, 0, 0}, out, v_f32_ld_l_v_vb(256, 0, income, to_bool64(odd)));
  f32_st_tnsr_i_v({192, 0, 0, 0, 0}, out, v_f32_ld_l_v_vb(256, 0, income, to_bool64(odd), true));
  f32_st_tnsr_i_v({256, 0, 0, 0, 0}, out, v_f32_ld_l_v_b(256, 0, income, false));
}

TEST_F(LocalMemoryTest, PredicatesChooseWhatIsStoredAndWhichLanesLoad) {
  add("predicated", tpc_kernel<&predicated>());
  Runtime rt(*dev, options());
  const std::vector<float> x = ramp(64, 1.5f);
  auto in = upload(*dev, DType::f32, Shape{64}, x);
  auto out = make_device_tensor(*dev, DType::f32, Shape{320});
  rt.launch("predicated", {in}, {out});
  const auto got = download<float>(*dev, out);
  for (int i = 0; i < 64; ++i) {
    const auto u = static_cast<std::size_t>(i);
    EXPECT_EQ(got[u], 0.0f) << i;
    EXPECT_EQ(got[64 + u], x[u]) << i;
    EXPECT_EQ(got[128 + u], i % 2 == 1 ? x[u] : -5.0f) << i;
    EXPECT_EQ(got[192 + u], i % 2 == 1 ? -5.0f : x[u]) << i;
    EXPECT_EQ(got[256 + u], -5.0f) << i;
  }
}

// Fresh memory holds the poison pattern at every launch: local memory is not zeroed (spec 000
// §2.6.4), and a launch does not see the last one's data.
void read_unwritten(tensor out) {
  u32_st_tnsr_i_v({0, 0, 0, 0, 0}, out, v_u32_ld_l_v_b(4096));
  int64 s(s_i32_ld_l(512));
  i32_st_tnsr_i_v({64, 0, 0, 0, 0}, out, s);
  v_u32_st_l_v(4096, uint64(7u));
  s_i32_st_l(512, 7);
}

TEST_F(LocalMemoryTest, EveryLaunchStartsFromPoison) {
  add("read_unwritten", tpc_kernel<&read_unwritten>());
  Runtime rt(*dev, options());
  for (int launch = 0; launch < 2; ++launch) {
    auto out = make_device_tensor(*dev, DType::u32, Shape{128});
    rt.launch("read_unwritten", {}, {out});
    for (auto v : download<std::uint32_t>(*dev, out)) ASSERT_EQ(v, 0xDEADBEEFu) << launch;
  }
}

// Each member accumulates its vectors in vector local memory by address (a running sum kept at
// one address) and in a scalar word; many members over the cores.
void accumulate(tensor in, tensor out) {
  const int5 s = get_index_space_offset();
  const int5 e = s + get_index_space_size();
  for (int m = s[0]; m < e[0]; ++m) {
    v_f32_st_l_v(1024, float64(0.0f));
    s_i32_st_l(0, 0);
    for (int i = 0; i < 4; ++i) {
      const float64 x = v_f32_ld_tnsr_b({(m * 4 + i) * 64, 0, 0, 0, 0}, in);
      v_f32_st_l_v(1024, v_f32_add_b(v_f32_ld_l_v_b(1024), x));
      s_i32_st_l(0, s_i32_ld_l(0) + 1);
    }
    const float64 sum = v_f32_ld_l_v_b(1024);
    v_f32_st_tnsr({m * 64, 0, 0, 0, 0}, out,
                  v_f32_add_b(sum, float64(static_cast<float>(s_i32_ld_l(0)))));
  }
}

TEST_F(LocalMemoryTest, ResultsAndCyclesAreTheSameForEveryThreadCountAndCheckOrderPasses) {
  const int members = 37;
  add("accumulate", tpc_kernel<&accumulate>(), members);
  const std::vector<float> x = ramp(members * 4 * 64, 0.25f);
  std::vector<float> want(static_cast<std::size_t>(members * 64));
  for (int m = 0; m < members; ++m)
    for (int l = 0; l < 64; ++l) {
      float acc = 0.0f;
      for (int i = 0; i < 4; ++i) acc += x[static_cast<std::size_t>((m * 4 + i) * 64 + l)];
      want[static_cast<std::size_t>(m * 64 + l)] = acc + 4.0f;
    }
  std::uint64_t cycles = 0;
  for (unsigned threads : {1u, 2u, 8u}) {
    sim::WorkScheduler pool(threads);
    Runtime rt(*dev, options(&pool));
    auto in = upload(*dev, DType::f32, Shape{members * 4 * 64}, x);
    auto out = make_device_tensor(*dev, DType::f32, Shape{members * 64});
    const auto& rec = rt.launch("accumulate", {in}, {out});
    EXPECT_EQ(download<float>(*dev, out), want) << threads << " threads";
    if (cycles == 0) cycles = rec.cycles;
    EXPECT_EQ(rec.cycles, cycles) << threads << " threads";
  }
  // Check-order mode runs finer instances in shuffled order: a kernel that writes its local
  // memory before reading it gives the same outputs.
  RuntimeOptions o = options();
  o.check_order = true;
  Runtime rt(*dev, o);
  auto in = upload(*dev, DType::f32, Shape{members * 4 * 64}, x);
  auto out = make_device_tensor(*dev, DType::f32, Shape{members * 64});
  EXPECT_NO_THROW(rt.launch("accumulate", {in}, {out}));
  EXPECT_EQ(download<float>(*dev, out), want);
}

// Local memory holds what a member left for the next member of its core (spec 000 §2.6.4): the
// count runs 1..8 over each core's members. Such a kernel depends on the order of members, and
// check-order mode, which runs finer instances in another order, reports it.
void count_instances(tensor out) {
  const int5 s = get_index_space_offset();
  const int5 e = s + get_index_space_size();
  for (int m = s[0]; m < e[0]; ++m) {
    const std::int32_t seen = s_i32_ld_l(0);
    s_i32_st_l(0, seen == static_cast<std::int32_t>(0xDEADBEEFu) ? 1 : seen + 1);
    i32_st_tnsr_i_v({m * 64, 0, 0, 0, 0}, out, int64(s_i32_ld_l(0)));
  }
}

TEST_F(LocalMemoryTest, StateLeftForTheCoresNextMemberIsFoundAndCheckOrderReportsIt) {
  const int members = 64;
  add("count_instances", tpc_kernel<&count_instances>(), members);
  {
    Runtime rt(*dev, options());
    auto out = make_device_tensor(*dev, DType::i32, Shape{members * 64});
    rt.launch("count_instances", {}, {out});
    // 8 cores, one instance of 8 members each: a core's count goes 1..8 over its members.
    const auto got = download<std::int32_t>(*dev, out);
    const int per_core = members / 8;
    for (int m = 0; m < members; ++m)
      EXPECT_EQ(got[static_cast<std::size_t>(m * 64)], m % per_core + 1) << m;
  }
  RuntimeOptions o = options();
  o.check_order = true;
  Runtime rt(*dev, o);
  auto out = make_device_tensor(*dev, DType::i32, Shape{members * 64});
  try {
    rt.launch("count_instances", {}, {out});
    FAIL() << "no DeviceFault";
  } catch (const DeviceFault& e) {
    EXPECT_NE(std::string(e.what()).find("check-order mode"), std::string::npos) << e.what();
  }
}

TEST(TpcLocalMemory, AccessesOutsideAKernelAreUserErrors) {
  EXPECT_THROW((void)s_f32_ld_l(0), UserError);
  EXPECT_THROW(v_f32_st_l_v(0, float64(1.0f)), UserError);
}

}  // namespace
