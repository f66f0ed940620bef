// Shared by the API-misuse tests: run a call that must fail and return its message, so that each
// test asserts the kind of error (UserError or DeviceFault) and what the message names.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <typeinfo>

#include "tessera/core/error.h"

namespace misuse {

// Runs `fn`, expects an exception of type E and returns its message; anything else (another
// exception, nothing thrown) is a test failure.
template <typename E, typename F>
std::string message_of(F&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected " << typeid(E).name() << ", got " << typeid(e).name() << ": "
                  << e.what();
    return {};
  }
  ADD_FAILURE() << "expected " << typeid(E).name() << ", nothing was thrown";
  return {};
}

}  // namespace misuse

#define EXPECT_MENTIONS(text, part)                          \
  EXPECT_NE(std::string(text).find(part), std::string::npos) \
      << "missing '" << (part) << "' in: " << (text)
