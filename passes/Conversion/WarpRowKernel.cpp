//===- WarpRowKernel.cpp - One warp per output row, on both targets -------===//

#include "WarpRowKernel.h"

#include "KernelTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace qtensor::conversion {

namespace {

/// Runs `body` inside `scf.if cond` (or directly when cond is null).
void underGuard(ImplicitLocOpBuilder &b, Value cond,
                function_ref<void(ImplicitLocOpBuilder &)> body) {
  if (!cond) {
    body(b);
    return;
  }
  scf::IfOp::create(b, cond, [&](OpBuilder &nested, Location loc) {
    ImplicitLocOpBuilder ib(loc, nested);
    body(ib);
    scf::YieldOp::create(ib);
  });
}

void forLoop(ImplicitLocOpBuilder &b, int64_t count,
             function_ref<void(ImplicitLocOpBuilder &, Value)> body) {
  scf::ForOp::create(
      b, indexConst(b, 0), indexConst(b, count), indexConst(b, 1), ValueRange{},
      [&](OpBuilder &nested, Location loc, Value iv, ValueRange) {
        ImplicitLocOpBuilder ib(loc, nested);
        body(ib, iv);
        scf::YieldOp::create(ib);
      });
}

} // namespace

std::function<WarpRowBody(ImplicitLocOpBuilder &, ValueRange)>
argumentsOnlyBody(std::function<SmallVector<Value>(ImplicitLocOpBuilder &,
                                                   ValueRange, Value, Value)>
                      partials,
                  std::function<void(ImplicitLocOpBuilder &, ValueRange, Value,
                                     ArrayRef<Value>)>
                      store) {
  return [partials, store](ImplicitLocOpBuilder &, ValueRange args) {
    WarpRowBody body;
    body.partials = [partials, args](ImplicitLocOpBuilder &b, Value n, Value,
                                     Value lane) {
      return partials(b, args, n, lane);
    };
    body.store = [store, args](ImplicitLocOpBuilder &b, Value n, Value,
                               ArrayRef<Value> values) {
      store(b, args, n, values);
    };
    return body;
  };
}

void buildWarpRowNVPTXEntry(ImplicitLocOpBuilder &b,
                            const WarpRowEntry &entry) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard insertion(b);
  auto fn = gpu::GPUFuncOp::create(
      b, entry.symbol, FunctionType::get(ctx, entry.argumentTypes, {}));
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  // No known_block_size: it becomes `.maxntid 128`, under which ptxas caps
  // the 4-row W4 decode entry at 72 registers and spills; without it the
  // entry takes 76 and spills nothing (CUDA 13, sm_90).
  b.setInsertionPointToStart(&fn.getBody().front());
  ValueRange args = fn.getArguments();

  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value lane = arith::RemUIOp::create(b, tid, indexConst(b, kWarpSize));
  Value warp = arith::DivUIOp::create(b, tid, indexConst(b, kWarpSize));
  Value n = arith::AddIOp::create(
      b,
      arith::MulIOp::create(b, gpu::BlockIdOp::create(b, gpu::Dimension::x),
                            indexConst(b, kDecodeWarpsPerBlock)),
      warp);
  Value split = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  // The row and guard tests are uniform across a warp, so every shuffle
  // below has its full warp.
  Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, n,
                                        indexConst(b, entry.outputRows));
  if (Value guard = entry.guard ? entry.guard(b, args) : Value())
    inRange = arith::AndIOp::create(b, inRange, guard);
  underGuard(b, inRange, [&](ImplicitLocOpBuilder &ib) {
    WarpRowBody body = entry.body(ib, args);
    SmallVector<Value> acc = body.partials(ib, n, split, lane);
    for (int32_t offset = kWarpSize / 2; offset > 0; offset /= 2)
      for (Value &v : acc) {
        auto shuffle = gpu::ShuffleOp::create(ib, v, offset,
                                              static_cast<int32_t>(kWarpSize),
                                              gpu::ShuffleMode::XOR);
        v = arith::AddFOp::create(ib, v, shuffle.getShuffleResult());
      }
    Value lane0 = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, lane,
                                        indexConst(ib, 0));
    underGuard(ib, lane0, [&](ImplicitLocOpBuilder &sb) {
      body.store(sb, n, split, acc);
    });
  });
  gpu::ReturnOp::create(b);
}

