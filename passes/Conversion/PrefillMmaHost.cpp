//===- PrefillMmaHost.cpp - The prefill GEMM's host twin ------------------===//
//
// The device kernel (PrefillMma.cpp) on the CPU, for CI parity: blocks,
// warps and lanes become loops, and the three warp-wide or asynchronous
// instructions are replayed on lane arrays with their PTX semantics:
//
//   cp.async      a copy of 8 activations, or 8 zeros outside [T, K];
//   ldmatrix.x4   each lane stores its row address; lane l then reads, for
//                 register r, the pair at column 2 (l % 4) of the row that
//                 lane 8r + l / 4 addressed;
//   mma.sync      every lane stores its A and B fragment registers; each
//                 accumulator c(row, col) then adds the 16 products
//                 A[row][k] B[k][col], gathered from the lanes that hold
//                 them, in f32 (the products of 16-bit operands are exact).
//
// Everything else (copy coordinates, ldmatrix addresses, B loads and
// dequantization, per-group scaling, the epilogue) is the same emitter code
// as on the device, so a fragment-order or index error fails here too.
//
//===----------------------------------------------------------------------===//

#include "PrefillMmaEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace qtensor::prefill {

namespace {

using BodyFn = function_ref<void(ImplicitLocOpBuilder &, Value)>;

void forLoop(ImplicitLocOpBuilder &b, Value lb, Value ub, BodyFn body) {
  scf::ForOp::create(
      b, lb, ub, indexConst(b, 1), ValueRange{},
      [&](OpBuilder &nested, Location loc, Value iv, ValueRange) {
        ImplicitLocOpBuilder ib(loc, nested);
        body(ib, iv);
        scf::YieldOp::create(ib);
      });
}

void forLoop(ImplicitLocOpBuilder &b, int64_t count, BodyFn body) {
  forLoop(b, indexConst(b, 0), indexConst(b, count), body);
}

Value add(ImplicitLocOpBuilder &b, Value x, int64_t c) {
  return arith::AddIOp::create(b, x, indexConst(b, c));
}
Value mul(ImplicitLocOpBuilder &b, Value x, int64_t c) {
  return arith::MulIOp::create(b, x, indexConst(b, c));
}
Value div(ImplicitLocOpBuilder &b, Value x, int64_t c) {
  return arith::DivUIOp::create(b, x, indexConst(b, c));
}
Value rem(ImplicitLocOpBuilder &b, Value x, int64_t c) {
  return arith::RemUIOp::create(b, x, indexConst(b, c));
}

class HostKernel {
public:
  HostKernel(const PrefillMmaEmitter &e, ValueRange args) : e(e), args(args) {}

  void build(ImplicitLocOpBuilder &b);

private:
  void issueCopies(ImplicitLocOpBuilder &b, Value kt, Value st);
  void computeTile(ImplicitLocOpBuilder &b, Value kt, Value st, int64_t steps,
                   bool isLast, Value warp);
  /// Step j of the tile (global k16 step `step`), zero-points (if any)
  /// from stage slot `zeroSlot`: ldmatrix, B fragments, mma.
  void multiplyStep(ImplicitLocOpBuilder &b, Value warp, const WarpTile &tile,
                    ArrayRef<Value> slabs, Value st, Value j, Value step,
                    Value zeroSlot);
  void ldmatrix(ImplicitLocOpBuilder &b, Value st, Value rowOffset, int64_t mi,
                Value j);
  /// The lane's mma.sync results for every (mi, ni) tile into `partial`,
  /// or (ones) those of each m-tile against a B of ones into `xSums`.
  void mma(ImplicitLocOpBuilder &b, Value warp, Value lane, bool ones);
  void endGroup(ImplicitLocOpBuilder &b, Value warp, const WarpTile &tile,
                Value st, Value slot);
  SmallVector<Value> loadLane(ImplicitLocOpBuilder &b, Value buffer, Value warp,
                              Value lane) {
    SmallVector<Value> v;
    for (int64_t i = 0; i < lastDim(buffer); ++i)
      v.push_back(memref::LoadOp::create(
          b, buffer, ValueRange{warp, lane, indexConst(b, i)}));
    return v;
  }
  void storeLane(ImplicitLocOpBuilder &b, ArrayRef<Value> v, Value buffer,
                 Value warp, Value lane) {
    for (int64_t i = 0; i < lastDim(buffer); ++i)
      memref::StoreOp::create(b, v[i], buffer,
                              ValueRange{warp, lane, indexConst(b, i)});
  }
  void storeZeros(ImplicitLocOpBuilder &b, Value buffer, Value warp,
                  Value lane) {
    Value zero = arith::ConstantOp::create(b, b.getF32FloatAttr(0.0));
    storeLane(b, SmallVector<Value>(lastDim(buffer), zero), buffer, warp, lane);
  }
  static int64_t lastDim(Value buffer) {
    return cast<MemRefType>(buffer.getType()).getShape().back();
  }

