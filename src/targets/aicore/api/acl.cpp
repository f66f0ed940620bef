// AscendCL's host runtime on the simulated device (include/tessera/targets/aicore/ascendc/acl):
// one device, id 0, the aicore device of tessera::aicore::device(). Calls return the error codes
// Huawei's CANN API reference gives them and leave the reason for aclGetRecentErrMsg.
#include "acl/acl.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include <fmt/format.h>

#include "tessera/core/error.h"
#include "tessera/targets/aicore/api/acl_launch.h"
#include "tessera/targets/aicore/api/core.h"

namespace {

// A stream: its launches run at the call; a kernel's fault waits here for the next sync.
struct Stream {
  std::string fault;
};

struct AclState {
  std::mutex mutex;
  bool initialized = false;
  bool finalized = false;
  bool device_set = false;
  std::set<Stream*> streams;
  Stream default_stream;
  std::set<void*> host_blocks;
  int context_token = 0;  // the one context's handle points here
};
AclState& state() {
  static AclState s;
  return s;
}

thread_local std::string recent_error;

aclError fail(aclError code, const std::string& message) {
  recent_error = fmt::format("EE{}: {}", code, message);
  return code;
}
aclError no_device(const char* call) {
  return fail(ACL_ERROR_RT_CONTEXT_NULL,
              fmt::format("{}: no device is set; call aclrtSetDevice(0) first", call));
}
// The stream object of a handle (nullptr: the default stream), or nullptr when unknown.
Stream* stream_of(AclState& s, aclrtStream handle) {
  if (!handle) return &s.default_stream;
  auto* p = static_cast<Stream*>(handle);
  return s.streams.count(p) ? p : nullptr;
}

aclError memcpy_checked(void* dst, size_t destMax, const void* src, size_t count,
                        aclrtMemcpyKind kind, const char* call) {
  if (!dst || !src)
    return fail(ACL_ERROR_INVALID_PARAM, fmt::format("{}: {} is NULL", call, dst ? "src" : "dst"));
  if (count > destMax)
    return fail(ACL_ERROR_INVALID_PARAM,
                fmt::format("{}: count {} B exceeds destMax {} B; copy at most destMax bytes", call,
                            count, destMax));
  if (static_cast<int>(kind) < ACL_MEMCPY_HOST_TO_HOST ||
      static_cast<int>(kind) > ACL_MEMCPY_DEVICE_TO_DEVICE)
    return fail(ACL_ERROR_INVALID_PARAM,
                fmt::format("{}: unknown aclrtMemcpyKind {}", call, static_cast<int>(kind)));
  if (count == 0) return ACL_SUCCESS;
  const bool dst_dev = tessera::aicore::gm_contains(dst, count);
  const bool src_dev = tessera::aicore::gm_contains(src, count);
  const bool want_dst_dev =
      kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  const bool want_src_dev =
      kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  if (dst_dev != want_dst_dev || src_dev != want_src_dev)
    return fail(
        ACL_ERROR_INVALID_PARAM,
        fmt::format("{}: the kind says {} -> {}, but dst ({}) is {} and src ({}) is {} "
                    "for {} B; pass the kind that matches the pointers",
                    call, want_src_dev ? "device" : "host", want_dst_dev ? "device" : "host", dst,
                    dst_dev ? "device memory" : "not inside a device allocation", src,
                    src_dev ? "device memory" : "not inside a device allocation", count));
  try {
    switch (kind) {
      case ACL_MEMCPY_HOST_TO_DEVICE:
        tessera::aicore::gm_copy_to_device(dst, src, count);
        break;
      case ACL_MEMCPY_DEVICE_TO_HOST:
        tessera::aicore::gm_copy_to_host(dst, src, count);
        break;
      default:
        // Host to host, and device to device (not timed: no DMA engine is modeled for it).
        std::memmove(dst, src, count);
        break;
    }
  } catch (const tessera::Error& e) {
    return fail(ACL_ERROR_INVALID_PARAM, fmt::format("{}: {}", call, e.what()));
  }
  return ACL_SUCCESS;
}

}  // namespace

namespace tessera::aicore {

std::uint32_t acl_launch(const char* kernel, std::uint32_t block_dim, void* stream,
                         const std::function<void()>& body) {
  AclState& s = state();
  Stream* target = nullptr;
  {
    std::lock_guard lock(s.mutex);
    if (!s.device_set) return static_cast<std::uint32_t>(no_device(kernel));
    target = stream_of(s, stream);
    if (!target)
      return static_cast<std::uint32_t>(
          fail(ACL_ERROR_INVALID_PARAM,
               fmt::format("{}: stream {} was not made by aclrtCreateStream (or is destroyed)",
                           kernel, stream)));
  }
  if (block_dim == 0)
    return static_cast<std::uint32_t>(
        fail(ACL_ERROR_INVALID_PARAM, fmt::format("{}: blockDim is 0; launch at least 1", kernel)));
  try {
    launch(kernel, block_dim, body);
  } catch (const DeviceFault& e) {
    std::lock_guard lock(s.mutex);
    if (target->fault.empty()) target->fault = e.what();
  } catch (const UserError& e) {
    return static_cast<std::uint32_t>(fail(ACL_ERROR_INVALID_PARAM, e.what()));
  }
  return 0;
}

}  // namespace tessera::aicore

