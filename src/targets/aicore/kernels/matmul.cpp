#include "kernel_operator.h"
#include "tessera/targets/aicore/kernels/ops.h"

namespace tessera::aicore::kernels {
namespace {

using namespace AscendC;

constexpr int32_t F = 16;             // fractal side
constexpr int32_t FB = F * F;         // halves per fractal
constexpr int32_t TILE = 256;         // C tile per block step (L0C holds it in f32)
constexpr int32_t SUB = 128;          // Cube operand tile (L0A/L0B hold two of them)
constexpr int32_t KC = 128;           // K per L1 chunk
constexpr int32_t BLK = FB * 2 / 32;  // 32-byte blocks per fp16 fractal

// C (m x n, nZ, fp16) = A (m x k, zZ) x B (k x n, nZ) with f32 accumulation in L0C. Each block
// takes 256 x 256 tiles of C round-robin; per tile, K advances in chunks of 128 through L1
// (double-buffered queues), each chunk feeding four 128 x 128 x 128 Mmads through L0A/L0B
// (double-buffered queues).
class MatmulKernel {
 public:
  MatmulKernel(GM_ADDR a, GM_ADDR b, GM_ADDR c, int32_t m, int32_t k, int32_t n)
      : m1_(m / F), k1_(k / F), n1_(n / F) {
    a_.SetGlobalBuffer((__gm__ half*)a, static_cast<uint64_t>(m) * k);
    b_.SetGlobalBuffer((__gm__ half*)b, static_cast<uint64_t>(k) * n);
    c_.SetGlobalBuffer((__gm__ half*)c, static_cast<uint64_t>(m) * n);
    pipe_.InitBuffer(qa1_, 2, TILE * KC * sizeof(half));
    pipe_.InitBuffer(qb1_, 2, KC * TILE * sizeof(half));
    pipe_.InitBuffer(qa2_, 2, SUB * KC * sizeof(half));
    pipe_.InitBuffer(qb2_, 2, KC * SUB * sizeof(half));
    pipe_.InitBuffer(c1_, TILE * TILE * sizeof(float));
    pipe_.InitBuffer(qc2_, 1, TILE * TILE * sizeof(half));
    tiles_m_ = m / TILE;
    tiles_ = tiles_m_ * (n / TILE);
  }

  void Process() {
    bool first = true;
    for (int32_t t = static_cast<int32_t>(GetBlockIdx()); t < tiles_;
         t += static_cast<int32_t>(GetBlockNum())) {
      if (!first) WaitFlag<HardEvent::V_M>(EVENT_ID0);  // L0C drained by the last tile
      first = false;
      const int32_t tm = t % tiles_m_, tn = t / tiles_m_;
      for (int32_t kc = 0; kc < k1_ * F / KC; ++kc) Chunk(tm, tn, kc);
      SetFlag<HardEvent::M_V>(EVENT_ID0);
      WaitFlag<HardEvent::M_V>(EVENT_ID0);
      Drain(tm, tn);
      SetFlag<HardEvent::V_M>(EVENT_ID0);
    }
    if (!first) WaitFlag<HardEvent::V_M>(EVENT_ID0);
  }

 private:
  void Chunk(int32_t tm, int32_t tn, int32_t kc) {
    constexpr int32_t kf = KC / F, tf = TILE / F, sf = SUB / F;
    // A rows of the tile, K chunk kc: 16 runs of 8 fractals -> L1 zZ (m1, k1).
    LocalTensor<half> a1 = qa1_.AllocTensor<half>();
    DataCopy(a1, a_[(static_cast<uint64_t>(tm) * tf * k1_ + kc * kf) * FB],
             DataCopyParams{tf, kf * BLK, static_cast<uint16_t>((k1_ - kf) * BLK), 0});
    qa1_.EnQue(a1);
    // B columns of each half of the tile: 8 runs of 8 fractals -> L1 [half][k1][n1].
    LocalTensor<half> b1 = qb1_.AllocTensor<half>();
    for (int32_t h = 0; h < 2; ++h)
      DataCopy(b1[h * kf * sf * FB],
               b_[(static_cast<uint64_t>(kc) * kf * n1_ + tn * tf + h * sf) * FB],
               DataCopyParams{kf, sf * BLK, static_cast<uint16_t>((n1_ - sf) * BLK), 0});
    qb1_.EnQue(b1);
    a1 = qa1_.DeQue<half>();
    b1 = qb1_.DeQue<half>();
    LocalTensor<float> c1 = c1_.Get<float>();
    for (int32_t mi = 0; mi < 2; ++mi)
      for (int32_t ni = 0; ni < 2; ++ni) {
        LocalTensor<half> a2 = qa2_.AllocTensor<half>();
        LoadData(a2, a1,
                 LoadData2dParams{static_cast<uint16_t>(mi * sf * kf), sf * kf, 1, 0, 0, false, 0});
        qa2_.EnQue(a2);
        LocalTensor<half> b2 = qb2_.AllocTensor<half>();
        LoadData(b2, b1,
                 LoadData2dParams{static_cast<uint16_t>(ni * kf * sf), kf * sf, 1, 0, 0, false, 0});
        qb2_.EnQue(b2);
        a2 = qa2_.DeQue<half>();
        b2 = qb2_.DeQue<half>();
        MmadParams p;
        p.m = SUB;
        p.n = SUB;
        p.k = KC;
        p.cmatrixInitVal = kc == 0;
        Mmad(c1[(mi * 2 + ni) * SUB * SUB], a2, b2, p);
        qa2_.FreeTensor(a2);
        qb2_.FreeTensor(b2);
      }
    qa1_.FreeTensor(a1);
    qb1_.FreeTensor(b1);
  }

