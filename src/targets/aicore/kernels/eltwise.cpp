#include "kernel_operator.h"
#include "tessera/targets/aicore/kernels/ops.h"

namespace tessera::aicore::kernels {
namespace {

using namespace AscendC;

constexpr int32_t kTile = 4096;  // f32 elements per tile
constexpr int32_t kBuffers = 2;

// One block: its share of the elements in tiles; the last tile of the last block may be
// partial (DataCopyPad).
class EltwiseKernel {
 public:
  EltwiseKernel(Eltwise op, GM_ADDR a, GM_ADDR b, GM_ADDR out, int64_t n) : op_(op) {
    const int64_t blocks = GetBlockNum();
    const int64_t per = (n + blocks - 1) / blocks;
    const int64_t aligned = (per + 15) / 16 * 16;
    begin_ = std::min<int64_t>(n, aligned * GetBlockIdx());
    count_ = std::min<int64_t>(n, begin_ + aligned) - begin_;
    a_.SetGlobalBuffer((__gm__ float*)a, n);
    if (b) b_.SetGlobalBuffer((__gm__ float*)b, n);
    out_.SetGlobalBuffer((__gm__ float*)out, n);
    pipe_.InitBuffer(qa_, kBuffers, kTile * sizeof(float));
    if (b) pipe_.InitBuffer(qb_, kBuffers, kTile * sizeof(float));
    pipe_.InitBuffer(qo_, kBuffers, kTile * sizeof(float));
    pipe_.InitBuffer(ha_, kTile * sizeof(half));
    pipe_.InitBuffer(hb_, kTile * sizeof(half));
    binary_ = b != nullptr;
  }

  void Process() {
    for (int64_t at = 0; at < count_; at += kTile) {
      const auto len = static_cast<int32_t>(std::min<int64_t>(kTile, count_ - at));
      CopyIn(begin_ + at, len);
      Compute(len);
      CopyOut(begin_ + at, len);
    }
  }

 private:
  void Load(TQue<QuePosition::VECIN, kBuffers>& q, const GlobalTensor<float>& g, int64_t at,
            int32_t len) {
    LocalTensor<float> t = q.AllocTensor<float>();
    DataCopyPad(t, g[at], DataCopyExtParams{1, static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0},
                DataCopyPadExtParams<float>{});
    q.EnQue(t);
  }
  void CopyIn(int64_t at, int32_t len) {
    Load(qa_, a_, at, len);
    if (binary_) Load(qb_, b_, at, len);
  }
  void Compute(int32_t len) {
    const int32_t padded = (len + 15) / 16 * 16;
    LocalTensor<float> a = qa_.DeQue<float>();
    LocalTensor<half> x = ha_.Get<half>(), y = hb_.Get<half>();
    Cast(x, a, RoundMode::CAST_NONE, padded);
    LocalTensor<float> b;
    if (binary_) {
      b = qb_.DeQue<float>();
      Cast(y, b, RoundMode::CAST_NONE, padded);
    }
    switch (op_) {
      case Eltwise::add:
        Add(x, x, y, padded);
        break;
      case Eltwise::sub:
        Sub(x, x, y, padded);
        break;
      case Eltwise::mul:
        Mul(x, x, y, padded);
        break;
      case Eltwise::div:
        Div(x, x, y, padded);
        break;
      case Eltwise::max:
        Max(x, x, y, padded);
        break;
      case Eltwise::min:
        Min(x, x, y, padded);
        break;
      case Eltwise::relu:
        Relu(x, x, padded);
        break;
      case Eltwise::abs:
        Abs(x, x, padded);
        break;
      case Eltwise::exp:
        Exp(x, x, padded);
        break;
      case Eltwise::log:
        Ln(x, x, padded);
        break;
      case Eltwise::sqrt:
        Sqrt(x, x, padded);
        break;
      case Eltwise::neg:
        Muls(x, x, static_cast<half>(-1.0f), padded);
        break;
    }
    LocalTensor<float> o = qo_.AllocTensor<float>();
    Cast(o, x, RoundMode::CAST_NONE, padded);
    qo_.EnQue(o);
    qa_.FreeTensor(a);
    if (binary_) qb_.FreeTensor(b);
  }
  void CopyOut(int64_t at, int32_t len) {
    LocalTensor<float> o = qo_.DeQue<float>();
    DataCopyPad(out_[at], o,
                DataCopyExtParams{1, static_cast<uint32_t>(len * sizeof(float)), 0, 0, 0});
    qo_.FreeTensor(o);
  }

