// A non-owning view of a contiguous array, as Poplar's API takes shapes and lists
// (std::vector, std::array, an initializer list or a single value).
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <string_view>
#include <vector>

namespace poplar {

template <typename T>
class ArrayRef {
 public:
  ArrayRef() = default;
  ArrayRef(const T* data, std::size_t size) : data_(data), size_(size) {}
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}
  template <std::size_t N>
  ArrayRef(const std::array<T, N>& a) : data_(a.data()), size_(N) {}
  // Like Poplar's: the list lives until the end of the call the ArrayRef is an argument of.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  ArrayRef(std::initializer_list<T> list) : data_(list.begin()), size_(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

  const T* begin() const {
    return data_;
  }
  const T* end() const {
    return data_ + size_;
  }
  const T* data() const {
    return data_;
  }
  std::size_t size() const {
    return size_;
  }
  bool empty() const {
    return size_ == 0;
  }
  const T& operator[](std::size_t i) const {
    return data_[i];
  }
  const T& front() const {
    return data_[0];
  }
  const T& back() const {
    return data_[size_ - 1];
  }
  std::vector<T> vec() const {
    return std::vector<T>(begin(), end());
  }
  operator std::vector<T>() const {
    return vec();
  }

 private:
  const T* data_ = nullptr;
  std::size_t size_ = 0;
};

using StringRef = std::string_view;

}  // namespace poplar
