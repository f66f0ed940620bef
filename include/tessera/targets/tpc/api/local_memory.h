// __local__ memory (spec 000 §2.5.3) as a RAII array: construct it inside a kernel and it is
// carved from the running core's scalar local memory (scalar element types) or vector local
// memory (vector types). Exceeding the memory is a DeviceFault naming the kernel, the memory,
// the bytes asked for and the limit. The array lives in the memory's bytes at address(): what
// s_*_ld_l / v_*_ld_l_v read there is its elements, and it starts with what the memory holds
// (local memory is not zeroed, spec 000 §2.6.4: fresh memory holds the poison 0xDEADBEEF, so a
// kernel that reads it before writing gives visible garbage). Predicate arrays (bool256) are the
// exception: their memory bytes are reserved but not shared (how a predicate's bits lie in
// memory is not published), and they start as poison.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tessera/targets/tpc/api/types.h"

namespace tessera::tpc {

namespace detail {
template <typename T>
inline constexpr bool is_vector_v = requires {
  T::lanes;
}
|| std::is_same_v<T, bool256>;

// Bytes an element takes in the modeled local memory: a vector is 2048 bits and a bool256 256
// bits, whatever its host object holds beside (the ready cycle).
// Pairs of registers (float128, int64_float64_pair_t, ...) take both halves. Arrays take their
// elements.
template <typename T>
constexpr std::size_t modeled_size() {
  if constexpr (std::is_array_v<T>)
    return std::extent_v<T> * modeled_size<std::remove_extent_t<T>>();
  else if constexpr (std::is_base_of_v<bool256, T>)
    return 32;
  else if constexpr (requires { T::lanes; })
    return sizeof(T::v);
  else if constexpr (requires(T x) {
                       x.v1;
                       x.v2;
                     }) {
    if constexpr (sizeof(T) == sizeof(T::v1) + sizeof(T::v2))
      return modeled_size<decltype(T::v1)>() + modeled_size<decltype(T::v2)>();
    else
      return sizeof(T);
  } else {
    return sizeof(T);
  }
}
// The memories' access chunks (spec 000 §2.3.3): scalar local memory in aligned 4-byte chunks,
// vector local memory in aligned 256-byte ones (a register; halves take 128), where tpc-defs.h
// also aligns every vector type.
inline constexpr std::uint32_t kScalarChunk = 4;
inline constexpr std::uint32_t kVectorBytes = 256;
// Vectors, predicates and register pairs live in vector local memory, the rest in scalar local
// memory (tpc-clang's address spaces 2 and 1).
template <typename T>
inline constexpr bool in_vector_memory_v = [] {
  using E = std::remove_all_extents_t<T>;
  if constexpr (is_vector_v<E>)
    return true;
  else if constexpr (requires { decltype(E::v1)::lanes; })
    return true;
  else
    return false;
}();
// How a host array holds its modeled bytes: `count` elements of `element_bytes`, each at the
// start of `host_stride` host bytes (a vector's lanes come before its ready cycle; a register pair
// is its two vectors). Not `shared`: the host bytes do not map onto memory bytes (bool256 keeps
// a byte per bit).
struct LocalLayout {
  std::size_t count = 1;
  std::size_t element_bytes = 0;
  std::size_t host_stride = 0;
  bool shared = true;
};
template <typename T>
constexpr LocalLayout local_layout() {
  if constexpr (std::is_array_v<T>) {
    LocalLayout l = local_layout<std::remove_extent_t<T>>();
    l.count *= std::extent_v<T>;
    return l;
  } else if constexpr (std::is_base_of_v<bool256, T>) {
    return {1, 32, sizeof(T), false};
  } else if constexpr (requires { T::lanes; }) {
    return {1, sizeof(T::v), sizeof(T), true};
  } else if constexpr (requires {
                         decltype(T::v1)::lanes;
                         decltype(T::v2)::lanes;
                       }) {
    using V1 = decltype(T::v1);
    if constexpr (sizeof(T) == 2 * sizeof(V1) && sizeof(decltype(T::v2)) == sizeof(V1))
      return {2, sizeof(V1::v), sizeof(V1), true};
    else
      return {1, modeled_size<T>(), sizeof(T), false};
  } else {
    return {1, sizeof(T), sizeof(T), modeled_size<T>() == sizeof(T)};
  }
}
// Allocate / release an array in the instance's scalar (vector=false) or vector local memory:
// `modeled_bytes` of the core's memory (capacity faults), `host_bytes` of host storage, whose
// `layout` the memory's bytes at the returned address are while the array lives.
void* local_allocate(std::size_t host_bytes, std::size_t modeled_bytes, bool vector,
                     const LocalLayout& layout, std::uint32_t& address);
void local_release(void* p, bool vector, std::uint32_t address, bool shared);
}  // namespace detail

template <typename T, std::size_t N = 1>
class local_array {
  static_assert(std::is_trivially_copyable_v<T>, "local memory holds plain data");

 public:
  static constexpr bool in_vector_memory = detail::in_vector_memory_v<T>;

  local_array()
      : data_(static_cast<T*>(detail::local_allocate(sizeof(T) * N, detail::modeled_size<T>() * N,
                                                     in_vector_memory, layout(), address_))) {
    // The lanes hold the poison; a value's ready cycle is timing, not memory: ready at once.
    if constexpr (requires(T x) { x.ready; })
      for (std::size_t i = 0; i < N; ++i) data_[i].ready = 0;
  }
  ~local_array() {
    detail::local_release(data_, in_vector_memory, address_, layout().shared && layout().count > 0);
  }
  local_array(const local_array&) = delete;
  local_array& operator=(const local_array&) = delete;

  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* data() { return data_; }
  static constexpr std::size_t size() { return N; }
  // The byte address of element 0 in its local memory, as TPC-C's `(int)&array[0]`: what
  // s_<t>_ld_l / v_<t>_ld_l_v and the stores take.
  std::uint32_t address() const { return address_; }

 private:
  static constexpr detail::LocalLayout layout() {
    detail::LocalLayout l = detail::local_layout<T>();
    l.count *= N;
    return l;
  }
  std::uint32_t address_ = 0;
  T* data_;
};

}  // namespace tessera::tpc
