//===- Mixed2416Gemv.cpp - Decode GEMV over mixed 2/4/16 streams ----------===//
//
// The kernel of include/qtensor/Conversion/Mixed2416Kernel.h. Its per-lane
// schedule (seed M8.9 0x07D, Figure 8) for one first-level group:
//
//   1. the group's map bit and its stream offset (popcounts carried from
//      the lane's previous group);
//   2. the loads of z1 and of the group's code words (one scf.if picks the
//      W2 or the W4 stream; W2 words are spread to one code per nibble in
//      registers, so both widths leave the branch as the same W4 words);
//   3. qs, s2, z2 and s1 = s2 * (qs - z2) in f32, the second level first
//      (ptxas schedules these loads with the code loads: nothing between
//      them depends on the codes);
//   4. per 32-code step: the activations, the codes' fields (constant
//      shifts and mask, as the affine W4 GEMV), q - z1 by the magic-number
//      conversion, and acc += s1 * dot (one fma).
//
//===----------------------------------------------------------------------===//

#include "qtensor/Conversion/Mixed2416Kernel.h"

#include "KernelTypes.h"
#include "SpecText.h"
#include "WarpRowKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>
#include <utility>
#include <vector>

using namespace mlir;

namespace qtensor {

namespace {

using conversion::elementType;
using conversion::indexConst;
using conversion::parsePrefixed;

/// Codes per step: four of the group's W4 words (W2 words spread to W4).
constexpr int64_t kStepCodes = 32;
/// The largest G1 a kernel takes: a W4 group's words stay in registers.
constexpr int64_t kMaxFirstGroup = 256;
constexpr int64_t kMaxExtent = int64_t(1) << 20;

/// f16 or bf16, the 16-bit dtypes the kernel reads.
std::optional<FloatType> halfType(std::string_view s) {
  std::optional<FloatType> t = conversion::parseSpecFloat(s);
  return t == FloatType::F32 ? std::nullopt : t;
}

Value i32Const(ImplicitLocOpBuilder &b, int32_t v) {
  return arith::ConstantOp::create(b, b.getI32IntegerAttr(v));
}

Value toIndex(ImplicitLocOpBuilder &b, Value i32) {
  return arith::IndexCastOp::create(b, b.getIndexType(), i32);
}

/// A u8 stored as i8, as an exact f32.
Value byteToF32(ImplicitLocOpBuilder &b, Value byte) {
  Value wide = arith::ExtUIOp::create(b, b.getI32Type(), byte);
  return arith::UIToFPOp::create(b, b.getF32Type(), wide);
}

Value toF32(ImplicitLocOpBuilder &b, Value v) {
  return v.getType().isF32() ? v : arith::ExtFOp::create(b, b.getF32Type(), v);
}

class Mixed2416Emitter {
public:
  Mixed2416Emitter(const Mixed2416GemvSpec &spec, MLIRContext *ctx)
      : spec(spec), groups(spec.groupsPerRow()),
        w4Words(spec.firstGroupSize / 8), w2Words(spec.firstGroupSize / 16),
        f32(Float32Type::get(ctx)), act(elementType(ctx, spec.activation)),
        second(elementType(ctx, spec.secondType)),
        sparse(elementType(ctx, spec.sparseType)),
        out(elementType(ctx, spec.output)) {}

  SmallVector<Type> argumentTypes(MLIRContext *ctx) const {
    const int64_t n = spec.n, k = spec.k, t = spec.rows;
    const int64_t dyn = ShapedType::kDynamic;
    Type i8 = IntegerType::get(ctx, 8), i32 = IntegerType::get(ctx, 32);
    SmallVector<Type> types = {
        MemRefType::get({t, k}, act),
        MemRefType::get({(n * groups + 7) / 8}, i8),
        MemRefType::get({dyn}, i32),
        MemRefType::get({dyn}, i32),
        MemRefType::get({n + 1}, i32),
        MemRefType::get({n, groups}, i8),
        MemRefType::get({n, groups}, i8),
        MemRefType::get({n / spec.secondGroupSize, groups}, second),
        MemRefType::get({n / spec.secondGroupSize, groups}, second),
        MemRefType::get({dyn}, sparse),
        MemRefType::get({dyn}, i32),
        MemRefType::get({n + 1}, i32)};
    if (spec.bias)
      types.push_back(MemRefType::get({n}, out));
    types.push_back(MemRefType::get({t, n}, out));
    return types;
  }

