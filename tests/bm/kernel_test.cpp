// BMKernel contexts on the engine: the lmem stack, command buffers, parallel mode and streams
// ordering TPU and GDMA work, the rules the BM1880 faults on, and the profile of a submit.
#include <algorithm>
#include <cstring>
#include <string>

#include "bm_util.h"
#include "tessera/targets/bm/api/bm.h"

namespace {

using namespace bmtest;

// The size helpers of Bitmain's public bmkernel_1880.h, written as its users call them.
TEST(BmKernel, ShapeAndSizeHelpersOfThePublicHeader) {
  Bm bm;
  const bmk1880_chip_info_t info = bmk1880_chip_info();
  int n = 0, c = 0, h = 0, w = 0;
  // A 3 x 40 matrix is stored as (3, ceil(40 / eu_num), 1, eu_num).
  bmk1880_tl_shape_to_nchw(bm.bk, shape_t2(3, 40), &n, &c, &h, &w);
  EXPECT_EQ(n, 3);
  EXPECT_EQ(c, static_cast<int>((40 + info.eu_num - 1) / info.eu_num));
  EXPECT_EQ(h, 1);
  EXPECT_EQ(w, static_cast<int>(info.eu_num));
  bmk1880_tl_shape_to_nchw(bm.bk, shape_t4(2, 5, 6, 7), &n, &c, &h, &w);
  EXPECT_EQ(n * 1000 + c * 100 + h * 10 + w, 2567);
  tensor_lmem* a = bmk1880_tl_alloc(bm.bk, shape_t4(2, 40, 3, 3), FMT_I8, CTRL_AL);
  ASSERT_NE(a, nullptr) << tessera_bm_last_error();
  EXPECT_EQ(bmk1880_tl_size(bm.bk, a), bmk1880_tl_shape_to_size(bm.bk, a->shape, true, FMT_I8));
  stride_t wide = stride_t4(100, 50, 6, 1);
  a->stride = &wide;
  EXPECT_EQ(bmk1880_tl_size(bm.bk, a), 200);  // its own strides: n stride x n
  a->stride = nullptr;
  bmk1880_tl_free(bm.bk, a);
  EXPECT_EQ(bmk1880_tg_shape_to_size(shape_t4(2, 3, 4, 5), FMT_I8), 120u);
  EXPECT_EQ(bmk1880_tg_shape_to_size(shape_t2(7, 9), FMT_I16), 126u);
  EXPECT_EQ(tessera_bm_last_error_kind(), TESSERA_BM_OK) << tessera_bm_last_error();
  EXPECT_EQ(bmk1880_tg_shape_to_size(shape_t4(1, 1, 1, 1), FMT_I4), 0u);
  EXPECT_EQ(tessera_bm_last_error_kind(), TESSERA_BM_USER_ERROR);
  EXPECT_NE(std::string(tessera_bm_last_error()).find("fmt 5"), std::string::npos);
  tessera_bm_clear_error();
}

// C++ in the style of Bitmain's public header: typed context and command handles, a relu of
// GDMA-loaded int8 data ordered by explicit dependencies in parallel mode.
TEST(BmKernel, TypedHandlesOfThePublicHeaderInCpp) {
  Bm bm;
  bmk1880_context_t* bk_ctx = static_cast<bmk1880_context_t*>(bm.bk);
  const shape_t s = shape_t4(1, 40, 2, 3);
  std::vector<std::uint8_t> in(bmk1880_tg_shape_to_size(s, FMT_I8));
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint8_t>(i * 37);
  tensor_lmem* tl_in = bmk1880_tl_alloc(bk_ctx, s, FMT_I8, CTRL_AL);
  tensor_lmem* tl_out = bmk1880_tl_alloc(bk_ctx, s, FMT_I8, CTRL_AL);
  bmmem_device_t gin = bm.devmem(in.size());
  ASSERT_EQ(bm_memcpy_s2d(bm.ctx, gin, in.data()), BM_SUCCESS);
  bmk1880_parallel_enable(bk_ctx);
  bmk1880_op_t* load = bmk1880_gdma_load(bk_ctx, tl_in, bmmem_device_addr(bm.ctx, gin), CTRL_NULL);
  bmk1880_relu_param_t p = {tl_out, tl_in};
  bmk1880_op_t* relu = bmk1880_tpu_relu(bk_ctx, &p);
  ASSERT_TRUE(load && relu) << tessera_bm_last_error();
  bmk1880_add_dependency(bk_ctx, load, relu);
  bmk1880_parallel_disable(bk_ctx);
  const Bm::Pending stored = bm.store(tl_out, in.size());
  bmk1880_tl_free(bk_ctx, tl_out);
  bmk1880_tl_free(bk_ctx, tl_in);
  bm.submit();
  const std::vector<std::uint8_t> out = bm.read(stored);
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i)
    EXPECT_EQ(static_cast<std::int8_t>(out[i]),
              std::max<std::int8_t>(static_cast<std::int8_t>(in[i]), 0))
        << i;
  EXPECT_EQ(tessera_bm_last_error_kind(), TESSERA_BM_OK) << tessera_bm_last_error();
}

