#include "onnx_guard.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tessera/compiler/onnx_import.h"
#include "tessera/core/error.h"
#include "tessera/core/limits.h"
#include "tessera/core/shape.h"

namespace tessera::compiler::detail {
namespace {

using TP = onnx::TensorProto;

// Bytes per element as stored in the file (int64/double before Tessera narrows them).
std::uint64_t stored_element_size(int elem_type) {
  switch (elem_type) {
    case TP::INT64:
    case TP::UINT64:
    case TP::DOUBLE:
      return 8;
    case TP::FLOAT:
    case TP::INT32:
    case TP::UINT32:
      return 4;
    case TP::FLOAT16:
    case TP::BFLOAT16:
    case TP::INT16:
    case TP::UINT16:
      return 2;
    default:
      return 1;
  }
}

// Values the typed field of a TensorProto holds for its element type.
std::uint64_t typed_value_count(const TP& t) {
  switch (t.data_type()) {
    case TP::FLOAT:
      return static_cast<std::uint64_t>(t.float_data_size());
    case TP::DOUBLE:
      return static_cast<std::uint64_t>(t.double_data_size());
    case TP::INT64:
      return static_cast<std::uint64_t>(t.int64_data_size());
    case TP::UINT64:
    case TP::UINT32:
      return static_cast<std::uint64_t>(t.uint64_data_size());
    case TP::STRING:
      return static_cast<std::uint64_t>(t.string_data_size());
    default:
      return static_cast<std::uint64_t>(t.int32_data_size());
  }
}

void check_declared_tensor(const TP& t, const std::string& where) {
  if (t.dims_size() > kMaxRank)
    throw_user_error("{}: tensor '{}' has rank {}; Tessera tensors have rank 0 to {}", where,
                     t.name(), t.dims_size(), kMaxRank);
  std::vector<std::int64_t> dims(t.dims().begin(), t.dims().end());
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0)
      throw_user_error("{}: tensor '{}' dimension {} is {}; dimensions must be >= 0", where,
                       t.name(), i, dims[i]);
  const std::uint64_t count = saturating_element_count(dims.data(), static_cast<int>(dims.size()));
  const std::uint64_t size = stored_element_size(t.data_type());
  if (count > (std::uint64_t{1} << 56) / size)
    throw_user_error("{}: tensor '{}' declares dims ({}), {} elements, which no memory holds",
                     where, t.name(), fmt::join(dims, ", "), count);
  check_host_memory(count * size, fmt::format("{}: tensor '{}' of dims ({})", where, t.name(),
                                              fmt::join(dims, ", ")));
  if (t.data_location() == TP::EXTERNAL) return;  // refused with its own message at import
  const std::uint64_t have = t.has_raw_data() ? t.raw_data().size() / size : typed_value_count(t);
  const bool raw_ok = !t.has_raw_data() || t.raw_data().size() == count * size;
  if (have != count || !raw_ok)
    throw_user_error(
        "{}: tensor '{}' declares dims ({}), {} elements, but holds data for {}; the file is "
        "corrupt or was written wrongly",
        where, t.name(), fmt::join(dims, ", "), count, have);
}

// What the guard knows of a value before shape inference: its rank (-1: unknown), its dims
// (-1 where unknown) and, for small integer constants, their values.
struct Info {
  int rank = -1;
  std::vector<std::int64_t> dims;
  std::optional<std::vector<std::int64_t>> data;

  static Info of_rank(int r) {
    Info i;
    i.rank = r;
    if (r >= 0) i.dims.assign(static_cast<std::size_t>(r), -1);
    return i;
  }
  static Info of_dims(std::vector<std::int64_t> d) {
    Info i;
    i.rank = static_cast<int>(d.size());
    i.dims = std::move(d);
    return i;
  }
  bool known() const { return rank >= 0; }
  std::int64_t dim(int d) const { return dims[static_cast<std::size_t>(d)]; }
};

std::optional<std::vector<std::int64_t>> small_int_data(const TP& t) {
  std::int64_t count = 1;
  for (auto d : t.dims()) count *= d;
  if (count > 64) return std::nullopt;
  std::vector<std::int64_t> out;
  if (t.data_type() == TP::INT64) {
    if (t.has_raw_data()) {
      for (std::int64_t i = 0; i < count; ++i) {
        std::int64_t v;
        std::memcpy(&v, t.raw_data().data() + i * 8, 8);
        out.push_back(v);
      }
    } else {
      out.assign(t.int64_data().begin(), t.int64_data().end());
    }
  } else if (t.data_type() == TP::INT32) {
    if (t.has_raw_data()) {
      for (std::int64_t i = 0; i < count; ++i) {
        std::int32_t v;
        std::memcpy(&v, t.raw_data().data() + i * 4, 4);
        out.push_back(v);
      }
    } else {
      out.assign(t.int32_data().begin(), t.int32_data().end());
    }
  } else {
    return std::nullopt;
  }
  if (static_cast<std::int64_t>(out.size()) != count) return std::nullopt;
  return out;
}

Info info_of_tensor(const TP& t) {
  Info i = Info::of_dims(std::vector<std::int64_t>(t.dims().begin(), t.dims().end()));
  i.data = small_int_data(t);
  return i;
}

class GraphGuard {
 public:
  GraphGuard(const std::string& file, std::int64_t opset) : file_(file), opset_(opset) {}

