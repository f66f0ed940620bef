// PopLibs on the ipu presets: each function builds graph that the Engine runs; results are
// checked against their definitions computed here, and runs agree for 1, 2 and 8 host threads.
#include <gtest/gtest.h>

#include <functional>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/RandomSeed.hpp>
#include <poplin/Convolution.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popnn/BatchNorm.hpp>
#include <popnn/LayerNorm.hpp>
#include <popnn/Loss.hpp>
#include <popnn/NonLinearity.hpp>
#include <popnn/Pooling.hpp>
#include <popnn/codelets.hpp>
#include <popops/Cast.hpp>
#include <popops/DynamicSlice.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Encoding.hpp>
#include <popops/Fill.hpp>
#include <popops/Gather.hpp>
#include <popops/Loop.hpp>
#include <popops/Pad.hpp>
#include <popops/Reduce.hpp>
#include <popops/ScaledAdd.hpp>
#include <popops/Sort.hpp>
#include <popops/TopK.hpp>
#include <popops/Zero.hpp>
#include <popops/codelets.hpp>
#include <poprand/RandomGen.hpp>
#include <poprand/codelets.hpp>
#include <poputil/Broadcast.hpp>
#include <poputil/TileMapping.hpp>
#include <poputil/Util.hpp>
#include <poputil/VertexTemplates.hpp>
#include <poputil/exceptions.hpp>

#include "ipu_test_util.h"

using namespace poplar;
using namespace poplar::program;
namespace pe = popops::expr;

namespace {

std::vector<float> iota(std::size_t n, float start = 0, float step = 1) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = start + step * float(i);
  return v;
}

std::vector<float> randoms(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

struct Rig {
  Device dev;
  Graph graph;
  explicit Rig(unsigned tiles = 16) : dev(ipu_test::model_device(tiles)), graph(dev.getTarget()) {
    popops::addCodelets(graph);
    poplin::addCodelets(graph);
    popnn::addCodelets(graph);
    poprand::addCodelets(graph);
  }
  Tensor input(const std::vector<std::size_t>& shape, const std::vector<float>& values,
               Type type = FLOAT) {
    Tensor t = graph.addVariable(type, shape, VariableMappingMethod::LINEAR);
    graph.setInitialValue(t, ArrayRef<float>(values));
    return t;
  }
  std::vector<float> run(Sequence& prog, const Tensor& out, unsigned threads = 0) {
    if (threads) setenv("TESSERA_THREADS", std::to_string(threads).c_str(), 1);
    graph.createHostRead("out", out);
    Engine engine(graph, prog);
    engine.load(dev);
    engine.run(0);
    std::vector<float> r(out.numElements());
    if (out.elementType() == FLOAT) {
      engine.readTensor("out", r.data(), r.data() + r.size());
    } else {
      std::vector<double> tmp(r.size());
      if (out.elementType() == HALF) {
        std::vector<half> h(r.size());
        engine.readTensor("out", h.data(), h.data() + h.size());
        for (std::size_t i = 0; i < r.size(); ++i) r[i] = float(h[i]);
      } else if (out.elementType() == BOOL) {
        std::vector<unsigned char> b(r.size());
        engine.readTensor("out", b.data(), b.data() + b.size());
        for (std::size_t i = 0; i < r.size(); ++i) r[i] = b[i];
      } else {
        std::vector<int> b(r.size());
        engine.readTensor("out", b.data(), b.data() + b.size());
        for (std::size_t i = 0; i < r.size(); ++i) r[i] = float(b[i]);
      }
    }
    if (threads) unsetenv("TESSERA_THREADS");
    return r;
  }
};

}  // namespace

TEST(PopLibs, MapFusesAnExpressionOverBroadcastInputs) {
  Rig s;
  auto a = iota(64, -3, 0.1f), b = iota(8, 1, 0.5f);
  Tensor A = s.input({8, 8}, a), B = s.input({8}, b);
  Sequence prog;
  Tensor out = popops::map(s.graph, pe::Tanh(pe::_1 * pe::_2 + 1.0f), {A, B}, prog);
  auto r = s.run(prog, out);
  for (std::size_t i = 0; i < 64; ++i)
    EXPECT_NEAR(r[i], std::tanh(a[i] * b[i % 8] + 1.0f), 1e-6) << i;
}

TEST(PopLibs, NamedElementWiseFunctionsAndInPlaceForms) {
  Rig s;
  auto a = iota(100, 0.5f, 0.25f), b = iota(100, 3, -0.1f);
  Tensor A = s.input({100}, a), B = s.input({100}, b);
  Sequence prog;
  Tensor sum = popops::add(s.graph, A, B, prog);
  Tensor mx = popops::max(s.graph, A, B, prog);
  Tensor pw = popops::pow(s.graph, A, 2.0f, prog);
  Tensor pred = popops::lt(s.graph, A, B, prog);
  Tensor sel = popops::select(s.graph, A, B, pred, prog);
  popops::sqrtInPlace(s.graph, A, prog);
  popops::mulInPlace(s.graph, A, sel, prog);  // sqrt(a) * (a < b ? a : b)
  Tensor all = concat({sum, mx, pw, A});
  auto r = s.run(prog, all);
  for (std::size_t i = 0; i < 100; ++i) {
    EXPECT_FLOAT_EQ(r[i], a[i] + b[i]);
    EXPECT_FLOAT_EQ(r[100 + i], std::max(a[i], b[i]));
    EXPECT_NEAR(r[200 + i], a[i] * a[i], 1e-4);
    EXPECT_NEAR(r[300 + i], std::sqrt(a[i]) * (a[i] < b[i] ? a[i] : b[i]), 1e-5);
  }
}

TEST(PopLibs, IntegerDivisionTruncatesAndCastRoundsToHalf) {
  Rig s;
  Tensor A = s.graph.addVariable(INT, {4}, VariableMappingMethod::LINEAR);
  s.graph.setInitialValue(A, ArrayRef<int>({7, -7, 9, 100}));
  Sequence prog;
  Tensor q = popops::div(s.graph, A, 2, prog);
  auto r = s.run(prog, q);
  EXPECT_EQ(r, (std::vector<float>{3, -3, 4, 50}));
  Rig h;
  Tensor F = h.input({3}, {1.0f, 0.1f, 65504.0f});
  Sequence p2;
  Tensor c = popops::cast(h.graph, F, HALF, p2);
  auto rh = h.run(p2, c);
  EXPECT_EQ(rh[0], 1.0f);
  EXPECT_EQ(rh[1], float(half(0.1f)));
  EXPECT_EQ(rh[2], 65504.0f);
}

