// The C boundary of the bm target: every exported function runs its body through guard(), so
// that no exception crosses into C. The error becomes the thread's last error (kind and
// message, logged) and the function returns its documented failure value (spec 002 bmerr_t).
#pragma once

#include <libbmruntime/bmruntime.h>

#include <string>
#include <utility>

namespace tessera::bm {

void set_last_error(tessera_bm_error_kind_t kind, const std::string& message);
// Records the exception being handled; returns its bmerr_t (UserError: invalid argument,
// DeviceFault: failure, std::bad_alloc: no memory).
bmerr_t record_current_exception(const char* function);

template <typename R, typename F>
R guard(const char* function, R on_error, F&& body) noexcept {
  try {
    return std::forward<F>(body)();
  } catch (...) {
    record_current_exception(function);
    return on_error;
  }
}

template <typename F>
bmerr_t guard_status(const char* function, F&& body) noexcept {
  try {
    std::forward<F>(body)();
    return BM_SUCCESS;
  } catch (...) {
    return record_current_exception(function);
  }
}

template <typename F>
void guard_void(const char* function, F&& body) noexcept {
  try {
    std::forward<F>(body)();
  } catch (...) {
    record_current_exception(function);
  }
}

}  // namespace tessera::bm
