// The built-in types of TPC-C (spec 000 §2.5.1, Table 1) as C++ types: the `tensor` handle,
// `int5` coordinates and the 2048-bit vector types. Vector lanes are plain C++ values, so they
// can be read back into scalars (TPC-C forbids it, spec 000 §2.4.2; C++ printf loops need it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tessera/core/dtype.h"

namespace tessera::tpc {

// Opaque handle: an index into the current program instance's tensor table (inputs first, then
// outputs, in the order of the launch). An int converts to it, as TPC-C takes an int where a
// tensor is expected (Habana's bitonic sort: `int ofmDataIdx = 1; get_dim_size(ofmDataIdx, 0)`);
// an index outside the table faults at the access.
struct tensor {
  int id = 0;
  constexpr tensor() = default;
  constexpr tensor(int index) : id(index) {}  // NOLINT(google-explicit-constructor): TPC-C
  friend constexpr bool operator==(tensor a, tensor b) { return a.id == b.id; }
};

// Five-dimensional cartesian coordinates, dimension 0 first (the fastest-changing one).
// An aggregate, so `int5 c = {0};` and `int5 c = {0, 1, 2, 3, 3};` work as in TPC-C, and zero
// when declared without an initializer (`int5 a;`), as TPC-C's IRF registers start.
struct int5 {
  int v[5] = {0, 0, 0, 0, 0};
  constexpr int& operator[](int i) { return v[i]; }
  constexpr int operator[](int i) const { return v[i]; }
  friend constexpr int5 operator+(const int5& a, const int5& b) {
    return {{a.v[0] + b.v[0], a.v[1] + b.v[1], a.v[2] + b.v[2], a.v[3] + b.v[3], a.v[4] + b.v[4]}};
  }
  friend constexpr int5 operator-(const int5& a, const int5& b) {
    return {{a.v[0] - b.v[0], a.v[1] - b.v[1], a.v[2] - b.v[2], a.v[3] - b.v[3], a.v[4] - b.v[4]}};
  }
  friend constexpr bool operator==(const int5& a, const int5& b) {
    return a.v[0] == b.v[0] && a.v[1] == b.v[1] && a.v[2] == b.v[2] && a.v[3] == b.v[3] &&
           a.v[4] == b.v[4];
  }
};

namespace detail {
// One VPU instruction whose operands are ready at `operands_ready`: returns the cycle its
// result is ready (the latency model of spec 000 §2.3.1; defined in context.h).
inline std::uint64_t vpu_issue(std::uint64_t operands_ready);
}  // namespace detail

// Lane arithmetic for the 16-bit float type happens in f32 and rounds back (RNE).
template <typename T>
using lane_math_t = std::conditional_t<std::is_same_v<T, tessera::bf16>, float, T>;

// TPC-C's scalar bf16: converts implicitly from float, as in `bf16 v = 46.25;` (spec 000 §2.7.3).
struct bf16 : tessera::bf16 {
  bf16() = default;
  bf16(float value) : tessera::bf16(value) {}          // NOLINT(google-explicit-constructor)
  bf16(tessera::bf16 value) : tessera::bf16(value) {}  // NOLINT(google-explicit-constructor)
};

namespace detail {
struct no_init_t {};  // tag: a vector whose lanes are about to be overwritten
}  // namespace detail

// A 2048-bit vector of N lanes of T. Value-initialised to zero: unlike the hardware's
// registers, a fresh vector never holds stale data, so results stay deterministic.
// `ready` is the core cycle at which the value is available (spec 000 §2.3.1: a result is
// visible after its instruction's latency); it is timing only and never changes results.
template <typename T, int N>
struct alignas(64) vec {
  using lane_type = T;
  static constexpr int lanes = N;
  T v[N];
  std::uint64_t ready = 0;

