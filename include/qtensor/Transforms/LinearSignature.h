//===- LinearSignature.h - A linear as a kernel request ---------*- C++ -*-===//
//
// The MLIR side of seed M8.9 0x07A: reads the requested operator signature
// of a qtensor.linear (descriptor and layout of its weight type, activation,
// accumulator and output dtypes, bias epilogue, T, and the per-rank local
// N and K of its qtensor.placement) into the plain struct the admission
// predicate in lib/Kernels evaluates.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_TRANSFORMS_LINEARSIGNATURE_H
#define QTENSOR_TRANSFORMS_LINEARSIGNATURE_H

#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"
#include "qtensor/Kernels/Admission.h"

#include <string>

namespace mlir::qt {

/// The artifact name of the linear's weight (through a repack), or
/// "linear#<index>" when the weight is not a qtensor.weight.
std::string getLinearName(LinearOp op, int64_t index);

/// The signature of `op` (named `name` in diagnostics). Fails, with a
/// diagnostic on `op`, when the weight's stored layout contradicts its
/// descriptor or shape.
FailureOr<::qtensor::kernels::OpSignature>
getLinearSignature(LinearOp op, StringRef name,
                   const ::qtensor::kernels::KernelRegistry &registry);

} // namespace mlir::qt

#endif // QTENSOR_TRANSFORMS_LINEARSIGNATURE_H
