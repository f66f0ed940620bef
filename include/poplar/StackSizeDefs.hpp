// Stack-size declarations for codelets (spec 001 §2.8.1, §7.3.1). On the host the compiler
// sizes stacks itself, so the C++ forms only record the declaration; the assembly forms have no
// meaning for host-compiled codelets and expand to nothing.
#pragma once

#define DEF_STACK_USAGE(size, function) \
  static_assert((size) >= 0, "DEF_STACK_USAGE: the stack size of " #function " must be >= 0")
#define DEF_STACK_SIZE_OWN(size, function) \
  static_assert((size) >= 0, "DEF_STACK_SIZE_OWN: the stack size of " #function " must be >= 0")
#define DEF_FUNC_CALL_PTRS(...) static_assert(true, "DEF_FUNC_CALL_PTRS")
