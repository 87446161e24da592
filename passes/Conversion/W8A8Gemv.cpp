//===- W8A8Gemv.cpp - Per-token int8 activations and the W8A8 GEMV --------===//
//
// The two kernels of include/qtensor/Conversion/W8A8Kernel.h. The quantizer
// follows Numerics/ActivationQuant.h operation by operation in f32 (the
// round-half-even is the same biased add and subtract, the clamps the same
// min/max), so its codes and scales equal the reference's bit for bit. The
// GEMV's integer part is exact (i32 chunk sums with the zero-point
// corrections), and each chunk's sum is scaled into an f32 accumulator with
// one fma.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Conversion/W8A8Kernel.h"

#include "KernelTypes.h"
#include "SpecText.h"
#include "WarpRowKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <utility>
#include <vector>

using namespace mlir;

namespace qtensor {

namespace {

using conversion::elementType;
using conversion::indexConst;
using conversion::parsePrefixed;

constexpr int64_t kChunk = 16;    ///< W8 codes per 16-byte load
constexpr int64_t kActVector = 8; ///< 16-bit activations per 16-byte load
constexpr int64_t kMaxExtent = int64_t(1) << 20;

Value f32Const(ImplicitLocOpBuilder &b, float v) {
  return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
}
/// `v` as a constant of `like`'s type: an f32 or a vector of f32.
Value f32Like(ImplicitLocOpBuilder &b, Value like, float v) {
  if (auto vec = dyn_cast<VectorType>(like.getType()))
    return arith::ConstantOp::create(
        b, SplatElementsAttr::get(vec, b.getF32FloatAttr(v)));
  return f32Const(b, v);
}
Value broadcastLike(ImplicitLocOpBuilder &b, Value like, Value scalar) {
  if (auto vec = dyn_cast<VectorType>(like.getType()))
    return vector::BroadcastOp::create(b, vec, scalar);
  return scalar;
}
Value toF32(ImplicitLocOpBuilder &b, Value v) {
  return v.getType().isF32() ? v : arith::ExtFOp::create(b, b.getF32Type(), v);
}

/// rne(v) for |v| <= 2^22, as roundHalfEvenF32 (ActivationQuant.h).
Value roundHalfEven(ImplicitLocOpBuilder &b, Value v) {
  Value bias = f32Like(b, v, 12582912.0f);
  return arith::SubFOp::create(b, arith::AddFOp::create(b, v, bias), bias);
}

/// The per-token statistics and parameters, in ActivationQuant.h's order.
struct TokenParams {
  Value scale;     ///< f32
  Value zeroPoint; ///< f32 (0 for symmetric)
};

TokenParams tokenParams(ImplicitLocOpBuilder &b, bool symmetric, Value lo,
                        Value hi, Value amax) {
  Value zero = f32Const(b, 0.0f), one = f32Const(b, 1.0f);
  if (symmetric) {
    Value isZero =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, amax, zero);
    Value s = arith::SelectOp::create(
        b, isZero, one, arith::DivFOp::create(b, amax, f32Const(b, 127.0f)));
    return {s, zero};
  }
  Value range = arith::SubFOp::create(b, hi, lo);
  Value isZero =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, range, zero);
  Value s = arith::SelectOp::create(
      b, isZero, one, arith::DivFOp::create(b, range, f32Const(b, 255.0f)));
  Value z = roundHalfEven(
      b, arith::DivFOp::create(b, arith::NegFOp::create(b, lo), s));
  z = arith::MinimumFOp::create(b, arith::MaximumFOp::create(b, z, zero),
                                f32Const(b, 255.0f));
  return {s, z};
}

/// q = clamp(rne(x / s) + z, qmin, qmax) as i8, elementwise over a vector.
Value quantizeValues(ImplicitLocOpBuilder &b, bool symmetric, Value x,
                     const TokenParams &p) {
  auto vec = cast<VectorType>(x.getType());
  Value q = arith::AddFOp::create(
      b,
      roundHalfEven(b,
                    arith::DivFOp::create(b, x, broadcastLike(b, x, p.scale))),
      broadcastLike(b, x, p.zeroPoint));
  q = arith::MinimumFOp::create(
      b, arith::MaximumFOp::create(b, q, f32Like(b, x, symmetric ? -127 : 0)),
      f32Like(b, x, symmetric ? 127 : 255));
  return arith::TruncIOp::create(
      b, vec.clone(b.getI8Type()),
      arith::FPToSIOp::create(b, vec.clone(b.getI32Type()), q));
}

