// Ascend C's high-level Matmul (CANN's lib/matmul_intf.h) for Tessera: C = A x B [+ bias] of
// half A and B from GM, float or half C, run on the simulated core with the same instructions a
// hand-written Cube kernel issues (examples/aicore/matmul_custom.cpp): ND -> NZ DataCopy into L1
// (MTE2), LoadData into L0A/L0B (MTE1), Mmad into L0C (M), the CO1 -> UB DataCopy of this core
// (V) and UB -> GM (MTE3), handed over by queues and flags, so its cycles come from the pipes.
// Shapes and misuse are UserErrors; what is covered and what is not: docs/targets/aicore.md.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernel_operator.h"
#include "kernel_tiling/kernel_tiling.h"

enum class LayoutMode : std::uint8_t { NONE = 0, BSNGD, SBNGD, BNGS1S2, NORMAL };

namespace AscendC {

inline constexpr std::uint32_t DEFAULT_C0_SIZE = 32;  // bytes of one C0 block

// The system workspace the library APIs may use (the kernel's workspace argument in CANN's
// kernel-launch samples); Tessera's Matmul needs none, so it is only kept and handed back.
inline GM_ADDR GetSysWorkSpacePtr() {
  return detail::core().sys_workspace;
}
inline void SetSysWorkspace(GM_ADDR workspace) {
  detail::core().sys_workspace = workspace;
}

template <TPosition POSITION, CubeFormat FORMAT, typename TYPE, bool ISTRANS = false,
          LayoutMode LAYOUT = LayoutMode::NONE, bool IBSHARE = false>
struct MatmulType {
  static constexpr TPosition pos = POSITION;
  static constexpr CubeFormat format = FORMAT;
  using T = TYPE;
  static constexpr bool isTrans = ISTRANS;
  static constexpr LayoutMode layout = LAYOUT;
  static constexpr bool ibShare = IBSHARE;
};

// The template configurations (CFG_NORM, CFG_MDL): both run the schedule described in the docs.
struct MatmulConfig {
  bool doNorm = true;
  bool doMultiDataLoad = false;
};
inline constexpr MatmulConfig CFG_NORM{true, false};
inline constexpr MatmulConfig CFG_MDL{false, true};

template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE,
          const MatmulConfig& MM_CFG = CFG_NORM>
class Matmul {
  using SrcT = typename A_TYPE::T;
  using DstT = typename C_TYPE::T;
  using BiasT = typename BIAS_TYPE::T;
  static_assert(std::is_same_v<SrcT, half> && std::is_same_v<typename B_TYPE::T, half>,
                "Matmul: A and B are half here (this core's Cube multiplies fp16 with f32 "
                "accumulation; float inputs need a Cube that takes them)");
  static_assert(std::is_same_v<DstT, float> || std::is_same_v<DstT, half>,
                "Matmul: C is float or half");
  static_assert(std::is_same_v<BiasT, DstT>, "Matmul: the bias has C's element type here");
  static_assert(A_TYPE::pos == TPosition::GM && B_TYPE::pos == TPosition::GM &&
                    A_TYPE::format == CubeFormat::ND && B_TYPE::format == CubeFormat::ND,
                "Matmul: A and B are ND matrices in GM here");
  static constexpr std::uint32_t kFrac = 16;  // fractal side (half)

