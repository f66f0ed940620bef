#include "tessera/targets/aicore/backend/backend.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tessera/compiler/slice.h"
#include "tessera/core/error.h"
#include "tessera/targets/aicore/kernels/ops.h"

namespace tessera::aicore {
namespace {

using compiler::ExecContext;
using compiler::Graph;
using compiler::kNoValue;
using compiler::Node;
using compiler::Step;
using compiler::ValueId;
using kernels::Eltwise;

std::optional<Eltwise> eltwise_of(const std::string& onnx) {
  static const std::pair<const char*, Eltwise> table[] = {
      {"Add", Eltwise::add}, {"Sub", Eltwise::sub}, {"Mul", Eltwise::mul},   {"Div", Eltwise::div},
      {"Max", Eltwise::max}, {"Min", Eltwise::min}, {"Relu", Eltwise::relu}, {"Abs", Eltwise::abs},
      {"Exp", Eltwise::exp}, {"Log", Eltwise::log}, {"Sqrt", Eltwise::sqrt}, {"Neg", Eltwise::neg}};
  for (const auto& [name, op] : table)
    if (onnx == name) return op;
  return std::nullopt;
}

// Whether `b` (fastest first) equals the fastest dimensions of `out` and is 1 beyond them: a
// row that repeats over the outer dimensions.
bool broadcasts_over_rows(const Shape& b, const Shape& out) {
  std::int64_t cols = 1;
  int d = 0;
  while (cols < b.element_count() && d < out.rank()) {
    if (b.dim_or_one(d) != out[d]) return false;
    cols *= out[d];
    ++d;
  }
  if (cols != b.element_count() || cols * 32 > 240 * 1024) return false;
  for (; d < b.rank(); ++d)
    if (b[d] != 1) return false;
  return true;
}

// The device bytes of a value as floats; nullptr for an omitted optional input.
float* value_ptr(ExecContext& ctx, ValueId v) {
  if (v == kNoValue) return nullptr;
  const auto place = ctx.placement(v);
  return reinterpret_cast<float*>(ctx.device().data(place.buffer) + place.offset);
}

// A device buffer of the step's own, freed when the step is done with it.
struct Scratch {
  runtime::Device& device;
  runtime::Buffer buffer;
  Scratch(runtime::Device& d, std::int64_t floats)
      : device(d), buffer(d.allocate(static_cast<std::size_t>(floats) * 4, "aicore:scratch")) {}
  ~Scratch() { device.free(buffer); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  float* data() { return reinterpret_cast<float*>(device.data(buffer)); }
};

// Whether `in` broadcasts to `out` (NumPy rules, axes aligned at the fastest end).
bool broadcasts_to(const Shape& in, const Shape& out) {
  if (in.rank() > out.rank()) return false;
  for (int d = 0; d < in.rank(); ++d)
    if (in[d] != 1 && in[d] != out[d]) return false;
  return true;
}

// One strided_copy of a layout node: input `input` from element in_offset into output
// `output` from element out_offset, axes fastest first.
struct Copy {
  std::size_t input = 0, output = 0;
  std::int64_t in_offset = 0, out_offset = 0;
  std::vector<std::int64_t> dims, in_strides, out_strides;
  // Instead of a copy: the whole output filled with these 4-byte bits (Pad's constant).
  std::optional<std::uint32_t> fill_bits;
};

std::vector<std::int64_t> dense_strides(std::span<const std::int64_t> dims) {
  std::vector<std::int64_t> strides(dims.size());
  std::int64_t stride = 1;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    strides[d] = stride;
    stride *= dims[d];
  }
  return strides;
}

// `in` expanded to `out` (stride 0 on the broadcast axes): Expand, and element-wise operands.
Copy broadcast_copy(const Shape& in, const Shape& out) {
  Copy c;
  std::int64_t stride = 1;
  for (int d = 0; d < out.rank(); ++d) {
    c.dims.push_back(out[d]);
    const std::int64_t here = in.dim_or_one(d);
    c.in_strides.push_back(here == 1 ? 0 : stride);
    stride *= here;
  }
  c.out_strides = dense_strides(c.dims);
  return c;
}

// A dense tensor viewed as `view` (outer first) and transposed by `perm` into a dense output.
Copy transpose_copy(std::span<const std::int64_t> view, std::span<const std::int64_t> perm) {
  kernels::TransposeAxes t = kernels::transpose_axes(view, perm);
  Copy c;
  c.out_strides = dense_strides(t.out_dims);
  c.dims = std::move(t.out_dims);
  c.in_strides = std::move(t.in_strides);
  return c;
}

// Runs the copies of a layout node on its device.
void run_copies(ExecContext& ctx, const Node& n, const std::vector<Copy>& copies) {
  for (const Copy& c : copies) {
    const ValueId in = n.inputs[c.input], out = n.outputs[c.output];
    if (c.fill_bits) {
      kernels::fill(ctx.device(), value_ptr(ctx, out), ctx.graph().value(out).shape.element_count(),
                    *c.fill_bits);
      continue;
    }
    kernels::strided_copy(ctx.device(), value_ptr(ctx, in) + c.in_offset,
                          ctx.graph().value(in).shape.element_count() - c.in_offset,
                          value_ptr(ctx, out) + c.out_offset,
                          ctx.graph().value(out).shape.element_count() - c.out_offset, c.dims,
                          c.in_strides, c.out_strides);
  }
}

bool is_b32(DType t) {
  return t == DType::f32 || t == DType::i32 || t == DType::u32;
}

// The copies that carry out a layout node (ONNX semantics), or why it cannot run: the data
// moves as 4-byte elements through strided_copy.
struct LayoutPlan {
  std::vector<Copy> copies;
  std::string why;  // empty: runs
};

LayoutPlan layout_plan(const Node& n, const Graph& g) {
  LayoutPlan p;
  const auto fail = [&p](std::string why) {
    p.copies.clear();
    p.why = std::move(why);
    return p;
  };
  const auto& x = g.value(n.inputs[0]);
  if (!is_b32(x.dtype))
    return fail(
        fmt::format("{} of {} (the kernel moves 4-byte elements)", n.op, dtype_name(x.dtype)));
  for (ValueId o : n.outputs)
    if (o != kNoValue && g.value(o).shape.element_count() == 0) return fail("an empty tensor");
  if (x.shape.element_count() == 0) return fail("an empty tensor");
  const std::vector<std::int64_t> dims = x.shape.outer_first();
  const Shape& y = g.value(n.outputs[0]).shape;
  if (n.op == "Transpose") {
    std::vector<std::int64_t> perm = n.attr_ints("perm");
    if (perm.empty())  // ONNX: reverse the axes
      for (int j = x.shape.rank() - 1; j >= 0; --j) perm.push_back(j);
    if (perm.size() > static_cast<std::size_t>(kernels::kStridedCopyMaxAxes))
      return fail("more than 8 axes");
    p.copies.push_back(transpose_copy(dims, perm));
  } else if (n.op == "DepthToSpace" || n.op == "SpaceToDepth") {
    if (dims.size() != 4) return fail(fmt::format("a {} that is not NCHW", n.op));
    const std::int64_t b = n.attr_int("blocksize", 0);
    const std::int64_t nn = dims[0], c = dims[1], h = dims[2], w = dims[3];
    if (b < 1) return fail("a blocksize below 1");
    if (n.op == "DepthToSpace") {
      if (c % (b * b) != 0) return fail("channels that are not a multiple of blocksize^2");
      // ONNX DepthToSpace: DCR reads channels as (b, b, C'), CRD as (C', b, b).
      if (n.attr_string("mode", "DCR") == "CRD")
        p.copies.push_back(transpose_copy(std::vector<std::int64_t>{nn, c / (b * b), b, b, h, w},
                                          std::vector<std::int64_t>{0, 1, 4, 2, 5, 3}));
      else
        p.copies.push_back(transpose_copy(std::vector<std::int64_t>{nn, b, b, c / (b * b), h, w},
                                          std::vector<std::int64_t>{0, 3, 4, 1, 5, 2}));
    } else {
      if (h % b != 0 || w % b != 0) return fail("height or width not a multiple of blocksize");
      p.copies.push_back(transpose_copy(std::vector<std::int64_t>{nn, c, h / b, b, w / b, b},
                                        std::vector<std::int64_t>{0, 3, 5, 1, 2, 4}));
    }
  } else if (n.op == "Tile") {
    // Output axis d of repeats x size: an outer axis of the repeats (input stride 0) over an
    // inner one of the input's size.
    if (y.rank() != x.shape.rank()) return fail("repeats that change the rank");
    Copy c;
    std::int64_t stride = 1;
    for (int d = 0; d < y.rank(); ++d) {
      if (y[d] % x.shape[d] != 0) return fail("an output that is not a whole number of tiles");
      c.dims.insert(c.dims.end(), {x.shape[d], y[d] / x.shape[d]});
      c.in_strides.insert(c.in_strides.end(), {stride, 0});
      stride *= x.shape[d];
    }
    // Output strides: each input axis's stride, then the repeat axis's over whole tiles.
    std::int64_t ostride = 1;
    for (int d = 0; d < y.rank(); ++d) {
      c.out_strides.insert(c.out_strides.end(), {ostride, ostride * x.shape[d]});
      ostride *= y[d];
    }
    p.copies.push_back(std::move(c));
  } else if (n.op == "Expand") {
    if (!broadcasts_to(x.shape, y)) return fail("an input that does not broadcast to the output");
    p.copies.push_back(broadcast_copy(x.shape, y));
  } else if (n.op == "Concat" || n.op == "Split") {
    // Each part is a block of the concatenated tensor along the axis: copied with the whole
    // tensor's strides, from (Concat) or to (Split) its offset along the axis.
    const bool concat = n.op == "Concat";
    const Shape& whole = concat ? y : x.shape;
    const std::size_t parts = concat ? n.inputs.size() : n.outputs.size();
    std::int64_t onnx_axis = n.attr_int("axis", 0);
    if (onnx_axis < 0) onnx_axis += whole.rank();
    if (onnx_axis < 0 || onnx_axis >= whole.rank()) return fail("an axis outside the rank");
    const int axis = whole.rank() - 1 - static_cast<int>(onnx_axis);  // fastest first
    std::vector<std::int64_t> whole_dims;
    for (int d = 0; d < whole.rank(); ++d) whole_dims.push_back(whole[d]);
    const std::vector<std::int64_t> whole_strides = dense_strides(whole_dims);
    std::int64_t at = 0;
    for (std::size_t i = 0; i < parts; ++i) {
      const ValueId v = concat ? n.inputs[i] : n.outputs[i];
      if (v == kNoValue) return fail("an omitted part");
      const auto& part = g.value(v);
      if (part.dtype != x.dtype) return fail("parts of mixed dtypes");
      if (part.shape.rank() != whole.rank()) return fail("parts of another rank");
      Copy c;
      c.input = concat ? i : 0;
      c.output = concat ? 0 : i;
      for (int d = 0; d < whole.rank(); ++d) c.dims.push_back(part.shape[d]);
      const std::vector<std::int64_t> own = dense_strides(c.dims);
      (concat ? c.in_strides : c.out_strides) = own;
      (concat ? c.out_strides : c.in_strides) = whole_strides;
      (concat ? c.out_offset : c.in_offset) = at * whole_strides[static_cast<std::size_t>(axis)];
      at += part.shape[axis];
      if (part.shape.element_count() != 0) p.copies.push_back(std::move(c));
    }
    if (at != whole[axis]) return fail("parts that do not add up to the whole along the axis");
  } else if (n.op == "Slice") {
    // Every step-th element from the first along each axis: the input's strides times the step.
    const auto bounds = compiler::slice_starts(g, n);
    if (!bounds) return fail("slice bounds that are not constants");
    const auto& [first, step] = *bounds;
    Copy c;
    std::int64_t stride = 1;
    for (int d = 0; d < x.shape.rank(); ++d) {
      const auto i = static_cast<std::size_t>(d);
      if (step[i] < 0) return fail("a negative step (the copy's strides are not negative)");
      c.dims.push_back(y[d]);
      c.in_strides.push_back(stride * step[i]);
      c.in_offset += first[i] * stride;
      stride *= x.shape[d];
    }
    c.out_strides = dense_strides(c.dims);
    p.copies.push_back(std::move(c));
  } else if (n.op == "Pad") {
    // The output filled with the constant, then the input copied into its interior.
    if (n.attr_string("mode", "constant") != "constant")
      return fail("a Pad mode other than constant");
    const auto const_input = [&](std::size_t i) -> const Tensor* {
      if (i >= n.inputs.size() || n.inputs[i] == kNoValue) return nullptr;
      const auto& v = g.value(n.inputs[i]);
      return v.constant ? &*v.constant : nullptr;
    };
    const auto has = [&](std::size_t i) { return i < n.inputs.size() && n.inputs[i] != kNoValue; };
    if (has(3)) return fail("Pad with axes");
    if (has(1) && !const_input(1)) return fail("pads that are not constants");
    if (has(2) && !const_input(2)) return fail("a pad value that is not a constant");
    const std::vector<std::int64_t> pads = has(1) ? const_input(1)->to_ints() : n.attr_ints("pads");
    const int r = x.shape.rank();
    if (pads.size() != static_cast<std::size_t>(2 * r)) return fail("pads of another rank");
    double value = n.attr_float("value", 0.0f);
    if (has(2) && const_input(2)->element_count() > 0) value = const_input(2)->at<double>(0);
    Copy fill;
    fill.fill_bits = x.dtype == DType::f32 ? std::bit_cast<std::uint32_t>(static_cast<float>(value))
                     : x.dtype == DType::i32
                         ? static_cast<std::uint32_t>(static_cast<std::int32_t>(value))
                         : static_cast<std::uint32_t>(value);
    p.copies.push_back(std::move(fill));
    Copy c;
    std::vector<std::int64_t> out_dims;
    for (int d = 0; d < r; ++d) out_dims.push_back(y[d]);
    c.out_strides = dense_strides(out_dims);
    std::int64_t stride = 1;
    for (int d = 0; d < r; ++d) {
      const std::int64_t begin = pads[static_cast<std::size_t>(r - 1 - d)];  // ONNX: outer first
      if (begin < 0 || pads[static_cast<std::size_t>(2 * r - 1 - d)] < 0)
        return fail("negative pads (cropping)");
      c.dims.push_back(x.shape[d]);
      c.in_strides.push_back(stride);
      c.out_offset += begin * c.out_strides[static_cast<std::size_t>(d)];
      stride *= x.shape[d];
    }
    p.copies.push_back(std::move(c));
  } else {
    return fail(fmt::format("the aicore op library has no {}", n.op));
  }
  for (const Copy& c : p.copies)
    if (!c.fill_bits && kernels::strided_copy_axes(c.dims, c.in_strides, c.out_strides) >
                            kernels::kStridedCopyMaxAxes)
      return fail("more than 8 axes after merging contiguous ones");
  return p;
}

bool is_layout_op(const std::string& op) {
  static const char* const ops[] = {"Transpose", "DepthToSpace", "SpaceToDepth", "Tile", "Expand",
                                    "Concat",    "Split",        "Slice",        "Pad"};
  return std::find(std::begin(ops), std::end(ops), op) != std::end(ops);
}

class LayoutStep final : public Step {
 public:
  explicit LayoutStep(int node) : node_(node) {}
  void run(ExecContext& ctx) override {
    const Node& n = ctx.graph().nodes[static_cast<std::size_t>(node_)];
    const LayoutPlan p = layout_plan(n, ctx.graph());
    if (!p.why.empty()) throw_internal_error("aicore {}: {}", n.describe(), p.why);
    run_copies(ctx, n, p.copies);
    for (ValueId o : n.outputs)
      if (o != kNoValue) ctx.invalidate(o);
  }

