// The current TPC-C intrinsic API for Gaudi (the names and signatures of Habana's
// tpc-intrinsics.h: switches, income, predicate and polarity last, with their defaults), and the
// legacy names of spec 000 / tpc-defs.h that the current names replaced. Every function here is
// a thin wrapper over the shared lane code of intrinsics.h (detail::), timed through the issue
// model of context.h, so the two generations of names never compute anything twice.
// Switch values are Habana's encodings (tpc-defs.h); a switch an intrinsic does not model is a
// UserError naming it.
#pragma once

#include <cstdint>
#include <cstring>

#include "tessera/targets/tpc/api/context.h"
#include "tessera/targets/tpc/api/intrinsics.h"
#include "tessera/targets/tpc/api/types.h"

namespace tessera::tpc {

// ---- predicate types: a bool256 register viewed per 32-bit (bool64) or 16-bit (bool128) lane.
// Tessera keeps every predicate at byte granularity (see bool256), so the views only differ in
// type, as in TPC-C where to_bool64 / from_bool64 reinterpret the register.
struct bool128 : bool256 {
  bool128() = default;
  explicit bool128(const bool256& bits) : bool256(bits) {}
};
struct bool64 : bool256 {
  bool64() = default;
  explicit bool64(const bool256& bits) : bool256(bits) {}
};
inline bool64 to_bool64(const bool256& b) {
  return bool64(b);
}
inline bool128 to_bool128(const bool256& b) {
  return bool128(b);
}
inline bool256 from_bool64(const bool64& b) {
  return static_cast<const bool256&>(b);
}
inline bool256 from_bool128(const bool128& b) {
  return static_cast<const bool256&>(b);
}

// ---- wide and pair types (tpc-defs.h "Structures mapped to registers") ----
struct float64_pair_t {
  float64 v1, v2;
};
using float128 = float64_pair_t;
using float64_float64_pair_t = float64_pair_t;
struct bfloat128_pair_t {
  bfloat128 v1, v2;
};
using bfloat256 = bfloat128_pair_t;
struct int64_pair_t {
  int64 v1, v2;
};
using int128 = int64_pair_t;
struct uint64_pair_t {
  uint64 v1, v2;
};
using uint128 = uint64_pair_t;
struct short128_pair_t {
  short128 v1, v2;
};
using short256 = short128_pair_t;
struct ushort128_pair_t {
  ushort128 v1, v2;
};
using ushort256 = ushort128_pair_t;
struct char256_pair_t {
  char256 v1, v2;
};
using char512 = char256_pair_t;
struct uchar256_pair_t {
  uchar256 v1, v2;
};
using uchar512 = uchar256_pair_t;
// tpc-defs.h's other names of the same-type pairs (`(char256_pair_t){0}` in its SEL2 aliases).
using int64_int64_pair_t = int64_pair_t;
using uint64_uint64_pair_t = uint64_pair_t;
using bfloat128_bfloat128_pair_t = bfloat128_pair_t;
using short128_short128_pair_t = short128_pair_t;
using ushort128_ushort128_pair_t = ushort128_pair_t;
using char256_char256_pair_t = char256_pair_t;
using uchar256_uchar256_pair_t = uchar256_pair_t;
using uint64_float64 = uint64_float64_pair_t;
using uint64_int64 = uint64_int64_pair_t;
// Pairs of two lane types of one width (tpc-intrinsics.h `typedef struct _int64_float64_pair_t
// int64_float64`), as SEL2 returns them: v1 the selected lanes, v2 the compared ones.
#define TESSERA_TPC_G_PAIR(T1, T2)   \
  struct T1##_##T2##_pair_t {        \
    T1 v1;                           \
    T2 v2;                           \
  };                                 \
  using T1##_##T2 = T1##_##T2##_pair_t;
TESSERA_TPC_G_PAIR(float64, int64)
TESSERA_TPC_G_PAIR(float64, uint64)
TESSERA_TPC_G_PAIR(int64, float64)
TESSERA_TPC_G_PAIR(int64, uint64)
TESSERA_TPC_G_PAIR(bfloat128, short128)
TESSERA_TPC_G_PAIR(bfloat128, ushort128)
TESSERA_TPC_G_PAIR(short128, bfloat128)
TESSERA_TPC_G_PAIR(short128, ushort128)
TESSERA_TPC_G_PAIR(ushort128, bfloat128)
TESSERA_TPC_G_PAIR(ushort128, short128)
TESSERA_TPC_G_PAIR(char256, uchar256)
TESSERA_TPC_G_PAIR(uchar256, char256)
#undef TESSERA_TPC_G_PAIR

// ---- switches (Habana's tpc-defs.h encodings) ----
enum : int {
  SW_SAT = 0x1 << 0,
  SW_NO_NEG = 0x0 << 1,
  SW_NEG = 0x1 << 1,
  SW_SUP_NAN = 0x1 << 2,
  SW_CLIP_FP = 0x1 << (4 + 16),
  SW_LINEAR = 0x1 << 24,
  SW_WR_LOWER_GROUP = 0x1 << (4 + 8),
  SW_WR_UPPER_GROUP = 0x1 << (5 + 8),
  SW_WR_LOWER_GROUP0 = 0x1 << (0 + 16),
  SW_WR_UPPER_GROUP0 = 0x1 << (1 + 16),
  SW_WR_LOWER_GROUP1 = 0x1 << (2 + 16),
  SW_WR_UPPER_GROUP1 = 0x1 << (3 + 16),
  SW_WR_LOWER_GROUP2 = 0x1 << (4 + 16),
  SW_WR_UPPER_GROUP2 = 0x1 << (5 + 16),
  SW_WR_LOWER_GROUP3 = 0x1 << (6 + 16),
  SW_WR_UPPER_GROUP3 = 0x1 << (7 + 16),
  SW_GROUP0_EN = 0x1 << 0,  // MOV_GROUP: which groups of which dual groups are written
  SW_GROUP1_EN = 0x1 << 1,
  SW_DUAL_GROUP0_EN = 0x1 << 2,
  SW_DUAL_GROUP1_EN = 0x1 << 3,
  SW_DUAL_GROUP2_EN = 0x1 << 4,
  SW_DUAL_GROUP3_EN = 0x1 << 5,
  SW_GROUP_0 = 0x0 << (0 + 8),
  SW_GROUP_1 = 0x1 << (0 + 8),
  SW_STRIDE_2 = 0x0 << (1 + 8),
  SW_STRIDE_4 = 0x1 << (1 + 8),
  SW_GROUP_HALF_0 = 0x0 << (2 + 8),
  SW_GROUP_HALF_1 = 0x1 << (2 + 8),
  SW_ADD_BIAS = 0x1 << (0 + 8),
  SW_FORCE_SIGN0 = 0x1 << (1 + 8),
  SW_FORCE_SIGN1 = 0x1 << (2 + 8),
  SW_EXP_IS_NUM = 0x1 << (3 + 8),
  SW_SIGN_LSB = 0x1 << (4 + 8),
  SW_RECIP = 0x0,
  SW_RSQRT = 0x1,
  SW_SQRT = 0x2,
  SW_LOG = 0x3,
  SW_EXP = 0x4,
  SW_TANH = 0x5,
  SW_DIV = 0x6,
  SW_POW = 0x7,
  RMW_DT_INT8 = 0x0,
  RMW_DT_INT16 = 0x1,
  RMW_DT_INT32 = 0x2,
  RMW_DT_UINT8 = 0x3,
  RMW_DT_UINT16 = 0x4,
  RMW_DT_UINT32 = 0x5,
  RMW_DT_BF16 = 0x6,
  RMW_DT_FP32 = 0x7,
  RMW_OP_ADD = 0x0 << 4,
  RMW_OP_SUB = 0x1 << 4,
  RMW_OP_MIN = 0x2 << 4,
  RMW_OP_MAX = 0x3 << 4,
  RMW_SET = 0x1 << 6,  // Gaudi's position (tpc-defs.h)
  SW_COUNT_ZEROS = 0x0 << 0,  // POPCNT
  SW_COUNT_ONES = 0x1 << 0,
  SW_PACK = 0x1 << 2,  // ST_TNSR: the store pipe packs (whole_store, intrinsics_derived.h)
  SW_PCK_32_TO_16 = 0x0 << 4,
  SW_PCK_16_TO_8 = 0x1 << 4,
  SW_PCK_32_TO_8 = 0x2 << 4,
  SW_PCK_8_TO_4 = 0x3 << 4,
  // LD_TNSR's unpacking (tpc-defs.h): Greco and later, a UserError on Gaudi (bad_switches).
  SW_UNPCK_16_TO_32 = 0x0 << 1,
  SW_UNPCK_8_TO_16 = 0x1 << 1,
  SW_UNPCK_8_TO_32 = 0x2 << 1,
  SW_UNPCK_4_TO_8 = 0x3 << 1,
  SW_UNPACK = 0x1 << 4,
};
enum e_group_source : int { e_group_0 = 0, e_group_1 = 1 };
enum e_element_stride : int { e_every_second_element = 0, e_every_forth_element = 1 };
enum e_group_half : int { e_lower_half_group = 0, e_higher_half_group = 1 };
enum e_negation : int { e_no_negation = 0, e_with_negation = 1 };
enum e_saturation : int { e_no_saturation = 0, e_saturate = 1 };
// CALC_FP_SPECIAL's function, POPCNT's count and the RMW fields by name (tpc-special.h).
enum e_calc_fp_special : int {
  e_fp_recip = 0,
  e_fp_rsqrt = 1,
  e_fp_sqrt = 2,
  e_fp_log = 3,
  e_fp_exp = 4,
  e_fp_tanh = 5,
  e_fp_div = 6,
  e_fp_pow = 7
};
enum e_count_type : int { e_count_zeros = 0, e_count_ones = 1 };
enum e_rmw_datatype : int {
  e_rmw_int8 = 0,
  e_rmw_int16 = 1,
  e_rmw_int32 = 2,
  e_rmw_uint8 = 3,
  e_rmw_uint16 = 4,
  e_rmw_uint32 = 5,
  e_rmw_bf16 = 6,
  e_rmw_fp32 = 7
};
enum e_rmw_op : int { e_rmw_add = 0, e_rmw_sub = 1, e_rmw_min = 2, e_rmw_max = 3 };
enum e_rmw_set : int { e_rmw_plain = 0, e_rmw_atomic = 1 };
// Where ST_TNSR RMW takes its data type from: the switch (SRF) or the tensor descriptor.
enum e_tnsr_dt_location : int { e_tnsr_dt_srf = 0, e_tnsr_dt_desc = 1 };
enum e_fp_special_values : int {
  e_fp_nan = 0,
  e_fp_pos_inf = 1,
  e_fp_neg_inf = 2,
  e_fp_negative = 3,
  e_fp_zero = 4,
  e_fp_positive = 5,
  e_fp_denormalized = 6
};

