// Poplar and PopLibs calls as Graphcore's public tutorials and API reference write them: the CPU
// target, streams named by their DataStream, Poplar's earlier setCycleEstimate, reductions into
// compute sets, graph functions, vertex template names, tile mappings with an offset, and the
// slicing helpers (sliceable tensors, slices into an output, multiUpdateAdd).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>
#include <sstream>
#include <fstream>
#include <vector>

#include <poplar/DeviceManager.hpp>
#include <poplar/Executable.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <popnn/Loss.hpp>
#include <popnn/codelets.hpp>
#include <popops/DynamicSlice.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Reduce.hpp>
#include <popops/ScaledAdd.hpp>
#include <popops/codelets.hpp>
#include <poputil/GraphFunction.hpp>
#include <poputil/TileMapping.hpp>
#include <poputil/VertexTemplates.hpp>
#include <poputil/exceptions.hpp>
#include <pva/pva.hpp>

#include "ipu_test_util.h"
#include <unistd.h>

using namespace poplar;
using namespace poplar::program;
namespace pe = popops::expr;

namespace compat {
enum class Mode { Fast, Exact };
}  // namespace compat

// A program's own template argument, spelled the way PopLibs spells its enums.
template <>
struct poputil::VertexTemplateToString<compat::Mode> {
  static std::string to_string(const compat::Mode& m) {
    return m == compat::Mode::Fast ? "compat::Mode::Fast" : "compat::Mode::Exact";
  }
};

