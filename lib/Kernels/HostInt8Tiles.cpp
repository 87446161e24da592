//===- HostInt8Tiles.cpp - Which host GEMMs multiply prefill on AMX -------===//

#include "qtensor/Kernels/HostInt8Tiles.h"

#include "qtensor/Numerics/ActivationQuant.h"

namespace qtensor::kernels {

bool hostGemmUsesInt8Tiles(HostCpuLevel cpu, const HostGemmCodes &codes) {
  // Signed codes, or unsigned fields with a min or an integer zero-point:
  // every form but a codebook's.
  const bool bytes = codes.codebook == Codebook::None;
  const bool groups =
      codes.groupSize == 16 || codes.groupSize % kActivationBlock == 0;
  return cpu == HostCpuLevel::X86_64_V4_AMX && bytes && groups && codes.k > 0 &&
         codes.k % kActivationBlock == 0;
}

int64_t int8TileDepth(int64_t groupSize) {
  return groupSize == 16 ? 16 : kActivationBlock;
}

} // namespace qtensor::kernels
