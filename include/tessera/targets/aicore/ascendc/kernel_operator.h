// Ascend C for Tessera: the public kernel API (namespace AscendC) of Huawei's Ascend C, on the
// simulated AI Core of tessera/targets/aicore/api/core.h, so that a kernel written for Ascend
// C's CPU-debug mode builds unchanged. Queues (TQue) insert the flags between the producing
// and the consuming pipe at EnQue/DeQue and FreeTensor/AllocTensor, which is the automatic
// synchronisation spec 003 "Pipes" describes; misuse of queues, buffers or units is a
// DeviceFault. What is modeled and what is not: docs/targets/aicore.md.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/targets/aicore/api/core.h"

// CPU-debug mode, except in kernel sources that ascendc_library builds for the kernel-launch
// path (their `#ifndef ASCENDC_CPU_DEBUG` launch wrappers are part of that build).
#if !defined(ASCENDC_CPU_DEBUG) && !defined(TESSERA_ASCENDC_KERNEL_LAUNCH)
#define ASCENDC_CPU_DEBUG 1
#endif
#define __aicore__
#define __global__
#define __gm__
#define __ubuf__
#ifndef GM_ADDR
#define GM_ADDR uint8_t*
#endif
// Kernel-type declarations and unit guards of mixed kernels: every kernel runs on the whole
// simulated core, so both units are present.
#define KERNEL_TASK_TYPE_DEFAULT(type)
#define KERNEL_TASK_TYPE(key, type)
#ifndef ASCEND_IS_AIV
#define ASCEND_IS_AIV true
#define ASCEND_IS_AIC true
#define ASCEND_IS_NOT_AIV false
#define ASCEND_IS_NOT_AIC false
#endif

// Ascend C's 16-bit float.
using half = _Float16;

// The pipes and event ids of the AI Core's intrinsics (spec 003 "Pipes").
enum pipe_t : std::uint8_t {
  PIPE_S = 0,
  PIPE_V,
  PIPE_M,
  PIPE_MTE1,
  PIPE_MTE2,
  PIPE_MTE3,
  PIPE_ALL
};
enum event_t : std::uint8_t {
  EVENT_ID0 = 0,
  EVENT_ID1,
  EVENT_ID2,
  EVENT_ID3,
  EVENT_ID4,
  EVENT_ID5,
  EVENT_ID6,
  EVENT_ID7
};

namespace AscendC {

namespace detail {
using tessera::aicore::Buf;
using tessera::aicore::Core;
using tessera::aicore::Pipe;
using tessera::aicore::Ref;
using tessera::aicore::VecOperand;
using tessera::aicore::VecShape;
inline Core& core() {
  return tessera::aicore::current_core();
}
inline Pipe to_pipe(pipe_t p) {
  return static_cast<Pipe>(p);
}
}  // namespace detail

enum class TPosition : std::uint8_t {
  GM,
  A1,
  A2,
  B1,
  B2,
  C1,
  C2,
  CO1,
  CO2,
  VECIN,
  VECOUT,
  VECCALC,
  LCM = VECCALC,
  SPM,
  SHM = SPM,
  TSCM,
  MAX,
};
using QuePosition = TPosition;

enum class HardEvent : std::uint8_t {
  MTE2_MTE1,
  MTE1_MTE2,
  MTE1_M,
  M_MTE1,
  MTE2_V,
  V_MTE2,
  MTE3_V,
  V_MTE3,
  M_V,
  V_M,
  V_V,
  MTE3_MTE1,
  MTE1_MTE3,
  MTE1_V,
  MTE2_M,
  M_MTE2,
  V_MTE1,
  MTE2_MTE3,
  MTE3_MTE2,
  S_V,
  V_S,
  S_MTE2,
  MTE2_S,
  S_MTE3,
  MTE3_S,
  M_S,
  S_M,
  MTE1_S,
  S_MTE1,
  MAX,
};

namespace detail {
// (src, dst) pipes of each HardEvent, in declaration order.
inline constexpr pipe_t kEventPipes[][2] = {
    {PIPE_MTE2, PIPE_MTE1}, {PIPE_MTE1, PIPE_MTE2}, {PIPE_MTE1, PIPE_M},    {PIPE_M, PIPE_MTE1},
    {PIPE_MTE2, PIPE_V},    {PIPE_V, PIPE_MTE2},    {PIPE_MTE3, PIPE_V},    {PIPE_V, PIPE_MTE3},
    {PIPE_M, PIPE_V},       {PIPE_V, PIPE_M},       {PIPE_V, PIPE_V},       {PIPE_MTE3, PIPE_MTE1},
    {PIPE_MTE1, PIPE_MTE3}, {PIPE_MTE1, PIPE_V},    {PIPE_MTE2, PIPE_M},    {PIPE_M, PIPE_MTE2},
    {PIPE_V, PIPE_MTE1},    {PIPE_MTE2, PIPE_MTE3}, {PIPE_MTE3, PIPE_MTE2}, {PIPE_S, PIPE_V},
    {PIPE_V, PIPE_S},       {PIPE_S, PIPE_MTE2},    {PIPE_MTE2, PIPE_S},    {PIPE_S, PIPE_MTE3},
    {PIPE_MTE3, PIPE_S},    {PIPE_M, PIPE_S},       {PIPE_S, PIPE_M},       {PIPE_MTE1, PIPE_S},
    {PIPE_S, PIPE_MTE1},
};

inline Buf buffer_of(TPosition p) {
  switch (p) {
    case TPosition::GM:
      return Buf::GM;
    case TPosition::A1:
    case TPosition::B1:
    case TPosition::C1:
    case TPosition::C2:
    case TPosition::TSCM:
      return Buf::L1;
    case TPosition::A2:
      return Buf::L0A;
    case TPosition::B2:
      return Buf::L0B;
    case TPosition::CO1:
      return Buf::L0C;
    default:
      return Buf::UB;  // VECIN, VECOUT, VECCALC and, on this core, CO2
  }
}
// The pipe that fills a buffer of a position (where EnQue sets its flag if nothing wrote it).
inline Pipe producer_of(TPosition p) {
  switch (p) {
    case TPosition::VECIN:
    case TPosition::A1:
    case TPosition::B1:
    case TPosition::C1:
      return Pipe::MTE2;
    case TPosition::A2:
    case TPosition::B2:
      return Pipe::MTE1;
    case TPosition::CO1:
      return Pipe::M;
    default:
      return Pipe::V;
  }
}
inline std::uint64_t align_of(Buf b) {
  return b == Buf::L0C ? 1024 : (b == Buf::L0A || b == Buf::L0B) ? 512 : 32;
}
}  // namespace detail

// Sizes Ascend C names in its kernel_utils_constants.h (the vendor spellings kept).
inline constexpr std::uint16_t ONE_BLK_SIZE = 32;
inline constexpr std::uint32_t ONE_BLOCK_SIZE = 32;
inline constexpr std::int32_t ONE_REPEAT_BYTE_SIZE = 256;
inline constexpr std::int32_t DEFAULT_BLK_NUM = 8;
inline constexpr std::uint8_t DEFAULT_BLK_STRIDE = 1;
inline constexpr std::uint8_t DEFAULT_REPEAT_STRIDE = 8;
inline constexpr std::int32_t MAX_REPEAT_TIMES = 255;
inline constexpr std::int32_t BLOCK_CUBE = 16;
inline constexpr std::int32_t CUBE_MAX_SIZE = 256;
inline constexpr std::int32_t BYTE_PER_FRACTAL = 512;
inline constexpr std::int32_t FULL_MASK_LEN = 128;
inline constexpr std::int32_t HLAF_MASK_LEN = 64;
inline constexpr std::int32_t DEFAULT_REDUCE_DST_REP_SRIDE = 1;
inline constexpr std::uint8_t B32_BYTE_SIZE = 4;
inline constexpr std::uint8_t B16_BYTE_SIZE = 2;
inline constexpr std::uint8_t B8_BYTE_SIZE = 1;
inline constexpr std::uint8_t B32_DATA_NUM_PER_BLOCK = 8;
inline constexpr std::uint8_t B16_DATA_NUM_PER_BLOCK = 16;
inline constexpr std::int32_t B16_DATA_NUM_PER_REPEAT = 128;
inline constexpr std::int32_t B32_DATA_NUM_PER_REPEAT = 64;

// ---- tensors ----

template <typename T>
class LocalTensor {
 public:
  using PrimType = T;
  LocalTensor() = default;

  std::uint32_t GetSize() const { return size_; }
  void SetSize(std::uint32_t size) { size_ = size; }
  TPosition GetPosition() const { return position_; }
  std::uint64_t GetPhyAddr() const { return ref_.addr; }
  std::uint64_t GetPhyAddr(std::uint32_t offset) const { return ref_.addr + offset * sizeof(T); }
  // A view from element `offset` on, as Ascend C's operator[].
  LocalTensor operator[](std::uint32_t offset) const {
    LocalTensor t = *this;
    t.ref_.addr += static_cast<std::uint64_t>(offset) * sizeof(T);
    t.size_ = offset < size_ ? size_ - offset : 0;
    return t;
  }
  template <typename U>
  LocalTensor<U> ReinterpretCast() const {
    LocalTensor<U> t;
    t.ref_ = ref_;
    t.position_ = position_;
    t.size_ = static_cast<std::uint32_t>(static_cast<std::uint64_t>(size_) * sizeof(T) / sizeof(U));
    return t;
  }
  // Scalar accesses on the S pipe.
  T GetValue(std::uint32_t index) const {
    detail::Ref r = ref_;
    r.addr += static_cast<std::uint64_t>(index) * sizeof(T);
    detail::core().scalar(r, sizeof(T), false, "LocalTensor::GetValue");
    T v;
    std::memcpy(&v, detail::core().data(r.buf, r.addr, sizeof(T), "GetValue"), sizeof(T));
    return v;
  }
  template <typename U>
  void SetValue(std::uint32_t index, U value) const {
    detail::Ref r = ref_;
    r.addr += static_cast<std::uint64_t>(index) * sizeof(T);
    detail::core().scalar(r, sizeof(T), true, "LocalTensor::SetValue");
    const T v = static_cast<T>(value);
    std::memcpy(detail::core().data(r.buf, r.addr, sizeof(T), "SetValue"), &v, sizeof(T));
  }

  // Tessera: the buffer, address and queue slot behind the tensor.
  detail::Ref ref_{};
  std::uint32_t size_ = 0;
  TPosition position_ = TPosition::VECCALC;
};

template <typename T>
class GlobalTensor {
 public:
  using PrimType = T;
  void SetGlobalBuffer(__gm__ T* buffer, std::uint64_t size = 0) {
    address_ = buffer;
    size_ = size;
  }
  __gm__ T* GetPhyAddr() const { return address_; }
  __gm__ T* GetPhyAddr(std::uint64_t offset) const { return address_ + offset; }
  std::uint64_t GetSize() const { return size_; }
  GlobalTensor operator[](std::uint64_t offset) const {
    GlobalTensor t;
    t.address_ = address_ + offset;
    t.size_ = offset < size_ ? size_ - offset : 0;
    return t;
  }
  T GetValue(std::uint64_t index) const {
    const detail::Ref r{detail::Buf::GM, reinterpret_cast<std::uint64_t>(address_ + index)};
    detail::core().scalar(r, sizeof(T), false, "GlobalTensor::GetValue");
    return address_[index];
  }
  template <typename U>
  void SetValue(std::uint64_t index, U value) const {
    const detail::Ref r{detail::Buf::GM, reinterpret_cast<std::uint64_t>(address_ + index)};
    detail::core().scalar(r, sizeof(T), true, "GlobalTensor::SetValue");
    address_[index] = static_cast<T>(value);
  }
  detail::Ref ref() const { return {detail::Buf::GM, reinterpret_cast<std::uint64_t>(address_)}; }

 private:
  __gm__ T* address_ = nullptr;
  std::uint64_t size_ = 0;
};

// ---- pipe, queues, buffers ----

class TPipe;
namespace detail {
inline thread_local TPipe* tls_pipe = nullptr;
}

template <TPosition Src, TPosition Dst, std::int32_t Depth, auto Mask = 0>
class TQueBind {
 public:
  static constexpr TPosition position = Src;
  TQueBind() = default;

  template <typename T>
  LocalTensor<T> AllocTensor() {
    detail::Core& c = detail::core();
    check_init(c, "AllocTensor");
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      const std::size_t at = (next_ + i) % slots_.size();
      if (allocated_[at]) continue;
      allocated_[at] = true;
      next_ = (at + 1) % slots_.size();
      LocalTensor<T> t;
      t.ref_ = {detail::buffer_of(Src), addresses_[at], slots_[at], c.generation(slots_[at])};
      t.size_ = static_cast<std::uint32_t>(length_ / sizeof(T));
      t.position_ = Src;
      return t;
    }
    c.fault_at("AllocTensor",
               fmt::format("all {} buffers of the {} queue are allocated (the number given to "
                           "InitBuffer); FreeTensor one before allocating another",
                           slots_.size(), name()));
  }

  template <typename T>
  bool EnQue(const LocalTensor<T>& tensor) {
    detail::Core& c = detail::core();
    check_init(c, "EnQue");
    const std::size_t at = find(c, tensor.ref_, "EnQue");
    const std::size_t depth = Depth > 0 ? static_cast<std::size_t>(Depth) : slots_.size();
    if (fifo_.size() >= depth)
      c.fault_at("EnQue", fmt::format("the {} queue already holds {} tensors, its depth; DeQue "
                                      "one first or declare a deeper TQue",
                                      name(), fifo_.size()));
    c.hand_over(slots_[at], "EnQue");
    fifo_.push_back(at);
    return true;
  }

  template <typename T>
  LocalTensor<T> DeQue() {
    detail::Core& c = detail::core();
    check_init(c, "DeQue");
    if (fifo_.empty())
      c.fault_at("DeQue",
                 fmt::format("the {} queue is empty; EnQue a tensor before DeQue", name()));
    const std::size_t at = fifo_.front();
    fifo_.pop_front();
    LocalTensor<T> t;
    t.ref_ = {detail::buffer_of(Dst), addresses_[at], slots_[at], c.generation(slots_[at])};
    t.size_ = static_cast<std::uint32_t>(length_ / sizeof(T));
    t.position_ = Dst;
    return t;
  }

