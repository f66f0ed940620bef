// popops slicing at run-time offsets, gather, one-hot encoding and sorts.
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <ostream>

#include <popops/Cast.hpp>
#include <popops/DynamicSlice.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Encoding.hpp>
#include <popops/Gather.hpp>
#include <popops/Sort.hpp>
#include <popops/TopK.hpp>
#include <poputil/TileMapping.hpp>

#include "elementwise.h"

namespace tessera::ipu::poplibs {

// Row j of slice i pairs slice row i * sz + j with base row offsets[i] + j. params: S, sz,
// element bytes, N, offset type. Calls f(slice row, base row, whether the base row is in [0, S)).
template <typename F>
void each_slice_row(const poplar::Vector<unsigned>& params, const Byte* offsets, F&& f) {
  std::size_t S = params[0], sz = params[1], N = params[3];
  std::vector<double> off(N);
  load_elements(offsets, params[4], N, off.data());
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = 0; j < sz; ++j) {
      double o = off[i];
      bool in_range = !(o < 0 || std::size_t(o) + j >= S);
      f(i * sz + j, in_range ? std::size_t(o) + j : 0, in_range);
    }
}

// Copies rows from a base [S][cols] to slices [N*sz][cols] at run-time offsets (params as
// each_slice_row's).
class SliceVertex : public poplar::Vertex {
 public:
  poplar::Input<poplar::Vector<Byte>> offsets;
  poplar::Input<poplar::VectorList<Byte>> base;
  poplar::Output<poplar::VectorList<Byte>> out;
  poplar::Vector<unsigned> params;

  bool compute() {
    std::size_t es = params[2];
    each_slice_row(params, offsets.data(), [&](std::size_t s, std::size_t b, bool in_range) {
      auto& dst = out[s];
      if (!in_range)
        std::memset(dst.data(), 0, dst.size() * es);  // out of range: zeros
      else
        std::memcpy(dst.data(), base[b].data(), dst.size() * es);
    });
    return true;
  }
};

// Copies slices [N*sz][cols] back into a base [S][cols] at run-time offsets.
class UpdateVertex : public poplar::Vertex {
 public:
  poplar::Input<poplar::Vector<Byte>> offsets;
  poplar::InOut<poplar::VectorList<Byte>> base;
  poplar::Input<poplar::VectorList<Byte>> slices;
  poplar::Vector<unsigned> params;

  bool compute() {
    std::size_t es = params[2];
    each_slice_row(params, offsets.data(), [&](std::size_t s, std::size_t b, bool in_range) {
      if (!in_range) return;  // out of range: skipped
      auto& dst = base[b];
      std::memcpy(dst.data(), slices[s].data(), dst.size() * es);
    });
    return true;
  }
};

// Adds scale x slices [N*sz][cols] into a base [S][cols] at run-time offsets, slice by slice in
// order, so offsets that repeat accumulate. params: as each_slice_row's, then the element type;
// `scale` holds one element of that type.
class UpdateAddVertex : public poplar::Vertex {
 public:
  poplar::Input<poplar::Vector<Byte>> offsets;
  poplar::InOut<poplar::VectorList<Byte>> base;
  poplar::Input<poplar::VectorList<Byte>> slices;
  poplar::Input<poplar::Vector<Byte>> scale;
  poplar::Vector<unsigned> params;

  bool compute() {
    unsigned type = params[5];
    double k = 0;
    load_elements(scale.data(), type, 1, &k);
    std::vector<double> acc, add;
    each_slice_row(params, offsets.data(), [&](std::size_t s, std::size_t b, bool in_range) {
      if (!in_range) return;  // out of range: skipped, as multiUpdate skips it
      auto& dst = base[b];
      std::size_t n = dst.size();
      acc.resize(n);
      add.resize(n);
      load_elements(dst.data(), type, n, acc.data());
      load_elements(slices[s].data(), type, n, add.data());
      for (std::size_t i = 0; i < n; ++i) acc[i] += k * add[i];
      store_elements(dst.data(), type, n, acc.data());
    });
    return true;
  }
};

// Stable ascending sort of one row of keys, carrying values when there are any.
// params: key type, value type, has values.
class SortVertex : public poplar::Vertex {
 public:
  poplar::InOut<poplar::Vector<Byte>> keys;
  poplar::InOut<poplar::VectorList<Byte>> values;
  poplar::Vector<unsigned> params;

  bool compute() {
    std::size_t n = keys.size();
    std::vector<double> k(n);
    load_elements(keys.data(), params[0], n, k.data());
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return k[a] < k[b]; });
    std::vector<double> sorted(n);
    for (std::size_t i = 0; i < n; ++i) sorted[i] = k[order[i]];
    store_elements(keys.data(), params[0], n, sorted.data());
    if (params[2] && values.size() == 1) {
      std::vector<double> v(n), vs(n);
      load_elements(values[0].data(), params[1], n, v.data());
      for (std::size_t i = 0; i < n; ++i) vs[i] = v[order[i]];
      store_elements(values[0].data(), params[1], n, vs.data());
    }
    return true;
  }
};

