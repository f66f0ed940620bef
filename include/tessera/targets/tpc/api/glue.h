// Host glue code (spec 000 §2.7.1): a kernel library exports GetKernelNames and HabanaKernel,
// written against Habana's gcapi (tessera/targets/tpc/compat/gc_interface.h, the one definition
// of the gcapi types; consumers can `#include "gc_interface.h"`). HabanaKernel checks the tensors
// it is given and fills a HabanaKernelInstantiation_t (index space, access patterns, pad values,
// scalar parameters, flags, auxiliary tensors, and the kernel binary in kernelElf). Tessera's
// kernel "binary" is a KernelImage naming an in-process C++ function made by tpc_kernel<fn>().
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/targets/tpc/api/local_memory.h"
#include "tessera/targets/tpc/api/types.h"
#include "tessera/targets/tpc/compat/gc_interface.h"

namespace tessera::tpc {

// What a kernel entry receives: its tensors are table slots 0..tensor_count-1 (inputs, then
// outputs); its scalar parameters are dwords.
struct KernelArgs {
  int tensor_count = 0;
  const std::uint32_t* scalars = nullptr;
  unsigned scalar_dwords = 0;
};

// One program-scope `__local__` object of a kernel file: its host bytes, the bytes it takes in
// the modeled local memory (a 2048-bit vector is 256 bytes there, whatever the host object holds
// beside its lanes), the object itself and how its host bytes hold the modeled ones, so that the
// core's memory holds it at its address (detail::LocalLayout).
// Records sit back to back in their section: a size of a power of two, with that alignment, so
// the compiler leaves no gap between them that the runtime would misread.
struct alignas(64) FileLocalSize {
  std::uint64_t host_bytes;
  std::uint64_t modeled_bytes;
  std::uint64_t host_alignment;  // the gap it may leave before it in the host section, plus one
  void* object;
  std::uint64_t element_count;
  std::uint64_t element_bytes;
  std::uint64_t host_stride;
  std::uint32_t order;   // declaration order in the file (the section's order is the linker's)
  std::uint16_t shared;  // 0: its bytes are reserved but not addressable (predicates)
  std::uint16_t vector;  // 1: vector local memory, 0: scalar local memory (spec 000 §2.5.3)
};
static_assert(sizeof(FileLocalSize) == 64);

// The record of program-scope object `object` of type T (tpc-c.h's TESSERA_TPC_MODELED_LOCAL).
template <typename T>
constexpr FileLocalSize file_local_record(void* object, std::uint32_t order) {
  const detail::LocalLayout l = detail::local_layout<T>();
  return {sizeof(T),
          detail::modeled_size<T>(),
          alignof(T),
          object,
          l.count,
          l.element_bytes,
          l.host_stride,
          order,
          static_cast<std::uint16_t>(l.shared ? 1 : 0),
          static_cast<std::uint16_t>(detail::in_vector_memory_v<T> ? 1 : 0)};
}

// A kernel as the runtime calls it, with the shape of its C++ signature.
struct KernelFunction {
  void (*invoke)(const KernelArgs&) = nullptr;
  unsigned tensor_params = 0;  // leading `tensor` parameters
  unsigned scalar_dwords = 0;  // dwords of the trailing scalar parameters
  // The kernel file's program-scope `__local__` objects (spec 000 §2.5.3), when it was built by
  // tessera_add_tpc_kernels: one section of host memory that the runtime gives each core its own
  // copy of and counts against the core's local memory. Empty for kernels without any.
  char* file_locals_begin = nullptr;
  char* file_locals_end = nullptr;
  // What those objects take in the core's local memory, recorded beside them by
  // tessera_add_tpc_kernels for each declaration it recognises (FileLocalSize records).
  const struct FileLocalSize* file_local_sizes_begin = nullptr;
  const struct FileLocalSize* file_local_sizes_end = nullptr;
  explicit operator bool() const { return invoke != nullptr; }
};

namespace detail {
template <typename F>
struct signature;
template <typename... A>
struct signature<void (*)(A...)> {
  using args = std::tuple<A...>;
};
template <typename T>
inline constexpr bool is_tensor_v = std::is_same_v<std::remove_cvref_t<T>, tensor>;

template <typename T>
T scalar_from_dword(std::uint32_t d) {
  using U = std::remove_cvref_t<T>;
  static_assert(sizeof(U) <= 4 && std::is_trivially_copyable_v<U>,
                "kernel scalar parameters are at most one dword each (float, int, unsigned, ...)");
  if constexpr (std::is_same_v<U, bool>) {
    return d != 0;
  } else if constexpr (std::is_integral_v<U>) {
    return static_cast<U>(d);
  } else if constexpr (sizeof(U) == 4) {
    U v;
    std::memcpy(&v, &d, 4);
    return v;
  } else {
    U v;  // 2-byte types (bf16) sit in the low half of the dword
    const auto low = static_cast<std::uint16_t>(d);
    std::memcpy(&v, &low, sizeof v);
    return v;
  }
}

template <typename P, std::size_t I, std::size_t TensorCount>
std::remove_cvref_t<P> kernel_arg(const KernelArgs& a) {
  if constexpr (is_tensor_v<P>)
    return tensor(static_cast<int>(I));
  else
    return scalar_from_dword<P>(a.scalars[I - TensorCount]);
}

template <auto Fn, typename Tuple, std::size_t... I>
void invoke_kernel(const KernelArgs& a, std::index_sequence<I...>) {
  constexpr std::size_t n_tensors =
      (0 + ... + (is_tensor_v<std::tuple_element_t<I, Tuple>> ? 1 : 0));
  (void)a;
  Fn(kernel_arg<std::tuple_element_t<I, Tuple>, I, n_tensors>(a)...);
}

template <typename Tuple, std::size_t... I>
constexpr bool tensors_lead(std::index_sequence<I...>) {
  bool seen_scalar = false;
  bool ok = true;
  ((is_tensor_v<std::tuple_element_t<I, Tuple>> ? (ok = ok && !seen_scalar) : (seen_scalar = true)),
   ...);
  return ok;
}
}  // namespace detail

// Adapts `void k(tensor in, tensor out)` or `void k(tensor in, tensor out, float alpha)` into a
// KernelFunction. Tensors must come first; each scalar parameter takes one dword.
template <auto Fn>
constexpr KernelFunction tpc_kernel() {
  using Args = typename detail::signature<decltype(Fn)>::args;
  constexpr std::size_t n = std::tuple_size_v<Args>;
  static_assert(detail::tensors_lead<Args>(std::make_index_sequence<n>{}),
                "kernel parameters: all tensors first, then scalars");
  constexpr unsigned tensors = []<std::size_t... I>(std::index_sequence<I...>) {
    return (0u + ... + (detail::is_tensor_v<std::tuple_element_t<I, Args>> ? 1u : 0u));
  }
  (std::make_index_sequence<n>{});
  KernelFunction f;
  f.invoke = [](const KernelArgs& a) {
    detail::invoke_kernel<Fn, Args>(a, std::make_index_sequence<n>{});
  };
  f.tensor_params = tensors;
  f.scalar_dwords = static_cast<unsigned>(n) - tensors;
  return f;
}

// What glue copies into kernelElf: the entry point of a kernel compiled into this process.
// tessera_add_tpc_kernels gives each TPC-C file one, between the _binary___<stem>_o_start/_end
// symbols that Habana-style glue copies (spec 000 §2.7.1, "Return program binary").
struct alignas(16) KernelImage {
  char magic[16];  // kKernelImageMagic
  KernelFunction function;
  char name[64];  // the kernel function's name (the TPC-C file's stem), as gcapi's MAX_NODE_NAME
};
static_assert(sizeof(KernelImage) == 128,
              "the image size is spelled out in TESSERA_TPC_KERNEL_BINARY");
inline constexpr char kKernelImageMagic[16] = "tessera-tpc-elf";
// `kernel` with the program-scope `__local__` section [begin, end) of its file and the size
// records [sizes_begin, sizes_end) of the objects in it.
constexpr KernelFunction with_file_locals(KernelFunction kernel, char* begin, char* end,
                                          const FileLocalSize* sizes_begin = nullptr,
                                          const FileLocalSize* sizes_end = nullptr) {
  kernel.file_locals_begin = begin;
  kernel.file_locals_end = begin == nullptr ? nullptr : end;
  kernel.file_local_sizes_begin = sizes_begin;
  kernel.file_local_sizes_end = sizes_begin == nullptr ? nullptr : sizes_end;
  return kernel;
}
// Where the file's `__local__` objects lie in a core's local memories: each recorded object at
// its address, in declaration order from address 0, scalars in scalar local memory (4-byte
// chunks) and vectors in vector local memory (256-byte aligned), as tpc-clang places them in
// their address spaces; then, in vector local memory, the host bytes of any object the build
// step did not record (section bytes beyond the recorded objects and the gaps they may leave).
struct FileLocalPlacement {
  const FileLocalSize* record;
  std::uint64_t address;
};
struct FileLocalsLayout {
  std::uint64_t slm_bytes = 0;
  std::uint64_t vlm_bytes = 0;
  std::vector<FileLocalPlacement> objects;
};
FileLocalsLayout place_file_locals(const KernelFunction& kernel);
// The image in a kernelElf buffer of `size` bytes, or null when it holds none.
const KernelImage* kernel_image(const void* elf, unsigned size);

}  // namespace tessera::tpc