extern "C" {

aclError aclInit(const char* configPath) {
  AclState& s = state();
  std::lock_guard lock(s.mutex);
  if (s.initialized) return fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit: called already");
  if (configPath && *configPath) {
    std::FILE* f = std::fopen(configPath, "r");
    if (!f)
      return fail(ACL_ERROR_INVALID_PARAM,
                  fmt::format("aclInit: cannot open the config file '{}'; pass NULL or an "
                              "existing JSON file",
                              configPath));
    std::fclose(f);
  }
  s.initialized = true;
  s.finalized = false;
  return ACL_SUCCESS;
}

aclError aclFinalize(void) {
  AclState& s = state();
  std::lock_guard lock(s.mutex);
  if (s.finalized) return fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize: called already");
  if (!s.initialized) return fail(ACL_ERROR_UNINITIALIZE, "aclFinalize: aclInit was not called");
  s.initialized = false;
  s.finalized = true;
  return ACL_SUCCESS;
}

const char* aclGetRecentErrMsg(void) {
  return recent_error.empty() ? nullptr : recent_error.c_str();
}

float aclFloat16ToFloat(aclFloat16 value) {
  _Float16 h;
  std::memcpy(&h, &value, 2);
  return static_cast<float>(h);
}

aclFloat16 aclFloatToFloat16(float value) {
  const auto h = static_cast<_Float16>(value);
  aclFloat16 bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

size_t aclDataTypeSize(aclDataType dataType) {
  switch (dataType) {
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32:
      return 4;
    case ACL_FLOAT16:
    case ACL_INT16:
    case ACL_UINT16:
      return 2;
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_BOOL:
      return 1;
    case ACL_INT64:
    case ACL_UINT64:
    case ACL_DOUBLE:
      return 8;
    default:
      return 0;
  }
}

aclError aclrtSetDevice(int32_t deviceId) {
  AclState& s = state();
  std::lock_guard lock(s.mutex);
  if (deviceId != 0)
    return fail(
        ACL_ERROR_RT_INVALID_DEVICEID,
        fmt::format("aclrtSetDevice({}): the simulated host has one device, id 0", deviceId));
  try {
    (void)tessera::aicore::device();  // opens the preset now: a bad one fails here
  } catch (const tessera::Error& e) {
    return fail(ACL_ERROR_RT_INVALID_DEVICEID, fmt::format("aclrtSetDevice(0): {}", e.what()));
  }
  s.device_set = true;
  return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId) {
  AclState& s = state();
  std::lock_guard lock(s.mutex);
  if (deviceId != 0)
    return fail(
        ACL_ERROR_RT_INVALID_DEVICEID,
        fmt::format("aclrtResetDevice({}): the simulated host has one device, id 0", deviceId));
  s.device_set = false;
  for (Stream* p : s.streams) delete p;
  s.streams.clear();
  s.default_stream.fault.clear();
  return ACL_SUCCESS;
}

aclError aclrtGetDevice(int32_t* deviceId) {
  AclState& s = state();
  std::lock_guard lock(s.mutex);
  if (!deviceId) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: deviceId is NULL");
  if (!s.device_set) return no_device("aclrtGetDevice");
  *deviceId = 0;
  return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t* count) {
  if (!count) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: count is NULL");
  *count = 1;
  return ACL_SUCCESS;
}

aclError aclrtGetRunMode(aclrtRunMode* runMode) {
  if (!runMode) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetRunMode: runMode is NULL");
  *runMode = ACL_HOST;
  return ACL_SUCCESS;
}

aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId) {
  if (!context) return fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateContext: context is NULL");
  const aclError e = aclrtSetDevice(deviceId);
  if (e != ACL_SUCCESS) return e;
  *context = &state().context_token;
  return ACL_SUCCESS;
}

aclError aclrtDestroyContext(aclrtContext context) {
  if (context != &state().context_token)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyContext: not a context of this process");
  return ACL_SUCCESS;
}

aclError aclrtSetCurrentContext(aclrtContext context) {
  if (context != &state().context_token)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtSetCurrentContext: not a context of this process");
  return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext* context) {
  if (!context) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetCurrentContext: context is NULL");
  if (!state().device_set) return no_device("aclrtGetCurrentContext");
  *context = &state().context_token;
  return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream* stream) {
  AclState& s = state();
  std::lock_guard lock(s.mutex);
  if (!stream) return fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream: stream is NULL");
  if (!s.device_set) return no_device("aclrtCreateStream");
  auto* p = new Stream;
  s.streams.insert(p);
  *stream = p;
  return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream) {
  AclState& s = state();
  std::lock_guard lock(s.mutex);
  auto* p = static_cast<Stream*>(stream);
  if (!stream || !s.streams.count(p))
    return fail(
        ACL_ERROR_INVALID_PARAM,
        fmt::format("aclrtDestroyStream: {} is not a live stream of aclrtCreateStream", stream));
  s.streams.erase(p);
  delete p;
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
  AclState& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.device_set) return no_device("aclrtSynchronizeStream");
  Stream* p = stream_of(s, stream);
  if (!p)
    return fail(ACL_ERROR_INVALID_PARAM,
                fmt::format("aclrtSynchronizeStream: {} is not a live stream", stream));
  if (!p->fault.empty()) {
    const std::string fault = std::move(p->fault);
    p->fault.clear();
    return fail(ACL_ERROR_RT_AICORE_EXCEPTION, fault);
  }
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeDevice(void) {
  AclState& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.device_set) return no_device("aclrtSynchronizeDevice");
  std::string fault = std::move(s.default_stream.fault);
  s.default_stream.fault.clear();
  for (Stream* p : s.streams) {
    if (fault.empty()) fault = p->fault;
    p->fault.clear();
  }
  return fault.empty() ? ACL_SUCCESS : fail(ACL_ERROR_RT_AICORE_EXCEPTION, fault);
}

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
  if (!devPtr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: devPtr is NULL");
  if (size == 0) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: size 0; ask for 1 B or more");
  if (static_cast<int>(policy) < ACL_MEM_MALLOC_HUGE_FIRST ||
      static_cast<int>(policy) > ACL_MEM_MALLOC_NORMAL_ONLY)
    return fail(ACL_ERROR_INVALID_PARAM,
                fmt::format("aclrtMalloc: unknown policy {}", static_cast<int>(policy)));
  if (!state().device_set) return no_device("aclrtMalloc");
  try {
    *devPtr = tessera::aicore::gm_alloc(size);
  } catch (const tessera::Error& e) {
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
                fmt::format("aclrtMalloc({} B): {}", size, e.what()));
  }
  return ACL_SUCCESS;
}

