//===- PrefillMmaHostTest.cpp - Prefill GEMM parity on the host -----------===//
//
// Operator parity (seed M8.9 0x09D) of the generated tensor-core GEMM: the
// builder that emits the NVPTX kernel also emits its host twin, which runs
// the same per-lane code and replays cp.async, ldmatrix and mma.sync on lane
// arrays (PrefillMmaHost.cpp). It is lowered to LLVM and JIT-run over codes
// packed by the numerics library's prefill_mma packer. Per output:
//
//   kernel error        |Y_kernel - (X What^T + b)|  (What = the reference
//                       dequantized weight s (q - z), all in float64)
//   quantization error  |X What^T - X W^T|  (W = the float weight)
//
// The kernel error is asserted against the rounding bound of the kernel's
// arithmetic (kernelErrorBound); the quantization error is reported.
//
//===----------------------------------------------------------------------===//

#include "HostKernelJit.h"

#include "qtensor/Numerics/Groupwise.h"
#include "qtensor/Numerics/KernelLayout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <random>

using namespace qtensor;
using namespace qtensor::test;

namespace {

struct Case {
  unsigned bits;
  bool symmetric;
  int64_t group; // 0: per-channel
  FloatType act;
  int64_t t, n, k;
  FloatType scale;
  FloatType out;
  bool bias;
};

QuantKernelSpec specOf(const Case &c) {
  QuantKernelSpec spec;
  spec.family = KernelFamily::PrefillMma;
  spec.bits = c.bits;
  spec.symmetric = c.symmetric;
  spec.groupSize = c.group;
  spec.activation = c.act;
  spec.scale = c.scale;
  spec.output = c.out;
  spec.bias = c.bias;
  spec.rows = kDynamicRows;
  spec.n = c.n;
  spec.k = c.k;
  return spec;
}

struct Errors {
  double kernelMax = 0, worstRatio = 0, quantMax = 0, yMax = 0;
};

/// The kernel's rounding error for one output, u = 2^-24, S = sum_k |x_k
/// What_k|, L = the longest group (min(G, K), or K per-channel), n = the
/// number of groups:
///   - B is exact (q - z in f16/bf16) and so is every product x (q - z);
///   - a group's partial sum adds its (at most L) products in f32, starting
///     from 0 (the mma accumulates into zeroed partial sums): (L - 1) u S
///     over all groups;
///   - each group's s * partial rounds once: u S over all groups (scaling
///     by s is exact in the reference, so the partial's error scales too);
///   - acc adds n such terms, starting from 0: (n - 1) u S;
///   - the bias add rounds once more: u (S + |b|);
///   - the rounding to a 16-bit output adds u_out (|y| + bound), u_out =
///     2^-11 (f16) or 2^-8 (bf16), plus 2^-25 for f16 subnormals.
/// First order; the second-order terms are below 1e-12 S here. The device
/// bound is the same with u = 2^-23: the tensor cores truncate when they
/// align and add (docs/codegen.md).
double kernelErrorBound(const QuantKernelSpec &spec, double absSum, double ref,
                        double bias) {
  const double u = std::ldexp(1.0, -24);
  const int64_t group = spec.effectiveGroupSize();
  const int64_t longest = std::min(group, spec.k);
  const int64_t groups = spec.groupsPerRow();
  double bound = double(longest + groups - 1) * u * absSum;
  if (spec.bias)
    bound += u * (absSum + std::fabs(bias));
  if (spec.output == FloatType::F16)
    bound +=
        std::ldexp(1.0, -11) * (std::fabs(ref) + bound) + std::ldexp(1.0, -25);
  else if (spec.output == FloatType::BF16)
    bound += std::ldexp(1.0, -8) * (std::fabs(ref) + bound);
  return bound + 1e-30;
}

Errors runCase(HostKernelJit &jit, const Case &c, uint32_t seed) {
  Errors errors;
  const QuantKernelSpec spec = specOf(c);
  SCOPED_TRACE(spec.name() + " T=" + std::to_string(c.t));
  const int64_t n = c.n, k = c.k, t = c.t;

  // Float weights with a per-row magnitude, quantized group-wise with scales
  // rounded to the scale format (the kernel reads them in it).
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> weight(size_t(n * k));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t col = 0; col < k; ++col)
      weight[r * k + col] = normal(rng) * (0.5f + float(r % 7) / 4.0f);
  GroupwiseConfig config;
  config.bits = c.bits;
  config.symmetric = c.symmetric;
  config.groupSize = c.group == 0 ? k : c.group;
  config.scaleFormat =
      c.scale == FloatType::F16 ? FloatFormat::F16 : FloatFormat::BF16;
  Expected<GroupwiseQuantized> q =
      quantizeGroupwise(weight.data(), n, k, config);
  EXPECT_TRUE(bool(q)) << (q ? "" : q.message());
  if (!q)
    return errors;
  std::vector<float> dequant = dequantizeGroupwise(*q);

