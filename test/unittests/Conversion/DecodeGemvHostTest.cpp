//===- DecodeGemvHostTest.cpp - Decode GEMV parity on the host ------------===//
//
// Operator parity (seed M8.9 0x09D) of the generated decode GEMV: the same
// builder that emits the NVPTX kernel emits its host twin, which is lowered
// to LLVM and run with mlir::ExecutionEngine over codes packed by the
// numerics library's decode_gemv packer. Two errors are measured per output:
//
//   kernel error        |Y_kernel - X @ What^T|  (What = the reference
//                       dequantized weight s * (q - z), in float64)
//   quantization error  |X @ What^T - X @ W^T|   (W = the float weight)
//
// Only the kernel error is asserted, against the rounding bound of the
// kernel's f32 arithmetic (see kernelErrorBound); the quantization error is
// reported, since it belongs to the quantizer, not to the kernel.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Conversion/KernelBuilders.h"
#include "qtensor/Conversion/Passes.h"
#include "qtensor/Numerics/FloatFormats.h"
#include "qtensor/Numerics/Groupwise.h"
#include "qtensor/Numerics/KernelLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

#include "llvm/Support/TargetSelect.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <random>
#include <vector>

using namespace qtensor;

namespace {

/// A row-major 2-D buffer viewed as an MLIR memref descriptor.
template <typename T> struct Buffer2D {
  std::vector<T> data;
  StridedMemRefType<T, 2> desc;
  Buffer2D(int64_t rows, int64_t cols, std::vector<T> values)
      : data(std::move(values)) {
    desc.basePtr = desc.data = data.data();
    desc.offset = 0;
    desc.sizes[0] = rows;
    desc.sizes[1] = cols;
    desc.strides[0] = cols;
    desc.strides[1] = 1;
  }
};

uint16_t toBits(float v, ActivationType act) {
  return act == ActivationType::F16 ? floatToHalfBits(v)
                                    : floatToBFloat16Bits(v);
}
float fromBits(uint16_t bits, ActivationType act) {
  return act == ActivationType::F16 ? halfBitsToFloat(bits)
                                    : bfloat16BitsToFloat(bits);
}

class HostJit {
public:
  HostJit() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    mlir::DialectRegistry registry;
    registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect,
                    mlir::LLVM::LLVMDialect, mlir::math::MathDialect,
                    mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
                    mlir::vector::VectorDialect>();
    mlir::registerBuiltinDialectTranslation(registry);
    mlir::registerLLVMDialectTranslation(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Builds, lowers and JIT-compiles the host twin of `spec`.
  std::unique_ptr<mlir::ExecutionEngine> compile(const QuantKernelSpec &spec) {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
    if (mlir::failed(buildDecodeGemvKernel(*module, spec, KernelTarget::Host)))
      return nullptr;
    mlir::PassManager pm(&context);
    buildLowerKernelsToHostPipeline(pm);
    if (mlir::failed(pm.run(*module)))
      return nullptr;
    auto engine = mlir::ExecutionEngine::create(*module);
    if (!engine) {
      llvm::consumeError(engine.takeError());
      return nullptr;
    }
    return std::move(*engine);
  }

  mlir::MLIRContext context;
};

struct Case {
  unsigned bits;
  bool symmetric;
  int64_t group; // 0: per-channel
  ActivationType act;
  int64_t rows, n, k, split;
};

struct Errors {
  double kernelMax = 0, kernelBoundMin = 1e300, quantMax = 0, yMax = 0;
};

/// The rounding bound of the kernel's f32 arithmetic for one output, with
/// u = 2^-24 and S = sum_k |x_k * What_k|:
///   - each product x * (q - z) is exact in f32 (an 11- or 8-bit x times a
///     9-bit integer), and so is the magic-number conversion;
///   - a chunk's ordered sum adds `chunk` terms: (chunk - 1) u S_chunk;
///   - acc += s * dot rounds at most twice per chunk a lane visits (once
///     where it is fused into an fma, as on NVPTX): 2 laneChunks u;
///   - the butterfly adds 5 times, the split-K atomics up to S - 1 times.
/// Each step's relative error multiplies at most S, so
///   |err| <= (chunk + 2 laneChunks + 5 + split) u S (first order; the
///   second-order terms are below 1e-12 S here).
double kernelErrorBound(const QuantKernelSpec &spec, double absSum) {
  const int64_t chunks = (spec.k + spec.chunkCodes() - 1) / spec.chunkCodes();
  const int64_t perSplit = (chunks + spec.splitK - 1) / spec.splitK;
  const int64_t laneChunks = (perSplit + kWarpSize - 1) / kWarpSize;
  const double u = std::ldexp(1.0, -24);
  return double(spec.chunkCodes() + 2 * laneChunks + 5 + spec.splitK) * u *
             absSum +
         1e-30;
}

Errors runCase(HostJit &jit, const Case &c, uint32_t seed) {
  Errors errors;
  QuantKernelSpec spec;
  spec.family = KernelFamily::DecodeGemv;
  spec.bits = c.bits;
  spec.symmetric = c.symmetric;
  spec.groupSize = c.group;
  spec.activation = c.act;
  spec.rows = c.rows;
  spec.n = c.n;
  spec.k = c.k;
  spec.splitK = c.split;
  SCOPED_TRACE(spec.name());

  // Float weights with a per-row magnitude, quantized group-wise with scales
  // rounded to the activation format (the kernel reads them in it).
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> weight(size_t(c.n * c.k));
  for (int64_t r = 0; r < c.n; ++r)
    for (int64_t col = 0; col < c.k; ++col)
      weight[r * c.k + col] = normal(rng) * (0.5f + float(r % 7) / 4.0f);
  GroupwiseConfig config;
  config.bits = c.bits;
  config.symmetric = c.symmetric;
  config.groupSize = c.group == 0 ? c.k : c.group;
  config.scaleFormat =
      c.act == ActivationType::F16 ? FloatFormat::F16 : FloatFormat::BF16;
  Expected<GroupwiseQuantized> q =
      quantizeGroupwise(weight.data(), c.n, c.k, config);
  EXPECT_TRUE(bool(q)) << (q ? "" : q.message());
  if (!q)
    return errors;
  std::vector<float> dequant = dequantizeGroupwise(*q);

  // Activations, exactly representable in the activation format.
  std::vector<uint16_t> xBits(size_t(c.rows * c.k));
  std::vector<double> x(xBits.size());
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (size_t i = 0; i < xBits.size(); ++i) {
    xBits[i] = toBits(uniform(rng), c.act);
    x[i] = fromBits(xBits[i], c.act);
  }

  // Kernel operands: decode_gemv codes, scales in the activation format,
  // u8 zero-points.
  Expected<std::vector<uint8_t>> packed =
      packKernelLayout(spec.layout(), q->codes.data(), c.n, c.k);
  EXPECT_TRUE(bool(packed)) << (packed ? "" : packed.message());
  if (!packed)
    return errors;
  const int64_t words = int64_t(packed->size() / 4) / c.n;
  std::vector<int32_t> wordData(packed->size() / 4);
  std::memcpy(wordData.data(), packed->data(), packed->size());
  const int64_t groups = spec.groupsPerRow();
  std::vector<uint16_t> scaleBits(q->scales.size());
  for (size_t i = 0; i < scaleBits.size(); ++i) {
    scaleBits[i] = toBits(float(q->scales[i]), c.act);
    EXPECT_EQ(double(fromBits(scaleBits[i], c.act)), q->scales[i]);
  }
  std::vector<uint8_t> zeros(q->zeroPoints.begin(), q->zeroPoints.end());

  Buffer2D<uint16_t> xBuf(c.rows, c.k, xBits);
  Buffer2D<int32_t> wBuf(c.n, words, wordData);
  Buffer2D<uint16_t> sBuf(c.n, groups, scaleBits);
  Buffer2D<uint8_t> zBuf(c.n, groups, zeros);
  Buffer2D<float> yBuf(c.rows, c.n, std::vector<float>(size_t(c.rows * c.n), 0));

  std::unique_ptr<mlir::ExecutionEngine> engine = jit.compile(spec);
  EXPECT_NE(engine, nullptr);
  if (!engine)
    return errors;
  llvm::Error err =
      c.symmetric
          ? engine->invoke(spec.name(), &xBuf.desc, &wBuf.desc, &sBuf.desc,
                           &yBuf.desc)
          : engine->invoke(spec.name(), &xBuf.desc, &wBuf.desc, &sBuf.desc,
                           &zBuf.desc, &yBuf.desc);
  EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));

