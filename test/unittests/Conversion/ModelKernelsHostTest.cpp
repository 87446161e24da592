//===- ModelKernelsHostTest.cpp - The decoder's kernels, run in-process ---===//
//
// Each model kernel (ModelKernels.h) built, lowered with the host pipeline,
// JIT-compiled and run on small f32 problems against a float64 loop written
// here: RMSNorm (in place too), both RoPE pairings, causal attention with
// and without a sliding window over a cache with stale rows, the SiLU and
// GELU gates, the embedding with a scale and a clamped id (from a float
// table and from stored codes), the argmax. The
// whole-model test is lit's qtc-run-prompt.test; this isolates each kernel.
//
//===----------------------------------------------------------------------===//

#include "HostKernelJit.h"

#include "qtensor/Conversion/ModelKernels.h"
#include "qtensor/Numerics/FloatFormats.h"
#include "qtensor/Numerics/KernelLayout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace qtensor;
using qtensor::test::HostBuffer;

namespace {

class ModelKernelJit {
public:
  /// JIT-compiles `spec` and calls it with `args` (memref descriptors).
  void run(const ModelKernelSpec &spec, std::vector<void *> args) {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::ModuleOp::create(mlir::UnknownLoc::get(&jit.context));
    ASSERT_TRUE(mlir::succeeded(buildModelKernel(*module, spec)));
    mlir::PassManager pm(&jit.context);
    buildLowerKernelsToHostPipeline(pm);
    ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
    auto engine = mlir::ExecutionEngine::create(*module);
    ASSERT_TRUE(bool(engine)) << llvm::toString(engine.takeError());
    std::vector<void *> packed;
    for (void *&a : args)
      packed.push_back(&a);
    llvm::Error err = (*engine)->invokePacked(spec.symbol(), packed);
    ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));
  }
  qtensor::test::HostKernelJit jit;
};

std::vector<float> randoms(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

ModelKernelSpec f32Spec(ModelOp op) {
  ModelKernelSpec s;
  s.op = op;
  s.input = s.weight = s.output = FloatType::F32;
  return s;
}

TEST(ModelKernelsHost, RmsNormInPlace) {
  const int64_t t = 3, d = 8;
  ModelKernelSpec s = f32Spec(ModelOp::RmsNorm);
  s.width = d;
  s.eps = 1e-5;
  std::vector<float> x = randoms(t * d, 1), w = randoms(d, 2);
  std::vector<double> want(x.size());
  for (int64_t i = 0; i < t; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < d; ++j)
      sum += double(x[i * d + j]) * x[i * d + j];
    double scale = 1 / std::sqrt(sum / d + s.eps);
    for (int64_t j = 0; j < d; ++j)
      want[i * d + j] = x[i * d + j] * scale * w[j];
  }
  HostBuffer<float, 2> xb({t, d}, x);
  HostBuffer<float, 1> wb({d}, w);
  ModelKernelJit k;
  k.run(s, {&xb.desc, &wb.desc, &xb.desc}); // y = x: in place
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(xb.data[i], want[i], 1e-5) << i;
}

void checkRope(artifact::RopeStyle style) {
  const int64_t t = 3, heads = 2, hd = 8, rd = 6; // dims 6, 7 pass through
  ModelKernelSpec s = f32Spec(ModelOp::RopeQ);
  s.heads = heads;
  s.kvHeads = heads;
  s.headDim = hd;
  s.ropeDim = rd;
  s.ropeBase = 500.0;
  s.rope = style;
  s.width = heads * hd;
  std::vector<float> x = randoms(t * heads * hd, 3);
  std::vector<int32_t> pos = {4, 0, 9};
  std::vector<double> want(x.begin(), x.end());
  for (int64_t i = 0; i < t; ++i)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t p = 0; p < rd / 2; ++p) {
        double theta = pos[i] * std::pow(500.0, -2.0 * p / rd);
        int64_t base = i * heads * hd + h * hd;
        int64_t a =
            style == artifact::RopeStyle::Interleaved ? base + 2 * p : base + p;
        int64_t b =
            style == artifact::RopeStyle::Interleaved ? a + 1 : a + rd / 2;
        want[a] = x[a] * std::cos(theta) - x[b] * std::sin(theta);
        want[b] = x[a] * std::sin(theta) + x[b] * std::cos(theta);
      }
  HostBuffer<float, 2> xb({t, heads * hd}, x);
  HostBuffer<int32_t, 1> pb({t}, pos);
  HostBuffer<float, 2> yb({t, heads * hd}, std::vector<float>(x.size()));
  ModelKernelJit k;
  k.run(s, {&xb.desc, &pb.desc, &yb.desc});
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(yb.data[i], want[i], 1e-5) << i;
}