  // Kernel operands: prefill_mma panels as [P, 128 S] words, scales in their
  // format, u8 zero-points, a bias in the output type.
  Expected<std::vector<uint8_t>> packed =
      packKernelLayout(spec.layout(), q->codes.data(), n, k);
  EXPECT_TRUE(bool(packed)) << (packed ? "" : packed.message());
  if (!packed)
    return errors;
  const int64_t steps = (k + 15) / 16;
  const int64_t panels = int64_t(packed->size() / 4) / (128 * steps);
  EXPECT_EQ(int64_t(packed->size()), panels * 128 * steps * 4);
  std::vector<int32_t> words(packed->size() / 4);
  std::memcpy(words.data(), packed->data(), packed->size());
  const int64_t groups = spec.groupsPerRow();
  std::vector<uint16_t> scaleBits(q->scales.size());
  for (size_t i = 0; i < scaleBits.size(); ++i) {
    scaleBits[i] = toBits(float(q->scales[i]), c.scale);
    EXPECT_EQ(double(fromBits(scaleBits[i], c.scale)), q->scales[i]);
  }
  std::vector<uint8_t> zeros(q->zeroPoints.begin(), q->zeroPoints.end());

  // Activations, exactly representable in their format.
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<uint16_t> xBits(size_t(t * k));
  std::vector<double> x(xBits.size());
  for (size_t i = 0; i < xBits.size(); ++i) {
    xBits[i] = toBits(uniform(rng), c.act);
    x[i] = fromBits(xBits[i], c.act);
  }
  std::vector<double> bias(static_cast<size_t>(n), 0.0);
  std::vector<uint16_t> bias16(static_cast<size_t>(n));
  std::vector<float> bias32(static_cast<size_t>(n));
  const FloatType out16 =
      c.out == FloatType::BF16 ? FloatType::BF16 : FloatType::F16;
  for (int64_t r = 0; r < n; ++r) {
    bias32[r] = 4.0f * uniform(rng);
    bias16[r] = toBits(bias32[r], out16);
    if (c.out != FloatType::F32)
      bias32[r] = fromBits(bias16[r], out16);
    bias[r] = c.bias ? bias32[r] : 0.0;
  }

  HostBuffer<uint16_t, 2> xBuf({t, k}, xBits);
  HostBuffer<int32_t, 2> wBuf({panels, 128 * steps}, words);
  HostBuffer<uint16_t, 2> sBuf({n, groups}, scaleBits);
  HostBuffer<uint8_t, 2> zBuf({n, groups}, zeros);
  HostBuffer<uint16_t, 1> b16Buf({n}, bias16);
  HostBuffer<float, 1> b32Buf({n}, bias32);
  // NaN-filled outputs: a store the kernel misses shows up.
  HostBuffer<uint16_t, 2> y16Buf({t, n},
                                 std::vector<uint16_t>(size_t(t * n), 0x7E00));
  HostBuffer<float, 2> y32Buf({t, n}, std::vector<float>(size_t(t * n), NAN));

  std::vector<void *> descriptors = {&xBuf.desc, &wBuf.desc, &sBuf.desc};
  if (!c.symmetric)
    descriptors.push_back(&zBuf.desc);
  if (c.bias)
    descriptors.push_back(c.out == FloatType::F32 ? (void *)&b32Buf.desc
                                                  : (void *)&b16Buf.desc);
  descriptors.push_back(c.out == FloatType::F32 ? (void *)&y32Buf.desc
                                                : (void *)&y16Buf.desc);

