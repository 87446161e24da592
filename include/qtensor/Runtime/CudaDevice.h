//===- CudaDevice.h - One GPU through the dlopen'ed driver -----*- C++ -*-===//
//
// The CUDA backend's view of a device: its primary context, modules loaded
// from PTX or cubin images (cuModuleLoadDataEx, with the JIT's error log in
// the message when PTX does not assemble), device memory, copies, launches
// and synchronization. The driver is dlopen'ed (CudaDriver.h), so this
// builds and links without CUDA headers or libraries and fails with a
// sentence where no GPU is. Every CUresult is checked; an error names the
// call, what it was for, and the driver's name and text for the code.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_CUDADEVICE_H
#define QTENSOR_RUNTIME_CUDADEVICE_H

#include "qtensor/Kernels/Capability.h"
#include "qtensor/Runtime/CudaDriver.h"
#include "qtensor/Support/Expected.h"

#include <array>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace qtensor::runtime {

namespace cuda {
class DriverLibrary;
}

class CudaDevice {
public:
  using Module = void *;
  using Function = void *;
  using DevicePtr = uint64_t;

  /// Loads the driver, initializes it and retains device `ordinal`'s
  /// primary context.
  static Expected<std::unique_ptr<CudaDevice>>
  open(int ordinal = 0, const std::string &libraryName = "libcuda.so.1");
  /// Frees every allocation still held, unloads modules, releases the
  /// context.
  ~CudaDevice();
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;

  const CudaDeviceInfo &info() const { return device; }
  /// "sm_90", backend cuda, capability 90.
  kernels::Target target() const;

  /// A PTX text (`isPtx`; need not be NUL-terminated) or a cubin image.
  Expected<Module> loadModule(const uint8_t *image, size_t size, bool isPtx,
                              const std::string &name);
  Expected<Function> function(Module module, const std::string &symbol,
                              const std::string &moduleName);
  Expected<DevicePtr> allocate(uint64_t bytes, const std::string &what);
  Status free(DevicePtr ptr);
  Status copyToDevice(DevicePtr dst, const void *src, uint64_t bytes,
                      const std::string &what);
  Status copyToHost(void *dst, DevicePtr src, uint64_t bytes,
                    const std::string &what);
  Status zero(DevicePtr dst, uint64_t bytes, const std::string &what);
  /// `params` as cuLaunchKernel takes them: one pointer per kernel
  /// parameter, to a value of the parameter's size.
  Status launch(Function f, const std::array<int64_t, 3> &grid,
                const std::array<int64_t, 3> &block, uint64_t sharedBytes,
                void **params, const std::string &what);
  Status synchronize(const std::string &what);

private:
  CudaDevice() = default;
  Status check(int rc, const char *call, const std::string &what) const;
  Status makeCurrent() const;

  std::shared_ptr<cuda::DriverLibrary> lib;
  CudaDeviceInfo device;
  int handle = 0; ///< CUdevice
  void *context = nullptr;
  std::vector<Module> modules;
  std::set<DevicePtr> allocations;
};

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_CUDADEVICE_H
