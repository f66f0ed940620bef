// IPU target faults and user errors (spec 001 §2.8, §3.2.2, §3.3.1, §7.2): each raises the right
// kind (a poplar_error that is also Tessera's UserError or DeviceFault) naming the place and the
// limit.
#include <gtest/gtest.h>

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include "misuse.h"

using namespace poplar;
using namespace poplar::program;

namespace {

const std::string kDir = TESSERA_IPU_TEST_CODELETS;

Device device(unsigned tiles = 4, const char* version = "ipu2") {
  IPUModel m(version);
  m.tilesPerIPU = tiles;
  return m.createDevice();
}

using misuse::message_of;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(IpuFaults, TileOverItsMemoryAtEngineCreation) {
  Device d = device(4, "ipu1");
  Graph g(d.getTarget());
  Tensor big = g.addVariable(FLOAT, {70000}, "weights");  // 280,000 B > 262,144 B
  g.setTileMapping(big, 2);
  std::string msg = message_of<tessera::DeviceFault>([&] { Engine e(g, Sequence()); });
  EXPECT_TRUE(has(msg, "tile 2 needs 280,000 B of 262,144 B")) << msg;
  EXPECT_TRUE(has(msg, "'weights'")) << msg;
  EXPECT_TRUE(has(msg, "map fewer elements")) << msg;
  // Also a poplar error, and allowed (and reported) with debug.allowOutOfMemory.
  message_of<graph_memory_allocation_error>([&] { Engine e(g, Sequence()); });
  Engine e(g, Sequence(), {{"debug.allowOutOfMemory", "true"}});
  std::ostringstream out;
  e.printProfileSummary(out, {{"colours", "false"}});
  EXPECT_TRUE(has(out.str(), "1 tile(s) out of memory")) << out.str();
}

TEST(IpuFaults, ElementWithoutTileMapping) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(INT, {10}, "activations");
  g.setTileMapping(t.slice(0, 6), 0);
  std::string msg = message_of<tessera::UserError>([&] { Engine e(g, Sequence()); });
  EXPECT_TRUE(has(msg, "tensor 'activations'")) << msg;
  EXPECT_TRUE(has(msg, "element 6 has no tile mapping")) << msg;
}

TEST(IpuFaults, UnconnectedVertexField) {
  Device d = device();
  Graph g(d.getTarget());
  g.addCodelets(kDir + "/basic.cpp");
  Tensor x = g.addVariable(FLOAT, {2}, "x");
  g.setTileMapping(x, 0);
  ComputeSet cs = g.addComputeSet("add");
  VertexRef v = g.addVertex(cs, "AdderVertex", {{"x", x[0]}, {"y", x[1]}});
  g.setTileMapping(v, 0);
  std::string msg = message_of<graph_connection_error>([&] { Engine e(g, Execute(cs)); });
  EXPECT_TRUE(has(msg, "vertex 0 (AdderVertex) on tile 0")) << msg;
  EXPECT_TRUE(has(msg, "field 'sum' is not connected")) << msg;
}

TEST(IpuFaults, TwoVerticesOfAComputeSetWriteOneElement) {
  Device d = device();
  Graph g(d.getTarget());
  g.addCodelets(kDir + "/basic.cpp");
  Tensor in = g.addVariable(FLOAT, {2}, "in");
  Tensor out = g.addVariable(FLOAT, {4}, "out");
  g.setTileMapping(in, 0);
  g.setTileMapping(out, 1);
  ComputeSet cs = g.addComputeSet("sums");
  for (unsigned tile : {0u, 1u}) {
    VertexRef v = g.addVertex(cs, "AdderVertex", {{"x", in[0]}, {"y", in[1]}, {"sum", out[3]}});
    g.setTileMapping(v, tile);
  }
  std::string msg = message_of<tessera::UserError>([&] { Engine e(g, Execute(cs)); });
  EXPECT_TRUE(has(msg, "compute set 'sums'")) << msg;
  EXPECT_TRUE(has(msg, "vertices 0 (AdderVertex, field 'sum') and 1")) << msg;
  EXPECT_TRUE(has(msg, "element 3 of tensor 'out'")) << msg;
}