 public:
  // Takes the tiling and the pipe whose buffers it allocates (REGIST_MATMUL_OBJ calls it).
  void Init(const TCubeTiling* cubeTiling, TPipe* tpipe = nullptr) {
    if (cubeTiling == nullptr)
      tessera::throw_user_error(
          "Matmul::Init: the tiling is null; pass &tiling (a TCubeTiling "
          "GetTiling filled)");
    pipe_ = tpipe ? tpipe : GetTPipePtr();
    if (pipe_ == nullptr)
      tessera::throw_user_error(
          "Matmul::Init: no TPipe; REGIST_MATMUL_OBJ(&pipe, "
          "GetSysWorkSpacePtr(), mm, &tiling) with the kernel's TPipe");
    t_ = *cubeTiling;
    const std::int32_t base[3] = {t_.baseM, t_.baseN, t_.baseK};
    for (std::int32_t b : base)
      if (b <= 0 || b % static_cast<std::int32_t>(kFrac) != 0)
        tessera::throw_user_error(
            "Matmul::Init: baseM/baseN/baseK = {}/{}/{}; each must be a positive multiple of 16 "
            "(fill the tiling with MatmulApiTiling::GetTiling)",
            t_.baseM, t_.baseN, t_.baseK);
    if (t_.M <= 0 || t_.N <= 0 || t_.Ka <= 0 || t_.Kb <= 0 || t_.singleCoreM <= 0 ||
        t_.singleCoreN <= 0 || t_.singleCoreK <= 0)
      tessera::throw_user_error(
          "Matmul::Init: the tiling has M={} N={} Ka={} Kb={} singleCoreM/N/K={}/{}/{}; every "
          "shape must be positive (did GetTiling return -1?)",
          t_.M, t_.N, t_.Ka, t_.Kb, t_.singleCoreM, t_.singleCoreN, t_.singleCoreK);
    org_ = {t_.M, t_.N, t_.Ka, t_.Kb, t_.N};
    single_ = {t_.singleCoreM, t_.singleCoreN, t_.singleCoreK};
    const std::uint64_t a2 = std::uint64_t(t_.baseM) * t_.baseK * sizeof(SrcT);
    const std::uint64_t b2 = std::uint64_t(t_.baseK) * t_.baseN * sizeof(SrcT);
    const std::uint64_t c1 = std::uint64_t(t_.baseM) * t_.baseN * sizeof(float);
    const int dbA = t_.dbL0A == 1 ? 1 : 2, dbB = t_.dbL0B == 1 ? 1 : 2;
    fits(detail::Buf::L0A, a2 * dbA, "baseM x baseK of A (x dbL0A)");
    fits(detail::Buf::L0B, b2 * dbB, "baseK x baseN of B (x dbL0B)");
    fits(detail::Buf::L0C, c1, "baseM x baseN of C in f32");
    // L1 holds `step` base slices of K of A and B (stepKa, stepKb), twice when depthA1/B1 say so.
    step_ = std::max(1, std::min(t_.stepKa, t_.stepKb));
    const int dbA1 = t_.depthA1 >= 2 * step_ ? 2 : 1, dbB1 = t_.depthB1 >= 2 * step_ ? 2 : 1;
    const std::uint64_t a1 = a2 * step_, b1 = b2 * step_;
    fits(detail::Buf::L1, a1 * dbA1 + b1 * dbB1,
         "stepKa/stepKb base slices of A and B (x depthA1/stepKa, depthB1/stepKb)");
    pipe_->InitBuffer(qA1_, static_cast<std::uint8_t>(dbA1), static_cast<std::uint32_t>(a1));
    pipe_->InitBuffer(qB1_, static_cast<std::uint8_t>(dbB1), static_cast<std::uint32_t>(b1));
    pipe_->InitBuffer(qA2_, static_cast<std::uint8_t>(dbA), static_cast<std::uint32_t>(a2));
    pipe_->InitBuffer(qB2_, static_cast<std::uint8_t>(dbB), static_cast<std::uint32_t>(b2));
    pipe_->InitBuffer(qCO1_, 1, static_cast<std::uint32_t>(c1));
    init_ = true;
  }

