#include "tessera/compiler/driver.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "tessera/compiler/backend.h"
#include "tessera/compiler/model_file.h"
#include "tessera/compiler/passes.h"
#include "tessera/compiler/quantize.h"
#include "tessera/core/error.h"
#include "tessera/runtime/device.h"

namespace tessera::compiler {

namespace fs = std::filesystem;

Plan load_plan(const std::string& path, const LoadOptions& options) {
  if (!fs::exists(path)) throw_user_error("model file '{}' does not exist", path);
  if (is_model_file(path)) {
    ModelFile model = load_model(path);
    const std::string target = options.target.empty() ? model.target : options.target;
    if (target != model.target)
      throw_user_error(
          "{} was compiled for target '{}', not '{}'; recompile the ONNX model with "
          "`tessera compile MODEL.onnx --target {} -o MODEL.tsm`",
          path, model.target, target, target);
    const auto backend = create_backend(target);
    Plan plan = lower_graph(std::move(model.graph), *backend,
                            options.device.empty() ? model.device : options.device);
    plan.model_file = path;
    return plan;
  }
  ImportOptions import = options.import;
  const auto shape_inputs = shape_operand_inputs(path);
  for (auto it = import.constant_inputs.begin(); it != import.constant_inputs.end();)
    it = std::find(shape_inputs.begin(), shape_inputs.end(), it->first) == shape_inputs.end()
             ? import.constant_inputs.erase(it)
             : std::next(it);
  Graph graph = import_onnx_file(path, import);
  const auto backend = create_backend(options.target.empty() ? "reference" : options.target);
  CompileOptions compile_options;
  compile_options.device = options.device;
  compile_options.passes = options.passes;
  return compile(std::move(graph), *backend, compile_options);
}

Tolerance conformance_tolerance(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return {1e-3, 1e-5};
    case DType::f16:
      return {4e-3, 1e-4};
    case DType::bf16:
      return {1e-2, 1e-3};
    case DType::f64:
      return {1e-3, 1e-7};  // ONNX's backend test runner's defaults (onnx/backend/test/runner)
    default:
      return {0.0, 0.0};
  }
}

namespace {

// Fastest-first coordinates of flat element `index`, as shapes print ("(3, 1, 0)").
std::string position_of(const Shape& shape, std::int64_t index) {
  std::vector<std::int64_t> coords;
  for (int d = 0; d < shape.rank(); ++d) {
    coords.push_back(index % shape[d]);
    index /= shape[d];
  }
  return fmt::format("({})", fmt::join(coords, ", "));
}

}  // namespace

OutputComparison compare_output(const std::string& name, const Tensor& actual,
                                const Tensor& expected, DType compute) {
  return compare_output(name, actual, expected, conformance_tolerance(actual.dtype(), compute));
}

OutputComparison compare_output(const std::string& name, const Tensor& actual,
                                const Tensor& expected, const Tolerance& tolerance) {
  OutputComparison c;
  c.name = name;
  c.tolerance = tolerance;
  if (!(expected.shape() == actual.shape())) {
    c.shapes_match = false;
    c.ok = false;
    return c;
  }
  const auto x = actual.to_doubles(), y = expected.to_doubles();
  double dot = 0, nx = 0, ny = 0;
  double worst_excess = -INFINITY;  // error minus its allowance, of the worst element
  for (std::size_t i = 0; i < x.size(); ++i) {
    const bool nan_x = std::isnan(x[i]), nan_y = std::isnan(y[i]);
    double excess;
    if (nan_x || nan_y || std::isinf(x[i]) || std::isinf(y[i])) {
      const bool same = (nan_x && nan_y) || x[i] == y[i];
      if (!same) c.max_abs_error = INFINITY;
      excess = same ? -INFINITY : INFINITY;
    } else {
      const double d = std::abs(x[i] - y[i]);
      c.max_abs_error = std::max(c.max_abs_error, d);
      if (std::abs(y[i]) > 1e-6) c.max_rel_error = std::max(c.max_rel_error, d / std::abs(y[i]));
      excess = d - (c.tolerance.atol + c.tolerance.rtol * std::abs(y[i]));
      dot += x[i] * y[i];
      nx += x[i] * x[i];
      ny += y[i] * y[i];
    }
    if (excess > 0) ++c.mismatches;
    if (excess > worst_excess || c.worst_index < 0) {
      worst_excess = excess;
      c.worst_index = static_cast<std::int64_t>(i);
      c.worst_actual = x[i];
      c.worst_expected = y[i];
    }
  }
  if (c.worst_index >= 0) c.worst_position = position_of(actual.shape(), c.worst_index);
  c.ok = c.mismatches == 0;
  c.cosine_similarity = (nx == 0 && ny == 0)   ? 1.0
                        : (nx == 0 || ny == 0) ? 0.0
                                               : dot / std::sqrt(nx * ny);
  return c;
}

