// The Poplar API on the ipu presets: targets, tensors and views, codelets compiled at run time,
// programs, streams, BSP timing and determinism over host threads.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include <gcl/Collectives.hpp>
#include <poplar/CycleCount.hpp>
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include "ipu_test_util.h"
#include "tessera/arch/machine_spec.h"
#include "tessera/profile/profile.h"

using namespace poplar;
using namespace poplar::program;
using namespace ipu_test;

TEST(IpuTarget, FiguresComeFromThePresets) {
  Target mk2 = IPUModel("ipu2").createDevice().getTarget();
  EXPECT_EQ(mk2.getNumTiles(), 1472u);
  EXPECT_EQ(mk2.getTilesPerIPU(), 1472u);
  EXPECT_EQ(mk2.getBytesPerTile(), 638976u);
  EXPECT_EQ(mk2.getNumWorkerContexts(), 6u);
  EXPECT_EQ(mk2.getVectorWidth(FLOAT), 2u);
  EXPECT_EQ(mk2.getVectorWidth(HALF), 4u);
  EXPECT_EQ(mk2.getTypeSize(HALF), 2u);
  EXPECT_EQ(mk2.getAtomicStoreGranularity(), 4u);
  EXPECT_EQ(mk2.getTargetArchString(), "ipu2");
  EXPECT_EQ(mk2.getInterleavedMemoryElementIndex(), 13u);  // spec 001 §7.2.3
  Target mk1 = IPUModel("ipu1").createDevice().getTarget();
  EXPECT_EQ(mk1.getNumTiles(), 1216u);
  EXPECT_EQ(mk1.getBytesPerTile(), 262144u);
  EXPECT_DOUBLE_EQ(mk1.getTileClockFrequency(), 1.6e9);
  EXPECT_EQ(mk1.getMemoryElementOffsets().size(), 12u);  // 8 x 16 KB + 4 x 32 KB, §7.2.1
  EXPECT_EQ(mk1.getInterleavedMemoryElementIndex(), 8u);
  IPUModel model("ipu1");
  EXPECT_EQ(model.tilesPerIPU, 1216u);
  EXPECT_GT(model.minIPUSyncDelay, 0u);
  auto devices = DeviceManager::createDeviceManager().getDevices(TargetType::IPU, 1);
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_TRUE(devices[0].attach());
  EXPECT_EQ(devices[0].getTarget().getNumTiles(), 1472u);
}

TEST(IpuTensor, ViewsNeverCopyAndKeepElementOrder) {
  Device d = model_device();
  Graph g(d.getTarget());
  std::vector<int> values(12);
  std::iota(values.begin(), values.end(), 0);
  Tensor m = g.addConstant<int>(INT, {3, 4}, values, "m");
  g.setTileMapping(m, 0);
  // Each view copied into its own variable and read back.
  struct Case {
    Tensor view;
    std::vector<int> want;
  };
  std::vector<Case> cases = {
      {m.transpose().flatten(), {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}},
      {m.slice(1, 3, 1).flatten(), {1, 2, 5, 6, 9, 10}},
      {m[2], {8, 9, 10, 11}},
      {m.reverse(0).flatten(), {8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3}},
      {m.subSample(2, 1).flatten(), {0, 2, 4, 6, 8, 10}},
      {concat(m[0], m[2]), {0, 1, 2, 3, 8, 9, 10, 11}},
      {m[1].slice(0, 2).broadcast(2, 0), {4, 5, 4, 5}},
      {m[0].slice(0, 2).upsample(2, 0), {0, 0, 1, 1}},
      {m.dimShuffle({1, 0}).reshape({2, 6})[1], {2, 6, 10, 3, 7, 11}},
      {m.expand({0}).squeeze({0}).flatten().slice(3, 6), {3, 4, 5}},
  };
  Sequence prog;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    Tensor out = g.addVariable(INT, {cases[i].view.numElements()});
    g.setTileMapping(out, 1);
    prog.add(Copy(cases[i].view, out));
    g.createHostRead("out" + std::to_string(i), out);
  }
  EXPECT_EQ(m.transpose().shape(), (std::vector<std::size_t>{4, 3}));
  EXPECT_EQ(m.reinterpret(UNSIGNED_SHORT).shape(), (std::vector<std::size_t>{3, 8}));
  EXPECT_TRUE(m.slice(0, 1, 0).isContiguous());
  EXPECT_FALSE(m.transpose().isContiguous());
  Engine e(g, prog);
  e.load(d);
  e.run();
  for (std::size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(read<int>(e, "out" + std::to_string(i), cases[i].want.size()), cases[i].want)
        << "case " << i;
}

