//===- DecodeGemv.cpp - Decode GEMV kernel for W4A16 / W8A16 --------------===//
//
// Y[t, n] = sum_k X[t, k] * s[n, k / G] * (q[n, k] - z[n, k / G]) for T = 1..16
// rows: weight-bandwidth bound (seed M8.1 0x06, M8.9 0x07), so the kernel is
// built around reading each code once with 128-bit loads:
//
//  - one warp per output feature n; lane l walks the row's 16-byte chunks
//    l, l + 32, ... (a warp reads 512 contiguous bytes per step); split-K
//    gives each blockIdx.y a contiguous range of chunks;
//  - a chunk (32 W4 or 16 W8 codes) is one `vector.load` of vector<4xi32>
//    (ld.global.v4.u32); fields are unpacked in registers with shifts and
//    masks, OR-ed into the exponent of 2^23 and bit-cast to f32 (the
//    magic-number conversion), so `f - (2^23 + z)` is exactly q - z: the
//    zero-point (or the offset-binary bias of symmetric codes) is fused into
//    the subtraction that the conversion needs anyway;
//  - a chunk never crosses a group (G is a multiple of the chunk), so its
//    dot product with X is scaled once: acc += s * dot (one fma), in f32;
//  - the K tail (K not a multiple of the chunk) is read with a masked load
//    of X; padded codes are zero and their X lanes are masked to 0;
//  - lanes combine with a gpu.shuffle xor butterfly; lane 0 stores, or adds
//    atomically when K is split.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Conversion/KernelBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;

namespace qtensor {

namespace {

/// The builder state shared by the NVPTX and host wrappers.
class DecodeGemvEmitter {
public:
  explicit DecodeGemvEmitter(const QuantKernelSpec &spec, MLIRContext *ctx)
      : spec(spec), f32(Float32Type::get(ctx)),
        act(spec.activation == ActivationType::F16
                ? Type(Float16Type::get(ctx))
                : Type(BFloat16Type::get(ctx))) {
    chunk = spec.chunkCodes();
    chunks = (spec.k + chunk - 1) / chunk;
    fullChunks = spec.k / chunk;
    tail = spec.k % chunk;
    chunksPerSplit = (chunks + spec.splitK - 1) / spec.splitK;
  }

  /// x, w, s, [z], y.
  SmallVector<Type> argumentTypes(MLIRContext *ctx) const {
    const int64_t t = spec.rows, n = spec.n, k = spec.k;
    const int64_t g = spec.groupsPerRow();
    SmallVector<Type> types = {
        MemRefType::get({t, k}, act),
        MemRefType::get({n, 4 * chunks}, IntegerType::get(ctx, 32)),
        MemRefType::get({n, g}, act)};
    if (!spec.symmetric)
      types.push_back(MemRefType::get({n, g}, IntegerType::get(ctx, 8)));
    types.push_back(MemRefType::get({t, n}, f32));
    return types;
  }

  /// The T partial sums lane `lane` holds for output feature `n` and K split
  /// `split` before the warp reduction.
  SmallVector<Value> emitLanePartials(ImplicitLocOpBuilder &b, ValueRange args,
                                      Value n, Value split, Value lane) const;

  /// y[t, n] = value (or += when K is split).
  void emitStore(ImplicitLocOpBuilder &b, ValueRange args, Value n,
                 ArrayRef<Value> values) const;