// The k largest (or smallest) keys of one row and, per params, the values at their places or
// their indices. NaN ranks above every number. Of equal keys the earlier is taken first.
// params: key type, mode (0 keys only, 1 values, 2 indices), value type, k, largest, order
// (popops::SortOrder: 0 NONE, in row order; 1 ASCENDING; 2 DESCENDING).
class TopKVertex : public poplar::Vertex {
 public:
  poplar::Input<poplar::Vector<Byte>> keys;
  poplar::Input<poplar::VectorList<Byte>> values;  // one row in mode 1, else none
  poplar::Output<poplar::Vector<Byte>> outKeys;
  poplar::Output<poplar::VectorList<Byte>> outValues;  // one row in modes 1 and 2, else none
  poplar::Vector<unsigned> params;

  bool compute() {
    const unsigned key_type = params[0], mode = params[1], value_type = params[2];
    const std::size_t n = keys.size(), k = params[3];
    const bool largest = params[4] != 0;
    const unsigned order = params[5];
    std::vector<double> key(n);
    load_elements(keys.data(), key_type, n, key.data());
    auto below = [&](std::size_t a, std::size_t b) {  // key[a] < key[b], NaN the greatest
      if (std::isnan(key[a])) return false;
      return std::isnan(key[b]) || key[a] < key[b];
    };
    std::vector<std::size_t> rank(n);
    std::iota(rank.begin(), rank.end(), 0);
    std::stable_sort(rank.begin(), rank.end(), [&](std::size_t a, std::size_t b) {
      return largest ? below(b, a) : below(a, b);
    });
    std::vector<std::size_t> chosen(rank.begin(), rank.begin() + std::ptrdiff_t(k));
    std::sort(chosen.begin(), chosen.end());  // row order; ties keep it below
    if (order == 1) std::stable_sort(chosen.begin(), chosen.end(), below);
    if (order == 2)
      std::stable_sort(chosen.begin(), chosen.end(),
                       [&](std::size_t a, std::size_t b) { return below(b, a); });
    std::vector<double> out(k);
    for (std::size_t i = 0; i < k; ++i) out[i] = key[chosen[i]];
    store_elements(outKeys.data(), key_type, k, out.data());
    if (mode == 0) return true;
    if (mode == 1) {
      std::vector<double> v(n);
      load_elements(values[0].data(), value_type, n, v.data());
      for (std::size_t i = 0; i < k; ++i) out[i] = v[chosen[i]];
    } else {
      for (std::size_t i = 0; i < k; ++i) out[i] = double(chosen[i]);
    }
    store_elements(outValues[0].data(), value_type, k, out.data());
    return true;
  }
};

