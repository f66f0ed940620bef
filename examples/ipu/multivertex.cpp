// A MultiVertex per tile (spec 001 §3.3): each of the tile's 6 workers adds every 6th element.
#include <iostream>
#include <vector>

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

using namespace poplar;
using namespace poplar::program;

int main() {
  IPUModel ipuModel;
  ipuModel.tilesPerIPU = 8;
  Device device = ipuModel.createDevice();
  Graph graph(device.getTarget());
  graph.addCodelets("vector_codelets.cpp");

  const unsigned tiles = 8, perTile = 1000;
  Tensor a = graph.addVariable(UNSIGNED_INT, {tiles, perTile}, "a");
  Tensor b = graph.addVariable(UNSIGNED_INT, {tiles, perTile}, "b");
  Tensor c = graph.addVariable(UNSIGNED_INT, {tiles, perTile}, "c");
  ComputeSet cs = graph.addComputeSet("addTwoVectors");
  for (unsigned t = 0; t < tiles; ++t) {
    for (const Tensor& x : {a, b, c}) graph.setTileMapping(x[t], t);
    VertexRef v = graph.addVertex(cs, "AddTwoVectors", {{"a", a[t]}, {"b", b[t]}, {"c", c[t]}});
    graph.setTileMapping(v, t);
  }
  graph.createHostWrite("a", a);
  graph.createHostWrite("b", b);
  graph.createHostRead("c", c);

  Engine engine(graph, Execute(cs));
  engine.load(device);
  std::vector<unsigned> ha(tiles * perTile), hb(ha.size()), hc(ha.size());
  for (unsigned i = 0; i < ha.size(); ++i) ha[i] = i, hb[i] = 3 * i;
  engine.writeTensor("a", ha.data(), ha.data() + ha.size());
  engine.writeTensor("b", hb.data(), hb.data() + hb.size());
  engine.run();
  engine.readTensor("c", hc.data(), hc.data() + hc.size());
  for (unsigned i = 0; i < hc.size(); ++i)
    if (hc[i] != 4 * i) {
      std::cerr << "c[" << i << "] = " << hc[i] << ", expected " << 4 * i << '\n';
      return 1;
    }
  std::cout << "c = a + b over " << tiles << " tiles x " << perTile << " elements, "
            << device.getTarget().getNumWorkerContexts() << " workers per tile\n"
            << "modeled cycles: " << engine.tesseraTotalCycles() << '\n';
  return 0;
}
