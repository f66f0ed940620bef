// The poplar_error family. Each error is also one of Tessera's (UserError for API misuse,
// DeviceFault for what the IPU faults on), so `catch (const poplar::poplar_error&)` and
// `catch (const tessera::UserError&)` both work.
#pragma once

#include <string>

#include "tessera/core/error.h"

namespace poplar {

// A program may throw poplar_error itself (Graphcore's examples do). Tessera's own errors are
// std::exceptions through tessera::UserError / DeviceFault; a bare poplar_error is not one.
class poplar_error {
 public:
  explicit poplar_error(const std::string& message) : type("poplar_error"), message_(message) {}
  explicit poplar_error(const char* message) : poplar_error(std::string(message ? message : "")) {}
  virtual ~poplar_error() = default;
  virtual const char* what() const noexcept { return message_.c_str(); }
  std::string type;  // the error class's name

 protected:
  struct Kind {
    std::string name;
  };
  explicit poplar_error(Kind k) : type(std::move(k.name)) {}

 private:
  std::string message_;
};

#define TESSERA_POPLAR_USER_ERROR(name)                                                   \
  class name : public ::tessera::UserError, public poplar_error {                         \
   public:                                                                                \
    explicit name(const std::string& m) : ::tessera::UserError(m), poplar_error(Kind{#name}) {} \
    const char* what() const noexcept override { return ::tessera::UserError::what(); }   \
  };
#define TESSERA_POPLAR_DEVICE_FAULT(name)                                                 \
  class name : public ::tessera::DeviceFault, public poplar_error {                       \
   public:                                                                                \
    name(std::string where, const std::string& m)                                         \
        : ::tessera::DeviceFault(std::move(where), m), poplar_error(Kind{#name}) {}       \
    const char* what() const noexcept override { return ::tessera::DeviceFault::what(); } \
  };

TESSERA_POPLAR_USER_ERROR(graph_connection_error)
TESSERA_POPLAR_USER_ERROR(graph_program_compilation_error)
TESSERA_POPLAR_USER_ERROR(graph_cycle_error)
TESSERA_POPLAR_USER_ERROR(invalid_option)
TESSERA_POPLAR_USER_ERROR(invalid_machine_model)
TESSERA_POPLAR_USER_ERROR(invalid_tile_mapping)
TESSERA_POPLAR_USER_ERROR(index_error)
TESSERA_POPLAR_USER_ERROR(missing_perf_estimate)
TESSERA_POPLAR_USER_ERROR(no_size_specified)
TESSERA_POPLAR_USER_ERROR(parse_error)
TESSERA_POPLAR_USER_ERROR(stream_connection_error)
TESSERA_POPLAR_USER_ERROR(tensor_creation_error)
TESSERA_POPLAR_USER_ERROR(tensor_io_state_error)
TESSERA_POPLAR_USER_ERROR(type_error)
TESSERA_POPLAR_USER_ERROR(unknown_field)
TESSERA_POPLAR_USER_ERROR(unknown_vertex_type)
TESSERA_POPLAR_USER_ERROR(control_program_error)
TESSERA_POPLAR_USER_ERROR(file_load_error)
TESSERA_POPLAR_USER_ERROR(memory_elem_constraints_error)
TESSERA_POPLAR_DEVICE_FAULT(graph_memory_allocation_error)
TESSERA_POPLAR_DEVICE_FAULT(runtime_error)
TESSERA_POPLAR_DEVICE_FAULT(application_runtime_error)

#undef TESSERA_POPLAR_USER_ERROR
#undef TESSERA_POPLAR_DEVICE_FAULT

}  // namespace poplar