  template <typename T>
  void FreeTensor(LocalTensor<T>& tensor) {
    detail::Core& c = detail::core();
    check_init(c, "FreeTensor");
    const std::size_t at = find(c, tensor.ref_, "FreeTensor");
    std::erase(fifo_, at);
    allocated_[at] = false;
    c.retire(slots_[at]);
    c.hand_over(slots_[at], "FreeTensor");
  }

  bool VacantInQue() const {
    return fifo_.size() < (Depth > 0 ? static_cast<std::size_t>(Depth) : slots_.size());
  }
  bool HasTensorInQue() const { return !fifo_.empty(); }
  std::int32_t GetTensorCountInQue() const { return static_cast<std::int32_t>(fifo_.size()); }
  bool HasIdleBuffer() const {
    return std::find(allocated_.begin(), allocated_.end(), false) != allocated_.end();
  }

  // Called by TPipe::InitBuffer.
  // `base`: the address a TBufPool gives it; otherwise the pipe allocates.
  void init(std::uint8_t num, std::uint32_t len, std::uint64_t base = ~std::uint64_t{0}) {
    detail::Core& c = detail::core();
    if (!slots_.empty())
      c.fault_at("InitBuffer", fmt::format("the {} queue is initialised already", name()));
    if (num == 0 || len == 0)
      c.fault_at("InitBuffer", fmt::format("the {} queue needs at least one buffer of at least "
                                           "one byte (num {}, len {})",
                                           name(), num, len));
    const detail::Buf b = detail::buffer_of(Src);
    const std::uint64_t a = detail::align_of(b);
    length_ = len;
    const std::uint64_t padded = (len + a - 1) / a * a;
    const std::string owner = fmt::format("TQue<{}> ({} x {} B)", name(), num, len);
    if (base == ~std::uint64_t{0}) base = c.allocate(b, padded * num, owner);
    for (std::uint8_t i = 0; i < num; ++i) {
      addresses_.push_back(base + i * padded);
      slots_.push_back(c.new_slot(detail::producer_of(Src), owner));
      allocated_.push_back(false);
    }
  }

 private:
  static const char* name() {
    static constexpr const char* names[] = {"GM",     "A1",      "A2",  "B1",   "B2",
                                            "C1",     "C2",      "CO1", "CO2",  "VECIN",
                                            "VECOUT", "VECCALC", "SPM", "TSCM", "MAX"};
    return names[static_cast<int>(Src)];
  }
  void check_init(detail::Core& c, const char* what) const {
    if (slots_.empty())
      c.fault_at(what, fmt::format("the {} queue has no buffers; call pipe.InitBuffer(queue, "
                                   "num, bytes) first",
                                   name()));
  }
  std::size_t find(detail::Core& c, const detail::Ref& ref, const char* what) const {
    for (std::size_t i = 0; i < slots_.size(); ++i)
      if (slots_[i] == ref.slot && addresses_[i] == ref.addr) {
        if (!allocated_[i] || c.generation(slots_[i]) != ref.generation)
          c.fault_at(what, fmt::format("the tensor at {} {:#x} of the {} queue is not allocated "
                                       "(freed already); AllocTensor before use",
                                       tessera::aicore::buf_name(ref.buf), ref.addr, name()));
        return i;
      }
    c.fault_at(what, fmt::format("the tensor at {} {:#x} was not allocated from the {} queue; "
                                 "pass a tensor from this queue's AllocTensor/DeQue",
                                 tessera::aicore::buf_name(ref.buf), ref.addr, name()));
  }

  std::vector<std::uint64_t> addresses_;
  std::vector<std::uint32_t> slots_;
  std::vector<bool> allocated_;
  std::deque<std::size_t> fifo_;
  std::size_t next_ = 0;
  std::uint64_t length_ = 0;
};

template <TPosition Pos, std::int32_t Depth, auto Mask = 0>
class TQue : public TQueBind<Pos, Pos, Depth, Mask> {};

template <TPosition Pos = TPosition::VECCALC>
class TBuf {
 public:
  template <typename T>
  LocalTensor<T> Get() const {
    return Get<T>(static_cast<std::uint32_t>(length_ / sizeof(T)));
  }
  template <typename T>
  LocalTensor<T> Get(std::uint32_t len) const {
    if (length_ == 0)
      detail::core().fault_at("TBuf::Get",
                              "the TBuf has no buffer; call pipe.InitBuffer(buf, "
                              "bytes) first");
    if (static_cast<std::uint64_t>(len) * sizeof(T) > length_)
      detail::core().fault_at("TBuf::Get", fmt::format("{} elements of {} B exceed the TBuf's {} B",
                                                       len, sizeof(T), length_));
    LocalTensor<T> t;
    t.ref_ = {detail::buffer_of(Pos), address_, 0, 0};
    t.size_ = len;
    t.position_ = Pos;
    return t;
  }
  void init(std::uint32_t len, std::uint64_t base = ~std::uint64_t{0}) {
    detail::Core& c = detail::core();
    if (length_ != 0) c.fault_at("InitBuffer", "the TBuf is initialised already");
    if (len == 0) c.fault_at("InitBuffer", "a TBuf of 0 bytes; give it at least one byte");
    const detail::Buf b = detail::buffer_of(Pos);
    const std::uint64_t a = detail::align_of(b);
    address_ = base != ~std::uint64_t{0}
                   ? base
                   : c.allocate(b, (len + a - 1) / a * a, fmt::format("TBuf ({} B)", len));
    length_ = len;
  }

 private:
  std::uint64_t address_ = 0;
  std::uint64_t length_ = 0;
};

// A region of one buffer that queues and TBufs are carved from, and that Reset hands back for
// the next stage of a kernel to reuse (Ascend C "TBufPool"). Reset drains the core first, so the
// next stage's buffers never race with the last stage's instructions.
template <TPosition Pos, std::uint32_t BufIDSize = 4>
class TBufPool {
 public:
  template <TPosition S, TPosition D, std::int32_t Depth, auto M>
  bool InitBuffer(TQueBind<S, D, Depth, M>& que, std::uint8_t num, std::uint32_t len) {
    const std::uint64_t a = detail::align_of(detail::buffer_of(S));
    que.init(num, len, take(detail::buffer_of(S), (len + a - 1) / a * a * num, "InitBuffer"));
    return true;
  }
  template <TPosition P>
  bool InitBuffer(TBuf<P>& buf, std::uint32_t len) {
    const std::uint64_t a = detail::align_of(detail::buffer_of(P));
    buf.init(len, take(detail::buffer_of(P), (len + a - 1) / a * a, "InitBuffer"));
    return true;
  }
  template <class T>
  bool InitBufPool(T& pool, std::uint32_t len) {
    pool.init(len, take(detail::buffer_of(T::position), len, "InitBufPool"));
    return true;
  }
  void Reset() {
    detail::core().barrier_all();
    used_ = 0;
  }

  static constexpr TPosition position = Pos;
  // Called by TPipe::InitBufPool (or an enclosing pool with `base`).
  void init(std::uint32_t len, std::uint64_t base = ~std::uint64_t{0}) {
    detail::Core& c = detail::core();
    if (length_ != 0) c.fault_at("InitBufPool", "the TBufPool is initialised already");
    if (len == 0) c.fault_at("InitBufPool", "a TBufPool of 0 bytes; give it at least one byte");
    const detail::Buf b = detail::buffer_of(Pos);
    const std::uint64_t a = detail::align_of(b);
    length_ = (len + a - 1) / a * a;
    base_ = base != ~std::uint64_t{0} ? base
                                      : c.allocate(b, length_, fmt::format("TBufPool ({} B)", len));
  }

 private:
  std::uint64_t take(detail::Buf b, std::uint64_t bytes, const char* what) {
    detail::Core& c = detail::core();
    if (length_ == 0)
      c.fault_at(what, "the TBufPool has no memory; call pipe.InitBufPool(pool, bytes) first");
    if (b != detail::buffer_of(Pos))
      c.fault_at(what, fmt::format("the TBufPool lies in {}, the buffer asked for in {}; give it "
                                   "a pool of its own position",
                                   tessera::aicore::buf_name(detail::buffer_of(Pos)),
                                   tessera::aicore::buf_name(b)));
    if (used_ + bytes > length_)
      c.fault_at(what, fmt::format("{} B do not fit the TBufPool: {} of its {} B are in use; "
                                   "Reset the pool or give it more",
                                   bytes, used_, length_));
    const std::uint64_t at = base_ + used_;
    used_ += bytes;
    return at;
  }

  std::uint64_t base_ = 0, length_ = 0, used_ = 0;
};

class TPipe {
 public:
  TPipe() { detail::tls_pipe = this; }
  ~TPipe() {
    if (detail::tls_pipe == this) detail::tls_pipe = nullptr;
  }
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;

  template <TPosition S, TPosition D, std::int32_t Depth, auto M>
  bool InitBuffer(TQueBind<S, D, Depth, M>& que, std::uint8_t num, std::uint32_t len) {
    que.init(num, len);
    return true;
  }
  template <TPosition P>
  bool InitBuffer(TBuf<P>& buf, std::uint32_t len) {
    buf.init(len);
    return true;
  }
  template <class T>
  bool InitBufPool(T& pool, std::uint32_t len) {
    pool.init(len);
    return true;
  }
  void Init() {}
  // Ends the pipe's use of the buffers: every pipe drains.
  void Destroy() { detail::core().barrier_all(); }
  void Reset() {}
  // Event ids for SetFlag/WaitFlag pairs, handed out per HardEvent.
  std::int32_t AllocEventID(HardEvent e) {
    auto& used = events_[static_cast<std::size_t>(e)];
    for (std::int32_t i = 0; i < 8; ++i)
      if (!(used >> i & 1u)) {
        used |= 1u << i;
        return i;
      }
    detail::core().fault_at("AllocEventID",
                            "all 8 event ids of this pipe pair are in use; "
                            "ReleaseEventID one first");
  }
  void ReleaseEventID(HardEvent e, std::int32_t id) {
    events_[static_cast<std::size_t>(e)] &= ~(1u << id);
  }
  std::int32_t FetchEventID(HardEvent e) const {
    const auto used = events_[static_cast<std::size_t>(e)];
    for (std::int32_t i = 0; i < 8; ++i)
      if (!(used >> i & 1u)) return i;
    return 0;
  }

 private:
  std::array<std::uint32_t, static_cast<std::size_t>(HardEvent::MAX)> events_{};
};

// The event ids of SetFlag/WaitFlag as AllocEventID/FetchEventID hand them out.
using TEventID = std::int8_t;

inline TPipe* GetTPipePtr() {
  return detail::tls_pipe;
}

// ---- blocks, synchronisation ----

inline std::int64_t GetBlockIdx() {
  return detail::core().block_idx;
}
inline std::int64_t GetBlockNum() {
  return detail::core().block_num;
}

template <HardEvent E>
inline void SetFlag(std::int32_t event_id) {
  detail::core().set_flag(detail::to_pipe(detail::kEventPipes[static_cast<int>(E)][0]),
                          detail::to_pipe(detail::kEventPipes[static_cast<int>(E)][1]),
                          static_cast<std::uint32_t>(event_id));
}
template <HardEvent E>
inline void WaitFlag(std::int32_t event_id) {
  detail::core().wait_flag(detail::to_pipe(detail::kEventPipes[static_cast<int>(E)][0]),
                           detail::to_pipe(detail::kEventPipes[static_cast<int>(E)][1]),
                           static_cast<std::uint32_t>(event_id));
}
template <pipe_t P>
inline void PipeBarrier() {
  if constexpr (P == PIPE_ALL)
    detail::core().barrier_all();
  else
    detail::core().pipe_barrier(detail::to_pipe(P));
}

// A flag pair between two pipes (Ascend C's TQueSync<src, dst>).
template <pipe_t Src, pipe_t Dst>
class TQueSync {
 public:
  void SetFlag(std::int32_t event_id) {
    detail::core().set_flag(detail::to_pipe(Src), detail::to_pipe(Dst),
                            static_cast<std::uint32_t>(event_id));
  }
  void WaitFlag(std::int32_t event_id) {
    detail::core().wait_flag(detail::to_pipe(Src), detail::to_pipe(Dst),
                             static_cast<std::uint32_t>(event_id));
  }
};

// The vector core of a mixed launch: this model runs one vector and one cube unit per core.
inline std::int64_t GetSubBlockIdx() {
  return 0;
}
inline std::int64_t GetSubBlockNum() {
  return 1;
}
inline std::int64_t GetTaskRation() {
  return 1;
}

// Kernel-side printing (Ascend C's printf / PRINTF in CPU-debug mode), prefixed with the block.
template <typename... Args>
void printf(const char* format, Args... args) {
  if (tessera::aicore::in_kernel())
    std::printf("[block %lld] ", static_cast<long long>(detail::core().block_idx));
  if constexpr (sizeof...(Args) == 0)
    std::fputs(format, stdout);
  else
    std::printf(format, args...);
}
#define PRINTF AscendC::printf

