// The MME: values through the deterministic host GEMM (ops::sgemm, OpenBLAS) and convolution
// (ops::host_conv, oneDNN) on f32 views of the operands (the same bits for any host thread
// count), time from the preset.
#include "tessera/targets/tpc/mme.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/ops/gemm.h"
#include "tessera/ops/host_conv.h"
#include "tessera/sim/scheduler.h"

namespace tessera::tpc {

namespace {

// The modeled MME cuts a convolution into im2col blocks of at most this many floats, one GEMM
// each (its "mme.gemms" count).
constexpr std::size_t kColumnBlockFloats = std::size_t{1} << 22;

void check_tensor(const char* op, const char* role, const DeviceTensor& t, DType dtype) {
  if (!t.buffer)
    throw_user_error("MME {}: {} is not allocated; pass a DeviceTensor over a live buffer", op,
                     role);
  if (t.dtype != DType::f32 && t.dtype != DType::bf16)
    throw_user_error("MME {}: {} is {}; the MME takes f32 or bf16 (cast it first)", op, role,
                     dtype_name(t.dtype));
  if (t.dtype != dtype)
    throw_user_error("MME {}: {} is {} but the other operands are {}; use one data type", op, role,
                     dtype_name(t.dtype), dtype_name(dtype));
  if (t.strides.rank() != 0 && !(t.strides == Strides(t.shape)))
    throw_user_error("MME {}: {} {} has non-dense strides; the MME reads dense tensors", op, role,
                     t.shape.to_string());
}

std::size_t elements(const DeviceTensor& t) {
  return static_cast<std::size_t>(t.shape.element_count());
}

void check_fits(runtime::Device& device, const char* op, const char* role, const DeviceTensor& t) {
  const std::size_t need = t.byte_offset + elements(t) * dtype_size(t.dtype);
  if (need > t.buffer.bytes)
    throw_user_error("MME {}: {} {} needs {} bytes from offset {} but its buffer holds {}", op,
                     role, t.shape.to_string(), elements(t) * dtype_size(t.dtype), t.byte_offset,
                     t.buffer.bytes);
  (void)device;
}

// Operand values widened to f32 (bf16 converts exactly).
std::vector<float> read_f32(runtime::Device& device, const DeviceTensor& t) {
  const std::size_t n = elements(t);
  std::vector<float> v(n);
  if (n == 0) return v;  // an empty operand (MatMul with K = 0) has no bytes to read
  const std::byte* src = device.data(t.buffer) + t.byte_offset;
  if (t.dtype == DType::f32) {
    std::memcpy(v.data(), src, n * 4);
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      std::uint16_t bits;
      std::memcpy(&bits, src + 2 * i, 2);
      v[i] = bf16_bits_to_f32(bits);
    }
  }
  return v;
}

// Results rounded to the output type (RNE for bf16).
void write_f32(runtime::Device& device, const DeviceTensor& t, const std::vector<float>& v) {
  if (v.empty()) return;
  std::byte* dst = device.data(t.buffer) + t.byte_offset;
  if (t.dtype == DType::f32) {
    std::memcpy(dst, v.data(), v.size() * 4);
  } else {
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::uint16_t bits = f32_to_bf16_bits(v[i]);
      std::memcpy(dst + 2 * i, &bits, 2);
    }
  }
}

// An f32 operand as floats where it lies; a bf16 one (or an f32 one at an offset floats cannot
// be read at) widened into `copy`.
const float* f32_view(runtime::Device& device, const DeviceTensor& t, std::vector<float>& copy) {
  if (t.dtype == DType::f32 && t.byte_offset % alignof(float) == 0)
    return reinterpret_cast<const float*>(device.data(t.buffer) + t.byte_offset);
  copy = read_f32(device, t);
  return copy.data();
}

// Whether the MME can accumulate into the output's own bytes: f32, float-aligned, and sharing no
// byte with an operand (an in-place call keeps its operands intact until the end).
bool writable_in_place(runtime::Device& device, const DeviceTensor& out,
                       std::initializer_list<const DeviceTensor*> operands) {
  if (out.dtype != DType::f32 || out.byte_offset % alignof(float) != 0) return false;
  const auto range = [&](const DeviceTensor& t) {
    const auto begin = reinterpret_cast<std::uintptr_t>(device.data(t.buffer) + t.byte_offset);
    return std::make_pair(begin, begin + elements(t) * dtype_size(t.dtype));
  };
  const auto [ob, oe] = range(out);
  for (const DeviceTensor* t : operands) {
    if (!t) continue;
    const auto [b, e] = range(*t);
    if (b < oe && ob < e) return false;
  }
  return true;
}

