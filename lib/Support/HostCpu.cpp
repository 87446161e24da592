//===- HostCpu.cpp - CPU levels of host kernels ---------------------------===//

#include "qtensor/Support/HostCpu.h"

#include "qtensor/Support/EnumSpelling.h"

namespace qtensor {

namespace {
constexpr std::pair<const char *, HostCpuLevel> kLevels[] = {
    {"generic", HostCpuLevel::Generic},
    {"x86-64-v2", HostCpuLevel::X86_64_V2},
    {"x86-64-v3", HostCpuLevel::X86_64_V3},
    {"x86-64-v4", HostCpuLevel::X86_64_V4},
    {"x86-64-v4-vnni", HostCpuLevel::X86_64_V4_VNNI},
};
} // namespace

const char *toString(HostCpuLevel level) { return spellEnum(level, kLevels); }

std::optional<HostCpuLevel> parseHostCpuLevel(const std::string &s) {
  return lookupEnum(s, kLevels);
}

const char *knownHostCpuLevels() {
  return "generic, x86-64-v2, x86-64-v3, x86-64-v4, x86-64-v4-vnni";
}

const char *llvmCpuName(HostCpuLevel level) {
  return level == HostCpuLevel::X86_64_V4_VNNI ? "x86-64-v4" : toString(level);
}

const char *llvmCpuFeatures(HostCpuLevel level) {
  return level == HostCpuLevel::X86_64_V4_VNNI ? "+avx512vnni" : "";
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
  case HostCpuLevel::Generic:
    break;
  }
#endif
  return false;
}

HostCpuLevel nativeHostCpuLevel() {
  for (HostCpuLevel level :
       {HostCpuLevel::X86_64_V4_VNNI, HostCpuLevel::X86_64_V4,
        HostCpuLevel::X86_64_V3, HostCpuLevel::X86_64_V2})
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