 private:
  int node_;
};

// ONNX Gather's or GatherElements' data viewed as [outer][axis][inner] around its axis, the
// index count along it (Gather: all of them) and the index width. GatherND's: [outer = the
// batch dims][the indexed axes, extents `tuple`][inner], k tuples per batch.
struct GatherPlan {
  std::int64_t outer = 1, axis = 1, inner = 1, k = 1;
  std::vector<std::int64_t> tuple;
  unsigned index_bytes = 4;
  std::string why;  // empty: runs
};

GatherPlan gather_plan(const Node& n, const Graph& g) {
  GatherPlan p;
  const auto fail = [&p](std::string why) {
    p.why = std::move(why);
    return p;
  };
  const auto& x = g.value(n.inputs[0]);
  const auto& idx = g.value(n.inputs[1]);
  if (!is_b32(x.dtype))
    return fail(
        fmt::format("{} of {} (the kernel moves 4-byte elements)", n.op, dtype_name(x.dtype)));
  // int32 indices, or int64 ones where the build has 64-bit integers.
  if (idx.dtype == DType::i32)
    p.index_bytes = 4;
  else if (dtype_name(idx.dtype) == "i64")
    p.index_bytes = 8;
  else
    return fail(fmt::format("{} indices of {} (the kernel reads int32 or int64)", n.op,
                            dtype_name(idx.dtype)));
  if (x.shape.element_count() == 0 || idx.shape.element_count() == 0)
    return fail("an empty tensor");
  const std::vector<std::int64_t> dims = x.shape.outer_first();
  if (n.op == "GatherND") {
    const std::vector<std::int64_t> id = idx.shape.outer_first();
    const std::int64_t b = n.attr_int("batch_dims", 0);
    const std::int64_t m = id.empty() ? 0 : id.back();
    const auto rank = static_cast<std::int64_t>(dims.size());
    if (b < 0 || m < 1 || b + 1 > static_cast<std::int64_t>(id.size()) || b + m > rank)
      return fail("batch_dims and an index tuple that do not fit the data's rank");
    for (std::int64_t d = 0; d < rank; ++d) {
      const std::int64_t e = dims[static_cast<std::size_t>(d)];
      if (d < b && id[static_cast<std::size_t>(d)] != e)
        return fail("indices whose batch dims differ from the data's");
      (d < b ? p.outer : d < b + m ? p.axis : p.inner) *= e;
      if (d >= b && d < b + m) p.tuple.push_back(e);
    }
    p.k = 1;
    for (std::size_t d = static_cast<std::size_t>(b); d + 1 < id.size(); ++d) p.k *= id[d];
    return p;
  }
  std::int64_t a = n.attr_int("axis", 0);
  if (a < 0) a += static_cast<std::int64_t>(dims.size());
  if (a < 0 || a >= static_cast<std::int64_t>(dims.size()))
    return fail("an axis outside the data's rank");
  const auto axis = static_cast<std::size_t>(a);
  for (std::size_t d = 0; d < dims.size(); ++d)
    (d < axis ? p.outer : d == axis ? p.axis : p.inner) *= dims[d];
  p.k = idx.shape.element_count();
  if (n.op == "GatherElements") {
    const std::vector<std::int64_t> id = idx.shape.outer_first();
    if (id.size() != dims.size()) return fail("indices of another rank than the data");
    for (std::size_t d = 0; d < dims.size(); ++d)
      if (d != axis && id[d] != dims[d]) return fail("indices narrower than the data off the axis");
    p.k = id[axis];
    if (auto why = kernels::gather_elements_unsupported(p.axis, p.inner)) return fail(*why);
  }
  return p;
}

class GatherStep final : public Step {
 public:
  explicit GatherStep(int node) : node_(node) {}
  void run(ExecContext& ctx) override {
    const Node& n = ctx.graph().nodes[static_cast<std::size_t>(node_)];
    const GatherPlan p = gather_plan(n, ctx.graph());
    if (!p.why.empty()) throw_internal_error("aicore {}: {}", n.describe(), p.why);
    if (n.op == "GatherND") {
      kernels::gather_nd(ctx.device(), value_ptr(ctx, n.inputs[0]), p.outer, p.tuple, p.inner,
                         value_ptr(ctx, n.inputs[1]), p.index_bytes, p.k,
                         value_ptr(ctx, n.outputs[0]));
    } else {
      const auto run = n.op == "Gather" ? kernels::gather : kernels::gather_elements;
      run(ctx.device(), value_ptr(ctx, n.inputs[0]), p.outer, p.axis, p.inner,
          value_ptr(ctx, n.inputs[1]), p.index_bytes, p.k, value_ptr(ctx, n.outputs[0]));
    }
    ctx.invalidate(n.outputs[0]);
  }

