// The three kinds of error Tessera raises (ARCHITECTURE rule 5).
// UserError: bad input, configuration or API misuse; says what and how to fix it.
// DeviceFault: what the hardware would fault on; names where (core/tile, op) and why.
// InternalError: a bug in Tessera. The library never calls exit().
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace tessera {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class UserError : public Error {
 public:
  explicit UserError(const std::string& message) : Error(message) {}
};

// `where` names the place (e.g. "tpc3 kernel abs_f32" or "tile 37"); `message` says what
// was violated, the address or limit involved, and what to change.
class DeviceFault : public Error {
 public:
  DeviceFault(std::string where, const std::string& message)
      : Error(where + ": " + message), where_(std::move(where)), detail_(message) {}
  const std::string& where() const noexcept { return where_; }
  const std::string& detail() const noexcept { return detail_; }

 private:
  std::string where_;
  std::string detail_;
};

class InternalError : public Error {
 public:
  explicit InternalError(const std::string& message)
      : Error("internal error (a bug in Tessera, please report it): " + message) {}
};

template <typename... Args>
[[noreturn]] void throw_user_error(fmt::format_string<Args...> format, Args&&... args) {
  throw UserError(fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
[[noreturn]] void throw_internal_error(fmt::format_string<Args...> format, Args&&... args) {
  throw InternalError(fmt::format(format, std::forward<Args>(args)...));
}

// Checks an invariant of Tessera itself; a failure is an InternalError, never a user's fault.
#define TESSERA_CHECK(cond, ...)                                                     \
  do {                                                                               \
    if (!(cond)) ::tessera::throw_internal_error("{}:{}: check '{}' failed: {}",     \
                                                 __FILE__, __LINE__, #cond,          \
                                                 ::fmt::format(__VA_ARGS__));        \
  } while (0)

}  // namespace tessera
