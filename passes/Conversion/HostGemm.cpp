//===- HostGemm.cpp - The CPU's own W4A16 / W8A16 GEMV and GEMM -----------===//
//
// Y[t, n] = sum_k X[t, k] * s[n, k / G] * (q[n, k] - z[n, k / G]) for any T
// (or, with a min zero-point, sum_k X[t, k] * (s[n, k / G] q[n, k] +
// m[n, k / G]): ggml Q4_1, Q5_1, Q4_K, Q5_K; with a codebook,
// s[n, k / G] table[q[n, k]]: ggml IQ4_NL, NF4),
// built for the CPU rather than replaying a GPU kernel (the host twins do
// that, as parity oracles). It reads the decode_gemv layout, so a host
// artifact keeps one packed copy for decode and prefill:
//
//  - one output row n at a time; a row is whole 16-byte chunks (32 W4 or
//    16 byte codes: W5, W6, W8), each one `vector.load` of vector<4xi32>
//    viewed as 16 bytes, W4 nibbles split with byte ops; signed codes
//    (no zero-point) take q = field - 2^(b-1) in bytes and one signed
//    conversion per lane, codes with a min their field unsigned, codes
//    with zero-points are widened to i32, OR-ed into the exponent of 2^23
//    and bit-cast (the GEMV's magic-number conversion: q - z exactly); a
//    codebook's codes become its table's values through a tree of selects;
//  - scales f16, bf16 or f32 (the exact products of ggml K-quants' two
//    scale levels), or with nested scales (spec.nested) the two levels as
//    stored, one byte code per group under a 16-bit value per super-group,
//    decoded into f32 stack rows before each row is read (the same exact
//    products); with a min zero-point m every chunk is decoded to
//    s * q + m with one fma before it meets X;
//  - T = 1 (decode): X is widened to f32 once into a stack row, W4 chunks
//    stored in nibble order (the even codes' X, then the odd ones'), so
//    the codes need no interleaving; each chunk is multiplied into it with
//    `vector.fma`, the group's sum scaled once per group;
//  - T = 1 with int8 activations (spec.quantizedActivations; signed codes,
//    or unsigned codes of at most 7 bits with an integer zero-point or a
//    min): X quantized once per call per 32 (Numerics/ActivationQuant.h)
//    into a stack row of bytes and scales; each chunk's codes and
//    activations sign-extended and multiplied, adjacent products summed
//    in i32 (x86: pmovsxbw, pmaddwd), converted once and scaled by the
//    block's activation scale, then by the group's weight scale (groups
//    are whole chunks), two chunks an iteration into two accumulators.
//    Built for x86-64-v3 or v4, codes meet X in AVX2's u8 x s8 pair
//    multiply (vpmaddubsw; vpmaddwd sums the pairs' pairs): codes
//    of at most 7 bits as their unsigned fields, the offset 2^(b-1) (or the
//    group's integer zero-point z) coming off per four activations as a
//    correction computed with X's codes;
//    8-bit codes as |q| times x with q's sign (vpsignb); built for
//    x86-64-v4-vnni, one vpdpbusd sums the same products four to an i32
//    lane, starting from the offsets' correction. Byte codes in
//    groups of 32 or more go two 16-byte chunks a multiply. With a min
//    (ggml Q4_1, Q4_K, Q5_K, Q2_K), sum x (s q + m) = s sum x q + m sum x:
//    the fields meet X's codes as integers and m meets X's dequantized
//    sums per four codes, computed once per call, in a second accumulator.
//    Integer sums are exact, so the error bound is the f32 one on the
//    quantized X, scaled with a min by |s q| + |m| rather than |s q + m|
//    (Runtime/Reference.h);
//  - T > 1 built for x86-64-v4-amx, the int8 forms in groups of 16 or
//    whole 32s (Kernels/HostInt8Tiles.h): X quantized per 32 as at T = 1,
//    into the layout of a tile's second operand, weight rows' codes as
//    bytes 16 rows at a time, one tdpbssd (tdpbusd for unsigned fields)
//    per 16 rows x 16 tokens x 32 (or 16) codes, each exact sum (less z
//    times X's step sums with a zero-point) scaled by the tokens' block
//    scales and the row's group scale, a min meeting X's sums per step
//    (emitInt8Tiles);
//  - T > 1: two weight rows at a time (four at x86-64-v4) are decoded
//    into stack buffers as s * (q - z) in f32 (0 past K), then dotted with
//    four rows of X at a time, 8 lanes per step (16 at x86-64-v4): eight
//    (sixteen) independent accumulators, each X chunk loaded once for the
//    whole block (the last rows go alone); rows longer than kMaxRowBuffer
//    codes take the T = 1 path per row instead. The kernel never
//    allocates from the heap;
//  - every chunk read prefetches the same chunk of the next row (LLVM's
//    prefetch, locality 3): streaming a row of a few KiB takes about as
//    long as a miss to memory, which the hardware prefetcher left exposed;
//    with int8 activations a row's 16-bit scales are widened to f32 once
//    per row, so each term broadcasts its scale from memory;
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

#include "CodebookLookup.h"
#include "KernelTypes.h"
#include "RowDots.h"

#include "qtensor/Kernels/HostInt8Tiles.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <algorithm>

using namespace mlir;

namespace qtensor {

namespace {

/// Rows of X that share one load of the decoded weight row.
constexpr int64_t kRowBlock = 4;
/// The longest weight row (in codes) decoded into a stack buffer: at most
/// five rows of 128 KiB of f32 (four weight rows at x86-64-v4, X's row),
/// well inside a thread's stack.
constexpr int64_t kMaxRowBuffer = 32768;
static_assert(kMaxQuantizedActivationRow <= kMaxRowBuffer,
              "int8 activations rely on the T > 1 path's row buffers");
/// Rows of at most this many super-groups decode their nested scales in
/// straight-line code.
constexpr int64_t kUnrolledSuperGroups = 32;

using conversion::elementType;
using conversion::indexConst;

/// for (iv = from; iv < to; iv += step) body(iv), with no loop-carried
/// values.
void emitForLoop(ImplicitLocOpBuilder &b, Value from, Value to, int64_t step,
                 function_ref<void(ImplicitLocOpBuilder &, Value)> body) {
  scf::ForOp::create(
      b, from, to, indexConst(b, step), ValueRange{},
      [&](OpBuilder &nested, Location loc, Value iv, ValueRange) {
        ImplicitLocOpBuilder ib(loc, nested);
        body(ib, iv);
        scf::YieldOp::create(ib);
      });
}

class HostGemmEmitter : conversion::ChunkGeometry {
public:
  HostGemmEmitter(const QuantKernelSpec &spec, HostCpuLevel cpu,
                  MLIRContext *ctx)
      : ChunkGeometry(spec), spec(spec), cpu(cpu), f32(Float32Type::get(ctx)),
        act(elementType(ctx, spec.activation)),
        scale(elementType(ctx, spec.scaleType())),
        out(elementType(ctx, spec.output)) {}

  /// x, w, s, [s2], [z], [z2], [b], y: N (the rows of the slice) is
  /// dynamic everywhere and y's row stride is the whole output's. Nested
  /// scales: s (and a min's z) are one-byte codes, s2 (z2) the second level.
  SmallVector<Type> argumentTypes(MLIRContext *ctx) const {
    const int64_t dyn = ShapedType::kDynamic;
    const int64_t t = spec.dynamicRows() ? dyn : spec.rows;
    const int64_t g = spec.groupsPerRow();
    Type i8 = IntegerType::get(ctx, 8);
    Type firstLevel = spec.nested ? i8 : scale;
    Type secondLevel =
        spec.nested ? elementType(ctx, spec.nested->superType) : Type();
    const int64_t supers = spec.superGroupsPerRow();
    SmallVector<Type> types = {
        MemRefType::get({t, spec.k}, act),
        MemRefType::get({dyn, 4 * chunks}, IntegerType::get(ctx, 32)),
        MemRefType::get({dyn, g}, firstLevel)};
    if (spec.nested)
      types.push_back(MemRefType::get({dyn, supers}, secondLevel));
    if (spec.minZero) {
      types.push_back(MemRefType::get({dyn, g}, firstLevel));
      if (spec.nested)
        types.push_back(MemRefType::get({dyn, supers}, secondLevel));
    } else if (spec.takesZeroPoints()) {
      types.push_back(MemRefType::get({dyn, g}, i8));
    }
    if (spec.bias)
      types.push_back(MemRefType::get({dyn}, out));
    types.push_back(MemRefType::get(
        {t, dyn}, out, StridedLayoutAttr::get(ctx, /*offset=*/0, {dyn, 1})));
    return types;
  }

  void emitBody(ImplicitLocOpBuilder &b, ValueRange args);

private:
  /// The arguments after w, in argumentTypes' order (none where absent).
  struct QParamArgs {
    Value scales, superScales, zeroPoints, superMins, bias;
  };
  QParamArgs qparamArgs(ValueRange args) const {
    QParamArgs a;
    size_t i = 2;
    a.scales = args[i++];
    if (spec.nested)
      a.superScales = args[i++];
    if (spec.takesZeroPoints())
      a.zeroPoints = args[i++];
    if (spec.nested && spec.minZero)
      a.superMins = args[i++];
    if (spec.bias)
      a.bias = args[i++];
    return a;
  }
  Value zeroPoints(ValueRange args) const {
    return qparamArgs(args).zeroPoints;
  }
  Value bias(ValueRange args) const { return qparamArgs(args).bias; }
  /// Whether each row's scales (and mins) are decoded into f32 stack
  /// buffers (`widened`) before the row is read: nested scales, decoded in
  /// the kernel once per row rather than per use; 16-bit scales with int8
  /// activations, so that each term broadcasts them from memory (a load,
  /// not a shuffle: x86's shuffle port is the one the nibble split and a
  /// scalar conversion and broadcast would share).
  bool widensRowQParams() const {
    return spec.nested || (spec.quantizedActivations && scale != f32);
  }

  /// The groups of a row as runs of chunks: [first, last) chunks of group
  /// `g` for the `fullGroups` whole groups, then the rest (the short last
  /// group, the partial tail chunk included) as group `fullGroups`.
  int64_t chunksPerGroup() const {
    return spec.groupSize == 0  ? chunks
           : groupsPerChunk > 1 ? 1 // a "group" below is then one chunk
                                : spec.groupSize / chunk;
  }
  int64_t fullGroups() const {
    return spec.groupSize == 0 ? 0 : fullChunks / chunksPerGroup();
  }
  bool hasRestGroup() const { return fullGroups() * chunksPerGroup() < chunks; }

