// Tessera's special-function tables for LOOKUP_1C / LOOKUP_2C (intrinsics_lut.h): for each function
// id whose evaluation form a public kernel shows, the function each entry approximates (per the
// interval decomposition of intrinsics_lut.h and the shift that form uses) and a polynomial per
// interval fitted here, at first use, from the C++ math library. Habana's own coefficients are not
// public; these are a fit of the same contract, so results match the mathematical function within
// the fit's tolerance, not Habana's hardware bit for bit.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "tessera/core/dtype.h"
#include "tessera/core/error.h"
#include "tessera/targets/tpc/api/intrinsics_lut.h"

namespace tessera::tpc::detail {
namespace {

// ---- the functions the tables hold (each as its interval sees it) ----
double sin_over_x(double x) {
  return x == 0 ? 1.0 : std::sin(x) / x;
}
double cosine(double x) {
  return std::cos(x);
}
double tanh_over_x(double x) {
  return x == 0 ? 1.0 : std::tanh(x) / x;
}
double tanh_of(double x) {
  return std::tanh(x);
}
double rsqrt(double x) {
  return 1.0 / std::sqrt(x);
}
double sqrt_of(double x) {
  return std::sqrt(x);
}
double rcp(double x) {
  return 1.0 / x;
}
double log2_of(double x) {
  return std::log2(x);
}
// log2(x) / (x - 1), smooth through x = 1: the near-one form of log kernels, (x - 1) * f(x).
double log2_over_xm1(double x) {
  const double d = x - 1.0;  // exact for x in [0.5, 2]
  return d == 0 ? std::numbers::log2e : std::log1p(d) / d * std::numbers::log2e;
}
// 2^(y - 1) for y = 1 + fraction in [1, 2): tpc-special.h's pow2 / exp reduce x to that y.
double pow2_of_fraction(double y) {
  return std::exp2(y - 1.0);
}

// Entries first, first + stride, ... (count of them) cover [a0 + j h, a0 + (j + 1) h).
struct Segment {
  std::uint32_t first, count, stride;
  double a0, h;
  double (*f)(double);
};
// kBoth: LOOKUP_1C gives C0, LOOKUP_2C (C1, C2) (the f32 ids, tpc-special.h LOOKUP_AND_MAC);
// kC2C1 / kC0: the two halves of a bf16 poly2 pair (ids *_c2c1 and *_c0, as tpc_llvm's
// EvalSpecialFunctionPass expands bf16 reciprocal and tanh); kLinear: LOOKUP_2C gives (C0, C1)
// (Habana's log_bf16: result = C0C1.v2 * t + C0C1.v1).
enum class Role { kBoth, kC2C1, kC0, kLinear };
struct Definition {
  int id;
  const char* name;
  int bits;     // of the coefficient words, and of the entries' input (32: f32, 16: bf16)
  int variant;  // the form's FUNC_VARIANT (e_func_variant, SW_LUT_* >> 13) and shift
  int shift;
  int degree;
  Role role;
  std::uint32_t entries;
  std::vector<Segment> segments;
};

// Each definition is the form of a public kernel: the variant and shift it passes to
// GET_LUT_ENTRY_AND_INTERVAL_START and what it does with the polynomial (docs/targets/tpc.md).
std::vector<Definition> definitions() {
  const double k64 = 1.0 / 64, k128 = 1.0 / 128;
  constexpr int kLog = 4;  // SW_LUT_LOG >> 13 (tpc-defs.h); e_func_variant has no log value
  // TANH with m index bits: [0, 1) in fixed point, then the binades [1, 2), [2, 4), [4, 8).
  auto tanh_segments = [](std::uint32_t n) {
    const double h = 1.0 / n;
    return std::vector<Segment>{{0, n, 1, 0.0, h, tanh_over_x},
                                {n, n, 1, 1.0, h, tanh_of},
                                {2 * n, n, 1, 2.0, 2 * h, tanh_of},
                                {3 * n, n, 1, 4.0, 4 * h, tanh_of}};
  };
  const std::vector<Segment> rcp_bf16{{0, 4, 1, 1.0, 0.25, rcp}};
  return {
      // tpc-special.h v_tanh_fast_abs_in_f32: SW_LUT_TANH, shift 17; tanh(x)/x below 1.
      {e_fp32_tanh, "e_fp32_tanh", 32, e_func_variant_tanh, 17, 2, Role::kBoth, 256, tanh_segments(64)},
      // BASE_SQRT_FUNC (v_rsqrt_fast_f32): SW_LUT_SQRT_RSQRT, shift 16, x in [1, 4).
      {e_fp32_rsqrt,
       "e_fp32_rsqrt",
       32, e_func_variant_sqrt_rsqrt, 16,
       2,
       Role::kBoth,
       256,
       {{0, 128, 1, 1.0, k128, rsqrt}, {128, 128, 1, 2.0, 2 * k128, rsqrt}}},
      // tpc-special.h's Gaudi log_f32 (kept there in a comment): default variant, shift 16,
      // x in [1, 2); entries + 128 for log2(x), the first 128 for log2(x) / (x - 1).
      {e_fp32_log2,
       "e_fp32_log2",
       32, e_func_variant_default, 16,
       2,
       Role::kBoth,
       256,
       {{0, 128, 1, 1.0, k128, log2_over_xm1}, {128, 128, 1, 1.0, k128, log2_of}}},
      // v_sqrt_fast_f32: SW_LUT_SQRT_RSQRT, shift 17.
      {e_fp32_sqrt,
       "e_fp32_sqrt",
       32, e_func_variant_sqrt_rsqrt, 17,
       2,
       Role::kBoth,
       128,
       {{0, 64, 1, 1.0, k64, sqrt_of}, {64, 64, 1, 2.0, 2 * k64, sqrt_of}}},
      // v_reciprocal_fast_f32: default variant, shift 16, x in [1, 2).
      {e_fp32_rcp, "e_fp32_rcp", 32, e_func_variant_default, 16, 2, Role::kBoth, 128, {{0, 128, 1, 1.0, k128, rcp}}},
      // Habana's sin_f32 / SIN_COS_CALC: SW_LUT_SIN_COS, shift 17, |x| <= pi/4; the kernel adds
      // 64 to the entry for cos and multiplies the sin polynomial by x.
      {e_fp32_sin_cos,
       "e_fp32_sin_cos",
       32, e_func_variant_sin_cos, 17,
       2,
       Role::kBoth,
       128,
       {{0, 64, 1, 0.0, k64, sin_over_x}, {64, 64, 1, 0.0, k64, cosine}}},
      // v_pow2_fast_f32 / v_exp_fast_f32: default variant, shift 17, y = 1 + fraction.
      {e_fp32_pow2,
       "e_fp32_pow2",
       32, e_func_variant_default, 17,
       2,
       Role::kBoth,
       64,
       {{0, 64, 1, 1.0, k64, pow2_of_fraction}}},
      // Habana's log_bf16 (kl_div): SW_LUT_LOG, shift 0 on x with its 2 low mantissa bits
      // cleared; entry 4i + class: class 0 log2(m) on [1, 2), 1 log2(x)/(x-1) on [1, 2),
      // 2 log2(x)/(x-1) on [0.5, 1); class 3 never comes out and repeats class 0.
      {e_bf16_log2_linear_interleaved_m5,
       "e_bf16_log2_linear_interleaved_m5",
       16, kLog, 0,
       1,
       Role::kLinear,
       128,
       {{0, 32, 4, 1.0, 1.0 / 32, log2_of},
        {1, 32, 4, 1.0, 1.0 / 32, log2_over_xm1},
        {2, 32, 4, 0.5, 0.5 / 32, log2_over_xm1},
        {3, 32, 4, 1.0, 1.0 / 32, log2_of}}},
      // EvalSpecialFunctionPass bf16 sin / cos: SW_LUT_SIN_COS, shift 3 (m = 4), the octant's
      // choice of cos ORed into the entry as 16, the sin part times x; LOOKUP_2C gives (C0, C1).
      {e_bf16_sin_cos_linear_m4,
       "e_bf16_sin_cos_linear_m4",
       16, e_func_variant_sin_cos, 3,
       1,
       Role::kLinear,
       32,
       {{0, 16, 1, 0.0, 1.0 / 16, sin_over_x}, {16, 16, 1, 0.0, 1.0 / 16, cosine}}},
      // EvalSpecialFunctionPass bf16 rsqrt: SW_LUT_SQRT_RSQRT, shift 4 (m = 3) on x in [1, 4);
      // LOOKUP_2C gives (C0, C1).
      {e_bf16_rsqrt,
       "e_bf16_rsqrt",
       16, e_func_variant_sqrt_rsqrt, 4,
       1,
       Role::kLinear,
       16,
       {{0, 8, 1, 1.0, 1.0 / 8, rsqrt}, {8, 8, 1, 2.0, 2.0 / 8, rsqrt}}},
      // EvalSpecialFunctionPass bf16 reciprocal: default variant, shift 5 (4 intervals on [1, 2)).
      {e_bf16_rcp_poly_m2_c2c1, "e_bf16_rcp_poly_m2_c2c1", 16, e_func_variant_default, 5, 2, Role::kC2C1, 4, rcp_bf16},
      {e_bf16_rcp_poly_m2_c0, "e_bf16_rcp_poly_m2_c0", 16, e_func_variant_default, 5, 2, Role::kC0, 4, rcp_bf16},
      // EvalSpecialFunctionPass bf16 tanh: SW_LUT_TANH, shift 4 (m = 3), tanh(x)/x below 1.
      {e_bf16_tanh_poly2_m3_c2c1, "e_bf16_tanh_poly2_m3_c2c1", 16, e_func_variant_tanh, 4, 2, Role::kC2C1, 32,
       tanh_segments(8)},
      {e_bf16_tanh_poly2_m3_c0, "e_bf16_tanh_poly2_m3_c0", 16, e_func_variant_tanh, 4, 2, Role::kC0, 32, tanh_segments(8)},
  };
}

double round_to_table(double c, int bits) {
  const float f = static_cast<float>(c);
  return bits == 32 ? f : static_cast<float>(tessera::bf16(f));
}
std::uint32_t word_of(double c, int bits) {
  const float f = static_cast<float>(c);
  return bits == 32 ? std::bit_cast<std::uint32_t>(f) : tessera::bf16(f).bits;
}

// Solves the n x n system a x = b (n <= 3) by elimination with partial pivoting.
template <int N>
std::array<double, N> solve(std::array<std::array<double, N>, N> a, std::array<double, N> b) {
  for (int col = 0; col < N; ++col) {
    int pivot = col;
    for (int r = col + 1; r < N; ++r)
      if (std::fabs(a[r][col]) > std::fabs(a[pivot][col])) pivot = r;
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    for (int r = col + 1; r < N; ++r) {
      const double k = a[r][col] / a[col][col];
      for (int c = col; c < N; ++c) a[r][c] -= k * a[col][c];
      b[r] -= k * b[col];
    }
  }
  std::array<double, N> x{};
  for (int r = N - 1; r >= 0; --r) {
    double s = b[r];
    for (int c = r + 1; c < N; ++c) s -= a[r][c] * x[c];
    x[r] = s / a[r][r];
  }
  return x;
}

// Least squares over Chebyshev points of [0, 1] (u = t / h) of the polynomial sum_j b_j u^j,
// j <= top, to the values r.
constexpr int kPoints = 32;
template <int N>
std::array<double, N> least_squares(const std::array<double, kPoints>& u,
                                    const std::array<double, kPoints>& r) {
  std::array<std::array<double, N>, N> a{};
  std::array<double, N> b{};
  for (int k = 0; k < kPoints; ++k) {
    double pi[N];
    pi[0] = 1.0;
    for (int j = 1; j < N; ++j) pi[j] = pi[j - 1] * u[k];
    for (int i = 0; i < N; ++i) {
      b[i] += pi[i] * r[k];
      for (int j = 0; j < N; ++j) a[i][j] += pi[i] * pi[j];
    }
  }
  return solve<N>(a, b);
}

// C0, C1, C2 of the polynomial in t = x - a over [a, a + h]. The highest coefficient is fitted,
// rounded to the table's format, and the lower ones refitted to what is left, so that each
// rounding is absorbed by the next coefficient; C0 takes the middle of the remaining residual.
std::array<double, 3> fit(double (*f)(double), double a, double h, int degree, int bits) {
  std::array<double, kPoints> u{}, t{}, y{};
  for (int k = 0; k < kPoints; ++k) {
    u[k] = 0.5 * (1.0 - std::cos((2 * k + 1) * std::numbers::pi / (2 * kPoints)));
    t[k] = u[k] * h;
    y[k] = f(a + t[k]);
  }
  std::array<double, 3> c{};
  for (int top = degree; top >= 0; --top) {
    std::array<double, kPoints> r{};
    for (int k = 0; k < kPoints; ++k) {
      r[k] = y[k];
      for (int j = top + 1; j <= degree; ++j) r[k] -= c[j] * std::pow(t[k], j);
    }
    double b = 0;
    if (top == 2) {
      b = least_squares<3>(u, r)[2];
    } else if (top == 1) {
      b = least_squares<2>(u, r)[1];
    } else {
      const auto [lo, hi] = std::minmax_element(r.begin(), r.end());
      b = 0.5 * (*lo + *hi);
    }
    c[top] = round_to_table(b / std::pow(h, top), bits);
  }
  return c;
}

struct Built {
  LutTable table{};
  std::vector<std::uint32_t> c0, c1, c2;
};

std::vector<Built> build() {
  const std::vector<Definition> defs = definitions();
  std::vector<Built> out(defs.size());
  for (std::size_t i = 0; i < defs.size(); ++i) {
    const Definition& d = defs[i];
    Built& b = out[i];
    b.c0.assign(d.entries, 0);
    b.c1.assign(d.entries, 0);
    b.c2.assign(d.entries, 0);
    for (const Segment& s : d.segments) {
      for (std::uint32_t j = 0; j < s.count; ++j) {
        const std::uint32_t e = s.first + j * s.stride;
        const auto c = fit(s.f, s.a0 + j * s.h, s.h, d.degree, d.bits);
        if (d.role == Role::kLinear) {
          b.c1[e] = word_of(c[0], d.bits);
          b.c2[e] = word_of(c[1], d.bits);
        } else {
          b.c0[e] = word_of(c[0], d.bits);
          b.c1[e] = word_of(c[1], d.bits);
          b.c2[e] = word_of(c[2], d.bits);
        }
      }
    }
    const int mantissa_bits = d.bits == 32 ? 23 : 7;
    b.table = LutTable{d.id,
                       d.name,
                       d.bits,
                       mantissa_bits,
                       d.variant,
                       d.shift,
                       lut_form(mantissa_bits, d.variant, d.shift),
                       d.role == Role::kBoth || d.role == Role::kC0,
                       d.role != Role::kC0,
                       d.entries,
                       b.c0.data(),
                       b.c1.data(),
                       b.c2.data()};
  }
  return out;
}

// Built once, at the first lookup of any program; deterministic (libm and the fit only).
const std::vector<Built>& tables() {
  static const std::vector<Built> built = build();
  return built;
}

// tpc-special.h's e_function_id values for Gaudi (aliases share an id).
struct IdName {
  int id;
  const char* name;
};
constexpr IdName kIds[] = {
    {0, "e_fp32_tanh"},
    {1, "e_fp32_rsqrt"},
    {2, "e_fp32_log2"},
    {3, "e_i8_sqrt"},
    {4, "e_u16_sqrt"},
    {5, "e_u32_power4"},
    {6, "e_i8_sqrt_c0"},
    {7, "e_u16_sqrt_c0"},
    {128, "e_fp32_sqrt"},
    {129, "e_fp32_rcp"},
    {130, "e_fp32_sin_cos"},
    {131, "e_bf16_rcp_scalar_m7"},
    {132, "e_bf16_sin_cos_scalar_m7"},
    {133, "e_bf16_sin_cos_linear_m6"},
    {134, "e_bf16_sin_cos_poly2_m6_c2c1"},
    {135, "e_bf16_sin_cos_poly2_m6_c0"},
    {136, "e_bf16_log2_linear_interleaved_m5"},
    {256, "e_fp32_pow2"},
    {257, "e_bf16_tanh"},
    {258, "e_i16_tanh"},
    {259, "e_i16_sigmoid"},
    {260, "e_i16_exp_neg"},
    {261, "e_i16_rcp"},
    {262, "e_i8_tanh_linear"},
    {263, "e_i8_sigmoid_linear"},
    {264, "e_i8_exp_linear"},
    {265, "e_bf16_tanh_c0"},
    {266, "e_i16_tanh_c0"},
    {267, "e_i16_sigmoid_c0"},
    {268, "e_i16_exp_neg_c0"},
    {269, "e_i16_rcp_c0"},
    {270, "e_i8_tanh_linear_c0"},
    {271, "e_i8_sigmoid_linear_c0"},
    {272, "e_i8_exp_linear_c0"},
    {273, "e_bf16_tanh_linear_m4"},
    {274, "e_bf16_tanh_poly2_m4_c2c1"},
    {275, "e_bf16_tanh_poly2_m4_c0"},
    {276, "e_bf16_sqrt_scalar_m6"},
    {277, "e_bf16_log2_linear_m5"},
    {278, "e_bf16_sin_cos_linear_m5"},
    {279, "e_bf16_sin_cos_poly_m5_c2c1"},
    {280, "e_bf16_sin_cos_poly2_m5_co"},
    {288, "e_bf16_rcp_m7_c0"},
    {384, "e_bf16_rsqrt"},
    {385, "e_bf16_log2"},
    {386, "e_bf16_sqrt / e_f16_sqrt_poly_m2_c2c1"},
    {387, "e_bf16_rcp"},
    {388, "e_bf16_sin_cos"},
    {389, "e_bf16_pow2"},
    {390, "e_i8_tanh"},
    {391, "e_bf16_rsqrt_c0"},
    {392, "e_bf16_log2_c0"},
    {393, "e_bf16_sqrt_c0 / e_f16_sqrt_poly_m2_c0"},
    {394, "e_bf16_rcp_c0"},
    {395, "e_bf16_sin_cos_c0"},
    {396, "e_bf16_pow2_c0"},
    {397, "e_i8_tanh_c0"},
    {398, "e_bf16_rcp_scalar / e_f16_rcp_poly_m3_c2c1"},
    {399, "e_bf16_rcp_linear_m2"},
    {400, "e_bf16_rcp_linear_m3"},
    {401, "e_bf16_rcp_linear_m4"},
    {402, "e_bf16_rcp_poly_m2_c2c1"},
    {403, "e_bf16_rcp_poly_m3_c2c1"},
    {404, "e_bf16_rcp_poly_m4_c2c1"},
    {405, "e_bf16_rcp_poly_m2_c0"},
    {406, "e_bf16_rcp_poly_m3_c0"},
    {407, "e_bf16_rcp_poly_m4_c0"},
    {408, "e_f16_rcp_poly_m3_c0"},
    {409, "e_bf16_sqrt_linear_m2"},
    {410, "e_bf16_sqrt_linear_m3"},
    {411, "e_bf16_sqrt_linear_m4"},
    {412, "e_bf16_sqrt_poly2_m2_c2c1"},
    {413, "e_bf16_sqrt_poly2_m3_c2c1"},
    {414, "e_bf16_sqrt_poly2_m4_c2c1"},
    {415, "e_bf16_sqrt_poly2_m2_c0"},
    {416, "e_bf16_sqrt_poly2_m3_c0"},
    {417, "e_bf16_sqrt_poly2_m4_c0"},
    {418, "e_bf16_tanh_linear_m2"},
    {419, "e_bf16_tanh_linear_m3"},
    {421, "e_bf16_tanh_poly2_m2_c2c1"},
    {422, "e_bf16_tanh_poly2_m3_c2c1"},
    {424, "e_bf16_tanh_poly2_m2_c0"},
    {425, "e_bf16_tanh_poly2_m3_c0"},
    {426, "e_bf16_log2ml_linear_m4"},
    {427, "e_bf16_sin_cos_linear_m2"},
    {428, "e_bf16_sin_cos_linear_m3"},
    {429, "e_bf16_sin_cos_linear_m4"},
    {430, "e_bf16_sin_cos_poly2_m2_c2c1"},
    {431, "e_bf16_sin_cos_poly2_m2_c0"},
    {432, "e_bf16_sin_cos_poly2_m3_c2c1"},
    {433, "e_bf16_sin_cos_poly2_m3_c0"},
    {434, "e_bf16_sin_cos_poly2_m4_c2c1"},
    {435, "e_bf16_sin_cos_poly2_m4_c0"},
    {440, "e_f16_rsqrt_poly_m3_c2c1"},
    {441, "e_f16_rsqrt_poly_m3_c0"},
    {444, "e_f16_pow2_poly_m2_c2c1"},
    {445, "e_f16_pow2_poly_m2_c0"},
};

const char* id_name(int fid) {
  for (const IdName& n : kIds)
    if (n.id == fid) return n.name;
  return nullptr;
}

std::string ids_with_tables() {
  std::string s;
  for (const Built& b : tables())
    s += fmt::format("{}{} ({})", s.empty() ? "" : ", ", b.table.name, b.table.id);
  return s;
}

// "f32 entries from SW_LUT_SIN_COS with shift 17", for messages.
std::string form_text(int mantissa_bits, int variant, int shift) {
  constexpr const char* kVariants[] = {"the default variant (0)", "SW_LUT_TANH", "SW_LUT_SQRT_RSQRT",
                                       "SW_LUT_SIN_COS", "SW_LUT_LOG"};
  return fmt::format("{} entries from {} with shift {}", mantissa_bits == 23 ? "f32" : "bf16",
                     kVariants[variant], shift);
}
std::string form_text(int form) {
  if (form < 120) return form_text(23, form / 24, form % 24);
  return form_text(7, (form - 120) / 8, (form - 120) % 8);
}

}  // namespace

void bad_lut_shift(const char* intrinsic, int shift, int mantissa_bits, int variant) {
  throw_user_error(
      "{}: significand shift {} is outside 0..{} for this input type ({} mantissa bits{}); the "
      "entry takes the mantissa bits above the shift (tpc-special.h: COEFF_TAB_SHIFT = 23 - m for "
      "f32)",
      intrinsic, shift, mantissa_bits - (variant == 4 ? 2 : 0), mantissa_bits,
      variant == 4 ? ", of which SW_LUT_LOG keeps 2 for the entry's class" : "");
}

void bad_lut_variant(const char* intrinsic, int switches) {
  throw_user_error(
      "{}: FUNC_VARIANT {} (switches 0x{:x}) is not one of tpc-defs.h's: use 0 (default), "
      "SW_LUT_TANH, SW_LUT_SQRT_RSQRT, SW_LUT_SIN_COS or SW_LUT_LOG",
      intrinsic, (switches >> 13) & 0x7, static_cast<unsigned>(switches));
}

const LutTable& lut_table(int fid, int switches, int lane_bits, bool two, const char* intrinsic) {
  check_switches(switches, kLookupTypeBits | SW_UPPER_HALF, intrinsic);
  if ((switches & SW_UPPER_HALF) != 0)
    throw_user_error(
        "{}: SW_UPPER_HALF ('force lookup in upper half of 64-entries slot', tpc-intrinsics.h) is "
        "not modeled: how Habana's tables sit in 64-entry slots is not public, and Tessera's "
        "tables are indexed by the entry alone; remove the switch",
        intrinsic);
  const int type = switches & kLookupTypeBits;
  if (type == SW_BV8_0 || type == SW_BV8_1)
    throw_user_error(
        "{}: SW_BV8_0 / SW_BV8_1 lookups are Greco and later (tpc-intrinsics.h); a Gaudi lookup "
        "is SW_BV32 (32-bit lanes) or SW_BV16 (16-bit lanes)",
        intrinsic);
  const int type_bits = type == SW_BV16 ? 16 : 32;
  if (type_bits != lane_bits)
    throw_user_error(
        "{}: data type switch {} reads {}-bit words, but this intrinsic's lanes are {}-bit; use "
        "{}",
        intrinsic, type == SW_BV16 ? "SW_BV16" : "SW_BV32", type_bits, lane_bits,
        lane_bits == 32 ? "SW_BV32" : "SW_BV16");
  const char* name = id_name(fid);
  if (name == nullptr)
    throw_user_error(
        "{}: function id {} is not one of tpc-special.h's e_function_id values for Gaudi",
        intrinsic, fid);
  for (const Built& b : tables()) {
    const LutTable& t = b.table;
    if (t.id != fid) continue;
    if (t.bits != lane_bits)
      throw_user_error(
          "{}: {} ({}) is a {}-bit table; look it up with a {}-bit lookup ({})", intrinsic, t.name,
          fid, t.bits, t.bits,
          t.bits == 32 ? "v_f32_lookup_1c / _2c, SW_BV32" : "v_bf16_lookup_1c / _2c, SW_BV16");
    if (two && !t.two_coefficients)
      throw_user_error(
          "{}: {} ({}) holds one coefficient per entry (C0, read with LOOKUP_1C); its C1, C2 are "
          "the table of the matching _c2c1 id",
          intrinsic, t.name, fid);
    if (!two && !t.one_coefficient)
      throw_user_error(
          "{}: {} ({}) holds two coefficients per entry, read with LOOKUP_2C: (C0, C1) for a "
          "linear table, (C1, C2) for a _c2c1 one, whose C0 is the table of the matching _c0 id",
          intrinsic, t.name, fid);
    return t;
  }
  throw_user_error(
      "{}: Tessera has no table for {} ({}): Habana's tables are not public, and Tessera fits "
      "its own only for the functions whose evaluation form (variant, shift, offsets added to "
      "the entry, coefficient order, and for integer functions the fixed-point formats) a public "
      "kernel shows: {}. Compute the function with the special functions of spec 000 §2.6.2 "
      "(v_tanh_f32, v_exp_f32, v_log_f32, v_sqrt_f32, v_rsqrt_f32, v_reciprocal_f32, ...)",
      intrinsic, name, fid, ids_with_tables());
}

void lut_entry_outside(const char* intrinsic, const LutTable& t, std::uint32_t entry, int lane) {
  throw_user_error(
      "{}: lane {} asks for entry {} of {} ({}), but Tessera's table has {} entries: the entry "
      "must come from v_*_get_lut_entry_and_interval_start with the variant and shift that "
      "function's form uses (docs/targets/tpc.md, 'Special-function lookups')",
      intrinsic, lane, entry, t.name, t.id, t.entries);
}

void lut_form_mismatch(const InstanceContext& c, const LutTable& t, const char* intrinsic) {
  std::string asked;
  for (int form = 0; form < LutForms::kCount; ++form)
    if (c.lut_forms.has(form)) asked += fmt::format("{}{}", asked.empty() ? "" : "; ", form_text(form));
  throw_user_error(
      "tpc{} kernel {}: {} of {} ({}): Tessera's table for this function id is fitted for {}, "
      "but this program instance asked v_*_get_lut_entry_and_interval_start only for {}. Entries "
      "of another form number other intervals, so the coefficients would be wrong. Compute the "
      "entries with the form the table supports (docs/targets/tpc.md, 'Special-function "
      "lookups'); Habana's own tables for other forms are not public",
      c.core, c.kernel_name, intrinsic, t.name, t.id,
      form_text(t.input_mantissa_bits, t.variant, t.shift), asked);
}

}  // namespace tessera::tpc::detail