namespace detail {

// What a Gaudi CONVERT accepts: a rounding mode. (SW_CLIP_FP is Gaudi2's; SW_LINEAR is an option of
// the high-level converts, intrinsics_convert.h.)
inline constexpr int kConvertSwitches = kRoundingBits;

template <typename V>
inline V nearbyint(const V& a, int rm) {
  return map1(a, [rm](float x) { return static_cast<float>(round_by_mode(x, rm)); });
}

// Scalar ADD/SUB on the SPU: integers wrap, or saturate to the type with SW_SAT (tpc-defs.h's
// ADD / SUB switch); floats ignore SW_SAT, as the vector forms do.
template <typename S, bool Sub>
inline S scalar_add(S a, S b, int switches) {
  if constexpr (std::is_integral_v<S>) {
    const long long x = Sub ? static_cast<long long>(a) - static_cast<long long>(b)
                            : static_cast<long long>(a) + static_cast<long long>(b);
    if (switches & SW_SAT)
      return static_cast<S>(std::clamp<long long>(x, std::numeric_limits<S>::lowest(),
                                                  std::numeric_limits<S>::max()));
    return static_cast<S>(static_cast<std::make_unsigned_t<S>>(x));
  } else {
    (void)switches;
    return Sub ? static_cast<S>(a - b) : static_cast<S>(a + b);
  }
}

// Vector ADD/SUB: integer lanes wrap, or saturate with SW_SAT, as the scalar forms.
template <typename V, bool Sub>
inline V add_sat(const V& a, const V& b, int switches) {
  using T = lane_t<V>;
  if constexpr (std::is_integral_v<T>) {
    V r(no_init_t{});
    for (int i = 0; i < V::lanes; ++i) r.v[i] = scalar_add<T, Sub>(a.v[i], b.v[i], switches);
    return r;
  } else {
    return Sub ? map2(a, b, op_sub{}) : map2(a, b, op_add{});
  }
}

// One predicated VPU instruction: `computed` where enabled, `income` elsewhere.
template <typename V, typename... Ops>
inline V predicated(const V& computed, const V& income, bool p, bool pol, const Ops&... ops) {
  return on_vpu([&] { return enabled(p, pol) ? computed : income; }, income, ops...);
}
template <typename V, typename... Ops>
inline V predicated_v(const V& computed, const V& income, const bool256& p, bool pol,
                      const Ops&... ops) {
  return on_vpu([&] { return blend(computed, income, p, pol); }, income, p, ops...);
}

// MOV_DUAL_GROUP (tpc-intrinsics.h): dual group `src` of `a` into dual group `dst` of the
// result; SW_WR_LOWER_GROUP / SW_WR_UPPER_GROUP choose which group (32 bytes) of the dual group is
// written "with respect to the Byte write mask": bit j of `mask` enables byte j of each written
// group. Habana's compiler relies on that reading when it assembles packed bytes with masks
// 0x0000FFFF and 0xFFFF0000 (TPCISelLowering.cpp truncate_32_to_8).
template <typename V>
inline V mov_dual_group(const V& a, std::uint32_t mask, int src, int dst, int sw, const V& income,
                        const char* name) {
  check_switches(sw, SW_WR_LOWER_GROUP | SW_WR_UPPER_GROUP, name);
  V r = income;
  auto* out = reinterpret_cast<unsigned char*>(r.v) + 64 * (dst & 3);
  const auto* in = reinterpret_cast<const unsigned char*>(a.v) + 64 * (src & 3);
  for (int group = 0; group < 2; ++group) {
    if (!(sw & (group == 0 ? SW_WR_LOWER_GROUP : SW_WR_UPPER_GROUP))) continue;
    for (int byte = 0; byte < 32; ++byte)
      if ((mask >> byte) & 1u) out[32 * group + byte] = in[32 * group + byte];
  }
  return r;
}

// MOV_GROUP: in each dual group whose SW_DUAL_GROUPd_EN is set, group g (SW_GROUPg_EN) takes
// the other group's elements, so max(v, mov_group(v)) folds the halves (Habana's kernels use it
// that way). `mask` enables 2-byte units of the dual group.
template <typename V>
inline V mov_group(const V& a, std::uint32_t mask, int sw, const V& income, const char* name) {
  check_switches(sw, 0x3f, name);
  constexpr int n = V::lanes / 4;  // elements per dual group; a group is half of it
  constexpr int bytes = static_cast<int>(sizeof(lane_t<V>));
  V r = income;
  for (int dg = 0; dg < 4; ++dg) {
    if (!(sw & (SW_DUAL_GROUP0_EN << dg))) continue;
    for (int j = 0; j < n; ++j) {
      const int g = j < n / 2 ? 0 : 1;
      if (!(sw & (SW_GROUP0_EN << g))) continue;
      if (!((mask >> ((j * bytes) / 2)) & 1u)) continue;
      r.v[dg * n + j] = a.v[dg * n + (g == 0 ? j + n / 2 : j - n / 2)];
    }
  }
  return r;
}

// UNPACK: elements of group SW_GROUP_x of each dual group (for SW_STRIDE_4, its half
// SW_GROUP_HALF_x) go to every second (fourth) element of that dual group; the others are zero.
// The layout is the one Habana's cast_bf16_to_f32 example documents.
template <typename V>
inline V unpack(const V& a, int sw, const char* name) {
  check_switches(sw, SW_GROUP_1 | SW_STRIDE_4 | SW_GROUP_HALF_1, name);
  constexpr int n = V::lanes / 4;
  const int stride = (sw & SW_STRIDE_4) ? 4 : 2;
  const int count = n / stride;
  const int first =
      ((sw & SW_GROUP_1) ? n / 2 : 0) + (stride == 4 && (sw & SW_GROUP_HALF_1) ? count : 0);
  V r;
  for (int dg = 0; dg < 4; ++dg)
    for (int j = 0; j < count; ++j) r.v[dg * n + j * stride] = a.v[dg * n + first + j];
  return r;
}

// SHUFFLE (tpc-intrinsics.h "Shuffle": per destination element, bits 0-4 of b name the source
// element, bit 5 the source group, bit 7 enables the write; DEST[i] = a[b[i]]). The source is in
// the destination's own dual group (64 bytes), in group bit 5 (32 bytes), element bits 0-4 modulo
// the group's element count; elements whose bit 7 is clear keep income. Element i's control is
// the low byte of its own place in b (byte i * element size), as Habana's bitonic sort tables
// write it (each f32 element's four bytes hold the same control).
template <typename V>
inline V shuffle(const V& a, const uchar256& b, const V& income) {
  constexpr int bytes = static_cast<int>(sizeof(lane_t<V>));
  constexpr int per_group = 32 / bytes;
  V r = income;
  for (int i = 0; i < V::lanes; ++i) {
    const unsigned ctl = b.v[i * bytes];
    if (!(ctl & 0x80u)) continue;
    const int dual_group = i / (2 * per_group);
    const int group = static_cast<int>((ctl >> 5) & 1u);
    const int element = static_cast<int>(ctl & 31u) % per_group;
    r.v[i] = a.v[(2 * dual_group + group) * per_group + element];
  }
  return r;
}

// ST_TNSR's SW_PACK: the store pipe packs the register before writing (tpc-intrinsics.h
// "ST_TNSR"). Habana's compiler gives the order for a whole-register store (whole_store,
// intrinsics_derived.h); the partial, half and RMW stores refuse it (a UserError naming the
// switch), and other switches are refused as everywhere.
[[noreturn]] void bad_pack(const char* intrinsic);
template <typename V>
inline void whole_store(const int5& ndx, tensor t, const V& value, int switches, bool predicate,
                        bool polarity, const char* intrinsic);
inline void check_store_switches(int switches, const char* intrinsic) {
  if (switches & SW_PACK) [[unlikely]]
    bad_pack(intrinsic);
  check_switches(switches, 0, intrinsic);
}

// FCLASS: the class bit of each lane (tpc-intrinsics.h table: -inf, -normal, -denormal, -0,
// +0, +denormal, +normal, +inf, sNaN, qNaN), as a number of the lane type.
inline float fclass_bits(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  const bool neg = (u >> 31) != 0;
  int bit;
  switch (std::fpclassify(x)) {
    case FP_INFINITE:
      bit = neg ? 0 : 7;
      break;
    case FP_NORMAL:
      bit = neg ? 1 : 6;
      break;
    case FP_SUBNORMAL:
      bit = neg ? 2 : 5;
      break;
    case FP_ZERO:
      bit = neg ? 3 : 4;
      break;
    default:
      bit = (u & 0x00400000u) ? 9 : 8;  // quiet NaNs have the top mantissa bit set
  }
  return static_cast<float>(1u << bit);
}

// CALC_FP_SPECIAL takes the FCLASS of its operands, as Habana's kernels and tpc-special.h call it
// (`v_f32_calc_fp_special_b(fclass, fclass, e_fp_recip, result)`): each class stands for a value
// of that class, whose IEEE result the instruction gives where it is special (NaN, infinities,
// zeros, negatives where undefined); other lanes keep income. A lane that is not an FCLASS result
// is a NaN operand.
inline float class_value(float fclass) {
  constexpr float kValue[10] = {-INFINITY, -1.0f, -1e-40f, -0.0f, 0.0f,
                                1e-40f,    1.0f,  INFINITY, NAN,    NAN};
  for (int bit = 0; bit < 10; ++bit)
    if (fclass == static_cast<float>(1u << bit)) return kValue[bit];
  return NAN;
}
inline bool special_result(int func, float x, float y, float& out) {
  const bool xs = std::isnan(x) || std::isinf(x) || x == 0.0f;
  switch (func) {
    case SW_RECIP:
      if (!xs) return false;
      out = 1.0f / x;
      return true;
    case SW_RSQRT:
      if (!xs && x > 0) return false;
      out = 1.0f / std::sqrt(x);
      return true;
    case SW_SQRT:
      if (!xs && x > 0) return false;
      out = std::sqrt(x);
      return true;
    case SW_LOG:
      if (!xs && x > 0) return false;
      out = std::log(x);
      return true;
    case SW_EXP:
      if (!xs) return false;
      out = std::exp(x);
      return true;
    case SW_TANH:
      if (!xs) return false;
      out = std::tanh(x);
      return true;
    case SW_DIV: {
      const bool ys = std::isnan(y) || std::isinf(y) || y == 0.0f;
      if (!xs && !ys) return false;
      out = x / y;
      return true;
    }
    default: {  // SW_POW: a finite negative base is left to the kernel (it depends on y's value)
      const bool ys = std::isnan(y) || std::isinf(y) || y == 0.0f;
      if (!xs && !ys) return false;
      out = std::pow(x, y);
      return true;
    }
  }
}

// Store of lanes [first, last] only (ST_TNSR partial): in-tensor lanes are written one by one,
// so neighbouring lanes another instance owns are never touched.
// The lanes [first, last] of a PARTIAL access: size is the element count minus one.
template <typename V>
inline void check_partial(int size, int offset, const char* intrinsic) {
  if (size < 0 || offset < 0 || offset + size >= V::lanes) [[unlikely]]
    bad_partial(intrinsic, size, offset, V::lanes);
}
template <typename V>
inline V load_lanes(const int5& coord, tensor t, int size, int offset, const V& income,
                    const char* intrinsic) {
  check_partial<V>(size, offset, intrinsic);
  const V full = load<V>(coord, t, intrinsic);  // one vector transaction, pad outside the tensor
  V r = income;
  for (int i = offset; i <= offset + size; ++i) r.v[i] = full.v[i];
  r.ready = std::max(full.ready, income.ready);
  return r;
}
// LD_TNSR_LOW / LD_TNSR_HIGH and ST_TNSR_LOW / ST_TNSR_HIGH (tpc-intrinsics.h "Load" and
// "Store", subsections LD_TNSR_LOW, ST_TNSR_HIGH, ...): tpc-intrinsics.h gives only the
// signatures; what "low" and "high" mean is its description of the same halves as LD_TNSR_CNVRT
// switches, "write to low (high) 128B of VRF". So a half access moves 128 bytes between the
// tensor at coord and that half of the register; a load keeps income in the other half. The
// bytes are the tensor's own elements (pad outside it, culled on stores), whatever the register
// type: Habana's sparse_lengths_sum_bf16_2D_f32_embed reads an f32 scale and bias out of a bf16
// row this way. One vector transaction on the port, as LD_TNSR.
constexpr int kHalfRegisterBytes = 128;
template <typename V>
inline V load_half(const int5& coord, tensor t, bool high, const V& income, const char* intrinsic) {
  InstanceContext& c = instance(intrinsic);
  const TensorSlot& s = any_slot(c, t, intrinsic);
  V r = income;
  const std::uint64_t loaded = global_read(c, 0);
  load_slow(c, s, coord, reinterpret_cast<std::byte*>(r.v) + (high ? kHalfRegisterBytes : 0),
            s.elem_bytes, kHalfRegisterBytes / static_cast<int>(s.elem_bytes));
  r.ready = std::max(loaded, income.ready);
  return r;
}
template <typename V>
inline void store_half(const int5& coord, tensor t, const V& value, bool high,
                       const char* intrinsic) {
  InstanceContext& c = instance(intrinsic);
  TensorSlot& s = any_slot(c, t, intrinsic);
  global_write(c, value.ready);
  store_slow(c, s, coord,
             reinterpret_cast<const std::byte*>(value.v) + (high ? kHalfRegisterBytes : 0),
             s.elem_bytes, kHalfRegisterBytes / static_cast<int>(s.elem_bytes));
}
template <typename V>
inline void store_lanes(const int5& coord, tensor t, const V& value, int size, int offset,
                        const char* intrinsic) {
  using T = lane_t<V>;
  check_partial<V>(size, offset, intrinsic);
  const int first = offset, last = offset + size;
  InstanceContext& c = instance(intrinsic);
  TensorSlot& s = slot(c, t, sizeof(T), intrinsic);
  global_write(c, value.ready);
  const std::int64_t outer = outer_offset(s, coord);
  if (outer < 0) return;  // culled (spec 000 §2.4.1)
  for (int i = first; i <= last; ++i) {
    const std::int64_t x = static_cast<std::int64_t>(coord.v[0]) + i;
    if (x < 0 || x >= s.size[0]) continue;
    const std::int64_t at = (outer + x * s.stride[0]) * static_cast<std::int64_t>(sizeof(T));
    std::memcpy(s.base + at, &value.v[i], sizeof(T));
    c.counters.bytes_written += sizeof(T);
    if (c.coherency_check) note_store(s, at, at + static_cast<std::int64_t>(sizeof(T)));
  }
}

// ST_TNSR with RMW: each in-tensor lane becomes op(element, lane) at memory, as one atomic
// update (rmw_update); lanes outside the tensor are culled. It reads and writes the port.
template <typename T, typename F>
void rmw_apply(std::byte* at, const std::byte* lane) {
  T old, v;
  std::memcpy(&old, at, sizeof(T));
  std::memcpy(&v, lane, sizeof(T));
  using M = lane_math_t<T>;  // bf16 computes in f32 and rounds back, as map2 does
  const T r = static_cast<T>(F{}(static_cast<M>(old), static_cast<M>(v)));
  std::memcpy(at, &r, sizeof(T));
}
// Register lanes first .. first + count - 1 go to elements coord[0] + lane - shift along dim 0:
// all lanes for ST_TNSR, the PARTIAL lanes in place, a half for ST_TNSR_LOW / _HIGH.
template <typename V, typename F>
inline void store_rmw(const int5& coord, tensor t, const V& value, F, const char* intrinsic,
                      int first = 0, int count = V::lanes, int shift = 0) {
  using T = lane_t<V>;
  InstanceContext& c = instance(intrinsic);
  TensorSlot& s = slot(c, t, sizeof(T), intrinsic);
  global_write(c, std::max(global_read(c, 0), value.ready));
  const std::int64_t outer = outer_offset(s, coord);
  if (outer < 0) return;
  const std::int64_t x0 = static_cast<std::int64_t>(coord.v[0]) - shift;  // element of lane 0
  const std::int64_t lo = std::clamp<std::int64_t>(-x0, first, first + count);
  const std::int64_t hi = std::clamp<std::int64_t>(s.size[0] - x0, lo, first + count);
  if (lo == hi) return;
  RmwVector update{};
  const std::int64_t at = (outer + (x0 + lo) * s.stride[0]) * static_cast<std::int64_t>(sizeof(T));
  update.first = s.base + at;
  update.step = s.stride[0] * static_cast<std::int64_t>(sizeof(T));
  update.count = static_cast<int>(hi - lo);
  update.bytes = sizeof(T);
  update.apply = &rmw_apply<T, F>;
  std::memcpy(update.lanes, &value.v[lo], static_cast<std::size_t>(hi - lo) * sizeof(T));
  if (c.coherency_check)
    for (std::int64_t i = 0; i < hi - lo; ++i)
      note_store(s, at + i * update.step,
                 at + i * update.step + static_cast<std::int64_t>(sizeof(T)));
  rmw_update(c, s, update);
}
[[noreturn]] void bad_rmw(const char* intrinsic, int rmw, int expected_dt);
// A store whose predicate is off still takes its slot.
template <typename V>
inline void skip_store(const V& value) {
  issue(kStore, value.ready);
}
// MkRMW(dt, op, set, location) (tpc-intrinsics.h "ST_TNSR with RMW_SEL switch", tpc-special.h):
// dt bits 0-3 must be the register's type unless location (bit 7) is e_tnsr_dt_desc, which
// takes the tensor's; op bits 4-5; RMW_SET (bit 6) enables the update, without it the store is
// `plain`.
template <typename V, typename Plain>
inline void rmw_store(const int5& ndx, tensor t, const V& value, int rmw, int rmw_dt,
                      const char* intrinsic, int first, int count, int shift, Plain plain) {
  if (((rmw & 0x80) == 0 && (rmw & 0xf) != rmw_dt) || (rmw & ~0xff) != 0)
    bad_rmw(intrinsic, rmw, rmw_dt);
  if ((rmw & RMW_SET) == 0) return plain();
  switch ((rmw >> 4) & 3) {
    case 0:
      return store_rmw(ndx, t, value, op_add{}, intrinsic, first, count, shift);
    case 1:
      return store_rmw(ndx, t, value, op_sub{}, intrinsic, first, count, shift);
    case 2:
      return store_rmw(ndx, t, value, op_min{}, intrinsic, first, count, shift);
    default:
      return store_rmw(ndx, t, value, op_max{}, intrinsic, first, count, shift);
  }
}

// POPCNT (tpc-intrinsics.h): the number of ones (SW_COUNT_ONES) or zeros of each element, as a
// uchar256 whatever the element width. The count of element i goes to the low byte of that
// element's own place in the register (byte i * element size) and its other bytes are zero, so
// the result read as the source's lane type holds the count per lane (Tessera's reading of the
// register layout; the header gives only the return type).
template <typename V>
inline uchar256 popcnt(const V& a, int sw, const uchar256& income, const char* name) {
  check_switches(sw, SW_COUNT_ONES, name);
  constexpr int bytes = static_cast<int>(sizeof(lane_t<V>));
  uchar256 r = income;
  for (int i = 0; i < V::lanes; ++i) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &a.v[i], bytes);
    const int ones = std::popcount(bits);
    r.v[i * bytes] = static_cast<std::uint8_t>((sw & SW_COUNT_ONES) ? ones : 8 * bytes - ones);
    for (int k = 1; k < bytes; ++k) r.v[i * bytes + k] = 0;
  }
  return r;
}
template <typename S>
inline std::uint8_t popcnt_scalar(S a, int sw, const char* name) {
  check_switches(sw, SW_COUNT_ONES, name);
  std::uint32_t bits = 0;
  std::memcpy(&bits, &a, sizeof(S));
  const int ones = std::popcount(bits);
  return static_cast<std::uint8_t>((sw & SW_COUNT_ONES) ? ones : 8 * static_cast<int>(sizeof(S)) - ones);
}

