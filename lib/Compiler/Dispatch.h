//===- Dispatch.h - What the pipeline decided, per linear -------*- C++ -*-===//
//
// After --qtensor-compile, each quantized qtensor.linear carries
// `qtensor.placement` (qtensor-place-shards) and `qtensor.dispatch`
// (qtensor-select-layouts). This reads them, with the linear's signature
// (Transforms/LinearSignature.h), into plain structs for the kernel and
// export stages, in checkpoint order, and into each op's binding, the
// record the runtime plans from (Formats/OpBinding.h).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_COMPILER_DISPATCH_H
#define QTENSOR_LIB_COMPILER_DISPATCH_H

#include "Checkpoint.h"
#include "Export.h"
#include "Quantize.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace qtensor::compiler {

struct LinearDispatch {
  WeightPlacement placement;
  LayoutDescriptor layout; ///< the layout the weight is stored in
  std::optional<std::string> decodeKernel, prefillKernel;
  bool fallback = false; ///< a phase runs the full-dequant fallback
  bool loadTimeRepack = false;
  /// The op's binding, but its fallback policy (the request's).
  artifact::OpBinding binding;
};

struct DispatchResult {
  std::vector<LinearDispatch> linears; ///< parallel to Checkpoint::linears()
  int64_t fallbacks = 0;               ///< (op, phase) pairs on the fallback
  std::set<std::string> kernelIds;     ///< every selected kernel
};

/// `activationQuant` is the compile's activation form (`--quant w8a8`),
/// which every affine linear's binding records.
Expected<DispatchResult> readDispatch(
    mlir::ModuleOp module, const std::vector<SourceLinear> &linears,
    kernels::ActivationQuant activationQuant = kernels::ActivationQuant::None);

} // namespace qtensor::compiler

#endif // QTENSOR_LIB_COMPILER_DISPATCH_H
