// program::Block and the lightweight profiler (Graphcore's lightweight-profiling tutorial, Poplar
// SDK 3.x): Block programs and implicit blocks (profiler.programs.filter) record each execution's
// first and last cycle on one tile per IPU, read back with libpva's
// Report::execution().blocks(tile). Each block's length is checked against the cycles of an
// Engine that runs the block's body alone, and its place against the blocks around it.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include <poplar/Engine.hpp>
#include <poplar/Executable.hpp>
#include <poplar/Graph.hpp>
#include <pva/pva.hpp>

#include "ipu_test_util.h"

using namespace poplar;
using namespace poplar::program;
using namespace ipu_test;

namespace {

constexpr unsigned kTilesPerIpu = 4;

// Two IPUs; compute sets op1/op2 on IPU 0's tile 1 and on IPU 1's tile 1 (not the
// instrumented tile 0, so a record on tile 0 means "this IPU ran it", as in the tutorial).
struct Pipeline {
  Device device = model_device(kTilesPerIpu, 2);
  Graph graph{device.getTarget()};
  ComputeSet op[2][2];  // [ipu][op]
  Pipeline() {
    graph.addCodelets(kCodelets);
    for (unsigned ipu = 0; ipu < 2; ++ipu)
      for (unsigned k = 0; k < 2; ++k) {
        const std::string name = "op" + std::to_string(k + 1);
        Tensor data = variable_on(graph, 64 * (k + 1), ipu * kTilesPerIpu + 1,
                                  name + "/ipu" + std::to_string(ipu));
        std::vector<float> ones(data.numElements(), 1.0f);
        graph.setInitialValue(data, ArrayRef<float>(ones));
        op[ipu][k] = graph.addComputeSet(name);
        VertexRef v = graph.addVertex(op[ipu][k], "Scale", {{"data", data}});
        graph.setInitialValue(v["factor"], 2.0f);
        graph.setTileMapping(v, ipu * kTilesPerIpu + 1);
      }
  }
  Program stage(unsigned ipu) {
    return Block(Sequence{Execute(op[ipu][0]), Block(Execute(op[ipu][1]), "op2")},
                 "stage" + std::to_string(ipu + 1));
  }
  // The cycles of `p` run on its own in a fresh Engine: what a block around it must measure.
  std::uint64_t alone(const Program& p) {
    Engine e(graph, p);
    e.load(device);
    e.run();
    return e.tesseraTotalCycles();
  }
};

}  // namespace

TEST(IpuBlocks, BlockProgramsRecordEachExecutionOnTheIpusThatRunThem) {
  Pipeline p;
  const std::uint64_t stage_cycles[2] = {
      p.alone(Sequence{Execute(p.op[0][0]), Execute(p.op[0][1])}),
      p.alone(Sequence{Execute(p.op[1][0]), Execute(p.op[1][1])})};
  const std::uint64_t op2_cycles[2] = {p.alone(Execute(p.op[0][1])),
                                       p.alone(Execute(p.op[1][1]))};
  Repeat loop(5, Sequence{p.stage(0), p.stage(1)});
  // Without flushes, so that the Engine's clock runs as without the profiler (the flushes are
  // tested below).
  Engine e(p.graph, loop,
           {{"profiler.blocks.filter", "stage.|op2"}, {"profiler.blocks.implicitFlush", "false"}});
  e.load(p.device);
  e.run();
  pva::Report report = e.getReport();
  std::uint64_t previous_end = 0;
  std::vector<std::vector<pva::Block>> by_ipu;
  for (unsigned ipu = 0; ipu < 2; ++ipu) {
    by_ipu.push_back(report.execution().blocks(ipu * kTilesPerIpu));
    const auto& blocks = by_ipu.back();
    ASSERT_EQ(blocks.size(), 10u) << "ipu " << ipu;  // 5 x (stage, its op2); op1 not matched
    for (unsigned i = 0; i < 10; i += 2) {
      const pva::Block& stage = blocks[i];
      const pva::Block& op2 = blocks[i + 1];
      EXPECT_EQ(stage.program()->name(), "stage" + std::to_string(ipu + 1));
      EXPECT_EQ(stage.program()->type(), pva::Program::Type::Block);
      EXPECT_EQ(op2.program()->name(), "op2");
      EXPECT_TRUE(stage.isCommon());
      EXPECT_FALSE(stage.isStreamCopy() || stage.isOverflow() || stage.isBlockFlush());
      EXPECT_EQ(stage.tile(), ipu * kTilesPerIpu);
      EXPECT_EQ(stage.cyclesTo() - stage.cyclesFrom(), stage_cycles[ipu]);
      EXPECT_EQ(op2.cyclesTo() - op2.cyclesFrom(), op2_cycles[ipu]);
      // op2 is the stage's second half: it ends when the stage does.
      EXPECT_GT(op2.cyclesFrom(), stage.cyclesFrom());
      EXPECT_EQ(op2.cyclesTo(), stage.cyclesTo());
      if (i > 0) {
        EXPECT_GE(stage.cyclesFrom(), blocks[i - 2].cyclesTo());
      }
    }
  }
  // Stage 2 of an iteration runs after stage 1 of the same iteration, before the next one's.
  for (unsigned i = 0; i < 10; i += 2) {
    EXPECT_GE(by_ipu[1][i].cyclesFrom(), by_ipu[0][i].cyclesTo());
    if (i + 2 < 10) {
      EXPECT_LE(by_ipu[1][i].cyclesTo(), by_ipu[0][i + 2].cyclesFrom());
    }
    previous_end = by_ipu[1][i].cyclesTo();
  }
  EXPECT_LE(previous_end, e.tesseraTotalCycles());
  // No other tile holds records, and without the filter nothing is recorded.
  EXPECT_TRUE(report.execution().blocks(1).empty());
  Engine plain(p.graph, loop);
  plain.load(p.device);
  plain.run();
  EXPECT_TRUE(plain.getReport().execution().blocks(0).empty());
  EXPECT_EQ(plain.tesseraTotalCycles(), e.tesseraTotalCycles());  // a Block itself costs nothing
}

