// The BMNNSDK C APIs (spec 002: bmruntime, BMKernel) misused the way a program does by mistake:
// each call fails with its documented error value and a last error of the right kind naming
// what is wrong, never a crash, a hang or a result computed from garbage.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../bm/bm_util.h"

using bmtest::Bm;
using bmtest::expect_error;

namespace {

// (384773 x 49477 x 8681 x 27905) floats are 2^64 + 4 bytes: a size_t product wraps to 4.
TEST(BmMisuse, DeviceAllocOfAShapeWhoseBytesOverflow) {
  Bm bm;
  bmshape_t huge = BM_TENSOR_FP32(384773, 49477, 8681, 27905);
  EXPECT_EQ(bmmem_device_alloc(bm.ctx, &huge), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "more bytes than any device memory");
}

TEST(BmMisuse, DeviceAllocWithANegativeDimension) {
  Bm bm;
  bmshape_t s = BM_TENSOR_INT8(1, -3, 4, 4);
  EXPECT_EQ(bmmem_device_alloc(bm.ctx, &s), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "dim[1] is -3");
}

TEST(BmMisuse, CopyIntoFreedDeviceMemory) {
  Bm bm;
  bmmem_device_t m = bmmem_device_alloc_raw(bm.ctx, 64);
  ASSERT_NE(m, nullptr);
  bmmem_device_free(bm.ctx, m);
  std::vector<std::uint8_t> host(64, 1);
  EXPECT_EQ(bm_memcpy_s2d(bm.ctx, m, host.data()), BM_ERR_INVALID_ARGUMENT);
  expect_error(TESSERA_BM_USER_ERROR, "not a live allocation");
}

// (1, 1, 65536, 65537) needs 4 GiB + 64 KiB per lane; a 32-bit h * w wraps to 64 KiB, which fits.
TEST(BmMisuse, LmemTensorWhosePerLaneBytesOverflow32Bits) {
  Bm bm;
  EXPECT_EQ(bmk1880_tl_alloc(bm.bk, shape_t4(1, 1, 65536, 65537), FMT_I8, CTRL_NULL), nullptr);
  expect_error(TESSERA_BM_DEVICE_FAULT, "lmem overflow");
}

TEST(BmMisuse, ShapeToSizeOfAShapeBeyond32Bits) {
  Bm bm;
  EXPECT_EQ(bmk1880_tl_shape_to_size(bm.bk, shape_t4(1, 1, 65536, 65537), false, FMT_I8), -1);
  expect_error(TESSERA_BM_USER_ERROR, "does not fit");
}

TEST(BmMisuse, NegativeLmemDimension) {
  Bm bm;
  EXPECT_EQ(bmk1880_tl_alloc(bm.bk, shape_t4(1, -2, 4, 4), FMT_I8, CTRL_NULL), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "a negative int given to shape_t4");
}

TEST(BmMisuse, ShapeThatIsNeitherATensorNorAMatrix) {
  Bm bm;
  shape_t s = shape_t4(1, 2, 4, 4);
  s.dim = 3;
  EXPECT_EQ(bmk1880_tl_alloc(bm.bk, s, FMT_I8, CTRL_NULL), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "dim 3");
}

TEST(BmMisuse, TensorUsedAfterItsFree) {
  Bm bm;
  tensor_lmem* a = bm.load(shape_t4(1, 4, 2, 2), FMT_I8, std::vector<std::uint8_t>(16, 3));
  tensor_lmem* r = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 2, 2), FMT_I8, CTRL_AL);
  bmk1880_tl_free(bm.bk, r);
  bmk1880_relu_param_t p{r, a};
  EXPECT_EQ(bmk1880_tpu_relu(bm.bk, &p), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "ofmap was freed with bmk1880_tl_free");
}

TEST(BmMisuse, NullParameterStruct) {
  Bm bm;
  EXPECT_EQ(bmk1880_tpu_conv(bm.bk, nullptr), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "parameter struct is NULL");
}

TEST(BmMisuse, ShiftWidthOutOfRange) {
  Bm bm;
  tensor_lmem* a = bm.load(shape_t4(1, 4, 2, 2), FMT_I8, std::vector<std::uint8_t>(16, 3));
  tensor_lmem* r = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 2, 2), FMT_I8, CTRL_AL);
  bmk1880_mul_const_param_t p{nullptr, r, a, 3, true, 40};
  EXPECT_EQ(bmk1880_tpu_mul_const(bm.bk, &p), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "rshift_width is 40");
}

