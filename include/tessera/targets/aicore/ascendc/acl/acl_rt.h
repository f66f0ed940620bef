/* AscendCL's runtime (aclrt*) for Tessera: one simulated device (id 0) whose AI Cores run the
 * kernels; device memory is its global memory (aclrtMalloc is GmAlloc), host <-> device copies
 * cross its host link and are timed in the device's profile. Streams run their launches and
 * copies in order at the call; a kernel's DeviceFault is returned by the next synchronisation of
 * its stream as ACL_ERROR_RT_AICORE_EXCEPTION, its text by aclGetRecentErrMsg. */
#ifndef TESSERA_ASCENDC_ACL_ACL_RT_H_
#define TESSERA_ASCENDC_ACL_ACL_RT_H_

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aclrtRunMode { ACL_DEVICE = 0, ACL_HOST = 1 } aclrtRunMode;

typedef enum aclrtMemcpyKind {
  ACL_MEMCPY_HOST_TO_HOST = 0,
  ACL_MEMCPY_HOST_TO_DEVICE = 1,
  ACL_MEMCPY_DEVICE_TO_HOST = 2,
  ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
} aclrtMemcpyKind;

typedef enum aclrtMemMallocPolicy {
  ACL_MEM_MALLOC_HUGE_FIRST = 0,
  ACL_MEM_MALLOC_HUGE_ONLY = 1,
  ACL_MEM_MALLOC_NORMAL_ONLY = 2,
} aclrtMemMallocPolicy;

ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t* deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t* count);
ACL_FUNC_VISIBILITY aclError aclrtGetRunMode(aclrtRunMode* runMode);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void);

ACL_FUNC_VISIBILITY aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtDestroyContext(aclrtContext context);
ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context);
ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext* context);

ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream* stream);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);

ACL_FUNC_VISIBILITY aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtFree(void* devPtr);
ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void** hostPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void* hostPtr);
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count,
                                         aclrtMemcpyKind kind);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src,
                                              size_t count, aclrtMemcpyKind kind,
                                              aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value,
                                         size_t count);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_ASCENDC_ACL_ACL_RT_H_ */
