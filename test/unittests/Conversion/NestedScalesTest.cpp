//===- NestedScalesTest.cpp - Nested scales read as stored ----------------===//
//
// Every linear kernel family with a nested descriptor's two levels as its
// operands (QuantKernelSpec::nested: one-byte scale and min codes per
// group, an f16 or bf16 value per super-group) against the same kernel
// given the decoded first level in f32: the host GEMM, and the host twins
// of the decode GEMV and the tensor-core GEMM (the GPU kernels' per-lane
// arithmetic). The kernels decode s = d * code and m = -(dmin * code) in
// f32, the exact products the load-time decoder gives
// (decodeNestedQParams), so the two outputs must be identical bit for bit,
// for every T path (the host GEMM's one-pass, int8-activation and
// decoded-row paths; the decode GEMV's T buckets) and, for the host GEMM,
// for calls on ranges of output rows. HostGemmHostTest, DecodeGemvHostTest
// and PrefillMmaGGMLHostTest check the decoded forms against float64.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Conversion/KernelBuilders.h"
#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Numerics/KernelLayout.h"

#include "HostKernelJit.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace qtensor;
using qtensor::test::fromBits;
using qtensor::test::toBits;

namespace {

/// A ggml K-quant form: codes, groups and the two levels' code types.
struct NestedCase {
  const char *what;
  unsigned bits;
  bool symmetric; ///< signed codes (Q3_K, Q6_K), else unsigned with a min
  int64_t group, superGroup;
  unsigned scaleCodeBits;
  bool signedScaleCodes;
  FloatType act, super, out;
  bool bias, int8Activations;
  int64_t n, k;
  Codebook codebook = Codebook::None; ///< unsigned indices, no min
};

/// Unsigned codes with a min (not a codebook's indices).
bool hasMin(const NestedCase &c) {
  return !c.symmetric && c.codebook == Codebook::None;
}

/// A row-major [rows, cols] operand as bytes, `width` bytes an element.
struct Operand {
  std::vector<uint8_t> bytes;
  int64_t cols = 0;
  size_t width = 1;
};

struct Operands {
  std::vector<int32_t> codes; ///< [N, K], packed per family by packFor
  Operand scaleCodes, superScales, minCodes, superMins; // nested
  Operand scales, mins;                                 // decoded, f32
  std::vector<uint16_t> bias;                           // 16-bit outputs
  std::vector<uint32_t> biasF32;
};

QuantKernelSpec specOf(const NestedCase &c, bool nested,
                       KernelFamily family = KernelFamily::HostGemm) {
  QuantKernelSpec spec;
  spec.family = family;
  spec.bits = c.bits;
  spec.symmetric = c.symmetric;
  spec.minZero = hasMin(c);
  spec.codebook = c.codebook;
  spec.groupSize = c.group;
  spec.activation = c.act;
  spec.scale = FloatType::F32;
  spec.output = c.out;
  spec.bias = c.bias;
  spec.rows = kDynamicRows;
  spec.n = c.n;
  spec.k = c.k;
  spec.quantizedActivations =
      c.int8Activations && family == KernelFamily::HostGemm;
  if (nested)
    spec.nested = QuantKernelSpec::NestedScales{c.superGroup,
                                                c.signedScaleCodes, c.super};
  return spec;
}

void appendF32(Operand &o, float v) {
  uint8_t b[4];
  std::memcpy(b, &v, 4);
  o.bytes.insert(o.bytes.end(), b, b + 4);
}

/// Random codes and levels over their whole ranges, the first level
/// decoded as decodeNestedQParams does.
Operands makeOperands(const NestedCase &c, std::mt19937 &rng) {
  Operands o;
  const int64_t groups = c.k / c.group, supers = c.k / c.superGroup;
  const int64_t ratio = c.superGroup / c.group;
  const int64_t lo = c.symmetric ? -(int64_t(1) << (c.bits - 1)) : 0;
  std::uniform_int_distribution<int64_t> code(lo,
                                              lo + (int64_t(1) << c.bits) - 1);
  const int64_t scaleLo =
      c.signedScaleCodes ? -(int64_t(1) << (c.scaleCodeBits - 1)) : 0;
  std::uniform_int_distribution<int64_t> scaleCode(
      scaleLo, scaleLo + (int64_t(1) << c.scaleCodeBits) - 1);
  // Min codes are unsigned, as wide as the scale codes (ggml's are).
  std::uniform_int_distribution<int64_t> minCode(
      0, (int64_t(1) << c.scaleCodeBits) - 1);
  std::uniform_real_distribution<float> d(0.0005f, 0.004f), dmin(0.001f, 0.02f);
  o.scaleCodes = {{}, groups, 1};
  o.minCodes = {{}, groups, 1};
  o.superScales = {{}, supers, 2};
  o.superMins = {{}, supers, 2};
  o.scales = {{}, groups, 4};
  o.mins = {{}, groups, 4};
  for (int64_t r = 0; r < c.n; ++r)
    for (int64_t j = 0; j < supers; ++j) {
      const uint16_t dBits = toBits(d(rng), c.super);
      const uint16_t mBits = toBits(dmin(rng), c.super);
      auto append16 = [](Operand &to, uint16_t bits) {
        to.bytes.push_back(uint8_t(bits));
        to.bytes.push_back(uint8_t(bits >> 8));
      };
      append16(o.superScales, dBits);
      if (hasMin(c))
        append16(o.superMins, mBits);
      for (int64_t g = 0; g < ratio; ++g) {
        const int64_t sc = scaleCode(rng);
        o.scaleCodes.bytes.push_back(uint8_t(sc));
        appendF32(o.scales, fromBits(dBits, c.super) * float(sc));
        if (hasMin(c)) {
          const int64_t mc = minCode(rng);
          o.minCodes.bytes.push_back(uint8_t(mc));
          appendF32(o.mins, -(fromBits(mBits, c.super) * float(mc)));
        }
      }
    }
  std::vector<int32_t> &codes = o.codes;
  for (int64_t i = 0; i < c.n * c.k; ++i)
    codes.push_back(int32_t(code(rng)));
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  for (int64_t r = 0; r < c.n; ++r) {
    float v = uniform(rng);
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    o.biasF32.push_back(bits);
    o.bias.push_back(
        toBits(v, c.out == FloatType::BF16 ? FloatType::BF16 : FloatType::F16));
  }
  return o;
}

/// The codes in the layout `spec` reads, as [rows, cols] words: a row per
/// output feature, or the tensor-core GEMM's panels of 256 / field rows.
struct PackedWeight {
  std::vector<int32_t> words;
  int64_t rows = 0, cols = 0;
};

PackedWeight packFor(const QuantKernelSpec &spec, const Operands &o) {
  PackedWeight p;
  Expected<std::vector<uint8_t>> packed =
      packKernelLayout(spec.layout(), o.codes.data(), spec.n, spec.k);
  EXPECT_TRUE(bool(packed)) << (packed ? "" : packed.message());
  if (!packed)
    return p;
  p.words.resize(packed->size() / 4);
  std::memcpy(p.words.data(), packed->data(), packed->size());
  p.cols = spec.family == KernelFamily::PrefillMma
               ? 128 * ((spec.k + 15) / 16)
               : int64_t(p.words.size()) / spec.n;
  p.rows = int64_t(p.words.size()) / p.cols;
  return p;
}

/// The entry point of `spec` that takes T rows.
std::string entryFor(const QuantKernelSpec &spec, int64_t t) {
  for (const KernelEntryPoint &e : kernelAbiOf(spec).entries)
    if (t >= e.minRows && (!e.maxRows || t <= *e.maxRows))
      return e.symbol;
  ADD_FAILURE() << spec.name() << " has no entry for T = " << t;
  return spec.name();
}

/// A [rows, cols] descriptor of rows [n0, n0 + rows) of `o`.
StridedMemRefType<uint8_t, 2> rowsOf(Operand &o, int64_t n0, int64_t rows) {
  uint8_t *p = o.bytes.data() + size_t(n0 * o.cols) * o.width;
  return {p, p, 0, {rows, o.cols}, {o.cols, 1}};
}

/// y (as its raw 32-bit or 16-bit words) for output rows [n0, n1) (a host
/// GEMM's slice; the GPU families take [0, N)).
llvm::Error callRows(mlir::ExecutionEngine &engine, const QuantKernelSpec &spec,
                     Operands &o, PackedWeight &packed,
                     std::vector<uint16_t> &x, int64_t t, int64_t n0,
                     int64_t n1, std::vector<uint32_t> &y) {
  const int64_t rows = n1 - n0;
  StridedMemRefType<uint16_t, 2> xd{
      x.data(), x.data(), 0, {t, spec.k}, {spec.k, 1}};
  const bool slice = n0 != 0 || n1 != spec.n;
  int32_t *wp = packed.words.data() + n0 * packed.cols;
  StridedMemRefType<int32_t, 2> wd{
      wp, wp, 0, {slice ? rows : packed.rows, packed.cols}, {packed.cols, 1}};
  const bool nested = spec.nested.has_value();
  auto s = rowsOf(nested ? o.scaleCodes : o.scales, n0, rows);
  auto s2 = rowsOf(o.superScales, n0, rows);
  auto z = rowsOf(nested ? o.minCodes : o.mins, n0, rows);
  auto z2 = rowsOf(o.superMins, n0, rows);
  const bool f32 = spec.output == FloatType::F32;
  void *bp = f32 ? static_cast<void *>(o.biasF32.data() + n0)
                 : static_cast<void *>(o.bias.data() + n0);
  StridedMemRefType<uint8_t, 1> bd{
      static_cast<uint8_t *>(bp), static_cast<uint8_t *>(bp), 0, {rows}, {1}};
  // y holds f32 words or 16-bit halves packed two to a word.
  uint8_t *yp =
      reinterpret_cast<uint8_t *>(y.data()) + size_t(n0) * (f32 ? 4 : 2);
  StridedMemRefType<uint8_t, 2> yd{yp, yp, 0, {t, rows}, {spec.n, 1}};
  llvm::SmallVector<void *> descriptors = {&xd, &wd, &s};
  if (nested)
    descriptors.push_back(&s2);
  if (spec.minZero)
    descriptors.push_back(&z);
  if (nested && spec.minZero)
    descriptors.push_back(&z2);
  if (spec.bias)
    descriptors.push_back(&bd);
  descriptors.push_back(&yd);
  llvm::SmallVector<void *> args;
  for (void *&d : descriptors)
    args.push_back(&d);
  return engine.invokePacked("_mlir_ciface_" + entryFor(spec, t), args);
}

/// T rows through both kernels, whole and (host GEMM) in three row ranges.
void expectSameBits(mlir::ExecutionEngine &decoded,
                    mlir::ExecutionEngine &nested, const NestedCase &c,
                    KernelFamily family, Operands &o, PackedWeight &packed,
                    int64_t t, std::mt19937 &rng) {
  std::vector<uint16_t> x(size_t(t * c.k));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (uint16_t &v : x)
    v = toBits(uniform(rng), c.act);
  const size_t words =
      c.out == FloatType::F32 ? size_t(t * c.n) : size_t(t * c.n + 1) / 2;
  std::vector<uint32_t> want(words, 0x7fc07fc0u), whole(want), split(want);
  QuantKernelSpec plain = specOf(c, false, family),
                  read = specOf(c, true, family);
  llvm::Error e = callRows(decoded, plain, o, packed, x, t, 0, c.n, want);
  ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
  e = callRows(nested, read, o, packed, x, t, 0, c.n, whole);
  ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
  EXPECT_EQ(whole, want) << "T = " << t << ": nested differs from decoded";
  if (family == KernelFamily::HostGemm) {
    const int64_t cuts[] = {0, c.n / 3, (2 * c.n) / 3 + 1, c.n};
    for (int i = 0; i < 3; ++i) {
      if (cuts[i] >= cuts[i + 1])
        continue;
      e = callRows(nested, read, o, packed, x, t, cuts[i], cuts[i + 1], split);
      ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
    }
    EXPECT_EQ(split, want) << "T = " << t << ": nested row ranges differ";
  }
  // Every output written (NaN-filled before) and not all zero.
  bool nonZero = false;
  for (size_t i = 0; i < size_t(t * c.n); ++i) {
    const double v =
        c.out == FloatType::F32
            ? double(reinterpret_cast<const float *>(want.data())[i])
            : fromBits(reinterpret_cast<const uint16_t *>(want.data())[i],
                       c.out);
    ASSERT_TRUE(std::isfinite(v)) << "T = " << t << " output " << i;
    nonZero |= v != 0;
  }
  EXPECT_TRUE(nonZero);
}

std::vector<NestedCase> cases() {
  const FloatType f16 = FloatType::F16, bf16 = FloatType::BF16,
                  f32 = FloatType::F32;
  return {
      // Q4_K, Q5_K: unsigned codes, 6-bit scale and min codes per 32 under
      // an f16 d and dmin per 256.
      {"Q4_K", 4, false, 32, 256, 6, false, f16, f16, f16, false, true, 37,
       512},
      {"Q4_K f32 out, bias", 4, false, 32, 256, 6, false, bf16, f16, f32, true,
       false, 13, 768},
      {"Q5_K", 5, false, 32, 256, 6, false, f16, f16, bf16, true, true, 7, 256},
      // Q6_K: signed 6-bit codes, int8 scale codes per 16.
      {"Q6_K", 6, true, 16, 256, 8, true, f16, f16, f16, false, true, 37, 512},
      {"Q6_K decoded rows", 6, true, 16, 256, 8, true, bf16, bf16, f32, true,
       false, 13, 256},
      // Q3_K: signed 3-bit codes, signed 6-bit scale codes per 16.
      {"Q3_K", 3, true, 16, 256, 6, true, f16, f16, f32, false, true, 9, 512},
      // Q2_K: unsigned 2-bit codes, 4-bit scale and min codes per 16.
      {"Q2_K", 2, false, 16, 256, 4, false, f16, f16, f16, false, true, 11,
       256},
      // A row longer than the stack buffer: every T takes the one-pass
      // path, each row's levels decoded once for all of its tokens.
      {"Q4_K long row", 4, false, 32, 256, 6, false, f16, f16, f32, false,
       false, 3, 33024},
      // IQ4_XS: IQ4_NL's table indices, signed 6-bit scale codes per 32.
      {"IQ4_XS", 4, false, 32, 256, 6, true, f16, f16, f32, true, false, 13,
       512, Codebook::IQ4NL},
  };
}

TEST(HostGemmNested, EqualsTheDecodedFirstLevelBitForBit) {
  qtensor::test::HostKernelJit jit;
  std::vector<HostCpuLevel> levels = {HostCpuLevel::Generic};
  if (hostCpuSupports(HostCpuLevel::X86_64_V3))
    levels.push_back(HostCpuLevel::X86_64_V3);
  if (hostCpuSupports(HostCpuLevel::X86_64_V4_VNNI))
    levels.push_back(HostCpuLevel::X86_64_V4_VNNI);
  // AMX tiles at T > 1 (K-quants: a min, or 16-code steps), two 16-token
  // blocks included.
  if (hostCpuSupports(HostCpuLevel::X86_64_V4_AMX))
    levels.push_back(HostCpuLevel::X86_64_V4_AMX);
  uint32_t seed = 11;
  for (const NestedCase &c : cases()) {
    SCOPED_TRACE(c.what);
    std::mt19937 rng(seed++);
    Operands o = makeOperands(c, rng);
    PackedWeight packed = packFor(specOf(c, true), o);
    ASSERT_FALSE(packed.words.empty());
    for (HostCpuLevel level : levels) {
      SCOPED_TRACE(toString(level));
      auto build = [level](mlir::ModuleOp module, const QuantKernelSpec &s,
                           KernelTarget target) {
        return buildHostGemmKernel(module, s, target, level);
      };
      auto decoded = jit.compile(specOf(c, false), build);
      auto nested = jit.compile(specOf(c, true), build);
      ASSERT_NE(decoded, nullptr);
      ASSERT_NE(nested, nullptr);
      for (int64_t t : {1, 3, 4, 5, 9, 20})
        expectSameBits(*decoded, *nested, c, KernelFamily::HostGemm, o, packed,
                       t, rng);
    }
  }
}

// The GPU kernels' host twins: the decode GEMV through each T bucket, the
// tensor-core GEMM through one and several row tiles.
TEST(GpuKernelsNested, EqualTheDecodedFirstLevelBitForBit) {
  qtensor::test::HostKernelJit jit;
  struct Family {
    KernelFamily family;
    qtensor::test::HostKernelJit::Builder build;
    std::vector<int64_t> tokens;
  };
  const Family families[] = {
      {KernelFamily::DecodeGemv, buildDecodeGemvKernel, {1, 2, 3, 7, 16}},
      {KernelFamily::PrefillMma, buildPrefillMmaKernel, {1, 17, 70}},
  };
  uint32_t seed = 29;
  for (const NestedCase &c : cases()) {
    SCOPED_TRACE(c.what);
    std::mt19937 rng(seed++);
    Operands o = makeOperands(c, rng);
    for (const Family &f : families) {
      QuantKernelSpec read = specOf(c, true, f.family);
      SCOPED_TRACE(read.name());
      PackedWeight packed = packFor(read, o);
      ASSERT_FALSE(packed.words.empty());
      auto decoded = jit.compile(specOf(c, false, f.family), f.build);
      auto nested = jit.compile(read, f.build);
      ASSERT_NE(decoded, nullptr);
      ASSERT_NE(nested, nullptr);
      for (int64_t t : f.tokens)
        expectSameBits(*decoded, *nested, c, f.family, o, packed, t, rng);
    }
  }
}

TEST(HostGemmNested, SpecTextAndLimits) {
  auto q4k = parseQuantKernelSpec(
      "host_gemm:w4:g32:min:f16:n8:k512:scf32:sup256u8f16");
  ASSERT_TRUE(bool(q4k)) << q4k.message();
  ASSERT_TRUE(q4k->nested.has_value());
  EXPECT_EQ(q4k->nested->superGroupSize, 256);
  EXPECT_FALSE(q4k->nested->signedCodes);
  EXPECT_EQ(q4k->nested->superType, FloatType::F16);
  EXPECT_EQ(q4k->superGroupsPerRow(), 2);
  EXPECT_EQ(q4k->name(),
            "qt_host_gemm_w4min_g32_f16_tdyn_n8_k512_s1_scf32_sup256u8f16");
  auto q6k = parseQuantKernelSpec(
      "host_gemm:w6:g16:sym:bf16:n8:k256:scf32:sup256i8bf16");
  ASSERT_TRUE(bool(q6k)) << q6k.message();
  EXPECT_TRUE(q6k->nested->signedCodes);
  EXPECT_EQ(q6k->nested->superType, FloatType::BF16);

  struct Bad {
    const char *spec, *why;
  };
  for (const Bad &b : {
           Bad{"host_gemm:w4:g32:min:f16:n8:k512:scf32:sup100u8f16",
               "super-groups of 1 to 64 groups"},
           Bad{"host_gemm:w4:g32:min:f16:n8:k384:scf32:sup256u8f16",
               "K a multiple of the super-group 256"},
           Bad{"host_gemm:w4:g32:min:f16:n8:k512:scf16:sup256u8f16",
               "decode to f32"},
           Bad{"host_gemm:w4:g32:asym:f16:n8:k512:scf32:sup256u8f16",
               "not integer zero-points"},
           Bad{"decode_gemv:w4:g32:min:f16:t1:n8:k384:scf32:sup256u8f16",
               "K a multiple of the super-group 256"},
           Bad{"prefill_mma:w6:g16:sym:f16:n8:k512:scf16:sup256i8f16",
               "decode to f32"},
           Bad{"host_gemm:w4:g32:min:f16:n8:k512:scf32:sup256u8f32",
               "unknown option"},
           Bad{"host_gemm:w4:g32:min:f16:n8:k512:sup256u8f16:sup256u8f16",
               "given twice"},
       }) {
    auto spec = parseQuantKernelSpec(b.spec);
    ASSERT_FALSE(bool(spec)) << b.spec;
    EXPECT_NE(spec.message().find(b.why), std::string::npos)
        << b.spec << ": " << spec.message();
  }
}

} // namespace
