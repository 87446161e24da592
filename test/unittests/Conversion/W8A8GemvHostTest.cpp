//===- W8A8GemvHostTest.cpp - W8A8 kernels against the integer oracle ----===//
//
// The W8A8 parity level: the activation quantizer's host twin must give the
// reference quantizer's codes, scales and zero-points bit for bit
// (Numerics/ActivationQuant.h), and the GEMV's host twin must agree with the
// integer reference GEMM (Numerics/ReferenceGemm.h, exact INT64 partial
// sums per group) on those codes within the rounding bound of its f32
// scaling. That is the kernel error; the quantization error (the oracle
// against X W_hat^T with the float activations) is reported beside it, as
// seed M8.9 0x09D separates them.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Conversion/W8A8Kernel.h"
#include "qtensor/Numerics/ActivationQuant.h"
#include "qtensor/Numerics/KernelLayout.h"
#include "qtensor/Numerics/ReferenceGemm.h"

#include "HostKernelJit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <random>
#include <vector>

using namespace qtensor;
using qtensor::test::fromBits;
using qtensor::test::HostBuffer;
using qtensor::test::toBits;

namespace {

W8A8GemvSpec specOf(const char *text) {
  Expected<W8A8GemvSpec> spec = parseW8A8GemvSpec(text);
  EXPECT_TRUE(bool(spec)) << (spec ? "" : spec.message());
  return spec ? *spec : W8A8GemvSpec();
}

/// Random int8 weights in the spec's form, with exact scales.
GroupwiseQuantized makeWeights(const W8A8GemvSpec &spec, std::mt19937 &rng) {
  GroupwiseQuantized w;
  w.rows = spec.n;
  w.cols = spec.k;
  w.groupSize = spec.groupSize == 0 ? spec.k : spec.groupSize;
  w.numGroupsPerRow = spec.groupsPerRow();
  w.range = spec.weightSymmetric ? CodeRange{-128, 127} : CodeRange{0, 255};
  std::uniform_int_distribution<int> code(int(w.range.qmin), int(w.range.qmax));
  for (int64_t i = 0; i < spec.n * spec.k; ++i)
    w.codes.push_back(code(rng));
  std::uniform_real_distribution<double> unit(0.5, 1.0);
  for (int64_t i = 0; i < spec.n * w.numGroupsPerRow; ++i) {
    double s = std::ldexp(unit(rng), -9);
    if (spec.scaleType() != FloatType::F32)
      s = fromBits(toBits(float(s), spec.scaleType()), spec.scaleType());
    else
      s = float(s);
    w.scales.push_back(s);
    if (!spec.weightSymmetric)
      w.zeroPoints.push_back(code(rng));
  }
  return w;
}

/// The kernels' outputs.
struct KernelRun {
  std::vector<int8_t> xq;
  std::vector<float> sx;
  std::vector<int32_t> zx;
  std::vector<double> y;
};

KernelRun runKernels(mlir::ExecutionEngine &engine, const W8A8GemvSpec &spec,
                     const std::vector<float> &x, const GroupwiseQuantized &w,
                     const std::vector<double> &bias) {
  const int64_t t = spec.rows, n = spec.n, k = spec.k;
  const int64_t g = spec.groupsPerRow();
  std::vector<uint16_t> xBits;
  for (float v : x)
    xBits.push_back(toBits(v, spec.activation));
  HostBuffer<uint16_t, 2> xBuf({t, k}, xBits);
  HostBuffer<int8_t, 2> xq({t, k}, std::vector<int8_t>(size_t(t * k), 99));
  HostBuffer<float, 1> sx({t}, std::vector<float>(size_t(t), -1.0f));
  HostBuffer<int32_t, 1> zx({t}, std::vector<int32_t>(size_t(t), -1));
  std::vector<void *> qArgs = {&xBuf.desc, &xq.desc, &sx.desc};
  if (!spec.activationSymmetric)
    qArgs.push_back(&zx.desc);
  std::vector<void *> packed;
  for (void *&a : qArgs)
    packed.push_back(&a);
  llvm::Error err =
      engine.invokePacked("_mlir_ciface_" + spec.quantizerName(), packed);
  EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));

  Expected<std::vector<uint8_t>> bytes =
      packKernelLayout(spec.layout(), w.codes.data(), n, k);
  EXPECT_TRUE(bool(bytes)) << (bytes ? "" : bytes.message());
  std::vector<int32_t> words(bytes ? bytes->size() / 4 : 0);
  if (bytes)
    std::memcpy(words.data(), bytes->data(), words.size() * 4);
  HostBuffer<int32_t, 2> wBuf({n, k / 4}, words);
  std::vector<uint16_t> sBits;
  std::vector<float> sF32;
  for (double s : w.scales) {
    sF32.push_back(float(s));
    if (spec.scaleType() != FloatType::F32)
      sBits.push_back(toBits(float(s), spec.scaleType()));
  }
  HostBuffer<uint16_t, 2> sHalf({n, g}, sBits);
  HostBuffer<float, 2> sFull({n, g}, sF32);
  std::vector<int8_t> zw(w.zeroPoints.begin(), w.zeroPoints.end());
  HostBuffer<int8_t, 2> zBuf({n, g}, zw);
  const bool f32Out = spec.output == FloatType::F32;
  std::vector<float> bF32(bias.begin(), bias.end());
  std::vector<uint16_t> bHalf;
  for (double b : bias)
    bHalf.push_back(f32Out ? 0 : toBits(float(b), spec.output));
  HostBuffer<float, 1> bFull({n}, bF32);
  HostBuffer<uint16_t, 1> bHalfBuf({n}, bHalf);
  HostBuffer<float, 2> yF32({t, n}, std::vector<float>(size_t(t * n), 1e30f));
  HostBuffer<uint16_t, 2> yHalf({t, n},
                                std::vector<uint16_t>(size_t(t * n), 0x7C00));
  std::vector<void *> gArgs = {&xq.desc, &sx.desc};
  if (!spec.activationSymmetric)
    gArgs.push_back(&zx.desc);
  gArgs.push_back(&wBuf.desc);
  gArgs.push_back(spec.scaleType() == FloatType::F32
                      ? static_cast<void *>(&sFull.desc)
                      : &sHalf.desc);
  if (!spec.weightSymmetric)
    gArgs.push_back(&zBuf.desc);
  if (spec.bias)
    gArgs.push_back(f32Out ? static_cast<void *>(&bFull.desc) : &bHalfBuf.desc);
  gArgs.push_back(f32Out ? static_cast<void *>(&yF32.desc) : &yHalf.desc);
  packed.clear();
  for (void *&a : gArgs)
    packed.push_back(&a);
  err = engine.invokePacked("_mlir_ciface_" + spec.name(), packed);
  EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));

  KernelRun r;
  r.xq = xq.data;
  r.sx = sx.data;
  r.zx = zx.data;
  for (size_t i = 0; i < size_t(t * n); ++i)
    r.y.push_back(f32Out ? double(yF32.data[i])
                         : double(fromBits(yHalf.data[i], spec.output)));
  return r;
}