  vec() : v{} {}
  explicit vec(detail::no_init_t) {}
  // Scalar-to-vector broadcast (spec 000 §2.4.2: `float64 b = a;`).
  vec(lane_math_t<T> scalar) {  // NOLINT(google-explicit-constructor): TPC-C semantics
    const T x = static_cast<T>(scalar);
    for (int i = 0; i < N; ++i) v[i] = x;
  }
  // A bf16 scalar broadcasts too (Habana's relu6_fwd.h passes its `bf16` threshold where
  // v_bf16_sel_leq_bf16_b takes a bfloat128).
  vec(const T& scalar)  // NOLINT(google-explicit-constructor): TPC-C semantics
    requires(!std::is_same_v<T, lane_math_t<T>>)
  {
    for (int i = 0; i < N; ++i) v[i] = scalar;
  }
  T& operator[](int i) { return v[i]; }
  const T& operator[](int i) const { return v[i]; }
  // A cast between vector types of one size reinterprets the register's bits (`(char256)x`,
  // `(int64)read_lane_id_4b_b()`), as TPC-C's vector casts do (clang ext_vector_type).
  template <typename U, int M>
    requires(sizeof(U) * M == sizeof(T) * N && !std::is_same_v<U, T>)
  explicit operator vec<U, M>() const {
    vec<U, M> r(detail::no_init_t{});
    std::memcpy(r.v, v, sizeof v);
    r.ready = ready;
    return r;
  }

  // Element-wise operators; each is one VPU issue. Integer arithmetic wraps.
  template <typename F>
  static vec zip(const vec& a, const vec& b, F f) {
    vec r;
    for (int i = 0; i < N; ++i)
      r.v[i] = static_cast<T>(
          f(static_cast<lane_math_t<T>>(a.v[i]), static_cast<lane_math_t<T>>(b.v[i])));
    r.ready = detail::vpu_issue(a.ready > b.ready ? a.ready : b.ready);
    return r;
  }
  friend vec operator+(const vec& a, const vec& b) {
    return zip(a, b, [](auto x, auto y) { return wrap_add(x, y); });
  }
  friend vec operator-(const vec& a, const vec& b) {
    return zip(a, b, [](auto x, auto y) { return wrap_sub(x, y); });
  }
  friend vec operator*(const vec& a, const vec& b) {
    return zip(a, b, [](auto x, auto y) { return wrap_mul(x, y); });
  }
  friend vec operator/(const vec& a, const vec& b) requires std::is_same_v < lane_math_t<T>,
  float > {
    return zip(a, b, [](float x, float y) { return x / y; });
  }
  friend vec operator-(const vec& a) { return vec(lane_math_t<T>{}) - a; }
  friend vec operator&(const vec& a, const vec& b) requires std::is_integral_v<T> {
    return zip(a, b, [](auto x, auto y) { return x & y; });
  }
  friend vec operator|(const vec& a, const vec& b) requires std::is_integral_v<T> {
    return zip(a, b, [](auto x, auto y) { return x | y; });
  }
  friend vec operator^(const vec& a, const vec& b) requires std::is_integral_v<T> {
    return zip(a, b, [](auto x, auto y) { return x ^ y; });
  }
  // Shifts as OpenCL vectors shift: the count is taken modulo the lane width (well defined for
  // every count); `>>` is arithmetic on signed lanes.
  friend vec operator<<(const vec& a, const vec& b) requires std::is_integral_v<T> {
    return zip(a, b, [](auto x, auto y) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(x) << (y & (8 * sizeof(T) - 1))));
    });
  }
  friend vec operator>>(const vec& a, const vec& b) requires std::is_integral_v<T> {
    return zip(a, b, [](auto x, auto y) { return static_cast<T>(x >> (y & (8 * sizeof(T) - 1))); });
  }
  friend vec operator~(const vec& a) requires std::is_integral_v<T> {
    return zip(a, a, [](auto x, auto) { return ~x; });
  }
  vec& operator+=(const vec& b) { return *this = *this + b; }
  vec& operator-=(const vec& b) { return *this = *this - b; }
  vec& operator*=(const vec& b) { return *this = *this * b; }
  vec& operator&=(const vec& b) requires std::is_integral_v<T> { return *this = *this & b; }
  vec& operator|=(const vec& b) requires std::is_integral_v<T> { return *this = *this | b; }

  template <typename X>
  static X wrap_add(X x, X y) {
    if constexpr (std::is_integral_v<X>)
      return static_cast<X>(static_cast<std::make_unsigned_t<X>>(x) +
                            static_cast<std::make_unsigned_t<X>>(y));
    else
      return x + y;
  }
  template <typename X>
  static X wrap_sub(X x, X y) {
    if constexpr (std::is_integral_v<X>)
      return static_cast<X>(static_cast<std::make_unsigned_t<X>>(x) -
                            static_cast<std::make_unsigned_t<X>>(y));
    else
      return x - y;
  }
  template <typename X>
  static X wrap_mul(X x, X y) {
    if constexpr (std::is_integral_v<X>)
      return static_cast<X>(static_cast<std::uint32_t>(static_cast<std::make_unsigned_t<X>>(x)) *
                            static_cast<std::uint32_t>(static_cast<std::make_unsigned_t<X>>(y)));
    else
      return x * y;
  }
};

