// Host glue for the kernels of kernels/, written against Habana's gcapi only (gc_interface.h),
// in the style of Habana's custom-kernel examples: validate the tensors (writing the expected
// values back on the error paths), define the index space and its mapping, pass the scalar
// parameters, and copy the kernel binary between _binary___<kernel>_o_start and _end into
// kernelElf. Nothing here is Tessera-specific: tessera_add_tpc_kernels provides the symbols.
#include <cmath>
#include <cstring>

#include "gc_interface.h"

#define KERNEL_BINARY(name)                        \
  extern unsigned char _binary___##name##_o_start; \
  extern unsigned char _binary___##name##_o_end;
KERNEL_BINARY(leakyrelu_f32_gaudi)
KERNEL_BINARY(relu6_fwd_f32)
KERNEL_BINARY(add_f32)
KERNEL_BINARY(cast_bf16_to_f32)
KERNEL_BINARY(softmax_fcd_f32)
KERNEL_BINARY(searchsorted_fwd_f32)
KERNEL_BINARY(kl_div_fwd_f32)
KERNEL_BINARY(printf_test)
KERNEL_BINARY(matrix_mul_fwd_f32)
KERNEL_BINARY(gather_fwd_dim1_i32)
KERNEL_BINARY(avg_pool_2d_fwd_f32)
KERNEL_BINARY(batch_norm_fwd_f32)
KERNEL_BINARY(filter_fwd_2d_f32)
KERNEL_BINARY(bitonic_sort_f32)
KERNEL_BINARY(embedding_bag_sum_f32)