  const QuantKernelSpec &spec;
  Type f32, act;
  int64_t chunk, chunks, fullChunks, tail, chunksPerSplit;

private:
  /// acc[t] += s * dot(X[t, chunk c], q - z) for one chunk.
  SmallVector<Value> emitChunk(ImplicitLocOpBuilder &b, ValueRange args,
                               Value n, Value c, ValueRange acc,
                               bool isTail) const;
};

Value indexConst(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

SmallVector<Value>
DecodeGemvEmitter::emitChunk(ImplicitLocOpBuilder &b, ValueRange args, Value n,
                             Value c, ValueRange acc, bool isTail) const {
  MLIRContext *ctx = b.getContext();
  Value x = args[0], w = args[1], s = args[2];
  Value z = spec.symmetric ? Value() : args[3];
  Type i32 = IntegerType::get(ctx, 32);
  auto wordsTy = VectorType::get({4}, i32);
  auto fieldsTy = VectorType::get({chunk}, i32);
  auto valuesTy = VectorType::get({chunk}, f32);
  const int64_t perWord = 32 / spec.bits;

  // One 128-bit load of the chunk's four words.
  Value word0 = arith::MulIOp::create(b, c, indexConst(b, 4));
  Value words = vector::LoadOp::create(b, wordsTy, w, ValueRange{n, word0},
                                       /*nontemporal=*/false,
                                       llvm::MaybeAlign(16));
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
      arith::ConstantOp::create(b, DenseIntElementsAttr::get(fieldsTy, shifts)));
  const int32_t mask = (1 << spec.bits) - 1;
  fields = arith::AndIOp::create(
      b, fields,
      arith::ConstantOp::create(b, SplatElementsAttr::get(
                                       fieldsTy, b.getI32IntegerAttr(mask))));
  // 0x4B000000 | f is the f32 2^23 + f exactly (f < 2^23).
  Value magic = arith::OrIOp::create(
      b, fields,
      arith::ConstantOp::create(
          b, SplatElementsAttr::get(fieldsTy, b.getI32IntegerAttr(0x4B000000))));
  Value biased = vector::BitCastOp::create(b, valuesTy, magic);

  // Group of this chunk: G is a multiple of the chunk, so one per chunk.
  Value k0 = arith::MulIOp::create(b, c, indexConst(b, chunk));
  Value group =
      arith::DivUIOp::create(b, k0, indexConst(b, spec.effectiveGroupSize()));
  Value bias;
  const double twoTo23 = 8388608.0;
  if (spec.symmetric) {
    // Signed codes are stored offset binary: field = q + 2^(b-1).
    bias = arith::ConstantOp::create(
        b, b.getF32FloatAttr(twoTo23 + double(1 << (spec.bits - 1))));
  } else {
    Value zp = memref::LoadOp::create(b, z, ValueRange{n, group});
    zp = arith::ExtUIOp::create(b, i32, zp);
    zp = arith::UIToFPOp::create(b, f32, zp);
    bias = arith::AddFOp::create(
        b, zp, arith::ConstantOp::create(b, b.getF32FloatAttr(twoTo23)));
  }
  Value dequant = arith::SubFOp::create(
      b, biased, vector::BroadcastOp::create(b, valuesTy, bias));
  Value scale = memref::LoadOp::create(b, s, ValueRange{n, group});
  scale = arith::ExtFOp::create(b, f32, scale);

  auto xTy = VectorType::get({chunk}, act);
  // 16-byte aligned X chunks only when every row starts 16-byte aligned.
  llvm::MaybeAlign xAlign(spec.k % 8 == 0 ? 16 : 2);
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
  SmallVector<Value> out;
  for (int64_t t = 0; t < spec.rows; ++t) {
    SmallVector<Value, 2> at{indexConst(b, t), k0};
    Value xs = isTail
                   ? Value(vector::MaskedLoadOp::create(b, xTy, x, at, tailMask,
                                                        zeros, xAlign))
                   : Value(vector::LoadOp::create(b, xTy, x, at,
                                                  /*nontemporal=*/false,
                                                  xAlign));
    Value xf = arith::ExtFOp::create(b, valuesTy, xs);
    Value products = arith::MulFOp::create(b, xf, dequant);
    // Ordered sum: the host and the GPU add in the same order.
    Value dot =
        vector::ReductionOp::create(b, vector::CombiningKind::ADD, products);
    // mul + add marked `contract`: NVPTX emits one fma.rn.f32 (math.fma
    // would become a libdevice call that ptxas cannot resolve).
    auto contract = arith::FastMathFlags::contract;
    Value scaled = arith::MulFOp::create(b, scale, dot, contract);
    out.push_back(arith::AddFOp::create(b, scaled, acc[t], contract));
  }
  return out;
}

SmallVector<Value>
DecodeGemvEmitter::emitLanePartials(ImplicitLocOpBuilder &b, ValueRange args,
                                    Value n, Value split, Value lane) const {
  Value zero = arith::ConstantOp::create(b, b.getF32FloatAttr(0.0));
  SmallVector<Value> init(spec.rows, zero);
  // This split's chunks: [begin, end), the last split possibly shorter.
  Value begin = arith::MulIOp::create(b, split, indexConst(b, chunksPerSplit));
  Value end = arith::MinUIOp::create(
      b, arith::AddIOp::create(b, begin, indexConst(b, chunksPerSplit)),
      indexConst(b, chunks));
  Value first = arith::AddIOp::create(b, begin, lane);
  Value fullEnd = arith::MinUIOp::create(b, end, indexConst(b, fullChunks));
  auto loop = scf::ForOp::create(
      b, first, fullEnd, indexConst(b, kWarpSize), init,
      [&](OpBuilder &nested, Location loc, Value c, ValueRange acc) {
        ImplicitLocOpBuilder ib(loc, nested);
        scf::YieldOp::create(ib, emitChunk(ib, args, n, c, acc, false));
      });
  SmallVector<Value> acc(loop.getResults());
  if (tail == 0)
    return acc;

  // The partial last chunk belongs to one lane of one split.
  Value tailChunk = indexConst(b, fullChunks);
  Value inSplit = arith::AndIOp::create(
      b,
      arith::CmpIOp::create(b, arith::CmpIPredicate::uge, tailChunk, begin),
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tailChunk, end));
  Value owner = arith::RemUIOp::create(
      b, arith::SubIOp::create(b, tailChunk, begin), indexConst(b, kWarpSize));
  Value mine = arith::AndIOp::create(
      b, inSplit,
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, owner, lane));
  SmallVector<Type> types(spec.rows, f32);
  auto ifOp = scf::IfOp::create(
      b, mine,
      [&](OpBuilder &nested, Location loc) {
        ImplicitLocOpBuilder ib(loc, nested);
        scf::YieldOp::create(ib, emitChunk(ib, args, n, tailChunk, acc, true));
      },
      [&](OpBuilder &nested, Location loc) {
        scf::YieldOp::create(nested, loc, acc);
      });
  return SmallVector<Value>(ifOp.getResults());
}

