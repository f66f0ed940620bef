// TPC-C intrinsics of tpc-intrinsics.h's Gaudi set for bits, shifts, moves and core state: ASH,
// BREV, MUL with DOUBLE_AND_ROUND32 and ACC_F32, SHL/SHR on float encodings, the scalar and
// vector-predicated floating-point helpers, MOV_DUAL_GROUP with ALL, the v_i1 moves and logic,
// the IRF moves, the semaphore and rounding CSRs, and the cache instructions. Included from
// intrinsics_gaudi.h; every function is a wrapper over the lane code there and in intrinsics.h,
// timed through the issue model of context.h. Where tpc-intrinsics.h gives only a signature,
// the comment says what Tessera does and why.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "tessera/targets/tpc/api/context.h"
#include "tessera/targets/tpc/api/intrinsics.h"
#include "tessera/targets/tpc/api/intrinsics_gaudi.h"
#include "tessera/targets/tpc/api/types.h"

namespace tessera::tpc {

// Switches of tpc-defs.h used here and not elsewhere.
enum : int {
  SW_RHU = 0x1 << 1,  // ASH: round half up
  SW_INC = 0x0 << 8,  // ASO: increment the semaphore (the default)
  SW_DEC = 0x1 << 8,  // ASO: decrement it
  SW_SPU = 0x0 << 8,  // ASO: the update happens at the SPU stage (the default)
  SW_VPU = 0x2 << 8,  // ASO: at the VPU stage
};
// MOV_DUAL_GROUP with ALL: the lower / upper group write enables of each destination dual group
// (tpc-defs.h).
#define MkWrA(w0, w1, w2, w3) (((w0) << 16) | ((w1) << 18) | ((w2) << 20) | ((w3) << 22))

namespace detail {

// The unsigned integer of a lane's width, for operations on its encoding.
template <typename T>
using bits_t = std::conditional_t<sizeof(T) == 4, std::uint32_t,
                                  std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint8_t>>;
template <typename T>
inline bits_t<T> bits_of(const T& x) {
  bits_t<T> u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
template <typename T>
inline T from_bits(bits_t<T> u) {
  T x;
  std::memcpy(static_cast<void*>(&x), &u, sizeof x);
  return x;
}

// BREV: the element's bits in reverse order.
template <typename U>
inline U reverse_bits(U x) {
  U r = 0;
  for (unsigned b = 0; b < 8 * sizeof(U); ++b) r = static_cast<U>((r << 1) | ((x >> b) & 1u));
  return r;
}

// ASH (tpc-intrinsics.h: DEST = a * 2^b, b a signed 8-bit count). A left shift saturates to the
// type (the header: left shift saturation is on by default, SW_SAT should always be set); a
// right shift is arithmetic (floor) for signed types, logical for unsigned ones, and with SW_RHU
// rounds half up: floor(a / 2^-b + 1/2). A right shift never overflows, so saturation does not
// arise there; counts beyond the width leave the sign (or 0). The backend's public sources say
// nothing more, so this is Tessera's reading; shift_round_saturate is the shifting CONVERT's.
inline constexpr int kAshSwitches = static_cast<int>(SW_SAT) | SW_RHU;
template <typename T>
inline T ash_lane(T a, int count, int switches) {
  std::int64_t x = a;
  const int right = -count;
  if (right > 0 && (switches & SW_RHU)) {
    const int s = std::min(right, 40);  // |a| < 2^32: the sum stays in range
    x += std::int64_t{1} << (s - 1);
    return shift_round_saturate<T>(x, s, e_round_down);
  }
  return shift_round_saturate<T>(x, right, e_round_down);
}

// MUL with DOUBLE_AND_ROUND32 (tpc-intrinsics.h `v_i32_mul_round_b`, "RHU"): the upper 32 bits
// of the doubled 64-bit product, rounded half up: (2ab + 2^31) >> 32, the Q31 product. The one
// product that does not fit (INT32_MIN squared, and unsigned products of 2^63 and more)
// saturates to the type, Tessera's choice where the header is silent.
__extension__ typedef __int128 wide_product_t;  // the doubled product needs 65 bits
template <typename T>
inline T mul_round_lane(T a, T b) {
  const wide_product_t r = ((wide_product_t{2} * a * b) + (wide_product_t{1} << 31)) >> 32;
  if (r > std::numeric_limits<T>::max()) return std::numeric_limits<T>::max();
  if (r < std::numeric_limits<T>::lowest()) return std::numeric_limits<T>::lowest();
  return static_cast<T>(r);
}

// Element i's count of a char256 shift operand: the low byte of its own place (byte i * element
// size), every byte when the kernel passes a scalar (as the shifting CONVERT reads it).
template <typename V, typename F>
inline V ash_lanes(const V& a, const char256& b, int switches, F lane) {
  constexpr int bytes = static_cast<int>(sizeof(lane_t<V>));
  V r(no_init_t{});
  for (int i = 0; i < V::lanes; ++i) r.v[i] = lane(a.v[i], b.v[i * bytes], switches);
  return r;
}

// A lane-wise function from V's lanes to R's lanes of the same width.
template <typename R, typename V, typename F>
inline R map_to(const V& a, F f) {
  static_assert(R::lanes == V::lanes, "lanes of one width");
  R r(no_init_t{});
  for (int i = 0; i < V::lanes; ++i) r.v[i] = f(a.v[i]);
  return r;
}
template <typename V, typename C, typename F>
inline V zip_to(const V& a, const C& b, F f) {
  static_assert(C::lanes == V::lanes, "lanes of one width");
  V r(no_init_t{});
  for (int i = 0; i < V::lanes; ++i) r.v[i] = f(a.v[i], b.v[i]);
  return r;
}

// SHL / SHR of a float lane: its encoding shifted as an unsigned integer of its width, the count
// taken modulo the width as the integer shifts take it (op_shl, op_shr).
template <typename T, typename Op>
inline T shift_encoding(T a, long long count, Op op) {
  using U = bits_t<T>;
  return from_bits<T>(op(bits_of(a), static_cast<U>(count)));
}

// FCLASS of any float lane (fclass_bits on its f32 value, exact in bf16).
template <typename T>
inline T fclass_lane(T x) {
  return T(fclass_bits(static_cast<float>(x)));
}
// CALC_FP_SPECIAL of one lane (special_result on FCLASS operands), income where not special.
template <typename T>
inline T calc_fp_special_lane(T src1, T src2, int function, T income) {
  float out = 0;
  if (special_result(function, class_value(static_cast<float>(src1)),
                     class_value(static_cast<float>(src2)), out))
    return T(out);
  return income;
}
template <typename V>
inline V calc_fp_special(const V& src1, const V& src2, int switches, const V& income,
                         const char* name) {
  check_switches(switches, 0x7, name);
  V r(no_init_t{});
  for (int i = 0; i < V::lanes; ++i)
    r.v[i] = calc_fp_special_lane(src1.v[i], src2.v[i], switches & 0x7, income.v[i]);
  return r;
}

// FORM_FP_NUM with the exponent given as a number (the _ie_ forms; tpc-intrinsics.h: SRC1
// exponent, SRC2 sign, SRC3 mantissa, SW_EXP_IS_NUM set by default): the exponent is the signed
// low byte of the lane's place in a (byte i * element size), SW_ADD_BIAS adds the bias (127 for
// f32 and bf16); the sign is b's, forced, or b's LSB with SW_SIGN_LSB; the significand is c's.
template <typename V>
inline V form_fp_num_ie(const char256& a, const V& b, const V& c, int switches, const char* name) {
  using T = lane_t<V>;
  using U = bits_t<T>;
  check_switches(switches,
                 SW_ADD_BIAS | SW_FORCE_SIGN0 | SW_FORCE_SIGN1 | SW_EXP_IS_NUM | SW_SIGN_LSB, name);
  constexpr int width = 8 * static_cast<int>(sizeof(T));
  constexpr int mantissa_bits = width == 32 ? 23 : 7;
  constexpr U sign_mask = static_cast<U>(U{1} << (width - 1));
  constexpr U mantissa_mask = static_cast<U>((U{1} << mantissa_bits) - 1);
  constexpr int bytes = static_cast<int>(sizeof(T));
  V r(no_init_t{});
  for (int i = 0; i < V::lanes; ++i) {
    const U sb = bits_of(b.v[i]);
    U sign = static_cast<U>(sb & sign_mask);
    if (switches & SW_FORCE_SIGN0) sign = 0;
    if (switches & SW_FORCE_SIGN1) sign = sign_mask;
    if (switches & SW_SIGN_LSB) sign = (sb & 1u) ? sign_mask : U{0};
    int e = static_cast<std::int8_t>(a.v[i * bytes]);
    if (switches & SW_ADD_BIAS) e += 127;
    const U exponent = static_cast<U>((static_cast<U>(e) & 0xffu) << mantissa_bits);
    r.v[i] = from_bits<T>(static_cast<U>(sign | exponent | (bits_of(c.v[i]) & mantissa_mask)));
  }
  return r;
}

// MOV_DUAL_GROUP with ALL (tpc-intrinsics.h): destination dual group d takes source dual group
// sdg[d], its lower group where SW_WR_LOWER_GROUPd is set and its upper group where
// SW_WR_UPPER_GROUPd is, under the byte write mask b as MOV_DUAL_GROUP reads it.
[[noreturn]] void bad_dual_group(const char* intrinsic, int which, int value);
template <typename V>
inline V mov_dual_group_all(const V& a, std::uint32_t b, const int (&sdg)[4], int switches,
                            const V& income, const char* name) {
  check_switches(switches, 0xff << 16, name);
  V r = income;
  for (int d = 0; d < 4; ++d) {
    if (static_cast<unsigned>(sdg[d]) > 3u) [[unlikely]]
      bad_dual_group(name, d, sdg[d]);
    const int sw = ((switches >> (16 + 2 * d)) & 1 ? SW_WR_LOWER_GROUP : 0) |
                   ((switches >> (17 + 2 * d)) & 1 ? SW_WR_UPPER_GROUP : 0);
    r = mov_dual_group(a, b, sdg[d], d, sw, r, name);
  }
  return r;
}

// The lane ids of LANE_ID_4B / _2B / _1B (spec 000 §2.5.3).
template <typename V>
inline V lane_ids() {
  V r(no_init_t{});
  for (int i = 0; i < V::lanes; ++i) r.v[i] = static_cast<lane_t<V>>(i);
  return r;
}

// MOV with FLAVOR (tpc-intrinsics.h v_i1_mov_flavor_b): the 32 bits of a go to VPRF section
// `flavor` (predicate bits 32 * flavor .. + 31, bit j of a to bit 32 * flavor + j), or to all 8
// sections when flavor is 8; the other sections keep income.
[[noreturn]] void bad_flavor(const char* intrinsic, int flavor);
inline bool256 mov_flavor(std::int32_t a, int flavor, int switches, const bool256& income,
                          const char* name) {
  check_switches(switches, 0, name);
  if (static_cast<unsigned>(flavor) > 8u) [[unlikely]]
    bad_flavor(name, flavor);
  bool256 r = income;
  const auto bits = static_cast<std::uint32_t>(a);
  for (int section = 0; section < 8; ++section)
    if (flavor == 8 || flavor == section)
      for (int j = 0; j < 32; ++j)
        r.b[32 * section + j] = static_cast<std::uint8_t>((bits >> j) & 1u);
  return r;
}
template <typename F>
inline bool256 bitwise(const bool256& a, const bool256& b, F f) {
  bool256 r;
  for (int i = 0; i < 256; ++i) r.b[i] = static_cast<std::uint8_t>(f(a.b[i], b.b[i]) & 1u);
  return r;
}

// PRMT_INDX (tpc-intrinsics.h: each 3 bits of prmt_type name the source dimension of ndx):
// dimension d of the result is ndx[(prmt_type >> 3d) & 7]; a field beyond 4 names no dimension
// and is a UserError.
[[noreturn]] void bad_permutation(const char* intrinsic, int prmt_type, int dim);
[[noreturn]] void bad_irf_dim(const char* intrinsic, int dim);

}  // namespace detail

// ---- ASH: arithmetic shift, DEST = a * 2^b (see detail::ash_lane) ----
#define TESSERA_TPC_B_ASH(D, V, B, S)                                                           \
  inline S s_##D##_ash(S a, std::int8_t b, int switches = 0, S income = S(),                    \
                       bool predicate = true, bool polarity = false) {                          \
    detail::check_switches(switches, detail::kAshSwitches, "s_" #D "_ash");                     \
    detail::issue(detail::kSpu);                                                                \
    return detail::enabled(predicate, polarity) ? detail::ash_lane<S>(a, b, switches) : income; \
  }                                                                                             \
  inline V v_##D##_ash_b(const V& a, const char256& b, int switches = 0, const V& income = V(), \
                         bool predicate = true, bool polarity = false) {                        \
    detail::check_switches(switches, detail::kAshSwitches, "v_" #D "_ash_b");                   \
    return detail::predicated(detail::ash_lanes(a, b, switches, detail::ash_lane<S>), income,   \
                              predicate, polarity, a, b);                                       \
  }                                                                                             \
  inline V v_##D##_ash_vb(const V& a, const char256& b, int switches, const V& income,          \
                          const B& predicate, bool polarity = false) {                          \
    detail::check_switches(switches, detail::kAshSwitches, "v_" #D "_ash_vb");                  \
    return detail::predicated_v(detail::ash_lanes(a, b, switches, detail::ash_lane<S>), income, \
                                predicate, polarity, a, b);                                     \
  }
TESSERA_TPC_B_ASH(i32, int64, bool64, std::int32_t)
TESSERA_TPC_B_ASH(u32, uint64, bool64, std::uint32_t)
TESSERA_TPC_B_ASH(i16, short128, bool128, std::int16_t)
TESSERA_TPC_B_ASH(u16, ushort128, bool128, std::uint16_t)
TESSERA_TPC_B_ASH(i8, char256, bool256, std::int8_t)
TESSERA_TPC_B_ASH(u8, uchar256, bool256, std::uint8_t)
#undef TESSERA_TPC_B_ASH

// ---- BREV: the bits of each element reversed; float elements give their encoding reversed as
// an unsigned integer of their width (tpc-intrinsics.h: `uint32_t s_f32_brev(float a, ...)`) ----
#define TESSERA_TPC_B_BREV(D, V, B, S, RV, RS)                                                    \
  inline RS s_##D##_brev(S a, int switches = 0, RS income = RS(), bool predicate = true,          \
                         bool polarity = false) {                                                 \
    detail::check_switches(switches, 0, "s_" #D "_brev");                                         \
    detail::issue(detail::kSpu);                                                                  \
    return detail::enabled(predicate, polarity)                                                   \
               ? static_cast<RS>(detail::reverse_bits(detail::bits_of(a)))                        \
               : income;                                                                          \
  }                                                                                               \
  inline RV v_##D##_brev_b(const V& a, int switches = 0, const RV& income = RV(),                 \
                           bool predicate = true, bool polarity = false) {                        \
    detail::check_switches(switches, 0, "v_" #D "_brev_b");                                       \
    return detail::predicated(                                                                    \
        detail::map_to<RV>(                                                                       \
            a, [](auto x) { return static_cast<RS>(detail::reverse_bits(detail::bits_of(x))); }), \
        income, predicate, polarity, a);                                                          \
  }                                                                                               \
  inline RV v_##D##_brev_vb(const V& a, int switches, const RV& income, const B& predicate,       \
                            bool polarity = false) {                                              \
    detail::check_switches(switches, 0, "v_" #D "_brev_vb");                                      \
    return detail::predicated_v(                                                                  \
        detail::map_to<RV>(                                                                       \
            a, [](auto x) { return static_cast<RS>(detail::reverse_bits(detail::bits_of(x))); }), \
        income, predicate, polarity, a);                                                          \
  }
TESSERA_TPC_B_BREV(f32, float64, bool64, float, uint64, std::uint32_t)
TESSERA_TPC_B_BREV(bf16, bfloat128, bool128, bf16, ushort128, std::uint16_t)
TESSERA_TPC_B_BREV(i32, int64, bool64, std::int32_t, int64, std::int32_t)
TESSERA_TPC_B_BREV(u32, uint64, bool64, std::uint32_t, uint64, std::uint32_t)
TESSERA_TPC_B_BREV(i16, short128, bool128, std::int16_t, short128, std::int16_t)
TESSERA_TPC_B_BREV(u16, ushort128, bool128, std::uint16_t, ushort128, std::uint16_t)
TESSERA_TPC_B_BREV(i8, char256, bool256, std::int8_t, char256, std::int8_t)
TESSERA_TPC_B_BREV(u8, uchar256, bool256, std::uint8_t, uchar256, std::uint8_t)
#undef TESSERA_TPC_B_BREV

// ---- MUL with DOUBLE_AND_ROUND32 (see detail::mul_round_lane) ----
#define TESSERA_TPC_B_MUL_ROUND(D, V, B, S)                                                       \
  inline V v_##D##_mul_round_b(const V& a, const V& b, int switches = 0, const V& income = V(),   \
                               bool predicate = true, bool polarity = false) {                    \
    detail::check_switches(switches, 0, "v_" #D "_mul_round_b");                                  \
    return detail::predicated(detail::zip_to(a, b, detail::mul_round_lane<S>), income, predicate, \
                              polarity, a, b);                                                    \
  }                                                                                               \
  inline V v_##D##_mul_round_vb(const V& a, const V& b, int switches, const V& income,            \
                                const B& predicate, bool polarity = false) {                      \
    detail::check_switches(switches, 0, "v_" #D "_mul_round_vb");                                 \
    return detail::predicated_v(detail::zip_to(a, b, detail::mul_round_lane<S>), income,          \
                                predicate, polarity, a, b);                                       \
  }
TESSERA_TPC_B_MUL_ROUND(i32, int64, bool64, std::int32_t)
TESSERA_TPC_B_MUL_ROUND(u32, uint64, bool64, std::uint32_t)
#undef TESSERA_TPC_B_MUL_ROUND

// ---- MUL with ACC_F32 (tpc-intrinsics.h `v_bf16_mul_acc32_b`): the f32 products of bf16
// operands (exact: 8-bit significands), the even lanes in v1 and the odd ones in v2, the layout
// of v_bf16_mac_acc32_b ----
inline float s_bf16_mul_acc32(bf16 a, bf16 b, int switches = 0, float income = 0,
                              bool predicate = true, bool polarity = false) {
  detail::check_switches(switches, 0, "s_bf16_mul_acc32");
  detail::issue(detail::kSpu);
  return detail::enabled(predicate, polarity) ? static_cast<float>(a) * static_cast<float>(b)
                                              : income;
}
namespace detail {
template <typename Enabled>
inline float128 mul_acc32(const bfloat128& a, const bfloat128& b, const float128& income,
                          Enabled&& lane_enabled) {
  float128 r = income;
  for (int i = 0; i < 128; ++i)
    if (lane_enabled(i))
      (i % 2 == 0 ? r.v1 : r.v2).v[i / 2] = static_cast<float>(a.v[i]) * static_cast<float>(b.v[i]);
  return r;
}
}  // namespace detail
inline float128 v_bf16_mul_acc32_b(const bfloat128& a, const bfloat128& b, int switches = 0,
                                   const float128& income = {}, bool predicate = true,
                                   bool polarity = false) {
  detail::check_switches(switches, 0, "v_bf16_mul_acc32_b");
  const bool on = detail::enabled(predicate, polarity);
  return detail::timed_pair_on_vpu(detail::mul_acc32(a, b, income, [on](int) { return on; }), a, b,
                                   income.v1, income.v2);
}
inline float128 v_bf16_mul_acc32_vb(const bfloat128& a, const bfloat128& b, int switches,
                                    const float128& income, const bool128& predicate,
                                    bool polarity = false) {
  detail::check_switches(switches, 0, "v_bf16_mul_acc32_vb");
  return detail::timed_pair_on_vpu(
      detail::mul_acc32(a, b, income,
                        [&](int i) { return detail::enabled(predicate.lane<128>(i), polarity); }),
      a, b, income.v1, income.v2, predicate);
}

// ---- SHL / SHR of float elements: their encodings shifted (tpc-intrinsics.h declares them for
// f32 and bf16 beside the integer forms) ----
#define TESSERA_TPC_B_FLOAT_SHIFT(D, V, B, S, CS, CV, NAME, OP)                                    \
  inline S s_##D##_##NAME(S a, CS b, int switches = 0, S income = S(), bool predicate = true,      \
                          bool polarity = false) {                                                 \
    detail::check_switches(switches, 0, "s_" #D "_" #NAME);                                        \
    detail::issue(detail::kSpu);                                                                   \
    return detail::enabled(predicate, polarity) ? detail::shift_encoding(a, b, detail::OP{})       \
                                                : income;                                          \
  }                                                                                                \
  inline V v_##D##_##NAME##_b(const V& a, const CV& b, int switches = 0, const V& income = V(),    \
                              bool predicate = true, bool polarity = false) {                      \
    detail::check_switches(switches, 0, "v_" #D "_" #NAME "_b");                                   \
    return detail::predicated(                                                                     \
        detail::zip_to(a, b,                                                                       \
                       [](auto x, auto n) { return detail::shift_encoding(x, n, detail::OP{}); }), \
        income, predicate, polarity, a, b);                                                        \
  }                                                                                                \
  inline V v_##D##_##NAME##_vb(const V& a, const CV& b, int switches, const V& income,             \
                               const B& predicate, bool polarity = false) {                        \
    detail::check_switches(switches, 0, "v_" #D "_" #NAME "_vb");                                  \
    return detail::predicated_v(                                                                   \
        detail::zip_to(a, b,                                                                       \
                       [](auto x, auto n) { return detail::shift_encoding(x, n, detail::OP{}); }), \
        income, predicate, polarity, a, b);                                                        \
  }
TESSERA_TPC_B_FLOAT_SHIFT(f32, float64, bool64, float, std::int8_t, int64, shl, op_shl)
TESSERA_TPC_B_FLOAT_SHIFT(f32, float64, bool64, float, std::int8_t, int64, shr, op_shr)
TESSERA_TPC_B_FLOAT_SHIFT(bf16, bfloat128, bool128, bf16, std::uint8_t, short128, shl, op_shl)
TESSERA_TPC_B_FLOAT_SHIFT(bf16, bfloat128, bool128, bf16, std::uint8_t, short128, shr, op_shr)
#undef TESSERA_TPC_B_FLOAT_SHIFT

// ---- floating-point helpers: scalar forms on the SPU and the vector-predicated forms ----
inline float s_f32_fclass(float a, int switches = 0, float income = 0, bool predicate = true,
                          bool polarity = false) {
  detail::check_switches(switches, 0, "s_f32_fclass");
  detail::issue(detail::kSpu);
  return detail::enabled(predicate, polarity) ? detail::fclass_lane(a) : income;
}
inline bf16 s_bf16_fclass(bf16 a, int switches = 0, bf16 income = bf16(), bool predicate = true,
                          bool polarity = false) {
  detail::check_switches(switches, 0, "s_bf16_fclass");
  detail::issue(detail::kSpu);
  return detail::enabled(predicate, polarity) ? detail::fclass_lane(a) : income;
}
inline bfloat128 v_bf16_fclass_b(const bfloat128& a, int switches = 0,
                                 const bfloat128& income = bfloat128(), bool predicate = true,
                                 bool polarity = false) {
  detail::check_switches(switches, 0, "v_bf16_fclass_b");
  return detail::predicated(detail::map_to<bfloat128>(a, detail::fclass_lane<tessera::bf16>),
                            income, predicate, polarity, a);
}
inline bfloat128 v_bf16_fclass_vb(const bfloat128& a, int switches, const bfloat128& income,
                                  const bool128& predicate, bool polarity = false) {
  detail::check_switches(switches, 0, "v_bf16_fclass_vb");
  return detail::predicated_v(detail::map_to<bfloat128>(a, detail::fclass_lane<tessera::bf16>),
                              income, predicate, polarity, a);
}

inline float s_f32_calc_fp_special(float src1, float src2, int switches, float income,
                                   bool predicate = true, bool polarity = false) {
  detail::check_switches(switches, 0x7, "s_f32_calc_fp_special");
  detail::issue(detail::kSpu);
  return detail::enabled(predicate, polarity)
             ? detail::calc_fp_special_lane(src1, src2, switches & 0x7, income)
             : income;
}
inline bf16 s_bf16_calc_fp_special(bf16 src1, bf16 src2, int switches, bf16 income,
                                   bool predicate = true, bool polarity = false) {
  detail::check_switches(switches, 0x7, "s_bf16_calc_fp_special");
  detail::issue(detail::kSpu);
  return detail::enabled(predicate, polarity)
             ? detail::calc_fp_special_lane(src1, src2, switches & 0x7, income)
             : income;
}
#define TESSERA_TPC_B_CALC_FP_SPECIAL(D, V, B)                                                     \
  inline V v_##D##_calc_fp_special_b(const V& src1, const V& src2, int switches, const V& income,  \
                                     bool predicate = true, bool polarity = false) {               \
    return detail::predicated(                                                                     \
        detail::calc_fp_special(src1, src2, switches, income, "v_" #D "_calc_fp_special_b"),       \
        income, predicate, polarity, src1, src2);                                                  \
  }                                                                                                \
  inline V v_##D##_calc_fp_special_vb(const V& src1, const V& src2, int switches, const V& income, \
                                      const B& predicate, bool polarity = false) {                 \
    return detail::predicated_v(                                                                   \
        detail::calc_fp_special(src1, src2, switches, income, "v_" #D "_calc_fp_special_vb"),      \
        income, predicate, polarity, src1, src2);                                                  \
  }
TESSERA_TPC_B_CALC_FP_SPECIAL(f32, float64, bool64)
TESSERA_TPC_B_CALC_FP_SPECIAL(bf16, bfloat128, bool128)
#undef TESSERA_TPC_B_CALC_FP_SPECIAL

// NEARBYINT on the SPU: the vector forms' rounding, in the switches' mode (SW_CSR reads the
// convert rounding CSR, see rounding_of).
inline float s_f32_nearbyint(float a, int switches = 0, float income = 0, bool predicate = true,
                             bool polarity = false) {
  detail::check_switches(switches, detail::kRoundingBits, "s_f32_nearbyint");
  const int rm = detail::rounding_of(switches, "s_f32_nearbyint");
  detail::issue(detail::kSpu);
  return detail::enabled(predicate, polarity) ? static_cast<float>(detail::round_by_mode(a, rm))
                                              : income;
}
inline bf16 s_bf16_nearbyint(bf16 a, int switches = 0, bf16 income = bf16(), bool predicate = true,
                             bool polarity = false) {
  detail::check_switches(switches, detail::kRoundingBits, "s_bf16_nearbyint");
  const int rm = detail::rounding_of(switches, "s_bf16_nearbyint");
  detail::issue(detail::kSpu);
  // An integral value of a bf16 is a bf16: the result is exact.
  return detail::enabled(predicate, polarity)
             ? bf16(static_cast<float>(detail::round_by_mode(static_cast<float>(a), rm)))
             : income;
}

// FORM_FP_NUM, vector predicate (the exponent-field form) and the _ie_ forms.
inline float64 v_f32_form_fp_num_vb(const float64& a, const float64& b, const float64& c,
                                    int switches, const float64& income, const bool64& predicate,
                                    bool polarity = false) {
  return detail::predicated_v(
      detail::form_fp_num(a, b, c, switches, 0x80000000u, 0x7f800000u, "v_f32_form_fp_num_vb"),
      income, predicate, polarity, a, b, c);
}
inline bfloat128 v_bf16_form_fp_num_vb(const bfloat128& a, const bfloat128& b, const bfloat128& c,
                                       int switches, const bfloat128& income,
                                       const bool128& predicate, bool polarity = false) {
  return detail::predicated_v(detail::form_fp_num(a, b, c, switches, std::uint16_t{0x8000},
                                                  std::uint16_t{0x7f80}, "v_bf16_form_fp_num_vb"),
                              income, predicate, polarity, a, b, c);
}
#define TESSERA_TPC_B_FORM_FP_NUM_IE(D, V, B)                                                      \
  inline V v_##D##_form_fp_num_ie_b(const char256& a, const V& b, const V& c, int switches = 0,    \
                                    const V& income = V(), bool predicate = true,                  \
                                    bool polarity = false) {                                       \
    return detail::predicated(                                                                     \
        detail::form_fp_num_ie(a, b, c, switches, "v_" #D "_form_fp_num_ie_b"), income, predicate, \
        polarity, a, b, c);                                                                        \
  }                                                                                                \
  inline V v_##D##_form_fp_num_ie_vb(const char256& a, const V& b, const V& c, int switches,       \
                                     const V& income, const B& predicate, bool polarity = false) { \
    return detail::predicated_v(                                                                   \
        detail::form_fp_num_ie(a, b, c, switches, "v_" #D "_form_fp_num_ie_vb"), income,           \
        predicate, polarity, a, b, c);                                                             \
  }
TESSERA_TPC_B_FORM_FP_NUM_IE(f32, float64, bool64)
TESSERA_TPC_B_FORM_FP_NUM_IE(bf16, bfloat128, bool128)
#undef TESSERA_TPC_B_FORM_FP_NUM_IE

// ---- SHUFFLE with a vector predicate, and MOV_DUAL_GROUP with ALL ----
#define TESSERA_TPC_B_MOVES(D, V, B)                                                               \
  inline V v_##D##_shuffle_vb(const V& a, const uchar256& b, int switches, const V& income,        \
                              const B& predicate, bool polarity = false) {                         \
    detail::check_switches(switches, 0, "v_" #D "_shuffle_vb");                                    \
    return detail::predicated_v(detail::shuffle(a, b, income), income, predicate, polarity, a, b); \
  }                                                                                                \
  inline V v_##D##_mov_dual_group_all_b(const V& a, std::uint32_t b, int sdg0, int sdg1, int sdg2, \
                                        int sdg3, int switches, const V& income,                   \
                                        bool predicate = true, bool polarity = false) {            \
    const int sdg[4] = {sdg0, sdg1, sdg2, sdg3};                                                   \
    return detail::predicated(                                                                     \
        detail::mov_dual_group_all(a, b, sdg, switches, income, "v_" #D "_mov_dual_group_all_b"),  \
        income, predicate, polarity, a);                                                           \
  }                                                                                                \
  inline V v_##D##_mov_dual_group_all_vb(const V& a, std::uint32_t b, int sdg0, int sdg1,          \
                                         int sdg2, int sdg3, int switches, const V& income,        \
                                         const B& predicate, bool polarity = false) {              \
    const int sdg[4] = {sdg0, sdg1, sdg2, sdg3};                                                   \
    return detail::predicated_v(                                                                   \
        detail::mov_dual_group_all(a, b, sdg, switches, income, "v_" #D "_mov_dual_group_all_vb"), \
        income, predicate, polarity, a);                                                           \
  }
TESSERA_TPC_B_MOVES(f32, float64, bool64)
TESSERA_TPC_B_MOVES(bf16, bfloat128, bool128)
TESSERA_TPC_B_MOVES(i32, int64, bool64)
TESSERA_TPC_B_MOVES(u32, uint64, bool64)
TESSERA_TPC_B_MOVES(i16, short128, bool128)
TESSERA_TPC_B_MOVES(u16, ushort128, bool128)
TESSERA_TPC_B_MOVES(i8, char256, bool256)
TESSERA_TPC_B_MOVES(u8, uchar256, bool256)
#undef TESSERA_TPC_B_MOVES

// ---- lane ids with income and predicate (tpc-intrinsics.h READ_LANE_ID) ----
#define TESSERA_TPC_B_LANE_ID(W, V, B)                                                           \
  inline V read_lane_id_##W##_b(const V& income, bool predicate = true, bool polarity = false) { \
    return detail::predicated(detail::lane_ids<V>(), income, predicate, polarity);               \
  }                                                                                              \
  inline V read_lane_id_##W##_vb(const V& income, const B& predicate, bool polarity = false) {   \
    return detail::predicated_v(detail::lane_ids<V>(), income, predicate, polarity);             \
  }
