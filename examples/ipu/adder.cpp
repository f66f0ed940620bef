// The adder of spec 001 §2.8: a codelet compiled from source when the program runs.
#include <iostream>

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

using namespace poplar;
using namespace poplar::program;

int main() {
  IPUModel ipuModel("ipu1");
  Device device = ipuModel.createDevice();
  Graph graph(device.getTarget());
  graph.addCodelets("adder_codelets.cpp", CodeletFileType::Auto, "-O3");

  Tensor x = graph.addVariable(FLOAT, {4}, "x");
  Tensor y = graph.addConstant<float>(FLOAT, {4}, {10, 20, 30, 40}, "y");
  Tensor sum = graph.addVariable(FLOAT, {4}, "sum");
  graph.setTileMapping(x, 0);
  graph.setTileMapping(y, 1);
  ComputeSet cs = graph.addComputeSet("add");
  for (unsigned i = 0; i < 4; ++i) {
    graph.setTileMapping(sum[i], i);
    VertexRef v = graph.addVertex(cs, "AdderVertex");
    graph.connect(v["x"], x[i]);
    graph.connect(v["y"], y[i]);
    graph.connect(v["sum"], sum[i]);
    graph.setTileMapping(v, i);
  }
  graph.createHostWrite("x", x);
  graph.createHostRead("sum", sum);

  Engine engine(graph, Execute(cs));
  engine.load(device);
  float xs[4] = {1, 2, 3, 4}, sums[4];
  engine.writeTensor("x", xs, xs + 4);
  engine.run(0);
  engine.readTensor("sum", sums, sums + 4);
  bool ok = true;
  for (int i = 0; i < 4; ++i) {
    std::cout << xs[i] << " + " << 10 * (i + 1) << " = " << sums[i] << '\n';
    ok = ok && sums[i] == xs[i] + 10.0f * float(i + 1);
  }
  std::cout << "modeled cycles: " << engine.tesseraTotalCycles() << '\n';
  return ok ? 0 : 1;
}