  /// 2^23 + z for row n, group g (2^23 + 2^(b-1) for symmetric codes, 2^23
  /// for codes with a min or a codebook).
  Value emitOffset(ImplicitLocOpBuilder &b, ValueRange args, Value n,
                   Value g) const;
  /// The scale of row n, group g, in f32 (from `widened` where rows are
  /// widened: emitWidenRowQParams must have run for row n).
  Value emitScale(ImplicitLocOpBuilder &b, ValueRange args, Value n,
                  Value g) const;
  /// Every lane's scale for emitGroups' group g of row n: its scale
  /// broadcast, or with groups shorter than a chunk (g is then a chunk)
  /// each lane its own group's; lanes past the tail chunk's last group 0.
  /// `split`: the lanes are in nibble order (codeOfLane).
  Value emitLaneScales(ImplicitLocOpBuilder &b, ValueRange args, Value n,
                       Value g, bool withTail, bool split) const;
  /// The min of row n, group g, in f32 (minZero only).
  Value emitMin(ImplicitLocOpBuilder &b, ValueRange args, Value n,
                Value g) const;
  /// A stored qparam of row n, group g, widened to f32.
  Value emitQParam(ImplicitLocOpBuilder &b, Value qparams, Value n,
                   Value g) const;
  /// q - z of chunk c of row n as vector<chunk x f32> (exact); with a
  /// codebook, table[q] (`offset` unused). `split` (W4 only): the lanes in
  /// nibble order, the low nibbles' codes then the high ones' (codeOfLane),
  /// which saves interleaving them back when X is stored in that order.
  Value emitCodes(ImplicitLocOpBuilder &b, ValueRange args, Value n, Value c,
                  Value offset, bool split = false) const;
  /// The code fields of chunk c of row n as vector<chunk x i8> (`split`: in
  /// nibble order), and signed codes' q = field - 2^(b-1) from them.
  Value emitFields(ImplicitLocOpBuilder &b, ValueRange args, Value n, Value c,
                   bool split) const;
  Value emitSignedCodes(ImplicitLocOpBuilder &b, Value fields8) const;
  /// Int8 activations (spec.quantizedActivations), T = 1: X row 0
  /// quantized per kActivationBlock into `xq` (i8, W4 chunks in nibble
  /// order) with the blocks' scales in `xs`, the arithmetic of
  /// Numerics/ActivationQuant.h; then y[0, n] from integer chunk sums.
  /// With subtractsFieldOffset, `xc` receives storedOffsetFactor times the
  /// sum of every four consecutive codes of `xq` (i32), the offset of the
  /// fields those codes meet; with a min zero-point, `xm` receives those
  /// sums times their block's scale (f32: the dequantized X a min
  /// multiplies).
  struct QuantizedRow {
    Value xq, xs, xc, xm;
    Value t; ///< the row of X quantized; none: row 0
  };
  /// A row's stack buffers: xq and xs, and xc or xm where the kernel
  /// needs them.
  QuantizedRow allocQuantizedRow(ImplicitLocOpBuilder &b) const;
  void emitQuantizeRow(ImplicitLocOpBuilder &b, ValueRange args,
                       const QuantizedRow &row) const;
  /// y[0, n] for every output row n from the quantized row (emitInt8Row).
  void emitInt8Rows(ImplicitLocOpBuilder &b, ValueRange args, Value outputs,
                    const QuantizedRow &row) const;
  void emitInt8Row(ImplicitLocOpBuilder &b, ValueRange args, Value n,
                   Value biasValue, const QuantizedRow &row) const;
  /// Row n's scales (and mins) in f32 into `widened` (widensRowQParams):
  /// nested ones decoded a super-group at a time, second level first;
  /// 16-bit ones widened 8 at a time, then one at a time.
  void emitWidenRowQParams(ImplicitLocOpBuilder &b, ValueRange args,
                           Value n) const;
  /// Whether T > 1 runs on AMX int8 tiles (Kernels/HostInt8Tiles.h): X
  /// quantized at every T as at T = 1, then 16 weight rows by 16 tokens by
  /// one step of codes a tile product, each sum scaled by its token's block
  /// scale and its row's group scale (the T = 1 path's two roundings).
  bool usesInt8Tiles() const {
    return spec.quantizedActivations &&
           kernels::hostGemmUsesInt8Tiles(cpu, {spec.symmetric, spec.minZero,
                                                spec.codebook, spec.groupSize,
                                                spec.k});
  }
  /// Tokens quantized into one pass's tile buffers: up to 64, fewer for
  /// long rows (64 x K bytes stay within 1 MiB of stack). Passes of up to
  /// 256 tokens (one weight unpacking for a 128-token prompt) measured no
  /// faster on the 7B-shaped Q4_0 model.
  int64_t tileTokensPerPass() const {
    const int64_t fit = (int64_t(1) << 20) / (kernels::kInt8TileRows * spec.k);
    return kernels::kInt8TileRows * std::clamp<int64_t>(fit, 1, 4);
  }
  /// The T > 1 path on AMX tiles (usesInt8Tiles); `row` holds one
  /// quantized row of X (xq, xs) as scratch.
  void emitInt8Tiles(ImplicitLocOpBuilder &b, ValueRange args, Value tokens,
                     Value outputs, const QuantizedRow &row) const;
  /// Whether int8 activations meet the codes in x86's u8 x s8 pair
  /// multiply (AVX2, so x86-64-v3 and up): fields below 2^7 as they are,
  /// with their offset subtracted after (subtractsFieldOffset), 8-bit
  /// codes as |q| times x with q's sign. Every pair sum is below 2^15,
  /// so the instruction's saturation never acts.
  bool usesAvx2() const {
    return spec.quantizedActivations && atLeast(cpu, HostCpuLevel::X86_64_V3);
  }
  /// T > 1: weight rows decoded per block, and the lanes of the dot
  /// products' FMAs. AVX-512's 32 vector registers hold a tile of 4 weight
  /// rows by kRowBlock X rows in 16 lanes (each X chunk converted once for
  /// four weight rows); AVX2's 16 hold 2 by kRowBlock in 8.
  int64_t weightRowsPerBlock() const {
    return atLeast(cpu, HostCpuLevel::X86_64_V4) ? 4 : 2;
  }
  int64_t dotLanes() const {
    return atLeast(cpu, HostCpuLevel::X86_64_V4) ? 16 : 8;
  }
  /// Whether the same u8 x s8 products are summed four to an i32 lane by
  /// one VNNI vpdpbusd (x86-64-v4-vnni and up) instead of vpmaddubsw and
  /// vpmaddwd: exact in i32 (no saturation at all), the offsets' products
  /// subtracted through its accumulator operand.
  bool usesVnni() const {
    return spec.quantizedActivations &&
           atLeast(cpu, HostCpuLevel::X86_64_V4_VNNI);
  }
  /// Integer zero-points (GPTQ, AWQ, `asym`): codes q - z.
  bool integerZeroPoints() const {
    return spec.takesZeroPoints() && !spec.minZero;
  }
  /// Codes of at most 7 bits on AVX2 meet X as their unsigned fields
  /// (signed ones q + 2^(b-1)): the offset's products (2^(b-1) or z times
  /// X's codes) come off afterwards.
  bool subtractsFieldOffset() const {
    return usesAvx2() && spec.bits <= 7 &&
           (spec.symmetric || integerZeroPoints());
  }
  /// What X's sums of four codes are multiplied by in `xc`: 2^(b-1) for
  /// signed codes; 1 with zero-points, each term multiplying by its z.
  int32_t storedOffsetFactor() const {
    return spec.symmetric ? int32_t(1) << (spec.bits - 1) : 1;
  }
  /// Chunks of one integer product: two 16-byte chunks of byte codes make
  /// one 32-byte AVX2 multiply where they share a group (groups of 32 or
  /// more, or per channel) and, always, an activation block.
  int64_t chunksPerTerm() const {
    return usesAvx2() && chunk == 16 &&
                   (spec.groupSize == 0 || spec.groupSize % 32 == 0)
               ? 2
               : 1;
  }
  int64_t activationBlocks() const {
    return (spec.k + kActivationBlock - 1) / kActivationBlock;
  }
  /// The code of a chunk that lane j holds in nibble order: the even codes
  /// (low nibbles) in lanes 0..15, the odd ones (high nibbles) in 16..31.
  int64_t codeOfLane(int64_t j, bool split) const {
    return !split ? j : j < chunk / 2 ? 2 * j : 2 * (j - chunk / 2) + 1;
  }
  /// T = 1 with X's row in f32 on the stack: W4 lanes in nibble order.
  bool splitsNibbles() const { return spec.fieldBits() == 4; }
  /// A W4 chunk of X (in lane order) rearranged into nibble order, as the
  /// T = 1 paths store X's row.
  Value toNibbleOrder(ImplicitLocOpBuilder &b, Value chunkOfX) const {
    SmallVector<int64_t> order;
    for (int64_t j = 0; j < chunk; ++j)
      order.push_back(codeOfLane(j, /*split=*/true));
    return vector::ShuffleOp::create(b, chunkOfX, chunkOfX, order);
  }
  /// X[t, chunk c] in f32; the tail chunk's lanes past K read as 0.
  Value emitXChunk(ImplicitLocOpBuilder &b, Value x, Value t, Value c,
                   bool isTail) const;
  /// `width` values of X row t from column `col` in the activation dtype;
  /// with `valid` < width a masked load, lanes from `valid` on 0.
  Value emitLoadX(ImplicitLocOpBuilder &b, Value x, Value t, Value col,
                  int64_t width, int64_t valid) const;
  /// Calls body(c, isTail) for chunks [first, last) of a group, then the
  /// tail chunk when `withTail`, threading `acc` through.
  SmallVector<Value>
  emitChunkRun(ImplicitLocOpBuilder &b, Value first, Value last, bool withTail,
               ValueRange acc,
               function_ref<SmallVector<Value>(ImplicitLocOpBuilder &, Value,
                                               bool, ValueRange)>
                   body) const;
  /// Calls group(g, firstChunk, lastChunk, withTail, acc) for every group.
  SmallVector<Value>
  emitGroups(ImplicitLocOpBuilder &b, ValueRange acc,
             function_ref<SmallVector<Value>(ImplicitLocOpBuilder &, Value,
                                             Value, Value, bool, ValueRange)>
                 group) const;

