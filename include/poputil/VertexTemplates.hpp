// Vertex type names with template arguments (PopLibs API: poputil/VertexTemplates.hpp):
// templateVertex("popops::Foo", FLOAT, 4u) -> "popops::Foo<float,4>". Each argument is spelled
// by VertexTemplateToString<T>::to_string, which a program specialises for its own types (an
// enum of its codelets' template parameters, say).
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include <poplar/ArrayRef.hpp>
#include <poplar/Type.hpp>

namespace poputil {

template <typename T>
struct VertexTemplateToString {
  static std::string to_string(const T& x) {
    static_assert(std::is_arithmetic_v<T>,
                  "specialise poputil::VertexTemplateToString<T> to spell this template argument");
    return std::to_string(x);
  }
};

template <>
struct VertexTemplateToString<poplar::Type> {
  static std::string to_string(const poplar::Type& t) { return t.toString(); }
};
template <>
struct VertexTemplateToString<bool> {
  static std::string to_string(const bool& b) { return b ? "true" : "false"; }
};
template <>
struct VertexTemplateToString<std::string> {
  static std::string to_string(const std::string& s) { return s; }
};
template <>
struct VertexTemplateToString<poplar::StringRef> {  // std::string_view
  static std::string to_string(const poplar::StringRef& s) { return std::string(s); }
};

namespace detail {
template <typename T>
std::string vertexTemplateArg(const T& x) {
  if constexpr (std::is_convertible_v<const T&, const char*>)
    return std::string(static_cast<const char*>(x));  // string literals and char arrays
  else
    return VertexTemplateToString<std::decay_t<T>>::to_string(x);
}
}  // namespace detail

template <typename... Args>
std::string templateVertex(const std::string& name, Args&&... args) {
  std::string s = name;
  if constexpr (sizeof...(Args) > 0) {
    const char* sep = "<";
    ((s += sep, s += detail::vertexTemplateArg(args), sep = ","), ...);
    s += ">";
  }
  return s;
}

}  // namespace poputil
