// poplar::compileGraph and Executable serialize/deserialize (spec 001 §2.2.2): a restored
// executable runs the same program with the same results, cycles and profile.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include <gcl/Collectives.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Executable.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include "ipu_test_util.h"

using namespace poplar;
using namespace poplar::program;
using namespace ipu_test;

namespace {

struct Built {
  Device device;
  std::unique_ptr<Graph> graph;
  std::vector<Program> programs;
  Sequence second;  // programs[1], shared
};

// Two replicas of a small program with codelets, a perf estimator, a function, loops, streams,
// a remote buffer, a cross-replica mean and a host read.
Built build() {
  IPUModel model("ipu2");
  model.numIPUs = 2;
  model.tilesPerIPU = 4;
  model.minIPUSyncDelay = 33;  // a changed figure must survive serialisation
  Built b{model.createDevice(), nullptr, {}};
  b.graph = std::make_unique<Graph>(b.device.getTarget(), replication_factor(2));
  Graph& g = *b.graph;
  Tensor x = g.addVariable(FLOAT, {8}, "x");
  g.setTileMapping(x.slice(0, 4), 1);
  g.setTileMapping(x.slice(4, 8), 2);
  ComputeSet cs = add_scale(g, x, 3, 1.5f).cs;
  g.registerPerfEstimator("Scale", [](const VertexIntrospector& v, const Target&) {
    return VertexPerfEstimate(100 + v.getFieldInfo("data").size());
  });
  auto in = g.addHostToDeviceFIFO("in", FLOAT, 8);
  RemoteBuffer rb = g.addRemoteBuffer("rb", FLOAT, 8, 2);
  Tensor row = g.addConstant<unsigned>(UNSIGNED_INT, {1}, {1}, "row");
  g.setTileMapping(row, 0);
  Function twice = g.addFunction(Repeat(2, Execute(cs)));
  g.createHostRead("x", x);
  Sequence first({Copy(in, x), Call(twice)});
  gcl::allReduceInPlaceCrossReplica(g, x, gcl::CollectiveOperator::MEAN, first);
  first.add(Copy(x, rb, row));
  b.programs.push_back(first);
  b.second = Sequence({Copy(rb, x, row), Execute(cs)});
  b.programs.push_back(b.second);
  return b;
}

std::string run(Engine& e, const Device& d) {
  std::vector<float> in(16);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = float(i);
  e.connectStream("in", in.data(), in.data() + in.size());
  e.load(d);
  e.run(0);
  e.run(1);
  std::vector<float> x(16);
  e.readTensor("x", x.data(), x.data() + x.size());
  std::ostringstream out;
  for (float v : x) out << v << ' ';
  out << "| " << e.tesseraTotalCycles() << '\n';
  e.printProfileSummary(out, {{"showExecutionSteps", "true"}, {"colours", "false"}});
  return out.str();
}

}  // namespace

TEST(IpuExecutable, CompiledSerializedAndRestoredExecutablesRunAlike) {
  Built b = build();
  std::string direct;
  {
    Engine e(*b.graph, b.programs);
    direct = run(e, b.device);
  }
  // x[1]: 1 (replica 0) and 9 (replica 1) scaled by 1.5^2, averaged, then scaled by 1.5.
  EXPECT_NE(direct.find("16.875 "), std::string::npos) << direct;
  EXPECT_NE(direct.find("IPU-Link"), std::string::npos) << direct;

  Executable exe = compileGraph(*b.graph, b.programs);
  // The executable is a snapshot: changing the graph or the programs afterwards does not
  // change it.
  b.graph->addVariable(FLOAT, {1}, "late");
  b.second.add(
      Copy(b.graph->addVariable(FLOAT, {1}, "late2"), b.graph->addVariable(FLOAT, {1}, "late3")));
  std::stringstream saved;
  exe.serialize(saved);
  {
    Engine e(std::move(exe));
    EXPECT_EQ(run(e, b.device), direct);
  }
  EXPECT_THROW(exe.serialize(saved), control_program_error);  // moved into the Engine
  saved.seekg(0);
  Executable restored = Executable::deserialize(saved);
  Engine e(std::move(restored), {{"debug.checkUndefinedReads", "true"}});
  EXPECT_EQ(run(e, b.device), direct);
}