TEST(PopLibs, MapRejectsMismatchedTypesAndShapes) {
  Rig s;
  Tensor A = s.input({4}, iota(4));
  Tensor B = s.graph.addVariable(INT, {4}, VariableMappingMethod::LINEAR);
  Tensor C = s.input({3}, iota(3));
  Sequence prog;
  EXPECT_THROW(popops::add(s.graph, A, B, prog), poputil::poplibs_error);
  EXPECT_THROW(popops::add(s.graph, A, C, prog), poputil::poplibs_error);
  EXPECT_THROW(popops::map(s.graph, pe::_1 + pe::_3, {A, A}, prog), poputil::poplibs_error);
  Graph bare(ipu_test::model_device(16).getTarget());
  Tensor X = bare.addVariable(FLOAT, {4}, VariableMappingMethod::LINEAR);
  EXPECT_THROW(popops::neg(bare, X, prog), poputil::poplibs_error);  // no addCodelets
}

TEST(PopLibs, ReduceOverDimensionsWithEveryOperation) {
  Rig s;
  auto a = iota(2 * 3 * 4, -5, 0.5f);
  Tensor A = s.input({2, 3, 4}, a);
  Sequence prog;
  Tensor sum = popops::reduce(s.graph, A, {0, 2}, popops::Operation::ADD, prog);
  Tensor mx = popops::reduce(s.graph, A, {1}, popops::Operation::MAX, prog);
  Tensor sq =
      popops::reduce(s.graph, A, FLOAT, {0, 1, 2}, {popops::Operation::SQUARE_ADD, 0.5f}, prog);
  auto r = s.run(prog, concat({sum.flatten(), mx.flatten(), sq.flatten()}));
  for (int j = 0; j < 3; ++j) {
    float e = 0;
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 4; ++k) e += a[(i * 3 + j) * 4 + k];
    EXPECT_NEAR(r[j], e, 1e-5);
  }
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) {
      float e = -1e9f;
      for (int j = 0; j < 3; ++j) e = std::max(e, a[(i * 3 + j) * 4 + k]);
      EXPECT_EQ(r[3 + i * 4 + k], e);
    }
  float e = 0;
  for (float x : a) e += x * x;
  EXPECT_NEAR(r[11], 0.5f * e, 1e-3);
}

TEST(PopLibs, LongReductionTakesTwoStagesAndMatches) {
  Rig s(64);
  auto a = randoms(50000, 3);
  Tensor A = s.input({50000}, a);
  Sequence prog;
  Tensor sum = popops::reduce(s.graph, A, {0}, popops::Operation::ADD, prog);
  auto r = s.run(prog, sum);
  double e = std::accumulate(a.begin(), a.end(), 0.0);
  EXPECT_NEAR(r[0], e, 1e-3);
}

TEST(PopLibs, ScaledAddFillAndCountedLoop) {
  Rig s;
  Tensor A = s.input({10}, iota(10)), B = s.input({10}, iota(10, 1, 0));
  Sequence prog;
  auto loop = popops::countedLoop(s.graph, 3, [&](const Tensor&) {
    Sequence body;
    popops::scaledAddTo(s.graph, A, B, 2.0f, body);
    return body;
  });
  prog.add(loop);
  Tensor f = s.graph.addVariable(FLOAT, {4}, VariableMappingMethod::LINEAR);
  popops::fill(s.graph, f, 2.5f, prog);
  auto r = s.run(prog, concat(A, f));
  for (int i = 0; i < 10; ++i) EXPECT_FLOAT_EQ(r[i], float(i) + 6.0f);
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(r[10 + i], 2.5f);
}

// Both counted loops hand their body the counter: countedLoop's unsigned one counting up,
// countedForLoop's int one (here counting down).
TEST(PopLibs, CountedLoopsPassTheBodyTheirCounter) {
  Rig s;
  Sequence prog;
  Tensor up = s.graph.addVariable(UNSIGNED_INT, {1}, VariableMappingMethod::LINEAR);
  Tensor down = s.graph.addVariable(INT, {1}, VariableMappingMethod::LINEAR);
  popops::zero(s.graph, up, prog);
  popops::zero(s.graph, down, prog);
  prog.add(popops::countedLoop(s.graph, 2, 11, 3, [&](const Tensor& i) {
    Sequence body;
    popops::addInPlace(s.graph, up, i, body);
    return body;
  }));
  prog.add(popops::countedForLoop(s.graph, 10, 4, -2, [&](const Tensor& i) {
    Sequence body;
    popops::addInPlace(s.graph, down, i, body);
    return body;
  }));
  auto r = s.run(prog, concat(popops::cast(s.graph, up, FLOAT, prog),
                              popops::cast(s.graph, down, FLOAT, prog)));
  EXPECT_EQ(r[0], 2.0f + 5.0f + 8.0f);
  EXPECT_EQ(r[1], 10.0f + 8.0f + 6.0f);
}

TEST(PopLibs, MatMulMatchesItsDefinitionAndSplitsK) {
  Rig s(64);
  const std::size_t M = 24, K = 300, N = 20;
  auto a = randoms(M * K, 1), b = randoms(K * N, 2);
  poplin::PlanningCache cache;
  Tensor A = poplin::createMatMulInputLHS(s.graph, FLOAT, {M, K}, {K, N}, "A", {}, &cache);
  Tensor B = poplin::createMatMulInputRHS(s.graph, FLOAT, {M, K}, {K, N}, "B", {}, &cache);
  s.graph.setInitialValue(A, ArrayRef<float>(a));
  s.graph.setInitialValue(B, ArrayRef<float>(b));
  Sequence prog;
  Tensor C = poplin::matMul(s.graph, A, B, prog, FLOAT, "mm", {}, &cache);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_NE(poplin::reportPlan(s.graph, FLOAT, FLOAT, {M, K}, {K, N}, {}, &cache).find("x"),
            std::string::npos);
  auto r = s.run(prog, C);
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t j = 0; j < N; ++j) {
      double e = 0;
      for (std::size_t k = 0; k < K; ++k) e += double(a[i * K + k]) * b[k * N + j];
      ASSERT_NEAR(r[i * N + j], e, 1e-4) << i << "," << j;
    }
}

TEST(PopLibs, MatMulHalfAndGroupedAndErrors) {
  Rig s(32);
  auto a = randoms(2 * 8 * 16, 4), b = randoms(2 * 16 * 4, 5);
  Tensor A = s.input({2, 8, 16}, a, HALF), B = s.input({2, 16, 4}, b, HALF);
  Sequence prog;
  Tensor C = poplin::matMulGrouped(s.graph, A, B, prog, FLOAT);
  auto r = s.run(prog, C);
  for (int g = 0; g < 2; ++g)
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 4; ++j) {
        float e = 0;
        for (int k = 0; k < 16; ++k)
          e += float(half(a[(g * 8 + i) * 16 + k])) * float(half(b[(g * 16 + k) * 4 + j]));
        EXPECT_NEAR(r[(g * 8 + i) * 4 + j], e, 1e-3);
      }
  Sequence p2;
  EXPECT_THROW(poplin::matMul(s.graph, A[0], A[0], p2), poputil::poplibs_error);
}

