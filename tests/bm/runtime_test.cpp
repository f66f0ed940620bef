// The BM runtime and the headers from C++: declared types, device memory, copies timed over the
// host link, errors as bmerr_t codes, chip info and peak from the preset.
#include <algorithm>
#include <cmath>
#include <thread>
#include <type_traits>

#include "bm_util.h"
#include "tessera/arch/machine_spec.h"
#include "tessera/sim/cost_model.h"
#include "tessera/targets/bm/api/bm.h"

#include "api_list.h"

namespace {

using namespace bmtest;

#define CHECK_TYPE(name, ret, params)                                                       \
  static_assert(std::is_same_v<decltype(&name), ret(*) params>, #name " has the declared " \
                                                                      "type");
TESSERA_BM_API(CHECK_TYPE)

TEST(BmHeaders, EveryFunctionHasAnAddressFromCxx) {
#define COUNT(name, ret, params) +1
  constexpr int count = 0 TESSERA_BM_API(COUNT);
#define ADDRESS(name, ret, params) reinterpret_cast<void (*)()>(&name),
  void (*addresses[])() = {TESSERA_BM_API(ADDRESS)};
  static_assert(sizeof addresses / sizeof addresses[0] == count);
  for (auto* a : addresses) EXPECT_NE(a, nullptr);
  EXPECT_GE(count, 80);
}

TEST(BmRuntime, MemcpyRoundTripTakesHostLinkTime) {
  bmctx_t ctx = nullptr;
  ASSERT_EQ(bm_init(0, &ctx), BM_SUCCESS);
  tessera::runtime::Device& dev = tessera::bm::device_of(ctx);
  std::vector<std::uint8_t> in(4096), out(4096, 0);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint8_t>(i * 7 + 1);
  bmmem_device_t m = bmmem_device_alloc_raw(ctx, in.size());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(bmmem_device_size(ctx, m), in.size());
  EXPECT_GE(bmmem_device_addr(ctx, m), dev.spec().memory("ddr").base_address.value);
  const std::uint64_t before = dev.now_cycles();
  ASSERT_EQ(bm_memcpy_s2d(ctx, m, in.data()), BM_SUCCESS);
  const std::uint64_t one_way = dev.now_cycles() - before;
  EXPECT_EQ(one_way, dev.cost_model().host_link_cycles(in.size()));
  ASSERT_EQ(bm_memcpy_d2s(ctx, out.data(), m), BM_SUCCESS);
  EXPECT_EQ(out, in);
  EXPECT_EQ(dev.now_cycles() - before, 2 * one_way);

  // A preallocated piece sees the bytes at its offset.
  bmmem_device_t part = bmmem_device_prealloc_raw(ctx, m, 100, 16);
  ASSERT_NE(part, nullptr);
  EXPECT_EQ(bmmem_device_addr(ctx, part), bmmem_device_addr(ctx, m) + 100);
  std::vector<std::uint8_t> piece(16);
  ASSERT_EQ(bm_memcpy_d2s(ctx, piece.data(), part), BM_SUCCESS);
  EXPECT_EQ(piece, std::vector<std::uint8_t>(in.begin() + 100, in.begin() + 116));
  bmshape_t shape = BM_TENSOR_INT8(1, 2, 3, 4);
  bmmem_device_t shaped = bmmem_device_alloc(ctx, &shape);
  EXPECT_EQ(bmmem_device_size(ctx, shaped), 24u);
  bmmem_device_free(ctx, shaped);
  bmmem_device_free(ctx, m);  // takes `part` with it
  bm_exit(ctx);
}

// The partial copies and device queries of Bitmain's public bmruntime.h.
TEST(BmRuntime, PartialCopiesAndDeviceQueriesOfThePublicHeader) {
  bmctx_t ctx = nullptr;
  ASSERT_EQ(bm_init(0, &ctx), BM_SUCCESS);
  tessera::runtime::Device& dev = tessera::bm::device_of(ctx);
  EXPECT_EQ(bm_device_get_chip_ver(bm_get_device(ctx)), 1880);
  EXPECT_EQ(bm_device_get_gmem_size(bm_get_device(ctx)),
            dev.global_bytes_in_use() + dev.global_bytes_free());
  std::vector<std::uint8_t> in(256), out(256, 0);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint8_t>(i * 3 + 5);
  bmmem_device_t m = bmmem_device_alloc_raw(ctx, in.size());
  ASSERT_EQ(bm_memcpy_s2d(ctx, m, in.data()), BM_SUCCESS);
  // Write 16 bytes at 40, read 32 from 32: the piece and its neighbours.
  std::vector<std::uint8_t> patch(16, 0xEE);
  const std::uint64_t before = dev.now_cycles();
  ASSERT_EQ(bm_memcpy_s2d_ex(ctx, m, patch.data(), 40, patch.size()), BM_SUCCESS);
  EXPECT_EQ(dev.now_cycles() - before, dev.cost_model().host_link_cycles(patch.size()));
  ASSERT_EQ(bm_memcpy_d2s_ex(ctx, out.data(), m, 32, 32), BM_SUCCESS);
  for (std::size_t i = 0; i < 32; ++i)
    EXPECT_EQ(out[i], i >= 8 && i < 24 ? 0xEE : in[32 + i]) << i;
  EXPECT_EQ(bm_memcpy_d2s_ex(ctx, out.data(), m, 250, 8), BM_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tessera_bm_last_error()).find("[250, 258)"), std::string::npos)
      << tessera_bm_last_error();
  tessera_bm_clear_error();
  bmmem_device_free(ctx, m);
  bm_exit(ctx);
}

