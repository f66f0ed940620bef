// The graph compiler's glue-code interface, `gcapi`, as Habana's public gc_interface.h declares
// it (spec 000 §2.7.1; names, field order, enum values and limits follow the header published
// with Habana's custom-kernel examples), so that glue written for the real SDK compiles
// unchanged: `#include "gc_interface.h"` works for every consumer of tessera::tessera_tpc.
// Tessera's helpers for writing glue live in tessera/targets/tpc/api/glue.h.
#ifndef GRAPH_COMPILER_INTERFACE_H
#define GRAPH_COMPILER_INTERFACE_H

// The vendor layout uses anonymous structs inside unions (a GNU extension in C++).
#pragma GCC system_header

#include <stdint.h>

#define _IN_
#define _INOUT_
#define _OUT_

#define KERNEL_NAMES_ENTRY_POINT_NAME "GetKernelNames"
#define KERNEL_QUERY_ENTRY_POINT_NAME "HabanaKernel"

namespace gcapi {

static const unsigned MAX_TENSORS_GOYA = 8;
static const unsigned MAX_TENSORS_GAUDI = 16;
static const unsigned MAX_TENSOR_NR = MAX_TENSORS_GAUDI;
static const unsigned MAX_TENSOR_DIM = 5;
static const unsigned MAX_TENSORS_PARAMS_NR = 32;  // scalar dwords passed to a TPC program
static const unsigned MAX_NODE_NAME = 64;
static const unsigned MAX_USER_PARAMS_SIZE = 128;
typedef void* UserParams_t;

typedef enum _DeviceId_t {
  DEVICE_ID_DALI = 0,
  DEVICE_ID_GOYA = 0,
  DEVICE_ID_GAUDI = 1,
  DEVICE_ID_GOYA2 = 2,
  DEVICE_ID_GRECO = 2,
  DEVICE_ID_GAUDI2 = 3,
  DEVICE_ID_GAUDI_B = 4,
  DEVICE_ID_GAUDI3 = 5,
  DEVICE_ID_MAX = 6
} DeviceId_t;

typedef enum _GlueCodeReturn_t {
  GLUE_SUCCESS = 0,
  GLUE_NODE_NOT_FOUND = 1,
  GLUE_INSUFICIENT_ISA_BUFFER = 2,
  GLUE_INCOMPATIBLE_INPUT_COUNT = 3,
  GLUE_INCOMPATIBLE_INPUT_SIZE = 4,
  GLUE_INCOMPATIBLE_OUTPUT_COUNT = 5,
  GLUE_INCOMPATIBLE_OUTPUT_SIZE = 6,
  GLUE_INCOMPATIBLE_DATA_TYPE = 7,
  GLUE_UNSUPPORTED_LAYER_CONFIGURATION = 8,
  GLUE_INSUFICIENT_AUX_BUFFER_SIZE = 9,
  GLUE_UNSUPPORTED_QUANT_PARAMS = 10,
  GLUE_UNSUPPORTED_BROADCAST_MODE = 11,
  GLUE_UNSUPPORTED_API_VERSION = 12,
  GLUE_NON_STATIC_INPUT_TENSOR = 13,
  GLUE_KERNEL_REQUIRE_REDUCIBLE_TENSOR = 14,
  GLUE_KERNEL_REQUIRE_CONTIGUOUS_TENSOR = 15,
  GLUE_KERNEL_INVALID_SCALAR_ARGUMENT = 16,
  GLUE_UNSUPPORTED_LOW_FCD_INPUT = 17,
  GLUE_INSUFICIENT_ELF_BUFFER = 18,
  GLUE_MISSING_PRIVATE_STRUCTURE = 19,
  GLUE_UNSUPPORTED_5D_TENSORS = 20,
  GLUE_CGUID_GRAPH_UNCHANGED = 21,
  GLUE_FAILED = 400,
} GlueCodeReturn_t;

typedef struct _TensorGeometry_t {
  unsigned dims;
  unsigned sizes[MAX_TENSOR_DIM];        // fastest-changing dimension first
  unsigned permutation[MAX_TENSOR_DIM];  // transpose applied since the node was created
} TensorGeometry_t;

typedef enum _TensorDataType_t {
  DATA_F32 = 0,
  DATA_F16 = 1,
  DATA_I32 = 2,
  DATA_I16 = 3,
  DATA_I8 = 4,
  DATA_U8 = 5,
  DATA_BF16 = 6,
  DATA_U16 = 7,
  DATA_U32 = 8,
  DATA_I4 = 9,
  DATA_U4 = 10,
  DATA_F8_152 = 11,
  DATA_F8_143 = 12,
  DATA_I64 = 13,
  DATA_U64 = 14,
  NUM_DATATYPES = 15
} TensorDataType_t;

typedef enum _KernelType_t {
  KERNEL_TYPE_INFERENCE = 0,
  KERNEL_TYPE_TRAINING_FWD = 1,
  KERNEL_TYPE_TRAINING_BWD = 2
} KernelType_t;

typedef struct _TensorQuantizationParam {
  double scale;
  union {
    int8_t zeroPoint;
    uint8_t zeroPointU8;
    int8_t fp8bias;
  };
} TensorQuantizationParam;

typedef struct _Tensor_t {
  TensorGeometry_t geometry;
  TensorDataType_t dataType;
  TensorQuantizationParam quantizationParam;
  union {
    struct {
      unsigned : 1;
      unsigned Reducible : 1;  // the tensor sits in reduction-capable memory
      unsigned : 30;
    };
    unsigned Value;
  };
  unsigned reserved_1;
  const void* pData;  // the data of a tensor that is a model parameter, else null
  unsigned reserved[6];
} Tensor_t;

// A scratch tensor the glue asks for: the caller allocates pData of bufferSize bytes; glue that
// needs more returns GLUE_INSUFICIENT_AUX_BUFFER_SIZE with the size it needs in bufferSize.
typedef struct _AuxTensor_t {
  _OUT_ TensorGeometry_t geometry;
  _OUT_ TensorDataType_t dataType;
  _IN_ void* pData;
  _INOUT_ unsigned bufferSize;  // bytes
} AuxTensor_t;

// Index-space mapping of one tensor dimension (spec 000 §2.4.4): member x of index-space
// dimension `dim` touches elements start_a*x + start_b .. end_a*x + end_b.
typedef struct _DimTransform_t {
  union {
    unsigned dim;
    unsigned indexSpaceDim;
  };
  float start_a;
  float start_b;
  float end_a;
  float end_b;
} DimTransform_t;

typedef struct _TensorAccessPattern_t {
  union {
    struct {
      unsigned allRequired : 1;  // any member may touch any part of the tensor
      unsigned inputReusabilityBinding : 1;
      unsigned dropTensor : 1;
      unsigned memsetBeforeExecution : 1;
      unsigned inputsReusability : 16;
      unsigned sparseAccess : 1;
      unsigned noRmwAccess : 1;
      unsigned fullyAccessed : 1;
      unsigned : 9;
    };
    unsigned Value;
  };
  union {
    DimTransform_t dim[MAX_TENSOR_DIM];  // one transform per tensor dimension
    DimTransform_t tensorDim[MAX_TENSOR_DIM];
  };
} TensorAccessPattern_t;

typedef struct _ProgramFlags {
  union {
    struct {
      unsigned printfUsed : 1;
      unsigned specialFunctionsUsed : 1;
      unsigned : 30;
    };
    unsigned Value;
  };
} ProgramFlags;

typedef struct _HabanaKernelParams_t {
  _IN_ int apiVersion;
  union {
    _IN_ char nodeName[MAX_NODE_NAME];
    _IN_ char guidName[MAX_NODE_NAME];
  };
  _IN_ UserParams_t NodeParams;  // user parameters (the node's private structure)
  _IN_ DeviceId_t deviceId;
  _IN_ KernelType_t kernelType;  // deprecated
  _INOUT_ Tensor_t inputTensors[MAX_TENSOR_NR];
  _INOUT_ unsigned inputTensorNr;
  _INOUT_ Tensor_t outputTensors[MAX_TENSOR_NR];
  _INOUT_ unsigned outputTensorNr;
  _IN_ unsigned debugFlags;
  _IN_ unsigned NodeParamsSize;
  _IN_ unsigned maxAvailableTpc;
  _IN_ unsigned useDeterministic;
  _IN_ uint64_t uniqueNodeId;
  unsigned reserved[25];
} HabanaKernelParams_t;

typedef struct _DeviceKernel_t {
  _IN_ void* kernelBinary;
  _INOUT_ unsigned binarySize;
  _OUT_ uint32_t scalarParams[MAX_TENSORS_PARAMS_NR];
  _OUT_ unsigned paramsNr;
} DeviceKernel_t;

typedef union _PadValue {
  float fValue;
  unsigned u32Value;
  int i32Value;
  unsigned short u16Value;
  short i16Value;
  unsigned char u8Value;
  char i8Value;
} PadValue;

typedef struct _HabanaKernelInstantiation_t {
  _OUT_ TensorGeometry_t indexSpaceGeometry;
  _OUT_ TensorAccessPattern_t inputTensorAccessPattern[MAX_TENSOR_NR];
  _OUT_ PadValue inputPadValues[MAX_TENSOR_NR];
  _OUT_ TensorAccessPattern_t outputTensorAccessPattern[MAX_TENSOR_NR];
  _INOUT_ AuxTensor_t auxiliaryTensors[MAX_TENSOR_NR];
  _OUT_ unsigned auxiliaryTensorCount;
  _INOUT_ DeviceKernel_t kernel;
  _OUT_ ProgramFlags flags;
  _INOUT_ void* kernelElf;
  _INOUT_ unsigned elfSize;
  _OUT_ PadValue outputMemsetValues[MAX_TENSOR_NR];
  _OUT_ unsigned auxNotRequiringInit;  // bit mask: aux tensors used as scratch pads
  unsigned reserved[16];
} HabanaKernelInstantiation_t;

typedef GlueCodeReturn_t (*pfnGetKernelNames)(_OUT_ char** names, unsigned* kernelCount,
                                              DeviceId_t deviceId);
typedef GlueCodeReturn_t (*pfnHabanaKernel)(_INOUT_ HabanaKernelParams_t* params,
                                            _INOUT_ HabanaKernelInstantiation_t* instance);

}  // namespace gcapi

#endif  // GRAPH_COMPILER_INTERFACE_H
