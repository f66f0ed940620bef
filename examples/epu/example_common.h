// Shared by the EPU examples: a check that counts mismatches, and the run's summary.
#pragma once

#include <cstdio>
#include <string>

#include <epu.hpp>

namespace example {

inline int g_errors = 0;

template <typename A, typename B>
void check(const A& got, const B& want, const char* what) {
  if (!(got == want)) {
    if (g_errors < 10) std::printf("MISMATCH %s: got %ld, want %ld\n", what, static_cast<long>(got), static_cast<long>(want));
    ++g_errors;
  }
}

// Records the program as one kernel and prints its cycles and the split by unit.
inline void summary(const char* name) {
  const auto k = tessera::epu::synchronize(name);
  const auto& p = tessera::epu::device().profile();
  std::printf("%s on %s: %llu cycles (%.3f us)\n", name, tessera::epu::device().spec().name.c_str(),
              static_cast<unsigned long long>(k.cycles), static_cast<double>(k.cycles) / tessera::epu::device().spec().clock_hz.value * 1e6);
  for (const char* u : {"array", "flow", "rau", "broadcast", "dma"}) {
    const auto it = p.pipe_busy_cycles.find(std::string("epu/") + u);
    std::printf("  %-9s busy %llu cycles\n", u, it == p.pipe_busy_cycles.end() ? 0ULL : static_cast<unsigned long long>(it->second));
  }
}

// main's body: errors of the library print their message and fail the program.
template <typename F>
int run(F&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
  std::printf(g_errors ? "FAILED (%d mismatches)\n" : "OK\n", g_errors);
  return g_errors ? 1 : 0;
}

}  // namespace example