 private:
  int node_;
};

class EltwiseStep final : public Step {
 public:
  EltwiseStep(int node, Eltwise op) : node_(node), op_(op) {}
  void run(ExecContext& ctx) override {
    const Node& n = ctx.graph().nodes[static_cast<std::size_t>(node_)];
    const Shape& out = ctx.graph().value(n.outputs[0]).shape;
    const std::int64_t count = out.element_count();
    // An operand that is neither the output's shape nor (the second) a bias over the trailing
    // axes is expanded on the device first.
    std::optional<Scratch> expanded[2];
    const float* operand[2] = {nullptr, nullptr};
    std::int64_t b_count = count;
    for (std::size_t i = 0; i < (kernels::is_binary(op_) ? 2u : 1u); ++i) {
      const Shape& shape = ctx.graph().value(n.inputs[i]).shape;
      operand[i] = value_ptr(ctx, n.inputs[i]);
      if (shape == out) continue;
      if (i == 1 && broadcasts_over_rows(shape, out)) {
        b_count = shape.element_count();
        continue;
      }
      expanded[i].emplace(ctx.device(), count);
      const Copy c = broadcast_copy(shape, out);
      kernels::strided_copy(ctx.device(), operand[i],
                            std::max<std::int64_t>(shape.element_count(), 1), expanded[i]->data(),
                            count, c.dims, c.in_strides, c.out_strides);
      operand[i] = expanded[i]->data();
    }
    float* y = value_ptr(ctx, n.outputs[0]);
    if (b_count != count)
      kernels::eltwise_rows(ctx.device(), op_, operand[0], operand[1], y, count / b_count,
                            static_cast<std::int32_t>(b_count));
    else
      kernels::eltwise(ctx.device(), op_, operand[0], operand[1], y, count);
    ctx.invalidate(n.outputs[0]);
  }

