// Reference implementations of the ONNX operators Tessera supports: the oracle every target's
// tests compare against and the `reference` CPU backend of the compiler. Semantics follow the
// ONNX operator documentation (onnx/onnx docs/Operators.md); deviations are noted per op.
//
// Conventions (see docs/ops.md):
// - Every op is a free function `Tensor ops::name(inputs..., attributes)`; optional tensor inputs
//   are `const Tensor*` (nullptr = absent); attributes come in small structs or scalars.
// - Shapes are Tessera shapes: dimension 0 is the FASTEST-changing one. AXIS arguments use that
//   numbering: ONNX axis a of a rank-r tensor is Tessera axis r-1-a (normalise negative ONNX axes
//   first). Negative Tessera axes count from the rank (axis -1 is r-1, the OUTERMOST dimension).
// - Activations for Conv/Pool/normalisations are ONNX NCHW, i.e. Tessera dims {W, H, C, N}
//   (Shape::nchw); 1-D and 3-D variants are {W, C, N} and {W, H, D, C, N}. Conv weights are ONNX
//   (M, C/group, kH, kW), i.e. Tessera {kW, kH, C/group, M}.
// - Spatial attribute lists (kernel_shape, strides, dilations, pads, output_padding) keep ONNX
//   ORDER, outermost spatial axis first ({H, W} for 2-D; pads {H_begin, W_begin, H_end, W_end}),
//   so an importer copies them verbatim. An empty list means the ONNX default.
// - Shape and index DATA that ONNX types int64 (Shape, Size, ArgMax/ArgMin, TopK's indices,
//   NonZero, Unique, MaxPool's Indices, NonMaxSuppression) is i64; index inputs (Gather...) take
//   any integer dtype. Shape's output lists dims outermost first as ONNX does.
// - Floats compute in f32; f16/bf16 inputs are widened to f32 and the result rounded back (RNE).
//   f64 computes in f64 (the ops that still go through f32 are listed in docs/ops.md). Scalar
//   operands (Clip's bounds, Pad's value, Range's inputs) are `Scalar`s, so 64-bit integers
//   stay exact.
//   Integer dtypes are accepted where ONNX accepts them; bool results for compares and Where.
// - Bad input (shape mismatch, bad axis/perm, wrong dtype) raises UserError naming the op, the
//   shapes/values involved and what is expected.
// - Results are bitwise the same for any TESSERA_THREADS (GEMMs via ops/gemm.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tessera/core/tensor.h"

namespace tessera::ops {

class HostConvWeights;  // tessera/ops/host_conv.h

// A scalar operand held exactly: integers as 64-bit integers, floats as double, so an int64
// bound or fill value beyond 2^53 does not round on its way to the op.
class Scalar {
 public:
  Scalar() = default;
  template <typename T>
    requires std::is_arithmetic_v<T>
  Scalar(T value) {  // NOLINT(google-explicit-constructor): scalars read as numbers
    if constexpr (std::is_floating_point_v<T>) {
      kind_ = Kind::floating;
      f_ = static_cast<double>(value);
    } else if constexpr (std::is_signed_v<T>) {
      kind_ = Kind::signed_int;
      i_ = value;
    } else {
      kind_ = Kind::unsigned_int;
      u_ = value;
    }
  }
  // Element `index` of t, exactly (f16/bf16 widen to double, bool is 0 or 1).
  static Scalar of(const Tensor& t, std::int64_t index = 0);

  // The value converted as Tensor::astype converts an element (RNE, saturating, NaN -> 0).
  template <typename T>
  T as() const {
    switch (kind_) {
      case Kind::signed_int:
        return convert_value<T>(i_);
      case Kind::unsigned_int:
        return convert_value<T>(u_);
      case Kind::floating:
        break;
    }
    return convert_value<T>(f_);
  }
  bool negative() const {
    return kind_ == Kind::floating ? f_ < 0.0 : kind_ == Kind::signed_int && i_ < 0;
  }
  // A rank-0 tensor of `dtype` holding the value.
  Tensor to_tensor(DType dtype) const;
  std::string to_string() const;

