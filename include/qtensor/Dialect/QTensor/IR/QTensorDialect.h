//===- QTensorDialect.h - The qtensor dialect -------------------*- C++ -*-===//
#ifndef QTENSOR_DIALECT_QTENSOR_IR_QTENSORDIALECT_H
#define QTENSOR_DIALECT_QTENSOR_IR_QTENSORDIALECT_H

#include "mlir/IR/Dialect.h"

// The discardable-attribute helpers of the dialect name PlacementAttr.
#include "qtensor/Dialect/QTensor/IR/QTensorAttrs.h"

#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h.inc"

#endif // QTENSOR_DIALECT_QTENSOR_IR_QTENSORDIALECT_H