namespace {

std::vector<float> read_floats(Engine& e, const std::string& handle, std::size_t n) {
  return ipu_test::read<float>(e, handle, n);
}

TEST(PoplarCompat, CpuTargetPutsEverythingOnItsOneTile) {
  // graphcore/tutorials' first tut6 maps nothing: a CPU target has a single tile.
  Graph graph(Target::createCPUTarget());
  EXPECT_EQ(graph.getTarget().getTargetType(), TargetType::CPU);
  EXPECT_EQ(graph.getTarget().getNumTiles(), 1u);
  popops::addCodelets(graph);
  Tensor x = graph.addVariable(FLOAT, {4}, "x");
  Tensor c = graph.addConstant<float>(FLOAT, {4}, {1, 2, 3, 4});
  Sequence prog(Copy(c, x));
  Tensor y = popops::map(graph, pe::_1 * pe::_1, {x}, prog);
  auto out = graph.addDeviceToHostFIFO("out", FLOAT, 4);
  prog.add(Copy(y, out));
  Engine engine(graph, prog);
  engine.load(Device::createCPUDevice());
  std::vector<float> h(4);
  engine.connectStream(out, h.data());  // by the DataStream, as Poplar allows
  engine.run();
  EXPECT_EQ(h, (std::vector<float>{1, 4, 9, 16}));
  EXPECT_GT(engine.tesseraTotalCycles(), 0u);
}

TEST(PoplarCompat, TargetTypesOfModelHardwareAndCpuDevices) {
  EXPECT_EQ(IPUModel().createDevice().getTarget().getTargetType(), TargetType::IPU_MODEL);
  auto hw = DeviceManager::createDeviceManager().getDevices(TargetType::IPU, 1);
  ASSERT_EQ(hw.size(), 1u);
  EXPECT_EQ(hw[0].getTarget().getTargetType(), TargetType::IPU);
  // An IPU Model target still needs every tensor mapped.
  Graph graph(IPUModel().createDevice().getTarget());
  graph.addVariable(FLOAT, {4}, "unmapped");
  EXPECT_THROW({ Engine e(graph, Sequence{}); }, invalid_tile_mapping);
}

TEST(PoplarCompat, SetCycleEstimateTimesAVertexAsSetPerfEstimateDoes) {
  auto cycles = [](bool old_name) {
    Device dev = ipu_test::model_device(2);
    Graph graph(dev.getTarget());
    graph.addCodelets(ipu_test::kCodelets);
    Tensor d = ipu_test::variable_on(graph, 8, 0, "d");
    graph.setInitialValue(d, ArrayRef<float>(std::vector<float>(8, 1.0f)));
    ComputeSet cs = graph.addComputeSet("cs");
    VertexRef v = graph.addVertex(cs, "Scale", {{"data", d}});
    graph.setInitialValue(v["factor"], 2.0f);
    graph.setTileMapping(v, 0);
    if (old_name)
      graph.setCycleEstimate(v, 5000);
    else
      graph.setPerfEstimate(v, 5000);
    Engine engine(graph, Execute(cs));
    engine.load(dev);
    engine.run();
    return engine.tesseraTotalCycles();
  };
  EXPECT_EQ(cycles(true), cycles(false));
  EXPECT_GT(cycles(true), 5000u);
}

TEST(PoplarCompat, RelativeSyncDelayIsAcceptedAndMinSyncDelayTimesTheSync) {
  auto cycles = [](unsigned min_sync) {
    IPUModel model;
    model.tilesPerIPU = 2;
    model.minIPUSyncDelay = min_sync;
    model.relativeSyncDelay = IPUModel::RelativeSyncDelayType::NO_DELAY;
    Device dev = model.createDevice();
    Graph graph(dev);
    Tensor a = ipu_test::variable_on(graph, 4, 0, "a"), b = ipu_test::variable_on(graph, 4, 1, "b");
    graph.setInitialValue(a, ArrayRef<float>(std::vector<float>(4, 1.0f)));
    Engine engine(graph, Copy(a, b));
    engine.load(dev);
    engine.run();
    return engine.tesseraTotalCycles();
  };
  EXPECT_EQ(cycles(100) - cycles(0), 100u);  // one superstep, one sync
}

TEST(PoplarCompat, ReductionIntoComputeSetsTheCallerExecutes) {
  // graphcore/examples' advanced_example: reduceWithOutput appends compute sets to a vector.
  Device dev = ipu_test::model_device(4);
  Graph g(dev.getTarget());
  popops::addCodelets(g);
  Tensor x = g.addVariable(FLOAT, {4, 2}, VariableMappingMethod::LINEAR);
  g.setInitialValue(x, ArrayRef<float>({1, 4, 2, 3, 3, 2, 4, 1}));
  Tensor out = g.addVariable(FLOAT, {4}, VariableMappingMethod::LINEAR);
  std::vector<ComputeSet> css;
  popops::reduceWithOutput(g, x, out, {1}, popops::ReduceParams(popops::Operation::ADD), css,
                           "reduction");
  ASSERT_FALSE(css.empty());
  std::vector<ComputeSet> more;
  Tensor mx = popops::reduce(g, x, {0}, popops::Operation::MAX, more);
  Sequence seq;
  for (auto& cs : css) seq.add(Execute(cs));
  for (auto& cs : more) seq.add(Execute(cs));
  g.createHostRead("out", concat(out, mx));
  Engine engine(g, seq);
  engine.load(dev);
  engine.run();
  EXPECT_EQ(read_floats(engine, "out", 6), (std::vector<float>{5, 5, 5, 5, 4, 4}));
}

TEST(PoplarCompat, GraphFunctionsApplyOneBodyToManyArguments) {
  for (bool inlined : {true, false}) {
    Device dev = ipu_test::model_device(4);
    Graph g(dev.getTarget());
    popops::addCodelets(g);
    Tensor a = g.addVariable(FLOAT, {4}, VariableMappingMethod::LINEAR);
    Tensor b = g.addVariable(FLOAT, {4}, VariableMappingMethod::LINEAR);
    g.setInitialValue(a, ArrayRef<float>({1, 2, 3, 4}));
    g.setInitialValue(b, ArrayRef<float>({10, 20, 30, 40}));
    namespace gf = poputil::graphfn;
    // y = 2x + 1, built once.
    gf::TensorFunction twice_plus_one(
        g, {gf::input(a, "x")},
        [&](std::vector<Tensor>& args, Sequence& body) {
          return popops::map(g, pe::_1 * pe::Const(2.0f) + pe::Const(1.0f), {args[0]}, body);
        },
        inlined);
    // x += 1 in place.
    gf::VoidFunction increment(
        g, {gf::inout(a, "x")},
        [&](std::vector<Tensor>& args, Sequence& body) {
          popops::addInPlace(g, args[0], 1.0f, body);
        },
        inlined);
    Sequence prog;
    std::vector<Tensor> args_a = {a}, args_b = {b};
    Tensor ya = twice_plus_one(args_a, prog);
    Tensor yb = twice_plus_one(args_b, prog);
    increment(args_b, prog);
    increment(args_b, prog);
    g.createHostRead("out", concat({ya, yb, b}));
    Engine engine(g, prog);
    engine.load(dev);
    engine.run();
    EXPECT_EQ(read_floats(engine, "out", 12),
              (std::vector<float>{3, 5, 7, 9, 21, 41, 61, 81, 12, 22, 32, 42}))
        << (inlined ? "inlined" : "called");
    std::vector<Tensor> wrong = {g.addVariable(FLOAT, {5}, VariableMappingMethod::LINEAR)};
    Sequence unused;
    EXPECT_THROW(increment(wrong, unused), poputil::poplibs_error);
  }
}

TEST(PoplarCompat, VertexTemplateNamesUseVertexTemplateToString) {
  EXPECT_EQ(poputil::templateVertex("Foo", compat::Mode::Exact, HALF, "x", 3u, false),
            "Foo<compat::Mode::Exact,half,x,3,false>");
  EXPECT_EQ(poputil::templateVertex("Bar"), "Bar");
  EXPECT_EQ(poputil::VertexTemplateToString<int>::to_string(-2), "-2");
}

TEST(PoplarCompat, LinearMappingsFromAnOffsetInEitherDirection) {
  Device dev = ipu_test::model_device(16);
  Graph g(dev.getTarget());
  Tensor t = g.addVariable(FLOAT, {64}, "t");
  poputil::mapTensorLinearlyWithOffset(g, t, 1, 1, 3);
  auto m = g.getTileMapping(t);
  ASSERT_EQ(m[3].size(), 1u);
  EXPECT_EQ(m[3][0], Interval(0, 4));  // first elements on tile `offset`
  EXPECT_EQ(m[2][0], Interval(60, 64));  // wraps round to the tile before it
  EXPECT_EQ(poputil::getTileImbalance(g, t), 0u);
  Tensor d = g.addVariable(FLOAT, {64}, "d");
  poputil::mapTensorLinearlyWithOffset(g, d, 1, 1, 0, false);
  EXPECT_EQ(g.getTileMapping(d)[15][0], Interval(0, 4));  // descending from the last tile
  EXPECT_EQ(g.getTileMapping(d)[0][0], Interval(60, 64));
  Tensor lump = g.addVariable(FLOAT, {64}, "lump");
  g.setTileMapping(lump, 5);
  EXPECT_EQ(poputil::getTileImbalance(g, lump), 60u);  // 64 on one tile where 4 would balance
  EXPECT_EQ(poputil::getTileImbalance(g, lump, 32), 32u);
  for (unsigned k = 0; k < 16; ++k)
    EXPECT_EQ(poputil::transformTileIndex(poputil::invTransformTileIndex(k, 16, 5, false), 16, 5,
                                          false),
              k);
  Tensor grid = g.addVariable(FLOAT, {4, 16}, "grid");
  for (unsigned c = 0; c < 16; ++c) g.setTileMapping(grid.slice({0, c}, {4, c + 1}), c);
  EXPECT_FALSE(poputil::dimIsSplitOverTiles(g, grid, 0));
  EXPECT_TRUE(poputil::dimIsSplitOverTiles(g, grid, 1));
}

TEST(PoplarCompat, SliceableTensorsSliceIntoOutputsAndUpdateAdd) {
  Device dev = ipu_test::model_device(8);
  Graph g(dev.getTarget());
  popops::addCodelets(g);
  // An embedding of 6 rows of 16: each row's columns spread over the tiles, rows kept whole.
  Tensor table = popops::createSliceableTensor(g, FLOAT, {6, 16}, {0}, {1}, 0, "table");
  EXPECT_FALSE(poputil::dimIsSplitOverTiles(g, table, 0));
  EXPECT_TRUE(poputil::dimIsSplitOverTiles(g, table, 1));
  std::vector<float> init(96);
  for (int i = 0; i < 96; ++i) init[i] = float(i);
  g.setInitialValue(table, ArrayRef<float>(init));
  Tensor offs = g.addConstant<unsigned>(UNSIGNED_INT, {3, 1}, {4, 1, 4});
  g.setTileMapping(offs, 0);
  Tensor one = g.addConstant<unsigned>(UNSIGNED_INT, {1}, {2});
  g.setTileMapping(one, 0);
  Tensor slices = popops::createSliceTensor(g, table, {0}, {1}, 3, "slices");
  EXPECT_EQ(slices.shape(), (std::vector<std::size_t>{3, 1, 16}));
  Sequence prog;
  Tensor row = g.addVariable(FLOAT, {1, 16}, VariableMappingMethod::LINEAR);
  popops::dynamicSliceWithOutput(g, row, table, one, {0}, {1}, prog);
  std::vector<float> ones(48, 1.0f);
  g.setInitialValue(slices, ArrayRef<float>(ones));
  Tensor scale = g.addConstant<float>(FLOAT, {}, {0.5f});
  g.setTileMapping(scale, 0);
  popops::multiUpdateAdd(g, table, slices, offs, scale, {0}, {1}, prog);
  g.createHostRead("out", concat(row.flatten(), table.flatten()));
  Engine engine(g, prog);
  engine.load(dev);
  engine.run();
  auto r = read_floats(engine, "out", 16 + 96);
  for (int c = 0; c < 16; ++c) EXPECT_EQ(r[c], float(32 + c));
  for (int i = 0; i < 96; ++i) {
    int rr = i / 16;
    float add = rr == 4 ? 1.0f : rr == 1 ? 0.5f : 0.0f;  // row 4 twice, row 1 once
    EXPECT_EQ(r[16 + i], float(i) + add) << "element " << i;
  }
  Tensor wrong_scale = g.addConstant<int>(INT, {}, {1});
  g.setTileMapping(wrong_scale, 0);
  EXPECT_THROW(popops::multiUpdateAdd(g, table, slices, offs, wrong_scale, {0}, {1}, prog),
               poputil::poplibs_error);
  EXPECT_THROW(popops::createSliceableTensor(g, FLOAT, {6, 16}, {2}, {1}), poputil::poplibs_error);
}

TEST(PoplarCompat, PvaReadsTheReportAnEngineWrote) {
  // graphcore/tutorials' tut4 libpva example: the Engine writes profile.pop, pva reads it.
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tessera_pva_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  Device dev = ipu_test::model_device(4);
  Graph g(dev.getTarget());
  popops::addCodelets(g);
  Tensor x = g.addVariable(FLOAT, {16}, VariableMappingMethod::LINEAR);
  g.setInitialValue(x, ArrayRef<float>(std::vector<float>(16, 2.0f)));
  Sequence prog;
  popops::mulInPlace(g, x, x, prog);
  popops::addInPlace(g, x, 1.0f, prog);
  Engine engine(g, prog, {{"autoReport.all", "true"}, {"autoReport.directory", dir.string()}});
  engine.load(dev);
  engine.run();
  engine.run();
  auto report = pva::openReport((dir / "profile.pop").string());
  auto live = engine.getReport();
  for (const auto& r : {report, live}) {
    EXPECT_EQ(r.compilation().graph().numComputeSets(), 2u);
    EXPECT_EQ(r.compilation().target().numTiles(), 4u);
    EXPECT_EQ(r.compilation().target().numIPUs(), 1u);
    EXPECT_EQ(r.compilation().target().bytesPerTile(), dev.getTarget().getBytesPerTile());
    EXPECT_EQ(r.execution().runs().size(), 2u);
    EXPECT_FALSE(r.poplarVersion().string().empty());
    EXPECT_FALSE(r.compilation().tiles().empty());
  }
  EXPECT_EQ(pva::openReport(dir.string()).compilation().graph().numVertices(),
            report.compilation().graph().numVertices());
  EXPECT_TRUE(engine.getReport(false).execution().runs().empty());
  std::ofstream(dir / "bad.pop") << "SQLite format 3";
  EXPECT_THROW(pva::openReport((dir / "bad.pop").string()), parse_error);
  EXPECT_THROW(pva::openReport((dir / "missing.pop").string()), file_load_error);
  fs::remove_all(dir);
}

TEST(PoplarCompat, ArgMaxAndAccuracyCountAcrossSteps) {
  // The simple_apps regression demo: calcLoss with numCorrect, run once per sample in a Repeat.
  Device dev = ipu_test::model_device(4);
  Graph g(dev.getTarget());
  popops::addCodelets(g);
  popnn::addCodelets(g);
  Tensor probs = g.addVariable(FLOAT, {3, 4}, VariableMappingMethod::LINEAR);
  g.setInitialValue(probs, ArrayRef<float>({0.1f, 0.6f, 0.2f, 0.1f,     // argmax 1
                                            0.4f, 0.1f, 0.1f, 0.4f,     // tie: first, 0
                                            0.0f, 0.2f, 0.3f, 0.5f}));  // argmax 3
  Tensor labels = g.addVariable(UNSIGNED_INT, {3}, VariableMappingMethod::LINEAR);
  g.setInitialValue(labels, ArrayRef<unsigned>({1u, 3u, MASKED_LABEL_CODE}));
  Tensor loss = g.addVariable(FLOAT, {3}, VariableMappingMethod::LINEAR);
  Tensor deltas = g.addVariable(FLOAT, {3, 4}, VariableMappingMethod::LINEAR);
  Tensor numCorrect = g.addVariable(UNSIGNED_INT, {1}, VariableMappingMethod::LINEAR);
  g.setInitialValue(numCorrect, ArrayRef<unsigned>({0u}));
  Sequence prog;
  auto [mn, at] = popnn::minAndArgMin(g, probs, prog);
  Tensor am = popnn::argMax(g, probs, prog);
  EXPECT_EQ(am.elementType(), UNSIGNED_INT);
  // Two steps: one right (row 0), one wrong (row 1), one masked (row 2), counted twice.
  prog.add(Repeat(2, popnn::calcLoss(g, probs, labels, loss, deltas, numCorrect,
                                     popnn::CROSS_ENTROPY_LOSS)));
  g.createHostRead("idx", concat({am, at, numCorrect}));
  g.createHostRead("min", mn);
  g.createHostRead("loss", concat(loss, deltas.flatten()));
  Engine engine(g, prog);
  engine.load(dev);
  engine.run();
  EXPECT_EQ(ipu_test::read<unsigned>(engine, "idx", 7),
            (std::vector<unsigned>{1, 0, 3, 0, 1, 0, 2}));
  EXPECT_EQ(read_floats(engine, "min", 3), (std::vector<float>{0.1f, 0.1f, 0.0f}));
  auto ld = read_floats(engine, "loss", 15);
  EXPECT_NEAR(ld[0], -std::log(0.6f), 1e-6);
  EXPECT_NEAR(ld[1], -std::log(0.4f), 1e-6);
  EXPECT_EQ(ld[2], 0.0f);  // a masked label has no loss ...
  EXPECT_NEAR(ld[3 + 1], 0.6f - 1.0f, 1e-6);
  for (int c = 0; c < 4; ++c) EXPECT_EQ(ld[3 + 8 + c], 0.0f);  // ... and no deltas
  Tensor bad = g.addVariable(FLOAT, {1}, VariableMappingMethod::LINEAR);
  EXPECT_THROW(popnn::calcAccuracy(g, probs, labels, bad), poputil::poplibs_error);
}

TEST(PoplarCompat, SupervisorVertexHoldsEveryExecutionSlot) {
  auto run = [](const char* type, std::uint64_t* cycles) {
    Device dev = ipu_test::model_device(2);
    Graph g(dev.getTarget());
    g.addCodelets(std::string(TESSERA_IPU_TEST_CODELETS) + "/supervisor.cpp");
    Tensor counts = g.addVariable(INT, {5}, "counts");
    g.setTileMapping(counts, 1);
    g.setInitialValue(counts, ArrayRef<int>({0, 1, 2, 3, 4}));
    ComputeSet cs = g.addComputeSet("count");
    VertexRef v = g.addVertex(cs, type, {{"counts", counts}});
    g.setTileMapping(v, 1);
    g.setPerfEstimate(v, 600);
    g.createHostRead("counts", counts);
    Engine engine(g, Execute(cs));
    engine.load(dev);
    engine.run();
    *cycles = engine.tesseraTotalCycles();
    return ipu_test::read<int>(engine, "counts", 5);
  };
  std::uint64_t supervisor = 0, worker = 0;
  EXPECT_EQ(run("CountUp", &supervisor), (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(run("CountUpOnAWorker", &worker), (std::vector<int>{1, 2, 3, 4, 5}));
  // 600 cycles of the supervisor are 600 tile cycles; on one worker they are 600 x workers.
  unsigned workers = ipu_test::model_device(2).getTarget().getNumWorkerContexts();
  EXPECT_EQ(worker - supervisor, 600u * (workers - 1));
}

TEST(PoplarCompat, ScaledAddAndSubtractWithScaleTensors) {
  Device dev = ipu_test::model_device(4);
  Graph g(dev.getTarget());
  popops::addCodelets(g);
  auto vec = [&](std::vector<float> v) {
    Tensor t = g.addVariable(FLOAT, {v.size()}, VariableMappingMethod::LINEAR);
    g.setInitialValue(t, ArrayRef<float>(v));
    return t;
  };
  Tensor a = vec({1, 2, 3, 4}), b = vec({10, 20, 30, 40}), c = vec({1, 1, 1, 1});
  Tensor d = vec({5, 5, 5, 5});
  Tensor two = vec({2}), half_ = vec({0.5f});
  Sequence prog;
  popops::scaledAddTo(g, a, two, b, half_, prog);        // a = 2a + b/2
  popops::scaledSubtractFrom(g, c, b, half_, prog);      // c = c - b/2
  popops::scaledSubtractFrom(g, d, 2.0f, b, 0.1f, prog);  // d = 2d - b/10
  g.createHostRead("out", concat({a, c, d}));
  Engine engine(g, prog);
  engine.load(dev);
  engine.run();
  EXPECT_EQ(read_floats(engine, "out", 12),
            (std::vector<float>{7, 14, 21, 28, -4, -9, -14, -19, 9, 8, 7, 6}));
  EXPECT_THROW(popops::scaledSubtractFrom(g, c, b, b, prog), poputil::poplibs_error);
}

TEST(PoplarCompat, StreamCopyStepsReportTheBytesTheyMove) {
  // A host stream moves each byte once: the step's "Total Data" is the stream's size.
  Device dev = ipu_test::model_device(4);
  Graph g(dev.getTarget());
  Tensor x = g.addVariable(FLOAT, {300}, VariableMappingMethod::LINEAR);
  Tensor y = g.addVariable(FLOAT, {300}, VariableMappingMethod::LINEAR);
  DataStream in = g.addHostToDeviceFIFO("in", FLOAT, 300);
  Sequence prog(Copy(in, x), Copy(x, y.reverse(0)));
  Engine engine(g, prog);
  engine.load(dev);
  std::vector<float> h(300, 1.0f);
  engine.connectStream(in, h.data());
  engine.run();
  std::ostringstream out;
  engine.printProfileSummary(out, {{"showExecutionSteps", "true"}, {"colours", "false"}});
  std::smatch m;
  std::string text = out.str();
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(StreamCopy[^\n]*\n(?:[^\n]*\n)*?\s*Total Data:\s*([0-9,]+))")))
      << text;
  EXPECT_EQ(m[1].str(), "1,200");
}

TEST(PoplarCompat, ExecutablesWithPopLibsCodeletsDeserialize) {
  // graphcore/examples' advanced_example saves an executable that uses popops and loads it.
  Device dev = ipu_test::model_device(4);
  std::stringstream saved;
  std::uint64_t cycles_before = 0;
  std::vector<float> before;
  {
    Graph g(dev.getTarget());
    popops::addCodelets(g);
    g.addCodelets(ipu_test::kCodelets);
    Tensor x = g.addVariable(FLOAT, {4, 2}, VariableMappingMethod::LINEAR);
    g.setInitialValue(x, ArrayRef<float>({1, 4, 2, 3, 3, 2, 4, 1}));
    Sequence prog;
    Tensor y = popops::map(g, pe::_1 * pe::_1, {x}, prog);
    Tensor r = popops::reduce(g, y, {1}, popops::Operation::ADD, prog);
    ComputeSet cs = g.addComputeSet("scale");
    VertexRef v = g.addVertex(cs, "Scale", {{"data", r}});
    g.setInitialValue(v["factor"], 0.5f);
    g.setTileMapping(v, 0);
    prog.add(Execute(cs));
    g.createHostRead("r", r);
    Executable exe = compileGraph(g, {prog});
    exe.serialize(saved);
    Engine engine(compileGraph(g, {prog}));
    engine.load(dev);
    engine.run();
    before = read_floats(engine, "r", 4);
    cycles_before = engine.tesseraTotalCycles();
  }
  Engine engine(Executable::deserialize(saved));
  engine.load(dev);
  engine.run();
  EXPECT_EQ(read_floats(engine, "r", 4), (std::vector<float>{8.5f, 6.5f, 6.5f, 8.5f}));
  EXPECT_EQ(read_floats(engine, "r", 4), before);
  EXPECT_EQ(engine.tesseraTotalCycles(), cycles_before);
}

}  // namespace
