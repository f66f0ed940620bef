// Resource limits that hold under hostile input: how much host memory Tessera may plan to use
// (TESSERA_HOST_MEMORY_LIMIT, default the machine's memory), checked before anything allocates.
// Loaders and planners compare what a file declares against these and raise UserError.
#pragma once

#include <cstdint>
#include <string_view>

namespace tessera {

// Bytes of host memory Tessera may use: TESSERA_HOST_MEMORY_LIMIT (a byte count, optionally with
// a K, M, G or T suffix, binary) or, when unset, the machine's physical memory. A malformed value
// is a UserError naming the variable.
std::uint64_t host_memory_limit();

// Throws UserError when `bytes` (what `what` needs) exceed host_memory_limit(); the message names
// `what`, both figures and how to raise the limit.
void check_host_memory(std::uint64_t bytes, std::string_view what);

// The product of `rank` dims, or UINT64_MAX when a dim is negative or the product overflows
// int64 (no tensor could ever be that large).
std::uint64_t saturating_element_count(const std::int64_t* dims, int rank);

}  // namespace tessera