void DecodeGemvEmitter::emitStore(ImplicitLocOpBuilder &b, ValueRange args,
                                  Value n, ArrayRef<Value> values) const {
  Value y = args.back();
  for (int64_t t = 0; t < spec.rows; ++t) {
    SmallVector<Value, 2> at{indexConst(b, t), n};
    if (spec.splitK > 1)
      memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addf, values[t], y,
                                  at);
    else
      memref::StoreOp::create(b, values[t], y, at);
  }
}

void buildNVPTX(ModuleOp module, const DecodeGemvEmitter &e) {
  MLIRContext *ctx = module.getContext();
  const std::string name = e.spec.name();
  ImplicitLocOpBuilder b(module.getLoc(), ctx);
  b.setInsertionPointToEnd(module.getBody());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  auto gpuModule = gpu::GPUModuleOp::create(b, name);
  b.setInsertionPointToStart(gpuModule.getBody());
  auto fn = gpu::GPUFuncOp::create(
      b, name, FunctionType::get(ctx, e.argumentTypes(ctx), {}));
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  const int32_t threads = static_cast<int32_t>(kDecodeWarpsPerBlock * kWarpSize);
  fn.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({threads, 1, 1}));
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
  // The row test is uniform across a warp, so every shuffle below has its
  // full warp.
  Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, n,
                                        indexConst(b, e.spec.n));
  scf::IfOp::create(b, inRange, [&](OpBuilder &nested, Location loc) {
    ImplicitLocOpBuilder ib(loc, nested);
    SmallVector<Value> acc = e.emitLanePartials(ib, args, n, split, lane);
    for (int32_t offset = kWarpSize / 2; offset > 0; offset /= 2)
      for (Value &v : acc) {
        auto shuffle = gpu::ShuffleOp::create(ib, v, offset,
                                              static_cast<int32_t>(kWarpSize),
                                              gpu::ShuffleMode::XOR);
        v = arith::AddFOp::create(ib, v, shuffle.getShuffleResult());
      }
    Value lane0 =
        arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, lane, indexConst(ib, 0));
    scf::IfOp::create(ib, lane0, [&](OpBuilder &inner, Location innerLoc) {
      ImplicitLocOpBuilder sb(innerLoc, inner);
      e.emitStore(sb, args, n, acc);
      scf::YieldOp::create(sb);
    });
    scf::YieldOp::create(ib);
  });
  gpu::ReturnOp::create(b);
}

