//===- DriverApi.h - The CUDA driver entry points, resolved with dlsym ----===//
//
// Private to runtime/CUDA. Types are declared here rather than taken from
// cuda.h so the runtime builds where no CUDA toolkit is installed; the
// values are the driver ABI's (CUresult 0 = success, 34 =
// CUDA_ERROR_STUB_LIBRARY, 100 = no device). Versioned entry points are
// resolved by the names cuda.h maps them to (cuMemAlloc -> cuMemAlloc_v2).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_CUDA_DRIVERAPI_H
#define QTENSOR_RUNTIME_CUDA_DRIVERAPI_H

#include "qtensor/Runtime/CudaDriver.h"
#include "qtensor/Support/Expected.h"

#include <cstddef>
#include <memory>
#include <string>

namespace qtensor::runtime::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;

constexpr CUresult kSuccess = 0;
constexpr CUresult kStubLibrary = 34;
constexpr CUresult kNoDevice = 100;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kFuncAttrMaxDynamicSharedBytes = 8;
constexpr int kJitInfoLogBuffer = 3;
constexpr int kJitInfoLogBufferSize = 4;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSize = 6;

struct DriverApi {
  CUresult (*init)(unsigned);
  CUresult (*driverGetVersion)(int *);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceGetName)(char *, int, CUdevice);
  CUresult (*deviceGetAttribute)(int *, int, CUdevice);
  CUresult (*deviceTotalMem)(size_t *, CUdevice);
  CUresult (*getErrorName)(CUresult, const char **);
  CUresult (*getErrorString)(CUresult, const char **);
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*primaryCtxRelease)(CUdevice);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*ctxSynchronize)();
  CUresult (*moduleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                               void **);
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*moduleUnload)(CUmodule);
  CUresult (*funcSetAttribute)(CUfunction, int, int);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*memcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*memsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void **,
                           void **);
};

/// The opened library and its entry points; closes it when the last user
/// goes.
class DriverLibrary {
public:
  /// dlopen + dlsym of every entry point above; cuInit is not called.
  static Expected<std::shared_ptr<DriverLibrary>>
  open(const std::string &libraryName);
  ~DriverLibrary();
  DriverLibrary(const DriverLibrary &) = delete;
  DriverLibrary &operator=(const DriverLibrary &) = delete;

  const DriverApi &api() const { return table; }
  const std::string &name() const { return libraryName; }
  /// "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory".
  std::string describe(CUresult code) const;

private:
  DriverLibrary() = default;
  void *handle = nullptr;
  std::string libraryName;
  DriverApi table{};
};

} // namespace qtensor::runtime::cuda

namespace qtensor::runtime {
/// cuInit(0), with the stub library and "no device" named as such.
Status initCudaDriver(const cuda::DriverLibrary &lib);
/// Name, compute capability and memory of device `ordinal`.
Expected<CudaDeviceInfo> queryCudaDevice(const cuda::DriverLibrary &lib,
                                         int ordinal);
} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_CUDA_DRIVERAPI_H
