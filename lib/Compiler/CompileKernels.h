//===- CompileKernels.h - Kernel files for the artifact ---------*- C++ -*-===//
//
// Reads the kernel instances the pipeline generated into the module (one per
// distinct kernel, local shape and dtypes; qtensor-instantiate-kernels) and
// returns the artifact's kernel files and manifest entries
// (docs/kernel-abi.md): PTX (and cubin where ptxas exists) for sm_80/sm_90,
// one `kernels-host.so` for the host and a GPU target's host twins.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_COMPILER_COMPILEKERNELS_H
#define QTENSOR_LIB_COMPILER_COMPILEKERNELS_H

#include "Dispatch.h"
#include "Export.h"

#include "qtensor/Conversion/ModelKernels.h"
#include "qtensor/Formats/Manifest.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace qtensor::compiler {

struct KernelBuild {
  std::vector<ExportFile> files;
  std::vector<artifact::KernelEntry> entries;
  /// The file holding the model kernels, when there are any.
  std::string modelKernelFile;
};

/// `module` is the compiled module with its kernel instances (and, for
/// sm_80/sm_90, their host twins); the kernels are lowered there and taken
/// out, leaving the graph. A missing instance is an error naming it.
/// `hostCpu` is the CPU level of kernels-host.so (every host entry records
/// it as "cpu"). `activationQuant` is the compile's activation form (the
/// W8A8 instances are derived for it).
Expected<KernelBuild> compileKernels(
    mlir::MLIRContext &context, mlir::ModuleOp module,
    const DispatchResult &dispatch, const std::string &target,
    const std::vector<ModelKernelSpec> &modelKernels,
    const std::string &scratchDir, HostCpuLevel hostCpu, ProgressSink &progress,
    kernels::ActivationQuant activationQuant = kernels::ActivationQuant::None);

} // namespace qtensor::compiler

#endif // QTENSOR_LIB_COMPILER_COMPILEKERNELS_H
