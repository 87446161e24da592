//===- SelectLayoutsSignature.cpp - A linear as a kernel request ----------===//

#include "qtensor/Transforms/LinearSignature.h"

#include "qtensor/Dialect/QTensor/IR/DescriptorBridge.h"
#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"
#include "qtensor/Dialect/QTensor/IR/QTensorPlacement.h"

using namespace mlir;
using namespace mlir::qt;
namespace kernels = ::qtensor::kernels;

namespace {
/// The linear verifier allows f16, bf16 and f32 only.
::qtensor::FloatType toPlainFloat(Type type) {
  if (type.isF16())
    return ::qtensor::FloatType::F16;
  if (type.isBF16())
    return ::qtensor::FloatType::BF16;
  return ::qtensor::FloatType::F32;
}

/// T: the product of the input's leading dimensions, when all are static.
std::optional<int64_t> staticTokens(RankedTensorType input) {
  int64_t tokens = 1;
  for (int64_t dim : input.getShape().drop_back()) {
    if (ShapedType::isDynamic(dim))
      return std::nullopt;
    if (llvm::MulOverflow(tokens, dim, tokens))
      return std::nullopt;
  }
  return tokens;
}
} // namespace

std::string mlir::qt::getLinearName(LinearOp op, int64_t index) {
  Value weight = op.getWeight();
  while (auto repack = weight.getDefiningOp<RepackOp>())
    weight = repack.getInput();
  if (auto def = weight.getDefiningOp<WeightOp>())
    return def.getName().str();
  return "linear#" + std::to_string(index);
}

FailureOr<kernels::OpSignature>
mlir::qt::getLinearSignature(LinearOp op, StringRef name,
                             const kernels::KernelRegistry &registry) {
  QuantizedTensorType weight = op.getWeight().getType();
  kernels::OpSignature sig;
  sig.representation = weight.getDescriptor().getFamilyName().str();
  sig.layout = toDescriptor(weight.getLayout());
  sig.n = weight.getShape()[0];
  sig.k = weight.getShape()[1];
  if (auto affine = dyn_cast<AffineDescriptorAttr>(weight.getDescriptor())) {
    sig.descriptor = toDescriptor(affine);
    std::vector<int64_t> shape(weight.getShape().begin(),
                               weight.getShape().end());
    // A stored layout that contradicts the descriptor is corrupt IR, not
    // a candidate to reject.
    if (::qtensor::Status s = kernels::verifyStoredLayout(
            registry, sig.descriptor, sig.layout, shape);
        !s) {
      op.emitOpError() << "weight '" << name << "': " << s.message();
      return failure();
    }
  } else if (isa<Mixed2416DescriptorAttr>(weight.getDescriptor())) {
    ::qtensor::Expected<::qtensor::Mixed2416Descriptor> mixed =
        toMixed2416Descriptor(weight);
    if (!mixed) {
      op.emitOpError() << "weight '" << name << "': " << mixed.message();
      return failure();
    }
    sig.mixed = mixed.take();
  }

  RankedTensorType input = op.getInput().getType();
  sig.activation = toPlainFloat(input.getElementType());
  sig.accumulator = toPlainFloat(op.getAccumulator());
  sig.output = toPlainFloat(op.getResult().getType().getElementType());
  sig.epilogue =
      op.getBias() ? kernels::Epilogue::Bias : kernels::Epilogue::None;
  sig.tokens = staticTokens(input);

  // No placement: one rank holds the whole weight. The dialect verifier
  // has already checked a placement against the weight's shape.
  auto *dialect = op->getContext()->getLoadedDialect<QTensorDialect>();
  PlacementAttr placement = dialect->getPlacementAttrHelper().getAttr(op);
  if (!placement) {
    sig.ranks = {{0, sig.n, 0, sig.k}};
    return sig;
  }
  switch (placement.getStrategy()) {
  case ShardStrategy::Column:
    sig.topology = kernels::Topology::Column;
    break;
  case ShardStrategy::Row:
    sig.topology = kernels::Topology::Row;
    break;
  case ShardStrategy::Replicated:
    sig.topology = kernels::Topology::Replicated;
    break;
  }
  sig.regrouped = placementRegroups(placement, weight);
  sig.biasAfterReduce =
      placement.getStrategy() == ShardStrategy::Row &&
      bool(dialect->getBiasAfterReduceAttrHelper().getAttr(op));
  for (int64_t r = 0; r < placement.getRanks(); ++r) {
    auto [begin, end] = placement.getSlice(r);
    kernels::RankSlice slice{0, sig.n, 0, sig.k};
    if (placement.getStrategy() == ShardStrategy::Column)
      slice = {begin, end - begin, 0, sig.k};
    else if (placement.getStrategy() == ShardStrategy::Row)
      slice = {0, sig.n, begin, end - begin};
    sig.ranks.push_back(slice);
  }
  return sig;
}
