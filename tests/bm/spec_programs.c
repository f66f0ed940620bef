/* Programs a BMNNSDK user writes from spec 002, one per API section, in C11 with the SDK's
 * headers and the spec's `void *` handle style, each result checked against a host computation
 * written from the spec's definition (not from Tessera's code). Exits 1 and names the section
 * of every mismatch. Built both in tests/bm and, by tests/install, against an installed
 * Tessera through find_package(Tessera). */
#include <bmkernel/bm1880/bmkernel_1880.h>
#include <libbmruntime/bmruntime.h>
#include <libbmruntime/bmruntime_bmkernel.h>
#include <libbmruntime/bmruntime_bmnet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...)                                               \
  do {                                                                 \
    if (!(cond)) {                                                     \
      ++failures;                                                      \
      fprintf(stderr, "FAIL line %d (%s): ", __LINE__, section);       \
      fprintf(stderr, __VA_ARGS__);                                    \
      fprintf(stderr, " [last error: %s]\n", tessera_bm_last_error()); \
    }                                                                  \
  } while (0)

static const char* section = "";
static bmctx_t ctx;
static void* bk;

/* ---- host arithmetic, from spec 002 "Computation API" ---- */
static long sat(long v, int is_signed, int bits) {
  const long lo = is_signed ? -(1L << (bits - 1)) : 0;
  const long hi = is_signed ? (1L << (bits - 1)) - 1 : (1L << bits) - 1;
  return v < lo ? lo : v > hi ? hi : v;
}
/* Tessera's reading of "≫": the right shift rounds half up (Bitmain's TPU reference). */
static long shr(long v, int s) {
  return s > 0 ? (v + (1L << (s - 1))) >> s : v;
}
static unsigned lcg_state = 12345u;
static int rnd(int lo, int hi) {
  lcg_state = lcg_state * 1103515245u + 12345u;
  return lo + (int)((lcg_state >> 8) % (unsigned)(hi - lo + 1));
}
static void fill(int8_t* p, int n, int lo, int hi) {
  for (int i = 0; i < n; ++i) p[i] = (int8_t)rnd(lo, hi);
}

/* ---- moving host data through gmem into lmem and back ---- */
static bmmem_device_t put_gmem(const void* data, size_t bytes) {
  bmmem_device_t m = bmmem_device_alloc_raw(ctx, bytes);
  if (m && data) bm_memcpy_s2d(ctx, m, (uint8_t*)data);
  return m;
}
/* Loads host bytes (dense NCHW, or row-major for a matrix) into lmem tensor t. */
static void load(tensor_lmem* t, const void* data, size_t bytes, bmmem_device_t* keep) {
  *keep = put_gmem(data, bytes);
  bmk1880_gdma_load(bk, t, bmmem_device_addr(ctx, *keep), CTRL_NULL);
}
static bmmem_device_t store(tensor_lmem* t, size_t bytes) {
  bmmem_device_t m = bmmem_device_alloc_raw(ctx, bytes);
  bmk1880_gdma_store(bk, t, bmmem_device_addr(ctx, m), CTRL_NULL);
  return m;
}
/* Submits and copies the stored results back; 0 on failure. */
static int submit(void) {
  tessera_bm_clear_error();
  bmruntime_bmkernel_submit(ctx);
  return tessera_bm_last_error_kind() == TESSERA_BM_OK;
}
static void fetch(void* dst, bmmem_device_t m) {
  bm_memcpy_d2s(ctx, (uint8_t*)dst, m);
  bmmem_device_free(ctx, m);
}

enum { N = 2, C = 40, H = 3, W = 5, E = N * C * H * W };

/* ---- BM Runtime Library ---- */
static void runtime_sections(void) {
  section = "bm_enum_devices / bm_device_open / bm_device_get_info";
  int count = 0;
  bm_devinfo_t infos[BM_DEVICE_MAX_NUM];
  bm_enum_devices(&count, infos);
  CHECK(count >= 1, "count %d", count);
  bmdev_t dev = NULL;
  CHECK(bm_device_open(0, &dev) == BM_SUCCESS && dev, "open");
  bm_devinfo_t info = bm_device_get_info(dev);
  bmk1880_chip_info_t chip = bmk1880_chip_info();
  CHECK(info.npu_num == chip.npu_num && info.eu_num == chip.eu_num, "devinfo vs chip info");
  CHECK(chip.npu_num == 32 && chip.eu_num == 16 && chip.lmem_size == 64 * 1024 &&
            chip.lmem_banks == 8 && chip.lmem_bank_size == 8 * 1024,
        "chip info %u %u %u %u %u", chip.npu_num, chip.eu_num, chip.lmem_size, chip.lmem_banks,
        chip.lmem_bank_size);

  section = "bm_device_query / bm_device_config";
  CHECK(bm_device_query(dev, 0, NULL) == BM_ERR_NOT_SUPPORTED, "query");
  CHECK(bm_device_config(dev, 0, NULL) == BM_ERR_NOT_SUPPORTED, "config");

  section = "bm_context_create / bm_bind_device / bm_get_device";
  bmctx_t c2 = NULL;
  CHECK(bm_context_create(&c2) == BM_SUCCESS && c2, "create");
  CHECK(bm_bind_device(c2, dev) == BM_SUCCESS, "bind");
  CHECK(bm_get_device(c2) == dev, "get_device");
  bmmem_device_t m = bmmem_device_alloc_raw(c2, 100);
  CHECK(m && bmmem_device_size(c2, m) == 100, "alloc on a bound context");
  bmmem_device_free(c2, m);
  bm_unbind_device(c2);
  bm_context_destroy(c2);
  bm_device_close(dev);

  section = "bmmem_device_alloc / bmmem_device_prealloc (bmshape_t)";
  bmshape_t s = BM_TENSOR_INT8(2, 3, 4, 5);
  bmmem_device_t t = bmmem_device_alloc(ctx, &s);
  CHECK(t && bmmem_device_size(ctx, t) == 120, "int8 tensor size %zu",
        t ? bmmem_device_size(ctx, t) : 0);
  bmshape_t sub = BM_TENSOR_INT8(1, 3, 4, 5);
  bmmem_device_t half = bmmem_device_prealloc(ctx, t, 60, &sub);
  CHECK(half && bmmem_device_addr(ctx, half) == bmmem_device_addr(ctx, t) + 60 &&
            bmmem_device_size(ctx, half) == 60,
        "prealloc inside");
  bmshape_t big = BM_TENSOR_INT8(2, 3, 4, 5);
  tessera_bm_clear_error();
  CHECK(bmmem_device_prealloc(ctx, t, 60, &big) == NULL &&
            tessera_bm_last_error_kind() == TESSERA_BM_USER_ERROR,
        "prealloc reaching past the allocation is refused");
  bmshape_t f32 = BM_TENSOR_FP32(1, 2, 3, 4);
  bmmem_device_t tf = bmmem_device_alloc(ctx, &f32);
  CHECK(tf && bmmem_device_size(ctx, tf) == 96, "fp32 tensor size");
  bmshape_t m16 = BM_MATRIX_INT16(3, 7);
  bmmem_device_t tm = bmmem_device_alloc(ctx, &m16);
  CHECK(tm && bmmem_device_size(ctx, tm) == 42, "int16 matrix size");
  bmmem_device_free(ctx, tm);
  bmmem_device_free(ctx, tf);
  bmmem_device_free(ctx, half);

  section = "bmmem_device_prealloc_raw / bm_memcpy_s2d / bm_memcpy_d2s";
  uint8_t in[120], out[120];
  for (int i = 0; i < 120; ++i) in[i] = (uint8_t)(i * 7 + 3);
  CHECK(bm_memcpy_s2d(ctx, t, in) == BM_SUCCESS, "s2d");
  bmmem_device_t raw = bmmem_device_prealloc_raw(ctx, t, 100, 20);
  memset(out, 0, sizeof out);
  CHECK(raw && bm_memcpy_d2s(ctx, out, raw) == BM_SUCCESS && memcmp(out, in + 100, 20) == 0,
        "d2s of a preallocated view");
  bmmem_device_free(ctx, raw);
  bmmem_device_free(ctx, t);

  section = "bmmem_host_*";
  bmshape_t hs = BM_TENSOR_INT8(1, 1, 1, 8);
  tessera_bm_clear_error();
  CHECK(bmmem_host_alloc(ctx, &hs) == NULL, "host alloc is not supported");
}

