//===- Mixed2416GemvHostTest.cpp - Mixed 2/4/16 GEMV parity on the host ---===//
//
// Operator parity (seed M8.9 0x09D) of the mixed 2/4/16 decode GEMV: the
// builder that emits the NVPTX kernel emits its host twin, run here with
// mlir::ExecutionEngine over streams that pass verifyMixed2416Streams. The
// reference is X @ W^T in float64 with W from the family's reference decoder
// (reconstructMixed2416, parity level L2), so the error measured is the
// kernel's alone; the streams are random rather than quantized from a float
// weight, so there is no quantization error to separate here (the
// converter's is measured in QuantizeMixed2416Test). The seed's worked
// example runs through the kernel too.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Conversion/Mixed2416Kernel.h"

#include "HostKernelJit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace qtensor;
using qtensor::test::fromBits;
using qtensor::test::HostBuffer;
using qtensor::test::toBits;

namespace {

/// A tensor of the family as the kernel reads it, and its reference.
struct Problem {
  Mixed2416GemvSpec spec;
  Mixed2416Descriptor d;
  Mixed2416Streams s;
  std::vector<double> w; ///< reconstructMixed2416
  /// |s1 (q - z1)| at each position: the dense value the kernel sums even
  /// where a replacement overrides it.
  std::vector<double> denseAbs;
  std::vector<double> bias;
};

Mixed2416Descriptor descriptorOf(const Mixed2416GemvSpec &spec) {
  Mixed2416Descriptor d;
  d.shape = {spec.n, spec.k};
  d.elementType = spec.activation;
  d.firstGroupSize = spec.firstGroupSize;
  d.secondGroupSize = spec.secondGroupSize;
  d.secondType = spec.secondType;
  d.sparseType = spec.sparseType;
  d.sparse = spec.sparse;
  return d;
}

/// A value exactly representable in the 16-bit type `t`.
double rounded(double v, FloatType t) {
  return fromBits(toBits(static_cast<float>(v), t), t);
}

/// Random streams: each group W4 with probability `w4Share`, every code
/// random, qs and z1 anywhere in range, s2 and z2 small values of the
/// second-level type, and up to `maxOutliers` outliers a row (row 1 gets
/// `denseRowOutliers`, so lanes take more than one), inside W2 groups
/// under replacement.
Problem makeProblem(const Mixed2416GemvSpec &spec, double w4Share,
                    int maxOutliers, int denseRowOutliers, std::mt19937 &rng) {
  Problem p;
  p.spec = spec;
  p.d = descriptorOf(spec);
  const int64_t n = spec.n, k = spec.k, g1 = spec.firstGroupSize;
  const int64_t perRow = p.d.groupsPerRow();
  const int64_t groups = n * perRow;
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Mixed2416Streams &s = p.s;
  s.precisionMap.assign(size_t((groups + 7) / 8), 0);
  int64_t w4Groups = 0;
  for (int64_t g = 0; g < groups; ++g)
    if (unit(rng) < w4Share) {
      s.precisionMap[size_t(g / 8)] |= uint8_t(1u << (g % 8));
      ++w4Groups;
    }
  s.w2Codes.resize(size_t((groups - w4Groups) * g1 / 4));
  s.w4Codes.resize(size_t(w4Groups * g1 / 2));
  for (uint8_t &c : s.w2Codes)
    c = uint8_t(byte(rng));
  for (uint8_t &c : s.w4Codes)
    c = uint8_t(byte(rng));
  for (int64_t g = 0; g < groups; ++g) {
    s.firstScaleCodes.push_back(uint8_t(byte(rng)));
    const int top = isW4Group(s.precisionMap, g) ? 15 : 3;
    s.firstZeroPoints.push_back(
        uint8_t(std::uniform_int_distribution<int>(0, top)(rng)));
  }
  const int64_t seconds = p.d.secondGroupsPerColumn() * perRow;
  for (int64_t i = 0; i < seconds; ++i) {
    s.secondScales.push_back(
        rounded(std::ldexp(1.0 + unit(rng), -10), spec.secondType));
    s.secondZeroPoints.push_back(rounded(64.0 * unit(rng), spec.secondType));
  }
  s.sparseRowPointers.push_back(0);
  for (int64_t row = 0; row < n; ++row) {
    std::vector<int32_t> candidates;
    for (int64_t col = 0; col < k; ++col)
      if (spec.sparse == SparseSemantics::Correction ||
          !isW4Group(s.precisionMap, row * perRow + col / g1))
        candidates.push_back(int32_t(col));
    std::shuffle(candidates.begin(), candidates.end(), rng);
    size_t count =
        row == 1
            ? size_t(denseRowOutliers)
            : size_t(std::uniform_int_distribution<int>(0, maxOutliers)(rng));
    candidates.resize(std::min(count, candidates.size()));
    std::sort(candidates.begin(), candidates.end());
    for (int32_t col : candidates) {
      s.sparseColumns.push_back(col);
      s.sparseValues.push_back(rounded(8.0 * unit(rng) - 4.0, spec.sparseType));
    }
    s.sparseRowPointers.push_back(int32_t(s.sparseColumns.size()));
  }
  Status ok = verifyMixed2416Streams(p.d, s);
  EXPECT_TRUE(ok) << ok.message();
  Expected<std::vector<double>> w = reconstructMixed2416(p.d, s);
  EXPECT_TRUE(bool(w)) << (w ? "" : w.message());
  if (w)
    p.w = std::move(*w);
  // The dense values without the outliers: the reference of a tensor with
  // an empty sparse stream.
  Mixed2416Streams dense = s;
  dense.sparseValues.clear();
  dense.sparseColumns.clear();
  dense.sparseRowPointers.assign(size_t(n + 1), 0);
  Expected<std::vector<double>> d = reconstructMixed2416(p.d, dense);
  EXPECT_TRUE(bool(d));
  if (d)
    for (double v : *d)
      p.denseAbs.push_back(std::fabs(v));
  if (spec.bias)
    for (int64_t row = 0; row < n; ++row)
      p.bias.push_back(rounded(unit(rng) - 0.5, spec.output == FloatType::F32
                                                    ? FloatType::F16
                                                    : spec.output));
  return p;
}

std::vector<uint16_t> halfBits(const std::vector<double> &v, FloatType t) {
  std::vector<uint16_t> bits;
  for (double x : v)
    bits.push_back(toBits(static_cast<float>(x), t));
  return bits;
}

std::vector<int32_t> wordsOf(const std::vector<uint8_t> &bytes) {
  std::vector<int32_t> words((bytes.size() + 3) / 4, 0);
  if (!bytes.empty())
    std::memcpy(words.data(), bytes.data(), bytes.size());
  return words;
}

/// Runs the kernel with activations `x` (T x K, exact in the activation
/// type) and returns y as doubles.
std::vector<double> run(mlir::ExecutionEngine &engine, const Problem &p,
                        const std::vector<double> &x) {
  const Mixed2416GemvSpec &spec = p.spec;
  const int64_t n = spec.n, k = spec.k, t = spec.rows;
  const int64_t perRow = p.d.groupsPerRow();
  const Mixed2416Streams &s = p.s;
  auto i8s = [](const std::vector<uint8_t> &v) {
    return std::vector<int8_t>(v.begin(), v.end());
  };
  Expected<std::vector<int32_t>> rowW4 =
      mixed2416RowW4Groups(p.d, s.precisionMap);
  EXPECT_TRUE(bool(rowW4));
  HostBuffer<uint16_t, 2> xBuf({t, k}, halfBits(x, spec.activation));
  HostBuffer<int8_t, 1> map({int64_t(s.precisionMap.size())},
                            i8s(s.precisionMap));
  std::vector<int32_t> w2 = wordsOf(s.w2Codes), w4 = wordsOf(s.w4Codes);
  HostBuffer<int32_t, 1> w2Buf({int64_t(w2.size())}, w2);
  HostBuffer<int32_t, 1> w4Buf({int64_t(w4.size())}, w4);
  HostBuffer<int32_t, 1> rw4({n + 1}, rowW4 ? *rowW4 : std::vector<int32_t>());
  HostBuffer<int8_t, 2> qs({n, perRow}, i8s(s.firstScaleCodes));
  HostBuffer<int8_t, 2> z1({n, perRow}, i8s(s.firstZeroPoints));
  const int64_t n2 = p.d.secondGroupsPerColumn();
  HostBuffer<uint16_t, 2> s2({n2, perRow},
                             halfBits(s.secondScales, spec.secondType));
  HostBuffer<uint16_t, 2> z2({n2, perRow},
                             halfBits(s.secondZeroPoints, spec.secondType));
  HostBuffer<uint16_t, 1> sv({int64_t(s.sparseValues.size())},
                             halfBits(s.sparseValues, spec.sparseType));
  HostBuffer<int32_t, 1> sc({int64_t(s.sparseColumns.size())}, s.sparseColumns);
  HostBuffer<int32_t, 1> sr({n + 1}, s.sparseRowPointers);
  const bool f32Out = spec.output == FloatType::F32;
  std::vector<float> biasF32(p.bias.begin(), p.bias.end());
  HostBuffer<float, 1> bF32({n}, biasF32);
  HostBuffer<uint16_t, 1> bHalf({n}, f32Out ? std::vector<uint16_t>(size_t(n))
                                            : halfBits(p.bias, spec.output));
  HostBuffer<float, 2> yF32({t, n}, std::vector<float>(size_t(t * n), 1e30f));
  HostBuffer<uint16_t, 2> yHalf({t, n},
                                std::vector<uint16_t>(size_t(t * n), 0x7C00));
  std::vector<void *> args = {&xBuf.desc, &map.desc, &w2Buf.desc, &w4Buf.desc,
                              &rw4.desc,  &qs.desc,  &z1.desc,    &s2.desc,
                              &z2.desc,   &sv.desc,  &sc.desc,    &sr.desc};
  if (spec.bias)
    args.push_back(f32Out ? static_cast<void *>(&bF32.desc) : &bHalf.desc);
  args.push_back(f32Out ? static_cast<void *>(&yF32.desc) : &yHalf.desc);
  std::vector<void *> packed;
  for (void *&a : args)
    packed.push_back(&a);
  llvm::Error err = engine.invokePacked("_mlir_ciface_" + spec.name(), packed);
  EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));
  std::vector<double> y;
  for (size_t i = 0; i < size_t(t * n); ++i)
    y.push_back(f32Out ? double(yF32.data[i])
                       : double(fromBits(yHalf.data[i], spec.output)));
  return y;
}