TEST(BmRuntime, ErrorsComeBackAsCodesWithMessages) {
  bmctx_t ctx = nullptr;
  ASSERT_EQ(bm_init(0, &ctx), BM_SUCCESS);
  tessera_bm_clear_error();
  EXPECT_EQ(bm_device_query(bm_get_device(ctx), 0, nullptr), BM_ERR_NOT_SUPPORTED);
  EXPECT_EQ(bm_device_config(bm_get_device(ctx), 0, nullptr), BM_ERR_NOT_SUPPORTED);
  EXPECT_EQ(bmmem_host_alloc(ctx, nullptr), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "not supported");

  EXPECT_EQ(bm_memcpy_s2d(ctx, nullptr, nullptr), BM_ERR_INVALID_ARGUMENT);
  expect_error(TESSERA_BM_USER_ERROR, "not a live allocation");
  EXPECT_EQ(bmmem_device_alloc_raw(ctx, 0), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "at least 1 byte");
  // More than the 1 GiB of DDR: the device faults, nothing is thrown into C.
  EXPECT_EQ(bmmem_device_alloc_raw(ctx, std::size_t{2} << 30), nullptr);
  expect_error(TESSERA_BM_DEVICE_FAULT, "ddr");
  bmmem_device_t m = bmmem_device_alloc_raw(ctx, 64);
  EXPECT_EQ(bmmem_device_prealloc_raw(ctx, m, 60, 8), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "does not fall in");
  bmmem_device_free(ctx, m);
  bmmem_device_free(ctx, m);
  expect_error(TESSERA_BM_USER_ERROR, "not a live allocation");
  EXPECT_EQ(bm_init(0, nullptr), BM_ERR_INVALID_ARGUMENT);
  bmdev_t dev = nullptr;
  EXPECT_EQ(bm_device_open(3, &dev), BM_ERR_INVALID_ARGUMENT);
  expect_error(TESSERA_BM_USER_ERROR, "index 3");
  bm_exit(ctx);
}