 private:
  enum class Kind : std::uint8_t { floating, signed_int, unsigned_int };
  Kind kind_ = Kind::floating;
  double f_ = 0.0;
  std::int64_t i_ = 0;
  std::uint64_t u_ = 0;
};

// ---- Elementwise binary, NumPy (multidirectional) broadcasting; inputs of one dtype ----
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
// Integer division truncates toward zero; division by zero of integers is a UserError.
Tensor div(const Tensor& a, const Tensor& b);
// Exponent may have a different dtype than the base; the result has the base's dtype.
Tensor pow(const Tensor& a, const Tensor& b);
// a = Add/Sub/Mul/Div(a, b) (op names as ONNX's) computed in a's own storage, with add's,
// sub's, mul's or div's bits, when both are f32 and a keeps its shape under broadcasting;
// otherwise false, a untouched.
bool arithmetic_in_place(std::string_view op, Tensor& a, const Tensor& b);

// ---- Elementwise unary ----
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor leaky_relu(const Tensor& x, float alpha = 0.01f);
Tensor elu(const Tensor& x, float alpha = 1.0f);
Tensor selu(const Tensor& x, float alpha = 1.67326319217681884765625f,
            float gamma = 1.05070102214813232421875f);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor softplus(const Tensor& x);
// Bounds absent mean unbounded; min > max gives max everywhere (as ONNX).
Tensor clip(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max);
Tensor erf(const Tensor& x);
enum class GeluApproximation { none, tanh };
Tensor gelu(const Tensor& x, GeluApproximation approximate = GeluApproximation::none);

// ---- Linear algebra (OpenBLAS sgemm; floats only) ----
// NumPy matmul: 1-D operands are promoted and the added dimension removed; batch dimensions
// (Tessera dims 2..) broadcast. In Tessera dims a matrix (M, K) is {K, M}.
Tensor matmul(const Tensor& a, const Tensor& b);
struct GemmParams {
  float alpha = 1.0f;
  float beta = 1.0f;
  bool trans_a = false;
  bool trans_b = false;
};
// Y = alpha * A' * B' + beta * C with A, B 2-D; C (optional) unidirectionally broadcast to Y.
Tensor gemm(const Tensor& a, const Tensor& b, const Tensor* c, const GemmParams& params = {});

// ---- Convolution and pooling (1-3 spatial dims) ----
struct ConvParams {
  std::vector<std::int64_t> kernel_shape;  // optional; checked against the weights when given
  std::vector<std::int64_t> strides;
  std::vector<std::int64_t> pads;  // begins then ends, ONNX order; auto_pad resolved by caller
  std::vector<std::int64_t> dilations;
  std::int64_t group = 1;
  // Where the caller keeps oneDNN's reordered weights between calls with the same weights (a
  // plan's constant); null reorders them on every call.
  HostConvWeights* kept_weights = nullptr;
};
// x: {W, H, C, N}; w: {kW, kH, C/group, M}; bias: {M}. Output {W_out, H_out, M, N}.
Tensor conv(const Tensor& x, const Tensor& w, const Tensor* bias, const ConvParams& params = {});

struct ConvTransposeParams {
  std::vector<std::int64_t> kernel_shape;
  std::vector<std::int64_t> strides;
  std::vector<std::int64_t> pads;
  std::vector<std::int64_t> dilations;
  std::vector<std::int64_t> output_padding;
  std::int64_t group = 1;
};
// x: {W, H, C, N}; w: ONNX (C, M/group, kH, kW) = Tessera {kW, kH, M/group, C}. An ONNX
// output_shape is turned into pads by the caller (auto_pad likewise).
Tensor conv_transpose(const Tensor& x, const Tensor& w, const Tensor* bias,
                      const ConvTransposeParams& params = {});

struct PoolParams {
  std::vector<std::int64_t> kernel_shape;  // required
  std::vector<std::int64_t> strides;
  std::vector<std::int64_t> pads;
  std::vector<std::int64_t> dilations;
  bool ceil_mode = false;
  bool count_include_pad = false;  // AveragePool only
};
Tensor max_pool(const Tensor& x, const PoolParams& params);
// MaxPool with ONNX's second output: i64 flat indices into x (N, C, spatial... row-major, or
// with the spatial dims reversed when column_major, ONNX storage_order=1); padding is never
// selected. A window holding only padding gives -inf and index -1.
struct MaxPoolResult {
  Tensor values;
  Tensor indices;
};
MaxPoolResult max_pool_with_indices(const Tensor& x, const PoolParams& params,
                                    bool column_major = false);
Tensor average_pool(const Tensor& x, const PoolParams& params);
Tensor global_average_pool(const Tensor& x);
Tensor global_max_pool(const Tensor& x);

// ---- Normalisation ----
// Inference form: (x - mean) / sqrt(var + eps) * scale + bias, per channel (Tessera dim r-2).
Tensor batch_normalization(const Tensor& x, const Tensor& scale, const Tensor& bias,
                           const Tensor& mean, const Tensor& var, float epsilon = 1e-5f);
// Normalises over Tessera dims 0..axis (ONNX axes [a, r) with axis = r-1-a; ONNX default a=-1
// is Tessera axis 0). scale (and bias) broadcast over those dims.
// `stats`, when given, receives ONNX's optional Mean and InvStdDev outputs: f32, shaped like x
// with dims 0..axis set to 1, holding each row's mean and 1 / sqrt(variance + epsilon).
struct LayerNormStats {
  Tensor mean;
  Tensor inv_std_dev;
};
Tensor layer_normalization(const Tensor& x, const Tensor& scale, const Tensor* bias, int axis = 0,
                           float epsilon = 1e-5f, LayerNormStats* stats = nullptr);
// Per instance and channel over the spatial dims; scale and bias have C elements.
Tensor instance_normalization(const Tensor& x, const Tensor& scale, const Tensor& bias,
                              float epsilon = 1e-5f);
// Along one axis (ONNX opset >= 13 semantics; ONNX default -1 is Tessera axis 0).
Tensor softmax(const Tensor& x, int axis = 0);
Tensor log_softmax(const Tensor& x, int axis = 0);

// ---- Shape manipulation ----
Tensor reshape(const Tensor& x, const Shape& shape);
// ONNX Reshape: `dims` outermost first as in the ONNX shape input; 0 copies the input dim
// (unless allowzero) and one -1 is inferred.
Shape resolve_reshape(const Shape& input, const std::vector<std::int64_t>& dims_outer_first,
                      bool allowzero = false);
// Flatten to 2-D {prod(dims 0..axis-1), prod(dims axis..r-1)}; axis in [0, r]. This axis names a
// boundary, not a dimension: ONNX axis a becomes r - a.
Tensor flatten(const Tensor& x, int axis);
// Output dim j is input dim perm[j]; empty perm reverses. ONNX perm p becomes
// perm[j] = r-1-p[r-1-j].
Tensor transpose(const Tensor& x, const std::vector<int>& perm = {});
Tensor concat(const std::vector<Tensor>& inputs, int axis);
// The same from tensors held elsewhere (none copied).
Tensor concat(const std::vector<const Tensor*>& inputs, int axis);
// Pieces of the given sizes along axis (they must sum to the dim).
std::vector<Tensor> split(const Tensor& x, int axis, const std::vector<std::int64_t>& sizes);
// ONNX's default split into `parts` pieces: ceil(dim/parts) each, the last one smaller.
std::vector<std::int64_t> split_sizes(std::int64_t dim, std::int64_t parts);

struct SliceParams {
  std::vector<std::int64_t> starts;
  std::vector<std::int64_t> ends;
  std::vector<int> axes;            // Tessera axes; empty means 0..starts.size()-1
  std::vector<std::int64_t> steps;  // empty means all 1; negative steps walk backwards
};
// Starts/ends clamp as in ONNX (negative counts from the end; INT64_MAX/MIN mean "to the end").
Tensor slice(const Tensor& x, const SliceParams& params);
// Removes the listed size-1 axes, or every size-1 axis when `axes` is empty.
Tensor squeeze(const Tensor& x, const std::vector<int>& axes = {});
// Inserts size-1 dims; axes name positions in the OUTPUT (Tessera numbering of the output rank).
Tensor unsqueeze(const Tensor& x, const std::vector<int>& axes);
// Output Tessera dims: data dims [0, axis) + indices dims + data dims (axis, r); indices are any
// integer dtype, negative ones count from the end; out of range is a UserError.
Tensor gather(const Tensor& data, const Tensor& indices, int axis = 0);

enum class PadMode { constant, reflect, edge };
struct PadParams {
  std::vector<std::int64_t> pads;  // 2 * rank: begins for dims 0..r-1, then ends (Tessera order)
  PadMode mode = PadMode::constant;
  Scalar value = 0.0;  // constant mode
};
// Negative pads crop. Reflect pads wider than the dim reflect repeatedly (NumPy 'reflect').
Tensor pad(const Tensor& x, const PadParams& params);
// ONNX Cast: floats to integers truncate toward zero then saturate (NaN -> 0); the rest as
// Tensor::astype.
Tensor cast(const Tensor& x, DType to);
Tensor identity(const Tensor& x);
// Unidirectional-to-bidirectional broadcast of x with `shape` (ONNX Expand).
Tensor expand(const Tensor& x, const Shape& shape);
// i64 1-D tensor of x's dims listed OUTERMOST FIRST (ONNX order), optionally sliced
// [start, end) over that list as ONNX Shape-15 does.
Tensor shape(const Tensor& x, std::int64_t start = 0,
             std::optional<std::int64_t> end = std::nullopt);

// ---- Reductions ----
struct ReduceParams {
  std::vector<int> axes;  // Tessera axes; empty = all (or none when noop_with_empty_axes)
  bool keepdims = true;
  bool noop_with_empty_axes = false;
};
Tensor reduce_sum(const Tensor& x, const ReduceParams& params = {});
Tensor reduce_mean(const Tensor& x, const ReduceParams& params = {});
Tensor reduce_max(const Tensor& x, const ReduceParams& params = {});
Tensor reduce_min(const Tensor& x, const ReduceParams& params = {});
Tensor reduce_prod(const Tensor& x, const ReduceParams& params = {});
// i64 indices along `axis`; ties pick the first (or last with select_last_index).
Tensor argmax(const Tensor& x, int axis = 0, bool keepdims = true, bool select_last_index = false);
Tensor argmin(const Tensor& x, int axis = 0, bool keepdims = true, bool select_last_index = false);

// ---- Compare and select (bool results) ----
Tensor equal(const Tensor& a, const Tensor& b);
Tensor less(const Tensor& a, const Tensor& b);
Tensor greater(const Tensor& a, const Tensor& b);
// Three-way broadcast of a bool condition with x and y (same dtype).
Tensor where(const Tensor& condition, const Tensor& x, const Tensor& y);

// ---- Variadic elementwise with broadcasting (ONNX Sum, Max, Min); at least one input ----
Tensor sum(const std::vector<Tensor>& inputs);
Tensor max(const std::vector<Tensor>& inputs);
Tensor min(const std::vector<Tensor>& inputs);

// ---- Further ONNX ops beyond the core list ----
// PRelu: slope broadcasts unidirectionally to x.
Tensor prelu(const Tensor& x, const Tensor& slope);
Tensor hard_sigmoid(const Tensor& x, float alpha = 0.2f, float beta = 0.5f);
Tensor hard_swish(const Tensor& x);
// Floor, Ceil and Round (halves to even) leave integer inputs unchanged.
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);
Tensor sign(const Tensor& x);
// Bool inputs, bool results (ONNX Not, And, Or, Xor).
Tensor logical_not(const Tensor& x);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor less_or_equal(const Tensor& a, const Tensor& b);
Tensor greater_or_equal(const Tensor& a, const Tensor& b);
// ONNX Mod: integers take the divisor's sign unless fmod (then the dividend's, as C); floats
// need fmod = true.
Tensor mod(const Tensor& a, const Tensor& b, bool fmod = false);
// Repeats per Tessera dim.
Tensor tile(const Tensor& x, const std::vector<std::int64_t>& repeats);
// 1-D [start, limit) by delta in `dtype` (ONNX Range takes the dtype of its scalar inputs).
// Integer dtypes count exactly in 64 bits.
Tensor range(const Scalar& start, const Scalar& limit, const Scalar& delta, DType dtype);
// The k largest (or smallest) along axis, sorted, ties by lower index; indices are i64.
struct TopKResult {
  Tensor values;
  Tensor indices;
};
TopKResult top_k(const Tensor& x, std::int64_t k, int axis = 0, bool largest = true,
                 bool sorted = true);