struct ConvGeometry {
  std::int64_t c_in, wi, hi, wo, kw, kh, cg;
  const MmeConvParams& p;
};

// One output row (all ow, all channels) of a depthwise convolution: for each output, acc starts
// at +0 and takes fma(x, w, acc) over (kh, kw) in column order, padding reading 0, then adds the
// bias (or +0): the operations, in order, of the one-column im2col GEMM it replaces (OpenBLAS's
// sgemm kernel accumulates a dot product with one FMA per k, then adds C once).
template <bool kFma>
[[gnu::always_inline]] inline void depthwise_row_body(const ConvGeometry& g, const float* x,
                                                      const float* w, const float* bias, float* o,
                                                      std::int64_t oh) {
  const MmeConvParams& p = g.p;
  const std::int64_t c = g.c_in;
  for (std::int64_t ow = 0; ow < g.wo; ++ow, o += c) {
    for (std::int64_t ch = 0; ch < c; ++ch) o[ch] = 0.0f;
    for (std::int64_t a = 0; a < g.kh; ++a) {
      const std::int64_t ih = oh * p.strides[0] - p.pads[0] + a * p.dilations[0];
      for (std::int64_t b = 0; b < g.kw; ++b) {
        const std::int64_t iw = ow * p.strides[1] - p.pads[1] + b * p.dilations[1];
        const float* wk = w + (a * g.kw + b) * c;
        if (ih < 0 || ih >= g.hi || iw < 0 || iw >= g.wi) {
          for (std::int64_t ch = 0; ch < c; ++ch) o[ch] = std::fma(0.0f, wk[ch], o[ch]);
          continue;
        }
        const float* xk = x + (ih * g.wi + iw) * c;
        for (std::int64_t ch = 0; ch < c; ++ch) o[ch] = std::fma(xk[ch], wk[ch], o[ch]);
      }
    }
    if (bias)
      for (std::int64_t ch = 0; ch < c; ++ch) o[ch] = o[ch] + bias[ch];
    else
      for (std::int64_t ch = 0; ch < c; ++ch) o[ch] = o[ch] + 0.0f;
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// std::fma is exact everywhere; with the FMA instructions it is also fast (and vectorises).
[[gnu::target("avx2,fma")]] void depthwise_row_fma(const ConvGeometry& g, const float* x,
                                                   const float* w, const float* bias, float* o,
                                                   std::int64_t oh) {
  depthwise_row_body<true>(g, x, w, bias, o, oh);
}
#endif

void depthwise_row(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                   float* o, std::int64_t oh) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool has_fma = __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2");
  if (has_fma) {
    depthwise_row_fma(g, x, w, bias, o, oh);
    return;
  }
#endif
  depthwise_row_body<false>(g, x, w, bias, o, oh);
}

std::string typed(const char* op, DType dtype) {
  return fmt::format("{}_{}", op, dtype_name(dtype));
}

}  // namespace

MmeCost mme_cost(const arch::MachineSpec& spec, DType dtype, std::uint64_t macs,
                 std::uint64_t bytes) {
  const double rate =
      spec.param(dtype == DType::bf16 ? "mme.macs_per_cycle_bf16" : "mme.macs_per_cycle_f32").value;
  const double setup = spec.param("mme.setup_cycles").value;
  const double bandwidth = spec.global().bandwidth_bytes_per_cycle.value;
  if (rate <= 0 || bandwidth <= 0 || setup < 0)
    throw_user_error(
        "preset {}: the MME needs positive mme.macs_per_cycle_{} and {} bandwidth_bytes_per_cycle "
        "(got {} and {})",
        spec.name, dtype_name(dtype), spec.global_memory, rate, bandwidth);
  MmeCost c;
  c.macs = macs;
  c.bytes = bytes;
  c.compute_cycles = static_cast<std::uint64_t>(std::ceil(static_cast<double>(macs) / rate));
  c.memory_cycles = static_cast<std::uint64_t>(std::ceil(static_cast<double>(bytes) / bandwidth));
  c.cycles = static_cast<std::uint64_t>(setup) + std::max(c.compute_cycles, c.memory_cycles);
  return c;
}

Mme::Mme(runtime::Device& device) : device_(device) {}