TEST(BmKernel, TlAllocIsAStackOnEuBoundaries) {
  Bm bm;
  const bmk1880_chip_info_t info = bmk1880_chip_info();
  tensor_lmem* a = bmk1880_tl_alloc(bm.bk, shape_t4(1, 40, 3, 3), FMT_I8, CTRL_NULL);
  tensor_lmem* b = bmk1880_tl_alloc(bm.bk, shape_t4(2, 40, 3, 3), FMT_I8, CTRL_AL);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(tl_address(a), 0u);
  // a takes ceil(40 / 32) * 9 = 18 bytes per lane; b starts on the next EU boundary.
  EXPECT_EQ(bmk1880_tl_shape_to_size(bm.bk, a->shape, false, FMT_I8), 18);
  EXPECT_EQ(tl_address(b), 32u);
  EXPECT_EQ(bmk1880_tl_shape_to_size(bm.bk, b->shape, true, FMT_I8), 2 * 2 * 16);
  EXPECT_FALSE(a->aligned);
  EXPECT_TRUE(b->aligned);
  // Banks: bank 2 starts at 2 * lmem_bank_size.
  tensor_lmem* c = bmk1880_tl_alloc_bank(bm.bk, 2, shape_t4(1, 32, 4, 4), FMT_I8, CTRL_AL);
  ASSERT_NE(c, nullptr) << tessera_bm_last_error();
  EXPECT_EQ(tl_address(c), 2 * info.lmem_bank_size);
  EXPECT_EQ(c->bank_id, 2u);
  // Freed last-in first-out, the stack comes back down.
  bmk1880_tl_free(bm.bk, c);
  bmk1880_tl_free(bm.bk, b);
  tensor_lmem* d = bmk1880_tl_alloc(bm.bk, shape_t4(1, 1, 1, 1), FMT_U8, CTRL_AL);
  EXPECT_EQ(tl_address(d), 32u);
  bmk1880_tl_free(bm.bk, d);
  bmk1880_tl_free(bm.bk, a);
  EXPECT_EQ(tessera_bm_last_error_kind(), TESSERA_BM_OK) << tessera_bm_last_error();
}

TEST(BmFaults, FreeingOutOfOrderIsADeviceFault) {
  Bm bm;
  tensor_lmem* a = bmk1880_tl_alloc(bm.bk, shape_t4(1, 8, 2, 2), FMT_I8, CTRL_AL);
  tensor_lmem* b = bmk1880_tl_alloc(bm.bk, shape_t4(1, 8, 2, 2), FMT_I8, CTRL_AL);
  bmk1880_tl_free(bm.bk, a);
  expect_error(TESSERA_BM_DEVICE_FAULT, "must be freed first");
  expect_error(TESSERA_BM_DEVICE_FAULT, "la 0x10");
  bmk1880_tl_free(bm.bk, b);
  bmk1880_tl_free(bm.bk, a);
}

TEST(BmFaults, LmemOverflowNamesTheBankAndLimit) {
  Bm bm;
  // 64 KiB per lane: (1, 32, 256, 257) needs 65,792 bytes on each.
  EXPECT_EQ(bmk1880_tl_alloc(bm.bk, shape_t4(1, 32, 256, 257), FMT_I8, CTRL_NULL), nullptr);
  expect_error(TESSERA_BM_DEVICE_FAULT, "lmem overflow");
  expect_error(TESSERA_BM_DEVICE_FAULT, "65,792 B");
  EXPECT_EQ(bmk1880_tl_alloc_bank(bm.bk, 7, shape_t4(1, 32, 100, 100), FMT_I8, CTRL_NULL), nullptr);
  expect_error(TESSERA_BM_DEVICE_FAULT, "bank 7");
  EXPECT_EQ(bmk1880_tl_prealloc(bm.bk, 65000, shape_t4(1, 1, 1, 600), FMT_I8), nullptr);
  expect_error(TESSERA_BM_DEVICE_FAULT, "past the 65,536 B (64 KiB)");
}

