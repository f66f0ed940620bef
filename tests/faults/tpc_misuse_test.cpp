// The TPC launcher and the built-in kernels (spec 000 §2.3, §2.9) misused the way a program does
// by mistake: tensors whose strides or offsets leave their buffers, buffers already freed,
// parameters of the wrong size or out of range, index spaces too large to split. Each raises a
// UserError or a DeviceFault naming the kernel and what is wrong, never a crash or a read
// outside the tensor's buffer.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "misuse.h"
#include "tessera/runtime/device.h"
#include "tessera/targets/tpc/api/tpc.h"
#include "tessera/targets/tpc/kernels.h"

using namespace tessera;
using namespace tessera::tpc;
using misuse::message_of;

namespace {

void nothing(tensor, tensor) {}

struct TpcMisuse : ::testing::Test {
  std::unique_ptr<runtime::Device> dev = runtime::Device::open("gaudi");
  void SetUp() override { register_builtin_kernels(); }
  DeviceTensor f32(const Shape& shape) { return make_device_tensor(*dev, DType::f32, shape); }
};

TEST_F(TpcMisuse, NegativeStrideReachingBelowTheBuffer) {
  Runtime rt(*dev);
  DeviceTensor in = f32(Shape{64, 4});
  in.strides = Strides{1, -64};
  DeviceTensor out = f32(Shape{64, 4});
  EXPECT_MENTIONS(message_of<UserError>([&] { rt.launch("relu_f32", {in}, {out}); }), "input");
}

TEST_F(TpcMisuse, StridesWhoseProductOverflows) {
  Runtime rt(*dev);
  DeviceTensor in = f32(Shape{64, 4});
  in.strides = Strides{1, std::numeric_limits<std::int64_t>::max() / 2};
  DeviceTensor out = f32(Shape{64, 4});
  EXPECT_MENTIONS(message_of<UserError>([&] { rt.launch("relu_f32", {in}, {out}); }), "input");
}

TEST_F(TpcMisuse, ByteOffsetPastTheBuffer) {
  Runtime rt(*dev);
  DeviceTensor in = f32(Shape{64});
  in.byte_offset = std::numeric_limits<std::size_t>::max() - 8;
  DeviceTensor out = f32(Shape{64});
  EXPECT_MENTIONS(message_of<UserError>([&] { rt.launch("relu_f32", {in}, {out}); }), "input");
}

TEST_F(TpcMisuse, BufferUsedAfterItsFree) {
  Runtime rt(*dev);
  DeviceTensor in = f32(Shape{64});
  DeviceTensor out = f32(Shape{64});
  dev->free(in.buffer);
  EXPECT_FALSE(message_of<UserError>([&] { rt.launch("relu_f32", {in}, {out}); }).empty());
}

TEST_F(TpcMisuse, ParametersOfTheWrongSize) {
  Runtime rt(*dev);
  DeviceTensor in = f32(Shape{64, 4});
  DeviceTensor out = f32(Shape{64, 4});
  const std::uint8_t one_byte = 1;
  EXPECT_MENTIONS(message_of<UserError>([&] {
                    rt.launch("softmax_f32", {in}, {out}, &one_byte, 1);
                  }),
                  "1 parameter bytes");
}

TEST_F(TpcMisuse, SoftmaxAxisOutOfRange) {
  Runtime rt(*dev);
  DeviceTensor in = f32(Shape{64, 4});
  DeviceTensor out = f32(Shape{64, 4});
  kernels::SoftmaxParams p{};
  p.axis = -1;
  EXPECT_FALSE(
      message_of<UserError>([&] { rt.launch("softmax_f32", {in}, {out}, p); }).empty());
}

TEST_F(TpcMisuse, InputOfAnotherDataType) {
  Runtime rt(*dev);
  DeviceTensor in = make_device_tensor(*dev, DType::i32, Shape{64});
  DeviceTensor out = f32(Shape{64});
  EXPECT_FALSE(message_of<UserError>([&] { rt.launch("relu_f32", {in}, {out}); }).empty());
}

TEST_F(TpcMisuse, OutputSmallerThanTheInput) {
  Runtime rt(*dev);
  DeviceTensor in = f32(Shape{128});
  DeviceTensor out = f32(Shape{64});
  EXPECT_FALSE(message_of<UserError>([&] { rt.launch("relu_f32", {in}, {out}); }).empty());
}

TEST_F(TpcMisuse, MissingInput) {
  Runtime rt(*dev);
  DeviceTensor a = f32(Shape{64});
  DeviceTensor out = f32(Shape{64});
  EXPECT_FALSE(message_of<UserError>([&] { rt.launch("add_f32", {a}, {out}); }).empty());
}

TEST_F(TpcMisuse, DirectRunOfAnIndexSpaceTooLargeToSplit) {
  Runtime rt(*dev);
  KernelLaunch l;
  l.name = "huge";
  l.kernel = tpc_kernel<&nothing>();
  l.inputs = {f32(Shape{64})};
  l.outputs = {f32(Shape{64})};
  l.index_space.dims = 5;
  for (int d = 0; d < 5; ++d) l.index_space.sizes[d] = 1u << 30;
  EXPECT_FALSE(message_of<UserError>([&] { rt.run(l); }).empty());
}

TEST_F(TpcMisuse, DirectRunWithoutAKernelFunction) {
  Runtime rt(*dev);
  KernelLaunch l;
  l.name = "none";
  l.inputs = {f32(Shape{64})};
  l.outputs = {f32(Shape{64})};
  l.index_space.dims = 1;
  l.index_space.sizes[0] = 1;
  EXPECT_FALSE(message_of<UserError>([&] { rt.run(l); }).empty());
}

}  // namespace
