//===- SelectionTest.cpp - Which weights qtc compile quantizes ------------===//

#include "Selection.h"

#include <gtest/gtest.h>

using namespace qtensor;
using namespace qtensor::compiler;

namespace {
WeightSelection make(std::vector<std::string> excludes,
                     std::vector<std::string> includes) {
  auto s = WeightSelection::create(std::move(excludes), std::move(includes));
  EXPECT_TRUE(bool(s)) << s.message();
  return s.take();
}
} // namespace

TEST(Selection, DefaultsQuantizeLinearsOnly) {
  WeightSelection s = make({}, {});
  EXPECT_TRUE(s.decide("model.layers.0.mlp.up_proj.weight", TensorKind::Linear)
                  ->quantize);
  for (TensorKind kind : {TensorKind::Head, TensorKind::Embedding,
                          TensorKind::Norm, TensorKind::Other}) {
    auto d = s.decide("t", kind);
    ASSERT_TRUE(bool(d));
    EXPECT_FALSE(d->quantize);
    EXPECT_EQ(d->reason, std::string("default: ") + tensorKindName(kind));
  }
  EXPECT_TRUE(bool(s.checkAllPatternsUsed("ckpt")));
}

TEST(Selection, GlobsCrossDotsAndNameTheirPattern) {
  WeightSelection s = make({"*.mlp.down_proj.weight"}, {"lm_head.*"});
  auto down =
      s.decide("model.layers.7.mlp.down_proj.weight", TensorKind::Linear);
  ASSERT_TRUE(bool(down));
  EXPECT_FALSE(down->quantize);
  EXPECT_EQ(down->reason, "--exclude '*.mlp.down_proj.weight'");
  auto head = s.decide("lm_head.weight", TensorKind::Head);
  ASSERT_TRUE(bool(head));
  EXPECT_TRUE(head->quantize);
  EXPECT_EQ(head->reason, "--include 'lm_head.*'");
  EXPECT_TRUE(bool(s.checkAllPatternsUsed("ckpt")));
}

TEST(Selection, OnlyLinearsCanBeIncluded) {
  WeightSelection s = make({}, {"*norm*", "model.embed_tokens.weight"});
  auto norm = s.decide("model.norm.weight", TensorKind::Norm);
  ASSERT_FALSE(bool(norm));
  EXPECT_NE(norm.message().find("which is a norm, not a linear"),
            std::string::npos)
      << norm.message();
  auto embed = s.decide("model.embed_tokens.weight", TensorKind::Embedding);
  ASSERT_FALSE(bool(embed));
  EXPECT_NE(embed.message().find("which is an embedding, not a linear"),
            std::string::npos)
      << embed.message();
}

TEST(Selection, ConflictsEmptyAndUnusedPatternsAreErrors) {
  EXPECT_FALSE(bool(WeightSelection::create({""}, {})));
  WeightSelection both = make({"*q_proj*"}, {"*.0.*"});
  auto d =
      both.decide("model.layers.0.self_attn.q_proj.weight", TensorKind::Linear);
  ASSERT_FALSE(bool(d));
  EXPECT_NE(d.message().find("matches both --exclude '*q_proj*' and "
                             "--include '*.0.*'"),
            std::string::npos);

  WeightSelection typo = make({"*.dwn_proj.*"}, {});
  ASSERT_TRUE(bool(typo.decide("a.down_proj.weight", TensorKind::Linear)));
  Status unused = typo.checkAllPatternsUsed("ckpt");
  ASSERT_FALSE(bool(unused));
  EXPECT_EQ(unused.message(), "--exclude '*.dwn_proj.*' matches no tensor of "
                              "ckpt");
}

TEST(Selection, APatternMatchingOnlyBiasesIsRefused) {
  WeightSelection s = make({"*.q_proj.bias", "*.k_proj*"}, {});
  ASSERT_TRUE(bool(s.decide("l.q_proj.weight", TensorKind::Linear)));
  ASSERT_TRUE(bool(s.decide("l.k_proj.weight", TensorKind::Linear)));
  s.noteBias("l.q_proj.bias");
  s.noteBias("l.k_proj.bias");
  Status st = s.checkAllPatternsUsed("ckpt");
  ASSERT_FALSE(bool(st));
  EXPECT_EQ(st.message(), "--exclude '*.q_proj.bias' matches only biases "
                          "(l.q_proj.bias); a bias follows its linear: "
                          "select the linear's weight");
}