TEST(IpuBlocks, ProgramsFilterTimesEachExecutionOfANamedProgram) {
  Pipeline p;
  const std::uint64_t one = p.alone(Execute(p.op[0][0]));
  Engine e(p.graph, Repeat(5, Execute(p.op[0][0])),
           {{"profiler.programs.filter", "op1"},
            {"profiler.blocks.tile", "1"},
            {"profiler.blocks.implicitFlush", "false"}});
  e.load(p.device);
  e.run();
  auto blocks = e.getReport().execution().blocks(1);
  ASSERT_EQ(blocks.size(), 5u);
  for (unsigned i = 0; i < 5; ++i) {
    EXPECT_EQ(blocks[i].program()->name(), "op1");
    EXPECT_EQ(blocks[i].program()->type(), pva::Program::Type::OnTileExecute);
    EXPECT_EQ(blocks[i].cyclesFrom(), i * one);  // back to back from the Engine's first cycle
    EXPECT_EQ(blocks[i].cyclesTo(), (i + 1) * one);
  }
  EXPECT_TRUE(e.getReport().execution().blocks(0).empty());  // profiler.blocks.tile moved it
}

TEST(IpuBlocks, AFullBufferDropsRecordsIntoOneOverflowBlockUnlessFlushed) {
  Pipeline p;
  const std::uint64_t one = p.alone(Execute(p.op[0][0]));
  Sequence body{Repeat(100, Sequence{Execute(p.op[0][0])})};
  Engine dropping(p.graph, body,
                  {{"profiler.programs.filter", "op1"}, {"profiler.blocks.implicitFlush", "false"}});
  dropping.load(p.device);
  dropping.run();
  auto blocks = dropping.getReport().execution().blocks(0);
  // 1,000 B of buffer hold 41 records of 24 B; the rest are one overflow block.
  ASSERT_EQ(blocks.size(), 42u);
  for (unsigned i = 0; i < 41; ++i) EXPECT_TRUE(blocks[i].isCommon());
  EXPECT_TRUE(blocks[41].isOverflow());
  EXPECT_EQ(blocks[41].cyclesFrom(), 41 * one);
  EXPECT_EQ(blocks[41].cyclesTo(), 100 * one);

  Engine flushing(p.graph, body,
                  {{"profiler.programs.filter", "op1"},
                   {"debug.instrumentExternalExchange", "true"}});
  flushing.load(p.device);
  flushing.run();
  blocks = flushing.getReport().execution().blocks(0);
  unsigned common = 0, flushes = 0, overflows = 0;
  std::uint64_t flush_cycles = 0;
  for (const auto& b : blocks) {
    common += b.isCommon();
    overflows += b.isOverflow();
    if (b.isBlockFlush()) {
      ++flushes;
      EXPECT_TRUE(b.isStreamCopy());
      flush_cycles += b.cyclesTo() - b.cyclesFrom();
    }
  }
  EXPECT_EQ(common, 100u);
  EXPECT_EQ(flushes, 300u);  // a Begin, Mid and End after every iteration
  EXPECT_EQ(overflows, 0u);
  EXPECT_EQ(blocks[1].program()->type(), pva::Program::Type::StreamCopyBegin);
  EXPECT_EQ(blocks[2].program()->type(), pva::Program::Type::StreamCopyMid);
  EXPECT_EQ(blocks[3].program()->type(), pva::Program::Type::StreamCopyEnd);
  // The flushes are real transfers on the Engine's clock: they account for the difference.
  EXPECT_GT(flush_cycles, 0u);
  EXPECT_EQ(flushing.tesseraTotalCycles(), dropping.tesseraTotalCycles() + flush_cycles);
}