/// The same kernel on the CPU: blocks, splits, warps and lanes become loops;
/// the shuffle butterfly is replayed on a [32, T] lane array, so lane 0 adds
/// exactly the values, in exactly the order, that it adds on the GPU.
void buildHost(ModuleOp module, const DecodeGemvEmitter &e) {
  MLIRContext *ctx = module.getContext();
  ImplicitLocOpBuilder b(module.getLoc(), ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(
      b, e.spec.name(), FunctionType::get(ctx, e.argumentTypes(ctx), {}));
  fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  b.setInsertionPointToStart(fn.addEntryBlock());
  ValueRange args = fn.getArguments();
  const int64_t rows = e.spec.rows;
  auto laneTy = MemRefType::get({kWarpSize, rows}, e.f32);
  Value lanes = memref::AllocaOp::create(b, laneTy);
  Value swap = memref::AllocaOp::create(b, laneTy);
  Value c0 = indexConst(b, 0);
  const int64_t blocks =
      (e.spec.n + kDecodeWarpsPerBlock - 1) / kDecodeWarpsPerBlock;

  auto forLoop = [&](ImplicitLocOpBuilder &ob, int64_t count,
                     function_ref<void(ImplicitLocOpBuilder &, Value)> body) {
    scf::ForOp::create(ob, indexConst(ob, 0), indexConst(ob, count),
                       indexConst(ob, 1), ValueRange{},
                       [&](OpBuilder &nested, Location loc, Value iv,
                           ValueRange) {
                         ImplicitLocOpBuilder ib(loc, nested);
                         body(ib, iv);
                         scf::YieldOp::create(ib);
                       });
  };
  forLoop(b, blocks, [&](ImplicitLocOpBuilder &bb, Value block) {
    forLoop(bb, e.spec.splitK, [&](ImplicitLocOpBuilder &sb, Value split) {
      forLoop(sb, kDecodeWarpsPerBlock, [&](ImplicitLocOpBuilder &wb,
                                            Value warp) {
        Value n = arith::AddIOp::create(
            wb,
            arith::MulIOp::create(wb, block,
                                  indexConst(wb, kDecodeWarpsPerBlock)),
            warp);
        Value inRange = arith::CmpIOp::create(wb, arith::CmpIPredicate::ult, n,
                                              indexConst(wb, e.spec.n));
        scf::IfOp::create(wb, inRange, [&](OpBuilder &nested, Location loc) {
          ImplicitLocOpBuilder ib(loc, nested);
          forLoop(ib, kWarpSize, [&](ImplicitLocOpBuilder &lb, Value lane) {
            SmallVector<Value> acc = e.emitLanePartials(lb, args, n, split, lane);
            for (int64_t t = 0; t < rows; ++t)
              memref::StoreOp::create(lb, acc[t], lanes,
                                      ValueRange{lane, indexConst(lb, t)});
          });
          for (int64_t offset = kWarpSize / 2; offset > 0; offset /= 2) {
            forLoop(ib, kWarpSize, [&](ImplicitLocOpBuilder &lb, Value lane) {
              Value partner =
                  arith::XOrIOp::create(lb, lane, indexConst(lb, offset));
              for (int64_t t = 0; t < rows; ++t) {
                Value tt = indexConst(lb, t);
                Value mineV =
                    memref::LoadOp::create(lb, lanes, ValueRange{lane, tt});
                Value theirs =
                    memref::LoadOp::create(lb, lanes, ValueRange{partner, tt});
                memref::StoreOp::create(lb,
                                        arith::AddFOp::create(lb, mineV, theirs),
                                        swap, ValueRange{lane, tt});
              }
            });
            memref::CopyOp::create(ib, swap, lanes);
          }
          SmallVector<Value> result;
          for (int64_t t = 0; t < rows; ++t)
            result.push_back(memref::LoadOp::create(
                ib, lanes, ValueRange{c0, indexConst(ib, t)}));
          e.emitStore(ib, args, n, result);
          scf::YieldOp::create(ib);
        });
      });
    });
  });
  func::ReturnOp::create(b);
}

} // namespace

KernelLaunch decodeGemvLaunch(const QuantKernelSpec &spec) {
  return {{(spec.n + kDecodeWarpsPerBlock - 1) / kDecodeWarpsPerBlock,
           spec.splitK, 1},
          {kDecodeWarpsPerBlock * kWarpSize, 1, 1}};
}

LogicalResult buildDecodeGemvKernel(ModuleOp module,
                                    const QuantKernelSpec &spec,
                                    KernelTarget target) {
  if (spec.family != KernelFamily::DecodeGemv)
    return module.emitError("decode GEMV builder given a ")
           << "prefill spec '" << spec.name() << "'";
  if (Status status = validateQuantKernelSpec(spec); !status)
    return module.emitError("kernel '")
           << spec.name() << "': " << status.message();
  if (module.lookupSymbol(spec.name()))
    return module.emitError("kernel '") << spec.name() << "' already exists";
  DecodeGemvEmitter emitter(spec, module.getContext());
  if (target == KernelTarget::NVPTX)
    buildNVPTX(module, emitter);
  else
    buildHost(module, emitter);
  return success();
}

} // namespace qtensor
