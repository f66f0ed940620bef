// Ascend C and AscendCL names that public samples use, each against its definition in Huawei's
// API reference: the reductions within repeats (WholeReduce*, BlockReduce*, PairReduceSum),
// Brcb, the mask register (SetVectorMask, SetMaskCount/SetMaskNorm, isSetMask = false),
// TILING_KEY_IS, and the AscendCL runtime (aclrt* memory, streams, launches, error codes).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aicore_common.h"
#include "register/op_def_registry.h"
#include "tessera/targets/aicore/api/acl_launch.h"
#include "tiling/context/context_builder.h"

// An operator's host file in CANN's form: tiling, shape and type inference, the prototype.
namespace optiling {
BEGIN_TILING_DATA_DEF(ScaleTiling)
TILING_DATA_FIELD_DEF(uint32_t, length);
END_TILING_DATA_DEF;
REGISTER_TILING_DATA_CLASS(ScaleCustom, ScaleTiling)

static ge::graphStatus ScaleTilingFunc(gert::TilingContext* context) {
  ScaleTiling tiling;
  tiling.set_length(
      static_cast<uint32_t>(context->GetInputShape(0)->GetStorageShape().GetShapeSize()));
  context->SetBlockDim(context->GetInputTensor(0)->GetDataType() == ge::DT_FLOAT ? 4 : 2);
  context->SetTilingKey(5);
  tiling.SaveToBuffer(context->GetRawTilingData()->GetData(),
                      context->GetRawTilingData()->GetCapacity());
  context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
  return ge::GRAPH_SUCCESS;
}
}  // namespace optiling
namespace ge {
static graphStatus ScaleInferShape(gert::InferShapeContext* context) {
  *context->GetOutputShape(0) = *context->GetInputShape(0);
  return GRAPH_SUCCESS;
}
static graphStatus ScaleInferDataType(gert::InferDataTypeContext* context) {
  return context->SetOutputDataType(0, context->GetInputDataType(0));
}
}  // namespace ge
namespace ops {
class ScaleCustom : public OpDef {
 public:
  explicit ScaleCustom(const char* name) : OpDef(name) {
    this->Input("x")
        .ParamType(REQUIRED)
        .DataType({ge::DT_FLOAT, ge::DT_FLOAT16})
        .Format({ge::FORMAT_ND, ge::FORMAT_ND});
    this->Output("y")
        .ParamType(REQUIRED)
        .DataType({ge::DT_FLOAT, ge::DT_FLOAT16})
        .Format({ge::FORMAT_ND, ge::FORMAT_ND});
    this->Attr("scale").AttrType(OPTIONAL).Float(2.0f);
    this->SetInferShape(ge::ScaleInferShape).SetInferDataType(ge::ScaleInferDataType);
    this->AICore().SetTiling(optiling::ScaleTilingFunc).AddConfig("ascend910");
  }
};
OP_ADD(ScaleCustom);
}  // namespace ops

using namespace AscendC;
using aicore_test::Gm;

