// The Quadric Chimera EPU SDK as spec 004 names it: qVar_t registers (one value per core of the
// lock-step array), qRow/qCol and Epu::coreDim, neighbour exchange, DdrTensor / OcmTensor with
// ROI descriptors, MemAllocator, memCpy, fetch/write flows with StreamSide and IteratorType,
// Rau, BroadcastStream / qBroadcast. Results are computed here a tile at a time, each operator
// one loop over all the cores' values; cycles are booked on the array's timeline (api/array.h)
// with costs from the preset. Users include <epu.hpp> (include/tessera/targets/epu/quadric),
// which brings these names into the global namespace as the SDK's examples use them.
// Epu::coreDim is fixed at compile time (TESSERA_EPU_CORE_DIM, default 16 for chimera-q16);
// the first SDK call checks that the device's array has that size. docs/targets/epu.md.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "tessera/core/error.h"
#include "tessera/sim/dma.h"
#include "tessera/sim/lockstep.h"
#include "tessera/sim/scheduler.h"
#include "tessera/targets/epu/api/array.h"

#ifndef TESSERA_EPU_CORE_DIM
#define TESSERA_EPU_CORE_DIM 16
#endif

namespace tessera::epu::sdk {

// ---- the array's size (spec 004 "Tiles": q8 8x8, q16 16x16) ----
struct Epu {
  static constexpr std::uint32_t coreDim = TESSERA_EPU_CORE_DIM;
  static constexpr std::uint32_t numCores = coreDim * coreDim;
};
static_assert(Epu::coreDim >= 2 && Epu::coreDim <= 64,
              "TESSERA_EPU_CORE_DIM must be between 2 and 64 (8 for q8, 16 for q16)");

// ---- FixedPoint16<fracBits>: a 16-bit signed value of raw / 2^fracBits ----
// Arithmetic saturates to the 16-bit range; products round to nearest.
template <int FracBits>
struct FixedPoint16 {
  static_assert(FracBits >= 0 && FracBits <= 15, "FixedPoint16<fracBits>: fracBits must be 0..15");
  static constexpr int fracBits = FracBits;
  std::int16_t raw = 0;

  constexpr FixedPoint16() = default;
  template <typename S, std::enable_if_t<std::is_integral_v<S>, int> = 0>
  constexpr FixedPoint16(S v) : raw(saturate(static_cast<std::int64_t>(v) * (std::int64_t{1} << FracBits))) {}
  // Rounds to nearest and saturates (NaN gives 0).
  template <typename S, std::enable_if_t<std::is_floating_point_v<S>, int> = 0>
  constexpr FixedPoint16(S v) : raw(from_float(static_cast<double>(v))) {}
  static constexpr std::int16_t from_float(double v) {
    if (!(v == v)) return 0;
    const double scaled = v * (1 << FracBits) + (v < 0 ? -0.5 : 0.5);
    return scaled >= 32767.0 ? 32767 : (scaled <= -32768.0 ? -32768 : static_cast<std::int16_t>(scaled));
  }
  static constexpr FixedPoint16 fromRaw(std::int32_t r) {
    FixedPoint16 f;
    f.raw = saturate(r);
    return f;
  }
  constexpr double toDouble() const { return static_cast<double>(raw) / (1 << FracBits); }
  constexpr float toFloat() const { return static_cast<float>(toDouble()); }
  explicit constexpr operator double() const { return toDouble(); }

  static constexpr std::int16_t saturate(std::int64_t v) {
    return static_cast<std::int16_t>(std::clamp<std::int64_t>(v, -32768, 32767));
  }
  friend constexpr FixedPoint16 operator+(FixedPoint16 a, FixedPoint16 b) { return fromRaw(a.raw + b.raw); }
  friend constexpr FixedPoint16 operator-(FixedPoint16 a, FixedPoint16 b) { return fromRaw(a.raw - b.raw); }
  friend constexpr FixedPoint16 operator*(FixedPoint16 a, FixedPoint16 b) {
    const std::int32_t p = std::int32_t{a.raw} * b.raw;
    return fromRaw(FracBits == 0 ? p : (p + (1 << (FracBits > 0 ? FracBits - 1 : 0))) >> FracBits);
  }
  // Truncates toward zero. A zero divisor is a UserError (qVar_t's operator/ names the core).
  friend constexpr FixedPoint16 operator/(FixedPoint16 a, FixedPoint16 b) {
    if (b.raw == 0)
      throw_user_error("FixedPoint16<{}> division by zero ({} / 0); guard the divisor", FracBits, a.toDouble());
    return fromRaw(static_cast<std::int32_t>((std::int64_t{a.raw} * (1 << FracBits)) / b.raw));
  }
  friend constexpr FixedPoint16 operator-(FixedPoint16 a) { return fromRaw(-std::int32_t{a.raw}); }
  friend constexpr bool operator==(FixedPoint16 a, FixedPoint16 b) { return a.raw == b.raw; }
  friend constexpr bool operator!=(FixedPoint16 a, FixedPoint16 b) { return a.raw != b.raw; }
  friend constexpr bool operator<(FixedPoint16 a, FixedPoint16 b) { return a.raw < b.raw; }
  friend constexpr bool operator<=(FixedPoint16 a, FixedPoint16 b) { return a.raw <= b.raw; }
  friend constexpr bool operator>(FixedPoint16 a, FixedPoint16 b) { return a.raw > b.raw; }
  friend constexpr bool operator>=(FixedPoint16 a, FixedPoint16 b) { return a.raw >= b.raw; }
};

// ---- enums of spec 004 ----
enum class StreamSide { NORTH = 0, SOUTH, EAST, WEST };
enum class IteratorType { XY_NO_BORDER = 0, YX_NO_BORDER, YX_BORDER, ZY_BORDER, ZY_NO_BORDER, ROW, ROW_ZY, LINE };
enum class BroadcastAction { PEEK = 0, POP };

namespace detail {

template <typename T>
struct is_fixed : std::false_type {};
template <int F>
struct is_fixed<FixedPoint16<F>> : std::true_type {};

template <typename T>
inline constexpr bool is_element_v =
    std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int16_t> ||
    std::is_same_v<T, std::uint16_t> || std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::uint32_t> ||
    std::is_same_v<T, char> || std::is_same_v<T, bool> || is_fixed<T>::value;

// U -> T keeps every value of U (int8 -> int16 -> int32, uint8 -> uint16 -> uint32, unsigned
// into a wider signed type): qVar_t converts implicitly there, as C++ integers do; other pairs
// convert explicitly.
template <typename U, typename T>
inline constexpr bool is_widening_v =
    std::is_integral_v<U> && std::is_integral_v<T> && !std::is_same_v<U, bool> && !std::is_same_v<T, bool> &&
    sizeof(U) < sizeof(T) && (std::is_signed_v<T> || !std::is_signed_v<U>);

template <typename T>
std::string elem_name() {
  if constexpr (is_fixed<T>::value) return fmt::format("FixedPoint16<{}>", T::fracBits);
  else if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_same_v<T, char>) return "char";
  else return fmt::format("{}int{}", std::is_signed_v<T> ? "" : "u", sizeof(T) * 8);
}

// The array now in use, checked once per device against Epu::coreDim and the 64-bit
// broadcast register the SDK is written for.
inline Array& arr() {
  Array& a = tessera::epu::detail::current();
  static std::uint64_t checked = 0;
  if (a.generation() != checked) {
    a.check_core_dim(Epu::coreDim);
    if (a.bus().width() != 8)
      throw_user_error("preset '{}': epu.broadcast_register_bytes is {}; the SDK's broadcast "
                       "register is 64 bits (spec 004 'How Broadcast Uses Core Registers')",
                       a.device().spec().name, a.bus().width());
    checked = a.generation();
  }
  return a;
}
inline void charge(std::uint64_t ops = 1) { arr().compute(ops); }
[[noreturn]] inline void core_fault(std::string_view api, const std::string& msg, std::size_t core) {
  arr().fault(api, msg, static_cast<int>(core));
}

}  // namespace detail

template <typename T>
class qVar_t;

// The ring of values just outside a tile that a BORDER iterator fetches with it: what a core on
// the array's edge receives from beyond the edge in a neighbour exchange. North and south rows
// include the corners (coreDim + 2 each), then the west and east columns (coreDim each).
template <typename T>
struct TileBorder {
  static constexpr std::size_t D = Epu::coreDim;
  std::array<T, 4 * D + 4> ring{};
  T& north(int c) { return ring[static_cast<std::size_t>(c + 1)]; }  // c in -1..D
  T& south(int c) { return ring[D + 2 + static_cast<std::size_t>(c + 1)]; }
  T& west(int r) { return ring[2 * D + 4 + static_cast<std::size_t>(r)]; }
  T& east(int r) { return ring[3 * D + 4 + static_cast<std::size_t>(r)]; }
  // The value at position (r, c) of the ring, r or c being -1 or D.
  T& at(int r, int c) {
    if (r < 0) return north(c);
    if (r >= static_cast<int>(D)) return south(c);
    return c < 0 ? west(r) : east(r);
  }
};

// ---- qVar_t<T>: one T per core ----
template <typename T>
class qVar_t {
  static_assert(detail::is_element_v<T>,
                "qVar_t<T>: T must be int8, int16, int32, uint32 (or uint8/uint16), bool or FixedPoint16<n>");