  /// y[t, n], fused: each chunk decoded and multiplied into one row of X,
  /// the scale applied once per group.
  /// With `xrow` (X row t already in f32, zero past K), its chunks are
  /// read from there instead of being widened again for every row n.
  void emitFusedRow(ImplicitLocOpBuilder &b, ValueRange args, Value n, Value t,
                    Value biasValue, Value xrow = Value()) const;
  /// X row 0 into `xrow` in f32, zero past K; W4 chunks in nibble order.
  void emitWidenRow(ImplicitLocOpBuilder &b, ValueRange args, Value xrow) const;
  /// Row n decoded once into `wrow` as s * (q - z) in f32 (0 past K).
  void emitDecodeRow(ImplicitLocOpBuilder &b, ValueRange args, Value n,
                     Value wrow) const;
  /// A weight row decoded into `wrow`: output column n, its bias.
  struct DecodedRow {
    Value n, wrow, bias;
  };
  /// y[t0 .. t0 + rows, n] = X rows . wrow for every decoded row, 8 lanes
  /// at a time, each X chunk loaded once for all of them.
  void emitDotRows(ImplicitLocOpBuilder &b, ValueRange args,
                   ArrayRef<DecodedRow> decoded, Value t0, int64_t rows) const;
  /// Row n's bias in f32, or none.
  Value emitBias(ImplicitLocOpBuilder &b, ValueRange args, Value n) const;
  void emitStore(ImplicitLocOpBuilder &b, ValueRange args, Value n, Value t,
                 Value value, Value biasValue) const;

