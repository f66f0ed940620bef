// Shared helpers for the op tests: building tensors and comparing with a readable failure.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "tessera/core/tensor.h"

namespace tessera::test {

inline Tensor F(const Shape& shape, const std::vector<float>& values) {
  return Tensor::from_vector(shape, values);
}

inline Tensor I(DType dtype, const Shape& shape, const std::vector<std::int64_t>& values) {
  return Tensor::from_ints(dtype, shape, values);
}

// Deterministic pseudo-random values in [-1, 1) (no <random> so results never depend on the
// standard library).
inline Tensor random_tensor(const Shape& shape, std::uint32_t seed) {
  std::vector<float> v(static_cast<std::size_t>(shape.element_count()));
  std::uint32_t s = seed * 2654435761u + 12345u;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return Tensor::from_vector(shape, v);
}

inline ::testing::AssertionResult Close(const Tensor& actual, const Tensor& expected,
                                        double rtol = 1e-5, double atol = 1e-6) {
  if (actual.dtype() != expected.dtype())
    return ::testing::AssertionFailure()
           << "dtype " << dtype_name(actual.dtype()) << " differs from expected "
           << dtype_name(expected.dtype());
  const CompareResult r = compare(actual, expected, rtol, atol);
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.message << "\n  actual   " << actual.to_string(32)
                                       << "\n  expected " << expected.to_string(32);
}

// Runs fn, expecting a UserError whose message contains every fragment.
template <typename Fn>
::testing::AssertionResult ThrowsUserError(Fn&& fn, std::initializer_list<const char*> fragments) {
  try {
    fn();
  } catch (const UserError& e) {
    const std::string msg = e.what();
    for (const char* f : fragments)
      if (msg.find(f) == std::string::npos)
        return ::testing::AssertionFailure() << "message '" << msg << "' lacks '" << f << "'";
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a different exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "no exception thrown";
}

}  // namespace tessera::test
