// Shared by the aicore tests: GM buffers of half values, and the fault assertion.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernel_operator.h"
#include "tessera/core/error.h"
#include "tikicpulib.h"

namespace aicore_test {

template <typename T>
struct Gm {
  T* p = nullptr;
  std::size_t n = 0;
  explicit Gm(std::size_t count)
      : p(static_cast<T*>(AscendC::GmAlloc(count * sizeof(T)))), n(count) {}
  ~Gm() { AscendC::GmFree(p); }
  Gm(const Gm&) = delete;
  Gm& operator=(const Gm&) = delete;
  T& operator[](std::size_t i) { return p[i]; }
  GM_ADDR addr() const { return reinterpret_cast<GM_ADDR>(p); }
};

inline void fill(Gm<half>& g, unsigned seed, float lo = -2.0f, float hi = 2.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  for (std::size_t i = 0; i < g.n; ++i) g[i] = static_cast<half>(d(gen));
}

// Runs `body` and expects a DeviceFault whose message holds every one of `parts`.
template <typename F>
void expect_fault(F&& body, std::initializer_list<std::string> parts) {
  try {
    body();
    ADD_FAILURE() << "expected a DeviceFault";
  } catch (const tessera::DeviceFault& e) {
    const std::string msg = e.what();
    for (const auto& part : parts)
      EXPECT_NE(msg.find(part), std::string::npos) << part << " not in: " << msg;
  }
}

}  // namespace aicore_test
