//===- ImportCommon.h - Shared pieces of qtensor-import ---------*- C++ -*-===//
//
// qtensor-import has two front halves (upstream `quant` types in
// ImportQuant.cpp, the raw arith dequantization in ImportArith.cpp) and one
// back half, here: from "which qparam entry does each code use" to a
// verified `#qtensor.affine` granularity, the qparam tensors in the shape
// the qtensor verifier expects, and the `!qtensor.tensor` type.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_PASSES_TRANSFORMS_IMPORTCOMMON_H
#define QTENSOR_PASSES_TRANSFORMS_IMPORTCOMMON_H

#include "qtensor/Dialect/QTensor/IR/QTensorTypes.h"
#include "qtensor/Support/Expected.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"

#include <string>

namespace mlir::qt::import {

using ::qtensor::Expected;
using ::qtensor::makeError;
using ::qtensor::Status;

/// Largest qparam tensor the import writes out as a constant (entries). A
/// sub-channel type shared across rows is replicated per row, so this bounds
/// what a small attribute can expand to.
inline constexpr int64_t kMaxMaterializedQParams = int64_t(1) << 24;

/// How one dimension of a qparam tensor indexes the logical codes.
struct DimAccess {
  enum class Kind {
    Unit,     ///< a size-1 dimension: one entry for every code
    Block,    ///< entry = codes index along `codesDim` floordiv `blockSize`
    Periodic, ///< entry = (codes index floordiv s) mod n: varies within a block
  };
  Kind kind = Kind::Unit;
  int64_t codesDim = -1;
  int64_t blockSize = 1;

  static DimAccess unit() { return {}; }
  static DimAccess block(int64_t dim, int64_t size) {
    return {Kind::Block, dim, size};
  }
  static DimAccess periodic(int64_t dim) { return {Kind::Periodic, dim, 0}; }
};

/// A scale or zero-point operand as found in the IR: one value for every
/// code (`splat`), a constant tensor, or a tensor computed at run time; the
/// tensor forms say how each of their dimensions indexes the codes.
struct QParamSource {
  TypedAttr splat;            ///< a scalar FloatAttr / IntegerAttr
  DenseElementsAttr constant; ///< a constant tensor
  Value value;                ///< a run-time tensor
  SmallVector<DimAccess> dims;

  bool isSplat() const { return static_cast<bool>(splat); }
  /// The shape of the tensor forms.
  ArrayRef<int64_t> getShape() const;
  Type getElementType() const;
};

/// The granularity recovered for one quantized tensor.
struct QParamLayout {
  Granularity granularity = Granularity::PerTensor;
  int64_t axis = -1;
  int64_t groupSize = 0;
};

/// "per_tensor", "per_axis along axis 0", "groups of 128 along axis 1".
std::string describe(const QParamLayout &layout);

/// The code type of an imported tensor.
struct CodeSpec {
  unsigned bits = 8;
  bool isSigned = true;
  bool narrowRange = false; ///< the restricted symmetric range [-Q, Q]
};

/// The granularity `scales` express for codes of shape `codesShape`, checked
/// against the shape: one entry per index of the per-axis dimension,
/// ceil(dim / G) entries along the group axis, and groups along one axis
/// only. Dimensions the scales do not vary along (one scale shared by every
/// row) are allowed: the qparams are replicated when materialized.
Expected<QParamLayout> inferLayout(const QParamSource &scales,
                                   ArrayRef<int64_t> codesShape);

/// Checks that zero-points vary only along dimensions the scales vary along,
/// with the same blocks, so they fit the scales' qparam shape.
Status checkZeroPointsFit(const QParamSource &zeroPoints,
                          const QParamLayout &layout,
                          ArrayRef<int64_t> codesShape);

/// The `!qtensor.tensor` for the recovered pieces, checked by the dialect's
/// own verifiers; the error says what they rejected.
Expected<QuantizedTensorType>
buildQuantizedType(ArrayRef<int64_t> shape, FloatType elementType,
                   const CodeSpec &code, const QParamLayout &layout,
                   ZeroPointKind zeroPoint, FloatType scaleType);

/// Writes `source` out as a tensor of `type`'s qparam shape and `elementType`
/// (the scale type, or the code type for integer zero-points): a constant
/// computed here for splats and constants, otherwise `tensor.bitcast`,
/// `tensor.collapse_shape` (dropping unit dimensions) and `linalg.broadcast`
/// (replicating along dimensions the source shares). Integer element types
/// of equal width are reinterpreted bit for bit.
Expected<Value> materializeQParam(OpBuilder &builder, Location loc,
                                  const QParamSource &source,
                                  QuantizedTensorType type, Type elementType);

/// Smallest and largest code of `code`.
std::pair<int64_t, int64_t> codeBounds(const CodeSpec &code);

/// The signed or unsigned integer type of `code` (e.g. si4).
IntegerType getCodeType(MLIRContext *context, const CodeSpec &code);

/// A "f16", "bf16" or "f32" float type, which qtensor reconstructs and
/// stores scales in.
bool isQTensorFloat(Type type);

/// Reinterprets signless codes as the code type (`tensor.bitcast`), or
/// rebuilds a constant in that type.
Value castCodes(OpBuilder &builder, Location loc, Value codes,
                IntegerType codeType);

/// Records the ops a builder creates so that an import that fails half way
/// can take them back: the IR is left exactly as it was found.
class CreatedOps : public OpBuilder::Listener {
public:
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint previous) override {
    created.push_back(op);
  }
  /// Erases everything created so far, newest first.
  void rollback() {
    for (Operation *op : llvm::reverse(created))
      op->erase();
    created.clear();
  }

private:
  SmallVector<Operation *> created;
};

/// Receives "left as is" remarks: the op and the reason.
using RemarkFn = function_ref<void(Operation *, const Twine &)>;

/// Imports `quant.scast` (integers to `!quant.uniform`) and `quant.qcast`
/// under `root` with their `quant.dcast` / `quant.scast` uses
/// (ImportQuant.cpp).
void importQuantOps(Operation *root, RemarkFn remark);

/// Imports the arith dequantizations feeding a contraction under `root`
/// (ImportArith.cpp).
void importArithDequantizations(Operation *root, RemarkFn remark);

/// Erases `op` and then every operand producer left without uses and side
/// effects, transitively.
void eraseWithDeadProducers(Operation *op);

/// A double as the shortest text that reads back the same.
std::string formatDouble(double value);

} // namespace mlir::qt::import

#endif // QTENSOR_PASSES_TRANSFORMS_IMPORTCOMMON_H