  const QuantKernelSpec &spec;
  HostCpuLevel cpu;
  Type f32, act, scale, out;
  /// f32 stack buffers of the current row's scales and mins [G] (and with
  /// nested scales its second levels [K / superGroupSize]), allocated by
  /// emitBody where widensRowQParams.
  struct {
    Value scales, mins, superScales, superMins;
  } widened;
};

Value HostGemmEmitter::emitOffset(ImplicitLocOpBuilder &b, ValueRange args,
                                  Value n, Value g) const {
  const double twoTo23 = 8388608.0;
  if (spec.symmetric)
    // Signed codes are stored offset binary: field = q + 2^(b-1).
    return arith::ConstantOp::create(
        b, b.getF32FloatAttr(twoTo23 + double(1 << (spec.bits - 1))));
  // A min has no integer offset; a codebook's codes are looked up instead.
  if (!spec.takesZeroPoints() || spec.minZero)
    return arith::ConstantOp::create(b, b.getF32FloatAttr(twoTo23));
  Value zp = memref::LoadOp::create(b, zeroPoints(args), ValueRange{n, g});
  Value wide = arith::ExtUIOp::create(b, b.getI32Type(), zp);
  return arith::AddFOp::create(
      b, arith::UIToFPOp::create(b, f32, wide),
      arith::ConstantOp::create(b, b.getF32FloatAttr(twoTo23)));
}

Value HostGemmEmitter::emitQParam(ImplicitLocOpBuilder &b, Value qparams,
                                  Value n, Value g) const {
  Value stored = memref::LoadOp::create(b, qparams, ValueRange{n, g});
  return scale == f32 ? stored : arith::ExtFOp::create(b, f32, stored);
}

Value HostGemmEmitter::emitScale(ImplicitLocOpBuilder &b, ValueRange args,
                                 Value n, Value g) const {
  if (widened.scales)
    return memref::LoadOp::create(b, widened.scales, ValueRange{g});
  return emitQParam(b, qparamArgs(args).scales, n, g);
}

Value HostGemmEmitter::emitLaneScales(ImplicitLocOpBuilder &b, ValueRange args,
                                      Value n, Value g, bool withTail,
                                      bool split) const {
  auto valuesTy = VectorType::get({chunk}, f32);
  if (groupsPerChunk == 1)
    return vector::BroadcastOp::create(b, valuesTy, emitScale(b, args, n, g));
  const int64_t size = chunk / groupsPerChunk;
  Value lanes = arith::ConstantOp::create(
      b, SplatElementsAttr::get(valuesTy, b.getF32FloatAttr(0.0)));
  Value first = arith::MulIOp::create(b, g, indexConst(b, groupsPerChunk));
  for (int64_t i = 0; i < groupsPerChunk; ++i) {
    if (withTail && i * size >= tail)
      break; // no such group: K ends before it
    Value s = emitScale(b, args, n,
                        arith::AddIOp::create(b, first, indexConst(b, i)));
    SmallVector<bool> mine(chunk, false);
    for (int64_t j = 0; j < chunk; ++j)
      mine[j] = codeOfLane(j, split) / size == i;
    lanes = arith::SelectOp::create(
        b,
        arith::ConstantOp::create(
            b, DenseElementsAttr::get(VectorType::get({chunk}, b.getI1Type()),
                                      ArrayRef<bool>(mine))),
        vector::BroadcastOp::create(b, valuesTy, s), lanes);
  }
  return lanes;
}

Value HostGemmEmitter::emitMin(ImplicitLocOpBuilder &b, ValueRange args,
                               Value n, Value g) const {
  if (widened.mins)
    return memref::LoadOp::create(b, widened.mins, ValueRange{g});
  return emitQParam(b, zeroPoints(args), n, g);
}

Value HostGemmEmitter::emitFields(ImplicitLocOpBuilder &b, ValueRange args,
                                  Value n, Value c, bool split) const {
  MLIRContext *ctx = b.getContext();
  Type i8 = IntegerType::get(ctx, 8), i32 = IntegerType::get(ctx, 32);
  auto bytesTy = VectorType::get({16}, i8);
  Value column = arith::MulIOp::create(b, c, indexConst(b, 4));
  // The next row's chunk c is prefetched as this one is read (the last
  // row prefetches itself): a row is a few KiB, read in about the time a
  // miss to memory takes, and the hardware's prefetcher, which restarts at
  // every 4 KiB page, left most of that latency exposed (decode at 7B
  // shapes ran at half the speed it does with this).
  Value lastRow = arith::SubIOp::create(b, memref::DimOp::create(b, args[1], 0),
                                        indexConst(b, 1));
  Value nextRow = arith::MinUIOp::create(
      b, arith::AddIOp::create(b, n, indexConst(b, 1)), lastRow);
  memref::PrefetchOp::create(b, args[1], ValueRange{nextRow, column},
                             /*isWrite=*/false, /*localityHint=*/3,
                             /*isDataCache=*/true);
  Value words = vector::LoadOp::create(
      b, VectorType::get({4}, i32), args[1], ValueRange{n, column},
      /*nontemporal=*/false, llvm::MaybeAlign(16));
  // Little-endian words: field j of a W8 chunk is byte j; of a W4 chunk,
  // the low (even j) or high (odd j) nibble of byte j / 2.
  Value bytes = vector::BitCastOp::create(b, bytesTy, words);
  Value fields8 = bytes;
  if (spec.fieldBits() == 4) {
    Value lo = arith::AndIOp::create(
        b, bytes,
        arith::ConstantOp::create(
            b, SplatElementsAttr::get(bytesTy, b.getIntegerAttr(i8, 15))));
    Value hi = arith::ShRUIOp::create(
        b, bytes,
        arith::ConstantOp::create(
            b, SplatElementsAttr::get(bytesTy, b.getIntegerAttr(i8, 4))));
    SmallVector<int64_t> order;
    for (int64_t j = 0; j < 32; ++j) // lane j takes code codeOfLane(j)
      order.push_back(split ? j : (j % 2) * 16 + j / 2);
    fields8 = vector::ShuffleOp::create(b, lo, hi, order);
  }
  return fields8;
}

Value HostGemmEmitter::emitSignedCodes(ImplicitLocOpBuilder &b,
                                       Value fields8) const {
  // q = field - 2^(b-1) fits a signed byte (for b = 8 the subtraction
  // wraps to exactly q).
  Type i8 = b.getI8Type();
  const int64_t bias = spec.bits == 8 ? -128 : int64_t(1) << (spec.bits - 1);
  return arith::SubIOp::create(
      b, fields8,
      arith::ConstantOp::create(
          b, SplatElementsAttr::get(cast<VectorType>(fields8.getType()),
                                    b.getIntegerAttr(i8, bias))));
}

Value HostGemmEmitter::emitCodes(ImplicitLocOpBuilder &b, ValueRange args,
                                 Value n, Value c, Value offset,
                                 bool split) const {
  Type i32 = b.getI32Type();
  auto valuesTy = VectorType::get({chunk}, f32);
  auto fieldsTy = VectorType::get({chunk}, i32);
  Value fields8 = emitFields(b, args, n, c, split);
  if (spec.codebook != Codebook::None)
    return conversion::emitCodebookLookup(b, fields8, spec.codebook);
  if (spec.symmetric)
    // One byte subtraction per chunk and a signed conversion per lane
    // (sign-extend, cvtdq2ps) give the same exact values as the
    // magic-number path's three lane ops.
    return arith::SIToFPOp::create(b, valuesTy, emitSignedCodes(b, fields8));
  if (spec.minZero) // x = s q + m: the field is q, converted exactly
    return arith::UIToFPOp::create(b, valuesTy, fields8);
  Value fields = arith::ExtUIOp::create(b, fieldsTy, fields8);
  // 0x4B000000 | f is the f32 2^23 + f exactly (f < 2^23).
  Value biased = vector::BitCastOp::create(
      b, valuesTy,
      arith::OrIOp::create(
          b, fields,
          arith::ConstantOp::create(
              b, SplatElementsAttr::get(fieldsTy,
                                        b.getI32IntegerAttr(0x4B000000)))));
  return arith::SubFOp::create(
      b, biased, vector::BroadcastOp::create(b, valuesTy, offset));
}

/// v[2j] + v[2j + 1] for j < width: x86's pmaddwd (by ones) when v's
/// lanes are sign-extended 16-bit values.
static Value sumAdjacentPairs(ImplicitLocOpBuilder &b, Value v, int64_t width) {
  SmallVector<int64_t> even, odd;
  for (int64_t j = 0; j < width; ++j) {
    even.push_back(2 * j);
    odd.push_back(2 * j + 1);
  }
  return arith::AddIOp::create(b, vector::ShuffleOp::create(b, v, v, even),
                               vector::ShuffleOp::create(b, v, v, odd));
}

/// The first `n` of `width` lanes set.
static Value firstLanes(ImplicitLocOpBuilder &b, int64_t width, int64_t n) {
  SmallVector<bool> bits(width, false);
  for (int64_t j = 0; j < n; ++j)
    bits[j] = true;
  return arith::ConstantOp::create(
      b, DenseElementsAttr::get(VectorType::get({width}, b.getI1Type()),
                                ArrayRef<bool>(bits)));
}

Value HostGemmEmitter::emitLoadX(ImplicitLocOpBuilder &b, Value x, Value t,
                                 Value col, int64_t width,
                                 int64_t valid) const {
  auto xTy = VectorType::get({width}, act);
  if (valid >= width)
    return vector::LoadOp::create(b, xTy, x, ValueRange{t, col});
  Value zeros = arith::ConstantOp::create(
      b, SplatElementsAttr::get(xTy, b.getFloatAttr(act, 0.0)));
  return vector::MaskedLoadOp::create(b, xTy, x, ValueRange{t, col},
                                      firstLanes(b, width, valid), zeros);
}

Value HostGemmEmitter::emitXChunk(ImplicitLocOpBuilder &b, Value x, Value t,
                                  Value c, bool isTail) const {
  Value xs =
      emitLoadX(b, x, t, arith::MulIOp::create(b, c, indexConst(b, chunk)),
                chunk, isTail ? tail : chunk);
  return arith::ExtFOp::create(b, VectorType::get({chunk}, f32), xs);
}

SmallVector<Value> HostGemmEmitter::emitChunkRun(
    ImplicitLocOpBuilder &b, Value first, Value last, bool withTail,
    ValueRange acc,
    function_ref<SmallVector<Value>(ImplicitLocOpBuilder &, Value, bool,
                                    ValueRange)>
        body) const {
  auto loop = scf::ForOp::create(
      b, first, last, indexConst(b, 1), acc,
      [&](OpBuilder &nested, Location loc, Value c, ValueRange carried) {
        ImplicitLocOpBuilder ib(loc, nested);
        scf::YieldOp::create(ib, body(ib, c, false, carried));
      });
  SmallVector<Value> result(loop.getResults());
  if (withTail)
    result = body(b, indexConst(b, fullChunks), true, result);
  return result;
}

SmallVector<Value> HostGemmEmitter::emitGroups(
    ImplicitLocOpBuilder &b, ValueRange acc,
    function_ref<SmallVector<Value>(ImplicitLocOpBuilder &, Value, Value, Value,
                                    bool, ValueRange)>
        group) const {
  const int64_t perGroup = chunksPerGroup(), whole = fullGroups();
  auto loop = scf::ForOp::create(
      b, indexConst(b, 0), indexConst(b, whole), indexConst(b, 1), acc,
      [&](OpBuilder &nested, Location loc, Value g, ValueRange carried) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value first = arith::MulIOp::create(ib, g, indexConst(ib, perGroup));
        Value last = arith::AddIOp::create(ib, first, indexConst(ib, perGroup));
        scf::YieldOp::create(ib, group(ib, g, first, last, false, carried));
      });
  SmallVector<Value> result(loop.getResults());
  if (hasRestGroup())
    result = group(b, indexConst(b, whole), indexConst(b, whole * perGroup),
                   indexConst(b, fullChunks), tail != 0, result);
  return result;
}

void HostGemmEmitter::emitStore(ImplicitLocOpBuilder &b, ValueRange args,
                                Value n, Value t, Value value,
                                Value biasValue) const {
  if (biasValue)
    value = arith::AddFOp::create(b, value, biasValue);
  if (out != f32)
    value = arith::TruncFOp::create(b, out, value);
  memref::StoreOp::create(b, value, args.back(), ValueRange{t, n});
}

void HostGemmEmitter::emitFusedRow(ImplicitLocOpBuilder &b, ValueRange args,
                                   Value n, Value t, Value biasValue,
                                   Value xrow) const {
  auto valuesTy = VectorType::get({chunk}, f32);
  Value zero = arith::ConstantOp::create(
      b, SplatElementsAttr::get(valuesTy, b.getF32FloatAttr(0.0)));
  // X's stacked row holds W4 chunks in nibble order (emitWidenRow).
  const bool split = xrow && splitsNibbles();
  SmallVector<Value> acc = emitGroups(
      b, ValueRange{zero},
      [&](ImplicitLocOpBuilder &gb, Value g, Value first, Value last,
          bool withTail, ValueRange carried) -> SmallVector<Value> {
        Value offset = emitOffset(gb, args, n, g);
        // With a min, each chunk is decoded to s * q + m (one fma, rounded
        // once) and multiplied into X: the same count of vector ops as
        // carrying sum(X) beside the dot, and every term stays x * w_hat,
        // so the order-free bound on |x w_hat| holds (s * sum(x q) +
        // m * sum(x) could cancel far below it).
        Value s, m;
        if (spec.minZero) {
          s = vector::BroadcastOp::create(gb, valuesTy,
                                          emitScale(gb, args, n, g));
          m = vector::BroadcastOp::create(gb, valuesTy,
                                          emitMin(gb, args, n, g));
        }
        SmallVector<Value> dot = emitChunkRun(
            gb, first, last, withTail, ValueRange{m ? carried[0] : zero},
            [&](ImplicitLocOpBuilder &cb, Value c, bool isTail,
                ValueRange partial) -> SmallVector<Value> {
              Value codes = emitCodes(cb, args, n, c, offset, split);
              if (m)
                codes = vector::FMAOp::create(cb, codes, s, m);
              Value xs = xrow ? Value(vector::LoadOp::create(
                                    cb, VectorType::get({chunk}, f32), xrow,
                                    ValueRange{arith::MulIOp::create(
                                        cb, c, indexConst(cb, chunk))}))
                              : emitXChunk(cb, args[0], t, c, isTail);
              return {vector::FMAOp::create(cb, xs, codes, partial[0])};
            });
        if (m)
          return {dot[0]};
        s = emitLaneScales(gb, args, n, g, withTail, split);
        return {vector::FMAOp::create(gb, s, dot[0], carried[0])};
      });
  Value sum = vector::ReductionOp::create(b, vector::CombiningKind::ADD, acc[0],
                                          arith::FastMathFlags::reassoc);
  emitStore(b, args, n, t, sum, biasValue);
}

void HostGemmEmitter::emitQuantizeRow(ImplicitLocOpBuilder &b, ValueRange args,
                                      const QuantizedRow &row) const {
  const Value xq = row.xq, xs = row.xs, xc = row.xc, xm = row.xm;
  const int64_t block = kActivationBlock;
  const int64_t fullBlocks = spec.k / block, rest = spec.k % block;
  auto valuesTy = VectorType::get({block}, f32);
  auto bytesTy = VectorType::get({block}, b.getI8Type());
  auto splat = [&](ImplicitLocOpBuilder &cb, double v) -> Value {
    return arith::ConstantOp::create(
        cb, SplatElementsAttr::get(valuesTy, cb.getF32FloatAttr(v)));
  };
  auto quantize = [&](ImplicitLocOpBuilder &cb, Value blk, bool isTail) {
    Value col = arith::MulIOp::create(cb, blk, indexConst(cb, block));
    // Lanes past K quantize to 0, so padded codes meet 0.
    Value x = emitLoadX(cb, args[0], row.t ? row.t : indexConst(cb, 0), col,
                        block, isTail ? rest : block);
    Value v = arith::ExtFOp::create(cb, valuesTy, x);
    // max |x| (NaN propagates into the scale, and so into every output).
    Value magnitude =
        arith::MaximumFOp::create(cb, v, arith::NegFOp::create(cb, v));
    Value amax = vector::ReductionOp::create(
        cb, vector::CombiningKind::MAXIMUMF, magnitude);
    Value zero = arith::ConstantOp::create(cb, cb.getF32FloatAttr(0.0));
    Value scale = arith::SelectOp::create(
        cb, arith::CmpFOp::create(cb, arith::CmpFPredicate::OEQ, amax, zero),
        arith::ConstantOp::create(cb, cb.getF32FloatAttr(1.0)),
        arith::DivFOp::create(
            cb, amax,
            arith::ConstantOp::create(cb, cb.getF32FloatAttr(127.0))));
    memref::StoreOp::create(cb, scale, xs, ValueRange{blk});
    // rne(x / s) as roundHalfEvenF32 spells it, then clamped.
    Value r = arith::DivFOp::create(
        cb, v, vector::BroadcastOp::create(cb, valuesTy, scale));
    r = arith::SubFOp::create(
        cb, arith::AddFOp::create(cb, r, splat(cb, 12582912.0)),
        splat(cb, 12582912.0));
    r = arith::MinimumFOp::create(
        cb, arith::MaximumFOp::create(cb, r, splat(cb, -127.0)),
        splat(cb, 127.0));
    Value q = arith::FPToSIOp::create(cb, bytesTy, r);
    if (splitsNibbles()) // a block is one W4 chunk
      q = toNibbleOrder(cb, q);
    vector::StoreOp::create(cb, q, xq, ValueRange{col});
    if (!xc && !xm)
      return;
    // Sums of four consecutive stored codes, in i32: two pair steps.
    auto quadsTy = VectorType::get({block / 4}, cb.getI32Type());
    Value sums = arith::ExtSIOp::create(
        cb, VectorType::get({block}, cb.getI32Type()), q);
    for (int64_t width = block / 2; width >= block / 4; width /= 2)
      sums = sumAdjacentPairs(cb, sums, width);
    Value at = arith::MulIOp::create(cb, blk, indexConst(cb, block / 4));
    if (xc) {
      Value stored = sums;
      if (storedOffsetFactor() != 1)
        stored = arith::MulIOp::create(
            cb, sums,
            arith::ConstantOp::create(
                cb, SplatElementsAttr::get(
                        quadsTy, cb.getI32IntegerAttr(storedOffsetFactor()))));
      vector::StoreOp::create(cb, stored, xc, ValueRange{at});
    }
    if (xm) {
      // |sum| <= 4 * 127: exact in f32, then rounded once by the scale.
      auto quadValuesTy = VectorType::get({block / 4}, f32);
      vector::StoreOp::create(
          cb,
          arith::MulFOp::create(
              cb, arith::SIToFPOp::create(cb, quadValuesTy, sums),
              vector::BroadcastOp::create(cb, quadValuesTy, scale)),
          xm, ValueRange{at});
    }
  };
  emitForLoop(
      b, indexConst(b, 0), indexConst(b, fullBlocks), 1,
      [&](ImplicitLocOpBuilder &ib, Value blk) { quantize(ib, blk, false); });
  if (rest)
    quantize(b, indexConst(b, fullBlocks), true);
}

HostGemmEmitter::QuantizedRow
HostGemmEmitter::allocQuantizedRow(ImplicitLocOpBuilder &b) const {
  const int64_t codes = activationBlocks() * kActivationBlock;
  auto buffer = [&](int64_t size, Type type) -> Value {
    return memref::AllocaOp::create(b, MemRefType::get({size}, type));
  };
  QuantizedRow row;
  row.xq = buffer(codes, b.getI8Type());
  row.xs = buffer(activationBlocks(), f32);
  if (subtractsFieldOffset())
    row.xc = buffer(codes / 4, b.getI32Type());
  if (spec.minZero)
    row.xm = buffer(codes / 4, f32);
  return row;
}

void HostGemmEmitter::emitInt8Rows(ImplicitLocOpBuilder &b, ValueRange args,
                                   Value outputs,
                                   const QuantizedRow &row) const {
  emitForLoop(b, indexConst(b, 0), outputs, 1,
              [&](ImplicitLocOpBuilder &nb, Value n) {
                emitInt8Row(nb, args, n, emitBias(nb, args, n), row);
              });
}

void HostGemmEmitter::emitInt8Row(ImplicitLocOpBuilder &b, ValueRange args,
                                  Value n, Value biasValue,
                                  const QuantizedRow &row) const {
  const Value xq = row.xq, xs = row.xs, xc = row.xc, xm = row.xm;
  MLIRContext *ctx = b.getContext();
  Type i8 = b.getI8Type(), i16 = b.getI16Type(), i32 = b.getI32Type();
  const bool avx2 = usesAvx2();
  const int64_t step = chunksPerTerm();
  // One accumulator lane per four codes of a term on AVX2, per two codes
  // of a chunk in the sign-extending form.
  const int64_t lanes = avx2 ? step * chunk / 4 : chunk / 2;
  auto sumsTy = VectorType::get({lanes}, f32);
  Value zero = arith::ConstantOp::create(
      b, SplatElementsAttr::get(sumsTy, b.getF32FloatAttr(0.0)));
  const bool split = splitsNibbles();
  auto intrinsic = [&](ImplicitLocOpBuilder &cb, Type type, StringRef name,
                       ValueRange operands) -> Value {
    return LLVM::CallIntrinsicOp::create(cb, type, StringAttr::get(ctx, name),
                                         operands)
        .getResult(0);
  };
  // The exact integer sums of the products of `count` chunks' codes from
  // chunk c with their activations, in i32; `z`: the group's integer
  // zero-point (i32), where the codes have one.
  auto integerSums = [&](ImplicitLocOpBuilder &cb, Value c, int64_t count,
                         Value z) -> Value {
    const int64_t bytes = count * chunk;
    Value first = arith::MulIOp::create(cb, c, indexConst(cb, chunk));
    Value x = vector::LoadOp::create(cb, VectorType::get({bytes}, i8), xq,
                                     ValueRange{first});
    Value fields = emitFields(cb, args, n, c, split);
    if (count == 2) {
      SmallVector<int64_t> both;
      for (int64_t j = 0; j < bytes; ++j)
        both.push_back(j);
      Value next = arith::AddIOp::create(cb, c, indexConst(cb, 1));
      fields = vector::ShuffleOp::create(
          cb, fields, emitFields(cb, args, n, next, split), both);
    }
    auto bytesTy = VectorType::get({bytes}, i8);
    // A byte field masked to its b bits: below 2^7, whatever the byte.
    auto masked = [&](Value f) -> Value {
      if (spec.fieldBits() != 8)
        return f;
      return arith::AndIOp::create(
          cb, f,
          arith::ConstantOp::create(
              cb, SplatElementsAttr::get(
                      bytesTy,
                      cb.getIntegerAttr(i8, (int64_t(1) << spec.bits) - 1))));
    };
    if (!avx2) {
      // Adjacent lanes' products summed in i32: one pmaddwd on x86. Codes
      // with a min are their fields (the min's products come apart); with
      // an integer zero-point, field - z in i32 (exact for any stored z).
      auto wideTy = VectorType::get({chunk}, i32);
      Value q = spec.symmetric ? emitSignedCodes(cb, fields) : masked(fields);
      Value wide = arith::ExtSIOp::create(cb, wideTy, q);
      if (z)
        wide = arith::SubIOp::create(
            cb, wide, vector::BroadcastOp::create(cb, wideTy, z));
      Value products = arith::MulIOp::create(
          cb, wide, arith::ExtSIOp::create(cb, wideTy, x));
      return sumAdjacentPairs(cb, products, chunk / 2);
    }
    auto pairsTy = VectorType::get({bytes / 2}, i16);
    const bool wide = bytes == 32;
    Value unsignedSide, signedSide;
    if (spec.bits == 8) {
      // |q| (128 for -128, as an unsigned byte) times x with q's sign
      // (vpsignb; |x| <= 127 never overflows): the same products, the
      // unsigned side below 2^8 and the signed one within a byte.
      Value q = emitSignedCodes(cb, fields);
      unsignedSide = arith::MaxSIOp::create(
          cb, q,
          arith::SubIOp::create(cb,
                                arith::ConstantOp::create(
                                    cb, SplatElementsAttr::get(
                                            bytesTy, cb.getIntegerAttr(i8, 0))),
                                q));
      signedSide = intrinsic(cb, bytesTy,
                             wide ? "llvm.x86.avx2.psign.b"
                                  : "llvm.x86.ssse3.psign.b.128",
                             ValueRange{x, q});
    } else {
      // The fields themselves, below 2^b; a signed code's offset 2^(b-1)
      // or a zero-point comes off below (a min's products are summed
      // apart).
      unsignedSide = masked(fields);
      signedSide = x;
    }
    auto quadsTy = VectorType::get({bytes / 4}, i32);
    // sum (field - o) x = sum field x - o sum x, with o = 2^(b-1) (computed
    // once per call with X's codes) or the group's z (times X's sums here).
    auto offsets = [&]() -> Value {
      Value o = vector::LoadOp::create(
          cb, quadsTy, xc,
          ValueRange{arith::MulIOp::create(cb, c, indexConst(cb, chunk / 4))});
      if (z)
        o = arith::MulIOp::create(cb, o,
                                  vector::BroadcastOp::create(cb, quadsTy, z));
      return o;
    };
    if (usesVnni()) {
      Value start = arith::ConstantOp::create(
          cb, SplatElementsAttr::get(quadsTy, cb.getI32IntegerAttr(0)));
      if (subtractsFieldOffset())
        start = arith::SubIOp::create(cb, start, offsets());
      return intrinsic(cb, quadsTy,
                       wide ? "llvm.x86.avx512.vpdpbusd.256"
                            : "llvm.x86.avx512.vpdpbusd.128",
                       ValueRange{start, unsignedSide, signedSide});
    }
    // Unsigned times signed bytes summed in adjacent pairs (vpmaddubsw; a
    // pair is at most 2 * 128 * 127 < 2^15, so it never saturates), then
    // those in pairs in i32 (vpmaddwd by ones). Written as the intrinsics:
    // LLVM proves the generic form's saturation redundant for values this
    // small and no longer selects the first, and reassociates the
    // second's adds with the offsets' subtraction.
    Value pairs = intrinsic(cb, pairsTy,
                            wide ? "llvm.x86.avx2.pmadd.ub.sw"
                                 : "llvm.x86.ssse3.pmadd.ub.sw.128",
                            ValueRange{unsignedSide, signedSide});
    Value ones = arith::ConstantOp::create(
        cb, SplatElementsAttr::get(pairsTy, cb.getIntegerAttr(i16, 1)));
    Value quads = intrinsic(
        cb, quadsTy, wide ? "llvm.x86.avx2.pmadd.wd" : "llvm.x86.sse2.pmadd.wd",
        ValueRange{pairs, ones});
    if (!subtractsFieldOffset())
      return quads;
    return arith::SubIOp::create(cb, quads, offsets());
  };
  if (widensRowQParams())
    emitWidenRowQParams(b, args, n);
  // Pads a term's lanes with zeros to `width` (a last single chunk of a
  // two-chunk kernel).
  auto padded = [](ImplicitLocOpBuilder &cb, Value v, int64_t width) -> Value {
    auto type = cast<VectorType>(v.getType());
    const int64_t got = type.getNumElements();
    if (got == width)
      return v;
    SmallVector<int64_t> lanesOf;
    for (int64_t j = 0; j < width; ++j)
      lanesOf.push_back(j < got ? j : got);
    return vector::ShuffleOp::create(
        cb, v,
        arith::ConstantOp::create(
            cb, SplatElementsAttr::get(type,
                                       cb.getZeroAttr(type.getElementType()))),
        lanesOf);
  };
  // With a min, each accumulator has a partner for m * (the dequantized X
  // of the term's codes), one lane per four codes.
  const int64_t minLanes = step * chunk / 4;
  auto minTy = VectorType::get({minLanes}, f32);
  const int64_t perSlot = spec.minZero ? 2 : 1;
  // acc + (the integer sums of `count` chunks from c) * s_x * s_w (and
  // with a min, accMin + m * xm): a term lies in one group and one
  // activation block (chunksPerTerm), so it has one scale of each. Exact
  // sums: |sum| <= 32 * 128 * 127 < 2^24, so the conversion is exact too.
  auto term = [&](ImplicitLocOpBuilder &cb, Value c, int64_t count,
                  ValueRange acc) -> SmallVector<Value> {
    Value first = arith::MulIOp::create(cb, c, indexConst(cb, chunk));
    Value g = spec.groupSize == 0
                  ? indexConst(cb, 0)
                  : Value(arith::DivUIOp::create(
                        cb, first, indexConst(cb, spec.groupSize)));
    Value z = integerZeroPoints()
                  ? Value(arith::ExtUIOp::create(
                        cb, i32,
                        memref::LoadOp::create(cb, zeroPoints(args),
                                               ValueRange{n, g})))
                  : Value();
    Value sums = padded(cb, integerSums(cb, c, count, z), lanes);
    // (sums s_x) s_w: each factor broadcast from memory, no scalar
    // product (InstCombine would fold two broadcasts' product into one).
    Value sx = memref::LoadOp::create(
        cb, xs,
        ValueRange{arith::DivUIOp::create(cb, first,
                                          indexConst(cb, kActivationBlock))});
    Value scaled =
        arith::MulFOp::create(cb, arith::SIToFPOp::create(cb, sumsTy, sums),
                              vector::BroadcastOp::create(cb, sumsTy, sx));
    SmallVector<Value> next = {vector::FMAOp::create(
        cb, scaled,
        vector::BroadcastOp::create(cb, sumsTy, emitScale(cb, args, n, g)),
        acc[0])};
    if (spec.minZero) {
      Value xsum = vector::LoadOp::create(
          cb, VectorType::get({count * chunk / 4}, f32), xm,
          ValueRange{arith::MulIOp::create(cb, c, indexConst(cb, chunk / 4))});
      next.push_back(vector::FMAOp::create(
          cb, padded(cb, xsum, minLanes),
          vector::BroadcastOp::create(cb, minTy, emitMin(cb, args, n, g)),
          acc[1]));
    }
    return next;
  };
  // Two terms an iteration into two accumulators (each with its partner):
  // the fma chains overlap. The tail chunk is a chunk like the others: xq
  // is 0 past K, so its padded codes add nothing.
  const int64_t allChunks = fullChunks + (tail ? 1 : 0);
  const int64_t terms = allChunks / step, single = allChunks % step;
  const int64_t paired = terms - terms % 2;
  SmallVector<Value> init = {zero};
  if (spec.minZero)
    init.push_back(arith::ConstantOp::create(
        b, SplatElementsAttr::get(minTy, b.getF32FloatAttr(0.0))));
  SmallVector<Value> both(init);
  both.append(init);
  auto loop = scf::ForOp::create(
      b, indexConst(b, 0), indexConst(b, paired * step),
      indexConst(b, 2 * step), both,
      [&](OpBuilder &nested, Location loc, Value c, ValueRange acc) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value next = arith::AddIOp::create(ib, c, indexConst(ib, step));
        SmallVector<Value> results = term(ib, c, step, acc.take_front(perSlot));
        results.append(term(ib, next, step, acc.drop_front(perSlot)));
        scf::YieldOp::create(ib, results);
      });
  SmallVector<Value> acc0(loop.getResults().take_front(perSlot)),
      acc1(loop.getResults().drop_front(perSlot));
  if (paired < terms)
    acc0 = term(b, indexConst(b, paired * step), step, acc0);
  if (single)
    acc1 = term(b, indexConst(b, terms * step), 1, acc1);
  auto total = [&](Value a0, Value a1) -> Value {
    return vector::ReductionOp::create(b, vector::CombiningKind::ADD,
                                       arith::AddFOp::create(b, a0, a1),
                                       arith::FastMathFlags::reassoc);
  };
  Value sum = total(acc0[0], acc1[0]);
  if (spec.minZero)
    sum = arith::AddFOp::create(b, sum, total(acc0[1], acc1[1]));
  emitStore(b, args, n, indexConst(b, 0), sum, biasValue);
}