Tolerance conformance_tolerance(DType dtype, DType compute) {
  const Tolerance own = conformance_tolerance(dtype);
  if (!is_floating(dtype)) return own;
  const Tolerance wide = conformance_tolerance(compute);
  return {std::max(own.rtol, wide.rtol), std::max(own.atol, wide.atol)};
}

namespace {

// The unit roundoff of a float type (half the distance from 1 to the next value); 0 otherwise.
double unit_roundoff(DType t) {
  switch (t) {
    case DType::f16: return std::ldexp(1.0, -11);
    case DType::bf16: return std::ldexp(1.0, -8);
    case DType::f32: return std::ldexp(1.0, -24);
    case DType::f64: return std::ldexp(1.0, -53);
    default: return 0.0;
  }
}

// The terms each output element of node `n` sums, or 0 when it sums none (element-wise ops,
// MaxPool: their single rounding is the dtype tolerance's share).
std::int64_t reduction_length(const Graph& g, const Node& n) {
  auto count = [&](std::size_t i) {
    return i < n.inputs.size() && n.inputs[i] != kNoValue
               ? g.value(n.inputs[i]).shape.element_count()
               : std::int64_t{0};
  };
  if (n.inputs.empty() || n.inputs[0] == kNoValue || n.outputs.empty() ||
      n.outputs[0] == kNoValue)
    return 0;
  const std::int64_t out = g.value(n.outputs[0]).shape.element_count();
  if (n.op == "Conv") {
    if (n.inputs.size() < 2 || n.inputs[1] == kNoValue) return 0;
    // Output channels are ONNX's first weights dim, wherever a backend's layout moved it.
    const auto dims = g.value(n.inputs[1]).shape.outer_first();
    const auto perm = n.attr_ints("tessera.weights_perm");
    std::size_t at = 0;
    for (std::size_t i = 0; i < perm.size(); ++i)
      if (perm[i] == 0) at = i;
    if (dims.empty() || dims[at] == 0) return 0;
    return count(1) / dims[at];  // input channels per group x kernel
  }
  if (n.op == "MatMul" || n.op == "Gemm") {
    const Shape& a = g.value(n.inputs[0]).shape;
    if (a.rank() == 0) return 0;
    const bool trans = n.op == "Gemm" && n.attr_int("transA", 0) != 0 && a.rank() == 2;
    return trans ? a[1] : a[0];  // dimension 0 is the fastest, A's columns
  }
  if (n.op == "AveragePool" || n.op == "LpPool") {
    std::int64_t k = 1;
    for (auto d : n.attr_ints("kernel_shape")) k *= d;
    return k;
  }
  if (n.op == "GlobalAveragePool" || n.op == "GlobalLpPool" || n.op == "ReduceSum" ||
      n.op == "ReduceMean" || n.op == "ReduceL1" || n.op == "ReduceL2" ||
      n.op == "ReduceSumSquare" || n.op == "ReduceLogSum" || n.op == "ReduceLogSumExp")
    return out > 0 ? count(0) / out : 0;
  if (n.op == "Softmax" || n.op == "LogSoftmax" || n.op == "LayerNormalization") {
    const Shape& x = g.value(n.inputs[0]).shape;
    const bool last_only = n.op != "LayerNormalization" && g.opset >= 13;
    std::int64_t axis = n.attr_int("axis", n.op == "LayerNormalization" || g.opset >= 13 ? -1 : 1);
    if (axis < 0) axis += x.rank();
    if (axis < 0 || axis >= x.rank()) return 0;
    const auto dims = x.outer_first();
    std::int64_t k = 1;
    for (std::int64_t d = axis; d < x.rank() && (!last_only || d == axis); ++d)
      k *= dims[static_cast<std::size_t>(d)];
    return k;
  }
  return 0;
}

}  // namespace