TEST(IpuExecutable, BadExecutablesAndOptionsAreErrors) {
  Executable empty;
  EXPECT_THROW(Engine{std::move(empty)}, control_program_error);
  std::stringstream junk("not an executable");
  EXPECT_THROW(Executable::deserialize(junk), parse_error);
  Built b = build();
  int calls = 0;
  Executable exe = compileGraph(*b.graph, b.programs, {}, [&](int, int) { ++calls; });
  EXPECT_GT(calls, 0);
  EXPECT_THROW(Engine(std::move(exe), {{"exchange.enablePrefetch", "true"}}), invalid_option);
  // A graph with an unmapped tensor fails at compileGraph, as at Engine creation.
  Device d = model_device(2);
  Graph g(d.getTarget());
  Tensor t = g.addVariable(INT, {2}, "unmapped");
  EXPECT_THROW(compileGraph(g, {WriteUndef(t)}), invalid_tile_mapping);
}

namespace {

using json = nlohmann::json;

// The executable of build() as its CBOR tree, and back to a stream after a change.
json saved_tree() {
  Built b = build();
  std::stringstream s;
  compileGraph(*b.graph, b.programs).serialize(s);
  const std::string bytes = s.str();
  return json::from_cbor(bytes);
}
::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}
std::string load_error(const json& tree) {
  auto cbor = json::to_cbor(tree);
  std::stringstream in(std::string(cbor.begin(), cbor.end()));
  try {
    Executable::deserialize(in);
  } catch (const parse_error& e) {
    return e.what();
  } catch (const tessera::UserError& e) {  // sizes beyond TESSERA_HOST_MEMORY_LIMIT
    return e.what();
  }
  return "(loaded)";
}

}  // namespace