namespace {

// What a kernel does between copying 512 floats of x into UB (lx, also as halves) and copying
// 512 floats of z (lz, zeroed first, also as halves) out.
enum class Op {
  whole_sum_tree,
  whole_sum_strided,
  whole_max_orders,
  block_reduce,
  pair_sum,
  brcb,
  counter_reduce,
  counter_add,
  register_mask_add,
  counter_strided_add,
  tiling_key,
  more_ops,
  pad_copy,
  vector_copy,
  misaligned_whole_max,
  counter_zero
};

template <Op Which>
void reduce_kernel(GM_ADDR x, GM_ADDR z) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> bx, bz, bt;
  pipe.InitBuffer(bx, 2048);
  pipe.InitBuffer(bz, 2048);
  pipe.InitBuffer(bt, 2048);
  GlobalTensor<float> gx, gz;
  gx.SetGlobalBuffer((__gm__ float*)x, 512);
  gz.SetGlobalBuffer((__gm__ float*)z, 512);
  LocalTensor<float> lx = bx.Get<float>(), lz = bz.Get<float>(), lt = bt.Get<float>();
  LocalTensor<half> hx = lx.ReinterpretCast<half>(), hz = lz.ReinterpretCast<half>();
  DataCopy(lx, gx, 512);
  Duplicate(lz, 0.0f, 512);
  PipeBarrier<PIPE_ALL>();
  if constexpr (Which == Op::whole_sum_tree) {
    WholeReduceSum<half>(hz, hx, 128, 1, 1, 1, 8);
  }
  if constexpr (Which == Op::whole_sum_strided) {
    // 3 repeats of the even blocks of x (srcBlkStride 2, 16 blocks a repeat), results 2 apart.
    uint64_t mask[2] = {0xFFFF'FFFF'FFFF'FFFFull, 0};
    WholeReduceSum<float>(lz, lx, mask, 3, 2, 2, 16);
  }
  if constexpr (Which == Op::whole_max_orders) {
    WholeReduceMax<float>(lz, lx, 64, 2, 1, 1, 8);  // value, index: 2 repeats at z[0..3]
    WholeReduceMin<float>(lz[8], lx, 64, 2, 1, 1, 8, ReduceOrder::ORDER_INDEX_VALUE);
    WholeReduceMax<float>(lz[16], lx, 64, 2, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
    WholeReduceMin<float>(lz[24], lx, 64, 2, 1, 1, 8, ReduceOrder::ORDER_ONLY_INDEX);
  }
  if constexpr (Which == Op::block_reduce) {
    uint64_t mask[2] = {0x5555'5555'5555'5555ull, 0};  // even lanes
    BlockReduceSum<float>(lz, lx, 2, 64, 1, 1, 8);
    BlockReduceMax<float>(lz[16], lx, 2, mask, 2, 1, 8);  // results 16 floats apart
    BlockReduceMin<float>(lz[48], lx, 1, 64, 1, 1, 8);
  }
  if constexpr (Which == Op::pair_sum) {
    PairReduceSum<float>(lz, lx, 2, 64, 1, 1, 8);
  }
  if constexpr (Which == Op::brcb) {
    Brcb(lz, lx, 2, BrcbRepeatParams(2, 16));
  }
  if constexpr (Which == Op::counter_reduce) {
    // 200 floats: 3 whole repeats and 8 lanes, then the 4 partial sums.
    SetMaskCount();
    SetVectorMask<float>(0, 200);
    WholeReduceSum<float, false>(lt, lx, MASK_PLACEHOLDER, 1, 1, 1, 8);
    PipeBarrier<PIPE_V>();
    SetVectorMask<float>(0, 4);
    WholeReduceSum<float, false>(lz, lt, MASK_PLACEHOLDER, 1, 1, 1, 8);
    SetVectorMask<float>(0, 100);
    BlockReduceSum<float, false>(lz[8], lx, 1, MASK_PLACEHOLDER, 1, 1, 8);
    SetMaskNorm();
    ResetMask();
  }
  if constexpr (Which == Op::counter_add) {
    SetMaskCount();
    SetVectorMask<float>(0, 100);
    Add<float, false>(lz, lx, lx, MASK_PLACEHOLDER, 1, {1, 1, 1, 8, 8, 8});
    SetMaskNorm();
  }
  if constexpr (Which == Op::register_mask_add) {
    SetVectorMask<float>(0, 0xF0F);  // lanes 0-3 and 8-11 of each repeat
    Add<float, false>(lz, lx, lx, MASK_PLACEHOLDER, 2, {1, 1, 1, 8, 8, 8});
    ResetMask();
    Muls<float, false>(lz[128], lx[128], 3.0f, MASK_PLACEHOLDER, 1, {1, 1, 8, 8});
  }
  if constexpr (Which == Op::counter_strided_add) {
    SetMaskCount();
    SetVectorMask<float>(0, 100);
    Add<float, false>(lz, lx, lx, MASK_PLACEHOLDER, 1, {2, 1, 1, 16, 8, 8});
  }
  if constexpr (Which == Op::more_ops) {
    // Floats: z[0..64) AddRelu, [64..128) SubRelu, [128..192) MulAddDst onto 1,
    // [192..256) FusedMulAdd with dst 2, [256..320) Axpy onto 1, [320..384) CreateVecIndex.
    AddRelu(lz, lx, lx[64], 64);
    SubRelu(lz[64], lx, lx[64], 64);
    Duplicate(lz[128], 1.0f, 64);
    MulAddDst(lz[128], lx, lx[64], 64);
    Duplicate(lz[192], 2.0f, 64);
    FusedMulAdd(lz[192], lx, lx[64], 64);
    Duplicate(lz[256], 1.0f, 64);
    Axpy(lz[256], lx, 0.5f, 64);
    CreateVecIndex(lz[320], 10.0f, 64);
    // int16 from z[384] (as 128 int16 of x's bits at x[128..192)): And, Or, Not, shifts.
    LocalTensor<int16_t> ix = lx[128].ReinterpretCast<int16_t>(),
                         iz = lz[384].ReinterpretCast<int16_t>();
    And(iz, ix, ix[16], 16);
    Or(iz[16], ix, ix[16], 16);
    Not(iz[32], ix, 16);
    ShiftLeft(iz[48], ix, static_cast<int16_t>(3), 16);
    ShiftRight(iz[64], ix, static_cast<int16_t>(2), 16);
  }
  if constexpr (Which == Op::pad_copy) {
    // 2 rows of 5 floats, 4 bytes apart in GM, each padded to 8 floats with 7.0f.
    const float seven = 7.0f;
    uint32_t bits = 0;
    std::memcpy(&bits, &seven, 4);
    // Four braced values are the older DataCopyParams (DataCopyExtParams takes five).
    DataCopyPad(lt, gx, {2, 20, 4, 0}, DataCopyPadParams{true, 0, 3, bits});
    PipeBarrier<PIPE_ALL>();
    DataCopy(lz, lt, 16);
  }
  if constexpr (Which == Op::vector_copy) {
    // 2 repeats of the first 12 lanes, source blocks 2 apart, destination repeats 4 blocks apart.
    const TEventID id = GetTPipePtr()->FetchEventID(HardEvent::V_S);
    Copy(lz, lx, 12, 2, CopyRepeatParams(1, 2, 4, 16));
    SetFlag<HardEvent::V_S>(id);
    WaitFlag<HardEvent::V_S>(id);
  }
  if constexpr (Which == Op::misaligned_whole_max) {
    WholeReduceMax<float>(lz[1], lx, 64, 1, 1, 1, 8);  // value and index need 8-byte alignment
  }
  if constexpr (Which == Op::counter_zero) {
    SetMaskCount();
    SetVectorMask<float>(0, 0);
    WholeReduceSum<float, false>(lz, lx, MASK_PLACEHOLDER, 1, 1, 1, 8);
  }
  if constexpr (Which == Op::tiling_key) {
    if (TILING_KEY_IS(7)) Duplicate(lz, 7.0f, 8);
    if (TILING_KEY_IS(9)) Duplicate(lz, 9.0f, 8);
  }
  PipeBarrier<PIPE_ALL>();
  DataCopy(gz, lz, 512);
}

struct Scratch {
  Gm<float> x{512}, z{512};
  explicit Scratch(unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> d(-4.0f, 4.0f);
    for (int i = 0; i < 512; ++i) x[i] = d(gen);
  }
  template <Op Which>
  void go() {
    ICPU_RUN_KF(reduce_kernel<Which>, 1, x.addr(), z.addr());
  }
  half hz(int i) const {
    half v;
    std::memcpy(&v, reinterpret_cast<const char*>(z.p) + 2 * i, 2);
    return v;
  }
  std::uint32_t bits(int i) const {
    std::uint32_t b;
    std::memcpy(&b, &z.p[i], 4);
    return b;
  }
};

TEST(AicoreReduce, WholeReduceSumAddsPairwiseInTheElementType) {
  Scratch run(1);
  // 2048 then 127 ones, as halves: an in-order half sum stays at 2048 (2049 rounds to even),
  // the exact sum is 2175, the pairwise tree gives 2174 (2048 + 1 rounds once at the leaves).
  half* hx = reinterpret_cast<half*>(run.x.p);
  hx[0] = static_cast<half>(2048.0f);
  for (int i = 1; i < 128; ++i) hx[i] = static_cast<half>(1.0f);
  run.go<Op::whole_sum_tree>();
  EXPECT_EQ(static_cast<float>(run.hz(0)), 2174.0f);
  EXPECT_EQ(static_cast<float>(run.hz(1)), 0.0f);  // one result for one repeat
}

TEST(AicoreReduce, WholeReduceSumFollowsBlockAndRepeatStrides) {
  Scratch run(2);
  for (int i = 0; i < 512; ++i) run.x[i] = static_cast<float>(i % 17) - 8.0f;  // exact sums
  run.go<Op::whole_sum_strided>();
  for (int r = 0; r < 3; ++r) {
    float want = 0;
    for (int b = 0; b < 8; ++b)
      for (int e = 0; e < 8; ++e) want += run.x[r * 128 + b * 16 + e];
    EXPECT_EQ(run.z[2 * r], want) << "repeat " << r;
    EXPECT_EQ(run.z[2 * r + 1], 0.0f);
  }
}

TEST(AicoreReduce, WholeReduceMaxAndMinPlaceValueAndIndexAsTheOrderSays) {
  Scratch run(3);
  run.x[70] = run.x[90] = 100.0f;  // ties: the first lane's index (6 of repeat 1)
  run.x[5] = -100.0f;
  run.go<Op::whole_max_orders>();
  for (int r = 0; r < 2; ++r) {
    int hi = 0, lo = 0;
    for (int l = 1; l < 64; ++l) {
      if (run.x[r * 64 + l] > run.x[r * 64 + hi]) hi = l;
      if (run.x[r * 64 + l] < run.x[r * 64 + lo]) lo = l;
    }
    EXPECT_EQ(run.z[2 * r], run.x[r * 64 + hi]);
    EXPECT_EQ(run.bits(2 * r + 1), static_cast<std::uint32_t>(hi));
    EXPECT_EQ(run.bits(8 + 2 * r), static_cast<std::uint32_t>(lo));
    EXPECT_EQ(run.z[8 + 2 * r + 1], run.x[r * 64 + lo]);
    EXPECT_EQ(run.z[16 + r], run.x[r * 64 + hi]);
    EXPECT_EQ(run.bits(24 + r), static_cast<std::uint32_t>(lo));
  }
  EXPECT_EQ(run.bits(3), 6u);
  EXPECT_EQ(run.bits(8), 5u);
}

TEST(AicoreReduce, BlockReduceGivesOneResultPerBlockOfTheEnabledLanes) {
  Scratch run(4);
  for (int i = 0; i < 512; ++i) run.x[i] = static_cast<float>((i * 7) % 23) - 11.0f;
  run.go<Op::block_reduce>();
  for (int r = 0; r < 2; ++r)
    for (int b = 0; b < 8; ++b) {
      float sum = 0, hi = -1e30f;
      for (int e = 0; e < 8; ++e) {
        sum += run.x[r * 64 + b * 8 + e];
        if (e % 2 == 0) hi = std::max(hi, run.x[r * 64 + b * 8 + e]);
      }
      EXPECT_EQ(run.z[r * 8 + b], sum);
      EXPECT_EQ(run.z[16 + r * 16 + b], hi);  // dstRepStride 2: 16 floats a repeat
      EXPECT_EQ(run.z[16 + r * 16 + 8 + b], 0.0f);
    }
  for (int b = 0; b < 8; ++b) {
    float lo = 1e30f;
    for (int e = 0; e < 8; ++e) lo = std::min(lo, run.x[b * 8 + e]);
    EXPECT_EQ(run.z[48 + b], lo);
  }
}

TEST(AicoreReduce, PairReduceSumAddsNeighbours) {
  Scratch run(5);
  run.go<Op::pair_sum>();
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 32; ++j)
      EXPECT_EQ(run.z[r * 32 + j], run.x[r * 64 + 2 * j] + run.x[r * 64 + 2 * j + 1]);
}

TEST(AicoreReduce, BrcbFillsOneBlockPerElement) {
  Scratch run(6);
  run.go<Op::brcb>();
  // Repeat r, element j: block r * 16 + j * 2 (dstRepStride 16, dstBlkStride 2) of 8 floats.
  for (int block = 0; block < 64; ++block) {
    const int r = block / 16, j = block % 16 / 2;
    const bool written = r < 2 && block % 2 == 0;
    for (int e = 0; e < 8; ++e)
      EXPECT_EQ(run.z[block * 8 + e], written ? run.x[r * 8 + j] : 0.0f) << "block " << block;
  }
}

TEST(AicoreMask, CounterModeRunsTheRegistersCountOfElements) {
  Scratch run(7);
  for (int i = 0; i < 512; ++i) run.x[i] = static_cast<float>(i % 9) - 4.0f;
  run.go<Op::counter_reduce>();
  float total = 0;
  for (int i = 0; i < 200; ++i) total += run.x[i];
  EXPECT_EQ(run.z[0], total);
  EXPECT_EQ(run.z[1], 0.0f);
  // 100 elements in blocks of 8: 12 whole blocks and one of 4.
  for (int b = 0; b < 13; ++b) {
    float sum = 0;
    for (int e = 0; e < 8 && b * 8 + e < 100; ++e) sum += run.x[b * 8 + e];
    EXPECT_EQ(run.z[8 + b], sum) << "block " << b;
  }
  EXPECT_EQ(run.z[8 + 13], 0.0f);

  Scratch add(8);
  add.go<Op::counter_add>();
  for (int i = 0; i < 128; ++i) EXPECT_EQ(add.z[i], i < 100 ? 2 * add.x[i] : 0.0f) << i;
}

TEST(AicoreMask, IsSetMaskFalseUsesTheRegistersLanes) {
  Scratch run(9);
  run.go<Op::register_mask_add>();
  for (int i = 0; i < 128; ++i) {
    const bool on = i % 64 < 4 || (i % 64 >= 8 && i % 64 < 12);
    EXPECT_EQ(run.z[i], on ? 2 * run.x[i] : 0.0f) << i;
  }
  for (int i = 128; i < 192; ++i) EXPECT_EQ(run.z[i], 3 * run.x[i]) << i;  // after ResetMask
}

TEST(AicoreMask, CounterModeWithStridesIsRefusedByName) {
  Scratch run(10);
  try {
    run.go<Op::counter_strided_add>();
    ADD_FAILURE() << "expected a UserError";
  } catch (const tessera::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("counter mode"), std::string::npos) << e.what();
  }
}

TEST(AicoreTiling, TilingKeyIsTheKeyTheHostSet) {
  Scratch run(11);
  ICPU_SET_TILING_KEY(9);
  run.go<Op::tiling_key>();
  EXPECT_EQ(run.z[0], 9.0f);
  ICPU_SET_TILING_KEY(7);
  run.go<Op::tiling_key>();
  EXPECT_EQ(run.z[0], 7.0f);
  ICPU_SET_TILING_KEY(0);
}

TEST(AicoreVector, FusedBitwiseAndIndexOpsMatchTheirDefinitions) {
  Scratch run(12);
  run.go<Op::more_ops>();
  const float* x = run.x.p;
  for (int i = 0; i < 64; ++i) {
    const float a = x[i], b = x[64 + i];
    EXPECT_EQ(run.z[i], std::max(a + b, 0.0f)) << i;
    EXPECT_EQ(run.z[64 + i], std::max(a - b, 0.0f)) << i;
    EXPECT_EQ(run.z[128 + i], a * b + 1.0f) << i;
    EXPECT_EQ(run.z[192 + i], a * 2.0f + b) << i;
    EXPECT_EQ(run.z[256 + i], a * 0.5f + 1.0f) << i;
    EXPECT_EQ(run.z[320 + i], 10.0f + static_cast<float>(i)) << i;
  }
  int16_t ix[32], iz[80];
  std::memcpy(ix, &x[128], sizeof ix);
  std::memcpy(iz, &run.z[384], sizeof iz);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(iz[i], static_cast<int16_t>(ix[i] & ix[16 + i]));
    EXPECT_EQ(iz[16 + i], static_cast<int16_t>(ix[i] | ix[16 + i]));
    EXPECT_EQ(iz[32 + i], static_cast<int16_t>(~ix[i]));
    EXPECT_EQ(iz[48 + i], static_cast<int16_t>(ix[i] << 3));
    EXPECT_EQ(iz[64 + i], static_cast<int16_t>(ix[i] >> 2));
  }
}

