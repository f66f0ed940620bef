// The template target: results against ops/reference, cycles that follow the preset through
// sim::CostModel and overlap on each core's sim::Timeline, its faults and user errors, and its
// compiler backend with its fallbacks.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "tessera/compiler/backend.h"
#include "tessera/compiler/driver.h"
#include "tessera/core/error.h"
#include "tessera/core/tensor.h"
#include "tessera/ops/reference.h"
#include "tessera/sim/cost_model.h"
#include "tessera/targets/template/backend/backend.h"
#include "tessera/targets/template/kernels/ops.h"

namespace tessera::tmpl {
namespace {

namespace fs = std::filesystem;

std::vector<float> random_floats(std::int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = dist(gen);
  return v;
}

struct Fixture {
  std::unique_ptr<runtime::Device> device;
  Fixture(const std::string& preset = "template") : device(runtime::Device::open(preset)) {}
  DeviceSpan upload(const std::vector<float>& v) {
    const runtime::Buffer b = device->allocate(v.size() * 4);
    device->copy_to_device(b, v.data(), v.size() * 4);
    return {b, 0, static_cast<std::int64_t>(v.size())};
  }
  DeviceSpan empty(std::int64_t n) {
    return {device->allocate(static_cast<std::size_t>(n) * 4), 0, n};
  }
  std::vector<float> download(const DeviceSpan& s) {
    std::vector<float> v(static_cast<std::size_t>(s.elements));
    device->copy_to_host(v.data(), s.buffer, v.size() * 4, s.offset);
    return v;
  }
};

// A copy of the template preset with one param changed, as a user's preset file.
std::string preset_with(const std::string& key, double value, const std::string& name) {
  std::ifstream in(std::string(TESSERA_ARCH_DIR) + "/template.json");
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  s.replace(s.find("\"template\""), 10, "\"" + name + "\"");
  const auto at = s.find("\"" + key + "\"");
  const auto v = s.find("\"value\": ", at) + 9;
  s.replace(v, s.find(',', v) - v, std::to_string(value));
  const fs::path dir = fs::temp_directory_path() / "tessera_template_test";
  fs::create_directories(dir);
  const fs::path file = dir / (name + ".json");
  std::ofstream(file) << s;
  return file.string();
}

Tensor as_tensor(const std::vector<float>& v) {
  return Tensor::from_vector(Shape{static_cast<std::int64_t>(v.size())}, v);
}

TEST(TemplateKernels, MatchTheReference) {
  Fixture f;
  const std::int64_t n = 10000;  // several tiles on every core, the last one partial
  const auto x = random_floats(n, 1), y = random_floats(n, 2);
  const DeviceSpan a = f.upload(x), b = f.upload(y), out = f.empty(n);
  Machine m(*f.device);
  const Tensor tx = as_tensor(x), ty = as_tensor(y);
  ops::add(m, a, b, out);
  EXPECT_TRUE(allclose(as_tensor(f.download(out)), tessera::ops::add(tx, ty), 0, 0));
  ops::div(m, a, b, out);
  EXPECT_TRUE(allclose(as_tensor(f.download(out)), tessera::ops::div(tx, ty), 0, 0));
  ops::relu(m, a, out);
  EXPECT_TRUE(allclose(as_tensor(f.download(out)), tessera::ops::relu(tx), 0, 0));
  ops::neg(m, a, out);
  EXPECT_TRUE(allclose(as_tensor(f.download(out)), tessera::ops::neg(tx), 0, 0));
}

TEST(TemplateKernels, CyclesComeFromThePresetAndTilesOverlap) {
  const std::int64_t n = 4 * 2048 * 8;  // 8 tiles of 2,048 elements per core
  auto run = [&](const std::string& preset) {
    Fixture f(preset);
    const auto x = random_floats(n, 3);
    const DeviceSpan a = f.upload(x), b = f.upload(x), out = f.empty(n);
    Machine m(*f.device);
    const std::uint64_t before = f.device->profile().pipe_busy_cycles.count("core0/alu")
                                     ? f.device->profile().pipe_busy_cycles.at("core0/alu")
                                     : 0;
    const profile::KernelRecord r = ops::add(m, a, b, out);
    return std::make_pair(r, f.device->profile().pipe_busy_cycles.at("core0/alu") - before);
  };
  const auto [base, alu] = run("template");
  ASSERT_EQ(base.cycles_per_core.size(), 4u);
  EXPECT_EQ(base.bytes_read, static_cast<std::uint64_t>(n) * 8);
  // 8 alu ops of latency 3 + 2048/16 cycles each, from the preset's figures.
  EXPECT_EQ(alu, 8u * (3 + 2048 / 16));
  // Twice the lanes: each alu op takes half the issue cycles.
  const auto [wide, wide_alu] = run(preset_with("template.alu_lanes", 32, "template-wide"));
  EXPECT_EQ(wide_alu, 8u * (3 + 2048 / 32));
  // The four cores share DRAM: the kernel takes at least all its bytes over DRAM's bandwidth
  // (32 bytes a cycle), although each core alone would need a quarter of that.
  const std::uint64_t bytes = static_cast<std::uint64_t>(n) * 12;
  EXPECT_GE(base.cycles, bytes / 32);
  // On one core, loads of the next tile overlap the current one: the kernel takes less than
  // its pipes' busy time added up, and at least the load pipe's, the bottleneck.
  const auto [one, one_alu] = run(preset_with("core_count", 1, "template-one-core"));
  EXPECT_EQ(one_alu, 32u * (3 + 2048 / 16));
  Fixture f;
  const sim::CostModel& cost = f.device->cost_model();
  const std::uint64_t load = cost.transfer_cycles("dram", "lm", 2048 * 8);
  const std::uint64_t store = cost.transfer_cycles("lm", "dram", 2048 * 4);
  EXPECT_LT(one.cycles, 32 * (load + (3 + 2048 / 16) + store));
  EXPECT_GE(one.cycles, 32 * load);
  // Element-wise work on this preset is DRAM-bound: one core already draws DRAM's whole
  // bandwidth, so four cores take exactly as long, all bytes over 32 bytes a cycle.
  EXPECT_EQ(one.cycles, bytes / 32);
  EXPECT_EQ(base.cycles, one.cycles);
}

TEST(TemplateKernels, FaultsAndUserErrors) {
  Fixture f;
  Machine m(*f.device);
  const DeviceSpan a = f.empty(100), out = f.empty(50);
  EXPECT_THROW(ops::relu(m, a, out), UserError);                   // lengths differ
  EXPECT_THROW(m.elementwise(Op::add, a, nullptr, a), UserError);  // add needs two inputs
  // Tiles too large for the local memory: the engine's allocator faults, naming lm.
  Fixture big(preset_with("template.tile_bytes", 32768, "template-big-tiles"));
  Machine mb(*big.device);
  const DeviceSpan x = big.empty(10), y = big.empty(10);
  try {
    ops::relu(mb, x, y);
    FAIL() << "expected a DeviceFault";
  } catch (const DeviceFault& e) {
    EXPECT_NE(std::string(e.what()).find("lm"), std::string::npos) << e.what();
  }
  // Another family's preset is refused with what to use instead.
  auto gaudi = runtime::Device::open("gaudi");
  try {
    Machine wrong(*gaudi);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("--device template"), std::string::npos) << e.what();
  }
}

TEST(TemplateBackend, RunsElementwiseCasesOnTheDeviceAndFallsBackOtherwise) {
  if (!fs::exists(TESSERA_ONNX_NODE_DIR)) GTEST_SKIP() << "libonnx-testdata is not installed";
  compiler::register_builtin_backends("template");
  targets::register_template_backend();
  compiler::ConformanceOptions options;
  options.target = "template";
  const std::string dir = TESSERA_ONNX_NODE_DIR;
  for (const char* name : {"test_add", "test_relu", "test_abs", "test_neg", "test_sub"}) {
    const compiler::CaseResult r = compiler::run_case(dir + "/" + name, options);
    EXPECT_TRUE(r.on_device()) << name << ": " << compiler::case_status_name(r.status) << " "
                               << r.detail << " (" << r.fallbacks << " fallbacks)";
  }
  // Broadcasting is not in the library: the case passes through a reference fallback.
  const compiler::CaseResult bcast = compiler::run_case(dir + "/test_add_bcast", options);
  EXPECT_EQ(bcast.status, compiler::CaseStatus::pass) << bcast.detail;
  EXPECT_EQ(bcast.fallbacks, 1);
}

}  // namespace
}  // namespace tessera::tmpl