TEST(ModelKernelsHost, RopeInterleaved) {
  checkRope(artifact::RopeStyle::Interleaved);
}
TEST(ModelKernelsHost, RopeHalf) { checkRope(artifact::RopeStyle::Half); }

/// Causal GQA over a cache of `cap` rows (rows past the last position hold
/// garbage the kernel must not read), with an optional window. A head dim
/// of 4 takes the scalar loops, 16 the 8-lane vector ones. The kernel is
/// called once per range of heads (as the runtime splits a token's heads
/// across threads); heads outside every range must keep their sentinel.
/// With `halfCache` the cache is f16 (the kernel's `weight`), read widened
/// to f32: the reference uses the same rounded values.
void checkAttention(int64_t window, int64_t hd,
                    std::vector<std::pair<int32_t, int32_t>> ranges = {{0, 4}},
                    bool halfCache = false) {
  const int64_t t = 2, heads = 4, kvHeads = 2, cap = 8;
  const double scale = 0.3;
  ModelKernelSpec s = f32Spec(ModelOp::Attention);
  s.heads = heads;
  s.kvHeads = kvHeads;
  s.headDim = hd;
  s.width = heads * hd;
  s.scale = scale;
  s.window = window;
  std::vector<float> q = randoms(t * heads * hd, 4);
  std::vector<float> kc = randoms(cap * kvHeads * hd, 5);
  std::vector<float> vc = randoms(cap * kvHeads * hd, 6);
  for (int64_t j = 6; j < cap; ++j) // stale rows: must be ignored
    for (int64_t e = 0; e < kvHeads * hd; ++e)
      kc[j * kvHeads * hd + e] = vc[j * kvHeads * hd + e] = 1e6f;
  std::vector<uint16_t> kh, vh; // f16 bits (1e6 becomes inf: still unread)
  if (halfCache) {
    s.weight = FloatType::F16;
    for (auto [from, bits] : {std::pair{&kc, &kh}, {&vc, &vh}})
      for (float &x : *from) {
        bits->push_back(floatToHalfBits(x));
        x = halfBitsToFloat(bits->back());
      }
  }
  std::vector<int32_t> pos = {4, 5};
  std::vector<double> want(q.size());
  for (int64_t i = 0; i < t; ++i)
    for (int64_t h = 0; h < heads; ++h) {
      int64_t kv = h / (heads / kvHeads), last = pos[i];
      int64_t first = window && last + 1 > window ? last + 1 - window : 0;
      std::vector<double> sc;
      double top = -INFINITY;
      for (int64_t j = first; j <= last; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < hd; ++e)
          dot += double(q[i * heads * hd + h * hd + e]) *
                 kc[j * kvHeads * hd + kv * hd + e];
        sc.push_back(dot * scale);
        top = std::max(top, sc.back());
      }
      double sum = 0;
      for (double &x : sc)
        sum += (x = std::exp(x - top));
      for (int64_t e = 0; e < hd; ++e) {
        double acc = 0;
        for (int64_t j = first; j <= last; ++j)
          acc += sc[j - first] * vc[j * kvHeads * hd + kv * hd + e];
        want[i * heads * hd + h * hd + e] = acc / sum;
      }
    }
  HostBuffer<float, 2> qb({t, heads * hd}, q);
  HostBuffer<float, 2> kb({cap, kvHeads * hd}, kc), vb({cap, kvHeads * hd}, vc);
  HostBuffer<uint16_t, 2> khb({cap, kvHeads * hd}, kh),
      vhb({cap, kvHeads * hd}, vh);
  void *kDesc = halfCache ? static_cast<void *>(&khb.desc) : &kb.desc;
  void *vDesc = halfCache ? static_cast<void *>(&vhb.desc) : &vb.desc;
  HostBuffer<int32_t, 1> pb({t}, pos);
  // The scores row starts dirty: a window must not sum rows before it.
  HostBuffer<float, 1> sb({cap}, std::vector<float>(cap, 1e3f));
  const float sentinel = -7.0f;
  HostBuffer<float, 2> ob({t, heads * hd},
                          std::vector<float>(q.size(), sentinel));
  std::vector<bool> computed(size_t(heads), false);
  ModelKernelJit k;
  for (auto [first, end] : ranges) {
    HostBuffer<int32_t, 1> hb({2}, {first, end});
    k.run(s, {&qb.desc, kDesc, vDesc, &pb.desc, &sb.desc, &hb.desc, &ob.desc});
    for (int64_t h = std::max(0, first); h < std::min<int64_t>(end, heads); ++h)
      computed[size_t(h)] = true;
  }
  for (size_t i = 0; i < want.size(); ++i) {
    if (computed[(i / size_t(hd)) % size_t(heads)])
      EXPECT_NEAR(ob.data[i], want[i], 1e-5) << i;
    else
      EXPECT_EQ(ob.data[i], sentinel) << "head outside the range, " << i;
  }
}