TEST(BmFaults, MisalignedAndWronglyStridedOperands) {
  Bm bm;
  EXPECT_EQ(bmk1880_tl_prealloc_align(bm.bk, 3, shape_t4(1, 4, 2, 2), FMT_I8), nullptr);
  expect_error(TESSERA_BM_DEVICE_FAULT, "not a multiple of eu_num 16");
  // A conv ifmap must be aligned.
  tensor_lmem* in = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 4, 4), FMT_I8, CTRL_NULL);
  tensor_lmem* w = bmk1880_tl_alloc(bm.bk, shape_t4(4, 4, 1, 1), FMT_I8, CTRL_NULL);
  tensor_lmem* out = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 4, 4), FMT_I8, CTRL_AL);
  bmk1880_conv_param_t p{out, in, w, nullptr, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, false, 0};
  EXPECT_EQ(bmk1880_tpu_conv(bm.bk, &p), nullptr);
  expect_error(TESSERA_BM_DEVICE_FAULT, "ifmap");
  expect_error(TESSERA_BM_DEVICE_FAULT, "must be aligned");
}

TEST(BmFaults, ConvReadingAnUnwrittenIfmapRowNamesItsFirstElement) {
  Bm bm;
  // Only row h = 0 of each channel is loaded (through a view at the same address), so the conv's
  // row-wise read must fault at element (0, 0, 1, 0).
  tensor_lmem* in = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 4, 4), FMT_I8, CTRL_AL);
  tensor_lmem* top =
      bmk1880_tl_prealloc_align(bm.bk, in->operand.laddr, shape_t4(1, 4, 1, 4), FMT_I8);
  ASSERT_NE(top, nullptr) << tessera_bm_last_error();
  bm.put(top, std::vector<std::uint8_t>(16, 1));
  tensor_lmem* w =
      bm.load(shape_t4(4, 4, 1, 1), FMT_I8, std::vector<std::uint8_t>(16, 1), CTRL_NULL);
  tensor_lmem* out = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 4, 4), FMT_I8, CTRL_AL);
  bmk1880_conv_param_t p{out, in, w, nullptr, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, false, 0};
  ASSERT_NE(bmk1880_tpu_conv(bm.bk, &p), nullptr) << tessera_bm_last_error();
  tessera_bm_clear_error();
  bmruntime_bmkernel_submit(bm.ctx);
  expect_error(TESSERA_BM_DEVICE_FAULT, "element (0, 0, 1, 0)");
  expect_error(TESSERA_BM_DEVICE_FAULT, "no GDMA load or computation wrote");
}

TEST(BmFaults, ShapesThatDoNotMatch) {
  Bm bm;
  tensor_lmem* a = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 2, 2), FMT_I8, CTRL_AL);
  tensor_lmem* b = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 2, 3), FMT_I8, CTRL_AL);
  tensor_lmem* r = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 2, 2), FMT_I8, CTRL_AL);
  bmk1880_max_param_t p{r, a, b};
  EXPECT_EQ(bmk1880_tpu_max(bm.bk, &p), nullptr);
  expect_error(TESSERA_BM_DEVICE_FAULT, "shapes do not match");
  // And a result format against the signedness rule is a user error.
  tensor_lmem* u = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 2, 2), FMT_U8, CTRL_AL);
  bmk1880_mul_param_t m{nullptr, u, a, r, 0};
  EXPECT_EQ(bmk1880_tpu_mul(bm.bk, &m), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "make it FMT_I8");
}

