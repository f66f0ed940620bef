// What a deserialized executable must hold before the Engine compiles it. An executable file
// is input from strangers (fuzz/README.md): every index it gives is checked against what it
// names and every size against what it describes, as the Graph and Program API guarantee for
// graphs built in the process, so a damaged file ends in a parse_error naming the item.
#pragma once

#include <string>

#include <fmt/format.h>
#include <poplar/exceptions.hpp>

#include "state.h"

namespace poplar::detail {

// "the executable is damaged: vertex 12 names compute set 40 of 3; ..."
template <typename... A>
[[noreturn]] void executable_damaged(fmt::format_string<A...> what, A&&... args) {
  throw parse_error(fmt::format(
      "deserialize: the executable is damaged: {}; write it again with Executable::serialize",
      fmt::format(what, std::forward<A>(args)...)));
}

// The target figures, variables and their mapping, vertices and their fields, compute sets,
// streams, host handles and remote buffers of `g`, and the host memory they will take.
// `nodes`: program nodes in the file (each costs the Engine per-tile statistics).
void check_executable_graph(const GraphState& g, std::size_t nodes);

// One program node: its kind's children, tensors, stream, remote buffer, compute set, function
// and collective against `g`. `functions`: the graph's function count.
void check_executable_node(const GraphState& g, const program::Node& n, std::size_t id,
                           std::size_t functions);

}  // namespace poplar::detail