namespace {

const abi::FieldDesc kSliceFields[] = {
    TESSERA_IPU_FIELD(SliceVertex, offsets), TESSERA_IPU_FIELD(SliceVertex, base),
    TESSERA_IPU_FIELD(SliceVertex, out), TESSERA_IPU_FIELD(SliceVertex, params)};
const abi::FieldDesc kUpdateFields[] = {
    TESSERA_IPU_FIELD(UpdateVertex, offsets), TESSERA_IPU_FIELD(UpdateVertex, base),
    TESSERA_IPU_FIELD(UpdateVertex, slices), TESSERA_IPU_FIELD(UpdateVertex, params)};
const abi::FieldDesc kUpdateAddFields[] = {
    TESSERA_IPU_FIELD(UpdateAddVertex, offsets), TESSERA_IPU_FIELD(UpdateAddVertex, base),
    TESSERA_IPU_FIELD(UpdateAddVertex, slices), TESSERA_IPU_FIELD(UpdateAddVertex, scale),
    TESSERA_IPU_FIELD(UpdateAddVertex, params)};
const abi::FieldDesc kTopKFields[] = {
    TESSERA_IPU_FIELD(TopKVertex, keys), TESSERA_IPU_FIELD(TopKVertex, values),
    TESSERA_IPU_FIELD(TopKVertex, outKeys), TESSERA_IPU_FIELD(TopKVertex, outValues),
    TESSERA_IPU_FIELD(TopKVertex, params)};
const abi::FieldDesc kSortFields[] = {TESSERA_IPU_FIELD(SortVertex, keys),
                                      TESSERA_IPU_FIELD(SortVertex, values),
                                      TESSERA_IPU_FIELD(SortVertex, params)};
const char* const kNone[] = {nullptr};

// Copies move 64 bits per cycle per row element run (estimate).
poplar::VertexPerfEstimate copy_estimate(const poplar::VertexIntrospector& v, const char* field) {
  return poplar::VertexPerfEstimate(30 + v.getFieldInfo(field).totalElements() / 2);
}

enum class SliceMode { slice, update, update_add };

const abi::VertexTypeDesc& slice_desc(SliceMode mode) {
  static const abi::VertexTypeDesc s = poplar::detail::describe_vertex<SliceVertex>(
      "popops::DynamicSlice2D", kSliceFields, 4, kNone);
  static const abi::VertexTypeDesc u = poplar::detail::describe_vertex<UpdateVertex>(
      "popops::DynamicUpdateSlice2D", kUpdateFields, 4, kNone);
  static const abi::VertexTypeDesc a = poplar::detail::describe_vertex<UpdateAddVertex>(
      "popops::MultiUpdateAdd", kUpdateAddFields, 5, kNone);
  return mode == SliceMode::slice ? s : mode == SliceMode::update ? u : a;
}

std::string slice_vertex(Graph& g, SliceMode mode, Type t) {
  const char* base = mode == SliceMode::slice    ? "popops::DynamicSlice2D"
                     : mode == SliceMode::update ? "popops::DynamicUpdateSlice2D"
                                                 : "popops::MultiUpdateAdd";
  std::string name = templated(base, {type_arg(t)});
  register_codelet(
      g, name, slice_desc(mode),
      [mode, t](const poplar::VertexIntrospector& v, const poplar::Target& target) {
        if (mode != SliceMode::update_add)
          return copy_estimate(v, mode == SliceMode::update ? "slices" : "out");
        // A load of the base and the slice, a multiply-add and a store per vector.
        std::uint64_t n = v.getFieldInfo("slices").totalElements();
        std::uint64_t width = std::max(1u, target.getVectorWidth(t));
        return poplar::VertexPerfEstimate(30 + 3 * ((n + width - 1) / width));
      });
  return name;
}

// The column chunks of slice_columns: chunk c of C columns over T tiles is on tile c*T/chunks,
// in whole grains of `grain` columns.
std::size_t column_chunks(std::size_t C, unsigned T, std::size_t grain) {
  std::size_t grains = (C + grain - 1) / std::max<std::size_t>(1, grain);
  return std::max<std::size_t>(1, std::min<std::size_t>(T, grains));
}
std::size_t chunk_begin(std::size_t C, std::size_t chunks, std::size_t grain, std::size_t c) {
  std::size_t grains = (C + grain - 1) / std::max<std::size_t>(1, grain);
  return std::min(C, split_begin(grains, chunks, c) * grain);
}

// base2 [S][C], slices2 [N*sz][C]: one vertex per column chunk on the chunk's tile. A slice
// made here (map_slices) is mapped with its chunk; `scale` is update_add's.
void slice_columns(Graph& g, const Tensor& base2, const Tensor& slices2, const Tensor& offsets,
                   std::size_t sz, SliceMode mode, bool map_slices,
                   poplar::program::Sequence& prog, const poplar::DebugContext& dc,
                   const Tensor* scale = nullptr) {
  require_codelets(g, "popops", "popops::MapExpr");
  std::string vertex = slice_vertex(g, mode, base2.elementType());
  std::size_t S = base2.dim(0), C = base2.dim(1), N = slices2.dim(0) / std::max<std::size_t>(1, sz);
  unsigned T = num_tiles(g);
  std::size_t chunks = column_chunks(C, T, 1);
  const char* what = mode == SliceMode::slice    ? "dynamicSlice"
                     : mode == SliceMode::update ? "dynamicUpdate"
                                                 : "multiUpdateAdd";
  auto cs = g.addComputeSet(name_of(dc, what));
  for (std::size_t c = 0; c < chunks; ++c) {
    std::size_t c0 = chunk_begin(C, chunks, 1, c), c1 = chunk_begin(C, chunks, 1, c + 1);
    if (c0 == c1) continue;
    unsigned tile = unsigned(c * T / chunks);
    std::vector<Tensor> b, s;
    for (std::size_t r = 0; r < S; ++r) b.push_back(base2[r].slice(c0, c1));
    for (std::size_t r = 0; r < slices2.dim(0); ++r) s.push_back(slices2[r].slice(c0, c1));
    if (map_slices) g.setTileMapping(slices2.slice({0, c0}, {slices2.dim(0), c1}), tile);
    auto v = g.addVertex(cs, vertex);
    g.connect(v["offsets"], offsets.flatten());
    g.connect(v["base"], poplar::ArrayRef<Tensor>(b));
    g.connect(v[mode == SliceMode::slice ? "out" : "slices"], poplar::ArrayRef<Tensor>(s));
    std::vector<unsigned> params = {unsigned(S), unsigned(sz), base2.elementType().tesseraSize(),
                                    unsigned(N), offsets.elementType().tesseraId()};
    if (mode == SliceMode::update_add) {
      g.connect(v["scale"], scale->flatten());
      params.push_back(base2.elementType().tesseraId());
    }
    set_state(g, v, "params", params);
    g.setTileMapping(v, tile);
  }
  prog.add(poplar::program::Execute(cs, dc));
}

void check_offsets(const Tensor& offsets, const char* fn) {
  auto t = offsets.elementType();
  if (t != poplar::UNSIGNED_INT && t != poplar::INT)
    throw poputil::poplibs_error(fmt::format("popops::{}: offsets must be unsigned int or int, not {}",
                                             fn, t.toString()));
}

// t with `dim` first, as [S][rest].
Tensor rows_of(const Tensor& t, unsigned dim) {
  Tensor r = t.dimRoll(dim, 0);
  return r.reshape({r.dim(0), r.numElements() / std::max<std::size_t>(1, r.dim(0))});
}

}  // namespace

const abi::VertexTypeDesc& sort_desc() {
  static const abi::VertexTypeDesc d =
      poplar::detail::describe_vertex<SortVertex>("popops::Sort", kSortFields, 3, kNone);
  return d;
}

const abi::VertexTypeDesc& topk_desc() {
  static const abi::VertexTypeDesc d =
      poplar::detail::describe_vertex<TopKVertex>("popops::TopK", kTopKFields, 5, kNone);
  return d;
}

std::vector<const abi::VertexTypeDesc*> slices_descs() {
  return {&slice_desc(SliceMode::slice), &slice_desc(SliceMode::update),
          &slice_desc(SliceMode::update_add), &sort_desc(), &topk_desc()};
}

}  // namespace tessera::ipu::poplibs