TEST(PopLibs, ResultsAndCyclesDoNotDependOnHostThreads) {
  std::vector<float> first;
  std::uint64_t cycles0 = 0;
  for (unsigned threads : {1u, 2u, 8u}) {
    Rig s(32);
    Tensor A = s.input({40, 50}, randoms(2000, 7)), B = s.input({50, 30}, randoms(1500, 8));
    Sequence prog;
    Tensor C = poplin::matMul(s.graph, A, B, prog, FLOAT);
    Tensor D = popnn::nonLinearity(s.graph, popnn::NonLinearityType::SOFTMAX, C, prog);
    Tensor seed = s.graph.addConstant<unsigned>(UNSIGNED_INT, {2}, {11u, 12u});
    s.graph.setTileMapping(seed, 0);
    Tensor R = poprand::uniform(s.graph, &seed, 5, D, FLOAT, -1.0, 1.0, prog);
    Tensor out = concat(D.flatten(), R.flatten());
    setenv("TESSERA_THREADS", std::to_string(threads).c_str(), 1);
    s.graph.createHostRead("out", out);
    Engine engine(s.graph, prog);
    engine.load(s.dev);
    engine.run(0);
    std::vector<float> r(out.numElements());
    engine.readTensor("out", r.data(), r.data() + r.size());
    unsetenv("TESSERA_THREADS");
    std::ostringstream summary;
    engine.printProfileSummary(summary, {});
    std::uint64_t cycles = std::hash<std::string>()(summary.str());
    if (first.empty()) {
      first = r;
      cycles0 = cycles;
    } else {
      EXPECT_EQ(r, first) << threads;
      EXPECT_EQ(cycles, cycles0) << threads;
    }
  }
}

namespace {
// Direct convolution by its definition: in [N][G*IC][H][W], w [G][OC][IC][KH][KW].
std::vector<float> conv_ref(const std::vector<float>& in, const std::vector<float>& w, int N, int G,
                            int IC, int OC, int H, int W, int KH, int KW, int s, int pad, int OH,
                            int OW) {
  std::vector<float> out(std::size_t(N) * G * OC * OH * OW, 0);
  for (int n = 0; n < N; ++n)
    for (int g = 0; g < G; ++g)
      for (int o = 0; o < OC; ++o)
        for (int y = 0; y < OH; ++y)
          for (int x = 0; x < OW; ++x) {
            double acc = 0;
            for (int c = 0; c < IC; ++c)
              for (int i = 0; i < KH; ++i)
                for (int j = 0; j < KW; ++j) {
                  int iy = y * s + i - pad, ix = x * s + j - pad;
                  if (iy < 0 || ix < 0 || iy >= H || ix >= W) continue;
                  acc += double(in[((std::size_t(n) * G * IC + g * IC + c) * H + iy) * W + ix]) *
                         w[(((std::size_t(g) * OC + o) * IC + c) * KH + i) * KW + j];
                }
            out[((std::size_t(n) * G * OC + g * OC + o) * OH + y) * OW + x] = float(acc);
          }
  return out;
}
}  // namespace

TEST(PopLibs, ConvolutionStridedPaddedGroupedAndDepthwise) {
  struct Case {
    int N, G, IC, OC, H, W, K, s, pad;
  };
  for (Case c : {Case{2, 1, 3, 5, 9, 7, 3, 2, 1}, Case{1, 2, 2, 3, 6, 6, 3, 1, 1},
                 Case{1, 4, 1, 1, 8, 8, 3, 1, 1}}) {
    Rig s(24);
    poplin::ConvParams p(FLOAT, std::size_t(c.N), {std::size_t(c.H), std::size_t(c.W)},
                         {std::size_t(c.K), std::size_t(c.K)}, std::size_t(c.IC), std::size_t(c.OC),
                         std::size_t(c.G));
    p.inputTransform.paddingLower = {unsigned(c.pad), unsigned(c.pad)};
    p.inputTransform.paddingUpper = {unsigned(c.pad), unsigned(c.pad)};
    p.outputTransform.stride = {unsigned(c.s), unsigned(c.s)};
    Tensor in = poplin::createInput(s.graph, p, "in");
    Tensor w = poplin::createWeights(s.graph, p, "w");
    auto iv = randoms(in.numElements(), 21), wv = randoms(w.numElements(), 22);
    s.graph.setInitialValue(in, ArrayRef<float>(iv));
    s.graph.setInitialValue(w, ArrayRef<float>(wv));
    Sequence prog;
    Tensor out = poplin::convolution(s.graph, in, w, p, false, prog, "conv");
    Tensor bias = poplin::createBiases(s.graph, out);
    s.graph.setInitialValue(bias, ArrayRef<float>(std::vector<float>(out.dim(1), 0.5f)));
    poplin::addBias(s.graph, out, bias, prog);
    int OH = int(p.getOutputSize(0)), OW = int(p.getOutputSize(1));
    auto e = conv_ref(iv, wv, c.N, c.G, c.IC, c.OC, c.H, c.W, c.K, c.K, c.s, c.pad, OH, OW);
    auto r = s.run(prog, out);
    ASSERT_EQ(r.size(), e.size());
    for (std::size_t i = 0; i < e.size(); ++i) ASSERT_NEAR(r[i], e[i] + 0.5f, 1e-4) << i;
  }
  Rig s;
  poplin::ConvParams bad(FLOAT, 1, {4, 4}, {3, 3}, 2, 2, 1);
  bad.inputTransform.flip = {true, false};
  Tensor in = poplin::createInput(s.graph, bad, "in"), w = poplin::createWeights(s.graph, bad, "w");
  Sequence prog;
  EXPECT_THROW(poplin::convolution(s.graph, in, w, bad, false, prog), poputil::poplibs_error);
}