Tensor cum_sum(const Tensor& x, int axis, bool exclusive = false, bool reverse = false);
// NCHW only. DepthToSpace DCR mode by default, CRD with crd_mode.
Tensor depth_to_space(const Tensor& x, std::int64_t blocksize, bool crd_mode = false);
Tensor space_to_depth(const Tensor& x, std::int64_t blocksize);

// ---- Trigonometric, hyperbolic and further elementwise ops (floats unless noted) ----
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor asin(const Tensor& x);
Tensor acos(const Tensor& x);
Tensor atan(const Tensor& x);
Tensor sinh(const Tensor& x);
Tensor cosh(const Tensor& x);
Tensor asinh(const Tensor& x);
Tensor acosh(const Tensor& x);
Tensor atanh(const Tensor& x);
Tensor softsign(const Tensor& x);
// max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); alpha must be nonzero.
Tensor celu(const Tensor& x, float alpha = 1.0f);
// x where x > alpha, else 0.
Tensor thresholded_relu(const Tensor& x, float alpha = 1.0f);
// x + bias where x < -lambd, x - bias where x > lambd, else 0; floats and integers.
Tensor shrink(const Tensor& x, float lambd = 0.5f, float bias = 0.0f);
// Bool results.
Tensor is_inf(const Tensor& x, bool detect_negative = true, bool detect_positive = true);
Tensor is_nan(const Tensor& x);
// Unsigned integers of one dtype, broadcasting; shifts of the bit width or more give 0.
Tensor bit_shift(const Tensor& x, const Tensor& y, bool left);
// Elementwise mean of one or more float inputs with broadcasting (ONNX Mean).
Tensor mean(const std::vector<Tensor>& inputs);

