// Data movement kernels (pad, transpose, concat, slice, gather) for every element size against
// ops/reference; they move bits, so results must be exact.
#include "kernels_util.h"

namespace kernels_test {
namespace {

class Movement : public KernelTest, public ::testing::WithParamInterface<DType> {};

TEST_P(Movement, PadConstantAndCrop) {
  const DType dt = GetParam();
  const Tensor x = random_tensor(dt, Shape{70, 3, 2}, -50, 50, 1);
  const std::vector<std::vector<std::int64_t>> cases = {
      {3, 1, 0, 2, 0, 1}, {-5, 0, 1, 2, -1, 0}, {0, 0, 0, 64, 0, 0}};
  for (const auto& pads : cases) {
    ops::PadParams rp;
    rp.pads = pads;
    rp.value = 7;
    const Tensor expected = ops::pad(x, rp);
    const DeviceTensor out = alloc(dt, expected.shape());
    top::pad(rt(), upload(x), out, pads, 7);
    expect_close(download(out), expected, 0, 0,
                 fmt::format("pad {} {}", dtype_name(dt), expected.shape().to_string()));
  }
}

TEST_P(Movement, PadReflectAndEdge) {
  const DType dt = GetParam();
  const Tensor x = random_tensor(dt, Shape{70, 3, 2}, -50, 50, 2);
  const std::vector<std::vector<std::int64_t>> cases = {
      {3, 1, 0, 2, 0, 1}, {65, 2, 1, 70, 4, 3}, {-5, 0, 1, 2, -1, 0}, {0, 0, 0, 64, 0, 0}};
  for (const auto& pads : cases)
    for (auto mode : {kernels::PadMode::reflect, kernels::PadMode::edge}) {
      ops::PadParams rp;
      rp.pads = pads;
      rp.mode = mode == kernels::PadMode::edge ? ops::PadMode::edge : ops::PadMode::reflect;
      const Tensor expected = ops::pad(x, rp);
      const DeviceTensor out = alloc(dt, expected.shape());
      top::pad(rt(), upload(x), out, pads, 0.0, mode);
      expect_close(download(out), expected, 0, 0,
                   fmt::format("pad {} {} mode {}", dtype_name(dt), expected.shape().to_string(),
                               static_cast<int>(mode)));
    }
}

TEST_P(Movement, TransposeKeepingAndMovingDimensionZero) {
  const DType dt = GetParam();
  struct Case {
    Shape x;
    std::vector<int> perm;
  };
  const Case cases[] = {{Shape{70, 3, 5, 2}, {0, 2, 1, 3}},
                        {Shape{70, 3, 5, 2}, {2, 0, 3, 1}},
                        {Shape{70, 3, 5, 2}, {3, 2, 1, 0}},
                        {Shape{3, 4, 2, 3, 2}, {4, 0, 1, 3, 2}},
                        {Shape{130, 3}, {1, 0}}};
  std::uint32_t seed = 10;
  for (const Case& c : cases) {
    const Tensor x = random_tensor(dt, c.x, -50, 50, seed++);
    const Tensor expected = ops::transpose(x, c.perm);
    const DeviceTensor out = alloc(dt, expected.shape());
    top::transpose(rt(), upload(x), out, c.perm);
    expect_close(download(out), expected, 0, 0,
                 fmt::format("transpose {} {} perm {}{}{}", dtype_name(dt), c.x.to_string(),
                             c.perm[0], c.perm[1], c.perm.size() > 2 ? c.perm[2] : 0));
  }
}

TEST_P(Movement, ConcatAlongDimensionZeroAndOthers) {
  const DType dt = GetParam();
  struct Case {
    std::vector<Shape> inputs;
    int axis;
  };
  const Case cases[] = {{{Shape{70, 3}, Shape{5, 3}, Shape{64, 3}}, 0},
                        {{Shape{70, 2}, Shape{70, 1}, Shape{70, 3}}, 1},
                        {{Shape{3, 2, 2}, Shape{300, 2, 2}}, 0},
                        {{Shape{7, 2, 1, 2}, Shape{7, 2, 4, 2}}, 2}};
  std::uint32_t seed = 30;
  for (const Case& c : cases) {
    std::vector<Tensor> xs;
    std::vector<DeviceTensor> dxs;
    for (const Shape& s : c.inputs) {
      xs.push_back(random_tensor(dt, s, -50, 50, seed++));
      dxs.push_back(upload(xs.back()));
    }
    const Tensor expected = ops::concat(xs, c.axis);
    const DeviceTensor out = alloc(dt, expected.shape());
    top::concat(rt(), dxs, out, c.axis);
    expect_close(download(out), expected, 0, 0,
                 fmt::format("concat {} axis {} into {}", dtype_name(dt), c.axis,
                             expected.shape().to_string()));
  }
}

TEST_P(Movement, SliceWithStepsIncludingNegativeAndAlongDimensionZero) {
  const DType dt = GetParam();
  const Tensor x = random_tensor(dt, Shape{130, 6, 5}, -50, 50, 50);
  struct Case {
    std::vector<std::int64_t> starts, steps;
    Shape out;
  };
  const Case cases[] = {{{3, 1, 4}, {1, 2, -1}, Shape{100, 3, 5}},
                        {{1, 0, 0}, {3, 1, 1}, Shape{43, 6, 5}},
                        {{129, 5, 2}, {-2, -1, 1}, Shape{65, 6, 2}}};
  for (const Case& c : cases) {
    Tensor expected(dt, c.out);
    for (std::int64_t k = 0; k < c.out[2]; ++k)
      for (std::int64_t j = 0; j < c.out[1]; ++j)
        for (std::int64_t i = 0; i < c.out[0]; ++i)
          expected.set({i, j, k},
                       x.at<double>({c.starts[0] + i * c.steps[0], c.starts[1] + j * c.steps[1],
                                     c.starts[2] + k * c.steps[2]}));
    const DeviceTensor out = alloc(dt, c.out);
    top::slice(rt(), upload(x), out, c.starts, c.steps);
    expect_close(download(out), expected, 0, 0,
                 fmt::format("slice {} into {}", dtype_name(dt), c.out.to_string()));
  }
}

TEST_P(Movement, GatherOnEachAxisWithNegativeIndices) {
  const DType dt = GetParam();
  const Tensor data = random_tensor(dt, Shape{70, 4, 3}, -50, 50, 60);
  const Tensor idx1 = Tensor::from_ints(DType::i32, Shape{5}, {0, -1, 2, 1, -3});
  const Tensor idx2 = Tensor::from_ints(DType::i32, Shape{3, 2}, {2, 0, 1, -1, 0, 2});
  for (const Tensor* idx : {&idx1, &idx2})
    for (int axis = 0; axis < 3; ++axis) {
      const Tensor expected = ops::gather(data, *idx, axis);
      const DeviceTensor out = alloc(dt, expected.shape());
      top::gather(rt(), upload(data), upload(*idx), out, axis);
      expect_close(download(out), expected, 0, 0,
                   fmt::format("gather {} axis {} indices {}", dtype_name(dt), axis,
                               idx->shape().to_string()));
    }
}

TEST_P(Movement, ExpandBroadcastsSizeOneDims) {
  const DType dt = GetParam();
  struct Case {
    Shape in, out;
  };
  const Case cases[] = {{Shape{70, 1, 3}, Shape{70, 4, 3}},
                        {Shape{1, 5}, Shape{130, 5}},
                        {Shape{3}, Shape{3, 2, 2, 2, 2}},
                        {Shape{}, Shape{65, 2}}};
  std::uint32_t seed = 80;
  for (const Case& c : cases) {
    const Tensor x = random_tensor(dt, c.in, -50, 50, seed++);
    const Tensor expected = ops::expand(x, c.out);
    const DeviceTensor out = alloc(dt, expected.shape());
    top::expand(rt(), upload(x), out);
    expect_close(
        download(out), expected, 0, 0,
        fmt::format("expand {} {} to {}", dtype_name(dt), c.in.to_string(), c.out.to_string()));
  }
}

INSTANTIATE_TEST_SUITE_P(Types, Movement,
                         ::testing::Values(DType::f32, DType::bf16, DType::i32, DType::i16,
                                           DType::i8),
                         [](const auto& p) { return std::string(dtype_name(p.param)); });

// A transpose that moves dimension 0 reads element by element through a_gen_addr_i: every one
// of those scalar reads counts its bytes and a global transaction, and takes the core's port.
TEST_F(KernelTest, AddressGeneratedReadsCountBytesAndTransactions) {
  const Tensor x = random_tensor(DType::f32, Shape{4, 6}, -1, 1, 3);
  const DeviceTensor out = alloc(DType::f32, Shape{6, 4});
  const auto& rec = top::transpose(rt(), upload(x), out, {1, 0});
  EXPECT_EQ(rec.bytes_read, 24u * 4u);
  EXPECT_GE(rec.metrics.at("global.transactions"), 24.0 + 1.0);  // 24 reads, at least a store
  EXPECT_GE(rec.metrics.at("global.port_cycles"), 24.0);
}

TEST_F(KernelTest, GatherIndexOutOfRangeIsADeviceFault) {
  const Tensor data = random_tensor(DType::f32, Shape{70, 4}, -1, 1, 1);
  const Tensor idx = Tensor::from_ints(DType::i32, Shape{2}, {1, 4});
  const DeviceTensor out = alloc(DType::f32, Shape{70, 2});
  try {
    top::gather(rt(), upload(data), upload(idx), out, 1);
    FAIL() << "expected a DeviceFault";
  } catch (const DeviceFault& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("gather_f32"), std::string::npos) << what;
    EXPECT_NE(what.find("index 4"), std::string::npos) << what;
  }
}

TEST_F(KernelTest, GlueRejectsWrongShapesAndTypesAsUserErrors) {
  const DeviceTensor a = alloc(DType::f32, Shape{70, 3});
  const DeviceTensor b = alloc(DType::f32, Shape{70, 2});
  const DeviceTensor bf = alloc(DType::bf16, Shape{70, 3});
  const DeviceTensor out = alloc(DType::f32, Shape{70, 3});
  EXPECT_THROW(top::add(rt(), a, b, out), UserError);           // does not broadcast
  EXPECT_THROW(top::add(rt(), a, bf, out), UserError);          // mixed dtypes
  EXPECT_THROW(top::relu(rt(), a, b), UserError);               // output size
  EXPECT_THROW(top::softmax(rt(), a, out, 3), UserError);       // axis beyond the rank
  EXPECT_THROW(top::reduce_sum(rt(), a, out, {1}), UserError);  // output keeps dim 1
  EXPECT_THROW(top::transpose(rt(), a, out, {1, 0}), UserError);
  EXPECT_THROW(top::pad(rt(), a, out, {1, 0}), UserError);  // pads per dim missing
  try {
    top::add(rt(), a, b, out);
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("add_f32"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kernels_test
