// The four network styles of issue 14 through the compiler and a runtime device, per target:
// ResNet (resnet18: basic blocks), MobileNet (mobilenet_v2: depthwise-separable inverted
// residuals), SqueezeNet (squeezenet1_1: fire modules, small convolutions and concats) and
// ResNet-50 (bottlenecks), torchvision's architectures with random weights at 224x224, plus
// resnet_small. Reported: host wall time per inference (the benchmark's time), modeled device
// time (counter "modeled_ms"), and the ratio to PyTorch on the CPU at the same host thread count
// (TESSERA_THREADS) when PyTorch is installed (counters "vs_pytorch" on median wall times and
// "vs_pytorch_cpu" on median process CPU times; skipped if not). A table at the end puts every
// network's targets side by side with those ratios. The networks are made on first use by
// scripts/make_models.py into the build tree. The "<model>/int8-reference" cases run the network
// quantised to int8 (calibrated on 8 random samples, max-abs) on the reference backend's integer
// executor, with the cosine similarity of its first output to the f32 network as a counter.
// The "resnet18/<target>/threads_2_vs_1" cases time one and two host threads in turn in one
// process, with PyTorch timed the same way after them (run_thread_scaling).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/compiler/backend.h"
#include "tessera/compiler/driver.h"
#include "tessera/compiler/passes.h"
#include "tessera/compiler/quantize.h"
#include "tessera/core/log.h"
#include "tessera/ops/gemm.h"
#include "tessera/sim/scheduler.h"
#include "tessera/targets/registry.h"

namespace {

namespace fs = std::filesystem;
using namespace tessera;
using namespace tessera::compiler;

std::string model_path(const std::string& name) {
  if (name == "resnet_small" || name == "mobilenet_small")
    return std::string(TESSERA_SOURCE_DIR) + "/examples/models/" + name + ".onnx";
  const std::string path = std::string(TESSERA_BINARY_DIR) + "/models/" + name + ".onnx";
  if (!fs::exists(path)) {
    const std::string cmd = "/usr/bin/python3 " + std::string(TESSERA_SOURCE_DIR) +
                            "/scripts/make_models.py --" + name + " --out " +
                            std::string(TESSERA_BINARY_DIR) + "/models";
    if (std::system(cmd.c_str()) != 0) return "";
  }
  return path;
}

struct Seconds {
  double wall = -1.0, cpu = -1.0;
};

// Median seconds (wall, process CPU) per inference of the same network in PyTorch on this CPU at
// the same TESSERA_THREADS, or negative numbers.
Seconds pytorch_seconds(const std::string& name) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) return {};
  const std::string cmd =
      "/usr/bin/python3 " + std::string(TESSERA_SOURCE_DIR) + "/bench/pytorch_models.py " + name;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return {};
  Seconds s;
  if (std::fscanf(pipe, "%lf %lf", &s.wall, &s.cpu) != 2) s = {};
  pclose(pipe);
  return s;
}

// One row of the closing table per (network, target), in registration order.
struct Row {
  std::string network, target;
  double median_ms = 0, cpu_ms = 0, modeled_ms = 0, pytorch_ms = -1, pytorch_cpu_ms = -1;
  int fallbacks = 0;
};
std::vector<Row>& rows() {
  static std::vector<Row> r;
  return r;
}

