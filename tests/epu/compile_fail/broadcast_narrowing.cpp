// A 32-bit broadcast element assigned to a 16-bit register would lose values: a compile-time
// error with its message, not a silent truncation.
#include <epu.hpp>

void narrow() {
  qVar_t<std::int16_t> x = qBroadcast<0, std::int32_t, BroadcastAction::POP>;
  (void)x;
}