// ---- Further reductions (ONNX ReduceL1/L2/LogSum/LogSumExp/SumSquare-18) ----
Tensor reduce_l1(const Tensor& x, const ReduceParams& params = {});
Tensor reduce_l2(const Tensor& x, const ReduceParams& params = {});
Tensor reduce_log_sum(const Tensor& x, const ReduceParams& params = {});
Tensor reduce_log_sum_exp(const Tensor& x, const ReduceParams& params = {});
Tensor reduce_sum_square(const Tensor& x, const ReduceParams& params = {});
// 1 at the first maximum along `axis`, 0 elsewhere (ONNX Hardmax-13), same dtype as x.
Tensor hardmax(const Tensor& x, int axis);

// ---- Indexing (ONNX GatherElements/ScatterElements-18, GatherND/ScatterND-18, OneHot-11,
// EyeLike-9, Trilu-14, Compress-11, ReverseSequence-10) ----
// out[i] = data[i with dim `axis` replaced by indices[i]]; indices any integer dtype, negative
// ones count from the end, out of range is a UserError.
Tensor gather_elements(const Tensor& data, const Tensor& indices, int axis);
enum class ScatterReduction { none, add, mul, max, min };
ScatterReduction parse_scatter_reduction(std::string_view name);
// A copy of data with data[i with dim `axis` replaced by indices[i]] = updates[i].
Tensor scatter_elements(const Tensor& data, const Tensor& indices, const Tensor& updates, int axis,
                        ScatterReduction reduction = ScatterReduction::none);