 public:
  using value_type = T;
  static constexpr std::size_t kCores = Epu::numCores;

  qVar_t() { v_.fill(T{}); }
  template <typename S, std::enable_if_t<std::is_arithmetic_v<S> || std::is_same_v<S, T>, int> = 0>
  qVar_t(S s) {
    v_.fill(static_cast<T>(s));
  }
  template <typename U, std::enable_if_t<detail::is_widening_v<U, T>, int> = 0>
  qVar_t(const qVar_t<U>& o) {
    for (std::size_t i = 0; i < kCores; ++i) v_[i] = convert<U>(o[i]);
    detail::charge();
  }
  template <typename U, std::enable_if_t<!std::is_same_v<U, T> && !detail::is_widening_v<U, T>, int> = 0>
  explicit qVar_t(const qVar_t<U>& o) {
    for (std::size_t i = 0; i < kCores; ++i) v_[i] = convert<U>(o[i]);
    detail::charge();
  }
  qVar_t(const qVar_t& o) : v_(o.v_), has_border_(o.has_border_) {
    if (has_border_) border_ = o.border_;
  }
  qVar_t& operator=(const qVar_t& o) {
    v_ = o.v_;
    has_border_ = o.has_border_;
    if (has_border_) border_ = o.border_;
    return *this;
  }

  T& operator[](std::size_t core) { return v_[core]; }
  const T& operator[](std::size_t core) const { return v_[core]; }
  T& at(std::uint32_t row, std::uint32_t col) { return v_[row * Epu::coreDim + col]; }
  const T& at(std::uint32_t row, std::uint32_t col) const { return v_[row * Epu::coreDim + col]; }
  T* data() { return v_.data(); }
  const T* data() const { return v_.data(); }

  // The border fetched with this tile by a BORDER iterator (none: cores past the edge get 0).
  bool hasBorder() const { return has_border_; }
  const TileBorder<T>& border() const { return border_; }
  TileBorder<T>& setBorder() {
    has_border_ = true;
    return border_;
  }
  void clearBorder() { has_border_ = false; }

  template <typename F>
  static qVar_t map2(const qVar_t& a, const qVar_t& b, F f) {
    qVar_t r(kNoInit);
    for (std::size_t i = 0; i < kCores; ++i) r.v_[i] = static_cast<T>(f(a.v_[i], b.v_[i]));
    detail::charge();
    return r;
  }
  template <typename F>
  qVar_t& apply(const qVar_t& b, F f) {
    for (std::size_t i = 0; i < kCores; ++i) v_[i] = static_cast<T>(f(v_[i], b.v_[i]));
    detail::charge();
    return *this;
  }

  // Integer arithmetic wraps at T's width, as the hardware's does (in unsigned arithmetic, so
  // that int32 overflow is defined).
  template <typename X>
  static auto wrap(X x) {
    if constexpr (std::is_integral_v<X> && !std::is_same_v<X, bool>)
      return static_cast<std::make_unsigned_t<decltype(+x)>>(x);
    else
      return x;
  }
#define TESSERA_EPU_BINOP(OP, COND)                                                              \
  template <typename Q = qVar_t, std::enable_if_t<(COND) && std::is_same_v<Q, qVar_t>, int> = 0> \
  friend Q operator OP(const qVar_t& a, const qVar_t& b) {                                      \
    return map2(a, b, [](T x, T y) { return static_cast<T>(wrap(x) OP wrap(y)); });            \
  }                                                                                              \
  template <typename Q = qVar_t, std::enable_if_t<(COND) && std::is_same_v<Q, qVar_t>, int> = 0> \
  qVar_t& operator OP##=(const qVar_t& b) {                                                       \
    return apply(b, [](T x, T y) { return static_cast<T>(wrap(x) OP wrap(y)); });              \
  }
  static constexpr bool kArith = !std::is_same_v<T, bool>;
  static constexpr bool kInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
  TESSERA_EPU_BINOP(+, kArith)
  TESSERA_EPU_BINOP(-, kArith)
  TESSERA_EPU_BINOP(*, kArith)
  TESSERA_EPU_BINOP(&, kInt)
  TESSERA_EPU_BINOP(|, kInt)
  TESSERA_EPU_BINOP(^, kInt)
#undef TESSERA_EPU_BINOP

  // Division and remainder: a zero divisor on any core is a DeviceFault naming the core.
  friend qVar_t operator/(const qVar_t& a, const qVar_t& b) {
    static_assert(kArith, "qVar_t<bool> has no division");
    check_divisor(b, "qVar_t operator/");
    return map2(a, b, [](T x, T y) { return divide(x, y); });
  }
  qVar_t& operator/=(const qVar_t& b) {
    check_divisor(b, "qVar_t operator/=");
    return apply(b, [](T x, T y) { return divide(x, y); });
  }
  friend qVar_t operator%(const qVar_t& a, const qVar_t& b) {
    static_assert(kInt, "qVar_t operator%: integer types only");
    check_divisor(b, "qVar_t operator%");
    return map2(a, b, [](T x, T y) { return kSignedInt && y == T(-1) ? T{} : static_cast<T>(x % y); });
  }
  qVar_t& operator%=(const qVar_t& b) { return *this = *this % b; }
  qVar_t& operator<<=(const qVar_t& b) { return *this = *this << b; }
  qVar_t& operator>>=(const qVar_t& b) { return *this = *this >> b; }
  // Increment and decrement: one add per core (FixedPoint16 steps by 1.0).
  qVar_t& operator++() { return *this += qVar_t(1); }
  qVar_t& operator--() { return *this -= qVar_t(1); }
  qVar_t operator++(int) {
    qVar_t old = *this;
    ++*this;
    return old;
  }
  qVar_t operator--(int) {
    qVar_t old = *this;
    --*this;
    return old;
  }
  // Shifts by a per-core amount (integer types).
  friend qVar_t operator<<(const qVar_t& a, const qVar_t& b) {
    static_assert(kInt, "qVar_t operator<<: integer types only");
    return map2(a, b, [](T x, T y) { return static_cast<T>(static_cast<std::make_unsigned_t<T>>(x) << (y & (8 * sizeof(T) - 1))); });
  }
  friend qVar_t operator>>(const qVar_t& a, const qVar_t& b) {
    static_assert(kInt, "qVar_t operator>>: integer types only");
    return map2(a, b, [](T x, T y) { return x >> (y & (8 * sizeof(T) - 1)); });
  }
  friend qVar_t operator-(const qVar_t& a) {
    qVar_t r(kNoInit);
    for (std::size_t i = 0; i < kCores; ++i) r.v_[i] = static_cast<T>(T{} - wrap(a.v_[i]));
    detail::charge();
    return r;
  }
  friend qVar_t operator~(const qVar_t& a) {
    static_assert(kInt, "qVar_t operator~: integer types only");
    qVar_t r(kNoInit);
    for (std::size_t i = 0; i < kCores; ++i) r.v_[i] = static_cast<T>(~a.v_[i]);
    detail::charge();
    return r;
  }

#define TESSERA_EPU_CMP(OP)                                                            \
  friend qVar_t<bool> operator OP(const qVar_t& a, const qVar_t& b) {                 \
    qVar_t<bool> r;                                                                    \
    for (std::size_t i = 0; i < kCores; ++i) r[i] = a.v_[i] OP b.v_[i];               \
    detail::charge();                                                                  \
    return r;                                                                          \
  }
  TESSERA_EPU_CMP(==)
  TESSERA_EPU_CMP(!=)
  TESSERA_EPU_CMP(<)
  TESSERA_EPU_CMP(<=)
  TESSERA_EPU_CMP(>)
  TESSERA_EPU_CMP(>=)
#undef TESSERA_EPU_CMP

  friend qVar_t operator&&(const qVar_t& a, const qVar_t& b) {
    static_assert(std::is_same_v<T, bool>, "qVar_t operator&&: qVar_t<bool> only (use & for bits)");
    return map2(a, b, [](bool x, bool y) { return x && y; });
  }
  friend qVar_t operator||(const qVar_t& a, const qVar_t& b) {
    static_assert(std::is_same_v<T, bool>, "qVar_t operator||: qVar_t<bool> only (use | for bits)");
    return map2(a, b, [](bool x, bool y) { return x || y; });
  }
  friend qVar_t operator!(const qVar_t& a) {
    static_assert(std::is_same_v<T, bool>, "qVar_t operator!: qVar_t<bool> only");
    qVar_t r(kNoInit);
    for (std::size_t i = 0; i < kCores; ++i) r.v_[i] = !a.v_[i];
    detail::charge();
    return r;
  }

 private:
  template <typename>
  friend class qVar_t;
  struct NoInit {};
  static constexpr NoInit kNoInit{};
  explicit qVar_t(NoInit) {}
  template <typename U>
  static T convert(const U& u) {
    if constexpr (detail::is_fixed<T>::value && detail::is_fixed<U>::value) {
      constexpr int d = T::fracBits - U::fracBits;
      return T::fromRaw(d >= 0 ? std::int32_t{u.raw} * (1 << (d >= 0 ? d : 0))
                               : std::int32_t{u.raw} >> (d < 0 ? -d : 0));
    } else if constexpr (detail::is_fixed<U>::value) {
      return static_cast<T>(u.raw >> U::fracBits);
    } else {
      return static_cast<T>(u);
    }
  }
  static constexpr bool kSignedInt = std::is_integral_v<T> && std::is_signed_v<T> && !std::is_same_v<T, bool>;
  // The most negative value over -1 wraps to itself, as two's complement hardware gives.
  static T divide(T x, T y) {
    if constexpr (kSignedInt) {
      if (y == T(-1)) return static_cast<T>(T{} - wrap(x));
    }
    return static_cast<T>(x / y);
  }
  static void check_divisor(const qVar_t& b, const char* api) {
    for (std::size_t i = 0; i < kCores; ++i)
      if (b.v_[i] == T{})
        detail::core_fault(api, "division by zero on this core; guard the divisor with qSelect", i);
  }

  std::array<T, kCores> v_;
  bool has_border_ = false;
  TileBorder<T> border_;
};

