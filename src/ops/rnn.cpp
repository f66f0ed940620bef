// RNN-14, GRU-14 and LSTM-14: every direction, sequence_lens, initial states, peepholes, clip,
// layout 0/1, input_forget, linear_before_reset and the ONNX activation functions. Tensors are
// read in ONNX's row-major order (Tessera's storage order) and computed in f64.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "common.h"
#include "tessera/ops/reference.h"

namespace tessera::ops {

namespace {

struct Activation {
  std::string name;
  double alpha = 0.0, beta = 0.0;
  double operator()(double v) const {
    if (name == "Sigmoid") return 1.0 / (1.0 + std::exp(-v));
    if (name == "Tanh") return std::tanh(v);
    if (name == "Relu") return std::max(0.0, v);
    if (name == "LeakyRelu") return v >= 0 ? v : alpha * v;
    if (name == "ThresholdedRelu") return v > alpha ? v : 0.0;
    if (name == "HardSigmoid") return std::max(0.0, std::min(1.0, alpha * v + beta));
    if (name == "Affine") return alpha * v + beta;
    if (name == "ScaledTanh") return alpha * std::tanh(beta * v);
    if (name == "Elu") return v >= 0 ? v : alpha * (std::exp(v) - 1.0);
    if (name == "Softsign") return v / (1.0 + std::fabs(v));
    return std::log1p(std::exp(v));  // Softplus
  }
};

std::vector<Activation> make_activations(std::string_view op, const RnnParams& p, int per_dir,
                                         int dirs) {
  static const std::vector<std::string> kDefaults[] = {
      {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
  const auto& defaults = kDefaults[per_dir - 1];
  std::vector<std::string> names = p.activations;
  if (names.empty())
    for (int d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  if (static_cast<int>(names.size()) != per_dir * dirs)
    throw_user_error("{}: activations lists {} functions; expected {} ({} per direction)", op,
                     names.size(), per_dir * dirs, per_dir);
  std::vector<Activation> acts;
  std::size_t ai = 0, bi = 0;
  for (const auto& n : names) {
    Activation a;
    a.name = n;
    const bool uses_alpha = n == "LeakyRelu" || n == "ThresholdedRelu" || n == "HardSigmoid" ||
                            n == "Affine" || n == "ScaledTanh" || n == "Elu";
    const bool uses_beta = n == "HardSigmoid" || n == "Affine" || n == "ScaledTanh";
    const double default_alpha = n == "LeakyRelu"         ? 0.01
                                 : n == "HardSigmoid"     ? 0.2
                                 : n == "ThresholdedRelu" ? 1.0
                                                          : 1.0;
    const double default_beta = n == "HardSigmoid" ? 0.5 : 0.0;
    a.alpha =
        uses_alpha && ai < p.activation_alpha.size() ? p.activation_alpha[ai++] : default_alpha;
    a.beta = uses_beta && bi < p.activation_beta.size() ? p.activation_beta[bi++] : default_beta;
    static const std::string_view kKnown[] = {
        "Sigmoid", "Tanh",       "Relu", "LeakyRelu", "ThresholdedRelu", "HardSigmoid",
        "Affine",  "ScaledTanh", "Elu",  "Softsign",  "Softplus"};
    if (std::find(std::begin(kKnown), std::end(kKnown), n) == std::end(kKnown))
      throw_user_error(
          "{}: activation '{}' is not one of Sigmoid, Tanh, Relu, LeakyRelu, ThresholdedRelu, "
          "HardSigmoid, Affine, ScaledTanh, Elu, Softsign, Softplus",
          op, n);
    acts.push_back(a);
  }
  return acts;
}

std::vector<std::int64_t> onnx_dims_of(const Tensor& t) {
  const auto o = t.shape().outer_first();
  return {o.begin(), o.end()};
}

void expect_dims(std::string_view op, const char* what, const Tensor& t,
                 const std::vector<std::int64_t>& dims) {
  if (onnx_dims_of(t) != dims)
    throw_user_error("{}: {} has shape {} (Tessera order); expected {}", op, what,
                     t.shape().to_string(), Shape::from_outer_first(dims).to_string());
}

}  // namespace

RnnResult recurrent(const Tensor& x, const Tensor& w, const Tensor& r, const Tensor* b,
                    const Tensor* sequence_lens, const Tensor* initial_h, const Tensor* initial_c,
                    const Tensor* p, const RnnParams& params) {
  const std::string_view op = params.cell == RnnCell::rnn   ? "RNN"
                              : params.cell == RnnCell::gru ? "GRU"
                                                            : "LSTM";
  detail::require_float(op, x, "X");
  if (x.rank() != 3) throw_user_error("{}: X must be 3-D, got shape {}", op, x.shape().to_string());
  const int gates = params.cell == RnnCell::rnn ? 1 : params.cell == RnnCell::gru ? 3 : 4;
  const int dirs = params.direction == RnnDirection::bidirectional ? 2 : 1;
  const std::int64_t hs = params.hidden_size;
  const auto xd = onnx_dims_of(x);
  const std::int64_t seq = params.batch_first ? xd[1] : xd[0];
  const std::int64_t batch = params.batch_first ? xd[0] : xd[1];
  const std::int64_t in = xd[2];
  if (hs < 1) throw_user_error("{}: hidden_size is {}; it must be >= 1", op, hs);
  expect_dims(op, "W", w, {dirs, gates * hs, in});
  expect_dims(op, "R", r, {dirs, gates * hs, hs});
  if (b) expect_dims(op, "B", *b, {dirs, 2 * gates * hs});
  if (initial_h)
    expect_dims(op, "initial_h", *initial_h,
                params.batch_first ? std::vector<std::int64_t>{batch, dirs, hs}
                                   : std::vector<std::int64_t>{dirs, batch, hs});
  if (initial_c)
    expect_dims(op, "initial_c", *initial_c,
                params.batch_first ? std::vector<std::int64_t>{batch, dirs, hs}
                                   : std::vector<std::int64_t>{dirs, batch, hs});
  if (p) expect_dims(op, "P", *p, {dirs, 3 * hs});
  std::vector<std::int64_t> lens(static_cast<std::size_t>(batch), seq);
  if (sequence_lens) {
    expect_dims(op, "sequence_lens", *sequence_lens, {batch});
    lens = sequence_lens->to_ints();
    for (auto l : lens)
      if (l < 0 || l > seq)
        throw_user_error("{}: sequence_lens entry {} is outside [0, {}]", op, l, seq);
  }
  const int per_dir = params.cell == RnnCell::rnn ? 1 : params.cell == RnnCell::gru ? 2 : 3;
  const auto acts = make_activations(op, params, per_dir, dirs);
  const std::vector<double> X = x.to_doubles(), W = w.to_doubles(), R = r.to_doubles();
  const std::vector<double> B = b ? b->to_doubles() : std::vector<double>();
  const std::vector<double> P = p ? p->to_doubles() : std::vector<double>();
  const std::vector<double> H0 = initial_h ? initial_h->to_doubles() : std::vector<double>();
  const std::vector<double> C0 = initial_c ? initial_c->to_doubles() : std::vector<double>();
  const auto su = [](std::int64_t v) { return static_cast<std::size_t>(v); };
  // Index helpers in ONNX order for either layout.
  const auto x_at = [&](std::int64_t t, std::int64_t n, std::int64_t k) {
    return X[su(params.batch_first ? (n * seq + t) * in + k : (t * batch + n) * in + k)];
  };
  const auto state_at = [&](std::int64_t d, std::int64_t n, std::int64_t j) {
    return su(params.batch_first ? (n * dirs + d) * hs + j : (d * batch + n) * hs + j);
  };
  std::vector<double> Y(su(seq * dirs * batch * hs), 0.0), YH(su(dirs * batch * hs), 0.0),
      YC(su(dirs * batch * hs), 0.0);
  const auto y_at = [&](std::int64_t t, std::int64_t d, std::int64_t n, std::int64_t j) {
    return su(params.batch_first ? ((n * seq + t) * dirs + d) * hs + j
                                 : ((t * dirs + d) * batch + n) * hs + j);
  };
  const auto clip = [&](double v) {
    return params.clip ? std::max(-static_cast<double>(*params.clip),
                                  std::min(static_cast<double>(*params.clip), v))
                       : v;
  };
  std::vector<double> gx(su(gates * hs)), gh(su(gates * hs)), h(su(hs)), c(su(hs)), hn(su(hs));
  for (int d = 0; d < dirs; ++d) {
    const bool reverse = params.direction == RnnDirection::reverse || d == 1;
    const double* Wd = W.data() + su(d * gates * hs * in);
    const double* Rd = R.data() + su(d * gates * hs * hs);
    const double* Wb = b ? B.data() + su(d * 2 * gates * hs) : nullptr;
    const double* Rb = b ? Wb + gates * hs : nullptr;
    const Activation* f = &acts[su(d * per_dir)];
    for (std::int64_t n = 0; n < batch; ++n) {
      for (std::int64_t j = 0; j < hs; ++j) {
        h[su(j)] = initial_h ? H0[state_at(d, n, j)] : 0.0;
        c[su(j)] = initial_c ? C0[state_at(d, n, j)] : 0.0;
      }
      const std::int64_t len = lens[su(n)];
      for (std::int64_t s = 0; s < len; ++s) {
        const std::int64_t t = reverse ? len - 1 - s : s;
        // gx = W x_t + Wb, gh = R h + Rb, one row per gate unit.
        for (std::int64_t g = 0; g < gates * hs; ++g) {
          double ax = Wb ? Wb[g] : 0.0, ah = Rb ? Rb[g] : 0.0;
          for (std::int64_t k = 0; k < in; ++k) ax += Wd[g * in + k] * x_at(t, n, k);
          for (std::int64_t k = 0; k < hs; ++k) ah += Rd[g * hs + k] * h[su(k)];
          gx[su(g)] = ax;
          gh[su(g)] = ah;
        }
        if (params.cell == RnnCell::rnn) {
          for (std::int64_t j = 0; j < hs; ++j) hn[su(j)] = f[0](clip(gx[su(j)] + gh[su(j)]));
        } else if (params.cell == RnnCell::gru) {
          // Gate order z, r, h.
          for (std::int64_t j = 0; j < hs; ++j) {
            const double z = f[0](clip(gx[su(j)] + gh[su(j)]));
            const double rr = f[0](clip(gx[su(hs + j)] + gh[su(hs + j)]));
            double pre = 0.0;
            if (params.linear_before_reset) {
              pre = gx[su(2 * hs + j)] + rr * gh[su(2 * hs + j)];
            } else {
              double a = Rb ? Rb[2 * hs + j] : 0.0;
              for (std::int64_t k = 0; k < hs; ++k) a += Rd[(2 * hs + j) * hs + k] * rr * h[su(k)];
              pre = gx[su(2 * hs + j)] + a;
            }
            const double ht = f[1](clip(pre));
            hn[su(j)] = (1.0 - z) * ht + z * h[su(j)];
          }
        } else {
          // Gate order i, o, f, c; peepholes P = [i, o, f].
          const double* Pd = p ? P.data() + su(d * 3 * hs) : nullptr;
          for (std::int64_t j = 0; j < hs; ++j) {
            const double cp = c[su(j)];
            const double ig = f[0](clip(gx[su(j)] + gh[su(j)] + (Pd ? Pd[j] * cp : 0.0)));
            double fg = f[0](
                clip(gx[su(2 * hs + j)] + gh[su(2 * hs + j)] + (Pd ? Pd[2 * hs + j] * cp : 0.0)));
            if (params.input_forget) fg = 1.0 - ig;
            const double cg = f[1](clip(gx[su(3 * hs + j)] + gh[su(3 * hs + j)]));
            const double cn = fg * cp + ig * cg;
            const double og =
                f[0](clip(gx[su(hs + j)] + gh[su(hs + j)] + (Pd ? Pd[hs + j] * cn : 0.0)));
            c[su(j)] = cn;
            hn[su(j)] = og * f[2](cn);
          }
        }
        h = hn;
        for (std::int64_t j = 0; j < hs; ++j) Y[y_at(t, d, n, j)] = h[su(j)];
      }
      for (std::int64_t j = 0; j < hs; ++j) {
        YH[state_at(d, n, j)] = h[su(j)];
        YC[state_at(d, n, j)] = c[su(j)];
      }
    }
  }
  const std::vector<std::int64_t> y_dims = params.batch_first
                                               ? std::vector<std::int64_t>{batch, seq, dirs, hs}
                                               : std::vector<std::int64_t>{seq, dirs, batch, hs};
  const std::vector<std::int64_t> h_dims = params.batch_first
                                               ? std::vector<std::int64_t>{batch, dirs, hs}
                                               : std::vector<std::int64_t>{dirs, batch, hs};
  RnnResult res;
  res.y = Tensor::from_doubles(x.dtype(), Shape::from_outer_first(y_dims), Y);
  res.y_h = Tensor::from_doubles(x.dtype(), Shape::from_outer_first(h_dims), YH);
  res.y_c = Tensor::from_doubles(x.dtype(), Shape::from_outer_first(h_dims), YC);
  return res;
}

}  // namespace tessera::ops