class W8A8GemvHostTest : public ::testing::Test {
protected:
  std::unique_ptr<mlir::ExecutionEngine> compile(const W8A8GemvSpec &s) {
    return jit.compileModule([&](mlir::ModuleOp module) {
      return buildW8A8Kernels(module, s, KernelTarget::Host);
    });
  }
  qtensor::test::HostKernelJit jit;
};

TEST_F(W8A8GemvHostTest, QuantizerIsBitExactAndGemvMatchesTheIntegerOracle) {
  const char *cases[] = {
      "w8a8_gemv:g128:sym:sym:f16:t1:n40:k1024",
      "w8a8_gemv:gch:asym:sym:bf16:t3:n17:k2048:scf32",
      "w8a8_gemv:g32:sym:asym:f16:t4:n9:k1536:of16:bias",
      "w8a8_gemv:g64:asym:asym:bf16:t16:n12:k512:obf16:bias",
      "w8a8_gemv:g16:asym:asym:f16:t2:n6:k4112:scbf16",
  };
  std::mt19937 rng(8);
  for (const char *text : cases) {
    W8A8GemvSpec spec = specOf(text);
    SCOPED_TRACE(spec.name());
    const int64_t t = spec.rows, n = spec.n, k = spec.k;
    // Activations with an outlier channel and an all-zero row (T > 2), so
    // the per-token scales differ and the zero-range rule is exercised.
    std::vector<float> x(size_t(t * k));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int64_t r = 0; r < t; ++r)
      for (int64_t c = 0; c < k; ++c) {
        float v = r == 2 ? 0.0f : normal(rng) * (c == 7 ? 20.0f : 1.0f);
        if (!spec.activationSymmetric && r == 1)
          v = std::fabs(v) + 0.5f; // all positive: lo = 0
        x[size_t(r * k + c)] =
            fromBits(toBits(v, spec.activation), spec.activation);
      }
    GroupwiseQuantized w = makeWeights(spec, rng);
    std::vector<double> bias;
    if (spec.bias)
      for (int64_t r = 0; r < n; ++r)
        bias.push_back(
            fromBits(toBits(float(r % 5) * 0.25f - 0.5f, FloatType::F16),
                     FloatType::F16));
    auto engine = compile(spec);
    ASSERT_NE(engine, nullptr);
    KernelRun run = runKernels(*engine, spec, x, w, bias);

    // The quantizer: bit for bit.
    Expected<QuantizedActivations> ref =
        quantizeActivationsPerToken(x.data(), t, k, spec.activationSymmetric);
    ASSERT_TRUE(bool(ref)) << ref.message();
    for (int64_t r = 0; r < t; ++r) {
      EXPECT_EQ(run.sx[size_t(r)], float(ref->scales[size_t(r)]))
          << "row " << r;
      if (!spec.activationSymmetric)
        EXPECT_EQ(run.zx[size_t(r)], ref->zeroPoints[size_t(r)]) << "row " << r;
    }
    int64_t codeMismatches = 0;
    for (size_t i = 0; i < run.xq.size(); ++i) {
      const int32_t got = spec.activationSymmetric
                              ? int32_t(run.xq[i])
                              : int32_t(uint8_t(run.xq[i]));
      codeMismatches += got != ref->codes[i] ? 1 : 0;
    }
    EXPECT_EQ(codeMismatches, 0);

    // The GEMV against the integer oracle on the same codes.
    Expected<std::vector<double>> oracle = referenceQuantizedLinear(*ref, w);
    ASSERT_TRUE(bool(oracle)) << oracle.message();
    const double u = std::ldexp(1.0, -24);
    const int64_t chunks = k / 16;
    const int64_t laneChunks = (chunks + 31) / 32;
    double worst = 0, kernelMax = 0, quantMax = 0;
    for (int64_t r = 0; r < t; ++r) {
      const int64_t zx = spec.activationSymmetric ? 0 : ref->zeroPoints[r];
      for (int64_t o = 0; o < n; ++o) {
        // S = sum over chunks of |s_x s_w A_c|, A_c exact.
        double absSum = 0, floatRef = 0;
        for (int64_t c = 0; c < chunks; ++c) {
          const int64_t g = (c * 16) / w.groupSize;
          const size_t meta = size_t(o * w.numGroupsPerRow + g);
          const int64_t zw = w.zeroPoints.empty() ? 0 : w.zeroPoints[meta];
          int64_t a = 0;
          for (int64_t j = c * 16; j < c * 16 + 16; ++j) {
            const int64_t qw = w.codes[size_t(o * k + j)] - zw;
            a += (ref->codes[size_t(r * k + j)] - zx) * qw;
            floatRef += double(x[size_t(r * k + j)]) * w.scales[meta] * qw;
          }
          absSum += std::fabs(ref->scales[r] * w.scales[meta] * double(a));
        }
        double want = (*oracle)[size_t(r * n + o)];
        double bound = double(laneChunks + 6) * u * absSum + 1e-30;
        if (spec.bias) {
          want += bias[size_t(o)];
          floatRef += bias[size_t(o)];
          bound += u * (absSum + std::fabs(bias[size_t(o)]));
        }
        if (spec.output == FloatType::F16)
          bound += std::ldexp(1.0, -11) * (std::fabs(want) + bound);
        else if (spec.output == FloatType::BF16)
          bound += std::ldexp(1.0, -8) * (std::fabs(want) + bound);
        const double got = run.y[size_t(r * n + o)];
        const double err = std::fabs(got - want);
        EXPECT_LE(err, bound) << "t " << r << " n " << o << ": kernel " << got
                              << ", oracle " << want;
        worst = std::max(worst, err / bound);
        kernelMax = std::max(kernelMax, err);
        quantMax = std::max(quantMax, std::fabs(want - floatRef));
      }
    }
    std::cout << "[parity] " << spec.name() << ": max kernel error "
              << kernelMax << " (worst " << worst
              << " of its bound), max activation-quantization error "
              << quantMax << "\n";
  }
}

