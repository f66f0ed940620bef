#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gm_scope.h"
#include "kernel_operator.h"
#include "tessera/targets/aicore/kernels/ops.h"

namespace tessera::aicore::kernels {
namespace {

using namespace AscendC;

constexpr int32_t F = 16;
constexpr int32_t FB = F * F;
constexpr int32_t BLK = FB * 2 / 32;  // 32-byte blocks per fp16 fractal
constexpr int32_t PT = 128;           // output pixels per work item
constexpr int32_t CT = 128;           // output channels per work item
constexpr int32_t KCH = 8;            // patch-matrix fractal columns per Cube step

// TransDataTo5HD of 16 x 16 blocks of fp16: destination row i is dst[i * dst_step], source row
// j is src[j * src_step]; each repeat moves on by the repeat strides (32-byte blocks).
void transpose_16x16(const LocalTensor<half>& dst, int32_t dst_step, uint16_t dst_rep_stride,
                     const LocalTensor<half>& src, int32_t src_step, uint16_t src_rep_stride,
                     int32_t repeats) {
  LocalTensor<half> d[16], s[16];
  for (int32_t i = 0; i < F; ++i) {
    d[i] = dst[i * dst_step];
    s[i] = src[i * src_step];
  }
  TransDataTo5HDParams p;
  p.repeatTimes = static_cast<uint8_t>(repeats);
  p.dstRepStride = dst_rep_stride;
  p.srcRepStride = src_rep_stride;
  TransDataTo5HD(d, s, p);
}

// NCHW f32 -> NC1HWC0 fp16 (channels padded to C0 = 16 with zeros): per (n, c1, h) row, MTE2
// brings up to 16 channel rows, V casts them and interleaves them with TransDataTo5HD, MTE3
// writes the 5HD row.
void to_5hd(GM_ADDR x, GM_ADDR y, int32_t n, int32_t c, int32_t h, int32_t w) {
  const int32_t wp = (w + F - 1) / F * F, c1 = (c + F - 1) / F;
  TPipe pipe;
  TQue<QuePosition::VECIN, 2> qin;
  TQue<QuePosition::VECOUT, 2> qout;
  TBuf<QuePosition::VECCALC> rows;
  pipe.InitBuffer(qin, 2, static_cast<uint32_t>(F * wp) * 4);
  pipe.InitBuffer(qout, 2, static_cast<uint32_t>(F * wp) * 2);
  pipe.InitBuffer(rows, static_cast<uint32_t>(F * wp) * 2);
  GlobalTensor<float> gx;
  GlobalTensor<half> gy;
  gx.SetGlobalBuffer((__gm__ float*)x, static_cast<uint64_t>(n) * c * h * w);
  gy.SetGlobalBuffer((__gm__ half*)y, static_cast<uint64_t>(n) * c1 * h * w * F);
  const int32_t items = n * c1 * h;
  for (int32_t it = static_cast<int32_t>(GetBlockIdx()); it < items;
       it += static_cast<int32_t>(GetBlockNum())) {
    const int32_t row = it % h, cb = (it / h) % c1, img = it / (h * c1);
    const int32_t valid = std::min(F, c - cb * F);
    LocalTensor<float> in = qin.AllocTensor<float>();
    for (int32_t k = 0; k < valid; ++k)
      DataCopyPad(in[k * wp], gx[((static_cast<uint64_t>(img) * c + cb * F + k) * h + row) * w],
                  DataCopyExtParams{1, static_cast<uint32_t>(w) * 4, 0, 0, 0},
                  DataCopyPadExtParams<float>{});
    qin.EnQue(in);
    in = qin.DeQue<float>();
    LocalTensor<half> r = rows.Get<half>();
    Duplicate(r, static_cast<half>(0), F * wp);
    for (int32_t k = 0; k < valid; ++k) Cast(r[k * wp], in[k * wp], RoundMode::CAST_NONE, w);
    LocalTensor<half> out = qout.AllocTensor<half>();
    // 16 pixels x 16 channels a repeat; the next 16 pixels of each channel row.
    transpose_16x16(out, F, F, r, wp, 1, wp / F);
    qout.EnQue(out);
    qin.FreeTensor(in);
    out = qout.DeQue<half>();
    DataCopy(gy[((static_cast<uint64_t>(img) * c1 + cb) * h + row) * w * F], out,
             static_cast<uint32_t>(w * F));
    qout.FreeTensor(out);
  }
}

// LoadData 3D's parameters for the Img2Col window of PT output pixels from `first_pixel`, over a
// 5HD feature map of `channels` channels (the conv's whole map, or one C0 block for pooling).
LoadData3DParamsV2<half> window_params(const ConvShape& s, int32_t channels, int32_t first_pixel,
                                       half pad_value = half(0.0f)) {
  LoadData3DParamsV2<half> p;
  p.padList[0] = static_cast<uint8_t>(s.pad_left);
  p.padList[1] = static_cast<uint8_t>(s.pad_right);
  p.padList[2] = static_cast<uint8_t>(s.pad_top);
  p.padList[3] = static_cast<uint8_t>(s.pad_bottom);
  p.l1H = static_cast<uint16_t>(s.h);
  p.l1W = static_cast<uint16_t>(s.w);
  p.channelSize = static_cast<uint16_t>(channels);
  p.filterH = static_cast<uint8_t>(s.kh);
  p.filterW = static_cast<uint8_t>(s.kw);
  p.strideH = static_cast<uint8_t>(s.stride_h);
  p.strideW = static_cast<uint8_t>(s.stride_w);
  p.dilationFilterH = static_cast<uint8_t>(s.dilation_h);
  p.dilationFilterW = static_cast<uint8_t>(s.dilation_w);
  p.mStartPt = static_cast<uint16_t>(first_pixel);
  p.mExtension = PT;
  p.padValue = pad_value;
  return p;
}

// The work items of pooling and depthwise conv, one (image, C0 channel block, PT-pixel tile)
// each: the block's 5HD plane comes into L1 and its Img2Col window (kh x kw fractals per 16
// pixels, padded with pad_value) into UB; `compute` turns the window into [pixel][c0] fp16
// results, which go back to channel rows (TransDataTo5HD), to f32 and out as NCHW rows.
// `setup` declares the item's own buffers on the pipe before the shared ones.
template <typename Setup, typename Compute>
void window_items(GM_ADDR x5, GM_ADDR y, const ConvShape& s, half pad_value, Setup setup,
                  Compute compute) {
  const int32_t c1 = (s.c + F - 1) / F, kk = s.kh * s.kw, pixels = s.ho * s.wo;
  const int32_t tiles = (pixels + PT - 1) / PT;
  TPipe pipe;
  TQue<QuePosition::A1, 1> qf;
  TQue<QuePosition::VECIN, 1> qwin;
  TQue<QuePosition::VECOUT, 2> qout;
  TBuf<QuePosition::VECCALC> res, tr;
  setup(pipe);
  pipe.InitBuffer(qf, 1, static_cast<uint32_t>(s.h * s.w * 32));
  pipe.InitBuffer(qwin, 1, static_cast<uint32_t>((PT / F) * kk * FB * 2));
  pipe.InitBuffer(qout, 2, F * PT * 4);
  pipe.InitBuffer(res, PT * F * 2);
  pipe.InitBuffer(tr, F * PT * 2);
  GlobalTensor<half> gx;
  GlobalTensor<float> gy;
  gx.SetGlobalBuffer((__gm__ half*)x5, static_cast<uint64_t>(s.n) * c1 * s.h * s.w * F);
  gy.SetGlobalBuffer((__gm__ float*)y, static_cast<uint64_t>(s.n) * s.c * pixels);
  const int32_t items = s.n * c1 * tiles;
  for (int32_t it = static_cast<int32_t>(GetBlockIdx()); it < items;
       it += static_cast<int32_t>(GetBlockNum())) {
    const int32_t pt = it % tiles, cb = (it / tiles) % c1, img = it / (tiles * c1);
    LocalTensor<half> fm = qf.AllocTensor<half>();
    DataCopy(fm, gx[(static_cast<uint64_t>(img) * c1 + cb) * s.h * s.w * F],
             static_cast<uint32_t>(s.h * s.w * F));
    qf.EnQue(fm);
    fm = qf.DeQue<half>();
    LocalTensor<half> win = qwin.AllocTensor<half>();
    LoadData(win, fm, window_params(s, F, pt * PT, pad_value));
    qwin.EnQue(win);
    qf.FreeTensor(fm);
    win = qwin.DeQue<half>();
    LocalTensor<half> r = res.Get<half>();
    compute(r, win, cb, pt);
    qwin.FreeTensor(win);
    // [pixel][c0] -> [c0][pixel]
    LocalTensor<half> t = tr.Get<half>();
    // The next 16 pixels of each channel row from the next 16 pixels' channel blocks.
    transpose_16x16(t, PT, 1, r, F, F, PT / F);
    LocalTensor<float> o = qout.AllocTensor<float>();
    Cast(o, t, RoundMode::CAST_NONE, F * PT);
    qout.EnQue(o);
    o = qout.DeQue<float>();
    const int32_t channels = std::min(F, s.c - cb * F);
    const int32_t cols = std::min(PT, pixels - pt * PT);
    const uint32_t bytes = static_cast<uint32_t>(cols) * 4;
    const uint32_t padded = (bytes + 31) / 32 * 32;
    DataCopyPad(gy[(static_cast<uint64_t>(img) * s.c + cb * F) * pixels + pt * PT], o,
                DataCopyExtParams{static_cast<uint16_t>(channels), bytes, (PT * 4 - padded) / 32,
                                  static_cast<uint32_t>(pixels - cols) * 4, 0});
    qout.FreeTensor(o);
  }
}

// The input rows a conv reads for output rows [first, last]: `row` the first one in the image,
// `rows` how many, and the padding rows Img2Col adds above and below them.
struct InputRows {
  int32_t row = 0, rows = 0, pad_top = 0, pad_bottom = 0;
};
InputRows input_rows(const ConvShape& s, int32_t first, int32_t last) {
  const int32_t top = first * s.stride_h - s.pad_top;
  const int32_t bottom = last * s.stride_h - s.pad_top + (s.kh - 1) * s.dilation_h;
  InputRows r;
  r.row = std::max(0, top);
  r.rows = std::min(s.h - 1, bottom) - r.row + 1;
  r.pad_top = r.row - top;
  r.pad_bottom = bottom - std::min(s.h - 1, bottom);
  return r;
}

// The most output rows whose input rows fit `l1` bytes of 5HD fp16 (0: not even one).
int32_t band_rows_fitting(const ConvShape& s, std::int64_t l1) {
  const std::int64_t row_bytes = static_cast<std::int64_t>((s.c + F - 1) / F) * s.w * 32;
  const std::int64_t rows = l1 / row_bytes, extent = (s.kh - 1) * s.dilation_h + 1;
  if (std::min<std::int64_t>(s.h, extent) > rows) return 0;
  if (rows >= s.h) return s.ho;
  return static_cast<int32_t>(std::min<std::int64_t>(s.ho, (rows - extent) / s.stride_h + 1));
}

// Pixel tiles of one image with `band` output rows per band (each band's tiles from its first
// pixel; the last band may be shorter).
int32_t tiles_per_image(const ConvShape& s, int32_t band) {
  const int32_t bands = (s.ho + band - 1) / band, last = s.ho - (bands - 1) * band;
  return (bands - 1) * ((band * s.wo + PT - 1) / PT) + (last * s.wo + PT - 1) / PT;
}

// One output tile per work item: 128 pixels x 128 channels of one image, the patch matrix
// streamed from the image's 5HD feature map in L1 through Img2Col windows into L0B, the
// weights (fractal zZ, K in (c1, kh, kw, c0) order) from GM into L0A, f32 accumulation in L0C,
// then bias and ReLU on the Vector unit and NCHW f32 rows out. When the image's map exceeds L1
// (`band` output rows < ho), the output rows go in bands of `band` rows whose input rows fit
// L1, a band's pixels in tiles from its first; each item then brings into L1 only the input
// rows (halo included) of the output rows its tile covers, from one whose first pixel leaves
// the tile's start a whole fractal (16 rows) into Img2Col's window, as LoadData 3D requires.
class ConvKernel {
 public:
  ConvKernel(GM_ADDR x5, GM_ADDR w, GM_ADDR bias, GM_ADDR y, const ConvShape& s, int32_t band)
      : s_(s), has_bias_(bias != nullptr), band_(band) {
    c1_ = (s.c + F - 1) / F;
    k1_ = c1_ * s.kh * s.kw;
    m1_ = (s.cout + F - 1) / F;
    pixels_ = s.ho * s.wo;
    tiled_ = band_ < s.ho;
    band_tiles_ = (band_ * s.wo + PT - 1) / PT;
    image_tiles_ = tiles_per_image(s, band_);
    const int32_t l1_rows =
        tiled_ ? std::min(s.h, (band_ - 1) * s.stride_h + (s.kh - 1) * s.dilation_h + 1) : s.h;
    gx_.SetGlobalBuffer((__gm__ half*)x5, static_cast<uint64_t>(s.n) * c1_ * s.h * s.w * F);
    gw_.SetGlobalBuffer((__gm__ half*)w, static_cast<uint64_t>(m1_) * k1_ * FB);
    if (bias) gb_.SetGlobalBuffer((__gm__ float*)bias, s.cout);
    gy_.SetGlobalBuffer((__gm__ float*)y, static_cast<uint64_t>(s.n) * s.cout * pixels_);
    pipe_.InitBuffer(qf_, 1, static_cast<uint32_t>(c1_ * l1_rows * s.w * 32));
    pipe_.InitBuffer(qa_, 2, CT * KCH * F * 2);
    pipe_.InitBuffer(qb_, 2, KCH * F * PT * 2);
    pipe_.InitBuffer(c1buf_, CT * PT * 4);
    pipe_.InitBuffer(qo_, 2, CT * PT * 4);
    if (bias) pipe_.InitBuffer(bt_, CT * PT * 4);
  }

