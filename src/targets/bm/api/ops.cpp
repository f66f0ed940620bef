// BMKernel computations (spec 002, "Computation API") and GDMA transfers. Each call checks its
// operands now (format, shape, alignment, strides, lmem bounds) and records a command whose
// result is computed at submit with the integer rules of spec 002: inputs widened to 32 bits,
// the result signed unless every input is unsigned, right shifts that round half up, and
// saturation to the output's 8- or 16-bit format.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <vector>

#include <fmt/format.h>

#include "guard.h"
#include "state.h"
#include "tessera/core/error.h"
#include "tessera/ops/gemm.h"

namespace tessera::bm {
namespace {

using Chip = tessera::bm::Chip;

// --- integer rules ---
std::int64_t widen(std::uint8_t raw, bool is_signed) {
  return is_signed ? static_cast<std::int8_t>(raw) : raw;
}
std::int64_t widen16(std::uint8_t hi, std::uint8_t lo, bool is_signed) {
  const auto v = static_cast<std::uint16_t>((hi << 8) | lo);
  return is_signed ? static_cast<std::int16_t>(v) : v;
}
// Right shift rounding half up: (v + 2^(s-1)) >> s, as Bitmain's reference for the BM1880 TPU
// multiply computes it (cviruntime test/1880v2/test_1880v2_tensor_mul.cpp, tl_mul_ref).
std::int64_t rshift(std::int64_t v, int s) {
  return s <= 0 ? v : (v + (std::int64_t{1} << (s - 1))) >> s;
}
std::int64_t saturate(std::int64_t v, bool is_signed, int bits) {
  const std::int64_t lo = is_signed ? -(std::int64_t{1} << (bits - 1)) : 0;
  const std::int64_t hi =
      is_signed ? (std::int64_t{1} << (bits - 1)) - 1 : (std::int64_t{1} << bits) - 1;
  return std::clamp(v, lo, hi);
}
// Writes v saturated to an 8-bit result (lo alone) or to a 16-bit one split over hi:lo.
void write_result(Chip& chip, const Tl& lo, const Tl* hi, std::uint32_t n, std::uint32_t c,
                  std::uint32_t h, std::uint32_t w, std::int64_t v, bool is_signed) {
  if (!hi) return chip.write(lo, n, c, h, w, static_cast<std::uint8_t>(saturate(v, is_signed, 8)));
  const std::int64_t r = saturate(v, is_signed, 16);
  chip.write(lo, n, c, h, w, static_cast<std::uint8_t>(r & 0xff));
  chip.write(*hi, n, c, h, w, static_cast<std::uint8_t>((r >> 8) & 0xff));
}

// --- recording helpers ---
template <typename F>
void* op(void* ctx, const char* name, F&& body) {
  return guard(name, static_cast<void*>(nullptr), [&]() -> void* {
    bmk1880_context* k = kernel_of(ctx);
    k->touches.clear();
    try {
      return body(k);
    } catch (const std::exception& e) {
      if (k->poisoned.empty()) k->poisoned = e.what();
      throw;
    }
  });
}

template <typename P>
const P& param(const P* p, const char* name) {
  if (!p) throw_user_error("{}: the parameter struct is NULL", name);
  return *p;
}

// Every parameter-struct op's entry (TESSERA_BM_TPU_OPS): a NULL struct is recorded as the
// op's error; otherwise `body` gets the op's name and the struct.
template <typename P, typename F>
void* with_param(void* ctx, const char* name, const P* p, F&& body) {
  if (!p) return op(ctx, name, [&](bmk1880_context*) -> void* { return param(p, name), nullptr; });
  return body(name, *p);
}

// A constant operand `b` as its signedness flag says (spec 002 'b_is_signed').
std::int64_t const_operand(std::int64_t b, bool is_signed, int bits) {
  return is_signed ? b : b & ((std::int64_t{1} << bits) - 1);
}

std::string where_of(const bmk1880_context* k, const Tl& t) {
  return fmt::format("npu0 lmem bank {}", t.la / k->params.lmem_bank_size);
}

void same_shape(bmk1880_context* k, const Tl& a, const Tl& b, const char* name) {
  if (a.n != b.n || a.c != b.c || a.h != b.h || a.w != b.w || a.rows != b.rows || a.cols != b.cols)
    throw DeviceFault(where_of(k, b), fmt::format("{}: shapes do not match: {} and {}; every "
                                                  "operand must have the same shape",
                                                  name, a.describe(), b.describe()));
}

void check_result_fmt(const Tl& out, bool result_signed, const char* name) {
  if (out.is_signed() != result_signed)
    throw_user_error(
        "{}: {} is {}, but the result is {} (spec 002 'Computation API': unsigned "
        "only if every input is unsigned); make it {}",
        name, out.describe(), out.is_signed() ? "FMT_I8" : "FMT_U8",
        result_signed ? "signed" : "unsigned", result_signed ? "FMT_I8" : "FMT_U8");
}

void check_shift(int bits, const char* what, const char* name) {
  if (bits < 0 || bits > 31)
    throw_user_error("{}: {} is {}; it must be in [0, 31]", name, what, bits);
}

void check_aligned(const bmk1880_context* k, const tensor_lmem* t, const Tl& tl, bool aligned,
                   const char* name) {
  const stride_t d = default_stride(k->params, t->shape, aligned);
  const bool default_strides = !t->stride || (t->stride->n == d.n && t->stride->c == d.c &&
                                              t->stride->h == d.h && t->stride->w == d.w);
  if (tl.aligned != aligned || !default_strides)
    throw DeviceFault(where_of(k, tl),
                      fmt::format("{}: {} must be {} with the default strides ({}, {}, {}, {}); "
                                  "allocate it with {}",
                                  name, tl.describe(), aligned ? "aligned" : "unaligned", d.n, d.c,
                                  d.h, d.w, aligned ? "CTRL_AL" : "CTRL_NULL"));
}

double eu_steps(const bmk1880_context* k, std::uint64_t n, std::uint64_t c, std::uint64_t hw) {
  const std::uint64_t npu = k->params.npu_num, eu = k->params.eu_num;
  return static_cast<double>(((c + npu - 1) / npu) * n * ((hw + eu - 1) / eu));
}

// TPU cost of producing `out` when each output datum takes `macs` multiply-accumulates.
Cost tpu_cost(const bmk1880_context* k, const Tl& out, double macs) {
  const double per_npu = k->spec.params.count("bm.int8_macs_per_cycle_per_npu")
                             ? k->spec.param("bm.int8_macs_per_cycle_per_npu").value
                             : static_cast<double>(k->params.eu_num);
  Cost c;
  c.lane_steps = eu_steps(k, out.n, out.c, std::uint64_t{out.h} * out.w) *
                 std::max(1.0, macs * k->params.eu_num / per_npu);
  c.macs = static_cast<double>(out.count()) * macs;
  return c;
}

Cost gdma_cost(const bmk1880_context* k, bool from_gmem, bool to_gmem, std::uint64_t bytes) {
  const std::string& g = k->spec.global_memory;
  Cost c;
  c.gdma = true;
  c.src_memory = from_gmem ? g : "lmem";
  c.dst_memory = to_gmem ? g : "lmem";
  c.bytes = bytes;
  c.gmem_bytes = (from_gmem ? bytes : 0) + (to_gmem ? bytes : 0);
  return c;
}

template <typename F>
void each(const Tl& t, F&& f) {
  for (std::uint32_t n = 0; n < t.n; ++n)
    for (std::uint32_t c = 0; c < t.c; ++c)
      for (std::uint32_t h = 0; h < t.h; ++h)
        for (std::uint32_t w = 0; w < t.w; ++w) f(n, c, h, w);
}

// A tensor's elements in logical order (n, c, h, w), or a matrix's (row, col).
struct Index {
  std::uint32_t n, c, h, w;
};
// Calls f(Index) for each element in logical order, without building a list (GDMA commands
// replay it per element at every submit).
template <typename F>
void each_logical(const Tl& t, std::uint32_t eu, F&& f) {
  if (t.matrix) {
    for (std::uint32_t r = 0; r < t.rows; ++r)
      for (std::uint32_t k = 0; k < t.cols; ++k) f(Index{r, k / eu, 0, k % eu});
  } else {
    each(t, [&](auto n, auto c, auto h, auto w) { f(Index{n, c, h, w}); });
  }
}

// ---- GDMA between gmem and lmem ----
struct GView {
  std::uint64_t sn = 0, sc = 0, sh = 0, sw = 1;
  bool tp = false;
  std::uint64_t offset(const Tl& t, const Index& i, std::uint32_t eu) const {
    if (t.matrix) {
      const std::uint64_t r = i.n, k = std::uint64_t{i.c} * eu + i.w;
      return tp ? k * sh + r : r * sh + k;
    }
    return tp ? std::uint64_t{i.c} * sn + std::uint64_t{i.n} * sc + i.h * sh + i.w * sw
              : std::uint64_t{i.n} * sn + std::uint64_t{i.c} * sc + i.h * sh + i.w * sw;
  }
};

GView gview(const Tl& t, const stride_t* given, bool tp) {
  GView g;
  g.tp = tp;
  if (t.matrix) {
    g.sh = given ? given->row : (tp ? t.rows : t.cols);
    return g;
  }
  const std::uint64_t N = tp ? t.c : t.n, C = tp ? t.n : t.c;
  (void)N;
  if (given) {
    g.sn = given->n;
    g.sc = given->c;
    g.sh = given->h;
    g.sw = given->w;
  } else {
    g.sw = 1;
    g.sh = t.w;
    g.sc = std::uint64_t{t.h} * t.w;
    g.sn = C * t.h * t.w;
  }
  return g;
}

void* gdma_gl(void* ctx, const char* name, tensor_lmem* t, u64 gaddr, const stride_t* stride,
              ctrl_t ctrls, bool load) {
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    if (ctrls & ~static_cast<ctrl_t>(CTRL_TP | CTRL_NEURON | CTRL_WEIGHT))
      throw_user_error(
          "{}: ctrls 0x{:x}: only CTRL_NULL, CTRL_TP, CTRL_NEURON and CTRL_WEIGHT "
          "apply to a GDMA transfer",
          name, ctrls);
    const Tl tl = capture(k, t, "t", name);
    k->touches.back().write = load;
    const GView g = gview(tl, stride, (ctrls & CTRL_TP) != 0);
    const std::uint32_t eu = k->params.eu_num;
    std::uint64_t extent = 0;
    each_logical(tl, eu,
                 [&](const Index& i) { extent = std::max(extent, g.offset(tl, i, eu) + 1); });
    Cost cost = gdma_cost(k, load, !load, tl.count());
    return record(k, ENGINE_GDMA, name, cost, [=](Chip& chip) {
      std::uint8_t* base = chip.gmem(gaddr, extent, name);
      each_logical(tl, eu, [&](const Index& i) {
        const std::uint64_t off = g.offset(tl, i, eu);
        if (load)
          chip.write(tl, i.n, i.c, i.h, i.w, base[off]);
        else
          base[off] = chip.read(tl, i.n, i.c, i.h, i.w, name);
      });
    });
  });
}

