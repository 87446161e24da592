//===- QTensorOps.td - qtensor operations ------------------*- tablegen -*-===//

#ifndef QTENSOR_DIALECT_QTENSOR_IR_QTENSOROPS_TD
#define QTENSOR_DIALECT_QTENSOR_IR_QTENSOROPS_TD

include "qtensor/Dialect/QTensor/IR/QTensorTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def QTensor_QuantizedTensor : Type<
    CPred<"::llvm::isa<::mlir::qt::QuantizedTensorType>($_self)">,
    "quantized tensor", "::mlir::qt::QuantizedTensorType">;

def QTensor_WeightOp : QTensor_Op<"weight", [Pure]> {
  let summary = "A weight stored in the artifact, by name";
  let description = [{
    References the tensor `name` of the model's artifact (a manifest entry;
    seed M8.9 0x04A). The result is either a quantized tensor, whose codes
    and qparams the artifact holds in the declared layout, or a plain float
    tensor for weights left unquantized (norms, embeddings).

    ```mlir
    %w = qtensor.weight "model.layers.0.mlp.up_proj"
        : !qtensor.tensor<14336x4096xf16, #qtensor.affine<...>>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs AnyTypeOf<[QTensor_QuantizedTensor,
                                 AnyStaticShapeTensor]>:$result);
  let assemblyFormat = "$name attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def QTensor_QuantizeOp : QTensor_Op<"quantize", [Pure]> {
  let summary = "Quantize a float tensor with given qparams";
  let description = [{
    Computes codes `clamp(round(x / s) + z)` with the descriptor's rounding
    and saturation, using qparams supplied as operands (choosing ranges is a
    calibration concern, seed M8.2). Scale and zero-point shapes follow the
    descriptor's granularity: `[]` per tensor, `[dim]` per axis, and for
    groups the shape with the group axis replaced by `ceil(dim / G)`.
    Scales must be positive and finite (M8.1 0x0A); the codes are
    unspecified otherwise.

    ```mlir
    %q = qtensor.quantize %x, %s : tensor<3x5xf32>, tensor<3x2xf16>
        -> !qtensor.tensor<3x5xf32, #qtensor.affine<code = si4,
             scheme = symmetric, granularity = group, axis = 1,
             group_size = 4, scale = f16>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$scales,
                       Optional<AnyRankedTensor>:$zero_points);
  let results = (outs QTensor_QuantizedTensor:$result);
  let assemblyFormat = [{
    $input `,` $scales (`,` $zero_points^)? attr-dict `:` type($input) `,`
    type($scales) (`,` type($zero_points)^)? `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  // quantize(dequantize(%q), <qparams of %q>) -> %q where the types prove the
  // round trip exact (QTensorFolds.cpp). The reverse, dequantize(quantize(x)),
  // never folds: it is x plus the quantization error.
  let hasFolder = 1;
}

def QTensor_DequantizeOp : QTensor_Op<"dequantize", [Pure]> {
  let summary = "Reconstruct the float tensor a quantized tensor stands for";
  let description = [{
    `x_hat = s * (q - z)` (or `s * q + m` for `zero_point = min`) per the
    descriptor; the result has the logical shape and element type of the
    operand type.

    ```mlir
    %x = qtensor.dequantize %q : !qtensor.tensor<3x5xf32, ...>
        -> tensor<3x5xf32>
    ```
  }];
  let arguments = (ins QTensor_QuantizedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat =
      "$input attr-dict `:` qualified(type($input)) `->` type($result)";
  let hasVerifier = 1;
}

def QTensor_AssembleOp : QTensor_Op<"assemble", [Pure]> {
  let summary = "Build a quantized tensor from logical codes and qparams";
  let description = [{
    Takes existing codes (logical: one element per value, not packed) and
    their qparams without re-quantizing anything (seed M8.9 0x04A). The code
    tensor has the logical shape and the descriptor's code type; scales and
    zero-points have the qparam shape. Constant codes are checked against
    the code range (e.g. -8 is outside the restricted range of si4).

    ```mlir
    %q = qtensor.assemble %codes, %scales, %zeros
        : tensor<64x256xui8>, tensor<64xf32>, tensor<64xui8>
        -> !qtensor.tensor<64x256xf16, #qtensor.affine<code = ui8,
             scheme = asymmetric, zero_point = integer,
             granularity = per_axis, axis = 0, scale = f32>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$codes, AnyRankedTensor:$scales,
                       Optional<AnyRankedTensor>:$zero_points);
  let results = (outs QTensor_QuantizedTensor:$result);
  let assemblyFormat = [{
    $codes `,` $scales (`,` $zero_points^)? attr-dict `:` type($codes) `,`
    type($scales) (`,` type($zero_points)^)? `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def QTensor_DisassembleOp : QTensor_Op<"disassemble", [Pure]> {
  let summary = "Split a quantized tensor into logical codes and qparams";
  let description = [{
    The inverse of `qtensor.assemble`: exact, code-preserving.

    ```mlir
    %codes, %scales = qtensor.disassemble %q : !qtensor.tensor<...>
        -> tensor<3x5xsi4>, tensor<3x2xf16>
    ```
  }];
  let arguments = (ins QTensor_QuantizedTensor:$input);
  let results = (outs AnyRankedTensor:$codes, AnyRankedTensor:$scales,
                      Optional<AnyRankedTensor>:$zero_points);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` type($codes) `,`
    type($scales) (`,` type($zero_points)^)?
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def QTensor_RepackOp : QTensor_Op<"repack", [Pure]> {
  let summary = "Change the physical layout, preserving every code";
  let description = [{
    A repack changes only the layout: shape, element type and descriptor
    must be identical, so `unpack(repack(Q)) == Q` (seed M8.9 0x08B). A
    change of groups, qparams or clipping is a conversion, not a repack, and
    is rejected here.

    ```mlir
    %p = qtensor.repack %w : !qtensor.tensor<4096x4096xf16, #A>
        -> !qtensor.tensor<4096x4096xf16, #A, #qtensor.layout<...>>
    ```
  }];
  let arguments = (ins QTensor_QuantizedTensor:$input);
  let results = (outs QTensor_QuantizedTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def QTensor_LinearOp : QTensor_Op<"linear", [Pure]> {
  let summary = "Y = X * W^T + bias with a quantized weight";
  let description = [{
    `X: [..., K]`, `W: [N, K]` quantized, optional `bias: [N]`, result
    `[..., N]`. The accumulator type is declared (`f32` or the activation
    type); the output type is the result's element type, and the bias has
    the output type. Weight scales must run along the output-channel axis 0
    (per axis) or in groups along the reduction axis 1 (K): a scale tensor
    grouped along N is a semantic corruption, not a convenience (M8.9 0x05C).

    ```mlir
    %y = qtensor.linear %x, %w, %b accumulate(f32)
        : tensor<2x4096xf16>, !qtensor.tensor<11008x4096xf16, #W4G128>,
          tensor<11008xf16> -> tensor<2x11008xf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, QTensor_QuantizedTensor:$weight,
                       Optional<AnyRankedTensor>:$bias,
                       TypeAttrOf<AnyFloat>:$accumulator);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `accumulate` `(` $accumulator `)`
    attr-dict `:` type($input) `,` qualified(type($weight))
    (`,` type($bias)^)? `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The verifier's checks on types alone: lets a rewrite ask whether a
    /// linear it is about to build would verify. On failure the reason
    /// (without the op name) is written to `reason`. `bias` may be null.
    static ::llvm::LogicalResult
    checkTypes(::mlir::RankedTensorType input, QuantizedTensorType weight,
               ::mlir::RankedTensorType bias, ::mlir::RankedTensorType result,
               ::mlir::Type accumulator, ::llvm::raw_ostream &reason);
  }];
}

def QTensor_TransposeOp : QTensor_Op<"transpose", [Pure]> {
  let summary = "Swap the two dimensions of a 2-D quantized tensor, keeping every code";
  let description = [{
    `result[i, j] = input[j, i]`, for codes and qparams alike: nothing is
    re-quantized. The descriptor's axis moves with its dimension (groups
    along axis 0 become groups along axis 1, per-axis 1 becomes per-axis 0,
    per-tensor stays); every other field (code type, group size, tail,
    rounding, the permutation of the group axis, ...) is unchanged, so the
    qparam tensor is transposed too. This is a logical view: input and
    result have the logical layout, and rearranging physical tiles is a
    `qtensor.repack`. `transpose(transpose(%w))` folds to `%w`.

    `qtensor-fuse-linear` uses it to give `qtensor.linear`, which takes
    `W: [N, K]`, a weight stored as `[K, N]`:

    ```mlir
    %t = qtensor.transpose %w
        : !qtensor.tensor<4096x11008xf16, #qtensor.affine<code = si4,
            scheme = symmetric, granularity = group, axis = 0,
            group_size = 128, scale = f16>>
        -> !qtensor.tensor<11008x4096xf16, #qtensor.affine<code = si4,
            scheme = symmetric, granularity = group, axis = 1,
            group_size = 128, scale = f16>>
    ```
  }];
  let arguments = (ins QTensor_QuantizedTensor:$input);
  let results = (outs QTensor_QuantizedTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let extraClassDeclaration = [{
    /// The result type of transposing a value of type `input`; failure, with
    /// the reason written to `reason`, where there is none (not rank 2, not
    /// the logical layout, a descriptor family without a transposed form).
    static ::mlir::FailureOr<QuantizedTensorType>
    inferResultType(QuantizedTensorType input, ::llvm::raw_ostream &reason);
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

#endif // QTENSOR_DIALECT_QTENSOR_IR_QTENSOROPS_TD
