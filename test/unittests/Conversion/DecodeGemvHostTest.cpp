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
// kernel's f32 arithmetic plus the one rounding to a 16-bit output (see
// kernelErrorBound); the quantization error is reported, since it belongs to
// the quantizer, not to the kernel. Outputs f32/f16/bf16, the bias epilogue,
// scales in the other 16-bit type than the activations, and dynamic T (every
// T = 1..16 through its bucket entry) are covered.
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

#include "HostKernelJit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <optional>
#include <random>
#include <vector>

using namespace qtensor;
using llvm::SmallVector;
using qtensor::test::fromBits;
using qtensor::test::toBits;

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

template <typename T> struct Buffer1D {
  std::vector<T> data;
  StridedMemRefType<T, 1> desc;
  explicit Buffer1D(std::vector<T> values) : data(std::move(values)) {
    desc.basePtr = desc.data = data.data();
    desc.offset = 0;
    desc.sizes[0] = static_cast<int64_t>(data.size());
    desc.strides[0] = 1;
  }
};

/// The 16-bit type of a 16-bit output.
FloatType halfOf(FloatType out) {
  return out == FloatType::F16 ? FloatType::F16 : FloatType::BF16;
}

/// The shared host JIT (HostKernelJit.h), building decode GEMV kernels.
class HostJit {
public:
  std::unique_ptr<mlir::ExecutionEngine> compile(const QuantKernelSpec &spec) {
    return jit.compile(spec, buildDecodeGemvKernel);
  }

private:
  qtensor::test::HostKernelJit jit;
};

struct Case {
  unsigned bits;
  bool symmetric;
  int64_t group; // 0: per-channel
  FloatType act;
  int64_t rows, n, k, split; // rows: kDynamicRows for a dynamic-T kernel
  FloatType scale;
  FloatType out = FloatType::F32;
  bool bias = false;
  Codebook codebook = Codebook::None; ///< unsigned indices (IQ4_NL, NF4)
  bool minZero = false; ///< unsigned codes with a float min (ggml)
};

QuantKernelSpec specOf(const Case &c) {
  QuantKernelSpec spec;
  spec.family = KernelFamily::DecodeGemv;
  spec.bits = c.bits;
  spec.symmetric = c.symmetric;
  spec.groupSize = c.group;
  spec.activation = c.act;
  spec.scale = c.scale;
  spec.output = c.out;
  spec.bias = c.bias;
  spec.rows = c.rows;
  spec.n = c.n;
  spec.k = c.k;
  spec.splitK = c.split;
  spec.codebook = c.codebook;
  spec.minZero = c.minZero;
  return spec;
}

struct Errors {
  double kernelMax = 0, quantMax = 0, yMax = 0;
  double worstRatio = 0; ///< max over outputs of kernel error / its bound
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
  // A codebook value that is not a small integer (NF4's), or a lane
  // decoded to s * q + m, makes x * value one more rounding per term.
  const bool inexactProducts = spec.codebook == Codebook::NF4 || spec.minZero;
  return double(spec.chunkCodes() + 2 * laneChunks + 5 + spec.splitK +
                (inexactProducts ? 1 : 0)) *
             u * absSum +
         1e-30;
}

/// Adds the epilogue: one more f32 rounding for the bias add, then the
/// rounding to a 16-bit output (unit roundoff 2^-11 for f16, 2^-8 for bf16)
/// of a value within `bound` of `ref`.
double epilogueBound(const QuantKernelSpec &spec, double bound, double ref,
                     double absSum, double bias) {
  if (spec.bias)
    bound += std::ldexp(1.0, -24) * (absSum + std::fabs(bias));
  if (spec.output == FloatType::F16)
    bound += std::ldexp(1.0, -11) * (std::fabs(ref) + bound);
  else if (spec.output == FloatType::BF16)
    bound += std::ldexp(1.0, -8) * (std::fabs(ref) + bound);
  return bound;
}

