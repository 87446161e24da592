//===- QTensorTypes.h - The quantized tensor type ---------------*- C++ -*-===//
#ifndef QTENSOR_DIALECT_QTENSOR_IR_QTENSORTYPES_H
#define QTENSOR_DIALECT_QTENSOR_IR_QTENSORTYPES_H

#include "qtensor/Dialect/QTensor/IR/QTensorAttrs.h"

#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "qtensor/Dialect/QTensor/IR/QTensorTypes.h.inc"

#endif // QTENSOR_DIALECT_QTENSOR_IR_QTENSORTYPES_H