/* ---- BMKernel system API ---- */
static void system_sections(void) {
  section = "bmk1880 register / acquire cmdbuf / cmd_hdr_t";
  static u8 buf[1 << 16];
  bmk1880_info_t info;
  info.chip_version = 1880;
  info.cmdbuf = buf;
  info.cmdbuf_size = sizeof buf;
  void* k = bmk1880_register(&info);
  CHECK(k != NULL, "register");
  tensor_lmem* a = bmk1880_tl_alloc(k, shape_t4(1, 32, 1, 16), FMT_I8, CTRL_AL);
  tensor_lmem* b = bmk1880_tl_alloc(k, shape_t4(1, 32, 1, 16), FMT_I8, CTRL_AL);
  bmmem_device_t g = bmmem_device_alloc_raw(ctx, 512);
  int8_t host[512], back[512];
  for (int i = 0; i < 512; ++i) host[i] = (int8_t)(i % 251 - 125);
  bm_memcpy_s2d(ctx, g, (uint8_t*)host);
  const u64 ga = bmmem_device_addr(ctx, g);
  void* l = bmk1880_gdma_load(k, a, ga, CTRL_NULL);
  bmk1880_relu_param_t rp = {b, a};
  void* r = bmk1880_tpu_relu(k, &rp);
  void* st = bmk1880_gdma_store(k, b, ga, CTRL_NULL);
  CHECK(l && r && st, "recording");
  u32 size = 0;
  u8* cmds = bmk1880_acquire_cmdbuf(k, &size);
  CHECK(cmds && size > 0, "acquire");
  /* The buffer is an array of cmd_hdr_t, each followed by len bytes of instruction. */
  int engines[2] = {0, 0}, n_cmds = 0;
  for (u32 off = 0; cmds && off + sizeof(cmd_hdr_t) <= size; ++n_cmds) {
    const cmd_hdr_t* h = (const cmd_hdr_t*)(cmds + off);
    if (h->engine_id == ENGINE_BD) ++engines[0];
    if (h->engine_id == ENGINE_GDMA) ++engines[1];
    off += (u32)sizeof(cmd_hdr_t) + h->len;
  }
  CHECK(n_cmds == 3 && engines[0] == 1 && engines[1] == 2,
        "walking cmd_hdr_t by len: %d commands, %d TPU, %d GDMA", n_cmds, engines[0], engines[1]);
  uint16_t seq = 0;
  CHECK(bm_send_cmdbuf(ctx, cmds, size, &seq) == BM_SUCCESS, "send");
  bm_memcpy_d2s(ctx, (uint8_t*)back, g);
  int wrong = 0;
  for (int i = 0; i < 512; ++i) wrong += back[i] != (host[i] < 0 ? 0 : host[i]);
  CHECK(wrong == 0, "relu through a sent cmdbuf: %d wrong", wrong);
  bmk1880_reset(k);
  CHECK(bmk1880_acquire_cmdbuf(k, &size) != NULL && size == 0, "reset empties the buffer: %u",
        size);
  bmk1880_tl_free(k, b);
  bmk1880_tl_free(k, a);
  bmk1880_cleanup(k);
  bmmem_device_free(ctx, g);

  section = "bmk1880 register (chip_version)";
  info.chip_version = 1682;
  tessera_bm_clear_error();
  CHECK(bmk1880_register(&info) == NULL && tessera_bm_last_error_kind() == TESSERA_BM_USER_ERROR,
        "a chip other than 1880 is refused");

  section = "bmk1880 tl alloc (NULL when lmem runs out)";
  tessera_bm_clear_error();
  tensor_lmem* huge = bmk1880_tl_alloc(bk, shape_t4(1, 32, 256, 257), FMT_I8, CTRL_NULL);
  CHECK(huge == NULL, "an allocation larger than a lane returns NULL");
  tessera_bm_clear_error();
  tensor_lmem* t0 = bmk1880_tl_alloc(bk, shape_t4(1, 32, 1, 3), FMT_I8, CTRL_NULL);
  tensor_lmem* t1 = bmk1880_tl_alloc(bk, shape_t4(1, 32, 1, 3), FMT_I8, CTRL_AL);
  CHECK(t0 && t1 && tl_address(t1) > tl_address(t0) && !t0->aligned && t1->aligned,
        "successive allocations increase, aligned as ctrls says");
  bmk1880_tl_free(bk, t1);
  bmk1880_tl_free(bk, t0);
  tensor_lmem* t2 = bmk1880_tl_alloc_bank(bk, 3, shape_t4(1, 32, 4, 4), FMT_I8, CTRL_AL);
  CHECK(t2 && tl_address(t2) / bmk1880_chip_info().lmem_bank_size == 3,
        "alloc_bank starts in the bank");
  bmk1880_tl_free(bk, t2);
  tensor_lmem* p = bmk1880_tl_prealloc(bk, 1024, shape_t4(1, 32, 2, 2), FMT_U8);
  tensor_lmem* pa = bmk1880_tl_prealloc_align(bk, 2048, shape_t4(1, 32, 2, 2), FMT_U8);
  CHECK(p && pa && tl_address(p) == 1024 && !p->aligned && pa->aligned && p->fmt == FMT_U8,
        "prealloc");
  bmk1880_tl_free(bk, pa);
  bmk1880_tl_free(bk, p);
}

/* ---- lmem tensors of the elementwise sections: (N, C, H, W), freed last-first ---- */
static tensor_lmem* stack[16];
static bmmem_device_t gkeep[16];
static int depth, gdepth;
static tensor_lmem* tl_shape(shape_t s, fmt_t fmt, u32 ctrls, const void* data, size_t bytes) {
  tensor_lmem* t = bmk1880_tl_alloc(bk, s, fmt, ctrls);
  if (!t) return NULL;
  stack[depth++] = t;
  if (data) load(t, data, bytes, &gkeep[gdepth++]);
  return t;
}
static tensor_lmem* tl(fmt_t fmt, const int8_t* data) {
  return tl_shape(shape_t4(N, C, H, W), fmt, CTRL_AL, data, E);
}
static void release(void) {
  while (depth > 0) bmk1880_tl_free(bk, stack[--depth]);
  while (gdepth > 0) bmmem_device_free(ctx, gkeep[--gdepth]);
}
/* Runs what was recorded, stores each listed tensor and fetches it. */
static int run_and_fetch(int count, tensor_lmem** ts, int8_t** outs) {
  bmmem_device_t ms[8];
  for (int i = 0; i < count; ++i) ms[i] = store(ts[i], E);
  const int ok = submit();
  for (int i = 0; i < count; ++i) fetch(outs[i], ms[i]);
  release();
  return ok;
}
/* Runs what was recorded and fetches the `bytes` of tensor t into out; 0 on failure. */
static int run_and_fetch_one(tensor_lmem* t, void* out, size_t bytes) {
  bmmem_device_t m = store(t, bytes);
  const int ok = submit();
  fetch(out, m);
  release();
  return ok;
}
static int count_wrong(const int8_t* got, const long* want, int n) {
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += got[i] != (int8_t)want[i];
  return wrong;
}