  SmallVector<Value> emitLanePartials(ImplicitLocOpBuilder &b, ValueRange args,
                                      Value n, Value lane) const;
  void emitStore(ImplicitLocOpBuilder &b, ValueRange args, Value n,
                 ArrayRef<Value> values) const;

  const Mixed2416GemvSpec &spec;
  const int64_t groups, w4Words, w2Words;
  Type f32, act, second, sparse, out;

private:
  enum Arg { X, Map, W2, W4, RowW4, QS, Z1, S2, Z2, SV, SC, SR, Rest };

  /// Set bits of the map in bit positions [from, to), from <= to.
  Value emitCountBits(ImplicitLocOpBuilder &b, ValueRange args, Value from,
                      Value to) const;
  /// Whether map bit `bit` is set (the group holds W4 codes).
  Value emitIsW4(ImplicitLocOpBuilder &b, ValueRange args, Value bit) const;
  /// A W2 group's words (16 codes each) rewritten as W4 words (8 codes
  /// each, one per nibble), so every group is unpacked the same way.
  Value emitW2AsNibbles(ImplicitLocOpBuilder &b, Value words) const;
  /// s1 = s2 * (qs - z2) of group g of row n, in f32.
  Value emitFirstScale(ImplicitLocOpBuilder &b, ValueRange args, Value n,
                       Value g) const;
  /// acc[t] += s1 * dot(x[t, group], q - z1) over group g of row n, whose
  /// W4 groups before it in the row number `w4InRow`.
  SmallVector<Value> emitGroup(ImplicitLocOpBuilder &b, ValueRange args,
                               Value n, Value g, Value w4InRow,
                               ValueRange acc) const;
  /// acc[t] += x[t, c] * v, or x[t, c] * (v - dense) under replacement,
  /// for outlier `e` of row n.
  SmallVector<Value> emitOutlier(ImplicitLocOpBuilder &b, ValueRange args,
                                 Value n, Value e, ValueRange acc) const;
};

Value Mixed2416Emitter::emitCountBits(ImplicitLocOpBuilder &b, ValueRange args,
                                      Value from, Value to) const {
  Value eight = indexConst(b, 8);
  Value first = arith::DivUIOp::create(b, from, eight);
  Value end = arith::DivUIOp::create(
      b, arith::AddIOp::create(b, to, indexConst(b, 7)), eight);
  auto loop = scf::ForOp::create(
      b, first, end, indexConst(b, 1), ValueRange{i32Const(b, 0)},
      [&](OpBuilder &nested, Location loc, Value i, ValueRange count) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value byte = memref::LoadOp::create(ib, args[Map], ValueRange{i});
        Value bits = arith::ExtUIOp::create(ib, ib.getI32Type(), byte);
        // The byte's bits [lo, hi) lie inside [from, to).
        Value base = arith::MulIOp::create(ib, i, eight);
        Value lo = arith::MaxSIOp::create(
            ib, arith::SubIOp::create(ib, from, base), indexConst(ib, 0));
        Value hi = arith::MinSIOp::create(
            ib, arith::SubIOp::create(ib, to, base), eight);
        auto lowMask = [&](Value width) {
          Value w = arith::IndexCastOp::create(ib, ib.getI32Type(), width);
          return arith::SubIOp::create(
              ib, arith::ShLIOp::create(ib, i32Const(ib, 1), w),
              i32Const(ib, 1));
        };
        Value mask = arith::XOrIOp::create(ib, lowMask(hi), lowMask(lo));
        Value v = arith::AndIOp::create(ib, bits, mask);
        // An 8-bit popcount in three steps (no intrinsic needed on either
        // target).
        v = arith::SubIOp::create(
            ib, v,
            arith::AndIOp::create(
                ib, arith::ShRUIOp::create(ib, v, i32Const(ib, 1)),
                i32Const(ib, 0x55)));
        v = arith::AddIOp::create(
            ib, arith::AndIOp::create(ib, v, i32Const(ib, 0x33)),
            arith::AndIOp::create(
                ib, arith::ShRUIOp::create(ib, v, i32Const(ib, 2)),
                i32Const(ib, 0x33)));
        v = arith::AndIOp::create(
            ib,
            arith::AddIOp::create(
                ib, v, arith::ShRUIOp::create(ib, v, i32Const(ib, 4))),
            i32Const(ib, 0x0F));
        scf::YieldOp::create(
            ib, ValueRange{arith::AddIOp::create(ib, count[0], v)});
      });
  return toIndex(b, loop.getResult(0));
}

Value Mixed2416Emitter::emitIsW4(ImplicitLocOpBuilder &b, ValueRange args,
                                 Value bit) const {
  Value byte = memref::LoadOp::create(
      b, args[Map],
      ValueRange{arith::DivUIOp::create(b, bit, indexConst(b, 8))});
  Value shift = arith::IndexCastOp::create(
      b, b.getI32Type(), arith::RemUIOp::create(b, bit, indexConst(b, 8)));
  Value v = arith::ShRUIOp::create(
      b, arith::ExtUIOp::create(b, b.getI32Type(), byte), shift);
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ne,
                               arith::AndIOp::create(b, v, i32Const(b, 1)),
                               i32Const(b, 0));
}