struct Errors {
  double kernelMax = 0, worstRatio = 0;
};

/// Checks y against X @ W^T in float64. The bound, with u = 2^-24 and S
/// the sum over the row of |x| times |dense value| (plus |x| (|v| + |dense|)
/// at each outlier): q - z1 and x (q - z1) are exact in f32; s1 = s2 (qs -
/// z2) rounds twice; a step's ordered 32-term sum 31 times; the fma once
/// per step a lane visits; an outlier's correction three times (dense, v -
/// dense, fma); the butterfly five times. Then the bias add and the
/// rounding to a 16-bit output.
Errors check(const Problem &p, const std::vector<double> &x,
             const std::vector<double> &y) {
  const Mixed2416GemvSpec &spec = p.spec;
  const int64_t n = spec.n, k = spec.k;
  const int64_t perRow = p.d.groupsPerRow();
  const int64_t laneGroups = (perRow + kWarpSize - 1) / kWarpSize;
  const int64_t laneSteps = laneGroups * (spec.firstGroupSize / 32);
  const double u = std::ldexp(1.0, -24);
  Errors e;
  for (int64_t t = 0; t < spec.rows; ++t)
    for (int64_t r = 0; r < n; ++r) {
      double ref = 0, absSum = 0;
      for (int64_t c = 0; c < k; ++c) {
        const double xv = x[size_t(t * k + c)];
        ref += xv * p.w[size_t(r * k + c)];
        absSum += std::fabs(xv) * p.denseAbs[size_t(r * k + c)];
      }
      const int32_t first = p.s.sparseRowPointers[size_t(r)];
      const int32_t last = p.s.sparseRowPointers[size_t(r + 1)];
      for (int32_t i = first; i < last; ++i) {
        const size_t at = size_t(r * k + p.s.sparseColumns[size_t(i)]);
        absSum += std::fabs(x[size_t(t * k) + (at - size_t(r * k))]) *
                  (std::fabs(p.s.sparseValues[size_t(i)]) + p.denseAbs[at]);
      }
      const int64_t laneOutliers = (last - first + kWarpSize - 1) / kWarpSize;
      double bound =
          double(2 + 31 + laneSteps + 3 * laneOutliers + 5 + 1) * u * absSum +
          1e-30;
      const double b = spec.bias ? p.bias[size_t(r)] : 0.0;
      ref += b;
      if (spec.bias)
        bound += u * (absSum + std::fabs(b));
      if (spec.output == FloatType::F16)
        bound += std::ldexp(1.0, -11) * (std::fabs(ref) + bound);
      else if (spec.output == FloatType::BF16)
        bound += std::ldexp(1.0, -8) * (std::fabs(ref) + bound);
      const double got = y[size_t(t * n + r)];
      const double err = std::fabs(got - ref);
      EXPECT_LE(err, bound) << spec.name() << " t " << t << " n " << r
                            << ": kernel " << got << ", reference " << ref;
      e.kernelMax = std::max(e.kernelMax, err);
      e.worstRatio = std::max(e.worstRatio, err / bound);
    }
  return e;
}