// Table 1 of spec 000 §2.5.1.
using float64 = vec<float, 64>;
using bfloat128 = vec<tessera::bf16, 128>;
using short128 = vec<std::int16_t, 128>;
using ushort128 = vec<std::uint16_t, 128>;
using int64 = vec<std::int32_t, 64>;
using uint64 = vec<std::uint32_t, 64>;
using char256 = vec<std::int8_t, 256>;
using uchar256 = vec<std::uint8_t, 256>;

// 256 one-bit predicates, one per byte lane of a vector. A comparison of N-lane vectors sets
// all 256/N bits of each lane; an N-lane predicated operation reads bit lane*(256/N), so a
// mask computed on one width can be used on another, as on the hardware's byte-granular VPRF.
// Only logical operations are defined (spec 000 §2.5.1).
struct bool256 {
  std::uint8_t b[256];
  std::uint64_t ready = 0;  // as vec::ready

  bool256() : b{} {}
  // `bool256 a = {0xff};` sets every bit (spec 000 §2.6.4): the byte pattern repeats over the
  // 32 bytes of the register.
  bool256(unsigned char pattern) {  // NOLINT(google-explicit-constructor): TPC-C semantics
    for (int i = 0; i < 256; ++i) b[i] = static_cast<std::uint8_t>((pattern >> (i % 8)) & 1u);
  }
  bool operator[](int bit) const { return b[bit] != 0; }
  void set(int bit, bool value) { b[bit] = value ? 1 : 0; }
  // Predicate of lane `lane` of an N-lane vector.
  template <int N>
  bool lane(int index) const {
    return b[index * (256 / N)] != 0;
  }
  friend bool256 operator&(const bool256& x, const bool256& y) {
    bool256 r;
    for (int i = 0; i < 256; ++i) r.b[i] = x.b[i] & y.b[i];
    r.ready = detail::vpu_issue(x.ready > y.ready ? x.ready : y.ready);
    return r;
  }
  friend bool256 operator|(const bool256& x, const bool256& y) {
    bool256 r;
    for (int i = 0; i < 256; ++i) r.b[i] = x.b[i] | y.b[i];
    r.ready = detail::vpu_issue(x.ready > y.ready ? x.ready : y.ready);
    return r;
  }
  friend bool256 operator^(const bool256& x, const bool256& y) {
    bool256 r;
    for (int i = 0; i < 256; ++i) r.b[i] = x.b[i] ^ y.b[i];
    r.ready = detail::vpu_issue(x.ready > y.ready ? x.ready : y.ready);
    return r;
  }
  friend bool256 operator~(const bool256& x) {
    bool256 r;
    for (int i = 0; i < 256; ++i) r.b[i] = x.b[i] ^ 1u;
    r.ready = detail::vpu_issue(x.ready);
    return r;
  }
  friend bool operator==(const bool256& x, const bool256& y) {
    return std::memcmp(x.b, y.b, sizeof x.b) == 0;  // values only, never timing
  }
};

// Results of the argmin/argmax reductions (spec 000 §2.6.3, Table 3): v1 holds the lane index,
// v2 the value, both broadcast to every lane.
struct uint64_float64_pair_t {
  uint64 v1;
  float64 v2;
};
struct uint64_int64_pair_t {
  uint64 v1;
  int64 v2;
};

// Rounding modes of CONVERT / NEARBYINT: the switch encodings of Habana's tpc-defs.h (the mode
// in bits 16..18 of the switches) and the e_round_* values of tpc-special.h (the mode itself).
enum RoundingMode : int {
  SW_RHNE = 0x0 << 16,  // to nearest, ties to even
  SW_RZ = 0x1 << 16,    // toward zero
  SW_RU = 0x2 << 16,    // toward +inf
  SW_RD = 0x3 << 16,    // toward -inf
  SW_SR = 0x4 << 16,    // stochastic
  SW_CSR = 0x5 << 16,
  SW_RHAZ = 0x6 << 16,  // to nearest, ties away from zero
  SW_SR_RNE = 0x7 << 16,
};
enum e_round_mode : int {
  e_round_half_ne = 0,
  e_round_zero = 1,
  e_round_up = 2,
  e_round_down = 3,
  e_round_stochastic = 4,
  e_round_half_az = 6,
};

}  // namespace tessera::tpc

#include "tessera/targets/tpc/api/context.h"
