//===- PrefillMmaEmitter.h - Shared pieces of the prefill GEMM --*- C++ -*-===//
//
// The tensor-core GEMM Y = X W_hat^T for quantized W (prefill_mma layout) is
// emitted twice from these pieces: as an NVPTX kernel (PrefillMma.cpp, with
// cp.async, ldmatrix and mma.sync) and as its host twin (PrefillMmaHost.cpp,
// which replays the same warp-wide instructions on lane arrays). Everything
// that is per thread or per lane (copy coordinates, ldmatrix row addresses,
// B-fragment loads and dequantization, per-group scaling, the epilogue) is
// built here once, so both targets run the same arithmetic.
//
// Tiling (one block = 8 warps = 256 threads):
//   block tile  32 tokens x 256 features; warp w owns tokens
//               [32 bx + 16 (w / 4), +16) and features
//               [256 by + 64 (w % 4), +64): 1 m16 x 8 n8 mma tiles, so a
//               lane holds 32 accumulators and 32 partial sums;
//   k pipeline  64 columns of X per stage, 2 stages in shared memory, rows
//               padded to 72 halves (144 bytes) so the 8 row addresses of an
//               ldmatrix phase fall in distinct bank groups;
//   B           straight from the packed panels: per k16 step a lane loads
//               its 16 bytes of the n64 (W4) or two n32 (W8) panels with one
//               128-bit load each; the two warps of a feature range read
//               the same panels (the second read hits L1). Byte fields
//               (W2, W3, W5, W6) are read as W8 panels.
//
// Register files per lane: accumulator element e of mma tile (mi, ni) is
// index accIndex(mi, ni, e); A fragments are 4 x vector<2 x act> per m16
// tile, B fragments 2 x vector<2 x act> per n8 tile (PTX m16n8k16 layout:
// a0 (g, 2t), a1 (g + 8, 2t), a2 (g, 2t + 8), a3 (g + 8, 2t + 8); b0 (2t, g),
// b1 (2t + 8, g); c0/c1 (g, 2t/2t + 1), c2/c3 (g + 8, ...); g = lane / 4,
// t = lane % 4).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_PASSES_CONVERSION_PREFILLMMAEMITTER_H
#define QTENSOR_PASSES_CONVERSION_PREFILLMMAEMITTER_H

#include "qtensor/Conversion/KernelBuilders.h"

#include "NestedQParams.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace qtensor::prefill {

constexpr int64_t kMmaM = 16, kMmaN = 8, kMmaK = 16;
constexpr int64_t kLanes = 32;
/// Warps tile the block 2 (tokens) x 4 (features).
constexpr int64_t kWarpsM = 2, kWarpsN = 4;
constexpr int64_t kWarps = kWarpsM * kWarpsN;
constexpr int64_t kThreads = kWarps * kLanes;
constexpr int64_t kWarpRows = kPrefillRowsPerBlock / kWarpsM;
constexpr int64_t kWarpCols = kPrefillColsPerBlock / kWarpsN;
/// m16 tiles per warp.
constexpr int64_t kMTiles = kWarpRows / kMmaM;
constexpr int64_t kNTiles = kWarpCols / kMmaN;
/// Columns of X per pipeline stage, and the k16 steps they hold.
constexpr int64_t kTileK = 64;
constexpr int64_t kStepsPerTile = kTileK / kMmaK;
constexpr int64_t kStages = 2;
/// Staged row length in halves: 16 bytes of padding per row.
constexpr int64_t kStageStride = kTileK + 8;
/// Activations per 16-byte cp.async.
constexpr int64_t kChunk = 8;
constexpr int64_t kCopiesPerThread =
    kPrefillRowsPerBlock * kTileK / kChunk / kThreads;
constexpr int64_t kAccPerLane = kMTiles * kNTiles * 4;
/// The ones-mma accumulators of a lane (a min's group sums of x).
constexpr int64_t kXSumsPerLane = kMTiles * 4;
static_assert(kThreads == kPrefillColsPerBlock,
              "qparams are staged by one thread per block column");
/// 32-bit words of one k16 x n(256/b) panel: 32 lanes x 16 bytes.
constexpr int64_t kPanelWords = 128;

constexpr int64_t accIndex(int64_t mi, int64_t ni, int64_t e) {
  return (mi * kNTiles + ni) * 4 + e;
}

/// What follows step j of a k-tile: nothing, or folding the group's partial
/// sums into the accumulators, either always (known when building) or only
/// when the tile ends a group (a runtime test on the tile index).
enum class GroupEnd { None, Always, WhenTileEndsGroup };

struct StepPlan {
  bool loadZeros; ///< the step starts a group slot: (re)read zero-points
  GroupEnd end;
};

/// Where warp w works: rows [rowOffset, +16) of the block tile, features
/// [nWarp, +64), which are columns [column, +64) of the block.
struct WarpTile {
  mlir::Value rowOffset, nWarp, column;
};