  Eltwise op_;
  bool binary_ = false;
  int64_t begin_ = 0, count_ = 0;
  TPipe pipe_;
  TQue<QuePosition::VECIN, kBuffers> qa_, qb_;
  TQue<QuePosition::VECOUT, kBuffers> qo_;
  TBuf<QuePosition::VECCALC> ha_, hb_;
  GlobalTensor<float> a_, b_, out_;
};

}  // namespace

const char* eltwise_name(Eltwise op) {
  static constexpr const char* names[] = {"add",  "sub", "mul", "div", "max",  "min",
                                          "relu", "abs", "exp", "log", "sqrt", "neg"};
  return names[static_cast<int>(op)];
}

bool is_binary(Eltwise op) {
  return op <= Eltwise::min;
}

profile::KernelRecord eltwise(runtime::Device& device, Eltwise op, const float* a, const float* b,
                              float* out, std::int64_t n) {
  if (is_binary(op) != (b != nullptr))
    throw_user_error("aicore eltwise {}: takes {} input(s)", eltwise_name(op),
                     is_binary(op) ? 2 : 1);
  if (n <= 0)
    throw_user_error("aicore eltwise {}: {} elements; pass at least 1", eltwise_name(op), n);
  const auto bytes = static_cast<std::size_t>(n) * sizeof(float);
  auto* pa = const_cast<float*>(a);
  auto* pb = const_cast<float*>(b);
  gm_register(pa, bytes);
  if (pb && pb != pa) gm_register(pb, bytes);
  if (out != pa && out != pb) gm_register(out, bytes);
  struct Unregister {
    float *a, *b, *o;
    ~Unregister() {
      gm_unregister(a);
      if (b && b != a) gm_unregister(b);
      if (o != a && o != b) gm_unregister(o);
    }
  } unregister{pa, pb, out};
  const auto cores = static_cast<std::uint32_t>(device.spec().core_count.as_int());
  const auto blocks =
      static_cast<std::uint32_t>(std::clamp<std::int64_t>((n + kTile - 1) / kTile, 1, cores));
  return launch(device, fmt::format("aicore:{}_f16", eltwise_name(op)), blocks, [&] {
    EltwiseKernel k(op, reinterpret_cast<GM_ADDR>(pa), reinterpret_cast<GM_ADDR>(pb),
                    reinterpret_cast<GM_ADDR>(out), n);
    k.Process();
  });
}

}  // namespace tessera::aicore::kernels