/// A quantized weight as the kernel reads it, and its float64 reference.
struct Problem {
  QuantKernelSpec spec;
  std::vector<float> weight, dequant; // [N, K]
  std::vector<int32_t> words;         // decode_gemv layout
  int64_t wordsPerRow = 0;
  std::vector<uint16_t> scaleBits; ///< f16/bf16 scales
  std::vector<float> scalesF32;    ///< f32 scales (a nested first level)
  std::vector<uint8_t> zeros;
  std::vector<uint16_t> minBits;  ///< f16/bf16 mins (minZero)
  std::vector<float> minsF32;     ///< f32 mins (a nested first level)
  std::vector<uint16_t> biasBits; // 16-bit outputs
  std::vector<float> biasF32;     // f32 output
  std::vector<double> bias;       // the bias values, exactly
};

/// Logical codes [N, K] packed into the decode_gemv words the kernel reads.
bool packWords(Problem &p, const std::vector<int32_t> &codes) {
  Expected<std::vector<uint8_t>> packed =
      packKernelLayout(p.spec.layout(), codes.data(), p.spec.n, p.spec.k);
  EXPECT_TRUE(bool(packed)) << (packed ? "" : packed.message());
  if (!packed)
    return false;
  p.wordsPerRow = int64_t(packed->size() / 4) / p.spec.n;
  p.words.resize(packed->size() / 4);
  std::memcpy(p.words.data(), packed->data(), packed->size());
  return true;
}

/// `p` with a random bias in the output dtype when its spec adds one.
Problem withBias(Problem p, std::mt19937 &rng) {
  if (!p.spec.bias)
    return p;
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  for (int64_t r = 0; r < p.spec.n; ++r) {
    float v = uniform(rng);
    if (p.spec.output == FloatType::F32) {
      p.biasF32.push_back(v);
      p.bias.push_back(v);
    } else {
      p.biasBits.push_back(toBits(v, halfOf(p.spec.output)));
      p.bias.push_back(fromBits(p.biasBits.back(), halfOf(p.spec.output)));
    }
  }
  return p;
}

/// Codes and qparams as ggml files keep them, for the forms the groupwise
/// quantizer does not make (a float min, f32 scales): random codes over the
/// whole range, positive scales, mins mostly negative, x = s * q (+ m).
/// W_hat is the weight (no quantization error). The reference holds each
/// element in f32: s * q + m is exact in double, so its f32 rounding is
/// the kernel's one fma.
std::optional<Problem> makeGgmlLikeProblem(const QuantKernelSpec &spec,
                                           std::mt19937 &rng) {
  Problem p;
  p.spec = spec;
  const int64_t n = spec.n, k = spec.k, g = spec.groupsPerRow();
  const int64_t group = spec.effectiveGroupSize();
  const int64_t lo = spec.symmetric ? -(int64_t(1) << (spec.bits - 1)) : 0;
  std::uniform_int_distribution<int64_t> code(
      lo, lo + (int64_t(1) << spec.bits) - 1);
  std::uniform_real_distribution<float> scale(0.002f, 0.05f), min(-0.6f, 0.1f);
  auto store = [&](float v, std::vector<uint16_t> &bits,
                   std::vector<float> &f32) -> double {
    if (spec.scaleType() == FloatType::F32) {
      f32.push_back(v);
      return v;
    }
    bits.push_back(toBits(v, spec.scaleType()));
    return fromBits(bits.back(), spec.scaleType());
  };
  std::vector<double> s, m;
  for (int64_t i = 0; i < n * g; ++i) {
    s.push_back(store(scale(rng), p.scaleBits, p.scalesF32));
    if (spec.minZero)
      m.push_back(store(min(rng), p.minBits, p.minsF32));
  }
  std::vector<int32_t> codes;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t col = 0; col < k; ++col) {
      codes.push_back(int32_t(code(rng)));
      const size_t at = size_t(r * g + col / group);
      const double x = s[at] * double(codes.back()) + (m.empty() ? 0 : m[at]);
      p.dequant.push_back(float(x));
    }
  p.weight = p.dequant;
  if (!packWords(p, codes))
    return std::nullopt;
  return withBias(std::move(p), rng);
}

