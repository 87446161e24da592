//===- Mixed2416Kernel.h - Decode GEMV over mixed 2/4/16 streams -*- C++ -*-===//
//
// The kernel seed M8.9 0x07D asks of the mixed_2416 family
// (Descriptor/Mixed2416.h): Y[t, n] = sum_k X[t, k] * w[n, k] for T = 1..16,
// reading the tensor's streams as stored. One warp per output row n
// (WarpRowKernel.h); lane l takes the row's first-level groups l, l + 32,
// ...; for each group it loads, with nothing between them that depends on
// the codes,
//   - the group's codes: G1 / 4 bytes of the W2 stream or G1 / 2 bytes of
//     the W4 stream in 16-byte loads, chosen by the group's map bit (W2
//     codes are then spread to one per nibble in registers);
//   - the second-level qparams s2, z2 and the first-level codes qs, z1,
//     decoded in registers: s1 = s2 * (qs - z2) (second level first);
// and per step of 32 codes the step's activations per row (16-byte
// loads); it then converts q - z1 exactly with the magic-number trick (as the decode
// GEMV does) and accumulates acc += s1 * dot(x, q - z1) (one fma). A
// group's code offset is the number of W4 (or W2) groups before it in
// stream order: the row's count comes from a table of N + 1 prefix counts
// derived from the map once at load (mixed2416RowW4Groups), the count
// inside the row from popcounts of the map's bits, carried from one of the
// lane's groups to the next. After the dense groups each lane walks the
// row's CSR outliers l, l + 32, ...: a replacement adds x * (v - dense)
// (the dense code there was summed with the rest), a correction x * v.
// The butterfly then adds the lanes and lane 0 adds the bias and stores.
//
// Every stream is vector-aligned by the family's rules (G1 a multiple of
// 64: a W2 group is whole 16-byte vectors, a W4 group whole 32-byte ones),
// so no load crosses a group.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_CONVERSION_MIXED2416KERNEL_H
#define QTENSOR_CONVERSION_MIXED2416KERNEL_H

#include "qtensor/Conversion/KernelBuilders.h"
#include "qtensor/Descriptor/Mixed2416.h"
#include "qtensor/Support/Expected.h"

#include <string>
#include <string_view>
#include <vector>

namespace qtensor {

/// What a mixed 2/4/16 decode GEMV is specialized for. T is static.
struct Mixed2416GemvSpec {
  FloatType activation = FloatType::F16; ///< f16 or bf16
  FloatType secondType = FloatType::F16; ///< s2 and z2: f16 or bf16
  FloatType sparseType = FloatType::F16; ///< outlier values: f16 or bf16
  SparseSemantics sparse = SparseSemantics::Replacement;
  int64_t firstGroupSize = 64;  ///< G1, a multiple of 64 dividing K
  int64_t secondGroupSize = 16; ///< G2, dividing N
  FloatType output = FloatType::F32;
  bool bias = false;
  int64_t rows = 1; ///< T in [1, 16]
  int64_t n = 0;    ///< output channels
  int64_t k = 0;    ///< input channels

  int64_t groupsPerRow() const { return k / firstGroupSize; }
  /// e.g. qt_mixed2416_gemv_g64_z16_f16_t1_n4096_k4096, with suffixes for
  /// what differs from the defaults: `_s2bf16`, `_spbf16` (second-level and
  /// outlier dtypes other than f16), `_corr` (correction semantics),
  /// `_of16` / `_obf16`, `_bias`.
  std::string name() const;
};

/// Parses `mixed2416_gemv:gG1:zG2:f16|bf16:tT:nN:kK[:OPT]...` with OPT one
/// of `s2f16|s2bf16`, `spf16|spbf16`, `replace|correct`, `of16|obf16|of32`,
/// `bias`, each at most once; validates the result.
Expected<Mixed2416GemvSpec> parseMixed2416GemvSpec(std::string_view text);

/// The kernel's limits; the message names the field.
Status validateMixed2416GemvSpec(const Mixed2416GemvSpec &spec);

/// The spec a verified descriptor's tensor needs with these activations,
/// output, bias and rows.
Mixed2416GemvSpec mixed2416GemvSpecFor(const Mixed2416Descriptor &d,
                                       FloatType activation, FloatType output,
                                       bool bias, int64_t rows);

/// Arguments, in order (the descriptor's streams, as stored, viewed in
/// the types below; docs/kernel-abi.md):
///   x:    memref<T x K x f16|bf16>       activations (16-byte aligned)
///   map:  memref<M x i8>                 precision map, M = ceil(N G / 8)
///   w2:   memref<? x i32>                W2 codes (G1 / 16 words a group)
///   w4:   memref<? x i32>                W4 codes (G1 / 8 words a group)
///   rw4:  memref<N+1 x i32>              W4 groups before each row
///                                        (mixed2416RowW4Groups)
///   qs:   memref<N x G x i8>             first-level scale codes (u8)
///   z1:   memref<N x G x i8>             first-level zero-points (u8)
///   s2:   memref<N/G2 x G x f16|bf16>    second-level scales
///   z2:   memref<N/G2 x G x f16|bf16>    second-level zero-points
///   sv:   memref<? x f16|bf16>           outlier values
///   sc:   memref<? x i32>                outlier columns
///   sr:   memref<N+1 x i32>              outlier row pointers
///   b:    memref<N x out>                bias (spec.bias only)
///   y:    memref<T x N x out>            output
/// G = K / G1. Block (128, 1, 1): one warp per output row; grid
/// (ceil(N / 4), 1, 1). One entry named `spec.name()`.
KernelAbi mixed2416GemvAbi(const Mixed2416GemvSpec &spec);
mlir::LogicalResult buildMixed2416GemvKernel(mlir::ModuleOp module,
                                             const Mixed2416GemvSpec &spec,
                                             KernelTarget target);

/// What a compiled artifact holds for one tensor shape: every T of [1, 16]
/// as its own entry (`spec` with rows 1..16), the runtime running a larger
/// T in chunks. The name without the rows (`..._f16_n64_k256...`) names
/// the set: the GPU module holding the 16 entries, the manifest record.
std::string mixed2416InstanceName(const Mixed2416GemvSpec &spec);
std::vector<Mixed2416GemvSpec>
mixed2416GemvEntries(const Mixed2416GemvSpec &spec);
/// Builds the 16 entries: host functions into `module`, or one
/// gpu.module `gpuModuleName` holding the 16 kernels.
mlir::LogicalResult buildMixed2416GemvKernels(mlir::ModuleOp module,
                                              const Mixed2416GemvSpec &spec,
                                              KernelTarget target,
                                              llvm::StringRef gpuModuleName);

} // namespace qtensor

#endif // QTENSOR_CONVERSION_MIXED2416KERNEL_H