Value Mixed2416Emitter::emitW2AsNibbles(ImplicitLocOpBuilder &b,
                                        Value words) const {
  auto halfTy = cast<VectorType>(words.getType());
  auto splat = [&](int32_t v) -> Value {
    return arith::ConstantOp::create(
        b, SplatElementsAttr::get(halfTy, b.getI32IntegerAttr(v)));
  };
  // Eight 2-bit codes in the low 16 bits -> one per nibble: the standard
  // spread, 4 codes per 16-bit slot, 2 per byte, 1 per nibble.
  auto spread = [&](Value x) -> Value {
    for (auto [shift, mask] : {std::pair<int32_t, int32_t>{8, 0x00FF00FF},
                               {4, 0x0F0F0F0F},
                               {2, 0x33333333}})
      x = arith::AndIOp::create(
          b,
          arith::OrIOp::create(b, x, arith::ShLIOp::create(b, x, splat(shift))),
          splat(mask));
    return x;
  };
  Value low = spread(arith::AndIOp::create(b, words, splat(0xFFFF)));
  Value high = spread(arith::ShRUIOp::create(b, words, splat(16)));
  // W2 word i holds codes 16 i .. 16 i + 15: W4 words 2 i and 2 i + 1.
  SmallVector<int64_t> interleave;
  for (int64_t i = 0; i < w2Words; ++i) {
    interleave.push_back(i);
    interleave.push_back(w2Words + i);
  }
  return vector::ShuffleOp::create(b, low, high, interleave);
}

Value Mixed2416Emitter::emitFirstScale(ImplicitLocOpBuilder &b, ValueRange args,
                                       Value n, Value g) const {
  Value n2 = arith::DivUIOp::create(b, n, indexConst(b, spec.secondGroupSize));
  Value qs =
      byteToF32(b, memref::LoadOp::create(b, args[QS], ValueRange{n, g}));
  Value s2 = toF32(b, memref::LoadOp::create(b, args[S2], ValueRange{n2, g}));
  Value z2 = toF32(b, memref::LoadOp::create(b, args[Z2], ValueRange{n2, g}));
  return arith::MulFOp::create(b, s2, arith::SubFOp::create(b, qs, z2));
}

