//===- HostGemmHostTest.cpp - The CPU GEMV/GEMM against float64 -----------===//
//
// Operator parity (seed M8.9 0x09D) of the host GEMM: codes packed by the
// numerics library's decode_gemv packer, the kernel JIT-compiled through the
// host lowering, every output compared with a float64 evaluation of the
// dequantized weight (the kernel error), bounded by the order-free rounding
// bound of Runtime/Reference.h: gamma(K + 2) sum |x W_hat| plus half an ulp
// of a 16-bit output. The quantization error (against the float weight) is
// printed, not asserted: it belongs to the quantizer.
//
// Each case runs T = 1, 3, 4, 5 and 9 (the four-row blocks and the rows
// left over), and once more as three calls on ranges of output rows the
// way the runtime splits a linear across threads: the split result must be
// bit-identical to the whole call.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Conversion/KernelBuilders.h"
#include "qtensor/Kernels/HostInt8Tiles.h"
#include "qtensor/Numerics/ActivationQuant.h"
#include "qtensor/Numerics/FloatFormats.h"
#include "qtensor/Numerics/Groupwise.h"
#include "qtensor/Numerics/KernelLayout.h"

#include "HostKernelJit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <random>

using namespace qtensor;
using qtensor::test::fromBits;
using qtensor::test::HostBuffer;
using qtensor::test::toBits;