// ---- TPU element-wise helpers ----
struct Opt {
  const tensor_lmem* t;
  const char* role;
};

Tl cap(bmk1880_context* k, const tensor_lmem* t, const char* role, const char* name) {
  return capture(k, t, role, name);
}

}  // namespace
}  // namespace tessera::bm

using namespace tessera;
using namespace tessera::bm;

namespace {

void* impl_gdma_copy_gmem(void* ctx, tensor_gmem* dst, tensor_gmem* src, ctrl_t ctrls) {
  const char* name = "bmk1880_gdma_copy_gmem";
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    if (!dst || !src) throw_user_error("{}: {} is NULL", name, !dst ? "dst" : "src");
    if ((dst->shape.dim == 2) != (src->shape.dim == 2))
      throw_user_error("{}: src and dst must both be tensors or both be matrices", name);
    const bool matrix = src->shape.dim == 2;
    if (ctrls & ~static_cast<ctrl_t>(CTRL_TP))
      throw_user_error("{}: ctrls 0x{:x}: only CTRL_NULL or CTRL_TP apply", name, ctrls);
    const bool tp = (ctrls & CTRL_TP) != 0;
    if (tp && matrix)
      throw_user_error("{}: CTRL_TP (N/C transposition) applies to tensors only", name);
    for (const tensor_gmem* g : {dst, src}) {
      const shape_t& s = g->shape;
      const double count = s.dim == 2 ? double(s.row) * s.col : double(s.n) * s.c * s.h * s.w;
      if (count < 1 || count > double(std::uint64_t{1} << 30))
        throw_user_error("{}: a gmem tensor of {} data: it must hold between 1 and 2^30", name,
                         count);
    }
    // Element offsets of each side in logical order.
    auto offsets = [&](const tensor_gmem* g, bool transpose_order) {
      std::vector<std::uint64_t> v;
      const shape_t& s = g->shape;
      if (s.dim == 2) {
        for (std::uint32_t r = 0; r < s.row; ++r)
          for (std::uint32_t c = 0; c < s.col; ++c)
            v.push_back(std::uint64_t{r} * g->stride.row + std::uint64_t{c});
        return v;
      }
      const std::uint32_t N = transpose_order ? s.c : s.n, C = transpose_order ? s.n : s.c;
      for (std::uint32_t n = 0; n < N; ++n)
        for (std::uint32_t c = 0; c < C; ++c)
          for (std::uint32_t h = 0; h < s.h; ++h)
            for (std::uint32_t w = 0; w < s.w; ++w) {
              const std::uint32_t nn = transpose_order ? c : n, cc = transpose_order ? n : c;
              v.push_back(std::uint64_t{nn} * g->stride.n + std::uint64_t{cc} * g->stride.c +
                          std::uint64_t{h} * g->stride.h + std::uint64_t{w} * g->stride.w);
            }
      return v;
    };
    std::vector<std::uint64_t> so = offsets(src, false), dof = offsets(dst, tp);
    if (tp && (dst->shape.n != src->shape.c || dst->shape.c != src->shape.n ||
               dst->shape.h != src->shape.h || dst->shape.w != src->shape.w))
      throw DeviceFault("gdma",
                        fmt::format("{}: with CTRL_TP dst must be src's shape with N and C "
                                    "swapped: src ({}, {}, {}, {}), dst ({}, {}, {}, {})",
                                    name, src->shape.n, src->shape.c, src->shape.h, src->shape.w,
                                    dst->shape.n, dst->shape.c, dst->shape.h, dst->shape.w));
    if (so.size() != dof.size() || so.empty())
      throw DeviceFault("gdma", fmt::format("{}: src holds {} data and dst {}; they must hold the "
                                            "same number",
                                            name, so.size(), dof.size()));
    const std::uint64_t sext = *std::max_element(so.begin(), so.end()) + 1;
    const std::uint64_t dext = *std::max_element(dof.begin(), dof.end()) + 1;
    const u64 sa = src->addr, da = dst->addr;
    Cost cost = gdma_cost(k, true, true, so.size());
    return record(k, ENGINE_GDMA, name, cost,
                  [=, so = std::move(so), dof = std::move(dof)](Chip& chip) {
                    const std::uint8_t* s = chip.gmem(sa, sext, name);
                    std::vector<std::uint8_t> tmp(so.size());
                    for (std::size_t i = 0; i < so.size(); ++i) tmp[i] = s[so[i]];
                    std::uint8_t* d = chip.gmem(da, dext, name);
                    for (std::size_t i = 0; i < dof.size(); ++i) d[dof[i]] = tmp[i];
                  });
  });
}

void* impl_gdma_copy_lmem(void* ctx, tensor_lmem* dst, tensor_lmem* src) {
  const char* name = "bmk1880_gdma_copy_lmem";
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    const Tl d = cap(k, dst, "dst", name), s = cap(k, src, "src", name);
    if (d.matrix || s.matrix) throw_user_error("{}: copies tensors, not matrices", name);
    if (d.count() != s.count())
      throw DeviceFault(where_of(k, d), fmt::format("{}: {} and {} hold different numbers of "
                                                    "data",
                                                    name, s.describe(), d.describe()));
    const std::uint32_t eu = k->params.eu_num;
    return record(k, ENGINE_GDMA, name, gdma_cost(k, false, false, s.count()), [=](Chip& chip) {
      std::vector<std::uint8_t> tmp;
      tmp.reserve(s.count());
      each_logical(s, eu,
                   [&](const Index& i) { tmp.push_back(chip.read(s, i.n, i.c, i.h, i.w, name)); });
      std::size_t next = 0;
      each_logical(d, eu, [&](const Index& i) { chip.write(d, i.n, i.c, i.h, i.w, tmp[next++]); });
    });
  });
}

void* impl_gdma_lrn_shift(void* ctx, tensor_lmem* dst, tensor_lmem* src, bool right_shift,
                          int lrn_step) {
  const char* name = "bmk1880_gdma_lrn_shift";
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    const Tl d = cap(k, dst, "dst", name), s = cap(k, src, "src", name);
    if (d.matrix || s.matrix) throw_user_error("{}: shifts tensors, not matrices", name);
    same_shape(k, s, d, name);
    if (lrn_step < 0 || static_cast<std::uint32_t>(lrn_step) > s.c)
      throw_user_error("{}: lrn_step {} is outside [0, C = {}]", name, lrn_step, s.c);
    const std::uint32_t step = static_cast<std::uint32_t>(lrn_step);
    return record(k, ENGINE_GDMA, name, gdma_cost(k, false, false, s.count()), [=](Chip& chip) {
      std::vector<std::uint8_t> tmp(s.count());
      std::size_t i = 0;
      each(d, [&](auto n, auto c, auto h, auto w) {
        std::int64_t from = right_shift ? std::int64_t{c} - step : std::int64_t{c} + step;
        tmp[i++] = (from < 0 || from >= static_cast<std::int64_t>(s.c))
                       ? 0
                       : chip.read(s, n, static_cast<std::uint32_t>(from), h, w, name);
      });
      i = 0;
      each(d, [&](auto n, auto c, auto h, auto w) { chip.write(d, n, c, h, w, tmp[i++]); });
    });
  });
}

// ---- element-wise arithmetic ----

// mul / mul_const: b is the tensor b_t, or the constant bconst when is_const.
void* mul_common(void* ctx, const char* name, tensor_lmem* res_high, tensor_lmem* res_low,
                 tensor_lmem* a_t, tensor_lmem* b_t, bool is_const, std::int64_t bconst,
                 bool b_signed, int rshift_w) {
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    const Tl a = cap(k, a_t, "a", name);
    const bool has_b = !is_const;
    const Tl b = has_b ? cap(k, b_t, "b", name) : a;
    const Tl lo = cap(k, res_low, "res_low", name);
    const bool wide = res_high != nullptr;
    const Tl hi = wide ? cap(k, res_high, "res_high", name) : lo;
    if (has_b) same_shape(k, a, b, name);
    same_shape(k, a, lo, name);
    if (wide) same_shape(k, a, hi, name);
    check_shift(rshift_w, "rshift_width", name);
    const bool sg = a.is_signed() || (has_b ? b.is_signed() : b_signed);
    check_result_fmt(wide ? hi : lo, sg, name);
    return record(k, ENGINE_BD, name, tpu_cost(k, lo, 1), [=](Chip& chip) {
      each(a, [&](auto n, auto c, auto h, auto w) {
        const std::int64_t bv =
            has_b ? widen(chip.read(b, n, c, h, w, name), b.is_signed()) : bconst;
        const std::int64_t v =
            rshift(widen(chip.read(a, n, c, h, w, name), a.is_signed()) * bv, rshift_w);
        write_result(chip, lo, wide ? &hi : nullptr, n, c, h, w, v, sg);
      });
    });
  });
}

void* impl_tpu_mul(void* ctx, const char* name, const bmk1880_mul_param_t& q) {
  return mul_common(ctx, name, q.res_high, q.res_low, q.a, q.b, false, 0, false, q.rshift_width);
}

void* impl_tpu_mul_const(void* ctx, const char* name, const bmk1880_mul_const_param_t& q) {
  return mul_common(ctx, name, q.res_high, q.res_low, q.a, nullptr, true,
                    const_operand(q.b, q.b_is_signed, 8), q.b_is_signed, q.rshift_width);
}

}  // namespace

namespace {

// mac / mac_const: b is the tensor b_t, or the constant bconst when is_const.
void* mac_common(void* ctx, const char* name, tensor_lmem* res_high, tensor_lmem* res_low,
                 bool res_is_int8, tensor_lmem* a_t, const tensor_lmem* b_t, bool is_const,
                 std::int64_t bconst, bool b_signed, int lshift, int rshift_w) {
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    if (!res_high)
      throw_user_error(
          "{}: res_high is NULL; the accumulated res is 16-bit, so res_high and "
          "res_low must both be given",
          name);
    const Tl a = cap(k, a_t, "a", name);
    const Tl hi = cap(k, res_high, "res_high", name), lo = cap(k, res_low, "res_low", name);
    const bool has_b = !is_const;
    const Tl b = has_b ? cap(k, b_t, "b", name) : a;
    same_shape(k, a, hi, name);
    same_shape(k, a, lo, name);
    if (has_b) same_shape(k, a, b, name);
    check_shift(lshift, "lshift_width", name);
    check_shift(rshift_w, "rshift_width", name);
    const bool sg = a.is_signed() || (has_b ? b.is_signed() : b_signed);
    check_result_fmt(res_is_int8 ? lo : hi, sg, name);
    const bool in_signed = hi.is_signed();
    return record(k, ENGINE_BD, name, tpu_cost(k, lo, 1), [=](Chip& chip) {
      each(a, [&](auto n, auto c, auto h, auto w) {
        const std::int64_t av = widen(chip.read(a, n, c, h, w, name), a.is_signed());
        const std::int64_t bv =
            has_b ? widen(chip.read(b, n, c, h, w, name), b.is_signed()) : bconst;
        const std::int64_t acc =
            widen16(chip.read(hi, n, c, h, w, name), chip.read(lo, n, c, h, w, name), in_signed);
        const std::int64_t v = rshift(av * bv + acc * (std::int64_t{1} << lshift), rshift_w);
        write_result(chip, lo, res_is_int8 ? nullptr : &hi, n, c, h, w, v, sg);
      });
    });
  });
}