// Ascend C's kernel ASSERT: a false condition traps the kernel, here a DeviceFault naming the
// core, block, the condition and where it is written.
namespace detail {
inline void kernel_assert(bool ok, const char* condition, const char* file, int line) {
  if (!ok)
    core().fault_at("ASSERT",
                    fmt::format("'{}' is false ({}:{}); the kernel traps", condition, file, line));
}
}  // namespace detail
#ifndef ASSERT
#define ASSERT(condition) \
  ::AscendC::detail::kernel_assert(static_cast<bool>(condition), #condition, __FILE__, __LINE__)
#endif

// Prints `count` elements of a tensor with a description (a scalar read of each, on S).
template <typename T>
void DumpTensor(const LocalTensor<T>& tensor, std::uint32_t desc, std::uint32_t count) {
  std::printf("[block %lld] DumpTensor %u:", static_cast<long long>(detail::core().block_idx),
              desc);
  for (std::uint32_t i = 0; i < count; ++i)
    std::printf(" %g", static_cast<double>(static_cast<float>(tensor.GetValue(i))));
  std::printf("\n");
}

// ---- data movement ----

struct DataCopyParams {
  std::uint16_t blockCount = 1;
  std::uint16_t blockLen = 0;  // in 32-byte blocks (in fractals for BLOCK_MODE_MATRIX)
  std::uint16_t srcStride = 0;
  std::uint16_t dstStride = 0;
};
enum class BlockMode : std::uint8_t { BLOCK_MODE_NORMAL, BLOCK_MODE_MATRIX, BLOCK_MODE_VECTOR };
struct DataCopyEnhancedParams {
  BlockMode blockMode = BlockMode::BLOCK_MODE_NORMAL;
};

namespace detail {
template <typename T>
Ref ref_of(const LocalTensor<T>& t) {
  return t.ref_;
}
template <typename T>
Ref ref_of(const GlobalTensor<T>& t) {
  return t.ref();
}
template <typename D, typename S>
void copy_count(const D& dst, const S& src, std::uint64_t bytes) {
  if (bytes % tessera::aicore::kBlockBytes != 0)
    core().fault_at("DataCopy",
                    fmt::format("{} bytes is not a whole number of 32-byte blocks; copy a "
                                "multiple of 32 bytes (pad the tile)",
                                bytes));
  core().copy(ref_of(dst), ref_of(src), {1, bytes, 0, 0}, "DataCopy");
}
template <typename D, typename S>
void copy_params(const D& dst, const S& src, const DataCopyParams& p) {
  const std::uint64_t b = tessera::aicore::kBlockBytes;
  core().copy(ref_of(dst), ref_of(src),
              {p.blockCount, p.blockLen * b, p.srcStride * b, p.dstStride * b}, "DataCopy");
}
inline void f32_to_f16(std::byte* dst, const std::byte* src, std::uint64_t src_bytes) {
  for (std::uint64_t i = 0; i < src_bytes / 4; ++i) {
    float f;
    std::memcpy(&f, src + i * 4, 4);
    const half h = static_cast<half>(f);
    std::memcpy(dst + i * 2, &h, 2);
  }
}
}  // namespace detail

template <typename T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, std::uint32_t calCount) {
  detail::copy_count(dst, src, std::uint64_t{calCount} * sizeof(T));
}
template <typename T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, std::uint32_t calCount) {
  detail::copy_count(dst, src, std::uint64_t{calCount} * sizeof(T));
}
template <typename T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, std::uint32_t calCount) {
  detail::copy_count(dst, src, std::uint64_t{calCount} * sizeof(T));
}
template <typename T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p) {
  detail::copy_params(dst, src, p);
}
template <typename T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
  detail::copy_params(dst, src, p);
}
template <typename T>
void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p) {
  detail::copy_params(dst, src, p);
}
// CO1 (L0C) -> CO2 (UB) on this core's V pipe; BLOCK_MODE_MATRIX counts 16 x 16 fractals of the
// source; a half destination converts the f32 results (what Fixpipe does on later cores).
template <typename D, typename S>
void DataCopy(const LocalTensor<D>& dst, const LocalTensor<S>& src, const DataCopyParams& p,
              const DataCopyEnhancedParams& e) {
  const std::uint64_t unit = e.blockMode == BlockMode::BLOCK_MODE_MATRIX   ? 256 * sizeof(S)
                             : e.blockMode == BlockMode::BLOCK_MODE_VECTOR ? 16 * sizeof(S)
                                                                           : 32;
  const std::uint64_t ratio_num = sizeof(D), ratio_den = sizeof(S);
  tessera::aicore::Core::BurstConvert convert = nullptr;
  if constexpr (std::is_same_v<D, half> && std::is_same_v<S, float>)
    convert = detail::f32_to_f16;
  else if constexpr (!std::is_same_v<D, S>)
    detail::core().fault_at("DataCopy", "CO1 -> CO2 converts only float to half");
  detail::core().copy(dst.ref_, src.ref_,
                      {p.blockCount, p.blockLen * unit, p.srcStride * unit,
                       p.dstStride * unit * ratio_num / ratio_den},
                      "DataCopy CO1->CO2", p.blockLen * unit * ratio_num / ratio_den, convert);
}

// DataCopyPad: bursts of any byte length; GM -> UB pads each burst to whole 32-byte blocks,
// UB -> GM writes only the burst's bytes. Gaps: bytes on the GM side, 32-byte blocks on UB.
struct DataCopyExtParams {
  // Five values or none, as Ascend C's constructors take them (so four braced values name the
  // older DataCopyParams).
  DataCopyExtParams() = default;
  DataCopyExtParams(const std::uint16_t count, const std::uint32_t len,
                    const std::uint32_t srcStrideIn, const std::uint32_t dstStrideIn,
                    const std::uint32_t rsvIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn),
        rsv(rsvIn) {}
  std::uint16_t blockCount = 1;
  std::uint32_t blockLen = 0;  // bytes
  std::uint32_t srcStride = 0;
  std::uint32_t dstStride = 0;
  std::uint32_t rsv = 0;
};
template <typename T>
struct DataCopyPadExtParams {
  bool isPad = false;
  std::uint8_t leftPadding = 0;
  std::uint8_t rightPadding = 0;
  T paddingValue = T(0);
};

template <typename T>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                 const DataCopyPadExtParams<T>& pad) {
  const std::uint64_t b = tessera::aicore::kBlockBytes;
  const std::uint64_t padded = (p.blockLen + b - 1) / b * b;
  detail::core().copy(
      dst.ref_, src.ref(),
      {p.blockCount, p.blockLen, p.srcStride, p.dstStride * b + padded - p.blockLen},
      "DataCopyPad");
  if (pad.isPad && padded > p.blockLen) {
    for (std::uint16_t i = 0; i < p.blockCount; ++i) {
      auto* tail = reinterpret_cast<T*>(detail::core().data(
          dst.ref_.buf, dst.ref_.addr + i * (padded + p.dstStride * b) + p.blockLen,
          padded - p.blockLen, "DataCopyPad"));
      for (std::uint64_t k = 0; k < (padded - p.blockLen) / sizeof(T); ++k)
        tail[k] = pad.paddingValue;
    }
  }
}
template <typename T>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                 const DataCopyExtParams& p) {
  const std::uint64_t b = tessera::aicore::kBlockBytes;
  const std::uint64_t padded = (p.blockLen + b - 1) / b * b;
  detail::core().copy(
      dst.ref(), src.ref_,
      {p.blockCount, p.blockLen, p.srcStride * b + padded - p.blockLen, p.dstStride},
      "DataCopyPad");
}

// The older DataCopyPad forms: DataCopyParams with blockLen in bytes (GM strides in bytes, UB
// strides in 32-byte blocks, as DataCopyExtParams) and DataCopyPadParams, whose paddingValue
// holds the bits of the padding element (Ascend C API reference, "DataCopyPad").
struct DataCopyPadParams {
  DataCopyPadParams() = default;
  DataCopyPadParams(const bool isPadIn, const std::uint8_t leftPaddingIn,
                    const std::uint8_t rightPaddingIn, const std::uint64_t paddingValueIn)
      : isPad(isPadIn),
        leftPadding(leftPaddingIn),
        rightPadding(rightPaddingIn),
        paddingValue(paddingValueIn) {}
  bool isPad = false;
  std::uint8_t leftPadding = 0;
  std::uint8_t rightPadding = 0;
  std::uint64_t paddingValue = 0;
};
template <typename T>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                 const DataCopyParams& dataCopyParams, const DataCopyPadParams& padParams) {
  DataCopyPadExtParams<T> pad;
  pad.isPad = padParams.isPad;
  pad.leftPadding = padParams.leftPadding;
  pad.rightPadding = padParams.rightPadding;
  std::memcpy(&pad.paddingValue, &padParams.paddingValue, sizeof(T));
  DataCopyPad(dst, src,
              DataCopyExtParams{dataCopyParams.blockCount, dataCopyParams.blockLen,
                                dataCopyParams.srcStride, dataCopyParams.dstStride, 0},
              pad);
}
template <typename T>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                 const DataCopyParams& dataCopyParams) {
  DataCopyPad(dst, src,
              DataCopyExtParams{dataCopyParams.blockCount, dataCopyParams.blockLen,
                                dataCopyParams.srcStride, dataCopyParams.dstStride, 0});
}

// ---- vector instructions ----

struct BinaryRepeatParams {
  std::uint8_t dstBlkStride = 1, src0BlkStride = 1, src1BlkStride = 1;
  std::uint8_t dstRepStride = 8, src0RepStride = 8, src1RepStride = 8;
};
struct UnaryRepeatParams {
  std::uint16_t dstBlkStride = 1, srcBlkStride = 1;
  std::uint8_t dstRepStride = 8, srcRepStride = 8;
};

namespace detail {
// Whether every operand takes the default strides (blocks 1 apart, repeats 8 blocks apart).
inline bool dense(const BinaryRepeatParams& p) {
  return p.dstBlkStride == 1 && p.src0BlkStride == 1 && p.src1BlkStride == 1 &&
         p.dstRepStride == 8 && p.src0RepStride == 8 && p.src1RepStride == 8;
}
inline bool dense(const UnaryRepeatParams& p) {
  return p.dstBlkStride == 1 && p.srcBlkStride == 1 && p.dstRepStride == 8 && p.srcRepStride == 8;
}
}  // namespace detail

namespace detail {

template <typename T>
VecOperand operand(const LocalTensor<T>& t, bool write, std::uint32_t blk = 1,
                   std::uint32_t rep = 8) {
  return {t.ref_, static_cast<unsigned>(sizeof(T)), blk, rep, write};
}
inline VecShape count_shape(std::int64_t count, const char* what) {
  if (count <= 0) core().fault_at(what, fmt::format("calCount {} must be positive", count));
  VecShape s;
  s.count = static_cast<std::uint64_t>(count);
  return s;
}
// Continuous mask: the first `mask` lanes of each repeat.
inline VecShape mask_shape(std::uint64_t mask, std::uint32_t repeat, unsigned widest,
                           const char* what) {
  const std::uint64_t lanes = tessera::aicore::kRepeatBytes / widest;
  if (mask == 0 || mask > lanes)
    core().fault_at(what, fmt::format("mask {} is outside 1..{} lanes of {}-byte elements", mask,
                                      lanes, widest));
  VecShape s;
  s.repeat = repeat;
  s.mask = {
      mask >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << mask) - 1,
      mask > 64 ? (mask >= 128 ? ~std::uint64_t{0} : (std::uint64_t{1} << (mask - 64)) - 1) : 0};
  return s;
}
inline VecShape bits_shape(const std::uint64_t mask[2], std::uint32_t repeat) {
  VecShape s;
  s.repeat = repeat;
  s.mask = {mask[0], mask[1]};
  return s;
}

// The shape an instruction takes from the Vector unit's mask register (Core::vector_mask): in
// normal mode its lanes for `repeat` repeats; in counter mode (SetMaskCount) its count of
// elements, which is the count form when every stride is the default one (`dense`).
inline VecShape register_shape(std::uint32_t repeat, const char* what, bool dense) {
  Core& c = core();
  VecShape s;
  if (!c.mask_counter) {
    s.repeat = repeat;
    s.mask = c.vector_mask;
    return s;
  }
  if (c.vector_mask[0] == 0)
    c.fault_at(what,
               "counter mode (SetMaskCount) with a count of 0; SetVectorMask the number of "
               "elements to process");
  if (!dense)
    tessera::throw_user_error(
        "{}: counter mode (SetMaskCount) with block or repeat strides other than 1 and 8 is not "
        "modeled by Tessera (the reductions WholeReduce*, BlockReduce* and PairReduceSum take "
        "it); use the default strides or normal mode with a mask",
        what);
  s.count = c.vector_mask[0];
  return s;
}
// A mask form's shape: with isSetMask the instruction first loads its own mask into the
// register (a continuous mask of `mask` lanes, or in counter mode the count `mask`); without,
// it uses what SetVectorMask left there (its `mask` is MASK_PLACEHOLDER).
template <bool isSetMask>
VecShape lane_shape(std::uint64_t mask, std::uint32_t repeat, unsigned widest, const char* what,
                    bool dense) {
  if constexpr (isSetMask) {
    Core& c = core();
    if (c.mask_counter)
      c.vector_mask = {mask, 0};
    else
      c.vector_mask = mask_shape(mask, repeat, widest, what).mask;
  }
  return register_shape(repeat, what, dense);
}
template <bool isSetMask>
VecShape lane_bits(const std::uint64_t mask[2], std::uint32_t repeat, const char* what,
                   bool dense) {
  if constexpr (isSetMask) core().vector_mask = {mask[0], mask[1]};
  return register_shape(repeat, what, dense);
}

template <typename T>
T* host(const LocalTensor<T>& t, std::uint64_t elements, const char* what) {
  return reinterpret_cast<T*>(core().data(t.ref_.buf, t.ref_.addr, elements * sizeof(T), what));
}

// dst[i] = f(src[i]...) over the lanes of `shape`: checks and costs through Core::vector,
// then computes the lanes on host data.
template <typename E>
E load(const std::byte* p) {
  E v;
  std::memcpy(&v, p, sizeof(E));
  return v;
}

template <typename D, typename F, typename... S>
void map(const char* what, const VecShape& shape, F f, std::array<std::uint32_t, 2> dst_strides,
         const LocalTensor<D>& dst,
         const std::pair<const LocalTensor<S>*, std::array<std::uint32_t, 2>>&... src) {
  std::array<VecOperand, 1 + sizeof...(S)> ops = {
      operand(dst, true, dst_strides[0], dst_strides[1]),
      operand(*src.first, false, src.second[0], src.second[1])...};
  Core& c = core();
  c.vector(what, ops, shape);
  if (shape.count) {
    D* d = host(dst, shape.count, what);
    [&](const S*... p) {
      for (std::uint64_t i = 0; i < shape.count; ++i) d[i] = f(p[i]...);
    }(host(*src.first, shape.count, what)...);
    return;
  }
  unsigned widest = 0;
  for (const auto& o : ops) widest = std::max(widest, o.elem_bytes);
  const std::uint64_t lanes = tessera::aicore::kRepeatBytes / widest;
  std::byte* ub = c.data(Buf::UB, 0, c.memory(Buf::UB).capacity(), what);
  const auto lane = [&]<std::size_t... I>(std::uint64_t r, std::uint64_t l,
                                          std::index_sequence<I...>) {
    const D out = f(load<S>(ub + tessera::aicore::lane_address(ops[I + 1], r, l))...);
    std::memcpy(ub + tessera::aicore::lane_address(ops[0], r, l), &out, sizeof(D));
  };
  for (std::uint64_t r = 0; r < shape.repeat; ++r)
    for (std::uint64_t l = 0; l < lanes; ++l)
      if ((shape.mask[l / 64] >> (l % 64)) & 1) lane(r, l, std::index_sequence_for<S...>{});
}