// The reference quantizer refuses a non-finite activation by position; a
// kernel cannot return an error, so it marks the token instead: NaN
// propagates through the IEEE maximum into the token's scale, and +-inf
// makes it infinite, so every output of that token is non-finite (never a
// plausible number), and the other tokens' outputs are exactly those of a
// call without the bad token.
TEST_F(W8A8GemvHostTest, ANonFiniteActivationPoisonsOnlyItsToken) {
  std::mt19937 rng(17);
  for (const char *text : {"w8a8_gemv:g128:sym:sym:f16:t3:n8:k512",
                           "w8a8_gemv:g64:asym:asym:bf16:t3:n8:k512:obf16"}) {
    W8A8GemvSpec spec = specOf(text);
    SCOPED_TRACE(spec.name());
    const int64_t t = spec.rows, n = spec.n, k = spec.k;
    std::vector<float> clean(size_t(t * k));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float &v : clean)
      v = fromBits(toBits(normal(rng), spec.activation), spec.activation);
    GroupwiseQuantized w = makeWeights(spec, rng);
    auto engine = compile(spec);
    ASSERT_NE(engine, nullptr);
    const KernelRun good = runKernels(*engine, spec, clean, w, {});
    for (float bad : {NAN, INFINITY, -INFINITY}) {
      std::vector<float> x = clean;
      x[size_t(1 * k + 37)] = bad;
      // The reference refuses it, naming the position.
      EXPECT_FALSE(bool(quantizeActivationsPerToken(x.data(), t, k,
                                                    spec.activationSymmetric)));
      const KernelRun run = runKernels(*engine, spec, x, w, {});
      EXPECT_FALSE(std::isfinite(run.sx[1])) << bad;
      for (int64_t o = 0; o < n; ++o) {
        EXPECT_FALSE(std::isfinite(run.y[size_t(1 * n + o)]))
            << bad << ": token 1, output " << o << " = "
            << run.y[size_t(1 * n + o)];
        for (int64_t r : {0, 2})
          EXPECT_EQ(run.y[size_t(r * n + o)], good.y[size_t(r * n + o)])
              << bad << ": token " << r << ", output " << o;
      }
    }
  }
}

