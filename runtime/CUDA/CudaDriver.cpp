//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -----------===//
//
// Types are declared here rather than taken from cuda.h so the runtime builds
// where no CUDA toolkit is installed; the values are the driver ABI's
// (CUresult 0 = success, 34 = CUDA_ERROR_STUB_LIBRARY, 100 = no device;
// attribute 75/76 = compute capability major/minor).
//
//===----------------------------------------------------------------------===//

#include "qtensor/Runtime/CudaDriver.h"

#include <dlfcn.h>

using namespace qtensor;
using namespace qtensor::runtime;

namespace {
using CUresult = int;
using CUdevice = int;
constexpr CUresult kSuccess = 0;
constexpr CUresult kStubLibrary = 34;
constexpr CUresult kNoDevice = 100;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

struct DriverApi {
  CUresult (*init)(unsigned);
  CUresult (*driverGetVersion)(int *);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceGetName)(char *, int, CUdevice);
  CUresult (*deviceGetAttribute)(int *, int, CUdevice);
  CUresult (*deviceTotalMem)(size_t *, CUdevice);
  CUresult (*getErrorName)(CUresult, const char **);
};

/// Closes the library on every exit path.
struct LibraryHandle {
  void *handle = nullptr;
  ~LibraryHandle() {
    if (handle)
      dlclose(handle);
  }
};

template <typename Fn>
bool resolve(void *library, const char *symbol, Fn &out) {
  out = reinterpret_cast<Fn>(dlsym(library, symbol));
  return out != nullptr;
}

std::string describe(const DriverApi &api, CUresult code) {
  const char *name = nullptr;
  if (api.getErrorName && api.getErrorName(code, &name) == kSuccess && name)
    return std::string(name) + " (" + std::to_string(code) + ")";
  return "CUresult " + std::to_string(code);
}
} // namespace

std::string CudaDeviceInfo::smName() const {
  return "sm_" + std::to_string(computeCapabilityMajor) +
         std::to_string(computeCapabilityMinor);
}

Expected<CudaDriverReport>
qtensor::runtime::probeCudaDriver(const std::string &libraryName) {
  LibraryHandle library;
  library.handle = dlopen(libraryName.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library.handle) {
    const char *why = dlerror();
    return makeError("no CUDA driver: cannot load ", libraryName, ": ",
                     why ? why : "unknown error");
  }
  DriverApi api{};
  if (!resolve(library.handle, "cuInit", api.init) ||
      !resolve(library.handle, "cuDriverGetVersion", api.driverGetVersion) ||
      !resolve(library.handle, "cuDeviceGetCount", api.deviceGetCount) ||
      !resolve(library.handle, "cuDeviceGet", api.deviceGet) ||
      !resolve(library.handle, "cuDeviceGetName", api.deviceGetName) ||
      !resolve(library.handle, "cuDeviceGetAttribute",
               api.deviceGetAttribute) ||
      !resolve(library.handle, "cuDeviceTotalMem_v2", api.deviceTotalMem) ||
      !resolve(library.handle, "cuGetErrorName", api.getErrorName))
    return makeError(libraryName, " lacks a driver entry point: ", dlerror());

  CUresult rc = api.init(0);
  if (rc == kStubLibrary)
    return makeError(libraryName,
                     " is the toolkit's stub library, not a driver: no GPU "
                     "can run here (CUDA_ERROR_STUB_LIBRARY)");
  if (rc == kNoDevice)
    return makeError("the CUDA driver found no device (",
                     describe(api, rc), ")");
  if (rc != kSuccess)
    return makeError("cuInit failed: ", describe(api, rc));

  CudaDriverReport report;
  if ((rc = api.driverGetVersion(&report.driverVersion)) != kSuccess)
    return makeError("cuDriverGetVersion failed: ", describe(api, rc));
  int count = 0;
  if ((rc = api.deviceGetCount(&count)) != kSuccess)
    return makeError("cuDeviceGetCount failed: ", describe(api, rc));
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device;
    if ((rc = api.deviceGet(&device, ordinal)) != kSuccess)
      return makeError("cuDeviceGet(", ordinal, ") failed: ",
                       describe(api, rc));
    CudaDeviceInfo info;
    info.ordinal = ordinal;
    char name[256] = {};
    if ((rc = api.deviceGetName(name, sizeof(name) - 1, device)) != kSuccess)
      return makeError("cuDeviceGetName(", ordinal, ") failed: ",
                       describe(api, rc));
    info.name = name;
    if ((rc = api.deviceGetAttribute(&info.computeCapabilityMajor,
                                     kAttrComputeCapabilityMajor, device)) !=
            kSuccess ||
        (rc = api.deviceGetAttribute(&info.computeCapabilityMinor,
                                     kAttrComputeCapabilityMinor, device)) !=
            kSuccess)
      return makeError("cuDeviceGetAttribute(", ordinal, ") failed: ",
                       describe(api, rc));
    size_t bytes = 0;
    if ((rc = api.deviceTotalMem(&bytes, device)) != kSuccess)
      return makeError("cuDeviceTotalMem(", ordinal, ") failed: ",
                       describe(api, rc));
    info.totalMemoryBytes = bytes;
    report.devices.push_back(std::move(info));
  }
  if (report.devices.empty())
    return makeError("the CUDA driver reports no device");
  return report;
}
