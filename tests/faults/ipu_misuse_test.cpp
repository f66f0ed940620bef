// Poplar and PopLibs (spec 001) misused the way a program does by mistake: tensor views past
// their ends, graphs built wrongly, engines driven in the wrong order, host buffers of the wrong
// size. Each raises a UserError (or a DeviceFault) naming what is wrong, never a crash, a hang
// or data read from the wrong place.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Reduce.hpp>
#include <popops/codelets.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>

#include "misuse.h"

using namespace poplar;
using namespace poplar::program;
using misuse::message_of;
using tessera::UserError;

namespace {

Device device(unsigned tiles = 4) {
  IPUModel m("ipu2");
  m.tilesPerIPU = tiles;
  return m.createDevice();
}

TEST(IpuMisuse, SliceWithEndBeforeBegin) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {10}, "t");
  EXPECT_MENTIONS(message_of<UserError>([&] { t.slice(5, 3); }), "5");
}

TEST(IpuMisuse, SlicePastTheEnd) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {10}, "t");
  EXPECT_MENTIONS(message_of<UserError>([&] { t.slice(4, 11); }), "11");
}

TEST(IpuMisuse, IndexPastTheEnd) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {10}, "t");
  EXPECT_MENTIONS(message_of<UserError>([&] { (void)t[10]; }), "10");
}

TEST(IpuMisuse, IndexOfAScalar) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {}, "t");
  EXPECT_FALSE(message_of<UserError>([&] { (void)t[0]; }).empty());
}

TEST(IpuMisuse, ReshapeToAnotherElementCount) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {10}, "t");
  EXPECT_MENTIONS(message_of<UserError>([&] { t.reshape({3, 3}); }), "9");
}

// 2 x (2^63 + 5) elements wrap to 10 in 64 bits, the count of the tensor.
TEST(IpuMisuse, ReshapeToAShapeWhoseCountWrapsToTheSame) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {10}, "t");
  const std::size_t half = (std::size_t{1} << 63) + 5;
  EXPECT_MENTIONS(message_of<UserError>([&] { t.reshape({2, half}); }), "64 bits");
}