TEST(BmRuntime, ContextsBindToOpenedDevices) {
  int count = 0;
  bm_devinfo_t info[BM_DEVICE_MAX_NUM];
  bm_enum_devices(&count, info);
  ASSERT_EQ(count, 1);
  bmdev_t dev = nullptr;
  ASSERT_EQ(bm_device_open(0, &dev), BM_SUCCESS);
  bmctx_t ctx = nullptr;
  ASSERT_EQ(bm_context_create(&ctx), BM_SUCCESS);
  EXPECT_EQ(bmmem_device_alloc_raw(ctx, 16), nullptr);  // not bound yet
  expect_error(TESSERA_BM_USER_ERROR, "bm_bind_device");
  ASSERT_EQ(bm_bind_device(ctx, dev), BM_SUCCESS);
  EXPECT_EQ(bm_get_device(ctx), dev);
  bmmem_device_t m = bmmem_device_alloc_raw(ctx, 16);
  EXPECT_NE(m, nullptr);
  bmmem_device_free(ctx, m);
  EXPECT_EQ(bm_device_get_info(dev).npu_num, info[0].npu_num);
  bm_unbind_device(ctx);
  EXPECT_EQ(bm_get_device(ctx), nullptr);
  bm_context_destroy(ctx);
  bm_device_close(dev);
}

TEST(BmRuntime, ChipInfoAndPeakComeFromThePreset) {
  const tessera::arch::MachineSpec spec = tessera::arch::load_machine("bm1880");
  const bmk1880_chip_info_t info = bmk1880_chip_info();
  EXPECT_EQ(info.version, 1880u);
  EXPECT_EQ(info.npu_num, static_cast<u32>(spec.core_count.value));
  EXPECT_EQ(info.eu_num, static_cast<u32>(spec.param("bm.eu_num").value));
  EXPECT_EQ(info.lmem_size, static_cast<u32>(spec.memory("lmem").capacity_bytes.value));
  EXPECT_EQ(info.lmem_banks, static_cast<u32>(spec.memory("lmem").banks.value));
  EXPECT_EQ(info.lmem_bank_size * info.lmem_banks, info.lmem_size);
  // Sophon publishes 1 TOPS int8 for the BM1880: NPU lanes x MACs per lane per cycle x 2 ops x
  // clock must give it.
  const double peak = info.npu_num * spec.param("bm.int8_macs_per_cycle_per_npu").value * 2 *
                      spec.clock_hz.value;
  EXPECT_NEAR(peak / 1e12, 1.0, 0.05);
}

}  // namespace

