// A Poplar program built against an installed Tessera: squares a tensor with a codelet.
#include <iostream>

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

using namespace poplar;
using namespace poplar::program;

int main() {
  IPUModel model;
  model.tilesPerIPU = 2;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  graph.addCodelets(CONSUMER_CODELETS);
  Tensor v = graph.addVariable(FLOAT, {3}, "v");
  graph.setTileMapping(v, 1);
  graph.setInitialValue(v, ArrayRef<float>({1.0f, 2.0f, 3.0f}));
  ComputeSet cs = graph.addComputeSet("square");
  graph.setTileMapping(graph.addVertex(cs, "Square", {{"v", v}}), 1);
  graph.createHostRead("v", v);
  Engine engine(graph, Execute(cs));
  engine.load(device);
  engine.run();
  float out[3];
  engine.readTensor("v", out, out + 3);
  std::cout << out[0] << ' ' << out[1] << ' ' << out[2] << '\n';
  return out[0] == 1.0f && out[1] == 4.0f && out[2] == 9.0f ? 0 : 1;
}
