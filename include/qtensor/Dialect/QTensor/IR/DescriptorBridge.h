//===- DescriptorBridge.h - Attributes <-> plain descriptors ----*- C++ -*-===//
//
// The one pair of functions that converts between the dialect's attributes
// and the MLIR-free descriptor structs (and through them, the manifest JSON).
// Round-trip tested both ways in test/unittests/Dialect.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_DIALECT_QTENSOR_IR_DESCRIPTORBRIDGE_H
#define QTENSOR_DIALECT_QTENSOR_IR_DESCRIPTORBRIDGE_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Dialect/QTensor/IR/QTensorTypes.h"

namespace mlir::qt {

::qtensor::AffineDescriptor toDescriptor(AffineDescriptorAttr attr);
::qtensor::LayoutDescriptor toDescriptor(LayoutAttr attr);
/// Fails (returns an error) for a descriptor family this build cannot spell
/// in JSON yet.
::qtensor::Expected<::qtensor::QuantizedTensorDescriptor>
toDescriptor(QuantizedTensorType type);

/// The inverse conversions. The inputs must verify; the results are
/// checked again by the attribute and type verifiers, so an invalid
/// descriptor yields an error rather than an invalid attribute.
::qtensor::Expected<AffineDescriptorAttr>
toAttr(MLIRContext *context, const ::qtensor::AffineDescriptor &d);
::qtensor::Expected<LayoutAttr> toAttr(MLIRContext *context,
                                       const ::qtensor::LayoutDescriptor &l);
::qtensor::Expected<QuantizedTensorType>
toType(MLIRContext *context, const ::qtensor::QuantizedTensorDescriptor &t);

} // namespace mlir::qt

#endif // QTENSOR_DIALECT_QTENSOR_IR_DESCRIPTORBRIDGE_H