TEST(IpuMisuse, DimShuffleThatIsNotAPermutation) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {2, 3}, "t");
  EXPECT_FALSE(message_of<UserError>([&] { t.dimShuffle({0, 0}); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { t.dimShuffle({0, 1, 2}); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { t.dimShuffle({0, 5}); }).empty());
}

TEST(IpuMisuse, DimensionOutOfRange) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {2, 3}, "t");
  EXPECT_FALSE(message_of<UserError>([&] { t.slice(0, 1, 2); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { t.dimRoll(2); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { t.reverse(2); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { t.broadcast(2, 3); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { t.flatten(1, 0); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { t.flatten(0, 3); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { t.dim(2); }).empty());
}

TEST(IpuMisuse, SubSampleByZero) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {8}, "t");
  EXPECT_MENTIONS(message_of<UserError>([&] { t.subSample(0, 0); }), "stride 0");
}

TEST(IpuMisuse, SqueezeOfADimensionThatIsNotOne) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {2, 3}, "t");
  EXPECT_FALSE(message_of<UserError>([&] { t.squeeze({1}); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { t.squeeze({7}); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { t.expand({5}); }).empty());
}

TEST(IpuMisuse, ReinterpretToATypeThatDoesNotDivideTheBytes) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(HALF, {3}, "t");
  EXPECT_FALSE(message_of<UserError>([&] { t.reinterpret(FLOAT); }).empty());
}

TEST(IpuMisuse, ConcatOfMismatchedTensors) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor a = g.addVariable(FLOAT, {2, 3}, "a");
  Tensor b = g.addVariable(FLOAT, {2, 4}, "b");
  Tensor c = g.addVariable(INT, {2, 3}, "c");
  EXPECT_FALSE(message_of<UserError>([&] { concat(a, b, 0); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { concat(a, c, 0); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { concat(a, a, 2); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { concat(std::vector<Tensor>{}, 0); }).empty());
}

TEST(IpuMisuse, InvalidTensorUsedInAGraph) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor none;
  EXPECT_FALSE(message_of<UserError>([&] { g.setTileMapping(none, 0); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { none.slice(0, 1); }).empty());
  Tensor t = g.addVariable(FLOAT, {4}, "t");
  g.setTileMapping(t, 0);
  EXPECT_FALSE(message_of<UserError>([&] { Copy(t, none); }).empty());
}

TEST(IpuMisuse, VariableWhoseElementCountOverflows) {
  Device d = device();
  Graph g(d.getTarget());
  const std::size_t big = std::size_t{1} << 33;
  EXPECT_MENTIONS(message_of<UserError>([&] { g.addVariable(FLOAT, {big, big}, "huge"); }),
                  "'huge'");
  // 2^62 floats: the count fits 64 bits, the bytes wrap to 0.
  const std::size_t quarter = std::size_t{1} << 31;
  EXPECT_MENTIONS(
      message_of<UserError>([&] { g.addVariable(FLOAT, {quarter, quarter}, "bytes"); }),
      "64 bits");
}

TEST(IpuMisuse, TileMappingPastTheTensorOrTheTiles) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {8}, "t");
  TileToTensorMapping m(4);
  m[0] = {Interval(0, 12)};
  EXPECT_FALSE(message_of<UserError>([&] { g.setTileMapping(t, m); }).empty());
  TileToTensorMapping too_many(9);
  too_many[8] = {Interval(0, 8)};
  EXPECT_FALSE(message_of<UserError>([&] { g.setTileMapping(t, too_many); }).empty());
}

TEST(IpuMisuse, CopyBetweenTensorsOfDifferentShapesOrTypes) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor a = g.addVariable(FLOAT, {4}, "a");
  Tensor b = g.addVariable(FLOAT, {5}, "b");
  Tensor c = g.addVariable(INT, {4}, "c");
  EXPECT_FALSE(message_of<UserError>([&] { Copy(a, b); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { Copy(a, c); }).empty());
}

TEST(IpuMisuse, RunBeforeLoadAndAProgramThatDoesNotExist) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {4}, "t");
  g.setTileMapping(t, 0);
  Engine e(g, Sequence());
  EXPECT_FALSE(message_of<UserError>([&] { e.run(); }).empty());
  e.load(d);
  EXPECT_MENTIONS(message_of<UserError>([&] { e.run(3); }), "3");
}

TEST(IpuMisuse, HostBuffersOfTheWrongSize) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {4}, "t");
  g.setTileMapping(t, 0);
  g.createHostWrite("in", t);
  g.createHostRead("out", t);
  Engine e(g, Sequence());
  e.load(d);
  std::vector<float> small(3);
  EXPECT_FALSE(
      message_of<UserError>([&] { e.writeTensor("in", small.data(), small.data() + 3); }).empty());
  EXPECT_FALSE(
      message_of<UserError>([&] { e.readTensor("out", small.data(), small.data() + 3); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { e.readTensor("nope", small.data()); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { e.writeTensor("in", nullptr); }).empty());
}

TEST(IpuMisuse, StreamConnectedToAnEmptyOrReversedRange) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {4}, "t");
  g.setTileMapping(t, 0);
  auto s = g.addHostToDeviceFIFO("feed", FLOAT, 4);
  Engine e(g, Copy(s, t));
  e.load(d);
  std::vector<float> host(4);
  EXPECT_FALSE(message_of<UserError>([&] {
                 e.connectStream("feed", host.data() + 4, host.data());
               }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { e.connectStream("feed", nullptr); }).empty());
}