// CONVERT_INT32 / CONVERT_UINT32 / CONVERT_INT16 / CONVERT_UINT16 (tpc-intrinsics.h): the value
// shifted right by `shift` bits (left when negative), rounded in the switch's mode, saturated to
// the narrower type. A positive shift divides, as Habana's goya filter_2d_i8 glue computes it
// (scale 2^-n gives shift n). Modes: SW_RHNE, SW_RZ, SW_RU, SW_RD; stochastic ones are not
// simulated.
[[noreturn]] void bad_shift_rounding(const char* intrinsic, int switches);
inline int shift_rounding_of(int switches, const char* intrinsic) {
  check_switches(switches, kRoundingBits, intrinsic);
  int rm = (switches >> 16) & 0x7;
  if (rm == (SW_CSR >> 16)) rm = instance(intrinsic).registers.conv_round_csr;  // as rounding_of
  if (rm != e_round_half_ne && rm != e_round_zero && rm != e_round_up && rm != e_round_down)
    [[unlikely]]
    bad_shift_rounding(intrinsic, switches);
  return rm;
}
template <typename To>
inline To shift_round_saturate(std::int64_t x, int shift, int rm) {
  std::int64_t r;
  if (shift <= 0) {
    const int left = -shift;
    r = (x == 0 || left < 32) ? x * (std::int64_t{1} << std::min(left, 31))
                              : (x > 0 ? std::numeric_limits<std::int64_t>::max()
                                       : std::numeric_limits<std::int64_t>::min());
  } else {
    const int right = std::min(shift, 40);  // |x| < 2^32: beyond that only the sign remains
    const std::int64_t q = x >> right;       // floor
    const std::int64_t rem = x - q * (std::int64_t{1} << right);
    const std::int64_t half = std::int64_t{1} << (right - 1);
    switch (rm) {
      case e_round_down:
        r = q;
        break;
      case e_round_up:
        r = q + (rem != 0);
        break;
      case e_round_zero:
        r = q + (x < 0 && rem != 0);
        break;
      default:  // e_round_half_ne
        r = rem > half ? q + 1 : rem < half ? q : q + (q & 1);
    }
  }
  return static_cast<To>(std::clamp<std::int64_t>(r, std::numeric_limits<To>::lowest(),
                                                  std::numeric_limits<To>::max()));
}
// The vector form: element i of `value` goes to lane i * ratio + lane of the result (lane 0 = the
// even lanes, as the other down-converts), the others keep income. Element i's shift is the low
// byte of its own place in the shift register (byte i * source element size), which is every
// byte when the kernel passes a scalar.
template <typename To, typename From>
inline To convert_shift(const From& value, const char256& shift, int lane, int switches,
                        const To& income, const char* name) {
  constexpr int ratio = To::lanes / From::lanes;
  constexpr int bytes = static_cast<int>(sizeof(lane_t<From>));
  check_lane(lane, ratio, name);
  const int rm = shift_rounding_of(switches, name);
  To r = income;
  for (int i = 0; i < From::lanes; ++i)
    r.v[i * ratio + lane] = shift_round_saturate<lane_t<To>>(value.v[i], shift.v[i * bytes], rm);
  return r;
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Vector intrinsics per data type. D: dtype suffix, V: vector, B: predicate view, RDT: RMW type.
// ---------------------------------------------------------------------------------------------

#define TESSERA_TPC_G_BIN(D, V, B, NAME, EXPR, ALLOWED)                                        \
  inline V v_##D##_##NAME##_b(const V& a, const V& b, int switches = 0, const V& income = V(), \
                              bool predicate = true, bool polarity = false) {                  \
    detail::check_switches(switches, ALLOWED, "v_" #D "_" #NAME "_b");                         \
    if (!detail::enabled(predicate, polarity))                                                 \
      return detail::on_vpu([&] { return income; }, a, b, income);                             \
    return detail::on_vpu([&] { return EXPR; }, a, b);                                         \
  }                                                                                            \
  inline V v_##D##_##NAME##_vb(const V& a, const V& b, int switches, const V& income,          \
                               const B& predicate, bool polarity = false) {                    \
    detail::check_switches(switches, ALLOWED, "v_" #D "_" #NAME "_vb");                        \
    return detail::predicated_v(EXPR, income, predicate, polarity, a, b);                      \
  }

// Scalar CMP_<op> on the SPU (tpc-intrinsics.h: `bool s_i32_cmp_less(int32_t a, int32_t b,
// int switches=0, bool income={}, bool predicate=1, bool polarity=0)`).
#define TESSERA_TPC_G_S_CMP(D, S, NAME)                                                            \
  inline bool s_##D##_cmp_##NAME(S a, S b, int switches = 0, bool income = false,                  \
                                 bool predicate = true, bool polarity = false) {                   \
    detail::check_switches(switches, 0, "s_" #D "_cmp_" #NAME);                                    \
    detail::issue(detail::kSpu);                                                                   \
    return detail::enabled(predicate, polarity) ? detail::cmp_##NAME{}(a, b) : income;             \
  }

#define TESSERA_TPC_G_CMP(D, V, B, NAME)                                                           \
  inline B v_##D##_cmp_##NAME##_b(const V& a, const V& b, int switches = 0, const B& income = B(), \
                                  bool predicate = true, bool polarity = false) {                  \
    detail::check_switches(switches, SW_SUP_NAN, "v_" #D "_cmp_" #NAME "_b");                      \
    if (!detail::enabled(predicate, polarity))                                                     \
      return detail::on_vpu([&] { return income; }, a, b, income);                                 \
    return detail::on_vpu([&] { return B(detail::compare(a, b, detail::cmp_##NAME{})); }, a, b);   \
  }                                                                                                \
  inline B v_##D##_cmp_##NAME##_vb(const V& a, const V& b, int switches, const B& income,          \
                                   const B& predicate, bool polarity = false) {                    \
    detail::check_switches(switches, SW_SUP_NAN, "v_" #D "_cmp_" #NAME "_vb");                     \
    return detail::on_vpu(                                                                         \
        [&] {                                                                                      \
          return B(detail::mask(detail::compare(a, b, detail::cmp_##NAME{}), income, predicate,    \
                                polarity));                                                        \
        },                                                                                         \
        a, b, income, predicate);                                                                  \
  }

// LD_TNSR_LOW / _HIGH and ST_TNSR_LOW / _HIGH (see load_half), current names and tpc-defs.h's
// legacy ones: v_<dt>_ld_tnsr_low_i_b(ndx, t, income, p, o), _i_vb, _i, the deprecated
// _reg_i_s* aliases, and <dt>_st_tnsr_low_i_v_b(ndx, t, value, p, o), _i_v.
#define TESSERA_TPC_G_HALF(D, V, B, PART, HIGH)                                                   \
  inline V v_##D##_ld_tnsr_##PART##_b(const int5& ndx, tensor t, int switches = 0,                \
                                      const V& income = V(), bool predicate = true,               \
                                      bool polarity = false) {                                    \
    detail::check_switches(switches, 0, "v_" #D "_ld_tnsr_" #PART "_b");                          \
    if (!detail::enabled(predicate, polarity))                                                    \
      return detail::on_slot(                                                                     \
          detail::kLoad, [&] { return income; }, income);                                         \
    return detail::load_half(ndx, t, HIGH, income, "v_" #D "_ld_tnsr_" #PART "_b");               \
  }                                                                                               \
  inline V v_##D##_ld_tnsr_##PART##_vb(const int5& ndx, tensor t, int switches, const V& income,  \
                                       const B& predicate, bool polarity = false) {               \
    detail::check_switches(switches, 0, "v_" #D "_ld_tnsr_" #PART "_vb");                         \
    V r = detail::blend(detail::load_half(ndx, t, HIGH, income, "v_" #D "_ld_tnsr_" #PART "_vb"), \
                        income, predicate, polarity);                                             \
    r.ready = std::max({r.ready, income.ready, predicate.ready});                                 \
    return r;                                                                                     \
  }                                                                                               \
  inline V v_##D##_ld_tnsr_##PART##_i_b(const int5& ndx, tensor t, const V& income,               \
                                        bool predicate, bool polarity) {                          \
    return v_##D##_ld_tnsr_##PART##_b(ndx, t, 0, income, predicate, polarity);                    \
  }                                                                                               \
  inline V v_##D##_ld_tnsr_##PART##_i_vb(const int5& ndx, tensor t, const V& income,              \
                                         const bool256& predicate, bool polarity) {               \
    return v_##D##_ld_tnsr_##PART##_vb(ndx, t, 0, income, B(predicate), polarity);                \
  }                                                                                               \
  inline V v_##D##_ld_tnsr_##PART##_i(const int5& ndx, tensor t) {                                \
    return v_##D##_ld_tnsr_##PART##_b(ndx, t);                                                    \
  }                                                                                               \
  inline V v_##D##_ld_tnsr_##PART##_reg_i_s_b(const int5& ndx, tensor t, const V& income,         \
                                              bool predicate, bool polarity) {                    \
    return v_##D##_ld_tnsr_##PART##_i_b(ndx, t, income, predicate, polarity);                     \
  }                                                                                               \
  inline V v_##D##_ld_tnsr_##PART##_reg_i_s_vb(const int5& ndx, tensor t, const V& income,        \
                                               const bool256& predicate, bool polarity) {         \
    return v_##D##_ld_tnsr_##PART##_i_vb(ndx, t, income, predicate, polarity);                    \
  }                                                                                               \
  inline V v_##D##_ld_tnsr_##PART##_reg_i_s(const int5& ndx, tensor t) {                          \
    return v_##D##_ld_tnsr_##PART##_i(ndx, t);                                                    \
  }                                                                                               \
  inline void v_##D##_st_tnsr_##PART(const int5& ndx, tensor t, const V& value, int switches = 0, \
                                     bool predicate = true, bool polarity = false) {              \
    detail::check_store_switches(switches, "v_" #D "_st_tnsr_" #PART);                            \
    if (!detail::enabled(predicate, polarity)) {                                                  \
      detail::issue(detail::kStore, value.ready);                                                 \
      return;                                                                                     \
    }                                                                                             \
    detail::store_half(ndx, t, value, HIGH, "v_" #D "_st_tnsr_" #PART);                           \
  }                                                                                               \
  inline void D##_st_tnsr_##PART##_i_v_b(const int5& ndx, tensor t, const V& value,               \
                                         bool predicate, bool polarity) {                         \
    v_##D##_st_tnsr_##PART(ndx, t, value, 0, predicate, polarity);                                \
  }                                                                                               \
  inline void D##_st_tnsr_##PART##_i_v(const int5& ndx, tensor t, const V& value) {               \
    v_##D##_st_tnsr_##PART(ndx, t, value);                                                        \
  }

#define TESSERA_TPC_G_COMMON(D, V, B, S)                                                           \
  TESSERA_TPC_G_BIN(D, V, B, add, (detail::add_sat<V, false>(a, b, switches)), SW_SAT)             \
  TESSERA_TPC_G_BIN(D, V, B, sub, (detail::add_sat<V, true>(a, b, switches)), SW_SAT)              \
  TESSERA_TPC_G_BIN(D, V, B, mul, (detail::map2(a, b, detail::op_mul{})), 0)                       \
  TESSERA_TPC_G_BIN(D, V, B, min, (detail::map2(a, b, detail::op_min{})), 0)                       \
  TESSERA_TPC_G_BIN(D, V, B, max, (detail::map2(a, b, detail::op_max{})), 0)                       \
  TESSERA_TPC_G_CMP(D, V, B, eq)                                                                   \
  TESSERA_TPC_G_CMP(D, V, B, neq)                                                                  \
  TESSERA_TPC_G_CMP(D, V, B, less)                                                                 \
  TESSERA_TPC_G_CMP(D, V, B, leq)                                                                  \
  TESSERA_TPC_G_CMP(D, V, B, grt)                                                                  \
  TESSERA_TPC_G_CMP(D, V, B, geq)                                                                  \
  inline V v_##D##_mov_b(const V& a, int switches = 0, const V& income = V(),                      \
                         bool predicate = true, bool polarity = false) {                           \
    detail::check_switches(switches, 0, "v_" #D "_mov_b");                                         \
    return detail::predicated(a, income, predicate, polarity, a);                                  \
  }                                                                                                \
  inline V v_##D##_mov_vb(const V& a, int switches, const V& income, const B& predicate,           \
                          bool polarity = false) {                                                 \
    detail::check_switches(switches, 0, "v_" #D "_mov_vb");                                        \
    return detail::predicated_v(a, income, predicate, polarity, a);                                \
  }                                                                                                \
  inline V v_##D##_mov_dual_group_b(const V& a, std::uint32_t b, int src_dual_group,               \
                                    int dest_dual_group, int switches, const V& income,            \
                                    bool predicate = true, bool polarity = false) {                \
    const V r = detail::mov_dual_group(a, b, src_dual_group, dest_dual_group, switches, income,    \
                                       "v_" #D "_mov_dual_group_b");                               \
    return detail::predicated(r, income, predicate, polarity, a);                                  \
  }                                                                                                \
  inline V v_##D##_mov_dual_group_vb(const V& a, std::uint32_t b, int src_dual_group,              \
                                     int dest_dual_group, int switches, const V& income,           \
                                     const B& predicate, bool polarity = false) {                  \
    const V r = detail::mov_dual_group(a, b, src_dual_group, dest_dual_group, switches, income,    \
                                       "v_" #D "_mov_dual_group_vb");                              \
    return detail::predicated_v(r, income, predicate, polarity, a);                                \
  }                                                                                                \
  inline V v_##D##_mov_group_b(const V& a, std::uint32_t b, int switches, const V& income,         \
                               bool predicate = true, bool polarity = false) {                     \
    const V r = detail::mov_group(a, b, switches, income, "v_" #D "_mov_group_b");                 \
    return detail::predicated(r, income, predicate, polarity, a);                                  \
  }                                                                                                \
  inline V v_##D##_mov_group_vb(const V& a, std::uint32_t b, int switches, const V& income,        \
                                const B& predicate, bool polarity = false) {                       \
    const V r = detail::mov_group(a, b, switches, income, "v_" #D "_mov_group_vb");                \
    return detail::predicated_v(r, income, predicate, polarity, a);                                \
  }                                                                                                \
  /* legacy MOV_GROUP of tpc-defs.h: v_<t>_mov_group_v(a, b, income, groups, dual_groups) is       \
     v_<t>_mov_group_b(a, b, (dual_groups << 2) | groups, income) */                               \
  inline V v_##D##_mov_group_v_b(const V& a, std::uint32_t b, const V& income, int g, int d,       \
                                 bool predicate, bool polarity) {                                  \
    return v_##D##_mov_group_b(a, b, (d << 2) | g, income, predicate, polarity);                   \
  }                                                                                                \
  inline V v_##D##_mov_group_v_vb(const V& a, std::uint32_t b, const V& income, int g, int d,      \
                                  const bool256& predicate, bool polarity) {                       \
    return v_##D##_mov_group_vb(a, b, (d << 2) | g, income, B(predicate), polarity);               \
  }                                                                                                \
  inline V v_##D##_mov_group_v(const V& a, std::uint32_t b, const V& income, int g, int d) {       \
    return v_##D##_mov_group_b(a, b, (d << 2) | g, income);                                        \
  }                                                                                                \
  /* POPCNT: a count per element, returned as uchar256 (tpc-intrinsics.h) */                       \
  inline uchar256 v_##D##_popcnt_b(const V& a, int switches = 0, const uchar256& income = {},      \
                                   bool predicate = true, bool polarity = false) {                 \
    return detail::predicated(detail::popcnt(a, switches, income, "v_" #D "_popcnt_b"), income,    \
                              predicate, polarity, a);                                             \
  }                                                                                                \
  inline uchar256 v_##D##_popcnt_vb(const V& a, int switches, const uchar256& income,              \
                                    const B& predicate, bool polarity = false) {                   \
    return detail::predicated_v(detail::popcnt(a, switches, income, "v_" #D "_popcnt_vb"), income, \
                                predicate, polarity, a);                                           \
  }                                                                                                \
  inline std::uint8_t s_##D##_popcnt(S a, int switches = 0, std::uint8_t income = 0,               \
                                     bool predicate = true, bool polarity = false) {               \
    const std::uint8_t r = detail::popcnt_scalar(a, switches, "s_" #D "_popcnt");                  \
    detail::issue(detail::kSpu);                                                                   \
    return detail::enabled(predicate, polarity) ? r : income;                                      \
  }                                                                                                \
  inline V v_##D##_shuffle_b(const V& a, const uchar256& b, int switches = 0,                      \
                             const V& income = V(), bool predicate = true,                         \
                             bool polarity = false) {                                              \
    detail::check_switches(switches, 0, "v_" #D "_shuffle_b");                                     \
    return detail::predicated(detail::shuffle(a, b, income), income, predicate, polarity, a, b);   \
  }                                                                                                \
  inline V v_##D##_unpack_b(const V& a, int switches = 0, const V& income = V(),                   \
                            bool predicate = true, bool polarity = false) {                        \
    return detail::predicated(detail::unpack(a, switches, "v_" #D "_unpack_b"), income, predicate, \
                              polarity, a);                                                        \
  }                                                                                                \
  inline V v_##D##_unpack_vb(const V& a, int switches, const V& income, const B& predicate,        \
                             bool polarity = false) {                                              \
    return detail::predicated_v(detail::unpack(a, switches, "v_" #D "_unpack_vb"), income,         \
                                predicate, polarity, a);                                           \
  }                                                                                                \
  /* tensor access (spec 000 §2.4.1): pad outside on reads, culled outside on writes */           \
  inline V v_##D##_ld_tnsr_b(const int5& ndx, tensor t, int switches = 0, const V& income = V(),   \
                             bool predicate = true, bool polarity = false) {                       \
    detail::check_switches(switches, 0, "v_" #D "_ld_tnsr_b");                                     \
    if (!detail::enabled(predicate, polarity))                                                     \
      return detail::on_slot(                                                                      \
          detail::kLoad, [&] { return income; }, income);                                          \
    return detail::load<V>(ndx, t, "v_" #D "_ld_tnsr_b");                                          \
  }                                                                                                \
  inline V v_##D##_ld_tnsr_vb(const int5& ndx, tensor t, int switches, const V& income,            \
                              const B& predicate, bool polarity = false) {                         \
    detail::check_switches(switches, 0, "v_" #D "_ld_tnsr_vb");                                    \
    V r = detail::blend(detail::load<V>(ndx, t, "v_" #D "_ld_tnsr_vb"), income, predicate,         \
                        polarity);                                                                 \
    r.ready = std::max({r.ready, income.ready, predicate.ready});                                  \
    return r;                                                                                      \
  }                                                                                                \
  inline void v_##D##_st_tnsr(const int5& ndx, tensor t, const V& value, int switches = 0,         \
                              bool predicate = true, bool polarity = false) {                      \
    detail::whole_store(ndx, t, value, switches, predicate, polarity, "v_" #D "_st_tnsr");         \
  }                                                                                                \
  /* LD_TNSR PARTIAL (tpc-intrinsics.h): lanes offset .. offset + size (size: elements minus       \
     one) are read, the others keep income */                                                      \
  inline V v_##D##_ld_tnsr_partial_b(const int5& ndx, tensor t, int size, int offset,              \
                                     int switches = 0, const V& income = V(),                      \
                                     bool predicate = true, bool polarity = false) {               \
    detail::check_switches(switches, 0, "v_" #D "_ld_tnsr_partial_b");                             \
    if (!detail::enabled(predicate, polarity))                                                     \
      return detail::on_slot(                                                                      \
          detail::kLoad, [&] { return income; }, income);                                          \
    return detail::load_lanes(ndx, t, size, offset, income, "v_" #D "_ld_tnsr_partial_b");         \
  }                                                                                                \
  inline V v_##D##_ld_tnsr_partial_vb(const int5& ndx, tensor t, int size, int offset,             \
                                      int switches, const V& income, const B& predicate,           \
                                      bool polarity = false) {                                     \
    detail::check_switches(switches, 0, "v_" #D "_ld_tnsr_partial_vb");                            \
    V r = detail::blend(                                                                           \
        detail::load_lanes(ndx, t, size, offset, income, "v_" #D "_ld_tnsr_partial_vb"), income,   \
        predicate, polarity);                                                                      \
    r.ready = std::max({r.ready, income.ready, predicate.ready});                                  \
    return r;                                                                                      \
  }                                                                                                \
  /* legacy (tpc-defs.h): v_<dt>_ld_tnsr_partial_i_b(ndx, t, income, size, offset, p, o) */        \
  inline V v_##D##_ld_tnsr_partial_i_b(const int5& ndx, tensor t, const V& income, int size,       \
                                       int offset, bool predicate, bool polarity) {                \
    return v_##D##_ld_tnsr_partial_b(ndx, t, size, offset, 0, income, predicate, polarity);        \
  }                                                                                                \
  inline V v_##D##_ld_tnsr_partial_i_vb(const int5& ndx, tensor t, const V& income, int size,      \
                                        int offset, const bool256& predicate, bool polarity) {     \
    return v_##D##_ld_tnsr_partial_vb(ndx, t, size, offset, 0, income, B(predicate), polarity);    \
  }                                                                                                \
  inline V v_##D##_ld_tnsr_partial_i(const int5& ndx, tensor t, int size, int offset) {            \
    return v_##D##_ld_tnsr_partial_b(ndx, t, size, offset);                                        \
  }                                                                                                \
  /* ST_TNSR PARTIAL: lanes offset .. offset + size only (size: elements minus one) */             \
  inline void v_##D##_st_tnsr_partial(const int5& ndx, tensor t, const V& value, int size,         \
                                      int offset, int switches = 0, bool predicate = true,         \
                                      bool polarity = false) {                                     \
    detail::check_store_switches(switches, "v_" #D "_st_tnsr_partial");                            \
    if (!detail::enabled(predicate, polarity)) {                                                   \
      detail::issue(detail::kStore, value.ready);                                                  \
      return;                                                                                      \
    }                                                                                              \
    detail::store_lanes(ndx, t, value, size, offset, "v_" #D "_st_tnsr_partial");                  \
  }                                                                                                \
  TESSERA_TPC_G_HALF(D, V, B, low, false)                                                          \
  TESSERA_TPC_G_HALF(D, V, B, high, true)                                                          \
  /* ld_g: one scalar from global memory, broadcast to every lane */                               \
  inline V v_##D##_ld_g(const global_address& addr, int switches = 0, const V& income = V(),       \
                        bool predicate = true, bool polarity = false) {                            \
    detail::check_switches(switches, 0, "v_" #D "_ld_g");                                          \
    if (!detail::enabled(predicate, polarity))                                                     \
      return detail::on_slot(                                                                      \
          detail::kLoad, [&] { return income; }, income);                                          \
    S x{};                                                                                         \
    V r(x);                                                                                        \
    r.ready = detail::scalar_global_read(addr, &x, sizeof(S), "v_" #D "_ld_g");                    \
    const std::uint64_t ready = r.ready;                                                           \
    r = V(static_cast<detail::scalar_t<V>>(x));                                                    \
    r.ready = ready;                                                                               \
    return r;                                                                                      \
  }                                                                                                \
  /* scalar global access through a gen_addr address (spec 000 §2.5.2) */                         \
  inline S s_##D##_ld_g(const global_address& addr, int switches = 0, S income = S(),              \
                        bool predicate = true, bool polarity = false) {                            \
    detail::check_switches(switches, 0, "s_" #D "_ld_g");                                          \
    if (!detail::enabled(predicate, polarity)) return income;                                      \
    S x{};                                                                                         \
    detail::scalar_global_read(addr, &x, sizeof(S), "s_" #D "_ld_g");                              \
    return x;                                                                                      \
  }                                                                                                \
  inline void s_##D##_st_g(const global_address& addr, S value, int switches = 0,                  \
                           bool predicate = true, bool polarity = false) {                         \
    detail::check_switches(switches, 0, "s_" #D "_st_g");                                          \
    if (!detail::enabled(predicate, polarity)) return;                                             \
    detail::scalar_global_write(addr, &value, sizeof(S), "s_" #D "_st_g");                         \
  }                                                                                                \
  /* scalar arithmetic on the SPU */                                                               \
  inline S s_##D##_add(S a, S b, int switches = 0, S income = S(), bool predicate = true,          \
                       bool polarity = false) {                                                    \
    detail::check_switches(switches, SW_SAT, "s_" #D "_add");                                      \
    detail::issue(detail::kSpu);                                                                   \
    return detail::enabled(predicate, polarity) ? detail::scalar_add<S, false>(a, b, switches)     \
                                                : income;                                          \
  }                                                                                                \
  inline S s_##D##_sub(S a, S b, int switches = 0, S income = S(), bool predicate = true,          \
                       bool polarity = false) {                                                    \
    detail::check_switches(switches, SW_SAT, "s_" #D "_sub");                                      \
    detail::issue(detail::kSpu);                                                                   \
    return detail::enabled(predicate, polarity) ? detail::scalar_add<S, true>(a, b, switches)      \
                                                : income;                                          \
  }                                                                                                \
  inline S s_##D##_mul(S a, S b, int switches = 0, S income = S(), bool predicate = true,          \
                       bool polarity = false) {                                                    \
    detail::check_switches(switches, 0, "s_" #D "_mul");                                           \
    detail::issue(detail::kSpu);                                                                   \
    return detail::enabled(predicate, polarity) ? static_cast<S>(a * b) : income;                  \
  }                                                                                                \
  inline S s_##D##_min(S a, S b, int switches = 0, S income = S(), bool predicate = true,          \
                       bool polarity = false) {                                                    \
    detail::check_switches(switches, 0, "s_" #D "_min");                                           \
    detail::issue(detail::kSpu);                                                                   \
    return detail::enabled(predicate, polarity) ? (b < a ? b : a) : income;                        \
  }                                                                                                \
  inline S s_##D##_max(S a, S b, int switches = 0, S income = S(), bool predicate = true,          \
                       bool polarity = false) {                                                    \
    detail::check_switches(switches, 0, "s_" #D "_max");                                           \
    detail::issue(detail::kSpu);                                                                   \
    return detail::enabled(predicate, polarity) ? (a < b ? b : a) : income;                        \
  }                                                                                                \
  TESSERA_TPC_G_S_CMP(D, S, eq)                                                                    \
  TESSERA_TPC_G_S_CMP(D, S, neq)                                                                   \
  TESSERA_TPC_G_S_CMP(D, S, less)                                                                  \
  TESSERA_TPC_G_S_CMP(D, S, leq)                                                                   \
  TESSERA_TPC_G_S_CMP(D, S, grt)                                                                   \
  TESSERA_TPC_G_S_CMP(D, S, geq)                                                                   \
  inline S s_##D##_mov(S a, int switches = 0, S income = S(), bool predicate = true,               \
                       bool polarity = false) {                                                    \
    detail::check_switches(switches, 0, "s_" #D "_mov");                                           \
    detail::issue(detail::kSpu);                                                                   \
    return detail::enabled(predicate, polarity) ? a : income;                                      \
  }

// ST_TNSR with RMW_SEL, whole (_rmw), PARTIAL (_partial_rmw) and half (_low_rmw, _high_rmw).
#define TESSERA_TPC_G_RMW(D, V, RDT)                                                          \
  inline void v_##D##_st_tnsr_rmw(const int5& ndx, tensor t, const V& value, int rmw,         \
                                  int switches = 0, bool predicate = true,                    \
                                  bool polarity = false) {                                    \
    detail::check_store_switches(switches, "v_" #D "_st_tnsr_rmw");                           \
    if (!detail::enabled(predicate, polarity)) return detail::skip_store(value);              \
    detail::rmw_store(ndx, t, value, rmw, RDT, "v_" #D "_st_tnsr_rmw", 0, V::lanes, 0,        \
                      [&] { detail::store(ndx, t, value, "v_" #D "_st_tnsr_rmw"); });         \
  }                                                                                           \
  inline void v_##D##_st_tnsr_partial_rmw(const int5& ndx, tensor t, const V& value, int rmw, \
                                          int size, int offset, int switches = 0,             \
                                          bool predicate = true, bool polarity = false) {     \
    detail::check_store_switches(switches, "v_" #D "_st_tnsr_partial_rmw");                   \
    detail::check_partial<V>(size, offset, "v_" #D "_st_tnsr_partial_rmw");                   \
    if (!detail::enabled(predicate, polarity)) return detail::skip_store(value);              \
    detail::rmw_store(                                                                        \
        ndx, t, value, rmw, RDT, "v_" #D "_st_tnsr_partial_rmw", offset, size + 1, 0, [&] {   \
          detail::store_lanes(ndx, t, value, size, offset, "v_" #D "_st_tnsr_partial_rmw");   \
        });                                                                                   \
  }                                                                                           \
  inline void v_##D##_st_tnsr_low_rmw(const int5& ndx, tensor t, const V& value, int rmw,     \
                                      int switches = 0, bool predicate = true,                \
                                      bool polarity = false) {                                \
    detail::check_store_switches(switches, "v_" #D "_st_tnsr_low_rmw");                       \
    if (!detail::enabled(predicate, polarity)) return detail::skip_store(value);              \
    detail::rmw_store(                                                                        \
        ndx, t, value, rmw, RDT, "v_" #D "_st_tnsr_low_rmw", 0, V::lanes / 2, 0,              \
        [&] { detail::store_half(ndx, t, value, false, "v_" #D "_st_tnsr_low_rmw"); });       \
  }                                                                                           \
  inline void v_##D##_st_tnsr_high_rmw(const int5& ndx, tensor t, const V& value, int rmw,    \
                                       int switches = 0, bool predicate = true,               \
                                       bool polarity = false) {                               \
    detail::check_store_switches(switches, "v_" #D "_st_tnsr_high_rmw");                      \
    if (!detail::enabled(predicate, polarity)) return detail::skip_store(value);              \
    detail::rmw_store(ndx, t, value, rmw, RDT, "v_" #D "_st_tnsr_high_rmw", V::lanes / 2,     \
                      V::lanes / 2, V::lanes / 2, [&] {                                       \
                        detail::store_half(ndx, t, value, true, "v_" #D "_st_tnsr_high_rmw"); \
                      });                                                                     \
  }

#define TESSERA_TPC_G_FLOAT(D, V, B)                                                             \
  inline V v_##D##_mac_b(const V& a, const V& b, const V& accumulator, int switches = 0,         \
                         bool predicate = true, bool polarity = false) {                         \
    detail::check_switches(switches, SW_NEG, "v_" #D "_mac_b");                                  \
    if (!detail::enabled(predicate, polarity))                                                   \
      return detail::on_vpu([&] { return accumulator; }, a, b, accumulator);                     \
    return (switches & SW_NEG) ? v_##D##_msac_neg(a, b, accumulator)                             \
                               : v_##D##_mac_v_v(a, b, accumulator);                             \
  }                                                                                              \
  inline V v_##D##_mac_vb(const V& a, const V& b, const V& accumulator, int switches,            \
                          const B& predicate, bool polarity = false) {                           \
    detail::check_switches(switches, SW_NEG, "v_" #D "_mac_vb");                                 \
    V r = detail::blend((switches & SW_NEG) ? v_##D##_msac_neg(a, b, accumulator)                \
                                            : v_##D##_mac_v_v(a, b, accumulator),                \
                        accumulator, predicate, polarity);                                       \
    r.ready = std::max({r.ready, predicate.ready});                                              \
    return r;                                                                                    \
  }                                                                                              \
  /* legacy (spec 000 / tpc-defs.h): the negation is an argument */                              \
  inline V v_##D##_mac_v_v(const V& a, const V& b, const V& acc, bool neg) {                     \
    return v_##D##_mac_b(a, b, acc, neg ? SW_NEG : 0);                                           \
  }                                                                                              \
  inline V v_##D##_mac_v_s(const V& a, detail::scalar_t<V> b, const V& acc, bool neg) {          \
    return v_##D##_mac_b(a, V(b), acc, neg ? SW_NEG : 0);                                        \
  }                                                                                              \
  inline V v_##D##_mac_v_v_b(const V& a, const V& b, const V& acc, bool neg, bool p, bool pol) { \
    return v_##D##_mac_b(a, b, acc, neg ? SW_NEG : 0, p, pol);                                   \
  }                                                                                              \
  inline V v_##D##_mac_v_v_vb(const V& a, const V& b, const V& acc, bool neg, const bool256& p,  \
                              bool pol) {                                                        \
    return v_##D##_mac_vb(a, b, acc, neg ? SW_NEG : 0, B(p), pol);                               \
  }                                                                                              \
  /* NEARBYINT: round to an integral value in the switches' rounding mode (SW_RHNE, SW_RD...) */ \
  inline V v_##D##_nearbyint_b(const V& a, int switches = 0, const V& income = V(),              \
                               bool predicate = true, bool polarity = false) {                   \
    detail::check_switches(switches, detail::kRoundingBits, "v_" #D "_nearbyint_b");             \
    const int rm = detail::rounding_of(switches, "v_" #D "_nearbyint_b");                        \
    return detail::predicated(detail::nearbyint(a, rm), income, predicate, polarity, a);         \
  }                                                                                              \
  inline V v_##D##_nearbyint_vb(const V& a, int switches, const V& income, const B& predicate,   \
                                bool polarity = false) {                                         \
    detail::check_switches(switches, detail::kRoundingBits, "v_" #D "_nearbyint_vb");            \
    const int rm = detail::rounding_of(switches, "v_" #D "_nearbyint_vb");                       \
    return detail::predicated_v(detail::nearbyint(a, rm), income, predicate, polarity, a);       \
  }

// ABS with switches, income and predicate, for floats and signed integers.
#define TESSERA_TPC_G_ABS(D, V, B)                                                       \
  inline V v_##D##_abs_b(const V& a, int switches = 0, const V& income = V(),            \
                         bool predicate = true, bool polarity = false) {                 \
    detail::check_switches(switches, 0, "v_" #D "_abs_b");                               \
    return detail::predicated(v_##D##_abs_v(a), income, predicate, polarity, a);         \
  }                                                                                      \
  inline V v_##D##_abs_vb(const V& a, int switches, const V& income, const B& predicate, \
                          bool polarity = false) {                                       \
    detail::check_switches(switches, 0, "v_" #D "_abs_vb");                              \
    return detail::predicated_v(v_##D##_abs_v(a), income, predicate, polarity, a);       \
  }

// acc - a*b, one MAC with the NEG switch (shares the lane code of v_<dt>_mac_v_v's fused path).
inline float64 v_f32_msac_neg(const float64& a, const float64& b, const float64& acc) {
  return v_f32_mac_v_v(v_f32_neg_v(a), b, acc);
}
inline bfloat128 v_bf16_msac_neg(const bfloat128& a, const bfloat128& b, const bfloat128& acc) {
  return v_bf16_mac_v_v(v_bf16_neg_v(a), b, acc);
}

TESSERA_TPC_G_COMMON(f32, float64, bool64, float)
TESSERA_TPC_G_COMMON(bf16, bfloat128, bool128, bf16)
TESSERA_TPC_G_COMMON(i32, int64, bool64, std::int32_t)
TESSERA_TPC_G_COMMON(u32, uint64, bool64, std::uint32_t)
TESSERA_TPC_G_COMMON(i16, short128, bool128, std::int16_t)
TESSERA_TPC_G_COMMON(u16, ushort128, bool128, std::uint16_t)
TESSERA_TPC_G_COMMON(i8, char256, bool256, std::int8_t)
TESSERA_TPC_G_COMMON(u8, uchar256, bool256, std::uint8_t)
TESSERA_TPC_G_FLOAT(f32, float64, bool64)
TESSERA_TPC_G_FLOAT(bf16, bfloat128, bool128)
TESSERA_TPC_G_ABS(f32, float64, bool64)
TESSERA_TPC_G_ABS(bf16, bfloat128, bool128)
TESSERA_TPC_G_ABS(i32, int64, bool64)
TESSERA_TPC_G_ABS(i16, short128, bool128)
TESSERA_TPC_G_ABS(i8, char256, bool256)
TESSERA_TPC_G_RMW(f32, float64, RMW_DT_FP32)
TESSERA_TPC_G_RMW(bf16, bfloat128, RMW_DT_BF16)
TESSERA_TPC_G_RMW(i32, int64, RMW_DT_INT32)
TESSERA_TPC_G_RMW(u32, uint64, RMW_DT_UINT32)
TESSERA_TPC_G_RMW(i16, short128, RMW_DT_INT16)
TESSERA_TPC_G_RMW(u16, ushort128, RMW_DT_UINT16)
TESSERA_TPC_G_RMW(i8, char256, RMW_DT_INT8)
TESSERA_TPC_G_RMW(u8, uchar256, RMW_DT_UINT8)

#define TESSERA_TPC_G_LOGIC(D, V, B)                                         \
  TESSERA_TPC_G_BIN(D, V, B, and, (detail::map2(a, b, detail::op_and{})), 0) \
  TESSERA_TPC_G_BIN(D, V, B, or, (detail::map2(a, b, detail::op_or{})), 0)   \
  TESSERA_TPC_G_BIN(D, V, B, xor, (detail::map2(a, b, detail::op_xor{})), 0) \
  TESSERA_TPC_G_BIN(D, V, B, shl, (detail::map2(a, b, detail::op_shl{})), 0) \
  TESSERA_TPC_G_BIN(D, V, B, shr, (detail::map2(a, b, detail::op_shr{})), 0)
TESSERA_TPC_G_LOGIC(i32, int64, bool64)
TESSERA_TPC_G_LOGIC(u32, uint64, bool64)
TESSERA_TPC_G_LOGIC(i16, short128, bool128)
TESSERA_TPC_G_LOGIC(u16, ushort128, bool128)
TESSERA_TPC_G_LOGIC(i8, char256, bool256)
TESSERA_TPC_G_LOGIC(u8, uchar256, bool256)

#undef TESSERA_TPC_G_LOGIC

// tpc-intrinsics.h declares the unsigned SHL / SHR with a signed count (`uint64 v_u32_shl_b(uint64
// a, int64 b, ...)`, short128 for u16, char256 for u8); TPC-C also takes the unsigned view, as
// clang converts integer vectors of one size. The count's bits are the same either way. A scalar
// count broadcasts: the `int` overload takes it, where the two vector ones would tie.
#define TESSERA_TPC_G_SIGNED_COUNT(D, V, C, B, NAME)                                              \
  inline V v_##D##_##NAME##_b(const V& a, const C& b, int switches = 0, const V& income = V(),   \
                              bool predicate = true, bool polarity = false) {                    \
    return v_##D##_##NAME##_b(a, static_cast<V>(b), switches, income, predicate, polarity);      \
  }                                                                                              \
  inline V v_##D##_##NAME##_b(const V& a, int b, int switches = 0, const V& income = V(),        \
                              bool predicate = true, bool polarity = false) {                    \
    return v_##D##_##NAME##_b(a, V(static_cast<detail::lane_t<V>>(b)), switches, income,         \
                              predicate, polarity);                                              \
  }                                                                                              \
  inline V v_##D##_##NAME##_vb(const V& a, const C& b, int switches, const V& income,            \
                               const B& predicate, bool polarity = false) {                      \
    return v_##D##_##NAME##_vb(a, static_cast<V>(b), switches, income, predicate, polarity);     \
  }                                                                                              \
  inline V v_##D##_##NAME##_vb(const V& a, int b, int switches, const V& income,                 \
                               const B& predicate, bool polarity = false) {                      \
    return v_##D##_##NAME##_vb(a, V(static_cast<detail::lane_t<V>>(b)), switches, income,        \
                               predicate, polarity);                                             \
  }
#define TESSERA_TPC_G_SIGNED_COUNTS(D, V, C, B)  \
  TESSERA_TPC_G_SIGNED_COUNT(D, V, C, B, shl)    \
  TESSERA_TPC_G_SIGNED_COUNT(D, V, C, B, shr)
TESSERA_TPC_G_SIGNED_COUNTS(u32, uint64, int64, bool64)
TESSERA_TPC_G_SIGNED_COUNTS(u16, ushort128, short128, bool128)
TESSERA_TPC_G_SIGNED_COUNTS(u8, uchar256, char256, bool256)
#undef TESSERA_TPC_G_SIGNED_COUNTS
#undef TESSERA_TPC_G_SIGNED_COUNT

// AND/OR/XOR/NOT act on the encodings of float lanes too (tpc-intrinsics.h declares them for f32
// and bf16), and SHL/SHR/AND/OR/XOR/NOT on the SPU for every scalar type.
namespace detail {
template <typename T, typename F>
inline T on_bits(T a, T b, F f) {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t,
                               std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint8_t>>;
  static_assert(sizeof(T) == sizeof(U), "lanes are 1, 2 or 4 bytes");
  U x, y;
  std::memcpy(&x, &a, sizeof x);
  std::memcpy(&y, &b, sizeof y);
  const U r = static_cast<U>(f(x, y));
  T out;
  std::memcpy(static_cast<void*>(&out), &r, sizeof out);
  return out;
}
struct op_not {
  template <typename X>
  X operator()(X a, X) const {
    return static_cast<X>(~a);
  }
};
template <typename V, typename F>
inline V bits_map2(const V& a, const V& b, F f) {
  V r(no_init_t{});
  for (int i = 0; i < V::lanes; ++i) r.v[i] = on_bits(a.v[i], b.v[i], f);
  return r;
}
// ABS: integers saturate ABS(MIN) to MAX (Gaudi has no SW_NO_SAT, a Greco switch in
// tpc-intrinsics.h), floats clear the sign bit.
template <typename S>
inline S abs_lane(S a) {
  if constexpr (std::is_integral_v<S>)
    return a == std::numeric_limits<S>::lowest() ? std::numeric_limits<S>::max()
                                                 : static_cast<S>(a < 0 ? -a : a);
  else
    return on_bits(a, a, [](auto x, auto) {
      return x & static_cast<decltype(x)>(~(decltype(x){1} << (sizeof(x) * 8 - 1)));
    });
}
}  // namespace detail
#define TESSERA_TPC_G_FLOAT_LOGIC(D, V, B)                                        \
  TESSERA_TPC_G_BIN(D, V, B, and, (detail::bits_map2(a, b, detail::op_and{})), 0) \
  TESSERA_TPC_G_BIN(D, V, B, or, (detail::bits_map2(a, b, detail::op_or{})), 0)   \
  TESSERA_TPC_G_BIN(D, V, B, xor, (detail::bits_map2(a, b, detail::op_xor{})), 0)
TESSERA_TPC_G_FLOAT_LOGIC(f32, float64, bool64)
TESSERA_TPC_G_FLOAT_LOGIC(bf16, bfloat128, bool128)
#undef TESSERA_TPC_G_FLOAT_LOGIC
#define TESSERA_TPC_G_NOT(D, V, B)                                                            \
  inline V v_##D##_not_b(const V& a, int switches = 0, const V& income = V(),                 \
                         bool predicate = true, bool polarity = false) {                      \
    detail::check_switches(switches, 0, "v_" #D "_not_b");                                    \
    return detail::predicated(detail::bits_map2(a, a, detail::op_not{}), income, predicate,   \
                              polarity, a);                                                   \
  }                                                                                           \
  inline V v_##D##_not_vb(const V& a, int switches, const V& income, const B& predicate,      \
                          bool polarity = false) {                                            \
    detail::check_switches(switches, 0, "v_" #D "_not_vb");                                   \
    return detail::predicated_v(detail::bits_map2(a, a, detail::op_not{}), income, predicate, \
                                polarity, a);                                                 \
  }
TESSERA_TPC_G_NOT(f32, float64, bool64)
TESSERA_TPC_G_NOT(bf16, bfloat128, bool128)
TESSERA_TPC_G_NOT(i32, int64, bool64)
TESSERA_TPC_G_NOT(u32, uint64, bool64)
TESSERA_TPC_G_NOT(i16, short128, bool128)
TESSERA_TPC_G_NOT(u16, ushort128, bool128)
TESSERA_TPC_G_NOT(i8, char256, bool256)
TESSERA_TPC_G_NOT(u8, uchar256, bool256)
#undef TESSERA_TPC_G_NOT
#define TESSERA_TPC_G_S_BIN(D, S, NAME, B_T, EXPR)                                             \
  inline S s_##D##_##NAME(S a, B_T b, int switches = 0, S income = S(), bool predicate = true, \
                          bool polarity = false) {                                             \
    detail::check_switches(switches, 0, "s_" #D "_" #NAME);                                    \
    detail::issue(detail::kSpu);                                                               \
    return detail::enabled(predicate, polarity) ? (EXPR) : income;                             \
  }
#define TESSERA_TPC_G_S_UNARY(D, S, NAME, EXPR)                                         \
  inline S s_##D##_##NAME(S a, int switches = 0, S income = S(), bool predicate = true, \
                          bool polarity = false) {                                      \
    detail::check_switches(switches, 0, "s_" #D "_" #NAME);                             \
    detail::issue(detail::kSpu);                                                        \
    return detail::enabled(predicate, polarity) ? (EXPR) : income;                      \
  }
#define TESSERA_TPC_G_S_BITS(D, S)                                           \
  TESSERA_TPC_G_S_BIN(D, S, and, S, detail::on_bits(a, b, detail::op_and{})) \
  TESSERA_TPC_G_S_BIN(D, S, or, S, detail::on_bits(a, b, detail::op_or{}))   \
  TESSERA_TPC_G_S_BIN(D, S, xor, S, detail::on_bits(a, b, detail::op_xor{})) \
  TESSERA_TPC_G_S_UNARY(D, S, not, detail::on_bits(a, a, detail::op_not{}))
#define TESSERA_TPC_G_S_SHIFTS(D, S)                                                  \
  TESSERA_TPC_G_S_BIN(D, S, shl, std::int8_t, detail::op_shl{}(a, static_cast<S>(b))) \
  TESSERA_TPC_G_S_BIN(D, S, shr, std::int8_t, detail::op_shr{}(a, static_cast<S>(b)))
TESSERA_TPC_G_S_BITS(f32, float)
TESSERA_TPC_G_S_BITS(bf16, bf16)
TESSERA_TPC_G_S_BITS(i32, std::int32_t)
TESSERA_TPC_G_S_BITS(u32, std::uint32_t)
TESSERA_TPC_G_S_BITS(i16, std::int16_t)
TESSERA_TPC_G_S_BITS(u16, std::uint16_t)
TESSERA_TPC_G_S_BITS(i8, std::int8_t)
TESSERA_TPC_G_S_BITS(u8, std::uint8_t)
TESSERA_TPC_G_S_SHIFTS(i32, std::int32_t)
TESSERA_TPC_G_S_SHIFTS(u32, std::uint32_t)
TESSERA_TPC_G_S_SHIFTS(i16, std::int16_t)
TESSERA_TPC_G_S_SHIFTS(u16, std::uint16_t)
TESSERA_TPC_G_S_SHIFTS(i8, std::int8_t)
TESSERA_TPC_G_S_SHIFTS(u8, std::uint8_t)
TESSERA_TPC_G_S_UNARY(f32, float, abs, detail::abs_lane(a))
TESSERA_TPC_G_S_UNARY(bf16, bf16, abs, detail::abs_lane(a))
TESSERA_TPC_G_S_UNARY(i32, std::int32_t, abs, detail::abs_lane(a))
TESSERA_TPC_G_S_UNARY(i16, std::int16_t, abs, detail::abs_lane(a))
TESSERA_TPC_G_S_UNARY(i8, std::int8_t, abs, detail::abs_lane(a))
#undef TESSERA_TPC_G_S_SHIFTS
#undef TESSERA_TPC_G_S_BITS
#undef TESSERA_TPC_G_S_UNARY
#undef TESSERA_TPC_G_S_BIN

// SEL_<cmp> with the compared type A and the selected (result) type C, lanes of one width
// (tpc-intrinsics.h: `float64 v_f32_sel_grt_i32_b(int64 a, int64 b, float64 c, float64 d, ...)`
// returns c where a > b, else d). The legacy spelling of tpc-defs.h puts the compared type first:
// `v_i32_f32_sel_less_v_v_v_v(a, b, c, d)` is `v_f32_sel_less_i32_b(a, b, c, d)`; its _v_s_v_v
// and _v_v_v_s forms take a scalar b or d, which converts to a vector here as in TPC-C.
#define TESSERA_TPC_G_SEL_CMP(C, CV, A, AV, B, NAME)                                              \
  inline CV v_##C##_sel_##NAME##_##A##_b(const AV& a, const AV& b, const CV& c, const CV& d,      \
                                         int switches = 0, const CV& income = CV(),               \
                                         bool predicate = true, bool polarity = false) {          \
    detail::check_switches(switches, SW_SUP_NAN, "v_" #C "_sel_" #NAME "_" #A "_b");              \
    if (!detail::enabled(predicate, polarity))                                                    \
      return detail::on_vpu([&] { return income; }, a, b, c, d, income);                          \
    return detail::on_vpu([&] { return detail::select(a, b, c, d, detail::cmp_##NAME{}); }, a, b, \
                          c, d);                                                                  \
  }                                                                                               \
  inline CV v_##C##_sel_##NAME##_##A##_vb(const AV& a, const AV& b, const CV& c, const CV& d,     \
                                          int switches, const CV& income, const B& predicate,     \
                                          bool polarity = false) {                                \
    detail::check_switches(switches, SW_SUP_NAN, "v_" #C "_sel_" #NAME "_" #A "_vb");             \
    return detail::predicated_v(detail::select(a, b, c, d, detail::cmp_##NAME{}), income,         \
                                predicate, polarity, a, b, c, d);                                 \
  }                                                                                               \
  inline CV v_##A##_##C##_sel_##NAME##_v_v_v_v_b(const AV& a, const AV& b, const CV& c,           \
                                                 const CV& d, const CV& income, bool predicate,   \
                                                 bool polarity) {                                 \
    return v_##C##_sel_##NAME##_##A##_b(a, b, c, d, 0, income, predicate, polarity);              \
  }                                                                                               \
  inline CV v_##A##_##C##_sel_##NAME##_v_v_v_v_vb(const AV& a, const AV& b, const CV& c,          \
                                                  const CV& d, const CV& income,                  \
                                                  const bool256& predicate, bool polarity) {      \
    return v_##C##_sel_##NAME##_##A##_vb(a, b, c, d, 0, income, B(predicate), polarity);          \
  }                                                                                               \
  inline CV v_##A##_##C##_sel_##NAME##_v_v_v_v(const AV& a, const AV& b, const CV& c,             \
                                               const CV& d) {                                     \
    return v_##C##_sel_##NAME##_##A##_b(a, b, c, d);                                              \
  }                                                                                               \
  inline CV v_##A##_##C##_sel_##NAME##_v_s_v_v(const AV& a, const AV& b, const CV& c,             \
                                               const CV& d) {                                     \
    return v_##C##_sel_##NAME##_##A##_b(a, b, c, d);                                              \
  }                                                                                               \
  inline CV v_##A##_##C##_sel_##NAME##_v_v_v_s(const AV& a, const AV& b, const CV& c,             \
                                               const CV& d) {                                     \
    return v_##C##_sel_##NAME##_##A##_b(a, b, c, d);                                              \
  }                                                                                               \
  inline CV v_##A##_##C##_sel_##NAME##_v_s_v_v_b(const AV& a, const AV& b, const CV& c,           \
                                                 const CV& d, const CV& income, bool predicate,   \
                                                 bool polarity) {                                 \
    return v_##C##_sel_##NAME##_##A##_b(a, b, c, d, 0, income, predicate, polarity);              \
  }                                                                                               \
  inline CV v_##A##_##C##_sel_##NAME##_v_v_v_s_b(const AV& a, const AV& b, const CV& c,           \
                                                 const CV& d, const CV& income, bool predicate,   \
                                                 bool polarity) {                                 \
    return v_##C##_sel_##NAME##_##A##_b(a, b, c, d, 0, income, predicate, polarity);              \
  }
#define TESSERA_TPC_G_SEL(C, CV, A, AV, B)     \
  TESSERA_TPC_G_SEL_CMP(C, CV, A, AV, B, eq)   \
  TESSERA_TPC_G_SEL_CMP(C, CV, A, AV, B, neq)  \
  TESSERA_TPC_G_SEL_CMP(C, CV, A, AV, B, less) \
  TESSERA_TPC_G_SEL_CMP(C, CV, A, AV, B, leq)  \
  TESSERA_TPC_G_SEL_CMP(C, CV, A, AV, B, grt)  \
  TESSERA_TPC_G_SEL_CMP(C, CV, A, AV, B, geq)
// Every pair of one lane width: 32-bit {f32, i32, u32}, 16-bit {bf16, i16, u16}, 8-bit {i8, u8}.
#define TESSERA_TPC_G_SEL3(C, CV, B, A0, AV0, A1, AV1, A2, AV2) \
  TESSERA_TPC_G_SEL(C, CV, A0, AV0, B)                          \
  TESSERA_TPC_G_SEL(C, CV, A1, AV1, B)                          \
  TESSERA_TPC_G_SEL(C, CV, A2, AV2, B)
TESSERA_TPC_G_SEL3(f32, float64, bool64, f32, float64, i32, int64, u32, uint64)
TESSERA_TPC_G_SEL3(i32, int64, bool64, f32, float64, i32, int64, u32, uint64)
TESSERA_TPC_G_SEL3(u32, uint64, bool64, f32, float64, i32, int64, u32, uint64)
TESSERA_TPC_G_SEL3(bf16, bfloat128, bool128, bf16, bfloat128, i16, short128, u16, ushort128)
TESSERA_TPC_G_SEL3(i16, short128, bool128, bf16, bfloat128, i16, short128, u16, ushort128)
TESSERA_TPC_G_SEL3(u16, ushort128, bool128, bf16, bfloat128, i16, short128, u16, ushort128)
TESSERA_TPC_G_SEL(i8, char256, i8, char256, bool256)
TESSERA_TPC_G_SEL(i8, char256, u8, uchar256, bool256)
TESSERA_TPC_G_SEL(u8, uchar256, i8, char256, bool256)
TESSERA_TPC_G_SEL(u8, uchar256, u8, uchar256, bool256)
#undef TESSERA_TPC_G_SEL3
// SEL2_<cmp> (tpc-intrinsics.h §12 "SEL2_LESS" .. "SEL2_GEQ"): both selections of one compare,
// as the pair (c, a) where a <cmp> b, else (d, b): v1 takes the selected lanes (type C), v2 the
// compared ones (type A), as `int64_float64 v_i32_sel2_less_f32_b(float64 a, float64 b, int64 c,
// int64 d, ...)` declares; bitonic sort moves indices with their data this way.
namespace detail {
template <typename P, typename A, typename C, typename Cmp>
inline P select2(const A& a, const A& b, const C& c, const C& d, Cmp cmp) {
  static_assert(A::lanes == C::lanes, "SEL2 compares and selects lanes of one width");
  P r{C(no_init_t{}), A(no_init_t{})};
  for (int i = 0; i < C::lanes; ++i) {
    const bool take_first =
        cmp(static_cast<scalar_t<A>>(a.v[i]), static_cast<scalar_t<A>>(b.v[i]));
    r.v1.v[i] = take_first ? c.v[i] : d.v[i];
    r.v2.v[i] = take_first ? a.v[i] : b.v[i];
  }
  return r;
}
// One VPU instruction writes both halves of the pair.
template <typename P, typename... Ops>
inline P timed_pair_on_vpu(P r, const Ops&... ops) {
  r.v1.ready = issue(kVpu, ready_of(ops...));
  r.v2.ready = r.v1.ready;
  return r;
}
}  // namespace detail
#define TESSERA_TPC_G_SEL2_CMP(C, CV, A, AV, B, P, NAME)                                          \
  inline P v_##C##_sel2_##NAME##_##A##_b(const AV& a, const AV& b, const CV& c, const CV& d,     \
                                         int switches = 0, const P& income = P(),                \
                                         bool predicate = true, bool polarity = false) {         \
    detail::check_switches(switches, SW_SUP_NAN, "v_" #C "_sel2_" #NAME "_" #A "_b");            \
    if (!detail::enabled(predicate, polarity))                                                   \
      return detail::timed_pair_on_vpu(income, a, b, c, d, income.v1, income.v2);               \
    return detail::timed_pair_on_vpu(detail::select2<P>(a, b, c, d, detail::cmp_##NAME{}), a, b, \
                                     c, d);                                                      \
  }                                                                                              \
  inline P v_##C##_sel2_##NAME##_##A##_vb(const AV& a, const AV& b, const CV& c, const CV& d,    \
                                          int switches, const P& income, const B& predicate,     \
                                          bool polarity = false) {                               \
    detail::check_switches(switches, SW_SUP_NAN, "v_" #C "_sel2_" #NAME "_" #A "_vb");           \
    P r = detail::select2<P>(a, b, c, d, detail::cmp_##NAME{});                                  \
    r.v1 = detail::blend(r.v1, income.v1, predicate, polarity);                                  \
    r.v2 = detail::blend(r.v2, income.v2, predicate, polarity);                                  \
    return detail::timed_pair_on_vpu(r, a, b, c, d, income.v1, income.v2, predicate);            \
  }                                                                                              \
  /* tpc-defs.h's legacy spelling puts the compared type first: v_<A>_<C>_sel2_<cmp>_v_v_v_v */  \
  inline P v_##A##_##C##_sel2_##NAME##_v_v_v_v_b(const AV& a, const AV& b, const CV& c,          \
                                                 const CV& d, const P& income, bool predicate,   \
                                                 bool polarity) {                                \
    return v_##C##_sel2_##NAME##_##A##_b(a, b, c, d, 0, income, predicate, polarity);            \
  }                                                                                              \
  inline P v_##A##_##C##_sel2_##NAME##_v_v_v_v_vb(const AV& a, const AV& b, const CV& c,         \
                                                  const CV& d, const P& income,                  \
                                                  const bool256& predicate, bool polarity) {     \
    return v_##C##_sel2_##NAME##_##A##_vb(a, b, c, d, 0, income, B(predicate), polarity);        \
  }                                                                                              \
  inline P v_##A##_##C##_sel2_##NAME##_v_v_v_v(const AV& a, const AV& b, const CV& c,            \
                                               const CV& d) {                                    \
    return v_##C##_sel2_##NAME##_##A##_b(a, b, c, d);                                            \
  }                                                                                              \
  /* the _v_s_v_v / _v_v_v_s spellings take a scalar b or d, which converts to a vector here */   \
  inline P v_##A##_##C##_sel2_##NAME##_v_s_v_v(const AV& a, const AV& b, const CV& c,            \
                                               const CV& d) {                                    \
    return v_##C##_sel2_##NAME##_##A##_b(a, b, c, d);                                            \
  }                                                                                              \
  inline P v_##A##_##C##_sel2_##NAME##_v_v_v_s(const AV& a, const AV& b, const CV& c,            \
                                               const CV& d) {                                    \
    return v_##C##_sel2_##NAME##_##A##_b(a, b, c, d);                                            \
  }                                                                                              \
  inline P v_##A##_##C##_sel2_##NAME##_v_s_v_v_b(const AV& a, const AV& b, const CV& c,          \
                                                 const CV& d, const P& income, bool predicate,   \
                                                 bool polarity) {                                \
    return v_##C##_sel2_##NAME##_##A##_b(a, b, c, d, 0, income, predicate, polarity);            \
  }                                                                                              \
  inline P v_##A##_##C##_sel2_##NAME##_v_v_v_s_b(const AV& a, const AV& b, const CV& c,          \
                                                 const CV& d, const P& income, bool predicate,   \
                                                 bool polarity) {                                \
    return v_##C##_sel2_##NAME##_##A##_b(a, b, c, d, 0, income, predicate, polarity);            \
  }                                                                                              \
  inline P v_##A##_##C##_sel2_##NAME##_v_s_v_v_vb(const AV& a, const AV& b, const CV& c,         \
                                                  const CV& d, const P& income,                  \
                                                  const bool256& predicate, bool polarity) {     \
    return v_##C##_sel2_##NAME##_##A##_vb(a, b, c, d, 0, income, B(predicate), polarity);        \
  }                                                                                              \
  inline P v_##A##_##C##_sel2_##NAME##_v_v_v_s_vb(const AV& a, const AV& b, const CV& c,         \
                                                  const CV& d, const P& income,                  \
                                                  const bool256& predicate, bool polarity) {     \
    return v_##C##_sel2_##NAME##_##A##_vb(a, b, c, d, 0, income, B(predicate), polarity);        \
  }