namespace popops {

using namespace tessera::ipu::poplibs;
using poplar::Tensor;
using poplar::program::Sequence;

Tensor dynamicSlice(poplar::Graph& graph, const Tensor& t, const Tensor& offset,
                    const std::vector<std::size_t>& dims, const std::vector<std::size_t>& sizes,
                    Sequence& prog, const poplar::DebugContext& dc, const poplar::OptionFlags&) {
  check_offsets(offset, "dynamicSlice");
  if (dims.size() != sizes.size() || offset.numElements() != dims.size())
    throw poputil::poplibs_error(fmt::format(
        "popops::dynamicSlice: {} dims, {} sizes and {} offsets; give one size and one offset "
        "per dimension",
        dims.size(), sizes.size(), offset.numElements()));
  Tensor cur = t;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    unsigned d = unsigned(dims[i]);
    if (d >= cur.rank() || sizes[i] > cur.dim(d))
      throw poputil::poplibs_error(fmt::format(
          "popops::dynamicSlice: dimension {} (size {}) cannot give a slice of {}", d,
          d < cur.rank() ? cur.dim(d) : 0, sizes[i]));
    Tensor base2 = rows_of(cur, d);
    auto shape = cur.dimRoll(d, 0).shape();
    shape[0] = sizes[i];
    Tensor out = graph.addVariable(t.elementType(), shape, {dc, "slice"});
    Tensor out2 = out.reshape({sizes[i], out.numElements() / std::max<std::size_t>(1, sizes[i])});
    slice_columns(graph, base2, out2, offset.flatten().slice(i, i + 1), sizes[i],
                  SliceMode::slice, true, prog, dc);
    cur = out.dimRoll(0, d);
  }
  return cur;
}

void dynamicUpdate(poplar::Graph& graph, const Tensor& t, const Tensor& s, const Tensor& offset,
                   const std::vector<std::size_t>& dims, const std::vector<std::size_t>& sizes,
                   Sequence& prog, const poplar::DebugContext& dc, const poplar::OptionFlags&) {
  check_offsets(offset, "dynamicUpdate");
  if (dims.size() != 1 || sizes.size() != 1 || offset.numElements() != 1)
    throw poputil::poplibs_error(
        "popops::dynamicUpdate: Tessera updates along one dimension (one dim, size and offset)");
  unsigned d = unsigned(dims[0]);
  if (d >= t.rank() || s.rank() != t.rank() || s.dim(d) != sizes[0])
    throw poputil::poplibs_error(fmt::format("popops::dynamicUpdate: slice {{{}}} does not fit {{{}}} "
                                             "along dimension {}",
                                             fmt::join(s.shape(), ","), fmt::join(t.shape(), ","), d));
  slice_columns(graph, rows_of(t, d), rows_of(s, d), offset, sizes[0], SliceMode::update, false,
                prog, dc);
}

Tensor multiSlice(poplar::Graph& graph, const Tensor& t, const Tensor& offsets,
                  const std::vector<std::size_t>& dims, const std::vector<std::size_t>& sizes,
                  Sequence& prog, const SlicePlan&, const poplar::OptionFlags&,
                  const poplar::DebugContext& dc) {
  check_offsets(offsets, "multiSlice");
  if (dims.size() != 1 || sizes.size() != 1)
    throw poputil::poplibs_error("popops::multiSlice: Tessera slices along one dimension");
  unsigned d = unsigned(dims[0]);
  if (d >= t.rank()) throw poputil::poplibs_error("popops::multiSlice: dimension out of range");
  std::size_t N = offsets.dim(0);
  auto rolled = t.dimRoll(d, 0).shape();
  std::vector<std::size_t> shape = {N, sizes[0]};
  shape.insert(shape.end(), rolled.begin() + 1, rolled.end());
  Tensor out = graph.addVariable(t.elementType(), shape, {dc, "multiSlice"});
  Tensor out2 = out.reshape({N * sizes[0], out.numElements() / std::max<std::size_t>(1, N * sizes[0])});
  slice_columns(graph, rows_of(t, d), out2, offsets, sizes[0], SliceMode::slice, true, prog, dc);
  return out;
}

void multiUpdate(poplar::Graph& graph, const Tensor& t, const Tensor& s, const Tensor& offsets,
                 const std::vector<std::size_t>& dims, const std::vector<std::size_t>& sizes,
                 Sequence& prog, const SlicePlan&, const poplar::OptionFlags&,
                 const poplar::DebugContext& dc) {
  check_offsets(offsets, "multiUpdate");
  if (dims.size() != 1 || sizes.size() != 1)
    throw poputil::poplibs_error("popops::multiUpdate: Tessera updates along one dimension");
  unsigned d = unsigned(dims[0]);
  std::size_t N = offsets.dim(0);
  if (s.numElements() != N * sizes[0] * (t.numElements() / std::max<std::size_t>(1, t.dim(d))))
    throw poputil::poplibs_error("popops::multiUpdate: the slices do not match offsets x sizes x "
                                 "the other dimensions of t");
  slice_columns(graph, rows_of(t, d), s.reshape({N * sizes[0], s.numElements() / (N * sizes[0])}),
                offsets, sizes[0], SliceMode::update, false, prog, dc);
}

