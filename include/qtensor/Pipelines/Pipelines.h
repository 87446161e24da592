//===- Pipelines.h - Pass pipelines shared by qopt and qtc ------*- C++ -*-===//
#ifndef QTENSOR_PIPELINES_PIPELINES_H
#define QTENSOR_PIPELINES_PIPELINES_H

#include "qtensor/Conversion/Passes.h"
#include "qtensor/Dialect/QTensor/IR/QTensorAttrs.h"
#include "qtensor/Kernels/Capability.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace qtensor {

/// Canonicalize (qtensor folds: assemble/disassemble, identity repacks) and
/// CSE, then verify. Registered as `qtensor-cleanup`.
void buildCleanupPipeline(mlir::OpPassManager &pm);

/// What `--qtensor-compile` and `qtc compile` take. The enums are the
/// passes' own option types (a spelling is parsed once, by the option
/// parser); the target and tp are checked by the passes that use them,
/// which answer bad ones with a diagnostic.
struct CompileOptions {
  std::string target = "sm_90"; ///< sm_80 | sm_90 | host
  int64_t tp = 1;               ///< tensor-parallel ranks
  kernels::PhaseChoice phase = kernels::PhaseChoice::Both;
  kernels::FallbackPolicy fallback = kernels::FallbackPolicy::Forbid;
  mlir::qt::GroupPolicy groupPolicy = mlir::qt::GroupPolicy::Error;
  std::vector<std::string> strategies; ///< PATTERN:column|row|replicate
  std::string traceFile;               ///< dispatch trace JSON, when not empty
  /// Host kernels may quantize their T = 1 activations to int8 per 32.
  bool int8Activations = true;
  /// How every affine linear's activations enter its matmul (`--quant
  /// w8a8`: per token at run time, the W8A8 kernels).
  kernels::ActivationQuant activationQuant = kernels::ActivationQuant::None;
  /// After select-layouts, generate the kernel instances the linears need
  /// (qtensor-instantiate-kernels): none skips it, KernelLowering::None
  /// leaves them in the IR, KernelLowering::PTX lowers them to gpu.binary
  /// ops holding PTX.
  std::optional<mlir::qt::KernelLowering> lower;
  std::string ptxDir; ///< with lower=ptx: write <instance>.ptx here
  /// With lower (sm_80, sm_90): also generate the instances' host twins.
  bool hostTwins = false;
  /// The CPU level generated host kernels are compiled for (HostCpu.h):
  /// generic, x86-64-v2, x86-64-v3 or x86-64-v4.
  std::string hostCpu = "generic";
};

/// The compiler's middle, in the order of DESIGN.md: import upstream quant
/// and raw arith dequantization, canonicalize, fuse dequantize->matmul into
/// qtensor.linear, place shards over `tp` ranks, then select layouts and
/// kernels (placement first: a rank's slice is packed for its kernel), and
/// with `lower` set, generate the kernel instances.
void buildCompilePipeline(mlir::OpPassManager &pm,
                          const CompileOptions &options);

/// Registers every pipeline above with the global pass registry
/// (`qtensor-cleanup`, `qtensor-compile`).
void registerPipelines();

} // namespace qtensor

#endif // QTENSOR_PIPELINES_PIPELINES_H