static void elementwise_sections(void) {
  static int8_t a[E], b[E], hi[E], lo[E], o1[E], o2[E];
  static long want[E], want_hi[E];

  section = "bmk1880 tpu mul (signed, 8-bit, rshift 3)";
  fill(a, E, -128, 127);
  fill(b, E, -128, 127);
  {
    bmk1880_mul_param_t p;
    memset(&p, 0, sizeof p);
    p.res_low = tl(FMT_I8, NULL);
    p.a = tl(FMT_I8, a);
    p.b = tl(FMT_I8, b);
    p.rshift_width = 3;
    CHECK(bmk1880_tpu_mul(bk, &p) != NULL, "record");
    tensor_lmem* r[1] = {p.res_low};
    int8_t* o[1] = {o1};
    CHECK(run_and_fetch(1, r, o), "run");
    for (int i = 0; i < E; ++i) want[i] = sat(shr((long)a[i] * b[i], 3), 1, 8);
    CHECK(count_wrong(o1, want, E) == 0, "%d wrong", count_wrong(o1, want, E));
  }

  section = "bmk1880 tpu mul (unsigned x unsigned, 16-bit result)";
  {
    bmk1880_mul_param_t p;
    memset(&p, 0, sizeof p);
    p.res_high = tl(FMT_U8, NULL);
    p.res_low = tl(FMT_U8, NULL);
    p.a = tl(FMT_U8, a);
    p.b = tl(FMT_U8, b);
    p.rshift_width = 0;
    CHECK(bmk1880_tpu_mul(bk, &p) != NULL, "record");
    tensor_lmem* r[2] = {p.res_high, p.res_low};
    int8_t* o[2] = {hi, lo};
    CHECK(run_and_fetch(2, r, o), "run");
    int wrong = 0;
    for (int i = 0; i < E; ++i) {
      const long v = (long)(uint8_t)a[i] * (uint8_t)b[i];
      wrong += ((uint8_t)hi[i] << 8 | (uint8_t)lo[i]) != v;
    }
    CHECK(wrong == 0, "%d wrong", wrong);
  }

  section = "bmk1880 tpu mul const (b_is_signed false: 200)";
  {
    bmk1880_mul_const_param_t p;
    memset(&p, 0, sizeof p);
    p.res_low = tl(FMT_I8, NULL);
    p.a = tl(FMT_I8, a);
    p.b = (s8)200;
    p.b_is_signed = false;
    p.rshift_width = 7;
    CHECK(bmk1880_tpu_mul_const(bk, &p) != NULL, "record");
    tensor_lmem* r[1] = {p.res_low};
    int8_t* o[1] = {o1};
    CHECK(run_and_fetch(1, r, o), "run");
    for (int i = 0; i < E; ++i) want[i] = sat(shr((long)a[i] * 200, 7), 1, 8);
    CHECK(count_wrong(o1, want, E) == 0, "%d wrong", count_wrong(o1, want, E));
  }

  section = "bmk1880 tpu mac (16-bit res in and out, lshift 2, rshift 1)";
  fill(hi, E, -8, 7);
  fill(lo, E, -128, 127);
  {
    bmk1880_mac_param_t p;
    memset(&p, 0, sizeof p);
    p.res_high = tl(FMT_I8, hi);
    p.res_low = tl(FMT_I8, lo);
    p.res_is_int8 = false;
    p.a = tl(FMT_I8, a);
    p.b = tl(FMT_I8, b);
    p.lshift_width = 2;
    p.rshift_width = 1;
    for (int i = 0; i < E; ++i) {
      const long res = (int16_t)((uint8_t)hi[i] << 8 | (uint8_t)lo[i]);
      want[i] = sat(shr((long)a[i] * b[i] + res * 4, 1), 1, 16);
    }
    CHECK(bmk1880_tpu_mac(bk, &p) != NULL, "record");
    tensor_lmem* r[2] = {p.res_high, p.res_low};
    int8_t* o[2] = {o2, o1};
    CHECK(run_and_fetch(2, r, o), "run");
    int wrong = 0;
    for (int i = 0; i < E; ++i) wrong += (int16_t)((uint8_t)o2[i] << 8 | (uint8_t)o1[i]) != want[i];
    CHECK(wrong == 0, "%d wrong", wrong);
  }

  section = "bmk1880 tpu mul (unsigned x signed: a signed result)";
  {
    bmk1880_mul_param_t p;
    memset(&p, 0, sizeof p);
    p.res_low = tl(FMT_I8, NULL);
    p.a = tl(FMT_U8, a);
    p.b = tl(FMT_I8, b);
    p.rshift_width = 5;
    CHECK(bmk1880_tpu_mul(bk, &p) != NULL, "record");
    tensor_lmem* r[1] = {p.res_low};
    int8_t* o[1] = {o1};
    CHECK(run_and_fetch(1, r, o), "run");
    for (int i = 0; i < E; ++i) want[i] = sat(shr((long)(uint8_t)a[i] * b[i], 5), 1, 8);
    CHECK(count_wrong(o1, want, E) == 0, "%d wrong", count_wrong(o1, want, E));
  }

  section = "bmk1880 tpu mac const (8-bit result into res_low)";
  {
    bmk1880_mac_const_param_t p;
    memset(&p, 0, sizeof p);
    p.res_high = tl(FMT_I8, hi);
    p.res_low = tl(FMT_I8, lo);
    p.res_is_int8 = true;
    p.a = tl(FMT_I8, a);
    p.b = -3;
    p.b_is_signed = true;
    p.lshift_width = 0;
    p.rshift_width = 2;
    for (int i = 0; i < E; ++i) {
      const long res = (int16_t)((uint8_t)hi[i] << 8 | (uint8_t)lo[i]);
      want[i] = sat(shr((long)a[i] * -3 + res, 2), 1, 8);
    }
    CHECK(bmk1880_tpu_mac_const(bk, &p) != NULL, "record");
    tensor_lmem* r[2] = {p.res_low, p.res_high};
    int8_t* o[2] = {o1, o2};
    CHECK(run_and_fetch(2, r, o), "run");
    CHECK(count_wrong(o1, want, E) == 0, "%d wrong", count_wrong(o1, want, E));
    CHECK(memcmp(o2, hi, E) == 0, "res_high changed by an 8-bit result");
  }

  section = "bmk1880 tpu add / add const / sub (16-bit operands)";
  {
    static int8_t bh[E], bl[E];
    fill(bh, E, -128, 127);
    fill(bl, E, -128, 127);
    bmk1880_add_param_t p;
    memset(&p, 0, sizeof p);
    p.res_low = tl(FMT_I8, NULL);
    p.a_high = tl(FMT_I8, hi);
    p.a_low = tl(FMT_I8, lo);
    p.b_high = tl(FMT_I8, bh);
    p.b_low = tl(FMT_I8, bl);
    CHECK(bmk1880_tpu_add(bk, &p) != NULL, "record add");
    bmk1880_sub_param_t s;
    memset(&s, 0, sizeof s);
    s.res_high = tl(FMT_I8, NULL);
    s.res_low = tl(FMT_I8, NULL);
    s.a_high = p.a_high;
    s.a_low = p.a_low;
    s.b_high = p.b_high;
    s.b_low = p.b_low;
    CHECK(bmk1880_tpu_sub(bk, &s) != NULL, "record sub");
    tensor_lmem* r[3] = {p.res_low, s.res_high, s.res_low};
    static int8_t sh[E];
    int8_t* o[3] = {o1, sh, o2};
    CHECK(run_and_fetch(3, r, o), "run");
    int wa = 0, ws = 0;
    for (int i = 0; i < E; ++i) {
      const long av = (int16_t)((uint8_t)hi[i] << 8 | (uint8_t)lo[i]);
      const long bv = (int16_t)((uint8_t)bh[i] << 8 | (uint8_t)bl[i]);
      wa += o1[i] != (int8_t)sat(av + bv, 1, 8);
      ws += (int16_t)((uint8_t)sh[i] << 8 | (uint8_t)o2[i]) != sat(av - bv, 1, 16);
    }
    CHECK(wa == 0 && ws == 0, "add %d wrong, sub %d wrong", wa, ws);

    bmk1880_add_const_param_t c;
    memset(&c, 0, sizeof c);
    c.res_high = tl(FMT_U8, NULL);
    c.res_low = tl(FMT_U8, NULL);
    c.a_high = tl(FMT_U8, hi);
    c.a_low = tl(FMT_U8, lo);
    c.b = (s16)40000;
    c.b_is_signed = false;
    CHECK(bmk1880_tpu_add_const(bk, &c) != NULL, "record add const");
    tensor_lmem* r2[2] = {c.res_high, c.res_low};
    int8_t* o3[2] = {o2, o1};
    CHECK(run_and_fetch(2, r2, o3), "run add const");
    int wc = 0;
    for (int i = 0; i < E; ++i) {
      const long av = (uint16_t)((uint8_t)hi[i] << 8 | (uint8_t)lo[i]);
      wc += (uint16_t)((uint8_t)o2[i] << 8 | (uint8_t)o1[i]) != sat(av + 40000, 0, 16);
    }
    CHECK(wc == 0, "unsigned add const saturating at 65535: %d wrong", wc);
  }

  section = "bmk1880 tpu max / min / min const / relu";
  {
    bmk1880_max_param_t mx = {tl(FMT_I8, NULL), tl(FMT_I8, a), tl(FMT_I8, b)};
    bmk1880_min_param_t mn = {tl(FMT_I8, NULL), mx.a, mx.b};
    bmk1880_min_const_param_t mc = {tl(FMT_I8, NULL), mx.a, -5, true};
    bmk1880_relu_param_t rl = {tl(FMT_I8, NULL), mx.a};
    CHECK(bmk1880_tpu_max(bk, &mx) && bmk1880_tpu_min(bk, &mn) && bmk1880_tpu_min_const(bk, &mc) &&
              bmk1880_tpu_relu(bk, &rl),
          "record");
    static int8_t o3[E], o4[E];
    tensor_lmem* r[4] = {mx.max, mn.min, mc.min, rl.ofmap};
    int8_t* o[4] = {o1, o2, o3, o4};
    CHECK(run_and_fetch(4, r, o), "run");
    int wrong = 0;
    for (int i = 0; i < E; ++i) {
      wrong += o1[i] != (a[i] > b[i] ? a[i] : b[i]);
      wrong += o2[i] != (a[i] < b[i] ? a[i] : b[i]);
      wrong += o3[i] != (a[i] < -5 ? a[i] : -5);
      wrong += o4[i] != (a[i] > 0 ? a[i] : 0);
    }
    CHECK(wrong == 0, "%d wrong", wrong);
  }

  section = "bmk1880 tpu arith shift";
  {
    static int8_t bits[E];
    fill(bits, E, -16, 16);
    bmk1880_arith_shift_param_t p = {tl(FMT_I8, NULL), tl(FMT_I8, NULL), tl(FMT_I8, hi),
                                     tl(FMT_I8, lo), tl(FMT_I8, bits)};
    CHECK(bmk1880_tpu_arith_shift(bk, &p) != NULL, "record");
    tensor_lmem* r[2] = {p.res_high, p.res_low};
    int8_t* o[2] = {o2, o1};
    CHECK(run_and_fetch(2, r, o), "run");
    int wrong = 0;
    for (int i = 0; i < E; ++i) {
      const long av = (int16_t)((uint8_t)hi[i] << 8 | (uint8_t)lo[i]);
      const long v = bits[i] >= 0 ? av >> bits[i] : av * (1L << -bits[i]);
      wrong += (int16_t)((uint8_t)o2[i] << 8 | (uint8_t)o1[i]) != sat(v, 1, 16);
    }
    CHECK(wrong == 0, "%d wrong", wrong);
  }

  section = "bmk1880 tpu and/or/xor int8 and int16";
  {
    bmk1880_and_int8_param_t an = {tl(FMT_I8, NULL), tl(FMT_I8, a), tl(FMT_I8, b)};
    bmk1880_or_int8_param_t orp = {tl(FMT_I8, NULL), an.a, an.b};
    bmk1880_xor_int16_param_t x16 = {
        tl(FMT_I8, NULL), tl(FMT_I8, NULL), tl(FMT_I8, hi), tl(FMT_I8, lo), an.a, an.b};
    CHECK(bmk1880_tpu_and_int8(bk, &an) && bmk1880_tpu_or_int8(bk, &orp) &&
              bmk1880_tpu_xor_int16(bk, &x16),
          "record");
    static int8_t o3[E], o4[E];
    tensor_lmem* r[4] = {an.res, orp.res, x16.res_high, x16.res_low};
    int8_t* o[4] = {o1, o2, o3, o4};
    CHECK(run_and_fetch(4, r, o), "run");
    int wrong = 0;
    for (int i = 0; i < E; ++i)
      wrong += o1[i] != (a[i] & b[i]) || o2[i] != (a[i] | b[i]) || o3[i] != (hi[i] ^ a[i]) ||
               o4[i] != (lo[i] ^ b[i]);
    CHECK(wrong == 0, "%d wrong", wrong);
  }

  section = "bmk1880 tpu copy / copy with stride / mdsum";
  {
    bmk1880_copy_param_t cp = {tl(FMT_I8, NULL), tl(FMT_I8, a)};
    CHECK(bmk1880_tpu_copy(bk, &cp) != NULL, "record copy");
    /* Copy into an unaligned tensor through explicit strides: w 1, h W, c H*W, n its C/32
     * slices. */
    tensor_lmem* dst = tl_shape(shape_t4(N, C, H, W), FMT_I8, CTRL_NULL, NULL, 0);
    bmk1880_copy_with_stride_param_t cs;
    cs.dst = dst;
    cs.dst_stride = stride_t4(2 * H * W, H * W, W, 1);
    cs.src = cp.dst;
    cs.src_stride = stride_t4(2 * 16, 16, W, 1); /* the aligned default: c = H*W rounded to 16 */
    CHECK(bmk1880_tpu_copy_with_stride(bk, &cs) != NULL, "record copy with stride");
    bmk1880_mdsum_param_t md;
    tensor_lmem* sh = tl_shape(shape_t4(1, C, 1, 1), FMT_I8, CTRL_AL, NULL, 0);
    tensor_lmem* sl = tl_shape(shape_t4(1, C, 1, 1), FMT_I8, CTRL_AL, NULL, 0);
    md.res_high = sh;
    md.res_low = sl;
    md.a = cp.src;
    CHECK(bmk1880_tpu_mdsum(bk, &md) != NULL, "record mdsum");
    bmmem_device_t m1 = store(dst, E), m2 = store(sh, C), m3 = store(sl, C);
    CHECK(submit(), "run");
    int8_t s_hi[C], s_lo[C];
    fetch(o1, m1);
    fetch(s_hi, m2);
    fetch(s_lo, m3);
    release();
    int wrong = 0;
    for (int i = 0; i < E; ++i) wrong += o1[i] != a[i];
    CHECK(wrong == 0, "copies: %d wrong", wrong);
    wrong = 0;
    for (int c = 0; c < C; ++c) {
      long sum = 0;
      for (int n = 0; n < N; ++n)
        for (int i = 0; i < H * W; ++i) sum += a[(n * C + c) * H * W + i];
      wrong += (int16_t)((uint8_t)s_hi[c] << 8 | (uint8_t)s_lo[c]) != sat(sum, 1, 16);
    }
    CHECK(wrong == 0, "mdsum: %d wrong", wrong);
  }

  section = "bmk1880 tpu lut";
  {
    const u32 npu = bmk1880_chip_info().npu_num;
    static int8_t table[32 * 256];
    for (u32 s = 0; s < npu; ++s)
      for (int i = 0; i < 256; ++i) table[s * 256 + i] = (int8_t)(255 - i);
    bmk1880_lut_param_t p;
    p.ofmap = tl(FMT_I8, NULL);
    p.ifmap = tl(FMT_U8, a);
    p.table = tl_shape(shape_t4(1, (int)npu, 16, 16), FMT_I8, CTRL_AL, table, npu * 256);
    CHECK(bmk1880_tpu_lut(bk, &p) != NULL, "record");
    tensor_lmem* r[1] = {p.ofmap};
    int8_t* o[1] = {o1};
    CHECK(run_and_fetch(1, r, o), "run");
    for (int i = 0; i < E; ++i) want[i] = (int8_t)(255 - (uint8_t)a[i]);
    CHECK(count_wrong(o1, want, E) == 0, "%d wrong", count_wrong(o1, want, E));
  }
  (void)want_hi;
}