#define TESSERA_TPC_G_SEL2(C, CV, A, AV, B, P)     \
  TESSERA_TPC_G_SEL2_CMP(C, CV, A, AV, B, P, less) \
  TESSERA_TPC_G_SEL2_CMP(C, CV, A, AV, B, P, leq)  \
  TESSERA_TPC_G_SEL2_CMP(C, CV, A, AV, B, P, grt)  \
  TESSERA_TPC_G_SEL2_CMP(C, CV, A, AV, B, P, geq)
TESSERA_TPC_G_SEL2(f32, float64, f32, float64, bool64, float128)
TESSERA_TPC_G_SEL2(f32, float64, i32, int64, bool64, float64_int64)
TESSERA_TPC_G_SEL2(f32, float64, u32, uint64, bool64, float64_uint64)
TESSERA_TPC_G_SEL2(i32, int64, f32, float64, bool64, int64_float64)
TESSERA_TPC_G_SEL2(i32, int64, i32, int64, bool64, int128)
TESSERA_TPC_G_SEL2(i32, int64, u32, uint64, bool64, int64_uint64)
TESSERA_TPC_G_SEL2(u32, uint64, f32, float64, bool64, uint64_float64)
TESSERA_TPC_G_SEL2(u32, uint64, i32, int64, bool64, uint64_int64)
TESSERA_TPC_G_SEL2(u32, uint64, u32, uint64, bool64, uint128)
TESSERA_TPC_G_SEL2(bf16, bfloat128, bf16, bfloat128, bool128, bfloat256)
TESSERA_TPC_G_SEL2(bf16, bfloat128, i16, short128, bool128, bfloat128_short128)
TESSERA_TPC_G_SEL2(bf16, bfloat128, u16, ushort128, bool128, bfloat128_ushort128)
TESSERA_TPC_G_SEL2(i16, short128, bf16, bfloat128, bool128, short128_bfloat128)
TESSERA_TPC_G_SEL2(i16, short128, i16, short128, bool128, short256)
TESSERA_TPC_G_SEL2(i16, short128, u16, ushort128, bool128, short128_ushort128)
TESSERA_TPC_G_SEL2(u16, ushort128, bf16, bfloat128, bool128, ushort128_bfloat128)
TESSERA_TPC_G_SEL2(u16, ushort128, i16, short128, bool128, ushort128_short128)
TESSERA_TPC_G_SEL2(u16, ushort128, u16, ushort128, bool128, ushort256)
TESSERA_TPC_G_SEL2(i8, char256, i8, char256, bool256, char512)
TESSERA_TPC_G_SEL2(i8, char256, u8, uchar256, bool256, char256_uchar256)
TESSERA_TPC_G_SEL2(u8, uchar256, i8, char256, bool256, uchar256_char256)
TESSERA_TPC_G_SEL2(u8, uchar256, u8, uchar256, bool256, uchar512)
#undef TESSERA_TPC_G_SEL2
#undef TESSERA_TPC_G_SEL2_CMP
#undef TESSERA_TPC_G_SEL
#undef TESSERA_TPC_G_SEL_CMP
#undef TESSERA_TPC_G_FLOAT
#undef TESSERA_TPC_G_ABS
#undef TESSERA_TPC_G_RMW
#undef TESSERA_TPC_G_COMMON
#undef TESSERA_TPC_G_HALF
#undef TESSERA_TPC_G_CMP
#undef TESSERA_TPC_G_S_CMP
#undef TESSERA_TPC_G_BIN

