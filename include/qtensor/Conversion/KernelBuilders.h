//===- KernelBuilders.h - Quantized linear kernels from MLIR builders -*- C++ -*-===//
//
// One builder per kernel family (passes/Conversion/<Family>.cpp). Each emits
// the kernel with upstream dialects only (gpu, vector, arith, memref, scf)
// and has two targets with the same per-lane arithmetic:
//   NVPTX: a `gpu.module @<name>` holding `gpu.func @<name> kernel`, lowered
//          by qtensor-lower-to-ptx;
//   Host:  a `func.func @<name>` (C interface) whose loops walk the blocks,
//          warps and lanes in order and replay the warp-shuffle butterfly on
//          a lane array, so CI runs the same kernel arithmetic on the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_CONVERSION_KERNELBUILDERS_H
#define QTENSOR_CONVERSION_KERNELBUILDERS_H

#include "qtensor/Conversion/KernelSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <array>

namespace qtensor {

enum class KernelTarget : uint8_t { NVPTX, Host };

/// Launch geometry of a generated kernel: grid and block extents.
struct KernelLaunch {
  std::array<int64_t, 3> grid;
  std::array<int64_t, 3> block;
};

/// Decode GEMV (T = 1..16). Arguments, in order:
///   x: memref<T x K x f16|bf16>          activations
///   w: memref<N x 4C x i32>              decode_gemv layout, C = chunks/row
///   s: memref<N x G x f16|bf16>          per-group scales
///   z: memref<N x G x i8>                zero-points (asymmetric only)
///   y: memref<T x N x f32>               output; must be zeroed when split-K > 1
/// Block (128, 1, 1): one warp per output feature; grid (ceil(N / 4), S, 1).
KernelLaunch decodeGemvLaunch(const QuantKernelSpec &spec);
mlir::LogicalResult buildDecodeGemvKernel(mlir::ModuleOp module,
                                          const QuantKernelSpec &spec,
                                          KernelTarget target);

} // namespace qtensor

#endif // QTENSOR_CONVERSION_KERNELBUILDERS_H