/// Float weights with a per-row magnitude, quantized group-wise with scales
/// rounded to the scale format (the kernel reads them in it); a codebook's
/// random indices and scales.
std::optional<Problem> makeProblem(const QuantKernelSpec &spec,
                                   std::mt19937 &rng) {
  Problem p;
  p.spec = spec;
  const int64_t n = spec.n, k = spec.k;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  p.weight.resize(size_t(n * k));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t col = 0; col < k; ++col)
      p.weight[r * k + col] = normal(rng) * (0.5f + float(r % 7) / 4.0f);
  if (spec.codebook != Codebook::None) {
    // Random indices and f16/bf16 scales, as a GGUF IQ4_NL tensor holds
    // them: W_hat = s * table[q] is the weight (no quantization error).
    const std::vector<float> &table = codebookValues(spec.codebook);
    std::uniform_int_distribution<int32_t> index(0, int32_t(table.size()) - 1);
    std::uniform_real_distribution<float> scale(0.002f, 0.01f);
    const int64_t g = spec.groupsPerRow(), group = spec.effectiveGroupSize();
    std::vector<double> s;
    for (int64_t i = 0; i < n * g; ++i) {
      if (spec.scaleType() == FloatType::F32) {
        // IQ4_XS's first level: d * (ls - 32), an f16 times a 6-bit code.
        p.scalesF32.push_back(
            float(fromBits(toBits(scale(rng) / 16.0f, FloatType::F16),
                           FloatType::F16)) *
            float(int(index(rng)) - 8));
        s.push_back(p.scalesF32.back());
        continue;
      }
      p.scaleBits.push_back(toBits(scale(rng), spec.scaleType()));
      s.push_back(fromBits(p.scaleBits.back(), spec.scaleType()));
    }
    std::vector<int32_t> codes;
    p.weight.assign(size_t(n * k), 0.0f);
    p.dequant.assign(size_t(n * k), 0.0f);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t col = 0; col < k; ++col) {
        int32_t drawn;
        do // a codebook's NaN entries (E4M3's 0x7f, 0xff) name no weight
          drawn = index(rng);
        while (std::isnan(table[size_t(drawn)]));
        codes.push_back(drawn);
        p.dequant[r * k + col] = float(s[size_t(r * g + col / group)] *
                                       double(table[size_t(codes.back())]));
        p.weight[r * k + col] = p.dequant[r * k + col];
      }
    if (!packWords(p, codes))
      return std::nullopt;
    return withBias(std::move(p), rng);
  }
  if (spec.minZero || spec.scaleType() == FloatType::F32)
    return makeGgmlLikeProblem(spec, rng);
  GroupwiseConfig config;
  config.bits = spec.bits;
  config.symmetric = spec.symmetric;
  config.groupSize = spec.effectiveGroupSize();
  config.scaleFormat =
      spec.scaleType() == FloatType::F16 ? FloatFormat::F16 : FloatFormat::BF16;
  Expected<GroupwiseQuantized> q =
      quantizeGroupwise(p.weight.data(), n, k, config);
  EXPECT_TRUE(bool(q)) << (q ? "" : q.message());
  if (!q)
    return std::nullopt;
  p.dequant = dequantizeGroupwise(*q);
  if (!packWords(p, q->codes))
    return std::nullopt;
  for (double scale : q->scales) {
    p.scaleBits.push_back(toBits(float(scale), spec.scaleType()));
    EXPECT_EQ(double(fromBits(p.scaleBits.back(), spec.scaleType())), scale);
  }
  p.zeros.assign(q->zeroPoints.begin(), q->zeroPoints.end());
  return withBias(std::move(p), rng);
}