/* ---- conv, winograd, depthwise, pooling: spec 002's insertion, padding, striding, dilation ----
 */
typedef struct {
  int ins_h, ins_last_h, ins_w, ins_last_w, pt, pb, pl, pr, sh, sw, dh, dw;
} Geometry;
/* The ifmap after insertion and padding, per (n, c): value or 0. */
static int padded_at(const int8_t* x, int h, int w, const Geometry* g, int y, int xx) {
  const int r = y - g->pt, q = xx - g->pl;
  if (r < 0 || q < 0 || r % (g->ins_h + 1) || q % (g->ins_w + 1)) return 0;
  const int sr = r / (g->ins_h + 1), sq = q / (g->ins_w + 1);
  return sr < h && sq < w ? x[sr * w + sq] : 0;
}
static int padded_h(int h, const Geometry* g) {
  return g->pt + (h - 1) * (g->ins_h + 1) + 1 + g->ins_last_h + g->pb;
}
static int padded_w(int w, const Geometry* g) {
  return g->pl + (w - 1) * (g->ins_w + 1) + 1 + g->ins_last_w + g->pr;
}

/* A conv of ifmap (1, ci, h, w) by weight (co, ci, kh, kw) with bias, relu, shift. */
static void conv_ref(const int8_t* x, int ci, int h, int w, const int8_t* wt, int co, int kh,
                     int kw, const int16_t* bias, const Geometry* g, int relu, int rs,
                     int depth_wise, int ho, int wo, long* out) {
  for (int o = 0; o < co; ++o)
    for (int y = 0; y < ho; ++y)
      for (int xx = 0; xx < wo; ++xx) {
        long acc = bias ? bias[o] : 0;
        for (int i = depth_wise ? o : 0; i < (depth_wise ? o + 1 : ci); ++i)
          for (int ky = 0; ky < kh; ++ky)
            for (int kx = 0; kx < kw; ++kx) {
              const int v = padded_at(x + i * h * w, h, w, g, y * g->sh + ky * g->dh,
                                      xx * g->sw + kx * g->dw);
              const int wi =
                  depth_wise ? (o * kh + ky) * kw + kx : ((o * ci + i) * kh + ky) * kw + kx;
              acc += (long)v * wt[wi];
            }
        if (relu && acc < 0) acc = 0;
        out[(o * ho + y) * wo + xx] = sat(shr(acc, rs), 1, 8);
      }
}

