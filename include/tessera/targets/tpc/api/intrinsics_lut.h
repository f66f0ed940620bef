// Habana's special-function building blocks (tpc-intrinsics.h "LUT":
// GET_LUT_ENTRY_AND_INTERVAL_START, LOOKUP_1C, LOOKUP_2C) on tables Tessera owns. A kernel uses
// them as a contract: GET_LUT_ENTRY_AND_ INTERVAL_START maps x to an entry and the start of its
// interval, the lookups give that entry's polynomial coefficients for a function id, and the kernel
// evaluates C0 + (C1 + C2*t)*t with t = x - start. Habana's interval numbering and coefficients are
// not public, so Tessera defines the decomposition (below, and docs/targets/tpc.md) and fills each
// function's table with its own least-squares fit (src/targets/tpc/api/lut.cpp): kernels compute
// the mathematical function within a stated tolerance, not Habana's bits.
#pragma once

#include <cstdint>
#include <cstring>

#include "tessera/targets/tpc/api/intrinsics_gaudi.h"

namespace tessera::tpc {

// Function ids, variants and lookup types of tpc-special.h for Gaudi (HabanaAI/tpc_llvm
// clang/lib/Headers/tpc-special.h). Which ids have a Tessera table: lut.cpp and
// docs/targets/tpc.md.
enum e_function_id : int {
  e_fp32_tanh = 0,
  e_fp32_rsqrt = 1,
  e_fp32_log2 = 2,
  e_i8_sqrt = 3,
  e_u16_sqrt = 4,
  e_u32_power4 = 5,
  e_i8_sqrt_c0 = 6,
  e_u16_sqrt_c0 = 7,
  e_fp32_sqrt = 128,
  e_fp32_rcp = 129,
  e_fp32_sin_cos = 130,
  e_bf16_rcp_scalar_m7 = 131,
  e_bf16_sin_cos_scalar_m7 = 132,
  e_bf16_sin_cos_linear_m6 = 133,
  e_bf16_sin_cos_poly2_m6_c2c1 = 134,
  e_bf16_sin_cos_poly2_m6_c0 = 135,
  e_bf16_log2_linear_interleaved_m5 = 136,
  e_fp32_pow2 = 256,
  e_bf16_tanh = 257,
  e_i16_tanh = 258,
  e_i16_sigmoid = 259,
  e_i16_exp_neg = 260,
  e_i16_rcp = 261,
  e_i8_tanh_linear = 262,
  e_i8_sigmoid_linear = 263,
  e_i8_exp_linear = 264,
  e_bf16_tanh_c0 = 265,
  e_i16_tanh_c0 = 266,
  e_i16_sigmoid_c0 = 267,
  e_i16_exp_neg_c0 = 268,
  e_i16_rcp_c0 = 269,
  e_i8_tanh_linear_c0 = 270,
  e_i8_sigmoid_linear_c0 = 271,
  e_i8_exp_linear_c0 = 272,
  e_bf16_tanh_linear_m4 = 273,
  e_bf16_tanh_poly2_m4_c2c1 = 274,
  e_bf16_tanh_poly2_m4_c0 = 275,
  e_bf16_sqrt_scalar_m6 = 276,
  e_bf16_log2_linear_m5 = 277,
  e_bf16_sin_cos_linear_m5 = 278,
  e_bf16_sin_cos_poly_m5_c2c1 = 279,
  e_bf16_sin_cos_poly2_m5_co = 280,
  e_bf16_rcp_m7_c0 = 288,
  e_bf16_rsqrt = 384,
  e_bf16_log2 = 385,
  e_bf16_sqrt = 386,
  e_f16_sqrt_poly_m2_c2c1 = 386,
  e_bf16_rcp = 387,
  e_bf16_sin_cos = 388,
  e_bf16_pow2 = 389,
  e_i8_tanh = 390,
  e_bf16_rsqrt_c0 = 391,
  e_bf16_log2_c0 = 392,
  e_bf16_sqrt_c0 = 393,
  e_f16_sqrt_poly_m2_c0 = 393,
  e_bf16_rcp_c0 = 394,
  e_bf16_sin_cos_c0 = 395,
  e_bf16_pow2_c0 = 396,
  e_i8_tanh_c0 = 397,
  e_bf16_rcp_scalar = 398,
  e_f16_rcp_poly_m3_c2c1 = 398,
  e_bf16_rcp_linear_m2 = 399,
  e_bf16_rcp_linear_m3 = 400,
  e_bf16_rcp_linear_m4 = 401,
  e_bf16_rcp_poly_m2_c2c1 = 402,
  e_bf16_rcp_poly_m3_c2c1 = 403,
  e_bf16_rcp_poly_m4_c2c1 = 404,
  e_bf16_rcp_poly_m2_c0 = 405,
  e_bf16_rcp_poly_m3_c0 = 406,
  e_bf16_rcp_poly_m4_c0 = 407,
  e_f16_rcp_poly_m3_c0 = 408,
  e_bf16_sqrt_linear_m2 = 409,
  e_bf16_sqrt_linear_m3 = 410,
  e_bf16_sqrt_linear_m4 = 411,
  e_bf16_sqrt_poly2_m2_c2c1 = 412,
  e_bf16_sqrt_poly2_m3_c2c1 = 413,
  e_bf16_sqrt_poly2_m4_c2c1 = 414,
  e_bf16_sqrt_poly2_m2_c0 = 415,
  e_bf16_sqrt_poly2_m3_c0 = 416,
  e_bf16_sqrt_poly2_m4_c0 = 417,
  e_bf16_tanh_linear_m2 = 418,
  e_bf16_tanh_linear_m3 = 419,
  e_bf16_tanh_poly2_m2_c2c1 = 421,
  e_bf16_tanh_poly2_m3_c2c1 = 422,
  e_bf16_tanh_poly2_m2_c0 = 424,
  e_bf16_tanh_poly2_m3_c0 = 425,
  e_bf16_log2ml_linear_m4 = 426,
  e_bf16_sin_cos_linear_m2 = 427,
  e_bf16_sin_cos_linear_m3 = 428,
  e_bf16_sin_cos_linear_m4 = 429,
  e_bf16_sin_cos_poly2_m2_c2c1 = 430,
  e_bf16_sin_cos_poly2_m2_c0 = 431,
  e_bf16_sin_cos_poly2_m3_c2c1 = 432,
  e_bf16_sin_cos_poly2_m3_c0 = 433,
  e_bf16_sin_cos_poly2_m4_c2c1 = 434,
  e_bf16_sin_cos_poly2_m4_c0 = 435,
  e_f16_rsqrt_poly_m3_c2c1 = 440,
  e_f16_rsqrt_poly_m3_c0 = 441,
  e_f16_pow2_poly_m2_c2c1 = 444,
  e_f16_pow2_poly_m2_c0 = 445
};
enum e_func_variant : int {
  e_func_variant_default = 0,
  e_func_variant_tanh = 1,
  e_func_variant_sqrt_rsqrt = 2,
  e_func_variant_sin_cos = 3
};
enum e_lookup_data_type : int { e_lookup_fp32 = 0, e_lookup_bv16 = 1 };
// GET_LUT_ENTRY_AND_INTERVAL_START's FUNC_VARIANT and LOOKUP's data type (tpc-defs.h).
enum : int {
  SW_LUT_TANH = 0x1 << (5 + 8),
  SW_LUT_SQRT_RSQRT = 0x2 << (5 + 8),
  SW_LUT_SIN_COS = 0x3 << (5 + 8),
  SW_LUT_LOG = 0x4 << (5 + 8),
  SW_BV32 = 0x0 << 0,
  SW_BV16 = 0x1 << 0,
  SW_BV8_0 = 0x2 << 0,
  SW_BV8_1 = 0x3 << 0,
  SW_UPPER_HALF = 0x1 << 2,
};

namespace detail {

inline constexpr int kLutVariantBits = 0x7 << 13;
inline constexpr int kLookupTypeBits = 0x3;

// ---- Tessera's interval decomposition (GET_LUT_ENTRY_AND_INTERVAL_START) ----
// On the bits of x (f32: 23 mantissa bits, bf16: 7; both an 8-bit exponent, bias 127), with
// M mantissa bits, `shift` s (0 <= s <= M) and m = M - s index bits, e the unbiased exponent:
//   default:    entry = mantissa >> s (2^m entries); start = x with its low s mantissa bits
//   cleared. SQRT_RSQRT: entry = (e & 1) << m | mantissa >> s (x in [1, 4): 2^(m+1) entries); start
//   as default. SIN_COS:    |x| < 1 in fixed point: entry = floor(|x| * 2^m), start = sign(x) *
//   entry / 2^m;
//               |x| >= 1 takes the last interval, 2^m - 1.
//   TANH:       |x| < 1 as SIN_COS (entries 0 .. 2^m-1); 1 <= |x| < 8 by binade:
//               entry = 2^m * (1 + e) + mantissa >> s, start as default; |x| >= 8 (and inf, NaN)
//               take the last of the 4 * 2^m entries.
//   LOG:        entry = 4 * (mantissa >> (s + 2)) + class, start = x with its low s + 2 mantissa
//               bits cleared; class 1 when 1 <= |x| < 2, 2 when 0.5 <= |x| < 1, else 0 (the
//               near-one classes that Habana's log_bf16 evaluates as (x - 1) * f(x)).
struct LutEntry {
  std::uint32_t entry;
  std::uint32_t start;  // bits of the interval's start, in x's format
};
[[noreturn]] void bad_lut_shift(const char* intrinsic, int shift, int mantissa_bits, int variant);
[[noreturn]] void bad_lut_variant(const char* intrinsic, int switches);
inline int lut_variant(int switches, int shift, int mantissa_bits, const char* intrinsic) {
  check_switches(switches, kLutVariantBits, intrinsic);
  const int variant = (switches & kLutVariantBits) >> 13;
  if (variant > 4) [[unlikely]]
    bad_lut_variant(intrinsic, switches);
  if (shift < 0 || shift > mantissa_bits - (variant == 4 ? 2 : 0)) [[unlikely]]
    bad_lut_shift(intrinsic, shift, mantissa_bits, variant);
  return variant;
}
// An entry form, one number per input type (M = 23: f32, 7: bf16), FUNC_VARIANT and shift: what
// the running instance records (InstanceContext::lut_forms) and each table is fitted for.
inline constexpr int lut_form(int mantissa_bits, int variant, int shift) {
  return mantissa_bits == 23 ? variant * 24 + shift : 120 + variant * 8 + shift;
}
static_assert(lut_form(7, 4, 7) < LutForms::kCount);
inline void note_lut_form(int form) {
  if (InstanceContext* c = current_instance) c->lut_forms.add(form);
}
// `fixed_start` gives the bits of entry / 2^m in x's format (exact in both formats: m <= M).
template <int M, typename FixedStart>
inline LutEntry lut_entry(std::uint32_t bits, int shift, int variant, FixedStart fixed_start) {
  constexpr std::uint32_t sign = 1u << (M + 8);
  constexpr std::uint32_t mant_mask = (1u << M) - 1;
  const std::uint32_t mag = bits & ~sign;
  const int biased = static_cast<int>(mag >> M);
  const int e = biased - 127;
  const std::uint32_t mant = mag & mant_mask;
  const int m = M - shift;
  const std::uint32_t low = (1u << shift) - 1;
  auto fixed = [&](std::uint32_t q) { return LutEntry{q, (bits & sign) | fixed_start(q, m)}; };
  switch (variant) {
    case 1:    // TANH
    case 3: {  // SIN_COS
      if (e < 0) {
        const int down = M - m - e;  // (1.mantissa) * 2^e * 2^m, in integer steps
        const std::uint32_t sig = biased == 0 ? 0 : ((1u << M) | mant);
        return fixed(down >= 32 ? 0 : sig >> down);
      }
      if (variant == 3) return fixed((1u << m) - 1);
      if (e >= 3 || biased == 255)  // the last interval of [4, 8)
        return LutEntry{(4u << m) - 1, (bits & sign) | (129u << M) | (mant_mask & ~low)};
      return LutEntry{(static_cast<std::uint32_t>(1 + e) << m) | (mant >> shift), bits & ~low};
    }
    case 2:  // SQRT_RSQRT
      return LutEntry{(static_cast<std::uint32_t>(e & 1) << m) | (mant >> shift), bits & ~low};
    case 4: {  // LOG
      const std::uint32_t cls = e == 0 ? 1u : (e == -1 ? 2u : 0u);
      const std::uint32_t low2 = (1u << (shift + 2)) - 1;
      return LutEntry{((mant >> (shift + 2)) << 2) | cls, bits & ~low2};
    }
    default:
      return LutEntry{mant >> shift, bits & ~low};
  }
}
inline LutEntry lut_entry_f32(float x, int shift, int variant) {
  return lut_entry<23>(std::bit_cast<std::uint32_t>(x), shift, variant, [](std::uint32_t q, int m) {
    return std::bit_cast<std::uint32_t>(std::ldexp(static_cast<float>(q), -m));
  });
}
inline LutEntry lut_entry_bf16(std::uint16_t x, int shift, int variant) {
  return lut_entry<7>(x, shift, variant, [](std::uint32_t q, int m) {
    return static_cast<std::uint32_t>(
        tessera::bf16(std::ldexp(static_cast<float>(q), -m)).bits);  // exact: q < 2^7
  });
}

// ---- the tables (lut.cpp) ----
// What one lookup of a function's table returns: LOOKUP_1C `c0`, LOOKUP_2C `c1` (v1) and `c2`
// (v2), as 32-bit (SW_BV32) or 16-bit (SW_BV16) words. Ids whose evaluation form Tessera knows
// have a table; the others are a UserError naming the id. Each table is fitted for the entries
// of one form: its input type, FUNC_VARIANT and shift.
struct LutTable {
  int id;
  const char* name;
  int bits;                 // 32 or 16
  int input_mantissa_bits;  // the entries' input: 23 (f32) or 7 (bf16)
  int variant;              // FUNC_VARIANT, 0..4 (SW_LUT_* >> 13)
  int shift;
  int form;                 // lut_form of the three
  bool one_coefficient;     // LOOKUP_1C reads it
  bool two_coefficients;    // LOOKUP_2C reads it
  std::uint32_t entries;    // entries Tessera fills
  const std::uint32_t* c0;  // per entry: what LOOKUP_1C returns
  const std::uint32_t* c1;  // LOOKUP_2C's v1
  const std::uint32_t* c2;  // LOOKUP_2C's v2
};
// The table of `fid` for a lookup by `intrinsic` (`two`: LOOKUP_2C) with data type switch
// `switches`; a UserError for an unknown id, an id without a table, a coefficient the table
// does not hold, or a data type that is not the table's.
const LutTable& lut_table(int fid, int switches, int lane_bits, bool two, const char* intrinsic);
[[noreturn]] void lut_entry_outside(const char* intrinsic, const LutTable& t, std::uint32_t entry,
                                    int lane);
[[noreturn]] void lut_form_mismatch(const InstanceContext& c, const LutTable& t,
                                    const char* intrinsic);
// A lookup's entries come from one of the forms the instance asked
// GET_LUT_ENTRY_AND_INTERVAL_START for; when that is none of the form the table was fitted for,
// the table's intervals are not the kernel's and the values would be wrong. An instance that
// asked for no form (entries made by hand, or no instance) is checked by range only.
inline void check_lut_form(const LutTable& t, const char* intrinsic) {
  const InstanceContext* c = current_instance;
  if (c != nullptr && !c->lut_forms.empty() && !c->lut_forms.has(t.form)) [[unlikely]]
    lut_form_mismatch(*c, t, intrinsic);
}

// LOOKUP_1C / LOOKUP_2C read the tables in vector local memory (spec 000 §2.3.3: special
// functions take all but 16 KB of it), so using one marks the program as using special functions.
inline void note_lut_use() {
  if (InstanceContext* c = current_instance) c->special_functions_called = true;
}
template <typename V, typename E, typename B>
inline V lut_lookup(const E& entries, const LutTable& t, const std::uint32_t* words,
                    const V& income, const B& predicate, bool polarity, const char* intrinsic) {
  static_assert(sizeof(lane_t<V>) == sizeof(lane_t<E>));
  V r = income;
  constexpr int step = 256 / V::lanes;
  for (int i = 0; i < V::lanes; ++i) {
    if ((predicate.b[i * step] != 0) == polarity) continue;
    const std::uint32_t entry = entries.v[i];
    if (entry >= t.entries) [[unlikely]]
      lut_entry_outside(intrinsic, t, entry, i);
    const auto word =
        static_cast<std::conditional_t<sizeof(lane_t<V>) == 4, std::uint32_t, std::uint16_t>>(
            words[entry]);
    std::memcpy(static_cast<void*>(&r.v[i]), &word, sizeof word);
  }
  return r;
}
inline bool256 all_lanes(bool predicate, bool polarity) {
  bool256 p;
  std::memset(p.b, predicate != polarity ? 1 : 0, sizeof p.b);
  return p;
}

}  // namespace detail

// ---- GET_LUT_ENTRY_AND_INTERVAL_START (VPU) ----
#define TESSERA_TPC_G_LUT_ENTRY(D, V, E, P, B, M, ENTRY)                                        \
  inline P v_##D##_get_lut_entry_and_interval_start_vb(                                         \
      const V& src, const std::int8_t shift, int switches, const P& income, const B& predicate, \
      bool polarity = false) {                                                                  \
    const int variant =                                                                         \
        detail::lut_variant(switches, shift, M, "v_" #D "_get_lut_entry_and_interval_start");   \
    detail::note_lut_form(detail::lut_form(M, variant, shift));                                 \
    P r = income;                                                                               \
    constexpr int step = 256 / V::lanes;                                                        \
    for (int i = 0; i < V::lanes; ++i) {                                                        \
      if ((predicate.b[i * step] != 0) == polarity) continue;                                   \
      const detail::LutEntry e = ENTRY(src.v[i], shift, variant);                               \
      r.v1.v[i] = static_cast<detail::lane_t<E>>(e.entry);                                      \
      const auto start = static_cast<detail::lane_t<E>>(e.start);                               \
      std::memcpy(static_cast<void*>(&r.v2.v[i]), &start, sizeof start);                        \
    }                                                                                           \
    r.v1.ready =                                                                                \
        detail::issue(detail::kVpu, detail::ready_of(src, income.v1, income.v2, predicate));    \
    r.v2.ready = r.v1.ready;                                                                    \
    return r;                                                                                   \
  }                                                                                             \
  inline P v_##D##_get_lut_entry_and_interval_start_b(                                          \
      const V& src, const std::int8_t shift, int switches = 0, const P& income = {},            \
      bool predicate = true, bool polarity = false) {                                           \
    return v_##D##_get_lut_entry_and_interval_start_vb(                                         \
        src, shift, switches, income, B(detail::all_lanes(predicate, polarity)), false);        \
  }