TEST(IpuMisuse, ElementwiseOfShapesThatDoNotBroadcast) {
  Device d = device();
  Graph g(d.getTarget());
  popops::addCodelets(g);
  Tensor a = g.addVariable(FLOAT, {3, 4}, "a");
  Tensor b = g.addVariable(FLOAT, {5}, "b");
  g.setTileMapping(a, 0);
  g.setTileMapping(b, 0);
  Sequence prog;
  EXPECT_FALSE(message_of<UserError>([&] { popops::add(g, a, b, prog); }).empty());
}

TEST(IpuMisuse, MatMulWithMismatchedInnerDimensions) {
  Device d = device();
  Graph g(d.getTarget());
  poplin::addCodelets(g);
  popops::addCodelets(g);
  Tensor a = g.addVariable(FLOAT, {3, 4}, "a");
  Tensor b = g.addVariable(FLOAT, {5, 2}, "b");
  g.setTileMapping(a, 0);
  g.setTileMapping(b, 0);
  Sequence prog;
  EXPECT_FALSE(message_of<UserError>([&] { poplin::matMul(g, a, b, prog); }).empty());
  Tensor v = g.addVariable(FLOAT, {4}, "v");
  g.setTileMapping(v, 0);
  EXPECT_FALSE(message_of<UserError>([&] { poplin::matMul(g, a, v, prog); }).empty());
}

TEST(IpuMisuse, ReduceOverADimensionThatDoesNotExist) {
  Device d = device();
  Graph g(d.getTarget());
  popops::addCodelets(g);
  Tensor a = g.addVariable(FLOAT, {3, 4}, "a");
  g.setTileMapping(a, 0);
  Sequence prog;
  EXPECT_FALSE(message_of<UserError>([&] {
                 popops::reduce(g, a, FLOAT, {2}, popops::Operation::ADD, prog);
               }).empty());
}

TEST(IpuMisuse, DeviceWithNoIpusOrAbsurdlyManyTiles) {
  IPUModel huge("ipu2");
  huge.tilesPerIPU = 1u << 31;
  EXPECT_FALSE(message_of<UserError>([&] { huge.createDevice(); }).empty());
  IPUModel none("ipu2");
  none.numIPUs = 0;
  EXPECT_FALSE(message_of<UserError>([&] { none.createDevice(); }).empty());
}

TEST(IpuMisuse, VirtualGraphOutsideItsParent) {
  Device d = device();
  Graph g(d.getTarget());
  EXPECT_FALSE(message_of<UserError>([&] { g.createVirtualGraph(2, 9); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { g.createVirtualGraph(3, 1); }).empty());
}

TEST(IpuMisuse, InitialValueWithTooFewValues) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {4}, "t");
  std::vector<float> three = {1, 2, 3};
  EXPECT_FALSE(message_of<UserError>([&] {
                 g.setInitialValue(t, ArrayRef<float>(three));
               }).empty());
}

TEST(IpuMisuse, StreamCopyOfAnotherSize) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {4}, "t");
  g.setTileMapping(t, 0);
  auto s = g.addHostToDeviceFIFO("feed", FLOAT, 6);
  EXPECT_FALSE(message_of<UserError>([&] { Copy(s, t); }).empty());
}

TEST(IpuMisuse, DuplicateHostHandles) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {4}, "t");
  g.createHostWrite("x", t);
  EXPECT_FALSE(message_of<UserError>([&] { g.createHostWrite("x", t); }).empty());
  g.addHostToDeviceFIFO("s", FLOAT, 4);
  EXPECT_FALSE(message_of<UserError>([&] { g.addHostToDeviceFIFO("s", FLOAT, 4); }).empty());
}

TEST(IpuMisuse, ControlFlowOnAPredicateThatIsNotAScalar) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor p = g.addVariable(INT, {3}, "p");
  g.setTileMapping(p, 0);
  EXPECT_FALSE(message_of<UserError>([&] { If(p, Sequence(), Sequence()); }).empty());
  EXPECT_FALSE(
      message_of<UserError>([&] { RepeatWhileTrue(Sequence(), p, Sequence()); }).empty());
  EXPECT_FALSE(message_of<UserError>([&] { Switch(p, Sequence()); }).empty());
}

