// What codelets are written against (spec 001 §2.8, §3, §4): the Vertex and MultiVertex base
// classes and the field templates Input, Output, InOut, Vector and VectorList. Every field is a
// pointer and a count filled by the Engine (tessera/targets/ipu/api/codelet_abi.h); indexing
// past a field's end is a DeviceFault naming the vertex and field unless the codelet is compiled
// with -DTESSERA_IPU_UNCHECKED.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>

#include <poplar/HalfFloat.hpp>
#include <poplar/StackSizeDefs.hpp>
#include <poplar/TileConstants.hpp>
#include <poplar/VectorLayout.hpp>

#include "tessera/targets/ipu/api/codelet_abi.h"

namespace poplar {

class Vertex {
 public:
  static constexpr bool tessera_multi_vertex = false;
};

// Runs on the tile's supervisor context, which holds every execution slot while no worker runs
// (spec 001 §7.1.1): its cycle estimate is the tile's time. compute() takes no arguments.
// Poplar marks its compute() __attribute__((target("supervisor"))), which addCodelets accepts.
class SupervisorVertex {
 public:
  static constexpr bool tessera_multi_vertex = false;
};

// Its compute(unsigned workerId) runs once per worker context of the tile (spec 001 §3.3).
class MultiVertex {
 public:
  static constexpr bool tessera_multi_vertex = true;
  static constexpr unsigned numWorkers() { return CTXT_WORKERS; }
};

template <typename T, VectorLayout L = VectorLayout::SPAN, unsigned MinAlign = alignof(T),
          bool Interleaved = false>
class Vector;
template <typename T, VectorListLayout L = VectorListLayout::DELTANELEMENTS,
          unsigned MinAlign = alignof(T), bool Interleaved = false>
class VectorList;
template <typename T>
class Input;
template <typename T>
class Output;
template <typename T>
class InOut;

namespace detail {

namespace abi = ::tessera::ipu::abi;

template <typename E>
inline E& at(const abi::EdgeSpan& s, std::size_t i) {
#ifndef TESSERA_IPU_UNCHECKED
  if (i >= s.size) [[unlikely]]
    tessera_ipu_vector_index_fault(&s, i);
#endif
  return static_cast<E*>(s.data)[i];
}

// A 1-D view: the storage of every Vector-like field.
template <typename E>
class VectorView {
 public:
  using value_type = std::remove_const_t<E>;
  std::size_t size() const { return s_.size; }
  E& operator[](std::size_t i) const { return at<E>(s_, i); }
  E* begin() const { return static_cast<E*>(s_.data); }
  E* end() const { return begin() + s_.size; }
  E* data() const { return begin(); }
  E& operator*() const { return at<E>(s_, 0); }

 protected:
  abi::EdgeSpan s_;
};

// A 2-D view: rows are VectorViews (VectorList, Vector<Input<Vector<T>>>).
template <typename Row>
class ListView {
 public:
  std::size_t size() const { return s_.size; }
  const Row& operator[](std::size_t i) const { return at<const Row>(s_, i); }
  const Row* begin() const { return static_cast<const Row*>(s_.data); }
  const Row* end() const { return begin() + s_.size; }
  const Row& operator*() const { return at<const Row>(s_, 0); }

 protected:
  abi::EdgeSpan s_;
};

template <typename T>
constexpr const char* type_name() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>)
    return "float";
  else if constexpr (std::is_same_v<U, half>)
    return "half";
  else if constexpr (std::is_same_v<U, int>)
    return "int";
  else if constexpr (std::is_same_v<U, unsigned>)
    return "unsigned int";
  else if constexpr (std::is_same_v<U, short>)
    return "short";
  else if constexpr (std::is_same_v<U, unsigned short>)
    return "unsigned short";
  else if constexpr (std::is_same_v<U, char>)
    return "char";
  else if constexpr (std::is_same_v<U, signed char>)
    return "signed char";
  else if constexpr (std::is_same_v<U, unsigned char>)
    return "unsigned char";
  else if constexpr (std::is_same_v<U, bool>)
    return "bool";
  else if constexpr (std::is_same_v<U, long long>)
    return "long long";
  else if constexpr (std::is_same_v<U, unsigned long long>)
    return "unsigned long long";
  else
    return nullptr;
}

template <typename F>
struct field_info {  // a plain member: vertex state
  static constexpr abi::FieldKind kind = abi::FieldKind::state;
  static constexpr abi::FieldAccess access = abi::FieldAccess::none;
  using element = F;
  static constexpr unsigned layout = 0, min_align = alignof(F);
  static constexpr bool interleaved = false, has_size = true;
};

template <VectorLayout L>
constexpr bool layout_has_size() {
  return L == VectorLayout::SPAN || L == VectorLayout::SHORT_SPAN;
}

}  // namespace detail

