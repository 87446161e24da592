//===- NestedQParams.h - A nested first level decoded in registers -*- C++ -*-===//
//
// What the GPU kernels (and their host twins) read of a nested descriptor
// (QuantKernelSpec::nested): one-byte first-level codes per group under a
// 16-bit second-level value per super-group, decoded second level first
// where the group's value is loaded. The product is one f32 multiply of two
// exact operands (a code below 2^8, a 16-bit float), so it is the value the
// load-time decoder gives (NestedQParams) bit for bit. Also the positions
// of the linear kernels' arguments x, w, s, [s2], [z], [z2], [b], y
// (docs/kernel-abi.md). Internal to passes/Conversion.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_PASSES_CONVERSION_NESTEDQPARAMS_H
#define QTENSOR_PASSES_CONVERSION_NESTEDQPARAMS_H

#include "qtensor/Conversion/KernelSpec.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace qtensor::conversion {

/// Where each qparam argument of a linear kernel sits in its argument
/// list; -1 for one the spec does not take.
struct LinearArgSlots {
  explicit LinearArgSlots(const QuantKernelSpec &spec);
  int s = 2, s2 = -1, z = -1, z2 = -1, bias = -1;
  mlir::Value at(mlir::ValueRange args, int slot) const {
    return slot < 0 ? mlir::Value() : args[slot];
  }
};

/// The qparam memref types of a linear kernel whose groups are [N, G]:
/// s (scale codes when nested, else scales), [s2], [z], [z2], in argument
/// order. `scale` is the spec's scale element type.
llvm::SmallVector<mlir::Type> qparamArgumentTypes(mlir::MLIRContext *ctx,
                                                  const QuantKernelSpec &spec,
                                                  mlir::Type scale);

/// Group `group` of row `n`'s scale, decoded: s2[n, group / (S / G)] *
/// code[n, group] in f32 (S the super-group, G the group size).
mlir::Value emitNestedScale(mlir::ImplicitLocOpBuilder &b,
                            const QuantKernelSpec &spec, mlir::Value codes,
                            mlir::Value supers, mlir::Value n,
                            mlir::Value group);
/// The same group's min: -(z2[n, group / (S / G)] * code[n, group]), the
/// min codes unsigned.
mlir::Value emitNestedMin(mlir::ImplicitLocOpBuilder &b,
                          const QuantKernelSpec &spec, mlir::Value codes,
                          mlir::Value supers, mlir::Value n, mlir::Value group);

} // namespace qtensor::conversion

#endif // QTENSOR_PASSES_CONVERSION_NESTEDQPARAMS_H