TEST(PopLibs, PoolingNormalisationAndLoss) {
  Rig s;
  auto v = randoms(2 * 3 * 4 * 4, 31);
  Tensor x = s.input({2, 3, 4, 4}, v);
  Sequence prog;
  popnn::pooling::PoolParams mp(popnn::PoolingType::MAX, {4, 4}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, 3,
                                2, FLOAT);
  Tensor pooled = popnn::pooling::pool(s.graph, mp, x, prog);
  auto [mean, inv] = popnn::bn::batchNormStatistics(s.graph, x, 1e-5f, prog, false);
  Tensor gamma = s.input({3}, {1, 2, 3}), beta = s.input({3}, {0, 0, 1});
  auto [y, white] = popnn::bn::batchNormalise(s.graph, x, gamma, beta, mean, inv, prog);
  Tensor probs = s.input({2, 3}, {0.2f, 0.7f, 0.1f, 0.5f, 0.25f, 0.25f});
  Tensor labels = s.graph.addVariable(UNSIGNED_INT, {2}, VariableMappingMethod::LINEAR);
  s.graph.setInitialValue(labels, ArrayRef<unsigned>({1u, 2u}));
  Tensor loss = s.graph.addVariable(FLOAT, {2}, VariableMappingMethod::LINEAR);
  Tensor deltas = s.graph.addVariable(FLOAT, {2, 3}, VariableMappingMethod::LINEAR);
  popnn::calcLoss(s.graph, probs, labels, loss, deltas, popnn::CROSS_ENTROPY_LOSS, prog);
  auto r = s.run(prog, concat({pooled.flatten(), y.flatten(), loss, deltas.flatten()}));
  // max pooling
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b) {
          float m = -1e9f;
          for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j)
              m = std::max(m, v[((n * 3 + c) * 4 + a * 2 + i) * 4 + b * 2 + j]);
          EXPECT_EQ(r[((n * 3 + c) * 2 + a) * 2 + b], m);
        }
  // batch norm: per channel mean 0 variance 1 before gamma/beta
  for (int c = 0; c < 3; ++c) {
    double m = 0, q = 0;
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 16; ++i) m += v[(n * 3 + c) * 16 + i];
    m /= 32;
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 16; ++i) q += std::pow(v[(n * 3 + c) * 16 + i] - m, 2);
    double is = 1 / std::sqrt(q / 32 + 1e-5);
    float g[] = {1, 2, 3}, bb[] = {0, 0, 1};
    for (int n = 0; n < 2; ++n)
      for (int i = 0; i < 16; ++i)
        EXPECT_NEAR(r[24 + (n * 3 + c) * 16 + i], (v[(n * 3 + c) * 16 + i] - m) * is * g[c] + bb[c],
                    1e-4);
  }
  EXPECT_NEAR(r[24 + 96], -std::log(0.7f), 1e-6);
  EXPECT_NEAR(r[24 + 97], -std::log(0.25f), 1e-6);
  EXPECT_NEAR(r[24 + 98 + 1], 0.7f - 1, 1e-6);
  EXPECT_NEAR(r[24 + 98 + 5], 0.25f - 1, 1e-6);
}

TEST(PopLibs, RandomNumbersAreSeededAndCumulativeSumRuns) {
  Rig s(8);
  Tensor ref = s.graph.addVariable(FLOAT, {4000}, VariableMappingMethod::LINEAR);
  Tensor seed = s.graph.addConstant<unsigned>(UNSIGNED_INT, {2}, {1u, 2u});
  s.graph.setTileMapping(seed, 0);
  Sequence prog;
  Tensor u1 = poprand::uniform(s.graph, &seed, 0, ref, FLOAT, 2.0, 4.0, prog);
  Tensor u2 = poprand::uniform(s.graph, &seed, 0, ref, FLOAT, 2.0, 4.0, prog);
  Tensor u3 = poprand::uniform(s.graph, &seed, 1, ref, FLOAT, 2.0, 4.0, prog);
  Tensor nrm = poprand::normal(s.graph, &seed, 0, ref, FLOAT, 1.0, 2.0, prog);
  Tensor tn = poprand::truncatedNormal(s.graph, &seed, 0, ref, FLOAT, 0.0, 1.0, 1.5, prog);
  Tensor ones = s.input({4000}, std::vector<float>(4000, 1.0f));
  Tensor drop = poprand::dropout(s.graph, &seed, 0, ones, ref, 0.25, 4.0, prog);
  Tensor cs = popops::cumulativeSum(s.graph, s.input({2, 5}, iota(10)), prog);
  auto r = s.run(prog, concat({u1, u2, u3, nrm, tn, drop, cs.flatten()}));
  double mean = 0, nmean = 0, nvar = 0, kept = 0;
  bool differ = false;
  for (int i = 0; i < 4000; ++i) {
    EXPECT_GE(r[i], 2.0f);
    EXPECT_LE(r[i], 4.0f);
    EXPECT_EQ(r[i], r[4000 + i]);
    differ |= r[i] != r[8000 + i];
    mean += r[i];
    nmean += r[12000 + i];
    EXPECT_LE(std::fabs(r[16000 + i]), 1.5f);
    EXPECT_TRUE(r[20000 + i] == 0.0f || r[20000 + i] == 4.0f);
    kept += r[20000 + i] != 0;
  }
  for (int i = 0; i < 4000; ++i) nvar += std::pow(r[12000 + i] - nmean / 4000, 2);
  EXPECT_TRUE(differ);
  EXPECT_NEAR(mean / 4000, 3.0, 0.05);
  EXPECT_NEAR(nmean / 4000, 1.0, 0.1);
  EXPECT_NEAR(std::sqrt(nvar / 4000), 2.0, 0.1);
  EXPECT_NEAR(kept / 4000, 0.25, 0.03);
  std::vector<float> cum = {0, 1, 3, 6, 10, 5, 11, 18, 26, 35};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(r[24000 + i], cum[i]);
}

TEST(PopLibs, SlicesAtRunTimeOffsetsGatherOneHotAndSort) {
  Rig s;
  auto v = iota(5 * 4);
  Tensor t = s.input({5, 4}, v);
  Tensor off = s.graph.addVariable(UNSIGNED_INT, {1}, VariableMappingMethod::LINEAR);
  s.graph.setInitialValue(off, ArrayRef<unsigned>({2u}));
  Tensor offs = s.graph.addVariable(UNSIGNED_INT, {3, 1}, VariableMappingMethod::LINEAR);
  s.graph.setInitialValue(offs, ArrayRef<unsigned>({4u, 0u, 9u}));
  Sequence prog;
  Tensor ds = popops::dynamicSlice(s.graph, t, off, {0}, {2}, prog);  // rows 2, 3
  Tensor ms = popops::multiSlice(s.graph, t, offs, {0}, {1}, prog);   // rows 4, 0, zeros
  Tensor idx = s.graph.addVariable(INT, {2}, VariableMappingMethod::LINEAR);
  s.graph.setInitialValue(idx, ArrayRef<int>({3, 1}));
  Tensor g = popops::gather(s.graph, t, idx, 1, prog);  // columns 3, 1
  Tensor oh = s.graph.addVariable(FLOAT, {2, 4}, VariableMappingMethod::LINEAR);
  popops::encodeOneHot(s.graph, idx, oh, prog);
  Tensor keys = s.input({2, 4}, {3, 1, 2, 0, 5, 7, 6, 4});
  Tensor vals = s.input({2, 4}, {30, 10, 20, 0, 50, 70, 60, 40});
  Tensor sorted = popops::sort(s.graph, keys, 1, prog);
  Tensor sv = popops::sortKeyValue(s.graph, keys, vals, 1, prog);
  Tensor upd = s.input({1, 4}, {-1, -2, -3, -4});
  popops::dynamicUpdate(s.graph, t, upd, off, {0}, {1}, prog);
  auto r = s.run(prog, concat({ds.flatten(), ms.flatten(), g.flatten(), oh.flatten(),
                               sorted.flatten(), sv.flatten(), t.flatten()}));
  std::vector<float> e;
  for (int i = 8; i < 16; ++i) e.push_back(float(i));
  for (int i = 16; i < 20; ++i) e.push_back(float(i));
  for (int i = 0; i < 4; ++i) e.push_back(float(i));
  for (int i = 0; i < 4; ++i) e.push_back(0);
  for (int row = 0; row < 5; ++row)
    e.push_back(float(row * 4 + 3)), e.push_back(float(row * 4 + 1));
  for (float x : {0, 0, 0, 1, 0, 1, 0, 0}) e.push_back(x);
  for (float x : {0, 1, 2, 3, 4, 5, 6, 7}) e.push_back(x);
  for (float x : {0, 10, 20, 30, 40, 50, 60, 70}) e.push_back(x);
  for (int i = 0; i < 20; ++i) e.push_back(i >= 8 && i < 12 ? float(-(i - 7)) : float(i));
  ASSERT_EQ(r.size(), e.size());
  for (std::size_t i = 0; i < e.size(); ++i) EXPECT_EQ(r[i], e[i]) << i;
}

