//===- Passes.h - qtensor kernel generation and lowering passes -*- C++ -*-===//
//
// Declarations generated from Passes.td, plus the pipeline that
// qtensor-lower-to-ptx runs on the device code.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_CONVERSION_PASSES_H
#define QTENSOR_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
class ModuleOp;
namespace qt {

/// What qtensor-instantiate-kernels does with the kernels it generates:
/// leaves them in the IR, or lowers them to gpu.binary ops holding PTX.
enum class KernelLowering { None, PTX };
/// Its spellings, for the pass's option and the --qtensor-compile
/// pipeline's.
inline llvm::cl::ValuesClass kernelLoweringValues() {
  return llvm::cl::values(
      clEnumValN(KernelLowering::None, "none", "leave the kernels in the IR"),
      clEnumValN(KernelLowering::PTX, "ptx",
                 "lower them to gpu.binary ops holding PTX"));
}

#define GEN_PASS_DECL
#include "qtensor/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "qtensor/Conversion/Passes.h.inc"

} // namespace qt
} // namespace mlir

namespace qtensor {

/// A validated NVPTX target: chip and PTX ISA version (times ten).
struct PTXTarget {
  std::string chip;
  unsigned ptxVersion = 0;
  unsigned optLevel = 3;
};

/// Checks chip (sm_80, sm_90) and PTX version (one LLVM knows, at least the
/// chip's minimum; 0 picks the minimum) before anything reaches the NVPTX
/// backend, which aborts the process on some combinations. Returns the
/// resolved target, or a sentence naming the bad value.
mlir::FailureOr<PTXTarget> resolvePTXTarget(llvm::StringRef chip,
                                            unsigned ptxVersion,
                                            unsigned optLevel,
                                            std::string &error);

/// Device-only lowering of every gpu.module to a gpu.binary with PTX
/// (format isa). Host functions are not touched. `target` must come from
/// resolvePTXTarget.
void buildLowerToPTXPipeline(mlir::OpPassManager &pm, const PTXTarget &target);

/// The dialects buildLowerToPTXPipeline's passes create (cf, LLVM, NVVM,
/// ...), for a pass that runs it dynamically: such a pipeline loads no
/// dialects itself, and its passes would build ops of unloaded dialects.
/// They do not depend on the target.
void getLowerToPTXDependentDialects(mlir::DialectRegistry &registry);

/// Lowers host kernels (func.func on memrefs with scf/vector/arith/math) to
/// the LLVM dialect, ready for mlir::ExecutionEngine or mlir-translate.
void buildLowerKernelsToHostPipeline(mlir::OpPassManager &pm);

/// The PTX text of each gpu.binary of `module` (after the PTX pipeline),
/// as (binary name, PTX) pairs in module order.
std::vector<std::pair<std::string, std::string>>
collectPTX(mlir::ModuleOp module);

/// Writes each gpu.binary's PTX to `<dir>/<binary name>.ptx`; a name that
/// is not a safe file stem or an unwritable file is an error on the module.
mlir::LogicalResult writePTXFiles(mlir::ModuleOp module, llvm::StringRef dir);

} // namespace qtensor

#endif // QTENSOR_CONVERSION_PASSES_H