TEST(W8A8GemvSpec, TextFormAndLimits) {
  W8A8GemvSpec spec =
      specOf("w8a8_gemv:g64:asym:sym:bf16:t4:n4096:k11008:scf32:of16:bias");
  EXPECT_EQ(spec.name(),
            "qt_w8a8_gemv_w8asym_a8sym_g64_bf16_t4_n4096_k11008_scf32_of16_"
            "bias");
  EXPECT_EQ(spec.quantizerName(), "qt_quantize_a8sym_bf16_t4_k11008");
  struct Bad {
    const char *text, *message;
  };
  const Bad bad[] = {
      {"w8a8_gemv:g64:sym:sym:f16:t1:n16:k72",
       "K must be a multiple of 16 (whole chunks in the correction sums), got "
       "72"},
      {"w8a8_gemv:g24:sym:sym:f16:t1:n16:k96",
       "group size must be a multiple of 16 dividing K = 96"},
      {"w8a8_gemv:g64:sym:sym:f16:t17:n16:k64",
       "decode kernels take T in [1, 16] rows, got 17"},
      {"w8a8_gemv:g64:sym:int:f16:t1:n16:k64", "bad code kinds 'sym:int'"},
      {"w8a8_gemv:g64:sym:sym:f16:t1:n16:k64:bias:bias",
       "option 'bias' given twice"},
  };
  for (const Bad &b : bad) {
    Expected<W8A8GemvSpec> s = parseW8A8GemvSpec(b.text);
    ASSERT_FALSE(bool(s)) << b.text;
    EXPECT_NE(s.message().find(b.message), std::string::npos)
        << b.text << ": " << s.message();
  }
}

} // namespace