/// Per-thread coordinates of one 16-byte activation copy.
struct CopyChunk {
  mlir::Value row, col;       ///< in the stage
  mlir::Value srcRow, srcCol; ///< in X, clamped to (0, 0) when invalid
  mlir::Value valid;          ///< inside [T, K]; else the stage gets zeros
};

class PrefillMmaEmitter {
public:
  PrefillMmaEmitter(const QuantKernelSpec &spec, mlir::MLIRContext *ctx);

  /// x, w, s, [z], [b], y; T (dim 0 of x and y) is `?` for dynamic rows.
  /// z is u8 zero-points, or a min in the scale dtype.
  llvm::SmallVector<mlir::Type> argumentTypes() const;
  /// The staged activation tiles: [kStages, 32, kStageStride].
  mlir::MemRefType stageType(mlir::Attribute memorySpace) const;
  /// Group scales are staged too: per stage, the scales (and zero-points)
  /// of the groups a k-tile touches ("slots": 2 for G = 32, else 1), one
  /// per block column: [kStages, slots, 256]. Per-channel scales are not
  /// staged (they are read once, after the k loop).
  bool stagesQParams() const { return stepsPerGroup != 0; }
  int64_t groupSlots() const;
  int64_t slotOfStep(int64_t j) const;
  mlir::MemRefType scaleStageType(mlir::Attribute memorySpace) const;
  mlir::MemRefType zeroStageType(mlir::Attribute memorySpace) const;
  /// u8, or the scale dtype for a min.
  mlir::Type zeroElement() const;
  /// Whether the B conversion subtracts a zero-point read from z (else a
  /// constant: the offset of signed codes, 0 under a min).
  bool integerZeros() const { return spec.takesZeroPoints() && !spec.minZero; }

  mlir::Value argX(mlir::ValueRange a) const { return a[0]; }
  mlir::Value argW(mlir::ValueRange a) const { return a[1]; }
  mlir::Value argS(mlir::ValueRange a) const { return a[slots.s]; }
  mlir::Value argZ(mlir::ValueRange a) const { return slots.at(a, slots.z); }
  mlir::Value argBias(mlir::ValueRange a) const {
    return slots.at(a, slots.bias);
  }
  mlir::Value argY(mlir::ValueRange a) const { return a.back(); }

  /// The plan of a k-tile of `steps` k16 steps; `isLast` for the final one.
  llvm::SmallVector<StepPlan> planTile(int64_t steps, bool isLast) const;
  /// True when k-tile `kt` ends a group (groups spanning several tiles).
  mlir::Value tileEndsGroup(mlir::ImplicitLocOpBuilder &b,
                            mlir::Value kt) const;
  /// The scale group of global k16 step `step`.
  mlir::Value groupOfStep(mlir::ImplicitLocOpBuilder &b,
                          mlir::Value step) const;