// The index tuples are indices' dim 0 (ONNX's last axis) and address data's OUTERMOST dims,
// listed outermost first, after the batch_dims outermost dims shared by data and indices.
Tensor gather_nd(const Tensor& data, const Tensor& indices, std::int64_t batch_dims = 0);
Tensor scatter_nd(const Tensor& data, const Tensor& indices, const Tensor& updates,
                  ScatterReduction reduction = ScatterReduction::none);
// values = {off, on} (any dtype, the result's); the new dim of size depth is inserted at
// Tessera position `axis` of the output (rank r+1). Negative indices count from depth;
// indices outside [-depth, depth) give an all-off row.
Tensor one_hot(const Tensor& indices, std::int64_t depth, const Tensor& values, int axis);
// 2-D: ones where (row, column) = (i, i + k), i.e. Tessera (dim1, dim0) = (i, i + k).
Tensor eye_like(const Shape& shape, DType dtype, std::int64_t k = 0);
// Keeps the upper (or lower) triangle of the two fastest dims (ONNX's last two axes):
// element (row i, column j) is kept when j - i >= k (upper) or j - i <= k (lower).
Tensor trilu(const Tensor& x, std::int64_t k = 0, bool upper = true);
// Slices of x along `axis` whose condition entry is true (condition may be shorter); with no
// axis, x is flattened first.
Tensor compress(const Tensor& x, const Tensor& condition, std::optional<int> axis);
// Reverses the first lengths[b] elements along time_axis for each b along batch_axis.
Tensor reverse_sequence(const Tensor& x, const Tensor& lengths, int time_axis, int batch_axis);

// ---- Ops whose output shape depends on the data (NonZero-13, Unique-11, NonMaxSuppression-11) ----
// ONNX (rank, nnz): the coordinates of the nonzero elements in row-major order, i64.
Tensor non_zero(const Tensor& x);
// The distinct elements (no axis: of x flattened) or slices along Tessera `axis`, ascending when
// `sorted` (slices compared in ONNX row-major order), else in order of first occurrence; with the
// first occurrence of each, each input's position in y, and the counts (all i64).
struct UniqueResult {
  Tensor y;
  Tensor indices;
  Tensor inverse_indices;
  Tensor counts;
};
UniqueResult unique(const Tensor& x, std::optional<int> axis, bool sorted = true);
// ONNX (selected, 3) rows of (batch, class, box), i64, per batch and class in descending score.
Tensor non_max_suppression(const Tensor& boxes, const Tensor& scores,
                           std::int64_t max_output_boxes_per_class, float iou_threshold,
                           std::optional<float> score_threshold, bool center_point_box);