TEST(PopLibs, AProductThatDoesNotFitNamesTheTile) {
  Rig s(2);
  Tensor A = s.graph.addVariable(FLOAT, {512, 512}, VariableMappingMethod::LINEAR);
  Tensor B = s.graph.addVariable(FLOAT, {512, 512}, VariableMappingMethod::LINEAR);
  Sequence prog;
  Tensor C = poplin::matMul(s.graph, A, B, prog, FLOAT, "big");
  try {
    Engine engine(s.graph, prog);
    FAIL() << "expected a tile memory error";
  } catch (const graph_memory_allocation_error& e) {
    EXPECT_NE(std::string(e.what()).find("tile "), std::string::npos) << e.what();
  }
}

TEST(PopLibs, ReduceUpdatesAnOutputAndReadsNothingUndefined) {
  Rig s;
  Tensor x = s.input({3, 4}, iota(12));
  Tensor acc = s.input({3}, {100, 200, 300});
  Sequence prog;
  popops::reduceWithOutput(s.graph, x, acc, {1}, {popops::Operation::ADD, true}, prog);
  Tensor fresh = popops::reduce(s.graph, x, {0}, popops::Operation::MAX, prog);
  Tensor out = concat(acc, fresh);
  s.graph.createHostRead("out", out);
  // Every element a program reads was written first: the check finds nothing.
  Engine engine(s.graph, prog, {{"debug.checkUndefinedReads", "true"}});
  engine.load(s.dev);
  engine.run(0);
  std::vector<float> r(7);
  engine.readTensor("out", r.data(), r.data() + r.size());
  EXPECT_EQ(r, (std::vector<float>{106, 222, 338, 8, 9, 10, 11}));
}

TEST(PopLibs, UtilitiesLoopsActivationsAndLayerNorm) {
  Rig s;
  EXPECT_EQ(poputil::templateVertex("popops::Foo", FLOAT, 4u, true), "popops::Foo<float,4,true>");
  Tensor a = s.graph.addVariable(FLOAT, {3, 1}, VariableMappingMethod::LINEAR);
  Tensor b = s.graph.addVariable(FLOAT, {4}, VariableMappingMethod::LINEAR);
  poputil::broadcastToMatch(a, b);
  EXPECT_EQ(a.shape(), (std::vector<std::size_t>{3, 4}));
  EXPECT_EQ(b.shape(), (std::vector<std::size_t>{3, 4}));
  auto m = poputil::calcLinearTileMapping(s.graph, {1000}, 1, 4);
  std::size_t covered = 0;
  for (const auto& tile : m)
    for (const auto& iv : tile) covered += iv.size();
  EXPECT_EQ(covered, 1000u);

  auto v = iota(8, -2, 0.5f);
  Tensor x = s.input({2, 4}, v);
  Sequence prog;
  Tensor copy = poputil::duplicate(s.graph, x, prog);
  Tensor two = poputil::cloneN(s.graph, x, 2);
  EXPECT_EQ(two.shape(), (std::vector<std::size_t>{2, 2, 4}));
  Tensor gelu = popnn::nonLinearity(s.graph, popnn::NonLinearityType::GELU, x, prog);
  Tensor lsm = popnn::logSoftmax(s.graph, x, prog);
  auto [mean, inv] = popnn::ln::layerNormStatistics(s.graph, x, 1e-5f, prog, false);
  Tensor gamma = s.input({4}, {1, 1, 1, 1}), beta = s.input({4}, {0, 0, 0, 0});
  Tensor ln = popnn::ln::layerNormalise(s.graph, x, gamma, beta, mean, inv, prog).first;
  // countedForLoop: counter from 0 while < 5 step 2 adds 1 to `n` three times.
  Tensor i = s.graph.addVariable(INT, {1}, VariableMappingMethod::LINEAR);
  Tensor limit = s.graph.addConstant<int>(INT, {1}, 5);
  s.graph.setTileMapping(limit, 0);
  Tensor n = s.input({1}, {0.0f});
  Sequence body;
  popops::addInPlace(s.graph, n, 1.0f, body);
  prog.add(popops::countedForLoop(s.graph, i, 0, limit, 2, body));
  std::vector<Tensor> outs;
  popops::reduceMany(s.graph, {popops::SingleReduceOp(x, {1}, {popops::Operation::MIN})}, outs,
                     prog);
  auto r = s.run(prog, concat({copy.flatten(), gelu.flatten(), lsm.flatten(), ln.flatten(), n,
                               outs.at(0).flatten()}));
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(r[k], v[k]);
    float g =
        0.5f * v[k] * (1 + std::tanh(0.7978845608f * (v[k] + 0.044715f * v[k] * v[k] * v[k])));
    EXPECT_NEAR(r[8 + k], g, 1e-5);
    int row = k / 4;
    double mx = v[row * 4 + 3], sum = 0, mean_r = 0, var = 0;
    for (int j = 0; j < 4; ++j) sum += std::exp(v[row * 4 + j] - mx), mean_r += v[row * 4 + j] / 4;
    for (int j = 0; j < 4; ++j) var += std::pow(v[row * 4 + j] - mean_r, 2) / 4;
    EXPECT_NEAR(r[16 + k], v[k] - mx - std::log(sum), 1e-5);
    EXPECT_NEAR(r[24 + k], (v[k] - mean_r) / std::sqrt(var + 1e-5), 1e-4);
  }
  EXPECT_EQ(r[32], 3.0f);
  EXPECT_EQ(r[33], v[0]);
  EXPECT_EQ(r[34], v[4]);
}

