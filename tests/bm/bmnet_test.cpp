// BMNet runtime: a tiny network (a 1x1 conv with bias and ReLU) recorded through BMKernel with
// neuron- and weight-relative GDMA addresses, saved as a bmodel with two input shapes,
// registered and run; also registered from a bmnet_info_t, with and without allocation.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "bm_util.h"
#include "tessera/core/error.h"
#include "tessera/targets/bm/api/bmodel.h"

namespace {

using namespace bmtest;

constexpr int CI = 8, CO = 16, HW = 36;
constexpr std::uint64_t kBiasOffset = CO * CI;

std::vector<std::uint8_t> weights() {
  std::vector<std::uint8_t> w(kBiasOffset + 2 * CO);
  for (int co = 0; co < CO; ++co)
    for (int ci = 0; ci < CI; ++ci) w[co * CI + ci] = b8((co * 3 + ci * 5) % 11 - 5);  // (1, CO, 1, CI)
  for (int co = 0; co < CO; ++co) {
    const int bias = co * 25 - 200;
    w[kBiasOffset + co] = b8(bias);
    w[kBiasOffset + CO + co] = b8(bias >> 8);
  }
  return w;
}

std::vector<std::uint8_t> reference(int n, const std::vector<std::uint8_t>& x) {
  const auto w = weights();
  std::vector<std::uint8_t> out(static_cast<std::size_t>(n * CO * HW));
  for (int b = 0; b < n; ++b)
    for (int co = 0; co < CO; ++co)
      for (int p = 0; p < HW; ++p) {
        long acc = co * 25 - 200;
        for (int ci = 0; ci < CI; ++ci)
          acc += static_cast<std::int8_t>(x[(b * CI + ci) * HW + p]) *
                 static_cast<std::int8_t>(w[co * CI + ci]);
        acc = std::max(acc, 0L);
        acc = static_cast<long>(std::floor(acc / 8.0 + 0.5));
        out[(b * CO + co) * HW + p] = static_cast<std::uint8_t>(std::min(acc, 127L));
      }
  return out;
}

// Compiles the network for batch n: input at neuron offset 0, output after it on a 256-byte
// boundary, weights and bias in the weight memory.
tessera::bm::BModelStage compile(int n) {
  std::vector<u8> buf(1 << 16);
  bmk1880_info_t info{1880, buf.data(), static_cast<u32>(buf.size())};
  void* bk = bmk1880_register(&info);
  EXPECT_NE(bk, nullptr) << tessera_bm_last_error();
  const std::uint64_t in_bytes = static_cast<std::uint64_t>(n * CI * HW);
  const std::uint64_t out_offset = (in_bytes + 255) / 256 * 256;
  tensor_lmem* in = bmk1880_tl_alloc(bk, shape_t4(n, CI, 6, 6), FMT_I8, CTRL_AL);
  tensor_lmem* w = bmk1880_tl_alloc(bk, shape_t4(1, CO, 1, CI), FMT_I8, CTRL_NULL);
  tensor_lmem* b = bmk1880_tl_alloc(bk, shape_t4(2, CO, 1, 1), FMT_I8, CTRL_NULL);
  tensor_lmem* out = bmk1880_tl_alloc(bk, shape_t4(n, CO, 6, 6), FMT_I8, CTRL_AL);
  bmk1880_gdma_load(bk, in, 0, CTRL_NEURON);
  bmk1880_gdma_load(bk, w, 0, CTRL_WEIGHT);
  bmk1880_gdma_load(bk, b, kBiasOffset, CTRL_WEIGHT);
  tensor_lmem wl = *w;
  wl.shape = shape_t4(CI, CO, 1, 1);
  bmk1880_conv_param_t p{out, in, &wl, b, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, true, 3};
  EXPECT_NE(bmk1880_tpu_conv(bk, &p), nullptr) << tessera_bm_last_error();
  bmk1880_gdma_store(bk, out, out_offset, CTRL_NEURON);
  u32 size = 0;
  u8* cmdbuf = bmk1880_acquire_cmdbuf(bk, &size);
  EXPECT_NE(cmdbuf, nullptr) << tessera_bm_last_error();
  tessera::bm::BModelStage s;
  s.input_shape = shape_t4(n, CI, 6, 6);
  s.output_shape = shape_t4(n, CO, 6, 6);
  s.input_size = in_bytes;
  s.output_offset = out_offset;
  s.output_size = static_cast<std::uint64_t>(n * CO * HW);
  s.neuron_size = out_offset + s.output_size;
  s.cmdbuf.assign(cmdbuf, cmdbuf + size);
  bmk1880_tl_free(bk, out);
  bmk1880_tl_free(bk, b);
  bmk1880_tl_free(bk, w);
  bmk1880_tl_free(bk, in);
  bmk1880_cleanup(bk);
  return s;
}

std::vector<std::uint8_t> input(int n) {
  std::vector<std::uint8_t> x(static_cast<std::size_t>(n * CI * HW));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = b8(static_cast<int>(i * 7 % 29) - 14);
  return x;
}

TEST(BmNet, BmodelWithTwoInputShapesRegistersAndRuns) {
  tessera::bm::BModel model;
  model.name = "tiny";
  model.output_threshold = 4.5f;
  model.weight = weights();
  model.stages.push_back(compile(1));
  model.stages.push_back(compile(2));
  const std::string path = testing::TempDir() + "tiny.bmodel";
  tessera::bm::save_bmodel(model, path);

  bmctx_t ctx = nullptr;
  ASSERT_EQ(bm_init(0, &ctx), BM_SUCCESS);
  bmnet_t net = nullptr;
  ASSERT_EQ(bmnet_register_bmodel(ctx, path.c_str(), &net), BM_SUCCESS) << tessera_bm_last_error();
  for (int n : {1, 2}) {
    ASSERT_EQ(bmnet_set_input_shape(net, shape_t4(n, CI, 6, 6)), BM_SUCCESS);
    bmnet_output_info_t info;
    ASSERT_EQ(bmnet_get_output_info(net, &info), BM_SUCCESS);
    EXPECT_EQ(info.output_num, 1u);
    EXPECT_EQ(info.output_size, static_cast<std::size_t>(n * CO * HW));
    EXPECT_EQ(info.shape_array[0].n, static_cast<u32>(n));
    EXPECT_EQ(info.shape_array[0].c, static_cast<u32>(CO));
    EXPECT_STREQ(info.name_array[0], "output");
    EXPECT_FLOAT_EQ(info.threshold_array[0], 4.5f);
    auto x = input(n);
    std::vector<std::uint8_t> y(info.output_size);
    ASSERT_EQ(bmnet_inference(net, x.data(), y.data()), BM_SUCCESS) << tessera_bm_last_error();
    EXPECT_EQ(y, reference(n, x));
  }
  EXPECT_EQ(bmnet_set_input_shape(net, shape_t4(3, CI, 6, 6)), BM_ERR_INVALID_ARGUMENT);
  expect_error(TESSERA_BM_USER_ERROR, "it supports (1, 8, 6, 6), (2, 8, 6, 6)");
  EXPECT_NE(bmnet_weight_devmem(net), nullptr);
  EXPECT_NE(bmnet_input_devmem(net), nullptr);
  EXPECT_EQ(bmmem_device_addr(ctx, bmnet_output_devmem(net)),
            bmmem_device_addr(ctx, bmnet_neuron_devmem(net)) + model.stages[1].output_offset);
  bmnet_cleanup(net);

  // A corrupted file is refused with the reason.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-5, std::ios::end);
    f.put('\x5a');
  }
  EXPECT_EQ(bmnet_register_bmodel(ctx, path.c_str(), &net), BM_ERR_INVALID_ARGUMENT);
  expect_error(TESSERA_BM_USER_ERROR, "checksum");
  std::remove(path.c_str());
  bm_exit(ctx);
}

