//===- QTensorAttrs.h - Descriptor and layout attributes --------*- C++ -*-===//
#ifndef QTENSOR_DIALECT_QTENSOR_IR_QTENSORATTRS_H
#define QTENSOR_DIALECT_QTENSOR_IR_QTENSORATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectImplementation.h"

#include "qtensor/Dialect/QTensor/IR/QTensorEnums.h.inc"
#include "qtensor/Dialect/QTensor/IR/QTensorInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "qtensor/Dialect/QTensor/IR/QTensorAttrs.h.inc"

#endif // QTENSOR_DIALECT_QTENSOR_IR_QTENSORATTRS_H
