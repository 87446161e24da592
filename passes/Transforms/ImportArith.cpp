//===- ImportArith.cpp - qtensor-import of raw arith dequantization -------===//
//
// Front ends that do not use `quant` spell a weight dequantization as
// elementwise arith feeding a contraction. Anchored at each contraction
// operand (`linalg.matmul` with any indexing maps, `linalg.batch_matmul`, a
// contraction `linalg.generic`, ...), reached through at most one
// `linalg.transpose` and one `tensor.collapse_shape`, the chain
// (ImportArithChain.cpp) and the structure of its qparam operands
// (ImportTrace.cpp) give the codes and the granularity, which is checked
// against the shapes and against the contraction: per-axis scales along an
// output dimension, groups along the reduction. When the contraction reads
// `collapse_shape(D)` (codes split [N, K/G, G] for grouping), the logical
// weight is the collapsed [N, K].
//
// D is replaced by `qtensor.dequantize(qtensor.assemble(codes, s[, z]))`;
// qtensor-fuse-linear then turns dequantize -> matmul into qtensor.linear.
//
//===----------------------------------------------------------------------===//

#include "ImportArith.h"

#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Support/DebugStringHelper.h"

using namespace mlir;
using namespace mlir::qt;
using namespace mlir::qt::import;

namespace {

//===----------------------------------------------------------------------===//
// Anchoring at contractions
//===----------------------------------------------------------------------===//

/// The `arith.mulf` at the root of a dequantization: the op itself (tensor
/// form) or the one an elementwise generic yields.
arith::MulFOp getRootMul(Operation *op) {
  if (auto mul = dyn_cast_or_null<arith::MulFOp>(op))
    return isa<RankedTensorType>(mul.getType()) ? mul : arith::MulFOp();
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !generic.hasPureTensorSemantics())
    return {};
  auto yield =
      cast<linalg::YieldOp>(generic.getRegion().front().getTerminator());
  if (yield.getNumOperands() != 1)
    return {};
  return yield.getOperand(0).getDefiningOp<arith::MulFOp>();
}

/// An op that computes a dequantization: a root mulf with a factor that
/// converts integers.
bool looksLikeDequantization(Operation *op) {
  arith::MulFOp mul = getRootMul(op);
  return mul && (convertsInts(mul.getLhs()) || convertsInts(mul.getRhs()));
}

enum class DimRole { Batch, Output, Reduction };

/// How a contraction operand reaches the dequantized value.
struct WeightPath {
  Value dequantized;                ///< D
  tensor::CollapseShapeOp collapse; ///< the weight is collapse(D), or null
  SmallVector<DimRole> roles;       ///< role of each logical weight dim
  Status rolesKnown = Status::ok(); ///< why the roles are unknown, if so
};

/// Follows operand `operand` of `contraction` back through at most one
/// linalg.transpose and one tensor.collapse_shape to a dequantization;
/// nullopt when it reaches none.
std::optional<WeightPath> traceWeight(linalg::LinalgOp contraction,
                                      OpOperand &operand) {
  WeightPath path;
  Value value = operand.get();
  SmallVector<int64_t> permutation;
  if (auto transpose = value.getDefiningOp<linalg::TransposeOp>()) {
    permutation = llvm::to_vector(transpose.getPermutation());
    value = transpose.getInput();
  }
  if ((path.collapse = value.getDefiningOp<tensor::CollapseShapeOp>()))
    value = path.collapse.getSrc();
  if (!looksLikeDequantization(value.getDefiningOp()))
    return std::nullopt;
  path.dequantized = value;

  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(contraction);
  if (failed(dims)) {
    path.rolesKnown = makeError("the contraction's dimensions cannot be "
                                "inferred");
    return path;
  }
  AffineMap map = contraction.getMatchingIndexingMap(&operand);
  SmallVector<DimRole> operandRoles;
  for (AffineExpr expr : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim) {
      path.rolesKnown =
          makeError("the contraction reads the weight through ",
                    debugString(map), ", not a permutation of its loops");
      return path;
    }
    unsigned pos = dim.getPosition();
    operandRoles.push_back(llvm::is_contained(dims->batch, pos) ? DimRole::Batch
                           : llvm::is_contained(dims->k, pos)
                               ? DimRole::Reduction
                               : DimRole::Output);
  }
  path.roles = operandRoles;
  // linalg.transpose: result dim i is input dim permutation[i].
  for (auto [i, from] : llvm::enumerate(permutation))
    path.roles[from] = operandRoles[i];
  return path;
}

/// Checks the recovered granularity against the contraction: per-axis
/// scales run along an output dimension and groups along the reduction.
Status checkRoles(const QParamLayout &layout, ArrayRef<DimRole> roles) {
  if (layout.granularity == Granularity::PerTensor)
    return Status::ok();
  DimRole role = roles[layout.axis];
  auto name = [](DimRole r) {
    return r == DimRole::Batch       ? "a batch dimension"
           : r == DimRole::Reduction ? "the dimension the contraction reduces "
                                       "over (K)"
                                     : "an output-channel dimension";
  };
  if (layout.granularity == Granularity::PerAxis && role != DimRole::Output)
    return makeError("the scales vary along axis ", layout.axis, ", ",
                     name(role),
                     "; per-axis weight scales must run along the output "
                     "channels");
  if (layout.granularity == Granularity::Group && role != DimRole::Reduction)
    return makeError("the scales form ", describe(layout), ", ", name(role),
                     "; weight groups must run along the reduction axis (K)");
  return Status::ok();
}

