// TPC-C intrinsics (spec 000 §2.6) as inline C++ functions, named by the convention of
// §2.6.2: <return width>_<dtype>_<name>_<argument widths>[_b|_vb]. `_b` takes a scalar
// predicate and polarity, `_vb` a bool256 predicate and polarity (§2.3.2): an operation runs
// where predicate != polarity; elsewhere the result keeps `income` (zero when no income is
// given). Every intrinsic counts one issue on its VLIW slot for the cost model (§2.3.1).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "tessera/targets/tpc/api/context.h"
#include "tessera/targets/tpc/api/types.h"

namespace tessera::tpc {

class global_address;
namespace detail {
// A raw pointer made from an address is about to be dereferenced: checked and counted here.
inline void raw_global_access(const global_address& a);
}  // namespace detail

// What GEN_ADDR returns (TPC-C's `__global__ T*`): the address of one tensor element plus the
// tensor and coordinates it came from, so the access, not the address arithmetic, can fault.
// Converts to a pointer for `__global__ int* p = a_gen_addr_i(...)`; that conversion is the
// access point Tessera can check (a raw pointer dereference is not observable).
class global_address {
 public:
  global_address() = default;
  global_address(std::byte* p, int tensor_id, const int5& coord, std::uint32_t elem_bytes,
                 bool inside)
      : p_(p), tensor_(tensor_id), coord_(coord), elem_bytes_(elem_bytes), inside_(inside) {}
  template <typename T>
  operator T*() const {  // NOLINT(google-explicit-constructor): TPC-C pointer initialisation
    detail::raw_global_access(*this);
    return reinterpret_cast<T*>(p_);
  }
  std::byte* address() const { return p_; }
  int tensor_id() const { return tensor_; }
  const int5& coord() const { return coord_; }
  std::uint32_t element_bytes() const { return elem_bytes_; }
  bool inside() const { return inside_; }