TEST(IpuMisuse, MapExpressionNamingAMissingOperand) {
  Device d = device();
  Graph g(d.getTarget());
  popops::addCodelets(g);
  Tensor a = g.addVariable(FLOAT, {4}, "a");
  g.setTileMapping(a, 0);
  Sequence prog;
  namespace pe = popops::expr;
  EXPECT_FALSE(message_of<UserError>([&] {
                 popops::map(g, pe::Add(pe::_1, pe::_3), {a}, prog);
               }).empty());
}

TEST(IpuMisuse, RemoteBufferWhoseBytesOverflow) {
  Device d = device();
  Graph g(d.getTarget());
  EXPECT_MENTIONS(message_of<UserError>([&] {
                    g.addRemoteBuffer("rb", FLOAT, std::size_t{1} << 30, std::size_t{1} << 34);
                  }),
                  "'rb'");
}

}  // namespace

// A constant of 2^31 elements cannot be stored on an IPU (the target's tiles x bytes per tile):
// refused before the host makes the 8 GiB of values, as a setInitialValue that large is.
TEST(IpuMisuse, ConstantLargerThanTheIpuIsRefusedBeforeAllocating) {
  Device d = device();
  Graph g(d.getTarget());
  const std::size_t n = std::size_t{1} << 31;
  std::string m = message_of<tessera::DeviceFault>(
      [&] { g.addConstant<float>(FLOAT, {n}, 1.0f, "huge"); });
  EXPECT_MENTIONS(m, "'huge'");
  EXPECT_MENTIONS(m, "2147483648 elements");
  EXPECT_MENTIONS(m, "4 tiles hold 2555904 B");  // 4 tiles of 624 KiB
  Tensor big = g.addVariable(FLOAT, {n}, "big");
  EXPECT_MENTIONS(message_of<tessera::DeviceFault>([&] { g.setInitialValue(big[0], 2.0f); }),
                  "variable of 8589934592 B");
  // One that fits is filled from the one value.
  Graph small(d.getTarget());
  Tensor c = small.addConstant<int>(INT, {3}, 7, "c");
  small.setTileMapping(c, 0);
  small.createHostRead("c", c);
  Engine e(small, Sequence{});
  e.load(d);
  std::vector<int> out(3);
  e.readTensor("c", out.data(), out.data() + 3);
  EXPECT_EQ(out, (std::vector<int>{7, 7, 7}));
}

// Broadcasting one element 2^31 times is 2^31 runs of a view: sized against the host memory
// limit before any is made.
TEST(IpuMisuse, BroadcastLargerThanHostMemoryIsRefusedBeforeAllocating) {
  Device d = device();
  Graph g(d.getTarget());
  Tensor t = g.addVariable(FLOAT, {1, 2}, "t");
  setenv("TESSERA_HOST_MEMORY_LIMIT", "1G", 1);
  std::string m = message_of<UserError>([&] { t.broadcast(1u << 31, 0); });
  unsetenv("TESSERA_HOST_MEMORY_LIMIT");
  EXPECT_MENTIONS(m, "broadcast of a tensor of shape {1,2} 2147483648 times along dimension 0");
  EXPECT_MENTIONS(m, "TESSERA_HOST_MEMORY_LIMIT");
  Tensor b = t.broadcast(3, 1);  // {1, 6}: t[0] t[1] t[0] t[1] t[0] t[1]
  ASSERT_EQ(b.shape(), (std::vector<std::size_t>{1, 6}));
  EXPECT_EQ(b.regions().size(), 3u);
  EXPECT_EQ(b[0][2].regions()[0].begin, 0u);
  EXPECT_EQ(b[0][5].regions()[0].begin, 4u);
}