TEST(IpuEngine, AdderCodeletComputesAcrossTilesWithExchange) {
  Device d = model_device();
  Graph g(d.getTarget());
  g.addCodelets(kCodelets, CodeletFileType::Auto, "-O3 -DUNUSED_MACRO=1");
  Tensor x = g.addVariable(FLOAT, {1}, "x");
  Tensor y = g.addConstant<float>(FLOAT, {1}, 2.5f, "y");
  Tensor sum = g.addVariable(FLOAT, {1}, "sum");
  g.setTileMapping(x, 1);  // off the vertex's tile: exchanged
  g.setTileMapping(y, 0);
  g.setTileMapping(sum, 0);
  ComputeSet cs = g.addComputeSet("add");
  VertexRef v = g.addVertex(cs, "AdderVertex", {{"x", x[0]}, {"y", y[0]}});
  g.connect(v["sum"], sum[0]);
  g.setTileMapping(v, 0);
  g.createHostWrite("x", x);
  g.createHostRead("sum", sum);
  Engine e(g, Execute(cs));
  e.load(d);
  float xv = 4.0f;
  e.writeTensor("x", &xv, &xv + 1);
  e.run(0);
  EXPECT_EQ(read<float>(e, "sum", 1)[0], 6.5f);
  // One superstep: compute (the vertex's cycles x 6 worker slots), exchange of 4 B, sync.
  const auto& prof = e.tesseraProfile();
  ASSERT_EQ(prof.kernels.size(), 1u);
  EXPECT_GT(prof.kernels[0].metrics.at("compute_cycles"), 0);
  EXPECT_GT(prof.kernels[0].metrics.at("exchange_cycles"), 0);
  EXPECT_EQ(e.tesseraTotalCycles(), prof.kernels[0].cycles);
}

TEST(IpuEngine, MultiVertexVectorListTemplatesAndState) {
  Device d = model_device();
  Graph g(d.getTarget());
  g.addCodelets(kCodelets);
  Tensor data = g.addVariable(FLOAT, {20}, "data");
  g.setTileMapping(data, 2);
  Tensor rows = g.addVariable(FLOAT, {3, 4}, "rows");
  g.setTileMapping(rows, 3);
  Tensor sums = g.addVariable(FLOAT, {3}, "sums");
  g.setTileMapping(sums, 3);
  Tensor filled = g.addVariable(INT, {5}, "filled");
  g.setTileMapping(filled, 1);
  Tensor gathered = g.addVariable(FLOAT, {2}, "gathered");
  g.setTileMapping(gathered, 0);
  ComputeSet fill = g.addComputeSet("fill");
  VertexRef f = g.addVertex(fill, "Fill< int >", {{"out", filled}});
  g.setInitialValue(f["values"], ArrayRef<int>({7, 8}));
  g.setTileMapping(f, 1);
  ComputeSet cs = g.addComputeSet("work");
  VertexRef s = g.addVertex(cs, "Scale", {{"data", data}});
  g.setInitialValue(s["factor"], 3.0f);
  g.setTileMapping(s, 2);
  VertexRef r = g.addVertex(cs, "RowSum", {{"rows", rows}, {"out", sums}});
  g.setTileMapping(r, 3);
  VertexRef ga = g.addVertex(cs, "Gather");
  g.connect(ga["in"], {data[19], rows[2][3]});
  g.connect(ga["out"], gathered);
  g.setTileMapping(ga, 0);
  std::vector<float> d0(20), r0(12);
  std::iota(d0.begin(), d0.end(), 1.0f);
  std::iota(r0.begin(), r0.end(), 0.0f);
  g.setInitialValue(data, ArrayRef<float>(d0));
  g.setInitialValue(rows, ArrayRef<float>(r0));
  g.createHostRead("data", data);
  g.createHostRead("sums", sums);
  g.createHostRead("filled", filled);
  g.createHostRead("gathered", gathered);
  Engine e(g, Sequence({Execute(fill), Execute(cs)}));
  e.load(d);
  e.run();
  auto out = read<float>(e, "data", 20);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(out[i], 3.0f * float(i + 1));
  EXPECT_EQ(read<float>(e, "sums", 3), (std::vector<float>{6, 22, 38}));
  EXPECT_EQ(read<int>(e, "filled", 5), (std::vector<int>{7, 8, 7, 8, 7}));
  // Gather's inputs were exchanged before the compute set ran, so data[19] is the old 20.
  EXPECT_EQ(read<float>(e, "gathered", 2), (std::vector<float>{20, 11}));
}

