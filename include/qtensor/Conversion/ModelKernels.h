//===- ModelKernels.h - The decoder's non-linear kernels --------*- C++ -*-===//
//
// The kernels a decoder program needs besides its quantized linears:
// embedding gather, RMSNorm, RoPE (into the activations for q, into the KV
// cache for k), the V cache store, causal grouped-query attention over the
// cache (prefill and decode alike: token t at position pos[t] attends to
// cache rows 0..pos[t]), the SiLU gate, the residual add, the float linear
// (the head, and linears kept in float) and the argmax. Each is a
// `func.func` on memrefs with the C interface, built with upstream dialects
// (scf, arith, math, memref) and lowered by the host pipeline into the
// artifact's kernel library (docs/model.md lists the ABI).
//
// Fusions: the norm writes the next linear's activation dtype directly;
// RoPE for k writes the cache row; attention writes the o projection's
// activation dtype; the SiLU gate reads gate and up and writes the down
// projection's input.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_CONVERSION_MODELKERNELS_H
#define QTENSOR_CONVERSION_MODELKERNELS_H

#include "qtensor/Formats/ModelKernelSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace qtensor {

/// Builds `spec` into `module` (host target: func.func, C interface).
/// Building the same spec twice is a no-op.
mlir::LogicalResult buildModelKernel(mlir::ModuleOp module,
                                     const ModelKernelSpec &spec);

} // namespace qtensor

#endif // QTENSOR_CONVERSION_MODELKERNELS_H
