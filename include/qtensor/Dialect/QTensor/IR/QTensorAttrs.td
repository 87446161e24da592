//===- QTensorAttrs.td - Descriptor and layout attributes --*- tablegen -*-===//

#ifndef QTENSOR_DIALECT_QTENSOR_IR_QTENSORATTRS_TD
#define QTENSOR_DIALECT_QTENSOR_IR_QTENSORATTRS_TD

include "qtensor/Dialect/QTensor/IR/QTensorBase.td"
include "qtensor/Dialect/QTensor/IR/QTensorEnums.td"
include "qtensor/Dialect/QTensor/IR/QTensorInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def QTensor_NestedQParamsAttr : QTensor_Attr<"NestedQParams", "nested"> {
  let summary = "Second-level qparams: first-level scales (and mins) as codes";
  let description = [{
    The first-level scales (and, with zero-point `min`, the mins) of a group
    descriptor are stored as integer codes; every `super_group_size` elements
    along the group axis share one second-level scale (and min scale) of type
    `super_scale`. Decoding runs the second level first (seed M8.9 0x07D):
    `s_j = d_J * c_j`, `m_j = -(dmin_J * mc_j)`, each product exact in f32,
    which is why the enclosing descriptor's `scale` is `f32`: qparam operands
    carry the decoded first level. ggml's Q4_K and Q5_K are

    ```mlir
    #qtensor.affine<code = ui4, scheme = asymmetric, zero_point = min,
                    granularity = group, axis = 1, group_size = 32,
                    tail = exact, scale = f32,
                    nested = <scale_code = ui6, min_code = ui6,
                              super_group_size = 256, super_scale = f16>>
    ```

    and Q6_K `scale_code = si8` without `min_code`, groups of 16.
  }];
  let parameters = (ins
    "::mlir::IntegerType":$scale_code,
    OptionalParameter<"::mlir::IntegerType">:$min_code,
    "int64_t":$super_group_size,
    "::mlir::FloatType":$super_scale
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def QTensor_AffineDescriptorAttr : QTensor_Attr<"AffineDescriptor", "affine",
    [DeclareAttrInterfaceMethods<QTensor_DescriptorAttrInterface>]> {
  let summary = "Affine family: x = s * (q - z) with declared granularity";
  let description = [{
    Codes `q` of an integer type (`ui2`..`ui8`, `si2`..`si8`; 2, 3, 4, 5, 6 or
    8 bits), scales of type `scale` and, for the asymmetric scheme, a
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
    axis, e.g. act-order), `decoder_version = 1`, `nested` (second-level
    qparams, `#qtensor.nested`), `codebook = none` (`iq4_nl`, `nf4`, `e2m1` or `e4m3`:
    unsigned codes index that 16-entry value table, x = s * table[q], with
    zero-point `none`; ggml's IQ4_NL is `code = ui4, scheme = symmetric,
    granularity = group, axis = 1, group_size = 32, tail = exact,
    scale = f16, codebook = iq4_nl`; `e2m1` is OCP FP4), `scale_format =
    plain` (`e8m0` or `ue4m3`: the scales are stored as one-byte float
    codes whose values are exact in f32, so `scale = f32`; MXFP4 is `ui4`,
    groups of 32, `codebook = e2m1, scale_format = e8m0`).
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
    DefaultValuedParameter<"uint32_t", "1">:$decoder_version,
    OptionalParameter<"::mlir::qt::NestedQParamsAttr">:$nested,
    DefaultValuedParameter<"::mlir::qt::Codebook",
        "::mlir::qt::Codebook::None">:$codebook,
    DefaultValuedParameter<"::mlir::qt::ScaleFormat",
        "::mlir::qt::ScaleFormat::Plain">:$scale_format
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def QTensor_Mixed2416DescriptorAttr : QTensor_Attr<"Mixed2416Descriptor",
    "mixed_2416", [DeclareAttrInterfaceMethods<QTensor_DescriptorAttrInterface,
                                               ["verifyLayout"]>]> {
  let summary = "Mixed 2/4/16: W2 and W4 groups, nested scales, sparse outliers";
  let description = [{
    Seed M8.9 0x07D. In an `[N, K]` weight, each first-level group of
    `first_group_size` input channels (axis 1) holds 2- or 4-bit unsigned
    codes with an integer zero-point, as the precision map (one entry per
    group) says; the first-level scales are `first_scale_code` codes under
    a second-level affine quantizer down `second_group_size` output
    channels (axis 0), with scale and real zero-point of type
    `second_scale`; selected weights are a sparse stream of `sparse_value`
    values whose meaning is explicit: `replacement` (w = v, only in W2
    groups) or `correction` (w = dense + v). Decoding runs the second level
    first:

    ```
    s1 = s2 * (qs - z2)          w = s1 * (qw - z1)
    ```

    ```mlir
    !qtensor.tensor<4096x4096xf16,
        #qtensor.mixed_2416<first_group_size = 64, second_group_size = 16,
                            first_scale_code = ui8, second_scale = bf16,
                            sparse = replacement, sparse_value = f16,
                            required_kernel = "mixed2416_decode_gemv">,
        #qtensor.layout<family = "mixed_2416", version = 1,
                        encoding = "group_major_lsb_first">>
    ```

    The tensor's layout must be that layout id. Logical views (codes,
    scales, zero-points) are the widest member's: `ui4` codes, `f32`
    decoded first-level scales and `ui4` zero-points in the
    `[N, K / first_group_size]` qparam shape. Defaults:
    `first_group_axis = 1`, `second_group_axis = 0` (the source's; no
    other axes are accepted), `map_granularity = group`,
    `qparam_packing = bytes`, `decoder_version = 1`.
  }];
  let parameters = (ins
    "int64_t":$first_group_size,
    "int64_t":$second_group_size,
    "::mlir::IntegerType":$first_scale_code,
    "::mlir::FloatType":$second_scale,
    EnumParameter<QTensor_SparseSemanticsEnum>:$sparse,
    "::mlir::FloatType":$sparse_value,
    StringRefParameter<"the kernel the layout is made for">:$required_kernel,
    DefaultValuedParameter<"int64_t", "1">:$first_group_axis,
    DefaultValuedParameter<"int64_t", "0">:$second_group_axis,
    DefaultValuedParameter<"::mlir::qt::PrecisionMapGranularity",
        "::mlir::qt::PrecisionMapGranularity::Group">:$map_granularity,
    DefaultValuedParameter<"::mlir::qt::QParamPacking",
        "::mlir::qt::QParamPacking::Bytes">:$qparam_packing,
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

def QTensor_PlacementAttr : QTensor_Attr<"Placement", "placement"> {
  let summary = "Tensor-parallel placement of one weight (seed M8.9 0x06B)";
  let description = [{
    Set by `qtensor-place-shards` on `qtensor.linear` ops as the
    discardable attribute `qtensor.placement`; the IR keeps global shapes
    and this attribute says what each of `ranks` ranks holds. `strategy`
    says which weight dimension `dim` is sliced (`column`: N = 0, `row`:
    K = 1, `replicated`: none, dim = -1). `bounds` has `ranks + 1` entries:
    rank r holds `[bounds[r], bounds[r+1])` along `dim`; a replicated
    placement has `[0, N, N, ...]` (every rank holds all N channels). An op
    without the attribute is held whole by a single rank.

    `qparams` has `2 * ranks` entries: rank r holds the qparam indices
    `[qparams[2r], qparams[2r+1])` along the weight's scale axis (groups
    along K for a grouped weight, channels along N for a per-axis one,
    `[0, 1)` for a per-tensor scale). A slice across the scale axis holds
    all of them: a column slice of a grouped weight holds every group of
    its rows, a row slice of a per-axis weight every channel scale.
    Where a row slice cuts a group, `group_policy` says what happened:
    `replicate_boundary` gives the cut group's qparams to both neighbours
    (ranges overlap; the lower rank owns them) and reconstruction keeps the
    global group index, so rank r's first element sits at offset
    `bounds[r] % G` inside its first group (`getFirstGroupOffset`);
    `repack` re-groups each rank's slice from its own first element, the
    ranges then number the new groups rank after rank, and the op carries
    `qtensor.reverify` because reconstruction changed. `error` and `align`
    never cut a group. The dialect checks the attribute against the weight
    it is attached to (qtensor/Dialect/QTensor/IR/QTensorPlacement.h).

    ```mlir
    // down_proj K = 11008 = 86 groups of 128 over 4 ranks, aligned.
    #qtensor.placement<strategy = row, ranks = 4, dim = 1,
                       bounds = [0, 2816, 5632, 8320, 11008],
                       group_policy = align,
                       qparams = [0, 22, 22, 44, 44, 65, 65, 86]>
    // The same split evenly: groups 21 and 64 are held by two ranks.
    #qtensor.placement<strategy = row, ranks = 4, dim = 1,
                       bounds = [0, 2752, 5504, 8256, 11008],
                       group_policy = replicate_boundary,
                       qparams = [0, 22, 21, 43, 43, 65, 64, 86]>
    ```
  }];
  let parameters = (ins
    EnumParameter<QTensor_ShardStrategyEnum>:$strategy,
    "int64_t":$ranks,
    "int64_t":$dim,
    "::mlir::DenseI64ArrayAttr":$bounds,
    EnumParameter<QTensor_GroupPolicyEnum>:$group_policy,
    "::mlir::DenseI64ArrayAttr":$qparams
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The slice of rank `rank` along `dim`: [begin, end).
    std::pair<int64_t, int64_t> getSlice(int64_t rank) const {
      return {getBounds()[rank], getBounds()[rank + 1]};
    }
    /// The qparam groups or channels rank `rank` holds: [begin, end).
    std::pair<int64_t, int64_t> getQParamRange(int64_t rank) const {
      return {getQparams()[2 * rank], getQparams()[2 * rank + 1]};
    }
    /// For a weight grouped along K in groups of `groupSize` (> 0): where
    /// rank `rank`'s first element sits inside its first group. Non-zero
    /// only where `replicate_boundary` kept a cut group's global indexing.
    int64_t getFirstGroupOffset(int64_t rank, int64_t groupSize) const {
      if (getDim() != 1 || getGroupPolicy() != GroupPolicy::ReplicateBoundary)
        return 0;
      return getBounds()[rank] % groupSize;
    }
  }];
}

def QTensor_DispatchAttr : QTensor_Attr<"Dispatch", "dispatch"> {
  let summary = "The kernels selected for a qtensor.linear (seed M8.9 0x07)";
  let description = [{
    Set by `qtensor-select-layouts` on each quantized `qtensor.linear` as the
    discardable attribute `qtensor.dispatch`: the kernel (by its registry
    id, docs/kernels.md) admitted for each selected phase on `target`,
    whether that kernel is the full-dequant fallback, the layout the weight
    is stored in for it, and how the weight gets there (`repack`: `none`,
    `prepacked` by the exporter, or `load_time` through a `qtensor.repack`).
    `secondary_layout` is a second packed copy for prefill, present only
    when the phases' kernels read different layouts and the pass ran with
    `layouts=per-phase` (HBM is paid twice; seed 0x07C).

    ```mlir
    qtensor.dispatch = #qtensor.dispatch<target = "sm_90",
        decode = "affine_mma_prefill_sm80", prefill = "affine_mma_prefill_sm80",
        layout = <family = "prefill_mma", version = 1,
                  encoding = "offset_binary", tile = [64, 16]>,
        repack = prepacked>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"target the kernels were admitted for">:$target,
    OptionalParameter<"::mlir::StringAttr">:$decode,
    OptionalParameter<"::mlir::StringAttr">:$prefill,
    DefaultValuedParameter<"bool", "false">:$decode_fallback,
    DefaultValuedParameter<"bool", "false">:$prefill_fallback,
    "::mlir::qt::LayoutAttr":$layout,
    DefaultValuedParameter<"::mlir::qt::RepackKind",
        "::mlir::qt::RepackKind::None">:$repack,
    OptionalParameter<"::mlir::qt::LayoutAttr">:$secondary_layout
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // QTENSOR_DIALECT_QTENSOR_IR_QTENSORATTRS_TD