TEST(IpuEngine, LoopsConditionsAndSwitch) {
  Device d = model_device();
  Graph g(d.getTarget());
  g.addCodelets(kCodelets);
  Tensor counter = g.addVariable(UNSIGNED_INT, {}, "counter");
  Tensor below = g.addVariable(BOOL, {}, "below");
  Tensor hits = g.addVariable(INT, {3}, "hits");
  Tensor one = g.addConstant<int>(INT, {1}, 1, "one");
  for (const Tensor& t : {counter, below, hits, one}) g.setTileMapping(t, 0);
  g.setInitialValue(counter, 0u);
  g.setInitialValue(hits, ArrayRef<int>({0, 0, 0}));
  ComputeSet inc = g.addComputeSet("inc");
  VertexRef v = g.addVertex(inc, "Increment", {{"counter", counter}, {"below", below}});
  g.setInitialValue(v["limit"], 5u);
  g.setTileMapping(v, 0);
  // while (++counter < 5) {}; then repeat 3 more; if (below) hits[0]=1 else hits[1]=1
  Sequence prog;
  prog.add(RepeatWhileTrue(Execute(inc), below, Sequence()));
  prog.add(Repeat(3, Execute(inc)));
  prog.add(If(below, Copy(one, hits.slice(0, 1)), Copy(one, hits.slice(1, 2))));
  Switch sw(counter.reshape({1}), Copy(one, hits.slice(0, 1)));
  sw.add(8, Copy(one, hits.slice(2, 3)));
  prog.add(sw);
  g.createHostRead("counter", counter);
  g.createHostRead("hits", hits);
  Engine e(g, prog);
  e.load(d);
  e.run();
  EXPECT_EQ(read<unsigned>(e, "counter", 1)[0], 8u);
  EXPECT_EQ(read<int>(e, "hits", 3), (std::vector<int>{0, 1, 1}));
}

TEST(IpuEngine, StreamsBuffersAndCallbacks) {
  Device d = model_device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {4}, "t");
  g.setTileMapping(t, 0);
  auto in = g.addHostToDeviceFIFO("in", FLOAT, 4);
  auto out = g.addDeviceToHostFIFO("out", FLOAT, 4);
  Engine e(g, Sequence({Copy(in, t), Copy(t, out)}));
  std::vector<float> src = {1, 2, 3, 4, 5, 6, 7, 8}, dst(4);
  e.connectStream("in", src.data(), src.data() + src.size());  // circular: two transfers
  int calls = 0;
  e.connectStreamToCallback("out", [&](void* p) {
    ++calls;
    std::memcpy(dst.data(), p, 16);
  });
  e.load(d);
  e.run();
  EXPECT_EQ(dst, (std::vector<float>{1, 2, 3, 4}));
  e.run();
  EXPECT_EQ(dst, (std::vector<float>{5, 6, 7, 8}));
  EXPECT_EQ(calls, 2);
  EXPECT_GT(e.tesseraTotalCycles(), 0u);
}

TEST(IpuEngine, CycleCountProgramMeasuresTheWrappedProgram) {
  Device d = model_device();
  Graph g(d.getTarget());
  ComputeSet cs = add_scale(g, variable_on(g, 600, 0, "data"), 0, 1.0f).cs;
  Sequence prog({Execute(cs), Execute(cs)});
  Tensor cycles = cycleCount(g, prog, 0);
  g.createHostRead("cycles", cycles);
  Engine e(g, prog);
  e.load(d);
  e.run();
  auto words = read<unsigned>(e, "cycles", 2);
  std::uint64_t measured = (std::uint64_t(words[1]) << 32) | words[0];
  EXPECT_EQ(measured, e.tesseraTotalCycles());
  EXPECT_GT(measured, 2 * 600u / 4);  // at least the bytes at 4 B per worker instruction
}