TEST(AicoreOpDef, OpAddRegistersThePrototypeAndItsFunctions) {
  ops::OpDef& def = tessera::aicore::op_def("ScaleCustom");
  ASSERT_EQ(def.GetInputs().size(), 1u);
  EXPECT_EQ(def.GetInputs()[0].GetName(), "x");
  EXPECT_EQ(def.GetInputs()[0].GetDataTypes().size(), 2u);
  EXPECT_EQ(def.GetAttrs()[0].GetDefault(), std::to_string(2.0f));
  ASSERT_NE(def.AICore().GetTiling(), nullptr);
  // The registered tiling function on a context from ContextBuilder.
  gert::StorageShape shape = {{6, 10}, {6, 10}};
  auto param = gert::TilingData::CreateCap(256);
  auto holder = context_ascendc::ContextBuilder()
                    .NodeIoNum(1, 1)
                    .IrInstanceNum({1})
                    .SetOpNameType("scale", "ScaleCustom")
                    .AddInputTd(0, ge::DT_FLOAT, ge::FORMAT_ND, ge::FORMAT_ND, shape)
                    .AddOutputTd(0, ge::DT_FLOAT, ge::FORMAT_ND, ge::FORMAT_ND, shape)
                    .TilingData(param.get())
                    .BuildTilingContext();
  gert::TilingContext* context = holder->GetContext<gert::TilingContext>();
  ASSERT_EQ(def.AICore().GetTiling()(context), ge::GRAPH_SUCCESS);
  EXPECT_EQ(context->GetBlockDim(), 4u);
  EXPECT_EQ(context->GetTilingKey(), 5u);
  optiling::ScaleTiling tiling;
  ASSERT_EQ(context->GetRawTilingData()->GetDataSize(), tiling.GetDataSize());
  uint32_t length = 0;
  std::memcpy(&length, context->GetRawTilingData()->GetData(), sizeof length);
  EXPECT_EQ(length, 60u);
  // Shape and type inference through their contexts.
  gert::InferShapeContext shapes({gert::Shape{6, 10}}, 1);
  ASSERT_EQ(def.GetInferShape()(&shapes), ge::GRAPH_SUCCESS);
  EXPECT_EQ(shapes.GetOutputShape(0)->GetShapeSize(), 60);
  gert::InferDataTypeContext types({ge::DT_FLOAT16}, 1);
  ASSERT_EQ(def.GetInferDataType()(&types), ge::GRAPH_SUCCESS);
  EXPECT_EQ(types.GetOutputDataType(0), ge::DT_FLOAT16);
  try {
    tessera::aicore::op_def("NoSuchOp");
    ADD_FAILURE() << "expected a UserError";
  } catch (const tessera::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("ScaleCustom"), std::string::npos) << e.what();
  }
}

