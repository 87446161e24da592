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
//    the subtraction that the conversion needs anyway; codes that index a
//    codebook (IQ4_NL, NF4) become its values through a chain of
//    compare-and-selects in registers (CodebookLookup.h);
//  - a chunk never crosses a group (G is a multiple of the chunk), so its
//    dot product with X is scaled once: acc += s * dot (one fma), in f32;
//    a nested descriptor's scale (and min) is decoded there from the
//    levels as stored, s = s2 * code (NestedQParams.h);
//    with groups shorter than a chunk (NVFP4's 16 under 32 W4 codes, no
//    zero-points) each group's lanes are summed and scaled on their own;
//  - the K tail (K not a multiple of the chunk) is read with a masked load
//    of X; padded codes are zero and their X lanes are masked to 0;
//  - lanes combine with a gpu.shuffle xor butterfly; lane 0 adds the bias,
//    rounds to the output dtype and stores, or adds atomically into an f32
//    y when K is split;
//  - T is static, or dynamic with one entry point per T bucket (1, 2, 4, 8,
//    16 rows): the accumulators are registers, so a bucket is unrolled over
//    its rows; rows of a bucket past T re-read row T - 1 (in bounds) and
//    are not stored. Separate entries keep T = 1 at its own register count
//    instead of the T = 16 body's.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Conversion/KernelBuilders.h"

#include "CodebookLookup.h"
#include "KernelTypes.h"
#include "NestedQParams.h"
#include "WarpRowKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <memory>
#include <tuple>

using namespace mlir;

namespace qtensor {

namespace {

/// The rows one entry point computes: `count` accumulators per lane. Rows
/// from `firstGuarded` on exist only when T is larger (dynamic-T buckets);
/// a static entry has firstGuarded == count.
struct EntryRows {
  int64_t count;
  int64_t firstGuarded;
};

/// The T buckets of a dynamic-T kernel: [1], [2], [3, 4], [5, 8], [9, 16].
constexpr int64_t kBucketMax[] = {1, 2, 4, 8, 16};

using conversion::elementType;
using conversion::indexConst;

/// The builder state shared by the NVPTX and host wrappers.
class DecodeGemvEmitter : public conversion::ChunkGeometry {
public:
  explicit DecodeGemvEmitter(const QuantKernelSpec &spec, MLIRContext *ctx)
      : ChunkGeometry(spec), spec(spec), f32(Float32Type::get(ctx)),
        act(elementType(ctx, spec.activation)),
        scale(elementType(ctx, spec.scaleType())),
        out(elementType(ctx, spec.output)),
        chunksPerSplit((chunks + spec.splitK - 1) / spec.splitK), slots(spec) {}

  /// x, w, s, [s2], [z], [z2], [b], y; T is `?` for a dynamic-T spec.
  SmallVector<Type> argumentTypes(MLIRContext *ctx) const {
    const int64_t t = spec.dynamicRows() ? ShapedType::kDynamic : spec.rows;
    const int64_t n = spec.n, k = spec.k;
    SmallVector<Type> types = {
        MemRefType::get({t, k}, act),
        MemRefType::get({n, 4 * chunks}, IntegerType::get(ctx, 32))};
    llvm::append_range(types,
                       conversion::qparamArgumentTypes(ctx, spec, scale));
    if (spec.bias)
      types.push_back(MemRefType::get({n}, out));
    types.push_back(MemRefType::get({t, n}, out));
    return types;
  }

  /// What one entry's body works on: its arguments, rows, the X row each
  /// accumulator reads and, for dynamic T, T itself.
  struct Body {
    ValueRange args;
    EntryRows rows;
    SmallVector<Value> xRows;
    Value tokens;
  };

  /// Row t of a bucket reads X row min(t, T - 1): in bounds, and its result
  /// is dropped when t >= T. Call where T is known to be in the entry's range.
  Body makeBody(ImplicitLocOpBuilder &b, ValueRange args, EntryRows rows,
                Value tokens) const {
    Body body{args, rows, {}, tokens};
    Value last =
        tokens ? arith::SubIOp::create(b, tokens, indexConst(b, 1)) : Value();
    for (int64_t t = 0; t < rows.count; ++t)
      body.xRows.push_back(
          t < rows.firstGuarded
              ? indexConst(b, t)
              : Value(arith::MinUIOp::create(b, indexConst(b, t), last)));
    return body;
  }