SmallVector<Value> Mixed2416Emitter::emitGroup(ImplicitLocOpBuilder &b,
                                               ValueRange args, Value n,
                                               Value g, Value w4InRow,
                                               ValueRange acc) const {
  Type i32 = b.getI32Type();
  auto wordsTy = VectorType::get({w4Words}, i32);
  auto fieldsTy = VectorType::get({kStepCodes}, i32);
  auto valuesTy = VectorType::get({kStepCodes}, f32);
  auto xTy = VectorType::get({kStepCodes}, act);

  // 1. Where the group's codes are: W4 groups before it in stream order,
  // and the W2 groups are the rest.
  Value bit = arith::AddIOp::create(
      b, arith::MulIOp::create(b, n, indexConst(b, groups)), g);
  Value isW4 = emitIsW4(b, args, bit);
  Value w4Before = arith::AddIOp::create(
      b, toIndex(b, memref::LoadOp::create(b, args[RowW4], ValueRange{n})),
      w4InRow);
  Value w2Before = arith::SubIOp::create(b, bit, w4Before);

  // 2. The group's z1 and code words.
  Value z1 =
      byteToF32(b, memref::LoadOp::create(b, args[Z1], ValueRange{n, g}));
  auto codes = scf::IfOp::create(
      b, isW4,
      [&](OpBuilder &nested, Location loc) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value base =
            arith::MulIOp::create(ib, w4Before, indexConst(ib, w4Words));
        Value words =
            vector::LoadOp::create(ib, wordsTy, args[W4], ValueRange{base},
                                   /*nontemporal=*/false, llvm::MaybeAlign(16));
        scf::YieldOp::create(ib, words);
      },
      [&](OpBuilder &nested, Location loc) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value base =
            arith::MulIOp::create(ib, w2Before, indexConst(ib, w2Words));
        Value half = vector::LoadOp::create(
            ib, VectorType::get({w2Words}, i32), args[W2], ValueRange{base},
            /*nontemporal=*/false, llvm::MaybeAlign(16));
        scf::YieldOp::create(ib, ValueRange{emitW2AsNibbles(ib, half)});
      });
  Value words = codes.getResult(0);
  // 3. The second level first: s1 = s2 * (qs - z2).
  Value s1 = emitFirstScale(b, args, n, g);
  const double twoTo23 = 8388608.0;
  Value offset = vector::BroadcastOp::create(
      b, valuesTy,
      arith::AddFOp::create(
          b, z1, arith::ConstantOp::create(b, b.getF32FloatAttr(twoTo23))));

  // 4. Step s holds codes [32 s, 32 s + 32) of the group. The steps
  // are a loop (not unrolled, so T rows of one step's activations are the
  // most that is live); the group's words (W2 ones already spread to
  // nibbles) ride along, shifted down by a step's four words each time, so
  // every step unpacks the low words with the same constant shifts.
  SmallVector<int64_t> spread, rest;
  SmallVector<int32_t> shifts;
  for (int64_t j = 0; j < kStepCodes; ++j) {
    spread.push_back(j / 8);
    shifts.push_back(int32_t(4 * (j % 8)));
  }
  for (int64_t i = 0; i < w4Words; ++i)
    rest.push_back(std::min(i + 4, w4Words - 1));
  Value k0Group =
      arith::MulIOp::create(b, g, indexConst(b, spec.firstGroupSize));
  SmallVector<Value> init(acc.begin(), acc.end());
  init.push_back(words);
  auto steps = scf::ForOp::create(
      b, indexConst(b, 0), indexConst(b, spec.firstGroupSize / kStepCodes),
      indexConst(b, 1), init,
      [&](OpBuilder &nested, Location loc, Value step, ValueRange iter) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value stepWords = iter.back();
        auto constI32 = [&](ArrayRef<int32_t> v) -> Value {
          return arith::ConstantOp::create(
              ib, DenseIntElementsAttr::get(fieldsTy, v));
        };
        Value fields = arith::AndIOp::create(
            ib,
            arith::ShRUIOp::create(
                ib, vector::ShuffleOp::create(ib, stepWords, stepWords, spread),
                constI32(shifts)),
            constI32(SmallVector<int32_t>(kStepCodes, 0xF)));
        // 2^23 + q minus 2^23 + z1: exact.
        Value dequant = arith::SubFOp::create(
            ib,
            vector::BitCastOp::create(
                ib, valuesTy,
                arith::OrIOp::create(
                    ib, fields,
                    constI32(SmallVector<int32_t>(kStepCodes, 0x4B000000)))),
            offset);
        Value k0 = arith::AddIOp::create(
            ib, k0Group,
            arith::MulIOp::create(ib, step, indexConst(ib, kStepCodes)));
        SmallVector<Value> next;
        for (int64_t t = 0; t < spec.rows; ++t) {
          Value xs = vector::LoadOp::create(
              ib, xTy, args[X], ValueRange{indexConst(ib, t), k0},
              /*nontemporal=*/false, llvm::MaybeAlign(16));
          Value products = arith::MulFOp::create(
              ib, arith::ExtFOp::create(ib, valuesTy, xs), dequant);
          // Ordered sum: the host and the GPU add in the same order.
          Value dot = vector::ReductionOp::create(
              ib, vector::CombiningKind::ADD, products);
          // mul + add marked `contract`: NVPTX emits one fma.rn.f32.
          auto contract = arith::FastMathFlags::contract;
          next.push_back(arith::AddFOp::create(
              ib, arith::MulFOp::create(ib, s1, dot, contract), iter[t],
              contract));
        }
        next.push_back(
            vector::ShuffleOp::create(ib, stepWords, stepWords, rest));
        scf::YieldOp::create(ib, next);
      });
  SmallVector<Value> result(steps.getResults().drop_back());
  return result;
}

