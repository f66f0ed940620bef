// A small convolutional network built with PopLibs: conv 3x3 + bias + ReLU, a depthwise 3x3 conv,
// max pooling, batch normalisation with folded statistics, global average pooling (popops
// reduce), a fully connected layer and softmax. Prints the top class of each image and the
// Poplar-style profile summary.
#include <cstdio>
#include <iostream>
#include <vector>

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/Convolution.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popnn/BatchNorm.hpp>
#include <popnn/NonLinearity.hpp>
#include <popnn/Pooling.hpp>
#include <popnn/codelets.hpp>
#include <popops/Reduce.hpp>
#include <popops/codelets.hpp>
#include <poprand/RandomGen.hpp>
#include <poprand/codelets.hpp>
#include <poputil/TileMapping.hpp>

using namespace poplar;
using namespace poplar::program;

namespace {
Tensor weights(Graph& g, Sequence& prog, const Tensor& seed, unsigned mod, const Tensor& like) {
  Tensor w = poprand::normal(g, &seed, mod, like, FLOAT, 0.0, 0.3, prog);
  prog.add(Copy(w, like));
  return like;
}
}  // namespace

int main() {
  IPUModel model("ipu2");
  model.tilesPerIPU = 128;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);
  popnn::addCodelets(graph);
  poprand::addCodelets(graph);
  Tensor seed = graph.addConstant<unsigned>(UNSIGNED_INT, {2}, {99u, 1u}, "seed");
  graph.setTileMapping(seed, 0);
  Sequence prog;
  poplin::PlanningCache cache;

  const std::size_t N = 2, C = 3, H = 16, W = 16, F = 8, classes = 5;
  poplin::ConvParams c1(FLOAT, N, {H, W}, {3, 3}, C, F, 1);
  c1.inputTransform.paddingLower = {1, 1};
  c1.inputTransform.paddingUpper = {1, 1};
  Tensor image = poplin::createInput(graph, c1, "image");
  std::vector<float> pixels(image.numElements());
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = float((i * 37) % 101) / 101.0f;
  graph.setInitialValue(image, ArrayRef<float>(pixels));

  Tensor k1 = weights(graph, prog, seed, 1, poplin::createWeights(graph, c1, "k1", {}, &cache));
  Tensor a1 = poplin::convolution(graph, image, k1, c1, false, prog, "conv1", {}, &cache);
  Tensor bias1 = poplin::createBiases(graph, a1, "bias1");
  graph.setInitialValue(bias1, 0.05f);
  poplin::addBias(graph, a1, bias1, prog, "bias1");
  popnn::nonLinearityInPlace(graph, popnn::NonLinearityType::RELU, a1, prog, "relu1");

  // Depthwise 3x3, stride 2: one group per channel.
  poplin::ConvParams dw(FLOAT, N, {H, W}, {3, 3}, 1, 1, F);
  dw.inputTransform.paddingLower = {1, 1};
  dw.inputTransform.paddingUpper = {1, 1};
  dw.outputTransform.stride = {2, 2};
  Tensor k2 = weights(graph, prog, seed, 2, poplin::createWeights(graph, dw, "k2", {}, &cache));
  Tensor a2 = poplin::convolution(graph, a1, k2, dw, false, prog, "depthwise", {}, &cache);

  popnn::pooling::PoolParams pp(popnn::PoolingType::MAX, {H / 2, W / 2}, {2, 2}, {2, 2}, {0, 0},
                                {0, 0}, F, N, FLOAT);
  Tensor a3 = popnn::pooling::pool(graph, pp, a2, prog, "maxpool");
  Tensor scale = graph.addVariable(FLOAT, {F}, "bnScale"), shift = graph.addVariable(FLOAT, {F}, "bnShift");
  poputil::mapTensorLinearly(graph, scale);
  poputil::mapTensorLinearly(graph, shift);
  graph.setInitialValue(scale, 0.9f);
  graph.setInitialValue(shift, 0.01f);
  Tensor a4 = popnn::bn::batchNormalise(graph, a3, scale, shift, prog, "bn");
  Tensor gap = popops::reduce(graph, a4, FLOAT, {2, 3}, {popops::Operation::ADD, 1.0f / 16}, prog, "gap");
  Tensor fc = poplin::createMatMulInputRHS(graph, FLOAT, {N, F}, {F, classes}, "fc", {}, &cache);
  weights(graph, prog, seed, 3, fc);
  Tensor logits = poplin::matMul(graph, gap, fc, prog, FLOAT, "fc", {}, &cache);
  Tensor probs = popnn::nonLinearity(graph, popnn::NonLinearityType::SOFTMAX, logits, prog, "softmax");
  graph.createHostRead("probs", probs);

  Engine engine(graph, prog);
  engine.load(device);
  engine.run(0);
  std::vector<float> p(N * classes);
  engine.readTensor("probs", p.data(), p.data() + p.size());
  for (std::size_t n = 0; n < N; ++n) {
    std::size_t best = 0;
    for (std::size_t c = 1; c < classes; ++c)
      if (p[n * classes + c] > p[n * classes + best]) best = c;
    std::printf("image %zu: class %zu (p = %.3f)\n", n, best, p[n * classes + best]);
  }
  std::cout << poplin::reportPlan(graph, c1, {}, &cache) << "\n";
  engine.printProfileSummary(std::cout, {{"showExecutionSteps", "false"}});
  return 0;
}
