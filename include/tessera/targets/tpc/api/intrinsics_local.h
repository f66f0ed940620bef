// Local memory by address (tpc-intrinsics.h LD_L, ST_L, LD_L_V, LD_L_V_LOW / _HIGH, ST_L_V,
// ST_L_V_LOW / _HIGH): scalars from and to the core's scalar local memory, vectors from and to
// its vector local memory (spec 000 §2.3.3, §2.5.3). An address is a byte offset into that
// memory; `__local__` objects and local_array live in the same bytes (local_array::address()),
// so an access by address and the object see the same data. Scalar accesses take aligned
// 4-byte chunks, vector ones aligned 256-byte (whole register) or 128-byte (half) chunks
// (§2.3.3); a misaligned access, or one past the memory (past 16 KiB of vector local memory when
// the program uses special functions), is a DeviceFault naming the kernel, address and size.
// Timing: a load issues on the load slot, a store on the store slot, and both take the local
// memory's one port for a cycle (one access per cycle, §2.3.3; tpc_llvm TPCSchedule.td: LD_L*
// and ST_L* never share a bundle); a load's result is ready after the load slot's latency.
// Included by intrinsics_gaudi.h.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "tessera/targets/tpc/api/context.h"
#include "tessera/targets/tpc/api/intrinsics.h"
#include "tessera/targets/tpc/api/intrinsics_gaudi.h"
#include "tessera/targets/tpc/api/local_memory.h"
#include "tessera/targets/tpc/api/types.h"