template <typename T>
std::pair<const LocalTensor<T>*, std::array<std::uint32_t, 2>> in(const LocalTensor<T>& t,
                                                                  std::uint32_t blk = 1,
                                                                  std::uint32_t rep = 8) {
  return {&t, {blk, rep}};
}

template <typename T>
T relu(T x) {
  return x > T(0) ? x : T(0);
}

}  // namespace detail

// Binary: count form, continuous-mask form and bit-mask form. DST_IN(blk, rep) adds dst as a
// third input for the ops that also read it, or nothing.
#define TESSERA_ASCENDC_BINARY_FORMS(NAME, LAMBDA, DST_IN)                                         \
  template <typename T, bool isSetMask = true>                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,     \
            const std::int32_t& calCount) {                                                        \
    detail::map(#NAME, detail::count_shape(calCount, #NAME), LAMBDA, {1, 8}, dst,                  \
                detail::in(src0), detail::in(src1) DST_IN(1, 8));                                  \
  }                                                                                                \
  template <typename T, bool isSetMask = true>                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,     \
            std::uint64_t mask, const std::uint8_t repeatTimes, const BinaryRepeatParams& p) {     \
    detail::map(                                                                                   \
        #NAME,                                                                                     \
        detail::lane_shape<isSetMask>(mask, repeatTimes, sizeof(T), #NAME, detail::dense(p)),      \
        LAMBDA, {p.dstBlkStride, p.dstRepStride}, dst,                                             \
        detail::in(src0, p.src0BlkStride, p.src0RepStride),                                        \
        detail::in(src1, p.src1BlkStride, p.src1RepStride) DST_IN(p.dstBlkStride, p.dstRepStride));\
  }                                                                                                \
  template <typename T, bool isSetMask = true>                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,     \
            const std::uint64_t mask[2], const std::uint8_t repeatTimes,                           \
            const BinaryRepeatParams& p) {                                                         \
    detail::map(                                                                                   \
        #NAME, detail::lane_bits<isSetMask>(mask, repeatTimes, #NAME, detail::dense(p)), LAMBDA,   \
        {p.dstBlkStride, p.dstRepStride}, dst, detail::in(src0, p.src0BlkStride, p.src0RepStride), \
        detail::in(src1, p.src1BlkStride, p.src1RepStride) DST_IN(p.dstBlkStride, p.dstRepStride));\
  }
#define TESSERA_ASCENDC_NO_DST_IN(blk, rep)
#define TESSERA_ASCENDC_DST_IN(blk, rep) , detail::in(dst, blk, rep)
#define TESSERA_ASCENDC_BINARY(NAME, EXPR) \
  TESSERA_ASCENDC_BINARY_FORMS(NAME, ([](T a, T b) -> T { return EXPR; }), TESSERA_ASCENDC_NO_DST_IN)

TESSERA_ASCENDC_BINARY(Add, static_cast<T>(a + b))
TESSERA_ASCENDC_BINARY(Sub, static_cast<T>(a - b))
TESSERA_ASCENDC_BINARY(Mul, static_cast<T>(a* b))
TESSERA_ASCENDC_BINARY(Div, static_cast<T>(a / b))
TESSERA_ASCENDC_BINARY(Max, a > b ? a : b)
TESSERA_ASCENDC_BINARY(Min, a < b ? a : b)
TESSERA_ASCENDC_BINARY(AddRelu, detail::relu(static_cast<T>(a + b)))
TESSERA_ASCENDC_BINARY(SubRelu, detail::relu(static_cast<T>(a - b)))
// Bitwise, on the 16-bit integer types Ascend C gives them.
TESSERA_ASCENDC_BINARY(And, static_cast<T>(a& b))
TESSERA_ASCENDC_BINARY(Or, static_cast<T>(a | b))
#undef TESSERA_ASCENDC_BINARY

// Binary ops that also read dst: MulAddDst (dst = src0 * src1 + dst) and FusedMulAdd
// (dst = src0 * dst + src1), in the three forms.
#define TESSERA_ASCENDC_DST_BINARY(NAME, EXPR) \
  TESSERA_ASCENDC_BINARY_FORMS(NAME, ([](T a, T b, T d) -> T { return EXPR; }), TESSERA_ASCENDC_DST_IN)
TESSERA_ASCENDC_DST_BINARY(MulAddDst, static_cast<T>(a* b + d))
TESSERA_ASCENDC_DST_BINARY(FusedMulAdd, static_cast<T>(a* d + b))
#undef TESSERA_ASCENDC_DST_BINARY
#undef TESSERA_ASCENDC_DST_IN
#undef TESSERA_ASCENDC_NO_DST_IN
#undef TESSERA_ASCENDC_BINARY_FORMS

// Unary: count form, continuous-mask form and bit-mask form.
#define TESSERA_ASCENDC_UNARY(NAME, EXPR)                                                         \
  template <typename T, bool isSetMask = true>                                                    \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const std::int32_t& calCount) { \
    detail::map(                                                                                  \
        #NAME, detail::count_shape(calCount, #NAME), [](T x) -> T { return EXPR; }, {1, 8}, dst,  \
        detail::in(src));                                                                         \
  }                                                                                               \
  template <typename T, bool isSetMask = true>                                                    \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, std::uint64_t mask,             \
            const std::uint8_t repeatTimes, const UnaryRepeatParams& p) {                         \
    detail::map(                                                                                  \
        #NAME,                                                                                    \
        detail::lane_shape<isSetMask>(mask, repeatTimes, sizeof(T), #NAME, detail::dense(p)),     \
        [](T x) -> T { return EXPR; }, {p.dstBlkStride, p.dstRepStride}, dst,                     \
        detail::in(src, p.srcBlkStride, p.srcRepStride));                                         \
  }                                                                                               \
  template <typename T, bool isSetMask = true>                                                    \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const std::uint64_t mask[2],    \
            const std::uint8_t repeatTimes, const UnaryRepeatParams& p) {                         \
    detail::map(                                                                                  \
        #NAME, detail::lane_bits<isSetMask>(mask, repeatTimes, #NAME, detail::dense(p)),          \
        [](T x) -> T { return EXPR; }, {p.dstBlkStride, p.dstRepStride}, dst,                     \
        detail::in(src, p.srcBlkStride, p.srcRepStride));                                         \
  }

TESSERA_ASCENDC_UNARY(Exp, static_cast<T>(std::exp(static_cast<float>(x))))
TESSERA_ASCENDC_UNARY(Ln, static_cast<T>(std::log(static_cast<float>(x))))
TESSERA_ASCENDC_UNARY(Abs, static_cast<T>(std::fabs(static_cast<float>(x))))
TESSERA_ASCENDC_UNARY(Sqrt, static_cast<T>(std::sqrt(static_cast<float>(x))))
TESSERA_ASCENDC_UNARY(Rsqrt, static_cast<T>(1.0f / std::sqrt(static_cast<float>(x))))
TESSERA_ASCENDC_UNARY(Reciprocal, static_cast<T>(1.0f / static_cast<float>(x)))
TESSERA_ASCENDC_UNARY(Relu, detail::relu(x))
TESSERA_ASCENDC_UNARY(Not, static_cast<T>(~x))
#undef TESSERA_ASCENDC_UNARY

// Vector-scalar: count form, continuous-mask form and bit-mask form.
#define TESSERA_ASCENDC_SCALAR(NAME, EXPR)                                                        \
  template <typename T, bool isSetMask = true>                                                    \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                                 \
            const std::type_identity_t<T>& scalarValue, const std::int32_t& calCount) {           \
    const T s = scalarValue;                                                                      \
    detail::map(                                                                                  \
        #NAME, detail::count_shape(calCount, #NAME), [s](T x) -> T { return EXPR; }, {1, 8}, dst, \
        detail::in(src));                                                                         \
  }                                                                                               \
  template <typename T, bool isSetMask = true>                                                    \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                                 \
            const std::type_identity_t<T>& scalarValue, std::uint64_t mask,                       \
            const std::uint8_t repeatTimes, const UnaryRepeatParams& p) {                         \
    const T s = scalarValue;                                                                      \
    detail::map(                                                                                  \
        #NAME,                                                                                    \
        detail::lane_shape<isSetMask>(mask, repeatTimes, sizeof(T), #NAME, detail::dense(p)),     \
        [s](T x) -> T { return EXPR; }, {p.dstBlkStride, p.dstRepStride}, dst,                    \
        detail::in(src, p.srcBlkStride, p.srcRepStride));                                         \
  }                                                                                               \
  template <typename T, bool isSetMask = true>                                                    \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src,                                 \
            const std::type_identity_t<T>& scalarValue, const std::uint64_t mask[2],              \
            const std::uint8_t repeatTimes, const UnaryRepeatParams& p) {                         \
    const T s = scalarValue;                                                                      \
    detail::map(                                                                                  \
        #NAME, detail::lane_bits<isSetMask>(mask, repeatTimes, #NAME, detail::dense(p)),          \
        [s](T x) -> T { return EXPR; }, {p.dstBlkStride, p.dstRepStride}, dst,                    \
        detail::in(src, p.srcBlkStride, p.srcRepStride));                                         \
  }

TESSERA_ASCENDC_SCALAR(Adds, static_cast<T>(x + s))
TESSERA_ASCENDC_SCALAR(Muls, static_cast<T>(x* s))
TESSERA_ASCENDC_SCALAR(Maxs, x > s ? x : s)
TESSERA_ASCENDC_SCALAR(Mins, x < s ? x : s)
// Shifts of integer elements by scalarValue bits (ShiftRight: arithmetic for signed types).
TESSERA_ASCENDC_SCALAR(ShiftLeft, static_cast<T>(x << s))
TESSERA_ASCENDC_SCALAR(ShiftRight, static_cast<T>(x >> s))
#undef TESSERA_ASCENDC_SCALAR

// Copy: a UB -> UB copy on the Vector unit of the lanes the mask enables, with block strides and
// repeat sizes in 32-byte blocks (Ascend C API reference "Copy"; 16- and 32-bit elements).
struct CopyRepeatParams {
  CopyRepeatParams() = default;
  CopyRepeatParams(const std::uint16_t dstStrideIn, const std::uint16_t srcStrideIn,
                   const std::uint16_t dstRepeatSizeIn, const std::uint16_t srcRepeatSizeIn)
      : dstStride(dstStrideIn),
        srcStride(srcStrideIn),
        dstRepeatSize(dstRepeatSizeIn),
        srcRepeatSize(srcRepeatSizeIn) {}
  std::uint16_t dstStride = 1;
  std::uint16_t srcStride = 1;
  std::uint16_t dstRepeatSize = 8;
  std::uint16_t srcRepeatSize = 8;
};
namespace detail {
inline bool dense(const CopyRepeatParams& p) {
  return p.dstStride == 1 && p.srcStride == 1 && p.dstRepeatSize == 8 && p.srcRepeatSize == 8;
}
}  // namespace detail
template <typename T, bool isSetMask = true>
void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const std::uint64_t mask,
          const std::uint8_t repeatTimes, const CopyRepeatParams& p) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "Copy takes 16- or 32-bit elements");
  detail::map(
      "Copy", detail::lane_shape<isSetMask>(mask, repeatTimes, sizeof(T), "Copy", detail::dense(p)),
      [](T x) -> T { return x; }, {p.dstStride, p.dstRepeatSize}, dst,
      detail::in(src, p.srcStride, p.srcRepeatSize));
}
template <typename T, bool isSetMask = true>
void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const std::uint64_t mask[],
          const std::uint8_t repeatTimes, const CopyRepeatParams& p) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "Copy takes 16- or 32-bit elements");
  detail::map(
      "Copy", detail::lane_bits<isSetMask>(mask, repeatTimes, "Copy", detail::dense(p)),
      [](T x) -> T { return x; }, {p.dstStride, p.dstRepeatSize}, dst,
      detail::in(src, p.srcStride, p.srcRepeatSize));
}

// Axpy: dst = src * scalarValue + dst (count form, one element type).
template <typename T>
void Axpy(const LocalTensor<T>& dst, const LocalTensor<T>& src,
          const std::type_identity_t<T>& scalarValue, const std::int32_t& calCount) {
  const T s = scalarValue;
  detail::map(
      "Axpy", detail::count_shape(calCount, "Axpy"),
      [s](T x, T d) -> T { return static_cast<T>(x * s + d); }, {1, 8}, dst, detail::in(src),
      detail::in(dst));
}

// CreateVecIndex: dst[i] = firstValue + i for calCount elements.
template <typename T>
void CreateVecIndex(const LocalTensor<T>& dst, const T& firstValue, std::uint32_t calCount) {
  detail::VecShape shape = detail::count_shape(calCount, "CreateVecIndex");
  const std::array<detail::VecOperand, 1> ops = {detail::operand(dst, true)};
  detail::core().vector("CreateVecIndex", ops, shape);
  T* d = detail::host(dst, calCount, "CreateVecIndex");
  for (std::uint32_t i = 0; i < calCount; ++i) {
    if constexpr (std::is_integral_v<T>)
      d[i] = static_cast<T>(firstValue + static_cast<T>(i));
    else
      d[i] = static_cast<T>(static_cast<float>(firstValue) + static_cast<float>(i));
  }
}

