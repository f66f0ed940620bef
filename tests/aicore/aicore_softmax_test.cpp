// SoftMax and SimpleSoftMax (lib/softmax): rows against a double-precision softmax computed
// here, the row max and sum broadcast into one 32-byte block a row, padding columns left out
// (oriSrcK), the host tiling, and the misuse errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "aicore_common.h"
#include "kernel_operator.h"
#include "tiling/tiling_api.h"

using aicore_test::Gm;

namespace {

enum class Form { Full, Shared, NoSumMax, Simple };

// x (m x k) -> y, and the m blocks of sum and max; Simple reads sum and max from GM instead.
template <typename T>
void softmax_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR sum, GM_ADDR max, const SoftMaxTiling* tiling,
                    AscendC::SoftMaxShapeInfo info, Form form) {
  using namespace AscendC;
  constexpr std::uint32_t blk = 32 / sizeof(T);
  const std::uint32_t n = info.srcM * info.srcK;
  TPipe pipe;
  TQue<TPosition::VECIN, 1> qin, qstat;
  TQue<TPosition::VECOUT, 1> qout, qsum, qmax;
  TBuf<TPosition::VECCALC> tmp;
  pipe.InitBuffer(qin, 1, n * sizeof(T));
  pipe.InitBuffer(qstat, 1, 2 * info.srcM * 32);
  pipe.InitBuffer(qout, 1, n * sizeof(T));
  pipe.InitBuffer(qsum, 1, info.srcM * 32);
  pipe.InitBuffer(qmax, 1, info.srcM * 32);
  pipe.InitBuffer(tmp, 64);
  GlobalTensor<T> gx, gy, gs, gm;
  gx.SetGlobalBuffer(reinterpret_cast<T*>(x));
  gy.SetGlobalBuffer(reinterpret_cast<T*>(y));
  gs.SetGlobalBuffer(reinterpret_cast<T*>(sum));
  gm.SetGlobalBuffer(reinterpret_cast<T*>(max));
  LocalTensor<T> in = qin.AllocTensor<T>();
  DataCopy(in, gx, n);
  qin.EnQue(in);
  in = qin.DeQue<T>();
  LocalTensor<T> out = qout.AllocTensor<T>();
  LocalTensor<T> s = qsum.AllocTensor<T>(), mx = qmax.AllocTensor<T>();
  switch (form) {
    case Form::Full:
      SoftMax<T>(out, s, mx, in, *tiling, info);
      break;
    case Form::Shared:
      SoftMax<T>(out, s, mx, in, tmp.Get<std::uint8_t>(), *tiling, info);
      break;
    case Form::NoSumMax:
      SoftMax<T>(out, in, *tiling, info);
      Duplicate(s, T(0), static_cast<std::int32_t>(info.srcM * blk));
      Duplicate(mx, T(0), static_cast<std::int32_t>(info.srcM * blk));
      break;
    case Form::Simple: {
      LocalTensor<T> st = qstat.AllocTensor<T>();
      DataCopy(st, gs, info.srcM * blk);
      DataCopy(st[info.srcM * blk], gm, info.srcM * blk);
      qstat.EnQue(st);
      st = qstat.DeQue<T>();
      SimpleSoftMax<T>(out, st, st[info.srcM * blk], in, *tiling, info);
      Duplicate(s, T(0), static_cast<std::int32_t>(info.srcM * blk));
      Duplicate(mx, T(0), static_cast<std::int32_t>(info.srcM * blk));
      qstat.FreeTensor(st);
      break;
    }
  }
  qout.EnQue(out);
  qsum.EnQue(s);
  qmax.EnQue(mx);
  out = qout.DeQue<T>();
  s = qsum.DeQue<T>();
  mx = qmax.DeQue<T>();
  DataCopy(gy, out, n);
  if (form != Form::Simple) {
    DataCopy(gs, s, info.srcM * blk);
    DataCopy(gm, mx, info.srcM * blk);
  }
  qin.FreeTensor(in);
  qout.FreeTensor(out);
  qsum.FreeTensor(s);
  qmax.FreeTensor(mx);
}

