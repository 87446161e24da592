//===- PrefillMma.cpp - Tensor-core prefill GEMM for W4A16 / W8A16 --------===//
//
// Y[t, n] = sum_k X[t, k] * s[n, k / G] * (q[n, k] - z[n, k / G]) (+ b[n])
// for any T (seed M8.1 0x06, M8.9 0x07): mma.sync m16n8k16 with f16/bf16
// operands and f32 accumulators. Per block (see PrefillMmaEmitter.h for the
// tiling):
//
//  - X is staged into shared memory with cp.async (nvgpu.device_async_copy,
//    16 bytes per copy, zero-filled past T and K through the copy's source
//    size) into two stages: while the warps multiply tile kt, the copies of
//    tile kt + 1 are in flight (double buffering: commit, wait_group 1,
//    barrier, compute, barrier);
//  - A fragments come from the stage with ldmatrix.x4 (nvgpu.ldmatrix);
//  - B fragments are read straight from the prefill_mma panels (one 128-bit
//    load per lane per panel and k16 step) and dequantized in registers by
//    the magic-number conversion with the zero-point fused into it, so the
//    tensor cores multiply X by the exact integers q - z;
//  - group scales and zero-points are staged per tile through shared memory
//    by one thread per block column (read once per block, one address per
//    thread instead of 24 loop-invariant ones per lane);
//  - scales are applied per group in f32: each group's k16 steps accumulate
//    into partial sums, then acc += s[n, g] * partial (one fma per
//    accumulator per group). Per-channel scales multiply once at the end.
//    A float min (w = s q + m: ggml Q4_1, Q4_K, ...) adds m[n, g] times the
//    group's sum of x over k, which one more mma per m16 tile and k16 step
//    computes against a B of ones (exact products, f32 sums);
//    The kernel error is then only f32 rounding: mma accumulation and one
//    fma per group (see docs/codegen.md for the bound). The alternative,
//    scaling B in half precision before the mma (Marlin's choice), saves the
//    32 partial-sum registers but rounds every weight to 11 (f16) or 8
//    (bf16) significant bits, an error as large as bf16's output rounding;
//  - the epilogue adds the bias in f32, rounds once to the output type and
//    stores pairs of outputs inside [T, N].
//
// mma.sync is built as nvvm.mma.sync: LLVM 22's nvgpu.mma.sync lowering
// has no bf16 operand type.
//
//===----------------------------------------------------------------------===//

#include "PrefillMmaEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace qtensor {

namespace prefill {
namespace {

/// The block's shared memory: activation stages and, for group scales, the
/// staged qparams.
struct SharedBuffers {
  Value stage, scales, zeros;
};

/// The device half: the same pieces around cp.async, ldmatrix and mma.sync.
class DeviceKernel {
public:
  DeviceKernel(const PrefillMmaEmitter &e, ImplicitLocOpBuilder &b,
               ValueRange args, SharedBuffers shared)
      : e(e), b(b), args(args), shared(shared) {}

  void build();

private:
  /// Issues the cp.async copies of k-tile `kt` into stage `st` as one group.
  Value issueCopies(Value kt, Value st);
  /// What a lane carries through the k loop: accumulators, the current
  /// group's partial sums and (for mins) its ones-mma sums of x.
  struct Sums {
    SmallVector<Value> acc, partial, xSums;
    SmallVector<Value> flat() const {
      SmallVector<Value> v(acc);
      v.append(partial);
      v.append(xSums);
      return v;
    }
    void assign(ValueRange v) {
      auto it = v.begin();
      for (SmallVector<Value> *part : {&acc, &partial, &xSums}) {
        const size_t n = part->size();
        part->assign(it, it + n);
        it += n;
      }
    }
  };
  /// One k-tile: `steps` k16 steps on stage `st`, the group ends planned.
  void computeTile(Value kt, Value st, int64_t steps, bool isLast, Sums &sums);
  /// The same for groups of one k16 step with a min, as a loop over the
  /// steps: unrolled, ptxas hoisted every step's 16 scales and 16 mins
  /// and spilled (255 registers).
  void computeTileOfStepGroups(Value kt, Value st, int64_t steps, Sums &sums);
  /// scf.for over [lb, ub) carrying `sums`: body(iv, iter) updates the
  /// iteration's sums, which are yielded; `sums` then holds the results.
  void forCarryingSums(Value lb, Value ub, Sums &sums,
                       function_ref<void(Value, Sums &)> body);
  /// The mma work of step j of the tile (global k16 step `step`).
  void multiplyStep(Value st, Value j, Value step, ArrayRef<Value> zeros,
                    Sums &sums);
  /// Folds the partial sums of the group staged in `slot` into acc and
  /// restarts the group's sums.
  Sums endGroup(ImplicitLocOpBuilder &ib, Value st, Value slot,
                const Sums &sums);
  SmallVector<Value> mma(ArrayRef<Value> a, ArrayRef<Value> bFrag,
                         ArrayRef<Value> c);
  SmallVector<Value> zerosF32(ImplicitLocOpBuilder &ib, int64_t n) {
    if (n == 0)
      return {};
    Value zero = arith::ConstantOp::create(ib, ib.getF32FloatAttr(0.0));
    return SmallVector<Value>(n, zero);
  }