ReductionChain reduction_chain(const Graph& graph, ValueId v) {
  std::vector<ReductionChain> at(graph.values.size());
  const double cap = kToleranceSigmas * kToleranceSigmas;
  for (const Node& n : graph.nodes) {
    ReductionChain in;
    for (ValueId i : n.inputs)
      if (i != kNoValue && at[static_cast<std::size_t>(i)].weight > in.weight)
        in = at[static_cast<std::size_t>(i)];
    if (const std::int64_t k = reduction_length(graph, n); k > 0) {
      ++in.reductions;
      in.longest = std::max(in.longest, k);
      in.weight += std::min(static_cast<double>(k), cap);
    }
    for (ValueId o : n.outputs)
      if (o != kNoValue) at[static_cast<std::size_t>(o)] = in;
  }
  return at.at(static_cast<std::size_t>(v));
}

Tolerance output_tolerance(DType dtype, DType compute, const ReductionChain& chain,
                           const Tensor& expected) {
  Tolerance t = conformance_tolerance(dtype, compute);
  const double u = unit_roundoff(compute);
  if (!is_floating(dtype) || !is_floating(compute) || u <= unit_roundoff(dtype) ||
      chain.weight <= 0)
    return t;
  double squares = 0;
  std::int64_t n = 0;
  for (double x : expected.to_doubles()) {
    if (!std::isfinite(x)) continue;
    squares += x * x;
    ++n;
  }
  const double rms = n ? std::sqrt(squares / static_cast<double>(n)) : 0.0;
  t.atol += 2 * u * std::sqrt(chain.weight) * rms;
  return t;
}

Tolerance int8_tolerance(double step) {
  const Tolerance f32 = conformance_tolerance(DType::f32);
  return {f32.rtol, f32.atol + kInt8ToleranceSteps * step};
}

Graph load_calibration_graph(const std::string& onnx_path, const ImportOptions& import) {
  Graph graph = import_onnx_file(onnx_path, import);
  PassOptions passes;
  passes.choose_layouts = false;
  run_passes(graph, *create_backend("reference"), passes);
  return graph;
}

std::vector<OutputComparison> compare_outputs(const std::map<std::string, Tensor>& actual,
                                              const std::map<std::string, Tensor>& expected,
                                              DType compute) {
  std::vector<OutputComparison> result;
  for (const auto& [name, a] : actual) {
    auto it = expected.find(name);
    if (it == expected.end()) {
      OutputComparison c;
      c.name = name;
      c.shapes_match = false;
      c.ok = false;
      result.push_back(c);
      continue;
    }
    result.push_back(compare_output(name, a, it->second, compute));
  }
  return result;
}

std::vector<OutputComparison> compare_outputs(const std::map<std::string, Tensor>& actual,
                                              const std::map<std::string, Tensor>& expected,
                                              DType compute, const Graph& graph) {
  std::vector<OutputComparison> result;
  for (const auto& [name, a] : actual) {
    const auto it = expected.find(name);
    const auto id = graph.find_value(name);
    if (it == expected.end() || !id) {
      result.push_back(compare_outputs({{name, a}}, {}, compute).front());
      continue;
    }
    const ReductionChain chain = reduction_chain(graph, *id);
    const Tolerance own = conformance_tolerance(a.dtype(), compute);
    const Tolerance tol = output_tolerance(a.dtype(), compute, chain, it->second);
    OutputComparison c = compare_output(name, a, it->second, tol);
    if (tol.atol != own.atol)
      c.basis = fmt::format("{} rounding through {} reduction(s) of up to {} terms",
                            dtype_name(compute), chain.reductions, chain.longest);
    result.push_back(std::move(c));
  }
  return result;
}