  void SetOrgShape(int orgM, int orgN, int orgK) { SetOrgShape(orgM, orgN, orgK, orgK); }
  void SetOrgShape(int orgM, int orgN, int orgKa, int orgKb, int orgKc = 0) {
    require_init("SetOrgShape");
    if (orgM <= 0 || orgN <= 0 || orgKa <= 0 || orgKb <= 0 || orgKc < 0)
      tessera::throw_user_error("Matmul::SetOrgShape({}, {}, {}, {}, {}): shapes must be positive",
                                orgM, orgN, orgKa, orgKb, orgKc);
    org_ = {orgM, orgN, orgKa, orgKb, orgKc ? orgKc : orgN};
  }
  void SetSingleShape(int singleM, int singleN, int singleK) {
    require_init("SetSingleShape");
    single_ = {singleM, singleN, singleK};
  }
  // The shape of this core's last block; values <= 0 keep the current one.
  void SetTail(int tailM = -1, int tailN = -1, int tailK = -1) {
    require_init("SetTail");
    if (tailM > 0) single_[0] = tailM;
    if (tailN > 0) single_[1] = tailN;
    if (tailK > 0) single_[2] = tailK;
  }
  void SetTensorA(const GlobalTensor<SrcT>& gm, bool isTransposeA = false) {
    a_ = gm;
    transA_ = isTransposeA || A_TYPE::isTrans;
    hasA_ = true;
    iter_ = 0;
  }
  void SetTensorB(const GlobalTensor<SrcT>& gm, bool isTransposeB = false) {
    b_ = gm;
    transB_ = isTransposeB || B_TYPE::isTrans;
    hasB_ = true;
    iter_ = 0;
  }
  void SetBias(const GlobalTensor<BiasT>& biasGlobal) {
    require_init("SetBias");
    if (!t_.isBias)
      tessera::throw_user_error(
          "Matmul::SetBias: the tiling was made without a bias "
          "(isBias = 0); call SetBias(true) on the host tiling");
    bias_ = biasGlobal;
    hasBias_ = true;
  }
  void DisableBias() { hasBias_ = false; }
  void ClearBias() { hasBias_ = false; }
  // UB the Matmul may use for moving C out (otherwise it takes its own from the pipe).
  void SetLocalWorkspace(const LocalTensor<std::uint8_t>& tmpBuffer) {
    workspace_ = tmpBuffer;
    hasWorkspace_ = true;
  }

  // Computes the next baseM x baseN block of C into L0C; false once every block is done.
  template <bool sync = true>
  bool Iterate(bool enPartialSum = false) {
    static_assert(sync, "Matmul: Iterate<false> (asynchronous) is not provided; use Iterate<true>");
    require_init("Iterate");
    if (!hasA_ || !hasB_)
      tessera::throw_user_error(
          "Matmul::Iterate: {} not set; call SetTensorA and SetTensorB "
          "before Iterate or IterateAll",
          !hasA_ ? "A is" : "B is");
    if (pending_)
      tessera::throw_user_error(
          "Matmul::Iterate: the last block's result was not taken; call "
          "GetTensorC after each Iterate");
    if (iter_ == 0) check_shapes();
    const std::int32_t mIter = ceil_div(single_[0], t_.baseM);
    const std::int32_t nIter = ceil_div(single_[1], t_.baseN);
    if (iter_ >= mIter * nIter) {
      iter_ = 0;
      return false;
    }
    // iterateOrder 0 walks M first (CANN's ORDER_M), 1 walks N first.
    if (t_.iterateOrder == 1) {
      n_ = iter_ % nIter;
      m_ = iter_ / nIter;
    } else {
      m_ = iter_ % mIter;
      n_ = iter_ / mIter;
    }
    ++iter_;
    rows_ = std::min(t_.baseM, single_[0] - m_ * t_.baseM);
    cols_ = std::min(t_.baseN, single_[1] - n_ * t_.baseN);
    c1_ = qCO1_.template AllocTensor<float>();
    // K in chunks of `step_` base slices: each chunk's A and B come into L1 once, its slices
    // go on to L0 and the Cube one after another.
    const std::int32_t chunkK = step_ * t_.baseK;
    for (std::int32_t kc = 0; kc < single_[2]; kc += chunkK) {
      const std::int32_t chunk = std::min(chunkK, single_[2] - kc);
      LocalTensor<SrcT> a1 = load_a1(kc, chunk), b1 = load_b1(kc, chunk);
      for (std::int32_t ks = 0; ks < chunk; ks += t_.baseK) {
        const std::int32_t depth = std::min(t_.baseK, chunk - ks);
        load_a2(a1, chunk, ks, depth);
        load_b2(b1, chunk, ks, depth);
        LocalTensor<SrcT> a2 = qA2_.template DeQue<SrcT>();
        LocalTensor<SrcT> b2 = qB2_.template DeQue<SrcT>();
        MmadParams p;
        p.m = static_cast<std::uint16_t>(round16(rows_));
        p.n = static_cast<std::uint16_t>(cols_);
        p.k = static_cast<std::uint16_t>(depth);
        p.cmatrixInitVal = kc == 0 && ks == 0 && !enPartialSum;
        Mmad(c1_, a2, b2, p);
        qA2_.FreeTensor(a2);
        qB2_.FreeTensor(b2);
      }
      qA1_.FreeTensor(a1);
      qB1_.FreeTensor(b1);
    }
    qCO1_.EnQue(c1_);
    pending_ = true;
    return true;
  }