TESSERA_TPC_G_LUT_ENTRY(f32, float64, uint64, uint64_float64, bool64, 23,
                        [](float x, int s, int v) { return detail::lut_entry_f32(x, s, v); })
TESSERA_TPC_G_LUT_ENTRY(bf16, bfloat128, ushort128, ushort128_bfloat128, bool128, 7,
                        [](const bf16& x, int s, int v) {
                          return detail::lut_entry_bf16(x.bits, s, v);
                        })
#undef TESSERA_TPC_G_LUT_ENTRY

// ---- LOOKUP_1C / LOOKUP_2C (load slot): the words of entry `a` of function `fid`'s table. The
// element type only names the register's view: v_u32_lookup_1c on e_fp32_rcp returns the bits of
// the f32 coefficient. Gaudi's lookups take no vector predicate (tpc-intrinsics.h).
#define TESSERA_TPC_G_LOOKUP(D, E, V, P, PB)                                                      \
  inline V v_##D##_lookup_1c(const E& a, int fid, int switches, const V& income,                  \
                             bool predicate = true, bool polarity = false) {                      \
    constexpr const char* name = "v_" #D "_lookup_1c";                                            \
    const detail::LutTable& t =                                                                   \
        detail::lut_table(fid, switches, 8 * sizeof(detail::lane_t<V>), false, name);             \
    if (detail::enabled(predicate, polarity)) detail::check_lut_form(t, name);                    \
    detail::note_lut_use();                                                                       \
    const PB p = PB(detail::all_lanes(predicate, polarity));                                      \
    return detail::on_slot(                                                                       \
        detail::kLoad, [&] { return detail::lut_lookup(a, t, t.c0, income, p, false, name); }, a, \
        income);                                                                                  \
  }                                                                                               \
  inline P v_##D##_lookup_2c(const E& a, int fid, int switches, const P& income,                  \
                             bool predicate = true, bool polarity = false) {                      \
    constexpr const char* name = "v_" #D "_lookup_2c";                                            \
    const detail::LutTable& t =                                                                   \
        detail::lut_table(fid, switches, 8 * sizeof(detail::lane_t<V>), true, name);              \
    if (detail::enabled(predicate, polarity)) detail::check_lut_form(t, name);                    \
    detail::note_lut_use();                                                                       \
    const PB p = PB(detail::all_lanes(predicate, polarity));                                      \
    P r;                                                                                          \
    r.v1 = detail::lut_lookup(a, t, t.c1, income.v1, p, false, name);                             \
    r.v2 = detail::lut_lookup(a, t, t.c2, income.v2, p, false, name);                             \
    r.v1.ready = detail::issue(detail::kLoad, detail::ready_of(a, income.v1, income.v2));         \
    r.v2.ready = r.v1.ready;                                                                      \
    return r;                                                                                     \
  }