// MeanVarianceNormalization-13 over Tessera `axes` (ONNX default [0, 2, 3] of NCHW is Tessera
// {3, 1, 0}): (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9), as ONNX's function body.
Tensor mean_variance_normalization(const Tensor& x, const std::vector<int>& axes);

// ---- Further ops: LRN-13, Einsum-12, Det-11, the window functions-17 ----
// Over channels (Tessera dim r-2 of an N, C, ... tensor): x / (bias + alpha / size *
// sum of squares over the size-window)^beta.
Tensor lrn(const Tensor& x, std::int64_t size, float alpha = 1e-4f, float beta = 0.75f,
           float bias = 1.0f);
// NumPy einsum for explicit or implicit equations over letters, with ellipsis ("...");
// operands are given in ONNX order and equations index ONNX axes.
Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands);
// Determinant of the square matrices in the two fastest dims (LU with partial pivoting in f64).
Tensor det(const Tensor& x);
// MaxUnpool: an output of `output_shape` (Tessera order) holding zeros and x's values at the
// flat positions (over the whole N*C*spatial output) that `indices` gives.
Tensor max_unpool(const Tensor& x, const Tensor& indices, const Shape& output_shape);
// ---- Losses (NegativeLogLikelihoodLoss-13, SoftmaxCrossEntropyLoss-13) ----
enum class LossReduction { none, sum, mean };
LossReduction parse_loss_reduction(std::string_view name);
// input (N, C, d1..dk) = Tessera {dk..d1, C, N}; target (N, d1..dk) = {dk..d1, N}, integers;
// weight: C per-class weights. Targets equal to ignore_index contribute 0 and no weight; mean
// divides by the sum of the weights of the others.
Tensor negative_log_likelihood_loss(const Tensor& input, const Tensor& target,
                                    const Tensor* weight = nullptr,
                                    LossReduction reduction = LossReduction::mean,
                                    std::optional<std::int64_t> ignore_index = std::nullopt);
struct SoftmaxCrossEntropyResult {
  Tensor loss;
  Tensor log_prob;  // log_softmax of the scores over C
};
SoftmaxCrossEntropyResult softmax_cross_entropy_loss(
    const Tensor& scores, const Tensor& labels, const Tensor* weights = nullptr,
    LossReduction reduction = LossReduction::mean,
    std::optional<std::int64_t> ignore_index = std::nullopt);

// ---- Recurrent ops (RNN-14, GRU-14, LSTM-14); tensors as ONNX defines them (Tessera order
// reversed): X (seq, batch, input) or, batch_first (layout 1), (batch, seq, input) ----
enum class RnnCell { rnn, gru, lstm };
enum class RnnDirection { forward, reverse, bidirectional };
struct RnnParams {
  RnnCell cell = RnnCell::rnn;
  std::int64_t hidden_size = 0;
  RnnDirection direction = RnnDirection::forward;
  std::vector<std::string> activations;  // empty: the cell's defaults for each direction
  std::vector<float> activation_alpha, activation_beta;  // consumed in order by the functions
  std::optional<float> clip;
  bool batch_first = false;          // ONNX layout = 1
  bool input_forget = false;         // LSTM
  bool linear_before_reset = false;  // GRU
};
struct RnnResult {
  Tensor y;    // (seq, dirs, batch, hidden); zeros past a sequence's length
  Tensor y_h;  // (dirs, batch, hidden)
  Tensor y_c;  // LSTM only
};
RnnResult recurrent(const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
                    const Tensor* sequence_lens, const Tensor* initial_h, const Tensor* initial_c,
                    const Tensor* p, const RnnParams& params);

// ---- Quantized ops (QuantizeLinear/DequantizeLinear-13, DynamicQuantizeLinear-11,
// MatMulInteger/QLinearMatMul/ConvInteger/QLinearConv-10); layouts as matmul and conv ----
// y = saturate(round_half_even(x / scale) + zero_point), int8 or uint8 (the zero point's dtype,
// uint8 without one). A 1-D scale (and zero point) applies per slice along Tessera `axis`.
Tensor quantize_linear(const Tensor& x, const Tensor& scale, const Tensor* zero_point = nullptr,
                       int axis = 0);