namespace {

struct LeakyReluParam {
  float alpha;
};

// Stage V of every glue: the program binary into the caller's buffer.
gcapi::GlueCodeReturn_t copy_binary(gcapi::HabanaKernelInstantiation_t* out, unsigned char* start,
                                    unsigned char* end) {
  const unsigned size = static_cast<unsigned>(end - start);
  const unsigned given = out->elfSize;
  out->elfSize = size;
  if (given < size) return gcapi::GLUE_INSUFICIENT_ELF_BUFFER;
  std::memcpy(out->kernelElf, start, size);
  return gcapi::GLUE_SUCCESS;
}

// f(i) = step*i .. step*i + step - 1 on `dims` dimensions, for `count` tensors.
void map_linear(gcapi::TensorAccessPattern_t* patterns, unsigned count, unsigned dims,
                const float* steps) {
  for (unsigned t = 0; t < count; ++t)
    for (unsigned d = 0; d < dims; ++d) {
      patterns[t].dim[d].dim = d;
      patterns[t].dim[d].start_a = steps[d];
      patterns[t].dim[d].end_a = steps[d];
      patterns[t].dim[d].start_b = 0;
      patterns[t].dim[d].end_b = steps[d] - 1;
    }
}

gcapi::GlueCodeReturn_t check_counts(gcapi::HabanaKernelParams_t* in, unsigned inputs,
                                     unsigned outputs) {
  if (in->inputTensorNr != inputs) {
    in->inputTensorNr = inputs;
    return gcapi::GLUE_INCOMPATIBLE_INPUT_COUNT;
  }
  if (in->outputTensorNr != outputs) {
    in->outputTensorNr = outputs;
    return gcapi::GLUE_INCOMPATIBLE_OUTPUT_COUNT;
  }
  return gcapi::GLUE_SUCCESS;
}

// Elementwise NHWC kernels: same sizes in and out, 64-lane vectors over dim 0.
gcapi::GlueCodeReturn_t elementwise(gcapi::HabanaKernelParams_t* in,
                                    gcapi::HabanaKernelInstantiation_t* out, unsigned inputs,
                                    gcapi::TensorDataType_t type, unsigned lanes) {
  gcapi::GlueCodeReturn_t rc = check_counts(in, inputs, 1);
  if (rc != gcapi::GLUE_SUCCESS) return rc;
  for (unsigned i = 0; i < inputs; ++i)
    if (in->inputTensors[i].dataType != type) {
      in->inputTensors[i].dataType = type;
      return gcapi::GLUE_INCOMPATIBLE_DATA_TYPE;
    }
  if (in->outputTensors[0].dataType != type) {
    in->outputTensors[0].dataType = type;
    return gcapi::GLUE_INCOMPATIBLE_DATA_TYPE;
  }
  const gcapi::TensorGeometry_t& g = in->outputTensors[0].geometry;
  for (unsigned i = 0; i < inputs; ++i)
    if (std::memcmp(in->inputTensors[i].geometry.sizes, g.sizes, g.dims * sizeof(unsigned)) != 0)
      return gcapi::GLUE_INCOMPATIBLE_INPUT_SIZE;
  out->indexSpaceGeometry.dims = g.dims;
  for (unsigned d = 0; d < g.dims; ++d)
    out->indexSpaceGeometry.sizes[d] = d == 0 ? (g.sizes[0] + lanes - 1) / lanes : g.sizes[d];
  const float steps[gcapi::MAX_TENSOR_DIM] = {static_cast<float>(lanes), 1, 1, 1, 1};
  map_linear(out->inputTensorAccessPattern, inputs, g.dims, steps);
  map_linear(out->outputTensorAccessPattern, 1, g.dims, steps);
  return gcapi::GLUE_SUCCESS;
}

gcapi::GlueCodeReturn_t leakyrelu(gcapi::HabanaKernelParams_t* in,
                                  gcapi::HabanaKernelInstantiation_t* out) {
  gcapi::GlueCodeReturn_t rc = elementwise(in, out, 1, gcapi::DATA_F32, 64);
  if (rc != gcapi::GLUE_SUCCESS) return rc;
  if (in->NodeParams == nullptr || in->NodeParamsSize != sizeof(LeakyReluParam))
    return gcapi::GLUE_MISSING_PRIVATE_STRUCTURE;
  const LeakyReluParam* param = static_cast<const LeakyReluParam*>(in->NodeParams);
  out->kernel.paramsNr = sizeof(*param) / sizeof(float);
  std::memcpy(&out->kernel.scalarParams[0], param, sizeof(*param));
  return copy_binary(out, &_binary___leakyrelu_f32_gaudi_o_start,
                     &_binary___leakyrelu_f32_gaudi_o_end);
}

gcapi::GlueCodeReturn_t relu6(gcapi::HabanaKernelParams_t* in,
                              gcapi::HabanaKernelInstantiation_t* out) {
  gcapi::GlueCodeReturn_t rc = elementwise(in, out, 1, gcapi::DATA_F32, 64);
  if (rc != gcapi::GLUE_SUCCESS) return rc;
  return copy_binary(out, &_binary___relu6_fwd_f32_o_start, &_binary___relu6_fwd_f32_o_end);
}

gcapi::GlueCodeReturn_t add(gcapi::HabanaKernelParams_t* in,
                            gcapi::HabanaKernelInstantiation_t* out) {
  gcapi::GlueCodeReturn_t rc = elementwise(in, out, 2, gcapi::DATA_F32, 64);
  if (rc != gcapi::GLUE_SUCCESS) return rc;
  if (in->outputTensors[0].geometry.dims != 1) return gcapi::GLUE_INCOMPATIBLE_OUTPUT_SIZE;
  return copy_binary(out, &_binary___add_f32_o_start, &_binary___add_f32_o_end);
}

gcapi::GlueCodeReturn_t cast(gcapi::HabanaKernelParams_t* in,
                             gcapi::HabanaKernelInstantiation_t* out) {
  gcapi::GlueCodeReturn_t rc = check_counts(in, 1, 1);
  if (rc != gcapi::GLUE_SUCCESS) return rc;
  if (in->inputTensors[0].dataType != gcapi::DATA_BF16 ||
      in->outputTensors[0].dataType != gcapi::DATA_F32) {
    in->inputTensors[0].dataType = gcapi::DATA_BF16;
    in->outputTensors[0].dataType = gcapi::DATA_F32;
    return gcapi::GLUE_INCOMPATIBLE_DATA_TYPE;
  }
  const gcapi::TensorGeometry_t& g = in->inputTensors[0].geometry;
  if (g.dims > 2) return gcapi::GLUE_UNSUPPORTED_LAYER_CONFIGURATION;
  out->indexSpaceGeometry.dims = 2;
  out->indexSpaceGeometry.sizes[0] = (g.sizes[0] + 127) / 128;
  out->indexSpaceGeometry.sizes[1] = g.dims > 1 ? g.sizes[1] : 1;
  const float steps[gcapi::MAX_TENSOR_DIM] = {128, 1, 1, 1, 1};
  map_linear(out->inputTensorAccessPattern, 1, 2, steps);
  map_linear(out->outputTensorAccessPattern, 1, 2, steps);
  return copy_binary(out, &_binary___cast_bf16_to_f32_o_start, &_binary___cast_bf16_to_f32_o_end);
}

gcapi::GlueCodeReturn_t softmax(gcapi::HabanaKernelParams_t* in,
                                gcapi::HabanaKernelInstantiation_t* out) {
  gcapi::GlueCodeReturn_t rc = check_counts(in, 1, 1);
  if (rc != gcapi::GLUE_SUCCESS) return rc;
  const gcapi::TensorGeometry_t& g = in->inputTensors[0].geometry;
  if (g.dims != 2) return gcapi::GLUE_INCOMPATIBLE_INPUT_SIZE;
  out->indexSpaceGeometry.dims = 2;
  out->indexSpaceGeometry.sizes[0] = 1;  // a whole row per member
  out->indexSpaceGeometry.sizes[1] = g.sizes[1];
  out->inputTensorAccessPattern[0].allRequired = 1;
  out->outputTensorAccessPattern[0].allRequired = 1;
  out->inputPadValues[0].fValue = -INFINITY;
  return copy_binary(out, &_binary___softmax_fcd_f32_o_start, &_binary___softmax_fcd_f32_o_end);
}

gcapi::GlueCodeReturn_t searchsorted(gcapi::HabanaKernelParams_t* in,
                                     gcapi::HabanaKernelInstantiation_t* out) {
  gcapi::GlueCodeReturn_t rc = check_counts(in, 2, 1);
  if (rc != gcapi::GLUE_SUCCESS) return rc;
  if (in->outputTensors[0].dataType != gcapi::DATA_I32) {
    in->outputTensors[0].dataType = gcapi::DATA_I32;
    return gcapi::GLUE_INCOMPATIBLE_DATA_TYPE;
  }
  out->indexSpaceGeometry.dims = 1;
  out->indexSpaceGeometry.sizes[0] = (in->inputTensors[1].geometry.sizes[0] + 63) / 64;
  out->inputTensorAccessPattern[0].allRequired = 1;
  const float steps[gcapi::MAX_TENSOR_DIM] = {64, 1, 1, 1, 1};
  map_linear(&out->inputTensorAccessPattern[1], 1, 1, steps);
  map_linear(out->outputTensorAccessPattern, 1, 1, steps);
  return copy_binary(out, &_binary___searchsorted_fwd_f32_o_start,
                     &_binary___searchsorted_fwd_f32_o_end);
}

gcapi::GlueCodeReturn_t kl_div(gcapi::HabanaKernelParams_t* in,
                               gcapi::HabanaKernelInstantiation_t* out) {
  gcapi::GlueCodeReturn_t rc = elementwise(in, out, 2, gcapi::DATA_F32, 64);
  if (rc != gcapi::GLUE_SUCCESS) return rc;
  // specialFunctionsUsed is left alone: it follows from what the kernel calls (log).
  return copy_binary(out, &_binary___kl_div_fwd_f32_o_start, &_binary___kl_div_fwd_f32_o_end);
}

gcapi::GlueCodeReturn_t printf_test(gcapi::HabanaKernelParams_t* in,
                                    gcapi::HabanaKernelInstantiation_t* out) {
  gcapi::GlueCodeReturn_t rc = elementwise(in, out, 1, gcapi::DATA_F32, 64);
  if (rc != gcapi::GLUE_SUCCESS) return rc;
  return copy_binary(out, &_binary___printf_test_o_start, &_binary___printf_test_o_end);
}

gcapi::GlueCodeReturn_t matrix_mul(gcapi::HabanaKernelParams_t* in,
                                   gcapi::HabanaKernelInstantiation_t* out) {
  gcapi::GlueCodeReturn_t rc = check_counts(in, 2, 1);
  if (rc != gcapi::GLUE_SUCCESS) return rc;
  const gcapi::TensorGeometry_t& a = in->inputTensors[0].geometry;
  const gcapi::TensorGeometry_t& b = in->inputTensors[1].geometry;
  const gcapi::TensorGeometry_t& c = in->outputTensors[0].geometry;
  if (a.dims != 2 || b.dims != 2 || c.dims != 2 || a.sizes[0] != b.sizes[1])
    return gcapi::GLUE_INCOMPATIBLE_INPUT_SIZE;
  if (c.sizes[0] != b.sizes[0] || c.sizes[1] != a.sizes[1])
    return gcapi::GLUE_INCOMPATIBLE_OUTPUT_SIZE;
  out->indexSpaceGeometry.dims = 2;
  out->indexSpaceGeometry.sizes[0] = (c.sizes[0] + 63) / 64;
  out->indexSpaceGeometry.sizes[1] = c.sizes[1];
  out->inputTensorAccessPattern[0].allRequired = 1;
  out->inputTensorAccessPattern[1].allRequired = 1;
  const float steps[gcapi::MAX_TENSOR_DIM] = {64, 1, 1, 1, 1};
  map_linear(out->outputTensorAccessPattern, 1, 2, steps);
  return copy_binary(out, &_binary___matrix_mul_fwd_f32_o_start,
                     &_binary___matrix_mul_fwd_f32_o_end);
}

gcapi::GlueCodeReturn_t gather(gcapi::HabanaKernelParams_t* in,
                               gcapi::HabanaKernelInstantiation_t* out) {
  gcapi::GlueCodeReturn_t rc = check_counts(in, 2, 1);
  if (rc != gcapi::GLUE_SUCCESS) return rc;
  const gcapi::TensorGeometry_t& o = in->outputTensors[0].geometry;
  out->indexSpaceGeometry.dims = 2;
  out->indexSpaceGeometry.sizes[0] = (o.sizes[0] + 63) / 64;
  out->indexSpaceGeometry.sizes[1] = o.dims > 1 ? o.sizes[1] : 1;
  out->inputTensorAccessPattern[0].allRequired = 1;
  out->inputTensorAccessPattern[1].allRequired = 1;
  const float steps[gcapi::MAX_TENSOR_DIM] = {64, 1, 1, 1, 1};
  map_linear(out->outputTensorAccessPattern, 1, 2, steps);
  return copy_binary(out, &_binary___gather_fwd_dim1_i32_o_start,
                     &_binary___gather_fwd_dim1_i32_o_end);
}

// Table {width + 2, rows} f32 (scale and bias after each row's values), indices and bag ids
// {count} i32, output {width, bags} f32: one member per 64 columns and index. Members add into
// shared bags, so the output is read-modify-written: the caller starts it at zero.
gcapi::GlueCodeReturn_t embedding_bag(gcapi::HabanaKernelParams_t* in,
                                      gcapi::HabanaKernelInstantiation_t* out) {
  gcapi::GlueCodeReturn_t rc = check_counts(in, 3, 1);
  if (rc != gcapi::GLUE_SUCCESS) return rc;
  const gcapi::TensorGeometry_t& t = in->inputTensors[0].geometry;
  gcapi::TensorGeometry_t& o = in->outputTensors[0].geometry;
  if (o.sizes[0] + 2 != t.sizes[0]) {
    o.sizes[0] = t.sizes[0] - 2;
    return gcapi::GLUE_INCOMPATIBLE_OUTPUT_SIZE;
  }
  if (in->inputTensors[1].geometry.sizes[0] != in->inputTensors[2].geometry.sizes[0])
    return gcapi::GLUE_INCOMPATIBLE_INPUT_SIZE;
  out->indexSpaceGeometry.dims = 2;
  out->indexSpaceGeometry.sizes[0] = (o.sizes[0] + 63) / 64;
  out->indexSpaceGeometry.sizes[1] = in->inputTensors[1].geometry.sizes[0];
  for (unsigned i = 0; i < 3; ++i) out->inputTensorAccessPattern[i].allRequired = 1;
  out->outputTensorAccessPattern[0].allRequired = 1;
  return copy_binary(out, &_binary___embedding_bag_sum_f32_o_start,
                     &_binary___embedding_bag_sum_f32_o_end);
}

struct AvgPoolParam {
  int kernel_w, kernel_h, stride_w, stride_h;
};

gcapi::GlueCodeReturn_t avg_pool(gcapi::HabanaKernelParams_t* in,
                                 gcapi::HabanaKernelInstantiation_t* out) {
  gcapi::GlueCodeReturn_t rc = check_counts(in, 1, 1);
  if (rc != gcapi::GLUE_SUCCESS) return rc;
  if (in->NodeParams == nullptr || in->NodeParamsSize != sizeof(AvgPoolParam))
    return gcapi::GLUE_MISSING_PRIVATE_STRUCTURE;
  const AvgPoolParam* p = static_cast<const AvgPoolParam*>(in->NodeParams);
  const gcapi::TensorGeometry_t& i = in->inputTensors[0].geometry;
  const gcapi::TensorGeometry_t& o = in->outputTensors[0].geometry;
  if (i.dims != 4 || o.dims != 4 || o.sizes[0] != i.sizes[0] ||
      o.sizes[1] != (i.sizes[1] - p->kernel_w) / p->stride_w + 1 ||
      o.sizes[2] != (i.sizes[2] - p->kernel_h) / p->stride_h + 1 || o.sizes[3] != i.sizes[3])
    return gcapi::GLUE_INCOMPATIBLE_OUTPUT_SIZE;
  out->indexSpaceGeometry.dims = 4;
  out->indexSpaceGeometry.sizes[0] = (o.sizes[0] + 63) / 64;
  for (unsigned d = 1; d < 4; ++d) out->indexSpaceGeometry.sizes[d] = o.sizes[d];
  out->inputTensorAccessPattern[0].allRequired = 1;
  const float steps[gcapi::MAX_TENSOR_DIM] = {64, 1, 1, 1, 1};
  map_linear(out->outputTensorAccessPattern, 1, 4, steps);
  out->kernel.paramsNr = 4;
  std::memcpy(out->kernel.scalarParams, p, sizeof(*p));
  return copy_binary(out, &_binary___avg_pool_2d_fwd_f32_o_start,
                     &_binary___avg_pool_2d_fwd_f32_o_end);
}

gcapi::GlueCodeReturn_t batch_norm(gcapi::HabanaKernelParams_t* in,
                                   gcapi::HabanaKernelInstantiation_t* out) {
  gcapi::GlueCodeReturn_t rc = check_counts(in, 5, 1);
  if (rc != gcapi::GLUE_SUCCESS) return rc;
  if (in->NodeParams == nullptr || in->NodeParamsSize != sizeof(float))
    return gcapi::GLUE_MISSING_PRIVATE_STRUCTURE;
  const gcapi::TensorGeometry_t& x = in->inputTensors[0].geometry;
  for (unsigned t = 1; t < 5; ++t)
    if (in->inputTensors[t].geometry.sizes[0] != x.sizes[0])
      return gcapi::GLUE_INCOMPATIBLE_INPUT_SIZE;
  out->indexSpaceGeometry.dims = 4;
  out->indexSpaceGeometry.sizes[0] = (x.sizes[0] + 63) / 64;
  for (unsigned d = 1; d < 4; ++d) out->indexSpaceGeometry.sizes[d] = d < x.dims ? x.sizes[d] : 1;
  const float steps[gcapi::MAX_TENSOR_DIM] = {64, 1, 1, 1, 1};
  map_linear(out->inputTensorAccessPattern, 1, x.dims, steps);
  map_linear(out->outputTensorAccessPattern, 1, x.dims, steps);
  for (unsigned t = 1; t < 5; ++t) out->inputTensorAccessPattern[t].allRequired = 1;
  out->kernel.paramsNr = 1;
  std::memcpy(out->kernel.scalarParams, in->NodeParams, sizeof(float));
  return copy_binary(out, &_binary___batch_norm_fwd_f32_o_start,
                     &_binary___batch_norm_fwd_f32_o_end);
}

// Habana's SpatialReduction-style parameters of the 2-D filter.
struct FilterParam {
  int pad_w, pad_h, kernel_w, kernel_h, stride_w, stride_h, dilation_w, dilation_h;
};

gcapi::GlueCodeReturn_t filter_2d(gcapi::HabanaKernelParams_t* in,
                                  gcapi::HabanaKernelInstantiation_t* out) {
  gcapi::GlueCodeReturn_t rc = check_counts(in, 2, 1);
  if (rc != gcapi::GLUE_SUCCESS) return rc;
  if (in->NodeParams == nullptr || in->NodeParamsSize != sizeof(FilterParam))
    return gcapi::GLUE_MISSING_PRIVATE_STRUCTURE;
  const FilterParam* p = static_cast<const FilterParam*>(in->NodeParams);
  if (p->kernel_w < 1 || p->kernel_h < 1 || p->stride_w < 1 || p->stride_h < 1 ||
      p->dilation_w < 1 || p->dilation_h < 1 || p->pad_w < 0 || p->pad_h < 0)
    return gcapi::GLUE_INCOMPATIBLE_INPUT_SIZE;
  for (unsigned t = 0; t < 2; ++t)
    if (in->inputTensors[t].dataType != gcapi::DATA_F32) {
      in->inputTensors[t].dataType = gcapi::DATA_F32;
      return gcapi::GLUE_INCOMPATIBLE_DATA_TYPE;
    }
  const gcapi::TensorGeometry_t& i = in->inputTensors[0].geometry;
  const gcapi::TensorGeometry_t& f = in->inputTensors[1].geometry;
  gcapi::TensorGeometry_t& o = in->outputTensors[0].geometry;
  if (i.dims != 4 || f.dims != 3 || f.sizes[0] != i.sizes[0] ||
      f.sizes[1] != static_cast<unsigned>(p->kernel_w) ||
      f.sizes[2] != static_cast<unsigned>(p->kernel_h))
    return gcapi::GLUE_INCOMPATIBLE_INPUT_SIZE;
  // The output size a convolution gives; the expected sizes go back on the error path.
  const auto out_size = [](unsigned in_size, int pad, int kernel, int stride, int dilation) {
    return static_cast<unsigned>(
        (static_cast<int>(in_size) + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1);
  };
  const unsigned want[4] = {i.sizes[0], out_size(i.sizes[1], p->pad_w, p->kernel_w, p->stride_w,
                                                 p->dilation_w),
                            out_size(i.sizes[2], p->pad_h, p->kernel_h, p->stride_h,
                                     p->dilation_h),
                            i.sizes[3]};
  if (o.dims != 4 || o.sizes[0] != want[0] || o.sizes[1] != want[1] || o.sizes[2] != want[2] ||
      o.sizes[3] != want[3]) {
    o.dims = 4;
    for (unsigned d = 0; d < 4; ++d) o.sizes[d] = want[d];
    return gcapi::GLUE_INCOMPATIBLE_OUTPUT_SIZE;
  }
  out->indexSpaceGeometry.dims = 4;
  out->indexSpaceGeometry.sizes[0] = (o.sizes[0] + 63) / 64;
  for (unsigned d = 1; d < 4; ++d) out->indexSpaceGeometry.sizes[d] = o.sizes[d];
  out->inputTensorAccessPattern[0].allRequired = 1;
  out->inputTensorAccessPattern[1].allRequired = 1;
  const float steps[gcapi::MAX_TENSOR_DIM] = {64, 1, 1, 1, 1};
  map_linear(out->outputTensorAccessPattern, 1, 4, steps);
  out->kernel.paramsNr = 8;
  std::memcpy(out->kernel.scalarParams, p, sizeof(*p));
  return copy_binary(out, &_binary___filter_fwd_2d_f32_o_start,
                     &_binary___filter_fwd_2d_f32_o_end);
}

// Bitonic sort of every row: f32 data in, sorted f32 data and i32 original positions out (same
// sizes); node parameter: 0 ascending, 1 descending. The auxiliary tensor holds the SHUFFLE
// tables that swap lanes 1, 2 and 4 apart inside each 16-element dual group: element n reads
// element n ^ dist, written as tpc-intrinsics.h's SHUFFLE encodes a source (bits 0-4 the
// element, bit 5 its group, bit 7 enable), four bytes per f32 element as Habana's tables do.
struct SortParam {
  int descending;
};
gcapi::GlueCodeReturn_t bitonic_sort(gcapi::HabanaKernelParams_t* in,
                                     gcapi::HabanaKernelInstantiation_t* out) {
  gcapi::GlueCodeReturn_t rc = check_counts(in, 1, 2);
  if (rc != gcapi::GLUE_SUCCESS) return rc;
  if (in->NodeParams == nullptr || in->NodeParamsSize != sizeof(SortParam))
    return gcapi::GLUE_MISSING_PRIVATE_STRUCTURE;
  const SortParam* p = static_cast<const SortParam*>(in->NodeParams);
  if (in->inputTensors[0].dataType != gcapi::DATA_F32 ||
      in->outputTensors[0].dataType != gcapi::DATA_F32 ||
      in->outputTensors[1].dataType != gcapi::DATA_I32) {
    in->inputTensors[0].dataType = gcapi::DATA_F32;
    in->outputTensors[0].dataType = gcapi::DATA_F32;
    in->outputTensors[1].dataType = gcapi::DATA_I32;
    return gcapi::GLUE_INCOMPATIBLE_DATA_TYPE;
  }
  const gcapi::TensorGeometry_t& g = in->inputTensors[0].geometry;
  for (unsigned o = 0; o < 2; ++o)
    if (std::memcmp(in->outputTensors[o].geometry.sizes, g.sizes, sizeof g.sizes) != 0)
      return gcapi::GLUE_INCOMPATIBLE_OUTPUT_SIZE;
  if (g.sizes[0] == 0 || g.sizes[0] > 8192) return gcapi::GLUE_INCOMPATIBLE_INPUT_SIZE;
  int row_exp = 6;
  while ((1u << row_exp) < g.sizes[0]) ++row_exp;
  // One member per row; dims 1..4 as the tensor's.
  out->indexSpaceGeometry.dims = 5;
  out->indexSpaceGeometry.sizes[0] = 1;
  for (unsigned d = 1; d < 5; ++d)
    out->indexSpaceGeometry.sizes[d] = d < g.dims ? g.sizes[d] : 1;
  out->inputTensorAccessPattern[0].allRequired = 1;
  const float steps[gcapi::MAX_TENSOR_DIM] = {static_cast<float>(1u << row_exp), 1, 1, 1, 1};
  map_linear(out->outputTensorAccessPattern, 2, 5, steps);
  out->inputPadValues[0].fValue = p->descending ? -INFINITY : INFINITY;
  gcapi::AuxTensor_t& aux = out->auxiliaryTensors[0];
  out->auxiliaryTensorCount = 1;
  aux.dataType = gcapi::DATA_U8;
  aux.geometry.dims = 1;
  aux.geometry.sizes[0] = 3 * 256;
  if (aux.pData == nullptr || aux.bufferSize < 3 * 256) {
    aux.bufferSize = 3 * 256;
    return gcapi::GLUE_INSUFICIENT_AUX_BUFFER_SIZE;
  }
  unsigned char* tables = static_cast<unsigned char*>(aux.pData);
  for (unsigned t = 0; t < 3; ++t)
    for (unsigned i = 0; i < 64; ++i) {
      const unsigned n = (i % 16) ^ (1u << t);
      const unsigned char ctl = static_cast<unsigned char>(n | ((n > 7) << 5) | 0x80);
      std::memset(tables + t * 256 + 4 * i, ctl, 4);
    }
  const int params[2] = {p->descending, row_exp};
  out->kernel.paramsNr = 2;
  std::memcpy(out->kernel.scalarParams, params, sizeof params);
  return copy_binary(out, &_binary___bitonic_sort_f32_o_start, &_binary___bitonic_sort_f32_o_end);
}

struct Entry {
  const char* name;
  gcapi::GlueCodeReturn_t (*glue)(gcapi::HabanaKernelParams_t*,
                                  gcapi::HabanaKernelInstantiation_t*);
};
const Entry kKernels[] = {
    {"custom_leakyrelu_f32", leakyrelu},
    {"custom_relu6_fwd_f32", relu6},
    {"custom_add_f32", add},
    {"custom_cast_bf16_to_f32", cast},
    {"custom_softmax_fcd_f32", softmax},
    {"custom_searchsorted_fwd_f32", searchsorted},
    {"custom_kl_div_fwd_f32", kl_div},
    {"custom_printf_test_f32", printf_test},
    {"custom_matrix_mul_fwd_f32", matrix_mul},
    {"custom_gather_fwd_dim1_i32", gather},
    {"custom_avg_pool_2d_fwd_f32", avg_pool},
    {"custom_batch_norm_fwd_f32", batch_norm},
    {"custom_filter_fwd_2d_f32", filter_2d},
    {"custom_bitonic_sort_f32", bitonic_sort},
    {"custom_embedding_bag_sum_f32", embedding_bag},
};
constexpr unsigned kKernelCount = sizeof(kKernels) / sizeof(kKernels[0]);

}  // namespace

// entry_points.cpp of Habana's examples.
extern "C" gcapi::GlueCodeReturn_t GetKernelNames(char** names, unsigned* kernelCount,
                                                  gcapi::DeviceId_t deviceId) {
  if (deviceId != gcapi::DEVICE_ID_GAUDI) {
    *kernelCount = 0;
    return gcapi::GLUE_SUCCESS;
  }
  if (names != nullptr && *kernelCount >= kKernelCount)
    for (unsigned i = 0; i < kKernelCount; ++i) std::strcpy(names[i], kKernels[i].name);
  *kernelCount = kKernelCount;
  return gcapi::GLUE_SUCCESS;
}

extern "C" gcapi::GlueCodeReturn_t HabanaKernel(gcapi::HabanaKernelParams_t* params,
                                                gcapi::HabanaKernelInstantiation_t* instance) {
  for (const Entry& k : kKernels)
    if (std::strcmp(params->nodeName, k.name) == 0) return k.glue(params, instance);
  return gcapi::GLUE_NODE_NOT_FOUND;
}