static void conv_sections(void) {
  enum { CI = 8, HI = 6, WI = 7, CO = 36, KH = 3, KW = 2 };
  static int8_t x[CI * HI * WI], wt[CO * CI * KH * KW], wg[CO * KH * KW * CI], o[CO * 64 * 64];
  static int16_t bias[CO];
  static uint8_t bg[2 * CO];
  static long want[CO * 64 * 64];
  fill(x, CI * HI * WI, -128, 127);
  fill(wt, CO * CI * KH * KW, -128, 127);
  for (int i = 0; i < CO; ++i) bias[i] = (int16_t)rnd(-20000, 20000);
  for (int i = 0; i < CO; ++i) {
    bg[i] = (uint8_t)(bias[i] & 0xff);
    bg[CO + i] = (uint8_t)((uint16_t)bias[i] >> 8);
  }
  /* spec 002 "bmk1880 tpu conv": the weight (Cin, Cout, kh, kw) is laid out as if
   * (1, Cout, kh*kw, Cin). */
  for (int co = 0; co < CO; ++co)
    for (int ci = 0; ci < CI; ++ci)
      for (int t = 0; t < KH * KW; ++t)
        wg[(co * KH * KW + t) * CI + ci] = wt[(co * CI + ci) * KH * KW + t];

  section = "bmk1880 tpu conv (insertion, padding, stride, dilation, bias, relu, shift)";
  {
    const Geometry g = {1, 1, 0, 1, 1, 0, 2, 1, 2, 1, 1, 2};
    const int ho = (padded_h(HI, &g) - ((KH - 1) * g.dh + 1)) / g.sh + 1;
    const int wo = (padded_w(WI, &g) - ((KW - 1) * g.dw + 1)) / g.sw + 1;
    bmk1880_conv_param_t p;
    memset(&p, 0, sizeof p);
    p.ifmap = tl_shape(shape_t4(1, CI, HI, WI), FMT_I8, CTRL_AL, x, sizeof x);
    p.ofmap = tl_shape(shape_t4(1, CO, ho, wo), FMT_I8, CTRL_AL, NULL, 0);
    tensor_lmem* w = tl_shape(shape_t4(1, CO, KH * KW, CI), FMT_I8, CTRL_NULL, wg, sizeof wg);
    tensor_lmem wl = *w;
    wl.shape = shape_t4(CI, CO, KH, KW);
    p.weight = &wl;
    p.bias = tl_shape(shape_t4(2, CO, 1, 1), FMT_I8, CTRL_NULL, bg, sizeof bg);
    p.ins_h = 1, p.ins_last_h = 1, p.ins_w = 0, p.ins_last_w = 1;
    p.pad_top = 1, p.pad_bottom = 0, p.pad_left = 2, p.pad_right = 1;
    p.stride_h = 2, p.stride_w = 1;
    p.dilation_h = 1, p.dilation_w = 2;
    p.relu_enable = true;
    p.rshift_width = 5;
    CHECK(bmk1880_tpu_conv(bk, &p) != NULL, "record");
    CHECK(run_and_fetch_one(p.ofmap, o, (size_t)CO * ho * wo), "run");
    conv_ref(x, CI, HI, WI, wt, CO, KH, KW, bias, &g, 1, 5, 0, ho, wo, want);
    CHECK(count_wrong(o, want, CO * ho * wo) == 0, "%d of %d wrong (%dx%d)",
          count_wrong(o, want, CO * ho * wo), CO * ho * wo, ho, wo);
  }

  section = "bmk1880 tpu winograd (3x3, pad 1)";
  {
    static int8_t w3[CO * CI * 9], w3g[CO * 9 * CI];
    fill(w3, CO * CI * 9, -20, 20);
    for (int co = 0; co < CO; ++co)
      for (int ci = 0; ci < CI; ++ci)
        for (int t = 0; t < 9; ++t) w3g[(co * 9 + t) * CI + ci] = w3[(co * CI + ci) * 9 + t];
    const Geometry g = {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
    bmk1880_winograd_param_t p;
    memset(&p, 0, sizeof p);
    p.ifmap = tl_shape(shape_t4(1, CI, HI, WI), FMT_I8, CTRL_AL, x, sizeof x);
    p.ofmap = tl_shape(shape_t4(1, CO, HI, WI), FMT_I8, CTRL_AL, NULL, 0);
    tensor_lmem* w = tl_shape(shape_t4(1, CO, 9, CI), FMT_I8, CTRL_NULL, w3g, sizeof w3g);
    tensor_lmem wl = *w;
    wl.shape = shape_t4(CI, CO, 3, 3);
    p.weight = &wl;
    p.bias = NULL;
    p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 1;
    p.rshift_width = 4;
    CHECK(bmk1880_tpu_winograd(bk, &p) != NULL, "record");
    CHECK(run_and_fetch_one(p.ofmap, o, (size_t)CO * HI * WI), "run");
    conv_ref(x, CI, HI, WI, w3, CO, 3, 3, NULL, &g, 0, 4, 0, HI, WI, want);
    CHECK(count_wrong(o, want, CO * HI * WI) == 0, "%d wrong", count_wrong(o, want, CO * HI * WI));
  }

  section = "bmk1880 tpu depthwise (stride 2, pad, bias)";
  {
    enum { DC = 40, DH = 9, DW = 8 };
    static int8_t dx[DC * DH * DW], dwt[DC * 9];
    static int16_t db[DC];
    static uint8_t dbg[2 * DC];
    fill(dx, DC * DH * DW, -128, 127);
    fill(dwt, DC * 9, -128, 127);
    for (int i = 0; i < DC; ++i) {
      db[i] = (int16_t)rnd(-3000, 3000);
      dbg[i] = (uint8_t)(db[i] & 0xff);
      dbg[DC + i] = (uint8_t)((uint16_t)db[i] >> 8);
    }
    const Geometry g = {0, 0, 0, 0, 1, 1, 0, 1, 2, 2, 1, 1};
    const int ho = (padded_h(DH, &g) - 3) / 2 + 1, wo = (padded_w(DW, &g) - 3) / 2 + 1;
    bmk1880_depthwise_param_t p;
    memset(&p, 0, sizeof p);
    p.ifmap = tl_shape(shape_t4(1, DC, DH, DW), FMT_I8, CTRL_AL, dx, sizeof dx);
    p.ofmap = tl_shape(shape_t4(1, DC, ho, wo), FMT_I8, CTRL_AL, NULL, 0);
    p.weight = tl_shape(shape_t4(1, DC, 3, 3), FMT_I8, CTRL_NULL, dwt, sizeof dwt);
    p.bias = tl_shape(shape_t4(2, DC, 1, 1), FMT_I8, CTRL_NULL, dbg, sizeof dbg);
    p.pad_top = 1, p.pad_bottom = 1, p.pad_left = 0, p.pad_right = 1;
    p.stride_h = 2, p.stride_w = 2;
    p.rshift_width = 6;
    CHECK(bmk1880_tpu_depthwise(bk, &p) != NULL, "record");
    CHECK(run_and_fetch_one(p.ofmap, o, (size_t)DC * ho * wo), "run");
    conv_ref(dx, DC, DH, DW, dwt, DC, 3, 3, db, &g, 0, 6, 1, ho, wo, want);
    CHECK(count_wrong(o, want, DC * ho * wo) == 0, "%d wrong", count_wrong(o, want, DC * ho * wo));
  }

  section = "bmk1880 tpu max pooling / avg pooling";
  {
    enum { PC = 33, PH = 7, PW = 6 };
    static int8_t px[2 * PC * PH * PW];
    fill(px, 2 * PC * PH * PW, -128, 127);
    const Geometry g = {0, 0, 0, 0, 1, 0, 1, 1, 2, 2, 1, 1};
    const int ho = (padded_h(PH, &g) - 3) / 2 + 1, wo = (padded_w(PW, &g) - 2) / 2 + 1;
    bmk1880_max_pooling_param_t mp;
    memset(&mp, 0, sizeof mp);
    mp.ifmap = tl_shape(shape_t4(2, PC, PH, PW), FMT_I8, CTRL_AL, px, sizeof px);
    mp.ofmap = tl_shape(shape_t4(2, PC, ho, wo), FMT_I8, CTRL_AL, NULL, 0);
    mp.kh = 3, mp.kw = 2;
    mp.pad_top = 1, mp.pad_left = 1, mp.pad_right = 1;
    mp.stride_h = 2, mp.stride_w = 2;
    bmk1880_avg_pooling_param_t ap;
    memset(&ap, 0, sizeof ap);
    ap.ifmap = mp.ifmap;
    ap.ofmap = tl_shape(shape_t4(2, PC, ho, wo), FMT_I8, CTRL_AL, NULL, 0);
    ap.kh = 3, ap.kw = 2;
    ap.pad_top = 1, ap.pad_left = 1, ap.pad_right = 1;
    ap.stride_h = 2, ap.stride_w = 2;
    ap.avg_pooling_const = 43; /* about 256 / 6 */
    ap.rshift_width = 8;
    CHECK(bmk1880_tpu_max_pooling(bk, &mp) && bmk1880_tpu_avg_pooling(bk, &ap), "record");
    const size_t osz = (size_t)2 * PC * ho * wo;
    bmmem_device_t m1 = store(mp.ofmap, osz), m2 = store(ap.ofmap, osz);
    CHECK(submit(), "run");
    static int8_t o2[2 * PC * 64];
    fetch(o, m1);
    fetch(o2, m2);
    release();
    int wm = 0, wa = 0;
    for (int n = 0; n < 2 * PC; ++n)
      for (int y = 0; y < ho; ++y)
        for (int xx = 0; xx < wo; ++xx) {
          long mx = -1000, sum = 0;
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 2; ++kx) {
              const int v = padded_at(px + n * PH * PW, PH, PW, &g, y * 2 + ky, xx * 2 + kx);
              mx = v > mx ? v : mx;
              sum += v;
            }
          wm += o[(n * ho + y) * wo + xx] != mx;
          wa += o2[(n * ho + y) * wo + xx] != (int8_t)sat(shr(sum * 43, 8), 1, 8);
        }
    CHECK(wm == 0 && wa == 0, "max %d wrong, avg %d wrong", wm, wa);
  }
}

/* ---- matrices ---- */
enum { R = 5, K = 20, MC = 40 };
/* res (R, MC) += left x right with CTRL_RA: the previous 16-bit result, low bytes in rows [0, R)
 * and high bytes in [R, 2R) (the lower addresses), shifted left by ls; an 8-bit result writes
 * the low rows only. */
static void matrix_mac_ra(const int8_t* l, const int8_t* r, int ls, int rs, bool res_is_int8) {
  static int8_t res[2 * R * MC], o[2 * R * MC];
  fill(res, 2 * R * MC, -128, 127);
  bmk1880_matrix_mac_param_t p;
  memset(&p, 0, sizeof p);
  p.left = tl_shape(shape_t2(R, K), FMT_I8, CTRL_AL, l, R * K);
  p.right = tl_shape(shape_t2(K, MC), FMT_I8, CTRL_AL, r, K * MC);
  p.res = tl_shape(shape_t2(2 * R, MC), FMT_I8, CTRL_AL, res, sizeof res);
  p.lshift_width = ls;
  p.rshift_width = rs;
  p.res_is_int8 = res_is_int8;
  p.ctrls = CTRL_RA;
  CHECK(bmk1880_tpu_matrix_mac(bk, &p) != NULL, "record");
  CHECK(run_and_fetch_one(p.res, o, sizeof o), "run");
  int wrong = 0;
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < MC; ++j) {
      const long old = (int16_t)((uint8_t)res[(R + i) * MC + j] << 8 | (uint8_t)res[i * MC + j]);
      long acc = old * (1L << ls);
      for (int k = 0; k < K; ++k) acc += (long)l[i * K + k] * r[k * MC + j];
      if (res_is_int8) {
        wrong += o[i * MC + j] != (int8_t)sat(shr(acc, rs), 1, 8);
        wrong += o[(R + i) * MC + j] != res[(R + i) * MC + j];
      } else {
        wrong += (int16_t)((uint8_t)o[(R + i) * MC + j] << 8 | (uint8_t)o[i * MC + j]) !=
                 sat(shr(acc, rs), 1, 16);
      }
    }
  CHECK(wrong == 0, "%d wrong", wrong);
}

