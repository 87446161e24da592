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
#include "qtensor/Descriptor/Mixed2416.h"
#include "qtensor/Dialect/QTensor/IR/QTensorTypes.h"

namespace mlir::qt {

::qtensor::AffineDescriptor toDescriptor(AffineDescriptorAttr attr);
::qtensor::LayoutDescriptor toDescriptor(LayoutAttr attr);
/// A mixed_2416 tensor's full contract (shape, element type and layout id
/// from the type); fails for a tensor of another family.
::qtensor::Expected<::qtensor::Mixed2416Descriptor>
toMixed2416Descriptor(QuantizedTensorType type);
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
/// The tensor type of a mixed_2416 contract, with its layout id.
::qtensor::Expected<QuantizedTensorType>
toType(MLIRContext *context, const ::qtensor::Mixed2416Descriptor &d);
::qtensor::Expected<QuantizedTensorType>
toType(MLIRContext *context, const ::qtensor::QuantizedTensorDescriptor &t);

} // namespace mlir::qt

#endif // QTENSOR_DIALECT_QTENSOR_IR_DESCRIPTORBRIDGE_H
