// Included by supervisor.cpp with quotes: found beside it although addCodelets compiles a copy.
#pragma once

inline int next_count(int c) { return c + 1; }