TEST(ModelKernelsHost, AttentionCausal) { checkAttention(0, 4); }
TEST(ModelKernelsHost, AttentionSlidingWindow) { checkAttention(3, 4); }
TEST(ModelKernelsHost, AttentionVectorCausal) { checkAttention(0, 16); }
TEST(ModelKernelsHost, AttentionVectorSlidingWindow) { checkAttention(3, 16); }
TEST(ModelKernelsHost, AttentionHeadRangesCoverAllHeads) {
  checkAttention(0, 4, {{0, 1}, {1, 4}});
  checkAttention(3, 16, {{2, 4}, {0, 2}});
}
TEST(ModelKernelsHost, AttentionReadsAHalfPrecisionCache) {
  checkAttention(0, 4, {{0, 4}}, /*halfCache=*/true);
  checkAttention(3, 16, {{0, 4}}, /*halfCache=*/true);
}
TEST(ModelKernelsHost, AttentionHeadRangeLeavesOtherHeads) {
  checkAttention(0, 16, {{1, 3}});
  // Past H clamps to H; an empty or inverted range computes nothing.
  checkAttention(0, 4, {{3, 99}, {2, 2}, {2, 1}});
}

TEST(ModelKernelsHost, GatesSiluAndGelu) {
  const int64_t t = 2, f = 16;
  std::vector<float> g = randoms(t * f, 7), u = randoms(t * f, 8);
  for (float &x : g)
    x *= 4; // cover the tails
  for (ModelOp op : {ModelOp::SiluMul, ModelOp::GeluMul}) {
    ModelKernelSpec s = f32Spec(op);
    s.width = f;
    HostBuffer<float, 2> gb({t, f}, g), ub({t, f}, u);
    HostBuffer<float, 2> yb({t, f}, std::vector<float>(g.size()));
    ModelKernelJit k;
    k.run(s, {&gb.desc, &ub.desc, &yb.desc});
    for (size_t i = 0; i < g.size(); ++i) {
      double x = g[i];
      double gate = op == ModelOp::SiluMul
                        ? x / (1 + std::exp(-x))
                        : 0.5 * x *
                              (1 + std::tanh(std::sqrt(2 / M_PI) *
                                             (x + 0.044715 * x * x * x)));
      EXPECT_NEAR(yb.data[i], gate * u[i], 1e-5) << i;
    }
  }
}

