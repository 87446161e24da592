//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// The runtime reaches CUDA through libcuda.so.1 opened with dlopen, so it
// builds, starts and reports "no GPU" cleanly on machines without a driver
// (DESIGN.md, "The runtime"). Only the entry points in use are resolved.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_CUDADRIVER_H
#define QTENSOR_RUNTIME_CUDADRIVER_H

#include "qtensor/Support/Expected.h"

#include <string>
#include <vector>

namespace qtensor::runtime {

/// One visible device.
struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;
  int computeCapabilityMajor = 0;
  int computeCapabilityMinor = 0;
  unsigned long long totalMemoryBytes = 0;

  /// "sm_90" for compute capability 9.0.
  std::string smName() const;
};

/// What the driver reports: its version and devices.
struct CudaDriverReport {
  int driverVersion = 0; ///< e.g. 13000 for CUDA 13.0
  std::vector<CudaDeviceInfo> devices;
};

/// Loads the driver (`libraryName`, default libcuda.so.1), initializes it and
/// lists devices. Errors say what is missing: no library, a stub library
/// (CUDA_ERROR_STUB_LIBRARY), no device, or the failing call and its code.
Expected<CudaDriverReport>
probeCudaDriver(const std::string &libraryName = "libcuda.so.1");

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_CUDADRIVER_H