 private:
  std::byte* p_ = nullptr;
  int tensor_ = -1;
  int5 coord_;
  std::uint32_t elem_bytes_ = 0;
  bool inside_ = false;
};

namespace detail {

template <typename V>
using lane_t = typename V::lane_type;
template <typename V>
using scalar_t = lane_math_t<lane_t<V>>;

inline bool enabled(bool predicate, bool polarity) {
  return predicate != polarity;
}

template <typename V>
inline V make_uninit() {
  return V(no_init_t{});
}

// ---- lane operations ----
template <typename V, typename F>
inline V map1(const V& a, F f) {
  V r(no_init_t{});
  for (int i = 0; i < V::lanes; ++i)
    r.v[i] = static_cast<lane_t<V>>(f(static_cast<scalar_t<V>>(a.v[i])));
  return r;
}
template <typename V, typename F>
inline V map2(const V& a, const V& b, F f) {
  V r(no_init_t{});
  for (int i = 0; i < V::lanes; ++i)
    r.v[i] = static_cast<lane_t<V>>(
        f(static_cast<scalar_t<V>>(a.v[i]), static_cast<scalar_t<V>>(b.v[i])));
  return r;
}
template <typename V, typename F>
inline V map2s(const V& a, scalar_t<V> b, F f) {
  V r(no_init_t{});
  for (int i = 0; i < V::lanes; ++i)
    r.v[i] = static_cast<lane_t<V>>(f(static_cast<scalar_t<V>>(a.v[i]), b));
  return r;
}
// Lanes where the vector predicate is off keep income.
template <typename V>
inline V blend(const V& computed, const V& income, const bool256& p, bool polarity) {
  V r(no_init_t{});
  constexpr int step = 256 / V::lanes;
  for (int i = 0; i < V::lanes; ++i)
    r.v[i] = ((p.b[i * step] != 0) != polarity) ? computed.v[i] : income.v[i];
  return r;
}

struct op_add {
  template <typename X>
  X operator()(X a, X b) const {
    return vec<X, 1>::wrap_add(a, b);
  }
};
struct op_sub {
  template <typename X>
  X operator()(X a, X b) const {
    return vec<X, 1>::wrap_sub(a, b);
  }
};
struct op_mul {
  template <typename X>
  X operator()(X a, X b) const {
    return vec<X, 1>::wrap_mul(a, b);
  }
};
struct op_min {
  template <typename X>
  X operator()(X a, X b) const {
    return b < a ? b : a;
  }
};
struct op_max {
  template <typename X>
  X operator()(X a, X b) const {
    return a < b ? b : a;
  }
};
struct op_and {
  template <typename X>
  X operator()(X a, X b) const {
    return static_cast<X>(a & b);
  }
};
struct op_or {
  template <typename X>
  X operator()(X a, X b) const {
    return static_cast<X>(a | b);
  }
};
struct op_xor {
  template <typename X>
  X operator()(X a, X b) const {
    return static_cast<X>(a ^ b);
  }
};
// Shift counts are taken modulo the lane width, as a barrel shifter does.
struct op_shl {
  template <typename X>
  X operator()(X a, X b) const {
    using U = std::make_unsigned_t<X>;
    const unsigned s = static_cast<unsigned>(b) % (sizeof(X) * 8);
    return static_cast<X>(static_cast<U>(static_cast<U>(a) << s));
  }
};
// SHR is a logical shift on every integer type: Habana's own log_f32 (tpc_llvm,
// clang/lib/Headers/tpc-special.h) takes `v_i32_shr_b(bits, 31)` of a negative number as 1, not
// -1. (The arithmetic shift is another instruction, ASH; TPC-C's `>>` operator on a signed vector
// shifts arithmetically, as C does.)
struct op_shr {
  template <typename X>
  X operator()(X a, X b) const {
    using U = std::make_unsigned_t<X>;
    const unsigned s = static_cast<unsigned>(b) % (sizeof(X) * 8);
    return static_cast<X>(static_cast<U>(static_cast<U>(a) >> s));
  }
};

struct cmp_eq {
  template <typename X>
  bool operator()(X a, X b) const {
    return a == b;
  }
};
struct cmp_neq {
  template <typename X>
  bool operator()(X a, X b) const {
    return a != b;
  }
};
struct cmp_less {
  template <typename X>
  bool operator()(X a, X b) const {
    return a < b;
  }
};
struct cmp_leq {
  template <typename X>
  bool operator()(X a, X b) const {
    return a <= b;
  }
};
struct cmp_grt {
  template <typename X>
  bool operator()(X a, X b) const {
    return a > b;
  }
};
struct cmp_geq {
  template <typename X>
  bool operator()(X a, X b) const {
    return a >= b;
  }
};

template <typename V, typename C>
inline bool256 compare(const V& a, const V& b, C c) {
  bool256 r(static_cast<unsigned char>(0));
  constexpr int step = 256 / V::lanes;
  for (int i = 0; i < V::lanes; ++i) {
    const std::uint8_t bit =
        c(static_cast<scalar_t<V>>(a.v[i]), static_cast<scalar_t<V>>(b.v[i])) ? 1 : 0;
    for (int k = 0; k < step; ++k) r.b[i * step + k] = bit;
  }
  return r;
}
inline bool256 mask(const bool256& computed, const bool256& income, const bool256& p,
                    bool polarity) {
  bool256 r;
  for (int i = 0; i < 256; ++i) r.b[i] = ((p.b[i] != 0) != polarity) ? computed.b[i] : income.b[i];
  return r;
}

// SEL_<cmp>: (a cmp b) ? c : d lane by lane; the compared and the selected vectors may differ in
// type when their lanes are of one width (v_f32_sel_less_i32_b compares i32, returns f32).
template <typename R, typename A, typename C>
inline R select(const A& a, const A& b, const R& c, const R& d, C cmp) {
  static_assert(A::lanes == R::lanes, "SEL compares and selects lanes of one width");
  R r(no_init_t{});
  for (int i = 0; i < R::lanes; ++i)
    r.v[i] =
        cmp(static_cast<scalar_t<A>>(a.v[i]), static_cast<scalar_t<A>>(b.v[i])) ? c.v[i] : d.v[i];
  return r;
}

// ---- reductions (spec 000 §2.6.3): pairwise, so the f32 rounding is that of a tree ----
template <typename V, typename F>
inline V reduce(const V& a, F f) {
  scalar_t<V> t[V::lanes];
  for (int i = 0; i < V::lanes; ++i) t[i] = static_cast<scalar_t<V>>(a.v[i]);
  for (int width = V::lanes / 2; width >= 1; width /= 2)
    for (int i = 0; i < width; ++i) t[i] = f(t[i], t[i + width]);
  return V(t[0]);
}
template <typename V, typename P, bool Max>
inline P arg_reduce(const V& a) {
  int best = 0;
  for (int i = 1; i < V::lanes; ++i) {
    const auto x = static_cast<scalar_t<V>>(a.v[i]);
    const auto b = static_cast<scalar_t<V>>(a.v[best]);
    if (Max ? (x > b) : (x < b)) best = i;
  }
  P r;
  r.v1 = uint64(static_cast<std::uint32_t>(best));
  r.v2 = decltype(r.v2)(static_cast<scalar_t<V>>(a.v[best]));
  return r;
}

// ---- conversions with rounding modes; float to integer and integer narrowing saturate ----
// Unknown or unmodeled switches are a UserError naming the intrinsic and the bits (instance.cpp).
[[noreturn]] void bad_switches(const char* intrinsic, int switches, int allowed);
inline void check_switches(int switches, int allowed, const char* intrinsic) {
  if ((switches & ~allowed) != 0) [[unlikely]]
    bad_switches(intrinsic, switches, allowed);
}
// The rounding mode (e_round_*) of a CONVERT / NEARBYINT switch set (bits 16..18).
inline constexpr int kRoundingBits = 0x7 << 16;
[[noreturn]] void bad_rounding(const char* intrinsic, int switches);
[[noreturn]] void bad_legacy_rounding(const char* intrinsic, int mode);
[[noreturn]] void bad_partial(const char* intrinsic, int size, int offset, int lanes);
// The rounding switch of spec 000's legacy converts, which take an e_round_* mode and shift it
// into bits 16..18 (tpc-defs.h: `v_convert_f32_to_i32_v(a, rm)` is `..._b(a, (rm << 16), ...)`).
inline int legacy_rounding(int mode, const char* intrinsic) {
  if ((mode & ~0x7) != 0) [[unlikely]]
    bad_legacy_rounding(intrinsic, mode);
  return mode << 16;
}
// The rounding argument of v_convert_<from>_to_<to>_v: Tessera's switch (SW_RD = 3 << 16) or,
// as the legacy names of tpc-defs.h take it, the bare mode (e_round_down = 3); 0 is RHNE in
// both. Any other bit is a UserError.
inline int convert_rounding(int rounding, const char* intrinsic) {
  if ((rounding & ~0x7) == 0) return rounding << 16;
  check_switches(rounding, kRoundingBits, intrinsic);
  return rounding;
}
// SW_CSR takes the mode from the core's convert rounding CSR (set_convert_csr_value, which only
// holds modes modeled here): the LLVM TPC backend's latency resolver names CONVERT and NEARBYINT
// under SW_CSR as CONV_ROUND_CSR's readers.
inline int rounding_of(int switches, const char* intrinsic) {
  int rm = (switches >> 16) & 0x7;
  if (rm == (SW_CSR >> 16)) rm = instance(intrinsic).registers.conv_round_csr;
  if (rm != e_round_half_ne && rm != e_round_zero && rm != e_round_up && rm != e_round_down &&
      rm != e_round_half_az) [[unlikely]]
    bad_rounding(intrinsic, switches);
  return rm;
}
// `rm` is an e_round_* mode, already checked by rounding_of.
inline double round_by_mode(double x, int rm) {
  switch (rm) {
    case e_round_zero:
      return std::trunc(x);
    case e_round_up:
      return std::ceil(x);
    case e_round_down:
      return std::floor(x);
    case e_round_half_az:
      return std::round(x);
    default:
      return std::nearbyint(x);
  }
}
// Rounds x to a float format with `bits` significant bits (24 for f32, 8 for bf16) and f32's
// exponent range: below the smallest normal (2^-126) the step stays 2^(-125 - bits), so
// subnormal results round in the mode asked for rather than keeping too many bits.
inline float round_float(double x, int bits, int rm) {
  if (!std::isfinite(x) || x == 0) return static_cast<float>(x);
  int e = 0;
  (void)std::frexp(x, &e);  // x = m * 2^e, 0.5 <= |m| < 1
  const int step = std::max(e, -125) - bits;
  return static_cast<float>(std::ldexp(round_by_mode(std::ldexp(x, -step), rm), step));
}
template <typename To>
inline To convert_lane(double x, int rm) {
  if constexpr (std::is_same_v<To, float>) {
    const float f = static_cast<float>(x);  // the FPU rounds to nearest even
    if (rm == e_round_half_ne || static_cast<double>(f) == x) return f;
    return round_float(x, 24, rm);
  } else if constexpr (std::is_same_v<To, tessera::bf16>) {
    const float f = static_cast<float>(x);
    if (std::isnan(x) || (rm == e_round_half_ne && static_cast<double>(f) == x))
      return tessera::bf16(f);
    return tessera::bf16::from_bits(
        static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(round_float(x, 8, rm)) >> 16));
  } else {
    if (std::isnan(x)) return To{0};
    const double r = round_by_mode(x, rm);
    if (r <= static_cast<double>(std::numeric_limits<To>::lowest()))
      return std::numeric_limits<To>::lowest();
    if (r >= static_cast<double>(std::numeric_limits<To>::max()))
      return std::numeric_limits<To>::max();
    return static_cast<To>(r);
  }
}
// Lane counts differ between widths, and CONVERT interleaves as the hardware does
// (tpc-intrinsics.h, down-convert `lane`: 0 = all even lanes, 1 = all odd lanes, 0..3 for a
// 4:1 narrowing): a narrowing convert writes result i to lane i * ratio + lane (other lanes keep
// income); a widening one reads source lane i * ratio + lane.
template <typename To, typename From>
inline To convert(const From& a, int rm, int lane, const To& income) {
  To r = income;
  constexpr int n = std::min(To::lanes, From::lanes);
  constexpr int ratio = std::max(To::lanes, From::lanes) / n;
  constexpr bool narrowing = To::lanes > From::lanes;
  for (int i = 0; i < n; ++i)
    r.v[narrowing ? i * ratio + lane : i] = convert_lane<lane_t<To>>(
        static_cast<double>(static_cast<scalar_t<From>>(a.v[narrowing ? i : i * ratio + lane])),
        rm);
  return r;
}
[[noreturn]] void bad_lane(const char* intrinsic, int lane, int lanes);
inline void check_lane(int lane, int lanes, const char* intrinsic) {
  if (static_cast<unsigned>(lane) >= static_cast<unsigned>(lanes)) [[unlikely]]
    bad_lane(intrinsic, lane, lanes);
}
// The lane reorder a kernel pairs with interleaving converts to keep elements in memory order:
// gather_lanes makes lane g * n + i of lane i * ratio + g (n = lanes / ratio), scatter_lanes
// undoes it. On the TPC this is a SHUFFLE within 32-lane groups plus a MOV_DUAL_GROUP per lane
// set; it is charged as 2 * ratio VPU issues, an estimate of that sequence.
template <typename V>
inline V reorder_lanes(const V& a, int ratio, bool gather) {
  return on_vpu_long(
      2 * static_cast<std::uint64_t>(ratio),
      [&] {
        V r(no_init_t{});
        const int n = V::lanes / ratio;
        for (int g = 0; g < ratio; ++g)
          for (int i = 0; i < n; ++i) {
            if (gather)
              r.v[g * n + i] = a.v[i * ratio + g];
            else
              r.v[i * ratio + g] = a.v[g * n + i];
          }
        return r;
      },
      a);
}
template <typename V>
inline V gather_lanes(const V& a, int ratio) {
  return reorder_lanes(a, ratio, true);
}
template <typename V>
inline V scatter_lanes(const V& a, int ratio) {
  return reorder_lanes(a, ratio, false);
}

// ---- tensor access (spec 000 §2.4.1) ----
// The tensor's slot whatever its element size (the half-register accesses move bytes).
inline TensorSlot& any_slot(InstanceContext& c, tensor t, const char* intrinsic) {
  if (static_cast<unsigned>(t.id) >= static_cast<unsigned>(c.tensor_count)) [[unlikely]]
    bad_tensor_fault(c, t.id, intrinsic);
  if (c.tensors[t.id].reaches_past) [[unlikely]]
    descriptor_reach_fault(c, t.id, intrinsic);
  return c.tensors[t.id];
}
inline TensorSlot& slot(InstanceContext& c, tensor t, std::uint32_t elem_bytes,
                        const char* intrinsic) {
  TensorSlot& s = any_slot(c, t, intrinsic);
  if (s.elem_bytes != elem_bytes) [[unlikely]]
    element_size_fault(c, t.id, elem_bytes, intrinsic);
  return s;
}
// Element offset of coord when dims 1..4 are inside the tensor, else -1.
inline std::int64_t outer_offset(const TensorSlot& s, const int5& c) {
  std::int64_t off = 0;
  for (int d = 1; d < 5; ++d) {
    if (static_cast<std::uint64_t>(c.v[d]) >= static_cast<std::uint64_t>(s.size[d])) return -1;
    off += c.v[d] * s.stride[d];
  }
  return off;
}
template <typename V>
inline V load(const int5& coord, tensor t, const char* intrinsic) {
  using T = lane_t<V>;
  InstanceContext& c = instance(intrinsic);
  TensorSlot& s = slot(c, t, sizeof(T), intrinsic);
  V r(no_init_t{});
  r.ready = global_read(c, 0);
  const std::int64_t outer = outer_offset(s, coord);
  const std::int64_t x0 = coord.v[0];
  if (outer >= 0 && x0 >= 0 && x0 + V::lanes <= s.size[0] && s.stride[0] == 1) [[likely]] {
    const std::int64_t first = (outer + x0) * static_cast<std::int64_t>(sizeof(T));
    std::memcpy(r.v, s.base + first, sizeof r.v);
    c.counters.bytes_read += sizeof r.v;
    if (s.stored) [[unlikely]]
      check_coherency(c, t.id, coord, first, first + static_cast<std::int64_t>(sizeof r.v));
  } else {
    load_slow(c, s, coord, r.v, sizeof(T), V::lanes);
  }
  return r;
}
template <typename V>
inline void store(const int5& coord, tensor t, const V& value, const char* intrinsic) {
  using T = lane_t<V>;
  InstanceContext& c = instance(intrinsic);
  TensorSlot& s = slot(c, t, sizeof(T), intrinsic);
  global_write(c, value.ready);
  const std::int64_t outer = outer_offset(s, coord);
  const std::int64_t x0 = coord.v[0];
  if (outer >= 0 && x0 >= 0 && x0 + V::lanes <= s.size[0] && s.stride[0] == 1) [[likely]] {
    const std::int64_t first = (outer + x0) * static_cast<std::int64_t>(sizeof(T));
    std::memcpy(s.base + first, value.v, sizeof value.v);
    c.counters.bytes_written += sizeof value.v;
    if (c.coherency_check) note_store(s, first, first + static_cast<std::int64_t>(sizeof value.v));
  } else {
    store_slow(c, s, coord, value.v, sizeof(T), V::lanes);
  }
}

// Pad value bits reinterpreted as the element type.
template <typename T>
inline T pad_as(const TensorSlot& s) {
  T v;
  std::memcpy(&v, &s.pad_bits, sizeof(T));
  return v;
}
template <typename T>
inline void set_pad(tensor t, T value, const char* intrinsic) {
  InstanceContext& c = instance(intrinsic);
  TensorSlot& s = slot(c, t, sizeof(T), intrinsic);
  s.pad_bits = 0;
  std::memcpy(&s.pad_bits, &value, sizeof(T));
  c.clock.issue(kSpu, 0);
}
template <typename T>
inline T get_pad(tensor t, const char* intrinsic) {
  InstanceContext& c = instance(intrinsic);
  c.clock.issue(kSpu, 0);
  return pad_as<T>(slot(c, t, sizeof(T), intrinsic));
}

// The address of one element, for scalar global access (spec 000 §2.5.2): address arithmetic
// (one SPU issue) that never faults; the access through it does. Inline: kernels that move
// data lane by lane call it once per lane.
inline global_address gen_addr(const int5& coord, tensor t, const char* intrinsic) {
  InstanceContext& c = instance(intrinsic);
  if (static_cast<unsigned>(t.id) >= static_cast<unsigned>(c.tensor_count)) [[unlikely]]
    bad_tensor_fault(c, t.id, intrinsic);
  const TensorSlot& s = c.tensors[t.id];
  c.clock.issue(kSpu, 0);
  std::int64_t off = 0;
  bool inside = true;
  for (int d = 0; d < 5; ++d) {
    inside = inside && !s.reaches_past && coord.v[d] >= 0 && coord.v[d] < s.size[d];
    off += static_cast<std::int64_t>(coord.v[d]) * s.stride[d];
  }
  // Address arithmetic only: the pointer may lie outside the tensor; the access faults.
  std::byte* p = inside ? s.base + off * s.elem_bytes : nullptr;
  return global_address(p, t.id, coord, s.elem_bytes, inside);
}
// The fault of an access through an address gen_addr did not make or that lies outside its
// tensor (out of line: the rare path of raw_global_access).
[[noreturn]] void raw_global_access_fault(const global_address& a);
inline void raw_global_access(const global_address& a) {
  InstanceContext& c = instance("__global__ pointer");
  if (a.tensor_id() < 0 || !a.inside()) [[unlikely]]
    raw_global_access_fault(a);
  // One scalar access through the scalar cache: one element, one cycle of the port (§2.8).
  global_read(c, 0, 1);
  c.counters.bytes_read += a.element_bytes();
}
// Scalar accesses through an address: a DeviceFault naming the kernel, tensor and coordinates
// when it points outside its tensor; one global transaction on the port for one cycle, and the
// bytes. A read returns the cycle its value is ready.
std::uint64_t scalar_global_read(const global_address& a, void* out, std::size_t bytes,
                                 const char* intrinsic);
void scalar_global_write(const global_address& a, const void* in, std::size_t bytes,
                         const char* intrinsic);

}  // namespace detail