  // The block Iterate computed, to its place in C in GM (row length orgN, or orgKc when given).
  template <bool sync = true>
  void GetTensorC(const GlobalTensor<DstT>& gm, std::uint8_t enAtomic = 0,
                  bool enSequentialWrite = false) {
    static_assert(sync, "Matmul: GetTensorC<false> (asynchronous) is not provided");
    (void)enSequentialWrite;
    const std::int32_t ldc = org_[4];
    const GlobalTensor<DstT> c = gm[std::uint64_t(m_) * t_.baseM * ldc + n_ * t_.baseN];
    move_out("GetTensorC", [&](const LocalTensor<DstT>& stage, std::int32_t n1) {
      const std::uint8_t slot = static_cast<std::uint8_t>(n1 % 2);
      SetFlag<HardEvent::V_MTE3>(events_[slot]);
      WaitFlag<HardEvent::V_MTE3>(events_[slot]);
      if (enAtomic == 1) SetAtomicAdd<DstT>();
      DataCopy(c[std::uint64_t(n1) * kFrac], stage,
               DataCopyParams{static_cast<std::uint16_t>(rows_), block_len(kFrac), 0,
                              block_len(ldc - static_cast<std::int32_t>(kFrac))});
      if (enAtomic == 1) SetAtomicNone();
      SetFlag<HardEvent::MTE3_V>(events_[2 + slot]);
      stagePending_[slot] = true;
    });
  }
  // The block into a UB tensor (VECIN/VECCALC/VECOUT) as ND rows: at its start, baseN elements
  // a row (enSequentialWrite), or at its place in the singleCoreM x singleCoreN block.
  template <bool sync = true>
  void GetTensorC(const LocalTensor<DstT>& co2Local, std::uint8_t enAtomic = 0,
                  bool enSequentialWrite = false) {
    static_assert(sync, "Matmul: GetTensorC<false> (asynchronous) is not provided");
    if (enAtomic != 0)
      tessera::throw_user_error(
          "Matmul::GetTensorC: enAtomic adds into GM; a UB destination "
          "takes enAtomic = 0");
    const std::int32_t ld = enSequentialWrite ? t_.baseN : single_[1];
    const std::uint64_t at =
        enSequentialWrite ? 0 : std::uint64_t(m_) * t_.baseM * ld + std::uint64_t(n_) * t_.baseN;
    const std::uint64_t need = pending_ ? at + std::uint64_t(rows_ - 1) * ld + cols_ : 0;
    if (need > co2Local.GetSize())
      tessera::throw_user_error(
          "Matmul::GetTensorC: the block needs {} elements of the UB tensor, which holds {}; "
          "allocate baseM x baseN ({} x {}) elements{}",
          need, co2Local.GetSize(), t_.baseM, t_.baseN,
          enSequentialWrite ? "" : " a row of singleCoreN, or pass enSequentialWrite = true");
    move_out("GetTensorC", [&](const LocalTensor<DstT>& stage, std::int32_t n1) {
      DataCopy(co2Local[static_cast<std::uint32_t>(at + std::uint64_t(n1) * kFrac)], stage,
               DataCopyParams{static_cast<std::uint16_t>(rows_), block_len(kFrac), 0,
                              block_len(ld - static_cast<std::int32_t>(kFrac))});
    });
  }

  template <bool sync = true>
  void IterateAll(const GlobalTensor<DstT>& gm, std::uint8_t enAtomic = 0,
                  bool enSequentialWrite = false, bool waitIterateAll = false,
                  bool fakeMsg = false) {
    (void)waitIterateAll;
    (void)fakeMsg;
    while (Iterate<sync>()) GetTensorC<sync>(gm, enAtomic, enSequentialWrite);
  }

