//===- PrefillMmaGGMLHostTest.cpp - Tensor-core GEMM over ggml's codes ----===//
//
// Operator parity (seed M8.9 0x09D) of the tensor-core GEMM's host twin for
// the contracts ggml block types keep (issue 13): 2-, 3-, 5- and 6-bit codes
// in byte fields, a float min (w = s q + m: Q4_1, Q4_K, Q5_K), f32 scales
// (K-quants' exact two-level products), groups of 16 (Q3_K, Q6_K) and
// codebooks (IQ4_NL, E2M1, E4M3). Groups of 16 with a min (Q2_K) run, on
// the device and here alike, as a loop over each tile's k16 steps.
//
//   kernel error  |Y_kernel - (X What^T + b)|, What = s table(q) (+ m) or
//                 s (q - z), all in float64
//
// asserted against the rounding bound of the kernel's arithmetic.
//
//===----------------------------------------------------------------------===//

#include "HostKernelJit.h"

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

enum class Codes { Signed, Integer, Min, Table };

struct Case {
  const char *what; ///< the ggml type it stands for
  unsigned bits;
  Codes codes;
  Codebook codebook; ///< Codes::Table only
  int64_t group;     ///< 0: per-channel
  FloatType act, scale, out;
  bool bias;
  int64_t t, n, k;
};