// TPC-C's `__global__ T*` in a file built by tessera_add_tpc_kernels, which writes its
// declarations as global_ptr<T>: every read and write through it is a scalar global access,
// checked against its tensor and counted (spec 000 §2.5.2), as on the hardware, where the access
// and not the address faults. p[i] is the element i further along dimension 0.
template <typename T>
class global_ptr {
  using value_type = std::remove_const_t<T>;

 public:
  class reference {
   public:
    explicit reference(const global_address& a) : a_(a) {}
    operator value_type() const {  // NOLINT(google-explicit-constructor): a read
      value_type v{};
      detail::scalar_global_read(a_, &v, sizeof v, "a __global__ pointer");
      return v;
    }
    const reference& operator=(value_type v) const requires(!std::is_const_v<T>) {
      detail::scalar_global_write(a_, &v, sizeof v, "a __global__ pointer");
      return *this;
    }
    const reference& operator=(const reference& r) const requires(!std::is_const_v<T>) {
      return *this = static_cast<value_type>(r);
    }
    const reference& operator+=(value_type v) const { return *this = *this + v; }
    const reference& operator-=(value_type v) const { return *this = *this - v; }
    const reference& operator*=(value_type v) const { return *this = *this * v; }

   private:
    global_address a_;
  };

  global_ptr() = default;
  global_ptr(const global_address& a) : a_(a) {}  // NOLINT(google-explicit-constructor)
  reference operator*() const { return reference(a_); }
  reference operator[](int i) const {
    if (i == 0) return reference(a_);
    int5 c = a_.coord();
    c[0] += i;
    return reference(detail::gen_addr(c, tensor(a_.tensor_id()), "a __global__ pointer"));
  }
  const global_address& address() const { return a_; }
  // The address itself, for the intrinsics that take one (v_f32_ld_g(p), s_i32_st_g(p, v)).
  operator const global_address&() const { return a_; }  // NOLINT(google-explicit-constructor)