// ---- converts (current names); the rounding mode is in the switches (SW_RHNE.. or
// e_round_* << 16) ----
#define TESSERA_TPC_G_CONVERT(FD, FV, TD, TV, TB)                                                  \
  inline TV v_convert_##FD##_to_##TD##_b(const FV& a, int switches = 0, const TV& income = TV(),   \
                                         bool predicate = true, bool polarity = false) {           \
    detail::check_switches(switches, detail::kConvertSwitches, "v_convert_" #FD "_to_" #TD "_b");  \
    return detail::predicated(                                                                     \
        v_convert_##FD##_to_##TD##_v(a, switches & detail::kRoundingBits, 0, income), income,      \
        predicate, polarity, a);                                                                   \
  }                                                                                                \
  inline TV v_convert_##FD##_to_##TD##_vb(const FV& a, int switches, const TV& income,             \
                                          const TB& predicate, bool polarity = false) {            \
    detail::check_switches(switches, detail::kConvertSwitches, "v_convert_" #FD "_to_" #TD "_vb"); \
    return detail::predicated_v(                                                                   \
        v_convert_##FD##_to_##TD##_v(a, switches & detail::kRoundingBits, 0, income), income,      \
        predicate, polarity, a);                                                                   \
  }
TESSERA_TPC_G_CONVERT(f32, float64, i32, int64, bool64)
TESSERA_TPC_G_CONVERT(i32, int64, f32, float64, bool64)
TESSERA_TPC_G_CONVERT(f32, float64, u32, uint64, bool64)
TESSERA_TPC_G_CONVERT(u32, uint64, f32, float64, bool64)
TESSERA_TPC_G_CONVERT(bf16, bfloat128, i16, short128, bool128)
TESSERA_TPC_G_CONVERT(i16, short128, bf16, bfloat128, bool128)
TESSERA_TPC_G_CONVERT(i16, short128, i32, int64, bool64)
TESSERA_TPC_G_CONVERT(i8, char256, i32, int64, bool64)
TESSERA_TPC_G_CONVERT(u8, uchar256, i32, int64, bool64)
TESSERA_TPC_G_CONVERT(i32, int64, u32, uint64, bool64)
TESSERA_TPC_G_CONVERT(i16, short128, u16, ushort128, bool128)
TESSERA_TPC_G_CONVERT(u16, ushort128, bf16, bfloat128, bool128)
TESSERA_TPC_G_CONVERT(i8, char256, u8, uchar256, bool256)
TESSERA_TPC_G_CONVERT(i16, short128, f32, float64, bool64)  // widening ones read lane 0
TESSERA_TPC_G_CONVERT(i16, short128, u32, uint64, bool64)
TESSERA_TPC_G_CONVERT(i8, char256, f32, float64, bool64)
TESSERA_TPC_G_CONVERT(i8, char256, u32, uint64, bool64)
TESSERA_TPC_G_CONVERT(i8, char256, i16, short128, bool128)
TESSERA_TPC_G_CONVERT(i8, char256, u16, ushort128, bool128)
#undef TESSERA_TPC_G_CONVERT

// Down-converts (tpc-intrinsics.h): `lane` picks which of every 2 (4) result lanes are written,
// 0 = the even ones; the other lanes keep income.
#define TESSERA_TPC_G_CONVERT_DOWN(FD, FV, TD, TV, TB)                                             \
  inline TV v_convert_##FD##_to_##TD##_b(const FV& a, const int lane, int switches,                \
                                         const TV& income, bool predicate = true,                  \
                                         bool polarity = false) {                                  \
    detail::check_switches(switches, detail::kConvertSwitches, "v_convert_" #FD "_to_" #TD "_b");  \
    return detail::predicated(                                                                     \
        v_convert_##FD##_to_##TD##_v(a, switches & detail::kRoundingBits, lane, income), income,   \
        predicate, polarity, a);                                                                   \
  }                                                                                                \
  inline TV v_convert_##FD##_to_##TD##_vb(const FV& a, const int lane, int switches,               \
                                          const TV& income, const TB& predicate,                   \
                                          bool polarity = false) {                                 \
    detail::check_switches(switches, detail::kConvertSwitches, "v_convert_" #FD "_to_" #TD "_vb"); \
    return detail::predicated_v(                                                                   \
        v_convert_##FD##_to_##TD##_v(a, switches & detail::kRoundingBits, lane, income), income,   \
        predicate, polarity, a);                                                                   \
  }
TESSERA_TPC_G_CONVERT_DOWN(f32, float64, i16, short128, bool128)
TESSERA_TPC_G_CONVERT_DOWN(f32, float64, i8, char256, bool256)
TESSERA_TPC_G_CONVERT_DOWN(i32, int64, bf16, bfloat128, bool64)
TESSERA_TPC_G_CONVERT_DOWN(i32, int64, i16, short128, bool128)
TESSERA_TPC_G_CONVERT_DOWN(i16, short128, u8, uchar256, bool128)
TESSERA_TPC_G_CONVERT_DOWN(i16, short128, i8, char256, bool128)
#undef TESSERA_TPC_G_CONVERT_DOWN

// The legacy convert aliases of tpc-defs.h (HabanaAI/tpc_llvm, clang/lib/Headers/tpc-defs.h,
// "CONVERT"), argument for argument: `rm` is an e_round_* mode the alias shifts into the switches
// (rm << 16), `i` the income, `l` the lane. Widening converts take no mode:
// v_convert_i8_to_f32_v(a), _v_b(a, i, p, o), _v_vb(a, i, p, o).
#define TESSERA_TPC_G_LEGACY_CONVERT_WIDE(FD, FV, TD, TV)                                         \
  inline TV v_convert_##FD##_to_##TD##_v_b(const FV& a, const TV& income, bool predicate,        \
                                           bool polarity) {                                      \
    return detail::predicated(v_convert_##FD##_to_##TD##_v(a, SW_RHNE, 0, income), income,       \
                              predicate, polarity, a);                                           \
  }                                                                                              \
  inline TV v_convert_##FD##_to_##TD##_v_vb(const FV& a, const TV& income,                       \
                                            const bool256& predicate, bool polarity) {           \
    return detail::predicated_v(v_convert_##FD##_to_##TD##_v(a, SW_RHNE, 0, income), income,     \
                                predicate, polarity, a);                                         \
  }
