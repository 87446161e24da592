//===- HostCpu.h - The CPU level host kernels are built for -----*- C++ -*-===//
//
// Host kernels are compiled for one CPU level: `generic` (the target's
// baseline: SSE2 on x86-64) or an x86-64 micro-architecture level
// (`x86-64-v2`: SSE4.2, POPCNT; `x86-64-v3`: AVX2, FMA, F16C, BMI2;
// `x86-64-v4`: AVX-512 F/BW/CD/DQ/VL; `x86-64-v4-vnni`: and AVX-512 VNNI,
// as Cascade Lake, Ice Lake, Sapphire Rapids and Zen 4 have;
// `x86-64-v4-amx`: and AMX-TILE and AMX-INT8, as Sapphire Rapids and later
// Xeons have, the process granted the tile state by Linux). The level
// gives LLVM's CPU name and features for the host object and is recorded
// with the code (each host kernel entry, the
// decoder program), so a runtime on a CPU without those instructions refuses
// the artifact with the reason instead of faulting on an illegal
// instruction.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_SUPPORT_HOSTCPU_H
#define QTENSOR_SUPPORT_HOSTCPU_H

#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <optional>
#include <string>

namespace qtensor {

enum class HostCpuLevel : uint8_t {
  Generic,
  X86_64_V2,
  X86_64_V3,
  X86_64_V4,
  X86_64_V4_VNNI,
  X86_64_V4_AMX,
};

/// "generic", "x86-64-v2", "x86-64-v3", "x86-64-v4", "x86-64-v4-vnni",
/// "x86-64-v4-amx".
const char *toString(HostCpuLevel level);
std::optional<HostCpuLevel> parseHostCpuLevel(const std::string &s);
/// "generic, x86-64-v2, x86-64-v3, x86-64-v4, x86-64-v4-vnni", for
/// messages.
const char *knownHostCpuLevels();

/// LLVM's CPU name for the level (x86-64-v4 for the levels above it) and
/// the features it adds to it ("+avx512vnni" for x86-64-v4-vnni, and
/// "+amx-tile,+amx-int8" for x86-64-v4-amx, else none).
const char *llvmCpuName(HostCpuLevel level);
const char *llvmCpuFeatures(HostCpuLevel level);
/// Whether code built for `level` may use `base`'s instructions (the
/// levels are ordered: each has every instruction of those below it).
inline bool atLeast(HostCpuLevel level, HostCpuLevel base) {
  return static_cast<uint8_t>(level) >= static_cast<uint8_t>(base);
}

/// Whether this process's CPU runs code built for `level`. For
/// x86-64-v4-amx this asks Linux for the AMX tile state (once), which the
/// process must hold before a tile instruction runs.
bool hostCpuSupports(HostCpuLevel level);
/// The highest level this CPU runs.
HostCpuLevel nativeHostCpuLevel();
/// What artifacts are compiled for unless told otherwise: x86-64-v3 on
/// x86-64 (AVX2 and FMA, about every x86 server since 2015), generic
/// elsewhere.
HostCpuLevel defaultHostCpuLevel();

/// An error naming `what` (the artifact file or entry) unless this CPU
/// runs `level`.
Status checkHostCpu(HostCpuLevel level, const std::string &what);

} // namespace qtensor

#endif // QTENSOR_SUPPORT_HOSTCPU_H