TEST(IpuBlocks, StreamCopiesAreRecordedOnTheTilesTheyWrite) {
  Device d = model_device(kTilesPerIpu);
  Graph g(d.getTarget());
  Tensor in = g.addVariable(INT, {3}, "in");
  g.setTileMapping(in, 2);
  DataStream s = g.addHostToDeviceFIFO("in", INT, 3);
  Engine e(g, Repeat(2, Copy(s, in)),
           {{"profiler.programs.filter", "nothing"},
            {"debug.instrumentExternalExchange", "true"},
            {"profiler.blocks.implicitFlush", "false"}});
  std::vector<int> src = {1, 2, 3, 4, 5, 6};
  e.connectStream("in", src.data(), src.data() + src.size());
  e.load(d);
  e.run();
  auto blocks = e.getReport().execution().blocks(2);
  ASSERT_EQ(blocks.size(), 6u);
  const std::uint64_t copy_cycles = e.tesseraTotalCycles() / 2;
  for (unsigned i = 0; i < 6; i += 3) {
    EXPECT_EQ(blocks[i].program()->type(), pva::Program::Type::StreamCopyBegin);
    EXPECT_EQ(blocks[i + 2].program()->type(), pva::Program::Type::StreamCopyEnd);
    EXPECT_TRUE(blocks[i].isStreamCopy());
    EXPECT_FALSE(blocks[i].isBlockFlush());
    EXPECT_EQ(blocks[i].program()->name(), "in");
    EXPECT_EQ(blocks[i].cyclesTo(), blocks[i + 1].cyclesFrom());  // phases back to back
    EXPECT_EQ(blocks[i + 1].cyclesTo(), blocks[i + 2].cyclesFrom());
    EXPECT_EQ(blocks[i + 2].cyclesTo() - blocks[i].cyclesFrom(), copy_cycles);
  }
  EXPECT_TRUE(e.getReport().execution().blocks(0).empty());
}

TEST(IpuBlocks, SavedReportsAndExecutablesKeepTheBlocks) {
  Pipeline p;
  std::string dir = testing::TempDir() + "/ipu_blocks_report";
  std::filesystem::remove_all(dir);
  Sequence prog{p.stage(0)};
  Executable exe = compileGraph(p.graph, {prog});
  std::stringstream saved;
  exe.serialize(saved);
  Executable restored = Executable::deserialize(saved);
  Engine e(std::move(restored), {{"profiler.blocks.filter", "stage1"},
                                 {"autoReport.all", "true"},
                                 {"autoReport.directory", dir}});
  e.load(p.device);
  e.run();
  auto live = e.getReport().execution().blocks(0);
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].program()->name(), "stage1");
  EXPECT_EQ(live[0].cyclesTo() - live[0].cyclesFrom(),
            p.alone(Sequence{Execute(p.op[0][0]), Execute(p.op[0][1])}));
  auto from_file = pva::openReport(dir).execution().blocks(0);
  ASSERT_EQ(from_file.size(), 1u);
  EXPECT_EQ(from_file[0].cyclesFrom(), live[0].cyclesFrom());
  EXPECT_EQ(from_file[0].cyclesTo(), live[0].cyclesTo());
}

TEST(IpuBlocks, MisuseIsAUserError) {
  Pipeline p;
  try {
    Block b(Sequence(), "empty");
    FAIL() << "a Block around nothing was accepted";
  } catch (const control_program_error& x) {
    EXPECT_NE(std::string(x.what()).find("Block 'empty' scopes an empty program"),
              std::string::npos)
        << x.what();
  }
  EXPECT_THROW(Engine(p.graph, p.stage(0), {{"profiler.blocks.filter", "stage("}}),
               invalid_option);
  try {
    Engine(p.graph, p.stage(0), {{"profiler.blocks.tile", "4"}});
    FAIL() << "a tile past the IPU's was accepted";
  } catch (const invalid_option& x) {
    EXPECT_NE(std::string(x.what()).find("from 0 to 3"), std::string::npos) << x.what();
  }
  EXPECT_THROW(Engine(p.graph, p.stage(0), {{"profiler.blocks.bufferSize", "big"}}),
               invalid_option);
}