namespace {
// The top k of one row as PopLibs documents it, picked here one at a time: the largest (or
// smallest) not yet taken, the earlier of equal ones first; then put in the asked order.
std::vector<std::size_t> top_k_reference(const std::vector<float>& row, unsigned k, bool largest,
                                         popops::SortOrder order) {
  std::vector<std::size_t> chosen;
  std::vector<bool> taken(row.size(), false);
  for (unsigned n = 0; n < k; ++n) {
    std::size_t best = row.size();
    for (std::size_t i = 0; i < row.size(); ++i)
      if (!taken[i] && (best == row.size() || (largest ? row[i] > row[best] : row[i] < row[best])))
        best = i;
    taken[best] = true;
    chosen.push_back(best);
  }
  std::sort(chosen.begin(), chosen.end());
  if (order != popops::SortOrder::NONE)
    std::stable_sort(chosen.begin(), chosen.end(), [&](std::size_t a, std::size_t b) {
      return order == popops::SortOrder::ASCENDING ? row[a] < row[b] : row[a] > row[b];
    });
  return chosen;
}
}  // namespace

TEST(PopLibs, TopKTakesTheLargestOrSmallestInTheAskedOrderWithIndices) {
  const std::size_t R = 3, N = 10;
  auto v = randoms(R * N, 77);
  v[3] = v[7] = v[8] = 0.95f;    // ties in row 0, among its largest
  v[N + 2] = v[N + 5] = -0.99f;  // ties in row 1, among its smallest
  for (auto [k, largest, order] : {std::tuple{4u, true, popops::SortOrder::DESCENDING},
                                   std::tuple{3u, false, popops::SortOrder::ASCENDING},
                                   std::tuple{5u, true, popops::SortOrder::NONE},
                                   std::tuple{10u, false, popops::SortOrder::DESCENDING}}) {
    Rig s;
    popops::TopKParams params(k, largest, order);
    Tensor t = popops::createTopKInput(s.graph, FLOAT, {R, N}, params);
    s.graph.setInitialValue(t, ArrayRef<float>(v));
    Tensor payload = s.input({R, N}, iota(R * N, 100));
    Sequence prog;
    Tensor top = popops::topK(s.graph, prog, t, params);
    auto [keys, values] = popops::topKKeyValue(s.graph, prog, t, payload, params);
    auto [keys2, indices] = popops::topKWithPermutation(s.graph, prog, t, params);
    ASSERT_EQ(top.shape(), (std::vector<std::size_t>{R, k}));
    EXPECT_EQ(indices.elementType(), UNSIGNED_INT);
    auto r = s.run(prog, concat({top.flatten(), keys.flatten(), values.flatten(), keys2.flatten(),
                                 popops::cast(s.graph, indices, FLOAT, prog).flatten()}));
    const std::size_t n = R * k;
    for (std::size_t row = 0; row < R; ++row) {
      std::vector<float> x(v.begin() + std::ptrdiff_t(row * N),
                           v.begin() + std::ptrdiff_t((row + 1) * N));
      auto want = top_k_reference(x, k, largest, order);
      for (std::size_t j = 0; j < k; ++j) {
        const std::size_t at = row * k + j;
        EXPECT_EQ(r[at], x[want[j]]) << "k " << k << " row " << row << " #" << j;
        EXPECT_EQ(r[n + at], x[want[j]]);
        EXPECT_EQ(r[2 * n + at], 100 + float(row * N + want[j]));
        EXPECT_EQ(r[3 * n + at], x[want[j]]);
        EXPECT_EQ(r[4 * n + at], float(want[j]));
      }
    }
  }
  // popnn::topK: the K largest of each row, largest first with `sort`, with their columns.
  Rig s;
  Tensor in = s.input({R, N}, v);
  Tensor indices;
  Sequence prog;
  Tensor top = popnn::topK(s.graph, in, indices, 3, true, prog);
  auto r =
      s.run(prog, concat({top.flatten(), popops::cast(s.graph, indices, FLOAT, prog).flatten()}));
  for (std::size_t row = 0; row < R; ++row) {
    std::vector<float> x(v.begin() + std::ptrdiff_t(row * N),
                         v.begin() + std::ptrdiff_t((row + 1) * N));
    auto want = top_k_reference(x, 3, true, popops::SortOrder::DESCENDING);
    for (std::size_t j = 0; j < 3; ++j) {
      EXPECT_EQ(r[row * 3 + j], x[want[j]]);
      EXPECT_EQ(r[R * 3 + row * 3 + j], float(want[j]));
    }
  }
}

TEST(PopLibs, TopKRefusesAKLargerThanTheRow) {
  Rig s;
  Tensor t = s.input({2, 4}, iota(8));
  Sequence prog;
  try {
    popops::topK(s.graph, prog, t, popops::TopKParams(5, true, popops::SortOrder::NONE));
    FAIL() << "k = 5 of 4 elements was accepted";
  } catch (const poputil::poplibs_error& x) {
    EXPECT_NE(std::string(x.what()).find("k is 5 but the innermost dimension of {2,4} has 4"),
              std::string::npos)
        << x.what();
  }
  Tensor other = s.input({2, 3}, iota(6));
  EXPECT_THROW(popops::topKKeyValue(s.graph, prog, t, other,
                                    popops::TopKParams(2, true, popops::SortOrder::NONE)),
               poputil::poplibs_error);
  Tensor indices;
  EXPECT_THROW(popnn::topK(s.graph, t.flatten(), indices, 2, true, prog), poputil::poplibs_error);
}

