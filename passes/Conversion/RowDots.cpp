//===- RowDots.cpp - Dot products of activation rows with a weight row ----===//

#include "RowDots.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace qtensor::conversion {

SmallVector<Value> emitRowDots(ImplicitLocOpBuilder &b, Value x, Value t0,
                               int64_t rows, Value w, ValueRange wAt,
                               int64_t k) {
  constexpr int64_t kLanes = 8;
  Type f32 = b.getF32Type();
  auto lanes = VectorType::get({kLanes}, f32);
  auto elementOf = [](Value m) {
    return cast<MemRefType>(m.getType()).getElementType();
  };
  auto widen = [&](Value v) {
    Type t = v.getType();
    Type wide = isa<VectorType>(t) ? Type(lanes) : f32;
    return getElementTypeOrSelf(t) == f32
               ? v
               : Value(arith::ExtFOp::create(b, wide, v));
  };
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, v);
  };
  auto wIndex = [&](Value kk) {
    SmallVector<Value> at(wAt.begin(), wAt.end());
    at.push_back(kk);
    return at;
  };
  auto rowOf = [&](int64_t r) -> Value {
    return arith::AddIOp::create(b, t0, index(r));
  };
  Value zero = arith::ConstantOp::create(
      b, SplatElementsAttr::get(lanes, b.getF32FloatAttr(0.0)));
  SmallVector<Value> init(rows, zero);
  const int64_t whole = k / kLanes * kLanes;
  auto loop =
      scf::ForOp::create(b, index(0), index(whole), index(kLanes), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kk = loop.getInductionVar();
    Value wv = widen(vector::LoadOp::create(
        b, VectorType::get({kLanes}, elementOf(w)), w, wIndex(kk)));
    SmallVector<Value> next;
    for (int64_t r = 0; r < rows; ++r) {
      Value xv = widen(
          vector::LoadOp::create(b, VectorType::get({kLanes}, elementOf(x)), x,
                                 ValueRange{rowOf(r), kk}));
      next.push_back(
          vector::FMAOp::create(b, xv, wv, loop.getRegionIterArgs()[r]));
    }
    scf::YieldOp::create(b, next);
  }
  SmallVector<Value> sums;
  for (int64_t r = 0; r < rows; ++r) {
    Value t = rowOf(r);
    Value sum = vector::ReductionOp::create(b, vector::CombiningKind::ADD,
                                            loop.getResult(unsigned(r)),
                                            arith::FastMathFlags::reassoc);
    for (int64_t j = whole; j < k; ++j) {
      Value xs = widen(memref::LoadOp::create(b, x, ValueRange{t, index(j)}));
      Value ws = widen(memref::LoadOp::create(b, w, wIndex(index(j))));
      sum = arith::AddFOp::create(b, sum, arith::MulFOp::create(b, xs, ws));
    }
    sums.push_back(sum);
  }
  return sums;
}

} // namespace qtensor::conversion
