// The TPC-C intrinsics of tpc-intrinsics.h whose semantics its text leaves out and Habana's own
// compiler fixes (HabanaAI/tpc_llvm, llvm/lib/Target/TPC): PACK, ST_TNSR's SW_PACK, UDIV_4STEP
// and READ_LFSR / WRITE_LFSR. Part of intrinsics_gaudi.h, which includes it at its end (its
// whole-register stores call whole_store below); include intrinsics_gaudi.h, not this file.
// Where each rule comes from is in docs/targets/tpc.md §3.
#pragma once

#include <cstdint>
#include <cstring>

#include "tessera/targets/tpc/api/context.h"
#include "tessera/targets/tpc/api/intrinsics.h"
#include "tessera/targets/tpc/api/types.h"

namespace tessera::tpc {

// Switches of tpc-defs.h these intrinsics take (same encodings).
enum : int {
  SW_READ_ONLY = 1,               // READ_LFSR: read without advancing
  SW_X2_UDIV_4STEP = 0x1 << 6,    // UDIV_4STEP: 8 steps (Greco only, refused on Gaudi)
  SW_PACK_DT = 0x03 << 4,         // ST_TNSR: the SW_PCK_* field
  SW_GROUP_SOURCE = 1 << 8,       // PACK / UNPACK: the SW_GROUP_x bit
  SW_ELEMENT_STRIDE = 1 << 9,     // PACK / UNPACK: the SW_STRIDE_x bit
};

// The in-out register pairs of UDIV_4STEP (tpc-defs.h "Structures mapped to registers": every
// field is an unsigned int, whatever the division's width).
struct uint32_t_pair_t {
  unsigned int v1, v2;
};
struct uint16_t_pair_t {
  unsigned int v1, v2;
};
struct uint8_t_pair_t {
  unsigned int v1, v2;
};

namespace detail {

[[noreturn]] void bad_pack_stride(const char* intrinsic);
[[noreturn]] void bad_pack_type(const char* intrinsic, int switches, int element_bits);
[[noreturn]] void bad_udiv(const char* intrinsic, const char* what, unsigned value, int bits);
void lfsr_write_masked(const std::uint8_t bytes[256], const bool256& predicate, bool polarity,
                       std::uint64_t operands_ready);

// PACK: of each dual group, the valid elements (every second or fourth, SW_STRIDE_2 / _4) of
// group SW_GROUP_x go, in order, to the place they take in the whole register's packed data,
// folded into the dual group's own 64 bytes (dual group d of a 2:1 pack fills group d % 2).
// Every other element keeps income. This is the layout Habana's compiler assembles with
// MOV_DUAL_GROUP when it lowers vector truncation (TPCISelLowering.cpp truncate_32_to_16,
// truncate_32_to_8). No lowering packs 16-bit elements with stride 4, so that is refused.
template <typename V>
inline V pack(const V& a, int switches, const V& income, const char* intrinsic) {
  check_switches(switches, SW_GROUP_1 | SW_STRIDE_4, intrinsic);
  constexpr int per_dual_group = V::lanes / 4;
  const int stride = (switches & SW_STRIDE_4) ? 4 : 2;
  if (stride == 4 && sizeof(lane_t<V>) != 1) bad_pack_stride(intrinsic);
  const int group = (switches & SW_GROUP_1) ? 1 : 0;
  const int count = per_dual_group / 2 / stride;  // valid elements of one group
  V r = income;
  for (int dg = 0; dg < 4; ++dg)
    for (int k = 0; k < count; ++k)
      r.v[dg * per_dual_group + (2 * count * dg + count * group + k) % per_dual_group] =
          a.v[dg * per_dual_group + group * (per_dual_group / 2) + k * stride];
  return r;
}

// ST_TNSR with SW_PACK: the store pipe writes element m of the stored vector from register
// element ratio * (m % n) + m / n (n = lanes / ratio), undoing the interleaving of the
// non-linear CONVERTs, as the compiler's TPCEliminateRedundantLinearity.cpp computes it
// (getSwizzleSourceIx for PACK_32_TO_16, _32_TO_8, _16_TO_8). The SW_PCK_* field names the
// element sizes; its narrow side must be the stored type's.
template <typename V>
inline V store_order(const V& value, int switches, const char* intrinsic) {
  constexpr int bits = static_cast<int>(8 * sizeof(lane_t<V>));
  int from_bits = 0;
  int to_bits = 0;
  switch (switches & SW_PACK_DT) {
    case SW_PCK_32_TO_16:
      from_bits = 32, to_bits = 16;
      break;
    case SW_PCK_16_TO_8:
      from_bits = 16, to_bits = 8;
      break;
    case SW_PCK_32_TO_8:
      from_bits = 32, to_bits = 8;
      break;
    default:  // SW_PCK_8_TO_4: Gaudi has no 4-bit elements
      break;
  }
  if (to_bits != bits) bad_pack_type(intrinsic, switches, bits);
  const int ratio = from_bits / to_bits;
  const int n = V::lanes / ratio;
  V r(no_init_t{});
  r.ready = value.ready;
  for (int m = 0; m < V::lanes; ++m) r.v[m] = value.v[ratio * (m % n) + m / n];
  return r;
}

// v_<t>_st_tnsr: a plain store, or a packing one with SW_PACK (one store-slot issue either way;
// the store pipe does the packing). A bad switch is refused even when the predicate is off.
template <typename V>
inline void whole_store(const int5& ndx, tensor t, const V& value, int switches, bool predicate,
                        bool polarity, const char* intrinsic) {
  if (!(switches & SW_PACK)) {
    check_store_switches(switches, intrinsic);
    if (!enabled(predicate, polarity)) {
      issue(kStore, value.ready);
      return;
    }
    store(ndx, t, value, intrinsic);
    return;
  }
  check_switches(switches, int{SW_PACK} | SW_PACK_DT, intrinsic);
  const V packed = store_order(value, switches, intrinsic);
  if (!enabled(predicate, polarity)) {
    issue(kStore, value.ready);
    return;
  }
  store(ndx, t, packed, intrinsic);
}

// UDIV_4STEP: steps `step` down to step - 3 of restoring division by `a`. The in-out pair starts
// as (numerator, 0), as the compiler sets it (MakeScalarDividePriorGen4); at step i, when the
// partial remainder v1 holds a << i, it is subtracted and bit i of the quotient v2 set. After
// steps bits - 1 .. 0 (the loop the compiler emits), v1 is the remainder and v2 the quotient.
inline void check_udiv_switches(int switches, int bits, const char* intrinsic) {
  if (switches & SW_X2_UDIV_4STEP) bad_udiv(intrinsic, "SW_X2_UDIV_4STEP", 0, bits);
  check_switches(switches, 0, intrinsic);
}
inline void udiv_4step(unsigned a, unsigned step, unsigned& v1, unsigned& v2, int bits,
                       const char* intrinsic) {
  const std::uint64_t limit = std::uint64_t{1} << bits;
  if (a == 0) bad_udiv(intrinsic, "denominator", a, bits);
  if (step >= static_cast<unsigned>(bits)) bad_udiv(intrinsic, "step", step, bits);
  if (v1 >= limit) bad_udiv(intrinsic, "income.v1", v1, bits);
  if (v2 >= limit) bad_udiv(intrinsic, "income.v2", v2, bits);
  for (int i = static_cast<int>(step); i >= 0 && i > static_cast<int>(step) - 4; --i) {
    const std::uint64_t shifted = std::uint64_t{a} << i;
    if (v1 >= shifted) {
      v1 = static_cast<unsigned>(v1 - shifted);
      v2 |= 1u << i;
    }
  }
}

// READ_LFSR: the vector LFSR's next value, advancing it unless SW_READ_ONLY (tpc-defs.h:
// `#define LFSR read_lfsr_b()`, `#define LFSR_NO_CHANGE read_lfsr_b(SW_READ_ONLY)`).
inline char256 read_lfsr(int switches, std::uint64_t operands_ready, const char* intrinsic) {
  check_switches(switches, SW_READ_ONLY, intrinsic);
  std::uint32_t lanes[64];
  char256 r(no_init_t{});
  r.ready = lfsr_read(lanes, !(switches & SW_READ_ONLY), operands_ready);
  std::memcpy(r.v, lanes, sizeof lanes);
  return r;
}

}  // namespace detail

// ---- PACK (tpc-intrinsics.h "Pack/Unpack") ----
#define TESSERA_TPC_G_PACK(D, V, B)                                                             \
  inline V v_##D##_pack_b(const V& a, int switches, const V& income, bool predicate = true,    \
                          bool polarity = false) {                                             \
    return detail::predicated(detail::pack(a, switches, income, "v_" #D "_pack_b"), income,    \
                              predicate, polarity, a);                                         \
  }                                                                                            \
  inline V v_##D##_pack_vb(const V& a, int switches, const V& income, const B& predicate,      \
                           bool polarity = false) {                                            \
    return detail::predicated_v(detail::pack(a, switches, income, "v_" #D "_pack_vb"), income, \
                                predicate, polarity, a);                                       \
  }
TESSERA_TPC_G_PACK(bf16, bfloat128, bool128)
TESSERA_TPC_G_PACK(i16, short128, bool128)
TESSERA_TPC_G_PACK(u16, ushort128, bool128)
TESSERA_TPC_G_PACK(i8, char256, bool256)
TESSERA_TPC_G_PACK(u8, uchar256, bool256)
#undef TESSERA_TPC_G_PACK

// ---- UDIV_4STEP (tpc-intrinsics.h "udiv"): one SPU instruction, four steps ----
#define TESSERA_TPC_G_UDIV(D, S, P, BITS)                                                    \
  inline P D##_udiv_4step(S a, std::uint32_t step, int switches = 0, P income = {},          \
                          bool predicate = true, bool polarity = false) {                    \
    detail::check_udiv_switches(switches, BITS, #D "_udiv_4step");                           \
    detail::issue(detail::kSpu);                                                             \
    if (!detail::enabled(predicate, polarity)) return income;                                \
    detail::udiv_4step(a, step, income.v1, income.v2, BITS, #D "_udiv_4step");               \
    return income;                                                                           \
  }
TESSERA_TPC_G_UDIV(u32, std::uint32_t, uint32_t_pair_t, 32)
TESSERA_TPC_G_UDIV(u16, std::uint16_t, uint16_t_pair_t, 16)
TESSERA_TPC_G_UDIV(u8, std::uint8_t, uint8_t_pair_t, 8)
#undef TESSERA_TPC_G_UDIV

// ---- READ_LFSR / WRITE_LFSR (tpc-intrinsics.h "High-level intrinsics") ----
// Tessera's reading, which no public source settles: a read turned off by its scalar predicate
// does nothing; with a vector predicate it executes (the LFSR advances) and the predicate picks
// which bytes of the result take the value (the others keep income), and a write replaces the
// LFSR's enabled bytes.
inline char256 read_lfsr_b(int switches = 0, const char256& income = {}, bool predicate = true,
                           bool polarity = false) {
  if (!detail::enabled(predicate, polarity)) {
    detail::check_switches(switches, SW_READ_ONLY, "read_lfsr_b");
    return detail::on_vpu([&] { return income; }, income);
  }
  return detail::read_lfsr(switches, 0, "read_lfsr_b");
}
inline char256 read_lfsr_vb(int switches, const char256& income, const bool256& predicate,
                            bool polarity = false) {
  const char256 value =
      detail::read_lfsr(switches, detail::ready_of(income, predicate), "read_lfsr_vb");
  char256 r = detail::blend(value, income, predicate, polarity);
  r.ready = value.ready;
  return r;
}
inline void write_lfsr_b(const char256& src, bool predicate = true, bool polarity = false) {
  if (!detail::enabled(predicate, polarity)) {
    detail::issue(detail::kVpu, src.ready);
    return;
  }
  std::uint32_t lanes[64];
  std::memcpy(lanes, src.v, sizeof lanes);
  detail::lfsr_seed(lanes, src.ready);
}
inline void write_lfsr_vb(const char256& src, const bool256& predicate, bool polarity = false) {
  std::uint8_t bytes[256];
  std::memcpy(bytes, src.v, sizeof bytes);
  detail::lfsr_write_masked(bytes, predicate, polarity, detail::ready_of(src, predicate));
}

}  // namespace tessera::tpc