// add / sub / add_const over 16-bit a (and b).
void* addsub(void* ctx, const char* name, tensor_lmem* res_high, tensor_lmem* res_low,
             tensor_lmem* a_high, tensor_lmem* a_low, tensor_lmem* b_high, tensor_lmem* b_low,
             bool is_const, std::int64_t bconst, bool b_signed, bool subtract) {
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    if (!a_high || (!is_const && !b_high))
      throw_user_error("{}: {} is NULL; a{} must be 16-bit (spec 002)", name,
                       !a_high ? "a_high" : "b_high", is_const ? "" : " and b");
    const Tl ah = cap(k, a_high, "a_high", name), al = cap(k, a_low, "a_low", name);
    const Tl bh = is_const ? ah : cap(k, b_high, "b_high", name);
    const Tl bl = is_const ? al : cap(k, b_low, "b_low", name);
    const Tl lo = cap(k, res_low, "res_low", name);
    const bool wide = res_high != nullptr;
    const Tl hi = wide ? cap(k, res_high, "res_high", name) : lo;
    for (const Tl* t : {&al, &bh, &bl, &lo, &hi}) same_shape(k, ah, *t, name);
    const bool sg = ah.is_signed() || (is_const ? b_signed : bh.is_signed());
    if (subtract) {
      if (!lo.is_signed() || !hi.is_signed())
        throw_user_error(
            "{}: the result of a subtraction is signed; res_high and res_low must "
            "be FMT_I8",
            name);
    } else {
      check_result_fmt(wide ? hi : lo, sg, name);
    }
    const bool rsg = subtract || sg;
    return record(k, ENGINE_BD, name, tpu_cost(k, lo, 1), [=](Chip& chip) {
      each(ah, [&](auto n, auto c, auto h, auto w) {
        const std::int64_t av = widen16(chip.read(ah, n, c, h, w, name),
                                        chip.read(al, n, c, h, w, name), ah.is_signed());
        const std::int64_t bv = is_const ? bconst
                                         : widen16(chip.read(bh, n, c, h, w, name),
                                                   chip.read(bl, n, c, h, w, name), bh.is_signed());
        write_result(chip, lo, wide ? &hi : nullptr, n, c, h, w, subtract ? av - bv : av + bv, rsg);
      });
    });
  });
}

// max / min and their const forms: b is the tensor b_t, or the constant bconst when is_const.
void* maxmin(void* ctx, const char* name, tensor_lmem* out, tensor_lmem* a_t, tensor_lmem* b_t,
             bool is_const, std::int64_t bconst, bool b_signed, bool is_max) {
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    const Tl a = cap(k, a_t, "a", name);
    const Tl o = cap(k, out, is_max ? "max" : "min", name);
    const bool has_b = !is_const;
    const Tl b = has_b ? cap(k, b_t, "b", name) : a;
    same_shape(k, a, o, name);
    if (has_b) same_shape(k, a, b, name);
    const bool bs = has_b ? b.is_signed() : b_signed;
    if (a.is_signed() != bs)
      throw_user_error("{}: a is {} but b is {}; both must be signed or both unsigned", name,
                       a.is_signed() ? "signed" : "unsigned", bs ? "signed" : "unsigned");
    check_result_fmt(o, a.is_signed(), name);
    return record(k, ENGINE_BD, name, tpu_cost(k, o, 1), [=](Chip& chip) {
      each(a, [&](auto n, auto c, auto h, auto w) {
        const std::int64_t av = widen(chip.read(a, n, c, h, w, name), a.is_signed());
        const std::int64_t bv = has_b ? widen(chip.read(b, n, c, h, w, name), bs) : bconst;
        chip.write(o, n, c, h, w,
                   static_cast<std::uint8_t>(is_max ? std::max(av, bv) : std::min(av, bv)));
      });
    });
  });
}

enum class Logic { and_, or_, xor_ };
std::uint8_t logic(Logic l, std::uint8_t a, std::uint8_t b) {
  return l == Logic::and_ ? a & b : l == Logic::or_ ? a | b : a ^ b;
}

void* logic8(void* ctx, const char* name, Logic l, tensor_lmem* res, tensor_lmem* a_t,
             tensor_lmem* b_t) {
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    const Tl a = cap(k, a_t, "a", name), b = cap(k, b_t, "b", name), r = cap(k, res, "res", name);
    same_shape(k, a, b, name);
    same_shape(k, a, r, name);
    return record(k, ENGINE_BD, name, tpu_cost(k, r, 1), [=](Chip& chip) {
      each(a, [&](auto n, auto c, auto h, auto w) {
        chip.write(r, n, c, h, w,
                   logic(l, chip.read(a, n, c, h, w, name), chip.read(b, n, c, h, w, name)));
      });
    });
  });
}

void* logic16(void* ctx, const char* name, Logic l, tensor_lmem* rh, tensor_lmem* rl,
              tensor_lmem* ah_t, tensor_lmem* al_t, tensor_lmem* bh_t, tensor_lmem* bl_t) {
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    if (!rh || !ah_t || !bh_t)
      throw_user_error("{}: every operand is 16-bit; res_high, a_high and b_high must be given",
                       name);
    const Tl r1 = cap(k, rh, "res_high", name), r0 = cap(k, rl, "res_low", name);
    const Tl a1 = cap(k, ah_t, "a_high", name), a0 = cap(k, al_t, "a_low", name);
    const Tl b1 = cap(k, bh_t, "b_high", name), b0 = cap(k, bl_t, "b_low", name);
    for (const Tl* t : {&r0, &a1, &a0, &b1, &b0}) same_shape(k, r1, *t, name);
    return record(k, ENGINE_BD, name, tpu_cost(k, r0, 2), [=](Chip& chip) {
      each(r1, [&](auto n, auto c, auto h, auto w) {
        const std::uint8_t x1 =
            logic(l, chip.read(a1, n, c, h, w, name), chip.read(b1, n, c, h, w, name));
        const std::uint8_t x0 =
            logic(l, chip.read(a0, n, c, h, w, name), chip.read(b0, n, c, h, w, name));
        chip.write(r1, n, c, h, w, x1);
        chip.write(r0, n, c, h, w, x0);
      });
    });
  });
}

void* copy_common(void* ctx, const char* name, tensor_lmem* dst, const stride_t* ds,
                  tensor_lmem* src, const stride_t* ss) {
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    if (!dst || !src) throw_user_error("{}: {} is NULL", name, !dst ? "dst" : "src");
    tensor_lmem d_t = *dst, s_t = *src;
    stride_t dsv{}, ssv{};
    if (ds) {
      dsv = *ds;
      d_t.stride = &dsv;
    }
    if (ss) {
      ssv = *ss;
      s_t.stride = &ssv;
    }
    const Tl d = cap(k, &d_t, "dst", name), s = cap(k, &s_t, "src", name);
    same_shape(k, s, d, name);
    return record(k, ENGINE_BD, name, tpu_cost(k, d, 1), [=](Chip& chip) {
      each(s, [&](auto n, auto c, auto h, auto w) {
        chip.write(d, n, c, h, w, chip.read(s, n, c, h, w, name));
      });
    });
  });
}

// How many int8 products a float sum may hold and stay exact: every partial sum below 2^24.
std::size_t exact_chunk(bool a_signed, bool b_signed) {
  const std::size_t ma = a_signed ? 128 : 255, mb = b_signed ? 128 : 255;
  return std::max<std::size_t>(1, (std::size_t{1} << 24) / (ma * mb));
}

// acc (m x n) = a (m x k) * b (k x n), integer-valued floats, exact: the host BLAS multiplies
// chunks of k small enough that float sums are exact, and the chunks add up in 64-bit integers.
void int_gemm(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b,
              std::size_t chunk, std::vector<float>& part, std::vector<std::int64_t>& acc) {
  std::fill(acc.begin(), acc.end(), 0);
  for (std::size_t k0 = 0; k0 < k; k0 += chunk) {
    const std::size_t kk = std::min(chunk, k - k0);
    ops::sgemm(false, false, static_cast<std::int64_t>(m), static_cast<std::int64_t>(n),
               static_cast<std::int64_t>(kk), 1.0f, a + k0, static_cast<std::int64_t>(k),
               b + k0 * n, static_cast<std::int64_t>(n), 0.0f, part.data(),
               static_cast<std::int64_t>(n));
    for (std::size_t i = 0; i < m * n; ++i) acc[i] += static_cast<std::int64_t>(part[i]);
  }
}

// The window of an ifmap after insertion and padding (spec 002 "bmk1880 tpu conv").
struct Window {
  std::uint32_t H = 0, W = 0;
  int ins_h = 0, ins_last_h = 0, ins_w = 0, ins_last_w = 0;
  int pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  std::int64_t Hp() const {
    return pad_top + (std::int64_t{H} - 1) * (ins_h + 1) + 1 + ins_last_h + pad_bottom;
  }
  std::int64_t Wp() const {
    return pad_left + (std::int64_t{W} - 1) * (ins_w + 1) + 1 + ins_last_w + pad_right;
  }
  // Source row of padded row y, or -1 for an inserted or padded zero.
  std::int64_t row(std::int64_t y) const {
    const std::int64_t r = y - pad_top;
    if (r < 0 || r % (ins_h + 1) != 0) return -1;
    const std::int64_t s = r / (ins_h + 1);
    return s < H ? s : -1;
  }
  std::int64_t col(std::int64_t x) const {
    const std::int64_t r = x - pad_left;
    if (r < 0 || r % (ins_w + 1) != 0) return -1;
    const std::int64_t s = r / (ins_w + 1);
    return s < W ? s : -1;
  }
};

template <typename P>
Window window_of(const Tl& in, const P& q) {
  Window w;
  w.H = in.h;
  w.W = in.w;
  w.ins_h = q.ins_h;
  w.ins_last_h = q.ins_last_h;
  w.ins_w = q.ins_w;
  w.ins_last_w = q.ins_last_w;
  w.pad_top = q.pad_top;
  w.pad_bottom = q.pad_bottom;
  w.pad_left = q.pad_left;
  w.pad_right = q.pad_right;
  return w;
}