namespace tessera::tpc {

// Switches of LD_L / ST_L and LD_L_V / ST_L_V (tpc-defs.h). None is simulated: MMIO is the
// configuration space, LOCK / UNLOCK its semaphore and AUTO_INC an address register Tessera's
// by-value address has not; each is a UserError naming it.
enum : int {
  SW_MMIO = 0x1 << 0,
  SW_LOCK = 0x1 << 1,
  SW_UNLOCK = 0x1 << 1,
  SW_AUTO_INC_1_V = 0x1 << 0,
  SW_AUTO_INC_2_V = 0x2 << 0,
  SW_AUTO_INC_4_V = 0x3 << 0,
};

namespace detail {

// The one access path of both local memories (instance.cpp): checks, moves `bytes` between the
// running core's memory (vector: VLM, else SLM) and `data`, counts the access and issues it on
// `slot` and the memory's port. A read returns when its data is in the register.
std::uint64_t local_read(std::uint32_t address, void* data, std::uint32_t bytes, bool vector,
                         std::uint32_t granularity, const char* intrinsic);
void local_write(std::uint32_t address, const void* data, std::uint32_t bytes, bool vector,
                 std::uint32_t granularity, std::uint64_t value_ready, const char* intrinsic);
// A UserError naming the LD_L / ST_L / LD_L_V / ST_L_V switches in `switches`.
[[noreturn]] void bad_local_switches(const char* intrinsic, int switches, bool vector);
inline void check_local_switches(int switches, bool vector, const char* intrinsic) {
  if (switches != 0) [[unlikely]]
    bad_local_switches(intrinsic, switches, vector);
}

inline constexpr auto kHalfVector = static_cast<std::uint32_t>(kHalfRegisterBytes);

// LD_L_V (whole register) or its _LOW / _HIGH half (`part` 1 / 2): the register bytes
// [0, 256), [0, 128) or [128, 256) from VLM at `address`; a half keeps income in the other half,
// as LD_TNSR_LOW / _HIGH do (load_half).
template <typename V>
inline V local_load(std::uint32_t address, int part, const V& income, const char* intrinsic) {
  V r = part == 0 ? V(no_init_t{}) : income;
  const std::uint32_t bytes = part == 0 ? kVectorBytes : kHalfVector;
  auto* lanes = reinterpret_cast<std::byte*>(r.v) + (part == 2 ? kHalfVector : 0);
  const std::uint64_t loaded = local_read(address, lanes, bytes, true, bytes, intrinsic);
  r.ready = part == 0 ? loaded : std::max(loaded, income.ready);
  return r;
}
template <typename V>
inline void local_store(std::uint32_t address, int part, const V& value, const char* intrinsic) {
  const std::uint32_t bytes = part == 0 ? kVectorBytes : kHalfVector;
  const auto* lanes = reinterpret_cast<const std::byte*>(value.v) + (part == 2 ? kHalfVector : 0);
  local_write(address, lanes, bytes, true, bytes, value.ready, intrinsic);
}

}  // namespace detail

// s_<t>_ld_l(addr, switches, income, predicate, polarity), s_<t>_st_l(addr, value, switches,
// predicate, polarity), and tpc-defs.h's legacy s_<t>_ld_l_s_b(addr, income, switches, p, o),
// s_<t>_ld_l_s(addr, switches), <t>_st_l_s_s_b(addr, value, switches, p, o) and
// <t>_st_l_s_s(addr, value, switches).
#define TESSERA_TPC_L_SCALAR(D, S)                                                                 \
  inline S s_##D##_ld_l(std::uint32_t addr, int switches = 0, S income = S(),                      \
                        bool predicate = true, bool polarity = false) {                            \
    detail::check_local_switches(switches, false, "s_" #D "_ld_l");                                \
    if (!detail::enabled(predicate, polarity)) {                                                   \
      detail::issue(detail::kLoad);                                                                \
      return income;                                                                               \
    }                                                                                              \
    S x{};                                                                                         \
    detail::local_read(addr, &x, sizeof(S), false, detail::kScalarChunk, "s_" #D "_ld_l");         \
    return x;                                                                                      \
  }                                                                                                \
  inline void s_##D##_st_l(std::uint32_t addr, S value, int switches = 0, bool predicate = true,   \
                           bool polarity = false) {                                                \
    detail::check_local_switches(switches, false, "s_" #D "_st_l");                                \
    if (!detail::enabled(predicate, polarity)) {                                                   \
      detail::issue(detail::kStore);                                                               \
      return;                                                                                      \
    }                                                                                              \
    detail::local_write(addr, &value, sizeof(S), false, detail::kScalarChunk, 0, "s_" #D "_st_l"); \
  }                                                                                                \
  inline S s_##D##_ld_l_s_b(std::uint32_t addr, S income, int switches, bool predicate,            \
                            bool polarity) {                                                       \
    return s_##D##_ld_l(addr, switches, income, predicate, polarity);                              \
  }                                                                                                \
  inline S s_##D##_ld_l_s(std::uint32_t addr, int switches) {                                      \
    return s_##D##_ld_l(addr, switches);                                                           \
  }                                                                                                \
  inline void D##_st_l_s_s_b(std::uint32_t addr, S value, int switches, bool predicate,            \
                             bool polarity) {                                                      \
    s_##D##_st_l(addr, value, switches, predicate, polarity);                                      \
  }                                                                                                \
  inline void D##_st_l_s_s(std::uint32_t addr, S value, int switches) {                            \
    s_##D##_st_l(addr, value, switches);                                                           \
  }