// (x - zero_point) * scale, in the scale's float dtype.
Tensor dequantize_linear(const Tensor& x, const Tensor& scale, const Tensor* zero_point = nullptr,
                         int axis = 0);
struct DynamicQuantizeResult {
  Tensor y;  // uint8
  Tensor y_scale;
  Tensor y_zero_point;
};
DynamicQuantizeResult dynamic_quantize_linear(const Tensor& x);
// i32 (A - a_zp) @ (B - b_zp); a_zp per row of A or scalar, b_zp per column of B or scalar.
Tensor matmul_integer(const Tensor& a, const Tensor& b, const Tensor* a_zero_point = nullptr,
                      const Tensor* b_zero_point = nullptr);
Tensor qlinear_matmul(const Tensor& a, const Tensor& a_scale, const Tensor& a_zero_point,
                      const Tensor& b, const Tensor& b_scale, const Tensor& b_zero_point,
                      const Tensor& y_scale, const Tensor& y_zero_point);
// i32 conv of (x - x_zp) with (w - w_zp), w_zp scalar or per output channel; padding is x_zp.
Tensor conv_integer(const Tensor& x, const Tensor& w, const Tensor* x_zero_point,
                    const Tensor* w_zero_point, const ConvParams& params = {});
Tensor qlinear_conv(const Tensor& x, const Tensor& x_scale, const Tensor& x_zero_point,
                    const Tensor& w, const Tensor& w_scale, const Tensor& w_zero_point,
                    const Tensor& y_scale, const Tensor& y_zero_point, const Tensor* bias,
                    const ConvParams& params = {});

// ---- Fixed-point requantisation of the compiler's int8 path (compiler/quantize.h), the
// BM1880 scheme: 32-bit accumulation, a per-layer right shift, saturation (spec 002,
// "Computation API") ----
// v / 2^rshift rounded to nearest, halves upwards: (v + 2^(rshift-1)) >> rshift, an arithmetic
// shift. Spec 002 names the shift but not its rounding; Tessera fixes this one (docs/compiler.md).
std::int64_t rshift_round(std::int64_t v, int rshift);
struct RshiftParams {
  int rshift = 0;               // 0..31
  std::int64_t multiplier = 1;  // applied before the shift (pooling, element-wise ops)
  bool relu = false;            // after the bias, before the shift (spec 002 "bmk1880 tpu conv")
  std::int64_t lo = -128;       // saturation bounds of the result
  std::int64_t hi = 127;
};
// y = clamp(rshift_round(act(acc + bias[c]) * multiplier, rshift), lo, hi) as i8, where c is
// the index along Tessera axis `bias_axis` of acc (an integer tensor); bias (any integer dtype,
// one value per channel) may be null.
Tensor requantize_rshift(const Tensor& acc, const Tensor* bias, int bias_axis,
                         const RshiftParams& params);
// sum_i inputs[i] * multipliers[i] elementwise over equally shaped integer tensors, exact, as
// i32: the accumulator of an int8 element-wise add (UserError when shapes or counts differ).
Tensor weighted_sum_integer(const std::vector<const Tensor*>& inputs,
                            const std::vector<std::int64_t>& multipliers);
// Exact i32 sums of each pooling window of an 8-bit N-C-spatial tensor (padding adds zeros;
// ceil_mode is refused): the numerator of an integer average pool.
Tensor sum_pool_integer(const Tensor& x, const PoolParams& params);

// DFT-17 along Tessera `axis` of x, whose dim 0 (ONNX's last) is 1 (real) or 2 (complex); the
// result has 2 components. dft_length pads with zeros or truncates; onesided keeps n/2 + 1 bins;
// inverse uses e^{+i} and divides by n.
Tensor dft(const Tensor& x, int axis, std::optional<std::int64_t> dft_length = std::nullopt,
           bool inverse = false, bool onesided = false);
// STFT-17: signal (batch, length, 1 or 2) = Tessera {comps, length, batch}; frames of
// frame_length (the window's length when absent) every frame_step, times the window, then DFT.
// Result (batch, frames, bins, 2).
Tensor stft(const Tensor& signal, std::int64_t frame_step, const Tensor* window = nullptr,
            std::optional<std::int64_t> frame_length = std::nullopt, bool onesided = true);