// Gather: dst[i] = the element at byte srcBaseAddr + srcOffset[i] of src. An offset that is
// not a multiple of the element size, or that reaches past src, is a DeviceFault. (Ascend C API
// reference "Gather", CANN 8.0: offsets and base in bytes, relative to src.) The count form
// gathers `count` elements; the mask forms gather per repeat the lanes the mask enables (256 /
// sizeof(T) lanes, lane l of repeat r taking offset r * lanes + l) into dst repeats
// dstRepStride 32-byte blocks apart.
namespace detail {
template <typename T>
void gather(const LocalTensor<T>& dst, const LocalTensor<T>& src,
            const LocalTensor<std::uint32_t>& srcOffset, const std::uint32_t srcBaseAddr,
            const VecShape& shape, std::uint16_t dstRepStride) {
  Core& c = core();
  const std::uint64_t lanes = shape.count ? shape.count : tessera::aicore::kRepeatBytes / sizeof(T);
  const std::uint64_t repeats = shape.count ? 1 : shape.repeat;
  const auto enabled = [&](std::uint64_t l) {
    return shape.count || ((shape.mask[l / 64] >> (l % 64)) & 1);
  };
  std::uint64_t used = 0;  // offsets read: up to the last enabled lane of the last repeat
  for (std::uint64_t l = 0; l < lanes; ++l)
    if (enabled(l)) used = (repeats - 1) * lanes + l + 1;
  if (used == 0) c.fault_at("Gather", "the mask enables no lane");
  const std::uint32_t* off = host(srcOffset, used, "Gather");
  const std::uint64_t src_bytes = static_cast<std::uint64_t>(src.GetSize()) * sizeof(T);
  std::uint64_t span = 0;
  for (std::uint64_t r = 0; r < repeats; ++r)
    for (std::uint64_t l = 0; l < lanes; ++l) {
      if (!enabled(l)) continue;
      const std::uint64_t i = r * lanes + l;
      const std::uint64_t at = static_cast<std::uint64_t>(srcBaseAddr) + off[i];
      if (at % sizeof(T) != 0 || (src_bytes && at + sizeof(T) > src_bytes))
        c.fault_at(
            "Gather",
            fmt::format("offset {} of element {} (base {}) is {} the {}-byte source; give "
                        "byte offsets of whole elements inside src",
                        off[i], i, srcBaseAddr,
                        at % sizeof(T) ? "not a whole element of" : "past the end of", src_bytes));
      span = std::max(span, at + sizeof(T));
    }
  std::array<VecOperand, 3> ops = {operand(dst, true, 1, dstRepStride), operand(src, false),
                                   operand(srcOffset, false)};
  ops[1].span_bytes = span;
  ops[2].span_bytes = used * 4;
  ops[2].elem_bytes = sizeof(T);  // the lanes are dst's elements
  c.vector("Gather", ops, shape);
  std::byte* ub = c.data(Buf::UB, 0, c.memory(Buf::UB).capacity(), "Gather");
  const std::byte* base = ub + src.ref_.addr + srcBaseAddr;
  for (std::uint64_t r = 0; r < repeats; ++r)
    for (std::uint64_t l = 0; l < lanes; ++l)
      if (enabled(l))
        std::memcpy(ub + (shape.count ? ops[0].ref.addr + l * sizeof(T)
                                      : tessera::aicore::lane_address(ops[0], r, l)),
                    base + off[r * lanes + l], sizeof(T));
}
}  // namespace detail

template <typename T>
void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src,
            const LocalTensor<std::uint32_t>& srcOffset, const std::uint32_t srcBaseAddr,
            const std::uint32_t count) {
  if (count == 0) detail::core().fault_at("Gather", "count 0 must be positive");
  detail::VecShape shape;
  shape.count = count;
  detail::gather(dst, src, srcOffset, srcBaseAddr, shape, 8);
}
template <typename T>
void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src,
            const LocalTensor<std::uint32_t>& srcOffset, const std::uint32_t srcBaseAddr,
            const std::uint64_t mask, const std::uint8_t repeatTimes,
            const std::uint16_t dstRepStride) {
  detail::gather(dst, src, srcOffset, srcBaseAddr,
                 detail::mask_shape(mask, repeatTimes, sizeof(T), "Gather"), dstRepStride);
}
template <typename T>
void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src,
            const LocalTensor<std::uint32_t>& srcOffset, const std::uint32_t srcBaseAddr,
            const std::uint64_t mask[2], const std::uint8_t repeatTimes,
            const std::uint16_t dstRepStride) {
  detail::gather(dst, src, srcOffset, srcBaseAddr, detail::bits_shape(mask, repeatTimes),
                 dstRepStride);
}

template <typename T>
void LeakyRelu(const LocalTensor<T>& dst, const LocalTensor<T>& src,
               const std::type_identity_t<T>& scalarValue, const std::int32_t& calCount) {
  const T s = scalarValue;
  detail::map(
      "LeakyRelu", detail::count_shape(calCount, "LeakyRelu"),
      [s](T x) -> T { return x > T(0) ? x : static_cast<T>(x * s); }, {1, 8}, dst, detail::in(src));
}

template <typename T>
void Duplicate(const LocalTensor<T>& dst, const std::type_identity_t<T>& scalarValue,
               const std::int32_t& calCount) {
  const T s = scalarValue;
  detail::map(
      "Duplicate", detail::count_shape(calCount, "Duplicate"), [s]() -> T { return s; }, {1, 8},
      dst);
}
template <typename T, bool isSetMask = true>
void Duplicate(const LocalTensor<T>& dst, const std::type_identity_t<T>& scalarValue,
               std::uint64_t mask, const std::uint8_t repeatTimes,
               const std::uint16_t dstBlockStride, const std::uint8_t dstRepeatStride) {
  const T s = scalarValue;
  detail::map(
      "Duplicate",
      detail::lane_shape<isSetMask>(mask, repeatTimes, sizeof(T), "Duplicate",
                                    dstBlockStride == 1 && dstRepeatStride == 8),
      [s]() -> T { return s; }, {dstBlockStride, dstRepeatStride}, dst);
}
template <typename T, bool isSetMask = true>
void Duplicate(const LocalTensor<T>& dst, const std::type_identity_t<T>& scalarValue,
               const std::uint64_t mask[2], const std::uint8_t repeatTimes,
               const std::uint16_t dstBlockStride, const std::uint8_t dstRepeatStride) {
  const T s = scalarValue;
  detail::map(
      "Duplicate",
      detail::lane_bits<isSetMask>(mask, repeatTimes, "Duplicate",
                                   dstBlockStride == 1 && dstRepeatStride == 8),
      [s]() -> T { return s; }, {dstBlockStride, dstRepeatStride}, dst);
}

enum class RoundMode : std::uint8_t {
  CAST_NONE = 0,
  CAST_RINT,
  CAST_FLOOR,
  CAST_CEIL,
  CAST_ROUND,
  CAST_TRUNC,
  CAST_ODD,
};

namespace detail {
template <typename D, typename S>
D convert(S x, RoundMode mode) {
  if constexpr (std::is_integral_v<D>) {
    const double v = static_cast<double>(x);
    double r = v;
    switch (mode) {
      case RoundMode::CAST_FLOOR:
        r = std::floor(v);
        break;
      case RoundMode::CAST_CEIL:
        r = std::ceil(v);
        break;
      case RoundMode::CAST_ROUND:
        r = std::round(v);
        break;
      case RoundMode::CAST_TRUNC:
        r = std::trunc(v);
        break;
      default:
        r = std::nearbyint(v);
        break;
    }
    if (std::isnan(r)) return D(0);
    r = std::clamp(r, static_cast<double>(std::numeric_limits<D>::lowest()),
                   static_cast<double>(std::numeric_limits<D>::max()));
    return static_cast<D>(r);
  } else {
    (void)mode;
    return static_cast<D>(x);  // round to nearest even
  }
}
}  // namespace detail

template <typename D, typename S>
void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& round_mode,
          const std::uint32_t calCount) {
  const RoundMode m = round_mode;
  detail::map(
      "Cast", detail::count_shape(calCount, "Cast"),
      [m](S x) -> D { return detail::convert<D>(x, m); }, {1, 8}, dst, detail::in(src));
}
// Mask forms: a repeat covers 256 bytes of the wider type (64 lanes for f32 <-> f16).
template <typename D, typename S, bool isSetMask = true>
void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& round_mode,
          const std::uint64_t mask, const std::uint8_t repeatTimes, const UnaryRepeatParams& p) {
  const RoundMode m = round_mode;
  detail::map(
      "Cast",
      detail::lane_shape<isSetMask>(mask, repeatTimes,
                                    static_cast<unsigned>(std::max(sizeof(D), sizeof(S))), "Cast",
                                    detail::dense(p)),
      [m](S x) -> D { return detail::convert<D>(x, m); }, {p.dstBlkStride, p.dstRepStride}, dst,
      detail::in(src, p.srcBlkStride, p.srcRepStride));
}
template <typename D, typename S, bool isSetMask = true>
void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& round_mode,
          const std::uint64_t mask[2], const std::uint8_t repeatTimes, const UnaryRepeatParams& p) {
  const RoundMode m = round_mode;
  detail::map(
      "Cast", detail::lane_bits<isSetMask>(mask, repeatTimes, "Cast", detail::dense(p)),
      [m](S x) -> D { return detail::convert<D>(x, m); }, {p.dstBlkStride, p.dstRepStride}, dst,
      detail::in(src, p.srcBlkStride, p.srcRepStride));
}

// Reductions: dst[0] = the reduction of src[0..count) (count form), or of the lanes the mask
// enables in `repeatTimes` repeats of src, srcRepStride 32-byte blocks apart (high-dimension
// forms); with calIndex, the index of the first extreme element (in src's elements) follows
// the value. workLocal is scratch (checked, unused).
namespace detail {
template <typename T, typename F>
void reduce(const char* what, const LocalTensor<T>& dst, const LocalTensor<T>& src,
            const LocalTensor<T>& work, const VecShape& shape, std::uint32_t src_rep_stride, F f,
            bool index) {
  VecShape one;
  one.count = index ? 2 : 1;
  const std::array<VecOperand, 3> ops = {operand(dst, true), operand(src, false, 1, src_rep_stride),
                                         operand(work, true)};
  Core& c = core();
  c.vector(what, std::span<const VecOperand>(ops.data() + 1, 2), shape);
  c.vector(what, std::span<const VecOperand>(ops.data(), 1), one);
  std::byte* ub = c.data(Buf::UB, 0, c.memory(Buf::UB).capacity(), what);
  // The elements in order, each with its index in src.
  const std::uint64_t lanes = shape.count ? shape.count : tessera::aicore::kRepeatBytes / sizeof(T);
  const std::uint64_t repeats = shape.count ? 1 : shape.repeat;
  bool first = true;
  float acc = 0.0f;
  std::uint64_t at = 0;
  for (std::uint64_t r = 0; r < repeats; ++r)
    for (std::uint64_t l = 0; l < lanes; ++l) {
      if (!shape.count && !((shape.mask[l / 64] >> (l % 64)) & 1)) continue;
      const std::uint64_t addr = shape.count ? ops[1].ref.addr + l * sizeof(T)
                                             : tessera::aicore::lane_address(ops[1], r, l);
      const float v = static_cast<float>(load<T>(ub + addr));
      const std::uint64_t i = (addr - ops[1].ref.addr) / sizeof(T);
      if (first) {
        acc = v;
        at = i;
        first = false;
        continue;
      }
      const float next = f(acc, v);
      if (next != acc && v == next) at = i;
      acc = next;
    }
  if (first) c.fault_at(what, "the mask enables no lane");
  T* d = host(dst, index ? 2 : 1, what);
  d[0] = static_cast<T>(acc);
  if (index) {
    // The index is stored in the element after the value, as its bit pattern.
    if constexpr (sizeof(T) == 4) {
      const auto i32 = static_cast<std::uint32_t>(at);
      std::memcpy(&d[1], &i32, 4);
    } else {
      const auto i16 = static_cast<std::uint16_t>(at);
      std::memcpy(&d[1], &i16, 2);
    }
  }
}
inline float add(float a, float b) {
  return a + b;
}
inline float max(float a, float b) {
  return b > a ? b : a;
}
inline float min(float a, float b) {
  return b < a ? b : a;
}
}  // namespace detail

#define TESSERA_ASCENDC_REDUCE(NAME, F, INDEX_PARAM, INDEX)                                        \
  template <typename T, bool isSetMask = true>                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,      \
            const std::int32_t count INDEX_PARAM) {                                                \
    detail::reduce(#NAME, dst, src, work, detail::count_shape(count, #NAME), 8, F, INDEX);         \
  }                                                                                                \
  template <typename T, bool isSetMask = true>                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,      \
            const std::int32_t mask, const std::int32_t repeatTimes,                               \
            const std::int32_t srcRepStride INDEX_PARAM) {                                         \
    detail::reduce(#NAME, dst, src, work,                                                          \
                   detail::mask_shape(static_cast<std::uint64_t>(std::max(mask, 0)),               \
                                      static_cast<std::uint32_t>(std::max(repeatTimes, 0)),        \
                                      sizeof(T), #NAME),                                           \
                   static_cast<std::uint32_t>(srcRepStride), F, INDEX);                            \
  }                                                                                                \
  template <typename T, bool isSetMask = true>                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,      \
            const std::uint64_t mask[2], const std::int32_t repeatTimes,                           \
            const std::int32_t srcRepStride INDEX_PARAM) {                                         \
    detail::reduce(#NAME, dst, src, work,                                                          \
                   detail::bits_shape(mask, static_cast<std::uint32_t>(std::max(repeatTimes, 0))), \
                   static_cast<std::uint32_t>(srcRepStride), F, INDEX);                            \
  }

#define TESSERA_ASCENDC_INDEX_PARAM , bool calIndex = false
TESSERA_ASCENDC_REDUCE(ReduceSum, detail::add, , false)
TESSERA_ASCENDC_REDUCE(ReduceMax, detail::max, TESSERA_ASCENDC_INDEX_PARAM, calIndex)
TESSERA_ASCENDC_REDUCE(ReduceMin, detail::min, TESSERA_ASCENDC_INDEX_PARAM, calIndex)
#undef TESSERA_ASCENDC_INDEX_PARAM
#undef TESSERA_ASCENDC_REDUCE

// ---- the mask register ----

// Ascend C's SetVectorMask / SetMaskCount / SetMaskNorm / ResetMask: the register the mask forms
// called with isSetMask = false read (their mask argument is MASK_PLACEHOLDER). Normal mode: the
// lanes of every repeat (maskHigh: lanes 64-127, maskLow: lanes 0-63). Counter mode: maskLow
// counts the elements an instruction processes, in as many repeats as they fill, whatever its
// repeatTimes (Ascend C API reference, "SetVectorMask", "SetMaskCount"). Count forms neither read
// nor change it here.
enum class MaskMode : std::uint8_t { NORMAL = 0, COUNTER };
inline constexpr std::int32_t MASK_PLACEHOLDER = 0;
inline constexpr std::uint64_t MASK_PLACEHOLDER_LIST[2] = {0, 0};