TESSERA_TPC_G_LEGACY_CONVERT_WIDE(i8, char256, f32, float64)
TESSERA_TPC_G_LEGACY_CONVERT_WIDE(i8, char256, i32, int64)
TESSERA_TPC_G_LEGACY_CONVERT_WIDE(i8, char256, u32, uint64)
TESSERA_TPC_G_LEGACY_CONVERT_WIDE(i8, char256, i16, short128)
TESSERA_TPC_G_LEGACY_CONVERT_WIDE(i8, char256, u16, ushort128)
TESSERA_TPC_G_LEGACY_CONVERT_WIDE(i8, char256, u8, uchar256)
TESSERA_TPC_G_LEGACY_CONVERT_WIDE(i16, short128, f32, float64)
TESSERA_TPC_G_LEGACY_CONVERT_WIDE(i16, short128, i32, int64)
TESSERA_TPC_G_LEGACY_CONVERT_WIDE(i16, short128, u32, uint64)
TESSERA_TPC_G_LEGACY_CONVERT_WIDE(i16, short128, u16, ushort128)
#undef TESSERA_TPC_G_LEGACY_CONVERT_WIDE
// Same lane count, with a mode: v_convert_f32_to_i32_v(a, rm), _v_b(a, i, rm, p, o), _v_vb.
// (The `_v(a, rm)` spelling is the generic v_convert_<from>_to_<to>_v of intrinsics.h, which
// takes the bare mode.)
#define TESSERA_TPC_G_LEGACY_CONVERT_RM(FD, FV, TD, TV)                                           \
  inline TV v_convert_##FD##_to_##TD##_v_b(const FV& a, const TV& income, int rm,                \
                                           bool predicate, bool polarity) {                      \
    const int sw = detail::legacy_rounding(rm, "v_convert_" #FD "_to_" #TD "_v_b");              \
    return detail::predicated(v_convert_##FD##_to_##TD##_v(a, sw, 0, income), income, predicate, \
                              polarity, a);                                                      \
  }                                                                                              \
  inline TV v_convert_##FD##_to_##TD##_v_vb(const FV& a, const TV& income, int rm,               \
                                            const bool256& predicate, bool polarity) {           \
    const int sw = detail::legacy_rounding(rm, "v_convert_" #FD "_to_" #TD "_v_vb");             \
    return detail::predicated_v(v_convert_##FD##_to_##TD##_v(a, sw, 0, income), income,          \
                                predicate, polarity, a);                                         \
  }
TESSERA_TPC_G_LEGACY_CONVERT_RM(i32, int64, f32, float64)
TESSERA_TPC_G_LEGACY_CONVERT_RM(i32, int64, u32, uint64)
TESSERA_TPC_G_LEGACY_CONVERT_RM(f32, float64, i32, int64)
TESSERA_TPC_G_LEGACY_CONVERT_RM(bf16, bfloat128, i16, short128)
TESSERA_TPC_G_LEGACY_CONVERT_RM(i16, short128, bf16, bfloat128)
TESSERA_TPC_G_LEGACY_CONVERT_RM(u16, ushort128, bf16, bfloat128)
#undef TESSERA_TPC_G_LEGACY_CONVERT_RM
// Narrowing with a mode and a lane: v_convert_f32_to_i16_v(a, i, rm, l), _v_b(a, i, rm, l, p, o),
// _v_vb(a, i, rm, l, p, o), over the current v_convert_f32_to_i16_b(a, l, rm << 16, i, p, o).
#define TESSERA_TPC_G_LEGACY_CONVERT_DOWN(FD, FV, TD, TV, TB)                                     \
  inline TV v_convert_##FD##_to_##TD##_v_b(const FV& a, const TV& income, int rm, int lane,      \
                                           bool predicate, bool polarity) {                      \
    return v_convert_##FD##_to_##TD##_b(                                                         \
        a, lane, detail::legacy_rounding(rm, "v_convert_" #FD "_to_" #TD "_v_b"), income,        \
        predicate, polarity);                                                                    \
  }                                                                                              \
  inline TV v_convert_##FD##_to_##TD##_v_vb(const FV& a, const TV& income, int rm, int lane,     \
                                            const bool256& predicate, bool polarity) {           \
    return v_convert_##FD##_to_##TD##_vb(                                                        \
        a, lane, detail::legacy_rounding(rm, "v_convert_" #FD "_to_" #TD "_v_vb"), income,       \
        TB(predicate), polarity);                                                                \
  }                                                                                              \
  inline TV v_convert_##FD##_to_##TD##_v(const FV& a, const TV& income, int rm, int lane) {      \
    return v_convert_##FD##_to_##TD##_v_b(a, income, rm, lane, true, false);                     \
  }
TESSERA_TPC_G_LEGACY_CONVERT_DOWN(f32, float64, i16, short128, bool128)
TESSERA_TPC_G_LEGACY_CONVERT_DOWN(f32, float64, i8, char256, bool256)
TESSERA_TPC_G_LEGACY_CONVERT_DOWN(i32, int64, bf16, bfloat128, bool64)
#undef TESSERA_TPC_G_LEGACY_CONVERT_DOWN
// i16 -> u8 takes no mode: v_convert_i16_to_u8_v(a, i, l), _v_b(a, i, l, p, o), _v_vb.
inline uchar256 v_convert_i16_to_u8_v_b(const short128& a, const uchar256& income, int lane,
                                        bool predicate, bool polarity) {
  return v_convert_i16_to_u8_b(a, lane, 0, income, predicate, polarity);
}
inline uchar256 v_convert_i16_to_u8_v_vb(const short128& a, const uchar256& income, int lane,
                                         const bool256& predicate, bool polarity) {
  return v_convert_i16_to_u8_vb(a, lane, 0, income, bool128(predicate), polarity);
}
inline uchar256 v_convert_i16_to_u8_v(const short128& a, const uchar256& income, int lane) {
  return v_convert_i16_to_u8_v_b(a, income, lane, true, false);
}

// CONVERT_INT32 / CONVERT_UINT32 / CONVERT_INT16 / CONVERT_UINT16 (tpc-intrinsics.h, Goya and
// Gaudi): shift, round, saturate into lane `lane` of the narrower vector (detail::convert_shift).
// The shift is a char256 (a scalar converts to one). The legacy names of tpc-defs.h take
// (value, shift, income, e_round_* mode, lane): v_convert_int32_to_i8_v_s(acc, 9, y, 0, 2); the
// _v_s and _v_v spellings (scalar or vector shift) are one function here.
#define TESSERA_TPC_G_CONVERT_SHIFT(NAME, FV, TV, PB)                                              \
  inline TV v_convert_##NAME##_b(const FV& value, const char256& shift, const int lane,            \
                                 int switches, const TV& income, bool predicate = true,            \
                                 bool polarity = false) {                                          \
    return detail::predicated(                                                                     \
        detail::convert_shift(value, shift, lane, switches, income, "v_convert_" #NAME "_b"),      \
        income, predicate, polarity, value, shift);                                                \
  }                                                                                                \
  inline TV v_convert_##NAME##_vb(const FV& value, const char256& shift, const int lane,           \
                                  int switches, const TV& income, const PB& predicate,             \
                                  bool polarity = false) {                                         \
    return detail::predicated_v(                                                                   \
        detail::convert_shift(value, shift, lane, switches, income, "v_convert_" #NAME "_vb"),     \
        income, predicate, polarity, value, shift);                                                \
  }                                                                                                \
  inline TV v_convert_##NAME##_v_s_b(const FV& value, const char256& shift, const TV& income,      \
                                     int rm, int lane, bool predicate, bool polarity) {            \
    return v_convert_##NAME##_b(value, shift, lane,                                                \
                                detail::legacy_rounding(rm, "v_convert_" #NAME "_v_s_b"), income,  \
                                predicate, polarity);                                              \
  }                                                                                                \
  inline TV v_convert_##NAME##_v_s_vb(const FV& value, const char256& shift, const TV& income,     \
                                      int rm, int lane, const bool256& predicate, bool polarity) { \
    return v_convert_##NAME##_vb(value, shift, lane,                                               \
                                 detail::legacy_rounding(rm, "v_convert_" #NAME "_v_s_vb"),        \
                                 income, PB(predicate), polarity);                                 \
  }                                                                                                \
  inline TV v_convert_##NAME##_v_s(const FV& value, const char256& shift, const TV& income,        \
                                   int rm, int lane) {                                             \
    return v_convert_##NAME##_v_s_b(value, shift, income, rm, lane, true, false);                  \
  }                                                                                                \
  inline TV v_convert_##NAME##_v_v_b(const FV& value, const char256& shift, const TV& income,      \
                                     int rm, int lane, bool predicate, bool polarity) {            \
    return v_convert_##NAME##_v_s_b(value, shift, income, rm, lane, predicate, polarity);          \
  }                                                                                                \
  inline TV v_convert_##NAME##_v_v_vb(const FV& value, const char256& shift, const TV& income,     \
                                      int rm, int lane, const bool256& predicate, bool polarity) { \
    return v_convert_##NAME##_v_s_vb(value, shift, income, rm, lane, predicate, polarity);         \
  }                                                                                                \
  inline TV v_convert_##NAME##_v_v(const FV& value, const char256& shift, const TV& income,        \
                                   int rm, int lane) {                                             \
    return v_convert_##NAME##_v_s_b(value, shift, income, rm, lane, true, false);                  \
  }
TESSERA_TPC_G_CONVERT_SHIFT(int32_to_i16, int64, short128, bool64)
TESSERA_TPC_G_CONVERT_SHIFT(int32_to_i8, int64, char256, bool64)
TESSERA_TPC_G_CONVERT_SHIFT(uint32_to_u16, uint64, ushort128, bool64)
TESSERA_TPC_G_CONVERT_SHIFT(uint32_to_u8, uint64, uchar256, bool64)
TESSERA_TPC_G_CONVERT_SHIFT(int16_to_i8, short128, char256, bool128)
TESSERA_TPC_G_CONVERT_SHIFT(uint16_to_u8, ushort128, uchar256, bool128)
#undef TESSERA_TPC_G_CONVERT_SHIFT

