// The launch behind AscendCL's kernel-launch path (ACLRT_LAUNCH_KERNEL(kernel)(blockDim, stream,
// args...), the aclrtlaunch_<kernel> functions ascendc_library generates): runs the kernel on
// blockDim blocks of the simulated AI Cores (tessera::aicore::launch) in the order of its stream.
// The contract of AscendCL: the launch returns 0 once queued; a DeviceFault of the kernel is
// kept on the stream and returned by its next aclrtSynchronizeStream.
#pragma once

#include <cstdint>
#include <functional>

namespace tessera::aicore {

// 0, or an aclError for a launch that cannot start (no device set, an unknown stream, blockDim
// 0), with its message for aclGetRecentErrMsg.
std::uint32_t acl_launch(const char* kernel, std::uint32_t block_dim, void* stream,
                         const std::function<void()>& body);

}  // namespace tessera::aicore