// Per-core select, maximum, minimum and absolute value (one array instruction each).
template <typename T>
qVar_t<T> qSelect(const qVar_t<bool>& cond, const qVar_t<T>& a, const qVar_t<T>& b) {
  qVar_t<T> r;
  for (std::size_t i = 0; i < Epu::numCores; ++i) r[i] = cond[i] ? a[i] : b[i];
  detail::charge();
  return r;
}
template <typename T>
qVar_t<T> qMax(const qVar_t<T>& a, const qVar_t<T>& b) {
  return qVar_t<T>::map2(a, b, [](T x, T y) { return x < y ? y : x; });
}
template <typename T>
qVar_t<T> qMin(const qVar_t<T>& a, const qVar_t<T>& b) {
  return qVar_t<T>::map2(a, b, [](T x, T y) { return y < x ? y : x; });
}
template <typename T>
qVar_t<T> qAbs(const qVar_t<T>& a) {
  return qVar_t<T>::map2(a, a, [](T x, T) { return x < T{} ? -x : x; });
}

// ---- each core's position ----
namespace detail {
template <typename T, bool Row>
qVar_t<T> positions() {
  qVar_t<T> q;
  for (std::uint32_t i = 0; i < Epu::numCores; ++i) q[i] = static_cast<T>(Row ? i / Epu::coreDim : i % Epu::coreDim);
  return q;
}
}  // namespace detail
template <typename T = std::uint32_t>
inline const qVar_t<T> qRow = detail::positions<T, true>();
template <typename T = std::uint32_t>
inline const qVar_t<T> qCol = detail::positions<T, false>();

// ---- neighbour exchange (spec 004 "Data Sharing Between Cores") ----
// Reading qNorth<T>() gives each core the value its northern neighbour (row - 1) sent; writing
// `qNorth<> = x` sends every core's x to its northern neighbour, which reads it as qSouth<>.
// `qAllNeighbors<> = x` sends to all four. A core on the array's edge receives, from beyond the
// edge, the tile's border when x was fetched by a BORDER iterator (the tensor's neighbouring
// element, 0 past the tensor's edge), else 0.
namespace detail {
template <typename T>
struct Ports {
  qVar_t<T> from[4];  // indexed by sim::GridSide: the value that arrived from that side
};
template <typename T>
Ports<T>& ports() {
  static Ports<T> p;
  return p;
}
// What each port (by sim::GridSide) last received: its element type and the array's generation.
// A port is one register per core whatever the type, so reading it as another type than was
// sent would read a stale value: that is a UserError. A port nothing reached on this device
// holds 0.
struct PortState {
  const void* type = nullptr;
  std::uint64_t generation = 0;
  std::string type_name;
};
inline std::array<PortState, 4>& port_states() {
  static std::array<PortState, 4> s;
  return s;
}
template <typename T>
const void* type_tag() {
  static const char tag = 0;
  return &tag;
}
// Fills the port `from` of every core with x from its neighbour on that side.
template <typename T>
void deliver(const qVar_t<T>& x, sim::GridSide from) {
  constexpr int D = static_cast<int>(Epu::coreDim);
  std::array<T, Epu::coreDim> edge{};
  if (x.hasBorder()) {
    auto& b = const_cast<TileBorder<T>&>(x.border());
    for (int k = 0; k < D; ++k) {
      switch (from) {
        case sim::GridSide::north: edge[static_cast<std::size_t>(k)] = b.north(k); break;
        case sim::GridSide::south: edge[static_cast<std::size_t>(k)] = b.south(k); break;
        case sim::GridSide::west: edge[static_cast<std::size_t>(k)] = b.west(k); break;
        case sim::GridSide::east: edge[static_cast<std::size_t>(k)] = b.east(k); break;
      }
    }
  }
  qVar_t<T>& port = ports<T>().from[static_cast<int>(from)];
  PortState& state = port_states()[static_cast<std::size_t>(from)];
  if (state.type != type_tag<T>()) state = {type_tag<T>(), 0, elem_name<T>()};
  state.generation = arr().generation();
  sim::neighbor_exchange<T>(std::span<const T>(x.data(), Epu::numCores), std::span<T>(port.data(), Epu::numCores), D, D,
                            from, std::span<const T>(edge.data(), edge.size()));
  port.clearBorder();
}
constexpr sim::GridSide opposite(sim::GridSide s) {
  switch (s) {
    case sim::GridSide::north: return sim::GridSide::south;
    case sim::GridSide::south: return sim::GridSide::north;
    case sim::GridSide::east: return sim::GridSide::west;
    case sim::GridSide::west: return sim::GridSide::east;
  }
  return s;
}
}  // namespace detail

template <sim::GridSide Side, typename Q>
struct NeighborPort {
  using T = typename Q::value_type;
  operator const Q&() const {
    const std::uint64_t generation = detail::arr().generation();
    Q& port = detail::ports<T>().from[static_cast<int>(Side)];
    detail::PortState& state = detail::port_states()[static_cast<std::size_t>(Side)];
    if (state.generation != generation) {
      port = Q();  // nothing reached this port on this device yet
    } else if (state.type != detail::type_tag<T>()) {
      throw_user_error("{0}<{1}> read, but the last value sent to this port was a qVar_t<{2}>, which the "
                       "port holds instead of a {1}; read it as {0}<{2}> (and convert the result)",
                       port_name(), detail::elem_name<T>(), state.type_name);
    }
    return port;
  }
  static const char* port_name() {
    switch (Side) {
      case sim::GridSide::north: return "qNorth";
      case sim::GridSide::south: return "qSouth";
      case sim::GridSide::east: return "qEast";
      case sim::GridSide::west: return "qWest";
    }
    return "?";
  }
  // A qBroadcast read sends its value: `qNorth<> = qBroadcast<0, T>`.
  template <typename B, typename = typename B::broadcast_read_tag>
  const NeighborPort& operator=(const B& b) const {
    return *this = b.value();
  }
  template <typename U>
  const NeighborPort& operator=(const qVar_t<U>& x) const {
    detail::deliver<U>(x, detail::opposite(Side));
    detail::arr().exchange(1);
    return *this;
  }
};
struct AllNeighborsPort {
  template <typename B, typename = typename B::broadcast_read_tag>
  const AllNeighborsPort& operator=(const B& b) const {
    return *this = b.value();
  }
  template <typename U>
  const AllNeighborsPort& operator=(const qVar_t<U>& x) const {
    for (auto s : {sim::GridSide::north, sim::GridSide::south, sim::GridSide::east, sim::GridSide::west})
      detail::deliver<U>(x, s);
    detail::arr().exchange(1);  // one instruction drives all four ports
    return *this;
  }
};
template <typename T = std::int32_t>
inline constexpr NeighborPort<sim::GridSide::north, qVar_t<T>> qNorth{};
template <typename T = std::int32_t>
inline constexpr NeighborPort<sim::GridSide::south, qVar_t<T>> qSouth{};
template <typename T = std::int32_t>
inline constexpr NeighborPort<sim::GridSide::east, qVar_t<T>> qEast{};
template <typename T = std::int32_t>
inline constexpr NeighborPort<sim::GridSide::west, qVar_t<T>> qWest{};
template <typename = void>
inline constexpr AllNeighborsPort qAllNeighbors{};

// ---- tensors (spec 004 "Data movement"): batch, channel, height, width ----
// The four trailing parameters make a type an ROI descriptor: the region's begin per dimension
// (d4 batch, d3 channel, d2 row, d1 column).
template <typename T, std::size_t B, std::size_t C, std::size_t H, std::size_t W, std::size_t D4 = 0,
          std::size_t D3 = 0, std::size_t D2 = 0, std::size_t D1 = 0>