/// Imports the dequantization `path` leads to.
Status importDequantization(WeightPath &path) {
  Value dequantized = path.dequantized;
  Operation *root = dequantized.getDefiningOp();
  auto resultType = dyn_cast<RankedTensorType>(dequantized.getType());
  if (!resultType || !resultType.hasStaticShape())
    return makeError("the dequantized weight ",
                     debugString(dequantized.getType()),
                     " has a dynamic shape; qtensor tensors have static "
                     "shapes");

  // The logical weight: D itself, or the collapsed D the contraction reads.
  SmallVector<int64_t> shape(resultType.getShape());
  SmallVector<DimAccess> resultDims = identityAccess(shape);
  SmallVector<ReassociationIndices> groups;
  if (path.collapse) {
    groups = path.collapse.getReassociationIndices();
    shape = llvm::to_vector(path.collapse.getResultType().getShape());
    auto split =
        splitAccess(identityAccess(shape), resultType.getShape(), groups);
    if (!split)
      return split.error();
    resultDims = std::move(*split);
  }

  auto generic = dyn_cast<linalg::GenericOp>(root);
  if (generic && !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
                      .isIdentity())
    return makeError("the linalg.generic writes its result through a "
                     "non-identity map");
  auto chain = matchDequantChain(getRootMul(root), generic, resultDims);
  if (!chain)
    return chain.error();

  auto layout = inferLayout(chain->scales, shape);
  if (!layout)
    return layout.error();
  if (chain->zeroPoints)
    if (Status s = checkZeroPointsFit(*chain->zeroPoints, *layout, shape); !s)
      return s;
  if (Status s = checkRoles(*layout, path.roles); !s)
    return s;
  CodeSpec code{chain->bits, chain->isSigned, false};
  auto type = buildQuantizedType(shape, chain->floatType, code, *layout,
                                 chain->zeroPointKind, chain->floatType);
  if (!type)
    return type.error();

  // Build everything before touching the original ops, so that a failure
  // leaves the IR as it was.
  CreatedOps created;
  OpBuilder builder(root->getContext(), &created);
  builder.setInsertionPoint(root);
  Location loc = root->getLoc();
  Value codes = chain->codes;
  if (path.collapse) {
    auto expand = codes.getDefiningOp<tensor::ExpandShapeOp>();
    DenseElementsAttr constant;
    if (expand && expand.getSrcType().getShape() == ArrayRef<int64_t>(shape) &&
        expand.getReassociationIndices() == groups)
      codes = expand.getSrc();
    else if (matchPattern(codes, m_Constant(&constant)))
      codes = arith::ConstantOp::create(
          builder, loc,
          constant.reshape(constant.getType().clone(ArrayRef<int64_t>(shape))));
    else
      codes = tensor::CollapseShapeOp::create(builder, loc, codes, groups);
  }
  codes =
      castCodes(builder, loc, codes,
                cast<IntegerType>(type->getDescriptor().getCodeElementType()));
  auto scales = materializeQParam(builder, loc, chain->scales, *type,
                                  type->getDescriptor().getScaleElementType());
  if (!scales) {
    created.rollback();
    return scales.error();
  }
  Value zeroPoints;
  if (chain->zeroPoints) {
    auto materialized =
        materializeQParam(builder, loc, *chain->zeroPoints, *type,
                          type->getDescriptor().getZeroPointElementType());
    if (!materialized) {
      created.rollback();
      return materialized.error();
    }
    zeroPoints = *materialized;
  }
  Value assembled =
      AssembleOp::create(builder, loc, *type, codes, *scales, zeroPoints);
  Value replacement = DequantizeOp::create(
      builder, loc, type->getReconstructedType(), assembled);

  if (path.collapse) {
    path.collapse.getResult().replaceAllUsesWith(replacement);
    path.collapse.erase();
    if (!dequantized.use_empty())
      dequantized.replaceAllUsesWith(tensor::ExpandShapeOp::create(
          builder, loc, resultType, replacement, groups));
  } else {
    dequantized.replaceAllUsesWith(replacement);
  }
  eraseWithDeadProducers(root);
  return Status::ok();
}
} // namespace

void import::importArithDequantizations(Operation *root, RemarkFn remark) {
  SmallVector<std::pair<linalg::LinalgOp, unsigned>> candidates;
  root->walk([&](linalg::LinalgOp op) {
    if (!op.hasPureTensorSemantics() || !linalg::isaContractionOpInterface(op))
      return;
    for (OpOperand *input : op.getDpsInputOperands())
      candidates.push_back({op, input->getOperandNumber()});
  });

  llvm::SmallPtrSet<Operation *, 8> seen;
  for (auto [contraction, index] : candidates) {
    OpOperand &operand = contraction->getOpOperand(index);
    std::optional<WeightPath> path = traceWeight(contraction, operand);
    if (!path)
      continue;
    Operation *dequantization = path->dequantized.getDefiningOp();
    if (!seen.insert(dequantization).second)
      continue;
    Status status =
        path->rolesKnown ? importDequantization(*path) : path->rolesKnown;
    if (!status)
      remark(dequantization, "dequantization feeding operand #" + Twine(index) +
                                 " of '" +
                                 contraction->getName().getStringRef() +
                                 "' not imported: " + status.message());
  }

  root->walk([&](Operation *op) {
    if (seen.contains(op) || !looksLikeDequantization(op))
      return;
    remark(op, "dequantization not imported: its result reaches no "
               "contraction operand (directly or through a linalg.transpose "
               "and a tensor.collapse_shape)");
  });
}