// A bmodel whose JSON gives a size as a float past any integer, or a negative one, is refused by
// name: nlohmann would cast it with undefined behaviour. The checksum is made right (FNV-1a 64
// over JSON and blob, written here) so that only the number is wrong.
TEST(BmNet, BmodelIntegersOutOfRangeAreRefused) {
  tessera::bm::BModel model;
  model.name = "tiny";
  model.weight = weights();
  model.stages.push_back(compile(1));
  const std::vector<std::uint8_t> good = tessera::bm::encode_bmodel(model);
  constexpr std::size_t kHeader = 40;  // magic, version, reserved, JSON bytes, blob bytes, sum
  std::uint64_t json_bytes = 0;
  std::memcpy(&json_bytes, good.data() + 16, 8);
  const std::string json(good.begin() + kHeader, good.begin() + kHeader + json_bytes);
  for (const std::string bad : {"1e26", "-5", "2.5"}) {
    const std::size_t at = json.find("\"neuron_size\":");
    ASSERT_NE(at, std::string::npos);
    const std::size_t value = at + std::string("\"neuron_size\":").size();
    const std::size_t end = json.find_first_of(",}", value);
    const std::string patched = json.substr(0, value) + bad + json.substr(end);
    const std::size_t blob = good.size() - kHeader - json_bytes;
    std::vector<std::uint8_t> file(kHeader + patched.size() + blob);
    std::memcpy(file.data(), good.data(), kHeader);
    std::memcpy(file.data() + kHeader, patched.data(), patched.size());
    std::memcpy(file.data() + kHeader + patched.size(), good.data() + kHeader + json_bytes, blob);
    const std::uint64_t size = patched.size();
    std::memcpy(file.data() + 16, &size, 8);
    std::uint64_t sum = 14695981039346656037ull;
    for (std::size_t i = kHeader; i < file.size(); ++i) sum = (sum ^ file[i]) * 1099511628211ull;
    std::memcpy(file.data() + 32, &sum, 8);
    try {
      (void)tessera::bm::decode_bmodel(file, "patched");
      ADD_FAILURE() << "neuron_size " << bad << " was accepted";
    } catch (const tessera::UserError& e) {
      EXPECT_NE(std::string(e.what()).find("neuron_size is "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("not a whole number from 0"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_NO_THROW((void)tessera::bm::decode_bmodel(good, "good"));
}

TEST(BmNet, RegisterFromInfoAndWithImportedMemory) {
  const tessera::bm::BModelStage s = compile(1);
  std::vector<std::uint8_t> w = weights(), cmdbuf = s.cmdbuf;
  bmnet_info_t info{1, w.data(), w.size(), cmdbuf.data(), cmdbuf.size(), s.neuron_size,
                    s.input_size, s.output_offset, s.output_size};
  bmctx_t ctx = nullptr;
  ASSERT_EQ(bm_init(0, &ctx), BM_SUCCESS);
  auto x = input(1);
  const auto want = reference(1, x);
  bmnet_t net = nullptr;
  ASSERT_EQ(bmnet_register(ctx, &info, &net), BM_SUCCESS) << tessera_bm_last_error();
  std::vector<std::uint8_t> y(s.output_size);
  ASSERT_EQ(bmnet_load_input(net, x.data()), BM_SUCCESS);
  ASSERT_EQ(bmnet_run(net), BM_SUCCESS) << tessera_bm_last_error();
  ASSERT_EQ(bmnet_store_output(net, y.data()), BM_SUCCESS);
  EXPECT_EQ(y, want);
  std::vector<std::uint8_t> first(4);
  ASSERT_EQ(bmnet_store_neuron(net, s.output_offset, 4, first.data()), BM_SUCCESS);
  EXPECT_EQ(first, std::vector<std::uint8_t>(want.begin(), want.begin() + 4));
  EXPECT_EQ(bmnet_store_neuron(net, s.neuron_size - 2, 4, first.data()), BM_ERR_INVALID_ARGUMENT);
  bmnet_cleanup(net);

  // Without allocation: running needs imported memories; the application fills the weights.
  ASSERT_EQ(bmnet_register_noalloc(ctx, &info, &net), BM_SUCCESS);
  EXPECT_EQ(bmnet_run(net), BM_ERR_INVALID_ARGUMENT);
  expect_error(TESSERA_BM_USER_ERROR, "bmnet_import_weight_devmem");
  bmmem_device_t wm = bmmem_device_alloc_raw(ctx, w.size());
  bmmem_device_t nm = bmmem_device_alloc_raw(ctx, s.neuron_size);
  ASSERT_EQ(bm_memcpy_s2d(ctx, wm, w.data()), BM_SUCCESS);
  EXPECT_EQ(bmnet_import_neuron_devmem(net, wm), BM_ERR_INVALID_ARGUMENT);  // too small
  ASSERT_EQ(bmnet_import_weight_devmem(net, wm), BM_SUCCESS);
  ASSERT_EQ(bmnet_import_neuron_devmem(net, nm), BM_SUCCESS);
  std::fill(y.begin(), y.end(), 0);
  ASSERT_EQ(bmnet_load_neuron(net, 0, static_cast<int>(x.size()), x.data()), BM_SUCCESS);
  ASSERT_EQ(bmnet_run(net), BM_SUCCESS) << tessera_bm_last_error();
  ASSERT_EQ(bmnet_store_output(net, y.data()), BM_SUCCESS);
  EXPECT_EQ(y, want);
  bmnet_cleanup(net);
  bmmem_device_free(ctx, wm);
  bmmem_device_free(ctx, nm);
  bm_exit(ctx);
}

// Bitmain's public bmruntime_bmnet.h beyond spec 002: a bmodel held in memory, input shapes
// given as an array, a command buffer loaded after the memories are imported, and the
// register-run-cleanup wrapper.
TEST(BmNet, CallsOfThePublicHeaderBeyondTheSpec) {
  tessera::bm::BModel model;
  model.name = "tiny";
  model.weight = weights();
  model.stages.push_back(compile(1));
  model.stages.push_back(compile(2));
  std::vector<std::uint8_t> bytes = tessera::bm::encode_bmodel(model);
  bmctx_t ctx = nullptr;
  ASSERT_EQ(bm_init(0, &ctx), BM_SUCCESS);
  bmnet_t net = nullptr;
  ASSERT_EQ(bmnet_register_bmodel_data(ctx, bytes.data(), bytes.size(), &net), BM_SUCCESS)
      << tessera_bm_last_error();
  shape_t shapes[2] = {shape_t4(2, CI, 6, 6), shape_t4(1, CI, 6, 6)};
  EXPECT_EQ(bmnet_set_input_shape2(net, shapes, 2), BM_ERR_INVALID_ARGUMENT);
  expect_error(TESSERA_BM_USER_ERROR, "one input");
  ASSERT_EQ(bmnet_set_input_shape2(net, shapes, 1), BM_SUCCESS) << tessera_bm_last_error();
  auto x = input(2);
  std::vector<std::uint8_t> y(static_cast<std::size_t>(2 * CO * HW));
  ASSERT_EQ(bmnet_inference(net, x.data(), y.data()), BM_SUCCESS) << tessera_bm_last_error();
  EXPECT_EQ(y, reference(2, x));
  bmnet_cleanup(net);
  // A path as a string literal, as Bitmain's sample passes it (a const char * parameter).
  EXPECT_EQ(bmnet_register_bmodel(ctx, "no_such_dir/no.bmodel", &net), BM_ERR_INVALID_ARGUMENT);
  expect_error(TESSERA_BM_USER_ERROR, "no_such_dir/no.bmodel");
  bytes[bytes.size() - 3] ^= 0x40;
  EXPECT_EQ(bmnet_register_bmodel_data(ctx, bytes.data(), bytes.size(), &net),
            BM_ERR_INVALID_ARGUMENT);
  expect_error(TESSERA_BM_USER_ERROR, "checksum");

  // register_noalloc, import both memories, then load the command buffer (Bitmain's order).
  const tessera::bm::BModelStage s = compile(1);
  std::vector<std::uint8_t> w = weights(), cmdbuf = s.cmdbuf;
  bmnet_info_t info{1,
                    w.data(),
                    w.size(),
                    cmdbuf.data(),
                    cmdbuf.size(),
                    s.neuron_size,
                    s.input_size,
                    s.output_offset,
                    s.output_size};
  ASSERT_EQ(bmnet_register_noalloc(ctx, &info, &net), BM_SUCCESS);
  bmmem_device_t wm = bmmem_device_alloc_raw(ctx, w.size());
  bmmem_device_t nm = bmmem_device_alloc_raw(ctx, s.neuron_size);
  ASSERT_EQ(bm_memcpy_s2d(ctx, wm, w.data()), BM_SUCCESS);
  ASSERT_EQ(bmnet_import_weight_devmem(net, wm), BM_SUCCESS);
  ASSERT_EQ(bmnet_import_neuron_devmem(net, nm), BM_SUCCESS);
  EXPECT_EQ(bmnet_load_cmdbuf(net, cmdbuf.data(), 0), BM_ERR_INVALID_ARGUMENT);
  expect_error(TESSERA_BM_USER_ERROR, "cmdbuf_size is 0");
  // A command buffer for another network (here: its first command only) replaces the loaded one.
  const auto* first = reinterpret_cast<const cmd_hdr_t*>(cmdbuf.data());
  ASSERT_EQ(bmnet_load_cmdbuf(net, cmdbuf.data(), static_cast<int>(sizeof(cmd_hdr_t) + first->len)),
            BM_SUCCESS);
  x = input(1);
  y.assign(s.output_size, 0);
  ASSERT_EQ(bmnet_inference(net, x.data(), y.data()), BM_SUCCESS) << tessera_bm_last_error();
  EXPECT_NE(y, reference(1, x));  // only the input load ran
  ASSERT_EQ(bmnet_load_cmdbuf(net, cmdbuf.data(), static_cast<int>(cmdbuf.size())), BM_SUCCESS);
  ASSERT_EQ(bmnet_inference(net, x.data(), y.data()), BM_SUCCESS) << tessera_bm_last_error();
  EXPECT_EQ(y, reference(1, x));
  bmnet_cleanup(net);
  bmmem_device_free(ctx, nm);
  bmmem_device_free(ctx, wm);

  std::fill(y.begin(), y.end(), 0);
  ASSERT_EQ(bmnet_inference_once(ctx, x.data(), y.data(), 1, w.data(), w.size(), cmdbuf.data(),
                                 cmdbuf.size(), s.neuron_size, s.input_size, s.output_offset,
                                 s.output_size),
            BM_SUCCESS)
      << tessera_bm_last_error();
  EXPECT_EQ(y, reference(1, x));
  EXPECT_EQ(bmnet_inference_once(ctx, x.data(), y.data(), 1, w.data(), w.size(), nullptr, 0,
                                 s.neuron_size, s.input_size, s.output_offset, s.output_size),
            BM_ERR_INVALID_ARGUMENT);
  expect_error(TESSERA_BM_USER_ERROR, "no cmdbuf");
  bm_exit(ctx);
}

}  // namespace
