//===- RowDots.h - Dot products of activation rows with a weight row ------===//
//
// The inner loop the host GEMM (a decoded weight row) and the decoder's
// float linear (a stored weight row) share. Internal to passes/Conversion.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_PASSES_CONVERSION_ROWDOTS_H
#define QTENSOR_PASSES_CONVERSION_ROWDOTS_H

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Support/LLVM.h"

namespace qtensor::conversion {

/// The f32 dot products of rows t0 .. t0 + rows of x ([T, K], any float
/// type) with one weight row, w[wAt..., 0 .. K) (any float type): 8-lane
/// vector FMAs, one reassociating reduction per row (any order of the f32
/// sums is within the kernels' order-free bounds), then the last K % 8
/// products one by one.
mlir::SmallVector<mlir::Value> emitRowDots(mlir::ImplicitLocOpBuilder &b,
                                           mlir::Value x, mlir::Value t0,
                                           int64_t rows, mlir::Value w,
                                           mlir::ValueRange wAt, int64_t k);

} // namespace qtensor::conversion

#endif // QTENSOR_PASSES_CONVERSION_ROWDOTS_H