// TfIdfVectorizer-9 over integer n-gram pools: counts of the pool's n-grams (with up to
// max_skip_count gaps; unigrams once) in each row of x ([C] or [N, C], ONNX order), as TF,
// IDF (weight where present) or TFIDF (count * weight). f32 result [width] or [N, width].
enum class TfIdfMode { tf, idf, tfidf };
TfIdfMode parse_tf_idf_mode(std::string_view name);
struct TfIdfParams {
  std::int64_t min_gram_length = 1, max_gram_length = 1, max_skip_count = 0;
  TfIdfMode mode = TfIdfMode::tf;
  std::vector<std::int64_t> ngram_counts, ngram_indexes, pool;
  std::vector<float> weights;  // empty: all 1
};
Tensor tf_idf_vectorizer(const Tensor& x, const TfIdfParams& params);

enum class WindowKind { hann, hamming, blackman };
// size samples; periodic (default) divides by size, symmetric by size - 1.
Tensor window(WindowKind kind, std::int64_t size, bool periodic, DType dtype);
// MelWeightMatrix-17: (dft_length / 2 + 1) x num_mel_bins triangular filters (ONNX order),
// peaks of 1, on the mel scale 2595 * log10(1 + f / 700).
Tensor mel_weight_matrix(std::int64_t num_mel_bins, std::int64_t dft_length,
                         std::int64_t sample_rate, double lower_edge_hertz,
                         double upper_edge_hertz, DType dtype);

// ---- Resize (ONNX Resize-13..19 without antialias) ----
enum class ResizeMode { nearest, linear, cubic };
enum class CoordinateTransform {
  half_pixel,
  half_pixel_symmetric,
  pytorch_half_pixel,
  align_corners,
  asymmetric,
  tf_crop_and_resize,
  tf_half_pixel_for_nn,  // Resize-11/12: (x + 0.5) / scale
};
enum class NearestMode { round_prefer_floor, round_prefer_ceil, floor, ceil };
struct ResizeParams {
  ResizeMode mode = ResizeMode::nearest;
  CoordinateTransform coordinate_transformation_mode = CoordinateTransform::half_pixel;
  NearestMode nearest_mode = NearestMode::round_prefer_floor;
  // Exactly one of scales / sizes, one entry per Tessera dim (dims that keep their size have
  // scale 1). With sizes, the scale of each dim is size_out / size_in.
  std::vector<float> scales;
  std::vector<std::int64_t> sizes;
  float cubic_coeff_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation_value = 0.0f;  // tf_crop_and_resize only
  std::vector<float> roi;            // tf_crop_and_resize: starts for dims 0..r-1, then ends
};
Tensor resize(const Tensor& x, const ResizeParams& params);

// GridSample-16, 2-D: X (N, C, H, W) = Tessera {W, H, C, N}, grid (N, H_out, W_out, 2) =
// {2, W_out, H_out, N} holding (x, y) in [-1, 1]. Semantics of PyTorch's grid_sample (which
// generated ONNX's node tests): bicubic pads each tap; nearest rounds half to even.
enum class GridSampleMode { bilinear, nearest, bicubic };
enum class GridSamplePadding { zeros, border, reflection };
Tensor grid_sample(const Tensor& x, const Tensor& grid,
                   GridSampleMode mode = GridSampleMode::bilinear,
                   GridSamplePadding padding = GridSamplePadding::zeros,
                   bool align_corners = false);

// RoiAlign-16 as ONNX Runtime computes it: X (N, C, H, W), rois (num_rois, 4) as
// [x1, y1, x2, y2] (Tessera {4, num_rois}), batch_indices (num_rois). Output
// (num_rois, C, output_height, output_width).
struct RoiAlignParams {
  bool half_pixel = true;  // coordinate_transformation_mode half_pixel (else output_half_pixel)
  bool max_mode = false;   // mode "max" (else "avg")
  std::int64_t output_height = 1, output_width = 1, sampling_ratio = 0;
  double spatial_scale = 1.0;
};
Tensor roi_align(const Tensor& x, const Tensor& rois, const Tensor& batch_indices,
                 const RoiAlignParams& params);

// Parses ONNX attribute spellings ("half_pixel", "round_prefer_floor", "linear", ...);
// UserError listing the accepted names otherwise.
ResizeMode parse_resize_mode(std::string_view name);
CoordinateTransform parse_coordinate_transform(std::string_view name);
NearestMode parse_nearest_mode(std::string_view name);
PadMode parse_pad_mode(std::string_view name);

}  // namespace tessera::ops
