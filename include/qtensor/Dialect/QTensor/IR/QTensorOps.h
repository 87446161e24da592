//===- QTensorOps.h - qtensor operations ------------------------*- C++ -*-===//
#ifndef QTENSOR_DIALECT_QTENSOR_IR_QTENSOROPS_H
#define QTENSOR_DIALECT_QTENSOR_IR_QTENSOROPS_H

#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"
#include "qtensor/Dialect/QTensor/IR/QTensorTypes.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "qtensor/Dialect/QTensor/IR/QTensorOps.h.inc"

#endif // QTENSOR_DIALECT_QTENSOR_IR_QTENSOROPS_H
