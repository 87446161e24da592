//===- DriverApi.cpp - The CUDA driver entry points, resolved with dlsym --===//

#include "DriverApi.h"

#include <dlfcn.h>

using namespace qtensor;
using namespace qtensor::runtime::cuda;

namespace {
template <typename Fn>
bool resolve(void *library, const char *symbol, Fn &out) {
  out = reinterpret_cast<Fn>(dlsym(library, symbol));
  return out != nullptr;
}
} // namespace

Expected<std::shared_ptr<DriverLibrary>>
DriverLibrary::open(const std::string &libraryName) {
  std::shared_ptr<DriverLibrary> lib(new DriverLibrary());
  lib->libraryName = libraryName;
  lib->handle = dlopen(libraryName.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle) {
    const char *why = dlerror();
    return makeError("no CUDA driver: cannot load ", libraryName, ": ",
                     why ? why : "unknown error");
  }
  DriverApi &a = lib->table;
  struct Entry {
    const char *symbol;
    bool ok;
  };
  void *h = lib->handle;
  const Entry entries[] = {
      {"cuInit", resolve(h, "cuInit", a.init)},
      {"cuDriverGetVersion",
       resolve(h, "cuDriverGetVersion", a.driverGetVersion)},
      {"cuDeviceGetCount", resolve(h, "cuDeviceGetCount", a.deviceGetCount)},
      {"cuDeviceGet", resolve(h, "cuDeviceGet", a.deviceGet)},
      {"cuDeviceGetName", resolve(h, "cuDeviceGetName", a.deviceGetName)},
      {"cuDeviceGetAttribute",
       resolve(h, "cuDeviceGetAttribute", a.deviceGetAttribute)},
      {"cuDeviceTotalMem_v2",
       resolve(h, "cuDeviceTotalMem_v2", a.deviceTotalMem)},
      {"cuGetErrorName", resolve(h, "cuGetErrorName", a.getErrorName)},
      {"cuGetErrorString", resolve(h, "cuGetErrorString", a.getErrorString)},
      {"cuDevicePrimaryCtxRetain",
       resolve(h, "cuDevicePrimaryCtxRetain", a.primaryCtxRetain)},
      {"cuDevicePrimaryCtxRelease_v2",
       resolve(h, "cuDevicePrimaryCtxRelease_v2", a.primaryCtxRelease)},
      {"cuCtxSetCurrent", resolve(h, "cuCtxSetCurrent", a.ctxSetCurrent)},
      {"cuCtxSynchronize", resolve(h, "cuCtxSynchronize", a.ctxSynchronize)},
      {"cuModuleLoadDataEx",
       resolve(h, "cuModuleLoadDataEx", a.moduleLoadDataEx)},
      {"cuModuleGetFunction",
       resolve(h, "cuModuleGetFunction", a.moduleGetFunction)},
      {"cuModuleUnload", resolve(h, "cuModuleUnload", a.moduleUnload)},
      {"cuFuncSetAttribute",
       resolve(h, "cuFuncSetAttribute", a.funcSetAttribute)},
      {"cuMemAlloc_v2", resolve(h, "cuMemAlloc_v2", a.memAlloc)},
      {"cuMemFree_v2", resolve(h, "cuMemFree_v2", a.memFree)},
      {"cuMemcpyHtoD_v2", resolve(h, "cuMemcpyHtoD_v2", a.memcpyHtoD)},
      {"cuMemcpyDtoH_v2", resolve(h, "cuMemcpyDtoH_v2", a.memcpyDtoH)},
      {"cuMemsetD8_v2", resolve(h, "cuMemsetD8_v2", a.memsetD8)},
      {"cuLaunchKernel", resolve(h, "cuLaunchKernel", a.launchKernel)},
  };
  for (const Entry &e : entries)
    if (!e.ok)
      return makeError(libraryName, " lacks the driver entry point ", e.symbol);
  return lib;
}

DriverLibrary::~DriverLibrary() {
  if (handle)
    dlclose(handle);
}

std::string DriverLibrary::describe(CUresult code) const {
  const char *name = nullptr, *text = nullptr;
  std::string out;
  if (table.getErrorName && table.getErrorName(code, &name) == kSuccess && name)
    out = std::string(name) + " (" + std::to_string(code) + ")";
  else
    out = "CUresult " + std::to_string(code);
  if (table.getErrorString && table.getErrorString(code, &text) == kSuccess &&
      text)
    out += ": " + std::string(text);
  return out;
}