QuantKernelSpec specOf(const Case &c) {
  QuantKernelSpec spec;
  spec.family = KernelFamily::PrefillMma;
  spec.bits = c.bits;
  spec.symmetric = c.codes == Codes::Signed;
  spec.minZero = c.codes == Codes::Min;
  spec.codebook = c.codes == Codes::Table ? c.codebook : Codebook::None;
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

/// A value of `type` near `v` (f32 is any float).
double representable(double v, FloatType type) {
  if (type == FloatType::F32)
    return double(float(v));
  return fromBits(toBits(float(v), type), type);
}

/// The buffer of [n, groups] qparams in `type`: f32 words or 16-bit bits.
struct QParamBuffer {
  QParamBuffer(FloatType type, int64_t n, int64_t groups,
               const std::vector<double> &values)
      : f32({n, groups}, std::vector<float>(values.begin(), values.end())),
        b16({n, groups}, bits16(type, values)), type(type) {}
  void *desc() {
    return type == FloatType::F32 ? (void *)&f32.desc : (void *)&b16.desc;
  }
  static std::vector<uint16_t> bits16(FloatType type,
                                      const std::vector<double> &values) {
    std::vector<uint16_t> out;
    if (type != FloatType::F32)
      for (double v : values)
        out.push_back(toBits(float(v), type));
    return out;
  }
  HostBuffer<float, 2> f32;
  HostBuffer<uint16_t, 2> b16;
  FloatType type;
};

/// Runs one case and checks every output against its bound.
void runCase(HostKernelJit &jit, const Case &c, uint32_t seed) {
  const QuantKernelSpec spec = specOf(c);
  SCOPED_TRACE(std::string(c.what) + ": " + spec.name() +
               " T=" + std::to_string(c.t));
  if (Status s = validateQuantKernelSpec(spec); !s) {
    ADD_FAILURE() << s.message();
    return;
  }
  const int64_t n = c.n, k = c.k, t = c.t;
  const int64_t g = spec.effectiveGroupSize();
  const int64_t groups = spec.groupsPerRow();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);

  // Codes over their whole range (a table's NaN entries excluded), group
  // qparams of the scale dtype.
  const std::vector<float> *table =
      c.codes == Codes::Table ? &codebookValues(c.codebook) : nullptr;
  const int32_t lo = c.codes == Codes::Signed ? -(1 << (c.bits - 1)) : 0;
  const int32_t hi =
      c.codes == Codes::Signed ? (1 << (c.bits - 1)) - 1 : (1 << c.bits) - 1;
  std::uniform_int_distribution<int32_t> code(lo, hi);
  std::vector<int32_t> codes(size_t(n * k));
  for (int32_t &q : codes)
    do
      q = code(rng);
    while (table && std::isnan((*table)[size_t(q)]));
  std::vector<double> scales(size_t(n * groups)), mins(scales.size());
  std::vector<uint8_t> zeros(scales.size());
  for (size_t i = 0; i < scales.size(); ++i) {
    // Table values reach 448 (E4M3): smaller scales keep |y| moderate.
    const double magnitude = table ? 1.0 / 64 : 1.0 / 8;
    scales[i] = representable(magnitude * (0.25 + std::fabs(unit(rng))),
                              spec.scaleType());
    mins[i] = representable(-0.5 * std::fabs(unit(rng)), spec.scaleType());
    zeros[i] = uint8_t(std::uniform_int_distribution<int>(0, hi)(rng));
  }
  std::vector<double> what(codes.size());
  for (int64_t r = 0; r < n; ++r)
    for (int64_t col = 0; col < k; ++col) {
      const size_t gi = size_t(r * groups + col / g);
      const int32_t q = codes[size_t(r * k + col)];
      double v;
      switch (c.codes) {
      case Codes::Signed:
        v = scales[gi] * q;
        break;
      case Codes::Integer:
        v = scales[gi] * (q - int(zeros[gi]));
        break;
      case Codes::Min:
        v = scales[gi] * q + mins[gi];
        break;
      case Codes::Table:
        v = scales[gi] * double((*table)[size_t(q)]);
        break;
      }
      what[size_t(r * k + col)] = v;
    }

  Expected<std::vector<uint8_t>> packed =
      packKernelLayout(spec.layout(), codes.data(), n, k);
  if (!packed) {
    ADD_FAILURE() << packed.message();
    return;
  }
  const int64_t steps = (k + 15) / 16;
  const int64_t panels = int64_t(packed->size() / 4) / (128 * steps);
  std::vector<int32_t> words(packed->size() / 4);
  std::memcpy(words.data(), packed->data(), packed->size());

  std::vector<uint16_t> xBits(size_t(t * k));
  std::vector<double> x(xBits.size());
  for (size_t i = 0; i < xBits.size(); ++i) {
    xBits[i] = toBits(float(unit(rng)), c.act);
    x[i] = fromBits(xBits[i], c.act);
  }
  std::vector<double> bias(size_t(n), 0.0);
  for (double &b : bias)
    b = c.bias ? representable(2.0 * unit(rng), c.out) : 0.0;

  HostBuffer<uint16_t, 2> xBuf({t, k}, xBits);
  HostBuffer<int32_t, 2> wBuf({panels, 128 * steps}, words);
  QParamBuffer sBuf(spec.scaleType(), n, groups, scales);
  QParamBuffer mBuf(spec.scaleType(), n, groups, mins);
  HostBuffer<uint8_t, 2> zBuf({n, groups}, zeros);
  QParamBuffer bBuf(c.out, 1, n, bias);
  // NaN-filled outputs: a store the kernel misses shows up.
  HostBuffer<uint16_t, 2> y16Buf({t, n},
                                 std::vector<uint16_t>(size_t(t * n), 0x7E00));
  HostBuffer<float, 2> y32Buf({t, n}, std::vector<float>(size_t(t * n), NAN));
  // The bias is [N]: view the [1, N] buffer's data as rank 1.
  HostBuffer<float, 1> b32({n}, bBuf.f32.data);
  HostBuffer<uint16_t, 1> b16({n}, bBuf.b16.data);

  std::vector<void *> descriptors = {&xBuf.desc, &wBuf.desc, sBuf.desc()};
  if (c.codes == Codes::Integer)
    descriptors.push_back(&zBuf.desc);
  if (c.codes == Codes::Min)
    descriptors.push_back(mBuf.desc());
  if (c.bias)
    descriptors.push_back(c.out == FloatType::F32 ? (void *)&b32.desc
                                                  : (void *)&b16.desc);
  descriptors.push_back(c.out == FloatType::F32 ? (void *)&y32Buf.desc
                                                : (void *)&y16Buf.desc);
  std::unique_ptr<mlir::ExecutionEngine> engine =
      jit.compile(spec, buildPrefillMmaKernel);
  if (!engine) {
    ADD_FAILURE() << "the host twin did not compile";
    return;
  }
  std::vector<void *> packedArgs;
  for (void *&d : descriptors)
    packedArgs.push_back(&d);
  llvm::Error err =
      engine->invokePacked("_mlir_ciface_" + spec.name(), packedArgs);
  EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));

  // Bound, first order in u = 2^-24 over S = sum_k |x_k| (|s B_k| + |m|):
  // a group's partial sums (and, under a min, its sums of x) add at most L
  // exact products; each group adds s * partial and m * sum (two
  // roundings) to acc; the bias add rounds once; a 16-bit output rounds
  // once more.
  const double u = std::ldexp(1.0, -24);
  const int64_t longest = std::min(g, k);
  double worst = 0, yMax = 0;
  int failures = 0;
  for (int64_t row = 0; row < t; ++row)
    for (int64_t r = 0; r < n; ++r) {
      double ref = bias[size_t(r)], absSum = 0;
      for (int64_t col = 0; col < k; ++col) {
        const double xv = x[size_t(row * k + col)];
        ref += xv * what[size_t(r * k + col)];
        const size_t gi = size_t(r * groups + col / g);
        absSum += std::fabs(xv) * (std::fabs(what[size_t(r * k + col)]) +
                                   2 * std::fabs(mins[gi]));
      }
      double bound = double(longest + 2 * groups + 2) * u *
                     (absSum + std::fabs(bias[size_t(r)]));
      double got;
      if (c.out == FloatType::F32) {
        got = y32Buf.data[size_t(row * n + r)];
      } else {
        got = fromBits(y16Buf.data[size_t(row * n + r)], c.out);
        bound += std::ldexp(1.0, c.out == FloatType::F16 ? -11 : -8) *
                     (std::fabs(ref) + bound) +
                 std::ldexp(1.0, -25);
      }
      const double err = std::fabs(got - ref);
      if (!(err <= bound) && failures++ < 5)
        ADD_FAILURE() << "t " << row << " n " << r << ": kernel " << got
                      << ", reference " << ref << ", bound " << bound;
      worst = std::max(worst, err / bound);
      yMax = std::max(yMax, std::fabs(ref));
    }
  EXPECT_GT(yMax, 0.0);
  std::cout << "[parity] " << c.what << " " << spec.name() << " T=" << t
            << ": worst kernel error " << worst << " of its bound, max |y| "
            << yMax << "\n";
}

