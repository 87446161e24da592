//===- PrefillMmaEmitter.cpp - Per-thread and per-lane prefill pieces -----===//
//
// Dequantization (all exact, so the tensor cores see the integers q - z):
//   f16       (field | 0x6400) is the half 1024 + field; subtracting the
//             half 1024 + z (z + 2^(b-1) offset for symmetric codes) gives
//             q - z exactly (|q - z| <= 255 < 2^11);
//   bf16 W4   the same with 0x4300 = 128 (fields and z below 16 fit the
//             7 fraction bits);
//   bf16 W8   8-bit fields do not fit bf16's fraction: the f32 magic
//             0x4B000000 (2^23) and an exact truncation to bf16
//             (|q - z| <= 255 has 8 significant bits); 2- to 6-bit codes
//             in byte fields stay below 128 and take the 16-bit magic;
//   codebook  table[q] from selects in registers (CodebookLookup.h), then
//             truncated to the activation type: validation admits only
//             tables exact in it (IQ4_NL, E2M1, E4M3).
// Scales are applied per group to f32 partial sums (see PrefillMma.cpp); a
// min m adds m * (the group's sum of x), a sum the tensor cores compute
// against a B of ones.
//
//===----------------------------------------------------------------------===//

#include "PrefillMmaEmitter.h"
#include "CodebookLookup.h"
#include "KernelTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace qtensor::prefill {

Value indexConst(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

namespace {

Value i32Const(ImplicitLocOpBuilder &b, uint32_t v) {
  return arith::ConstantOp::create(b, b.getI32IntegerAttr(int32_t(v)));
}

Value minIndex(ImplicitLocOpBuilder &b, Value v, int64_t bound) {
  return arith::MinUIOp::create(b, v, indexConst(b, bound));
}

Value ult(ImplicitLocOpBuilder &b, Value lhs, Value rhs) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, lhs, rhs);
}

Value extendToF32(ImplicitLocOpBuilder &b, Value v) {
  Type f32 = b.getF32Type();
  return v.getType() == f32 ? v : Value(arith::ExtFOp::create(b, f32, v));
}

/// Reinterprets a 32-bit register as two 16-bit values and back.
Value asPair(ImplicitLocOpBuilder &b, Value word, Type elem) {
  Value v = vector::FromElementsOp::create(
      b, VectorType::get({1}, word.getType()), ValueRange{word});
  return vector::BitCastOp::create(b, VectorType::get({2}, elem), v);
}

} // namespace

PrefillMmaEmitter::PrefillMmaEmitter(const QuantKernelSpec &spec,
                                     MLIRContext *ctx)
    : spec(spec), ctx(ctx), f32(Float32Type::get(ctx)),
      i32(IntegerType::get(ctx, 32)),
      act(conversion::elementType(ctx, spec.activation)),
      scale(conversion::elementType(ctx, spec.scaleType())),
      out(conversion::elementType(ctx, spec.output)), hasBias(spec.bias),
      slots(spec),
      halfMagic(spec.activation == FloatType::F16 || spec.bits < 8) {
  kSteps = (spec.k + kMmaK - 1) / kMmaK;
  numTiles = (kSteps + kStepsPerTile - 1) / kStepsPerTile;
  lastSteps = kSteps - (numTiles - 1) * kStepsPerTile;
  stepsPerGroup = spec.groupSize == 0 ? 0 : spec.groupSize / kMmaK;
  groups = spec.groupsPerRow();
  const int64_t panelRows = 256 / spec.fieldBits();
  slabs = (spec.n + panelRows - 1) / panelRows;
  nBlocks = (spec.n + kPrefillColsPerBlock - 1) / kPrefillColsPerBlock;
}

SmallVector<Type> PrefillMmaEmitter::argumentTypes() const {
  const int64_t t = spec.dynamicRows() ? ShapedType::kDynamic : spec.rows;
  SmallVector<Type> types = {
      MemRefType::get({t, spec.k}, act),
      MemRefType::get({slabs, kSteps * kPanelWords}, i32)};
  llvm::append_range(types, conversion::qparamArgumentTypes(ctx, spec, scale));
  if (hasBias)
    types.push_back(MemRefType::get({spec.n}, out));
  types.push_back(MemRefType::get({t, spec.n}, out));
  return types;
}

