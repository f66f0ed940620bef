// The state of one TPC program instance while it runs: its tensor table, index-space box,
// local memories, LFSR, printf sink, slot issue counters and coherency tracker. The executor
// (tpc::Runtime) sets it in a thread-local before calling the kernel; intrinsics read it.
// Internal to the TPC target; kernels never use it directly.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/dtype.h"
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
  bool output = false;
  // Byte ranges [first, second) written by vector stores since the last aso() (spec 000 §2.8).
  // Only kept for tensors that were stored to, so pure loads cost one flag test.
  bool stored = false;
  std::vector<std::pair<std::int64_t, std::int64_t>> stored_ranges;
};

// Issue counts of the four VLIW slots (spec 000 §2.3.1) and global-memory traffic.
struct Counters {
  std::uint64_t load = 0;
  std::uint64_t spu = 0;
  std::uint64_t vpu = 0;
  std::uint64_t store = 0;
  std::uint64_t global_vectors = 0;  // vector accesses to global memory (the memory bound)
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t coherency_warnings = 0;
  std::uint64_t special_function_calls = 0;
};

// A bump allocator over one local memory of the core (spec 000 §2.5.3).
struct LocalArena {
  const char* name = "";         // preset memory name ("slm", "vlm")
  std::byte* storage = nullptr;  // capacity bytes, owned by the executor
  std::size_t capacity = 0;      // what the program may use (VLM shrinks with special functions)
  std::size_t alignment = 1;
  std::size_t used = 0;
  std::size_t high_water = 0;
};

struct InstanceContext {
  TensorSlot tensors[kMaxTensorSlots];
  int tensor_count = 0;
  int5 offset{{0, 0, 0, 0, 0}};
  int5 size{{1, 1, 1, 1, 1}};
  Counters counters;
  // Cost parameters from the preset, in VPU issues.
  std::uint64_t special_function_issues = 1;
  std::uint64_t reduction_issues = 1;
  bool special_functions_allowed = false;
  bool printf_allowed = false;
  const char* kernel_name = "";
  unsigned core = 0;
  LocalArena slm;
  LocalArena vlm;
  std::uint32_t lfsr[64] = {};
  std::uint32_t s_lfsr = 1;
  std::string* printf_out = nullptr;
  bool coherency_check = true;
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

// Counting is tolerant: vector arithmetic also works outside kernels (e.g. in test oracles).
inline void count_vpu(std::uint64_t issues) {
  if (InstanceContext* c = current_instance) c->counters.vpu += issues;
}
inline void count_spu(std::uint64_t issues) {
  if (InstanceContext* c = current_instance) c->counters.spu += issues;
}
inline void count_load_slot(std::uint64_t issues) {
  if (InstanceContext* c = current_instance) c->counters.load += issues;
}

// Slow paths and faults of tensor access, out of line.
[[noreturn]] void bad_tensor_fault(const InstanceContext& c, int id, const char* intrinsic);
[[noreturn]] void element_size_fault(const InstanceContext& c, int id, std::uint32_t bytes,
                                     const char* intrinsic);
void load_slow(InstanceContext& c, const TensorSlot& t, const int5& coord, void* out,
               std::uint32_t elem_bytes, int lanes);
void store_slow(InstanceContext& c, TensorSlot& t, const int5& coord, const void* in,
                std::uint32_t elem_bytes, int lanes);
void check_coherency(InstanceContext& c, int id, const int5& coord, std::int64_t first,
                     std::int64_t last);
void note_store(TensorSlot& t, std::int64_t first, std::int64_t last);

}  // namespace tessera::tpc::detail
