// Variables, constants, tile mapping, copies and host reads and writes (the shape of Poplar's
// first tutorial) on the simulated IPU Model.
#include <iostream>
#include <vector>

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

using namespace poplar;
using namespace poplar::program;

int main() {
  IPUModel ipuModel;
  Device device = ipuModel.createDevice();
  Target target = device.getTarget();
  Graph graph(target);

  Tensor v1 = graph.addVariable(FLOAT, {2, 4}, "v1");
  Tensor v2 = graph.addVariable(FLOAT, {2, 4}, "v2");
  for (unsigned i = 0; i < 2; ++i) {
    graph.setTileMapping(v1[i], i);
    graph.setTileMapping(v2[i], i + 2);
  }
  Tensor c1 = graph.addConstant<float>(FLOAT, {4}, {1.0, 1.5, 2.0, 2.5});
  graph.setTileMapping(c1, 0);
  Tensor v3 = graph.addVariable(FLOAT, {4, 2}, "v3");
  graph.setTileMapping(v3, 3);

  Sequence prog;
  prog.add(Copy(c1, v1[0]));
  prog.add(Copy(c1, v1[1]));
  prog.add(Copy(v1, v2));
  prog.add(Copy(v2.transpose().slice(0, 4, 0), v3));  // a view: no data is copied to make it
  prog.add(PrintTensor("v3", v3));

  graph.createHostRead("v3-read", v3);
  graph.createHostWrite("v1-write", v1);

  Engine engine(graph, prog);
  engine.load(device);
  engine.run(0);

  std::vector<float> h(8);
  engine.readTensor("v3-read", h.data(), h.data() + h.size());
  const std::vector<float> expected = {1.0, 1.0, 1.5, 1.5, 2.0, 2.0, 2.5, 2.5};
  std::cout << "v3 read back:";
  for (float x : h) std::cout << ' ' << x;
  std::cout << "\nmodeled cycles: " << engine.tesseraTotalCycles() << '\n';
  return h == expected ? 0 : 1;
}