  const PrefillMmaEmitter &e;
  ValueRange args;
  Value rows, mBase, bn;
  /// The block's shared memory and the warps' registers, as arrays.
  Value stage, scaleBuf, zeroBuf, addr, aFrag, bFrag, acc, partial, xSums;
};

void HostKernel::issueCopies(ImplicitLocOpBuilder &b, Value kt, Value st) {
  auto chunkTy = VectorType::get({kChunk}, e.act);
  forLoop(b, kThreads, [&](ImplicitLocOpBuilder &tb, Value thread) {
    if (e.stagesQParams())
      e.storeTileQParams(tb, e.loadTileQParams(tb, args, thread, bn, kt),
                         scaleBuf, zeroBuf, thread, st);
    for (int64_t c = 0; c < kCopiesPerThread; ++c) {
      CopyChunk chunk = e.copyChunk(tb, thread, c, mBase, kt, rows);
      // Each branch stores its own chunk: a 16-bit float vector passed
      // between blocks would be widened and rounded back by a libcall on
      // x86 (bf16 has none in libgcc 12).
      SmallVector<Value, 3> dst{st, chunk.row, chunk.col};
      scf::IfOp::create(
          tb, chunk.valid,
          [&](OpBuilder &nested, Location loc) {
            ImplicitLocOpBuilder ib(loc, nested);
            Value v =
                vector::LoadOp::create(ib, chunkTy, e.argX(args),
                                       ValueRange{chunk.srcRow, chunk.srcCol});
            vector::StoreOp::create(ib, v, stage, dst);
            scf::YieldOp::create(ib);
          },
          [&](OpBuilder &nested, Location loc) {
            ImplicitLocOpBuilder ib(loc, nested);
            Value zeros = arith::ConstantOp::create(
                ib,
                SplatElementsAttr::get(chunkTy, ib.getFloatAttr(e.act, 0.0)));
            vector::StoreOp::create(ib, zeros, stage, dst);
            scf::YieldOp::create(ib);
          });
    }
  });
}

void HostKernel::ldmatrix(ImplicitLocOpBuilder &b, Value st, Value rowOffset,
                          int64_t mi, Value j) {
  forLoop(b, kLanes, [&](ImplicitLocOpBuilder &lb, Value lane) {
    auto [row, col] = e.ldmatrixAddress(lb, lane, rowOffset, mi, j);
    memref::StoreOp::create(lb, row, addr, ValueRange{lane, indexConst(lb, 0)});
    memref::StoreOp::create(lb, col, addr, ValueRange{lane, indexConst(lb, 1)});
  });
  auto pairTy = VectorType::get({2}, e.act);
  forLoop(b, kLanes, [&](ImplicitLocOpBuilder &lb, Value lane) {
    Value colInRow = mul(lb, rem(lb, lane, 4), 2);
    for (int64_t r = 0; r < 4; ++r) {
      Value src = add(lb, div(lb, lane, 4), 8 * r);
      Value row =
          memref::LoadOp::create(lb, addr, ValueRange{src, indexConst(lb, 0)});
      Value col = arith::AddIOp::create(
          lb,
          memref::LoadOp::create(lb, addr, ValueRange{src, indexConst(lb, 1)}),
          colInRow);
      Value pair =
          vector::LoadOp::create(lb, pairTy, stage, ValueRange{st, row, col});
      vector::StoreOp::create(lb, pair, aFrag,
                              ValueRange{indexConst(lb, mi), lane,
                                         indexConst(lb, r), indexConst(lb, 0)});
    }
  });
}

void HostKernel::mma(ImplicitLocOpBuilder &b, Value warp, Value lane,
                     bool ones) {
  // D = A B + C for the lane's 4 accumulators of every (mi, ni) tile.
  Value g = div(b, lane, 4);
  Value t2 = mul(b, rem(b, lane, 4), 2);
  Value out = ones ? xSums : partial;
  forLoop(b, kMTiles, [&](ImplicitLocOpBuilder &mb, Value mi) {
    forLoop(mb, ones ? 1 : kNTiles, [&](ImplicitLocOpBuilder &nb, Value ni) {
      forLoop(nb, 4, [&](ImplicitLocOpBuilder &eb, Value el) {
        Value row = arith::AddIOp::create(eb, g, mul(eb, div(eb, el, 2), 8));
        Value col = arith::AddIOp::create(eb, t2, rem(eb, el, 2));
        const int64_t tilesPerM = ones ? 1 : kNTiles;
        Value index = arith::AddIOp::create(
            eb,
            mul(eb, arith::AddIOp::create(eb, mul(eb, mi, tilesPerM), ni), 4),
            el);
        Value c =
            memref::LoadOp::create(eb, out, ValueRange{warp, lane, index});
        auto sum = scf::ForOp::create(
            eb, indexConst(eb, 0), indexConst(eb, kMmaK), indexConst(eb, 1),
            ValueRange{c},
            [&](OpBuilder &nested, Location loc, Value k, ValueRange iter) {
              ImplicitLocOpBuilder kb(loc, nested);
              Value quad = div(kb, rem(kb, k, 8), 2);
              Value half = rem(kb, k, 2);
              Value high = div(kb, k, 8);
              // A[row][k]: lane 4 (row % 8) + (k % 8) / 2, register
              // row / 8 + 2 (k / 8).
              Value aLane =
                  arith::AddIOp::create(kb, mul(kb, rem(kb, row, 8), 4), quad);
              Value aReg =
                  arith::AddIOp::create(kb, div(kb, row, 8), mul(kb, high, 2));
              // B[k][col]: lane 4 col + (k % 8) / 2, register k / 8.
              Value bLane = arith::AddIOp::create(kb, mul(kb, col, 4), quad);
              Value av = memref::LoadOp::create(
                  kb, aFrag, ValueRange{mi, aLane, aReg, half});
              Value bv =
                  ones ? Value(arith::ConstantOp::create(
                             kb, kb.getFloatAttr(e.act, 1.0)))
                       : Value(memref::LoadOp::create(
                             kb, bFrag, ValueRange{ni, bLane, high, half}));
              Value product = arith::MulFOp::create(
                  kb, arith::ExtFOp::create(kb, e.f32, av),
                  arith::ExtFOp::create(kb, e.f32, bv));
              scf::YieldOp::create(
                  kb, ValueRange{arith::AddFOp::create(kb, iter[0], product)});
            });
        memref::StoreOp::create(eb, sum.getResult(0), out,
                                ValueRange{warp, lane, index});
      });
    });
  });
}

void HostKernel::endGroup(ImplicitLocOpBuilder &b, Value warp,
                          const WarpTile &tile, Value st, Value slot) {
  forLoop(b, kLanes, [&](ImplicitLocOpBuilder &lb, Value lane) {
    SmallVector<Value> scales =
        e.stagesQParams()
            ? e.stagedScales(lb, scaleBuf, st, slot, tile.column, lane)
            : e.globalScales(lb, args, tile.nWarp, lane, indexConst(lb, 0));
    SmallVector<Value> mins, sums;
    if (e.spec.minZero) {
      mins = e.stagesQParams()
                 ? e.stagedScales(lb, zeroBuf, st, slot, tile.column, lane)
                 : e.globalMins(lb, args, tile.nWarp, lane, indexConst(lb, 0));
      sums = loadLane(lb, xSums, warp, lane);
    }
    SmallVector<Value> p = loadLane(lb, partial, warp, lane);
    SmallVector<Value> a;
    if (e.stagesQParams())
      a = loadLane(lb, acc, warp, lane);
    storeLane(lb, e.applyScales(lb, scales, p, a, mins, sums), acc, warp, lane);
    storeZeros(lb, partial, warp, lane);
    if (e.spec.minZero)
      storeZeros(lb, xSums, warp, lane);
  });
}

void HostKernel::multiplyStep(ImplicitLocOpBuilder &b, Value warp,
                              const WarpTile &tile, ArrayRef<Value> slabs,
                              Value st, Value j, Value step, Value zeroSlot) {
  for (int64_t mi = 0; mi < kMTiles; ++mi)
    ldmatrix(b, st, tile.rowOffset, mi, j);
  forLoop(b, kLanes, [&](ImplicitLocOpBuilder &lb, Value lane) {
    // The device reads zero-points at the first step of a group slot;
    // they are the same values at every step of it.
    SmallVector<Value> zeros =
        !e.integerZeros() ? e.constantZeroOperands(lb)
        : e.stagesQParams()
            ? e.stagedZeroOperands(lb, zeroBuf, st, zeroSlot, tile.column, lane)
            : e.globalZeroOperands(lb, args, tile.nWarp, lane,
                                   indexConst(lb, 0));
    SmallVector<Value> regs = e.bFragments(lb, args, slabs, lane, step, zeros);
    for (int64_t i = 0; i < 2 * kNTiles; ++i)
      vector::StoreOp::create(lb, regs[i], bFrag,
                              ValueRange{indexConst(lb, i / 2), lane,
                                         indexConst(lb, i % 2),
                                         indexConst(lb, 0)});
  });
  forLoop(b, kLanes, [&](ImplicitLocOpBuilder &lb, Value lane) {
    mma(lb, warp, lane, /*ones=*/false);
    if (e.spec.minZero)
      mma(lb, warp, lane, /*ones=*/true);
  });
}

void HostKernel::computeTile(ImplicitLocOpBuilder &b, Value kt, Value st,
                             int64_t steps, bool isLast, Value warp) {
  WarpTile tile = e.warpTile(b, warp, bn);
  SmallVector<Value> slabs = e.warpSlabs(b, tile.nWarp);
  Value firstStep = mul(b, kt, kStepsPerTile);
  if (e.spec.minZero && e.stepsPerGroup == 1) {
    // As the device runs it (PrefillMma.cpp): a loop over the tile's steps,
    // each its own group, staged in slot j.
    forLoop(b, steps, [&](ImplicitLocOpBuilder &jb, Value j) {
      multiplyStep(jb, warp, tile, slabs, st, j,
                   arith::AddIOp::create(jb, firstStep, j), j);
      endGroup(jb, warp, tile, st, j);
    });
    return;
  }
  SmallVector<StepPlan> plan = e.planTile(steps, isLast);
  for (int64_t j = 0; j < steps; ++j) {
    Value slot = indexConst(b, e.slotOfStep(j));
    multiplyStep(b, warp, tile, slabs, st, indexConst(b, j),
                 add(b, firstStep, j), slot);
    if (plan[j].end == GroupEnd::Always) {
      endGroup(b, warp, tile, st, slot);
    } else if (plan[j].end == GroupEnd::WhenTileEndsGroup) {
      scf::IfOp::create(b, e.tileEndsGroup(b, kt),
                        [&](OpBuilder &nested, Location loc) {
                          ImplicitLocOpBuilder ib(loc, nested);
                          endGroup(ib, warp, tile, st, slot);
                          scf::YieldOp::create(ib);
                        });
    }
  }
}

void HostKernel::build(ImplicitLocOpBuilder &b) {
  auto allocaOf = [&](ArrayRef<int64_t> shape, Type elem) -> Value {
    return memref::AllocaOp::create(b, MemRefType::get(shape, elem));
  };
  stage = memref::AllocaOp::create(b, e.stageType(Attribute()));
  if (e.stagesQParams()) {
    scaleBuf = memref::AllocaOp::create(b, e.scaleStageType(Attribute()));
    if (e.spec.takesZeroPoints())
      zeroBuf = memref::AllocaOp::create(b, e.zeroStageType(Attribute()));
  }
  addr = allocaOf({kLanes, 2}, b.getIndexType());
  aFrag = allocaOf({kMTiles, kLanes, 4, 2}, e.act);
  bFrag = allocaOf({kNTiles, kLanes, 2, 2}, e.act);
  acc = allocaOf({kWarps, kLanes, kAccPerLane}, e.f32);
  partial = allocaOf({kWarps, kLanes, kAccPerLane}, e.f32);
  if (e.spec.minZero)
    xSums = allocaOf({kWarps, kLanes, kXSumsPerLane}, e.f32);
  rows = memref::DimOp::create(b, e.argX(args), 0);
  Value mBlocks =
      div(b, add(b, rows, kPrefillRowsPerBlock - 1), kPrefillRowsPerBlock);

  forLoop(
      b, indexConst(b, 0), mBlocks, [&](ImplicitLocOpBuilder &mb, Value bm) {
        forLoop(mb, e.nBlocks, [&](ImplicitLocOpBuilder &bb, Value bnIv) {
          mBase = mul(bb, bm, kPrefillRowsPerBlock);
          bn = bnIv;
          forLoop(bb, kWarps, [&](ImplicitLocOpBuilder &wb, Value warp) {
            forLoop(wb, kLanes, [&](ImplicitLocOpBuilder &lb, Value lane) {
              storeZeros(lb, acc, warp, lane);
              storeZeros(lb, partial, warp, lane);
              if (e.spec.minZero)
                storeZeros(lb, xSums, warp, lane);
            });
          });
          // The device's pipeline order: tile kt + 1 is copied into the other
          // stage before tile kt is multiplied.
          issueCopies(bb, indexConst(bb, 0), indexConst(bb, 0));
          forLoop(
              bb, indexConst(bb, 0), indexConst(bb, e.numTiles - 1),
              [&](ImplicitLocOpBuilder &kb, Value kt) {
                Value next = add(kb, kt, 1);
                issueCopies(kb, next, rem(kb, next, kStages));
                forLoop(kb, kWarps, [&](ImplicitLocOpBuilder &wb, Value warp) {
                  computeTile(wb, kt, rem(wb, kt, kStages), kStepsPerTile,
                              /*isLast=*/false, warp);
                });
              });
          const int64_t last = e.numTiles - 1;
          forLoop(bb, kWarps, [&](ImplicitLocOpBuilder &wb, Value warp) {
            computeTile(wb, indexConst(wb, last),
                        indexConst(wb, last % kStages), e.lastSteps,
                        /*isLast=*/true, warp);
            WarpTile tile = e.warpTile(wb, warp, bn);
            Value mWarp = arith::AddIOp::create(wb, mBase, tile.rowOffset);
            forLoop(wb, kLanes, [&](ImplicitLocOpBuilder &lb, Value lane) {
              e.storeOutputs(lb, args, mWarp, tile.nWarp, lane, rows,
                             loadLane(lb, acc, warp, lane));
            });
          });
        });
      });
}

} // namespace

void buildPrefillMmaHost(ModuleOp module, const PrefillMmaEmitter &e) {
  MLIRContext *ctx = module.getContext();
  ImplicitLocOpBuilder b(module.getLoc(), ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(b, e.spec.name(),
                                 FunctionType::get(ctx, e.argumentTypes(), {}));
  fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  b.setInsertionPointToStart(fn.addEntryBlock());
  HostKernel kernel(e, fn.getArguments());
  kernel.build(b);
  func::ReturnOp::create(b);
}

} // namespace qtensor::prefill
