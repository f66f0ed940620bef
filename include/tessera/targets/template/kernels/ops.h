// The template target's op library, written against its API (api/machine.h): one function per
// op, all with the same shape (Machine&, inputs..., output). The compiler backend lowers ONNX
// nodes to these by name (op_by_onnx_name).
#pragma once

#include <optional>
#include <string_view>

#include "tessera/targets/template/api/machine.h"

namespace tessera::tmpl::ops {

profile::KernelRecord add(Machine& m, const DeviceSpan& a, const DeviceSpan& b,
                          const DeviceSpan& out);
profile::KernelRecord sub(Machine& m, const DeviceSpan& a, const DeviceSpan& b,
                          const DeviceSpan& out);
profile::KernelRecord mul(Machine& m, const DeviceSpan& a, const DeviceSpan& b,
                          const DeviceSpan& out);
profile::KernelRecord div(Machine& m, const DeviceSpan& a, const DeviceSpan& b,
                          const DeviceSpan& out);
profile::KernelRecord max(Machine& m, const DeviceSpan& a, const DeviceSpan& b,
                          const DeviceSpan& out);
profile::KernelRecord min(Machine& m, const DeviceSpan& a, const DeviceSpan& b,
                          const DeviceSpan& out);
profile::KernelRecord relu(Machine& m, const DeviceSpan& x, const DeviceSpan& out);
profile::KernelRecord neg(Machine& m, const DeviceSpan& x, const DeviceSpan& out);
profile::KernelRecord abs(Machine& m, const DeviceSpan& x, const DeviceSpan& out);

// The op of an ONNX op type ("Add" -> Op::add), or nullopt when the library has none.
std::optional<Op> op_by_onnx_name(std::string_view onnx_op);

}  // namespace tessera::tmpl::ops