std::uint32_t out_dim(const bmk1880_context* k, const Tl& in, std::int64_t padded,
                      std::uint32_t kernel, std::uint32_t dilation, std::uint32_t stride,
                      const char* dim, const char* name) {
  const std::int64_t extent = (std::int64_t{kernel} - 1) * dilation + 1;
  if (padded < extent)
    throw DeviceFault(where_of(k, in),
                      fmt::format("{}: the kernel spans {} along {}, more than the {} of the "
                                  "inserted and padded {}; pad more or use a smaller kernel",
                                  name, extent, dim, padded, in.describe()));
  return static_cast<std::uint32_t>((padded - extent) / stride + 1);
}

void check_out(const bmk1880_context* k, const Tl& out, std::uint32_t n, std::uint32_t c,
               std::uint32_t h, std::uint32_t w, const char* name) {
  if (out.n != n || out.c != c || out.h != h || out.w != w)
    throw DeviceFault(where_of(k, out),
                      fmt::format("{}: shapes do not match: the parameters give an output of "
                                  "shape ({}, {}, {}, {}), but {}",
                                  name, n, c, h, w, out.describe()));
}

void check_bias(const bmk1880_context* k, const tensor_lmem* t, const Tl& b, std::uint32_t C,
                const char* name) {
  if (b.n != 2 || b.c != C || b.h != 1 || b.w != 1)
    throw DeviceFault(where_of(k, b),
                      fmt::format("{}: the bias is a 16-bit tensor of shape (1, {}, 1, 1), held "
                                  "as an 8-bit tensor of shape (2, {}, 1, 1) (low bytes, then "
                                  "high bytes); {} does not match",
                                  name, C, C, b.describe()));
  if (b.aligned || (t->stride && (t->stride->n != default_stride(k->params, t->shape, false).n ||
                                  t->stride->c != 1)))
    throw DeviceFault(where_of(k, b),
                      fmt::format("{}: the bias must be 16-bit unaligned (spec 002 'bmk1880 tpu "
                                  "conv'): {} is {}; allocate it with CTRL_NULL",
                                  name, b.describe(), b.aligned ? "aligned" : "custom-strided"));
}

struct ConvSpec {
  Window win;
  std::uint32_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  bool relu = false;
  int rshift_w = 0;
  bool depthwise = false;
};

void* conv_common(void* ctx, const char* name, tensor_lmem* ofmap, tensor_lmem* ifmap,
                  tensor_lmem* weight, tensor_lmem* bias, ConvSpec cs, bool winograd) {
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    const Tl in = cap(k, ifmap, "ifmap", name), out = cap(k, ofmap, "ofmap", name);
    if (in.matrix || out.matrix) throw_user_error("{}: ifmap and ofmap are tensors", name);
    check_aligned(k, ifmap, in, true, name);
    check_aligned(k, ofmap, out, true, name);
    cs.win.H = in.h;
    cs.win.W = in.w;
    if (!weight) throw_user_error("{}: weight is NULL", name);
    if (weight->shape.dim == 2) throw_user_error("{}: weight is a tensor, not a matrix", name);
    // Weight layout: for conv, logical (Cin, Cout, kh, kw) stored as if (1, Cout, kh*kw, Cin)
    // (spec 002 "bmk1880 tpu conv"; Bitmain loads it with that shape, unaligned: cviruntime
    // test/1880v2 put_conv_weight). For depthwise, (1, C, kh, kw) with its default strides.
    tensor_lmem wt = *weight;
    stride_t wst{};
    const std::uint32_t cin = in.c;
    cs.kh = weight->shape.h;
    cs.kw = weight->shape.w;
    if (!cs.depthwise && !weight->stride) {
      wst = stride_t4(1, static_cast<int>(cs.kh * cs.kw * cin), static_cast<int>(cs.kw * cin),
                      static_cast<int>(cin));
      wt.stride = &wst;
    }
    if ((winograd || cs.depthwise) && weight->stride) {
      // spec 002 "bmk1880 tpu winograd" / "depthwise": the weight is default strided.
      const stride_t d = cs.depthwise
                             ? default_stride(k->params, weight->shape, weight->aligned)
                             : stride_t4(1, static_cast<int>(cs.kh * cs.kw * cin),
                                         static_cast<int>(cs.kw * cin), static_cast<int>(cin));
      const stride_t& g = *weight->stride;
      if (g.n != d.n || g.c != d.c || g.h != d.h || g.w != d.w)
        throw DeviceFault(
            fmt::format("npu0 lmem bank {}", weight->operand.laddr / k->params.lmem_bank_size),
            fmt::format("{}: the weight at la 0x{:x} must have the default strides "
                        "({}, {}, {}, {}), not ({}, {}, {}, {}); leave its stride "
                        "NULL",
                        name, weight->operand.laddr, d.n, d.c, d.h, d.w, g.n, g.c, g.h, g.w));
    }
    const Tl w = cap(k, &wt, "weight", name);
    const std::uint32_t cout = cs.depthwise ? in.c : w.c;
    if (cs.depthwise ? (w.n != 1 || w.c != in.c) : (w.n != cin))
      throw DeviceFault(where_of(k, w),
                        fmt::format("{}: shapes do not match: {} for an ifmap of {} channels "
                                    "(conv: (Cin, Cout, kh, kw); depthwise: (1, C, kh, kw))",
                                    name, w.describe(), in.c));
    if (winograd && (cs.kh != 3 || cs.kw != 3))
      throw DeviceFault(where_of(k, w),
                        fmt::format("{}: winograd takes 3x3 kernels only, but {} is {}x{}; use "
                                    "bmk1880_tpu_conv",
                                    name, w.describe(), cs.kh, cs.kw));
    if (cs.sh == 0 || cs.sw == 0 || cs.dh == 0 || cs.dw == 0)
      throw_user_error("{}: stride ({}, {}) and dilation ({}, {}) must be at least 1", name, cs.sh,
                       cs.sw, cs.dh, cs.dw);
    check_shift(cs.rshift_w, "rshift_width", name);
    const bool has_bias = bias != nullptr;
    Tl b;
    if (has_bias) {
      b = cap(k, bias, "bias", name);
      check_bias(k, bias, b, cout, name);
    }
    const std::uint32_t ho = out_dim(k, in, cs.win.Hp(), cs.kh, cs.dh, cs.sh, "H", name);
    const std::uint32_t wo = out_dim(k, in, cs.win.Wp(), cs.kw, cs.dw, cs.sw, "W", name);
    check_out(k, out, in.n, cout, ho, wo, name);
    const bool sg = in.is_signed() || w.is_signed() || has_bias;
    check_result_fmt(out, sg, name);
    const double per_out = static_cast<double>(cs.kh) * cs.kw * (cs.depthwise ? 1 : cin);
    Cost cost = tpu_cost(k, out, per_out);
    if (winograd) {
      const double r = k->spec.params.count("bm.winograd_mac_reduction")
                           ? k->spec.param("bm.winograd_mac_reduction").value
                           : 1.0;
      cost.lane_steps /= std::max(1.0, r);
    }
    return record(k, ENGINE_BD, name, cost, [=](Chip& chip) {
      // Dense copies of the operands (reads check that lmem was written).
      std::vector<std::int32_t> x(std::size_t{in.n} * in.c * in.h * in.w);
      std::vector<std::uint8_t> row(std::max(in.w, out.w));
      for (std::uint32_t n = 0; n < in.n; ++n)
        for (std::uint32_t c = 0; c < in.c; ++c)
          for (std::uint32_t h = 0; h < in.h; ++h) {
            chip.read_row(in, n, c, h, row.data(), name);
            std::int32_t* xr = &x[((std::size_t{n} * in.c + c) * in.h + h) * in.w];
            for (std::uint32_t ww = 0; ww < in.w; ++ww)
              xr[ww] = static_cast<std::int32_t>(widen(row[ww], in.is_signed()));
          }
      const std::uint32_t wc = cs.depthwise ? 1 : cin;
      std::vector<std::int32_t> wv(std::size_t{cout} * wc * cs.kh * cs.kw);
      for (std::uint32_t co = 0; co < cout; ++co)
        for (std::uint32_t ci = 0; ci < wc; ++ci)
          for (std::uint32_t y = 0; y < cs.kh; ++y)
            for (std::uint32_t xx = 0; xx < cs.kw; ++xx)
              wv[((std::size_t{co} * wc + ci) * cs.kh + y) * cs.kw + xx] =
                  static_cast<std::int32_t>(widen(cs.depthwise ? chip.read(w, 0, co, y, xx, name)
                                                               : chip.read(w, ci, co, y, xx, name),
                                                  w.is_signed()));
      std::vector<std::int64_t> bv(cout, 0);
      if (has_bias)
        for (std::uint32_t co = 0; co < cout; ++co)
          bv[co] = widen16(chip.read(b, 1, co, 0, 0, name), chip.read(b, 0, co, 0, 0, name), true);
      std::vector<std::int64_t> rows(cs.kh), cols(cs.kw);
      if (!cs.depthwise) {
        // out[co][p] = sum_k w[co][k] * col[k][p] over im2col columns, as exact integer GEMMs
        // on the host BLAS (ops::sgemm) in chunks of K whose sums stay below 2^24.
        const std::size_t K = std::size_t{cin} * cs.kh * cs.kw, P = std::size_t{ho} * wo;
        std::vector<float> a(std::size_t{cout} * K), col(K * P), part(std::size_t{cout} * P);
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(wv[i]);
        std::vector<std::int64_t> acc(std::size_t{cout} * P);
        const std::size_t chunk = exact_chunk(in.is_signed(), w.is_signed());
        for (std::uint32_t n = 0; n < in.n; ++n) {
          std::fill(col.begin(), col.end(), 0.0f);
          for (std::uint32_t oy = 0; oy < ho; ++oy)
            for (std::uint32_t ox = 0; ox < wo; ++ox)
              for (std::uint32_t ky = 0; ky < cs.kh; ++ky) {
                const std::int64_t r =
                    cs.win.row(std::int64_t{oy} * cs.sh + std::int64_t{ky} * cs.dh);
                if (r < 0) continue;
                for (std::uint32_t kx = 0; kx < cs.kw; ++kx) {
                  const std::int64_t q =
                      cs.win.col(std::int64_t{ox} * cs.sw + std::int64_t{kx} * cs.dw);
                  if (q < 0) continue;
                  for (std::uint32_t ci = 0; ci < cin; ++ci)
                    col[((std::size_t{ci} * cs.kh + ky) * cs.kw + kx) * P + std::size_t{oy} * wo +
                        ox] =
                        static_cast<float>(
                            x[((std::size_t{n} * in.c + ci) * in.h + static_cast<std::size_t>(r)) *
                                  in.w +
                              static_cast<std::size_t>(q)]);
                }
              }
          int_gemm(cout, P, K, a.data(), col.data(), chunk, part, acc);
          for (std::uint32_t co = 0; co < cout; ++co)
            for (std::uint32_t oy = 0; oy < ho; ++oy) {
              for (std::uint32_t ox = 0; ox < wo; ++ox) {
                std::int64_t v = acc[std::size_t{co} * P + std::size_t{oy} * wo + ox] + bv[co];
                if (cs.relu && v < 0) v = 0;
                row[ox] = static_cast<std::uint8_t>(saturate(rshift(v, cs.rshift_w), sg, 8));
              }
              chip.write_row(out, n, co, oy, row.data());
            }
        }
        return;
      }
      for (std::uint32_t n = 0; n < in.n; ++n)
        for (std::uint32_t co = 0; co < cout; ++co)
          for (std::uint32_t oy = 0; oy < ho; ++oy) {
            for (std::uint32_t ky = 0; ky < cs.kh; ++ky)
              rows[ky] = cs.win.row(std::int64_t{oy} * cs.sh + std::int64_t{ky} * cs.dh);
            for (std::uint32_t ox = 0; ox < wo; ++ox) {
              for (std::uint32_t kx = 0; kx < cs.kw; ++kx)
                cols[kx] = cs.win.col(std::int64_t{ox} * cs.sw + std::int64_t{kx} * cs.dw);
              // Depthwise: one channel's window, kh x kw products.
              std::int64_t acc = 0;
              for (std::uint32_t ky = 0; ky < cs.kh; ++ky) {
                if (rows[ky] < 0) continue;
                const std::int32_t* xr =
                    &x[((std::size_t{n} * in.c + co) * in.h + static_cast<std::size_t>(rows[ky])) *
                       in.w];
                const std::int32_t* wr = &wv[(std::size_t{co} * cs.kh + ky) * cs.kw];
                for (std::uint32_t kx = 0; kx < cs.kw; ++kx)
                  if (cols[kx] >= 0) acc += std::int64_t{xr[cols[kx]]} * wr[kx];
              }
              acc += bv[co];
              if (cs.relu && acc < 0) acc = 0;
              row[ox] = static_cast<std::uint8_t>(saturate(rshift(acc, cs.rshift_w), sg, 8));
            }
            chip.write_row(out, n, co, oy, row.data());
          }
    });
  });
}