void HostGemmEmitter::emitWidenRowQParams(ImplicitLocOpBuilder &b,
                                          ValueRange args, Value n) const {
  const QParamArgs a = qparamArgs(args);
  const int64_t g = spec.groupsPerRow();
  auto forEach = [&](int64_t count, int64_t step,
                     function_ref<void(ImplicitLocOpBuilder &, Value)> body) {
    emitForLoop(b, indexConst(b, 0), indexConst(b, count), step, body);
  };
  // `count` 16-bit values of row n of `qparams` (of type `stored`) into the
  // f32 buffer `to`, 8 at a time, then one at a time; `negate`: their
  // negations (exact).
  auto widen = [&](Value qparams, Type stored, int64_t count, Value to,
                   bool negate) {
    const int64_t whole = count / 8 * 8;
    auto wideTy = VectorType::get({8}, f32);
    forEach(whole, 8, [&](ImplicitLocOpBuilder &ib, Value i) {
      Value v = vector::LoadOp::create(ib, VectorType::get({8}, stored),
                                       qparams, ValueRange{n, i});
      Value w = arith::ExtFOp::create(ib, wideTy, v);
      if (negate)
        w = arith::NegFOp::create(ib, w);
      vector::StoreOp::create(ib, w, to, ValueRange{i});
    });
    for (int64_t i = whole; i < count; ++i) {
      Value at = indexConst(b, i);
      Value v = memref::LoadOp::create(b, qparams, ValueRange{n, at});
      Value w = stored == f32 ? v : Value(arith::ExtFOp::create(b, f32, v));
      if (negate)
        w = arith::NegFOp::create(b, w);
      memref::StoreOp::create(b, w, to, ValueRange{at});
    }
  };
  if (!spec.nested) {
    widen(a.scales, scale, g, widened.scales, /*negate=*/false);
    if (spec.minZero)
      widen(a.zeroPoints, scale, g, widened.mins, /*negate=*/false);
    return;
  }
  // Nested: the row's second level first, widened (a min's negated: its
  // values are the magnitudes it subtracts, and (-d) c = -(d c) exactly, as
  // rounding to nearest is symmetric); then super-group j's codes times its
  // value, in f32: exact (a 16-bit float times a byte), as
  // decodeNestedQParams computes them.
  const int64_t supers = spec.superGroupsPerRow();
  Type superType = elementType(b.getContext(), spec.nested->superType);
  widen(a.superScales, superType, supers, widened.superScales,
        /*negate=*/false);
  if (spec.minZero)
    widen(a.superMins, superType, supers, widened.superMins, /*negate=*/true);
  const int64_t ratio = spec.nested->superGroupSize / spec.effectiveGroupSize();
  auto codesTy = VectorType::get({ratio}, b.getI8Type());
  auto valuesTy = VectorType::get({ratio}, f32);
  auto level = [&](ImplicitLocOpBuilder &ib, Value j, Value codes, Value values,
                   Value to, bool isSigned) {
    Value d = memref::LoadOp::create(ib, values, ValueRange{j});
    Value first = arith::MulIOp::create(ib, j, indexConst(ib, ratio));
    Value c = vector::LoadOp::create(ib, codesTy, codes, ValueRange{n, first});
    Value wide = isSigned ? Value(arith::SIToFPOp::create(ib, valuesTy, c))
                          : Value(arith::UIToFPOp::create(ib, valuesTy, c));
    Value v = arith::MulFOp::create(
        ib, vector::BroadcastOp::create(ib, valuesTy, d), wide);
    vector::StoreOp::create(ib, v, to, ValueRange{first});
  };
  auto superGroup = [&](ImplicitLocOpBuilder &ib, Value j) {
    level(ib, j, a.scales, widened.superScales, widened.scales,
          spec.nested->signedCodes);
    if (spec.minZero)
      level(ib, j, a.zeroPoints, widened.superMins, widened.mins,
            /*isSigned=*/false);
  };
  // Straight-line for rows of up to 32 super-groups (K = 8192 in ggml's
  // 256s): no loop counter or address arithmetic per super-group.
  if (supers <= kUnrolledSuperGroups) {
    for (int64_t j = 0; j < supers; ++j)
      superGroup(b, indexConst(b, j));
  } else {
    forEach(supers, 1, superGroup);
  }
}