static void matrix_sections(void) {
  static int8_t l[R * K], r[K * MC], o[2 * R * MC];
  static int16_t bias[MC];
  static uint8_t bg[2 * MC];
  fill(l, R * K, -128, 127);
  fill(r, K * MC, -128, 127);
  for (int j = 0; j < MC; ++j) {
    bias[j] = (int16_t)rnd(-30000, 30000);
    bg[j] = (uint8_t)(bias[j] & 0xff);
    bg[MC + j] = (uint8_t)((uint16_t)bias[j] >> 8);
  }
  section = "bmk1880 tpu matrix mac (bias, CTRL_RELU, 8-bit result)";
  {
    bmk1880_matrix_mac_param_t p;
    memset(&p, 0, sizeof p);
    p.left = tl_shape(shape_t2(R, K), FMT_I8, CTRL_AL, l, sizeof l);
    p.right = tl_shape(shape_t2(K, MC), FMT_I8, CTRL_AL, r, sizeof r);
    p.bias = tl_shape(shape_t2(2, MC), FMT_I8, CTRL_AL, bg, sizeof bg);
    p.res = tl_shape(shape_t2(R, MC), FMT_I8, CTRL_AL, NULL, 0);
    p.rshift_width = 7;
    p.res_is_int8 = true;
    p.ctrls = CTRL_RELU;
    CHECK(bmk1880_tpu_matrix_mac(bk, &p) != NULL, "record");
    CHECK(run_and_fetch_one(p.res, o, R * MC), "run");
    int wrong = 0;
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < MC; ++j) {
        long acc = bias[j];
        for (int k = 0; k < K; ++k) acc += (long)l[i * K + k] * r[k * MC + j];
        if (acc < 0) acc = 0;
        wrong += o[i * MC + j] != (int8_t)sat(shr(acc, 7), 1, 8);
      }
    CHECK(wrong == 0, "%d wrong", wrong);
  }
  section = "bmk1880 tpu matrix mac (CTRL_RA, 16-bit result, lshift 1)";
  matrix_mac_ra(l, r, 1, 2, false);
  section = "bmk1880 tpu matrix mac (CTRL_RA, res_is_int8: only the low rows are written)";
  matrix_mac_ra(l, r, 3, 6, true);
  section = "bmk1880 gdma load (matrix, CTRL_TP)";
  {
    /* gmem holds the (K, R) transpose of the (R, K) matrix loaded. */
    static int8_t lt[K * R];
    for (int i = 0; i < R; ++i)
      for (int k = 0; k < K; ++k) lt[k * R + i] = l[i * K + k];
    tensor_lmem* t = tl_shape(shape_t2(R, K), FMT_I8, CTRL_AL, NULL, 0);
    bmmem_device_t g = put_gmem(lt, sizeof lt);
    bmk1880_gdma_load(bk, t, bmmem_device_addr(ctx, g), CTRL_TP);
    CHECK(run_and_fetch_one(t, o, R * K), "run");
    bmmem_device_free(ctx, g);
    int wrong = 0;
    for (int i = 0; i < R * K; ++i) wrong += o[i] != l[i];
    CHECK(wrong == 0, "%d wrong", wrong);
  }
  section = "bmk1880 tpu matrix mac 2 (256 x 256)";
  {
    static int8_t ml[256 * 256], mr[256 * 256], mo[256 * 256];
    fill(ml, 256 * 256, -128, 127);
    fill(mr, 256 * 256, -128, 127);
    bmk1880_matrix_mac_2_param_t p;
    p.left = tl_shape(shape_t4(1, 256, 1, 256), FMT_I8, CTRL_AL, ml, sizeof ml);
    p.right = tl_shape(shape_t4(256, 16, 1, 16), FMT_I8, CTRL_AL, mr, sizeof mr);
    p.res = tl_shape(shape_t4(1, 256, 1, 256), FMT_I8, CTRL_AL, NULL, 0);
    CHECK(bmk1880_tpu_matrix_mac_2(bk, &p) != NULL, "record");
    CHECK(run_and_fetch_one(p.res, mo, sizeof mo), "run");
    int wrong = 0;
    for (int i = 0; i < 256; ++i)
      for (int j = 0; j < 256; ++j) {
        long acc = 0;
        for (int k = 0; k < 256; ++k) acc += (long)ml[i * 256 + k] * mr[k * 256 + j];
        wrong += mo[i * 256 + j] != (int8_t)sat(acc, 1, 8);
      }
    CHECK(wrong == 0, "%d wrong", wrong);
  }
}

/* ---- GDMA ---- */
static void gdma_sections(void) {
  enum { GN = 3, GC = 35, GH = 2, GW = 3, GE = GN * GC * GH * GW };
  static int8_t x[GE], o[4 * GE];
  fill(x, GE, -128, 127);

  section = "bmk1880 gdma load (CTRL_TP) / store";
  {
    /* gmem holds (C, N, H, W); CTRL_TP loads it as (N, C, H, W). */
    tensor_lmem* t = tl_shape(shape_t4(GN, GC, GH, GW), FMT_I8, CTRL_AL, NULL, 0);
    bmmem_device_t g = put_gmem(x, GE);
    bmk1880_gdma_load(bk, t, bmmem_device_addr(ctx, g), CTRL_TP);
    CHECK(run_and_fetch_one(t, o, GE), "run");
    bmmem_device_free(ctx, g);
    int wrong = 0;
    for (int n = 0; n < GN; ++n)
      for (int c = 0; c < GC; ++c)
        for (int i = 0; i < GH * GW; ++i)
          wrong += o[(n * GC + c) * GH * GW + i] != x[(c * GN + n) * GH * GW + i];
    CHECK(wrong == 0, "%d wrong", wrong);
  }

  section = "bmk1880 gdma load stride / store stride";
  {
    /* Each (n, c) plane in gmem sits in a row of 8 bytes per h, planes 20 bytes apart. */
    static int8_t gs[GN * GC * 20];
    memset(gs, 0, sizeof gs);
    for (int n = 0; n < GN; ++n)
      for (int c = 0; c < GC; ++c)
        for (int h = 0; h < GH; ++h)
          for (int w = 0; w < GW; ++w)
            gs[(n * GC + c) * 20 + h * 8 + w] = x[((n * GC + c) * GH + h) * GW + w];
    tensor_lmem* t = tl_shape(shape_t4(GN, GC, GH, GW), FMT_I8, CTRL_NULL, NULL, 0);
    bmmem_device_t g = put_gmem(gs, sizeof gs);
    bmk1880_gdma_load_stride(bk, t, bmmem_device_addr(ctx, g), stride_t4(GC * 20, 20, 8, 1),
                             CTRL_NULL);
    bmmem_device_t d = put_gmem(NULL, 2 * GE);
    /* Stored with a W stride of 2: every other byte. */
    bmk1880_gdma_store_stride(bk, t, bmmem_device_addr(ctx, d),
                              stride_t4(GC * GH * GW * 2, GH * GW * 2, GW * 2, 2), CTRL_NULL);
    CHECK(submit(), "run");
    memset(o, 0x55, 2 * GE);
    bm_memcpy_d2s(ctx, (uint8_t*)o, d);
    bmmem_device_free(ctx, d);
    bmmem_device_free(ctx, g);
    release();
    int wrong = 0;
    for (int i = 0; i < GE; ++i) wrong += o[2 * i] != x[i];
    CHECK(wrong == 0, "%d wrong", wrong);
  }

  section = "bmk1880 gdma copy gmem (tensor CTRL_TP, matrix reshape)";
  {
    bmmem_device_t s = put_gmem(x, GE), d = put_gmem(NULL, GE), d2 = put_gmem(NULL, GE);
    tensor_gmem src = {bmmem_device_addr(ctx, s), shape_t4(GN, GC, GH, GW),
                       stride_t4(GC * GH * GW, GH * GW, GW, 1)};
    tensor_gmem dst = {bmmem_device_addr(ctx, d), shape_t4(GC, GN, GH, GW),
                       stride_t4(GN * GH * GW, GH * GW, GW, 1)};
    CHECK(bmk1880_gdma_copy_gmem(bk, &dst, &src, CTRL_TP) != NULL, "record tp");
    tensor_gmem ms = {bmmem_device_addr(ctx, s), shape_t2(GN * GC, GH * GW), stride_t2(GH * GW, 1)};
    tensor_gmem md = {bmmem_device_addr(ctx, d2), shape_t2(GH * GW, GN * GC),
                      stride_t2(GN * GC, 1)};
    CHECK(bmk1880_gdma_copy_gmem(bk, &md, &ms, CTRL_NULL) != NULL, "record matrix");
    CHECK(submit(), "run");
    bm_memcpy_d2s(ctx, (uint8_t*)o, d);
    bm_memcpy_d2s(ctx, (uint8_t*)o + GE, d2);
    int wrong = 0;
    for (int n = 0; n < GN; ++n)
      for (int c = 0; c < GC; ++c)
        for (int i = 0; i < GH * GW; ++i)
          wrong += o[(c * GN + n) * GH * GW + i] != x[(n * GC + c) * GH * GW + i];
    for (int i = 0; i < GE; ++i) wrong += o[GE + i] != x[i];
    CHECK(wrong == 0, "%d wrong", wrong);
    bmmem_device_free(ctx, d2);
    bmmem_device_free(ctx, d);
    bmmem_device_free(ctx, s);
  }

  section = "bmk1880 gdma copy lmem / lrn shift";
  {
    tensor_lmem* a = tl_shape(shape_t4(GN, GC, GH, GW), FMT_I8, CTRL_AL, x, GE);
    tensor_lmem* flat = tl_shape(shape_t4(1, GN * GC, 1, GH * GW), FMT_I8, CTRL_NULL, NULL, 0);
    tensor_lmem* rs = tl_shape(shape_t4(GN, GC, GH, GW), FMT_I8, CTRL_AL, NULL, 0);
    tensor_lmem* ls = tl_shape(shape_t4(GN, GC, GH, GW), FMT_I8, CTRL_AL, NULL, 0);
    CHECK(bmk1880_gdma_copy_lmem(bk, flat, a) != NULL, "record copy");
    CHECK(bmk1880_gdma_lrn_shift(bk, rs, a, true, 3) != NULL, "record right");
    CHECK(bmk1880_gdma_lrn_shift(bk, ls, a, false, 2) != NULL, "record left");
    bmmem_device_t m1 = store(flat, GE), m2 = store(rs, GE), m3 = store(ls, GE);
    CHECK(submit(), "run");
    fetch(o, m1);
    fetch(o + GE, m2);
    fetch(o + 2 * GE, m3);
    release();
    int wrong = 0;
    for (int i = 0; i < GE; ++i) wrong += o[i] != x[i];
    for (int n = 0; n < GN; ++n)
      for (int c = 0; c < GC; ++c)
        for (int i = 0; i < GH * GW; ++i) {
          const int at = (n * GC + c) * GH * GW + i;
          const int right = c < 3 ? 0 : x[(n * GC + c - 3) * GH * GW + i];
          const int left = c >= GC - 2 ? 0 : x[(n * GC + c + 2) * GH * GW + i];
          wrong += o[GE + at] != right;
          wrong += o[2 * GE + at] != left;
        }
    CHECK(wrong == 0, "%d wrong", wrong);
  }
}