SmallVector<Value> Mixed2416Emitter::emitOutlier(ImplicitLocOpBuilder &b,
                                                 ValueRange args, Value n,
                                                 Value e,
                                                 ValueRange acc) const {
  Value c = toIndex(b, memref::LoadOp::create(b, args[SC], ValueRange{e}));
  Value v = toF32(b, memref::LoadOp::create(b, args[SV], ValueRange{e}));
  Value delta = v;
  if (spec.sparse == SparseSemantics::Replacement) {
    // The dense value the group loop summed at (n, c), taken back out.
    Value g = arith::DivUIOp::create(b, c, indexConst(b, spec.firstGroupSize));
    Value j = arith::RemUIOp::create(b, c, indexConst(b, spec.firstGroupSize));
    Value rowBit = arith::MulIOp::create(b, n, indexConst(b, groups));
    Value bit = arith::AddIOp::create(b, rowBit, g);
    Value isW4 = emitIsW4(b, args, bit);
    Value w4Before = arith::AddIOp::create(
        b, toIndex(b, memref::LoadOp::create(b, args[RowW4], ValueRange{n})),
        emitCountBits(b, args, rowBit, bit));
    Value w2Before = arith::SubIOp::create(b, bit, w4Before);
    auto code = [&](ImplicitLocOpBuilder &ib, Value stream, Value before,
                    int64_t wordsPerGroup, int64_t bits) {
      const int64_t perWord = 32 / bits;
      Value word = memref::LoadOp::create(
          ib, stream,
          ValueRange{arith::AddIOp::create(
              ib,
              arith::MulIOp::create(ib, before, indexConst(ib, wordsPerGroup)),
              arith::DivUIOp::create(ib, j, indexConst(ib, perWord)))});
      Value shift = arith::IndexCastOp::create(
          ib, ib.getI32Type(),
          arith::MulIOp::create(
              ib, arith::RemUIOp::create(ib, j, indexConst(ib, perWord)),
              indexConst(ib, bits)));
      return arith::AndIOp::create(ib, arith::ShRUIOp::create(ib, word, shift),
                                   i32Const(ib, (1 << bits) - 1));
    };
    auto q = scf::IfOp::create(
        b, isW4,
        [&](OpBuilder &nested, Location loc) {
          ImplicitLocOpBuilder ib(loc, nested);
          scf::YieldOp::create(
              ib, ValueRange{code(ib, args[W4], w4Before, w4Words, 4)});
        },
        [&](OpBuilder &nested, Location loc) {
          ImplicitLocOpBuilder ib(loc, nested);
          scf::YieldOp::create(
              ib, ValueRange{code(ib, args[W2], w2Before, w2Words, 2)});
        });
    Value z1 =
        byteToF32(b, memref::LoadOp::create(b, args[Z1], ValueRange{n, g}));
    Value qf = arith::UIToFPOp::create(b, f32, q.getResult(0));
    Value dense = arith::MulFOp::create(b, emitFirstScale(b, args, n, g),
                                        arith::SubFOp::create(b, qf, z1));
    delta = arith::SubFOp::create(b, v, dense);
  }
  SmallVector<Value> result;
  for (int64_t t = 0; t < spec.rows; ++t) {
    Value x = toF32(
        b, memref::LoadOp::create(b, args[X], ValueRange{indexConst(b, t), c}));
    auto contract = arith::FastMathFlags::contract;
    result.push_back(arith::AddFOp::create(
        b, arith::MulFOp::create(b, x, delta, contract), acc[t], contract));
  }
  return result;
}

