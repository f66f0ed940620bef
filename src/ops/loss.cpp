// NegativeLogLikelihoodLoss-13 and SoftmaxCrossEntropyLoss-13 (the forward loss; inference
// computes it as ONNX Runtime does). Input (N, C, d1..dk) is Tessera {dk..d1, C, N}; the
// target (N, d1..dk) is {dk..d1, N}. Sums run in f64 and round once.
#include <cmath>

#include "common.h"
#include "tessera/ops/reference.h"

namespace tessera::ops {

LossReduction parse_loss_reduction(std::string_view name) {
  if (name == "none") return LossReduction::none;
  if (name == "sum") return LossReduction::sum;
  if (name == "mean") return LossReduction::mean;
  throw_user_error("reduction '{}' is not one of none, sum, mean", name);
}

Tensor negative_log_likelihood_loss(const Tensor& input, const Tensor& target, const Tensor* weight,
                                    LossReduction reduction,
                                    std::optional<std::int64_t> ignore_index) {
  const std::string_view op = "NegativeLogLikelihoodLoss";
  detail::require_float(op, input);
  const int r = input.rank();
  if (r < 2)
    throw_user_error("{}: input must have rank >= 2 (N, C, d1..dk), got {}", op,
                     input.shape().to_string());
  if (is_floating(target.dtype()) || target.dtype() == DType::boolean)
    throw_user_error("{}: target must be integers, got {}", op, dtype_name(target.dtype()));
  const std::int64_t n_count = input.dim(r - 1), classes = input.dim(r - 2);
  const std::int64_t inner = detail::dims_product(input.shape(), 0, r - 2);
  std::vector<std::int64_t> target_dims;
  for (int d = 0; d < r - 2; ++d) target_dims.push_back(input.dim(d));
  target_dims.push_back(n_count);
  const Shape target_shape = Shape::from_fastest_first(target_dims);
  if (!(target.shape() == target_shape))
    throw_user_error("{}: target {} must have shape {} (input {} without C, Tessera order)", op,
                     target.shape().to_string(), target_shape.to_string(),
                     input.shape().to_string());
  std::vector<double> w;
  if (weight) {
    if (weight->rank() != 1 || weight->dim(0) != classes)
      throw_user_error("{}: weight {} must be 1-D with C = {} entries", op,
                       weight->shape().to_string(), classes);
    w = weight->to_doubles();
  }
  const std::vector<double> x = input.to_doubles();
  const std::vector<std::int64_t> t = target.to_ints();
  std::vector<double> loss(t.size(), 0.0);
  double loss_sum = 0.0, weight_sum = 0.0;
  for (std::int64_t n = 0; n < n_count; ++n)
    for (std::int64_t i = 0; i < inner; ++i) {
      const auto at = static_cast<std::size_t>(n * inner + i);
      const std::int64_t c = t[at];
      if (ignore_index && c == *ignore_index) continue;
      if (c < 0 || c >= classes)
        throw_user_error("{}: target element {} is {}; classes are 0 to {}{}", op, at, c,
                         classes - 1,
                         ignore_index ? fmt::format(" (ignore_index is {})", *ignore_index) : "");
      const double wc = weight ? w[static_cast<std::size_t>(c)] : 1.0;
      loss[at] = -x[static_cast<std::size_t>((n * classes + c) * inner + i)] * wc;
      loss_sum += loss[at];
      weight_sum += wc;
    }
  switch (reduction) {
    case LossReduction::none:
      return Tensor::from_doubles(input.dtype(), target_shape, loss);
    case LossReduction::sum:
      return Tensor::from_doubles(input.dtype(), Shape{}, {loss_sum});
    case LossReduction::mean:
      break;
  }
  return Tensor::from_doubles(input.dtype(), Shape{}, {loss_sum / weight_sum});
}

SoftmaxCrossEntropyResult softmax_cross_entropy_loss(const Tensor& scores, const Tensor& labels,
                                                     const Tensor* weights, LossReduction reduction,
                                                     std::optional<std::int64_t> ignore_index) {
  detail::require_float("SoftmaxCrossEntropyLoss", scores);
  if (scores.rank() < 2)
    throw_user_error("SoftmaxCrossEntropyLoss: scores must have rank >= 2 (N, C, d1..dk), got {}",
                     scores.shape().to_string());
  SoftmaxCrossEntropyResult r;
  r.log_prob = log_softmax(scores, scores.rank() - 2);
  r.loss = negative_log_likelihood_loss(r.log_prob, labels, weights, reduction, ignore_index);
  return r;
}

}  // namespace tessera::ops
