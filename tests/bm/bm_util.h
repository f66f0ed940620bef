// Helpers for the bm tests: a BM context with a BMKernel, and host data moved into and out of
// lmem tensors through device memory and the GDMA, as an SDK program does it.
#pragma once

#include <bmkernel/bm1880/bmkernel_1880.h>
#include <libbmruntime/bmruntime.h>
#include <libbmruntime/bmruntime_bmkernel.h>
#include <libbmruntime/bmruntime_bmnet.h>

#include <cstdint>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace bmtest {

struct Bm {
  bmctx_t ctx = nullptr;
  void* bk = nullptr;
  std::vector<bmmem_device_t> mems;

  Bm() {
    tessera_bm_clear_error();
    EXPECT_EQ(bm_init(0, &ctx), BM_SUCCESS) << tessera_bm_last_error();
    EXPECT_EQ(bmruntime_bmkernel_create(ctx, &bk), BM_SUCCESS) << tessera_bm_last_error();
  }
  ~Bm() {
    for (bmmem_device_t m : mems) bmmem_device_free(ctx, m);
    bmruntime_bmkernel_destroy(ctx);
    bm_exit(ctx);
  }
  Bm(const Bm&) = delete;
  Bm& operator=(const Bm&) = delete;

  bmmem_device_t devmem(std::size_t bytes) {
    bmmem_device_t m = bmmem_device_alloc_raw(ctx, bytes);
    EXPECT_NE(m, nullptr) << tessera_bm_last_error();
    mems.push_back(m);
    return m;
  }

  // Allocates t in lmem and records a GDMA load of `data` (dense N, C, H, W or row-major).
  tensor_lmem* load(shape_t s, fmt_t fmt, const std::vector<std::uint8_t>& data,
                    u32 ctrls = CTRL_AL) {
    tensor_lmem* t = bmk1880_tl_alloc(bk, s, fmt, ctrls);
    EXPECT_NE(t, nullptr) << tessera_bm_last_error();
    put(t, data);
    return t;
  }
  void* put(tensor_lmem* t, const std::vector<std::uint8_t>& data) {
    bmmem_device_t m = devmem(data.size());
    EXPECT_EQ(bm_memcpy_s2d(ctx, m, const_cast<std::uint8_t*>(data.data())), BM_SUCCESS);
    void* op = bmk1880_gdma_load(bk, t, bmmem_device_addr(ctx, m), CTRL_NULL);
    EXPECT_NE(op, nullptr) << tessera_bm_last_error();
    return op;
  }
  // Records a GDMA store of t into fresh device memory; read() after submit returns it.
  struct Pending {
    bmmem_device_t mem;
    std::size_t bytes;
  };
  Pending store(tensor_lmem* t, std::size_t count) {
    bmmem_device_t m = devmem(count);
    EXPECT_NE(bmk1880_gdma_store(bk, t, bmmem_device_addr(ctx, m), CTRL_NULL), nullptr)
        << tessera_bm_last_error();
    return {m, count};
  }
  std::vector<std::uint8_t> read(const Pending& p) {
    std::vector<std::uint8_t> out(p.bytes);
    EXPECT_EQ(bm_memcpy_d2s(ctx, out.data(), p.mem), BM_SUCCESS) << tessera_bm_last_error();
    return out;
  }
  void submit() {
    tessera_bm_clear_error();
    bmruntime_bmkernel_submit(ctx);
    EXPECT_EQ(tessera_bm_last_error_kind(), TESSERA_BM_OK) << tessera_bm_last_error();
  }
};

inline std::uint8_t b8(int v) { return static_cast<std::uint8_t>(v & 0xff); }

// The last error must be of `kind`, mention `text`, and name each API function at most once
// (the C boundary adds the function's name only when the check's message lacks it).
inline void expect_error(tessera_bm_error_kind_t kind, const std::string& text) {
  const std::string message = tessera_bm_last_error();
  EXPECT_EQ(tessera_bm_last_error_kind(), kind) << message;
  EXPECT_NE(message.find(text), std::string::npos)
      << "message: " << message << "\nexpected to contain: " << text;
  static const std::regex name_tag("(^| )(bm[a-z0-9_]*):");
  std::map<std::string, int> seen;
  for (auto it = std::sregex_iterator(message.begin(), message.end(), name_tag);
       it != std::sregex_iterator(); ++it)
    EXPECT_EQ(++seen[(*it)[2].str()], 1) << "message names " << (*it)[2] << " twice: " << message;
}

}  // namespace bmtest
