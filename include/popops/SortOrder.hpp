// The order a sorting operation leaves its results in (PopLibs API: popops/SortOrder.hpp).
#pragma once

#include <iosfwd>

namespace popops {

enum class SortOrder { NONE, ASCENDING, DESCENDING };

std::ostream& operator<<(std::ostream& os, const SortOrder& o);

}  // namespace popops
