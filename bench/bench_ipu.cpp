// IPU target speed (issue 9): a compute set over all 1,472 tiles of ipu-mk2 with one MultiVertex
// per tile doing a*x+y over 10,000 floats, against a plain C++ loop over the same data; and
// Engine creation for a graph of 100,000 vertices.
#include <benchmark/benchmark.h>

#include <vector>

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

using namespace poplar;
using namespace poplar::program;

namespace {

const std::string kCodelets = std::string(TESSERA_BENCH_DIR) + "/ipu/bench_codelets.cpp";
constexpr unsigned kPerTile = 10000;

void BM_PlainLoopAxpy(benchmark::State& state) {
  const std::size_t n = std::size_t(1472) * kPerTile;
  std::vector<float> x(n, 1.0f), y(n, 2.0f);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] + y[i];
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_PlainLoopAxpy)->Unit(benchmark::kMillisecond);

void BM_IpuAxpyAllTiles(benchmark::State& state) {
  IPUModel model("ipu2");
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  graph.addCodelets(kCodelets, CodeletFileType::Auto, "-O3 -DTESSERA_IPU_UNCHECKED");
  const unsigned tiles = graph.getTarget().getNumTiles();
  Tensor x = graph.addVariable(FLOAT, {tiles, kPerTile}, "x");
  Tensor y = graph.addVariable(FLOAT, {tiles, kPerTile}, "y");
  ComputeSet cs = graph.addComputeSet("axpy");
  for (unsigned t = 0; t < tiles; ++t) {
    graph.setTileMapping(x[t], t);
    graph.setTileMapping(y[t], t);
    VertexRef v = graph.addVertex(cs, "Axpy", {{"x", x[t]}, {"y", y[t]}});
    graph.setInitialValue(v["a"], 0.5f);
    graph.setTileMapping(v, t);
  }
  graph.setInitialValue(x, 1.0f);
  graph.setInitialValue(y, 2.0f);
  Engine engine(graph, Execute(cs));
  engine.load(device);
  for (auto _ : state) engine.run();
  state.SetItemsProcessed(state.iterations() * std::int64_t(tiles) * kPerTile);
  state.counters["modeled_cycles_per_run"] =
      double(engine.tesseraTotalCycles()) / double(state.iterations());
}
BENCHMARK(BM_IpuAxpyAllTiles)->Unit(benchmark::kMillisecond);

void BM_IpuEngineCreation100kVertices(benchmark::State& state) {
  IPUModel model("ipu2");
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  graph.addCodelets(kCodelets, CodeletFileType::Auto, "-O3");
  const unsigned tiles = graph.getTarget().getNumTiles(), n = 100000;
  Tensor v = graph.addVariable(FLOAT, {n}, "v");
  ComputeSet cs = graph.addComputeSet("touch");
  for (unsigned i = 0; i < n; ++i) {
    unsigned tile = unsigned(std::uint64_t(i) * tiles / n);
    graph.setTileMapping(v[i], tile);
    VertexRef vr = graph.addVertex(cs, "Touch");
    graph.connect(vr["v"], v[i]);
    graph.setTileMapping(vr, tile);
  }
  for (auto _ : state) {
    Engine engine(graph, Execute(cs));
    benchmark::DoNotOptimize(&engine);
  }
}
BENCHMARK(BM_IpuEngineCreation100kVertices)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
