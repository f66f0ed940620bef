// `tessera targets`, `tessera compile`, `tessera calibrate`, `tessera run` and
// `tessera conformance`: the compiler's commands (docs/compiler.md is their user guide).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli_util.h"
#include "commands.h"
#include "tessera/compiler/backend.h"
#include "tessera/compiler/driver.h"
#include "tessera/compiler/model_file.h"
#include "tessera/compiler/passes.h"
#include "tessera/compiler/quantize.h"
#include "tessera/core/error.h"
#include "tessera/core/tensor.h"
#include "tessera/profile/writers.h"
#include "tessera/runtime/device.h"
#include "tessera/targets/registry.h"

namespace tessera::tools {
namespace {

namespace fs = std::filesystem;
using namespace tessera::compiler;

std::string safe_file_name(const std::string& name) {
  std::string out;
  for (char c : name)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return out.empty() ? "output" : out;
}

void print_compile_report(const Plan& plan) {
  const auto& p = plan.passes;
  fmt::print("target {} on device {}: {} nodes, {} on the reference backend as fallbacks\n",
             plan.backend, plan.device, plan.graph.nodes.size(), plan.fallback_count());
  fmt::print(
      "passes: {} folded, {} batchnorms folded, {} biases and {} activations fused, {} dead "
      "nodes removed, {} layout transposes\n",
      p.folded_nodes, p.folded_batchnorms, p.fused_biases, p.fused_activations, p.removed_nodes,
      p.layout_transposes);
  if (p.int8_nodes > 0 || p.int8_host_float > 0)
    fmt::print("int8: {} nodes quantised, {} left in f32 on the host\n", p.int8_nodes,
               p.int8_host_float);
  fmt::print("memory plan: activations {} peak (without reuse {}), weights {}\n",
             human_bytes(static_cast<double>(plan.memory.arena_bytes)),
             human_bytes(static_cast<double>(plan.memory.unplanned_bytes)),
             human_bytes(static_cast<double>(plan.memory.weights_bytes)));
}

void print_fallbacks(const Plan& plan) {
  if (plan.fallback_count() == 0) return;
  fmt::print("fallbacks to reference: {}\n", plan.fallback_count());
  for (const auto& info : plan.info)
    if (info.fallback)
      fmt::print("  {}: {}\n", plan.graph.nodes[static_cast<std::size_t>(info.node)].describe(),
                 info.reason);
}

// --int8 TABLE: quantise with the calibration table while compiling an ONNX model.
void apply_int8_option(const std::string& table, const std::string& model, LoadOptions& options) {
  if (table.empty()) return;
  if (is_model_file(model))
    throw_user_error(
        "--int8: {} is already compiled; quantise the ONNX model instead (`tessera compile "
        "MODEL.onnx --int8 TABLE`)",
        model);
  options.passes.int8_table =
      std::make_shared<const CalibrationTable>(read_calibration_table(table));
}

// ---- tessera targets ----

void register_targets(CLI::App& app) {
  auto* cmd = app.add_subcommand("targets", "List the compiler's registered targets (backends)");
  cmd->callback([] {
    for (const auto& b : registered_backends()) {
      const auto backend = b.create();
      fmt::print("{:<12} {} (default device: {})\n", b.name, b.description,
                 backend->default_device());
    }
  });
}

// ---- tessera compile ----

struct CompileArgs {
  std::string model, target = "reference", device, output, int8;
  std::vector<std::string> dims, inputs;
};

void register_compile(CLI::App& app) {
  auto args = std::make_shared<CompileArgs>();
  auto* cmd = app.add_subcommand(
      "compile", "Compile an ONNX model for a target into a Tessera model file (.tsm)");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("--target,-t", args->target, "target (backend) name; see `tessera targets`");
  cmd->add_option("--device", args->device, "machine preset or JSON file (default: the target's)");
  cmd->add_option("-o,--output", args->output, "model file to write (default: MODEL.tsm)");
  cmd->add_option("--dim", args->dims, "value of a symbolic dimension, NAME=VALUE (repeatable)");
  cmd->add_option(
      "--input", args->inputs,
      "bind an input feeding a shape operand to data, NAME=FILE.npy|FILE.pb (repeatable)");
  cmd->add_option("--int8", args->int8,
                  "quantise to int8 with this calibration table (from `tessera calibrate`)");
  cmd->callback([args] {
    LoadOptions options;
    options.target = args->target;
    options.device = args->device;
    options.import.dims = parse_dims(args->dims);
    options.import.constant_inputs = parse_inputs(args->inputs);
    apply_int8_option(args->int8, args->model, options);
    if (is_model_file(args->model))
      throw_user_error("{} is already a compiled Tessera model; compile the ONNX file instead",
                       args->model);
    Plan plan = load_plan(args->model, options);
    const std::string out = args->output.empty()
                                ? fs::path(args->model).replace_extension(".tsm").string()
                                : args->output;
    save_model(plan, out, {{"source", args->model}, {"tessera_version", TESSERA_VERSION}});
    print_compile_report(plan);
    print_fallbacks(plan);
    fmt::print("wrote {} ({})\n", out, human_bytes(static_cast<double>(fs::file_size(out))));
  });
}

// ---- tessera calibrate ----

struct CalibrateArgs {
  std::string model, inputs_dir, output, method = "max";
  int random = 0;
  std::uint64_t seed = 1;
  double percentile = 99.99;
  std::vector<std::string> dims;
};

void register_calibrate(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Run the f32 network on sample inputs and write the int8 calibration table (a threshold "
      "per tensor) that `compile --int8` and `run --int8` read");
  cmd->add_option("model", args->model, "ONNX model")->required();
  auto* inputs = cmd->add_option(
      "--inputs", args->inputs_dir,
      "directory of samples: one .npy/.pb per sample (one-input models) or one directory per "
      "sample holding <input>.npy or input_K.pb");
  auto* random = cmd->add_option("--random", args->random,
                                 "calibrate on N seeded random inputs (uniform in [-1, 1))");
  inputs->excludes(random);
  cmd->add_option("-o,--output", args->output, "calibration table to write")->required();
  cmd->add_option("--method", args->method,
                  "max (default: largest |x|), kl (TensorRT-style KL divergence over a 2048-bin "
                  "histogram) or percentile");
  cmd->add_option("--percentile", args->percentile,
                  "percentile of |x| for --method percentile (default 99.99)");
  cmd->add_option("--seed", args->seed,
                  "first seed of --random samples (default 1; `run` uses seed 0, so the checked "
                  "inputs are not among the calibration samples)");
  cmd->add_option("--dim", args->dims, "value of a symbolic dimension, NAME=VALUE (repeatable)");
  cmd->callback([args] {
    if (is_model_file(args->model))
      throw_user_error("calibrate needs the ONNX model, not the compiled {}", args->model);
    if (args->inputs_dir.empty() && args->random <= 0)
      throw_user_error("calibrate needs sample inputs: --inputs DIR or --random N (N >= 1)");
    CalibrationOptions copt;
    copt.method = parse_calibration_method(args->method);
    copt.percentile = args->percentile;
    ImportOptions import;
    import.dims = parse_dims(args->dims);
    // The passes `compile --int8` runs before quantising, so the tensor names match.
    const Graph graph = load_calibration_graph(args->model, import);
    std::vector<std::map<std::string, Tensor>> samples;
    if (!args->inputs_dir.empty()) {
      samples = load_calibration_samples(graph, args->inputs_dir);
    } else {
      for (int i = 0; i < args->random; ++i)
        samples.push_back(random_inputs(graph, args->seed + static_cast<std::uint64_t>(i)));
    }
    const CalibrationTable table = calibrate(graph, samples, copt);
    write_calibration_table(table, args->output);
    fmt::print("calibrated {} tensors of {} on {} samples (method {}); wrote {}\n",
               table.thresholds.size(), args->model, table.samples,
               calibration_method_name(table.method), args->output);
  });
}

// ---- tessera run ----

struct RunArgs {
  std::string model, target, device, outputs_dir, profile_file, trace_file, int8;
  std::vector<std::string> dims, inputs;
  bool check = false, summary = false;
  std::uint64_t seed = 0;
  int top = 10;
};

// A progress bar on stderr, shown only on a terminal and only once a run has taken a second.
class Progress {
 public:
  Progress() : enabled_(isatty(fileno(stderr)) != 0), start_(std::chrono::steady_clock::now()) {}
  void update(std::size_t done, std::size_t total) {
    if (!enabled_) return;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed < 1.0) return;
    const int width = 30;
    const int filled = total ? static_cast<int>(width * done / total) : width;
    fmt::print(stderr, "\r[{}{}] {}/{} steps", std::string(static_cast<std::size_t>(filled), '#'),
               std::string(static_cast<std::size_t>(width - filled), ' '), done, total);
    shown_ = true;
  }
  ~Progress() {
    if (shown_) fmt::print(stderr, "\r{}\r", std::string(50, ' '));
  }

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
};

void print_run_summary(const Plan& plan, const RunResult& run, const runtime::Device& device,
                       int top) {
  const auto& prof = run.profile;
  const double modeled = prof.modeled_seconds();
  const Graph& g = plan.graph;
  std::int64_t batch = 1;
  if (!g.inputs.empty()) {
    const Shape& s = g.value(g.inputs[0]).shape;
    if (s.rank() >= 2) batch = s[s.rank() - 1];
  }
  fmt::print("model: {} ({} nodes after passes)\n", g.source, g.nodes.size());
  fmt::print("target: {} on device {} ({})\n", plan.backend, plan.device,
             device.spec().description);
  const bool device_work = std::any_of(run.steps.begin(), run.steps.end(),
                                       [](const StepTiming& s) { return s.cycles > 0; });
  if (!device_work) {
    fmt::print(
        "modeled latency: none for compute (the {} backend computes on the host); host-link "
        "transfers take {}\n",
        plan.backend, human_seconds(modeled));
  } else if (modeled > 0) {
    fmt::print("modeled latency: {} ({} cycles at {:.3g} GHz)\n", human_seconds(modeled),
               prof.total_cycles, prof.clock_hz / 1e9);
    fmt::print("modeled throughput: {:.1f} inferences/s ({:.1f} samples/s at batch {})\n",
               1.0 / modeled, static_cast<double>(batch) / modeled, batch);
  }
  fmt::print("host wall time: {}\n", human_seconds(run.host_seconds));
  fmt::print("device memory peak: {} (activations {}, planned by liveness from {}; weights {})\n",
             human_bytes(static_cast<double>(plan.memory.arena_bytes + plan.memory.weights_bytes)),
             human_bytes(static_cast<double>(plan.memory.arena_bytes)),
             human_bytes(static_cast<double>(plan.memory.unplanned_bytes)),
             human_bytes(static_cast<double>(plan.memory.weights_bytes)));
  std::vector<StepTiming> steps = run.steps;
  const bool by_cycles =
      std::any_of(steps.begin(), steps.end(), [](const StepTiming& s) { return s.cycles > 0; });
  std::stable_sort(steps.begin(), steps.end(), [&](const StepTiming& a, const StepTiming& b) {
    return by_cycles ? a.cycles > b.cycles : a.host_seconds > b.host_seconds;
  });
  fmt::print("top ops by {}:\n", by_cycles ? "modeled cycles" : "host time");
  std::uint64_t total_cycles = 0;
  for (const auto& s : steps) total_cycles += s.cycles;
  for (std::size_t i = 0; i < steps.size() && static_cast<int>(i) < top; ++i) {
    const auto& s = steps[i];
    if (by_cycles)
      fmt::print("  {:>12} cycles {:5.1f}%  {:<20} {:<18} {:<22} host {}\n", s.cycles,
                 total_cycles
                     ? 100.0 * static_cast<double>(s.cycles) / static_cast<double>(total_cycles)
                     : 0.0,
                 s.name, s.op, s.kernel, human_seconds(s.host_seconds));
    else
      fmt::print("  {:>12}  {:<20} {:<18} {}\n", human_seconds(s.host_seconds), s.name, s.op,
                 s.kernel);
  }
  print_fallbacks(plan);
  if (plan.fallback_count() == 0) fmt::print("fallbacks to reference: 0\n");
}

// --check: the outputs against the reference backend running the same (compiled) graph.
void check_against_reference(const Plan& plan, const std::map<std::string, Tensor>& outputs,
                             const std::map<std::string, Tensor>& inputs, runtime::Device& device) {
  Graph graph = plan.graph;
  const auto reference = create_backend("reference");
  Plan ref_plan = lower_graph(std::move(graph), *reference, plan.device);
  PlanRunner ref_runner(ref_plan, device);
  const RunResult ref = ref_runner.run(inputs);
  std::vector<std::string> bad;
  const DType compute = create_backend(plan.backend)->compute_precision();
  if (compute == DType::f32 || compute == DType::i8)
    fmt::print("check against the reference backend (conformance tolerances):\n");
  else
    fmt::print(
        "check against the reference backend (conformance tolerances; target {} computes in "
        "{}, so float outputs are held to the {} tolerance plus the rounding of their "
        "reductions, docs/compiler.md):\n",
        plan.backend, dtype_name(compute), dtype_name(compute));
  for (const auto& c : compare_outputs(outputs, ref.outputs, compute, plan.graph)) {
    fmt::print("  {}\n", c.describe());
    if (!c.ok) bad.push_back(c.describe());
  }
  if (!bad.empty())
    throw_user_error(
        "--check: {} output(s) of target {} differ from the reference backend beyond the "
        "conformance tolerance: {}; run `tessera conformance` on the ops involved to find the "
        "kernel at fault",
        bad.size(), plan.backend, fmt::join(bad, "; "));
}

// --check of an int8 run: its outputs against the f32 network (the same ONNX model compiled
// without quantisation, on the reference backend): cosine similarity and top-1 agreement.
void check_int8_against_f32(const Plan& plan, const std::map<std::string, Tensor>& outputs,
                            const LoadOptions& options, const std::string& model,
                            const std::map<std::string, Tensor>& inputs, runtime::Device& device) {
  if (is_model_file(model)) {
    fmt::print(
        "int8 check against f32: not available for a compiled model file (it holds no f32 "
        "weights); run the ONNX model with --int8 TABLE --check\n");
    return;
  }
  LoadOptions f32 = options;
  f32.target = "reference";
  f32.device = plan.device;
  f32.passes.int8_table.reset();
  const Plan f32_plan = load_plan(model, f32);
  PlanRunner runner(f32_plan, device);
  const RunResult ref = runner.run(inputs);
  fmt::print("int8 check against the f32 network (cosine similarity >= {} required):\n",
             kInt8MinCosine);
  const std::string note = calibration_note(plan.graph, plan.backend);
  fmt::print("  int8 thresholds: {}\n",
             note.empty() ? std::string("from the calibration table given (--int8)") : note);
  std::vector<std::string> bad;
  for (const auto& [name, t] : outputs) {
    auto it = ref.outputs.find(name);
    if (it == ref.outputs.end()) continue;
    const Int8Agreement a = compare_int8(name, t, it->second);
    fmt::print("  {}\n", a.describe());
    if (!a.shapes_match || a.cosine_similarity < kInt8MinCosine) bad.push_back(a.describe());
  }
  if (!bad.empty())
    throw_user_error(
        "--check: {} int8 output(s) fall below cosine similarity {} against f32: {}; calibrate "
        "on more representative inputs (--inputs DIR) or try --method kl or percentile",
        bad.size(), kInt8MinCosine, fmt::join(bad, "; "));
}

void register_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run an ONNX model or a compiled .tsm model on a target");
  cmd->add_option("model", args->model, "ONNX model or Tessera model file (.tsm)")->required();
  cmd->add_option("--target,-t", args->target,
                  "target (backend); default: reference for ONNX, the file's for .tsm");
  cmd->add_option("--device", args->device, "machine preset or JSON file (default: the target's)");
  cmd->add_option("--input", args->inputs,
                  "input data NAME=FILE.npy|FILE.pb (repeatable; others are random)");
  cmd->add_option("--dim", args->dims, "value of a symbolic dimension, NAME=VALUE (repeatable)");
  cmd->add_option("--outputs", args->outputs_dir, "directory to write the outputs to as .npy");
  cmd->add_option("--profile", args->profile_file, "write the run's profile as JSON");
  cmd->add_option("--trace", args->trace_file, "write a Chrome/Perfetto trace of the run");
  cmd->add_flag("--check", args->check,
                "compare the outputs with the reference backend (an int8 run also with the f32 "
                "network: cosine similarity and top-1 agreement)");
  cmd->add_option("--int8", args->int8,
                  "quantise to int8 with this calibration table (from `tessera calibrate`)");
  cmd->add_option("--seed", args->seed, "seed of the random inputs (default 0)");
  cmd->add_option("--top", args->top, "how many ops the summary lists (default 10)");
  cmd->add_flag("--summary", args->summary,
                "also print the target's own profile report (ipu: Poplar's profile summary, "
                "spec 001 §8.2.3)");
  cmd->callback([args] {
    LoadOptions options;
    options.target = args->target;
    options.device = args->device;
    options.import.dims = parse_dims(args->dims);
    const auto given = parse_inputs(args->inputs);
    options.import.constant_inputs = given;
    apply_int8_option(args->int8, args->model, options);
    Plan plan = load_plan(args->model, options);
    std::map<std::string, Tensor> inputs = random_inputs(plan.graph, args->seed);
    for (const auto& [name, t] : given) {
      const bool is_input =
          std::any_of(plan.graph.inputs.begin(), plan.graph.inputs.end(),
                      [&](ValueId v) { return plan.graph.value(v).name == name; });
      if (is_input) {
        inputs[name] = t;
        continue;
      }
      // Not a run-time input: it must have been bound as a constant shape operand.
      std::vector<std::string> names;
      for (ValueId v : plan.graph.inputs) names.push_back(plan.graph.value(v).name);
      const auto shape_inputs = is_model_file(args->model) ? std::vector<std::string>{}
                                                           : shape_operand_inputs(args->model);
      if (std::find(shape_inputs.begin(), shape_inputs.end(), name) == shape_inputs.end())
        throw_user_error(
            "--input {}: the model has no input of that name; its inputs are: {}", name,
            names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", ")));
    }
    auto device = runtime::Device::open(plan.device);
    PlanRunner runner(plan, *device);
    RunResult result;
    {
      Progress progress;
      result =
          runner.run(inputs, RunOptions{!args->trace_file.empty()},
                     [&](std::size_t done, std::size_t total) { progress.update(done, total); });
    }
    print_run_summary(plan, result, *device, args->top);
    if (args->summary) {
      if (const auto report = create_backend(plan.backend)->profile_summary(plan))
        fmt::print("\n{}", *report);
      else
        fmt::print(
            "--summary: target {} has no profile report of its own; the run summary above is "
            "its report (--profile and --trace write the full profile)\n",
            plan.backend);
    }
    if (!args->outputs_dir.empty()) {
      fs::create_directories(args->outputs_dir);
      for (const auto& [name, t] : result.outputs) {
        const std::string path =
            (fs::path(args->outputs_dir) / (safe_file_name(name) + ".npy")).string();
        save_npy(t, path);
      }
      fmt::print("outputs written to {}/ ({} .npy files)\n", args->outputs_dir,
                 result.outputs.size());
    }
    if (!args->profile_file.empty()) {
      profile::write_text_file(args->profile_file, profile::to_json(result.profile));
      fmt::print("profile written to {}\n", args->profile_file);
    }
    if (!args->trace_file.empty()) {
      profile::write_text_file(args->trace_file, profile::chrome_trace(result.profile));
      fmt::print("trace written to {} (open in https://ui.perfetto.dev or chrome://tracing)\n",
                 args->trace_file);
    }
    if (args->check) {
      const bool int8 = is_int8_graph(plan.graph);
      // An int8 graph on the reference backend is its own reference: only the f32 check applies.
      if (!(int8 && plan.backend == "reference"))
        check_against_reference(plan, result.outputs, inputs, *device);
      if (int8) check_int8_against_f32(plan, result.outputs, options, args->model, inputs, *device);
    }
  });
}

