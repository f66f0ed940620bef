// PopLibs speed (issue 10): a 2048 x 2048 x 2048 half matMul on the full ipu-mk2 (1,472 tiles),
// reported as the fraction of the preset's modeled AMP peak (amp_macs_per_cycle MACs per tile per
// cycle) over the whole superstep sequence, exchange and syncs included. Counters: cycles,
// peak_cycles, fraction_of_peak; host time is the benchmark's own.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>
#include <vector>

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popops/codelets.hpp>

#include "tessera/arch/machine_spec.h"

using namespace poplar;
using namespace poplar::program;

namespace {

void BM_MatMulHalf2048(benchmark::State& state) {
  const std::size_t n = 2048;
  for (auto _ : state) {
    IPUModel model("ipu2");
    Device device = model.createDevice();
    Graph graph(device.getTarget());
    popops::addCodelets(graph);
    poplin::addCodelets(graph);
    poplin::PlanningCache cache;
    OptionFlags options{{"partialsType", "half"}};
    Tensor a = poplin::createMatMulInputLHS(graph, HALF, {n, n}, {n, n}, "A", options, &cache);
    Tensor b = poplin::createMatMulInputRHS(graph, HALF, {n, n}, {n, n}, "B", options, &cache);
    Sequence prog;
    Tensor c = poplin::matMul(graph, a, b, prog, HALF, "C", options, &cache);
    (void)c;
    Engine engine(graph, prog);
    engine.load(device);
    engine.run(0);
    if (std::getenv("TESSERA_BENCH_SUMMARY")) engine.printProfileSummary(std::cout);
    double macs_per_cycle =
        graph.getTarget().tesseraSpec().params.at("ipu.amp_macs_per_cycle").value;
    double peak = double(n) * n * n / (macs_per_cycle * graph.getTarget().getNumTiles());
    double cycles = double(engine.tesseraTotalCycles());
    state.counters["cycles"] = cycles;
    state.counters["peak_cycles"] = peak;
    state.counters["fraction_of_peak"] = peak / cycles;
    state.SetLabel(poplin::reportPlan(graph, HALF, HALF, {n, n}, {n, n}, options, &cache));
  }
}
BENCHMARK(BM_MatMulHalf2048)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
