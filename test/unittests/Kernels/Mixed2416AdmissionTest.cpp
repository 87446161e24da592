//===- Mixed2416AdmissionTest.cpp - Seed 0x07D's admission clauses --------===//

#include "qtensor/Kernels/Mixed2416Admission.h"
#include "qtensor/Kernels/Registry.h"

#include <gtest/gtest.h>

using namespace qtensor;
using namespace qtensor::kernels;

namespace {

Mixed2416Descriptor llamaProjection() {
  Mixed2416Descriptor d;
  d.shape = {4096, 11008};
  return d;
}

const Target kSm90{"sm_90", Backend::Cuda, 90};
const Target kHost{"host", Backend::Host, 0};

std::vector<RankSlice> whole(const Mixed2416Descriptor &d) {
  return {{0, d.rows(), 0, d.cols()}};
}

/// The verdict's reasons joined, for matching one clause.
std::string
reasonsOf(const Mixed2416Descriptor &d, FloatType act, int64_t tokens,
          const std::vector<RankSlice> &ranks, const Target &target,
          const Mixed2416Capability &kernel = mixed2416DecodeGemvCapability()) {
  Verdict v = admitMixed2416(kernel, d, act, tokens, ranks, target);
  return v.reason();
}

TEST(Mixed2416Admission, TheGeneratedKernelAdmitsTheDefaultTensor) {
  Mixed2416Descriptor d = llamaProjection();
  for (const Target &t : {kSm90, Target{"sm_80", Backend::Cuda, 80}, kHost})
    for (int64_t tokens : {1, 16}) {
      Verdict v = admitMixed2416(mixed2416DecodeGemvCapability(), d,
                                 FloatType::F16, tokens, whole(d), t);
      EXPECT_TRUE(v.accepted()) << t.name << ": " << v.reason();
    }
  d.sparse = SparseSemantics::Correction;
  d.secondType = FloatType::BF16;
  d.firstGroupSize = 256;
  EXPECT_TRUE(admitMixed2416(mixed2416DecodeGemvCapability(), d,
                             FloatType::BF16, 4, whole(d), kSm90)
                  .accepted());
}

TEST(Mixed2416Admission, EveryClauseSaysWhy) {
  const Mixed2416Descriptor base = llamaProjection();
  struct Case {
    const char *what;
    std::string reasons;
    const char *expected;
  };
  Mixed2416Descriptor layout = base;
  layout.layoutEncoding = "row_major";
  Mixed2416Descriptor kernel = base;
  kernel.requiredKernel = "mixed2416_prefill_mma";
  Mixed2416Descriptor group = base;
  group.firstGroupSize = 320;
  group.shape = {4096, 320 * 32};
  Mixed2416Descriptor version = base;
  version.decoderVersion = 2;
  // A K split at 5472 (85.5 groups of 64) keeps whole 32-code steps but
  // cuts a first-level group; an even split (5504, 86 groups) would not.
  std::vector<RankSlice> halves = {{0, 4096, 0, 5472}, {0, 4096, 5472, 5536}};
  std::vector<RankSlice> rowCut = {{0, 4104 / 2, 0, 11008}};
  Mixed2416Capability hungry = mixed2416DecodeGemvCapability();
  hungry.registersPerThread = 600;
  const Case cases[] = {
      {"layout", reasonsOf(layout, FloatType::F16, 1, whole(base), kSm90),
       "layout (mixed_2416, 1, row_major) is not the kernel's (mixed_2416, 1, "
       "group_major_lsb_first)"},
      {"kernel", reasonsOf(kernel, FloatType::F16, 1, whole(base), kSm90),
       "the tensor requires kernel mixed2416_prefill_mma, this is "
       "mixed2416_decode_gemv"},
      {"group", reasonsOf(group, FloatType::F16, 1, whole(group), kSm90),
       "first-level group size 320 not in {64, 128, 192, 256}"},
      {"version", reasonsOf(version, FloatType::F16, 1, whole(base), kSm90),
       "decoder version 2 not in {1}"},
      {"activation", reasonsOf(base, FloatType::F32, 1, whole(base), kSm90),
       "activations f32 not in {f16, bf16}"},
      {"tokens", reasonsOf(base, FloatType::F16, 17, whole(base), kSm90),
       "T = 17 outside [1, 16]"},
      {"slice", reasonsOf(base, FloatType::F16, 1, halves, kSm90),
       "K slice [5472, 11008) cuts a first-level group of 64 on rank 1"},
      {"rows", reasonsOf(base, FloatType::F16, 1, rowCut, kSm90),
       "N slice [0, 2052) cuts a second-level group of 16 on rank 0"},
      {"target",
       reasonsOf(base, FloatType::F16, 1, whole(base),
                 Target{"sm_70", Backend::Cuda, 70}),
       "target sm_70 not in {sm_80, sm_90, host}"},
      {"registers",
       reasonsOf(base, FloatType::F16, 1, whole(base), kSm90, hungry),
       "76800 registers per block (600 x 128), sm_90 has 65536"},
  };
  for (const Case &c : cases)
    EXPECT_NE(c.reasons.find(c.expected), std::string::npos)
        << c.what << ": " << c.reasons;
  // The host twin has no block to fit.
  EXPECT_TRUE(
      admitMixed2416(hungry, base, FloatType::F16, 1, whole(base), kHost)
          .accepted());
  // local K not a multiple of the step.
  std::vector<RankSlice> odd = {{0, 4096, 0, 11008 - 16}};
  EXPECT_NE(reasonsOf(base, FloatType::F16, 1, odd, kSm90)
                .find("local K 10992 not a multiple of vector K 32 on rank 0"),
            std::string::npos);
}

} // namespace