template <typename T>
void check(Form form, std::uint32_t m, std::uint32_t k, std::uint32_t k0, double tol) {
  constexpr std::uint32_t blk = 32 / sizeof(T);
  optiling::SoftMaxTiling tiling;
  AscendC::SoftMaxTilingFunc(
      ge::Shape({static_cast<std::int64_t>(m), static_cast<std::int64_t>(k)}), sizeof(T),
      AscendC::GetSoftMaxMinTmpSize(ge::Shape({m, k}), sizeof(T), false), tiling);
  EXPECT_EQ(tiling.srcM, m);
  EXPECT_EQ(tiling.srcK, k);
  Gm<T> x(m * k), y(m * k), sum(m * blk), max(m * blk);
  for (std::uint32_t i = 0; i < m * k; ++i)
    x[i] = static_cast<T>(std::sin(0.37 * i) * 3.0 + (i % k == 5 ? 4.0 : 0.0));
  std::vector<double> rmax(m), rsum(m);
  for (std::uint32_t r = 0; r < m; ++r) {
    rmax[r] = -1e30;
    for (std::uint32_t c = 0; c < k0; ++c) rmax[r] = std::max(rmax[r], double(x[r * k + c]));
    rsum[r] = 0;
    for (std::uint32_t c = 0; c < k0; ++c) rsum[r] += std::exp(double(x[r * k + c]) - rmax[r]);
  }
  if (form == Form::Simple)  // the caller's max and sum: the row max and twice the row sum
    for (std::uint32_t r = 0; r < m; ++r)
      for (std::uint32_t e = 0; e < blk; ++e) {
        max[r * blk + e] = static_cast<T>(rmax[r]);
        sum[r * blk + e] = static_cast<T>(2.0 * rsum[r]);
      }
  const AscendC::SoftMaxShapeInfo info{m, k, m, k0};
  ICPU_RUN_KF(softmax_kernel<T>, 1, x.addr(), y.addr(), sum.addr(), max.addr(), &tiling, info,
              form);
  for (std::uint32_t r = 0; r < m; ++r) {
    const double s = form == Form::Simple ? 2.0 * rsum[r] : rsum[r];
    for (std::uint32_t c = 0; c < k0; ++c) {  // padding columns are not written
      const double want = std::exp(double(x[r * k + c]) - rmax[r]) / s;
      ASSERT_NEAR(double(y[r * k + c]), want, tol) << "row " << r << " column " << c;
    }
    if (form == Form::Full || form == Form::Shared)
      for (std::uint32_t e = 0; e < blk; ++e) {
        ASSERT_NEAR(double(max[r * blk + e]), rmax[r], tol) << r;
        ASSERT_NEAR(double(sum[r * blk + e]), rsum[r], tol * rsum[r]) << r;
      }
  }
}

}  // namespace

TEST(AicoreSoftMax, FloatRowsWithPaddingMatchTheSoftmax) {
  check<float>(Form::Full, 5, 40, 36, 1e-6);
}

TEST(AicoreSoftMax, HalfRowsWithASharedTemporaryMatchTheSoftmax) {
  check<half>(Form::Shared, 4, 64, 64, 2e-3);
}

TEST(AicoreSoftMax, WithoutSumAndMaxTensors) {
  check<float>(Form::NoSumMax, 3, 24, 24, 1e-6);
}

TEST(AicoreSoftMax, SimpleSoftMaxUsesTheGivenMaxAndSum) {
  check<float>(Form::Simple, 6, 16, 13, 1e-6);
}

TEST(AicoreSoftMax, TilingAndMisuse) {
  optiling::SoftMaxTiling t;
  AscendC::SoftMaxTilingFunc(ge::Shape({2, 3, 64}), 4, 64, t);
  EXPECT_EQ(t.srcM, 6u);
  EXPECT_EQ(t.srcK, 64u);
  EXPECT_EQ(t.outMaxK, 8u);
  EXPECT_FALSE(AscendC::IsBasicBlockInSoftMax(t, 4));  // m = 6 is not a multiple of 8
  AscendC::SoftMaxTilingFunc(ge::Shape({8, 64}), 4, 64, t);
  EXPECT_TRUE(AscendC::IsBasicBlockInSoftMax(t, 4));
  EXPECT_THROW(AscendC::SoftMaxTilingFunc(ge::Shape({8, 64}), 8, 64, t), tessera::UserError);
  EXPECT_THROW(AscendC::SoftMaxTilingFunc(ge::Shape({8, 64}), 4, 16, t), tessera::UserError);
  // A row length that is not whole 32-byte blocks.
  Gm<float> x(64), y(64), s(64), mx(64);
  AscendC::SoftMaxTilingFunc(ge::Shape({2, 12}), 4, 64, t);
  try {
    ICPU_RUN_KF(softmax_kernel<float>, 1, x.addr(), y.addr(), s.addr(), mx.addr(), &t,
                AscendC::SoftMaxShapeInfo{2, 12, 2, 12}, Form::Full);
    ADD_FAILURE() << "expected a UserError";
  } catch (const tessera::UserError& e) {
    EXPECT_NE(std::string(e.what()).find("must be a multiple of 8 elements"), std::string::npos)
        << e.what();
  }
}
