// The high-level converts of tpc-intrinsics.h (`float64 convert_int64_to_float64(int64 a, const
// int options)` and the rest over single, pair and quad registers, and the shifting
// `int_convert_*` / `uint_convert_*`), built from the CONVERT lanes of intrinsics.h the way
// Habana's compiler lowers them (HabanaAI/tpc_llvm, llvm/lib/Target/TPC/TPCISelLowering.cpp,
// ConversionEntity): one CONVERT per lane group and register, so each is timed as that many
// VPU issues. Included from intrinsics_gaudi.h; `options` takes a rounding mode and SW_LINEAR.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "tessera/targets/tpc/api/intrinsics_gaudi.h"  // included from its end as well

namespace tessera::tpc {

// ---- quad registers (tpc-defs.h "Structures mapped to registers": `typedef struct _float256 {
// float64 v1, v2, v3, v4; } float256;`, and int256, uint256) ----
struct float256 {
  float64 v1, v2, v3, v4;
};
struct int256 {
  int64 v1, v2, v3, v4;
};
struct uint256 {
  uint64 v1, v2, v3, v4;
};

namespace detail {

// A value's registers: a vector is one, a pair (v1, v2) two, a quad (v1..v4) four.
template <typename W>
constexpr int register_count() {
  using T = std::remove_cvref_t<W>;
  if constexpr (requires(T w) { w.v4; })
    return 4;
  else if constexpr (requires(T w) { w.v2; })
    return 2;
  else
    return 1;
}
template <typename W>
auto& register_of(W& w, int j) {
  constexpr int n = register_count<W>();
  if constexpr (n == 4)
    return j == 0 ? w.v1 : j == 1 ? w.v2 : j == 2 ? w.v3 : w.v4;
  else if constexpr (n == 2)
    return j == 0 ? w.v1 : w.v2;
  else
    return w;
}
template <typename W>
using register_type = std::remove_cvref_t<decltype(register_of(std::declval<W&>(), 0))>;
// When all of a value's registers are ready, as an operand of on_vpu.
struct ready_at {
  std::uint64_t ready;
};
template <typename W>
ready_at ready_of_registers(const W& w) {
  std::uint64_t r = 0;
  for (int j = 0; j < register_count<W>(); ++j) r = std::max(r, register_of(w, j).ready);
  return {r};
}

// What a high-level convert's `options` may hold: a rounding mode and SW_LINEAR (tpc-intrinsics.h
// "High-level convert"; SW_CLIP_FP is Gaudi2's).
inline constexpr int kHighLevelConvertOptions = kRoundingBits | SW_LINEAR;

// convert_<a>_to_<b>: element n of the result is element n of `a` converted (rounding `options`'
// mode, saturating as every CONVERT does), with the lanes in the lowering's order. The value is
// split into min(registers) chunks converted apart; within a chunk, by default ("swizzled"):
// - same element width: register to register, one CONVERT each;
// - widening one register into k: result register j holds source lanes i * k + j (k = 2: a
//   CONVERT of lane j; k = 4: a CONVERT of lane 0 after j SHRs of the 32-bit words by 8 bits);
// - narrowing k registers into one: source register j goes to lanes i * k + j (a CONVERT
//   writing lane j, into the previous one's result).
// f32 <-> bf16 over a register pair is one CONVERT on Gaudi (the compiler's conversion table
// marks v128f32 <-> v128bf16 Hard for Gen2: one instruction with a pair operand, as
// v_convert_f32_to_bf16_all_b), so those chunks take one VPU issue.
// SW_LINEAR keeps elements in order instead: element n of the chunk's source is element n of its
// result. The lowering reaches it with extra lane moves; Tessera charges them as the lane
// reorder of detail::reorder_lanes (an estimate) on the one-register side.
template <typename To, typename From>
inline To convert_wide(const From& a, int options, const char* name) {
  check_switches(options, kHighLevelConvertOptions, name);
  const int rm = rounding_of(options, name);
  const bool linear = (options & SW_LINEAR) != 0;
  using FR = register_type<const From>;
  using TR = register_type<To>;
  constexpr int rs = register_count<From>();
  constexpr int rd = register_count<To>();
  static_assert(FR::lanes * rs == TR::lanes * rd, "a convert keeps the element count");
  constexpr bool pair_operand = (std::is_same_v<FR, float64> && std::is_same_v<TR, bfloat128>) ||
                                (std::is_same_v<FR, bfloat128> && std::is_same_v<TR, float64>);
  To r{};
  for (int c = 0; c < std::min(rs, rd); ++c) {
    if constexpr (rs == rd) {
      const FR& s = register_of(a, c);
      register_of(r, c) = on_vpu([&] { return convert<TR, FR>(s, rm, 0, TR()); }, s);
    } else if constexpr (rd > rs) {
      constexpr int k = rd / rs;
      FR s = register_of(a, c);
      if (linear) s = scatter_lanes(s, k);
      for (int j = 0; j < k; ++j) {
        int lane = j;
        if constexpr (k == 4) {  // 8 -> 32 bits: the lowering shifts each byte into lane 0
          if (j > 0) s = static_cast<FR>(v_u32_shr_b(static_cast<uint64>(s), uint64(8u)));
          lane = 0;
        }
        TR& dst = register_of(r, c * k + j);
        if (pair_operand && j > 0) {  // written by the same instruction as register 0
          dst = convert<TR, FR>(s, rm, lane, TR());
          dst.ready = register_of(r, c * k).ready;
        } else {
          dst = on_vpu([&] { return convert<TR, FR>(s, rm, lane, TR()); }, s);
        }
      }
    } else {
      constexpr int k = rs / rd;
      TR out;
      if constexpr (pair_operand) {
        const FR& s0 = register_of(a, c * k);
        const FR& s1 = register_of(a, c * k + 1);
        out = on_vpu([&] { return convert<TR, FR>(s1, rm, 1, convert<TR, FR>(s0, rm, 0, TR())); },
                     s0, s1);
      } else {
        for (int j = 0; j < k; ++j) {
          const FR& s = register_of(a, c * k + j);
          out = on_vpu([&] { return convert<TR, FR>(s, rm, j, out); }, s, out);
        }
      }
      if (linear) out = gather_lanes(out, k);
      register_of(r, c) = out;
    }
  }
  return r;
}

// int_convert_* / uint_convert_*: the narrowing of convert_wide through CONVERT_INT32 /
// CONVERT_INT16 (and the unsigned ones): each element shifted right by its shift (left when
// negative), rounded in the mode, saturated (detail::shift_round_saturate). Result element n
// takes shift element n: for one shift for all (the compiler hands a splat to each CONVERT_INT
// as a scalar, tpc_llvm prepareShift) that is the instructions' result; for shifts that differ
// it is Tessera's reading of the declarations, whose shift types have the result's element
// count. One CONVERT_INT (VPU issue) per source register; SW_LINEAR as in convert_wide.
template <typename To, typename From, typename Shift>
inline To convert_int_wide(const From& a, const Shift& shift, int options, const char* name) {
  check_switches(options, kHighLevelConvertOptions, name);
  const int rm = shift_rounding_of(options & kRoundingBits, name);
  const bool linear = (options & SW_LINEAR) != 0;
  using FR = register_type<const From>;
  using SR = register_type<const Shift>;
  constexpr int k = register_count<From>();
  constexpr int n = FR::lanes;  // source elements per register
  static_assert(register_count<To>() == 1 && To::lanes == n * k, "narrows into one register");
  static_assert(SR::lanes * register_count<Shift>() == To::lanes, "one shift per result");
  auto shift_of = [&](int e) {
    return static_cast<int>(register_of(shift, e / SR::lanes).v[e % SR::lanes]);
  };
  To out;
  for (int j = 0; j < k; ++j) {
    const FR& s = register_of(a, j);
    out = on_vpu(
        [&] {
          To w = out;
          for (int i = 0; i < n; ++i)
            w.v[i * k + j] = shift_round_saturate<lane_t<To>>(
                static_cast<std::int64_t>(s.v[i]), shift_of(linear ? j * n + i : i * k + j), rm);
          return w;
        },
        s, out, ready_of_registers(shift));
  }
  return linear ? gather_lanes(out, k) : out;
}

}  // namespace detail

// convert_<from>_to_<to>(a, options) for the Gaudi set of tpc-intrinsics.h (its `half` forms are
// Gaudi2 / GaudiB: Gaudi has no fp16 CONVERT).
#define TESSERA_TPC_HL_CONVERT(FROM, TO)                                      \
  inline TO convert_##FROM##_to_##TO(const FROM& a, const int options) {      \
    return detail::convert_wide<TO>(a, options, "convert_" #FROM "_to_" #TO); \
  }
// 64 lanes: int64, uint64, float64.
TESSERA_TPC_HL_CONVERT(int64, float64)
TESSERA_TPC_HL_CONVERT(uint64, float64)
TESSERA_TPC_HL_CONVERT(float64, int64)
TESSERA_TPC_HL_CONVERT(uint64, int64)
TESSERA_TPC_HL_CONVERT(float64, uint64)
TESSERA_TPC_HL_CONVERT(int64, uint64)
// 128 lanes: float128, int128, uint128 (pairs), bfloat128, short128, ushort128.
#define TESSERA_TPC_HL_CONVERT_128(TO, A, B, C, D, E) \
  TESSERA_TPC_HL_CONVERT(A, TO)                       \
  TESSERA_TPC_HL_CONVERT(B, TO)                       \
  TESSERA_TPC_HL_CONVERT(C, TO)                       \
  TESSERA_TPC_HL_CONVERT(D, TO)                       \
  TESSERA_TPC_HL_CONVERT(E, TO)
TESSERA_TPC_HL_CONVERT_128(float128, bfloat128, int128, uint128, short128, ushort128)
TESSERA_TPC_HL_CONVERT_128(bfloat128, float128, int128, uint128, short128, ushort128)
TESSERA_TPC_HL_CONVERT_128(int128, bfloat128, float128, uint128, short128, ushort128)
TESSERA_TPC_HL_CONVERT_128(uint128, bfloat128, float128, int128, short128, ushort128)
TESSERA_TPC_HL_CONVERT_128(short128, bfloat128, float128, int128, uint128, ushort128)
TESSERA_TPC_HL_CONVERT_128(ushort128, bfloat128, float128, int128, uint128, short128)
#undef TESSERA_TPC_HL_CONVERT_128
// 256 lanes: float256, int256, uint256 (quads), bfloat256, short256, ushort256 (pairs), char256,
// uchar256.
#define TESSERA_TPC_HL_CONVERT_256(TO, A, B, C, D, E, F, G) \
  TESSERA_TPC_HL_CONVERT(A, TO)                             \
  TESSERA_TPC_HL_CONVERT(B, TO)                             \
  TESSERA_TPC_HL_CONVERT(C, TO)                             \
  TESSERA_TPC_HL_CONVERT(D, TO)                             \
  TESSERA_TPC_HL_CONVERT(E, TO)                             \
  TESSERA_TPC_HL_CONVERT(F, TO)                             \
  TESSERA_TPC_HL_CONVERT(G, TO)
TESSERA_TPC_HL_CONVERT_256(float256, bfloat256, int256, uint256, short256, ushort256, char256,
                           uchar256)
TESSERA_TPC_HL_CONVERT_256(bfloat256, float256, int256, uint256, short256, ushort256, char256,
                           uchar256)
TESSERA_TPC_HL_CONVERT_256(int256, bfloat256, float256, uint256, short256, ushort256, char256,
                           uchar256)
TESSERA_TPC_HL_CONVERT_256(uint256, bfloat256, float256, int256, short256, ushort256, char256,
                           uchar256)
TESSERA_TPC_HL_CONVERT_256(short256, bfloat256, float256, int256, uint256, ushort256, char256,
                           uchar256)
TESSERA_TPC_HL_CONVERT_256(ushort256, bfloat256, float256, int256, uint256, short256, char256,
                           uchar256)
TESSERA_TPC_HL_CONVERT_256(char256, bfloat256, float256, int256, uint256, short256, ushort256,
                           uchar256)
TESSERA_TPC_HL_CONVERT_256(uchar256, bfloat256, float256, int256, uint256, short256, ushort256,
                           char256)
#undef TESSERA_TPC_HL_CONVERT_256
#undef TESSERA_TPC_HL_CONVERT

// The shifting high-level converts, with tpc-intrinsics.h's declarations (its
// int_convert_short256_to_char256 takes an int256 value, as declared there).
#define TESSERA_TPC_HL_CONVERT_INT(PREFIX, FROM, TO, SHIFT)                                       \
  inline TO PREFIX##_convert_##FROM##_to_##TO(const FROM& a, const SHIFT& shift,                  \
                                              const int options) {                                \
    return detail::convert_int_wide<TO>(a, shift, options, #PREFIX "_convert_" #FROM "_to_" #TO); \
  }
TESSERA_TPC_HL_CONVERT_INT(int, int128, short128, short128)
TESSERA_TPC_HL_CONVERT_INT(uint, uint128, ushort128, ushort128)
TESSERA_TPC_HL_CONVERT_INT(int, int256, char256, char256)
TESSERA_TPC_HL_CONVERT_INT(uint, uint256, uchar256, uchar256)
TESSERA_TPC_HL_CONVERT_INT(uint, ushort256, uchar256, uchar256)
#undef TESSERA_TPC_HL_CONVERT_INT
inline char256 int_convert_short256_to_char256(const int256& a, const short256& shift,
                                               const int options) {
  return detail::convert_int_wide<char256>(a, shift, options, "int_convert_short256_to_char256");
}

}  // namespace tessera::tpc
