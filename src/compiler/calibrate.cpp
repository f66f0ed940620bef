// Calibration: the table's text format, running a graph on the host to observe every
// activation, the three ways of choosing a threshold, and the int8-versus-f32 agreement check.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "tessera/compiler/onnx_import.h"
#include "tessera/compiler/quantize.h"
#include "tessera/compiler/reference_exec.h"
#include "tessera/core/error.h"
#include "tessera/core/log.h"

namespace tessera::compiler {

namespace fs = std::filesystem;

std::string calibration_method_name(CalibrationMethod method) {
  switch (method) {
    case CalibrationMethod::max_abs:
      return "max";
    case CalibrationMethod::kl:
      return "kl";
    case CalibrationMethod::percentile:
      return "percentile";
  }
  return "?";
}

CalibrationMethod parse_calibration_method(const std::string& name) {
  if (name == "max") return CalibrationMethod::max_abs;
  if (name == "kl") return CalibrationMethod::kl;
  if (name == "percentile") return CalibrationMethod::percentile;
  throw_user_error("calibration method '{}' is not one of max, kl, percentile", name);
}

float CalibrationTable::threshold(const std::string& tensor, const std::string& user) const {
  auto it = thresholds.find(tensor);
  if (it == thresholds.end())
    throw_user_error(
        "calibration table {} has no threshold for tensor '{}' (needed by {}); it was made for "
        "another model or other passes: run `tessera calibrate MODEL.onnx -o TABLE` on this model",
        source.empty() ? "(in memory)" : source, tensor, user);
  return it->second;
}

std::string format_calibration_table(const CalibrationTable& table) {
  std::string text = fmt::format(
      "# Tessera int8 calibration table: one '<tensor> <threshold>' a line; a tensor's int8 value "
      "q\n# stands for q * threshold / 128. Written by `tessera calibrate`; docs/compiler.md.\n"
      "tessera-calibration {}\nmethod {}\nsamples {}\nmodel {}\n",
      kCalibrationFormatVersion, calibration_method_name(table.method), table.samples,
      table.model.empty() ? "-" : table.model);
  for (const auto& [name, t] : table.thresholds) text += fmt::format("{} {:.9g}\n", name, t);
  return text;
}

void write_calibration_table(const CalibrationTable& table, const std::string& path) {
  std::ofstream out(path);
  out << format_calibration_table(table);
  if (!out) throw_user_error("cannot write calibration table '{}'", path);
}

CalibrationTable parse_calibration_table(const std::string& text, const std::string& name) {
  CalibrationTable table;
  table.source = name;
  std::istringstream in(text);
  int line_no = 0;
  bool header = false;
  std::map<std::string, int> seen;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    std::istringstream words(line);
    std::string key, value, extra;
    words >> key >> value;
    const auto bad = [&](const std::string& why) {
      throw_user_error("{}:{}: {} in '{}'; re-create the table with `tessera calibrate`", name,
                       line_no, why, line);
    };
    if (value.empty()) bad("expected '<tensor> <threshold>'");
    if (words >> extra) bad("unexpected text after the threshold (tensor names have no spaces)");
    if (!header) {
      if (key != "tessera-calibration")
        bad("the first line must be 'tessera-calibration 1' (this is not a Tessera calibration "
            "table)");
      if (value != std::to_string(kCalibrationFormatVersion))
        bad(fmt::format("format version {} is not supported (this Tessera reads version {})", value,
                        kCalibrationFormatVersion));
      header = true;
      continue;
    }
    if (key == "method") {
      try {
        table.method = parse_calibration_method(value);
      } catch (const UserError& e) {
        bad(e.what());
      }
      continue;
    }
    if (key == "samples") {
      try {
        table.samples = std::stoi(value);
      } catch (const std::exception&) {
        bad("samples is not an integer");
      }
      continue;
    }
    if (key == "model") {
      table.model = value;
      continue;
    }
    float t = 0;
    try {
      std::size_t used = 0;
      t = std::stof(value, &used);
      if (used != value.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      bad(fmt::format("threshold '{}' of tensor '{}' is not a number", value, key));
    }
    if (!std::isfinite(t) || t <= 0)
      bad(fmt::format("threshold {} of tensor '{}' must be a positive finite number", value, key));
    if (auto it = seen.find(key); it != seen.end())
      bad(fmt::format("tensor '{}' is listed twice (first on line {})", key, it->second));
    seen[key] = line_no;
    table.thresholds[key] = t;
  }
  if (!header)
    throw_user_error("{}: empty calibration table (no 'tessera-calibration 1' line)", name);
  if (table.thresholds.empty())
    throw_user_error(
        "{}: the calibration table lists no tensors; re-create it with `tessera "
        "calibrate`",
        name);
  return table;
}

CalibrationTable read_calibration_table(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw_user_error(
        "cannot open calibration table '{}'; make one with `tessera calibrate "
        "MODEL.onnx --random 16 -o {}`",
        path, path);
  std::ostringstream s;
  s << in.rdbuf();
  return parse_calibration_table(s.str(), path);
}

std::map<std::string, Tensor> evaluate_graph(
    const Graph& graph, const std::map<std::string, Tensor>& inputs,
    const std::function<void(ValueId, const Tensor&)>& observe) {
  std::vector<std::optional<Tensor>> values(graph.values.size());
  std::vector<int> last_use(graph.values.size(), -1);
  for (std::size_t n = 0; n < graph.nodes.size(); ++n)
    for (ValueId v : graph.nodes[n].inputs)
      if (v != kNoValue) last_use[static_cast<std::size_t>(v)] = static_cast<int>(n);
  for (ValueId v : graph.outputs)
    last_use[static_cast<std::size_t>(v)] = static_cast<int>(graph.nodes.size());
  for (ValueId v : graph.inputs) {
    const Value& value = graph.value(v);
    auto it = inputs.find(value.name);
    if (it == inputs.end())
      throw_user_error("no data for input '{}' of {} (expected {} {})", value.name,
                       graph.source.empty() ? graph.name : graph.source, dtype_name(value.dtype),
                       value.shape.to_string());
    if (!(it->second.shape() == value.shape) || it->second.dtype() != value.dtype)
      throw_user_error("input '{}' is {} {}; the model expects {} {}", value.name,
                       dtype_name(it->second.dtype()), it->second.shape().to_string(),
                       dtype_name(value.dtype), value.shape.to_string());
    values[static_cast<std::size_t>(v)] = it->second;
    if (observe) observe(v, it->second);
  }
  for (std::size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    std::vector<const Tensor*> ins;
    for (ValueId v : node.inputs) {
      if (v == kNoValue) {
        ins.push_back(nullptr);
        continue;
      }
      const Value& value = graph.value(v);
      if (value.is_constant()) {
        ins.push_back(&*value.constant);
        continue;
      }
      const auto& slot = values[static_cast<std::size_t>(v)];
      TESSERA_CHECK(slot.has_value(), "{} reads '{}' before it is computed", node.describe(),
                    value.name);
      ins.push_back(&*slot);
    }
    auto outs = run_reference(node, ins, graph.opset);
    for (std::size_t o = 0; o < node.outputs.size() && o < outs.size(); ++o) {
      const ValueId v = node.outputs[o];
      if (v == kNoValue) continue;
      if (observe) observe(v, outs[o]);
      values[static_cast<std::size_t>(v)] = std::move(outs[o]);
    }
    for (ValueId v : node.inputs)
      if (v != kNoValue && last_use[static_cast<std::size_t>(v)] == static_cast<int>(n) &&
          !graph.value(v).is_constant())
        values[static_cast<std::size_t>(v)].reset();
  }
  std::map<std::string, Tensor> out;
  for (ValueId v : graph.outputs) {
    const Value& value = graph.value(v);
    out[value.name] = value.is_constant() ? *value.constant : *values[static_cast<std::size_t>(v)];
  }
  return out;
}

namespace {

// The threshold minimising KL(P || Q) between the clipped histogram P of |x| and its 128-level
// quantisation Q (TensorRT's entropy calibration). `hist` has bins of width max / bins.
double kl_threshold(const std::vector<double>& hist, double max_abs) {
  const int bins = static_cast<int>(hist.size());
  const int levels = 128;
  if (bins <= levels) return max_abs;
  const double width = max_abs / bins;
  double best_kl = std::numeric_limits<double>::infinity();
  int best_i = bins;
  for (int i = levels; i <= bins; ++i) {
    std::vector<double> p(hist.begin(), hist.begin() + i);
    for (int k = i; k < bins; ++k)
      p[static_cast<std::size_t>(i - 1)] += hist[static_cast<std::size_t>(k)];
    // Q: merge the i bins into `levels` groups, spread each group's mass over its non-empty bins.
    std::vector<double> q(static_cast<std::size_t>(i), 0.0);
    const double group = static_cast<double>(i) / levels;
    for (int l = 0; l < levels; ++l) {
      const int begin = static_cast<int>(std::floor(l * group));
      const int end = std::max(begin + 1, static_cast<int>(std::floor((l + 1) * group)));
      double mass = 0;
      int nonzero = 0;
      for (int k = begin; k < end && k < i; ++k) {
        mass += hist[static_cast<std::size_t>(k)];
        if (hist[static_cast<std::size_t>(k)] > 0) ++nonzero;
      }
      for (int k = begin; k < end && k < i; ++k)
        if (hist[static_cast<std::size_t>(k)] > 0) q[static_cast<std::size_t>(k)] = mass / nonzero;
    }
    double ps = 0, qs = 0;
    for (int k = 0; k < i; ++k) {
      ps += p[static_cast<std::size_t>(k)];
      qs += q[static_cast<std::size_t>(k)];
    }
    if (ps <= 0 || qs <= 0) continue;
    double kl = 0;
    for (int k = 0; k < i; ++k) {
      const double pk = p[static_cast<std::size_t>(k)] / ps;
      if (pk <= 0) continue;
      const double qk = q[static_cast<std::size_t>(k)] / qs;
      kl += qk > 0 ? pk * std::log(pk / qk) : pk * 30.0;  // an empty Q bin: heavy penalty
    }
    if (kl < best_kl) {
      best_kl = kl;
      best_i = i;
    }
  }
  return (best_i + 0.5) * width;
}

}  // namespace

CalibrationTable calibrate(const Graph& graph,
                           const std::vector<std::map<std::string, Tensor>>& samples,
                           const CalibrationOptions& options) {
  if (samples.empty())
    throw_user_error("calibration needs at least one sample input (--inputs DIR or --random N)");
  if (options.method == CalibrationMethod::percentile &&
      !(options.percentile > 0 && options.percentile <= 100))
    throw_user_error("--percentile {} is outside (0, 100]", options.percentile);
  if (options.histogram_bins < 128)
    throw_user_error("calibration histograms need at least 128 bins, got {}",
                     options.histogram_bins);
  const auto tracked = [&](ValueId v) { return is_floating(graph.value(v).dtype); };
  // Pass 1: the largest |x| of each float activation.
  std::vector<double> max_abs(graph.values.size(), 0.0);
  for (const auto& sample : samples)
    evaluate_graph(graph, sample, [&](ValueId v, const Tensor& t) {
      if (!tracked(v) || !is_floating(t.dtype())) return;
      double m = max_abs[static_cast<std::size_t>(v)];
      for (float x : t.to_floats())
        if (std::isfinite(x)) m = std::max(m, static_cast<double>(std::fabs(x)));
      max_abs[static_cast<std::size_t>(v)] = m;
    });
  std::vector<double> threshold = max_abs;
  if (options.method != CalibrationMethod::max_abs) {
    // Pass 2: a histogram of |x| over [0, max] per activation.
    // Exact zeros (ReLU's clipped half) carry no information about the range and are left out,
    // as ncnn's KL calibration does; a tensor with fewer non-zero samples than bins keeps its
    // max-abs threshold, since a sparse histogram makes KL and percentiles meaningless.
    const auto bins = static_cast<std::size_t>(options.histogram_bins);
    std::vector<std::vector<double>> hist(graph.values.size());
    std::vector<double> counts(graph.values.size(), 0.0);
    for (const auto& sample : samples)
      evaluate_graph(graph, sample, [&](ValueId v, const Tensor& t) {
        const auto i = static_cast<std::size_t>(v);
        if (!tracked(v) || !is_floating(t.dtype()) || max_abs[i] <= 0) return;
        auto& h = hist[i];
        if (h.empty()) h.assign(bins, 0.0);
        for (float x : t.to_floats()) {
          if (!std::isfinite(x) || x == 0.0f) continue;
          counts[i] += 1;
          const auto b = std::min(bins - 1, static_cast<std::size_t>(std::fabs(x) / max_abs[i] *
                                                                     static_cast<double>(bins)));
          h[b] += 1;
        }
      });
    for (std::size_t i = 0; i < hist.size(); ++i) {
      if (hist[i].empty() || counts[i] < static_cast<double>(bins)) continue;
      if (options.method == CalibrationMethod::kl) {
        threshold[i] = kl_threshold(hist[i], max_abs[i]);
      } else {
        double total = 0;
        for (double c : hist[i]) total += c;
        const double want = total * options.percentile / 100.0;
        double run = 0;
        for (std::size_t b = 0; b < bins; ++b) {
          run += hist[i][b];
          if (run >= want) {
            threshold[i] = (static_cast<double>(b) + 1) * max_abs[i] / static_cast<double>(bins);
            break;
          }
        }
      }
    }
  }
  CalibrationTable table;
  table.model = graph.source.empty() ? graph.name : fs::path(graph.source).filename().string();
  table.method = options.method;
  table.samples = static_cast<int>(samples.size());
  const auto record = [&](ValueId v) {
    const Value& value = graph.value(v);
    if (!tracked(v) || value.is_constant()) return;
    double t = threshold[static_cast<std::size_t>(v)];
    // An activation that was zero on every sample still needs a scale: the smallest normal one.
    if (!(t > 0)) {
      log(LogLevel::info, "compiler", "calibration: '{}' was 0 on every sample", value.name);
      t = 1e-6;
    }
    table.thresholds[value.name] = static_cast<float>(t);
  };
  for (ValueId v : graph.inputs) record(v);
  for (const Node& node : graph.nodes)
    for (ValueId v : node.outputs)
      if (v != kNoValue) record(v);
  return table;
}

std::vector<std::map<std::string, Tensor>> load_calibration_samples(const Graph& graph,
                                                                    const std::string& dir,
                                                                    int limit) {
  if (!fs::is_directory(dir))
    throw_user_error("--inputs '{}' is not a directory of sample inputs", dir);
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir)) entries.push_back(e.path());
  std::sort(entries.begin(), entries.end());
  const auto is_tensor_file = [](const fs::path& p) {
    return p.extension() == ".npy" || p.extension() == ".pb";
  };
  std::vector<std::map<std::string, Tensor>> samples;
  const auto add = [&](std::map<std::string, Tensor> sample) {
    if (limit <= 0 || static_cast<int>(samples.size()) < limit)
      samples.push_back(std::move(sample));
  };
  std::vector<std::string> names;
  for (ValueId v : graph.inputs) names.push_back(graph.value(v).name);
  if (names.size() == 1) {
    for (const auto& p : entries)
      if (fs::is_regular_file(p) && is_tensor_file(p))
        add({{names[0], load_tensor_file(p.string())}});
  }
  for (const auto& p : entries) {
    if (!fs::is_directory(p)) continue;
    std::map<std::string, Tensor> sample;
    for (std::size_t k = 0; k < names.size(); ++k) {
      const fs::path npy = p / (names[k] + ".npy");
      const fs::path pb = p / fmt::format("input_{}.pb", k);
      if (fs::exists(npy))
        sample[names[k]] = load_tensor_file(npy.string());
      else if (fs::exists(pb))
        sample[names[k]] = load_tensor_file(pb.string());
      else
        throw_user_error("calibration sample {} has no data for input '{}' (expected {} or {})",
                         p.string(), names[k], npy.filename().string(), pb.filename().string());
    }
    add(std::move(sample));
  }
  if (samples.empty())
    throw_user_error(
        "--inputs {}: no samples found; put one .npy/.pb file per sample there (single-input "
        "models) or one directory per sample holding <input>.npy or input_K.pb for each input",
        dir);
  return samples;
}