void* pool_common(void* ctx, const char* name, tensor_lmem* ofmap, tensor_lmem* ifmap,
                  const Window& win_in, std::uint32_t kh, std::uint32_t kw, std::uint32_t sh,
                  std::uint32_t sw, bool is_max, std::int64_t avg_const, int rshift_w) {
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    const Tl in = cap(k, ifmap, "ifmap", name), out = cap(k, ofmap, "ofmap", name);
    check_aligned(k, ifmap, in, true, name);
    check_aligned(k, ofmap, out, true, name);
    if (kh == 0 || kw == 0 || sh == 0 || sw == 0)
      throw_user_error("{}: kernel ({}, {}) and stride ({}, {}) must be at least 1", name, kh, kw,
                       sh, sw);
    check_shift(rshift_w, "rshift_width", name);
    Window win = win_in;
    win.H = in.h;
    win.W = in.w;
    const std::uint32_t ho = out_dim(k, in, win.Hp(), kh, 1, sh, "H", name);
    const std::uint32_t wo = out_dim(k, in, win.Wp(), kw, 1, sw, "W", name);
    check_out(k, out, in.n, in.c, ho, wo, name);
    check_result_fmt(out, in.is_signed(), name);
    const bool sg = in.is_signed();
    return record(k, ENGINE_BD, name, tpu_cost(k, out, double(kh) * kw), [=](Chip& chip) {
      each(out, [&](auto n, auto c, auto oy, auto ox) {
        std::int64_t acc = is_max ? std::numeric_limits<std::int64_t>::min() : 0;
        for (std::uint32_t ky = 0; ky < kh; ++ky)
          for (std::uint32_t kx = 0; kx < kw; ++kx) {
            const std::int64_t r = win.row(std::int64_t{oy} * sh + ky);
            const std::int64_t q = win.col(std::int64_t{ox} * sw + kx);
            // Inserted and padded positions hold zeros (spec 002 "bmk1880 tpu conv").
            const std::int64_t v = (r < 0 || q < 0)
                                       ? 0
                                       : widen(chip.read(in, n, c, static_cast<std::uint32_t>(r),
                                                         static_cast<std::uint32_t>(q), name),
                                               sg);
            acc = is_max ? std::max(acc, v) : acc + v;
          }
        const std::int64_t v = is_max ? acc : rshift(acc * avg_const, rshift_w);
        chip.write(out, n, c, oy, ox, static_cast<std::uint8_t>(saturate(v, sg, 8)));
      });
    });
  });
}

}  // namespace

namespace {

void* impl_tpu_mac(void* ctx, const char* name, const bmk1880_mac_param_t& q) {
  return mac_common(ctx, name, q.res_high, q.res_low, q.res_is_int8, q.a, q.b, false, 0, false,
                    q.lshift_width, q.rshift_width);
}

void* impl_tpu_mac_const(void* ctx, const char* name, const bmk1880_mac_const_param_t& q) {
  const std::int64_t b = const_operand(q.b, q.b_is_signed, 8);
  return mac_common(ctx, name, q.res_high, q.res_low, q.res_is_int8, q.a, nullptr, true, b,
                    q.b_is_signed, q.lshift_width, q.rshift_width);
}

void* impl_tpu_add(void* ctx, const char* name, const bmk1880_add_param_t& q) {
  return addsub(ctx, name, q.res_high, q.res_low, q.a_high, q.a_low, q.b_high, q.b_low, false, 0,
                false, false);
}

void* impl_tpu_add_const(void* ctx, const char* name, const bmk1880_add_const_param_t& q) {
  const std::int64_t b = const_operand(q.b, q.b_is_signed, 16);
  return addsub(ctx, name, q.res_high, q.res_low, q.a_high, q.a_low, nullptr, nullptr, true, b,
                q.b_is_signed, false);
}

void* impl_tpu_sub(void* ctx, const char* name, const bmk1880_sub_param_t& q) {
  return addsub(ctx, name, q.res_high, q.res_low, q.a_high, q.a_low, q.b_high, q.b_low, false, 0,
                false, true);
}

void* impl_tpu_max(void* ctx, const char* name, const bmk1880_max_param_t& q) {
  return maxmin(ctx, name, q.max, q.a, q.b, false, 0, false, true);
}

void* impl_tpu_max_const(void* ctx, const char* name, const bmk1880_max_const_param_t& q) {
  const std::int64_t b = const_operand(q.b, q.b_is_signed, 8);
  return maxmin(ctx, name, q.max, q.a, nullptr, true, b, q.b_is_signed, true);
}

void* impl_tpu_min(void* ctx, const char* name, const bmk1880_min_param_t& q) {
  return maxmin(ctx, name, q.min, q.a, q.b, false, 0, false, false);
}

void* impl_tpu_min_const(void* ctx, const char* name, const bmk1880_min_const_param_t& q) {
  const std::int64_t b = const_operand(q.b, q.b_is_signed, 8);
  return maxmin(ctx, name, q.min, q.a, nullptr, true, b, q.b_is_signed, false);
}

void* impl_tpu_arith_shift(void* ctx, const char* name, const bmk1880_arith_shift_param_t& q) {
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    if (!q.res_high || !q.a_high)
      throw_user_error("{}: a and res are 16-bit; a_high and res_high must be given", name);
    const Tl ah = cap(k, q.a_high, "a_high", name), al = cap(k, q.a_low, "a_low", name);
    const Tl bits = cap(k, q.bits, "bits", name);
    const Tl rh = cap(k, q.res_high, "res_high", name), rl = cap(k, q.res_low, "res_low", name);
    for (const Tl* t : {&al, &bits, &rh, &rl}) same_shape(k, ah, *t, name);
    if (!ah.is_signed() || !al.is_signed() || !bits.is_signed())
      throw_user_error("{}: a (a_high, a_low) and bits must be signed (FMT_I8)", name);
    return record(k, ENGINE_BD, name, tpu_cost(k, rl, 1), [=](Chip& chip) {
      each(ah, [&](auto n, auto c, auto h, auto w) {
        const std::int64_t a =
            widen16(chip.read(ah, n, c, h, w, name), chip.read(al, n, c, h, w, name), true);
        const std::int64_t s = widen(chip.read(bits, n, c, h, w, name), true);
        if (s < -16 || s > 16)
          throw DeviceFault(chip.lane(c % chip.params().npu_num).owner(),
                            fmt::format("{}: {} element ({}, {}, {}, {}) is {}, outside [-16, "
                                        "16]",
                                        name, bits.describe(), n, c, h, w, s));
        // Positive bits shift right (arithmetic), negative bits shift left; saturated to 16 bits.
        write_result(chip, rl, &rh, n, c, h, w, s >= 0 ? a >> s : a * (std::int64_t{1} << -s),
                     true);
      });
    });
  });
}

void* impl_tpu_and_int8(void* ctx, const char* name, const bmk1880_and_int8_param_t& q) {
  return logic8(ctx, name, Logic::and_, q.res, q.a, q.b);
}
void* impl_tpu_or_int8(void* ctx, const char* name, const bmk1880_or_int8_param_t& q) {
  return logic8(ctx, name, Logic::or_, q.res, q.a, q.b);
}
void* impl_tpu_xor_int8(void* ctx, const char* name, const bmk1880_xor_int8_param_t& q) {
  return logic8(ctx, name, Logic::xor_, q.res, q.a, q.b);
}
void* impl_tpu_and_int16(void* ctx, const char* name, const bmk1880_and_int16_param_t& q) {
  return logic16(ctx, name, Logic::and_, q.res_high, q.res_low, q.a_high, q.a_low, q.b_high,
                 q.b_low);
}
void* impl_tpu_or_int16(void* ctx, const char* name, const bmk1880_or_int16_param_t& q) {
  return logic16(ctx, name, Logic::or_, q.res_high, q.res_low, q.a_high, q.a_low, q.b_high,
                 q.b_low);
}
void* impl_tpu_xor_int16(void* ctx, const char* name, const bmk1880_xor_int16_param_t& q) {
  return logic16(ctx, name, Logic::xor_, q.res_high, q.res_low, q.a_high, q.a_low, q.b_high,
                 q.b_low);
}

void* impl_tpu_copy(void* ctx, const char* name, const bmk1880_copy_param_t& q) {
  return copy_common(ctx, name, q.dst, nullptr, q.src, nullptr);
}

void* impl_tpu_copy_with_stride(void* ctx, const char* name,
                                const bmk1880_copy_with_stride_param_t& q) {
  return copy_common(ctx, name, q.dst, &q.dst_stride, q.src, &q.src_stride);
}