namespace {

OpSignature mixedSignature(const Mixed2416Descriptor &d) {
  OpSignature sig;
  sig.representation = "mixed_2416";
  sig.mixed = d;
  sig.layout.family = d.layoutFamily;
  sig.layout.version = d.layoutVersion;
  sig.layout.encoding = d.layoutEncoding;
  sig.n = d.rows();
  sig.k = d.cols();
  sig.ranks = whole(d);
  return sig;
}

DispatchQuery bothPhases(const Target &target) {
  DispatchQuery q;
  q.target = target;
  q.phases = {{Phase::Decode, phaseTokens(Phase::Decode)},
              {Phase::Prefill, phaseTokens(Phase::Prefill)}};
  return q;
}

} // namespace

// planDispatch hands a mixed_2416 signature to the mixed predicate: decode
// for T in [1, 16], prefill as chunks of at most 16 rows, the weight's own
// layout, every registry kernel listed with why it does not read it.
TEST(Mixed2416Admission, PlanDispatchSelectsTheGemvForBothPhases) {
  const KernelRegistry &registry = builtinRegistry();
  DispatchPlan plan = planDispatch(registry, mixedSignature(llamaProjection()),
                                   bothPhases(kSm90));
  ASSERT_EQ(plan.phases.size(), 2u);
  for (const PhaseSelection &sel : plan.phases) {
    ASSERT_NE(sel.selected, nullptr) << toString(sel.query.phase);
    EXPECT_EQ(sel.selected, &mixed2416KernelCapability());
    EXPECT_EQ(sel.selected->id, "mixed2416_decode_gemv");
    EXPECT_FALSE(sel.fallback);
    ASSERT_EQ(sel.candidates.size(), 1 + registry.kernels.size());
    EXPECT_EQ(sel.candidates[0].kernel, "mixed2416_decode_gemv");
    for (size_t i = 1; i < sel.candidates.size(); ++i)
      EXPECT_NE(sel.candidates[i].reason.find(
                    "representation mixed_2416 not in {affine}"),
                std::string::npos)
          << sel.candidates[i].kernel;
  }
  EXPECT_EQ(plan.phases[0].candidates[0].reason, "selected");
  EXPECT_EQ(plan.phases[1].candidates[0].reason,
            "selected: runs T > 16 in chunks of at most 16 rows through its "
            "decode entries (T = 1..16)");
  ASSERT_TRUE(plan.layout.has_value());
  EXPECT_EQ(*plan.layout, (LayoutId{"mixed_2416", 1, "group_major_lsb_first"}));
  EXPECT_FALSE(plan.secondaryLayout.has_value());
  EXPECT_NE(describeRequest(mixedSignature(llamaProjection()))
                .find("mixed_2416 g64 z16 s2=f16 sparse=replacement:f16"),
            std::string::npos);
}

TEST(Mixed2416Admission, PlanDispatchSaysWhyNothingRuns) {
  Mixed2416Descriptor wide = llamaProjection();
  wide.shape = {4096, 640 * 16};
  wide.firstGroupSize = 320;
  OpSignature sig = mixedSignature(wide);
  sig.accumulator = FloatType::F16;
  sig.topology = Topology::Column;
  DispatchPlan plan = planDispatch(builtinRegistry(), sig, bothPhases(kHost));
  for (const PhaseSelection &sel : plan.phases) {
    EXPECT_EQ(sel.selected, nullptr);
    EXPECT_FALSE(sel.candidates[0].accepted);
    EXPECT_EQ(sel.candidates[0].reason,
              "first-level group size 320 not in {64, 128, 192, 256}; "
              "accumulator f16; the kernel accumulates in f32; topology "
              "column: a mixed_2416 tensor is placed whole (tp = 1)");
  }
  EXPECT_FALSE(plan.layout.has_value());
  EXPECT_EQ(plan.resolution,
            "no kernel-native layout admitted; the stored layout stays");
}