TEST(AicoreCopy, DataCopyPadWithDataCopyParamsPadsEachRow) {
  Scratch run(13);
  run.go<Op::pad_copy>();
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(run.z[i], run.x[i]);
    EXPECT_EQ(run.z[8 + i], run.x[6 + i]);
  }
  for (int i = 5; i < 8; ++i) {
    EXPECT_EQ(run.z[i], 7.0f);
    EXPECT_EQ(run.z[8 + i], 7.0f);
  }
}

TEST(AicoreVector, CopyMovesTheEnabledLanesWithItsStrides) {
  Scratch run(14);
  run.go<Op::vector_copy>();
  // Lane l of repeat r: source block r * 16 + (l / 8) * 2, destination block r * 4 + l / 8.
  std::vector<float> want(512, 0.0f);
  for (int r = 0; r < 2; ++r)
    for (int l = 0; l < 12; ++l)
      want[(r * 4 + l / 8) * 8 + l % 8] = run.x[(r * 16 + (l / 8) * 2) * 8 + l % 8];
  for (int i = 0; i < 512; ++i) EXPECT_EQ(run.z[i], want[i]) << i;
}

TEST(AicoreReduce, MisuseIsADeviceFaultNamingTheLimit) {
  Scratch run(15);
  aicore_test::expect_fault([&] { run.go<Op::misaligned_whole_max>(); },
                            {"WholeReduceMax", "8-byte aligned", "block 0"});
  aicore_test::expect_fault([&] { run.go<Op::counter_zero>(); },
                            {"WholeReduceSum", "counter mode", "count of 0"});
}