// ---- single elements ----
template <typename T>
class Input {
 public:
  operator const T&() const { return *static_cast<const T*>(s_.data); }
  const T& operator*() const { return *static_cast<const T*>(s_.data); }
  const T* operator->() const { return static_cast<const T*>(s_.data); }
  const T& operator[](std::size_t i) const { return detail::at<const T>(s_, i); }
  const T* begin() const { return static_cast<const T*>(s_.data); }
  const T* end() const { return begin() + s_.size; }

 private:
  detail::abi::EdgeSpan s_;
};

template <typename T>
class Output {
 public:
  operator T&() const { return *static_cast<T*>(s_.data); }
  T& operator*() const { return *static_cast<T*>(s_.data); }
  T* operator->() const { return static_cast<T*>(s_.data); }
  T& operator[](std::size_t i) const { return detail::at<T>(s_, i); }
  T* begin() const { return static_cast<T*>(s_.data); }
  T* end() const { return begin() + s_.size; }
  const Output& operator=(const T& v) const {
    *static_cast<T*>(s_.data) = v;
    return *this;
  }

 private:
  detail::abi::EdgeSpan s_;
};

template <typename T>
class InOut : public Output<T> {
 public:
  using Output<T>::operator=;
};

// ---- vectors of elements ----
// `x->size()` reaches the vector as Poplar's field types allow.
template <typename T, VectorLayout L, unsigned A, bool I>
class Input<Vector<T, L, A, I>> : public detail::VectorView<const T> {
 public:
  const detail::VectorView<const T>* operator->() const { return this; }
};
template <typename T, VectorLayout L, unsigned A, bool I>
class Output<Vector<T, L, A, I>> : public detail::VectorView<T> {
 public:
  const detail::VectorView<T>* operator->() const { return this; }
};
template <typename T, VectorLayout L, unsigned A, bool I>
class InOut<Vector<T, L, A, I>> : public detail::VectorView<T> {
 public:
  const detail::VectorView<T>* operator->() const { return this; }
};

template <typename T, VectorListLayout L, unsigned A, bool I>
class Input<VectorList<T, L, A, I>> : public detail::ListView<detail::VectorView<const T>> {};
template <typename T, VectorListLayout L, unsigned A, bool I>
class Output<VectorList<T, L, A, I>> : public detail::ListView<detail::VectorView<T>> {};
template <typename T, VectorListLayout L, unsigned A, bool I>
class InOut<VectorList<T, L, A, I>> : public detail::ListView<detail::VectorView<T>> {};

// A plain Vector member: vertex state when T is a value type, a list of edges when T is
// Input/Output/InOut<...> (spec 001 §4.2.3).
template <typename T, VectorLayout L, unsigned A, bool I>
class Vector : public detail::VectorView<T> {};