  /// The partial sums lane `lane` holds for output feature `n` and K split
  /// `split` before the warp reduction, one per row.
  SmallVector<Value> emitLanePartials(ImplicitLocOpBuilder &b, const Body &body,
                                      Value n, Value split, Value lane) const;

  /// y[t, n] = round(value + b[n]), or y[t, n] += value (+ b[n] in split 0)
  /// when K is split; rows past T are skipped.
  void emitStore(ImplicitLocOpBuilder &b, const Body &body, Value n,
                 Value split, ArrayRef<Value> values) const;

  const QuantKernelSpec &spec;
  Type f32, act, scale, out;
  int64_t chunksPerSplit;
  conversion::LinearArgSlots slots;

private:
  Value zeroPoints(ValueRange args) const { return slots.at(args, slots.z); }
  Value bias(ValueRange args) const { return slots.at(args, slots.bias); }

  /// Group `group`'s scale and min in f32: loaded, or decoded from the
  /// nested levels as stored.
  Value emitScale(ImplicitLocOpBuilder &b, ValueRange args, Value n,
                  Value group) const;
  Value emitMin(ImplicitLocOpBuilder &b, ValueRange args, Value n,
                Value group) const;

  /// q - z of a chunk's fields (vector<chunk x i32>) as f32, exactly:
  /// the magic-number conversion with z (or the offset-binary bias)
  /// subtracted.
  Value emitMagicDequant(ImplicitLocOpBuilder &b, Value fields, Value z,
                         Value n, Value group) const;
  /// acc[t] += s * dot(X[row t, chunk c], q - z) for one chunk (with a
  /// codebook, table[q] instead of q - z).
  SmallVector<Value> emitChunk(ImplicitLocOpBuilder &b, const Body &body,
                               Value n, Value c, ValueRange acc,
                               bool isTail) const;
};

Value DecodeGemvEmitter::emitMagicDequant(ImplicitLocOpBuilder &b, Value fields,
                                          Value z, Value n, Value group) const {
  Type i32 = b.getI32Type();
  auto fieldsTy = cast<VectorType>(fields.getType());
  auto valuesTy = fieldsTy.clone(f32);
  // 0x4B000000 | f is the f32 2^23 + f exactly (f < 2^23).
  Value magic = arith::OrIOp::create(
      b, fields,
      arith::ConstantOp::create(
          b,
          SplatElementsAttr::get(fieldsTy, b.getI32IntegerAttr(0x4B000000))));
  Value biased = vector::BitCastOp::create(b, valuesTy, magic);
  Value offset;
  const double twoTo23 = 8388608.0;
  if (spec.symmetric) {
    // Signed codes are stored offset binary: field = q + 2^(b-1).
    offset = arith::ConstantOp::create(
        b, b.getF32FloatAttr(twoTo23 + double(1 << (spec.bits - 1))));
  } else if (spec.minZero) {
    // x = s * q + m: the code itself; the min is added after scaling.
    offset = arith::ConstantOp::create(b, b.getF32FloatAttr(twoTo23));
  } else {
    Value zp = memref::LoadOp::create(b, z, ValueRange{n, group});
    zp = arith::ExtUIOp::create(b, i32, zp);
    zp = arith::UIToFPOp::create(b, f32, zp);
    offset = arith::AddFOp::create(
        b, zp, arith::ConstantOp::create(b, b.getF32FloatAttr(twoTo23)));
  }
  return arith::SubFOp::create(
      b, biased, vector::BroadcastOp::create(b, valuesTy, offset));
}

Value DecodeGemvEmitter::emitScale(ImplicitLocOpBuilder &b, ValueRange args,
                                   Value n, Value group) const {
  Value s = args[slots.s];
  if (spec.nested)
    return conversion::emitNestedScale(b, spec, s, args[slots.s2], n, group);
  Value v = memref::LoadOp::create(b, s, ValueRange{n, group});
  return scale == f32 ? v : Value(arith::ExtFOp::create(b, f32, v));
}

Value DecodeGemvEmitter::emitMin(ImplicitLocOpBuilder &b, ValueRange args,
                                 Value n, Value group) const {
  Value z = args[slots.z];
  if (spec.nested)
    return conversion::emitNestedMin(b, spec, z, args[slots.z2], n, group);
  Value v = memref::LoadOp::create(b, z, ValueRange{n, group});
  return scale == f32 ? v : Value(arith::ExtFOp::create(b, f32, v));
}

SmallVector<Value> DecodeGemvEmitter::emitChunk(ImplicitLocOpBuilder &b,
                                                const Body &body, Value n,
                                                Value c, ValueRange acc,
                                                bool isTail) const {
  MLIRContext *ctx = b.getContext();
  ValueRange args = body.args;
  Value x = args[0], w = args[1];
  Value z = zeroPoints(args);
  Type i32 = IntegerType::get(ctx, 32);
  auto wordsTy = VectorType::get({4}, i32);
  auto fieldsTy = VectorType::get({chunk}, i32);
  auto valuesTy = VectorType::get({chunk}, f32);
  // 2-, 3-, 5- and 6-bit codes sit one per byte field (KernelSpec.h).
  const int64_t fieldBits = spec.fieldBits(), perWord = 32 / fieldBits;

  // One 128-bit load of the chunk's four words.
  Value word0 = arith::MulIOp::create(b, c, indexConst(b, 4));
  Value words =
      vector::LoadOp::create(b, wordsTy, w, ValueRange{n, word0},
                             /*nontemporal=*/false, llvm::MaybeAlign(16));
  // Field j of the chunk is bits [b * (j % perWord), ...) of word j / perWord.
  SmallVector<int64_t> spread;
  SmallVector<int32_t> shifts;
  for (int64_t j = 0; j < chunk; ++j) {
    spread.push_back(j / perWord);
    shifts.push_back(static_cast<int32_t>((j % perWord) * fieldBits));
  }
  Value fields = vector::ShuffleOp::create(b, words, words, spread);
  fields = arith::ShRUIOp::create(
      b, fields,
      arith::ConstantOp::create(b,
                                DenseIntElementsAttr::get(fieldsTy, shifts)));
  const int32_t mask = (1 << spec.bits) - 1;
  fields = arith::AndIOp::create(
      b, fields,
      arith::ConstantOp::create(
          b, SplatElementsAttr::get(fieldsTy, b.getI32IntegerAttr(mask))));
  // First group of this chunk: G is a multiple of the chunk (one group per
  // chunk), or groupsPerChunk groups of G lanes each share it.
  Value k0 = arith::MulIOp::create(b, c, indexConst(b, chunk));
  Value group =
      arith::DivUIOp::create(b, k0, indexConst(b, spec.effectiveGroupSize()));
  Value dequant = spec.codebook != Codebook::None
                      ? conversion::emitCodebookLookup(b, fields, spec.codebook)
                      : emitMagicDequant(b, fields, z, n, group);
  // The scales of the chunk's groups (one unless groups are shorter than a
  // chunk; none past K in the tail chunk), in f32.
  const int64_t groupLanes = chunk / groupsPerChunk;
  SmallVector<Value> scaleValues;
  for (int64_t i = 0; i < groupsPerChunk; ++i) {
    if (isTail && i * groupLanes >= tail)
      break;
    scaleValues.push_back(emitScale(
        b, args, n,
        i == 0 ? group
               : Value(arith::AddIOp::create(b, group, indexConst(b, i)))));
  }
  if (spec.minZero) {
    // Each lane decoded to s * q + m (one fma, rounded once) and then
    // multiplied into X, as the host GEMM does: every term stays
    // x * w_hat, so the order-free bound on |x w_hat| holds (s * sum(x q)
    // + m * sum(x) could cancel far below it). Admission keeps a min's
    // group a whole chunk.
    Value m = emitMin(b, args, n, group);
    dequant = vector::FMAOp::create(
        b, dequant, vector::BroadcastOp::create(b, valuesTy, scaleValues[0]),
        vector::BroadcastOp::create(b, valuesTy, m));
  }

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
  SmallVector<Value> result;
  for (int64_t t = 0; t < body.rows.count; ++t) {
    SmallVector<Value, 2> at{body.xRows[t], k0};
    Value xs =
        isTail ? Value(vector::MaskedLoadOp::create(b, xTy, x, at, tailMask,
                                                    zeros, xAlign))
               : Value(vector::LoadOp::create(b, xTy, x, at,
                                              /*nontemporal=*/false, xAlign));
    Value xf = arith::ExtFOp::create(b, valuesTy, xs);
    Value products = arith::MulFOp::create(b, xf, dequant);
    Value sum = acc[t];
    for (size_t i = 0; i < scaleValues.size(); ++i) {
      // A group's lanes as a shuffle (lowered to LLVM's shufflevector on
      // both targets, which extract_strided_slice is not).
      SmallVector<int64_t> mine;
      for (int64_t j = 0; j < groupLanes; ++j)
        mine.push_back(int64_t(i) * groupLanes + j);
      Value lanes =
          groupsPerChunk == 1
              ? products
              : Value(vector::ShuffleOp::create(b, products, products, mine));
      // Ordered sum: the host and the GPU add in the same order.
      Value dot =
          vector::ReductionOp::create(b, vector::CombiningKind::ADD, lanes);
      if (spec.minZero) { // already scaled, lane by lane
        sum = arith::AddFOp::create(b, dot, sum);
        continue;
      }
      // mul + add marked `contract`: NVPTX emits one fma.rn.f32 (math.fma
      // would become a libdevice call that ptxas cannot resolve).
      auto contract = arith::FastMathFlags::contract;
      Value scaled = arith::MulFOp::create(b, scaleValues[i], dot, contract);
      sum = arith::AddFOp::create(b, scaled, sum, contract);
    }
    result.push_back(sum);
  }
  return result;
}

SmallVector<Value> DecodeGemvEmitter::emitLanePartials(ImplicitLocOpBuilder &b,
                                                       const Body &body,
                                                       Value n, Value split,
                                                       Value lane) const {
  Value zero = arith::ConstantOp::create(b, b.getF32FloatAttr(0.0));
  SmallVector<Value> init(body.rows.count, zero);
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
        scf::YieldOp::create(ib, emitChunk(ib, body, n, c, acc, false));
      });
  SmallVector<Value> acc(loop.getResults());
  if (tail == 0)
    return acc;

