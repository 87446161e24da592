//===- KernelToolchain.h - ptxas, host objects, shared objects --*- C++ -*-===//
//
// The steps of kernel compilation that leave MLIR: assembling PTX into a
// cubin with ptxas, compiling the host kernels' LLVM dialect into a
// position-independent object with LLVM's TargetMachine, linking it into a
// shared object, and reading back what the shared object exports. External
// tools run as subprocesses with a timeout; every failure names the tool,
// the file and what the tool printed.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_TARGET_KERNELTOOLCHAIN_H
#define QTENSOR_TARGET_KERNELTOOLCHAIN_H

#include "qtensor/Support/Expected.h"
#include "qtensor/Support/HostCpu.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace qtensor::target {

/// Seconds an external tool may run before it is killed.
constexpr unsigned kToolTimeoutSeconds = 300;

/// ptxas: $QTENSOR_PTXAS, /usr/local/cuda/bin/ptxas, or one on PATH.
std::optional<std::string> findPtxas();

/// `ptxas -arch=<arch> -O3 <ptx> -o <cubin>`.
Status assembleCubin(const std::string &ptxas, const std::string &arch,
                     const std::string &ptxPath, const std::string &cubinPath);

/// Translates an LLVM-dialect module to LLVM IR, optimizes it at O3 and
/// writes a position-independent object for the host triple and CPU level
/// `cpu` (recorded in the artifact, checked by the runtime before loading;
/// Support/HostCpu.h). An x86-64 level on another architecture fails.
Status emitHostObject(mlir::ModuleOp module, const std::string &objectPath,
                      HostCpuLevel cpu);

/// Links one object into a shared object with clang-22 (or ld.lld), which
/// records the libgcc_s / libc dependencies of f16 conversions and memcpy.
Status linkSharedObject(const std::string &objectPath,
                        const std::string &sharedObjectPath);

/// The defined global function symbols in a shared object's dynamic symbol
/// table: what dlsym can find.
Expected<std::set<std::string>>
exportedFunctions(const std::string &sharedObjectPath);

Expected<std::vector<uint8_t>> readFileBytes(const std::string &path);

} // namespace qtensor::target

#endif // QTENSOR_TARGET_KERNELTOOLCHAIN_H
