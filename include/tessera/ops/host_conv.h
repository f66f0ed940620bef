// Deterministic f32 convolution on the host, shared by the reference ops and any target that
// needs one (the MME model). oneDNN computes it single-threaded per call, on pieces of the output
// fixed by the shape and spread over the work scheduler, so the bits never depend on
// TESSERA_THREADS.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

namespace tessera::ops {

// One forward convolution; spatial triples are (D, H, W), with size-1 D (and H) for 2-D (1-D).
struct HostConv {
  std::int64_t batch = 1, in_channels = 0, out_channels = 0, group = 1;
  std::array<std::int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1};
  std::array<std::int64_t, 3> stride{1, 1, 1}, dilation{1, 1, 1};
  std::array<std::int64_t, 3> pad_begin{0, 0, 0}, pad_end{0, 0, 0};
  // Activations NDHWC (channels fastest) instead of NCDHW.
  bool channels_last = false;
  // Weights (kD, kH, kW, C/group, M) with M fastest instead of ONNX's (M, C/group, kD, kH, kW).
  bool weights_hwio = false;
  bool operator==(const HostConv&) const = default;
};

// oneDNN's own layouts of one convolution's weights, kept between calls by a caller whose
// weights never change (a plan's constant): the first call reorders into it, later calls with
// the same convolution and weights pointer reuse it. Safe to share between threads.
class HostConvWeights {
 public:
  HostConvWeights();
  ~HostConvWeights();
  HostConvWeights(const HostConvWeights&) = delete;
  HostConvWeights& operator=(const HostConvWeights&) = delete;
  struct Kept;  // the reordered weights and what they were made from

 private:
  friend void host_conv(const HostConv&, const float*, const float*, const float*, float*,
                        HostConvWeights*);
  std::unique_ptr<Kept> kept_;
};

// y = conv(x, w) + bias (bias may be null; one value per output channel). Every dimension of
// `c` must be positive and `out` consistent with the window; y is fully written. With `kept`,
// the weights are reordered on the first call only (the caller promises they do not change).
void host_conv(const HostConv& c, const float* x, const float* w, const float* bias, float* y,
               HostConvWeights* kept = nullptr);

}  // namespace tessera::ops
