// Control flow (spec 001 §2.2.1): a RepeatWhileTrue loop until a vertex says it converged, a
// counted Repeat, an If and a Switch with a default case.
#include <cmath>
#include <iostream>

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

using namespace poplar;
using namespace poplar::program;

int main() {
  IPUModel ipuModel;
  ipuModel.tilesPerIPU = 2;
  Device device = ipuModel.createDevice();
  Graph graph(device.getTarget());
  graph.addCodelets("vector_codelets.cpp");

  Tensor x = graph.addVariable(FLOAT, {}, "x");
  Tensor more = graph.addVariable(BOOL, {}, "more");
  Tensor mode = graph.addVariable(INT, {}, "mode");
  Tensor result = graph.addVariable(FLOAT, {}, "result");
  Tensor one = graph.addConstant<float>(FLOAT, {}, 1.0f, "one");
  Tensor two = graph.addConstant<float>(FLOAT, {}, 2.0f, "two");
  Tensor three = graph.addConstant<float>(FLOAT, {}, 3.0f, "three");
  for (const Tensor& t : {x, more, mode, result, one, two, three}) graph.setTileMapping(t, 0);
  graph.setInitialValue(x, 100.0f);

  ComputeSet step = graph.addComputeSet("halve");
  VertexRef v = graph.addVertex(step, "Halve", {{"x", x}, {"more", more}});
  graph.setInitialValue(v["tolerance"], 1e-3f);
  graph.setTileMapping(v, 1);

  Sequence prog;
  prog.add(RepeatWhileTrue(Execute(step), more, Sequence()));
  prog.add(Repeat(2, Execute(step)));
  prog.add(If(more, Copy(one, result), Copy(two, result)));
  Switch sw(mode, Copy(three, result));
  sw.add(7, Copy(one, result));
  Sequence second({sw});
  graph.createHostRead("x", x);
  graph.createHostRead("result", result);
  graph.createHostWrite("mode", mode);

  Engine engine(graph, {prog, second});
  engine.load(device);
  engine.run(0);
  float hx, r1, r2;
  engine.readTensor("x", &hx, &hx + 1);
  engine.readTensor("result", &r1, &r1 + 1);
  int m = 7;
  engine.writeTensor("mode", &m, &m + 1);
  engine.run(1);
  engine.readTensor("result", &r2, &r2 + 1);
  std::cout << "x converged to " << hx << "; If chose " << r1 << "; Switch(7) chose " << r2
            << "\nmodeled cycles: " << engine.tesseraTotalCycles() << '\n';
  return std::fabs(hx - 2.0f) < 1e-3f && r1 == 2.0f && r2 == 1.0f ? 0 : 1;
}
