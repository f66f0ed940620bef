#include "tessera/compiler/passes.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tessera/compiler/backend.h"
#include "tessera/compiler/quantize.h"
#include "tessera/compiler/reference_exec.h"
#include "tessera/core/error.h"
#include "tessera/core/log.h"
#include "tessera/ops/reference.h"

namespace tessera::compiler {
namespace {

void note(PassReport* report, std::string line) {
  log(LogLevel::debug, "compiler", "{}", line);
  if (report) report->log.push_back(std::move(line));
}

bool is_graph_output(const Graph& g, ValueId v) {
  return std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end();
}

// Removes the nodes flagged in `dead` and re-establishes producer links.
void erase_nodes(Graph& g, const std::vector<bool>& dead) {
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (!dead[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
  g.reindex();
}

// Consumers of each value: (node index, input position).
std::vector<std::vector<std::pair<int, int>>> consumers(const Graph& g) {
  std::vector<std::vector<std::pair<int, int>>> users(g.values.size());
  for (std::size_t n = 0; n < g.nodes.size(); ++n)
    for (std::size_t i = 0; i < g.nodes[n].inputs.size(); ++i)
      if (g.nodes[n].inputs[i] != kNoValue)
        users[static_cast<std::size_t>(g.nodes[n].inputs[i])].push_back(
            {static_cast<int>(n), static_cast<int>(i)});
  return users;
}

const Tensor* const_of(const Graph& g, ValueId v) {
  if (v == kNoValue) return nullptr;
  const Value& value = g.value(v);
  return value.constant ? &*value.constant : nullptr;
}

// The single consumer of `v`, or -1 when it has several, none, or is a graph output.
int sole_consumer(const Graph& g, const std::vector<std::vector<std::pair<int, int>>>& users,
                  ValueId v) {
  if (is_graph_output(g, v)) return -1;
  const auto& u = users[static_cast<std::size_t>(v)];
  return u.size() == 1 ? u[0].first : -1;
}

Tensor shape_of(const Node& node, const Shape& s) {
  auto dims = s.outer_first();
  const auto r = static_cast<std::int64_t>(dims.size());
  auto clamp_index = [&](std::int64_t i) {
    if (i < 0) i += r;
    return std::clamp<std::int64_t>(i, 0, r);
  };
  const std::int64_t start = clamp_index(node.attr_int("start", 0));
  const std::int64_t end = node.has_attr("end") ? clamp_index(node.attr_int("end", r)) : r;
  std::vector<std::int64_t> out;
  for (std::int64_t i = start; i < end; ++i) out.push_back(dims[static_cast<std::size_t>(i)]);
  return Tensor::from_ints(DType::i64, Shape{static_cast<std::int64_t>(out.size())}, out);
}

}  // namespace

// Folded constants up to this size are always fine; beyond it only when they do not grow.
constexpr std::uint64_t kMaxFoldedBytes = std::uint64_t{16} << 20;

int fold_constants(Graph& g, PassReport* report) {
  std::vector<bool> dead(g.nodes.size(), false);
  int folded = 0;
  for (std::size_t n = 0; n < g.nodes.size(); ++n) {
    Node& node = g.nodes[n];
    std::vector<Tensor> results;
    if (node.op == "Shape") {
      results.push_back(shape_of(node, g.value(node.inputs.at(0)).shape));
    } else {
      std::vector<const Tensor*> ins;
      bool all_constant = true;
      for (ValueId v : node.inputs) {
        if (v == kNoValue) {
          ins.push_back(nullptr);
          continue;
        }
        const Tensor* t = const_of(g, v);
        if (!t) all_constant = false;
        ins.push_back(t);
      }
      if (!all_constant) continue;
      // A node that blows small constants up (an Expand to gigabytes) stays a node: folding
      // would allocate it at compile time and store it in the model file.
      std::uint64_t in_bytes = 0, out_bytes = 0;
      for (const Tensor* t : ins)
        if (t) in_bytes += t->bytes();
      for (ValueId v : node.outputs)
        if (v != kNoValue) out_bytes += g.value(v).bytes();
      if (out_bytes > kMaxFoldedBytes && out_bytes > 4 * in_bytes) {
        note(report, fmt::format("kept {}: folding would make {} B of constants from {} B",
                                 node.describe(), out_bytes, in_bytes));
        continue;
      }
      results = run_reference(node, ins, g.opset);
    }
    for (std::size_t o = 0; o < node.outputs.size(); ++o) {
      if (node.outputs[o] == kNoValue) continue;
      Value& v = g.value(node.outputs[o]);
      Tensor& t = results.at(o);
      if (!(t.shape() == v.shape))
        throw_user_error("{}: folding gives shape {} where shape inference said {}",
                         node.describe(), t.shape().to_string(), v.shape.to_string());
      v.dtype = t.dtype();
      v.constant = std::move(t);
    }
    dead[n] = true;
    ++folded;
    note(report, fmt::format("folded {}", node.describe()));
  }
  if (folded) erase_nodes(g, dead);
  if (report) report->folded_nodes += folded;
  return folded;
}

int fold_batchnorm(Graph& g, PassReport* report) {
  auto users = consumers(g);
  std::vector<bool> dead(g.nodes.size(), false);
  int count = 0;
  for (std::size_t n = 0; n < g.nodes.size(); ++n) {
    Node& conv = g.nodes[n];
    if (conv.op != "Conv" || conv.activation.kind != Activation::Kind::none) continue;
    const int b = sole_consumer(g, users, conv.outputs[0]);
    if (b < 0) continue;
    Node& bn = g.nodes[static_cast<std::size_t>(b)];
    if (bn.op != "BatchNormalization" || bn.inputs.size() < 5 || bn.inputs[0] != conv.outputs[0])
      continue;
    if (bn.attr_int("training_mode", 0) != 0) continue;
    if (std::count_if(bn.outputs.begin(), bn.outputs.end(),
                      [](ValueId v) { return v != kNoValue; }) != 1)
      continue;
    const Tensor* w = const_of(g, conv.inputs[1]);
    const Tensor* bias = conv.inputs.size() > 2 ? const_of(g, conv.inputs[2]) : nullptr;
    if (conv.inputs.size() > 2 && conv.inputs[2] != kNoValue && !bias) continue;
    const Tensor* scale = const_of(g, bn.inputs[1]);
    const Tensor* shift = const_of(g, bn.inputs[2]);
    const Tensor* mean = const_of(g, bn.inputs[3]);
    const Tensor* var = const_of(g, bn.inputs[4]);
    if (!w || !scale || !shift || !mean || !var || w->dtype() != DType::f32) continue;
    const std::int64_t m = w->dim(w->rank() - 1);
    if (scale->element_count() != m || shift->element_count() != m || mean->element_count() != m ||
        var->element_count() != m)
      continue;
    const float eps = bn.attr_float("epsilon", 1e-5f);
    const auto sc = scale->to_doubles(), sh = shift->to_doubles(), mu = mean->to_doubles(),
               va = var->to_doubles();
    std::vector<double> b0 =
        bias ? bias->to_doubles() : std::vector<double>(static_cast<std::size_t>(m), 0.0);
    Tensor new_w = *w;
    float* wp = new_w.data<float>();
    // M is the outermost weight dim; a conv with no output channels has nothing to fold.
    const std::int64_t per = m == 0 ? 0 : w->element_count() / m;
    std::vector<float> new_b(static_cast<std::size_t>(m));
    for (std::int64_t k = 0; k < m; ++k) {
      const auto kk = static_cast<std::size_t>(k);
      const double f = sc[kk] / std::sqrt(va[kk] + static_cast<double>(eps));
      for (std::int64_t i = 0; i < per; ++i)
        wp[k * per + i] = static_cast<float>(wp[k * per + i] * f);
      new_b[kk] = static_cast<float>((b0[kk] - mu[kk]) * f + sh[kk]);
    }
    const ValueId wid = g.add_constant(conv.name + ".bn_weight", std::move(new_w));
    const ValueId bid =
        g.add_constant(conv.name + ".bn_bias", Tensor::from_vector(Shape{m}, new_b));
    Node& conv2 = g.nodes[n];  // add_constant may not move nodes, but refresh the reference anyway
    conv2.inputs.resize(3);
    conv2.inputs[1] = wid;
    conv2.inputs[2] = bid;
    conv2.outputs[0] = g.nodes[static_cast<std::size_t>(b)].outputs[0];
    dead[static_cast<std::size_t>(b)] = true;
    ++count;
    note(report, fmt::format("folded {} into {}", g.nodes[static_cast<std::size_t>(b)].describe(),
                             conv2.describe()));
  }
  if (count) erase_nodes(g, dead);
  if (report) report->folded_batchnorms += count;
  return count;
}

namespace {

// A constant bias for Conv's output channels: all dims 1 except the channel dim (r-2).
std::optional<std::vector<float>> per_channel_bias(const Tensor& t, int out_rank,
                                                   std::int64_t channels) {
  if (t.dtype() != DType::f32 || t.rank() > out_rank || t.element_count() != channels)
    return std::nullopt;
  for (int d = 0; d < t.rank(); ++d)
    if (d != out_rank - 2 && t.dim(d) != 1) return std::nullopt;
  if (channels > 1 && t.rank() <= out_rank - 2) return std::nullopt;
  return t.to_floats();
}

std::optional<Activation> as_activation(const Graph& g, const Node& n) {
  Activation a;
  if (n.op == "Relu")
    a.kind = Activation::Kind::relu;
  else if (n.op == "LeakyRelu") {
    a.kind = Activation::Kind::leaky_relu;
    a.alpha = n.attr_float("alpha", 0.01f);
  } else if (n.op == "Sigmoid")
    a.kind = Activation::Kind::sigmoid;
  else if (n.op == "Tanh")
    a.kind = Activation::Kind::tanh;
  else if (n.op == "Clip") {
    a.kind = Activation::Kind::clip;
    a.min = -INFINITY;
    a.max = INFINITY;
    if (g.opset < 11) {
      a.min = n.attr_float("min", a.min);
      a.max = n.attr_float("max", a.max);
    } else {
      for (std::size_t i = 1; i < n.inputs.size() && i < 3; ++i) {
        if (n.inputs[i] == kNoValue) continue;
        const Tensor* t = const_of(g, n.inputs[i]);
        if (!t || t->element_count() != 1) return std::nullopt;
        (i == 1 ? a.min : a.max) = t->at<float>(0);
      }
    }
  } else {
    return std::nullopt;
  }
  return a;
}

}  // namespace

int fuse_bias_and_activation(Graph& g, PassReport* report) {
  int biases = 0, activations = 0;
  // Bias first, then activations, so Conv + Add + Relu becomes one node.
  for (int round = 0; round < 2; ++round) {
    auto users = consumers(g);
    std::vector<bool> dead(g.nodes.size(), false);
    for (std::size_t n = 0; n < g.nodes.size(); ++n) {
      if (dead[n]) continue;
      Node& p = g.nodes[n];
      if ((p.op != "Conv" && p.op != "Gemm" && p.op != "MatMul") ||
          p.activation.kind != Activation::Kind::none)
        continue;
      const ValueId out = p.outputs[0];
      if (g.value(out).dtype != DType::f32) continue;
      const int c = sole_consumer(g, users, out);
      if (c < 0 || dead[static_cast<std::size_t>(c)]) continue;
      Node& q = g.nodes[static_cast<std::size_t>(c)];
      if (round == 0) {
        if (q.op != "Add" || q.inputs.size() != 2) continue;
        const ValueId other = q.inputs[0] == out ? q.inputs[1] : q.inputs[0];
        const Tensor* bias = const_of(g, other);
        if (!bias || !(g.value(q.outputs[0]).shape == g.value(out).shape)) continue;
        if (p.op == "Conv") {
          const Shape& os = g.value(out).shape;
          const std::int64_t m = os[os.rank() - 2];
          auto values = per_channel_bias(*bias, os.rank(), m);
          if (!values) continue;
          if (p.inputs.size() > 2 && p.inputs[2] != kNoValue) {
            const Tensor* old = const_of(g, p.inputs[2]);
            if (!old) continue;
            const auto ov = old->to_floats();
            for (std::size_t k = 0; k < values->size(); ++k) (*values)[k] += ov[k];
          }
          const ValueId bid =
              g.add_constant(p.name + ".fused_bias", Tensor::from_vector(Shape{m}, *values));
          p.inputs.resize(3);
          p.inputs[2] = bid;
        } else {
          // Gemm without C, or a 2-D MatMul: the bias becomes Gemm's C (beta 1).
          const Shape& os = g.value(out).shape;
          if (os.rank() != 2 || bias->dtype() != DType::f32) continue;
          const bool row_bias = bias->element_count() == os[0] &&
                                (bias->rank() == 1 || (bias->rank() == 2 && bias->dim(1) == 1));
          if (!row_bias) continue;
          if (p.op == "Gemm") {
            if (p.inputs.size() > 2 && p.inputs[2] != kNoValue) continue;
            if (p.attr_float("alpha", 1.0f) != 1.0f) continue;
          } else {
            if (g.value(p.inputs[0]).shape.rank() != 2 || g.value(p.inputs[1]).shape.rank() != 2)
              continue;
            p.op = "Gemm";
            p.attrs.clear();
          }
          p.attrs["beta"] = 1.0f;
          p.inputs.resize(3);
          p.inputs[2] = other;
        }
        p.outputs[0] = q.outputs[0];
        ++biases;
      } else {
        auto act = as_activation(g, q);
        if (!act) continue;
        p.activation = *act;
        p.outputs[0] = q.outputs[0];
        ++activations;
      }
      dead[static_cast<std::size_t>(c)] = true;
      note(report, fmt::format("fused {} into {}", q.describe(), p.describe()));
    }
    if (std::find(dead.begin(), dead.end(), true) != dead.end()) erase_nodes(g, dead);
  }
  if (report) {
    report->fused_biases += biases;
    report->fused_activations += activations;
  }
  return biases + activations;
}

int eliminate_dead_code(Graph& g, PassReport* report) {
  auto uses = g.use_counts();
  std::vector<bool> dead(g.nodes.size(), false);
  int removed = 0;
  for (std::size_t k = g.nodes.size(); k-- > 0;) {
    const Node& node = g.nodes[k];
    bool used = false;
    for (ValueId v : node.outputs)
      if (v != kNoValue && uses[static_cast<std::size_t>(v)] > 0) used = true;
    if (used) continue;
    dead[k] = true;
    ++removed;
    for (ValueId v : node.inputs)
      if (v != kNoValue) --uses[static_cast<std::size_t>(v)];
    note(report, fmt::format("removed unused {}", node.describe()));
  }
  if (removed) erase_nodes(g, dead);
  if (report) report->removed_nodes += removed;
  return removed;
}

namespace {

Node make_transpose(const std::string& name, ValueId in, ValueId out,
                    std::vector<std::int64_t> perm) {
  Node t;
  t.name = name;
  t.op = "Transpose";
  t.inputs = {in};
  t.outputs = {out};
  t.attrs["perm"] = std::move(perm);
  return t;
}

Shape permuted(const Shape& s, const std::vector<std::int64_t>& onnx_perm) {
  const auto dims = s.outer_first();
  std::vector<std::int64_t> out;
  for (auto p : onnx_perm) out.push_back(dims[static_cast<std::size_t>(p)]);
  return Shape::from_outer_first(out);
}

int count_transposes(const Graph& g) {
  return static_cast<int>(std::count_if(g.nodes.begin(), g.nodes.end(),
                                        [](const Node& n) { return n.op == "Transpose"; }));
}

}  // namespace

int choose_layouts(Graph& g, const Backend& backend, PassReport* report) {
  const int transposes_before = count_transposes(g);
  std::vector<Node> nodes;
  // Every (to, back) pair of permutations inserted, for the cancelling below.
  std::vector<std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>> pairs;
  int inserted = 0;
  for (std::size_t n = 0; n < g.nodes.size(); ++n) {
    Node node = g.nodes[n];
    const bool has_io = !node.inputs.empty() && node.inputs[0] != kNoValue &&
                        !node.outputs.empty() && node.outputs[0] != kNoValue;
    // Int8 nodes keep ONNX's order: their weights and parameters are laid out for it.
    Layout layout = has_io && !is_int8_op(node.op) ? backend.preferred_layout(node, g) : Layout{};
    const auto rank = static_cast<int>(layout.perm.size());
    if (layout.is_default() || g.value(node.inputs[0]).shape.rank() != rank ||
        g.value(node.outputs[0]).shape.rank() != rank) {
      nodes.push_back(std::move(node));
      continue;
    }
    const std::vector<std::int64_t> to_layout = layout.perm;
    const std::vector<std::int64_t> to_onnx = inverse_permutation(layout.perm);
    if (std::find(pairs.begin(), pairs.end(), std::make_pair(to_layout, to_onnx)) == pairs.end())
      pairs.emplace_back(to_layout, to_onnx);
    // A Conv in a layout with its own weights order reads them so: constant weights are
    // reordered now, others by a Transpose that runs before the Conv on the device.
    if (node.op == "Conv" && !layout.weights_perm.empty() && node.inputs.size() > 1 &&
        node.inputs[1] != kNoValue && !node.has_attr("tessera.weights_perm") &&
        node.attr_string("tessera.weights_layout", "") == "") {
      const ValueId w = node.inputs[1];
      if (g.value(w).shape.rank() != static_cast<int>(layout.weights_perm.size()))
        throw_user_error("{}: weights of a {}-D Conv in layout {} must be {}-D, got {}",
                         node.describe(), rank - 2, layout.name, layout.weights_perm.size(),
                         g.value(w).shape.to_string());
      const std::string suffix = "." + layout.weights_name;
      if (const Tensor* t = const_of(g, w)) {
        node.inputs[1] = g.add_constant(node.name + suffix,
                                        ops::transpose(*t, ops_permutation(layout.weights_perm)));
      } else {
        Value w_t = g.value(w);
        w_t.name += suffix;
        w_t.shape = permuted(w_t.shape, layout.weights_perm);
        const ValueId w_id = g.add_value(w_t);
        nodes.push_back(make_transpose(node.name + ".weights_to_" + layout.weights_name, w, w_id,
                                       layout.weights_perm));
        node.inputs[1] = w_id;
        ++inserted;
      }
      node.attrs["tessera.weights_layout"] = layout.weights_name;
      node.attrs["tessera.weights_perm"] = layout.weights_perm;
    }
    const bool own_weights = node.has_attr("tessera.weights_layout");
    // Every other activation input of the layout's rank is transposed; constants stay as they
    // are.
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      if (v == kNoValue || g.value(v).is_constant() || g.value(v).shape.rank() != rank) continue;
      if (i == 1 && own_weights) continue;
      Value in_t = g.value(v);
      in_t.name += "." + layout.name;
      in_t.shape = permuted(in_t.shape, to_layout);
      const ValueId in_id = g.add_value(in_t);
      nodes.push_back(make_transpose(fmt::format("{}.to_{}{}", node.name, layout.name, i), v, in_id,
                                     to_layout));
      node.inputs[i] = in_id;
      ++inserted;
    }
    Value out_t = g.value(node.outputs[0]);
    out_t.name += "." + layout.name;
    out_t.shape = permuted(out_t.shape, to_layout);
    const ValueId out_id = g.add_value(out_t);
    const ValueId final_out = node.outputs[0];
    node.outputs[0] = out_id;
    const std::string name = node.name;
    const std::string layout_name = layout.name;
    node.layout = std::move(layout);
    nodes.push_back(std::move(node));
    nodes.push_back(make_transpose(name + ".from_" + layout_name, out_id, final_out, to_onnx));
    ++inserted;
  }
  g.nodes = std::move(nodes);
  g.reindex();
  // Cancel a Transpose into a layout reading a Transpose out of it: consumers read the value
  // still in the layout.
  bool cancelled_any = false;
  for (std::size_t n = 0; n < g.nodes.size(); ++n) {
    Node& t1 = g.nodes[n];
    if (t1.op != "Transpose") continue;
    const int p = g.value(t1.inputs[0]).producer;
    if (p < 0) continue;
    const Node& t0 = g.nodes[static_cast<std::size_t>(p)];
    if (t0.op != "Transpose") continue;
    const auto pair = std::make_pair(t1.attr_ints("perm"), t0.attr_ints("perm"));
    if (std::find(pairs.begin(), pairs.end(), pair) == pairs.end()) continue;
    const ValueId from = t1.outputs[0], to = t0.inputs[0];
    if (is_graph_output(g, from)) continue;
    for (Node& other : g.nodes)
      for (ValueId& v : other.inputs)
        if (v == from) v = to;
    cancelled_any = true;
  }
  if (cancelled_any) {
    g.reindex();
    eliminate_dead_code(g, nullptr);
  }
  const int net = count_transposes(g) - transposes_before;
  const int cancelled = inserted - net;
  if (inserted)
    note(report,
         fmt::format("layout: {} layout transposes inserted, {} cancelled", inserted, cancelled));
  if (report) report->layout_transposes += net;
  return net;
}

namespace {

// Size of ONNX spatial axis i (outermost first) of an N-C-spatial value in ONNX (NCHW) layout.
std::int64_t spatial_size(const Shape& shape, std::size_t i, std::size_t spatial) {
  return shape[static_cast<int>(spatial - 1 - i)];
}

std::vector<std::int64_t> per_axis(const Node& n, const char* key, std::size_t spatial,
                                   std::int64_t fallback, const std::string& where) {
  std::vector<std::int64_t> v = n.attr_ints(key);
  if (v.empty()) v.assign(spatial, fallback);
  if (v.size() != spatial)
    throw_user_error("{}: {} must list {} values, got {}", where, key, spatial, v.size());
  return v;
}

// Splits a total SAME padding between the ends of an axis: SAME_UPPER puts the odd extra at
// the end, SAME_LOWER (upper = false) at the beginning.
void split_same_padding(std::int64_t total, bool upper, std::int64_t* begin, std::int64_t* end) {
  const std::int64_t half = total / 2;
  *begin = upper ? half : total - half;
  *end = upper ? total - half : half;
}

}  // namespace

int resolve_auto_pad(Graph& g, PassReport* report) {
  int resolved = 0;
  for (Node& n : g.nodes) {
    const bool transpose = n.op == "ConvTranspose";
    const bool pool = n.op == "MaxPool" || n.op == "AveragePool";
    if (n.op != "Conv" && !transpose && !pool) continue;
    const std::string where = fmt::format("{}: {}", g.source, n.describe());
    const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
        auto_pad != "SAME_LOWER")
      throw_user_error("{}: auto_pad '{}' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER",
                       where, auto_pad);
    const bool has_output_shape = transpose && n.has_attr("output_shape");
    n.attrs.erase("auto_pad");
    if (auto_pad == "NOTSET" && !has_output_shape) continue;

    if (n.inputs.empty() || n.inputs[0] == kNoValue)
      throw_user_error("{}: input 0 is required", where);
    const Shape& xs = g.value(n.inputs[0]).shape;
    if (xs.rank() < 3)
      throw_user_error("{}: input must have rank >= 3 (N, C, spatial...), got {}", where,
                       xs.to_string());
    const auto s = static_cast<std::size_t>(xs.rank() - 2);
    std::vector<std::int64_t> kernel = n.attr_ints("kernel_shape");
    if (kernel.empty() && !pool) {
      if (n.inputs.size() < 2 || n.inputs[1] == kNoValue)
        throw_user_error("{}: input 1 (the weights) is required", where);
      const Shape& ws = g.value(n.inputs[1]).shape;
      if (ws.rank() != xs.rank())
        throw_user_error("{}: weights {} and input {} differ in rank", where, ws.to_string(),
                         xs.to_string());
      for (std::size_t i = 0; i < s; ++i) kernel.push_back(spatial_size(ws, i, s));
    }
    if (kernel.size() != s)
      throw_user_error("{}: kernel_shape must list {} sizes, got {}", where, s, kernel.size());
    const auto strides = per_axis(n, "strides", s, 1, where);
    const auto dilations = per_axis(n, "dilations", s, 1, where);
    const bool upper = auto_pad == "SAME_UPPER";
    std::vector<std::int64_t> pads(2 * s, 0);

    if (transpose) {
      // ONNX ConvTranspose: an output_shape (or, for SAME, input size * stride) fixes the total
      // padding; an output larger than the input reaches gets the rest as output padding.
      auto output_padding = per_axis(n, "output_padding", s, 0, where);
      std::vector<std::int64_t> output_shape = n.attr_ints("output_shape");
      if (output_shape.size() > s)
        output_shape.erase(output_shape.begin(),
                           output_shape.end() - static_cast<std::ptrdiff_t>(s));
      if (output_shape.empty() && auto_pad != "VALID")
        for (std::size_t i = 0; i < s; ++i)
          output_shape.push_back(spatial_size(xs, i, s) * strides[i]);
      if (!output_shape.empty() && output_shape.size() != s)
        throw_user_error("{}: output_shape must list {} sizes, got {}", where, s,
                         output_shape.size());
      for (std::size_t i = 0; i < output_shape.size(); ++i) {
        const std::int64_t total = strides[i] * (spatial_size(xs, i, s) - 1) + output_padding[i] +
                                   ((kernel[i] - 1) * dilations[i] + 1) - output_shape[i];
        if (total < 0)
          output_padding[i] -= total;
        else
          split_same_padding(total, upper, &pads[i], &pads[i + s]);
      }
      n.attrs.erase("output_shape");
      n.attrs["output_padding"] = output_padding;
    } else if (auto_pad != "VALID") {
      // SAME: the output is ceil(input / stride) and the padding makes the windows reach it.
      for (std::size_t i = 0; i < s; ++i) {
        const std::int64_t in = spatial_size(xs, i, s);
        const std::int64_t out = (in + strides[i] - 1) / strides[i];
        const std::int64_t total = std::max<std::int64_t>(
            0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in);
        split_same_padding(total, upper, &pads[i], &pads[i + s]);
      }
    }
    n.attrs["pads"] = pads;
    ++resolved;
    note(report, fmt::format("auto_pad: {} {} -> pads [{}]", n.describe(),
                             has_output_shape ? "output_shape" : auto_pad, fmt::join(pads, ", ")));
  }
  return resolved;
}

PassReport run_passes(Graph& g, const Backend& backend, const PassOptions& options) {
  PassReport report;
  if (options.fold_constants) fold_constants(g, &report);
  if (options.fold_batchnorm) fold_batchnorm(g, &report);
  if (options.fuse) fuse_bias_and_activation(g, &report);
  if (options.eliminate_dead_code) eliminate_dead_code(g, &report);
  if (options.int8_table) {
    const QuantizeReport q = quantize_int8(g, *options.int8_table);
    report.int8_nodes += q.quantized;
    report.int8_host_float += q.host_float;
    for (const auto& line : q.log) note(&report, line);
  }
  if (options.choose_layouts) choose_layouts(g, backend, &report);
  return report;
}

}  // namespace tessera::compiler