// The scalar forms run on the SPU; the shift is an int32 (tpc-intrinsics.h uses it for every
// architecture).
#define TESSERA_TPC_G_S_CONVERT_SHIFT(NAME, FS, TS)                                                \
  inline TS s_convert_##NAME(FS value, std::int32_t shift, int switches = 0, TS income = 0,        \
                             bool predicate = true, bool polarity = false) {                       \
    const int rm = detail::shift_rounding_of(switches, "s_convert_" #NAME);                        \
    detail::issue(detail::kSpu);                                                                   \
    return detail::enabled(predicate, polarity)                                                    \
               ? detail::shift_round_saturate<TS>(value, static_cast<int>(shift), rm)              \
               : income;                                                                           \
  }
TESSERA_TPC_G_S_CONVERT_SHIFT(int32_to_i16, std::int32_t, std::int16_t)
TESSERA_TPC_G_S_CONVERT_SHIFT(int32_to_i8, std::int32_t, std::int8_t)
TESSERA_TPC_G_S_CONVERT_SHIFT(uint32_to_u16, std::uint32_t, std::uint16_t)
TESSERA_TPC_G_S_CONVERT_SHIFT(uint32_to_u8, std::uint32_t, std::uint8_t)
TESSERA_TPC_G_S_CONVERT_SHIFT(int16_to_i8, std::int16_t, std::int8_t)
TESSERA_TPC_G_S_CONVERT_SHIFT(uint16_to_u8, std::uint16_t, std::uint8_t)
#undef TESSERA_TPC_G_S_CONVERT_SHIFT

// f32 <-> bf16 over all lanes (tpc-defs.h: two SINGLE_LANE converts, lane 0 and lane 1): the
// float128's v1 holds the even bf16 lanes, v2 the odd ones (Habana's cast_bf16_to_f32).
inline bfloat128 v_convert_f32_to_bf16_all_b(const float128& src, int switches = 0,
                                             const bfloat128& income = bfloat128(),
                                             bool predicate = true, bool polarity = false) {
  detail::check_switches(switches, detail::kConvertSwitches, "v_convert_f32_to_bf16_all_b");
  const int rm = detail::rounding_of(switches, "v_convert_f32_to_bf16_all_b");
  bfloat128 r(detail::no_init_t{});
  for (int i = 0; i < 64; ++i) {
    r.v[2 * i] = detail::convert_lane<tessera::bf16>(src.v1.v[i], rm);
    r.v[2 * i + 1] = detail::convert_lane<tessera::bf16>(src.v2.v[i], rm);
  }
  return detail::predicated(r, income, predicate, polarity, src.v1, src.v2);
}
inline float128 v_convert_bf16_to_f32_all_b(const bfloat128& src, int switches = 0,
                                            const float128& income = float128(),
                                            bool predicate = true, bool polarity = false) {
  detail::check_switches(switches, detail::kConvertSwitches, "v_convert_bf16_to_f32_all_b");
  if (!detail::enabled(predicate, polarity)) {
    float128 r = income;
    r.v1 = detail::on_vpu([&] { return r.v1; }, src);
    r.v2.ready = r.v1.ready;
    return r;
  }
  float128 r;
  for (int i = 0; i < 64; ++i) {
    r.v1.v[i] = static_cast<float>(src.v[2 * i]);
    r.v2.v[i] = static_cast<float>(src.v[2 * i + 1]);
  }
  r.v1 = detail::on_vpu([&] { return r.v1; }, src);
  r.v2.ready = r.v1.ready;
  return r;
}
// CONVERT f32 -> bf16 with SINGLE_LANE and lane 0 (tpc-intrinsics.h
// v_convert_f32_to_bf16_single_b): the 64 results go to the even lanes 0, 2, ..., 126 and the odd
// lanes keep income, so a second convert of the odd source lanes can interleave with it.
inline bfloat128 v_convert_f32_to_bf16_single_b(const float64& src, int switches,
                                                const bfloat128& income, bool predicate = true,
                                                bool polarity = false) {
  detail::check_switches(switches, detail::kConvertSwitches, "v_convert_f32_to_bf16_single_b");
  const int rm = detail::rounding_of(switches, "v_convert_f32_to_bf16_single_b");
  bfloat128 r = income;
  for (int i = 0; i < 64; ++i) r.v[2 * i] = detail::convert_lane<tessera::bf16>(src.v[i], rm);
  return detail::predicated(r, income, predicate, polarity, src);
}
inline bfloat128 v_convert_f32_to_bf16_single_vb(const float64& src, int switches,
                                                 const bfloat128& income, const bool128& predicate,
                                                 bool polarity = false) {
  detail::check_switches(switches, detail::kConvertSwitches, "v_convert_f32_to_bf16_single_vb");
  const int rm = detail::rounding_of(switches, "v_convert_f32_to_bf16_single_vb");
  bfloat128 r = income;
  for (int i = 0; i < 64; ++i) r.v[2 * i] = detail::convert_lane<tessera::bf16>(src.v[i], rm);
  return detail::predicated_v(r, income, predicate, polarity, src);
}
// The legacy names of the same instruction, as tpc-defs.h's intrinsic aliases spell them
// (HabanaAI/tpc_llvm, clang/lib/Headers/tpc-defs.h): `rm` is an e_round_* mode, which the alias
// shifts into the switches (rm << 16, so e_round_down gives SW_RD = 3 << 16).
inline bfloat128 v_convert_f32_to_bf16_single_lane_v_b(const float64& a, const bfloat128& income,
                                                       int rm, bool predicate, bool polarity) {
  return v_convert_f32_to_bf16_single_b(
      a, detail::legacy_rounding(rm, "v_convert_f32_to_bf16_single_lane_v_b"), income, predicate,
      polarity);
}
inline bfloat128 v_convert_f32_to_bf16_single_lane_v_vb(const float64& a, const bfloat128& income,
                                                        int rm, const bool256& predicate,
                                                        bool polarity) {
  return v_convert_f32_to_bf16_single_vb(
      a, detail::legacy_rounding(rm, "v_convert_f32_to_bf16_single_lane_v_vb"), income,
      bool128(predicate), polarity);
}
inline bfloat128 v_convert_f32_to_bf16_single_lane_v(const float64& a, int rm) {
  return v_convert_f32_to_bf16_single_lane_v_b(a, bfloat128(), rm, true, false);
}
// tpc-defs.h's legacy all-lanes pair: `v_convert_f32_to_bf16_av(a, rm)` and
// `av_convert_bf16_to_f32_v(a)` over the ALL_LANES converts.
inline bfloat128 v_convert_f32_to_bf16_av_b(const float128& a, const bfloat128& income, int rm,
                                            bool predicate, bool polarity) {
  return v_convert_f32_to_bf16_all_b(a, detail::legacy_rounding(rm, "v_convert_f32_to_bf16_av_b"),
                                     income, predicate, polarity);
}
inline bfloat128 v_convert_f32_to_bf16_av(const float128& a, int rm) {
  return v_convert_f32_to_bf16_av_b(a, bfloat128(), rm, true, false);
}
// The vector-predicated all-lanes converts: tpc-defs.h defines the f32 -> bf16 one as the convert
// followed by a predicated MOV, which is what this does (one more VPU issue).
inline bfloat128 v_convert_f32_to_bf16_all_vb(const float128& src, int switches,
                                              const bfloat128& income, const bool128& predicate,
                                              bool polarity = false) {
  return v_bf16_mov_vb(v_convert_f32_to_bf16_all_b(src, switches, income), 0, income, predicate,
                       polarity);
}
inline float128 v_convert_bf16_to_f32_all_vb(const bfloat128& src, int switches,
                                             const float128& income, const bool128& predicate,
                                             bool polarity = false) {
  float128 r = v_convert_bf16_to_f32_all_b(src, switches, income);
  for (int i = 0; i < 64; ++i) {  // bf16 lane 2i predicates v1's lane i, 2i + 1 v2's
    if (!detail::enabled(predicate.lane<128>(2 * i), polarity)) r.v1.v[i] = income.v1.v[i];
    if (!detail::enabled(predicate.lane<128>(2 * i + 1), polarity)) r.v2.v[i] = income.v2.v[i];
  }
  r.v1.ready = r.v2.ready = std::max({r.v1.ready, predicate.ready, income.v1.ready});
  return r;
}
inline bfloat128 v_convert_f32_to_bf16_av_vb(const float128& a, const bfloat128& income, int rm,
                                             const bool256& predicate, bool polarity) {
  return v_convert_f32_to_bf16_all_vb(
      a, detail::legacy_rounding(rm, "v_convert_f32_to_bf16_av_vb"), income, bool128(predicate),
      polarity);
}
inline float128 av_convert_bf16_to_f32_v_vb(const bfloat128& a, const float128& income,
                                            const bool256& predicate, bool polarity) {
  return v_convert_bf16_to_f32_all_vb(a, 0, income, bool128(predicate), polarity);
}
inline float128 av_convert_bf16_to_f32_v_b(const bfloat128& a, const float128& income,
                                           bool predicate, bool polarity) {
  return v_convert_bf16_to_f32_all_b(a, 0, income, predicate, polarity);
}
inline float128 av_convert_bf16_to_f32_v(const bfloat128& a) {
  return v_convert_bf16_to_f32_all_b(a);
}

// MAC with the ACC_F32 switch (tpc-intrinsics.h `v_bf16_mac_acc32_b`): bf16 products summed
// into an f32 float128, the even lanes into v1 and the odd ones into v2, the layout the all-lanes
// converts use, so `v_convert_f32_to_bf16_all_b(acc)` gives the lanes back in order (Habana's
// filter_fwd_2d_bf16). SW_NEG subtracts the products.
inline float128 v_bf16_mac_acc32_b(const bfloat128& a, const bfloat128& b,
                                   const float128& accumulator, int switches = 0,
                                   bool predicate = true, bool polarity = false) {
  detail::check_switches(switches, SW_NEG, "v_bf16_mac_acc32_b");
  float128 r = accumulator;
  if (detail::enabled(predicate, polarity)) {
    const float sign = (switches & SW_NEG) ? -1.0f : 1.0f;
    for (int i = 0; i < 64; ++i) {
      r.v1.v[i] = std::fma(sign * static_cast<float>(a.v[2 * i]), static_cast<float>(b.v[2 * i]),
                           accumulator.v1.v[i]);
      r.v2.v[i] = std::fma(sign * static_cast<float>(a.v[2 * i + 1]),
                           static_cast<float>(b.v[2 * i + 1]), accumulator.v2.v[i]);
    }
  }
  r.v1.ready = detail::vpu_issue(detail::ready_of(a, b, accumulator.v1, accumulator.v2));
  r.v2.ready = r.v1.ready;
  return r;
}
inline float128 v_bf16_mac_acc32_vb(const bfloat128& a, const bfloat128& b,
                                    const float128& accumulator, int switches,
                                    const bool128& predicate, bool polarity = false) {
  float128 r = v_bf16_mac_acc32_b(a, b, accumulator, switches);
  for (int i = 0; i < 64; ++i) {  // lane 2i of the bf16 predicate for v1, 2i + 1 for v2
    if (!detail::enabled(predicate.lane<128>(2 * i), polarity)) r.v1.v[i] = accumulator.v1.v[i];
    if (!detail::enabled(predicate.lane<128>(2 * i + 1), polarity))
      r.v2.v[i] = accumulator.v2.v[i];
  }
  r.v1.ready = r.v2.ready = std::max(r.v1.ready, predicate.ready);
  return r;
}

// ---- MAC of 16-bit integers into 32-bit accumulators (tpc-intrinsics.h MAC, Gaudi set) ----
// `v_i16_mac_b` sums short128 products into an int128 pair, lane 2i into v1 and 2i + 1 into v2,
// the layout of the ACC_F32 form above. SW_SAT clamps to the accumulator's range, else it wraps;
// on Gaudi the header allows SW_NEG for float types only, so the integer forms reject it. The
// 8-bit forms (`v_i8_mac_b` into int256) are declared for Goya and Greco, not for Gaudi.
namespace detail {
template <typename T>
inline T mac_lane(T acc, long long product, int switches) {
  const long long x = static_cast<long long>(acc) + product;
  if (switches & SW_SAT)
    return static_cast<T>(
        std::clamp<long long>(x, std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max()));
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(x));
}
template <typename Acc, typename Src, typename Enabled>
inline Acc int_mac_wide(const Src& a, const Src& b, const Acc& acc, int switches,
                        Enabled&& lane_enabled) {
  using T = lane_t<decltype(acc.v1)>;
  Acc r = acc;
  for (int i = 0; i < Src::lanes; ++i) {
    if (!lane_enabled(i)) continue;
    T& dst = (i % 2 == 0 ? r.v1 : r.v2).v[i / 2];
    dst =
        mac_lane<T>(dst, static_cast<long long>(a.v[i]) * static_cast<long long>(b.v[i]), switches);
  }
  return r;
}
}  // namespace detail
#define TESSERA_TPC_G_INT_MAC(D, SRC, ACC, B, S, SACC)                                           \
  inline ACC v_##D##_mac_b(const SRC& a, const SRC& b, const ACC& accumulator, int switches = 0, \
                           bool predicate = true, bool polarity = false) {                       \
    detail::check_switches(switches, SW_SAT, "v_" #D "_mac_b");                                  \
    const bool on = detail::enabled(predicate, polarity);                                        \
    return detail::timed_pair_on_vpu(                                                            \
        detail::int_mac_wide(a, b, accumulator, switches, [on](int) { return on; }), a, b,       \
        accumulator.v1, accumulator.v2);                                                         \
  }                                                                                              \
  inline ACC v_##D##_mac_vb(const SRC& a, const SRC& b, const ACC& accumulator, int switches,    \
                            const B& predicate, bool polarity = false) {                         \
    detail::check_switches(switches, SW_SAT, "v_" #D "_mac_vb");                                 \
    return detail::timed_pair_on_vpu(                                                            \
        detail::int_mac_wide(                                                                    \
            a, b, accumulator, switches,                                                         \
            [&](int i) { return detail::enabled(predicate.lane<SRC::lanes>(i), polarity); }),    \
        a, b, accumulator.v1, accumulator.v2, predicate);                                        \
  }                                                                                              \
  inline SACC s_##D##_mac(S a, S b, SACC accumulator, int switches = 0, bool predicate = true,   \
                          bool polarity = false) {                                               \
    detail::check_switches(switches, SW_SAT, "s_" #D "_mac");                                    \
    detail::issue(detail::kSpu);                                                                 \
    if (!detail::enabled(predicate, polarity)) return accumulator;                               \
    return detail::mac_lane<SACC>(                                                               \
        accumulator, static_cast<long long>(a) * static_cast<long long>(b), switches);           \
  }
TESSERA_TPC_G_INT_MAC(i16, short128, int128, bool128, std::int16_t, std::int32_t)
TESSERA_TPC_G_INT_MAC(u16, ushort128, uint128, bool128, std::uint16_t, std::uint32_t)
#undef TESSERA_TPC_G_INT_MAC

// Scalar float MACs on the SPU; SW_NEG subtracts the product. bf16 rounds the f32 result to
// nearest even, as the vector bf16 MAC does; _acc32 keeps the f32 sum (ACC_F32).
inline float s_f32_mac(float a, float b, float accumulator, int switches = 0, bool predicate = true,
                       bool polarity = false) {
  detail::check_switches(switches, SW_NEG, "s_f32_mac");
  detail::issue(detail::kSpu);
  if (!detail::enabled(predicate, polarity)) return accumulator;
  return std::fma((switches & SW_NEG) ? -a : a, b, accumulator);
}
inline float s_bf16_mac_acc32(bf16 a, bf16 b, float accumulator, int switches = 0,
                              bool predicate = true, bool polarity = false) {
  detail::check_switches(switches, SW_NEG, "s_bf16_mac_acc32");
  return s_f32_mac(static_cast<float>(a), static_cast<float>(b), accumulator, switches, predicate,
                   polarity);
}
inline bf16 s_bf16_mac(bf16 a, bf16 b, bf16 accumulator, int switches = 0, bool predicate = true,
                       bool polarity = false) {
  detail::check_switches(switches, SW_NEG, "s_bf16_mac");
  if (!detail::enabled(predicate, polarity)) {
    detail::issue(detail::kSpu);
    return accumulator;
  }
  return bf16(s_f32_mac(static_cast<float>(a), static_cast<float>(b),
                        static_cast<float>(accumulator), switches));
}

// ---- floating-point helpers ----
inline float64 v_f32_fclass_b(const float64& a, int switches = 0, const float64& income = float64(),
                              bool predicate = true, bool polarity = false) {
  detail::check_switches(switches, 0, "v_f32_fclass_b");
  return detail::predicated(detail::map1(a, [](float x) { return detail::fclass_bits(x); }), income,
                            predicate, polarity, a);
}
inline float64 v_f32_fclass_vb(const float64& a, int switches, const float64& income,
                               const bool64& predicate, bool polarity = false) {
  detail::check_switches(switches, 0, "v_f32_fclass_vb");
  return detail::predicated_v(detail::map1(a, [](float x) { return detail::fclass_bits(x); }),
                              income, predicate, polarity, a);
}
// FORM_FP_NUM with the exponent taken from a's exponent field (the form without _ie_; Habana's
// log_bf16 in kernel_config.h writes it as SIGN(Src2) | EXPONENT(Src1) | MANTISSA(Src3)).
namespace detail {
template <typename V, typename Bits>
inline V form_fp_num(const V& a, const V& b, const V& c, int switches, Bits sign_mask,
                     Bits exp_mask, const char* intrinsic) {
  check_switches(switches, SW_FORCE_SIGN0 | SW_FORCE_SIGN1 | SW_SIGN_LSB, intrinsic);
  V r(no_init_t{});
  for (int i = 0; i < V::lanes; ++i) {
    const auto bits = [](const auto& x) { return std::bit_cast<Bits>(x); };
    Bits sign = bits(b.v[i]) & sign_mask;
    if (switches & SW_FORCE_SIGN0) sign = 0;
    if (switches & SW_FORCE_SIGN1) sign = sign_mask;
    if (switches & SW_SIGN_LSB) sign = (bits(b.v[i]) & 1u) ? sign_mask : Bits(0);
    const Bits mantissa_mask = static_cast<Bits>(~(sign_mask | exp_mask));
    r.v[i] = std::bit_cast<lane_t<V>>(
        static_cast<Bits>(sign | (bits(a.v[i]) & exp_mask) | (bits(c.v[i]) & mantissa_mask)));
  }
  return r;
}
}  // namespace detail
inline float64 v_f32_form_fp_num_b(const float64& a, const float64& b, const float64& c,
                                   int switches = 0, const float64& income = float64(),
                                   bool predicate = true, bool polarity = false) {
  return detail::predicated(
      detail::form_fp_num(a, b, c, switches, 0x80000000u, 0x7f800000u, "v_f32_form_fp_num_b"),
      income, predicate, polarity, a, b, c);
}
inline bfloat128 v_bf16_form_fp_num_b(const bfloat128& a, const bfloat128& b, const bfloat128& c,
                                      int switches = 0, const bfloat128& income = bfloat128(),
                                      bool predicate = true, bool polarity = false) {
  return detail::predicated(detail::form_fp_num(a, b, c, switches, std::uint16_t{0x8000},
                                                std::uint16_t{0x7f80}, "v_bf16_form_fp_num_b"),
                            income, predicate, polarity, a, b, c);
}
// PREFETCH (tpc-intrinsics.h "Cache"): brings global data into the scalar cache, which Tessera
// does not model (docs/targets/tpc.md, "Not modeled"), so it changes no result: one load-slot
// issue.
inline void prefetch(const global_address&, int switches = 0, bool predicate = true,
                     bool polarity = false) {
  detail::check_switches(switches, 0, "prefetch");
  if (detail::enabled(predicate, polarity)) detail::issue(detail::kLoad);
}
// EXTRACT_EXP (tpc-intrinsics.h): the exponent of each element, non-biased (signed) by default,
// the raw biased field with SW_BIASED.
enum : int { SW_BIASED = 0x1 << 0 };
namespace detail {
template <typename F>
inline int extract_exp(F x, int switches) {
  std::uint32_t bits;
  if constexpr (std::is_same_v<F, float>)
    bits = std::bit_cast<std::uint32_t>(x);
  else
    bits = static_cast<std::uint32_t>(static_cast<const tessera::bf16&>(x).bits) << 16;
  const int field = static_cast<int>((bits >> 23) & 0xffu);
  return (switches & SW_BIASED) ? field : field - 127;
}
}  // namespace detail
#define TESSERA_TPC_G_EXTRACT_EXP(D, V, IV, B, S, IS)                                             \
  inline IV v_##D##_extract_exp_b(const V& a, int switches = 0, const IV& income = IV(),          \
                                  bool predicate = true, bool polarity = false) {                 \
    detail::check_switches(switches, SW_BIASED, "v_" #D "_extract_exp_b");                        \
    IV r(detail::no_init_t{});                                                                    \
    for (int i = 0; i < V::lanes; ++i)                                                            \
      r.v[i] = static_cast<IS>(detail::extract_exp(a.v[i], switches));                            \
    return detail::predicated(r, income, predicate, polarity, a);                                 \
  }                                                                                               \
  inline IV v_##D##_extract_exp_vb(const V& a, int switches, const IV& income, const B& predicate, \
                                   bool polarity = false) {                                       \
    detail::check_switches(switches, SW_BIASED, "v_" #D "_extract_exp_vb");                       \
    IV r(detail::no_init_t{});                                                                    \
    for (int i = 0; i < V::lanes; ++i)                                                            \
      r.v[i] = static_cast<IS>(detail::extract_exp(a.v[i], switches));                            \
    return detail::predicated_v(r, income, predicate, polarity, a);                               \
  }                                                                                               \
  inline IS s_##D##_extract_exp(S a, int switches = 0, IS income = IS(), bool predicate = true,   \
                                bool polarity = false) {                                          \
    detail::check_switches(switches, SW_BIASED, "s_" #D "_extract_exp");                          \
    detail::issue(detail::kSpu);                                                                  \
    return detail::enabled(predicate, polarity) ? static_cast<IS>(detail::extract_exp(a, switches)) \
                                                : income;                                         \
  }
TESSERA_TPC_G_EXTRACT_EXP(f32, float64, int64, bool64, float, std::int32_t)
TESSERA_TPC_G_EXTRACT_EXP(bf16, bfloat128, short128, bool128, bf16, std::int16_t)
#undef TESSERA_TPC_G_EXTRACT_EXP

// Scalar CONVERT on the SPU (tpc-intrinsics.h `float s_convert_i32_to_f32(int32_t src, int
// switches=0, float income={}, bool predicate=1, bool polarity=0)`): the lane conversion of the
// vector forms, rounding by the switches' mode, integers saturating. The pairs are those
// tpc-defs.h aliases; its legacy spellings follow: `s_convert_f32_to_i32_s(src, rm)` and
// `_s_b(src, income, rm, p, o)` shift an e_round_* mode into the switches, the exact ones
// (`s_convert_i8_to_f32_s(src)`, `_s_b(src, income, p, o)`) take none.
#define TESSERA_TPC_G_S_CONVERT(FD, FS, TD, TS)                                                    \
  inline TS s_convert_##FD##_to_##TD(FS src, int switches = 0, TS income = TS(),                   \
                                     bool predicate = true, bool polarity = false) {               \
    detail::check_switches(switches, detail::kConvertSwitches, "s_convert_" #FD "_to_" #TD);       \
    const int rm = detail::rounding_of(switches, "s_convert_" #FD "_to_" #TD);                     \
    detail::issue(detail::kSpu);                                                                   \
    if (!detail::enabled(predicate, polarity)) return income;                                      \
    return TS(detail::convert_lane<detail::lane_t<detail::vector_of_t<TS>>>(                       \
        static_cast<double>(static_cast<detail::lane_math_of_t<FS>>(src)), rm));                   \
  }
#define TESSERA_TPC_G_S_CONVERT_EXACT(FD, FS, TD, TS)                                              \
  TESSERA_TPC_G_S_CONVERT(FD, FS, TD, TS)                                                          \
  inline TS s_convert_##FD##_to_##TD##_s_b(FS src, TS income, bool predicate, bool polarity) {    \
    return s_convert_##FD##_to_##TD(src, 0, income, predicate, polarity);                         \
  }                                                                                                \
  inline TS s_convert_##FD##_to_##TD##_s(FS src) {                                                 \
    return s_convert_##FD##_to_##TD(src);                                                          \
  }