  void Process() {
    const int32_t cts = (s_.cout + CT - 1) / CT;
    const int32_t items = s_.n * image_tiles_ * cts;
    bool first = true;
    for (int32_t it = static_cast<int32_t>(GetBlockIdx()); it < items;
         it += static_cast<int32_t>(GetBlockNum())) {
      const int32_t ct = it % cts, t = (it / cts) % image_tiles_, img = it / (cts * image_tiles_);
      if (!first) WaitFlag<HardEvent::V_M>(EVENT_ID0);
      first = false;
      Item(img, t / band_tiles_, t % band_tiles_, ct);
      SetFlag<HardEvent::V_M>(EVENT_ID0);
    }
    if (!first) WaitFlag<HardEvent::V_M>(EVENT_ID0);
  }

 private:
  // Tile `pt` of band `band` of image `img`, output channels from ct * CT.
  void Item(int32_t img, int32_t band, int32_t pt, int32_t ct) {
    const int32_t mt = std::min(CT / F, m1_ - ct * (CT / F));  // channel fractals in the tile
    const int32_t band_first = band * band_;
    const int32_t band_pixels = (std::min(s_.ho, band_first + band_) - band_first) * s_.wo;
    const int32_t tile_pixels = std::min(PT, band_pixels - pt * PT);
    // The input rows in L1 and where the tile starts in their patch matrix.
    InputRows in{0, s_.h, s_.pad_top, s_.pad_bottom};
    int32_t m_start = pt * PT;
    const uint64_t image = static_cast<uint64_t>(img) * c1_ * s_.h * s_.w * F;
    LocalTensor<half> fm = qf_.AllocTensor<half>();
    if (!tiled_) {
      DataCopy(fm, gx_[image], static_cast<uint32_t>(c1_ * s_.h * s_.w * F));
    } else {
      int32_t first = pt * PT / s_.wo;
      while ((pt * PT - first * s_.wo) % F) --first;  // reaches 0 at the latest: PT % F == 0
      m_start = pt * PT - first * s_.wo;
      const int32_t last = band_first + (pt * PT + tile_pixels - 1) / s_.wo;
      in = input_rows(s_, band_first + first, last);
      // Each C1 plane's rows are contiguous in 5HD; one burst per plane.
      for (int32_t cb = 0; cb < c1_; ++cb)
        DataCopy(fm[cb * in.rows * s_.w * F],
                 gx_[image + (static_cast<uint64_t>(cb) * s_.h + in.row) * s_.w * F],
                 static_cast<uint32_t>(in.rows * s_.w * F));
    }
    qf_.EnQue(fm);
    fm = qf_.DeQue<half>();
    LocalTensor<float> acc = c1buf_.Get<float>();
    for (int32_t kc = 0; kc * KCH < k1_; ++kc) {
      const int32_t kk = std::min(KCH, k1_ - kc * KCH);
      LocalTensor<half> a = qa_.AllocTensor<half>();
      DataCopy(a, gw_[(static_cast<uint64_t>(ct) * (CT / F) * k1_ + kc * KCH) * FB],
               DataCopyParams{static_cast<uint16_t>(mt), static_cast<uint16_t>(kk * BLK),
                              static_cast<uint16_t>((k1_ - kk) * BLK), 0});
      qa_.EnQue(a);
      LocalTensor<half> b = qb_.AllocTensor<half>();
      LoadData3DParamsV2<half> p = window_params(s_, c1_ * F, m_start);
      p.l1H = static_cast<uint16_t>(in.rows);
      p.padList[2] = static_cast<uint8_t>(in.pad_top);
      p.padList[3] = static_cast<uint8_t>(in.pad_bottom);
      p.kStartPt = static_cast<uint16_t>(kc * KCH * F);
      p.kExtension = static_cast<uint16_t>(kk * F);
      LoadData(b, fm, p);
      qb_.EnQue(b);
      a = qa_.DeQue<half>();
      b = qb_.DeQue<half>();
      MmadParams mp;
      mp.m = static_cast<uint16_t>(mt * F);
      mp.n = PT;
      mp.k = static_cast<uint16_t>(kk * F);
      mp.cmatrixInitVal = kc == 0;
      Mmad(acc, a, b, mp);
      qa_.FreeTensor(a);
      qb_.FreeTensor(b);
    }
    qf_.FreeTensor(fm);
    SetFlag<HardEvent::M_V>(EVENT_ID0);
    WaitFlag<HardEvent::M_V>(EVENT_ID0);
    // L0C: fractals (pixel block, channel block), each 16 channels x 16 pixels.
    const int32_t count = (PT / F) * mt * FB;
    LocalTensor<float> o = qo_.AllocTensor<float>();
    DataCopy(o, acc, DataCopyParams{1, static_cast<uint16_t>((PT / F) * mt), 0, 0},
             DataCopyEnhancedParams{BlockMode::BLOCK_MODE_MATRIX});
    if (has_bias_) {
      LocalTensor<float> bt = bt_.Get<float>();
      const int32_t channels = std::min(mt * F, s_.cout - ct * CT);
      for (int32_t m = 0; m < mt * F; ++m) {
        const float v = m < channels ? gb_.GetValue(static_cast<uint64_t>(ct) * CT + m) : 0.0f;
        Duplicate(bt[m * F], v, F);
      }
      for (int32_t nb = 1; nb < PT / F; ++nb)
        DataCopy(bt[nb * mt * FB], bt, static_cast<uint32_t>(mt * FB));
      Add(o, o, bt, count);
    }
    if (s_.relu) Relu(o, o, count);
    if (s_.clips()) {
      Maxs(o, o, s_.clip_min, count);
      Mins(o, o, s_.clip_max, count);
    }
    qo_.EnQue(o);
    o = qo_.DeQue<float>();
    const int32_t rows = std::min(mt * F, s_.cout - ct * CT);
    for (int32_t nb = 0; nb * F < tile_pixels; ++nb) {
      const int32_t p0 = band_first * s_.wo + pt * PT + nb * F;
      const int32_t cols = std::min(F, tile_pixels - nb * F);
      const uint32_t bytes = static_cast<uint32_t>(cols) * 4;
      const uint32_t padded = (bytes + 31) / 32 * 32;
      DataCopyPad(gy_[(static_cast<uint64_t>(img) * s_.cout + ct * CT) * pixels_ + p0],
                  o[nb * mt * FB],
                  DataCopyExtParams{static_cast<uint16_t>(rows), bytes, (64 - padded) / 32,
                                    static_cast<uint32_t>(pixels_ - cols) * 4, 0});
    }
    qo_.FreeTensor(o);
  }

