//===- QTensorInterfaces.td - Descriptor family interface --*- tablegen -*-===//

#ifndef QTENSOR_DIALECT_QTENSOR_IR_QTENSORINTERFACES_TD
#define QTENSOR_DIALECT_QTENSOR_IR_QTENSORINTERFACES_TD

include "mlir/IR/OpBase.td"

def QTensor_DescriptorAttrInterface : AttrInterface<"DescriptorAttrInterface"> {
  let cppNamespace = "::mlir::qt";
  let description = [{
    A representation family (seed M8.9 0x01B: "describe the representation
    family first and only then its members"). `#qtensor.affine` implements
    it, with codebooks, FP4/FP8 and ggml's block types as its members;
    `#qtensor.mixed_2416` (mixed 2/4/16 with sparse outliers) is the second
    family. The type, the ops and their verifiers reach a family only
    through these methods.
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
    InterfaceMethod<[{
        Verifies that the tensor's layout is one this family is stored in
        (the affine family: any; mixed_2416: its own layout id).
      }],
      "::llvm::LogicalResult", "verifyLayout",
      (ins "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError,
           "::mlir::Attribute":$layout),
      /*methodBody=*/"", /*defaultImplementation=*/[{
        return ::mlir::success();
      }]>,
  ];
}

#endif // QTENSOR_DIALECT_QTENSOR_IR_QTENSORINTERFACES_TD