namespace {

struct Case {
  unsigned bits;
  bool symmetric;
  int64_t group; ///< 0: per output channel
  FloatType act;
  FloatType scale;
  FloatType out;
  bool bias;
  int64_t n, k;
  bool minZero = false; ///< unsigned codes with a float min (ggml)
  Codebook codebook = Codebook::None; ///< unsigned indices (IQ4_NL, NF4)
  bool int8Activations = false;       ///< T = 1 quantizes X per 32 (ggml Q8_0)
};

QuantKernelSpec specOf(const Case &c) {
  QuantKernelSpec spec;
  spec.family = KernelFamily::HostGemm;
  spec.bits = c.bits;
  spec.symmetric = c.symmetric;
  spec.minZero = c.minZero;
  spec.codebook = c.codebook;
  spec.groupSize = c.group;
  spec.activation = c.act;
  spec.scale = c.scale;
  spec.output = c.out;
  spec.bias = c.bias;
  spec.rows = kDynamicRows;
  spec.n = c.n;
  spec.k = c.k;
  spec.quantizedActivations = c.int8Activations;
  return spec;
}

FloatType halfOf(FloatType out) {
  return out == FloatType::F16 ? FloatType::F16 : FloatType::BF16;
}

/// The weight operands as the kernel reads them and W_hat in float64.
struct Weights {
  std::vector<int32_t> words;
  int64_t wordsPerRow = 0;
  /// Scales (and a min zero-point's values) in the scale dtype's bytes;
  /// integer zero-points one byte each.
  std::vector<uint8_t> scales, zeros;
  size_t qparamWidth = 2;         ///< bytes per scale
  std::vector<uint32_t> biasBits; ///< f32 or 16-bit bits, per output dtype
  std::vector<double> bias, dequant, weight;
  /// |s q| + |m| with a min, what the rounding bound scales with (the
  /// int8 kernel sums s q x and m x apart); empty: |dequant|.
  std::vector<double> magnitude;
};

/// A scale-dtype value: `v` rounded to it, appended to `bytes` as stored.
float storeQParam(float v, FloatType type, std::vector<uint8_t> &bytes) {
  if (type == FloatType::F32) {
    uint8_t b[4];
    std::memcpy(b, &v, 4);
    bytes.insert(bytes.end(), b, b + 4);
    return v;
  }
  uint16_t h = toBits(v, type);
  bytes.push_back(uint8_t(h));
  bytes.push_back(uint8_t(h >> 8));
  return fromBits(h, type);
}

/// Codes and qparams as ggml files store them (random codes over the whole
/// range, positive scales, negative mins: x = s * q + m; with a codebook
/// x = s * table[q]), for the forms the groupwise quantizer does not make:
/// a min zero-point, f32 scales, codebooks.
GroupwiseQuantized ggmlLikeCodes(const QuantKernelSpec &spec, Weights &w,
                                 std::mt19937 &rng) {
  GroupwiseQuantized q;
  const int64_t g = spec.groupsPerRow();
  const int64_t lo = spec.symmetric ? -(int64_t(1) << (spec.bits - 1)) : 0;
  const int64_t hi = lo + (int64_t(1) << spec.bits) - 1;
  std::uniform_int_distribution<int64_t> code(lo, hi);
  std::uniform_real_distribution<float> scale(0.002f, 0.05f), min(-0.6f, 0.1f);
  std::vector<float> s, m;
  const std::vector<float> &table = codebookValues(spec.codebook);
  for (int64_t i = 0; i < spec.n * g; ++i) {
    s.push_back(storeQParam(scale(rng), spec.scaleType(), w.scales));
    if (spec.minZero)
      m.push_back(storeQParam(min(rng), spec.scaleType(), w.zeros));
  }
  const int64_t group = spec.effectiveGroupSize();
  for (int64_t r = 0; r < spec.n; ++r)
    for (int64_t c = 0; c < spec.k; ++c) {
      int32_t drawn;
      do // a codebook's NaN entries (E4M3's 0x7f, 0xff) name no weight
        drawn = int32_t(code(rng));
      while (!table.empty() && std::isnan(table[size_t(drawn)]));
      q.codes.push_back(drawn);
      const size_t at = size_t(r * g + c / group);
      const int32_t q1 = q.codes.back();
      double x = double(s[at]) *
                 (table.empty() ? double(q1) : double(table[size_t(q1)]));
      w.dequant.push_back(spec.minZero ? x + double(m[at]) : x);
      if (spec.minZero)
        w.magnitude.push_back(std::fabs(x) + std::fabs(double(m[at])));
    }
  w.weight = w.dequant; // no quantization error: the codes are given
  return q;
}

Weights makeWeights(const QuantKernelSpec &spec, std::mt19937 &rng) {
  Weights w;
  w.qparamWidth = spec.scaleType() == FloatType::F32 ? 4 : 2;
  GroupwiseQuantized given;
  const GroupwiseQuantized *q = &given;
  Expected<GroupwiseQuantized> quantized = GroupwiseQuantized{};
  if (spec.minZero || spec.scaleType() == FloatType::F32 ||
      spec.codebook != Codebook::None) {
    given = ggmlLikeCodes(spec, w, rng);
  } else {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    w.weight.resize(size_t(spec.n * spec.k));
    std::vector<float> f(w.weight.size());
    for (size_t i = 0; i < f.size(); ++i)
      w.weight[i] = f[i] = normal(rng) * (0.5f + float(i % 5) / 3.0f);
    GroupwiseConfig config;
    config.bits = spec.bits;
    config.symmetric = spec.symmetric;
    config.groupSize = spec.effectiveGroupSize();
    config.scaleFormat = spec.scaleType() == FloatType::F16 ? FloatFormat::F16
                                                            : FloatFormat::BF16;
    quantized = quantizeGroupwise(f.data(), spec.n, spec.k, config);
    EXPECT_TRUE(bool(quantized)) << (quantized ? "" : quantized.message());
    if (!quantized)
      return w;
    q = &*quantized;
    for (float v : dequantizeGroupwise(*q))
      w.dequant.push_back(v);
    for (double s : q->scales)
      storeQParam(float(s), spec.scaleType(), w.scales);
    w.zeros.assign(q->zeroPoints.begin(), q->zeroPoints.end());
  }
  Expected<std::vector<uint8_t>> packed =
      packKernelLayout(spec.layout(), q->codes.data(), spec.n, spec.k);
  EXPECT_TRUE(bool(packed)) << (packed ? "" : packed.message());
  if (!packed)
    return w;
  w.words.resize(packed->size() / 4);
  std::memcpy(w.words.data(), packed->data(), packed->size());
  w.wordsPerRow = int64_t(w.words.size()) / spec.n;
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  if (spec.bias)
    for (int64_t r = 0; r < spec.n; ++r) {
      float v = uniform(rng);
      if (spec.output == FloatType::F32) {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        w.biasBits.push_back(bits);
        w.bias.push_back(v);
      } else {
        uint16_t h = toBits(v, halfOf(spec.output));
        w.biasBits.push_back(h);
        w.bias.push_back(fromBits(h, halfOf(spec.output)));
      }
    }
  return w;
}

/// y as doubles, from raw output storage.
double outputAt(const QuantKernelSpec &spec, const std::vector<uint32_t> &f32,
                const std::vector<uint16_t> &half, size_t i) {
  if (spec.output == FloatType::F32) {
    float v;
    std::memcpy(&v, &f32[i], 4);
    return v;
  }
  return fromBits(half[i], halfOf(spec.output));
}

/// Calls the kernel for output rows [n0, n1) of T activation rows; y is
/// the whole [T, N] output (f32 or 16-bit storage per the spec).
llvm::Error callRows(mlir::ExecutionEngine &engine, const QuantKernelSpec &spec,
                     Weights &w, std::vector<uint16_t> &x, int64_t t,
                     int64_t n0, int64_t n1, std::vector<uint32_t> &yF32,
                     std::vector<uint16_t> &yHalf) {
  const int64_t g = spec.groupsPerRow(), rows = n1 - n0;
  StridedMemRefType<uint16_t, 2> xd{
      x.data(), x.data(), 0, {t, spec.k}, {spec.k, 1}};
  int32_t *wp = w.words.data() + n0 * w.wordsPerRow;
  StridedMemRefType<int32_t, 2> wd{
      wp, wp, 0, {rows, w.wordsPerRow}, {w.wordsPerRow, 1}};
  // Descriptors count elements; the pointers start at row n0's bytes.
  uint8_t *sp = w.scales.data() + size_t(n0 * g) * w.qparamWidth;
  StridedMemRefType<uint8_t, 2> sd{sp, sp, 0, {rows, g}, {g, 1}};
  const size_t zWidth = spec.minZero ? w.qparamWidth : 1;
  uint8_t *zp =
      w.zeros.empty() ? nullptr : w.zeros.data() + size_t(n0 * g) * zWidth;
  StridedMemRefType<uint8_t, 2> zd{zp, zp, 0, {rows, g}, {g, 1}};
  // The bias in its dtype: f32 words or 16-bit halves.
  std::vector<uint16_t> biasHalf(w.biasBits.begin(), w.biasBits.end());
  void *bp = spec.output == FloatType::F32
                 ? static_cast<void *>(w.biasBits.data() + n0)
                 : static_cast<void *>(biasHalf.data() + n0);
  StridedMemRefType<uint32_t, 1> bd{
      static_cast<uint32_t *>(bp), static_cast<uint32_t *>(bp), 0, {rows}, {1}};
  void *yp = spec.output == FloatType::F32
                 ? static_cast<void *>(yF32.data() + n0)
                 : static_cast<void *>(yHalf.data() + n0);
  StridedMemRefType<uint32_t, 2> yd{static_cast<uint32_t *>(yp),
                                    static_cast<uint32_t *>(yp),
                                    0,
                                    {t, rows},
                                    {spec.n, 1}};
  llvm::SmallVector<void *> descriptors = {&xd, &wd, &sd};
  if (spec.takesZeroPoints())
    descriptors.push_back(&zd);
  if (spec.bias)
    descriptors.push_back(&bd);
  descriptors.push_back(&yd);
  llvm::SmallVector<void *> packed;
  for (void *&d : descriptors)
    packed.push_back(&d);
  return engine.invokePacked("_mlir_ciface_" + spec.name(), packed);
}

/// Runs T rows whole and split; checks every output against float64.
/// `int8EveryT`: the kernel quantizes X at every T (AMX tiles), not at
/// T = 1 only.
void runRows(mlir::ExecutionEngine &engine, const QuantKernelSpec &spec,
             Weights &w, int64_t t, bool int8EveryT, std::mt19937 &rng,
             double &worst, double &quantMax) {
  std::vector<uint16_t> x(size_t(t * spec.k));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (uint16_t &v : x)
    v = toBits(uniform(rng), spec.activation);
  const size_t outputs = size_t(t * spec.n);
  const bool f32 = spec.output == FloatType::F32;
  // Pre-filled with NaN bits: every output must be written.
  std::vector<uint32_t> yF32(f32 ? outputs : 0, 0x7fc00000u);
  std::vector<uint16_t> yHalf(f32 ? 0 : outputs, 0x7e00u);
  llvm::Error err = callRows(engine, spec, w, x, t, 0, spec.n, yF32, yHalf);
  ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));

  std::vector<uint32_t> splitF32(yF32.size(), 0x7fc00000u);
  std::vector<uint16_t> splitHalf(yHalf.size(), 0x7e00u);
  const int64_t cuts[] = {0, spec.n / 3, (2 * spec.n) / 3 + 1, spec.n};
  for (int i = 0; i < 3; ++i) {
    if (cuts[i] >= cuts[i + 1])
      continue;
    llvm::Error e = callRows(engine, spec, w, x, t, cuts[i], cuts[i + 1],
                             splitF32, splitHalf);
    ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
  }
  EXPECT_EQ(yF32, splitF32) << "T = " << t << ": row-split differs";
  EXPECT_EQ(yHalf, splitHalf) << "T = " << t << ": row-split differs";

  const double u = std::ldexp(1.0, -24);
  const double gamma = double(spec.k + 2) * u / (1.0 - double(spec.k + 2) * u);
  const double outU = spec.output == FloatType::F16    ? std::ldexp(1.0, -11)
                      : spec.output == FloatType::BF16 ? std::ldexp(1.0, -8)
                                                       : 0.0;
  // The X the kernel multiplies: with int8 activations at T = 1 (at every
  // T on AMX tiles), X quantized per 32 (its error is quantization error,
  // counted below).
  std::vector<double> xs;
  for (uint16_t v : x)
    xs.push_back(fromBits(v, spec.activation));
  std::vector<double> xk = spec.quantizedActivations && (t == 1 || int8EveryT)
                               ? blockQuantizedActivations(xs, t, spec.k)
                               : xs;
  for (int64_t row = 0; row < t; ++row)
    for (int64_t n = 0; n < spec.n; ++n) {
      double ref = 0, refFloat = 0, absSum = 0;
      for (int64_t c = 0; c < spec.k; ++c) {
        const double xv = xk[size_t(row * spec.k + c)];
        ref += xv * w.dequant[size_t(n * spec.k + c)];
        refFloat +=
            xs[size_t(row * spec.k + c)] * w.weight[size_t(n * spec.k + c)];
        const size_t at = size_t(n * spec.k + c);
        absSum += w.magnitude.empty() ? std::fabs(xv * w.dequant[at])
                                      : std::fabs(xv) * w.magnitude[at];
      }
      if (spec.bias) {
        ref += w.bias[size_t(n)];
        refFloat += w.bias[size_t(n)];
        absSum += std::fabs(w.bias[size_t(n)]);
      }
      const double got = outputAt(spec, yF32, yHalf, size_t(row * spec.n + n));
      const double bound =
          gamma * absSum + outU * std::fabs(ref) + std::ldexp(1.0, -25);
      const double err = std::fabs(got - ref);
      ASSERT_TRUE(std::isfinite(got))
          << "T = " << t << " output [" << row << ", " << n << "] not written";
      EXPECT_LE(err, bound) << "T = " << t << " output [" << row << ", " << n
                            << "]: " << got << ", reference " << ref;
      worst = std::max(worst, err / bound);
      quantMax = std::max(quantMax, std::fabs(ref - refFloat));
    }
}

