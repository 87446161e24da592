//===- AddressSpaceLimit.h - RLIMIT_AS for death-test children --*- C++ -*-===//
//
// Tests of what happens under an address-space limit (`ulimit -v`) set it
// in a death-test child, a little above what the child already maps.
// Sanitizers reserve terabytes of address space, so under them these tests
// are not built (QTENSOR_SANITIZED).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_TEST_UNITTESTS_ADDRESSSPACELIMIT_H
#define QTENSOR_TEST_UNITTESTS_ADDRESSSPACELIMIT_H

#include <cstdint>
#include <fstream>
#include <string>
#include <sys/resource.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define QTENSOR_SANITIZED 1
#endif
#endif

namespace qtensor::test {

/// Limits this process's address space to what it maps now (VmSize) plus
/// `headroom` bytes.
inline void limitAddressSpaceTo(uint64_t headroom) {
  std::ifstream status("/proc/self/status");
  std::string line;
  uint64_t kib = 0;
  while (std::getline(status, line))
    if (line.rfind("VmSize:", 0) == 0)
      kib = std::stoull(line.substr(7));
  rlim_t bytes = rlim_t((kib << 10) + headroom);
  rlimit limit{bytes, bytes};
  ::setrlimit(RLIMIT_AS, &limit);
}

} // namespace qtensor::test

#endif // QTENSOR_TEST_UNITTESTS_ADDRESSSPACELIMIT_H
