//===- KernelTypes.h - MLIR types of a kernel spec's dtypes -----*- C++ -*-===//
//
// The element types the linear kernel builders (DecodeGemv, PrefillMma,
// HostGemm) give a spec's activation, scale and output dtypes, and the index
// constant they all build loops from. Internal to passes/Conversion.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_PASSES_CONVERSION_KERNELTYPES_H
#define QTENSOR_PASSES_CONVERSION_KERNELTYPES_H

#include "qtensor/Conversion/KernelSpec.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace qtensor::conversion {

/// The MLIR element type of a spec's dtype.
inline mlir::Type elementType(mlir::MLIRContext *ctx, FloatType t) {
  if (t == FloatType::F16)
    return mlir::Float16Type::get(ctx);
  if (t == FloatType::BF16)
    return mlir::BFloat16Type::get(ctx);
  return mlir::Float32Type::get(ctx);
}

/// A weight row of the decode_gemv layout as 16-byte chunks of 128 / field
/// codes: how many, how many are whole, and the codes of the partial last
/// one (0 when K is a multiple of the chunk). `groupsPerChunk` is chunk / G
/// when groups are shorter than a chunk (NVFP4's 16 under a 32-code W4
/// chunk; admission keeps G a divisor of the chunk and such groups free of
/// zero-points), else 1: a chunk never crosses a group.
struct ChunkGeometry {
  explicit ChunkGeometry(const QuantKernelSpec &spec)
      : chunk(spec.chunkCodes()), chunks((spec.k + chunk - 1) / chunk),
        fullChunks(spec.k / chunk), tail(spec.k % chunk),
        groupsPerChunk(spec.groupSize > 0 && spec.groupSize < chunk
                           ? chunk / spec.groupSize
                           : 1) {}
  int64_t chunk, chunks, fullChunks, tail, groupsPerChunk;
};

inline mlir::Value indexConst(mlir::ImplicitLocOpBuilder &b, int64_t v) {
  return mlir::arith::ConstantIndexOp::create(b, v);
}

} // namespace qtensor::conversion

#endif // QTENSOR_PASSES_CONVERSION_KERNELTYPES_H