 private:
  global_address a_;
};

// `__global__ void*`: an address without an element type, for the intrinsics that take one
// (Habana's avg_pool: `__global__ void* a = gen_addr(c, t); v_f32_ld_g(a)`).
template <typename T>
  requires std::is_void_v<T>
class global_ptr<T> {
 public:
  global_ptr(const global_address& a) : a_(a) {}  // NOLINT(google-explicit-constructor)
  operator const global_address&() const { return a_; }  // NOLINT(google-explicit-constructor)
  const global_address& address() const { return a_; }

 private:
  global_address a_;
};

// ---------------------------------------------------------------------------------------------
// Per-dtype intrinsics. D: dtype suffix, V: vector type.
// ---------------------------------------------------------------------------------------------

#define TESSERA_TPC_BINARY(D, V, NAME, OP)                                                         \
  inline V v_##D##_##NAME##_v_v(const V& a, const V& b) {                                          \
    return detail::on_vpu([&] { return detail::map2(a, b, detail::OP{}); }, a, b);                 \
  }                                                                                                \
  inline V v_##D##_##NAME##_v_s(const V& a, detail::scalar_t<V> b) {                               \
    return detail::on_vpu([&] { return detail::map2s(a, b, detail::OP{}); }, a);                   \
  }                                                                                                \
  inline V v_##D##_##NAME##_v_v_b(const V& a, const V& b, const V& income, bool p, bool pol) {     \
    return detail::on_vpu(                                                                         \
        [&] { return detail::enabled(p, pol) ? detail::map2(a, b, detail::OP{}) : income; }, a, b, \
        income);                                                                                   \
  }                                                                                                \
  inline V v_##D##_##NAME##_v_v_b(const V& a, const V& b, bool p, bool pol) {                      \
    return v_##D##_##NAME##_v_v_b(a, b, V(), p, pol);                                              \
  }                                                                                                \
  inline V v_##D##_##NAME##_v_s_b(const V& a, detail::scalar_t<V> b, const V& income, bool p,      \
                                  bool pol) {                                                      \
    return detail::on_vpu(                                                                         \
        [&] { return detail::enabled(p, pol) ? detail::map2s(a, b, detail::OP{}) : income; }, a,   \
        income);                                                                                   \
  }                                                                                                \
  inline V v_##D##_##NAME##_v_s_b(const V& a, detail::scalar_t<V> b, bool p, bool pol) {           \
    return v_##D##_##NAME##_v_s_b(a, b, V(), p, pol);                                              \
  }                                                                                                \
  inline V v_##D##_##NAME##_v_v_vb(const V& a, const V& b, const V& income, const bool256& p,      \
                                   bool pol) {                                                     \
    return detail::on_vpu(                                                                         \
        [&] { return detail::blend(detail::map2(a, b, detail::OP{}), income, p, pol); }, a, b,     \
        income, p);                                                                                \
  }                                                                                                \
  inline V v_##D##_##NAME##_v_v_vb(const V& a, const V& b, const bool256& p, bool pol) {           \
    return v_##D##_##NAME##_v_v_vb(a, b, V(), p, pol);                                             \
  }                                                                                                \
  inline V v_##D##_##NAME##_v_s_vb(const V& a, detail::scalar_t<V> b, const V& income,             \
                                   const bool256& p, bool pol) {                                   \
    return detail::on_vpu(                                                                         \
        [&] { return detail::blend(detail::map2s(a, b, detail::OP{}), income, p, pol); }, a,       \
        income, p);                                                                                \
  }                                                                                                \
  inline V v_##D##_##NAME##_v_s_vb(const V& a, detail::scalar_t<V> b, const bool256& p,            \
                                   bool pol) {                                                     \
    return v_##D##_##NAME##_v_s_vb(a, b, V(), p, pol);                                             \
  }