  const PrefillMmaEmitter &e;
  ImplicitLocOpBuilder &b;
  ValueRange args;
  SharedBuffers shared;
  Value thread, lane, rows, mBase, blockN;
  WarpTile tile;
  SmallVector<Value> slabs;
  /// Per-channel zero operands: one group, read before the k loop.
  SmallVector<Value> channelZeros;
};

Value DeviceKernel::issueCopies(Value kt, Value st) {
  auto tokenTy = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  SmallVector<Value> tokens;
  for (int64_t c = 0; c < kCopiesPerThread; ++c) {
    CopyChunk chunk = e.copyChunk(b, thread, c, mBase, kt, rows);
    // Source size 0 outside [T, K]: nothing is read, 16 zero bytes written.
    Value srcElements = arith::SelectOp::create(
        b, chunk.valid, indexConst(b, kChunk), indexConst(b, 0));
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, tokenTy, shared.stage, ValueRange{st, chunk.row, chunk.col},
        e.argX(args), ValueRange{chunk.srcRow, chunk.srcCol},
        b.getIndexAttr(kChunk), srcElements, b.getUnitAttr()));
  }
  return nvgpu::DeviceAsyncCreateGroupOp::create(b, tokenTy, tokens);
}

SmallVector<Value> DeviceKernel::mma(ArrayRef<Value> a, ArrayRef<Value> bFrag,
                                     ArrayRef<Value> c) {
  const bool bf16 = e.act.isBF16();
  // f16 operands are f16x2 registers; bf16 ones are passed as i32.
  auto reg = [&](Value pair) -> Value {
    if (!bf16)
      return pair;
    Value word =
        vector::BitCastOp::create(b, VectorType::get({1}, e.i32), pair);
    return vector::ExtractOp::create(b, word, 0);
  };
  SmallVector<Value> aRegs, bRegs;
  for (Value v : a)
    aRegs.push_back(reg(v));
  for (Value v : bFrag)
    bRegs.push_back(reg(v));
  auto resultTy = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                   SmallVector<Type>(4, e.f32));
  NVVM::MMATypes type = bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  Value d = NVVM::MmaOp::create(
      b, resultTy, aRegs, bRegs, c, {kMmaM, kMmaN, kMmaK}, std::nullopt,
      std::nullopt, std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> result;
  for (int64_t i = 0; i < 4; ++i)
    result.push_back(LLVM::ExtractValueOp::create(b, d, i));
  return result;
}

DeviceKernel::Sums DeviceKernel::endGroup(ImplicitLocOpBuilder &ib, Value st,
                                          Value slot, const Sums &sums) {
  const Value c0 = indexConst(ib, 0);
  SmallVector<Value> scales =
      e.stagesQParams()
          ? e.stagedScales(ib, shared.scales, st, slot, tile.column, lane)
          : e.globalScales(ib, args, tile.nWarp, lane, c0);
  SmallVector<Value> mins;
  if (e.spec.minZero)
    mins = e.stagesQParams()
               ? e.stagedScales(ib, shared.zeros, st, slot, tile.column, lane)
               : e.globalMins(ib, args, tile.nWarp, lane, c0);
  Sums next;
  next.acc =
      e.applyScales(ib, scales, sums.partial, sums.acc, mins, sums.xSums);
  next.partial = zerosF32(ib, kAccPerLane);
  next.xSums = zerosF32(ib, sums.xSums.size());
  return next;
}

