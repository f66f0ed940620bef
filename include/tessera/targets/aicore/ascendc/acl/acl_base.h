/* AscendCL's base types and error codes for Tessera (the names and values of Huawei's
 * acl/acl_base.h and runtime return codes, CANN API reference "aclError"), so that host
 * programs written for the Ascend runtime build unchanged against the simulated AI Cores. */
#ifndef TESSERA_ASCENDC_ACL_ACL_BASE_H_
#define TESSERA_ASCENDC_ACL_ACL_BASE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACL_FUNC_VISIBILITY

typedef void* aclrtStream;
typedef void* aclrtEvent;
typedef void* aclrtContext;
typedef int aclError;
typedef uint16_t aclFloat16;

static const int ACL_SUCCESS = 0;
static const int ACL_ERROR_NONE = 0;
static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_UNINITIALIZE = 100001;
static const int ACL_ERROR_REPEAT_INITIALIZE = 100002;
static const int ACL_ERROR_REPEAT_FINALIZE = 100037;
static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_API_NOT_SUPPORT = 200001;
static const int ACL_ERROR_INVALID_DEVICE = 200002;
static const int ACL_ERROR_INTERNAL_ERROR = 500000;
static const int ACL_ERROR_FAILURE = 500001;
static const int ACL_ERROR_RT_PARAM_INVALID = 107000;
static const int ACL_ERROR_RT_INVALID_DEVICEID = 107001;
static const int ACL_ERROR_RT_CONTEXT_NULL = 107002;
static const int ACL_ERROR_RT_MEMORY_ALLOCATION = 207001;
static const int ACL_ERROR_RT_AICORE_EXCEPTION = 507015;

typedef enum {
  ACL_DT_UNDEFINED = -1,
  ACL_FLOAT = 0,
  ACL_FLOAT16 = 1,
  ACL_INT8 = 2,
  ACL_INT32 = 3,
  ACL_UINT8 = 4,
  ACL_INT16 = 6,
  ACL_UINT16 = 7,
  ACL_UINT32 = 8,
  ACL_INT64 = 9,
  ACL_UINT64 = 10,
  ACL_DOUBLE = 11,
  ACL_BOOL = 12,
} aclDataType;

/* Host conversions between float and the bits of an IEEE half. */
ACL_FUNC_VISIBILITY float aclFloat16ToFloat(aclFloat16 value);
ACL_FUNC_VISIBILITY aclFloat16 aclFloatToFloat16(float value);
/* The size in bytes of an element of `dataType` (0 for ACL_DT_UNDEFINED). */
ACL_FUNC_VISIBILITY size_t aclDataTypeSize(aclDataType dataType);
/* The message of the calling thread's latest failed call (a kernel's DeviceFault included). */
ACL_FUNC_VISIBILITY const char* aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_ASCENDC_ACL_ACL_BASE_H_ */