TEST(BmMisuse, PoolingWithAZeroKernel) {
  Bm bm;
  tensor_lmem* in = bm.load(shape_t4(1, 4, 4, 4), FMT_I8, std::vector<std::uint8_t>(64, 3));
  tensor_lmem* out = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 2, 2), FMT_I8, CTRL_AL);
  bmk1880_max_pooling_param_t p{};
  p.ofmap = out;
  p.ifmap = in;
  p.kh = 0;
  p.kw = 2;
  p.stride_h = 2;
  p.stride_w = 2;
  EXPECT_EQ(bmk1880_tpu_max_pooling(bm.bk, &p), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "must be at least 1");
}

TEST(BmMisuse, StreamsOutOfRange) {
  Bm bm;
  bmk1880_create_streams(bm.bk, 0);
  EXPECT_EQ(tessera_bm_last_error_kind(), TESSERA_BM_USER_ERROR) << tessera_bm_last_error();
  tessera_bm_clear_error();
  bmk1880_create_streams(bm.bk, -5);
  EXPECT_EQ(tessera_bm_last_error_kind(), TESSERA_BM_USER_ERROR) << tessera_bm_last_error();
  tessera_bm_clear_error();
  // As many streams as an int holds cost nothing until commands use them.
  bmk1880_create_streams(bm.bk, 2147483647);
  EXPECT_EQ(tessera_bm_last_error_kind(), TESSERA_BM_OK) << tessera_bm_last_error();
  bmk1880_set_stream(bm.bk, 2147483646);
  EXPECT_EQ(tessera_bm_last_error_kind(), TESSERA_BM_OK) << tessera_bm_last_error();
  bmk1880_destroy_streams(bm.bk);
  bmk1880_create_streams(bm.bk, 2);
  bmk1880_set_stream(bm.bk, 2);
  expect_error(TESSERA_BM_USER_ERROR, "stream 2 does not exist");
  bmk1880_destroy_streams(bm.bk);
}

// Strides of 2^30 bytes reach 3 GiB past a 64-byte allocation: the copy faults when it runs.
TEST(BmMisuse, GdmaLoadWithStridesPastDeviceMemory) {
  Bm bm;
  bmmem_device_t m = bm.devmem(64);
  tensor_lmem* t = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 4, 4), FMT_I8, CTRL_AL);
  ASSERT_NE(bmk1880_gdma_load_stride(bm.bk, t, bmmem_device_addr(bm.ctx, m),
                                     stride_t4(0x40000000, 0x40000000, 0x1000000, 1), CTRL_NULL),
            nullptr)
      << tessera_bm_last_error();
  tessera_bm_clear_error();
  bmruntime_bmkernel_submit(bm.ctx);
  expect_error(TESSERA_BM_DEVICE_FAULT, "past the end of the device memory");
}

TEST(BmMisuse, SendCmdbufWithoutABuffer) {
  Bm bm;
  EXPECT_NE(bm_send_cmdbuf(bm.ctx, nullptr, 64, nullptr), BM_SUCCESS);
  EXPECT_EQ(tessera_bm_last_error_kind(), TESSERA_BM_USER_ERROR) << tessera_bm_last_error();
}

TEST(BmMisuse, RegisterWithoutInfo) {
  tessera_bm_clear_error();
  EXPECT_EQ(bmk1880_register(nullptr), nullptr);
  EXPECT_EQ(tessera_bm_last_error_kind(), TESSERA_BM_USER_ERROR) << tessera_bm_last_error();
}

TEST(BmMisuse, CallsOnACleanedUpContext) {
  bmk1880_info_t info{};
  std::vector<std::uint8_t> buf(1 << 16);
  info.chip_version = 1880;
  info.cmdbuf = buf.data();
  info.cmdbuf_size = static_cast<u32>(buf.size());
  void* bk = bmk1880_register(&info);
  ASSERT_NE(bk, nullptr) << tessera_bm_last_error();
  bmk1880_cleanup(bk);
  EXPECT_EQ(bmk1880_tl_alloc(bk, shape_t4(1, 1, 1, 1), FMT_I8, CTRL_NULL), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "not live");
}

}  // namespace