/* ---- misuse: a UserError for what the spec forbids, a DeviceFault for what the chip faults on
 * ---- */
static void expect_refused(const void* handle, tessera_bm_error_kind_t kind, const char* what) {
  CHECK(handle == NULL && tessera_bm_last_error_kind() == kind, "%s: handle %p, kind %d", what,
        handle, (int)tessera_bm_last_error_kind());
  bmk1880_reset(bk);
  tessera_bm_clear_error();
}

static void misuse_sections(void) {
  static int8_t z[E];
  tensor_lmem *a = tl(FMT_I8, z), *b = tl(FMT_I8, z), *r = tl(FMT_I8, NULL), *u = tl(FMT_U8, NULL);
  tessera_bm_clear_error();

  section = "bmk1880 tpu add: a_high must not be NULL";
  bmk1880_add_param_t ad = {NULL, r, NULL, a, b, b};
  expect_refused(bmk1880_tpu_add(bk, &ad), TESSERA_BM_USER_ERROR, "a_high NULL");

  section = "bmk1880 tpu sub: the result must be FMT_I8";
  bmk1880_sub_param_t sb = {NULL, u, a, a, b, b};
  expect_refused(bmk1880_tpu_sub(bk, &sb), TESSERA_BM_USER_ERROR, "unsigned result");

  section = "bmk1880 tpu max: a and b both signed or both unsigned";
  bmk1880_max_param_t mx = {r, a, u};
  expect_refused(bmk1880_tpu_max(bk, &mx), TESSERA_BM_USER_ERROR, "mixed signedness");

  section = "bmk1880 tpu mul: an unsigned result of a signed input";
  bmk1880_mul_param_t mu = {NULL, u, a, b, 0};
  expect_refused(bmk1880_tpu_mul(bk, &mu), TESSERA_BM_USER_ERROR, "U8 result of I8 inputs");

  section = "bmk1880 tpu arith shift: bits must be signed";
  bmk1880_arith_shift_param_t as = {r, r, a, a, u};
  expect_refused(bmk1880_tpu_arith_shift(bk, &as), TESSERA_BM_USER_ERROR, "unsigned bits");

  section = "bmk1880 tpu mac: res_high must be given";
  bmk1880_mac_param_t mc;
  memset(&mc, 0, sizeof mc);
  mc.res_low = r, mc.a = a, mc.b = b, mc.res_is_int8 = true;
  expect_refused(bmk1880_tpu_mac(bk, &mc), TESSERA_BM_USER_ERROR, "res_high NULL");

  section = "bmk1880 tpu matrix mac: CTRL_RELU and CTRL_RA not both";
  {
    tensor_lmem* ml = tl_shape(shape_t2(4, 16), FMT_I8, CTRL_AL, NULL, 0);
    tensor_lmem* mr = tl_shape(shape_t2(16, 16), FMT_I8, CTRL_AL, NULL, 0);
    tensor_lmem* mo = tl_shape(shape_t2(8, 16), FMT_I8, CTRL_AL, NULL, 0);
    bmk1880_matrix_mac_param_t p = {mo, ml, mr, NULL, 0, 0, false, CTRL_RELU | CTRL_RA};
    expect_refused(bmk1880_tpu_matrix_mac(bk, &p), TESSERA_BM_USER_ERROR, "RELU | RA");
    tensor_lmem* un = tl_shape(shape_t2(4, 16), FMT_I8, CTRL_NULL, NULL, 0);
    bmk1880_matrix_mac_param_t q = {mo, un, mr, NULL, 0, 0, false, CTRL_NULL};
    expect_refused(bmk1880_tpu_matrix_mac(bk, &q), TESSERA_BM_DEVICE_FAULT, "unaligned left");
  }

  section = "bmk1880 tpu lut: the table is (1, npu_num, 16, 16)";
  {
    tensor_lmem* t = tl_shape(shape_t4(1, 16, 16, 16), FMT_I8, CTRL_AL, NULL, 0);
    bmk1880_lut_param_t p = {r, a, t};
    expect_refused(bmk1880_tpu_lut(bk, &p), TESSERA_BM_DEVICE_FAULT, "16-slice table");
  }

  section = "bmk1880 tpu conv: ifmap must be aligned";
  {
    tensor_lmem* in = tl_shape(shape_t4(1, 4, 4, 4), FMT_I8, CTRL_NULL, NULL, 0);
    tensor_lmem* w = tl_shape(shape_t4(4, 4, 1, 1), FMT_I8, CTRL_NULL, NULL, 0);
    tensor_lmem* out = tl_shape(shape_t4(1, 4, 4, 4), FMT_I8, CTRL_AL, NULL, 0);
    bmk1880_conv_param_t p;
    memset(&p, 0, sizeof p);
    p.ifmap = in, p.ofmap = out, p.weight = w, p.stride_h = p.stride_w = 1;
    p.dilation_h = p.dilation_w = 1;
    expect_refused(bmk1880_tpu_conv(bk, &p), TESSERA_BM_DEVICE_FAULT, "unaligned ifmap");
  }

  section = "bmk1880 gdma copy gmem: CTRL_TP for tensors only";
  {
    tensor_gmem s = {0, shape_t2(4, 4), stride_t2(4, 1)}, d = s;
    bmmem_device_t g = put_gmem(NULL, 16);
    s.addr = d.addr = bmmem_device_addr(ctx, g);
    expect_refused(bmk1880_gdma_copy_gmem(bk, &d, &s, CTRL_TP), TESSERA_BM_USER_ERROR,
                   "transposed matrix copy");
    bmmem_device_free(ctx, g);
  }

  section = "bmk1880 gdma copy lmem: tensors, not matrices";
  {
    tensor_lmem* m1 = tl_shape(shape_t2(4, 16), FMT_I8, CTRL_AL, NULL, 0);
    tensor_lmem* m2 = tl_shape(shape_t2(4, 16), FMT_I8, CTRL_AL, NULL, 0);
    expect_refused(bmk1880_gdma_copy_lmem(bk, m2, m1), TESSERA_BM_USER_ERROR, "matrix copy");
  }
  release();

  section = "bmk1880 tpu arith shift: bits outside [-16, 16] (at submit)";
  {
    static int8_t bits[E];
    memset(bits, 17, sizeof bits);
    bmk1880_arith_shift_param_t p = {tl(FMT_I8, NULL), tl(FMT_I8, NULL), tl(FMT_I8, z),
                                     tl(FMT_I8, z), tl(FMT_I8, bits)};
    CHECK(bmk1880_tpu_arith_shift(bk, &p) != NULL, "record");
    CHECK(!submit() && tessera_bm_last_error_kind() == TESSERA_BM_DEVICE_FAULT,
          "bits of 17 fault at submit");
    release();
    tessera_bm_clear_error();
  }

  section = "bmk1880 tl free: last allocated, first freed";
  {
    tensor_lmem* t0 = bmk1880_tl_alloc(bk, shape_t4(1, 32, 2, 2), FMT_I8, CTRL_AL);
    tensor_lmem* t1 = bmk1880_tl_alloc(bk, shape_t4(1, 32, 2, 2), FMT_I8, CTRL_AL);
    tessera_bm_clear_error();
    bmk1880_tl_free(bk, t0);
    CHECK(tessera_bm_last_error_kind() == TESSERA_BM_DEVICE_FAULT, "freeing t0 before t1");
    tessera_bm_clear_error();
    bmk1880_tl_free(bk, t1);
    bmk1880_tl_free(bk, t0);
    CHECK(tessera_bm_last_error_kind() == TESSERA_BM_OK, "freeing in order");
    bmk1880_reset(bk);
  }

  section = "bmk1880 set stream: an index create_streams did not make";
  bmk1880_create_streams(bk, 2);
  tessera_bm_clear_error();
  bmk1880_set_stream(bk, 2);
  CHECK(tessera_bm_last_error_kind() == TESSERA_BM_USER_ERROR, "stream 2 of 2");
  bmk1880_destroy_streams(bk);
  bmk1880_reset(bk);
  tessera_bm_clear_error();
}