Tensor gather(poplar::Graph& graph, const Tensor& input, const Tensor& indices, unsigned axis,
              Sequence& prog, const GatherParams&, const poplar::DebugContext& dc) {
  if (axis >= input.rank())
    throw poputil::poplibs_error(fmt::format("popops::gather: axis {} of a {}-dimensional input",
                                             axis, input.rank()));
  Tensor rows = multiSlice(graph, input, indices.flatten().expand({1}), {axis}, {1}, prog, {}, {}, dc);
  // rows: [n][1][input dims without axis, in rolled order] -> out shape.
  auto rolled = input.dimRoll(axis, 0).shape();
  std::vector<std::size_t> s = indices.shape();
  s.insert(s.end(), rolled.begin() + 1, rolled.end());
  Tensor r = rows.reshape(s);
  // Move the index dimensions to `axis`.
  std::vector<unsigned> perm;
  unsigned ni = indices.rank();
  for (unsigned i = 0; i < axis; ++i) perm.push_back(ni + i);
  for (unsigned i = 0; i < ni; ++i) perm.push_back(i);
  for (unsigned i = ni + axis; i < r.rank(); ++i) perm.push_back(i);
  return r.dimShuffle(perm);
}

void encodeOneHot(poplar::Graph& graph, const Tensor& indices, const Tensor& encoded,
                  Sequence& prog, const poplar::DebugContext& dc) {
  if (encoded.rank() != 2 || indices.numElements() != encoded.dim(0))
    throw poputil::poplibs_error(fmt::format(
        "popops::encodeOneHot: encoded must be [indices][classes]; it is {{{}}} for {} indices",
        fmt::join(encoded.shape(), ","), indices.numElements()));
  std::size_t C = encoded.dim(1);
  std::vector<int> classes(C);
  std::iota(classes.begin(), classes.end(), 0);
  Tensor iota = graph.addConstant<int>(poplar::INT, {1, C}, poplar::ArrayRef<int>(classes), {dc, "classes"});
  poputil::mapTensorLinearly(graph, iota);
  Tensor idx = indices.elementType() == poplar::INT
                   ? indices
                   : popops::cast(graph, indices, poplar::INT, prog, {dc, "indices"});
  namespace pe = popops::expr;
  mapWithOutput(graph, pe::Cast(pe::Equal(pe::_1, pe::_2), encoded.elementType()),
                {iota, idx.reshape({encoded.dim(0), 1})}, encoded, prog, {dc, "encodeOneHot"});
}

namespace {
// The tile holding a row's first element: where the row's codelet runs (0 when unmapped).
unsigned tile_of_first(const poplar::Graph& graph, const Tensor& row) {
  auto m = graph.getTileMapping(row.slice(0, 1), false);
  for (unsigned i = 0; i < m.size(); ++i)
    if (!m[i].empty()) return i;
  return 0;
}

void sort_rows(poplar::Graph& graph, const Tensor& k, const Tensor* v, unsigned dim, Sequence& prog,
               const poplar::DebugContext& dc) {
  require_codelets(graph, "popops", "popops::MapExpr");
  if (dim >= k.rank())
    throw poputil::poplibs_error(fmt::format("popops::sort: dimension {} of a {}-dimensional tensor",
                                             dim, k.rank()));
  if (v && v->shape() != k.shape())
    throw poputil::poplibs_error("popops::sortKeyValue: keys and values must have the same shape");
  std::string vertex = templated("popops::Sort", {type_arg(k.elementType()),
                                                  v ? type_arg(v->elementType()) : std::string("void")});
  register_codelet(graph, vertex, sort_desc(),
                   [](const poplar::VertexIntrospector& vi, const poplar::Target&) {
                     // n log n compares and moves (estimate).
                     double n = double(vi.getFieldInfo("keys").totalElements());
                     return poplar::VertexPerfEstimate(40 + std::uint64_t(n * std::log2(n + 1) * 6));
                   });
  Tensor kr = k.dimRoll(dim, k.rank() - 1);
  std::size_t L = k.dim(dim), R = k.numElements() / std::max<std::size_t>(1, L);
  kr = kr.reshape({R, L});
  Tensor vr = v ? v->dimRoll(dim, k.rank() - 1).reshape({R, L}) : Tensor();
  auto cs = graph.addComputeSet(name_of(dc, "sort"));
  for (std::size_t r = 0; r < R; ++r) {
    auto vx = graph.addVertex(cs, vertex);
    graph.connect(vx["keys"], kr[r]);
    if (v)
      graph.connect(vx["values"], poplar::ArrayRef<Tensor>({vr[r]}));
    else
      graph.connect(vx["values"], poplar::ArrayRef<Tensor>(std::vector<Tensor>{}));
    set_state(graph, vx, "params",
              {k.elementType().tesseraId(), v ? v->elementType().tesseraId() : 0u, v ? 1u : 0u});
    const unsigned tile = tile_of_first(graph, kr[r]);
    graph.setTileMapping(vx, tile);
  }
  prog.add(poplar::program::Execute(cs, dc));
}
}  // namespace

void sortInPlace(poplar::Graph& graph, const Tensor& t, unsigned dim, Sequence& prog,
                 const poplar::DebugContext& dc) {
  sort_rows(graph, t, nullptr, dim, prog, dc);
}

Tensor sort(poplar::Graph& graph, const Tensor& t, unsigned dim, Sequence& prog,
            const poplar::DebugContext& dc) {
  Tensor out = clone_like(graph, t, t.elementType(), {dc, "sorted"});
  prog.add(poplar::program::Copy(t, out, false, dc));
  sortInPlace(graph, out, dim, prog, dc);
  return out;
}

