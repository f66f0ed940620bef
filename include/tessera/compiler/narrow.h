// 64-bit values on device backends that have no 64-bit types (Backend::has_64bit_types false:
// every device target). One rule for all of them: a value narrows to its 32-bit type
// (narrowed_dtype) only where every value it can hold provably fits; the nodes reading or
// writing any other 64-bit value fall back to reference with the reason analyse_64bit gives.
// Provably fits means: a constant whose every element fits (f64: is exact in f32); a value whose
// range, propagated from constants, dtypes and shapes (Shape, Size, ArgMax, TopK's indices,
// NonZero... are bounded by a dimension) through the ops that keep or combine ranges, lies within
// the 32-bit type; or a graph input or constant read only as operands that ops check against a
// dimension < 2^31 (Gather's indices) or clamp to one (Slice's starts and ends): saturating such
// an operand to 32 bits keeps every valid value and keeps every invalid one invalid.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/compiler/ir.h"

namespace tessera::compiler {

struct Narrowing {
  // Per ValueId: true where a 64-bit value may run in its 32-bit type.
  std::vector<bool> fits;
  // Per ValueId: for a 64-bit value that may not, why ("int64 value 'x' is not provably within
  // int32: it is computed by Add 'a' from values whose sum may reach 2^31"); empty otherwise.
  std::vector<std::string> reason;
};

// Decides, for every 64-bit value of `graph`, whether it provably fits its 32-bit type.
Narrowing analyse_64bit(const Graph& graph);

// Narrows every 64-bit value that provably fits: its dtype becomes the 32-bit type, its
// constant data is converted, and Value::narrowed_from keeps the ONNX type, so reference
// fallbacks compute in it and graph outputs and inputs convert at the boundary. Returns how
// many values narrowed. A no-op on a graph without 64-bit values.
int narrow_64bit_values(Graph& graph);

// The reason a node must fall back because of a 64-bit value it reads or writes (nullopt when
// it has none left after narrow_64bit_values).
std::optional<std::string> wide_value_reason(const Graph& graph, const Node& node,
                                             const Narrowing& narrowing);

}  // namespace tessera::compiler
