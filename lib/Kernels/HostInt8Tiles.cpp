//===- HostInt8Tiles.cpp - Which host GEMMs multiply prefill on AMX -------===//

#include "qtensor/Kernels/HostInt8Tiles.h"

#include "qtensor/Numerics/ActivationQuant.h"

namespace qtensor::kernels {

static_assert(kInt8TileDepth == kActivationBlock,
              "a tile step is one activation block: one scale per token");

bool hostGemmUsesInt8Tiles(HostCpuLevel cpu, const HostGemmCodes &codes) {
  return cpu == HostCpuLevel::X86_64_V4_AMX && codes.codeSigned &&
         !codes.minZero && codes.codebook == Codebook::None &&
         codes.groupSize % kInt8TileDepth == 0 &&
         codes.k % kInt8TileDepth == 0 && codes.k > 0;
}

} // namespace qtensor::kernels