TESSERA_TPC_G_LOOKUP(f32, uint64, float64, float64_pair_t, bool64)
TESSERA_TPC_G_LOOKUP(i32, uint64, int64, int64_pair_t, bool64)
TESSERA_TPC_G_LOOKUP(u32, uint64, uint64, uint64_pair_t, bool64)
TESSERA_TPC_G_LOOKUP(bf16, ushort128, bfloat128, bfloat128_pair_t, bool128)
TESSERA_TPC_G_LOOKUP(i16, ushort128, short128, short128_pair_t, bool128)
TESSERA_TPC_G_LOOKUP(u16, ushort128, ushort128, ushort128_pair_t, bool128)
#undef TESSERA_TPC_G_LOOKUP
// tpc-special.h's Gaudi spellings, used by its LOOKUP_AND_MAC.
inline float64 v_f32_lookup_c0(const uint64& a, int fid, int switches, const float64& income,
                               bool predicate = true, bool polarity = false) {
  return v_f32_lookup_1c(a, fid, switches, income, predicate, polarity);
}
inline float64_pair_t v_f32_lookup_c1c2(const uint64& a, int fid, int switches,
                                        const float64_pair_t& income, bool predicate = true,
                                        bool polarity = false) {
  return v_f32_lookup_2c(a, fid, switches, income, predicate, polarity);
}

}  // namespace tessera::tpc
