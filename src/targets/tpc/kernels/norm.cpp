// Normalisation kernels: layer norm over dims 0..axis (one member per outer row, three passes),
// instance norm and inference batch norm on NHWC channels (per-channel vectors along dim 0).
#include "common.h"

namespace tessera::tpc::kernels {

namespace {

// Calls f(coord) over dims 1..axis of the row at `base` (dim 0 is walked by the caller).
template <typename F>
inline void for_each_inner(int5 base, int axis, const int5& size, F&& f) {
  for (int d = 1; d <= axis; ++d) base[d] = 0;
  for (;;) {
    f(base);
    int d = 1;
    for (; d <= axis; ++d) {
      if (++base[d] < size[d]) break;
      base[d] = 0;
    }
    if (d > axis) return;
  }
}

template <DType DT, bool Bias>
void layernorm_body(tensor x, tensor scale, tensor bias, tensor out, int axis, float eps,
                    unsigned smask, unsigned bmask, float inv_n) {
  using Io = FloatIo<DT>;
  constexpr int G = Io::groups;
  int5 size;
  for (int d = 0; d < 5; ++d) size[d] = static_cast<int>(get_dim_size(x, static_cast<unsigned>(d)));
  for_each_member([&](const int5& c) {
    float64 v[G], acc = float64(0.0f);
    // Pass 1: mean (lanes past the end read the pad value 0).
    for_each_inner(c, axis, size, [&](int5 ic) {
      for (ic[0] = 0; ic[0] < size[0]; ic[0] += Io::lanes) {
        Io::load(ic, x, v);
        for (int g = 0; g < G; ++g) acc = v_f32_add_v_v(acc, v[g]);
      }
    });
    const float64 mean = v_f32_mul_v_s(v_f32_reduce_add(acc), inv_n);
    // Pass 2: variance of the lanes inside the tensor.
    acc = float64(0.0f);
    for_each_inner(c, axis, size, [&](int5 ic) {
      for (ic[0] = 0; ic[0] < size[0]; ic[0] += Io::lanes) {
        Io::load(ic, x, v);
        for (int g = 0; g < G; ++g) {
          float64 dv = v_f32_sub_v_v(v[g], mean);
          const int valid = size[0] - ic[0] - 64 * g;
          if (valid < 64) dv = v_f32_mov_v_vb(dv, float64(0.0f), lanes_below<64>(valid), false);
          acc = v_f32_mac_v_v(dv, dv, acc);
        }
      }
    });
    const float64 rstd =
        v_rsqrt_f32(v_f32_add_v_s(v_f32_mul_v_s(v_f32_reduce_add(acc), inv_n), eps));
    // Pass 3: normalise, scale and shift.
    for_each_inner(c, axis, size, [&](int5 ic) {
      for (ic[0] = 0; ic[0] < size[0]; ic[0] += Io::lanes) {
        float64 s[G], b[G];
        Io::load(ic, x, v);
        load_broadcast<DT>(ic, scale, smask, s);
        if constexpr (Bias) load_broadcast<DT>(ic, bias, bmask, b);
        for (int g = 0; g < G; ++g) {
          v[g] = v_f32_mul_v_v(v_f32_mul_v_v(v_f32_sub_v_v(v[g], mean), rstd), s[g]);
          if constexpr (Bias) v[g] = v_f32_add_v_v(v[g], b[g]);
        }
        Io::store(ic, out, v);
      }
    });
  });
}

template <DType DT>
void layernorm_bias(tensor x, tensor scale, tensor bias, tensor out, int axis, float eps,
                    unsigned smask, unsigned bmask, float inv_n) {
  layernorm_body<DT, true>(x, scale, bias, out, axis, eps, smask, bmask, inv_n);
}

template <DType DT>
void layernorm_nobias(tensor x, tensor scale, tensor out, int axis, float eps, unsigned smask,
                      unsigned bmask, float inv_n) {
  layernorm_body<DT, false>(x, scale, scale, out, axis, eps, smask, bmask, inv_n);
}

template <DType DT>
void batchnorm_kernel(tensor x, tensor scale, tensor bias, tensor mean, tensor var, tensor out,
                      float eps) {
  using Io = FloatIo<DT>;
  constexpr int G = Io::groups;
  for_each_member([&](int5 c) {
    c[0] *= Io::lanes;
    const int5 pc = {{c[0], 0, 0, 0, 0}};
    float64 v[G], s[G], b[G], m[G], q[G];
    Io::load(c, x, v);
    Io::load(pc, scale, s);
    Io::load(pc, bias, b);
    Io::load(pc, mean, m);
    Io::load(pc, var, q);
    for (int g = 0; g < G; ++g) {
      const float64 k = v_f32_mul_v_v(v_rsqrt_f32(v_f32_add_v_s(q[g], eps)), s[g]);
      v[g] = v_f32_mac_v_v(v_f32_sub_v_v(v[g], m[g]), k, b[g]);
    }
    Io::store(c, out, v);
  });
}

// Instance norm on NHWC {C, W, H, N}: channels are the lanes, so each member (a channel vector
// of one image) accumulates mean and variance over W x H without lane reductions.
template <DType DT>
void instancenorm_kernel(tensor x, tensor scale, tensor bias, tensor out, float eps, float inv_n) {
  using Io = FloatIo<DT>;
  constexpr int G = Io::groups;
  const int w = static_cast<int>(get_dim_size(x, 1));
  const int h = static_cast<int>(get_dim_size(x, 2));
  for_each_member([&](int5 c) {
    c[0] *= Io::lanes;
    const int5 pc = {{c[0], 0, 0, 0, 0}};
    float64 v[G], mean[G], var[G], s[G], b[G];
    for (int g = 0; g < G; ++g) mean[g] = var[g] = float64(0.0f);
    int5 ic = c;
    for (ic[2] = 0; ic[2] < h; ++ic[2])
      for (ic[1] = 0; ic[1] < w; ++ic[1]) {
        Io::load(ic, x, v);
        for (int g = 0; g < G; ++g) mean[g] = v_f32_add_v_v(mean[g], v[g]);
      }
    for (int g = 0; g < G; ++g) mean[g] = v_f32_mul_v_s(mean[g], inv_n);
    for (ic[2] = 0; ic[2] < h; ++ic[2])
      for (ic[1] = 0; ic[1] < w; ++ic[1]) {
        Io::load(ic, x, v);
        for (int g = 0; g < G; ++g) {
          const float64 d = v_f32_sub_v_v(v[g], mean[g]);
          var[g] = v_f32_mac_v_v(d, d, var[g]);
        }
      }
    Io::load(pc, scale, s);
    Io::load(pc, bias, b);
    for (int g = 0; g < G; ++g)
      s[g] = v_f32_mul_v_v(v_rsqrt_f32(v_f32_add_v_s(v_f32_mul_v_s(var[g], inv_n), eps)), s[g]);
    for (ic[2] = 0; ic[2] < h; ++ic[2])
      for (ic[1] = 0; ic[1] < w; ++ic[1]) {
        Io::load(ic, x, v);
        for (int g = 0; g < G; ++g) v[g] = v_f32_mac_v_v(v_f32_sub_v_v(v[g], mean[g]), s[g], b[g]);
        Io::store(ic, out, v);
      }
  });
}

KernelSet::Glue instancenorm_glue(TensorDataType_t type, KernelFunction fn) {
  return [=](const HabanaKernelParams_t* p, HabanaKernelInstantiation_t* inst) {
    BatchNormParams bp;
    if (auto rc = node_params(p, bp); rc != GLUE_SUCCESS) return rc;
    if (p->inputTensorNr != 3) return GLUE_INCOMPATIBLE_INPUT_COUNT;
    if (p->outputTensorNr != 1) return GLUE_INCOMPATIBLE_OUTPUT_COUNT;
    const Tensor_t& x = p->inputTensors[0];
    for (unsigned i = 0; i < 3; ++i)
      if (p->inputTensors[i].dataType != type) return GLUE_INCOMPATIBLE_DATA_TYPE;
    if (p->outputTensors[0].dataType != type) return GLUE_INCOMPATIBLE_DATA_TYPE;
    if (!same_sizes(x, p->outputTensors[0])) return GLUE_INCOMPATIBLE_OUTPUT_SIZE;
    if (x.geometry.dims < 3 || x.geometry.dims > 4) return GLUE_INCOMPATIBLE_INPUT_SIZE;
    for (unsigned i = 1; i < 3; ++i) {
      const Tensor_t& t = p->inputTensors[i];
      if (dim_of(t, 0) != dim_of(x, 0)) return GLUE_INCOMPATIBLE_INPUT_SIZE;
      for (int d = 1; d < static_cast<int>(MAX_TENSOR_DIM); ++d)
        if (dim_of(t, d) != 1) return GLUE_INCOMPATIBLE_INPUT_SIZE;
    }
    Tensor_t images = x;
    images.geometry.sizes[1] = images.geometry.sizes[2] = 1;
    vector_index_space(inst, images, lanes_of(type), 3, 1, false);
    inst->outputTensorAccessPattern[0].allRequired = 1;
    gcapi::set_kernel(inst, fn);
    inst->flags.specialFunctionsUsed = 1;
    const double n = static_cast<double>(dim_of(x, 1)) * dim_of(x, 2);
    set_scalar_params(inst->kernel, bp.epsilon, n > 0 ? static_cast<float>(1.0 / n) : 0.0f);
    return GLUE_SUCCESS;
  };
}

// Bits of the dims where `t` broadcasts against `x` (size 1 there); false when it cannot.
bool broadcast_mask(const Tensor_t& t, const Tensor_t& x, int last_dim, unsigned& mask) {
  mask = 0;
  for (int d = 0; d < static_cast<int>(MAX_TENSOR_DIM); ++d) {
    const unsigned n = dim_of(t, d), o = dim_of(x, d);
    if (d > last_dim && n != 1) return false;
    if (n == o) continue;
    if (n != 1) return false;
    mask |= 1u << d;
  }
  return true;
}

KernelSet::Glue layernorm_glue(TensorDataType_t type, KernelFunction with_bias,
                               KernelFunction without_bias) {
  return [=](const HabanaKernelParams_t* p, HabanaKernelInstantiation_t* inst) {
    LayerNormParams lp;
    if (auto rc = node_params(p, lp); rc != GLUE_SUCCESS) return rc;
    if (p->inputTensorNr != 2 && p->inputTensorNr != 3) return GLUE_INCOMPATIBLE_INPUT_COUNT;
    if (p->outputTensorNr != 1) return GLUE_INCOMPATIBLE_OUTPUT_COUNT;
    const Tensor_t& x = p->inputTensors[0];
    if (lp.axis < 0 || lp.axis >= static_cast<int>(std::max(1u, x.geometry.dims)))
      return GLUE_UNSUPPORTED_LAYER_CONFIGURATION;
    for (unsigned i = 0; i < p->inputTensorNr; ++i)
      if (p->inputTensors[i].dataType != type) return GLUE_INCOMPATIBLE_DATA_TYPE;
    if (p->outputTensors[0].dataType != type) return GLUE_INCOMPATIBLE_DATA_TYPE;
    if (!same_sizes(x, p->outputTensors[0])) return GLUE_INCOMPATIBLE_OUTPUT_SIZE;
    unsigned masks[2] = {0, 0};
    for (unsigned i = 1; i < p->inputTensorNr; ++i)
      if (!broadcast_mask(p->inputTensors[i], x, lp.axis, masks[i - 1]))
        return GLUE_INCOMPATIBLE_INPUT_SIZE;
    double n = 1;
    Tensor_t rows = x;
    rows.geometry.dims = std::max(1u, rows.geometry.dims);
    for (int d = 0; d <= lp.axis; ++d) {
      n *= dim_of(x, d);
      rows.geometry.sizes[d] = 1;
    }
    vector_index_space(inst, rows, lanes_of(type), p->inputTensorNr, 1, false);
    inst->outputTensorAccessPattern[0].allRequired = 1;
    gcapi::set_kernel(inst, p->inputTensorNr == 3 ? with_bias : without_bias);
    inst->flags.specialFunctionsUsed = 1;
    for (unsigned i = 0; i < p->inputTensorNr; ++i) inst->inputPadValues[i] = pad_value(type, 0);
    set_scalar_params(inst->kernel, lp.axis, lp.epsilon, masks[0], masks[1],
                      n > 0 ? static_cast<float>(1.0 / n) : 0.0f);
    return GLUE_SUCCESS;
  };
}

KernelSet::Glue batchnorm_glue(TensorDataType_t type, KernelFunction fn) {
  return [=](const HabanaKernelParams_t* p, HabanaKernelInstantiation_t* inst) {
    BatchNormParams bp;
    if (auto rc = node_params(p, bp); rc != GLUE_SUCCESS) return rc;
    if (p->inputTensorNr != 5) return GLUE_INCOMPATIBLE_INPUT_COUNT;
    if (p->outputTensorNr != 1) return GLUE_INCOMPATIBLE_OUTPUT_COUNT;
    const Tensor_t& x = p->inputTensors[0];
    for (unsigned i = 0; i < 5; ++i)
      if (p->inputTensors[i].dataType != type) return GLUE_INCOMPATIBLE_DATA_TYPE;
    if (p->outputTensors[0].dataType != type) return GLUE_INCOMPATIBLE_DATA_TYPE;
    if (!same_sizes(x, p->outputTensors[0])) return GLUE_INCOMPATIBLE_OUTPUT_SIZE;
    for (unsigned i = 1; i < 5; ++i) {
      const Tensor_t& t = p->inputTensors[i];
      if (dim_of(t, 0) != dim_of(x, 0)) return GLUE_INCOMPATIBLE_INPUT_SIZE;
      for (int d = 1; d < static_cast<int>(MAX_TENSOR_DIM); ++d)
        if (dim_of(t, d) != 1) return GLUE_INCOMPATIBLE_INPUT_SIZE;
    }
    vector_index_space(inst, p->outputTensors[0], lanes_of(type), 5, 1, false);
    gcapi::set_kernel(inst, fn);
    inst->flags.specialFunctionsUsed = 1;
    set_scalar_params(inst->kernel, bp.epsilon);
    return GLUE_SUCCESS;
  };
}

}  // namespace

void add_norm_kernels(KernelSet& set) {
  set.add("layernorm_f32", layernorm_glue(DATA_F32, tpc_kernel<&layernorm_bias<DType::f32>>(),
                                          tpc_kernel<&layernorm_nobias<DType::f32>>()));
  set.add("layernorm_bf16", layernorm_glue(DATA_BF16, tpc_kernel<&layernorm_bias<DType::bf16>>(),
                                           tpc_kernel<&layernorm_nobias<DType::bf16>>()));
  set.add("instancenorm_f32",
          instancenorm_glue(DATA_F32, tpc_kernel<&instancenorm_kernel<DType::f32>>()));
  set.add("instancenorm_bf16",
          instancenorm_glue(DATA_BF16, tpc_kernel<&instancenorm_kernel<DType::bf16>>()));
  set.add("batchnorm_f32", batchnorm_glue(DATA_F32, tpc_kernel<&batchnorm_kernel<DType::f32>>()));
  set.add("batchnorm_bf16",
          batchnorm_glue(DATA_BF16, tpc_kernel<&batchnorm_kernel<DType::bf16>>()));
}

}  // namespace tessera::tpc::kernels