TEST(IpuEngine, PerfEstimatorsAndSetPerfEstimateDecideVertexCycles) {
  Device d = model_device();
  Graph g(d.getTarget());
  g.addCodelets(kCodelets);
  Tensor a = g.addVariable(FLOAT, {8}, "a");
  g.setTileMapping(a, 0);
  ComputeSet cs = g.addComputeSet("fill");
  VertexRef f = g.addVertex(cs, "Fill<float>", {{"out", a}});
  g.setInitialValue(f["values"], ArrayRef<float>({1.0f}));
  g.setTileMapping(f, 0);
  g.registerPerfEstimator("Fill<float>", [](const VertexIntrospector& v, const Target&) {
    return VertexPerfEstimate(100 * v.getFieldInfo("out").size());
  });
  {
    Engine e(g, Execute(cs));
    e.load(d);
    e.run();
    EXPECT_EQ(e.tesseraProfile().kernels[0].metrics.at("compute_cycles"), 800.0 * 6);
  }
  g.setPerfEstimate(f, 10);
  Engine e(g, Execute(cs));
  e.load(d);
  e.run();
  EXPECT_EQ(e.tesseraProfile().kernels[0].metrics.at("compute_cycles"), 60.0);
}

TEST(IpuEngine, OnTileCopiesRunAsPoplarsBuiltInVertices) {
  auto spec = tessera::arch::load_machine("ipu-mk2");
  const auto overhead = std::uint64_t(spec.param("ipu.vertex_overhead_cycles").value);
  const auto per_cycle = std::uint64_t(spec.param("ipu.copy_bytes_per_cycle").value);
  const std::uint64_t workers = 6;
  Device d = model_device();
  Graph g(d.getTarget());
  Tensor a = variable_on(g, 64, 0, "a"), b = variable_on(g, 64, 0, "b");
  Tensor c = g.addVariable(CHAR, {3}, "c"), c2 = g.addVariable(CHAR, {3}, "c2");
  g.setTileMapping(c, 1);
  g.setTileMapping(c2, 1);
  g.setInitialValue(a, 1.0f);
  g.setInitialValue(c, 1);
  Engine e(g, Sequence({Copy(a, b), Copy(a.reshape({8, 8}).transpose().flatten(), b), Copy(c, c2)}));
  e.load(d);
  e.run();
  const auto& kernels = e.tesseraProfile().kernels;
  ASSERT_EQ(kernels.size(), 3u);
  // One 256 B run of 64-bit words; 64 runs of 4 B (a transpose); 3 bytes.
  EXPECT_EQ(kernels[0].metrics.at("compute_cycles"), double(overhead + 256 / per_cycle));
  EXPECT_EQ(kernels[1].metrics.at("compute_cycles"),
            double(overhead + 64 * workers + 256 / (per_cycle / 2)));
  EXPECT_EQ(kernels[2].metrics.at("compute_cycles"), double(overhead + workers + workers));
  // Their code (once per type on a tile) and state (two pointers and a count per run) take
  // tile memory: tile 0 runs two built-in types, tile 1 one.
  const auto code = std::uint64_t(spec.param("ipu.vertex_code_bytes").value);
  const auto edge = std::uint64_t(spec.param("ipu.vertex_state_edge_bytes").value);
  const auto& memory = e.tesseraProfile().memory_high_water;
  EXPECT_EQ(memory.at("tile 0").at("Vertex Code"), 2 * code);
  EXPECT_EQ(memory.at("tile 1").at("Vertex Code"), code);
  EXPECT_EQ(memory.at("tile 1").at("Vertex Instances"), (3 * edge + 7) / 8 * 8);
  EXPECT_EQ(memory.at("tile 0").at("Vertex Instances"), (3 * edge * (1 + 64) + 7) / 8 * 8);
  std::ostringstream summary;
  e.printProfileSummary(summary, {});
  for (const char* type : {"poplar_rt::Memcpy64BitSupervisor", "poplar_rt::DstStridedCopyDA32",
                           "poplar_rt::ShortMemcpy"})
    EXPECT_NE(summary.str().find(type), std::string::npos) << type << "\n" << summary.str();
}

