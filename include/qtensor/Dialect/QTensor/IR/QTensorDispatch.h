//===- QTensorDispatch.h - Dispatch decisions recorded on ops ---*- C++ -*-===//
//
// qtensor-select-layouts records its decisions as two discardable
// attributes: `qtensor.dispatch` (#qtensor.dispatch) on a qtensor.linear and
// the unit `qtensor.prepacked` on a qtensor.weight whose result type already
// carries the kernel layout the exporter writes.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_DIALECT_QTENSOR_IR_QTENSORDISPATCH_H
#define QTENSOR_DIALECT_QTENSOR_IR_QTENSORDISPATCH_H

#include "mlir/IR/Operation.h"

namespace mlir::qt {

/// Checks `qtensor.dispatch` and `qtensor.prepacked` where they appear;
/// success for any other attribute.
LogicalResult verifyDispatchOpAttribute(Operation *op, NamedAttribute attr);

} // namespace mlir::qt

#endif // QTENSOR_DIALECT_QTENSOR_IR_QTENSORDISPATCH_H
