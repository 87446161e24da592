//===- CodebookLookup.h - A code's value from its codebook, in registers --===//
//
// What the host GEMM and the decode GEMV share for codes that index a
// codebook (IQ4_NL, NF4): table[q] for every lane, with no memory access.
// Internal to passes/Conversion.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_PASSES_CONVERSION_CODEBOOKLOOKUP_H
#define QTENSOR_PASSES_CONVERSION_CODEBOOKLOOKUP_H

#include "qtensor/Descriptor/Descriptor.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace qtensor::conversion {

/// table[q] as vector<lanes x f32> for `fields`, a vector<lanes x iN> of
/// codes each below the table's size, from selects over splat constants.
/// With i8 fields and a table of integers that fit them (IQ4_NL's on the
/// host; E2M1's are such integers halved, rescaled once after) a binary
/// tree on the code's bits selects bytes and converts once;
/// otherwise (NF4, or the i32 fields of a GPU lane) a chain of 15
/// compare-and-selects picks f32 values; E4M3's 8-bit codes are decoded
/// from their bits (an OR of shifted fields and one exact multiply).
/// Exact either way: every value is an f32.
mlir::Value emitCodebookLookup(mlir::ImplicitLocOpBuilder &b,
                               mlir::Value fields, Codebook codebook);

} // namespace qtensor::conversion

#endif // QTENSOR_PASSES_CONVERSION_CODEBOOKLOOKUP_H