/// Every width, symmetry and group, both activation types with scales of
/// either type, the three outputs and the bias, over shapes with a K tail
/// (not a multiple of the 32- or 16-code chunk) and a short last group;
/// T = 1 takes the one-pass path, T > 1 the decoded-row path, except for
/// rows longer than the stack buffer (the last two cases). Then the forms
/// of kept ggml codes: 2-, 3-, 5- and 6-bit codes in bytes, a min
/// zero-point, f32 scales and groups of 16.
std::vector<Case> allCases() {
  std::vector<Case> cases;
  const int64_t shapes[][2] = {{37, 300}, {64, 512}, {13, 1000}, {7, 77}};
  int i = 0;
  for (unsigned bits : {4u, 8u})
    for (bool symmetric : {true, false})
      for (int64_t group : {32, 64, 128, 0}) {
        const FloatType act = i % 2 ? FloatType::BF16 : FloatType::F16;
        const FloatType scale = (i / 2) % 2 ? FloatType::F16 : FloatType::BF16;
        const FloatType out = i % 3 == 0   ? FloatType::F32
                              : i % 3 == 1 ? FloatType::F16
                                           : FloatType::BF16;
        cases.push_back({bits, symmetric, group, act, scale, out, i % 4 == 1,
                         shapes[i % 4][0], shapes[(i + bits) % 4][1]});
        ++i;
      }
  // A row too long for the stack buffer: every T takes the one-pass path.
  cases.push_back({4, false, 128, FloatType::F16, FloatType::F16,
                   FloatType::F32, true, 3, 33000});
  cases.push_back({8, true, 0, FloatType::BF16, FloatType::BF16,
                   FloatType::BF16, false, 2, 32800});
  const FloatType f16 = FloatType::F16, bf16 = FloatType::BF16;
  // Q4_1 / Q5_1 (f16 min), Q4_K / Q5_K (f32 scale and min), Q5_0, Q6_K.
  cases.push_back({4, false, 32, f16, FloatType::F16, FloatType::F32, false, 37,
                   300, true});
  cases.push_back({5, false, 32, bf16, FloatType::F16, FloatType::F16, true, 13,
                   1000, true});
  cases.push_back({4, false, 32, f16, FloatType::F32, FloatType::F16, false, 64,
                   512, true});
  cases.push_back(
      {5, false, 32, f16, FloatType::F32, FloatType::BF16, true, 7, 77, true});
  cases.push_back(
      {5, true, 32, f16, FloatType::F16, FloatType::F32, false, 37, 300});
  cases.push_back(
      {6, true, 16, f16, FloatType::F32, FloatType::F32, true, 64, 512});
  cases.push_back(
      {6, true, 16, bf16, FloatType::F32, FloatType::F16, false, 13, 1000});
  // Q2_K (2-bit codes with an f32 min, groups of 16) and Q3_K (signed
  // 3-bit codes, groups of 16), one per byte.
  cases.push_back(
      {2, false, 16, f16, FloatType::F32, FloatType::F32, true, 37, 300, true});
  cases.push_back(
      {2, false, 16, bf16, FloatType::F32, FloatType::F16, false, 7, 77, true});
  cases.push_back(
      {3, true, 16, f16, FloatType::F32, FloatType::BF16, false, 64, 512});
  cases.push_back(
      {3, true, 16, bf16, FloatType::F32, FloatType::F32, true, 13, 1000});
  // A min zero-point on a row too long for the stack buffer.
  cases.push_back({4, false, 32, f16, FloatType::F32, FloatType::F32, false, 2,
                   33024, true});
  // IQ4_NL (f16 d per 32; a K tail and a short last group included), NF4
  // with bf16 scales in groups of 64, IQ4_XS's f32 first level, and a
  // codebook on a row too long for the stack buffer.
  const Codebook iq4nl = Codebook::IQ4NL, nf4 = Codebook::NF4;
  cases.push_back({4, false, 32, f16, FloatType::F16, FloatType::F32, false, 37,
                   300, false, iq4nl});
  cases.push_back({4, false, 32, bf16, FloatType::F16, FloatType::F16, true, 64,
                   512, false, iq4nl});
  cases.push_back({4, false, 64, bf16, FloatType::BF16, FloatType::BF16, true,
                   13, 1000, false, nf4});
  cases.push_back({4, false, 32, f16, FloatType::F32, FloatType::F32, false, 7,
                   256, false, iq4nl});
  cases.push_back({4, false, 32, f16, FloatType::F16, FloatType::F32, true, 2,
                   33024, false, iq4nl});
  // FP4: E2M1 codes under f32 scales (decoded from e8m0 / ue4m3 bytes) in
  // groups of 32 (MXFP4) and 16 (NVFP4: two groups per 32-code chunk,
  // each half scaled on its own; K tails of 12 and of one whole group);
  // symmetric W4 in groups of 16 the same way.
  const Codebook e2m1 = Codebook::E2M1;
  cases.push_back({4, false, 32, bf16, FloatType::F32, FloatType::BF16, true,
                   64, 512, false, e2m1});
  cases.push_back({4, false, 16, f16, FloatType::F32, FloatType::F32, false, 37,
                   300, false, e2m1});
  cases.push_back({4, false, 16, bf16, FloatType::F32, FloatType::F16, true, 13,
                   48, false, e2m1});
  cases.push_back({4, false, 16, f16, FloatType::F32, FloatType::F32, false, 2,
                   33024, false, e2m1});
  cases.push_back(
      {4, true, 16, f16, FloatType::F16, FloatType::F32, true, 7, 77});
  // FP8: E4M3 codes decoded from their bits (subnormals included) under
  // per-channel and per-32 scales, a K tail.
  const Codebook e4m3 = Codebook::E4M3;
  cases.push_back({8, false, 0, f16, FloatType::F16, FloatType::F32, false, 37,
                   300, false, e4m3});
  cases.push_back({8, false, 32, bf16, FloatType::BF16, FloatType::BF16, true,
                   13, 1000, false, e4m3});
  // Int8 activations at T = 1: Q4_0 and Q8_0 forms with K tails (300: a
  // short last block; 77: a tail inside a byte chunk), W4 in groups of 128
  // with a short last group and per channel, Q6_K (f32 scales per 16 byte
  // codes), Q5_0, Q3_K, and the longest row it takes with 8- and 6-bit
  // codes; then codes with a min: Q4_K and Q5_K (f32 scales and mins per
  // 32), Q4_1 (f16), Q2_K (per 16), with K tails, and the longest row;
  // then integer zero-points (GPTQ's and `asym`'s form): W4 per 128 and
  // per channel, 5-bit per 32 and 3-bit per 16 in bytes, the longest row.
  // The forms x86-64-v4-amx runs on int8 tiles at T > 1 as well (signed
  // codes or codes with a min, groups of 16 or whole 32s, K a multiple of
  // 32): Q4_0, Q8_0, W4 per 128 with bf16 outputs, Q5_0, Q6_K and Q3_K
  // (16-code steps), Q4_K, Q5_K and Q2_K (a min), integer zero-points per
  // 128, 32 and 16 (GPTQ's form), with N not a multiple of the 16-row
  // strip.
  for (Case c : {
           Case{4, true, 32, f16, FloatType::F16, FloatType::F32, true, 37,
                512},
           Case{8, true, 32, bf16, FloatType::BF16, FloatType::F16, true, 50,
                256},
           Case{4, true, 128, f16, FloatType::F16, FloatType::BF16, true, 33,
                1024},
           Case{5, true, 32, f16, FloatType::F16, FloatType::F16, false, 20,
                320},
           Case{6, true, 16, f16, FloatType::F32, FloatType::F32, true, 37,
                512},
           Case{3, true, 16, bf16, FloatType::F32, FloatType::F16, false, 18,
                256},
           Case{4, false, 32, f16, FloatType::F32, FloatType::F32, false, 37,
                512, true},
           Case{5, false, 32, bf16, FloatType::F32, FloatType::BF16, true, 33,
                320, true},
           Case{2, false, 16, f16, FloatType::F32, FloatType::F32, true, 20,
                256, true},
           Case{4, false, 128, f16, FloatType::F16, FloatType::F16, true, 37,
                512},
           Case{5, false, 32, bf16, FloatType::BF16, FloatType::F32, false, 33,
                320},
           Case{3, false, 16, f16, FloatType::F16, FloatType::BF16, true, 20,
                256},
           Case{4, true, 32, f16, FloatType::F16, FloatType::F32, false, 37,
                300},
           Case{8, true, 32, bf16, FloatType::BF16, FloatType::F16, true, 13,
                77},
           Case{4, true, 128, f16, FloatType::F16, FloatType::BF16, true, 64,
                1000},
           Case{4, true, 0, bf16, FloatType::F16, FloatType::F32, false, 7,
                512},
           Case{6, true, 16, f16, FloatType::F32, FloatType::F32, true, 37,
                300},
           Case{5, true, 32, f16, FloatType::F16, FloatType::F16, false, 13,
                1000},
           Case{3, true, 16, bf16, FloatType::F32, FloatType::F32, false, 7,
                77},
           Case{8, true, 0, f16, FloatType::F16, FloatType::F32, false, 2,
                32768},
           Case{6, true, 0, f16, FloatType::F16, FloatType::F32, false, 2,
                32768},
           Case{4, false, 32, f16, FloatType::F32, FloatType::F32, false, 37,
                300, true},
           Case{5, false, 32, bf16, FloatType::F32, FloatType::BF16, true, 13,
                1000, true},
           Case{4, false, 32, f16, FloatType::F16, FloatType::F16, true, 7, 77,
                true},
           Case{2, false, 16, f16, FloatType::F32, FloatType::F32, false, 13,
                300, true},
           Case{4, false, 32, f16, FloatType::F32, FloatType::F32, false, 2,
                32768, true},
           Case{4, false, 128, f16, FloatType::F16, FloatType::F16, true, 37,
                1000},
           Case{4, false, 0, bf16, FloatType::BF16, FloatType::F32, false, 13,
                300},
           Case{5, false, 32, f16, FloatType::F16, FloatType::BF16, false, 7,
                77},
           Case{3, false, 16, bf16, FloatType::BF16, FloatType::F32, true, 13,
                300},
           Case{4, false, 32, f16, FloatType::F16, FloatType::F32, false, 2,
                32768},
       }) {
    c.int8Activations = true;
    cases.push_back(c);
  }
  return cases;
}