TEST(BmFaults, BiasMustBeSixteenBitUnalignedAndWinogradThreeByThree) {
  Bm bm;
  tensor_lmem* in = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 6, 6), FMT_I8, CTRL_AL);
  tensor_lmem* out = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 4, 4), FMT_I8, CTRL_AL);
  tensor_lmem* w = bmk1880_tl_alloc(bm.bk, shape_t4(4, 4, 3, 3), FMT_I8, CTRL_NULL);
  tensor_lmem* bias = bmk1880_tl_alloc(bm.bk, shape_t4(2, 4, 1, 1), FMT_I8, CTRL_AL);
  bmk1880_conv_param_t p{out, in, w, bias, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, false, 0};
  EXPECT_EQ(bmk1880_tpu_conv(bm.bk, &p), nullptr);
  expect_error(TESSERA_BM_DEVICE_FAULT, "16-bit unaligned");
  tensor_lmem* w5 = bmk1880_tl_alloc(bm.bk, shape_t4(4, 4, 5, 5), FMT_I8, CTRL_NULL);
  tensor_lmem* out2 = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 2, 2), FMT_I8, CTRL_AL);
  bmk1880_winograd_param_t q{out2, in, w5, nullptr, 0, 0, 0, 0, 0, 0, 0, 0, false, 0};
  EXPECT_EQ(bmk1880_tpu_winograd(bm.bk, &q), nullptr);
  expect_error(TESSERA_BM_DEVICE_FAULT, "3x3 kernels only");
  // And its weight must be default strided.
  tensor_lmem w3 = *w;
  stride_t odd = stride_t4(1, 40, 12, 4);
  w3.stride = &odd;
  tensor_lmem* out3 = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 4, 4), FMT_I8, CTRL_AL);
  bmk1880_winograd_param_t q3{out3, in, &w3, nullptr, 0, 0, 0, 0, 0, 0, 0, 0, false, 0};
  EXPECT_EQ(bmk1880_tpu_winograd(bm.bk, &q3), nullptr);
  expect_error(TESSERA_BM_DEVICE_FAULT, "must have the default strides");
}

TEST(BmFaults, ReadingLmemNothingWroteFaultsAtSubmit) {
  Bm bm;
  tensor_lmem* a = bm.load(shape_t4(1, 34, 2, 2), FMT_I8, std::vector<std::uint8_t>(34 * 4, 1));
  tensor_lmem* never = bmk1880_tl_alloc(bm.bk, shape_t4(1, 34, 2, 2), FMT_I8, CTRL_AL);
  tensor_lmem* r = bmk1880_tl_alloc(bm.bk, shape_t4(1, 34, 2, 2), FMT_I8, CTRL_AL);
  bmk1880_min_param_t p{r, a, never};
  ASSERT_NE(bmk1880_tpu_min(bm.bk, &p), nullptr);
  tessera_bm_clear_error();
  bmruntime_bmkernel_submit(bm.ctx);
  expect_error(TESSERA_BM_DEVICE_FAULT, "no GDMA load or computation wrote");
  expect_error(TESSERA_BM_DEVICE_FAULT, "npu0");
  expect_error(TESSERA_BM_DEVICE_FAULT, "bank 0");
}

TEST(BmFaults, GdmaOutsideDeviceMemory) {
  Bm bm;
  bmmem_device_t m = bm.devmem(16);
  tensor_lmem* t = bmk1880_tl_alloc(bm.bk, shape_t4(1, 1, 4, 8), FMT_I8, CTRL_AL);
  ASSERT_NE(bmk1880_gdma_load(bm.bk, t, bmmem_device_addr(bm.ctx, m), CTRL_NULL), nullptr);
  tessera_bm_clear_error();
  bmruntime_bmkernel_submit(bm.ctx);
  expect_error(TESSERA_BM_DEVICE_FAULT, "past the end of the device memory");
}

TEST(BmFaults, DependencyCyclesAndOtherBuffersAreDeviceFaults) {
  Bm bm;
  std::vector<std::uint8_t> data(16, 2);
  tensor_lmem* a = bmk1880_tl_alloc(bm.bk, shape_t4(1, 1, 4, 4), FMT_I8, CTRL_AL);
  tensor_lmem* b = bmk1880_tl_alloc(bm.bk, shape_t4(1, 1, 4, 4), FMT_I8, CTRL_AL);
  bmk1880_create_streams(bm.bk, 2);
  bmk1880_set_stream(bm.bk, 0);
  void* load = bm.put(a, data);
  bmk1880_set_stream(bm.bk, 1);
  bmk1880_relu_param_t rp{b, a};
  void* relu = bmk1880_tpu_relu(bm.bk, &rp);
  bmk1880_add_dependency(bm.bk, load, relu);
  EXPECT_EQ(tessera_bm_last_error_kind(), TESSERA_BM_OK) << tessera_bm_last_error();
  bmk1880_add_dependency(bm.bk, relu, load);
  expect_error(TESSERA_BM_DEVICE_FAULT, "cycle");
  bmk1880_destroy_streams(bm.bk);
  bmk1880_reset(bm.bk);  // drop the poisoned buffer

  void* old = bm.put(a, data);
  bm.submit();
  bmk1880_relu_param_t rp2{b, a};
  void* now = bmk1880_tpu_relu(bm.bk, &rp2);
  tessera_bm_clear_error();
  bmk1880_add_dependency(bm.bk, old, now);
  expect_error(TESSERA_BM_DEVICE_FAULT, "earlier command buffer");
  // A buffer holding a failed command is not run.
  tessera_bm_clear_error();
  bmruntime_bmkernel_submit(bm.ctx);
  expect_error(TESSERA_BM_USER_ERROR, "failed when it was recorded");
}