#define TESSERA_TPC_UNARY(D, V, NAME, EXPR)                                                 \
  inline V v_##D##_##NAME##_v(const V& a) {                                                 \
    return detail::on_vpu(                                                                  \
        [&] { return detail::map1(a, [](detail::scalar_t<V> x) { return EXPR; }); }, a);    \
  }                                                                                         \
  inline V v_##D##_##NAME##_v_b(const V& a, const V& income, bool p, bool pol) {            \
    return detail::on_vpu(                                                                  \
        [&] {                                                                               \
          return detail::enabled(p, pol)                                                    \
                     ? detail::map1(a, [](detail::scalar_t<V> x) { return EXPR; })          \
                     : income;                                                              \
        },                                                                                  \
        a, income);                                                                         \
  }                                                                                         \
  inline V v_##D##_##NAME##_v_vb(const V& a, const V& income, const bool256& p, bool pol) { \
    return detail::on_vpu(                                                                  \
        [&] {                                                                               \
          return detail::blend(detail::map1(a, [](detail::scalar_t<V> x) { return EXPR; }), \
                               income, p, pol);                                             \
        },                                                                                  \
        a, income, p);                                                                      \
  }

#define TESSERA_TPC_CMP(D, V, NAME)                                                                \
  inline bool256 bv_##D##_cmp_##NAME##_v_v(const V& a, const V& b) {                               \
    return detail::on_vpu([&] { return detail::compare(a, b, detail::cmp_##NAME{}); }, a, b);      \
  }                                                                                                \
  inline bool256 bv_##D##_cmp_##NAME##_v_s(const V& a, detail::scalar_t<V> b) {                    \
    return detail::on_vpu([&] { return detail::compare(a, V(b), detail::cmp_##NAME{}); }, a);      \
  }                                                                                                \
  inline bool256 bv_##D##_cmp_##NAME##_v_v_b(const V& a, const V& b, const bool256& income,        \
                                             bool p, bool pol) {                                   \
    return detail::on_vpu(                                                                         \
        [&] {                                                                                      \
          return detail::enabled(p, pol) ? detail::compare(a, b, detail::cmp_##NAME{}) : income;   \
        },                                                                                         \
        a, b, income);                                                                             \
  }                                                                                                \
  inline bool256 bv_##D##_cmp_##NAME##_v_v_b(const V& a, const V& b, bool p, bool pol) {           \
    return bv_##D##_cmp_##NAME##_v_v_b(a, b, bool256(), p, pol);                                   \
  }                                                                                                \
  inline bool256 bv_##D##_cmp_##NAME##_v_s_b(const V& a, detail::scalar_t<V> b,                    \
                                             const bool256& income, bool p, bool pol) {            \
    return detail::on_vpu(                                                                         \
        [&] {                                                                                      \
          return detail::enabled(p, pol) ? detail::compare(a, V(b), detail::cmp_##NAME{})          \
                                         : income;                                                 \
        },                                                                                         \
        a, income);                                                                                \
  }                                                                                                \
  inline bool256 bv_##D##_cmp_##NAME##_v_s_b(const V& a, detail::scalar_t<V> b, bool p,            \
                                             bool pol) {                                           \
    return bv_##D##_cmp_##NAME##_v_s_b(a, b, bool256(), p, pol);                                   \
  }                                                                                                \
  inline bool256 bv_##D##_cmp_##NAME##_v_v_vb(const V& a, const V& b, const bool256& income,       \
                                              const bool256& p, bool pol) {                        \
    return detail::on_vpu(                                                                         \
        [&] { return detail::mask(detail::compare(a, b, detail::cmp_##NAME{}), income, p, pol); }, \
        a, b, income, p);                                                                          \
  }                                                                                                \
  inline bool256 bv_##D##_cmp_##NAME##_v_v_vb(const V& a, const V& b, const bool256& p,            \
                                              bool pol) {                                          \
    return bv_##D##_cmp_##NAME##_v_v_vb(a, b, bool256(), p, pol);                                  \
  }                                                                                                \
  inline bool256 bv_##D##_cmp_##NAME##_v_s_vb(const V& a, detail::scalar_t<V> b,                   \
                                              const bool256& income, const bool256& p, bool pol) { \
    return detail::on_vpu(                                                                         \
        [&] {                                                                                      \
          return detail::mask(detail::compare(a, V(b), detail::cmp_##NAME{}), income, p, pol);     \
        },                                                                                         \
        a, income, p);                                                                             \
  }                                                                                                \
  inline bool256 bv_##D##_cmp_##NAME##_v_s_vb(const V& a, detail::scalar_t<V> b, const bool256& p, \
                                              bool pol) {                                          \
    return bv_##D##_cmp_##NAME##_v_s_vb(a, b, bool256(), p, pol);                                  \
  }                                                                                                \
  /* sel: (a NAME b) ? c : d, lane by lane */                                                      \
  inline V v_##D##_sel_##NAME##_v_v_v_v(const V& a, const V& b, const V& c, const V& d) {          \
    return detail::on_vpu([&] { return detail::select(a, b, c, d, detail::cmp_##NAME{}); }, a, b,  \
                          c, d);                                                                   \
  }                                                                                                \
  inline V v_##D##_sel_##NAME##_v_s_v_v(const V& a, detail::scalar_t<V> b, const V& c,             \
                                        const V& d) {                                              \
    return detail::on_vpu([&] { return detail::select(a, V(b), c, d, detail::cmp_##NAME{}); }, a,  \
                          c, d);                                                                   \
  }

namespace detail {
// A reduction is a sequence of tpc.reduction_vpu_cycles VPU issues (shuffles and operations).
template <typename R, typename V>
inline R on_reduction(R result, const V& a) {
  InstanceContext* c = current_instance;
  return on_vpu_long(
      c ? c->reduction_issues : 1, [&] { return std::move(result); }, a);
}
}  // namespace detail

#define TESSERA_TPC_REDUCE(D, V, NAME, OP)                           \
  inline V v_##D##_reduce_##NAME(const V& a) {                       \
    return detail::on_reduction(detail::reduce(a, detail::OP{}), a); \
  }

// Everything every dtype has: arithmetic, min/max, mac, compare, select, move, tensor access,
// reductions.
#define TESSERA_TPC_COMMON(D, V)                                                                  \
  TESSERA_TPC_BINARY(D, V, add, op_add)                                                           \
  TESSERA_TPC_BINARY(D, V, sub, op_sub)                                                           \
  TESSERA_TPC_BINARY(D, V, mul, op_mul)                                                           \
  TESSERA_TPC_BINARY(D, V, min, op_min)                                                           \
  TESSERA_TPC_BINARY(D, V, max, op_max)                                                           \
  TESSERA_TPC_CMP(D, V, eq)                                                                       \
  TESSERA_TPC_CMP(D, V, neq)                                                                      \
  TESSERA_TPC_CMP(D, V, less)                                                                     \
  TESSERA_TPC_CMP(D, V, leq)                                                                      \
  TESSERA_TPC_CMP(D, V, grt)                                                                      \
  TESSERA_TPC_CMP(D, V, geq)                                                                      \
  TESSERA_TPC_REDUCE(D, V, add, op_add)                                                           \
  TESSERA_TPC_REDUCE(D, V, mul, op_mul)                                                           \
  TESSERA_TPC_REDUCE(D, V, min, op_min)                                                           \
  TESSERA_TPC_REDUCE(D, V, max, op_max)                                                           \
  /* acc + a * b */                                                                               \
  inline V v_##D##_mac_v_v(const V& a, const V& b, const V& acc) {                                \
    V r(detail::no_init_t{});                                                                     \
    for (int i = 0; i < V::lanes; ++i)                                                            \
      r.v[i] = static_cast<detail::lane_t<V>>(                                                    \
          detail::op_add{}(static_cast<detail::scalar_t<V>>(acc.v[i]),                            \
                           detail::op_mul{}(static_cast<detail::scalar_t<V>>(a.v[i]),             \
                                            static_cast<detail::scalar_t<V>>(b.v[i]))));          \
    return detail::on_vpu([&] { return r; }, a, b, acc);                                          \
  }                                                                                               \
  inline V v_##D##_mac_v_s(const V& a, detail::scalar_t<V> b, const V& acc) {                     \
    return v_##D##_mac_v_v(a, V(b), acc);                                                         \
  }                                                                                               \
  inline V v_##D##_mac_v_v_b(const V& a, const V& b, const V& acc, bool p, bool pol) {            \
    if (!detail::enabled(p, pol)) return detail::on_vpu([&] { return acc; }, a, b, acc);          \
    return v_##D##_mac_v_v(a, b, acc);                                                            \
  }                                                                                               \
  inline V v_##D##_mac_v_v_vb(const V& a, const V& b, const V& acc, const bool256& p, bool pol) { \
    V r = detail::blend(v_##D##_mac_v_v(a, b, acc), acc, p, pol);                                 \
    r.ready = std::max(r.ready, p.ready);                                                         \
    return r;                                                                                     \
  }                                                                                               \
  /* moves (spec 000 §2.5.3 example: v_f32_mov_s_vb(s, income, mask, 0)) */                      \
  inline V v_##D##_mov_v(const V& a) {                                                            \
    return detail::on_vpu([&] { return a; }, a);                                                  \
  }                                                                                               \
  inline V v_##D##_mov_s(detail::scalar_t<V> s) {                                                 \
    return detail::on_vpu([&] { return V(s); });                                                  \
  }                                                                                               \
  inline V v_##D##_mov_v_b(const V& a, const V& income, bool p, bool pol) {                       \
    return detail::on_vpu([&] { return detail::enabled(p, pol) ? a : income; }, a, income);       \
  }                                                                                               \
  inline V v_##D##_mov_s_b(detail::scalar_t<V> s, const V& income, bool p, bool pol) {            \
    return detail::on_vpu([&] { return detail::enabled(p, pol) ? V(s) : income; }, income);       \
  }                                                                                               \
  inline V v_##D##_mov_v_vb(const V& a, const V& income, const bool256& p, bool pol) {            \
    return detail::on_vpu([&] { return detail::blend(a, income, p, pol); }, a, income, p);        \
  }                                                                                               \
  inline V v_##D##_mov_s_vb(detail::scalar_t<V> s, const V& income, const bool256& p, bool pol) { \
    return detail::on_vpu([&] { return detail::blend(V(s), income, p, pol); }, income, p);        \
  }                                                                                               \
  /* tensor access (spec 000 §2.4.1): pad outside on reads, culled outside on writes */          \
  inline V v_##D##_ld_tnsr_i(const int5& coord, tensor t) {                                       \
    return detail::load<V>(coord, t, "v_" #D "_ld_tnsr_i");                                       \
  }                                                                                               \
  inline V v_##D##_ld_tnsr(const int5& coord, tensor t) {                                         \
    return detail::load<V>(coord, t, "v_" #D "_ld_tnsr");                                         \
  }                                                                                               \
  inline V v_##D##_ld_tnsr_i_b(const int5& coord, tensor t, const V& income, bool p, bool pol) {  \
    if (!detail::enabled(p, pol))                                                                 \
      return detail::on_slot(                                                                     \
          detail::kLoad, [&] { return income; }, income);                                         \
    return detail::load<V>(coord, t, "v_" #D "_ld_tnsr_i_b");                                     \
  }                                                                                               \
  inline V v_##D##_ld_tnsr_b(const int5& coord, tensor t, const V& income, bool p, bool pol) {    \
    return v_##D##_ld_tnsr_i_b(coord, t, income, p, pol);                                         \
  }                                                                                               \
  inline V v_##D##_ld_tnsr_i_vb(const int5& coord, tensor t, const V& income, const bool256& p,   \
                                bool pol) {                                                       \
    V r = detail::blend(detail::load<V>(coord, t, "v_" #D "_ld_tnsr_i_vb"), income, p, pol);      \
    r.ready = std::max({r.ready, income.ready, p.ready});                                         \
    return r;                                                                                     \
  }                                                                                               \
  inline void D##_st_tnsr_i_v(const int5& coord, tensor t, const V& value) {                      \
    detail::store(coord, t, value, #D "_st_tnsr_i_v");                                            \
  }                                                                                               \
  inline void D##_st_tnsr_i_v_b(const int5& coord, tensor t, const V& value, bool p, bool pol) {  \
    if (!detail::enabled(p, pol)) {                                                               \
      detail::issue(detail::kStore, value.ready);                                                 \
      return;                                                                                     \
    }                                                                                             \
    detail::store(coord, t, value, #D "_st_tnsr_i_v_b");                                          \
  }

#define TESSERA_TPC_SIGNED(D, V)                 \
  TESSERA_TPC_UNARY(D, V, abs, (x < 0 ? -x : x)) \
  TESSERA_TPC_UNARY(D, V, neg, (-x))

// Integer types: logic and shifts.
#define TESSERA_TPC_INTEGER(D, V)       \
  TESSERA_TPC_BINARY(D, V, and, op_and) \
  TESSERA_TPC_BINARY(D, V, or, op_or)   \
  TESSERA_TPC_BINARY(D, V, xor, op_xor) \
  TESSERA_TPC_BINARY(D, V, shl, op_shl) \
  TESSERA_TPC_BINARY(D, V, shr, op_shr) \
  TESSERA_TPC_UNARY(D, V, not, (~x))

TESSERA_TPC_COMMON(f32, float64)
TESSERA_TPC_COMMON(bf16, bfloat128)
TESSERA_TPC_COMMON(i32, int64)
TESSERA_TPC_COMMON(u32, uint64)
TESSERA_TPC_COMMON(i16, short128)
TESSERA_TPC_COMMON(u16, ushort128)
TESSERA_TPC_COMMON(i8, char256)
TESSERA_TPC_COMMON(u8, uchar256)

TESSERA_TPC_SIGNED(f32, float64)
TESSERA_TPC_SIGNED(bf16, bfloat128)
TESSERA_TPC_SIGNED(i32, int64)
TESSERA_TPC_SIGNED(i16, short128)
TESSERA_TPC_SIGNED(i8, char256)

TESSERA_TPC_INTEGER(i32, int64)
TESSERA_TPC_INTEGER(u32, uint64)
TESSERA_TPC_INTEGER(i16, short128)
TESSERA_TPC_INTEGER(u16, ushort128)
TESSERA_TPC_INTEGER(i8, char256)
TESSERA_TPC_INTEGER(u8, uchar256)

// argmin / argmax of Table 3 (spec 000 §2.6.3).
namespace detail {
template <typename P, typename V>
inline P timed_pair(P pair, const V& a) {
  pair.v1 = on_reduction(pair.v1, a);
  pair.v2.ready = pair.v1.ready;
  return pair;
}
}  // namespace detail
inline uint64_float64_pair_t v_f32_reduce_argmin(const float64& a) {
  return detail::timed_pair(detail::arg_reduce<float64, uint64_float64_pair_t, false>(a), a);
}
inline uint64_float64_pair_t v_f32_reduce_argmax(const float64& a) {
  return detail::timed_pair(detail::arg_reduce<float64, uint64_float64_pair_t, true>(a), a);
}
inline uint64_int64_pair_t v_i32_reduce_argmin(const int64& a) {
  return detail::timed_pair(detail::arg_reduce<int64, uint64_int64_pair_t, false>(a), a);
}
inline uint64_int64_pair_t v_i32_reduce_argmax(const int64& a) {
  return detail::timed_pair(detail::arg_reduce<int64, uint64_int64_pair_t, true>(a), a);
}
// The spec's Table 3 spells the bf16 maximum "v_fb16_reduce_max"; accept that spelling too.
inline bfloat128 v_fb16_reduce_max(const bfloat128& a) {
  return v_bf16_reduce_max(a);
}

// ---- bool256 logic ----
inline bool256 bv_and_bv_bv(const bool256& a, const bool256& b) {
  return a & b;
}
inline bool256 bv_or_bv_bv(const bool256& a, const bool256& b) {
  return a | b;
}
inline bool256 bv_xor_bv_bv(const bool256& a, const bool256& b) {
  return a ^ b;
}
inline bool256 bv_not_bv(const bool256& a) {
  return ~a;
}
inline bool256 bv_mov_b(bool value) {
  return detail::on_vpu([&] { return bool256(static_cast<unsigned char>(value ? 0xff : 0)); });
}
inline bool256 bv_mov_bv(const bool256& a) {
  return detail::on_vpu([&] { return a; }, a);
}

// ---- conversions: v_convert_<from>_to_<to>_v(a, rounding, lane, income); a narrowing convert
// writes the lanes `lane` selects (detail::convert), a widening one reads them ----
#define TESSERA_TPC_CONVERT(FD, FV, TD, TV)                                                 \
  inline TV v_convert_##FD##_to_##TD##_v(const FV& a, int rounding = SW_RHNE, int lane = 0, \
                                         const TV& income = TV()) {                         \
    return detail::on_vpu(                                                                  \
        [&] {                                                                               \
          const char* name = "v_convert_" #FD "_to_" #TD "_v";                              \
          detail::check_lane(                                                               \
              lane, std::max(TV::lanes, FV::lanes) / std::min(TV::lanes, FV::lanes), name); \
          return detail::convert<TV, FV>(                                                   \
              a, detail::rounding_of(detail::convert_rounding(rounding, name), name), lane, \
              income);                                                                      \
        },                                                                                  \
        a, income);                                                                         \
  }
#define TESSERA_TPC_CONVERT_FROM(FD, FV)       \
  TESSERA_TPC_CONVERT(FD, FV, f32, float64)    \
  TESSERA_TPC_CONVERT(FD, FV, bf16, bfloat128) \
  TESSERA_TPC_CONVERT(FD, FV, i32, int64)      \
  TESSERA_TPC_CONVERT(FD, FV, u32, uint64)     \
  TESSERA_TPC_CONVERT(FD, FV, i16, short128)   \
  TESSERA_TPC_CONVERT(FD, FV, u16, ushort128)  \
  TESSERA_TPC_CONVERT(FD, FV, i8, char256)     \
  TESSERA_TPC_CONVERT(FD, FV, u8, uchar256)
TESSERA_TPC_CONVERT_FROM(f32, float64)
TESSERA_TPC_CONVERT_FROM(bf16, bfloat128)
TESSERA_TPC_CONVERT_FROM(i32, int64)
TESSERA_TPC_CONVERT_FROM(u32, uint64)
TESSERA_TPC_CONVERT_FROM(i16, short128)
TESSERA_TPC_CONVERT_FROM(u16, ushort128)
TESSERA_TPC_CONVERT_FROM(i8, char256)
TESSERA_TPC_CONVERT_FROM(u8, uchar256)

#undef TESSERA_TPC_CONVERT_FROM
#undef TESSERA_TPC_CONVERT
#undef TESSERA_TPC_INTEGER
#undef TESSERA_TPC_SIGNED
#undef TESSERA_TPC_COMMON
#undef TESSERA_TPC_REDUCE
#undef TESSERA_TPC_CMP
#undef TESSERA_TPC_UNARY
#undef TESSERA_TPC_BINARY

// ---- lane ids (spec 000 §2.5.3) ----
inline uint64 read_lane_id_4b_b() {
  uint64 r(detail::no_init_t{});
  for (int i = 0; i < 64; ++i) r.v[i] = static_cast<std::uint32_t>(i);
  return detail::on_vpu([&] { return r; });
}
inline ushort128 read_lane_id_2b_b() {
  ushort128 r(detail::no_init_t{});
  for (int i = 0; i < 128; ++i) r.v[i] = static_cast<std::uint16_t>(i);
  return detail::on_vpu([&] { return r; });
}
inline uchar256 read_lane_id_1b_b() {
  uchar256 r(detail::no_init_t{});
  for (int i = 0; i < 256; ++i) r.v[i] = static_cast<std::uint8_t>(i);
  return detail::on_vpu([&] { return r; });
}
#define V_LANE_ID_32 (::tessera::tpc::read_lane_id_4b_b())
#define V_LANE_ID_16 (::tessera::tpc::read_lane_id_2b_b())
#define V_LANE_ID_8 (::tessera::tpc::read_lane_id_1b_b())

// ---- program management (spec 000 §2.6.1) ----
inline int5 get_index_space_offset() {
  detail::InstanceContext& c = detail::instance("get_index_space_offset");
  c.clock.issue(detail::kSpu, 0);
  return c.offset;
}
inline int5 get_index_space_size() {
  detail::InstanceContext& c = detail::instance("get_index_space_size");
  c.clock.issue(detail::kSpu, 0);
  return c.size;
}
unsigned int get_dim_size(tensor a, unsigned int dim);
unsigned int get_dim_stride(tensor a, unsigned int dim);
// Rewrite one dimension of the core's descriptor of tensor `a` for the rest of the program
// (tpc-intrinsics.h). Tessera keeps the tensor inside its buffer: a size or stride that would
// reach past it is a DeviceFault.
void set_dim_size(tensor a, unsigned int dim, unsigned int value);
void set_dim_stride(tensor a, unsigned int dim, unsigned int value);

#define TESSERA_TPC_PAD(NAME, T)                          \
  inline T get_pad_value_##NAME(tensor a) {               \
    return detail::get_pad<T>(a, "get_pad_value_" #NAME); \
  }                                                       \
  inline void set_pad_value_##NAME(tensor a, T value) {   \
    detail::set_pad<T>(a, value, "set_pad_value_" #NAME); \
  }
TESSERA_TPC_PAD(uint, std::uint32_t)
TESSERA_TPC_PAD(int, std::int32_t)
TESSERA_TPC_PAD(float, float)
TESSERA_TPC_PAD(short, std::int16_t)
TESSERA_TPC_PAD(ushort, std::uint16_t)
TESSERA_TPC_PAD(char, std::int8_t)
TESSERA_TPC_PAD(uchar, std::uint8_t)
#undef TESSERA_TPC_PAD
inline bf16 get_pad_value_bf16(tensor a) {
  return tessera::bf16::from_bits(detail::get_pad<std::uint16_t>(a, "get_pad_value_bf16"));
}
inline void set_pad_value_bf16(tensor a, bf16 value) {
  detail::set_pad<std::uint16_t>(a, value.bits, "set_pad_value_bf16");
}

// Atomic semaphore operation (spec 000 §2.8): commits all older vector stores, so later vector
// loads see them, then adds 1 to the core's semaphore (-1 with SW_DEC; SW_SPU / SW_VPU choose
// the stage, which Tessera does not distinguish). Clears the coherency tracker.
void aso(int switches = 0, bool predicate = true, bool polarity = false);

// ---- scalar global access (spec 000 §2.5.2) ----
inline global_address a_gen_addr_i(const int5& coord, tensor t) {
  return detail::gen_addr(coord, t, "a_gen_addr_i");
}
inline global_address a_gen_addr_i(tensor t, const int5& coord) {
  return a_gen_addr_i(coord, t);
}
inline global_address a_gen_addr_i_b(tensor t, const int5& coord) {
  return a_gen_addr_i(coord, t);
}
inline global_address a_gen_addr_i_b(const int5& coord, tensor t) {
  return a_gen_addr_i(coord, t);
}

// ---- random numbers (spec 000 §2.5.3): LFSR / S_LFSR read destructively, *_NO_CHANGE peek,
// assignment seeds. Each instance starts from a seed derived from its index-space offset.
namespace detail {
void lfsr_read(std::uint32_t out[64], bool advance);
void lfsr_seed(const std::uint32_t lanes[64]);
std::uint32_t s_lfsr_read(bool advance);
void s_lfsr_seed(std::uint32_t seed);

template <bool Advance>
struct vector_lfsr {
  template <typename V>
  requires(sizeof(V::v) == 256) operator V()
      const {  // NOLINT(google-explicit-constructor): reads like the TPC-C variable
    std::uint32_t lanes[64];
    lfsr_read(lanes, Advance);
    V r(no_init_t{});
    std::memcpy(r.v, lanes, sizeof lanes);
    return r;
  }
  template <typename V>
  requires(sizeof(V::v) == 256) const vector_lfsr& operator=(const V& seed) const {
    std::uint32_t lanes[64];
    std::memcpy(lanes, seed.v, sizeof lanes);
    lfsr_seed(lanes);
    return *this;
  }
};
template <bool Advance>
struct scalar_lfsr {
  operator std::uint32_t() const { return s_lfsr_read(Advance); }  // NOLINT
  operator std::int32_t() const {                                  // NOLINT
    return static_cast<std::int32_t>(s_lfsr_read(Advance));
  }
  const scalar_lfsr& operator=(std::uint32_t seed) const {
    s_lfsr_seed(seed);
    return *this;
  }
};
}  // namespace detail

inline constexpr detail::vector_lfsr<true> LFSR{};
inline constexpr detail::vector_lfsr<false> LFSR_NO_CHANGE{};
inline constexpr detail::scalar_lfsr<true> S_LFSR{};
inline constexpr detail::scalar_lfsr<false> S_LFSR_NO_CHANGE{};

}  // namespace tessera::tpc
