// Every rule the aicore target enforces (issue 11 item 4, spec 003), in both directions: the
// faulty kernel raises a DeviceFault naming core, pipes, instruction, buffer and bytes, and the
// corrected kernel runs clean.
#include "aicore_common.h"

using namespace aicore_test;
using namespace AscendC;

namespace {

constexpr int32_t kLen = 512;

// x -> UB -> +1 -> GM with explicit flags; `flags` false drops the MTE2 -> V flag.
template <bool Flags>
void explicit_flags_kernel(GM_ADDR x, GM_ADDR z) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> bx, bz;
  pipe.InitBuffer(bx, kLen * 2);
  pipe.InitBuffer(bz, kLen * 2);
  GlobalTensor<half> gx, gz;
  gx.SetGlobalBuffer((__gm__ half*)x, kLen);
  gz.SetGlobalBuffer((__gm__ half*)z, kLen);
  LocalTensor<half> lx = bx.Get<half>(), lz = bz.Get<half>();
  DataCopy(lx, gx, kLen);
  if constexpr (Flags) {
    SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
  }
  Adds(lz, lx, static_cast<half>(1.0f), kLen);
  set_flag(PIPE_V, PIPE_MTE3, EVENT_ID1);
  wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID1);
  DataCopy(gz, lz, kLen);
}

TEST(AicoreFaults, RaceAcrossPipesWithoutAFlag) {
  Gm<half> x(kLen), z(kLen);
  fill(x, 1);
  EXPECT_NO_THROW(ICPU_RUN_KF(explicit_flags_kernel<true>, 2, x.addr(), z.addr()));
  for (int i = 0; i < kLen; ++i)
    ASSERT_EQ(static_cast<float>(z[i]),
              static_cast<float>(static_cast<half>(static_cast<float>(x[i]) + 1.0f)));
  expect_fault(
      [&] { ICPU_RUN_KF(explicit_flags_kernel<false>, 2, x.addr(), z.addr()); },
      {"aicore0", "race on UB bytes [0x0, 0x400)", "pipe MTE2 (DataCopy)", "pipe V (Adds)"});
}

// Scalar reads of UB need a V -> S flag after the vector write.
template <bool Flag>
void scalar_kernel(GM_ADDR z) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> b;
  pipe.InitBuffer(b, 64);
  LocalTensor<float> t = b.Get<float>();
  Duplicate(t, 2.5f, 16);
  if constexpr (Flag) {
    SetFlag<HardEvent::V_S>(EVENT_ID0);
    WaitFlag<HardEvent::V_S>(EVENT_ID0);
  }
  GlobalTensor<float> g;
  g.SetGlobalBuffer((__gm__ float*)z, 1);
  g.SetValue(0, t.GetValue(3));
}

TEST(AicoreFaults, ScalarReadRacesWithTheVectorWrite) {
  Gm<float> z(1);
  EXPECT_NO_THROW(ICPU_RUN_KF(scalar_kernel<true>, 1, z.addr()));
  EXPECT_EQ(z[0], 2.5f);
  expect_fault([&] { ICPU_RUN_KF(scalar_kernel<false>, 1, z.addr()); },
               {"race on UB", "pipe V (Duplicate)", "pipe S (LocalTensor::GetValue)"});
}

// The other direction: a vector read of what the scalar unit stored needs an S -> V flag. The
// scalar unit also dispatches the vector instruction, but dispatch does not order its stores.
template <bool Flag>
void scalar_store_kernel(GM_ADDR z) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> a, b;
  pipe.InitBuffer(a, 64);
  pipe.InitBuffer(b, 64);
  LocalTensor<float> s = a.Get<float>(), d = b.Get<float>();
  for (int i = 0; i < 16; ++i) s.SetValue(i, static_cast<float>(i));
  if constexpr (Flag) {
    SetFlag<HardEvent::S_V>(EVENT_ID0);
    WaitFlag<HardEvent::S_V>(EVENT_ID0);
  }
  Muls(d, s, 2.0f, 16);
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  GlobalTensor<float> g;
  g.SetGlobalBuffer((__gm__ float*)z, 16);
  DataCopy(g, d, 16);
}

TEST(AicoreFaults, VectorReadRacesWithTheScalarStore) {
  Gm<float> z(16);
  EXPECT_NO_THROW(ICPU_RUN_KF(scalar_store_kernel<true>, 1, z.addr()));
  EXPECT_EQ(z[15], 30.0f);
  expect_fault([&] { ICPU_RUN_KF(scalar_store_kernel<false>, 1, z.addr()); },
               {"race on UB", "pipe S (LocalTensor::SetValue)", "pipe V (Muls)"});
}

template <int Mode>
void flag_kernel() {
  if constexpr (Mode == 0) {  // a wait with no set: deadlock
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID3);
  } else if constexpr (Mode == 1) {  // set twice before its wait
    SetFlag<HardEvent::MTE2_V>(EVENT_ID3);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID3);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID3);
  } else if constexpr (Mode == 2) {  // a set and its wait: fine
    SetFlag<HardEvent::MTE2_V>(EVENT_ID3);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID3);
    PipeBarrier<PIPE_V>();
    PipeBarrier<PIPE_ALL>();
  } else {  // an event id beyond the preset's 8
    SetFlag<HardEvent::MTE2_V>(9);
  }
}