TEST(BmKernel, ManySubmitsKeepOnlyRecentHandles) {
  Bm bm;
  tensor_lmem* a = bm.load(shape_t4(1, 1, 1, 16), FMT_I8, std::vector<std::uint8_t>(16, 1));
  tensor_lmem* c = bmk1880_tl_alloc(bm.bk, shape_t4(1, 1, 1, 16), FMT_I8, CTRL_AL);
  bm.submit();
  bmk1880_relu_param_t p{c, a};
  void* first = bmk1880_tpu_relu(bm.bk, &p);
  bm.submit();
  void* recent = nullptr;
  for (int i = 0; i < 5000; ++i) {
    recent = bmk1880_tpu_relu(bm.bk, &p);
    bmruntime_bmkernel_submit(bm.ctx);
  }
  void* now = bmk1880_tpu_relu(bm.bk, &p);
  tessera_bm_clear_error();
  bmk1880_add_dependency(bm.bk, first, now);  // long gone (its memory may hold a newer shell)
  EXPECT_NE(tessera_bm_last_error_kind(), TESSERA_BM_OK);
  EXPECT_EQ(std::string(tessera_bm_last_error()).find("#0 "), std::string::npos);
  bmk1880_add_dependency(bm.bk, recent, now);  // recent: recognised as an earlier buffer's
  expect_error(TESSERA_BM_DEVICE_FAULT, "earlier command buffer");
  bmk1880_reset(bm.bk);
}

// A conv over tiles, each tile's ifmap loaded by the GDMA, computed by the TPU and stored.
// Mode 0: serial; mode 2: two streams.
struct TiledRun {
  std::vector<std::uint8_t> out;
  std::vector<tessera::profile::Interval> trace;
  std::uint64_t cycles = 0;
  tessera::profile::KernelRecord record;
};

TiledRun run_tiles(int mode) {
  Bm bm;
  tessera::runtime::Device& dev = tessera::bm::device_of(bm.ctx);
  dev.set_trace_enabled(true);
  const int tiles = 4, C = 32, H = 16, W = 16;
  std::vector<std::uint8_t> x(static_cast<std::size_t>(tiles * C * H * W));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = b8(static_cast<int>(i * 13 % 17) - 8);
  bmmem_device_t gx = bm.devmem(x.size()), gy = bm.devmem(x.size());
  EXPECT_EQ(bm_memcpy_s2d(bm.ctx, gx, x.data()), BM_SUCCESS);
  std::vector<std::uint8_t> w(static_cast<std::size_t>(C * C * 9), 1);
  tensor_lmem* wt = bm.load(shape_t4(1, C, 9, C), FMT_I8, w, CTRL_NULL);
  wt->shape = shape_t4(C, C, 3, 3);
  tensor_lmem* in[2];
  tensor_lmem* out[2];
  for (int s = 0; s < 2; ++s) {
    in[s] = bmk1880_tl_alloc(bm.bk, shape_t4(1, C, H, W), FMT_I8, CTRL_AL);
    out[s] = bmk1880_tl_alloc(bm.bk, shape_t4(1, C, H, W), FMT_I8, CTRL_AL);
  }
  if (mode == 2) bmk1880_create_streams(bm.bk, 2);
  const std::uint64_t tile_bytes = static_cast<std::uint64_t>(C * H * W);
  for (int t = 0; t < tiles; ++t) {
    // Tile t uses buffer set t % 2; with streams, each set is a stream, so the load of the next
    // tile (other stream) may run while the TPU works on this one.
    const int s = t % 2;
    if (mode == 2) bmk1880_set_stream(bm.bk, s);
    EXPECT_NE(
        bmk1880_gdma_load(bm.bk, in[s], bmmem_device_addr(bm.ctx, gx) + t * tile_bytes, CTRL_NULL),
        nullptr);
    bmk1880_conv_param_t p{out[s], in[s], wt, nullptr, 0, 0, 0, 0,     1,
                           1,      1,     1,  1,       1, 1, 1, false, 5};
    EXPECT_NE(bmk1880_tpu_conv(bm.bk, &p), nullptr) << tessera_bm_last_error();
    EXPECT_NE(bmk1880_gdma_store(bm.bk, out[s], bmmem_device_addr(bm.ctx, gy) + t * tile_bytes,
                                 CTRL_NULL),
              nullptr);
  }
  if (mode == 2) bmk1880_destroy_streams(bm.bk);
  bm.submit();
  TiledRun r;
  r.out.resize(x.size());
  EXPECT_EQ(bm_memcpy_d2s(bm.ctx, r.out.data(), gy), BM_SUCCESS);
  r.trace = dev.profile().trace;
  r.record = dev.profile().kernels.back();
  r.cycles = r.record.cycles;
  return r;
}

