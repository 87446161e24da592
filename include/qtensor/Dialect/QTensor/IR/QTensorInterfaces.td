//===- QTensorInterfaces.td - Descriptor family interface --*- tablegen -*-===//

#ifndef QTENSOR_DIALECT_QTENSOR_IR_QTENSORINTERFACES_TD
#define QTENSOR_DIALECT_QTENSOR_IR_QTENSORINTERFACES_TD

include "mlir/IR/OpBase.td"

def QTensor_DescriptorAttrInterface : AttrInterface<"DescriptorAttrInterface"> {
  let cppNamespace = "::mlir::qt";
  let description = [{
    A representation family (seed M8.9 0x01B: "describe the representation
    family first and only then its members"). `#qtensor.affine` implements
    it today; ggml block types, mixed 2/4/16 with sparse outliers, codebooks
    and FP8 are further families that implement the same methods, so the
    type, the ops and their verifiers need no change to admit them.
  }];
  let methods = [
    InterfaceMethod<"Family name as written in the manifest",
      "::llvm::StringRef", "getFamilyName">,
    InterfaceMethod<[{
        Verifies the descriptor against a tensor's logical shape and the
        float type it reconstructs.
      }],
      "::llvm::LogicalResult", "verifyForTensor",
      (ins "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError,
           "::llvm::ArrayRef<int64_t>":$shape, "::mlir::Type":$elementType)>,
    InterfaceMethod<"Element type of the logical code tensor",
      "::mlir::Type", "getCodeElementType">,
    InterfaceMethod<"Element type of the scale tensor",
      "::mlir::Type", "getScaleElementType">,
    InterfaceMethod<"Element type of the zero-point tensor; null when none",
      "::mlir::Type", "getZeroPointElementType">,
    InterfaceMethod<"Shape of the scale and zero-point tensors",
      "::llvm::SmallVector<int64_t>", "getQParamShape",
      (ins "::llvm::ArrayRef<int64_t>":$shape)>,
    InterfaceMethod<"Smallest and largest valid code",
      "std::pair<int64_t, int64_t>", "getCodeBounds">,
  ];
}

#endif // QTENSOR_DIALECT_QTENSOR_IR_QTENSORINTERFACES_TD