std::string OutputComparison::describe() const {
  if (!shapes_match) return fmt::format("{}: shapes differ (or no reference output)", name);
  std::string text =
      fmt::format("{}: max abs error {:.3g}, max rel error {:.3g} (tolerance rtol {:g}, "
                  "atol {:.3g}{})",
                  name, max_abs_error, max_rel_error, tolerance.rtol, tolerance.atol,
                  basis.empty() ? "" : ": " + basis);
  if (worst_index >= 0)
    text += fmt::format(", worst element {} at {}: {:.9g} vs {:.9g}", worst_index, worst_position,
                        worst_actual, worst_expected);
  text += fmt::format(", cosine similarity {:.6f}", cosine_similarity);
  text += ok ? " ok" : fmt::format(" MISMATCH ({} elements out of tolerance)", mismatches);
  return text;
}

std::string_view case_status_name(CaseStatus status) {
  switch (status) {
    case CaseStatus::pass:
      return "PASS";
    case CaseStatus::fail:
      return "FAIL";
    case CaseStatus::unsupported:
      return "UNSUPPORTED";
  }
  return "?";
}

std::vector<std::string> find_cases(const std::vector<std::string>& paths) {
  std::vector<std::string> cases;
  for (const auto& p : paths) {
    if (!fs::is_directory(p)) throw_user_error("conformance: '{}' is not a directory", p);
    if (fs::exists(fs::path(p) / "model.onnx")) {
      cases.push_back(p);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(p))
      if (entry.is_directory() && fs::exists(entry.path() / "model.onnx"))
        found.push_back(entry.path().string());
    std::sort(found.begin(), found.end());
    if (found.empty())
      throw_user_error("conformance: '{}' holds no test cases (directories with model.onnx)", p);
    cases.insert(cases.end(), found.begin(), found.end());
  }
  return cases;
}

namespace {

std::vector<std::string> sorted_files(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<int, std::string>> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && n.size() > prefix.size() + 3 && n.substr(n.size() - 3) == ".pb")
      files.push_back(
          {std::stoi(n.substr(prefix.size(), n.size() - prefix.size() - 3)), e.path().string()});
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> out;
  for (auto& f : files) out.push_back(f.second);
  return out;
}

// The quantisation step of graph output `v` of an int8 graph: the scale of the DequantizeLinear
// that leaves the int8 domain for it, or (an f32 node after it) its calibrated threshold / 128.
double output_step(const Graph& g, ValueId v, const CalibrationTable& table) {
  const int producer = g.value(v).producer;
  if (producer >= 0) {
    const Node& n = g.nodes[static_cast<std::size_t>(producer)];
    if (n.op == "DequantizeLinear" && n.inputs.size() > 1 && g.value(n.inputs[1]).is_constant())
      return g.value(n.inputs[1]).constant->to_doubles().at(0);
  }
  const auto it = table.thresholds.find(g.value(v).name);
  return it == table.thresholds.end() ? 0.0 : it->second / 128.0;
}

// Whether two tensors hold the same dtype, shape and bytes.
bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::equal(a.raw().begin(), a.raw().end(), b.raw().begin(), b.raw().end());
}

}  // namespace