namespace {

// spec 002 "bmruntime_bmkernel_create": contexts created in different threads are independent.
// Four threads each run their own BM context and BMKernel at once; every result is checked, and
// an error in one thread is that thread's last error only.
TEST(BmRuntime, ContextsInSeparateThreadsAreIndependent) {
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, -1), other_error(4, -1);
  for (int id = 0; id < 4; ++id)
    threads.emplace_back([id, &wrong, &other_error] {
      Bm bm;
      int bad = 0;
      for (int it = 0; it < 20; ++it) {
        std::vector<std::uint8_t> x(32 * 64);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = b8(static_cast<int>(i) * (id + 3) + it);
        tensor_lmem* a = bm.load(shape_t4(1, 32, 8, 8), FMT_I8, x);
        tensor_lmem* r = bmk1880_tl_alloc(bm.bk, shape_t4(1, 32, 8, 8), FMT_I8, CTRL_AL);
        bmk1880_mul_const_param_t p{nullptr, r, a, static_cast<s8>(id - 2), true, 1};
        if (!bmk1880_tpu_mul_const(bm.bk, &p)) ++bad;
        const auto out = bm.store(r, x.size());
        bmk1880_tl_free(bm.bk, r);
        bmk1880_tl_free(bm.bk, a);
        bm.submit();
        const auto y = bm.read(out);
        for (std::size_t i = 0; i < x.size(); ++i) {
          const long v = (static_cast<std::int8_t>(x[i]) * (id - 2) + 1) >> 1;
          bad += static_cast<std::int8_t>(y[i]) != std::clamp(v, -128L, 127L);
        }
        if (id == 0) bmk1880_tpu_relu(bm.bk, nullptr);  // an error in thread 0 only
        if (id == 0) bmk1880_reset(bm.bk);
      }
      wrong[static_cast<std::size_t>(id)] = bad;
      other_error[static_cast<std::size_t>(id)] = tessera_bm_last_error_kind();
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
  EXPECT_EQ(other_error[0], TESSERA_BM_USER_ERROR);
  for (int id = 1; id < 4; ++id)
    EXPECT_EQ(other_error[static_cast<std::size_t>(id)], TESSERA_BM_OK);
}

}  // namespace

namespace {

// Released handles are refused by name, never read: a second bm_exit, a context used after it,
// a device used after bm_device_close, a network cleaned up twice.
TEST(BmRuntime, ReleasedHandlesAreUserErrors) {
  bmctx_t ctx = nullptr;
  ASSERT_EQ(bm_init(0, &ctx), BM_SUCCESS);
  tessera_bm_clear_error();
  bm_exit(ctx);
  expect_error(TESSERA_BM_OK, "");
  bm_exit(ctx);
  expect_error(TESSERA_BM_USER_ERROR, "bm_exit: the BM context is not live");
  EXPECT_EQ(bmmem_device_alloc_raw(ctx, 16), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "bmmem_device_alloc_raw: the BM context is not live");
  bmkernel_handle_t* bk = nullptr;
  EXPECT_EQ(bmruntime_bmkernel_create(ctx, &bk), BM_ERR_INVALID_ARGUMENT);

  bmdev_t dev = nullptr;
  ASSERT_EQ(bm_device_open(0, &dev), BM_SUCCESS);
  ASSERT_EQ(bm_context_create(&ctx), BM_SUCCESS);
  ASSERT_EQ(bm_bind_device(ctx, dev), BM_SUCCESS);
  bm_device_close(dev);
  EXPECT_EQ(bmmem_device_alloc_raw(ctx, 16), nullptr);
  expect_error(TESSERA_BM_USER_ERROR, "was closed with bm_device_close");
  bm_device_close(dev);
  expect_error(TESSERA_BM_USER_ERROR, "bm_device_close: the BM device is not live");
  EXPECT_EQ(bm_device_get_chip_ver(dev), 0);
  expect_error(TESSERA_BM_USER_ERROR, "bm_device_close or bm_exit released it");
  bm_context_destroy(ctx);
  bm_context_destroy(ctx);
  expect_error(TESSERA_BM_USER_ERROR, "bm_context_destroy: the BM context is not live");

  // A network: cleaned up twice; one outliving its context is released without touching it.
  std::vector<u8> buf(4096);
  bmk1880_info_t info{1880, buf.data(), static_cast<u32>(buf.size())};
  void* k = bmk1880_register(&info);
  tensor_lmem* t = bmk1880_tl_alloc(k, shape_t4(1, 32, 1, 16), FMT_I8, CTRL_AL);
  bmk1880_gdma_load(k, t, 0, CTRL_NEURON);
  bmk1880_gdma_store(k, t, 512, CTRL_NEURON);
  u32 size = 0;
  u8* cmdbuf = bmk1880_acquire_cmdbuf(k, &size);
  ASSERT_NE(cmdbuf, nullptr) << tessera_bm_last_error();
  bmnet_info_t ni{1, nullptr, 0, cmdbuf, size, 1024, 512, 512, 512};
  ASSERT_EQ(bm_init(0, &ctx), BM_SUCCESS);
  bmnet_t net = nullptr;
  ASSERT_EQ(bmnet_register(ctx, &ni, &net), BM_SUCCESS) << tessera_bm_last_error();
  tessera_bm_clear_error();
  bmnet_cleanup(net);
  expect_error(TESSERA_BM_OK, "");
  bmnet_cleanup(net);
  expect_error(TESSERA_BM_USER_ERROR, "bmnet_cleanup: the BMNet handle is not live");
  EXPECT_EQ(bmnet_run(net), BM_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(bmnet_register(ctx, &ni, &net), BM_SUCCESS) << tessera_bm_last_error();
  bm_exit(ctx);
  EXPECT_EQ(bmnet_run(net), BM_ERR_INVALID_ARGUMENT);
  expect_error(TESSERA_BM_USER_ERROR, "bmnet_run: the BM context is not live");
  tessera_bm_clear_error();
  bmnet_cleanup(net);
  expect_error(TESSERA_BM_OK, "");
  bmk1880_tl_free(k, t);
  bmk1880_cleanup(k);
}

}  // namespace