// ---- tessera conformance ----

struct ConformanceArgs {
  std::vector<std::string> dirs;
  std::string target = "reference", device, expect, record;
  bool quiet = false;
};

void register_conformance(CLI::App& app) {
  auto args = std::make_shared<ConformanceArgs>();
  auto* cmd = app.add_subcommand(
      "conformance", "Run ONNX backend node tests (model.onnx + test_data_set_N) on a target");
  cmd->add_option("dirs", args->dirs, "case directories, or directories of them")->required();
  cmd->add_option("--target,-t", args->target, "target (backend) name (default reference)");
  cmd->add_option("--device", args->device, "machine preset or JSON file (default: the target's)");
  cmd->add_option("--expect", args->expect,
                  "expectations file ('<case> device|fallback' a line); a case that no longer "
                  "passes, or passes only with a fallback where it ran on the device, is an error");
  cmd->add_option("--record", args->record,
                  "write the passing cases, each marked device or fallback, as an expectations "
                  "file");
  cmd->add_flag("--quiet,-q", args->quiet, "print only failures and the totals");
  cmd->callback([args] {
    ConformanceOptions options;
    options.target = args->target;
    options.device = args->device;
    create_backend(options.target);  // an unknown target fails before any case runs
    std::vector<Expectation> expected;
    if (!args->expect.empty()) expected = read_expectations(args->expect);
    std::map<CaseStatus, int> totals;
    int on_device = 0, int8 = 0;
    std::map<std::string, CaseResult> results;
    std::vector<CaseResult> in_order;
    for (const auto& dir : find_cases(args->dirs)) {
      const CaseResult r = run_case(dir, options);
      ++totals[r.status];
      if (r.on_device()) ++on_device;
      if (r.status == CaseStatus::pass && r.int8) ++int8;
      results[r.name] = r;
      in_order.push_back(r);
      if (args->quiet && r.status != CaseStatus::fail) continue;
      std::string detail = r.detail.substr(0, r.detail.find('\n'));
      if (detail.size() > 160) detail = detail.substr(0, 157) + "...";
      fmt::print("{:<12} {}{}{}{}\n", case_status_name(r.status), r.name, r.int8 ? " (int8)" : "",
                 r.fallbacks ? fmt::format(" ({} fallbacks)", r.fallbacks) : "",
                 detail.empty() ? "" : "  " + detail);
    }
    if (!args->record.empty()) {
      std::ofstream out(args->record);
      out << format_expectations(options.target, in_order);
      if (!out) throw_user_error("cannot write expectations file '{}'", args->record);
    }
    std::vector<std::string> shortfalls;
    for (const auto& e : expected) {
      auto it = results.find(e.name);
      if (it == results.end()) {
        shortfalls.push_back(fmt::format("{} (not among the cases run)", e.name));
        continue;
      }
      if (auto why = expectation_shortfall(e, it->second))
        shortfalls.push_back(fmt::format("{} ({})", e.name, why->substr(0, why->find('\n'))));
    }
    fmt::print("totals for target {}: {} pass ({} on the device), {} fail, {} unsupported\n",
               options.target, totals[CaseStatus::pass], on_device, totals[CaseStatus::fail],
               totals[CaseStatus::unsupported]);
    const DType compute = create_backend(options.target)->compute_precision();
    if (compute == DType::i8) {
      const Tolerance f32 = conformance_tolerance(DType::f32);
      fmt::print(
          "target {} computes in int8: {} passing case(s) quantised (calibrated on their own "
          "inputs), each output equal to the integer executor bit for bit and within {} "
          "quantisation steps + atol {}, rtol {} of the ONNX output\n",
          options.target, int8, kInt8ToleranceSteps, f32.atol, f32.rtol);
    } else if (compute != DType::f32) {
      const Tolerance tol = conformance_tolerance(DType::f32, compute);
      fmt::print(
          "target {} computes in {}: float outputs held to rtol {}, atol {} plus the rounding of "
          "their reductions (docs/compiler.md)\n",
          options.target, dtype_name(compute), tol.rtol, tol.atol);
    }
    if (!shortfalls.empty())
      throw_user_error("{} expected case(s) fall short of {}: {}", shortfalls.size(), args->expect,
                       fmt::join(shortfalls, "; "));
  });
}

}  // namespace

void register_run_commands(CLI::App& app) {
  targets::register_all_backends();
  register_targets(app);
  register_compile(app);
  register_calibrate(app);
  register_run(app);
  register_conformance(app);
}

}  // namespace tessera::tools