MemRefType PrefillMmaEmitter::stageType(Attribute memorySpace) const {
  return MemRefType::get({kStages, kPrefillRowsPerBlock, kStageStride}, act,
                         MemRefLayoutAttrInterface(), memorySpace);
}

int64_t groupSlots(const QuantKernelSpec &spec) {
  if (spec.groupSize == 0)
    return 0;
  const int64_t stepsPerGroup = spec.groupSize / kMmaK;
  return stepsPerGroup < kStepsPerTile ? kStepsPerTile / stepsPerGroup : 1;
}

int64_t PrefillMmaEmitter::groupSlots() const {
  return prefill::groupSlots(spec);
}

int64_t PrefillMmaEmitter::slotOfStep(int64_t j) const {
  return groupSlots() > 1 ? j / stepsPerGroup : 0;
}

MemRefType PrefillMmaEmitter::scaleStageType(Attribute memorySpace) const {
  return MemRefType::get({kStages, groupSlots(), kPrefillColsPerBlock}, scale,
                         MemRefLayoutAttrInterface(), memorySpace);
}

MemRefType PrefillMmaEmitter::zeroStageType(Attribute memorySpace) const {
  return MemRefType::get({kStages, groupSlots(), kPrefillColsPerBlock},
                         zeroElement(), MemRefLayoutAttrInterface(),
                         memorySpace);
}

Type PrefillMmaEmitter::zeroElement() const {
  return spec.minZero ? scale : Type(IntegerType::get(ctx, 8));
}

SmallVector<StepPlan> PrefillMmaEmitter::planTile(int64_t steps,
                                                  bool isLast) const {
  SmallVector<StepPlan> plan;
  const int64_t spg = stepsPerGroup;
  for (int64_t j = 0; j < steps; ++j) {
    StepPlan p{j == 0 || (spg > 0 && spg < kStepsPerTile && j % spg == 0),
               GroupEnd::None};
    if (isLast && j == steps - 1)
      p.end = GroupEnd::Always; // the last step ends the last group
    else if (spg == 0)
      p.end = GroupEnd::None; // per-channel: one group, ended above
    else if (spg <= kStepsPerTile)
      p.end = (j + 1) % spg == 0 ? GroupEnd::Always : GroupEnd::None;
    else if (j == kStepsPerTile - 1)
      p.end = GroupEnd::WhenTileEndsGroup;
    plan.push_back(p);
  }
  return plan;
}

Value PrefillMmaEmitter::tileEndsGroup(ImplicitLocOpBuilder &b,
                                       Value kt) const {
  const int64_t tilesPerGroup = stepsPerGroup / kStepsPerTile;
  Value r = arith::RemUIOp::create(b, kt, indexConst(b, tilesPerGroup));
  return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, r,
                               indexConst(b, tilesPerGroup - 1));
}

Value PrefillMmaEmitter::groupOfStep(ImplicitLocOpBuilder &b,
                                     Value step) const {
  if (stepsPerGroup == 0)
    return indexConst(b, 0);
  return arith::DivUIOp::create(b, step, indexConst(b, stepsPerGroup));
}

CopyChunk PrefillMmaEmitter::copyChunk(ImplicitLocOpBuilder &b, Value thread,
                                       int64_t copy, Value mBase, Value kt,
                                       Value rows) const {
  const int64_t chunksPerRow = kTileK / kChunk;
  Value chunk =
      arith::AddIOp::create(b, thread, indexConst(b, copy * kThreads));
  CopyChunk c;
  c.row = arith::DivUIOp::create(b, chunk, indexConst(b, chunksPerRow));
  c.col = arith::MulIOp::create(
      b, arith::RemUIOp::create(b, chunk, indexConst(b, chunksPerRow)),
      indexConst(b, kChunk));
  Value gRow = arith::AddIOp::create(b, mBase, c.row);
  Value gCol = arith::AddIOp::create(
      b, arith::MulIOp::create(b, kt, indexConst(b, kTileK)), c.col);
  // K is a multiple of the chunk: a chunk is wholly inside or outside.
  c.valid = arith::AndIOp::create(b, ult(b, gRow, rows),
                                  ult(b, gCol, indexConst(b, spec.k)));
  Value zero = indexConst(b, 0);
  c.srcRow = arith::SelectOp::create(b, c.valid, gRow, zero);
  c.srcCol = arith::SelectOp::create(b, c.valid, gCol, zero);
  return c;
}