/// The output buffer in the output dtype, pre-filled with `fill` (as f32)
/// so that a call that writes nothing can be recognized.
struct Output {
  FloatType type;
  Buffer2D<float> f32;
  Buffer2D<uint16_t> half;
  Output(FloatType type, int64_t rows, int64_t cols, float fill)
      : type(type),
        f32(rows, cols,
            std::vector<float>(type == FloatType::F32 ? rows * cols : 0, fill)),
        half(rows, cols,
             std::vector<uint16_t>(
                 type == FloatType::F32 ? 0 : rows * cols,
                 type == FloatType::F32 ? 0 : toBits(fill, halfOf(type)))) {}
  void *descriptor() {
    return type == FloatType::F32 ? static_cast<void *>(&f32.desc)
                                  : static_cast<void *>(&half.desc);
  }
  double at(size_t i) const {
    return type == FloatType::F32 ? f32.data[i]
                                  : fromBits(half.data[i], halfOf(type));
  }
  bool untouched(float fill) const {
    if (type == FloatType::F32)
      return std::all_of(f32.data.begin(), f32.data.end(), [&](float v) {
        return std::memcmp(&v, &fill, 4) == 0;
      });
    const uint16_t bits = toBits(fill, halfOf(type));
    return std::all_of(half.data.begin(), half.data.end(),
                       [&](uint16_t v) { return v == bits; });
  }
};

/// Calls `symbol` (an entry of p.spec) with T = `rows` activation rows.
/// `xBits` are the activations; `y` receives the output.
llvm::Error call(mlir::ExecutionEngine &engine, Problem &p,
                 const std::string &symbol, int64_t rows,
                 std::vector<uint16_t> xBits, Output &y) {
  const QuantKernelSpec &spec = p.spec;
  Buffer2D<uint16_t> xBuf(rows, spec.k, std::move(xBits));
  Buffer2D<int32_t> wBuf(spec.n, p.wordsPerRow, p.words);
  Buffer2D<uint16_t> sBuf(spec.n, spec.groupsPerRow(), p.scaleBits);
  Buffer2D<float> sF32(spec.n, spec.groupsPerRow(), p.scalesF32);
  Buffer2D<uint8_t> zBuf(spec.n, spec.groupsPerRow(), p.zeros);
  Buffer2D<uint16_t> mBuf(spec.n, spec.groupsPerRow(), p.minBits);
  Buffer2D<float> mF32(spec.n, spec.groupsPerRow(), p.minsF32);
  Buffer1D<uint16_t> bHalf(p.biasBits);
  Buffer1D<float> bF32(p.biasF32);
  // The C interface: each argument a pointer to a memref descriptor, in
  // the ABI's order x, w, s, [z], [b], y; invokePacked takes a pointer to
  // each of those pointers.
  SmallVector<void *> descriptors = {&xBuf.desc, &wBuf.desc,
                                     spec.scaleType() == FloatType::F32
                                         ? static_cast<void *>(&sF32.desc)
                                         : static_cast<void *>(&sBuf.desc)};
  if (spec.minZero)
    descriptors.push_back(spec.scaleType() == FloatType::F32
                              ? static_cast<void *>(&mF32.desc)
                              : static_cast<void *>(&mBuf.desc));
  else if (spec.takesZeroPoints())
    descriptors.push_back(&zBuf.desc);
  if (spec.bias)
    descriptors.push_back(spec.output == FloatType::F32
                              ? static_cast<void *>(&bF32.desc)
                              : static_cast<void *>(&bHalf.desc));
  descriptors.push_back(y.descriptor());
  SmallVector<void *> packed;
  for (void *&d : descriptors)
    packed.push_back(&d);
  return engine.invokePacked("_mlir_ciface_" + symbol, packed);
}