struct TensorShape {
  static_assert(B > 0 && C > 0 && H > 0 && W > 0, "tensor dimensions must be at least 1");
  using elemType = T;
  // The SDK's helper constants (signed, so that loops over int32 or size_t compare cleanly).
  static constexpr std::int32_t NUM_BCH = static_cast<std::int32_t>(B);
  static constexpr std::int32_t NUM_CHN = static_cast<std::int32_t>(C);
  static constexpr std::int32_t NUM_ROWS = static_cast<std::int32_t>(H);
  static constexpr std::int32_t NUM_COLS = static_cast<std::int32_t>(W);
  static constexpr std::int32_t TILES_PER_ROW = static_cast<std::int32_t>((W + Epu::coreDim - 1) / Epu::coreDim);
  static constexpr std::int32_t TILES_PER_COL = static_cast<std::int32_t>((H + Epu::coreDim - 1) / Epu::coreDim);
  static constexpr std::int32_t NUM_TILES = static_cast<std::int32_t>(B * C) * TILES_PER_ROW * TILES_PER_COL;
  static constexpr std::int64_t linearElemCount = static_cast<std::int64_t>(B * C * H * W);
  // The same as sizes, for the implementation.
  static constexpr std::size_t kB = B, kC = C, kH = H, kW = W;
  static constexpr std::size_t kTilesPerRow = (W + Epu::coreDim - 1) / Epu::coreDim;
  static constexpr std::size_t kTilesPerCol = (H + Epu::coreDim - 1) / Epu::coreDim;
  static constexpr std::size_t kTiles = B * C * kTilesPerRow * kTilesPerCol;
  static constexpr std::size_t kLinear = B * C * H * W;
  static constexpr std::size_t kLineTiles = (kLinear + Epu::numCores - 1) / Epu::numCores;
  // An ROI descriptor's region: begin (and end) per dimension.
  static constexpr std::size_t d4beg = D4, d3beg = D3, d2beg = D2, d1beg = D1;
  static constexpr std::size_t d4end = D4 + B, d3end = D3 + C, d2end = D2 + H, d1end = D1 + W;
  static constexpr std::size_t sizeBytes = kLinear * sizeof(T);
  static std::size_t index(std::size_t b, std::size_t c, std::size_t h, std::size_t w) {
    return ((b * C + c) * H + h) * W + w;
  }
};

// A tensor in OCM. Placed by MemAllocator::allocate, or at its first use when never allocated
// (as spec 004's fetch examples use them); freed when it goes out of scope.
template <typename T, std::size_t B, std::size_t C, std::size_t H, std::size_t W, std::size_t D4 = 0,
          std::size_t D3 = 0, std::size_t D2 = 0, std::size_t D1 = 0>
class OcmTensor : public TensorShape<T, B, C, H, W, D4, D3, D2, D1> {
 public:
  using Shape = TensorShape<T, B, C, H, W, D4, D3, D2, D1>;
  static constexpr bool isOcm = true;
  OcmTensor() = default;
  OcmTensor(const OcmTensor&) = delete;
  OcmTensor& operator=(const OcmTensor&) = delete;
  ~OcmTensor() {
    if (placement_.placed && tessera::epu::detail::g_array &&
        tessera::epu::detail::g_array->generation() == placement_.generation)
      tessera::epu::detail::g_array->release(placement_);
  }
  static const std::string& name() {
    static const std::string n = tensor_name("OcmTensor", detail::elem_name<T>(), B, C, H, W);
    return n;
  }
  // The tensor's bytes in OCM (for tests and host-side set-up; the array reaches them through
  // flows, RAU and broadcast).
  T* data() { return reinterpret_cast<T*>(detail::arr().ocm_data(placement_, Shape::sizeBytes, name())); }
  T& at(std::size_t b, std::size_t c, std::size_t h, std::size_t w) { return data()[Shape::index(b, c, h, w)]; }
  std::uint64_t address() { data(); return placement_.address; }
  OcmPlacement& placement() { return placement_; }

 private:
  OcmPlacement placement_;
};

// A tensor in DDR (the host system's memory): a buffer of the device's global memory.
template <typename T, std::size_t B, std::size_t C, std::size_t H, std::size_t W, std::size_t D4 = 0,
          std::size_t D3 = 0, std::size_t D2 = 0, std::size_t D1 = 0>