TEST(HostGemmHost, MatchesFloat64WithinTheBoundWholeAndSplit) {
  qtensor::test::HostKernelJit jit;
  uint32_t seed = 7;
  for (const Case &c : allCases()) {
    QuantKernelSpec spec = specOf(c);
    SCOPED_TRACE(spec.name());
    std::mt19937 rng(seed++);
    Weights w = makeWeights(spec, rng);
    ASSERT_FALSE(w.words.empty());
    // Int8 activations take AVX2's u8 x s8 multiply when built for
    // x86-64-v3 (fields and an offset below 8 bits, |q| and a sign at 8;
    // byte codes two chunks at a time), VNNI's at x86-64-v4-vnni: every
    // form this CPU runs. At x86-64-v4 the T > 1 path decodes four weight
    // rows a block and dots them in 16 lanes (two and 8 below it).
    std::vector<HostCpuLevel> levels = {HostCpuLevel::Generic};
    if (hostCpuSupports(HostCpuLevel::X86_64_V4))
      levels.push_back(HostCpuLevel::X86_64_V4);
    else
      std::cout << "[parity] " << spec.name()
                << ": this CPU has no AVX-512, its x86-64-v4 form not run\n";
    if (spec.quantizedActivations) {
      if (hostCpuSupports(HostCpuLevel::X86_64_V3))
        levels.push_back(HostCpuLevel::X86_64_V3);
      else
        std::cout << "[parity] " << spec.name()
                  << ": this CPU is below x86-64-v3, its AVX2 form not run\n";
      if (hostCpuSupports(HostCpuLevel::X86_64_V4_VNNI))
        levels.push_back(HostCpuLevel::X86_64_V4_VNNI);
      else
        std::cout << "[parity] " << spec.name()
                  << ": this CPU has no AVX-512 VNNI, its VNNI form not run\n";
      if (hostCpuSupports(HostCpuLevel::X86_64_V4_AMX))
        levels.push_back(HostCpuLevel::X86_64_V4_AMX);
      else
        std::cout << "[parity] " << spec.name()
                  << ": this CPU (or its OS) gives no AMX tiles, its "
                     "x86-64-v4-amx form not run\n";
    }
    for (HostCpuLevel level : levels) {
      std::unique_ptr<mlir::ExecutionEngine> engine = jit.compile(
          spec, [level](mlir::ModuleOp module, const QuantKernelSpec &s,
                        KernelTarget target) {
            return buildHostGemmKernel(module, s, target, level);
          });
      ASSERT_NE(engine, nullptr) << toString(level);
      // On tiles: several 16-token blocks, a pass of 64 tokens and the
      // next one, partly filled.
      const bool tiles = kernels::hostGemmUsesInt8Tiles(
          level, {spec.symmetric, spec.minZero, spec.codebook, spec.groupSize,
                  spec.k});
      std::vector<int64_t> counts = {1, 3, 4, 5, 9};
      if (tiles)
        counts.insert(counts.end(), {17, 40, 70});
      double worst = 0, quantMax = 0;
      for (int64_t t : counts)
        runRows(*engine, spec, w, t, tiles, rng, worst, quantMax);
      std::cout << "[parity] " << spec.name() << " (" << toString(level)
                << (tiles ? ", T > 1 on int8 tiles" : "")
                << "): worst kernel error " << worst
                << " of its bound; max quantization error " << quantMax << "\n";
    }
  }
}