  std::map<std::string, Info> values;

  void node(const onnx::NodeProto& n, int index) {
    node_ = &n;
    where_ = fmt::format("{}: node '{}' ({})", file_,
                         n.name().empty() ? fmt::format("{}_{}", n.op_type(), index) : n.name(),
                         n.op_type());
    const std::string& op = n.op_type();
    std::vector<Info> outs = infer(op);
    for (int o = 0; o < n.output_size(); ++o) {
      if (n.output(o).empty()) continue;
      values[n.output(o)] =
          o < static_cast<int>(outs.size()) ? outs[static_cast<std::size_t>(o)] : Info{};
    }
  }

 private:
  std::string file_;
  std::int64_t opset_;
  const onnx::NodeProto* node_ = nullptr;
  std::string where_;

  [[noreturn]] void fail(const std::string& what) const {
    throw_user_error("{}: {}", where_, what);
  }

  const onnx::AttributeProto* attr(std::string_view name) const {
    for (const auto& a : node_->attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  std::optional<std::int64_t> attr_int(std::string_view name) const {
    const auto* a = attr(name);
    if (!a) return std::nullopt;
    if (a->type() != onnx::AttributeProto::INT)
      fail(fmt::format("attribute '{}' must be an integer", name));
    return a->i();
  }
  std::optional<std::vector<std::int64_t>> attr_ints(std::string_view name) const {
    const auto* a = attr(name);
    if (!a) return std::nullopt;
    if (a->type() != onnx::AttributeProto::INTS)
      fail(fmt::format("attribute '{}' must be a list of integers", name));
    return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
  }

  Info input(int i) const {
    if (i >= node_->input_size() || node_->input(i).empty()) return Info{};
    auto it = values.find(node_->input(i));
    return it == values.end() ? Info{} : it->second;
  }
  bool has_input(int i) const { return i < node_->input_size() && !node_->input(i).empty(); }

  // An input whose rank libonnx's inference for this op indexes by must be known here.
  Info ranked_input(int i, const char* role) const {
    Info x = input(i);
    if (!x.known())
      fail(fmt::format(
          "the rank of its {} ('{}') cannot be determined before shape inference, and ONNX's "
          "shape inference for {} is not safe without it; give the model static input shapes "
          "and constant shape operands",
          role, has_input(i) ? node_->input(i) : std::string("missing"), node_->op_type()));
    return x;
  }

  void check_axis(std::int64_t axis, int rank, const char* name, bool inclusive_end = false) const {
    const int hi = inclusive_end ? rank : rank - 1;
    if (axis < -rank || axis > hi)
      fail(
          fmt::format("attribute '{}' is {}, out of range for an input of rank {}; expected "
                      "{} to {}",
                      name, axis, rank, -rank, hi));
  }
  void check_flag(std::string_view name) const {
    if (auto v = attr_int(name); v && *v != 0 && *v != 1)
      fail(fmt::format("attribute '{}' is {}; expected 0 or 1", name, *v));
  }

  // Distinct axes in [-rank, rank-1]; returns them normalised.
  std::vector<int> check_axes(const std::vector<std::int64_t>& axes, int rank,
                              const char* name) const {
    std::vector<int> out;
    for (auto a : axes) {
      if (a < -rank || a >= rank)
        fail(
            fmt::format("{} holds axis {}, out of range for an input of rank {}; expected {} "
                        "to {}",
                        name, a, rank, -rank, rank - 1));
      const int n = static_cast<int>(a < 0 ? a + rank : a);
      if (std::find(out.begin(), out.end(), n) != out.end())
        fail(fmt::format("{} ({}) names axis {} twice; each axis may appear once", name,
                         fmt::join(axes, ", "), n));
      out.push_back(n);
    }
    return out;
  }

  // axes from the attribute (older opsets) or from input `pos` (when constant).
  std::optional<std::vector<std::int64_t>> axes_operand(int pos, std::int64_t input_since) const {
    if (opset_ < input_since) return attr_ints("axes");
    if (!has_input(pos)) return std::nullopt;
    return input(pos).data;
  }

  static int broadcast_rank(const std::vector<Info>& ins) {
    int r = 0;
    for (const auto& i : ins) {
      if (!i.known()) return -1;
      r = std::max(r, i.rank);
    }
    return r;
  }

  std::vector<Info> all_inputs() const {
    std::vector<Info> ins;
    for (int i = 0; i < node_->input_size(); ++i)
      if (has_input(i)) ins.push_back(input(i));
    return ins;
  }

  // Conv, ConvTranspose and the pools: every window attribute against the spatial rank.
  void check_window(const Info& x, bool is_pool, bool transpose) {
    const int r = x.rank;
    if (r < 3)
      fail(fmt::format("input '{}' has rank {}; {} needs rank 3 or more (N, C, spatial dims)",
                       node_->input(0), r, node_->op_type()));
    const std::size_t spatial = static_cast<std::size_t>(r - 2);
    auto sized = [&](const char* name, std::size_t want, std::int64_t min) {
      auto v = attr_ints(name);
      if (!v) return;
      if (v->size() != want)
        fail(fmt::format("attribute '{}' has {} values ({}); an input of rank {} needs {}", name,
                         v->size(), fmt::join(*v, ", "), r, want));
      for (auto e : *v)
        if (e < min)
          fail(fmt::format("attribute '{}' ({}) holds {}; each value must be >= {}", name,
                           fmt::join(*v, ", "), e, min));
    };
    sized("kernel_shape", spatial, 1);
    sized("strides", spatial, 1);
    sized("dilations", spatial, 1);
    sized("pads", 2 * spatial, 0);
    if (is_pool && !attr("kernel_shape"))
      fail(fmt::format("attribute 'kernel_shape' is required for {}", node_->op_type()));
    if (auto a = attr("auto_pad")) {
      if (a->type() != onnx::AttributeProto::STRING) fail("attribute 'auto_pad' must be a string");
      const std::string& s = a->s();
      if (s != "NOTSET" && s != "SAME_UPPER" && s != "SAME_LOWER" && s != "VALID")
        fail(
            fmt::format("attribute 'auto_pad' is '{}'; expected NOTSET, SAME_UPPER, "
                        "SAME_LOWER or VALID",
                        s));
    }
    if (is_pool) {
      check_flag("ceil_mode");
      check_flag("count_include_pad");
      check_flag("storage_order");
      return;
    }
    if (transpose) {
      sized("output_padding", spatial, 0);
      if (auto v = attr_ints("output_shape"); v && v->size() != spatial && v->size() != spatial + 2)
        fail(
            fmt::format("attribute 'output_shape' has {} values ({}); an input of rank {} needs "
                        "{}",
                        v->size(), fmt::join(*v, ", "), r, spatial));
      if (auto v = attr_ints("output_shape"))
        for (auto e : *v)
          if (e < 0) fail(fmt::format("attribute 'output_shape' holds {}; sizes must be >= 0", e));
    }
    const Info w = ranked_input(1, "weights");
    if (w.rank != r)
      fail(
          fmt::format("weights '{}' have rank {}; for an input of rank {} they must have rank {} "
                      "({} spatial dims)",
                      node_->input(1), w.rank, r, r, spatial));
    const std::int64_t group = attr_int("group").value_or(1);
    if (group < 1) fail(fmt::format("attribute 'group' is {}; expected 1 or more", group));
    const std::int64_t channels = x.dim(1);
    if (channels >= 0 && channels % group != 0)
      fail(fmt::format("input has {} channels, not divisible by group {}", channels, group));
    if (auto k = attr_ints("kernel_shape"))
      for (std::size_t i = 0; i < spatial; ++i) {
        const std::int64_t have = w.dim(static_cast<int>(i) + 2);
        if (have >= 0 && have != (*k)[i])
          fail(fmt::format(
              "attribute 'kernel_shape' ({}) differs from the weights' spatial "
              "dims ({})",
              fmt::join(*k, ", "),
              fmt::join(std::vector<std::int64_t>(w.dims.begin() + 2, w.dims.end()), ", ")));
      }
    if (transpose) {
      if (channels >= 0 && w.dim(0) >= 0 && w.dim(0) != channels)
        fail(fmt::format("weights have {} input channels (dim 0), the input has {}", w.dim(0),
                         channels));
      if (auto op = attr_ints("output_padding")) {
        const auto strides = attr_ints("strides").value_or(std::vector<std::int64_t>(spatial, 1));
        const auto dil = attr_ints("dilations").value_or(std::vector<std::int64_t>(spatial, 1));
        for (std::size_t i = 0; i < spatial; ++i)
          if ((*op)[i] >= std::max(strides[i], dil[i]))
            fail(
                fmt::format("attribute 'output_padding' ({}) must be smaller than the stride "
                            "or the dilation of each axis",
                            fmt::join(*op, ", ")));
      }
    } else if (channels >= 0 && w.dim(1) >= 0 && w.dim(1) * group != channels) {
      fail(
          fmt::format("weights have {} channels per group (dim 1) x group {} = {}, the input "
                      "has {} channels",
                      w.dim(1), group, w.dim(1) * group, channels));
    }
    if (!transpose && w.dim(0) >= 0 && w.dim(0) % group != 0)
      fail(fmt::format("weights have {} output channels, not divisible by group {}", w.dim(0),
                       group));
    for (int b = 2; b < node_->input_size(); ++b)
      if (has_input(b)) {
        const Info bias = input(b);
        if (bias.known() && bias.rank != 1)
          fail(fmt::format("bias '{}' has rank {}; expected rank 1", node_->input(b), bias.rank));
      }
  }

  std::vector<Info> infer(const std::string& op) {
    const Info x = input(0);
    const int r = x.rank;
    static const std::set<std::string> unary = {
        "Abs",     "Neg",  "Exp",      "Log",     "Sqrt",           "Reciprocal",      "Relu",
        "Sigmoid", "Tanh", "Softplus", "Erf",     "Identity",       "LeakyRelu",       "Elu",
        "Selu",    "Cast", "Clip",     "Dropout", "QuantizeLinear", "DequantizeLinear"};
    static const std::set<std::string> broadcast = {"Add",   "Sub",   "Mul",  "Div",
                                                    "Pow",   "Sum",   "Max",  "Min",
                                                    "Where", "Equal", "Less", "Greater"};
    if (unary.count(op)) {
      Info out = Info::of_rank(r);
      if (x.known()) out.dims = x.dims;
      return {out, Info::of_rank(r)};
    }
    if (broadcast.count(op)) return {Info::of_rank(broadcast_rank(all_inputs()))};
    if (op == "Softmax" || op == "LogSoftmax") {
      if (x.known() && r > 0)
        check_axis(attr_int("axis").value_or(opset_ >= 13 ? -1 : 1), r, "axis");
      return {Info::of_rank(r)};
    }
    if (op == "Flatten") {
      if (x.known()) check_axis(attr_int("axis").value_or(1), r, "axis", true);
      return {Info::of_rank(2)};
    }
    if (op == "Transpose") {
      const Info in = ranked_input(0, "input");
      if (auto perm = attr_ints("perm")) {
        if (static_cast<int>(perm->size()) != in.rank)
          fail(
              fmt::format("attribute 'perm' ({}) has {} entries; the input has rank {}, so it "
                          "must be a permutation of 0..{}",
                          fmt::join(*perm, ", "), perm->size(), in.rank, in.rank - 1));
        std::vector<bool> seen(static_cast<std::size_t>(in.rank), false);
        for (auto p : *perm) {
          if (p < 0 || p >= in.rank || seen[static_cast<std::size_t>(p)])
            fail(fmt::format("attribute 'perm' ({}) is not a permutation of 0..{}",
                             fmt::join(*perm, ", "), in.rank - 1));
          seen[static_cast<std::size_t>(p)] = true;
        }
      }
      return {Info::of_rank(in.rank)};
    }
    if (op == "Concat") {
      const int rank = broadcast_rank(all_inputs());
      if (rank >= 0) {
        for (const auto& i : all_inputs())
          if (i.rank != rank)
            fail(fmt::format("inputs have ranks {} and {}; Concat needs one rank", i.rank, rank));
        if (rank == 0) fail("Concat of rank-0 inputs; inputs need rank 1 or more");
        const auto axis = attr_int("axis");
        if (!axis) fail("attribute 'axis' is required");
        check_axis(*axis, rank, "axis");
        Info out = Info::of_rank(rank);
        if (rank == 1) {  // shape vectors: keep the length when every piece's is known
          std::int64_t total = 0;
          for (const auto& i : all_inputs())
            if (total < 0 || i.dim(0) < 0 || __builtin_add_overflow(total, i.dim(0), &total))
              total = -1;
          out.dims[0] = total;
        }
        return {out};
      }
      return {Info{}};
    }
    if (op == "Split") {
      std::vector<Info> outs(static_cast<std::size_t>(node_->output_size()), Info::of_rank(r));
      if (!x.known()) return outs;
      if (r == 0) fail("Split of a rank-0 input; it needs rank 1 or more");
      const std::int64_t axis = attr_int("axis").value_or(0);
      check_axis(axis, r, "axis");
      const int a = static_cast<int>(axis < 0 ? axis + r : axis);
      std::optional<std::vector<std::int64_t>> split =
          opset_ < 13 ? attr_ints("split") : (has_input(1) ? input(1).data : std::nullopt);
      if (split) {
        if (static_cast<int>(split->size()) != node_->output_size())
          fail(fmt::format("'split' ({}) gives {} sizes for {} outputs", fmt::join(*split, ", "),
                           split->size(), node_->output_size()));
        std::int64_t sum = 0;
        for (auto s : *split) {
          if (s < 0)
            fail(fmt::format("'split' ({}) holds a negative size", fmt::join(*split, ", ")));
          if (__builtin_add_overflow(sum, s, &sum))
            fail(fmt::format("'split' sizes ({}) overflow when summed", fmt::join(*split, ", ")));
        }
        if (x.dim(a) >= 0 && sum != x.dim(a))
          fail(fmt::format("'split' sizes ({}) sum to {}, but axis {} of the input has size {}",
                           fmt::join(*split, ", "), sum, a, x.dim(a)));
      }
      return outs;
    }
    if (op == "Slice") {
      if (!x.known()) return {Info{}};
      std::optional<std::vector<std::int64_t>> starts, ends, axes, steps;
      if (opset_ < 10) {
        starts = attr_ints("starts");
        ends = attr_ints("ends");
        axes = attr_ints("axes");
      } else {
        starts = input(1).data;
        ends = input(2).data;
        if (has_input(3)) axes = input(3).data;
        if (has_input(4)) steps = input(4).data;
      }
      if (starts && ends && starts->size() != ends->size())
        fail(fmt::format("'starts' has {} values and 'ends' {}; they must match", starts->size(),
                         ends->size()));
      if (axes) {
        check_axes(*axes, r, "'axes'");
        if (starts && axes->size() != starts->size())
          fail(fmt::format("'axes' has {} values and 'starts' {}; they must match", axes->size(),
                           starts->size()));
      }
      if (steps)
        for (auto s : *steps)
          if (s == 0)
            fail(fmt::format("'steps' ({}) holds 0; steps must not be 0", fmt::join(*steps, ", ")));
      return {Info::of_rank(r)};
    }
    if (op == "Squeeze") {
      auto axes = axes_operand(1, 13);
      if (!x.known()) return {Info{}};
      if (!axes) {
        if (opset_ >= 13 && has_input(1)) return {Info{}};
        for (auto d : x.dims)
          if (d < 0) return {Info{}};
        return {Info::of_rank(static_cast<int>(
            std::count_if(x.dims.begin(), x.dims.end(), [](std::int64_t d) { return d != 1; })))};
      }
      for (int a : check_axes(*axes, r, "'axes'"))
        if (x.dim(a) >= 0 && x.dim(a) != 1)
          fail(fmt::format("'axes' names axis {} of size {}; Squeeze removes only axes of size 1",
                           a, x.dim(a)));
      return {Info::of_rank(r - static_cast<int>(axes->size()))};
    }
    if (op == "Unsqueeze") {
      auto axes = axes_operand(1, 13);
      if (!axes) {
        if (opset_ < 13) fail("attribute 'axes' is required");
        return {Info{}};
      }
      if (!x.known()) return {Info{}};
      const int out_rank = r + static_cast<int>(axes->size());
      if (out_rank > kMaxRank)
        fail(fmt::format("the output would have rank {}; Tessera tensors have rank 0 to {}",
                         out_rank, kMaxRank));
      check_axes(*axes, out_rank, "'axes'");
      Info out = Info::of_rank(out_rank);
      if (r == 0 && out_rank == 1) out.dims[0] = 1;
      return {out};
    }
    if (op == "Reshape") {
      const Info shape = input(1);
      if (shape.data) {
        int minus_one = 0;
        for (auto d : *shape.data) {
          if (d < -1)
            fail(
                fmt::format("the shape ({}) holds {}; dims must be -1 (inferred), 0 (copied) or "
                            "positive",
                            fmt::join(*shape.data, ", "), d));
          if (d == -1) ++minus_one;
        }
        if (minus_one > 1)
          fail(fmt::format("the shape ({}) holds -1 {} times; at most one dim may be inferred",
                           fmt::join(*shape.data, ", "), minus_one));
        if (attr_int("allowzero").value_or(0) != 0 && minus_one > 0 &&
            std::count(shape.data->begin(), shape.data->end(), 0) > 0)
          fail("with allowzero=1 the shape may not hold both 0 and -1");
        check_flag("allowzero");
        if (x.known())
          for (std::size_t i = 0; i < shape.data->size(); ++i)
            if ((*shape.data)[i] == 0 && static_cast<int>(i) >= r &&
                attr_int("allowzero").value_or(0) == 0)
              fail(fmt::format("the shape ({}) copies dim {} (0) from an input of rank {}",
                               fmt::join(*shape.data, ", "), i, r));
        return {Info::of_rank(static_cast<int>(shape.data->size()))};
      }
      if (shape.known() && shape.rank == 1 && shape.dim(0) >= 0)
        return {Info::of_rank(static_cast<int>(shape.dim(0)))};
      return {Info{}};
    }
    if (op == "Expand") {
      const Info shape = input(1);
      if (shape.data) {
        for (auto d : *shape.data)
          if (d < 0)
            fail(fmt::format("the shape ({}) holds {}; Expand sizes must be >= 0",
                             fmt::join(*shape.data, ", "), d));
        if (x.known()) {
          const auto& s = *shape.data;
          const int out_rank = std::max(r, static_cast<int>(s.size()));
          for (int i = 1; i <= out_rank; ++i) {
            const std::int64_t a = i <= r ? x.dim(r - i) : 1;
            const std::int64_t b = i <= static_cast<int>(s.size()) ? s[s.size() - i] : 1;
            if (a >= 0 && a != b && a != 1 && b != 1)
              fail(
                  fmt::format("the input's dims ({}) do not broadcast to the shape ({}): {} vs "
                              "{}; each pair must be equal or one of them 1",
                              fmt::join(x.dims, ", "), fmt::join(s, ", "), a, b));
          }
          return {Info::of_rank(out_rank)};
        }
        return {Info{}};
      }
      if (x.known() && shape.known() && shape.rank == 1 && shape.dim(0) >= 0)
        return {Info::of_rank(std::max(r, static_cast<int>(shape.dim(0))))};
      return {Info{}};
    }
    if (op == "Gather") {
      const Info idx = input(1);
      if (!x.known()) return {Info{}};
      if (r == 0) fail("Gather of a rank-0 input; it needs rank 1 or more");
      check_axis(attr_int("axis").value_or(0), r, "axis");
      if (!idx.known()) return {Info{}};
      Info out = Info::of_rank(r + idx.rank - 1);
      if (r == 1 && idx.rank == 1) out.dims[0] = idx.dim(0);
      return {out};
    }
    if (op == "MatMul") {
      const Info b = input(1);
      if (!x.known() || !b.known()) return {Info{}};
      if (r == 0 || b.rank == 0) fail("MatMul inputs need rank 1 or more");
      if (r == 1 && b.rank == 1) return {Info::of_rank(0)};
      if (r == 1) return {Info::of_rank(b.rank - 1)};
      if (b.rank == 1) return {Info::of_rank(r - 1)};
      return {Info::of_rank(std::max(r, b.rank))};
    }
    if (op == "Gemm") {
      for (int i = 0; i < 2; ++i) {
        const Info in = input(i);
        if (in.known() && in.rank != 2)
          fail(fmt::format("input {} has rank {}; Gemm needs rank-2 A and B", i, in.rank));
      }
      check_flag("transA");
      check_flag("transB");
      return {Info::of_rank(2)};
    }
    if (op == "Conv" || op == "ConvTranspose") {
      const Info in = ranked_input(0, "input");
      check_window(in, false, op == "ConvTranspose");
      return {Info::of_rank(in.rank)};
    }
    if (op == "MaxPool" || op == "AveragePool") {
      const Info in = ranked_input(0, "input");
      check_window(in, true, false);
      return {Info::of_rank(in.rank), Info::of_rank(in.rank)};
    }
    if (op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "InstanceNormalization") {
      if (x.known() && r < 3)
        fail(fmt::format("input '{}' has rank {}; {} needs rank 3 or more (N, C, spatial dims)",
                         node_->input(0), r, op));
      return {Info::of_rank(r)};
    }
    if (op == "BatchNormalization") {
      if (x.known() && r < 2)
        fail(fmt::format("input '{}' has rank {}; BatchNormalization needs rank 2 or more",
                         node_->input(0), r));
      for (int i = 1; i < 5; ++i) {
        const Info p = input(i);
        if (p.known() && p.rank != 1)
          fail(fmt::format("input {} ('{}') has rank {}; scale, bias, mean and var have rank 1", i,
                           node_->input(i), p.rank));
      }
      return {Info::of_rank(r), Info::of_rank(1), Info::of_rank(1)};
    }
    if (op == "LayerNormalization") {
      const Info in = ranked_input(0, "input");
      if (in.rank == 0) fail("LayerNormalization of a rank-0 input; it needs rank 1 or more");
      check_axis(attr_int("axis").value_or(-1), in.rank, "axis");
      check_flag("stash_type");
      return {Info::of_rank(in.rank), Info::of_rank(in.rank), Info::of_rank(in.rank)};
    }
    if (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax" || op == "ReduceMin") {
      check_flag("keepdims");
      check_flag("noop_with_empty_axes");
      const bool keep = attr_int("keepdims").value_or(1) != 0;
      const bool axes_input = op == "ReduceSum" && opset_ >= 13;
      std::optional<std::vector<std::int64_t>> axes =
          axes_input ? axes_operand(1, 13) : attr_ints("axes");
      if (!x.known()) return {Info{}};
      if (axes) check_axes(*axes, std::max(r, 1), "'axes'");
      if (keep) return {Info::of_rank(r)};
      if (axes_input && has_input(1) && !axes) return {Info{}};
      if (!axes || axes->empty())
        return {Info::of_rank(attr_int("noop_with_empty_axes").value_or(0) ? r : 0)};
      return {Info::of_rank(r - static_cast<int>(axes->size()))};
    }
    if (op == "ArgMax") {
      check_flag("keepdims");
      check_flag("select_last_index");
      if (!x.known()) return {Info{}};
      if (r == 0) fail("ArgMax of a rank-0 input; it needs rank 1 or more");
      check_axis(attr_int("axis").value_or(0), r, "axis");
      return {Info::of_rank(attr_int("keepdims").value_or(1) != 0 ? r : r - 1)};
    }
    if (op == "Pad") {
      std::optional<std::vector<std::int64_t>> pads =
          opset_ < 11 ? attr_ints(opset_ < 2 ? "paddings" : "pads") : input(1).data;
      if (x.known() && pads && static_cast<int>(pads->size()) != 2 * r)
        fail(fmt::format("'pads' ({}) has {} values; an input of rank {} needs {}",
                         fmt::join(*pads, ", "), pads->size(), r, 2 * r));
      return {Info::of_rank(r)};
    }
    if (op == "Shape") {
      if (!x.known()) return {Info::of_rank(1)};
      std::int64_t start = attr_int("start").value_or(0), end = attr_int("end").value_or(r);
      start = std::clamp<std::int64_t>(start < 0 ? start + r : start, 0, r);
      end = std::clamp<std::int64_t>(end < 0 ? end + r : end, 0, r);
      Info out = Info::of_dims({std::max<std::int64_t>(0, end - start)});
      return {out};
    }
    if (op == "Resize") {
      for (int pos : {2, 3}) {
        const Info s = input(pos);
        if (x.known() && s.known() && s.rank == 1 && s.dim(0) > 0 && s.dim(0) != r)
          fail(fmt::format("input {} ('{}') has {} values; an input of rank {} needs {}", pos,
                           node_->input(pos), s.dim(0), r, r));
      }
      return {Info::of_rank(r)};
    }
    return {};
  }
};

}  // namespace

void guard_tensor_sizes(const onnx::ModelProto& model, const std::string& file) {
  const auto& g = model.graph();
  for (const auto& init : g.initializer()) check_declared_tensor(init, file + ": initializer");
  for (const auto& node : g.node()) {
    for (const auto& a : node.attribute()) {
      const std::string where = fmt::format("{}: node '{}' ({}) attribute '{}'", file, node.name(),
                                            node.op_type(), a.name());
      if (a.has_t()) check_declared_tensor(a.t(), where);
      for (const auto& t : a.tensors()) check_declared_tensor(t, where);
    }
  }
  for (const auto& input : g.input()) {
    if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape()) continue;
    const auto& shape = input.type().tensor_type().shape();
    if (shape.dim_size() > kMaxRank)
      throw_user_error("{}: input '{}' has rank {}; Tessera tensors have rank 0 to {}", file,
                       input.name(), shape.dim_size(), kMaxRank);
    std::vector<std::int64_t> dims;
    for (const auto& d : shape.dim()) {
      if (!d.has_dim_value()) {
        dims.clear();
        break;
      }
      if (d.dim_value() < 0)
        throw_user_error("{}: input '{}' has dimension {}; dimensions must be >= 0", file,
                         input.name(), d.dim_value());
      dims.push_back(d.dim_value());
    }
    if (dims.size() != static_cast<std::size_t>(shape.dim_size())) continue;
    const std::uint64_t count =
        saturating_element_count(dims.data(), static_cast<int>(dims.size()));
    const std::uint64_t size = stored_element_size(input.type().tensor_type().elem_type());
    if (count > (std::uint64_t{1} << 56) / size)
      throw_user_error("{}: input '{}' declares dims ({}), {} elements, which no memory holds",
                       file, input.name(), fmt::join(dims, ", "), count);
    check_host_memory(count * size, fmt::format("{}: input '{}' of dims ({})", file, input.name(),
                                                fmt::join(dims, ", ")));
  }
}

void guard_graph(onnx::ModelProto& model, const std::string& file) {
  std::int64_t opset = 0;
  for (const auto& op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") opset = op.version();
  onnx::GraphProto* g = model.mutable_graph();
  const auto& supported = supported_ops();
  int index = 0;
  for (const auto& n : g->node()) {
    const std::string where = fmt::format(
        "{}: node '{}' ({})", file,
        n.name().empty() ? fmt::format("{}_{}", n.op_type(), index) : n.name(), n.op_type());
    ++index;
    if (!(n.domain().empty() || n.domain() == "ai.onnx"))
      throw_user_error("{}: op domain '{}' is not supported (only the default ONNX domain is)",
                       where, n.domain());
    if (!supported.count(n.op_type())) unsupported_op_error(where, n.op_type(), supported);
  }

  GraphGuard guard(file, opset);
  for (const auto& init : g->initializer()) guard.values[init.name()] = info_of_tensor(init);
  for (const auto& input : g->input()) {
    if (guard.values.count(input.name())) continue;
    Info info;
    if (input.type().has_tensor_type() && input.type().tensor_type().has_shape()) {
      std::vector<std::int64_t> dims;
      for (const auto& d : input.type().tensor_type().shape().dim())
        dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
      info = Info::of_dims(dims);
    }
    guard.values[input.name()] = info;
  }
  index = 0;
  for (const auto& n : g->node()) {
    if (n.op_type() == "Constant") {
      Info info;
      for (const auto& a : n.attribute()) {
        if (a.name() == "value" && a.has_t()) info = info_of_tensor(a.t());
        if (a.name() == "value_float" || a.name() == "value_int") info = Info::of_rank(0);
        if (a.name() == "value_ints") {
          info = Info::of_dims({a.ints_size()});
          info.data = std::vector<std::int64_t>(a.ints().begin(), a.ints().end());
        }
        if (a.name() == "value_floats") info = Info::of_dims({a.floats_size()});
      }
      for (const auto& out : n.output()) guard.values[out] = info;
      ++index;
      continue;
    }
    guard.node(n, index++);
  }

  // libonnx re-infers intermediate types; a declared graph output must agree with the ranks
  // propagated here, or an inference that fails leniently would hand later nodes another rank.
  g->clear_value_info();
  for (auto& out : *g->mutable_output()) {
    auto it = guard.values.find(out.name());
    if (it == guard.values.end())
      throw_user_error(
          "{}: graph output '{}' is not produced by any node, initializer or input; name an "
          "existing value as the output",
          file, out.name());
    if (!it->second.known()) continue;
    if (!out.type().has_tensor_type()) continue;
    if (!out.type().tensor_type().has_shape()) {
      // An output declared without a shape (a sequence's element, flattened at import): the
      // checker wants one, so it gets the propagated rank with its dims left to inference.
      auto* shape = out.mutable_type()->mutable_tensor_type()->mutable_shape();
      for (int d = 0; d < it->second.rank; ++d) shape->add_dim();
      continue;
    }
    const int declared = out.type().tensor_type().shape().dim_size();
    if (declared != it->second.rank)
      throw_user_error(
          "{}: graph output '{}' is declared with rank {}, but the node producing it gives rank "
          "{}; fix the output's declared shape",
          file, out.name(), declared, it->second.rank);
  }
}

void unsupported_op_error(const std::string& where, const std::string& op,
                          const std::set<std::string>& supported) {
  static const std::set<std::string> random = {"Bernoulli",     "Multinomial",
                                               "RandomNormal",  "RandomNormalLike",
                                               "RandomUniform", "RandomUniformLike"};
  if (random.count(op))
    throw_user_error(
        "{}: op {} is not supported: it draws random numbers, whose values no reference can "
        "match (Tessera compiles deterministic inference graphs)",
        where, op);
  std::string list;
  for (const auto& name : supported) list += (list.empty() ? "" : ", ") + name;
  throw_user_error("{}: op {} is not supported by the Tessera compiler. Supported ops: {}", where,
                   op, list);
}

}  // namespace tessera::compiler::detail