void sortKeyValueInPlace(poplar::Graph& graph, const Tensor& k, const Tensor& v, unsigned dim,
                         Sequence& prog, const poplar::DebugContext& dc) {
  sort_rows(graph, k, &v, dim, prog, dc);
}

Tensor sortKeyValue(poplar::Graph& graph, const Tensor& k, const Tensor& v, unsigned dim,
                    Sequence& prog, const poplar::DebugContext& dc) {
  Tensor kc = clone_like(graph, k, k.elementType(), {dc, "keys"});
  Tensor vc = clone_like(graph, v, v.elementType(), {dc, "values"});
  prog.add(poplar::program::Copy(k, kc, false, dc));
  prog.add(poplar::program::Copy(v, vc, false, dc));
  sortKeyValueInPlace(graph, kc, vc, dim, prog, dc);
  return vc;
}

// ---- top k ----
TopKParams::TopKParams(unsigned k_, bool largest_, SortOrder sortOrder_) noexcept
    : k(k_), largest(largest_), sortOrder(sortOrder_) {}

std::ostream& operator<<(std::ostream& os, const SortOrder& o) {
  return os << (o == SortOrder::ASCENDING    ? "ASCENDING"
                : o == SortOrder::DESCENDING ? "DESCENDING"
                                             : "NONE");
}

std::ostream& operator<<(std::ostream& os, const TopKParams& p) {
  return os << "{k=" << p.k << ", largest=" << (p.largest ? "true" : "false")
            << ", sortOrder=" << p.sortOrder << "}";
}

Tensor createTopKInput(poplar::Graph& graph, const poplar::Type& type,
                       const std::vector<std::size_t>& shape, const TopKParams&,
                       const poplar::DebugContext& dc) {
  if (shape.empty())
    throw poputil::poplibs_error(
        "popops::createTopKInput: the shape has no dimension; give at least the innermost "
        "dimension the top k is taken over");
  Tensor t = graph.addVariable(type, shape, {dc, "topKInput"});
  // Whole rows per tile, so each row's codelet reads it where it lies.
  poputil::mapTensorLinearly(graph, t, 0, static_cast<unsigned>(std::max<std::size_t>(1, shape.back())));
  return t;
}

namespace {
// The top k of each row of `keys`'s innermost dimension; mode 1 also gathers `values`, mode 2
// the indices. Returns the keys and (modes 1, 2) the values or indices, both [..., k].
std::pair<Tensor, Tensor> top_k(poplar::Graph& graph, Sequence& prog, const Tensor& keys,
                                const Tensor* values, bool indices, const TopKParams& p,
                                const poplar::DebugContext& dc, const char* fn) {
  require_codelets(graph, "popops", "popops::MapExpr");
  if (keys.rank() == 0 || keys.dim(keys.rank() - 1) == 0)
    throw poputil::poplibs_error(fmt::format(
        "popops::{}: the input must have an innermost dimension with elements; its shape is "
        "{{{}}}",
        fn, fmt::join(keys.shape(), ",")));
  const std::size_t N = keys.dim(keys.rank() - 1), R = keys.numElements() / N;
  if (p.k == 0 || p.k > N)
    throw poputil::poplibs_error(fmt::format(
        "popops::{}: k is {} but the innermost dimension of {{{}}} has {} elements; give k from "
        "1 to {} (or take the top k over a larger dimension)",
        fn, p.k, fmt::join(keys.shape(), ","), N, N));
  if (values && values->shape() != keys.shape())
    throw poputil::poplibs_error(fmt::format(
        "popops::{}: values {{{}}} must have the keys' shape {{{}}}", fn,
        fmt::join(values->shape(), ","), fmt::join(keys.shape(), ",")));
  const unsigned mode = values ? 1u : indices ? 2u : 0u;
  const Type value_type = values ? values->elementType() : poplar::UNSIGNED_INT;
  std::string vertex = templated("popops::TopK", {type_arg(keys.elementType()),
                                                  mode ? type_arg(value_type) : std::string("void")});
  register_codelet(graph, vertex, topk_desc(),
                   [](const poplar::VertexIntrospector& vi, const poplar::Target&) {
                     // n log n compares and moves to rank the row (estimate, as popops::Sort).
                     double n = double(vi.getFieldInfo("keys").totalElements());
                     return poplar::VertexPerfEstimate(40 + std::uint64_t(n * std::log2(n + 1) * 6));
                   });
  std::vector<std::size_t> out_shape = keys.shape();
  out_shape.back() = p.k;
  Tensor kr = keys.reshape({R, N});
  Tensor vr = values ? values->reshape({R, N}) : Tensor();
  Tensor out_keys = graph.addVariable(keys.elementType(), {R, p.k}, {dc, "topK"});
  Tensor out_values =
      mode ? graph.addVariable(value_type, {R, p.k}, {dc, indices ? "indices" : "values"}) : Tensor();
  auto cs = graph.addComputeSet(name_of(dc, "topK"));
  const auto order = static_cast<unsigned>(p.sortOrder);
  for (std::size_t r = 0; r < R; ++r) {
    auto vx = graph.addVertex(cs, vertex);
    graph.connect(vx["keys"], kr[r]);
    graph.connect(vx["values"], mode == 1 ? std::vector<Tensor>{vr[r]} : std::vector<Tensor>{});
    graph.connect(vx["outKeys"], out_keys[r]);
    graph.connect(vx["outValues"], mode ? std::vector<Tensor>{out_values[r]} : std::vector<Tensor>{});
    set_state(graph, vx, "params",
              {keys.elementType().tesseraId(), mode, value_type.tesseraId(), p.k,
               p.largest ? 1u : 0u, order});
    const unsigned tile = tile_of_first(graph, kr[r]);
    graph.setTileMapping(vx, tile);
    graph.setTileMapping(out_keys[r], tile);
    if (mode) graph.setTileMapping(out_values[r], tile);
  }
  prog.add(poplar::program::Execute(cs, dc));
  return {out_keys.reshape(out_shape), mode ? out_values.reshape(out_shape) : Tensor()};
}
}  // namespace