WarpTile PrefillMmaEmitter::warpTile(ImplicitLocOpBuilder &b, Value warp,
                                     Value blockN) const {
  Value warpM = arith::DivUIOp::create(b, warp, indexConst(b, kWarpsN));
  Value warpN = arith::RemUIOp::create(b, warp, indexConst(b, kWarpsN));
  WarpTile t;
  t.rowOffset = arith::MulIOp::create(b, warpM, indexConst(b, kWarpRows));
  t.column = arith::MulIOp::create(b, warpN, indexConst(b, kWarpCols));
  t.nWarp = arith::AddIOp::create(
      b, arith::MulIOp::create(b, blockN, indexConst(b, kPrefillColsPerBlock)),
      t.column);
  return t;
}

std::pair<Value, Value>
PrefillMmaEmitter::ldmatrixAddress(ImplicitLocOpBuilder &b, Value lane,
                                   Value rowOffset, int64_t mi, Value j) const {
  // Lanes 8i..8i+7 address the rows of matrix i: i = 0 rows 0-7 / k 0-7
  // (a0), 1 rows 8-15 / k 0-7 (a1), 2 rows 0-7 / k 8-15 (a2), 3 rows 8-15 /
  // k 8-15 (a3).
  Value r8 = arith::RemUIOp::create(b, lane, indexConst(b, 8));
  Value matrix = arith::DivUIOp::create(b, lane, indexConst(b, 8));
  Value rowHalf = arith::RemUIOp::create(b, matrix, indexConst(b, 2));
  Value colHalf = arith::DivUIOp::create(b, matrix, indexConst(b, 2));
  Value row = arith::AddIOp::create(
      b, arith::AddIOp::create(b, r8, rowOffset),
      arith::AddIOp::create(b,
                            arith::MulIOp::create(b, rowHalf, indexConst(b, 8)),
                            indexConst(b, mi * kMmaM)));
  Value col = arith::AddIOp::create(
      b, arith::MulIOp::create(b, colHalf, indexConst(b, 8)),
      arith::MulIOp::create(b, j, indexConst(b, kMmaK)));
  return {row, col};
}

SmallVector<Value> PrefillMmaEmitter::warpSlabs(ImplicitLocOpBuilder &b,
                                                Value nWarp) const {
  const int64_t panelRows = 256 / spec.fieldBits();
  Value first = arith::DivUIOp::create(b, nWarp, indexConst(b, panelRows));
  SmallVector<Value> result;
  for (int64_t i = 0; i < kWarpCols / panelRows; ++i)
    result.push_back(minIndex(
        b, arith::AddIOp::create(b, first, indexConst(b, i)), slabs - 1));
  return result;
}