  // L0C (four 128 x 128 nZ sub-tiles) -> UB as one 256 x 256 nZ tile in fp16 -> GM nZ.
  void Drain(int32_t tm, int32_t tn) {
    constexpr int32_t tf = TILE / F, sf = SUB / F;
    LocalTensor<float> c1 = c1_.Get<float>();
    LocalTensor<half> c2 = qc2_.AllocTensor<half>();
    for (int32_t mi = 0; mi < 2; ++mi)
      for (int32_t ni = 0; ni < 2; ++ni)
        DataCopy(c2[(ni * sf * tf + mi * sf) * FB], c1[(mi * 2 + ni) * SUB * SUB],
                 DataCopyParams{sf, sf, 0, sf},
                 DataCopyEnhancedParams{BlockMode::BLOCK_MODE_MATRIX});
    qc2_.EnQue(c2);
    c2 = qc2_.DeQue<half>();
    DataCopy(c_[(static_cast<uint64_t>(tn) * tf * m1_ + tm * tf) * FB], c2,
             DataCopyParams{tf, tf * BLK, 0, static_cast<uint16_t>((m1_ - tf) * BLK)});
    qc2_.FreeTensor(c2);
  }

  int32_t m1_, k1_, n1_;
  int32_t tiles_m_ = 0, tiles_ = 0;
  TPipe pipe_;
  TQue<QuePosition::A1, 2> qa1_;
  TQue<QuePosition::B1, 2> qb1_;
  TQue<QuePosition::A2, 2> qa2_;
  TQue<QuePosition::B2, 2> qb2_;
  TBuf<QuePosition::CO1> c1_;
  TQue<QuePosition::CO2, 1> qc2_;
  GlobalTensor<half> a_, b_, c_;
};

}  // namespace

profile::KernelRecord matmul_f16(runtime::Device& device, const std::uint16_t* a,
                                 const std::uint16_t* b, std::uint16_t* c, std::int32_t m,
                                 std::int32_t k, std::int32_t n) {
  if (m <= 0 || k <= 0 || n <= 0 || m % TILE || n % TILE || k % KC)
    throw_user_error(
        "aicore matmul_f16: m {} and n {} must be positive multiples of {}, k {} of {}; pad the "
        "operands",
        m, n, TILE, k, KC);
  const auto sa = static_cast<std::size_t>(m) * k * 2, sb = static_cast<std::size_t>(k) * n * 2,
             sc = static_cast<std::size_t>(m) * n * 2;
  auto* pa = const_cast<std::uint16_t*>(a);
  auto* pb = const_cast<std::uint16_t*>(b);
  gm_register(pa, sa);
  gm_register(pb, sb);
  gm_register(c, sc);
  struct Unregister {
    void *a, *b, *c;
    ~Unregister() {
      gm_unregister(a);
      gm_unregister(b);
      gm_unregister(c);
    }
  } unregister{pa, pb, c};
  const auto tiles = static_cast<std::int64_t>(m / TILE) * (n / TILE);
  const auto blocks = static_cast<std::uint32_t>(
      std::clamp<std::int64_t>(tiles, 1, device.spec().core_count.as_int()));
  return launch(device, "aicore:matmul_f16", blocks, [&] {
    MatmulKernel kernel(reinterpret_cast<GM_ADDR>(pa), reinterpret_cast<GM_ADDR>(pb),
                        reinterpret_cast<GM_ADDR>(c), m, k, n);
    kernel.Process();
  });
}

}  // namespace tessera::aicore::kernels