void* impl_tpu_mdsum(void* ctx, const char* name, const bmk1880_mdsum_param_t& q) {
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    const Tl a = cap(k, q.a, "a", name), lo = cap(k, q.res_low, "res_low", name);
    const bool wide = q.res_high != nullptr;
    const Tl hi = wide ? cap(k, q.res_high, "res_high", name) : lo;
    // The sum of each channel over N, H and W, into res of shape (1, C, 1, 1) (Tessera's
    // reading: spec 002 prints only the parameters).
    for (const Tl* r : {&lo, &hi})
      if (r->n != 1 || r->c != a.c || r->h != 1 || r->w != 1)
        throw DeviceFault(where_of(k, *r),
                          fmt::format("{}: shapes do not match: the sum of {} has shape (1, {}, "
                                      "1, 1), but {}",
                                      name, a.describe(), a.c, r->describe()));
    if ((wide ? hi : lo).is_signed() != a.is_signed())
      throw_user_error("{}: res and a must both be signed or both unsigned", name);
    const bool sg = a.is_signed();
    return record(k, ENGINE_BD, name, tpu_cost(k, a, 1), [=](Chip& chip) {
      for (std::uint32_t c = 0; c < a.c; ++c) {
        std::int64_t acc = 0;
        for (std::uint32_t n = 0; n < a.n; ++n)
          for (std::uint32_t h = 0; h < a.h; ++h)
            for (std::uint32_t w = 0; w < a.w; ++w)
              acc += widen(chip.read(a, n, c, h, w, name), sg);
        write_result(chip, lo, wide ? &hi : nullptr, 0, c, 0, 0, acc, sg);
      }
    });
  });
}

void* impl_tpu_lut(void* ctx, const char* name, const bmk1880_lut_param_t& q) {
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    const Tl in = cap(k, q.ifmap, "ifmap", name), out = cap(k, q.ofmap, "ofmap", name);
    const Tl table = cap(k, q.table, "table", name);
    same_shape(k, in, out, name);
    const std::uint32_t npu = k->params.npu_num;
    if (table.matrix || table.n != 1 || table.c != npu || table.h != 16 || table.w != 16)
      throw DeviceFault(where_of(k, table),
                        fmt::format("{}: the table must be of shape (1, {}, 16, 16): 256 entries "
                                    "copied to every lane (spec 002 'bmk1880 tpu lut'); {} is not",
                                    name, npu, table.describe()));
    return record(k, ENGINE_BD, name, tpu_cost(k, out, 1), [=](Chip& chip) {
      each(in, [&](auto n, auto c, auto h, auto w) {
        const std::uint8_t idx = chip.read(in, n, c, h, w, name);
        chip.write(out, n, c, h, w, chip.read(table, 0, c % npu, idx / 16u, idx % 16u, name));
      });
    });
  });
}

void* impl_tpu_relu(void* ctx, const char* name, const bmk1880_relu_param_t& q) {
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    const Tl in = cap(k, q.ifmap, "ifmap", name), out = cap(k, q.ofmap, "ofmap", name);
    same_shape(k, in, out, name);
    check_result_fmt(out, in.is_signed(), name);
    return record(k, ENGINE_BD, name, tpu_cost(k, out, 1), [=](Chip& chip) {
      each(in, [&](auto n, auto c, auto h, auto w) {
        const std::int64_t v = widen(chip.read(in, n, c, h, w, name), in.is_signed());
        chip.write(out, n, c, h, w, static_cast<std::uint8_t>(std::max<std::int64_t>(0, v)));
      });
    });
  });
}

// The ConvSpec of a conv, winograd or depthwise parameter struct (the fields it has).
template <typename P>
ConvSpec conv_spec(const P& q) {
  ConvSpec cs;
  cs.win = window_of(Tl{}, q);
  cs.rshift_w = q.rshift_width;
  if constexpr (requires { q.stride_h; }) {
    cs.sh = q.stride_h;
    cs.sw = q.stride_w;
  }
  if constexpr (requires { q.dilation_h; }) {
    cs.dh = q.dilation_h;
    cs.dw = q.dilation_w;
  }
  if constexpr (requires { q.relu_enable; }) cs.relu = q.relu_enable;
  return cs;
}

template <typename P>
void* conv_op(void* ctx, const char* name, const P& q, bool winograd, bool depthwise) {
  ConvSpec cs = conv_spec(q);
  cs.depthwise = depthwise;
  return conv_common(ctx, name, q.ofmap, q.ifmap, q.weight, q.bias, cs, winograd);
}

void* impl_tpu_conv(void* ctx, const char* name, const bmk1880_conv_param_t& q) {
  return conv_op(ctx, name, q, false, false);
}

void* impl_tpu_winograd(void* ctx, const char* name, const bmk1880_winograd_param_t& q) {
  return conv_op(ctx, name, q, true, false);
}

void* impl_tpu_depthwise(void* ctx, const char* name, const bmk1880_depthwise_param_t& q) {
  return conv_op(ctx, name, q, false, true);
}

void* impl_tpu_max_pooling(void* ctx, const char* name, const bmk1880_max_pooling_param_t& q) {
  return pool_common(ctx, name, q.ofmap, q.ifmap, window_of(Tl{}, q), q.kh, q.kw, q.stride_h,
                     q.stride_w, true, 0, 0);
}

void* impl_tpu_avg_pooling(void* ctx, const char* name, const bmk1880_avg_pooling_param_t& q) {
  return pool_common(ctx, name, q.ofmap, q.ifmap, window_of(Tl{}, q), q.kh, q.kw, q.stride_h,
                     q.stride_w, false, q.avg_pooling_const, q.rshift_width);
}

void* impl_tpu_matrix_mac(void* ctx, const char* name, const bmk1880_matrix_mac_param_t& q) {
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    if ((q.ctrls & ~static_cast<ctrl_t>(CTRL_RELU | CTRL_RA)) ||
        ((q.ctrls & CTRL_RELU) && (q.ctrls & CTRL_RA)))
      throw_user_error(
          "{}: ctrls 0x{:x}: CTRL_RELU or CTRL_RA may be set, not both, and nothing "
          "else",
          name, q.ctrls);
    const Tl l = cap(k, q.left, "left", name), r = cap(k, q.right, "right", name);
    const Tl res = cap(k, q.res, "res", name);
    for (const auto& [t, tl] :
         {std::pair{q.left, l}, std::pair{q.right, r}, std::pair{q.res, res}}) {
      if (!tl.matrix) throw_user_error("{}: {} must be a matrix (shape_t2)", name, tl.role);
      check_aligned(k, t, tl, true, name);
    }
    const bool ra = (q.ctrls & CTRL_RA) != 0, relu = (q.ctrls & CTRL_RELU) != 0;
    const bool res16 = ra || !q.res_is_int8;
    const std::uint32_t R = l.rows, K = l.cols, C = r.cols;
    if (r.rows != K || res.cols != C || res.rows != (res16 ? 2 * R : R))
      throw DeviceFault(where_of(k, res),
                        fmt::format("{}: shapes do not match: left {}x{}, right {}x{}, res {}x{} "
                                    "(res must be {}x{}{})",
                                    name, R, K, r.rows, C, res.rows, res.cols, res16 ? 2 * R : R, C,
                                    res16 ? ": 16-bit results take two rows each" : ""));
    const bool has_bias = q.bias != nullptr;
    Tl b;
    if (has_bias) {
      b = cap(k, q.bias, "bias", name);
      if (!b.matrix || b.rows != 2 || b.cols != C)
        throw DeviceFault(where_of(k, b),
                          fmt::format("{}: the bias is a 16-bit matrix (1, {}) held as a (2, {}) "
                                      "8-bit matrix; {} does not match",
                                      name, C, C, b.describe()));
      check_aligned(k, q.bias, b, true, name);
    }
    check_shift(q.lshift_width, "lshift_width", name);
    check_shift(q.rshift_width, "rshift_width", name);
    const bool sg = l.is_signed() || r.is_signed() || has_bias;
    check_result_fmt(res, sg, name);
    const int ls = q.lshift_width, rs = q.rshift_width;
    const bool int8 = q.res_is_int8;
    Tl produced = res;  // the R rows the TPU computes (a 16-bit result writes two bytes each)
    produced.n = R;
    produced.rows = R;
    Cost cost = tpu_cost(k, produced, K);
    cost.macs = double(R) * K * C;
    return record(k, ENGINE_BD, name, cost, [=](Chip& chip) {
      std::vector<float> lv(std::size_t{R} * K), rv(std::size_t{K} * C), part(std::size_t{R} * C);
      for (std::uint32_t i = 0; i < R; ++i)
        for (std::uint32_t kk = 0; kk < K; ++kk)
          lv[std::size_t{i} * K + kk] =
              static_cast<float>(widen(chip.read_m(l, i, kk, name), l.is_signed()));
      for (std::uint32_t kk = 0; kk < K; ++kk)
        for (std::uint32_t j = 0; j < C; ++j)
          rv[std::size_t{kk} * C + j] =
              static_cast<float>(widen(chip.read_m(r, kk, j, name), r.is_signed()));
      std::vector<std::int64_t> prod(std::size_t{R} * C);
      int_gemm(R, C, K, lv.data(), rv.data(), exact_chunk(l.is_signed(), r.is_signed()), part,
               prod);
      for (std::uint32_t i = 0; i < R; ++i)
        for (std::uint32_t j = 0; j < C; ++j) {
          std::int64_t acc = prod[std::size_t{i} * C + j];
          if (has_bias)
            acc += widen16(chip.read_m(b, 1, j, name), chip.read_m(b, 0, j, name), true);
          if (ra)
            acc += widen16(chip.read_m(res, R + i, j, name), chip.read_m(res, i, j, name),
                           res.is_signed()) *
                   (std::int64_t{1} << ls);
          if (relu && acc < 0) acc = 0;
          const std::int64_t v = rshift(acc, rs);
          if (int8) {
            chip.write_m(res, i, j, static_cast<std::uint8_t>(saturate(v, sg, 8)));
          } else {
            const std::int64_t v16 = saturate(v, sg, 16);
            chip.write_m(res, i, j, static_cast<std::uint8_t>(v16 & 0xff));
            chip.write_m(res, R + i, j, static_cast<std::uint8_t>((v16 >> 8) & 0xff));
          }
        }
    });
  });
}

