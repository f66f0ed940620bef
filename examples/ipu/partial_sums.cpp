// A matrix-vector product split into partial sums over column blocks, then a reduction, in the
// style of Graphcore's tutorials: the codelets live in this file (compiled with __POPC__ by
// addCodelets(__FILE__)), streams are connected through their DataStream, the IPU Model's sync
// delay is set, and the Engine's report is read back with libpva.
#ifdef __POPC__

#include <poplar/Vertex.hpp>

using namespace poplar;

// Dot product of one row block with the matching block of the vector.
class BlockDot : public Vertex {
 public:
  Input<Vector<float>> row;
  Input<Vector<float>> vec;
  Output<float> partial;

  bool compute() {
    float s = 0;
    for (unsigned i = 0; i < row.size(); ++i) s += row[i] * vec[i];
    *partial = s;
    return true;
  }
};

// Sum of one row's partial sums.
class SumPartials : public Vertex {
 public:
  Input<Vector<float>> partials;
  Output<float> out;

  bool compute() {
    float s = 0;
    for (auto p : partials) s += p;
    *out = s;
    return true;
  }
};

#else

#include <cmath>
#include <filesystem>
#include <iostream>
#include <vector>

#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <pva/pva.hpp>

using namespace poplar;
using namespace poplar::program;

int main() {
  const unsigned rows = 48, cols = 96, blocks = 4;
  IPUModel model;
  model.tilesPerIPU = 64;
  model.minIPUSyncDelay = 0;  // a sync costs nothing: the steps' cycles are compute and exchange
  model.relativeSyncDelay = IPUModel::RelativeSyncDelayType::NO_DELAY;
  Device device = model.createDevice();
  Graph graph(device);
  graph.addCodelets(__FILE__);

  Tensor matrix = graph.addVariable(FLOAT, {rows, cols}, "matrix");
  Tensor vec = graph.addVariable(FLOAT, {cols}, "vec");
  Tensor partials = graph.addVariable(FLOAT, {rows, blocks}, "partials");
  Tensor result = graph.addVariable(FLOAT, {rows}, "result");
  const unsigned tiles = graph.getTarget().getNumTiles();
  for (unsigned c = 0; c < cols; ++c) graph.setTileMapping(vec[c], c * tiles / cols);

  ComputeSet dots = graph.addComputeSet("dots");
  for (unsigned b = 0; b < blocks; ++b) {
    unsigned c0 = b * cols / blocks, c1 = (b + 1) * cols / blocks;
    for (unsigned r = 0; r < rows; ++r) {
      unsigned tile = (b * rows + r) * tiles / (blocks * rows);
      auto v = graph.addVertex(dots, "BlockDot",
                               {{"row", matrix[r].slice(c0, c1)},
                                {"vec", vec.slice(c0, c1)},
                                {"partial", partials[r][b]}});
      graph.setTileMapping(v, tile);
      graph.setTileMapping(matrix[r].slice(c0, c1), tile);
      graph.setTileMapping(partials[r][b], tile);
      graph.setPerfEstimate(v, 5 + (c1 - c0 + 1) / 2);  // two multiply-adds a cycle
    }
  }
  ComputeSet sums = graph.addComputeSet("sums");
  for (unsigned r = 0; r < rows; ++r) {
    auto v = graph.addVertex(sums, "SumPartials", {{"partials", partials[r]}, {"out", result[r]}});
    graph.setTileMapping(v, r * tiles / rows);
    graph.setTileMapping(result[r], r * tiles / rows);
    graph.setPerfEstimate(v, 5 + (blocks + 1) / 2);
  }

  DataStream inMatrix = graph.addHostToDeviceFIFO("matrix", FLOAT, rows * cols);
  DataStream inVec = graph.addHostToDeviceFIFO("vec", FLOAT, cols);
  DataStream out = graph.addDeviceToHostFIFO("result", FLOAT, rows);
  Sequence prog(Copy(inMatrix, matrix), Copy(inVec, vec), Execute(dots), Execute(sums),
                Copy(result, out));

  std::string reports = (std::filesystem::temp_directory_path() / "tessera_partial_sums").string();
  Engine engine(graph, prog, {{"autoReport.all", "true"}, {"autoReport.directory", reports}});
  engine.load(device);
  std::vector<float> hMatrix(rows * cols), hVec(cols), hOut(rows);
  for (unsigned c = 0; c < cols; ++c) {
    hVec[c] = float(c % 7) - 3;
    for (unsigned r = 0; r < rows; ++r) hMatrix[r * cols + c] = float((r + c) % 5) * 0.5f;
  }
  engine.connectStream(inMatrix, hMatrix.data());
  engine.connectStream(inVec, hVec.data());
  engine.connectStream(out, hOut.data());
  engine.run();

  for (unsigned r = 0; r < rows; ++r) {
    double want = 0;
    for (unsigned c = 0; c < cols; ++c) want += double(hMatrix[r * cols + c]) * hVec[c];
    if (std::fabs(hOut[r] - want) > 1e-4 * (1 + std::fabs(want))) {
      std::cerr << "row " << r << ": " << hOut[r] << ", expected " << want << "\n";
      return 1;
    }
  }
  auto report = pva::openReport(reports + "/profile.pop");
  std::cout << "Partial sums OK: " << rows << " rows, " << blocks << " blocks\n"
            << "Compute sets: " << report.compilation().graph().numComputeSets() << "\n"
            << "Vertices: " << report.compilation().graph().numVertices() << "\n"
            << "Tiles: " << report.compilation().target().numTiles() << "\n"
            << "Runs: " << report.execution().runs().size() << "\n";
  std::filesystem::remove_all(reports);
  return 0;
}

#endif
