//===- QTensorBase.td - The qtensor dialect ----------------*- tablegen -*-===//

#ifndef QTENSOR_DIALECT_QTENSOR_IR_QTENSORBASE_TD
#define QTENSOR_DIALECT_QTENSOR_IR_QTENSORBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def QTensor_Dialect : Dialect {
  let name = "qtensor";
  let cppNamespace = "::mlir::qt";
  let summary = "Quantized tensors with explicit logical and physical contracts";
  let description = [{
    The `qtensor` dialect carries a quantized weight from a checkpoint to a
    kernel without losing what its codes mean. A value of type
    `!qtensor.tensor` names its logical shape, the float type it reconstructs,
    a *descriptor* (what codes, scales and zero-points mean: seed M8.9 0x01B)
    and a *layout* (how the codes are arranged physically: 0x01D).

    ```mlir
    %w = qtensor.weight "model.layers.0.q_proj"
        : !qtensor.tensor<4096x4096xf16, #qtensor.affine<code = si4,
            scheme = symmetric, granularity = group, axis = 1,
            group_size = 128, scale = f16>>
    %y = qtensor.linear %x, %w accumulate(f32)
        : tensor<1x4096xf16>, !qtensor.tensor<...> -> tensor<1x4096xf16>
    ```

    The descriptor attribute and the manifest JSON are two spellings of one
    contract (see docs/descriptor-json.md).
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  // Set by qtensor-place-shards on qtensor.linear; checked against the
  // weight by verifyOperationAttribute (QTensorPlacement.cpp).
  // Set by qtensor-select-layouts: `dispatch` on qtensor.linear, `prepacked`
  // on a qtensor.weight the exporter packs into its kernel layout; checked
  // by verifyDispatchOpAttribute (QTensorDispatch.cpp).
  // Set by qtensor-instantiate-kernels: `kernels` on qtensor.linear maps
  // each dispatched phase to the kernel instance of every stored slice,
  // {decode = ["<instance>", ...], prefill = [...]}.
  let discardableAttrs = (ins
    "::mlir::qt::PlacementAttr":$placement,
    "::mlir::UnitAttr":$reverify,
    "::mlir::qt::DispatchAttr":$dispatch,
    "::mlir::UnitAttr":$prepacked,
    "::mlir::DictionaryAttr":$kernels,
    // qtensor-place-shards moved this row-parallel linear's bias after its
    // all-reduce: the op has a bias no kernel adds (the dispatch trace
    // records it for the runtime).
    "::mlir::UnitAttr":$bias_after_reduce
  );
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();
  }];
}

class QTensor_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<QTensor_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

class QTensor_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<QTensor_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

class QTensor_Op<string mnemonic, list<Trait> traits = []>
    : Op<QTensor_Dialect, mnemonic, traits>;

#endif // QTENSOR_DIALECT_QTENSOR_IR_QTENSORBASE_TD