  // The partial last chunk belongs to one lane of one split.
  Value tailChunk = indexConst(b, fullChunks);
  Value inSplit = arith::AndIOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::uge, tailChunk, begin),
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, tailChunk, end));
  Value owner = arith::RemUIOp::create(
      b, arith::SubIOp::create(b, tailChunk, begin), indexConst(b, kWarpSize));
  Value mine = arith::AndIOp::create(
      b, inSplit,
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, owner, lane));
  auto ifOp = scf::IfOp::create(
      b, mine,
      [&](OpBuilder &nested, Location loc) {
        ImplicitLocOpBuilder ib(loc, nested);
        scf::YieldOp::create(ib, emitChunk(ib, body, n, tailChunk, acc, true));
      },
      [&](OpBuilder &nested, Location loc) {
        scf::YieldOp::create(nested, loc, acc);
      });
  return SmallVector<Value>(ifOp.getResults());
}

void DecodeGemvEmitter::emitStore(ImplicitLocOpBuilder &b, const Body &body,
                                  Value n, Value split,
                                  ArrayRef<Value> values) const {
  Value y = body.args.back();
  Value biasValue;
  if (Value bv = bias(body.args)) {
    biasValue = memref::LoadOp::create(b, bv, ValueRange{n});
    if (out != f32)
      biasValue = arith::ExtFOp::create(b, f32, biasValue);
    // Split partial sums are added into y: the bias comes from split 0 only.
    if (spec.splitK > 1)
      biasValue = arith::SelectOp::create(
          b,
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, split,
                                indexConst(b, 0)),
          biasValue, arith::ConstantOp::create(b, b.getF32FloatAttr(0.0)));
  }
  for (int64_t t = 0; t < body.rows.count; ++t) {
    auto store = [&, t](ImplicitLocOpBuilder &sb) {
      Value v = values[t];
      if (biasValue)
        v = arith::AddFOp::create(sb, v, biasValue);
      SmallVector<Value, 2> at{indexConst(sb, t), n};
      if (spec.splitK > 1) {
        memref::AtomicRMWOp::create(sb, arith::AtomicRMWKind::addf, v, y, at);
        return;
      }
      if (out != f32)
        v = arith::TruncFOp::create(sb, out, v);
      memref::StoreOp::create(sb, v, y, at);
    };
    if (t < body.rows.firstGuarded) {
      store(b);
      continue;
    }
    Value exists = arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                         indexConst(b, t), body.tokens);
    scf::IfOp::create(b, exists, [&](OpBuilder &nested, Location loc) {
      ImplicitLocOpBuilder sb(loc, nested);
      store(sb);
      scf::YieldOp::create(sb);
    });
  }
}

