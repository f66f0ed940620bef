// A small MLP built with PopLibs, as a Poplar user writes it: two fully connected layers
// (poplin::matMul), a bias and ReLU (popops, popnn), softmax, and the cross-entropy loss
// (popnn::calcLoss), with weights from poprand. Prints the class probabilities and the loss.
#include <cstdio>
#include <iostream>
#include <vector>

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popnn/Loss.hpp>
#include <popnn/NonLinearity.hpp>
#include <popnn/codelets.hpp>
#include <popops/ElementWise.hpp>
#include <popops/codelets.hpp>
#include <poprand/RandomGen.hpp>
#include <poprand/codelets.hpp>
#include <poputil/TileMapping.hpp>

using namespace poplar;
using namespace poplar::program;

int main() {
  IPUModel model("ipu2");
  model.tilesPerIPU = 64;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);
  popnn::addCodelets(graph);
  poprand::addCodelets(graph);

  const std::size_t batch = 4, in = 32, hidden = 64, classes = 10;
  poplin::PlanningCache cache;
  Tensor x = poplin::createMatMulInputLHS(graph, FLOAT, {batch, in}, {in, hidden}, "x", {}, &cache);
  Tensor w1 = poplin::createMatMulInputRHS(graph, FLOAT, {batch, in}, {in, hidden}, "w1", {}, &cache);
  Tensor w2 = poplin::createMatMulInputRHS(graph, FLOAT, {batch, hidden}, {hidden, classes}, "w2",
                                           {}, &cache);
  Tensor b1 = graph.addVariable(FLOAT, {hidden}, "b1");
  poputil::mapTensorLinearly(graph, b1);
  Tensor labels = graph.addVariable(UNSIGNED_INT, {batch}, "labels");
  poputil::mapTensorLinearly(graph, labels);
  Tensor seed = graph.addConstant<unsigned>(UNSIGNED_INT, {2}, {2024u, 7u}, "seed");
  graph.setTileMapping(seed, 0);

  std::vector<float> xs(batch * in);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = float(i % 7) / 7.0f - 0.4f;
  graph.setInitialValue(x, ArrayRef<float>(xs));
  graph.setInitialValue(b1, 0.1f);
  graph.setInitialValue(labels, ArrayRef<unsigned>({1u, 3u, 5u, 7u}));

  Sequence prog;
  // Weights: truncated normal draws (poprand), copied into the planned layouts.
  prog.add(Copy(poprand::truncatedNormal(graph, &seed, 0, w1, FLOAT, 0.0, 0.2, 2.0, prog), w1));
  prog.add(Copy(poprand::truncatedNormal(graph, &seed, 1, w2, FLOAT, 0.0, 0.2, 2.0, prog), w2));
  Tensor h = poplin::matMul(graph, x, w1, prog, FLOAT, "fc1", {}, &cache);
  popops::addInPlace(graph, h, b1.expand({0}), prog, "bias1");
  popnn::nonLinearityInPlace(graph, popnn::NonLinearityType::RELU, h, prog, "relu");
  Tensor logits = poplin::matMul(graph, h, w2, prog, FLOAT, "fc2", {}, &cache);
  Tensor probs = popnn::nonLinearity(graph, popnn::NonLinearityType::SOFTMAX, logits, prog, "softmax");
  Tensor loss = graph.addVariable(FLOAT, {batch}, "loss");
  poputil::mapTensorLinearly(graph, loss);
  Tensor deltas = graph.addVariable(FLOAT, {batch, classes}, "deltas");
  poputil::mapTensorLinearly(graph, deltas);
  popnn::calcLoss(graph, probs, labels, loss, deltas, popnn::CROSS_ENTROPY_LOSS, prog, "loss");
  graph.createHostRead("probs", probs);
  graph.createHostRead("loss", loss);

  Engine engine(graph, prog);
  engine.load(device);
  engine.run(0);
  std::vector<float> p(batch * classes), l(batch);
  engine.readTensor("probs", p.data(), p.data() + p.size());
  engine.readTensor("loss", l.data(), l.data() + l.size());
  for (std::size_t b = 0; b < batch; ++b) {
    float sum = 0;
    std::printf("sample %zu:", b);
    for (std::size_t c = 0; c < classes; ++c) {
      std::printf(" %.3f", p[b * classes + c]);
      sum += p[b * classes + c];
    }
    std::printf("  (sum %.3f) loss %.4f\n", sum, l[b]);
  }
  engine.printProfileSummary(std::cout, {{"showExecutionSteps", "false"}});
  return 0;
}