TEST(HostGemmHost, AbiIsOneRowSplitEntryForAnyT) {
  QuantKernelSpec spec = specOf({4, true, 128, FloatType::F16, FloatType::F16,
                                 FloatType::F16, true, 4096, 11008});
  KernelAbi abi = hostGemmAbi(spec);
  ASSERT_EQ(abi.entries.size(), 1u);
  EXPECT_EQ(abi.entries[0].symbol, spec.name());
  EXPECT_EQ(abi.entries[0].minRows, 1);
  EXPECT_FALSE(abi.entries[0].maxRows.has_value());
  EXPECT_TRUE(abi.rowSplit);
  EXPECT_FALSE(abi.zeroOutput);
  EXPECT_EQ(spec.name(), "qt_host_gemm_w4sym_g128_f16_tdyn_n4096_k11008_s1_"
                         "of16_bias");
}

TEST(HostGemmHost, RefusesNVPTXAndOtherFamilies) {
  qtensor::test::HostKernelJit jit;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&jit.context));
  QuantKernelSpec spec = specOf({4, true, 32, FloatType::F16, FloatType::F16,
                                 FloatType::F32, false, 8, 64});
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler capture(&jit.context, [&](mlir::Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  EXPECT_TRUE(mlir::failed(buildHostGemmKernel(
      *module, spec, KernelTarget::NVPTX, HostCpuLevel::Generic)));
  EXPECT_NE(diagnostics.find("has no NVPTX build"), std::string::npos)
      << diagnostics;
  spec.family = KernelFamily::DecodeGemv;
  EXPECT_TRUE(mlir::failed(buildHostGemmKernel(
      *module, spec, KernelTarget::Host, HostCpuLevel::Generic)));
  EXPECT_NE(diagnostics.find("of another family"), std::string::npos)
      << diagnostics;
  Expected<QuantKernelSpec> parsed =
      parseQuantKernelSpec("host_gemm:w8:gch:asym:bf16:n16:k100:obf16");
  ASSERT_TRUE(bool(parsed)) << parsed.message();
  EXPECT_EQ(parsed->family, KernelFamily::HostGemm);
  EXPECT_TRUE(parsed->dynamicRows());
  EXPECT_FALSE(
      bool(parseQuantKernelSpec("host_gemm:w4:g32:sym:f16:n16:k64:s2")));
  Expected<QuantKernelSpec> int8 =
      parseQuantKernelSpec("host_gemm:w4:g32:sym:f16:n16:k64:xq8");
  ASSERT_TRUE(bool(int8)) << int8.message();
  EXPECT_TRUE(int8->quantizedActivations);
  EXPECT_EQ(int8->name(), "qt_host_gemm_w4sym_g32_f16_tdyn_n16_k64_s1_xq8");
  Expected<QuantKernelSpec> int8Min =
      parseQuantKernelSpec("host_gemm:w4:g32:min:f16:n16:k64:xq8");
  ASSERT_TRUE(bool(int8Min)) << int8Min.message();
  EXPECT_TRUE(int8Min->minZero && int8Min->quantizedActivations);
  Expected<QuantKernelSpec> int8Asym =
      parseQuantKernelSpec("host_gemm:w4:g32:asym:f16:n16:k64:xq8");
  ASSERT_TRUE(bool(int8Asym)) << int8Asym.message();
  EXPECT_TRUE(int8Asym->takesZeroPoints() && !int8Asym->minZero);
  for (const char *bad : {
           "host_gemm:w8:g32:min:f16:n16:k64:xq8",
           "host_gemm:w8:g32:asym:f16:n16:k64:xq8",
           "host_gemm:w4:g32:iq4_nl:f16:n16:k64:xq8",
           "host_gemm:w4:g16:sym:f16:n16:k64:xq8",
           "host_gemm:w4:g32:sym:f16:n16:k32800:xq8",
           "decode_gemv:w4:g32:sym:f16:t1:n16:k64:xq8",
       })
    EXPECT_FALSE(bool(parseQuantKernelSpec(bad))) << bad;
}

} // namespace