SmallVector<Value> Mixed2416Emitter::emitLanePartials(ImplicitLocOpBuilder &b,
                                                      ValueRange args, Value n,
                                                      Value lane) const {
  Value zero = arith::ConstantOp::create(b, b.getF32FloatAttr(0.0));
  SmallVector<Value> init(spec.rows, zero);
  Value rowBit = arith::MulIOp::create(b, n, indexConst(b, groups));
  Value rowEnd = arith::AddIOp::create(b, rowBit, indexConst(b, groups));
  Value stride = indexConst(b, kWarpSize);
  auto bitAt = [&](ImplicitLocOpBuilder &ib, Value g) {
    return arith::MinUIOp::create(ib, arith::AddIOp::create(ib, rowBit, g),
                                  rowEnd);
  };
  // W4 groups of the row before the lane's first group.
  init.push_back(emitCountBits(b, args, rowBit, bitAt(b, lane)));
  auto dense = scf::ForOp::create(
      b, lane, indexConst(b, groups), stride, init,
      [&](OpBuilder &nested, Location loc, Value g, ValueRange iter) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value w4InRow = iter.back();
        SmallVector<Value> next =
            emitGroup(ib, args, n, g, w4InRow, iter.drop_back());
        // Carried to the lane's next group, 32 groups on.
        Value from = arith::AddIOp::create(ib, rowBit, g);
        Value to = bitAt(ib, arith::AddIOp::create(ib, g, stride));
        next.push_back(arith::AddIOp::create(
            ib, w4InRow, emitCountBits(ib, args, from, to)));
        scf::YieldOp::create(ib, next);
      });
  SmallVector<Value> acc(dense.getResults().drop_back());

  Value first = toIndex(b, memref::LoadOp::create(b, args[SR], ValueRange{n}));
  Value end = toIndex(
      b, memref::LoadOp::create(
             b, args[SR],
             ValueRange{arith::AddIOp::create(b, n, indexConst(b, 1))}));
  auto outliers = scf::ForOp::create(
      b, arith::AddIOp::create(b, first, lane), end, stride, acc,
      [&](OpBuilder &nested, Location loc, Value e, ValueRange iter) {
        ImplicitLocOpBuilder ib(loc, nested);
        scf::YieldOp::create(ib, emitOutlier(ib, args, n, e, iter));
      });
  return SmallVector<Value>(outliers.getResults());
}

void Mixed2416Emitter::emitStore(ImplicitLocOpBuilder &b, ValueRange args,
                                 Value n, ArrayRef<Value> values) const {
  Value y = args.back();
  Value biasValue;
  if (spec.bias)
    biasValue = toF32(b, memref::LoadOp::create(b, args[Rest], ValueRange{n}));
  for (int64_t t = 0; t < spec.rows; ++t) {
    Value v = values[t];
    if (biasValue)
      v = arith::AddFOp::create(b, v, biasValue);
    if (out != f32)
      v = arith::TruncFOp::create(b, out, v);
    memref::StoreOp::create(b, v, y, ValueRange{indexConst(b, t), n});
  }
}

conversion::WarpRowEntry warpRowEntry(MLIRContext *ctx,
                                      const Mixed2416Emitter &e) {
  conversion::WarpRowEntry w;
  w.symbol = e.spec.name();
  w.argumentTypes = e.argumentTypes(ctx);
  w.outputRows = e.spec.n;
  w.accumulators = e.spec.rows;
  w.body = conversion::argumentsOnlyBody(
      [&e](ImplicitLocOpBuilder &b, ValueRange args, Value n, Value lane) {
        return e.emitLanePartials(b, args, n, lane);
      },
      [&e](ImplicitLocOpBuilder &b, ValueRange args, Value n,
           ArrayRef<Value> values) { e.emitStore(b, args, n, values); });
  return w;
}

} // namespace

std::string Mixed2416GemvSpec::name() const {
  std::string out = "qt_mixed2416_gemv_g" + std::to_string(firstGroupSize) +
                    "_z" + std::to_string(secondGroupSize) + "_" +
                    toString(activation) + "_t" + std::to_string(rows) + "_n" +
                    std::to_string(n) + "_k" + std::to_string(k);
  if (secondType != FloatType::F16)
    out += std::string("_s2") + toString(secondType);
  if (sparseType != FloatType::F16)
    out += std::string("_sp") + toString(sparseType);
  if (sparse == SparseSemantics::Correction)
    out += "_corr";
  return out + conversion::outputNameSuffix(output, bias);
}

