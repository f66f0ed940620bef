// Builds small ONNX models in memory for the compiler tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/core/tensor.h"

namespace tessera::testing {

struct OnnxNode {
  std::string op;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> int_attrs;  // ints (or one int)
  bool scalar_attrs = false;  // int_attrs of one value are written as INT, not INTS
  std::vector<std::pair<std::string, std::string>> string_attrs;
};

struct OnnxInput {
  std::string name;
  std::vector<std::string> dims;  // numbers or symbolic names, outermost first
  int elem_type = 1;              // onnx.TensorProto.DataType (1 float, 7 int64)
};

// A model: inputs, initializers (f32 -> FLOAT, i32 or i64 -> INT64 in int64_data, u64 ->
// UINT64 in uint64_data, f64 -> DOUBLE in raw_data; outermost-first dims), nodes, outputs.
std::vector<std::byte> make_model(const std::vector<OnnxInput>& inputs,
                                  const std::vector<std::pair<std::string, Tensor>>& initializers,
                                  const std::vector<OnnxNode>& nodes,
                                  const std::vector<OnnxInput>& outputs, std::int64_t opset = 13);

std::vector<std::byte> read_bytes(const std::string& path);

// An f32 tensor of `shape` drawn uniformly from [-scale, scale) by a seeded mt19937 (the same
// values on every platform run).
Tensor random_tensor(const Shape& shape, float scale, unsigned seed);

// The message of the UserError `fn` throws; empty when it throws none.
template <typename Fn>
std::string user_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace tessera::testing
