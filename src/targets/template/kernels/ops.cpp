#include "tessera/targets/template/kernels/ops.h"

namespace tessera::tmpl::ops {

profile::KernelRecord add(Machine& m, const DeviceSpan& a, const DeviceSpan& b,
                          const DeviceSpan& out) {
  return m.elementwise(Op::add, a, &b, out);
}
profile::KernelRecord sub(Machine& m, const DeviceSpan& a, const DeviceSpan& b,
                          const DeviceSpan& out) {
  return m.elementwise(Op::sub, a, &b, out);
}
profile::KernelRecord mul(Machine& m, const DeviceSpan& a, const DeviceSpan& b,
                          const DeviceSpan& out) {
  return m.elementwise(Op::mul, a, &b, out);
}
profile::KernelRecord div(Machine& m, const DeviceSpan& a, const DeviceSpan& b,
                          const DeviceSpan& out) {
  return m.elementwise(Op::div, a, &b, out);
}
profile::KernelRecord max(Machine& m, const DeviceSpan& a, const DeviceSpan& b,
                          const DeviceSpan& out) {
  return m.elementwise(Op::max, a, &b, out);
}
profile::KernelRecord min(Machine& m, const DeviceSpan& a, const DeviceSpan& b,
                          const DeviceSpan& out) {
  return m.elementwise(Op::min, a, &b, out);
}
profile::KernelRecord relu(Machine& m, const DeviceSpan& x, const DeviceSpan& out) {
  return m.elementwise(Op::relu, x, nullptr, out);
}
profile::KernelRecord neg(Machine& m, const DeviceSpan& x, const DeviceSpan& out) {
  return m.elementwise(Op::neg, x, nullptr, out);
}
profile::KernelRecord abs(Machine& m, const DeviceSpan& x, const DeviceSpan& out) {
  return m.elementwise(Op::abs, x, nullptr, out);
}

std::optional<Op> op_by_onnx_name(std::string_view onnx_op) {
  if (onnx_op == "Add") return Op::add;
  if (onnx_op == "Sub") return Op::sub;
  if (onnx_op == "Mul") return Op::mul;
  if (onnx_op == "Div") return Op::div;
  if (onnx_op == "Max") return Op::max;
  if (onnx_op == "Min") return Op::min;
  if (onnx_op == "Relu") return Op::relu;
  if (onnx_op == "Neg") return Op::neg;
  if (onnx_op == "Abs") return Op::abs;
  return std::nullopt;
}

}  // namespace tessera::tmpl::ops