  std::unique_ptr<mlir::ExecutionEngine> engine =
      jit.compile(spec, buildPrefillMmaKernel);
  EXPECT_NE(engine, nullptr);
  if (!engine)
    return errors;
  std::vector<void *> packedArgs;
  for (void *&d : descriptors)
    packedArgs.push_back(&d);
  llvm::Error err =
      engine->invokePacked("_mlir_ciface_" + spec.name(), packedArgs);
  EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));

  int failures = 0;
  for (int64_t row = 0; row < t; ++row) {
    for (int64_t r = 0; r < n; ++r) {
      double ref = bias[r], refFloat = 0, absSum = 0;
      for (int64_t col = 0; col < k; ++col) {
        const double xv = x[row * k + col];
        ref += xv * double(dequant[r * k + col]);
        refFloat += xv * double(weight[r * k + col]);
        absSum += std::fabs(xv * double(dequant[r * k + col]));
      }
      const double got =
          c.out == FloatType::F32
              ? double(y32Buf.data[row * n + r])
              : double(fromBits(y16Buf.data[row * n + r], out16));
      const double kernelErr = std::fabs(got - ref);
      const double bound = kernelErrorBound(spec, absSum, ref, bias[r]);
      if (!(kernelErr <= bound) && failures++ < 5)
        ADD_FAILURE() << "t " << row << " n " << r << ": kernel " << got
                      << ", reference " << ref << ", bound " << bound;
      errors.kernelMax = std::max(errors.kernelMax, kernelErr);
      errors.worstRatio = std::max(errors.worstRatio, kernelErr / bound);
      errors.quantMax =
          std::max(errors.quantMax, std::fabs(ref - bias[r] - refFloat));
      errors.yMax = std::max(errors.yMax, std::fabs(ref));
    }
  }
  std::cout << "[parity] " << spec.name() << " T=" << t << ": max kernel error "
            << errors.kernelMax << " (" << errors.worstRatio
            << " of its bound), max quantization error " << errors.quantMax
            << ", max |y| " << errors.yMax << "\n";
  return errors;
}

/// Every (width, symmetry, group, activation) combination. Shapes rotate
/// through tails: T below, at and above the 16/32-row tiles; N inside one
/// 256-feature block, odd, past a panel (W4 64 / W8 32 rows), exact; K a
/// multiple of 8 but not 16, not a multiple of the 64-column stage or of the
/// group (a short last group), exact, and long enough for groups of 128 to
/// span several stages. Scale dtype, output dtype and bias rotate too.
std::vector<Case> allCases() {
  const int64_t rows[] = {37, 1, 64, 20};
  const int64_t ns[] = {300, 77, 256, 520};
  const int64_t ks[] = {520, 1024, 392, 264};
  const FloatType outs[] = {FloatType::F16, FloatType::BF16, FloatType::F32};
  std::vector<Case> cases;
  int i = 0;
  for (unsigned bits : {4u, 8u})
    for (bool symmetric : {true, false})
      for (int64_t group : {32, 64, 128, 0})
        for (FloatType act : {FloatType::F16, FloatType::BF16}) {
          const int j = i++;
          const FloatType scale =
              j % 5 == 2
                  ? (act == FloatType::F16 ? FloatType::BF16 : FloatType::F16)
                  : act;
          cases.push_back({bits, symmetric, group, act, rows[j % 4],
                           ns[(j / 4 + j) % 4], ks[(j + bits / 4) % 4], scale,
                           outs[j % 3], j % 2 == 1});
        }
  return cases;
}

TEST(PrefillMmaHostTest, ParityWithFloat64ReferenceForEveryVariant) {
  HostKernelJit jit;
  uint32_t seed = 5;
  double worst = 0;
  for (const Case &c : allCases()) {
    Errors e = runCase(jit, c, seed++);
    EXPECT_GT(e.yMax, 0.0);
    worst = std::max(worst, e.worstRatio);
  }
  std::cout << "[parity] worst kernel error / its bound: " << worst << "\n";
}

TEST(PrefillMmaHostTest, SmallShapesAndSingleTiles) {
  // One k16 step, one stage, K below the group, N below one n8 tile, T = 1;
  // and the largest T tail of a 32-row block.
  HostKernelJit jit;
  runCase(jit,
          {4, false, 128, FloatType::F16, 1, 5, 16, FloatType::F16,
           FloatType::F16, true},
          41);
  runCase(jit,
          {8, true, 64, FloatType::BF16, 31, 33, 72, FloatType::BF16,
           FloatType::BF16, false},
          42);
  runCase(jit,
          {4, true, 0, FloatType::BF16, 33, 64, 8, FloatType::BF16,
           FloatType::F32, false},
          43);
}

} // namespace
