// The state of one TPC program instance while it runs: its tensor table, index-space box,
// local memories, LFSR, printf sink, slot issue counters and coherency tracker. The executor
// (tpc::Runtime) sets it in a thread-local before calling the kernel; intrinsics read it.
// Internal to the TPC target; kernels never use it directly.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/dtype.h"
#include "tessera/sim/issue_clock.h"
#include "tessera/targets/tpc/api/types.h"

namespace tessera::tpc::detail {

inline constexpr int kMaxTensorSlots = 16;  // ABI size of the table; the preset sets the limit

// One tensor as the instance sees it: dimensions beyond the rank read as size 1.
struct TensorSlot {
  std::byte* base = nullptr;
  std::int64_t size[5] = {1, 1, 1, 1, 1};
  std::int64_t stride[5] = {1, 1, 1, 1, 1};  // in elements
  std::uint32_t elem_bytes = 4;
  DType dtype = DType::f32;
  int rank = 1;
  std::uint32_t pad_bits = 0;  // pad value as raw bits of the element type
  std::int64_t buffer_bytes = 0;  // from base to the buffer's end: what a descriptor may reach
  // Bytes the descriptor reaches once set_dim_size / set_dim_stride changed it; past
  // buffer_bytes, the next access faults (the sets themselves may pass through such states).
  std::int64_t reach_bytes = 0;
  bool reaches_past = false;
  bool output = false;
  // Byte ranges [first, second) written by vector stores since the last aso() (spec 000 §2.8).
  // Only kept for tensors that were stored to, so pure loads cost one flag test.
  bool stored = false;
  std::vector<std::pair<std::int64_t, std::int64_t>> stored_ranges;
};

// The four VLIW slots of spec 000 §2.3.1 and the core's port to global memory, as slots of the
// instance's IssueClock. The port takes a vector every tpc.global_access_cycles_per_vector
// cycles (spec 000 §2.3.3); scalar and gathered accesses take it for one cycle each. Reads and
// writes queue apart (a store waiting for its value does not hold up the next load, as the
// compiler's software pipelining ensures) and share the port's cycles: the executor bounds an
// instance by their sum. The local memories' port takes one access a cycle, loads and stores
// alike (spec 000 §2.3.3).
enum Slot : int {
  kLoad = 0,
  kSpu = 1,
  kVpu = 2,
  kStore = 3,
  kGlobalRead = 4,
  kGlobalWrite = 5,
  kLocalPort = 6
};
using CoreClock = sim::IssueClock<7>;

// Global-memory traffic and events of one instance.
struct Counters {
  std::uint64_t global_transactions = 0;  // accesses to global memory (vector, scalar, gather)
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t coherency_warnings = 0;
  std::uint64_t special_function_calls = 0;
};

struct LocalMemory;  // one core-local memory of the instance (runtime.cpp)

// ST_TNSR RMW (the atomics by which index-space members add into shared elements): instances on
// different host threads may update the same element, so each update is made under the
// launch's lock and also noted, in program order, with the value each element had before its
// first update. After the launch the runtime puts those values back and
// replays every instance's updates in index-space order, so the result does not depend on how
// the host threads met (float additions do not commute in rounding).
struct RmwVector {
  std::byte* first;     // the first in-tensor lane's element
  std::int64_t step;    // bytes between the lanes' elements
  int count;            // in-tensor lanes
  std::uint32_t bytes;  // element size
  void (*apply)(std::byte* at, const std::byte* lane);
  std::byte lanes[256];  // the lanes' values, packed
};
struct RmwLaunch {
  struct Tensor {
    std::byte* base;
    std::uint32_t bytes;            // element size
    std::vector<std::byte> before;  // each updated element before its first update
    std::vector<bool> updated;      // per element
  };
  std::mutex mutex;
  std::vector<Tensor> tensors;
};

// The core's registers that outlive a program instance (tpc-intrinsics.h get/set_semaphore_value,
// get/set_csr_value, get/set_convert_csr_value): each launch starts them at 0 (RHNE for the
// rounding CSRs; the reset values are not published) and a core's instances hand them on in
// index-space order (Runtime's execute), as program-scope __local__ objects are.
struct CoreRegisters {
  std::int32_t semaphore = 0;       // SEMAPHORE: ASO adds 1 (SW_INC) or -1 (SW_DEC)
  std::int32_t round_csr = 0;       // ROUND_CSR: the rounding of floating-point arithmetic
  std::int32_t conv_round_csr = 0;  // CONV_ROUND_CSR: what CONVERT / NEARBYINT use under SW_CSR
};

// The entry forms an instance asked GET_LUT_ENTRY_AND_INTERVAL_START for (intrinsics_lut.h
// numbers each input type, FUNC_VARIANT and shift), one bit each, so that a lookup can refuse a
// table that was fitted for another form.
struct LutForms {
  static constexpr int kCount = 192;
  std::uint64_t bits[kCount / 64] = {};
  void add(int form) { bits[form >> 6] |= std::uint64_t{1} << (form & 63); }
  bool has(int form) const { return (bits[form >> 6] >> (form & 63) & 1) != 0; }
  bool empty() const { return (bits[0] | bits[1] | bits[2]) == 0; }
};

struct InstanceContext {
  TensorSlot tensors[kMaxTensorSlots];
  int tensor_count = 0;
  int5 offset{{0, 0, 0, 0, 0}};
  int5 size{{1, 1, 1, 1, 1}};
  Counters counters;
  CoreClock clock;
  std::uint64_t global_port_cycles = 4;  // port occupancy of one vector access
  std::uint64_t global_latency = 0;      // the global memory's latency behind the port
  std::uint64_t stores_done = 0;         // when the last global store reaches memory (aso)
  // Cost parameters from the preset, in VPU issues.
  std::uint64_t special_function_issues = 1;
  std::uint64_t reduction_issues = 1;
  bool special_functions_allowed = false;
  bool printf_allowed = false;
  const char* kernel_name = "";
  unsigned core = 0;
  LocalMemory* slm = nullptr;
  LocalMemory* vlm = nullptr;
  bool special_functions_called = false;  // what the glue's specialFunctionsUsed should say
  LutForms lut_forms;                     // entry forms GET_LUT_ENTRY_AND_INTERVAL_START gave
  bool printf_called = false;
  std::uint32_t lfsr[64] = {};
  std::uint32_t s_lfsr = 1;
  CoreRegisters registers;
  std::string* printf_out = nullptr;
  bool coherency_check = true;
  RmwLaunch* rmw = nullptr;            // the launch's RMW record; null applies updates directly
  std::vector<RmwVector> rmw_updates;  // this instance's RMW updates in program order
};

// Set by the executor for the duration of a program instance on this host thread. Every
// intrinsic reads it, so it uses the initial-exec TLS model: one load instead of a
// __tls_get_addr call from kernel libraries (libtessera_tpc is always loaded at start-up).
extern constinit thread_local InstanceContext* current_instance
    __attribute__((tls_model("initial-exec")));

// The running instance; a UserError when an intrinsic that needs one is called outside a kernel.
[[noreturn]] void no_instance_error(const char* intrinsic);
inline InstanceContext& instance(const char* intrinsic) {
  InstanceContext* c = current_instance;
  if (c == nullptr) [[unlikely]]
    no_instance_error(intrinsic);
  return *c;
}

// ---- timing (spec 000 §2.3.1) ----
// Every intrinsic issues on its slot once its operands are ready and stamps its result with
// the cycle it is ready. Timing is tolerant: intrinsics also work outside kernels (e.g. in test
// oracles), where they cost nothing.
inline std::uint64_t issue(Slot slot, std::uint64_t operands_ready = 0,
                           std::uint64_t occupancy = 1) {
  InstanceContext* c = current_instance;
  return c ? c->clock.issue(slot, operands_ready, occupancy) : 0;
}
inline std::uint64_t vpu_issue(std::uint64_t operands_ready) {
  return issue(kVpu, operands_ready);
}
// The latest ready cycle of the operands that carry one (vectors, predicates); scalars are
// ready at once.
template <typename T>
inline std::uint64_t ready_of_one(const T& x) {
  if constexpr (requires { x.ready; })
    return x.ready;
  else
    return 0;
}
template <typename... Ops>
inline std::uint64_t ready_of(const Ops&... ops) {
  std::uint64_t r = 0;
  ((r = std::max(r, ready_of_one(ops))), ...);
  return r;
}
// One instruction on `slot` whose operands are `ops`: `compute()` gives its result, which is
// stamped with its ready cycle. The result is built in place (a vector value is 320 bytes;
// passing it through by value would copy it on every intrinsic).
template <typename F, typename... Ops>
inline auto on_slot(Slot slot, F&& compute, const Ops&... ops) {
  auto result = compute();
  result.ready = issue(slot, ready_of(ops...));
  return result;
}
template <typename F, typename... Ops>
inline auto on_vpu(F&& compute, const Ops&... ops) {
  auto result = compute();
  result.ready = issue(kVpu, ready_of(ops...));
  return result;
}
// A multi-issue VPU operation (special functions, reductions): `occupancy` cycles on the slot.
template <typename F, typename... Ops>
inline auto on_vpu_long(std::uint64_t occupancy, F&& compute, const Ops&... ops) {
  auto result = compute();
  result.ready = issue(kVpu, ready_of(ops...), occupancy);
  return result;
}
// A global-memory read issued from the load slot when `operands_ready`: the slot, then the
// port, then the memory's latency. `port_cycles` 0 takes a vector's occupancy. Returns when
// the data is in the register.
inline std::uint64_t global_read(InstanceContext& c, std::uint64_t operands_ready,
                                 std::uint64_t port_cycles = 0) {
  const std::uint64_t issued = c.clock.issue(kLoad, operands_ready) - c.clock.latency(kLoad);
  const std::uint64_t occupancy = port_cycles ? port_cycles : c.global_port_cycles;
  c.counters.global_transactions += 1;
  return c.clock.issue(kGlobalRead, issued, occupancy, c.global_latency);
}
// A global-memory write of a value ready at `value_ready`, from the store slot. The core does
// not wait for it, but the program ends (and aso() returns) only when it has reached memory.
inline void global_write(InstanceContext& c, std::uint64_t value_ready,
                         std::uint64_t port_cycles = 0) {
  const std::uint64_t issued = c.clock.issue(kStore, value_ready) - c.clock.latency(kStore);
  const std::uint64_t occupancy = port_cycles ? port_cycles : c.global_port_cycles;
  c.counters.global_transactions += 1;
  const std::uint64_t done = c.clock.issue(kGlobalWrite, issued, occupancy, c.global_latency);
  c.stores_done = std::max(c.stores_done, done);
}

// Slow paths and faults of tensor access, out of line.
[[noreturn]] void bad_tensor_fault(const InstanceContext& c, int id, const char* intrinsic);
[[noreturn]] void descriptor_reach_fault(const InstanceContext& c, int id, const char* intrinsic);
[[noreturn]] void element_size_fault(const InstanceContext& c, int id, std::uint32_t bytes,
                                     const char* intrinsic);
void load_slow(InstanceContext& c, const TensorSlot& t, const int5& coord, void* out,
               std::uint32_t elem_bytes, int lanes);
void store_slow(InstanceContext& c, TensorSlot& t, const int5& coord, const void* in,
                std::uint32_t elem_bytes, int lanes);
// Applies one RMW update of the running instance to tensor `t` (see RmwLaunch).
void rmw_update(InstanceContext& c, const TensorSlot& t, const RmwVector& update);
void check_coherency(InstanceContext& c, int id, const int5& coord, std::int64_t first,
                     std::int64_t last);
void note_store(TensorSlot& t, std::int64_t first, std::int64_t last);

}  // namespace tessera::tpc::detail