void HostGemmEmitter::emitWidenRow(ImplicitLocOpBuilder &b, ValueRange args,
                                   Value xrow) const {
  Value row = indexConst(b, 0);
  emitChunkRun(
      b, indexConst(b, 0), indexConst(b, fullChunks), tail != 0, ValueRange{},
      [&](ImplicitLocOpBuilder &cb, Value c, bool isTail,
          ValueRange) -> SmallVector<Value> {
        Value xs = emitXChunk(cb, args[0], row, c, isTail);
        if (splitsNibbles())
          xs = toNibbleOrder(cb, xs);
        vector::StoreOp::create(
            cb, xs, xrow,
            ValueRange{arith::MulIOp::create(cb, c, indexConst(cb, chunk))});
        return {};
      });
}

void HostGemmEmitter::emitDecodeRow(ImplicitLocOpBuilder &b, ValueRange args,
                                    Value n, Value wrow) const {
  if (widensRowQParams())
    emitWidenRowQParams(b, args, n);
  auto valuesTy = VectorType::get({chunk}, f32);
  emitGroups(
      b, ValueRange{},
      [&](ImplicitLocOpBuilder &gb, Value g, Value first, Value last,
          bool withTail, ValueRange) -> SmallVector<Value> {
        Value offset = emitOffset(gb, args, n, g);
        Value s = emitLaneScales(gb, args, n, g, withTail, /*split=*/false);
        Value m = spec.minZero ? Value(vector::BroadcastOp::create(
                                     gb, valuesTy, emitMin(gb, args, n, g)))
                               : Value();
        emitChunkRun(
            gb, first, last, withTail, ValueRange{},
            [&](ImplicitLocOpBuilder &cb, Value c, bool isTail,
                ValueRange) -> SmallVector<Value> {
              Value codes = emitCodes(cb, args, n, c, offset);
              Value w = m ? Value(vector::FMAOp::create(cb, codes, s, m))
                          : Value(arith::MulFOp::create(cb, codes, s));
              if (isTail) {
                // Padded codes decode to -z s (or m): zero them, so the
                // dot loop may read whole vectors past K.
                Value zero = arith::ConstantOp::create(
                    cb,
                    SplatElementsAttr::get(valuesTy, cb.getF32FloatAttr(0.0)));
                w = arith::SelectOp::create(cb, firstLanes(cb, chunk, tail), w,
                                            zero);
              }
              vector::StoreOp::create(cb, w, wrow,
                                      ValueRange{arith::MulIOp::create(
                                          cb, c, indexConst(cb, chunk))});
              return {};
            });
        return {};
      });
}

void HostGemmEmitter::emitDotRows(ImplicitLocOpBuilder &b, ValueRange args,
                                  ArrayRef<DecodedRow> decoded, Value t0,
                                  int64_t rows) const {
  SmallVector<conversion::WeightRow> ws;
  for (const DecodedRow &d : decoded)
    ws.push_back({d.wrow, {}});
  SmallVector<Value> sums =
      conversion::emitRowDots(b, args[0], t0, rows, ws, spec.k, dotLanes());
  for (int64_t r = 0; r < rows; ++r)
    for (size_t i = 0; i < decoded.size(); ++i)
      emitStore(b, args, decoded[i].n,
                arith::AddIOp::create(b, t0, indexConst(b, r)),
                sums[size_t(r) * decoded.size() + i], decoded[i].bias);
}