const profile::KernelRecord& Mme::record(const std::string& name, DType dtype, std::uint64_t macs,
                                         std::uint64_t bytes_read, std::uint64_t bytes_written,
                                         std::uint64_t gemms) {
  const MmeCost c = mme_cost(device_.spec(), dtype, macs, bytes_read + bytes_written);
  profile::KernelRecord r;
  r.name = name;
  r.engine = "mme";
  // Setup, then compute while streaming operands: the global memory's share comes from the
  // device's channel, which the MME shares with the TPCs. Alone it is mme_cost's formula.
  r.cycles = c.compute_cycles;
  r.bytes_read = bytes_read;
  r.bytes_written = bytes_written;

  r.metrics["engine.mme"] = 1;
  r.metrics["mme.macs"] = static_cast<double>(macs);
  r.metrics["mme.gemms"] = static_cast<double>(gemms);
  r.metrics["mme.compute_cycles"] = static_cast<double>(c.compute_cycles);
  r.metrics["mme.memory_cycles"] = static_cast<double>(c.memory_cycles);
  // Utilisations with the global memory to itself; sharing can only lower them.
  const double cycles = static_cast<double>(std::max<std::uint64_t>(c.cycles, 1));
  r.metrics["mme.utilisation"] = static_cast<double>(c.compute_cycles) / cycles;
  r.metrics["memory.utilisation"] = static_cast<double>(c.memory_cycles) / cycles;
  const profile::KernelRecord& stored =
      device_.record_kernel(std::move(r), bytes_read + bytes_written,
                            c.cycles - std::max(c.compute_cycles, c.memory_cycles));
  device_.add_bytes_moved(device_.spec().global_memory, bytes_read + bytes_written);
  return stored;
}

const profile::KernelRecord& Mme::gemm(const DeviceTensor& a, const DeviceTensor& b,
                                       const DeviceTensor& out, const MmeGemmParams& params,
                                       const DeviceTensor* bias) {
  const DType dt = a.dtype;
  check_tensor("gemm", "A", a, dt);
  check_tensor("gemm", "B", b, dt);
  check_tensor("gemm", "the output", out, dt);
  if (bias) check_tensor("gemm", "the bias", *bias, dt);
  if (a.shape.rank() != 2 || b.shape.rank() != 2 || out.shape.rank() != 2)
    throw_user_error(
        "MME gemm: A {}, B {} and the output {} must be 2-D (use batch_gemm for batches)",
        a.shape.to_string(), b.shape.to_string(), out.shape.to_string());
  // Row-major views: A is M x K, B is K x N (after the transposes).
  const std::int64_t m = params.trans_a ? a.shape[0] : a.shape[1];
  const std::int64_t k = params.trans_a ? a.shape[1] : a.shape[0];
  const std::int64_t kb = params.trans_b ? b.shape[0] : b.shape[1];
  const std::int64_t n = params.trans_b ? b.shape[1] : b.shape[0];
  if (k != kb)
    throw_user_error(
        "MME gemm: inner dimensions differ: A {} gives K = {}{} but B {} gives K = {}{}; "
        "transpose one operand or fix the shapes",
        a.shape.to_string(), k, params.trans_a ? " (trans_a)" : "", b.shape.to_string(), kb,
        params.trans_b ? " (trans_b)" : "");
  if (out.shape[0] != n || out.shape[1] != m)
    throw_user_error("MME gemm: the output is {} but A x B is {} x {} (Tessera dims ({}, {}))",
                     out.shape.to_string(), m, n, n, m);
  if (bias && bias->shape.element_count() != n)
    throw_user_error("MME gemm: the bias {} must have N = {} elements", bias->shape.to_string(), n);
  check_fits(device_, "gemm", "A", a);
  check_fits(device_, "gemm", "B", b);
  check_fits(device_, "gemm", "the output", out);
  if (bias) check_fits(device_, "gemm", "the bias", *bias);

  // f32 operands are read where they lie (the product goes to a separate buffer, so an output
  // overlapping them is still fine); bf16 ones widen to copies.
  std::vector<float> a_copy, b_copy;
  const float* av = f32_view(device_, a, a_copy);
  const float* bv = f32_view(device_, b, b_copy);
  std::vector<float> cv(static_cast<std::size_t>(m * n), 0.0f);
  float beta = 0.0f;
  std::uint64_t bytes_read = (elements(a) + elements(b)) * dtype_size(dt);
  if (params.beta != 0.0f) {
    cv = read_f32(device_, out);
    for (auto& x : cv) x *= params.beta;
    beta = 1.0f;
    bytes_read += elements(out) * dtype_size(dt);
  }
  if (bias) {
    std::vector<float> bias_copy;
    const float* biasv = f32_view(device_, *bias, bias_copy);
    for (std::int64_t r = 0; r < m; ++r)
      for (std::int64_t c = 0; c < n; ++c) cv[static_cast<std::size_t>(r * n + c)] += biasv[c];
    beta = 1.0f;
    bytes_read += elements(*bias) * dtype_size(dt);
  }
  if (m > 0 && n > 0 && k > 0)
    tessera::ops::sgemm(params.trans_a, params.trans_b, m, n, k, params.alpha, av, a.shape[0],
                        bv, b.shape[0], beta, cv.data(), n);
  else if (beta == 0.0f)
    std::fill(cv.begin(), cv.end(), 0.0f);
  write_f32(device_, out, cv);
  return record(typed("gemm", dt), dt, static_cast<std::uint64_t>(m * n * k), bytes_read,
                elements(out) * dtype_size(dt), 1);
}

