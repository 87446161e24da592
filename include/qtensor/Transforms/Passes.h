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

#define GEN_PASS_DECL
#include "qtensor/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "qtensor/Transforms/Passes.h.inc"

} // namespace qt
} // namespace mlir

#endif // QTENSOR_TRANSFORMS_PASSES_H