TEST(AicoreFaults, DeadlockAndDoubleSetFlags) {
  EXPECT_NO_THROW(ICPU_RUN_KF(flag_kernel<2>, 1));
  expect_fault([] { ICPU_RUN_KF(flag_kernel<0>, 1); },
               {"aicore0", "deadlock", "V", "MTE2->V event 3"});
  expect_fault([] { ICPU_RUN_KF(flag_kernel<1>, 1); },
               {"aicore0", "pipe MTE2", "set twice before its wait_flag", "MTE2->V event 3"});
  expect_fault([] { ICPU_RUN_KF(flag_kernel<3>, 1); }, {"event id 9", "aicore.flag_ids"});
}

template <uint32_t Bytes>
void capacity_kernel() {
  TPipe pipe;
  TQue<QuePosition::VECIN, 2> q;
  pipe.InitBuffer(q, 2, Bytes);
}
template <uint32_t Bytes>
void l1_capacity_kernel() {
  TPipe pipe;
  TQue<QuePosition::A1, 1> q;
  pipe.InitBuffer(q, 1, Bytes);
}

TEST(AicoreFaults, InitBufferBeyondUbOrL1) {
  EXPECT_NO_THROW(ICPU_RUN_KF(capacity_kernel<128 * 1024>, 1));
  expect_fault([] { ICPU_RUN_KF(capacity_kernel<128 * 1024 + 32>, 1); },
               {"aicore0", "InitBuffer", "does not fit in UB", "256 KiB"});
  EXPECT_NO_THROW(ICPU_RUN_KF(l1_capacity_kernel<1024 * 1024>, 1));
  expect_fault([] { ICPU_RUN_KF(l1_capacity_kernel<1024 * 1024 + 1>, 1); },
               {"InitBuffer", "does not fit in L1"});
}

template <int Offset>
void align_kernel(GM_ADDR x) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> b;
  pipe.InitBuffer(b, 1024);
  GlobalTensor<half> g;
  g.SetGlobalBuffer((__gm__ half*)x, 256);
  LocalTensor<half> t = b.Get<half>();
  DataCopy(t, g, 256);
  PipeBarrier<PIPE_ALL>();
  Add(t[256 + Offset], t[Offset], t[Offset], 128);
}

TEST(AicoreFaults, MisalignedVectorOperands) {
  Gm<half> x(256);
  EXPECT_NO_THROW(ICPU_RUN_KF(align_kernel<16>, 1, x.addr()));
  expect_fault([&] { ICPU_RUN_KF(align_kernel<3>, 1, x.addr()); },
               {"pipe V", "Add", "0x206", "32-byte aligned"});
}

template <int Offset>
void fractal_kernel() {
  TPipe pipe;
  TBuf<QuePosition::A2> a;
  TBuf<QuePosition::B2> b;
  TBuf<QuePosition::CO1> c;
  pipe.InitBuffer(a, 2048);
  pipe.InitBuffer(b, 2048);
  pipe.InitBuffer(c, 4096);
  Mmad(c.Get<float>(), a.Get<half>()[Offset], b.Get<half>(), MmadParams{16, 16, 16});
}

TEST(AicoreFaults, CubeOperandsOutsideFractalAlignment) {
  EXPECT_NO_THROW(ICPU_RUN_KF(fractal_kernel<256>, 1));
  expect_fault([] { ICPU_RUN_KF(fractal_kernel<16>, 1); },
               {"pipe M", "Mmad", "fractal alignment", "L0A 0x20"});
}

// Units touch only their own buffers.
template <int Mode>
void unit_kernel() {
  TPipe pipe;
  TBuf<QuePosition::A1> l1;
  TBuf<QuePosition::VECCALC> ub;
  TBuf<QuePosition::A2> l0a;
  TBuf<QuePosition::B2> l0b;
  TBuf<QuePosition::CO1> l0c;
  pipe.InitBuffer(l1, 1024);
  pipe.InitBuffer(ub, 1024);
  pipe.InitBuffer(l0a, 512);
  pipe.InitBuffer(l0b, 512);
  pipe.InitBuffer(l0c, 1024);
  if constexpr (Mode == 0) Relu(ub.Get<half>(), ub.Get<half>(), 256);  // fine
  if constexpr (Mode == 1) Relu(ub.Get<half>(), l1.Get<half>(), 256);  // Vector reads L1
  if constexpr (Mode == 2)
    Mmad(l0c.Get<float>(), ub.Get<half>(), l0b.Get<half>(), MmadParams{16, 16, 16});  // A in UB
  if constexpr (Mode == 3)
    Mmad(ub.Get<float>(), l0a.Get<half>(), l0b.Get<half>(), MmadParams{16, 16, 16});  // C in UB
  if constexpr (Mode == 4) DataCopy(l0c.Get<half>(), l1.Get<half>(), 256);  // no L1 -> L0C path
}