TEST(PopLibs, CalcLossScalesCrossEntropyDeltasAndLoss) {
  // Outputs of SOFTMAX_SCALED: probabilities times modelOutputScaling.
  const float p[] = {0.2f, 0.7f, 0.1f, 0.5f, 0.25f, 0.25f};
  const unsigned label[] = {1, 0};
  const float mos = 4.0f, ds = 8.0f;
  Rig s;
  std::vector<float> scaled;
  for (float x : p) scaled.push_back(x * mos);
  Tensor outputs = s.input({2, 3}, scaled);
  Tensor labels = s.graph.addVariable(UNSIGNED_INT, {2}, VariableMappingMethod::LINEAR);
  s.graph.setInitialValue(labels, ArrayRef<unsigned>({label[0], label[1]}));
  Tensor deltasScale = s.input({}, {ds}), modelOutputScaling = s.input({}, {mos});
  Tensor loss = s.graph.addVariable(FLOAT, {2}, VariableMappingMethod::LINEAR);
  Tensor deltas = s.graph.addVariable(FLOAT, {2, 3}, VariableMappingMethod::LINEAR);
  Tensor numCorrect = s.graph.addVariable(UNSIGNED_INT, {1}, VariableMappingMethod::LINEAR);
  s.graph.setInitialValue(numCorrect, ArrayRef<unsigned>({0u}));
  Sequence prog;
  prog.add(popnn::calcLoss(s.graph, outputs, labels, loss, deltas, deltasScale, modelOutputScaling,
                           numCorrect, popnn::CROSS_ENTROPY_LOSS));
  auto r =
      s.run(prog, concat({loss, deltas.flatten(), popops::cast(s.graph, numCorrect, FLOAT, prog)}));
  for (unsigned b = 0; b < 2; ++b) {
    // Loss.hpp: the loss of the unscaled probability; deltas scaled by deltasScale / scaling.
    EXPECT_NEAR(r[b], -std::log(p[b * 3 + label[b]]), 1e-5) << b;
    for (unsigned c = 0; c < 3; ++c)
      EXPECT_NEAR(r[2 + b * 3 + c], (p[b * 3 + c] - (c == label[b] ? 1.0f : 0.0f)) * ds, 1e-5)
          << b << "," << c;
  }
  EXPECT_EQ(r[8], 2.0f);  // both rows' largest output is at their label

  Rig bad;
  Tensor o = bad.input({2, 3}, scaled);
  Tensor l = bad.graph.addVariable(UNSIGNED_INT, {2}, VariableMappingMethod::LINEAR);
  Tensor two = bad.input({2}, {1, 1});
  Tensor ls = bad.graph.addVariable(FLOAT, {2}, VariableMappingMethod::LINEAR);
  Tensor d = bad.graph.addVariable(FLOAT, {2, 3}, VariableMappingMethod::LINEAR);
  try {
    popnn::calcLoss(bad.graph, o, l, ls, d, two, bad.input({}, {1}), popnn::CROSS_ENTROPY_LOSS);
    FAIL() << "a deltasScale of two elements was accepted";
  } catch (const poputil::poplibs_error& x) {
    EXPECT_NE(std::string(x.what()).find("deltasScale must be one float or half element"),
              std::string::npos)
        << x.what();
  }
}

namespace {
// Draws without a seed tensor after poprand::setSeed(master): u1; after setSeed of another
// seed: u2; after setHwSeeds of the seeds saved after the first setSeed: u3. Returns u1, u2, u3
// (2,000 values each) and the saved seeds.
struct Draws {
  std::vector<float> u[3];
  std::vector<unsigned> seeds;
};
Draws draw_after_set_seed(const Device& device, std::array<unsigned, 2> master,
                          unsigned threads = 0) {
  Graph g(device.getTarget());
  poprand::addCodelets(g);
  popops::addCodelets(g);
  Tensor seed = g.addVariable(UNSIGNED_INT, {2}, "masterSeed");
  g.setTileMapping(seed, 0);
  Tensor other = g.addConstant<unsigned>(UNSIGNED_INT, {2}, {99u, 98u});
  g.setTileMapping(other, 1);
  Tensor ref = g.addVariable(FLOAT, {2000}, VariableMappingMethod::LINEAR);
  Sequence prog;
  poprand::setSeed(g, seed, 7, prog);
  Tensor saved = getHwSeeds(g, prog);
  Tensor u1 = poprand::uniform(g, nullptr, 0, ref, FLOAT, 0.0, 1.0, prog);
  poprand::setSeed(g, other, 7, prog);
  Tensor u2 = poprand::uniform(g, nullptr, 0, ref, FLOAT, 0.0, 1.0, prog);
  setHwSeeds(g, saved, prog);
  Tensor u3 = poprand::uniform(g, nullptr, 0, ref, FLOAT, 0.0, 1.0, prog);
  g.createHostWrite("seed", seed);
  g.createHostRead("u", concat({u1, u2, u3}));
  g.createHostRead("saved", saved);
  if (threads) setenv("TESSERA_THREADS", std::to_string(threads).c_str(), 1);
  Engine e(g, prog);
  e.load(device);
  e.writeTensor("seed", master.data(), master.data() + 2);
  e.run();
  if (threads) unsetenv("TESSERA_THREADS");
  Draws d;
  std::vector<float> all(6000);
  e.readTensor("u", all.data(), all.data() + all.size());
  for (int k = 0; k < 3; ++k) d.u[k].assign(all.begin() + k * 2000, all.begin() + (k + 1) * 2000);
  d.seeds.resize(saved.numElements());
  e.readTensor("saved", d.seeds.data(), d.seeds.data() + d.seeds.size());
  return d;
}
}  // namespace

TEST(PopLibs, SetSeedDoesNothingOnTheIpuModel) {
  // Spec 001: every IPU Model tile has the same hard-coded seed; setSeed is a no-op.
  Device model = ipu_test::model_device(8);
  Draws a = draw_after_set_seed(model, {1, 2}), b = draw_after_set_seed(model, {3, 4});
  for (unsigned s : a.seeds) EXPECT_EQ(s, 0u);
  EXPECT_EQ(a.u[0], a.u[1]);
  EXPECT_EQ(a.u[0], b.u[0]);
  EXPECT_EQ(a.u[0], a.u[2]);
}

TEST(PopLibs, SetSeedSeedsEveryTileOfAnIpuDeterministically) {
  auto devices = DeviceManager::createDeviceManager().getDevices(TargetType::IPU, 1);
  ASSERT_FALSE(devices.empty());
  Device& ipu = devices.front();
  ASSERT_TRUE(ipu.attach());
  const unsigned tiles = ipu.getTarget().getNumTiles(),
                 workers = ipu.getTarget().getNumWorkerContexts();
  Draws a = draw_after_set_seed(ipu, {1, 2}, 1);
  Draws again = draw_after_set_seed(ipu, {1, 2}, 8);
  Draws b = draw_after_set_seed(ipu, {3, 4});
  // The same seed gives the same seeds and values for any host thread count; another differs.
  EXPECT_EQ(a.seeds, again.seeds);
  EXPECT_EQ(a.u[0], again.u[0]);
  EXPECT_NE(a.seeds, b.seeds);
  EXPECT_NE(a.u[0], b.u[0]);
  // Every tile and worker has its own seed words.
  ASSERT_EQ(a.seeds.size(), std::size_t(tiles) * workers * 4);
  std::set<unsigned> distinct(a.seeds.begin(), a.seeds.end());
  EXPECT_GT(distinct.size(), a.seeds.size() * 9 / 10);
  // Reseeding changes the draws; setHwSeeds of the saved seeds brings the first draws back.
  EXPECT_NE(a.u[0], a.u[1]);
  EXPECT_EQ(a.u[0], a.u[2]);
  double mean = 0;
  for (float x : a.u[0]) {
    EXPECT_GE(x, 0.0f);
    EXPECT_LE(x, 1.0f);
    mean += x;
  }
  EXPECT_NEAR(mean / 2000, 0.5, 0.03);
}