CaseResult run_case(const std::string& case_dir, const ConformanceOptions& options) {
  CaseResult result;
  result.name = fs::path(case_dir).filename().string();
  const fs::path model_path = fs::path(case_dir) / "model.onnx";
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(case_dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) {
    result.detail = "no test_data_set_N directories";
    return result;
  }
  const DType compute =
      create_backend(options.target.empty() ? "reference" : options.target)->compute_precision();
  for (const auto& set : sets) {
    std::vector<Tensor> inputs, expected;
    std::vector<std::string> input_names;
    std::map<std::string, Tensor> feed;
    std::map<std::size_t, StructuredValue> structured;  // by input position
    LoadOptions load;
    load.target = options.target;
    load.device = options.device;
    Plan plan;
    try {
      // Sequence and optional inputs are bound at compile time; their place in `inputs` is
      // kept by an empty tensor.
      const auto input_kinds = model_value_kinds(model_path.string(), false);
      const auto output_kinds = model_value_kinds(model_path.string(), true);
      const auto input_files = sorted_files(set, "input_");
      for (std::size_t i = 0; i < input_files.size(); ++i) {
        const ValueKind kind = i < input_kinds.size() ? input_kinds[i] : ValueKind::tensor;
        if (kind == ValueKind::tensor) {
          inputs.push_back(load_tensor_pb(input_files[i]));
        } else {
          structured[i] = load_structured_pb(input_files[i], kind);
          inputs.emplace_back();
        }
      }
      const auto declared = model_input_dtypes(model_path.string());
      for (std::size_t i = 0; i < inputs.size() && i < declared.size(); ++i)
        if (declared[i] == DType::bf16 && inputs[i].dtype() == DType::u16)
          inputs[i] = Tensor::from_bytes(DType::bf16, inputs[i].shape(), inputs[i].raw());
      // A sequence output is compared element by element, an empty optional not at all.
      const auto output_files = sorted_files(set, "output_");
      for (std::size_t o = 0; o < output_files.size(); ++o) {
        const ValueKind kind = o < output_kinds.size() ? output_kinds[o] : ValueKind::tensor;
        for (auto& t : load_structured_pb(output_files[o], kind).tensors)
          expected.push_back(std::move(t));
      }
      // Inputs come in the order of the graph's non-initializer inputs; those feeding shape
      // operands are bound as constants so shapes stay static.
      const auto shape_inputs = shape_operand_inputs(model_path.string());
      input_names = model_input_names(model_path.string());
      if (input_names.size() != inputs.size()) {
        result.detail = fmt::format("{} inputs in {}, the model declares {}", inputs.size(),
                                    set.filename().string(), input_names.size());
        return result;
      }
      // Symbolic input dims take their values from the data, as ONNX Runtime's would.
      const auto dim_params = model_input_dim_params(model_path.string());
      for (std::size_t i = 0; i < inputs.size() && i < dim_params.size(); ++i) {
        const auto dims = inputs[i].shape().outer_first();
        for (std::size_t d = 0; d < dim_params[i].size() && d < dims.size(); ++d)
          if (!dim_params[i][d].empty() && !structured.count(i))
            load.import.dims[dim_params[i][d]] = dims[d];
      }
      for (std::size_t i = 0; i < inputs.size(); ++i)
        if (structured.count(i))
          load.import.structured_inputs[input_names[i]] = structured[i];
        else if (std::find(shape_inputs.begin(), shape_inputs.end(), input_names[i]) !=
                 shape_inputs.end())
          load.import.constant_inputs[input_names[i]] = inputs[i];
        else
          feed[input_names[i]] = inputs[i];
      // An int8 backend is given thresholds that fit this data set: calibrated on it.
      if (compute == DType::i8)
        load.passes.int8_table = std::make_shared<const CalibrationTable>(
            calibrate(load_calibration_graph(model_path.string(), load.import), {feed}));
      plan = load_plan(model_path.string(), load);
    } catch (const Error& e) {
      result.status = CaseStatus::unsupported;
      result.detail = e.what();
      return result;
    }
    result.fallbacks = plan.fallback_count();
    try {
      auto device = runtime::Device::open(plan.device);
      PlanRunner runner(plan, *device);
      RunResult run = runner.run(feed);
      const Graph& g = plan.graph;
      // The integer executor's results: the reference backend on the same quantised graph.
      result.int8 = compute == DType::i8 && is_int8_graph(g);
      RunResult integer;
      if (result.int8) {
        LoadOptions reference = load;
        reference.target = "reference";
        reference.device = plan.device;
        const Plan integer_plan = load_plan(model_path.string(), reference);
        auto integer_device = runtime::Device::open(plan.device);
        PlanRunner integer_runner(integer_plan, *integer_device);
        integer = integer_runner.run(feed);
      }
      if (g.outputs.size() != expected.size()) {
        result.status = CaseStatus::fail;
        result.detail = fmt::format("{} outputs, {} expected", g.outputs.size(), expected.size());
        return result;
      }
      for (std::size_t o = 0; o < expected.size(); ++o) {
        const std::string& name = g.value(g.outputs[o]).name;
        const Tensor& actual = run.outputs.at(name);
        // Older ONNX test data stores bfloat16 tensors as their uint16 bit patterns.
        if (actual.dtype() == DType::bf16 && expected[o].dtype() == DType::u16)
          expected[o] = Tensor::from_bytes(DType::bf16, expected[o].shape(), expected[o].raw());
        Tolerance tol = output_tolerance(actual.dtype(), compute, reduction_chain(g, g.outputs[o]),
                                         expected[o]);
        std::string held_to;
        if (result.int8) {
          const Tensor& exact = integer.outputs.at(name);
          if (!same_bits(actual, exact)) {
            result.status = CaseStatus::fail;
            result.detail = fmt::format(
                "{}: output '{}' differs from the integer executor (the reference backend on the "
                "same quantised graph): {}",
                set.filename().string(), name,
                actual.shape() == exact.shape() && actual.dtype() == exact.dtype()
                    ? compare(actual, exact, 0.0, 0.0).message
                    : fmt::format("{} {} vs {} {}", dtype_name(actual.dtype()),
                                  actual.shape().to_string(), dtype_name(exact.dtype()),
                                  exact.shape().to_string()));
            return result;
          }
          if (is_floating(actual.dtype())) {
            const double step = output_step(g, g.outputs[o], *load.passes.int8_table);
            tol = int8_tolerance(step);
            held_to = fmt::format(" (int8 tolerance: {} quantisation steps of {:.4g})",
                                  kInt8ToleranceSteps, step);
          }
        }
        const CompareResult cmp = compare(actual, expected[o], tol.rtol, tol.atol);
        if (!cmp.ok) {
          result.status = CaseStatus::fail;
          result.detail = fmt::format("{}: output '{}': {}{}", set.filename().string(), name,
                                      cmp.message, held_to);
          return result;
        }
      }
    } catch (const Error& e) {
      result.status = CaseStatus::fail;
      result.detail = e.what();
      return result;
    }
  }
  result.status = CaseStatus::pass;
  return result;
}