class W8A8Emitter {
public:
  W8A8Emitter(const W8A8GemvSpec &spec, MLIRContext *ctx)
      : spec(spec), chunks(spec.k / kChunk), f32(Float32Type::get(ctx)),
        act(elementType(ctx, spec.activation)),
        scale(elementType(ctx, spec.scaleType())),
        out(elementType(ctx, spec.output)) {}

  /// x, xq, sx, [zx].
  SmallVector<Type> quantizerTypes(MLIRContext *ctx) const {
    Type i8 = IntegerType::get(ctx, 8), i32 = IntegerType::get(ctx, 32);
    SmallVector<Type> types = {MemRefType::get({spec.rows, spec.k}, act),
                               MemRefType::get({spec.rows, spec.k}, i8),
                               MemRefType::get({spec.rows}, f32)};
    if (!spec.activationSymmetric)
      types.push_back(MemRefType::get({spec.rows}, i32));
    return types;
  }

  /// xq, sx, [zx], w, s, [z], [b], y.
  SmallVector<Type> gemvTypes(MLIRContext *ctx) const {
    Type i8 = IntegerType::get(ctx, 8), i32 = IntegerType::get(ctx, 32);
    const int64_t t = spec.rows, n = spec.n, g = spec.groupsPerRow();
    SmallVector<Type> types = {MemRefType::get({t, spec.k}, i8),
                               MemRefType::get({t}, f32)};
    if (!spec.activationSymmetric)
      types.push_back(MemRefType::get({t}, i32));
    types.push_back(MemRefType::get({n, 4 * chunks}, i32));
    types.push_back(MemRefType::get({n, g}, scale));
    if (!spec.weightSymmetric)
      types.push_back(MemRefType::get({n, g}, i8));
    if (spec.bias)
      types.push_back(MemRefType::get({n}, out));
    types.push_back(MemRefType::get({t, n}, out));
    return types;
  }

  /// Lane `lane`'s min, max and max |x| of token row t: its 8-value
  /// (16-byte) pieces lane, lane + 32, ...
  std::tuple<Value, Value, Value>
  emitLaneStats(ImplicitLocOpBuilder &b, Value x, Value t, Value lane) const;
  /// Quantizes the lane's pieces of row t and (lane 0) stores s and z.
  void emitLaneQuantize(ImplicitLocOpBuilder &b, ValueRange args, Value t,
                        Value lane, const TokenParams &p) const;

  SmallVector<Value> emitGemvPartials(ImplicitLocOpBuilder &b, ValueRange args,
                                      Value n, Value lane) const;
  void emitGemvStore(ImplicitLocOpBuilder &b, ValueRange args, Value n,
                     ArrayRef<Value> values) const;

  const W8A8GemvSpec &spec;
  const int64_t chunks;
  Type f32, act, scale, out;

private:
  /// Piece v of row t (values 8 v .. 8 v + 7) as f32.
  Value loadActivations(ImplicitLocOpBuilder &b, Value x, Value t,
                        Value v) const;
  // GEMV argument positions after the optional ones.
  size_t weightsArg() const { return spec.activationSymmetric ? 2 : 3; }
  size_t biasArg() const {
    return weightsArg() + (spec.weightSymmetric ? 2 : 3);
  }
};

std::tuple<Value, Value, Value>
W8A8Emitter::emitLaneStats(ImplicitLocOpBuilder &b, Value x, Value t,
                           Value lane) const {
  Value zero = f32Const(b, 0.0f);
  auto loop = scf::ForOp::create(
      b, lane, indexConst(b, spec.k / kActVector), indexConst(b, kWarpSize),
      ValueRange{zero, zero, zero},
      [&](OpBuilder &nested, Location loc, Value v, ValueRange iter) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value xs = loadActivations(ib, x, t, v);
        Value lo = iter[0], hi = iter[1], amax = iter[2];
        for (int64_t j = 0; j < kActVector; ++j) {
          Value e = vector::ExtractOp::create(ib, xs, j);
          Value mag = arith::SelectOp::create(
              ib,
              arith::CmpFOp::create(ib, arith::CmpFPredicate::OLT, e,
                                    f32Const(ib, 0.0f)),
              arith::NegFOp::create(ib, e), e);
          lo = arith::MinimumFOp::create(ib, lo, e);
          hi = arith::MaximumFOp::create(ib, hi, e);
          amax = arith::MaximumFOp::create(ib, amax, mag);
        }
        scf::YieldOp::create(ib, ValueRange{lo, hi, amax});
      });
  return {loop.getResult(0), loop.getResult(1), loop.getResult(2)};
}