bool gdma_overlaps_tpu(const std::vector<tessera::profile::Interval>& trace) {
  for (const auto& g : trace) {
    if (g.track.find("gdma") == std::string::npos) continue;
    for (const auto& t : trace)
      if (t.track.find("tpu") != std::string::npos && g.start_cycle < t.end_cycle &&
          t.start_cycle < g.end_cycle)
        return true;
  }
  return false;
}

TEST(BmStreams, StreamsOverlapGdmaWithTpuAndKeepResults) {
  const TiledRun serial = run_tiles(0), streams = run_tiles(2);
  EXPECT_EQ(serial.out, streams.out);
  EXPECT_FALSE(gdma_overlaps_tpu(serial.trace));
  EXPECT_TRUE(gdma_overlaps_tpu(streams.trace));
  // Each engine's utilisation is in the profile.
  EXPECT_GT(streams.record.metrics.at("tpu.utilisation"), 0.0);
  EXPECT_GT(streams.record.metrics.at("gdma.utilisation"), 0.0);
  EXPECT_GT(streams.record.metrics.at("macs"), 0.0);
  // The same program gives the same cycles every time.
  EXPECT_EQ(run_tiles(2).cycles, streams.cycles);
}

TEST(BmStreams, AcquiredCmdbufKeepsStreamsAndDependencies) {
  Bm bm;
  tessera::runtime::Device& dev = tessera::bm::device_of(bm.ctx);
  dev.set_trace_enabled(true);
  std::vector<std::uint8_t> d(32 * 64 * 16, 3);
  bmmem_device_t g = bm.devmem(d.size()), out = bm.devmem(d.size());
  ASSERT_EQ(bm_memcpy_s2d(bm.ctx, g, d.data()), BM_SUCCESS);
  tensor_lmem* a = bmk1880_tl_alloc(bm.bk, shape_t4(1, 32, 64, 16), FMT_I8, CTRL_AL);
  tensor_lmem* b = bmk1880_tl_alloc(bm.bk, shape_t4(1, 32, 64, 16), FMT_I8, CTRL_AL);
  tensor_lmem* c = bmk1880_tl_alloc(bm.bk, shape_t4(1, 32, 64, 16), FMT_I8, CTRL_AL);
  bmk1880_create_streams(bm.bk, 2);
  bmk1880_set_stream(bm.bk, 0);
  void* la = bmk1880_gdma_load(bm.bk, a, bmmem_device_addr(bm.ctx, g), CTRL_NULL);
  bmk1880_set_stream(bm.bk, 1);
  bmk1880_gdma_load(bm.bk, b, bmmem_device_addr(bm.ctx, g), CTRL_NULL);
  bmk1880_set_stream(bm.bk, 0);
  bmk1880_relu_param_t p{c, a};
  void* relu = bmk1880_tpu_relu(bm.bk, &p);
  void* st = bmk1880_gdma_store(bm.bk, c, bmmem_device_addr(bm.ctx, out), CTRL_NULL);
  bmk1880_add_dependency(bm.bk, la, st);
  bmk1880_destroy_streams(bm.bk);
  ASSERT_TRUE(la && relu && st);
  u32 size = 0;
  u8* buf = bmk1880_acquire_cmdbuf(bm.bk, &size);
  ASSERT_NE(buf, nullptr) << tessera_bm_last_error();
  std::vector<u8> copy(buf, buf + size);
  bmk1880_reset(bm.bk);
  ASSERT_EQ(bm_send_cmdbuf(bm.ctx, copy.data(), copy.size(), nullptr), BM_SUCCESS)
      << tessera_bm_last_error();
  // The load of b (stream 1) ran beside the relu (stream 0).
  EXPECT_TRUE(gdma_overlaps_tpu(dev.profile().trace));
  std::vector<std::uint8_t> r(d.size());
  ASSERT_EQ(bm_memcpy_d2s(bm.ctx, r.data(), out), BM_SUCCESS);
  EXPECT_EQ(r, d);
}