void DeviceKernel::multiplyStep(Value st, Value j, Value step,
                                ArrayRef<Value> zeros, Sums &sums) {
  auto fragTy = VectorType::get({4, 2}, e.act);
  SmallVector<SmallVector<Value>> a(kMTiles);
  for (int64_t mi = 0; mi < kMTiles; ++mi) {
    auto [row, col] = e.ldmatrixAddress(b, lane, tile.rowOffset, mi, j);
    Value frag = nvgpu::LdMatrixOp::create(b, fragTy, shared.stage,
                                           ValueRange{st, row, col},
                                           /*transpose=*/false,
                                           /*numTiles=*/4);
    for (int64_t r = 0; r < 4; ++r)
      a[mi].push_back(vector::ExtractOp::create(b, frag, r));
  }
  SmallVector<Value> bRegs = e.bFragments(b, args, slabs, lane, step, zeros);
  for (int64_t mi = 0; mi < kMTiles; ++mi) {
    for (int64_t ni = 0; ni < kNTiles; ++ni) {
      const int64_t i0 = accIndex(mi, ni, 0);
      SmallVector<Value> d = mma(a[mi], {bRegs[2 * ni], bRegs[2 * ni + 1]},
                                 ArrayRef<Value>(sums.partial).slice(i0, 4));
      std::copy(d.begin(), d.end(), sums.partial.begin() + i0);
    }
    if (e.spec.minZero) {
      Value ones = e.onesFragment(b);
      SmallVector<Value> d = mma(a[mi], {ones, ones},
                                 ArrayRef<Value>(sums.xSums).slice(4 * mi, 4));
      std::copy(d.begin(), d.end(), sums.xSums.begin() + 4 * mi);
    }
  }
}

void DeviceKernel::computeTileOfStepGroups(Value kt, Value st, int64_t steps,
                                           Sums &sums) {
  // Group j of the tile is staged in slot j; a min's codes need no zeros.
  Value firstStep = arith::MulIOp::create(b, kt, indexConst(b, kStepsPerTile));
  SmallVector<Value> zeros = e.constantZeroOperands(b);
  forCarryingSums(indexConst(b, 0), indexConst(b, steps), sums,
                  [&](Value j, Sums &iter) {
                    multiplyStep(st, j, arith::AddIOp::create(b, firstStep, j),
                                 zeros, iter);
                    iter = endGroup(b, st, j, iter);
                  });
}

void DeviceKernel::forCarryingSums(Value lb, Value ub, Sums &sums,
                                   function_ref<void(Value, Sums &)> body) {
  auto loop = scf::ForOp::create(b, lb, ub, indexConst(b, 1), sums.flat());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Sums iter = sums;
    iter.assign(loop.getRegionIterArgs());
    body(loop.getInductionVar(), iter);
    scf::YieldOp::create(b, iter.flat());
  }
  sums.assign(loop.getResults());
}

void DeviceKernel::computeTile(Value kt, Value st, int64_t steps, bool isLast,
                               Sums &sums) {
  if (e.spec.minZero && e.stepsPerGroup == 1)
    return computeTileOfStepGroups(kt, st, steps, sums);
  SmallVector<StepPlan> plan = e.planTile(steps, isLast);
  Value firstStep = arith::MulIOp::create(b, kt, indexConst(b, kStepsPerTile));
  auto zerosOfStep = [&](int64_t j) -> SmallVector<Value> {
    if (!e.integerZeros())
      return e.constantZeroOperands(b);
    if (!e.stagesQParams())
      return channelZeros;
    return e.stagedZeroOperands(
        b, shared.zeros, st, indexConst(b, e.slotOfStep(j)), tile.column, lane);
  };
  SmallVector<Value> zeros;
  for (int64_t j = 0; j < steps; ++j) {
    Value step = arith::AddIOp::create(b, firstStep, indexConst(b, j));
    if (plan[j].loadZeros)
      zeros = zerosOfStep(j);
    multiplyStep(st, indexConst(b, j), step, zeros, sums);
    Value slot = indexConst(b, e.slotOfStep(j));
    if (plan[j].end == GroupEnd::Always) {
      sums = endGroup(b, st, slot, sums);
    } else if (plan[j].end == GroupEnd::WhenTileEndsGroup) {
      auto ifOp = scf::IfOp::create(
          b, e.tileEndsGroup(b, kt),
          [&](OpBuilder &nested, Location loc) {
            ImplicitLocOpBuilder ib(loc, nested);
            scf::YieldOp::create(ib, endGroup(ib, st, slot, sums).flat());
          },
          [&](OpBuilder &nested, Location loc) {
            scf::YieldOp::create(nested, loc, sums.flat());
          });
      sums.assign(ifOp.getResults());
    }
  }
}