Value W8A8Emitter::loadActivations(ImplicitLocOpBuilder &b, Value x, Value t,
                                   Value v) const {
  Value k0 = arith::MulIOp::create(b, v, indexConst(b, kActVector));
  Value xs = vector::LoadOp::create(b, VectorType::get({kActVector}, act), x,
                                    ValueRange{t, k0}, /*nontemporal=*/false,
                                    llvm::MaybeAlign(16));
  return arith::ExtFOp::create(b, VectorType::get({kActVector}, f32), xs);
}

void W8A8Emitter::emitLaneQuantize(ImplicitLocOpBuilder &b, ValueRange args,
                                   Value t, Value lane,
                                   const TokenParams &p) const {
  const bool symmetric = spec.activationSymmetric;
  scf::ForOp::create(
      b, lane, indexConst(b, spec.k / kActVector), indexConst(b, kWarpSize),
      ValueRange{}, [&](OpBuilder &nested, Location loc, Value v, ValueRange) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value q = quantizeValues(ib, symmetric,
                                 loadActivations(ib, args[0], t, v), p);
        Value k0 = arith::MulIOp::create(ib, v, indexConst(ib, kActVector));
        vector::StoreOp::create(ib, q, args[1], ValueRange{t, k0},
                                /*nontemporal=*/false, llvm::MaybeAlign(8));
        scf::YieldOp::create(ib);
      });
  Value lane0 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane,
                                      indexConst(b, 0));
  scf::IfOp::create(b, lane0, [&](OpBuilder &nested, Location loc) {
    ImplicitLocOpBuilder ib(loc, nested);
    memref::StoreOp::create(ib, p.scale, args[2], ValueRange{t});
    if (!symmetric)
      memref::StoreOp::create(
          ib, arith::FPToSIOp::create(ib, ib.getI32Type(), p.zeroPoint),
          args[3], ValueRange{t});
    scf::YieldOp::create(ib);
  });
}