TEST(ModelKernelsHost, EmbedScalesAndClampsIds) {
  const int64_t v = 5, d = 3;
  ModelKernelSpec s = f32Spec(ModelOp::Embed);
  s.width = v;
  s.rows = d;
  s.scale = 2.0;
  std::vector<float> table = randoms(v * d, 9);
  std::vector<int32_t> ids = {3, -1, 99}; // -1 and 99 clamp to v - 1
  HostBuffer<int32_t, 1> ib({3}, ids);
  HostBuffer<float, 2> tb({v, d}, table);
  HostBuffer<float, 2> ob({3, d}, std::vector<float>(3 * d));
  ModelKernelJit k;
  k.run(s, {&ib.desc, &tb.desc, &ob.desc});
  for (int64_t e = 0; e < d; ++e) {
    EXPECT_FLOAT_EQ(ob.data[e], 2 * table[3 * d + e]);
    EXPECT_FLOAT_EQ(ob.data[d + e], 2 * table[4 * d + e]);
    EXPECT_FLOAT_EQ(ob.data[2 * d + e], 2 * table[4 * d + e]);
  }
}

/// A [v, d] table of `bits`-bit codes in groups of `group`, stored as
/// decode_gemv lays it out (a code per byte, or two per byte at 4 bits),
/// gathered by the EmbedCodes kernel built from its descriptor: every value
/// is s * q, s * (q - z) or s * q + m in f32, each operation rounded once
/// in the descriptor's order, times the row scale.
struct EmbedCase {
  unsigned bits;
  bool isSigned;
  int64_t group;
  FloatType scaleType;
  ZeroPointKind zero = ZeroPointKind::None;
  Codebook codebook = Codebook::None;
};

