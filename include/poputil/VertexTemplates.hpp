// Vertex type names with template arguments (PopLibs API: poputil/VertexTemplates.hpp):
// templateVertex("popops::Foo", FLOAT, 4u) -> "popops::Foo<float,4>".
#pragma once

#include <string>
#include <type_traits>

#include <poplar/Type.hpp>

namespace poputil {

namespace detail {
inline std::string vertexArg(const poplar::Type& t) {
  return t.toString();
}
inline std::string vertexArg(const std::string& s) {
  return s;
}
inline std::string vertexArg(const char* s) {
  return s;
}
inline std::string vertexArg(bool b) {
  return b ? "true" : "false";
}
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
std::string vertexArg(T v) {
  return std::to_string(v);
}
}  // namespace detail

template <typename... Args>
std::string templateVertex(const std::string& name, const Args&... args) {
  std::string s = name;
  if constexpr (sizeof...(Args) > 0) {
    s += "<";
    bool first = true;
    ((s += (first ? "" : ","), s += detail::vertexArg(args), first = false), ...);
    s += ">";
  }
  return s;
}

}  // namespace poputil
