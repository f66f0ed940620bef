// PopLibs' error: bad arguments to a PopLibs function (a UserError, so both
// `catch (const poputil::poplibs_error&)` and `catch (const tessera::UserError&)` work).
#pragma once

#include <string>

#include <poplar/exceptions.hpp>

namespace poputil {

class poplibs_error : public ::tessera::UserError {
 public:
  explicit poplibs_error(const std::string& message) : ::tessera::UserError(message) {}
  explicit poplibs_error(const char* message) : ::tessera::UserError(message) {}
};

}  // namespace poputil