TEST(Selection, KindsFromNames) {
  EXPECT_EQ(kindFromName("lm_head.weight"), TensorKind::Head);
  EXPECT_EQ(kindFromName("output.weight"), TensorKind::Head);
  EXPECT_EQ(kindFromName("token_embd.weight"), TensorKind::Embedding);
  EXPECT_EQ(kindFromName("model.layers.3.input_layernorm.weight"),
            TensorKind::Norm);
  EXPECT_EQ(kindFromName("blk.0.attn_q.weight"), TensorKind::Other);
  EXPECT_TRUE(isEmbeddingName("model.embed_tokens.weight"));
  EXPECT_FALSE(isEmbeddingName("time_embed.linear_1.weight"));
}

TEST(Selection, KeepKeepsAHeadStoredAsCodesUnlessExcluded) {
  WeightSelection s = make({}, {});
  s.keepFloatWeights();
  auto q8 = s.decideStored("output.weight", TensorKind::Head, "Q8_0");
  ASSERT_TRUE(bool(q8));
  EXPECT_TRUE(q8->quantize);
  EXPECT_EQ(q8->reason, "--quant keep: the head is stored as Q8_0; its codes "
                        "are kept (--exclude keeps it in float)");
  // So is a K-quant head (llama-quantize stores heads as Q6_K); one whose
  // type has no affine spelling, or a float one, stays float.
  EXPECT_TRUE(
      s.decideStored("output.weight", TensorKind::Head, "Q6_K")->quantize);
  EXPECT_FALSE(
      s.decideStored("output.weight", TensorKind::Head, "TQ2_0")->quantize);
  EXPECT_FALSE(
      s.decideStored("output.weight", TensorKind::Head, "F16")->quantize);
  // Without --quant keep the head stays float by default.
  WeightSelection plain = make({}, {});
  EXPECT_FALSE(
      plain.decideStored("output.weight", TensorKind::Head, "Q8_0")->quantize);
  WeightSelection excluded = make({"output.weight"}, {});
  excluded.keepFloatWeights();
  auto e = excluded.decideStored("output.weight", TensorKind::Head, "Q4_0");
  ASSERT_TRUE(bool(e));
  EXPECT_FALSE(e->quantize);
  EXPECT_EQ(e->reason, "--exclude 'output.weight'");
}

// Which kept codes a kernel reads depends on the target. The host GEMM
// and the sm_80/sm_90 decode GEMV read every ggml type kept as codes (the
// K-quants, Q5_x, a K-quant head); stored codes that no kernel of the
// target reads (per-tensor scales here) are decoded to float under
// --fallback allow, and the reason names the target.
TEST(Selection, KeptCodesFollowTheTargetsKernels) {
  for (const char *target : {"host", "sm_90"}) {
    SCOPED_TRACE(target);
    WeightSelection s = make({}, {});
    s.keepFloatWeights();
    s.decodeTypesWithoutKernels();
    ASSERT_TRUE(bool(s.setTarget(target)));
    for (const char *type :
         {"Q4_K", "Q5_K", "Q6_K", "Q4_1", "Q5_0", "Q2_K", "Q3_K", "Q4_0"}) {
      auto d = s.decideStored("blk.0.attn_q.weight", TensorKind::Linear, type);
      ASSERT_TRUE(bool(d));
      EXPECT_TRUE(d->quantize) << type;
    }
    EXPECT_TRUE(
        s.decideStored("output.weight", TensorKind::Head, "Q6_K")->quantize);
    AffineDescriptor perTensor;
    perTensor.code = {4, false};
    perTensor.scheme = QuantScheme::Asymmetric;
    perTensor.zeroPoint = ZeroPointKind::Integer;
    perTensor.granularity = Granularity::PerTensor;
    auto packed = s.decideStored("blk.0.attn_k.weight", TensorKind::Linear,
                                 "I32", &perTensor);
    ASSERT_TRUE(bool(packed));
    EXPECT_FALSE(packed->quantize);
    EXPECT_EQ(packed->reason,
              std::string("--quant keep --fallback allow: no ") + target +
                  " kernel reads I32 codes yet; decoded to "
                  "F32 and kept in float");
  }
  WeightSelection s = make({}, {});
  EXPECT_FALSE(bool(s.setTarget("sm_75x")));
}