Tensor topK(poplar::Graph& graph, Sequence& prog, const Tensor& t, const TopKParams& params,
            const poplar::DebugContext& dc) {
  return top_k(graph, prog, t, nullptr, false, params, dc, "topK").first;
}

std::pair<Tensor, Tensor> topKKeyValue(poplar::Graph& graph, Sequence& prog, const Tensor& keys,
                                       const Tensor& values, const TopKParams& params,
                                       const poplar::DebugContext& dc) {
  return top_k(graph, prog, keys, &values, false, params, dc, "topKKeyValue");
}

std::pair<Tensor, Tensor> topKWithPermutation(poplar::Graph& graph, Sequence& prog,
                                              const Tensor& t, const TopKParams& params,
                                              const poplar::DebugContext& dc) {
  return top_k(graph, prog, t, nullptr, true, params, dc, "topKWithPermutation");
}

}  // namespace popops

namespace tessera::ipu::poplibs {
namespace {

// `dims` checked against `shape` and `sizes`: distinct, in range, each size at most its dim.
void check_slice_dims(const char* fn, const std::vector<std::size_t>& shape,
                      const std::vector<std::size_t>& dims, const std::vector<std::size_t>& sizes) {
  if (dims.size() != sizes.size())
    throw poputil::poplibs_error(fmt::format(
        "popops::{}: {} dims but {} sizes; give one size per sliced dimension", fn, dims.size(),
        sizes.size()));
  std::vector<bool> seen(shape.size(), false);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= shape.size() || seen[dims[i]])
      throw poputil::poplibs_error(fmt::format(
          "popops::{}: dimension {} is out of range or repeated for shape {{{}}}", fn, dims[i],
          fmt::join(shape, ",")));
    seen[dims[i]] = true;
    if (sizes[i] > shape[dims[i]])
      throw poputil::poplibs_error(fmt::format(
          "popops::{}: a slice of {} along dimension {} of size {}", fn, sizes[i], dims[i],
          shape[dims[i]]));
  }
}

// Maps t as slice_columns reads it: the leading `lead` dimensions of `view` (a permutation of
// t's) are rows, the rest columns, and each chunk of columns with all its rows on one tile.
void map_columns(Graph& g, const Tensor& view, std::size_t lead, std::size_t grain) {
  std::size_t rows = 1;
  for (std::size_t i = 0; i < lead; ++i) rows *= view.dim(unsigned(i));
  std::size_t cols = view.numElements() / std::max<std::size_t>(1, rows);
  if (rows == 0 || cols == 0) return;
  Tensor m = view.reshape({rows, cols});
  unsigned T = num_tiles(g);
  std::size_t chunks = column_chunks(cols, T, grain);
  for (std::size_t c = 0; c < chunks; ++c) {
    std::size_t c0 = chunk_begin(cols, chunks, grain, c), c1 = chunk_begin(cols, chunks, grain, c + 1);
    if (c0 < c1) g.setTileMapping(m.slice({0, c0}, {rows, c1}), unsigned(c * T / chunks));
  }
}

// The permutation putting `dims` first (in their order), then the other dimensions.
std::vector<unsigned> dims_first(std::size_t rank, const std::vector<std::size_t>& dims) {
  std::vector<unsigned> perm;
  for (auto d : dims) perm.push_back(unsigned(d));
  for (unsigned d = 0; d < rank; ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) perm.push_back(d);
  return perm;
}

}  // namespace
}  // namespace tessera::ipu::poplibs