/// Runs `symbol` with T rows of random activations and checks every output
/// against the float64 reference.
Errors runRows(mlir::ExecutionEngine &engine, Problem &p,
               const std::string &symbol, int64_t rows, std::mt19937 &rng) {
  Errors errors;
  const QuantKernelSpec &spec = p.spec;
  const int64_t n = spec.n, k = spec.k;
  // Activations, exactly representable in the activation format.
  std::vector<uint16_t> xBits(size_t(rows * k));
  std::vector<double> x(xBits.size());
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (size_t i = 0; i < xBits.size(); ++i) {
    xBits[i] = toBits(uniform(rng), spec.activation);
    x[i] = fromBits(xBits[i], spec.activation);
  }
  // Split-K adds into y, which must be zeroed; otherwise y starts as a
  // value the kernel must overwrite.
  Output y(spec.output, rows, n, spec.splitK > 1 ? 0.0f : 12345.0f);
  llvm::Error err = call(engine, p, symbol, rows, xBits, y);
  EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));

  for (int64_t t = 0; t < rows; ++t) {
    for (int64_t r = 0; r < n; ++r) {
      double ref = 0, refFloat = 0, absSum = 0;
      for (int64_t col = 0; col < k; ++col) {
        const double xv = x[t * k + col];
        ref += xv * double(p.dequant[r * k + col]);
        refFloat += xv * double(p.weight[r * k + col]);
        absSum += std::fabs(xv * double(p.dequant[r * k + col]));
      }
      const double b = spec.bias ? p.bias[r] : 0.0;
      ref += b;
      refFloat += b;
      const double got = y.at(size_t(t * n + r));
      const double kernelErr = std::fabs(got - ref);
      const double bound =
          epilogueBound(spec, kernelErrorBound(spec, absSum), ref, absSum, b);
      EXPECT_LE(kernelErr, bound)
          << symbol << " T " << rows << " t " << t << " n " << r << ": kernel "
          << got << ", reference " << ref;
      errors.kernelMax = std::max(errors.kernelMax, kernelErr);
      errors.worstRatio = std::max(errors.worstRatio, kernelErr / bound);
      errors.quantMax = std::max(errors.quantMax, std::fabs(ref - refFloat));
      errors.yMax = std::max(errors.yMax, std::fabs(ref));
    }
  }
  return errors;
}

/// Builds, runs and checks one static-T case.
Errors runCase(HostJit &jit, const Case &c, uint32_t seed) {
  QuantKernelSpec spec = specOf(c);
  SCOPED_TRACE(spec.name());
  std::mt19937 rng(seed);
  std::optional<Problem> p = makeProblem(spec, rng);
  std::unique_ptr<mlir::ExecutionEngine> engine = jit.compile(spec);
  EXPECT_NE(engine, nullptr);
  if (!p || !engine)
    return {};
  Errors errors = runRows(*engine, *p, spec.name(), spec.rows, rng);
  std::cout << "[parity] " << spec.name() << ": max kernel error "
            << errors.kernelMax << ", max quantization error "
            << errors.quantMax << ", max |y| " << errors.yMax << "\n";
  return errors;
}

