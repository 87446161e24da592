//===- RowDots.h - Dot products of activation rows with weight rows -------===//
//
// The inner loop the host GEMM (decoded weight rows) and the decoder's
// float linear (a stored weight row) share. Internal to passes/Conversion.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_PASSES_CONVERSION_ROWDOTS_H
#define QTENSOR_PASSES_CONVERSION_ROWDOTS_H

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Support/LLVM.h"

namespace qtensor::conversion {

/// One weight row: w[at..., 0 .. K).
struct WeightRow {
  mlir::Value w;
  mlir::SmallVector<mlir::Value> at;
};

/// The f32 dot products of rows t0 .. t0 + rows of x ([T, K], any float
/// type) with each weight row of `ws` (any float type), as
/// sums[r * ws.size() + i]: `lanes`-wide vector FMAs (8, or 16 where
/// AVX-512's 32 registers hold a wider tile), each X chunk loaded once for
/// every weight row and each weight chunk once for every X row (rows x
/// |ws| independent accumulators keep both FMA pipes busy), one
/// reassociating reduction per output (any order of the f32 sums is within
/// the kernels' order-free bounds), then the last K % lanes products one by
/// one.
mlir::SmallVector<mlir::Value> emitRowDots(mlir::ImplicitLocOpBuilder &b,
                                           mlir::Value x, mlir::Value t0,
                                           int64_t rows,
                                           llvm::ArrayRef<WeightRow> ws,
                                           int64_t k, int64_t lanes = 8);

/// The same with one weight row w[wAt..., 0 .. K): sums[r].
mlir::SmallVector<mlir::Value> emitRowDots(mlir::ImplicitLocOpBuilder &b,
                                           mlir::Value x, mlir::Value t0,
                                           int64_t rows, mlir::Value w,
                                           mlir::ValueRange wAt, int64_t k);

} // namespace qtensor::conversion

#endif // QTENSOR_PASSES_CONVERSION_ROWDOTS_H