 private:
  int node_;
  Eltwise op_;
};

// MatMul of two matrices, or Gemm without transposes, scaling or C: the Cube kernels in fp16
// with f32 accumulation.
class MatmulStep final : public Step {
 public:
  explicit MatmulStep(int node) : node_(node) {}
  void run(ExecContext& ctx) override {
    const Node& n = ctx.graph().nodes[static_cast<std::size_t>(node_)];
    const Shape& a = ctx.graph().value(n.inputs[0]).shape;  // fastest first: (k, m)
    const Shape& b = ctx.graph().value(n.inputs[1]).shape;  // (n, k), or (k, n) with transB
    if (n.op == "MatMul" && (a.rank() != 2 || b.rank() != 2)) {
      run_batched(ctx, n, a, b);
      return;
    }
    const bool trans_b = n.op == "Gemm" && n.attr_int("transB", 0) != 0;
    const auto m = static_cast<std::int32_t>(a[1]), k = static_cast<std::int32_t>(a[0]);
    const auto cols = static_cast<std::int32_t>(trans_b ? b[1] : b[0]);
    float* out = value_ptr(ctx, n.outputs[0]);
    kernels::matmul(ctx.device(), value_ptr(ctx, n.inputs[0]), value_ptr(ctx, n.inputs[1]), out, m,
                    k, cols, trans_b);
    if (n.op == "Gemm" && n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
      const Shape& c = ctx.graph().value(n.inputs[2]).shape;
      const auto bias_cols = static_cast<std::int32_t>(c.rank() >= 1 ? c[0] : 1);
      const auto bias_rows = static_cast<std::int32_t>(c.rank() >= 2 ? c[1] : 1);
      kernels::add_bias(ctx.device(), out, m, cols, value_ptr(ctx, n.inputs[2]), bias_rows,
                        bias_cols, n.attr_float("beta", 1.0f));
    }
    ctx.invalidate(n.outputs[0]);
  }

 private:
  // NumPy matmul: a 1-D A is a row (1 x k), a 1-D B a column (k x 1); the axes before the
  // last two broadcast. One Cube GEMM per output matrix, each operand matrix where the
  // broadcast puts it (BatchMatMul as a loop over the batch).
  void run_batched(ExecContext& ctx, const Node& n, const Shape& a, const Shape& b) {
    const Shape& y = ctx.graph().value(n.outputs[0]).shape;
    const std::int64_t k = a[0];
    const std::int64_t m = a.rank() >= 2 ? a[1] : 1;
    const std::int64_t cols = b.rank() >= 2 ? b[0] : 1;
    const int a_batch = std::max(a.rank() - 2, 0), b_batch = std::max(b.rank() - 2, 0);
    const int batch_rank = std::max(a_batch, b_batch);
    std::vector<std::int64_t> dims(static_cast<std::size_t>(batch_rank)), a_stride(dims.size()),
        b_stride(dims.size());
    std::int64_t as = m * k, bs = k * cols, batches = 1;
    for (int d = 0; d < batch_rank; ++d) {  // batch axis d, fastest first
      const std::int64_t ad = d < a_batch ? a[d + 2] : 1, bd = d < b_batch ? b[d + 2] : 1;
      dims[static_cast<std::size_t>(d)] = std::max(ad, bd);
      a_stride[static_cast<std::size_t>(d)] = ad == 1 ? 0 : as;
      b_stride[static_cast<std::size_t>(d)] = bd == 1 ? 0 : bs;
      as *= ad;
      bs *= bd;
      batches *= dims[static_cast<std::size_t>(d)];
    }
    float* pa = value_ptr(ctx, n.inputs[0]);
    float* pb = value_ptr(ctx, n.inputs[1]);
    float* out = value_ptr(ctx, n.outputs[0]);
    if (y.element_count() != batches * m * cols)
      throw_internal_error("aicore batched MatMul: output of {} elements for {} x {} x {}",
                           y.element_count(), batches, m, cols);
    for (std::int64_t i = 0; i < batches; ++i) {
      std::int64_t ao = 0, bo = 0, rest = i;
      for (int d = 0; d < batch_rank; ++d) {
        const std::int64_t at = rest % dims[static_cast<std::size_t>(d)];
        rest /= dims[static_cast<std::size_t>(d)];
        ao += at * a_stride[static_cast<std::size_t>(d)];
        bo += at * b_stride[static_cast<std::size_t>(d)];
      }
      kernels::matmul(ctx.device(), pa + ao, pb + bo, out + i * m * cols,
                      static_cast<std::int32_t>(m), static_cast<std::int32_t>(k),
                      static_cast<std::int32_t>(cols));
    }
    ctx.invalidate(n.outputs[0]);
  }