  ConvShape s_;
  bool has_bias_;
  int32_t band_;  // output rows per band (ho: the whole map in L1)
  bool tiled_ = false;
  int32_t band_tiles_ = 0, image_tiles_ = 0;  // pixel tiles of a whole band, of an image
  int32_t c1_ = 0, k1_ = 0, m1_ = 0, pixels_ = 0;
  TPipe pipe_;
  TQue<QuePosition::A1, 1> qf_;
  TQue<QuePosition::A2, 2> qa_;
  TQue<QuePosition::B2, 2> qb_;
  TBuf<QuePosition::CO1> c1buf_;
  TQue<QuePosition::CO2, 2> qo_;
  TBuf<QuePosition::VECCALC> bt_;
  GlobalTensor<half> gx_, gw_;
  GlobalTensor<float> gb_, gy_;
};

// Max or average pooling of one (image, channel block, 128-pixel tile) per work item: the 5HD
// plane in L1, Img2Col of the window into UB (padded with -inf for Max, 0 for the average), the
// Vector unit's Max (fp16) or Add (f32) across the kernel positions (the average then scaled by
// 1 / window, or by the per-pixel factors of `assist` where padding leaves fewer elements: the
// assist matrix Ascend's AvgPool takes from the host, [pixel][c0] in f32), TransDataTo5HD back
// to channel rows, Cast to f32, NCHW rows out.
void pool(GM_ADDR x5, GM_ADDR y, const ConvShape& s, bool average, GM_ADDR assist) {
  const int32_t kk = s.kh * s.kw;
  TQue<QuePosition::VECIN, 1> qscale;
  TBuf<QuePosition::VECCALC> acc, part;
  GlobalTensor<float> ga;
  const auto setup = [&](TPipe& pipe) {
    if (assist) pipe.InitBuffer(qscale, 1, PT * F * 4);
    if (average) {  // the average sums in f32
      pipe.InitBuffer(acc, PT * F * 4);
      pipe.InitBuffer(part, FB * 4);
    }
    const int32_t tiles = (s.ho * s.wo + PT - 1) / PT;
    if (assist) ga.SetGlobalBuffer((__gm__ float*)assist, static_cast<uint64_t>(tiles) * PT * F);
  };
  const auto compute = [&](const LocalTensor<half>& r, const LocalTensor<half>& win, int32_t,
                           int32_t pt) {
    if (!average) {
      for (int32_t rb = 0; rb < PT / F; ++rb) {
        DataCopy(r[rb * FB], win[rb * kk * FB], static_cast<uint32_t>(FB));
        for (int32_t k = 1; k < kk; ++k) Max(r[rb * FB], r[rb * FB], win[(rb * kk + k) * FB], FB);
      }
      return;
    }
    LocalTensor<float> sum = acc.Get<float>(), one = part.Get<float>();
    for (int32_t rb = 0; rb < PT / F; ++rb) {
      Cast(sum[rb * FB], win[rb * kk * FB], RoundMode::CAST_NONE, FB);
      for (int32_t k = 1; k < kk; ++k) {
        Cast(one, win[(rb * kk + k) * FB], RoundMode::CAST_NONE, FB);
        Add(sum[rb * FB], sum[rb * FB], one, FB);
      }
    }
    if (assist) {
      LocalTensor<float> f = qscale.AllocTensor<float>();
      DataCopy(f, ga[static_cast<uint64_t>(pt) * PT * F], static_cast<uint32_t>(PT * F));
      qscale.EnQue(f);
      f = qscale.DeQue<float>();
      Mul(sum, sum, f, PT * F);
      qscale.FreeTensor(f);
    } else {
      Muls(sum, sum, 1.0f / static_cast<float>(kk), PT * F);
    }
    Cast(r, sum, RoundMode::CAST_NONE, PT * F);
  };
  window_items(x5, y, s,
               average ? half(0.0f) : static_cast<half>(-std::numeric_limits<float>::infinity()),
               setup, compute);
}

// Depthwise convolution (one filter per channel) per (image, channel block, 128-pixel tile):
// Img2Col windows of the 5HD plane into UB, then per kernel position the window's fractal cast
// to f32, multiplied by that position's 16 channel weights (replicated over 16 pixels, laid out
// on the host) and accumulated in f32 on the Vector unit; bias, ReLU or clip, then through fp16
// and TransDataTo5HD back to NCHW f32 rows.
void depthwise(GM_ADDR x5, GM_ADDR wt, GM_ADDR bt, GM_ADDR y, const ConvShape& s, float lo,
               float hi, bool clamp) {
  const int32_t c1 = (s.c + F - 1) / F, kk = s.kh * s.kw;
  TQue<QuePosition::VECIN, 1> qw;
  TBuf<QuePosition::VECCALC> acc, tmp;
  GlobalTensor<float> gw, gb;
  gw.SetGlobalBuffer((__gm__ float*)wt, static_cast<uint64_t>(c1) * kk * FB);
  gb.SetGlobalBuffer((__gm__ float*)bt, static_cast<uint64_t>(c1) * FB);
  const auto setup = [&](TPipe& pipe) {
    pipe.InitBuffer(qw, 1, static_cast<uint32_t>((kk + 1) * FB * 4));
    pipe.InitBuffer(acc, PT * F * 4);
    pipe.InitBuffer(tmp, FB * 4);
  };
  const auto compute = [&](const LocalTensor<half>& r, const LocalTensor<half>& win, int32_t cb,
                           int32_t) {
    LocalTensor<float> w = qw.AllocTensor<float>();  // kk weight tiles, then the bias tile
    DataCopy(w, gw[static_cast<uint64_t>(cb) * kk * FB], static_cast<uint32_t>(kk * FB));
    DataCopy(w[kk * FB], gb[static_cast<uint64_t>(cb) * FB], static_cast<uint32_t>(FB));
    qw.EnQue(w);
    w = qw.DeQue<float>();
    LocalTensor<float> a = acc.Get<float>(), t = tmp.Get<float>();
    for (int32_t rb = 0; rb < PT / F; ++rb) {
      LocalTensor<float> ar = a[rb * FB];
      DataCopy(ar, w[kk * FB], static_cast<uint32_t>(FB));  // start from the bias
      for (int32_t k = 0; k < kk; ++k) {
        Cast(t, win[(rb * kk + k) * FB], RoundMode::CAST_NONE, FB);
        Mul(t, t, w[k * FB], FB);
        Add(ar, ar, t, FB);
      }
    }
    qw.FreeTensor(w);
    if (clamp) {
      Maxs(a, a, lo, PT * F);
      Mins(a, a, hi, PT * F);
    }
    Cast(r, a, RoundMode::CAST_NONE, PT * F);
  };
  window_items(x5, y, s, half(0.0f), setup, compute);
}

}  // namespace

std::optional<std::string> pool_unsupported(const ConvShape& s, const arch::MachineSpec& spec) {
  const std::int64_t l1 = static_cast<std::int64_t>(spec.memory("L1").capacity_bytes.value);
  if (static_cast<std::int64_t>(s.h) * s.w * 32 > l1)
    return fmt::format("a {}-byte 5HD plane (L1 holds {})",
                       static_cast<std::int64_t>(s.h) * s.w * 32, l1);
  if (s.kh * s.kw > 32) return std::string("a pooling window of more than 32 elements");
  if ((s.w + F - 1) / F * F * F * 6 * 2 > 200 * 1024)
    return fmt::format("rows of {} pixels (the 5HD transform stages 16 rows in UB)", s.w);
  if (s.kh > 255 || s.kw > 255 || s.stride_h > 255 || s.stride_w > 255 || s.pad_top > 255 ||
      s.pad_left > 255 || s.pad_bottom > 255 || s.pad_right > 255 || s.h > 65535 || s.w > 65535)
    return std::string("kernel, stride or padding beyond LoadData 3D's fields");
  return std::nullopt;
}

namespace {

// x (NCHW f32) as 5HD fp16 in a scratch buffer of `gm`, made on the device (TransData: Cast
// and TransDataTo5HD).
GM_ADDR to_5hd_on_device(runtime::Device& device, GmScope& gm, const float* x, const ConvShape& s) {
  const std::int64_t c1 = (s.c + F - 1) / F;
  GM_ADDR gx = gm.lend(x, static_cast<std::size_t>(s.n) * s.c * s.h * s.w * 4);
  GM_ADDR x5 = gm.scratch(static_cast<std::size_t>(s.n) * c1 * s.h * s.w * F * 2, "aicore:5hd");
  launch(device, "aicore:transdata_5hd_f16", gm.blocks(s.n * c1 * s.h),
         [&] { to_5hd(gx, x5, s.n, s.c, s.h, s.w); });
  return x5;
}

profile::KernelRecord pool2d(runtime::Device& device, const float* x, float* y, const ConvShape& s,
                             bool average, bool count_include_pad) {
  const char* what = average ? "aicore average_pool2d" : "aicore max_pool2d";
  if (auto why = pool_unsupported(s, device.spec()))
    throw_user_error("{}: {}; split the input", what, *why);
  const std::int32_t c1 = (s.c + F - 1) / F;
  const std::int32_t pixels = s.ho * s.wo, tiles = (pixels + PT - 1) / PT;
  GmScope gm(device);
  // The average's divisor per output pixel where padding shortens its window (as ONNX's
  // count_include_pad = 0 asks), laid out [pixel][c0] on the host.
  const bool padded = s.pad_top || s.pad_left || s.pad_bottom || s.pad_right;
  GM_ADDR assist = nullptr;
  if (average && padded && !count_include_pad) {
    std::vector<float> f(static_cast<std::size_t>(tiles) * PT * F);
    for (std::int32_t p = 0; p < tiles * PT; ++p) {
      std::int32_t count = 1;
      if (p < pixels) {
        const std::int32_t oh = p / s.wo, ow = p % s.wo;
        count = 0;
        for (std::int32_t i = 0; i < s.kh; ++i)
          for (std::int32_t j = 0; j < s.kw; ++j) {
            const std::int32_t ih = oh * s.stride_h - s.pad_top + i * s.dilation_h;
            const std::int32_t iw = ow * s.stride_w - s.pad_left + j * s.dilation_w;
            count += ih >= 0 && ih < s.h && iw >= 0 && iw < s.w;
          }
      }
      const float scale = 1.0f / static_cast<float>(std::max(count, 1));
      for (std::int32_t c = 0; c < F; ++c) f[static_cast<std::size_t>(p) * F + c] = scale;
    }
    assist = gm.scratch(f.size() * 4, "aicore:assist", f.data());
  }
  GM_ADDR x5 = to_5hd_on_device(device, gm, x, s);
  GM_ADDR gy = gm.lend(y, static_cast<std::size_t>(s.n) * s.c * pixels * 4);
  return launch(device, average ? "aicore:avg_pool_f16" : "aicore:max_pool_f16",
                gm.blocks(static_cast<std::int64_t>(s.n) * c1 * tiles),
                [&] { pool(x5, gy, s, average, assist); });
}

}  // namespace

profile::KernelRecord max_pool2d(runtime::Device& device, const float* x, float* y,
                                 const ConvShape& s) {
  return pool2d(device, x, y, s, false, false);
}

profile::KernelRecord average_pool2d(runtime::Device& device, const float* x, float* y,
                                     const ConvShape& s, bool count_include_pad) {
  return pool2d(device, x, y, s, true, count_include_pad);
}

profile::KernelRecord depthwise_conv2d(runtime::Device& device, const float* x, const float* w,
                                       const float* bias, float* y, const ConvShape& s) {
  if (auto why = pool_unsupported(s, device.spec()))
    throw_user_error("aicore depthwise_conv2d: {}; split the input", *why);
  if (s.cout != s.c)
    throw_user_error(
        "aicore depthwise_conv2d: {} output channels for {} inputs; one filter per "
        "channel",
        s.cout, s.c);
  const std::int32_t c1 = (s.c + F - 1) / F, kk = s.kh * s.kw;
  // Weights per (channel block, kernel position) as a 16 x 16 tile of the 16 channels' weights
  // repeated for 16 pixels, and the bias the same way (on the host, as offline conversion).
  std::vector<float> wt(static_cast<std::size_t>(c1) * kk * FB, 0.0f),
      bt(static_cast<std::size_t>(c1) * FB, 0.0f);
  for (std::int32_t c = 0; c < s.c; ++c)
    for (std::int32_t k = 0; k < kk; ++k)
      for (std::int32_t px = 0; px < F; ++px)
        wt[(static_cast<std::size_t>(c / F) * kk + k) * FB + px * F + c % F] =
            w[static_cast<std::size_t>(c) * kk + k];
  if (bias)
    for (std::int32_t c = 0; c < s.c; ++c)
      for (std::int32_t px = 0; px < F; ++px)
        bt[static_cast<std::size_t>(c / F) * FB + px * F + c % F] = bias[c];
  GmScope gm(device);
  GM_ADDR gw = gm.scratch(wt.size() * 4, "aicore:dw_weights", wt.data());
  GM_ADDR gb = gm.scratch(bt.size() * 4, "aicore:dw_bias", bt.data());
  GM_ADDR x5 = to_5hd_on_device(device, gm, x, s);
  GM_ADDR gy = gm.lend(y, static_cast<std::size_t>(s.n) * s.c * s.ho * s.wo * 4);
  const std::int64_t items = static_cast<std::int64_t>(s.n) * c1 * ((s.ho * s.wo + PT - 1) / PT);
  const bool clamp = s.relu || s.clips();
  const float lo = s.relu ? std::max(0.0f, s.clip_min) : s.clip_min;
  return launch(device, "aicore:depthwise_conv2d_f32acc", gm.blocks(items),
                [&] { depthwise(x5, gw, gb, gy, s, lo, s.clip_max, clamp); });
}

std::optional<std::string> conv_unsupported(const ConvShape& s, const arch::MachineSpec& spec) {
  const std::int64_t c1 = (s.c + F - 1) / F;
  const std::int64_t l1 = static_cast<std::int64_t>(spec.memory("L1").capacity_bytes.value);
  const std::int32_t extent = (s.kh - 1) * s.dilation_h + 1;
  if (band_rows_fitting(s, l1) == 0)
    return fmt::format(
        "one output row reads {} input rows of {} pixels, a {}-byte 5HD band (L1 holds {})",
        std::min(s.h, extent), s.w, c1 * std::min(s.h, extent) * s.w * 32, l1);
  // A band's padding rows must border its input rows (Img2Col pads only the edges it loads).
  if (band_rows_fitting(s, l1) < s.ho && (s.pad_top >= extent || s.pad_bottom >= extent))
    return fmt::format(
        "a {}-byte 5HD feature map (L1 holds {}) tiled over rows with padding of {} and {} rows "
        "around a kernel {} rows high",
        c1 * s.h * s.w * 32, l1, s.pad_top, s.pad_bottom, extent);
  if ((s.w + F - 1) / F * F * F * 6 * 2 > 200 * 1024)
    return fmt::format("rows of {} pixels (the 5HD transform stages 16 rows in UB)", s.w);
  if (s.kh > 255 || s.kw > 255 || s.stride_h > 255 || s.stride_w > 255 || s.pad_top > 255 ||
      s.pad_left > 255 || s.pad_bottom > 255 || s.pad_right > 255 || s.dilation_h > 255 ||
      s.dilation_w > 255 || s.h > 65535 || s.w > 65535 || c1 * F > 65535)
    return std::string("kernel, stride, padding or dilation beyond LoadData 3D's fields");
  return std::nullopt;
}

profile::KernelRecord conv2d(runtime::Device& device, const float* x, const float* w,
                             const float* bias, float* y, const ConvShape& s) {
  if (auto why = conv_unsupported(s, device.spec()))
    throw_user_error("aicore conv2d: {}; split the input", *why);
  const std::int32_t c1 = (s.c + F - 1) / F, m1 = (s.cout + F - 1) / F;
  const std::int32_t k1 = c1 * s.kh * s.kw;
  // The weights in fractal zZ with K in Img2Col's (c1, kh, kw, c0) order, as Ascend's offline
  // model converter lays them out (done on the host, once per call).
  std::vector<std::uint16_t> wz(static_cast<std::size_t>(m1) * k1 * FB, 0);
  for (std::int32_t o = 0; o < s.cout; ++o)
    for (std::int32_t ci = 0; ci < s.c; ++ci)
      for (std::int32_t i = 0; i < s.kh; ++i)
        for (std::int32_t j = 0; j < s.kw; ++j) {
          const std::int32_t col = (((ci / F) * s.kh + i) * s.kw + j) * F + ci % F;
          wz[(static_cast<std::size_t>(o / F) * k1 + col / F) * FB + (o % F) * F + col % F] =
              f32_to_f16_bits(w[((static_cast<std::size_t>(o) * s.c + ci) * s.kh + i) * s.kw + j]);
        }
  GmScope gm(device);
  GM_ADDR gw = gm.scratch(wz.size() * 2, "aicore:fractal_z", wz.data());
  GM_ADDR gb = gm.lend(bias, static_cast<std::size_t>(s.cout) * 4);
  GM_ADDR x5 = to_5hd_on_device(device, gm, x, s);
  GM_ADDR gy = gm.lend(y, static_cast<std::size_t>(s.n) * s.cout * s.ho * s.wo * 4);
  const std::int32_t band = band_rows_fitting(
      s, static_cast<std::int64_t>(device.spec().memory("L1").capacity_bytes.value));
  const std::int64_t items =
      static_cast<std::int64_t>(s.n) * tiles_per_image(s, band) * ((s.cout + CT - 1) / CT);
  const char* name = s.relu      ? "aicore:conv2d_relu_f16"
                     : s.clips() ? "aicore:conv2d_clip_f16"
                                 : "aicore:conv2d_f16";
  return launch(device, name, gm.blocks(items), [&] {
    ConvKernel k(x5, gw, gb, gy, s, band);
    k.Process();
  });
}

}  // namespace tessera::aicore::kernels
