// Host glue code (spec 000 §2.7.1), shaped like Habana's gcapi so TPC users recognise it: a
// kernel library exports GetKernelNames and HabanaKernel; HabanaKernel checks the tensors it is
// given and fills a HabanaKernelInstantiation_t (index space, access patterns, pad values,
// scalar parameters, flags, and the kernel entry: a C++ function made by tpc_kernel<fn>()).
// Array sizes here are ABI sizes; the limits that apply come from the machine preset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tessera/targets/tpc/api/types.h"

namespace tessera::tpc {

// What a kernel entry receives: its tensors are table slots 0..tensor_count-1 (inputs, then
// outputs); its scalar parameters are dwords.
struct KernelArgs {
  int tensor_count = 0;
  const std::uint32_t* scalars = nullptr;
  unsigned scalar_dwords = 0;
};

// A kernel as the runtime calls it, with the shape of its C++ signature.
struct KernelFunction {
  void (*invoke)(const KernelArgs&) = nullptr;
  unsigned tensor_params = 0;  // leading `tensor` parameters
  unsigned scalar_dwords = 0;  // dwords of the trailing scalar parameters
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

namespace gcapi {

inline constexpr int MAX_TENSOR_NR = 16;
inline constexpr int MAX_TENSOR_DIM = 5;
inline constexpr int MAX_NODE_NAME = 128;            // buffer size; the name limit is the preset's
inline constexpr int MAX_SCALAR_PARAMS_DWORDS = 64;  // buffer size; the limit is the preset's

enum GlueCodeReturn_t : int {
  GLUE_SUCCESS = 0,
  GLUE_NODE_NOT_FOUND = 1,
  GLUE_UNSUPPORTED_LAYER_CONFIGURATION = 2,
  GLUE_INCOMPATIBLE_INPUT_COUNT = 3,
  GLUE_INCOMPATIBLE_INPUT_SIZE = 4,
  GLUE_INCOMPATIBLE_OUTPUT_COUNT = 5,
  GLUE_INCOMPATIBLE_OUTPUT_SIZE = 6,
  GLUE_INCOMPATIBLE_DATA_TYPE = 7,
  GLUE_UNSUPPORTED_BROADCAST_MODE = 8,
  GLUE_INSUFICIENT_ELF_BUFFER = 9,
  GLUE_MISSING_PRIVATE_STRUCTURE = 10,
  GLUE_INCORRECT_PRIVATE_STRUCT_SIZE = 11,
  GLUE_UNSUPPORTED_INDEX_SPACE = 12,
  GLUE_NAME_BUFFER_TOO_SMALL = 13,
  GLUE_FAILED = 14,
};
const char* glue_return_name(GlueCodeReturn_t code);

enum DeviceId_t : int { DEVICE_ID_GOYA = 0, DEVICE_ID_GAUDI = 1 };

enum TensorDataType_t : int {
  DATA_F32 = 0,
  DATA_BF16,
  DATA_I32,
  DATA_U32,
  DATA_I16,
  DATA_U16,
  DATA_I8,
  DATA_U8,
  DATA_F16,
};
TensorDataType_t data_type_of(DType type);
DType dtype_of(TensorDataType_t type);

struct TensorGeometry_t {
  unsigned dims = 0;
  unsigned sizes[MAX_TENSOR_DIM] = {1, 1, 1, 1, 1};  // dimension 0 first
};

struct QuantizationParam_t {
  float scale = 1.0f;
  int zeroPoint = 0;
};

struct Tensor_t {
  TensorGeometry_t geometry;
  TensorDataType_t dataType = DATA_F32;
  QuantizationParam_t quantizationParam;
};

// Index space mapping of one tensor dimension (spec 000 §2.4.4): index-space member x of
// dimension `dim` touches elements start_a*x + start_b .. end_a*x + end_b.
struct DimTransform_t {
  unsigned dim = 0;
  float start_a = 0;
  float end_a = 0;
  float start_b = 0;
  float end_b = 0;
};
struct TensorAccessPattern_t {
  unsigned allRequired = 0;  // 1: every member may touch the whole tensor (no fine mapping)
  DimTransform_t mapping[MAX_TENSOR_DIM];
};

// Pad value of an input tensor, read with the tensor's element type.
union PadValue {
  float f32;
  std::int32_t i32;
  std::uint32_t u32;
  std::int16_t i16;
  std::uint16_t u16;
  std::uint16_t bf16_bits;
  std::int8_t i8;
  std::uint8_t u8;
};

struct DeviceKernel_t {
  KernelFunction kernel;  // tpc_kernel<my_kernel>()
  unsigned paramsNr = 0;  // scalar parameter dwords used
  std::uint32_t scalarParams[MAX_SCALAR_PARAMS_DWORDS] = {};
};

struct ProgramFlags {
  unsigned specialFunctionsUsed = 0;  // vector local memory shrinks (spec 000 §2.5.3)
  unsigned printfUsed = 0;            // #pragma tpc_printf(enable): one tensor slot fewer
};

struct HabanaKernelParams_t {
  int apiVersion = 1;
  char nodeName[MAX_NODE_NAME] = {};  // the requested kernel name, e.g. "relu_bf16"
  const void* NodeParams = nullptr;   // user parameters (the kernel's scalars), or null
  DeviceId_t deviceId = DEVICE_ID_GAUDI;
  Tensor_t inputTensors[MAX_TENSOR_NR];
  unsigned inputTensorNr = 0;
  Tensor_t outputTensors[MAX_TENSOR_NR];
  unsigned outputTensorNr = 0;
  unsigned debugFlags = 0;
  unsigned NodeParamsSize = 0;
  unsigned maxAvailableTpc = 0;  // the preset's core count
};

struct HabanaKernelInstantiation_t {
  TensorGeometry_t indexSpaceGeometry;
  TensorAccessPattern_t inputTensorAccessPattern[MAX_TENSOR_NR];
  PadValue inputPadValues[MAX_TENSOR_NR] = {};
  TensorAccessPattern_t outputTensorAccessPattern[MAX_TENSOR_NR];
  DeviceKernel_t kernel;
  ProgramFlags flags;
};

// The two entry points of a kernel library (exported with C linkage from a shared object).
using GetKernelNamesFn = GlueCodeReturn_t (*)(char** names, unsigned* kernelCount,
                                              DeviceId_t deviceId);
using HabanaKernelFn = GlueCodeReturn_t (*)(const HabanaKernelParams_t* params,
                                            HabanaKernelInstantiation_t* instance);

// ---- helpers for writing glue ----

// Packs scalar parameters (each at most 4 bytes) into instance->kernel.scalarParams.
template <typename... S>
void set_scalar_params(DeviceKernel_t& kernel, S... values) {
  static_assert(sizeof...(S) <= MAX_SCALAR_PARAMS_DWORDS);
  unsigned i = 0;
  ((kernel.scalarParams[i] = 0, std::memcpy(&kernel.scalarParams[i++], &values, sizeof(S))), ...);
  kernel.paramsNr = static_cast<unsigned>(sizeof...(S));
}

// Glue for elementwise kernels over tensors of identical sizes: checks the counts, sizes and
// data types, sets the index space to ceil(size0 / lanes) x size1 x ... and the matching access
// patterns (as the abs example of spec 000 §2.4.4), and the kernel entry.
GlueCodeReturn_t elementwise_glue(const HabanaKernelParams_t* params,
                                  HabanaKernelInstantiation_t* instance, unsigned inputs,
                                  unsigned outputs, TensorDataType_t type, unsigned lanes,
                                  KernelFunction kernel);

}  // namespace gcapi
}  // namespace tessera::tpc