namespace detail {

template <typename T>
struct edge_access;
template <typename T>
struct edge_access<Input<T>> {
  static constexpr abi::FieldAccess value = abi::FieldAccess::in;
  using inner = T;
};
template <typename T>
struct edge_access<Output<T>> {
  static constexpr abi::FieldAccess value = abi::FieldAccess::out;
  using inner = T;
};
template <typename T>
struct edge_access<InOut<T>> {
  static constexpr abi::FieldAccess value = abi::FieldAccess::inout;
  using inner = T;
};

template <typename T>
struct is_vector : std::false_type {};
template <typename T, VectorLayout L, unsigned A, bool I>
struct is_vector<Vector<T, L, A, I>> : std::true_type {
  using element = T;
  static constexpr unsigned layout = static_cast<unsigned>(L), min_align = A;
  static constexpr bool interleaved = I, has_size = layout_has_size<L>();
};
template <typename T>
struct is_list : std::false_type {};
template <typename T, VectorListLayout L, unsigned A, bool I>
struct is_list<VectorList<T, L, A, I>> : std::true_type {
  using element = T;
  static constexpr unsigned layout = static_cast<unsigned>(L), min_align = A;
  static constexpr bool interleaved = I, has_size = true;
};

template <typename T>
struct vector_shape {  // element, layout, ... of a Vector/VectorList, or T itself
  using element = T;
  static constexpr unsigned layout = 0, min_align = alignof(T);
  static constexpr bool interleaved = false, has_size = true;
};
template <typename T, VectorLayout L, unsigned A, bool I>
struct vector_shape<Vector<T, L, A, I>> : is_vector<Vector<T, L, A, I>> {};
template <typename T, VectorListLayout L, unsigned A, bool I>
struct vector_shape<VectorList<T, L, A, I>> : is_list<VectorList<T, L, A, I>> {};

template <typename T>
struct field_info<Input<T>> : vector_shape<T> {
  static constexpr abi::FieldAccess access = abi::FieldAccess::in;
  static constexpr abi::FieldKind kind =
      is_vector<T>::value ? abi::FieldKind::edge_vector
                          : (is_list<T>::value ? abi::FieldKind::edge_2d : abi::FieldKind::edge);
};
template <typename T>
struct field_info<Output<T>> : field_info<Input<T>> {
  static constexpr abi::FieldAccess access = abi::FieldAccess::out;
};
template <typename T>
struct field_info<InOut<T>> : field_info<Input<T>> {
  static constexpr abi::FieldAccess access = abi::FieldAccess::inout;
};
template <typename T, VectorLayout L, unsigned A, bool I>
struct field_info<Vector<T, L, A, I>> : is_vector<Vector<T, L, A, I>> {
  static constexpr bool of_edges = requires { edge_access<T>::value; };
  static constexpr abi::FieldAccess access = [] {
    if constexpr (of_edges)
      return edge_access<T>::value;
    else
      return abi::FieldAccess::none;
  }();
  static constexpr abi::FieldKind kind = [] {
    if constexpr (!of_edges)
      return abi::FieldKind::state_vector;
    else if constexpr (is_vector<typename edge_access<T>::inner>::value)
      return abi::FieldKind::edge_2d;
    else
      return abi::FieldKind::edge_scalars;
  }();
};

template <typename F>
struct field_element {
  using type = typename field_info<F>::element;
};
template <typename T, VectorLayout L, unsigned A, bool I>
struct field_element<Vector<T, L, A, I>> {
  static auto pick() {
    if constexpr (requires { edge_access<T>::value; })
      return std::type_identity<typename vector_shape<typename edge_access<T>::inner>::element>{};
    else
      return std::type_identity<T>{};
  }
  using type = typename decltype(pick())::type;
};

template <typename F>
constexpr abi::FieldDesc describe_field(const char* name, std::size_t offset) {
  using Info = field_info<F>;
  using E = std::conditional_t<Info::kind == abi::FieldKind::edge_2d ||
                                   Info::kind == abi::FieldKind::edge_scalars,
                               typename field_element<F>::type, typename Info::element>;
  abi::FieldDesc d;
  d.name = name;
  d.offset = offset;
  d.host_bytes = sizeof(F);
  d.kind = Info::kind;
  d.access = Info::access;
  d.element_type = type_name<E>();
  d.element_bytes = static_cast<std::uint32_t>(sizeof(E));
  d.min_align = Info::min_align < alignof(E) ? alignof(E) : Info::min_align;
  d.layout = Info::layout;
  d.interleaved = Info::interleaved;
  d.has_size = Info::has_size;
  return d;
}

template <typename C>
constexpr bool external_codelet() {
  if constexpr (requires { C::isExternalCodelet; })
    return static_cast<bool>(C::isExternalCodelet);
  else
    return false;
}

template <typename C>
abi::VertexTypeDesc describe_vertex(const char* name, const abi::FieldDesc* fields, std::size_t n,
                                    const char* const* constraints) {
  abi::VertexTypeDesc d;
  d.name = name;
  d.size = sizeof(C);
  d.align = alignof(C);
  d.multi_vertex = std::is_base_of_v<MultiVertex, C>;
  d.supervisor = std::is_base_of_v<SupervisorVertex, C>;
  d.external = external_codelet<C>();
  d.constraints = constraints;
  d.construct = [](void* p) { new (p) C(); };
  d.destroy = [](void* p) { static_cast<C*>(p)->~C(); };
  if constexpr (std::is_base_of_v<MultiVertex, C>) {
    d.compute_worker = [](void* p, unsigned w) -> bool {
      if constexpr (std::is_void_v<decltype(static_cast<C*>(p)->compute(w))>) {
        static_cast<C*>(p)->compute(w);
        return true;
      } else {
        return static_cast<C*>(p)->compute(w);
      }
    };
  } else {
    d.compute = [](void* p) -> bool {
      if constexpr (std::is_void_v<decltype(static_cast<C*>(p)->compute())>) {
        static_cast<C*>(p)->compute();
        return true;
      } else {
        return static_cast<C*>(p)->compute();
      }
    };
  }
  d.fields = fields;
  d.field_count = n;
  return d;
}

// A field named by a pointer to member, which the registration code may form for a private
// field too (access is not checked in an explicit instantiation's arguments), so fields need
// not be public, as Graphcore's examples declare them in a `class`. The offset is measured on
// storage of C's size and alignment.
template <typename C, typename F, typename B>
abi::FieldDesc describe_member(const char* name, F B::*field) {
  F C::*m = field;  // a field of a base class, at its place in C
  alignas(C) static unsigned char storage[sizeof(C)];
  const auto* c = reinterpret_cast<const C*>(storage);
  return describe_field<F>(
      name, static_cast<std::size_t>(reinterpret_cast<const unsigned char*>(&(c->*m)) - storage));
}

}  // namespace detail
}  // namespace poplar

// Used by the registration code addCodelets generates for each vertex class it finds.
#define TESSERA_IPU_FIELD(Class, field) \
  ::poplar::detail::describe_field<decltype(Class::field)>(#field, offsetof(Class, field))