// Defines the image of kernel `fn`, the entry `entry` of namespace `ns`, and the
// _binary___<fn>_o_start/_end symbols around it, as objcopy does for a TPC ELF. The entry keeps a
// name of its own (the file's `main`), as a file may also define a function named after its
// stem (Habana's sin_f32.c has `float64 sin_f32(float64)`). Used by tessera_add_tpc_kernels, which puts
// the file's program-scope `__local__` objects in the section tessera_tpc_local_<fn> (the linker's
// __start_/__stop_ symbols bound it; weak and hidden, so a file without any gets an empty range).
#define TESSERA_TPC_KERNEL_BINARY(ns, entry, fn)                                              \
  extern "C" {                                                                                \
  extern char __start_tessera_tpc_local_##fn[] __attribute__((weak, visibility("hidden")));   \
  extern char __stop_tessera_tpc_local_##fn[] __attribute__((weak, visibility("hidden")));    \
  extern const ::tessera::tpc::FileLocalSize __start_tessera_tpc_localsize_##fn[]             \
      __attribute__((weak, visibility("hidden")));                                            \
  extern const ::tessera::tpc::FileLocalSize __stop_tessera_tpc_localsize_##fn[]              \
      __attribute__((weak, visibility("hidden")));                                            \
  extern const ::tessera::tpc::KernelImage tessera_tpc_image_##fn;                            \
  const ::tessera::tpc::KernelImage tessera_tpc_image_##fn = {                                \
      "tessera-tpc-elf",                                                                      \
      ::tessera::tpc::with_file_locals(                                                       \
          ::tessera::tpc::tpc_kernel<&ns::entry>(), __start_tessera_tpc_local_##fn,           \
          __stop_tessera_tpc_local_##fn, __start_tessera_tpc_localsize_##fn,                  \
          __stop_tessera_tpc_localsize_##fn),                                                 \
      #fn};                                                                                   \
  }                                                                                           \
  __asm__(".globl _binary___" #fn "_o_start\n.set _binary___" #fn                             \
          "_o_start, tessera_tpc_image_" #fn "\n.globl _binary___" #fn                        \
          "_o_end\n.set _binary___" #fn "_o_end, tessera_tpc_image_" #fn " + 128\n")

// Tessera's helpers for glue, beside the vendor's declarations.
namespace gcapi {

inline constexpr unsigned MAX_SCALAR_PARAMS_DWORDS = MAX_TENSORS_PARAMS_NR;

const char* glue_return_name(GlueCodeReturn_t code);
TensorDataType_t data_type_of(tessera::DType type);
tessera::DType dtype_of(TensorDataType_t type);

using GetKernelNamesFn = pfnGetKernelNames;
using HabanaKernelFn = pfnHabanaKernel;

// Packs scalar parameters (each at most 4 bytes) into instance->kernel.scalarParams.
template <typename... S>
void set_scalar_params(DeviceKernel_t& kernel, S... values) {
  static_assert(sizeof...(S) <= MAX_TENSORS_PARAMS_NR);
  unsigned i = 0;
  ((kernel.scalarParams[i] = 0, std::memcpy(&kernel.scalarParams[i++], &values, sizeof(S))), ...);
  kernel.paramsNr = static_cast<unsigned>(sizeof...(S));
}

// Writes the image of `kernel` into instance->kernelElf with the vendor's buffer protocol:
// elfSize becomes the image size; GLUE_INSUFICIENT_ELF_BUFFER when the buffer is smaller.
GlueCodeReturn_t set_kernel(HabanaKernelInstantiation_t* instance,
                            tessera::tpc::KernelFunction kernel, const char* name = "");

// Glue for elementwise kernels over tensors of identical sizes: checks the counts, sizes and
// data types, sets the index space to ceil(size0 / lanes) x size1 x ... and the matching access
// patterns (as the abs example of spec 000 §2.4.4), and the kernel entry.
GlueCodeReturn_t elementwise_glue(const HabanaKernelParams_t* params,
                                  HabanaKernelInstantiation_t* instance, unsigned inputs,
                                  unsigned outputs, TensorDataType_t type, unsigned lanes,
                                  tessera::tpc::KernelFunction kernel);

}  // namespace gcapi

namespace tessera::tpc {
namespace gcapi = ::gcapi;
}  // namespace tessera::tpc
