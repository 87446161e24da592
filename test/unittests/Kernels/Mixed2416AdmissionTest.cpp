//===- Mixed2416AdmissionTest.cpp - Seed 0x07D's admission clauses --------===//

#include "qtensor/Kernels/Mixed2416Admission.h"

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