// One part of LD_L_V / ST_L_V: PART is the name suffix (`` , _low, _high), N its number for
// local_load (0 whole, 1 low, 2 high). Loads come with a scalar (_b) and a lane (_vb) predicate,
// stores with a scalar one (the store slot's only kind, spec 000 §2.3.2). tpc-defs.h's legacy
// loads: v_<t>_ld_l_v<PART>_s_b(addr, income, p, o), _s_vb (predicate as bool256), _s(addr).
#define TESSERA_TPC_L_VECTOR_PART(D, V, B, PART, N)                                              \
  inline V v_##D##_ld_l_v##PART##_b(std::uint32_t addr, int switches = 0, const V& income = V(), \
                                    bool predicate = true, bool polarity = false) {              \
    detail::check_local_switches(switches, true, "v_" #D "_ld_l_v" #PART "_b");                  \
    if (!detail::enabled(predicate, polarity))                                                   \
      return detail::on_slot(                                                                    \
          detail::kLoad, [&] { return income; }, income);                                        \
    return detail::local_load(addr, N, income, "v_" #D "_ld_l_v" #PART "_b");                    \
  }                                                                                              \
  inline V v_##D##_ld_l_v##PART##_vb(std::uint32_t addr, int switches, const V& income,          \
                                     const B& predicate, bool polarity = false) {                \
    detail::check_local_switches(switches, true, "v_" #D "_ld_l_v" #PART "_vb");                 \
    V r = detail::blend(detail::local_load(addr, N, income, "v_" #D "_ld_l_v" #PART "_vb"),      \
                        income, predicate, polarity);                                            \
    r.ready = std::max({r.ready, income.ready, predicate.ready});                                \
    return r;                                                                                    \
  }                                                                                              \
  inline void v_##D##_st_l_v##PART(std::uint32_t addr, const V& value, int switches = 0,         \
                                   bool predicate = true, bool polarity = false) {               \
    detail::check_local_switches(switches, true, "v_" #D "_st_l_v" #PART);                       \
    if (!detail::enabled(predicate, polarity)) {                                                 \
      detail::issue(detail::kStore, value.ready);                                                \
      return;                                                                                    \
    }                                                                                            \
    detail::local_store(addr, N, value, "v_" #D "_st_l_v" #PART);                                \
  }                                                                                              \
  inline V v_##D##_ld_l_v##PART##_s_b(std::uint32_t addr, const V& income, bool predicate,       \
                                      bool polarity) {                                           \
    return v_##D##_ld_l_v##PART##_b(addr, 0, income, predicate, polarity);                       \
  }                                                                                              \
  inline V v_##D##_ld_l_v##PART##_s_vb(std::uint32_t addr, const V& income,                      \
                                       const bool256& predicate, bool polarity) {                \
    return v_##D##_ld_l_v##PART##_vb(addr, 0, income, B(predicate), polarity);                   \
  }                                                                                              \
  inline V v_##D##_ld_l_v##PART##_s(std::uint32_t addr) {                                        \
    return v_##D##_ld_l_v##PART##_b(addr);                                                       \
  }

#define TESSERA_TPC_L_VECTOR(D, V, B)         \
  TESSERA_TPC_L_VECTOR_PART(D, V, B, , 0)     \
  TESSERA_TPC_L_VECTOR_PART(D, V, B, _low, 1) \
  TESSERA_TPC_L_VECTOR_PART(D, V, B, _high, 2)

TESSERA_TPC_L_SCALAR(f32, float)
TESSERA_TPC_L_SCALAR(bf16, bf16)
TESSERA_TPC_L_SCALAR(i32, std::int32_t)
TESSERA_TPC_L_SCALAR(u32, std::uint32_t)
TESSERA_TPC_L_SCALAR(i16, std::int16_t)
TESSERA_TPC_L_SCALAR(u16, std::uint16_t)
TESSERA_TPC_L_SCALAR(i8, std::int8_t)
TESSERA_TPC_L_SCALAR(u8, std::uint8_t)
TESSERA_TPC_L_VECTOR(f32, float64, bool64)
TESSERA_TPC_L_VECTOR(bf16, bfloat128, bool128)
TESSERA_TPC_L_VECTOR(i32, int64, bool64)
TESSERA_TPC_L_VECTOR(u32, uint64, bool64)
TESSERA_TPC_L_VECTOR(i16, short128, bool128)
TESSERA_TPC_L_VECTOR(u16, ushort128, bool128)
TESSERA_TPC_L_VECTOR(i8, char256, bool256)
TESSERA_TPC_L_VECTOR(u8, uchar256, bool256)
#undef TESSERA_TPC_L_VECTOR
#undef TESSERA_TPC_L_VECTOR_PART
#undef TESSERA_TPC_L_SCALAR

}  // namespace tessera::tpc
