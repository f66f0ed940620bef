// Shared by the epu tests: a fresh chimera-q16 (or another preset) per test, filling tensors,
// and the fault assertion.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include <epu.hpp>

#include "tessera/core/error.h"
#include "tessera/runtime/device.h"

namespace epu_test {

inline void use(const char* preset) { tessera::epu::set_device(tessera::runtime::Device::open(preset)); }

template <typename Tensor>
void iota_fill(Tensor& t, long start = 0) {
  for (std::size_t i = 0; i < Tensor::kLinear; ++i)
    t.data()[i] = static_cast<typename Tensor::elemType>(start + static_cast<long>(i));
}

// Runs `body` and expects an exception of type E whose message holds every one of `parts`.
template <typename E = tessera::DeviceFault, typename F>
void expect_error(F&& body, std::initializer_list<std::string> parts) {
  try {
    body();
    ADD_FAILURE() << "expected an error";
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const auto& part : parts) EXPECT_NE(msg.find(part), std::string::npos) << part << " not in: " << msg;
  }
}

}  // namespace epu_test
