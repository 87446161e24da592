//===- QTensorTypes.td - The quantized tensor type ---------*- tablegen -*-===//

#ifndef QTENSOR_DIALECT_QTENSOR_IR_QTENSORTYPES_TD
#define QTENSOR_DIALECT_QTENSOR_IR_QTENSORTYPES_TD

include "qtensor/Dialect/QTensor/IR/QTensorAttrs.td"

def QTensor_QuantizedTensorType : QTensor_Type<"QuantizedTensor", "tensor"> {
  let summary = "A quantized tensor: logical shape, reconstructed type, contract";
  let description = [{
    `!qtensor.tensor<SHAPE x ELEMENT, DESCRIPTOR [, LAYOUT]>`: a statically
    shaped tensor whose values are reconstructed as `ELEMENT` (f16, bf16 or
    f32) from codes and qparams as `DESCRIPTOR` says, stored as `LAYOUT`
    says. An omitted layout is `#qtensor.layout<family = "logical", ...>`.

    ```mlir
    !qtensor.tensor<3x5xf32, #qtensor.affine<code = si4, scheme = symmetric,
        granularity = group, axis = 1, group_size = 4, scale = f16>>
    ```

    The verifier proves the descriptor fits the shape (axis in range, tail
    rule, permutation bijection) and the layout's tiles divide the padded
    shape (seed M8.9 0x05C).
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$shape,
    "::mlir::FloatType":$elementType,
    "::mlir::qt::DescriptorAttrInterface":$descriptor,
    "::mlir::qt::LayoutAttr":$layout
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins
        "::llvm::ArrayRef<int64_t>":$shape, "::mlir::FloatType":$elementType,
        "::mlir::qt::DescriptorAttrInterface":$descriptor,
        CArg<"::mlir::qt::LayoutAttr", "{}">:$layout)>
  ];
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    /// Logical code tensor type: the shape with the descriptor's code type.
    ::mlir::RankedTensorType getCodesType() const;
    /// Scale tensor type: the qparam shape with the scale type.
    ::mlir::RankedTensorType getScalesType() const;
    /// Zero-point tensor type, or null when the descriptor has none.
    ::mlir::RankedTensorType getZeroPointsType() const;
    /// The float tensor this reconstructs.
    ::mlir::RankedTensorType getReconstructedType() const;
  }];
}

#endif // QTENSOR_DIALECT_QTENSOR_IR_QTENSORTYPES_TD