Int8Agreement compare_int8(const std::string& name, const Tensor& int8_result,
                           const Tensor& f32_reference) {
  Int8Agreement a;
  a.name = name;
  if (!(int8_result.shape() == f32_reference.shape())) {
    a.shapes_match = false;
    return a;
  }
  const auto x = int8_result.to_doubles(), y = f32_reference.to_doubles();
  double dot = 0, nx = 0, ny = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    dot += x[i] * y[i];
    nx += x[i] * x[i];
    ny += y[i] * y[i];
  }
  a.cosine_similarity = (nx == 0 && ny == 0)   ? 1.0
                        : (nx == 0 || ny == 0) ? 0.0
                                               : dot / std::sqrt(nx * ny);
  const std::int64_t row = int8_result.rank() == 0 ? 1 : int8_result.dim(0);
  for (std::size_t start = 0; row > 0 && start < x.size(); start += static_cast<std::size_t>(row)) {
    const auto first = x.begin() + static_cast<std::ptrdiff_t>(start);
    const auto ref = y.begin() + static_cast<std::ptrdiff_t>(start);
    const auto end = static_cast<std::ptrdiff_t>(row);
    ++a.rows;
    if (std::max_element(first, first + end) - first == std::max_element(ref, ref + end) - ref)
      ++a.top1_agree;
  }
  return a;
}

std::string Int8Agreement::describe() const {
  if (!shapes_match) return fmt::format("{}: shapes differ from the f32 reference", name);
  return fmt::format("{}: cosine similarity {:.6f} (needs >= {}), top-1 agreement {}/{} rows{}",
                     name, cosine_similarity, kInt8MinCosine, top1_agree, rows,
                     cosine_similarity >= kInt8MinCosine ? " ok" : " BELOW");
}

}  // namespace tessera::compiler