// Each damage is refused before it is used, by a parse_error that names the item.
TEST(IpuExecutable, DamagedExecutablesAreRefusedByName) {
  const json good = saved_tree();
  EXPECT_EQ(load_error(good), "(loaded)");
  auto damaged = [&](const std::function<void(json&)>& change) {
    json t = good;
    change(t);
    return load_error(t);
  };
  EXPECT_TRUE(contains(damaged([](json& t) { t["vertices"][0]["computeSet"] = 40; }),
              "the executable is damaged: vertex 0 names compute set 40 of "));
  EXPECT_TRUE(contains(damaged([](json& t) { t["vertices"][0]["type"] = 999; }),
                       "vertex 0 names vertex type 999 of "));
  EXPECT_TRUE(contains(damaged([](json& t) { t["vertices"][0]["tile"] = 4; }),
              "vertex 0 is on tile 4 of 4"));  // a replica has 4 of the 8 tiles
  EXPECT_TRUE(contains(damaged([](json& t) { t["computeSets"][0]["vertices"][0] = 9; }),
              "compute set 0 'scale' lists vertex 9 of 1"));
  // Sizes are checked before anything is allocated from them.
  EXPECT_TRUE(contains(damaged([](json& t) { t["target"]["tilesPerIPU"] = std::uint64_t{1} << 40; }),
              "the target's tilesPerIPU is 1099511627776, not a whole number from 1 "
                        "to 1472"));
  EXPECT_TRUE(contains(damaged([](json& t) { t["target"]["workers"] = 1u << 31; }),
              "worker contexts is 2147483648"));
  EXPECT_TRUE(contains(damaged([](json& t) { t["variables"][0]["shape"][0] = std::uint64_t{1} << 40; }),
                       "variable 0 'x' of shape {1099511627776} and type float says it has 32 B"));
  EXPECT_TRUE(contains(damaged([](json& t) {
                         for (int v : {0, 1, 2}) {
                           t["variables"][v]["shape"][0] = std::uint64_t{1} << 40;
                           t["variables"][v]["bytes"] = std::uint64_t{1} << 42;
                         }
                       }),
                       "the executable's variables needs 8192.0 GiB"));
  EXPECT_TRUE(contains(damaged([](json& t) { t["variables"][1]["mapping"][0][2] = 70; }),
              "variable 1 'x' maps bytes [0, 16) to tile 70 of 8"));
  EXPECT_TRUE(contains(damaged([](json& t) { t["vertices"][0]["fields"][0]["tensors"][0]["regions"][0][2] = 4096; }),
              "vertex 0 (Scale) field 'data' tensor 0 run 0 covers bytes [0, 4096) "
                        "of variable 0 'x', which has 32 B"));
  EXPECT_TRUE(contains(damaged([](json& t) { t["replication"]["factor"] = 3; }),
                       "the replication factor is 3, not a whole number from 1 to 2"));
  // A program node that contains itself, directly or through a function.
  EXPECT_TRUE(contains(damaged([](json& t) {
                auto& nodes = t["nodes"];
                for (std::size_t i = 0; i < nodes.size(); ++i)
                  if (nodes[i]["kind"] == 0 && !nodes[i]["children"].empty())
                    nodes[i]["children"][0] = i;
              }),
              "contains itself"));
  EXPECT_TRUE(contains(damaged([](json& t) {
                auto& nodes = t["nodes"];
                const int body = t["functions"][0];
                nodes[body]["kind"] = 13;  // call
                nodes[body]["function"] = 0;
              }),
              "contains itself"));
  EXPECT_TRUE(contains(damaged([](json& t) { t["nodes"][0]["stream"] = 5; }),
              "program node 0 names stream 5 of 1"));
  EXPECT_TRUE(contains(damaged([](json& t) { t["nodes"][0]["kind"] = 99; }),
              "program node 0's kind is 99, not a whole number from 0 to 18"));
  // Codelets are code loaded with dlopen; what is not an ELF object is refused before that.
  EXPECT_TRUE(contains(damaged([](json& t) { t["codelets"][0] = json::binary({'n', 'o', 't', ' ', 'E'}); }),
              "codelets entry 0 (5 B) is not an ELF shared object"));
}

// Nesting is bounded in a file (building and running a program recurse per level): 1,000
// levels load and run, one more is refused.
TEST(IpuExecutable, ProgramNestingIsBoundedInAFile) {
  Device d = model_device(2);
  Graph g(d.getTarget());
  Tensor t = g.addVariable(INT, {1}, "t");
  g.setTileMapping(t, 0);
  g.setInitialValue(t, 5);
  g.createHostRead("t", t);
  auto nested = [&](unsigned levels) {
    Program p = Copy(t, t);
    for (unsigned i = 0; i < levels; ++i) p = Sequence({p});
    std::stringstream s;
    compileGraph(g, {p}).serialize(s);
    return s;
  };
  std::stringstream deep = nested(1000);
  Engine e(Executable::deserialize(deep));
  e.load(d);
  e.run(0);
  EXPECT_EQ(read<int>(e, "t", 1)[0], 5);
  std::stringstream deeper = nested(1001);
  EXPECT_THROW(
      {
        try {
          Executable::deserialize(deeper);
        } catch (const parse_error& x) {
          EXPECT_TRUE(contains(x.what(), "nests 1001 levels deep"));
          throw;
        }
      },
      parse_error);
}

// Through the API a Sequence can be added to its own body; the Engine refuses it by name
// instead of recursing without end.
TEST(IpuExecutable, AProgramThatContainsItselfIsRefused) {
  Device d = model_device(2);
  Graph g(d.getTarget());
  Sequence outer, inner;
  outer.add(inner);
  inner.add(outer);
  EXPECT_THROW(Engine(g, outer), control_program_error);
  EXPECT_THROW(compileGraph(g, {outer}), control_program_error);
}
