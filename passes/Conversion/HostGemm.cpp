//===- HostGemm.cpp - The CPU's own W4A16 / W8A16 GEMV and GEMM -----------===//
//
// Y[t, n] = sum_k X[t, k] * s[n, k / G] * (q[n, k] - z[n, k / G]) for any T,
// built for the CPU rather than replaying a GPU kernel (the host twins do
// that, as parity oracles). It reads the decode_gemv layout, so a host
// artifact keeps one packed copy for decode and prefill:
//
//  - one output row n at a time; a row is whole 16-byte chunks (32 W4 or
//    16 W8 codes), each one `vector.load` of vector<4xi32>, spread to one
//    i32 lane per code with a shuffle, shifted, masked, OR-ed into the
//    exponent of 2^23 and bit-cast (the GEMV's magic-number conversion,
//    exact), then scaled once: w = s * (q - z) as a vector<chunk x f32>;
//  - X rows are read and widened to f32 in the same chunk (no scratch
//    buffer, so the kernel never allocates) and multiplied in with
//    `vector.fma`; four rows share each decoded chunk, the rest of T goes
//    one row at a time;
//  - a row's lanes are summed once at the end (a reassociating reduction:
//    the rounding bound of Runtime/Reference.h holds for any order), the
//    bias is added in f32 and the result rounded once to the output dtype;
//  - the K tail (K not a multiple of the chunk) is read with a masked load
//    of X: padded codes meet X lanes of 0.
//
// Every argument but x has a dynamic row count, and y a dynamic row stride,
// so the runtime may call the kernel on any contiguous range of output rows
// (one range per thread): w, s, z and b start at the range's first row, y at
// its first column, with the whole row's stride (KernelAbi::rowSplit).
// Lowered for the host's CPU level, this is vector code for AVX2 or AVX-512;
// the NVPTX target has no such kernel.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Conversion/KernelBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;

