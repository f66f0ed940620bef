// A matrix-vector product spread over many tiles (the shape of Poplar's tutorial 6): one row
// per vertex, rows spread over the tiles, the vector broadcast by exchange. Prints the profile
// summary of spec 001 §8.2.3.
#include <iostream>
#include <vector>

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

using namespace poplar;
using namespace poplar::program;

int main() {
  const unsigned rows = 256, cols = 128;
  IPUModel ipuModel;
  Device device = ipuModel.createDevice();
  Graph graph(device.getTarget());
  graph.addCodelets("matvec_codelets.cpp", CodeletFileType::Auto, "-O3");
  const unsigned tiles = graph.getTarget().getNumTiles();

  Tensor matrix = graph.addVariable(FLOAT, {rows, cols}, "matrix");
  Tensor vec = graph.addVariable(FLOAT, {cols}, "vector");
  Tensor out = graph.addVariable(FLOAT, {rows}, "out");
  graph.setTileMapping(vec, 0);
  ComputeSet cs = graph.addComputeSet("matvec");
  for (unsigned r = 0; r < rows; ++r) {
    unsigned tile = r * tiles / rows;
    graph.setTileMapping(matrix[r], tile);
    graph.setTileMapping(out[r], tile);
    VertexRef v =
        graph.addVertex(cs, "DotProductVertex", {{"a", matrix[r]}, {"b", vec}, {"out", out[r]}});
    graph.setTileMapping(v, tile);
  }
  graph.createHostWrite("matrix", matrix);
  graph.createHostWrite("vector", vec);
  graph.createHostRead("out", out);

  Engine engine(graph, Execute(cs));
  engine.load(device);
  std::vector<float> m(rows * cols), x(cols), y(rows);
  for (unsigned i = 0; i < m.size(); ++i) m[i] = float(i % 13) * 0.5f;
  for (unsigned j = 0; j < cols; ++j) x[j] = float(j % 5);
  engine.writeTensor("matrix", m.data(), m.data() + m.size());
  engine.writeTensor("vector", x.data(), x.data() + x.size());
  engine.run();
  engine.readTensor("out", y.data(), y.data() + y.size());
  for (unsigned r = 0; r < rows; ++r) {
    double want = 0;
    for (unsigned j = 0; j < cols; ++j) want += double(m[r * cols + j]) * x[j];
    if (std::abs(want - y[r]) > 1e-3 * std::max(1.0, std::abs(want))) {
      std::cerr << "row " << r << ": " << y[r] << ", expected " << want << '\n';
      return 1;
    }
  }
  engine.printProfileSummary(std::cout, {{"showExecutionSteps", "true"}});
  return 0;
}