  int node_;
};

// The window a Conv, MaxPool or AveragePool node slides over its NCHW input: sizes from the
// shapes (fastest first), kernel (kh x kw), output channels and ONNX's pads, strides, dilations.
kernels::ConvShape window_shape(const Node& n, const Graph& g, std::int64_t kh, std::int64_t kw,
                                std::int64_t cout) {
  const Shape& x = g.value(n.inputs[0]).shape;   // (w, h, c, n)
  const Shape& y = g.value(n.outputs[0]).shape;  // (wo, ho, cout, n)
  const auto i32 = [](std::int64_t v) { return static_cast<std::int32_t>(v); };
  kernels::ConvShape s;
  s.n = i32(x[3]);
  s.c = i32(x[2]);
  s.h = i32(x[1]);
  s.w = i32(x[0]);
  s.cout = i32(cout);
  s.kh = i32(kh);
  s.kw = i32(kw);
  s.ho = i32(y[1]);
  s.wo = i32(y[0]);
  if (const auto pads = n.attr_ints("pads"); pads.size() == 4) {  // top, left, bottom, right
    s.pad_top = i32(pads[0]);
    s.pad_left = i32(pads[1]);
    s.pad_bottom = i32(pads[2]);
    s.pad_right = i32(pads[3]);
  }
  if (const auto strides = n.attr_ints("strides"); strides.size() == 2) {
    s.stride_h = i32(strides[0]);
    s.stride_w = i32(strides[1]);
  }
  if (const auto dilations = n.attr_ints("dilations"); dilations.size() == 2) {
    s.dilation_h = i32(dilations[0]);
    s.dilation_w = i32(dilations[1]);
  }
  return s;
}

// Whether the graph's output size is the floor division Img2Col computes.
bool floor_output(const kernels::ConvShape& s) {
  const std::int64_t ho =
      (s.h + s.pad_top + s.pad_bottom - (s.dilation_h * (s.kh - 1) + 1)) / s.stride_h + 1;
  const std::int64_t wo =
      (s.w + s.pad_left + s.pad_right - (s.dilation_w * (s.kw - 1) + 1)) / s.stride_w + 1;
  return ho == s.ho && wo == s.wo;
}

kernels::ConvShape conv_shape(const Node& n, const Graph& g) {
  const Shape& w = g.value(n.inputs[1]).shape;  // (kw, kh, cin, cout)
  kernels::ConvShape s = window_shape(n, g, w[1], w[0], w[3]);
  s.relu = n.activation.kind == compiler::Activation::Kind::relu;
  if (n.activation.kind == compiler::Activation::Kind::clip) {
    s.clip_min = n.activation.min;
    s.clip_max = n.activation.max;
  }
  return s;
}

bool is_depthwise(const Node& n, const Graph& g) {
  const std::int64_t group = n.attr_int("group", 1);
  const auto& xs = g.value(n.inputs[0]).shape;
  return group != 1 && xs.rank() == 4 && group == xs[2] &&
         g.value(n.outputs[0]).shape.rank() == 4 && g.value(n.outputs[0]).shape[2] == group;
}

class ConvStep final : public Step {
 public:
  explicit ConvStep(int node) : node_(node) {}
  void run(ExecContext& ctx) override {
    const Node& n = ctx.graph().nodes[static_cast<std::size_t>(node_)];
    const bool bias = n.inputs.size() > 2 && n.inputs[2] != kNoValue;
    const kernels::ConvShape s = conv_shape(n, ctx.graph());
    const std::int64_t group = n.attr_int("group", 1);
    if (group != 1 && !is_depthwise(n, ctx.graph())) {
      run_grouped(ctx, n, s, group, bias);
    } else if (group != 1) {
      kernels::depthwise_conv2d(
          ctx.device(), value_ptr(ctx, n.inputs[0]), value_ptr(ctx, n.inputs[1]),
          bias ? value_ptr(ctx, n.inputs[2]) : nullptr, value_ptr(ctx, n.outputs[0]), s);
    } else {
      kernels::conv2d(ctx.device(), value_ptr(ctx, n.inputs[0]), value_ptr(ctx, n.inputs[1]),
                      bias ? value_ptr(ctx, n.inputs[2]) : nullptr, value_ptr(ctx, n.outputs[0]),
                      s);
    }
    ctx.invalidate(n.outputs[0]);
  }

 private:
  // A grouped Conv as `group` convolutions on the Cube: the input's channel groups gathered
  // group-major on the device (strided_copy), one conv2d per group with its slice of the
  // filters and bias, and the group-major results put back in channel order.
  void run_grouped(ExecContext& ctx, const Node& n, const kernels::ConvShape& s, std::int64_t group,
                   bool bias) {
    const std::int64_t cg = s.c / group, og = s.cout / group;
    const std::int64_t hw = static_cast<std::int64_t>(s.h) * s.w;
    const std::int64_t p = static_cast<std::int64_t>(s.ho) * s.wo;
    runtime::Device& dev = ctx.device();
    Scratch xg(dev, s.n * s.c * hw), yg(dev, s.n * s.cout * p);
    const std::vector<std::int64_t> in_dims = {hw, cg, s.n, group},
                                    in_strides = {1, hw, s.c * hw, cg * hw};
    kernels::strided_copy(dev, value_ptr(ctx, n.inputs[0]), s.n * s.c * hw, xg.data(), in_dims,
                          in_strides);
    kernels::ConvShape one = s;
    one.c = static_cast<std::int32_t>(cg);
    one.cout = static_cast<std::int32_t>(og);
    const float* w = value_ptr(ctx, n.inputs[1]);
    const float* b = bias ? value_ptr(ctx, n.inputs[2]) : nullptr;
    for (std::int64_t g = 0; g < group; ++g)
      kernels::conv2d(dev, xg.data() + g * s.n * cg * hw, w + g * og * cg * s.kh * s.kw,
                      b ? b + g * og : nullptr, yg.data() + g * s.n * og * p, one);
    const std::vector<std::int64_t> out_dims = {p, og, group, s.n},
                                    out_strides = {1, p, s.n * og * p, og * p};
    kernels::strided_copy(dev, yg.data(), s.n * s.cout * p, value_ptr(ctx, n.outputs[0]), out_dims,
                          out_strides);
  }