namespace tessera::aicore::kernels {
namespace {

using namespace AscendC;

// out[r][c] = op(a[r][c], b[c]): b's row is cast to fp16 once per block, every row of a in
// turn through the queues.
void eltwise_rows_kernel(Eltwise op, GM_ADDR a, GM_ADDR b, GM_ADDR out, int64_t rows,
                         int32_t cols) {
  const uint32_t bytes = static_cast<uint32_t>(cols) * 4;
  const int32_t padded = (cols + 15) / 16 * 16;
  TPipe pipe;
  TQue<QuePosition::VECIN, 2> qa;
  TQue<QuePosition::VECOUT, 2> qo;
  TBuf<QuePosition::VECCALC> bf, bh, xh;
  pipe.InitBuffer(qa, 2, static_cast<uint32_t>(padded) * 4);
  pipe.InitBuffer(qo, 2, static_cast<uint32_t>(padded) * 4);
  pipe.InitBuffer(bf, static_cast<uint32_t>(padded) * 4);
  pipe.InitBuffer(bh, static_cast<uint32_t>(padded) * 2);
  pipe.InitBuffer(xh, static_cast<uint32_t>(padded) * 2);
  GlobalTensor<float> ga, gb, go;
  ga.SetGlobalBuffer((__gm__ float*)a, static_cast<uint64_t>(rows) * cols);
  gb.SetGlobalBuffer((__gm__ float*)b, static_cast<uint64_t>(cols));
  go.SetGlobalBuffer((__gm__ float*)out, static_cast<uint64_t>(rows) * cols);
  const DataCopyExtParams row{1, bytes, 0, 0, 0};
  DataCopyPad(bf.Get<float>(), gb, row, DataCopyPadExtParams<float>{});
  SetFlag<HardEvent::MTE2_V>(EVENT_ID3);
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID3);
  LocalTensor<half> y = bh.Get<half>(), x = xh.Get<half>();
  Cast(y, bf.Get<float>(), RoundMode::CAST_NONE, padded);
  for (int64_t r = GetBlockIdx(); r < rows; r += GetBlockNum()) {
    LocalTensor<float> in = qa.AllocTensor<float>();
    DataCopyPad(in, ga[static_cast<uint64_t>(r) * cols], row, DataCopyPadExtParams<float>{});
    qa.EnQue(in);
    in = qa.DeQue<float>();
    Cast(x, in, RoundMode::CAST_NONE, padded);
    switch (op) {
      case Eltwise::add:
        Add(x, x, y, padded);
        break;
      case Eltwise::sub:
        Sub(x, x, y, padded);
        break;
      case Eltwise::mul:
        Mul(x, x, y, padded);
        break;
      case Eltwise::div:
        Div(x, x, y, padded);
        break;
      case Eltwise::max:
        Max(x, x, y, padded);
        break;
      default:
        Min(x, x, y, padded);
        break;
    }
    LocalTensor<float> o = qo.AllocTensor<float>();
    Cast(o, x, RoundMode::CAST_NONE, padded);
    qo.EnQue(o);
    qa.FreeTensor(in);
    o = qo.DeQue<float>();
    DataCopyPad(go[static_cast<uint64_t>(r) * cols], o, row);
    qo.FreeTensor(o);
  }
}

}  // namespace

profile::KernelRecord eltwise_rows(runtime::Device& device, Eltwise op, const float* a,
                                   const float* b, float* out, std::int64_t rows,
                                   std::int32_t cols) {
  if (!is_binary(op)) throw_user_error("aicore eltwise_rows: {} takes one input", eltwise_name(op));
  if (rows <= 0 || cols <= 0)
    throw_user_error("aicore eltwise_rows: {} rows of {}; pass at least 1", rows, cols);
  if (static_cast<std::int64_t>(cols) * 4 * 8 > 240 * 1024)
    throw_user_error("aicore eltwise_rows: rows of {} floats do not fit the Unified Buffer", cols);
  auto* pa = const_cast<float*>(a);
  auto* pb = const_cast<float*>(b);
  const auto bytes = static_cast<std::size_t>(rows) * cols * 4;
  gm_register(pa, bytes);
  gm_register(pb, static_cast<std::size_t>(cols) * 4);
  if (out != pa) gm_register(out, bytes);
  struct Unregister {
    float *a, *b, *o;
    ~Unregister() {
      gm_unregister(a);
      gm_unregister(b);
      if (o != a) gm_unregister(o);
    }
  } unregister{pa, pb, out};
  const auto blocks =
      static_cast<std::uint32_t>(std::min<std::int64_t>(rows, device.spec().core_count.as_int()));
  return launch(device, fmt::format("aicore:{}_rows_f16", eltwise_name(op)), blocks, [&] {
    eltwise_rows_kernel(op, reinterpret_cast<GM_ADDR>(pa), reinterpret_cast<GM_ADDR>(pb),
                        reinterpret_cast<GM_ADDR>(out), rows, cols);
  });
}

}  // namespace tessera::aicore::kernels