TEST(BmStreams, ParallelModeLetsEnginesRunUnsynchronised) {
  Bm bm;
  tessera::runtime::Device& dev = tessera::bm::device_of(bm.ctx);
  dev.set_trace_enabled(true);
  std::vector<std::uint8_t> d(32 * 64 * 16, 3);
  tensor_lmem* a = bm.load(shape_t4(1, 32, 64, 16), FMT_I8, d);
  tensor_lmem* b = bmk1880_tl_alloc(bm.bk, shape_t4(1, 32, 64, 16), FMT_I8, CTRL_AL);
  tensor_lmem* c = bmk1880_tl_alloc(bm.bk, shape_t4(1, 32, 64, 16), FMT_I8, CTRL_AL);
  bm.submit();
  bmk1880_parallel_enable(bm.bk);
  bm.put(b, d);  // GDMA: independent of the TPU work below
  bmk1880_relu_param_t p{c, a};
  ASSERT_NE(bmk1880_tpu_relu(bm.bk, &p), nullptr);
  bmk1880_parallel_disable(bm.bk);
  bm.submit();
  EXPECT_TRUE(gdma_overlaps_tpu(dev.profile().trace));
}

TEST(BmFaults, UnsynchronisedEnginesTouchingTheSameLmemRace) {
  Bm bm;
  std::vector<std::uint8_t> d(4 * 16, 1);
  tensor_lmem* a = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 4, 4), FMT_I8, CTRL_AL);
  tensor_lmem* c = bmk1880_tl_alloc(bm.bk, shape_t4(1, 4, 4, 4), FMT_I8, CTRL_AL);
  bmk1880_parallel_enable(bm.bk);
  bm.put(a, d);  // the GDMA writes a ...
  bmk1880_relu_param_t p{c, a};
  ASSERT_NE(bmk1880_tpu_relu(bm.bk, &p), nullptr);  // ... while the TPU may already read it
  bmk1880_parallel_disable(bm.bk);
  tessera_bm_clear_error();
  bmruntime_bmkernel_submit(bm.ctx);
  expect_error(TESSERA_BM_DEVICE_FAULT, "race");
  expect_error(TESSERA_BM_DEVICE_FAULT, "bmk1880_tpu_relu");
  expect_error(TESSERA_BM_DEVICE_FAULT, "bmk1880_add_dependency");
  // With the dependency stated, the same program runs.
  bmk1880_parallel_enable(bm.bk);
  void* load = bm.put(a, d);
  void* relu = bmk1880_tpu_relu(bm.bk, &p);
  bmk1880_add_dependency(bm.bk, load, relu);
  bmk1880_parallel_disable(bm.bk);
  bm.submit();
}