  // Ends the Matmul's use of its UB and event ids.
  void End() {
    if (!init_) return;
    drain();
    if (eventsHeld_) {
      for (int i = 0; i < 2; ++i) pipe_->ReleaseEventID(HardEvent::V_MTE3, events_[i]);
      for (int i = 2; i < 4; ++i) pipe_->ReleaseEventID(HardEvent::MTE3_V, events_[i]);
      pipe_->ReleaseEventID(HardEvent::MTE2_V, events_[4]);
      pipe_->ReleaseEventID(HardEvent::V_MTE2, events_[5]);
      eventsHeld_ = false;
    }
  }

 private:
  static std::int32_t ceil_div(std::int32_t a, std::int32_t b) { return (a + b - 1) / b; }
  static std::int32_t round16(std::int32_t v) { return ceil_div(v, kFrac) * kFrac; }
  static std::uint16_t block_len(std::int32_t elems) {
    return static_cast<std::uint16_t>(elems * static_cast<std::int32_t>(sizeof(DstT)) / 32);
  }
  void require_init(const char* what) const {
    if (!init_)
      tessera::throw_user_error(
          "Matmul::{}: the Matmul has no tiling; REGIST_MATMUL_OBJ(&pipe, "
          "GetSysWorkSpacePtr(), mm, &tiling) or mm.Init(&tiling) first",
          what);
  }
  static void fits(detail::Buf buf, std::uint64_t bytes, const char* what) {
    const std::uint64_t have = detail::core().memory(buf).capacity();
    if (bytes > have)
      tessera::throw_user_error(
          "Matmul::Init: {} takes {} B of {}, which holds {} B; pick smaller "
          "base blocks (SetFixSplit) or let GetTiling choose",
          what, bytes, tessera::aicore::buf_name(buf), have);
  }
  // The shapes of this core's work against the tiling and the layouts this Matmul moves.
  void check_shapes() const {
    const std::int32_t m = single_[0], n = single_[1], k = single_[2];
    if (m <= 0 || n <= 0 || k <= 0)
      tessera::throw_user_error(
          "Matmul: the single-core shape {} x {} x {} is empty; set "
          "positive shapes (SetSingleShape / SetTail)",
          m, n, k);
    if (m > t_.singleCoreM || n > t_.singleCoreN || k > t_.singleCoreK)
      tessera::throw_user_error(
          "Matmul: the single-core shape {} x {} x {} exceeds the tiling's singleCoreM/N/K "
          "{} x {} x {}; make the tiling for the larger shape (SetShape / SetSingleShape on "
          "the host)",
          m, n, k, t_.singleCoreM, t_.singleCoreN, t_.singleCoreK);
    if (org_[2] != org_[3] && k > std::min(org_[2], org_[3]))
      tessera::throw_user_error(
          "Matmul: A has K = {} and B has K = {}; the K of the product "
          "({}) must fit both (SetOrgShape(M, N, Ka, Kb))",
          org_[2], org_[3], k);
    if (k > org_[2] || k > org_[3])
      tessera::throw_user_error(
          "Matmul: singleCoreK {} exceeds A's K ({}) or B's K ({}); the "
          "tiling's K does not match the matrices",
          k, org_[2], org_[3]);
    if (m > org_[0] || n > org_[1])
      tessera::throw_user_error("Matmul: the single-core block {} x {} exceeds C's {} x {}", m, n,
                                org_[0], org_[1]);
    // Rows move in 32-byte bursts: the row lengths and K are whole blocks of 16 halves.
    const std::int32_t rowA = transA_ ? org_[0] : org_[2];
    const std::int32_t rowB = transB_ ? org_[3] : org_[1];
    if (k % 16 || n % 16 || rowA % 16 || rowB % 16 || org_[4] % 16 || (transA_ && m % 16))
      tessera::throw_user_error(
          "Matmul: K = {}, N = {}, the row lengths of A ({}), B ({}) and C ({}){} must be "
          "multiples of 16 here (rows move as 32-byte blocks of half); pad the matrices",
          k, n, rowA, rowB, org_[4], transA_ ? " and M (A transposed)" : "");
  }
  // A's rows m_ x K [k0, k0 + chunk) into L1 as NZ fractals (fractal (k1, m1) at k1 x mf + m1;
  // transposed, (m1, k1) at m1 x kf + k1), each 16-column strip one DataCopy of 32-byte rows.
  LocalTensor<SrcT> load_a1(std::int32_t k0, std::int32_t chunk) {
    const std::int32_t mf = round16(rows_) / 16, kf = chunk / 16;
    LocalTensor<SrcT> a1 = qA1_.template AllocTensor<SrcT>();
    const std::uint64_t row0 = std::uint64_t(m_) * t_.baseM;
    if (!transA_) {
      const auto gap = static_cast<std::uint16_t>(org_[2] / 16 - 1);
      for (std::int32_t k1 = 0; k1 < kf; ++k1)
        DataCopy(a1[static_cast<std::uint32_t>(k1 * mf * 256)], a_[row0 * org_[2] + k0 + k1 * 16],
                 DataCopyParams{static_cast<std::uint16_t>(rows_), 1, gap, 0});
    } else {
      const auto gap = static_cast<std::uint16_t>(org_[0] / 16 - 1);
      for (std::int32_t m1 = 0; m1 < mf; ++m1)
        DataCopy(a1[static_cast<std::uint32_t>(m1 * kf * 256)],
                 a_[std::uint64_t(k0) * org_[0] + row0 + m1 * 16],
                 DataCopyParams{static_cast<std::uint16_t>(chunk), 1, gap, 0});
    }
    qA1_.EnQue(a1);
    return qA1_.template DeQue<SrcT>();
  }
  // The slice [ks, ks + depth) of the chunk in L1 into L0A as zZ (docs, "Fractal layouts").
  void load_a2(const LocalTensor<SrcT>& a1, std::int32_t chunk, std::int32_t ks,
               std::int32_t depth) {
    const std::int32_t mf = round16(rows_) / 16, kf = depth / 16, kfc = chunk / 16, k1 = ks / 16;
    LocalTensor<SrcT> a2 = qA2_.template AllocTensor<SrcT>();
    for (std::int32_t m1 = 0; m1 < mf; ++m1)
      LoadData(a2[static_cast<std::uint32_t>(m1 * kf * 256)], a1,
               transA_ ? LoadData2dParams{static_cast<std::uint16_t>(m1 * kfc + k1),
                                          static_cast<std::uint8_t>(kf), 1, 0, 0, true, 0}
                       : LoadData2dParams{static_cast<std::uint16_t>(k1 * mf + m1),
                                          static_cast<std::uint8_t>(kf),
                                          static_cast<std::uint16_t>(mf), 0, 0, false, 0});
    qA2_.EnQue(a2);
  }
  // B's K [k0, k0 + chunk) x columns n_ into L1 as NZ fractals ((n1, k1) at n1 x kf + k1;
  // transposed, (k1, n1) at k1 x nf + n1).
  LocalTensor<SrcT> load_b1(std::int32_t k0, std::int32_t chunk) {
    const std::int32_t nf = cols_ / 16, kf = chunk / 16;
    LocalTensor<SrcT> b1 = qB1_.template AllocTensor<SrcT>();
    const std::uint64_t col0 = std::uint64_t(n_) * t_.baseN;
    if (!transB_) {
      const auto gap = static_cast<std::uint16_t>(org_[1] / 16 - 1);
      for (std::int32_t n1 = 0; n1 < nf; ++n1)
        DataCopy(b1[static_cast<std::uint32_t>(n1 * kf * 256)],
                 b_[std::uint64_t(k0) * org_[1] + col0 + n1 * 16],
                 DataCopyParams{static_cast<std::uint16_t>(chunk), 1, gap, 0});
    } else {
      const auto gap = static_cast<std::uint16_t>(org_[3] / 16 - 1);
      for (std::int32_t k1 = 0; k1 < kf; ++k1)
        DataCopy(b1[static_cast<std::uint32_t>(k1 * nf * 256)], b_[col0 * org_[3] + k0 + k1 * 16],
                 DataCopyParams{static_cast<std::uint16_t>(cols_), 1, gap, 0});
    }
    qB1_.EnQue(b1);
    return qB1_.template DeQue<SrcT>();
  }
  // The slice [ks, ks + depth) of the chunk in L1 into L0B as nZ.
  void load_b2(const LocalTensor<SrcT>& b1, std::int32_t chunk, std::int32_t ks,
               std::int32_t depth) {
    const std::int32_t nf = cols_ / 16, kf = depth / 16, kfc = chunk / 16, k0 = ks / 16;
    LocalTensor<SrcT> b2 = qB2_.template AllocTensor<SrcT>();
    for (std::int32_t k1 = 0; k1 < kf; ++k1)
      LoadData(b2[static_cast<std::uint32_t>(k1 * nf * 256)], b1,
               transB_ ? LoadData2dParams{static_cast<std::uint16_t>((k0 + k1) * nf),
                                          static_cast<std::uint8_t>(nf), 1, 0, 0, false, 0}
                       : LoadData2dParams{static_cast<std::uint16_t>(k0 + k1),
                                          static_cast<std::uint8_t>(nf),
                                          static_cast<std::uint16_t>(kfc), 0, 0, true, 0});
    qB2_.EnQue(b2);
  }
  // The UB the moves out use: the bias slice and two staging columns of 16 x rows elements.
  void prepare_ub() {
    const std::uint32_t biasBytes = (t_.baseN * sizeof(BiasT) + 31) / 32 * 32;
    const std::uint32_t stageBytes = round16(t_.baseM) * kFrac * sizeof(DstT);
    const std::uint32_t total = biasBytes + 2 * stageBytes;
    if (!hasUb_) {
      if (hasWorkspace_) {
        if (workspace_.GetSize() < total)
          tessera::throw_user_error(
              "Matmul::SetLocalWorkspace: the workspace holds {} B; the "
              "Matmul needs {} B of UB for this tiling",
              workspace_.GetSize(), total);
        ub_ = workspace_;
      } else {
        pipe_->InitBuffer(ubBuf_, total);
        ub_ = ubBuf_.template Get<std::uint8_t>();
      }
      biasUb_ = ub_.template ReinterpretCast<BiasT>();
      for (int i = 0; i < 2; ++i)
        stage_[i] = ub_[biasBytes + i * stageBytes].template ReinterpretCast<DstT>();
      hasUb_ = true;
    }
    if (!eventsHeld_) {
      events_[0] = pipe_->AllocEventID(HardEvent::V_MTE3);
      events_[1] = pipe_->AllocEventID(HardEvent::V_MTE3);
      events_[2] = pipe_->AllocEventID(HardEvent::MTE3_V);
      events_[3] = pipe_->AllocEventID(HardEvent::MTE3_V);
      events_[4] = pipe_->AllocEventID(HardEvent::MTE2_V);
      events_[5] = pipe_->AllocEventID(HardEvent::V_MTE2);
      eventsHeld_ = true;
    }
  }
  // Each 16-column fractal column of the block: L0C -> UB staging (V, converting to DstT),
  // the bias added on V, then `out(stage, n1)` moves it on.
  template <typename Out>
  void move_out(const char* what, Out out) {
    if (!pending_)
      tessera::throw_user_error(
          "Matmul::{}: no block computed; call Iterate first (it returns "
          "false once every block is done)",
          what);
    prepare_ub();
    LocalTensor<float> c1 = qCO1_.template DeQue<float>();
    const bool bias = hasBias_ && t_.isBias;
    if (bias) {
      if (biasPending_) WaitFlag<HardEvent::V_MTE2>(events_[5]);
      DataCopy(biasUb_, bias_[std::uint64_t(n_) * t_.baseN], static_cast<std::uint32_t>(cols_));
      SetFlag<HardEvent::MTE2_V>(events_[4]);
      WaitFlag<HardEvent::MTE2_V>(events_[4]);
    }
    const std::int32_t mf = round16(rows_) / 16;
    const auto rep = static_cast<std::uint8_t>(kFrac * sizeof(DstT) / 32);
    for (std::int32_t n1 = 0; n1 < cols_ / 16; ++n1) {
      const int slot = n1 % 2;
      if (stagePending_[slot]) {
        WaitFlag<HardEvent::MTE3_V>(events_[2 + slot]);
        stagePending_[slot] = false;
      }
      DataCopy(stage_[slot], c1[static_cast<std::uint32_t>(n1 * mf * 256)],
               DataCopyParams{1, static_cast<std::uint16_t>(mf), 0, 0},
               DataCopyEnhancedParams{BlockMode::BLOCK_MODE_MATRIX});
      for (std::int32_t r = 0; bias && r < rows_; r += 255) {
        const auto reps = static_cast<std::uint8_t>(std::min(255, rows_ - r));
        Add(stage_[slot][static_cast<std::uint32_t>(r * 16)],
            stage_[slot][static_cast<std::uint32_t>(r * 16)],
            biasUb_[static_cast<std::uint32_t>(n1 * 16)], std::uint64_t{16}, reps,
            BinaryRepeatParams{1, 1, 1, rep, rep, 0});
      }
      out(stage_[slot], n1);
    }
    if (bias) {
      SetFlag<HardEvent::V_MTE2>(events_[5]);
      biasPending_ = true;
    }
    qCO1_.FreeTensor(c1);
    pending_ = false;
  }
  // Waits for the flags still set, so none outlives the Matmul.
  void drain() {
    for (int slot = 0; slot < 2; ++slot)
      if (stagePending_[slot]) {
        WaitFlag<HardEvent::MTE3_V>(events_[2 + slot]);
        stagePending_[slot] = false;
      }
    if (biasPending_) {
      WaitFlag<HardEvent::V_MTE2>(events_[5]);
      biasPending_ = false;
    }
  }

