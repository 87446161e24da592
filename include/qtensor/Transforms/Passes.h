//===- Passes.h - qtensor transformation passes -----------------*- C++ -*-===//
//
// Declarations generated from Passes.td: for each pass a `<Name>Options`
// struct and `create<Name>(options)`, plus `registerQTensorTransformsPasses()`.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_TRANSFORMS_PASSES_H
#define QTENSOR_TRANSFORMS_PASSES_H

#include "qtensor/Dialect/QTensor/IR/QTensorAttrs.h"
#include "qtensor/Kernels/Capability.h"

#include "mlir/Pass/Pass.h"

#include <cstdint>
#include <memory>
#include <string>

namespace mlir {
class ModuleOp;
namespace qt {

// The spellings of the enum options, one list each, for the passes'
// options (Passes.td) and the --qtensor-compile pipeline's alike.
inline llvm::cl::ValuesClass phaseChoiceValues() {
  using qtensor::kernels::PhaseChoice;
  return llvm::cl::values(
      clEnumValN(PhaseChoice::Decode, "decode", "T in [1, 16]"),
      clEnumValN(PhaseChoice::Prefill, "prefill", "T of 17 and up"),
      clEnumValN(PhaseChoice::Both, "both", "decode and prefill"));
}
inline llvm::cl::ValuesClass fallbackPolicyValues() {
  using qtensor::kernels::FallbackPolicy;
  return llvm::cl::values(
      clEnumValN(FallbackPolicy::Forbid, "forbid",
                 "an op no kernel admits is an error"),
      clEnumValN(FallbackPolicy::Warn, "warn",
                 "run the full-dequant fallback, with a warning"),
      clEnumValN(FallbackPolicy::Allow, "allow",
                 "run the full-dequant fallback"));
}
inline llvm::cl::ValuesClass activationQuantValues() {
  using qtensor::kernels::ActivationQuant;
  return llvm::cl::values(
      clEnumValN(ActivationQuant::None, "none", "activations as given"),
      clEnumValN(ActivationQuant::PerTokenSym, "per_token_sym",
                 "int8 per token at run time, a scale per row (w8a8)"),
      clEnumValN(ActivationQuant::PerTokenAsym, "per_token_asym",
                 "uint8 per token, a scale and a zero-point per row"));
}
inline llvm::cl::ValuesClass layoutModeValues() {
  using qtensor::kernels::LayoutMode;
  return llvm::cl::values(
      clEnumValN(LayoutMode::Shared, "shared", "one packed copy per weight"),
      clEnumValN(LayoutMode::PerPhase, "per-phase",
                 "a secondary layout where the phases' kernels differ"));
}
inline llvm::cl::ValuesClass groupPolicyValues() {
  return llvm::cl::values(
      clEnumValN(GroupPolicy::Error, "error", "refuse the placement"),
      clEnumValN(GroupPolicy::Align, "align",
                 "move the cut to a group boundary"),
      clEnumValN(GroupPolicy::ReplicateBoundary, "replicate-boundary",
                 "both ranks keep the cut group's parameters"),
      clEnumValN(GroupPolicy::ReplicateBoundary, "replicate_boundary",
                 "the same"),
      clEnumValN(GroupPolicy::Repack, "repack",
                 "requantize the slice into whole groups"));
}

#define GEN_PASS_DECL
#include "qtensor/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "qtensor/Transforms/Passes.h.inc"

} // namespace qt
} // namespace mlir

#endif // QTENSOR_TRANSFORMS_PASSES_H