void HostGemmEmitter::emitInt8Tiles(ImplicitLocOpBuilder &b, ValueRange args,
                                    Value tokens, Value outputs,
                                    const QuantizedRow &row) const {
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  const int64_t tile = kernels::kInt8TileRows;
  const int64_t depth = kernels::int8TileDepth(spec.groupSize);
  const int64_t steps = spec.k / depth, quads = spec.k / 4;
  const int64_t blocksOfX = activationBlocks();
  const int64_t pass = tileTokensPerPass(), blocksPerPass = pass / tile;
  // Codes with a min or an integer zero-point go in as their unsigned
  // fields (tdpbusd), as the T = 1 path splits them: with a min, sum x (s q
  // + m) = s sum x q + m sum x, the min meeting X's dequantized sums per
  // step; with a zero-point, s sum x (q - z) = s (sum x q - z sum x), z
  // times X's integer sums per step coming off the exact sums.
  const bool withMin = spec.minZero, withZero = integerZeroPoints();
  const bool unsignedFields = withMin || withZero;
  // X of one pass in the layout a tile's second operand takes (VNNI: row
  // q of block tb holds four consecutive codes of each of its 16 tokens),
  // its block scales by token (and its sums per step, dequantized for a
  // min, integers for a zero-point); 16 weight rows' codes as bytes and
  // their scales (and mins or zero-points) per step; one product tile and
  // the 16 x 16 results.
  Value xTiles = memref::AllocaOp::create(
      b, MemRefType::get({blocksPerPass, quads, 4 * tile}, i8));
  Value xScales = memref::AllocaOp::create(
      b, MemRefType::get({blocksPerPass, blocksOfX, tile}, f32));
  Value xSums, wMins;
  if (unsignedFields) {
    xSums = memref::AllocaOp::create(
        b, MemRefType::get({blocksPerPass, steps, tile}, withMin ? f32 : i32));
    wMins = memref::AllocaOp::create(
        b, MemRefType::get({tile, steps}, withMin ? f32 : i32));
  }
  Value wTiles =
      memref::AllocaOp::create(b, MemRefType::get({tile, spec.k}, i8));
  Value wScales =
      memref::AllocaOp::create(b, MemRefType::get({tile, steps}, f32));
  Value product =
      memref::AllocaOp::create(b, MemRefType::get({tile, tile}, i32));
  Value results =
      memref::AllocaOp::create(b, MemRefType::get({tile, tile}, f32));
  auto quadTy = VectorType::get({4}, i8);
  auto laneTy = VectorType::get({tile}, f32);
  Value zeroQuad = arith::ConstantOp::create(
      b, SplatElementsAttr::get(quadTy, b.getIntegerAttr(i8, 0)));
  Value zeroF = arith::ConstantOp::create(b, b.getF32FloatAttr(0.0));
  Value zeroLanes = arith::ConstantOp::create(
      b, SplatElementsAttr::get(laneTy, b.getF32FloatAttr(0.0)));
  auto minIndex = [](ImplicitLocOpBuilder &cb, Value a, Value c) -> Value {
    return arith::MinUIOp::create(cb, a, c);
  };
  auto times = [](ImplicitLocOpBuilder &cb, Value v, int64_t f) -> Value {
    return arith::MulIOp::create(cb, v, indexConst(cb, f));
  };
  auto forRange = [&](ImplicitLocOpBuilder &cb, int64_t count,
                      function_ref<void(ImplicitLocOpBuilder &, Value)> body) {
    emitForLoop(cb, indexConst(cb, 0), indexConst(cb, count), 1, body);
  };

  // Token r of the pass (block r / 16, column r % 16): the quantized row
  // in `row`, or zeros past T.
  auto placeToken = [&](ImplicitLocOpBuilder &tb, Value r, bool real) {
    Value blk = arith::DivUIOp::create(tb, r, indexConst(tb, tile));
    Value lane = arith::RemUIOp::create(tb, r, indexConst(tb, tile));
    Value col = times(tb, lane, 4);
    forRange(tb, quads, [&](ImplicitLocOpBuilder &qb, Value q) {
      Value v = real ? Value(vector::LoadOp::create(
                           qb, quadTy, row.xq, ValueRange{times(qb, q, 4)}))
                     : zeroQuad;
      vector::StoreOp::create(qb, v, xTiles, ValueRange{blk, q, col});
    });
    forRange(tb, blocksOfX, [&](ImplicitLocOpBuilder &kb, Value k) {
      Value sx = real ? Value(memref::LoadOp::create(kb, row.xs, ValueRange{k}))
                      : zeroF;
      memref::StoreOp::create(kb, sx, xScales, ValueRange{blk, k, lane});
    });
    if (!unsignedFields)
      return;
    // The step's codes summed exactly in i32; for a min, scaled by their
    // block's scale: the X it multiplies.
    forRange(tb, steps, [&](ImplicitLocOpBuilder &kb, Value k) {
      Value sum =
          withMin
              ? zeroF
              : Value(arith::ConstantOp::create(kb, kb.getI32IntegerAttr(0)));
      if (real) {
        Value codes =
            vector::LoadOp::create(kb, VectorType::get({depth}, i8), row.xq,
                                   ValueRange{times(kb, k, depth)});
        Value total = vector::ReductionOp::create(
            kb, vector::CombiningKind::ADD,
            arith::ExtSIOp::create(kb, VectorType::get({depth}, i32), codes));
        sum = total;
      }
      if (real && withMin) {
        Value sx = memref::LoadOp::create(
            kb, row.xs,
            ValueRange{arith::DivUIOp::create(
                kb, times(kb, k, depth), indexConst(kb, kActivationBlock))});
        sum = arith::MulFOp::create(kb, arith::SIToFPOp::create(kb, f32, sum),
                                    sx);
      }
      memref::StoreOp::create(kb, sum, xSums, ValueRange{blk, k, lane});
    });
  };

  // Weight row n into strip row i: its codes as bytes (signed codes less
  // their offset, unsigned fields as they are; W4 in nibble order, as X's
  // blocks are stored), its scales (and mins or zero-points) per step.
  auto placeRow = [&](ImplicitLocOpBuilder &nb, Value n, int64_t i) {
    if (widensRowQParams())
      emitWidenRowQParams(nb, args, n);
    Value at = indexConst(nb, i);
    forRange(nb, chunks, [&](ImplicitLocOpBuilder &cb, Value c) {
      Value fields = emitFields(cb, args, n, c, splitsNibbles());
      Value q = unsignedFields ? fields : emitSignedCodes(cb, fields);
      vector::StoreOp::create(cb, q, wTiles,
                              ValueRange{at, times(cb, c, chunk)});
    });
    forRange(nb, steps, [&](ImplicitLocOpBuilder &kb, Value k) {
      Value g =
          spec.groupSize == 0
              ? indexConst(kb, 0)
              : Value(arith::DivUIOp::create(kb, times(kb, k, depth),
                                             indexConst(kb, spec.groupSize)));
      memref::StoreOp::create(kb, emitScale(kb, args, n, g), wScales,
                              ValueRange{at, k});
      if (withMin)
        memref::StoreOp::create(kb, emitMin(kb, args, n, g), wMins,
                                ValueRange{at, k});
      if (withZero)
        memref::StoreOp::create(
            kb,
            arith::ExtUIOp::create(
                kb, i32,
                memref::LoadOp::create(kb, zeroPoints(args), ValueRange{n, g})),
            wMins, ValueRange{at, k});
    });
  };

  // Step k of token block blk: one tdpbssd (tdpbusd for unsigned fields)
  // gives C[n][t], the exact sum of `depth` products (|C| <= 32 * 255 *
  // 127 < 2^24; less z[n] * xsum[t] with a zero-point, still exact), then
  // acc[n] += (C[n] * s_x[t]) * s_w[n] (+ m[n] * xsum[t] with a min).
  auto step = [&](ImplicitLocOpBuilder &kb, Value blk, Value k,
                  ValueRange acc) -> SmallVector<Value> {
    Value zero = indexConst(kb, 0);
    auto cTy = amx::TileType::get({tile, tile}, i32);
    Value a =
        amx::TileLoadOp::create(kb, amx::TileType::get({tile, depth}, i8),
                                wTiles, ValueRange{zero, times(kb, k, depth)});
    Value x = amx::TileLoadOp::create(
        kb, amx::TileType::get({depth / 4, 4 * tile}, i8), xTiles,
        ValueRange{blk, times(kb, k, depth / 4), zero});
    Value c =
        amx::TileMulIOp::create(kb, cTy, a, x, amx::TileZeroOp::create(kb, cTy),
                                /*isZextLhs=*/unsignedFields,
                                /*isZextRhs=*/false);
    amx::TileStoreOp::create(kb, product, ValueRange{zero, zero}, c);
    Value block = arith::DivUIOp::create(kb, times(kb, k, depth),
                                         indexConst(kb, kActivationBlock));
    Value sx = vector::LoadOp::create(kb, laneTy, xScales,
                                      ValueRange{blk, block, zero});
    auto intsTy = VectorType::get({tile}, i32);
    Value xsum =
        unsignedFields
            ? Value(vector::LoadOp::create(kb, withMin ? laneTy : intsTy, xSums,
                                           ValueRange{blk, k, zero}))
            : Value();
    SmallVector<Value> next;
    for (int64_t i = 0; i < tile; ++i) {
      Value at = indexConst(kb, i);
      Value ints =
          vector::LoadOp::create(kb, intsTy, product, ValueRange{at, zero});
      auto broadcast = [&](Value from) -> Value {
        Value v = memref::LoadOp::create(kb, from, ValueRange{at, k});
        return vector::BroadcastOp::create(
            kb, VectorType::get({tile}, v.getType()), v);
      };
      if (withZero)
        ints = arith::SubIOp::create(
            kb, ints, arith::MulIOp::create(kb, broadcast(wMins), xsum));
      Value scaled = arith::MulFOp::create(
          kb, arith::SIToFPOp::create(kb, laneTy, ints), sx);
      Value sum =
          vector::FMAOp::create(kb, scaled, broadcast(wScales), acc[size_t(i)]);
      if (withMin)
        sum = vector::FMAOp::create(kb, xsum, broadcast(wMins), sum);
      next.push_back(sum);
    }
    return next;
  };

  // Token block blk of the pass from t0 against the strip from n0 (`rows`
  // of its rows real): y[t0 + 16 blk + j, n0 + i].
  auto tileBlock = [&](ImplicitLocOpBuilder &tb, Value t0, Value count,
                       Value n0, Value rows, Value blk) {
    SmallVector<Value> init(size_t(tile), zeroLanes);
    auto loop = scf::ForOp::create(
        tb, indexConst(tb, 0), indexConst(tb, steps), indexConst(tb, 1), init,
        [&](OpBuilder &nested, Location loc, Value k, ValueRange acc) {
          ImplicitLocOpBuilder kb(loc, nested);
          scf::YieldOp::create(kb, step(kb, blk, k, acc));
        });
    for (int64_t i = 0; i < tile; ++i)
      vector::StoreOp::create(tb, loop.getResult(unsigned(i)), results,
                              ValueRange{indexConst(tb, i), indexConst(tb, 0)});
    Value first = times(tb, blk, tile);
    Value valid = minIndex(tb, arith::SubIOp::create(tb, count, first),
                           indexConst(tb, tile));
    emitForLoop(
        tb, indexConst(tb, 0), rows, 1, [&](ImplicitLocOpBuilder &ob, Value i) {
          Value n = arith::AddIOp::create(ob, n0, i);
          Value biasValue = emitBias(ob, args, n);
          emitForLoop(ob, indexConst(ob, 0), valid, 1,
                      [&](ImplicitLocOpBuilder &sb, Value j) {
                        Value t = arith::AddIOp::create(
                            sb, t0, arith::AddIOp::create(sb, first, j));
                        Value v = memref::LoadOp::create(sb, results,
                                                         ValueRange{i, j});
                        emitStore(sb, args, n, t, v, biasValue);
                      });
        });
  };

  emitForLoop(
      b, indexConst(b, 0), tokens, pass,
      [&](ImplicitLocOpBuilder &pb, Value t0) {
        Value count = minIndex(pb, arith::SubIOp::create(pb, tokens, t0),
                               indexConst(pb, pass));
        // Quantized once per pass (per 32, the T = 1 rule), for every strip of
        // weight rows below; the last block padded with zero tokens.
        emitForLoop(pb, indexConst(pb, 0), count, 1,
                    [&](ImplicitLocOpBuilder &rb, Value r) {
                      QuantizedRow one = row;
                      one.xc = one.xm = Value();
                      one.t = arith::AddIOp::create(rb, t0, r);
                      emitQuantizeRow(rb, args, one);
                      placeToken(rb, r, /*real=*/true);
                    });
        Value blocks = arith::DivUIOp::create(
            pb, arith::AddIOp::create(pb, count, indexConst(pb, tile - 1)),
            indexConst(pb, tile));
        emitForLoop(pb, count, times(pb, blocks, tile), 1,
                    [&](ImplicitLocOpBuilder &rb, Value r) {
                      placeToken(rb, r, /*real=*/false);
                    });
        emitForLoop(
            pb, indexConst(pb, 0), outputs, tile,
            [&](ImplicitLocOpBuilder &nb, Value n0) {
              // A strip past the last row repeats it (its outputs are
              // not stored).
              Value last =
                  arith::SubIOp::create(nb, outputs, indexConst(nb, 1));
              for (int64_t i = 0; i < tile; ++i)
                placeRow(
                    nb,
                    minIndex(nb,
                             arith::AddIOp::create(nb, n0, indexConst(nb, i)),
                             last),
                    i);
              Value rows = minIndex(nb, arith::SubIOp::create(nb, outputs, n0),
                                    indexConst(nb, tile));
              emitForLoop(nb, indexConst(nb, 0), blocks, 1,
                          [&](ImplicitLocOpBuilder &tb, Value blk) {
                            tileBlock(tb, t0, count, n0, rows, blk);
                          });
            });
      });
}