class DdrTensor : public TensorShape<T, B, C, H, W, D4, D3, D2, D1> {
 public:
  using Shape = TensorShape<T, B, C, H, W, D4, D3, D2, D1>;
  static constexpr bool isDdr = true;
  DdrTensor() {
    Array& a = detail::arr();
    buffer_ = a.device().allocate(Shape::sizeBytes, "DdrTensor");
    generation_ = a.generation();
    data_ = reinterpret_cast<T*>(a.device().data(buffer_));
  }
  DdrTensor(const DdrTensor&) = delete;
  DdrTensor& operator=(const DdrTensor&) = delete;
  ~DdrTensor() {
    if (tessera::epu::detail::g_array && tessera::epu::detail::g_array->generation() == generation_)
      tessera::epu::detail::g_array->device().free(buffer_);
  }
  static const std::string& name() {
    static const std::string n = tensor_name("DdrTensor", detail::elem_name<T>(), B, C, H, W);
    return n;
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& at(std::size_t b, std::size_t c, std::size_t h, std::size_t w) { return data_[Shape::index(b, c, h, w)]; }
  T& operator[](std::size_t i) { return data_[i]; }
  const runtime::Buffer& buffer() const { return buffer_; }

 private:
  runtime::Buffer buffer_;
  std::uint64_t generation_ = 0;
  T* data_ = nullptr;
};

namespace detail {
template <typename X, typename = void>
struct is_ocm : std::false_type {};
template <typename X>
struct is_ocm<X, std::void_t<decltype(X::isOcm)>> : std::true_type {};
template <typename X, typename = void>
struct is_ddr : std::false_type {};
template <typename X>
struct is_ddr<X, std::void_t<decltype(X::isDdr)>> : std::true_type {};

[[noreturn]] inline void ddr_to_array(std::string_view api, const std::string& tensor) {
  arr().fault(api, fmt::format("{} is in DDR; the array reaches only OCM. Copy it to an OcmTensor "
                               "with memCpy first (spec 004 'Data Access Patterns')",
                               tensor));
}

// Checks that [off, off + roi) lies inside the tensor in every dimension.
inline void check_roi(std::string_view api, const std::string& tensor, const std::size_t dims[4],
                      const std::size_t roi[4], const std::size_t off[4], const char* roi_what) {
  static const char* names[4] = {"batch", "channel", "height", "width"};
  for (int d = 0; d < 4; ++d)
    // Compared without the sum, which wraps for an offset computed as 0 - 1.
    if (off[d] > dims[d] || roi[d] > dims[d] - off[d]) {
      const std::size_t end = off[d] + roi[d];
      const std::string reach =
          end < off[d] ? fmt::format("{} + {}", off[d], roi[d]) : fmt::format("{}", end);
      arr().fault(api, fmt::format("the {} {}x{}x{}x{} at offsets ({}, {}, {}, {}) reaches {} {} of {}, "
                                   "which has {}; keep offset + extent within the tensor",
                                   roi_what, roi[0], roi[1], roi[2], roi[3], off[0], off[1], off[2], off[3],
                                   names[d], reach, tensor, dims[d]));
    }
}
}  // namespace detail

class MemAllocator {
 public:
  template <typename Tensor>
  void allocate(Tensor& tensor) {
    static_assert(detail::is_ocm<Tensor>::value,
                  "MemAllocator::allocate places OcmTensor objects in OCM; DdrTensor lives in DDR already");
    detail::arr().place(tensor.placement(), Tensor::sizeBytes, Tensor::name());
  }
};

// ---- memCpy between DDR and OCM (spec 004 "Data movement DDR <-> OCM") ----
namespace detail {
template <typename Ddr, typename Ocm>
void mem_cpy(Ddr& ddr, Ocm& ocm, std::size_t b, std::size_t c, std::size_t h, std::size_t w, bool to_ocm) {
  static_assert(sizeof(typename Ddr::elemType) == sizeof(typename Ocm::elemType),
                "memCpy: the DDR and OCM tensors' element types must have the same size");
  const char* api = to_ocm ? "memCpy(DDR -> OCM)" : "memCpy(OCM -> DDR)";
  Array& a = arr();
  if (Ocm::kW != Ddr::kW)
    a.fault(api, fmt::format("{} is {} wide but {} is {} wide; memCpy requires the OCM width to equal "
                             "the DDR width (spec 004 'Handling tensors larger than OCM capacity'): cut "
                             "regions of interest by batch, channel or rows",
                             Ocm::name(), Ocm::kW, Ddr::name(), Ddr::kW));
  const std::size_t dims[4] = {Ddr::kB, Ddr::kC, Ddr::kH, Ddr::kW};
  const std::size_t roi[4] = {Ocm::kB, Ocm::kC, Ocm::kH, Ocm::kW};
  const std::size_t off[4] = {b, c, h, w};
  check_roi(api, Ddr::name(), dims, roi, off, "region of interest");
  sim::DmaEndpoint d_ep{reinterpret_cast<std::byte*>(ddr.data()), Ddr::sizeBytes, "ddr", ddr.buffer().device_address,
                        Ddr::name()};
  sim::DmaEndpoint o_ep{a.ocm_data(ocm.placement(), Ocm::sizeBytes, Ocm::name()), Ocm::sizeBytes, "ocm",
                        ocm.placement().address, Ocm::name()};
  const Shape ddr_shape{static_cast<std::int64_t>(Ddr::kW), static_cast<std::int64_t>(Ddr::kH),
                        static_cast<std::int64_t>(Ddr::kC), static_cast<std::int64_t>(Ddr::kB)};
  const Shape extent{static_cast<std::int64_t>(Ocm::kW), static_cast<std::int64_t>(Ocm::kH),
                     static_cast<std::int64_t>(Ocm::kC), static_cast<std::int64_t>(Ocm::kB)};
  const auto ddr_win = sim::DmaWindow::roi(ddr_shape, {static_cast<std::int64_t>(w), static_cast<std::int64_t>(h),
                                                       static_cast<std::int64_t>(c), static_cast<std::int64_t>(b)});
  sim::DmaDescriptor d;
  d.extent = extent;
  d.element_bytes = sizeof(typename Ocm::elemType);
  if (to_ocm) {
    d.src = d_ep, d.src_window = ddr_win, d.dst = o_ep, d.dst_window = sim::DmaWindow::dense(extent);
  } else {
    d.src = o_ep, d.src_window = sim::DmaWindow::dense(extent), d.dst = d_ep, d.dst_window = ddr_win;
  }
  a.mem_cpy(d, ocm.placement(), to_ocm);
}
}  // namespace detail

template <typename Src, typename Dst>
void memCpy(Src& src, Dst& dst, std::size_t batchOffset = 0, std::size_t channelOffset = 0,
            std::size_t heightOffset = 0, std::size_t widthOffset = 0) {
  constexpr bool down = detail::is_ddr<Src>::value && detail::is_ocm<Dst>::value;
  constexpr bool up = detail::is_ocm<Src>::value && detail::is_ddr<Dst>::value;
  static_assert(down || up, "memCpy copies between a DdrTensor and an OcmTensor (either way); the offsets "
                            "are into the DDR tensor");
  if constexpr (down) detail::mem_cpy(src, dst, batchOffset, channelOffset, heightOffset, widthOffset, true);
  else detail::mem_cpy(dst, src, batchOffset, channelOffset, heightOffset, widthOffset, false);
}

// ---- flows: fetch and write iterators (spec 004 "Flow", "Iterators") ----
namespace detail {

// The tile element (row, col) that core (r, c) holds when a tile flows in (fetch) or out (write)
// through `side`. Fetching from SOUTH and writing to NORTH keep the orientation; NORTH / SOUTH
// the other way flip it vertically; EAST and WEST turn rows into columns, mirror images of each
// other (spec 004 "Understanding the StreamSide Parameter"). Affine, so it extends to the border.
inline void tile_pos(StreamSide side, bool fetch, int r, int c, int& tr, int& tc) {
  const int D = static_cast<int>(Epu::coreDim);
  if (!fetch) {  // a write through a side is the inverse of a fetch through the opposite one
    switch (side) {
      case StreamSide::NORTH: side = StreamSide::SOUTH; break;
      case StreamSide::SOUTH: side = StreamSide::NORTH; break;
      case StreamSide::EAST: side = StreamSide::WEST; break;
      case StreamSide::WEST: side = StreamSide::EAST; break;
    }
  }
  switch (side) {
    case StreamSide::SOUTH: tr = r; tc = c; return;
    case StreamSide::NORTH: tr = D - 1 - r; tc = c; return;
    case StreamSide::EAST: tr = c; tc = r; return;
    case StreamSide::WEST: tr = D - 1 - c; tc = r; return;
  }
}

constexpr bool has_border(IteratorType it) { return it == IteratorType::YX_BORDER || it == IteratorType::ZY_BORDER; }

constexpr const char* iterator_name(IteratorType it) {
  switch (it) {
    case IteratorType::XY_NO_BORDER: return "XY_NO_BORDER";
    case IteratorType::YX_NO_BORDER: return "YX_NO_BORDER";
    case IteratorType::YX_BORDER: return "YX_BORDER";
    case IteratorType::ZY_BORDER: return "ZY_BORDER";
    case IteratorType::ZY_NO_BORDER: return "ZY_NO_BORDER";
    case IteratorType::ROW: return "ROW";
    case IteratorType::ROW_ZY: return "ROW_ZY";
    case IteratorType::LINE: return "LINE";
  }
  return "?";
}

struct TileCoord {
  std::size_t b, c, ty, tx;
};

// The tiles of a B x C x TY x TX region in the iterator's order (spec 004 "Tensor Walk": XY walks
// each row of tiles left to right, YX each column top to bottom, ZY depth first then down then
// right; ROW walks a row of tiles through every channel before the next row; ROW_ZY each tile
// position through the channels, row by row).
inline std::vector<TileCoord> walk(IteratorType it, std::size_t B, std::size_t C, std::size_t TY, std::size_t TX) {
  std::vector<TileCoord> t;
  t.reserve(B * C * TY * TX);
  for (std::size_t b = 0; b < B; ++b) switch (it) {
      case IteratorType::XY_NO_BORDER:
      case IteratorType::LINE:
        for (std::size_t c = 0; c < C; ++c)
          for (std::size_t y = 0; y < TY; ++y)
            for (std::size_t x = 0; x < TX; ++x) t.push_back({b, c, y, x});
        break;
      case IteratorType::YX_NO_BORDER:
      case IteratorType::YX_BORDER:
        for (std::size_t c = 0; c < C; ++c)
          for (std::size_t x = 0; x < TX; ++x)
            for (std::size_t y = 0; y < TY; ++y) t.push_back({b, c, y, x});
        break;
      case IteratorType::ZY_BORDER:
      case IteratorType::ZY_NO_BORDER:
        for (std::size_t x = 0; x < TX; ++x)
          for (std::size_t y = 0; y < TY; ++y)
            for (std::size_t c = 0; c < C; ++c) t.push_back({b, c, y, x});
        break;
      case IteratorType::ROW:
        for (std::size_t y = 0; y < TY; ++y)
          for (std::size_t c = 0; c < C; ++c)
            for (std::size_t x = 0; x < TX; ++x) t.push_back({b, c, y, x});
        break;
      case IteratorType::ROW_ZY:
        for (std::size_t y = 0; y < TY; ++y)
          for (std::size_t x = 0; x < TX; ++x)
            for (std::size_t c = 0; c < C; ++c) t.push_back({b, c, y, x});
        break;
    }
  return t;
}

template <typename Roi>
constexpr std::size_t tiles_of(IteratorType it) {
  return it == IteratorType::LINE ? Roi::kLineTiles : Roi::kTiles;
}

// One flow between a tensor region and qVar_t tiles, checked against spec 004's rules.
template <typename Roi, StreamSide Side, IteratorType It, bool MaskRoiEdge, typename Tensor, typename T, std::size_t N>
void flow(Tensor& tensor, qVar_t<T> (&q)[N], std::size_t b, std::size_t c, std::size_t h, std::size_t w, bool fetch,
          const char* api) {
  constexpr std::size_t kTiles = tiles_of<Roi>(It);
  static_assert(N >= kTiles, "fetch/write: the qVar_t array has fewer elements than the region of interest has "
                             "tiles; declare it as qVar_t<T> x[RoiShape::kTiles]");
  if constexpr (is_ddr<Tensor>::value) {
    ddr_to_array(api, Tensor::name());
  } else {
    using E = typename Tensor::elemType;
    static_assert(sizeof(E) == sizeof(T), "fetch/write: the tensor's element type and the qVar_t's type must have "
                                          "the same size");
    Array& a = arr();
    constexpr std::size_t D = Epu::coreDim;
    const std::string& name = Tensor::name();
    const std::size_t dims[4] = {Tensor::kB, Tensor::kC, Tensor::kH, Tensor::kW};
    const std::size_t roi[4] = {Roi::kB, Roi::kC, Roi::kH, Roi::kW};
    const std::size_t off[4] = {b, c, h, w};
    if (It != IteratorType::LINE && w % D != 0)
      a.fault(api, fmt::format("width offset {} into {} is not a multiple of the array's {} columns; flows start "
                               "at aligned columns (spec 004 'Fetch API'); use Rau for unaligned access",
                               w, name, D));
    check_roi(api, name, dims, roi, off, "region of interest");
    const std::uint64_t reg_bytes = static_cast<std::uint64_t>(kTiles) * a.register_bytes();
    if (reg_bytes > a.core_memory_bytes())
      a.fault(api, fmt::format("the region of interest {}x{}x{}x{} of {} is {} tiles, {} bytes of registers on "
                               "every core, beyond the {} bytes of core memory; flow a smaller region of interest",
                               roi[0], roi[1], roi[2], roi[3], name, kTiles, reg_bytes, a.core_memory_bytes()));
    const std::uint64_t bytes = static_cast<std::uint64_t>(kTiles) * Epu::numCores * sizeof(E);
    if (bytes > a.max_flow_bytes())
      a.fault(api, fmt::format("{} tiles of {} ({} {} per tile) are {} bytes in one iterator transfer, beyond its "
                               "limit of {} bytes (spec 004 'Comparing Broadcast to Iterators'); split the "
                               "region of interest",
                               kTiles, name, Epu::numCores, elem_name<E>(), bytes, a.max_flow_bytes()));
    E* base = reinterpret_cast<E*>(a.ocm_data(tensor.placement(), Tensor::sizeBytes, name));
    if constexpr (It == IteratorType::LINE) {
      // Linear order of the region, coreDim^2 elements per tile, core i = element i.
      std::size_t k = 0;
      for (std::size_t bb = 0; bb < Roi::kB; ++bb)
        for (std::size_t cc = 0; cc < Roi::kC; ++cc)
          for (std::size_t y = 0; y < Roi::kH; ++y)
            for (std::size_t x = 0; x < Roi::kW; ++x, ++k) {
              E& e = base[Tensor::index(b + bb, c + cc, h + y, w + x)];
              T& v = q[k / Epu::numCores][k % Epu::numCores];
              if (fetch) std::memcpy(&v, &e, sizeof(T));
              else std::memcpy(&e, &v, sizeof(T));
            }
      if (fetch) {
        for (; k < kTiles * Epu::numCores; ++k) q[k / Epu::numCores][k % Epu::numCores] = T{};
        for (std::size_t t = 0; t < kTiles; ++t) q[t].clearBorder();
      }
    } else {
      const std::vector<TileCoord> tiles = walk(It, Roi::kB, Roi::kC, Roi::kTilesPerCol, Roi::kTilesPerRow);
      // Per core, the tile element it holds (the side's permutation), computed once.
      std::array<std::uint32_t, Epu::numCores> pos{};
      for (int r = 0; r < static_cast<int>(D); ++r)
        for (int cc = 0; cc < static_cast<int>(D); ++cc) {
          int tr = 0, tc = 0;
          tile_pos(Side, fetch, r, cc, tr, tc);
          pos[static_cast<std::size_t>(r) * D + static_cast<std::size_t>(cc)] = static_cast<std::uint32_t>(tr * static_cast<int>(D) + tc);
        }
      const bool identity = (fetch && Side == StreamSide::SOUTH) || (!fetch && Side == StreamSide::NORTH);
      auto one = [&](std::size_t k) {
        const TileCoord& t = tiles[k];
        qVar_t<T>& dst = q[k];
        const std::size_t y0 = t.ty * D, x0 = t.tx * D;
        const std::size_t rows = std::min(D, Roi::kH - y0), cols = std::min(D, Roi::kW - x0);
        E* plane = base + Tensor::index(b + t.b, c + t.c, 0, 0);
        if (identity) {
          for (std::size_t r = 0; r < D; ++r) {
            T* row = dst.data() + r * D;
            if (r < rows) {
              E* src = plane + (h + y0 + r) * Tensor::kW + w + x0;
              if (fetch) {
                std::memcpy(row, src, cols * sizeof(T));
                std::fill(row + cols, row + D, T{});
              } else {
                std::memcpy(src, row, cols * sizeof(T));
              }
            } else if (fetch) {
              std::fill(row, row + D, T{});
            }
          }
        } else {
          for (std::size_t i = 0; i < Epu::numCores; ++i) {
            const std::size_t tr = pos[i] / D, tc = pos[i] % D;
            const bool in = tr < rows && tc < cols;
            if (fetch) {
              if (in) std::memcpy(&dst[i], plane + (h + y0 + tr) * Tensor::kW + w + x0 + tc, sizeof(T));
              else dst[i] = T{};
            } else if (in) {
              std::memcpy(plane + (h + y0 + tr) * Tensor::kW + w + x0 + tc, &dst[i], sizeof(T));
            }
          }
        }
        if (fetch) {
          if constexpr (has_border(It)) {
            // The ring around the tile, from the tensor (0 past its edge, or past the region's
            // edge with MaskRoiEdge), placed as the side places the tile.
            TileBorder<T>& ring = dst.setBorder();
            const long lo_y = MaskRoiEdge ? static_cast<long>(h) : 0, lo_x = MaskRoiEdge ? static_cast<long>(w) : 0;
            const long hi_y = MaskRoiEdge ? static_cast<long>(h + Roi::kH) : static_cast<long>(Tensor::kH);
            const long hi_x = MaskRoiEdge ? static_cast<long>(w + Roi::kW) : static_cast<long>(Tensor::kW);
            const int Di = static_cast<int>(D);
            for (int r = -1; r <= Di; ++r)
              for (int cc = -1; cc <= Di; ++cc) {
                if (r >= 0 && r < Di && cc >= 0 && cc < Di) continue;
                int tr = 0, tc = 0;
                tile_pos(Side, true, r, cc, tr, tc);
                const long y = static_cast<long>(h + y0) + tr, x = static_cast<long>(w + x0) + tc;
                T v{};
                if (y >= lo_y && y < hi_y && x >= lo_x && x < hi_x)
                  std::memcpy(&v, plane + static_cast<std::size_t>(y) * Tensor::kW + static_cast<std::size_t>(x),
                              sizeof(T));
                ring.at(r, cc) = v;
              }
          } else {
            dst.clearBorder();
          }
        }
      };
      // Writes never overlap (each tile is its own region); fetches fill their own qVar_t.
      if (tiles.size() * Epu::numCores >= 65536) {
        a.scheduler().parallel_ranges(tiles.size(), [&](std::size_t, std::size_t lo, std::size_t hi) {
          for (std::size_t k = lo; k < hi; ++k) one(k);
        });
      } else {
        for (std::size_t k = 0; k < tiles.size(); ++k) one(k);
      }
    }
    a.flow(fmt::format("{} {}", api, iterator_name(It)), kTiles, bytes, tensor.placement(), !fetch);
  }
}

}  // namespace detail

// The default iterator of every form is YX_NO_BORDER, so that spec 004's YX example, which
// fetches with YX_BORDER and writes with the default, puts every tile back where it came from.
// fetchAllTiles / writeAllTiles: the whole tensor. Template forms of spec 004:
// <IteratorType>, <Shape, StreamSide, IteratorType>, <StreamSide, IteratorType>.
template <IteratorType It = IteratorType::YX_NO_BORDER, typename Tensor, typename T, std::size_t N>
void fetchAllTiles(Tensor& tensor, qVar_t<T> (&q)[N]) {
  detail::flow<Tensor, StreamSide::SOUTH, It, false>(tensor, q, 0, 0, 0, 0, true, "fetchAllTiles");
}
template <typename Shape, StreamSide Side = StreamSide::SOUTH, IteratorType It = IteratorType::YX_NO_BORDER,
          typename Tensor, typename T, std::size_t N>
void fetchAllTiles(Tensor& tensor, qVar_t<T> (&q)[N]) {
  detail::flow<Shape, Side, It, false>(tensor, q, 0, 0, 0, 0, true, "fetchAllTiles");
}
template <StreamSide Side, IteratorType It = IteratorType::YX_NO_BORDER, typename Tensor, typename T, std::size_t N>
void fetchAllTiles(Tensor& tensor, qVar_t<T> (&q)[N]) {
  detail::flow<Tensor, Side, It, false>(tensor, q, 0, 0, 0, 0, true, "fetchAllTiles");
}
template <IteratorType It = IteratorType::YX_NO_BORDER, typename T, std::size_t N, typename Tensor>
void writeAllTiles(qVar_t<T> (&q)[N], Tensor& tensor) {
  detail::flow<Tensor, StreamSide::NORTH, It, false>(tensor, q, 0, 0, 0, 0, false, "writeAllTiles");
}
template <typename Shape, StreamSide Side = StreamSide::NORTH, IteratorType It = IteratorType::YX_NO_BORDER,
          typename T, std::size_t N, typename Tensor>
void writeAllTiles(qVar_t<T> (&q)[N], Tensor& tensor) {
  detail::flow<Shape, Side, It, false>(tensor, q, 0, 0, 0, 0, false, "writeAllTiles");
}
template <StreamSide Side, IteratorType It = IteratorType::YX_NO_BORDER, typename T, std::size_t N, typename Tensor>
void writeAllTiles(qVar_t<T> (&q)[N], Tensor& tensor) {
  detail::flow<Tensor, Side, It, false>(tensor, q, 0, 0, 0, 0, false, "writeAllTiles");
}

// fetchTilesInRoi / writeTilesInRoi: the region RoiShape at (batch, channel, row, column)
// offsets. Forms: <RoiShape, IteratorType>, <StreamSide, RoiShape, IteratorType>,
// <DataShape, RoiShape, StreamSide, IteratorType>, and <RoiShape, bool maskRoiEdge,
// IteratorType> (true: a BORDER iterator masks the border at the region's edge, not only at
// the tensor's).
template <typename Roi, IteratorType It = IteratorType::YX_NO_BORDER, typename Tensor, typename T, std::size_t N>
void fetchTilesInRoi(Tensor& tensor, qVar_t<T> (&q)[N], std::size_t b, std::size_t c, std::size_t h, std::size_t w) {
  detail::flow<Roi, StreamSide::SOUTH, It, false>(tensor, q, b, c, h, w, true, "fetchTilesInRoi");
}
template <StreamSide Side, typename Roi, IteratorType It = IteratorType::YX_NO_BORDER, typename Tensor, typename T,
          std::size_t N>
void fetchTilesInRoi(Tensor& tensor, qVar_t<T> (&q)[N], std::size_t b, std::size_t c, std::size_t h, std::size_t w) {
  detail::flow<Roi, Side, It, false>(tensor, q, b, c, h, w, true, "fetchTilesInRoi");
}
template <typename DataShape, typename Roi, StreamSide Side = StreamSide::SOUTH,
          IteratorType It = IteratorType::YX_NO_BORDER, typename Tensor, typename T, std::size_t N>
void fetchTilesInRoi(Tensor& tensor, qVar_t<T> (&q)[N], std::size_t b, std::size_t c, std::size_t h, std::size_t w) {
  static_assert(std::is_same_v<typename DataShape::Shape, typename Tensor::Shape>,
                "fetchTilesInRoi<DataShape, RoiShape, ...>: DataShape must be the tensor's shape");
  detail::flow<Roi, Side, It, false>(tensor, q, b, c, h, w, true, "fetchTilesInRoi");
}
// <StreamSide, RoiShape, DataShape, IteratorType>: the order spec 004 lists the parameters in
// ("Iterator Parameters").
template <StreamSide Side, typename Roi, typename DataShape, IteratorType It = IteratorType::YX_NO_BORDER,
          typename Tensor, typename T, std::size_t N>
void fetchTilesInRoi(Tensor& tensor, qVar_t<T> (&q)[N], std::size_t b, std::size_t c, std::size_t h, std::size_t w) {
  static_assert(std::is_same_v<typename DataShape::Shape, typename Tensor::Shape>,
                "fetchTilesInRoi<StreamSide, RoiShape, DataShape, ...>: DataShape must be the tensor's shape");
  detail::flow<Roi, Side, It, false>(tensor, q, b, c, h, w, true, "fetchTilesInRoi");
}
template <typename Roi, bool MaskRoiEdge, IteratorType It = IteratorType::YX_NO_BORDER, typename Tensor, typename T,
          std::size_t N>
void fetchTilesInRoi(Tensor& tensor, qVar_t<T> (&q)[N], std::size_t b, std::size_t c, std::size_t h, std::size_t w) {
  detail::flow<Roi, StreamSide::SOUTH, It, MaskRoiEdge>(tensor, q, b, c, h, w, true, "fetchTilesInRoi");
}
template <typename Roi, IteratorType It = IteratorType::YX_NO_BORDER, typename T, std::size_t N, typename Tensor>
void writeTilesInRoi(qVar_t<T> (&q)[N], Tensor& tensor, std::size_t b, std::size_t c, std::size_t h, std::size_t w) {
  detail::flow<Roi, StreamSide::NORTH, It, false>(tensor, q, b, c, h, w, false, "writeTilesInRoi");
}
template <StreamSide Side, typename Roi, IteratorType It = IteratorType::YX_NO_BORDER, typename T, std::size_t N,
          typename Tensor>
void writeTilesInRoi(qVar_t<T> (&q)[N], Tensor& tensor, std::size_t b, std::size_t c, std::size_t h, std::size_t w) {
  detail::flow<Roi, Side, It, false>(tensor, q, b, c, h, w, false, "writeTilesInRoi");
}
template <StreamSide Side, typename Roi, typename DataShape, IteratorType It = IteratorType::YX_NO_BORDER,
          typename T, std::size_t N, typename Tensor>
void writeTilesInRoi(qVar_t<T> (&q)[N], Tensor& tensor, std::size_t b, std::size_t c, std::size_t h, std::size_t w) {
  static_assert(std::is_same_v<typename DataShape::Shape, typename Tensor::Shape>,
                "writeTilesInRoi<StreamSide, RoiShape, DataShape, ...>: DataShape must be the tensor's shape");
  detail::flow<Roi, Side, It, false>(tensor, q, b, c, h, w, false, "writeTilesInRoi");
}
template <typename DataShape, typename Roi, StreamSide Side = StreamSide::NORTH,
          IteratorType It = IteratorType::YX_NO_BORDER, typename T, std::size_t N, typename Tensor>
void writeTilesInRoi(qVar_t<T> (&q)[N], Tensor& tensor, std::size_t b, std::size_t c, std::size_t h, std::size_t w) {
  static_assert(std::is_same_v<typename DataShape::Shape, typename Tensor::Shape>,
                "writeTilesInRoi<DataShape, RoiShape, ...>: DataShape must be the tensor's shape");
  detail::flow<Roi, Side, It, false>(tensor, q, b, c, h, w, false, "writeTilesInRoi");
}

// ---- RAU: random access, each core at its own offsets (spec 004 "RAU (Random Access)") ----
namespace detail {
struct RauConfig {
  const OcmPlacement* tensor = nullptr;
  std::uint64_t address = 0;
  std::uint64_t generation = 0;
  bool matches(const OcmPlacement& p) const {
    return tensor == &p && p.placed && p.address == address && p.generation == generation;
  }
};
inline RauConfig& rau_config() {
  static RauConfig c;
  return c;
}
// An RAU offset is a qVar_t of an integer type (each core its own) or an integer (every core
// the same), as `Rau::Load::oneTile(0, 0, rowOffset, colOffset, t)` passes them.
template <typename X>
inline constexpr bool is_rau_offset_v = std::is_integral_v<X> && !std::is_same_v<X, bool>;
template <typename U>
inline constexpr bool is_rau_offset_v<qVar_t<U>> = std::is_integral_v<U> && !std::is_same_v<U, bool>;
template <typename X>
std::int64_t rau_offset(const X& x, std::size_t core) {
  if constexpr (std::is_integral_v<X>) {
    (void)core;
    return static_cast<std::int64_t>(x);
  } else {
    return static_cast<std::int64_t>(x[core]);
  }
}
// Where a core's RAU offsets lead: the element of the tensor, or, where an offset is past its
// dimension, the OCM byte the RAU's address reaches with the tensor's strides. Spec 004's own
// RAU example reads row 30 of a 12-row tensor on a 16x16 array: the hardware computes an
// address and reads, so Tessera does too (Array::ocm_outside_tensor warns, and faults only
// outside the OCM).
struct RauTarget {
  bool inside = true;
  std::size_t index = 0;     // inside: the element's index in the tensor
  std::int64_t address = 0;  // outside: the OCM byte address
};
template <typename Tensor, typename B, typename C, typename R, typename W>
RauTarget rau_target(const char* api, Tensor& tensor, const B& b, const C& c, const R& r, const W& col,
                     std::size_t i) {
  static_assert(is_rau_offset_v<B> && is_rau_offset_v<C> && is_rau_offset_v<R> && is_rau_offset_v<W>,
                "Rau offsets (batch, channel, row, column) are integer qVar_t (qVar_t<std::uint32_t>) or integers");
  const std::int64_t o[4] = {rau_offset(b, i), rau_offset(c, i), rau_offset(r, i), rau_offset(col, i)};
  const std::int64_t dims[4] = {static_cast<std::int64_t>(Tensor::kB), static_cast<std::int64_t>(Tensor::kC),
                                static_cast<std::int64_t>(Tensor::kH), static_cast<std::int64_t>(Tensor::kW)};
  bool inside = true;
  for (int d = 0; d < 4; ++d) inside = inside && o[d] >= 0 && o[d] < dims[d];
  if (inside)
    return {true, Tensor::index(static_cast<std::size_t>(o[0]), static_cast<std::size_t>(o[1]),
                                static_cast<std::size_t>(o[2]), static_cast<std::size_t>(o[3])),
            0};
  // The address in checked 64-bit arithmetic: a wrapped sum would pass for a byte inside.
  std::int64_t address = o[0];
  bool overflow = false;
  for (int d = 1; d < 4; ++d)
    overflow |= __builtin_mul_overflow(address, dims[d], &address) || __builtin_add_overflow(address, o[d], &address);
  overflow |= __builtin_mul_overflow(address, static_cast<std::int64_t>(sizeof(typename Tensor::elemType)), &address) ||
              __builtin_add_overflow(address, static_cast<std::int64_t>(tensor.placement().address), &address);
  const auto capacity = static_cast<std::int64_t>(arr().ocm_capacity());
  if (overflow || address < 0 || address > capacity - static_cast<std::int64_t>(sizeof(typename Tensor::elemType)))
    core_fault(api, fmt::format("offsets (batch {}, channel {}, row {}, column {}) are outside {} and lead outside "
                                "the {}-byte OCM; keep each core's offsets within the tensor",
                                o[0], o[1], o[2], o[3], Tensor::name(), capacity),
               i);
  return {false, 0, address};
}
template <typename Tensor>
void rau_check(const char* api, Tensor& tensor) {
  if constexpr (is_ddr<Tensor>::value) {
    ddr_to_array(api, Tensor::name());
  } else {
    if (!rau_config().matches(tensor.placement()))
      arr().fault(api, fmt::format("the RAU is not configured for {}; call Rau::config(tensor) before "
                                   "Rau::Load / Rau::Store on it",
                                   Tensor::name()));
  }
}
}  // namespace detail

struct Rau {
  template <typename Tensor>
  static void config(Tensor& tensor) {
    if constexpr (detail::is_ddr<Tensor>::value) {
      detail::ddr_to_array("Rau::config", Tensor::name());
    } else {
      detail::arr().place(tensor.placement(), Tensor::sizeBytes, Tensor::name());
      detail::rau_config() = {&tensor.placement(), tensor.placement().address, tensor.placement().generation};
      detail::charge();
    }
  }
  struct Load {
    template <typename B, typename C, typename R, typename W, typename Tensor>
    static qVar_t<typename Tensor::elemType> oneTile(const B& batch, const C& channel, const R& row, const W& col,
                                                     Tensor& tensor) {
      const char* api = "Rau::Load::oneTile";
      detail::rau_check(api, tensor);
      qVar_t<typename Tensor::elemType> out;
      if constexpr (detail::is_ocm<Tensor>::value) {
        using E = typename Tensor::elemType;
        E* base = tensor.data();
        for (std::size_t i = 0; i < Epu::numCores; ++i) {
          const detail::RauTarget t = detail::rau_target<Tensor>(api, tensor, batch, channel, row, col, i);
          if (t.inside)
            out[i] = base[t.index];
          else
            std::memcpy(&out[i], detail::arr().ocm_outside_tensor(api, Tensor::name(), static_cast<std::uint64_t>(t.address), sizeof(E), i),
                        sizeof(E));
        }
        detail::arr().rau(api, tensor.placement(), false);
      }
      return out;
    }
  };
  struct Store {
    // A qBroadcast read stores its value: `Rau::Store::oneTile(b, c, r, col, qBroadcast<0, T>, t)`.
    template <typename B, typename C, typename R, typename W, typename Read, typename Tensor,
              typename = typename Read::broadcast_read_tag>
    static void oneTile(const B& batch, const C& channel, const R& row, const W& col, const Read& data,
                        Tensor& tensor) {
      oneTile(batch, channel, row, col, data.value(), tensor);
    }
    // Cores that store to the same element: the highest-numbered core's value lands.
    template <typename B, typename C, typename R, typename W, typename T, typename Tensor>
    static void oneTile(const B& batch, const C& channel, const R& row, const W& col, const qVar_t<T>& data,
                        Tensor& tensor) {
      const char* api = "Rau::Store::oneTile";
      detail::rau_check(api, tensor);
      if constexpr (detail::is_ocm<Tensor>::value) {
        static_assert(sizeof(T) == sizeof(typename Tensor::elemType),
                      "Rau::Store::oneTile: the qVar_t's type and the tensor's element type must have the same size");
        auto* base = tensor.data();
        for (std::size_t i = 0; i < Epu::numCores; ++i) {
          const detail::RauTarget t = detail::rau_target<Tensor>(api, tensor, batch, channel, row, col, i);
          std::memcpy(t.inside ? static_cast<void*>(&base[t.index])
                               : detail::arr().ocm_outside_tensor(api, Tensor::name(), static_cast<std::uint64_t>(t.address), sizeof(T), i),
                      &data[i], sizeof(T));
        }
        detail::arr().rau(api, tensor.placement(), true);
      }
    }
  };
};

// ---- broadcast (spec 004 "Broadcast to Array") ----
// Elements of T per 64-bit POP.
template <typename T>
constexpr std::uint32_t getNumberOfWeightRegisters() {
  static_assert(sizeof(T) <= 8, "broadcast elements are at most 64 bits");
  return static_cast<std::uint32_t>(8 / sizeof(T));
}

namespace detail {
// Whether a region's elements are one contiguous run of the tensor (full rows, full planes...).
template <typename Tensor, typename Roi>
constexpr bool roi_contiguous() {
  if (Roi::kB == 1 && Roi::kC == 1 && Roi::kH == 1) return true;
  if (Roi::kW != Tensor::kW) return false;
  if (Roi::kB == 1 && Roi::kC == 1) return true;
  if (Roi::kH != Tensor::kH) return false;
  return Roi::kB == 1 || Roi::kC == Tensor::kC;
}
}  // namespace detail

struct BroadcastStream {
  // Stages the region RoiDesc (its dimensions from its d*beg offsets) of a tensor of Shape: the
  // next POP reads its first 64 bits.
  template <typename Shape, typename RoiDesc, typename Tensor>
  static void stage(Tensor& tensor) {
    const char* api = "BroadcastStream::stage";
    if constexpr (detail::is_ddr<Tensor>::value) {
      detail::ddr_to_array(api, Tensor::name());
    } else {
      static_assert(std::is_same_v<typename Shape::Shape, typename Tensor::Shape>,
                    "BroadcastStream::stage<Shape, RoiDesc>(tensor): Shape must be the tensor's shape");
      using E = typename Tensor::elemType;
      const std::size_t dims[4] = {Tensor::kB, Tensor::kC, Tensor::kH, Tensor::kW};
      const std::size_t roi[4] = {RoiDesc::kB, RoiDesc::kC, RoiDesc::kH, RoiDesc::kW};
      const std::size_t off[4] = {RoiDesc::d4beg, RoiDesc::d3beg, RoiDesc::d2beg, RoiDesc::d1beg};
      detail::check_roi(api, Tensor::name(), dims, roi, off, "staged region");
      const E* base = tensor.data();
      constexpr std::size_t kBytes = RoiDesc::kLinear * sizeof(E);
      if constexpr (detail::roi_contiguous<Tensor, RoiDesc>()) {
        // The region is one run of the tensor's bytes: stage it directly.
        const std::span<const std::byte> src(reinterpret_cast<const std::byte*>(base + Tensor::index(off[0], off[1], off[2], off[3])), kBytes);
        detail::arr().stage(tensor.placement(), src, Tensor::name());
        return;
      }
      std::vector<std::byte> src(kBytes);
      std::size_t k = 0;
      for (std::size_t b = 0; b < roi[0]; ++b)
        for (std::size_t c = 0; c < roi[1]; ++c)
          for (std::size_t h = 0; h < roi[2]; ++h, k += roi[3] * sizeof(E))
            std::memcpy(src.data() + k, base + Tensor::index(off[0] + b, off[1] + c, off[2] + h, off[3]),
                        roi[3] * sizeof(E));
      detail::arr().stage(tensor.placement(), src, Tensor::name());
    }
  }
};

// qBroadcast<index, T, action>: reading it (assigning it to a qVar_t, or using it in an
// expression) performs the POP or PEEK and gives a qVar_t<T> with the element on every core.
// Assigned to a qVar_t of a wider integer type the value widens, as spec 004's examples read
// int16 broadcasts into qVar_t<std::int32_t>. A copy (`auto w = qBroadcast<0, T, POP>;`) reads
// once and keeps that value, as a returned qVar_t<T> would.
template <std::uint8_t Index, typename T, BroadcastAction Action>
class BroadcastRead {
  static_assert(Index < getNumberOfWeightRegisters<T>(),
                "qBroadcast<index, T>: invalid broadcast index for the type: a 64-bit POP holds "
                "getNumberOfWeightRegisters<T>() elements of T (2 of 32 bits, 4 of 16, 8 of 8)");

