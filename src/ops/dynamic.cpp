// Ops whose output shape depends on the input data: NonZero-13, Unique-11,
// NonMaxSuppression-11. Semantics from the ONNX operator documentation (onnx/onnx
// docs/Operators.md); NonMaxSuppression's box overlap test follows ONNX Runtime's
// (onnxruntime/core/providers/cpu/object_detection/non_max_suppression.cc), which the ONNX
// node tests were generated against. Index outputs are i32, as every index in ops/.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "common.h"
#include "tessera/ops/reference.h"

namespace tessera::ops {

Tensor non_zero(const Tensor& x) {
  const int r = x.rank();
  const std::vector<double> v = x.to_doubles();
  std::vector<std::int64_t> flat;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] != 0.0) flat.push_back(static_cast<std::int64_t>(i));
  const auto nnz = static_cast<std::int64_t>(flat.size());
  // ONNX (rank, nnz): row d holds every nonzero's coordinate along ONNX axis d.
  std::vector<std::int64_t> out(static_cast<std::size_t>(nnz * r));
  for (std::int64_t j = 0; j < nnz; ++j) {
    std::int64_t rest = flat[static_cast<std::size_t>(j)];
    for (int t = 0; t < r; ++t) {  // Tessera dim t is ONNX axis r-1-t
      out[static_cast<std::size_t>((r - 1 - t) * nnz + j)] = rest % x.dim(t);
      rest /= x.dim(t);
    }
  }
  return Tensor::from_ints(DType::i64, Shape{nnz, r}, out);
}

UniqueResult unique(const Tensor& x, std::optional<int> axis_in, bool sorted) {
  // Slices along the axis (each element when there is none), compared in ONNX row-major order.
  const Tensor src = axis_in ? x : x.reshape(Shape{x.element_count()});
  const int axis =
      axis_in ? detail::normalize_axis("Unique", *axis_in, src.rank(), src.shape()) : 0;
  const std::int64_t n = src.dim(axis);
  const std::int64_t inner = detail::dims_product(src.shape(), 0, axis);
  const std::int64_t outer = detail::dims_product(src.shape(), axis + 1, src.rank());
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  // Groups of equal slices in sorted order; each group's first member is its first occurrence.
  std::vector<std::int64_t> first, count, inverse(static_cast<std::size_t>(n));
  const auto group = [&](const auto* v) {
    const auto slice_less = [&](std::int64_t a, std::int64_t b) {
      for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < inner; ++i) {
          const auto va = v[(o * n + a) * inner + i];
          const auto vb = v[(o * n + b) * inner + i];
          if (va != vb) return va < vb;
        }
      return false;
    };
    std::stable_sort(order.begin(), order.end(), slice_less);
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (i == 0 || slice_less(order[i - 1], order[i])) {
        first.push_back(order[i]);
        count.push_back(0);
      }
      ++count.back();
      inverse[static_cast<std::size_t>(order[i])] = static_cast<std::int64_t>(first.size()) - 1;
    }
  };
  detail::with_ordered_values(src, group);
  std::vector<std::size_t> rank_of(first.size());
  std::iota(rank_of.begin(), rank_of.end(), std::size_t{0});
  if (!sorted) {  // in order of first occurrence
    std::vector<std::size_t> by_first(first.size());
    std::iota(by_first.begin(), by_first.end(), std::size_t{0});
    std::sort(by_first.begin(), by_first.end(),
              [&](std::size_t a, std::size_t b) { return first[a] < first[b]; });
    for (std::size_t k = 0; k < by_first.size(); ++k) rank_of[by_first[k]] = k;
    std::vector<std::int64_t> f(first.size()), c(first.size());
    for (std::size_t g = 0; g < first.size(); ++g) {
      f[rank_of[g]] = first[g];
      c[rank_of[g]] = count[g];
    }
    first = f;
    count = c;
    for (auto& i : inverse) i = static_cast<std::int64_t>(rank_of[static_cast<std::size_t>(i)]);
  }
  const auto k = static_cast<std::int64_t>(first.size());
  Shape y_shape = src.shape();
  y_shape[axis] = k;
  UniqueResult r{Tensor(x.dtype(), y_shape), {}, {}, {}};
  const std::size_t es = dtype_size(x.dtype());
  const auto* s = static_cast<const std::byte*>(src.raw_data());
  auto* d = static_cast<std::byte*>(r.y.raw_data());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t j = 0; j < k; ++j)
      std::memcpy(
          d + static_cast<std::size_t>((o * k + j) * inner) * es,
          s + static_cast<std::size_t>((o * n + first[static_cast<std::size_t>(j)]) * inner) * es,
          static_cast<std::size_t>(inner) * es);
  r.indices = Tensor::from_ints(DType::i64, Shape{k}, first);
  r.inverse_indices = Tensor::from_ints(DType::i64, Shape{n}, inverse);
  r.counts = Tensor::from_ints(DType::i64, Shape{k}, count);
  return r;
}