TEST(IpuFaults, ConstraintThatCannotBeMet) {
  Device d = device();
  Graph g(d.getTarget());
  g.addCodelets(kDir + "/basic.cpp");
  Tensor t = g.addVariable(FLOAT, {8}, "buffer");
  g.setTileMapping(t, 0);
  ComputeSet cs = g.addComputeSet("copy");
  VertexRef v =
      g.addVertex(cs, "ConstrainedCopy", {{"src", t.slice(0, 4)}, {"dst", t.slice(2, 6)}});
  g.setTileMapping(v, 0);
  std::string msg = message_of<memory_elem_constraints_error>([&] { Engine e(g, Execute(cs)); });
  EXPECT_TRUE(has(msg, "elem(*src)!=elem(*dst)")) << msg;
  EXPECT_TRUE(has(msg, "tensor 'buffer'")) << msg;
  EXPECT_TRUE(has(msg, "vertex 0 (ConstrainedCopy) on tile 0")) << msg;
  // Distinct tensors meet it.
  Graph g2(d.getTarget());
  g2.addCodelets(kDir + "/basic.cpp");
  Tensor a = g2.addConstant<float>(FLOAT, {4}, 1.5f, "a"), b = g2.addVariable(FLOAT, {4}, "b");
  g2.setTileMapping(a, 0);
  g2.setTileMapping(b, 0);
  ComputeSet cs2 = g2.addComputeSet("copy");
  g2.setTileMapping(g2.addVertex(cs2, "ConstrainedCopy", {{"src", a}, {"dst", b}}), 0);
  Engine ok(g2, Execute(cs2));
  ok.load(d);
  ok.run();
}

TEST(IpuFaults, ReadOfANeverWrittenElementWithTheDebugOption) {
  Device d = device();
  Graph g(d.getTarget());
  g.addCodelets(kDir + "/basic.cpp");
  Tensor x = g.addVariable(FLOAT, {2}, "x");  // x[1] is never written
  Tensor s = g.addVariable(FLOAT, {1}, "s");
  g.setTileMapping(x, 0);
  g.setTileMapping(s, 0);
  g.setInitialValue(x.slice(0, 1), 1.0f);
  ComputeSet cs = g.addComputeSet("add");
  g.setTileMapping(g.addVertex(cs, "AdderVertex", {{"x", x[0]}, {"y", x[1]}, {"sum", s[0]}}), 0);
  Engine plain(g, Execute(cs));
  plain.load(d);
  plain.run();  // undefined, but not checked
  Engine e(g, Execute(cs), {{"debug.checkUndefinedReads", "true"}});
  e.load(d);
  std::string msg = message_of<tessera::DeviceFault>([&] { e.run(); });
  EXPECT_TRUE(has(msg, "tile 0")) << msg;
  EXPECT_TRUE(has(msg, "field 'y'")) << msg;
  EXPECT_TRUE(has(msg, "element 0 of tensor 'x' (element 1 of the variable)")) << msg;
}

TEST(IpuFaults, IndexPastAVectorFieldsEnd) {
  Device d = device();
  Graph g(d.getTarget());
  g.addCodelets(kDir + "/basic.cpp");
  Tensor in = g.addConstant<int>(INT, {5}, 1, "in");
  Tensor out = g.addVariable(INT, {1}, "out");
  g.setTileMapping(in, 3);
  g.setTileMapping(out, 3);
  ComputeSet cs = g.addComputeSet("sum");
  g.setTileMapping(g.addVertex(cs, "OffByOne", {{"in", in}, {"out", out[0]}}), 3);
  Engine e(g, Execute(cs));
  e.load(d);
  std::string msg = message_of<tessera::DeviceFault>([&] { e.run(); });
  EXPECT_TRUE(has(msg, "tile 3 vertex 0 (OffByOne)")) << msg;
  EXPECT_TRUE(has(msg, "field 'in' is read or written at index 5, past its end (5 elements)"))
      << msg;
}

TEST(IpuFaults, CodeletCompileErrorShowsTheCompilersMessage) {
  Device d = device();
  Graph g(d.getTarget());
  std::string msg = message_of<tessera::UserError>(
      [&] { g.addCodelets(kDir + "/broken.cpp", CodeletFileType::Auto, "-O3"); });
  EXPECT_TRUE(has(msg, "broken.cpp:8")) << msg;
  EXPECT_TRUE(has(msg, "undeclared_name")) << msg;
  message_of<graph_program_compilation_error>([&] { g.addCodelets(kDir + "/broken.cpp"); });
  message_of<file_load_error>([&] { g.addCodelets(kDir + "/missing.cpp"); });
}

