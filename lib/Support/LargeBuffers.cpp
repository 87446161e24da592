//===- LargeBuffers.cpp - Reuse of tensor-sized heap buffers --------------===//

#include "qtensor/Support/LargeBuffers.h"

#include <cstdlib> // defines __GLIBC__ under glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace qtensor {

void keepLargeBuffersForReuse() {
#if defined(__GLIBC__)
  constexpr int kLargest = 1 << 30;
  // Served from the heap up to 1 GiB, and up to 1 GiB of freed memory at
  // its top is kept rather than returned (and faulted in again).
  ::mallopt(M_MMAP_THRESHOLD, kLargest);
  ::mallopt(M_TRIM_THRESHOLD, kLargest);
#endif
}

} // namespace qtensor