namespace {

struct Box {
  double y1, x1, y2, x2;  // min and max corners
};

Box box_at(const std::vector<double>& boxes, std::size_t base, bool center_point) {
  const double a = boxes[base], b = boxes[base + 1], c = boxes[base + 2], d = boxes[base + 3];
  if (center_point)  // [x_center, y_center, width, height]
    return {b - d / 2.0, a - c / 2.0, b + d / 2.0, a + c / 2.0};
  return {std::min(a, c), std::min(b, d), std::max(a, c), std::max(b, d)};
}

// Whether the two boxes overlap by more than the threshold (ONNX Runtime's SuppressByIOU).
bool suppressed(const Box& p, const Box& q, double iou_threshold) {
  const double ix = std::min(p.x2, q.x2) - std::max(p.x1, q.x1);
  const double iy = std::min(p.y2, q.y2) - std::max(p.y1, q.y1);
  if (ix <= 0.0 || iy <= 0.0) return false;
  const double inter = ix * iy;
  const double area_p = (p.x2 - p.x1) * (p.y2 - p.y1), area_q = (q.x2 - q.x1) * (q.y2 - q.y1);
  const double uni = area_p + area_q - inter;
  if (area_p <= 0.0 || area_q <= 0.0 || uni <= 0.0) return false;
  return inter / uni > iou_threshold;
}

}  // namespace

Tensor non_max_suppression(const Tensor& boxes, const Tensor& scores,
                           std::int64_t max_output_boxes_per_class, float iou_threshold,
                           std::optional<float> score_threshold, bool center_point_box) {
  // ONNX boxes (batch, spatial, 4) and scores (batch, classes, spatial), Tessera fastest first.
  if (boxes.rank() != 3 || boxes.dim(0) != 4)
    throw_user_error("NonMaxSuppression: boxes must be (batches, boxes, 4), got {}",
                     boxes.shape().to_string());
  if (scores.rank() != 3 || scores.dim(2) != boxes.dim(2) || scores.dim(0) != boxes.dim(1))
    throw_user_error(
        "NonMaxSuppression: scores {} must be (batches, classes, boxes) for boxes {} (ONNX order)",
        scores.shape().to_string(), boxes.shape().to_string());
  const std::int64_t batches = boxes.dim(2), spatial = boxes.dim(1), classes = scores.dim(1);
  const std::vector<double> b = boxes.to_doubles(), s = scores.to_doubles();
  std::vector<std::int64_t> selected;
  for (std::int64_t n = 0; n < batches; ++n)
    for (std::int64_t c = 0; c < classes; ++c) {
      const std::size_t score_base = static_cast<std::size_t>((n * classes + c) * spatial);
      std::vector<std::int64_t> candidates;
      for (std::int64_t i = 0; i < spatial; ++i)
        if (!score_threshold || s[score_base + static_cast<std::size_t>(i)] > *score_threshold)
          candidates.push_back(i);
      // Highest score first; equal scores keep the lower box index first.
      std::stable_sort(candidates.begin(), candidates.end(), [&](std::int64_t p, std::int64_t q) {
        return s[score_base + static_cast<std::size_t>(p)] >
               s[score_base + static_cast<std::size_t>(q)];
      });
      std::vector<Box> kept;
      for (std::int64_t i : candidates) {
        if (static_cast<std::int64_t>(kept.size()) >= max_output_boxes_per_class) break;
        const Box box =
            box_at(b, static_cast<std::size_t>((n * spatial + i) * 4), center_point_box);
        if (std::any_of(kept.begin(), kept.end(),
                        [&](const Box& k) { return suppressed(k, box, iou_threshold); }))
          continue;
        kept.push_back(box);
        selected.insert(selected.end(), {n, c, i});
      }
    }
  return Tensor::from_ints(DType::i64, Shape{3, static_cast<std::int64_t>(selected.size()) / 3},
                           selected);
}

}  // namespace tessera::ops
