//===- RowDots.cpp - Dot products of activation rows with weight rows -----===//

#include "RowDots.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace qtensor::conversion {

SmallVector<Value> emitRowDots(ImplicitLocOpBuilder &b, Value x, Value t0,
                               int64_t rows, ArrayRef<WeightRow> ws, int64_t k,
                               int64_t kLanes) {
  const int64_t nw = int64_t(ws.size());
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
  auto wIndex = [&](const WeightRow &row, Value kk) {
    SmallVector<Value> at(row.at.begin(), row.at.end());
    at.push_back(kk);
    return at;
  };
  auto rowOf = [&](int64_t r) -> Value {
    return arith::AddIOp::create(b, t0, index(r));
  };
  Value zero = arith::ConstantOp::create(
      b, SplatElementsAttr::get(lanes, b.getF32FloatAttr(0.0)));
  SmallVector<Value> init(size_t(rows * nw), zero);
  const int64_t whole = k / kLanes * kLanes;
  auto loop =
      scf::ForOp::create(b, index(0), index(whole), index(kLanes), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kk = loop.getInductionVar();
    SmallVector<Value> wv;
    for (const WeightRow &row : ws)
      wv.push_back(widen(
          vector::LoadOp::create(b, VectorType::get({kLanes}, elementOf(row.w)),
                                 row.w, wIndex(row, kk))));
    SmallVector<Value> next;
    for (int64_t r = 0; r < rows; ++r) {
      Value xv = widen(
          vector::LoadOp::create(b, VectorType::get({kLanes}, elementOf(x)), x,
                                 ValueRange{rowOf(r), kk}));
      for (int64_t i = 0; i < nw; ++i)
        next.push_back(vector::FMAOp::create(
            b, xv, wv[size_t(i)],
            loop.getRegionIterArgs()[unsigned(r * nw + i)]));
    }
    scf::YieldOp::create(b, next);
  }
  SmallVector<Value> sums;
  for (int64_t r = 0; r < rows; ++r) {
    Value t = rowOf(r);
    for (int64_t i = 0; i < nw; ++i) {
      const WeightRow &row = ws[size_t(i)];
      Value sum = vector::ReductionOp::create(
          b, vector::CombiningKind::ADD, loop.getResult(unsigned(r * nw + i)),
          arith::FastMathFlags::reassoc);
      for (int64_t j = whole; j < k; ++j) {
        Value xs = widen(memref::LoadOp::create(b, x, ValueRange{t, index(j)}));
        Value wsv =
            widen(memref::LoadOp::create(b, row.w, wIndex(row, index(j))));
        sum = arith::AddFOp::create(b, sum, arith::MulFOp::create(b, xs, wsv));
      }
      sums.push_back(sum);
    }
  }
  return sums;
}

SmallVector<Value> emitRowDots(ImplicitLocOpBuilder &b, Value x, Value t0,
                               int64_t rows, Value w, ValueRange wAt,
                               int64_t k) {
  WeightRow row{w, SmallVector<Value>(wAt.begin(), wAt.end())};
  return emitRowDots(b, x, t0, rows, ArrayRef<WeightRow>(row), k);
}

} // namespace qtensor::conversion