const profile::KernelRecord& Mme::batch_gemm(const DeviceTensor& a, const DeviceTensor& b,
                                             const DeviceTensor& out, const MmeGemmParams& params) {
  const DType dt = a.dtype;
  check_tensor("batch_gemm", "A", a, dt);
  check_tensor("batch_gemm", "B", b, dt);
  check_tensor("batch_gemm", "the output", out, dt);
  if (a.shape.rank() < 2 || b.shape.rank() < 2)
    throw_user_error("MME batch_gemm: A {} and B {} need rank 2 to 5 (dims 0-1 are the matrix)",
                     a.shape.to_string(), b.shape.to_string());
  const std::int64_t m = params.trans_a ? a.shape[0] : a.shape[1];
  const std::int64_t k = params.trans_a ? a.shape[1] : a.shape[0];
  const std::int64_t kb = params.trans_b ? b.shape[0] : b.shape[1];
  const std::int64_t n = params.trans_b ? b.shape[1] : b.shape[0];
  if (k != kb)
    throw_user_error("MME batch_gemm: inner dimensions differ: A {} gives K = {}, B {} gives {}",
                     a.shape.to_string(), k, b.shape.to_string(), kb);
  const int rank = std::max(a.shape.rank(), b.shape.rank());
  std::int64_t batch[3] = {1, 1, 1};
  for (int d = 2; d < 5; ++d) {
    const std::int64_t x = a.shape.dim_or_one(d), y = b.shape.dim_or_one(d);
    if (x != y && x != 1 && y != 1)
      throw_user_error("MME batch_gemm: batch dimension {} of A {} and B {} do not broadcast", d,
                       a.shape.to_string(), b.shape.to_string());
    batch[d - 2] = std::max(x, y);
  }
  bool out_ok = out.shape.rank() == rank && out.shape[0] == n && out.shape[1] == m;
  for (int d = 2; d < rank && out_ok; ++d) out_ok = out.shape[d] == batch[d - 2];
  if (!out_ok)
    throw_user_error(
        "MME batch_gemm: the output is {} but A {} x B {} gives rank {} with matrix {} x {} "
        "(Tessera dims ({}, {})) and broadcast batch dims",
        out.shape.to_string(), a.shape.to_string(), b.shape.to_string(), rank, m, n, n, m);
  check_fits(device_, "batch_gemm", "A", a);
  check_fits(device_, "batch_gemm", "B", b);
  check_fits(device_, "batch_gemm", "the output", out);

  std::vector<float> a_copy, b_copy;
  const float* av = f32_view(device_, a, a_copy);
  const float* bv = f32_view(device_, b, b_copy);
  std::vector<float> cv(elements(out), 0.0f);
  std::uint64_t bytes_read = (elements(a) + elements(b)) * dtype_size(dt);
  float beta = 0.0f;
  if (params.beta != 0.0f) {
    cv = read_f32(device_, out);
    for (auto& x : cv) x *= params.beta;
    beta = 1.0f;
    bytes_read += elements(out) * dtype_size(dt);
  }
  const std::int64_t a_mat = m * k, b_mat = k * n, c_mat = m * n;
  std::uint64_t gemms = 0;
  for (std::int64_t i4 = 0; i4 < batch[2]; ++i4)
    for (std::int64_t i3 = 0; i3 < batch[1]; ++i3)
      for (std::int64_t i2 = 0; i2 < batch[0]; ++i2) {
        // Broadcast batch dims index 0 in the operand that has size 1 there.
        auto index = [&](const Shape& s) {
          const std::int64_t j2 = s.dim_or_one(2) == 1 ? 0 : i2;
          const std::int64_t j3 = s.dim_or_one(3) == 1 ? 0 : i3;
          const std::int64_t j4 = s.dim_or_one(4) == 1 ? 0 : i4;
          return (j4 * s.dim_or_one(3) + j3) * s.dim_or_one(2) + j2;
        };
        const std::int64_t ci = (i4 * batch[1] + i3) * batch[0] + i2;
        if (m > 0 && n > 0 && k > 0)
          tessera::ops::sgemm(params.trans_a, params.trans_b, m, n, k, params.alpha,
                              av + index(a.shape) * a_mat, a.shape[0],
                              bv + index(b.shape) * b_mat, b.shape[0], beta,
                              cv.data() + ci * c_mat, n);
        ++gemms;
      }
  write_f32(device_, out, cv);
  return record(typed("batch_gemm", dt), dt, static_cast<std::uint64_t>(m * n * k) * gemms,
                bytes_read, elements(out) * dtype_size(dt), gemms);
}

