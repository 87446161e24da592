//===- KernelBuilders.h - Linear kernels from MLIR builders -----*- C++ -*-===//
//
// One builder per kernel family (passes/Conversion/<Family>.cpp). Each emits
// the kernel with upstream dialects only (gpu, vector, arith, memref, scf;
// nvgpu and nvvm for the tensor-core GEMM) and has two targets with the
// same per-lane arithmetic:
//   NVPTX: a `gpu.module @<name>` holding one `gpu.func ... kernel` per entry
//          point, lowered by qtensor-lower-to-ptx;
//   Host:  one `func.func` (C interface) per entry point whose loops walk the
//          blocks, warps and lanes in order and replay the warp-shuffle
//          butterfly on a lane array, so CI runs the same kernel arithmetic
//          on the CPU.
// Every family takes the arguments x, w, s, [z], [b], y in that order
// (docs/kernel-abi.md) and describes its entry points and launch with a
// `<family>Abi(spec)` function.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_CONVERSION_KERNELBUILDERS_H
#define QTENSOR_CONVERSION_KERNELBUILDERS_H

#include "qtensor/Conversion/KernelSpec.h"
#include "qtensor/Support/HostCpu.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace qtensor {

enum class KernelTarget : uint8_t { NVPTX, Host };

/// Launch geometry of a generated kernel (NVPTX). A kernel tiled over T
/// sets `tokenAxis`: grid[tokenAxis] is ceil(T / tokensPerBlock) at run
/// time (the value stored there is 1).
struct KernelLaunch {
  std::array<int64_t, 3> grid;
  std::array<int64_t, 3> block;
  int64_t sharedBytes = 0;
  int tokenAxis = -1;
  int64_t tokensPerBlock = 0;
};

/// One entry point of a generated kernel and the rows T it accepts (no
/// maximum: unbounded). A static-T spec has one entry named `spec.name()`.
struct KernelEntryPoint {
  std::string symbol;
  int64_t minRows = 1;
  std::optional<int64_t> maxRows;
};

/// What a caller needs besides the argument types (docs/kernel-abi.md).
struct KernelAbi {
  std::vector<KernelEntryPoint> entries; ///< disjoint T ranges, ascending
  KernelLaunch launch;
  bool zeroOutput = false; ///< y must be zeroed before the call
  /// The entry may be called on any contiguous range of output rows: w, s,
  /// z and b have a dynamic row count, y a dynamic row stride (host GEMM).
  bool rowSplit = false;
};

/// Decode GEMV (T = 1..16). Arguments, in order:
///   x: memref<T x K x f16|bf16>          activations
///   w: memref<N x 4C x i32>              decode_gemv layout, C = chunks/row
///   s: memref<N x G x f16|bf16>          per-group scales (spec.scaleType())
///   z: memref<N x G x i8>                u8 zero-points (asymmetric only)
///   b: memref<N x out>                   bias (spec.bias only)
///   y: memref<T x N x out>               output; zeroed first when split-K > 1
/// Block (128, 1, 1): one warp per output feature; grid (ceil(N / 4), S, 1).
/// A dynamic-T spec has one entry per T bucket, [1], [2], [3, 4], [5, 8],
/// [9, 16], named `<name>_t1`, `_t2`, `_t4`, `_t8`, `_t16`: each has its
/// own register allocation, so T = 1 keeps its occupancy. T is `?` in x and
/// y, and an entry called with T outside its range writes nothing.
KernelAbi decodeGemvAbi(const QuantKernelSpec &spec);
mlir::LogicalResult buildDecodeGemvKernel(mlir::ModuleOp module,
                                          const QuantKernelSpec &spec,
                                          KernelTarget target);

/// Prefill GEMM block tile: tokens and output features per block.
constexpr int64_t kPrefillRowsPerBlock = 32;
constexpr int64_t kPrefillColsPerBlock = 256;

/// Prefill GEMM on tensor cores (mma.sync m16n8k16, f32 accumulators; any
/// T, N tails guarded, K a multiple of 8). Arguments, in order:
///   x: memref<T x K x f16|bf16>          activations (base 16-byte aligned)
///   w: memref<P x 128 S x i32>           prefill_mma layout: P = ceil(N /
///                                        (256 / b)) panel rows, S =
///                                        ceil(K / 16) k16 panels per row
///                                        (base 16-byte aligned)
///   s: memref<N x G x f16|bf16>          per-group scales (spec.scaleType())
///   z: memref<N x G x i8>                u8 zero-points (asymmetric only)
///   b: memref<N x out>                   bias (spec.bias only)
///   y: memref<T x N x out>               output
/// T is `?` for a dynamic-rows spec (one entry, T in [1, inf)), else the
/// spec's T. Block (256, 1, 1), grid (ceil(T / 32), ceil(N / 256), 1):
/// launch.tokenAxis = 0, tokensPerBlock = 32. Shared memory is static (two
/// 32 x 72 activation stages and, for group scales, two stages of the
/// block's scales and zero-points: prefillMmaStaticSharedBytes), so the
/// launch passes no dynamic shared memory.
KernelAbi prefillMmaAbi(const QuantKernelSpec &spec);
int64_t prefillMmaStaticSharedBytes(const QuantKernelSpec &spec);
mlir::LogicalResult buildPrefillMmaKernel(mlir::ModuleOp module,
                                          const QuantKernelSpec &spec,
                                          KernelTarget target);

/// The CPU's own GEMV/GEMM (host only, any T in one entry named
/// `spec.name()`). Arguments, in order:
///   x: memref<T x K x f16|bf16>          activations
///   w: memref<? x 4C x i32>              decode_gemv layout, C = chunks/row
///   s: memref<? x G x f16|bf16>          per-group scales
///   z: memref<? x G x i8>                u8 zero-points (asymmetric only)
///   b: memref<? x out>                   bias (spec.bias only)
///   y: memref<T x ? x out, strided<[?, 1]>>  output
/// `?` is the number of output rows of the call (any contiguous range of
/// N: abi.rowSplit), y's stride the whole N. y need not be zeroed.
/// `cpu` is the level the kernel will be compiled for: at x86-64-v3 and v4
/// the int8-activation path uses AVX2's u8 x s8 multiply (docs/codegen.md);
/// the arguments and the results' bound do not depend on it.
KernelAbi hostGemmAbi(const QuantKernelSpec &spec);
mlir::LogicalResult buildHostGemmKernel(mlir::ModuleOp module,
                                        const QuantKernelSpec &spec,
                                        KernelTarget target, HostCpuLevel cpu);

/// The ABI and the builder of `spec.family`; `hostCpu` is the CPU level
/// host code is compiled for (unused for NVPTX).
KernelAbi kernelAbiOf(const QuantKernelSpec &spec);
mlir::LogicalResult buildKernelOf(mlir::ModuleOp module,
                                  const QuantKernelSpec &spec,
                                  KernelTarget target, HostCpuLevel hostCpu);

} // namespace qtensor

#endif // QTENSOR_CONVERSION_KERNELBUILDERS_H