std::vector<double> randomX(const Mixed2416GemvSpec &spec, std::mt19937 &rng) {
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> x(size_t(spec.rows * spec.k));
  for (double &v : x)
    v = rounded(uniform(rng), spec.activation);
  return x;
}

class Mixed2416GemvHostTest : public ::testing::Test {
protected:
  std::unique_ptr<mlir::ExecutionEngine> compile(const Mixed2416GemvSpec &s) {
    return jit.compileModule([&](mlir::ModuleOp module) {
      return buildMixed2416GemvKernel(module, s, KernelTarget::Host);
    });
  }
  qtensor::test::HostKernelJit jit;
};

Mixed2416GemvSpec specOf(const char *text) {
  Expected<Mixed2416GemvSpec> spec = parseMixed2416GemvSpec(text);
  EXPECT_TRUE(bool(spec)) << (spec ? "" : spec.message());
  return spec ? *spec : Mixed2416GemvSpec();
}

TEST_F(Mixed2416GemvHostTest, ParityWithTheReferenceDecoderForEveryVariant) {
  struct Case {
    const char *spec;
    double w4Share;
    int maxOutliers, denseRowOutliers;
  };
  // Rows past one lane's groups (K / G1 > 32), rows with more outliers than
  // lanes, all-W2 and all-W4 tensors, both semantics, every dtype option,
  // G1 of 64, 128, 192 and 256, and N not a multiple of the block's 4 warps.
  const Case cases[] = {
      {"mixed2416_gemv:g64:z16:f16:t1:n32:k256", 0.5, 3, 40},
      {"mixed2416_gemv:g64:z2:f16:t3:n18:k2304:bias", 0.3, 5, 70},
      {"mixed2416_gemv:g64:z4:bf16:t2:n12:k4160:s2bf16:spbf16:obf16", 0.6, 4,
       33},
      {"mixed2416_gemv:g128:z8:f16:t1:n24:k1024:correct:of16:bias", 0.5, 6, 45},
      {"mixed2416_gemv:g256:z2:bf16:t16:n6:k512:s2bf16", 0.5, 2, 3},
      {"mixed2416_gemv:g192:z4:f16:t2:n8:k768", 0.5, 3, 36},
      {"mixed2416_gemv:g64:z16:f16:t1:n16:k512", 0.0, 3, 35},
      {"mixed2416_gemv:g64:z16:f16:t4:n16:k512:correct", 1.0, 3, 35},
  };
  std::mt19937 rng(2416);
  for (const Case &c : cases) {
    Mixed2416GemvSpec spec = specOf(c.spec);
    SCOPED_TRACE(spec.name());
    Problem p =
        makeProblem(spec, c.w4Share, c.maxOutliers, c.denseRowOutliers, rng);
    auto engine = compile(spec);
    ASSERT_NE(engine, nullptr);
    std::vector<double> x = randomX(spec, rng);
    Errors e = check(p, x, run(*engine, p, x));
    std::cout << "[parity] " << spec.name() << ": max kernel error "
              << e.kernelMax << ", worst error / bound " << e.worstRatio
              << ", outliers " << p.s.sparseValues.size() << "\n";
  }
}