Shape mme_conv2d_output_shape(const Shape& x, const Shape& w, const MmeConvParams& p) {
  if (x.rank() != 4 || w.rank() != 4)
    throw_user_error(
        "MME conv2d: input {} must be NHWC {{C, W, H, N}} and weights {} HWIO {{M, C/group, kW, "
        "kH}} (rank 4 each)",
        x.to_string(), w.to_string());
  if (p.group < 1 || x[0] % p.group != 0 || w[0] % p.group != 0)
    throw_user_error(
        "MME conv2d: group {} must be >= 1 and divide the input channels {} and output "
        "channels {}",
        p.group, x[0], w[0]);
  if (w[1] * p.group != x[0])
    throw_user_error(
        "MME conv2d: weights {} take {} input channels per group but the input {} has {} "
        "channels in {} groups",
        w.to_string(), w[1], x.to_string(), x[0], p.group);
  std::int64_t out[2];
  for (int j = 0; j < 2; ++j) {  // j = 0: H, 1: W
    const std::int64_t in = x[2 - j], kernel = w[3 - j];
    const std::int64_t s = p.strides[j], d = p.dilations[j];
    if (s < 1 || d < 1 || p.pads[j] < 0 || p.pads[j + 2] < 0)
      throw_user_error("MME conv2d: strides {}, dilations {} must be >= 1 and pads >= 0", s, d);
    const std::int64_t span = in + p.pads[j] + p.pads[j + 2] - (d * (kernel - 1) + 1);
    if (span < 0)
      throw_user_error(
          "MME conv2d: the input {} plus pads is smaller than the dilated {}x{} kernel; pad "
          "more or use a smaller kernel",
          x.to_string(), w[3], w[2]);
    out[j] = span / s + 1;
  }
  return Shape{w[0], out[1], out[0], x[3]};
}