template <typename T, MaskMode mode = MaskMode::NORMAL>
void SetVectorMask(const std::uint64_t maskHigh, const std::uint64_t maskLow) {
  detail::core().vector_mask = {maskLow, maskHigh};
}
// Normal mode: the first `len` lanes; counter mode: `len` elements.
template <typename T, MaskMode mode = MaskMode::NORMAL>
void SetVectorMask(const std::int32_t len) {
  detail::Core& c = detail::core();
  if (len <= 0) c.fault_at("SetVectorMask", fmt::format("len {} must be positive", len));
  const auto n = static_cast<std::uint64_t>(len);
  if (c.mask_counter || mode == MaskMode::COUNTER)
    c.vector_mask = {n, 0};
  else
    c.vector_mask = detail::mask_shape(n, 1, sizeof(T), "SetVectorMask").mask;
}
inline void ResetMask() {
  detail::core().vector_mask = {~std::uint64_t{0}, ~std::uint64_t{0}};
}
inline void SetMaskCount() {
  detail::core().mask_counter = true;
}
inline void SetMaskNorm() {
  detail::core().mask_counter = false;
}

// ---- reductions within repeats ----

// WholeReduceSum/Max/Min reduce each repeat's enabled lanes to one result, BlockReduceSum/Max/Min
// each 32-byte block of a repeat to one (8 a repeat), PairReduceSum each pair of neighbouring
// lanes (128 bytes a repeat). Results of a repeat are contiguous; repeat r's start at
// r * dstRepStride times the results' length of one repeat (Ascend C API reference
// "WholeReduceSum", "WholeReduceMax", "BlockReduceMax", "PairReduceSum": dstRepStride counts
// reduced repeats). Sums add pairwise (a binary tree of T additions, as those pages describe);
// a maximum or minimum takes the first of equal lanes. WholeReduceMax/Min's order places the
// lane index (within the repeat) before or after the value, or alone as a uint32_t, the index
// stored as the bit pattern of an unsigned integer of T's width. A block or pair with no
// enabled lane keeps dst's elements. In counter mode the register's count of elements runs in
// repeats of 256 bytes, the last one partial.
enum class ReduceOrder : std::uint8_t {
  ORDER_VALUE_INDEX = 0,
  ORDER_INDEX_VALUE,
  ORDER_ONLY_VALUE,
  ORDER_ONLY_INDEX,
};

namespace detail {
enum class ReduceGroup : std::uint8_t { kWhole, kBlock, kPair };
enum class ReduceOp : std::uint8_t { kSum, kMax, kMin };

template <typename T>
T tree_sum(std::vector<T>& v) {
  if (v.empty()) return T(0);
  while (v.size() > 1) {
    std::vector<T> next((v.size() + 1) / 2);
    for (std::size_t i = 0; i + 1 < v.size(); i += 2) next[i / 2] = static_cast<T>(v[i] + v[i + 1]);
    if (v.size() % 2) next.back() = v.back();
    v.swap(next);
  }
  return v[0];
}

template <typename T>
void group_reduce(const char* what, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                  VecShape shape, ReduceGroup group, ReduceOp op, ReduceOrder order,
                  std::int32_t dstRepStride, std::int32_t srcBlkStride, std::int32_t srcRepStride) {
  static_assert(std::is_same_v<T, half> || std::is_same_v<T, float>,
                "the reductions take half or float (Ascend C API reference)");
  Core& c = core();
  if (dstRepStride < 0 || srcBlkStride < 0 || srcRepStride < 0)
    c.fault_at(what, fmt::format("strides must not be negative (dstRepStride {}, srcBlkStride {}, "
                                 "srcRepStride {})",
                                 dstRepStride, srcBlkStride, srcRepStride));
  const std::uint64_t lanes = tessera::aicore::kRepeatBytes / sizeof(T);
  // Counter mode: `count` elements in repeats of `lanes`, the last one partial.
  const std::uint64_t count = shape.count;
  if (count) {
    shape.repeat = static_cast<std::uint32_t>((count + lanes - 1) / lanes);
    shape.count = 0;
  }
  const auto enabled = [&](std::uint64_t r, std::uint64_t l) {
    return count ? r * lanes + l < count : ((shape.mask[l / 64] >> (l % 64)) & 1) != 0;
  };
  const std::uint64_t group_lanes = group == ReduceGroup::kWhole   ? lanes
                                    : group == ReduceGroup::kBlock ? lanes / 8
                                                                   : 2;
  const std::uint64_t groups = lanes / group_lanes;
  const bool with_index =
      op != ReduceOp::kSum && group == ReduceGroup::kWhole &&
      (order == ReduceOrder::ORDER_VALUE_INDEX || order == ReduceOrder::ORDER_INDEX_VALUE);
  const bool only_index = op != ReduceOp::kSum && group == ReduceGroup::kWhole &&
                          order == ReduceOrder::ORDER_ONLY_INDEX;
  // Bytes of one group's result and of one repeat's results (the unit of dstRepStride).
  const std::uint64_t result_bytes = only_index ? 4 : with_index ? 2 * sizeof(T) : sizeof(T);
  const std::uint64_t repeat_bytes = result_bytes * groups;
  const std::uint64_t dst_align = group == ReduceGroup::kBlock  ? 8 * sizeof(T)
                                  : group == ReduceGroup::kPair ? 32
                                                                : result_bytes;
  // Operands: src by its block and repeat strides (its exact span when the last repeat is
  // partial), dst as the bytes its results span.
  VecOperand in = operand(src, false, static_cast<std::uint32_t>(srcBlkStride),
                          static_cast<std::uint32_t>(srcRepStride));
  VecOperand out = operand(dst, true);
  out.align = dst_align;
  std::uint64_t src_end = 0, dst_end = 0;
  bool any = false;
  for (std::uint64_t r = 0; r < shape.repeat; ++r)
    for (std::uint64_t g = 0; g < groups; ++g)
      for (std::uint64_t l = g * group_lanes; l < (g + 1) * group_lanes; ++l) {
        if (!enabled(r, l)) continue;
        any = true;
        src_end = std::max(src_end, tessera::aicore::lane_address(in, r, l) + sizeof(T));
        dst_end = std::max(
            dst_end, dst.ref_.addr + r * static_cast<std::uint64_t>(dstRepStride) * repeat_bytes +
                         (g + 1) * result_bytes);
      }
  if (!any) c.fault_at(what, "the mask enables no lane");
  out.span_bytes = dst_end - dst.ref_.addr;
  if (count && count % lanes) in.span_bytes = src_end - src.ref_.addr;
  const std::array<VecOperand, 2> ops = {in, out};
  c.vector(what, ops, shape);

  std::byte* ub = c.data(Buf::UB, 0, c.memory(Buf::UB).capacity(), what);
  // Reads all of src first: dst may overlap it (Ascend C lets one tensor serve as both).
  std::vector<std::vector<std::pair<std::uint64_t, T>>> parts(shape.repeat * groups);
  for (std::uint64_t r = 0; r < shape.repeat; ++r)
    for (std::uint64_t l = 0; l < lanes; ++l)
      if (enabled(r, l))
        parts[r * groups + l / group_lanes].emplace_back(
            l, load<T>(ub + tessera::aicore::lane_address(in, r, l)));
  using Bits = std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint32_t>;
  for (std::uint64_t r = 0; r < shape.repeat; ++r)
    for (std::uint64_t g = 0; g < groups; ++g) {
      const auto& lanes_in = parts[r * groups + g];
      if (lanes_in.empty()) continue;
      T value = lanes_in[0].second;
      std::uint64_t index = lanes_in[0].first;
      if (op == ReduceOp::kSum) {
        // Disabled lanes add nothing: zeros in the tree's places.
        std::vector<T> v(group_lanes, T(0));
        for (const auto& [l, x] : lanes_in) v[l - g * group_lanes] = x;
        value = tree_sum(v);
      } else {
        for (const auto& [l, x] : lanes_in)
          if (op == ReduceOp::kMax ? x > value : x < value) {
            value = x;
            index = l;
          }
      }
      std::byte* at = ub + dst.ref_.addr +
                      r * static_cast<std::uint64_t>(dstRepStride) * repeat_bytes +
                      g * result_bytes;
      if (only_index) {
        const auto i32 = static_cast<std::uint32_t>(index);
        std::memcpy(at, &i32, 4);
        continue;
      }
      const auto bits = static_cast<Bits>(index);
      if (with_index && order == ReduceOrder::ORDER_INDEX_VALUE) {
        std::memcpy(at, &bits, sizeof(T));
        std::memcpy(at + sizeof(T), &value, sizeof(T));
      } else {
        std::memcpy(at, &value, sizeof(T));
        if (with_index) std::memcpy(at + sizeof(T), &bits, sizeof(T));
      }
    }
}

// The shape of a reduction's mask: its own (isSetMask) or the register's, counter mode included.
template <bool isSetMask>
VecShape reduce_shape(std::int32_t mask, std::int32_t repeatTime, unsigned elem, const char* what) {
  if (repeatTime < 0 || repeatTime > 255)
    core().fault_at(what, fmt::format("repeatTime {} is outside 0..255", repeatTime));
  if constexpr (isSetMask) {
    Core& c = core();
    if (c.mask_counter) {
      if (mask <= 0) c.fault_at(what, fmt::format("counter-mode count {} must be positive", mask));
      c.vector_mask = {static_cast<std::uint64_t>(mask), 0};
    } else {
      c.vector_mask = mask_shape(static_cast<std::uint64_t>(std::max(mask, 0)), 1, elem, what).mask;
    }
  }
  Core& c = core();
  VecShape s;
  if (c.mask_counter) {
    if (c.vector_mask[0] == 0) c.fault_at(what, "counter mode (SetMaskCount) with a count of 0");
    s.count = c.vector_mask[0];
    return s;
  }
  s.repeat = static_cast<std::uint32_t>(repeatTime);
  s.mask = c.vector_mask;
  return s;
}
template <bool isSetMask>
VecShape reduce_bits(const std::uint64_t mask[], std::int32_t repeatTime, const char* what) {
  if constexpr (isSetMask) core().vector_mask = {mask[0], mask[1]};
  return reduce_shape<false>(0, repeatTime, 2, what);
}
}  // namespace detail

#define TESSERA_ASCENDC_WHOLE_REDUCE(NAME, OP, ORDER_PARAM, ORDER)                                 \
  template <typename T, bool isSetMask = true>                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const std::int32_t mask,         \
            const std::int32_t repeatTime, const std::int32_t dstRepStride,                        \
            const std::int32_t srcBlkStride, const std::int32_t srcRepStride ORDER_PARAM) {        \
    detail::group_reduce(                                                                          \
        #NAME, dst, src, detail::reduce_shape<isSetMask>(mask, repeatTime, sizeof(T), #NAME),      \
        detail::ReduceGroup::kWhole, OP, ORDER, dstRepStride, srcBlkStride, srcRepStride);         \
  }                                                                                                \
  template <typename T, bool isSetMask = true>                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const std::uint64_t mask[],      \
            const std::int32_t repeatTime, const std::int32_t dstRepStride,                        \
            const std::int32_t srcBlkStride, const std::int32_t srcRepStride ORDER_PARAM) {        \
    detail::group_reduce(#NAME, dst, src, detail::reduce_bits<isSetMask>(mask, repeatTime, #NAME), \
                         detail::ReduceGroup::kWhole, OP, ORDER, dstRepStride, srcBlkStride,       \
                         srcRepStride);                                                            \
  }
#define TESSERA_ASCENDC_ORDER_PARAM , ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX
TESSERA_ASCENDC_WHOLE_REDUCE(WholeReduceSum, detail::ReduceOp::kSum, ,
                             ReduceOrder::ORDER_ONLY_VALUE)
TESSERA_ASCENDC_WHOLE_REDUCE(WholeReduceMax, detail::ReduceOp::kMax, TESSERA_ASCENDC_ORDER_PARAM,
                             order)
TESSERA_ASCENDC_WHOLE_REDUCE(WholeReduceMin, detail::ReduceOp::kMin, TESSERA_ASCENDC_ORDER_PARAM,
                             order)
#undef TESSERA_ASCENDC_ORDER_PARAM
#undef TESSERA_ASCENDC_WHOLE_REDUCE

// BlockReduce* and PairReduceSum take repeatTime before the mask (Ascend C's order).
#define TESSERA_ASCENDC_GROUP_REDUCE(NAME, GROUP, OP)                                              \
  template <typename T, bool isSetMask = true>                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const std::int32_t repeatTime,   \
            const std::int32_t mask, const std::int32_t dstRepStride,                              \
            const std::int32_t srcBlkStride, const std::int32_t srcRepStride) {                    \
    detail::group_reduce(                                                                          \
        #NAME, dst, src, detail::reduce_shape<isSetMask>(mask, repeatTime, sizeof(T), #NAME),      \
        GROUP, OP, ReduceOrder::ORDER_ONLY_VALUE, dstRepStride, srcBlkStride, srcRepStride);       \
  }                                                                                                \
  template <typename T, bool isSetMask = true>                                                     \
  void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const std::int32_t repeatTime,   \
            const std::uint64_t mask[], const std::int32_t dstRepStride,                           \
            const std::int32_t srcBlkStride, const std::int32_t srcRepStride) {                    \
    detail::group_reduce(#NAME, dst, src, detail::reduce_bits<isSetMask>(mask, repeatTime, #NAME), \
                         GROUP, OP, ReduceOrder::ORDER_ONLY_VALUE, dstRepStride, srcBlkStride,     \
                         srcRepStride);                                                            \
  }
TESSERA_ASCENDC_GROUP_REDUCE(BlockReduceSum, detail::ReduceGroup::kBlock, detail::ReduceOp::kSum)
TESSERA_ASCENDC_GROUP_REDUCE(BlockReduceMax, detail::ReduceGroup::kBlock, detail::ReduceOp::kMax)
TESSERA_ASCENDC_GROUP_REDUCE(BlockReduceMin, detail::ReduceGroup::kBlock, detail::ReduceOp::kMin)
TESSERA_ASCENDC_GROUP_REDUCE(PairReduceSum, detail::ReduceGroup::kPair, detail::ReduceOp::kSum)
#undef TESSERA_ASCENDC_GROUP_REDUCE

// Brcb: repeat r reads src's 8 elements [8r, 8r + 8) and fills block j of its 8 destination
// blocks with element 8r + j; the blocks lie dstBlkStride blocks apart, repeats dstRepStride
// blocks apart (Ascend C API reference "Brcb"; Huawei lists it for the 220x and inference
// parts, Tessera runs it on every aicore preset).
struct BrcbRepeatParams {
  BrcbRepeatParams() = default;
  BrcbRepeatParams(const std::uint16_t dstBlkStrideIn, const std::uint16_t dstRepStrideIn)
      : dstRepStride(dstRepStrideIn), dstBlkStride(dstBlkStrideIn) {}
  std::uint32_t blockNumber = 8;
  std::uint16_t dstRepStride = 8;
  std::uint16_t dstBlkStride = 1;
};