/// Every (width, symmetry, group, activation) combination, with T, shapes
/// and split-K rotating through tails in N (not a multiple of the 4 rows
/// per block) and in K (not a multiple of the 32- or 16-code chunk, and a
/// short last group), exact multiples, T = 1 and 16, and split-K; scales in
/// the other 16-bit type every second case, outputs in f32 or the
/// activation type, and a bias every third case.
std::vector<Case> allCases() {
  std::vector<Case> cases;
  const int64_t rows[] = {1, 3, 16, 5};
  const int64_t shapes[][2] = {{37, 300}, {64, 512}, {13, 1000}, {6, 77}};
  const int64_t splits[] = {1, 2, 1, 3};
  int i = 0;
  for (unsigned bits : {4u, 8u})
    for (bool symmetric : {true, false})
      for (int64_t group : {32, 64, 128, 0})
        for (FloatType act : {FloatType::F16, FloatType::BF16}) {
          const int j = i % 4;
          const int64_t split = splits[(j + group) % 4];
          FloatType other =
              act == FloatType::F16 ? FloatType::BF16 : FloatType::F16;
          FloatType out =
              split > 1 || (i / 2) % 2 == 0
                  ? FloatType::F32
                  : (act == FloatType::F16 ? FloatType::F16 : FloatType::BF16);
          cases.push_back({bits, symmetric, group, act, rows[j], shapes[j][0],
                           shapes[(j + bits) % 4][1], split,
                           i % 2 ? other : act, out, i % 3 == 0});
          ++i;
        }
  // IQ4_NL (f16 scales per 32, T = 1 and 16, a K tail, split-K) and NF4
  // (bf16 scales per 64, a bias): unsigned indices into the table.
  const Codebook iq4nl = Codebook::IQ4NL, nf4 = Codebook::NF4;
  const FloatType f16 = FloatType::F16, bf16 = FloatType::BF16;
  cases.push_back(
      {4, false, 32, f16, 1, 37, 300, 1, f16, FloatType::F32, false, iq4nl});
  cases.push_back(
      {4, false, 32, bf16, 16, 64, 512, 2, f16, FloatType::F32, false, iq4nl});
  cases.push_back(
      {4, false, 32, f16, 5, 13, 1000, 1, f16, FloatType::F16, true, iq4nl});
  cases.push_back(
      {4, false, 64, bf16, 3, 6, 77, 1, bf16, FloatType::BF16, true, nf4});
  cases.push_back(
      {4, false, 128, f16, 16, 37, 300, 1, f16, FloatType::F32, false, nf4});
  // IQ4_XS: IQ4_NL's codes under f32 scales (its first level, decoded).
  cases.push_back({4, false, 32, f16, 1, 37, 256, 1, FloatType::F32,
                   FloatType::F32, false, iq4nl});
  cases.push_back({4, false, 32, bf16, 16, 13, 512, 2, FloatType::F32,
                   FloatType::F32, true, iq4nl});
  // FP4: E2M1 under f32 scales per 32 (MXFP4) and per 16 (NVFP4: each half
  // of a chunk summed and scaled on its own; K tails of 12 and of one
  // whole group, split-K); symmetric W4 in groups of 16.
  const Codebook e2m1 = Codebook::E2M1;
  cases.push_back({4, false, 32, f16, 5, 64, 512, 1, FloatType::F32,
                   FloatType::F16, true, e2m1});
  cases.push_back({4, false, 16, f16, 1, 37, 300, 1, FloatType::F32,
                   FloatType::F32, false, e2m1});
  cases.push_back({4, false, 16, bf16, 16, 13, 48, 2, FloatType::F32,
                   FloatType::F32, true, e2m1});
  cases.push_back(
      {4, true, 16, bf16, 3, 6, 77, 1, FloatType::F16, FloatType::BF16, true});
  // FP8: E4M3 codes (decoded from their bits, subnormals included) under
  // per-channel and per-32 scales, a K tail, split-K.
  const Codebook e4m3 = Codebook::E4M3;
  cases.push_back(
      {8, false, 0, f16, 1, 37, 300, 1, f16, FloatType::F32, false, e4m3});
  cases.push_back(
      {8, false, 32, bf16, 16, 13, 512, 2, bf16, FloatType::F32, true, e4m3});
  // ggml's kept codes: Q4_1 / Q5_1 (f16 min), Q4_K / Q5_K (f32 scale and
  // min), Q2_K (2-bit, min, groups of 16), Q5_0 (signed 5-bit), Q6_K and
  // Q3_K (signed 6- and 3-bit, f32 scales, groups of 16: a whole chunk of
  // byte fields). T = 1, 5 and 16, K tails, split-K, bias.
  const Codebook none = Codebook::None;
  const FloatType f32 = FloatType::F32;
  cases.push_back(
      {4, false, 32, f16, 1, 37, 300, 1, f16, f32, false, none, true});
  cases.push_back(
      {5, false, 32, bf16, 16, 13, 1000, 2, f16, f32, true, none, true});
  cases.push_back({4, false, 32, f16, 5, 64, 512, 1, f32, FloatType::F16, false,
                   none, true});
  cases.push_back(
      {5, false, 32, f16, 1, 7, 77, 1, f32, FloatType::BF16, true, none, true});
  cases.push_back(
      {2, false, 16, f16, 3, 37, 300, 3, f32, f32, true, none, true});
  cases.push_back({5, true, 32, f16, 1, 37, 300, 1, f16, f32, false});
  cases.push_back({6, true, 16, f16, 16, 64, 512, 2, f32, f32, true});
  cases.push_back(
      {6, true, 16, bf16, 1, 13, 1000, 1, f32, FloatType::BF16, false});
  cases.push_back({3, true, 16, bf16, 5, 6, 77, 1, f32, f32, true});
  return cases;
}

TEST(DecodeGemvHostTest, ParityWithFloat64ReferenceForEveryVariant) {
  HostJit jit;
  uint32_t seed = 11;
  double worstRatio = 0;
  for (const Case &c : allCases()) {
    Errors e = runCase(jit, c, seed++);
    worstRatio = std::max(worstRatio, e.worstRatio);
  }
  std::cout << "[parity] worst kernel error / its bound: " << worstRatio
            << "\n";
}