namespace popops {

Tensor createSliceableTensor(poplar::Graph& graph, const poplar::Type& type,
                             const std::vector<std::size_t>& shape,
                             const std::vector<std::size_t>& dims,
                             const std::vector<std::size_t>& sizes, std::size_t minGrainSize,
                             const poplar::DebugContext& dc) {
  check_slice_dims("createSliceableTensor", shape, dims, sizes);
  Tensor t = graph.addVariable(type, shape, {dc, "sliceable"});
  if (dims.empty()) {
    poputil::mapTensorLinearly(graph, t);
    return t;
  }
  // The sliced dimensions stay whole on each tile; the others are spread over the tiles, so a
  // slice at any offset reads only its own tile's elements.
  map_columns(graph, t.dimShuffle(dims_first(shape.size(), dims)), dims.size(),
              std::max<std::size_t>(1, minGrainSize));
  return t;
}

Tensor createSliceTensor(poplar::Graph& graph, const poplar::Type& type,
                         const std::vector<std::size_t>& shape,
                         const std::vector<std::size_t>& dims,
                         const std::vector<std::size_t>& sizes, std::size_t numIndices,
                         const poplar::DebugContext& dc) {
  check_slice_dims("createSliceTensor", shape, dims, sizes);
  std::vector<std::size_t> out_shape = {numIndices};
  out_shape.insert(out_shape.end(), shape.begin(), shape.end());
  for (std::size_t i = 0; i < dims.size(); ++i) out_shape[1 + dims[i]] = sizes[i];
  Tensor out = graph.addVariable(type, out_shape, {dc, "slices"});
  std::vector<std::size_t> lead = {0};
  for (auto d : dims) lead.push_back(d + 1);
  map_columns(graph, out.dimShuffle(dims_first(out_shape.size(), lead)), lead.size(), 1);
  return out;
}

Tensor createSliceTensor(poplar::Graph& graph, const Tensor& t,
                         const std::vector<std::size_t>& dims,
                         const std::vector<std::size_t>& sizes, std::size_t numIndices,
                         const poplar::DebugContext& dc) {
  return createSliceTensor(graph, t.elementType(), t.shape(), dims, sizes, numIndices, dc);
}

void dynamicSliceWithOutput(poplar::Graph& graph, const Tensor& output, const Tensor& t,
                            const Tensor& offset, const std::vector<std::size_t>& dims,
                            const std::vector<std::size_t>& sizes, Sequence& prog,
                            const poplar::DebugContext& dc, const poplar::OptionFlags& options) {
  check_offsets(offset, "dynamicSliceWithOutput");
  check_slice_dims("dynamicSliceWithOutput", t.shape(), dims, sizes);
  auto expect = t.shape();
  for (std::size_t i = 0; i < dims.size(); ++i) expect[dims[i]] = sizes[i];
  if (output.shape() != expect || output.elementType() != t.elementType())
    throw poputil::poplibs_error(fmt::format(
        "popops::dynamicSliceWithOutput: the output is {} {{{}}}; the slice is {} {{{}}}",
        output.elementType().toString(), fmt::join(output.shape(), ","),
        t.elementType().toString(), fmt::join(expect, ",")));
  if (dims.size() == 1 && offset.numElements() == 1) {
    unsigned d = unsigned(dims[0]);
    slice_columns(graph, rows_of(t, d), rows_of(output, d), offset, sizes[0], SliceMode::slice,
                  false, prog, dc);
    return;
  }
  prog.add(poplar::program::Copy(dynamicSlice(graph, t, offset, dims, sizes, prog, dc, options),
                                 output, false, dc));
}

void multiUpdateAdd(poplar::Graph& graph, const Tensor& t, const Tensor& s, const Tensor& offsets,
                    const Tensor& scale, const std::vector<std::size_t>& dims,
                    const std::vector<std::size_t>& sizes, Sequence& prog, const SlicePlan&,
                    const poplar::OptionFlags&, const poplar::DebugContext& dc) {
  check_offsets(offsets, "multiUpdateAdd");
  if (dims.size() != 1 || sizes.size() != 1)
    throw poputil::poplibs_error("popops::multiUpdateAdd: Tessera updates along one dimension");
  check_slice_dims("multiUpdateAdd", t.shape(), dims, sizes);
  if (!t.elementType().isFloatingPoint() && t.elementType() != poplar::INT &&
      t.elementType() != poplar::UNSIGNED_INT)
    throw poputil::poplibs_error(fmt::format(
        "popops::multiUpdateAdd: t is {}; it must be float, half, int or unsigned int",
        t.elementType().toString()));
  if (scale.numElements() != 1 || scale.elementType() != t.elementType())
    throw poputil::poplibs_error(fmt::format(
        "popops::multiUpdateAdd: scale must be one {} element (t's type); it is {} {{{}}}",
        t.elementType().toString(), scale.elementType().toString(),
        fmt::join(scale.shape(), ",")));
  unsigned d = unsigned(dims[0]);
  std::size_t N = offsets.rank() == 0 ? 1 : offsets.dim(0);
  std::size_t rest = t.numElements() / std::max<std::size_t>(1, t.dim(d));
  if (s.elementType() != t.elementType() || s.numElements() != N * sizes[0] * rest)
    throw poputil::poplibs_error(fmt::format(
        "popops::multiUpdateAdd: {} {} slices of {} x {} elements need {} elements of {}; s is "
        "{} {{{}}}",
        N, t.elementType().toString(), sizes[0], rest, N * sizes[0] * rest,
        t.elementType().toString(), s.elementType().toString(), fmt::join(s.shape(), ",")));
  slice_columns(graph, rows_of(t, d), s.reshape({N * sizes[0], rest}), offsets, sizes[0],
                SliceMode::update_add, false, prog, dc, &scale);
}

Tensor createIndicesTensor(poplar::Graph& graph, const std::vector<std::size_t>& dims,
                           std::size_t numIndices, const SlicePlan&, const poplar::OptionFlags&,
                           const poplar::DebugContext& dc) {
  Tensor t = graph.addVariable(poplar::UNSIGNED_INT, {numIndices, dims.size()}, {dc, "indices"});
  poputil::mapTensorLinearly(graph, t);
  return t;
}

namespace embedding {
SlicePlan plan(const poplar::Graph&, const poplar::Type& dataType, std::size_t numEntries,
               std::size_t outputSize, const std::vector<std::size_t>& numLookups,
               const poplar::OptionFlags&) {
  SlicePlan p;
  p.dataType = dataType;
  p.numEntries = numEntries;
  p.outputSize = outputSize;
  p.numLookups = numLookups;
  return p;
}
}  // namespace embedding

}  // namespace popops