void buildWarpRowHostEntry(ImplicitLocOpBuilder &b, const WarpRowEntry &entry) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard insertion(b);
  auto fn = func::FuncOp::create(
      b, entry.symbol, FunctionType::get(ctx, entry.argumentTypes, {}));
  fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  b.setInsertionPointToStart(fn.addEntryBlock());
  ValueRange args = fn.getArguments();
  const int64_t rows = entry.accumulators;
  const int64_t blocks =
      (entry.outputRows + kDecodeWarpsPerBlock - 1) / kDecodeWarpsPerBlock;
  Type f32 = b.getF32Type();

  Value guard = entry.guard ? entry.guard(b, args) : Value();
  underGuard(b, guard, [&](ImplicitLocOpBuilder &kb) {
    auto laneTy = MemRefType::get({kWarpSize, rows}, f32);
    Value lanes = memref::AllocaOp::create(kb, laneTy);
    Value swap = memref::AllocaOp::create(kb, laneTy);
    Value c0 = indexConst(kb, 0);
    WarpRowBody body = entry.body(kb, args);
    forLoop(kb, blocks, [&](ImplicitLocOpBuilder &bb, Value block) {
      forLoop(bb, entry.splits, [&](ImplicitLocOpBuilder &sb, Value split) {
        forLoop(
            sb, kDecodeWarpsPerBlock,
            [&](ImplicitLocOpBuilder &wb, Value warp) {
              Value n = arith::AddIOp::create(
                  wb,
                  arith::MulIOp::create(wb, block,
                                        indexConst(wb, kDecodeWarpsPerBlock)),
                  warp);
              Value inRange =
                  arith::CmpIOp::create(wb, arith::CmpIPredicate::ult, n,
                                        indexConst(wb, entry.outputRows));
              underGuard(wb, inRange, [&](ImplicitLocOpBuilder &ib) {
                forLoop(ib, kWarpSize,
                        [&](ImplicitLocOpBuilder &lb, Value lane) {
                          SmallVector<Value> acc =
                              body.partials(lb, n, split, lane);
                          for (int64_t t = 0; t < rows; ++t)
                            memref::StoreOp::create(
                                lb, acc[t], lanes,
                                ValueRange{lane, indexConst(lb, t)});
                        });
                for (int64_t offset = kWarpSize / 2; offset > 0; offset /= 2) {
                  forLoop(ib, kWarpSize,
                          [&](ImplicitLocOpBuilder &lb, Value lane) {
                            Value partner = arith::XOrIOp::create(
                                lb, lane, indexConst(lb, offset));
                            for (int64_t t = 0; t < rows; ++t) {
                              Value tt = indexConst(lb, t);
                              Value mine = memref::LoadOp::create(
                                  lb, lanes, ValueRange{lane, tt});
                              Value theirs = memref::LoadOp::create(
                                  lb, lanes, ValueRange{partner, tt});
                              memref::StoreOp::create(
                                  lb, arith::AddFOp::create(lb, mine, theirs),
                                  swap, ValueRange{lane, tt});
                            }
                          });
                  memref::CopyOp::create(ib, swap, lanes);
                }
                SmallVector<Value> result;
                for (int64_t t = 0; t < rows; ++t)
                  result.push_back(memref::LoadOp::create(
                      ib, lanes, ValueRange{c0, indexConst(ib, t)}));
                body.store(ib, n, split, result);
              });
            });
      });
    });
  });
  func::ReturnOp::create(b);
}

} // namespace qtensor::conversion
