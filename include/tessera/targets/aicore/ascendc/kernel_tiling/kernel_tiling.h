// TCubeTiling and SoftMaxTiling, the tilings of the Matmul and SoftMax APIs a kernel reads (CANN's
// kernel_tiling/kernel_tiling.h): 32-bit fields in the order of CANN's host class
// optiling::TCubeTiling (asc-devkit lib/matmul/matmul_tilingdata.h), so the bytes SaveToBuffer
// writes on the host are this struct.
#pragma once

#include <cstdint>

// X(field) for every field, in CANN's order; the host class (tiling/tiling_api.h) uses it too.
#define TESSERA_TCUBE_TILING_FIELDS(X)                                                          \
  X(usedCoreNum)                                                                                \
  X(M) X(N) X(Ka) X(Kb) X(singleCoreM) X(singleCoreN) X(singleCoreK) X(baseM) X(baseN) X(baseK) \
      X(depthA1) X(depthB1) X(stepM) X(stepN) X(isBias) X(transLength) X(iterateOrder)          \
          X(shareMode) X(shareL1Size) X(shareL0CSize) X(shareUbSize) X(batchM) X(batchN)        \
              X(singleBatchM) X(singleBatchN) X(stepKa) X(stepKb) X(depthAL1CacheUB)            \
                  X(depthBL1CacheUB) X(dbL0A) X(dbL0B) X(dbL0C) X(ALayoutInfoB) X(ALayoutInfoS) \
                      X(ALayoutInfoN) X(ALayoutInfoG) X(ALayoutInfoD) X(BLayoutInfoB)           \
                          X(BLayoutInfoS) X(BLayoutInfoN) X(BLayoutInfoG) X(BLayoutInfoD)       \
                              X(CLayoutInfoB) X(CLayoutInfoS1) X(CLayoutInfoN) X(CLayoutInfoG)  \
                                  X(CLayoutInfoS2) X(BatchNum) X(mxTypePara)

// Matrix formats: kernels write CubeFormat::ND in MatmulType, hosts matmul_tiling::CubeFormat::ND
// (one type, so a file that sees both names never finds them ambiguous).
enum class CubeFormat : std::int32_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };

#define TESSERA_TCUBE_TILING_MEMBER(name) std::int32_t name = 0;
struct TCubeTiling {
  TESSERA_TCUBE_TILING_FIELDS(TESSERA_TCUBE_TILING_MEMBER)
};
#undef TESSERA_TCUBE_TILING_MEMBER

// SoftMaxTiling's 32-bit fields in the order of CANN's host class (softmax_tilingdata.h).
#define TESSERA_SOFTMAX_TILING_FIELDS(X)                                                  \
  X(srcM)                                                                                 \
  X(srcK) X(srcSize) X(outMaxM) X(outMaxK) X(outMaxSize) X(splitM) X(splitK) X(splitSize) \
      X(reduceM) X(reduceK) X(reduceSize) X(rangeM) X(tailM) X(tailSplitSize) X(tailReduceSize)

#define TESSERA_SOFTMAX_TILING_MEMBER(name) std::uint32_t name = 0;
struct SoftMaxTiling {
  TESSERA_SOFTMAX_TILING_FIELDS(TESSERA_SOFTMAX_TILING_MEMBER)
};
#undef TESSERA_SOFTMAX_TILING_MEMBER
