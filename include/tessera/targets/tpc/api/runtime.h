// The TPC launcher: finds a kernel by name in the kernel libraries, runs its glue code, cuts
// the index space into boxes spread over the preset's TPC cores, runs the program instances
// on host threads, models their cycles (spec 000 §2.3) and records a KernelRecord on the Device.
// Check-order mode runs each launch a second time with a shuffled, finer split and faults when
// the outputs differ (spec 000 §2.4.3: members are independent and unordered).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/dtype.h"
#include "tessera/core/shape.h"
#include "tessera/profile/profile.h"
#include "tessera/runtime/device.h"
#include "tessera/targets/tpc/api/glue.h"
#include "tessera/targets/tpc/api/library.h"

namespace tessera::tpc {

// A tensor in device memory: a buffer, an element type and a shape (dimension 0 fastest).
// Strides default to dense.
struct DeviceTensor {
  runtime::Buffer buffer;
  DType dtype = DType::f32;
  Shape shape;
  Strides strides;  // empty (rank 0): dense for `shape`
  std::size_t byte_offset = 0;
};

// One program instance: a contiguous box of the index space and the core that runs it.
struct InstanceBox {
  int5 offset{{0, 0, 0, 0, 0}};
  int5 size{{1, 1, 1, 1, 1}};
  unsigned core = 0;
};

struct RuntimeOptions {
  // Run every launch twice and compare (also enabled by TESSERA_TPC_CHECK_ORDER=1).
  bool check_order = false;
  // Where printf output goes; null: standard output.
  std::ostream* printf_stream = nullptr;
  // Libraries to search; null: KernelRegistry::global().
  const KernelRegistry* registry = nullptr;
  // Track vector stores for the coherency warning of spec 000 §2.8.
  bool coherency_check = true;
  // Host threads that run the cores; null: the device's scheduler. Results never depend on it.
  sim::WorkScheduler* scheduler = nullptr;
};

// A kernel ready to run, as glue code describes it (what HabanaKernel returns, plus tensors).
struct KernelLaunch {
  std::string name;
  KernelFunction kernel;
  std::vector<DeviceTensor> inputs;
  std::vector<DeviceTensor> outputs;
  gcapi::TensorGeometry_t index_space{};
  std::vector<gcapi::PadValue> input_pads;  // one per input, or empty for zeros
  std::vector<std::uint32_t> scalar_params;
  bool special_functions = false;
  bool printf_used = false;
};

class Runtime {
 public:
  explicit Runtime(runtime::Device& device, RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Launches a kernel of the libraries by name. `params` / `params_size` are the node
  // parameters handed to the glue (HabanaKernelParams_t::NodeParams). A missing dtype variant
  // ("relu_bf16") runs the f32 variant with casts around it (spec 000 §2.9).
  // Returns the KernelRecord as stored in the device profile (valid until the device records
  // more work).
  const profile::KernelRecord& launch(std::string_view kernel, std::span<const DeviceTensor> inputs,
                                      std::span<const DeviceTensor> outputs,
                                      const void* params = nullptr, std::size_t params_size = 0);
  const profile::KernelRecord& launch(std::string_view kernel,
                                      std::initializer_list<DeviceTensor> inputs,
                                      std::initializer_list<DeviceTensor> outputs,
                                      const void* params = nullptr, std::size_t params_size = 0) {
    return launch(kernel, std::span<const DeviceTensor>(inputs.begin(), inputs.size()),
                  std::span<const DeviceTensor>(outputs.begin(), outputs.size()), params,
                  params_size);
  }
  template <typename P>
  requires(!std::is_pointer_v<P> && std::is_trivially_copyable_v<P>) const
      profile::KernelRecord& launch(std::string_view kernel,
                                    std::initializer_list<DeviceTensor> inputs,
                                    std::initializer_list<DeviceTensor> outputs, const P& params) {
    return launch(kernel, inputs, outputs, &params, sizeof(P));
  }

  // Runs a kernel directly, without a library (glue already applied).
  const profile::KernelRecord& run(const KernelLaunch& launch);

  // The boxes of a launch's index space, as the executor cuts it: `instances` boxes at most,
  // assigned to cores round-robin. Depends only on the index space and the preset.
  std::vector<InstanceBox> split(const gcapi::TensorGeometry_t& index_space) const;

  void set_check_order(bool enabled);
  bool check_order() const;
  // The printf output of the last launch, as it was written to the stream.
  const std::string& last_printf_output() const;
  // Coherency warnings of the last launch (also in the record's metrics).
  std::uint64_t last_coherency_warnings() const;

  runtime::Device& device();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Dense DeviceTensor over a fresh buffer of `device`, optionally filled from host data.
DeviceTensor make_device_tensor(runtime::Device& device, DType dtype, const Shape& shape,
                                const void* host_data = nullptr);

}  // namespace tessera::tpc