TEST(PopLibs, SeedTensorsOfTheWrongShapeOrTypeAreRefused) {
  Rig s(4);
  Sequence prog;
  Tensor three = s.graph.addVariable(UNSIGNED_INT, {3}, VariableMappingMethod::LINEAR);
  try {
    poprand::setSeed(s.graph, three, 0, prog);
    FAIL() << "a master seed of 3 elements was accepted";
  } catch (const poputil::poplibs_error& x) {
    EXPECT_NE(std::string(x.what()).find("2 unsigned ints; it is unsigned int {3}"),
              std::string::npos)
        << x.what();
  }
  Tensor floats = s.graph.addVariable(FLOAT, {2}, VariableMappingMethod::LINEAR);
  EXPECT_THROW(poprand::setSeed(s.graph, floats, 0, prog), poputil::poplibs_error);
  Tensor seeds = getHwSeeds(s.graph, prog);
  EXPECT_EQ(seeds.shape(),
            (std::vector<std::size_t>{4, s.graph.getTarget().getNumWorkerContexts(), 4}));
  try {
    setHwSeeds(s.graph, seeds.slice(0, 2), prog);
    FAIL() << "seeds of 2 tiles were accepted for 4";
  } catch (const tensor_creation_error& x) {
    EXPECT_NE(std::string(x.what()).find("of shape {4,6,4}"), std::string::npos) << x.what();
  }
}

// popops::pad against numpy.pad's definitions written out here: constant (float, int and a
// one-element tensor), edge and reflect, negative padding truncating, dimensions one after another.
TEST(PopLibs, PadConstantEdgeReflectAndTruncation) {
  Rig s;
  const std::vector<float> v = iota(12, 1);  // [3][4]: 1..12
  Tensor t = s.input({3, 4}, v);
  auto at = [&](std::ptrdiff_t r, std::ptrdiff_t c) {
    return v[static_cast<std::size_t>(r * 4 + c)];
  };
  // Numpy's index maps for one dimension of size n: edge clamps, reflect mirrors without the edge.
  auto edge = [](std::ptrdiff_t i, std::ptrdiff_t n) {
    return std::clamp<std::ptrdiff_t>(i, 0, n - 1);
  };
  auto reflect = [](std::ptrdiff_t i, std::ptrdiff_t n) {
    return i < 0 ? -i : i >= n ? 2 * (n - 1) - i : i;
  };
  struct Case {
    Tensor padded;
    std::ptrdiff_t rows, cols, lo_r, lo_c;
    std::function<float(std::ptrdiff_t, std::ptrdiff_t)> want;
  };
  Tensor val = s.graph.addConstant<float>(FLOAT, {}, 7.5f);
  s.graph.setTileMapping(val, 0);
  auto constant = [&](float c) {
    return [&, c](std::ptrdiff_t r, std::ptrdiff_t q) {
      return r >= 0 && r < 3 && q >= 0 && q < 4 ? at(r, q) : c;
    };
  };
  std::vector<Case> cases;
  cases.push_back({popops::pad(s.graph, t, {1, 2}, {2, 1}, -1.0f), 6, 7, 1, 2, constant(-1.0f)});
  cases.push_back({popops::pad(s.graph, t, {0, 1}, {1, 0}, val), 4, 5, 0, 1, constant(7.5f)});
  cases.push_back({popops::pad(s.graph, t, 2, 1, 1, 3.0f, popops::padding::MappingMethod::EDGE), 3,
                   7, 0, 2, constant(3.0f)});
  cases.push_back({popops::pad(t, {2, 1}, {1, 3}, popops::padding::Type::EDGE), 6, 8, 2, 1,
                   [&](auto r, auto q) { return at(edge(r, 3), edge(q, 4)); }});
  cases.push_back({popops::pad(t, {2, 3}, {1, 2}, popops::padding::Type::REFLECT), 6, 9, 2, 3,
                   [&](auto r, auto q) { return at(reflect(r, 3), reflect(q, 4)); }});
  // Negative padding truncates: rows 1..2, then columns 0..2 with one reflected column after.
  cases.push_back({popops::pad(t, {-1, 0}, {0, -1}, popops::padding::Type::EDGE), 2, 3, -1, 0,
                   [&](auto r, auto q) { return at(r, q); }});
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    ASSERT_EQ(c.padded.shape(),
              (std::vector<std::size_t>{std::size_t(c.rows), std::size_t(c.cols)}))
        << k;
  }
  std::vector<Tensor> flat;
  for (const Case& c : cases) flat.push_back(c.padded.flatten());
  Sequence prog;
  Tensor all = s.graph.clone(concat(flat));
  prog.add(Copy(concat(flat), all));
  auto r = s.run(prog, all);
  std::size_t at_flat = 0;
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    for (std::ptrdiff_t i = 0; i < c.rows; ++i)
      for (std::ptrdiff_t j = 0; j < c.cols; ++j)
        EXPECT_EQ(r[at_flat++], c.want(i - c.lo_r, j - c.lo_c))
            << "case " << k << " at " << i << "," << j;
  }
  // The EDGE mapping puts each pad element on its edge element's tile.
  const auto edge_map = s.graph.getTileMapping(t.slice(3, 4, 1));
  const auto pad_map = s.graph.getTileMapping(cases[2].padded.slice(5, 7, 1));
  for (std::size_t row = 0; row < 3; ++row) {
    auto tile_of = [](const Graph::TileToTensorMapping& m, std::size_t e) {
      for (std::size_t tile = 0; tile < m.size(); ++tile)
        for (const auto& iv : m[tile])
          if (e >= iv.begin() && e < iv.end()) return tile;
      return m.size();
    };
    EXPECT_EQ(tile_of(pad_map, row * 2), tile_of(edge_map, row));
    EXPECT_EQ(tile_of(pad_map, row * 2 + 1), tile_of(edge_map, row));
  }
  // Errors say what is wrong.
  EXPECT_THROW(popops::pad(t, {3, 0}, {0, 0}, popops::padding::Type::REFLECT),
               poputil::poplibs_error);
  EXPECT_THROW(
      popops::pad(s.graph, t, std::vector<std::ptrdiff_t>{1}, std::vector<std::ptrdiff_t>{1}, 0.0f),
      poputil::poplibs_error);
  EXPECT_THROW(popops::pad(s.graph, t, -2, -2, 0, 0.0f), poputil::poplibs_error);
  // An empty dimension has no edge element to take a mapping from; tile 0 serves.
  Tensor none = s.graph.addVariable(FLOAT, {0, 4});
  EXPECT_THROW(popops::pad(s.graph, none, 1, 0, 0, 0.0f, popops::padding::MappingMethod::EDGE),
               poputil::poplibs_error);
  EXPECT_EQ(popops::pad(s.graph, none, 1, 0, 0, 0.0f).shape(), (std::vector<std::size_t>{1, 4}));
  EXPECT_THROW(popops::pad(s.graph, t, {1, 1}, {1, 1}, s.input({2}, {1, 2})),
               poputil::poplibs_error);
}