void* impl_tpu_matrix_mac_2(void* ctx, const char* name, const bmk1880_matrix_mac_2_param_t& q) {
  return op(ctx, name, [&](bmk1880_context* k) -> void* {
    const Tl res = cap(k, q.res, "res", name), l = cap(k, q.left, "left", name);
    const Tl r = cap(k, q.right, "right", name);
    auto expect = [&](const Tl& t, std::uint32_t n, std::uint32_t c, std::uint32_t h,
                      std::uint32_t w) {
      if (t.matrix || t.n != n || t.c != c || t.h != h || t.w != w)
        throw DeviceFault(where_of(k, t),
                          fmt::format("{}: {} must be a tensor of shape ({}, {}, {}, {}) (spec 002 "
                                      "'bmk1880 tpu matrix mac 2')",
                                      name, t.describe(), n, c, h, w));
    };
    expect(res, 1, 256, 1, 256);
    expect(l, 1, 256, 1, 256);
    expect(r, 256, 16, 1, 16);
    const bool sg = l.is_signed() || r.is_signed();
    check_result_fmt(res, sg, name);
    Cost cost = tpu_cost(k, res, 256);
    return record(k, ENGINE_BD, name, cost, [=](Chip& chip) {
      // left (i, k) = left(0, i, 0, k); right (k, j) = right(k, j / 16, 0, j % 16).
      std::vector<float> lv(256 * 256), rv(256 * 256), part(256 * 256);
      for (std::uint32_t i = 0; i < 256; ++i)
        for (std::uint32_t kk = 0; kk < 256; ++kk) {
          lv[i * 256 + kk] =
              static_cast<float>(widen(chip.read(l, 0, i, 0, kk, name), l.is_signed()));
          rv[kk * 256 + i] =
              static_cast<float>(widen(chip.read(r, kk, i / 16, 0, i % 16, name), r.is_signed()));
        }
      std::vector<std::int64_t> prod(256 * 256);
      int_gemm(256, 256, 256, lv.data(), rv.data(), exact_chunk(l.is_signed(), r.is_signed()), part,
               prod);
      for (std::uint32_t i = 0; i < 256; ++i)
        for (std::uint32_t j = 0; j < 256; ++j) {
          const std::int64_t acc = prod[i * 256 + j];
          chip.write(res, 0, i, 0, j, static_cast<std::uint8_t>(saturate(acc, sg, 8)));
        }
    });
  });
}

}  // namespace

// ---- the C entry points, and command buffers as bytes ----
// Each entry point records through its impl_ function and attaches the call, serialised, to
// the command, so that bmk1880_acquire_cmdbuf can write a self-contained command buffer that
// bm_send_cmdbuf (or a BMNet model) replays later, in another context.

namespace tessera::bm {
namespace {

enum Op : std::uint16_t {
  op_gdma_load = 1,
  op_gdma_store,
  op_gdma_load_stride,
  op_gdma_store_stride,
  op_gdma_copy_gmem,
  op_gdma_copy_lmem,
  op_gdma_lrn_shift,
  op_tpu_mul = 32,
  op_tpu_mul_const,
  op_tpu_mac,
  op_tpu_mac_const,
  op_tpu_add,
  op_tpu_add_const,
  op_tpu_sub,
  op_tpu_max,
  op_tpu_max_const,
  op_tpu_min,
  op_tpu_min_const,
  op_tpu_arith_shift,
  op_tpu_and_int8,
  op_tpu_and_int16,
  op_tpu_or_int8,
  op_tpu_or_int16,
  op_tpu_xor_int8,
  op_tpu_xor_int16,
  op_tpu_copy,
  op_tpu_copy_with_stride,
  op_tpu_mdsum,
  op_tpu_lut,
  op_tpu_relu,
  op_tpu_conv,
  op_tpu_winograd,
  op_tpu_depthwise,
  op_tpu_max_pooling,
  op_tpu_avg_pooling,
  op_tpu_matrix_mac,
  op_tpu_matrix_mac_2,
};

struct Writer {
  std::vector<std::uint8_t>& out;
  template <typename T>
  void pod(const T& v) {
    bytes(&v, sizeof(T));
  }
  void bytes(const void* data, std::size_t n) {
    const std::size_t at = out.size();
    out.resize(at + n);
    std::memcpy(out.data() + at, data, n);
  }
  void tensor(const tensor_lmem* t) {
    pod(static_cast<std::uint8_t>(t != nullptr));
    if (!t) return;
    tensor_lmem copy = *t;
    copy.stride = nullptr;
    pod(copy);
    pod(static_cast<std::uint8_t>(t->stride != nullptr));
    if (t->stride) pod(*t->stride);
  }
};

struct Arena {
  std::deque<tensor_lmem> tensors;
  std::deque<stride_t> strides;
};

struct Reader {
  const std::uint8_t* p;
  std::size_t left;
  template <typename T>
  T pod() {
    if (left < sizeof(T))
      throw_user_error(
          "the command buffer is truncated or corrupt (a command ends early); pass "
          "the buffer and size bmk1880_acquire_cmdbuf returned");
    T v;
    std::memcpy(&v, p, sizeof(T));
    p += sizeof(T);
    left -= sizeof(T);
    return v;
  }
  tensor_lmem* tensor(Arena& a) {
    if (!pod<std::uint8_t>()) return nullptr;
    tensor_lmem& t = a.tensors.emplace_back(pod<tensor_lmem>());
    // The bool's byte came from outside: make it a valid bool before anything reads it.
    unsigned char aligned = 0;
    std::memcpy(&aligned, &t.aligned, 1);
    t.aligned = aligned != 0;
    t.stride = pod<std::uint8_t>() ? &a.strides.emplace_back(pod<stride_t>()) : nullptr;
    return &t;
  }
};

template <typename P, typename Fields>
void* attach(void* handle, Op op, const P* p, Fields&& fields) {
  if (!handle) return handle;
  std::vector<std::uint8_t> out;
  Writer w{out};
  P q = *p;
  w.pod(q);
  fields(q, [&](tensor_lmem*& t) { w.tensor(t); });
  auto* c = static_cast<Command*>(handle);
  c->op = op;
  c->payload = std::move(out);
  return handle;
}

struct GdmaArgs {
  u64 gaddr;
  stride_t stride;
  ctrl_t ctrls;
};
struct LrnArgs {
  std::uint8_t right;
  std::int32_t step;
};
struct CopyGmemArgs {
  tensor_gmem dst, src;
  ctrl_t ctrls;
};

void* attach_bytes(void* handle, Op op, std::vector<std::uint8_t> bytes) {
  if (handle) {
    auto* c = static_cast<Command*>(handle);
    c->op = op;
    c->payload = std::move(bytes);
  }
  return handle;
}

std::vector<std::uint8_t> gdma_bytes(const tensor_lmem* t, u64 gaddr, const stride_t* s, ctrl_t c) {
  std::vector<std::uint8_t> out;
  Writer w{out};
  w.pod(GdmaArgs{gaddr, s ? *s : stride_t{}, c});
  w.tensor(t);
  return out;
}

// A GDMA load or store between gmem and lmem, recorded with its call attached.
void* gdma_op(void* ctx, Op op, const char* name, tensor_lmem* t, u64 gaddr, const stride_t* stride,
              ctrl_t ctrls, bool load) {
  void* h = gdma_gl(ctx, name, t, gaddr, stride, ctrls, load);
  return h ? attach_bytes(h, op, gdma_bytes(t, gaddr, stride, ctrls)) : h;
}

}  // namespace
}  // namespace tessera::bm

// X(name, param type, the tensor_lmem* members)
#define TESSERA_BM_TPU_OPS(X)                                                                     \
  X(tpu_mul, bmk1880_mul_param_t, f(q.res_high); f(q.res_low); f(q.a); f(q.b);)                   \
  X(tpu_mul_const, bmk1880_mul_const_param_t, f(q.res_high); f(q.res_low); f(q.a);)               \
  X(tpu_mac, bmk1880_mac_param_t, f(q.res_high); f(q.res_low); f(q.a); f(q.b);)                   \
  X(tpu_mac_const, bmk1880_mac_const_param_t, f(q.res_high); f(q.res_low); f(q.a);)               \
  X(tpu_add, bmk1880_add_param_t, f(q.res_high); f(q.res_low); f(q.a_high); f(q.a_low);           \
    f(q.b_high); f(q.b_low);)                                                                     \
  X(tpu_add_const, bmk1880_add_const_param_t, f(q.res_high); f(q.res_low); f(q.a_high);           \
    f(q.a_low);)                                                                                  \
  X(tpu_sub, bmk1880_sub_param_t, f(q.res_high); f(q.res_low); f(q.a_high); f(q.a_low);           \
    f(q.b_high); f(q.b_low);)                                                                     \
  X(tpu_max, bmk1880_max_param_t, f(q.max); f(q.a); f(q.b);)                                      \
  X(tpu_max_const, bmk1880_max_const_param_t, f(q.max); f(q.a);)                                  \
  X(tpu_min, bmk1880_min_param_t, f(q.min); f(q.a); f(q.b);)                                      \
  X(tpu_min_const, bmk1880_min_const_param_t, f(q.min); f(q.a);)                                  \
  X(tpu_arith_shift, bmk1880_arith_shift_param_t, f(q.res_high); f(q.res_low); f(q.a_high);       \
    f(q.a_low); f(q.bits);)                                                                       \
  X(tpu_and_int8, bmk1880_and_int8_param_t, f(q.res); f(q.a); f(q.b);)                            \
  X(tpu_and_int16, bmk1880_and_int16_param_t, f(q.res_high); f(q.res_low); f(q.a_high);           \
    f(q.a_low); f(q.b_high); f(q.b_low);)                                                         \
  X(tpu_or_int8, bmk1880_or_int8_param_t, f(q.res); f(q.a); f(q.b);)                              \
  X(tpu_or_int16, bmk1880_or_int16_param_t, f(q.res_high); f(q.res_low); f(q.a_high); f(q.a_low); \
    f(q.b_high); f(q.b_low);)                                                                     \
  X(tpu_xor_int8, bmk1880_xor_int8_param_t, f(q.res); f(q.a); f(q.b);)                            \
  X(tpu_xor_int16, bmk1880_xor_int16_param_t, f(q.res_high); f(q.res_low); f(q.a_high);           \
    f(q.a_low); f(q.b_high); f(q.b_low);)                                                         \
  X(tpu_copy, bmk1880_copy_param_t, f(q.dst); f(q.src);)                                          \
  X(tpu_copy_with_stride, bmk1880_copy_with_stride_param_t, f(q.dst); f(q.src);)                  \
  X(tpu_mdsum, bmk1880_mdsum_param_t, f(q.res_high); f(q.res_low); f(q.a);)                       \
  X(tpu_lut, bmk1880_lut_param_t, f(q.ofmap); f(q.ifmap); f(q.table);)                            \
  X(tpu_relu, bmk1880_relu_param_t, f(q.ofmap); f(q.ifmap);)                                      \
  X(tpu_conv, bmk1880_conv_param_t, f(q.ofmap); f(q.ifmap); f(q.weight); f(q.bias);)              \
  X(tpu_winograd, bmk1880_winograd_param_t, f(q.ofmap); f(q.ifmap); f(q.weight); f(q.bias);)      \
  X(tpu_depthwise, bmk1880_depthwise_param_t, f(q.ofmap); f(q.ifmap); f(q.weight); f(q.bias);)    \
  X(tpu_max_pooling, bmk1880_max_pooling_param_t, f(q.ofmap); f(q.ifmap);)                        \
  X(tpu_avg_pooling, bmk1880_avg_pooling_param_t, f(q.ofmap); f(q.ifmap);)                        \
  X(tpu_matrix_mac, bmk1880_matrix_mac_param_t, f(q.res); f(q.left); f(q.right); f(q.bias);)      \
  X(tpu_matrix_mac_2, bmk1880_matrix_mac_2_param_t, f(q.res); f(q.left); f(q.right);)