template <typename T>
void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const std::uint8_t repeatTime,
          const BrcbRepeatParams& repeatParams) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "Brcb takes 16- or 32-bit elements");
  detail::Core& c = detail::core();
  if (repeatTime == 0) c.fault_at("Brcb", "repeatTime 0; give at least one repeat");
  detail::VecShape shape;
  shape.repeat = repeatTime;
  detail::VecOperand in = detail::operand(src, false);
  in.span_bytes = static_cast<std::uint64_t>(repeatTime) * 8 * sizeof(T);
  const std::array<detail::VecOperand, 2> ops = {
      detail::operand(dst, true, repeatParams.dstBlkStride, repeatParams.dstRepStride), in};
  c.vector("Brcb", ops, shape);
  std::byte* ub = c.data(detail::Buf::UB, 0, c.memory(detail::Buf::UB).capacity(), "Brcb");
  std::vector<T> values(static_cast<std::size_t>(repeatTime) * 8);
  std::memcpy(values.data(), ub + src.ref_.addr, values.size() * sizeof(T));
  constexpr std::uint64_t per_block = tessera::aicore::kBlockBytes / sizeof(T);
  for (std::uint64_t r = 0; r < repeatTime; ++r)
    for (std::uint64_t j = 0; j < 8; ++j)
      for (std::uint64_t e = 0; e < per_block; ++e)
        std::memcpy(ub + tessera::aicore::lane_address(ops[0], r, j * per_block + e),
                    &values[r * 8 + j], sizeof(T));
}

// Compare and Select with their mask forms, after Ascend C's reference (hiascend.com CANN API
// pages atlasascendc_api_07_0066 "Compare", 07_0067 "Compare (result in the register)", 07_0070
// "Select", 07_0224 "SetCmpMask", and the vsel intrinsic, cceintrinsicapi/cceapi_0039):
// - Compare writes one bit per element into a uint8_t tensor, LSB first, 1 where the comparison
//   holds: element l of repeat r (lanes = 256 / sizeof(T) per repeat) at bit b % 8 of byte b / 8,
//   b = r * lanes + l. The repeats' bits are packed (lanes / 8 bytes each): Ascend C's own count
//   form issues its repeats with the default BinaryRepeatParams and advances dst by lanes / 8
//   bytes a repeat (asc-devkit impl/basic_api/dav_c100/kernel_operator_vec_cmpsel_impl.h), so the
//   dst strides are not used. The register form (no dst, one repeat) writes the CMPMASK register.
// - Select takes src0 where the bit is 1 and src1 where it is 0. VSEL_CMPMASK_SPR (mode 0): the
//   first `lanes` bits of CMPMASK serve every repeat (the selMask forms load CMPMASK from
//   selMask first, as set_cmpmask does); VSEL_TENSOR_SCALAR_MODE (1): src1 is a scalar and the
//   repeats' bits lie packed from selMask's start; VSEL_TENSOR_TENSOR_MODE (2): the same bits
//   with a src1 tensor. The forms without selMask read CMPMASK: mode 1 takes the scalar from its
//   low bits, mode 2 selMask's UB address from its low 64 bits (SetCmpMask of a tensor holding
//   the address, as the 07_0224 example writes it).
// - The mask forms compute the lanes their mask enables; the others keep dst's element (Select,
//   07_0070's example) or dst's bit (Compare). The register forms run every lane (SetVectorMask
//   is not provided). On the Ascend 910 (Atlas training series) Huawei offers only mode 0 and no
//   SetCmpMask; Tessera runs every mode on both presets.
enum class CMPMODE : std::uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : std::uint8_t {
  VSEL_CMPMASK_SPR = 0,
  VSEL_TENSOR_SCALAR_MODE,
  VSEL_TENSOR_TENSOR_MODE,
};

namespace detail {

template <typename T>
bool compare(CMPMODE mode, T a, T b) {
  using C = std::conditional_t<std::is_integral_v<T>, T, float>;
  const C x = static_cast<C>(a), y = static_cast<C>(b);
  switch (mode) {
    case CMPMODE::LT:
      return x < y;
    case CMPMODE::GT:
      return x > y;
    case CMPMODE::EQ:
      return x == y;
    case CMPMODE::LE:
      return x <= y;
    case CMPMODE::GE:
      return x >= y;
    case CMPMODE::NE:
      return x != y;
  }
  core().fault_at("Compare", fmt::format("CMPMODE {} is not one of LT, GT, EQ, LE, GE, NE",
                                         static_cast<int>(mode)));
}
template <typename T>
constexpr std::uint64_t lanes_of() {
  return tessera::aicore::kRepeatBytes / sizeof(T);
}
inline bool bit_at(const std::byte* p, std::uint64_t bit) {
  return (std::to_integer<unsigned>(p[bit / 8]) >> (bit % 8)) & 1u;
}
inline bool lane_on(const std::array<std::uint64_t, 2>& mask, std::uint64_t l) {
  return (mask[l / 64] >> (l % 64)) & 1;
}
// f(r, l) for each lane the shape enables: the first `count` elements as repeats of `lanes`,
// or the masked lanes of each repeat.
template <typename F>
void for_lanes(const VecShape& s, std::uint64_t lanes, F f) {
  if (s.count) {
    for (std::uint64_t i = 0; i < s.count; ++i) f(i / lanes, i % lanes);
    return;
  }
  for (std::uint64_t r = 0; r < s.repeat; ++r)
    for (std::uint64_t l = 0; l < lanes; ++l)
      if (lane_on(s.mask, l)) f(r, l);
}
// Issues a V instruction reading or writing `bytes` of packed bits at `ref`.
inline void bit_access(const Ref& ref, std::uint64_t bytes, bool write, const char* what,
                       std::uint64_t align = tessera::aicore::kBlockBytes) {
  VecOperand o{ref, 1, 1, 8, write};
  o.align = align;
  VecShape s;
  s.count = bytes;
  core().vector(what, std::span<const VecOperand>(&o, 1), s);
}
inline std::byte* whole_ub(const char* what) {
  Core& c = core();
  return c.data(Buf::UB, 0, c.memory(Buf::UB).capacity(), what);
}
// set_cmpmask: CMPMASK takes the 16 bytes at `ref` (16-byte aligned, 07_0224).
inline void load_cmp_mask(const Ref& ref, const char* what) {
  bit_access(ref, 16, false, what, 16);
  std::memcpy(core().cmp_mask.data(), whole_ub(what) + ref.addr, 16);
}

template <typename T, typename U>
void compare_lanes(const LocalTensor<U>& dst, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, CMPMODE mode, const VecShape& shape,
                   const BinaryRepeatParams& p) {
  static_assert(sizeof(U) == 1, "Compare writes its bits into a uint8_t or int8_t tensor");
  const std::array<VecOperand, 2> srcs = {operand(src0, false, p.src0BlkStride, p.src0RepStride),
                                          operand(src1, false, p.src1BlkStride, p.src1RepStride)};
  core().vector("Compare", srcs, shape);
  const std::uint64_t lanes = lanes_of<T>();
  const std::uint64_t bits = shape.count ? shape.count : shape.repeat * lanes;
  bit_access(dst.ref_, (bits + 7) / 8, true, "Compare");
  std::byte* ub = whole_ub("Compare");
  auto* d = reinterpret_cast<std::uint8_t*>(ub + dst.ref_.addr);
  for_lanes(shape, lanes, [&](std::uint64_t r, std::uint64_t l) {
    const std::uint64_t b = r * lanes + l;
    const auto bit = static_cast<std::uint8_t>(1u << (b % 8));
    if (compare(mode, load<T>(ub + lane_address(srcs[0], r, l)),
                load<T>(ub + lane_address(srcs[1], r, l))))
      d[b / 8] = static_cast<std::uint8_t>(d[b / 8] | bit);
    else
      d[b / 8] = static_cast<std::uint8_t>(d[b / 8] & ~bit);
  });
}

// Select over the lanes of `shape`; `sel` is where modes 1 and 2 read their packed bits (mode 0
// reads CMPMASK), `src1` null for the scalar.
template <typename T>
void select_lanes(const LocalTensor<T>& dst, const LocalTensor<T>& src0,
                  const std::type_identity_t<LocalTensor<T>>* src1, std::type_identity_t<T> scalar,
                  SELMODE mode, const Ref& sel, const VecShape& shape,
                  const BinaryRepeatParams& p) {
  std::vector<VecOperand> ops = {operand(dst, true, p.dstBlkStride, p.dstRepStride),
                                 operand(src0, false, p.src0BlkStride, p.src0RepStride)};
  if (src1) ops.push_back(operand(*src1, false, p.src1BlkStride, p.src1RepStride));
  const std::uint64_t lanes = lanes_of<T>();
  if (mode != SELMODE::VSEL_CMPMASK_SPR) {
    const std::uint64_t bits = shape.count ? shape.count : shape.repeat * lanes;
    bit_access(sel, (bits + 7) / 8, false, "Select");
  }
  core().vector("Select", ops, shape);
  std::byte* ub = whole_ub("Select");
  const std::array<std::uint64_t, 2> spr = core().cmp_mask;
  for_lanes(shape, lanes, [&](std::uint64_t r, std::uint64_t l) {
    const bool first =
        mode == SELMODE::VSEL_CMPMASK_SPR ? lane_on(spr, l) : bit_at(ub + sel.addr, r * lanes + l);
    const T v = first  ? load<T>(ub + lane_address(ops[1], r, l))
                : src1 ? load<T>(ub + lane_address(ops[2], r, l))
                       : scalar;
    std::memcpy(ub + lane_address(ops[0], r, l), &v, sizeof(T));
  });
}
// The selMask forms with two tensors: mode 0 loads CMPMASK from selMask, mode 2 reads its bits.
template <typename T, typename U>
void select_tensors(const LocalTensor<T>& dst, const LocalTensor<U>& selMask,
                    const LocalTensor<T>& src0, const LocalTensor<T>& src1, SELMODE mode,
                    const VecShape& shape, const BinaryRepeatParams& p) {
  if (mode == SELMODE::VSEL_TENSOR_SCALAR_MODE)
    core().fault_at("Select",
                    "SELMODE::VSEL_TENSOR_SCALAR_MODE selects against a scalar: pass src1 as a "
                    "value, or use VSEL_CMPMASK_SPR or VSEL_TENSOR_TENSOR_MODE with a src1 tensor");
  if (mode == SELMODE::VSEL_CMPMASK_SPR) load_cmp_mask(selMask.ref_, "Select");
  select_lanes(dst, src0, &src1, T{}, mode, selMask.ref_, shape, p);
}
template <typename T, typename U>
void select_scalar(const LocalTensor<T>& dst, const LocalTensor<U>& selMask,
                   const LocalTensor<T>& src0, T src1, SELMODE mode, const VecShape& shape,
                   const BinaryRepeatParams& p) {
  if (mode != SELMODE::VSEL_TENSOR_SCALAR_MODE)
    core().fault_at("Select",
                    "a scalar src1 needs SELMODE::VSEL_TENSOR_SCALAR_MODE; pass a src1 tensor "
                    "for the other modes");
  select_lanes(dst, src0, nullptr, src1, mode, selMask.ref_, shape, p);
}

}  // namespace detail

// Compare, count form: the count covers whole 256-byte repeats, as the hardware's.
template <typename T, typename U>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
             CMPMODE cmpMode, std::uint32_t count) {
  const detail::VecShape shape = detail::count_shape(count, "Compare");
  if (count * sizeof(T) % tessera::aicore::kRepeatBytes != 0)
    detail::core().fault_at("Compare", fmt::format("count {} x {} B is not a multiple of 256 "
                                                   "bytes (whole repeats); pad the operands",
                                                   count, sizeof(T)));
  detail::compare_lanes(dst, src0, src1, cmpMode, shape, BinaryRepeatParams{});
}
// Compare, bit-mask and continuous-mask forms.
template <typename T, typename U, bool isSetMask = true>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
             CMPMODE cmpMode, const std::uint64_t mask[2], std::uint8_t repeatTime,
             const BinaryRepeatParams& repeatParams) {
  detail::compare_lanes(dst, src0, src1, cmpMode, detail::bits_shape(mask, repeatTime),
                        repeatParams);
}
template <typename T, typename U, bool isSetMask = true>
void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
             CMPMODE cmpMode, std::uint64_t mask, std::uint8_t repeatTime,
             const BinaryRepeatParams& repeatParams) {
  detail::compare_lanes(dst, src0, src1, cmpMode,
                        detail::mask_shape(mask, repeatTime, sizeof(T), "Compare"), repeatParams);
}
// Compare into CMPMASK: one repeat; the enabled lanes' bits, the others 0.
template <typename T, bool isSetMask = true>
void Compare(const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
             const std::uint64_t mask[2], const BinaryRepeatParams& repeatParams) {
  const detail::VecShape shape = detail::bits_shape(mask, 1);
  const std::array<detail::VecOperand, 2> srcs = {
      detail::operand(src0, false, repeatParams.src0BlkStride, repeatParams.src0RepStride),
      detail::operand(src1, false, repeatParams.src1BlkStride, repeatParams.src1RepStride)};
  detail::core().vector("Compare", srcs, shape);
  const std::byte* ub = detail::whole_ub("Compare");
  std::array<std::uint64_t, 2> spr = {0, 0};
  detail::for_lanes(shape, detail::lanes_of<T>(), [&](std::uint64_t r, std::uint64_t l) {
    if (detail::compare(cmpMode, detail::load<T>(ub + tessera::aicore::lane_address(srcs[0], r, l)),
                        detail::load<T>(ub + tessera::aicore::lane_address(srcs[1], r, l))))
      spr[l / 64] |= std::uint64_t{1} << (l % 64);
  });
  detail::core().cmp_mask = spr;
}
template <typename T, bool isSetMask = true>
void Compare(const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE cmpMode,
             std::uint64_t mask, const BinaryRepeatParams& repeatParams) {
  const detail::VecShape shape = detail::mask_shape(mask, 1, sizeof(T), "Compare");
  const std::uint64_t bits[2] = {shape.mask[0], shape.mask[1]};
  Compare<T, isSetMask>(src0, src1, cmpMode, bits, repeatParams);
}