/// One entry point: its symbol, rows, and the T range it serves.
struct Entry {
  std::string symbol;
  EntryRows rows;
  int64_t minT, maxT;
};

SmallVector<Entry> entriesOf(const QuantKernelSpec &spec) {
  if (!spec.dynamicRows())
    return {{spec.name(), {spec.rows, spec.rows}, spec.rows, spec.rows}};
  SmallVector<Entry> entries;
  int64_t minT = 1;
  for (int64_t maxT : kBucketMax) {
    entries.push_back(
        {spec.name() + "_t" + std::to_string(maxT), {maxT, minT}, minT, maxT});
    minT = maxT + 1;
  }
  return entries;
}

/// For a dynamic-T entry: T = dim(x, 0) and whether it is in [minT, maxT]
/// (one unsigned compare: T - minT wraps below minT). Null for static T.
std::pair<Value, Value> tokensInRange(ImplicitLocOpBuilder &b, ValueRange args,
                                      const Entry &entry, bool dynamic) {
  if (!dynamic)
    return {Value(), Value()};
  Value tokens = memref::DimOp::create(b, args[0], 0);
  Value inRange = arith::CmpIOp::create(
      b, arith::CmpIPredicate::ule,
      arith::SubIOp::create(b, tokens, indexConst(b, entry.minT)),
      indexConst(b, entry.maxT - entry.minT));
  return {tokens, inRange};
}