namespace qtensor {

namespace {

/// Rows of X that share one decoded chunk.
constexpr int64_t kRowBlock = 4;

Type halfType(MLIRContext *ctx, ActivationType t) {
  return t == ActivationType::F16 ? Type(Float16Type::get(ctx))
                                  : Type(BFloat16Type::get(ctx));
}

Type outputType(MLIRContext *ctx, OutputType t) {
  switch (t) {
  case OutputType::F16:
    return Float16Type::get(ctx);
  case OutputType::BF16:
    return BFloat16Type::get(ctx);
  case OutputType::F32:
    break;
  }
  return Float32Type::get(ctx);
}

Value indexConst(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

class HostGemmEmitter {
public:
  HostGemmEmitter(const QuantKernelSpec &spec, MLIRContext *ctx)
      : spec(spec), f32(Float32Type::get(ctx)),
        act(halfType(ctx, spec.activation)),
        scale(halfType(ctx, spec.scaleType())),
        out(outputType(ctx, spec.output)) {
    chunk = spec.chunkCodes();
    chunks = (spec.k + chunk - 1) / chunk;
    fullChunks = spec.k / chunk;
    tail = spec.k % chunk;
  }

  /// x, w, s, [z], [b], y: N (the rows of the slice) is dynamic everywhere
  /// and y's row stride is the whole output's.
  SmallVector<Type> argumentTypes(MLIRContext *ctx) const {
    const int64_t dyn = ShapedType::kDynamic;
    const int64_t t = spec.dynamicRows() ? dyn : spec.rows;
    const int64_t g = spec.groupsPerRow();
    SmallVector<Type> types = {
        MemRefType::get({t, spec.k}, act),
        MemRefType::get({dyn, 4 * chunks}, IntegerType::get(ctx, 32)),
        MemRefType::get({dyn, g}, scale)};
    if (!spec.symmetric)
      types.push_back(MemRefType::get({dyn, g}, IntegerType::get(ctx, 8)));
    if (spec.bias)
      types.push_back(MemRefType::get({dyn}, out));
    types.push_back(MemRefType::get(
        {t, dyn}, out, StridedLayoutAttr::get(ctx, /*offset=*/0, {dyn, 1})));
    return types;
  }

  void emitBody(ImplicitLocOpBuilder &b, ValueRange args) const;

private:
  Value zeroPoints(ValueRange args) const {
    return spec.symmetric ? Value() : args[3];
  }
  Value bias(ValueRange args) const {
    return spec.bias ? args[spec.symmetric ? 3 : 4] : Value();
  }

  /// s * (q - z) of chunk `c` of row `n`, as vector<chunk x f32>.
  Value emitWeights(ImplicitLocOpBuilder &b, ValueRange args, Value n,
                    Value c) const;
  /// acc[r] += X[t0 + r, chunk c] * weights for `rows` rows.
  SmallVector<Value> emitChunk(ImplicitLocOpBuilder &b, ValueRange args,
                               Value n, Value t0, Value c, ValueRange acc,
                               bool isTail) const;
  /// y[t0 .. t0 + rows, n] for one block of rows.
  void emitRows(ImplicitLocOpBuilder &b, ValueRange args, Value n, Value t0,
                int64_t rows, Value biasValue) const;

  const QuantKernelSpec &spec;
  Type f32, act, scale, out;
  int64_t chunk, chunks, fullChunks, tail;
};

Value HostGemmEmitter::emitWeights(ImplicitLocOpBuilder &b, ValueRange args,
                                   Value n, Value c) const {
  MLIRContext *ctx = b.getContext();
  Value w = args[1], s = args[2];
  Type i32 = IntegerType::get(ctx, 32);
  auto wordsTy = VectorType::get({4}, i32);
  auto fieldsTy = VectorType::get({chunk}, i32);
  auto valuesTy = VectorType::get({chunk}, f32);
  const int64_t perWord = 32 / spec.bits;

  Value words = vector::LoadOp::create(
      b, wordsTy, w,
      ValueRange{n, arith::MulIOp::create(b, c, indexConst(b, 4))},
      /*nontemporal=*/false, llvm::MaybeAlign(16));
  // Field j of the chunk is bits [b * (j % perWord), ...) of word j / perWord.
  SmallVector<int64_t> spread;
  SmallVector<int32_t> shifts;
  for (int64_t j = 0; j < chunk; ++j) {
    spread.push_back(j / perWord);
    shifts.push_back(static_cast<int32_t>((j % perWord) * spec.bits));
  }
  Value fields = vector::ShuffleOp::create(b, words, words, spread);
  fields = arith::ShRUIOp::create(
      b, fields,
      arith::ConstantOp::create(b,
                                DenseIntElementsAttr::get(fieldsTy, shifts)));
  fields = arith::AndIOp::create(
      b, fields,
      arith::ConstantOp::create(
          b, SplatElementsAttr::get(
                 fieldsTy, b.getI32IntegerAttr((1 << spec.bits) - 1))));
  // 0x4B000000 | f is the f32 2^23 + f exactly (f < 2^23).
  Value biased = vector::BitCastOp::create(
      b, valuesTy,
      arith::OrIOp::create(
          b, fields,
          arith::ConstantOp::create(
              b, SplatElementsAttr::get(fieldsTy,
                                        b.getI32IntegerAttr(0x4B000000)))));

  // G is a multiple of the chunk (or the whole row): one group per chunk.
  Value group = arith::DivUIOp::create(
      b, arith::MulIOp::create(b, c, indexConst(b, chunk)),
      indexConst(b, spec.effectiveGroupSize()));
  const double twoTo23 = 8388608.0;
  Value offset;
  if (spec.symmetric) {
    // Signed codes are stored offset binary: field = q + 2^(b-1).
    offset = arith::ConstantOp::create(
        b, b.getF32FloatAttr(twoTo23 + double(1 << (spec.bits - 1))));
  } else {
    Value zp =
        memref::LoadOp::create(b, zeroPoints(args), ValueRange{n, group});
    zp = arith::UIToFPOp::create(b, f32, arith::ExtUIOp::create(b, i32, zp));
    offset = arith::AddFOp::create(
        b, zp, arith::ConstantOp::create(b, b.getF32FloatAttr(twoTo23)));
  }
  Value codes = arith::SubFOp::create(
      b, biased, vector::BroadcastOp::create(b, valuesTy, offset));
  Value stored = memref::LoadOp::create(b, s, ValueRange{n, group});
  Value scaleValue = arith::ExtFOp::create(b, f32, stored);
  return arith::MulFOp::create(
      b, codes, vector::BroadcastOp::create(b, valuesTy, scaleValue));
}

SmallVector<Value> HostGemmEmitter::emitChunk(ImplicitLocOpBuilder &b,
                                              ValueRange args, Value n,
                                              Value t0, Value c, ValueRange acc,
                                              bool isTail) const {
  Value x = args[0];
  auto valuesTy = VectorType::get({chunk}, f32);
  auto xTy = VectorType::get({chunk}, act);
  Value weights = emitWeights(b, args, n, c);
  Value k0 = arith::MulIOp::create(b, c, indexConst(b, chunk));
  Value tailMask, zeros;
  if (isTail) {
    SmallVector<bool> bits(chunk, false);
    for (int64_t j = 0; j < tail; ++j)
      bits[j] = true;
    tailMask = arith::ConstantOp::create(
        b, DenseElementsAttr::get(VectorType::get({chunk}, b.getI1Type()),
                                  ArrayRef<bool>(bits)));
    zeros = arith::ConstantOp::create(
        b, SplatElementsAttr::get(xTy, b.getFloatAttr(act, 0.0)));
  }
  SmallVector<Value> result;
  for (size_t r = 0; r < acc.size(); ++r) {
    Value row = arith::AddIOp::create(b, t0, indexConst(b, int64_t(r)));
    SmallVector<Value, 2> at{row, k0};
    Value xs = isTail ? Value(vector::MaskedLoadOp::create(b, xTy, x, at,
                                                           tailMask, zeros))
                      : Value(vector::LoadOp::create(b, xTy, x, at));
    Value xf = arith::ExtFOp::create(b, valuesTy, xs);
    result.push_back(vector::FMAOp::create(b, xf, weights, acc[r]));
  }
  return result;
}

void HostGemmEmitter::emitRows(ImplicitLocOpBuilder &b, ValueRange args,
                               Value n, Value t0, int64_t rows,
                               Value biasValue) const {
  auto valuesTy = VectorType::get({chunk}, f32);
  Value zero = arith::ConstantOp::create(
      b, SplatElementsAttr::get(valuesTy, b.getF32FloatAttr(0.0)));
  SmallVector<Value> init(rows, zero);
  auto loop = scf::ForOp::create(
      b, indexConst(b, 0), indexConst(b, fullChunks), indexConst(b, 1), init,
      [&](OpBuilder &nested, Location loc, Value c, ValueRange acc) {
        ImplicitLocOpBuilder ib(loc, nested);
        scf::YieldOp::create(ib, emitChunk(ib, args, n, t0, c, acc, false));
      });
  SmallVector<Value> acc(loop.getResults());
  if (tail != 0)
    acc = emitChunk(b, args, n, t0, indexConst(b, fullChunks), acc, true);
  Value y = args.back();
  for (int64_t r = 0; r < rows; ++r) {
    Value v = vector::ReductionOp::create(b, vector::CombiningKind::ADD, acc[r],
                                          arith::FastMathFlags::reassoc);
    if (biasValue)
      v = arith::AddFOp::create(b, v, biasValue);
    if (out != f32)
      v = arith::TruncFOp::create(b, out, v);
    Value row = arith::AddIOp::create(b, t0, indexConst(b, r));
    memref::StoreOp::create(b, v, y, ValueRange{row, n});
  }
}

void HostGemmEmitter::emitBody(ImplicitLocOpBuilder &b, ValueRange args) const {
  Value tokens = memref::DimOp::create(b, args[0], 0);
  Value outputs = memref::DimOp::create(b, args[1], 0);
  // Blocks of four rows, then the rest one by one.
  Value blocked = arith::SubIOp::create(
      b, tokens, arith::RemUIOp::create(b, tokens, indexConst(b, kRowBlock)));
  scf::ForOp::create(
      b, indexConst(b, 0), outputs, indexConst(b, 1), ValueRange{},
      [&](OpBuilder &nested, Location loc, Value n, ValueRange) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value biasValue;
        if (Value bv = bias(args)) {
          biasValue = memref::LoadOp::create(ib, bv, ValueRange{n});
          if (out != f32)
            biasValue = arith::ExtFOp::create(ib, f32, biasValue);
        }
        auto rowLoop = [&](Value from, Value to, int64_t rows) {
          scf::ForOp::create(
              ib, from, to, indexConst(ib, rows), ValueRange{},
              [&](OpBuilder &inner, Location innerLoc, Value t0, ValueRange) {
                ImplicitLocOpBuilder rb(innerLoc, inner);
                emitRows(rb, args, n, t0, rows, biasValue);
                scf::YieldOp::create(rb);
              });
        };
        rowLoop(indexConst(ib, 0), blocked, kRowBlock);
        rowLoop(blocked, tokens, 1);
        scf::YieldOp::create(ib);
      });
}

} // namespace

KernelAbi hostGemmAbi(const QuantKernelSpec &spec) {
  KernelAbi abi;
  const int64_t rows = spec.dynamicRows() ? 1 : spec.rows;
  abi.entries.push_back(
      {spec.name(), rows,
       spec.dynamicRows() ? std::nullopt : std::optional<int64_t>(rows)});
  abi.launch.grid = {1, 1, 1};
  abi.launch.block = {1, 1, 1};
  abi.rowSplit = true;
  return abi;
}

LogicalResult buildHostGemmKernel(ModuleOp module, const QuantKernelSpec &spec,
                                  KernelTarget target) {
  if (spec.family != KernelFamily::HostGemm)
    return module.emitError("host GEMM builder given the spec '")
           << spec.name() << "' of another family";
  if (target != KernelTarget::Host)
    return module.emitError("kernel '")
           << spec.name() << "': the host GEMM has no NVPTX build";
  if (Status status = validateQuantKernelSpec(spec); !status)
    return module.emitError("kernel '")
           << spec.name() << "': " << status.message();
  if (module.lookupSymbol(spec.name()))
    return module.emitError("kernel '") << spec.name() << "' already exists";
  MLIRContext *ctx = module.getContext();
  HostGemmEmitter emitter(spec, ctx);
  ImplicitLocOpBuilder b(module.getLoc(), ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(
      b, spec.name(), FunctionType::get(ctx, emitter.argumentTypes(ctx), {}));
  fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  b.setInsertionPointToStart(fn.addEntryBlock());
  emitter.emitBody(b, fn.getArguments());
  func::ReturnOp::create(b);
  return success();
}

} // namespace qtensor
