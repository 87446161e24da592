//===- WarpRowKernel.h - One warp per output row, on both targets -*- C++ -*-===//
//
// The skeleton the GEMV families share (DecodeGemv, Mixed2416Gemv): one
// warp per output row n, kDecodeWarpsPerBlock warps per block, blockIdx.y a K split; each
// lane computes partial sums, a gpu.shuffle xor butterfly adds them, and
// lane 0 stores. The host twin walks blocks, splits, warps and lanes in
// order and replays the butterfly on a [32, rows] lane array, so lane 0
// adds exactly the values, in exactly the order, that it adds on the GPU.
// A family supplies only the entry's guard, the lane's partial sums and
// the store. Internal to passes/Conversion.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_PASSES_CONVERSION_WARPROWKERNEL_H
#define QTENSOR_PASSES_CONVERSION_WARPROWKERNEL_H

#include "qtensor/Conversion/KernelSpec.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Support/LLVM.h"

#include <functional>
#include <string>

namespace qtensor::conversion {

/// What a family computes inside an entry whose guard holds.
struct WarpRowBody {
  /// The partial sums lane `lane` holds for output row `n` and K split
  /// `split` before the butterfly, one per accumulator row.
  std::function<mlir::SmallVector<mlir::Value>(mlir::ImplicitLocOpBuilder &,
                                               mlir::Value n, mlir::Value split,
                                               mlir::Value lane)>
      partials;
  /// Stores the warp's sums (called for lane 0 only).
  std::function<void(mlir::ImplicitLocOpBuilder &, mlir::Value n,
                     mlir::Value split, mlir::ArrayRef<mlir::Value>)>
      store;
};

struct WarpRowEntry {
  std::string symbol;
  mlir::SmallVector<mlir::Type> argumentTypes;
  int64_t outputRows = 0;   ///< N: warps past it do nothing
  int64_t splits = 1;       ///< blockIdx.y extent
  int64_t accumulators = 1; ///< partial sums per lane
  /// An i1 the whole entry runs under (e.g. T inside a bucket's range),
  /// or a null Value; built at the entry's start.
  std::function<mlir::Value(mlir::ImplicitLocOpBuilder &, mlir::ValueRange)>
      guard;
  /// Builds the family's callbacks where the guard holds.
  std::function<WarpRowBody(mlir::ImplicitLocOpBuilder &, mlir::ValueRange)>
      body;
};

/// The body of an entry with one K split whose lane work and store read
/// only the arguments (no per-entry state to build first).
std::function<WarpRowBody(mlir::ImplicitLocOpBuilder &, mlir::ValueRange)>
argumentsOnlyBody(
    std::function<mlir::SmallVector<mlir::Value>(
        mlir::ImplicitLocOpBuilder &, mlir::ValueRange args, mlir::Value n,
        mlir::Value lane)>
        partials,
    std::function<void(mlir::ImplicitLocOpBuilder &, mlir::ValueRange args,
                       mlir::Value n, mlir::ArrayRef<mlir::Value>)>
        store);

/// A `gpu.func ... kernel` in the current insertion block (a gpu.module).
void buildWarpRowNVPTXEntry(mlir::ImplicitLocOpBuilder &b,
                            const WarpRowEntry &entry);
/// Its host twin: a `func.func` with the C interface.
void buildWarpRowHostEntry(mlir::ImplicitLocOpBuilder &b,
                           const WarpRowEntry &entry);

} // namespace qtensor::conversion

#endif // QTENSOR_PASSES_CONVERSION_WARPROWKERNEL_H
