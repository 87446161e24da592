//===- HostCpu.cpp - CPU levels of host kernels ---------------------------===//

#include "qtensor/Support/HostCpu.h"

#include "qtensor/Support/EnumSpelling.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace qtensor {

namespace {
constexpr std::pair<const char *, HostCpuLevel> kLevels[] = {
    {"generic", HostCpuLevel::Generic},
    {"x86-64-v2", HostCpuLevel::X86_64_V2},
    {"x86-64-v3", HostCpuLevel::X86_64_V3},
    {"x86-64-v4", HostCpuLevel::X86_64_V4},
    {"x86-64-v4-vnni", HostCpuLevel::X86_64_V4_VNNI},
    {"x86-64-v4-amx", HostCpuLevel::X86_64_V4_AMX},
};

#if defined(__x86_64__)
/// AMX-TILE and AMX-INT8 (CPUID.(EAX=7, ECX=0):EDX bits 24 and 25).
bool cpuHasAmxInt8() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
    return false;
  return (edx >> 24 & 1) && (edx >> 25 & 1);
}

/// Linux gives a process the AMX tile state only once it asks
/// (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, Linux 5.16);
/// before that a tile instruction faults. Asked once; every thread of the
/// process then has it.
bool osGrantsAmxTiles() {
  static const bool granted = [] {
    constexpr int kArchReqXcompPerm = 0x1023;
    constexpr int kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return granted;
}
#endif
} // namespace

const char *toString(HostCpuLevel level) { return spellEnum(level, kLevels); }

std::optional<HostCpuLevel> parseHostCpuLevel(const std::string &s) {
  return lookupEnum(s, kLevels);
}

const char *knownHostCpuLevels() {
  return "generic, x86-64-v2, x86-64-v3, x86-64-v4, x86-64-v4-vnni, "
         "x86-64-v4-amx";
}

const char *llvmCpuName(HostCpuLevel level) {
  return atLeast(level, HostCpuLevel::X86_64_V4) ? "x86-64-v4"
                                                 : toString(level);
}

const char *llvmCpuFeatures(HostCpuLevel level) {
  switch (level) {
  case HostCpuLevel::X86_64_V4_VNNI:
    return "+avx512vnni";
  case HostCpuLevel::X86_64_V4_AMX:
    return "+avx512vnni,+amx-tile,+amx-int8";
  case HostCpuLevel::Generic:
  case HostCpuLevel::X86_64_V2:
  case HostCpuLevel::X86_64_V3:
  case HostCpuLevel::X86_64_V4:
    break;
  }
  return "";
}

bool hostCpuSupports(HostCpuLevel level) {
  if (level == HostCpuLevel::Generic)
    return true;
#if defined(__x86_64__)
  __builtin_cpu_init();
  switch (level) {
  case HostCpuLevel::X86_64_V2:
    return __builtin_cpu_supports("x86-64-v2");
  case HostCpuLevel::X86_64_V3:
    return __builtin_cpu_supports("x86-64-v3");
  case HostCpuLevel::X86_64_V4:
    return __builtin_cpu_supports("x86-64-v4");
  case HostCpuLevel::X86_64_V4_VNNI:
    return __builtin_cpu_supports("x86-64-v4") &&
           __builtin_cpu_supports("avx512vnni");
  case HostCpuLevel::X86_64_V4_AMX:
    return __builtin_cpu_supports("x86-64-v4") &&
           __builtin_cpu_supports("avx512vnni") && cpuHasAmxInt8() &&
           osGrantsAmxTiles();
  case HostCpuLevel::Generic:
    break;
  }
#endif
  return false;
}

HostCpuLevel nativeHostCpuLevel() {
  for (HostCpuLevel level :
       {HostCpuLevel::X86_64_V4_AMX, HostCpuLevel::X86_64_V4_VNNI,
        HostCpuLevel::X86_64_V4, HostCpuLevel::X86_64_V3,
        HostCpuLevel::X86_64_V2})
    if (hostCpuSupports(level))
      return level;
  return HostCpuLevel::Generic;
}

HostCpuLevel defaultHostCpuLevel() {
#if defined(__x86_64__)
  return HostCpuLevel::X86_64_V3;
#else
  return HostCpuLevel::Generic;
#endif
}

Status checkHostCpu(HostCpuLevel level, const std::string &what) {
  if (hostCpuSupports(level))
    return Status::ok();
  return makeError(what, ": built for CPU level ", toString(level),
                   ", which this CPU does not run (it runs ",
                   toString(nativeHostCpuLevel()),
                   "); recompile with qtc compile --host-cpu ",
                   toString(nativeHostCpuLevel()));
}

} // namespace qtensor