  for (int64_t t = 0; t < c.rows; ++t) {
    for (int64_t r = 0; r < c.n; ++r) {
      double ref = 0, refFloat = 0, absSum = 0;
      for (int64_t col = 0; col < c.k; ++col) {
        const double xv = x[t * c.k + col];
        ref += xv * double(dequant[r * c.k + col]);
        refFloat += xv * double(weight[r * c.k + col]);
        absSum += std::fabs(xv * double(dequant[r * c.k + col]));
      }
      const double got = yBuf.data[t * c.n + r];
      const double kernelErr = std::fabs(got - ref);
      const double bound = kernelErrorBound(spec, absSum);
      EXPECT_LE(kernelErr, bound)
          << "t " << t << " n " << r << ": kernel " << got << ", reference "
          << ref;
      errors.kernelMax = std::max(errors.kernelMax, kernelErr);
      errors.kernelBoundMin = std::min(errors.kernelBoundMin, bound);
      errors.quantMax = std::max(errors.quantMax, std::fabs(ref - refFloat));
      errors.yMax = std::max(errors.yMax, std::fabs(ref));
    }
  }
  std::cout << "[parity] " << spec.name() << ": max kernel error "
            << errors.kernelMax << ", max quantization error "
            << errors.quantMax << ", max |y| " << errors.yMax << "\n";
  return errors;
}