  TCubeTiling t_{};
  TPipe* pipe_ = nullptr;
  bool init_ = false;
  std::array<std::int32_t, 5> org_{};     // M, N, Ka, Kb, C's row length
  std::array<std::int32_t, 3> single_{};  // this core's M, N, K
  GlobalTensor<SrcT> a_, b_;
  GlobalTensor<BiasT> bias_;
  bool hasA_ = false, hasB_ = false, hasBias_ = false, transA_ = false, transB_ = false;
  TQue<TPosition::A1, 2> qA1_;
  TQue<TPosition::B1, 2> qB1_;
  TQue<TPosition::A2, 2> qA2_;
  TQue<TPosition::B2, 2> qB2_;
  TQue<TPosition::CO1, 1> qCO1_;
  TBuf<TPosition::VECCALC> ubBuf_;
  LocalTensor<std::uint8_t> workspace_, ub_;
  LocalTensor<BiasT> biasUb_;
  LocalTensor<DstT> stage_[2];
  bool hasWorkspace_ = false, hasUb_ = false, eventsHeld_ = false, biasPending_ = false;
  bool stagePending_[2] = {false, false};
  std::int32_t events_[6] = {};
  LocalTensor<float> c1_;
  bool pending_ = false;
  std::int32_t iter_ = 0, m_ = 0, n_ = 0, rows_ = 0, cols_ = 0, step_ = 1;
};

namespace detail {
template <class MM>
void regist_matmul(TPipe* pipe, MM& mm, const TCubeTiling* tiling) {
  mm.Init(tiling, pipe);
}
template <class MM>
void regist_matmul(TPipe*, MM&) {}  // the kernel calls mm.Init(&tiling) itself
template <class MM, class... Rest>
void regist_matmul(TPipe* pipe, MM& mm, const TCubeTiling* tiling, Rest&&... rest) {
  mm.Init(tiling, pipe);
  regist_matmul(pipe, rest...);
}
}  // namespace detail

}  // namespace AscendC

// Older CANN kernels name the Matmul through namespace matmul (`using namespace matmul;`).
namespace matmul {
using namespace AscendC;
}

// Binds Matmul objects (each with its tiling, or alone for a later Init) to the kernel's pipe.
#define REGIST_MATMUL_OBJ(tpipe, workspace, ...)            \
  do {                                                      \
    (void)(workspace);                                      \
    ::AscendC::detail::regist_matmul((tpipe), __VA_ARGS__); \
  } while (0)