SmallVector<Value>
PrefillMmaEmitter::loadTileQParams(ImplicitLocOpBuilder &b, ValueRange args,
                                   Value thread, Value blockN, Value kt) const {
  Value n = minIndex(
      b,
      arith::AddIOp::create(
          b,
          arith::MulIOp::create(b, blockN, indexConst(b, kPrefillColsPerBlock)),
          thread),
      spec.n - 1);
  SmallVector<Value> groupsOfSlots;
  for (int64_t slot = 0; slot < groupSlots(); ++slot) {
    Value step = arith::AddIOp::create(
        b, arith::MulIOp::create(b, kt, indexConst(b, kStepsPerTile)),
        indexConst(b, slot * stepsPerGroup));
    groupsOfSlots.push_back(minIndex(b, groupOfStep(b, step), groups - 1));
  }
  SmallVector<Value> values;
  for (Value g : groupsOfSlots)
    values.push_back(
        spec.nested
            ? conversion::emitNestedScale(b, spec, argS(args), args[slots.s2],
                                          n, g)
            : Value(memref::LoadOp::create(b, argS(args), ValueRange{n, g})));
  if (spec.takesZeroPoints())
    for (Value g : groupsOfSlots)
      values.push_back(
          spec.nested
              ? conversion::emitNestedMin(b, spec, argZ(args), args[slots.z2],
                                          n, g)
              : Value(memref::LoadOp::create(b, argZ(args), ValueRange{n, g})));
  return values;
}

void PrefillMmaEmitter::storeTileQParams(ImplicitLocOpBuilder &b,
                                         ArrayRef<Value> values, Value scales,
                                         Value zeros, Value thread,
                                         Value st) const {
  const int64_t slots = groupSlots();
  for (int64_t i = 0; i < int64_t(values.size()); ++i)
    memref::StoreOp::create(b, values[i], i < slots ? scales : zeros,
                            ValueRange{st, indexConst(b, i % slots), thread});
}

namespace {

/// The lane's C columns in tile ni are column + 8 ni + 2 (lane % 4) + e, its
/// B column column + 8 ni + lane / 4.
Value cColumn(ImplicitLocOpBuilder &b, Value column, Value lane) {
  return arith::AddIOp::create(
      b, column,
      arith::MulIOp::create(b,
                            arith::RemUIOp::create(b, lane, indexConst(b, 4)),
                            indexConst(b, 2)));
}
Value bColumn(ImplicitLocOpBuilder &b, Value column, Value lane) {
  return arith::AddIOp::create(
      b, column, arith::DivUIOp::create(b, lane, indexConst(b, 4)));
}

} // namespace

SmallVector<Value> PrefillMmaEmitter::stagedScales(ImplicitLocOpBuilder &b,
                                                   Value scales, Value st,
                                                   Value slot, Value column,
                                                   Value lane) const {
  // The two columns of a C pair are adjacent: one 32-bit shared load.
  Value c = cColumn(b, column, lane);
  auto pairTy = VectorType::get({2}, scale);
  SmallVector<Value> result;
  for (int64_t ni = 0; ni < kNTiles; ++ni) {
    Value pair = vector::LoadOp::create(
        b, pairTy, scales,
        ValueRange{st, slot,
                   arith::AddIOp::create(b, c, indexConst(b, ni * kMmaN))},
        /*nontemporal=*/false,
        llvm::MaybeAlign(2 * scale.getIntOrFloatBitWidth() / 8));
    for (int64_t e = 0; e < 2; ++e)
      result.push_back(extendToF32(b, vector::ExtractOp::create(b, pair, e)));
  }
  return result;
}

SmallVector<Value> PrefillMmaEmitter::globalScales(ImplicitLocOpBuilder &b,
                                                   ValueRange args, Value nWarp,
                                                   Value lane,
                                                   Value group) const {
  return globalColumnValues(b, argS(args), nWarp, lane, group);
}

SmallVector<Value> PrefillMmaEmitter::globalMins(ImplicitLocOpBuilder &b,
                                                 ValueRange args, Value nWarp,
                                                 Value lane,
                                                 Value group) const {
  return globalColumnValues(b, argZ(args), nWarp, lane, group);
}

SmallVector<Value>
PrefillMmaEmitter::globalColumnValues(ImplicitLocOpBuilder &b, Value source,
                                      Value nWarp, Value lane,
                                      Value group) const {
  Value c = cColumn(b, nWarp, lane);
  SmallVector<Value> result;
  for (int64_t ni = 0; ni < kNTiles; ++ni)
    for (int64_t e = 0; e < 2; ++e) {
      Value n = minIndex(
          b, arith::AddIOp::create(b, c, indexConst(b, ni * kMmaN + e)),
          spec.n - 1);
      result.push_back(extendToF32(
          b, memref::LoadOp::create(b, source, ValueRange{n, group})));
    }
  return result;
}