SmallVector<Value> W8A8Emitter::emitGemvPartials(ImplicitLocOpBuilder &b,
                                                 ValueRange args, Value n,
                                                 Value lane) const {
  Type i32 = b.getI32Type();
  auto wordsTy = VectorType::get({4}, i32);
  auto codesTy = VectorType::get({kChunk}, i32);
  auto xTy = VectorType::get({kChunk}, b.getI8Type());
  Value xq = args[0];
  Value w = args[weightsArg()], s = args[weightsArg() + 1];
  Value z = spec.weightSymmetric ? Value() : args[weightsArg() + 2];
  // The tokens' zero-points, loaded once.
  SmallVector<Value> zx;
  if (!spec.activationSymmetric)
    for (int64_t t = 0; t < spec.rows; ++t)
      zx.push_back(
          memref::LoadOp::create(b, args[2], ValueRange{indexConst(b, t)}));
  SmallVector<int64_t> spread;
  SmallVector<int32_t> shifts;
  for (int64_t j = 0; j < kChunk; ++j) {
    spread.push_back(j / 4);
    shifts.push_back(int32_t(8 * (j % 4)));
  }
  SmallVector<Value> init(spec.rows, f32Const(b, 0.0f));
  auto loop = scf::ForOp::create(
      b, lane, indexConst(b, chunks), indexConst(b, kWarpSize), init,
      [&](OpBuilder &nested, Location loc, Value c, ValueRange acc) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value words = vector::LoadOp::create(
            ib, wordsTy, w,
            ValueRange{n, arith::MulIOp::create(ib, c, indexConst(ib, 4))},
            /*nontemporal=*/false, llvm::MaybeAlign(16));
        auto splat = [&](int32_t v) -> Value {
          return arith::ConstantOp::create(
              ib, SplatElementsAttr::get(codesTy, ib.getI32IntegerAttr(v)));
        };
        Value fields = arith::AndIOp::create(
            ib,
            arith::ShRUIOp::create(
                ib, vector::ShuffleOp::create(ib, words, words, spread),
                arith::ConstantOp::create(
                    ib, DenseIntElementsAttr::get(codesTy, shifts))),
            splat(0xFF));
        Value k0 = arith::MulIOp::create(ib, c, indexConst(ib, kChunk));
        Value g = spec.groupSize == 0
                      ? indexConst(ib, 0)
                      : Value(arith::DivUIOp::create(
                            ib, k0, indexConst(ib, spec.groupSize)));
        // q_w - z_w: signed codes are stored offset binary (field = q +
        // 128), so their zero-point is the offset.
        Value zw =
            spec.weightSymmetric
                ? splat(128)
                : Value(vector::BroadcastOp::create(
                      ib, codesTy,
                      arith::ExtUIOp::create(
                          ib, i32,
                          memref::LoadOp::create(ib, z, ValueRange{n, g}))));
        Value qw = arith::SubIOp::create(ib, fields, zw);
        Value sumW = spec.activationSymmetric
                         ? Value()
                         : Value(vector::ReductionOp::create(
                               ib, vector::CombiningKind::ADD, qw));
        Value sw = toF32(ib, memref::LoadOp::create(ib, s, ValueRange{n, g}));
        SmallVector<Value> next;
        for (int64_t t = 0; t < spec.rows; ++t) {
          Value codes = vector::LoadOp::create(
              ib, xTy, xq, ValueRange{indexConst(ib, t), k0},
              /*nontemporal=*/false, llvm::MaybeAlign(16));
          Value qx = spec.activationSymmetric
                         ? Value(arith::ExtSIOp::create(ib, codesTy, codes))
                         : Value(arith::ExtUIOp::create(ib, codesTy, codes));
          // sum (q_x - z_x) q_w' = sum q_x q_w' - z_x sum q_w', exact in i32.
          Value a =
              vector::ReductionOp::create(ib, vector::CombiningKind::ADD,
                                          arith::MulIOp::create(ib, qx, qw));
          if (sumW)
            a = arith::SubIOp::create(ib, a,
                                      arith::MulIOp::create(ib, zx[t], sumW));
          // |a| < 2^24: exact in f32. mul + add marked `contract`: one fma.
          auto contract = arith::FastMathFlags::contract;
          Value af = arith::SIToFPOp::create(ib, f32, a);
          next.push_back(arith::AddFOp::create(
              ib, arith::MulFOp::create(ib, sw, af, contract), acc[t],
              contract));
        }
        scf::YieldOp::create(ib, next);
      });
  return SmallVector<Value>(loop.getResults());
}

void W8A8Emitter::emitGemvStore(ImplicitLocOpBuilder &b, ValueRange args,
                                Value n, ArrayRef<Value> values) const {
  Value biasValue;
  if (spec.bias)
    biasValue =
        toF32(b, memref::LoadOp::create(b, args[biasArg()], ValueRange{n}));
  for (int64_t t = 0; t < spec.rows; ++t) {
    Value tt = indexConst(b, t);
    Value sx = memref::LoadOp::create(b, args[1], ValueRange{tt});
    Value v = arith::MulFOp::create(b, sx, values[t]);
    if (biasValue)
      v = arith::AddFOp::create(b, v, biasValue);
    if (out != f32)
      v = arith::TruncFOp::create(b, out, v);
    memref::StoreOp::create(b, v, args.back(), ValueRange{tt, n});
  }
}