TEST(IpuProfile, SummaryHasTheSectionsOfTheSpec) {
  Device d = model_device();
  Graph g(d.getTarget());
  Tensor data = variable_on(g, 64, 1, "data");
  ComputeSet cs = add_scale(g, data, 1, 2.0f).cs;
  Engine e(g, Repeat(2, Execute(cs)));
  e.load(d);
  e.run();
  std::ostringstream out;
  e.printProfileSummary(out, {{"showExecutionSteps", "true"}, {"colours", "false"}});
  std::string text = out.str();
  for (const char* section :
       {"Target:", "Number of IPUs:", "Graph:", "Number of vertices:", "Memory Usage:",
        "By Memory Region:", "By Data Type:", "Variables:", "Vertex Code:", "By Tile",
        "Execution:", "Total cycles:", "Cycles by vertex type:", "Scale", "Steps", "OnTileExecute",
        "2 executions"})
    EXPECT_NE(text.find(section), std::string::npos) << section << "\n" << text;
  EXPECT_EQ(text.find("\033["), std::string::npos);
  EXPECT_GT(e.tesseraTileBytes(1), 64u * 4);
  EXPECT_EQ(e.tesseraTileBytes(3), 0u);
  EXPECT_EQ(e.tesseraProfile().kernels.size(), 2u);
  EXPECT_FALSE(e.tesseraProfile().memory_high_water.empty());
}

TEST(IpuCodelets, PopcObjectLoadsWithoutCompiling) {
  std::string gp = testing::TempDir() + "/basic.gp";
  std::string cmd = std::string(TESSERA_IPU_POPC) + " " + kCodelets + " -O2 -o " + gp;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  Device d = model_device();
  Graph g(d.getTarget());
  g.addCodelets(gp);
  EXPECT_TRUE(g.hasCodelet("AdderVertex"));
  EXPECT_TRUE(g.hasCodelet("Fill<int>"));
}

// Graphcore's examples declare vertex fields in a `class` without `public:` (private);
// addCodelets registers them all.
TEST(IpuCodelets, PrivateFieldsRegister) {
  std::string path = testing::TempDir() + "/private_fields.cpp";
  std::ofstream(path) << "#include <poplar/Vertex.hpp>\n"
                         "using namespace poplar;\n"
                         "class Twice : public Vertex {\n"
                         "  Input<float> in;\n"
                         "  Output<float> out;\n"
                         "  float offset;\n"
                         " public:\n"
                         "  bool compute() { *out = *in * 2 + offset; return true; }\n"
                         "};\n";
  Device d = model_device();
  Graph g(d.getTarget());
  g.addCodelets(path);
  Tensor in = variable_on(g, 1, 0, "in"), out = variable_on(g, 1, 1, "out");
  g.setInitialValue(in, 3.5f);
  ComputeSet cs = g.addComputeSet("twice");
  VertexRef v = g.addVertex(cs, "Twice", {{"in", in}, {"out", out}});
  g.setInitialValue(v["offset"], 0.25f);
  g.setTileMapping(v, 1);
  g.createHostRead("out", out);
  Engine e(g, Execute(cs));
  e.load(d);
  e.run();
  EXPECT_EQ(read<float>(e, "out", 1)[0], 3.5f * 2 + 0.25f);
}