TEST(BmKernel, StandaloneContextRunsItsCmdbufThroughTheRuntime) {
  std::vector<u8> buf(4096);
  bmk1880_info_t info{1880, buf.data(), static_cast<u32>(buf.size())};
  void* bk = bmk1880_register(&info);
  ASSERT_NE(bk, nullptr) << tessera_bm_last_error();
  bmctx_t ctx = nullptr;
  ASSERT_EQ(bm_init(0, &ctx), BM_SUCCESS);
  std::vector<std::uint8_t> x(64), y(64);
  for (int i = 0; i < 64; ++i) x[i] = b8(i - 32);
  bmmem_device_t gx = bmmem_device_alloc_raw(ctx, 64), gy = bmmem_device_alloc_raw(ctx, 64);
  ASSERT_EQ(bm_memcpy_s2d(ctx, gx, x.data()), BM_SUCCESS);
  tensor_lmem* t = bmk1880_tl_alloc(bk, shape_t4(1, 4, 4, 4), FMT_I8, CTRL_AL);
  tensor_lmem* r = bmk1880_tl_alloc(bk, shape_t4(1, 4, 4, 4), FMT_I8, CTRL_AL);
  bmk1880_gdma_load(bk, t, bmmem_device_addr(ctx, gx), CTRL_NULL);
  bmk1880_relu_param_t p{r, t};
  bmk1880_tpu_relu(bk, &p);
  bmk1880_gdma_store(bk, r, bmmem_device_addr(ctx, gy), CTRL_NULL);
  u32 size = 0;
  u8* cmdbuf = bmk1880_acquire_cmdbuf(bk, &size);
  ASSERT_EQ(cmdbuf, buf.data());
  ASSERT_GT(size, 0u);
  cmd_hdr_t hdr;
  std::memcpy(&hdr, cmdbuf, sizeof hdr);
  EXPECT_EQ(hdr.magic, BM_CMB_HDR_MAGIC);
  EXPECT_EQ(hdr.engine_id, ENGINE_GDMA);
  ASSERT_EQ(bm_send_cmdbuf(ctx, cmdbuf, size, nullptr), BM_SUCCESS) << tessera_bm_last_error();
  ASSERT_EQ(bm_memcpy_d2s(ctx, y.data(), gy), BM_SUCCESS);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(static_cast<std::int8_t>(y[i]), std::max(i - 32, 0));
  // The buffer is self-contained: it runs again, and a corrupted one is refused.
  std::fill(y.begin(), y.end(), 0);
  ASSERT_EQ(bm_memcpy_s2d(ctx, gy, y.data()), BM_SUCCESS);
  ASSERT_EQ(bm_send_cmdbuf(ctx, cmdbuf, size, nullptr), BM_SUCCESS) << tessera_bm_last_error();
  ASSERT_EQ(bm_memcpy_d2s(ctx, y.data(), gy), BM_SUCCESS);
  EXPECT_EQ(static_cast<std::int8_t>(y[40]), 8);
  EXPECT_EQ(bm_send_cmdbuf(ctx, cmdbuf, size - 3, nullptr), BM_ERR_INVALID_ARGUMENT);
  cmdbuf[0] = 0;
  EXPECT_EQ(bm_send_cmdbuf(ctx, cmdbuf, size, nullptr), BM_ERR_INVALID_ARGUMENT);
  expect_error(TESSERA_BM_USER_ERROR, "not a command header");
  bmk1880_tl_free(bk, r);
  bmk1880_tl_free(bk, t);
  bmk1880_cleanup(bk);
  bmmem_device_free(ctx, gx);
  bmmem_device_free(ctx, gy);
  bm_exit(ctx);
}

}  // namespace

namespace {

using namespace bmtest;

// A command buffer with random bytes changed is refused or runs; it never crashes or hangs.
TEST(BmFuzz, CorruptedCommandBuffersAreRefusedCleanly) {
  Bm bm;
  bmmem_device_t g = bm.devmem(256);
  std::vector<std::uint8_t> d(256, 7);
  ASSERT_EQ(bm_memcpy_s2d(bm.ctx, g, d.data()), BM_SUCCESS);
  tensor_lmem* a = bmk1880_tl_alloc(bm.bk, shape_t4(1, 16, 4, 4), FMT_I8, CTRL_AL);
  tensor_lmem* c = bmk1880_tl_alloc(bm.bk, shape_t4(1, 16, 4, 4), FMT_I8, CTRL_AL);
  bmk1880_gdma_load(bm.bk, a, bmmem_device_addr(bm.ctx, g), CTRL_NULL);
  bmk1880_relu_param_t p{c, a};
  bmk1880_tpu_relu(bm.bk, &p);
  bmk1880_gdma_store(bm.bk, c, bmmem_device_addr(bm.ctx, g), CTRL_NULL);
  u32 size = 0;
  u8* buf = bmk1880_acquire_cmdbuf(bm.bk, &size);
  ASSERT_NE(buf, nullptr);
  const std::vector<u8> good(buf, buf + size);
  bmk1880_reset(bm.bk);
  std::uint32_t seed = 12345;
  int refused = 0;
  for (int round = 0; round < 1500; ++round) {
    std::vector<u8> bad = good;
    for (int m = 0; m < 3; ++m) {
      seed = seed * 1664525u + 1013904223u;
      bad[(seed >> 8) % bad.size()] = static_cast<u8>(seed >> 24);
    }
    const bmerr_t rc = bm_send_cmdbuf(bm.ctx, bad.data(), bad.size(), nullptr);
    refused += rc != BM_SUCCESS;
  }
  EXPECT_GT(refused, 0);
  EXPECT_EQ(bm_send_cmdbuf(bm.ctx, const_cast<u8*>(good.data()), good.size(), nullptr), BM_SUCCESS)
      << tessera_bm_last_error();
}

}  // namespace