void checkEmbedCodes(const EmbedCase &e) {
  SCOPED_TRACE(std::to_string(e.bits) + "-bit " +
               (e.isSigned ? "signed" : "unsigned") + " codes, groups of " +
               std::to_string(e.group) + ", zero-point " + toString(e.zero) +
               ", codebook " + toString(e.codebook));
  const int64_t v = 5, d = 64, groups = d / e.group;
  artifact::DecoderConfig c;
  c.vocab = v;
  c.hidden = d;
  c.embedScale = 1.5;
  QuantizedTensorDescriptor t;
  t.shape = {v, d};
  t.descriptor.code = {e.bits, e.isSigned};
  t.descriptor.granularity = Granularity::Group;
  t.descriptor.axis = 1;
  t.descriptor.groupSize = e.group;
  t.descriptor.scaleType = e.scaleType;
  t.descriptor.zeroPoint = e.zero;
  t.descriptor.codebook = e.codebook;
  t.layout.family = "decode_gemv";
  Expected<ModelKernelSpec> s = embedCodesKernel(c, t);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(s->op, ModelOp::EmbedCodes);
  // 64 codes: whole 16-byte chunks, a byte a code or two codes a byte.
  ASSERT_EQ(s->rowStride, e.bits == 4 ? d / 2 : d);

  std::mt19937 rng(e.bits * 7 + unsigned(e.zero));
  const int32_t lo = e.isSigned ? -(1 << (e.bits - 1)) : 0;
  const int32_t hi = e.isSigned ? (1 << (e.bits - 1)) - 1 : (1 << e.bits) - 1;
  std::uniform_int_distribution<int32_t> code(lo, hi);
  std::vector<int32_t> q(v * d);
  for (int32_t &x : q) {
    x = code(rng);
    // E4M3's NaN codes are no weight (the reconstruction refuses them).
    if (e.codebook != Codebook::None &&
        std::isnan(codebookValues(e.codebook)[size_t(x)]))
      x = 0;
  }
  KernelLayoutSpec layout{KernelLayoutKind::DecodeGemv, e.bits, e.isSigned};
  Expected<std::vector<uint8_t>> packed =
      packKernelLayout(layout, q.data(), v, d);
  ASSERT_TRUE(packed) << packed.message();
  std::vector<int8_t> bytes(packed->begin(), packed->end());
  ASSERT_EQ(int64_t(bytes.size()), v * s->rowStride);
  // Float qparams, each exact in the scale dtype; integer zero-points U8.
  auto qparams = [&](uint32_t seed, std::vector<uint16_t> &halves) {
    std::vector<float> x = randoms(size_t(v * groups), seed);
    for (float &f : x)
      if (e.scaleType == FloatType::F16) {
        halves.push_back(floatToHalfBits(f));
        f = halfBitsToFloat(halves.back());
      }
    return x;
  };
  std::vector<uint16_t> scaleHalves, zeroHalves;
  std::vector<float> scales = qparams(11, scaleHalves);
  std::vector<float> zeros = qparams(12, zeroHalves);
  std::vector<int8_t> zeroBytes;
  for (int64_t i = 0; i < v * groups; ++i)
    zeroBytes.push_back(int8_t(uint8_t(rng() % 256)));

  std::vector<int32_t> ids = {4, 0, 2, 77}; // 77 clamps to v - 1
  HostBuffer<int32_t, 1> ib({4}, ids);
  HostBuffer<int8_t, 2> cb({v, s->rowStride}, bytes);
  HostBuffer<float, 2> sf({v, groups}, scales), zf({v, groups}, zeros);
  HostBuffer<uint16_t, 2> sh({v, groups}, scaleHalves),
      zh({v, groups}, zeroHalves);
  HostBuffer<int8_t, 2> zb({v, groups}, zeroBytes);
  HostBuffer<float, 2> ob({4, d}, std::vector<float>(4 * d));
  const bool half = e.scaleType == FloatType::F16;
  std::vector<void *> args = {&ib.desc, &cb.desc,
                              half ? static_cast<void *>(&sh.desc)
                                   : static_cast<void *>(&sf.desc)};
  if (e.zero == ZeroPointKind::Integer)
    args.push_back(&zb.desc);
  else if (e.zero != ZeroPointKind::None)
    args.push_back(half ? static_cast<void *>(&zh.desc)
                        : static_cast<void *>(&zf.desc));
  args.push_back(&ob.desc);
  ModelKernelJit k;
  k.run(*s, args);
  for (int64_t i = 0; i < 4; ++i) {
    const int64_t row = std::min<int64_t>(ids[size_t(i)], v - 1);
    for (int64_t col = 0; col < d; ++col) {
      const size_t g = size_t(row * groups + col / e.group);
      const int32_t code = q[size_t(row * d + col)];
      const float sc = scales[g];
      float x = 0;
      switch (e.zero) {
      case ZeroPointKind::None:
        x = sc * (e.codebook == Codebook::None
                      ? float(code)
                      : codebookValues(e.codebook)[size_t(code)]);
        break;
      case ZeroPointKind::Integer:
        x = sc * float(code - int32_t(uint8_t(zeroBytes[g])));
        break;
      case ZeroPointKind::Float: {
        const float centered = float(code) - zeros[g];
        x = sc * centered;
        break;
      }
      case ZeroPointKind::Min: {
        const float scaled = sc * float(code);
        x = scaled + zeros[g];
        break;
      }
      }
      EXPECT_EQ(ob.data[size_t(i * d + col)], x * 1.5f) << i << ", " << col;
    }
  }
}

