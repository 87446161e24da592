//===- QTensorDispatch.cpp - Dispatch decisions recorded on ops -----------===//

#include "qtensor/Dialect/QTensor/IR/QTensorDispatch.h"

#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"
#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"

using namespace mlir;
using namespace mlir::qt;

LogicalResult DispatchAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   StringRef target, StringAttr decode,
                                   StringAttr prefill, bool decodeFallback,
                                   bool prefillFallback, LayoutAttr layout,
                                   RepackKind repack,
                                   LayoutAttr secondaryLayout) {
  if (target.empty())
    return emitError() << "dispatch needs the target it was selected for";
  if (!decode && !prefill)
    return emitError() << "dispatch selects no kernel: give decode, prefill "
                          "or both";
  if ((decode && decode.getValue().empty()) ||
      (prefill && prefill.getValue().empty()))
    return emitError() << "a selected kernel id must not be empty";
  if (decodeFallback && !decode)
    return emitError() << "decode_fallback needs a decode kernel";
  if (prefillFallback && !prefill)
    return emitError() << "prefill_fallback needs a prefill kernel";
  if (!layout)
    return emitError() << "dispatch needs the layout its kernels read";
  if (secondaryLayout) {
    if (!decode || !prefill)
      return emitError() << "a secondary layout serves the second of two "
                            "phases; select both";
    if (secondaryLayout == layout)
      return emitError() << "secondary_layout repeats layout";
  }
  return success();
}

LogicalResult mlir::qt::verifyDispatchOpAttribute(Operation *op,
                                                  NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == QTensorDialect::DispatchAttrHelper::getNameStr()) {
    auto linear = dyn_cast<LinearOp>(op);
    if (!linear)
      return op->emitError()
             << "'" << name << "' belongs on a qtensor.linear only";
    auto dispatch = dyn_cast<DispatchAttr>(attr.getValue());
    if (!dispatch)
      return op->emitOpError()
             << "'" << name << "' must be a #qtensor.dispatch, got "
             << attr.getValue();
    // Runs before the op's own verifier: don't trust the operand types yet.
    if (op->getNumOperands() < 2)
      return success();
    auto weight = dyn_cast<QuantizedTensorType>(op->getOperand(1).getType());
    // The kernels read the operand as it is typed: a load-time repack
    // feeds them the repacked value, a prepacked weight is typed packed.
    if (weight && weight.getLayout() != dispatch.getLayout())
      return op->emitOpError() << "dispatch layout " << dispatch.getLayout()
                               << " differs from the weight operand's layout "
                               << weight.getLayout();
    return success();
  }
  if (name == QTensorDialect::PrepackedAttrHelper::getNameStr()) {
    if (!isa<WeightOp>(op))
      return op->emitError()
             << "'" << name << "' belongs on a qtensor.weight only";
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name << "' must be a unit attribute";
    if (op->getNumResults() != 1)
      return success();
    auto type = dyn_cast<QuantizedTensorType>(op->getResult(0).getType());
    if (!type || type.getLayout().isLogical())
      return op->emitOpError()
             << "a prepacked weight must have a quantized type in its kernel "
                "layout, got "
             << op->getResult(0).getType();
  }
  return success();
}
