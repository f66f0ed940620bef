// Device element types (spec 001 §2.3, §5): the values FLOAT, HALF, INT, ... name the types a
// tensor may hold; sizes are the IPU's (§2.3.1), not the host's.
#pragma once

#include <cstdint>
#include <string>

namespace poplar {

class Type {
 public:
  constexpr Type() = default;
  explicit constexpr Type(std::uint8_t id) : id_(id) {}
  const std::string& toString() const;
  unsigned tesseraSize() const;  // bytes on the IPU
  bool isFloatingPoint() const;
  std::uint8_t tesseraId() const { return id_; }
  constexpr bool operator==(const Type&) const = default;
  bool operator<(const Type& other) const { return id_ < other.id_; }

 private:
  std::uint8_t id_ = 0;  // 0: no type
};

inline constexpr Type FLOAT{1};
inline constexpr Type HALF{2};
inline constexpr Type INT{3};
inline constexpr Type UNSIGNED_INT{4};
inline constexpr Type SHORT{5};
inline constexpr Type UNSIGNED_SHORT{6};
inline constexpr Type CHAR{7};
inline constexpr Type SIGNED_CHAR{8};
inline constexpr Type UNSIGNED_CHAR{9};
inline constexpr Type BOOL{10};
inline constexpr Type LONGLONG{11};
inline constexpr Type UNSIGNED_LONGLONG{12};

// The Type that holds a host type's values.
template <typename T>
struct equivalent_device_type;
#define TESSERA_POPLAR_EQUIV(host, dev) \
  template <>                           \
  struct equivalent_device_type<host> { \
    static constexpr Type value = dev;  \
  };
TESSERA_POPLAR_EQUIV(float, FLOAT)
TESSERA_POPLAR_EQUIV(int, INT)
TESSERA_POPLAR_EQUIV(unsigned, UNSIGNED_INT)
TESSERA_POPLAR_EQUIV(short, SHORT)
TESSERA_POPLAR_EQUIV(unsigned short, UNSIGNED_SHORT)
TESSERA_POPLAR_EQUIV(char, CHAR)
TESSERA_POPLAR_EQUIV(signed char, SIGNED_CHAR)
TESSERA_POPLAR_EQUIV(unsigned char, UNSIGNED_CHAR)
TESSERA_POPLAR_EQUIV(bool, BOOL)
TESSERA_POPLAR_EQUIV(long long, LONGLONG)
TESSERA_POPLAR_EQUIV(unsigned long long, UNSIGNED_LONGLONG)
#undef TESSERA_POPLAR_EQUIV

}  // namespace poplar