TEST(ModelKernelsHost, EmbedCodesGathersStoredRows) {
  using Z = ZeroPointKind;
  checkEmbedCodes({8, true, 32, FloatType::F16});              // ggml Q8_0
  checkEmbedCodes({6, true, 16, FloatType::F32});              // Q6_K (d * s_j)
  checkEmbedCodes({4, true, 32, FloatType::F16});              // Q4_0
  checkEmbedCodes({5, true, 32, FloatType::F16});              // Q5_0
  checkEmbedCodes({4, false, 32, FloatType::F16, Z::Min});     // Q4_1
  checkEmbedCodes({4, false, 32, FloatType::F32, Z::Min});     // Q4_K, decoded
  checkEmbedCodes({5, false, 32, FloatType::F32, Z::Min});     // Q5_K, decoded
  checkEmbedCodes({2, false, 16, FloatType::F32, Z::Min});     // Q2_K, decoded
  checkEmbedCodes({8, false, 32, FloatType::F16, Z::Integer}); // u8 asym
  checkEmbedCodes({4, false, 64, FloatType::F16, Z::Float});
  checkEmbedCodes({4, false, 32, FloatType::F16, Z::None, Codebook::IQ4NL});
  checkEmbedCodes({4, false, 32, FloatType::F32, Z::None, Codebook::E2M1});
  checkEmbedCodes({8, false, 32, FloatType::F32, Z::None, Codebook::E4M3});
}

TEST(ModelKernelsHost, EmbedCodesRefusesWhatItCannotRead) {
  artifact::DecoderConfig c;
  c.vocab = 4;
  c.hidden = 64;
  QuantizedTensorDescriptor t;
  t.shape = {4, 64};
  t.descriptor.code = {8, true};
  t.descriptor.granularity = Granularity::Group;
  t.descriptor.axis = 1;
  t.descriptor.groupSize = 32;
  t.layout.family = "decode_gemv";
  ASSERT_TRUE(embedCodesKernel(c, t));
  auto refused = [&](QuantizedTensorDescriptor bad, const std::string &why) {
    Expected<ModelKernelSpec> s = embedCodesKernel(c, bad);
    ASSERT_FALSE(s) << why;
    EXPECT_NE(s.message().find(why), std::string::npos) << s.message();
  };
  QuantizedTensorDescriptor seven = t;
  seven.descriptor.code = {7, true};
  refused(seven, "2- to 8-bit codes (not 7)");
  QuantizedTensorDescriptor signedZero = t;
  signedZero.descriptor.zeroPoint = ZeroPointKind::Integer;
  refused(signedZero, "signed codes under integer zero-points");
  QuantizedTensorDescriptor book = t; // 8-bit indices, 16 entries
  book.descriptor.code = {8, false};
  book.descriptor.codebook = Codebook::IQ4NL;
  refused(book, "not unsigned indices of its 16 entries");
  QuantizedTensorDescriptor permuted = t;
  permuted.descriptor.permutation = std::vector<int64_t>(64);
  refused(permuted, "permuted");
  QuantizedTensorDescriptor mma = t;
  mma.layout.family = "prefill_mma";
  refused(mma, "decode_gemv rows");
  QuantizedTensorDescriptor shape = t;
  shape.shape = {4, 32};
  refused(shape, "[vocab, hidden]");
}

TEST(ModelKernelsHost, ArgmaxOfTheLastRowFirstMaximum) {
  const int64_t v = 6;
  ModelKernelSpec s = f32Spec(ModelOp::Argmax);
  s.width = v;
  std::vector<float> logits = {9, 9, 9, 9, 9, 9, // row 0: ignored
                               1, 7, 3, 7, 0, -2};
  HostBuffer<float, 2> lb({2, v}, logits);
  HostBuffer<int32_t, 1> ob({1}, {-1});
  ModelKernelJit k;
  k.run(s, {&lb.desc, &ob.desc});
  EXPECT_EQ(ob.data[0], 1);
}

} // namespace