/// Every (width, symmetry, group, activation) combination, with T, shapes
/// and split-K rotating through tails in N (not a multiple of the 4 rows
/// per block) and in K (not a multiple of the 32- or 16-code chunk, and a
/// short last group), exact multiples, T = 1 and 16, and split-K.
std::vector<Case> allCases() {
  std::vector<Case> cases;
  const int64_t rows[] = {1, 3, 16, 5};
  const int64_t shapes[][2] = {{37, 300}, {64, 512}, {13, 1000}, {6, 77}};
  const int64_t splits[] = {1, 2, 1, 3};
  int i = 0;
  for (unsigned bits : {4u, 8u})
    for (bool symmetric : {true, false})
      for (int64_t group : {32, 64, 128, 0})
        for (ActivationType act : {ActivationType::F16, ActivationType::BF16}) {
          const int j = i++ % 4;
          cases.push_back({bits, symmetric, group, act, rows[j], shapes[j][0],
                           shapes[(j + bits) % 4][1], splits[(j + group) % 4]});
        }
  return cases;
}

TEST(DecodeGemvHostTest, ParityWithFloat64ReferenceForEveryVariant) {
  HostJit jit;
  uint32_t seed = 11;
  double worstRatio = 0;
  for (const Case &c : allCases()) {
    Errors e = runCase(jit, c, seed++);
    worstRatio = std::max(worstRatio, e.kernelMax / e.kernelBoundMin);
  }
  std::cout << "[parity] worst kernel error / smallest bound: " << worstRatio
            << "\n";
}

TEST(DecodeGemvHostTest, SplitKMatchesUnsplit) {
  // Splitting K changes only the order of f32 additions.
  HostJit jit;
  for (int64_t split : {1, 4, 7}) {
    Errors e = runCase(jit, {4, false, 32, ActivationType::F16, 2, 9, 448, split},
                       77);
    EXPECT_GT(e.yMax, 0.0);
  }
}

} // namespace
