// __local__ memory (spec 000 §2.5.3) as a RAII array: construct it inside a kernel and it is
// carved from the running core's scalar local memory (scalar element types) or vector local
// memory (vector types). Exceeding the memory is a DeviceFault naming the kernel, the memory,
// the bytes asked for and the limit. Fresh local memory is not zeroed (spec 000 §2.6.4): it
// holds a fixed poison pattern, so a kernel that reads it before writing gives visible garbage.
#pragma once

#include <cstddef>
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
// Allocate / release an array in the instance's scalar (vector=false) or vector local memory:
// `modeled_bytes` of the core's memory (capacity faults), `host_bytes` of host storage.
void* local_allocate(std::size_t host_bytes, std::size_t modeled_bytes, bool vector);
void local_release(void* p, bool vector);
}  // namespace detail

template <typename T, std::size_t N = 1>
class local_array {
  static_assert(std::is_trivially_copyable_v<T>, "local memory holds plain data");

 public:
  static constexpr bool in_vector_memory = detail::is_vector_v<T>;

  local_array()
      : data_(static_cast<T*>(detail::local_allocate(sizeof(T) * N, detail::modeled_size<T>() * N,
                                                     in_vector_memory))) {
    // The lanes hold the poison; a value's ready cycle is timing, not memory: ready at once.
    if constexpr (requires(T x) { x.ready; })
      for (std::size_t i = 0; i < N; ++i) data_[i].ready = 0;
  }
  ~local_array() { detail::local_release(data_, in_vector_memory); }
  local_array(const local_array&) = delete;
  local_array& operator=(const local_array&) = delete;

  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* data() { return data_; }
  static constexpr std::size_t size() { return N; }

 private:
  T* data_;
};

}  // namespace tessera::tpc
