// The IPU's 16-bit IEEE float (spec 001 §2.3.2). Tessera implements `half` as the compiler's
// _Float16 on the host, i.e. always as an IPU Model with accurateHalf = true: 2 bytes, IEEE
// rounding.
#pragma once

using half = _Float16;