void DeviceKernel::build() {
  thread = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  lane = arith::RemUIOp::create(b, thread, indexConst(b, kLanes));
  Value warp = arith::DivUIOp::create(b, thread, indexConst(b, kLanes));
  rows = memref::DimOp::create(b, e.argX(args), 0);
  mBase = arith::MulIOp::create(b, gpu::BlockIdOp::create(b, gpu::Dimension::x),
                                indexConst(b, kPrefillRowsPerBlock));
  blockN = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  tile = e.warpTile(b, warp, blockN);
  slabs = e.warpSlabs(b, tile.nWarp);
  if (!e.stagesQParams() && e.integerZeros())
    channelZeros =
        e.globalZeroOperands(b, args, tile.nWarp, lane, indexConst(b, 0));

  // Prologue: tile 0's activations in flight, its qparams staged.
  Value c0 = indexConst(b, 0);
  Value first = issueCopies(c0, c0);
  if (e.stagesQParams())
    e.storeTileQParams(b, e.loadTileQParams(b, args, thread, blockN, c0),
                       shared.scales, shared.zeros, thread, c0);
  // Per-channel scales need no separate accumulators: the one group's
  // partial sums are scaled once at the end.
  Sums sums;
  if (e.stagesQParams())
    sums.acc = zerosF32(b, kAccPerLane);
  sums.partial = zerosF32(b, kAccPerLane);
  if (e.spec.minZero)
    sums.xSums = zerosF32(b, kXSumsPerLane);

  forCarryingSums(
      c0, indexConst(b, e.numTiles - 1), sums, [&](Value kt, Sums &iter) {
        Value next = arith::AddIOp::create(b, kt, indexConst(b, 1));
        Value nextStage =
            arith::RemUIOp::create(b, next, indexConst(b, kStages));
        Value token = issueCopies(next, nextStage);
        // The next tile's qparams are loaded now and stored after this tile's
        // mma work, which hides their latency.
        SmallVector<Value> qparams;
        if (e.stagesQParams())
          qparams = e.loadTileQParams(b, args, thread, blockN, next);
        // Every group but the newest (tile kt + 1) is complete; the barrier
        // makes all threads' copies of tile kt visible.
        nvgpu::DeviceAsyncWaitOp::create(b, token, b.getI32IntegerAttr(1));
        gpu::BarrierOp::create(b);
        computeTile(kt, arith::RemUIOp::create(b, kt, indexConst(b, kStages)),
                    kStepsPerTile, /*isLast=*/false, iter);
        // Stage kt + 1 was last read in iteration kt - 1, before its final
        // barrier; the barrier below publishes the stores to iteration kt + 1.
        if (e.stagesQParams())
          e.storeTileQParams(b, qparams, shared.scales, shared.zeros, thread,
                             nextStage);
        // Once every warp is past this barrier nobody reads stage kt % 2, and
        // iteration kt + 1 may refill it.
        gpu::BarrierOp::create(b);
      });

  nvgpu::DeviceAsyncWaitOp::create(b, first, b.getI32IntegerAttr(0));
  gpu::BarrierOp::create(b);
  const int64_t last = e.numTiles - 1;
  computeTile(indexConst(b, last), indexConst(b, last % kStages), e.lastSteps,
              /*isLast=*/true, sums);
  e.storeOutputs(b, args, arith::AddIOp::create(b, mBase, tile.rowOffset),
                 tile.nWarp, lane, rows, sums.acc);
}

} // namespace

