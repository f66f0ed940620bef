// Ascend C tiling data for Tessera: the host defines a tiling class with BEGIN_TILING_DATA_DEF /
// TILING_DATA_FIELD_DEF(_ARR, _STRUCT) / END_TILING_DATA_DEF, fills it with set_<field>, writes
// it with SaveToBuffer into GM, and the kernel reads it with GET_TILING_DATA (Ascend C API
// reference, "TilingData结构定义", CANN 8.0; header register/tilingdata_base.h). Host and kernel
// build with one compiler here, so the kernel reads the very class the host defined: fields by
// name, in declaration order and natural alignment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tessera/core/error.h"

namespace optiling {

// What every tiling class inherits: serialisation of its fields.
template <typename Derived>
class TilingDef {
 public:
  // Writes the fields to `buf` (the kernel's tiling argument); UserError when `capacity` is
  // smaller than GetDataSize().
  void SaveToBuffer(void* buf, std::size_t capacity) const {
    static_assert(std::is_trivially_copyable_v<Derived>, "tiling fields must be plain data");
    if (buf == nullptr || capacity < sizeof(Derived))
      tessera::throw_user_error(
          "SaveToBuffer: the tiling data takes {} bytes but the buffer holds {}{}; allocate at "
          "least GetDataSize() bytes",
          sizeof(Derived), capacity, buf == nullptr ? " (null)" : "");
    std::memcpy(buf, static_cast<const Derived*>(this), sizeof(Derived));
  }
  std::size_t GetDataSize() const { return sizeof(Derived); }
};

}  // namespace optiling

#define BEGIN_TILING_DATA_DEF(class_name)                       \
  class class_name : public ::optiling::TilingDef<class_name> { \
   public:

#define TILING_DATA_FIELD_DEF(data_type, field_name)   \
  static_assert(std::is_arithmetic_v<data_type>,       \
                "TILING_DATA_FIELD_DEF takes integer " \
                "or float fields");                    \
  data_type field_name{};                              \
  void set_##field_name(data_type value) {             \
    field_name = value;                                \
  }                                                    \
  data_type get_##field_name() const {                 \
    return field_name;                                 \
  }

#define TILING_DATA_FIELD_DEF_ARR(arr_type, arr_size, field_name) \
  arr_type field_name[arr_size]{};                                \
  void set_##field_name(const arr_type* value) {                  \
    std::memcpy(field_name, value, sizeof(field_name));           \
  }                                                               \
  const arr_type* get_##field_name() const {                      \
    return field_name;                                            \
  }

#define TILING_DATA_FIELD_DEF_STRUCT(struct_type, field_name) \
  struct_type field_name{};                                   \
  void set_##field_name(const struct_type& value) {           \
    field_name = value;                                       \
  }                                                           \
  const struct_type& get_##field_name() const {               \
    return field_name;                                        \
  }

#define END_TILING_DATA_DEF }

// Names the tiling class of an operator; the last one registered in namespace optiling of a
// translation unit is what GET_TILING_DATA reads there (as the op's generated kernel header
// does in CANN).
#define REGISTER_TILING_DATA_CLASS(op_type, class_name) \
  using op_type##TilingData_ = class_name;              \
  using TesseraDefaultTilingData = class_name;