namespace {

/// Magic + z as the B conversion subtracts it, for a zero-point in i32.
Value zeroOperand(ImplicitLocOpBuilder &b, const PrefillMmaEmitter &e,
                  Value z) {
  Value value;
  if (e.halfMagic) {
    // magic | z is the 16-bit float magic + z exactly (z < 2^b).
    Value bits = arith::OrIOp::create(
        b, z, i32Const(b, e.act.isF16() ? 0x6400 : 0x4300));
    bits = arith::TruncIOp::create(b, b.getIntegerType(16), bits);
    value = arith::BitcastOp::create(b, e.act, bits);
  } else {
    value = arith::BitcastOp::create(
        b, e.f32, arith::OrIOp::create(b, z, i32Const(b, 0x4B000000)));
  }
  return vector::BroadcastOp::create(b, VectorType::get({2}, value.getType()),
                                     value);
}

} // namespace

SmallVector<Value>
PrefillMmaEmitter::constantZeroOperands(ImplicitLocOpBuilder &b) const {
  // Signed codes are stored offset binary: field = q + 2^(b-1). Codes
  // under a min are q itself (the min is added after the mma).
  const double magic = halfMagic ? (act.isF16() ? 1024.0 : 128.0) : 8388608.0;
  const double offset = spec.symmetric ? double(1 << (spec.bits - 1)) : 0.0;
  Type elem = halfMagic ? act : f32;
  Value c = arith::ConstantOp::create(
      b, SplatElementsAttr::get(VectorType::get({2}, elem),
                                b.getFloatAttr(elem, magic + offset)));
  return SmallVector<Value>(kNTiles, c);
}

Value PrefillMmaEmitter::onesFragment(ImplicitLocOpBuilder &b) const {
  return arith::ConstantOp::create(
      b, SplatElementsAttr::get(VectorType::get({2}, act),
                                b.getFloatAttr(act, 1.0)));
}

SmallVector<Value>
PrefillMmaEmitter::stagedZeroOperands(ImplicitLocOpBuilder &b, Value zeros,
                                      Value st, Value slot, Value column,
                                      Value lane) const {
  Value c = bColumn(b, column, lane);
  SmallVector<Value> result;
  for (int64_t ni = 0; ni < kNTiles; ++ni) {
    Value z = memref::LoadOp::create(
        b, zeros,
        ValueRange{st, slot,
                   arith::AddIOp::create(b, c, indexConst(b, ni * kMmaN))});
    result.push_back(zeroOperand(b, *this, arith::ExtUIOp::create(b, i32, z)));
  }
  return result;
}

SmallVector<Value>
PrefillMmaEmitter::globalZeroOperands(ImplicitLocOpBuilder &b, ValueRange args,
                                      Value nWarp, Value lane,
                                      Value group) const {
  Value c = bColumn(b, nWarp, lane);
  SmallVector<Value> result;
  for (int64_t ni = 0; ni < kNTiles; ++ni) {
    Value n = minIndex(
        b, arith::AddIOp::create(b, c, indexConst(b, ni * kMmaN)), spec.n - 1);
    Value z = memref::LoadOp::create(b, argZ(args), ValueRange{n, group});
    result.push_back(zeroOperand(b, *this, arith::ExtUIOp::create(b, i32, z)));
  }
  return result;
}