// Seed 0x07D's worked example: qs = 5, z2 = 1, s2 = 0.25 give s1 = 1; qw =
// 3, z1 = 2 then give w = 1 at every position, so with x = 1 each output is
// K. Decoding the levels the other way round (first level first) would
// give s1 = 0.25 (5 - 2) (3 - 1), not 1: the kernel must not.
TEST_F(Mixed2416GemvHostTest, SeedWorkedExampleGivesOnePerWeight) {
  for (double w4Share : {0.0, 1.0}) {
    Mixed2416GemvSpec spec = specOf("mixed2416_gemv:g64:z16:f16:t1:n16:k128");
    Problem p;
    p.spec = spec;
    p.d = descriptorOf(spec);
    const int64_t groups = spec.n * p.d.groupsPerRow();
    const bool w4 = w4Share == 1.0;
    p.s.precisionMap.assign(size_t((groups + 7) / 8), w4 ? 0xFF : 0x00);
    // Every code 3: 0xFF packs four 2-bit 3s, 0x33 two 4-bit 3s.
    p.s.w2Codes.assign(w4 ? 0 : size_t(groups * 16), 0xFF);
    p.s.w4Codes.assign(w4 ? size_t(groups * 32) : 0, 0x33);
    p.s.firstScaleCodes.assign(size_t(groups), 5);
    p.s.firstZeroPoints.assign(size_t(groups), 2);
    p.s.secondScales.assign(size_t(p.d.groupsPerRow()), 0.25);
    p.s.secondZeroPoints.assign(size_t(p.d.groupsPerRow()), 1.0);
    p.s.sparseRowPointers.assign(size_t(spec.n + 1), 0);
    ASSERT_TRUE(verifyMixed2416Streams(p.d, p.s));
    auto engine = compile(spec);
    ASSERT_NE(engine, nullptr);
    std::vector<double> y =
        run(*engine, p, std::vector<double>(size_t(spec.k), 1.0));
    for (double v : y)
      EXPECT_EQ(v, double(spec.k)) << (w4 ? "W4" : "W2");
  }
}

