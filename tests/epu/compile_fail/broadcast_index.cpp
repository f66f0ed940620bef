// Must not compile: index 2 of a 32-bit broadcast (a 64-bit POP holds two), spec 004
// "Array-Side Consumption". tests/epu/CMakeLists.txt expects the static_assert's message.
#include <epu.hpp>

qVar_t<std::int32_t> read_third() { return qBroadcast<2, std::int32_t, BroadcastAction::POP>; }