SmallVector<Value> PrefillMmaEmitter::bFragments(ImplicitLocOpBuilder &b,
                                                 ValueRange args,
                                                 ArrayRef<Value> slabsOfWarp,
                                                 Value lane, Value step,
                                                 ArrayRef<Value> zeros) const {
  Value col = arith::AddIOp::create(
      b, arith::MulIOp::create(b, step, indexConst(b, kPanelWords)),
      arith::MulIOp::create(b, lane, indexConst(b, 4)));
  auto wordsTy = VectorType::get({4}, i32);
  SmallVector<Value> words; // 4 per panel
  for (Value slab : slabsOfWarp) {
    Value v =
        vector::LoadOp::create(b, wordsTy, argW(args), ValueRange{slab, col},
                               /*nontemporal=*/false, llvm::MaybeAlign(16));
    for (int64_t i = 0; i < 4; ++i)
      words.push_back(vector::ExtractOp::create(b, v, i));
  }
  SmallVector<Value> regs;
  for (int64_t ni = 0; ni < kNTiles; ++ni) {
    // W4: word ni / 2 holds tile ni at nibble pairs (8 (ni % 2), +4);
    // byte fields: word ni holds it at byte pairs (0, 8). Pairs are (k0,
    // k0+1) in bits [s, s+f) and [s+16, s+16+f).
    const bool w4 = spec.fieldBits() == 4;
    Value word = w4 ? words[ni / 2] : words[ni];
    const uint32_t base = w4 ? 8 * (ni % 2) : 0;
    const uint32_t hiShift = w4 ? 4 : 8;
    const uint32_t mask = w4 ? 0x000F000F : 0x00FF00FF;
    for (uint32_t r = 0; r < 2; ++r) {
      const uint32_t shift = base + r * hiShift;
      Value field =
          shift == 0
              ? word
              : Value(arith::ShRUIOp::create(b, word, i32Const(b, shift)));
      field = arith::AndIOp::create(b, field, i32Const(b, mask));
      Value pair;
      if (spec.codebook != Codebook::None) {
        auto pairI32 = VectorType::get({2}, i32);
        Value lo = arith::AndIOp::create(b, field, i32Const(b, 0xFF));
        Value hi = arith::ShRUIOp::create(b, field, i32Const(b, 16));
        Value values = conversion::emitCodebookLookup(
            b, vector::FromElementsOp::create(b, pairI32, ValueRange{lo, hi}),
            spec.codebook);
        pair = arith::TruncFOp::create(b, VectorType::get({2}, act), values);
      } else if (halfMagic) {
        Value magic = i32Const(b, act.isF16() ? 0x64006400 : 0x43004300);
        pair = asPair(b, arith::OrIOp::create(b, field, magic), act);
        pair = arith::SubFOp::create(b, pair, zeros[ni]);
      } else {
        auto pairI32 = VectorType::get({2}, i32);
        Value lo = arith::AndIOp::create(b, field, i32Const(b, 0xFF));
        Value hi = arith::ShRUIOp::create(b, field, i32Const(b, 16));
        Value v =
            vector::FromElementsOp::create(b, pairI32, ValueRange{lo, hi});
        v = arith::OrIOp::create(
            b, v,
            arith::ConstantOp::create(
                b, SplatElementsAttr::get(pairI32,
                                          b.getI32IntegerAttr(0x4B000000))));
        v = vector::BitCastOp::create(b, VectorType::get({2}, f32), v);
        v = arith::SubFOp::create(b, v, zeros[ni]);
        pair = arith::TruncFOp::create(b, VectorType::get({2}, act), v);
      }
      regs.push_back(pair);
    }
  }
  return regs;
}

SmallVector<Value> PrefillMmaEmitter::applyScales(
    ImplicitLocOpBuilder &b, ArrayRef<Value> scales, ArrayRef<Value> partial,
    ArrayRef<Value> acc, ArrayRef<Value> mins, ArrayRef<Value> xSums) const {
  auto contract = arith::FastMathFlags::contract;
  SmallVector<Value> result(partial.begin(), partial.end());
  for (int64_t ni = 0; ni < kNTiles; ++ni)
    for (int64_t mi = 0; mi < kMTiles; ++mi)
      for (int64_t e = 0; e < 4; ++e) {
        const int64_t i = accIndex(mi, ni, e);
        Value s = scales[2 * ni + e % 2];
        // mul + add marked contract: one fma.rn.f32 on NVPTX.
        Value base = acc.empty() ? Value() : acc[i];
        if (!mins.empty()) {
          // Every column of the ones-mma holds the row's sum: c0 for the
          // lane's first row, c2 for its row + 8.
          Value m = arith::MulFOp::create(
              b, mins[2 * ni + e % 2], xSums[mi * 4 + 2 * (e / 2)], contract);
          base = base ? Value(arith::AddFOp::create(b, m, base, contract)) : m;
        }
        Value scaled = arith::MulFOp::create(b, s, partial[i], contract);
        result[i] =
            base ? Value(arith::AddFOp::create(b, scaled, base, contract))
                 : scaled;
      }
  return result;
}