/// The quantizer on the GPU: one warp per token; the lanes' statistics
/// meet in an xor butterfly, so every lane holds the row's.
void buildQuantizerNVPTX(ImplicitLocOpBuilder &b, const W8A8Emitter &e) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  auto fn =
      gpu::GPUFuncOp::create(b, e.spec.quantizerName(),
                             FunctionType::get(ctx, e.quantizerTypes(ctx), {}));
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  b.setInsertionPointToStart(&fn.getBody().front());
  ValueRange args = fn.getArguments();
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value lane = arith::RemUIOp::create(b, tid, indexConst(b, kWarpSize));
  Value t = arith::AddIOp::create(
      b,
      arith::MulIOp::create(b, gpu::BlockIdOp::create(b, gpu::Dimension::x),
                            indexConst(b, kDecodeWarpsPerBlock)),
      arith::DivUIOp::create(b, tid, indexConst(b, kWarpSize)));
  Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, t,
                                        indexConst(b, e.spec.rows));
  scf::IfOp::create(b, inRange, [&](OpBuilder &nested, Location loc) {
    ImplicitLocOpBuilder ib(loc, nested);
    auto [lo, hi, amax] = e.emitLaneStats(ib, args[0], t, lane);
    for (int32_t offset = kWarpSize / 2; offset > 0; offset /= 2) {
      auto across = [&](Value v) {
        return gpu::ShuffleOp::create(ib, v, offset,
                                      static_cast<int32_t>(kWarpSize),
                                      gpu::ShuffleMode::XOR)
            .getShuffleResult();
      };
      lo = arith::MinimumFOp::create(ib, lo, across(lo));
      hi = arith::MaximumFOp::create(ib, hi, across(hi));
      amax = arith::MaximumFOp::create(ib, amax, across(amax));
    }
    TokenParams p = tokenParams(ib, e.spec.activationSymmetric, lo, hi, amax);
    e.emitLaneQuantize(ib, args, t, lane, p);
    scf::YieldOp::create(ib);
  });
  gpu::ReturnOp::create(b);
}

/// Its host twin: tokens and lanes as loops. Min and max are exact and
/// order-free, so the twin reduces the lanes' statistics in lane order.
void buildQuantizerHost(ImplicitLocOpBuilder &b, const W8A8Emitter &e) {
  MLIRContext *ctx = b.getContext();
  OpBuilder::InsertionGuard guard(b);
  auto fn =
      func::FuncOp::create(b, e.spec.quantizerName(),
                           FunctionType::get(ctx, e.quantizerTypes(ctx), {}));
  fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  b.setInsertionPointToStart(fn.addEntryBlock());
  ValueRange args = fn.getArguments();
  auto loop = [&](ImplicitLocOpBuilder &ob, int64_t count, ValueRange init,
                  function_ref<SmallVector<Value>(ImplicitLocOpBuilder &, Value,
                                                  ValueRange)>
                      body) {
    return scf::ForOp::create(
        ob, indexConst(ob, 0), indexConst(ob, count), indexConst(ob, 1), init,
        [&](OpBuilder &nested, Location loc, Value iv, ValueRange iter) {
          ImplicitLocOpBuilder ib(loc, nested);
          scf::YieldOp::create(ib, body(ib, iv, iter));
        });
  };
  Value zero = f32Const(b, 0.0f);
  loop(b, e.spec.rows, {}, [&](ImplicitLocOpBuilder &tb, Value t, ValueRange) {
    auto stats =
        loop(tb, kWarpSize, ValueRange{zero, zero, zero},
             [&](ImplicitLocOpBuilder &lb, Value lane, ValueRange iter) {
               auto [lo, hi, amax] = e.emitLaneStats(lb, args[0], t, lane);
               return SmallVector<Value>{
                   arith::MinimumFOp::create(lb, iter[0], lo),
                   arith::MaximumFOp::create(lb, iter[1], hi),
                   arith::MaximumFOp::create(lb, iter[2], amax)};
             });
    TokenParams p =
        tokenParams(tb, e.spec.activationSymmetric, stats.getResult(0),
                    stats.getResult(1), stats.getResult(2));
    loop(tb, kWarpSize, {},
         [&](ImplicitLocOpBuilder &lb, Value lane, ValueRange) {
           e.emitLaneQuantize(lb, args, t, lane, p);
           return SmallVector<Value>{};
         });
    return SmallVector<Value>{};
  });
  func::ReturnOp::create(b);
}

conversion::WarpRowEntry gemvEntry(MLIRContext *ctx, const W8A8Emitter &e) {
  conversion::WarpRowEntry w;
  w.symbol = e.spec.name();
  w.argumentTypes = e.gemvTypes(ctx);
  w.outputRows = e.spec.n;
  w.accumulators = e.spec.rows;
  w.body = conversion::argumentsOnlyBody(
      [&e](ImplicitLocOpBuilder &b, ValueRange args, Value n, Value lane) {
        return e.emitGemvPartials(b, args, n, lane);
      },
      [&e](ImplicitLocOpBuilder &b, ValueRange args, Value n,
           ArrayRef<Value> values) { e.emitGemvStore(b, args, n, values); });
  return w;
}

} // namespace