/* ---- parallel and stream styles give the serial results ---- */
static void parallel_sections(void) {
  static int8_t a[E], o1[E], o2[E];
  fill(a, E, -128, 127);
  section = "bmk1880 parallel enable / disable";
  {
    tensor_lmem *x = tl(FMT_I8, a), *y = tl(FMT_I8, NULL), *z = tl(FMT_I8, NULL);
    bmk1880_parallel_enable(bk);
    bmk1880_relu_param_t p = {y, x};
    bmk1880_tpu_relu(bk, &p);
    bmk1880_parallel_disable(bk);
    bmk1880_mul_const_param_t m = {NULL, z, y, 2, true, 0};
    bmk1880_tpu_mul_const(bk, &m);
    tensor_lmem* r[1] = {z};
    int8_t* o[1] = {o1};
    CHECK(run_and_fetch(1, r, o), "run");
    int wrong = 0;
    for (int i = 0; i < E; ++i) wrong += o1[i] != (int8_t)sat(2 * (a[i] > 0 ? a[i] : 0), 1, 8);
    CHECK(wrong == 0, "%d wrong", wrong);
  }
  section = "bmk1880 create streams / set stream / add dependency";
  {
    tensor_lmem *x = tl(FMT_I8, NULL), *y = tl(FMT_I8, NULL), *z = tl(FMT_I8, NULL);
    bmmem_device_t g = put_gmem(a, E), d1 = put_gmem(NULL, E), d2 = put_gmem(NULL, E);
    bmk1880_create_streams(bk, 2);
    bmk1880_set_stream(bk, 0);
    void* ld = bmk1880_gdma_load(bk, x, bmmem_device_addr(ctx, g), CTRL_NULL);
    bmk1880_relu_param_t p = {y, x};
    void* rl = bmk1880_tpu_relu(bk, &p);
    bmk1880_set_stream(bk, 1);
    bmk1880_min_const_param_t mn = {z, x, 0, true};
    void* mi = bmk1880_tpu_min_const(bk, &mn);
    bmk1880_add_dependency(bk, ld, mi);
    void* s1 = bmk1880_gdma_store(bk, z, bmmem_device_addr(ctx, d2), CTRL_NULL);
    bmk1880_set_stream(bk, 0);
    void* s0 = bmk1880_gdma_store(bk, y, bmmem_device_addr(ctx, d1), CTRL_NULL);
    CHECK(ld && rl && mi && s1 && s0, "record");
    bmk1880_destroy_streams(bk);
    CHECK(submit(), "run");
    fetch(o1, d1);
    fetch(o2, d2);
    bmmem_device_free(ctx, g);
    release();
    int wrong = 0;
    for (int i = 0; i < E; ++i)
      wrong += o1[i] != (a[i] > 0 ? a[i] : 0) || o2[i] != (a[i] < 0 ? a[i] : 0);
    CHECK(wrong == 0, "%d wrong", wrong);
  }
}

/* ---- BMNet runtime: a network recorded with BMKernel (input at neuron offset 0) ---- */
static void bmnet_sections(void) {
  enum { NC = 32, NH = 4, NW = 4, NE = NC * NH * NW, OUT_OFF = 1024 };
  static u8 cmdbuf[1 << 16];
  static int8_t weight[NE], in[NE], out[NE], out2[NE];
  fill(weight, NE, -64, 64);
  fill(in, NE, -128, 127);
  section = "bmnet_register / bmnet_inference";
  bmk1880_info_t info = {1880, cmdbuf, sizeof cmdbuf};
  void* k = bmk1880_register(&info);
  tensor_lmem* x = bmk1880_tl_alloc(k, shape_t4(1, NC, NH, NW), FMT_I8, CTRL_AL);
  tensor_lmem* w = bmk1880_tl_alloc(k, shape_t4(1, NC, NH, NW), FMT_I8, CTRL_AL);
  tensor_lmem* y = bmk1880_tl_alloc(k, shape_t4(1, NC, NH, NW), FMT_I8, CTRL_AL);
  bmk1880_gdma_load(k, x, 0, CTRL_NEURON);
  bmk1880_gdma_load(k, w, 0, CTRL_WEIGHT);
  bmk1880_max_param_t mp = {y, x, w};
  bmk1880_tpu_max(k, &mp);
  bmk1880_gdma_store(k, y, OUT_OFF, CTRL_NEURON);
  u32 size = 0;
  u8* buf = bmk1880_acquire_cmdbuf(k, &size);
  bmnet_info_t ni;
  memset(&ni, 0, sizeof ni);
  ni.batch_size = 1;
  ni.weight = (uint8_t*)weight;
  ni.weight_size = NE;
  ni.cmdbuf = buf;
  ni.cmdbuf_size = size;
  ni.neuron_size = OUT_OFF + NE;
  ni.input_size = NE;
  ni.output_offset = OUT_OFF;
  ni.output_size = NE;
  bmnet_t net = NULL;
  CHECK(bmnet_register(ctx, &ni, &net) == BM_SUCCESS && net, "register");
  CHECK(bmnet_inference(net, (uint8_t*)in, (uint8_t*)out) == BM_SUCCESS, "inference");
  int wrong = 0;
  for (int i = 0; i < NE; ++i) wrong += out[i] != (in[i] > weight[i] ? in[i] : weight[i]);
  CHECK(wrong == 0, "%d wrong", wrong);

  section = "bmnet_load_input / bmnet_run / bmnet_store_output / bmnet_store_neuron";
  for (int i = 0; i < NE; ++i) in[i] = (int8_t)(-in[i] / 2);
  CHECK(bmnet_load_input(net, (uint8_t*)in) == BM_SUCCESS && bmnet_run(net) == BM_SUCCESS &&
            bmnet_store_output(net, (uint8_t*)out) == BM_SUCCESS &&
            bmnet_store_neuron(net, OUT_OFF, NE, (uint8_t*)out2) == BM_SUCCESS,
        "steps");
  wrong = 0;
  for (int i = 0; i < NE; ++i)
    wrong += out[i] != (in[i] > weight[i] ? in[i] : weight[i]) || out2[i] != out[i];
  CHECK(wrong == 0, "%d wrong", wrong);
  bmnet_output_info_t oi;
  memset(&oi, 0, sizeof oi);
  CHECK(bmnet_get_output_info(net, &oi) == BM_SUCCESS && oi.output_size == NE, "output info");
  CHECK(bmmem_device_size(ctx, bmnet_output_devmem(net)) == NE &&
            bmmem_device_size(ctx, bmnet_input_devmem(net)) == NE &&
            bmmem_device_size(ctx, bmnet_weight_devmem(net)) >= NE,
        "devmems");
  bmnet_cleanup(net);

  section = "bmnet_register_noalloc / bmnet_import_weight_devmem / bmnet_import_neuron_devmem";
  net = NULL;
  CHECK(bmnet_register_noalloc(ctx, &ni, &net) == BM_SUCCESS && net, "register");
  bmmem_device_t wm = put_gmem(weight, NE), nm = bmmem_device_alloc_raw(ctx, OUT_OFF + NE);
  CHECK(bmnet_import_weight_devmem(net, wm) == BM_SUCCESS &&
            bmnet_import_neuron_devmem(net, nm) == BM_SUCCESS,
        "import");
  CHECK(bmnet_load_neuron(net, 0, NE, (uint8_t*)in) == BM_SUCCESS && bmnet_run(net) == BM_SUCCESS,
        "run");
  bmshape_t os = BM_TENSOR_INT8(1, NC, NH, NW);
  bmmem_device_t ov = bmmem_device_prealloc(ctx, nm, OUT_OFF, &os);
  CHECK(ov && bm_memcpy_d2s(ctx, (uint8_t*)out, ov) == BM_SUCCESS,
        "output through the neuron memory");
  wrong = 0;
  for (int i = 0; i < NE; ++i) wrong += out[i] != (in[i] > weight[i] ? in[i] : weight[i]);
  CHECK(wrong == 0, "%d wrong", wrong);
  bmmem_device_free(ctx, ov);
  bmnet_cleanup(net);
  bmmem_device_free(ctx, nm);
  bmmem_device_free(ctx, wm);
  bmk1880_tl_free(k, y);
  bmk1880_tl_free(k, w);
  bmk1880_tl_free(k, x);
  bmk1880_cleanup(k);
}

int main(void) {
  if (bm_init(0, &ctx) != BM_SUCCESS || bmruntime_bmkernel_create(ctx, &bk) != BM_SUCCESS) {
    fprintf(stderr, "init: %s\n", tessera_bm_last_error());
    return 1;
  }
  runtime_sections();
  system_sections();
  elementwise_sections();
  conv_sections();
  matrix_sections();
  gdma_sections();
  misuse_sections();
  parallel_sections();
  bmnet_sections();
  bmruntime_bmkernel_destroy(ctx);
  bm_exit(ctx);
  if (failures)
    fprintf(stderr, "%d checks failed\n", failures);
  else
    printf("every spec 002 section's program matches the host computation\n");
  return failures ? 1 : 0;
}