// The text form of the kept-ggml forms, and the families that refuse them.
TEST(HostGemmHost, SpecsOfKeptGGMLCodes) {
  auto q6k = parseQuantKernelSpec("host_gemm:w6:g16:sym:f16:n64:k512:scf32");
  ASSERT_TRUE(bool(q6k)) << q6k.message();
  EXPECT_EQ(q6k->fieldBits(), 8u);
  EXPECT_EQ(q6k->chunkCodes(), 16);
  EXPECT_EQ(q6k->name(), "qt_host_gemm_w6sym_g16_f16_tdyn_n64_k512_s1_scf32");
  auto q4k = parseQuantKernelSpec("host_gemm:w4:g32:min:bf16:n8:k256:scf32");
  ASSERT_TRUE(bool(q4k)) << q4k.message();
  EXPECT_TRUE(q4k->minZero);
  EXPECT_FALSE(q4k->symmetric);
  EXPECT_EQ(q4k->name(), "qt_host_gemm_w4min_g32_bf16_tdyn_n8_k256_s1_scf32");
  auto iq4nl = parseQuantKernelSpec("host_gemm:w4:g32:iq4_nl:f16:n8:k256");
  ASSERT_TRUE(bool(iq4nl)) << iq4nl.message();
  EXPECT_EQ(iq4nl->codebook, Codebook::IQ4NL);
  EXPECT_FALSE(iq4nl->symmetric || iq4nl->minZero || iq4nl->takesZeroPoints());
  EXPECT_FALSE(iq4nl->layout().isSigned);
  EXPECT_EQ(iq4nl->name(), "qt_host_gemm_w4iq4_nl_g32_f16_tdyn_n8_k256_s1");
  struct Bad {
    const char *text, *message;
  };
  for (const Bad &bad : {
           Bad{"prefill_mma:w7:g32:sym:f16:n8:k64",
               "code width must be 2, 3, 4, 5, 6 or 8 bits, got 7"},
           Bad{"prefill_mma:w4:g32:nf4:f16:n8:k64",
               "is not exact in f16, which the tensor-core GEMM multiplies"},
           Bad{"host_gemm:w4:g16:asym:f16:n8:k64",
               "group size must be 32, 64, 128 (16 for byte codes, or W4 "
               "codes without a zero-point)"},
           Bad{"prefill_mma:w4:g24:sym:f16:n8:k64",
               "group size must be 16, 32, 64, 128 or per-channel, got 24"},
           Bad{"host_gemm:w7:g32:sym:f16:n8:k64",
               "code width must be 2, 3, 4, 5, 6 or 8 bits, got 7"},
           Bad{"host_gemm:w8:g32:nf4:f16:n8:k64",
               "codebook nf4 has 16 entries; its codes cannot be 8 bits"},
           Bad{"host_gemm:w4:g32:nf5:f16:n8:k64", "bad code kind 'nf5'"},
       }) {
    auto spec = parseQuantKernelSpec(bad.text);
    ASSERT_FALSE(bool(spec)) << bad.text;
    EXPECT_NE(spec.message().find(bad.message), std::string::npos)
        << spec.message();
  }
  // The spec's dtypes are the descriptor's one float enum: an f32
  // activation can be written down, and is refused by name.
  QuantKernelSpec f32Activations = *q4k;
  f32Activations.activation = FloatType::F32;
  Status refused = validateQuantKernelSpec(f32Activations);
  ASSERT_FALSE(bool(refused));
  EXPECT_EQ(refused.message(), "activations must be f16 or bf16, got f32");
}
