// Out-of-line parts of the per-instance state: tensor access slow paths (pad / cull), the
// coherency tracker, scalar global addresses, local memory, the LFSRs and tensor queries.
#include <algorithm>
#include <cstring>
#include <string_view>

#include "local_memory_impl.h"
#include "tessera/core/error.h"
#include "tessera/core/log.h"
#include "tessera/targets/tpc/api/context.h"
#include "tessera/targets/tpc/api/intrinsics.h"
#include "tessera/targets/tpc/api/intrinsics_gaudi.h"
#include "tessera/targets/tpc/api/intrinsics_local.h"
#include "tessera/targets/tpc/api/local_memory.h"

namespace tessera::tpc {
namespace detail {

constinit thread_local InstanceContext* current_instance
    __attribute__((tls_model("initial-exec"))) = nullptr;

namespace {

std::string where(const InstanceContext& c) {
  return fmt::format("tpc{} kernel {}", c.core, c.kernel_name);
}

std::string coord_text(const int5& c) {
  return fmt::format("({}, {}, {}, {}, {})", c.v[0], c.v[1], c.v[2], c.v[3], c.v[4]);
}

}  // namespace

void no_instance_error(const char* intrinsic) {
  throw_user_error(
      "{} was called outside a TPC program instance; intrinsics that touch tensors, the index "
      "space or local memory only work inside a kernel launched through tpc::Runtime",
      intrinsic);
}

void bad_tensor_fault(const InstanceContext& c, int id, const char* intrinsic) {
  throw DeviceFault(where(c), fmt::format("{} uses tensor {} but the program has {} tensors "
                                          "(0..{}); pass a tensor parameter of the kernel",
                                          intrinsic, id, c.tensor_count, c.tensor_count - 1));
}

void descriptor_reach_fault(const InstanceContext& c, int id, const char* intrinsic) {
  const TensorSlot& s = c.tensors[id];
  throw DeviceFault(where(c),
                    fmt::format("{} accesses tensor {}, whose descriptor (changed by "
                                "set_dim_size / set_dim_stride) reaches {} bytes but its buffer "
                                "holds {}; keep sizes and strides inside the tensor",
                                intrinsic, id, s.reach_bytes, s.buffer_bytes));
}

void element_size_fault(const InstanceContext& c, int id, std::uint32_t bytes,
                        const char* intrinsic) {
  const TensorSlot& s = c.tensors[id];
  throw DeviceFault(where(c),
                    fmt::format("{} accesses tensor {} ({}, {} bytes per element) with {}-byte "
                                "elements; use the intrinsic of the tensor's data type",
                                intrinsic, id, dtype_name(s.dtype), s.elem_bytes, bytes));
}

// Lanes outside the tensor read the pad value (spec 000 §2.4.1); the lanes inside are one run
// [in_lo, in_hi) along dim 0, copied at once where dim 0 is dense.
void load_slow(InstanceContext& c, const TensorSlot& t, const int5& coord, void* out,
               std::uint32_t elem_bytes, int lanes) {
  auto* dst = static_cast<std::byte*>(out);
  const std::int64_t outer = outer_offset(t, coord);
  const std::int64_t x0 = coord.v[0];
  const std::int64_t in_lo = outer < 0 ? 0 : std::clamp<std::int64_t>(-x0, 0, lanes);
  const std::int64_t in_hi = outer < 0 ? 0 : std::clamp<std::int64_t>(t.size[0] - x0, in_lo, lanes);
  for (std::int64_t i = 0; i < lanes; ++i)
    if (i < in_lo || i >= in_hi)
      std::memcpy(dst + static_cast<std::size_t>(i) * elem_bytes, &t.pad_bits, elem_bytes);
  if (in_lo == in_hi) return;
  const std::int64_t lo = (outer + (x0 + in_lo) * t.stride[0]) * elem_bytes;
  if (t.stride[0] == 1) {
    std::memcpy(dst + static_cast<std::size_t>(in_lo) * elem_bytes, t.base + lo,
                static_cast<std::size_t>(in_hi - in_lo) * elem_bytes);
  } else {
    for (std::int64_t i = in_lo; i < in_hi; ++i)
      std::memcpy(dst + static_cast<std::size_t>(i) * elem_bytes,
                  t.base + (outer + (x0 + i) * t.stride[0]) * elem_bytes, elem_bytes);
  }
  c.counters.bytes_read += static_cast<std::uint64_t>(in_hi - in_lo) * elem_bytes;
  const std::int64_t hi = (outer + (x0 + in_hi - 1) * t.stride[0]) * elem_bytes + elem_bytes;
  if (t.stored) check_coherency(c, static_cast<int>(&t - c.tensors), coord, lo, hi);
}

// Lanes outside the tensor are culled; along dim 0 the write is partial (spec 000 §2.4.1).
// The lanes inside are one run, stored at once where dim 0 is dense (the coherency tracker then
// notes one range where it would have merged the lanes' ranges into the same bytes).
void store_slow(InstanceContext& c, TensorSlot& t, const int5& coord, const void* in,
                std::uint32_t elem_bytes, int lanes) {
  const auto* src = static_cast<const std::byte*>(in);
  const std::int64_t outer = outer_offset(t, coord);
  if (outer < 0) return;
  const std::int64_t x0 = coord.v[0];
  const std::int64_t in_lo = std::clamp<std::int64_t>(-x0, 0, lanes);
  const std::int64_t in_hi = std::clamp<std::int64_t>(t.size[0] - x0, in_lo, lanes);
  if (in_lo == in_hi) return;
  if (t.stride[0] == 1) {
    const std::int64_t off = (outer + x0 + in_lo) * elem_bytes;
    const auto bytes = static_cast<std::int64_t>(in_hi - in_lo) * elem_bytes;
    std::memcpy(t.base + off, src + static_cast<std::size_t>(in_lo) * elem_bytes,
                static_cast<std::size_t>(bytes));
    c.counters.bytes_written += static_cast<std::uint64_t>(bytes);
    if (c.coherency_check) note_store(t, off, off + bytes);
    return;
  }
  for (std::int64_t i = in_lo; i < in_hi; ++i) {
    const std::int64_t off = (outer + (x0 + i) * t.stride[0]) * elem_bytes;
    std::memcpy(t.base + off, src + static_cast<std::size_t>(i) * elem_bytes, elem_bytes);
    c.counters.bytes_written += elem_bytes;
    if (c.coherency_check) note_store(t, off, off + elem_bytes);
  }
}

void note_store(TensorSlot& t, std::int64_t first, std::int64_t last) {
  t.stored = true;
  auto& r = t.stored_ranges;
  if (!r.empty() && first <= r.back().second && last >= r.back().first) {
    r.back().first = std::min(r.back().first, first);
    r.back().second = std::max(r.back().second, last);
    return;
  }
  r.emplace_back(first, last);
}

// A vector load of bytes another vector store wrote since the last aso() may see old data
// (spec 000 §2.8): warn, naming the kernel, tensor and coordinates.
void check_coherency(InstanceContext& c, int id, const int5& coord, std::int64_t first,
                     std::int64_t last) {
  const auto& r = c.tensors[id].stored_ranges;
  for (auto it = r.rbegin(); it != r.rend(); ++it) {
    if (first < it->second && last > it->first) {
      ++c.counters.coherency_warnings;
      if (c.counters.coherency_warnings == 1)  // the first of each instance; the launch sums them
        log(LogLevel::warn, "tpc",
            "{}: vector load of tensor {} at {} reads bytes a vector store of this program wrote "
            "without an aso() in between; the load may return the old data (spec 000 §2.8). "
            "Call aso() after the stores",
            where(c), id, coord_text(coord));
      return;
    }
  }
}

namespace {
void check_access(const InstanceContext& c, const global_address& a, std::size_t bytes,
                  const char* intrinsic, const char* what) {
  if (a.tensor_id() < 0)
    throw DeviceFault(where(c), fmt::format("{} {} through an address no gen_addr made; make it "
                                            "with gen_addr(coords, tensor)",
                                            intrinsic, what));
  const TensorSlot& s = c.tensors[a.tensor_id()];
  if (!a.inside()) {
    int d = 0;
    while (d < 4 && a.coord().v[d] >= 0 && a.coord().v[d] < s.size[d]) ++d;
    throw DeviceFault(
        where(c), fmt::format("{} {} tensor {} at {}, outside the tensor (dimension {} has "
                              "size {}); keep scalar global accesses inside the tensor",
                              intrinsic, what, a.tensor_id(), coord_text(a.coord()), d, s.size[d]));
  }
  if (bytes > a.element_bytes())
    throw DeviceFault(where(c), fmt::format("{} {} {} bytes of tensor {} ({}-byte elements) at "
                                            "{}; use the intrinsic of the tensor's data type",
                                            intrinsic, what, bytes, a.tensor_id(),
                                            a.element_bytes(), coord_text(a.coord())));
}
}  // namespace

void raw_global_access_fault(const global_address& a) {
  const InstanceContext& c = instance("__global__ pointer");
  check_access(c, a, 0, "a __global__ pointer", "accesses");
  throw_internal_error("raw_global_access_fault: the access at tensor {} is valid", a.tensor_id());
}

std::uint64_t scalar_global_read(const global_address& a, void* out, std::size_t bytes,
                                 const char* intrinsic) {
  InstanceContext& c = instance(intrinsic);
  check_access(c, a, bytes, intrinsic, "reads");
  std::memcpy(out, a.address(), bytes);
  c.counters.bytes_read += bytes;
  return global_read(c, 0, 1);
}

void scalar_global_write(const global_address& a, const void* in, std::size_t bytes,
                         const char* intrinsic) {
  InstanceContext& c = instance(intrinsic);
  check_access(c, a, bytes, intrinsic, "writes");
  std::memcpy(a.address(), in, bytes);
  c.counters.bytes_written += bytes;
  global_write(c, 0, 1);
}

void bad_switches(const char* intrinsic, int switches, int allowed) {
  constexpr int kUnpack = SW_UNPACK | SW_UNPCK_4_TO_8;  // SW_UNPACK and its UNPACK_DT field
  if (std::string_view(intrinsic).find("_ld_tnsr") != std::string_view::npos &&
      (switches & ~allowed & kUnpack) != 0)
    throw_user_error(
        "{}: SW_UNPACK / SW_UNPCK_* (switches 0x{:x}) are not Gaudi's: tpc-intrinsics.h lists them "
        "for LD_TNSR under __greco_plus__ only, and tpc_llvm's TPC.td gives the 'gaudi' processor "
        "no FeatureTnsrUnpack ('LD_TNSR may have UNPACK modifier'), so tpc-clang for Gaudi refuses "
        "them. Load the packed elements as they are and widen them in registers "
        "(v_<t>_unpack_b, or convert_<from>_to_<to> with SW_LINEAR for memory order)",
        intrinsic, static_cast<unsigned>(switches));
  throw_user_error(
      "{}: switches 0x{:x} include 0x{:x}, which this intrinsic does not take (it takes 0x{:x}; "
      "see the SW_* values of tpc-defs.h); remove them",
      intrinsic, static_cast<unsigned>(switches), static_cast<unsigned>(switches & ~allowed),
      static_cast<unsigned>(allowed));
}

void bad_pack(const char* intrinsic) {
  throw_user_error(
      "{}: SW_PACK (the store pipe packing the register, tpc-intrinsics.h ST_TNSR) is modeled on "
      "whole-register stores (v_<t>_st_tnsr) only: no public source gives its layout for a "
      "partial, half or RMW store; store the whole register with SW_PACK, or put the elements in "
      "memory order first (v_*_pack_b, v_*_mov_dual_group_b) and store without it",
      intrinsic);
}

void bad_rounding(const char* intrinsic, int switches) {
  const int rm = (switches >> 16) & 0x7;
  throw_user_error(
      "{}: rounding mode {} (switches 0x{:x}) is not modeled; use SW_RHNE, SW_RZ, SW_RU, SW_RD, "
      "SW_RHAZ or SW_CSR (the stochastic modes SW_SR / SW_SR_RNE are not simulated)",
      intrinsic, rm, static_cast<unsigned>(switches));
}

void bad_shift_rounding(const char* intrinsic, int switches) {
  const int rm = (switches >> 16) & 0x7;
  throw_user_error(
      "{}: rounding mode {} (switches 0x{:x}) is not one this shifting convert takes; "
      "CONVERT_INT32 / CONVERT_INT16 round with SW_RHNE, SW_RZ, SW_RU, SW_RD or SW_CSR holding "
      "one of them (tpc-intrinsics.h; stochastic rounding is not simulated)",
      intrinsic, rm, static_cast<unsigned>(switches));
}

void bad_legacy_rounding(const char* intrinsic, int mode) {
  throw_user_error(
      "{}: rounding argument {} (0x{:x}) is not an e_round_* mode (0..7); the legacy form takes "
      "the mode itself (e_round_down), which it shifts into the switches as tpc-defs.h does, "
      "while the current form takes the switch (SW_RD = 3 << 16)",
      intrinsic, mode, static_cast<unsigned>(mode));
}

void bad_lane(const char* intrinsic, int lane, int lanes) {
  throw_user_error(
      "{}: lane {} does not exist; a down-convert of this ratio writes lane 0..{} of every {} "
      "result lanes (0 = the even lanes, 1 = the odd ones)",
      intrinsic, lane, lanes - 1, lanes);
}

void bad_partial(const char* intrinsic, int size, int offset, int lanes) {
  throw_user_error(
      "{}: partial size {} and offset {} name lanes {}..{}, outside the vector's {} lanes; size "
      "is the element count minus one and offset + size must be at most {}",
      intrinsic, size, offset, offset, offset + size, lanes, lanes - 1);
}

void rmw_update(InstanceContext& c, const TensorSlot& t, const RmwVector& update) {
  const auto moved = static_cast<std::uint64_t>(update.count) * update.bytes;
  c.counters.bytes_read += moved;
  c.counters.bytes_written += moved;
  auto apply = [&] {
    for (int i = 0; i < update.count; ++i)
      update.apply(update.first + i * update.step, update.lanes + i * update.bytes);
  };
  if (c.rmw == nullptr) return apply();
  const std::lock_guard<std::mutex> lock(c.rmw->mutex);
  auto it = std::find_if(c.rmw->tensors.begin(), c.rmw->tensors.end(),
                         [&](const RmwLaunch::Tensor& x) { return x.base == t.base; });
  if (it == c.rmw->tensors.end()) {
    // The whole buffer: set_dim_size / set_dim_stride may change what other instances reach.
    const std::int64_t elements = t.buffer_bytes / t.elem_bytes;
    const auto bytes = static_cast<std::size_t>(elements) * t.elem_bytes;
    RmwLaunch::Tensor x{t.base, t.elem_bytes, std::vector<std::byte>(bytes),
                        std::vector<bool>(static_cast<std::size_t>(elements), false)};
    it = c.rmw->tensors.insert(c.rmw->tensors.end(), std::move(x));
  }
  // Each element's value before its first update; only updated elements are read, as other
  // instances may be storing to the rest of the tensor.
  for (int i = 0; i < update.count; ++i) {
    std::byte* at = update.first + i * update.step;
    const auto e = static_cast<std::size_t>((at - t.base) / t.elem_bytes);
    if (it->updated[e]) continue;
    std::memcpy(it->before.data() + e * t.elem_bytes, at, t.elem_bytes);
    it->updated[e] = true;
  }
  apply();
  c.rmw_updates.push_back(update);
}

void bad_rmw(const char* intrinsic, int rmw, int expected_dt) {
  throw_user_error(
      "{}: RMW selector 0x{:x} does not fit this data type; use MkRMW(0x{:x}, op, set, "
      "location) with op e_rmw_add..e_rmw_max, set e_rmw_atomic and location e_tnsr_dt_srf (or "
      "e_tnsr_dt_desc to take the tensor's type)",
      intrinsic, static_cast<unsigned>(rmw), static_cast<unsigned>(expected_dt));
}

// ---- local memory ----
namespace {
constexpr std::uint8_t kPoison[4] = {0xEF, 0xBE, 0xAD, 0xDE};  // 0xDEADBEEF little-endian
constexpr std::align_val_t kHostAlign{64};
}  // namespace

void* local_allocate(std::size_t host_bytes, std::size_t modeled_bytes, bool vector,
                     const LocalLayout& layout, std::uint32_t& address) {
  InstanceContext& c = instance("__local__ allocation");
  LocalMemory* m = vector ? c.vlm : c.slm;
  if (m == nullptr)
    throw_user_error("__local__ allocation outside a TPC program instance's local memories");
  // The message a kernel writer needs (which kernel, how much, the limit and why); the
  // allocator below makes the same decision from the same state.
  const std::uint64_t align = std::max(m->store.memory().alignment(),
                                       vector ? std::uint64_t{kVectorBytes} : std::uint64_t{1});
  const std::uint64_t base = m->store.memory().base();
  const std::uint64_t start = base + (m->stack.top() - base + align - 1) / align * align;
  const std::uint64_t limit = base + m->stack.stats().capacity;
  if (start + modeled_bytes > limit) {
    const bool shrunk = vector && m->store.limit() < m->store.memory().capacity();
    throw DeviceFault(
        where(c),
        fmt::format("__local__ allocation of {} bytes in {} ({} memory) needs {} bytes but the "
                    "limit is {} bytes{}; use less local memory or keep the data in tensors",
                    modeled_bytes, m->store.memory().name(),
                    vector ? "vector local" : "scalar local", start + modeled_bytes - base,
                    limit - base,
                    shrunk ? " (reduced because the glue sets specialFunctionsUsed)" : ""));
  }
  address = static_cast<std::uint32_t>(m->stack.allocate(modeled_bytes, align) - base);
  auto* p =
      static_cast<std::byte*>(::operator new(std::max<std::size_t>(host_bytes, 1), kHostAlign));
  for (std::size_t i = 0; i < host_bytes; ++i) p[i] = static_cast<std::byte>(kPoison[i % 4]);
  // The array is the memory's bytes at its address from now on, starting with what they hold.
  if (layout.shared && layout.count > 0)
    m->store.attach(base + address, p, layout.count, layout.element_bytes, layout.host_stride, true,
                    "__local__ allocation");
  return p;
}

void local_release(void* p, bool vector, std::uint32_t address, bool shared) {
  InstanceContext* c = current_instance;
  LocalMemory* m = c == nullptr ? nullptr : (vector ? c->vlm : c->slm);
  if (m != nullptr) {
    if (shared) m->store.detach(m->store.memory().base() + address);
    if (m->stack.stats().live_allocations > 0) m->stack.free(m->stack.top_frame());
  }
  ::operator delete(p, kHostAlign);
}

[[noreturn]] void bad_local_switches(const char* intrinsic, int switches, bool vector) {
  throw_user_error(
      "{}: switches 0x{:x} are not simulated ({}); local memory accesses here take no switches",
      intrinsic, static_cast<unsigned>(switches),
      vector ? "LD_L_V / ST_L_V's SW_AUTO_INC_*_V steps an address register, and the address "
               "here is a value"
             : "LD_L / ST_L's SW_MMIO reaches the configuration space, SW_LOCK / SW_UNLOCK its "
               "semaphore, neither of which Tessera models");
}

namespace {
LocalMemory& local_memory(InstanceContext& c, bool vector) {
  LocalMemory* m = vector ? c.vlm : c.slm;
  if (m == nullptr)
    throw_internal_error("tpc{} kernel {}: no local memory for the instance", c.core,
                         c.kernel_name);
  return *m;
}
// The local memory's one port: a load or store takes it for a cycle once its slot issued, and
// a load's data is ready the load slot's latency after that (spec 000 §2.3.1, §2.3.3).
std::uint64_t local_port(InstanceContext& c, Slot slot, std::uint64_t operands_ready) {
  const std::uint64_t issued = c.clock.issue(slot, operands_ready) - c.clock.latency(slot);
  return c.clock.issue(kLocalPort, issued, 1, slot == kLoad ? c.clock.latency(kLoad) : 0);
}
}  // namespace

std::uint64_t local_read(std::uint32_t address, void* data, std::uint32_t bytes, bool vector,
                         std::uint32_t granularity, const char* intrinsic) {
  InstanceContext& c = instance(intrinsic);
  LocalMemory& m = local_memory(c, vector);
  m.store.read(m.store.memory().base() + address, data, bytes, granularity, intrinsic);
  return local_port(c, kLoad, 0);
}

void local_write(std::uint32_t address, const void* data, std::uint32_t bytes, bool vector,
                 std::uint32_t granularity, std::uint64_t value_ready, const char* intrinsic) {
  InstanceContext& c = instance(intrinsic);
  LocalMemory& m = local_memory(c, vector);
  m.store.write(m.store.memory().base() + address, data, bytes, granularity, intrinsic);
  (void)local_port(c, kStore, value_ready);
}

// ---- LFSR (spec 000 §2.5.3): a 32-bit Galois LFSR per lane, and one for the scalar unit ----
namespace {
inline std::uint32_t lfsr_step(std::uint32_t x) {
  const std::uint32_t lsb = x & 1u;
  x >>= 1;
  if (lsb) x ^= 0xA3000000u;  // taps 32, 30, 26, 25: maximal length
  return x;
}
inline std::uint32_t nonzero(std::uint32_t x) {
  return x == 0 ? 0x1u : x;
}
}  // namespace

std::uint64_t lfsr_read(std::uint32_t out[64], bool advance, std::uint64_t operands_ready) {
  InstanceContext& c = instance("LFSR");
  const std::uint64_t ready = c.clock.issue(kVpu, operands_ready);
  for (int i = 0; i < 64; ++i) {
    const std::uint32_t next = lfsr_step(c.lfsr[i]);
    out[i] = next;
    if (advance) c.lfsr[i] = next;
  }
  return ready;
}

void lfsr_seed(const std::uint32_t lanes[64], std::uint64_t operands_ready) {
  InstanceContext& c = instance("LFSR");
  c.clock.issue(kVpu, operands_ready);
  for (int i = 0; i < 64; ++i) c.lfsr[i] = nonzero(lanes[i]);
}

// WRITE_LFSR with a vector predicate: the enabled bytes of the register take the source's.
void lfsr_write_masked(const std::uint8_t bytes[256], const bool256& predicate, bool polarity,
                       std::uint64_t operands_ready) {
  InstanceContext& c = instance("write_lfsr_vb");
  c.clock.issue(kVpu, operands_ready);
  std::uint8_t state[256];
  std::memcpy(state, c.lfsr, sizeof state);
  for (int i = 0; i < 256; ++i)
    if ((predicate.b[i] != 0) != polarity) state[i] = bytes[i];
  std::memcpy(c.lfsr, state, sizeof state);
  for (int i = 0; i < 64; ++i) c.lfsr[i] = nonzero(c.lfsr[i]);
}

std::uint32_t s_lfsr_read(bool advance) {
  InstanceContext& c = instance("S_LFSR");
  c.clock.issue(kSpu, 0);
  const std::uint32_t next = lfsr_step(c.s_lfsr);
  if (advance) c.s_lfsr = next;
  return next;
}

void s_lfsr_seed(std::uint32_t seed) {
  InstanceContext& c = instance("S_LFSR");
  c.clock.issue(kSpu, 0);
  c.s_lfsr = nonzero(seed);
}

}  // namespace detail

unsigned int get_dim_size(tensor a, unsigned int dim) {
  detail::InstanceContext& c = detail::instance("get_dim_size");
  if (static_cast<unsigned>(a.id) >= static_cast<unsigned>(c.tensor_count))
    detail::bad_tensor_fault(c, a.id, "get_dim_size");
  c.clock.issue(detail::kSpu, 0);
  if (dim >= 5)
    throw DeviceFault(detail::where(c), fmt::format("get_dim_size of tensor {} asks for dimension "
                                                    "{}; tensors have dimensions 0..4",
                                                    a.id, dim));
  return static_cast<unsigned>(c.tensors[a.id].size[dim]);
}

unsigned int get_dim_stride(tensor a, unsigned int dim) {
  detail::InstanceContext& c = detail::instance("get_dim_stride");
  if (static_cast<unsigned>(a.id) >= static_cast<unsigned>(c.tensor_count))
    detail::bad_tensor_fault(c, a.id, "get_dim_stride");
  c.clock.issue(detail::kSpu, 0);
  if (dim >= 5)
    throw DeviceFault(detail::where(c), fmt::format("get_dim_stride of tensor {} asks for "
                                                    "dimension {}; tensors have dimensions 0..4",
                                                    a.id, dim));
  return static_cast<unsigned>(c.tensors[a.id].stride[dim]);
}

namespace {
// SET_DIM_SIZE / SET_DIM_STRIDE: the descriptor changes for the rest of this instance, as the
// core's copy does. A descriptor reaching past the tensor's buffer faults at the next access
// (a kernel may pass through such a state between two sets).
void set_dim(tensor a, unsigned int dim, unsigned int value, bool stride, const char* intrinsic) {
  detail::InstanceContext& c = detail::instance(intrinsic);
  if (static_cast<unsigned>(a.id) >= static_cast<unsigned>(c.tensor_count))
    detail::bad_tensor_fault(c, a.id, intrinsic);
  c.clock.issue(detail::kSpu, 0);
  if (dim >= 5)
    throw DeviceFault(detail::where(c), fmt::format("{} of tensor {} names dimension {}; tensors "
                                                    "have dimensions 0..4",
                                                    intrinsic, a.id, dim));
  detail::TensorSlot& t = c.tensors[a.id];
  (stride ? t.stride : t.size)[dim] = value;
  std::int64_t last = 0;  // element offset of the last element the descriptor reaches
  bool empty = false;
  for (int d = 0; d < 5; ++d) {
    empty = empty || t.size[d] == 0;
    last += (t.size[d] - 1) * t.stride[d];
  }
  t.reach_bytes = empty ? 0 : (last + 1) * t.elem_bytes;
  t.reaches_past = t.reach_bytes > t.buffer_bytes;
}
}  // namespace

void set_dim_size(tensor a, unsigned int dim, unsigned int value) {
  set_dim(a, dim, value, false, "set_dim_size");
}

void set_dim_stride(tensor a, unsigned int dim, unsigned int value) {
  set_dim(a, dim, value, true, "set_dim_stride");
}

void aso(int switches, bool predicate, bool polarity) {
  detail::InstanceContext& c = detail::instance("aso");
  detail::check_switches(switches, SW_DEC | SW_VPU, "aso");
  if (!detail::enabled(predicate, polarity)) {
    c.clock.issue(detail::kSpu, 0);
    return;
  }
  // The scalar pipe, and with it the whole VLIW bundle stream, stalls until every earlier
  // vector store has reached global memory (spec 000 §2.8).
  c.clock.stall_until(c.stores_done);
  c.clock.issue(detail::kSpu, 0);
  // The semaphore wraps as a 32-bit register does.
  c.registers.semaphore = static_cast<std::int32_t>(
      static_cast<std::uint32_t>(c.registers.semaphore) + ((switches & SW_DEC) ? ~0u : 1u));
  for (int i = 0; i < c.tensor_count; ++i) {
    c.tensors[i].stored = false;
    c.tensors[i].stored_ranges.clear();
  }
}

}  // namespace tessera::tpc