  int node_;
};

// A MaxPool or AveragePool window as a ConvShape (cout = c).
kernels::ConvShape pool_shape(const Node& n, const Graph& g) {
  const auto k = n.attr_ints("kernel_shape");
  return window_shape(n, g, k.size() == 2 ? k[0] : 1, k.size() == 2 ? k[1] : 1,
                      g.value(n.inputs[0]).shape[2]);
}

class PoolStep final : public Step {
 public:
  explicit PoolStep(int node) : node_(node) {}
  void run(ExecContext& ctx) override {
    const Node& n = ctx.graph().nodes[static_cast<std::size_t>(node_)];
    if (n.op == "AveragePool")
      kernels::average_pool2d(ctx.device(), value_ptr(ctx, n.inputs[0]),
                              value_ptr(ctx, n.outputs[0]), pool_shape(n, ctx.graph()),
                              n.attr_int("count_include_pad", 0) != 0);
    else
      kernels::max_pool2d(ctx.device(), value_ptr(ctx, n.inputs[0]), value_ptr(ctx, n.outputs[0]),
                          pool_shape(n, ctx.graph()));
    ctx.invalidate(n.outputs[0]);
  }

 private:
  int node_;
};

std::optional<std::string> max_pool_unsupported(const Node& n, const Graph& g,
                                                const arch::MachineSpec& spec) {
  const auto& x = g.value(n.inputs[0]);
  if (x.dtype != DType::f32 || x.shape.rank() != 4)
    return fmt::format("a {} that is not 2-D f32", n.op);
  if (n.outputs.size() > 1 && n.outputs[1] != kNoValue)
    return std::string("MaxPool's Indices output");
  if (n.attr_int("ceil_mode", 0) != 0) return std::string("ceil_mode");
  if (n.attr_int("storage_order", 0) != 0) return std::string("storage_order");
  const std::string pad = n.attr_string("auto_pad", "NOTSET");
  if (pad != "NOTSET" && pad != "VALID") return fmt::format("auto_pad {}", pad);
  if (n.attr_ints("kernel_shape").size() != 2) return fmt::format("a {} that is not 2-D", n.op);
  const kernels::ConvShape s = pool_shape(n, g);
  if (!floor_output(s)) return std::string("an output shape other than the floor of the window");
  return kernels::pool_unsupported(s, spec);
}

// Softmax over one axis. Before opset 13 ONNX coerces the input to 2-D at `axis` (default 1):
// rows of the trailing axes, contiguous. From 13 it is the single `axis` (default -1): the last
// axis directly, any other through a Transpose that swaps it with the last and back.
struct SoftmaxPlan {
  std::int64_t rows = 1, cols = 1;
  int swap = -1;  // fastest-first axis swapped with the fastest one; -1: none
};

std::optional<SoftmaxPlan> softmax_plan(const Node& n, const Graph& g) {
  const Shape& x = g.value(n.inputs[0]).shape;
  const int r = x.rank();
  SoftmaxPlan p;
  if (g.opset != 0 && g.opset < 13) {
    std::int64_t a = n.attr_int("axis", 1);
    if (a < 0) a += r;
    if (a < 0 || a > r) return std::nullopt;
    for (int d = 0; d < r - static_cast<int>(a); ++d) p.cols *= x[d];
  } else {
    std::int64_t a = n.attr_int("axis", -1);
    if (a < 0) a += r;
    if (a < 0 || a >= r) return std::nullopt;
    const int fastest = r - 1 - static_cast<int>(a);
    p.cols = x[fastest];
    if (fastest != 0) p.swap = fastest;
  }
  p.rows = x.element_count() / std::max<std::int64_t>(p.cols, 1);
  return p;
}

class SoftmaxStep final : public Step {
 public:
  explicit SoftmaxStep(int node) : node_(node) {}
  void run(ExecContext& ctx) override {
    const Node& n = ctx.graph().nodes[static_cast<std::size_t>(node_)];
    const Shape& x = ctx.graph().value(n.inputs[0]).shape;
    const SoftmaxPlan p = *softmax_plan(n, ctx.graph());
    const float* in = value_ptr(ctx, n.inputs[0]);
    float* out = value_ptr(ctx, n.outputs[0]);
    if (p.swap < 0) {
      kernels::softmax(ctx.device(), in, out, static_cast<std::int32_t>(p.rows),
                       static_cast<std::int32_t>(p.cols));
    } else {
      std::vector<std::int64_t> dims = x.outer_first(), perm(dims.size());
      std::iota(perm.begin(), perm.end(), std::int64_t{0});
      const auto axis = static_cast<std::size_t>(x.rank() - 1 - p.swap);
      std::swap(perm[axis], perm.back());
      std::vector<std::int64_t> swapped = dims;
      std::swap(swapped[axis], swapped.back());
      Scratch t(ctx.device(), x.element_count()), u(ctx.device(), x.element_count());
      kernels::transpose(ctx.device(), in, t.data(), dims, perm);
      kernels::softmax(ctx.device(), t.data(), u.data(), static_cast<std::int32_t>(p.rows),
                       static_cast<std::int32_t>(p.cols));
      kernels::transpose(ctx.device(), u.data(), out, swapped, perm);
    }
    ctx.invalidate(n.outputs[0]);
  }

 private:
  int node_;
};

// LayerNormalization normalises over the axes from `axis` (default -1) to the last: in memory,
// rows of their product.
std::int64_t layer_norm_cols(const Node& n, const Shape& x) {
  std::int64_t a = n.attr_int("axis", -1);
  if (a < 0) a += x.rank();
  std::int64_t cols = 1;
  for (int d = 0; d < x.rank() - static_cast<int>(a) && d < x.rank(); ++d) cols *= x[d];
  return cols;
}

class NormStep final : public Step {
 public:
  explicit NormStep(int node) : node_(node) {}
  void run(ExecContext& ctx) override {
    const Node& n = ctx.graph().nodes[static_cast<std::size_t>(node_)];
    const Shape& x = ctx.graph().value(n.inputs[0]).shape;
    const float eps = n.attr_float("epsilon", 1e-5f);
    if (n.op == "BatchNormalization") {
      std::int64_t size = 1;
      for (int d = 0; d + 2 < x.rank(); ++d) size *= x[d];
      kernels::batch_norm(
          ctx.device(), value_ptr(ctx, n.inputs[0]), value_ptr(ctx, n.outputs[0]),
          value_ptr(ctx, n.inputs[1]), value_ptr(ctx, n.inputs[2]), value_ptr(ctx, n.inputs[3]),
          value_ptr(ctx, n.inputs[4]), static_cast<std::int32_t>(x[x.rank() - 1]),
          static_cast<std::int32_t>(x[x.rank() - 2]), static_cast<std::int32_t>(size), eps);
    } else {
      const ValueId bias = n.inputs.size() > 2 ? n.inputs[2] : kNoValue;
      const std::int64_t cols = layer_norm_cols(n, x);
      kernels::layer_norm(ctx.device(), value_ptr(ctx, n.inputs[0]), value_ptr(ctx, n.outputs[0]),
                          value_ptr(ctx, n.inputs[1]), value_ptr(ctx, bias),
                          static_cast<std::int32_t>(x.element_count() / cols),
                          static_cast<std::int32_t>(cols), eps);
    }
    ctx.invalidate(n.outputs[0]);
  }