void PrefillMmaEmitter::storeOutputs(ImplicitLocOpBuilder &b, ValueRange args,
                                     Value mWarp, Value nWarp, Value lane,
                                     Value rows, ArrayRef<Value> acc) const {
  Value y = argY(args);
  Value nBound = indexConst(b, spec.n);
  Value column = arith::AddIOp::create(
      b, nWarp,
      arith::MulIOp::create(b,
                            arith::RemUIOp::create(b, lane, indexConst(b, 4)),
                            indexConst(b, 2)));
  Value rowInTile = arith::DivUIOp::create(b, lane, indexConst(b, 4));
  auto storeIf = [&](Value cond,
                     function_ref<void(ImplicitLocOpBuilder &)> fn) {
    scf::IfOp::create(b, cond, [&](OpBuilder &nested, Location loc) {
      ImplicitLocOpBuilder ib(loc, nested);
      fn(ib);
      scf::YieldOp::create(ib);
    });
  };
  for (int64_t ni = 0; ni < kNTiles; ++ni) {
    Value col[2];
    col[0] = arith::AddIOp::create(b, column, indexConst(b, ni * kMmaN));
    col[1] = arith::AddIOp::create(b, col[0], indexConst(b, 1));
    Value bias[2];
    if (hasBias)
      for (int64_t e = 0; e < 2; ++e)
        bias[e] =
            extendToF32(b, memref::LoadOp::create(
                               b, argBias(args),
                               ValueRange{minIndex(b, col[e], spec.n - 1)}));
    for (int64_t mi = 0; mi < kMTiles; ++mi)
      for (int64_t h = 0; h < 2; ++h) {
        Value row =
            arith::AddIOp::create(b, arith::AddIOp::create(b, mWarp, rowInTile),
                                  indexConst(b, mi * kMmaM + 8 * h));
        Value v[2];
        for (int64_t e = 0; e < 2; ++e) {
          v[e] = acc[accIndex(mi, ni, 2 * h + e)];
          if (hasBias)
            v[e] = arith::AddFOp::create(b, v[e], bias[e]);
        }
        // Rounded to the output type where it is stored: a 16-bit float
        // live across blocks is promoted, and rounded again by a libcall, on
        // hosts without 16-bit float registers.
        auto rounded = [&](ImplicitLocOpBuilder &ib, Value value) -> Value {
          return out == f32 ? value
                            : Value(arith::TruncFOp::create(ib, out, value));
        };
        Value inRow = ult(b, row, rows);
        if (spec.n % 2 == 0) {
          // Even N: col is even, so col < N covers col + 1 and the pair is
          // one aligned store.
          storeIf(arith::AndIOp::create(b, inRow, ult(b, col[0], nBound)),
                  [&](ImplicitLocOpBuilder &ib) {
                    Value pair = vector::FromElementsOp::create(
                        ib, VectorType::get({2}, out),
                        ValueRange{rounded(ib, v[0]), rounded(ib, v[1])});
                    vector::StoreOp::create(
                        ib, pair, y, ValueRange{row, col[0]},
                        /*nontemporal=*/false,
                        llvm::MaybeAlign(2 * out.getIntOrFloatBitWidth() / 8));
                  });
        } else {
          for (int64_t e = 0; e < 2; ++e)
            storeIf(arith::AndIOp::create(b, inRow, ult(b, col[e], nBound)),
                    [&](ImplicitLocOpBuilder &ib) {
                      memref::StoreOp::create(ib, rounded(ib, v[e]), y,
                                              ValueRange{row, col[e]});
                    });
        }
      }
  }
}

} // namespace qtensor::prefill