std::string W8A8GemvSpec::name() const {
  std::string out = std::string("qt_w8a8_gemv_w8") +
                    (weightSymmetric ? "sym" : "asym") + "_a8" +
                    (activationSymmetric ? "sym" : "asym");
  out += groupSize == 0 ? "_gch" : "_g" + std::to_string(groupSize);
  out += std::string("_") + toString(activation) + "_t" + std::to_string(rows) +
         "_n" + std::to_string(n) + "_k" + std::to_string(k);
  if (scaleType() != activation)
    out += std::string("_sc") + toString(scaleType());
  return out + conversion::outputNameSuffix(output, bias);
}

std::string W8A8GemvSpec::quantizerName() const {
  return std::string("qt_quantize_a8") +
         (activationSymmetric ? "sym" : "asym") + "_" + toString(activation) +
         "_t" + std::to_string(rows) + "_k" + std::to_string(k);
}

KernelLayoutSpec W8A8GemvSpec::layout() const {
  return {KernelLayoutKind::DecodeGemv, 8, weightSymmetric};
}

Status validateW8A8GemvSpec(const W8A8GemvSpec &spec) {
  if (spec.activation != FloatType::F16 && spec.activation != FloatType::BF16)
    return makeError("activations must be f16 or bf16, got ",
                     toString(spec.activation));
  if (spec.rows < 1 || spec.rows > 16)
    return makeError("decode kernels take T in [1, 16] rows, got ", spec.rows);
  if (spec.n < 1 || spec.n > kMaxExtent || spec.k < 1 || spec.k > kMaxExtent)
    return makeError("weight shape [", spec.n, ", ", spec.k,
                     "] must have extents in [1, ", kMaxExtent, "]");
  if (spec.k % kChunk != 0)
    return makeError("K must be a multiple of ", kChunk,
                     " (whole chunks in the correction sums), got ", spec.k);
  if (spec.groupSize != 0 &&
      (spec.groupSize % kChunk != 0 || spec.k % spec.groupSize != 0))
    return makeError("group size must be a multiple of ", kChunk,
                     " dividing K = ", spec.k, ", or per-channel, got ",
                     spec.groupSize);
  // The accumulator-width bound: a chunk's corrected sum of products of
  // two (at most 9-bit signed) differences is exact in i32 and in f32.
  const int64_t chunkBound = kChunk * 255 * 255;
  if (chunkBound >= (int64_t(1) << 24))
    return makeError("a chunk's integer sum may reach ", chunkBound,
                     ", beyond f32's exact integers");
  return Status::ok();
}

Expected<W8A8GemvSpec> parseW8A8GemvSpec(std::string_view text) {
  text = conversion::trimSpecText(text);
  auto fail = [&](std::string_view what) -> Error {
    return makeError("kernel spec '", text, "': ", what,
                     " (expected w8a8_gemv:gG|gch:sym|asym:sym|asym:f16|bf16:"
                     "tT:nN:kK[:scf16|scbf16|scf32][:of16|obf16|of32][:bias])");
  };
  std::vector<std::string_view> f = conversion::specFields(text);
  if (f.size() < 8)
    return fail("wrong number of fields");
  if (f[0] != "w8a8_gemv")
    return fail("unknown family '" + std::string(f[0]) +
                "', expected w8a8_gemv");
  W8A8GemvSpec spec;
  if (f[1] == "gch")
    spec.groupSize = 0;
  else if (!parsePrefixed(f[1], "g", spec.groupSize) || spec.groupSize <= 0)
    return fail("bad group '" + std::string(f[1]) + "'");
  if ((f[2] != "sym" && f[2] != "asym") || (f[3] != "sym" && f[3] != "asym"))
    return fail("bad code kinds '" + std::string(f[2]) + ":" +
                std::string(f[3]) + "' (weights, then activations)");
  spec.weightSymmetric = f[2] == "sym";
  spec.activationSymmetric = f[3] == "sym";
  std::optional<FloatType> activation = conversion::parseSpecFloat(f[4]);
  if (!activation || *activation == FloatType::F32)
    return fail("bad activation type '" + std::string(f[4]) + "'");
  spec.activation = *activation;
  if (!parsePrefixed(f[5], "t", spec.rows))
    return fail("bad rows '" + std::string(f[5]) + "'");
  if (!parsePrefixed(f[6], "n", spec.n) || !parsePrefixed(f[7], "k", spec.k))
    return fail("bad extent");
  bool seenScale = false, seenOutput = false;
  for (size_t i = 8; i < f.size(); ++i) {
    std::string_view o = f[i];
    bool repeated = false;
    if (o == "bias") {
      repeated = std::exchange(spec.bias, true);
    } else if (auto scale = conversion::parseFloatOption(o, "sc")) {
      repeated = std::exchange(seenScale, true);
      spec.scale = *scale;
    } else if (auto output = conversion::parseFloatOption(o, "o")) {
      repeated = std::exchange(seenOutput, true);
      spec.output = *output;
    } else {
      return fail("unknown option '" + std::string(o) + "'");
    }
    if (repeated)
      return fail("option '" + std::string(o) + "' given twice");
  }
  if (Status status = validateW8A8GemvSpec(spec); !status)
    return fail(status.message());
  return spec;
}