 private:
  int node_;
};

// Every kernel but the layout copies takes f32 tensors (the backend casts to fp16 on the
// device where Ascend computes in fp16).
std::optional<std::string> non_f32(const Node& n, const Graph& g) {
  for (const auto& vs : {n.inputs, n.outputs})
    for (ValueId v : vs)
      if (v != kNoValue && g.value(v).dtype != DType::f32)
        return fmt::format("{} tensors (the aicore kernels take f32)",
                           dtype_name(g.value(v).dtype));
  return std::nullopt;
}

std::optional<std::string> norm_unsupported(const Node& n, const Graph& g) {
  for (std::size_t o = 1; o < n.outputs.size(); ++o)
    if (n.outputs[o] != kNoValue) return std::string("outputs beyond Y (statistics)");
  const Shape& x = g.value(n.inputs[0]).shape;
  if (x.element_count() == 0) return std::string("an empty tensor");
  if (n.op == "BatchNormalization") {
    if (n.attr_int("training_mode", 0) != 0) return std::string("training mode");
    if (x.rank() < 2 || n.inputs.size() != 5)
      return std::string("a BatchNormalization without NC..");
    // Malformed parameters are the reference op's to report (a UserError naming the input).
    // Shapes list the fastest dim first: ONNX's channel dim 1 is the second slowest.
    const std::int64_t channels = x[x.rank() - 2];
    for (std::size_t i = 1; i < 5; ++i)
      if (n.inputs[i] == kNoValue ||
          g.value(n.inputs[i]).shape.element_count() != channels)
        return std::string("scale, bias, mean or var without one element per channel");
    std::int64_t size = 1;
    for (int d = 0; d + 2 < x.rank(); ++d) size *= x[d];
    if (size * 16 > 240 * 1024) return std::string("planes too large for the Unified Buffer");
    return std::nullopt;
  }
  std::int64_t axis = n.attr_int("axis", -1);
  if (axis < 0) axis += x.rank();
  if (axis < 0 || axis >= x.rank()) return std::string("an axis outside the input's rank");
  const std::int64_t cols = layer_norm_cols(n, x);
  if (cols * 32 > 240 * 1024) return std::string("rows too long for the Unified Buffer");
  if (g.value(n.inputs[1]).shape.element_count() != cols)
    return std::string("a scale that does not hold one value per normalised element");
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue &&
      g.value(n.inputs[2]).shape.element_count() != cols)
    return std::string("a bias that does not hold one value per normalised element");
  return std::nullopt;
}

class GlobalAveragePoolStep final : public Step {
 public:
  explicit GlobalAveragePoolStep(int node) : node_(node) {}
  void run(ExecContext& ctx) override {
    const Node& n = ctx.graph().nodes[static_cast<std::size_t>(node_)];
    const Shape& x = ctx.graph().value(n.inputs[0]).shape;  // (w, h, c, n)
    kernels::global_average_pool(
        ctx.device(), value_ptr(ctx, n.inputs[0]), value_ptr(ctx, n.outputs[0]),
        static_cast<std::int32_t>(x[2] * x[3]), static_cast<std::int32_t>(x[0] * x[1]));
    ctx.invalidate(n.outputs[0]);
  }

 private:
  int node_;
};

std::optional<std::string> conv_unsupported(const Node& n, const Graph& g,
                                            const arch::MachineSpec& spec) {
  const std::int64_t group = n.attr_int("group", 1);
  const bool depthwise = is_depthwise(n, g);
  const std::string pad = n.attr_string("auto_pad", "NOTSET");
  if (pad != "NOTSET" && pad != "VALID") return fmt::format("auto_pad {}", pad);
  if (n.activation.kind != compiler::Activation::Kind::none &&
      n.activation.kind != compiler::Activation::Kind::relu &&
      n.activation.kind != compiler::Activation::Kind::clip)
    return fmt::format("a fused {}", compiler::activation_name(n.activation));
  if (g.value(n.inputs[0]).shape.rank() != 4 || g.value(n.inputs[1]).shape.rank() != 4)
    return std::string("a Conv that is not 2-D");
  if (n.attr_ints("pads").size() > 4 || n.attr_ints("strides").size() > 2)
    return std::string("a Conv that is not 2-D");
  if (depthwise) {
    const kernels::ConvShape s = conv_shape(n, g);
    if (!floor_output(s)) return std::string("an output shape other than the floor of the window");
    return kernels::pool_unsupported(s, spec);
  }
  kernels::ConvShape s = conv_shape(n, g);
  if (group != 1) {
    if (group < 1 || s.c % group != 0 || s.cout % group != 0)
      return std::string("a group count that does not divide the channels");
    if (static_cast<std::int64_t>(s.h) * s.w > 0xffff || s.ho * s.wo > 0xffff)
      return std::string("a grouped Conv with planes above 65,535 pixels");
    s.c = static_cast<std::int32_t>(s.c / group);
    s.cout = static_cast<std::int32_t>(s.cout / group);
  }
  return kernels::conv_unsupported(s, spec);
}

std::optional<std::string> matmul_unsupported(const Node& n, const Graph& g) {
  if (n.op == "Gemm") {
    if (n.attr_int("transA", 0))
      return std::string("Gemm with transA (the Cube kernels take A as it is)");
    if (n.attr_float("alpha", 1.0f) != 1.0f) return std::string("Gemm with alpha != 1");
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
      const auto& c = g.value(n.inputs[2]);
      const auto& out = g.value(n.outputs[0]).shape;
      const bool rows_ok = c.shape.rank() < 2 || c.shape[1] == 1 || c.shape[1] == out[1];
      const bool cols_ok = c.shape.rank() < 1 || c.shape[0] == 1 || c.shape[0] == out[0];
      if (c.shape.rank() > 2 || !rows_ok || !cols_ok)
        return std::string("a C input that does not broadcast row- or column-wise");
    }
  } else if (n.inputs.size() != 2) {
    return std::string("MatMul without two inputs");
  }
  if (n.activation.kind != compiler::Activation::Kind::none)
    return std::string("a fused activation");
  for (int i = 0; i < 2; ++i) {
    const auto& v = g.value(n.inputs[static_cast<std::size_t>(i)]);
    if (v.shape.rank() < 1 || v.shape.rank() > 5 || (n.op == "Gemm" && v.shape.rank() != 2))
      return std::string("operands of rank outside 1..5");
    if (v.shape.element_count() == 0) return std::string("an empty operand");
    if (v.shape[0] > 20000 || v.shape.dim_or_one(1) > 20000)
      return std::string("a dimension above 20,000 (rows must fit the Unified Buffer)");
  }
  return std::nullopt;
}