Value HostGemmEmitter::emitBias(ImplicitLocOpBuilder &b, ValueRange args,
                                Value n) const {
  Value bv = bias(args);
  if (!bv)
    return Value();
  Value value = memref::LoadOp::create(b, bv, ValueRange{n});
  return out == f32 ? value : Value(arith::ExtFOp::create(b, f32, value));
}

void HostGemmEmitter::emitBody(ImplicitLocOpBuilder &b, ValueRange args) {
  Value tokens = memref::DimOp::create(b, args[0], 0);
  Value outputs = memref::DimOp::create(b, args[1], 0);
  // Several rows of X: decode each weight row once into a stack buffer and
  // take the rows' dot products with it. One row, or a row too long for the
  // stack: decode and multiply in one pass.
  // Int8 activations take K up to kMaxQuantizedActivationRow (validated),
  // within the row buffer.
  const bool rowBuffer = chunks * chunk <= kMaxRowBuffer;
  if (widensRowQParams()) {
    auto rowTy = MemRefType::get({spec.groupsPerRow()}, f32);
    auto superTy = MemRefType::get({spec.superGroupsPerRow()}, f32);
    widened.scales = memref::AllocaOp::create(b, rowTy);
    if (spec.nested)
      widened.superScales = memref::AllocaOp::create(b, superTy);
    if (spec.minZero) {
      widened.mins = memref::AllocaOp::create(b, rowTy);
      if (spec.nested)
        widened.superMins = memref::AllocaOp::create(b, superTy);
    }
  }
  Value wrow, xrow;
  QuantizedRow quantized;
  Value one = indexConst(b, 1);
  Value single =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tokens, one);
  if (usesInt8Tiles()) {
    // X quantized at every T: T = 1 is the integer GEMV below, T > 1 AMX
    // tiles; neither decodes weights to f32.
    quantized = allocQuantizedRow(b);
    scf::IfOp::create(
        b, single,
        [&](OpBuilder &nested, Location loc) {
          ImplicitLocOpBuilder ib(loc, nested);
          emitQuantizeRow(ib, args, quantized);
          emitInt8Rows(ib, args, outputs, quantized);
          scf::YieldOp::create(ib);
        },
        [&](OpBuilder &nested, Location loc) {
          ImplicitLocOpBuilder ib(loc, nested);
          emitInt8Tiles(ib, args, tokens, outputs, quantized);
          scf::YieldOp::create(ib);
        });
    return;
  }
  if (rowBuffer) {
    wrow = memref::AllocaOp::create(b, MemRefType::get({chunks * chunk}, f32));
    // T = 1: X widened to f32 (or quantized to int8) once per call, not
    // once per output row.
    if (spec.quantizedActivations) {
      quantized = allocQuantizedRow(b);
    } else {
      xrow =
          memref::AllocaOp::create(b, MemRefType::get({chunks * chunk}, f32));
    }
    scf::IfOp::create(b, single, [&](OpBuilder &nested, Location loc) {
      ImplicitLocOpBuilder ib(loc, nested);
      if (quantized.xq)
        emitQuantizeRow(ib, args, quantized);
      else
        emitWidenRow(ib, args, xrow);
      scf::YieldOp::create(ib);
    });
  }
  Value blocked = arith::SubIOp::create(
      b, tokens, arith::RemUIOp::create(b, tokens, indexConst(b, kRowBlock)));
  auto fusedRows = [&](ImplicitLocOpBuilder &fb, Value xrowOrNone) {
    emitForLoop(fb, indexConst(fb, 0), outputs, 1,
                [&](ImplicitLocOpBuilder &nb, Value n) {
                  if (widensRowQParams())
                    emitWidenRowQParams(nb, args, n);
                  Value biasValue = emitBias(nb, args, n);
                  if (xrowOrNone) {
                    emitFusedRow(nb, args, n, indexConst(nb, 0), biasValue,
                                 xrowOrNone);
                    return;
                  }
                  emitForLoop(nb, indexConst(nb, 0), tokens, 1,
                              [&](ImplicitLocOpBuilder &tb, Value t) {
                                emitFusedRow(tb, args, n, t, biasValue);
                              });
                });
  };
  if (!rowBuffer) {
    fusedRows(b, Value());
    return;
  }
  // T > 1: weight rows decoded weightRowsPerBlock() at a time, each block
  // dotted with four rows of X at a time (8 or 16 independent
  // accumulators); the last rows one at a time.
  SmallVector<Value> wrows = {wrow};
  for (int64_t i = 1; i < weightRowsPerBlock(); ++i)
    wrows.push_back(
        memref::AllocaOp::create(b, MemRefType::get({chunks * chunk}, f32)));
  auto dotAllTokens = [&](ImplicitLocOpBuilder &ib,
                          ArrayRef<DecodedRow> decoded) {
    emitForLoop(ib, indexConst(ib, 0), blocked, kRowBlock,
                [&](ImplicitLocOpBuilder &rb, Value t0) {
                  emitDotRows(rb, args, decoded, t0, kRowBlock);
                });
    emitForLoop(ib, blocked, tokens, 1, [&](ImplicitLocOpBuilder &rb, Value t) {
      emitDotRows(rb, args, decoded, t, 1);
    });
  };
  scf::IfOp::create(
      b, single,
      [&](OpBuilder &nested, Location loc) {
        ImplicitLocOpBuilder ib(loc, nested);
        if (quantized.xq)
          emitInt8Rows(ib, args, outputs, quantized);
        else
          fusedRows(ib, xrow);
        scf::YieldOp::create(ib);
      },
      [&](OpBuilder &nested, Location loc) {
        ImplicitLocOpBuilder ib(loc, nested);
        const int64_t perBlock = weightRowsPerBlock();
        Value blocks = arith::SubIOp::create(
            ib, outputs,
            arith::RemUIOp::create(ib, outputs, indexConst(ib, perBlock)));
        emitForLoop(ib, indexConst(ib, 0), blocks, perBlock,
                    [&](ImplicitLocOpBuilder &nb, Value n) {
                      SmallVector<DecodedRow> decoded;
                      for (int64_t i = 0; i < perBlock; ++i) {
                        Value ni =
                            arith::AddIOp::create(nb, n, indexConst(nb, i));
                        emitDecodeRow(nb, args, ni, wrows[size_t(i)]);
                        decoded.push_back(
                            {ni, wrows[size_t(i)], emitBias(nb, args, ni)});
                      }
                      dotAllTokens(nb, decoded);
                    });
        emitForLoop(ib, blocks, outputs, 1,
                    [&](ImplicitLocOpBuilder &nb, Value n) {
                      emitDecodeRow(nb, args, n, wrow);
                      dotAllTokens(nb, {{n, wrow, emitBias(nb, args, n)}});
                    });
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
                                  KernelTarget target, HostCpuLevel cpu) {
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
  HostGemmEmitter emitter(spec, cpu, ctx);
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