aclError aclrtFree(void* devPtr) {
  if (!devPtr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtFree: devPtr is NULL");
  try {
    tessera::aicore::gm_free(devPtr);
  } catch (const tessera::Error& e) {
    return fail(ACL_ERROR_INVALID_PARAM, fmt::format("aclrtFree: {}", e.what()));
  }
  return ACL_SUCCESS;
}

aclError aclrtMallocHost(void** hostPtr, size_t size) {
  if (!hostPtr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost: hostPtr is NULL");
  if (size == 0)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost: size 0; ask for 1 B or more");
  void* p = std::malloc(size);
  if (!p)
    return fail(ACL_ERROR_BAD_ALLOC, fmt::format("aclrtMallocHost: {} B not available", size));
  AclState& s = state();
  std::lock_guard lock(s.mutex);
  s.host_blocks.insert(p);
  *hostPtr = p;
  return ACL_SUCCESS;
}

aclError aclrtFreeHost(void* hostPtr) {
  AclState& s = state();
  std::lock_guard lock(s.mutex);
  if (!hostPtr || !s.host_blocks.erase(hostPtr))
    return fail(ACL_ERROR_INVALID_PARAM,
                fmt::format("aclrtFreeHost: {} is not a live block of aclrtMallocHost", hostPtr));
  std::free(hostPtr);
  return ACL_SUCCESS;
}

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count,
                     aclrtMemcpyKind kind) {
  return memcpy_checked(dst, destMax, src, count, kind, "aclrtMemcpy");
}

aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream) {
  {
    AclState& s = state();
    std::lock_guard lock(s.mutex);
    if (!stream_of(s, stream))
      return fail(ACL_ERROR_INVALID_PARAM,
                  fmt::format("aclrtMemcpyAsync: {} is not a live stream", stream));
  }
  return memcpy_checked(dst, destMax, src, count, kind, "aclrtMemcpyAsync");
}

aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
  if (!devPtr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemset: devPtr is NULL");
  if (count > maxCount)
    return fail(ACL_ERROR_INVALID_PARAM,
                fmt::format("aclrtMemset: count {} B exceeds maxCount {} B", count, maxCount));
  if (count && !tessera::aicore::gm_contains(devPtr, count))
    return fail(
        ACL_ERROR_INVALID_PARAM,
        fmt::format("aclrtMemset: [{}, +{} B) is not inside one device allocation", devPtr, count));
  std::memset(devPtr, value, count);
  return ACL_SUCCESS;
}

}  // extern "C"
