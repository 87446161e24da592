//===- Pipelines.h - Pass pipelines shared by qopt and qtc -------*- C++ -*-===//
#ifndef QTENSOR_PIPELINES_PIPELINES_H
#define QTENSOR_PIPELINES_PIPELINES_H

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace qtensor {

/// Canonicalize (qtensor folds: assemble/disassemble, identity repacks) and
/// CSE, then verify. Registered as `qtensor-cleanup`.
void buildCleanupPipeline(mlir::OpPassManager &pm);

/// Registers every pipeline above with the global pass registry.
void registerPipelines();

} // namespace qtensor

#endif // QTENSOR_PIPELINES_PIPELINES_H
