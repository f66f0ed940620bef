#include "tessera/compiler/slice.h"

#include <algorithm>

#include "tessera/compiler/reference_exec.h"

namespace tessera::compiler {
namespace {

bool has_input(const Node& n, std::size_t i) {
  return i < n.inputs.size() && n.inputs[i] != kNoValue;
}
const Tensor* constant(const Graph& g, const Node& n, std::size_t i) {
  if (!has_input(n, i)) return nullptr;
  const auto& v = g.value(n.inputs[i]);
  return v.constant ? &*v.constant : nullptr;
}
}  // namespace

std::optional<std::vector<std::int64_t>> ints_operand(const Graph& g, const Node& n,
                                                      const char* attr, std::size_t input) {
  if (has_input(n, input)) {
    const Tensor* t = constant(g, n, input);
    if (!t) return std::nullopt;
    return t->to_ints();
  }
  return n.attr_ints(attr);
}

std::optional<std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>> slice_starts(
    const Graph& g, const Node& n) {
  const Shape& in = g.value(n.inputs[0]).shape;
  const int r = in.rank();
  const auto starts = ints_operand(g, n, "starts", 1);
  const auto axes = ints_operand(g, n, "axes", 3);
  const auto steps = ints_operand(g, n, "steps", 4);
  if (!starts || !axes || !steps || (has_input(n, 2) && !constant(g, n, 2))) return std::nullopt;
  std::vector<std::int64_t> first(static_cast<std::size_t>(r), 0),
      step(static_cast<std::size_t>(r), 1);
  for (std::size_t i = 0; i < starts->size(); ++i) {
    const std::int64_t onnx_axis = axes->empty() ? static_cast<std::int64_t>(i) : (*axes)[i];
    const auto d = static_cast<std::size_t>(tessera_axis(onnx_axis, r, n.describe()));
    const std::int64_t dim = in[static_cast<int>(d)];
    const std::int64_t st = steps->empty() ? 1 : (*steps)[i];
    std::int64_t s0 = (*starts)[i];
    if (s0 < 0) s0 += dim;
    s0 = st > 0 ? std::clamp<std::int64_t>(s0, 0, dim) : std::clamp<std::int64_t>(s0, 0, dim - 1);
    first[d] = s0;
    step[d] = st;
  }
  return std::make_pair(first, step);
}

}  // namespace tessera::compiler
