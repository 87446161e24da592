//===- InitAll.h - Where qtensor registers everything -----------*- C++ -*-===//
//
// qopt, qtc and embedders call these two functions. The upstream list is
// curated (no registerAllDialects): what a qtensor module and its lowering
// to NVPTX or the host CPU need, nothing else.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_INITALL_H
#define QTENSOR_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace qtensor {

/// The qtensor dialect alone: what an embedder needs to parse qtensor IR.
void registerQTensorDialect(mlir::DialectRegistry &registry);

/// qtensor plus the curated upstream dialects, their ConvertToLLVM
/// interfaces, LLVM IR translations and the NVVM target.
void registerDialects(mlir::DialectRegistry &registry);

/// qtensor pipelines plus the curated upstream passes and pipelines
/// (canonicalize, cse, the conversions to LLVM/NVVM, gpu-lower-to-nvvm).
void registerPasses();

} // namespace qtensor

#endif // QTENSOR_INITALL_H