// ---- AscendCL ----

void scale_kernel(GM_ADDR x, GM_ADDR z, float k) {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> in;
  TQue<QuePosition::VECOUT, 1> out;
  pipe.InitBuffer(in, 1, 1024);
  pipe.InitBuffer(out, 1, 1024);
  GlobalTensor<float> gx, gz;
  gx.SetGlobalBuffer((__gm__ float*)x + 256 * GetBlockIdx(), 256);
  gz.SetGlobalBuffer((__gm__ float*)z + 256 * GetBlockIdx(), 256);
  LocalTensor<float> a = in.AllocTensor<float>();
  DataCopy(a, gx, 256);
  in.EnQue(a);
  LocalTensor<float> b = in.DeQue<float>();
  LocalTensor<float> c = out.AllocTensor<float>();
  Muls(c, b, k, 256);
  out.EnQue(c);
  in.FreeTensor(b);
  LocalTensor<float> d = out.DeQue<float>();
  DataCopy(gz, d, 256);
  out.FreeTensor(d);
}

void empty_dequeue_kernel() {
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> in;
  pipe.InitBuffer(in, 1, 256);
  (void)in.DeQue<float>();
}

void assert_kernel(GM_ADDR, uint32_t blocks) {
  ASSERT(GetBlockNum() == blocks && "launched on the expected block count");
}