Status validateMixed2416GemvSpec(const Mixed2416GemvSpec &spec) {
  auto half = [](FloatType t) {
    return t == FloatType::F16 || t == FloatType::BF16;
  };
  if (!half(spec.activation))
    return makeError("activations must be f16 or bf16, got ",
                     toString(spec.activation));
  if (!half(spec.secondType))
    return makeError("second-level qparams must be f16 or bf16, got ",
                     toString(spec.secondType));
  if (!half(spec.sparseType))
    return makeError("outlier values must be f16 or bf16, got ",
                     toString(spec.sparseType));
  if (spec.firstGroupSize < 64 || spec.firstGroupSize % 64 != 0 ||
      spec.firstGroupSize > kMaxFirstGroup)
    return makeError("first-level group size must be a multiple of 64 up to ",
                     kMaxFirstGroup, ", got ", spec.firstGroupSize);
  if (spec.secondGroupSize < 1)
    return makeError("second-level group size must be positive, got ",
                     spec.secondGroupSize);
  if (spec.rows < 1 || spec.rows > 16)
    return makeError("decode kernels take T in [1, 16] rows, got ", spec.rows);
  if (spec.n < 1 || spec.n > kMaxExtent || spec.k < 1 || spec.k > kMaxExtent)
    return makeError("weight shape [", spec.n, ", ", spec.k,
                     "] must have extents in [1, ", kMaxExtent, "]");
  if (spec.k % spec.firstGroupSize != 0)
    return makeError("first-level group size ", spec.firstGroupSize,
                     " must divide K = ", spec.k);
  if (spec.n % spec.secondGroupSize != 0)
    return makeError("second-level group size ", spec.secondGroupSize,
                     " must divide N = ", spec.n);
  // The row table and the outlier pointers are i32.
  if (spec.n * spec.groupsPerRow() > INT32_MAX)
    return makeError("[", spec.n, ", ", spec.k, "] has more than 2^31 - 1 ",
                     "first-level groups");
  return Status::ok();
}

Expected<Mixed2416GemvSpec> parseMixed2416GemvSpec(std::string_view text) {
  text = conversion::trimSpecText(text);
  auto fail = [&](std::string_view what) -> Error {
    return makeError("kernel spec '", text, "': ", what,
                     " (expected mixed2416_gemv:gG1:zG2:f16|bf16:tT:nN:kK"
                     "[:s2f16|s2bf16][:spf16|spbf16][:replace|correct]"
                     "[:of16|obf16|of32][:bias])");
  };
  std::vector<std::string_view> f = conversion::specFields(text);
  if (f.size() < 7)
    return fail("wrong number of fields");
  if (f[0] != "mixed2416_gemv")
    return fail("unknown family '" + std::string(f[0]) +
                "', expected mixed2416_gemv");
  Mixed2416GemvSpec spec;
  if (!parsePrefixed(f[1], "g", spec.firstGroupSize))
    return fail("bad first-level group '" + std::string(f[1]) + "'");
  if (!parsePrefixed(f[2], "z", spec.secondGroupSize))
    return fail("bad second-level group '" + std::string(f[2]) + "'");
  std::optional<FloatType> activation = halfType(f[3]);
  if (!activation)
    return fail("bad activation type '" + std::string(f[3]) + "'");
  spec.activation = *activation;
  if (!parsePrefixed(f[4], "t", spec.rows))
    return fail("bad rows '" + std::string(f[4]) + "'");
  if (!parsePrefixed(f[5], "n", spec.n) || !parsePrefixed(f[6], "k", spec.k))
    return fail("bad extent");
  bool seenSecond = false, seenSparse = false, seenSemantics = false,
       seenOutput = false;
  for (size_t i = 7; i < f.size(); ++i) {
    std::string_view o = f[i];
    bool repeated = false;
    if (o == "bias") {
      repeated = spec.bias;
      spec.bias = true;
    } else if (o.substr(0, 2) == "s2" && halfType(o.substr(2))) {
      repeated = std::exchange(seenSecond, true);
      spec.secondType = *halfType(o.substr(2));
    } else if (o.substr(0, 2) == "sp" && halfType(o.substr(2))) {
      repeated = std::exchange(seenSparse, true);
      spec.sparseType = *halfType(o.substr(2));
    } else if (o == "replace" || o == "correct") {
      repeated = std::exchange(seenSemantics, true);
      spec.sparse = o == "replace" ? SparseSemantics::Replacement
                                   : SparseSemantics::Correction;
    } else if (auto output = conversion::parseFloatOption(o, "o")) {
      repeated = std::exchange(seenOutput, true);
      spec.output = *output;
    } else {
      return fail("unknown option '" + std::string(o) + "'");
    }
    if (repeated)
      return fail("option '" + std::string(o) + "' given twice");
  }
  if (Status status = validateMixed2416GemvSpec(spec); !status)
    return fail(status.message());
  return spec;
}