/// The entry as a warp-per-row kernel (WarpRowKernel.h): for dynamic T it
/// runs only with T in the entry's bucket.
conversion::WarpRowEntry
warpRowEntry(MLIRContext *ctx, const DecodeGemvEmitter &e, const Entry &entry) {
  // Set by the guard, which runs first, and read by the body.
  auto tokens = std::make_shared<Value>();
  conversion::WarpRowEntry w;
  w.symbol = entry.symbol;
  w.argumentTypes = e.argumentTypes(ctx);
  w.outputRows = e.spec.n;
  w.splits = e.spec.splitK;
  w.accumulators = entry.rows.count;
  w.guard = [&e, entry, tokens](ImplicitLocOpBuilder &b, ValueRange args) {
    Value inRange;
    std::tie(*tokens, inRange) =
        tokensInRange(b, args, entry, e.spec.dynamicRows());
    return inRange;
  };
  w.body = [&e, entry, tokens](ImplicitLocOpBuilder &b, ValueRange args) {
    DecodeGemvEmitter::Body body = e.makeBody(b, args, entry.rows, *tokens);
    conversion::WarpRowBody callbacks;
    callbacks.partials = [&e, body](ImplicitLocOpBuilder &ib, Value n,
                                    Value split, Value lane) {
      return e.emitLanePartials(ib, body, n, split, lane);
    };
    callbacks.store = [&e, body](ImplicitLocOpBuilder &ib, Value n, Value split,
                                 ArrayRef<Value> values) {
      e.emitStore(ib, body, n, split, values);
    };
    return callbacks;
  };
  return w;
}

void buildNVPTX(ModuleOp module, const DecodeGemvEmitter &e) {
  MLIRContext *ctx = module.getContext();
  ImplicitLocOpBuilder b(module.getLoc(), ctx);
  b.setInsertionPointToEnd(module.getBody());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  auto gpuModule = gpu::GPUModuleOp::create(b, e.spec.name());
  b.setInsertionPointToStart(gpuModule.getBody());
  for (const Entry &entry : entriesOf(e.spec))
    conversion::buildWarpRowNVPTXEntry(b, warpRowEntry(ctx, e, entry));
}

void buildHost(ModuleOp module, const DecodeGemvEmitter &e) {
  ImplicitLocOpBuilder b(module.getLoc(), module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  for (const Entry &entry : entriesOf(e.spec))
    conversion::buildWarpRowHostEntry(
        b, warpRowEntry(module.getContext(), e, entry));
}

} // namespace

KernelAbi decodeGemvAbi(const QuantKernelSpec &spec) {
  KernelAbi abi;
  for (const Entry &entry : entriesOf(spec))
    abi.entries.push_back({entry.symbol, entry.minT, entry.maxT});
  abi.launch.grid = {(spec.n + kDecodeWarpsPerBlock - 1) / kDecodeWarpsPerBlock,
                     spec.splitK, 1};
  abi.launch.block = {kDecodeWarpsPerBlock * kWarpSize, 1, 1};
  abi.zeroOutput = spec.splitK > 1;
  return abi;
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
  for (const Entry &entry : entriesOf(spec))
    if (module.lookupSymbol(entry.symbol))
      return module.emitError("kernel entry '")
             << entry.symbol << "' already exists";
  DecodeGemvEmitter emitter(spec, module.getContext());
  if (target == KernelTarget::NVPTX)
    buildNVPTX(module, emitter);
  else
    buildHost(module, emitter);
  return success();
}

} // namespace qtensor