 public:
  using value_type = T;
  using broadcast_read_tag = void;  // lets ports and Rau::Store take a qBroadcast directly
  constexpr BroadcastRead() = default;
  BroadcastRead(const BroadcastRead& o) : value_(o.read()), held_(true) {}
  BroadcastRead& operator=(const BroadcastRead&) = delete;

  qVar_t<T> value() const { return qVar_t<T>(read()); }
  template <typename U>
  operator qVar_t<U>() const {
    static_assert(std::is_same_v<U, T> || detail::is_widening_v<T, U>,
                  "qBroadcast<index, T>: assigned to a qVar_t<U> that cannot hold every T (a narrower or "
                  "differently signed type); read it as its own type and convert explicitly");
    return qVar_t<U>(static_cast<U>(read()));
  }

 private:
  T read() const {
    if (held_) return value_;
    Array& a = detail::arr();
    const char* api = Action == BroadcastAction::POP ? "qBroadcast<POP>" : "qBroadcast<PEEK>";
    if constexpr (Action == BroadcastAction::POP) a.pop(api);
    T v;
    std::memcpy(&v, a.bus().peek(Index * sizeof(T), sizeof(T), api).data(), sizeof(T));
    a.compute(1);
    return v;
  }
  T value_{};
  bool held_ = false;
};

namespace detail {
template <typename X>
struct is_broadcast_read : std::false_type {};
template <std::uint8_t I, typename T, BroadcastAction A>
struct is_broadcast_read<BroadcastRead<I, T, A>> : std::true_type {};
template <typename X>
decltype(auto) broadcast_value(const X& x) {
  if constexpr (is_broadcast_read<X>::value) return x.value();
  else return (x);
}
}  // namespace detail

// Operators with a qBroadcast operand read it first (left to right, so that
// `qBroadcast<0, T, POP> + qBroadcast<1, T>` pops before it peeks) and apply qVar_t's operator.
#define TESSERA_EPU_BROADCAST_OP(OP)                                                                         \
  template <typename L, typename R,                                                                         \
            std::enable_if_t<detail::is_broadcast_read<L>::value || detail::is_broadcast_read<R>::value, int> = 0> \
  auto operator OP(const L& l, const R& r) {                                                                \
    const auto& lv = detail::broadcast_value(l);                                                            \
    const auto& rv = detail::broadcast_value(r);                                                            \
    return lv OP rv;                                                                                        \
  }
TESSERA_EPU_BROADCAST_OP(+)
TESSERA_EPU_BROADCAST_OP(-)
TESSERA_EPU_BROADCAST_OP(*)
TESSERA_EPU_BROADCAST_OP(/)
TESSERA_EPU_BROADCAST_OP(%)
TESSERA_EPU_BROADCAST_OP(&)
TESSERA_EPU_BROADCAST_OP(|)
TESSERA_EPU_BROADCAST_OP(^)
TESSERA_EPU_BROADCAST_OP(<<)
TESSERA_EPU_BROADCAST_OP(>>)
TESSERA_EPU_BROADCAST_OP(==)
TESSERA_EPU_BROADCAST_OP(!=)
TESSERA_EPU_BROADCAST_OP(<)
TESSERA_EPU_BROADCAST_OP(<=)
TESSERA_EPU_BROADCAST_OP(>)
TESSERA_EPU_BROADCAST_OP(>=)
#undef TESSERA_EPU_BROADCAST_OP
template <std::uint8_t I, typename T, BroadcastAction A>
qVar_t<T> operator-(const BroadcastRead<I, T, A>& x) {
  return -x.value();
}

template <std::uint8_t Index, typename T, BroadcastAction Action = BroadcastAction::PEEK>
inline constexpr BroadcastRead<Index, T, Action> qBroadcast{};

}  // namespace tessera::epu::sdk