Mixed2416GemvSpec mixed2416GemvSpecFor(const Mixed2416Descriptor &d,
                                       FloatType activation, FloatType output,
                                       bool bias, int64_t rows) {
  Mixed2416GemvSpec spec;
  spec.activation = activation;
  spec.secondType = d.secondType;
  spec.sparseType = d.sparseType;
  spec.sparse = d.sparse;
  spec.firstGroupSize = d.firstGroupSize;
  spec.secondGroupSize = d.secondGroupSize;
  spec.output = output;
  spec.bias = bias;
  spec.rows = rows;
  spec.n = d.rows();
  spec.k = d.cols();
  return spec;
}

KernelAbi mixed2416GemvAbi(const Mixed2416GemvSpec &spec) {
  KernelAbi abi;
  abi.entries.push_back({spec.name(), spec.rows, spec.rows});
  abi.launch.grid = {(spec.n + kDecodeWarpsPerBlock - 1) / kDecodeWarpsPerBlock,
                     1, 1};
  abi.launch.block = {kDecodeWarpsPerBlock * kWarpSize, 1, 1};
  return abi;
}

LogicalResult buildMixed2416GemvKernel(ModuleOp module,
                                       const Mixed2416GemvSpec &spec,
                                       KernelTarget target) {
  if (Status status = validateMixed2416GemvSpec(spec); !status)
    return module.emitError("kernel '")
           << spec.name() << "': " << status.message();
  if (module.lookupSymbol(spec.name()))
    return module.emitError("kernel '") << spec.name() << "' already exists";
  MLIRContext *ctx = module.getContext();
  Mixed2416Emitter emitter(spec, ctx);
  ImplicitLocOpBuilder b(module.getLoc(), ctx);
  b.setInsertionPointToEnd(module.getBody());
  if (target == KernelTarget::Host) {
    conversion::buildWarpRowHostEntry(b, warpRowEntry(ctx, emitter));
    return success();
  }
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  auto gpuModule = gpu::GPUModuleOp::create(b, spec.name());
  b.setInsertionPointToStart(gpuModule.getBody());
  conversion::buildWarpRowNVPTXEntry(b, warpRowEntry(ctx, emitter));
  return success();
}

std::string mixed2416InstanceName(const Mixed2416GemvSpec &spec) {
  Mixed2416GemvSpec any = spec;
  any.rows = 1;
  std::string name = any.name();
  // The one name part that differs between the entries: `_t1`.
  const std::string rows = "_t1_n";
  size_t at = name.find(rows);
  if (at != std::string::npos)
    name.replace(at, rows.size(), "_n");
  return name;
}

std::vector<Mixed2416GemvSpec>
mixed2416GemvEntries(const Mixed2416GemvSpec &spec) {
  std::vector<Mixed2416GemvSpec> entries;
  for (int64_t t = 1; t <= 16; ++t) {
    Mixed2416GemvSpec e = spec;
    e.rows = t;
    entries.push_back(e);
  }
  return entries;
}

LogicalResult buildMixed2416GemvKernels(ModuleOp module,
                                        const Mixed2416GemvSpec &spec,
                                        KernelTarget target,
                                        StringRef gpuModuleName) {
  std::vector<Mixed2416GemvSpec> entries = mixed2416GemvEntries(spec);
  if (target == KernelTarget::Host) {
    for (const Mixed2416GemvSpec &e : entries)
      if (failed(buildMixed2416GemvKernel(module, e, target)))
        return failure();
    return success();
  }
  for (const Mixed2416GemvSpec &e : entries)
    if (Status status = validateMixed2416GemvSpec(e); !status)
      return module.emitError("kernel '")
             << e.name() << "': " << status.message();
  if (module.lookupSymbol(gpuModuleName))
    return module.emitError("kernel module '")
           << gpuModuleName << "' already exists";
  MLIRContext *ctx = module.getContext();
  ImplicitLocOpBuilder b(module.getLoc(), ctx);
  b.setInsertionPointToEnd(module.getBody());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  auto gpuModule = gpu::GPUModuleOp::create(b, gpuModuleName);
  for (const Mixed2416GemvSpec &e : entries) {
    Mixed2416Emitter emitter(e, ctx);
    b.setInsertionPointToEnd(gpuModule.getBody());
    conversion::buildWarpRowNVPTXEntry(b, warpRowEntry(ctx, emitter));
  }
  return success();
}

} // namespace qtensor