KernelAbi w8a8QuantizerAbi(const W8A8GemvSpec &spec) {
  KernelAbi abi;
  abi.entries.push_back({spec.quantizerName(), spec.rows, spec.rows});
  abi.launch.grid = {
      (spec.rows + kDecodeWarpsPerBlock - 1) / kDecodeWarpsPerBlock, 1, 1};
  abi.launch.block = {kDecodeWarpsPerBlock * kWarpSize, 1, 1};
  return abi;
}

KernelAbi w8a8GemvAbi(const W8A8GemvSpec &spec) {
  KernelAbi abi;
  abi.entries.push_back({spec.name(), spec.rows, spec.rows});
  abi.launch.grid = {(spec.n + kDecodeWarpsPerBlock - 1) / kDecodeWarpsPerBlock,
                     1, 1};
  abi.launch.block = {kDecodeWarpsPerBlock * kWarpSize, 1, 1};
  return abi;
}

std::string w8a8InstanceName(const W8A8GemvSpec &spec) {
  W8A8GemvSpec any = spec;
  any.rows = 1;
  std::string name = any.name();
  // The one name part that differs between the entries: `_t1`.
  const std::string rows = "_t1_n";
  if (size_t at = name.find(rows); at != std::string::npos)
    name.replace(at, rows.size(), "_n");
  return name;
}

std::vector<W8A8GemvSpec> w8a8GemvEntries(const W8A8GemvSpec &spec) {
  std::vector<W8A8GemvSpec> entries;
  for (int64_t t = 1; t <= 16; ++t) {
    W8A8GemvSpec e = spec;
    e.rows = t;
    entries.push_back(e);
  }
  return entries;
}

LogicalResult buildW8A8Kernels(ModuleOp module, const W8A8GemvSpec &spec,
                               KernelTarget target) {
  if (Status status = validateW8A8GemvSpec(spec); !status)
    return module.emitError("kernel '")
           << spec.name() << "': " << status.message();
  if (module.lookupSymbol(spec.name()))
    return module.emitError("kernel '") << spec.name() << "' already exists";
  // GEMVs of other N share a quantizer: its name spells all it depends on.
  const bool haveQuantizer = module.lookupSymbol(spec.quantizerName());
  MLIRContext *ctx = module.getContext();
  W8A8Emitter emitter(spec, ctx);
  ImplicitLocOpBuilder b(module.getLoc(), ctx);
  b.setInsertionPointToEnd(module.getBody());
  if (target == KernelTarget::Host) {
    if (!haveQuantizer)
      buildQuantizerHost(b, emitter);
    conversion::buildWarpRowHostEntry(b, gemvEntry(ctx, emitter));
    return success();
  }
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  if (!haveQuantizer) {
    OpBuilder::InsertionGuard guard(b);
    auto quantizer = gpu::GPUModuleOp::create(b, spec.quantizerName());
    b.setInsertionPointToStart(quantizer.getBody());
    buildQuantizerNVPTX(b, emitter);
  }
  auto gemv = gpu::GPUModuleOp::create(b, spec.name());
  b.setInsertionPointToStart(gemv.getBody());
  conversion::buildWarpRowNVPTXEntry(b, gemvEntry(ctx, emitter));
  return success();
}

} // namespace qtensor