class AicoreBackend final : public compiler::Backend {
 public:
  // The default device's preset (the limits of L1 and UB decide what a Conv may be).
  const arch::MachineSpec& spec() const {
    if (!spec_) spec_ = arch::load_machine(default_device());
    return *spec_;
  }

  std::string name() const override { return "aicore"; }
  std::string description() const override {
    return "Huawei Ascend AI Core: Conv (grouped, depthwise) and MatMul/Gemm on the Cube in fp16 "
           "with f32 accumulation; element-wise (f32), pooling, softmax, norms and layout ops "
           "(Transpose, DepthToSpace, SpaceToDepth, Tile, Expand, Concat, Split) and Gather "
           "(Elements, ND) on the Vector unit and MTEs; Ascend C kernels (docs/targets/aicore.md)";
  }
  std::string default_device() const override { return "ascend910"; }
  std::vector<std::string> device_targets() const override { return {"aicore"}; }
  // Ascend's compiler computes in fp16 (the Cube accumulates in f32) by default.
  DType compute_precision() const override { return DType::f16; }

  std::optional<std::string> unsupported_reason(const Node& n, const Graph& g) const override {
    if (is_layout_op(n.op)) {
      LayoutPlan p = layout_plan(n, g);
      return p.why.empty() ? std::nullopt : std::optional<std::string>(std::move(p.why));
    }
    if (n.op == "Gather" || n.op == "GatherElements" || n.op == "GatherND") {
      GatherPlan p = gather_plan(n, g);
      return p.why.empty() ? std::nullopt : std::optional<std::string>(std::move(p.why));
    }
    if (auto why = non_f32(n, g)) return why;
    if (n.op == "MatMul" || n.op == "Gemm") return matmul_unsupported(n, g);
    if (n.op == "Conv") return conv_unsupported(n, g, spec());
    if (n.op == "MaxPool" || n.op == "AveragePool") return max_pool_unsupported(n, g, spec());
    if (n.op == "BatchNormalization" || n.op == "LayerNormalization") return norm_unsupported(n, g);
    if (n.op == "Softmax") {
      const auto& x = g.value(n.inputs[0]);
      if (x.dtype != DType::f32 || x.shape.rank() < 1 || x.shape.element_count() == 0)
        return std::string("a Softmax that is not over f32");
      const auto p = softmax_plan(n, g);
      if (!p) return std::string("an axis outside the input's rank");
      if (p->cols * 20 > 240 * 1024) return std::string("rows too long for the Unified Buffer");
      if (x.shape.rank() > 5) return std::string("more than 5 axes");
      return std::nullopt;
    }
    if (n.op == "GlobalAveragePool") {
      const auto& x = g.value(n.inputs[0]);
      if (x.dtype != DType::f32 || x.shape.rank() != 4)
        return std::string("a GlobalAveragePool that is not over f32 NCHW");
      if (x.shape[0] * x.shape[1] * 12 > 240 * 1024)
        return std::string("planes too large for the Unified Buffer");
      return std::nullopt;
    }
    const auto op = eltwise_of(n.op);
    if (!op) return fmt::format("the aicore op library has no {}", n.op);
    const std::size_t arity = kernels::is_binary(*op) ? 2 : 1;
    if (n.inputs.size() != arity)
      return fmt::format("{} with {} inputs (the library's takes {})", n.op, n.inputs.size(),
                         arity);
    if (n.activation.kind != compiler::Activation::Kind::none)
      return std::string("a fused activation");
    const auto& out = g.value(n.outputs[0]);
    if (out.shape.element_count() == 0) return std::string("an empty tensor");
    if (out.shape.rank() > kernels::kStridedCopyMaxAxes) return std::string("more than 8 axes");
    for (ValueId v : n.inputs) {
      if (v == kNoValue) return std::string("an omitted input");
      if (!broadcasts_to(g.value(v).shape, out.shape))
        return std::string("operands that do not broadcast to the output");
    }
    return std::nullopt;
  }

  std::unique_ptr<Step> lower(const Graph& g, int node_index) const override {
    const Node& n = g.nodes[static_cast<std::size_t>(node_index)];
    if (n.op == "MatMul" || n.op == "Gemm") return std::make_unique<MatmulStep>(node_index);
    if (n.op == "Conv") return std::make_unique<ConvStep>(node_index);
    if (n.op == "GlobalAveragePool") return std::make_unique<GlobalAveragePoolStep>(node_index);
    if (n.op == "MaxPool" || n.op == "AveragePool") return std::make_unique<PoolStep>(node_index);
    if (n.op == "BatchNormalization" || n.op == "LayerNormalization")
      return std::make_unique<NormStep>(node_index);
    if (n.op == "Softmax") return std::make_unique<SoftmaxStep>(node_index);
    if (is_layout_op(n.op)) return std::make_unique<LayoutStep>(node_index);
    if (n.op == "Gather" || n.op == "GatherElements" || n.op == "GatherND")
      return std::make_unique<GatherStep>(node_index);
    const auto op = eltwise_of(n.op);
    if (!op) throw_internal_error("aicore backend asked to lower {}", n.describe());
    return std::make_unique<EltwiseStep>(node_index, *op);
  }

 private:
  mutable std::optional<arch::MachineSpec> spec_;
};

}  // namespace

std::unique_ptr<compiler::Backend> make_aicore_backend() {
  return std::make_unique<AicoreBackend>();
}

}  // namespace tessera::aicore

namespace tessera::targets {

void register_aicore_backend() {
  const auto b = aicore::make_aicore_backend();
  compiler::register_backend(
      {b->name(), b->description(), [] { return aicore::make_aicore_backend(); }});
}

}  // namespace tessera::targets