// CMPMASK to and from UB: 16 bytes, 16-byte aligned.
template <typename T>
void SetCmpMask(const LocalTensor<T>& src) {
  detail::load_cmp_mask(src.ref_, "SetCmpMask");
}
template <typename T>
void GetCmpMask(const LocalTensor<T>& dst) {
  detail::bit_access(dst.ref_, 16, true, "GetCmpMask", 16);
  std::memcpy(detail::whole_ub("GetCmpMask") + dst.ref_.addr, detail::core().cmp_mask.data(), 16);
}

// Select, count forms (mode 0 or 2 with a src1 tensor, mode 1 with a scalar).
template <typename T, typename U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            const LocalTensor<T>& src1, SELMODE selMode, std::uint32_t count) {
  detail::select_tensors(dst, selMask, src0, src1, selMode, detail::count_shape(count, "Select"),
                         BinaryRepeatParams{});
}
template <typename T, typename U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            std::type_identity_t<T> src1, SELMODE selMode, std::uint32_t count) {
  detail::select_scalar(dst, selMask, src0, src1, selMode, detail::count_shape(count, "Select"),
                        BinaryRepeatParams{});
}
// Select, bit-mask and continuous-mask forms.
template <typename T, typename U, bool isSetMask = true>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            const LocalTensor<T>& src1, SELMODE selMode, const std::uint64_t mask[2],
            std::uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {
  detail::select_tensors(dst, selMask, src0, src1, selMode, detail::bits_shape(mask, repeatTime),
                         repeatParams);
}
template <typename T, typename U, bool isSetMask = true>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            const LocalTensor<T>& src1, SELMODE selMode, std::uint64_t mask,
            std::uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {
  detail::select_tensors(dst, selMask, src0, src1, selMode,
                         detail::mask_shape(mask, repeatTime, sizeof(T), "Select"), repeatParams);
}
template <typename T, typename U, bool isSetMask = true>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            std::type_identity_t<T> src1, SELMODE selMode, const std::uint64_t mask[2],
            std::uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {
  detail::select_scalar(dst, selMask, src0, src1, selMode, detail::bits_shape(mask, repeatTime),
                        repeatParams);
}
template <typename T, typename U, bool isSetMask = true>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            std::type_identity_t<T> src1, SELMODE selMode, std::uint64_t mask,
            std::uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {
  detail::select_scalar(dst, selMask, src0, src1, selMode,
                        detail::mask_shape(mask, repeatTime, sizeof(T), "Select"), repeatParams);
}
// Select on CMPMASK (after SetCmpMask or a Compare into it): mode 0 selects by its bits, mode 2
// reads the bits at the UB address it holds.
template <typename T, SELMODE selMode>
void Select(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,
            std::uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {
  static_assert(selMode != SELMODE::VSEL_TENSOR_SCALAR_MODE,
                "VSEL_TENSOR_SCALAR_MODE on CMPMASK is Select(dst, selMask, src0, repeatTime, "
                "repeatParams)");
  detail::VecShape shape;
  shape.repeat = repeatTime;
  const detail::Ref sel{detail::Buf::UB, detail::core().cmp_mask[0]};
  detail::select_lanes(dst, src0, &src1, T{}, selMode, sel, shape, repeatParams);
}
// Select mode 1 on CMPMASK: the scalar is CMPMASK's low sizeof(T) bytes (SetCmpMask(src1)).
template <typename T, typename U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
            std::uint8_t repeatTime, const BinaryRepeatParams& repeatParams) {
  T scalar;
  std::memcpy(&scalar, detail::core().cmp_mask.data(), sizeof(T));
  detail::VecShape shape;
  shape.repeat = repeatTime;
  detail::select_lanes(dst, src0, nullptr, scalar, SELMODE::VSEL_TENSOR_SCALAR_MODE, selMask.ref_,
                       shape, repeatParams);
}

// TransDataTo5HD: per repeat, element i of the 32-byte block of source j goes to position j of
// the block of destination i (a 16 x 16 transpose of 16-bit elements); repeats advance sources
// and destinations by their repeat strides (in 32-byte blocks). Used to turn channel rows into
// the C0-interleaved 5HD layout.
struct TransDataTo5HDParams {
  bool dstHighHalf = false;
  bool srcHighHalf = false;
  std::uint8_t repeatTimes = 1;
  std::uint16_t dstRepStride = 0;
  std::uint16_t srcRepStride = 0;
};

template <typename T>
void TransDataTo5HD(const LocalTensor<T> (&dstList)[16], const LocalTensor<T> (&srcList)[16],
                    const TransDataTo5HDParams& p) {
  static_assert(sizeof(T) == 2, "this model transposes 16-bit elements");
  detail::Core& c = detail::core();
  std::array<detail::VecOperand, 32> ops;
  for (int i = 0; i < 16; ++i) {
    ops[i] = detail::operand(dstList[i], true, 1, p.dstRepStride);
    ops[16 + i] = detail::operand(srcList[i], false, 1, p.srcRepStride);
  }
  detail::VecShape shape;
  shape.repeat = p.repeatTimes;
  shape.mask = {0xffff, 0};  // one block per operand and repeat
  c.vector("TransDataTo5HD", ops, shape);
  std::byte* ub =
      c.data(detail::Buf::UB, 0, c.memory(detail::Buf::UB).capacity(), "TransDataTo5HD");
  T block[16][16];
  for (std::uint32_t r = 0; r < p.repeatTimes; ++r) {
    for (int j = 0; j < 16; ++j)
      std::memcpy(block[j], ub + tessera::aicore::lane_address(ops[16 + j], r, 0), 32);
    for (int i = 0; i < 16; ++i) {
      T out[16];
      for (int j = 0; j < 16; ++j) out[j] = block[j][i];
      std::memcpy(ub + tessera::aicore::lane_address(ops[i], r, 0), out, 32);
    }
  }
}

// ---- Cube ----

struct LoadData2dParams {
  std::uint16_t startIndex = 0;
  std::uint8_t repeatTimes = 0;
  std::uint16_t srcStride = 0;
  std::uint8_t sid = 0;
  std::uint16_t dstGap = 0;
  bool ifTranspose = false;
  std::uint8_t addrMode = 0;
};

// Img2Col from an L1 feature map (5HD: C1 x H x W x C0) into fractals, as LoadData's 3D form:
// the window of mExtension output pixels from mStartPt and kExtension patch columns from
// kStartPt (whole fractals; 0 extensions take the whole patch matrix).
template <typename T>
struct LoadData3DParamsV2 {
  std::uint8_t padList[4] = {0, 0, 0, 0};  // left, right, top, bottom
  std::uint16_t l1H = 0, l1W = 0, channelSize = 0;
  std::uint16_t kExtension = 0, mExtension = 0, kStartPt = 0, mStartPt = 0;
  std::uint8_t strideW = 1, strideH = 1, filterW = 1, filterH = 1, dilationFilterW = 1,
               dilationFilterH = 1;
  bool enTranspose = false, enSmallK = false;
  T padValue = T(0);  // what padded positions read
};

template <typename T>
void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2dParams& p) {
  detail::core().load2d(dst.ref_, src.ref_, p.startIndex, p.repeatTimes, p.srcStride, p.dstGap,
                        p.ifTranspose);
}
template <typename T>
void LoadData(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const LoadData2dParams& p) {
  detail::core().load2d(dst.ref_, src.ref(), p.startIndex, p.repeatTimes, p.srcStride, p.dstGap,
                        p.ifTranspose);
}
template <typename T>
void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src,
              const LoadData3DParamsV2<T>& p) {
  const std::uint32_t c0 = 32 / sizeof(T);
  if (p.channelSize == 0 || p.channelSize % c0 != 0 || p.enTranspose ||
      (p.padValue != T(0) && sizeof(T) != 2))
    detail::core().fault_at(
        "LoadData 3D",
        fmt::format("channelSize {} must be a positive multiple of C0 = {}, without transpose, "
                    "and a padValue only for 16-bit elements",
                    p.channelSize, c0));
  tessera::aicore::Core::Img2Col q;
  q.c1 = p.channelSize / c0;
  q.h = p.l1H;
  q.w = p.l1W;
  q.kh = p.filterH;
  q.kw = p.filterW;
  q.stride_h = p.strideH;
  q.stride_w = p.strideW;
  q.pad_left = p.padList[0];
  q.pad_right = p.padList[1];
  q.pad_top = p.padList[2];
  q.pad_bottom = p.padList[3];
  q.dilation_h = p.dilationFilterH;
  q.dilation_w = p.dilationFilterW;
  q.elem_bytes = sizeof(T);
  q.m_start = p.mStartPt;
  q.m_count = p.mExtension;
  q.k_start = p.kStartPt;
  q.k_count = p.kExtension;
  if constexpr (sizeof(T) == 2) std::memcpy(&q.pad_bits, &p.padValue, 2);
  detail::core().img2col(dst.ref_, src.ref_, q);
}

struct MmadParams {
  std::uint16_t m = 0, n = 0, k = 0;
  bool isBias = false;
  std::int32_t fmOffset = 0;
  bool enSsparse = false, enWinogradA = false, enWinogradB = false;
  std::uint8_t unitFlag = 0;
  bool kDirectionAlign = false;
  bool cmatrixSource = false;
  bool cmatrixInitVal = true;  // true: C = A x B; false: C += A x B
};

template <typename C, typename A, typename B>
void Mmad(const LocalTensor<C>& dst, const LocalTensor<A>& a, const LocalTensor<B>& b,
          const MmadParams& p) {
  static_assert(std::is_same_v<A, B>, "Mmad: A and B have one element type");
  constexpr tessera::DType in = sizeof(A) == 1 ? tessera::DType::i8 : tessera::DType::f16;
  detail::core().mmad(dst.ref_, a.ref_, b.ref_, p.m, p.k, p.n, in, !p.cmatrixInitVal || p.isBias);
}

// Atomic accumulation into GM: after SetAtomicAdd<T>(), UB -> GM copies add their T elements
// to what GM holds; SetAtomicNone() goes back to plain writes (Ascend C "SetAtomicAdd").
template <typename T>
void SetAtomicAdd() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, half> ||
                    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int16_t> ||
                    std::is_same_v<T, std::int8_t>,
                "SetAtomicAdd takes float, half, int32_t, int16_t or int8_t");
  using tessera::DType;
  detail::core().atomic_add = std::is_same_v<T, float>          ? DType::f32
                              : std::is_same_v<T, half>         ? DType::f16
                              : std::is_same_v<T, std::int32_t> ? DType::i32
                              : std::is_same_v<T, std::int16_t> ? DType::i16
                                                                : DType::i8;
}
inline void SetAtomicNone() {
  detail::core().atomic_add.reset();
}

// Every core of the launch meets here (Ascend C "SyncAll"): GM written before it by any core is
// what every core reads after it; the wait is on each core's timeline (Core::sync_all).
template <bool isAIVOnly = true>
void SyncAll() {
  detail::core().sync_all();
}
// The software form with a GM and a UB workspace: the same meeting (the workspaces are not
// touched); usedCores is 0 or the launch's block count.
template <bool isAIVOnly = true>
void SyncAll(const GlobalTensor<std::int32_t>& gmWorkspace,
             const LocalTensor<std::int32_t>& ubWorkspace, const std::int32_t usedCores = 0) {
  (void)gmWorkspace;
  (void)ubWorkspace;
  detail::Core& c = detail::core();
  if (usedCores != 0 && static_cast<std::uint32_t>(usedCores) != c.block_num)
    c.fault_at("SyncAll", fmt::format("usedCores {} is not the launch's {} blocks; every block "
                                      "of the launch meets (pass 0)",
                                      usedCores, c.block_num));
  c.sync_all();
}

// Sets `size` elements of GM to `value` (Ascend C "InitGlobalMemory"), on MTE3: later reads of
// them on MTE2 need a flag or SyncAll after it, as on the hardware.
template <typename T>
void InitGlobalMemory(const GlobalTensor<T>& gmWorkspaceAddr, const std::uint64_t size,
                      const T value) {
  detail::core().fill_global(gmWorkspaceAddr.ref(), size * sizeof(T), &value, sizeof(T),
                             "InitGlobalMemory");
}

namespace detail {
// The kernel side of GET_TILING_DATA: the host's SaveToBuffer bytes, read from GM by the scalar
// unit (bounds-checked against the GmAlloc allocation).
template <typename T>
void load_tiling(T& out, const void* tiling) {
  const Ref r{Buf::GM, reinterpret_cast<std::uint64_t>(tiling)};
  core().scalar(r, sizeof(T), false, "GET_TILING_DATA");
  std::memcpy(&out, tiling, sizeof(T));
}
}  // namespace detail

}  // namespace AscendC

// Reads the tiling data the host wrote with SaveToBuffer (see register/tilingdata_base.h).
#define GET_TILING_DATA_WITH_STRUCT(tiling_struct, tiling_data, tiling_arg) \
  tiling_struct tiling_data;                                                \
  ::AscendC::detail::load_tiling(tiling_data, tiling_arg)
// The tiling key the host set (ICPU_SET_TILING_KEY in CPU-debug mode, SetTilingKey in CANN).
#define TILING_KEY_IS(key) (::AscendC::detail::core().tiling_key == static_cast<std::uint64_t>(key))
#define GET_TILING_DATA(tiling_data, tiling_arg) \
  GET_TILING_DATA_WITH_STRUCT(::optiling::TesseraDefaultTilingData, tiling_data, tiling_arg)

// The intrinsic forms of the synchronisation (spec 003 "Pipes").
inline void set_flag(pipe_t src, pipe_t dst, event_t id) {
  AscendC::detail::core().set_flag(AscendC::detail::to_pipe(src), AscendC::detail::to_pipe(dst),
                                   id);
}
inline void wait_flag(pipe_t src, pipe_t dst, event_t id) {
  AscendC::detail::core().wait_flag(AscendC::detail::to_pipe(src), AscendC::detail::to_pipe(dst),
                                    id);
}
inline void pipe_barrier(pipe_t pipe) {
  if (pipe == PIPE_ALL)
    AscendC::detail::core().barrier_all();
  else
    AscendC::detail::core().pipe_barrier(AscendC::detail::to_pipe(pipe));
}

// The high-level APIs CANN's kernel_operator.h brings in (Matmul has its own lib/matmul_intf.h).
#include "lib/softmax/softmax.h"
