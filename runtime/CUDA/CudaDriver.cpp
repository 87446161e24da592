//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -----------===//
//
// The driver is opened through DriverApi.h (dlopen + dlsym, no cuda.h), so
// the runtime builds where no CUDA toolkit is installed and reports "no
// GPU" cleanly where no driver is.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Runtime/CudaDriver.h"

#include "DriverApi.h"

using namespace qtensor;
using namespace qtensor::runtime;
using namespace qtensor::runtime::cuda;

std::string CudaDeviceInfo::smName() const {
  return "sm_" + std::to_string(computeCapabilityMajor) +
         std::to_string(computeCapabilityMinor);
}

Status qtensor::runtime::initCudaDriver(const DriverLibrary &lib) {
  const DriverApi &api = lib.api();
  CUresult rc = api.init(0);
  if (rc == kStubLibrary)
    return makeError(lib.name(),
                     " is the toolkit's stub library, not a driver: no GPU "
                     "can run here (CUDA_ERROR_STUB_LIBRARY)");
  if (rc == kNoDevice)
    return makeError("the CUDA driver found no device (", lib.describe(rc),
                     ")");
  if (rc != kSuccess)
    return makeError("cuInit failed: ", lib.describe(rc));
  return Status::ok();
}

Expected<CudaDeviceInfo>
qtensor::runtime::queryCudaDevice(const DriverLibrary &lib, int ordinal) {
  const DriverApi &api = lib.api();
  CUresult rc;
  CUdevice device;
  if ((rc = api.deviceGet(&device, ordinal)) != kSuccess)
    return makeError("cuDeviceGet(", ordinal, ") failed: ", lib.describe(rc));
  CudaDeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  if ((rc = api.deviceGetName(name, sizeof(name) - 1, device)) != kSuccess)
    return makeError("cuDeviceGetName(", ordinal,
                     ") failed: ", lib.describe(rc));
  info.name = name;
  if ((rc = api.deviceGetAttribute(&info.computeCapabilityMajor,
                                   kAttrComputeCapabilityMajor, device)) !=
          kSuccess ||
      (rc = api.deviceGetAttribute(&info.computeCapabilityMinor,
                                   kAttrComputeCapabilityMinor, device)) !=
          kSuccess)
    return makeError("cuDeviceGetAttribute(", ordinal,
                     ") failed: ", lib.describe(rc));
  size_t bytes = 0;
  if ((rc = api.deviceTotalMem(&bytes, device)) != kSuccess)
    return makeError("cuDeviceTotalMem(", ordinal,
                     ") failed: ", lib.describe(rc));
  info.totalMemoryBytes = bytes;
  return info;
}

Expected<CudaDriverReport>
qtensor::runtime::probeCudaDriver(const std::string &libraryName) {
  QTENSOR_ASSIGN_OR_RETURN(std::shared_ptr<DriverLibrary> lib,
                           DriverLibrary::open(libraryName));
  QTENSOR_TRY(initCudaDriver(*lib));
  const DriverApi &api = lib->api();
  CudaDriverReport report;
  CUresult rc;
  if ((rc = api.driverGetVersion(&report.driverVersion)) != kSuccess)
    return makeError("cuDriverGetVersion failed: ", lib->describe(rc));
  int count = 0;
  if ((rc = api.deviceGetCount(&count)) != kSuccess)
    return makeError("cuDeviceGetCount failed: ", lib->describe(rc));
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    QTENSOR_ASSIGN_OR_RETURN(CudaDeviceInfo info,
                             queryCudaDevice(*lib, ordinal));
    report.devices.push_back(std::move(info));
  }
  if (report.devices.empty())
    return makeError("the CUDA driver reports no device");
  return report;
}
