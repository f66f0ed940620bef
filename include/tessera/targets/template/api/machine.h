// The template target's programming model: a machine of cores, each with load / alu / store
// pipes over a local memory, running element-wise work on f32 tensors in device memory. It is
// the smallest honest target: results are computed natively, and every tile's load, arithmetic
// and store is issued to a sim::Timeline per core with costs from the preset (sim::CostModel),
// local memory is a sim::Memory, and the kernel lands in the device's profile. Copy it to start
// a target (CONTRIBUTING.md, "Add a target"); docs/targets/template.md describes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/profile/profile.h"
#include "tessera/runtime/device.h"

namespace tessera::tmpl {

// f32 elements in device memory: `elements` values from byte `offset` of `buffer`.
struct DeviceSpan {
  runtime::Buffer buffer;
  std::size_t offset = 0;
  std::int64_t elements = 0;
};

enum class Op { add, sub, mul, div, max, min, relu, neg, abs };
const char* op_name(Op op);
bool is_binary(Op op);

class Machine {
 public:
  // UserError unless the device's preset is of the "template" family with the pipes
  // (load, alu, store), the core memory "lm" and the params this target reads.
  explicit Machine(runtime::Device& device);
  runtime::Device& device() { return device_; }

  // out = op(a[, b]) element by element. Tiles of the preset's template.tile_bytes are dealt
  // round-robin to the cores; each core double-buffers them in its local memory, so the load
  // of one tile overlaps the arithmetic and store of the one before. The cores share DRAM's
  // bandwidth through the device's global channel. UserError when spans
  // differ in length or lie outside their buffers; DeviceFault when the tiles do not fit the
  // local memory. Returns the kernel's record as the device's profile stores it.
  profile::KernelRecord elementwise(Op op, const DeviceSpan& a, const DeviceSpan* b,
                                    const DeviceSpan& out);

 private:
  runtime::Device& device_;
  std::int64_t tile_elements_ = 0;
  double alu_lanes_ = 0;
};

}  // namespace tessera::tmpl
