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

#include <type_traits>

namespace qtensor::conversion {

/// f16 or bf16.
inline mlir::Type elementType(mlir::MLIRContext *ctx, ActivationType t) {
  return t == ActivationType::F16 ? mlir::Type(mlir::Float16Type::get(ctx))
                                  : mlir::Type(mlir::BFloat16Type::get(ctx));
}

/// f16, bf16 or f32, for the output and scale enums (both spell F16, BF16
/// and F32).
template <typename FloatEnum,
          typename = std::enable_if_t<std::is_same_v<FloatEnum, OutputType> ||
                                      std::is_same_v<FloatEnum, ScaleType>>>
inline mlir::Type elementType(mlir::MLIRContext *ctx, FloatEnum t) {
  if (t == FloatEnum::F16)
    return mlir::Float16Type::get(ctx);
  if (t == FloatEnum::BF16)
    return mlir::BFloat16Type::get(ctx);
  return mlir::Float32Type::get(ctx);
}

/// A weight row of the decode_gemv layout as 16-byte chunks of 128 / field
/// codes: how many, how many are whole, and the codes of the partial last
/// one (0 when K is a multiple of the chunk).
struct ChunkGeometry {
  explicit ChunkGeometry(const QuantKernelSpec &spec)
      : chunk(spec.chunkCodes()), chunks((spec.k + chunk - 1) / chunk),
        fullChunks(spec.k / chunk), tail(spec.k % chunk) {}
  int64_t chunk, chunks, fullChunks, tail;
};

inline mlir::Value indexConst(mlir::ImplicitLocOpBuilder &b, int64_t v) {
  return mlir::arith::ConstantIndexOp::create(b, v);
}

} // namespace qtensor::conversion

#endif // QTENSOR_PASSES_CONVERSION_KERNELTYPES_H