TESSERA_TPC_B_LANE_ID(4b, uint64, bool64)
TESSERA_TPC_B_LANE_ID(2b, ushort128, bool128)
TESSERA_TPC_B_LANE_ID(1b, uchar256, bool256)
#undef TESSERA_TPC_B_LANE_ID

// ---- vector predicates: logic and moves under a vector predicate, bit by bit ----
#define TESSERA_TPC_B_I1_LOGIC(NAME, EXPR)                                                        \
  inline bool256 v_i1_##NAME##_vb(const bool256& a, const bool256& b, int switches,               \
                                  const bool256& income, const bool256& predicate,                \
                                  bool polarity = false) {                                        \
    detail::check_switches(switches, 0, "v_i1_" #NAME "_vb");                                     \
    return detail::on_vpu(                                                                        \
        [&] {                                                                                     \
          return detail::mask(detail::bitwise(a, b, [](unsigned x, unsigned y) { return EXPR; }), \
                              income, predicate, polarity);                                       \
        },                                                                                        \
        a, b, income, predicate);                                                                 \
  }
TESSERA_TPC_B_I1_LOGIC(and, x& y)
TESSERA_TPC_B_I1_LOGIC(or, x | y)
TESSERA_TPC_B_I1_LOGIC(xor, x ^ y)
#undef TESSERA_TPC_B_I1_LOGIC
inline bool256 v_i1_not_vb(const bool256& a, int switches, const bool256& income,
                           const bool256& predicate, bool polarity = false) {
  detail::check_switches(switches, 0, "v_i1_not_vb");
  return detail::on_vpu(
      [&] {
        return detail::mask(detail::bitwise(a, a, [](unsigned x, unsigned) { return ~x; }), income,
                            predicate, polarity);
      },
      a, income, predicate);
}
inline bool256 v_i1_mov_vb(const bool256& a, int switches, const bool256& income,
                           const bool256& predicate, bool polarity = false) {
  detail::check_switches(switches, 0, "v_i1_mov_vb");
  return detail::on_vpu([&] { return detail::mask(a, income, predicate, polarity); }, a, income,
                        predicate);
}
// MOV SPRF to VPRF: the scalar predicate in every bit.
inline bool256 v_i1_mov_i1_b(bool a, int switches = 0, const bool256& income = {},
                             bool predicate = true, bool polarity = false) {
  detail::check_switches(switches, 0, "v_i1_mov_i1_b");
  return detail::on_vpu(
      [&] {
        return detail::enabled(predicate, polarity)
                   ? bool256(static_cast<unsigned char>(a ? 0xff : 0))
                   : income;
      },
      income);
}
inline bool256 v_i1_mov_i1_vb(bool a, int switches, const bool256& income, const bool256& predicate,
                              bool polarity = false) {
  detail::check_switches(switches, 0, "v_i1_mov_i1_vb");
  return detail::on_vpu(
      [&] {
        return detail::mask(bool256(static_cast<unsigned char>(a ? 0xff : 0)), income, predicate,
                            polarity);
      },
      income, predicate);
}
inline bool256 v_i1_mov_flavor_b(std::int32_t a, int flavor, int switches, const bool256& income,
                                 bool predicate = true, bool polarity = false) {
  const bool256 r = detail::mov_flavor(a, flavor, switches, income, "v_i1_mov_flavor_b");
  return detail::on_vpu([&] { return detail::enabled(predicate, polarity) ? r : income; }, income);
}
inline bool256 v_i1_mov_flavor_vb(std::int32_t a, int flavor, int switches, const bool256& income,
                                  const bool256& predicate, bool polarity = false) {
  const bool256 r = detail::mov_flavor(a, flavor, switches, income, "v_i1_mov_flavor_vb");
  return detail::on_vpu([&] { return detail::mask(r, income, predicate, polarity); }, income,
                        predicate);
}

// ---- index registers: MOV_IRF_DIM, PRMT_INDX, SET_INDX (one SPU instruction each) ----
inline std::int32_t mov_irf_dim(const int5& src, std::int8_t dim, int switches,
                                std::int32_t income = 0, bool predicate = true,
                                bool polarity = false) {
  detail::check_switches(switches, 0, "mov_irf_dim");
  if (static_cast<unsigned>(dim) > 4u) [[unlikely]]
    detail::bad_irf_dim("mov_irf_dim", dim);
  detail::issue(detail::kSpu);
  return detail::enabled(predicate, polarity) ? src.v[dim] : income;
}
inline int5 prmt_indx(const int5& ndx, int prmt_type, int switches, const int5& income = {},
                      bool predicate = true, bool polarity = false) {
  for (int d = 0; d < 5; ++d)
    if (((prmt_type >> (3 * d)) & 7) > 4) [[unlikely]]
      detail::bad_permutation("prmt_indx", prmt_type, d);
  return detail::index_op(income, 0x1f, switches, predicate, polarity, "prmt_indx",
                          [&](int d) { return ndx.v[(prmt_type >> (3 * d)) & 7]; });
}
inline int5 set_indx(int value, const int5& ndx, int dimmask, int switches, bool predicate = true,
                     bool polarity = false) {
  return detail::index_op(ndx, dimmask, switches, predicate, polarity, "set_indx",
                          [&](int) { return value; });
}

// ---- the core's registers (detail::CoreRegisters): the semaphore that ASO updates, the
// arithmetic rounding CSR (ROUND_CSR) and the convert rounding CSR (CONV_ROUND_CSR), which
// CONVERT and NEARBYINT read under SW_CSR. A read is a load-slot access, a write a store-slot one,
// as the MMIO LD_L / ST_L that reach them on the hardware. ----
std::int32_t get_semaphore_value();
void set_semaphore_value(std::int32_t val);
std::int32_t get_csr_value();
void set_csr_value(std::int32_t val);
std::int32_t get_convert_csr_value();
void set_convert_csr_value(std::int32_t val);

// ---- cache (tpc-intrinsics.h CACHE_FLUSH, CACHE_INVALIDATE): they act on the core's scalar
// data cache (spec 000 §2.8), which Tessera does not model; each takes its load-slot issue and
// changes no data. Gaudi takes no switches for them. ----
inline void cache_flush(int switches = 0, bool predicate = true, bool polarity = false) {
  detail::check_switches(switches, 0, "cache_flush");
  (void)predicate;
  (void)polarity;
  detail::issue(detail::kLoad);
}
inline void cache_invalidate(int switches = 0, bool predicate = true, bool polarity = false) {
  detail::check_switches(switches, 0, "cache_invalidate");
  (void)predicate;
  (void)polarity;
  detail::issue(detail::kLoad);
}

}  // namespace tessera::tpc
