// 2-D max and average pooling on NHWC {C, W, H, N}: a member is one vector of channels at one
// output pixel; taps outside the input are skipped with scalar (SPU) tests, as the padding of
// ONNX pooling never takes part in a maximum and only counts for count_include_pad averages.
#include "common.h"

namespace tessera::tpc::kernels {

namespace {

#define TESSERA_POOL_MAX(D, V, LOWEST)                      \
  inline V vmax(const V& a, const V& b) {                   \
    return v_##D##_max_v_v(a, b);                           \
  }                                                         \
  inline V vload(const int5& c, tensor t, V*) {             \
    return v_##D##_ld_tnsr_i(c, t);                         \
  }                                                         \
  inline void vstore(const int5& c, tensor t, const V& v) { \
    D##_st_tnsr_i_v(c, t, v);                               \
  }                                                         \
  inline V vlowest(V*) {                                    \
    return V(LOWEST);                                       \
  }
TESSERA_POOL_MAX(f32, float64, -std::numeric_limits<float>::infinity())
TESSERA_POOL_MAX(bf16, bfloat128, -std::numeric_limits<float>::infinity())
TESSERA_POOL_MAX(i16, short128, std::numeric_limits<std::int16_t>::lowest())
TESSERA_POOL_MAX(i8, char256, std::numeric_limits<std::int8_t>::lowest())
#undef TESSERA_POOL_MAX

template <typename V>
void maxpool_kernel(tensor x, tensor out, int kh, int kw, int sh, int sw, int ph, int pw, int dh,
                    int dw) {
  const int in_w = static_cast<int>(get_dim_size(x, 1));
  const int in_h = static_cast<int>(get_dim_size(x, 2));
  for_each_member([&](int5 c) {
    c[0] *= V::lanes;
    V acc = vlowest(static_cast<V*>(nullptr));
    int5 ic = c;
    for (int a = 0; a < kh; ++a) {
      ic[2] = c[2] * sh - ph + a * dh;
      if (ic[2] < 0 || ic[2] >= in_h) continue;
      for (int b = 0; b < kw; ++b) {
        ic[1] = c[1] * sw - pw + b * dw;
        if (ic[1] < 0 || ic[1] >= in_w) continue;
        acc = vmax(acc, vload(ic, x, static_cast<V*>(nullptr)));
      }
    }
    vstore(c, out, acc);
  });
}

// Taps of one window dimension inside [0, in) and inside [-pad_begin, in + pad_end).
inline void taps(int start, int k, int d, int in, int pad_end, int& inside, int& padded) {
  inside = 0;
  padded = 0;
  for (int t = 0; t < k; ++t) {
    const int i = start + t * d;
    if (i >= 0 && i < in) ++inside;
    if (i < in + pad_end) ++padded;
  }
}

template <DType DT>
void avgpool_kernel(tensor x, tensor out, int kh, int kw, int sh, int sw, int ph, int pw, int dh,
                    int dw, int ph_end, int pw_end, int include_pad) {
  using Io = FloatIo<DT>;
  constexpr int G = Io::groups;
  const int in_w = static_cast<int>(get_dim_size(x, 1));
  const int in_h = static_cast<int>(get_dim_size(x, 2));
  for_each_member([&](int5 c) {
    c[0] *= Io::lanes;
    float64 acc[G], v[G];
    for (int g = 0; g < G; ++g) acc[g] = float64(0.0f);
    int5 ic = c;
    const int h0 = c[2] * sh - ph, w0 = c[1] * sw - pw;
    for (int a = 0; a < kh; ++a) {
      ic[2] = h0 + a * dh;
      if (ic[2] < 0 || ic[2] >= in_h) continue;
      for (int b = 0; b < kw; ++b) {
        ic[1] = w0 + b * dw;
        if (ic[1] < 0 || ic[1] >= in_w) continue;
        Io::load(ic, x, v);
        for (int g = 0; g < G; ++g) acc[g] = v_f32_add_v_v(acc[g], v[g]);
      }
    }
    int inside_h, padded_h, inside_w, padded_w;
    taps(h0, kh, dh, in_h, ph_end, inside_h, padded_h);
    taps(w0, kw, dw, in_w, pw_end, inside_w, padded_w);
    const int divisor = include_pad ? padded_h * padded_w : inside_h * inside_w;
    const float k =
        divisor > 0 ? 1.0f / static_cast<float>(divisor) : std::numeric_limits<float>::quiet_NaN();
    for (int g = 0; g < G; ++g) acc[g] = v_f32_mul_v_s(acc[g], k);
    Io::store(c, out, acc);
  });
}

// Output size of one spatial dim as ONNX pooling computes it; -1 when the window does not fit.
std::int64_t pooled(std::int64_t in, int k, int s, int pb, int pe, int d, bool ceil_mode) {
  const std::int64_t extent = static_cast<std::int64_t>(d) * (k - 1) + 1;
  const std::int64_t span = in + pb + pe - extent;
  if (span < 0 || s < 1) return -1;
  std::int64_t out = ceil_mode ? (span + s - 1) / s + 1 : span / s + 1;
  if (ceil_mode && (out - 1) * s >= in + pb) --out;
  return out;
}

GlueCodeReturn_t pool_space(const HabanaKernelParams_t* p, HabanaKernelInstantiation_t* inst,
                            TensorDataType_t type, Pool2dParams& pp) {
  if (auto rc = node_params(p, pp); rc != GLUE_SUCCESS) return rc;
  if (p->inputTensorNr != 1) return GLUE_INCOMPATIBLE_INPUT_COUNT;
  if (p->outputTensorNr != 1) return GLUE_INCOMPATIBLE_OUTPUT_COUNT;
  const Tensor_t& x = p->inputTensors[0];
  const Tensor_t& out = p->outputTensors[0];
  if (x.dataType != type || out.dataType != type) return GLUE_INCOMPATIBLE_DATA_TYPE;
  if (x.geometry.dims < 3 || x.geometry.dims > 4) return GLUE_INCOMPATIBLE_INPUT_SIZE;
  for (int j = 0; j < 2; ++j)
    if (pp.kernel[j] < 1 || pp.strides[j] < 1 || pp.dilations[j] < 1 || pp.pads[j] < 0 ||
        pp.pads[j + 2] < 0)
      return GLUE_UNSUPPORTED_LAYER_CONFIGURATION;
  const std::int64_t oh = pooled(dim_of(x, 2), pp.kernel[0], pp.strides[0], pp.pads[0], pp.pads[2],
                                 pp.dilations[0], pp.ceil_mode != 0);
  const std::int64_t ow = pooled(dim_of(x, 1), pp.kernel[1], pp.strides[1], pp.pads[1], pp.pads[3],
                                 pp.dilations[1], pp.ceil_mode != 0);
  if (oh < 0 || ow < 0) return GLUE_UNSUPPORTED_LAYER_CONFIGURATION;
  if (dim_of(out, 0) != dim_of(x, 0) || dim_of(out, 1) != ow || dim_of(out, 2) != oh ||
      dim_of(out, 3) != dim_of(x, 3) || dim_of(out, 4) != 1)
    return GLUE_INCOMPATIBLE_OUTPUT_SIZE;
  vector_index_space(inst, out, lanes_of(type), 1, 1, false);
  return GLUE_SUCCESS;
}

template <typename V>
KernelSet::Glue maxpool_glue(TensorDataType_t type) {
  return [type](const HabanaKernelParams_t* p, HabanaKernelInstantiation_t* inst) {
    Pool2dParams pp;
    if (auto rc = pool_space(p, inst, type, pp); rc != GLUE_SUCCESS) return rc;
    gcapi::set_kernel(inst, tpc_kernel<&maxpool_kernel<V>>());
    set_scalar_params(inst->kernel, pp.kernel[0], pp.kernel[1], pp.strides[0], pp.strides[1],
                      pp.pads[0], pp.pads[1], pp.dilations[0], pp.dilations[1]);
    return GLUE_SUCCESS;
  };
}

template <DType DT>
KernelSet::Glue avgpool_glue(TensorDataType_t type) {
  return [type](const HabanaKernelParams_t* p, HabanaKernelInstantiation_t* inst) {
    Pool2dParams pp;
    if (auto rc = pool_space(p, inst, type, pp); rc != GLUE_SUCCESS) return rc;
    gcapi::set_kernel(inst, tpc_kernel<&avgpool_kernel<DT>>());
    set_scalar_params(inst->kernel, pp.kernel[0], pp.kernel[1], pp.strides[0], pp.strides[1],
                      pp.pads[0], pp.pads[1], pp.dilations[0], pp.dilations[1], pp.pads[2],
                      pp.pads[3], pp.count_include_pad);
    return GLUE_SUCCESS;
  };
}

}  // namespace

void add_pool_kernels(KernelSet& set) {
  set.add("maxpool_2d_f32", maxpool_glue<float64>(DATA_F32));
  set.add("maxpool_2d_bf16", maxpool_glue<bfloat128>(DATA_BF16));
  set.add("maxpool_2d_i16", maxpool_glue<short128>(DATA_I16));
  set.add("maxpool_2d_i8", maxpool_glue<char256>(DATA_I8));
  set.add("avgpool_2d_f32", avgpool_glue<DType::f32>(DATA_F32));
  set.add("avgpool_2d_bf16", avgpool_glue<DType::bf16>(DATA_BF16));
}

}  // namespace tessera::tpc::kernels