// The networks side by side: each target's median times and their ratios to PyTorch's.
void print_table() {
  if (rows().empty()) return;
  std::printf("\n%-14s %-10s %10s %10s %10s %8s %10s %8s %11s %9s\n", "network", "target",
              "median_ms", "cpu_ms", "pytorch_ms", "ratio", "pt_cpu_ms", "cpu_ratio", "modeled_ms",
              "fallbacks");
  // PyTorch's columns read "-" when it is not installed.
  const auto figure = [](double v) { return v > 0 ? fmt::format("{:.2f}", v) : std::string("-"); };
  for (const Row& r : rows()) {
    const bool torch = r.pytorch_ms > 0 && r.pytorch_cpu_ms > 0;
    std::printf(
        "%-14s %-10s %10.2f %10.2f %10s %8s %10s %8s %11.3f %9d\n", r.network.c_str(),
        r.target.c_str(), r.median_ms, r.cpu_ms, figure(r.pytorch_ms).c_str(),
        figure(torch ? r.median_ms / r.pytorch_ms : -1).c_str(), figure(r.pytorch_cpu_ms).c_str(),
        figure(torch ? r.cpu_ms / r.pytorch_cpu_ms : -1).c_str(), r.modeled_ms, r.fallbacks);
  }
  std::printf(
      "(ratio: median wall time / PyTorch's, cpu_ratio: median process CPU time / "
      "PyTorch's, at the same TESSERA_THREADS)\n");
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// A network compiled for a target and loaded onto its device, with seed-0 random inputs.
struct LoadedModel {
  Plan plan;
  std::unique_ptr<runtime::Device> device;
  std::unique_ptr<PlanRunner> runner;
  std::map<std::string, Tensor> inputs;
};

// Null (and the benchmark skipped with the reason) when the model cannot be made.
std::unique_ptr<LoadedModel> load_model(benchmark::State& state, const std::string& name,
                                        const std::string& target) {
  const std::string path = model_path(name);
  if (path.empty()) {
    state.SkipWithError("could not make the model (needs /usr/bin/python3 with onnx and numpy)");
    return nullptr;
  }
  LoadOptions options;
  options.target = target;
  auto m = std::make_unique<LoadedModel>();
  m->plan = load_plan(path, options);
  m->device = runtime::Device::open(m->plan.device);
  m->runner = std::make_unique<PlanRunner>(m->plan, *m->device);
  m->inputs = random_inputs(m->plan.graph, 0);
  return m;
}

void run_model(benchmark::State& state, const std::string& name, const std::string& target) {
  const auto model = load_model(state, name, target);
  if (!model) return;
  const Plan& plan = model->plan;
  PlanRunner& runner = *model->runner;
  const auto& inputs = model->inputs;
  RunResult last = runner.run(inputs);  // warm-up: first-touch of buffers, BLAS threads
  std::vector<double> seconds, cpu_seconds;
  for (auto _ : state) {
    const double cpu0 = process_cpu_seconds();
    last = runner.run(inputs);
    cpu_seconds.push_back(process_cpu_seconds() - cpu0);
    seconds.push_back(last.host_seconds);
    benchmark::DoNotOptimize(last.outputs.size());
  }
  // Medians against PyTorch's medians: the host may be shared, so a mean carries others' load;
  // process CPU time (every thread's) is what that load disturbs least.
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double wall = seconds.empty() ? last.host_seconds : median(seconds);
  const double cpu = cpu_seconds.empty() ? 0.0 : median(cpu_seconds);
  state.counters["median_ms"] = wall * 1e3;
  state.counters["cpu_ms"] = cpu * 1e3;
  state.counters["modeled_ms"] = last.profile.modeled_seconds() * 1e3;
  state.counters["fallbacks"] = plan.fallback_count();
  state.counters["peak_MiB"] =
      static_cast<double>(plan.memory.arena_bytes + plan.memory.weights_bytes) / (1024.0 * 1024.0);
  static std::map<std::string, Seconds> torch;
  if (!torch.count(name)) torch[name] = pytorch_seconds(name);
  if (torch[name].wall > 0) {
    state.counters["pytorch_ms"] = torch[name].wall * 1e3;
    state.counters["vs_pytorch"] = wall / torch[name].wall;
  }
  if (torch[name].cpu > 0) {
    state.counters["pytorch_cpu_ms"] = torch[name].cpu * 1e3;
    state.counters["vs_pytorch_cpu"] = cpu / torch[name].cpu;
  }
  Row row{name,
          target,
          wall * 1e3,
          cpu * 1e3,
          last.profile.modeled_seconds() * 1e3,
          torch[name].wall * 1e3,
          torch[name].cpu * 1e3,
          static_cast<int>(plan.fallback_count())};
  // A benchmark may run more than once (repetitions): the last run's figures stand.
  auto& table = rows();
  const auto same = std::find_if(table.begin(), table.end(), [&](const Row& r) {
    return r.network == name && r.target == target;
  });
  if (same != table.end())
    *same = row;
  else
    table.push_back(row);
}

// One and two host threads in turn, in one process (WorkScheduler::set_thread_limit), so both
// see the same host: on a shared machine the speed of a core drifts by tens of percent within
// minutes, which separate runs at each TESSERA_THREADS fold into their ratio. Each iteration runs
// the network once at each count, in alternating order. Counters: the median of the iterations'
// one-thread / two-thread ratios ("speedup"), the same ratio of medians and of minima, and the
// host's ceilings measured alongside ("host_ceiling" and "host_ceiling_gemm", below); the run stops with an error if the
// two counts' outputs or modeled cycles differ in any bit.
void run_thread_scaling(benchmark::State& state, const std::string& name,
                        const std::string& target) {
  auto& pool = sim::WorkScheduler::shared();
  const unsigned threads = pool.thread_count();
  if (threads < 2) {
    state.SkipWithError("needs TESSERA_THREADS of 2 or more (or unset on a multi-core host)");
    return;
  }
  const auto model = load_model(state, name, target);
  if (!model) return;
  const auto run_at = [&](unsigned n) {
    pool.set_thread_limit(n);
    return model->runner->run(model->inputs);
  };
  const RunResult one = run_at(1), two = run_at(2);  // warm-up, and the bit-for-bit check
  for (const auto& [output, tensor] : one.outputs) {
    const Tensor& other = two.outputs.at(output);
    if (tensor.bytes() != other.bytes() ||
        std::memcmp(tensor.raw_data(), other.raw_data(), tensor.bytes()) != 0) {
      pool.set_thread_limit(threads);
      state.SkipWithError(("output " + output + " differs between 1 and 2 threads").c_str());
      return;
    }
  }
  if (one.profile.total_cycles != two.profile.total_cycles) {
    pool.set_thread_limit(threads);
    state.SkipWithError("modeled cycles differ between 1 and 2 threads");
    return;
  }
  // The host's own ceiling, taken in the same iterations: work that needs no memory and no
  // synchronisation (16 equal chains of square roots) on the same pool at one and two threads.
  // On a VM whose two vCPUs share a physical core, or whose host is busy, it is well below 2.
  std::vector<double> chains(16);
  const auto ceiling_seconds = [&](unsigned n) {
    pool.set_thread_limit(n);
    const auto start = std::chrono::steady_clock::now();
    pool.parallel_for(chains.size(), [&](std::size_t i) {
      double x = 1.0 + static_cast<double>(i);
      for (int k = 0; k < 200000; ++k) x = std::sqrt(x * 1.0000001 + 1.0);
      chains[i] = x;
    });
    benchmark::DoNotOptimize(chains.data());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // The same for the work that fills Tessera's jobs: 16 equal cache-resident GEMMs (OpenBLAS's
  // vector kernels, as in the fully connected layers; oneDNN's convolutions use the same units).
  // Two threads of vector multiply-adds share what the scalar chains do not: a physical core's
  // vector units when the host puts the two vCPUs on one core's hyperthreads.
  constexpr std::int64_t kGemmSide = 96;
  std::vector<std::vector<float>> gemm_buffers(16);
  for (auto& buffer : gemm_buffers) buffer.assign(3 * kGemmSide * kGemmSide, 0.5f);
  const auto gemm_ceiling_seconds = [&](unsigned n) {
    pool.set_thread_limit(n);
    const auto start = std::chrono::steady_clock::now();
    pool.parallel_for(gemm_buffers.size(), [&](std::size_t i) {
      float* a = gemm_buffers[i].data();
      float* b = a + kGemmSide * kGemmSide;
      float* c = b + kGemmSide * kGemmSide;
      for (int k = 0; k < 16; ++k)
        ops::sgemm(false, false, kGemmSide, kGemmSide, kGemmSide, 1.0f, a, kGemmSide, b,
                   kGemmSide, 0.0f, c, kGemmSide);
    });
    benchmark::DoNotOptimize(gemm_buffers.data());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::vector<double> t1, t2, ratios, ceilings, gemm_ceilings;
  bool one_first = true;
  for (auto _ : state) {
    for (unsigned n : one_first ? std::array{1u, 2u} : std::array{2u, 1u})
      (n == 1 ? t1 : t2).push_back(run_at(n).host_seconds);
    ratios.push_back(t1.back() / t2.back());
    const double c1 = ceiling_seconds(1), c2 = ceiling_seconds(2);
    ceilings.push_back(c1 / c2);
    const double g1 = gemm_ceiling_seconds(1), g2 = gemm_ceiling_seconds(2);
    gemm_ceilings.push_back(g1 / g2);
    one_first = !one_first;
  }
  pool.set_thread_limit(threads);
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  state.counters["one_thread_ms"] = median(t1) * 1e3;
  state.counters["two_threads_ms"] = median(t2) * 1e3;
  state.counters["speedup"] = median(ratios);
  state.counters["speedup_of_medians"] = median(t1) / median(t2);
  state.counters["speedup_of_minima"] =
      *std::min_element(t1.begin(), t1.end()) / *std::min_element(t2.begin(), t2.end());
  state.counters["host_ceiling"] = median(ceilings);
  state.counters["host_ceiling_gemm"] = median(gemm_ceilings);
  // PyTorch measured the same way just after, as the yardstick of what this host allows now.
  const std::string cmd = "/usr/bin/python3 " + std::string(TESSERA_SOURCE_DIR) +
                          "/bench/pytorch_models.py --threads-2-vs-1 " + name + " 2>/dev/null";
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) return;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return;
  double paired = -1, of_medians = -1, of_minima = -1;
  const int got = std::fscanf(pipe, "%lf %lf %lf", &paired, &of_medians, &of_minima);
  pclose(pipe);
  if (got != 3) return;
  state.counters["pytorch_speedup"] = paired;
  state.counters["pytorch_speedup_of_medians"] = of_medians;
  state.counters["pytorch_speedup_of_minima"] = of_minima;
}

void run_int8_model(benchmark::State& state, const std::string& name) {
  const std::string path = model_path(name);
  Graph graph = import_onnx_file(path);
  PassOptions passes;
  passes.choose_layouts = false;
  const auto reference = create_backend("reference");
  run_passes(graph, *reference, passes);
  std::vector<std::map<std::string, Tensor>> samples;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) samples.push_back(random_inputs(graph, seed));
  LoadOptions options;
  options.target = "reference";
  const Plan f32 = load_plan(path, options);
  options.passes.int8_table = std::make_shared<const CalibrationTable>(calibrate(graph, samples));
  const Plan plan = load_plan(path, options);
  auto device = runtime::Device::open(plan.device);
  PlanRunner runner(plan, *device), f32_runner(f32, *device);
  const auto inputs = random_inputs(plan.graph, 0);
  RunResult last = runner.run(inputs);
  for (auto _ : state) {
    last = runner.run(inputs);
    benchmark::DoNotOptimize(last.outputs.size());
  }
  const auto want = f32_runner.run(inputs).outputs;
  const auto& [out, tensor] = *want.begin();
  state.counters["cosine"] = compare_int8(out, last.outputs.at(out), tensor).cosine_similarity;
  state.counters["int8_nodes"] = plan.passes.int8_nodes;
  state.counters["peak_MiB"] =
      static_cast<double>(plan.memory.arena_bytes + plan.memory.weights_bytes) / (1024.0 * 1024.0);
}

void register_all() {
  targets::register_all_backends();
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0)
    std::fprintf(stderr,
                 "bench_models: PyTorch is not installed; the vs_pytorch ratio is skipped\n");
  // Network by network, every target beside the others.
  for (const std::string model :
       {"resnet_small", "resnet18", "mobilenet_v2", "squeezenet1_1", "resnet50"})
    for (const auto& info : registered_backends())
      benchmark::RegisterBenchmark(
          (model + "/" + info.name).c_str(),
          [model, target = info.name](benchmark::State& s) { run_model(s, model, target); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
  // Two-thread scaling of the ResNet style on the two backends issue 14 times.
  for (const std::string target : {"gaudi", "reference"})
    benchmark::RegisterBenchmark(
        ("resnet18/" + target + "/threads_2_vs_1").c_str(),
        [target](benchmark::State& s) { run_thread_scaling(s, "resnet18", target); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  for (const std::string model : {"resnet_small", "mobilenet_small"})
    benchmark::RegisterBenchmark((model + "/int8-reference").c_str(),
                                 [model](benchmark::State& s) { run_int8_model(s, model); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  print_table();
  benchmark::Shutdown();
  return 0;
}