TEST(AicoreFaults, UnitsTouchOnlyTheirOwnBuffers) {
  EXPECT_NO_THROW(ICPU_RUN_KF(unit_kernel<0>, 1));
  expect_fault([] { ICPU_RUN_KF(unit_kernel<1>, 1); },
               {"pipe V", "Relu", "reads L1", "Unified Buffer"});
  expect_fault([] { ICPU_RUN_KF(unit_kernel<2>, 1); }, {"pipe M", "A is in UB"});
  expect_fault([] { ICPU_RUN_KF(unit_kernel<3>, 1); }, {"pipe M", "C in UB"});
  expect_fault([] { ICPU_RUN_KF(unit_kernel<4>, 1); }, {"DataCopy", "L1 -> L0C"});
}

template <int Mode>
void queue_kernel() {
  TPipe pipe;
  TQue<QuePosition::VECIN, 2> q, other;
  pipe.InitBuffer(q, 2, 256);
  pipe.InitBuffer(other, 1, 256);
  LocalTensor<half> a = q.AllocTensor<half>();
  LocalTensor<half> b = q.AllocTensor<half>();
  if constexpr (Mode == 1) (void)q.AllocTensor<half>();  // a third of two buffers
  if constexpr (Mode == 2) (void)q.DeQue<half>();        // nothing enqueued
  if constexpr (Mode == 3) {
    LocalTensor<half> c = other.AllocTensor<half>();
    q.FreeTensor(c);  // not from q
  }
  q.FreeTensor(a);
  if constexpr (Mode == 4) Relu(a, b, 128);  // a is freed
  if constexpr (Mode == 5) q.FreeTensor(a);  // freed twice
  Relu(b, b, 128);
  q.EnQue(b);
  LocalTensor<half> d = q.DeQue<half>();
  Relu(d, d, 128);
  q.FreeTensor(d);
}

TEST(AicoreFaults, QueueMisuse) {
  EXPECT_NO_THROW(ICPU_RUN_KF(queue_kernel<0>, 1));
  expect_fault([] { ICPU_RUN_KF(queue_kernel<1>, 1); }, {"AllocTensor", "all 2 buffers", "VECIN"});
  expect_fault([] { ICPU_RUN_KF(queue_kernel<2>, 1); }, {"DeQue", "empty"});
  expect_fault([] { ICPU_RUN_KF(queue_kernel<3>, 1); },
               {"FreeTensor", "not allocated from the VECIN queue"});
  expect_fault([] { ICPU_RUN_KF(queue_kernel<4>, 1); }, {"Relu", "after its FreeTensor", "UB"});
  expect_fault([] { ICPU_RUN_KF(queue_kernel<5>, 1); }, {"FreeTensor", "not allocated"});
}

template <int Extra>
void gm_kernel(GM_ADDR x) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> b;
  pipe.InitBuffer(b, 2048);
  GlobalTensor<half> g;
  g.SetGlobalBuffer((__gm__ half*)x, 512);
  DataCopy(b.Get<half>(), g, 512 + Extra);
}

TEST(AicoreFaults, GlobalMemoryOutsideItsAllocation) {
  Gm<half> x(512);
  EXPECT_NO_THROW(ICPU_RUN_KF(gm_kernel<0>, 1, x.addr()));
  expect_fault([&] { ICPU_RUN_KF(gm_kernel<16>, 1, x.addr()); },
               {"DataCopy", "32 B past the end", "GmAlloc"});
}

// TQueSync carries the same flags as SetFlag/WaitFlag: without its wait the race is reported.
template <bool Wait>
void tquesync_kernel(GM_ADDR x) {
  TPipe pipe;
  TBuf<QuePosition::VECCALC> b;
  pipe.InitBuffer(b, 512);
  GlobalTensor<half> g;
  g.SetGlobalBuffer((__gm__ half*)x, 256);
  DataCopy(b.Get<half>(), g, 256);
  TQueSync<PIPE_MTE2, PIPE_V> sync;
  sync.SetFlag(EVENT_ID2);
  if constexpr (Wait) sync.WaitFlag(EVENT_ID2);
  Relu(b.Get<half>(), b.Get<half>(), 256);
  if constexpr (!Wait) sync.WaitFlag(EVENT_ID2);
}

TEST(AicoreFaults, TQueSyncOrdersPipes) {
  Gm<half> x(256);
  EXPECT_NO_THROW(ICPU_RUN_KF(tquesync_kernel<true>, 1, x.addr()));
  expect_fault([&] { ICPU_RUN_KF(tquesync_kernel<false>, 1, x.addr()); },
               {"race on UB", "pipe MTE2 (DataCopy)", "pipe V (Relu)"});
}

TEST(AicoreFaults, ApiOutsideAKernelIsAUserError) {
  EXPECT_THROW(AscendC::GetBlockIdx(), tessera::UserError);
}

}  // namespace