TEST(AicoreAssert, AFalseKernelAssertIsAFaultNamingTheCondition) {
  ICPU_RUN_KF(assert_kernel, 2, nullptr, 2u);
  aicore_test::expect_fault([] { ICPU_RUN_KF(assert_kernel, 3, nullptr, 2u); },
                            {"ASSERT", "GetBlockNum() == blocks", "aicore_compat_test.cpp"});
}

TEST(AicoreAcl, RuntimeCopiesLaunchesAndSynchronises) {
  ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
  EXPECT_EQ(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE);
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  aclrtStream stream = nullptr;
  ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  const size_t bytes = 4 * 256 * sizeof(float);
  float *xh = nullptr, *zh = nullptr;
  void *xd = nullptr, *zd = nullptr;
  ASSERT_EQ(aclrtMallocHost(reinterpret_cast<void**>(&xh), bytes), ACL_SUCCESS);
  ASSERT_EQ(aclrtMallocHost(reinterpret_cast<void**>(&zh), bytes), ACL_SUCCESS);
  ASSERT_EQ(aclrtMalloc(&xd, bytes, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  ASSERT_EQ(aclrtMalloc(&zd, bytes, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  for (int i = 0; i < 1024; ++i) xh[i] = 0.5f * static_cast<float>(i % 37);
  tessera::aicore::device().reset_profile();
  ASSERT_EQ(aclrtMemcpy(xd, bytes, xh, bytes, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
  // The copy crossed the host link: the profile counts its bytes.
  std::uint64_t moved = 0;
  for (const auto& [level, n] : tessera::aicore::device().profile().bytes_moved) moved += n;
  EXPECT_GE(moved, bytes);
  ASSERT_EQ(tessera::aicore::acl_launch(
                "scale_kernel", 4, stream,
                [&] { scale_kernel(static_cast<GM_ADDR>(xd), static_cast<GM_ADDR>(zd), 3.0f); }),
            0u);
  ASSERT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemcpy(zh, bytes, zd, bytes, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(zh[i], 3.0f * xh[i]) << i;
  EXPECT_EQ(aclrtFree(xd), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(zd), ACL_SUCCESS);
  EXPECT_EQ(aclrtFreeHost(xh), ACL_SUCCESS);
  EXPECT_EQ(aclrtFreeHost(zh), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
  EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

TEST(AicoreAcl, MisuseReturnsTheDocumentedCodesWithAReason) {
  void* d = nullptr;
  EXPECT_EQ(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_CONTEXT_NULL);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("aclrtSetDevice"), std::string::npos);
  EXPECT_EQ(aclrtSetDevice(1), ACL_ERROR_RT_INVALID_DEVICEID);
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  ASSERT_EQ(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  std::vector<char> host(64);
  // The kind must match the pointers, and count must fit destMax.
  EXPECT_EQ(aclrtMemcpy(host.data(), 64, d, 64, ACL_MEMCPY_HOST_TO_DEVICE),
            ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("kind"), std::string::npos);
  EXPECT_EQ(aclrtMemcpy(d, 32, host.data(), 64, ACL_MEMCPY_HOST_TO_DEVICE),
            ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtMemcpy(d, 128, host.data(), 128, ACL_MEMCPY_HOST_TO_DEVICE),
            ACL_ERROR_INVALID_PARAM);  // 128 B past a 64-byte allocation
  EXPECT_EQ(aclrtFreeHost(host.data()), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtDestroyStream(reinterpret_cast<aclrtStream>(host.data())),
            ACL_ERROR_INVALID_PARAM);
  // A kernel's fault: the launch is queued (0), the stream's next sync reports it once.
  EXPECT_EQ(tessera::aicore::acl_launch("empty_dequeue_kernel", 1, nullptr,
                                        [] { empty_dequeue_kernel(); }),
            0u);
  EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_ERROR_RT_AICORE_EXCEPTION);
  const std::string why = aclGetRecentErrMsg();
  EXPECT_NE(why.find("DeQue"), std::string::npos) << why;
  EXPECT_NE(why.find("empty"), std::string::npos) << why;
  EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
  EXPECT_EQ(tessera::aicore::acl_launch("empty_dequeue_kernel", 0, nullptr, [] {}),
            static_cast<std::uint32_t>(ACL_ERROR_INVALID_PARAM));
  EXPECT_EQ(aclrtFree(d), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(d), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
}

TEST(AicoreAcl, HalfConversionsRoundToNearest) {
  EXPECT_EQ(aclFloat16ToFloat(aclFloatToFloat16(1.5f)), 1.5f);
  EXPECT_EQ(aclFloatToFloat16(1.0f), 0x3C00);
  EXPECT_EQ(aclFloat16ToFloat(aclFloatToFloat16(2049.0f)), 2048.0f);
  EXPECT_EQ(aclDataTypeSize(ACL_FLOAT16), 2u);
}

}  // namespace