namespace {

/// The float linear on T rows and a K with a tail past the 8-lane vectors,
/// once whole and once as two calls on ranges of its weight rows (w from
/// the range's first row, y from its column with the whole row stride), as
/// the runtime splits it across threads: the same bits either way.
TEST(ModelKernelsHost, FloatLinearWholeAndRowSplit) {
  const int64_t t = 6, k = 37, n = 11; // T: a block of 4, then 2 single rows
  ModelKernelSpec s = f32Spec(ModelOp::FloatLinear);
  s.width = k;
  s.rows = n;
  std::vector<float> x = randoms(t * k, 11), w = randoms(n * k, 12);
  std::vector<double> want(size_t(t * n)), absSum(want.size());
  for (int64_t i = 0; i < t; ++i)
    for (int64_t r = 0; r < n; ++r)
      for (int64_t j = 0; j < k; ++j) {
        want[i * n + r] += double(x[i * k + j]) * w[r * k + j];
        absSum[i * n + r] += std::fabs(double(x[i * k + j]) * w[r * k + j]);
      }
  HostBuffer<float, 2> xb({t, k}, x);
  ModelKernelJit whole, split;
  HostBuffer<float, 2> wb({n, k}, w);
  HostBuffer<float, 2> yb({t, n}, std::vector<float>(size_t(t * n), NAN));
  whole.run(s, {&xb.desc, &wb.desc, &yb.desc});
  const double gamma = (k + 2) * std::ldexp(1.0, -24);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_LE(std::fabs(yb.data[i] - want[i]), gamma * absSum[i] + 1e-30) << i;

  std::vector<float> ys(size_t(t * n), NAN);
  for (auto [n0, n1] : {std::pair<int64_t, int64_t>{0, 4}, {4, n}}) {
    StridedMemRefType<float, 2> wr{
        w.data() + n0 * k, w.data() + n0 * k, 0, {n1 - n0, k}, {k, 1}};
    StridedMemRefType<float, 2> yr{
        ys.data() + n0, ys.data() + n0, 0, {t, n1 - n0}, {n, 1}};
    split.run(s, {&xb.desc, &wr, &yr});
  }
  EXPECT_EQ(0, std::memcmp(ys.data(), yb.data.data(), ys.size() * 4));

  // With a bias (qwen2's q, k, v kept float): added to the f32 sum before
  // the one rounding, so with f32 outputs exactly fl(y + b[n]); the bias's
  // range follows the weight's when the rows are split.
  ModelKernelSpec sb = s;
  sb.bias = FloatType::F32;
  EXPECT_NE(sb.name(), s.name());
  EXPECT_NE(sb.name().find("_biasf32"), std::string::npos) << sb.name();
  std::vector<float> b = randoms(n, 13);
  HostBuffer<float, 1> bb({n}, b);
  HostBuffer<float, 2> ybb({t, n}, std::vector<float>(size_t(t * n), NAN));
  ModelKernelJit withBias, splitBias;
  withBias.run(sb, {&xb.desc, &wb.desc, &bb.desc, &ybb.desc});
  for (int64_t i = 0; i < t; ++i)
    for (int64_t r = 0; r < n; ++r)
      EXPECT_EQ(ybb.data[size_t(i * n + r)],
                yb.data[size_t(i * n + r)] + b[size_t(r)])
          << i << ", " << r;
  std::fill(ys.begin(), ys.end(), NAN);
  for (auto [n0, n1] : {std::pair<int64_t, int64_t>{0, 5}, {5, n}}) {
    StridedMemRefType<float, 2> wr{
        w.data() + n0 * k, w.data() + n0 * k, 0, {n1 - n0, k}, {k, 1}};
    StridedMemRefType<float, 1> br{
        b.data() + n0, b.data() + n0, 0, {n1 - n0}, {1}};
    StridedMemRefType<float, 2> yr{
        ys.data() + n0, ys.data() + n0, 0, {t, n1 - n0}, {n, 1}};
    splitBias.run(sb, {&xb.desc, &wr, &br, &yr});
  }
  EXPECT_EQ(0, std::memcmp(ys.data(), ybb.data.data(), ys.size() * 4));
}

} // namespace