const profile::KernelRecord& Mme::conv2d(const DeviceTensor& x, const DeviceTensor& w,
                                         const DeviceTensor* bias, const DeviceTensor& out,
                                         const MmeConvParams& p) {
  const DType dt = x.dtype;
  check_tensor("conv2d", "the input", x, dt);
  check_tensor("conv2d", "the weights", w, dt);
  check_tensor("conv2d", "the output", out, dt);
  if (bias) check_tensor("conv2d", "the bias", *bias, dt);
  const Shape expect = mme_conv2d_output_shape(x.shape, w.shape, p);
  if (!(out.shape == expect))
    throw_user_error("MME conv2d: the output is {} but input {} and weights {} give {}",
                     out.shape.to_string(), x.shape.to_string(), w.shape.to_string(),
                     expect.to_string());
  const std::int64_t c_in = x.shape[0], wi = x.shape[1], hi = x.shape[2], batch = x.shape[3];
  const std::int64_t m = w.shape[0], cg = w.shape[1], kw = w.shape[2], kh = w.shape[3];
  const std::int64_t wo = expect[1], ho = expect[2];
  if (bias && bias->shape.element_count() != m)
    throw_user_error("MME conv2d: the bias {} must have {} elements (output channels)",
                     bias->shape.to_string(), m);
  check_fits(device_, "conv2d", "the input", x);
  check_fits(device_, "conv2d", "the weights", w);
  check_fits(device_, "conv2d", "the output", out);
  if (bias) check_fits(device_, "conv2d", "the bias", *bias);

  // f32 operands are read where they lie and the output written in place; bf16 ones widen to
  // f32 copies and the output rounds back at the end.
  std::vector<float> x_copy, w_copy, b_copy, o_copy;
  const float* xv = f32_view(device_, x, x_copy);
  const float* wv = f32_view(device_, w, w_copy);
  const float* bv = bias ? f32_view(device_, *bias, b_copy) : nullptr;
  const bool in_place = writable_in_place(device_, out, {&x, &w, bias});
  if (!in_place) o_copy.resize(elements(out));
  float* ov = in_place ? reinterpret_cast<float*>(device_.data(out.buffer) + out.byte_offset)
                       : o_copy.data();
  std::uint64_t bytes_read = (elements(x) + elements(w)) * dtype_size(dt);
  if (bias) bytes_read += elements(*bias) * dtype_size(dt);
  // An output with no input channels to sum is the bias (or 0).
  auto init_rows = [&](float* o, std::int64_t rows) {
    for (std::int64_t r = 0; r < rows; ++r) {
      if (bv)
        std::copy(bv, bv + m, o + r * m);
      else
        std::fill(o + r * m, o + (r + 1) * m, 0.0f);
    }
  };
  const std::int64_t groups = p.group, mg = m / groups;
  const std::int64_t kdim = kh * kw * cg;  // column order (kh, kw, c), c fastest, as HWIO rows
  const std::int64_t pixels = ho * wo;
  const bool pointwise = kh == 1 && kw == 1 && p.strides[0] == 1 && p.strides[1] == 1 &&
                         p.pads[0] == 0 && p.pads[1] == 0 && p.pads[2] == 0 && p.pads[3] == 0 &&
                         groups == 1;
  // The modeled MME runs one GEMM per im2col block of at most kColumnBlockFloats (a 1x1
  // convolution: one GEMM); how the host computes the values does not change that count.
  const std::int64_t rows_per_block =
      kdim > 0 ? std::max<std::int64_t>(
                     1, std::min<std::int64_t>(
                            pixels, static_cast<std::int64_t>(kColumnBlockFloats) / kdim))
               : 1;
  std::uint64_t gemms = 0;
  auto& scheduler = sim::WorkScheduler::shared();
  if (kdim > 0 && mg > 0 && batch * pixels > 0) {
    gemms = pointwise ? 1
                      : static_cast<std::uint64_t>(batch * groups *
                                                   ((pixels + rows_per_block - 1) / rows_per_block));
    const ConvGeometry geo{c_in, wi, hi, wo, kw, kh, cg, p};
    if (cg == 1 && mg == 1) {
      // Depthwise: each output is a 3x3 (kh x kw) dot product of one channel, computed in
      // place of an im2col GEMM with one column, with the same operations in the same order.
      scheduler.parallel_for(static_cast<std::size_t>(batch * ho), [&](std::size_t unit) {
        const auto n = static_cast<std::int64_t>(unit) / ho, oh = static_cast<std::int64_t>(unit) % ho;
        depthwise_row(geo, xv + n * hi * wi * c_in, wv, bv, ov + (n * pixels + oh * wo) * m, oh);
      });
    } else {
      // The reference backend's convolutions take the same path, so the two agree closely.
      ops::HostConv hc;
      hc.batch = batch;
      hc.in_channels = c_in;
      hc.out_channels = m;
      hc.group = groups;
      hc.in = {1, hi, wi};
      hc.out = {1, ho, wo};
      hc.kernel = {1, kh, kw};
      hc.stride = {1, p.strides[0], p.strides[1]};
      hc.dilation = {1, p.dilations[0], p.dilations[1]};
      hc.pad_begin = {0, p.pads[0], p.pads[1]};
      hc.pad_end = {0, p.pads[2], p.pads[3]};
      hc.channels_last = true;
      hc.weights_hwio = true;
      // Kept weights are for f32 weights read where they lie (a bf16 copy is made per call).
      ops::host_conv(hc, xv, wv, bv, ov, w_copy.empty() ? p.kept_weights : nullptr);
    }
  } else {
    init_rows(ov, batch * pixels);
  }
  if (!in_place) write_f32(device_, out, o_copy);
  const auto macs = static_cast<std::uint64_t>(batch * pixels * m * kdim);
  return record(typed("conv_2d", dt), dt, macs, bytes_read, elements(out) * dtype_size(dt), gemms);
}

}  // namespace tessera::tpc