void buildPrefillMmaNVPTX(ModuleOp module, const PrefillMmaEmitter &e) {
  MLIRContext *ctx = module.getContext();
  const std::string name = e.spec.name();
  ImplicitLocOpBuilder b(module.getLoc(), ctx);
  b.setInsertionPointToEnd(module.getBody());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  auto gpuModule = gpu::GPUModuleOp::create(b, name);
  b.setInsertionPointToStart(gpuModule.getBody());
  auto workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  SmallVector<Type> buffers = {e.stageType(workgroup)};
  if (e.stagesQParams()) {
    buffers.push_back(e.scaleStageType(workgroup));
    if (e.spec.takesZeroPoints())
      buffers.push_back(e.zeroStageType(workgroup));
  }
  auto fn = gpu::GPUFuncOp::create(
      b, name, FunctionType::get(ctx, e.argumentTypes(), {}), buffers);
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  fn.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({static_cast<int32_t>(kThreads), 1, 1}));
  // cp.async of 16 bytes and ldmatrix rows need 16-byte aligned shared
  // addresses; the default alignment of the buffer is its element's.
  for (unsigned i = 0; i < buffers.size(); ++i)
    fn.setWorkgroupAttributionAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                                   b.getI64IntegerAttr(16));
  b.setInsertionPointToStart(&fn.getBody().front());
  // The body's block arguments are the kernel arguments, then the
  // workgroup buffer.
  ValueRange args =
      fn.getArguments().take_front(fn.getFunctionType().getNumInputs());
  ArrayRef<BlockArgument> wg = fn.getWorkgroupAttributions();
  SharedBuffers shared{wg[0], wg.size() > 1 ? Value(wg[1]) : Value(),
                       wg.size() > 2 ? Value(wg[2]) : Value()};
  DeviceKernel kernel(e, b, args, shared);
  kernel.build();
  gpu::ReturnOp::create(b);
}

} // namespace prefill

int64_t prefillMmaStaticSharedBytes(const QuantKernelSpec &spec) {
  int64_t bytes =
      prefill::kStages * kPrefillRowsPerBlock * prefill::kStageStride * 2;
  const int64_t qparams =
      prefill::kStages * prefill::groupSlots(spec) * kPrefillColsPerBlock;
  const int64_t scaleBytes = spec.scaleType() == FloatType::F32 ? 4 : 2;
  bytes += qparams * scaleBytes;
  if (spec.takesZeroPoints()) // u8 zero-points, or mins like scales
    bytes += qparams * (spec.minZero ? scaleBytes : 1);
  return bytes;
}

KernelAbi prefillMmaAbi(const QuantKernelSpec &spec) {
  KernelAbi abi;
  if (spec.dynamicRows())
    abi.entries.push_back({spec.name(), 1, std::nullopt});
  else
    abi.entries.push_back({spec.name(), spec.rows, spec.rows});
  abi.launch.grid = {
      1, (spec.n + kPrefillColsPerBlock - 1) / kPrefillColsPerBlock, 1};
  abi.launch.block = {prefill::kThreads, 1, 1};
  abi.launch.tokenAxis = 0;
  abi.launch.tokensPerBlock = kPrefillRowsPerBlock;
  return abi;
}

LogicalResult buildPrefillMmaKernel(ModuleOp module,
                                    const QuantKernelSpec &spec,
                                    KernelTarget target) {
  if (spec.family != KernelFamily::PrefillMma)
    return module.emitError("prefill GEMM builder given a ")
           << "decode spec '" << spec.name() << "'";
  if (Status status = validateQuantKernelSpec(spec); !status)
    return module.emitError("kernel '")
           << spec.name() << "': " << status.message();
  if (module.lookupSymbol(spec.name()))
    return module.emitError("kernel '") << spec.name() << "' already exists";
  prefill::PrefillMmaEmitter emitter(spec, module.getContext());
  if (target == KernelTarget::NVPTX)
    prefill::buildPrefillMmaNVPTX(module, emitter);
  else
    prefill::buildPrefillMmaHost(module, emitter);
  return success();
}

} // namespace qtensor
