//===- NestedQParams.cpp - A nested first level decoded in registers ------===//

#include "NestedQParams.h"

#include "KernelTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace qtensor::conversion {

LinearArgSlots::LinearArgSlots(const QuantKernelSpec &spec) {
  int next = 3;
  if (spec.nested)
    s2 = next++;
  if (spec.takesZeroPoints())
    z = next++;
  if (spec.nested && spec.minZero)
    z2 = next++;
  if (spec.bias)
    bias = next++;
}

SmallVector<Type> qparamArgumentTypes(MLIRContext *ctx,
                                      const QuantKernelSpec &spec, Type scale) {
  const int64_t n = spec.n, g = spec.groupsPerRow();
  Type byte = IntegerType::get(ctx, 8);
  SmallVector<Type> types;
  if (spec.nested) {
    Type super = elementType(ctx, spec.nested->superType);
    auto supers = MemRefType::get({n, spec.superGroupsPerRow()}, super);
    types.push_back(MemRefType::get({n, g}, byte));
    types.push_back(supers);
    if (spec.minZero) {
      types.push_back(MemRefType::get({n, g}, byte));
      types.push_back(supers);
    }
    return types;
  }
  types.push_back(MemRefType::get({n, g}, scale));
  if (spec.minZero) // a float min per group, in the scale dtype
    types.push_back(MemRefType::get({n, g}, scale));
  else if (spec.takesZeroPoints())
    types.push_back(MemRefType::get({n, g}, byte));
  return types;
}

namespace {

Value emitProduct(ImplicitLocOpBuilder &b, const QuantKernelSpec &spec,
                  Value codes, Value supers, Value n, Value group,
                  bool signedCodes) {
  Type f32 = b.getF32Type();
  const int64_t ratio = spec.nested->superGroupSize / spec.groupSize;
  Value code = memref::LoadOp::create(b, codes, ValueRange{n, group});
  code = signedCodes ? Value(arith::SIToFPOp::create(b, f32, code))
                     : Value(arith::UIToFPOp::create(b, f32, code));
  Value super = memref::LoadOp::create(
      b, supers,
      ValueRange{n, arith::DivUIOp::create(b, group, indexConst(b, ratio))});
  super = arith::ExtFOp::create(b, f32, super);
  // No `contract`: the product is rounded once, as the decoder rounds it,
  // and never fused into the fma that uses it.
  return arith::MulFOp::create(b, super, code);
}

} // namespace

Value emitNestedScale(ImplicitLocOpBuilder &b, const QuantKernelSpec &spec,
                      Value codes, Value supers, Value n, Value group) {
  return emitProduct(b, spec, codes, supers, n, group,
                     spec.nested->signedCodes);
}

Value emitNestedMin(ImplicitLocOpBuilder &b, const QuantKernelSpec &spec,
                    Value codes, Value supers, Value n, Value group) {
  return arith::NegFOp::create(
      b, emitProduct(b, spec, codes, supers, n, group, /*signedCodes=*/false));
}

} // namespace qtensor::conversion
