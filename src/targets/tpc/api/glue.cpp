// gcapi helpers: names of return codes, data type mapping, kernel images, the elementwise glue.
#include "tessera/targets/tpc/api/glue.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "tessera/core/error.h"

namespace tessera::tpc {

FileLocalsLayout place_file_locals(const KernelFunction& kernel) {
  FileLocalsLayout l;
  if (kernel.file_locals_begin == nullptr) return l;
  const auto section =
      static_cast<std::uint64_t>(kernel.file_locals_end - kernel.file_locals_begin);
  // In declaration order: the compiler may lay the records out in another.
  std::vector<const FileLocalSize*> records;
  for (const FileLocalSize* r = kernel.file_local_sizes_begin;
       r != nullptr && r != kernel.file_local_sizes_end; ++r)
    records.push_back(r);
  std::sort(records.begin(), records.end(),
            [](const FileLocalSize* a, const FileLocalSize* b) { return a->order < b->order; });
  std::uint64_t host = 0, gaps = 0;
  for (const FileLocalSize* r : records) {
    host += r->host_bytes;
    gaps += r->host_alignment - 1;
    std::uint64_t& top = r->vector ? l.vlm_bytes : l.slm_bytes;
    const std::uint64_t align = r->vector ? detail::kVectorBytes : detail::kScalarChunk;
    top = (top + align - 1) / align * align;
    l.objects.push_back({r, top});
    top += r->modeled_bytes;
  }
  const std::uint64_t rest = section > host ? section - host : 0;  // unrecorded objects and gaps
  l.vlm_bytes += rest > gaps ? rest - gaps : 0;
  return l;
}

const KernelImage* kernel_image(const void* elf, unsigned size) {
  if (elf == nullptr || size < sizeof(KernelImage)) return nullptr;
  const auto* image = static_cast<const KernelImage*>(elf);
  if (std::memcmp(image->magic, kKernelImageMagic, sizeof kKernelImageMagic) != 0) return nullptr;
  return image;
}

}  // namespace tessera::tpc