TEST(Mixed2416GemvSpec, TextFormRoundTripsAndRefusesByField) {
  Mixed2416GemvSpec spec = specOf(
      "mixed2416_gemv:g128:z8:bf16:t4:n64:k1024:s2bf16:spbf16:correct:of16:"
      "bias");
  EXPECT_EQ(spec.name(), "qt_mixed2416_gemv_g128_z8_bf16_t4_n64_k1024_s2bf16_"
                         "spbf16_corr_of16_bias");
  EXPECT_EQ(specOf("mixed2416_gemv:g64:z16:f16:t1:n16:k64").name(),
            "qt_mixed2416_gemv_g64_z16_f16_t1_n16_k64");
  struct Bad {
    const char *text, *message;
  };
  const Bad bad[] = {
      {"mixed2416_gemv:g96:z16:f16:t1:n16:k192",
       "first-level group size must be a multiple of 64 up to 256, got 96"},
      {"mixed2416_gemv:g512:z16:f16:t1:n16:k512",
       "first-level group size must be a multiple of 64 up to 256, got 512"},
      {"mixed2416_gemv:g64:z16:f16:t1:n16:k96",
       "first-level group size 64 must divide K = 96"},
      {"mixed2416_gemv:g64:z5:f16:t1:n16:k64",
       "second-level group size 5 must divide N = 16"},
      {"mixed2416_gemv:g64:z16:f16:t17:n16:k64",
       "decode kernels take T in [1, 16] rows, got 17"},
      {"mixed2416_gemv:g64:z16:f32:t1:n16:k64", "bad activation type 'f32'"},
      {"mixed2416_gemv:g64:z16:f16:t1:n16:k64:s2f32", "unknown option 's2f32'"},
      {"mixed2416_gemv:g64:z16:f16:t1:n16:k64:correct:replace",
       "option 'replace' given twice"},
      {"mixed2416_gemv:g64:z16:f16:t1:n16", "wrong number of fields"},
  };
  for (const Bad &b : bad) {
    Expected<Mixed2416GemvSpec> s = parseMixed2416GemvSpec(b.text);
    ASSERT_FALSE(bool(s)) << b.text;
    EXPECT_NE(s.message().find(b.message), std::string::npos)
        << b.text << ": " << s.message();
  }
}

