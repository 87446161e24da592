//===- QTensorAttrs.td - Descriptor and layout attributes --*- tablegen -*-===//

#ifndef QTENSOR_DIALECT_QTENSOR_IR_QTENSORATTRS_TD
#define QTENSOR_DIALECT_QTENSOR_IR_QTENSORATTRS_TD

include "qtensor/Dialect/QTensor/IR/QTensorBase.td"
include "qtensor/Dialect/QTensor/IR/QTensorEnums.td"
include "qtensor/Dialect/QTensor/IR/QTensorInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def QTensor_AffineDescriptorAttr : QTensor_Attr<"AffineDescriptor", "affine",
    [DeclareAttrInterfaceMethods<QTensor_DescriptorAttrInterface>]> {
  let summary = "Affine family: x = s * (q - z) with declared granularity";
  let description = [{
    Codes `q` of an integer type (`ui2`..`ui8`, `si2`..`si8`; 2, 3, 4 or 8
    bits), scales of type `scale` and, for the asymmetric scheme, a
    zero-point of kind `integer` (a code), `float` (a real z) or `min`
    (x = s * q + m). Granularity is `per_tensor`, `per_axis` along `axis`, or
    row-bounded `group`s of `group_size` along `axis`; a short final group
    stores its own qparams (`tail = partial`) or is forbidden
    (`tail = exact`). Seed M8.1 0x02-0x04.

    ```mlir
    // W4 weight, groups of 128 along K, FP16 scales (M8.9 0x03B).
    #qtensor.affine<code = si4, scheme = symmetric, granularity = group,
                    axis = 1, group_size = 128, scale = f16>
    // Asymmetric per-output-channel W8.
    #qtensor.affine<code = ui8, scheme = asymmetric, zero_point = integer,
                    granularity = per_axis, axis = 0, scale = f32>
    // ggml Q4_0: offset-8 signed codes, groups of 32 along rows.
    #qtensor.affine<code = si4, scheme = symmetric, encoding = offset_binary,
                    granularity = group, axis = 1, group_size = 32, scale = f16>
    ```

    Optional fields and their defaults: `zero_point = none`, `axis = -1`
    (none), `group_size = 0` (none), `tail = partial`,
    `rounding = nearest_even`, `saturation = clamp`, `narrow_range = false`
    (true: the restricted symmetric range [-Q, Q]),
    `encoding = twos_complement`, `permutation` (a bijection of the group
    axis, e.g. act-order), `decoder_version = 1`.
  }];
  let parameters = (ins
    "::mlir::IntegerType":$code,
    EnumParameter<QTensor_SchemeEnum>:$scheme,
    DefaultValuedParameter<"::mlir::qt::ZeroPointKind",
        "::mlir::qt::ZeroPointKind::None">:$zero_point,
    EnumParameter<QTensor_GranularityEnum>:$granularity,
    DefaultValuedParameter<"int64_t", "-1">:$axis,
    DefaultValuedParameter<"int64_t", "0">:$group_size,
    DefaultValuedParameter<"::mlir::qt::TailRule",
        "::mlir::qt::TailRule::Partial">:$tail,
    "::mlir::FloatType":$scale,
    DefaultValuedParameter<"::mlir::qt::RoundingMode",
        "::mlir::qt::RoundingMode::NearestEven">:$rounding,
    DefaultValuedParameter<"::mlir::qt::SaturationMode",
        "::mlir::qt::SaturationMode::Clamp">:$saturation,
    DefaultValuedParameter<"bool", "false">:$narrow_range,
    DefaultValuedParameter<"::mlir::qt::SignedEncoding",
        "::mlir::qt::SignedEncoding::TwosComplement">:$encoding,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$permutation,
    DefaultValuedParameter<"uint32_t", "1">:$decoder_version
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def QTensor_LayoutAttr : QTensor_Attr<"Layout", "layout"> {
  let summary = "Physical arrangement of codes: family, version, encoding, tiles";
  let description = [{
    Names the exact physical layout a kernel reads (seed M8.9 0x01D, 0x07A:
    the `(family, version, encoding)` tuple is the layout id). `logical` is
    row-major codes with every row starting on a byte boundary; it has no
    tiles or padding and is the default when a type omits its layout.
    `tile` gives one tile size per dimension and `padding` the elements
    added to each dimension so that `dim + padding` is a multiple of its
    tile (0x03C).

    ```mlir
    #qtensor.layout<family = "logical", version = 1, encoding = "lsb_first">
    #qtensor.layout<family = "tiled_k_major", version = 2,
                    encoding = "lsb_first", tile = [128, 64], padding = [0, 32]>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"layout family">:$family,
    "uint32_t":$version,
    StringRefParameter<"code encoding inside the layout">:$encoding,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$tile,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$padding
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The default layout: row-major, byte-aligned rows.
    static LayoutAttr getLogical(::mlir::MLIRContext *context);
    bool isLogical() const { return getFamily() == "logical"; }
    /// Tile sizes and padding as plain arrays (empty when absent).
    ::llvm::ArrayRef<int64_t> getTileSizes() const {
      return getTile() ? getTile().asArrayRef() : ::llvm::ArrayRef<int64_t>();
    }
    ::llvm::ArrayRef<int64_t> getPaddingSizes() const {
      return getPadding() ? getPadding().asArrayRef()
                          : ::llvm::ArrayRef<int64_t>();
    }
  }];
}

#endif // QTENSOR_DIALECT_QTENSOR_IR_QTENSORATTRS_TD