namespace gcapi {

using tessera::DType;
using tessera::dtype_name;
using tessera::throw_user_error;

const char* glue_return_name(GlueCodeReturn_t code) {
  switch (code) {
    case GLUE_SUCCESS:
      return "GLUE_SUCCESS";
    case GLUE_NODE_NOT_FOUND:
      return "GLUE_NODE_NOT_FOUND";
    case GLUE_INSUFICIENT_ISA_BUFFER:
      return "GLUE_INSUFICIENT_ISA_BUFFER";
    case GLUE_INCOMPATIBLE_INPUT_COUNT:
      return "GLUE_INCOMPATIBLE_INPUT_COUNT";
    case GLUE_INCOMPATIBLE_INPUT_SIZE:
      return "GLUE_INCOMPATIBLE_INPUT_SIZE";
    case GLUE_INCOMPATIBLE_OUTPUT_COUNT:
      return "GLUE_INCOMPATIBLE_OUTPUT_COUNT";
    case GLUE_INCOMPATIBLE_OUTPUT_SIZE:
      return "GLUE_INCOMPATIBLE_OUTPUT_SIZE";
    case GLUE_INCOMPATIBLE_DATA_TYPE:
      return "GLUE_INCOMPATIBLE_DATA_TYPE";
    case GLUE_UNSUPPORTED_LAYER_CONFIGURATION:
      return "GLUE_UNSUPPORTED_LAYER_CONFIGURATION";
    case GLUE_INSUFICIENT_AUX_BUFFER_SIZE:
      return "GLUE_INSUFICIENT_AUX_BUFFER_SIZE";
    case GLUE_UNSUPPORTED_QUANT_PARAMS:
      return "GLUE_UNSUPPORTED_QUANT_PARAMS";
    case GLUE_UNSUPPORTED_BROADCAST_MODE:
      return "GLUE_UNSUPPORTED_BROADCAST_MODE";
    case GLUE_UNSUPPORTED_API_VERSION:
      return "GLUE_UNSUPPORTED_API_VERSION";
    case GLUE_NON_STATIC_INPUT_TENSOR:
      return "GLUE_NON_STATIC_INPUT_TENSOR";
    case GLUE_KERNEL_REQUIRE_REDUCIBLE_TENSOR:
      return "GLUE_KERNEL_REQUIRE_REDUCIBLE_TENSOR";
    case GLUE_KERNEL_REQUIRE_CONTIGUOUS_TENSOR:
      return "GLUE_KERNEL_REQUIRE_CONTIGUOUS_TENSOR";
    case GLUE_KERNEL_INVALID_SCALAR_ARGUMENT:
      return "GLUE_KERNEL_INVALID_SCALAR_ARGUMENT";
    case GLUE_UNSUPPORTED_LOW_FCD_INPUT:
      return "GLUE_UNSUPPORTED_LOW_FCD_INPUT";
    case GLUE_INSUFICIENT_ELF_BUFFER:
      return "GLUE_INSUFICIENT_ELF_BUFFER";
    case GLUE_MISSING_PRIVATE_STRUCTURE:
      return "GLUE_MISSING_PRIVATE_STRUCTURE";
    case GLUE_UNSUPPORTED_5D_TENSORS:
      return "GLUE_UNSUPPORTED_5D_TENSORS";
    case GLUE_CGUID_GRAPH_UNCHANGED:
      return "GLUE_CGUID_GRAPH_UNCHANGED";
    case GLUE_FAILED:
      return "GLUE_FAILED";
  }
  return "unknown glue code";
}

TensorDataType_t data_type_of(DType type) {
  switch (type) {
    case DType::f32:
      return DATA_F32;
    case DType::bf16:
      return DATA_BF16;
    case DType::i32:
      return DATA_I32;
    case DType::u32:
      return DATA_U32;
    case DType::i16:
      return DATA_I16;
    case DType::u16:
      return DATA_U16;
    case DType::i8:
      return DATA_I8;
    case DType::u8:
      return DATA_U8;
    case DType::f16:
      return DATA_F16;
    case DType::boolean:
    case DType::i64:
    case DType::u64:
    case DType::f64:
      break;
  }
  throw_user_error(
      "TPC tensors cannot hold {} elements; use u8 or i8 for booleans and the 32-bit type "
      "for 64-bit data",
      dtype_name(type));
}

DType dtype_of(TensorDataType_t type) {
  switch (type) {
    case DATA_F32:
      return DType::f32;
    case DATA_BF16:
      return DType::bf16;
    case DATA_I32:
      return DType::i32;
    case DATA_U32:
      return DType::u32;
    case DATA_I16:
      return DType::i16;
    case DATA_U16:
      return DType::u16;
    case DATA_I8:
      return DType::i8;
    case DATA_U8:
      return DType::u8;
    case DATA_F16:
      return DType::f16;
    default:
      break;
  }
  throw_user_error("unknown gcapi TensorDataType_t {}", static_cast<int>(type));
}

GlueCodeReturn_t set_kernel(HabanaKernelInstantiation_t* instance,
                            tessera::tpc::KernelFunction kernel, const char* name) {
  const unsigned given = instance->elfSize;
  instance->elfSize = sizeof(tessera::tpc::KernelImage);
  if (instance->kernelElf == nullptr || given < sizeof(tessera::tpc::KernelImage))
    return GLUE_INSUFICIENT_ELF_BUFFER;
  tessera::tpc::KernelImage image{};
  std::memcpy(image.magic, tessera::tpc::kKernelImageMagic, sizeof image.magic);
  image.function = kernel;
  std::snprintf(image.name, sizeof image.name, "%s", name);
  std::memcpy(instance->kernelElf, &image, sizeof image);
  return GLUE_SUCCESS;
}

GlueCodeReturn_t elementwise_glue(const HabanaKernelParams_t* params,
                                  HabanaKernelInstantiation_t* instance, unsigned inputs,
                                  unsigned outputs, TensorDataType_t type, unsigned lanes,
                                  tessera::tpc::KernelFunction kernel) {
  if (params->inputTensorNr != inputs) return GLUE_INCOMPATIBLE_INPUT_COUNT;
  if (params->outputTensorNr != outputs) return GLUE_INCOMPATIBLE_OUTPUT_COUNT;
  if (lanes == 0) return GLUE_UNSUPPORTED_LAYER_CONFIGURATION;
  const Tensor_t& ref = outputs > 0 ? params->outputTensors[0] : params->inputTensors[0];
  auto same_size = [&](const Tensor_t& t) {
    for (unsigned d = 0; d < MAX_TENSOR_DIM; ++d) {
      const unsigned a = d < t.geometry.dims ? t.geometry.sizes[d] : 1;
      const unsigned b = d < ref.geometry.dims ? ref.geometry.sizes[d] : 1;
      if (a != b) return false;
    }
    return true;
  };
  for (unsigned i = 0; i < inputs; ++i) {
    if (params->inputTensors[i].dataType != type) return GLUE_INCOMPATIBLE_DATA_TYPE;
    if (!same_size(params->inputTensors[i])) return GLUE_INCOMPATIBLE_INPUT_SIZE;
  }
  for (unsigned i = 0; i < outputs; ++i) {
    if (params->outputTensors[i].dataType != type) return GLUE_INCOMPATIBLE_DATA_TYPE;
    if (!same_size(params->outputTensors[i])) return GLUE_INCOMPATIBLE_OUTPUT_SIZE;
  }
  const unsigned dims = ref.geometry.dims == 0 ? 1 : ref.geometry.dims;
  instance->indexSpaceGeometry.dims = dims;
  for (unsigned d = 0; d < MAX_TENSOR_DIM; ++d) {
    const unsigned size = d < ref.geometry.dims ? ref.geometry.sizes[d] : 1;
    instance->indexSpaceGeometry.sizes[d] = d == 0 ? (size + lanes - 1) / lanes : size;
  }
  TensorAccessPattern_t pattern{};
  pattern.Value = 0;
  for (unsigned d = 0; d < MAX_TENSOR_DIM; ++d) {
    const float step = d == 0 ? static_cast<float>(lanes) : 1.0f;
    pattern.dim[d] = DimTransform_t{{d}, step, 0.0f, step, step - 1.0f};
  }
  for (unsigned i = 0; i < inputs; ++i) instance->inputTensorAccessPattern[i] = pattern;
  for (unsigned i = 0; i < outputs; ++i) instance->outputTensorAccessPattern[i] = pattern;
  return set_kernel(instance, kernel);
}

}  // namespace gcapi