TEST(Mixed2416GemvSpec, FollowsTheDescriptor) {
  Mixed2416Descriptor d;
  d.shape = {4096, 11008};
  d.elementType = FloatType::BF16;
  d.firstGroupSize = 128;
  d.secondGroupSize = 32;
  d.secondType = FloatType::BF16;
  d.sparse = SparseSemantics::Correction;
  ASSERT_TRUE(verifyMixed2416(d));
  Mixed2416GemvSpec spec =
      mixed2416GemvSpecFor(d, FloatType::BF16, FloatType::BF16, true, 1);
  EXPECT_TRUE(validateMixed2416GemvSpec(spec));
  EXPECT_EQ(spec.name(), "qt_mixed2416_gemv_g128_z32_bf16_t1_n4096_k11008_"
                         "s2bf16_corr_obf16_bias");
  KernelAbi abi = mixed2416GemvAbi(spec);
  EXPECT_EQ(abi.launch.grid[0], 1024);
  EXPECT_EQ(abi.launch.block[0], 128);
  ASSERT_EQ(abi.entries.size(), 1u);
  EXPECT_EQ(abi.entries[0].symbol, spec.name());
}

TEST(Mixed2416RowW4Groups, CountsW4GroupsBeforeEachRow) {
  Mixed2416Descriptor d;
  d.shape = {3, 192}; // 3 groups a row
  // Groups 0..8: W4 at 1, 3, 4, 5, 8.
  std::vector<uint8_t> map = {0b00111010, 0b00000001};
  Expected<std::vector<int32_t>> rows = mixed2416RowW4Groups(d, map);
  ASSERT_TRUE(bool(rows));
  EXPECT_EQ(*rows, (std::vector<int32_t>{0, 1, 4, 5}));
  Expected<std::vector<int32_t>> shortMap =
      mixed2416RowW4Groups(d, {0b00111010});
  ASSERT_FALSE(bool(shortMap));
  EXPECT_NE(shortMap.message().find("1 bytes cannot cover 9 groups"),
            std::string::npos);
}

} // namespace
