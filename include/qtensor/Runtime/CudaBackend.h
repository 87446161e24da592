//===- CudaBackend.h - Running compiled GPU kernels -------------*- C++ -*-===//
//
// A GPU kernel instance is a PTX (or cubin) module loaded into the device's
// primary context; its entry points are `gpu.func` kernels lowered by
// MLIR's GPU-to-NVVM conversion, whose parameters are each memref argument
// expanded into its descriptor fields, in argument order (x, w, s, [z],
// [b], y; docs/kernel-abi.md):
//
//   T *allocated, T *aligned, int64 offset, int64 sizes[R], int64 strides[R]
//
// The weight operands (w, s, z, b) live on the device from load time; x and
// y are staged per call (workspace ledger). The grid for T rows comes from
// the capability's launch (LaunchConfig::gridFor).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_CUDABACKEND_H
#define QTENSOR_RUNTIME_CUDABACKEND_H

#include "qtensor/Runtime/CudaDevice.h"
#include "qtensor/Runtime/MemoryLedger.h"
#include "qtensor/Runtime/OpKernel.h"

#include <map>
#include <memory>
#include <vector>

namespace qtensor::runtime {

/// Device copies of one op's weight operands (0 when absent).
struct DeviceOperands {
  CudaDevice::DevicePtr w = 0, s = 0, z = 0, b = 0;
  /// A nested descriptor's second levels, for kernels that read it as
  /// stored (s and z then hold its scale and min codes).
  CudaDevice::DevicePtr s2 = 0, z2 = 0;
  /// A mixed_2416 kernel's streams and row table by argument role, each
  /// with its element count (what a record's -1 length stands for).
  struct Stream {
    CudaDevice::DevicePtr ptr = 0;
    int64_t elements = 0;
  };
  std::map<ArgRole, Stream> streams;
};

/// Kernel parameters for one call: the expanded memref descriptors of
/// `instance`'s arguments with x and y sized for `tokens` rows. The result
/// owns the values; `pointers()` is what cuLaunchKernel takes.
class KernelParams {
public:
  static Expected<KernelParams> build(const KernelInstance &instance,
                                      const DeviceOperands &weights,
                                      CudaDevice::DevicePtr x,
                                      CudaDevice::DevicePtr y, int64_t tokens);
  KernelParams(KernelParams &&) = default;
  KernelParams &operator=(KernelParams &&) = default;
  KernelParams(const KernelParams &) = delete; // ptrs point into values
  KernelParams &operator=(const KernelParams &) = delete;

  void **pointers() { return ptrs.data(); }
  size_t size() const { return values.size(); }
  const std::vector<int64_t> &words() const { return values; }

private:
  KernelParams() = default;
  std::vector<int64_t> values; ///< one 64-bit word per parameter
  std::vector<void *> ptrs;
};

/// A GPU kernel instance: `functions` parallel to instance.entries.
/// `ledger` (outliving the kernel) records x/y staging as workspace.
std::unique_ptr<OpKernel>
makeCudaNativeKernel(CudaDevice &device, const KernelInstance &instance,
                     std::vector<CudaDevice::Function> functions,
                     DeviceOperands operands, FloatType activation,
                     FloatType output, MemoryLedger &ledger);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_CUDABACKEND_H
