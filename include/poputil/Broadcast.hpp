// Broadcasting tensors to a common shape (PopLibs API: poputil/Broadcast.hpp), numpy-style: shapes
// are aligned at their last dimension and dimensions of size 1 repeat. Views only; nothing copies.
#pragma once

#include <cstddef>
#include <vector>

#include <poplar/Tensor.hpp>

namespace poputil {

void broadcastToMatch(poplar::Tensor& a, const std::vector<std::size_t>& shape);
void broadcastToMatch(poplar::Tensor& a, poplar::Tensor& b);
void broadcastToMatch(poplar::Tensor& a, poplar::Tensor& b, poplar::Tensor& c);

}  // namespace poputil
