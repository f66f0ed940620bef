// Shared helpers of the TPC API tests: a gaudi device, a registry with test kernels, and
// host <-> device copies of float data.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/runtime/device.h"
#include "tessera/targets/tpc/api/tpc.h"

namespace tpc_test {

using namespace tessera;
using namespace tessera::tpc;

// The message of the UserError `f` throws, or "" when it throws none.
template <typename F>
std::string user_error_of(F f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

inline std::unique_ptr<runtime::Device> open_gaudi() {
  return runtime::Device::open("gaudi");
}

template <typename T>
DeviceTensor upload(runtime::Device& d, DType type, const Shape& shape, const std::vector<T>& v) {
  return make_device_tensor(d, type, shape, v.data());
}

template <typename T>
std::vector<T> download(runtime::Device& d, const DeviceTensor& t) {
  std::vector<T> v(static_cast<std::size_t>(t.shape.element_count()));
  d.copy_to_host(v.data(), t.buffer, v.size() * sizeof(T));
  return v;
}

// Glue for a kernel over one f32 input and one f32 output of any shape, 64 elements per member
// along dim 0; extra options let tests set pads and flags.
struct GlueOptions {
  unsigned inputs = 1;
  unsigned outputs = 1;
  float pad = 0;
  bool special = false;
  bool printf_used = false;
  gcapi::TensorDataType_t type = gcapi::DATA_F32;
  unsigned lanes = 64;
};

// Scalar parameters: the node parameters, dword by dword.
inline void scalar_params_from_node(const gcapi::HabanaKernelParams_t* p,
                                    gcapi::HabanaKernelInstantiation_t* inst) {
  const unsigned dwords = p->NodeParamsSize / 4;
  for (unsigned i = 0; i < dwords && i < gcapi::MAX_SCALAR_PARAMS_DWORDS; ++i)
    std::memcpy(&inst->kernel.scalarParams[i], static_cast<const char*>(p->NodeParams) + 4 * i, 4);
  inst->kernel.paramsNr = dwords;
}

inline KernelSet::Glue glue_for(KernelFunction fn, GlueOptions o = {}) {
  return [fn, o](const gcapi::HabanaKernelParams_t* p, gcapi::HabanaKernelInstantiation_t* inst) {
    const auto rc = gcapi::elementwise_glue(p, inst, o.inputs, o.outputs, o.type, o.lanes, fn);
    if (rc != gcapi::GLUE_SUCCESS) return rc;
    for (unsigned i = 0; i < o.inputs; ++i) inst->inputPadValues[i].fValue = o.pad;
    inst->flags.specialFunctionsUsed = o.special ? 1 : 0;
    inst->flags.printfUsed = o.printf_used ? 1 : 0;
    scalar_params_from_node(p, inst);
    return gcapi::GLUE_SUCCESS;
  };
}

// x rounded to an integer in an e_round_* mode, written from the modes' definitions (half to
// even by hand, not through the host's rounding mode): the reference for converts and NEARBYINT.
inline double round_to_integer(double x, int rm) {
  switch (rm) {
    case e_round_zero:
      return std::trunc(x);
    case e_round_up:
      return std::ceil(x);
    case e_round_down:
      return std::floor(x);
    case e_round_half_az:
      return std::round(x);
    default: {
      const double f = std::floor(x);
      const double d = x - f;
      if (d != 0.5) return d < 0.5 ? f : f + 1;
      return std::fmod(f, 2.0) == 0 ? f : f + 1;
    }
  }
}

// A registry holding one library of test kernels; add_one_member binds a kernel that one
// member runs, whatever the tensors, with the node parameters as its scalar parameters and the
// glue flags of `o` (specialFunctionsUsed, printfUsed).
struct KernelFixture : ::testing::Test {
  explicit KernelFixture(const char* library = "test-kernels")
      : lib(std::make_shared<KernelSet>(library)) {}
  std::unique_ptr<runtime::Device> dev = open_gaudi();
  std::shared_ptr<KernelSet> lib;
  KernelRegistry registry;
  // `pool`: the host threads to run on (null: the device's).
  RuntimeOptions options(sim::WorkScheduler* pool = nullptr) {
    RuntimeOptions o;
    o.registry = &registry;
    o.scheduler = pool;
    return o;
  }
  void SetUp() override { registry.add_builtin_library(lib); }
  void add_one_member(const std::string& name, KernelFunction fn, GlueOptions o = {}) {
    lib->add(name, [fn, o](const gcapi::HabanaKernelParams_t* p,
                           gcapi::HabanaKernelInstantiation_t* inst) {
      inst->indexSpaceGeometry.dims = 1;
      inst->indexSpaceGeometry.sizes[0] = 1;
      scalar_params_from_node(p, inst);
      inst->flags.specialFunctionsUsed = o.special ? 1 : 0;
      inst->flags.printfUsed = o.printf_used ? 1 : 0;
      return gcapi::set_kernel(inst, fn);
    });
  }
};

// The abs kernel of spec 000 §2.7.1.
inline void abs_f32(tensor inputA, tensor outputB) {
  const int5 idx_s = get_index_space_offset();
  const int5 idx_e = get_index_space_size() + idx_s;
  int5 c = {0, 0, 0, 0, 0};
  for (int i0 = idx_s[0] * 64; i0 < idx_e[0] * 64; i0 += 64) {
    c[0] = i0;
    for (int i3 = idx_s[3]; i3 < idx_e[3]; ++i3) {
      c[3] = i3;
      for (int i2 = idx_s[2]; i2 < idx_e[2]; ++i2) {
        c[2] = i2;
        for (int i1 = idx_s[1]; i1 < idx_e[1]; ++i1) {
          c[1] = i1;
          float64 in = v_f32_ld_tnsr_i(c, inputA);
          float64 out = v_f32_abs_v(in);
          f32_st_tnsr_i_v(c, outputB, out);
        }
      }
    }
  }
}

// Elementwise add over a 2-D index space (spec 000 §2.4.3).
inline void add_f32(tensor a, tensor b, tensor out) {
  const int5 s = get_index_space_offset();
  const int5 e = s + get_index_space_size();
  int5 c = {0};
  for (int i = s[0]; i < e[0]; ++i) {
    c[0] = i * 64;
    for (int j = s[1]; j < e[1]; ++j) {
      c[1] = j;
      float64 x = v_f32_ld_tnsr_i(c, a);
      float64 y = v_f32_ld_tnsr_i(c, b);
      f32_st_tnsr_i_v(c, out, v_f32_add_v_v(x, y));
    }
  }
}

}  // namespace tpc_test
