//===- CudaDevice.cpp - One GPU through the run-time loaded driver --------===//

#include "qtensor/Runtime/CudaDevice.h"

#include "DriverApi.h"

#include <climits>
#include <cstring>

using namespace qtensor;
using namespace qtensor::runtime;
using namespace qtensor::runtime::cuda;

Expected<std::unique_ptr<CudaDevice>>
CudaDevice::open(int ordinal, const std::string &libraryName) {
  std::unique_ptr<CudaDevice> d(new CudaDevice());
  QTENSOR_ASSIGN_OR_RETURN(d->lib, DriverLibrary::open(libraryName));
  QTENSOR_TRY(initCudaDriver(*d->lib));
  const DriverApi &api = d->lib->api();
  int count = 0;
  if (int rc = api.deviceGetCount(&count); rc != kSuccess)
    return makeError("cuDeviceGetCount failed: ", d->lib->describe(rc));
  if (ordinal < 0 || ordinal >= count)
    return makeError("CUDA device ", ordinal, " does not exist (", count,
                     " device", count == 1 ? "" : "s", " visible)");
  QTENSOR_ASSIGN_OR_RETURN(d->device, queryCudaDevice(*d->lib, ordinal));
  CUdevice dev;
  QTENSOR_TRY(d->check(api.deviceGet(&dev, ordinal), "cuDeviceGet",
                       "device " + std::to_string(ordinal)));
  d->handle = dev;
  CUcontext ctx = nullptr;
  QTENSOR_TRY(d->check(api.primaryCtxRetain(&ctx, dev),
                       "cuDevicePrimaryCtxRetain",
                       "device " + std::to_string(ordinal)));
  d->context = ctx;
  QTENSOR_TRY(d->makeCurrent());
  return d;
}

CudaDevice::~CudaDevice() {
  if (!lib)
    return;
  const DriverApi &api = lib->api();
  if (context) {
    (void)api.ctxSetCurrent(static_cast<CUcontext>(context));
    for (DevicePtr p : allocations)
      (void)api.memFree(p);
    for (Module m : modules)
      (void)api.moduleUnload(static_cast<CUmodule>(m));
    (void)api.primaryCtxRelease(handle);
  }
}

kernels::Target CudaDevice::target() const {
  uint32_t cap = uint32_t(device.computeCapabilityMajor * 10 +
                          device.computeCapabilityMinor);
  return {device.smName(), kernels::Backend::Cuda, cap};
}

Status CudaDevice::check(int rc, const char *call,
                         const std::string &what) const {
  if (rc == kSuccess)
    return Status::ok();
  return makeError(call, " (", what, ") failed: ", lib->describe(rc));
}

Status CudaDevice::makeCurrent() const {
  return check(lib->api().ctxSetCurrent(static_cast<CUcontext>(context)),
               "cuCtxSetCurrent", device.name);
}

Expected<CudaDevice::Module> CudaDevice::loadModule(const uint8_t *image,
                                                    size_t size, bool isPtx,
                                                    const std::string &name) {
  QTENSOR_TRY(makeCurrent());
  // PTX is text the JIT reads up to a NUL; a cubin is used as is.
  std::vector<uint8_t> text;
  const void *data = image;
  if (isPtx) {
    if (std::memchr(image, 0, size))
      return makeError(name, ": PTX text contains a NUL byte");
    text.assign(image, image + size);
    text.push_back(0);
    data = text.data();
  }
  char errorLog[8192] = {};
  char infoLog[4096] = {};
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize,
                   kJitInfoLogBuffer, kJitInfoLogBufferSize};
  void *values[] = {errorLog, reinterpret_cast<void *>(sizeof(errorLog) - 1),
                    infoLog, reinterpret_cast<void *>(sizeof(infoLog) - 1)};
  CUmodule module = nullptr;
  int rc = lib->api().moduleLoadDataEx(&module, data, 4, options, values);
  if (rc != kSuccess) {
    std::string log(errorLog);
    return makeError("cuModuleLoadDataEx (", name,
                     ") failed: ", lib->describe(rc),
                     log.empty() ? std::string() : "; JIT log: " + log);
  }
  modules.push_back(module);
  return static_cast<Module>(module);
}

Expected<CudaDevice::Function>
CudaDevice::function(Module module, const std::string &symbol,
                     const std::string &moduleName) {
  CUfunction f = nullptr;
  QTENSOR_TRY(check(lib->api().moduleGetFunction(
                        &f, static_cast<CUmodule>(module), symbol.c_str()),
                    "cuModuleGetFunction", moduleName + ": " + symbol));
  return static_cast<Function>(f);
}

Expected<CudaDevice::DevicePtr> CudaDevice::allocate(uint64_t bytes,
                                                     const std::string &what) {
  QTENSOR_TRY(makeCurrent());
  CUdeviceptr p = 0;
  // cuMemAlloc refuses 0 bytes; a 1-byte allocation keeps pointers valid.
  QTENSOR_TRY(check(lib->api().memAlloc(&p, bytes ? bytes : 1), "cuMemAlloc",
                    what + ", " + std::to_string(bytes) + " bytes"));
  allocations.insert(p);
  return DevicePtr(p);
}

Status CudaDevice::free(DevicePtr ptr) {
  if (!allocations.erase(ptr))
    return makeError("cuMemFree: 0x", std::to_string(ptr),
                     " is not an allocation of this device");
  return check(lib->api().memFree(ptr), "cuMemFree", device.name);
}

Status CudaDevice::copyToDevice(DevicePtr dst, const void *src, uint64_t bytes,
                                const std::string &what) {
  if (!bytes)
    return Status::ok();
  return check(lib->api().memcpyHtoD(dst, src, bytes), "cuMemcpyHtoD", what);
}

Status CudaDevice::copyToHost(void *dst, DevicePtr src, uint64_t bytes,
                              const std::string &what) {
  if (!bytes)
    return Status::ok();
  return check(lib->api().memcpyDtoH(dst, src, bytes), "cuMemcpyDtoH", what);
}

Status CudaDevice::zero(DevicePtr dst, uint64_t bytes,
                        const std::string &what) {
  if (!bytes)
    return Status::ok();
  return check(lib->api().memsetD8(dst, 0, bytes), "cuMemsetD8", what);
}

Status CudaDevice::launch(Function f, const std::array<int64_t, 3> &grid,
                          const std::array<int64_t, 3> &block,
                          uint64_t sharedBytes, void **params,
                          const std::string &what) {
  for (int i = 0; i < 3; ++i)
    if (grid[i] < 1 || grid[i] > INT_MAX || block[i] < 1 || block[i] > 1024)
      return makeError("cuLaunchKernel (", what, "): grid or block dimension ",
                       i, " out of range");
  if (sharedBytes > 48 * 1024)
    QTENSOR_TRY(check(lib->api().funcSetAttribute(
                          static_cast<CUfunction>(f),
                          kFuncAttrMaxDynamicSharedBytes, int(sharedBytes)),
                      "cuFuncSetAttribute", what));
  return check(lib->api().launchKernel(
                   static_cast<CUfunction>(f), unsigned(grid[0]),
                   unsigned(grid[1]), unsigned(grid[2]), unsigned(block[0]),
                   unsigned(block[1]), unsigned(block[2]),
                   unsigned(sharedBytes), nullptr, params, nullptr),
               "cuLaunchKernel", what);
}

Status CudaDevice::synchronize(const std::string &what) {
  return check(lib->api().ctxSynchronize(), "cuCtxSynchronize", what);
}