TEST(DecodeGemvHostTest, SplitKMatchesUnsplit) {
  // Splitting K changes only the order of f32 additions; the bias is added
  // once, by split 0.
  HostJit jit;
  for (int64_t split : {1, 4, 7})
    for (bool bias : {false, true}) {
      Errors e = runCase(jit,
                         {4, false, 32, FloatType::F16, 2, 9, 448, split,
                          FloatType::F16, FloatType::F32, bias},
                         77);
      EXPECT_GT(e.yMax, 0.0);
    }
}

TEST(DecodeGemvHostTest, DynamicTokensServeEveryT) {
  // One instance, every T = 1..16 through the entry whose range holds it;
  // every other entry, called with the same T, writes nothing.
  HostJit jit;
  const Case cases[] = {
      {4, false, 64, FloatType::BF16, kDynamicRows, 37, 300, 1, FloatType::F16,
       FloatType::BF16, true},
      {8, true, 0, FloatType::F16, kDynamicRows, 13, 77, 1, FloatType::F16,
       FloatType::F16, false},
  };
  uint32_t seed = 5;
  for (const Case &c : cases) {
    QuantKernelSpec spec = specOf(c);
    SCOPED_TRACE(spec.name());
    std::mt19937 rng(seed++);
    std::optional<Problem> p = makeProblem(spec, rng);
    std::unique_ptr<mlir::ExecutionEngine> engine = jit.compile(spec);
    ASSERT_TRUE(p && engine);
    KernelAbi abi = decodeGemvAbi(spec);
    ASSERT_EQ(abi.entries.size(), 5u);
    EXPECT_EQ(abi.entries.front().minRows, 1);
    EXPECT_EQ(abi.entries.back().maxRows, std::optional<int64_t>(16));
    for (int64_t rows = 1; rows <= 16; ++rows) {
      for (const KernelEntryPoint &entry : abi.entries) {
        if (rows >= entry.minRows && rows <= *entry.maxRows) {
          Errors e = runRows(*engine, *p, entry.symbol, rows, rng);
          EXPECT_GT(e.yMax, 0.0);
          continue;
        }
        Output y(spec.output, rows, spec.n, 12345.0f);
        llvm::Error err = call(*engine, *p, entry.symbol, rows,
                               std::vector<uint16_t>(rows * spec.k, 0), y);
        EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));
        EXPECT_TRUE(y.untouched(12345.0f))
            << entry.symbol << " wrote y for T = " << rows;
      }
    }
  }
}

TEST(DecodeGemvSpec, OptionsRoundTripThroughTheName) {
  Expected<QuantKernelSpec> spec = parseQuantKernelSpec(
      "decode_gemv:w4:g128:sym:bf16:tdyn:n64:k256:scf16:obf16:bias");
  ASSERT_TRUE(bool(spec)) << spec.message();
  EXPECT_TRUE(spec->dynamicRows());
  EXPECT_EQ(spec->scaleType(), FloatType::F16);
  EXPECT_EQ(spec->output, FloatType::BF16);
  EXPECT_TRUE(spec->bias);
  EXPECT_EQ(spec->name(),
            "qt_decode_gemv_w4sym_g128_bf16_tdyn_n64_k256_s1_scf16_obf16_bias");
  // Defaults add nothing to the name.
  spec = parseQuantKernelSpec("decode_gemv:w8:gch:asym:f16:t3:n5:k40:scf16");
  ASSERT_TRUE(bool(spec)) << spec.message();
  EXPECT_EQ(spec->name(), "qt_decode_gemv_w8asym_gch_f16_t3_n5_k40_s1");
  // Split partial sums meet through f32 atomics.
  spec = parseQuantKernelSpec("decode_gemv:w4:g32:sym:f16:t1:n8:k256:s2:of16");
  ASSERT_FALSE(bool(spec));
  EXPECT_NE(spec.message().find("split-K 2 needs an f32 output"),
            std::string::npos)
      << spec.message();
}

} // namespace