// ---- determinism: results and cycles for 1, 2 and 8 host threads ----
namespace {
std::string digest() {
  Device d = model_device(16);
  Graph g(d.getTarget());
  g.addCodelets(kCodelets);
  Tensor data = g.addVariable(FLOAT, {16, 50}, "data");
  Tensor sums = g.addVariable(FLOAT, {16}, "sums");
  ComputeSet scale = g.addComputeSet("scale"), sum = g.addComputeSet("sum");
  for (unsigned t = 0; t < 16; ++t) {
    g.setTileMapping(data[t], t);
    g.setTileMapping(sums[t], (t + 1) % 16);
    VertexRef s = g.addVertex(scale, "Scale", {{"data", data[t]}});
    g.setInitialValue(s["factor"], 1.5f + float(t));
    g.setTileMapping(s, t);
    VertexRef r = g.addVertex(sum, "RowSum");
    g.connect(r["rows"], std::vector<Tensor>{data[t]});
    g.connect(r["out"], sums.slice(t, t + 1));
    g.setTileMapping(r, t);
  }
  std::vector<float> init(800);
  for (std::size_t i = 0; i < init.size(); ++i) init[i] = float(i % 7) * 0.25f;
  g.setInitialValue(data, ArrayRef<float>(init));
  g.createHostRead("sums", sums);
  Engine e(g, Repeat(3, Sequence({Execute(scale), Execute(sum)})));
  e.load(d);
  e.run();
  auto s = read<float>(e, "sums", 16);
  std::ostringstream out;
  out << e.tesseraTotalCycles();
  for (float v : s) out << ' ' << v;
  // Two replicas of 8 tiles, each fed its own data by a stream, then summed over the replicas.
  Device d2 = model_device(8, 2);
  Graph rg(d2.getTarget(), replication_factor(2));
  rg.addCodelets(kCodelets);
  Tensor rdata = rg.addVariable(FLOAT, {8, 40}, "rdata");
  ComputeSet rscale = rg.addComputeSet("rscale");
  for (unsigned t = 0; t < 8; ++t) {
    rg.setTileMapping(rdata[t], (t + 3) % 8);
    VertexRef v = rg.addVertex(rscale, "Scale", {{"data", rdata[t]}});
    rg.setInitialValue(v["factor"], 0.5f + float(t));
    rg.setTileMapping(v, t);
  }
  auto in = rg.addHostToDeviceFIFO("rin", FLOAT, 320);
  rg.createHostRead("rdata", rdata);
  Sequence rprog({Copy(in, rdata), Repeat(2, Execute(rscale))});
  gcl::allReduceInPlaceCrossReplica(rg, rdata, gcl::CollectiveOperator::ADD, rprog);
  Engine re(rg, rprog);
  std::vector<float> rin(640);
  for (std::size_t i = 0; i < rin.size(); ++i) rin[i] = float(i % 11) * 0.5f;
  re.connectStream("rin", rin.data(), rin.data() + rin.size());
  re.load(d2);
  re.run();
  out << " | " << re.tesseraTotalCycles();
  for (float v : read<float>(re, "rdata", 640)) out << ' ' << v;
  return out.str();
}
}  // namespace

TEST(IpuDigest, Print) {
  std::printf("DIGEST %s\n", digest().c_str());
}

TEST(IpuDeterminism, SameResultsAndCyclesFor1_2And8HostThreads) {
  std::vector<std::string> digests;
  for (const char* threads : {"1", "2", "8"}) {
    std::string cmd = std::string("TESSERA_THREADS=") + threads + " " +
                      std::filesystem::read_symlink("/proc/self/exe").string() +
                      " --gtest_filter=IpuDigest.Print";
    std::istringstream output(run_command(cmd));
    std::string found;
    for (std::string line; std::getline(output, line);)
      if (line.rfind("DIGEST ", 0) == 0) found = line + '\n';
    ASSERT_FALSE(found.empty()) << "no digest with " << threads << " threads";
    digests.push_back(found);
  }
  EXPECT_EQ(digests[0], digests[1]);
  EXPECT_EQ(digests[0], digests[2]);
  std::string here = "DIGEST ";
  here += digest();
  here += '\n';
  EXPECT_EQ(digests[0], here);
}

TEST(IpuGraph, VirtualGraphsMapOntoTheirParentsTilesAndHalfIsTwoBytes) {
  Device d = model_device(8);
  Graph g(d.getTarget());
  Graph stage = g.createVirtualGraph(4, 8);
  EXPECT_EQ(stage.getTarget().getNumTiles(), 4u);
  Tensor h = stage.addVariable(HALF, {3}, "h");
  stage.setTileMapping(h, 1);  // tile 5 of the parent
  auto mapping = g.getTileMapping(h);
  ASSERT_EQ(mapping.size(), 8u);
  ASSERT_EQ(mapping[5].size(), 1u);
  EXPECT_EQ(mapping[5][0], Interval(0, 3));
  EXPECT_EQ(stage.getTileMapping(h)[1][0], Interval(0, 3));
  std::vector<float> values = {0.5f, -2.0f, 65504.0f};
  stage.setInitialValue(h, ArrayRef<float>(values));
  Tensor out = g.addVariable(HALF, {3}, "out");
  g.setTileMapping(out, 0);
  g.createHostRead("out", out);
  Engine e(g, Copy(h, out));
  e.load(d);
  e.run();
  std::uint16_t raw[3];
  e.readTensor("out", raw, raw + 3);
  float back[3];
  copyDeviceHalfToFloat(g.getTarget(), raw, back, 3);
  EXPECT_EQ(std::vector<float>(back, back + 3), values);
  EXPECT_EQ(raw[0], 0x3800);  // IEEE half 0.5
  EXPECT_GT(e.tesseraTileBytes(5), 0u);
}
