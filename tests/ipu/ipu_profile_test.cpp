// Profiles as Poplar hands them out (spec 001 §8.1, §8.2): getGraphProfile /
// getExecutionProfile, autoReport files, poplar::printProfileSummary and the
// poplar_profile_summary tool, which must print the Engine's own report from the saved files.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

using namespace poplar;
using namespace poplar::program;

namespace {

const std::string kCodelets = std::string(TESSERA_IPU_TEST_CODELETS) + "/basic.cpp";

std::string run_tool(const std::string& args, int* status = nullptr) {
  std::string cmd = std::string(TESSERA_IPU_PROFILE_SUMMARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int rc = pclose(p);
  if (status) *status = WEXITSTATUS(rc);
  return out;
}

}  // namespace

TEST(IpuProfileFiles, SavedProfilesPrintTheEnginesOwnReport) {
  std::string dir = testing::TempDir() + "/ipu_auto_report";
  std::filesystem::remove_all(dir);
  IPUModel model("ipu2");
  model.numIPUs = 2;
  model.tilesPerIPU = 4;
  Device d = model.createDevice();
  Graph g(d.getTarget(), replication_factor(2));
  g.addCodelets(kCodelets);
  Tensor data = g.addVariable(FLOAT, {32}, "data");
  g.setTileMapping(data, 2);
  ComputeSet cs = g.addComputeSet("scale");
  VertexRef v = g.addVertex(cs, "Scale", {{"data", data}});
  g.setInitialValue(v["factor"], 3.0f);
  g.setTileMapping(v, 1);
  Engine e(g, Repeat(2, Execute(cs)), {{"autoReport.all", "true"}, {"autoReport.directory", dir}});
  ASSERT_TRUE(std::filesystem::exists(dir + "/graph.json"));
  e.load(d);
  e.run();
  ASSERT_TRUE(std::filesystem::exists(dir + "/execution.json"));

  OptionFlags opts = {{"showExecutionSteps", "true"}, {"colours", "false"}};
  std::ostringstream engine_report, free_report;
  e.printProfileSummary(engine_report, opts);
  printProfileSummary(free_report, e.getGraphProfile(), e.getExecutionProfile(), opts);
  EXPECT_EQ(free_report.str(), engine_report.str());
  EXPECT_NE(engine_report.str().find("Number of Replicas:"), std::string::npos);
  EXPECT_NE(engine_report.str().find("Tiles per Replica:"), std::string::npos);

  int rc = -1;
  std::string from_files = run_tool("--graph-profile " + dir + "/graph.json --execution-profile " +
                                        dir + "/execution.json --show-execution-steps",
                                    &rc);
  EXPECT_EQ(rc, 0) << from_files;
  EXPECT_EQ(from_files, engine_report.str());

  // Profile values read like Poplar's: maps, lists and numbers.
  ProfileValue ex = e.getExecutionProfile();
  EXPECT_EQ(ex["runs"].asUint(), 1u);
  EXPECT_GT(ex["totalCycles"].asUint(), 0u);
  EXPECT_TRUE(ex["steps"].isVector());
  EXPECT_EQ(ex["steps"][0]["executions"].asUint(), 2u);
  EXPECT_EQ(e.getGraphProfile()["target"]["replicas"].asUint(), 2u);
  EXPECT_THROW(ex["nothing"], invalid_option);
  EXPECT_THROW(ex["steps"][5], index_error);
  std::ostringstream json;
  serializeToJSON(json, ex);
  EXPECT_EQ(json.str().front(), '{');

  // Graph alone: no Execution section. CLICOLOR_FORCE colours it.
  std::string graph_only = run_tool("--graph-profile " + dir + "/graph.json");
  EXPECT_NE(graph_only.find("Memory Usage:"), std::string::npos);
  EXPECT_EQ(graph_only.find("Execution:"), std::string::npos);
  EXPECT_EQ(graph_only.find("\033["), std::string::npos);
  std::string coloured = run_tool("--graph-profile " + dir + "/graph.json --colours");
  EXPECT_NE(coloured.find("\033["), std::string::npos);
  setenv("CLICOLOR", "0", 1);
  std::string plain = run_tool("--graph-profile " + dir + "/graph.json --colours");
  unsetenv("CLICOLOR");
  EXPECT_EQ(plain.find("\033["), std::string::npos);
}

TEST(IpuProfileFiles, BadFilesAreClearErrors) {
  int rc = 0;
  std::string out = run_tool("--graph-profile /nonexistent/graph.json", &rc);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("cannot open /nonexistent/graph.json"), std::string::npos) << out;
  std::string swapped = testing::TempDir() + "/not_a_graph_profile.json";
  std::ofstream(swapped) << R"({"format": "tessera.poplar.execution_profile/1"})";
  out = run_tool("--graph-profile " + swapped, &rc);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("--execution-profile"), std::string::npos) << out;
  std::ofstream(swapped) << "not json";
  out = run_tool("--execution-profile " + swapped, &rc);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("is not JSON"), std::string::npos) << out;
  out = run_tool("", &rc);
  EXPECT_EQ(rc, 2);
}