extern "C" {

#define TESSERA_BM_DEFINE(name, P, FIELDS)                                                     \
  bmk1880_op_t* bmk1880_##name(void* ctx, const P* p) {                                        \
    void* h = with_param(ctx, "bmk1880_" #name, p,                                             \
                         [&](const char* n, const P& q) { return impl_##name(ctx, n, q); });   \
    return static_cast<bmk1880_op_t*>(attach(h, op_##name, p, [](P& q, auto&& f) { FIELDS })); \
  }
TESSERA_BM_TPU_OPS(TESSERA_BM_DEFINE)
#undef TESSERA_BM_DEFINE

bmk1880_op_t* bmk1880_gdma_load(void* ctx, tensor_lmem* t, u64 gaddr, ctrl_t ctrls) {
  return static_cast<bmk1880_op_t*>(
      gdma_op(ctx, op_gdma_load, "bmk1880_gdma_load", t, gaddr, nullptr, ctrls, true));
}
bmk1880_op_t* bmk1880_gdma_store(void* ctx, tensor_lmem* t, u64 gaddr, ctrl_t ctrls) {
  return static_cast<bmk1880_op_t*>(
      gdma_op(ctx, op_gdma_store, "bmk1880_gdma_store", t, gaddr, nullptr, ctrls, false));
}
bmk1880_op_t* bmk1880_gdma_load_stride(void* ctx, tensor_lmem* t, u64 gaddr, stride_t stride,
                                       ctrl_t ctrls) {
  return static_cast<bmk1880_op_t*>(gdma_op(ctx, op_gdma_load_stride, "bmk1880_gdma_load_stride", t,
                                            gaddr, &stride, ctrls, true));
}
bmk1880_op_t* bmk1880_gdma_store_stride(void* ctx, tensor_lmem* t, u64 gaddr, stride_t stride,
                                        ctrl_t ctrls) {
  return static_cast<bmk1880_op_t*>(gdma_op(ctx, op_gdma_store_stride, "bmk1880_gdma_store_stride",
                                            t, gaddr, &stride, ctrls, false));
}
bmk1880_op_t* bmk1880_gdma_copy_gmem(void* ctx, tensor_gmem* dst, tensor_gmem* src, ctrl_t ctrls) {
  void* h = impl_gdma_copy_gmem(ctx, dst, src, ctrls);
  if (!h) return nullptr;
  std::vector<std::uint8_t> out;
  Writer{out}.pod(CopyGmemArgs{*dst, *src, ctrls});
  return static_cast<bmk1880_op_t*>(attach_bytes(h, op_gdma_copy_gmem, std::move(out)));
}
bmk1880_op_t* bmk1880_gdma_copy_lmem(void* ctx, tensor_lmem* dst, tensor_lmem* src) {
  void* h = impl_gdma_copy_lmem(ctx, dst, src);
  if (!h) return nullptr;
  std::vector<std::uint8_t> out;
  Writer w{out};
  w.tensor(dst);
  w.tensor(src);
  return static_cast<bmk1880_op_t*>(attach_bytes(h, op_gdma_copy_lmem, std::move(out)));
}
bmk1880_op_t* bmk1880_gdma_lrn_shift(void* ctx, tensor_lmem* dst, tensor_lmem* src,
                                     bool right_shift, int lrn_step) {
  void* h = impl_gdma_lrn_shift(ctx, dst, src, right_shift, lrn_step);
  if (!h) return nullptr;
  std::vector<std::uint8_t> out;
  Writer w{out};
  w.pod(LrnArgs{static_cast<std::uint8_t>(right_shift), lrn_step});
  w.tensor(dst);
  w.tensor(src);
  return static_cast<bmk1880_op_t*>(attach_bytes(h, op_gdma_lrn_shift, std::move(out)));
}

}  // extern "C"

namespace tessera::bm {
namespace {

// Replays one serialised call into context k; returns the command's handle.
void* replay(bmk1880_context* k, std::uint16_t op, Reader& r, Arena& arena, std::uint64_t neuron,
             std::uint64_t weight) {
  auto reloc = [&](u64 gaddr, ctrl_t ctrls) {
    return gaddr + ((ctrls & CTRL_NEURON) ? neuron : 0) + ((ctrls & CTRL_WEIGHT) ? weight : 0);
  };
  switch (op) {
#define TESSERA_BM_DECODE(name, P, FIELDS)                  \
  case op_##name: {                                         \
    P q = r.pod<P>();                                       \
    auto f = [&](tensor_lmem*& t) { t = r.tensor(arena); }; \
    FIELDS                                                  \
    return bmk1880_##name(k, &q);                           \
  }
    TESSERA_BM_TPU_OPS(TESSERA_BM_DECODE)
#undef TESSERA_BM_DECODE
    case op_gdma_load:
    case op_gdma_store:
    case op_gdma_load_stride:
    case op_gdma_store_stride: {
      const GdmaArgs a = r.pod<GdmaArgs>();
      tensor_lmem* t = r.tensor(arena);
      const u64 g = reloc(a.gaddr, a.ctrls);
      if (op == op_gdma_load) return bmk1880_gdma_load(k, t, g, a.ctrls);
      if (op == op_gdma_store) return bmk1880_gdma_store(k, t, g, a.ctrls);
      if (op == op_gdma_load_stride) return bmk1880_gdma_load_stride(k, t, g, a.stride, a.ctrls);
      return bmk1880_gdma_store_stride(k, t, g, a.stride, a.ctrls);
    }
    case op_gdma_copy_gmem: {
      CopyGmemArgs a = r.pod<CopyGmemArgs>();
      return bmk1880_gdma_copy_gmem(k, &a.dst, &a.src, a.ctrls);
    }
    case op_gdma_copy_lmem: {
      tensor_lmem* d = r.tensor(arena);
      tensor_lmem* s = r.tensor(arena);
      return bmk1880_gdma_copy_lmem(k, d, s);
    }
    case op_gdma_lrn_shift: {
      const LrnArgs a = r.pod<LrnArgs>();
      tensor_lmem* d = r.tensor(arena);
      tensor_lmem* s = r.tensor(arena);
      return bmk1880_gdma_lrn_shift(k, d, s, a.right != 0, a.step);
    }
    default:
      throw_user_error(
          "the command buffer holds an unknown operation {}; it is not from "
          "bmk1880_acquire_cmdbuf",
          op);
  }
}

}  // namespace

std::vector<std::uint8_t> encode_cmdbuf(const bmk1880_context* k) {
  std::vector<std::uint8_t> out;
  Writer w{out};
  for (std::size_t i = k->first_current; i < k->commands.size(); ++i) {
    const Command& c = k->commands[i];
    TESSERA_CHECK(c.op != 0, "command {} ({}) has no encoding", c.serial, c.name);
    std::vector<std::uint8_t> body;
    Writer b{body};
    b.pod(c.op);
    b.pod(static_cast<std::uint32_t>(c.deps.size()));
    for (const Command* d : c.deps)
      b.pod(static_cast<std::uint32_t>(d->serial - (k->base_serial + k->first_current)));
    b.bytes(c.payload.data(), c.payload.size());
    b.pod(fnv1a64(body.data(), body.size()));
    cmd_hdr_t hdr{};
    hdr.magic = BM_CMB_HDR_MAGIC;
    hdr.len = static_cast<u8>(std::min<std::size_t>(body.size(), 255));
    hdr.engine_id = static_cast<u8>(c.engine);
    hdr.mask = static_cast<u32>(body.size());
    w.pod(hdr);
    w.bytes(body.data(), body.size());
  }
  return out;
}

void run_cmdbuf(Chip& chip, const std::uint8_t* buf, std::size_t size, std::uint64_t neuron_base,
                std::uint64_t weight_base) {
  bmk1880_context* k = new_kernel(chip.device().spec());
  struct Drop {
    bmk1880_context* k;
    ~Drop() { destroy_kernel(k); }
  } drop{k};
  Reader r{buf, size};
  Arena arena;
  std::vector<std::vector<std::uint32_t>> deps;
  std::vector<Command*> handles;
  while (r.left > 0) {
    const cmd_hdr_t hdr = r.pod<cmd_hdr_t>();
    if (hdr.magic != BM_CMB_HDR_MAGIC || hdr.mask > r.left)
      throw_user_error(
          "byte {} of the command buffer is not a command header from "
          "bmk1880_acquire_cmdbuf",
          size - r.left - sizeof(cmd_hdr_t));
    constexpr std::size_t kSum = sizeof(std::uint64_t);
    if (hdr.mask < kSum)
      throw_user_error("command {} of the command buffer is truncated", handles.size());
    std::uint64_t sum = 0;
    std::memcpy(&sum, r.p + hdr.mask - kSum, kSum);
    if (fnv1a64(r.p, hdr.mask - kSum) != sum)
      throw_user_error(
          "command {} of the command buffer is corrupted (its checksum does not "
          "match); pass the bytes bmk1880_acquire_cmdbuf returned",
          handles.size());
    Reader body{r.p, hdr.mask - kSum};
    r.p += hdr.mask;
    r.left -= hdr.mask;
    const auto op = body.pod<std::uint16_t>();
    const auto ndeps = body.pod<std::uint32_t>();
    if (ndeps > body.left / sizeof(std::uint32_t))
      throw_user_error(
          "command {} of the command buffer is corrupt: it names {} dependencies in "
          "{} bytes",
          handles.size(), ndeps, body.left);
    std::vector<std::uint32_t>& d = deps.emplace_back(ndeps);
    for (auto& x : d) x = body.pod<std::uint32_t>();
    tessera_bm_clear_error();
    void* h = replay(k, op, body, arena, neuron_base, weight_base);
    if (!h) {
      const std::string why = fmt::format("command {} of the command buffer: {}", handles.size(),
                                          tessera_bm_last_error());
      if (tessera_bm_last_error_kind() == TESSERA_BM_DEVICE_FAULT)
        throw DeviceFault("bmk1880 cmdbuf", why);
      throw UserError(why);
    }
    handles.push_back(static_cast<Command*>(h));
  }
  for (std::size_t i = 0; i < handles.size(); ++i) {
    handles[i]->deps.clear();
    for (std::uint32_t x : deps[i]) {
      if (x >= handles.size())
        throw_user_error(
            "command {} of the command buffer waits for command {}, which it does "
            "not hold",
            i, x);
      handles[i]->deps.push_back(handles[x]);
    }
  }
  submit(k, chip);
}

}  // namespace tessera::bm
