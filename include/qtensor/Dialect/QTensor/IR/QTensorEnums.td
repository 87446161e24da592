//===- QTensorEnums.td - Descriptor policy enums -----------*- tablegen -*-===//
//
// The ODS spelling of the policies in include/qtensor/Numerics/Enums.h and
// include/qtensor/Descriptor/Descriptor.h; DescriptorBridge converts them.
//
//===----------------------------------------------------------------------===//

#ifndef QTENSOR_DIALECT_QTENSOR_IR_QTENSORENUMS_TD
#define QTENSOR_DIALECT_QTENSOR_IR_QTENSORENUMS_TD

include "mlir/IR/EnumAttr.td"

def QTensor_SchemeEnum : I32EnumAttr<"QuantScheme", "quantization scheme", [
    I32EnumAttrCase<"Symmetric", 0, "symmetric">,
    I32EnumAttrCase<"Asymmetric", 1, "asymmetric">]> {
  let cppNamespace = "::mlir::qt";
  let genSpecializedAttr = 0;
}

def QTensor_ZeroPointKindEnum : I32EnumAttr<"ZeroPointKind",
    "how the zero-point enters reconstruction", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Integer", 1, "integer">,
    I32EnumAttrCase<"Float", 2, "float">,
    I32EnumAttrCase<"Min", 3, "min">]> {
  let cppNamespace = "::mlir::qt";
  let genSpecializedAttr = 0;
}

def QTensor_GranularityEnum : I32EnumAttr<"Granularity",
    "which values share one scale", [
    I32EnumAttrCase<"PerTensor", 0, "per_tensor">,
    I32EnumAttrCase<"PerAxis", 1, "per_axis">,
    I32EnumAttrCase<"Group", 2, "group">]> {
  let cppNamespace = "::mlir::qt";
  let genSpecializedAttr = 0;
}

def QTensor_TailRuleEnum : I32EnumAttr<"TailRule",
    "meaning of a short final group", [
    I32EnumAttrCase<"Partial", 0, "partial">,
    I32EnumAttrCase<"Exact", 1, "exact">]> {
  let cppNamespace = "::mlir::qt";
  let genSpecializedAttr = 0;
}

def QTensor_RoundingModeEnum : I32EnumAttr<"RoundingMode",
    "tie rule of quantize", [
    I32EnumAttrCase<"NearestEven", 0, "nearest_even">,
    I32EnumAttrCase<"NearestAway", 1, "nearest_away">,
    I32EnumAttrCase<"TowardZero", 2, "toward_zero">]> {
  let cppNamespace = "::mlir::qt";
  let genSpecializedAttr = 0;
}

def QTensor_SaturationModeEnum : I32EnumAttr<"SaturationMode",
    "what quantize does past the code range", [
    I32EnumAttrCase<"Clamp", 0, "clamp">,
    I32EnumAttrCase<"Reject", 1, "reject">]> {
  let cppNamespace = "::mlir::qt";
  let genSpecializedAttr = 0;
}

def QTensor_SignedEncodingEnum : I32EnumAttr<"SignedEncoding",
    "how signed codes are stored", [
    I32EnumAttrCase<"TwosComplement", 0, "twos_complement">,
    I32EnumAttrCase<"OffsetBinary", 1, "offset_binary">]> {
  let cppNamespace = "::mlir::qt";
  let genSpecializedAttr = 0;
}

def QTensor_ShardStrategyEnum : I32EnumAttr<"ShardStrategy",
    "how a linear's weight is split over tensor-parallel ranks", [
    I32EnumAttrCase<"Column", 0, "column">,        // slice N; outputs concatenate
    I32EnumAttrCase<"Row", 1, "row">,              // slice K; partial sums all-reduce
    I32EnumAttrCase<"Replicated", 2, "replicated">]> {
  let cppNamespace = "::mlir::qt";
  let genSpecializedAttr = 0;
}

def QTensor_GroupPolicyEnum : I32EnumAttr<"GroupPolicy",
    "what a K-slice that cuts a quantization group does (seed M8.9 0x06B)", [
    I32EnumAttrCase<"Error", 0, "error">,
    I32EnumAttrCase<"Align", 1, "align">,
    I32EnumAttrCase<"ReplicateBoundary", 2, "replicate_boundary">,
    I32EnumAttrCase<"Repack", 3, "repack">]> {
  let cppNamespace = "::mlir::qt";
  let genSpecializedAttr = 0;
}

def QTensor_RepackKindEnum : I32EnumAttr<"RepackKind",
    "how a weight reaches the layout its kernel reads (seed M8.9 0x07B)", [
    I32EnumAttrCase<"None", 0, "none">,            // stored in that layout
    I32EnumAttrCase<"Prepacked", 1, "prepacked">,  // packed by the exporter
    I32EnumAttrCase<"LoadTime", 2, "load_time">]> { // repacked by the loader
  let cppNamespace = "::mlir::qt";
  let genSpecializedAttr = 0;
}

def QTensor_CodebookEnum : I32EnumAttr<"Codebook",
    "the value table unsigned codes index", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"IQ4NL", 1, "iq4_nl">,
    I32EnumAttrCase<"NF4", 2, "nf4">,
    I32EnumAttrCase<"E2M1", 3, "e2m1">,
    I32EnumAttrCase<"E4M3", 4, "e4m3">]> {
  let cppNamespace = "::mlir::qt";
  let genSpecializedAttr = 0;
}

def QTensor_ScaleFormatEnum : I32EnumAttr<"ScaleFormat",
    "how scales are stored: values of the scale type, or float codes", [
    I32EnumAttrCase<"Plain", 0, "plain">,
    I32EnumAttrCase<"E8M0", 1, "e8m0">,
    I32EnumAttrCase<"UE4M3", 2, "ue4m3">]> {
  let cppNamespace = "::mlir::qt";
  let genSpecializedAttr = 0;
}

def QTensor_SparseSemanticsEnum : I32EnumAttr<"SparseSemantics",
    "what a sparse value of mixed_2416 means at its position", [
    I32EnumAttrCase<"Replacement", 0, "replacement">, // w = v, W2 groups only
    I32EnumAttrCase<"Correction", 1, "correction">]> { // w = dense + v
  let cppNamespace = "::mlir::qt";
  let genSpecializedAttr = 0;
}

def QTensor_PrecisionMapGranularityEnum : I32EnumAttr<"PrecisionMapGranularity",
    "what one precision-map entry of mixed_2416 covers", [
    I32EnumAttrCase<"Group", 0, "group">]> {
  let cppNamespace = "::mlir::qt";
  let genSpecializedAttr = 0;
}

def QTensor_QParamPackingEnum : I32EnumAttr<"QParamPacking",
    "how mixed_2416 stores its first-level qparams", [
    I32EnumAttrCase<"Bytes", 0, "bytes">]> {
  let cppNamespace = "::mlir::qt";
  let genSpecializedAttr = 0;
}

#endif // QTENSOR_DIALECT_QTENSOR_IR_QTENSORENUMS_TD