TEST(IpuFaults, GraphMisuseIsAUserError) {
  Device d = device();
  Graph g(d.getTarget());
  g.addCodelets(kDir + "/basic.cpp");
  ComputeSet cs = g.addComputeSet();
  EXPECT_TRUE(has(message_of<unknown_vertex_type>([&] { g.addVertex(cs, "Nope"); }), "'Nope'"));
  VertexRef v = g.addVertex(cs, "AdderVertex");
  Tensor i = g.addVariable(INT, {1});
  EXPECT_TRUE(has(message_of<unknown_field>([&] { g.connect(v["z"], i[0]); }), "x, y, sum"));
  EXPECT_TRUE(has(message_of<graph_connection_error>([&] { g.connect(v["x"], i[0]); }),
                  "holds float but is connected to a tensor of int"));
  EXPECT_TRUE(has(message_of<invalid_tile_mapping>([&] { g.setTileMapping(i, 9); }),
                  "tile 9 is outside this graph's 4 tiles"));
  EXPECT_TRUE(has(message_of<invalid_option>([&] {
                    Engine e(g, Sequence(), {{"debug.nonsense", "true"}});
                  }),
                  "unknown Engine option 'debug.nonsense'"));
  auto s = g.addHostToDeviceFIFO("feed", INT, 1);
  g.setTileMapping(i, 0);
  g.setTileMapping(v, 0);
  Graph g2(d.getTarget());
  Tensor j = g2.addVariable(INT, {1});
  g2.setTileMapping(j, 0);
  auto feed = g2.addHostToDeviceFIFO("feed", INT, 1);
  Engine e(g2, Copy(feed, j));
  e.load(d);
  EXPECT_TRUE(has(message_of<stream_connection_error>([&] { e.run(); }), "'feed'"));
  (void)s;
}

TEST(IpuFaults, ReplicasThatTakeDifferentControlPaths) {
  IPUModel m("ipu2");
  m.numIPUs = 2;
  m.tilesPerIPU = 2;
  Device d = m.createDevice();
  Graph g(d.getTarget(), replication_factor(2));
  Tensor p = g.addVariable(INT, {}, "flag");
  g.setTileMapping(p, 1);
  auto in = g.addHostToDeviceFIFO("flag", INT, 1);
  Engine e(g, Sequence({Copy(in, p), RepeatWhileTrue(Sequence(), p, WriteUndef(p))}));
  std::vector<int> values = {0, 1};
  e.connectStream("flag", values.data(), values.data() + 2);
  e.load(d);
  auto msg = message_of<tessera::DeviceFault>([&] { e.run(); });
  EXPECT_TRUE(has(msg, "replica 1")) << msg;
  EXPECT_TRUE(has(msg, "'flag'")) << msg;
  EXPECT_TRUE(has(msg, "is 0 on replica 0 and 1 on replica 1")) << msg;
}

TEST(IpuFaults, ReplicationFactorThatDoesNotDivideTheIpus) {
  IPUModel m("ipu2");
  m.numIPUs = 3;
  m.tilesPerIPU = 2;
  Device d = m.createDevice();
  auto msg = message_of<tessera::UserError>([&] { Graph g(d.getTarget(), replication_factor(2)); });
  EXPECT_TRUE(has(msg, "replication factor 2 for a target of 3 IPU(s)")) << msg;
}

TEST(IpuFaults, RemoteBufferRowPastItsEndAndBufferPastStreamingMemory) {
  Device d = device();
  {
    Graph g(d.getTarget());
    RemoteBuffer rb = g.addRemoteBuffer("weights", HALF, 4, 3);
    Tensor t = g.addVariable(HALF, {4}, "t");
    g.setTileMapping(t, 0);
    Tensor row = g.addConstant<unsigned>(UNSIGNED_INT, {1}, {3}, "row");
    g.setTileMapping(row, 1);
    Engine e(g, Copy(t, rb, row));
    e.load(d);
    auto msg = message_of<tessera::DeviceFault>([&] { e.run(); });
    EXPECT_TRUE(has(msg, "remote buffer 'weights' names row 3")) << msg;
    EXPECT_TRUE(has(msg, "has 3 rows (0 to 2)")) << msg;
  }
  {
    // 2^28 floats x 128 rows = 128 GiB, more than the preset's Streaming Memory.
    Graph g(d.getTarget());
    g.addRemoteBuffer("huge", FLOAT, std::size_t(1) << 28, 128);
    auto msg = message_of<tessera::DeviceFault>([&] { Engine e(g, Sequence()); });
    EXPECT_TRUE(has(msg, "remote buffer 'huge': needs 137,438,953,472 B")) << msg;
  }
  {
    Graph g(d.getTarget());
    RemoteBuffer rb = g.addRemoteBuffer("rb", FLOAT, 4);
    Tensor t = g.addVariable(FLOAT, {3}, "t");
    auto msg = message_of<tessera::UserError>([&] { Copy(rb, t); });
    EXPECT_TRUE(has(msg, "must hold 1 row(s) of the buffer's type, 4 elements")) << msg;
  }
}