/// Runs `cases` in order, seeds from `seed` up.
void runCases(std::initializer_list<Case> cases, uint32_t seed) {
  HostKernelJit jit;
  for (const Case &c : cases)
    runCase(jit, c, seed++);
}

constexpr FloatType F16 = FloatType::F16, BF16 = FloatType::BF16,
                    F32 = FloatType::F32;

// Shapes with tails: T across the 32-row tile, N past a panel and a block,
// K a multiple of 8 with a short last group, and groups spanning stages.
TEST(PrefillMmaGGMLHostTest, KQuantContracts) {
  runCases(
      {
          {"Q4_K", 4, Codes::Min, Codebook::None, 32, F16, F32, F16, false, 37,
           300, 520},
          {"Q5_K", 5, Codes::Min, Codebook::None, 32, BF16, F32, F32, true, 20,
           77, 264},
          {"Q6_K", 6, Codes::Signed, Codebook::None, 16, F16, F32, F32, false,
           33, 96, 256},
          {"Q3_K", 3, Codes::Signed, Codebook::None, 16, BF16, F32, BF16, true,
           5, 40, 136},
          {"2-bit, u8 zero-points", 2, Codes::Integer, Codebook::None, 16, F16,
           F32, F16, true, 64, 33, 264},
          {"2-bit with a min", 2, Codes::Min, Codebook::None, 32, BF16, F32,
           F32, false, 31, 48, 128},
          {"Q2_K", 2, Codes::Min, Codebook::None, 16, F16, F32, F16, true, 64,
           33, 264},
          {"Q2_K", 2, Codes::Min, Codebook::None, 16, BF16, F32, F32, false, 7,
           300, 512},
      },
      11);
}

TEST(PrefillMmaGGMLHostTest, LegacyBlocksAndOtherZeroPoints) {
  runCases(
      {
          {"Q4_1", 4, Codes::Min, Codebook::None, 32, BF16, BF16, BF16, false,
           17, 70, 128},
          {"Q5_0", 5, Codes::Signed, Codebook::None, 32, F16, F16, F16, true,
           40, 64, 392},
          {"Q5_1", 5, Codes::Min, Codebook::None, 32, F16, F16, F32, false, 3,
           33, 96},
          {"5-bit, u8 zero-points", 5, Codes::Integer, Codebook::None, 64, BF16,
           F16, F32, false, 9, 50, 200},
          {"per-channel min", 4, Codes::Min, Codebook::None, 0, F16, F32, F32,
           true, 21, 65, 72},
      },
      31);
}

TEST(PrefillMmaGGMLHostTest, Codebooks) {
  runCases(
      {
          {"IQ4_NL", 4, Codes::Table, Codebook::IQ4NL, 32, F16, F16, F16, false,
           37, 100, 256},
          {"IQ4_NL", 4, Codes::Table, Codebook::IQ4NL, 32, BF16, BF16, F32,
           true, 2, 64, 96},
          {"NVFP4", 4, Codes::Table, Codebook::E2M1, 16, BF16, F32, BF16, false,
           30, 70, 128},
          {"MXFP4", 4, Codes::Table, Codebook::E2M1, 32, F16, F32, F32, false,
           33, 64, 160},
          {"FP8 E4M3", 8, Codes::Table, Codebook::E4M3, 0, F16, F32, F16, true,
           19, 40, 64},
      },
      51);
}

TEST(PrefillMmaGGMLHostTest, TablesInexactInTheActivationAreRefused) {
  QuantKernelSpec spec = specOf({"NF4", 4, Codes::Table, Codebook::NF4, 64, F16,
                                 F16, F16, false, 1, 64, 64});
  Status s = validateQuantKernelSpec(spec);
  ASSERT_FALSE(bool(s));
  EXPECT_NE(s.message().find("codebook nf4 value"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("is not exact in f16"), std::string::npos)
      << s.message();
}

} // namespace
