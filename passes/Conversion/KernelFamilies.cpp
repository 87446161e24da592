//===- KernelFamilies.cpp - One dispatch from a spec to its builder -------===//

#include "qtensor/Conversion/KernelBuilders.h"

namespace qtensor {

KernelAbi kernelAbiOf(const QuantKernelSpec &spec) {
  switch (spec.family) {
  case KernelFamily::DecodeGemv:
    return decodeGemvAbi(spec);
  case KernelFamily::PrefillMma:
    return prefillMmaAbi(spec);
  case KernelFamily::HostGemm:
    break;
  }
  return hostGemmAbi(spec);
}

mlir::LogicalResult buildKernelOf(mlir::ModuleOp module,
                                  const QuantKernelSpec &spec,
                                  KernelTarget target, HostCpuLevel hostCpu) {
  switch (spec.family) {
  case KernelFamily::DecodeGemv:
    return buildDecodeGemvKernel(module, spec, target);
  case KernelFamily::PrefillMma:
    return buildPrefillMmaKernel(module, spec, target);
  case KernelFamily::HostGemm:
    break;
  }
  return buildHostGemmKernel(module, spec, target, hostCpu);
}

} // namespace qtensor
