// Reduction operators (PopLibs API: popops/Operation.hpp).
#pragma once

#include <ostream>

namespace popops {

enum class Operation { ADD, MUL, MIN, MAX, LOGICAL_AND, LOGICAL_OR, SQUARE_ADD, LOG_ADD };

std::ostream& operator<<(std::ostream& os, const Operation& op);

}  // namespace popops