  CopyChunk copyChunk(mlir::ImplicitLocOpBuilder &b, mlir::Value thread,
                      int64_t copy, mlir::Value mBase, mlir::Value kt,
                      mlir::Value rows) const;
  WarpTile warpTile(mlir::ImplicitLocOpBuilder &b, mlir::Value warp,
                    mlir::Value blockN) const;
  /// The (row, col) in a stage whose 16 bytes `lane` supplies to an
  /// ldmatrix.x4 of the warp's m-tile `mi` at k16 step `j` of the tile.
  std::pair<mlir::Value, mlir::Value>
  ldmatrixAddress(mlir::ImplicitLocOpBuilder &b, mlir::Value lane,
                  mlir::Value rowOffset, int64_t mi, mlir::Value j) const;
  /// The panel rows (slabs) of the warp's 64 features, clamped to the last
  /// slab so warps past N read valid memory (their outputs are not stored).
  llvm::SmallVector<mlir::Value> warpSlabs(mlir::ImplicitLocOpBuilder &b,
                                           mlir::Value nWarp) const;
  /// Thread `thread` (one per block column) loads the scales, then the
  /// zero-points, of k-tile `kt`'s group slots: one thread per column, so
  /// each qparam is read once per block and its address math is one column's
  /// (columns past N read row N - 1, slots past the last group the last).
  /// A nested descriptor's are decoded here, second level first, so the
  /// stages hold f32 values as they do for a first level decoded at load.
  llvm::SmallVector<mlir::Value>
  loadTileQParams(mlir::ImplicitLocOpBuilder &b, mlir::ValueRange args,
                  mlir::Value thread, mlir::Value blockN, mlir::Value kt) const;
  /// ... and stores them into stage `st` of the staged-qparam buffers.
  void storeTileQParams(mlir::ImplicitLocOpBuilder &b,
                        llvm::ArrayRef<mlir::Value> values, mlir::Value scales,
                        mlir::Value zeros, mlir::Value thread,
                        mlir::Value st) const;
  /// The lane's C-column scales in f32, index 2 * ni + e: from a stage slot,
  /// or (per-channel) from global memory.
  llvm::SmallVector<mlir::Value> stagedScales(mlir::ImplicitLocOpBuilder &b,
                                              mlir::Value scales,
                                              mlir::Value st, mlir::Value slot,
                                              mlir::Value column,
                                              mlir::Value lane) const;
  llvm::SmallVector<mlir::Value>
  globalScales(mlir::ImplicitLocOpBuilder &b, mlir::ValueRange args,
               mlir::Value nWarp, mlir::Value lane, mlir::Value group) const;
  /// Per-channel mins, like globalScales (staged mins are read with
  /// stagedScales from the zero stage).
  llvm::SmallVector<mlir::Value> globalMins(mlir::ImplicitLocOpBuilder &b,
                                            mlir::ValueRange args,
                                            mlir::Value nWarp, mlir::Value lane,
                                            mlir::Value group) const;
  /// Per n8 tile, what the B conversion subtracts: magic + zero-point for the
  /// lane's B column (vector<2 x act>, or vector<2 x f32> for bf16 W8);
  /// constants unless integerZeros(), else from a stage slot or
  /// (per-channel) global memory.
  llvm::SmallVector<mlir::Value>
  constantZeroOperands(mlir::ImplicitLocOpBuilder &b) const;
  /// A B register of ones: the mma of an A fragment with it gives each
  /// row's sum of x over the k16 step in every column (for mins).
  mlir::Value onesFragment(mlir::ImplicitLocOpBuilder &b) const;
  llvm::SmallVector<mlir::Value>
  stagedZeroOperands(mlir::ImplicitLocOpBuilder &b, mlir::Value zeros,
                     mlir::Value st, mlir::Value slot, mlir::Value column,
                     mlir::Value lane) const;
  llvm::SmallVector<mlir::Value>
  globalZeroOperands(mlir::ImplicitLocOpBuilder &b, mlir::ValueRange args,
                     mlir::Value nWarp, mlir::Value lane,
                     mlir::Value group) const;
  /// The lane's B fragments of global k16 step `step`, exact integers q - z
  /// in `act`: index 2 * ni + register.
  llvm::SmallVector<mlir::Value>
  bFragments(mlir::ImplicitLocOpBuilder &b, mlir::ValueRange args,
             llvm::ArrayRef<mlir::Value> slabs, mlir::Value lane,
             mlir::Value step, llvm::ArrayRef<mlir::Value> zeros) const;
  /// acc + s * partial per accumulator (s * partial when `acc` is empty),
  /// `scales` as stagedScales returns them; with mins, + m * (the row's
  /// group sum of x), `xSums` the ones-mma accumulators (kXSumsPerLane).
  llvm::SmallVector<mlir::Value>
  applyScales(mlir::ImplicitLocOpBuilder &b, llvm::ArrayRef<mlir::Value> scales,
              llvm::ArrayRef<mlir::Value> partial,
              llvm::ArrayRef<mlir::Value> acc,
              llvm::ArrayRef<mlir::Value> mins = {},
              llvm::ArrayRef<mlir::Value> xSums = {}) const;
  /// y = round(acc (+ bias)) for the lane's outputs inside [T, N]; the
  /// warp's first token is mWarp.
  void storeOutputs(mlir::ImplicitLocOpBuilder &b, mlir::ValueRange args,
                    mlir::Value mWarp, mlir::Value nWarp, mlir::Value lane,
                    mlir::Value rows, llvm::ArrayRef<mlir::Value> acc) const;

  const QuantKernelSpec &spec;
  mlir::MLIRContext *ctx;
  mlir::Type f32, i32, act, scale, out;
  bool hasBias;
  conversion::LinearArgSlots slots;
  /// Codes become `act` through a 16-bit magic number (all but bf16 W8,
  /// whose 8-bit fields need the f32 magic).
  bool halfMagic;
  int64_t kSteps;        ///< ceil(K / 16)
  int64_t numTiles;      ///< ceil(kSteps / 4)
  int64_t lastSteps;     ///< k16 steps of the final tile
  int64_t stepsPerGroup; ///< G / 16, 0 for per-channel
  int64_t groups;        ///< scale columns: ceil(K / G)
  int64_t slabs;         ///< panel rows: ceil(N / (256 / b))
  int64_t nBlocks;       ///< ceil(N / 256)

private:
  llvm::SmallVector<mlir::Value>
  globalColumnValues(mlir::ImplicitLocOpBuilder &b, mlir::Value source,
                     mlir::Value nWarp, mlir::Value lane,
                     mlir::Value group) const;
};

mlir::Value indexConst(mlir::ImplicitLocOpBuilder &b, int64_t v);

/// The group slots a k-tile stages (PrefillMmaEmitter::groupSlots).
int64_t groupSlots(const QuantKernelSpec &spec);

/// The two targets (PrefillMma.cpp, PrefillMmaHost.cpp).
void buildPrefillMmaNVPTX(mlir::ModuleOp module, const PrefillMmaEmitter &e);
void buildPrefillMmaHost(mlir::ModuleOp module, const PrefillMmaEmitter &e);

} // namespace qtensor::prefill

#endif // QTENSOR_PASSES_CONVERSION_PREFILLMMAEMITTER_H