std::vector<Expectation> read_expectations(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw_user_error(
        "cannot open expectations file '{}'; record one with `tessera conformance DIR --target T "
        "--record {}`",
        path, path);
  std::vector<Expectation> out;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    Expectation e;
    std::string where, extra;
    words >> e.name >> where;
    if (e.name.empty() || (where != "device" && where != "fallback") || (words >> extra))
      throw_user_error(
          "{}:{}: expected '<case> device' or '<case> fallback', got '{}'; re-record the file "
          "with `tessera conformance DIR --target T --record FILE`",
          path, line_no, line);
    e.on_device = where == "device";
    out.push_back(std::move(e));
  }
  return out;
}

std::string format_expectations(const std::string& target, const std::vector<CaseResult>& results) {
  std::string text = fmt::format(
      "# ONNX backend node tests (libonnx-testdata) the {} backend must pass, one a line:\n"
      "# \"device\" when every node runs on the target's device, \"fallback\" when some fall "
      "back\n# to reference. A \"device\" case that needs a fallback fails ctest.\n"
      "# Re-record: tessera conformance /usr/share/libonnx-testdata/data/node --target {} "
      "--record FILE\n",
      target, target);
  const auto backends = registered_backends();
  const auto registered = std::find_if(backends.begin(), backends.end(),
                                       [&](const BackendInfo& b) { return b.name == target; });
  if (registered != backends.end() && registered->create()->compute_precision() == DType::i8) {
    int passes = 0, on_device = 0, int8 = 0;
    for (const auto& r : results) {
      passes += r.status == CaseStatus::pass;
      on_device += r.on_device();
      int8 += r.status == CaseStatus::pass && r.int8;
    }
    text += fmt::format(
        "# The {} backend computes in int8: each test data set is calibrated on its own inputs "
        "and\n# quantised; a quantised case passes when its outputs equal the integer executor "
        "bit for bit\n# and lie within {} quantisation steps (plus the f32 tolerance) of the "
        "ONNX outputs.\n# {} pass, {} on the device, {} of them quantised.\n",
        target, kInt8ToleranceSteps, passes, on_device, int8);
  }
  for (const auto& r : results)
    if (r.status == CaseStatus::pass)
      text += fmt::format("{} {}\n", r.name, r.on_device() ? "device" : "fallback");
  return text;
}

std::optional<std::string> expectation_shortfall(const Expectation& expected,
                                                 const CaseResult& result) {
  if (result.status != CaseStatus::pass)
    return fmt::format("{}: {}", case_status_name(result.status), result.detail);
  if (expected.on_device && result.fallbacks > 0)
    return fmt::format(
        "passes only with {} node(s) falling back to reference; it ran every node on the device "
        "before (`tessera compile` lists the fallbacks and their reasons)",
        result.fallbacks);
  return std::nullopt;
}

}  // namespace tessera::compiler