#define TESSERA_TPC_G_S_CONVERT_RM(FD, FS, TD, TS)                                                 \
  TESSERA_TPC_G_S_CONVERT(FD, FS, TD, TS)                                                          \
  inline TS s_convert_##FD##_to_##TD##_s_b(FS src, TS income, int rm, bool predicate,            \
                                           bool polarity) {                                        \
    return s_convert_##FD##_to_##TD(                                                               \
        src, detail::legacy_rounding(rm, "s_convert_" #FD "_to_" #TD "_s_b"), income, predicate,   \
        polarity);                                                                                 \
  }                                                                                                \
  inline TS s_convert_##FD##_to_##TD##_s(FS src, int rm) {                                         \
    return s_convert_##FD##_to_##TD##_s_b(src, TS(), rm, true, false);                             \
  }
namespace detail {
template <typename S> struct vector_of;
template <> struct vector_of<float> { using type = float64; };
template <> struct vector_of<bf16> { using type = bfloat128; };
template <> struct vector_of<std::int32_t> { using type = int64; };
template <> struct vector_of<std::uint32_t> { using type = uint64; };
template <> struct vector_of<std::int16_t> { using type = short128; };
template <> struct vector_of<std::uint16_t> { using type = ushort128; };
template <> struct vector_of<std::int8_t> { using type = char256; };
template <> struct vector_of<std::uint8_t> { using type = uchar256; };
template <typename S> using vector_of_t = typename vector_of<S>::type;
template <typename S> using lane_math_of_t = std::conditional_t<std::is_same_v<S, bf16>, float, S>;
}  // namespace detail
TESSERA_TPC_G_S_CONVERT_EXACT(i8, std::int8_t, f32, float)
TESSERA_TPC_G_S_CONVERT_EXACT(i8, std::int8_t, bf16, bf16)
TESSERA_TPC_G_S_CONVERT_EXACT(i8, std::int8_t, i32, std::int32_t)
TESSERA_TPC_G_S_CONVERT_EXACT(i8, std::int8_t, u32, std::uint32_t)
TESSERA_TPC_G_S_CONVERT_EXACT(i8, std::int8_t, i16, std::int16_t)
TESSERA_TPC_G_S_CONVERT_EXACT(i8, std::int8_t, u16, std::uint16_t)
TESSERA_TPC_G_S_CONVERT_EXACT(i8, std::int8_t, u8, std::uint8_t)
TESSERA_TPC_G_S_CONVERT_EXACT(u8, std::uint8_t, f32, float)
TESSERA_TPC_G_S_CONVERT_EXACT(u8, std::uint8_t, bf16, bf16)
TESSERA_TPC_G_S_CONVERT_EXACT(u8, std::uint8_t, i32, std::int32_t)
TESSERA_TPC_G_S_CONVERT_EXACT(u8, std::uint8_t, u32, std::uint32_t)
TESSERA_TPC_G_S_CONVERT_EXACT(u8, std::uint8_t, i16, std::int16_t)
TESSERA_TPC_G_S_CONVERT_EXACT(u8, std::uint8_t, u16, std::uint16_t)
TESSERA_TPC_G_S_CONVERT_EXACT(u8, std::uint8_t, i8, std::int8_t)
TESSERA_TPC_G_S_CONVERT_EXACT(i16, std::int16_t, f32, float)
TESSERA_TPC_G_S_CONVERT_RM(i16, std::int16_t, bf16, bf16)
TESSERA_TPC_G_S_CONVERT_EXACT(i16, std::int16_t, i32, std::int32_t)
TESSERA_TPC_G_S_CONVERT_EXACT(i16, std::int16_t, u32, std::uint32_t)
TESSERA_TPC_G_S_CONVERT_EXACT(i16, std::int16_t, u16, std::uint16_t)
TESSERA_TPC_G_S_CONVERT_EXACT(i16, std::int16_t, i8, std::int8_t)
TESSERA_TPC_G_S_CONVERT_EXACT(i16, std::int16_t, u8, std::uint8_t)
TESSERA_TPC_G_S_CONVERT_RM(u16, std::uint16_t, bf16, bf16)
TESSERA_TPC_G_S_CONVERT_RM(i32, std::int32_t, f32, float)
TESSERA_TPC_G_S_CONVERT_RM(i32, std::int32_t, bf16, bf16)
TESSERA_TPC_G_S_CONVERT_RM(i32, std::int32_t, u32, std::uint32_t)
TESSERA_TPC_G_S_CONVERT_EXACT(bf16, bf16, f32, float)
TESSERA_TPC_G_S_CONVERT_RM(bf16, bf16, i16, std::int16_t)
TESSERA_TPC_G_S_CONVERT_RM(bf16, bf16, i8, std::int8_t)
TESSERA_TPC_G_S_CONVERT_RM(f32, float, bf16, bf16)
TESSERA_TPC_G_S_CONVERT_RM(f32, float, i32, std::int32_t)
TESSERA_TPC_G_S_CONVERT_RM(f32, float, i16, std::int16_t)
TESSERA_TPC_G_S_CONVERT_RM(f32, float, i8, std::int8_t)
#undef TESSERA_TPC_G_S_CONVERT_RM
#undef TESSERA_TPC_G_S_CONVERT_EXACT
#undef TESSERA_TPC_G_S_CONVERT

// ---- index registers (i_*): int5 arithmetic on the dimensions `dimmask` selects ----
namespace detail {
// One SPU instruction on an index register: `lane(d)` on the dimensions `dimmask` selects, the
// income elsewhere and when the predicate is off.
template <typename F>
inline int5 index_op(const int5& income, int dimmask, int switches, bool predicate, bool polarity,
                     const char* name, F lane) {
  check_switches(switches, 0, name);
  issue(kSpu);
  if (!enabled(predicate, polarity)) return income;
  int5 r = income;
  for (int d = 0; d < 5; ++d)
    if ((dimmask >> d) & 1) r.v[d] = lane(d);
  return r;
}
}  // namespace detail
#define TESSERA_TPC_G_INDEX(NAME, EXPR)                                                        \
  inline int5 i_i32_##NAME(const int5& a, const int5& b, int dimmask, int switches,            \
                           const int5& income, bool predicate = true, bool polarity = false) { \
    return detail::index_op(income, dimmask, switches, predicate, polarity, "i_i32_" #NAME,    \
                            [&](int d) { return (EXPR); });                                    \
  }
TESSERA_TPC_G_INDEX(add, a.v[d] + b.v[d])
TESSERA_TPC_G_INDEX(sub, a.v[d] - b.v[d])
TESSERA_TPC_G_INDEX(mul, a.v[d] * b.v[d])
TESSERA_TPC_G_INDEX(min, b.v[d] < a.v[d] ? b.v[d] : a.v[d])
TESSERA_TPC_G_INDEX(max, a.v[d] < b.v[d] ? b.v[d] : a.v[d])
TESSERA_TPC_G_INDEX(and, a.v[d] & b.v[d])
TESSERA_TPC_G_INDEX(or, a.v[d] | b.v[d])
TESSERA_TPC_G_INDEX(xor, a.v[d] ^ b.v[d])
TESSERA_TPC_G_INDEX(shl, detail::op_shl{}(a.v[d], b.v[d]))
TESSERA_TPC_G_INDEX(shr, detail::op_shr{}(a.v[d], b.v[d]))
#undef TESSERA_TPC_G_INDEX
#define TESSERA_TPC_G_INDEX_UNARY(NAME, EXPR)                                               \
  inline int5 i_i32_##NAME(const int5& a, int dimmask, int switches, const int5& income,    \
                           bool predicate = true, bool polarity = false) {                  \
    return detail::index_op(income, dimmask, switches, predicate, polarity, "i_i32_" #NAME, \
                            [&](int d) { return (EXPR); });                                 \
  }
TESSERA_TPC_G_INDEX_UNARY(not, ~a.v[d])
TESSERA_TPC_G_INDEX_UNARY(abs, detail::abs_lane(a.v[d]))
#undef TESSERA_TPC_G_INDEX_UNARY
// A scalar operand of an int5 op is splatted to every dimension, as TPC-C converts a scalar to
// a vector (`i_i32_add(1, coords, 1 << 1, 0, coords, pred)` in Habana's matrix_mul).
#define TESSERA_TPC_G_INDEX_SCALAR(NAME)                                                          \
  inline int5 i_i32_##NAME(int a, const int5& b, int dimmask, int switches, const int5& income,   \
                           bool predicate = true, bool polarity = false) {                        \
    return i_i32_##NAME(int5{{a, a, a, a, a}}, b, dimmask, switches, income, predicate, polarity); \
  }                                                                                               \
  inline int5 i_i32_##NAME(const int5& a, int b, int dimmask, int switches, const int5& income,   \
                           bool predicate = true, bool polarity = false) {                        \
    return i_i32_##NAME(a, int5{{b, b, b, b, b}}, dimmask, switches, income, predicate, polarity); \
  }
TESSERA_TPC_G_INDEX_SCALAR(add)
TESSERA_TPC_G_INDEX_SCALAR(sub)
TESSERA_TPC_G_INDEX_SCALAR(mul)
TESSERA_TPC_G_INDEX_SCALAR(min)
TESSERA_TPC_G_INDEX_SCALAR(max)
#undef TESSERA_TPC_G_INDEX_SCALAR
inline int5 i_i32_mov(int a, int dimmask, int switches, const int5& income, bool predicate = true,
                      bool polarity = false) {
  detail::check_switches(switches, 0, "i_i32_mov");
  detail::issue(detail::kSpu);
  if (!detail::enabled(predicate, polarity)) return income;
  int5 r = income;
  for (int d = 0; d < 5; ++d)
    if ((dimmask >> d) & 1) r.v[d] = a;
  return r;
}

// ---- global addresses (GEN_ADDR): address arithmetic, never a fault ----
inline global_address gen_addr(const int5& inx, tensor t, int switches = 0,
                               const global_address& income = global_address(),
                               bool predicate = true, bool polarity = false) {
  detail::check_switches(switches, 0, "gen_addr");
  if (!detail::enabled(predicate, polarity)) return income;
  return detail::gen_addr(inx, t, "gen_addr");
}

// ---- predicate logic (tpc-intrinsics.h AND / OR / XOR / NOT / MOV on i1): scalar predicates on
// the SPU, bool256 on the VPU ----
#define TESSERA_TPC_G_S_I1(NAME, EXPR)                                                         \
  inline bool s_i1_##NAME(bool a, bool b, int switches = 0, bool income = false,               \
                          bool predicate = true, bool polarity = false) {                      \
    detail::check_switches(switches, 0, "s_i1_" #NAME);                                        \
    detail::issue(detail::kSpu);                                                               \
    return detail::enabled(predicate, polarity) ? (EXPR) : income;                             \
  }                                                                                            \
  inline bool256 v_i1_##NAME##_b(const bool256& a, const bool256& b, int switches = 0,         \
                                 const bool256& income = {}, bool predicate = true,            \
                                 bool polarity = false) {                                      \
    detail::check_switches(switches, 0, "v_i1_" #NAME "_b");                                   \
    return detail::on_vpu(                                                                     \
        [&] {                                                                                  \
          if (!detail::enabled(predicate, polarity)) return income;                            \
          bool256 r;                                                                           \
          for (int i = 0; i < 256; ++i) r.b[i] = static_cast<std::uint8_t>(EXPR_V(a.b[i], b.b[i])); \
          return r;                                                                            \
        },                                                                                     \
        a, b, income);                                                                         \
  }
#define EXPR_V(x, y) ((x) & (y))
TESSERA_TPC_G_S_I1(and, a && b)
#undef EXPR_V
#define EXPR_V(x, y) ((x) | (y))
TESSERA_TPC_G_S_I1(or, a || b)
#undef EXPR_V
#define EXPR_V(x, y) ((x) ^ (y))
TESSERA_TPC_G_S_I1(xor, a != b)
#undef EXPR_V
#undef TESSERA_TPC_G_S_I1
inline bool s_i1_not(bool a, int switches = 0, bool income = false, bool predicate = true,
                     bool polarity = false) {
  detail::check_switches(switches, 0, "s_i1_not");
  detail::issue(detail::kSpu);
  return detail::enabled(predicate, polarity) ? !a : income;
}
inline bool s_i1_mov(bool a, int switches = 0, bool income = false, bool predicate = true,
                     bool polarity = false) {
  detail::check_switches(switches, 0, "s_i1_mov");
  detail::issue(detail::kSpu);
  return detail::enabled(predicate, polarity) ? a : income;
}
inline bool256 v_i1_not_b(const bool256& a, int switches = 0, const bool256& income = {},
                          bool predicate = true, bool polarity = false) {
  detail::check_switches(switches, 0, "v_i1_not_b");
  return detail::on_vpu([&] { return detail::enabled(predicate, polarity) ? ~a : income; }, a,
                        income);
}
inline bool256 v_i1_mov_b(const bool256& a, int switches = 0, const bool256& income = {},
                          bool predicate = true, bool polarity = false) {
  detail::check_switches(switches, 0, "v_i1_mov_b");
  return detail::on_vpu([&] { return detail::enabled(predicate, polarity) ? a : income; }, a,
                        income);
}

// ---- bool logic, legacy spelling of spec 000 / tpc-defs.h ----
inline bool256 bv_b_and_bv_bv(const bool256& a, const bool256& b) {
  return a & b;
}
inline bool256 bv_b_or_bv_bv(const bool256& a, const bool256& b) {
  return a | b;
}
inline bool256 bv_b_xor_bv_bv(const bool256& a, const bool256& b) {
  return a ^ b;
}
inline bool256 bv_b_not_bv(const bool256& a) {
  return ~a;
}

// MOV_DUAL_GROUP write-enable helpers of tpc-defs.h.
#define MkWr(l, u) \
  (((l) ? ::tessera::tpc::SW_WR_LOWER_GROUP : 0) | ((u) ? ::tessera::tpc::SW_WR_UPPER_GROUP : 0))
#define MkRMW(dt, op, rmw, dl) ((dt) | ((op) << 4) | ((rmw) << 6) | ((dl) << 7))

}  // namespace tessera::tpc

#include "tessera/targets/tpc/api/intrinsics_bits.h"  // ASH, BREV, moves, core registers
// PACK, SW_PACK, UDIV_4STEP and the LFSR access, with semantics from Habana's compiler.
#include "tessera/targets/tpc/api/intrinsics_derived.h"
#include "tessera/targets/tpc/api/intrinsics_convert.h"  // the high-level converts
// The special-function lookups (GET_LUT_ENTRY_AND_INTERVAL_START, LOOKUP_1C / _2C).
#include "tessera/targets/tpc/api/intrinsics_lut.h"  // IWYU pragma: export
#include "tessera/targets/tpc/api/intrinsics_local.h"  // NOLINT(misc-header-include-cycle)
