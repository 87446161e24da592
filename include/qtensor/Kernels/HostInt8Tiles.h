//===- HostInt8Tiles.h - Which host GEMMs multiply prefill on AMX -*- C++ -*-===//
//
// The host GEMM with int8 activations (affine_gemm_host_xq8) quantizes X
// per 32 at T = 1 everywhere. Built for x86-64-v4-amx it also runs T > 1 on
// AMX int8 tiles, and so quantizes X at every T, for the code forms whose
// products are plain bytes: signed codes (tdpbssd) and unsigned codes with
// a min or an integer zero-point (tdpbusd; the min or z meets X's sums
// apart). The kernel builder, the
// runtime's reference (which X a kernel multiplies) and the parity tests
// ask this one predicate, so they cannot disagree.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_KERNELS_HOSTINT8TILES_H
#define QTENSOR_KERNELS_HOSTINT8TILES_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Support/HostCpu.h"

#include <cstdint>

namespace qtensor::kernels {

/// The code form of a host GEMM, as its spec and its record give it.
struct HostGemmCodes {
  bool codeSigned = false; ///< signed codes: no zero-point of any kind
  bool minZero = false;    ///< a float min (ggml Q4_1, Q4_K, ...)
  Codebook codebook = Codebook::None;
  int64_t groupSize = 0; ///< 0: per output channel
  int64_t k = 0;
};

/// Whether the int8-activation host GEMM built for `cpu` runs T > 1 on AMX
/// tiles (and quantizes X at every T): x86-64-v4-amx; signed codes, or
/// unsigned codes with a min (Q4_K, Q5_K, Q4_1, Q2_K) or an integer
/// zero-point (GPTQ, AWQ, `asym`), never a codebook; groups of 16 or of
/// whole 32s (or per channel),
/// so each tile step has one weight scale and one activation scale; and K
/// a multiple of 32 (no padded code inside a tile).
bool hostGemmUsesInt8Tiles(HostCpuLevel cpu, const HostGemmCodes &codes);

/// Tokens and weight rows of one AMX tile product (16 x 16 i32).
inline constexpr int64_t kInt8TileRows = 16;
/// The codes of one tile step: 16 for groups of 16 (Q6_K, Q3_K, Q2_K),
/// else 32 (one activation block).
int64_t int8TileDepth(int64_t groupSize);

} // namespace qtensor::kernels

#endif // QTENSOR_KERNELS_HOSTINT8TILES_H
